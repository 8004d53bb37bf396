"""Tests of decentral.resilient_ac: the aggregators against sort-based numpy references, their
resilience properties (hypothesis), the attackers, resilient consensus through the runner
(numpy reference loops, backends, every attack on a 3-robust graph, time-varying graphs), the
hypothesis warnings, bad input, the projection-based step and the metrics.

The whole module runs in float64 (``x64_module``).
"""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import decentral.graphs as g
import decentral.resilient_ac.aggregators as agg_module
from decentral.hypotheses import HypothesisWarning
from decentral.resilient_ac import (
    AGGREGATORS,
    AttackContext,
    Attacker,
    check_hypotheses,
    clipped_mean,
    constant,
    cooperative_spread,
    coordinate_extreme,
    get_aggregator,
    huge,
    hull_violation,
    just_inside,
    mean,
    projected_errors,
    projection_step,
    random_values,
    ranks,
    replace_byzantine_messages,
    resilient_consensus,
    resilient_consensus_params,
    split_brain,
    switch_attacker,
    trimmed_mean,
    values_of,
    weighted_output_step,
    wmsr,
)
from decentral.runner import run, seed_keys, step_key

pytestmark = pytest.mark.usefixtures("x64_module")

AGG_NAMES = ["wmsr", "trimmed_mean", "clipped_mean", "mean"]
RESILIENT = ["wmsr", "trimmed_mean", "clipped_mean"]


# ------------------------------------------------------------------------------------------
# numpy references (one coordinate at a time, written from the aggregators' docstring)
# ------------------------------------------------------------------------------------------


def _ref_wmsr_1d(v, m, H):
    x0 = v[0]
    nb = [v[k] for k in range(1, len(v)) if m[k]]
    above = sorted(a for a in nb if a > x0)
    below = sorted(a for a in nb if a < x0)
    equal = [a for a in nb if a == x0]
    kept_above = above[: max(len(above) - H, 0)]        # the H largest above go
    kept_below = below[H:]                                # the H smallest below go
    return float(np.mean([x0, *equal, *kept_above, *kept_below]))


def _ref_trimmed_1d(v, m, H):
    s = np.sort(v[m])
    n = s.size
    if n < 2 * H + 1:
        return float(v[0])
    return float(np.mean(s[H:n - H]))


def _ref_clipped_1d(v, m, H):
    s = np.sort(v[m])
    n = s.size
    if n < 2 * H + 1:
        return float(v[0])
    lo, hi = min(s[H], v[0]), max(s[n - H - 1], v[0])
    return float(np.mean(np.clip(v[m], lo, hi)))


def _ref_mean_1d(v, m, H):
    return float(np.mean(v[m]))


_REF_1D = {"wmsr": _ref_wmsr_1d, "trimmed_mean": _ref_trimmed_1d,
           "clipped_mean": _ref_clipped_1d, "mean": _ref_mean_1d}


def _ref_agg(name, values, mask, H):
    """Element-wise reference over trailing axes: ``values [K, ...]`` -> ``[...]``."""
    v = np.asarray(values, np.float64)
    m = np.ones(v.shape[0], bool) if mask is None else np.asarray(mask, bool)
    flat = v.reshape(v.shape[0], -1)
    out = np.array([_REF_1D[name](flat[:, c], m, H) for c in range(flat.shape[1])])
    return out.reshape(v.shape[1:])


def _scale(values, mask):
    v = np.asarray(values, np.float64)[np.asarray(mask, bool)]
    return 1.0 + float(np.max(np.abs(v)))


# one compile per aggregator: fixed shapes, H traced
_JIT = {name: jax.jit(fn) for name, fn in AGGREGATORS.items()}


# ------------------------------------------------------------------------------------------
# 1. aggregators against the references
# ------------------------------------------------------------------------------------------


def _agg(name, values, mask=None, H=0):
    """The jitted aggregator (a new shape compiles in ~0.1 s; eager costs ~1 s per shape)."""
    return _JIT[name](jnp.asarray(values), None if mask is None else jnp.asarray(mask), H)


def test_docstring_example_values():
    vals = [1.0, 5.0, -7.0, 2.0, 100.0]
    np.testing.assert_allclose(float(_agg("wmsr", vals, H=1)), 8.0 / 3.0, rtol=1e-14)
    np.testing.assert_allclose(float(_agg("trimmed_mean", vals, H=1)), 8.0 / 3.0, rtol=1e-14)
    # clipped to [min(s[1], 1), max(s[3], 1)] = [1, 5]: (1 + 5 + 1 + 2 + 5) / 5
    np.testing.assert_allclose(float(_agg("clipped_mean", vals, H=1)), 2.8, rtol=1e-14)
    np.testing.assert_allclose(float(_agg("mean", vals, H=1)), 101.0 / 5.0, rtol=1e-14)


def test_wmsr_hand_cases_with_ties():
    # two values above tie at the top: exactly one of them is dropped with H = 1
    np.testing.assert_allclose(float(_agg("wmsr", [0.0, 3.0, 3.0], H=1)), 1.5)
    # values equal to the own value are never dropped
    np.testing.assert_allclose(float(_agg("wmsr", [2.0, 2.0, 2.0, 9.0], H=2)), 2.0)
    # fewer than H on a side: all of them go
    np.testing.assert_allclose(float(_agg("wmsr", [0.0, 5.0, -1.0, -2.0], H=2)), 0.0)
    np.testing.assert_allclose(float(_agg("wmsr", [0.0, 5.0, -1.0, -2.0, -3.0], H=2)), -0.5)
    # W-MSR trims around x0 while trimmed_mean trims the global order
    v = [10.0, 0.0, 1.0, 2.0]
    np.testing.assert_allclose(float(_agg("wmsr", v, H=1)), (10 + 1 + 2) / 3)
    np.testing.assert_allclose(float(_agg("trimmed_mean", v, H=1)), 1.5)


def test_trimmed_and_clipped_fallback_to_own_value():
    v = [4.0, -100.0, 100.0, 7.0]
    m = [True, True, True, False]                        # K_i = 3 < 2H + 1 = 5
    assert float(_agg("trimmed_mean", v, m, 2)) == 4.0
    assert float(_agg("clipped_mean", v, m, 2)) == 4.0
    # exactly 2H + 1 real values: trimmed_mean keeps the median only
    assert float(_agg("trimmed_mean", v, m, 1)) == 4.0
    np.testing.assert_allclose(float(_agg("clipped_mean", v, m, 1)), 4.0)


def test_ranks_break_ties_by_index():
    vals = jnp.array([1.0, 1.0, 0.0, 5.0])
    asc, desc = jax.jit(ranks)(vals, jnp.array([True, True, True, False]))
    assert asc[:3].tolist() == [1, 2, 0]
    assert desc[:3].tolist() == [0, 1, 2]


