"""The judges of the optimization rate claims (each PASSes on a valid synthetic input and FAILs
on a planted violation: a curve that stalls, a slope outside its band, a wrong limit), their
helpers (fit windows, connectivity windows, delta_B, the exact DIGing period rate, the step
search, the push-pull root sets), and the verdict of every claim wrapper at quick size."""

from __future__ import annotations

import numpy as np
import pytest

import decentral.graphs as g
from decentral.verify import CheckContext, Outcome, Verdict
from proofs_checks.optimization import rates as r
from proofs_checks.optimization import setups as su

pytestmark = pytest.mark.usefixtures("x64_module")


def _geometric(rho=0.9, steps=400, seeds=8, c=3.0, floor=1e-16, seed=0):
    """``[S, T+1]`` errors ``c_s rho_s^k`` (seed-to-seed spread) down to a floor."""
    rng = np.random.default_rng(seed)
    k = np.arange(steps + 1)
    rhos = rho * np.exp(0.002 * rng.standard_normal(seeds))
    cs = c * np.exp(0.3 * rng.standard_normal(seeds))
    return np.maximum(cs[:, None] * rhos[:, None] ** k, floor)


# --- rate judge --------------------------------------------------------------------------------

def test_fit_windows_recovers_the_rate_inside_the_band():
    e = _geometric(rho=0.9)
    slopes, npts, starts, ends = r.fit_windows(e)
    assert np.allclose(slopes, np.log(0.9), atol=0.01)
    assert np.all(npts == r.FIT_POINTS)
    assert np.all(e[np.arange(8), starts] <= r.WINDOW[1])
    assert np.all(e[np.arange(8), ends] < r.WINDOW[0])


def test_rate_judge_passes_a_geometric_curve():
    out = r.check_linear_rate({"a": _geometric(0.9), "b": _geometric(0.95, steps=800)})
    assert out.verdict is Verdict.PASS, out.reason
    assert out.measured["a_lambda_emp"] == pytest.approx(0.9, abs=2e-3)
    assert out.measured["b_slope_hi"] < 0


def test_rate_judge_fails_a_stall():
    e = _geometric(0.9)
    stalled = np.maximum(e, 1e-6)                       # planted: stalls at 1e-6
    out = r.check_linear_rate({"good": e, "stalled": stalled})
    assert out.verdict is Verdict.FAIL
    assert "stalled" in out.reason
    flat = 1e-4 * np.exp(0.01 * np.random.default_rng(1).standard_normal((8, 401)))
    v, m, _, _ = r.rate_case("flat", flat, final_tol=1.0)   # the slope alone: undecided
    assert v is Verdict.INCONCLUSIVE and m["flat_slope_lo"] < 0 < m["flat_slope_hi"]
    assert r.rate_case("flat", flat)[0] is Verdict.FAIL       # with the 1e-10 final error


def test_rate_judge_fails_a_rising_window_and_nonfinite_errors():
    k = np.arange(401)
    rising = np.tile(1e-9 * 1.01 ** k, (6, 1)) * (1 + 0.01 * np.arange(6))[:, None]
    v, m, _, _ = r.rate_case("rising", rising, final_tol=1.0)
    assert v is Verdict.FAIL and m["rising_slope_lo"] > 0
    bad = _geometric(0.9)
    bad[2, 300] = np.nan
    assert r.rate_case("nan", bad)[0] is Verdict.FAIL


def test_rate_judge_is_inconclusive_when_the_window_is_too_short():
    fast = _geometric(rho=0.05, steps=50)               # 1e-2 -> 1e-11 in a few steps
    v, m, _, reason = r.rate_case("fast", fast)
    assert v is Verdict.INCONCLUSIVE, reason
    assert m["fast_window_points_min"] < r.MIN_POINTS


# --- reach, bias, weighted limit, control ----------------------------------------------------

