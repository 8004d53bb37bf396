"""Figure equivalents A-G for Lin, Gupta, Liu, *Finite-Time Error Bounds for Distributed Linear
Stochastic Approximation*.

The paper has no numerical experiments: these are **figure equivalents** of its claims, not
reproductions of paper figures (``docs/consensus_sa.md``). All use distributed TD(0) on the common
random MRP (8 states, 3 features, 6 agents, discount 0.8) and float64; Monte-Carlo curves are
means over seeds with a 10-90% band (the legend's grey "shaded" entry), and where the
exact-moment oracle applies its curve is drawn dashed beside them. Each figure uses the
settings of the claim it illustrates (step sizes, horizons, seed counts at the quick and full
sizes); the tiny size only shrinks them for the tests.

* A — the limit depends on pi (Theorem 2): pi-weighted error to theta*_pi and to theta*_unif.
* B — constant step (eq. (7)): for each of the claim's step sizes alpha, the exact error from
  a far start and from 0 decays geometrically to the same plateau by the claim's horizon
  T_alpha; plateau vs alpha with its fitted slope.
* C — diminishing step (eq. (8)): MSE vs t (log-log) and t*MSE/log^2 t from t = 10, the last
  decade (the claim's window) shaded.
* D — time-varying graphs sharing pi (A6 holds): the limit is theta*_pi.
* E — A6 violated (Remark 3): consensus holds, the average keeps moving between two limits.
* F — push-SA vs consensus SA on the same one-way graphs (Theorems 4, 5), and y_t.
* G — alpha = 0: V_pi non-increasing on random sequences; the decomposition of the error into
  consensus and single-agent parts.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

import decentral.graphs as g
from decentral.consensus_sa import (
    bound_quantities,
    consensus_sa,
    error_parts,
    exact_moments,
    limit,
    sa_params,
    weighted_error_from_moments,
)
from decentral.plotting import legend_outside, plot_curves
from decentral.push_sum import exact_moments as push_exact_moments
from decentral.push_sum import push_sum_sa, push_weights_sequence
from decentral.runner import log_spaced_steps, run
from decentral.schedules import constant, harmonic
from decentral.verify.stats import loglog_slope
from figures.registry import FigureContext, FigureOutput, figure
from proofs_checks.consensus_sa.setups import (
    chord_weights,
    common_problem,
    consensus_trial_stack,
    epoch_stack,
    other_chord_weights,
    run_epochs,
)
from proofs_checks.graphs import PRESCRIBED_PI, prescribed_pi_stack
from proofs_checks.push_sum import ring_and_chords

PAPER = "Lin, Gupta, Liu, Finite-Time Error Bounds for Distributed Linear SA"
FLOOR = 1e-300
STEPS = "$t$ (steps)"
PI_LIMIT = r"$\theta^*_\pi$"
UNIF_LIMIT = r"$\theta^*_{\rm unif}$"
RATIO_FROM = 10
"""Figure C draws ``t * MSE / log^2 t`` from this t on."""


def error_label(target: str, *, expected: bool = False) -> str:
    """The y label of a pi-weighted squared error to ``target`` (mathtext, no dollars)."""
    e = r"\mathbb{E}" if expected else ""
    return rf"error ${e}\sum_i \pi^i\,\|\theta_t^i - {target}\|^2$"


def _theta(state):
    return state.theta


def _seeds(ctx: FigureContext, quick: int, full: int, tiny: int = 4) -> list[int]:
    n = ctx.pick(tiny=tiny, quick=quick, full=full)
    return list(range(ctx.base_seed, ctx.base_seed + n))


def _mc(alg, params, seeds, T, at):
    res = run(alg, params, seeds, T, record_at=at, record_fn=_theta, progress=False)
    return np.asarray(res.records, np.float64)          # [S, R, N, d]


@figure("consensus_sa.a_limit_depends_on_pi",
        title="A: consensus SA on the ring with chord reaches theta*_pi, not theta*_unif",
        paper=f"{PAPER}, Theorem 2; claim consensus_sa.limit_point (figure equivalent)")
def fig_a(ctx: FigureContext) -> FigureOutput:
    """The claim's first configuration (ring with chord, step 5/(t+51), pi-weighted errors);
    sizes tiny 4 seeds x 300 steps, quick 100 x 20 000, full 200 x 200 000 (the claim's)."""
    problem, W = common_problem(), chord_weights()
    pi = g.perron_vector(W)
    t_pi, t_unif = limit(problem, pi), limit(problem, np.full(6, 1 / 6))
    T = ctx.pick(tiny=300, quick=20_000, full=200_000)
    at = log_spaced_steps(T, ctx.pick(tiny=6, quick=30, full=40))
    params = sa_params(harmonic(5.0, 51.0))
    seeds = _seeds(ctx, 100, 200)
    theta = _mc(consensus_sa(problem, g.static(W)), params, seeds, T, at)
    to_pi = error_parts(theta, pi, t_pi)["weighted"]
    to_unif = error_parts(theta, pi, t_unif)["weighted"]
    mom = exact_moments(problem, g.static(W), params, T, record_at=at)
    exact = weighted_error_from_moments(mom, pi, t_pi)
    separation = float(((t_pi - t_unif) ** 2).sum())
    fig, ax = plt.subplots(figsize=(9.0, 4.2))
    plot_curves(at, {rf"to {PI_LIMIT} (Monte Carlo)": to_pi,
                     rf"to {UNIF_LIMIT} (Monte Carlo)": to_unif},
                logx=True, ax=ax, xlabel=STEPS, ylabel=error_label(r"\theta^*"))
    plot_curves(at, {rf"to {PI_LIMIT} (exact moments)": exact}, logx=True, ax=ax,
                linestyle="--")
    ax.axhline(separation, color="k", linestyle=":", linewidth=1,
               label=r"separation $\|\theta^*_\pi - \theta^*_{\rm unif}\|^2$")
    ax.set_title(rf"A: step $5/(t+51)$ on the ring with chord: the limit is {PI_LIMIT} "
                 r"($\pi$: Perron vector)", fontsize=10)
    legend_outside(ax)
    fig.tight_layout()
    data = {"t": at, "error_to_pi": to_pi, "error_to_unif": to_unif,
            "exact_error_to_pi": exact, "pi": pi}
    return FigureOutput(fig, data, {"T": T, "step": "5/(t+51)", "graph": "ring + chord 3->0",
                                    "error": "sum_i pi^i ||theta_t^i - target||^2",
                                    "seeds": seeds})


#: The step sizes of the claim ``consensus_sa.constant_step_plateau`` (its quick size; the full
#: size adds 0.00125), and its horizon rule: ``T_alpha = 18 / (0.9 alpha / gamma_max)``.
CLAIM_ALPHAS = (0.04, 0.02, 0.01, 0.005, 0.0025)
CLAIM_ALPHAS_FULL = (*CLAIM_ALPHAS, 0.00125)
DECAY_PERIODS = 18.0


def constant_step_horizon(problem, seq, alpha: float) -> int:
    """The claim's horizon for ``alpha``: ``ceil(18 / (0.9 alpha / gamma_max))`` steps."""
    gamma_max = bound_quantities(problem, seq, float(alpha), horizon=10).gamma_max
    return int(math.ceil(DECAY_PERIODS / (0.9 * alpha / gamma_max)))


@figure("consensus_sa.b_constant_step",
        title="B: constant step: geometric decay to a plateau independent of theta_0, for the "
              "claim's step sizes; plateau against alpha",
        paper=f"{PAPER}, Theorem 3 eq. (7); claim consensus_sa.constant_step_plateau")
def fig_b(ctx: FigureContext) -> FigureOutput:
    """The claim's settings: step sizes 0.04 ... 0.0025 (full: ... 0.00125), each run exactly
    (moments) to its horizon ``T_alpha`` from a far start and from 0, the plateau the error at
    ``T_alpha`` from 0; Monte Carlo at the smallest step. Tiny: the two largest steps."""
    problem, W = common_problem(), chord_weights()
    seq = g.static(W)
    pi = g.perron_vector(W)
    target = limit(problem, pi)
    alphas = list(ctx.pick(tiny=CLAIM_ALPHAS[:2], quick=CLAIM_ALPHAS, full=CLAIM_ALPHAS_FULL))
    theta0 = 3.0 * np.random.default_rng(0).standard_normal((problem.num_agents, problem.dim))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13.0, 4.6),
                                  gridspec_kw={"width_ratios": [1.5, 1.0]})
    data: dict[str, Any] = {"alphas": np.asarray(alphas)}
    plateaus, horizons = [], []
    for k, a in enumerate(alphas):
        T = constant_step_horizon(problem, seq, a)
        at = np.unique(np.linspace(0, T, 401).astype(np.int64))
        curves = {}
        for start, th0 in (("far", theta0), ("zero", None)):
            mom = exact_moments(problem, seq, sa_params(constant(a), theta0=th0), T,
                                record_at=at)
            curves[start] = weighted_error_from_moments(mom, pi, target)
            data[f"exact_{start}_alpha_{a:g}"] = curves[start]
        data[f"t_alpha_{a:g}"] = at
        ax.plot(at[1:], curves["far"][1:], color=f"C{k}", label=rf"$\alpha = {a:g}$")
        ax.plot(at[1:], curves["zero"][1:], color=f"C{k}", linestyle="--")
        plateaus.append(float(curves["zero"][-1]))
        horizons.append(T)
    a_mc, T_mc = alphas[-1], horizons[-1]
    at_mc = data[f"t_alpha_{a_mc:g}"][1:]
    seeds = _seeds(ctx, 64, 256)
    theta = _mc(consensus_sa(problem, seq), sa_params(constant(a_mc), theta0=theta0), seeds,
                T_mc, at_mc)
    mc = error_parts(theta, pi, target)["weighted"]
    data["monte_carlo_t"] = at_mc
    data[f"monte_carlo_alpha_{a_mc:g}"] = mc
    plot_curves(at_mc, {rf"Monte Carlo, $\alpha = {a_mc:g}$, far start": mc}, ax=ax,
                logx=True, linestyle=":", color="k", legend=False)
    ax.set_xlabel(STEPS)
    ax.set_ylabel(error_label(r"\theta^*_\pi", expected=True))
    ax.set_title(r"B: exact error, each step size $\alpha$ run to its horizon $T_\alpha$",
                 fontsize=10)
    styles = [Line2D([], [], color="0.3", label=r"exact, far start $\theta_0 = 3\,\xi$, "
                                                 r"$\xi \sim \mathcal{N}(0, I)$"),
              Line2D([], [], color="0.3", linestyle="--", label=r"exact, start $\theta_0 = 0$")]
    legend_outside(ax, extra=styles)
    plateaus_arr = np.asarray(plateaus)
    ax2.loglog(alphas, plateaus_arr, "o-", color="C0", label=r"plateau at $T_\alpha$ (exact)")
    exponent = float("nan")
    if len(alphas) >= 2:
        exponent = float(loglog_slope(np.asarray(alphas), plateaus_arr).slope)
        la = np.log(np.asarray(alphas))
        c = float(np.mean(np.log(plateaus_arr)) - exponent * la.mean())
        ax2.loglog(alphas, np.exp(c + exponent * la), "k:",
                   label=rf"least-squares fit: slope {exponent:.2f}")
    ax2.set_xticks(alphas, [f"{a:g}" for a in alphas])
    ax2.xaxis.set_minor_formatter(NullFormatter())     # one label per step size, no others
    ax2.set_xlabel(r"step size $\alpha$")
    ax2.set_ylabel(r"plateau $\mathbb{E}\sum_i \pi^i\|\theta_{T_\alpha}^i - \theta^*_\pi\|^2$")
    ax2.set_title("plateau against the step size", fontsize=10)
    ax2.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    data["plateaus"] = plateaus_arr
    data["horizons"] = np.asarray(horizons)
    return FigureOutput(fig, data, {"alphas": alphas, "horizons": horizons,
                                    "decay_periods": DECAY_PERIODS,
                                    "theta0": "3 N(0, I), seed 0 (far start) and 0",
                                    "plateau": "exact error at T_alpha from the start at 0",
                                    "plateau_exponent": exponent, "seeds": seeds,
                                    "monte_carlo_alpha": a_mc})


