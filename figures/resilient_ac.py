"""Figure of the resilient-consensus claims: W-MSR keeps the cooperative values in their initial
hull under every attack, while plain averaging is captured by the same attack.

One figure, ``resilient_ac.hull_under_attack``: 5 agents, agent 4 Byzantine, W-MSR with
``H = 1`` (:func:`decentral.resilient_ac.resilient_consensus`) against plain averaging
(``aggregator="mean"``, ``H = 0``), on two graphs (rows):

* the experiment graph of Figura, Lin, Liu, Gupta (arXiv:2111.06776),
  ``circulant(5, [-1, -2, -3])``: agent i hears i+1, i+2, i+3 (mod 5). It is only 2-robust,
  below the ``2H + 1 = 3`` of the sufficient condition; building W-MSR on it emits a
  :class:`~decentral.hypotheses.HypothesisWarning` on purpose, which the figure catches and
  stores in its parameters;
* the complete graph K5 (3-robust: the hypotheses hold),

and five attacks (columns): ``constant(5)``, ``huge(1e6)`` (``±1e6``, random signs),
``random_values(-10, 10)``, ``just_inside()`` (the top of the cooperative values each receiver
sees) and ``split_brain(inside=True)`` (equivocation inside the cooperative range).

Every seed draws its own initial values ``x0 ~ U[0, 1]^5`` from ``np.random.default_rng(seed)``
(the runner's key of the same seed drives the random attacks). To overlay the seeds, values are
drawn in units of that seed's initial cooperative hull: ``z = (x - lo) / (hi - lo)`` with
``[lo, hi]`` the min and max of the cooperative ``x0``, so the hull is ``[0, 1]`` (shaded) for
every seed. The y axis is symlog (linear on ``[-1, 1]``, logarithmic beyond), so the values of
plain averaging under ``huge`` (about ``1e5`` hull widths away) fit on the same axis as the hull.
Each panel also prints the largest distance to the hull, over seeds, steps and cooperative
agents (:func:`decentral.resilient_ac.hull_violation`, in hull widths), of both rules.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import decentral.graphs as g
from decentral.hypotheses import HypothesisWarning
from decentral.resilient_ac import (
    Attacker,
    ResilientParams,
    constant,
    cooperative_spread,
    huge,
    hull_violation,
    just_inside,
    random_values,
    resilient_consensus,
    split_brain,
    switch_attacker,
    values_of,
)
from decentral.runner import run
from figures.registry import FigureContext, FigureOutput, figure

__all__ = ["N", "BYZANTINE", "H", "graphs", "attacks", "initial_values", "hull_units",
           "switch_attacker", "hull_data", "draw_hull", "draw_v1_returns",
           "draw_v2_estimates"]

PAPER = ("Figura, Lin, Liu, Gupta, Resilient Consensus-based Multi-agent Reinforcement Learning "
         "with Function Approximation (arXiv:2111.06776); W-MSR of LeBlanc, Zhang, Koutsoukos, "
         "Sundaram (IEEE JSAC 31(4) 2013)")

N = 5
"""Number of agents."""

BYZANTINE = (4,)
"""The Byzantine agent(s)."""

H = 1
"""Byzantine in-neighbours W-MSR tolerates."""

WMSR_COLOR, MEAN_COLOR = "tab:blue", "tab:red"


def _cooperative() -> np.ndarray:
    coop = np.ones(N, bool)
    coop[list(BYZANTINE)] = False
    return coop


def graphs() -> dict[str, dict[str, Any]]:
    """The two graphs (rows): key -> ``{"adjacency", "label", "robustness",
    "cooperative_robustness"}`` (r-robustness of the graph and of its cooperative subgraph)."""
    keep = np.flatnonzero(_cooperative())
    out = {}
    for key, adj, label in (("experiment", g.circulant(N, [-1, -2, -3]),
                             "experiment graph circulant(5, {1,2,3})"),
                            ("complete", g.complete(N), "complete graph K5")):
        out[key] = {"adjacency": adj, "label": label, "robustness": int(g.r_robustness(adj)),
                    "cooperative_robustness": int(g.r_robustness(adj[np.ix_(keep, keep)]))}
    return out


def attacks() -> dict[str, dict[str, Any]]:
    """The attacks (columns): key -> ``{"attacker", "label"}``."""
    return {
        "constant": {"attacker": constant(5.0), "label": "constant(5)"},
        "huge": {"attacker": huge(1e6), "label": r"huge: $\pm 10^6$"},
        "random": {"attacker": random_values(-10.0, 10.0), "label": "random U[-10, 10]"},
        "just_inside": {"attacker": just_inside(), "label": "just inside (top)"},
        "split_brain": {"attacker": split_brain(inside=True),
                        "label": "split brain (inside)"},
    }


def initial_values(seeds) -> np.ndarray:
    """``[S, N]`` initial values, ``U[0, 1]`` from ``np.random.default_rng(seed)`` per seed."""
    return np.stack([np.random.default_rng(int(s)).uniform(0.0, 1.0, N) for s in seeds])


def hull_units(x: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """Values ``x [S, R, N]`` in units of each seed's initial cooperative hull (``[0, 1]``)."""
    init = np.asarray(x0, np.float64)[:, _cooperative()]
    lo, hi = init.min(axis=1), init.max(axis=1)
    return (np.asarray(x, np.float64) - lo[:, None, None]) / (hi - lo)[:, None, None]


