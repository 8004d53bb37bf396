"""Claims about graphs: robustness values, absolute probability sequences, plain consensus.

Each claim is a registered wrapper around a pure *judge* function (``check_*``) that takes its
inputs explicitly, so the tests can feed the same judge a planted violation (a wrong π, a
wrong robustness value, a wrong consensus target) and see it return FAIL.

Sources: LeBlanc, Zhang, Koutsoukos, Sundaram, "Resilient Asymptotic Consensus in Robust
Networks", IEEE JSAC 31(4) 2013 (r-robustness); Usevitch & Panagou (r-robustness as a MILP);
Lin, Gupta, Liu, "Finite-Time Error Bounds for Distributed Linear Stochastic Approximation"
(absolute probability sequence, Definition 2 and Lemma 1); classical consensus
x(t+1) = W(t) x(t) (Touri 2012; Nedić & Liu 2017): on a uniformly strongly connected
row-stochastic sequence with positive diagonals, x(t) → 1 π_0ᵀ x(0) geometrically. The reference
values these claims compare with (robustness of the test graphs, the prescribed-π construction,
the Perron vector of the ring with a chord, the consensus limit and the rules that judge it) are
derived in ``docs/graphs.md``.
"""

from __future__ import annotations

import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import decentral.graphs as g
from decentral.consensus import consensus
from decentral.plotting import plot_curves, plt
from decentral.runner import run, seed_keys
from decentral.verify import CheckContext, Kind, Outcome, Verdict
from decentral.verify.stats import geometric_rate
from proofs_checks.registry import claim

LEBLANC = "LeBlanc, Zhang, Koutsoukos, Sundaram, IEEE JSAC 31(4) 2013"
LGL = "Lin, Gupta, Liu, Finite-Time Error Bounds for Distributed Linear SA"
DOCS = "docs/graphs.md"


# ---------------------------------------------------------------------------------------------
# Robustness
# ---------------------------------------------------------------------------------------------

def robustness_cases() -> list[tuple[str, np.ndarray, int]]:
    """(name, adjacency, expected r): K_n is ceil(n/2)-robust and a directed ring 1-robust
    (LeBlanc et al. 2013); the 5-agent circulant where i hears i+1, i+2, i+3 is exactly
    2-robust (derived in docs/graphs.md §1)."""
    cases = [(f"K_{n}", g.complete(n), math.ceil(n / 2)) for n in range(2, 10)]
    cases += [(f"directed ring C_{n}", g.ring(n), 1) for n in (3, 5, 8)]
    cases.append(("5 agents, i hears i+1..i+3 (resilient AC graph)", g.circulant(5, [-1, -2, -3]),
                  2))
    return cases


def check_robustness(cases: list[tuple[str, np.ndarray, int]]) -> Outcome:
    """Judge: every graph's computed r-robustness equals its stated value (exact)."""
    rows = {}
    wrong = []
    for name, adj, expected in cases:
        r = g.r_robustness(adj)
        rows[name] = {"expected": expected, "computed": r}
        if r != expected:
            wrong.append(name)
    if wrong:
        first = rows[wrong[0]]
        reason = (f"{len(wrong)} of {len(cases)} graphs' computed r differs from the stated one "
                  f"(first: {wrong[0]}: r={first['computed']}, stated {first['expected']})")
    else:
        reason = f"all {len(cases)} graphs' computed r-robustness equals the stated value"
    return Outcome(
        verdict=Verdict.FAIL if wrong else Verdict.PASS, reason=reason,
        measured={"cases": rows, "mismatches": wrong}, headline=["mismatches"],
        descriptions={"cases": "graph -> stated r and the r computed by exact enumeration "
                               "(largest r such that the graph is r-robust; an integer)",
                      "mismatches": "graphs whose computed r differs from the stated one"},
        threshold="computed r == stated r for every graph",
        details="" if not wrong else f"mismatch on {wrong}",
        size=f"{len(cases)} graphs",
    )


