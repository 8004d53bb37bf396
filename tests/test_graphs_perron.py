"""Tests of decentral.graphs Perron vectors and absolute probability sequences.

An absolute probability sequence satisfies π_tᵀ = π_{t+1}ᵀ W_t; that identity alone proves
little (any backward recursion satisfies it), so the main tests recover a KNOWN π: sequences
built with prescribed_pi_weights on different sub-cycles that share one π.
"""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

import decentral.graphs as g


def _random_strong_weights(rng, n, p=0.3):
    """Random row-stochastic W on a strongly connected pattern (a ring plus random edges)."""
    a = (rng.random((n, n)) < p) | g.ring(n)
    w = np.where(a, rng.uniform(0.05, 1.0, (n, n)), 0.0)
    return w / w.sum(axis=1, keepdims=True)


def _eig_left_perron(W):
    """Left eigenvector of eigenvalue 1 by a general eigen-solver (independent of the lib)."""
    vals, vecs = scipy.linalg.eig(W.T)
    k = int(np.argmin(np.abs(vals - 1.0)))
    v = np.real(vecs[:, k])
    return v / v.sum()


# Known-π sequences: three weight-balanced sub-cycles of 8 agents whose union is strongly
# connected; every W_k = prescribed_pi_weights(cycle_k, π) has πᵀ W_k = πᵀ.
N = 8
CYCLES = [
    [(0, 1), (1, 2), (2, 3), (3, 0)],          # (sender, receiver)
    [(3, 4), (4, 5), (5, 3)],
    [(5, 6), (6, 7), (7, 0), (0, 5)],
]


def _known_pi(seed=0):
    rng = np.random.default_rng(seed)
    pi = rng.uniform(0.5, 1.5, N)
    return pi / pi.sum()


def _known_pi_weights(pi):
    ws = [g.prescribed_pi_weights(g.from_edges(N, c), pi) for c in CYCLES]
    for w in ws:                                    # sanity of the fixture itself
        assert not g.is_strongly_connected(w)
        np.testing.assert_allclose(pi @ w, pi, atol=1e-15)
    return ws


# ---- Perron vector ------------------------------------------------------------------------

def test_perron_vector_by_hand():
    W = np.array([[0.5, 0.5], [0.25, 0.75]])
    np.testing.assert_allclose(g.perron_vector(W), [1 / 3, 2 / 3], rtol=0, atol=1e-14)
    np.testing.assert_allclose(g.perron_vector(g.row_stochastic(g.ring(5))), np.full(5, 0.2),
                               atol=1e-14)
    np.testing.assert_allclose(g.perron_vector(np.ones((1, 1))), [1.0])
    # star with uniform in-neighbour weights: π ∝ degree incl. self (reversible walk)
    W = g.row_stochastic(g.star(4))
    np.testing.assert_allclose(g.perron_vector(W), np.array([4, 2, 2, 2]) / 10, atol=1e-14)


@given(st.integers(1, 9), st.integers(0, 2**31 - 1))
def test_perron_vector_agrees_with_eigen_solver(n, seed):
    W = _random_strong_weights(np.random.default_rng(seed), n)
    pi = g.perron_vector(W)
    assert pi.shape == (n,)
    assert np.all(pi > 0)
    assert abs(pi.sum() - 1.0) < 1e-14
    np.testing.assert_allclose(pi @ W, pi, rtol=0, atol=1e-13)
    np.testing.assert_allclose(pi, _eig_left_perron(W), rtol=0, atol=1e-10)


def test_perron_vector_single_closed_class():
    # directed path: agent 0 hears only itself, so all mass ends on the closed class {0}
    np.testing.assert_allclose(g.perron_vector(g.row_stochastic(g.path(4))), [1, 0, 0, 0],
                               atol=1e-12)


def test_perron_vector_two_closed_classes_raises():
    W = scipy.linalg.block_diag(g.row_stochastic(g.ring(3)), g.row_stochastic(g.complete(2)))
    with pytest.raises(ValueError, match="not unique"):
        g.perron_vector(W)
    # a transient agent hearing both classes does not make π unique either
    W = np.zeros((5, 5))
    W[:2, :2] = 0.5
    W[2:4, 2:4] = 0.5
    W[4] = 0.2
    with pytest.raises(ValueError, match="not unique"):
        g.perron_vector(W)