def test_reach_judge():
    assert r.check_reaches({"a": [1e-12, 3e-11], "b": [0.0]}, 1e-10).verdict is Verdict.PASS
    out = r.check_reaches({"a": [1e-12, 3e-9]}, 1e-10)
    assert out.verdict is Verdict.FAIL and "3e-09" in out.reason
    assert r.check_reaches({"a": [np.nan]}, 1e-10).verdict is Verdict.FAIL


def test_bias_judge_passes_order_alpha_and_fails_other_orders():
    alphas = r.BIAS_ALPHAS
    c = np.exp(0.2 * np.random.default_rng(2).standard_normal(20))[:, None]
    good = c * (alphas + 0.5 * alphas ** 2)
    out = r.check_bias_order(alphas, good, beta=0.8)
    assert out.verdict is Verdict.PASS, out.reason
    assert 0.9 < out.measured["slope_mean"] < 1.1
    assert r.check_bias_order(alphas, c * alphas ** 2, 0.8).verdict is Verdict.FAIL
    assert r.check_bias_order(alphas, c * np.sqrt(alphas), 0.8).verdict is Verdict.FAIL
    # a mean inside [0.9, 1.1] whose interval pokes out of [0.8, 1.2]: undecided
    wide = np.exp(np.outer(np.linspace(0.0, 2.0, 20), np.log(alphas)))
    assert r.check_bias_order(alphas, wide, 0.8).verdict is Verdict.INCONCLUSIVE


def test_weighted_limit_judge():
    a = r.LIMIT_ALPHAS
    gap = np.array([0.03, 0.05, 0.02])
    to_xpi = 0.1 * a[None, :] * np.array([1.0, 2.0, 0.5])[:, None]
    to_star = gap[:, None] + to_xpi
    out = r.check_weighted_limit(a, to_xpi, to_star, gap)
    assert out.verdict is Verdict.PASS, out.reason
    # planted: the distance to x_pi decays like alpha^2 on one instance
    slow = to_xpi.copy()
    slow[1] = 0.1 * a ** 2
    assert r.check_weighted_limit(a, slow, to_star, gap).verdict is Verdict.FAIL
    # planted: the agents end 5% off ||x_pi - x*|| at the smallest alpha
    off = to_star.copy()
    off[0, -1] = 1.05 * gap[0]
    assert r.check_weighted_limit(a, to_xpi, off, gap).verdict is Verdict.FAIL
    # fixture too weak: x_pi too close to x*
    tiny = np.array([0.03, 0.005, 0.02])
    assert r.check_weighted_limit(a, to_xpi, tiny[:, None] + to_xpi,
                                  tiny).verdict is Verdict.INCONCLUSIVE


def test_planted_control_inverts_the_wrapped_verdict():
    fail = Outcome(Verdict.FAIL, {"x": 1.0}, threshold="x <= 0", reason="x = 1")
    ok = Outcome(Verdict.PASS, {"x": 0.0}, threshold="x <= 0", reason="x = 0")
    und = Outcome(Verdict.INCONCLUSIVE, {"x": 0.0}, threshold="x <= 0")
    assert r.planted_control(fail, "p").verdict is Verdict.PASS
    assert r.planted_control(ok, "p").verdict is Verdict.FAIL
    assert r.planted_control(und, "p").verdict is Verdict.INCONCLUSIVE
    assert r.planted_control(fail, "p").measured["wrapped_verdict"] == "FAIL"


# --- helpers --------------------------------------------------------------------------------

def test_empirical_step_takes_the_largest_converging_prefix():
    alphas = np.array([0.1, 0.2, 0.4, 0.8])
    init = np.ones(4)
    assert r.empirical_step(alphas, init, np.array([1e-9, 1e-8, 1e-3, np.inf])) == 0.2
    assert r.empirical_step(alphas, init, np.array([1e-9, np.nan, 1e-9, 1e-9])) == 0.1
    assert r.empirical_step(alphas, init, np.full(4, 1e-12)) == 0.8
    assert r.empirical_step(alphas, init, np.full(4, 1.0)) is None


