"""Claims about decentralized UCB (Zhu, Mulle, Smith, Liu, arXiv 2111.10933: Dec_UCB of the
first version, Theorems 1-2 and Corollaries 1-4; Dec-UCB1 / Dec-KL-UCB of the journal version,
IEEE TAC 70(7) 2025).

Judges (``check_*``) take explicit inputs (recorded arrays, regrets, slopes, constants) so the
tests can plant a violation. Statistics: comparisons of policies use **paired differences on
shared reward streams** (the j-th pull of arm k by agent i is the same sample under every policy
on a seed), judged by a bootstrap 95% interval of the mean paired difference; the
distribution-free empirical-Bernstein interval (range ``2 T max Delta``) is reported beside it and
is far wider at these seed counts (it would need about 10^5 seeds), so the verdicts rest on the
bootstrap (a CLT-type interval: a per-seed regret is a sum of many bounded, weakly dependent
terms). Slopes against ``ln T`` are least-squares fits of the seed-mean curve with a bootstrap
over seeds. Constants, reference values and derivations: ``docs/bandits.md``.
"""

from __future__ import annotations

import numpy as np

import decentral.graphs as g
from decentral.bandits import (
    bandit_algorithm,
    bernoulli,
    beta_distribution,
    dec_ucb,
    evaluate,
    paper_graph,
    ucb,
    ucb1,
)
from decentral.runner import run
from decentral.verify import (
    CheckContext,
    Kind,
    Outcome,
    Verdict,
    bootstrap_ci,
    combine_verdicts,
    empirical_bernstein_ci,
    semilog_slope,
)

from .registry import claim

DOCS = "docs/bandits.md"
ZMSL = "Zhu, Mulle, Smith, Liu, arXiv 2111.10933"

def undirected_graph() -> np.ndarray:
    """The first version's undirected 6-agent graph (``undirected.adjlist``, by label)."""
    return paper_graph("undirected")


def strongly_graph() -> np.ndarray:
    """The first version's strongly connected 6-agent graph (``strongly.adjlist``)."""
    return paper_graph("strongly")


def weakly_graph() -> np.ndarray:
    """The first version's weakly connected 6-agent graph (agent 3 a sink)."""
    return paper_graph("weakly")


def directed_path() -> np.ndarray:
    """0 -> 1 -> ... -> 5 (agent i receives from i - 1; ``weakly_path.adjlist``)."""
    return paper_graph("weakly_path")


def random_means(num_arms: int, seed: int) -> np.ndarray:
    """``mu_k ~ U[0.05, 0.95]`` (the first version's setup), sorted decreasingly."""
    return np.sort(np.random.default_rng(seed).uniform(0.05, 0.95, num_arms))[::-1].copy()


def _seeds(ctx: CheckContext, quick: int, full: int) -> list[int]:
    return list(range(ctx.base_seed, ctx.base_seed + ctx.seed_count(quick, full)))


def paired_interval(diff: np.ndarray, value_range: float, *, delta: float = 0.05) -> dict:
    """Mean of per-seed paired differences with its bootstrap 95% interval (the judge) and
    the empirical-Bernstein interval for a difference of range ``value_range`` (reported)."""
    diff = np.asarray(diff, np.float64)
    mean, lo, hi = bootstrap_ci(diff, seed=0)
    if diff.size >= 2:
        _, blo, bhi = empirical_bernstein_ci(diff, value_range, delta)
    else:
        blo = bhi = float("nan")
    return {"mean": float(mean), "ci": [float(lo), float(hi)],
            "bernstein_ci": [float(blo), float(bhi)], "seeds": int(diff.size)}


def _decide_less(interval: dict) -> Verdict:
    """PASS when the whole interval of (a - b) is below 0, FAIL when above, else INCONCLUSIVE."""
    lo, hi = interval["ci"]
    return Verdict.PASS if hi < 0 else Verdict.FAIL if lo > 0 else Verdict.INCONCLUSIVE


# ---------------------------------------------------------------------------------------------
# 1. the N = 1 reduction
# ---------------------------------------------------------------------------------------------

def _policy_and_pulls(state):
    """Record function of :func:`_states` (defined once: the runner compiles per function)."""
    return state.policy, state.pulls


def _states(policy, arms, seeds, T, num_agents=None):
    alg = bandit_algorithm(policy, arms, num_agents=num_agents)
    res = run(alg, policy.params, seeds=list(seeds), num_steps=T,
              record_fn=_policy_and_pulls, record_every=1, record_initial=True,
              progress=False)
    state, pulls = res.records
    return state, np.asarray(pulls)


def arm_sequence(pulls: np.ndarray) -> np.ndarray:
    """The arm pulled at each decision, from recorded counts ``[S, T+1, N, M]``."""
    return np.argmax(np.diff(pulls, axis=1), axis=-1)


def check_reduction(dec_arms, ucb_arms, z, xbar, *, tol: float = 1e-9) -> Outcome:
    """Judge: the arm sequences are identical on every seed and ``z = xbar`` within ``tol``."""
    mismatched = int(np.sum(np.any(np.asarray(dec_arms) != np.asarray(ucb_arms), axis=(1, 2))))
    gap = float(np.abs(np.asarray(z) - np.asarray(xbar)).max())
    ok = mismatched == 0 and gap <= tol
    return Outcome(
        verdict=Verdict.PASS if ok else Verdict.FAIL,
        measured={"seeds_with_different_arms": mismatched, "max_z_minus_xbar": gap,
                  "decisions_compared": int(np.asarray(dec_arms).size)},
        descriptions={
            "seeds_with_different_arms": "seeds on which Dec_UCB (N = 1) and UCB(4/3) pulled a "
                                         "different arm at some step",
            "max_z_minus_xbar": "max over steps, arms and seeds of |z - xbar|",
            "decisions_compared": "decisions compared (seeds x steps)"},
        threshold=f"identical arm sequences and |z - xbar| <= {tol:g}",
        size=f"T={np.asarray(dec_arms).shape[1]}, seeds={np.asarray(dec_arms).shape[0]}")


@claim("bandits.reduction_n1",
       statement="with N = 1, Dec_UCB pulls the same arms as single-agent UCB with index "
                 "sqrt(4 ln t / (3 n)) on the same rewards, and z = xbar",
       source=f"{ZMSL}, first version, Remark 1; exact form derived in {DOCS}#reduction",
       kind=Kind.EXACT)
def _reduction(ctx: CheckContext) -> Outcome:
    seeds = _seeds(ctx, 8, 64)
    T = 5000 if ctx.full else 500
    # continuous rewards: with Bernoulli ones, two arms often have exactly equal indices, and
    # z = z + xbar(t+1) - xbar(t) differs from xbar by round-off (1e-15), which breaks such ties
    # differently; the reduction is about the rule, not about how round-off breaks exact ties
    arms = beta_distribution(random_means(6, ctx.base_seed), 0.05)
    one = np.ones((1, 1), bool)
    dec_state, dec_pulls = _states(dec_ucb(one, theorem=1), arms, seeds, T)
    _, ucb_pulls = _states(ucb(4 / 3), arms, seeds, T, num_agents=1)
    return check_reduction(arm_sequence(dec_pulls), arm_sequence(ucb_pulls),
                           np.asarray(dec_state.z), np.asarray(dec_state.means))


