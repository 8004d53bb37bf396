"""Grid-world learning experiments as runs of the learner: scenarios, the authors' run
lengths and seeds as defaults, :func:`run_runs` / :func:`run_grid` / :func:`run_experiment`
(a whole grid as one compiled program through :func:`decentral.runner.run`), and their
metrics. The protocol of one update is in :mod:`decentral.resilient_ac.learning`.

Example:
    >>> res = run_experiment("malicious", 1, seeds=(50,), episodes=100, progress=False)
    >>> res.coop_return.shape, res.config["variant"]
    ((1, 100), 'v1-corrected')
"""

from __future__ import annotations

import itertools
import numbers
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import check_index, check_int
from decentral.datasets.figura2021 import (
    LOGGED_EPISODES,
    LOGGED_PHASES,
    LOGGED_SEEDS,
)

from ..attackers import Attacker
from .algorithm import (
    ADVERSARY,
    HYPERPARAMS,
    EpisodeMetrics,
    LearnParams,
    _check_epsilon,
    _check_gamma,
    _check_H,
    _check_positive_finite,
    _graphs_alias,
    _record_metrics,
    _version_alias,
    learner,
)
from .gridworld import grid_world, paper_targets
from .mlp import (
    AGENT_TYPES,
    COOPERATIVE,
    LearningProtocol,
    Variant,
    get_protocol,
    get_variant,
    init_nets,
)
from .topology import _num_agents_of, resolve_graph

__all__ = [
    "SCENARIOS", "ExperimentResult", "learner_params", "stack_runs", "RUN_FIELDS",
    "run_experiment", "run_grid", "run_runs", "window_mean", "rolling_mean", "split_runs",
    "default_seeds", "default_phases", "default_episodes",
]

#: The scenarios of the paper's figures.
SCENARIOS: tuple[str, ...] = ("cooperative", "greedy", "faulty", "malicious")

def default_phases(version: str) -> int:
    """The number of training phases of the authors' runs (v1: 1, v2: 2;
    :data:`decentral.datasets.figura2021.LOGGED_PHASES`)."""
    get_protocol(version)
    return LOGGED_PHASES[version]


def default_seeds(version: str) -> tuple[int, ...]:
    """The seeds of the authors' logged runs, whose targets are tabulated
    (:data:`decentral.datasets.figura2021.LOGGED_SEEDS`)."""
    get_protocol(version)
    return LOGGED_SEEDS[version]


def default_episodes(version: str) -> int:
    """Episodes per phase of the authors' runs (v1: 10 000, v2: 4000;
    :data:`decentral.datasets.figura2021.LOGGED_EPISODES`)."""
    get_protocol(version)
    return LOGGED_EPISODES[version]


# ------------------------------------------------------------------------------------------
# running grids
# ------------------------------------------------------------------------------------------


class ExperimentResult(NamedTuple):
    """What :func:`run_grid` / :func:`run_experiment` return (numpy arrays).

    Attributes:
        coop_return, adversary_return, estimate: ``[..., S, episodes]`` per-episode
            :class:`EpisodeMetrics` (v2: both phases concatenated, ``phases * episodes``);
            adversary return is NaN where the scenario has no adversary.
        config: the grid axes and settings (JSON-like).
        seconds: wall time of the call.
    """

    coop_return: np.ndarray
    adversary_return: np.ndarray
    estimate: np.ndarray
    config: dict
    seconds: float


def _agent_types(scenario, num_agents: int, adversary: int) -> np.ndarray:
    if isinstance(scenario, str):
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}; use one of "
                             f"{', '.join(SCENARIOS)} or a per-agent list of type names.")
        types = np.zeros(num_agents, np.int32)
        if scenario != "cooperative":
            types[check_index(adversary, "adversary", num_agents,
                              hint="adversary is the adversarial agent's index.")] = \
                AGENT_TYPES[scenario]
        return types
    arr = list(scenario)
    if len(arr) != num_agents:
        raise ValueError(f"a per-agent scenario needs {num_agents} entries; got {len(arr)}.")
    out = []
    for a in arr:
        if isinstance(a, str):
            if a not in AGENT_TYPES:
                raise ValueError(f"unknown agent type {a!r}; use one of {sorted(AGENT_TYPES)}.")
            out.append(AGENT_TYPES[a])
        elif isinstance(a, numbers.Integral) and not isinstance(a, bool | np.bool_) \
                and int(a) in AGENT_TYPES.values():
            out.append(int(a))
        else:
            raise ValueError(f"unknown agent type code {a!r} in scenario: use a type name of "
                             f"{sorted(AGENT_TYPES)} or its integer code "
                             f"{sorted(AGENT_TYPES.values())} (not a bool or a float).")
    if all(t != COOPERATIVE for t in out):
        raise ValueError("at least one agent must be cooperative.")
    return np.asarray(out, np.int32)


