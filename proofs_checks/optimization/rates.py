"""Claims of decentralized optimization: rates (exact convergence, linear rates, DGD's bias).

Exact convergence with a constant step (EXTRA, DIGing), linear rates on time-varying and
directed graphs (DIGing, push-DIGing, push-pull on spanning trees), DGD's O(alpha) bias and its
pi-weighted limit with row-stochastic weights, and their planted negative controls.

Each claim is a registered wrapper around pure judges (``check_*``) whose inputs are explicit
(error curves, fixed points, final errors), so the tests feed the same judge a planted
violation (a curve that stalls, a slope outside its band) and see FAIL. Derivations and the
reference numbers: ``docs/optimization.md``.

Seeds. The methods here are deterministic (no gradient noise), so a seed is a random start:
seed ``s`` starts every agent at ``x_i(0) ~ N(0, I_d)`` drawn by ``numpy.random.default_rng(s)``
on one problem instance (``default_problem(base_seed)``). The starts are swept through
``params.x0`` in one compiled run (:func:`run_errors`); the closed-form claims (the DGD fixed
points) use random *instances* ``default_problem(s)`` instead. Rate fits are per seed, with a
Student-t interval over seeds (:func:`t_interval`).

Linear-rate protocol (fixed in advance): the error ``e_k = max_i ||x_i(k) - x*||`` is recorded at
every step; for each seed the fit window runs from the first ``k`` with ``e_k <= 1e-2`` up to
(not including) the first later ``k`` with ``e_k < 1e-11``; at most 40 points evenly spaced in
``k`` are taken from it and ``log e_k`` is fitted against ``k`` by least squares. Fewer than 10
points: INCONCLUSIVE. PASS needs the 99 % interval of the mean slope below 0 and every seed's
final error ``<= 1e-10``.
"""

from __future__ import annotations

import math
import warnings

import jax.numpy as jnp
import numpy as np
from scipy import linalg as sla
from scipy import stats

import decentral.graphs as g
from decentral.optimization import (
    dgd,
    dgd_fixed_point,
    diging,
    estimate_of,
    extra,
    optimization_params,
    push_diging,
    push_pull,
    weighted_optimum,
)
from decentral.runner import DivergenceWarning, run
from decentral.schedules import constant, stack_schedules
from decentral.verify import CheckContext, Kind, Outcome, Verdict, combine_verdicts
from proofs_checks.optimization import setups as s
from proofs_checks.registry import claim

__all__ = ["WINDOW", "FIT_POINTS", "MIN_POINTS", "RATE_LEVEL", "EXACT_TOL", "STEP_GRID",
           "PROBE_STEPS", "PROBE_DROP", "start_points", "error_recorder", "run_errors",
           "t_interval", "fit_windows", "window_b", "delta_b", "diging_period_rate",
           "empirical_step", "root_sets", "reach_step", "push_b_horizon", "push_pull_gate",
           "check_reaches", "rate_case", "check_linear_rate", "check_bias_order",
           "check_weighted_limit", "planted_control"]

DOCS = "docs/optimization.md"
NOS17 = ("Nedić, Olshevsky & Shi, 'Achieving geometric convergence for distributed optimization "
         "over time-varying graphs', SIAM J. Optim. 27(4), 2017")
PSXN = ("Pu, Shi, Xu & Nedić, 'Push-pull gradient methods for distributed optimization in "
        "networks', IEEE TAC 66(1), 2021")
YLY16 = ("Yuan, Ling & Yin, 'On the convergence of decentralized gradient descent', SIAM J. "
         "Optim. 26(3), 2016")
EXTRA15 = ("Shi, Ling, Wu & Yin, 'EXTRA: an exact first-order algorithm for decentralized "
           "consensus optimization', SIAM J. Optim. 25(2), 2015")

#: The error band of a linear-rate fit: from 1e-2 down to 1e-11 (above the float64 floor).
WINDOW = (1e-11, 1e-2)
#: At most this many points, evenly spaced in k, per seed's window.
FIT_POINTS = 40
#: Fewer points than this in a seed's window: the rate is INCONCLUSIVE.
MIN_POINTS = 10
#: Confidence level of the slope intervals of the linear-rate claims.
RATE_LEVEL = 0.99
#: "Reaches the optimum": every seed's final max_i ||x_i - x*|| at most this.
EXACT_TOL = 1e-10
#: The step grid of the empirical step bound alpha_emp (fixed in advance): 0.01 * 2^(j/2).
STEP_GRID = 0.01 * 2.0 ** (np.arange(16) / 2)
#: Horizon of the grid runs, and the drop e(PROBE_STEPS) / e(0) that counts as converging.
PROBE_STEPS, PROBE_DROP = 2000, 1e-6
#: Updates per compiled chunk: runs of one method with equal sweep sizes share one compile.
CHUNK = 1000
#: Sweeps are padded to a multiple of this many (step, start) pairs, for the same reason.
SWEEP_WIDTH = 16


# ---------------------------------------------------------------------------------------------
# running the methods: random starts swept through params.x0, the error at every step
# ---------------------------------------------------------------------------------------------

def instance_seed(ctx: CheckContext) -> int:
    """The seed of the problem instance of a run-based claim (``default_problem``)."""
    return int(ctx.base_seed) % 2**31


def start_points(seeds) -> np.ndarray:
    """``[S, N, d]``: seed ``s`` starts the agents at ``default_rng(s).standard_normal``."""
    return np.stack([np.random.default_rng(int(seed) % 2**32).standard_normal((s.N, s.D))
                     for seed in seeds])


_RECORDERS: dict[bytes, object] = {}


def error_recorder(x_star):
    """``state -> max_i ||x_i - x*||`` (one function object per ``x*``, so runs on the same
    problem share their compilation)."""
    xs = np.asarray(x_star, np.float64)
    key = xs.tobytes()
    if key not in _RECORDERS:
        def max_error(state):
            x = estimate_of(state)
            return jnp.max(jnp.linalg.norm(x - jnp.asarray(xs, x.dtype), axis=-1))
        _RECORDERS[key] = max_error
    return _RECORDERS[key]


def run_errors(alg, x_star, alphas, starts, num_steps: int, graphs=None) -> np.ndarray:
    """``[P, T+1]`` float64: ``max_i ||x_i(k) - x*||`` for k = 0..T of ``alg`` with the constant
    step ``alphas[p]`` from ``starts[p]`` (one compiled run over the P pairs). ``graphs``:
    ``params.graphs`` (sequences of the algorithm's structure; runs that always pass them share
    one compiled program across graphs). The sweep is padded to a multiple of
    :data:`SWEEP_WIDTH` pairs (the padding rows are dropped). A diverging run is kept (inf/NaN
    in its row), not raised."""
    n = len(starts)
    width = -(-n // SWEEP_WIDTH) * SWEEP_WIDTH           # pad: equal sweep sizes share compiles
    pad = np.r_[np.arange(n), np.full(width - n, n - 1)]
    alphas = np.broadcast_to(np.asarray(alphas, np.float64), (n,))[pad]
    params = optimization_params(stack_schedules([constant(float(a)) for a in alphas]),
                                 x0=np.asarray(starts, np.float64)[pad], graphs=graphs)
    chunk = CHUNK if num_steps % CHUNK == 0 else num_steps
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DivergenceWarning)
        res = run(alg, params, seeds=[0], num_steps=num_steps, record_every=1,
                  record_initial=True, record_fn=error_recorder(x_star),
                  sweep=["step_size", "x0"], chunk_size=chunk, check_records=False,
                  on_divergence="warn", progress=False)
    return np.asarray(res.records, np.float64)[:n, 0]


