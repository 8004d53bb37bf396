"""Tests of decentral.graphs checks: strong connectivity, diameter, minimum weight,
connectivity windows (B-connectivity)."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import digraphs

import decentral.graphs as g


def _nx(adj):
    dg = nx.DiGraph()
    dg.add_nodes_from(range(adj.shape[0]))
    dg.add_edges_from((int(j), int(i)) for i, j in np.argwhere(adj) if i != j)
    return dg


def _edges_graph(n, edges):
    """Adjacency with the directed edges (sender, receiver) and self-loops."""
    a = np.eye(n, dtype=bool)
    for s, r in edges:
        a[r, s] = True
    return a


# ---- strong connectivity --------------------------------------------------------------------

def test_is_strongly_connected_examples():
    assert g.is_strongly_connected(g.ring(6))
    assert g.is_strongly_connected(g.ring(6, directed=False))
    assert not g.is_strongly_connected(g.path(6))
    assert g.is_strongly_connected(g.path(6, directed=False))
    assert g.is_strongly_connected(g.complete(4))
    assert g.is_strongly_connected(g.star(5))
    assert g.is_strongly_connected(np.ones((1, 1), bool))
    assert not g.is_strongly_connected(np.eye(3, dtype=bool))
    for seed in range(3):
        assert not g.is_strongly_connected(g.erdos_renyi(10, 0.3, kind="weak", seed=seed))
        assert g.is_strongly_connected(g.erdos_renyi(10, 0.3, kind="strong", seed=seed))
    # weight matrices work too, orientation included
    W = g.row_stochastic(g.path(4))
    assert not g.is_strongly_connected(W)
    assert g.is_strongly_connected(g.row_stochastic(g.ring(4)))
    # one validation rule everywhere: self-loops are required, as by the weight rules


def test_checks_apply_the_weight_rules_validation():
    """is_strongly_connected / diameter / windows refuse what row_stochastic refuses."""
    no_loops = g.ring(4) & ~np.eye(4, dtype=bool)
    as_int = g.ring(4).astype(int)
    for check in (g.is_strongly_connected, g.diameter, g.row_stochastic,
                  lambda a: g.connectivity_window([a])):
        with pytest.raises(ValueError, match="add_self_loops"):
            check(no_loops)
        with pytest.raises(ValueError, match=r"astype\(bool\)"):
            check(as_int)
    W = g.row_stochastic(g.ring(4))
    W0 = W.copy()
    W0[0, 0] = 0.0
    for check in (g.is_strongly_connected, g.diameter, lambda a: g.connectivity_window([a])):
        assert check(W) in (True, 3, 1)                     # weights with self-loops work
        with pytest.raises(ValueError, match="self-loop"):
            check(W0)


@given(digraphs(max_n=9))
def test_is_strongly_connected_agrees_with_networkx(adj):
    assert g.is_strongly_connected(adj) == nx.is_strongly_connected(_nx(adj))
    assert g.is_strongly_connected(adj.T) == g.is_strongly_connected(adj)


# ---- diameter -----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_diameter_rings_paths_complete(n):
    assert g.diameter(g.ring(n)) == n - 1
    assert g.diameter(g.ring(n, directed=False)) == n // 2
    assert g.diameter(g.path(n)) == math.inf
    assert g.diameter(g.path(n, directed=False)) == n - 1
    assert g.diameter(g.complete(n)) == 1


def test_diameter_small_cases():
    assert g.diameter(np.ones((1, 1), bool)) == 0
    assert g.diameter(g.star(5)) == 2
    assert g.diameter(g.exponential(8)) == 3                  # binary digits of 1..7
    assert g.diameter(g.grid2d(3, 4)) == 5
    assert g.diameter(g.row_stochastic(g.ring(5))) == 4     # weight matrix input
    assert g.diameter(np.eye(3, dtype=bool)) == math.inf


@given(digraphs(min_n=2))
def test_diameter_agrees_with_networkx(adj):
    dg = _nx(adj)
    if nx.is_strongly_connected(dg):
        lengths = dict(nx.all_pairs_shortest_path_length(dg))
        want = max(max(d.values()) for d in lengths.values())
        assert g.diameter(adj) == want
    else:
        assert g.diameter(adj) == math.inf


# ---- minimum positive weight --------------------------------------------------------------

def test_min_positive_weight():
    W = g.row_stochastic(g.complete(4))
    assert g.min_positive_weight(W) == pytest.approx(0.25)
    stack = np.stack([W, g.metropolis(g.star(4))])        # star: weights 1/4 and 3/4
    assert g.min_positive_weight(stack) == pytest.approx(0.25)
    stack = np.stack([g.row_stochastic(g.ring(6)), g.metropolis(g.star(6))])  # hub: 1/6
    assert g.min_positive_weight(stack) == pytest.approx(1 / 6)
    M = np.array([[0.9, 0.1, 0.0], [0.0, 0.97, 0.03], [0.5, 0.0, 0.5]])
    assert g.min_positive_weight(M) == pytest.approx(0.03)
    assert g.min_positive_weight([M, np.eye(3)]) == pytest.approx(0.03)
    with pytest.raises(ValueError, match="no positive entry"):
        g.min_positive_weight(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="negative"):
        g.min_positive_weight(-M)


# ---- connectivity windows -----------------------------------------------------------------

def _ring_split(n=6, parts=3):
    """The directed ring's edges spread over ``parts`` graphs (edge k in graph k % parts)."""
    graphs = [np.eye(n, dtype=bool) for _ in range(parts)]
    for k in range(n):
        graphs[k % parts][(k + 1) % n, k] = True          # edge k -> k + 1
    return graphs