@figure("consensus_sa.c_diminishing_step",
        title="C: diminishing step: MSE vs t and t*MSE/log^2 t",
        paper=f"{PAPER}, Theorem 3 eq. (8); claim consensus_sa.diminishing_step_rate")
def fig_c(ctx: FigureContext) -> FigureOutput:
    """The claim's settings: alpha_t = alpha0/(t+1) with alpha0 = gamma_max/0.9, T = 20 000
    (full 100 000), 60 log-spaced points; beside it the shifted step 5/(t+51). The ratio
    t*MSE/log^2 t is drawn from t = 10 (log^2 t is near 0 at t = 2, where the ratio spikes),
    with the last decade the claim judges shaded."""
    problem, W = common_problem(), chord_weights()
    seq = g.static(W)
    pi = g.perron_vector(W)
    target = limit(problem, pi)
    gamma_max = bound_quantities(problem, seq, 0.01, horizon=10).gamma_max
    T = ctx.pick(tiny=300, quick=20_000, full=100_000)
    at = log_spaced_steps(T, ctx.pick(tiny=8, quick=60, full=60))
    steps = {rf"$\alpha_t = \alpha_0/(t+1)$, $\alpha_0 = \gamma_{{\max}}/0.9 = "
             rf"{gamma_max / 0.9:.3g}$": harmonic(gamma_max / 0.9, 1.0),
             r"$\alpha_t = 5/(t+51)$ (shifted variant)": harmonic(5.0, 51.0)}
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13.0, 4.4))
    data: dict[str, Any] = {"t": at}
    shown = at >= RATIO_FROM
    for k, (label, sched) in enumerate(steps.items()):
        mom = exact_moments(problem, seq, sa_params(sched), T, record_at=at)
        err = weighted_error_from_moments(mom, pi, target)
        data[f"exact_{k}"] = err
        plot_curves(at, {label: err}, logx=True, ax=ax, color=f"C{k}", legend=False)
        ratio = at * err / np.log(np.maximum(at, 2)) ** 2
        ax2.semilogx(at[shown], ratio[shown], color=f"C{k}", label=label)
        data[f"t_mse_over_log2_{k}"] = ratio
    ax.plot(at, at[-1] * data["exact_0"][-1] / at, "k:", label=r"$\propto 1/t$ reference")
    ax.set_xlabel(STEPS)
    ax.set_ylabel(error_label(r"\theta^*_\pi", expected=True))
    ax.set_title("C: exact expected error with diminishing steps", fontsize=10)
    legend_outside(ax)
    ax2.axvspan(at[-1] / 10, at[-1], color="0.85", zorder=0,
                label="last decade (judged by the claim)")
    ax2.set_xlabel(STEPS + rf", from $t = {RATIO_FROM}$")
    ax2.set_ylabel(r"ratio $t\,\mathbb{E}\,\mathrm{err}_t\,/\,\log^2 t$")
    ax2.set_yscale("log")                              # the early transient is 50x the tail
    ax2.xaxis.set_minor_formatter(NullFormatter())     # no crowded labels on a short range
    ax2.set_title("bounded under eq. (8)", fontsize=10)
    legend_outside(ax2)
    fig.tight_layout()
    return FigureOutput(fig, data, {"T": T, "steps": list(steps), "gamma_max": gamma_max,
                                    "ratio_drawn_from_t": RATIO_FROM, "seeds": [],
                                    "method": "exact moments (no sampling)"})


