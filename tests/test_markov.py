"""Tests for decentral.markov: finite chains, stationary laws, sampling, mixing time tau(alpha)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from decentral.markov import (
    SAMPLER_VERSION,
    MarkovChain,
    expected_table,
    markov_chain,
    mixing_time,
    next_state,
    pair_chain,
    pair_index,
    sample_path,
    stationary_distribution,
)

# float64 for the whole module (identities compared to ~1e-12), restored afterwards
pytestmark = pytest.mark.usefixtures("x64_module")


P2 = np.array([[0.9, 0.1], [0.5, 0.5]])
P3 = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.4, 0.0, 0.6]])


def random_chain(rng: np.random.Generator, num_states: int, sparse: bool = True) -> np.ndarray:
    """Irreducible aperiodic chain: a positive diagonal plus a cycle plus random extra edges."""
    mask = rng.random((num_states, num_states)) < (0.4 if sparse else 1.1)
    mask |= np.eye(num_states, dtype=bool)
    mask[np.arange(num_states), (np.arange(num_states) + 1) % num_states] = True
    weights = rng.random((num_states, num_states)) * mask
    return weights / weights.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- independent reference code


def reference_stationary(p: np.ndarray) -> np.ndarray:
    """mu from the eigenvector of P^T for the eigenvalue closest to 1 (irreducible P)."""
    vals, vecs = np.linalg.eig(p.T)
    v = np.real(vecs[:, np.argmin(np.abs(vals - 1.0))])
    return v / v.sum()


def reference_norm(entry: np.ndarray, kind: str) -> float:
    if kind == "scalar":
        return abs(float(entry))
    if kind == "vector":
        return math.sqrt(float(np.sum(entry**2)))
    if kind == "matrix":
        return float(np.max(np.linalg.svd(entry, compute_uv=False)))
    return max(math.sqrt(float(np.sum(row**2))) for row in entry)  # agents


def reference_deviations(p, tables, kinds, starts, horizon):
    """[horizon + 1] worst deviation max_{x, f} ||sum_y (P^t(x,y) - mu(y)) f(y)|| by brute force."""
    mu = reference_stationary(p)
    power = np.eye(p.shape[0])
    out = []
    for _ in range(horizon + 1):
        worst = 0.0
        for f, kind in zip(tables, kinds, strict=True):
            for x in starts:
                entry = sum((power[x, y] - mu[y]) * f[y] for y in range(p.shape[0]))
                worst = max(worst, reference_norm(np.asarray(entry), kind))
        out.append(worst)
        power = power @ p
    return np.array(out)


def last_violation_plus_one(devs: np.ndarray, alpha: float) -> int:
    hits = np.flatnonzero(devs > alpha)
    return int(hits[-1]) + 1 if hits.size else 0


# ------------------------------------------------------------------------ construction checks


def test_markov_chain_fields_and_cumulative_table():
    chain = markov_chain(P3)
    assert isinstance(chain, MarkovChain)
    np.testing.assert_allclose(np.asarray(chain.transition), P3, rtol=0, atol=0)
    cum = np.asarray(chain.cumulative)
    np.testing.assert_allclose(cum, np.cumsum(P3, axis=1), rtol=0, atol=1e-15)
    assert np.all(cum[:, -1] == 1.0)
    assert cum[2, 0] == cum[2, 1]  # P3[2, 1] = 0: an empty interval, never drawn


def test_cumulative_is_exactly_one_from_the_last_positive_entry():
    # rows whose float64 cumsum ends below 1 (0.1 + 0.2 + 0.7 != 1.0) and trailing zeros
    p = np.array([[0.1, 0.2, 0.7, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0],
                  [0.3, 0.3, 0.0, 0.0, 0.4], [0.2] * 5, [0.0, 0.5, 0.0, 0.5, 0.0]])
    cum = np.asarray(markov_chain(p).cumulative)
    last = [2, 2, 4, 4, 3]
    for x, k in enumerate(last):
        assert np.all(cum[x, k:] == 1.0), (x, cum[x])
        assert np.all(cum[x, :k] < 1.0)
    # the traced construction (inside jit) builds the same table
    traced = jax.jit(lambda q: markov_chain(q).cumulative)(jnp.asarray(p))
    np.testing.assert_allclose(np.asarray(traced), cum, rtol=0, atol=1e-15)
    assert np.all(np.asarray(traced)[np.arange(5), last] == 1.0)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.ones((2, 3)) / 3, "square"),
        (np.array([0.5, 0.5]), "square"),
        (np.zeros((0, 0)), "no states"),
        (np.array([[np.nan, 1.0], [0.5, 0.5]]), "NaN or infinite"),
        (np.array([[np.inf, 0.0], [0.5, 0.5]]), "NaN or infinite"),
        (np.array([[1.5, -0.5], [0.5, 0.5]]), "negative"),
        (np.array([[0.5, 0.5], [0.5, 0.4]]), r"row 1 sums to 0\.9.*normalise"),
        (np.array([[0.5, 0.5 + 1e-9], [0.5, 0.5]]), "row 0 sums to"),
        (np.array([[True, False], [False, True]]), "real probabilities"),
    ],
)
def test_bad_transition_matrices_raise(bad, match):
    with pytest.raises(ValueError, match=match):
        markov_chain(bad)
    with pytest.raises(ValueError, match=match):
        stationary_distribution(bad)
    with pytest.raises(ValueError, match=match):
        mixing_time(bad, np.zeros(max(bad.shape[0], 1)), 0.1)


def test_row_sum_tolerance_accepts_roundoff():
    p = np.array([[0.5, 0.5 + 1e-12], [0.5, 0.5]])
    markov_chain(p)  # within 1e-10: accepted


def test_markov_chain_traced_input_under_jit():
    @jax.jit
    def draw(p, key):
        return next_state(key, markov_chain(p), 0)

    x = draw(jnp.asarray([[0.0, 1.0], [1.0, 0.0]]), jax.random.key(3))
    assert int(x) == 1


# ---------------------------------------------------------------------- stationary distribution


@settings(max_examples=20)
@given(num_states=st.integers(1, 7), seed=st.integers(0, 2**31 - 1))
def test_stationary_matches_linear_solve(num_states, seed):
    p = random_chain(np.random.default_rng(seed), num_states)
    mu = stationary_distribution(p)
    # independent linear solve: least squares on [P^T - I; 1^T] mu = [0; 1]
    system = np.vstack([p.T - np.eye(num_states), np.ones((1, num_states))])
    rhs = np.zeros(num_states + 1)
    rhs[-1] = 1.0
    ref = np.linalg.lstsq(system, rhs, rcond=None)[0]
    np.testing.assert_allclose(mu, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mu @ p, mu, rtol=0, atol=1e-13)
    assert abs(mu.sum() - 1.0) < 1e-14 and np.all(mu >= 0)


def test_stationary_with_transient_states():
    # state 2 is transient and drains into the closed class {0, 1}
    p = np.array([[0.9, 0.1, 0.0], [0.5, 0.5, 0.0], [0.3, 0.3, 0.4]])
    mu = stationary_distribution(p)
    np.testing.assert_allclose(mu, [5 / 6, 1 / 6, 0.0], rtol=0, atol=1e-15)


def test_stationary_reducible_raises():
    p = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.0, 0.5, 0.5]])
    with pytest.raises(ValueError, match="2 closed classes"):
        stationary_distribution(p)


def test_stationary_matches_long_path_frequency():
    """Empirical frequencies of one long path vs mu, with a 5-sigma Markov-chain CLT band.

    The asymptotic variance of the frequency of state y is sigma^2 / n with
    sigma^2 = 2 <g, Z g>_mu - <g, g>_mu, g = 1_y - mu(y), Z = (I - P + 1 mu^T)^{-1} (the
    fundamental matrix): the binomial variance corrected for the chain's autocorrelation.
    """
    p = P3
    n = 100_000
    mu = stationary_distribution(p)
    path = np.asarray(sample_path(jax.random.key(20240601), markov_chain(p), 0, n))
    freq = np.bincount(path[1:], minlength=3) / n
    fundamental = np.linalg.inv(np.eye(3) - p + np.outer(np.ones(3), mu))
    for y in range(3):
        g = (np.arange(3) == y) - mu[y]
        sigma2 = 2 * np.sum(mu * g * (fundamental @ g)) - np.sum(mu * g * g)
        binomial = mu[y] * (1 - mu[y])
        assert sigma2 >= binomial * 0.1  # sanity: same order as the i.i.d. variance
        tol = 5 * math.sqrt(sigma2 / n) + 10 / n  # 10 / n: start-state bias
        assert abs(freq[y] - mu[y]) < tol, (y, freq[y], mu[y], tol)


def test_expected_table():
    a_tab = np.array([[[-1.0]], [[-3.0]]])
    np.testing.assert_allclose(expected_table(P2, a_tab), [[-(5 / 6) - 3 / 6]], atol=1e-15)
    b_tab = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    mu = stationary_distribution(P2)
    np.testing.assert_allclose(expected_table(P2, b_tab), mu[0] * b_tab[0] + mu[1] * b_tab[1])
    with pytest.raises(ValueError, match="leading axis"):
        expected_table(P2, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        expected_table(P2, np.array([0.0, np.nan]))


# ----------------------------------------------------------------------------------- sampling


def test_sample_path_shape_start_and_support():
    p = np.array(
        [[0.5, 0.5, 0.0, 0.0], [0.0, 0.2, 0.8, 0.0], [0.0, 0.0, 0.3, 0.7], [0.6, 0.0, 0.0, 0.4]]
    )
    chain = markov_chain(p)
    path = sample_path(jax.random.key(0), chain, 2, 3000)
    assert path.shape == (3001,) and path.dtype == jnp.int32
    path = np.asarray(path)
    assert path[0] == 2
    assert np.all(p[path[:-1], path[1:]] > 0), "a step used a zero-probability transition"
    assert set(np.unique(path)) == {0, 1, 2, 3}
    assert len(np.asarray(sample_path(jax.random.key(0), chain, 1, 0))) == 1


def test_sample_path_uses_fold_in_keys_and_chunks_exactly():
    chain = markov_chain(P3)
    key = jax.random.key(7)
    full = np.asarray(sample_path(key, chain, 1, 100))
    # step t uses fold_in(key, t)
    step = jax.jit(lambda t, x: next_state(jax.random.fold_in(key, t), chain, x))
    x = 1
    for t in range(100):
        x = int(step(t, x))
        assert x == full[t + 1]
    first = np.asarray(sample_path(key, chain, 1, 60))
    second = np.asarray(sample_path(key, chain, int(first[-1]), 40, start_step=60))
    np.testing.assert_array_equal(np.concatenate([first, second[1:]]), full)
    jitted = jax.jit(sample_path, static_argnums=3)(key, chain, 1, 100)
    np.testing.assert_array_equal(np.asarray(jitted), full)


def test_sample_path_bad_num_steps():
    with pytest.raises(ValueError, match="num_steps"):
        sample_path(jax.random.key(0), markov_chain(P2), 0, -1)
    with pytest.raises(ValueError, match="num_steps"):
        sample_path(jax.random.key(0), markov_chain(P2), 0, 2.5)


def test_next_state_vmap_matches_loop_and_distribution():
    chain = markov_chain(P3)
    n = 6000
    keys = jax.random.split(jax.random.key(11), n)
    states = jnp.asarray(np.arange(n) % 3, dtype=jnp.int32)
    batched = np.asarray(jax.jit(jax.vmap(next_state, in_axes=(0, None, 0)))(keys, chain, states))
    assert batched.dtype == np.int32
    single = jax.jit(next_state)
    for i in range(0, n, 997):
        assert int(single(keys[i], chain, states[i])) == batched[i]
    # independent draws: exact binomial counts, 5-sigma band
    for x in range(3):
        draws = batched[np.asarray(states) == x]
        m = draws.size
        for y in range(3):
            count = np.sum(draws == y)
            sd = math.sqrt(m * P3[x, y] * (1 - P3[x, y]))
            assert abs(count - m * P3[x, y]) <= 5 * sd + 1e-9, (x, y, count)
    # vmap over the chain too (a stack of chains)
    stacked = jax.tree.map(lambda a, b: jnp.stack([a, b]), markov_chain(P3), markov_chain(P3[::-1]))
    both = jax.vmap(next_state, in_axes=(None, 0, None))(keys[0], stacked, 0)
    assert both.shape == (2,)


def chi_square(counts: np.ndarray, probs: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic sum (n_y - n p_y)^2 / (n p_y) over the states with p_y > 0, and its
    degrees of freedom (number of such states - 1)."""
    support = probs > 0
    n = counts.sum()
    expected = n * probs[support]
    return float(np.sum((counts[support] - expected) ** 2 / expected)), int(support.sum() - 1)


