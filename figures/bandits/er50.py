"""The first version's Fig 4: Dec_UCB on ER(50, 0.5) graphs — strongly connected, undirected
and weakly connected (a substitute construction) — against 50 independent UCB1 agents, M = 10,
heterogeneous rewards, both metrics.

Graph ``k`` of each kind and 50 UCB1 agents run as one 200-agent block-diagonal program
(:mod:`figures.bandits.batching`).
"""

from __future__ import annotations

import functools
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

import decentral.graphs as g
from figures.registry import FigureContext
from proofs_checks.bandits.setups import (
    ER_KINDS,
    V1_FAMILIES,
    er50_arms_seed,
    er50_graph,
    v1_arms,
)

from .batching import dec_ucb_block, run_blocks, ucb1_block
from .common import (
    METRICS,
    PARITY_LABEL,
    REGRET_LABEL,
    THEOREM_TEXT,
    TIME_LABEL,
    band,
    band_handle,
    outside_legend,
    seed_list,
)
from .v1 import BLOCK_TEXT

__all__ = ["er50_data", "draw_er50", "compute_er50"]


@functools.lru_cache(maxsize=16)
def _er_runs(index: int, num_seeds: int, horizon: int, base_seed: int):
    """Graph ``index`` of every kind and 50 UCB1 agents: one 200-agent block system; seeds
    ``base_seed + index * num_seeds + 0..num_seeds-1``."""
    blocks = {kind: dec_ucb_block(er50_graph(kind, index, base_seed), theorem)
              for kind, theorem in ER_KINDS.items()}
    blocks["ucb1"] = ucb1_block(50)
    arms, _, _ = v1_arms(50, 10, er50_arms_seed(index, base_seed), copies=len(blocks))
    return run_blocks(blocks, arms, horizon, seed_list(base_seed + index * num_seeds,
                                                       num_seeds))


def _graph_description(adj: np.ndarray) -> dict[str, Any]:
    off = adj & ~np.eye(adj.shape[0], dtype=bool)
    silent = np.flatnonzero(~off.any(axis=0)).tolist()          # nobody receives from them
    return {"strongly_connected": bool(g.is_strongly_connected(adj)),
            "weakly_connected": bool(g.is_strongly_connected(adj | adj.T)),
            "agents_nobody_hears": silent}


