"""The exact optimization claims (proofs_checks.optimization.exact): each judge PASSes on paths
from small numpy loops and FAILs on a planted violation (a perturbed state, a corrupted
weight), a broken assumption makes it INCONCLUSIVE, and every claim wrapper returns its
verdict at quick size."""

from __future__ import annotations

import numpy as np
import pytest

from decentral.optimization import dgd_fixed_point, quadratic
from decentral.verify import CheckContext, Verdict
from proofs_checks.optimization import exact as E
from proofs_checks.optimization.setups import N, default_problem

pytestmark = pytest.mark.usefixtures("x64_module")

T, ALPHA = 30, 0.05


@pytest.fixture(scope="module")
def problem():
    return default_problem(0)


def _x0(d=3, seed=0):
    return np.random.default_rng(seed).standard_normal((N, d))


def _tracking_loop(problem, R, C, x_form="atc"):
    """push-pull (atc) or DIGing (cta) in numpy: x, y, exact gradients [T+1, N, d]."""
    x = _x0()
    y = E.gradients(problem, x)
    xs, ys = [x], [y]
    for t in range(T):
        x_new = R[t] @ (x - ALPHA * y) if x_form == "atc" else R[t] @ x - ALPHA * y
        y = C[t] @ y + E.gradients(problem, x_new) - E.gradients(problem, x)
        x = x_new
        xs.append(x)
        ys.append(y)
    xs, ys = np.stack(xs), np.stack(ys)
    return xs, ys, E.gradients(problem, xs)


def _subgradient_push_loop(problem, A, alphas):
    x, y = _x0(), np.ones(N)
    xs, ys, zs = [x], [y], [x]
    for t in range(T):
        w, y = A[t] @ x, A[t] @ y
        z = w / y[:, None]
        x = w - alphas[t] * E.gradients(problem, z)
        xs.append(x)
        ys.append(y)
        zs.append(z)
    return np.stack(xs), np.stack(ys), np.stack(zs)


def _corrupt(W, t=3):
    W = np.array(W)
    W[t, 0, 0] += 1e-3
    return W


# --- tracking invariant ----------------------------------------------------------------------

def test_tracking_judge(problem):
    W = E.fixture("G4", "row", T)
    x, y, grads = _tracking_loop(problem, W, W, x_form="cta")
    run = dict(name="diging", mixing=[("W", W, "doubly")], y=y, gradients=grads)
    out = E.check_tracking([run])
    assert out.verdict is Verdict.PASS and out.measured["max_relative_residual"] < 1e-14
    y_bad = y.copy()
    y_bad[17, 2, 1] += 1e-6                                         # a perturbed tracker
    assert E.check_tracking([run | {"y": y_bad}]).verdict is Verdict.FAIL
    out = E.check_tracking([run | {"mixing": [("W", _corrupt(W), "doubly")]}])
    assert out.verdict is Verdict.INCONCLUSIVE and "assumption not met" in out.reason


# --- push-sum mass ---------------------------------------------------------------------------

def test_push_sum_mass_judge(problem):
    A = E.fixture("G2", "column", T)
    alphas = 1.0 / np.sqrt(np.arange(T) + 1.0)
    x, y, z = _subgradient_push_loop(problem, A, alphas)
    run = dict(name="sp", weights=A, mass=y, numerators=x,
               drive=E.gradients(problem, z[1:]), alphas=alphas)
    out = E.check_push_sum_mass([run])
    assert out.verdict is Verdict.PASS and out.measured["min_weight"] > 0
    y_bad, x_bad = y.copy(), x.copy()
    y_bad[9, 4] *= 1 + 1e-8
    x_bad[12, 1, 0] += 1e-7
    assert E.check_push_sum_mass([run | {"mass": y_bad}]).verdict is Verdict.FAIL
    assert E.check_push_sum_mass([run | {"numerators": x_bad}]).verdict is Verdict.FAIL
    assert E.check_push_sum_mass([run | {"alphas": alphas * 1.001}]).verdict is Verdict.FAIL
    assert E.check_push_sum_mass([run | {"weights": _corrupt(A)}]).verdict is \
        Verdict.INCONCLUSIVE