# Rows with a zero in the middle and one at the end, so both kinds of empty interval are hit.
P5 = np.array([
    [0.05, 0.25, 0.0, 0.4, 0.3],
    [0.2, 0.2, 0.2, 0.2, 0.2],
    [0.0, 0.0, 0.9, 0.1, 0.0],
    [0.5, 0.0, 0.25, 0.0, 0.25],
    [0.01, 0.49, 0.3, 0.2, 0.0],
])
DRAWS = 200_000
# chi-square tail probability 1e-6 per row: a correct sampler fails it with probability ~5e-6
# over the five rows for an arbitrary seed (and the seed is fixed), while the planted wrong
# samplers below exceed it by orders of magnitude
CHI2_TAIL = 1e-6


def draw_counts(sampler, chain, row: int, seed: int) -> np.ndarray:
    keys = jax.random.split(jax.random.key(seed), DRAWS)
    states = jnp.full(DRAWS, row, dtype=jnp.int32)
    draws = np.asarray(jax.jit(jax.vmap(sampler, in_axes=(0, None, 0)))(keys, chain, states))
    return np.bincount(draws, minlength=chain.transition.shape[0])


def chi_square_rejects(sampler, chain, probs: np.ndarray, seed: int) -> list[int]:
    """Rows whose counts fail the chi-square goodness-of-fit test against ``probs`` (or that
    drew a state of probability 0)."""
    from scipy.stats import chi2

    bad = []
    for row in range(probs.shape[0]):
        counts = draw_counts(sampler, chain, row, seed + row)
        stat, dof = chi_square(counts, probs[row])
        if stat > chi2.isf(CHI2_TAIL, dof) or np.any(counts[probs[row] == 0] > 0):
            bad.append(row)
    return bad