def er50_data(num_graphs: int, seeds_per_graph: int, horizon: int, base_seed: int = 0
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """v1 Fig 4: Dec_UCB on ER(50, 0.5) graphs of each kind in :data:`ER_KINDS` and 50
    independent UCB1 agents, M = 10, heterogeneous rewards (a draw per graph).

    Graph ``k`` of a kind is ``erdos_renyi(50, 0.5, kind, seed=base_seed + k)``; its arms use
    seed ``base_seed + 1001 + k`` and its runs seeds ``base_seed + k S + 0..S-1``. Runs are the
    ``G x S`` (graph, seed) pairs. The worst Dec agent and the best UCB1 agent are agent
    indices chosen after averaging the final value over runs (per metric), as the authors'
    code does; with several graphs an index is a different node in each.

    Returns:
        ``(data, parameters)``: data ``t [R]`` and, per kind ``k`` and metric ``m`` (``regret``,
        ``parity``): ``k_m_dec_worst``, ``k_m_dec_agent_mean``, ``k_m_ucb1_best``,
        ``k_m_ucb1_agent_mean`` ``[G*S, R]`` and the final values per agent ``k_m_dec_final``,
        ``k_m_ucb1_final`` ``[G*S, 50]``; ``k_adjacency [G, 50, 50]``; ``means [G, 10]``.
    """
    t = None
    data: dict[str, np.ndarray] = {}
    described: dict[str, Any] = {}
    systems = [_er_runs(k, seeds_per_graph, horizon, base_seed) for k in range(num_graphs)]
    base_runs = [r["ucb1"] for r in systems]
    for kind in ER_KINDS:
        dec_runs = [r[kind] for r in systems]
        t = dec_runs[0]["t"]
        adjs = [er50_graph(kind, k, base_seed) for k in range(num_graphs)]
        data[f"{kind}_adjacency"] = np.stack(adjs).astype(np.int8)
        picks = {}
        for metric in ("regret", "parity"):
            dec = np.concatenate([r[metric] for r in dec_runs])             # [G*S, R, 50]
            base = np.concatenate([r[metric] for r in base_runs])
            worst = int(np.argmax(dec[:, -1, :].mean(axis=0)))
            best = int(np.argmin(base[:, -1, :].mean(axis=0)))
            data[f"{kind}_{metric}_dec_worst"] = dec[:, :, worst]
            data[f"{kind}_{metric}_dec_agent_mean"] = dec.mean(axis=2)
            data[f"{kind}_{metric}_ucb1_best"] = base[:, :, best]
            data[f"{kind}_{metric}_ucb1_agent_mean"] = base.mean(axis=2)
            data[f"{kind}_{metric}_dec_final"] = dec[:, -1, :]
            data[f"{kind}_{metric}_ucb1_final"] = base[:, -1, :]
            picks[metric] = {"worst_dec_agent": worst, "best_ucb1_agent": best}
        described[kind] = {
            "theorem": ER_KINDS[kind], "variant": f"Dec_UCB, {THEOREM_TEXT[ER_KINDS[kind]]}",
            "graph_seeds": [base_seed + k for k in range(num_graphs)],
            "selected_agents": picks,
            "graphs": [_graph_description(a) | {"min_neighbourhood": int(a.sum(axis=1).min()),
                                               "max_neighbourhood": int(a.sum(axis=1).max())}
                       for a in adjs]}
    described["weak"]["construction"] = (
        "substitute (decentral.graphs.erdos_renyi, kind='weak'): a strongly connected ER(50, "
        "0.5) draw with every out-edge of one random agent deleted (nobody hears it); plain "
        "rejection, the authors' method, succeeds with probability ~1e-13 at N = 50")
    data["t"] = t
    data["means"] = np.stack([v1_arms(50, 10, er50_arms_seed(k, base_seed))[1]
                              for k in range(num_graphs)])
    runs = num_graphs * seeds_per_graph
    parameters = {
        "num_agents": 50, "num_arms": 10, "p": 0.5, "horizon": horizon,
        "num_graphs": num_graphs, "seeds_per_graph": seeds_per_graph, "runs": runs,
        "seeds": seed_list(base_seed, runs),
        "arms": "heterogeneous: each (agent, arm) uniformly from " + ", ".join(V1_FAMILIES)
                + "; mu_k ~ U[0.05, 0.95]; one draw per graph index, shared by the three kinds "
                  "and that graph's UCB1 run",
        "arms_seeds": [er50_arms_seed(k, base_seed) for k in range(num_graphs)],
        "run_as": BLOCK_TEXT.format(n=200, blocks="strong, undirected, weak graph of one "
                                                  "index, 50 UCB1 agents"),
        "selection": "worst Dec agent / best UCB1 agent: the agent index with the highest / "
                     "lowest final value averaged over runs, per metric (the authors' code)",
        "paper_setup": "a fresh graph and means per experiment, 100 experiments",
        "band": "+-1 std over runs (graph x seed)", "kinds": described, "metrics": METRICS}
    return data, parameters


_KIND_TEXT = {"strong": "strongly connected ER(50, 0.5), Theorem 1 rule",
              "undirected": "connected undirected ER(50, 0.5), Theorem 2 rule",
              "weak": "weakly connected ER(50, 0.5) [SUBSTITUTE], Theorem 1 rule"}
_METRIC_TEXT = {"regret": "standard pseudo-regret",
                "parity": "paper parity metric (running average, not a regret)"}


def draw_er50(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw v1 Fig 4 from :func:`er50_data`'s output: one column per kind of graph, the
    pseudo-regret above the paper's plotting metric; returns ``(fig, axes)``."""
    kinds = list(parameters["kinds"])
    fig, axes = plt.subplots(2, len(kinds), figsize=(5.6 * len(kinds), 10.4), squeeze=False,
                             layout="constrained")
    t = data["t"]
    letters = "abc"
    handles = []
    for c, kind in enumerate(kinds):
        info = parameters["kinds"][kind]
        for r, metric in enumerate(("regret", "parity")):
            ax = axes[r, c]
            picks = info["selected_agents"][metric]
            lines = [
                band(ax, t, data[f"{kind}_{metric}_dec_worst"], color="tab:red",
                     label="worst Dec_UCB agent (index in the panel title)"),
                band(ax, t, data[f"{kind}_{metric}_ucb1_best"], color="black", linestyle="--",
                     label="best UCB1 agent (index in the panel title)"),
                band(ax, t, data[f"{kind}_{metric}_dec_agent_mean"], color="tab:red",
                     linestyle="-.", linewidth=1.0, alpha=0.0,
                     label="Dec_UCB, mean over agents (no band)"),
                band(ax, t, data[f"{kind}_{metric}_ucb1_agent_mean"], color="0.4",
                     linestyle="-.", linewidth=1.0, alpha=0.0,
                     label="UCB1, mean over agents (no band)")]
            handles = handles or lines
            ax.set_title(f"({letters[c]}) {_KIND_TEXT[kind]}\n{_METRIC_TEXT[metric]}\nworst "
                         f"Dec_UCB agent {picks['worst_dec_agent']}, best UCB1 agent "
                         f"{picks['best_ucb1_agent']}", fontsize=9)
            ax.set_xlabel(TIME_LABEL)
            ax.set_ylabel(REGRET_LABEL if metric == "regret" else PARITY_LABEL)
            ax.grid(alpha=0.3)
    outside_legend(fig, [*handles, band_handle("over runs (graph x seed)")], ncols=5)
    fig.suptitle(
        f"v1 Fig 4: N=50, M=10, heterogeneous rewards, T={parameters['horizon']}; "
        f"{parameters['num_graphs']} graph(s) per kind x {parameters['seeds_per_graph']} seeds "
        f"= {parameters['runs']} runs (the paper: a fresh graph and means in each of 100 "
        "experiments)\nworst Dec_UCB agent / best UCB1 agent: the agent index with the highest "
        "/ lowest final value averaged over runs (conservative for Dec); curves: mean over "
        "runs\n(c) is a substitute: rejection cannot produce weakly-but-not-strongly connected "
        "ER(50, 0.5) graphs ($P \\approx 10^{-13}$); here a strongly connected draw with one "
        "agent's out-edges deleted", fontsize=10)
    return fig, axes


def compute_er50(ctx: FigureContext) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """:func:`er50_data` at the size of ``ctx`` (graphs per kind x seeds per graph, T): tiny
    1 x 4, 100; quick 1 x 24, 1000; full 10 x 10, 1000."""
    return er50_data(num_graphs=ctx.pick(tiny=1, quick=1, full=10),
                     seeds_per_graph=ctx.pick(tiny=4, quick=24, full=10),
                     horizon=ctx.pick(tiny=100, quick=1000, full=1000), base_seed=ctx.base_seed)
