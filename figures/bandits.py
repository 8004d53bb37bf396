"""Figures of the decentralized-bandit paper: Zhu, Mulle, Smith, Liu, arXiv 2111.10933 — the first
version (v1, NeurIPS 2021 submission: Dec_UCB, Theorems 1-2) and the journal version (IEEE TAC
70(7) 2025, arXiv v4: Dec-UCB1(beta), Dec-KL-UCB(varsigma)).

Unless a panel says otherwise, every curve is the **standard pseudo-regret**
``R_i(t) = sum_k Delta_{i,k} (n_{i,k}(t) - 1)`` (the ``t = 0`` initialisation round not charged,
:func:`decentral.bandits.evaluate`), the mean over runs with a **±1 standard deviation band over
runs**. Rewards are independent across agents (counter-based streams per agent and arm). All
policies use the library defaults (the papers' methods, ``ln t`` in the paper's clock); the
authors' code options (``ln(t + 1)``, the first version's max-consensus bug, the KL index floor
``+0.1``) are not used.

**First version** (heterogeneous rewards: each (agent, arm) follows a Beta law with sd 0.05, a
Bernoulli law or a normal truncated to [0, 1] with sd 0.05 and **mean** ``mu_k``, drawn uniformly;
``mu_k ~ U[0.05, 0.95]``; T = 1000; baseline N independent UCB1 agents facing the same laws):

* ``bandits.v1_fig1_strongly``, ``bandits.v1_fig2_undirected``, ``bandits.v1_fig3_weakly`` —
  the authors' 6-agent graphs (:func:`decentral.bandits.paper_graph`), M = 6; Dec_UCB with
  flocking weights and the Theorem-1 width for ``strongly`` and ``weakly`` (as the authors'
  simulator runs them), Metropolis weights and the Theorem-2 width for ``undirected``. Panels:
  the graph (an arrow ``j -> i``: i receives from j), every agent's curve with the best UCB1
  agent dashed, and the same in the authors' running-average plotting metric, labelled
  "paper parity metric" (``running_average=True`` of :func:`~decentral.bandits.evaluate`; not
  a regret). One draw of means and families, shared by the three figures and their baseline
  (the paper redraws both every experiment). Sizes: quick 40 seeds, ``--full`` 100.
* ``bandits.v1_fig4_er50`` — N = 50, M = 10, ER(50, 0.5) strongly connected / connected
  undirected / weakly-but-not-strongly connected (a, b, c), both metrics: the worst Dec_UCB
  agent against the best UCB1 agent (agent indices chosen after averaging over runs, as the
  authors' code does; conservative for Dec), and the means over agents dash-dotted. The weak
  graphs are the **substitute construction** of :func:`decentral.graphs.erdos_renyi` (a
  strongly connected draw with every out-edge of one random agent deleted): plain rejection,
  the authors' method, succeeds with probability ~1e-13 at N = 50. The paper draws a graph and
  means per experiment (100 experiments); each graph costs a compile here, so quick runs
  **1 graph** per kind x 24 seeds and ``--full`` **10 graphs** per kind x 10 seeds, each graph
  index with its own draw of means and families (shared by the three kinds and the UCB1 run).

* ``bandits.v1_fig11_two_neighbors``, ``bandits.v1_fig12_strongly_fixed_means``,
  ``bandits.v1_fig13_undirected_path``, ``bandits.v1_fig14_weakly_path`` — the appendix's
  "selected graphs" (the authors' README commands): the 6-cycle with the chord 0-2 and the path
  0-1-2-3-4-5 (Metropolis weights, Theorem-2 width), ``strongly`` (flocking, Theorem 1) with the
  fixed means ``(0.10, 0.25, 0.45, 0.65, 0.75, 0.90)``, and the directed path 0->1->...->5
  (flocking, as the authors run ``weak`` graphs) with ``mu_k ~ U[0.05, 0.95]`` (the authors redraw
  them every experiment; one draw here); the same three families, M = 6, T = 1000, both metrics,
  the best of 6 UCB1 agents dashed. Figs 11-13 share one draw of families and their UCB1 agents;
  Fig 14 runs two copies of its graph and UCB1 agents (own streams), so its runs are copy x
  seed. Sizes as Figs 1-3.

**One compile per system.** Compiling the heterogeneous sampler (the Beta law's gamma sampler)
costs about 10 s, so the first version's runs are built as one block-diagonal system
(:func:`block_system`): Figs 1-3 run the three graphs and six isolated agents as 24 agents,
Fig 4 the three ER graphs of one index and 50 isolated agents as 200 agents, in one
``dec_ucb(W, theorem=1)`` with one exploration constant per agent (width ``sqrt(c_i ln t / n)``):
``4/3`` with flocking weights (Theorem 1), ``3 / |N_i|`` with Metropolis weights (Theorem 2's
``sqrt(3 ln t / (|N_i| n))``), ``2`` for the isolated agents, which makes them UCB1 exactly
(``W = [[1]]``: ``m = n``, forced exploration never fires, ``z = xbar``). Blocks share no edge,
so each runs exactly its own algorithm; ``tests/test_figures.py`` checks both reductions pull
for pull. Agent ``b N + i`` of the system faces agent i's laws with its own reward streams, so
the first version's Dec and UCB1 curves are not paired on the same samples (the journal
version's are). Every six-agent system has 24 agents (Figs 1-3, 11-13, and Fig 14's two copies)
and the sampler evaluates the three families whichever are drawn, so they share one program.

**Journal version** (the first connected ER(20, 0.5) graphs, networkx seeds 0, 1, ...
(:func:`proofs_checks.bandits.v4_graphs`), M = 5, ``mu = (0.2, 0.3, 0.4, 0.5, 0.6)``, normals
truncated to [0, 1] with location ``mu_k`` and sd 0.1 as in the authors' code; the
single-agent baselines run on the same seeds, so they see the same samples; curves are the
**agent-averaged** regret; the three values of beta / varsigma run in one compile per graph by
a params sweep):

* ``bandits.tac_fig1_dec_kl_ucb`` — Dec-KL-UCB, varsigma in {1, 0.1, 0.01}, vs KL-UCB
  (``c = 0``);
* ``bandits.tac_fig2_dec_ucb1`` — Dec-UCB1, beta in {1, 0.1, 0.01}, vs UCB1;
* ``bandits.tac_fig3_kl_vs_ucb1`` — Dec-KL-UCB(varsigma = v) vs Dec-UCB1(beta = v), one panel
  per v. Figs 1-3 share their runs. Quick: 1 graph x 20 seeds, T = 2000; ``--full``: 10 graphs
  x 10 seeds, T = 10^4 (the paper: 100 runs with 100 graphs, T = 10^4);
* ``bandits.tac_fig4_dec_kl_ucb_beta``, ``bandits.tac_fig5_dec_ucb1_beta``,
  ``bandits.tac_fig6_kl_vs_ucb1_beta`` — the same three comparisons with ``Beta(mu_k, 1 - mu_k)``
  rewards (mean ``mu_k``, variance ``mu_k (1 - mu_k) / 2``, U-shaped; :func:`v4_beta_arms`),
  same sizes. At the tiny size Figs 1-6 share four compiled programs (a sampler evaluating
  both laws; the same rewards), elsewhere each law has its own;
* ``bandits.tac_figs8_9_k6_c6`` — K6 (agents 0-5) and a 6-cycle (6-11), disconnected, per-agent
  beta (Dec-UCB1) and varsigma (Dec-KL-UCB) ``(1, 1, 1, 0.01, 0.01, 0.01)`` in each component:
  the four groups' mean regret. Which of the two the paper numbers 8 and which 9 is not known
  here. Quick: 50 seeds, T = 2000; ``--full``: 100 seeds, T = 10^4 (the paper's size).

Run time here (2 CPU cores, shared with other jobs while measured): quick ``python -m figures
--only bandits`` about 3 minutes (182 s for the fifteen figures, load average 2-3.5; 12
compiles: one for the 24-agent first-version systems, one for Fig 4, the four policies of
journal Figs 1-3 and again for Figs 4-6 (Beta rewards: 79 s of the total), two for Figs 8-9);
``--full`` was about 15 minutes for the eight figures before Figs 4-6 and 11-14 were added
(860 s: journal Figs 1-3 600 s, v1 Fig 4 175 s, Figs 8-9 80 s, v1 Figs 1-3 15 s), 1.8 GB of
memory at most; not measured since.
"""