@figure("consensus_sa.d_time_varying_shared_pi",
        title="D: time-varying, non-doubly-stochastic graphs sharing pi (A6 holds): limit "
              "theta*_pi",
        paper=f"{PAPER}, Theorem 2 with A6; construction docs/consensus_sa.md, docs/graphs.md §2")
def fig_d(ctx: FigureContext) -> FigureOutput:
    problem = common_problem()
    T = ctx.pick(tiny=300, quick=10_000, full=100_000)
    seq = g.explicit(prescribed_pi_stack(T, ctx.base_seed))
    t_pi, t_unif = limit(problem, PRESCRIBED_PI), limit(problem, np.full(6, 1 / 6))
    at = log_spaced_steps(T, ctx.pick(tiny=6, quick=30, full=40))
    params = sa_params(harmonic(5.0, 51.0))
    seeds = _seeds(ctx, 64, 256)
    theta = _mc(consensus_sa(problem, seq), params, seeds, T, at)
    e_pi = error_parts(theta, PRESCRIBED_PI, t_pi)["weighted"]
    e_unif = error_parts(theta, PRESCRIBED_PI, t_unif)["weighted"]
    mom = exact_moments(problem, seq, params, T, record_at=at)
    exact = weighted_error_from_moments(mom, PRESCRIBED_PI, t_pi)
    fig, ax = plt.subplots(figsize=(9.0, 4.2))
    plot_curves(at, {rf"to {PI_LIMIT} (Monte Carlo)": e_pi,
                     rf"to {UNIF_LIMIT} (Monte Carlo)": e_unif}, logx=True, ax=ax,
                xlabel=STEPS, ylabel=error_label(r"\theta^*"),
                title=r"D: sub-cycles $W_t = I - c\,D_\pi^{-1} L_t$ in random order, "
                      r"step $5/(t+51)$")
    plot_curves(at, {rf"to {PI_LIMIT} (exact moments)": exact}, logx=True, ax=ax,
                linestyle="--")
    fig.tight_layout()
    return FigureOutput(fig, {"t": at, "error_to_pi": e_pi, "error_to_unif": e_unif,
                              "exact_error_to_pi": exact},
                        {"T": T, "pi": PRESCRIBED_PI.tolist(), "step": "5/(t+51)",
                         "seeds": seeds, "graph_order_seed": ctx.base_seed})