@pytest.mark.parametrize("name", AGG_NAMES)
def test_aggregator_matches_reference_random(name):
    """Ties, padding with garbage (incl. NaN / inf under jit), +-1e6, vector trailing axes,
    traced H under jit; eager calls with a Python int H agree."""
    rng = np.random.default_rng(12)
    K, trail = 7, (3,)
    fn, jfn = AGGREGATORS[name], _JIT[name]
    n_eager = 0
    for case in range(150):
        kind = case % 3
        if kind == 0:                                     # many ties
            vals = rng.integers(-2, 3, size=(K,) + trail).astype(np.float64)
        elif kind == 1:
            vals = rng.normal(size=(K,) + trail) * 10.0
        else:                                             # +-1e6 mixed with small values
            vals = rng.choice([-1e6, 1e6, 0.5, -0.25, 3.0], size=(K,) + trail)
        mask = np.concatenate([[True], rng.random(K - 1) < 0.7])
        garbage = rng.choice([np.nan, np.inf, -np.inf, 1e300, -7.0], size=(K,) + trail)
        H = int(rng.integers(0, 4))
        ref = _ref_agg(name, vals, mask, H)
        padded = np.where(mask[:, None], vals, garbage)
        got = np.asarray(jfn(jnp.asarray(padded), jnp.asarray(mask), H))
        assert got.dtype == np.float64 and got.shape == trail
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13 * _scale(vals, mask),
                                   err_msg=f"case {case}, H={H}")
        if case % 5 == 0:                                 # eager: finite garbage only
            padded_finite = np.where(mask[:, None], vals, 123.0)
            eager = np.asarray(fn(jnp.asarray(padded_finite), jnp.asarray(mask), H))
            np.testing.assert_allclose(eager, ref, rtol=1e-13,
                                       atol=1e-13 * _scale(vals, mask))
            n_eager += 1
    assert n_eager == 30


@pytest.mark.parametrize("name", AGG_NAMES)
def test_aggregator_mask_none_and_elementwise(name):
    vals = np.array([[0.0, 10.0, -3.0], [1.0, -1e6, 2.0], [2.0, 11.0, 2.0], [-5.0, 1e6, 2.0],
                     [3.0, 12.0, 2.0]])
    got = np.asarray(_agg(name, vals, None, 1))
    np.testing.assert_allclose(got, _ref_agg(name, vals, None, 1), rtol=1e-14, atol=1e-9)
    # each coordinate aggregated on its own
    for c in range(3):
        one = float(_agg(name, vals[:, c], None, 1))
        np.testing.assert_allclose(got[c], one, rtol=1e-14, atol=1e-9)
    # a [K, 2, 2] input: the same as flattening the trailing axes
    v4 = np.arange(20.0).reshape(5, 2, 2) ** 1.5 * np.array([1, -1, 1, -1, 1])[:, None, None]
    np.testing.assert_allclose(np.asarray(_agg(name, v4, None, 2)),
                               _ref_agg(name, v4, None, 2), rtol=1e-13)


@pytest.mark.parametrize("name", AGG_NAMES)
def test_aggregator_float64_precision_and_int_input(name):
    big = 1e6
    vals = jnp.array([big + 0.125, big, big + 0.25, big + 0.5, big - 0.5])
    out = _agg(name, vals, None, 1)
    assert out.dtype == jnp.float64
    ref = _ref_agg(name, np.asarray(vals), None, 1)
    np.testing.assert_allclose(float(out), ref, rtol=2e-16)          # float32 would be 0.0625
    assert abs(float(out) - big - (ref - big)) < 1e-9                # off near 1e6
    ints = _agg(name, jnp.array([1, 2, 3, 10]), None, 1)
    assert jnp.issubdtype(ints.dtype, jnp.floating)
    np.testing.assert_allclose(float(ints), _ref_agg(name, np.array([1.0, 2, 3, 10]), None, 1))


def test_traced_H_one_compile():
    traces = []

    def f(v, m, h):
        traces.append(1)
        return wmsr(v, m, h), trimmed_mean(v, m, h), clipped_mean(v, m, h)

    jf = jax.jit(f)
    vals = jnp.array([0.0, 5.0, -7.0, 2.0, 100.0, -3.0, 1.0])
    mask = jnp.ones(7, bool)
    for H in range(4):
        got = jf(vals, mask, jnp.asarray(H))
        for name, out in zip(RESILIENT, got, strict=True):
            np.testing.assert_allclose(float(out), _ref_agg(name, vals, None, H), rtol=1e-14)
    assert len(traces) == 1


# static H: the streaming path (one compile per H; the tests above trace H under jit)
_JIT_STATIC = {name: jax.jit(fn, static_argnums=2) for name, fn in AGGREGATORS.items()}


@pytest.mark.parametrize("name", AGG_NAMES)
def test_static_H_matches_reference_and_traced_H(name):
    """The streaming path (Python-int H) against the sort reference and the rank path (traced
    H): ties, garbage padding (NaN / inf), +-1e6, H above the neighbour count, a K past the
    unrolling limit (fori_loop)."""
    rng = np.random.default_rng(34)
    long_K = agg_module._UNROLL_MAX_K + 6
    for K, Hs in [(1, (0, 2)), (2, (0, 1, 3)), (5, (0, 1, 2, 7)), (8, (0, 1, 2, 3, 4)),
                  (long_K, (0, 3, 40))]:
        for case in range(8):
            kind = case % 3
            shape = (K, 2)
            if kind == 0:
                vals = rng.integers(-2, 3, size=shape).astype(np.float64)
            elif kind == 1:
                vals = rng.normal(size=shape) * 10.0
            else:
                vals = rng.choice([-1e6, 1e6, 0.5, -0.25, 3.0], size=shape)
            mask = np.concatenate([[True], rng.random(K - 1) < 0.7])
            garbage = rng.choice([np.nan, np.inf, -np.inf, 1e300, -7.0], size=shape)
            padded = jnp.asarray(np.where(mask[:, None], vals, garbage))
            for H in Hs:
                ref = _ref_agg(name, vals, mask, H)
                got = np.asarray(_JIT_STATIC[name](padded, jnp.asarray(mask), H))
                traced = np.asarray(_JIT[name](padded, jnp.asarray(mask), H))
                tol = 1e-13 * _scale(vals, mask)
                msg = f"K={K}, case {case}, H={H}"
                np.testing.assert_allclose(got, ref, rtol=1e-13, atol=tol, err_msg=msg)
                np.testing.assert_allclose(got, traced, rtol=1e-13, atol=tol, err_msg=msg)


def test_static_H_has_no_pairwise_intermediate():
    K, d = 9, 5
    vals, mask = jnp.zeros((K, d)), jnp.ones(K, bool)
    for fn in (wmsr, trimmed_mean, clipped_mean):
        shapes = {tuple(v.aval.shape) for eqn in jax.make_jaxpr(lambda v, m, f=fn: f(v, m, 2))(
            vals, mask).eqns for v in eqn.outvars}
        assert (K, K, d) not in shapes, fn.__name__
        traced = {tuple(v.aval.shape) for eqn in jax.make_jaxpr(fn)(vals, mask, 2).eqns
                  for v in eqn.outvars}
        assert (K, K, d) in traced, fn.__name__           # the rank path for a traced H


def _exact_kept_mean(name, v, H):
    """math.fsum over the kept values of one coordinate (all real), and max |kept|."""
    x0, s = float(v[0]), sorted(float(a) for a in v)
    if name == "wmsr":
        above = sorted(a for a in v[1:] if a > x0)
        below = sorted(a for a in v[1:] if a < x0)
        kept = [x0, *(a for a in v[1:] if a == x0), *above[:max(len(above) - H, 0)],
                *below[H:]]
    elif name == "trimmed_mean":
        kept = s[H:len(s) - H]
    else:
        lo, hi = min(s[H], x0), max(s[len(s) - H - 1], x0)
        kept = [min(max(float(a), lo), hi) for a in v]
    return math.fsum(kept) / len(kept), max(abs(a) for a in kept)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", RESILIENT)
