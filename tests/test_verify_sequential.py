"""Sequential judges: spending boundaries, the empirical-Bernstein confidence sequence, and
sequential_mean's stopping, error rate and heavy-tail guard."""

import inspect
import math

import numpy as np
import pytest
from scipy import special

from decentral.verify import (
    Verdict,
    clt_ci,
    crossing_probability,
    empirical_bernstein_cs,
    exponential_top_share,
    obrien_fleming_spending,
    pocock_spending,
    sequential_mean,
    sequential_means,
    spending_bounds,
)
from decentral.verify.sequential import TAIL_MIN_SEEDS

FIVE = np.arange(1, 6) / 5


# ---------------------------------------------------------------- boundaries


def test_obrien_fleming_spending_bounds_match_published_table():
    # Reboussin, DeMets, Kim & Lan (2000), Lan-DeMets O'Brien-Fleming-type spending, five
    # equally spaced looks, two-sided alpha = 0.05.
    np.testing.assert_allclose(spending_bounds(FIVE, 0.05, "obrien_fleming"),
                               [4.8769, 3.3569, 2.6803, 2.2898, 2.0310], atol=1e-3)


def test_pocock_spending_bounds_match_published_table():
    # Lan-DeMets Pocock-type spending, five equally spaced looks, two-sided alpha = 0.05.
    np.testing.assert_allclose(spending_bounds(FIVE, 0.05, "pocock"),
                               [2.4380, 2.4268, 2.4101, 2.3966, 2.3859], atol=1e-3)


@pytest.mark.parametrize("bounds", [
    2.040 * np.sqrt(5 / np.arange(1, 6)),     # O'Brien & Fleming (1979), C_B(5, 0.05) = 2.040
    np.full(5, 2.413),                        # Pocock (1977), C_P(5, 0.05) = 2.413
])
def test_crossing_probability_of_classical_designs_is_their_alpha(bounds):
    # Jennison & Turnbull (2000), tables 2.1 and 2.3: constants rounded to 3 decimals.
    assert crossing_probability(bounds, FIVE) == pytest.approx(0.05, abs=5e-4)


def test_one_look_is_the_fixed_sample_quantile():
    assert spending_bounds([1.0], 0.05)[0] == pytest.approx(special.ndtri(0.975), abs=1e-8)
    assert crossing_probability([special.ndtri(0.975)], [1.0]) == pytest.approx(0.05, abs=1e-9)


def test_spending_bounds_hold_alpha_for_a_simulated_brownian_motion():
    # Independent check of the recursive integration: simulate the standardised statistic.
    looks = 8
    t = np.arange(1, looks + 1) / looks
    c = spending_bounds(t, 0.05)
    rng = np.random.default_rng(0)
    paths = np.cumsum(rng.normal(scale=math.sqrt(1 / looks), size=(200_000, looks)), axis=1)
    crossed = np.any(np.abs(paths / np.sqrt(t)) >= c, axis=1).mean()
    se = math.sqrt(0.05 * 0.95 / 200_000)
    assert abs(crossed - 0.05) < 4 * se
    # Negative control: the fixed-sample 1.96 at every look crosses far more often.
    naive = np.any(np.abs(paths / np.sqrt(t)) >= 1.96, axis=1).mean()
    assert naive > 0.12


def test_spending_functions_spend_alpha_by_the_end_and_nothing_at_zero():
    for fn in (obrien_fleming_spending, pocock_spending):
        assert fn(1.0, 0.05) == pytest.approx(0.05, abs=1e-12)
        assert fn(0.0, 0.05) == 0.0
        assert np.all(np.diff(fn(np.linspace(0, 1, 50), 0.05)) > 0)


def test_default_error_rates_are_pinned_at_five_percent():
    for fn in (spending_bounds, obrien_fleming_spending, pocock_spending, empirical_bernstein_cs,
               sequential_mean):
        assert inspect.signature(fn).parameters["alpha"].default == 0.05, fn.__name__


