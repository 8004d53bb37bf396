"""Claims about decentralized UCB (Zhu, Mulle, Smith, Liu, arXiv 2111.10933: Dec_UCB of the
first version, Theorems 1-2 and Corollaries 1-4; Dec-UCB1 / Dec-KL-UCB of the journal version,
IEEE TAC 70(7) 2025): each ``@claim`` runs its setup (:mod:`proofs_checks.bandits.setups`) and
hands the recorded numbers to its judge (:mod:`proofs_checks.bandits.judges`).

The helpers that run policies (:func:`recorded_states`, :func:`baseline_regret`,
:func:`regret_pair`, :func:`regret_curves`, :func:`star_setup`, :func:`v4_regrets`) return
plain numpy arrays. Constants, reference values and derivations: ``docs/bandits.md``.
"""

from __future__ import annotations

import warnings

import numpy as np

import decentral.graphs as g
from decentral.bandits import (
    DecKLUCBParams,
    DecUCB1Params,
    bandit_algorithm,
    bernoulli,
    beta_distribution,
    dec_kl_ucb,
    dec_ucb,
    dec_ucb1,
    evaluate,
    heterogeneous,
    kl_ucb,
    theorem_bound,
    truncated_normal,
    ucb,
    ucb1,
)
from decentral.runner import run
from decentral.verify import CheckContext, Kind, Outcome, combine_verdicts

from ..registry import claim
from .judges import (
    arm_sequence,
    check_ablation,
    check_beats,
    check_correlated,
    check_distribution_robustness,
    check_graph_ordering,
    check_group_order,
    check_invariants,
    check_reduction,
    check_same_page,
    check_star,
    check_sweep_beats,
    check_theorem_bound,
)
from .setups import (
    STAR_MEANS,
    V4_SWEEP,
    directed_path,
    random_means,
    small_graphs,
    strongly_graph,
    undirected_graph,
    v4_arms,
    v4_graphs,
    weakly_graph,
)

__all__ = ["recorded_states", "star_setup", "baseline_regret", "regret_pair", "regret_curves",
           "v4_regrets"]

DOCS = "docs/bandits.md"
ZMSL = "Zhu, Mulle, Smith, Liu, arXiv 2111.10933"

def _seeds(ctx: CheckContext, quick: int, full: int) -> list[int]:
    return list(range(ctx.base_seed, ctx.base_seed + ctx.seed_count(quick, full)))


def _batches(ctx: CheckContext, batch: int, quick: int, full: int) -> dict:
    """Sequential sizing of a claim: ``batch`` seeds per look (``--seeds`` fixes the count as
    one look) and the maximum ``quick`` / ``full`` seeds scaled by ``--budget``. Batch ``k``
    holds seeds ``base + k * batch ...``; returns ``batch``, ``max_seeds``, ``fixed_seeds``
    and ``seeds(k)``."""
    size = batch if ctx.seeds is None else ctx.seeds
    return {"batch": size, "fixed_seeds": ctx.seeds,
            "max_seeds": ctx.seed_budget(quick, full, batch=size),
            "seeds": lambda k: ctx.batch_seeds(k, size)}


# ---------------------------------------------------------------------------------------------
# 1. the N = 1 reduction
# ---------------------------------------------------------------------------------------------

def _policy_and_pulls(state):
    """Record function of :func:`recorded_states` (defined once: the runner compiles per
    function)."""
    return state.policy, state.pulls


def recorded_states(policy, arms, seeds, T, num_agents=None):
    """``(policy state, pulls)`` of ``policy`` on ``arms`` recorded at every step ``0..T``: the
    policy's state (e.g. :class:`~decentral.bandits.DecState`) with leading axes ``[S, T+1]``
    and the pull counts ``[S, T+1, N, M]`` as numpy."""
    alg = bandit_algorithm(policy, arms, num_agents=num_agents)
    res = run(alg, policy.params, seeds=list(seeds), num_steps=T,
              record_fn=_policy_and_pulls, record_every=1, record_initial=True,
              progress=False)
    state, pulls = res.records
    return state, np.asarray(pulls)


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
    dec_state, dec_pulls = recorded_states(dec_ucb(one, theorem=1), arms, seeds, T)
    _, ucb_pulls = recorded_states(ucb(4 / 3), arms, seeds, T, num_agents=1)
    return check_reduction(arm_sequence(dec_pulls), arm_sequence(ucb_pulls),
                           np.asarray(dec_state.z), np.asarray(dec_state.means))