def test_static_H_sums_kept_values_directly(name, dtype):
    """Dropped +-1e6 / 1e9 next to O(1) values cost no precision: the error is a few ulps of
    the kept values (a sum-minus-dropped formula would be off by ~eps * 1e9)."""
    rng = np.random.default_rng(7)
    K, d, H = 9, 64, 2
    vals = rng.normal(size=(K, d))
    for c in range(d):
        byz = rng.choice(np.arange(1, K), size=int(rng.integers(1, H + 1)), replace=False)
        vals[byz, c] = rng.choice([1e6, -1e6, 1e9, -1e9], size=byz.size)
    vals = vals.astype(dtype)
    got = np.asarray(_JIT_STATIC[name](jnp.asarray(vals), None, H))
    assert got.dtype == dtype
    eps = float(np.finfo(dtype).eps)
    for c in range(d):
        exact, size = _exact_kept_mean(name, vals[:, c].astype(np.float64), H)
        assert abs(float(got[c]) - exact) <= 8 * eps * size, (c, float(got[c]), exact)


# ------------------------------------------------------------------------------------------
# 2. resilience properties (hypothesis; jitted aggregators with fixed K)
# ------------------------------------------------------------------------------------------

KH = 8
_coop_value = st.one_of(st.integers(-3, 3).map(float),
                        st.floats(-100, 100, allow_nan=False, allow_infinity=False))
_evil_value = st.one_of(st.sampled_from([1e9, -1e9, 1e6, -1e6, 0.0]),
                        st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False))
_garbage = st.one_of(st.sampled_from([np.nan, np.inf, -np.inf, 1e300]),
                     st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False))


@st.composite
def byzantine_cases(draw, max_H: int = 3):
    """(values [KH], mask [KH], H, byzantine [KH] bool): at most H real neighbour entries are
    Byzantine with arbitrary values; padding entries hold garbage."""
    H = draw(st.integers(0, max_H))
    mask = np.array([True] + draw(st.lists(st.booleans(), min_size=KH - 1, max_size=KH - 1)))
    coop = np.array(draw(st.lists(_coop_value, min_size=KH, max_size=KH)))
    evil = np.array(draw(st.lists(_evil_value, min_size=KH, max_size=KH)))
    garbage = np.array(draw(st.lists(_garbage, min_size=KH, max_size=KH)))
    real_nb = [int(k) for k in np.flatnonzero(mask[1:]) + 1]
    n_byz = draw(st.integers(0, min(H, len(real_nb))))
    chosen = draw(st.permutations(real_nb))[:n_byz]
    byz = np.zeros(KH, bool)
    byz[chosen] = True
    values = np.where(mask, np.where(byz, evil, coop), garbage)
    return values, mask, H, byz


def _coop_range(values, mask, byz):
    c = values[mask & ~byz]
    return float(c.min()), float(c.max()), 1e-12 * (1.0 + float(np.abs(c).max()))


@settings(max_examples=50)
@given(byzantine_cases())
def test_wmsr_stays_in_cooperative_range(case):
    values, mask, H, byz = case
    out = float(_JIT["wmsr"](jnp.asarray(values), jnp.asarray(mask), H))
    lo, hi, tol = _coop_range(values, mask, byz)
    assert lo - tol <= out <= hi + tol, (out, lo, hi)


@settings(max_examples=40)
@given(byzantine_cases(), st.sampled_from(["trimmed_mean", "clipped_mean"]))
def test_trimmed_and_clipped_stay_in_cooperative_range(case, name):
    values, mask, H, byz = case
    out = float(_JIT[name](jnp.asarray(values), jnp.asarray(mask), H))
    if mask.sum() >= 2 * H + 1:
        lo, hi, tol = _coop_range(values, mask, byz)
        assert lo - tol <= out <= hi + tol, (out, lo, hi)
    else:
        assert out == values[0]


@settings(max_examples=40)
@given(byzantine_cases())
def test_static_H_stays_in_cooperative_range_and_matches_traced(case):
    values, mask, H, byz = case
    lo, hi, tol = _coop_range(values, mask, byz)
    for name in RESILIENT:
        out = float(_JIT_STATIC[name](jnp.asarray(values), jnp.asarray(mask), H))
        traced = float(_JIT[name](jnp.asarray(values), jnp.asarray(mask), H))
        np.testing.assert_allclose(out, traced, rtol=1e-12, atol=1e-12 * _scale(values, mask),
                                   err_msg=name)
        if name == "wmsr" or mask.sum() >= 2 * H + 1:
            assert lo - tol <= out <= hi + tol, (name, out, lo, hi)
        else:
            assert out == values[0], name


@settings(max_examples=30)
@given(byzantine_cases(max_H=0))
def test_H0_is_the_mean(case):
    values, mask, _, _ = case
    ref = float(np.mean(values[mask]))
    for name in AGG_NAMES:
        out = float(_JIT[name](jnp.asarray(values), jnp.asarray(mask), 0))
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * _scale(values, mask),
                                   err_msg=name)


@settings(max_examples=30)
@given(byzantine_cases(), st.randoms(use_true_random=False))
def test_neighbour_permutation_invariance(case, rnd):
    values, mask, H, _ = case
    perm = [0] + rnd.sample(range(1, KH), KH - 1)
    tol = 1e-12 * _scale(values, mask)
    for name in AGG_NAMES:
        a = float(_JIT[name](jnp.asarray(values), jnp.asarray(mask), H))
        b = float(_JIT[name](jnp.asarray(values[perm]), jnp.asarray(mask[perm]), H))
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=tol, err_msg=name)


@settings(max_examples=30)
@given(st.lists(_coop_value, min_size=KH, max_size=KH),
       st.lists(st.booleans(), min_size=KH - 1, max_size=KH - 1), st.integers(0, 3),
       st.floats(-50, 50), st.floats(0.01, 20))
def test_affine_equivariance(vals, bits, H, a, c):
    values = np.array(vals)
    mask = np.array([True] + bits)
    for name in AGG_NAMES:
        base = float(_JIT[name](jnp.asarray(values), jnp.asarray(mask), H))
        moved = float(_JIT[name](jnp.asarray(a + c * values), jnp.asarray(mask), H))
        np.testing.assert_allclose(moved, a + c * base, rtol=1e-9, atol=1e-9, err_msg=name)


# ------------------------------------------------------------------------------------------
# 3. attackers
# ------------------------------------------------------------------------------------------

# i hears j when ATT_ADJ[i, j]; Byzantine 1 and 3. Receiver 2 hears only Byzantine 1,
# Byzantine 3 hears only Byzantine 1 (no cooperative entry at all: its view is its own value).
ATT_EDGES = [(1, 0), (3, 0), (0, 1), (2, 1), (3, 1), (1, 2), (1, 3),
             (0, 4), (1, 4), (2, 4), (3, 4)]                  # (sender, receiver)
ATT_ADJ = g.from_edges(5, ATT_EDGES)
ATT_BYZ = [1, 3]
ATT_COOP = np.array([True, False, True, False, True])
ATT_X = np.array([[0.3, -1.0], [40.0, 40.0], [0.9, 2.0], [-40.0, 5.0], [-0.2, 0.5]])


def _att_ctx(table=None):
    table = g.adjacency_to_table(ATT_ADJ) if table is None else table
    return AttackContext(table, jnp.asarray(ATT_BYZ, jnp.int32), jnp.asarray(ATT_COOP))


# one jitted step per library attack (keyed by name: every instance of a factory runs the same
# rule, only its params differ, and those are passed in); compiled once per value shape
_JIT_STEPS: dict = {}