@claim("graphs.robustness_known_values",
       statement="K_n is ceil(n/2)-robust; a directed ring is 1-robust; the 5-agent graph where "
                 "i hears i+1, i+2, i+3 (mod 5) is exactly 2-robust",
       source=f"{LEBLANC} (K_n, rings); {DOCS} §1 (the 5-agent circulant)", kind=Kind.EXACT)
def _robustness_known_values(ctx: CheckContext) -> Outcome:
    return check_robustness(robustness_cases())


def check_enumeration_equals_milp(adjs: list[np.ndarray]) -> Outcome:
    """Judge: exact enumeration and the MILP (Usevitch & Panagou) agree on every graph."""
    disagree = []
    for k, adj in enumerate(adjs):
        a, b = g.r_robustness(adj, method="enumerate"), g.r_robustness(adj, method="milp")
        if a != b:
            disagree.append({"graph": k, "enumerate": a, "milp": b})
    if disagree:
        d = disagree[0]
        reason = (f"{len(disagree)} of {len(adjs)} digraphs get a different r from enumeration "
                  f"and MILP (first: graph {d['graph']}, r={d['enumerate']} vs MILP {d['milp']})")
    else:
        reason = f"enumeration and MILP give the same r on all {len(adjs)} digraphs"
    return Outcome(
        verdict=Verdict.FAIL if disagree else Verdict.PASS, reason=reason,
        measured={"graphs": len(adjs), "disagreements": disagree},
        descriptions={"graphs": "number of random digraphs compared",
                      "disagreements": "graphs where the two methods gave different r (graph "
                                       "index, r by enumeration, r by MILP)"},
        threshold="enumeration == MILP on every graph",
        size=f"{len(adjs)} random digraphs, n in 4..9",
    )


@claim("graphs.robustness_milp_agrees",
       statement="the MILP formulation of r-robustness gives the exact enumeration's value",
       source="Usevitch & Panagou, arXiv 1810.01784 / 1901.11000", kind=Kind.EXACT)
def _robustness_milp_agrees(ctx: CheckContext) -> Outcome:
    rng = np.random.default_rng(ctx.base_seed)
    count = 60 if ctx.full else 15
    adjs = []
    for _ in range(count):
        n = int(rng.integers(4, 10))
        adjs.append(g.add_self_loops(rng.random((n, n)) < rng.uniform(0.3, 0.9)))
    return check_enumeration_equals_milp(adjs)


# ---------------------------------------------------------------------------------------------
# Absolute probability sequences
# ---------------------------------------------------------------------------------------------

def prescribed_pi_subcycles(n: int = 6) -> list[np.ndarray]:
    """Three weight-balanced sub-graphs (unions of directed cycles) whose pairwise unions are
    strongly connected: two 3-cycles, an interleaving 6-cycle, and a reversed 6-cycle."""
    assert n == 6
    return [
        g.from_edges(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]),
        g.from_edges(6, [(0, 3), (3, 1), (1, 4), (4, 2), (2, 5), (5, 0)]),
        g.from_edges(6, [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (0, 5)]),
    ]


PRESCRIBED_PI = np.array([0.30, 0.20, 0.15, 0.15, 0.12, 0.08])


def prescribed_pi_stack(num_steps: int, seed: int, pi: np.ndarray = PRESCRIBED_PI) -> np.ndarray:
    """Explicit stack of W_t = I − c D_π⁻¹ L_t over sub-cycles drawn at random (every W_t has
    left eigenvector π; docs/graphs.md §2)."""
    subs = [g.prescribed_pi_weights(a, pi) for a in prescribed_pi_subcycles()]
    order = np.random.default_rng(seed).integers(len(subs), size=num_steps)
    return np.stack([subs[k] for k in order])


