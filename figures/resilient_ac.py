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
           "switch_attacker", "hull_data", "draw_hull"]

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
        "huge": {"attacker": huge(1e6), "label": "huge: +-1e6"},
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
                    [hull_violation(x[s], x0[s], coop) for s in range(num_seeds)])
                data[f"{gk}__{ak}__{name}_spread"] = cooperative_spread(x, coop)
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
    verdict = "< 2H+1 = 3" if r < 2 * H + 1 else ">= 2H+1 = 3"
    return f"{gcase['label']}\n{r}-robust {verdict}"


def draw_hull(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw the figure from :func:`hull_data`'s output; returns ``(fig, axes)``."""
    gkeys, akeys = list(parameters["graphs"]), list(parameters["attacks"])
    t, x0 = data["t"], data["x0"]
    coop = _cooperative()
    fig, axes = plt.subplots(len(gkeys), len(akeys), figsize=(3.6 * len(akeys), 3.4 * len(gkeys)
                                                              + 1.0), sharex=True, squeeze=False)
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
                         f"{parameters['attacks'][ak]['label']}", fontsize=9)
            ax.text(0.02, 0.02, f"max distance to hull: W-MSR {peak['wmsr']:.2g}, plain "
                    f"{peak['mean']:.2g}\nW-MSR spread at T: {spread_t:.1g}",
                    transform=ax.transAxes, fontsize=7, va="bottom",
                    bbox={"facecolor": "white", "alpha": 0.85, "linewidth": 0})
            ax.tick_params(labelsize=7)
            if c == 0:
                ax.set_ylabel(_row_name(gcase) + "\n(x - min x0) / (max x0 - min x0)",
                              fontsize=8)
            if r == len(gkeys) - 1:
                ax.set_xlabel("t (updates)", fontsize=8)
    handles = [Line2D([], [], color=WMSR_COLOR, linestyle="-", label=f"W-MSR (H={H})"),
               Line2D([], [], color=MEAN_COLOR, linestyle="--", label="plain average (H=0)"),
               Patch(color="0.85", label="initial cooperative hull [0, 1]")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=9, frameon=False)
    exp = parameters["graphs"].get("experiment", {})
    fig.suptitle(
        f"{int(coop.sum())} cooperative agents, Byzantine agent "
        f"{', '.join(map(str, parameters['byzantine']))}, {parameters['num_seeds']} seeds, one "
        "line per cooperative agent and seed; values in units of each seed's initial "
        "cooperative hull, distances and spreads in hull widths (symlog axis where plain "
        "averaging is captured far away).\nThe experiment graph (agent i hears i+1, i+2, i+3 "
        f"mod 5) is only {exp.get('robustness')}-robust < 2H+1 = {2 * H + 1}: the sufficient "
        "condition of W-MSR fails there (HypothesisWarning caught, kept in the parameters);\n"
        f"its cooperative subgraph is {exp.get('cooperative_robustness')}-robust (LeBlanc et "
        f"al.'s Byzantine condition, (H+1) = {H + 1}-robust). K5 is "
        f"{parameters['graphs'].get('complete', {}).get('robustness')}-robust.",
        fontsize=9, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0.035, 1, 0.94))
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
