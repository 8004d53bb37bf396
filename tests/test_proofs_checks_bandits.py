"""The bandit claims of proofs_checks: each judge PASSes on consistent input and FAILs on a
planted violation (tiny runs and synthetic curves)."""

from __future__ import annotations

import numpy as np
import pytest

import decentral.graphs as g
from decentral.bandits import bernoulli, dec_ucb, ucb1
from decentral.verify import Verdict
from proofs_checks import bandits as pb

pytestmark = pytest.mark.usefixtures("x64_module")

RNG = np.random.default_rng(0)


def test_paper_graphs_by_hand():
    # the package's edge lists against an independent transcription of the first version's
    und_edges = [(0, 1), (0, 4), (1, 3), (1, 5), (2, 3), (3, 5), (4, 5)]
    und = g.from_edges(6, und_edges + [(j, i) for i, j in und_edges])
    assert np.array_equal(pb.undirected_graph(), und)
    assert (und.sum(1) - 1).tolist() == [2, 3, 1, 3, 2, 3]        # |N_i| = (3,4,2,4,3,4)
    successors = {0: [1, 4], 1: [0, 2, 3, 4], 2: [0, 3, 4, 5], 3: [1, 2, 4, 5], 4: [0, 2, 3],
                  5: [1, 4]}                                       # j: agents hearing j
    strong = g.from_edges(6, [(j, i) for j, out in successors.items() for i in out])
    assert np.array_equal(pb.strongly_graph(), strong)
    assert strong.sum(1).tolist() == [4, 4, 4, 4, 6, 3]
    weak = pb.weakly_graph()
    assert not g.is_strongly_connected(weak) and weak[:, 3].sum() == 1   # nobody hears 3
    path = pb.directed_path()
    assert path[2, 1] and not path[1, 2]


def test_reduction_judge():
    arms = RNG.integers(0, 3, size=(2, 50, 1))
    z = RNG.random((2, 51, 1, 3))
    assert pb.check_reduction(arms, arms, z, z).verdict == Verdict.PASS
    other = arms.copy()
    other[1, 20, 0] = (other[1, 20, 0] + 1) % 3
    assert pb.check_reduction(arms, other, z, z).verdict == Verdict.FAIL
    assert pb.check_reduction(arms, arms, z, z + 1e-6).verdict == Verdict.FAIL


def test_invariants_judge_on_a_tiny_run_and_planted_violations():
    pol = dec_ucb(pb.undirected_graph(), theorem=2)
    st, _ = pb.recorded_states(pol, bernoulli([0.7, 0.4, 0.3]), [0], 60)
    W = np.asarray(pol.graphs.at(0))
    d = g.diameter(pb.undirected_graph())
    args = (np.asarray(st.counts), np.asarray(st.means), np.asarray(st.max_counts),
            np.asarray(st.z))
    assert pb.check_invariants(W, d, *args).verdict == Verdict.PASS
    z = args[3].copy()
    z[0, 30, 2, 1] += 1e-6
    assert pb.check_invariants(W, d, *args[:3], z).verdict == Verdict.FAIL
    m = args[2].copy()
    m[0, 40, 1, 0] = args[0][0, 40, 1, 0] - 1                       # m below n
    assert pb.check_invariants(W, d, args[0], args[1], m, args[3]).verdict == Verdict.FAIL
    # flocking weights on a directed graph: judged with the wrong pi (transposed W) it fails
    strong = pb.strongly_graph()
    pol = dec_ucb(strong, theorem=1)
    st, _ = pb.recorded_states(pol, bernoulli([0.7, 0.4, 0.3]), [0], 60)
    W = np.asarray(pol.graphs.at(0))
    args = (st.counts, st.means, st.max_counts, st.z)
    assert pb.check_invariants(W, g.diameter(strong), *args).verdict == Verdict.PASS
    Wt = W.T / W.T.sum(1, keepdims=True)
    assert pb.check_invariants(Wt, g.diameter(strong), *args).verdict == Verdict.FAIL


def _log_curves(coef, steps, seeds=40, noise=1.0):
    return coef * np.log(steps)[None, :] + RNG.normal(0, noise, (seeds, steps.size))


