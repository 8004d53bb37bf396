"""The graph fixtures of the optimization tests (N = 8): G1 a directed ring with chords, G2 its
2-periodic split, G3 random edge drops on G1 (one draw shared by all seeds), G4 the undirected
ring with Metropolis weights and G5 that ring's edges in two alternating groups."""

from __future__ import annotations

import jax
import numpy as np

import decentral.graphs as g

N = 8
CHORDS = [(0, 3), (2, 6), (5, 1)]


def ring_chords():
    """G1's pattern: directed ring i -> i+1 plus the chords, with self-loops."""
    return g.add_self_loops(g.from_edges(N, [(i, (i + 1) % N) for i in range(N)] + CHORDS))


def g1(rule: str, backend: str = "dense"):
    return g.static(ring_chords(), rule=rule, backend=backend)


def g2(rule: str, backend: str = "dense"):
    return g.periodic([g.ring(N), g.add_self_loops(g.from_edges(N, CHORDS))], rule=rule,
                      backend=backend)


def g3(rule: str, keep: float = 0.7):
    return g.random_edge_drops(ring_chords(), 1.0 - keep, rule=rule,
                               key=jax.random.PRNGKey(7))


def undirected_ring():
    return g.add_self_loops(g.ring(N) | g.ring(N).T)


def g4(backend: str = "dense"):
    return g.static(undirected_ring(), rule="metropolis", backend=backend)


def g5():
    """The undirected ring's edges {i, i+1} split by the parity of i, one group per step."""
    groups = []
    for parity in (0, 1):
        edges = [(i, (i + 1) % N) for i in range(parity, N, 2)]
        adj = g.from_edges(N, edges)
        groups.append(g.add_self_loops(adj | adj.T))
    return g.periodic(groups, rule="metropolis")


ROW = {"G1": lambda: g1("row"), "G2": lambda: g2("row"), "G4": g4}
COLUMN = {"G1": lambda: g1("column"), "G2": lambda: g2("column"),
          "G3": lambda: g3("column"), "G4": g4}
DOUBLY = {"G4": g4, "G5": g5}


def weights(seq, T: int) -> np.ndarray:
    """``[T, N, N]`` the float64 weights a run of T steps uses."""
    return np.asarray(seq.weights_host64(T), np.float64)
