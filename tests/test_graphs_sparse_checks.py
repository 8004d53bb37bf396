"""Graph checks, the Perron vector and networkx output on scipy sparse graphs.

Every sparse answer is compared with the dense function's answer on the same graph (small
graphs, including ones that are not strongly connected and periodic ones); the large cases
(n = 10^5) check strong connectivity with a planted cut and the Perron vector of a reversible
chain whose π is known in closed form.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import decentral.graphs as g
from decentral.graphs import checks, perron
from decentral.graphs.checks import diameter_bounds


def _weights(adj, seed=0, *, self_weight=True):
    """Random row-stochastic CSR weights on the pattern of ``adj`` (dense or sparse); with
    ``self_weight=False`` the diagonal is left out (a periodic chain where the graph is)."""
    a = sp.csr_array(adj, dtype=bool)
    if not self_weight:
        a = sp.csr_array(a.astype(np.int8) - sp.eye_array(a.shape[0], dtype=np.int8)).astype(bool)
        a.eliminate_zeros()
    rng = np.random.default_rng(seed)
    w = sp.csr_array((rng.uniform(0.05, 1.0, a.nnz), a.indices.copy(), a.indptr.copy()),
                     shape=a.shape)
    w.data /= np.repeat(w.sum(axis=1), np.diff(w.indptr))
    return w


def _two_closed_classes():
    """Agents {0, 1} and {3, 4} each hear only each other; agent 2 hears both groups."""
    edges = np.array([[0, 1], [1, 0], [3, 4], [4, 3], [1, 2], [3, 2]])
    return g.from_edges(5, edges)


SMALL = {
    "ring6": g.ring(6),
    "ring5_undirected": g.ring(5, directed=False),
    "path5": g.path(5),                     # not strongly connected, one closed class {0}
    "star7": g.star(7),
    "grid3x4": g.grid2d(3, 4),
    "exponential20": g.exponential(20),
    "two_classes": _two_closed_classes(),
    "erdos_renyi_weak": g.erdos_renyi(12, 0.2, kind="weak", seed=3),
}
FORMATS = [sp.csr_array, sp.csc_array, sp.coo_array, sp.csr_matrix]


@pytest.mark.parametrize("name", SMALL)
@pytest.mark.parametrize("fmt", FORMATS)
def test_strong_connectivity_and_diameter_match_dense(name, fmt):
    adj = SMALL[name]
    w = _weights(adj, seed=1)
    for dense, sparse in [(adj, fmt(adj)), (w.toarray(), fmt(w))]:
        assert checks.is_strongly_connected(sparse) == checks.is_strongly_connected(dense)
        assert checks.diameter(sparse) == checks.diameter(dense)
        lower, upper = diameter_bounds(sparse)
        assert (lower, upper) == diameter_bounds(dense)
        d = checks.diameter(dense)
        assert lower <= d <= upper
        assert (lower == math.inf) == (d == math.inf)


def test_the_small_graphs_cover_both_verdicts():
    verdicts = {name: g.is_strongly_connected(a) for name, a in SMALL.items()}
    assert verdicts["ring6"] and not verdicts["path5"] and not verdicts["two_classes"]
    assert checks.diameter(sp.csr_array(SMALL["ring6"])) == 5
    assert checks.diameter(sp.csr_array(SMALL["path5"])) == math.inf


def test_diameter_bounds_of_undirected_and_exponential_graphs():
    # undirected: max(e) <= D <= 2 e; the exponential graph has the same eccentricity everywhere
    assert diameter_bounds(g.ring(6, directed=False, sparse=True)) == (3, 6)
    assert diameter_bounds(g.exponential(1024, sparse=True)) == (10, 20)
    assert checks.diameter(g.exponential(1024, sparse=True)) == 10
    assert diameter_bounds(g.ring(1, sparse=True)) == (0, 0)
    with pytest.raises(ValueError, match="sweeps must be >= 1"):
        diameter_bounds(g.ring(4, sparse=True), sweeps=0)


def test_exact_sparse_diameter_is_refused_above_the_work_limit(monkeypatch):
    adj = g.exponential(64, sparse=True)
    assert checks.diameter(adj) == 6
    monkeypatch.setattr(checks, "DIAMETER_EXACT_WORK", 64 * adj.nnz - 1)
    with pytest.raises(ValueError, match=r"diameter_bounds\(graph\)"):
        checks.diameter(adj)
    assert checks.diameter(g.path(64, sparse=True)) == math.inf     # decided at any size
    assert g.diameter(adj.toarray()) == 6                           # the dense path has no limit


def test_sparse_diameter_over_several_source_blocks(monkeypatch):
    monkeypatch.setattr(checks, "_DISTANCE_BLOCK_ENTRIES", 30)     # blocks of one source
    for a in [g.ring(9), g.grid2d(3, 5), g.exponential(30)]:
        assert checks.diameter(sp.csr_array(a)) == checks.diameter(a)


@pytest.mark.parametrize("name", SMALL)
def test_closed_classes_match_dense(name):
    adj = SMALL[name]
    dense = [c.tolist() for c in g.closed_classes(adj)]
    assert [c.tolist() for c in g.closed_classes(sp.csr_array(adj))] == dense
    assert [c.tolist() for c in g.closed_classes(_weights(adj))] == dense


PERRON_CASES = {
    "ring6": (g.ring(6), True),
    "ring8_no_self_weight": (g.ring(8), False),               # period 8
    "ring6_undirected_no_self_weight": (g.ring(6, directed=False), False),   # period 2
    "path5": (g.path(5), True),                                # closed class {0}
    "star7": (g.star(7), True),
    "grid3x4_no_self_weight": (g.grid2d(3, 4), False),        # bipartite: period 2
    "exponential20": (g.exponential(20), True),
    "erdos_renyi_strong": (g.erdos_renyi(15, 0.3, seed=2), True),
}


@pytest.mark.parametrize("name", PERRON_CASES)
@pytest.mark.parametrize("solver", ["gth", "power", "lu"])
def test_perron_vector_matches_dense(name, solver, monkeypatch):
    adj, self_weight = PERRON_CASES[name]
    w = _weights(adj, seed=4, self_weight=self_weight)
    dense = g.perron_vector(w.toarray())
    if solver == "gth":
        np.testing.assert_array_equal(g.perron_vector(w), dense)      # the same reduction
        return
    monkeypatch.setattr(perron, "SPARSE_GTH_LIMIT", 0)
    if solver == "lu":
        monkeypatch.setattr(perron, "_POWER_MAX_STEPS", 1)
    pi = g.perron_vector(sp.coo_array(w))
    np.testing.assert_allclose(pi, dense, rtol=0, atol=1e-10)
    assert pi.dtype == np.float64 and abs(pi.sum() - 1.0) < 1e-12


def test_power_iteration_gives_up_on_a_slow_chain_and_lu_solves_it(monkeypatch):
    w = _weights(g.ring(40), seed=5)
    monkeypatch.setattr(perron, "_POWER_MAX_STEPS", 50)
    assert perron._stationary_power(w) is None                 # 40-ring: contraction ≈ 0.99
    monkeypatch.setattr(perron, "SPARSE_GTH_LIMIT", 0)
    np.testing.assert_allclose(g.perron_vector(w), g.perron_vector(w.toarray()), atol=1e-10)


def test_sparse_perron_vector_keeps_the_dtype():
    w = _weights(g.exponential(16), seed=6).astype(np.float32)
    pi = g.perron_vector(w)
    assert pi.dtype == np.float32
    np.testing.assert_array_equal(pi, g.perron_vector(w.toarray()))


def _error(fn, arg):
    with pytest.raises(ValueError) as info:
        fn(arg)
    return str(info.value)


def test_perron_failures_give_the_dense_messages():
    two = _weights(_two_closed_classes(), seed=7)
    message = _error(g.perron_vector, two)
    assert "has 2 closed classes" in message and "[0, 1]" in message and "[3, 4]" in message
    assert message == _error(g.perron_vector, two.toarray())
    bad_row = two.copy()
    bad_row.data[:2] *= 1.5                                         # row 0 sums to 1.5
    message = _error(g.perron_vector, bad_row)
    assert message.startswith("W must be row-stochastic but row 0 sums to")
    assert message == _error(g.perron_vector, bad_row.toarray())
    negative = _weights(g.ring(4), seed=8)
    negative.data[1] = -0.25
    assert _error(g.perron_vector, negative) == _error(g.perron_vector, negative.toarray())
    assert "negative" in _error(g.perron_vector, negative)
    nan = _weights(g.ring(4), seed=8)
    nan.data[3] = np.nan
    assert _error(g.perron_vector, nan) == _error(g.perron_vector, nan.toarray())
    assert "must hold real numbers" in _error(g.perron_vector, g.ring(4, sparse=True))
    with pytest.raises(ValueError, match="square"):
        g.perron_vector(sp.csr_array(np.ones((2, 3)) / 3))


def test_integer_weights_are_read_as_float64_like_dense():
    w = sp.csr_array(np.array([[0, 1], [1, 0]], dtype=np.int64))     # period 2, π = (1/2, 1/2)
    np.testing.assert_array_equal(g.perron_vector(w), g.perron_vector(w.toarray()))
    np.testing.assert_allclose(g.perron_vector(w), [0.5, 0.5])


def test_pattern_failures_give_the_dense_messages():
    no_self = sp.csr_array(np.array([[0.0, 1.0], [0.5, 0.5]]))
    assert _error(g.is_strongly_connected, no_self) == \
        _error(g.is_strongly_connected, no_self.toarray())
    integer = sp.csr_array(np.eye(3, dtype=np.int32))
    assert _error(g.diameter, integer) == _error(g.diameter, integer.toarray())
    lacking = sp.csr_array(np.array([[True, True], [False, False]]))
    assert "lacks self-loops at agents [1]" in _error(g.is_strongly_connected, lacking)


def test_stored_zeros_are_not_edges():
    w = _weights(g.ring(5), seed=9)
    w.data[w.indices != np.repeat(np.arange(5), np.diff(w.indptr))] = 0.0   # keep self-weights
    assert not g.is_strongly_connected(w)
    assert g.diameter(w) == math.inf
    assert g.is_strongly_connected(_weights(g.ring(5), seed=9))


def test_min_positive_weight_of_a_sparse_matrix():
    w = _weights(g.exponential(12), seed=10)
    assert g.min_positive_weight(w) == g.min_positive_weight(w.toarray())
    with pytest.raises(ValueError, match=r"dense arrays only.*an element of Ws"):
        g.min_positive_weight([w.toarray(), w])


@pytest.mark.parametrize("name", SMALL)
@pytest.mark.parametrize("self_loops", [False, True])
def test_to_networkx_matches_dense(name, self_loops):
    adj = SMALL[name]
    dense = g.to_networkx(adj, self_loops=self_loops)
    for fmt in FORMATS:
        sparse = g.to_networkx(fmt(adj), self_loops=self_loops)
        assert list(sparse.nodes) == list(dense.nodes)
        assert list(sparse.edges) == list(dense.edges)               # same edges, same order
    assert nx.utils.graphs_equal(dense, g.to_networkx(sp.csr_array(adj), self_loops=self_loops))


def test_to_networkx_refuses_what_dense_refuses():
    with pytest.raises(ValueError, match="lacks self-loops"):
        g.to_networkx(sp.csr_array(np.array([[False, True], [True, True]])))
    with pytest.raises(ValueError, match="boolean"):
        g.to_networkx(sp.csr_array(np.eye(2)))


def test_functions_still_dense_only_refuse_sparse_clearly():
    adj = g.ring(4, sparse=True)
    for fn in (g.r_robustness, lambda a: g.is_r_robust(a, 1), lambda a: g.is_rs_robust(a, 1, 1),
               lambda a: g.robustness_witness(a, 1), lambda a: checks.pattern_stack([a, a]),
               lambda a: g.absolute_probability_sequence(a, 3),
               lambda a: g.absolute_probability_sequence([a.toarray(), a], 1)):
        with pytest.raises(ValueError, match="dense arrays only"):
            fn(adj)


# ---- large n --------------------------------------------------------------------------------

N_LARGE = 100_000


def test_strong_connectivity_at_large_n():
    adj = g.exponential(N_LARGE, sparse=True)
    assert g.is_strongly_connected(adj)
    cut = adj.copy()                                # agent 7 hears nobody: nobody reaches it
    row = slice(cut.indptr[7], cut.indptr[8])
    cut.data[row] = cut.indices[row] == 7
    assert not g.is_strongly_connected(cut)
    assert g.diameter(cut) == math.inf
    # a circulant graph: every agent has the same out- and in-eccentricity e, and D = e
    e = int(shortest_path(adj, unweighted=True, indices=0).max())
    assert 10 <= e <= 17
    assert diameter_bounds(adj) == (e, 2 * e)


def test_perron_vector_of_a_large_reversible_chain():
    """W = D⁻¹ C for symmetric conductances C has π_i ∝ Σ_j C_ij (detailed balance), so the
    exact answer is known at n = 10^5 without any dense solve."""
    a = g.exponential(N_LARGE, sparse=True)
    upper = sp.triu(a + a.T, k=1, format="csr")
    rng = np.random.default_rng(11)
    upper.data = rng.uniform(0.1, 1.0, upper.nnz)
    c = sp.csr_array(upper + upper.T + sp.diags_array(rng.uniform(0.1, 1.0, N_LARGE)))
    degree = c.sum(axis=1)
    w = sp.csr_array(sp.diags_array(1.0 / degree) @ c)
    pi = g.perron_vector(w)
    np.testing.assert_allclose(pi, degree / degree.sum(), rtol=1e-9, atol=0)
    assert np.abs(w.T @ pi - pi).sum() < 1e-12


def test_perron_vector_of_a_large_closed_class_inside_a_larger_graph():
    """A closed class of 60 000 agents (an exponential graph) that 40 000 others hear."""
    m, n = 60_000, N_LARGE
    inner = g.exponential(m, sparse=True)
    rows = np.concatenate([np.repeat(np.arange(m), np.diff(inner.indptr)),
                           np.arange(m, n), np.arange(m, n)])
    cols = np.concatenate([inner.indices, np.arange(m, n), np.arange(n - m) % m])
    adj = sp.csr_array((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(n, n))
    w = _weights(adj, seed=12)
    pi = g.perron_vector(w)
    assert np.all(pi[m:] == 0) and np.all(pi[:m] > 0)
    assert abs(pi.sum() - 1.0) < 1e-12 and np.abs(w.T @ pi - pi).sum() < 1e-12


def test_connectivity_windows_of_sparse_lists_match_the_dense_answers():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n, t = int(rng.integers(2, 9)), int(rng.integers(1, 6))
        pats = []
        for _ in range(t):
            a = rng.random((n, n)) < 0.25
            np.fill_diagonal(a, True)
            pats.append(a)
        sparse = [sp.csr_array(a) for a in pats]
        assert g.connectivity_window(sparse) == g.connectivity_window(pats)
        for window in range(1, t + 1):
            want = g.connectivity_window_report(pats, window)
            got = g.connectivity_window_report(sparse, window)
            assert (got.holds, got.failing_start, got.unreachable_pairs, got.how) == \
                (want.holds, want.failing_start, want.unreachable_pairs, want.how)


def test_connectivity_window_of_a_large_sparse_periodic_sequence():
    # one-peer exponential on n = 2^14 > DENSE_LIMIT: only windows holding the shift-1 step
    # connect; without it every shift is even and the odd and even agents never meet
    n = 2**14
    seq = g.one_peer_exponential(n, backend="sparse")
    assert n > g.DENSE_LIMIT and seq.period == 14
    assert g.connectivity_window(seq) == 14
    report = g.connectivity_window_report(seq, 13)
    assert not report.holds and report.failing_start == 1
    assert report.unreachable_pairs == 2 * (n // 2) ** 2
    assert g.connectivity_window_report(seq, 14).holds


def test_connectivity_window_of_a_large_random_sparse_sequence_is_refused():
    seq = g.random_edge_drops(g.exponential(g.DENSE_LIMIT + 8, sparse=True), 0.2, key=0,
                              backend="sparse")
    with pytest.raises(ValueError, match="random sparse sequence .* not available"):
        g.connectivity_window(seq, horizon=4)
