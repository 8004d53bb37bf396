"""Tests of decentral.graphs tables (mixing primitives) and graph sequences."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import decentral.graphs as g

HYP = settings(max_examples=12)  # the rest from the profile in conftest.py


def _random_adj(rng, n, p=0.4):
    a = rng.random((n, n)) < p
    np.fill_diagonal(a, True)
    return a


def _random_weights(rng, adj):
    """Row-stochastic weights with random positive entries on the pattern of adj."""
    w = np.where(adj, rng.uniform(0.1, 1.0, adj.shape), 0.0)
    return w / w.sum(axis=1, keepdims=True)


@st.composite
def weight_matrices(draw, max_n=6):
    n = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    return _random_weights(rng, _random_adj(rng, n))


# ==== tables ================================================================================

def test_table_layout_by_hand(x64):
    # 0 hears {0, 2}, 1 hears {1}, 2 hears {0, 1, 2}
    adj = np.array([[True, False, True], [False, True, False], [True, True, True]])
    W = g.row_stochastic(adj)
    t = g.dense_to_table(W)
    assert t.idx.shape == (3, 3) and t.weight.shape == (3, 3) and t.mask.shape == (3, 3)
    np.testing.assert_array_equal(np.asarray(t.idx[:, 0]), [0, 1, 2])      # self at k = 0
    np.testing.assert_array_equal(np.asarray(t.idx), [[0, 2, 0], [1, 1, 1], [2, 0, 1]])
    np.testing.assert_array_equal(np.asarray(t.mask), [[1, 1, 0], [1, 0, 0], [1, 1, 1]])
    np.testing.assert_allclose(np.asarray(t.weight),
                               [[0.5, 0.5, 0], [1, 0, 0], [1 / 3, 1 / 3, 1 / 3]])
    wide = g.dense_to_table(W, width=5)
    assert wide.idx.shape == (3, 5)
    np.testing.assert_array_equal(np.asarray(wide.idx[1]), [1] * 5)      # padding = own index
    with pytest.raises(ValueError, match="width"):
        g.dense_to_table(W, width=2)
    np.testing.assert_allclose(np.asarray(jax.jit(g.table_to_dense)(wide)), W, atol=1e-15)
    at = g.adjacency_to_table(adj)
    np.testing.assert_array_equal(np.asarray(at.weight), np.asarray(at.mask).astype(float))
    with pytest.raises(ValueError, match="add_self_loops"):
        g.adjacency_to_table(np.zeros((2, 2), bool))


_to_dense = jax.jit(g.table_to_dense)
_mix = jax.jit(g.mix)
_gather_max = jax.jit(lambda t, X: (g.gather(t, X), g.masked_max(t, X)))


@HYP
@given(weight_matrices())
def test_dense_table_round_trip(W):
    t = g.dense_to_table(W)
    np.testing.assert_allclose(np.asarray(_to_dense(t)), W, rtol=0, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(t.idx[:, 0]), np.arange(W.shape[0]))
    assert np.all(np.asarray(t.mask[:, 0]))
    k = int(((W > 0) & ~np.eye(W.shape[0], dtype=bool)).sum(axis=1).max(initial=0)) + 1
    assert t.idx.shape[1] == k
    # every positive weight is in the table exactly once, on a masked entry
    assert int(np.asarray(t.mask).sum()) == int(((W > 0) | np.eye(W.shape[0], dtype=bool)).sum())


@HYP
@given(weight_matrices(), st.sampled_from([(), (3,), (2, 3)]), st.integers(0, 1000))
def test_mix_dense_equals_table(W, tail, seed):
    X = np.random.default_rng(seed).normal(size=(W.shape[0],) + tail).astype(np.float32)
    t = g.dense_to_table(W)
    dense = np.asarray(_mix(jnp.asarray(W, dtype=jnp.float32), jnp.asarray(X)))
    sparse = np.asarray(_mix(t, jnp.asarray(X)))
    assert dense.shape == X.shape and sparse.shape == X.shape
    np.testing.assert_allclose(dense, sparse, rtol=0, atol=1e-5)
    want = np.tensordot(W, X.astype(np.float64), axes=1)
    np.testing.assert_allclose(sparse, want, rtol=0, atol=1e-5)


@HYP
@given(weight_matrices(), st.sampled_from([(), (2,)]), st.integers(0, 1000))
def test_gather_and_masked_max(W, tail, seed):
    n = W.shape[0]
    X = np.random.default_rng(seed).normal(size=(n,) + tail).astype(np.float32) - 5.0
    t = g.dense_to_table(W)
    gathered, got = (np.asarray(v) for v in _gather_max(t, jnp.asarray(X)))
    assert gathered.shape == (n, t.idx.shape[1]) + tail
    np.testing.assert_array_equal(gathered[:, 0], X)                 # own value at k = 0
    pattern = (W > 0) | np.eye(n, dtype=bool)
    want = np.stack([X[pattern[i]].max(axis=0) for i in range(n)])
    np.testing.assert_array_equal(got, want)


def test_mix_eager_shapes():
    W = g.row_stochastic(g.ring(4))
    t = g.dense_to_table(W)
    for shape in [(4,), (4, 2), (4, 2, 3)]:
        X = jnp.arange(np.prod(shape), dtype=jnp.float32).reshape(shape)
        a, b = np.asarray(g.mix(W.astype(np.float32), X)), np.asarray(g.mix(t, X))
        np.testing.assert_allclose(a, b, atol=1e-5)
        np.testing.assert_allclose(a, np.tensordot(W, np.asarray(X), axes=1), atol=1e-5)


def test_masked_max_ignores_padding_and_non_neighbours():
    # directed ring: agent i hears only i - 1; a big value at agent 0 reaches only agent 1
    t = g.dense_to_table(g.row_stochastic(g.ring(4)), width=4)
    X = jnp.array([10.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(g.masked_max(t, X)), [10.0, 10.0, 1.0, 2.0])


@pytest.mark.parametrize("sender", [0, 2, 4])
def test_replace_sender_messages(sender):
    rng = np.random.default_rng(sender)
    adj = _random_adj(rng, 6, 0.5)
    t = g.dense_to_table(g.row_stochastic(adj), width=7)
    X = jnp.asarray(rng.normal(size=(6, 2)).astype(np.float32))
    msgs = jnp.asarray(100.0 + np.arange(12, dtype=np.float32).reshape(6, 2))
    gathered = g.gather(t, X)
    out = np.asarray(g.replace_sender_messages(t, gathered, sender, msgs))
    jitted = jax.jit(g.replace_sender_messages)(t, gathered, jnp.int32(sender), msgs)
    np.testing.assert_array_equal(np.asarray(jitted), out)                # traced sender
    idx, mask = np.asarray(t.idx), np.asarray(t.mask)
    gathered = np.asarray(gathered)
    replaced = 0
    for i in range(6):
        for k in range(idx.shape[1]):
            if k > 0 and mask[i, k] and idx[i, k] == sender:
                np.testing.assert_array_equal(out[i, k], np.asarray(msgs)[i])
                replaced += 1
            else:
                np.testing.assert_array_equal(out[i, k], gathered[i, k])
    assert replaced == int(adj[:, sender].sum()) - 1          # every out-neighbour of sender
    np.testing.assert_array_equal(out[sender, 0], np.asarray(X)[sender])


@pytest.mark.parametrize("rule,dense_rule,symmetric", [
    ("row", g.row_stochastic, False),
    ("column", g.column_stochastic, False),
    ("metropolis", g.metropolis, True),
])
def test_table_rule_weights_equal_dense_rules(x64, rule, dense_rule, symmetric):
    rng = np.random.default_rng(3)

    @jax.jit
    def rule_dense(t):
        return g.table_to_dense(t._replace(weight=g.table_rule_weights(t, rule)))

    for n in (1, 4, 9):
        adj = _random_adj(rng, n, 0.4)
        if symmetric:
            adj = adj | adj.T
        t = g.adjacency_to_table(adj, width=n + 1)
        np.testing.assert_allclose(np.asarray(rule_dense(t)), dense_rule(adj),
                                   rtol=0, atol=1e-14)
    eager = g.table_rule_weights(t, rule)                      # eager call, default width
    np.testing.assert_allclose(np.asarray(eager.sum(axis=1 if rule != "column" else None)),
                               np.full(n, 1.0) if rule != "column" else float(n), atol=1e-12)


def test_table_rule_weights_unknown_rule():
    t = g.adjacency_to_table(g.ring(3))
    with pytest.raises(ValueError, match="unknown weight rule"):
        g.table_rule_weights(t, "uniform")


# ==== sequences: construction, indexing =====================================================

def _stack(n=5, count=3, seed=0):
    rng = np.random.default_rng(seed)
    return np.stack([_random_weights(rng, _random_adj(rng, n)) for _ in range(count)])


def test_static_sequence():
    W = g.row_stochastic(g.ring(5))
    for backend in ("dense", "sparse"):
        seq = g.static(W, backend=backend)
        assert seq.form == "static" and seq.period == 1 and seq.length is None and seq.n == 5
        for t in (0, 1, 17):
            np.testing.assert_allclose(np.asarray(seq.dense_at(t)), W, atol=1e-7)
    from_adj = g.static(g.ring(5), rule="row")
    np.testing.assert_allclose(np.asarray(from_adj.at(3)), W, atol=1e-7)
    np.testing.assert_allclose(g.static(g.star(4), rule="metropolis").weights_host(2)[1],
                               g.metropolis(g.star(4)))


def test_periodic_indexes_t_mod_p():
    ws = _stack(count=3)
    for backend in ("dense", "sparse"):
        seq = g.periodic(ws, backend=backend)
        assert seq.period == 3 and seq.form == "periodic"
        f = jax.jit(seq.dense_at)
        for t in (0, 1, 2, 3, 7, 1001):
            np.testing.assert_allclose(np.asarray(f(jnp.int32(t))), ws[t % 3], atol=1e-7)
            np.testing.assert_allclose(np.asarray(seq.dense_at(t)), ws[t % 3], atol=1e-7)
        host = seq.weights_host(7, start=2)
        np.testing.assert_array_equal(host, ws[np.arange(2, 9) % 3])
    # a list of adjacencies with a rule
    seq = g.periodic([g.ring(4), g.ring(4, directed=False)], rule="row")
    np.testing.assert_allclose(np.asarray(seq.at(5)), g.row_stochastic(g.ring(4, directed=False)),
                               atol=1e-7)


def test_explicit_refuses_beyond_length():
    ws = _stack(count=4)
    for backend in ("dense", "sparse"):
        seq = g.explicit(ws, backend=backend)
        assert seq.length == 4 and seq.period is None and seq.form == "explicit"
        for t in range(4):
            np.testing.assert_allclose(np.asarray(seq.dense_at(t)), ws[t], atol=1e-7)
        np.testing.assert_array_equal(seq.weights_host(4), ws)
        np.testing.assert_array_equal(seq.weights_host(2, start=2), ws[2:])
        with pytest.raises(ValueError, match="supplies 4 steps"):
            seq.weights_host(5)
        with pytest.raises(ValueError, match="supplies 4 steps"):
            seq.weights_host(3, start=2)
        seq.check_horizon(4)
        seq.check_horizon(0)
        with pytest.raises(ValueError, match="holds 4 steps"):
            seq.check_horizon(5)
    g.periodic(ws).check_horizon(10**6)          # unbounded forms never refuse


def test_at_under_jit_with_traced_t():
    ws = _stack(count=3)
    seq = g.explicit(ws, backend="sparse")

    @jax.jit
    def table_at(t):
        return seq.at(t)

    for t in range(3):
        tab = table_at(jnp.int32(t))
        assert isinstance(tab, g.NeighborTable)
        np.testing.assert_allclose(np.asarray(g.table_to_dense(tab)), ws[t], atol=1e-7)
    # vmap over t as well
    dense = jax.vmap(g.periodic(ws).at)(jnp.arange(6))
    np.testing.assert_allclose(np.asarray(dense), ws[np.arange(6) % 3], atol=1e-7)


# ==== dense backend == sparse backend ========================================================

def _scan_mix(seq, X0, steps, key=None):
    """jit a scan over t that mixes X by seq.at(t); returns the trajectory [T, N, ...]."""
    @jax.jit
    def run(X0):
        def body(X, t):
            Y = g.mix(seq.at(t, key), X)
            return Y, Y
        return jax.lax.scan(body, X0, jnp.arange(steps))[1]
    return np.asarray(run(X0))


def _forms(backend):
    ws = _stack(n=6, count=3, seed=1)
    key = jax.random.key(11)
    base = g.erdos_renyi(6, 0.5, kind="strong", seed=2)
    sym = g.erdos_renyi(6, 0.5, kind="undirected", seed=2)
    return {
        "static": g.static(ws[0], backend=backend),
        "periodic": g.periodic(ws, backend=backend),
        "explicit": g.explicit(np.concatenate([ws, ws[::-1]]), backend=backend),
        "random_row": g.random_edge_drops(base, 0.4, rule="row", key=key, backend=backend),
        "random_column": g.random_edge_drops(base, 0.4, rule="column", key=key,
                                             backend=backend),
        "random_metropolis": g.random_edge_drops(sym, 0.4, rule="metropolis", key=key,
                                                 backend=backend),
        "one_peer": g.one_peer_exponential(6, backend=backend),
    }


@pytest.mark.parametrize("form", ["static", "periodic", "explicit", "random_row",
                                  "random_column", "random_metropolis", "one_peer"])
def test_dense_and_sparse_backends_mix_alike(x64, form):
    dense, sparse = _forms("dense")[form], _forms("sparse")[form]
    X0 = jnp.asarray(np.random.default_rng(0).normal(size=(6, 2)))
    steps = 6
    a = _scan_mix(dense, X0, steps)
    b = _scan_mix(sparse, X0, steps)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    if form in ("random_column", "random_metropolis"):
        return
    # the dense trajectory is the product of the host weights
    ws = dense.weights_host(steps)
    X = np.asarray(X0)
    for t in range(steps):
        X = ws[t] @ X
        np.testing.assert_allclose(a[t], X, rtol=0, atol=1e-12)


def test_dense_and_sparse_per_seed_random(x64):
    base = g.ring(7, directed=False)
    key = jax.random.key(5)
    d = g.random_edge_drops(base, 0.5, shared_across_seeds=False, backend="dense")
    s = g.random_edge_drops(base, 0.5, shared_across_seeds=False, backend="sparse")
    X0 = jnp.arange(7.0)
    np.testing.assert_allclose(_scan_mix(d, X0, 5, key), _scan_mix(s, X0, 5, key), atol=1e-12)


# ==== random edge drops =====================================================================

def test_random_self_loops_always_kept():
    seq = g.random_edge_drops(g.complete(6), 0.95, key=0)
    ws = seq.weights_host(100)
    assert np.all(np.diagonal(ws, axis1=1, axis2=2) > 0)
    assert np.any(ws[:, ~np.eye(6, dtype=bool)] > 0)      # some edges survive


def test_random_undirected_base_drops_symmetrically():
    seq = g.random_edge_drops(g.complete(7), 0.5, key=3, backend="sparse")
    pats = seq.weights_host(60) > 0
    np.testing.assert_array_equal(pats, np.swapaxes(pats, 1, 2))
    assert len({p.tobytes() for p in pats}) > 30          # the graphs vary


def test_random_directed_base_drops_independently():
    # pairs (i, i+1) are linked both ways, (i, i-2) one way: the base is not symmetric, so
    # the two directions of a pair are dropped independently
    base = g.circulant(6, [1, 2, -1])
    seq = g.random_edge_drops(base, 0.5, key=4)
    pats = seq.weights_host(200) > 0
    assert np.any(pats != np.swapaxes(pats, 1, 2))
    assert np.all(pats <= base[None])                      # only edges of the base
    assert np.all(np.diagonal(pats, axis1=1, axis2=2))


@pytest.mark.parametrize("base_name,drop_prob", [("directed", 0.3), ("undirected", 0.6)])
def test_random_drop_frequency_matches_drop_prob(base_name, drop_prob):
    steps = 400
    if base_name == "directed":
        base = g.circulant(10, [1, 2, 3])                  # 30 one-way edges
        edges = np.argwhere(base & ~np.eye(10, dtype=bool))
    else:
        base = g.complete(8)                               # 28 unordered pairs
        edges = np.argwhere(np.triu(base, 1))
    seq = g.random_edge_drops(base, drop_prob, key=jax.random.key(2024))
    pats = seq.weights_host(steps) > 0
    dropped = ~pats[:, edges[:, 0], edges[:, 1]]
    trials = dropped.size
    sd = math.sqrt(trials * drop_prob * (1 - drop_prob))
    assert abs(dropped.sum() - trials * drop_prob) < 5 * sd
    # per edge as well (each edge over `steps` draws)
    per_edge = dropped.sum(axis=0)
    sd_e = math.sqrt(steps * drop_prob * (1 - drop_prob))
    assert np.all(np.abs(per_edge - steps * drop_prob) < 5 * sd_e)
    if base_name == "directed":
        # drop_prob = 0 keeps the base exactly
        keep_all = g.random_edge_drops(base, 0.0, key=0).weights_host(3) > 0
        np.testing.assert_array_equal(keep_all, np.broadcast_to(base, keep_all.shape))


def test_random_same_key_same_draws():
    base = g.erdos_renyi(8, 0.5, kind="strong", seed=0)
    a = g.random_edge_drops(base, 0.5, key=jax.random.key(9)).weights_host(20)
    c = g.random_edge_drops(base, 0.5, key=9)                           # int seed = key(9)
    d = g.random_edge_drops(base, 0.5, key=jax.random.key(10)).weights_host(20)
    # same key, another sequence object, another start: the same draws (fold_in(key, t))
    np.testing.assert_array_equal(c.weights_host(8, start=12), a[12:])
    assert not np.array_equal(a > 0, d > 0)


def test_random_per_seed_keys():
    base = g.complete(6)
    seq = g.random_edge_drops(base, 0.5, shared_across_seeds=False)
    assert not seq.shared_across_seeds
    with pytest.raises(ValueError, match="key"):
        seq.at(0)
    with pytest.raises(ValueError, match="key"):
        seq.weights_host(3)
    keys = jnp.stack([jax.random.key(1), jax.random.key(2), jax.random.key(1)])
    # vmap over seeds and steps inside one jit
    draws = np.asarray(jax.jit(jax.vmap(jax.vmap(seq.dense_at, (0, None)), (None, 0)))(
        jnp.arange(20), keys))
    np.testing.assert_array_equal(draws[0], draws[2])              # same key, same graphs
    assert not np.array_equal(draws[0] > 0, draws[1] > 0)          # other key, other graphs
    np.testing.assert_allclose(seq.weights_host(20, key=jax.random.key(2)), draws[1])


def test_random_weights_renormalised_each_step(x64):
    base = g.erdos_renyi(7, 0.6, kind="strong", seed=5)
    row = g.random_edge_drops(base, 0.5, rule="row", key=1).weights_host(30)
    col = g.random_edge_drops(base, 0.5, rule="column", key=1,
                              backend="sparse").weights_host(30)
    np.testing.assert_allclose(row.sum(axis=2), 1.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(col.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    # the same draw under both rules; each step equals the host rule on that step's pattern
    np.testing.assert_array_equal(row > 0, col > 0)
    assert len({p.tobytes() for p in row > 0}) > 10
    for t in range(30):
        pat = row[t] > 0
        np.testing.assert_allclose(row[t], g.row_stochastic(pat), atol=1e-14)
        np.testing.assert_allclose(col[t], g.column_stochastic(pat), atol=1e-14)
    sym = g.erdos_renyi(7, 0.6, kind="undirected", seed=5)
    met = g.random_edge_drops(sym, 0.5, rule="metropolis", key=1).weights_host(30)
    for t in range(30):
        np.testing.assert_allclose(met[t], g.metropolis(met[t] > 0), atol=1e-14)
        assert g.is_doubly_stochastic(met[t], tol=1e-12)


# ==== one-peer exponential ==================================================================

@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9])
@pytest.mark.parametrize("backend", ["dense", "sparse"])
def test_one_peer_exponential(n, backend):
    seq = g.one_peer_exponential(n, backend=backend)
    tau = max(1, math.ceil(math.log2(n))) if n > 1 else 1
    assert seq.period == tau
    for t in range(2 * tau + 1):
        W = np.asarray(seq.dense_at(t))
        for i in range(n):
            want = {i, (i - 2 ** (t % tau)) % n} if n > 1 else {0}
            assert set(np.flatnonzero(W[i] > 0).tolist()) == want
        assert g.is_doubly_stochastic(W.astype(np.float64), tol=1e-6)
        if n > 1:
            np.testing.assert_allclose(W[W > 0], 0.5)


def test_one_peer_exponential_by_hand():
    seq = g.one_peer_exponential(8)
    assert seq.period == 3
    # step 1: agent 5 hears 5 and 3; step 5 (= 5 mod 3 = 2): agent 1 hears 1 and 5
    assert set(np.flatnonzero(np.asarray(seq.at(1))[5]).tolist()) == {3, 5}
    assert set(np.flatnonzero(np.asarray(seq.at(5))[1]).tolist()) == {1, 5}
    with pytest.raises(ValueError, match="n must be >= 1"):
        g.one_peer_exponential(0)
    with pytest.raises(ValueError, match="n must be an integer"):
        g.one_peer_exponential(4.0)


# ==== bad input =============================================================================

def test_sequence_bad_input():
    W = g.row_stochastic(g.ring(4))
    with pytest.raises(ValueError, match="backend"):
        g.static(W, backend="gpu")
    with pytest.raises(ValueError, match="backend"):
        g.random_edge_drops(g.ring(4), 0.1, key=0, backend="csr")
    with pytest.raises(ValueError, match="unknown weight rule"):
        g.static(g.ring(4), rule="uniform")
    with pytest.raises(ValueError, match="unknown weight rule"):
        g.random_edge_drops(g.ring(4), 0.1, rule="uniform", key=0)
    with pytest.raises(ValueError, match="rule="):
        g.static(g.ring(4))                              # adjacency without a rule
    with pytest.raises(ValueError, match="already a weight matrix"):
        g.static(W, rule="row")
    with pytest.raises(ValueError, match=r"astype\(bool\)"):
        g.static(g.ring(4).astype(int), rule="row")
    no_self = W.copy()
    no_self[1, 1] = 0.0
    with pytest.raises(ValueError, match="self-loop"):
        g.periodic([W, no_self])
    with pytest.raises(ValueError, match="add_self_loops"):
        g.static(np.zeros((3, 3), bool), rule="row")
    with pytest.raises(ValueError, match="same shape"):
        g.periodic([W, g.row_stochastic(g.ring(3))])
    with pytest.raises(ValueError, match="empty"):
        g.explicit([])
    with pytest.raises(ValueError, match="negative"):
        g.static(W - 0.3)
    with pytest.raises(ValueError, match="undirected"):
        g.static(g.ring(4), rule="metropolis")
    with pytest.raises(ValueError, match="metropolis"):
        g.random_edge_drops(g.ring(4), 0.1, rule="metropolis", key=0)
    for bad in (1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="drop_prob"):
            g.random_edge_drops(g.ring(4), bad, key=0)
    with pytest.raises(ValueError, match="key"):
        g.random_edge_drops(g.ring(4), 0.1)               # shared without a key
    with pytest.raises(ValueError, match="add_self_loops"):
        g.random_edge_drops(np.zeros((3, 3), bool), 0.1, key=0)
    with pytest.raises(ValueError, match="num_steps"):
        g.periodic([W]).weights_host(-1)


def test_explicit_stack_past_its_end_is_refused_before_compiling_or_reported_exactly():
    from decentral.runner import Algorithm, DivergenceError, run

    for backend in ("dense", "sparse"):
        seq = g.explicit(np.stack([g.row_stochastic(g.ring(4))] * 4), backend=backend)
        assert np.all(np.isnan(np.asarray(seq.dense_at(4))).any(axis=1))   # every row
        assert np.all(np.isfinite(np.asarray(seq.dense_at(3))))
        def step(k, x, p, t, xt, s=seq):
            return g.mix(s.at(t), x), None

        alg = Algorithm(init=lambda k, p: jnp.arange(4.0), step=step,
                        name=f"past_end_{backend}")       # max_horizon not given by the user
        assert alg.max_horizon == 4                       # found from the sequence it reaches
        with pytest.raises(ValueError, match="max_horizon = 4"):
            run(alg, None, seeds=[0], num_steps=8, chunk_size=4, progress=False)
        # a user who overrides the bound gets NaN weights past the end, reported exactly
        forced = alg.replace(max_horizon=8)
        with pytest.raises(DivergenceError, match="update t = 4") as info:
            run(forced, None, seeds=[0], num_steps=8, chunk_size=4, progress=False)
        assert info.value.first_step == [4]


def test_the_sequence_decides_which_key_its_draws_use():
    """Families always pass their graph key; a shared sequence draws from its own key (the
    caller's is not used), a per-seed one from the caller's, and fixed forms ignore it."""
    seq = g.random_edge_drops(g.complete(5), 0.5, key=0)
    own = np.asarray(seq.dense_at(3))
    for other in (jax.random.key(1), jax.random.key(2)):
        np.testing.assert_array_equal(np.asarray(seq.dense_at(3, other)), own)
    np.testing.assert_array_equal(seq.weights_host(3, key=jax.random.key(1)),
                                  seq.weights_host(3))
    per_seed = g.random_edge_drops(g.complete(5), 0.5, shared_across_seeds=False)
    a = np.asarray(per_seed.dense_at(3, jax.random.key(1)))
    b = np.asarray(per_seed.dense_at(3, jax.random.key(2)))
    assert not np.array_equal(a, b)
    with pytest.raises(ValueError, match="pass the seed's key"):
        per_seed.at(3)
    ring = g.static(g.ring(4), rule="row")
    np.testing.assert_array_equal(np.asarray(ring.at(0, jax.random.key(5))),
                                  np.asarray(ring.at(0)))
    graph_key, rest = per_seed.split_key(jax.random.key(7))
    assert graph_key is not None
    assert ring.split_key(jax.random.key(7))[0] is None


def test_as_sequence_is_the_one_graph_convention():
    W = g.row_stochastic(g.ring(4))
    assert g.as_sequence(W).digest() == g.static(W).digest()
    assert g.as_sequence(g.ring(4), rule="row").digest() == g.static(g.ring(4),
                                                                    rule="row").digest()
    seq = g.static(W, backend="sparse")
    assert g.as_sequence(seq) is seq
    assert g.as_sequence(g.ring(4), default_rule="column").rule == "column"
    for bad, pattern in [([W, W], "periodic"), (np.stack([W, W]), "periodic"),
                         (g.ring(4), "without a rule"), ("ring", "got str"),
                         (np.ones((3, 4)), "shape"), (None, "NoneType")]:
        with pytest.raises(ValueError, match=pattern):
            g.as_sequence(bad)
    with pytest.raises(ValueError, match="backend"):
        g.as_sequence(seq, backend="dense")
    with pytest.raises(ValueError, match="rule"):
        g.as_sequence(g.static(g.ring(4), rule="row"), rule="column")
    with pytest.raises(ValueError, match="neither row- nor column-stochastic"):
        g.as_sequence(np.full((3, 3), 0.5))
    a, b = g.static(g.ring(4), rule="row"), g.static(g.complete(4), rule="row")
    a.require_same_structure(b)                          # dense: same shapes
    with pytest.raises(ValueError, match="n is 5"):
        a.require_same_structure(g.static(g.ring(5), rule="row"))
    with pytest.raises(ValueError, match="leaf 'idx'"):
        g.static(g.ring(4), rule="row", backend="sparse").require_same_structure(
            g.static(g.complete(4), rule="row", backend="sparse"))
    with pytest.raises(ValueError, match="must be a decentral.graphs.GraphSequence"):
        a.require_same_structure(W)


def test_float32_random_sequence_passes_the_stochasticity_checks():
    seq = g.random_edge_drops(g.complete(13), 0.3, key=0)     # float32 weights (x64 off)
    ws = seq.weights_host(5)
    assert ws.dtype == np.float32
    assert all(g.is_row_stochastic(w) for w in ws)
    pis = g.absolute_probability_sequence(seq, 10)
    np.testing.assert_allclose(pis.sum(axis=1), 1.0, rtol=1e-12)


def test_random_graphs_do_not_depend_on_the_global_precision(request):
    seq = g.random_edge_drops(g.complete(6), 0.5, key=0)
    pattern32 = seq.weights_host(8) > 0
    request.getfixturevalue("x64")
    seq64 = g.random_edge_drops(g.complete(6), 0.5, key=0)
    pattern64 = seq64.weights_host(8) > 0
    assert seq64.weights_host(1).dtype == np.float64
    np.testing.assert_array_equal(pattern32, pattern64)


def test_symmetric_base_can_drop_directions_independently():
    both = g.random_edge_drops(g.complete(8), 0.5, key=1, symmetric_drops=False)
    pats = both.weights_host(20) > 0
    assert any(not np.array_equal(p, p.T) for p in pats)
    with pytest.raises(ValueError, match="symmetric"):
        g.random_edge_drops(g.ring(5), 0.5, key=1, symmetric_drops=True)


def test_per_seed_sequence_takes_no_key_of_its_own_and_accepts_int_keys():
    with pytest.raises(ValueError, match="takes no key of its own"):
        g.random_edge_drops(g.complete(4), 0.5, key=3, shared_across_seeds=False)
    seq = g.random_edge_drops(g.complete(4), 0.5, shared_across_seeds=False)
    np.testing.assert_array_equal(np.asarray(seq.at(2, 5)),
                                  np.asarray(seq.at(2, jax.random.key(5))))
