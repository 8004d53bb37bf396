"""Scipy sparse graphs through the weight rules, the neighbour tables and the fixed sequences.

Every comparison is dense input vs sparse input of the same graph, in float64: the weight rules
to 1e-15 (bit for bit except the Metropolis diagonal), the tables and sequences exactly, the
consensus and push-sum runs to a relative 1e-12. At scale, a static sequence of a million
agents is built without any ``[n, n]`` array and a run at 10^5 agents takes a few steps.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

import decentral.graphs as g
from decentral.consensus import consensus, consensus_params
from decentral.push_sum import push_sum, push_sum_params, ratio_of
from decentral.runner import run


def _kind(adj: np.ndarray, sparse: bool):
    return sp.csr_array(adj) if sparse else adj


RULES = {"row": g.row_stochastic, "column": g.column_stochastic, "metropolis": g.metropolis}

GRAPHS = {
    "ring_directed": lambda s: g.ring(7, sparse=s),
    "ring_undirected": lambda s: g.ring(6, directed=False, sparse=s),
    "exponential": lambda s: g.exponential(13, sparse=s),
    "star": lambda s: g.star(6, sparse=s),
    "grid2d": lambda s: g.grid2d(3, 4, sparse=s),
    # a sparse Erdos-Renyi draw is another graph than the dense one of its seed: convert
    "er_strong": lambda s: _kind(g.erdos_renyi(12, 0.3, kind="strong", seed=3), s),
    "er_undirected": lambda s: _kind(g.erdos_renyi(11, 0.4, kind="undirected", seed=5), s),
    "random_regular": lambda s: g.random_regular(10, 3, seed=2, sparse=s),
    "single_agent": lambda s: g.ring(1, sparse=s),
}


def _symmetric(a: np.ndarray) -> bool:
    return bool(np.array_equal(a, a.T))


def _cases(rule: str):
    """(name, dense adjacency, sparse adjacency) of every graph the rule applies to."""
    for name, build in GRAPHS.items():
        dense, csr = build(False), build(True)
        if rule == "metropolis" and not _symmetric(dense):
            continue
        yield name, dense, csr


def _assert_same_table(t1: g.NeighborTable, t2: g.NeighborTable) -> None:
    for a, b in zip(t1, t2, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


# ---- weight rules -----------------------------------------------------------------------------

@pytest.mark.parametrize("rule", sorted(RULES))
def test_sparse_rule_equals_dense_rule(rule):
    for name, dense, csr in _cases(rule):
        want = RULES[rule](dense)
        got = RULES[rule](csr)
        assert isinstance(got, sp.csr_array), name
        assert got.dtype == np.float64 and got.shape == dense.shape, name
        # same pattern and orientation: row i holds agent i's in-neighbours, self included
        np.testing.assert_array_equal(got.toarray() > 0, dense, err_msg=name)
        assert got.has_sorted_indices and got.nnz == dense.sum(), name
        np.testing.assert_allclose(got.toarray(), want, rtol=0, atol=1e-15, err_msg=name)
        if rule != "metropolis":                   # 1 / degree: the same division, bit for bit
            np.testing.assert_array_equal(got.toarray(), want, err_msg=name)


@pytest.mark.parametrize("fmt", ["csr_matrix", "coo_array", "csc_array", "lil_matrix"])
def test_rules_take_every_sparse_format(fmt):
    dense = g.exponential(9)
    other = getattr(sp, fmt)(dense)
    for rule, fn in RULES.items():
        if rule == "metropolis":
            dense_u = g.ring(9, directed=False)
            np.testing.assert_allclose(fn(getattr(sp, fmt)(dense_u)).toarray(), fn(dense_u),
                                       rtol=0, atol=1e-15)
            continue
        np.testing.assert_array_equal(fn(other).toarray(), fn(dense))


def test_prescribed_pi_weights_sparse_equals_dense():
    for build in (lambda s: g.ring(6, sparse=s), lambda s: g.exponential(8, sparse=s),
                  lambda s: g.ring(5, directed=False, sparse=s), lambda s: g.ring(1, sparse=s)):
        dense, csr = build(False), build(True)
        n = dense.shape[0]
        pi = np.arange(1.0, n + 1.0)
        pi /= pi.sum()
        want = g.prescribed_pi_weights(dense, pi)
        got = g.prescribed_pi_weights(csr, pi)
        assert isinstance(got, sp.csr_array)
        np.testing.assert_array_equal(got.toarray(), want)          # the same expressions
        np.testing.assert_array_equal(got.toarray() > 0, dense)
    with pytest.raises(ValueError, match="weight-balanced"):
        g.prescribed_pi_weights(g.path(4, sparse=True), np.full(4, 0.25))
    with pytest.raises(ValueError, match="pi must have shape"):
        g.prescribed_pi_weights(g.ring(4, sparse=True), np.full(3, 1 / 3))


def test_sparse_rule_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"metropolis weights need an undirected .* adj\["):
        g.metropolis(g.ring(5, sparse=True))
    with pytest.raises(ValueError, match="adj lacks self-loops"):
        g.row_stochastic(sp.csr_array(np.zeros((3, 3), dtype=bool)))
    with pytest.raises(ValueError, match="adj must be a boolean"):
        g.column_stochastic(sp.csr_array(np.eye(3)))


def test_stochasticity_checks_take_sparse_weights():
    csr = g.exponential(11, sparse=True)
    row, col = g.row_stochastic(csr), g.column_stochastic(csr)
    assert g.is_row_stochastic(row) and not g.is_column_stochastic(g.row_stochastic(
        g.star(5, sparse=True)))
    assert g.is_column_stochastic(col)
    assert g.is_doubly_stochastic(g.metropolis(g.ring(6, directed=False, sparse=True)))
    bad = row.copy()
    bad.data[0] = 0.9
    assert g.stochasticity_violations(bad, axis=1) == g.stochasticity_violations(
        bad.toarray(), axis=1)
    with pytest.raises(ValueError, match="W must be row-stochastic but row 0"):
        g.require_stochastic(bad, "row")
    neg = row.copy()
    neg.data[1] = -0.5
    with pytest.raises(ValueError, match="W has a negative entry"):
        g.is_row_stochastic(neg)


# ---- neighbour tables -------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_tables_from_sparse_equal_tables_from_dense(name, x64):
    dense, csr = GRAPHS[name](False), GRAPHS[name](True)
    n = dense.shape[0]
    for width in (None, n + 2):
        _assert_same_table(g.adjacency_to_table(csr, width=width),
                           g.adjacency_to_table(dense, width=width))
        for fn in (g.row_stochastic, g.column_stochastic):
            _assert_same_table(g.dense_to_table(fn(csr), width=width),
                               g.dense_to_table(fn(dense), width=width))
    with pytest.raises(ValueError, match="table width K=1"):
        g.adjacency_to_table(csr if n > 1 else g.ring(3, sparse=True), width=1)


def test_dense_to_table_reads_the_pattern_of_the_weights(x64):
    dense = np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.25, 0.0, 0.75]])
    # the same matrix with a stored zero at [1, 0] and a repeated entry at [2, 2]: read as W > 0
    data = np.array([0.5, 0.5, 0.0, 1.0, 0.25, 0.5, 0.25])
    indices = np.array([0, 1, 0, 1, 0, 2, 2])
    indptr = np.array([0, 2, 4, 7])
    odd = sp.csr_array((data, indices, indptr), shape=(3, 3))
    _assert_same_table(g.dense_to_table(odd), g.dense_to_table(dense))
    with pytest.raises(ValueError, match="W has no self-loop weight at agents"):
        g.dense_to_table(sp.csr_array(np.array([[0.0, 1.0], [0.0, 1.0]])))
    with pytest.raises(ValueError, match="W is a boolean sparse adjacency"):
        g.dense_to_table(g.ring(3, sparse=True))


# ---- sequences --------------------------------------------------------------------------------

@pytest.mark.parametrize("rule", sorted(RULES))
def test_static_sparse_input_gives_the_dense_inputs_tables(rule, x64):
    for name, dense, csr in _cases(rule):
        want = g.static(dense, rule=rule, backend="sparse")
        got = g.static(csr, rule=rule)
        assert got.backend == "sparse", name
        assert set(got.leaves) == {"idx", "weight", "mask"}, name
        for t in (0, 3):
            a, b = got.at(t), want.at(t)
            np.testing.assert_array_equal(np.asarray(a.idx), np.asarray(b.idx))
            np.testing.assert_array_equal(np.asarray(a.mask), np.asarray(b.mask))
            np.testing.assert_allclose(np.asarray(a.weight), np.asarray(b.weight), rtol=0,
                                       atol=1e-15)
        assert got.structure() == want.structure(), name
        assert got.describe() == want.describe()
        if rule != "metropolis":                   # bit-identical weights: the same digest
            assert got.digest() == want.digest(), name
        g.require_stochastic_sequence(got, "row" if rule != "column" else "column")


def test_periodic_and_explicit_take_sparse_graphs(x64):
    a, b = g.ring(8), g.exponential(8)
    lists = [([a, b], [sp.csr_array(a), sp.csr_array(b)]),
             ([a, b], [sp.coo_array(a), b])]              # a list may mix the two kinds
    for dense, mixed in lists:
        for make in (g.periodic, g.explicit):
            want = make(dense, rule="row", backend="sparse")
            got = make(mixed, rule="row")
            assert got.backend == "sparse" and got.digest() == want.digest()
            assert got.period == want.period and got.length == want.length
    weights = [g.row_stochastic(sp.csr_array(a)), g.column_stochastic(sp.csr_array(b))]
    got = g.periodic(weights)
    want = g.periodic([w.toarray() for w in weights], backend="sparse")
    assert got.digest() == want.digest() and got.rule is None
    np.testing.assert_array_equal(got.weights_host(2), want.weights_host(2))
    assert [w.nnz for w in got.fixed_csr()] == [16, 8 * 4]
    np.testing.assert_array_equal(got.fixed_csr()[1].toarray(), weights[1].toarray())


def test_dense_backend_of_a_small_sparse_graph_is_the_dense_sequence(x64):
    for rule in ("row", "column"):
        dense, csr = g.exponential(10), g.exponential(10, sparse=True)
        want = g.static(dense, rule=rule)
        got = g.static(csr, rule=rule, backend="dense")
        assert got.backend == "dense" and got.digest() == want.digest()
    w = g.row_stochastic(g.ring(5))
    assert g.static(sp.csr_array(w), backend="dense").digest() == g.static(w).digest()
    assert g.static(g.ring(5), rule="row").backend == "dense"        # dense input: unchanged


def test_sparse_weight_matrices_are_checked_like_dense_ones():
    ones = sp.csr_array(g.ring(4).astype(np.float64))
    with pytest.raises(ValueError, match="graph holds only 0s and 1s"):
        g.static(ones)
    half = sp.csr_array(0.5 * g.exponential(5).astype(np.float64))
    with pytest.raises(ValueError, match="graph is neither row- nor column-stochastic"):
        g.static(half)
    with pytest.raises(ValueError, match="graph is already a weight matrix .* rule='row'"):
        g.static(g.row_stochastic(g.ring(4, sparse=True)), rule="row")
    with pytest.raises(ValueError, match="graph is a boolean adjacency: pass rule="):
        g.static(g.ring(4, sparse=True))
    with pytest.raises(ValueError, match=r"graph 1 lacks self-loops"):
        g.periodic([g.ring(3, sparse=True), sp.csr_array((3, 3), dtype=bool)], rule="row")
    with pytest.raises(ValueError, match="same shape"):
        g.periodic([g.ring(3, sparse=True), g.ring(4, sparse=True)], rule="row")
    with pytest.raises(ValueError, match="wrap it in a list"):
        g.periodic(g.ring(3, sparse=True), rule="row")
    with pytest.raises(ValueError, match=r"metropolis weights need .* graph\["):
        g.static(g.ring(5, sparse=True), rule="metropolis")


def test_as_sequence_takes_sparse_graphs(x64):
    csr = g.exponential(12, sparse=True)
    seq = g.as_sequence(csr, rule="row")
    assert seq.backend == "sparse"
    assert seq.digest() == g.as_sequence(csr.toarray(), rule="row", backend="sparse").digest()
    w = g.column_stochastic(csr)
    assert g.as_sequence(w).digest() == g.static(w.toarray(), backend="sparse").digest()
    assert g.as_sequence(csr, default_rule="row").rule == "row"
    assert g.as_sequence(csr, rule="row", backend="dense").backend == "dense"
    with pytest.raises(ValueError, match="boolean sparse adjacency without a rule"):
        g.as_sequence(csr)
    with pytest.raises(ValueError, match="scipy sparse array of shape"):
        g.as_sequence(sp.csr_array((3, 4), dtype=bool), rule="row")
    with pytest.raises(ValueError, match="scipy sparse array of dtype"):
        g.as_sequence(sp.csr_array(np.eye(3, dtype=np.complex128)))


def test_random_edge_drops_takes_a_small_sparse_base():
    dense, csr = g.ring(6, directed=False), g.ring(6, directed=False, sparse=True)
    want = g.random_edge_drops(dense, 0.3, key=1, backend="sparse")
    got = g.random_edge_drops(csr, 0.3, key=1, backend="sparse")
    assert got.digest() == want.digest()
    big = g.ring(g.DENSE_LIMIT + 1, sparse=True)
    assert g.random_edge_drops(big, 0.3, key=1, backend="sparse").leaves["base"] is None
    with pytest.raises(ValueError, match="backend"):
        g.random_edge_drops(big, 0.3, key=1, backend="dense")


# ---- algorithms through the runner ------------------------------------------------------------

def _relative_close(a, b, rtol=1e-12):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype == np.float64
    scale = np.maximum(np.abs(b), 1.0)
    assert np.all(np.abs(a - b) <= rtol * scale), float(np.max(np.abs(a - b) / scale))


def test_consensus_and_push_sum_runs_equal_dense_and_sparse_inputs(x64):
    dense = g.erdos_renyi(15, 0.25, kind="strong", seed=4)
    csr = sp.csr_array(dense)
    x0 = np.linspace(-1.0, 2.0, 15)
    runs = {}
    for label, graph in (("dense", dense), ("sparse", csr)):
        seq = g.static(graph, rule="row", backend="sparse" if label == "sparse" else "dense")
        res = run(consensus(seq), consensus_params(x0), seeds=[0, 1], num_steps=30,
                  record_every=5)
        push = run(push_sum(graph, rule="column"), push_sum_params(x0), seeds=[0, 1],
                   num_steps=30, record_every=5, record_fn=ratio_of)
        runs[label] = (res.records.x, push.records)
        assert seq.backend == label
    for a, b in zip(runs["sparse"], runs["dense"], strict=True):
        _relative_close(a, b)
    # the sparse run really mixed: records moved towards the average
    assert np.ptp(np.asarray(runs["sparse"][0])[0, -1]) < np.ptp(x0)


def test_a_planted_wrong_orientation_fails_the_comparisons(x64):
    dense = g.exponential(9)
    transposed = sp.csr_array(dense.T)                # i hears i + 2^k: another graph
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(g.row_stochastic(transposed).toarray(),
                                      g.row_stochastic(dense))
    with pytest.raises(AssertionError):
        _assert_same_table(g.adjacency_to_table(transposed), g.adjacency_to_table(dense))
    x0 = np.linspace(0.0, 1.0, 9)
    a = run(consensus(g.static(transposed, rule="row")), consensus_params(x0), seeds=[0],
            num_steps=3).records.x
    b = run(consensus(g.static(dense, rule="row")), consensus_params(x0), seeds=[0],
            num_steps=3).records.x
    with pytest.raises(AssertionError):
        _relative_close(a, b)


# ---- scale ------------------------------------------------------------------------------------

def test_static_sequence_of_a_million_agents_without_dense_arrays():
    n = 10**6
    adj = g.exponential(n, sparse=True)
    start = time.perf_counter()
    seq = g.static(adj, rule="row")
    built = time.perf_counter() - start
    assert built < 10.0, f"building the sequence took {built:.1f} s"
    assert seq.backend == "sparse" and seq.n == n
    assert set(seq.leaves) == {"idx", "weight", "mask"}
    assert all(leaf.size <= n * 21 for leaf in seq.leaves.values())     # [1, n, K] each
    table = seq.at(5)
    assert table.idx.shape == (n, 21) and bool(np.asarray(table.mask).all())
    row = 777_777
    assert np.asarray(table.idx[row]).tolist() == [row] + sorted(
        (row - 2**k) % n for k in range(20))
    assert "n=1000000" in seq.describe() and seq.digest().startswith("graphs/1:")
    g.require_stochastic_sequence(seq, "row", who="test")             # reads the tables only
    with pytest.raises(ValueError, match="GraphSequence.dense_at .* DENSE_LIMIT"):
        seq.dense_at(0)
    with pytest.raises(ValueError, match="GraphSequence.weights_host .* DENSE_LIMIT"):
        seq.weights_host(1)
    with pytest.raises(ValueError, match="backend='dense' would turn the scipy sparse graph"):
        g.static(adj, rule="row", backend="dense")


def test_consensus_runs_at_a_hundred_thousand_agents():
    n = 10**5
    adj = g.exponential(n, sparse=True)
    res = run(consensus(adj, rule="row"), None, seeds=[0, 1], num_steps=4)
    x = np.asarray(res.records.x)
    assert x.shape == (2, 4, n) and np.all(np.isfinite(x))
    assert not np.array_equal(x[0], x[1])                 # each seed its own initial values
    spread = np.ptp(x, axis=2)                            # consensus contracts at every step
    assert np.all(np.diff(spread, axis=1) < 0)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 13, 100])
@pytest.mark.parametrize("rule", ["row", "column"])
def test_one_peer_exponential_sparse_has_width_two_and_the_dense_numbers(n, rule, x64):
    sparse = g.one_peer_exponential(n, rule=rule, backend="sparse")
    dense = g.one_peer_exponential(n, rule=rule, backend="dense")
    assert sparse.period == dense.period
    assert sparse.leaves["idx"].shape == (sparse.period, n, min(n, 2))
    x0 = np.random.default_rng(n).normal(size=(n, 3))
    got = run(consensus(sparse), consensus_params(x0), seeds=[0], num_steps=9).records.x
    want = run(consensus(dense), consensus_params(x0), seeds=[0], num_steps=9).records.x
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_one_peer_exponential_dense_refused_above_the_limit():
    with pytest.raises(ValueError, match="backend='sparse'"):
        g.one_peer_exponential(g.DENSE_LIMIT + 1)
    big = g.one_peer_exponential(g.DENSE_LIMIT + 1, backend="sparse")
    assert big.leaves["idx"].shape[1:] == (g.DENSE_LIMIT + 1, 2)


def test_large_sparse_stochasticity_check_reads_the_tables_and_names_the_first_failure():
    # Above DENSE_LIMIT the check sums the tables column by column; its verdict and the first
    # failing column must be those of the CSR weights (row weights of a graph whose
    # out-degrees differ are not column-stochastic).
    n = g.DENSE_LIMIT + 1
    seq = g.static(g.erdos_renyi(n, 4 / n, kind="strong", seed=1, sparse=True), rule="row")
    assert seq.backend == "sparse"
    assert g.sequence_stochasticity_failure(seq, "row") is None
    why = g.sequence_stochasticity_failure(seq, "column")
    (csr,) = seq.fixed_csr()
    bad = g.stochasticity_violations(csr, axis=0)
    assert bad and why is not None
    k, total = bad[0]
    assert f"column {k} sums to " in why
    assert float(why.split("sums to ")[1].split(")")[0]) == pytest.approx(total, rel=1e-12)
    with pytest.raises(ValueError, match=f"column {k} sums to"):
        g.require_stochastic_sequence(seq, "doubly", who="test")