def _targets(version: str, seed: int, num_agents: int) -> np.ndarray:
    try:
        return paper_targets(version, seed)
    except ValueError:
        env = grid_world(version, num_agents=num_agents)
        from .gridworld import random_targets
        return np.asarray(random_targets(jax.random.key(int(seed)), env))


def run_grid(scenarios: Sequence, Hs: Sequence[int], *, oracles: Sequence[bool] = (False,),
             **kwargs) -> ExperimentResult:
    """Every combination of ``scenarios x Hs x oracles`` (and seeds) as one compiled program.

    Arguments as :func:`run_runs` (``scenarios``: names of :data:`SCENARIOS` or per-agent type
    lists; ``Hs``: ints >= 0, 0 the plain-mean baseline; ``oracles``: which oracle flags).

    Returns:
        :class:`ExperimentResult` with arrays ``[n_scenarios, n_H, n_oracles, S, phases *
        episodes]``.
    """
    specs = list(itertools.product(list(scenarios), list(Hs), [bool(o) for o in oracles]))
    res = run_runs(specs, **kwargs)
    shape = (len(scenarios), len(Hs), len(oracles)) + res.coop_return.shape[1:]
    cfg = dict(res.config)
    cfg.update(scenarios=cfg["scenarios"][::len(Hs) * len(oracles)],
               H=[_check_H(h) for h in Hs], oracle=[bool(o) for o in oracles], grid=True)
    return ExperimentResult(res.coop_return.reshape(shape), res.adversary_return.reshape(shape),
                            res.estimate.reshape(shape), cfg, res.seconds)


#: The :class:`LearnParams` fields that differ between the runs of a grid: :func:`run_runs`
#: stacks them along a leading run axis and sweeps them (``run(..., sweep=RUN_FIELDS)``).
RUN_FIELDS: tuple[str, ...] = ("H", "agent_type", "oracle", "targets", "seed", "phase", "warm",
                               "start_nets")


def _one_run(protocol: LearningProtocol, types: np.ndarray, H: int, oracle: bool, seed: int,
             in_nodes: np.ndarray, rates: tuple) -> LearnParams:
    """One run's params from checked values (fresh networks, phase 0)."""
    A = types.shape[0]
    f = np.dtype(jnp.result_type(float))
    env = grid_world(protocol.version, num_agents=A)
    tmpl = jax.eval_shape(lambda: init_nets(jax.random.key(0), A, env.obs_dim,
                                            env.tr_input_dim, env.num_actions, protocol.width,
                                            protocol.shared_templates))
    critic_lr, actor_lr, gamma, epsilon = rates
    return LearnParams(
        H=np.int32(H), agent_type=types, oracle=np.bool_(oracle),
        targets=_targets(protocol.version, seed, A), seed=np.uint32(seed), phase=np.int32(0),
        warm=np.bool_(False),
        start_nets=jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), tmpl),
        in_nodes=in_nodes, critic_lr=np.asarray(critic_lr, f), actor_lr=np.asarray(actor_lr, f),
        gamma=np.asarray(gamma, f), epsilon=np.asarray(epsilon, f))


def stack_runs(runs: Sequence[LearnParams]) -> LearnParams:
    """Several runs' :class:`LearnParams` as one, :data:`RUN_FIELDS` stacked along a leading
    axis (the other fields, shared by every run, taken from the first; they must be equal)."""
    runs = list(runs)
    if not runs:
        raise ValueError("stack_runs needs at least one LearnParams.")
    for name in LearnParams._fields:
        if name in RUN_FIELDS:
            continue
        first = np.asarray(getattr(runs[0], name))
        if any(not np.array_equal(first, np.asarray(getattr(r, name))) for r in runs[1:]):
            raise ValueError(f"the runs differ in {name}, which every run of one call shares; "
                             f"only {', '.join(RUN_FIELDS)} may differ.")
    stacked = {name: jax.tree_util.tree_map(lambda *v: np.stack(v),
                                            *[getattr(r, name) for r in runs])
               for name in RUN_FIELDS}
    return runs[0]._replace(**stacked)