# ---------------------------------------------------------------------------------------------
# fits and graph quantities
# ---------------------------------------------------------------------------------------------

def t_interval(values, level: float) -> tuple[float, float, float]:
    """Mean and Student-t interval ``(mean, lo, hi)`` of per-seed values at ``level``."""
    v = np.asarray(values, np.float64)
    m = float(v.mean())
    if v.size < 2:
        return m, float("nan"), float("nan")
    half = stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return m, m - float(half), m + float(half)


def fit_windows(errors, *, band=WINDOW, points: int = FIT_POINTS) -> tuple[np.ndarray, ...]:
    """Per-seed semilog fits of ``errors [S, K]`` (step k in column k) over the band window
    (module docstring). Returns ``(slopes [S], n_points [S], start [S], end [S])``; a seed with
    fewer than 2 points gets slope NaN."""
    e = np.asarray(errors, np.float64)
    lo, hi = band
    slopes = np.full(e.shape[0], np.nan)
    npts = np.zeros(e.shape[0], int)
    starts = np.full(e.shape[0], -1)
    ends = np.full(e.shape[0], -1)
    with np.errstate(invalid="ignore"):
        for i, row in enumerate(e):             # host loop over recorded curves (S rows)
            inside = np.flatnonzero(row <= hi)
            if inside.size == 0:
                continue
            a = int(inside[0])
            below = np.flatnonzero(row[a:] < lo)
            b = a + int(below[0]) if below.size else row.size
            idx = np.unique(np.round(np.linspace(a, b - 1, min(points, b - a))).astype(int))
            starts[i], ends[i], npts[i] = a, b, idx.size
            if idx.size >= 2 and np.all(np.isfinite(row[idx])) and np.all(row[idx] > 0):
                slopes[i] = np.polyfit(idx.astype(float), np.log(row[idx]), 1)[0]
    return slopes, npts, starts, ends


def _closure(adj: np.ndarray) -> np.ndarray:
    """Reachability ``[..., N, N]`` (``r[i, j]``: a path j -> ... -> i) of patterns with
    self-loops, by repeated squaring."""
    r = adj.astype(np.int64)
    for _ in range(max(1, math.ceil(math.log2(adj.shape[-1])))):
        r = (r @ r > 0).astype(np.int64)
    return r > 0


def window_b(patterns, b_max: int = 10) -> int | None:
    """Smallest B <= b_max such that the union of every B consecutive patterns ``[T, N, N]``
    (no wrap-around) is strongly connected, else None (vectorised over the windows)."""
    p = np.asarray(patterns, bool) | np.eye(patterns.shape[-1], dtype=bool)
    csum = np.concatenate([np.zeros((1,) + p.shape[1:], np.int64), np.cumsum(p, axis=0)])
    for b in range(1, min(b_max, p.shape[0]) + 1):
        unions = (csum[b:] - csum[:-b]) > 0
        if _closure(unions).all():
            return b
    return None


def delta_b(weights_period, b: int) -> float:
    """``max_k sigma_max(W_{k+b-1} ... W_k - J)`` over the start k of a periodic sequence given
    by one period ``[P, N, N]`` (windows wrap around the period)."""
    w = np.asarray(weights_period, np.float64)
    period, n = w.shape[0], w.shape[1]
    worst = 0.0
    for k in range(period):                    # host loop over the period (P <= a few)
        prod = np.eye(n)
        for j in range(b):
            prod = w[(k + j) % period] @ prod
        worst = max(worst, float(np.linalg.norm(prod - np.full((n, n), 1 / n), 2)))
    return worst


def diging_period_rate(problem, weights_period, alpha: float) -> float:
    """Exact asymptotic per-step rate of DIGing on quadratics over a periodic doubly stochastic
    sequence: ``rho(Phi_V)^(1/P)``, ``Phi`` the period's product of the error iteration
    ``[e; y] -> [[W, -a I], [H (W - I), W - a H]] [e; y]`` (``H = blkdiag(A_i)``) restricted to
    the invariant subspace ``sum_i (y_i - A_i e_i) = 0`` where DIGing's errors live."""
    w = np.asarray(weights_period, np.float64)
    n, d = problem.num_agents, problem.dim
    H = sla.block_diag(*np.asarray(problem.hessians, np.float64))
    eye = np.eye(n * d)
    phi = np.eye(2 * n * d)
    for W in w:
        Wd = np.kron(W, np.eye(d))
        M = np.block([[Wd, -alpha * eye], [H @ (Wd - eye), Wd - alpha * H]])
        phi = M @ phi
    ones = np.kron(np.ones((n, 1)), np.eye(d))
    left = np.vstack([-H @ ones, ones])                      # l^T M = l^T for each column l
    Q = sla.null_space(left.T)
    rho = float(np.max(np.abs(np.linalg.eigvals(Q.T @ phi @ Q))))
    return rho ** (1.0 / w.shape[0])


def empirical_step(alphas, initial, final, *, drop: float = PROBE_DROP) -> float | None:
    """alpha_emp: the largest ``alphas[j]`` such that the runs of ``alphas[0..j]`` all end
    finite with ``final <= drop * initial`` (None if the smallest does not)."""
    ok = np.isfinite(final) & (np.nan_to_num(final, nan=np.inf) <= drop * np.asarray(initial))
    if not ok[0]:
        return None
    j = len(ok) if ok.all() else int(np.argmin(ok))
    return float(np.asarray(alphas)[j - 1])


def root_sets(pull_weights, push_weights) -> tuple[list[int], list[int]]:
    """Roots of spanning trees: of G_R (agents whose value reaches every agent by pulls) and of
    G_{C^T} (agents that every agent's pushes reach)."""
    reach_r = _closure(np.asarray(pull_weights) > 0)
    reach_c = _closure(np.asarray(push_weights) > 0)
    return ([int(r) for r in np.flatnonzero(reach_r.all(axis=0))],
            [int(r) for r in np.flatnonzero(reach_c.all(axis=1))])


# ---------------------------------------------------------------------------------------------
# judges
# ---------------------------------------------------------------------------------------------

def check_reaches(final_errors: dict, tol: float, *, what: str = "the optimum",
                  size: str = "") -> Outcome:
    """Judge "every run reaches ``what``": ``final_errors`` maps a method/graph label to the
    per-seed final errors ``[S]``; PASS iff all are finite and ``<= tol``, else FAIL."""
    measured, descriptions, bad = {}, {}, []
    for name, errs in final_errors.items():
        e = np.asarray(errs, np.float64)
        worst = float(np.max(np.nan_to_num(e, nan=np.inf)))
        measured[f"{name}_final_error_max"] = worst
        descriptions[f"{name}_final_error_max"] = (f"{name}: max over seeds of the final "
                                                   "max_i ||x_i - x*||")
        if not worst <= tol:
            bad.append(f"{name} {worst:.3g}")
    worst_all = max(measured.values())
    verdict = Verdict.PASS if not bad else Verdict.FAIL
    reason = (f"every run ends within {tol:g} of {what} (worst {worst_all:.3g})" if not bad else
              f"runs end above {tol:g} from {what}: " + ", ".join(bad))
    return Outcome(verdict=verdict, measured=measured, descriptions=descriptions,
                   threshold=f"every seed's final max_i ||x_i - x*|| <= {tol:g}", reason=reason,
                   headline=list(measured)[:3], size=size)