def test_next_state_distribution_chi_square():
    chain = markov_chain(P5)
    assert chi_square_rejects(next_state, chain, P5, seed=2024) == []


def test_chi_square_check_rejects_wrong_samplers():
    """Negative controls: the same test flags samplers that are subtly or plainly wrong."""
    chain = markov_chain(P5)
    # one percentage point of probability moved between the two likeliest states of each row
    skewed = P5.copy()
    for x in range(5):
        first, second = np.argsort(-P5[x], kind="stable")[:2]
        skewed[x, first] += 0.01
        skewed[x, second] -= 0.01
    assert chi_square_rejects(next_state, markov_chain(skewed), P5, seed=2024) == list(range(5))
    # the transposed orientation (columns read as rows)
    transposed = P5.T / P5.T.sum(axis=1, keepdims=True)
    assert chi_square_rejects(next_state, markov_chain(transposed), P5, seed=2024) != []

    # counting against the probabilities instead of their cumulative sums
    def uncumulated(key, chain, state):
        u = jax.random.uniform(key, dtype=chain.transition.dtype)
        return jnp.minimum(jnp.sum(chain.transition[state] <= u, dtype=jnp.int32), 4)

    assert chi_square_rejects(uncumulated, chain, P5, seed=2024) == list(range(5))