from __future__ import annotations

import functools
from typing import Any

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np

import decentral.graphs as g
from decentral.bandits import (
    DecKLUCBParams,
    DecUCB1Params,
    DecUCBParams,
    bernoulli,
    beta_distribution,
    dec_kl_ucb,
    dec_ucb,
    dec_ucb1,
    evaluate,
    heterogeneous,
    kl_ucb,
    paper_graph,
    paper_graph_kind,
    truncated_normal,
    ucb1,
)
from figures.registry import FigureContext, FigureOutput, figure
from proofs_checks.bandits import (
    V4_MEANS,
    V4_SWEEP,
    random_means,
    small_graphs,
    v4_arms,
    v4_graphs,
)

__all__ = [
    "V1_SD", "V1_FAMILIES", "V1_GRAPHS", "V1_SELECTED", "V1_FIXED_MEANS", "ER_KINDS",
    "SMALL_GROUPS", "TAC_REWARDS",
    "v1_arms", "dec_ucb_block", "ucb1_block", "block_system", "run_blocks",
    "v1_fixed_data", "v1_selected_data", "draw_v1_fixed", "er50_data", "draw_er50",
    "v4_beta_arms",
    "tac_data", "draw_tac_sweep", "draw_tac_kl_vs_ucb1", "small_graph_data", "draw_small_graphs",
]

V1 = "Zhu, Mulle, Smith, Liu, arXiv 2111.10933 v1 (NeurIPS 2021 submission)"
TAC = "Zhu, Mulle, Smith, Liu, Koppel, IEEE TAC 70(7) 2025 (arXiv 2111.10933 v4)"

V1_SD = 0.05
"""Standard deviation of the Beta and truncated-normal arms of the first version."""

V1_FAMILIES = ("Beta (sd 0.05)", "Bernoulli", "truncated normal (sd 0.05, mean mu_k)")
"""The families a first-version (agent, arm) pair is drawn from, by index."""

V1_GRAPHS = {"strongly": {"theorem": 1, "figure": 1},
             "undirected": {"theorem": 2, "figure": 2},
             "weakly": {"theorem": 1, "figure": 3}}
"""The first version's 6-agent graphs, with the theorem whose weights and width Dec_UCB uses
(the authors' simulator: flocking for strong and weak graphs, Metropolis for undirected ones)."""

ER_KINDS = {"strong": 1, "undirected": 2, "weak": 1}
"""Kinds of ER(50, 0.5) graph of v1 Fig 4 (a, b, c), with the theorem Dec_UCB runs."""

SMALL_GROUPS = {"K6, beta=1": [0, 1, 2], "K6, beta=0.01": [3, 4, 5],
                "C6, beta=1": [6, 7, 8], "C6, beta=0.01": [9, 10, 11]}
"""The four agent groups of the journal version's K6 + C6 figures."""

V1_SELECTED = {"undirected_two_neighbors": {"theorem": 2, "figure": 11},
               "strongly": {"theorem": 1, "figure": 12},
               "undirected_path": {"theorem": 2, "figure": 13},
               "weakly_path": {"theorem": 1, "figure": 14}}
"""The first version's appendix "selected graphs" (Figs 11-14) with the theorem whose weights
and width Dec_UCB uses (the authors' simulator: ``undirected`` for the two undirected graphs,
``strong`` for ``strongly``, ``weak`` for ``weakly_path``)."""

V1_FIXED_MEANS = (0.10, 0.25, 0.45, 0.65, 0.75, 0.90)
"""The means of the first version's Figs 11-13 (the authors' command line ``-m``)."""

_V1_ARMS_OFFSET = 1000          # arms seeds: base_seed + offset (+ graph index for Fig 4)
_V1_SELECTED_OFFSET = 1100      # Figs 11-13 families: base_seed + offset; Fig 14: + 1
_THEOREM_TEXT = {1: "Theorem 1: flocking weights, width sqrt(4 ln t / (3 n))",
                 2: "Theorem 2: Metropolis weights, width sqrt(3 ln t / (|N_i| n))"}
_BLOCK_TEXT = ("one block-diagonal system of {n} agents ({blocks}) run by dec_ucb(W, "
               "theorem=1) with per-agent exploration constants: 4/3 (flocking, Theorem 1), "
               "3/|N_i| (Metropolis, Theorem 2), 2 (isolated agents = UCB1); blocks share no "
               "edge and have their own reward streams")
_METRICS = {"regret": "standard pseudo-regret R_i(t)",
            "parity": "paper parity metric (authors' running average, not a regret)"}


# ---------------------------------------------------------------------------------------------
# shared pieces
# ---------------------------------------------------------------------------------------------

def v1_arms(num_agents: int, num_arms: int, seed: int, *, copies: int = 1, means=None):
    """The first version's heterogeneous arms: ``mu_k ~ U[0.05, 0.95]``
    (:func:`proofs_checks.bandits.random_means` of ``seed``), or the given ``means``, and each
    (agent, arm) family drawn uniformly from :data:`V1_FAMILIES` by
    ``numpy.random.default_rng([seed, 1])``.

    The sampler evaluates the three families whichever are drawn
    (:meth:`~decentral.bandits.Arms.with_extra_families`; the rewards are the same), so every
    first-version system of the same size runs with one compiled program.

    Args:
        num_agents, num_arms: N and M of one system.
        seed: integer seed of the means (unless given) and of the family draw.
        copies: number of blocks of a :func:`block_system`: agent ``b N + i`` faces the laws of
            agent ``i`` (its own reward streams).
        means: None (drawn), or the ``[M]`` means (the appendix's selected-graph figures).

    Returns:
        ``(arms over copies * N agents, means [M], choice int [N, M])``.
    """
    mu = random_means(num_arms, seed) if means is None else np.asarray(means, np.float64)
    families = [beta_distribution(mu, V1_SD), bernoulli(mu),
                truncated_normal(mu, V1_SD, parameterization="mean")]
    choice = np.random.default_rng([seed, 1]).integers(0, len(families),
                                                       size=(num_agents, num_arms))
    arms = heterogeneous(families, np.tile(choice, (copies, 1)))
    return arms.with_extra_families(["beta", "bernoulli", "truncated_normal"]), mu, choice


