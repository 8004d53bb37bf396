"""Figure equivalents A-G for Lin, Gupta, Liu, *Finite-Time Error Bounds for Distributed Linear
Stochastic Approximation*.

The paper has no numerical experiments: these are **figure equivalents** of its claims, not
reproductions of paper figures (``docs/consensus_sa.md``). All use distributed TD(0) on the common
random MRP (8 states, 3 features, 6 agents, discount 0.8) and float64; Monte-Carlo curves are
means over seeds with a 10-90% band, and where the exact-moment oracle applies its curve is drawn
dashed beside them.

* A — the limit depends on pi (Theorem 2): per-agent error to theta*_pi and to theta*_unif.
* B — constant step (eq. (7)): geometric decay to a plateau, for several alpha; plateau vs alpha.
* C — diminishing step (eq. (8)): MSE vs t (log-log) and t*MSE/log^2 t.
* D — time-varying graphs sharing pi (A6 holds): the limit is theta*_pi.
* E — A6 violated (Remark 3): consensus holds, the average keeps moving between two limits.
* F — push-SA vs consensus SA on the same one-way graphs (Theorems 4, 5), and y_t.
* G — alpha = 0 diagnostics (V_pi non-increasing, window ratios vs the bound) and the
  decomposition of the error into consensus and single-agent parts.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

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
from decentral.plotting import plot_curves
from decentral.push_sum import exact_moments as push_exact_moments
from decentral.push_sum import push_sum_sa, push_weights_sequence
from decentral.runner import log_spaced_steps, run
from decentral.schedules import constant, harmonic
from figures.registry import FigureContext, FigureOutput, figure
from proofs_checks.consensus_sa import (
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
    problem, W = common_problem(), chord_weights()
    pi = g.perron_vector(W)
    t_pi, t_unif = limit(problem, pi), limit(problem, np.full(6, 1 / 6))
    T = ctx.pick(tiny=300, quick=20_000, full=200_000)
    at = log_spaced_steps(T, ctx.pick(tiny=6, quick=30, full=40))
    params = sa_params(harmonic(5.0, 51.0))
    seeds = _seeds(ctx, 64, 256)
    theta = _mc(consensus_sa(problem, g.static(W)), params, seeds, T, at)
    per_agent_pi = ((theta - t_pi) ** 2).sum(-1).mean(-1)           # mean over agents
    per_agent_unif = ((theta - t_unif) ** 2).sum(-1).mean(-1)
    mom = exact_moments(problem, g.static(W), params, T, record_at=at)
    exact = weighted_error_from_moments(mom, np.full(6, 1 / 6), t_pi)
    fig, ax = plot_curves(at, {"to theta*_pi (Monte Carlo)": per_agent_pi,
                               "to theta*_unif (Monte Carlo)": per_agent_unif},
                          logx=True, xlabel="t", ylabel="(1/N) sum_i ||theta_t^i - target||^2",
                          title="A: the limit is theta*_pi (pi = Perron vector)")
    plot_curves(at, {"to theta*_pi (exact)": exact}, logx=True, ax=ax, linestyle="--")
    ax.axhline(float(((t_pi - t_unif) ** 2).sum()), color="k", linestyle=":", linewidth=1,
               label="||theta*_pi - theta*_unif||^2")
    ax.legend(fontsize=7)
    data = {"t": at, "error_to_pi": per_agent_pi, "error_to_unif": per_agent_unif,
            "exact_error_to_pi": exact, "pi": pi}
    return FigureOutput(fig, data, {"T": T, "step": "5/(t+51)", "graph": "ring + chord 3->0",
                                    "seeds": seeds})


@figure("consensus_sa.b_constant_step",
        title="B: constant step: geometric decay to a plateau; plateau against alpha",
        paper=f"{PAPER}, Theorem 3 eq. (7); claim consensus_sa.constant_step_plateau")
def fig_b(ctx: FigureContext) -> FigureOutput:
    problem, W = common_problem(), chord_weights()
    seq = g.static(W)
    pi = g.perron_vector(W)
    target = limit(problem, pi)
    alphas = ctx.pick(tiny=[0.04], quick=[0.04, 0.02, 0.01, 0.005],
                      full=[0.04, 0.02, 0.01, 0.005, 0.0025])
    T = ctx.pick(tiny=200, quick=3000, full=8000)
    at = np.unique(np.linspace(0, T, 200).astype(np.int64))
    theta0 = 3.0 * np.random.default_rng(0).standard_normal((6, 3))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    data: dict[str, Any] = {"t": at, "alphas": np.asarray(alphas)}
    plateaus = []
    for a in alphas:
        mom = exact_moments(problem, seq, sa_params(constant(a), theta0=theta0), T,
                            record_at=at)
        err = weighted_error_from_moments(mom, pi, target)
        data[f"exact_alpha_{a:g}"] = err
        plateaus.append(err[-1])
        plot_curves(at, {f"alpha={a:g} (exact)": err}, ax=ax)
    a_mc = alphas[-1]
    seeds = _seeds(ctx, 64, 256)
    theta = _mc(consensus_sa(problem, seq), sa_params(constant(a_mc), theta0=theta0), seeds, T,
                at[1:])
    mc = error_parts(theta, pi, target)["weighted"]
    data["monte_carlo_t"] = at[1:]
    data[f"monte_carlo_alpha_{a_mc:g}"] = mc
    plot_curves(at[1:], {f"alpha={a_mc:g} (Monte Carlo)": mc}, ax=ax, linestyle=":")
    ax.set_title("B: E sum_i pi^i ||theta_t^i - theta*||^2, theta_0 far")
    ax.set_xlabel("t")
    ax.legend(fontsize=7)
    ax2.loglog(alphas, plateaus, "o-")
    ax2.set_xlabel("alpha")
    ax2.set_ylabel("plateau (exact, at T)")
    ax2.set_title("plateau vs alpha (slope reported by the claim)")
    fig.tight_layout()
    data["plateaus"] = np.asarray(plateaus)
    return FigureOutput(fig, data, {"T": T, "alphas": alphas, "theta0": "3 N(0, I), seed 0",
                                    "seeds": seeds, "monte_carlo_alpha": a_mc})


@figure("consensus_sa.c_diminishing_step",
        title="C: diminishing step: MSE vs t and t*MSE/log^2 t",
        paper=f"{PAPER}, Theorem 3 eq. (8); claim consensus_sa.diminishing_step_rate")
def fig_c(ctx: FigureContext) -> FigureOutput:
    problem, W = common_problem(), chord_weights()
    seq = g.static(W)
    pi = g.perron_vector(W)
    target = limit(problem, pi)
    gamma_max = bound_quantities(problem, seq, 0.01, horizon=10).gamma_max
    T = ctx.pick(tiny=300, quick=20_000, full=200_000)
    at = log_spaced_steps(T, ctx.pick(tiny=8, quick=40, full=60))
    steps = {f"alpha0/(t+1), alpha0 = gamma_max/0.9 = {gamma_max / 0.9:.3g}":
             harmonic(gamma_max / 0.9, 1.0), "5/(t+51) (shifted variant)": harmonic(5.0, 51.0)}
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    data: dict[str, Any] = {"t": at}
    for k, (label, sched) in enumerate(steps.items()):
        mom = exact_moments(problem, seq, sa_params(sched), T, record_at=at)
        err = weighted_error_from_moments(mom, pi, target)
        data[f"exact_{k}"] = err
        plot_curves(at, {label: err}, logx=True, ax=ax, linestyle="--")
        ratio = at * err / np.log(np.maximum(at, 2)) ** 2
        ax2.semilogx(at, ratio, label=label)
        data[f"t_mse_over_log2_{k}"] = ratio
    ax.plot(at, at[-1] * data["exact_0"][-1] / at, "k:", label="1/t reference")
    ax.set_title("C: exact E sum_i pi^i ||theta_t^i - theta*||^2")
    ax.legend(fontsize=7)
    ax2.set_title("t * MSE / log^2 t (bounded under eq. (8))")
    ax2.set_xlabel("t")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return FigureOutput(fig, data, {"T": T, "steps": list(steps), "gamma_max": gamma_max,
                                    "seeds": [], "method": "exact moments (no sampling)"})


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
    fig, ax = plot_curves(at, {"to theta*_pi (Monte Carlo)": e_pi,
                               "to theta*_unif (Monte Carlo)": e_unif}, logx=True,
                          ylabel="sum_i pi^i ||theta_t^i - target||^2",
                          title="D: sub-cycles W_t = I - c D_pi^-1 L_t in random order")
    plot_curves(at, {"to theta*_pi (exact)": exact}, logx=True, ax=ax, linestyle="--")
    ax.legend(fontsize=7)
    return FigureOutput(fig, {"t": at, "error_to_pi": e_pi, "error_to_unif": e_unif,
                              "exact_error_to_pi": exact},
                        {"T": T, "pi": PRESCRIBED_PI.tolist(), "step": "5/(t+51)",
                         "seeds": seeds, "graph_order_seed": ctx.base_seed})


@figure("consensus_sa.e_a6_violated",
        title="E: A6 violated (two Perron vectors on doubling epochs): consensus, no convergence",
        paper=f"{PAPER}, Theorem 1, Remark 3; claims consensus_sa.consensus_without_a6, "
              "consensus_sa.no_convergence_without_a6")
def fig_e(ctx: FigureContext) -> FigureOutput:
    problem = common_problem()
    Wa, Wb = chord_weights(), other_chord_weights()
    T = ctx.pick(tiny=2 ** 9, quick=2 ** 15, full=2 ** 18)
    seeds = _seeds(ctx, 64, 200)
    at, avg, dev = run_epochs(problem, Wa, Wb, T, seeds)
    ta, tb = limit(problem, g.perron_vector(Wa)), limit(problem, g.perron_vector(Wb))
    to_a = np.linalg.norm(avg - ta, axis=-1)
    to_b = np.linalg.norm(avg - tb, axis=-1)
    fig, ax = plot_curves(at, {"||<theta> - theta*_pi_a||": to_a,
                               "||<theta> - theta*_pi_b||": to_b,
                               "max_i ||theta^i - <theta>|| (consensus)": dev}, logx=True,
                          xlabel="t (epoch ends 2^k)", ylabel="distance (units of theta)",
                          title="E: W_a on even epochs, W_b on odd ones; step 5/(t+51)")
    ax.axhline(float(np.linalg.norm(ta - tb)), color="k", linestyle=":", linewidth=1,
               label="||theta*_a - theta*_b||")
    ax.legend(fontsize=7)
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
    problem = common_problem()
    ring, chords = ring_and_chords()
    push_seq = g.periodic([ring, chords], rule="column")
    row_seq = g.periodic([ring, chords], rule="row")
    t_unif = limit(problem, np.full(6, 1 / 6))
    T = ctx.pick(tiny=300, quick=20_000, full=200_000)
    at = log_spaced_steps(T, ctx.pick(tiny=6, quick=30, full=40))
    params = sa_params(harmonic(5.0, 51.0))
    seeds = _seeds(ctx, 64, 256)
    push = _mc(push_sum_sa(problem, push_seq), params, seeds, T, at)
    cons = _mc(consensus_sa(problem, row_seq), params, seeds, T, at)
    e_push = ((push - t_unif) ** 2).sum((-1, -2))
    e_cons = ((cons - t_unif) ** 2).sum((-1, -2))
    mom = push_exact_moments(problem, push_seq, params, T, record_at=at)
    exact = weighted_error_from_moments(mom, np.ones(6), t_unif)
    _, y = push_weights_sequence(push_seq, 12)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    plot_curves(at, {"push-SA (Monte Carlo)": e_push, "consensus SA, row weights": e_cons},
                logx=True, ax=ax, ylabel="sum_i ||theta_t^i - theta*_unif||^2")
    plot_curves(at, {"push-SA (exact)": exact}, logx=True, ax=ax, linestyle="--")
    ax.set_title("F: error to theta*_unif; ring / chords alternating (L = 2)")
    ax.legend(fontsize=7)
    ax2.plot(np.arange(13), y, marker=".")
    ax2.set_xlabel("t")
    ax2.set_ylabel("y_t^i (one line per agent)")
    ax2.set_title("push-sum weights over 12 steps")
    fig.tight_layout()
    return FigureOutput(fig, {"t": at, "push_error": e_push, "consensus_error": e_cons,
                              "push_exact_error": exact, "y": y},
                        {"T": T, "step": "5/(t+51)", "graphs": "ring, chords 3->0 and 1->4",
                         "seeds": seeds})


@figure("consensus_sa.g_consensus_diagnostics",
        title="G: alpha = 0: V_pi non-increasing and per-window ratios vs the bound; the "
              "decomposition of the error (consensus vs single-agent part)",
        paper=f"{PAPER}, eq. (6) at alpha -> 0; proof of Theorem 3; claims "
              "consensus_sa.comparison_function, consensus_sa.error_decomposition")
def fig_g(ctx: FigureContext) -> FigureOutput:
    rng = np.random.default_rng(ctx.base_seed)
    L, T = 3, 45
    trials = ctx.pick(tiny=3, quick=8, full=20)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
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
        ax.semilogy(np.arange(T + 1), v, linewidth=0.8)
    ax.set_xlabel("t")
    ax.set_ylabel("V_pi(t)")
    ax.set_title(f"G: alpha = 0, {trials} random sequences (N=5, L=3)")
    problem, W = common_problem(), chord_weights()
    pi = g.perron_vector(W)
    target = limit(problem, pi)
    Tc = ctx.pick(tiny=300, quick=20_000, full=100_000)
    at = log_spaced_steps(Tc, ctx.pick(tiny=6, quick=30, full=40))
    seeds = _seeds(ctx, 64, 200)
    theta = _mc(consensus_sa(problem, g.static(W)), sa_params(harmonic(5.0, 51.0)), seeds, Tc,
                at)
    parts = error_parts(theta, pi, target)
    plot_curves(at, {"consensus part V_pi": parts["consensus"],
                     "single-agent part ||<theta> - theta*||^2": parts["average"]},
                logx=True, ax=ax2)
    ax2.set_title("decomposition, step 5/(t+51)")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return FigureOutput(fig, {"V_pi": Vs, "t": at, "consensus_part": parts["consensus"],
                              "average_part": parts["average"]},
                        {"alpha0_trials": trials, "L": L, "T_alpha0": T, "T": Tc,
                         "seeds": seeds, "alpha0_trials_seed": ctx.base_seed})