def test_perron_vector_rejects_non_row_stochastic():
    W = g.column_stochastic(g.erdos_renyi(5, 0.4, kind="strong", seed=0))
    assert not g.is_row_stochastic(W)
    with pytest.raises(ValueError, match="row-stochastic"):
        g.perron_vector(W)
    with pytest.raises(ValueError, match="NaN"):
        g.perron_vector(np.array([[1.0, np.nan], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="negative"):
        g.perron_vector(np.array([[1.5, -0.5], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="square"):
        g.perron_vector(np.ones((2, 3)) / 3)


# ---- absolute probability sequence: exact forms ---------------------------------------------

def test_aps_static_is_perron_vector_at_every_t():
    W = _random_strong_weights(np.random.default_rng(1), 6)
    pi = g.perron_vector(W)
    for seq in (W, g.static(W), g.static(W, backend="sparse")):
        res = g.absolute_probability_sequence(seq, 9, return_info=True)
        assert isinstance(res, g.APSResult)
        assert res.pi.shape == (10, 6) and res.exact and res.error == 0.0
        np.testing.assert_allclose(res.pi, np.broadcast_to(pi, (10, 6)), rtol=0, atol=1e-13)
    plain = g.absolute_probability_sequence(W, 0)
    assert isinstance(plain, np.ndarray) and plain.shape == (1, 6)


def test_aps_periodic_identity_and_long_explicit_stack():
    rng = np.random.default_rng(2)
    n, P, T = 6, 3, 10
    # individually not strongly connected, union strongly connected
    parts = [g.from_edges(n, [(k, (k + 1) % n) for k in range(j, n, P)]) for j in range(P)]
    ws = []
    for a in parts:
        w = np.where(a, rng.uniform(0.2, 1.0, (n, n)), 0.0)
        ws.append(w / w.sum(axis=1, keepdims=True))
    seq = g.periodic(ws)
    res = g.absolute_probability_sequence(seq, T, return_info=True)
    pis = res.pi
    assert res.exact and pis.shape == (T + 1, n)
    np.testing.assert_allclose(pis.sum(axis=1), 1.0, atol=1e-14)
    assert np.all(pis > 0)
    for t in range(T):
        np.testing.assert_allclose(pis[t], pis[t + 1] @ ws[t % P], rtol=0, atol=1e-13)
    np.testing.assert_allclose(pis[P:], pis[:-P], atol=1e-13)          # period P
    # the same sequence as a long explicit stack, through the backward recursion
    long = g.explicit(seq.weights_host(3000))
    back = g.absolute_probability_sequence(long, T, return_info=True)
    assert not back.exact and back.error < 1e-12
    np.testing.assert_allclose(back.pi, pis, rtol=0, atol=1e-11)
    # π_0 is the Perron vector of the period product W_{P-1} ⋯ W_0
    np.testing.assert_allclose(pis[0], g.perron_vector(ws[2] @ ws[1] @ ws[0]), atol=1e-12)


def test_aps_periodic_not_uniformly_connected_raises():
    a = g.from_edges(4, [(0, 1), (1, 0)])
    b = g.from_edges(4, [(2, 3), (3, 2)])
    with pytest.raises(ValueError, match="not unique"):
        g.absolute_probability_sequence(g.periodic([a, b], rule="row"), 4)


# ---- absolute probability sequence: known π --------------------------------------------------

@pytest.mark.parametrize("order", ["cyclic", "random"])
def test_aps_recovers_known_pi_explicit_stack(order):
    pi = _known_pi(0)
    ws = _known_pi_weights(pi)
    rng = np.random.default_rng(5)
    L = 1500
    pick = np.arange(L) % 3 if order == "cyclic" else rng.integers(0, 3, L)
    stack = np.stack([ws[k] for k in pick])
    T = 20
    for seq in (stack, g.explicit(stack), g.explicit(stack, backend="sparse")):
        res = g.absolute_probability_sequence(seq, T, return_info=True)
        assert not res.exact
        assert res.error < 1e-12
        np.testing.assert_allclose(res.pi, np.broadcast_to(pi, (T + 1, N)), rtol=0, atol=1e-12)


def test_aps_recovers_known_pi_with_different_pis_per_sequence():
    """Two sequences on the same cycles but different π give their own π (not a default)."""
    for seed in (1, 2):
        pi = _known_pi(seed)
        ws = _known_pi_weights(pi)
        stack = np.stack([ws[k % 3] for k in range(600)])
        pis = g.absolute_probability_sequence(stack, 3)
        np.testing.assert_allclose(pis, np.broadcast_to(pi, pis.shape), rtol=0, atol=1e-12)
        assert np.max(np.abs(pis[0] - np.full(N, 1 / N))) > 1e-3


def test_aps_known_pi_periodic_form():
    pi = _known_pi(3)
    ws = _known_pi_weights(pi)
    pis = g.absolute_probability_sequence(g.periodic(ws), 7)
    np.testing.assert_allclose(pis, np.broadcast_to(pi, pis.shape), rtol=0, atol=1e-12)


def test_aps_error_decays_with_horizon():
    """A small max_horizon gives a larger error than a large one; the error decays."""
    pi = _known_pi(0)
    ws = _known_pi_weights(pi)
    stack = np.stack([ws[k % 3] for k in range(3000)])
    T = 5
    actual, reported = [], []
    for cap in (100, 200, 400):              # all above the first horizon 2T + 64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = g.absolute_probability_sequence(stack, T, max_horizon=cap, return_info=True)
        assert res.horizon == cap
        actual.append(float(np.max(np.abs(res.pi - pi))))
        reported.append(res.error)
    assert actual[0] > actual[1] > actual[2] or actual[2] < 1e-15
    assert actual[0] > 1e-9                  # the smallest horizon is visibly inaccurate
    assert reported[0] > reported[1] > reported[2]
    assert reported[0] >= actual[0]          # the reported change bounds the error here
    full = g.absolute_probability_sequence(stack, T, return_info=True)
    assert full.error < 1e-13 and full.horizon < 3000
    np.testing.assert_allclose(full.pi, np.broadcast_to(pi, full.pi.shape), atol=1e-13)
    # a small cap warns that tol was not reached
    with pytest.warns(RuntimeWarning, match="did not reach"):
        g.absolute_probability_sequence(stack, T, max_horizon=100)


def test_aps_max_horizon_caps_the_horizon():
    """max_horizon is documented as a cap on H, also below the first horizon 2T + 64."""
    pi = _known_pi(0)
    stack = np.stack([w for _ in range(100) for w in _known_pi_weights(pi)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = g.absolute_probability_sequence(stack, 5, max_horizon=30, return_info=True)
    assert res.horizon <= 30


# ---- doubly stochastic => uniform ----------------------------------------------------------

def test_aps_doubly_stochastic_gives_uniform():
    for n in (2, 5, 8):
        pis = g.absolute_probability_sequence(g.one_peer_exponential(n), 6)
        np.testing.assert_allclose(pis, np.full((7, n), 1 / n), rtol=0, atol=1e-13)
    rng = np.random.default_rng(4)
    ws = [g.metropolis(g.erdos_renyi(6, 0.4, kind="undirected", seed=s)) for s in range(4)]
    stack = np.stack([ws[k] for k in rng.integers(0, 4, 400)])
    res = g.absolute_probability_sequence(stack, 10, return_info=True)
    np.testing.assert_allclose(res.pi, np.full((11, 6), 1 / 6), rtol=0, atol=1e-13)


def test_aps_random_sequence(x64):
    # per-seed Metropolis drops: doubly stochastic at every step, so π is uniform
    met = g.random_edge_drops(g.complete(5), 0.4, rule="metropolis", shared_across_seeds=False)
    with pytest.raises(ValueError, match="key"):
        g.absolute_probability_sequence(met, 4)
    res = g.absolute_probability_sequence(met, 4, key=jax.random.key(3), return_info=True)
    np.testing.assert_allclose(res.pi, np.full((5, 5), 0.2), rtol=0, atol=1e-12)
    assert not res.exact and res.error < 1e-12 and res.horizon is not None


# ---- short stacks and bad input ------------------------------------------------------------

def test_aps_short_explicit_stack_warns():
    pi = _known_pi(0)
    ws = _known_pi_weights(pi)
    T = 10
    stack = np.stack([ws[k % 3] for k in range(T + 5)])
    with pytest.warns(RuntimeWarning, match="too short"):
        pis = g.absolute_probability_sequence(g.explicit(stack), T)
    assert pis.shape == (T + 1, N)
    np.testing.assert_allclose(pis.sum(axis=1), 1.0, atol=1e-14)


def test_aps_stack_of_exactly_T_matrices():
    """With exactly T matrices π_T is the uniform start of the recursion, π_t = W_tᵀ π_{t+1}
    normalised below it: every row is a stochastic vector."""
    pi = _known_pi(0)
    ws = _known_pi_weights(pi)
    T = 6
    stack = np.stack([ws[k % 3] for k in range(T)])
    # hand numpy's small-buffer cache a NaN block of the result's size, so an entry the
    # function never writes shows up as NaN instead of whatever the memory held
    poison = np.full((T + 1, N), np.nan)
    del poison
    with pytest.warns(RuntimeWarning):
        pis = g.absolute_probability_sequence(stack, T)
    assert pis.shape == (T + 1, N)
    np.testing.assert_allclose(pis[T], np.full(N, 1 / N), rtol=0, atol=1e-15)
    for t in range(T):
        np.testing.assert_allclose(pis[t], pis[t + 1] @ stack[t], rtol=0, atol=1e-14)


def test_aps_stack_shorter_than_T_raises():
    stack = np.stack([g.row_stochastic(g.ring(4))] * 5)
    with pytest.raises(ValueError, match="supplies 5 matrices"):
        g.absolute_probability_sequence(stack, 6)
    with pytest.raises(ValueError, match="supplies 5 matrices"):
        g.absolute_probability_sequence(g.explicit(stack), 9)


def test_aps_rejects_non_row_stochastic():
    C = g.column_stochastic(g.erdos_renyi(5, 0.5, kind="strong", seed=2))
    R = g.row_stochastic(g.ring(5))
    with pytest.raises(ValueError, match="row-stochastic"):
        g.absolute_probability_sequence(C, 3)
    with pytest.raises(ValueError, match="row-stochastic"):
        g.absolute_probability_sequence(g.static(C), 3)
    with pytest.raises(ValueError, match="row-stochastic"):
        g.absolute_probability_sequence(g.periodic([R, C]), 3)
    with pytest.raises(ValueError, match=r"W_7 must be row-stochastic"):
        g.absolute_probability_sequence(np.stack([R] * 7 + [C] + [R] * 100), 3)
    with pytest.raises(ValueError, match="row-stochastic"):
        g.absolute_probability_sequence(g.explicit([R] * 3 + [C] * 80), 2)


def test_aps_bad_arguments():
    R = g.row_stochastic(g.ring(4))
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match="num_steps"):
            g.absolute_probability_sequence(R, bad)
    with pytest.raises(ValueError, match="shape"):
        g.absolute_probability_sequence(np.ones((2, 2, 4, 4)) / 4, 1)
    with pytest.raises(ValueError, match="NaN"):
        g.absolute_probability_sequence(np.full((4, 4), np.nan), 1)


def test_right_perron_vector_is_the_fixed_point_of_push_mixing():
    import scipy.sparse as sp

    adj = g.add_self_loops(g.from_edges(5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 3)]))
    C = g.column_stochastic(adj)
    v = g.right_perron_vector(C)
    np.testing.assert_allclose(C @ v, v, atol=1e-15)
    assert v.sum() == pytest.approx(1.0) and v.min() > 0
    # push-sum: repeated pushes of any x tend to v (1^T x)
    x = np.arange(5.0)
    for _ in range(400):
        x = C @ x
    np.testing.assert_allclose(x, v * 10.0, atol=1e-10)
    np.testing.assert_allclose(g.right_perron_vector(sp.csr_array(C)), v, atol=1e-14)
    with pytest.raises(ValueError, match="C must be column-stochastic"):
        g.right_perron_vector(g.row_stochastic(adj))