def _messages(att, params=None, key=0, t=0, x=ATT_X, ctx=None):
    ctx = _att_ctx() if ctx is None else ctx
    params = att.params if params is None else params
    x = jnp.asarray(x)
    state = att.init(jax.random.key(key), params, x, ctx)
    jstep = _JIT_STEPS.setdefault(att.name, jax.jit(att.step))
    msgs, _ = jstep(jax.random.key(key), state, params, t, x, ctx)
    return np.asarray(msgs)


def _np_view_range(adj, coop, x, i):
    """Per-coordinate (lo, hi) of the cooperative values receiver i sees (own incl.)."""
    seen = [j for j in range(adj.shape[0]) if (j == i or adj[i, j]) and coop[j]]
    if not seen:
        return x[i], x[i]
    v = x[seen]
    return v.min(axis=0), v.max(axis=0)


def test_attackers_shapes_and_dtypes():
    for att in [constant(), huge(), random_values(), just_inside(), split_brain(),
                split_brain(inside=True), coordinate_extreme()]:
        msgs = _messages(att)
        assert msgs.shape == (2, 5, 2), att.name
        assert msgs.dtype == np.float64, att.name
        assert np.all(np.isfinite(msgs)), att.name
    for att in [huge(), just_inside()]:
        assert _messages(att, x=ATT_X[:, 0]).shape == (2, 5), att.name


def test_constant_attacker_and_params_override():
    assert float(constant(7.0).params["value"]) == 7.0
    assert np.all(_messages(constant(7.0)) == 7.0)
    assert np.all(_messages(constant(7.0), params={"value": jnp.asarray(-3.5)}) == -3.5)


def test_huge_attacker_signs_vary_per_receiver_and_step():
    m0 = _messages(huge(1e6))
    assert np.all(np.abs(m0) == 1e6)
    assert (m0 > 0).any() and (m0 < 0).any()
    assert not np.all(m0[:, :1] == m0)                       # receivers differ
    m1 = _messages(huge(1e6), t=1)
    assert not np.array_equal(m0, m1)                        # steps differ
    m_other = _messages(huge(1e6), params={"magnitude": jnp.asarray(5.0)})
    assert np.all(np.abs(m_other) == 5.0)


def test_random_values_attacker_in_bounds_and_varies():
    m = _messages(random_values(-2.0, 3.0))
    assert np.all((m >= -2.0) & (m <= 3.0))
    assert np.unique(m).size == m.size                       # every pair/coordinate differs
    m2 = _messages(random_values(), params={"low": jnp.asarray(100.0),
                                            "high": jnp.asarray(101.0)})
    assert np.all((m2 >= 100.0) & (m2 <= 101.0))
    assert not np.array_equal(m, _messages(random_values(-2.0, 3.0), key=1))
    assert not np.array_equal(m, _messages(random_values(-2.0, 3.0), t=5))


@pytest.mark.parametrize("side,margin", [(1.0, 0.0), (-1.0, 0.0), (1.0, 0.25), (-1.0, 0.1)])
def test_just_inside_matches_view_range(side, margin):
    m = _messages(just_inside(side, margin))
    for i in range(5):
        lo, hi = _np_view_range(ATT_ADJ, ATT_COOP, ATT_X, i)
        expect = hi - margin * (hi - lo) if side >= 0 else lo + margin * (hi - lo)
        for b in range(2):                                     # both senders alike
            np.testing.assert_allclose(m[b, i], expect, rtol=1e-14)
            assert np.all((m[b, i] >= lo) & (m[b, i] <= hi))
    assert not np.allclose(m[0, 0], m[0, 4])                 # per-receiver messages
    # receiver 3 sees no cooperative value: its own
    np.testing.assert_array_equal(m[:, 3], np.broadcast_to(ATT_X[3], (2, 2)))
    over = _messages(just_inside(side, margin), params={"side": jnp.asarray(-side),
                                                        "margin": jnp.asarray(0.0)})
    lo4, hi4 = _np_view_range(ATT_ADJ, ATT_COOP, ATT_X, 4)
    np.testing.assert_allclose(over[0, 4], lo4 if side >= 0 else hi4)


def test_split_brain_outside_and_inside():
    coop_mean = ATT_X[ATT_COOP].mean(axis=0)
    upper = ATT_X >= coop_mean                                 # [N, d]
    m = _messages(split_brain(50.0))
    np.testing.assert_array_equal(m, np.broadcast_to(np.where(upper, 50.0, -50.0), m.shape))
    assert (m > 0).any() and (m < 0).any()
    m_over = _messages(split_brain(50.0), params={"magnitude": jnp.asarray(2.0)})
    np.testing.assert_array_equal(np.abs(m_over), 2.0)
    mi = _messages(split_brain(inside=True))
    for i in range(5):
        lo, hi = _np_view_range(ATT_ADJ, ATT_COOP, ATT_X, i)
        np.testing.assert_allclose(mi[0, i], np.where(upper[i], hi, lo), rtol=1e-14)
    assert split_brain(inside=True).name != split_brain().name


@pytest.mark.parametrize("direction", [1.0, -1.0, [1.0, -1.0]])
def test_coordinate_extreme_per_coordinate(direction):
    att = coordinate_extreme(jnp.asarray(direction))
    m = _messages(att)
    dirs = np.broadcast_to(np.asarray(direction), (2,))
    for i in range(5):
        lo, hi = _np_view_range(ATT_ADJ, ATT_COOP, ATT_X, i)
        np.testing.assert_allclose(m[1, i], np.where(dirs >= 0, hi, lo), rtol=1e-14)
        assert np.all((m[:, i] >= lo) & (m[:, i] <= hi))
    flipped = _messages(att, params={"direction": -jnp.asarray(direction)})
    lo4, hi4 = _np_view_range(ATT_ADJ, ATT_COOP, ATT_X, 4)
    np.testing.assert_allclose(flipped[0, 4], np.where(dirs >= 0, lo4, hi4))


def _np_replace(idx, mask, gathered, slot, msgs):
    out = np.array(gathered, copy=True)
    n, k_width = idx.shape
    for i in range(n):
        for k in range(1, k_width):
            j = idx[i, k]
            if mask[i, k] and slot[j] >= 0:
                out[i, k] = msgs[slot[j], i]
    return out


@pytest.mark.parametrize("dense", [False, True])
def test_replace_byzantine_messages_matches_loop(dense):
    rng = np.random.default_rng(3)
    if dense:        # as_table of a dense W: non-neighbour columns point at real agents
        table = g.as_table(jnp.asarray(g.static(ATT_ADJ, rule="row").weights_host(1)[0]))
    else:            # padding repeats the own index (a Byzantine receiver's own index too)
        table = g.adjacency_to_table(ATT_ADJ)
    x = jnp.asarray(ATT_X)
    gathered = g.gather(table, x)
    slot = np.array([-1, 0, -1, 1, -1], np.int32)
    msgs = rng.normal(size=(2, 5, 2)) * 100.0
    got = np.asarray(replace_byzantine_messages(table, gathered, jnp.asarray(slot),
                                                jnp.asarray(msgs)))
    idx, mask = np.asarray(table.idx), np.asarray(table.mask)
    ref = _np_replace(idx, mask, np.asarray(gathered), slot, msgs)
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got[:, 0], ATT_X)          # own entries untouched
    assert (got != np.asarray(gathered)).any()
    assert (~mask & np.isin(idx, ATT_BYZ)).any() or not dense   # unreal Byzantine entries exist
    seq_ref = gathered
    for b, sender in enumerate(ATT_BYZ):
        seq_ref = g.replace_sender_messages(table, seq_ref, sender, jnp.asarray(msgs[b]))
    np.testing.assert_array_equal(got, np.asarray(seq_ref))
    # no Byzantine agent: nothing changes
    none = replace_byzantine_messages(table, gathered, jnp.full(5, -1, jnp.int32),
                                      jnp.zeros((0, 5, 2)))
    np.testing.assert_array_equal(np.asarray(none), np.asarray(gathered))