@figure("consensus_sa.e_a6_violated",
        title="E: A6 violated (two Perron vectors on doubling epochs): consensus, no convergence",
        paper=f"{PAPER}, Theorem 1, Remark 3; claims consensus_sa.consensus_without_a6, "
              "consensus_sa.no_convergence_without_a6")
def fig_e(ctx: FigureContext) -> FigureOutput:
    """The claims' settings: T = 2^15 (full 2^18), 64 seeds (full 200), step 5/(t+51)."""
    problem = common_problem()
    Wa, Wb = chord_weights(), other_chord_weights()
    T = ctx.pick(tiny=2 ** 9, quick=2 ** 15, full=2 ** 18)
    seeds = _seeds(ctx, 64, 200)
    at, avg, dev = run_epochs(problem, Wa, Wb, T, seeds)
    ta, tb = limit(problem, g.perron_vector(Wa)), limit(problem, g.perron_vector(Wb))
    to_a = np.linalg.norm(avg - ta, axis=-1)
    to_b = np.linalg.norm(avg - tb, axis=-1)
    fig, ax = plt.subplots(figsize=(9.0, 4.2))
    ax.axhline(float(np.linalg.norm(ta - tb)), color="k", linestyle=":", linewidth=1,
               label=r"$\|\theta^*_{\pi_a} - \theta^*_{\pi_b}\|$")
    plot_curves(at, {r"$\|\langle\theta\rangle_t - \theta^*_{\pi_a}\|$": to_a,
                     r"$\|\langle\theta\rangle_t - \theta^*_{\pi_b}\|$": to_b,
                     r"consensus $\max_i \|\theta_t^i - \langle\theta\rangle_t\|$": dev},
                logx=True, ax=ax, xlabel=STEPS + r", recorded at the epoch ends $2^k$",
                ylabel=r"distance (units of $\theta$)",
                title=r"E: $W_a$ on even epochs, $W_b$ on odd ones; step $5/(t+51)$")
    fig.tight_layout()
    which = np.where(epoch_stack(Wa, Wb, T)[at - 1][:, 0, 3] > 0, "b", "a").tolist()
    return FigureOutput(fig, {"t": at, "to_a": to_a, "to_b": to_b, "max_deviation": dev},
                        {"T": T, "seeds": seeds,
                         "epochs": "W_a on [2^k, 2^(k+1)) for even k, W_b for odd k",
                         "matrix_of_last_step_before_each_record": which})