def _hull_width(x0: np.ndarray) -> np.ndarray:
    """``[S, 1]`` width ``max - min`` of each seed's cooperative initial values."""
    init = np.asarray(x0, np.float64)[:, _cooperative()]
    return (init.max(axis=1) - init.min(axis=1))[:, None]


def _run_all(alg, switch: Attacker, x0: np.ndarray, seeds: list[int], num_steps: int
             ) -> np.ndarray:
    """``[A, S, T+1, N]``: attack a, seed s starting from ``x0[s]``.

    One sweep over the ``A * S`` pairs (attack, x0) and the seeds, keeping the entries whose
    x0 index equals the seed index (a few redundant runs of 5 agents, one compile).
    """
    A, S = len(switch.params["each"]), len(seeds)
    which = np.repeat(np.arange(A, dtype=np.int32), S)                     # [P = A * S]
    tiled = jax.tree_util.tree_map(lambda v: jnp.broadcast_to(v, (A * S,) + jnp.shape(v)),
                                   switch.params["each"])
    params = ResilientParams(jnp.asarray(np.tile(x0, (A, 1))),
                             {"which": jnp.asarray(which), "each": tiled})
    res = run(alg, params, seeds, num_steps, record_fn=values_of, record_initial=True,
              sweep=True, progress=False)
    rec = np.asarray(res.records, np.float64).reshape((A, S, S) + res.records.shape[2:])
    idx = np.arange(S)
    return rec[:, idx, idx]


