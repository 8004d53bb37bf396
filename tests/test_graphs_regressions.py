"""Inputs that used to give silent wrong answers in decentral.graphs and now raise, or give
the right answer. Each test fails on the behaviour it replaces."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import decentral.graphs as g


def _weights(rng, adj, low=0.1):
    w = np.where(adj, rng.uniform(low, 1.0, adj.shape), 0.0)
    return w / w.sum(axis=1, keepdims=True)


# ==== weights given as weights must be stochastic ===========================================

def test_a_01_array_given_as_weights_is_refused_with_the_conversion():
    adj = g.ring(4)
    for arr in (adj.astype(int), adj.astype(float), adj.astype(np.float32)):
        for build in (g.static, lambda a: g.periodic([a, a]), lambda a: g.explicit([a])):
            with pytest.raises(ValueError, match=r"astype\(bool\), rule='row'"):
                build(arr)


def test_a_rule_with_an_integer_adjacency_points_to_astype_bool():
    with pytest.raises(ValueError, match=r"integer array.*`graph.astype\(bool\)` with "
                                         r"rule='row'"):
        g.static(g.ring(4).astype(int), rule="row")
    with pytest.raises(ValueError, match=r"graph 0.*astype\(bool\)"):
        g.periodic([g.ring(4).astype(np.int8)], rule="column")
    # the advice works
    np.testing.assert_allclose(
        np.asarray(g.static(g.ring(4).astype(int).astype(bool), rule="row").at(0)),
        g.row_stochastic(g.ring(4)))


def test_a_non_stochastic_weights_are_refused_stochastic_ones_accepted():
    rng = np.random.default_rng(0)
    a = g.erdos_renyi(6, 0.5, kind="strong", seed=2)
    raw = np.where(a, rng.uniform(0.1, 1.0, a.shape), 0.0)
    with pytest.raises(ValueError, match="neither row- nor column-stochastic"):
        g.static(raw)
    with pytest.raises(ValueError, match="neither row- nor column-stochastic"):
        g.explicit([raw / raw.sum(axis=1, keepdims=True), raw])
    g.static(raw / raw.sum(axis=1, keepdims=True))                 # row-stochastic
    g.static(raw / raw.sum(axis=0, keepdims=True))                 # column (push-sum)
    g.periodic(np.stack([g.column_stochastic(a), g.row_stochastic(a)]))
    g.static((raw / raw.sum(axis=1, keepdims=True)).astype(np.float32))   # float32 sums


# ==== Perron vector in float32 and with small weights =======================================

def test_b_perron_vector_float32_generic_weights():
    rng = np.random.default_rng(1)
    for n in (3, 8, 20):
        W = _weights(rng, g.erdos_renyi(n, 0.4, kind="strong", seed=n))
        pi64 = g.perron_vector(W)
        pi32 = g.perron_vector(W.astype(np.float32))           # used to raise
        assert pi32.dtype == np.float32
        np.testing.assert_allclose(pi32, pi64, rtol=1e-5, atol=1e-7)


def test_b_perron_vector_with_tiny_weights():
    """W = I + ε (Q − I) has the Perron vector of Q for every ε > 0."""
    rng = np.random.default_rng(2)
    Q = _weights(rng, g.erdos_renyi(7, 0.4, kind="strong", seed=5))
    want = g.perron_vector(Q)
    for eps in (1e-4, 1e-10, 1e-14):
        W = np.eye(7) + eps * (Q - np.eye(7))
        np.testing.assert_allclose(g.perron_vector(W), want, rtol=1e-6)


def test_b_perron_vector_message_names_what_was_found():
    W = np.eye(3)                                         # three closed classes
    with pytest.raises(ValueError, match="3 closed classes"):
        g.perron_vector(W)
    # one closed class ({0}), the rest transient: unique, no error
    np.testing.assert_allclose(g.perron_vector(g.row_stochastic(g.path(3))), [1, 0, 0])


# ==== table mix ==============================================================================

def _reference_mix(W, X):
    """IEEE sum over in-neighbours only (W[i, j] > 0), one term at a time."""
    out = np.zeros_like(X)
    with np.errstate(invalid="ignore"):                  # inf − inf = NaN is intended
        return _reference_loop(W, X, out)


def _reference_loop(W, X, out):
    for i in range(W.shape[0]):
        acc = np.zeros(X.shape[1:])
        for j in np.flatnonzero(W[i] > 0):
            acc = acc + W[i, j] * X[j]
        out[i] = acc
    return out


def test_c_mix_refuses_x_of_the_wrong_length():
    W = g.row_stochastic(g.ring(4))
    for graph in (W, g.dense_to_table(W), g.as_table(jnp.asarray(W))):
        for X in (jnp.ones(5), jnp.ones((3, 2)), jnp.ones(())):
            with pytest.raises(ValueError, match="leading agent axis of length 4"):
                g.mix(graph, X)
            with pytest.raises(ValueError, match="leading agent axis of length 4"):
                jax.jit(g.mix)(graph, X)


@pytest.mark.parametrize("seed", range(6))
def test_c_dense_and_table_mix_agree_on_non_finite_inputs(x64, seed):
    rng = np.random.default_rng(seed)
    n = 7
    W = _weights(rng, g.erdos_renyi(n, 0.35, kind="strong", seed=seed))
    X = rng.normal(size=(n, 3))
    bad = rng.choice(n * 3, size=4, replace=False)
    X.reshape(-1)[bad] = rng.choice([np.nan, np.inf, -np.inf], size=4)
    want = _reference_mix(W, X)
    graphs = {"dense": jnp.asarray(W), "table": g.dense_to_table(W),
              "wide_table": g.dense_to_table(W, width=n + 3),      # padding columns
              "as_table": g.as_table(jnp.asarray(W))}              # K = N, mask False entries
    for name, graph in graphs.items():
        got = np.asarray(g.mix(graph, jnp.asarray(X)))
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13, err_msg=name)
        np.testing.assert_allclose(np.asarray(jax.jit(g.mix)(graph, jnp.asarray(X))), got,
                                   rtol=1e-13, atol=1e-13, err_msg=name)


def test_c_non_finite_values_travel_along_edges_only(x64):
    W = g.row_stochastic(g.path(3))                       # 0 hears itself; 1 hears 0; 2 hears 1
    for X, want in (([1.0, 2.0, np.nan], [1.0, 1.5, np.nan]),
                    ([np.inf, 2.0, 3.0], [np.inf, np.inf, 2.5]),
                    ([np.inf, -np.inf, 3.0], [np.inf, np.nan, -np.inf])):
        for graph in (jnp.asarray(W), g.dense_to_table(W)):
            np.testing.assert_array_equal(np.asarray(g.mix(graph, jnp.asarray(X))), want)


def test_c_wide_tables_use_the_loop_and_match_dense(x64):
    rng = np.random.default_rng(3)
    n = 24                                                # K = 24 > the unroll limit
    W = _weights(rng, g.complete(n))
    X = jnp.asarray(rng.normal(size=(n, 2)))
    np.testing.assert_allclose(np.asarray(g.mix(g.as_table(jnp.asarray(W)), X)),
                               W @ np.asarray(X), rtol=1e-13, atol=1e-13)


def test_c_table_mix_has_no_gathered_n_k_intermediate():
    W = g.row_stochastic(g.erdos_renyi(6, 0.5, kind="strong", seed=0))
    table = g.dense_to_table(W)
    n, k = table.idx.shape
    X = jnp.ones((n, 5))
    jaxpr = jax.make_jaxpr(g.mix)(table, X).jaxpr
    shapes = {tuple(v.aval.shape) for eqn in jaxpr.eqns for v in eqn.outvars}
    assert (n, k, 5) not in shapes and k > 1


# ==== absolute probability sequence ==========================================================

def test_d_random_sequence_without_edges_raises_like_the_static_form():
    base = np.eye(4, dtype=bool)
    with pytest.raises(ValueError, match="not unique"):
        g.absolute_probability_sequence(g.static(base, rule="row"), 5)
    with pytest.raises(ValueError, match="4 closed classes.*not unique"):
        g.absolute_probability_sequence(g.random_edge_drops(base, 0.3, key=0), 5)
    # two groups that never hear each other: also refused
    two = np.kron(np.eye(2, dtype=bool), np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="2 closed classes"):
        g.absolute_probability_sequence(g.random_edge_drops(two, 0.3, key=0), 5)


def test_d_float32_weights_report_their_precision_or_refuse():
    rng = np.random.default_rng(4)
    ws = np.stack([_weights(rng, g.erdos_renyi(5, 0.4, kind="strong", seed=s))
                   for s in range(300)])
    ref = g.absolute_probability_sequence(ws, 6, return_info=True)
    assert ref.error < 1e-13
    ws32 = ws.astype(np.float32)
    with pytest.raises(ValueError, match="float32.*cannot be met"):
        g.absolute_probability_sequence(ws32, 6)
    with pytest.raises(ValueError, match="float32.*cannot be met"):
        g.absolute_probability_sequence(g.static(ws32[0]), 6)
    res = g.absolute_probability_sequence(ws32, 6, tol=1e-3, return_info=True)
    actual = float(np.max(np.abs(res.pi - ref.pi)))
    assert res.error >= actual and res.error >= 1e-5      # was ~1e-16: 1e8 too optimistic
    static = g.absolute_probability_sequence(g.static(ws32[0]), 3, tol=1e-3, return_info=True)
    assert static.error >= float(np.max(np.abs(static.pi - g.perron_vector(ws[0]))))


def test_d_float32_random_sequence_uses_exact_host_weights():
    seq = g.random_edge_drops(g.complete(6), 0.4, key=2)        # float32 at(t) (x64 off)
    res = g.absolute_probability_sequence(seq, 5, return_info=True)
    assert res.error < 1e-13
    ws = seq.weights_host64(res.horizon)
    assert ws.dtype == np.float64
    for t in range(5):
        np.testing.assert_allclose(res.pi[t], res.pi[t + 1] @ ws[t], atol=1e-14)


def test_d_warning_says_what_happened_in_words():
    W = g.row_stochastic(g.ring(4))
    with pytest.warns(RuntimeWarning) as record:
        g.absolute_probability_sequence(np.stack([W] * 3), 3)
    text = str(record[0].message)
    assert "inf" not in text and "could not be extended" in text
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rng = np.random.default_rng(5)
        slow = np.stack([np.eye(4) * 0.999 + 0.001 * _weights(rng, g.ring(4))
                         for _ in range(200)])
        g.absolute_probability_sequence(slow, 2)
    assert any("still changed" in str(w.message) for w in record)


def test_c_fast_mix_is_the_plain_matmul_and_still_marks_every_hearing_agent(x64):
    import jax.numpy as jnp

    W = g.row_stochastic(g.ring(5))
    X = np.arange(10.0).reshape(5, 2)
    np.testing.assert_array_equal(np.asarray(g.mix(W, X, exact_nonfinite=False)), W @ X)
    X[2, 1] = np.nan
    hears = W[:, 2] > 0
    for graph in (jnp.asarray(W), g.dense_to_table(W)):
        out = np.asarray(g.mix(graph, X, exact_nonfinite=False))
        assert np.all(~np.isfinite(out[hears, 1]))        # divergence is seen where it spreads


# ==== table mixing at every width: one fused sum, blocks of columns beyond ====================

@pytest.mark.parametrize("width", [1, 2, 16, 17, 64, 65, 80, 81, 97])
def test_table_mix_equals_the_dense_product_at_every_width(width):
    # A table of exactly `width` columns (K = N, as_table of a dense W): widths up to the unroll
    # limit are one unrolled sum; wider ones loop over blocks of columns and a remainder, which
    # once dropped or repeated a column at the block boundaries.
    rng = np.random.default_rng(width)
    W = rng.uniform(0.0, 1.0, (width, width)) * (rng.random((width, width)) < 0.7)
    np.fill_diagonal(W, 1.0)
    W /= W.sum(axis=1, keepdims=True)
    X = rng.standard_normal((width, 3)).astype(np.float32)
    table = g.as_table(jnp.asarray(W, jnp.float32))
    assert table.idx.shape == (width, width)
    got = np.asarray(g.mix(table, jnp.asarray(X)), np.float64)
    np.testing.assert_allclose(got, W @ X.astype(np.float64), rtol=0, atol=1e-5)
    under_jit = np.asarray(jax.jit(g.mix)(table, jnp.asarray(X)), np.float64)
    np.testing.assert_allclose(under_jit, got, rtol=0, atol=1e-6)


# ==== a time loop over table mixing holds no table-sized temporaries ========================

def test_table_mix_in_a_loop_keeps_no_copy_of_the_table():
    """XLA hoists loop-invariant work out of a loop: the live-entry mask, the weights with
    padding zeroed and the wrapped indices of ``X[idx]`` used to become table-sized arrays
    kept for the whole loop (a second copy of the table; 2.3 MB of temporaries here against
    0.13 MB now). The loop's temporaries must stay far below the table's bytes."""
    n = 1 << 14
    table = g.static(g.exponential(n, sparse=True), rule="row").at(0)
    x = jnp.ones((n, 2), jnp.float32)

    def loop(tab, x0):
        return jax.lax.fori_loop(0, 10, lambda i, v: g.mix(tab, v), x0)

    compiled = jax.jit(loop).lower(table, x).compile()
    temp = compiled.memory_analysis().temp_size_in_bytes
    table_bytes = sum(int(a.nbytes) for a in table)
    assert temp <= table_bytes / 4, (temp, table_bytes)
    # and the loop still mixes: the ones stay ones (row-stochastic weights)
    np.testing.assert_allclose(np.asarray(compiled(table, x)), 1.0, rtol=1e-6)


def test_take_rows_is_indexing_along_the_agent_axis():
    x = jnp.arange(24.0).reshape(6, 2, 2)
    idx = jnp.array([[5, 0, 3], [2, 2, 1]], jnp.int32)
    np.testing.assert_array_equal(np.asarray(g.take_rows(x, idx)),
                                  np.asarray(x)[np.asarray(idx)])
    tab = g.static(g.ring(6), rule="row", backend="sparse").at(0)
    np.testing.assert_array_equal(np.asarray(g.gather(tab, x)),
                                  np.asarray(x)[np.asarray(tab.idx)])