def test_star_judge_on_synthetic_slopes():
    steps = np.geomspace(100, 10_000, 12)
    leaves = _log_curves(150, steps)
    hub_coupled = _log_curves(150, steps)
    assert pb.check_star(steps, hub_coupled, leaves, 20).verdict == Verdict.FAIL
    hub_ok = _log_curves(30, steps)
    out = pb.check_star(steps, hub_ok, leaves, 20)
    assert out.verdict == Verdict.PASS and out.measured["hub_over_leaf_pulls_at_T"] < 0.5


def test_beats_judge():
    base = RNG.normal(400, 10, (50, 6))
    def beats(dec, **kw):
        def draw(k):
            rows = slice(25 * k, 25 * (k + 1))
            return {"g": {"dec": dec[rows], "base": base[rows]}}
        return pb.check_beats(draw, ["g"], batch=25, max_seeds=50, **kw)

    good = beats(base - 100 + RNG.normal(0, 5, (50, 6)))
    assert good.verdict == Verdict.PASS and good.measured["cases"]["g"]["seeds"] == 25
    assert "1 of 1 paired differences below 0" in good.reason
    assert beats(base + 50).verdict == Verdict.FAIL
    # the worst agent decides: one agent far worse than UCB1 fails the worst-agent form only
    mixed = base - 100
    mixed[:, 0] = base[:, 0] + 300
    assert beats(mixed).verdict == Verdict.FAIL
    assert beats(mixed, statistic="mean").verdict == Verdict.PASS


def test_regret_pair_runs_on_shared_streams():
    pair = pb.regret_pair(dec_ucb(pb.undirected_graph(), theorem=2), ucb1(),
                          bernoulli([0.8, 0.3]), 200, [0, 1, 2], 6)
    assert pair["dec"].shape == (3, 6) and pair["base"].shape == (3, 6)
    assert pair["range"] == pytest.approx(2 * 200 * 0.5)


def test_ablation_judge():
    steps = np.geomspace(100, 10_000, 12)
    same = {"dec_ucb_directed": _log_curves(20, steps), "ucb_4_3": _log_curves(20, steps),
            "ucb1": _log_curves(30, steps)}
    assert pb.check_ablation(steps, same, {}).verdict == Verdict.PASS
    apart = {**same, "dec_ucb_directed": _log_curves(60, steps)}
    assert pb.check_ablation(steps, apart, {}).verdict == Verdict.FAIL


def test_same_page_judge():
    steps = np.geomspace(10, 10_000, 15)
    flat = np.full((10, 15), 3.0)
    assert pb.check_same_page(steps, flat, 69).verdict == Verdict.PASS
    growing = np.tile(np.linspace(1, 8, 15), (10, 1))
    assert pb.check_same_page(steps, growing, 69).verdict == Verdict.INCONCLUSIVE
    assert pb.check_same_page(steps, flat + 70, 69).verdict == Verdict.FAIL
    # noisy gaps whose last third is 1.1 x the middle on average: the interval decides nothing
    rng = np.random.default_rng(6)
    edge = np.concatenate([np.full((30, 5), 3.0), np.full((30, 5), 3.0),
                           np.full((30, 5), 3.3)], axis=1) + rng.normal(0, 1.0, (30, 15))
    out = pb.check_same_page(steps, edge, 69)
    assert out.verdict == Verdict.INCONCLUSIVE and out.measured["alpha"] == 0.05
    lo, hi = out.measured["growth_ci"]
    assert lo < 0 < hi and "30 seeds, alpha 0.05" in out.reason


def test_correlated_judge():
    base = RNG.normal(400, 10, (60, 6))
    ind = {"dec": base - 100, "base": base, "range": 1e4}
    shrunk = {"dec": base - 50, "base": base, "range": 1e4}

    def batches(first, second):
        def draw(k):
            rows = slice(20 * k, 20 * (k + 1))
            return ({"dec": first["dec"][rows], "base": first["base"][rows]},
                    {"dec": second["dec"][rows], "base": second["base"][rows]})
        return draw

    ok = pb.check_correlated(batches(ind, shrunk), batch=20, max_seeds=60)
    assert ok.verdict == Verdict.PASS and ok.measured["difference_seeds_used"] < 60
    assert ok.measured["difference_alpha"] == 0.05
    assert pb.check_correlated(batches(shrunk, ind), batch=20, max_seeds=60).verdict \
        == Verdict.FAIL
    # Equal advantages on average (+-5 alternating by seed): the difference cannot be decided.
    sign = np.where(np.arange(base.shape[0]) % 2 == 0, 5.0, -5.0)[:, None]
    noisy = {"dec": ind["dec"] + sign, "base": base}
    same = pb.check_correlated(batches(ind, noisy), batch=20, max_seeds=60)
    assert same.verdict == Verdict.INCONCLUSIVE and same.measured["difference_seeds_used"] == 60


