"""The setups of the optimization claims, shared with their figures and benchmarks: the default
problem (random strongly convex quadratics, N = 8, d = 3, mu = 0.5, L = 2) and the graph
fixtures G1-G6 (``docs/optimization.md`` §Fixtures).

* G1: directed ring on N agents plus the chords 0 -> 3, 2 -> 6, 5 -> 1, self-loops: strongly
  connected, unbalanced (its row-stochastic W has a non-uniform Perron vector).
* G2: 2-periodic: the ring at even steps, the chords alone at odd ones (neither strongly
  connected, the union is: B = 2).
* G3: random edge drops on G1, each non-self edge kept with probability q (one seeded draw
  shared by all seeds).
* G4: undirected ring, Metropolis weights (symmetric, doubly stochastic).
* G5: G4's edges in B groups (edge {i, i+1} in group i mod B), one group per step.
* G6: the push-pull pair of spanning trees: the pull graph an out-tree from root 0 along the
  path 0 -> 1 -> ... -> N-1, the push graph the in-tree into root 0 along the reversed path;
  G6' re-roots the push tree at ``root`` (the root sets are disjoint: u^T v = 0).
"""

from __future__ import annotations

import jax
import numpy as np

import decentral.graphs as g
from decentral.optimization import random_quadratic

__all__ = ["N", "D", "MU", "L", "CHORDS", "default_problem", "ring_chords", "g1", "g2", "g3",
           "undirected_ring", "g4", "g5", "g6", "weights"]

N, D, MU, L = 8, 3, 0.5, 2.0
CHORDS = ((0, 3), (2, 6), (5, 1))


def default_problem(seed: int = 0, *, heterogeneity: float = 1.0, num_agents: int = N,
                    dim: int = D):
    """Random quadratics ``f_i(x) = x^T A_i x / 2 - b_i^T x`` with eigenvalues in [MU, L]."""
    return random_quadratic(num_agents, dim, strong_convexity=MU, smoothness=L,
                            heterogeneity=heterogeneity, seed=seed)


def ring_chords(n: int = N) -> np.ndarray:
    """G1's pattern: the directed ring i -> i+1 plus the chords, with self-loops."""
    return g.add_self_loops(g.from_edges(n, [(i, (i + 1) % n) for i in range(n)]
                                         + list(CHORDS)))


def g1(rule: str, backend: str = "dense"):
    return g.static(ring_chords(), rule=rule, backend=backend)


def g2(rule: str, backend: str = "dense"):
    return g.periodic([g.ring(N), g.add_self_loops(g.from_edges(N, list(CHORDS)))],
                      rule=rule, backend=backend)


def g3(rule: str, keep: float = 0.7, seed: int = 7):
    return g.random_edge_drops(ring_chords(), 1.0 - keep, rule=rule,
                               key=jax.random.PRNGKey(seed))


def undirected_ring(n: int = N) -> np.ndarray:
    return g.add_self_loops(g.ring(n) | g.ring(n).T)


def g4(backend: str = "dense", n: int = N):
    return g.static(undirected_ring(n), rule="metropolis", backend=backend)


def g5(groups: int = 2, n: int = N):
    """G4's edges {i, i+1} in ``groups`` groups by ``i mod groups``, one group per step."""
    mats = []
    for k in range(groups):
        adj = g.from_edges(n, [(i, (i + 1) % n) for i in range(k, n, groups)])
        mats.append(g.add_self_loops(adj | adj.T))
    return g.periodic(mats, rule="metropolis")


def g6(root: int = 0):
    """``(pull, push)``: R on the out-tree from 0, C on the in-tree into ``root`` (the path
    graph's edges pointing towards ``root``); ``root != 0`` is G6' (u^T v = 0)."""
    pull = g.add_self_loops(g.from_edges(N, [(i, i + 1) for i in range(N - 1)]))
    towards = [(i, i + 1) for i in range(root)] + [(i, i - 1) for i in range(root + 1, N)]
    push = g.add_self_loops(g.from_edges(N, towards))
    return g.static(pull, rule="row"), g.static(push, rule="column")


def weights(seq, T: int) -> np.ndarray:
    """``[T, N, N]`` the float64 weights a run of T steps uses."""
    return np.asarray(seq.weights_host64(T), np.float64)