# ---------------------------------------------------------------------------------------------
# 2. consensus invariants
# ---------------------------------------------------------------------------------------------

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
        st, _ = recorded_states(pol, arms, seeds, T)
        outs.append(check_invariants(np.asarray(pol.graphs.at(0)), g.diameter(adj), st.counts,
                                     st.means, st.max_counts, st.z))
    verdict = combine_verdicts([o.verdict for o in outs])
    violations = sum(o.measured[k] for o in outs for k in
                     ("n_above_m", "m_above_max_n", "m_below_lagged_max"))
    return Outcome(
        verdict=verdict,
        measured={"metropolis_sum_gap": outs[0].measured["pi_weighted_gap"],
                  "flocking_pi_gap": outs[1].measured["pi_weighted_gap"],
                  "count_violations": violations,
                  "undirected": outs[0].measured, "strongly": outs[1].measured},
        headline=["metropolis_sum_gap", "flocking_pi_gap", "count_violations"],
        descriptions={"metropolis_sum_gap": "undirected graph, Metropolis W (pi = 1/N): max "
                                            "|mean_i (z - xbar)|",
                      "flocking_pi_gap": "strongly connected graph, flocking W: max "
                                         "|pi^T (z - xbar)|",
                      "count_violations": "entries breaking n <= m <= max n or the lagged bound"},
        threshold=outs[0].threshold,
        reason=f"largest |pi^T (z - xbar)| {outs[0].measured['pi_weighted_gap']:.2g} "
               f"(Metropolis) and {outs[1].measured['pi_weighted_gap']:.2g} (flocking), "
               f"tolerance 1e-09; {violations} count violations",
        size=f"the first version's undirected and strongly connected graphs; {outs[0].size}")


# ---------------------------------------------------------------------------------------------
# 3-4. the finite-time bounds of Theorems 1 and 2
# ---------------------------------------------------------------------------------------------

def _bound_claim(ctx: CheckContext, adj: np.ndarray, theorem: int, seed_offset: int) -> Outcome:
    T = 100_000 if ctx.full else 10_000
    plan = _batches(ctx, 50, 400, 800)
    arms = bernoulli(random_means(6, ctx.base_seed + seed_offset))
    pol = dec_ucb(adj, theorem=theorem)
    steps = np.unique(np.geomspace(100, T, 8).astype(int))

    def draw(k):
        res = evaluate(pol, arms, horizon=T, seeds=plan["seeds"](k), record_at=steps,
                       progress=False)
        if not np.array_equal(res.record_steps, steps):
            raise RuntimeError(f"evaluate recorded at {res.record_steps}, not {steps}")
        return res.regret_path

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tb = theorem_bound(pol, arms, steps, theorem=theorem)
    out = check_theorem_bound(steps, draw, tb.bound, tb.dominant,
                              arms.gaps(adj.shape[0]).max(axis=1), batch=plan["batch"],
                              max_seeds=plan["max_seeds"], fixed_seeds=plan["fixed_seeds"])
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


# ---------------------------------------------------------------------------------------------
# 4b. the star graph: Theorem 2's per-agent |N_i| dependence
# ---------------------------------------------------------------------------------------------