# ------------------------------------------------------------------------------------------
# 4. resilient consensus through the runner
# ------------------------------------------------------------------------------------------


def _np_step(adj, x, H, byz, message, agg):
    """Numpy reference of one step: ``message(x, adj, coop, sender, receiver) -> [d]``."""
    x = np.asarray(x, np.float64)
    n = x.shape[0]
    coop = np.ones(n, bool)
    coop[list(byz)] = False
    new = x.copy()
    for i in np.flatnonzero(coop):
        rows = [x[i]]
        for j in range(n):
            if j != i and adj[i, j]:
                rows.append(x[j] if coop[j] else message(x, adj, coop, j, i))
        new[i] = _ref_agg(agg, np.stack(rows), None, H)
    return new


def _one_step_ahead_error(records, pattern_at, H, byz, message, agg):
    """``max_t |records[t + 1] - ref_step(records[t])|`` over a recorded run (initial state
    included). Each step starts from the recorded state: W-MSR is discontinuous where a
    neighbour value ties the own value, so a reference that drifts by one ulp from the run
    could take the other branch; from the same state both make the same comparisons."""
    rec = np.asarray(records, np.float64)
    return max(float(np.abs(rec[t + 1] - _np_step(pattern_at(t), rec[t], H, byz, message,
                                                  agg)).max())
               for t in range(rec.shape[0] - 1))


def _msg_constant(c):
    return lambda x, adj, coop, j, i: np.full(x.shape[1:], c)


def _msg_just_inside(side, margin):
    def msg(x, adj, coop, j, i):
        lo, hi = _np_view_range(adj, coop, x, i)
        return hi - margin * (hi - lo) if side >= 0 else lo + margin * (hi - lo)
    return msg


def _msg_split(mag):
    def msg(x, adj, coop, j, i):
        return np.where(x[i] >= x[coop].mean(axis=0), mag, -mag)
    return msg


def test_one_step_by_hand_on_k4():
    alg = resilient_consensus(g.complete(4), 1, [3], constant(100.0), check=False)
    res = run(alg, resilient_consensus_params(jnp.array([0.0, 1.0, 2.0, 10.0])),
              seeds=[0], num_steps=1,
              record_fn=values_of)
    # agent 0 sees {0 | 1, 2, 100}: 100 dropped -> 1; agent 1 {1 | 0, 2, 100}: 0 and 100
    # dropped -> 1.5; agent 2 {2 | 0, 1, 100}: -> 1.5; the Byzantine agent keeps 10
    np.testing.assert_allclose(res.records[0, 0], [1.0, 1.5, 1.5, 10.0], rtol=1e-15)


# agents 0, 1, 2 cooperative with in-degrees 3, 4, 3; Byzantine 4; agent 3 has padding too
TINY_EDGES = [(1, 0), (2, 0), (4, 0), (0, 1), (2, 1), (3, 1), (4, 1), (0, 2), (1, 2), (4, 2),
              (1, 3), (4, 3), (0, 4), (1, 4), (2, 4), (3, 4)]
TINY_ADJ = g.from_edges(5, TINY_EDGES)
TINY_X0 = np.random.default_rng(10).uniform(-1.0, 3.0, size=(5, 2))     # generic: no ties
TINY_X0[4] = [-9.0, 9.0]

# attackers are built inside the tests (under float64): params built at import would be
# float32 constants
REF_CASES = [
    ("wmsr", 1, lambda: constant(10.0), {"value": -7.0}, _msg_constant(-7.0)),
    ("wmsr", 1, lambda: just_inside(1.0, 0.2), None, _msg_just_inside(1.0, 0.2)),
    ("trimmed_mean", 1, lambda: just_inside(-1.0, 0.0), None, _msg_just_inside(-1.0, 0.0)),
    ("clipped_mean", 1, lambda: constant(5.0), None, _msg_constant(5.0)),
    ("mean", 0, lambda: split_brain(3.0), None, _msg_split(3.0)),
]


@pytest.mark.parametrize("agg,H,make_att,aparams,msg", REF_CASES,
                         ids=["wmsr-constant", "wmsr-just_inside", "trimmed-just_inside",
                              "clipped-constant", "mean-split_brain"])
def test_trajectory_matches_numpy_loop(agg, H, make_att, aparams, msg):
    T = 6
    if aparams is not None:
        aparams = {k: jnp.asarray(v) for k, v in aparams.items()}
    alg = resilient_consensus(TINY_ADJ, H, [4], make_att(), aggregator=agg, check=False)
    res = run(alg, resilient_consensus_params(TINY_X0, attacker=aparams), seeds=[0, 1], num_steps=T,
              record_fn=values_of, record_initial=True)
    rec = np.asarray(res.records)
    assert rec.shape == (2, T + 1, 5, 2)
    np.testing.assert_array_equal(rec[:, 0], np.broadcast_to(TINY_X0, (2, 5, 2)))
    for s in range(2):
        assert _one_step_ahead_error(rec[s], lambda t: TINY_ADJ, H, [4], msg, agg) < 1e-12
    np.testing.assert_array_equal(rec[:, :, 4], np.broadcast_to(TINY_X0[4], (2, T + 1, 2)))
    assert np.abs(rec[0, 1] - TINY_X0).max() > 1e-3         # something happened


def test_dense_equals_sparse():
    T = 8
    att = random_values(-5.0, 5.0)
    params = resilient_consensus_params(TINY_X0)
    out = {}
    for backend in ["dense", "sparse"]:
        seq = g.static(TINY_ADJ, rule="row", backend=backend)
        alg = resilient_consensus(seq, 1, [4], att, check=False)
        out[backend] = run(alg, params, seeds=[3, 4], num_steps=T, record_fn=values_of).records
    np.testing.assert_allclose(out["dense"], out["sparse"], rtol=1e-13, atol=1e-13)
    assert not np.allclose(out["dense"][0], out["dense"][1])     # seeds draw different attacks


def test_eager_step_equals_jitted_step_and_runner():
    alg = resilient_consensus(g.static(TINY_ADJ, rule="row", backend="sparse"), 1, [4],
                              split_brain(inside=True), check=False)
    params = resilient_consensus_params(TINY_X0)
    T = 3
    rec = run(alg, params, seeds=[3], num_steps=T, record_fn=values_of).records[0]
    init_key, _ = seed_keys(3)
    state = alg.init(init_key, params)
    jstep = jax.jit(alg.step)
    for t in range(T):                     # the runner's keys: seed_keys / step_key
        key = step_key(3, t)
        eager, _ = alg.step(key, state, params, t, None)
        jitted, _ = jstep(key, state, params, t, None)
        np.testing.assert_allclose(np.asarray(eager.x), np.asarray(jitted.x), rtol=1e-14,
                                   atol=1e-14)
        np.testing.assert_allclose(np.asarray(eager.x), rec[t], rtol=1e-13, atol=1e-13)
        state = eager
    assert np.abs(rec[-1] - TINY_X0).max() > 1e-3


