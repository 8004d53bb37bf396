"""The first version's six-agent figures: Dec_UCB on the authors' graphs against independent
UCB1 agents (Figs 1-3, and the appendix's selected graphs, Figs 11-14), in both metrics.

Rewards are heterogeneous (:func:`proofs_checks.bandits.setups.v1_arms`), M = 6, and every
system runs as one 24-agent block-diagonal program (:mod:`figures.bandits.batching`).
"""

from __future__ import annotations

import functools
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from decentral.datasets.zhu2021 import paper_graph, paper_graph_kind
from figures.registry import FigureContext
from proofs_checks.bandits.setups import (
    V1_ARMS_SEED_OFFSET,
    V1_FAMILIES,
    V1_FIXED_MEANS,
    V1_GRAPHS,
    V1_SELECTED,
    V1_SELECTED_SEED_OFFSET,
    v1_arms,
)

from .batching import dec_ucb_block, run_blocks, ucb1_block
from .common import (
    METRICS,
    PARITY_LABEL,
    REGRET_LABEL,
    THEOREM_MATH,
    THEOREM_TEXT,
    TIME_LABEL,
    band,
    band_handle,
    draw_graph,
    outside_legend,
    seed_list,
)

__all__ = ["BLOCK_TEXT", "v1_fixed_data", "v1_selected_data", "draw_v1_fixed",
           "compute_v1_fixed", "compute_v1_selected"]

BLOCK_TEXT = ("one block-diagonal system of {n} agents ({blocks}) run by dec_ucb(W, "
              "theorem=1) with per-agent exploration constants: 4/3 (flocking, Theorem 1), "
              "3/|N_i| (Metropolis, Theorem 2), 2 (isolated agents = UCB1); blocks share no "
              "edge and have their own reward streams")
"""How a first-version system was run (saved in the figures' parameters, ``run_as``)."""

_BASELINE_TEXT = ("6 independent UCB1 agents (width sqrt(2 ln t / n)) facing the same laws "
                  "(own reward streams); the best agent (lowest mean final value of each "
                  "metric) is drawn")


# ---------------------------------------------------------------------------------------------
# Figs 1-3: the authors' strongly connected, undirected and weakly connected graphs
# ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _v1_runs(num_seeds: int, horizon: int, base_seed: int):
    """The three 6-agent graphs and 6 UCB1 agents: one 24-agent block system, one compile."""
    blocks = {name: dec_ucb_block(paper_graph(name), spec["theorem"])
              for name, spec in V1_GRAPHS.items()}
    blocks["ucb1"] = ucb1_block(6)
    arms, _, _ = v1_arms(6, 6, base_seed + V1_ARMS_SEED_OFFSET, copies=len(blocks))
    return run_blocks(blocks, arms, horizon, seed_list(base_seed, num_seeds))