# --- push-pull Perron identity ---------------------------------------------------------------

def test_perron_identity_judge(problem):
    R, C = E.fixture("G1", "row", T), E.fixture("G1", "column", T)
    x, y, _ = _tracking_loop(problem, R, C)
    run = dict(name="pp", pull=R, push=C, x=x, y=y, alpha=ALPHA)
    out = E.check_perron_identity([run])
    assert out.verdict is Verdict.PASS
    np.testing.assert_allclose(np.asarray(out.measured["u_pp"]) @ R[0],
                               out.measured["u_pp"], atol=1e-15)
    other = np.array(R)              # agent 1 listens to itself only: another Perron vector
    other[:, 1] = np.eye(N)[1]
    out = E.check_perron_identity([run | {"pull": other}])
    assert out.verdict is Verdict.FAIL
    varying = np.array(R)
    varying[5] = E.fixture("G4", "row", 1)[0]
    assert E.check_perron_identity([run | {"pull": varying}]).verdict is Verdict.INCONCLUSIVE
    y_bad = y.copy()
    y_bad[4] += 1e-6
    assert E.check_perron_identity([run | {"y": y_bad}]).verdict is Verdict.FAIL


# --- DGD's fixed point -----------------------------------------------------------------------

def test_fixed_point_judge(problem):
    W = E.fixture("G4", "row", 1)[0]
    Xa = dgd_fixed_point(problem, W, 0.05)
    case = dict(name="g4", problem=problem, W=W, kind="doubly", alpha=0.05,
                x_final=np.stack([Xa, Xa + 1e-14]), change=np.zeros(2), steps=100)
    out = E.check_fixed_point_limit([case])
    assert out.verdict is Verdict.PASS and out.measured["closed_form_residual"] < 1e-14
    assert E.check_fixed_point_limit([case | {"x_final": Xa + 1e-8}]).verdict is Verdict.FAIL
    R = E.fixture("G1", "row", 1)[0]                 # the run's W replaced by another one
    assert E.check_fixed_point_limit([case | {"W": R, "kind": "row"}]).verdict is Verdict.FAIL
    out = E.check_fixed_point_limit([case | {"alpha": 1.5}])     # no stable fixed point
    assert out.verdict is Verdict.INCONCLUSIVE and "spectral radius" in out.reason


# --- planted EXTRA on directed weights -------------------------------------------------------

def test_extra_nonsymmetric_judge():
    R = E.fixture("G1", "row", 1)[0]
    W = E.fixture("G4", "row", 1)[0]
    assert E.alpha0_root_modulus(R) == pytest.approx(1.158, abs=1e-3)
    assert E.alpha0_root_modulus(W) <= 1 + 1e-12
    assert E.check_converges([1e-12, 3e-11]).verdict is Verdict.PASS
    assert E.check_converges([1e-12, np.nan]).verdict is Verdict.FAIL
    assert E.check_extra_nonsymmetric(R, [np.inf, 1e3]).verdict is Verdict.PASS
    assert E.check_extra_nonsymmetric(R, [1e-12, 1e-13]).verdict is Verdict.FAIL
    assert E.check_extra_nonsymmetric(W, [np.inf]).verdict is Verdict.INCONCLUSIVE


# --- step-size thresholds --------------------------------------------------------------------

def test_threshold_formulas_on_other_graphs():
    """The closed forms are where the spectral radius crosses 1, on other symmetric W."""
    import decentral.graphs as g
    for adj in (g.path(5), g.ring(7), g.star(6)):
        adj = adj | adj.T
        W = np.asarray(g.metropolis(g.add_self_loops(adj)), np.float64)
        lam_n = np.linalg.eigvalsh(W)[0]
        for Lc in (1.0, 3.0):
            a_dgd, a_extra = (1 + lam_n) / Lc, (5 + 3 * lam_n) / (4 * Lc)
            assert E.dgd_radius(W, Lc, a_dgd * 0.999) < 1 < E.dgd_radius(W, Lc, a_dgd * 1.001)
            assert E.extra_radius(W, Lc, a_extra * 0.999) < 1 < \
                E.extra_radius(W, Lc, a_extra * 1.001)