def check_aps_recovers(seq, num_steps: int, pi_known: np.ndarray, *, tol: float = 1e-12
                       ) -> Outcome:
    """Judge: the absolute probability sequence computed by backward recursion equals a known π
    at every t (exact, float64)."""
    info = g.absolute_probability_sequence(seq, num_steps, return_info=True)
    err_t = np.max(np.abs(info.pi - pi_known[None]), axis=1)        # [T + 1]
    err = float(np.max(err_t))
    if err <= tol:
        reason = f"max_t,i |pi_t^i - pi^i| = {err:.2g} <= {tol:g} over t = 0..{num_steps}"
    else:
        bad = np.flatnonzero(~(err_t <= tol))
        reason = (f"max_t,i |pi_t^i - pi^i| = {err:.2g} > {tol:g}; {bad.size} of "
                  f"{err_t.size} steps off (first t={int(bad[0])})")
    return Outcome(
        verdict=Verdict.PASS if err <= tol else Verdict.FAIL, reason=reason,
        measured={"max_abs_error": err, "recursion_error_estimate": info.error,
                  "horizon": info.horizon, "exact_form": info.exact},
        descriptions={
            "max_abs_error": "max over t <= T and agents i of |pi_t^i - pi^i| (probability, "
                             "dimensionless)",
            "recursion_error_estimate": "change of pi_0..pi_T between the last two horizons of "
                                        "the backward recursion (its accuracy estimate)",
            "horizon": "step H where the backward recursion started from uniform pi_H: "
                       "2T + 64 at first, H - T doubled until pi_0..pi_T changed < 1e-13 "
                       "(a step count, not T)",
            "exact_form": "True if pi came from a closed form (static or periodic sequence) "
                          "instead of the backward recursion",
        },
        threshold=f"max_t max_i |pi_t^i - pi^i| <= {tol:g}",
        size=f"N={len(pi_known)}, T={num_steps}",
    )


@claim("graphs.aps_prescribed_pi",
       statement="for a time-varying sequence W_t = I - c D_pi^-1 L_t on weight-balanced "
                 "sub-cycles (non-doubly stochastic), the absolute probability sequence is the "
                 "prescribed pi at every t",
       source=f"{LGL}, Definition 2 and Lemma 1 (uniqueness); construction: {DOCS} §2",
       kind=Kind.EXACT)
def _aps_prescribed_pi(ctx: CheckContext) -> Outcome:
    steps = 2000 if ctx.full else 300
    stack = prescribed_pi_stack(8 * steps, ctx.base_seed)
    return check_aps_recovers(g.explicit(stack), steps, PRESCRIBED_PI)


# ---------------------------------------------------------------------------------------------
# Plain consensus x(t+1) = W(t) x(t), run through the runner over many seeds
# ---------------------------------------------------------------------------------------------

def initial_values(seq: g.GraphSequence, seeds: list[int]) -> np.ndarray:
    """``[S, N]`` the x(0) each seed starts from in :func:`decentral.consensus.consensus` (drawn
    from N(0, I) with the seed's init key, :func:`decentral.runner.seed_keys`), on the host."""
    alg = _consensus_for(seq)
    init = jax.jit(alg.init)
    return np.stack([np.asarray(init(seed_keys(s)[0], None).x) for s in seeds])


def _consensus_for(seq: g.GraphSequence):
    per_seed = seq.form == "random" and not seq.shared_across_seeds
    return consensus(seq, per_seed_graphs=per_seed)


