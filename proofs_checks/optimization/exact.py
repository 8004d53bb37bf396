"""Claims of decentralized optimization: exact identities, closed-form limits, equivalences and
planted instabilities, judged in float64.

* ``tracking_invariant``: ``sum_i y_i(k) = sum_i g_i(x_i(k))`` for DIGing, push-DIGing,
  push-pull and DSGT (with noise: the sampled gradients the state keeps);
* ``push_sum_mass``: push-sum keeps ``sum_i y_i = N`` and moves ``sum_i x_i`` by exactly the
  summed step (subgradient-push; push-DIGing's ``v`` and ``u``);
* ``push_pull_perron_identity``: ``u^T x(k+1) = u^T (x(k) - alpha y(k))`` for the left Perron
  vector u of a static pull matrix;
* ``dgd_fixed_point_limit``: DGD with a constant step stops at the closed-form fixed point;
* ``extra_nonsymmetric_diverges`` (planted): EXTRA on a directed row-stochastic W does not
  converge, as the roots of its alpha = 0 recursion predict;
* ``step_size_thresholds``: on ``A_i = L I`` the exact instability thresholds of DGD and EXTRA,
  with planted runs above them and converging runs at half the papers' bounds;
* ``tracking_equivalence``: push-DIGing(W) = push-pull(W, W) = DSGT(W, sigma = 0) iterate for
  iterate.

Each claim wraps a *judge* (``check_*``) whose inputs are explicit (weights, recorded paths,
steps), so the tests plant violations (a corrupted weight, a perturbed state) and see FAIL;
an assumption of the identity that fails on the fixture makes the claim INCONCLUSIVE.

Runs share compiled programs: each method is built once on an explicit ``[T, N, N]`` copy of a
fixture's weights (:func:`fixture`, the same numbers the fixture's own sequence gives) and
pointed at the other fixtures through ``params.graphs``; the random starts are a sweep over
``params.x0``. Derivations and reference values: ``docs/optimization.md``.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

import decentral.graphs as g
from decentral.hypotheses import HypothesisWarning
from decentral.optimization import (
    dgd,
    dgd_fixed_point,
    diging,
    dsgt,
    extra,
    optimization_params,
    push_diging,
    push_pull,
    quadratic,
    subgradient_push,
)
from decentral.runner import DivergenceWarning, run
from decentral.schedules import polynomial, step_size
from decentral.verify import CheckContext, Kind, Outcome, Verdict, combine_verdicts
from proofs_checks.optimization.setups import (
    D,
    L,
    N,
    default_problem,
    g1,
    g2,
    g3,
    g4,
    g5,
    g6,
    weights,
)
from proofs_checks.registry import claim

__all__ = ["fixture", "gradients", "stochasticity_failures", "check_tracking",
           "check_push_sum_mass", "check_perron_identity", "check_fixed_point_limit",
           "check_converges", "alpha0_root_modulus", "extra_companion", "check_extra_nonsymmetric",
           "dgd_radius", "extra_radius", "check_step_thresholds", "check_equivalence"]

DOCS = "docs/optimization.md"
NOS17 = ("Nedić, Olshevsky & Shi, \"Achieving geometric convergence for distributed "
         "optimization over time-varying graphs\", SIAM J. Optim. 27(4), 2017")
PSXN = "Pu, Shi, Xu & Nedić, \"Push-pull gradient methods\", IEEE TAC 66(1), 2021"
PN21 = ("Pu & Nedić, \"Distributed stochastic gradient tracking methods\", Math. Program. 187, "
        "2021")
NO15 = ("Nedić & Olshevsky, \"Distributed optimization over time-varying directed graphs\", "
        "IEEE TAC 60(3), 2015")
YLY16 = ("Yuan, Ling & Yin, \"On the convergence of decentralized gradient descent\", SIAM J. "
         "Optim. 26(3), 2016")
EXTRA15 = ("Shi, Ling, Wu & Yin, \"EXTRA: an exact first-order algorithm for decentralized "
           "consensus optimization\", SIAM J. Optim. 25(2), 2015")

#: Steps of the identity runs, and of the equivalence comparison (a prefix of the same runs).
T_PATH, T_EQUIVALENCE = 500, 300
#: Random starts (a sweep over params.x0) and noise seeds (DSGT with sigma = 1).
STARTS, NOISE_SEEDS = 5, 5
#: Stochasticity, symmetry and Perron-vector tolerance of the assumption gates.
GATE_TOL = 1e-14
#: Constant steps: the gradient-tracking runs, push-DIGing on directed graphs.
TRACKING_STEP, PUSH_STEP = 0.05, 0.03
#: Subgradient-push's schedule alpha_t = 1 / sqrt(t + 1) (NO15's 1/sqrt(t), t from 1).
PUSH_SCHEDULE = polynomial(1.0, 0.5, t0=1.0)
#: DGD fixed points: steps, the stopping rule ||X(t+1) - X(t)|| < STOP, the cap, chunk length.
FIXED_POINT_STEPS, STOP, CAP, CHUNK = (0.05, 0.01), 1e-15, 200_000, 5000
#: Horizon of the convergence checks wrapped by the planted controls, and their target.
T_CONVERGE, CONVERGE_TOL = 4000, 1e-10
#: EXTRA on G1's row-stochastic weights: the steps tried.
EXTRA_DIRECTED_STEPS = (0.05, 0.005, 0.001)
#: XLA options the claims' programs are compiled with on CPU: the older loop emitters without
#: backend optimisation compile these small programs several times faster; they choose how
#: code is emitted, not what is computed (results may move in the last bits only).
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}

_KIND_AXES = {"row": ("row",), "column": ("column",), "doubly": ("row", "column")}


# ---------------------------------------------------------------------------------------------
# shared setup
# ---------------------------------------------------------------------------------------------

@functools.cache
def fixture(name: str, rule: str, T: int) -> np.ndarray:
    """``[T, N, N]`` float64 weights (read-only) of fixture ``name`` (G1-G6) under ``rule``
    (``"row"`` / ``"column"``; G4, G5 are Metropolis whatever the rule; G6 gives its pull
    tree for ``"row"`` and its push tree for ``"column"``)."""
    seqs = {"G1": lambda: g1(rule), "G2": lambda: g2(rule), "G3": lambda: g3(rule),
            "G4": g4, "G5": g5, "G6": lambda: g6()[0 if rule == "row" else 1]}
    W = weights(seqs[name](), T)
    W.setflags(write=False)
    return W


@functools.cache
def _problem(seed: int):
    return default_problem(seed)


@functools.cache
def _method(name: str, seed: int, T: int):
    """The method ``name`` on the default problem, built once on explicit weights of length T
    (other fixtures of the same length go through ``params.graphs``; DGD on G4's static W,
    other static weights the same way), compiled with :data:`FAST_COMPILE`."""
    problem = _problem(seed)

    def ex(fx, rule):
        return g.explicit(fixture(fx, rule, T))

    builders = {
        "diging": lambda: diging(problem, ex("G4", "row")),
        "push_diging": lambda: push_diging(problem, ex("G1", "column")),
        "push_pull": lambda: push_pull(problem, ex("G1", "row"), ex("G1", "column")),
        "dsgt": lambda: dsgt(problem, ex("G4", "row")),
        "subgradient_push": lambda: subgradient_push(problem, ex("G1", "column")),
        "dgd": lambda: dgd(problem, g.static(fixture("G4", "row", 1)[0])),
    }
    return builders[name]().replace(cpu_compiler_options=FAST_COMPILE)


def _starts(ctx: CheckContext, claim_id: str, dim: int = D) -> np.ndarray:
    """``[STARTS, N, dim]`` random starting points of a claim."""
    return 2.0 * ctx.rng(claim_id).standard_normal((STARTS, N, dim))


def _paths(alg, step, starts, graphs, num_steps, *, seeds=(0,), noise=0.0) -> dict:
    """Every state of ``alg`` from each start (records ``[STARTS, seeds, num_steps + 1, ...]``,
    float64), on ``graphs`` (``params.graphs``; None: the algorithm's own)."""
    params = optimization_params(step, gradient_noise=noise, graphs=graphs)
    params = params._replace(x0=np.asarray(starts, np.float64))
    res = run(alg, params, seeds=list(seeds), num_steps=num_steps, record_initial=True,
              sweep="x0", progress=False)
    return {k: np.asarray(v, np.float64) for k, v in res.records._asdict().items()}


def gradients(problem, X) -> np.ndarray:
    """``grad f_i(x_i)`` of a quadratic problem in float64 for ``X [..., N, d]``."""
    A = np.asarray(problem.hessians, np.float64)
    b = np.asarray(problem.linear, np.float64)
    return np.einsum("nde,...ne->...nd", A, X) - b


def _max_abs(a) -> float:
    """max |a|, inf when a holds a non-finite entry."""
    a = np.asarray(a, np.float64)
    if a.size == 0:
        return 0.0
    return float(np.abs(a).max()) if np.all(np.isfinite(a)) else float("inf")


def stochasticity_failures(Ws, kind: str, label: str, *, symmetric: bool = False,
                           static: bool = False, tol: float = GATE_TOL) -> list[str]:
    """The assumptions ``Ws`` (``[T, N, N]`` or ``[N, N]``) breaks, as sentences: ``kind``
    (``"row"``, ``"column"``, ``"doubly"``) stochastic within ``tol`` and non-negative, and
    where asked symmetric (within ``tol``) and static (every matrix equal to the first)."""
    Ws = np.asarray(Ws, np.float64)
    Ws = Ws[None] if Ws.ndim == 2 else Ws
    out = []
    if not np.all(np.isfinite(Ws)):
        return [f"{label}: non-finite weights"]
    for axis in _KIND_AXES[kind]:
        err = float(np.abs(Ws.sum(axis=2 if axis == "row" else 1) - 1.0).max())
        if err > tol:
            out.append(f"{label}: {axis} sums off 1 by {err:.2g} > {tol:g}")
    if Ws.min() < 0:
        out.append(f"{label}: negative weight {float(Ws.min()):.2g}")
    if symmetric:
        asym = float(np.abs(Ws - np.swapaxes(Ws, 1, 2)).max())
        if asym > tol:
            out.append(f"{label}: not symmetric (max |W - W^T| = {asym:.2g})")
    if static and np.abs(Ws - Ws[:1]).max() > 0:
        out.append(f"{label}: not static")
    return out


def _relative_rows(rows: dict) -> tuple[str, float]:
    """``rows``: name -> (residual, scale, gate); the name and value of the largest
    residual / scale."""
    rel = {k: r / s for k, (r, s, _) in rows.items()}
    worst = max(rel, key=lambda k: rel[k])
    return worst, rel[worst]


def _identity_outcome(rows: dict, tol: float, *, what: str, measured_extra: dict,
                      descriptions_extra: dict, threshold: str, size: str, details: str = "",
                      noun: str = "runs") -> Outcome:
    """The Outcome of an identity judged per run: ``rows`` name -> (residual, scale, gate),
    ``gate`` the run's failed assumptions. A run with a failed assumption is INCONCLUSIVE
    whatever its residual, one with a residual above ``tol * scale`` FAIL; the worst wins."""
    worst, rel = _relative_rows(rows)
    failed = list(dict.fromkeys(m for _, _, gate in rows.values() for m in gate))
    broken = [k for k, (r, s, gate) in rows.items() if not gate and not r <= tol * s]
    verdict = combine_verdicts([Verdict.INCONCLUSIVE if gate else
                                Verdict.PASS if r <= tol * s else Verdict.FAIL
                                for r, s, gate in rows.values()])
    residual, scale, _ = rows[worst]
    if broken:
        bad = max(broken, key=lambda k: rows[k][0] / rows[k][1])
        reason = (f"{what} broken on {len(broken)} of {len(rows)} {noun}: worst {bad} residual "
                  f"{rows[bad][0]:.3g} > {tol:g} x scale {rows[bad][1]:.3g}")
    elif failed:
        reason = f"assumption not met: {failed[0]}" + (f" (+{len(failed) - 1} more)"
                                                       if len(failed) > 1 else "")
    else:
        reason = (f"{what} holds on all {len(rows)} {noun}: worst {worst} residual {residual:.3g} "
                  f"<= {tol:g} x scale {scale:.3g}")
    measured = {"max_relative_residual": rel, "worst_residual": residual, "worst_scale": scale}
    measured |= {f"relative_residual_{k}": r / s for k, (r, s, _) in rows.items()}
    measured |= measured_extra
    descriptions = {
        "max_relative_residual": "max over runs of (max over paths and steps of |lhs - rhs|) "
                                 "/ max(1, scale) (dimensionless)",
        "worst_residual": f"the largest absolute residual, in the run {worst} (units of the "
                          "compared quantities)",
        "worst_scale": "max(1, max |compared quantity|) of that run"}
    descriptions |= {f"relative_residual_{k}": f"run {k}: residual / scale" for k in rows}
    descriptions |= descriptions_extra
    return Outcome(verdict=verdict, measured=measured, threshold=threshold, reason=reason,
                   headline=["max_relative_residual", "worst_residual", "worst_scale"],
                   descriptions=descriptions, size=size, details=details,
                   hypotheses_failed=list(failed))


# ---------------------------------------------------------------------------------------------
# tracking invariant
# ---------------------------------------------------------------------------------------------

def check_tracking(runs, *, tol: float = 1e-11) -> Outcome:
    """Judge ``sum_i y_i(k) = sum_i g_i(k)`` at every recorded k.

    Args:
        runs: dicts with ``name``, ``mixing`` (list of ``(label, weights [T, N, N], kind)``:
            the weights the method assumes kind-stochastic; the identity needs the tracker's
            weights column-stochastic), ``y`` and ``gradients`` (``[..., K + 1, N, d]``: the
            gradients the invariant compares with: exact ``grad f_i(x_i(k))``, or the samples
            the method used).
        tol: residual <= tol * max(1, max |compared sums|) per run.
    """
    rows = {}
    for r in runs:
        gate = [m for label, W, kind in r["mixing"]
                for m in stochasticity_failures(W, kind, f"{r['name']} {label}")]
        lhs, rhs = np.sum(r["y"], axis=-2), np.sum(r["gradients"], axis=-2)
        rows[r["name"]] = (_max_abs(lhs - rhs), max(1.0, _max_abs(lhs), _max_abs(rhs)), gate)
    K = np.shape(runs[0]["y"])[-3] - 1
    paths = int(np.prod(np.shape(runs[0]["y"])[:-3]))
    return _identity_outcome(
        rows, tol, what="sum_i y_i = sum_i g_i", measured_extra={},
        descriptions_extra={},
        threshold=f"per run max_k |sum_i y_i(k) - sum_i g_i(k)| <= {tol:g} x max(1, max |sums|); "
                  f"weights kind-stochastic within {GATE_TOL:g} (else INCONCLUSIVE)",
        size=f"N={np.shape(runs[0]['y'])[-2]}, T={K}, {len(runs)} runs x {paths} paths")


@claim("optimization.tracking_invariant",
       statement="gradient tracking keeps sum_i y_i(k) = sum_i g_i(x_i(k)) at every k: "
                 "DIGing (G4, G5), push-DIGing (G1, G2, G3), push-pull (G1), and DSGT with "
                 "sigma = 1 noise, where g are the sampled gradients",
       source=f"{NOS17}, Algorithms 1 and 2; {PSXN}; {PN21}, eq. (4); the invariant derived "
              f"in {DOCS}",
       kind=Kind.EXACT)
def _tracking_invariant(ctx: CheckContext) -> Outcome:
    seed, T = ctx.base_seed, T_PATH
    problem = _problem(seed)
    starts = _starts(ctx, "optimization.tracking_invariant")
    runs = []
    for fx in ("G4", "G5"):
        W = fixture(fx, "row", T)
        rec = _paths(_method("diging", seed, T), TRACKING_STEP, starts, g.explicit(W), T)
        runs.append(dict(name=f"diging_{fx}", mixing=[("W", W, "doubly")], y=rec["y"],
                         gradients=gradients(problem, rec["x"])))
    for fx in ("G1", "G2", "G3"):
        C = fixture(fx, "column", T)
        rec = _paths(_method("push_diging", seed, T), PUSH_STEP, starts, g.explicit(C), T)
        runs.append(dict(name=f"push_diging_{fx}", mixing=[("C", C, "column")], y=rec["y"],
                         gradients=gradients(problem, rec["x"])))
    R, C = fixture("G1", "row", T), fixture("G1", "column", T)
    rec = _paths(_method("push_pull", seed, T), TRACKING_STEP, starts,
                 (g.explicit(R), g.explicit(C)), T)
    runs.append(dict(name="push_pull_G1", mixing=[("R", R, "row"), ("C", C, "column")],
                     y=rec["y"], gradients=gradients(problem, rec["x"])))
    W = fixture("G4", "row", T)
    noise_seeds = range(ctx.base_seed, ctx.base_seed + NOISE_SEEDS)
    rec = _paths(_method("dsgt", seed, T), TRACKING_STEP, starts, g.explicit(W), T,
                 seeds=noise_seeds, noise=1.0)
    runs.append(dict(name="dsgt_G4_sigma1", mixing=[("W", W, "doubly")], y=rec["y"],
                     gradients=rec["g"]))
    out = check_tracking(runs)
    noise = rec["g"] - gradients(problem, rec["x"])
    out.measured["dsgt_noise_std"] = float(np.std(noise))
    out.descriptions["dsgt_noise_std"] = ("std of the DSGT samples minus the exact gradients "
                                          "(1 when the sigma = 1 noise is really on)")
    out.size += f"; {STARTS} starts, DSGT {NOISE_SEEDS} noise seeds"
    out.details = (f"Steps: {TRACKING_STEP} (DIGing, push-pull, DSGT), {PUSH_STEP} "
                   "(push-DIGing). Exact gradients are recomputed in float64 from the recorded "
                   "x; DSGT compares with the samples its state keeps (g).")
    return out


# ---------------------------------------------------------------------------------------------
# push-sum mass
# ---------------------------------------------------------------------------------------------

def check_push_sum_mass(runs, *, tol: float = 1e-11) -> Outcome:
    """Judge the push-sum identities ``sum_i mass_i(t) = N`` and
    ``sum_i num_i(t+1) = sum_i num_i(t) - alpha_t sum_i drive_i(t)``.

    Args:
        runs: dicts with ``name``, ``weights`` (``[T, N, N]``, must be column-stochastic),
            ``mass`` (``[..., T + 1, N]``: subgradient-push's y, push-DIGing's v),
            ``numerators`` (``[..., T + 1, N, d]``: x, u), ``drive`` (``[..., T, N, d]``:
            subgradient-push's ``grad f_i(z_i(t+1))``, push-DIGing's ``y(t)``) and ``alphas``
            (``[T]``).
        tol: each residual <= tol * max(1, scale), the scale the largest compared quantity.
    """
    rows, min_mass = {}, np.inf
    for r in runs:
        gate = stochasticity_failures(r["weights"], "column", r["name"])
        mass, num = np.asarray(r["mass"]), np.asarray(r["numerators"])
        n = mass.shape[-1]
        rows[f"{r['name']}_mass"] = (_max_abs(mass.sum(-1) - n), float(max(1, n)), gate)
        total = num.sum(-2)                                    # [..., T+1, d]
        step = np.asarray(r["alphas"])[:, None] * np.asarray(r["drive"]).sum(-2)
        resid = total[..., 1:, :] - (total[..., :-1, :] - step)
        rows[f"{r['name']}_conservation"] = (_max_abs(resid),
                                             max(1.0, _max_abs(total), _max_abs(step)), gate)
        min_mass = min(min_mass, float(np.min(mass)))
    K = np.shape(runs[0]["mass"])[-2] - 1
    return _identity_outcome(
        rows, tol, what="push-sum mass and conservation", noun="checks",
        measured_extra={"min_weight": min_mass},
        descriptions_extra={"min_weight": "smallest push-sum weight (y or v) seen"},
        threshold=f"max_t |sum_i y_i(t) - N| <= {tol:g} N and max_t |sum_i x_i(t+1) - sum_i "
                  f"x_i(t) + alpha_t sum_i drive_i(t)| <= {tol:g} x max(1, scale), per run; "
                  f"weights column-stochastic within {GATE_TOL:g} (else INCONCLUSIVE)",
        size=f"N={np.shape(runs[0]['mass'])[-1]}, T={K}, {len(runs)} runs")


@claim("optimization.push_sum_mass",
       statement="push-sum methods keep sum_i y_i(t) = N and sum_i x_i(t+1) = sum_i x_i(t) - "
                 "alpha_t sum_i g_i(z_i(t+1)) (subgradient-push), and sum_i v_i = N, sum_i "
                 "u_i(k+1) = sum_i u_i(k) - alpha sum_i y_i(k) (push-DIGing), on G1, G2, G3",
       source=f"{NO15}, the subgradient-push iteration; {NOS17}, Algorithm 2; derived in {DOCS}",
       kind=Kind.EXACT)
def _push_sum_mass(ctx: CheckContext) -> Outcome:
    seed, T = ctx.base_seed, T_PATH
    problem = _problem(seed)
    starts = _starts(ctx, "optimization.push_sum_mass")
    sched = np.asarray(step_size(PUSH_SCHEDULE, np.arange(T)), np.float64)
    runs = []
    for fx in ("G1", "G2", "G3"):
        C = fixture(fx, "column", T)
        rec = _paths(_method("subgradient_push", seed, T), PUSH_SCHEDULE, starts,
                     g.explicit(C), T)
        runs.append(dict(name=f"subgradient_push_{fx}", weights=C, mass=rec["y"],
                         numerators=rec["x"], drive=gradients(problem, rec["z"][..., 1:, :, :]),
                         alphas=sched))
        rec = _paths(_method("push_diging", seed, T), PUSH_STEP, starts, g.explicit(C), T)
        runs.append(dict(name=f"push_diging_{fx}", weights=C, mass=rec["v"],
                         numerators=rec["u"], drive=rec["y"][..., :-1, :, :],
                         alphas=np.full(T, PUSH_STEP)))
    out = check_push_sum_mass(runs)
    out.size += f", {STARTS} starts"
    out.details = ("Subgradient-push: alpha_t = 1/sqrt(t+1), gradients at z(t+1) recomputed in "
                   f"float64 from the records. Push-DIGing: alpha = {PUSH_STEP}. G3 keeps each "
                   "edge with probability 0.7 (one seeded draw shared by all runs).")
    return out


# ---------------------------------------------------------------------------------------------
# push-pull Perron identity
# ---------------------------------------------------------------------------------------------

def check_perron_identity(runs, *, tol: float = 1e-12) -> Outcome:
    """Judge ``u^T x(k+1) = u^T (x(k) - alpha y(k))`` with u the left Perron vector of the
    static pull matrix.

    Args:
        runs: dicts with ``name``, ``pull`` (``[T, N, N]``: static, row-stochastic; u is
            computed from it), ``push`` (``[T, N, N]``, column-stochastic), ``x``, ``y``
            (``[..., K + 1, N, d]``) and ``alpha``.
        tol: residual <= tol * max(1, max |u^T x|, max |u^T (x - alpha y)|) per run.
    """
    rows, us = {}, {}
    for r in runs:
        R = np.asarray(r["pull"], np.float64)
        gate = stochasticity_failures(R, "row", f"{r['name']} R", static=True)
        gate += stochasticity_failures(r["push"], "column", f"{r['name']} C")
        u = g.perron_vector(R[0])
        perron = float(np.abs(u @ R[0] - u).max())
        if perron > GATE_TOL or u.min() < -GATE_TOL:
            gate.append(f"{r['name']}: no left Perron vector (|u^T R - u^T| = {perron:.2g})")
        us[r["name"]] = u
        lhs = np.einsum("i,...kid->...kd", u, r["x"][..., 1:, :, :])
        rhs = np.einsum("i,...kid->...kd", u, r["x"][..., :-1, :, :]
                        - r["alpha"] * r["y"][..., :-1, :, :])
        rows[r["name"]] = (_max_abs(lhs - rhs), max(1.0, _max_abs(lhs), _max_abs(rhs)), gate)
    K = np.shape(runs[0]["x"])[-3] - 1
    return _identity_outcome(
        rows, tol, what="u^T x(k+1) = u^T (x(k) - alpha y(k))",
        measured_extra={f"u_{k}": v.tolist() for k, v in us.items()},
        descriptions_extra={f"u_{k}": "left Perron vector of R (u^T R = u^T, sum 1)"
                            for k in us},
        threshold=f"per run max_k |u^T x(k+1) - u^T (x(k) - alpha y(k))| <= {tol:g} x "
                  f"max(1, scale); R static row-stochastic within {GATE_TOL:g} with a left "
                  "Perron vector (else INCONCLUSIVE)",
        size=f"N={np.shape(runs[0]['x'])[-2]}, T={K}, {len(runs)} runs")


@claim("optimization.push_pull_perron_identity",
       statement="push-pull with a static row-stochastic R keeps u^T x(k+1) = u^T (x(k) - "
                 "alpha y(k)), u the left Perron vector of R (G1; G6's spanning trees)",
       source=f"{PSXN}, the push-pull update; derived in {DOCS}", kind=Kind.EXACT)
def _push_pull_perron(ctx: CheckContext) -> Outcome:
    seed, T = ctx.base_seed, T_PATH
    starts = _starts(ctx, "optimization.push_pull_perron_identity")
    runs = []
    for fx in ("G1", "G6"):
        R, C = fixture(fx, "row", T), fixture(fx, "column", T)
        rec = _paths(_method("push_pull", seed, T), TRACKING_STEP, starts,
                     (g.explicit(R), g.explicit(C)), T)
        runs.append(dict(name=f"push_pull_{fx}", pull=R, push=C, x=rec["x"], y=rec["y"],
                         alpha=TRACKING_STEP))
    out = check_perron_identity(runs)
    out.size += f", {STARTS} starts, alpha={TRACKING_STEP}"
    return out


# ---------------------------------------------------------------------------------------------
# DGD's constant-step limit
# ---------------------------------------------------------------------------------------------

def _dgd_iteration_matrix(problem, W, alpha) -> np.ndarray:
    """``W kron I_d - alpha blkdiag(A_i)``: the linear part of DGD's map on row-major vec X."""
    n, d = problem.num_agents, problem.dim
    M = np.kron(np.asarray(W, np.float64), np.eye(d))
    A = np.asarray(problem.hessians, np.float64)
    for i in range(n):
        M[i * d:(i + 1) * d, i * d:(i + 1) * d] -= alpha * A[i]
    return M


def check_fixed_point_limit(cases, *, tol: float = 1e-10, stop: float = STOP) -> Outcome:
    """Judge DGD's constant-step limit against :func:`~decentral.optimization.dgd_fixed_point`.

    Args:
        cases: dicts with ``name``, ``problem`` (quadratic), ``W`` (``[N, N]`` static, the
            kind it must be: ``kind``), ``alpha``, ``x_final`` (``[..., N, d]``), ``change``
            (``[...]``: ``||X(T) - X(T-1)||_F``) and ``steps`` (T).
        tol: max_i ||x_i(T) - x_{alpha,i}|| <= tol, and the closed form's fixed-point residual
            ``||X_a - (W X_a - alpha grad F(X_a))||_max <= tol``.
        stop: the stopping rule (reported: a run that hit the cap is judged all the same).

    Assumption gate: W kind-stochastic within 1e-14 and the spectral radius of DGD's linear
    part ``W kron I - alpha blkdiag(A_i)`` below 1 (the limit exists and is unique).
    """
    rows, failed, radii, capped, changes, steps = {}, [], {}, 0, [], []
    for c in cases:
        W = np.asarray(c["W"], np.float64)
        gate = stochasticity_failures(W, c["kind"], c["name"])
        rho = float(np.abs(np.linalg.eigvals(_dgd_iteration_matrix(c["problem"], W,
                                                                   c["alpha"]))).max())
        radii[c["name"]] = rho
        if not rho < 1:
            gate.append(f"{c['name']}: DGD's linear part has spectral radius {rho:.6g} >= 1")
        try:
            Xa = dgd_fixed_point(c["problem"], W, c["alpha"])
        except ValueError as err:
            gate.append(f"{c['name']}: {err}")
            Xa = np.full(np.shape(c["x_final"])[-2:], np.nan)
        residual = _max_abs(Xa - (W @ Xa - c["alpha"] * gradients(c["problem"], Xa)))
        dist = _max_abs(np.linalg.norm(np.asarray(c["x_final"]) - Xa, axis=-1))
        rows[c["name"]] = (dist, residual, gate)
        failed += gate
        change = np.asarray(c["change"], np.float64)
        capped += int(np.sum(~(change < stop)))
        changes.append(_max_abs(change))
        steps.append(int(c["steps"]))
    judged = {k: v for k, v in rows.items() if not v[2]}
    verdict = combine_verdicts([Verdict.INCONCLUSIVE if gate else
                                Verdict.PASS if d <= tol and r <= tol else Verdict.FAIL
                                for d, r, gate in rows.values()])
    pool = judged or rows
    worst = max(pool, key=lambda k: pool[k][0])
    distance = pool[worst][0]
    residual = max(v[1] for v in pool.values())
    bad = [k for k, (d, _, _) in judged.items() if not d <= tol]
    if bad:
        reason = f"DGD stopped {distance:.3g} > {tol:g} from the closed form ({worst})"
    elif judged and not residual <= tol:
        reason = f"the closed form misses its fixed-point equation by {residual:.3g} > {tol:g}"
    elif failed:
        reason = f"assumption not met: {failed[0]}"
    else:
        reason = (f"max_i ||x_i(T) - x_alpha,i|| = {distance:.3g} <= {tol:g} over "
                  f"{len(rows)} cases (worst {worst}); closed-form residual {residual:.2g}")
    measured = {"max_distance": distance, "closed_form_residual": residual,
                "max_final_change": max(changes), "runs_not_stopped": capped,
                "max_steps": max(steps)}
    measured |= {f"distance_{k}": d for k, (d, _, _) in rows.items()}
    measured |= {f"spectral_radius_{k}": v for k, v in radii.items()}
    descriptions = {
        "max_distance": "max over cases, starts and agents of ||x_i(T) - x_alpha,i|| (units of x)",
        "closed_form_residual": "max |X_a - (W X_a - alpha grad F(X_a))| of the closed forms",
        "max_final_change": "largest ||X(T) - X(T-1)||_F at the stop",
        "runs_not_stopped": f"runs that reached the cap {CAP} without ||X(t+1) - X(t)|| < {stop:g}",
        "max_steps": "most steps any case ran"}
    descriptions |= {f"distance_{k}": f"case {k}: max distance to the closed form" for k in rows}
    descriptions |= {f"spectral_radius_{k}": "spectral radius of W kron I - alpha blkdiag(A_i)"
                     for k in radii}
    return Outcome(verdict=verdict, measured=measured, reason=reason,
                   threshold=f"max_i ||x_i(T) - x_alpha,i|| <= {tol:g} and the closed form's "
                             f"fixed-point residual <= {tol:g}; T: first chunk end with "
                             f"||X(T) - X(T-1)|| < {stop:g} (cap {CAP}); W kind-stochastic and "
                             "the spectral radius of DGD's linear part < 1 (else INCONCLUSIVE)",
                   headline=["max_distance", "closed_form_residual", "max_steps"],
                   descriptions=descriptions, hypotheses_failed=list(failed),
                   size=f"{len(cases)} cases (graph x alpha)")


def _dgd_x(state):
    return state.x


def dgd_limit_cases(ctx: CheckContext) -> list[dict]:
    """Run DGD from the claim's starts on G4 (doubly stochastic) and G1's R for each alpha of
    :data:`FIXED_POINT_STEPS`, in chunks of :data:`CHUNK` steps restarted from the last
    iterate (static W, constant step: a restart is the same run), until every start has
    ``||X(t+1) - X(t)|| < STOP`` or :data:`CAP` steps."""
    seed = ctx.base_seed
    problem, alg = _problem(seed), _method("dgd", seed, 1)
    starts = _starts(ctx, "optimization.dgd_fixed_point_limit")
    cases = []
    for fx, kind in (("G4", "doubly"), ("G1", "row")):
        W = fixture(fx, "row", 1)[0]
        for alpha in FIXED_POINT_STEPS:
            x, steps = starts, 0
            while True:
                params = optimization_params(alpha, graphs=g.static(W))._replace(x0=x)
                res = run(alg, params, seeds=[0], num_steps=CHUNK, record_at=[CHUNK - 1, CHUNK],
                          record_fn=_dgd_x, sweep="x0", progress=False)
                rec = np.asarray(res.records, np.float64)[:, 0]          # [STARTS, 2, N, d]
                x, steps = rec[:, 1], steps + CHUNK
                change = np.linalg.norm((rec[:, 1] - rec[:, 0]).reshape(STARTS, -1), axis=-1)
                if np.all(change < STOP) or steps >= CAP or not np.all(np.isfinite(x)):
                    break
            cases.append(dict(name=f"{fx}_alpha_{alpha:g}", problem=problem, W=W,
                              kind=kind, alpha=alpha, x_final=x, change=change, steps=steps))
    return cases


@claim("optimization.dgd_fixed_point_limit",
       statement="DGD with a constant step and a static W converges to the closed-form fixed "
                 "point X_alpha solving (I - W) X + alpha grad F(X) = 0 (G4 doubly stochastic; "
                 "G1 row-stochastic), alpha in {0.05, 0.01}",
       source=f"{YLY16} (DGD with a constant step); the closed form derived in {DOCS}",
       kind=Kind.EXACT)
def _dgd_fixed_point_limit(ctx: CheckContext) -> Outcome:
    out = check_fixed_point_limit(dgd_limit_cases(ctx))
    out.size += f", {STARTS} starts, chunks of {CHUNK} steps"
    return out


# ---------------------------------------------------------------------------------------------
# planted: EXTRA on directed weights
# ---------------------------------------------------------------------------------------------

def check_converges(errors, *, tol: float = CONVERGE_TOL, what: str = "the method") -> Outcome:
    """The convergence check the planted controls wrap: PASS iff every error (``[...]``,
    ``max_i ||x_i(T) - target_i||``) is finite and <= tol, else FAIL."""
    err = np.asarray(errors, np.float64)
    worst = _max_abs(err)
    ok = bool(worst <= tol)
    return Outcome(verdict=Verdict.PASS if ok else Verdict.FAIL,
                   measured={"max_error": worst, "runs": int(err.size),
                             "runs_converged": int(np.sum(np.isfinite(err) & (err <= tol)))},
                   threshold=f"max_i ||x_i(T) - target|| <= {tol:g} on every run",
                   reason=f"{what}: max error {worst:.3g} {'<=' if ok else '>'} {tol:g}")


def alpha0_root_modulus(W) -> float:
    """Largest modulus of the roots of ``z^2 - (1 + w) z + (1 + w)/2`` over the eigenvalues w
    of W: EXTRA's recursion with alpha = 0 and ``W~ = (I + W)/2`` along W's eigenvectors."""
    out = 0.0
    for w in np.linalg.eigvals(np.asarray(W, np.float64)):
        out = max(out, float(np.abs(np.roots([1.0, -(1.0 + w), (1.0 + w) / 2.0])).max()))
    return out


def extra_companion(problem, W, alpha, W_tilde=None) -> np.ndarray:
    """The ``[2Nd, 2Nd]`` linear map of EXTRA's recursion on ``(x(k+1), x(k))`` (row-major vec)
    for a quadratic problem: ``x(k+2) = ((I + W) kron I - alpha H) x(k+1) - (W~ kron I -
    alpha H) x(k) + const``, ``H = blkdiag(A_i)``, ``W~ = (I + W)/2`` by default."""
    n, d = problem.num_agents, problem.dim
    W = np.asarray(W, np.float64)
    Wt = (np.eye(n) + W) / 2 if W_tilde is None else np.asarray(W_tilde, np.float64)
    H = np.zeros((n * d, n * d))
    A = np.asarray(problem.hessians, np.float64)
    for i in range(n):
        H[i * d:(i + 1) * d, i * d:(i + 1) * d] = A[i]
    A1 = np.kron(np.eye(n) + W, np.eye(d)) - alpha * H
    A0 = np.kron(Wt, np.eye(d)) - alpha * H
    return np.block([[A1, -A0], [np.eye(n * d), np.zeros((n * d, n * d))]])


def check_extra_nonsymmetric(R, errors, *, tol: float = CONVERGE_TOL, radii=None,
                             growth=None, alphas=None) -> Outcome:
    """Planted control: "EXTRA with the row-stochastic, non-symmetric R converges" must FAIL.

    Precondition, computed before the run is judged: R is not symmetric and
    :func:`alpha0_root_modulus` of R exceeds 1 (else INCONCLUSIVE: nothing is planted). The
    control PASSes iff :func:`check_converges` on ``errors`` (``[...]``) FAILs.

    Args:
        R: ``[N, N]`` the weights EXTRA ran with.
        errors: final ``max_i ||x_i(T) - x*||`` of each run (inf / nan where it overflowed).
        radii, growth, alphas: reported only: the spectral radius of EXTRA's linear map at each
            step, the growth per step fitted on the runs, the steps.
    """
    R = np.asarray(R, np.float64)
    asym = float(np.abs(R - R.T).max())
    root = alpha0_root_modulus(R)
    inner = check_converges(errors, tol=tol, what="EXTRA on R")
    planted = asym > 1e-12 and root > 1.0
    if not planted:
        verdict = Verdict.INCONCLUSIVE
        reason = (f"nothing planted: max |R - R^T| = {asym:.2g}, alpha = 0 root modulus "
                  f"{root:.4f} <= 1")
    elif inner.verdict is Verdict.FAIL:
        verdict = Verdict.PASS
        reason = (f"alpha = 0 root modulus {root:.4f} > 1 and the wrapped check FAILs: max "
                  f"error {inner.measured['max_error']:.3g} > {tol:g}")
        if growth is not None and radii is not None:
            reason += (f"; fitted growth per step {min(growth):.4f}-{max(growth):.4f} vs "
                       f"spectral radius {min(radii):.4f}-{max(radii):.4f}")
    else:
        verdict = Verdict.FAIL
        reason = (f"alpha = 0 root modulus {root:.4f} > 1 yet EXTRA converged: max error "
                  f"{inner.measured['max_error']:.3g} <= {tol:g}")
    measured = {"alpha0_root_modulus": root, "max_error": inner.measured["max_error"],
                "runs_converged": inner.measured["runs_converged"], "runs": inner.measured["runs"],
                "asymmetry": asym}
    descriptions = {
        "alpha0_root_modulus": "largest |z| with z^2 - (1+w) z + (1+w)/2 = 0 over eigenvalues w "
                               "of R (> 1: the recursion is unstable at every small alpha)",
        "max_error": "max over runs of max_i ||x_i(T) - x*|| (inf: overflowed)",
        "runs_converged": f"runs with error <= {tol:g}",
        "runs": "runs (steps x starts)",
        "asymmetry": "max |R - R^T|"}
    for key, val, text in (("alphas", alphas, "the steps run"),
                           ("spectral_radius", radii, "spectral radius of EXTRA's linear map "
                                                      "on (x(k+1), x(k)) at each step"),
                           ("growth_per_step", growth, "exp of the fitted slope of log "
                                                       "max_i ||x_i(k) - x*|| over the run's "
                                                       "second half, per step")):
        if val is not None:
            measured[key] = [float(v) for v in val]
            descriptions[key] = text
    return Outcome(verdict=verdict, measured=measured, reason=reason,
                   threshold=f"control: PASS iff R is non-symmetric with alpha = 0 root modulus "
                             f"> 1 (else INCONCLUSIVE) and the wrapped check (max_i ||x_i(T) - "
                             f"x*|| <= {tol:g} on every run) FAILs",
                   headline=["alpha0_root_modulus", "max_error", "runs_converged"],
                   descriptions=descriptions,
                   hypotheses_failed=["W symmetric (EXTRA's Assumption 1): broken on purpose, "
                                      f"max |R - R^T| = {asym:.2g}"])


def _growth(errors, steps) -> float:
    """exp of the least-squares slope of log(errors) against steps over the second half of the
    finite, positive entries (nan when fewer than 3)."""
    ok = np.isfinite(errors) & (errors > 0)
    e, k = errors[ok], np.asarray(steps)[ok]
    e, k = e[len(e) // 2:], k[len(k) // 2:]
    if e.size < 3:
        return float("nan")
    return float(np.exp(np.polyfit(k, np.log(e), 1)[0]))


@claim("optimization.extra_nonsymmetric_diverges",
       statement="planted control: \"EXTRA with G1's row-stochastic (non-symmetric) R "
                 "converges\" must FAIL; precondition: the alpha = 0 recursion z^2 - (1+w) z + "
                 "(1+w)/2 has a root of modulus > 1 for some eigenvalue w of R",
       source=f"{EXTRA15}, Assumption 1 (symmetric W); the control derived in {DOCS}",
       kind=Kind.EXACT)
def _extra_nonsymmetric(ctx: CheckContext) -> Outcome:
    problem = _problem(ctx.base_seed)
    R = fixture("G1", "row", 1)[0]
    if not (np.abs(R - R.T).max() > 1e-12 and alpha0_root_modulus(R) > 1):
        return check_extra_nonsymmetric(R, [np.nan])     # nothing planted: not run
    alg = extra(problem, g.static(R), allow_nonsymmetric=True).replace(
        cpu_compiler_options=FAST_COMPILE)
    starts = _starts(ctx, "optimization.extra_nonsymmetric_diverges")
    every = 100
    errors, growth, radii = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DivergenceWarning)     # expected: the point of the claim
        warnings.simplefilter("ignore", RuntimeWarning)        # numpy on the overflowed records
        for alpha in EXTRA_DIRECTED_STEPS:
            params = optimization_params(alpha)._replace(x0=starts)
            res = run(alg, params, seeds=[0], num_steps=T_CONVERGE, record_every=every,
                      record_initial=True, record_fn=_dgd_x, sweep="x0", check_records=False,
                      on_divergence="warn", progress=False)
            x = np.asarray(res.records, np.float64)[:, 0]              # [STARTS, R, N, d]
            with np.errstate(all="ignore"):
                err = np.linalg.norm(x - problem.optimum, axis=-1).max(-1)    # [STARTS, R]
            errors.append(err[:, -1])
            steps = np.arange(err.shape[1]) * every
            growth.append(np.nanmedian([_growth(e, steps) for e in err]))
            radii.append(np.abs(np.linalg.eigvals(extra_companion(problem, R, alpha))).max())
    out = check_extra_nonsymmetric(R, np.concatenate(errors), radii=radii, growth=growth,
                                   alphas=EXTRA_DIRECTED_STEPS)
    out.size = (f"N={N}, T={T_CONVERGE}, alpha in {list(EXTRA_DIRECTED_STEPS)}, "
                f"{STARTS} starts")
    return out


# ---------------------------------------------------------------------------------------------
# step-size thresholds on A_i = L I
# ---------------------------------------------------------------------------------------------

def dgd_radius(W, Lc: float, alpha: float) -> float:
    """Spectral radius of DGD's linear part ``W - alpha L I`` (``A_i = L I``, any d)."""
    return float(np.abs(np.linalg.eigvals(np.asarray(W, np.float64) - alpha * Lc
                                          * np.eye(len(W)))).max())


def extra_radius(W, Lc: float, alpha: float) -> float:
    """Largest modulus of EXTRA's linear map (``A_i = L I``, ``W~ = (I + W)/2``, d = 1) after
    removing the eigenvalue 1 of the consensus direction (EXTRA's conserved quantity)."""
    n = len(W)
    H = Lc * np.eye(n)
    A1 = np.eye(n) + W - alpha * H
    A0 = (np.eye(n) + W) / 2 - alpha * H
    M = np.block([[A1, -A0], [np.eye(n), np.zeros((n, n))]])
    ev = np.linalg.eigvals(M)
    ev = np.delete(ev, np.argmin(np.abs(ev - 1.0)))
    return float(np.abs(ev).max())


def check_step_thresholds(W, hessians, errors, *, tol: float = CONVERGE_TOL,
                          margin: float = 1e-6, hypotheses=(), findings=()) -> Outcome:
    """Judge the exact instability thresholds of DGD and EXTRA on ``A_i = L I``.

    Closed forms (``docs/optimization.md``): DGD ``alpha_c = (1 + lambda_N)/L``; EXTRA with
    ``W~ = (I + W)/2``: ``alpha_c = (5 + 3 lambda_N)/(4 L)``. Judged:

    * the closed forms are the thresholds: the spectral radius (:func:`dgd_radius`,
      :func:`extra_radius`) is < 1 at ``alpha_c (1 - margin)`` and > 1 at
      ``alpha_c (1 + margin)``;
    * planted: :func:`check_converges` FAILs for both at ``1.2 alpha_c``;
    * both converge (PASS) at half the papers' bounds (``(1 + lambda_N)/L`` and
      ``2 lambda_min(W~)/L``): DGD to its fixed point, EXTRA to x*.

    Args:
        W: ``[N, N]`` static symmetric doubly stochastic, connected (else INCONCLUSIVE).
        hessians: ``[N, d, d]``, all equal to ``L I`` (else INCONCLUSIVE).
        errors: ``{(method, "above" | "below"): [runs]}`` final errors of the four settings.
    """
    W = np.asarray(W, np.float64)
    A = np.asarray(hessians, np.float64)
    Lc = float(A[0, 0, 0])
    failed = stochasticity_failures(W, "doubly", "W", symmetric=True)
    lam = np.linalg.eigvalsh((W + W.T) / 2)
    if not lam[-2] < 1 - 1e-12:
        failed.append(f"W: not connected (lambda_2 = {lam[-2]:.6g})")
    if np.abs(A - Lc * np.eye(A.shape[-1])).max() > 0 or not Lc > 0:
        failed.append("A_i: not all equal to L I with L > 0")
    lam_n = float(lam[0])
    crit = {"dgd": (1 + lam_n) / Lc, "extra": (5 + 3 * lam_n) / (4 * Lc)}
    radius = {"dgd": dgd_radius, "extra": extra_radius}
    below_r = {m: radius[m](W, Lc, crit[m] * (1 - margin)) for m in crit}
    above_r = {m: radius[m](W, Lc, crit[m] * (1 + margin)) for m in crit}
    verified = all(below_r[m] < 1 < above_r[m] for m in crit)
    inner = {key: check_converges(errs, tol=tol, what=f"{key[0]} {key[1]}")
             for key, errs in errors.items()}
    planted = all(inner[(m, "above")].verdict is Verdict.FAIL for m in crit)
    converged = all(inner[(m, "below")].verdict is Verdict.PASS for m in crit)
    if failed:
        verdict, reason = Verdict.INCONCLUSIVE, f"assumption not met: {failed[0]}"
    elif verified and planted and converged:
        verdict = Verdict.PASS
        reason = (f"thresholds DGD {crit['dgd']:.4g}, EXTRA {crit['extra']:.4g} confirmed by the "
                  f"spectral radius; at 1.2 alpha_c both FAIL to converge (errors "
                  f"{inner[('dgd', 'above')].measured['max_error']:.3g}, "
                  f"{inner[('extra', 'above')].measured['max_error']:.3g}); at half the papers' "
                  f"bounds both reach <= {tol:g}")
    else:
        verdict = Verdict.FAIL
        parts = []
        if not verified:
            parts.append("the spectral radius does not cross 1 at the closed-form thresholds")
        if not planted:
            parts.append("a run at 1.2 alpha_c converged")
        if not converged:
            parts.append("a run at half the paper's bound did not converge")
        reason = "; ".join(parts)
    measured = {"lambda_N": lam_n, "L": Lc, "dgd_alpha_c": crit["dgd"],
                "extra_alpha_c": crit["extra"], "paper_bound": (1 + lam_n) / Lc,
                "dgd_radius_below": below_r["dgd"], "dgd_radius_above": above_r["dgd"],
                "extra_radius_below": below_r["extra"], "extra_radius_above": above_r["extra"]}
    measured |= {f"error_{m}_{side}": o.measured["max_error"] for (m, side), o in inner.items()}
    descriptions = {
        "lambda_N": "smallest eigenvalue of W",
        "L": "the common curvature of the f_i",
        "dgd_alpha_c": "(1 + lambda_N)/L: DGD's exact threshold (= Yuan, Ling & Yin's bound)",
        "extra_alpha_c": "(5 + 3 lambda_N)/(4 L): EXTRA's exact threshold (W~ = (I+W)/2)",
        "paper_bound": "EXTRA's 2 lambda_min(W~)/L = (1 + lambda_N)/L, equal to DGD's bound",
        "dgd_radius_below": f"spectral radius of W - alpha L I at alpha_c (1 - {margin:g})",
        "dgd_radius_above": f"the same at alpha_c (1 + {margin:g})",
        "extra_radius_below": f"EXTRA's spectral radius (eigenvalue 1 removed) at alpha_c "
                              f"(1 - {margin:g})",
        "extra_radius_above": f"the same at alpha_c (1 + {margin:g})"}
    where = {"above": "at 1.2 alpha_c", "below": "at half the paper's bound"}
    descriptions |= {f"error_{m}_{side}": f"max_i ||x_i(T) - target|| of {m} {where[side]} "
                                          "(inf: overflowed)" for (m, side) in inner}
    return Outcome(verdict=verdict, measured=measured, reason=reason,
                   threshold=f"spectral radius < 1 at alpha_c (1 - {margin:g}) and > 1 at "
                             f"alpha_c (1 + {margin:g}); at 1.2 alpha_c the check 'max_i ||x_i(T) "
                             f"- target|| <= {tol:g}' FAILs (planted) for DGD and EXTRA; at 0.5 x "
                             "the papers' bounds it PASSes for both; W symmetric doubly "
                             "stochastic, connected, A_i = L I (else INCONCLUSIVE)",
                   headline=["dgd_alpha_c", "extra_alpha_c", "error_dgd_above"],
                   descriptions=descriptions, hypotheses_failed=list(failed) + list(hypotheses),
                   findings=list(findings))


def _hypothesis_messages(caught) -> list[str]:
    """The distinct HypothesisWarning messages (a sweep warns once per entry)."""
    return list(dict.fromkeys(str(w.message) for w in caught
                              if issubclass(w.category, HypothesisWarning)))


def step_threshold_setup(ctx: CheckContext) -> dict:
    """The ``A_i = L I`` problem (random b_i) on G4 and the four runs of
    :func:`check_step_thresholds`, with the library's stability warnings caught per run."""
    rng = ctx.rng("optimization.step_size_thresholds")
    d = D
    problem = quadratic(np.broadcast_to(L * np.eye(d), (N, d, d)).copy(),
                        rng.standard_normal((N, d)))
    seq = g4()
    W = weights(seq, 1)[0]
    lam_n = float(np.linalg.eigvalsh(W)[0])
    crit = {"dgd": (1 + lam_n) / L, "extra": (5 + 3 * lam_n) / (4 * L)}
    bound = (1 + lam_n) / L                       # YLY16 for DGD; 2 lambda_min(W~)/L for EXTRA
    starts = _starts(ctx, "optimization.step_size_thresholds")
    algs = {"dgd": dgd(problem, seq).replace(cpu_compiler_options=FAST_COMPILE),
            "extra": extra(problem, seq).replace(cpu_compiler_options=FAST_COMPILE)}
    errors, hypotheses, findings = {}, [], []
    for m, alg in algs.items():
        for side, alpha in (("above", 1.2 * crit[m]), ("below", 0.5 * bound)):
            target = (dgd_fixed_point(problem, W, alpha) if m == "dgd"
                      else np.broadcast_to(problem.optimum, (N, d)))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                params = optimization_params(alpha)._replace(x0=starts)
                res = run(alg, params, seeds=[0], num_steps=T_CONVERGE, record_at=[T_CONVERGE],
                          record_fn=_dgd_x, sweep="x0", check_records=False,
                          on_divergence="warn", progress=False)
            x = np.asarray(res.records, np.float64)[:, 0, -1]
            with np.errstate(all="ignore"):
                errors[(m, side)] = np.linalg.norm(x - target, axis=-1).max(-1)
            msgs = _hypothesis_messages(caught)
            if side == "above":
                hypotheses += [f"{m} at alpha = {alpha:.4g} (planted, 1.2 alpha_c): {s}"
                               for s in msgs]
                if not msgs:
                    findings.append(f"{m} at alpha = {alpha:.4g} > the paper's bound "
                                    f"{bound:.4g} ran without a HypothesisWarning")
            elif msgs:
                findings.append(f"{m} at alpha = {alpha:.4g} (half the paper's bound) warned: "
                                f"{msgs[0]}")
    return dict(W=W, hessians=problem.hessians, errors=errors, hypotheses=hypotheses,
                findings=findings)


@claim("optimization.step_size_thresholds",
       statement="on f_i = (L/2)||x||^2 - b_i^T x with a static symmetric W, DGD diverges "
                 "exactly above alpha_c = (1 + lambda_N)/L and EXTRA (W~ = (I+W)/2) above "
                 "alpha_c = (5 + 3 lambda_N)/(4L); planted: both 'converge' at 1.2 alpha_c must "
                 "FAIL, and both converge at half the papers' step bounds",
       source=f"{YLY16}, Theorem 1 (alpha <= (1 + lambda_n(W))/L_h); {EXTRA15}, Theorem 3.3 "
              f"(alpha < 2 lambda_min(W~)/L_f); exact thresholds derived in {DOCS}",
       kind=Kind.EXACT)
def _step_size_thresholds(ctx: CheckContext) -> Outcome:
    out = check_step_thresholds(**step_threshold_setup(ctx))
    out.size = f"N={N}, d={D}, G4, T={T_CONVERGE}, {STARTS} starts per setting"
    out.details = ("DGD's target is its closed-form fixed point at the same alpha, EXTRA's is x*. "
                   "The thresholds are verified on the spectral radius of the exact linear maps "
                   "(EXTRA: its eigenvalue 1 along the consensus direction removed).")
    return out


# ---------------------------------------------------------------------------------------------
# push-DIGing(W) = push-pull(W, W) = DSGT(W, sigma = 0)
# ---------------------------------------------------------------------------------------------

def check_equivalence(W, paths, *, tol: float = 1e-12) -> Outcome:
    """Judge that the methods of ``paths`` (name -> ``{"x", "y"}``, ``[..., K + 1, N, d]``)
    give the same iterates and trackers as the first one, for a doubly stochastic ``W``
    (``[T, N, N]``; else INCONCLUSIVE)."""
    failed = stochasticity_failures(W, "doubly", "W")
    names = list(paths)
    ref = paths[names[0]]
    scale = max(1.0, *(_max_abs(p[f]) for p in paths.values() for f in ("x", "y")))
    rows = {}
    for other in names[1:]:
        diff = max(_max_abs(paths[other][f] - ref[f]) for f in ("x", "y"))
        rows[f"{names[0]}_vs_{other}"] = (diff, scale, failed)
    K = np.shape(ref["x"])[-3] - 1
    return _identity_outcome(
        rows, tol, what="equal paths", noun="comparisons", measured_extra={},
        descriptions_extra={},
        threshold=f"max over paths, steps, agents of |x_a - x_b| and |y_a - y_b| <= {tol:g} x "
                  f"max(1, max |x|, max |y|); W doubly stochastic within {GATE_TOL:g} (else "
                  "INCONCLUSIVE)",
        size=f"N={np.shape(ref['x'])[-2]}, T={K}, {len(names)} methods")


@claim("optimization.tracking_equivalence",
       statement="with one doubly stochastic W, push-DIGing(W), push-pull(R = C = W) and "
                 "DSGT(W, sigma = 0) produce the same iterates and trackers (G4)",
       source=f"{NOS17}, Algorithm 2; {PSXN}; {PN21}, eq. (4); equivalence derived in {DOCS}",
       kind=Kind.EXACT)
def _tracking_equivalence(ctx: CheckContext) -> Outcome:
    seed, T, K = ctx.base_seed, T_PATH, T_EQUIVALENCE
    starts = _starts(ctx, "optimization.tracking_equivalence")
    W = fixture("G4", "row", T)
    Wc = fixture("G4", "column", T)
    pd = _paths(_method("push_diging", seed, T), TRACKING_STEP, starts, g.explicit(Wc), T)
    pp = _paths(_method("push_pull", seed, T), TRACKING_STEP, starts,
                (g.explicit(W), g.explicit(Wc)), T)
    noise_seeds = range(ctx.base_seed, ctx.base_seed + NOISE_SEEDS)
    ds = _paths(_method("dsgt", seed, T), TRACKING_STEP, starts, g.explicit(W), T,
                seeds=noise_seeds, noise=0.0)
    paths = {name: {f: rec[f][..., :K + 1, :, :] for f in ("x", "y")}
             for name, rec in (("push_diging", pd), ("push_pull", pp), ("dsgt", ds))}
    out = check_equivalence(W[:K], paths)
    out.size += f", alpha={TRACKING_STEP}, {STARTS} starts (DSGT x {NOISE_SEEDS} seeds)"
    out.details = (f"The first {K} steps of {T}-step runs (the programs of the tracking "
                   "invariant's runs).")
    return out