@pytest.mark.parametrize("fractions", [[0.5, 0.5, 1.0], [0.0, 1.0], [0.5, 1.2], [], [[0.5, 1]]])
def test_bad_fractions_are_refused(fractions):
    with pytest.raises(ValueError, match="fractions"):
        spending_bounds(fractions)


def test_bad_spending_and_alpha_are_refused():
    with pytest.raises(ValueError, match="spending"):
        spending_bounds(FIVE, spending="haybittle")
    with pytest.raises(ValueError, match="alpha"):
        spending_bounds(FIVE, alpha=1.5)
    with pytest.raises(ValueError, match="increase"):
        spending_bounds(FIVE, spending=lambda t, a: a * (1 - t))


# ---------------------------------------------------------------- confidence sequence


def _eb_cs_loop(x, alpha, c=0.5):
    """Waudby-Smith & Ramdas's predictable plug-in EB sequence, one sample at a time."""
    log_term = math.log(2 / alpha)
    m_prev, s2_prev = 0.5, 0.25
    sum_x = sum_sq = 0.0
    sum_l = sum_lx = sum_vpsi = 0.0
    lo_run, hi_run, out = 0.0, 1.0, []
    for t, xt in enumerate(x, start=1):
        lam = min(math.sqrt(2 * log_term / (s2_prev * t * math.log(1 + t))), c)
        v = 4 * (xt - m_prev) ** 2
        sum_l += lam
        sum_lx += lam * xt
        sum_vpsi += v * (-math.log(1 - lam) - lam) / 4
        centre, margin = sum_lx / sum_l, (log_term + sum_vpsi) / sum_l
        lo_t, hi_t = max(centre - margin, 0.0), min(centre + margin, 1.0)
        if max(lo_run, lo_t) <= min(hi_run, hi_t):
            lo_run, hi_run = max(lo_run, lo_t), min(hi_run, hi_t)
        else:
            lo_run, hi_run = lo_t, hi_t
        out.append((lo_run, hi_run))
        sum_x += xt
        m = (0.5 + sum_x) / (t + 1)
        sum_sq += (xt - m) ** 2
        m_prev, s2_prev = m, (0.25 + sum_sq) / (t + 1)
    return np.array(out)


