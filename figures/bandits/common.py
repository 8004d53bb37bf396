"""Pieces shared by the bandit figures: runs to curves, the mean ±1 std band and its legend
entry, the graph drawing, and the texts (citations, axis labels, descriptions) they repeat.

Every curve is the **standard pseudo-regret** ``R_i(t) = sum_k Delta_{i,k} (n_{i,k}(t) - 1)``
(the ``t = 0`` initialisation round not charged, :func:`decentral.bandits.evaluate`) unless a
panel says otherwise, drawn as the mean over runs with a ±1 standard deviation band.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
from matplotlib.patches import Patch

from decentral.bandits import evaluate

__all__ = [
    "V1", "TAC", "THEOREM_TEXT", "THEOREM_MATH", "METRICS", "TIME_LABEL", "REGRET_LABEL",
    "PARITY_LABEL", "seed_list", "finite", "evaluate_curves", "band", "band_handle",
    "outside_legend", "draw_graph",
]

V1 = "Zhu, Mulle, Smith, Liu, arXiv 2111.10933 v1 (NeurIPS 2021 submission)"
"""Citation of the first version (the ``paper`` string of its figures)."""

TAC = "Zhu, Mulle, Smith, Liu, Koppel, IEEE TAC 70(7) 2025 (arXiv 2111.10933 v4)"
"""Citation of the journal version."""

THEOREM_TEXT = {1: "Theorem 1: flocking weights, width sqrt(4 ln t / (3 n))",
                2: "Theorem 2: Metropolis weights, width sqrt(3 ln t / (|N_i| n))"}
"""The Dec_UCB rule of each theorem, as saved in the figures' parameters (plain text)."""

THEOREM_MATH = {1: r"Theorem 1: flocking weights, width $\sqrt{4 \ln t\,/\,(3 n)}$",
                2: r"Theorem 2: Metropolis weights, width $\sqrt{3 \ln t\,/\,(|N_i|\, n)}$"}
"""The same, as drawn (mathtext)."""

METRICS = {"regret": "standard pseudo-regret R_i(t)",
           "parity": "paper parity metric (authors' running average, not a regret)"}
"""The two metrics of the first version's figures, as saved in their parameters."""

TIME_LABEL = "time $t$ (rounds after the initialisation round)"
"""The x label of every bandit curve."""

REGRET_LABEL = "pseudo-regret $R_i(t)$"
"""The y label of a per-agent pseudo-regret panel."""

PARITY_LABEL = r"paper parity metric $A_i(t)$ (not a regret)"
"""The y label of a panel in the first version's plotting metric
``A_i(t) = 2 mu* + sum_{u <= t} (mu* - S_i(u) / (u + 2))`` (:func:`decentral.bandits.evaluate`,
``running_average=True``)."""


def seed_list(start: int, count: int) -> list[int]:
    """``[start, start + 1, ..., start + count - 1]``."""
    return list(range(start, start + count))


def finite(name: str, x) -> np.ndarray:
    """``x`` as float64, refused (``FloatingPointError``) when any value is not finite."""
    x = np.asarray(x, np.float64)
    if not np.all(np.isfinite(x)):
        raise FloatingPointError(f"{name}: non-finite values in the recorded curves.")
    return x


def evaluate_curves(policy, arms, horizon, seeds, *, num_agents=None, parity=False, **options
                    ) -> dict[str, np.ndarray]:
    """Run :func:`decentral.bandits.evaluate` and keep the curves: ``{"t": [R], "regret":
    [P?, S, R, N]}`` and, with ``parity``, ``"parity"`` (the first version's plotting metric)."""
    res = evaluate(policy, arms, horizon, seeds, num_agents=num_agents,
                   running_average=parity, progress=False, **options)
    out = {"t": np.asarray(res.record_steps),
           "regret": finite(policy.name, res.regret_path)}
    if parity:
        out["parity"] = finite(policy.name, res.running_average_regret)
    return out


def band(ax, t, runs, *, label=None, color=None, linestyle="-", linewidth=1.5, alpha=0.15):
    """Mean over runs (axis 0) of ``runs [S, R]`` with a ±1 std band (``alpha = 0``: no band);
    returns the line."""
    runs = finite(str(label), runs)
    mean, sd = runs.mean(axis=0), runs.std(axis=0)
    (line,) = ax.plot(t, mean, label=label, color=color, linestyle=linestyle,
                      linewidth=linewidth)
    if runs.shape[0] > 1 and alpha > 0:
        ax.fill_between(t, mean - sd, mean + sd, color=line.get_color(), alpha=alpha,
                        linewidth=0)
    return line


def band_handle(over: str) -> Patch:
    """The legend entry explaining the shaded bands: ``"shaded: ±1 std over <over>"``."""
    return Patch(facecolor="0.55", alpha=0.35, linewidth=0, label=rf"shaded: $\pm$1 std {over}")


def outside_legend(fig, handles: list, *, ncols: int, fontsize: float = 8.5) -> Any:
    """One legend for the whole figure, below the panels (constrained layout makes room), so
    that no legend covers data."""
    return fig.legend(handles=handles, loc="outside lower center", ncols=ncols,
                      fontsize=fontsize, frameon=False)


def draw_graph(ax, adj: np.ndarray, directed: bool, colors) -> None:
    """Draw ``adj`` (``adj[i, j]``: ``i`` receives from ``j``) on a circle, agent ``i`` in
    ``colors[i]``; directed graphs with an arrow ``j -> i``."""
    n = adj.shape[0]
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((j, i) for i in range(n) for j in range(n) if i != j and adj[i, j])
    pos = nx.circular_layout(G)
    nx.draw_networkx_nodes(G, pos, ax=ax, node_color=colors[:n], node_size=520)
    nx.draw_networkx_labels(G, pos, ax=ax, font_color="white", font_weight="bold")
    if directed:
        nx.draw_networkx_edges(G, pos, ax=ax, arrows=True, arrowsize=14, node_size=520,
                               connectionstyle="arc3,rad=0.12", edge_color="0.35")
    else:
        nx.draw_networkx_edges(G, pos, ax=ax, edge_color="0.35", node_size=520)
    ax.set_axis_off()
    ax.margins(0.12)

