"""Setups of the decentralized-bandit family, shared by its claims and its figures: the graphs,
the reward laws (arms), the swept constants and the seed conventions of Zhu, Mulle, Smith, Liu,
arXiv 2111.10933 — the first version (v1, NeurIPS 2021 submission: Dec_UCB, Theorems 1-2) and
the journal version (IEEE TAC 70(7) 2025, arXiv v4: Dec-UCB1(beta), Dec-KL-UCB(varsigma)).

Everything here describes *what* is run; running and judging it is the business of
:mod:`proofs_checks.bandits.claims` and of ``figures/bandits``. The six-agent graphs of the first
version are data of the library (:mod:`decentral.datasets.zhu2021`).

Example:
    >>> strongly_graph().sum(axis=1).tolist()           # |N_i| = in-degree + 1
    [4, 4, 4, 4, 6, 3]
    >>> random_means(3, 0).round(3).tolist()
    [0.623, 0.293, 0.087]
"""

from __future__ import annotations

import functools

import numpy as np

import decentral.graphs as g
from decentral.bandits import bernoulli, beta_distribution, heterogeneous, truncated_normal
from decentral.datasets.zhu2021 import paper_graph

__all__ = [
    # the first version's graphs and means
    "undirected_graph", "strongly_graph", "weakly_graph", "directed_path", "random_means",
    "STAR_MEANS",
    # the first version's figures: heterogeneous rewards, graphs, seed offsets
    "V1_SD", "V1_FAMILIES", "V1_FAMILY_NAMES", "V1_GRAPHS", "V1_SELECTED", "V1_FIXED_MEANS",
    "V1_ARMS_SEED_OFFSET", "V1_SELECTED_SEED_OFFSET", "ER_KINDS", "v1_arms", "er50_graph",
    "er50_arms_seed",
    # the journal version
    "V4_MEANS", "V4_SWEEP", "v4_graphs", "v4_arms", "v4_beta_arms", "TAC_REWARDS", "tac_arms",
    "small_graphs", "SMALL_GROUPS",
]


# ---------------------------------------------------------------------------------------------
# the first version: graphs and means
# ---------------------------------------------------------------------------------------------

def undirected_graph() -> np.ndarray:
    """The first version's undirected 6-agent graph (``undirected.adjlist``, by label)."""
    return paper_graph("undirected")


def strongly_graph() -> np.ndarray:
    """The first version's strongly connected 6-agent graph (``strongly.adjlist``)."""
    return paper_graph("strongly")


def weakly_graph() -> np.ndarray:
    """The first version's weakly connected 6-agent graph (agent 3 a sink)."""
    return paper_graph("weakly")


def directed_path() -> np.ndarray:
    """0 -> 1 -> ... -> 5 (agent i receives from i - 1; ``weakly_path.adjlist``)."""
    return paper_graph("weakly_path")


def random_means(num_arms: int, seed: int) -> np.ndarray:
    """``mu_k ~ U[0.05, 0.95]`` (the first version's setup), sorted decreasingly."""
    return np.sort(np.random.default_rng(seed).uniform(0.05, 0.95, num_arms))[::-1].copy()


STAR_MEANS = (0.6, 0.5)
"""Bernoulli means of the star-graph test of Theorem 2's per-agent dependence (gap 0.1)."""


# ---------------------------------------------------------------------------------------------
# the first version's figures: heterogeneous rewards and the graphs they run on
# ---------------------------------------------------------------------------------------------

V1_SD = 0.05
"""Standard deviation of the Beta and truncated-normal arms of the first version."""

V1_FAMILIES = ("Beta (sd 0.05)", "Bernoulli", "truncated normal (sd 0.05, mean mu_k)")
"""The families a first-version (agent, arm) pair is drawn from, by index."""

V1_FAMILY_NAMES = ("beta", "bernoulli", "truncated_normal")
"""The library's names of the :data:`V1_FAMILIES`, in the same order."""

V1_GRAPHS = {"strongly": {"theorem": 1, "figure": 1},
             "undirected": {"theorem": 2, "figure": 2},
             "weakly": {"theorem": 1, "figure": 3}}
"""The first version's 6-agent graphs, with the theorem whose weights and width Dec_UCB uses
(the authors' simulator: flocking for strong and weak graphs, Metropolis for undirected ones)."""

V1_SELECTED = {"undirected_two_neighbors": {"theorem": 2, "figure": 11},
               "strongly": {"theorem": 1, "figure": 12},
               "undirected_path": {"theorem": 2, "figure": 13},
               "weakly_path": {"theorem": 1, "figure": 14}}
"""The first version's appendix "selected graphs" (Figs 11-14) with the theorem whose weights
and width Dec_UCB uses (the authors' simulator: ``undirected`` for the two undirected graphs,
``strong`` for ``strongly``, ``weak`` for ``weakly_path``)."""

V1_FIXED_MEANS = (0.10, 0.25, 0.45, 0.65, 0.75, 0.90)
"""The means of the first version's Figs 11-13 (the authors' command line ``-m``)."""

V1_ARMS_SEED_OFFSET = 1000
"""Seed of the arms of v1 Figs 1-3: ``base_seed + V1_ARMS_SEED_OFFSET``; graph ``k`` of Fig 4
uses ``+ 1 + k`` (:func:`er50_arms_seed`)."""

V1_SELECTED_SEED_OFFSET = 1100
"""Seed of the arms of v1 Figs 11-13: ``base_seed + V1_SELECTED_SEED_OFFSET``; Fig 14: ``+ 1``."""

ER_KINDS = {"strong": 1, "undirected": 2, "weak": 1}
"""Kinds of ER(50, 0.5) graph of v1 Fig 4 (a, b, c), with the theorem Dec_UCB runs."""