def dec_ucb_block(adj: np.ndarray, theorem: int) -> tuple[np.ndarray, np.ndarray]:
    """``(weights, exploration constants)`` of Dec_UCB on ``adj`` as a block of
    :func:`block_system`: Theorem 1, flocking weights and ``c_i = 4/3``; Theorem 2, Metropolis
    weights and ``c_i = 3 / |N_i|`` (its width ``sqrt(3 ln t / (|N_i| n))``). ``adj`` is a
    boolean adjacency with self-loops (refused without them, as by every graph argument of
    the library; ``decentral.graphs.add_self_loops`` adds them)."""
    adj = np.asarray(adj)
    if theorem == 1:
        return g.row_stochastic(adj), np.full(len(adj), 4.0 / 3.0)
    if theorem == 2:
        return g.metropolis(adj), 3.0 / adj.sum(axis=1)
    raise ValueError(f"theorem must be 1 or 2; got {theorem!r}.")


def ucb1_block(num_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """N isolated agents with ``c = 2`` as a block of :func:`block_system`: UCB1 exactly (with
    ``W = [[1]]`` max-consensus keeps ``m = n``, forced exploration never fires, ``z = xbar``
    and the width is ``sqrt(2 ln t / n)``; spec of the baselines)."""
    return np.eye(num_agents), np.full(num_agents, 2.0)


def block_system(blocks) -> tuple[np.ndarray, np.ndarray, list[slice]]:
    """Disconnected blocks ``[(weights [n_b, n_b], constants [n_b]), ...]`` as one system:
    the block-diagonal weights ``[N, N]``, the per-agent exploration constants ``[N]`` and each
    block's agent slice. Run as ``dec_ucb(W, theorem=1)`` with ``DecUCBParams(c)`` (width
    ``sqrt(c_i ln t / n)``), every block is exactly its own algorithm: no block hears another.

    Example:
        >>> W, c, where = block_system([ucb1_block(2), ucb1_block(1)])
        >>> W.shape, c.tolist(), where[1]
        ((3, 3), [2.0, 2.0, 2.0], slice(2, 3, None))
    """
    weights = [np.asarray(w, np.float64) for w, _ in blocks]
    sizes = [len(w) for w in weights]
    W = np.zeros((sum(sizes), sum(sizes)))
    where, start = [], 0
    for w, n in zip(weights, sizes, strict=True):
        W[start:start + n, start:start + n] = w
        where.append(slice(start, start + n))
        start += n
    c = np.concatenate([np.broadcast_to(np.asarray(k, np.float64), (n,))
                        for (_, k), n in zip(blocks, sizes, strict=True)])
    return W, c, where


def run_blocks(blocks: dict[str, tuple[np.ndarray, np.ndarray]], arms, horizon: int, seeds
               ) -> dict[str, dict[str, np.ndarray]]:
    """Run the :func:`block_system` of ``blocks`` (name -> block) in one compile, both
    metrics; returns name -> ``{"t", "regret", "parity"}`` with ``[S, R, n_b]`` curves."""
    W, c, where = block_system(list(blocks.values()))
    res = _evaluate(dec_ucb(W, theorem=1), arms, horizon, seeds, params=DecUCBParams(c),
                    parity=True)
    return {name: {"t": res["t"], "regret": res["regret"][..., sl],
                   "parity": res["parity"][..., sl]}
            for name, sl in zip(blocks, where, strict=True)}


def _seeds(start: int, count: int) -> list[int]:
    return list(range(start, start + count))


def _finite(name: str, x) -> np.ndarray:
    x = np.asarray(x, np.float64)
    if not np.all(np.isfinite(x)):
        raise FloatingPointError(f"{name}: non-finite values in the recorded curves.")
    return x


def _band(ax, t, runs, *, label=None, color=None, linestyle="-", linewidth=1.5, alpha=0.15):
    """Mean over runs (axis 0) of ``runs [S, R]`` with a ±1 std band; returns the line."""
    runs = _finite(str(label), runs)
    mean, sd = runs.mean(axis=0), runs.std(axis=0)
    (line,) = ax.plot(t, mean, label=label, color=color, linestyle=linestyle,
                      linewidth=linewidth)
    if runs.shape[0] > 1:
        ax.fill_between(t, mean - sd, mean + sd, color=line.get_color(), alpha=alpha,
                        linewidth=0)
    return line


def _evaluate(policy, arms, horizon, seeds, *, num_agents=None, parity=False, **options
              ) -> dict[str, np.ndarray]:
    res = evaluate(policy, arms, horizon, seeds, num_agents=num_agents,
                   running_average=parity, progress=False, **options)
    out = {"t": np.asarray(res.record_steps),
           "regret": _finite(policy.name, res.regret_path)}
    if parity:
        out["parity"] = _finite(policy.name, res.running_average_regret)
    return out


# ---------------------------------------------------------------------------------------------
# v1 Figs 1-3: the 6-agent graphs
# ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _v1_runs(num_seeds: int, horizon: int, base_seed: int):
    """The three 6-agent graphs and 6 UCB1 agents: one 24-agent block system, one compile."""
    blocks = {name: dec_ucb_block(paper_graph(name), spec["theorem"])
              for name, spec in V1_GRAPHS.items()}
    blocks["ucb1"] = ucb1_block(6)
    arms, _, _ = v1_arms(6, 6, base_seed + _V1_ARMS_OFFSET, copies=len(blocks))
    return run_blocks(blocks, arms, horizon, _seeds(base_seed, num_seeds))


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
    _, mu, choice = v1_arms(6, 6, base_seed + _V1_ARMS_OFFSET)
    data = {"t": dec["t"], "dec_regret": dec["regret"], "dec_parity": dec["parity"],
            "ucb1_regret": base["regret"], "ucb1_parity": base["parity"],
            "adjacency": adj.astype(np.int8), "means": mu, "family_choice": choice}
    theorem = V1_GRAPHS[name]["theorem"]
    parameters = {
        "graph": name, "theorem": theorem, "variant": f"Dec_UCB, {_THEOREM_TEXT[theorem]}",
        "num_agents": 6, "num_arms": 6, "horizon": horizon, "num_seeds": num_seeds,
        "seeds": _seeds(base_seed, num_seeds),
        "neighbourhood_sizes": adj.sum(axis=1).tolist(),
        "arms": "heterogeneous: each (agent, arm) uniformly from " + ", ".join(V1_FAMILIES)
                + "; mu_k ~ U[0.05, 0.95]; one draw shared by Figs 1-3 and the baseline",
        "arms_seed": base_seed + _V1_ARMS_OFFSET, "families": list(V1_FAMILIES),
        "baseline": "6 independent UCB1 agents (width sqrt(2 ln t / n)) facing the same laws "
                    "(own reward streams); the best agent (lowest mean final value of each "
                    "metric) is drawn",
        "run_as": _BLOCK_TEXT.format(n=24, blocks="strongly, undirected, weakly, 6 UCB1 "
                                                    "agents"),
        "band": "+-1 std over seeds",
        "metrics": _METRICS,
        "figure": V1_GRAPHS[name]["figure"],
        "means_note": "one draw of mu_k ~ U[0.05, 0.95] and of the family per (agent, arm), "
                      "shared with the 6 independent UCB1 agents (the paper redraws both per "
                      "experiment)",
    }
    return data, parameters


def _draw_graph(ax, adj: np.ndarray, directed: bool, colors) -> None:
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


def _runs_text(parameters: dict[str, Any]) -> str:
    copies = parameters.get("copies", 1)
    if copies == 1:
        return f"{parameters['num_seeds']} seeds; mean +-1 std over seeds"
    return (f"{copies} copies x {parameters['num_seeds']} seeds = {parameters['runs']} runs; "
            "mean +-1 std over runs")


def draw_v1_fixed(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw v1 Fig 1, 2 or 3 from :func:`v1_fixed_data`'s output; returns ``(fig, axes)``."""
    colors = plt.get_cmap("tab10").colors
    adj = data["adjacency"].astype(bool)
    name = parameters["graph"]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.4), layout="constrained",
                             gridspec_kw={"width_ratios": [0.75, 1, 1]})
    undirected = paper_graph_kind(name) == "undirected"
    _draw_graph(axes[0], adj, directed=not undirected, colors=colors)
    how = "edges both ways" if undirected else "arrow j -> i: i receives from j"
    axes[0].set_title(f"the authors' '{name}' graph ({how})", fontsize=10)
    t = data["t"]
    deg = adj.sum(axis=1)
    for ax, metric in zip(axes[1:], ("regret", "parity"), strict=True):
        dec, base = data[f"dec_{metric}"], data[f"ucb1_{metric}"]
        for i in range(dec.shape[2]):
            _band(ax, t, dec[:, :, i], label=f"Dec_UCB agent {i} (|N_i|={deg[i]})",
                  color=colors[i], alpha=0.08)
        best = int(np.argmin(base[:, -1, :].mean(axis=0)))
        _band(ax, t, base[:, :, best], label=f"best UCB1 agent ({best})", color="black",
              linestyle="--", linewidth=2.0, alpha=0.08)
        dec_final, base_final = dec[:, -1].mean(axis=0), base[:, -1].mean(axis=0)
        ax.text(0.98, 0.03, f"at T: Dec_UCB agents {dec_final.min():.1f} to "
                f"{dec_final.max():.1f}\nUCB1 agents {base_final.min():.1f} to "
                f"{base_final.max():.1f}", transform=ax.transAxes, ha="right", va="bottom",
                fontsize=8, bbox={"facecolor": "white", "alpha": 0.85, "linewidth": 0})
        ax.set_title(_METRICS[metric], fontsize=10)
        ax.set_xlabel("t (decisions after the initial round)")
        ax.set_ylabel("regret R_i(t)" if metric == "regret" else
                      "2 mu* + sum_u (mu* - running mean reward)")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8, loc="upper left")
    fig.suptitle(
        f"v1 Fig {parameters['figure']}: {parameters['variant']} on the authors' '{name}' "
        f"graph; N=6, M=6, heterogeneous rewards, T={parameters['horizon']}, "
        f"{_runs_text(parameters)}\n"
        f"{parameters['means_note']}; dashed: the best UCB1 agent", fontsize=10)
    return fig, axes