def test_next_state_float32_table_never_draws_a_zero_probability_state():
    # a float32 table: the float64 cumsum rounds, yet the empty intervals stay empty
    p = np.array([[1 / 3, 0.0, 1 / 3, 1 / 3, 0.0], [0.0, 0.0, 0.0, 1e-9, 1 - 1e-9],
                  [0.7, 0.1, 0.2, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0], [0.25] * 4 + [0.0]])
    c64 = markov_chain(p)
    chain = MarkovChain(jnp.asarray(c64.transition, jnp.float32),
                        jnp.asarray(c64.cumulative, jnp.float32))
    for row in range(5):
        counts = draw_counts(next_state, chain, row, seed=row)
        assert np.all(counts[p[row] == 0] == 0), (row, counts)


# The first 20 states of sample_path(key(123), markov_chain(P3), 0, ...) under sampler version 2
# (float64, as this module runs).
PINNED_PATH = [0, 1, 1, 1, 1, 0, 1, 1, 2, 2, 0, 0, 0, 2, 0, 1, 1, 1, 1, 2]


def test_sampler_is_reproducible_by_key_and_pinned():
    """Same key, same path; a change of these numbers changes the sampler: bump
    SAMPLER_VERSION (and say so in decentral/markov.py) before updating them."""
    chain = markov_chain(P3)
    a = np.asarray(sample_path(jax.random.key(123), chain, 0, 40))
    b = np.asarray(sample_path(jax.random.key(123), chain, 0, 40))
    c = np.asarray(sample_path(jax.random.key(124), chain, 0, 40))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert SAMPLER_VERSION == "2"
    assert a[:20].tolist() == PINNED_PATH