K5_X0 = np.array([[0.1, 0.9], [0.5, 0.2], [0.9, 0.4], [0.3, 0.7], [50.0, -50.0]])
# generic values (no exact ties: W-MSR is discontinuous at ties, so a reference loop that
# rounds differently by one ulp could take the other branch)
GEN_X0 = np.random.default_rng(11).uniform(-1.0, 1.0, size=(5, 2))
GEN_X0[4] = [50.0, -50.0]
K5_ATTACKERS = {
    "constant": lambda: constant(10.0), "huge": huge, "random": random_values,
    "just_inside": lambda: just_inside(-1.0, 0.1), "split_brain": split_brain,
    "split_brain_inside": lambda: split_brain(inside=True),
    "coordinate_extreme": lambda: coordinate_extreme(jnp.array([1.0, -1.0])),
}


@pytest.mark.parametrize("name", list(K5_ATTACKERS))
def test_k5_wmsr_resists_every_attacker(name):
    att = K5_ATTACKERS[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("error", HypothesisWarning)
        alg = resilient_consensus(g.complete(5), 1, [4], att)
    T = 60
    res = run(alg, resilient_consensus_params(K5_X0),
              seeds=[0, 1], num_steps=T, record_fn=values_of,
              record_initial=True)
    rec = np.asarray(res.records)                               # [S, T + 1, N, d]
    coop = np.array([True, True, True, True, False])
    lo, hi = K5_X0[coop].min(axis=0), K5_X0[coop].max(axis=0)
    xc = rec[:, :, coop]
    assert np.all(xc >= lo - 1e-12) and np.all(xc <= hi + 1e-12)
    final_spread = np.ptp(xc[:, -1], axis=1)                    # [S, d]
    assert np.all(final_spread < 1e-6), final_spread
    assert np.all(hull_violation(rec[0], K5_X0, coop) <= 1e-12)
    np.testing.assert_array_equal(rec[:, :, 4], np.broadcast_to(K5_X0[4], rec[:, :, 4].shape))


def test_plain_mean_is_dragged_to_the_attack():
    c = 1e6
    with pytest.warns(HypothesisWarning, match=r"more than H = 0 Byzantine"):
        alg = resilient_consensus(g.circulant(5, [-1, -2, -3]), 0, [4], constant(c),
                                  aggregator="mean")
    T = 150
    x0 = np.array([0.1, 0.5, 0.9, 0.3, 0.0])
    res = run(alg, resilient_consensus_params(x0), seeds=[0], num_steps=T, record_fn=values_of)
    gap = np.abs(res.records[0, :, :4] - c).max(axis=1)          # [T]
    assert gap[-1] < 1e-6 * c
    assert gap[-1] < gap[T // 2] < gap[0]


def test_periodic_sequence_matches_numpy_loop():
    pats = [g.complete(5), g.circulant(5, [-1, -2, -3]), g.circulant(5, [1, 2, 3])]
    seq = g.periodic(pats, rule="row")
    att = just_inside(1.0, 0.3)
    T = 7
    alg = resilient_consensus(seq, 1, [4], att, check=False)
    res = run(alg, resilient_consensus_params(GEN_X0), seeds=[0], num_steps=T, record_fn=values_of,
              record_initial=True)
    msg = _msg_just_inside(1.0, 0.3)
    assert _one_step_ahead_error(res.records[0], lambda t: pats[t % 3], 1, [4], msg,
                                 "wmsr") < 1e-12
    # step t uses graph t: the static K5 reference does not fit
    assert _one_step_ahead_error(res.records[0], lambda t: pats[0], 1, [4], msg, "wmsr") > 1e-6


def test_random_edge_drops_shared_matches_numpy_loop():
    seq = g.random_edge_drops(g.complete(5), 0.4, key=0)
    T = 10
    pats = seq.weights_host(T) > 0
    assert len({p.tobytes() for p in pats}) > 1                   # the graph changes
    att = just_inside(-1.0, 0.0)
    alg = resilient_consensus(seq, 1, [4], att, check=False)
    res = run(alg, resilient_consensus_params(GEN_X0),
              seeds=[0, 1], num_steps=T, record_fn=values_of,
              record_initial=True)
    msg = _msg_just_inside(-1.0, 0.0)
    assert _one_step_ahead_error(res.records[0], lambda t: pats[t], 1, [4], msg, "wmsr") < 1e-12
    assert _one_step_ahead_error(res.records[0], lambda t: pats[0], 1, [4], msg, "wmsr") > 1e-6
    np.testing.assert_array_equal(res.records[0], res.records[1])   # shared graphs


def test_random_edge_drops_per_seed():
    seq = g.random_edge_drops(g.complete(5), 0.4, shared_across_seeds=False)
    alg = resilient_consensus(seq, 1, [4], constant(10.0), check=False)
    T = 20
    res = run(alg, resilient_consensus_params(K5_X0),
              seeds=[0, 1, 2], num_steps=T, record_fn=values_of)
    rec = np.asarray(res.records)
    assert rec.shape == (3, T, 5, 2)
    coop = np.array([True, True, True, True, False])
    assert np.all(hull_violation(rec.reshape(3 * T, 5, 2), K5_X0, coop) <= 1e-12)
    # a deterministic attacker and one x0: seeds differ only through their graphs
    assert not np.allclose(rec[0], rec[1]) and not np.allclose(rec[1], rec[2])


# ------------------------------------------------------------------------------------------
# 5. hypothesis checks
# ------------------------------------------------------------------------------------------


def test_not_robust_graph_warns_with_robustness():
    circ = g.circulant(5, [-1, -2, -3])
    with pytest.warns(HypothesisWarning, match=r"is 2-robust < 2H \+ 1 = 3"):
        msgs = check_hypotheses(circ, 1, [4])
    assert len(msgs) == 1 and "cooperative subgraph is" in msgs[0]
    with pytest.warns(HypothesisWarning, match=r"2-robust"):
        resilient_consensus(circ, 1, [4], constant())


def test_few_in_neighbours_warns():
    with pytest.warns(HypothesisWarning) as caught:
        msgs = check_hypotheses(g.ring(5), 1, [])
    texts = [str(w.message) for w in caught]
    assert texts == msgs and len(msgs) == 2
    assert "fewer than 2H + 1 = 3 in-neighbours (in-degrees [1, 1, 1, 1, 1])" in msgs[0]
    assert "is 1-robust < 2H + 1 = 3" in msgs[1]
    with pytest.warns(HypothesisWarning) as caught:
        resilient_consensus(g.ring(5), 1, [], None)
    assert any("fewer than 2H + 1 = 3" in str(w.message) for w in caught)


def test_too_many_byzantine_in_neighbours_warns():
    with pytest.warns(HypothesisWarning, match=r"more than H = 1 Byzantine in-neighbours"):
        msgs = check_hypotheses(g.complete(5), 1, [3, 4])
    many = [m for m in msgs if "more than H" in m]
    assert len(many) == 1 and "[0, 1, 2]" in many[0] and "[2, 2, 2]" in many[0]


def test_k5_h1_one_byzantine_has_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", HypothesisWarning)
        assert check_hypotheses(g.complete(5), 1, [4]) == []
        resilient_consensus(g.complete(5), 1, [4], constant())
    assert check_hypotheses(g.circulant(5, [-1, -2, -3]), 1, [4], warn=False) != []


def test_sequences_say_what_is_checked():
    seq = g.random_edge_drops(g.complete(5), 0.3, key=0)
    with pytest.warns(HypothesisWarning, match="base graph of a random edge-drop sequence"):
        check_hypotheses(seq, 1, [3, 4])
    assert check_hypotheses(seq, 1, [4], warn=False) == []      # base K5 is fine
    per = g.periodic([g.complete(5), g.circulant(5, [-1, -2, -3])], rule="row")
    msgs = check_hypotheses(per, 1, [4], warn=False)
    assert len(msgs) == 1 and msgs[0].startswith("graph 1 of the 2 graphs of one period")


# ------------------------------------------------------------------------------------------
# 6. bad input
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [wmsr, trimmed_mean, clipped_mean, mean])
def test_aggregator_bad_input(fn):
    v = jnp.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="leading entry axis"):
        fn(jnp.asarray(1.0), None, 1)
    with pytest.raises(ValueError, match=r"mask must have shape \(3,\)"):
        fn(v, jnp.array([True, True]), 1)
    with pytest.raises(ValueError, match="mask must be boolean"):
        fn(v, jnp.array([1, 1, 0]), 1)
    with pytest.raises(ValueError, match=r"mask\[0\] must be True"):
        fn(v, jnp.array([False, True, True]), 1)
    with pytest.raises(ValueError, match="NaN or infinite"):
        fn(jnp.array([1.0, jnp.nan, 3.0]), None, 1)
    with pytest.raises(ValueError, match="NaN or infinite"):
        fn(jnp.array([1.0, 2.0, jnp.inf]), None, 1)
    for bad_H in [-1, 1.5, True, "1"]:
        with pytest.raises(ValueError, match="H must be a non-negative int"):
            fn(v, None, bad_H)