def test_eb_cs_equals_a_sample_by_sample_evaluation():
    x = np.random.default_rng(3).beta(2, 5, size=300)
    lo, hi = empirical_bernstein_cs(x, (0.0, 1.0), 0.05)
    ref = _eb_cs_loop(x, 0.05)
    np.testing.assert_allclose(lo, ref[:, 0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(hi, ref[:, 1], rtol=1e-12, atol=1e-14)


def test_eb_cs_rescales_a_general_range():
    x = np.random.default_rng(4).uniform(size=200)
    lo, hi = empirical_bernstein_cs(x, (0.0, 1.0))
    lo2, hi2 = empirical_bernstein_cs(10 + 5 * x, (10.0, 15.0))
    np.testing.assert_allclose(lo2, 10 + 5 * lo)
    np.testing.assert_allclose(hi2, 10 + 5 * hi)


def test_eb_cs_covers_the_mean_at_every_sample_size_and_naive_intervals_do_not():
    rng = np.random.default_rng(5)
    reps, n, p = 300, 400, 0.3
    x = rng.binomial(1, p, size=(reps, n)).astype(float)
    missed = 0
    for row in x:
        lo, hi = empirical_bernstein_cs(row, (0.0, 1.0), 0.05)
        missed += bool(np.any((lo > p) | (hi < p)))
    assert missed / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    # Negative control: a fixed-n 95 % interval checked after every sample from n = 10 on.
    t = np.arange(1, n + 1)
    mean = np.cumsum(x, axis=1) / t
    sd = np.sqrt(np.maximum(mean * (1 - mean), 1e-12) / t)
    naive = np.any((np.abs(mean - p) > 1.96 * sd)[:, 9:], axis=1).mean()
    assert naive > 0.2


def test_eb_cs_narrows_with_the_variance_not_the_range():
    rng = np.random.default_rng(6)
    wide = empirical_bernstein_cs(rng.uniform(size=2000), (0.0, 1.0))
    narrow = empirical_bernstein_cs(0.5 + 0.01 * rng.uniform(size=2000), (0.0, 1.0))
    assert narrow[1][-1] - narrow[0][-1] < 0.2 * (wide[1][-1] - wide[0][-1])


@pytest.mark.parametrize("kwargs, match", [
    ({"value_range": (0.0, 0.5)}, "within value_range"),
    ({"value_range": (1.0, 0.0)}, "lower < upper"),
    ({"value_range": 1.0}, "pair"),
    ({"value_range": (0.0, 1.0), "alpha": 0.0}, "alpha"),
    ({"value_range": (0.0, 1.0), "max_bet": 1.0}, "max_bet"),
])
def test_eb_cs_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        empirical_bernstein_cs(np.linspace(0, 1, 10), **kwargs)


# ---------------------------------------------------------------- sequential_mean


def _normal_draw(mu, sd=1.0, batch=32, calls=None):
    def draw(k):
        if calls is not None:
            calls.append(k)
        return np.random.default_rng(1000 + k).normal(mu, sd, size=batch)
    return draw


def test_sequential_mean_passes_fails_and_stops_early():
    ok = sequential_mean(_normal_draw(1.0), batch=32, max_seeds=1024, accept=(-np.inf, 1.5))
    assert ok.verdict is Verdict.PASS and ok.seeds < 1024 and ok.hi <= 1.5
    # Non-negative samples: a PASS of an upper bound waits until the tail can be seen.
    pos = sequential_mean(lambda k: np.random.default_rng(k).uniform(0, 2, size=32), batch=32,
                          max_seeds=1024, accept=(-np.inf, 1.5))
    assert pos.verdict is Verdict.PASS and TAIL_MIN_SEEDS <= pos.seeds < 1024
    early = sequential_mean(lambda k: np.random.default_rng(k).uniform(0, 2, size=32), batch=32,
                            max_seeds=64, accept=(-np.inf, 1.5))
    assert early.verdict is Verdict.INCONCLUSIVE and "upper end" in early.reason
    bad = sequential_mean(_normal_draw(1.0), batch=32, max_seeds=1024, accept=(-np.inf, 0.5))
    assert bad.verdict is Verdict.FAIL and bad.seeds < 1024 and bad.lo > 0.5
    low = sequential_mean(_normal_draw(1.0), batch=32, max_seeds=1024, accept=(0.5, np.inf))
    assert low.verdict is Verdict.PASS


def test_sequential_mean_on_the_bound_spends_the_budget_and_suggests_nothing_false():
    calls = []
    r = sequential_mean(_normal_draw(0.0, calls=calls), batch=32, max_seeds=256,
                        accept=(-np.inf, 0.0))
    assert r.verdict is Verdict.INCONCLUSIVE
    assert r.seeds == 256 and r.look == r.looks == 8 and calls == list(range(8))
    assert "straddles" in r.reason


def test_sequential_mean_is_deterministic_and_reports_alpha_and_seeds():
    a = sequential_mean(_normal_draw(0.9, batch=16), batch=16, max_seeds=512, accept=(-np.inf, 1.0))
    b = sequential_mean(_normal_draw(0.9, batch=16), batch=16, max_seeds=512, accept=(-np.inf, 1.0))
    assert a.verdict is b.verdict and a.seeds == b.seeds and a.lo == b.lo
    m = a.measured("x_")
    assert m["x_alpha"] == 0.05 and m["x_seeds_used"] == a.seeds and m["x_max_seeds"] == 512
    assert set(a.descriptions("x_")) == set(m)
    assert "95 %" in a.summary()


def test_sequential_mean_wrong_verdict_rate_is_within_alpha():
    # Mean exactly on the bound: a FAIL is a wrong verdict; the design allows alpha / 2.
    reps, fails = 400, 0
    for r in range(reps):
        def draw(k, r=r):
            return np.random.default_rng([r, k]).normal(0.0, 1.0, size=16)
        res = sequential_mean(draw, batch=16, max_seeds=256, accept=(-np.inf, 0.0))
        fails += res.verdict is Verdict.FAIL
    assert fails / reps <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps)


def test_fixed_seed_count_is_one_look_with_the_fixed_sample_interval():
    r = sequential_mean(_normal_draw(0.3), batch=32, max_seeds=1024, accept=(-np.inf, 5.0),
                        seeds=50)
    assert r.seeds == 50 and r.looks == 1 and r.method == "clt-fixed"
    x = np.concatenate([_normal_draw(0.3)(0), _normal_draw(0.3)(1)])[:50]
    _, lo, hi = clt_ci(x, level=0.95)
    assert (r.lo, r.hi) == pytest.approx((lo, hi), rel=1e-12)


def test_heavy_right_tail_blocks_a_pass_resting_on_the_upper_end():
    # Lomax (Pareto II) with index 1.5: mean 2, infinite variance.
    def draw(k):
        return np.random.default_rng(k).pareto(1.5, size=64)
    r = sequential_mean(draw, batch=64, max_seeds=2048, accept=(-np.inf, 3.0))
    assert r.heavy_tail and r.tail_ratio > 2
    assert r.verdict is Verdict.INCONCLUSIVE and "heavy right tail" in r.reason
    # A FAIL resting on the lower end stands.
    f = sequential_mean(draw, batch=64, max_seeds=2048, accept=(-np.inf, 0.5))
    assert f.verdict is Verdict.FAIL
    # Exponential samples are the light-tail reference: not flagged.
    e = sequential_mean(lambda k: np.random.default_rng(k).exponential(size=64), batch=64,
                        max_seeds=2048, accept=(-np.inf, 1.3))
    assert not e.heavy_tail and e.verdict is Verdict.PASS


def test_exponential_top_share_reference():
    assert exponential_top_share(64) == pytest.approx(0.0741, abs=1e-4)
    assert exponential_top_share(100_000) == pytest.approx(0.01 * (1 + math.log(100)), rel=2e-3)
    big = np.random.default_rng(0).exponential(size=(200, 500))
    from decentral.verify import top_share
    assert np.mean([top_share(row) for row in big]) == pytest.approx(
        exponential_top_share(500), rel=0.05)


def test_confseq_rule_decides_bounded_rates():
    def draw(k):
        return np.random.default_rng(k).binomial(1, 0.2, size=50).astype(float)
    r = sequential_mean(draw, batch=50, max_seeds=2000, accept=(-np.inf, 0.3), method="confseq",
                        value_range=(0.0, 1.0))
    assert r.verdict is Verdict.PASS and r.seeds < 2000 and r.top_share is None


@pytest.mark.parametrize("kwargs, match", [
    ({"method": "bootstrap"}, "method"),
    ({"method": "confseq"}, "value_range"),
    ({"accept": (1.0, 0.0)}, "accept"),
    ({"accept": (-np.inf, np.inf)}, "finite"),
    ({"batch": 1}, "batch"),
    ({"alpha": 0.0}, "alpha"),
    ({"spending": "haybittle"}, "spending"),
])
def test_sequential_mean_refuses_bad_arguments(kwargs, match):
    args = dict(batch=8, max_seeds=64, accept=(-np.inf, 1.0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sequential_mean(_normal_draw(0.0, batch=8), **args)


def test_sequential_mean_refuses_a_draw_of_the_wrong_shape_or_nan():
    with pytest.raises(ValueError, match=r"draw\(0\).* must be a 1-D array of batch = 8"):
        sequential_mean(lambda k: np.zeros(7), batch=8, max_seeds=64, accept=(-np.inf, 1.0))
    with pytest.raises(ValueError, match="NaN"):
        sequential_mean(lambda k: np.full(8, np.nan), batch=8, max_seeds=64,
                        accept=(-np.inf, 1.0))


def test_sequential_means_splits_alpha_and_stops_each_comparison_when_decided():
    def draw(k):
        rng = np.random.default_rng(k)
        return {"clear": rng.normal(0.0, 1.0, 32), "close": rng.normal(0.9, 1.0, 32),
                "on_bound": rng.normal(1.0, 1.0, 32)}

    accepts = {"clear": (-np.inf, 1.0), "close": (-np.inf, 1.0), "on_bound": (-np.inf, 1.0)}
    r = sequential_means(draw, batch=32, max_seeds=640, accepts=accepts)
    assert list(r) == list(accepts)
    assert all(x.alpha == pytest.approx(0.05 / 3) for x in r.values())
    assert r["clear"].verdict is Verdict.PASS and r["clear"].seeds < r["on_bound"].seeds
    assert r["on_bound"].verdict is Verdict.INCONCLUSIVE and r["on_bound"].seeds == 640
    one = sequential_mean(lambda k: draw(k)["clear"], batch=32, max_seeds=640,
                          accept=(-np.inf, 1.0), alpha=0.05 / 3)
    assert (one.verdict, one.seeds, one.lo, one.hi) == (
        r["clear"].verdict, r["clear"].seeds, r["clear"].lo, r["clear"].hi)


def test_sequential_means_refuses_a_draw_with_other_keys():
    with pytest.raises(ValueError, match=r"keys \['a'\]"):
        sequential_means(lambda k: {"b": np.zeros(8)}, batch=8, max_seeds=16,
                         accepts={"a": (-np.inf, 1.0)})
    with pytest.raises(ValueError, match="accepts"):
        sequential_means(lambda k: {}, batch=8, max_seeds=16, accepts={})


def test_tail_robust_lower_end_covers_a_heavy_tailed_mean_and_decides_a_fail():
    # Lomax index 1.5: mean 2, infinite variance. The truncated-mean lower end must stay below
    # the mean in (almost) every replicate, whatever the CLT interval does.
    from decentral.verify.sequential import ROBUST_TRUNCATION

    misses = 0
    for r in range(200):
        def draw(k, r=r):
            return np.random.default_rng([r, k]).pareto(1.5, size=100)
        # 100 seeds, fixed: below TAIL_MIN_SEEDS, so the robust lower end is what decides
        res = sequential_mean(draw, batch=100, max_seeds=400, accept=(-np.inf, 1.0), seeds=100)
        assert res.robust_lo is not None and res.robust_lo <= res.mean
        misses += res.robust_lo > 2.0
    assert misses / 200 <= 0.05
    # a bound far below the mean is refuted on the robust lower end alone
    res = sequential_mean(lambda k: np.random.default_rng(k).pareto(1.5, size=100), batch=100,
                          max_seeds=400, accept=(-np.inf, 0.3), seeds=200)
    assert res.verdict is Verdict.FAIL and res.robust_lo > 0.3
    assert "tail-robust" in res.reason and "robust_lower_end" in res.measured()
    assert ROBUST_TRUNCATION == 4.0


def test_sequential_means_takes_a_method_per_comparison():
    def draw(k):
        rng = np.random.default_rng(k)
        return {"rate": rng.binomial(1, 0.9, 50).astype(float), "mean": rng.normal(-1, 1, 50)}

    r = sequential_means(draw, batch=50, max_seeds=500,
                         accepts={"rate": (0.25, 1.0), "mean": (-np.inf, 0.0)},
                         methods={"rate": "confseq"}, value_ranges={"rate": (0.0, 1.0)})
    assert r["rate"].method == "confseq" and r["mean"].method == "clt"
    assert r["rate"].verdict is Verdict.PASS and r["mean"].verdict is Verdict.PASS
    lo, _ = empirical_bernstein_cs(np.concatenate([draw(k)["rate"] for k in
                                                   range(r["rate"].seeds // 50)]),
                                   (0.0, 1.0), 0.025)
    assert r["rate"].lo == pytest.approx(lo[-1])
    with pytest.raises(ValueError, match="not comparisons"):
        sequential_means(draw, batch=50, max_seeds=100, accepts={"mean": (-np.inf, 0.0)},
                         methods={"rate": "confseq"})
    with pytest.raises(ValueError, match="value_range"):
        sequential_means(draw, batch=50, max_seeds=100,
                         accepts={"rate": (0.25, 1.0), "mean": (-np.inf, 0.0)},
                         methods={"rate": "confseq"})