def hull_data(num_seeds: int, num_steps: int, base_seed: int = 0
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Run W-MSR and plain averaging under every attack on both graphs.

    Returns:
        ``(data, parameters)``: data holds ``t [T+1]``, ``x0 [S, N]`` and, per graph key ``g``
        and attack key ``a``, ``g__a__wmsr`` and ``g__a__mean`` (raw values ``[S, T+1, N]``)
        with their hull violations ``g__a__wmsr_violation [S, T+1]`` (raw units) and
        cooperative spreads ``g__a__wmsr_spread [S, T+1]``; parameters the sizes, seeds,
        graphs (with robustness and the hypothesis warnings W-MSR raised on them) and attacks.
    """
    seeds = list(range(base_seed, base_seed + num_seeds))
    x0 = initial_values(seeds)
    coop = _cooperative()
    cases = attacks()
    switch = switch_attacker([c["attacker"] for c in cases.values()])
    data: dict[str, np.ndarray] = {"t": np.arange(num_steps + 1), "x0": x0}
    described_graphs = {}
    for gk, gcase in graphs().items():
        adj = gcase["adjacency"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", HypothesisWarning)
            wmsr_alg = resilient_consensus(adj, H, list(BYZANTINE), switch)
        messages = []
        for w in caught:
            if issubclass(w.category, HypothesisWarning):
                messages.append(str(w.message))
            else:                                                  # pragma: no cover
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        # plain averaging is unprotected on purpose: no hypothesis check
        mean_alg = resilient_consensus(adj, 0, list(BYZANTINE), switch, aggregator="mean",
                                       check=False)
        for name, alg in (("wmsr", wmsr_alg), ("mean", mean_alg)):
            xs = _run_all(alg, switch, x0, seeds, num_steps)               # [A, S, T+1, N]
            for ak, x in zip(cases, xs, strict=True):
                data[f"{gk}__{ak}__{name}"] = x
                data[f"{gk}__{ak}__{name}_violation"] = np.stack(
                    [hull_violation(x[s], x0[s], coop, agent_axis=-1)
                     for s in range(num_seeds)])
                data[f"{gk}__{ak}__{name}_spread"] = cooperative_spread(x, coop, agent_axis=-1)
        described_graphs[gk] = {"label": gcase["label"], "robustness": gcase["robustness"],
                                "cooperative_robustness": gcase["cooperative_robustness"],
                                "adjacency": np.asarray(adj).astype(int).tolist(),
                                "hypothesis_warnings": messages}
    described_attacks = {ak: {"label": c["label"], "name": c["attacker"].name,
                              "params": {k: np.asarray(v).tolist()
                                         for k, v in c["attacker"].params.items()}}
                         for ak, c in cases.items()}
    parameters = {"num_seeds": num_seeds, "num_steps": num_steps, "seeds": seeds, "N": N,
                  "byzantine": list(BYZANTINE), "H": H, "baseline": "aggregator='mean', H=0",
                  "x0": "U[0, 1]^N from np.random.default_rng(seed), one draw per seed",
                  "graphs": described_graphs, "attacks": described_attacks}
    return data, parameters


def _row_name(gcase: dict[str, Any]) -> str:
    r = gcase["robustness"]
    verdict = "$< 2H+1 = 3$" if r < 2 * H + 1 else r"$\geq 2H+1 = 3$"
    return f"{gcase['label']}\n{r}-robust {verdict}"


def draw_hull(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw the figure from :func:`hull_data`'s output; returns ``(fig, axes)``."""
    gkeys, akeys = list(parameters["graphs"]), list(parameters["attacks"])
    t, x0 = data["t"], data["x0"]
    coop = _cooperative()
    fig, axes = plt.subplots(len(gkeys), len(akeys), figsize=(3.6 * len(akeys), 3.6 * len(gkeys)
                                                              + 1.2), sharex=True, squeeze=False,
                             layout="constrained")
    for r, gk in enumerate(gkeys):
        gcase = parameters["graphs"][gk]
        for c, ak in enumerate(akeys):
            ax = axes[r, c]
            ax.axhspan(0.0, 1.0, color="0.85", zorder=0)
            peak, zmax, zmin = {}, 1.0, 0.0
            for name, color, style in (("mean", MEAN_COLOR, "--"), ("wmsr", WMSR_COLOR, "-")):
                z = hull_units(data[f"{gk}__{ak}__{name}"], x0)[:, :, coop]   # [S, T+1, C]
                for s in range(z.shape[0]):
                    ax.plot(t, z[s], color=color, linestyle=style, alpha=0.6,
                            linewidth=0.8 if z.shape[0] <= 8 else 0.4)
                peak[name] = float(np.maximum(np.maximum(-z, z - 1.0), 0.0).max())
                zmax, zmin = max(zmax, float(z.max())), min(zmin, float(z.min()))
            if zmax > 2.0 or zmin < -1.0:          # captured far away: symlog, hull linear
                ax.set_yscale("symlog", linthresh=1.0)
                ax.set_ylim(min(-3.0, 2.0 * zmin), max(3.0, 2.0 * zmax))
            else:
                ax.set_ylim(-0.45, 1.1)
            spread_t = float((data[f"{gk}__{ak}__wmsr_spread"][:, -1]
                              / _hull_width(x0)).max())
            ax.set_title(f"{'K5' if gk == 'complete' else 'experiment graph'}: "
                         f"{parameters['attacks'][ak]['label']}\nmax distance to hull: W-MSR "
                         f"{peak['wmsr']:.2g}, plain {peak['mean']:.2g}\nW-MSR spread at $T$: "
                         f"{spread_t:.1g}", fontsize=8)
            ax.tick_params(labelsize=7)
            if c == 0:
                ax.set_ylabel(_row_name(gcase), fontsize=8)
            if r == len(gkeys) - 1:
                ax.set_xlabel("$t$ (steps)", fontsize=8)
    handles = [Line2D([], [], color=WMSR_COLOR, linestyle="-", label=f"W-MSR (H={H})"),
               Line2D([], [], color=MEAN_COLOR, linestyle="--", label="plain average (H=0)"),
               Patch(color="0.85", label="initial cooperative hull [0, 1]")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9, frameon=False)
    fig.supylabel(r"value in hull units $(x - \min x_0)\,/\,(\max x_0 - \min x_0)$",
                  fontsize=9)
    exp = parameters["graphs"].get("experiment", {})
    fig.suptitle(
        f"{int(coop.sum())} cooperative agents, Byzantine agent "
        f"{', '.join(map(str, parameters['byzantine']))}, {parameters['num_seeds']} seeds, one "
        "line per cooperative agent and seed; values in units of each seed's initial "
        "cooperative hull, distances and spreads in hull widths (symlog axis where plain "
        "averaging is captured far away).\nThe experiment graph (agent $i$ hears $i+1$, $i+2$, "
        f"$i+3$ mod 5) is only {exp.get('robustness')}-robust $< 2H+1 = {2 * H + 1}$: the "
        "sufficient "
        "condition of W-MSR fails there (HypothesisWarning caught, kept in the parameters);\n"
        f"its cooperative subgraph is {exp.get('cooperative_robustness')}-robust (LeBlanc et "
        f"al.'s Byzantine condition, $(H+1) = {H + 1}$-robust). K5 is "
        f"{parameters['graphs'].get('complete', {}).get('robustness')}-robust.",
        fontsize=9, x=0.01, ha="left")
    return fig, axes


@figure("resilient_ac.hull_under_attack",
        title="W-MSR (H=1) keeps the cooperative values inside their initial hull under five "
              "attacks; plain averaging is captured by the same attacks (experiment graph, "
              "2-robust, and K5)",
        paper=f"{PAPER}; claims resilient_ac.* (hull invariance, capture of plain averaging)")
def hull_under_attack(ctx: FigureContext) -> FigureOutput:
    """The registered figure: sizes tiny 2 seeds x 10 steps, quick 4 x 40, full 32 x 100."""
    data, parameters = hull_data(num_seeds=ctx.pick(tiny=2, quick=4, full=32),
                                 num_steps=ctx.pick(tiny=10, quick=40, full=100),
                                 base_seed=ctx.base_seed)
    fig, _ = draw_hull(data, parameters)
    return FigureOutput(fig, data, parameters)


# ---------------------------------------------------------------------------------------------
# learning experiments (grid world): returns per scenario and H, estimated vs true returns
# ---------------------------------------------------------------------------------------------

def _result_data(res) -> dict[str, np.ndarray]:
    return {"coop_return": res.coop_return, "adversary_return": res.adversary_return,
            "estimate": res.estimate}


def _legend_below(fig, axes, **kwargs):
    """One legend for every panel, below them (outside: it covers no data), with each label
    drawn in any panel once."""
    seen: dict[str, Any] = {}
    for ax in np.ravel(axes):
        if ax.get_visible():
            for handle, text in zip(*ax.get_legend_handles_labels(), strict=True):
                seen.setdefault(text, handle)
    options = {"loc": "outside lower center", "ncol": max(len(seen), 1), "frameon": False,
               **kwargs}
    return fig.legend(list(seen.values()), list(seen), **options)


def draw_v1_returns(panels: dict, label: str):
    """Eight panels (rows H = 0, 1; columns the scenarios): mean coop return (blue) and
    adversary return (red) per episode, from
    :func:`proofs_checks.resilient_ac.setups.v1_panel_arrays`. Returns ``(fig, axes)``."""
    from decentral.resilient_ac.learning import SCENARIOS

    fig, axes = plt.subplots(2, 4, figsize=(16, 7), sharex=True, sharey=True,
                             layout="constrained")
    for j, s in enumerate(SCENARIOS):
        for i, h in enumerate((0, 1)):
            ax = axes[i, j]
            if (s, h) not in panels:
                ax.set_visible(False)
                continue
            ep, coop, adv = panels[(s, h)]
            if np.any(np.isfinite(adv)):
                ax.plot(ep, adv, color="tab:red", lw=0.6, label="Adversary")
            ax.plot(ep, coop, color="tab:blue", lw=0.6, label="Coop. agents")
            ax.set_title(f"{s}, H = {h}")
            if i == 1:
                ax.set_xlabel("episode")
            if j == 0:
                ax.set_ylabel("discounted return")
    _legend_below(fig, axes)
    fig.suptitle(f"RPBCAC grid world ({label}, experiment graph): mean over seeds")
    return fig, axes


def draw_v2_estimates(panels: dict, label: str, drop: int = 500, window: int = 200):
    """Panels per (scenario, H): "Estimated" (blue), "True" (green), "True (global)" (red),
    from :func:`proofs_checks.resilient_ac.setups.v2_panel_arrays`. Returns ``(fig, axes)``."""
    from decentral.resilient_ac.learning import SCENARIOS

    fig, axes = plt.subplots(2, 4, figsize=(16, 7), sharex=True, layout="constrained")
    for j, s in enumerate(SCENARIOS):
        for i, h in enumerate((0, 1)):
            ax = axes[i, j]
            p = panels.get((s, h))
            if p is None:
                ax.set_visible(False)
                continue
            ax.plot(p["episode"], p["estimated"], color="tab:blue", label="Estimated")
            ax.plot(p["episode"], p["true"], color="tab:green", label="True")
            if p["true_global"] is not None:
                ax.plot(p["episode"], p["true_global"], color="tab:red", label="True (global)")
            ax.set_title(f"{s}, H = {h}")
            if i == 1:
                ax.set_xlabel(f"episode (both phases, first {drop} of each dropped)")
    _legend_below(fig, axes)
    fig.supylabel("discounted return per episode (Estimated: the critics' estimate)")
    fig.suptitle(f"RPBCAC grid world ({label}, experiment graph): mean over seeds, rolling "
                 f"mean over {window} episodes")
    return fig, axes


@figure("resilient_ac_learning.v1_returns",
        title="Grid world, v1 protocol: cooperative and adversary returns for the four "
              "scenarios at H = 0 (plain averaging) and H = 1 (W-MSR), v1-corrected",
        paper=f"{PAPER}; the 8 return panels of the v1 experiments; claims "
              "resilient_ac.learning_*")
def v1_returns(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 1 seed x 100 episodes, quick 2 x 1000, full 5 x 10 000 (paper)."""
    from decentral.resilient_ac.learning import SCENARIOS, default_seeds
    from proofs_checks.resilient_ac.setups import learning_runs, v1_panel_arrays

    seeds = default_seeds("v1")[:ctx.pick(tiny=1, quick=2, full=5)]
    episodes = ctx.pick(tiny=100, quick=1000, full=10_000)
    specs = [(s, h, False) for s in SCENARIOS for h in (0, 1)]
    res = learning_runs("v1", "corrected", seeds, episodes, specs)
    fig, _ = draw_v1_returns(v1_panel_arrays(res), res.config["variant"])
    return FigureOutput(fig, _result_data(res), res.config)


@figure("resilient_ac_learning.v2_estimates",
        title="Grid world, v2 protocol: estimated (critic) vs true cooperative return and the "
              "oracle's (global reward) return, four scenarios x H, v2-corrected",
        paper=f"{PAPER}; the Estimated / True / True (global) panels of the later code; claims "
              "resilient_ac.learning_estimate_bias, resilient_ac.learning_oracle_upper")
def v2_estimates(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 1 seed x 2 x 100 episodes, quick 2 x 2 x 300 (a preview, about 4 minutes
    on 2 CPU cores), full 3 x 2 x 4000 (paper)."""
    from decentral.resilient_ac.learning import SCENARIOS, default_seeds
    from proofs_checks.resilient_ac.setups import learning_runs, v2_panel_arrays

    seeds = default_seeds("v2")[:ctx.pick(tiny=1, quick=2, full=3)]
    episodes = ctx.pick(tiny=100, quick=300, full=4000)
    specs = [(s, h, o) for s in SCENARIOS for h in (0, 1) for o in (False, True)]
    res = learning_runs("v2", "corrected", seeds, episodes, specs)
    drop = ctx.pick(tiny=20, quick=100, full=500)
    window = ctx.pick(tiny=20, quick=100, full=200)
    fig, _ = draw_v2_estimates(v2_panel_arrays(res, drop=drop, window=window),
                               res.config["variant"], drop, window)
    return FigureOutput(fig, _result_data(res), {**res.config, "drop": drop, "window": window})


# ---------------------------------------------------------------------------------------------
# Example 1 (linear function approximation): projection vs element-wise trimming
# ---------------------------------------------------------------------------------------------

EXAMPLE1_VARIANTS = ("projection", "trimmed", "mean")


def draw_example1(data: dict[str, np.ndarray], variants=EXAMPLE1_VARIANTS):
    """Rows: the consensus variants; columns: the two states. Each panel draws every cooperative
    agent's team-reward estimate ``f(s)^T lambda^i_t`` (seed mean, thin lines), the cooperative
    hull ``[min_j r^j(s), max_j r^j(s)]`` (shaded) and the team average (dashed). Returns
    ``(fig, axes)``."""
    steps, hull, avg = data["steps"], data["hull"], data["team_average"]
    S = hull.shape[1]
    fig, axes = plt.subplots(len(variants), S, figsize=(5.5 * S, 2.8 * len(variants) + 0.6),
                             sharex=True, squeeze=False, layout="constrained")
    for i, v in enumerate(variants):
        est = data[f"estimates/{v}"]                                   # [seeds, R, 4, S]
        for s in range(S):
            ax = axes[i, s]
            ax.axhspan(hull[0, s], hull[1, s], color="0.85", label="cooperative hull")
            ax.axhline(avg[s], color="k", ls="--", lw=0.8, label="team average")
            for a in range(est.shape[2]):
                ax.plot(steps, est[:, :, a, s].mean(0), lw=0.8, label=f"agent {a}")
            excess = np.maximum(est[..., s] - hull[1, s], hull[0, s] - est[..., s])
            ax.set_title(f"{v}, state {s}: final max outside hull "
                         f"{max(float(excess[:, -1].max()), 0.0):.3f}", fontsize=9)
            ax.set_ylabel(rf"estimate of $\bar r({s})$")
            if i == len(variants) - 1:
                ax.set_xlabel("iteration (steps)")
    _legend_below(fig, axes, fontsize=8)
    fig.suptitle("Example 1 (reconstruction): team-reward estimates (mean over seeds) under the "
                 "per-coordinate-extreme attack,\nagent 4 Byzantine, K5, fixed policy")
    return fig, axes


@figure("resilient_ac.example1_estimates",
        title="Example 1: the projection-based consensus keeps the team-reward estimates in the "
              "cooperative hull; element-wise trimming and plain averaging leave it",
        paper=f"{PAPER}; Example 1 and its figures (our reconstruction: two states, 2-dimensional "
              "features); claim resilient_ac.linear_projection_beats_elementwise")
def example1_estimates(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 2 seeds x 200 steps, quick 4 x 4000, full 16 x 20 000."""
    from proofs_checks.resilient_ac.setups import example1_figure_data

    seeds = [ctx.base_seed + k for k in range(ctx.pick(tiny=2, quick=4, full=16))]
    num_steps = ctx.pick(tiny=200, quick=4000, full=20_000)
    record_every = ctx.pick(tiny=10, quick=40, full=100)
    data = example1_figure_data(num_steps=num_steps, seeds=seeds, record_every=record_every,
                                variants=EXAMPLE1_VARIANTS)
    fig, _ = draw_example1(data)
    parameters = {"seeds": seeds, "num_steps": num_steps, "record_every": record_every,
                  "variants": list(EXAMPLE1_VARIANTS), "graph": "complete(5)", "H": 1,
                  "byzantine": [4], "attack": "example1_attacker('mean_feature', 1.0)"}
    return FigureOutput(fig, data, parameters)