def test_graph_ordering_judge():
    rng = np.random.default_rng(4)
    strong = rng.normal(100, 5, (100, 6))
    und = strong - 20 + rng.normal(0, 1, (100, 6))
    deg = np.array([4, 4, 4, 4, 6, 3])

    def judge(u, s_):
        return pb.check_graph_ordering(lambda k: {"undirected": u[50 * k:50 * (k + 1)],
                                                  "strongly": s_[50 * k:50 * (k + 1)]},
                                       deg, batch=50, max_seeds=100)

    ok = judge(und, strong)
    assert ok.verdict == Verdict.PASS and ok.measured["seeds_used"] == 50
    assert ok.measured["strongly_per_agent_regret"][0] == pytest.approx(strong[:50, 0].mean())
    assert judge(strong + 20, strong).verdict == Verdict.FAIL
    uneven = strong.copy()
    uneven[:, 4] *= 0.5                                      # the high-degree agent far better
    assert judge(und, uneven).verdict == Verdict.FAIL
    same = judge(strong + rng.normal(0, 1, strong.shape), strong)
    assert same.verdict == Verdict.INCONCLUSIVE and same.measured["seeds_used"] == 100


def test_distribution_robustness_judge():
    rng = np.random.default_rng(3)                 # its own stream: the edge case is fixed
    a = rng.normal(45, 1.0, (200, 6))

    def judge(b):
        return pb.check_distribution_robustness(
            lambda k: {"homogeneous": a[100 * k:100 * (k + 1)],
                       "heterogeneous": b[100 * k:100 * (k + 1)]}, batch=100, max_seeds=200)

    ok = judge(a + 0.1)
    assert ok.verdict == Verdict.PASS and ok.measured["one_std"] == pytest.approx(
        np.sqrt(0.5 * (a[:100].mean(1).var(ddof=1) + (a[:100] + 0.1).mean(1).var(ddof=1))))
    assert judge(a + 10).verdict == Verdict.FAIL
    # a difference right at one standard deviation: not decided on 200 seeds
    edge = rng.normal(45 - 1 / np.sqrt(6), 1.0, a.shape)       # independent, mean sd away
    assert judge(edge).verdict == Verdict.INCONCLUSIVE


def test_sweep_and_group_judges():
    base = RNG.normal(120, 5, 40)
    labels = ["1", "0.1", "0.01"]

    def sweep(dec, **kw):
        def draw(k):
            return {"dec": dec[:, 20 * k:20 * (k + 1)], "base": base[20 * k:20 * (k + 1)]}
        return pb.check_sweep_beats(draw, labels, batch=20, max_seeds=40, **kw)

    dec = np.stack([base - 50, base - 90, base - 95]) + RNG.normal(0, 1, (3, 40))
    ok = sweep(dec)
    assert ok.verdict == Verdict.PASS and len(ok.measured["comparisons"]) == 5
    assert ok.measured["regret_0.01"] == pytest.approx((dec[2][:20]).mean())
    assert sweep(dec[::-1]).verdict == Verdict.FAIL                 # not monotone
    assert sweep(dec + 200, monotone=False).verdict == Verdict.FAIL
    extra = (("0.01 above 1", lambda v: v["dec"][0] - v["dec"][2]),)
    assert sweep(dec, monotone=False, extra=extra).verdict == Verdict.FAIL
    regret = RNG.normal(0, 1, (30, 4)) + np.array([10, 20, 30, 40])
    groups = {"a": [0], "b": [1], "c": [2], "d": [3]}

    def order(pairs):
        return pb.check_group_order(lambda k: regret[15 * k:15 * (k + 1)], groups, pairs,
                                    batch=15, max_seeds=30)

    assert order([("a", "b"), ("c", "d")]).verdict == Verdict.PASS
    assert order([("d", "a")]).verdict == Verdict.FAIL
    adj, beta = pb.small_graphs()
    assert adj[:6, 6:].sum() == 0 and (adj[6:, 6:].sum(1) == 3).all()   # C6: |N| = 3


