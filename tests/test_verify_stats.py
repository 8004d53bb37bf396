"""Tests of decentral.verify.stats: interval coverage, seed counts, rate fits, envelopes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from decentral.verify import stats

REPS = 400


def coverage_tolerance(p: float, reps: int = REPS) -> float:
    """Four binomial standard deviations of an empirical coverage at nominal level p."""
    return 4.0 * math.sqrt(p * (1 - p) / reps)


def empirical_coverage(interval, true_mean: float, draw, reps: int = REPS) -> float:
    """Fraction of ``reps`` derandomised experiments whose interval contains ``true_mean``."""
    hits = 0
    for r in range(reps):
        x = draw(np.random.default_rng(10_000 + r))
        _, lo, hi = interval(x, r)
        hits += lo <= true_mean <= hi
    return hits / reps


BETA_A, BETA_B = 2.0, 5.0
BETA_MEAN = BETA_A / (BETA_A + BETA_B)


def draw_beta(rng: np.random.Generator, n: int = 40) -> np.ndarray:
    return rng.beta(BETA_A, BETA_B, size=n)


# ------------------------------------------------------------------------------------------
# Coverage
# ------------------------------------------------------------------------------------------


def test_bootstrap_ci_coverage_matches_nominal():
    level = 0.9
    cov = empirical_coverage(
        lambda x, r: stats.bootstrap_ci(x, level=level, n_boot=400, seed=r), BETA_MEAN,
        lambda rng: draw_beta(rng, n=80),  # the percentile bootstrap under-covers at small n
    )
    tol = coverage_tolerance(level)
    assert level - tol <= cov <= level + tol, cov


def test_clt_ci_coverage_matches_nominal():
    level = 0.9
    cov = empirical_coverage(lambda x, r: stats.clt_ci(x, level=level), BETA_MEAN, draw_beta)
    tol = coverage_tolerance(level)
    assert level - tol <= cov <= level + tol, cov


def test_coverage_check_detects_a_too_narrow_interval():
    # Negative control: a 50% interval advertised as 90% must fail the same coverage test.
    level = 0.9
    cov = empirical_coverage(lambda x, r: stats.clt_ci(x, level=0.5), BETA_MEAN, draw_beta)
    assert cov < level - coverage_tolerance(level)


def test_hoeffding_ci_is_conservative():
    delta = 0.1
    cov = empirical_coverage(lambda x, r: stats.hoeffding_ci(x, 0.0, 1.0, delta), BETA_MEAN,
                             draw_beta)
    assert cov >= 1 - delta - coverage_tolerance(1 - delta)


def test_empirical_bernstein_ci_is_conservative():
    delta = 0.1
    # Bernoulli(0.05): low variance, where empirical Bernstein differs most from Hoeffding.
    cov = empirical_coverage(lambda x, r: stats.empirical_bernstein_ci(x, 1.0, delta), 0.05,
                             lambda rng: (rng.uniform(size=400) < 0.05).astype(float))
    assert cov >= 1 - delta - coverage_tolerance(1 - delta)


def test_empirical_bernstein_beats_hoeffding_on_low_variance_data():
    x = (np.random.default_rng(3).uniform(size=5000) < 0.02).astype(float)
    _, h_lo, h_hi = stats.hoeffding_ci(x, 0.0, 1.0, 0.05)
    _, b_lo, b_hi = stats.empirical_bernstein_ci(x, (0.0, 1.0), 0.05)
    assert (b_hi - b_lo) < 0.5 * (h_hi - h_lo)


def test_hoeffding_half_width_closed_form_and_clipping():
    x = np.full(200, 0.3)
    mean, lo, hi = stats.hoeffding_ci(x, 0.0, 1.0, 0.05)
    half = math.sqrt(math.log(2 / 0.05) / 400)
    assert mean == pytest.approx(0.3)
    assert hi - mean == pytest.approx(half)
    assert mean - lo == pytest.approx(half)
    _, lo2, _ = stats.hoeffding_ci(np.zeros(10), 0.0, 1.0, 0.05)
    assert lo2 == 0.0  # clipped to the a-priori range


def test_empirical_bernstein_formula():
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.5, 0.5])
    n, d = x.size, 0.2
    mean, lo, hi = stats.empirical_bernstein_ci(x, 2.0, d)
    v = x.var(ddof=1)
    half = math.sqrt(2 * v * math.log(4 / d) / n) + 7 * 2.0 * math.log(4 / d) / (3 * (n - 1))
    assert hi - mean == pytest.approx(half)
    assert mean - lo == pytest.approx(half)


def test_bounded_intervals_reject_samples_outside_the_range():
    with pytest.raises(ValueError, match="outside"):
        stats.hoeffding_ci(np.array([0.2, 1.5]), 0.0, 1.0, 0.05)
    with pytest.raises(ValueError, match="wider"):
        stats.empirical_bernstein_ci(np.array([0.0, 3.0]), 1.0, 0.05)
    with pytest.raises(ValueError, match="outside"):
        stats.empirical_bernstein_ci(np.array([0.0, -0.1]), (0.0, 1.0), 0.05)


# ------------------------------------------------------------------------------------------
# Bootstrap details
# ------------------------------------------------------------------------------------------


def test_bootstrap_is_deterministic_and_vector_valued():
    x = np.random.default_rng(0).normal(size=(60, 4))
    a = stats.bootstrap_ci(x, np.mean, n_boot=300, seed=5)
    b = stats.bootstrap_ci(x, np.mean, n_boot=300, seed=5)
    c = stats.bootstrap_ci(x, np.mean, n_boot=300, seed=6)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[1], c[1])
    est, lo, hi = a
    assert est.shape == lo.shape == hi.shape == (4,)
    assert np.all(lo < est) and np.all(est < hi)
    np.testing.assert_allclose(est, x.mean(axis=0))
    g = stats.bootstrap_ci(x, np.mean, n_boot=300, seed=np.random.default_rng(5))
    np.testing.assert_array_equal(g[1], a[1])


def test_bootstrap_axis_and_statistic_without_axis():
    x = np.random.default_rng(1).normal(size=(3, 50))
    est, lo, hi = stats.bootstrap_ci(x, np.median, axis=1, n_boot=200)
    assert est.shape == (3,)
    spread = stats.bootstrap_ci(x[0], lambda v: float(np.max(v) - np.min(v)), n_boot=50)
    assert spread[1] <= spread[2]


# ------------------------------------------------------------------------------------------
# Seed counts
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value_range,half_width,delta", [(1.0, 0.05, 0.01), (2.5, 0.1, 0.05),
                                                          (100.0, 3.0, 0.001)])
def test_hoeffding_num_seeds_closed_form_and_achieves_bound(value_range, half_width, delta):
    n = stats.hoeffding_num_seeds(value_range, half_width, delta)
    assert n == math.ceil(value_range**2 * math.log(2 / delta) / (2 * half_width**2))
    assert 2 * math.exp(-2 * n * half_width**2 / value_range**2) <= delta
    assert 2 * math.exp(-2 * (n - 1) * half_width**2 / value_range**2) > delta
    # The Hoeffding interval at that n has half-width <= the requested one.
    x = np.full(n, value_range / 2)
    mean, lo, hi = stats.hoeffding_ci(x, 0.0, value_range, delta)
    assert hi - mean <= half_width * (1 + 1e-12)


def test_bernstein_num_seeds():
    r, h, d = 1.0, 0.02, 0.01
    hoeff = stats.hoeffding_num_seeds(r, h, d)
    small = stats.bernstein_num_seeds(0.01, r, h, d)
    worst = stats.bernstein_num_seeds(0.25, r, h, d)
    assert small < hoeff / 5
    assert worst >= hoeff  # no better than Hoeffding at the largest possible variance
    denom = 2 * 0.01 + 2 * r * h / 3
    assert 2 * math.exp(-small * h * h / denom) <= d < 2 * math.exp(-(small - 1) * h * h / denom)
    with pytest.raises(ValueError, match="exceeds"):
        stats.bernstein_num_seeds(0.3, 1.0, 0.1, 0.05)


def test_empirical_bernstein_num_seeds_is_the_smallest_sufficient_n():
    v, r, h, d = 0.04, 1.0, 0.02, 0.05
    n = stats.empirical_bernstein_num_seeds(v, r, h, d)
    lt = math.log(4 / d)

    def half(m):
        return math.sqrt(2 * v * lt / m) + 7 * r * lt / (3 * (m - 1))

    assert half(n) <= h < half(n - 1)


def test_clt_num_seeds():
    assert stats.clt_num_seeds(1.0, 0.1, 0.95) == math.ceil((1.959963984540054 * 10) ** 2)
    assert stats.clt_num_seeds(0.0, 0.1) == 2


# ------------------------------------------------------------------------------------------
# Rate fits
# ------------------------------------------------------------------------------------------


def lognormal_curves(mean_curve: np.ndarray, seeds: int = 50, sigma: float = 0.3, seed: int = 0):
    rng = np.random.default_rng(seed)
    return mean_curve[None, :] * rng.lognormal(0.0, sigma, size=(seeds, mean_curve.size))


def test_loglog_slope_recovers_planted_exponent():
    t = np.logspace(1, 4, 30)
    values = lognormal_curves(3.0 / t)
    fit = stats.loglog_slope(t, values, level=0.95, n_boot=2000, seed=1)
    assert fit.lo <= -1.0 <= fit.hi
    assert fit.hi - fit.lo < 0.05
    assert fit.n_points == 30 and fit.n_seeds == 50
    assert not (fit.lo <= -0.9 <= fit.hi)  # a wrong exponent is excluded (negative control)
    # intercept: log(3 * E[lognormal]) = log 3 + sigma^2 / 2
    assert fit.intercept == pytest.approx(math.log(3.0) + 0.045, abs=0.1)


def test_loglog_slope_window_and_exact_curve():
    t = np.arange(1.0, 1001.0)
    curve = np.where(t < 100, 1.0, 100.0 / t)  # flat, then t^-1 after t = 100
    fit = stats.loglog_slope(t, curve, t_min=100)
    assert fit.slope == pytest.approx(-1.0) and fit.lo == fit.hi == fit.slope
    assert fit.n_seeds == 1 and fit.n_points == 901
    assert stats.loglog_slope(t, curve).slope > -0.9


def test_semilog_slope_recovers_log_coefficient():
    t = np.logspace(2, 5, 20)
    rng = np.random.default_rng(2)
    values = 3.0 * np.log(t)[None, :] + 5.0 + rng.normal(0.0, 2.0, size=(60, t.size))
    fit = stats.semilog_slope(t, values, seed=0)
    assert fit.lo <= 3.0 <= fit.hi
    assert fit.hi - fit.lo < 0.5


def test_geometric_rate_recovers_planted_rate():
    t = np.arange(0.0, 80.0)
    values = lognormal_curves(2.0 * 0.9**t, seeds=40, sigma=0.2, seed=3)
    fit = stats.geometric_rate(t, values, seed=0)
    assert fit.lo <= 0.9 <= fit.hi
    assert fit.hi - fit.lo < 0.01
    assert fit.log_rate == pytest.approx(math.log(fit.rate_per_step))
    assert not (fit.lo <= 0.91 <= fit.hi)


# ------------------------------------------------------------------------------------------
# Envelope
# ------------------------------------------------------------------------------------------


def test_envelope_check_true_and_false():
    t = np.arange(1.0, 101.0)
    ok = stats.envelope_check(t, 1.0 / t, 2.0 / t)
    assert ok.holds and ok.worst_ratio == pytest.approx(0.5) and ok.n_violations == 0
    curve = 1.0 / t
    curve[60] = 3.0 / t[60]
    bad = stats.envelope_check(t, curve, lambda s: 2.0 / s)
    assert not bad.holds
    assert bad.worst_ratio == pytest.approx(1.5) and bad.worst_t == t[60]
    assert bad.n_violations == 1 and bad.n_points == 100
    windowed = stats.envelope_check(t, curve, 2.0 / t, t_max=50)
    assert windowed.holds and windowed.n_points == 50
    assert stats.envelope_check(t, np.full(100, 0.5), 1.0).holds


def test_envelope_check_input_errors():
    t = np.arange(1.0, 11.0)
    with pytest.raises(ValueError, match="shape"):
        stats.envelope_check(t, np.ones(9), 1.0)
    with pytest.raises(ValueError, match="> 0"):
        stats.envelope_check(t, np.ones(10), np.zeros(10))
    with pytest.raises(ValueError, match="NaN"):
        stats.envelope_check(t, np.full(10, np.nan), 1.0)


# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.array([0.1, np.nan, 0.3]), np.array([1.0, np.inf]),
                                 np.array([]), 3.0])
@pytest.mark.parametrize("fn", [
    lambda x: stats.bootstrap_ci(x, n_boot=10),
    lambda x: stats.clt_ci(x),
    lambda x: stats.hoeffding_ci(x, 0.0, 10.0, 0.05),
    lambda x: stats.empirical_bernstein_ci(x, 10.0, 0.05),
])
def test_bad_samples_raise(fn, bad):
    with pytest.raises(ValueError):
        fn(bad)


@pytest.mark.parametrize("level", [0.0, 1.0, -0.5, 1.5, float("nan")])
def test_bad_level_raises(level):
    x = np.arange(10.0)
    with pytest.raises(ValueError, match="level"):
        stats.clt_ci(x, level=level)
    with pytest.raises(ValueError, match="level"):
        stats.bootstrap_ci(x, level=level)
    with pytest.raises(ValueError, match="level"):
        stats.loglog_slope(np.arange(1.0, 11.0), x + 1, level=level)


@pytest.mark.parametrize("delta", [0.0, 1.0, 2.0])
def test_bad_delta_raises(delta):
    with pytest.raises(ValueError, match="delta"):
        stats.hoeffding_ci(np.ones(5) * 0.5, 0.0, 1.0, delta)
    with pytest.raises(ValueError, match="delta"):
        stats.empirical_bernstein_ci(np.ones(5) * 0.5, 1.0, delta)
    with pytest.raises(ValueError, match="delta"):
        stats.hoeffding_num_seeds(1.0, 0.1, delta)
    with pytest.raises(ValueError, match="delta"):
        stats.bernstein_num_seeds(0.1, 1.0, 0.1, delta)


def test_fit_shape_and_sign_errors():
    t = np.arange(1.0, 11.0)
    with pytest.raises(ValueError, match="length"):
        stats.loglog_slope(t, np.ones(9))
    with pytest.raises(ValueError, match="shape"):
        stats.geometric_rate(t, np.ones((5, 9)))
    with pytest.raises(ValueError, match="single seed"):
        stats.loglog_slope(t, np.ones((1, 10)))
    with pytest.raises(ValueError, match="<= 0"):
        stats.loglog_slope(t, np.linspace(-1.0, 1.0, 10))
    with pytest.raises(ValueError, match="t must be > 0"):
        stats.loglog_slope(np.arange(10.0), np.ones(10))
    with pytest.raises(ValueError, match="distinct"):
        stats.loglog_slope(t, np.ones(10), t_min=10)
    with pytest.raises(ValueError, match="NaN"):
        stats.loglog_slope(t, np.where(t > 5, np.nan, 1.0))


# ------------------------------------------------------------------------------------------
# default confidence levels: pinned, by signature and by behaviour
# ------------------------------------------------------------------------------------------

def test_default_confidence_levels_are_pinned():
    import inspect

    from decentral import verify as V

    for name in ("bootstrap_ci", "clt_ci", "clt_num_seeds", "loglog_slope", "semilog_slope",
                 "geometric_rate"):
        assert inspect.signature(getattr(V, name)).parameters["level"].default == 0.95, name
    x = np.random.default_rng(7).exponential(size=40)
    # clt_ci's default is the Student-t 97.5 % quantile, computed here independently
    from scipy import stats as st
    m, lo, hi = V.clt_ci(x)
    half = st.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    assert (lo, hi) == pytest.approx((m - half, m + half), rel=1e-12)
    # the bootstrap judges: the default equals an explicit 0.95 and differs from 0.5
    assert V.bootstrap_ci(x) == V.bootstrap_ci(x, level=0.95)
    assert V.bootstrap_ci(x) != V.bootstrap_ci(x, level=0.5)
    t = np.arange(1.0, 21.0)
    curves = np.exp(-0.2 * t)[None, :] * (1 + 0.1 * np.random.default_rng(1).random((12, 20)))
    for fn, tt in ((V.loglog_slope, t), (V.semilog_slope, t), (V.geometric_rate, t)):
        default, explicit = fn(tt, curves), fn(tt, curves, level=0.95)
        assert tuple(default) == tuple(explicit), fn.__name__
        assert tuple(default) != tuple(fn(tt, curves, level=0.5)), fn.__name__