@figure("consensus_sa.f_push_sa",
        title="F: push-SA reaches theta*_unif over one-way links; consensus SA on the same "
              "graphs does not; push-sum weights y_t",
        paper=f"{PAPER}, Theorems 4 and 5; claims push_sum.*")
def fig_f(ctx: FigureContext) -> FigureOutput:
    """The settings of the claim push_sum.limit_point: T = 20 000 (full 200 000), 100 seeds
    (full 200), step 5/(t+51), ring and chords alternating."""
    problem = common_problem()
    ring, chords = ring_and_chords()
    push_seq = g.periodic([ring, chords], rule="column")
    row_seq = g.periodic([ring, chords], rule="row")
    t_unif = limit(problem, np.full(6, 1 / 6))
    T = ctx.pick(tiny=300, quick=20_000, full=200_000)
    at = log_spaced_steps(T, ctx.pick(tiny=6, quick=30, full=40))
    params = sa_params(harmonic(5.0, 51.0))
    seeds = _seeds(ctx, 100, 200)
    push = _mc(push_sum_sa(problem, push_seq), params, seeds, T, at)
    cons = _mc(consensus_sa(problem, row_seq), params, seeds, T, at)
    e_push = ((push - t_unif) ** 2).sum((-1, -2))
    e_cons = ((cons - t_unif) ** 2).sum((-1, -2))
    mom = push_exact_moments(problem, push_seq, params, T, record_at=at)
    exact = weighted_error_from_moments(mom, np.ones(6), t_unif)
    _, y = push_weights_sequence(push_seq, 12)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13.0, 4.4),
                                  gridspec_kw={"width_ratios": [1.6, 1.0]})
    plot_curves(at, {"push-SA (Monte Carlo)": e_push, "consensus SA, row weights": e_cons},
                logx=True, ax=ax, xlabel=STEPS,
                ylabel=r"error $\sum_i \|\theta_t^i - \theta^*_{\rm unif}\|^2$")
    plot_curves(at, {"push-SA (exact moments)": exact}, logx=True, ax=ax, linestyle="--")
    ax.set_title(rf"F: error to {UNIF_LIMIT}; ring / chords alternating ($L = 2$), "
                 r"step $5/(t+51)$", fontsize=10)
    for i in range(y.shape[1]):
        ax2.plot(np.arange(13), y[:, i], marker=".")
    ax2.set_xlabel(STEPS)
    ax2.set_ylabel(r"push-sum weight $y_t^i$ (one line per agent)")
    ax2.set_title("push-sum weights over 12 steps", fontsize=10)
    fig.tight_layout()
    return FigureOutput(fig, {"t": at, "push_error": e_push, "consensus_error": e_cons,
                              "push_exact_error": exact, "y": y},
                        {"T": T, "step": "5/(t+51)", "graphs": "ring, chords 3->0 and 1->4",
                         "seeds": seeds})


