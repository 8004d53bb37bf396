"""The grid-world experiments' former module path: re-exports the names it held from
:mod:`decentral.resilient_ac.learning` (kept for one version; import from there). The paper's
logged numbers and figure arrays it also held moved to the claim checks' setups; asking for
them here says where."""

from .learning.algorithm import (
    ADVERSARY,
    HYPERPARAMS,
    EpisodeMetrics,
    LearnerState,
    LearnParams,
    collect_episodes,
    learner,
)
from .learning.experiments import (
    RUN_FIELDS,
    SCENARIOS,
    ExperimentResult,
    default_episodes,
    default_phases,
    default_seeds,
    learner_params,
    rolling_mean,
    run_experiment,
    run_grid,
    run_runs,
    split_runs,
    stack_runs,
    window_mean,
)
from .learning.topology import K5_IN_NODES, PAPER_IN_NODES, resolve_graph

__all__ = [
    "SCENARIOS", "ADVERSARY", "PAPER_IN_NODES", "K5_IN_NODES", "resolve_graph", "HYPERPARAMS",
    "LearnParams", "LearnerState", "EpisodeMetrics", "ExperimentResult", "collect_episodes",
    "learner", "learner_params", "stack_runs", "RUN_FIELDS", "run_experiment", "run_grid",
    "run_runs", "window_mean", "rolling_mean", "split_runs", "default_seeds", "default_phases",
    "default_episodes",
]

#: Names that lived here and moved out of the library (the paper's logged numbers and the
#: arrays of its figures belong to the claims and figures that use them).
_MOVED = {name: "proofs_checks.resilient_ac.setups" for name in
          ("V1_LOGGED", "V2_LOGGED", "summary_levels", "v1_panel_arrays", "v2_panel_arrays")}


def __getattr__(name: str):
    if name in _MOVED:
        raise AttributeError(f"decentral.resilient_ac.experiments.{name} moved out of the "
                             f"library to {_MOVED[name]}.{name} (the claim checks' setups).")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