def test_digest_sees_the_matrix_and_the_sampler_version(monkeypatch):
    import decentral.markov as markov

    d = markov_chain(P3).digest()
    assert d == markov_chain(P3.copy()).digest()
    assert d.startswith(f"markov/{SAMPLER_VERSION}:")
    assert d != markov_chain(P3[::-1]).digest()
    monkeypatch.setattr(markov, "SAMPLER_VERSION", "99")
    assert markov_chain(P3).digest() != d


# ------------------------------------------------------------------------------ mixing time


def test_mixing_time_two_state_closed_form():
    # two states: P^t - 1 mu^T = lambda^t (I - 1 mu^T), lambda = 1 - p - q
    p, q = 0.3, 0.2
    chain = np.array([[1 - p, p], [q, 1 - q]])
    f = np.array([1.0, -2.0])
    mu = np.array([q, p]) / (p + q)
    spread = np.max(np.abs(f - mu @ f))
    lam = abs(1 - p - q)
    for alpha in [0.7, 0.1, 1e-3, 1e-6, 1e-9]:
        expected = max(0, math.ceil(math.log(alpha / spread) / math.log(lam)))
        assert mixing_time(chain, f, alpha) == expected
    assert mixing_time(chain, f, 10.0) == 0
    assert mixing_time(chain, [1.0, -2.0], 1e-3) == mixing_time(chain, (f,), 1e-3)


@settings(max_examples=30)
@given(
    num_states=st.integers(2, 5),
    seed=st.integers(0, 2**31 - 1),
    kind=st.sampled_from(["scalar", "vector", "matrix", "agents", "agents2d"]),
    log_alpha=st.floats(-8.0, 0.0),
    restrict=st.booleans(),
)
def test_mixing_time_matches_brute_force(num_states, seed, kind, log_alpha, restrict):
    rng = np.random.default_rng(seed)
    p = random_chain(rng, num_states)
    shape = {"scalar": (), "vector": (3,), "matrix": (2, 2), "agents": (3, 2), "agents2d": (4,)}
    f = rng.normal(size=(num_states, *shape[kind]))
    lib_kind = "agents" if kind == "agents2d" else kind
    starts = [int(rng.integers(num_states))] if restrict else list(range(num_states))
    alpha = 10.0**log_alpha
    devs = reference_deviations(p, [f], [lib_kind], starts, 400)
    assume(devs[-1] < alpha * 1e-3)  # the brute-force horizon reached the tail
    assume(np.all(np.abs(devs - alpha) > 1e-9 * alpha))  # no round-off tie with alpha
    expected = last_violation_plus_one(devs, alpha)
    got = mixing_time(
        p, [f], alpha, kinds=[lib_kind], start_states=starts if restrict else None
    )
    assert got == expected