def test_consensus_params_bad_input():
    with pytest.raises(ValueError, match="finite"):
        resilient_consensus_params(np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="finite"):
        resilient_consensus_params(np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match="leading agent axis"):
        resilient_consensus_params(1.0)


def test_resilient_consensus_bad_arguments():
    k5 = g.complete(5)
    with pytest.raises(ValueError, match="H must be a non-negative int"):
        resilient_consensus(k5, -1, [4], constant())
    with pytest.raises(ValueError, match="H must be a non-negative int"):
        resilient_consensus(k5, 1.0, [4], constant())
    with pytest.raises(ValueError, match=r"outside the graph's 0\.\.4"):
        resilient_consensus(k5, 1, [5], constant())
    with pytest.raises(ValueError, match="outside"):
        resilient_consensus(k5, 1, [-1], constant())
    with pytest.raises(ValueError, match="twice"):
        resilient_consensus(k5, 1, [2, 2], constant())
    with pytest.raises(ValueError, match="at least one agent must be cooperative"):
        resilient_consensus(k5, 1, [0, 1, 2, 3, 4], constant())
    with pytest.raises(ValueError, match="need an attacker"):
        resilient_consensus(k5, 1, [4], None)
    with pytest.raises(ValueError, match="must be a resilient_ac.Attacker"):
        resilient_consensus(k5, 1, [4], lambda *a: None)
    with pytest.raises(ValueError, match="unknown aggregator 'median'"):
        resilient_consensus(k5, 1, [4], constant(), aggregator="median")
    with pytest.raises(ValueError, match="unknown aggregator"):
        get_aggregator("wmrs")
    with pytest.raises(ValueError, match=r"graphs must be a decentral\.graphs\.GraphSequence.*"
                                         r"got an array of shape \(3, 4\)"):
        resilient_consensus(np.ones((3, 4), bool), 1, [], None)
    with pytest.raises(ValueError, match="add_self_loops"):
        resilient_consensus(np.ones((3, 3), bool) & ~np.eye(3, dtype=bool), 1, [], None)
    with pytest.raises(ValueError, match="byzantine"):
        check_hypotheses(k5, 1, [7])


def test_x0_of_wrong_agent_count_is_refused():
    alg = resilient_consensus(g.complete(5), 1, [4], constant(), check=False)
    with pytest.raises(ValueError, match=r"params\.x0 has 4 agents; the graphs have N = 5"):
        run(alg, resilient_consensus_params(np.zeros((4, 2))), seeds=[0], num_steps=2)


def test_attacker_with_wrong_message_shape_is_refused():
    def init(key, params, values, ctx):
        return ()

    def step(key, state, params, t, values, ctx):
        return jnp.zeros((2,) + values.shape), state                # B is 1

    bad = Attacker(init, step, {}, "bad_shape")
    alg = resilient_consensus(g.complete(5), 1, [4], bad, check=False)
    with pytest.raises(ValueError, match=r"'bad_shape' returned messages of shape \(2, 5\); "
                                         r"expected \[B, N, \.\.\.\] = \(1, 5\)"):
        run(alg, resilient_consensus_params(np.arange(5.0)),
            seeds=[0], num_steps=2, record_fn=values_of)


def test_custom_aggregator_callable_is_used():
    def first(values, mask, H):
        return values[0]

    alg = resilient_consensus(g.complete(5), 1, [4], constant(1e6), aggregator=first,
                              check=False)
    res = run(alg, resilient_consensus_params(np.arange(5.0)), seeds=[0], num_steps=3,
              record_fn=values_of)
    np.testing.assert_array_equal(res.records[0, -1], np.arange(5.0))   # nobody moves


# ------------------------------------------------------------------------------------------
# 7. projection-based consensus
# ------------------------------------------------------------------------------------------


def _proj_case(rng, K=6, d=3):
    v = rng.normal(size=d)
    received = v + rng.normal(size=(K, d)) * 2.0
    received[-1] = 1e3 * rng.normal(size=d)                         # a wild message
    phi = rng.normal(size=d)
    mask = np.concatenate([[True], rng.random(K - 1) < 0.8])
    return v, received, phi, mask


@pytest.mark.parametrize("agg", RESILIENT + ["mean"])
def test_projection_step_moves_along_phi_and_aggregates_predictions(agg):
    rng = np.random.default_rng(5)
    beta = 0.3
    jstep = jax.jit(lambda v, r, m, phi, b, h: projection_step(v, r, m, phi, b, h,
                                                               aggregator=agg))
    for case in range(8):
        v, received, phi, mask = _proj_case(rng)
        H = case % 3
        new = np.asarray(jstep(jnp.asarray(v), jnp.asarray(received), jnp.asarray(mask),
                              jnp.asarray(phi), beta, H))
        step = new - v
        ortho = step - (step @ phi) / (phi @ phi) * phi
        np.testing.assert_allclose(ortho, 0.0, atol=1e-11 * (1 + np.abs(step).max()))
        expect = _ref_agg(agg, received @ phi, mask, H)              # affine equivariance
        np.testing.assert_allclose(phi @ new, expect, rtol=1e-10, atol=1e-10)


def test_projection_step_H0_is_mean_of_predictions():
    rng = np.random.default_rng(6)
    for _ in range(5):
        v, received, phi, mask = _proj_case(rng)
        new = np.asarray(jax.jit(projection_step, static_argnums=(4, 5))(
            v, received, mask, phi, 0.05, 0))
        np.testing.assert_allclose(phi @ new, np.mean((received @ phi)[mask]), rtol=1e-11)