def star_setup(num_agents: int, horizon: int, seeds) -> dict:
    """Pull counts of the suboptimal arm on a star with Metropolis weights (agent 0 the hub)."""
    adj = g.star(num_agents)
    steps = np.unique(np.geomspace(max(10, horizon // 100), horizon, 12).astype(int))
    res = evaluate(dec_ucb(adj, theorem=2), bernoulli(STAR_MEANS), horizon=horizon,
                   seeds=seeds, record_at=steps, record_pulls=True, progress=False)
    counts = res.pulls_path[..., 1].astype(np.float64)              # [S, R, N]
    return {"steps": np.asarray(res.record_steps), "hub": counts[:, :, 0],
            "leaves": counts[:, :, 1:].mean(axis=2), "num_agents": num_agents}


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


@claim("bandits.beats_ucb1",
       statement="Corollaries 1 and 3, empirical: on strongly connected (flocking) and "
                 "undirected (Metropolis) graphs the worst Dec_UCB agent's regret is below "
                 "that of N independent UCB1 agents",
       source=f"{ZMSL}, first version, Corollaries 1 and 3, Figs 1-4; setup in "
              f"{DOCS}#experiments",
       kind=Kind.STATISTICAL)
def _beats(ctx: CheckContext) -> Outcome:
    T = 10_000 if ctx.full else 3_000
    plan = _batches(ctx, 100, 400, 800)
    arms = bernoulli(random_means(10, ctx.base_seed + 2))
    policies = {"strongly (Theorem 1)": (dec_ucb(strongly_graph(), theorem=1), 6),
                "undirected (Theorem 2)": (dec_ucb(undirected_graph(), theorem=2), 6)}
    if ctx.full:
        strong = g.erdos_renyi(50, 0.5, kind="strong", seed=ctx.base_seed)
        und = g.erdos_renyi(50, 0.5, kind="undirected", seed=ctx.base_seed)
        policies["ER(50, 0.5) strong"] = (dec_ucb(strong, theorem=1), 50)
        policies["ER(50, 0.5) undirected"] = (dec_ucb(und, theorem=2), 50)

    def draw(k):
        return {name: regret_pair(pol, ucb1(), arms, T, plan["seeds"](k), n)
                for name, (pol, n) in policies.items()}

    out = check_beats(draw, list(policies), batch=plan["batch"], max_seeds=plan["max_seeds"],
                      fixed_seeds=plan["fixed_seeds"])
    out.size = f"{out.size}, M=10, T={T}, independent Bernoulli rewards"
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
# 7-8. graph-type ordering and distribution robustness (first version's observations)
# ---------------------------------------------------------------------------------------------

@claim("bandits.graph_type_ordering",
       statement="undirected graphs (Theorem 2 width) give lower regret than strongly "
                 "connected ones of the same size; on strongly connected graphs per-agent "
                 "regret is about independent of in-degree",
       source=f"{ZMSL}, first version, Corollary 2 and Section 5 (Figs 1-2)",
       kind=Kind.STATISTICAL)
def _graph_ordering(ctx: CheckContext) -> Outcome:
    T = 1000
    plan = _batches(ctx, 100, 400, 800)
    arms = bernoulli(random_means(6, ctx.base_seed + 6))
    strong_adj = strongly_graph()
    policies = {"undirected": dec_ucb(undirected_graph(), theorem=2),
                "strongly": dec_ucb(strong_adj, theorem=1)}

    def draw(k):
        return {name: evaluate(pol, arms, horizon=T, seeds=plan["seeds"](k), record_every=T,
                               progress=False).regret for name, pol in policies.items()}

    out = check_graph_ordering(draw, strong_adj.sum(axis=1), batch=plan["batch"],
                               max_seeds=plan["max_seeds"], fixed_seeds=plan["fixed_seeds"])
    out.size = f"the first version's 6-agent graphs, M=6, T={T}, {out.size}"
    return out


@claim("bandits.distribution_robustness",
       statement="homogeneous and heterogeneous reward distributions with equal means give "
                 "nearly the same regret (difference within about one standard deviation)",
       source=f"{ZMSL}, first version, Section 5 and appendix Figs 5-7",
       kind=Kind.STATISTICAL)
def _distribution(ctx: CheckContext) -> Outcome:
    T = 1000
    plan = _batches(ctx, 100, 400, 800)
    mu = random_means(6, ctx.base_seed + 7)
    families = [beta_distribution(mu, 0.05), bernoulli(mu),
                truncated_normal(mu, 0.05, parameterization="mean")]
    choice = np.random.default_rng(ctx.base_seed + 7).integers(0, 3, size=(6, 6))
    # both as per-agent tables whose sampler evaluates the three families: the same rewards
    # as beta_distribution(mu, 0.05) (resp. the mixture), one compiled program for both runs
    names = ["beta", "bernoulli", "truncated_normal"]
    tables = {"homogeneous": heterogeneous(families, np.zeros((6, 6), int))
              .with_extra_families(names),
              "heterogeneous": heterogeneous(families, choice).with_extra_families(names)}
    pol = dec_ucb(undirected_graph(), theorem=2)

    def draw(k):
        return {name: evaluate(pol, table, horizon=T, seeds=plan["seeds"](k), record_every=T,
                               progress=False).regret for name, table in tables.items()}

    out = check_distribution_robustness(draw, batch=plan["batch"], max_seeds=plan["max_seeds"],
                                        fixed_seeds=plan["fixed_seeds"])
    out.size = f"undirected 6-agent graph, Dec_UCB (Theorem 2), M=6, T={T}, {out.size}"
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
    plan = _batches(ctx, 100, 400, 800)
    arms = bernoulli(random_means(6, ctx.base_seed + 5))
    policies = {"weakly (sink 3)": dec_ucb(weakly_graph(), theorem=1),
                "directed path": dec_ucb(directed_path(), theorem=1)}

    def draw(k):
        return {name: regret_pair(pol, ucb1(), arms, T, plan["seeds"](k), 6)
                for name, pol in policies.items()}

    out = check_beats(draw, list(policies), batch=plan["batch"], max_seeds=plan["max_seeds"],
                      fixed_seeds=plan["fixed_seeds"], statistic="mean")
    out.size = f"{out.size}, M=6, T={T}"
    return out


# ---------------------------------------------------------------------------------------------
# 10-12. the journal version's experiments
# ---------------------------------------------------------------------------------------------

def v4_regrets(make_policy, params, baseline, arms, graphs, seeds, horizon) -> dict:
    """Agent-averaged final regrets of a swept decentralized policy and of the single-agent
    baseline (same streams), averaged over the graphs per seed: ``{"dec": [P, S], "base":
    [S]}`` (one independent sample per seed; the graphs share the seed's streams)."""
    dec, base = [], []
    for adj in graphs:
        res = evaluate(make_policy(adj), arms, horizon=horizon, seeds=seeds, params=params,
                       sweep=True, record_every=horizon, progress=False)
        dec.append(np.asarray(res.regret, np.float64).mean(axis=-1))          # [P, S]
        if baseline is not None:
            b = evaluate(baseline, arms, horizon=horizon, seeds=seeds, num_agents=20,
                         record_every=horizon, progress=False)
            base.append(np.asarray(b.regret, np.float64).mean(axis=-1))
    out = {"dec": np.mean(dec, axis=0)}
    if base:
        out["base"] = np.mean(base, axis=0)
    return out


@claim("bandits.v4_dec_ucb1_sweep",
       statement="journal version, Fig 2: on connected ER(20, 0.5) graphs the agent-averaged "
                 "regret of Dec-UCB1 is below single-agent UCB1 for beta in {1, 0.1, 0.01} and "
                 "decreases as beta decreases",
       source=f"{ZMSL}, journal version (IEEE TAC 2025), Fig 2 and the authors' notebooks; "
              f"{DOCS}#journal-version",
       kind=Kind.STATISTICAL)
def _v4_ucb1(ctx: CheckContext) -> Outcome:
    T = 10_000 if ctx.full else 2_000
    graphs = v4_graphs(20 if ctx.full else 1)
    plan = _batches(ctx, 25 if not ctx.full else 5, 100, 20)
    arms = v4_arms()

    def draw(k):
        return v4_regrets(lambda a: dec_ucb1(a), DecUCB1Params(np.array(V4_SWEEP)), ucb1(),
                          arms, graphs, plan["seeds"](k), T)

    out = check_sweep_beats(draw, [f"beta={b:g}" for b in V4_SWEEP], batch=plan["batch"],
                            max_seeds=plan["max_seeds"], fixed_seeds=plan["fixed_seeds"])
    out.size = (f"{len(graphs)} graphs x {out.size} (regrets averaged over the graphs per "
                f"seed), M=5, T={T}, truncated normal sd 0.1")
    return out


@claim("bandits.v4_dec_kl_ucb",
       statement="journal version, Figs 1 and 3: Dec-KL-UCB beats single-agent KL-UCB for "
                 "varsigma in {1, 0.1, 0.01}, and Dec-KL-UCB <= Dec-UCB1 at equal "
                 "varsigma = beta",
       source=f"{ZMSL}, journal version (IEEE TAC 2025), Figs 1 and 3; {DOCS}#journal-version",
       kind=Kind.STATISTICAL)
def _v4_kl(ctx: CheckContext) -> Outcome:
    T = 10_000 if ctx.full else 1_000
    graphs = v4_graphs(20 if ctx.full else 1)
    plan = _batches(ctx, 10 if not ctx.full else 5, 40, 20)
    arms = v4_arms()
    labels = [f"varsigma={b:g}" for b in V4_SWEEP]

    def draw(k):
        seeds = plan["seeds"](k)
        kl = v4_regrets(lambda a: dec_kl_ucb(a), DecKLUCBParams(np.array(V4_SWEEP)), kl_ucb(),
                        arms, graphs, seeds, T)
        u1 = v4_regrets(lambda a: dec_ucb1(a), DecUCB1Params(np.array(V4_SWEEP)), None, arms,
                        graphs, seeds, T)
        return {"dec": kl["dec"], "base": kl["base"], "ucb1": u1["dec"]}

    # Dec-KL-UCB against Dec-UCB1 at equal varsigma = beta: the same seeds, paired.
    extra = tuple((f"Dec-KL-UCB vs Dec-UCB1 at {lab}", lambda v, p=p: v["dec"][p] - v["ucb1"][p])
                  for p, lab in enumerate(labels))
    out = check_sweep_beats(draw, labels, batch=plan["batch"], max_seeds=plan["max_seeds"],
                            fixed_seeds=plan["fixed_seeds"], monotone=False, extra=extra)
    out.measured = {("kl_ucb_regret" if k == "baseline_regret" else
                     k.replace("regret_", "dec_kl_regret_")): v for k, v in out.measured.items()}
    out.headline = ["kl_ucb_regret"] + [f"dec_kl_regret_{lab}" for lab in labels]
    out.descriptions = {
        "kl_ucb_regret": "single-agent KL-UCB (c = 0), agent-averaged final regret (seed mean)",
        **{f"dec_kl_regret_{lab}": f"Dec-KL-UCB at {lab}, agent-averaged final regret"
           for lab in labels},
        "comparisons": out.descriptions["comparisons"]}
    out.size = f"{len(graphs)} graphs x {out.size}, M=5, T={T}"
    return out


@claim("bandits.v4_small_graphs",
       statement="journal version, Figs 8-9: on K6 with a 6-cycle (disconnected), with beta = 1 "
                 "or 0.01 per agent, smaller beta gives lower regret in each component and K6 "
                 "agents beat cycle agents at equal beta",
       source=f"{ZMSL}, journal version (IEEE TAC 2025), Figs 8-9 (authors' small-graph code)",
       kind=Kind.STATISTICAL)
def _v4_small(ctx: CheckContext) -> Outcome:
    T = 10_000 if ctx.full else 3_000
    plan = _batches(ctx, 100, 400, 400)
    adj, beta = small_graphs()

    def draw(k):
        res = evaluate(dec_ucb1(adj, beta=beta), v4_arms(), horizon=T, seeds=plan["seeds"](k),
                       record_every=T, progress=False)
        return np.asarray(res.regret, np.float64)

    groups = {"K6 beta=1": [0, 1, 2], "K6 beta=0.01": [3, 4, 5], "C6 beta=1": [6, 7, 8],
              "C6 beta=0.01": [9, 10, 11]}
    order = [("K6 beta=0.01", "K6 beta=1"), ("C6 beta=0.01", "C6 beta=1"),
             ("K6 beta=1", "C6 beta=1"), ("K6 beta=0.01", "C6 beta=0.01")]
    out = check_group_order(draw, groups, order, batch=plan["batch"],
                            max_seeds=plan["max_seeds"], fixed_seeds=plan["fixed_seeds"])
    out.size = f"N=12, M=5, T={T}, {out.size}"
    return out


# ---------------------------------------------------------------------------------------------
# 13. the "same page" gap
# ---------------------------------------------------------------------------------------------

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

@claim("bandits.correlated_streams",
       statement="with the journal notebooks' correlated streams (each agent's j-th sample of "
                 "arm k identical across agents) Dec's advantage over UCB1 shrinks relative "
                 "to independent streams",
       source=f"derived from the authors' code (csasmith/vip-mab, code/KL_UCB notebooks); "
              f"{DOCS}#reward-streams",
       kind=Kind.STATISTICAL)
def _correlated(ctx: CheckContext) -> Outcome:
    T = 10_000 if ctx.full else 1_000
    arms = bernoulli([0.6, 0.5, 0.4, 0.3, 0.2])
    pol = dec_ucb(undirected_graph(), theorem=2)
    plan = _batches(ctx, 100, 1600, 6400)

    def draw(k):
        seeds = plan["seeds"](k)
        return (regret_pair(pol, ucb1(), arms, T, seeds, 6),
                regret_pair(pol, ucb1(), arms.with_correlated(), T, seeds, 6))

    out = check_correlated(draw, batch=plan["batch"], max_seeds=plan["max_seeds"],
                           fixed_seeds=plan["fixed_seeds"])
    out.size = f"undirected 6-agent graph, Dec_UCB (Theorem 2) vs UCB1, M=5, T={T}, {out.size}"
    return out