def test_mixing_time_several_tables_is_the_max():
    rng = np.random.default_rng(5)
    p = random_chain(rng, 4)
    a_tab = rng.normal(size=(4, 2, 2))
    b_tab = rng.normal(size=(4, 3, 2)) * 3
    alpha = 1e-4
    both = mixing_time(p, [a_tab, b_tab], alpha, kinds=["matrix", "agents"])
    each = [
        mixing_time(p, a_tab, alpha, kinds="matrix"),
        mixing_time(p, b_tab, alpha, kinds="agents"),
    ]
    assert both == max(each)
    devs = reference_deviations(p, [a_tab, b_tab], ["matrix", "agents"], range(4), 300)
    assert both == last_violation_plus_one(devs, alpha)


def test_mixing_time_non_monotone_deviation_uses_last_violation():
    """From a fixed start, a nearly periodic chain's deviation dips below alpha, then rises.

    Lazy 3-cycle started at state 0, f = indicator of state 0: P^t(0, 0) is near 0 at t = 1, 2
    and near 1 again at t = 3, so |P^t(0, 0) - 1/3| goes 2/3, ~1/3, ~1/3, ~0.6, ... . With
    alpha = 0.5 the first crossing (t = 1) is wrong; tau is the last violation + 1.
    """
    eps = 0.05
    cycle = np.roll(np.eye(3), 1, axis=1)
    p = (1 - eps) * cycle + eps * np.eye(3)
    f = np.array([1.0, 0.0, 0.0])
    alpha = 0.5
    devs = reference_deviations(p, [f], ["scalar"], [0], 400)
    first_crossing = int(np.flatnonzero(devs <= alpha)[0])
    tau = mixing_time(p, f, alpha, start_states=[0])
    assert first_crossing == 1
    assert tau == last_violation_plus_one(devs, alpha)
    assert tau > first_crossing + 2
    assert devs[tau] <= alpha < devs[tau - 1]


@settings(max_examples=15)
@given(num_states=st.integers(2, 6), seed=st.integers(0, 2**31 - 1))
def test_worst_case_over_all_starts_is_non_increasing(num_states, seed):
    """max_x ||E_t(x)|| is non-increasing (E_{t+1} = P E_t), so there tau = first crossing."""
    rng = np.random.default_rng(seed)
    p = random_chain(rng, num_states)
    f = rng.normal(size=(num_states, 2, 2))
    devs = reference_deviations(p, [f], ["matrix"], range(num_states), 60)
    assert np.all(np.diff(devs) <= 1e-12 * devs[0])


def test_mixing_time_given_horizon():
    rng = np.random.default_rng(1)
    p = random_chain(rng, 4)
    f = rng.normal(size=4)
    alpha = 1e-6
    auto = mixing_time(p, f, alpha)
    assert mixing_time(p, f, alpha, horizon=auto + 50) == auto
    with pytest.warns(UserWarning, match="not excluded"):
        short = mixing_time(p, f, alpha, horizon=2)
    assert short <= 3
    with pytest.raises(ValueError, match="horizon"):
        mixing_time(p, f, alpha, horizon=-1)


@pytest.mark.parametrize("alpha", [0.0, -1.0, float("nan"), float("inf")])
def test_mixing_time_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha must be finite and > 0"):
        mixing_time(P2, np.array([0.0, 1.0]), alpha)