#: What each measured number of :func:`check_consensus_limit` is (printed in the report). x is
#: dimensionless: x(0) ~ N(0, I), so errors and spreads are in units of one standard deviation
#: of the initial values.
CONSENSUS_DESCRIPTIONS = {
    "final_max_error": "max over seeds and agents of |x_i(T) - c| at the last step T, c = "
                       "w^T x(0) the claimed limit (units of x)",
    "final_max_spread": "max over seeds of max_i x_i(T) - min_i x_i(T) (units of x)",
    "initial_mean_error": "mean over seeds of max_i |x_i(0) - c| (units of x), the scale the "
                          "error starts from",
    "paths_converged": "number of seeds whose error at T is <= the tolerance",
    "paths": "number of seeds (sample paths, independent draws of x(0))",
    "path_failure_prob_upper95": "one-sided 95% upper bound 1 - 0.05^(1/S) on the probability "
                                 "that a path fails, given none of the S paths failed",
    "rate_per_step": "geometric contraction factor per step of the seed-mean error: "
                     "exp(slope) of log(mean error) against t on the fit window; 0.7 means "
                     "the error shrinks by 30% per step",
    "rate_ci": "95% bootstrap interval (over seeds) of rate_per_step; lower = upper with one "
               "seed (an exact fit, no interval)",
    "fit_window": "first and last step t of the rate fit: the steps where the mean error is "
                  "above the round-off floor 1e-12",
    "graph_draws": "whether the graphs are deterministic, one random realisation shared by "
                   "all seeds, or drawn per seed",
    "limit_outside_hull": "max over seeds and t of (max_i |x_i(t) - c|) - spread(t): > 0 means "
                          "c left the agents' convex hull (units of x); <= 1e-10 passes",
    "max_spread_growth": "max over seeds and t of spread(t+1) - spread(t) - 1e-10 (1 + "
                         "spread(t)), the one-step hull growth beyond the round-off allowance "
                         "(units of x); <= 0 means the hull never grew, and -1e-10 is its "
                         "value once the spread has reached 0",
    "paths_without_consensus": "seeds whose spread at T is > 100 x tolerance and within a "
                               "relative 1e-6 of the spread at T/2 (stalled)",
    "steps_above_roundoff": "number of steps t whose seed-mean error is above 1e-12 (< 4: the "
                            "error vanished in finitely many steps)",
    "limit_weights": "w, the claimed limit weights of c = w^T x(0) (a stochastic vector)",
    "pi0_distance_from_uniform": "max_i |pi_0^i - 1/N|: how far the limit weights are from a "
                                 "plain average (dimensionless)",
}