def learner_params(scenario="cooperative", H: int = 1, seed: int | None = None, *,
                   code_version: str | LearningProtocol | None = None, oracle: bool = False,
                   graphs: Any = None, adversary: int = ADVERSARY,
                   critic_lr: float = HYPERPARAMS["critic_lr"],
                   actor_lr: float = HYPERPARAMS["actor_lr"], gamma: float = HYPERPARAMS["gamma"],
                   epsilon: float = HYPERPARAMS["epsilon"]) -> LearnParams:
    """The params of one run of :func:`learner` (fresh networks, first phase): what
    :func:`run_runs` builds for each ``(scenario, H, oracle)`` and seed, for calling
    :func:`~decentral.runner.run` yourself.

    Args:
        scenario, H, oracle, graphs, adversary, critic_lr, actor_lr, gamma, epsilon,
            code_version: as :func:`run_runs`.
        seed: one experiment seed (default: the first of :func:`default_seeds`); the authors'
            seeds use their tabulated targets.

    Returns:
        An unbatched :class:`LearnParams`; :func:`stack_runs` stacks several for one call of
        ``run(learner(...), stacked, [0], num_updates, sweep=list(RUN_FIELDS))``, which is
        what :func:`run_runs` does.

    Example:
        >>> p = learner_params("greedy", 1, 50)
        >>> p.agent_type.tolist(), int(p.seed), p.in_nodes.shape
        ([0, 0, 0, 0, 1], 50, (1, 5, 4))
    """
    from decentral.runner import validate_seeds

    protocol = get_protocol(_version_alias(code_version, None))
    graph = _graphs_alias(graphs, None)
    A = _num_agents_of(graph)
    in_nodes = resolve_graph(graph, A)
    seed = default_seeds(protocol.version)[0] if seed is None else seed
    seed = int(validate_seeds([seed])[0])
    rates = (_check_positive_finite(critic_lr, "critic_lr"),
             _check_positive_finite(actor_lr, "actor_lr"), _check_gamma(gamma),
             _check_epsilon(epsilon))
    return _one_run(protocol, _agent_types(scenario, A, adversary), _check_H(H), bool(oracle),
                    seed, in_nodes, rates)