@figure("consensus_sa.g_consensus_diagnostics",
        title="G: alpha = 0: V_pi non-increasing on random sequences; the decomposition of the "
              "error (consensus vs single-agent part)",
        paper=f"{PAPER}, eq. (6) at alpha -> 0; proof of Theorem 3; claims "
              "consensus_sa.comparison_function, consensus_sa.error_decomposition")
def fig_g(ctx: FigureContext) -> FigureOutput:
    """The claims' settings: at alpha = 0, 40 random sequences over 45 steps (full 200 over
    60; tiny 3), N = 5, L = 3; the decomposition with step 5/(t+51) over T = 20 000 (full
    100 000), 64 seeds (full 200)."""
    rng = np.random.default_rng(ctx.base_seed)
    L = 3
    T = ctx.pick(tiny=45, quick=45, full=60)
    trials = ctx.pick(tiny=3, quick=40, full=200)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13.0, 4.4),
                                  gridspec_kw={"width_ratios": [1.0, 1.6]})
    Vs = []
    for _ in range(trials):
        stack = consensus_trial_stack(rng, 5, L, 8 * T)
        pi = g.absolute_probability_sequence(g.explicit(stack), T)
        x = [rng.standard_normal(5)]
        for t in range(T):              # T small matrix-vector products for a diagnostic
            x.append(stack[t] @ x[-1])
        x = np.stack(x)
        avg = (pi * x).sum(1)
        Vs.append(np.maximum((pi * (x - avg[:, None]) ** 2).sum(1), FLOOR))
    Vs = np.stack(Vs)
    for v in Vs:
        ax.semilogy(np.arange(T + 1), v, color="C0", alpha=0.5, linewidth=0.7)
    ax.set_xlabel(STEPS)
    ax.set_ylabel(r"consensus measure $V_\pi(t)$")
    ax.set_title(rf"G: $\alpha = 0$, {trials} random sequences ($N = 5$, $L = {L}$), one line "
                 "each", fontsize=10)
    problem, W = common_problem(), chord_weights()
    pi = g.perron_vector(W)
    target = limit(problem, pi)
    Tc = ctx.pick(tiny=300, quick=20_000, full=100_000)
    at = log_spaced_steps(Tc, ctx.pick(tiny=6, quick=30, full=30))
    seeds = _seeds(ctx, 64, 200)
    theta = _mc(consensus_sa(problem, g.static(W)), sa_params(harmonic(5.0, 51.0)), seeds, Tc,
                at)
    parts = error_parts(theta, pi, target)
    plot_curves(at, {r"consensus part $V_\pi = \sum_i \pi^i\|\theta^i - \langle\theta\rangle\|^2$":
                     parts["consensus"],
                     r"single-agent part $\|\langle\theta\rangle - \theta^*_\pi\|^2$":
                     parts["average"]},
                logx=True, ax=ax2, xlabel=STEPS, ylabel="part of the error (per seed)",
                title=r"decomposition of the error, step $5/(t+51)$")
    ax2.title.set_fontsize(10)
    fig.tight_layout()
    return FigureOutput(fig, {"V_pi": Vs, "t": at, "consensus_part": parts["consensus"],
                              "average_part": parts["average"]},
                        {"alpha0_trials": trials, "L": L, "T_alpha0": T, "T": Tc,
                         "seeds": seeds, "alpha0_trials_seed": ctx.base_seed})