def check_consensus_limit(seq: g.GraphSequence, target_weights: np.ndarray, *, num_seeds: int,
                          num_steps: int, tol: float = 1e-9, seed0: int = 0,
                          figure: Path | None = None) -> Outcome:
    """Judge: every sample path of x(t+1) = W(t)x(t) reaches 1·(target_weightsᵀ x(0)),
    geometrically.

    Rule, fixed before running (x(0) ~ N(0, I), float64):

    * PASS — max over seeds and agents of |x_i(T) − c| ≤ ``tol`` and the fitted geometric rate
      of the mean error (bootstrap 95% CI over seeds, above the 1e-12 round-off floor) has upper
      end < 1 (or the error fell below the floor within 3 steps: finite-time convergence);
    * FAIL — evidence that the paths do not reach c, any of:
      (a) c left the convex hull of the agents' values: max_i |x_i(t) − c| exceeds the spread
      max_i x_i(t) − min_i x_i(t) by more than 1e-10 at some t (row-stochastic mixing keeps the
      hulls nested, so c stays at that distance forever: the claimed limit is wrong);
      (b) the hull grew: the spread increased by more than 1e-10·(1 + spread) in one step
      (the iteration is not row-stochastic averaging);
      (c) no consensus: on some path the spread at T is above 100·tol and within a relative
      1e-6 of its value at T/2 (no measurable contraction over half the horizon);
    * INCONCLUSIVE — neither (still contracting but not within ``tol`` by T: needs a longer
      horizon). A slow but geometric convergence is never judged FAIL.

    Seeds: the claim is path-wise (every sample path converges), so the verdict is a max over
    paths, not a mean; with S paths and no failure the report gives the one-sided 95% upper
    bound ``1 − 0.05^(1/S)`` on the probability that a path fails over the draw of x(0) (64
    seeds: 0.046; 1000 under ``--full``); for a random graph sequence shared by the seeds this
    is for one realisation of the graphs (``measured["graph_draws"]``).
    """
    seeds = list(range(seed0, seed0 + num_seeds))
    algorithm = _consensus_for(seq)
    # the claimed limit of each path, c = w^T x(0), from the x(0) the algorithm starts from
    target = initial_values(seq, seeds) @ np.asarray(target_weights, dtype=np.float64)

    def record(state):
        return {"max": jnp.max(state.x), "min": jnp.min(state.x)}

    result = run(algorithm, None, seeds, num_steps, record_every=1, record_fn=record,
                 record_initial=True, progress=False)
    x_max = np.asarray(result.records["max"])             # [S, T + 1]
    x_min = np.asarray(result.records["min"])
    # max_i |x_i(t) - c| = max(max_i x_i(t) - c, c - min_i x_i(t)), exactly
    err = np.maximum(x_max - target[:, None], target[:, None] - x_min)
    spread = x_max - x_min
    steps = np.asarray(result.record_steps)
    final_err, final_spread = float(err[:, -1].max()), float(spread[:, -1].max())
    mean_err = err.mean(axis=0)
    above = np.flatnonzero(mean_err > 1e-12)
    converged = int(np.sum(err[:, -1] <= tol))
    measured = {"final_max_error": final_err, "final_max_spread": final_spread,
                "initial_mean_error": float(mean_err[0]), "paths_converged": converged,
                "paths": int(err.shape[0])}
    if converged == err.shape[0]:
        # zero failures in S independent paths: one-sided 95% (Clopper-Pearson) upper bound on
        # the probability that a path fails, 1 - 0.05^(1/S) ≈ 3/S
        measured["path_failure_prob_upper95"] = float(1.0 - 0.05 ** (1.0 / err.shape[0]))
    rate_hi = math.nan
    if above.size >= 4:
        window = slice(int(above[0]), int(above[-1]) + 1)
        # one seed: an exact fit of that curve (no bootstrap interval is possible)
        fit = geometric_rate(steps[window], err[:, window] if err.shape[0] > 1 else
                             err[0, window])
        measured.update(rate_per_step=fit.rate_per_step, rate_ci=[fit.lo, fit.hi],
                        fit_window=[int(steps[window][0]), int(steps[window][-1])])
        rate_hi = fit.hi
    measured["graph_draws"] = ("one realisation shared by all seeds" if seq.form == "random"
                               and seq.shared_across_seeds else "per seed" if
                               seq.form == "random" else "deterministic")
    outside = float(np.max(err - spread))                       # distance of c from the hull
    growth = float(np.max(np.diff(spread, axis=1) - 1e-10 * (1.0 + spread[:, :-1])))
    half = spread[:, spread.shape[1] // 2]
    stalled = (spread[:, -1] > 100 * tol) & (spread[:, -1] >= (1.0 - 1e-6) * half)
    measured.update(limit_outside_hull=outside, max_spread_growth=growth,
                    paths_without_consensus=int(stalled.sum()))
    # Fewer than 4 points above the round-off floor: the error vanished in a few steps
    # (finite-time convergence, faster than any geometric rate).
    finite_time = above.size < 4
    measured["steps_above_roundoff"] = int(above.size)
    if final_err <= tol and (rate_hi < 1.0 or finite_time):
        verdict = Verdict.PASS
    elif outside > 1e-10 or growth > 0 or stalled.any():
        verdict = Verdict.FAIL
    else:
        verdict = Verdict.INCONCLUSIVE
    rate_text = ("the error vanished in finitely many steps" if finite_time else
                 f"geometric rate {measured['rate_per_step']:.3g} per step (CI upper "
                 f"{rate_hi:.3g})")
    if verdict is Verdict.PASS:
        reason = (f"every one of {num_seeds} paths within {final_err:.2g} of the claimed limit "
                  f"(tolerance {tol:g}) at T; {rate_text}")
    elif verdict is Verdict.FAIL:
        reason = ("the limit lies outside the agents' hull" if outside > 1e-10 else
                  "the hull grew" if growth > 0 else
                  f"{int(stalled.sum())} paths stopped converging before reaching consensus")
    else:
        reason = (f"error {final_err:.2g} at T is above the tolerance {tol:g} but still "
                  "falling: the horizon is too short")
    figures = []
    if figure is not None:
        fig, ax = plot_curves(steps, {"max_i |x_i(t) - c|": np.maximum(err, 1e-17)},
                              ylabel="error (mean over seeds, 10-90% band)",
                              title=f"consensus on {seq.form} graphs, N={seq.n}")
        ax.axhline(tol, color="k", linestyle=":", linewidth=1)
        fig.savefig(figure, dpi=100)
        plt.close(fig)
        figures.append(str(figure))
    return Outcome(
        verdict=verdict, measured=measured, figures=figures,
        headline=[k for k in ("final_max_error", "rate_per_step", "steps_above_roundoff")
                  if k in measured],
        threshold=f"PASS: max|x_i(T) - c| <= {tol:g} and rate CI upper < 1; FAIL: c outside "
                  "the agents' hull by > 1e-10, or the hull grew, or a path's spread at T is > "
                  f"{100 * tol:g} and within 1e-6 (relative) of its value at T/2",
        size=f"N={seq.n}, T={num_steps}, seeds={num_seeds}", reason=reason,
        descriptions={k: CONSENSUS_DESCRIPTIONS[k] for k in measured},
        details="" if verdict != Verdict.INCONCLUSIVE else
        "not converged within T; rerun with --full (longer horizon)",
    )


def ring_with_chord() -> np.ndarray:
    """Directed ring i -> i+1 (mod 6) plus the chord 3 -> 0, with self-loops."""
    return g.add_self_loops(g.ring(6) | g.from_edges(6, [(3, 0)]))


@claim("graphs.perron_ring_chord",
       statement="the row-normalised directed 6-ring with chord 3->0 has left Perron vector "
                 "(3,4,4,4,2,2)/19",
       source=f"reference value derived in {DOCS} §3", kind=Kind.EXACT)
def _perron_ring_chord(ctx: CheckContext) -> Outcome:
    return check_perron_reference(g.row_stochastic(ring_with_chord()),
                                  np.array([3, 4, 4, 4, 2, 2]) / 19)


def check_perron_reference(W: np.ndarray, reference: np.ndarray, *, tol: float = 1e-12
                           ) -> Outcome:
    """Judge: the computed left Perron vector of W equals a reference vector (exact)."""
    pi = g.perron_vector(W)
    diff = np.abs(pi - reference)
    err = float(np.max(diff))
    if err <= tol:
        reason = f"computed Perron vector within {err:.2g} of the reference (tolerance {tol:g})"
    else:
        i = int(np.argmax(np.where(np.isnan(diff), np.inf, diff)))
        reason = (f"computed Perron vector is {err:.2g} from the reference (> {tol:g}); worst "
                  f"agent {i}: {pi[i]:.4g} vs {reference[i]:.4g}")
    return Outcome(verdict=Verdict.PASS if err <= tol else Verdict.FAIL, reason=reason,
                   measured={"pi": pi.tolist(), "max_abs_error": err},
                   headline=["max_abs_error"],
                   descriptions={"pi": "computed left Perron vector (pi^T W = pi^T, sums to 1)",
                                 "max_abs_error": "max_i |pi_i - ref_i| (dimensionless)"},
                   threshold=f"max_i |pi_i - ref_i| <= {tol:g}", size=f"N={len(reference)}")


# Each consensus claim's inputs come from a setup function, so the tests can run the claim's
# own configuration with a planted wrong target (its negative control).

def setup_consensus_static(ctx: CheckContext) -> dict:
    """Fixed ring-with-chord W (not doubly stochastic); limit weights: its Perron vector."""
    W = g.row_stochastic(ring_with_chord())
    return {"seq": g.static(W), "target_weights": g.perron_vector(W),
            "num_steps": 2000 if ctx.full else 600}


def setup_consensus_prescribed(ctx: CheckContext) -> dict:
    """Random-order prescribed-π sub-cycles (explicit stack); limit weights: the prescribed π."""
    steps = 6000 if ctx.full else 1500
    return {"seq": g.explicit(prescribed_pi_stack(steps, ctx.base_seed)),
            "target_weights": PRESCRIBED_PI, "num_steps": steps}


def setup_consensus_doubly(ctx: CheckContext) -> dict:
    """One-peer exponential graphs, n = 6 (not a power of 2: no finite-time exactness)."""
    return {"seq": g.one_peer_exponential(6), "target_weights": np.full(6, 1 / 6),
            "num_steps": 400 if ctx.full else 150}


def setup_consensus_random(ctx: CheckContext) -> dict:
    """Random edge drops over K_10, row re-weighting; limit weights: π_0 by backward recursion."""
    seq = g.random_edge_drops(g.complete(10), 0.7, rule="row", key=ctx.base_seed + 11)
    return {"seq": seq, "target_weights": g.absolute_probability_sequence(seq, 0)[0],
            "num_steps": 400 if ctx.full else 150}


def _run_consensus_claim(claim_id: str, setup, ctx: CheckContext) -> Outcome:
    inputs = setup(ctx)
    outcome = check_consensus_limit(**inputs, num_seeds=ctx.seed_count(64, 1000),
                                    seed0=ctx.base_seed, figure=ctx.figure_path(claim_id, "error"))
    outcome.measured["limit_weights"] = np.asarray(inputs["target_weights"]).tolist()
    outcome.descriptions["limit_weights"] = CONSENSUS_DESCRIPTIONS["limit_weights"]
    return outcome


@claim("graphs.consensus_static_perron",
       statement="x(t+1) = W x(t) with a fixed strongly connected row-stochastic W (not doubly "
                 "stochastic) converges geometrically to 1 pi^T x(0), pi the left Perron vector",
       source=f"classical consensus; {LGL}, Definition 2 (fixed W: pi_t = Perron vector); "
              f"{DOCS} §4", kind=Kind.RATE)
def _consensus_static(ctx: CheckContext) -> Outcome:
    return _run_consensus_claim("graphs.consensus_static_perron", setup_consensus_static, ctx)


@claim("graphs.consensus_prescribed_pi",
       statement="on a time-varying, non-doubly-stochastic sequence sharing the left "
                 "eigenvector pi (W_t = I - c D_pi^-1 L_t), consensus converges geometrically "
                 "to 1 pi^T x(0)",
       source=f"{LGL}, Definition 2, Lemma 1; construction and limit: {DOCS} §2, §4",
       kind=Kind.RATE)
def _consensus_prescribed(ctx: CheckContext) -> Outcome:
    return _run_consensus_claim("graphs.consensus_prescribed_pi", setup_consensus_prescribed, ctx)


@claim("graphs.consensus_doubly_average",
       statement="on the time-varying one-peer exponential sequence (doubly stochastic), "
                 "consensus converges to the plain average",
       source=f"classical consensus (pi_t = 1/N for doubly stochastic W_t); {DOCS} §4",
       kind=Kind.RATE)
def _consensus_doubly(ctx: CheckContext) -> Outcome:
    return _run_consensus_claim("graphs.consensus_doubly_average", setup_consensus_doubly, ctx)


@claim("graphs.consensus_random_aps",
       statement="on a random edge-drop sequence over K_10 with row-stochastic re-weighting "
                 "(pi_t not constant), consensus converges to 1 pi_0^T x(0), pi_0 of the "
                 "absolute probability sequence computed by backward recursion",
       source=f"{LGL}, Definition 2 (pi_t^T = pi_(t+1)^T W_t); Lemma 1; {DOCS} §4",
       kind=Kind.RATE)
def _consensus_random(ctx: CheckContext) -> Outcome:
    outcome = _run_consensus_claim("graphs.consensus_random_aps", setup_consensus_random, ctx)
    pi0 = np.asarray(outcome.measured["limit_weights"])
    outcome.measured["pi0_distance_from_uniform"] = float(np.abs(pi0 - 0.1).max())
    outcome.descriptions["pi0_distance_from_uniform"] = \
        CONSENSUS_DESCRIPTIONS["pi0_distance_from_uniform"]
    return outcome


CONSENSUS_SETUPS = {
    "graphs.consensus_static_perron": setup_consensus_static,
    "graphs.consensus_prescribed_pi": setup_consensus_prescribed,
    "graphs.consensus_doubly_average": setup_consensus_doubly,
    "graphs.consensus_random_aps": setup_consensus_random,
}
"""Claim id -> setup; the tests plant a wrong limit into each (negative controls)."""