# ---------------------------------------------------------------------------------------------
# 2. consensus invariants
# ---------------------------------------------------------------------------------------------

def check_invariants(W, diameter, counts, means, max_counts, z, *, tol: float = 1e-9
                     ) -> Outcome:
    """Judge recorded states ``[S, T+1, N, M]`` on a static ``W``: ``pi^T z = pi^T xbar``
    (``pi`` the left Perron vector; ``1/N`` for doubly stochastic W, i.e. the sum), ``n <= m
    <= max_j n_j`` and ``m(t) >= max_j n_j(t - d)`` for ``t >= d``."""
    pi = g.perron_vector(np.asarray(W, np.float64))
    z, xbar = np.asarray(z, np.float64), np.asarray(means, np.float64)
    n, m = np.asarray(counts), np.asarray(max_counts)
    weighted = float(np.abs(np.einsum("i,stik->stk", pi, z - xbar)).max())
    below = int(np.sum(n > m))
    top = n.max(axis=2, keepdims=True)
    above = int(np.sum(m > top))
    d = int(diameter)
    lag = int(np.sum(m[:, d:] < n[:, :n.shape[1] - d].max(axis=2, keepdims=True))) if d else 0
    ok = weighted <= tol and below == 0 and above == 0 and lag == 0
    return Outcome(
        verdict=Verdict.PASS if ok else Verdict.FAIL,
        measured={"pi_weighted_gap": weighted, "n_above_m": below, "m_above_max_n": above,
                  "m_below_lagged_max": lag, "diameter": d},
        headline=["pi_weighted_gap", "n_above_m", "m_below_lagged_max"],
        descriptions={
            "pi_weighted_gap": "max over steps, arms, seeds of |pi^T z_k(t) - pi^T xbar_k(t)|",
            "n_above_m": "entries with n_{i,k}(t) > m_{i,k}(t)",
            "m_above_max_n": "entries with m_{i,k}(t) > max_j n_{j,k}(t)",
            "m_below_lagged_max": "entries with m_{i,k}(t) < max_j n_{j,k}(t - d), t >= d",
            "diameter": "d, the graph's diameter"},
        threshold=f"|pi^T (z - xbar)| <= {tol:g}; no count violation",
        size=f"N={n.shape[2]}, M={n.shape[3]}, T={n.shape[1] - 1}, seeds={n.shape[0]}")


@claim("bandits.consensus_invariants",
       statement="sum_i z_{i,k} = sum_i xbar_{i,k} for Metropolis weights, pi^T z = pi^T xbar "
                 "for flocking weights; n <= m <= max_j n_j and m(t) >= max_j n_j(t - d)",
       source=f"{ZMSL}, first version, Section 3 (the z and m updates); derived in "
              f"{DOCS}#consensus-invariants",
       kind=Kind.EXACT)
def _invariants(ctx: CheckContext) -> Outcome:
    seeds = _seeds(ctx, 4, 16)
    T = 2000 if ctx.full else 500
    arms = bernoulli(random_means(6, ctx.base_seed + 1))
    outs = []
    for adj, theorem in ((undirected_graph(), 2), (strongly_graph(), 1)):
        pol = dec_ucb(adj, theorem=theorem)
        st, _ = _states(pol, arms, seeds, T)
        outs.append(check_invariants(np.asarray(pol.graphs.at(0)), g.diameter(adj), st.counts,
                                     st.means, st.max_counts, st.z))
    verdict = combine_verdicts([o.verdict for o in outs])
    return Outcome(
        verdict=verdict,
        measured={"metropolis_sum_gap": outs[0].measured["pi_weighted_gap"],
                  "flocking_pi_gap": outs[1].measured["pi_weighted_gap"],
                  "count_violations": sum(o.measured[k] for o in outs for k in
                                          ("n_above_m", "m_above_max_n", "m_below_lagged_max")),
                  "undirected": outs[0].measured, "strongly": outs[1].measured},
        headline=["metropolis_sum_gap", "flocking_pi_gap", "count_violations"],
        descriptions={"metropolis_sum_gap": "undirected graph, Metropolis W (pi = 1/N): max "
                                            "|mean_i (z - xbar)|",
                      "flocking_pi_gap": "strongly connected graph, flocking W: max "
                                         "|pi^T (z - xbar)|",
                      "count_violations": "entries breaking n <= m <= max n or the lagged bound"},
        threshold=outs[0].threshold,
        size=f"the first version's undirected and strongly connected graphs; {outs[0].size}")


# ---------------------------------------------------------------------------------------------
# 4b. the star graph: Theorem 2's per-agent |N_i| dependence
# ---------------------------------------------------------------------------------------------

STAR_MEANS = (0.6, 0.5)


