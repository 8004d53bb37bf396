"""Tests of the builders' ``sparse=True``: CSR adjacencies equal to the dense ones, built in
O(edges), random graphs of the right kind and density, the dense size limit.

Orientation everywhere: ``adj[i, j]`` True iff agent i receives from agent j (edge j -> i);
row i of a CSR adjacency lists agent i's in-neighbours, itself included.
"""

from __future__ import annotations

import math
import time

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import decentral.graphs as g
from decentral.graphs.sparse import as_sparse_adjacency, csr_from_pairs


def _assert_csr(a, n: int) -> None:
    """A canonical boolean CSR adjacency: type, shape, sorted unique indices, full diagonal."""
    assert isinstance(a, sp.csr_array), type(a)
    assert a.dtype == np.bool_
    assert a.shape == (n, n)
    assert a.indptr.shape == (n + 1,) and a.indptr[0] == 0 and a.indptr[-1] == a.nnz
    assert np.all(a.data)                                   # no stored False
    assert np.all(np.diff(a.indptr) >= 1)
    # strictly increasing column indices inside every row: sorted and without repeats
    steps = np.diff(a.indices.astype(np.int64))
    row_starts = a.indptr[1:-1] - 1                          # the steps across row boundaries
    inside = np.ones(steps.size, dtype=bool)
    inside[row_starts[(row_starts >= 0) & (row_starts < steps.size)]] = False
    assert np.all(steps[inside] > 0), "unsorted or repeated column indices in a row"
    assert np.all((a.indices >= 0) & (a.indices < n))
    assert np.all(a.diagonal())


def _assert_same_graph(dense: np.ndarray, a) -> None:
    _assert_csr(a, dense.shape[0])
    np.testing.assert_array_equal(a.toarray(), dense)
    assert a.nnz == int(dense.sum())


def _write_adjlist(path, graph: nx.Graph) -> None:
    nx.write_multiline_adjlist(graph, path)


def _networkx_cases():
    labelled = nx.relabel_nodes(nx.cycle_graph(5), {k: f"a{k}" for k in range(5)})
    return [("nx_digraph", lambda n: nx.gnp_random_graph(n, 0.4, seed=n, directed=True), {}),
            ("nx_graph", lambda n: nx.gnp_random_graph(n, 0.4, seed=n), {}),
            ("nx_labels", lambda n: labelled, {"nodes": [f"a{k}" for k in (4, 2, 0, 1, 3)]})]


EDGE_LIST = [(0, 1), (1, 2), (2, 0), (0, 1), (3, 3), (4, 0)]      # a repeat and a self-loop