def run_runs(specs: Sequence[tuple], *, code_version: str | LearningProtocol | None = None,
             variant: str | Variant = "corrected", seeds: Sequence[int] | None = None,
             episodes: int | None = None, phases: int | None = None, graphs: Any = None,
             adversary: int = ADVERSARY, critic_lr: float = HYPERPARAMS["critic_lr"],
             actor_lr: float = HYPERPARAMS["actor_lr"], gamma: float = HYPERPARAMS["gamma"],
             epsilon: float = HYPERPARAMS["epsilon"], collision: str | None = None,
             checkpoint_dir: str | None = None, progress: bool | None = None,
             chunk_size: int | None = None, attacker: Attacker | None = None,
             version: str | LearningProtocol | None = None, graph: Any = None
             ) -> ExperimentResult:
    """A list of runs ``(scenario, H, oracle)``, each on every seed, as one compiled program.

    Args:
        specs: ``(scenario, H, oracle)`` triples; scenario a name of :data:`SCENARIOS` or a
            per-agent list of type names / codes; H an int >= 0 (0: plain mean); oracle bool.
        code_version: ``"v1"`` (default) or ``"v2"``, the authors' code version (or a
            :class:`~decentral.resilient_ac.learning.mlp.LearningProtocol`); ``version=`` is its
            older name (give one of the two).
        variant: ``"corrected"`` (default), ``"faithful"``, a label or a Variant.
        seeds: ints; the authors' seeds (:func:`default_seeds`, the default) use their
            tabulated targets, other seeds draw targets from ``jax.random.key(seed)``.
        episodes: episodes per phase (default: :func:`default_episodes`, 10 000 / 4000); a
            multiple of the protocol's episodes per update (one runner step is one update:
            module docstring).
        phases: default 1 (v1) / 2 (v2); each later phase warm-starts from the previous one's
            networks.
        graphs: ``"paper"`` (default), ``"k5"``, an in_nodes table / stack, or anything
            :func:`decentral.graphs.as_sequence` accepts (:func:`resolve_graph`); ``graph=``
            is its older name (give one of the two).
        adversary: the adversary's index for named scenarios.
        critic_lr, actor_lr, gamma, epsilon: hyperparameters (:data:`HYPERPARAMS`).
        collision: the v2 occupancy rule (default: the variant's).
        checkpoint_dir: resume / store the run here (one sub-folder per phase).
        progress: the runner's progress bar.
        chunk_size: updates per chunk (default: the runner's).
        attacker: what the adversarial agents send (default: the experiments' greedy /
            faulty / malicious agents as their scenario names them; see :func:`learner`).

    Returns:
        :class:`ExperimentResult` with arrays ``[R, S, phases * episodes]``; its ``config``
        keeps the keys ``"version"`` (the code version) and ``"graph"``.

    Raises:
        ValueError: unknown version / variant / scenario / graph, H < 0, non-finite or
            non-positive rates, gamma outside [0, 1), epsilon outside [0, 1], an episode count
            that is not a positive multiple of the episodes per update (the rates, gamma,
            epsilon and H by the same checks as the learner's ``check_params``).
    """
    from decentral.runner import run

    protocol = get_protocol(_version_alias(code_version, version))
    graph = _graphs_alias(graphs, graph)
    var = get_variant(protocol.version, variant)
    critic_lr = _check_positive_finite(critic_lr, "critic_lr")
    actor_lr = _check_positive_finite(actor_lr, "actor_lr")
    gamma = _check_gamma(gamma)
    epsilon = _check_epsilon(epsilon)
    A = _num_agents_of(graph)
    in_nodes = resolve_graph(graph, A)
    from decentral.runner import validate_seeds

    # the experiment seeds are swept params (the runner runs one seed of the whole grid),
    # checked by the runner's own rule: distinct integers in [0, 2**32)
    seeds = [int(s) for s in validate_seeds(default_seeds(protocol.version) if seeds is None
                                            else seeds)]
    n_up_ep = protocol.episodes_per_update
    episodes = default_episodes(protocol.version) if episodes is None else episodes
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) \
            or episodes < n_up_ep or episodes % n_up_ep:
        raise ValueError(f"episodes must be a positive multiple of {n_up_ep} (episodes per "
                         f"update of {protocol.version}); got {episodes!r}.")
    phases = default_phases(protocol.version) if phases is None else check_int(phases, "phases")
    if not specs:
        raise ValueError("specs is empty.")
    specs = [(s, _check_H(h), bool(o)) for s, h, o in specs]
    types = [_agent_types(s, A, adversary) for s, _, _ in specs]
    slots = tuple(sorted({int(i) for t in types for i in np.flatnonzero(t != COOPERATIVE)}))
    alg = learner(protocol, var, collision=collision, num_agents=A,
                  adversary_slots=slots, attacker=attacker)

    combos = list(itertools.product(range(len(specs)), range(len(seeds))))
    P = len(combos)
    rates = (critic_lr, actor_lr, gamma, epsilon)
    params = stack_runs([_one_run(protocol, types[r], specs[r][1], specs[r][2], seeds[k],
                                  in_nodes, rates) for r, k in combos])
    swept = list(RUN_FIELDS)
    n_updates = episodes // n_up_ep
    start = time.perf_counter()
    parts = []
    res = None
    for ph in range(phases):
        if ph:
            params = params._replace(phase=np.full(P, ph, np.int32), warm=np.ones(P, bool),
                                     start_nets=jax.tree_util.tree_map(
                                         lambda v: np.asarray(v)[:, 0], res.final_state.nets))
        ck = None if checkpoint_dir is None else f"{checkpoint_dir}/phase{ph + 1}"
        res = run(alg, params, [0], n_updates, record_fn=_record_metrics, record_context=True,
                  sweep=swept, checkpoint_dir=ck, progress=progress, chunk_size=chunk_size)
        parts.append(jax.tree_util.tree_map(lambda v: np.asarray(v)[:, 0].reshape(P, -1),
                                            res.records))
    seconds = time.perf_counter() - start
    shape = (len(specs), len(seeds), phases * episodes)
    out = [np.concatenate([getattr(p, name) for p in parts], axis=1).reshape(shape)
           for name in EpisodeMetrics._fields]
    no_adv = np.asarray([np.all(t == COOPERATIVE) for t in types])
    out[1] = np.where(no_adv[:, None, None], np.nan, out[1])
    config = {"version": protocol.version, "variant": var.name,
              "scenarios": [s if isinstance(s, str) else list(map(int, t))
                            for (s, _, _), t in zip(specs, types, strict=True)],
              "H": [h for _, h, _ in specs], "oracle": [o for _, _, o in specs],
              "seeds": seeds, "episodes_per_phase": int(episodes),
              "phases": phases, "graph": graph if isinstance(graph, str) else
              in_nodes.tolist(), "adversary_slots": list(slots),
              "hyperparams": {"critic_lr": critic_lr, "actor_lr": actor_lr,
                              "gamma": float(gamma), "epsilon": float(epsilon)},
              "collision": collision or var.collision, "grid": False}
    if attacker is not None:
        config["attacker"] = attacker.name
    return ExperimentResult(*out, config=config, seconds=seconds)