def rate_case(name: str, errors, *, final_tol: float = EXACT_TOL, level: float = RATE_LEVEL
              ) -> tuple[Verdict, dict, dict, str]:
    """One linear-rate case from ``errors [S, T+1]`` (module docstring): ``(verdict, measured,
    descriptions, reason)`` with the keys prefixed ``name_``. FAIL: a non-finite error, a
    final error above ``final_tol`` or a slope interval at or above 0; INCONCLUSIVE: a seed's
    window holds fewer than :data:`MIN_POINTS` points or the interval straddles 0."""
    e = np.asarray(errors, np.float64)
    slopes, npts, starts, ends = fit_windows(e)
    final = e[:, -1]
    finite = bool(np.all(np.isfinite(e)))
    final_max = float(np.max(np.nan_to_num(final, nan=np.inf)))
    short = int(np.sum(npts < MIN_POINTS))
    if short == 0:
        mean, lo, hi = t_interval(slopes, level)
    else:
        mean = lo = hi = float("nan")
    if not finite or not final_max <= final_tol:
        verdict = Verdict.FAIL
    elif short or not hi < 0 and not lo >= 0:
        verdict = Verdict.INCONCLUSIVE
    elif lo >= 0:
        verdict = Verdict.FAIL
    else:
        verdict = Verdict.PASS
    if not finite:
        reason = f"{name}: non-finite errors (diverged)"
    elif short:
        reason = (f"{name}: {short} seed(s) with < {MIN_POINTS} points in the window; final "
                  f"error {final_max:.2g}")
    else:
        reason = (f"{name}: slope {mean:.4g} per step, {level:.0%} CI [{lo:.4g}, {hi:.4g}], "
                  f"final error {final_max:.2g}")
    p = f"{name}_"
    measured = {p + "slope": mean, p + "slope_lo": lo, p + "slope_hi": hi,
                p + "lambda_emp": math.exp(mean) if np.isfinite(mean) else float("nan"),
                p + "final_error_max": final_max,
                p + "window_points_min": int(npts.min()),
                p + "window_end_max": int(ends.max())}
    descriptions = {
        p + "slope": f"{name}: mean over seeds of the fitted slope of ln max_i ||x_i(k) - x*|| "
                     "against k (per step)",
        p + "slope_lo": f"{name}: lower end of the {level:.0%} Student-t interval of the slope",
        p + "slope_hi": f"{name}: upper end of the {level:.0%} Student-t interval of the slope",
        p + "lambda_emp": f"{name}: exp(mean slope), the empirical per-step contraction",
        p + "final_error_max": f"{name}: max over seeds of max_i ||x_i(T) - x*||",
        p + "window_points_min": f"{name}: fewest fit points in a seed's window "
                                 f"(error in [{WINDOW[0]:g}, {WINDOW[1]:g}])",
        p + "window_end_max": f"{name}: last step of the latest seed's window"}
    return verdict, measured, descriptions, reason


def check_linear_rate(cases: dict, *, final_tol: float = EXACT_TOL, level: float = RATE_LEVEL,
                      size: str = "") -> Outcome:
    """Judge linear convergence on every case ``name -> errors [S, T+1]`` (:func:`rate_case`);
    the worst case decides."""
    verdicts, measured, descriptions, reasons = [], {}, {}, []
    for name, errors in cases.items():
        v, m, d, r = rate_case(name, errors, final_tol=final_tol, level=level)
        verdicts.append(v)
        measured.update(m)
        descriptions.update(d)
        reasons.append(r)
    return Outcome(
        verdict=combine_verdicts(verdicts), measured=measured, descriptions=descriptions,
        reason="; ".join(reasons),
        threshold=(f"per case: {level:.0%} Student-t interval (over seeds) of the semilog slope "
                   f"fitted where the error is in [{WINDOW[0]:g}, {WINDOW[1]:g}] below 0, and "
                   f"every seed's final error <= {final_tol:g}; fewer than {MIN_POINTS} window "
                   "points: INCONCLUSIVE"),
        headline=[k for k in measured if k.endswith(("lambda_emp", "final_error_max"))][:4],
        size=size)


def check_bias_order(alphas, biases, beta: float, *, level: float = 0.95,
                     band=(0.9, 1.1), ci_band=(0.8, 1.2)) -> Outcome:
    """Judge "bias = Theta(alpha)" from ``biases [I, J]`` (instance i, step ``alphas[j]``): the
    per-instance least-squares slope of ln bias against ln alpha; PASS iff the mean slope is in
    ``band`` and its Student-t interval inside ``ci_band``; FAIL if the mean is outside
    ``band`` or the interval misses ``ci_band``; else INCONCLUSIVE. Reports
    ``bias (1 - beta) / alpha``."""
    a = np.asarray(alphas, np.float64)
    b = np.asarray(biases, np.float64)
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        return Outcome(Verdict.FAIL, {"nonpositive_or_nonfinite": int(np.sum(~(b > 0)))},
                       reason="a bias is zero, negative or not finite: no Theta(alpha) law",
                       threshold=f"mean slope in {list(band)}, {level:.0%} CI in {list(ci_band)}")
    slopes = np.polyfit(np.log(a), np.log(b).T, 1)[0]
    mean, lo, hi = t_interval(slopes, level)
    ratio = b * (1 - beta) / a
    if band[0] <= mean <= band[1] and ci_band[0] <= lo and hi <= ci_band[1]:
        verdict = Verdict.PASS
    elif not band[0] <= mean <= band[1] or hi < ci_band[0] or lo > ci_band[1]:
        verdict = Verdict.FAIL
    else:
        verdict = Verdict.INCONCLUSIVE
    measured = {"slope_mean": mean, "slope_lo": lo, "slope_hi": hi,
                "slope_min": float(slopes.min()), "slope_max": float(slopes.max()),
                "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
                "ratio_at_largest_alpha": float(np.median(ratio[:, int(np.argmax(a))])),
                "ratio_at_smallest_alpha": float(np.median(ratio[:, int(np.argmin(a))])),
                "beta": float(beta), "instances": int(b.shape[0])}
    descriptions = {
        "slope_mean": "mean over instances of the slope of ln max_i ||x_alpha,i - x*|| vs ln "
                      "alpha",
        "slope_lo": f"lower end of the {level:.0%} Student-t interval of the slope",
        "slope_hi": f"upper end of the {level:.0%} Student-t interval of the slope",
        "slope_min": "smallest per-instance slope", "slope_max": "largest per-instance slope",
        "ratio_min": "min over instances and alpha of bias (1 - beta) / alpha",
        "ratio_max": "max over instances and alpha of bias (1 - beta) / alpha",
        "ratio_at_largest_alpha": "median over instances of bias (1 - beta) / alpha at the "
                                  "largest alpha",
        "ratio_at_smallest_alpha": "median over instances of bias (1 - beta) / alpha at the "
                                   "smallest alpha",
        "beta": "max(|lambda_2|, |lambda_N|) of W", "instances": "random problem instances"}
    return Outcome(
        verdict=verdict, measured=measured, descriptions=descriptions,
        reason=(f"slope {mean:.4f}, {level:.0%} CI [{lo:.4f}, {hi:.4f}] over {b.shape[0]} "
                f"instances against mean in {list(band)} and CI in {list(ci_band)}; "
                f"bias (1 - beta)/alpha in [{ratio.min():.3g}, {ratio.max():.3g}]"),
        threshold=(f"mean slope in [{band[0]}, {band[1]}] and its {level:.0%} Student-t "
                   f"interval inside [{ci_band[0]}, {ci_band[1]}] (PASS); mean outside the "
                   "first or interval disjoint from the second (FAIL)"),
        headline=["slope_mean", "slope_hi", "ratio_max"],
        size=f"instances={b.shape[0]}, alphas={len(a)}")


