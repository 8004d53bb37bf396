"""Tests of decentral.graphs weight rules and stochasticity checks.

Orientation: ``W[i, j] > 0`` iff agent i receives from agent j.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import digraphs

import decentral.graphs as g

# 3 agents: 0 hears {0, 1, 2}, 1 hears {0, 1}, 2 hears {1, 2}
A3 = np.array([[True, True, True],
               [True, True, False],
               [False, True, True]])




@st.composite
def balanced_digraphs(draw, min_n=1, max_n=10):
    """Union of edge-disjoint directed cycles on random subsets (in-degree = out-degree)."""
    n = draw(st.integers(min_n, max_n))
    off = np.zeros((n, n), dtype=bool)
    if n >= 2:
        for _ in range(draw(st.integers(0, 3))):
            order = draw(st.permutations(list(range(n))))
            cycle = order[:draw(st.integers(2, n))]
            edges = [(cycle[k - 1], cycle[k]) for k in range(len(cycle))]  # sender, receiver
            if any(off[r, s] for s, r in edges):
                continue            # a shared edge would be counted once: not balanced
            for s, r in edges:
                off[r, s] = True
    return off | np.eye(n, dtype=bool)


def _pi_strategy(n):
    return st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n).map(
        lambda xs: np.asarray(xs) / np.sum(xs))


# ---- hand-computed fixtures ---------------------------------------------------------------

def test_row_stochastic_by_hand():
    W = g.row_stochastic(A3)
    want = np.array([[1 / 3, 1 / 3, 1 / 3],
                     [1 / 2, 1 / 2, 0.0],
                     [0.0, 1 / 2, 1 / 2]])
    np.testing.assert_allclose(W, want, rtol=0, atol=1e-15)
    assert W.dtype == np.float64


def test_column_stochastic_by_hand():
    # out-degrees incl. self: agent 0 is heard by {0, 1} -> 2, agent 1 by {0, 1, 2} -> 3,
    # agent 2 by {0, 2} -> 2
    W = g.column_stochastic(A3)
    want = np.array([[1 / 2, 1 / 3, 1 / 2],
                     [1 / 2, 1 / 3, 0.0],
                     [0.0, 1 / 3, 1 / 2]])
    np.testing.assert_allclose(W, want, rtol=0, atol=1e-15)


def test_metropolis_by_hand_path_and_star():
    # undirected path 0 - 1 - 2: |N| = (2, 3, 2)
    W = g.metropolis(g.path(3, directed=False))
    want = np.array([[2 / 3, 1 / 3, 0.0],
                     [1 / 3, 1 / 3, 1 / 3],
                     [0.0, 1 / 3, 2 / 3]])
    np.testing.assert_allclose(W, want, rtol=0, atol=1e-15)
    # star with hub 0 and 3 leaves: |N_hub| = 4, |N_leaf| = 2
    W = g.metropolis(g.star(4))
    want = np.array([[1 / 4, 1 / 4, 1 / 4, 1 / 4],
                     [1 / 4, 3 / 4, 0.0, 0.0],
                     [1 / 4, 0.0, 3 / 4, 0.0],
                     [1 / 4, 0.0, 0.0, 3 / 4]])
    np.testing.assert_allclose(W, want, rtol=0, atol=1e-15)


def test_prescribed_pi_by_hand_directed_3_ring():
    # ring(3): i receives from i - 1; L = I - P; W = I - c D_pi^-1 L
    pi = np.array([0.5, 0.25, 0.25])
    W = g.prescribed_pi_weights(g.ring(3), pi)        # default c = 0.5 * min(pi / 1) = 1/8
    want = np.array([[3 / 4, 0.0, 1 / 4],
                     [1 / 2, 1 / 2, 0.0],
                     [0.0, 1 / 2, 1 / 2]])
    np.testing.assert_allclose(W, want, rtol=0, atol=1e-15)
    W = g.prescribed_pi_weights(g.ring(3), pi, scale=0.2)
    want = np.array([[0.6, 0.0, 0.4],
                     [0.8, 0.2, 0.0],
                     [0.0, 0.8, 0.2]])
    np.testing.assert_allclose(W, want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(pi @ W, pi, rtol=0, atol=1e-15)


def test_prescribed_pi_uniform_on_directed_ring_is_doubly_stochastic():
    for n in (2, 3, 5, 8):
        W = g.prescribed_pi_weights(g.ring(n), np.full(n, 1.0 / n))
        assert g.is_doubly_stochastic(W)
        assert np.all(np.diag(W) > 0)


def test_prescribed_pi_on_undirected_and_edgeless_graphs():
    pi = np.array([0.4, 0.3, 0.2, 0.1])
    W = g.prescribed_pi_weights(g.star(4), pi)         # symmetric graphs are balanced
    assert g.is_row_stochastic(W)
    np.testing.assert_allclose(pi @ W, pi, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(g.prescribed_pi_weights(np.eye(4, dtype=bool), pi),
                                  np.eye(4))


# ---- hypothesis: stochasticity over random digraphs ----------------------------------------

@given(digraphs())
def test_row_rule_random(adj):
    W = g.row_stochastic(adj)
    assert W.shape == adj.shape
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(W > 0, adj)
    deg = adj.sum(axis=1)
    np.testing.assert_allclose(W[adj], np.broadcast_to(1.0 / deg[:, None], adj.shape)[adj])
    assert g.is_row_stochastic(W)


@given(digraphs())
def test_column_rule_random(adj):
    W = g.column_stochastic(adj)
    np.testing.assert_allclose(W.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(W > 0, adj)
    outdeg = adj.sum(axis=0)
    np.testing.assert_allclose(W[adj], np.broadcast_to(1.0 / outdeg[None, :], adj.shape)[adj])
    assert g.is_column_stochastic(W)


@given(digraphs())
def test_metropolis_random_undirected(adj):
    adj = adj | adj.T
    W = g.metropolis(adj)
    n = adj.shape[0]
    np.testing.assert_allclose(W, W.T, rtol=0, atol=0)
    assert g.is_doubly_stochastic(W, tol=1e-12)
    assert np.all(np.diag(W) > 0)
    deg = adj.sum(axis=1)
    for i in range(n):
        for j in range(n):
            if i != j:
                want = 1.0 / max(deg[i], deg[j]) if adj[i, j] else 0.0
                assert W[i, j] == pytest.approx(want, abs=1e-15)


@given(balanced_digraphs(), st.data())
def test_prescribed_pi_random_balanced(adj, data):
    n = adj.shape[0]
    pi = data.draw(_pi_strategy(n))
    pi = pi / pi.sum()
    W = g.prescribed_pi_weights(adj, pi)
    assert g.is_row_stochastic(W, tol=1e-12)
    np.testing.assert_allclose(pi @ W, pi, rtol=0, atol=1e-13)
    assert np.all(np.diag(W) > 0)
    assert np.all(W >= 0)
    off = ~np.eye(n, dtype=bool)
    np.testing.assert_array_equal((W > 0) & off, adj & off)
    uniform = g.prescribed_pi_weights(adj, np.full(n, 1.0 / n))
    assert g.is_doubly_stochastic(uniform, tol=1e-12)


# ---- stochasticity checks -----------------------------------------------------------------

def test_checks_positive_and_negative_controls():
    W = g.row_stochastic(A3)
    assert g.is_row_stochastic(W)
    assert not g.is_column_stochastic(W)
    assert not g.is_doubly_stochastic(W)
    # transposed W: column- but not row-stochastic
    assert g.is_column_stochastic(W.T)
    assert not g.is_row_stochastic(W.T)
    assert not g.is_doubly_stochastic(W.T)
    # doubly stochastic
    M = g.metropolis(g.star(5))
    assert g.is_row_stochastic(M) and g.is_column_stochastic(M) and g.is_doubly_stochastic(M)
    # a perturbed row
    bad = W.copy()
    bad[2, 1] += 0.1
    assert not g.is_row_stochastic(bad)
    assert not g.is_doubly_stochastic(M + np.diag([0, 0, 0.1, 0, 0]))


def test_checks_tolerance():
    W = g.row_stochastic(A3)
    W[1, 0] += 1e-8
    assert not g.is_row_stochastic(W)                   # default tol 1e-10
    assert g.is_row_stochastic(W, tol=1e-6)
    W = g.row_stochastic(A3)
    W[1, 0] += 1e-12
    assert g.is_row_stochastic(W)
    assert not g.is_row_stochastic(W, tol=1e-14)
    C = g.column_stochastic(A3)
    C[0, 2] -= 1e-8
    assert not g.is_column_stochastic(C)
    assert g.is_column_stochastic(C, tol=1e-6)


def test_stochasticity_violations_names_the_bad_row():
    W = g.row_stochastic(A3)
    assert g.stochasticity_violations(W) == []
    W[2, 1] += 0.25
    viol = g.stochasticity_violations(W)
    assert [k for k, _ in viol] == [2]
    assert viol[0][1] == pytest.approx(1.25)
    # columns of the same matrix
    cols = g.stochasticity_violations(W, axis=0)
    sums = W.sum(axis=0)
    assert [k for k, _ in cols] == [int(k) for k in np.flatnonzero(np.abs(sums - 1) > 1e-10)]


def test_require_stochastic():
    W = g.row_stochastic(A3)
    out = g.require_stochastic(W)
    np.testing.assert_array_equal(out, W)
    bad = W.copy()
    bad[2, 1] += 0.25
    with pytest.raises(ValueError, match=r"row 2 sums to 1\.25"):
        g.require_stochastic(bad)
    with pytest.raises(ValueError, match="column 1 sums to"):
        g.require_stochastic(W, "column")
    with pytest.raises(ValueError, match="column"):
        g.require_stochastic(W, "doubly")
    g.require_stochastic(g.metropolis(g.star(4)), "doubly")
    with pytest.raises(ValueError, match="MyW must be row-stochastic"):
        g.require_stochastic(bad, name="MyW")
    with pytest.raises(ValueError, match="kind"):
        g.require_stochastic(W, "left")


# ---- bad input ----------------------------------------------------------------------------

RULES = [g.row_stochastic, g.column_stochastic, g.metropolis,
         lambda a: g.prescribed_pi_weights(a, np.full(np.shape(a)[0], 1.0 / np.shape(a)[0]))]


@pytest.mark.parametrize("rule", RULES)
def test_rules_reject_non_square(rule):
    with pytest.raises(ValueError, match="square"):
        rule(np.ones((2, 3), dtype=bool))
    with pytest.raises(ValueError, match="square"):
        rule(np.ones(3, dtype=bool))


@pytest.mark.parametrize("rule", RULES)
def test_rules_reject_non_boolean(rule):
    with pytest.raises(ValueError, match="boolean"):
        rule(np.ones((3, 3)))
    with pytest.raises(ValueError, match="boolean"):
        rule(np.ones((3, 3), dtype=int))


@pytest.mark.parametrize("rule", RULES)
def test_rules_reject_missing_self_loop(rule):
    a = g.complete(3)
    a[1, 1] = False
    with pytest.raises(ValueError, match=r"add_self_loops"):
        rule(a)
    with pytest.raises(ValueError, match=r"\[1\]"):
        rule(a)


def test_rules_reject_empty():
    with pytest.raises(ValueError, match="no agents"):
        g.row_stochastic(np.zeros((0, 0), dtype=bool))


def test_metropolis_rejects_directed():
    with pytest.raises(ValueError, match="undirected"):
        g.metropolis(g.ring(4, directed=True))
    with pytest.raises(ValueError, match="undirected"):
        g.metropolis(A3)


@pytest.mark.parametrize("check", [g.is_row_stochastic, g.is_column_stochastic,
                                   g.is_doubly_stochastic, g.stochasticity_violations,
                                   g.require_stochastic])
def test_checks_reject_bad_weights(check):
    W = g.row_stochastic(g.complete(3))
    neg = W.copy()
    neg[0, 1] = -0.1
    neg[0, 0] += 0.1
    with pytest.raises(ValueError, match="negative"):
        check(neg)
    nan = W.copy()
    nan[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        check(nan)
    inf = W.copy()
    inf[1, 2] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        check(inf)
    with pytest.raises(ValueError, match="square"):
        check(np.ones((2, 3)) / 3)
    with pytest.raises(ValueError, match="real"):
        check(W.astype(complex))


def test_prescribed_pi_rejects_unbalanced():
    pi = np.full(3, 1 / 3)
    with pytest.raises(ValueError, match="weight-balanced"):
        g.prescribed_pi_weights(g.path(3, directed=True), pi)
    with pytest.raises(ValueError, match="weight-balanced"):
        g.prescribed_pi_weights(A3, pi)


@pytest.mark.parametrize("pi", [
    [0.5, 0.5],                      # wrong shape
    [0.5, 0.5, 0.0],                 # zero entry
    [0.6, 0.6, -0.2],                # negative entry
    [0.3, 0.3, 0.3],                 # does not sum to 1
    [0.5, np.nan, 0.5],              # NaN
])
def test_prescribed_pi_rejects_bad_pi(pi):
    with pytest.raises(ValueError, match="pi"):
        g.prescribed_pi_weights(g.ring(3), np.array(pi))


@pytest.mark.parametrize("scale", [0.0, -0.1, 0.25, 0.3, np.nan, np.inf])
def test_prescribed_pi_rejects_bad_scale(scale):
    pi = np.array([0.5, 0.25, 0.25])          # c_max = min(pi) = 0.25 on ring(3)
    with pytest.raises(ValueError, match="scale"):
        g.prescribed_pi_weights(g.ring(3), pi, scale=scale)
    W = g.prescribed_pi_weights(g.ring(3), pi, scale=0.2499)
    assert np.all(np.diag(W) > 0)
