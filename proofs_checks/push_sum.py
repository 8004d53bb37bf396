"""Claims about push-SA (Lin, Gupta, Liu eq. (9), Theorems 4 and 5): the push-sum invariants,
the straight-average limit over one-way links, and the O(log^2 t / t) rate.

Judges take explicit inputs so the tests can plant violations (corrupted weights y, a wrong
target, a slower curve). Reference values and derivations: ``docs/consensus_sa.md`` §7.
"""

from __future__ import annotations

import numpy as np

import decentral.graphs as g
from decentral.consensus_sa import (
    consensus_sa,
    limit,
    sa_params,
    weighted_error_from_moments,
)
from decentral.push_sum import exact_moments, push_sum_sa, push_weights_sequence
from decentral.runner import log_spaced_steps, run
from decentral.schedules import harmonic, step_size
from decentral.verify import CheckContext, Kind, Outcome, Verdict, combine_verdicts
from proofs_checks.consensus_sa.claims import (
    AGREEMENT_TOL,
    LGL,
    RATE_DESCRIPTIONS,
    agreement_entries,
    check_rate,
    judge_agreement,
    judge_limit,
    limit_batches,
)
from proofs_checks.consensus_sa.setups import (
    common_problem,
    random_linear_problem,
    random_row_stack,
)
from proofs_checks.registry import claim

DOCS = "docs/consensus_sa.md"


def ring_and_chords() -> tuple[np.ndarray, np.ndarray]:
    """The one-way graphs of the push-SA experiments: the directed 6-ring, and two chords
    3 -> 0, 1 -> 4 alone (each with self-loops); alternating them gives L = 2."""
    ring = g.ring(6)
    chords = g.add_self_loops(g.from_edges(6, [(3, 0), (1, 4)]))
    return ring, chords


def _push_record(state):
    return {"theta_tilde": state.theta_tilde, "y": state.y, "x": state.x}


# ---------------------------------------------------------------------------------------------
# 3. invariants
# ---------------------------------------------------------------------------------------------

