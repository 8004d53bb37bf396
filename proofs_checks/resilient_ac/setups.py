"""The setups of the resilient families' claims and figures: the authors' logged numbers of the
grid-world runs, the arrays behind the learning figures and their summaries, the saved
paper-scale runs, and the data of the Example 1 figure (Figura, Lin, Liu, Gupta,
arXiv:2111.06776).

The claims (:mod:`proofs_checks.resilient_ac.learning`, :mod:`proofs_checks.resilient_ac.linear`)
and the figures (``figures/resilient_ac.py``) read them from here; the library keeps the
algorithms, the grid world and the paper's small public data
(:mod:`decentral.datasets.figura2021`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from decentral.datasets.figura2021 import example1_attacker, example1_mdp
from decentral.graphs import complete
from decentral.resilient_ac import ExperimentResult, linear_params, rpbcac, run_runs
from decentral.resilient_ac.learning import (
    ADVERSARY,
    HYPERPARAMS,
    default_phases,
    rolling_mean,
    split_runs,
)
from decentral.resilient_ac.learning.mlp import get_variant
from decentral.results import load_results
from decentral.runner import run

__all__ = ["V1_LOGGED", "V2_LOGGED", "summary_levels", "v1_panel_arrays", "v2_panel_arrays",
           "CLAIMS_OUT", "saved_learning_runs", "learning_runs", "example1_figure_data"]

#: Where ``python -m proofs_checks --full``, run from the repository root, saves the learning
#: runs (``proofs_checks/out`` of this checkout, the claims' default ``--out``).
CLAIMS_OUT = Path(__file__).resolve().parents[1] / "out"

#: Mean over the 5 seeds of the authors' v1 logs (commit 61b07cf,
#: ``simulation_results/raw_data/projection-based``): (scenario, H) -> coop first 500 episodes,
#: coop last 1000, adversary first 500, adversary last 1000, Est last 1000 (None: no adversary).
V1_LOGGED: dict[tuple[str, int], tuple] = {
    ("cooperative", 0): (-3.70, -1.98, None, None, -2.28),
    ("cooperative", 1): (-3.70, -2.12, None, None, -2.33),
    ("greedy", 0): (-3.70, -4.15, -3.64, -1.50, -0.89),
    ("greedy", 1): (-3.70, -2.32, -3.64, -1.57, -2.10),
    ("faulty", 0): (-3.69, -4.04, -3.65, -2.49, 0.01),
    ("faulty", 1): (-3.69, -2.48, -3.65, -2.45, -2.21),
    ("malicious", 0): (-3.70, -4.68, -3.65, -1.50, 2.07),
    ("malicious", 1): (-3.69, -2.49, -3.64, -1.56, -2.04),
}

#: Mean over the 3 seeds of the authors' v2 logs (commit f10f863, the logged 4000-episode
#: phase): (scenario, H) -> coop first 200, coop last 500, Est last 500, oracle coop last 500.
V2_LOGGED: dict[tuple[str, int], tuple] = {
    ("cooperative", 0): (-6.97, -5.23, -5.79, -4.58),
    ("cooperative", 1): (-6.97, -5.36, -6.13, -4.60),
    ("greedy", 0): (-7.06, -6.67, -4.43, -6.89),
    ("greedy", 1): (-7.06, -5.55, -5.86, -4.69),
    ("faulty", 0): (-7.06, -6.79, -1.15, -6.70),
    ("faulty", 1): (-7.06, -5.57, -5.86, -4.75),
    ("malicious", 0): (-7.06, -7.20, 4.24, -6.94),
    ("malicious", 1): (-7.06, -5.46, -5.65, -4.95),
}


def summary_levels(res: ExperimentResult, first: int, last: int) -> dict:
    """Per run ``(scenario, H, oracle)``: coop / adversary / Est means over the first
    ``first`` episodes of the last phase and over the last ``last`` episodes (per seed, then
    averaged over seeds), and the same window means per seed under ``"per_seed"``
    (quantity -> array ``[S]``, seeds in ``res.config["seeds"]`` order, so runs of one result
    pair up seed by seed). Windows longer than the run are clipped to it."""
    cfg = res.config
    E = cfg["episodes_per_phase"]
    base = (cfg["phases"] - 1) * E
    first, last = min(first, E), min(last, E)
    specs, coop, adv, est = split_runs(res)
    windows = {"coop_first": (coop, base, base + first), "coop_last": (coop, -last, None),
               "adversary_first": (adv, base, base + first),
               "adversary_last": (adv, -last, None), "est_last": (est, -last, None)}
    out = {}
    for r, key in enumerate(specs):
        per_seed = {q: np.asarray(x[r][:, a:b], np.float64).mean(axis=-1)
                    for q, (x, a, b) in windows.items()}
        out[key] = {**{q: float(v.mean()) for q, v in per_seed.items()}, "per_seed": per_seed}
    return out


def v1_panel_arrays(res: ExperimentResult, oracle: bool = False) -> dict:
    """The eight v1 panels: ``(scenario, H) -> (episode [E], coop mean [E], adversary mean
    [E])``, means over seeds, unsmoothed (adversary NaN for the cooperative scenario)."""
    specs, coop, adv, _ = split_runs(res)
    out = {}
    for r, (s, h, o) in enumerate(specs):
        if o == oracle:
            out[(s, h)] = (np.arange(coop.shape[-1]), coop[r].mean(axis=0), adv[r].mean(axis=0))
    return out


def v2_panel_arrays(res: ExperimentResult, drop: int = 500, window: int = 200) -> dict:
    """The v2 panels: per (scenario, H), "Estimated" (Est), "True" (coop return) and, when
    the result holds the matching oracle run, "True (global)" (the oracle's coop return). Per
    phase the first ``drop`` episodes are dropped, the phases concatenated, seeds averaged,
    then a rolling mean of ``window`` (min_periods 1), as the authors' plot script.

    Returns:
        ``(scenario, H) -> {"episode", "estimated", "true", "true_global" (or None)}``.
    """
    cfg = res.config
    E, phases = cfg["episodes_per_phase"], cfg["phases"]
    drop = min(drop, E - 1)
    keep = np.concatenate([np.arange(p * E + drop, (p + 1) * E) for p in range(phases)])
    specs, coop, _, est = split_runs(res)
    index = {spec: r for r, spec in enumerate(specs)}

    def curve(x, r):
        return rolling_mean(x[r][..., keep].mean(axis=0), window)

    out = {}
    for (s, h, o), r in index.items():
        if o:
            continue
        g = index.get((s, h, True))
        out[(s, h)] = {"episode": np.arange(keep.size), "estimated": curve(est, r),
                       "true": curve(coop, r),
                       "true_global": None if g is None else curve(coop, g)}
    return out


def saved_learning_runs(version: str, variant: str, seeds, episodes, specs, out=None):
    """The runs of ``specs`` from the arrays the learning claims saved on the experiment graph
    (``<out>/resilient_learning-<version>-<variant>-paper``), or None unless that file holds
    exactly these runs: same version and variant, seeds, episodes per phase, the paper's
    phases, hyperparameters, collision rule, adversary slot and attacker, and every
    (scenario, H, oracle) of ``specs``. ``out`` defaults to :data:`CLAIMS_OUT`. The paper-scale
    figures then cost nothing after ``python -m proofs_checks --full`` (hours otherwise); the
    figure's config names the file (``"from_saved"``)."""
    folder = Path(CLAIMS_OUT if out is None else out)
    path = folder / f"resilient_learning-{version}-{variant}-paper"
    if not path.with_suffix(".npz").exists():
        return None
    try:
        arrays, meta = load_results(path)
    except (OSError, ValueError):        # e.g. an interrupted save: recompute instead
        return None
    cfg = meta.get("config", meta)
    rows = {(str(sc), int(h), bool(o)): r for r, (sc, h, o) in enumerate(zip(
        cfg.get("scenarios", ()), cfg.get("H", ()), cfg.get("oracle", ()), strict=False))}
    hyper = cfg.get("hyperparams", {})
    if (cfg.get("version") != version or cfg.get("variant") != f"{version}-{variant}"
            or cfg.get("graph") != "paper" or cfg.get("attacker") is not None
            or cfg.get("grid") is not False or cfg.get("phases") != default_phases(version)
            or cfg.get("adversary_slots") != [ADVERSARY]
            or cfg.get("collision") != get_variant(version, variant).collision
            or any(hyper.get(k) != v for k, v in HYPERPARAMS.items())
            or list(cfg.get("seeds", ())) != [int(x) for x in seeds]
            or cfg.get("episodes_per_phase") != episodes
            or any(tuple(sp) not in rows for sp in specs)):
        return None
    take = [rows[tuple(sp)] for sp in specs]
    config = {**cfg, "scenarios": [sp[0] for sp in specs], "H": [sp[1] for sp in specs],
              "oracle": [sp[2] for sp in specs], "from_saved": str(path)}
    return ExperimentResult(*(np.asarray(arrays[k])[take] for k in
                              ("coop_return", "adversary_return", "estimate")),
                            config=config, seconds=0.0)


def learning_runs(version: str, variant: str, seeds, episodes, specs):
    """The runs of ``specs`` (``(scenario, H, oracle)`` triples) on the experiment graph: read
    from the claims' saved arrays when :func:`saved_learning_runs` finds them, else computed
    with :func:`decentral.resilient_ac.run_runs`."""
    saved = saved_learning_runs(version, variant, seeds, episodes, specs)
    if saved is not None:
        return saved
    return run_runs(specs, code_version=version, variant=variant, seeds=seeds,
                    episodes=episodes, progress=False)


def example1_figure_data(*, graphs=None, num_steps: int = 3000, seeds: Sequence[int] = (0,),
                         record_every: int = 10, push: float = 1.0,
                         direction: str = "mean_feature",
                         variants: Sequence[str] = ("projection", "trimmed"),
                         features=None, rewards=None,
                         init_noise: float = 0.5) -> dict[str, np.ndarray]:
    """Arrays for the Example 1 figure (our reconstruction of Figs. 3-4): cooperative estimates
    ``rbar(s; lambda^i_t)`` against the iteration, per consensus variant, with the cooperative
    hull and the true team average.

    Fixed policy, ``H = 1`` (``H = 0`` for ``"mean"``), agent 4 Byzantine with
    :func:`decentral.datasets.figura2021.example1_attacker` (``direction``, ``push``),
    ``graphs`` ``K5`` by default (anything :func:`decentral.resilient_ac.rpbcac` accepts),
    initial parameters ``init_noise`` times a standard normal per agent and seed.

    Returns:
        ``{"steps": [R], "hull": [2, S] (min, max of the cooperative r^j(s)),
        "team_average": [S], "estimates/<variant>": [seeds, R, 4, S], "features": [S, 2],
        "rewards": [5, S]}``.

    Example:
        >>> d = example1_figure_data(num_steps=100, seeds=range(2), variants=("trimmed",))
        >>> d["estimates/trimmed"].shape, d["hull"].shape
        ((2, 10, 4, 2), (2, 2))
    """
    mdp = example1_mdp(features, rewards)
    adj = complete(5) if graphs is None else graphs
    params = linear_params(mdp, init_noise=init_noise)
    F = jnp.asarray(mdp.state_features)
    attacker = example1_attacker(direction, push, features)

    def record(state):
        return state.team_reward @ F.T                                  # [N, S]

    out: dict[str, np.ndarray] = {}
    steps = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for variant in variants:
            alg = rpbcac(adj, H=0 if variant == "mean" else 1, byzantine=[4],
                         attacker=attacker, consensus=variant, actor=False)
            res = run(alg, params, seeds=list(seeds), num_steps=num_steps,
                      record_every=record_every, record_fn=record)
            out[f"estimates/{variant}"] = np.asarray(res.records)[:, :, :4, :]
            steps = res.record_steps
    r = np.asarray(mdp.rewards)[:4, :, 0]
    out.update(steps=np.asarray(steps), hull=np.stack([r.min(0), r.max(0)]),
               team_average=r.mean(0), features=np.asarray(mdp.state_features),
               rewards=np.asarray(mdp.rewards)[:, :, 0])
    return out
