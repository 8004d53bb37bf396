"""``random_edge_drops`` on a scipy sparse base: one uniform per edge, no ``[n, n]`` array.

At or below ``DENSE_LIMIT`` the sparse base gives the very sequence of its dense copy (leaves,
digest, every step's table and a consensus run, bit for bit in float64). Above it the sequence is
built from the CSR arrays; each step's table is checked against a numpy reconstruction from the
same uniforms, with edges numbered independently of the library (``np.unique`` of the keys).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

import decentral.graphs as g
from decentral.consensus import consensus, consensus_params
from decentral.runner import run

SMALL = {
    "ring_undirected": lambda: g.ring(6, directed=False),
    "exponential": lambda: g.exponential(13),
    "star": lambda: g.star(6),
    "er_strong": lambda: g.erdos_renyi(20, 0.2, kind="strong", seed=3),
    "er_undirected": lambda: g.erdos_renyi(18, 0.3, kind="undirected", seed=5),
    "single_agent": lambda: g.ring(1),
}


def _small_cases():
    for name, build in SMALL.items():
        dense = build()
        symmetric = bool(np.array_equal(dense, dense.T))
        for rule in ("row", "column", "metropolis"):
            for sym in (None, False):
                if rule == "metropolis" and (not symmetric or sym is False):
                    continue
                yield pytest.param(dense, rule, sym, id=f"{name}-{rule}-sym{sym}")


def _same_table(t1, t2) -> None:
    for a, b in zip(t1, t2, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("dense", "rule", "sym"), list(_small_cases()))
def test_sparse_base_gives_the_dense_bases_sequence(dense, rule, sym, x64):
    csr = sp.csr_array(dense)
    for shared in (True, False):
        kw = dict(rule=rule, symmetric_drops=sym, shared_across_seeds=shared,
                  key=7 if shared else None)
        for backend in ("sparse", "dense"):
            want = g.random_edge_drops(dense, 0.3, backend=backend, **kw)
            got = g.random_edge_drops(sp.coo_array(csr), 0.3, backend=backend, **kw)
            assert got.digest() == want.digest() and got.num_edges == want.num_edges
            for name, leaf in want.leaves.items():
                if name != "key":
                    a, b = np.asarray(leaf), np.asarray(got.leaves[name])
                    assert a.dtype == b.dtype
                    np.testing.assert_array_equal(a, b)
            for t in (0, 1, 5):
                k = jax.random.key(t + 11)
                w, s = want.at(t, k), got.at(t, k)
                if backend == "sparse":
                    _same_table(w, s)
                else:
                    np.testing.assert_array_equal(np.asarray(w), np.asarray(s))


@pytest.mark.parametrize("shared", [True, False])
def test_consensus_runs_equal_for_dense_and_sparse_bases(shared, x64):
    dense = g.erdos_renyi(16, 0.3, kind="undirected", seed=2)
    x0 = np.linspace(-1.0, 2.0, 16)
    records = []
    for base in (dense, sp.csr_array(dense)):
        seq = g.random_edge_drops(base, 0.4, rule="metropolis", key=3 if shared else None,
                                  shared_across_seeds=shared, backend="sparse")
        res = run(consensus(seq), consensus_params(x0), seeds=[0, 1], num_steps=20,
                  record_every=4)
        records.append(np.asarray(res.records.x))
    assert records[0].dtype == np.float64
    np.testing.assert_array_equal(records[0], records[1])
    assert np.ptp(records[1][0, -1]) < np.ptp(x0)          # the drawn graphs really mixed


# ---- above the dense limit -------------------------------------------------------------------

def _brute_force_mask(csr: sp.csr_array, symmetric_drops: bool, keep: np.ndarray,
                      width: int) -> np.ndarray:
    """Each row's kept in-neighbours (self first, then increasing index, padded False) from the
    per-edge keep flags, the edges numbered by np.unique of their keys."""
    n = csr.shape[0]
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(csr.indptr))
    cols = csr.indices.astype(np.int64)
    off = rows != cols
    r, c = rows[off], cols[off]
    keys = np.minimum(r, c) * n + np.maximum(r, c) if symmetric_drops else r * n + c
    uniq, edge = np.unique(keys, return_inverse=True)
    assert uniq.size == keep.size
    mask = np.zeros((n, width), dtype=bool)
    mask[:, 0] = True
    pos = np.arange(r.size) - np.repeat(np.concatenate([[0], np.cumsum(np.bincount(
        r, minlength=n))[:-1]]), np.bincount(r, minlength=n)) + 1
    mask[r, pos] = keep[edge]
    return mask


def _uniform_keep(seq, t, key, drop_prob):
    u = jax.random.uniform(jax.random.fold_in(key, t), (seq.num_edges,), dtype=jnp.float32)
    return np.asarray(u >= drop_prob)


def _check_stochastic(table, rule: str) -> None:
    w = np.asarray(table.weight, dtype=np.float64)
    idx = np.asarray(table.idx)
    assert np.all(w[~np.asarray(table.mask)] == 0)
    rows = w.sum(axis=1)
    cols = np.bincount(idx.reshape(-1), weights=w.reshape(-1), minlength=idx.shape[0])
    tol = 1e-5                                         # float32 weights (x64 off)
    if rule in ("row", "metropolis"):
        assert np.max(np.abs(rows - 1)) < tol
    if rule in ("column", "metropolis"):
        assert np.max(np.abs(cols - 1)) < tol


@pytest.mark.parametrize("rule", ["row", "column"])
def test_exponential_above_the_dense_limit(rule):
    n, p = 10**5, 0.3
    adj = g.exponential(n, sparse=True)
    t0 = time.perf_counter()
    seq = g.random_edge_drops(adj, p, rule=rule, key=5, backend="sparse")
    tables = [seq.at(t) for t in (0, 1, 17)]
    jax.block_until_ready(tables)
    elapsed = time.perf_counter() - t0
    assert elapsed < 30, elapsed                        # about 1 s here; dense would not fit
    assert seq.leaves["base"] is None and seq.num_edges == 17 * n
    for leaf in jax.tree_util.tree_leaves(seq):
        assert np.size(leaf) <= 20 * n                   # nothing of n * n entries
    for t, table in zip((0, 1, 17), tables, strict=True):
        mask = np.asarray(table.mask)
        kept = mask[:, 1:].sum() / seq.num_edges
        assert abs(kept - (1 - p)) < 0.003, kept        # sd 3.5e-4 at 1.7e6 edges
        keep = _uniform_keep(seq, t, seq.leaves["key"], p)
        np.testing.assert_array_equal(mask, _brute_force_mask(adj, False, keep, mask.shape[1]))
        np.testing.assert_array_equal(np.asarray(table.idx)[mask],
                                      _brute_force_idx(adj, mask.shape[1])[mask])
        _check_stochastic(table, rule)
    assert not np.array_equal(np.asarray(tables[0].mask), np.asarray(tables[1].mask))


def _brute_force_idx(csr: sp.csr_array, width: int) -> np.ndarray:
    """The table's agents of a regular base (every row width - 1 in-neighbours besides itself):
    itself, then its in-neighbours in increasing index order."""
    n = csr.shape[0]
    rows = np.repeat(np.arange(n), np.diff(csr.indptr))
    off = rows != csr.indices
    assert off.sum() == n * (width - 1)
    return np.concatenate([np.arange(n)[:, None], csr.indices[off].reshape(n, width - 1)],
                          axis=1)


def test_undirected_base_above_the_dense_limit_drops_symmetrically_per_seed():
    n, p = 10**5, 0.3
    adj = g.circulant(n, [1, 2, 5, 40, n - 1, n - 2, n - 5, n - 40], sparse=True)
    seq = g.random_edge_drops(adj, p, rule="metropolis", shared_across_seeds=False,
                              backend="sparse")
    assert seq.symmetric_drops and seq.num_edges == 4 * n
    keys = jax.random.split(jax.random.key(9), 2)
    masks = []
    for key in keys:
        table = seq.at(3, key)
        mask = np.asarray(table.mask)
        keep = _uniform_keep(seq, 3, key, p)
        np.testing.assert_array_equal(mask, _brute_force_mask(adj, True, keep, mask.shape[1]))
        kept = sp.csr_array((np.ones(int(mask.sum()), bool),
                             (np.nonzero(mask)[0], np.asarray(table.idx)[mask])), shape=(n, n))
        assert (kept != kept.T).nnz == 0                 # every step undirected
        assert abs((mask[:, 1:].sum() / 2) / seq.num_edges - (1 - p)) < 0.005
        _check_stochastic(table, "metropolis")
        masks.append(mask)
    assert not np.array_equal(*masks)                    # each seed its own draw


def test_dense_backend_above_the_dense_limit_is_refused():
    big = g.ring(g.DENSE_LIMIT + 1, sparse=True)
    with pytest.raises(ValueError, match="backend='sparse'"):
        g.random_edge_drops(big, 0.3, key=1)
    seq = g.random_edge_drops(big, 0.3, key=1, backend="sparse")
    with pytest.raises(ValueError, match="DENSE_LIMIT"):
        seq.dense_at(0)


def test_checks_that_need_the_dense_base_refuse_a_large_drop_sequence():
    """Above DENSE_LIMIT a drop sequence holds no dense base: a stochasticity check its rule
    does not guarantee, and W-MSR's hypotheses, refuse it instead of allocating n x n."""
    from decentral.resilient_ac import check_hypotheses

    big = g.ring(g.DENSE_LIMIT + 1, directed=False, sparse=True)
    seq = g.random_edge_drops(big, 0.3, rule="column", key=1, backend="sparse")
    assert seq.leaves["base"] is None
    assert g.sequence_stochasticity_failure(seq, "column") is None     # guaranteed by the rule
    with pytest.raises(ValueError, match="DENSE_LIMIT"):
        g.sequence_stochasticity_failure(seq, "row")
    with pytest.raises(ValueError, match="DENSE_LIMIT"):
        check_hypotheses(seq, 1, [0], warn=False)