def test_projection_docstring_example():
    phi = jnp.array([1.0, 2.0])
    msgs = jnp.array([[0.1, 0.2], [0.3, 0.6], [9.0, 9.0]])
    new = jax.jit(projection_step, static_argnums=(4, 5))(jnp.zeros(2), msgs, None, phi, 0.1, 1)
    np.testing.assert_allclose(float(phi @ new), 1.0, rtol=1e-12)


def test_projected_errors_formula_for_cooperative_senders():
    rng = np.random.default_rng(7)
    K, d, beta = 5, 4, 0.2
    v_i = rng.normal(size=d)
    v = rng.normal(size=(K, d))
    v[0] = v_i
    delta = rng.normal(size=K)
    phi = rng.normal(size=d)
    received = v + beta * delta[:, None] * phi
    e = np.asarray(projected_errors(v_i, received, phi, beta))
    expect = delta + (v - v_i) @ phi / (beta * phi @ phi)
    np.testing.assert_allclose(e, expect, rtol=1e-12, atol=1e-12)
    assert e[0] == pytest.approx(delta[0], rel=1e-12)                 # own: e^{ii} = delta^i


def test_weighted_output_step_single_sample_hits_target():
    rng = np.random.default_rng(8)
    for lr in [1e-3, 0.5, 3.0]:
        w = rng.normal(size=4)
        phi = rng.normal(size=(1, 3))
        y = rng.normal(size=1) * 5
        new = np.asarray(jax.jit(weighted_output_step)(jnp.asarray(w), jnp.asarray(phi),
                                                       jnp.asarray(y), lr))
        pred = np.append(phi[0], 1.0) @ new
        np.testing.assert_allclose(pred, y[0], rtol=1e-13, atol=1e-13)


def test_weighted_output_step_batch_closed_form():
    rng = np.random.default_rng(9)
    B, d, lr = 6, 3, 0.07
    w = rng.normal(size=d + 1)
    phi = rng.normal(size=(B, d))
    y = rng.normal(size=B)
    new = np.asarray(jax.jit(weighted_output_step)(w, phi, y, lr))
    aug = np.concatenate([phi, np.ones((B, 1))], axis=1)
    pred = aug @ w
    expect = w + np.mean((y - pred)[:, None] * aug / (np.sum(phi**2, axis=1) + 1)[:, None],
                         axis=0)
    np.testing.assert_allclose(new, expect, rtol=1e-13, atol=1e-13)
    assert np.abs(new - w).max() > 1e-3


# ------------------------------------------------------------------------------------------
# 8. metrics
# ------------------------------------------------------------------------------------------


def test_cooperative_spread_by_hand():
    coop = np.array([True, True, False])
    x = np.array([[0.0, 1.0, 9.0], [0.5, 0.6, -9.0]])                  # [T, N]
    np.testing.assert_allclose(cooperative_spread(x, coop), [1.0, 0.1], rtol=1e-14)
    xv = np.array([[[0.0, 10.0], [2.0, 7.0], [100.0, -100.0]]])        # [T = 1, N, d = 2]
    np.testing.assert_allclose(cooperative_spread(xv, coop), [3.0])
    # an explicit agent axis; the axes after it are coordinates (max over them)
    np.testing.assert_allclose(cooperative_spread(xv, coop, agent_axis=1), [3.0])
    np.testing.assert_allclose(cooperative_spread(x.T, coop, agent_axis=0), 1.0)
    with pytest.raises(ValueError, match="length N = 3"):
        cooperative_spread(np.zeros((2, 4)), coop)


def test_hull_violation_by_hand():
    coop = np.array([True, True, False])
    x0 = np.array([0.0, 1.0, 9.0])
    x = np.array([[-0.5, 1.0, 50.0], [0.2, 1.3, -4.0], [0.2, 0.8, 100.0]])
    np.testing.assert_allclose(hull_violation(x, x0, coop), [0.5, 0.3, 0.0], rtol=1e-12)
    x0v = np.array([[0.0, 8.0], [1.0, 9.0], [50.0, 50.0]])
    xv = np.array([[[0.0, 10.0], [2.0, 6.5], [100.0, -100.0]],
                   [[0.5, 8.5], [1.0, 9.0], [100.0, -100.0]]])          # [T = 2, N, d]
    np.testing.assert_allclose(hull_violation(xv, x0v, coop), [1.5, 0.0])


def test_in_degree_hypothesis_only_for_H_at_least_one():
    # a rooted out-branching 0 -> 1 -> 2: 1-robust, its root has in-degree 0; plain averaging
    # (H = 0) still reaches consensus, so nothing is flagged
    branching = g.from_edges(3, [(0, 1), (1, 2)])
    assert g.r_robustness(branching) == 1
    assert check_hypotheses(branching, 0, [], warn=False) == []
    msgs = check_hypotheses(branching, 1, [], warn=False)
    assert any("fewer than 2H + 1 = 3" in m for m in msgs)


def test_skipped_robustness_says_why():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_hypotheses(g.complete(5), 1, [4], check_robustness=False)
    texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)
             and not issubclass(w.category, HypothesisWarning)]
    assert texts and "check_robustness=False" in texts[0] and "N = 5 >" not in texts[0]


def test_switch_attacker_plays_the_chosen_attack():
    table = g.adjacency_to_table(g.complete(4))
    ctx = AttackContext(table, jnp.array([3]), jnp.array([True, True, True, False]))
    x = jnp.array([0.1, 0.5, 0.9, 7.0])
    sw = switch_attacker([constant(1.0), constant(2.0), just_inside(-1.0)])
    for which, want in enumerate([1.0, 2.0, 0.1]):
        params = {**sw.params, "which": jnp.asarray(which, jnp.int32)}
        state = sw.init(jax.random.key(0), params, x, ctx)
        msgs, _ = sw.step(jax.random.key(1), state, params, 0, x, ctx)
        assert msgs.shape == (1, 4)
        np.testing.assert_allclose(np.asarray(msgs)[0, :3], want)
    with pytest.raises(ValueError, match="non-empty"):
        switch_attacker([])


def test_hypotheses_above_the_dense_limit_are_checked_on_sparse_patterns():
    # A circulant graph of n > DENSE_LIMIT agents where agent i hears 3 others (i + 1, i + 2,
    # i + 3): with agents 5 and 6 Byzantine, agents 3 and 4 hear both (> H = 1); with H = 2
    # every cooperative agent has fewer than 2H + 1 = 5 in-neighbours. The sparse check must
    # give the messages the dense check gives on the same graph at a small n.
    def messages(n, H, sparse):
        adj = g.circulant(n, [-1, -2, -3], sparse=sparse)
        return check_hypotheses(adj, H, [5, 6], check_robustness=False, warn=False)

    n = g.DENSE_LIMIT + 1
    big = messages(n, 1, True)
    assert len(big) == 1 and "cooperative agents [3, 4] have more than H = 1 Byzantine" in big[0]
    assert big == messages(40, 1, False)
    few = messages(n, 2, True)
    assert "cooperative agents [0, 1, 2, 3, 4, 7, 8, 9, 10, 11] have fewer than 2H + 1 = 5" in \
        few[0]
    assert few[0] == messages(40, 2, False)[0]
    with pytest.raises(ValueError, match="check_robustness=True.*DENSE_LIMIT"):
        check_hypotheses(g.circulant(n, [-1, -2, -3], sparse=True), 1, [0],
                         check_robustness=True)
    with pytest.warns(UserWarning, match="not computed above decentral.graphs.DENSE_LIMIT"):
        resilient_consensus(g.circulant(n, [-1, -2, -3], sparse=True), 1, [5], huge())