def test_mixing_time_bad_inputs():
    f = np.array([0.0, 1.0])
    with pytest.raises(ValueError, match="periodic"):
        mixing_time(np.array([[0.0, 1.0], [1.0, 0.0]]), f, 0.1)
    with pytest.raises(ValueError, match="closed classes"):
        mixing_time(np.eye(2), f, 0.1)
    with pytest.raises(ValueError, match="kinds="):
        mixing_time(P2, np.zeros((2, 2, 2)), 0.1)
    with pytest.raises(ValueError, match="does not fit kind"):
        mixing_time(P2, np.zeros((2, 2)), 0.1, kinds=["matrix"])
    with pytest.raises(ValueError, match="not one of"):
        mixing_time(P2, f, 0.1, kinds=["sup"])
    with pytest.raises(ValueError, match="leading axis"):
        mixing_time(P2, np.zeros(3), 0.1)
    with pytest.raises(ValueError, match="start_states"):
        mixing_time(P2, f, 0.1, start_states=[2])
    with pytest.raises(ValueError, match="empty"):
        mixing_time(P2, [], 0.1)
    slow = np.array([[1 - 1e-7, 1e-7], [1e-7, 1 - 1e-7]])
    with pytest.raises(ValueError, match="max_horizon"):
        mixing_time(slow, f, 1e-3, max_horizon=1024)
    with pytest.raises(ValueError, match="round-off"):
        mixing_time(P3, np.array([0.0, 1.0, 5.0]), 1e-300)


# ------------------------------------------------------------------------------- pair chain


def test_pair_chain_structure_and_stationary():
    rng = np.random.default_rng(3)
    for num_states in [1, 2, 3, 5]:
        p = random_chain(rng, num_states)
        q = pair_chain(p)
        assert q.shape == (num_states**2, num_states**2)
        np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=0, atol=1e-14)
        for s in range(num_states):
            for s1 in range(num_states):
                for u in range(num_states):
                    for s2 in range(num_states):
                        want = p[s1, s2] if u == s1 else 0.0
                        got = q[pair_index(s, s1, num_states), pair_index(u, s2, num_states)]
                        assert got == want
        mu = stationary_distribution(p)
        nu = stationary_distribution(q)
        np.testing.assert_allclose(nu.reshape(num_states, num_states), mu[:, None] * p, atol=1e-13)


def test_pair_chain_td_expectation_and_mixing_time():
    """TD(0) on the pair chain: A = Phi^T D_mu (gamma P - I) Phi, and tau via A_bar(s)."""
    rng = np.random.default_rng(4)
    num_states, dim, gamma = 4, 2, 0.9
    p = random_chain(rng, num_states)
    phi = rng.normal(size=(num_states, dim))
    a_pair = np.stack(
        [np.outer(phi[s], gamma * phi[s1] - phi[s]) for s in range(num_states)
         for s1 in range(num_states)]
    )
    q = pair_chain(p)
    mu = stationary_distribution(p)
    closed_form = phi.T @ np.diag(mu) @ (gamma * p - np.eye(num_states)) @ phi
    np.testing.assert_allclose(expected_table(q, a_pair), closed_form, atol=1e-13)
    # E[A(X_t) | X_0 = (s0, s1)] for t >= 1 is (P^{t-1} A_bar)(s1), A_bar(s) = sum P(s,s') A(s,s')
    a_bar = np.einsum("st,stij->sij", p, a_pair.reshape(num_states, num_states, dim, dim))
    for alpha in [1e-2, 1e-5, 1e-8]:
        tau_pair = mixing_time(q, a_pair, alpha, kinds="matrix")
        tau_base = mixing_time(p, a_bar, alpha, kinds="matrix")
        at_zero = np.max(np.linalg.norm(a_pair - closed_form, ord=2, axis=(1, 2))) > alpha
        assert tau_pair == (tau_base + 1 if tau_base > 0 else int(at_zero))
        assert tau_pair > 0