def v1_fixed_data(name: str, num_seeds: int, horizon: int, base_seed: int = 0
                  ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Dec_UCB on the first version's graph ``name`` and 6 independent UCB1 agents.

    Returns:
        ``(data, parameters)``: data ``t [R]``, ``dec_regret``, ``dec_parity``,
        ``ucb1_regret``, ``ucb1_parity`` ``[S, R, 6]``, ``adjacency [6, 6]``, ``means [6]``,
        ``family_choice [6, 6]``.
    """
    if name not in V1_GRAPHS:
        raise ValueError(f"name must be one of {list(V1_GRAPHS)}; got {name!r}.")
    runs = _v1_runs(num_seeds, horizon, base_seed)
    dec, base = runs[name], runs["ucb1"]
    adj = paper_graph(name)
    _, mu, choice = v1_arms(6, 6, base_seed + V1_ARMS_SEED_OFFSET)
    data = {"t": dec["t"], "dec_regret": dec["regret"], "dec_parity": dec["parity"],
            "ucb1_regret": base["regret"], "ucb1_parity": base["parity"],
            "adjacency": adj.astype(np.int8), "means": mu, "family_choice": choice}
    theorem = V1_GRAPHS[name]["theorem"]
    parameters = {
        "graph": name, "theorem": theorem, "variant": f"Dec_UCB, {THEOREM_TEXT[theorem]}",
        "num_agents": 6, "num_arms": 6, "horizon": horizon, "num_seeds": num_seeds,
        "seeds": seed_list(base_seed, num_seeds),
        "neighbourhood_sizes": adj.sum(axis=1).tolist(),
        "arms": "heterogeneous: each (agent, arm) uniformly from " + ", ".join(V1_FAMILIES)
                + "; mu_k ~ U[0.05, 0.95]; one draw shared by Figs 1-3 and the baseline",
        "arms_seed": base_seed + V1_ARMS_SEED_OFFSET, "families": list(V1_FAMILIES),
        "baseline": _BASELINE_TEXT,
        "run_as": BLOCK_TEXT.format(n=24, blocks="strongly, undirected, weakly, 6 UCB1 "
                                                 "agents"),
        "band": "+-1 std over seeds",
        "metrics": METRICS,
        "figure": V1_GRAPHS[name]["figure"],
        "means_note": "one draw of mu_k ~ U[0.05, 0.95] and of the family per (agent, arm), "
                      "shared with the 6 independent UCB1 agents (the paper redraws both per "
                      "experiment)",
    }
    return data, parameters


# ---------------------------------------------------------------------------------------------
# appendix Figs 11-14: the selected graphs
# ---------------------------------------------------------------------------------------------

def _v1_selected_group(name: str) -> tuple[tuple[str, ...], int, Any, int]:
    """``(graphs run together, arms seed offset, means, copies)`` of the system holding
    ``name``. Every system has 24 agents, the size (and so the compiled program) of Figs 1-3's:
    Figs 11-13 share the fixed means (three graphs and 6 UCB1 agents); Fig 14 draws its means
    and runs two copies of (weakly_path, 6 UCB1 agents), which doubles its runs."""
    if name == "weakly_path":
        return ("weakly_path",), V1_SELECTED_SEED_OFFSET + 1, None, 2
    return (tuple(n for n in V1_SELECTED if n != "weakly_path"), V1_SELECTED_SEED_OFFSET,
            V1_FIXED_MEANS, 1)


@functools.lru_cache(maxsize=4)
def _v1_selected_runs(names: tuple[str, ...], offset: int, means, copies: int,
                      num_seeds: int, horizon: int, base_seed: int):
    """The system of :func:`_v1_selected_group`; each block's curves with the copies stacked
    along the runs axis (copy-major: runs ``c S + s``)."""
    blocks = {}
    for c in range(copies):
        for n in names:
            blocks[(n, c)] = dec_ucb_block(paper_graph(n), V1_SELECTED[n]["theorem"])
        blocks[("ucb1", c)] = ucb1_block(6)
    arms, _, _ = v1_arms(6, 6, base_seed + offset, copies=len(blocks), means=means)
    runs = run_blocks(blocks, arms, horizon, seed_list(base_seed, num_seeds))
    out = {}
    for n in (*names, "ucb1"):
        parts = [runs[(n, c)] for c in range(copies)]
        out[n] = {"t": parts[0]["t"],
                  **{k: np.concatenate([p[k] for p in parts]) for k in ("regret", "parity")}}
    return out


def v1_selected_data(name: str, num_seeds: int, horizon: int, base_seed: int = 0
                     ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Dec_UCB on one of the first version's appendix graphs (:data:`V1_SELECTED`) and 6
    independent UCB1 agents, heterogeneous rewards (Beta sd 0.05, Bernoulli, truncated normal
    sd 0.05 with mean ``mu_k``, one family per (agent, arm)), M = 6: the means
    :data:`V1_FIXED_MEANS` for Figs 11-13, ``mu_k ~ U[0.05, 0.95]`` for Fig 14 (the authors
    redraw them every experiment; one draw here).

    Returns:
        ``(data, parameters)`` with the keys of :func:`v1_fixed_data`.
    """
    if name not in V1_SELECTED:
        raise ValueError(f"name must be one of {list(V1_SELECTED)}; got {name!r}.")
    names, offset, means, copies = _v1_selected_group(name)
    runs = _v1_selected_runs(names, offset, means, copies, num_seeds, horizon, base_seed)
    dec, base = runs[name], runs["ucb1"]
    adj = paper_graph(name)
    _, mu, choice = v1_arms(6, 6, base_seed + offset, means=means)
    data = {"t": dec["t"], "dec_regret": dec["regret"], "dec_parity": dec["parity"],
            "ucb1_regret": base["regret"], "ucb1_parity": base["parity"],
            "adjacency": adj.astype(np.int8), "means": mu, "family_choice": choice}
    spec = V1_SELECTED[name]
    theorem = spec["theorem"]
    fixed = means is not None
    drawn = ("the fixed means mu = " + ", ".join(f"{m:.2f}" for m in V1_FIXED_MEANS)
             + " (shared by Figs 11-13)" if fixed else
             "mu_k ~ U[0.05, 0.95], one draw (the authors redraw them every experiment)")
    parameters = {
        "graph": name, "theorem": theorem, "variant": f"Dec_UCB, {THEOREM_TEXT[theorem]}",
        "figure": spec["figure"], "num_agents": 6, "num_arms": 6, "horizon": horizon,
        "num_seeds": num_seeds, "seeds": seed_list(base_seed, num_seeds),
        "copies": copies, "runs": copies * num_seeds,
        "neighbourhood_sizes": adj.sum(axis=1).tolist(),
        "arms": "heterogeneous: each (agent, arm) uniformly from " + ", ".join(V1_FAMILIES)
                + "; " + drawn,
        "fixed_means": fixed, "arms_seed": base_seed + offset, "families": list(V1_FAMILIES),
        "baseline": _BASELINE_TEXT,
        "run_as": BLOCK_TEXT.format(n=6 * (len(names) + 1) * copies,
                                    blocks=(", ".join(names) + ", 6 UCB1 agents")
                                    + (f", {copies} copies (facing the same laws with their "
                                       "own reward streams: the runs are copy x seed)"
                                       if copies > 1 else "")),
        "band": "+-1 std over runs (copy x seed)" if copies > 1 else "+-1 std over seeds",
        "metrics": METRICS,
        "means_note": drawn + "; one draw of the family per (agent, arm), shared with the 6 "
                              "independent UCB1 agents",
        "paper_setup": "the authors' command: Dec_UCB_Simulator.py "
                       f"{paper_graph_kind(name)} 6 heterogeneous -f {name}.adjlist -d "
                       "bernoulli truncnorm beta "
                       + ("-m 0.10 0.25 0.45 0.65 0.75 0.90" if fixed else "--refreshMeans")
                       + " (100 experiments, T = 1000)",
    }
    return data, parameters


# ---------------------------------------------------------------------------------------------
# drawing (Figs 1-3 and 11-14 alike)
# ---------------------------------------------------------------------------------------------

_PANEL_TITLES = {"regret": "standard pseudo-regret",
                 "parity": "paper parity metric (authors' running average)"}


def _runs_caption(parameters: dict[str, Any]) -> tuple[str, str]:
    """``(runs text for the title, what a band spans)``."""
    copies = parameters.get("copies", 1)
    if copies == 1:
        return f"{parameters['num_seeds']} seeds", "over seeds"
    return (f"{copies} copies x {parameters['num_seeds']} seeds = {parameters['runs']} runs",
            "over runs (copy x seed)")


def _means_caption(parameters: dict[str, Any]) -> str:
    if parameters.get("fixed_means"):
        return (r"fixed means $\mu$ = (" + ", ".join(f"{m:.2f}" for m in V1_FIXED_MEANS)
                + "), shared by Figs 11-13")
    return (r"one draw of $\mu_k \sim U[0.05, 0.95]$ (the paper redraws them every "
            "experiment)")


def draw_v1_fixed(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw v1 Fig 1, 2, 3 or 11-14 from :func:`v1_fixed_data`'s (or
    :func:`v1_selected_data`'s) output: the graph, then every agent's pseudo-regret with the
    best UCB1 agent dashed, then the same in the paper's plotting metric; returns
    ``(fig, axes)``."""
    colors = plt.get_cmap("tab10").colors
    adj = data["adjacency"].astype(bool)
    name = parameters["graph"]
    fig, axes = plt.subplots(1, 3, figsize=(17, 6.4), layout="constrained",
                             gridspec_kw={"width_ratios": [0.75, 1, 1]})
    undirected = paper_graph_kind(name) == "undirected"
    draw_graph(axes[0], adj, directed=not undirected, colors=colors)
    how = "edges both ways" if undirected else r"arrow $j \to i$: $i$ receives from $j$"
    axes[0].set_title(f"the authors' '{name}' graph\n({how})", fontsize=10)
    t = data["t"]
    deg = adj.sum(axis=1)
    runs_text, band_over = _runs_caption(parameters)
    handles = []
    for ax, metric in zip(axes[1:], ("regret", "parity"), strict=True):
        dec, base = data[f"dec_{metric}"], data[f"ucb1_{metric}"]
        lines = [band(ax, t, dec[:, :, i], label=f"Dec_UCB agent {i} ($|N_i| = {deg[i]}$)",
                      color=colors[i], alpha=0.08) for i in range(dec.shape[2])]
        best = int(np.argmin(base[:, -1, :].mean(axis=0)))
        lines.append(band(ax, t, base[:, :, best], color="black", linestyle="--",
                          linewidth=2.0, alpha=0.08,
                          label="best of the 6 UCB1 agents (index in the panel title)"))
        handles = handles or lines
        dec_final, base_final = dec[:, -1].mean(axis=0), base[:, -1].mean(axis=0)
        ax.set_title(f"{_PANEL_TITLES[metric]}; best UCB1 agent {best}\nat $T$: Dec_UCB "
                     f"agents {dec_final.min():.1f} to {dec_final.max():.1f}, UCB1 agents "
                     f"{base_final.min():.1f} to {base_final.max():.1f}", fontsize=10)
        ax.set_xlabel(TIME_LABEL)
        ax.set_ylabel(REGRET_LABEL if metric == "regret" else PARITY_LABEL)
        ax.grid(alpha=0.3)
    outside_legend(fig, [*handles, band_handle(band_over)], ncols=4)
    theorem = parameters["theorem"]
    fig.suptitle(
        f"v1 Fig {parameters['figure']}: Dec_UCB, {THEOREM_MATH[theorem]}, on the authors' "
        f"'{name}' graph; N=6, M=6, heterogeneous rewards, T={parameters['horizon']}, "
        f"{runs_text}\n{_means_caption(parameters)}; one draw of the reward family per "
        "(agent, arm), shared with the UCB1 agents; curves: mean over runs", fontsize=10)
    return fig, axes


# ---------------------------------------------------------------------------------------------
# sizes (the figures are registered by figures.bandits.catalogue)
# ---------------------------------------------------------------------------------------------

def _v1_sizes(ctx: FigureContext) -> dict[str, int]:
    return {"num_seeds": ctx.pick(tiny=4, quick=40, full=100),
            "horizon": ctx.pick(tiny=100, quick=1000, full=1000), "base_seed": ctx.base_seed}


def compute_v1_fixed(ctx: FigureContext, name: str) -> tuple[dict[str, np.ndarray], dict]:
    """:func:`v1_fixed_data` of v1 Fig 1, 2 or 3 (graph ``name`` of :data:`V1_GRAPHS`) at the
    size of ``ctx``: tiny 4 seeds x T=100, quick 40 x 1000, full 100 x 1000."""
    return v1_fixed_data(name, **_v1_sizes(ctx))


def compute_v1_selected(ctx: FigureContext, name: str) -> tuple[dict[str, np.ndarray], dict]:
    """:func:`v1_selected_data` of v1 appendix Fig 11, 12, 13 or 14 (graph ``name`` of
    :data:`V1_SELECTED`); sizes as :func:`compute_v1_fixed`."""
    return v1_selected_data(name, **_v1_sizes(ctx))