def check_weighted_limit(alphas, to_xpi, to_star, xpi_gap, *, band=(0.9, 1.1),
                         rel_tol: float = 0.02, min_gap: float = 1e-2) -> Outcome:
    """Judge "DGD with a row-stochastic R converges to x_pi" on closed-form fixed points, per
    instance i and step ``alphas[j]``: ``to_xpi[i, j] = ||pi^T X_alpha - x_pi||`` has a log-log
    slope in ``band``, and ``to_star[i, j] = ||pi^T X_alpha - x*||`` is within ``rel_tol`` of
    ``xpi_gap[i] = ||x_pi - x*||`` at the smallest alpha; every instance must pass. An instance
    with ``xpi_gap < min_gap`` makes the contrast INCONCLUSIVE."""
    a = np.asarray(alphas, np.float64)
    d1 = np.asarray(to_xpi, np.float64)
    d2 = np.asarray(to_star, np.float64)
    gap = np.asarray(xpi_gap, np.float64)
    small = int(np.argmin(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.polyfit(np.log(a), np.log(d1).T, 1)[0]
        rel = np.abs(d2[:, small] / gap - 1)
    slope_ok = np.isfinite(slopes) & (slopes >= band[0]) & (slopes <= band[1])
    rel_ok = np.isfinite(rel) & (rel <= rel_tol)
    fixture = bool(np.all(gap >= min_gap))
    if not fixture:
        verdict = Verdict.INCONCLUSIVE
        reason = (f"fixture check: ||x_pi - x*|| = {gap.min():.3g} < {min_gap:g} on some "
                  "instance: the contrast is uninformative")
    else:
        verdict = Verdict.PASS if slope_ok.all() and rel_ok.all() else Verdict.FAIL
        reason = (f"slopes in [{slopes.min():.4f}, {slopes.max():.4f}] (band {list(band)}); "
                  f"at alpha={a[small]:g} ||pi^T X - x*|| within {rel.max():.2%} of "
                  f"||x_pi - x*|| (<= {rel_tol:.0%}); ||x_pi - x*|| >= {gap.min():.3g}")
    measured = {"slope_min": float(np.nanmin(slopes)), "slope_max": float(np.nanmax(slopes)),
                "slope_mean": float(np.nanmean(slopes)), "rel_gap_max": float(np.nanmax(rel)),
                "xpi_gap_min": float(gap.min()), "xpi_gap_max": float(gap.max()),
                "to_xpi_at_smallest_alpha_max": float(d1[:, small].max()),
                "instances": int(d1.shape[0]),
                "failing_instances": int(np.sum(~(slope_ok & rel_ok)))}
    descriptions = {
        "slope_min": "smallest per-instance slope of ln ||pi^T X_alpha - x_pi|| vs ln alpha",
        "slope_max": "largest per-instance slope", "slope_mean": "mean per-instance slope",
        "rel_gap_max": "max over instances of | ||pi^T X_alpha - x*|| / ||x_pi - x*|| - 1 | at "
                       "the smallest alpha",
        "xpi_gap_min": "smallest ||x_pi - x*|| over instances (fixture check >= 1e-2)",
        "xpi_gap_max": "largest ||x_pi - x*|| over instances",
        "to_xpi_at_smallest_alpha_max": "max over instances of ||pi^T X_alpha - x_pi|| at the "
                                        "smallest alpha",
        "instances": "random problem instances",
        "failing_instances": "instances outside the slope band or the 2% band"}
    return Outcome(
        verdict=verdict, measured=measured, descriptions=descriptions, reason=reason,
        threshold=(f"every instance: slope in [{band[0]}, {band[1]}] and relative gap <= "
                   f"{rel_tol:g} at the smallest alpha; ||x_pi - x*|| >= {min_gap:g} else "
                   "INCONCLUSIVE"),
        headline=["slope_min", "slope_max", "rel_gap_max"],
        size=f"instances={d1.shape[0]}, alphas={len(a)}")


def planted_control(wrapped: Outcome, planted: str, *, hypothesis: bool = True) -> Outcome:
    """A negative control: PASS iff the wrapped check FAILs on the ``planted`` violation
    (FAIL if it PASSes, INCONCLUSIVE if it is undecided). ``hypothesis``: the planted violation
    is a broken theorem hypothesis (recorded in ``hypotheses_failed``)."""
    verdict = {Verdict.FAIL: Verdict.PASS, Verdict.PASS: Verdict.FAIL}.get(
        wrapped.verdict, Verdict.INCONCLUSIVE)
    measured = dict(wrapped.measured)
    measured["wrapped_verdict"] = wrapped.verdict.value
    descriptions = dict(wrapped.descriptions)
    descriptions["wrapped_verdict"] = "verdict of the wrapped check on the planted violation " \
                                      "(must be FAIL)"
    return Outcome(
        verdict=verdict, measured=measured, descriptions=descriptions,
        reason=f"wrapped check {wrapped.verdict.value} on {planted}: {wrapped.reason}",
        threshold=f"the wrapped check ({wrapped.threshold}) returns FAIL",
        headline=(wrapped.headline or list(wrapped.measured)[:2]) + ["wrapped_verdict"],
        size=wrapped.size, details=wrapped.details,
        hypotheses_failed=[planted] if hypothesis else [])


def _not_met(problems: list[str], measured: dict, *, threshold: str, size: str = "",
             descriptions: dict | None = None, details: str = "") -> Outcome:
    return Outcome(Verdict.INCONCLUSIVE, measured, threshold=threshold, size=size,
                   reason="assumption not met: " + "; ".join(problems),
                   hypotheses_failed=list(problems), descriptions=descriptions or {},
                   details=details)


# ---------------------------------------------------------------------------------------------
# C: DGD's constant-step bias is Theta(alpha)
# ---------------------------------------------------------------------------------------------

BIAS_ALPHAS = 0.1 * 2.0 ** -np.arange(9)


def bias_setup(ctx: CheckContext) -> dict:
    """Closed-form DGD fixed points on G4 for every instance and alpha."""
    W = s.weights(s.g4(), 1)[0]
    seeds = ctx.batch_seeds(0, ctx.seed_count(20, 100))
    biases = np.empty((len(seeds), BIAS_ALPHAS.size))
    smooth = 0.0
    for i, seed in enumerate(seeds):          # host loop: one small linear solve per pair
        p = s.default_problem(int(seed) % 2**31)
        smooth = max(smooth, float(p.max_smoothness))
        for j, a in enumerate(BIAS_ALPHAS):
            X = dgd_fixed_point(p, W, float(a))
            biases[i, j] = float(np.linalg.norm(X - p.optimum, axis=1).max())
    return {"W": W, "biases": biases, "smoothness": smooth}


@claim("optimization.dgd_bias_order_alpha",
       statement="DGD with a constant step alpha on a static symmetric doubly stochastic W "
                 "stops at a fixed point whose distance to x* is Theta(alpha): the log-log "
                 "slope of max_i ||x_alpha,i - x*|| against alpha is 1",
       source=f"{YLY16} (constant-step neighbourhood O(alpha/(1-beta)); theorem text and "
              f"constants not transcribed); closed-form fixed point: {DOCS}",
       kind=Kind.RATE)
def _dgd_bias_order(ctx: CheckContext) -> Outcome:
    su = bias_setup(ctx)
    W = su["W"]
    ev = np.linalg.eigvalsh(W)
    beta = float(max(abs(ev[0]), abs(ev[-2])))
    problems = []
    if np.abs(W - W.T).max() > 1e-14 or np.abs(W.sum(0) - 1).max() > 1e-14 \
            or np.abs(W.sum(1) - 1).max() > 1e-14:
        problems.append("W is not symmetric doubly stochastic")
    bound = (1 + ev[0]) / su["smoothness"]
    if BIAS_ALPHAS.max() > bound:
        problems.append(f"alpha = {BIAS_ALPHAS.max():g} > (1 + lambda_N)/L = {bound:.3g}")
    if problems:
        return _not_met(problems, {"beta": beta}, threshold="slope in [0.9, 1.1]")
    out = check_bias_order(BIAS_ALPHAS, su["biases"], beta)
    out.measured["yly16_step_bound"] = float(bound)
    out.descriptions["yly16_step_bound"] = "(1 + lambda_N(W)) / L, the step condition (every " \
                                           "alpha of the grid is below it)"
    out.details = ("G4 (Metropolis ring, N=8), default quadratics (mu=0.5, L=2, zeta^2=1), "
                   f"alpha = 0.1 * 2^-j, j=0..8; instances default_problem(s) for the seeds "
                   f"{ctx.base_seed}..; 95% Student-t interval over instances. YLY16's "
                   "neighbourhood is O(alpha/(1-beta)); its constants were not transcribed, so "
                   "bias (1-beta)/alpha is reported, not judged.")
    return out


# ---------------------------------------------------------------------------------------------
# C: exact convergence with a constant step (EXTRA, DIGing) and DGD's stall (control)
# ---------------------------------------------------------------------------------------------

EXACT_ALPHA, EXACT_STEPS = 0.05, 4000
DRIFT_CHECKPOINTS = (500, 1000, 2000, 4000, 8000, 16000, 40000)


def exact_setup(ctx: CheckContext) -> dict:
    seeds = ctx.batch_seeds(0, ctx.seed_count(10, 40))
    return {"problem": s.default_problem(instance_seed(ctx)), "starts": start_points(seeds),
            "seeds": seeds}


def _extra_gate(problem, W, alpha) -> tuple[list[str], dict]:
    Wt = (np.eye(W.shape[0]) + W) / 2
    lam_min = float(np.linalg.eigvalsh(Wt)[0])
    bound = 2 * lam_min / float(problem.max_smoothness)
    problems = []
    if np.abs(W - W.T).max() > 1e-14:
        problems.append("EXTRA: W is not symmetric")
    if g.sequence_stochasticity_failure(s.g4(), "doubly") is not None:
        problems.append("EXTRA: W is not doubly stochastic")
    if not lam_min > 0:
        problems.append(f"EXTRA: lambda_min(W~) = {lam_min:.3g} <= 0")
    if not alpha < bound:
        problems.append(f"EXTRA: alpha = {alpha:g} >= 2 lambda_min(W~)/L = {bound:.3g}")
    return problems, {"extra_step_bound": bound, "extra_lambda_min_wtilde": lam_min}


@claim("optimization.exact_convergence_constant_step",
       statement="with a constant step, EXTRA (static symmetric W, alpha < 2 lambda_min(W~)/L) "
                 "and DIGing (doubly stochastic, B-connected) drive every agent to x*: "
                 "max_i ||x_i - x*|| <= 1e-10 by T = 4000",
       source=f"{EXTRA15}, Theorem 3.3 (and 3.7, linear); {NOS17}, Theorem 10 (DIGing); "
              f"{DOCS}",
       kind=Kind.RATE)
def _exact_convergence(ctx: CheckContext) -> Outcome:
    su = exact_setup(ctx)
    p, starts = su["problem"], su["starts"]
    W = s.weights(s.g4(), 1)[0]
    problems, gate = _extra_gate(p, W, EXACT_ALPHA)
    for name, seq in (("G4", s.g4()), ("G5", s.g5(2))):
        if g.sequence_stochasticity_failure(seq, "doubly") is not None:
            problems.append(f"DIGing on {name}: not doubly stochastic")
        if g.connectivity_window(seq) is None:
            problems.append(f"DIGing on {name}: not B-connected")
    if problems:
        return _not_met(problems, gate, threshold=f"all final errors <= {EXACT_TOL:g}")
    extra_T = 40000 if ctx.full else EXACT_STEPS
    e_extra = run_errors(extra(p, s.g4()), p.optimum, EXACT_ALPHA, starts, extra_T)
    e_g4 = run_errors(diging(p, s.g4()), p.optimum, EXACT_ALPHA, starts, EXACT_STEPS)
    e_g5 = run_errors(diging(p, s.g5(2)), p.optimum, EXACT_ALPHA, starts, EXACT_STEPS)
    out = check_reaches({"extra_g4": e_extra[:, EXACT_STEPS], "diging_g4": e_g4[:, -1],
                         "diging_g5": e_g5[:, -1]}, EXACT_TOL,
                        size=f"N={s.N}, d={s.D}, T={EXACT_STEPS}, seeds={len(starts)}")
    out.measured.update(gate)
    out.descriptions["extra_step_bound"] = "2 lambda_min(W~)/L with W~ = (I + W)/2"
    out.descriptions["extra_lambda_min_wtilde"] = "lambda_min((I + W)/2) on G4"
    drift = {k: float(e_extra[:, k].max()) for k in DRIFT_CHECKPOINTS if k <= extra_T}
    k_fit = np.arange(1000, extra_T + 1)
    growth = float(np.mean(np.polyfit(np.log(k_fit), np.log(e_extra[:, k_fit]).T, 1)[0]))
    for k, v in drift.items():
        out.measured[f"extra_error_at_{k}"] = v
        out.descriptions[f"extra_error_at_{k}"] = f"EXTRA: max over seeds of the error at k={k}"
    out.measured["extra_drift_exponent"] = growth
    out.descriptions["extra_drift_exponent"] = (
        f"EXTRA: mean over seeds of the slope of ln error vs ln k over k in [1000, {extra_T}] "
        "(rounding drift: 0.5 for a random walk, 1 for a systematic drift)")
    out.headline = ["extra_g4_final_error_max", "diging_g4_final_error_max",
                    "diging_g5_final_error_max"]
    out.details = (f"alpha = {EXACT_ALPHA} for all three; seeds = random starts x_i(0) ~ "
                   f"N(0, I) (seeds {su['seeds'][0]}..{su['seeds'][-1]}) on "
                   f"default_problem({instance_seed(ctx)}); G5 with 2 groups. NOS17's explicit "
                   "step bound was not transcribed (not checked). EXTRA's error after "
                   "convergence grows by rounding: " +
                   ", ".join(f"{v:.2g} at k={k}" for k, v in drift.items()) +
                   f" (ln-ln growth exponent {growth:.2f}).")
    return out


@claim("optimization.dgd_constant_step_not_exact",
       statement="negative control: the check 'DGD with the constant step alpha = 0.05 on G4 "
                 "reaches max_i ||x_i - x*|| <= 1e-8 by T = 4000' must FAIL (DGD stops at its "
                 "O(alpha) biased fixed point)",
       source=f"{YLY16} (the O(alpha) neighbourhood); planted control of "
              f"optimization.exact_convergence_constant_step; {DOCS}",
       kind=Kind.RATE)
def _dgd_not_exact(ctx: CheckContext) -> Outcome:
    su = exact_setup(ctx)
    p, starts = su["problem"], su["starts"]
    W = s.weights(s.g4(), 1)[0]
    e = run_errors(dgd(p, g.static(W)), p.optimum, EXACT_ALPHA, starts, EXACT_STEPS,
                   graphs=g.static(W))
    wrapped = check_reaches({"dgd_g4": e[:, -1]}, 1e-8,
                            size=f"N={s.N}, T={EXACT_STEPS}, seeds={len(starts)}")
    out = planted_control(wrapped, "DGD (no correction term) in place of EXTRA / DIGing",
                          hypothesis=False)
    bias = float(np.linalg.norm(dgd_fixed_point(p, W, EXACT_ALPHA) - p.optimum, axis=1).max())
    out.measured["fixed_point_bias"] = bias
    out.descriptions["fixed_point_bias"] = "max_i ||x_alpha,i - x*|| of the closed-form fixed " \
                                           "point (the run's limit)"
    return out


# ---------------------------------------------------------------------------------------------
# C: linear rates on time-varying graphs: DIGing (G5) and push-DIGing (G2, G3)
# ---------------------------------------------------------------------------------------------

RATE_STEPS = 20000


def step_search(alg, x_star, start) -> tuple[float | None, np.ndarray]:
    """alpha_emp over :data:`STEP_GRID` from one start (:func:`empirical_step`) and the final
    errors of the grid runs."""
    starts = np.repeat(np.asarray(start)[None], STEP_GRID.size, axis=0)
    e = run_errors(alg, x_star, STEP_GRID, starts, PROBE_STEPS)
    return empirical_step(STEP_GRID, e[:, 0], e[:, -1]), e[:, -1]


def rate_setup(ctx: CheckContext) -> dict:
    seeds = ctx.batch_seeds(0, ctx.seed_count(STEP_GRID.size, 64))
    return {"problem": s.default_problem(instance_seed(ctx)), "starts": start_points(seeds),
            "seeds": seeds, "num_steps": RATE_STEPS}


def _rate_run(alg, problem, starts, num_steps) -> tuple[dict, np.ndarray | None]:
    alpha_emp, grid_final = step_search(alg, problem.optimum, starts[0])
    info = {"alpha_emp": alpha_emp, "grid_final": grid_final}
    if alpha_emp is None:
        return info, None
    info["alpha"] = 0.5 * alpha_emp
    return info, run_errors(alg, problem.optimum, info["alpha"], starts, num_steps)


def _rate_outcome(cases: dict, infos: dict, problems: list[str], extra: dict,
                  extra_desc: dict, size: str) -> Outcome:
    runs = {k: v for k, v in cases.items() if v is not None}
    out = check_linear_rate(runs, size=size) if runs else Outcome(
        Verdict.INCONCLUSIVE, {}, threshold="a converging step on the grid", reason="")
    for name, info in infos.items():
        out.measured[f"{name}_alpha_emp"] = info["alpha_emp"]
        out.descriptions[f"{name}_alpha_emp"] = (
            f"{name}: largest step of 0.01 * 2^(j/2), j=0..15, whose run (and every smaller "
            f"one's) drops the error by {PROBE_DROP:g} in {PROBE_STEPS} steps")
        if "alpha" in info:
            out.measured[f"{name}_alpha"] = info["alpha"]
            out.descriptions[f"{name}_alpha"] = f"{name}: the step run, 0.5 alpha_emp"
    out.measured.update(extra)
    out.descriptions.update(extra_desc)
    missing = [n for n, v in cases.items() if v is None]
    if missing:
        problems = problems + [f"{n}: no step of the grid converges" for n in missing]
    if problems:
        out.hypotheses_failed = list(problems)
        out.details = (f"rate verdict before the gate: {out.verdict.value} ({out.reason})")
        out.verdict = Verdict.INCONCLUSIVE
        out.reason = "assumption not met: " + "; ".join(problems)
    return out


@claim("optimization.diging_linear_rate_time_varying",
       statement="DIGing with a constant step converges R-linearly to x* on a time-varying, "
                 "doubly stochastic, B-connected sequence (G5 with B = 2 and 4 groups)",
       source=f"{NOS17}, Theorem 10 (explicit step bound and rate not transcribed); {DOCS}",
       kind=Kind.RATE)
def _diging_rate(ctx: CheckContext) -> Outcome:
    su = rate_setup(ctx)
    p, starts, T = su["problem"], su["starts"], su["num_steps"]
    cases, infos, problems, extra_m, extra_d = {}, {}, [], {}, {}
    for b in (2, 4):
        seq, name = s.g5(groups=b), f"g5_b{b}"
        if g.sequence_stochasticity_failure(seq, "doubly") is not None:
            problems.append(f"{name}: not doubly stochastic")
        found = g.connectivity_window(seq)
        Wp = s.weights(seq, seq.period)
        dB = delta_b(Wp, b) if found is not None else float("nan")
        if found is None or found > b or not dB < 1:
            problems.append(f"{name}: B = {found}, delta_B = {dB:.3g}")
        info, errs = _rate_run(diging(p, seq), p, starts, T)
        infos[name], cases[name] = info, errs
        extra_m |= {f"{name}_B": found, f"{name}_delta_B": dB,
                    f"{name}_delta_B_per_step": dB ** (1 / b) if math.isfinite(dB) else dB}
        extra_d |= {f"{name}_B": f"{name}: smallest window whose unions are connected",
                    f"{name}_delta_B": f"{name}: max_k sigma_max(W_(k+B-1)...W_k - J)",
                    f"{name}_delta_B_per_step": f"{name}: delta_B^(1/B)"}
        if "alpha" in info:
            lam = diging_period_rate(p, Wp, info["alpha"])
            extra_m[f"{name}_lambda_exact"] = lam
            extra_d[f"{name}_lambda_exact"] = (
                f"{name}: exact asymptotic per-step rate rho(period product)^(1/P) of the "
                "DIGing error iteration at the step run (quadratics)")
    out = _rate_outcome(cases, infos, problems, extra_m, extra_d,
                        size=f"N={s.N}, d={s.D}, T={T}, seeds={len(starts)}")
    out.headline = ["g5_b2_lambda_emp", "g5_b4_lambda_emp", "g5_b2_final_error_max"]
    out.headline = [k for k in out.headline if k in out.measured]
    out.details = (out.details + " " if out.details else "") + (
        f"seeds = random starts (seeds {su['seeds'][0]}..{su['seeds'][-1]}) on "
        f"default_problem({instance_seed(ctx)}); alpha_emp from the seed-{su['seeds'][0]} "
        f"start over the grid 0.01*2^(j/2); T = {T} at every size. lambda_emp vs the exact "
        "rate and delta_B: " + ", ".join(
            f"{n}: {out.measured.get(n + '_lambda_emp', float('nan')):.5f} vs "
            f"{out.measured.get(n + '_lambda_exact', float('nan')):.5f}, delta_B^(1/B) "
            f"{out.measured[n + '_delta_B_per_step']:.4f}" for n in cases))
    return out


def push_b_horizon(seq, num_steps: int, reach: int | None = None) -> tuple:
    """``(B, B_reach)`` of a push sequence: B over the ``num_steps`` steps a run uses, and over
    its first ``reach`` steps (windows wrap for the fixed forms, not for random ones)."""
    if seq.form != "random":
        b = g.connectivity_window(seq)
        return b, b
    pats = seq.weights_host(num_steps) > 0
    return window_b(pats), (window_b(pats[:reach]) if reach else None)


def reach_step(errors, tol: float = EXACT_TOL) -> int | None:
    """The first step by which every seed's error is ``<= tol`` (None if some seed never is)."""
    hit = np.asarray(errors) <= tol
    if not hit.any(axis=1).all():
        return None
    return int(np.argmax(hit, axis=1).max())


@claim("optimization.push_diging_linear_rate_directed",
       statement="push-DIGing with a constant step converges R-linearly to x* on time-varying "
                 "directed graphs with column-stochastic weights, uniformly strongly connected "
                 "(G2, B = 2; G3, random drops, B computed <= 10)",
       source=f"{NOS17}, Theorem 18 (explicit step bound and rate not transcribed); {DOCS}",
       kind=Kind.RATE)
def _push_diging_rate(ctx: CheckContext) -> Outcome:
    su = rate_setup(ctx)
    p, starts, T = su["problem"], su["starts"], su["num_steps"]
    cases, infos, problems, extra_m, extra_d = {}, {}, [], {}, {}
    for name, seq in (("g2", s.g2("column")), ("g3", s.g3("column", keep=0.6))):
        if g.sequence_stochasticity_failure(seq, "column") is not None:
            problems.append(f"{name}: not column stochastic")
        info, errs = _rate_run(push_diging(p, seq), p, starts, T)
        infos[name], cases[name] = info, errs
        reach = reach_step(errs) if errs is not None else None
        b, b_reach = push_b_horizon(seq, T, None if reach is None else reach + 1)
        if b is None:
            problems.append(f"{name}: no B <= 10 over the {T} steps run")
        eta = g.min_positive_weight(seq.weights_host(min(T, 2000)))
        extra_m |= {f"{name}_B": -1 if b is None else b, f"{name}_eta": eta,
                    f"{name}_reach_step": -1 if reach is None else reach,
                    f"{name}_B_to_reach": -1 if b_reach is None else b_reach}
        extra_d |= {f"{name}_B": f"{name}: smallest B <= 10 with every window of B steps "
                                 f"strongly connected over the run's {T} steps (-1: none)",
                    f"{name}_eta": f"{name}: smallest positive weight (first 2000 steps)",
                    f"{name}_reach_step": f"{name}: first step by which every seed's error "
                                          f"is <= {EXACT_TOL:g}",
                    f"{name}_B_to_reach": f"{name}: B over the steps up to reach_step only "
                                          "(reported, not the gate)"}
    out = _rate_outcome(cases, infos, problems, extra_m, extra_d,
                        size=f"N={s.N}, d={s.D}, T={T}, seeds={len(starts)}")
    out.headline = [k for k in ("g2_lambda_emp", "g3_lambda_emp", "g3_B") if k in out.measured]
    out.details = (out.details + " " if out.details else "") + (
        f"seeds = random starts on default_problem({instance_seed(ctx)}); G3 keeps each edge "
        "with q = 0.6 (one draw shared by all seeds); its B is computed on the realised "
        f"{T} steps (a random sequence has longer bad stretches the longer it runs). The "
        "push-sum constants of the theorem are not computable usefully (N^-NB).")
    return out


# ---------------------------------------------------------------------------------------------
# C: push-pull on spanning trees sharing a root, and with disjoint roots (control)
# ---------------------------------------------------------------------------------------------

PUSH_PULL_ALPHA, PUSH_PULL_STEPS = 0.05, 4000


def push_pull_gate(pull_seq, push_seq) -> tuple[list[str], dict]:
    """Row/column stochasticity, the root sets of G_R and G_{C^T}, and u^T v."""
    R, C = s.weights(pull_seq, 1)[0], s.weights(push_seq, 1)[0]
    problems = []
    if g.sequence_stochasticity_failure(pull_seq, "row") is not None:
        problems.append("R is not row stochastic")
    if g.sequence_stochasticity_failure(push_seq, "column") is not None:
        problems.append("C is not column stochastic")
    roots_r, roots_c = root_sets(R, C)
    common = sorted(set(roots_r) & set(roots_c))
    uv = float(g.perron_vector(R) @ g.right_perron_vector(C))
    if not roots_r or not roots_c:
        problems.append("G_R or G_C^T has no spanning tree")
    if not common:
        problems.append(f"root sets {roots_r} (G_R) and {roots_c} (G_C^T) are disjoint")
    return problems, {"roots_pull": roots_r, "roots_push": roots_c, "u_dot_v": uv}


_GATE_DESC = {"roots_pull": "roots of spanning trees of G_R",
              "roots_push": "roots of spanning trees of G_C^T",
              "u_dot_v": "u^T v, u the left Perron vector of R, v the right one of C"}


@claim("optimization.push_pull_linear_rate_spanning_trees",
       statement="push-pull converges linearly to x* when G_R and G_C^T are spanning trees "
                 "sharing a root (G6: neither graph strongly connected)",
       source=f"{PSXN} (spanning trees of G_R and G_C^T with a common root; linear rate for "
              f"a small enough step, bound not transcribed); {DOCS}",
       kind=Kind.RATE)
def _push_pull_rate(ctx: CheckContext) -> Outcome:
    seeds = ctx.batch_seeds(0, ctx.seed_count(10, 40))
    p, starts = s.default_problem(instance_seed(ctx)), start_points(seeds)
    pull, push = s.g6()
    problems, gate = push_pull_gate(pull, push)
    if problems:
        return _not_met(problems, gate, threshold="slope CI below 0, final <= 1e-10",
                        descriptions=_GATE_DESC)
    e = run_errors(push_pull(p, pull, push), p.optimum, PUSH_PULL_ALPHA, starts,
                   PUSH_PULL_STEPS, graphs=(pull, push))
    out = check_linear_rate({"g6": e},
                            size=f"N={s.N}, d={s.D}, T={PUSH_PULL_STEPS}, seeds={len(starts)}")
    out.measured |= gate
    out.descriptions |= _GATE_DESC
    out.headline = ["g6_lambda_emp", "g6_slope_hi", "g6_final_error_max"]
    out.details = (f"alpha = {PUSH_PULL_ALPHA}; seeds = random starts (seeds {seeds[0]}.."
                   f"{seeds[-1]}) on default_problem({instance_seed(ctx)}); G6 = pull out-tree "
                   "and push in-tree on the path, both rooted at agent 0.")
    return out


@claim("optimization.push_pull_disjoint_roots_stalls",
       statement="negative control: the check 'push-pull on G6' (push tree re-rooted at agent "
                 "3, u^T v = 0) reaches max_i ||x_i - x*|| <= 1e-6 by T = 4000' must FAIL",
       source=f"{PSXN} (the root sets of G_R and G_C^T must intersect), violated on "
              f"purpose; {DOCS}",
       kind=Kind.RATE)
def _push_pull_disjoint(ctx: CheckContext) -> Outcome:
    seeds = ctx.batch_seeds(0, ctx.seed_count(10, 40))
    p, starts = s.default_problem(instance_seed(ctx)), start_points(seeds)
    pull, push = s.g6(root=3)
    problems, gate = push_pull_gate(pull, push)
    if gate["u_dot_v"] != 0.0 or not any("disjoint" in q for q in problems):
        return Outcome(Verdict.INCONCLUSIVE, gate, descriptions=_GATE_DESC,
                       threshold="the planted violation (u^T v = 0) is present",
                       reason=f"planted violation absent: u^T v = {gate['u_dot_v']:.3g}")
    e = run_errors(push_pull(p, pull, push), p.optimum, PUSH_PULL_ALPHA, starts,
                   PUSH_PULL_STEPS, graphs=(pull, push))
    wrapped = check_reaches({"g6_prime": e[:, -1]}, 1e-6,
                            size=f"N={s.N}, T={PUSH_PULL_STEPS}, seeds={len(starts)}")
    out = planted_control(wrapped, "G6': root sets disjoint, u^T v = 0")
    out.measured |= gate
    out.descriptions |= _GATE_DESC
    return out


# ---------------------------------------------------------------------------------------------
# C: on a directed unbalanced graph, push methods reach x*, row-stochastic DGD reaches x_pi
# ---------------------------------------------------------------------------------------------

LIMIT_ALPHAS = 0.05 * 5.0 ** -np.arange(4)
DIRECTED_STEPS, DIRECTED_ALPHA = 3000, 0.05


def weighted_limit_setup(ctx: CheckContext) -> dict:
    """Closed-form DGD fixed points with G1's row-stochastic R, per instance and alpha."""
    R = s.weights(s.g1("row"), 1)[0]
    pi = g.perron_vector(R)
    seeds = ctx.batch_seeds(0, ctx.seed_count(10, 40))
    to_xpi = np.empty((len(seeds), LIMIT_ALPHAS.size))
    to_star = np.empty_like(to_xpi)
    gap = np.empty(len(seeds))
    for i, seed in enumerate(seeds):          # host loop: small linear solves
        p = s.default_problem(int(seed) % 2**31)
        xpi = weighted_optimum(p, pi)
        gap[i] = np.linalg.norm(xpi - p.optimum)
        for j, a in enumerate(LIMIT_ALPHAS):
            avg = pi @ dgd_fixed_point(p, R, float(a))
            to_xpi[i, j] = np.linalg.norm(avg - xpi)
            to_star[i, j] = np.linalg.norm(avg - p.optimum)
    return {"to_xpi": to_xpi, "to_star": to_star, "gap": gap, "pi": pi}


@claim("optimization.row_stochastic_dgd_weighted_limit",
       statement="on G1 (directed, unbalanced) push-pull and push-DIGing reach x* (<= 1e-10 at "
                 "T = 3000), while DGD with the row-stochastic R stops near x_pi = argmin "
                 "sum_i pi_i f_i: ||pi^T X_alpha - x_pi|| = Theta(alpha) and ||pi^T X_alpha - "
                 "x*|| -> ||x_pi - x*||",
       source=f"{PSXN}; {NOS17}, Theorem 18; DGD's pi-weighted fixed point derived in {DOCS}",
       kind=Kind.RATE)
def _weighted_limit(ctx: CheckContext) -> Outcome:
    R, C = s.g1("row"), s.g1("column")
    problems = []
    if g.sequence_stochasticity_failure(R, "row") is not None:
        problems.append("R is not row stochastic")
    if g.sequence_stochasticity_failure(C, "column") is not None:
        problems.append("C is not column stochastic")
    if g.connectivity_window(C) != 1:
        problems.append("G1 is not strongly connected")
    if problems:
        return _not_met(problems, {}, threshold="see statement")
    su = weighted_limit_setup(ctx)
    limit = check_weighted_limit(LIMIT_ALPHAS, su["to_xpi"], su["to_star"], su["gap"])
    seeds = ctx.batch_seeds(0, ctx.seed_count(10, 40))
    p, starts = s.default_problem(instance_seed(ctx)), start_points(seeds)
    e_pp = run_errors(push_pull(p, R, C), p.optimum, DIRECTED_ALPHA, starts, DIRECTED_STEPS,
                      graphs=(R, C))
    e_pd = run_errors(push_diging(p, C), p.optimum, DIRECTED_ALPHA, starts, DIRECTED_STEPS)
    reach = check_reaches({"push_pull_g1": e_pp[:, -1], "push_diging_g1": e_pd[:, -1]},
                          EXACT_TOL)
    measured = {**reach.measured, **limit.measured,
                "pi_min": float(su["pi"].min()), "pi_max": float(su["pi"].max())}
    descriptions = {**reach.descriptions, **limit.descriptions,
                    "pi_min": "smallest entry of G1's left Perron vector",
                    "pi_max": "largest entry of G1's left Perron vector"}
    return Outcome(
        verdict=combine_verdicts([reach.verdict, limit.verdict]), measured=measured,
        descriptions=descriptions, reason=f"{reach.reason}; {limit.reason}",
        threshold=f"{reach.threshold}; {limit.threshold}",
        headline=["push_pull_g1_final_error_max", "slope_min", "rel_gap_max"],
        size=f"runs: T={DIRECTED_STEPS}, seeds={len(starts)}; {limit.size}",
        details=(f"alpha = {DIRECTED_ALPHA} for push-pull and push-DIGing (seeds = random "
                 f"starts on default_problem({instance_seed(ctx)})); DGD fixed points "
                 "(closed form) for alpha = 0.05 * 5^-j, j=0..3 on instances "
                 "default_problem(s)."))


@claim("optimization.row_stochastic_dgd_not_optimal",
       statement="negative control: the check 'DGD with row-stochastic weights on a directed "
                 "graph (G1) solves min sum_i f_i to 1e-3' must FAIL",
       source=f"DGD's pi-weighted limit (derived in {DOCS}); planted control of "
              "optimization.row_stochastic_dgd_weighted_limit",
       kind=Kind.RATE)
def _dgd_not_optimal(ctx: CheckContext) -> Outcome:
    seeds = ctx.batch_seeds(0, ctx.seed_count(10, 40))
    p, starts = s.default_problem(instance_seed(ctx)), start_points(seeds)
    alpha, T = 0.01, 4000
    R = s.weights(s.g1("row"), 1)[0]
    xpi = weighted_optimum(p, g.perron_vector(R))
    gap = float(np.linalg.norm(xpi - p.optimum))
    if gap < 1e-2:
        return Outcome(Verdict.INCONCLUSIVE, {"xpi_gap": gap},
                       threshold="the planted violation is present: ||x_pi - x*|| >= 1e-2",
                       reason=f"planted violation too weak: ||x_pi - x*|| = {gap:.3g} < 1e-2")
    e = run_errors(dgd(p, g.static(R)), p.optimum, alpha, starts, T, graphs=g.static(R))
    wrapped = check_reaches({"dgd_row_g1": e[:, -1]}, 1e-3,
                            size=f"N={s.N}, alpha={alpha}, T={T}, seeds={len(starts)}")
    out = planted_control(wrapped, "row-stochastic weights on an unbalanced digraph")
    small = float(np.linalg.norm(dgd_fixed_point(p, R, float(LIMIT_ALPHAS[-1])) - p.optimum,
                                 axis=1).min())
    out.measured |= {"xpi_gap": gap,
                     "closest_agent_at_smallest_alpha": small}
    out.descriptions |= {"xpi_gap": "||x_pi - x*||, the distance DGD keeps as alpha -> 0",
                         "closest_agent_at_smallest_alpha": "min_i ||x_alpha,i - x*|| of the "
                         f"closed-form fixed point at alpha = {LIMIT_ALPHAS[-1]:g}"}
    return out