def test_window_path_then_reversed_path():
    p = g.path(5)
    assert g.connectivity_window([p, p.T]) == 2
    assert g.connectivity_window([p, p.T, p, p.T]) == 2
    assert g.connectivity_window([p]) is None
    assert g.connectivity_window([g.ring(5)]) == 1
    # weight matrices are read by their positive pattern
    assert g.connectivity_window([g.row_stochastic(p), g.row_stochastic(p.T)]) == 2


def test_window_ring_split_over_three_graphs():
    parts = _ring_split(6, 3)
    assert np.array_equal(parts[0] | parts[1] | parts[2], g.ring(6))
    assert g.connectivity_window(parts) == 3
    assert g.connectivity_window(parts * 4) == 3
    assert g.connectivity_window(g.periodic(parts, rule="row")) == 3
    assert g.connectivity_window(g.explicit(parts * 2, rule="row")) == 3
    assert g.connectivity_window(np.stack(parts)) == 3


def test_window_union_not_strongly_connected():
    p = g.path(5)
    assert g.connectivity_window([p, p, p]) is None
    two = _edges_graph(4, [(0, 1), (1, 0)])
    other = _edges_graph(4, [(2, 3), (3, 2)])
    assert g.connectivity_window([two, other]) is None
    assert g.connectivity_window(g.periodic([two, other], rule="row")) is None
    assert g.connectivity_window(g.static(g.path(4), rule="row")) is None


def test_window_static_sequences():
    assert g.connectivity_window(g.static(g.ring(5), rule="row")) == 1
    assert g.connectivity_window(g.one_peer_exponential(8)) == 3    # 1 + 2 + 4 hops


def test_window_periodic_wraps_around_the_period():
    p = g.path(4)
    seq = [p.T, p, p.T]        # windows (0,1) and (1,2) connect; (2,0) = p.T | p.T does not
    assert g.connectivity_window(seq) == 2                       # finite list: no wrap
    per = g.periodic(seq, rule="row")
    assert g.connectivity_window(per) == 3                       # the window 2, 0 counts
    report = g.connectivity_window_report(per, 2)
    assert not report.holds and report.failing_start == 2
    assert g.connectivity_window_report(seq, 2).holds
    # and the other way: a periodic sequence whose wrapped windows are fine
    assert g.connectivity_window(g.periodic([p, p.T], rule="row")) == 2