def test_step_thresholds_judge():
    W = E.fixture("G4", "row", 1)[0]
    hess = np.broadcast_to(2.0 * np.eye(3), (N, 3, 3))
    good = {("dgd", "above"): [np.inf], ("extra", "above"): [1e4],
            ("dgd", "below"): [1e-13], ("extra", "below"): [2e-13]}
    out = E.check_step_thresholds(W, hess, good)
    assert out.verdict is Verdict.PASS
    assert out.measured["dgd_alpha_c"] == pytest.approx(1 / 3)
    assert out.measured["extra_alpha_c"] == pytest.approx(0.5)
    converged = good | {("extra", "above"): [1e-12]}
    assert E.check_step_thresholds(W, hess, converged).verdict is Verdict.FAIL
    stalled = good | {("dgd", "below"): [1e-3]}
    assert E.check_step_thresholds(W, hess, stalled).verdict is Verdict.FAIL
    bumpy = np.array(hess)
    bumpy[2, 0, 0] = 2.5
    assert E.check_step_thresholds(W, bumpy, good).verdict is Verdict.INCONCLUSIVE
    R = E.fixture("G1", "row", 1)[0]
    assert E.check_step_thresholds(R, hess, good).verdict is Verdict.INCONCLUSIVE


# --- equivalence -----------------------------------------------------------------------------

def test_equivalence_judge(problem):
    W = E.fixture("G4", "row", T)
    x, y, _ = _tracking_loop(problem, W, W)
    paths = {"a": {"x": x, "y": y}, "b": {"x": x.copy(), "y": y.copy()}}
    assert E.check_equivalence(W, paths).verdict is Verdict.PASS
    x_bad = x.copy()
    x_bad[20, 3, 2] += 1e-9
    bad = paths | {"b": {"x": x_bad, "y": y}}
    assert E.check_equivalence(W, bad).verdict is Verdict.FAIL
    assert E.check_equivalence(_corrupt(W), paths).verdict is Verdict.INCONCLUSIVE


def test_gradients_of_a_quadratic():
    A = np.stack([np.diag([1.0, 2.0]), np.eye(2)])
    p = quadratic(A, np.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_allclose(E.gradients(p, np.ones((2, 2))), [[0.0, 2.0], [1.0, 0.0]])


# --- the claims at quick size ----------------------------------------------------------------

# the cheaper identity claims (the others run in the main job; every judge is tested above)
@pytest.mark.parametrize("fn", [E._push_pull_perron, E._dgd_fixed_point_limit,
                                E._tracking_equivalence])
def test_identity_claims_pass(fn):
    out = fn(CheckContext())
    assert out.verdict is Verdict.PASS, out.reason
    assert not out.hypotheses_failed


def test_extra_control_claim():
    out = E._extra_nonsymmetric(CheckContext())
    assert out.verdict is Verdict.PASS, out.reason
    assert out.measured["alpha0_root_modulus"] == pytest.approx(1.1584, abs=1e-4)
    assert out.measured["runs_converged"] == 0
    # the fitted growth matches the spectral radius of EXTRA's linear map at each step
    np.testing.assert_allclose(out.measured["growth_per_step"], out.measured["spectral_radius"],
                               rtol=1e-3)


def test_step_threshold_claim():
    out = E._step_size_thresholds(CheckContext())
    assert out.verdict is Verdict.PASS, out.reason
    assert not out.findings
    assert any(h.startswith("dgd at alpha") for h in out.hypotheses_failed)
    assert any(h.startswith("extra at alpha") for h in out.hypotheses_failed)