def check_push_invariants(problem, W, alphas, theta_tilde, y, x, *, tol: float = 1e-12
                          ) -> Outcome:
    """Judge on recorded push-SA paths (``theta_tilde [S, T+1, N, d]``, ``y [S, T+1, N]``, chain
    states ``x [S, T+1]``, column-stochastic ``W [T, N, N]``, steps ``alphas [T]``):

    * sum_i y_t^i = N;
    * sum_i theta~_{t+1}^i - sum_i theta~_t^i = a_t sum_j (A(X_t) theta_t^j + b^j(X_t));
    * W~_t = W_t diag(y_t) / y_{t+1} is row-stochastic and y_t/N is its absolute probability
      sequence: (y_t/N)^T = (y_{t+1}/N)^T W~_t;
    * the product W~_{T-1} ... W~_0 is within 1e-10 of 1 1^T / N (a limit: if it is not yet
      but still shrinking, INCONCLUSIVE);
    * min y_t^i > 0 (reported beside the 1/N^{NL} order of the paper's lower bound).
    """
    N = W.shape[1]
    T = W.shape[0]
    sum_y = float(np.abs(y.sum(-1) - N).max())
    theta = theta_tilde / y[..., None]
    drift = np.einsum("stij,stnj->stni", problem.A[x[:, :-1]], theta[:, :-1]) + \
        problem.b[x[:, :-1]]
    cons = theta_tilde[:, 1:].sum(2) - theta_tilde[:, :-1].sum(2) - \
        alphas[None, :, None] * drift.sum(2)
    conservation = float(np.abs(cons).max())
    y0 = y[0]                                  # y is deterministic: the same on every path
    Wt = W * y0[:-1, None, :] / y0[1:, :, None]
    row = float(np.abs(Wt.sum(-1) - 1).max())
    aps = float(np.abs(y0[:-1] / N - np.einsum("ti,tij->tj", y0[1:] / N, Wt)).max())
    prod, gaps = np.eye(N), []
    for t in range(T):                         # host check: T products of N x N matrices
        prod = Wt[t] @ prod
        gaps.append(float(np.abs(prod - 1.0 / N).max()))
    product_gap = gaps[-1]
    y_same = float(np.abs(y - y[:1]).max())    # y is deterministic: equal on every path
    scale = max(1.0, float(np.abs(theta_tilde).max()))
    identities = (sum_y <= tol * N and conservation <= tol * scale and row <= tol and aps <= tol
                  and y_same <= tol and y.min() > 0)
    shrinking = product_gap < 0.5 * gaps[len(gaps) // 2]
    if not identities or not (product_gap <= 1e-10 or shrinking):
        verdict = Verdict.FAIL
    else:
        verdict = Verdict.PASS if product_gap <= 1e-10 else Verdict.INCONCLUSIVE
    checks = [("sum_y error", sum_y, tol * N), ("conservation", conservation, tol * scale),
              ("row sum error", row, tol), ("aps residual", aps, tol),
              ("y path spread", y_same, tol)]
    broken = [f"{name} {v:.2g} > {lim:.2g}" for name, v, lim in checks if not v <= lim]
    if not y.min() > 0:
        broken.append(f"min y {float(y.min()):.2g} <= 0")
    gap_text = f"product gap {product_gap:.2g} at T={T} (at T/2: {gaps[len(gaps) // 2]:.2g})"
    if verdict is Verdict.PASS:
        name, v, lim = max(checks, key=lambda c: c[1] / c[2] if c[2] > 0 else c[1])
        reason = (f"identities hold (worst: {name} {v:.2g} <= {lim:.2g}), min y "
                  f"{float(y.min()):.2g} > 0; product gap {product_gap:.2g} <= 1e-10 at T={T}")
    elif broken:
        more = f" and {len(broken) - 2} more" if len(broken) > 2 else ""
        reason = "identity broken: " + ", ".join(broken[:2]) + more
    elif verdict is Verdict.FAIL:
        reason = f"{gap_text} is above 1e-10 and no longer halving"
    else:
        reason = f"identities hold, but {gap_text} is above 1e-10 while still halving: T too short"
    return Outcome(
        verdict=verdict, reason=reason,
        measured={"sum_y_error": sum_y, "conservation_residual": conservation,
                  "row_sum_error": row, "aps_residual": aps, "product_gap": product_gap,
                  "y_min": float(y.min()), "y_max": float(y.max()),
                  "y_path_spread": y_same},
        headline=["sum_y_error", "conservation_residual", "product_gap"],
        descriptions={
            "sum_y_error": "max over paths and t of |sum_i y_t^i - N|",
            "conservation_residual": "max |sum_i theta~_{t+1}^i - sum_i theta~_t^i - a_t sum_j "
                                     "(A(X_t) theta_t^j + b^j(X_t))| (units of theta)",
            "row_sum_error": "max |row sums of W~_t - 1|",
            "aps_residual": "max |(y_t/N)^T - (y_{t+1}/N)^T W~_t|",
            "product_gap": "max entry of |W~_{T-1}...W~_0 - 11^T/N| at the horizon",
            "y_min": "smallest weight y_t^i seen (the paper's lower bound is of order "
                     "1/N^(NL))",
            "y_max": "largest weight y_t^i seen",
            "y_path_spread": "max |y_t - y_t of path 0| over paths (y does not depend on the "
                             "chain)"},
        threshold=f"identities <= {tol:g} (relative to max(1, scale)) and y > 0; the product "
                  "gap <= 1e-10 at T (PASS), still halving from T/2 to T (INCONCLUSIVE: longer "
                  "horizon), else FAIL",
        size=f"N={N}, T={T}, paths={theta_tilde.shape[0]}")


@claim("push_sum.invariants",
       statement="sum_i y_t^i = N; sum_i theta~ changes by exactly a_t sum_j (A theta^j + b^j); "
                 "W~_t = W^_t diag(y_t)/y_{t+1} is row-stochastic with absolute probability "
                 "sequence y_t/N; W~_t...W~_0 -> 11^T/N; y stays positive",
       source=f"{LGL}, Section 3 (push-SA analysis, eq. (9)); conservation derived in {DOCS} §7",
       kind=Kind.EXACT)
def _invariants(ctx: CheckContext) -> Outcome:
    rng = ctx.rng("push_sum.invariants")
    T = 800 if ctx.full else 200
    problem = random_linear_problem(rng, num_agents=6)
    W = random_row_stack(rng, 6, T, kind="column")
    step = harmonic(0.5, 10.0)
    seeds = list(range(ctx.base_seed, ctx.base_seed + ctx.seed_count(8, 32)))
    res = run(push_sum_sa(problem, g.explicit(W)), sa_params(step), seeds, T,
              record_fn=_push_record, record_initial=True, progress=False)
    r = {k: np.asarray(v) for k, v in res.records.items()}
    alphas = np.asarray(step_size(step, np.arange(T)), np.float64)
    return check_push_invariants(problem, W, alphas, r["theta_tilde"].astype(np.float64),
                                 r["y"].astype(np.float64), r["x"])


# ---------------------------------------------------------------------------------------------
# 8. the straight-average limit over one-way links (Theorem 4)
# ---------------------------------------------------------------------------------------------

def _final(alg, params, seeds, T, record_fn):
    res = run(alg, params, list(seeds), T, record_at=[T], record_fn=record_fn, progress=False)
    return np.asarray(res.records, np.float64)[:, 0]


def _push_theta(state):
    return state.theta


def _theta(state):
    return state.theta


def push_limit_setup(ctx: CheckContext) -> dict:
    ring, chords = ring_and_chords()
    problem = common_problem()
    T = 200_000 if ctx.full else 20_000
    push_seq = g.periodic([ring, chords], rule="column")
    row_seq = g.periodic([ring, chords], rule="row")
    pis = g.absolute_probability_sequence(row_seq, 1)
    return dict(problem=problem, push_seq=push_seq, row_seq=row_seq, num_steps=T,
                params=sa_params(harmonic(5.0, 51.0)), row_pi=pis.mean(axis=0))


def check_push_limit(problem, push_seq, row_seq, params, num_steps, row_pi, *, batch: int,
                     max_seeds: int, fixed_seeds: int | None = None, base_seed: int = 0,
                     claimed=None) -> Outcome:
    """Judge: push-SA reaches theta*_unif (unweighted errors, :func:`judge_limit`), while
    row-normalised consensus SA on the same graphs reaches theta*_pibar (pibar: the period
    average of its absolute probability sequence), a different point. Each judgement draws
    batches of ``batch`` seeds from ``base_seed`` up to ``max_seeds`` (``fixed_seeds``:
    exactly that many). ``claimed`` (default theta*_unif) lets a test plant a wrong target."""
    unif = np.full(problem.num_agents, 1 / problem.num_agents)
    target = limit(problem, unif) if claimed is None else claimed
    rival = limit(problem, row_pi)

    seeds_of = CheckContext(base_seed=base_seed).batch_seeds

    def draws(alg, record_fn):
        def draw(k):
            return _final(alg, params, seeds_of(k, batch), num_steps, record_fn)
        return draw

    plan = {"batch": batch, "max_seeds": max_seeds, "fixed_seeds": fixed_seeds}
    v_push, m_push, e_push = judge_limit(draws(push_sum_sa(problem, push_seq), _push_theta),
                                         target, rival, unif, **plan)
    v_row, m_row, _ = judge_limit(draws(consensus_sa(problem, row_seq), _theta), rival,
                                  target, unif, **plan)
    mom = exact_moments(problem, push_seq, params, num_steps, record_at=[num_steps])
    exact = float(weighted_error_from_moments(mom, np.ones(problem.num_agents), target)[0])
    # The same expectation by Monte Carlo: sum_i ||theta_T^i - target||^2 per seed.
    errors = problem.num_agents * e_push
    check = judge_agreement(lambda k: errors, exact, batch=errors.size, max_seeds=errors.size,
                            fixed_seeds=errors.size)
    mc_measured, mc_descriptions, details = agreement_entries(
        check, what="sum_i ||theta_T^i - theta*_unif||^2 of push-SA",
        exact_key="push_exact_unweighted_error")
    # A decided disagreement fails the claim; an undecided one is reported beside it.
    verdict = Verdict.FAIL if check.verdict is Verdict.FAIL else combine_verdicts([v_push, v_row])
    y = push_weights_sequence(push_seq, 2)[1]
    return Outcome(
        verdict=verdict,
        measured={"push_error_to_unif": m_push["error_to_claimed"],
                  "push_error_to_unif_ci": m_push["error_to_claimed_ci"],
                  "push_error_to_row_limit": m_push["error_to_rival"],
                  "row_error_to_own_limit": m_row["error_to_claimed"],
                  "row_error_to_unif": m_row["error_to_rival"],
                  "separation_squared": m_push["separation_squared"],
                  "push_exact_unweighted_error": exact,
                  "seeds_used": max(m_push["seeds_used"], m_row["seeds_used"]),
                  "alpha": 0.05,
                  "y_range": [float(y.min()), float(y.max())]} | mc_measured,
        headline=["push_error_to_unif", "row_error_to_unif", "separation_squared"],
        descriptions={
            "push_error_to_unif": "push-SA: mean over seeds of (1/N) sum_i ||theta_T^i - "
                                  "theta*_unif||^2 (units of theta^2; the claimed target, "
                                  "theta*_unif unless a test plants another)",
            "push_error_to_unif_ci": "repeated 97.5 % interval (group-sequential CLT)",
            "seeds_used": "most seeds either judgement drew before it was decided (or the "
                          "budget)",
            "alpha": "family-wise error rate of each judgement (two means, all looks)",
            "push_error_to_row_limit": "push-SA: the same error to theta*_pibar",
            "row_error_to_own_limit": "row-normalised consensus SA: error to theta*_pibar",
            "row_error_to_unif": "row-normalised consensus SA: error to theta*_unif",
            "separation_squared": "||theta*_unif - theta*_pibar||^2",
            "push_exact_unweighted_error": "exact E sum_i ||theta_T^i - theta*_unif||^2 of "
                                           "push-SA (oracle; N times the mean error above)",
            "y_range": "min and max of y_t over one period (push-sum weights; not near 1)"}
        | mc_descriptions,
        reason=(f"push-SA {v_push.value}: error to theta*_unif "
                f"{m_push['error_to_claimed'] / m_push['separation_squared']:.2g} d^2; "
                f"row-normalised SA {v_row.value}: error to its own limit "
                f"{m_row['error_to_claimed'] / m_row['separation_squared']:.2g} d^2; "
                f"{m_push['seeds_used']} and {m_row['seeds_used']} seeds, alpha 0.05 each; "
                f"exact vs Monte Carlo {check.verdict.value}"),
        threshold="both: error to the own limit CI upper <= 0.1 d^2 and to the other CI lower "
                  ">= 0.5 d^2 (push-SA: theta*_unif; consensus SA: theta*_pibar); the exact "
                  f"push-SA error within {AGREEMENT_TOL:g} relative of its Monte-Carlo interval; "
                  "sequential over batches of seeds, family-wise alpha 0.05 per judgement",
        details=details,
        size=f"N={problem.num_agents}, T={num_steps}, seeds="
             f"{max(m_push['seeds_used'], m_row['seeds_used'])} of at most {max_seeds}")


@claim("push_sum.limit_point",
       statement="over one-way, uniformly strongly connected graphs push-SA's theta_t^i = "
                 "theta~_t^i / y_t^i -> theta*_unif in mean square, while row-normalised "
                 "consensus SA on the same graphs converges elsewhere",
       source=f"{LGL}, Theorem 4; {DOCS} §7", kind=Kind.STATISTICAL)
def _limit_point(ctx: CheckContext) -> Outcome:
    return check_push_limit(**push_limit_setup(ctx), **limit_batches(ctx))


# ---------------------------------------------------------------------------------------------
# 11. rate (Theorem 5)
# ---------------------------------------------------------------------------------------------

def _push_gap(state):
    theta = state.theta
    return ((theta.mean(0) - state.theta_tilde.mean(0)) ** 2).sum() ** 0.5


def check_push_rate(problem, seq, alpha0, t0, num_steps, seeds=None) -> Outcome:
    """Judge Theorem 5's shape on the exact expected unweighted error of push-SA
    (:func:`~proofs_checks.consensus_sa.claims.check_rate`), and that
    ||<theta>_t - <theta~>_t|| -> 0 (Monte Carlo: its seed mean at T below a tenth of its
    value at T/100; reported when ``seeds`` is None: not judged)."""
    unif = np.full(problem.num_agents, 1 / problem.num_agents)
    target = limit(problem, unif)
    rec = log_spaced_steps(num_steps, 60)
    params = sa_params(harmonic(alpha0, t0))
    mom = exact_moments(problem, seq, params, num_steps, record_at=rec)
    err = weighted_error_from_moments(mom, np.ones(problem.num_agents), target)
    verdict, measured = check_rate(rec, err, what="mse")
    measured["mse_at_T"] = float(err[-1])
    if seeds is not None:
        at = log_spaced_steps(num_steps, 12)
        res = run(push_sum_sa(problem, seq), params, list(seeds), num_steps, record_at=at,
                  record_fn=_push_gap, progress=False)
        gap = np.asarray(res.records, np.float64).mean(0)
        early = gap[np.searchsorted(at, num_steps // 100)]
        measured["average_gap_at_T"] = float(gap[-1])
        measured["average_gap_at_T_over_100"] = float(early)
        if gap[-1] > 0.1 * early:
            verdict = Verdict.FAIL
    reason = (f"exact error: slope {measured['mse_slope']:.2f} against at most "
              f"{measured['allowed_slope']:.2f}, t*MSE/log^2 t grew x"
              f"{measured['t_err_over_log2t_growth']:.2f} (at most 1.05) over the last decade")
    if "average_gap_at_T" in measured:
        reason += (f"; ||<theta> - <theta~>|| fell from {measured['average_gap_at_T_over_100']:.2g}"
                   f" at T/100 to {measured['average_gap_at_T']:.2g} at T")
    return Outcome(
        verdict=verdict, measured=measured, headline=["mse_slope", "allowed_slope"],
        descriptions={k: v for k, v in (RATE_DESCRIPTIONS | {
            "mse_at_T": "exact E sum_i ||theta_T^i - theta*_unif||^2 (units of theta^2)",
            "average_gap_at_T": "seed mean of ||<theta>_T - <theta~>_T|| (plain averages over "
                                "agents; units of theta)",
            "average_gap_at_T_over_100": "the same at T/100"}).items() if k in measured},
        threshold="log-log slope over the last decade <= -1 + 2/ln(t_start), t*MSE/log^2 t "
                  "grows <= 5% over it, and ||<theta> - <theta~>|| at T <= 0.1 x its value at "
                  "T/100",
        reason=reason,
        size=f"N={problem.num_agents}, alpha_t={alpha0:g}/(t+{t0:g}), T={num_steps}")


@claim("push_sum.diminishing_step_rate",
       statement="with alpha_t = alpha0/(t+1), alpha0 >= gamma_max/0.9, push-SA's sum_i "
                 "E||theta_t^i - theta*||^2 = O(log^2 t/t) + O((1/t) sum mu_k), and "
                 "||<theta>_t - <theta~>_t|| -> 0",
       source=f"{LGL}, Theorem 5; {DOCS} §7", kind=Kind.RATE)
def _rate(ctx: CheckContext) -> Outcome:
    from decentral.consensus_sa import bound_quantities

    problem = common_problem()
    ring, chords = ring_and_chords()
    seq = g.periodic([ring, chords], rule="column")
    gamma_max = bound_quantities(problem, g.static(g.row_stochastic(g.complete(6))), 0.01,
                                 horizon=10).gamma_max
    seeds = range(ctx.base_seed, ctx.base_seed + ctx.seed_count(64, 200))
    return check_push_rate(problem, seq, gamma_max / 0.9, 1.0, 100_000 if ctx.full else 20_000,
                           seeds)