def test_window_b_matches_the_library_on_fixed_sequences():
    pats = su.weights(su.g2("column"), 40) > 0
    assert r.window_b(pats) == 2 == g.connectivity_window(su.g2("column"))
    ring_only = np.repeat((su.weights(su.g2("column"), 1) > 0), 30, axis=0)
    assert r.window_b(ring_only) == 1                    # the ring alone is strongly connected
    chords_only = su.weights(su.g2("column"), 2)[1:] > 0
    assert r.window_b(np.repeat(chords_only, 20, axis=0)) is None


def test_window_b_matches_the_library_on_a_random_sequence():
    seq = su.g3("column", keep=0.6)
    horizon = 300
    expected = g.connectivity_window(seq, horizon=horizon)
    assert r.window_b(seq.weights_host(horizon) > 0, b_max=horizon) == expected
    assert r.push_b_horizon(seq, horizon)[0] == (expected if expected <= 10 else None)


def test_delta_b_and_the_exact_diging_rate():
    W = su.weights(su.g5(2), 2)
    J = np.full((su.N, su.N), 1 / su.N)
    direct = max(np.linalg.norm(W[1] @ W[0] - J, 2), np.linalg.norm(W[0] @ W[1] - J, 2))
    assert r.delta_b(W, 2) == pytest.approx(direct, rel=1e-12)
    # the exact rate against a plain-numpy DIGing loop on the error (homogeneous) iteration
    p = su.default_problem(3)
    H = np.asarray(p.hessians)
    alpha = 0.05
    x = np.random.default_rng(0).standard_normal((su.N, su.D)) + p.optimum
    y = np.einsum("nde,ne->nd", H, x) - p.linear
    errs = []
    for k in range(400):
        Wk = W[k % 2]
        x_new = Wk @ x - alpha * y
        y = Wk @ y + np.einsum("nde,ne->nd", H, x_new - x)
        x = x_new
        errs.append(np.linalg.norm(np.r_[x - p.optimum, y]))
    errs = np.array(errs)
    observed = (errs[300] / errs[100]) ** (1 / 200)
    assert r.diging_period_rate(p, W, alpha) == pytest.approx(observed, abs=2e-3)


def test_root_sets_of_the_push_pull_fixtures():
    R, C = (su.weights(q, 1)[0] for q in su.g6())
    assert r.root_sets(R, C) == ([0], [0])
    R, C = (su.weights(q, 1)[0] for q in su.g6(root=3))
    assert r.root_sets(R, C) == ([0], [3])
    problems, gate = r.push_pull_gate(*su.g6(root=3))
    assert gate["u_dot_v"] == 0.0 and any("disjoint" in q for q in problems)


def test_reach_step():
    e = np.array([[1.0, 1e-11, 1e-12], [1.0, 1.0, 1e-11]])
    assert r.reach_step(e) == 2
    assert r.reach_step(np.array([[1.0, 1.0]])) is None


# --- the claims at quick size ------------------------------------------------------------------

CTX = CheckContext()

# The cheap claims only: the others run (and are judged) in the main job,
# python -m proofs_checks; their judges are tested above on planted inputs.
EXPECTED = [
    ("optimization.dgd_bias_order_alpha", Verdict.PASS),
    ("optimization.row_stochastic_dgd_not_optimal", Verdict.PASS),
    ("optimization.push_pull_linear_rate_spanning_trees", Verdict.PASS),
]


@pytest.mark.parametrize("claim_id, verdict", EXPECTED, ids=[c for c, _ in EXPECTED])
def test_claim_verdicts(claim_id, verdict):
    from proofs_checks.registry import REGISTRY

    out = REGISTRY[claim_id].run(CTX)
    assert out.verdict is verdict, out.reason
    assert out.reason and out.threshold