def star_setup(num_agents: int, horizon: int, seeds) -> dict:
    """Pull counts of the suboptimal arm on a star with Metropolis weights (agent 0 the hub)."""
    adj = g.star(num_agents)
    steps = np.unique(np.geomspace(max(10, horizon // 100), horizon, 12).astype(int))
    res = evaluate(dec_ucb(adj, theorem=2), bernoulli(STAR_MEANS), horizon=horizon,
                   seeds=seeds, record_at=steps, record_pulls=True, progress=False)
    counts = res.pulls_path[..., 1].astype(np.float64)              # [S, R, N]
    return {"steps": np.asarray(res.record_steps), "hub": counts[:, :, 0],
            "leaves": counts[:, :, 1:].mean(axis=2), "num_agents": num_agents}


def check_star(steps, hub, leaves, num_agents, *, gap: float = 0.1, t_min: float | None = None
               ) -> Outcome:
    """Judge Theorem 2's per-agent dependence on the hub of a star: the fitted ``ln T`` slope
    of the hub's suboptimal pulls against the theorem's coefficient ``12 / (N Delta^2)`` (an
    upper bound on the slope). FAIL when the slope's whole interval lies above it; PASS when
    below; INCONCLUSIVE otherwise. Also reported: the leaves' slope, their bound ``12 / (2
    Delta^2)``, the coupling prediction ``3 / (2 Delta^2)`` and the hub/leaf ordering."""
    bound_hub = 12 / (num_agents * gap ** 2)
    bound_leaf = 12 / (2 * gap ** 2)
    fit_hub = semilog_slope(steps, hub, t_min=t_min)
    fit_leaf = semilog_slope(steps, leaves, t_min=t_min)
    verdict = Verdict.FAIL if fit_hub.lo > bound_hub else \
        Verdict.PASS if fit_hub.hi <= bound_hub else Verdict.INCONCLUSIVE
    ratio = float(np.mean(hub[:, -1]) / np.mean(leaves[:, -1]))
    return Outcome(
        verdict=verdict,
        measured={"hub_slope": fit_hub.slope, "hub_slope_ci": [fit_hub.lo, fit_hub.hi],
                  "hub_bound_coefficient": bound_hub, "leaf_slope": fit_leaf.slope,
                  "leaf_bound_coefficient": bound_leaf,
                  "coupling_prediction": 3 / (2 * gap ** 2),
                  "hub_over_leaf_pulls_at_T": ratio},
        headline=["hub_slope", "hub_bound_coefficient", "hub_over_leaf_pulls_at_T"],
        descriptions={
            "hub_slope": "fitted d E[n_hub,2(T)] / d ln T (pulls of the worse arm per unit ln T)",
            "hub_slope_ci": "bootstrap 95% interval over seeds",
            "hub_bound_coefficient": "Theorem 2's ln T coefficient for the hub's pulls, "
                                     "12 / (|N_hub| Delta^2), |N_hub| = N",
            "leaf_slope": "the same for the leaves (mean over leaves)",
            "leaf_bound_coefficient": "12 / (2 Delta^2) for a leaf (|N_leaf| = 2)",
            "coupling_prediction": "3 / (2 Delta^2): every agent dragged to the leaves' rate "
                                   "by forced exploration (docs/bandits.md)",
            "hub_over_leaf_pulls_at_T": "E[n_hub,2(T)] / E[n_leaf,2(T)] (the theorem's "
                                        "coefficients predict 2 / N)"},
        threshold="FAIL if the hub slope's 95% interval lies above 12/(N Delta^2); PASS if it "
                  "lies below; else INCONCLUSIVE",
        size=f"star N={num_agents}, M=2, mu={STAR_MEANS}, T={int(steps[-1])}, "
             f"seeds={hub.shape[0]}")


@claim("bandits.star_hub_slope",
       statement="Theorem 2 / Corollaries 3-4 per agent: on a star with Metropolis weights the "
                 "hub's suboptimal pulls grow at most like 12 ln T / (N Delta^2)",
       source=f"{ZMSL}, first version, Theorem 2; the star test derived in {DOCS}#star-graph",
       kind=Kind.RATE)
def _star(ctx: CheckContext) -> Outcome:
    T = 100_000 if ctx.full else 10_000
    setup = star_setup(20, T, _seeds(ctx, 100, 200))
    return check_star(setup["steps"], setup["hub"], setup["leaves"], setup["num_agents"],
                      t_min=T / 100)


# ---------------------------------------------------------------------------------------------
# 5. Corollaries 1 / 3 in empirical form: Dec_UCB beats UCB1
# ---------------------------------------------------------------------------------------------

_BASELINE_REGRETS: dict = {}


def baseline_regret(baseline, arms, horizon, seeds, num_agents) -> np.ndarray:
    """Per-seed final regrets ``[S, N]`` of N independent baseline agents, computed once per
    configuration in this process (claims compare several graphs with the same baseline)."""
    key = (baseline.name, repr(baseline.config), repr(baseline.params), arms, int(horizon),
           tuple(int(s) for s in seeds), int(num_agents))
    if key not in _BASELINE_REGRETS:
        if len(_BASELINE_REGRETS) >= 16:
            _BASELINE_REGRETS.clear()
        res = evaluate(baseline, arms, horizon=horizon, seeds=seeds, num_agents=num_agents,
                       record_every=horizon, progress=False)
        out = np.asarray(res.regret, np.float64)
        out.setflags(write=False)
        _BASELINE_REGRETS[key] = out
    return _BASELINE_REGRETS[key]


def regret_pair(policy, baseline, arms, horizon, seeds, num_agents) -> dict:
    """Per-seed regrets of a decentralized policy and N independent baseline agents on the
    same reward streams."""
    dec = evaluate(policy, arms, horizon=horizon, seeds=seeds, record_every=horizon,
                   progress=False)
    return {"dec": np.asarray(dec.regret, np.float64),
            "base": baseline_regret(baseline, arms, horizon, seeds, num_agents),
            "range": 2 * horizon * float(np.max(dec.gaps))}


def check_beats(cases: dict, *, statistic: str = "worst") -> Outcome:
    """Judge per case: the paired per-seed difference (worst Dec agent - mean UCB1 agent, or
    mean - mean) has its 95% interval below 0. PASS if every case passes, FAIL if any case's
    interval lies above 0, else INCONCLUSIVE."""
    rows, verdicts = {}, []
    for name, pair in cases.items():
        dec = pair["dec"].max(axis=1) if statistic == "worst" else pair["dec"].mean(axis=1)
        diff = dec - pair["base"].mean(axis=1)
        iv = paired_interval(diff, pair["range"])
        iv["dec_regret"] = float(dec.mean())
        iv["ucb1_regret"] = float(pair["base"].mean())
        rows[name] = iv
        verdicts.append(_decide_less(iv))
    verdict = combine_verdicts(verdicts)
    worst = max(rows.values(), key=lambda r: r["mean"])
    return Outcome(
        verdict=verdict,
        measured={"largest_difference": worst["mean"], "its_ci": worst["ci"],
                  "cases": rows},
        headline=["largest_difference", "its_ci", "cases"],
        descriptions={
            "largest_difference": f"max over cases of mean_s({statistic} Dec agent's regret - "
                                  "mean UCB1 agent's regret) at T (negative: Dec better)",
            "its_ci": "bootstrap 95% interval of that paired difference",
            "cases": "per graph: the paired difference, its bootstrap and empirical-Bernstein "
                     "intervals, and both mean regrets"},
        threshold="every case's bootstrap 95% interval of the paired difference below 0 "
                  "(PASS); any above 0 (FAIL)",
        size=f"{len(cases)} graphs")


@claim("bandits.beats_ucb1",
       statement="Corollaries 1 and 3, empirical: on strongly connected (flocking) and "
                 "undirected (Metropolis) graphs the worst Dec_UCB agent's regret is below "
                 "that of N independent UCB1 agents",
       source=f"{ZMSL}, first version, Corollaries 1 and 3, Figs 1-4; setup in "
              f"{DOCS}#experiments",
       kind=Kind.STATISTICAL)
def _beats(ctx: CheckContext) -> Outcome:
    T = 10_000 if ctx.full else 3_000
    seeds = _seeds(ctx, 100, 200)
    arms = bernoulli(random_means(10, ctx.base_seed + 2))
    cases = {
        "strongly (Theorem 1)": regret_pair(dec_ucb(strongly_graph(),
                                                    theorem=1), ucb1(), arms, T, seeds, 6),
        "undirected (Theorem 2)": regret_pair(dec_ucb(undirected_graph(), theorem=2), ucb1(),
                                              arms, T, seeds, 6)}
    if ctx.full:
        strong = g.erdos_renyi(50, 0.5, kind="strong", seed=ctx.base_seed)
        und = g.erdos_renyi(50, 0.5, kind="undirected", seed=ctx.base_seed)
        cases["ER(50, 0.5) strong"] = regret_pair(dec_ucb(strong, theorem=1), ucb1(), arms, T,
                                                  seeds, 50)
        cases["ER(50, 0.5) undirected"] = regret_pair(dec_ucb(und, theorem=2), ucb1(), arms, T,
                                                      seeds, 50)
    out = check_beats(cases)
    out.size = f"{out.size}, M=10, T={T}, seeds={len(seeds)}, independent Bernoulli rewards"
    return out


# ---------------------------------------------------------------------------------------------
# 6. the index-constant ablation
# ---------------------------------------------------------------------------------------------

def regret_curves(policy, arms, horizon, seeds, num_agents=None) -> tuple[np.ndarray,
                                                                            np.ndarray]:
    """``(steps [R], mean-over-agents regret [S, R])`` on a log grid."""
    steps = np.unique(np.geomspace(max(10, horizon // 100), horizon, 12).astype(int))
    res = evaluate(policy, arms, horizon=horizon, seeds=seeds, num_agents=num_agents,
                   record_at=steps, progress=False)
    return np.asarray(res.record_steps), np.asarray(res.regret_path, np.float64).mean(axis=-1)


def check_ablation(steps, curves: dict, predicted: dict, *, band=(0.67, 1.5),
                   t_min: float | None = None) -> Outcome:
    """Judge: the fitted ln T slope of Dec_UCB (directed) regret is within ``band`` (a ratio) of
    single-agent UCB(4/3)'s, and each policy's slope is reported beside its index-based
    prediction (``predicted``: name -> coefficient). FAIL when the ratio's interval lies
    outside the band, PASS when inside."""
    fits = {k: semilog_slope(steps, v, t_min=t_min) for k, v in curves.items()}
    dec, abl = fits["dec_ucb_directed"], fits["ucb_4_3"]
    ratio = dec.slope / abl.slope
    lo, hi = dec.lo / abl.hi, dec.hi / abl.lo
    verdict = Verdict.PASS if band[0] <= lo and hi <= band[1] else \
        Verdict.FAIL if hi < band[0] or lo > band[1] else Verdict.INCONCLUSIVE
    return Outcome(
        verdict=verdict,
        measured={"slope_ratio_dec_over_ucb43": ratio, "ratio_interval": [lo, hi],
                  **{f"slope_{k}": v.slope for k, v in fits.items()},
                  **{f"predicted_{k}": v for k, v in predicted.items()}},
        headline=["slope_ratio_dec_over_ucb43", "slope_dec_ucb_directed", "slope_ucb1"],
        descriptions={
            "slope_ratio_dec_over_ucb43": "fitted ln T slope of Dec_UCB's (Theorem 1) mean "
                                          "per-agent regret over UCB(4/3)'s",
            "ratio_interval": "conservative interval from the two slopes' bootstrap intervals",
            **{f"slope_{k}": f"fitted ln T slope of {k}'s mean per-agent regret" for k in fits},
            **{f"predicted_{k}": f"index-based prediction for {k} (docs/bandits.md)"
               for k in predicted}},
        threshold=f"ratio interval inside [{band[0]}, {band[1]}] (PASS), outside (FAIL)",
        size=f"T={int(steps[-1])}, seeds={next(iter(curves.values())).shape[0]}")


@claim("bandits.index_constant_ablation",
       statement="single-agent UCB with Dec_UCB's index constant (alpha = 4/3) roughly matches "
                 "Dec_UCB's (directed) regret slope: the advantage over UCB1 is mostly the "
                 "smaller exploration constant",
       source=f"derived ablation of {ZMSL}'s Corollary 1 (index constants in "
              f"{DOCS}#index-constants)",
       kind=Kind.RATE)
def _ablation(ctx: CheckContext) -> Outcome:
    T = 100_000 if ctx.full else 10_000
    seeds = _seeds(ctx, 50, 100)
    means = random_means(6, ctx.base_seed + 3)
    arms = bernoulli(means)
    gaps = means.max() - means
    inv = float(np.sum(1 / gaps[gaps > 0]))
    adj = strongly_graph()
    steps, dec = regret_curves(dec_ucb(adj, theorem=1), arms, T, seeds)
    _, abl = regret_curves(ucb(4 / 3), arms, T, seeds, num_agents=6)
    _, base = regret_curves(ucb1(), arms, T, seeds, num_agents=6)
    return check_ablation(steps, {"dec_ucb_directed": dec, "ucb_4_3": abl, "ucb1": base},
                          {"dec_ucb_directed": 4 / 3 * inv, "ucb_4_3": 4 / 3 * inv,
                           "ucb1": 2 * inv}, t_min=T / 100)


# ---------------------------------------------------------------------------------------------
# 13. the "same page" gap
# ---------------------------------------------------------------------------------------------

def check_same_page(steps, gaps, constant: float) -> Outcome:
    """Judge recorded gaps ``max_{i,j,k} (n_{j,k}(t) - n_{i,k}(t))`` ``[S, R]``: bounded by the
    Theorems' constant ``M^2 + (2M - 1) d`` at every record (FAIL otherwise), and not growing
    (its seed-mean over the last third of the records no larger than 1.1 x over the middle
    third; INCONCLUSIVE otherwise)."""
    gaps = np.asarray(gaps, np.float64)
    worst = float(gaps.max())
    curve = gaps.mean(axis=0)
    R = curve.size
    mid, last = curve[R // 3: 2 * R // 3].mean(), curve[2 * R // 3:].mean()
    bounded = worst <= constant
    flat = last <= 1.1 * mid
    verdict = Verdict.FAIL if not bounded else Verdict.PASS if flat else Verdict.INCONCLUSIVE
    return Outcome(
        verdict=verdict,
        measured={"max_gap": worst, "constant": constant, "mean_gap_middle": float(mid),
                  "mean_gap_last": float(last)},
        descriptions={
            "max_gap": "max over seeds, records, agents and arms of n_{j,k}(t) - n_{i,k}(t)",
            "constant": "M^2 + (2M - 1) d, the Theorems' bound on the gap",
            "mean_gap_middle": "seed-mean gap over the middle third of the records",
            "mean_gap_last": "over the last third"},
        threshold="max gap <= M^2 + (2M-1) d (else FAIL); last third <= 1.1 x middle third "
                  "(PASS, else INCONCLUSIVE)",
        size=f"T={int(np.asarray(steps)[-1])}, seeds={gaps.shape[0]}")


@claim("bandits.same_page_gap",
       statement="forced exploration keeps every agent's counts within a bounded gap of each "
                 "other: max_{i,j,k} (n_{j,k} - n_{i,k}) stays below M^2 + (2M - 1) d and does "
                 "not grow with T",
       source=f"{ZMSL}, first version, proof of Theorems 1-2 (Lemma on the counts); "
              f"{DOCS}#same-page",
       kind=Kind.STATISTICAL)
def _same_page(ctx: CheckContext) -> Outcome:
    T = 100_000 if ctx.full else 10_000
    seeds = _seeds(ctx, 32, 100)
    means = random_means(6, ctx.base_seed + 4)
    adj = strongly_graph()
    steps = np.unique(np.geomspace(10, T, 15).astype(int))
    res = evaluate(dec_ucb(adj, theorem=1), bernoulli(means), horizon=T, seeds=seeds,
                   record_at=steps, record_pulls=True, progress=False)
    pulls = np.asarray(res.pulls_path)                                 # [S, R, N, M]
    gaps = (pulls.max(axis=2) - pulls.min(axis=2)).max(axis=-1)        # [S, R]
    M = len(means)
    return check_same_page(res.record_steps, gaps, M ** 2 + (2 * M - 1) * g.diameter(adj))


# ---------------------------------------------------------------------------------------------
# 14. correlated reward streams (the journal version's notebooks)
# ---------------------------------------------------------------------------------------------

def check_correlated(independent: dict, correlated: dict) -> Outcome:
    """Judge: Dec's advantage over UCB1 (mean UCB1 regret - mean Dec regret, per seed) is
    smaller with correlated streams than with independent ones: PASS when the interval of
    (advantage_independent - advantage_correlated) lies above 0, FAIL below."""
    adv_ind = independent["base"].mean(axis=1) - independent["dec"].mean(axis=1)
    adv_cor = correlated["base"].mean(axis=1) - correlated["dec"].mean(axis=1)
    iv = paired_interval(adv_ind - adv_cor, 2 * independent["range"])
    lo, hi = iv["ci"]
    verdict = Verdict.PASS if lo > 0 else Verdict.FAIL if hi < 0 else Verdict.INCONCLUSIVE
    return Outcome(
        verdict=verdict,
        measured={"advantage_independent": float(adv_ind.mean()),
                  "advantage_correlated": float(adv_cor.mean()),
                  "difference": iv["mean"], "difference_ci": iv["ci"],
                  "bernstein_ci": iv["bernstein_ci"]},
        headline=["advantage_independent", "advantage_correlated", "difference_ci"],
        descriptions={
            "advantage_independent": "mean over seeds of (mean UCB1 agent regret - mean Dec "
                                     "agent regret), independent per-agent streams",
            "advantage_correlated": "the same with the streams shared across agents",
            "difference": "advantage_independent - advantage_correlated",
            "difference_ci": "bootstrap 95% interval (seeds shared by both regimes)",
            "bernstein_ci": "empirical-Bernstein interval (distribution-free, wide)"},
        threshold="difference interval above 0 (PASS), below 0 (FAIL)",
        size=f"seeds={adv_ind.size}")


@claim("bandits.correlated_streams",
       statement="with the journal notebooks' correlated streams (each agent's j-th sample of "
                 "arm k identical across agents) Dec's advantage over UCB1 shrinks relative "
                 "to independent streams",
       source=f"derived from the authors' code (csasmith/vip-mab, code/KL_UCB notebooks); "
              f"{DOCS}#reward-streams",
       kind=Kind.STATISTICAL)
def _correlated(ctx: CheckContext) -> Outcome:
    T = 10_000 if ctx.full else 1_000
    seeds = _seeds(ctx, 100, 200)
    arms = bernoulli([0.6, 0.5, 0.4, 0.3, 0.2])
    pol = dec_ucb(undirected_graph(), theorem=2)
    ind = regret_pair(pol, ucb1(), arms, T, seeds, 6)
    cor = regret_pair(pol, ucb1(), arms.with_correlated(), T, seeds, 6)
    out = check_correlated(ind, cor)
    out.size = f"undirected 6-agent graph, Dec_UCB (Theorem 2) vs UCB1, M=5, T={T}, {out.size}"
    return out


# ---------------------------------------------------------------------------------------------
# 9. weakly connected graphs
# ---------------------------------------------------------------------------------------------

@claim("bandits.weakly_connected",
       statement="on the weakly connected graph (agent 3 a sink) and on the directed path, "
                 "Dec_UCB (flocking weights) still beats N independent UCB1 agents on average",
       source=f"{ZMSL}, first version, Section 5 (weakly connected graphs, no theory), Fig 3",
       kind=Kind.STATISTICAL)
def _weakly(ctx: CheckContext) -> Outcome:
    T = 10_000 if ctx.full else 1_000
    seeds = _seeds(ctx, 100, 200)
    arms = bernoulli(random_means(6, ctx.base_seed + 5))
    cases = {"weakly (sink 3)": regret_pair(dec_ucb(weakly_graph(),
                                                    theorem=1), ucb1(), arms, T, seeds, 6),
             "directed path": regret_pair(dec_ucb(directed_path(), theorem=1), ucb1(), arms,
                                          T, seeds, 6)}
    out = check_beats(cases, statistic="mean")
    out.size = f"{out.size}, M=6, T={T}, seeds={len(seeds)}"
    return out


__all__ = ["undirected_graph", "strongly_graph", "weakly_graph", "directed_path", "random_means",
           "paired_interval", "arm_sequence", "check_reduction", "check_invariants",
           "star_setup", "check_star", "regret_pair", "check_beats", "regret_curves",
           "check_ablation", "check_same_page", "check_correlated"]


# ---------------------------------------------------------------------------------------------
# 7-8. graph-type ordering and distribution robustness (first version's observations)
# ---------------------------------------------------------------------------------------------

def check_graph_ordering(undirected: np.ndarray, strongly: np.ndarray, degrees: np.ndarray,
                         *, spread_tolerance: float = 0.15) -> Outcome:
    """Judge: (a) the mean agent's regret on the undirected graph is below the strongly
    connected graph's (paired over seeds: interval below 0); (b) on the strongly connected
    graph the per-agent mean regrets differ by at most ``spread_tolerance`` of their mean
    (regret "about independent of in-degree"). PASS if both hold, FAIL if (a)'s interval lies
    above 0 or the spread exceeds twice the tolerance, else INCONCLUSIVE."""
    iv = paired_interval(undirected.mean(axis=1) - strongly.mean(axis=1),
                         2 * max(undirected.max(), strongly.max()) + 1.0)
    per_agent = strongly.mean(axis=0)
    spread = float((per_agent.max() - per_agent.min()) / per_agent.mean())
    corr = float(np.corrcoef(degrees, per_agent)[0, 1]) if per_agent.std() > 0 else 0.0
    a = _decide_less(iv)
    if a == Verdict.FAIL or spread > 2 * spread_tolerance:
        verdict = Verdict.FAIL
    elif a == Verdict.PASS and spread <= spread_tolerance:
        verdict = Verdict.PASS
    else:
        verdict = Verdict.INCONCLUSIVE
    return Outcome(
        verdict=verdict,
        measured={"undirected_minus_strongly": iv["mean"], "difference_ci": iv["ci"],
                  "strongly_agent_spread": spread, "degree_regret_correlation": corr,
                  "strongly_per_agent_regret": per_agent.tolist(),
                  "undirected_per_agent_regret": undirected.mean(axis=0).tolist()},
        headline=["undirected_minus_strongly", "difference_ci", "strongly_agent_spread"],
        descriptions={
            "undirected_minus_strongly": "mean over seeds of (mean agent regret, undirected "
                                         "graph - the same, strongly connected graph)",
            "difference_ci": "bootstrap 95% interval",
            "strongly_agent_spread": "(max - min) / mean of the per-agent mean regrets on the "
                                     "strongly connected graph",
            "degree_regret_correlation": "correlation of |N_i| with agent i's mean regret "
                                         "(strongly connected graph)"},
        threshold=f"difference interval below 0 and spread <= {spread_tolerance} (PASS); "
                  f"interval above 0 or spread > {2 * spread_tolerance} (FAIL)",
        size=f"seeds={undirected.shape[0]}")


@claim("bandits.graph_type_ordering",
       statement="undirected graphs (Theorem 2 width) give lower regret than strongly "
                 "connected ones of the same size; on strongly connected graphs per-agent "
                 "regret is about independent of in-degree",
       source=f"{ZMSL}, first version, Corollary 2 and Section 5 (Figs 1-2)",
       kind=Kind.STATISTICAL)
def _graph_ordering(ctx: CheckContext) -> Outcome:
    T = 1000
    seeds = _seeds(ctx, 100, 400)
    arms = bernoulli(random_means(6, ctx.base_seed + 6))
    strong_adj = strongly_graph()
    und = evaluate(dec_ucb(undirected_graph(), theorem=2), arms, horizon=T, seeds=seeds,
                   record_every=T, progress=False)
    strong = evaluate(dec_ucb(strong_adj, theorem=1), arms, horizon=T, seeds=seeds,
                      record_every=T, progress=False)
    out = check_graph_ordering(np.asarray(und.regret, np.float64),
                               np.asarray(strong.regret, np.float64), strong_adj.sum(axis=1))
    out.size = f"the first version's 6-agent graphs, M=6, T={T}, {out.size}"
    return out


def check_distribution_robustness(homogeneous: np.ndarray, heterogeneous: np.ndarray
                                  ) -> Outcome:
    """Judge: |mean final regret (homogeneous) - (heterogeneous)| is within one standard
    deviation of the per-seed regret (PASS), else FAIL."""
    h, m = homogeneous.mean(axis=1), heterogeneous.mean(axis=1)
    diff = float(h.mean() - m.mean())
    sd = float(np.sqrt(0.5 * (h.var(ddof=1) + m.var(ddof=1))))
    return Outcome(
        verdict=Verdict.PASS if abs(diff) <= sd else Verdict.FAIL,
        measured={"difference": diff, "one_std": sd, "homogeneous_regret": float(h.mean()),
                  "heterogeneous_regret": float(m.mean())},
        descriptions={
            "difference": "mean final regret (mean over agents), homogeneous - heterogeneous",
            "one_std": "pooled standard deviation of the per-seed regret",
            "homogeneous_regret": "every (agent, arm) Beta(mean mu_k, sd 0.05)",
            "heterogeneous_regret": "each (agent, arm) Beta, Bernoulli or truncated normal with "
                                    "mean mu_k (drawn uniformly)"},
        threshold="|difference| <= one standard deviation",
        size=f"seeds={h.size}")


@claim("bandits.distribution_robustness",
       statement="homogeneous and heterogeneous reward distributions with equal means give "
                 "nearly the same regret (difference within about one standard deviation)",
       source=f"{ZMSL}, first version, Section 5 and appendix Figs 5-7",
       kind=Kind.STATISTICAL)
def _distribution(ctx: CheckContext) -> Outcome:
    from decentral.bandits import heterogeneous, truncated_normal

    T = 1000
    seeds = _seeds(ctx, 100, 400)
    mu = random_means(6, ctx.base_seed + 7)
    families = [beta_distribution(mu, 0.05), bernoulli(mu),
                truncated_normal(mu, 0.05, parameterization="mean")]
    choice = np.random.default_rng(ctx.base_seed + 7).integers(0, 3, size=(6, 6))
    # both as per-agent tables whose sampler evaluates the three families: the same rewards
    # as beta_distribution(mu, 0.05) (resp. the mixture), one compiled program for both runs
    names = ["beta", "bernoulli", "truncated_normal"]
    homo = heterogeneous(families, np.zeros((6, 6), int)).with_extra_families(names)
    hetero = heterogeneous(families, choice).with_extra_families(names)
    pol = dec_ucb(undirected_graph(), theorem=2)
    a = evaluate(pol, homo, horizon=T, seeds=seeds, record_every=T, progress=False)
    b = evaluate(pol, hetero, horizon=T, seeds=seeds, record_every=T, progress=False)
    out = check_distribution_robustness(np.asarray(a.regret, np.float64),
                                        np.asarray(b.regret, np.float64))
    out.size = f"undirected 6-agent graph, Dec_UCB (Theorem 2), M=6, T={T}, {out.size}"
    return out


# ---------------------------------------------------------------------------------------------
# 10-12. the journal version's experiments
# ---------------------------------------------------------------------------------------------

V4_MEANS = (0.2, 0.3, 0.4, 0.5, 0.6)
V4_SWEEP = (1.0, 0.1, 0.01)


def v4_graphs(count: int) -> list[np.ndarray]:
    """The journal version's graphs: the first ``count`` seeds s = 0, 1, ... for which
    networkx's ``fast_gnp_random_graph(20, 0.5, seed=s)`` is connected (self-loops added)."""
    import networkx as nx

    out, s = [], 0
    while len(out) < count:
        G = nx.fast_gnp_random_graph(20, 0.5, seed=s)
        if nx.is_connected(G):
            out.append(nx.to_numpy_array(G, dtype=bool) | np.eye(20, dtype=bool))
        s += 1
    return out


def v4_arms():
    """Truncated normals (location mu_k, sd 0.1, as the authors' code parameterises them)."""
    from decentral.bandits import truncated_normal

    return truncated_normal(list(V4_MEANS), 0.1)


def v4_regrets(make_policy, params, baseline, arms, graphs, seeds, horizon) -> dict:
    """Agent-averaged final regrets ``[P, G*S]`` of a swept decentralized policy on each graph
    and of the single-agent baseline (same streams): ``{"dec": [P, G*S], "base": [G*S]}``."""
    dec, base = [], []
    for adj in graphs:
        res = evaluate(make_policy(adj), arms, horizon=horizon, seeds=seeds, params=params,
                       sweep=True, record_every=horizon, progress=False)
        dec.append(np.asarray(res.regret, np.float64).mean(axis=-1))          # [P, S]
        if baseline is not None:
            b = evaluate(baseline, arms, horizon=horizon, seeds=seeds, num_agents=20,
                         record_every=horizon, progress=False)
            base.append(np.asarray(b.regret, np.float64).mean(axis=-1))
    out = {"dec": np.concatenate(dec, axis=1)}
    if base:
        out["base"] = np.concatenate(base)
    return out


def check_sweep_beats(dec: np.ndarray, base: np.ndarray, labels, value_range: float,
                      *, monotone: bool = True) -> Outcome:
    """Judge: for every swept value the paired difference (Dec - baseline) has its interval
    below 0, and (``monotone``) regret decreases along the sweep (each consecutive paired
    difference's interval below 0). FAIL on an interval above 0, PASS when all below."""
    rows, verdicts = {}, []
    for p, lab in enumerate(labels):
        iv = paired_interval(dec[p] - base, value_range)
        rows[f"{lab} vs baseline"] = iv
        verdicts.append(_decide_less(iv))
    if monotone:
        for p in range(1, len(labels)):
            iv = paired_interval(dec[p] - dec[p - 1], value_range)
            rows[f"{labels[p]} vs {labels[p - 1]}"] = iv
            verdicts.append(_decide_less(iv))
    verdict = combine_verdicts(verdicts)
    return Outcome(
        verdict=verdict,
        measured={"baseline_regret": float(base.mean()),
                  **{f"regret_{lab}": float(dec[p].mean()) for p, lab in enumerate(labels)},
                  "comparisons": rows},
        headline=["baseline_regret"] + [f"regret_{lab}" for lab in labels],
        descriptions={"baseline_regret": "agent-averaged final regret of the single-agent "
                                         "baseline (mean over graphs and seeds)",
                      "comparisons": "paired differences with bootstrap / empirical-Bernstein "
                                     "intervals"},
        threshold="every comparison's bootstrap 95% interval below 0 (PASS); any above (FAIL)",
        size=f"runs={base.size}")


@claim("bandits.v4_dec_ucb1_sweep",
       statement="journal version, Fig 2: on connected ER(20, 0.5) graphs the agent-averaged "
                 "regret of Dec-UCB1 is below single-agent UCB1 for beta in {1, 0.1, 0.01} and "
                 "decreases as beta decreases",
       source=f"{ZMSL}, journal version (IEEE TAC 2025), Fig 2 and the authors' notebooks; "
              f"{DOCS}#journal-version",
       kind=Kind.STATISTICAL)
def _v4_ucb1(ctx: CheckContext) -> Outcome:
    from decentral.bandits import DecUCB1Params, dec_ucb1

    T = 10_000 if ctx.full else 2_000
    graphs = v4_graphs(20 if ctx.full else 1)
    seeds = _seeds(ctx, 25, 5)
    arms = v4_arms()
    r = v4_regrets(lambda a: dec_ucb1(a), DecUCB1Params(np.array(V4_SWEEP)), ucb1(), arms,
                   graphs, seeds, T)
    out = check_sweep_beats(r["dec"], r["base"], [f"beta={b:g}" for b in V4_SWEEP],
                            2 * T * 0.4)
    out.size = f"{len(graphs)} graphs x {len(seeds)} seeds, M=5, T={T}, truncated normal sd 0.1"
    return out


@claim("bandits.v4_dec_kl_ucb",
       statement="journal version, Figs 1 and 3: Dec-KL-UCB beats single-agent KL-UCB for "
                 "varsigma in {1, 0.1, 0.01}, and Dec-KL-UCB <= Dec-UCB1 at equal "
                 "varsigma = beta",
       source=f"{ZMSL}, journal version (IEEE TAC 2025), Figs 1 and 3; {DOCS}#journal-version",
       kind=Kind.STATISTICAL)
def _v4_kl(ctx: CheckContext) -> Outcome:
    from decentral.bandits import DecKLUCBParams, DecUCB1Params, dec_kl_ucb, dec_ucb1, kl_ucb

    T = 10_000 if ctx.full else 1_000
    graphs = v4_graphs(20 if ctx.full else 1)
    seeds = _seeds(ctx, 10, 5)
    arms = v4_arms()
    kl = v4_regrets(lambda a: dec_kl_ucb(a), DecKLUCBParams(np.array(V4_SWEEP)), kl_ucb(),
                    arms, graphs, seeds, T)
    u1 = v4_regrets(lambda a: dec_ucb1(a), DecUCB1Params(np.array(V4_SWEEP)), None, arms,
                    graphs, seeds, T)
    labels = [f"varsigma={b:g}" for b in V4_SWEEP]
    vs_kl = check_sweep_beats(kl["dec"], kl["base"], labels, 2 * T * 0.4, monotone=False)
    rows, verdicts = dict(vs_kl.measured["comparisons"]), [vs_kl.verdict]
    for p, lab in enumerate(labels):
        iv = paired_interval(kl["dec"][p] - u1["dec"][p], 2 * T * 0.4)
        rows[f"Dec-KL-UCB vs Dec-UCB1 at {lab}"] = iv
        lo, hi = iv["ci"]
        verdicts.append(Verdict.PASS if hi <= 0 else Verdict.FAIL if lo > 0 else
                        Verdict.INCONCLUSIVE)
    verdict = combine_verdicts(verdicts)
    measured = {"kl_ucb_regret": vs_kl.measured["baseline_regret"],
                **{f"dec_kl_{lab}": float(kl["dec"][p].mean()) for p, lab in enumerate(labels)},
                **{f"dec_ucb1_{lab}": float(u1["dec"][p].mean()) for p, lab in enumerate(labels)},
                "comparisons": rows}
    return Outcome(
        verdict=verdict, measured=measured,
        headline=["kl_ucb_regret"] + [f"dec_kl_{lab}" for lab in labels],
        descriptions={"kl_ucb_regret": "single-agent KL-UCB (c = 0), agent-averaged final "
                                       "regret",
                      "comparisons": "paired differences with their intervals"},
        threshold="Dec-KL-UCB - KL-UCB interval below 0 for each varsigma and Dec-KL-UCB - "
                  "Dec-UCB1 interval at or below 0 (PASS); any interval above 0 (FAIL)",
        size=f"{len(graphs)} graphs x {len(seeds)} seeds, M=5, T={T}")


def small_graphs() -> tuple[np.ndarray, np.ndarray]:
    """The journal version's K6 (agents 0-5) and 6-cycle (6-11), disconnected, and the
    per-agent beta: 1 for the first three agents of each component, 0.01 for the rest."""
    adj = np.zeros((12, 12), bool)
    adj[:6, :6] = True
    for i in range(6):
        adj[6 + i, 6 + (i + 1) % 6] = adj[6 + (i + 1) % 6, 6 + i] = True
    adj |= np.eye(12, dtype=bool)
    beta = np.array([1, 1, 1, 0.01, 0.01, 0.01] * 2)
    return adj, beta


def check_group_order(regret: np.ndarray, groups: dict, order: list[tuple[str, str]],
                      value_range: float) -> Outcome:
    """Judge: for each pair (a, b) in ``order`` the paired difference (group a's mean regret -
    group b's) has its interval below 0 (PASS when all are; FAIL when one lies above 0)."""
    means = {k: regret[:, idx].mean(axis=1) for k, idx in groups.items()}
    rows, verdicts = {}, []
    for a, b in order:
        iv = paired_interval(means[a] - means[b], value_range)
        rows[f"{a} < {b}"] = iv
        verdicts.append(_decide_less(iv))
    verdict = combine_verdicts(verdicts)
    return Outcome(
        verdict=verdict,
        measured={**{f"regret {k}": float(v.mean()) for k, v in means.items()},
                  "comparisons": rows},
        headline=[f"regret {k}" for k in means],
        descriptions={"comparisons": "paired differences with their intervals"},
        threshold="every ordered pair's bootstrap 95% interval below 0 (PASS); any above "
                  "(FAIL)",
        size=f"seeds={regret.shape[0]}")


@claim("bandits.v4_small_graphs",
       statement="journal version, Figs 8-9: on K6 with a 6-cycle (disconnected), with beta = 1 "
                 "or 0.01 per agent, smaller beta gives lower regret in each component and K6 "
                 "agents beat cycle agents at equal beta",
       source=f"{ZMSL}, journal version (IEEE TAC 2025), Figs 8-9 (authors' small-graph code)",
       kind=Kind.STATISTICAL)
def _v4_small(ctx: CheckContext) -> Outcome:
    from decentral.bandits import dec_ucb1

    T = 10_000 if ctx.full else 3_000
    seeds = _seeds(ctx, 100, 100)
    adj, beta = small_graphs()
    res = evaluate(dec_ucb1(adj, beta=beta), v4_arms(), horizon=T, seeds=seeds,
                   record_every=T, progress=False)
    groups = {"K6 beta=1": [0, 1, 2], "K6 beta=0.01": [3, 4, 5], "C6 beta=1": [6, 7, 8],
              "C6 beta=0.01": [9, 10, 11]}
    order = [("K6 beta=0.01", "K6 beta=1"), ("C6 beta=0.01", "C6 beta=1"),
             ("K6 beta=1", "C6 beta=1"), ("K6 beta=0.01", "C6 beta=0.01")]
    out = check_group_order(np.asarray(res.regret, np.float64), groups, order, 2 * T * 0.4)
    out.size = f"N=12, M=5, T={T}, {out.size}"
    return out


__all__ += ["check_graph_ordering", "check_distribution_robustness", "v4_graphs", "v4_arms",
            "v4_regrets", "check_sweep_beats", "small_graphs", "check_group_order"]


# ---------------------------------------------------------------------------------------------
# 3-4. the finite-time bounds of Theorems 1 and 2
# ---------------------------------------------------------------------------------------------

def check_theorem_bound(steps, regret_paths: np.ndarray, bound: np.ndarray, dominant,
                        ) -> Outcome:
    """Judge per agent and record step: the bootstrap 95% interval of the mean regret against
    the bound (``bound [N, R]``). FAIL when some lower end lies above the bound, PASS when every
    upper end lies below. The result is *vacuous* (no evidence) when the burn-in term L
    dominates every suboptimal arm's term for every agent at the largest horizon."""
    paths = np.asarray(regret_paths, np.float64)                        # [S, R, N]
    mean, lo, hi = bootstrap_ci(paths, seed=0)                          # [R, N] each
    bound = np.asarray(bound, np.float64).T                             # [R, N]
    violated = bool(np.any(lo > bound))
    held = bool(np.all(hi <= bound))
    verdict = Verdict.FAIL if violated else Verdict.PASS if held else Verdict.INCONCLUSIVE
    dom = np.asarray(dominant)
    last = dom[..., -1, :] if dom.ndim == 3 else dom
    suboptimal = last[last != ""]
    vacuous = bool(suboptimal.size) and bool(np.all(suboptimal == "L"))
    ratio = float(np.max(mean / bound))
    counts = {k: int(np.sum(suboptimal == k)) for k in ("log", "graph", "L")}
    return Outcome(
        verdict=verdict, vacuous=vacuous,
        measured={"max_regret_over_bound": ratio,
                  "regret_at_T": mean[-1].tolist(), "bound_at_T": bound[-1].tolist(),
                  "dominant_terms_at_T": counts},
        headline=["max_regret_over_bound", "dominant_terms_at_T"],
        descriptions={
            "max_regret_over_bound": "max over agents and record steps of mean regret / bound",
            "regret_at_T": "per-agent mean pseudo-regret at T",
            "bound_at_T": "per-agent bound at T",
            "dominant_terms_at_T": "which term of max{ln T term, graph term, L} dominates, "
                                   "counted over (agent, suboptimal arm)"},
        threshold="every agent's 95% upper end below the bound at every record (PASS); any "
                  "lower end above it (FAIL); vacuous when L dominates every arm",
        size=f"T={int(np.asarray(steps)[-1])}, seeds={paths.shape[0]}, N={paths.shape[2]}")


def _bound_claim(ctx: CheckContext, adj: np.ndarray, theorem: int, seed_offset: int) -> Outcome:
    import warnings

    from decentral.bandits import theorem_bound

    T = 100_000 if ctx.full else 10_000
    seeds = _seeds(ctx, 50, 100)
    arms = bernoulli(random_means(6, ctx.base_seed + seed_offset))
    pol = dec_ucb(adj, theorem=theorem)
    steps = np.unique(np.geomspace(100, T, 8).astype(int))
    res = evaluate(pol, arms, horizon=T, seeds=seeds, record_at=steps, progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tb = theorem_bound(pol, arms, np.asarray(res.record_steps), theorem=theorem)
    out = check_theorem_bound(res.record_steps, res.regret_path, tb.bound, tb.dominant)
    out.hypotheses_failed = [str(w.message) for w in caught
                             if "Hypothesis" in type(w.message).__name__]
    c = tb.constants
    out.measured.update({"L": c.burn_in, "rho2": c.mixing_rate, "c": c.mixing_constant,
                         "diameter": c.diameter})
    out.descriptions.update({"L": "the burn-in constant L of the theorems",
                             "rho2": "second-largest eigenvalue magnitude of W",
                             "c": "the constant c with |W^t - 1 pi^T| <= c rho2^t",
                             "diameter": "d"})
    out.size = f"{out.size}, M=6"
    return out


@claim("bandits.theorem1_bound",
       statement="Theorem 1: on a strongly connected graph with flocking weights every agent's "
                 "regret is below sum_k Delta_k [max{16 ln T/(3 Delta_k^2), 2(M^2+2Md+d), L} "
                 "+ 2 pi^2/3 + M^2 + (2M-1) d]",
       source=f"{ZMSL}, first version, Theorem 1; constants in {DOCS}#theorem-constants",
       kind=Kind.STATISTICAL)
def _theorem1(ctx: CheckContext) -> Outcome:
    return _bound_claim(ctx, strongly_graph(), 1, 8)


@claim("bandits.theorem2_bound",
       statement="Theorem 2: on an undirected connected graph with Metropolis weights every "
                 "agent's regret is below the same form with 12 ln T / (|N_i| Delta_k^2)",
       source=f"{ZMSL}, first version, Theorem 2; constants in {DOCS}#theorem-constants",
       kind=Kind.STATISTICAL)
def _theorem2(ctx: CheckContext) -> Outcome:
    return _bound_claim(ctx, undirected_graph(), 2, 9)


__all__ += ["check_theorem_bound", "baseline_regret"]