def v1_arms(num_agents: int, num_arms: int, seed: int, *, copies: int = 1, means=None):
    """The first version's heterogeneous arms: ``mu_k ~ U[0.05, 0.95]`` (:func:`random_means`
    of ``seed``), or the given ``means``, and each (agent, arm) family drawn uniformly from
    :data:`V1_FAMILIES` by ``numpy.random.default_rng([seed, 1])``.

    The sampler evaluates the three families whichever are drawn
    (:meth:`~decentral.bandits.Arms.with_extra_families`; the rewards are the same), so every
    first-version system of the same size runs with one compiled program.

    Args:
        num_agents, num_arms: N and M of one system.
        seed: integer seed of the means (unless given) and of the family draw.
        copies: number of copies of the N agents side by side: agent ``b N + i`` faces the laws
            of agent ``i`` (its own reward streams).
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
    return arms.with_extra_families(list(V1_FAMILY_NAMES)), mu, choice


@functools.lru_cache(maxsize=64)
def er50_graph(kind: str, index: int, base_seed: int) -> np.ndarray:
    """Graph ``index`` of ``kind`` (:data:`ER_KINDS`) of v1 Fig 4:
    ``erdos_renyi(50, 0.5, kind, seed=base_seed + index)``. Cached: a weak graph takes about
    200 rejected draws (a second) before its substitute construction."""
    return g.erdos_renyi(50, 0.5, kind=kind, seed=base_seed + index)


def er50_arms_seed(index: int, base_seed: int) -> int:
    """Seed of the arms of graph ``index`` of v1 Fig 4 (shared by the three kinds)."""
    return base_seed + V1_ARMS_SEED_OFFSET + 1 + index


# ---------------------------------------------------------------------------------------------
# the journal version
# ---------------------------------------------------------------------------------------------

V4_MEANS = (0.2, 0.3, 0.4, 0.5, 0.6)
"""The journal version's arm means (M = 5)."""

V4_SWEEP = (1.0, 0.1, 0.01)
"""The swept constants: beta of Dec-UCB1, varsigma of Dec-KL-UCB."""


def v4_graphs(count: int) -> list[np.ndarray]:
    """The journal version's graphs: the first ``count`` seeds s = 0, 1, ... for which
    networkx's ``fast_gnp_random_graph(20, 0.5, seed=s)`` is connected (self-loops added)."""
    import networkx as nx

    out, s = [], 0
    while len(out) < count:
        G = nx.fast_gnp_random_graph(20, 0.5, seed=s)
        if nx.is_connected(G):
            out.append(nx.to_numpy_array(G, dtype=bool) | np.eye(20, dtype=bool))
        s += 1
    return out


def v4_arms():
    """Truncated normals (location mu_k, sd 0.1, as the authors' code parameterises them)."""
    return truncated_normal(list(V4_MEANS), 0.1)


def v4_beta_arms():
    """The journal version's Figs 4-6 rewards: ``Beta(mu_k, 1 - mu_k)`` for ``mu_k`` in
    :data:`V4_MEANS` (mean ``mu_k``, variance ``mu_k (1 - mu_k) / 2``), by moment matching with
    ``sd = sqrt(mu_k (1 - mu_k) / 2)``, i.e. ``a = mu_k``, ``b = 1 - mu_k`` up to round-off.

    Example:
        >>> arms = v4_beta_arms()
        >>> np.allclose(arms.first[0], V4_MEANS), np.allclose(arms.second[0], 1 - arms.first[0])
        (True, True)
    """
    mu = np.asarray(V4_MEANS, np.float64)
    return beta_distribution(mu, np.sqrt(mu * (1 - mu) / 2))


TAC_REWARDS = {"truncnorm": {"figures": (1, 2, 3),
                             "text": "normal truncated to [0, 1], location mu_k, sd 0.1 (the "
                                     "authors' parameterisation; gaps from the true truncated "
                                     "means)"},
               "beta": {"figures": (4, 5, 6),
                        "text": "Beta(mu_k, 1 - mu_k): mean mu_k, variance mu_k (1 - mu_k) / 2, "
                                "U-shaped (moment matching with sd = sqrt(mu_k (1 - mu_k) / 2))"}}
"""Reward laws of the journal version's ER(20, 0.5) figures: truncated normals for Figs 1-3,
Beta(mu_k, 1 - mu_k) for Figs 4-6 (the same three comparisons)."""


def tac_arms(rewards: str):
    """The arms of the reward law ``rewards`` of :data:`TAC_REWARDS`: :func:`v4_arms`
    (``"truncnorm"``) or :func:`v4_beta_arms` (``"beta"``)."""
    if rewards not in TAC_REWARDS:
        raise ValueError(f"rewards must be one of {list(TAC_REWARDS)}; got {rewards!r}.")
    return v4_arms() if rewards == "truncnorm" else v4_beta_arms()


def small_graphs() -> tuple[np.ndarray, np.ndarray]:
    """The journal version's K6 (agents 0-5) and 6-cycle (6-11), disconnected, and the
    per-agent beta: 1 for the first three agents of each component, 0.01 for the rest."""
    adj = np.zeros((12, 12), bool)
    adj[:6, :6] = True
    for i in range(6):
        adj[6 + i, 6 + (i + 1) % 6] = adj[6 + (i + 1) % 6, 6 + i] = True
    adj |= np.eye(12, dtype=bool)
    beta = np.array([1, 1, 1, 0.01, 0.01, 0.01] * 2)
    return adj, beta


SMALL_GROUPS = {"K6, beta=1": [0, 1, 2], "K6, beta=0.01": [3, 4, 5],
                "C6, beta=1": [6, 7, 8], "C6, beta=0.01": [9, 10, 11]}
"""The four agent groups (component, per-agent constant) of :func:`small_graphs`."""