def _v1_figure(ctx: FigureContext, name: str) -> FigureOutput:
    data, parameters = v1_fixed_data(name, num_seeds=ctx.pick(tiny=4, quick=40, full=100),
                                     horizon=ctx.pick(tiny=100, quick=1000, full=1000),
                                     base_seed=ctx.base_seed)
    fig, _ = draw_v1_fixed(data, parameters)
    return FigureOutput(fig, data, parameters)


@figure("bandits.v1_fig1_strongly",
        title="Dec_UCB (Theorem 1, flocking weights) on the authors' 6-agent strongly connected "
              "graph vs the best UCB1 agent, standard pseudo-regret and paper parity metric",
        paper=f"{V1}, Fig 1")
def v1_fig1_strongly(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 4 seeds x T=100, quick 40 x 1000, full 100 x 1000."""
    return _v1_figure(ctx, "strongly")


@figure("bandits.v1_fig2_undirected",
        title="Dec_UCB (Theorem 2, Metropolis weights) on the authors' 6-agent undirected graph "
              "vs the best UCB1 agent, standard pseudo-regret and paper parity metric",
        paper=f"{V1}, Fig 2")
def v1_fig2_undirected(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 4 seeds x T=100, quick 40 x 1000, full 100 x 1000."""
    return _v1_figure(ctx, "undirected")


@figure("bandits.v1_fig3_weakly",
        title="Dec_UCB (flocking weights, Theorem-1 width) on the authors' 6-agent weakly "
              "connected graph (agent 3 a sink) vs the best UCB1 agent, both metrics",
        paper=f"{V1}, Fig 3")
def v1_fig3_weakly(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 4 seeds x T=100, quick 40 x 1000, full 100 x 1000."""
    return _v1_figure(ctx, "weakly")


# ---------------------------------------------------------------------------------------------
# v1 appendix Figs 11-14: selected graphs
# ---------------------------------------------------------------------------------------------

def _v1_selected_group(name: str) -> tuple[tuple[str, ...], int, Any, int]:
    """``(graphs run together, arms seed offset, means, copies)`` of the system holding
    ``name``. Every system has 24 agents, the size (and so the compiled program) of Figs 1-3's:
    Figs 11-13 share the fixed means (three graphs and 6 UCB1 agents); Fig 14 draws its means
    and runs two copies of (weakly_path, 6 UCB1 agents), which doubles its runs."""
    if name == "weakly_path":
        return ("weakly_path",), _V1_SELECTED_OFFSET + 1, None, 2
    return (tuple(n for n in V1_SELECTED if n != "weakly_path"), _V1_SELECTED_OFFSET,
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
    runs = run_blocks(blocks, arms, horizon, _seeds(base_seed, num_seeds))
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
        "graph": name, "theorem": theorem, "variant": f"Dec_UCB, {_THEOREM_TEXT[theorem]}",
        "figure": spec["figure"], "num_agents": 6, "num_arms": 6, "horizon": horizon,
        "num_seeds": num_seeds, "seeds": _seeds(base_seed, num_seeds),
        "copies": copies, "runs": copies * num_seeds,
        "neighbourhood_sizes": adj.sum(axis=1).tolist(),
        "arms": "heterogeneous: each (agent, arm) uniformly from " + ", ".join(V1_FAMILIES)
                + "; " + drawn,
        "fixed_means": fixed, "arms_seed": base_seed + offset, "families": list(V1_FAMILIES),
        "baseline": "6 independent UCB1 agents (width sqrt(2 ln t / n)) facing the same laws "
                    "(own reward streams); the best agent (lowest mean final value of each "
                    "metric) is drawn",
        "run_as": _BLOCK_TEXT.format(n=6 * (len(names) + 1) * copies,
                                     blocks=(", ".join(names) + ", 6 UCB1 agents")
                                     + (f", {copies} copies (facing the same laws with their "
                                        "own reward streams: the runs are copy x seed)"
                                        if copies > 1 else "")),
        "band": "+-1 std over runs (copy x seed)" if copies > 1 else "+-1 std over seeds",
        "metrics": _METRICS,
        "means_note": drawn + "; one draw of the family per (agent, arm), shared with the 6 "
                              "independent UCB1 agents",
        "paper_setup": "the authors' command: Dec_UCB_Simulator.py "
                       f"{paper_graph_kind(name)} 6 heterogeneous -f {name}.adjlist -d "
                       "bernoulli truncnorm beta "
                       + ("-m 0.10 0.25 0.45 0.65 0.75 0.90" if fixed else "--refreshMeans")
                       + " (100 experiments, T = 1000)",
    }
    return data, parameters


def _v1_selected_figure(ctx: FigureContext, name: str) -> FigureOutput:
    data, parameters = v1_selected_data(name, num_seeds=ctx.pick(tiny=4, quick=40, full=100),
                                        horizon=ctx.pick(tiny=100, quick=1000, full=1000),
                                        base_seed=ctx.base_seed)
    fig, _ = draw_v1_fixed(data, parameters)
    return FigureOutput(fig, data, parameters)


@figure("bandits.v1_fig11_two_neighbors",
        title="Dec_UCB (Theorem 2, Metropolis weights) on the authors' 6-cycle with the chord "
              "0-2, fixed means, vs the best UCB1 agent, both metrics",
        paper=f"{V1}, appendix Fig 11")
def v1_fig11_two_neighbors(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 4 seeds x T=100, quick 40 x 1000, full 100 x 1000."""
    return _v1_selected_figure(ctx, "undirected_two_neighbors")


@figure("bandits.v1_fig12_strongly_fixed_means",
        title="Dec_UCB (Theorem 1, flocking weights) on the authors' strongly connected graph, "
              "fixed means, vs the best UCB1 agent, both metrics",
        paper=f"{V1}, appendix Fig 12")
def v1_fig12_strongly_fixed_means(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 4 seeds x T=100, quick 40 x 1000, full 100 x 1000."""
    return _v1_selected_figure(ctx, "strongly")


@figure("bandits.v1_fig13_undirected_path",
        title="Dec_UCB (Theorem 2, Metropolis weights) on the undirected path 0-1-2-3-4-5, "
              "fixed means, vs the best UCB1 agent, both metrics",
        paper=f"{V1}, appendix Fig 13")
def v1_fig13_undirected_path(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 4 seeds x T=100, quick 40 x 1000, full 100 x 1000."""
    return _v1_selected_figure(ctx, "undirected_path")


@figure("bandits.v1_fig14_weakly_path",
        title="Dec_UCB (flocking weights, Theorem-1 width) on the directed path 0->1->...->5, "
              "random means, vs the best UCB1 agent, both metrics",
        paper=f"{V1}, appendix Fig 14")
def v1_fig14_weakly_path(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 4 seeds x T=100, quick 40 x 1000, full 100 x 1000."""
    return _v1_selected_figure(ctx, "weakly_path")


# ---------------------------------------------------------------------------------------------
# v1 Fig 4: ER(50, 0.5)
# ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _er_graph(kind: str, index: int, base_seed: int) -> np.ndarray:
    # cached: a weak graph takes 200 rejected draws (about a second) before its construction
    return g.erdos_renyi(50, 0.5, kind=kind, seed=base_seed + index)


def _er_arms_seed(index: int, base_seed: int) -> int:
    return base_seed + _V1_ARMS_OFFSET + 1 + index


@functools.lru_cache(maxsize=16)
def _er_runs(index: int, num_seeds: int, horizon: int, base_seed: int):
    """Graph ``index`` of every kind and 50 UCB1 agents: one 200-agent block system; seeds
    ``base_seed + index * num_seeds + 0..num_seeds-1``."""
    blocks = {kind: dec_ucb_block(_er_graph(kind, index, base_seed), theorem)
              for kind, theorem in ER_KINDS.items()}
    blocks["ucb1"] = ucb1_block(50)
    arms, _, _ = v1_arms(50, 10, _er_arms_seed(index, base_seed), copies=len(blocks))
    return run_blocks(blocks, arms, horizon, _seeds(base_seed + index * num_seeds, num_seeds))


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
        adjs = [_er_graph(kind, k, base_seed) for k in range(num_graphs)]
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
            "theorem": ER_KINDS[kind], "variant": f"Dec_UCB, {_THEOREM_TEXT[ER_KINDS[kind]]}",
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
    data["means"] = np.stack([v1_arms(50, 10, _er_arms_seed(k, base_seed))[1]
                              for k in range(num_graphs)])
    runs = num_graphs * seeds_per_graph
    parameters = {
        "num_agents": 50, "num_arms": 10, "p": 0.5, "horizon": horizon,
        "num_graphs": num_graphs, "seeds_per_graph": seeds_per_graph, "runs": runs,
        "seeds": _seeds(base_seed, runs),
        "arms": "heterogeneous: each (agent, arm) uniformly from " + ", ".join(V1_FAMILIES)
                + "; mu_k ~ U[0.05, 0.95]; one draw per graph index, shared by the three kinds "
                  "and that graph's UCB1 run",
        "arms_seeds": [_er_arms_seed(k, base_seed) for k in range(num_graphs)],
        "run_as": _BLOCK_TEXT.format(n=200, blocks="strong, undirected, weak graph of one "
                                                     "index, 50 UCB1 agents"),
        "selection": "worst Dec agent / best UCB1 agent: the agent index with the highest / "
                     "lowest final value averaged over runs, per metric (the authors' code)",
        "paper_setup": "a fresh graph and means per experiment, 100 experiments",
        "band": "+-1 std over runs (graph x seed)", "kinds": described, "metrics": _METRICS}
    return data, parameters


def draw_er50(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw v1 Fig 4 from :func:`er50_data`'s output; returns ``(fig, axes)``."""
    kinds = list(parameters["kinds"])
    fig, axes = plt.subplots(2, len(kinds), figsize=(5.4 * len(kinds), 9.2), squeeze=False,
                             layout="constrained")
    t = data["t"]
    letters = "abc"
    for c, kind in enumerate(kinds):
        info = parameters["kinds"][kind]
        for r, metric in enumerate(("regret", "parity")):
            ax = axes[r, c]
            picks = info["selected_agents"][metric]
            _band(ax, t, data[f"{kind}_{metric}_dec_worst"], color="tab:red",
                  label=f"worst Dec_UCB agent ({picks['worst_dec_agent']})")
            _band(ax, t, data[f"{kind}_{metric}_ucb1_best"], color="black", linestyle="--",
                  label=f"best UCB1 agent ({picks['best_ucb1_agent']})")
            _band(ax, t, data[f"{kind}_{metric}_dec_agent_mean"], color="tab:red",
                  linestyle="-.", linewidth=1.0, alpha=0.0, label="Dec_UCB, mean over agents")
            _band(ax, t, data[f"{kind}_{metric}_ucb1_agent_mean"], color="0.4",
                  linestyle="-.", linewidth=1.0, alpha=0.0, label="UCB1, mean over agents")
            kind_text = {"strong": "strongly connected ER(50, 0.5), Theorem 1 rule",
                         "undirected": "connected undirected ER(50, 0.5), Theorem 2 rule",
                         "weak": "weakly connected ER(50, 0.5) [SUBSTITUTE], Theorem 1 rule"}
            metric_text = {"regret": "standard pseudo-regret",
                           "parity": "paper parity metric (running average, not a regret)"}
            ax.set_title(f"({letters[c]}) {kind_text[kind]}\n{metric_text[metric]}",
                         fontsize=9)
            ax.set_xlabel("t (decisions after the initial round)")
            ax.set_ylabel("regret R_i(t)" if metric == "regret" else "paper parity metric")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(
        f"v1 Fig 4: N=50, M=10, heterogeneous rewards, T={parameters['horizon']}; "
        f"{parameters['num_graphs']} graph(s) per kind x {parameters['seeds_per_graph']} seeds "
        f"= {parameters['runs']} runs (the paper: a fresh graph and means in each of 100 "
        "experiments)\nsolid / dashed: the worst Dec_UCB agent / the best UCB1 agent (the agent "
        "index with the highest / lowest final value averaged over runs; conservative for Dec), "
        "mean +-1 std over runs; dash-dotted: means over agents\n(c) is a substitute: "
        "rejection cannot produce weakly-but-not-strongly connected ER(50, 0.5) graphs "
        "(P ~ 1e-13); here a strongly connected draw with one agent's out-edges deleted",
        fontsize=10)
    return fig, axes


@figure("bandits.v1_fig4_er50",
        title="Dec_UCB on ER(50, 0.5) strongly connected / undirected / weakly connected "
              "(substitute construction) graphs: worst Dec agent vs best UCB1 agent, means over "
              "agents, standard pseudo-regret and paper parity metric",
        paper=f"{V1}, Fig 4 (a, b, c)")
def v1_fig4_er50(ctx: FigureContext) -> FigureOutput:
    """Sizes (graphs per kind x seeds per graph, T): tiny 1 x 4, 100; quick 1 x 24, 1000;
    full 10 x 10, 1000."""
    data, parameters = er50_data(num_graphs=ctx.pick(tiny=1, quick=1, full=10),
                                 seeds_per_graph=ctx.pick(tiny=4, quick=24, full=10),
                                 horizon=ctx.pick(tiny=100, quick=1000, full=1000),
                                 base_seed=ctx.base_seed)
    fig, _ = draw_er50(data, parameters)
    return FigureOutput(fig, data, parameters)


# ---------------------------------------------------------------------------------------------
# journal version, Figs 1-3: ER(20, 0.5), beta / varsigma sweeps
# ---------------------------------------------------------------------------------------------

TAC_REWARDS = {"truncnorm": {"figures": (1, 2, 3),
                             "text": "normal truncated to [0, 1], location mu_k, sd 0.1 (the "
                                     "authors' parameterisation; gaps from the true truncated "
                                     "means)"},
               "beta": {"figures": (4, 5, 6),
                        "text": "Beta(mu_k, 1 - mu_k): mean mu_k, variance mu_k (1 - mu_k) / 2, "
                                "U-shaped (moment matching with sd = sqrt(mu_k (1 - mu_k) / 2))"}}
"""Reward laws of the journal version's ER(20, 0.5) figures: truncated normals for Figs 1-3,
Beta(mu_k, 1 - mu_k) for Figs 4-6 (the same three comparisons)."""


def v4_beta_arms():
    """The journal version's Figs 4-6 rewards: ``Beta(mu_k, 1 - mu_k)`` for ``mu_k`` in
    :data:`~proofs_checks.bandits.V4_MEANS` (mean ``mu_k``, variance ``mu_k (1 - mu_k) / 2``),
    by moment matching with ``sd = sqrt(mu_k (1 - mu_k) / 2)``, i.e. ``a = mu_k``,
    ``b = 1 - mu_k`` up to round-off.

    Example:
        >>> arms = v4_beta_arms()
        >>> np.allclose(arms.first[0], V4_MEANS), np.allclose(arms.second[0], 1 - arms.first[0])
        (True, True)
    """
    mu = np.asarray(V4_MEANS, np.float64)
    return beta_distribution(mu, np.sqrt(mu * (1 - mu) / 2))


def _tac_arms(rewards: str, shared_program: bool = False):
    """The arms of ``rewards``; ``shared_program``: a sampler that evaluates both laws (the
    same rewards, :meth:`~decentral.bandits.Arms.with_extra_families`), so Figs 1-3 and 4-6
    run with the same four compiled programs: fewer compiles, slower draws (the tiny size,
    where compiling dominates)."""
    if rewards not in TAC_REWARDS:
        raise ValueError(f"rewards must be one of {list(TAC_REWARDS)}; got {rewards!r}.")
    arms = v4_arms() if rewards == "truncnorm" else v4_beta_arms()
    return arms.with_extra_families(["truncated_normal", "beta"]) if shared_program else arms


@functools.lru_cache(maxsize=4)
def _tac_runs(num_graphs: int, seeds_per_graph: int, horizon: int, base_seed: int,
              rewards: str = "truncnorm", shared_program: bool = False):
    arms = _tac_arms(rewards, shared_program)
    sweep = np.asarray(V4_SWEEP, np.float64)
    kl, u1, t = [], [], None
    for k, adj in enumerate(v4_graphs(num_graphs)):
        seeds = _seeds(base_seed + k * seeds_per_graph, seeds_per_graph)
        a = _evaluate(dec_kl_ucb(adj), arms, horizon, seeds, params=DecKLUCBParams(sweep),
                      sweep=True)
        b = _evaluate(dec_ucb1(adj), arms, horizon, seeds, params=DecUCB1Params(sweep),
                      sweep=True)
        kl.append(a["regret"].mean(axis=-1))                                # [P, S, R]
        u1.append(b["regret"].mean(axis=-1))
        t = a["t"]
    every = _seeds(base_seed, num_graphs * seeds_per_graph)
    base_kl = _evaluate(kl_ucb(), arms, horizon, every, num_agents=20)["regret"].mean(axis=-1)
    base_u1 = _evaluate(ucb1(), arms, horizon, every, num_agents=20)["regret"].mean(axis=-1)
    return {"t": t, "dec_kl_ucb": np.concatenate(kl, axis=1),
            "dec_ucb1": np.concatenate(u1, axis=1), "kl_ucb": base_kl, "ucb1": base_u1}


def tac_data(num_graphs: int, seeds_per_graph: int, horizon: int, base_seed: int = 0,
             rewards: str = "truncnorm", shared_program: bool = False
             ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The journal version's Figs 1-3 (``rewards="truncnorm"``) or 4-6 (``"beta"``, see
    :data:`TAC_REWARDS`): Dec-KL-UCB and Dec-UCB1 swept over
    :data:`~proofs_checks.bandits.V4_SWEEP` on the first ``num_graphs`` connected ER(20, 0.5)
    graphs, and 20 independent KL-UCB / UCB1 agents on the same streams.

    Graph ``k`` runs seeds ``base_seed + k S + 0..S-1``; the baselines (which need no graph)
    run all ``G S`` seeds once. ``shared_program`` (the tiny size) only changes how the
    runs are compiled (:func:`_tac_arms`), not the numbers.

    Returns:
        ``(data, parameters)``: data ``t [R]``, agent-averaged regret ``dec_kl_ucb`` and
        ``dec_ucb1`` ``[P, G*S, R]`` (P = the sweep), ``kl_ucb`` and ``ucb1`` ``[G*S, R]``,
        ``sweep [P]``, ``degrees [G, 20]`` (``|N_i|``).
    """
    arms = _tac_arms(rewards)
    runs = _tac_runs(num_graphs, seeds_per_graph, horizon, base_seed, rewards, shared_program)
    graphs = v4_graphs(num_graphs)
    data = {**runs, "sweep": np.asarray(V4_SWEEP, np.float64),
            "degrees": np.stack([a.sum(axis=1) for a in graphs])}
    total = num_graphs * seeds_per_graph
    parameters = {
        "num_agents": 20, "num_arms": 5, "means": list(V4_MEANS), "horizon": horizon,
        "num_graphs": num_graphs, "seeds_per_graph": seeds_per_graph, "runs": total,
        "seeds": _seeds(base_seed, total), "sweep": list(V4_SWEEP),
        "graphs": "the first connected networkx fast_gnp_random_graph(20, 0.5, seed=s), s = 0, "
                  "1, ... (self-loops added); Metropolis weights",
        "rewards": rewards, "arms": TAC_REWARDS[rewards]["text"],
        "sampler": "evaluates both laws per draw (one program for Figs 1-6, the same rewards)"
                   if shared_program else "the law's own sampler",
        "arms_parameters": {"first": arms.first[0].tolist(), "second": arms.second[0].tolist(),
                            "true_means": arms.means[0].tolist()},
        "figures": dict(zip(("kl", "ucb1", "kl_vs_ucb1"), TAC_REWARDS[rewards]["figures"],
                            strict=True)),
        "variants": {"dec_ucb1": "width (1 + beta) sqrt(3 ln t / (|N_i| n))",
                     "dec_kl_ucb": "Q_i(t) = 3 (1 + varsigma)(ln t + 3 ln ln t) / (2 |N_i|), "
                                   "bisection index, no +0.1 floor",
                     "kl_ucb": "n kl(xbar, q) <= ln t (c = 0), bisection, no +0.1 floor",
                     "ucb1": "width sqrt(2 ln t / n)"},
        "metric": "agent-averaged standard pseudo-regret (the t = 0 round not charged, for "
                  "every policy)",
        "band": "+-1 std over runs (graph x seed)",
        "paper_setup": "100 runs (graph s with run s), T = 10^4",
    }
    return data, parameters


def _tac_title(parameters: dict[str, Any]) -> str:
    law = "Beta(mu_k, 1 - mu_k)" if parameters.get("rewards") == "beta" else \
        "truncated normal sd 0.1"
    return (f"N=20 agents on {parameters['num_graphs']} connected ER(20, 0.5) graph(s) x "
            f"{parameters['seeds_per_graph']} seeds = {parameters['runs']} runs, T="
            f"{parameters['horizon']}\nM=5, mu = {tuple(parameters['means'])}, {law}; "
            "agent-averaged pseudo-regret, mean +-1 std over runs")


def _tac_number(parameters: dict[str, Any], which: str) -> int:
    return parameters.get("figures", {"kl": 1, "ucb1": 2, "kl_vs_ucb1": 3})[which]


def draw_tac_sweep(data: dict[str, np.ndarray], parameters: dict[str, Any], which: str):
    """Journal Fig 1 (``which="kl"``) or Fig 2 (``"ucb1"``) from :func:`tac_data`'s output;
    returns ``(fig, ax)``."""
    if which not in ("kl", "ucb1"):
        raise ValueError(f"which must be 'kl' or 'ucb1'; got {which!r}.")
    dec, base = ("dec_kl_ucb", "kl_ucb") if which == "kl" else ("dec_ucb1", "ucb1")
    symbol = "varsigma" if which == "kl" else "beta"
    fig, ax = plt.subplots(figsize=(8.5, 5.6), layout="constrained")
    t = data["t"]
    colors = ("tab:blue", "tab:orange", "tab:green")
    for p, value in enumerate(data["sweep"]):
        _band(ax, t, data[dec][p], color=colors[p % 3],
              label=f"{'Dec-KL-UCB' if which == 'kl' else 'Dec-UCB1'}, {symbol} = {value:g}")
    _band(ax, t, data[base], color="black", linestyle="--",
          label="KL-UCB (single agent, c = 0)" if which == "kl" else "UCB1 (single agent)")
    ax.set_xlabel("t (decisions after the initial round)")
    ax.set_ylabel("agent-averaged regret (1/N) sum_i R_i(t)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, loc="upper left")
    number = _tac_number(parameters, which)
    ax.set_title(f"journal Fig {number}: {'Dec-KL-UCB' if which == 'kl' else 'Dec-UCB1'} "
                 f"({symbol} swept) vs {'KL-UCB' if which == 'kl' else 'UCB1'}\n"
                 + _tac_title(parameters), fontsize=9)
    return fig, ax


def draw_tac_kl_vs_ucb1(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Journal Fig 3 (Dec-KL-UCB vs Dec-UCB1 at equal varsigma = beta) from :func:`tac_data`'s
    output; returns ``(fig, axes)``."""
    sweep = data["sweep"]
    fig, axes = plt.subplots(1, len(sweep), figsize=(5.2 * len(sweep), 4.9), squeeze=False,
                             layout="constrained")
    t = data["t"]
    for p, value in enumerate(sweep):
        ax = axes[0, p]
        _band(ax, t, data["dec_kl_ucb"][p], color="tab:purple",
              label=f"Dec-KL-UCB, varsigma = {value:g}")
        _band(ax, t, data["dec_ucb1"][p], color="tab:green", linestyle="--",
              label=f"Dec-UCB1, beta = {value:g}")
        ax.set_title(f"varsigma = beta = {value:g}", fontsize=10)
        ax.set_xlabel("t (decisions after the initial round)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    axes[0, 0].set_ylabel("agent-averaged regret (1/N) sum_i R_i(t)")
    fig.suptitle(f"journal Fig {_tac_number(parameters, 'kl_vs_ucb1')}: Dec-KL-UCB vs "
                 "Dec-UCB1 at equal constants\n"
                 + _tac_title(parameters), fontsize=10)
    return fig, axes


def _tac_sizes(ctx: FigureContext) -> dict[str, int]:
    return {"num_graphs": ctx.pick(tiny=1, quick=1, full=10),
            "seeds_per_graph": ctx.pick(tiny=4, quick=20, full=10),
            "horizon": ctx.pick(tiny=200, quick=2000, full=10_000),
            "base_seed": ctx.base_seed, "shared_program": ctx.size == "tiny"}


@figure("bandits.tac_fig1_dec_kl_ucb",
        title="Dec-KL-UCB (varsigma in {1, 0.1, 0.01}) vs single-agent KL-UCB on connected "
              "ER(20, 0.5) graphs, agent-averaged pseudo-regret",
        paper=f"{TAC}, Fig 1")
def tac_fig1_dec_kl_ucb(ctx: FigureContext) -> FigureOutput:
    """Sizes (graphs x seeds per graph, T): tiny 1 x 4, 200; quick 1 x 20, 2000; full 10 x 10,
    10^4."""
    data, parameters = tac_data(**_tac_sizes(ctx))
    fig, _ = draw_tac_sweep(data, parameters, "kl")
    return FigureOutput(fig, data, parameters)


@figure("bandits.tac_fig2_dec_ucb1",
        title="Dec-UCB1 (beta in {1, 0.1, 0.01}) vs single-agent UCB1 on connected ER(20, 0.5) "
              "graphs, agent-averaged pseudo-regret",
        paper=f"{TAC}, Fig 2")
def tac_fig2_dec_ucb1(ctx: FigureContext) -> FigureOutput:
    """Sizes as :func:`tac_fig1_dec_kl_ucb`."""
    data, parameters = tac_data(**_tac_sizes(ctx))
    fig, _ = draw_tac_sweep(data, parameters, "ucb1")
    return FigureOutput(fig, data, parameters)


@figure("bandits.tac_fig3_kl_vs_ucb1",
        title="Dec-KL-UCB vs Dec-UCB1 at equal varsigma = beta in {1, 0.1, 0.01} (three panels) "
              "on connected ER(20, 0.5) graphs, agent-averaged pseudo-regret",
        paper=f"{TAC}, Fig 3")
def tac_fig3_kl_vs_ucb1(ctx: FigureContext) -> FigureOutput:
    """Sizes as :func:`tac_fig1_dec_kl_ucb` (the same runs)."""
    data, parameters = tac_data(**_tac_sizes(ctx))
    fig, _ = draw_tac_kl_vs_ucb1(data, parameters)
    return FigureOutput(fig, data, parameters)


@figure("bandits.tac_fig4_dec_kl_ucb_beta",
        title="Dec-KL-UCB (varsigma in {1, 0.1, 0.01}) vs single-agent KL-UCB on connected "
              "ER(20, 0.5) graphs, Beta(mu_k, 1 - mu_k) rewards, agent-averaged pseudo-regret",
        paper=f"{TAC}, Fig 4")
def tac_fig4_dec_kl_ucb_beta(ctx: FigureContext) -> FigureOutput:
    """Sizes as :func:`tac_fig1_dec_kl_ucb`."""
    data, parameters = tac_data(**_tac_sizes(ctx), rewards="beta")
    fig, _ = draw_tac_sweep(data, parameters, "kl")
    return FigureOutput(fig, data, parameters)


@figure("bandits.tac_fig5_dec_ucb1_beta",
        title="Dec-UCB1 (beta in {1, 0.1, 0.01}) vs single-agent UCB1 on connected ER(20, 0.5) "
              "graphs, Beta(mu_k, 1 - mu_k) rewards, agent-averaged pseudo-regret",
        paper=f"{TAC}, Fig 5")
def tac_fig5_dec_ucb1_beta(ctx: FigureContext) -> FigureOutput:
    """Sizes as :func:`tac_fig1_dec_kl_ucb`."""
    data, parameters = tac_data(**_tac_sizes(ctx), rewards="beta")
    fig, _ = draw_tac_sweep(data, parameters, "ucb1")
    return FigureOutput(fig, data, parameters)


@figure("bandits.tac_fig6_kl_vs_ucb1_beta",
        title="Dec-KL-UCB vs Dec-UCB1 at equal varsigma = beta in {1, 0.1, 0.01} (three panels) "
              "on connected ER(20, 0.5) graphs, Beta(mu_k, 1 - mu_k) rewards",
        paper=f"{TAC}, Fig 6")
def tac_fig6_kl_vs_ucb1_beta(ctx: FigureContext) -> FigureOutput:
    """Sizes as :func:`tac_fig1_dec_kl_ucb` (the same runs as Figs 4-5)."""
    data, parameters = tac_data(**_tac_sizes(ctx), rewards="beta")
    fig, _ = draw_tac_kl_vs_ucb1(data, parameters)
    return FigureOutput(fig, data, parameters)


# ---------------------------------------------------------------------------------------------
# journal version, Figs 8-9: K6 + C6 with per-agent constants
# ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _small_runs(num_seeds: int, horizon: int, base_seed: int):
    adj, per_agent = small_graphs()
    seeds = _seeds(base_seed, num_seeds)
    u1 = _evaluate(dec_ucb1(adj, beta=per_agent), v4_arms(), horizon, seeds)
    kl = _evaluate(dec_kl_ucb(adj, varsigma=per_agent), v4_arms(), horizon, seeds)
    return {"t": u1["t"], "dec_ucb1": u1["regret"], "dec_kl_ucb": kl["regret"]}


def small_graph_data(num_seeds: int, horizon: int, base_seed: int = 0
                     ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The journal version's K6 + C6 experiment (:func:`proofs_checks.bandits.small_graphs`):
    Dec-UCB1 with per-agent beta and Dec-KL-UCB with the same values as per-agent varsigma.

    Returns:
        ``(data, parameters)``: data ``t [R]``, ``dec_ucb1`` and ``dec_kl_ucb``
        ``[S, R, 12]`` per-agent regret, ``per_agent_constant [12]``, ``adjacency [12, 12]``.
    """
    runs = _small_runs(num_seeds, horizon, base_seed)
    adj, per_agent = small_graphs()
    data = {**runs, "per_agent_constant": per_agent.astype(np.float64),
            "adjacency": adj.astype(np.int8)}
    parameters = {
        "num_agents": 12, "num_arms": 5, "means": list(V4_MEANS), "horizon": horizon,
        "num_seeds": num_seeds, "seeds": _seeds(base_seed, num_seeds),
        "graph": "K6 (agents 0-5, |N_i| = 6) and a 6-cycle (agents 6-11, |N_i| = 3), "
                 "disconnected; Metropolis weights",
        "per_agent_constant": per_agent.tolist(), "groups": SMALL_GROUPS,
        "arms": "normal truncated to [0, 1], location mu_k, sd 0.1",
        "variants": {"dec_ucb1": "width (1 + beta_i) sqrt(3 ln t / (|N_i| n))",
                     "dec_kl_ucb": "Q_i(t) = 3 (1 + varsigma_i)(ln t + 3 ln ln t) / (2 |N_i|)"},
        "figure_numbers": "the paper's Figs 8-9 show these two variants; which is 8 and which "
                          "9 is not known here",
        "band": "+-1 std over seeds of the group's mean regret"}
    return data, parameters


def draw_small_graphs(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw the K6 + C6 figure from :func:`small_graph_data`'s output; returns
    ``(fig, axes)``."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=True, layout="constrained")
    t = data["t"]
    styles = {"K6, beta=1": ("tab:blue", "--"), "K6, beta=0.01": ("tab:blue", "-"),
              "C6, beta=1": ("tab:red", "--"), "C6, beta=0.01": ("tab:red", "-")}
    for ax, key, symbol in zip(axes, ("dec_ucb1", "dec_kl_ucb"), ("beta", "varsigma"),
                               strict=True):
        for group, members in parameters["groups"].items():
            color, style = styles[group]
            _band(ax, t, data[key][:, :, members].mean(axis=2), color=color, linestyle=style,
                  label=f"{group.replace('beta', symbol)} (agents {members[0]}-{members[-1]})")
        name = "Dec-UCB1" if key == "dec_ucb1" else "Dec-KL-UCB"
        ax.set_title(f"{name}, per-agent {symbol}", fontsize=10)
        ax.set_xlabel("t (decisions after the initial round)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    axes[0].set_ylabel("group mean regret (1/3) sum_{i in group} R_i(t)")
    fig.suptitle(f"journal Figs 8-9: K6 (|N_i| = 6) + 6-cycle (|N_i| = 3), disconnected, N=12, "
                 f"M=5, truncated normal sd 0.1, T={parameters['horizon']}, "
                 f"{parameters['num_seeds']} seeds\nper-agent constants 1 / 0.01 within each "
                 "component; mean +-1 std over seeds of each group's mean pseudo-regret",
                 fontsize=10)
    return fig, axes


@figure("bandits.tac_figs8_9_k6_c6",
        title="Dec-UCB1 and Dec-KL-UCB with per-agent beta / varsigma in {1, 0.01} on K6 + C6: "
              "mean regret of the four (component, constant) groups",
        paper=f"{TAC}, Figs 8-9 (the authors' small-graph code)")
def tac_figs8_9_k6_c6(ctx: FigureContext) -> FigureOutput:
    """Sizes (seeds, T): tiny 4, 200; quick 50, 2000; full 100, 10^4."""
    data, parameters = small_graph_data(num_seeds=ctx.pick(tiny=4, quick=50, full=100),
                                        horizon=ctx.pick(tiny=200, quick=2000, full=10_000),
                                        base_seed=ctx.base_seed)
    fig, _ = draw_small_graphs(data, parameters)
    return FigureOutput(fig, data, parameters)