def run_experiment(scenario, H: int, *, code_version: str | None = None, variant="corrected",
                   seeds: Sequence[int] | None = None, episodes: int | None = None,
                   graphs: Any = None, oracle: bool = False, version: str | None = None,
                   graph: Any = None, **kwargs) -> ExperimentResult:
    """One scenario at one H: arrays ``[S, phases * episodes]``.

    A thin wrapper of :func:`run_runs` (see there for every argument; ``code_version`` and
    ``graphs`` have their older names ``version=`` and ``graph=``). ``H = 0`` is the
    non-resilient plain-mean baseline (Zhang et al. 2018 in the batch form).

    Example: ``run_experiment("faulty", 1, seeds=(50,), episodes=100)`` (about 12 s on two
    CPU cores) returns ``coop_return`` of shape ``(1, 100)``; the module docstring runs one.
    """
    res = run_runs([(scenario, H, oracle)], code_version=_version_alias(code_version, version),
                   variant=variant, seeds=seeds, episodes=episodes,
                   graphs=_graphs_alias(graphs, graph), **kwargs)
    return res._replace(coop_return=res.coop_return[0],
                        adversary_return=res.adversary_return[0], estimate=res.estimate[0])


# ------------------------------------------------------------------------------------------
# metrics
# ------------------------------------------------------------------------------------------


def window_mean(x, start: int | None = None, stop: int | None = None) -> np.ndarray:
    """Mean over episodes ``[start:stop]`` (last axis), then over seeds (second-to-last):
    the per-seed window means averaged, as the logged tables."""
    x = np.asarray(x, np.float64)
    return x[..., start:stop].mean(axis=-1).mean(axis=-1)


def rolling_mean(x, window: int = 200) -> np.ndarray:
    """Trailing rolling mean along the last axis with ``min_periods = 1`` (pandas'
    ``rolling(window, min_periods=1).mean()``)."""
    x = np.asarray(x, np.float64)
    c = np.cumsum(x, axis=-1)
    c = np.concatenate([np.zeros(x.shape[:-1] + (1,)), c], axis=-1)
    n = x.shape[-1]
    hi = np.arange(1, n + 1)
    lo = np.maximum(0, hi - window)
    return (c[..., hi] - c[..., lo]) / (hi - lo)


def split_runs(res: ExperimentResult):
    """``(specs, coop, adversary, estimate)``: the runs ``(scenario, H, oracle)`` of a grid or
    of a list of runs, in order, and the three metrics as arrays ``[R, S, E]`` (runs, seeds,
    episodes)."""
    cfg = res.config
    if cfg.get("grid"):
        specs = list(itertools.product([str(x) for x in cfg["scenarios"]], cfg["H"],
                                       cfg["oracle"]))
    else:
        specs = [(str(a), int(b), bool(c)) for a, b, c in zip(cfg["scenarios"], cfg["H"],
                                                               cfg["oracle"], strict=True)]
    S, E = res.coop_return.shape[-2:]
    arrs = [np.asarray(x).reshape(len(specs), S, E)
            for x in (res.coop_return, res.adversary_return, res.estimate)]
    return specs, *arrs