def test_theorem_bound_judge():
    steps = np.array([100, 1000, 10_000])
    paths = np.abs(RNG.normal(50, 2, (60, 3, 4))) * np.log(steps)[None, :, None] / 9
    gap = np.ones(4)

    def judge(bound, dom, **kw):
        kw.setdefault("max_seeds", 60)
        return pb.check_theorem_bound(steps, lambda k: paths[30 * k:30 * (k + 1)], bound, dom,
                                      gap, batch=30, **kw)

    bound = np.full((4, 3), 5e3)
    dom = np.array([["", "L", "log"]] * 4)
    out = judge(bound, dom)
    assert out.verdict == Verdict.PASS and not out.vacuous
    assert out.measured["seeds_used"] == 30 and out.measured["trivially_held"] == 8
    assert judge(bound / 1e3, dom).verdict == Verdict.FAIL
    # a bound just above the mean is not decided by the confidence sequence on [0, t]
    tight = paths.mean(axis=0).T * 1.02
    undecided = judge(tight, dom)
    assert undecided.verdict == Verdict.INCONCLUSIVE and undecided.measured["seeds_used"] == 60
    only_L = np.array([["", "L", "L"]] * 4)
    assert judge(bound, only_L).vacuous
    # bounds above the largest possible regret t * max_gap everywhere: no evidence
    assert judge(np.full((4, 3), 2e4), dom).vacuous
    # an infinite bound (d or L infinite) holds on every seed: counted, not judged
    part = bound.copy()
    part[0, 2] = np.inf
    out = judge(part, dom)
    assert out.verdict == Verdict.PASS and out.measured["trivially_held"] == 9
    assert judge(np.full((4, 3), np.inf), dom).vacuous
    with pytest.raises(ValueError, match="value_range"):        # a regret above gap * t
        pb.check_theorem_bound(steps, lambda k: paths[:30], bound, dom, gap / 100, batch=30,
                               max_seeds=30)


def test_v4_graphs_are_the_first_connected_seeds():
    import networkx as nx

    graphs = pb.v4_graphs(2)
    assert len(graphs) == 2 and graphs[0].shape == (20, 20)
    first = next(s for s in range(100) if nx.is_connected(nx.fast_gnp_random_graph(20, 0.5,
                                                                                   seed=s)))
    G = nx.fast_gnp_random_graph(20, 0.5, seed=first)
    assert np.array_equal(graphs[0], nx.to_numpy_array(G, dtype=bool) | np.eye(20, dtype=bool))


def test_setups_shared_by_the_claims_and_the_figures():
    from proofs_checks.bandits import setups

    # the package re-exports the setups: one object, whichever path imports it
    assert pb.v4_graphs is setups.v4_graphs and pb.V4_MEANS is setups.V4_MEANS
    arms, mu, choice = pb.v1_arms(6, 6, 7, copies=2)
    np.testing.assert_array_equal(mu, pb.random_means(6, 7))
    assert choice.shape == (6, 6) and set(np.unique(choice)) <= {0, 1, 2}
    np.testing.assert_allclose(np.asarray(arms.means)[6:], np.asarray(arms.means)[:6])
    _, fixed, _ = pb.v1_arms(6, 6, 7, means=pb.V1_FIXED_MEANS)
    np.testing.assert_allclose(fixed, pb.V1_FIXED_MEANS)
    # the K6 + C6 groups: three agents per (component, constant), as the per-agent beta says
    _, beta = pb.small_graphs()
    for group, members in pb.SMALL_GROUPS.items():
        assert beta[members].tolist() == [float(group.split("=")[1])] * 3
    np.testing.assert_allclose(np.asarray(pb.tac_arms("beta").means)[0], pb.V4_MEANS)
    with pytest.raises(ValueError, match="rewards must be one of"):
        pb.tac_arms("gaussian")
    assert pb.er50_arms_seed(2, 10) == 10 + pb.V1_ARMS_SEED_OFFSET + 3