def test_window_report():
    parts = _ring_split(6, 3)
    ok = g.connectivity_window_report(parts, 3)
    assert ok.holds and ok.failing_start is None and ok.window == 3
    assert "every window of 3" in str(ok)
    bad = g.connectivity_window_report(parts, 2)
    assert not bad.holds and bad.failing_start == 0 and bad.window == 2
    assert bad.unreachable_pairs > 0
    assert "graphs 0..1" in str(bad) and "not strongly connected" in str(bad)
    # a later window fails: only the last pair of graphs is disconnected
    p = g.path(3)
    seq = [p, p.T, p.T, p.T]
    rep = g.connectivity_window_report(seq, 2)
    assert rep.failing_start == 1 and "graphs 1..2" in str(rep)
    # directed path 0 -> 1 -> 2: 3 of the 6 ordered pairs are unreachable
    rep = g.connectivity_window_report([p, p], 1)
    assert rep.failing_start == 0 and rep.unreachable_pairs == 3
    with pytest.raises(ValueError, match="longer"):
        g.connectivity_window_report(parts, 4)
    for window in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="window must be"):
            g.connectivity_window_report(parts, window)
    # periodic windows may be longer than the period (they wrap)
    assert g.connectivity_window_report(g.periodic(parts, rule="row"), 5).holds


def test_window_random_sequences_need_horizon():
    seq = g.random_edge_drops(g.complete(5), 0.3, key=7)
    with pytest.raises(ValueError, match="horizon"):
        g.connectivity_window(seq)
    with pytest.raises(ValueError, match="horizon"):
        g.connectivity_window_report(seq, 2)
    L = g.connectivity_window(seq, horizon=30)
    pats = list(seq.weights_host(30) > 0)
    assert L == g.connectivity_window(pats)
    assert L is not None and L >= 1
    assert g.connectivity_window_report(seq, L, horizon=30).holds
    if L > 1:
        assert not g.connectivity_window_report(pats, L - 1).holds
    per_seed = g.random_edge_drops(g.complete(5), 0.3, shared_across_seeds=False)
    with pytest.raises(ValueError, match="key"):
        g.connectivity_window(per_seed, horizon=5)


@given(st.lists(digraphs(min_n=4, max_n=4), min_size=1, max_size=6))
def test_window_is_the_smallest_working_length(graphs):
    """Brute force: the smallest L with every window union strongly connected."""
    t = len(graphs)

    def ok(L):
        return all(nx.is_strongly_connected(_nx(np.any(graphs[s:s + L], axis=0)))
                   for s in range(t - L + 1))

    want = next((L for L in range(1, t + 1) if ok(L)), None)
    assert g.connectivity_window(graphs) == want


def test_checks_bad_input():
    with pytest.raises(ValueError, match="square"):
        g.is_strongly_connected(np.ones((2, 3), bool))
    with pytest.raises(ValueError, match=r"\[n, n\]"):
        g.diameter(np.ones((3, 2)))
    with pytest.raises(ValueError, match="stack"):
        g.is_strongly_connected(np.ones((2, 3, 3)))
    with pytest.raises(ValueError, match="negative"):
        g.is_strongly_connected(-np.eye(3))
    with pytest.raises(ValueError, match="list or stack"):
        g.connectivity_window(np.ones((2, 2, 3, 3), bool))


def test_window_respects_the_horizon():
    """An explicit stack is examined over its first `horizon` graphs; a horizon beyond its
    length is refused (the old code ignored horizon and answered for the whole stack)."""
    p = g.path(4)
    parts = [p, p.T] * 5                                       # window 2 everywhere
    stack = [p] * 9 + [g.ring(4)]                              # connected only at step 9
    assert g.connectivity_window(stack) == 10
    assert g.connectivity_window(stack, horizon=9) is None      # steps 0..8 never connect
    with pytest.raises(ValueError, match="horizon=20 is longer than the 10 graphs"):
        g.connectivity_window(parts, horizon=20)
    with pytest.raises(ValueError, match="horizon=20 is longer than the 10 graphs"):
        g.connectivity_window(g.explicit(parts, rule="row"), horizon=20)
    with pytest.raises(ValueError, match="longer"):
        g.connectivity_window_report(parts, 2, horizon=11)
    assert g.connectivity_window(g.explicit(parts, rule="row"), horizon=4) == 2
    for bad in (0, 2.0, True):
        with pytest.raises(ValueError, match="horizon"):
            g.connectivity_window(parts, horizon=bad)
    # periodic sequences: observed without wrap-around over the horizon
    per = g.periodic([p.T, p, p.T], rule="row")
    assert g.connectivity_window(per) == 3                    # the wrapped window (2, 0) fails
    assert g.connectivity_window(per, horizon=3) == 2         # inside steps 0..2 it does not
    assert g.connectivity_window(per, horizon=30) == 3
    assert "observed over 3 steps" in str(g.connectivity_window_report(per, 2, horizon=3))