BUILDERS = [
    ("ring_directed", lambda n, s: g.ring(n, directed=True, sparse=s)),
    ("ring_undirected", lambda n, s: g.ring(n, directed=False, sparse=s)),
    ("path_directed", lambda n, s: g.path(n, directed=True, sparse=s)),
    ("path_undirected", lambda n, s: g.path(n, directed=False, sparse=s)),
    ("star", lambda n, s: g.star(n, sparse=s)),
    ("complete", lambda n, s: g.complete(n, sparse=s)),
    ("circulant", lambda n, s: g.circulant(n, [1, 3, -2, 7], sparse=s)),
    ("circulant_merging", lambda n, s: g.circulant(n, [0, n, -n, 2 * n + 1, 1], sparse=s)),
    ("exponential", lambda n, s: g.exponential(n, sparse=s)),
    ("grid2d", lambda n, s: g.grid2d(n, 3, sparse=s)),
    ("grid2d_column", lambda n, s: g.grid2d(1, n, sparse=s)),
    ("from_edges_list",
     lambda n, s: g.from_edges(n, [(a % n, b % n) for a, b in EDGE_LIST], sparse=s)),
    ("from_edges_array",
     lambda n, s: g.from_edges(n, np.array(EDGE_LIST, dtype=np.int32) % n, sparse=s)),
    ("random_regular",
     lambda n, s: g.random_regular(n, max(1, (n - 1) // 2), seed=n, sparse=s) if n > 1
     else g.ring(1, sparse=s)),
]


@pytest.mark.parametrize("name,builder", BUILDERS, ids=[b[0] for b in BUILDERS])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_sparse_equals_dense(name, builder, n):
    _assert_same_graph(builder(n, False), builder(n, True))


@pytest.mark.parametrize("n", [1, 2, 6, 11])
@pytest.mark.parametrize("case", _networkx_cases(), ids=lambda c: c[0])
def test_from_networkx_sparse_equals_dense(case, n):
    _, make, kwargs = case
    graph = make(n)
    dense = g.from_networkx(graph, **kwargs)
    _assert_same_graph(dense, g.from_networkx(graph, sparse=True, **kwargs))


@pytest.mark.parametrize("directed", [True, False])
def test_read_adjlist_sparse_equals_dense(tmp_path, directed):
    graph = nx.gnp_random_graph(9, 0.3, seed=4, directed=directed)
    file = tmp_path / "g.adjlist"
    _write_adjlist(file, graph)
    dense = g.read_adjlist(file, directed=directed)
    _assert_same_graph(dense, g.read_adjlist(file, directed=directed, sparse=True))


def test_add_self_loops_sparse_in_and_out():
    raw = np.array([[False, True, False], [False, False, False], [True, True, True]])
    want = g.add_self_loops(raw)
    csr = sp.csr_array(raw)
    out = g.add_self_loops(csr)
    _assert_same_graph(want, out)
    assert not csr[[0]].toarray()[0, 0]                       # input not modified
    _assert_same_graph(want, g.add_self_loops(raw, sparse=True))
    _assert_same_graph(want, g.add_self_loops(sp.coo_array(raw)))  # any format in, CSR out
    np.testing.assert_array_equal(g.add_self_loops(csr, sparse=False), want)
    # stored False entries and repeats are dropped
    odd = sp.csr_array((np.array([True, False, True, True]), np.array([1, 0, 2, 2]),
                        np.array([0, 2, 2, 4])), shape=(3, 3))
    _assert_csr(g.add_self_loops(odd), 3)
    np.testing.assert_array_equal(g.add_self_loops(odd).toarray(),
                                  g.add_self_loops(odd.toarray()))
    with pytest.raises(ValueError, match="boolean"):
        g.add_self_loops(sp.csr_array(raw.astype(np.int8)))
    with pytest.raises(ValueError, match="square"):
        g.add_self_loops(sp.csr_array(np.ones((2, 3), dtype=bool)))


# ---- the checks of the test itself must be able to fail --------------------------------------

def test_planted_wrong_orientation_fails_the_comparison():
    dense = g.ring(5, directed=True)
    transposed = g.ring(5, directed=True, sparse=True).T.tocsr()   # i hears i + 1: wrong
    _assert_csr(transposed, 5)                                      # a valid CSR adjacency...
    with pytest.raises(AssertionError):
        _assert_same_graph(dense, transposed)                       # ...of the wrong graph


def test_planted_non_canonical_csr_fails():
    good = g.ring(4, sparse=True)
    unsorted = sp.csr_array((good.data, good.indices[::-1].copy(), good.indptr), shape=(4, 4))
    with pytest.raises(AssertionError, match="unsorted or repeated"):
        _assert_csr(unsorted, 4)
    repeated = sp.csr_array((np.ones(3, dtype=bool), np.array([0, 0, 1]),
                             np.array([0, 2, 3])), shape=(2, 2))
    with pytest.raises(AssertionError):
        _assert_csr(repeated, 2)
    no_self = sp.csr_array((np.ones(2, dtype=bool), np.array([1, 0]), np.array([0, 1, 2])),
                           shape=(2, 2))
    with pytest.raises(AssertionError):
        _assert_csr(no_self, 2)


def test_csr_from_pairs_merges_repeats_and_sorts():
    a = csr_from_pairs(4, np.array([3, 3, 3, 0, 3]), np.array([2, 0, 2, 1, 1]))
    _assert_csr(a, 4)
    assert a[[3]].indices.tolist() == [0, 1, 2, 3]
    assert a.nnz == 4 + 4


# ---- from_edges with an array ---------------------------------------------------------------

def test_from_edges_array_equals_list_and_checks():
    rng = np.random.default_rng(0)
    edges = rng.integers(0, 50, size=(400, 2))
    as_list = [tuple(map(int, e)) for e in edges]
    np.testing.assert_array_equal(g.from_edges(50, edges), g.from_edges(50, as_list))
    _assert_same_graph(g.from_edges(50, as_list), g.from_edges(50, edges, sparse=True))
    for empty in (np.zeros((0, 2), dtype=int), np.zeros(0, dtype=int), []):
        _assert_same_graph(np.eye(3, dtype=bool), g.from_edges(3, empty, sparse=True))
    with pytest.raises(ValueError, match="outside"):
        g.from_edges(3, np.array([[0, 1], [2, 3]]), sparse=True)
    with pytest.raises(ValueError, match="outside"):
        g.from_edges(3, np.array([[-1, 1]]))
    with pytest.raises(ValueError, match="integer indices"):
        g.from_edges(3, np.array([[0.0, 1.0]]), sparse=True)
    with pytest.raises(ValueError, match="integer indices"):
        g.from_edges(3, np.array([[True, False]]))
    with pytest.raises(ValueError, match="pair"):
        g.from_edges(3, np.array([[0, 1, 2]]), sparse=True)
    with pytest.raises(ValueError, match="pair"):
        g.from_edges(3, [(0, 1, 2)], sparse=True)


def test_from_edges_array_at_scale_is_vectorised():
    n, count = 200_000, 2_000_000
    rng = np.random.default_rng(1)
    edges = rng.integers(0, n, size=(count, 2))
    start = time.perf_counter()
    a = g.from_edges(n, edges, sparse=True)
    took = time.perf_counter() - start
    _assert_csr(a, n)
    keys = np.unique(np.concatenate([edges[:, 1] * n + edges[:, 0], np.arange(n) * (n + 1)]))
    assert a.nnz == keys.size
    assert took < 20.0            # a Python loop over 2e6 edges would take far longer


# ---- Erdős–Rényi -----------------------------------------------------------------------------

def _components(a, connection: str) -> int:
    return connected_components(a, directed=True, connection=connection, return_labels=False)


def _assert_kind(a, kind: str) -> None:
    if kind == "strong":
        assert _components(a, "strong") == 1
    elif kind == "undirected":
        assert (a != a.T).nnz == 0                                   # symmetric
        assert _components(a, "strong") == 1
    else:
        assert _components(a, "weak") == 1
        assert _components(a, "strong") > 1


@pytest.mark.parametrize("kind", ["strong", "weak", "undirected"])
@pytest.mark.parametrize("n,p,max_tries", [
    (2, 0.5, 200), (12, 0.3, 200), (60, 0.1, 200),
    (50, 0.5, 2),         # weak is hopeless by rejection here: the construction of step 3
    (300, 0.001, 2),      # far below the connectivity threshold: constructions for strong/und.
    (40, 0.0, 1), (30, 1.0, 3),
])
def test_erdos_renyi_sparse_has_its_kind(kind, n, p, max_tries):
    for seed in range(3):
        a = g.erdos_renyi(n, p, kind=kind, seed=seed, max_tries=max_tries, sparse=True)
        _assert_csr(a, n)
        _assert_kind(a, kind)


def test_erdos_renyi_sparse_is_reproducible_and_seeded():
    a = g.erdos_renyi(500, 0.02, kind="strong", seed=7, sparse=True)
    b = g.erdos_renyi(500, 0.02, kind="strong", seed=7, sparse=True)
    c = g.erdos_renyi(500, 0.02, kind="strong", seed=8, sparse=True)
    assert (a != b).nnz == 0
    assert (a != c).nnz > 0


@pytest.mark.parametrize("kind", ["strong", "undirected"])
def test_erdos_renyi_sparse_density(kind):
    """Edge count, in-degree spread and the position of the edges of G(n, p).

    n = 3000, p = 0.01 (well above the connectivity threshold ln(n)/n = 0.0027, so the first
    draw is accepted and is exactly G(n, p)). Tolerances: 5 standard deviations for the count
    and the share of edges below the diagonal, 15 % for the in-degree variance (its standard
    error is about sqrt(2 / n) = 2.6 %); halving p, dropping the upper triangle or giving
    every row the same degree all fail.
    """
    n, p = 3000, 0.01
    a = g.erdos_renyi(n, p, kind=kind, seed=11, sparse=True)
    rows = np.repeat(np.arange(n), np.diff(a.indptr))
    off = rows != a.indices
    receivers, senders = rows[off], a.indices[off]
    pairs = n * (n - 1) if kind == "strong" else n * (n - 1) // 2
    count = receivers.size if kind == "strong" else receivers.size // 2
    sd = math.sqrt(pairs * p * (1 - p))
    assert abs(count - pairs * p) < 5 * sd, (count, pairs * p, sd)
    degrees = np.bincount(receivers, minlength=n)
    assert abs(degrees.var() / ((n - 1) * p * (1 - p)) - 1) < 0.15
    below = np.mean(senders < receivers)
    assert abs(below - 0.5) < 5 * math.sqrt(0.25 / receivers.size)


def test_erdos_renyi_dense_unchanged_by_the_sparse_path():
    # dense graphs stay networkx's fast_gnp_random_graph of the seed (plus self-loops)
    graph = nx.fast_gnp_random_graph(30, 0.3, seed=5, directed=True)
    assert nx.is_strongly_connected(graph)
    np.testing.assert_array_equal(g.erdos_renyi(30, 0.3, kind="strong", seed=5),
                                  g.from_networkx(graph, nodes=list(range(30))))


# ---- random_regular --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 10])
def test_random_regular_small_all_k(n):
    for k in range(1, n):
        for seed in range(4):
            a = g.random_regular(n, k, seed=seed, sparse=True)
            _assert_csr(a, n)
            assert np.all(np.diff(a.indptr) == k + 1)                      # hears k + itself
            assert np.all(np.bincount(a.indices, minlength=n) == k + 1)    # heard by k + itself
            np.testing.assert_array_equal(a.toarray(), g.random_regular(n, k, seed=seed))


@pytest.mark.parametrize("n,k", [(2000, 3), (2000, 8), (500, 40), (301, 140), (300, 200)])
def test_random_regular_degrees_and_strong_connectivity(n, k):
    for seed in range(2):
        a = g.random_regular(n, k, seed=seed, sparse=True)
        _assert_csr(a, n)
        assert np.all(np.diff(a.indptr) == k + 1)
        assert np.all(np.bincount(a.indices, minlength=n) == k + 1)
        assert _components(a, "strong") == 1


def test_random_regular_is_not_a_fixed_pattern():
    n, k = 5000, 4
    a = g.random_regular(n, k, seed=0, sparse=True)
    b = g.random_regular(n, k, seed=1, sparse=True)
    assert (a != b).nnz > n                           # the seed matters
    rows = np.repeat(np.arange(n), np.diff(a.indptr))
    off = rows != a.indices
    gap = (a.indices[off] - rows[off]) % n            # a circulant would give k values only
    assert np.unique(gap).size > 1000
    assert abs(np.mean(gap < n / 2) - 0.5) < 5 * math.sqrt(0.25 / gap.size)


def test_random_regular_k1_is_a_derangement():
    a = g.random_regular(50, 1, seed=3)
    others = a & ~np.eye(50, dtype=bool)
    assert np.all(others.sum(axis=1) == 1) and np.all(others.sum(axis=0) == 1)


@pytest.mark.parametrize("n,k,match", [
    (5, 0, "1 <= k <= n - 1"), (5, 5, "1 <= k <= n - 1"), (1, 1, "1 <= k <= n - 1"),
    (5, 2.0, "must be an integer"), (5, True, "must be an integer"),
    (0, 1, "number of agents"),
])
def test_random_regular_rejects_bad_k(n, k, match):
    with pytest.raises(ValueError, match=match):
        g.random_regular(n, k)


def test_random_regular_rejects_bad_seed():
    with pytest.raises(ValueError, match="seed"):
        g.random_regular(5, 2, seed=-1)


# ---- the dense limit --------------------------------------------------------------------------

BIG = g.DENSE_LIMIT + 1

REFUSED = [
    ("ring", lambda s: g.ring(BIG, sparse=s)),
    ("path", lambda s: g.path(BIG, sparse=s)),
    ("star", lambda s: g.star(BIG, sparse=s)),
    ("circulant", lambda s: g.circulant(BIG, [1, 5], sparse=s)),
    ("exponential", lambda s: g.exponential(BIG, sparse=s)),
    ("grid2d", lambda s: g.grid2d(91, 91, sparse=s)),                   # 8281 agents
    ("from_edges", lambda s: g.from_edges(BIG, [(0, 1)], sparse=s)),
    ("from_networkx", lambda s: g.from_networkx(nx.empty_graph(BIG), sparse=s)),
    ("erdos_renyi", lambda s: g.erdos_renyi(BIG, 5e-3, kind="strong", seed=0, sparse=s)),
    ("random_regular", lambda s: g.random_regular(BIG, 2, sparse=s)),
]


@pytest.mark.parametrize("name,build", REFUSED, ids=[r[0] for r in REFUSED])
def test_dense_above_the_limit_is_refused_sparse_works(name, build):
    with pytest.raises(ValueError, match=r"sparse=True") as info:
        build(False)
    assert "n*n" in str(info.value) and "bytes" in str(info.value)
    a = build(True)
    assert isinstance(a, sp.csr_array) and a.shape[0] > g.DENSE_LIMIT


def test_dense_limit_edges():
    assert g.DENSE_LIMIT == 8192
    assert g.path(g.DENSE_LIMIT).shape == (8192, 8192)          # the limit itself is allowed
    with pytest.raises(ValueError, match="DENSE_LIMIT"):
        g.complete(BIG, sparse=True)                             # n^2 edges in either form
    with pytest.raises(ValueError, match="DENSE_LIMIT"):
        g.complete(BIG)
    big = g.ring(BIG, sparse=True)
    with pytest.raises(ValueError, match="sparse=True"):
        g.add_self_loops(big, sparse=False)
    with pytest.raises(ValueError, match="sparse must be True or False"):
        g.ring(4, sparse="yes")
    with pytest.raises(ValueError, match="sparse must be True or False"):
        g.erdos_renyi(4, 0.5, sparse=1)


def test_dense_functions_name_sparse_input_clearly():
    with pytest.raises(ValueError, match="scipy sparse csr array"):
        g.r_robustness(g.ring(4, sparse=True))
    with pytest.raises(ValueError, match="boolean"):
        as_sparse_adjacency(sp.csr_array(np.eye(3)))
    with pytest.raises(ValueError, match="self-loops"):
        as_sparse_adjacency(sp.csr_array(np.zeros((3, 3), dtype=bool)))


# ---- scale ------------------------------------------------------------------------------------

def test_exponential_at_a_million_agents():
    n = 10**6
    a = g.exponential(n, sparse=True)
    assert a.shape == (n, n) and a.dtype == np.bool_ and a.indices.dtype == np.int32
    assert a.nnz == n * 21                                      # 2^0..2^19 < n, plus itself
    assert np.all(np.diff(a.indptr) == 21)
    want = sorted({(0 - 2**k) % n for k in range(20)} | {0})
    assert a.indices[: a.indptr[1]].tolist() == want
    row = 777_777
    assert a.indices[a.indptr[row]: a.indptr[row + 1]].tolist() == sorted(
        {(row - 2**k) % n for k in range(20)} | {row})


def test_random_regular_at_a_million_agents():
    n, k = 10**6, 8
    a = g.random_regular(n, k, seed=0, sparse=True)
    assert a.shape == (n, n) and a.nnz == n * (k + 1)
    assert np.all(np.diff(a.indptr) == k + 1)
    assert np.all(np.bincount(a.indices, minlength=n) == k + 1)
    rows = np.repeat(np.arange(n, dtype=np.int32), k + 1)
    assert np.all(np.diff(a.indices)[np.diff(rows) == 0] > 0)   # sorted, no repeats
    assert np.all(a.diagonal())
