"""Tests of decentral.bandits: reward laws (true means, sample means, validation), counter-based
reward streams shared by every policy on a seed, the KL-UCB index against a high-precision root
finder, ucb / kl_ucb / pooled_ucb against plain numpy reference loops fed the same rewards (exact
pull sequences), the policy protocol's communicate hook, evaluate's outputs and options, UCB1's
logarithmic regret, the bound helpers and bad input.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, optimize, stats

import decentral.graphs as g
from decentral.bandits import (
    IndexStats,
    KLUCBParams,
    Policy,
    UCBParams,
    bandit_algorithm,
    bernoulli,
    bernoulli_kl,
    bernoulli_kl_np,
    beta_distribution,
    evaluate,
    heterogeneous,
    initial_stats,
    kl_ucb,
    kl_ucb_index,
    lai_robbins_constant,
    log_time,
    observe,
    pooled_ucb,
    seed_reward_key,
    truncated_normal,
    ucb,
    ucb1,
    ucb1_regret_bound,
    uniform,
)
from decentral.graphs import mix
from decentral.hypotheses import HypothesisWarning
from decentral.runner import run

MEANS = [0.2, 0.45, 0.5, 0.8]


def record_play(state, ctx):
    """Record function: the arms pulled and rewards received at each step, and the counts."""
    return ctx.info.arms, ctx.info.rewards, state.pulls


def reward_table(arms, seed, num_agents, pulls):
    """``[N, M, pulls]`` rewards of the seed's streams, straight from the counter-based keys
    ``fold_in(fold_in(fold_in(reward_key, i), k), j)`` (one flat vmap: fast to compile)."""
    key = seed_reward_key(seed)
    m = arms.num_arms
    i, k, j = (a.ravel() for a in np.meshgrid(np.arange(num_agents), np.arange(m),
                                               np.arange(pulls), indexing="ij"))
    f = jax.jit(jax.vmap(lambda i, k, j: arms.reward(key, i, k, j)))
    return np.asarray(f(i, k, j)).reshape(num_agents, m, pulls)


def log_clock(t, clock, m, scale=1.0):
    arg = {"paper": t, "plus_one": t + 1, "total_pulls": t + m}[clock] * scale
    return np.log(arg) if arg > 1 else 0.0


def kl_index_reference(p, budget):
    """High-precision KL-UCB index with the same clipping of q at 1 - 1e-12."""
    p = min(max(p, 0.0), 1.0)
    if budget <= 0:
        return p
    top = 1 - 1e-12
    f = lambda q: bernoulli_kl_np(p, q) - budget  # noqa: E731
    if f(top) <= 0:
        return 1.0
    return optimize.brentq(f, p, top, xtol=1e-15, rtol=1e-15, maxiter=500)


def play_reference(table, horizon, index_fn, pooled=False):
    """Plain numpy loop: the initial round, then argmax of the index (lowest index on ties)."""
    n_agents, m, _ = table.shape
    counts = np.ones((n_agents, m), np.int64)
    means = table[:, :, 0].copy()
    chosen = np.zeros((horizon, n_agents), np.int64)
    for t in range(horizon):
        if pooled:
            pc = counts.sum(0)
            pm = (counts * means).sum(0) / pc
            arm = int(np.argmax(index_fn(pm, pc, t)))
            picks = [arm] * n_agents
        else:
            picks = [int(np.argmax(index_fn(means[i], counts[i], t))) for i in range(n_agents)]
        for i, a in enumerate(picks):
            r = table[i, a, counts[i, a]]
            counts[i, a] += 1
            means[i, a] = means[i, a] + (r - means[i, a]) / counts[i, a]
            chosen[t, i] = a
    return chosen, counts


# ------------------------------------------------------------------------------------------
# arms
# ------------------------------------------------------------------------------------------

def test_truncated_normal_true_means_match_numerical_integration(x64):
    locs = np.array([0.0, 0.03, 0.5, 0.9, 1.0])
    for sd in (0.05, 0.2, 1.0):
        arms = truncated_normal(locs, sd)
        for k, loc in enumerate(locs):
            density = stats.norm(loc, sd).pdf
            mass = integrate.quad(density, 0, 1, epsabs=1e-14, epsrel=1e-13)[0]
            first = integrate.quad(lambda x, f=density: x * f(x), 0, 1, epsabs=1e-14,
                                   epsrel=1e-13)[0]
            assert arms.means[0, k] == pytest.approx(first / mass, abs=1e-10)
        # gaps use the true means, not the locations
        np.testing.assert_allclose(arms.gaps(2)[1], arms.means[0].max() - arms.means[0])
    assert abs(truncated_normal(locs, 0.2).means[0, 4] - 1.0) > 0.1
    by_mean = truncated_normal([0.02, 0.5, 0.97], 0.05, parameterization="mean")
    np.testing.assert_allclose(by_mean.means[0], [0.02, 0.5, 0.97], atol=1e-12)
    assert by_mean.first[0, 0] < 0.02 and by_mean.first[0, 2] > 0.97   # the locations moved


def test_sample_means_and_support():
    """Every family (and a per-(agent, arm) mix) in one heterogeneous table: one compile."""
    families = [bernoulli(MEANS), beta_distribution(MEANS, 0.1), truncated_normal(MEANS, 0.2),
                uniform(MEANS), uniform(MEANS, width=0.3)]
    choice = np.array([[f] * 4 for f in range(5)] + [[0, 1, 2, 3], [3, 2, 1, 4]])
    with pytest.warns(HypothesisWarning, match="true means"):   # the truncated normal's
        arms = heterogeneous(families, choice)
    n_agents, draws = choice.shape[0], 20000
    x = np.asarray(reward_table(arms, 5, n_agents, draws), np.float64)   # [N, M, J]
    assert x.min() >= 0.0 and x.max() <= 1.0
    se = 0.5 / np.sqrt(draws)                       # sd of a law on [0, 1] is at most 1/2
    np.testing.assert_array_less(np.abs(x.mean(-1) - arms.true_means(n_agents)), 5 * se)
    # moments beyond the mean: Beta's sd, uniform's support, Bernoulli's values
    np.testing.assert_allclose(x[1].std(-1), 0.1, atol=0.005)
    np.testing.assert_allclose(x[4].max(-1) - x[4].min(-1), 0.3, atol=0.001)
    assert set(np.unique(x[0])) == {0.0, 1.0}


def test_streams_independent_across_agents_unless_correlated():
    arms = truncated_normal(MEANS, 0.1)
    x = reward_table(arms, 0, 3, 50)
    assert not np.allclose(x[0], x[1])
    xc = reward_table(arms.with_correlated(), 0, 3, 50)
    np.testing.assert_array_equal(xc[0], xc[1])
    np.testing.assert_array_equal(xc[0], xc[2])
    # the correlated option is part of the arms' identity
    assert arms.digest() != arms.with_correlated().digest()


def test_heterogeneous_warns_when_true_means_differ():
    mu = [0.05, 0.6]
    with pytest.warns(HypothesisWarning, match="true means"):
        arms = heterogeneous([bernoulli(mu), truncated_normal(mu, 0.05)])
    gaps = arms.gaps(2)
    assert gaps[0, 0] == pytest.approx(0.55) and gaps[1, 0] < 0.55   # per-agent gaps
    with pytest.raises(ValueError, match="agents disagrees|N = 2"):
        evaluate(ucb1(), arms, 10, [0], num_agents=3)


@pytest.mark.parametrize("build, match", [
    (lambda: bernoulli([0.5]), "M >= 2"),
    (lambda: bernoulli([]), "M >= 2"),
    (lambda: bernoulli([0.2, 1.2]), r"\[0, 1\]"),
    (lambda: bernoulli([-0.1, 0.5]), r"\[0, 1\]"),
    (lambda: bernoulli([np.nan, 0.5]), "NaN"),
    (lambda: bernoulli([[0.2, 0.5]]), "vector"),
    (lambda: bernoulli(["a", "b"]), "numbers"),
    (lambda: beta_distribution([0.5, 0.2], 0.5), "sd"),
    (lambda: beta_distribution([0.0, 0.2], 0.1), r"strictly inside \(0, 1\)"),
    (lambda: beta_distribution([0.5, 0.2], np.nan), "NaN"),
    (lambda: truncated_normal([0.5, 0.2], 0.0), "> 0"),
    (lambda: truncated_normal([0.5, 0.2], -1.0), "> 0"),
    (lambda: truncated_normal([0.5, 0.2], 0.1, parameterization="median"), "parameterization"),
    (lambda: truncated_normal([0.01, 0.5], 0.5, parameterization="mean"), "3 sd"),
    (lambda: uniform([0.1, 0.5], width=0.4), "support"),
    (lambda: uniform([0.5, 0.9], width=0.3), "support"),
    (lambda: uniform([0.5, 0.6], width=-0.1), ">= 0"),
    (lambda: uniform([0.5, 0.6], width=[0.1, 0.1, 0.1]), "shape"),
    (lambda: heterogeneous([bernoulli([0.1, 0.2]), bernoulli([0.1, 0.2, 0.3])]), "same number"),
    (lambda: heterogeneous([bernoulli([0.1, 0.2])], np.array([[0, 1]])), "choice"),
    (lambda: heterogeneous([]), "at least one"),
])
def test_arms_bad_input(build, match):
    with pytest.raises(ValueError, match=match):
        build()


# ------------------------------------------------------------------------------------------
# indices
# ------------------------------------------------------------------------------------------

def test_kl_ucb_index_matches_brentq(x64):
    ps = np.array([0.0, 1e-6, 0.1, 0.37, 0.5, 0.9, 0.999, 1.0])
    budgets = np.array([0.0, 1e-8, 1e-3, 0.05, 0.5, 2.0, 10.0])
    pp, bb = np.meshgrid(ps, budgets, indexing="ij")
    got = np.asarray(jax.jit(kl_ucb_index)(jnp.asarray(pp), jnp.asarray(bb)))
    want = np.vectorize(kl_index_reference)(pp, bb)
    np.testing.assert_allclose(got, want, atol=1e-12, rtol=0)
    # kl itself against the float64 formula, and non-negative
    qs = np.linspace(1e-3, 1 - 1e-3, 7)
    ref = bernoulli_kl_np(ps[:, None], qs[None])
    kl = np.asarray(bernoulli_kl(ps[:, None], qs[None]))
    np.testing.assert_allclose(kl, ref, rtol=1e-12, atol=1e-15)
    assert np.all(kl >= 0)
    # float32: within 2e-4 (tiny budgets resolve q - p ~ sqrt(budget) only to round-off)
    got32 = np.asarray(kl_ucb_index(jnp.asarray(pp, jnp.float32), jnp.asarray(bb, jnp.float32)))
    np.testing.assert_allclose(got32, want, atol=2e-4)
    # a negative or NaN budget gives the (clipped) mean
    odd = np.asarray(jax.jit(kl_ucb_index)(jnp.array([0.25, 0.25, 1.7, -0.2]),
                                           jnp.array([-3.0, jnp.nan, 0.1, 0.0])))
    np.testing.assert_allclose(odd, [0.25, 0.25, 1.0, 0.0])


def test_select_ties_and_index_floor():
    stats_ = IndexStats(jnp.array([[3, 3, 3]], jnp.int32), jnp.array([[0.4, 0.4, 0.4]]))
    for policy in (ucb1(), kl_ucb(), pooled_ucb()):
        a = policy.select(None, stats_, policy.params, jnp.int32(5), None)
        assert a.tolist() == [0]                         # lowest index on ties
    # at t = 1 the paper's clock is greedy (ln 1 = 0); the authors' code clock is not
    greedy = IndexStats(jnp.array([[1, 9]], jnp.int32), jnp.array([[0.3, 0.5]]))
    assert ucb1().select(None, greedy, UCBParams(2.0), jnp.int32(1), None).tolist() == [1]
    assert ucb1(clock="plus_one").select(None, greedy, UCBParams(2.0), jnp.int32(1),
                                         None).tolist() == [0]
    # the authors' KL-UCB floor: index >= xbar + 0.1 even with a zero budget
    floor = kl_ucb(index_floor=0.1)
    near = IndexStats(jnp.array([[1, 50]], jnp.int32), jnp.array([[0.45, 0.5]]))
    assert kl_ucb().select(None, near, KLUCBParams(), jnp.int32(1), None).tolist() == [1]
    assert floor.select(None, near, KLUCBParams(), jnp.int32(1), None).tolist() == [1]
    assert [round(float(log_time(t, "paper", 4)), 6) for t in (0, 1, 3)] == \
        [0.0, 0.0, round(float(np.log(3.0)), 6)]


# ------------------------------------------------------------------------------------------
# policies through the runner: same streams, numpy references
# ------------------------------------------------------------------------------------------

def test_policies_share_streams_and_match_numpy_references(x64):
    arms = truncated_normal([0.3, 0.55, 0.6, 0.7], 0.15)
    n_agents, horizon, seed = 3, 150, 7
    table = reward_table(arms, seed, n_agents, horizon + 1)
    m = arms.num_arms
    alpha = 4 / 3
    cases = {
        "ucb": (ucb(alpha), lambda mu, n, t: mu + np.sqrt(alpha * log_clock(t, "paper", m) / n),
                False),
        "kl_ucb": (kl_ucb(3.0), lambda mu, n, t: np.array([
            kl_index_reference(mu[k], max(0.0, _kl_budget_ref(t, m, 3.0)) / n[k])
            for k in range(m)]), False),
        "pooled": (pooled_ucb(), lambda mu, n, t: mu + np.sqrt(
            2.0 * log_clock(t, "paper", m, n_agents) / n), True),
    }
    received = {}
    for name, (policy, index_fn, pooled) in cases.items():
        alg = bandit_algorithm(policy, arms, num_agents=n_agents)
        res = run(alg, policy.params, [seed], horizon, record_fn=record_play,
                  record_context=True)
        chosen, rewards, _ = (np.asarray(x)[0] for x in res.records)   # [T, N]
        ref_chosen, ref_counts = play_reference(table, horizon, index_fn, pooled)
        np.testing.assert_array_equal(chosen, ref_chosen, err_msg=name)
        np.testing.assert_array_equal(res.final_state.pulls[0], ref_counts, err_msg=name)
        # every reward is the counter-based sample of (agent, arm, pull index)
        pulls = np.ones((n_agents, m), np.int64)
        for t in range(horizon):
            for i in range(n_agents):
                a = chosen[t, i]
                assert rewards[t, i] == table[i, a, pulls[i, a]]
                pulls[i, a] += 1
        received[name] = (chosen, rewards)
    # two policies, different pull sequences, identical samples for the same (i, k, j)
    assert not np.array_equal(received["ucb"][0], received["kl_ucb"][0])
    for i in range(n_agents):
        for k in range(m):
            seqs = [received[nm][1][received[nm][0][:, i] == k, i] for nm in ("ucb", "kl_ucb")]
            common = min(len(s) for s in seqs)
            np.testing.assert_array_equal(seqs[0][:common], seqs[1][:common])


def _kl_budget_ref(t, m, c):
    log_t = log_clock(t, "paper", m)
    return log_t + (c * np.log(log_t) if log_t > 0 else 0.0)


def test_communicate_hook_gets_time_t_messages_and_the_graph(x64):
    """A minimal decentralized policy (running consensus on the sample means, as Dec_UCB's z):
    z(t+1) = W z(t) + xbar(t+1) - xbar(t); with doubly stochastic W, sum_i z = sum_i xbar."""

    class State(NamedTuple):
        stats: IndexStats
        z: jax.Array

    graphs = g.static(g.ring(5, directed=False), rule="metropolis")

    def init(key, params, first):
        return State(initial_stats(first), first)

    def select(key, state, params, t, graph):
        assert graph is not None
        log_t = log_time(t, "paper", state.z.shape[1], dtype=state.z.dtype)
        index = state.z + jnp.sqrt(params.exploration_alpha * log_t / state.stats.counts)
        return jnp.argmax(index, axis=-1).astype(jnp.int32)

    def update(state, params, t, arms_t, rewards):
        return State(observe(state.stats, arms_t, rewards), state.z)

    def communicate(key, previous, local, params, t, graph):
        z = mix(graph, previous.z) + local.stats.means - previous.stats.means
        return State(local.stats, z)

    policy = Policy(name="toy_consensus_ucb", init=init, select=select, update=update,
                    params=UCBParams(2.0), validate=lambda p: p, communicate=communicate,
                    graphs=graphs, num_agents=5, config={"graphs": graphs.digest()})
    res = evaluate(policy, bernoulli([0.7, 0.5, 0.4]), 200, [0, 1], record_every=200)
    z = res.final_state.policy.z                        # [S, N, M]
    xbar = res.final_state.policy.stats.means
    np.testing.assert_allclose(z.sum(1), xbar.sum(1), atol=1e-9)
    assert not np.allclose(z, xbar)                     # the hook did mix
    assert res.pulls.shape == (2, 5, 3)


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------


def test_evaluate_outputs_running_average_and_sweep():
    arms = bernoulli([0.8, 0.6, 0.3])
    horizon = 60
    res = evaluate(ucb1(), arms, horizon, [3, 4], num_agents=2, record_every=1,
                   running_average=True, record_pulls=True)
    assert res.pulls.shape == (2, 2, 3)
    np.testing.assert_array_equal(res.pulls.sum(-1), 3 + horizon)
    gaps = np.array([0.0, 0.2, 0.5])
    np.testing.assert_allclose(res.regret, ((res.pulls - 1) * gaps).sum(-1), atol=1e-9)
    np.testing.assert_allclose(res.regret_path[:, -1], res.regret, atol=1e-5)
    np.testing.assert_allclose(res.initialization_cost, [0.7, 0.7])
    assert res.record_steps.tolist() == list(range(1, horizon + 1))
    assert res.pulls_path.shape == (2, horizon, 2, 3)
    np.testing.assert_array_equal(res.pulls_path[:, -1], res.pulls)
    np.testing.assert_allclose(res.realized_regret_path[:, -1], res.realized_regret)
    np.testing.assert_allclose(res.regret_path, ((res.pulls_path - 1) * gaps).sum(-1),
                               atol=1e-5)

    # realized regret and the first version's running-average metric, from the streams:
    # the arm of decision t is where the counts grew; its reward the counter-based sample
    counts = np.concatenate([np.ones((2, 1, 2, 3), np.int64), res.pulls_path], axis=1)
    chosen = np.argmax(np.diff(counts, axis=1), axis=-1)              # [S, T, N]
    rewards = np.zeros((2, horizon, 2))
    for s_idx, seed in enumerate([3, 4]):
        table = reward_table(arms, seed, 2, horizon + 1)
        index = np.take_along_axis(counts[s_idx, :-1], chosen[s_idx][..., None], -1)[..., 0]
        rewards[s_idx] = table[np.arange(2)[None, :], chosen[s_idx], index]
    np.testing.assert_allclose(res.realized_regret_path,
                               np.cumsum(0.8 - rewards, axis=1), atol=1e-4)
    padded = np.concatenate([np.zeros((2, 2, 2)), rewards], axis=1)   # two leading zeros
    avg = np.cumsum(padded, axis=1) / np.arange(1, horizon + 3)[None, :, None]
    curve = np.cumsum(0.8 - avg, axis=1)                              # authors' index s
    np.testing.assert_allclose(res.running_average_regret, curve[:, 2:], rtol=1e-5)

    # a sweep over exploration_alpha equals separate runs
    swept = evaluate(ucb(), arms, horizon, [3, 4], num_agents=2, record_every=60,
                     params=UCBParams(np.array([0.5, 2.0])), sweep=True)
    assert swept.regret.shape == (2, 2, 2) and swept.regret_path.shape == (2, 2, 1, 2)
    assert swept.pulls.shape == (2, 2, 2, 3)
    np.testing.assert_array_equal(swept.pulls[1], res.pulls)       # ucb(2) == ucb1


def test_ucb1_regret_grows_logarithmically():
    arms = bernoulli([0.9, 0.6])
    res = evaluate(ucb1(), arms, 20000, range(32), num_agents=8,
                   record_at=[200, 2000, 20000])
    mean = res.regret_path.mean(axis=(0, 2))                       # over seeds and agents
    first, second = mean[1] - mean[0], mean[2] - mean[1]
    assert 0.6 < second / first < 1.6, mean                        # equal steps per decade
    assert mean[2] / 20000 < 0.005                                 # sublinear
    # below Auer et al.'s bound after M + T plays, with the initialisation cost added back
    assert mean[2] + res.initialization_cost[0] < ucb1_regret_bound(arms, 20002)
    # and about 2 ln T / Delta per the heuristic, above Lai-Robbins' ln T coefficient
    assert lai_robbins_constant(arms) * np.log(20000) < mean[2] < 2 * 2 / 0.3 * np.log(20000)


def test_bounds():
    assert ucb1_regret_bound([0.5, 0.3], 100) == pytest.approx(
        8 * np.log(100) / 0.2 + (1 + np.pi ** 2 / 3) * 0.2)
    np.testing.assert_allclose(ucb1_regret_bound([0.5, 0.3], [10, 100]),
                               [ucb1_regret_bound([0.5, 0.3], 10),
                                ucb1_regret_bound([0.5, 0.3], 100)])
    kl = 0.3 * np.log(0.3 / 0.5) + 0.7 * np.log(0.7 / 0.5)
    assert lai_robbins_constant([0.5, 0.3, 0.5]) == pytest.approx(0.2 / kl)
    assert lai_robbins_constant([1.0, 0.3]) == 0.0
    with pytest.raises(ValueError):
        ucb1_regret_bound([0.5, 0.3], 0)
    with pytest.raises(ValueError):
        lai_robbins_constant([0.5])


@pytest.mark.parametrize("call, match", [
    (lambda: evaluate(ucb1(), bernoulli(MEANS), 0, [0]), "horizon"),
    (lambda: evaluate(ucb1(), bernoulli(MEANS), -3, [0]), "horizon"),
    (lambda: evaluate(ucb1(), bernoulli(MEANS), 2.5, [0]), "horizon"),
    (lambda: evaluate(ucb1(), bernoulli(MEANS), True, [0]), "horizon"),
    (lambda: evaluate(ucb(), bernoulli(MEANS), 10, [0], params=UCBParams(np.nan)), "finite"),
    (lambda: evaluate(ucb(), bernoulli(MEANS), 10, [0], params=UCBParams(-1.0)), ">= 0"),
    (lambda: evaluate(ucb(), bernoulli(MEANS), 10, [0], params=UCBParams(np.array([1, -1]))),
     ">= 0"),
    (lambda: evaluate(kl_ucb(), bernoulli(MEANS), 10, [0], params=KLUCBParams(np.inf)),
     "finite"),
    (lambda: evaluate(kl_ucb(), bernoulli(MEANS), 10, [0], params=UCBParams(2.0)),
     "KLUCBParams"),
    (lambda: ucb(np.nan), "finite"),
    (lambda: ucb(-0.5), ">= 0"),
    (lambda: ucb(clock="log"), "clock"),
    (lambda: kl_ucb(bisection_steps=0), "bisection_steps"),
    (lambda: kl_ucb(index_floor=1.5), "index_floor"),
    (lambda: evaluate("ucb1", bernoulli(MEANS), 10, [0]), "Policy"),
    (lambda: evaluate(ucb1(), MEANS, 10, [0]), "Arms"),
    (lambda: evaluate(ucb1(), bernoulli(MEANS), 10, [0], num_agents=0), "num_agents"),
    (lambda: evaluate(ucb1(), bernoulli(MEANS), 10, [0], record_fn=lambda s: s), "record_fn"),
    (lambda: evaluate(ucb1(), bernoulli(MEANS), 10, [0], record_every=5, record_at=[10]),
     "not both"),
])
def test_evaluate_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------------------------------
# evaluate: the environment as data (one compiled program per structure), padded record grids
# ------------------------------------------------------------------------------------------

def _pulls_and_realized(state):
    return state.pulls, state.realized_regret


def test_evaluate_environment_as_data_matches_closed_over_constants(x64):
    from decentral.bandits import DecUCB1Params, bandit_environment, dec_ucb, dec_ucb1

    ring, star = g.ring(5, directed=False), g.star(5)
    arms_a = bernoulli([0.7, 0.4, 0.2])
    arms_b = uniform([0.3, 0.6, 0.5], correlated=True)

    env = bandit_environment(dec_ucb(star, theorem=2), arms_b)
    assert env.gaps.shape == (5, 3) and env.graphs.structure() == \
        dec_ucb(ring, theorem=2).graphs.structure()

    T, seeds, n = 40, [1, 2], 5
    for policy, arms, kw in [(dec_ucb(ring, theorem=2), arms_a, dict(record_every=10)),
                             (dec_ucb(star, theorem=1), arms_b, dict(record_at=[3, 17, T])),
                             (ucb1(), arms_b, dict(record_every=T))]:
        res = evaluate(policy, arms, T, seeds, num_agents=n, **kw)
        ref = run(bandit_algorithm(policy, arms, num_agents=n), policy.params, seeds, T,
                  record_fn=_pulls_and_realized, **kw)
        steps = np.arange(kw["record_every"], T + 1, kw["record_every"]) \
            if "record_every" in kw else np.asarray(kw["record_at"])
        np.testing.assert_array_equal(res.record_steps, steps)
        np.testing.assert_array_equal(res.pulls, ref.final_state.pulls)
        pulls_path, realized_path = (np.asarray(x) for x in ref.records)
        gaps = arms.gaps(n)
        np.testing.assert_allclose(res.regret_path, ((pulls_path - 1) * gaps).sum(-1),
                                   rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(res.realized_regret_path, realized_path)
        np.testing.assert_array_equal(res.final_state.policy.counts,
                                      ref.final_state.policy.counts)

    # a params sweep reads the environment once and equals separate runs
    betas = np.array([1.0, 0.1])
    swept = evaluate(dec_ucb1(ring), arms_a, T, seeds, params=DecUCB1Params(betas), sweep=True,
                     record_every=T)
    assert swept.regret_path.shape == (2, 2, 1, 5) and swept.record_steps.tolist() == [T]
    for p, beta in enumerate(betas):
        one = evaluate(dec_ucb1(ring, beta=beta), arms_a, T, seeds, record_every=T)
        np.testing.assert_array_equal(swept.pulls[p], one.pulls)
        np.testing.assert_array_equal(swept.regret_path[p], one.regret_path)


def test_environment_as_data_shares_one_compilation_across_graphs_means_and_horizons():
    """evaluate keeps no cache of its own: the runner's compile cache, keyed by the traced
    program, serves other graphs, means and horizons of the same structure with one
    compilation (the arms' parameters and the graph are params, record_every = T runs in the
    gap layout)."""
    import decentral.runner.compile as runner_compile
    from decentral.bandits import dec_ucb

    ring, star = g.ring(5, directed=False), g.star(5)
    first = evaluate(dec_ucb(ring, theorem=2), bernoulli([0.7, 0.4, 0.2]), 40, [1, 2],
                     record_every=40)
    def latest():
        return runner_compile._BY_IDENTITY[next(reversed(runner_compile._BY_IDENTITY))]

    programs, used = len(runner_compile._BY_PROGRAM), latest()
    compiled = used.chunk.func._cache_size()
    other = evaluate(dec_ucb(star, theorem=2), bernoulli([0.1, 0.2, 0.9], correlated=True), 64,
                     [1, 2], record_every=64)
    assert latest() is used and len(runner_compile._BY_PROGRAM) == programs
    assert used.chunk.func._cache_size() == compiled
    assert first.record_steps.tolist() == [40] and other.record_steps.tolist() == [64]
    # another reward family is another program
    evaluate(dec_ucb(ring, theorem=2), uniform([0.3, 0.6, 0.5]), 40, [1, 2], record_every=40)
    assert latest().programs.digest != used.programs.digest


def test_extra_families_keep_every_reward():
    from decentral.bandits import FAMILIES

    mu = [0.3, 0.6, 0.5]
    families = [bernoulli(mu), uniform(mu)]
    homo = heterogeneous(families, np.zeros((4, 3), int)).with_extra_families(["uniform"])
    mixed = heterogeneous(families, np.array([[0, 1, 1]] * 2 + [[1, 0, 1]] * 2))
    assert homo.structure() == mixed.with_extra_families(["bernoulli"]).structure()
    assert homo.families_present == ("bernoulli",) and homo == heterogeneous(
        families, np.zeros((4, 3), int))                     # same numbers, same digest
    plain = evaluate(ucb1(), bernoulli(mu), 30, [5], num_agents=4, record_every=30)
    extra = evaluate(ucb1(), homo, 30, [5], record_every=30)
    np.testing.assert_array_equal(plain.pulls, extra.pulls)
    np.testing.assert_array_equal(plain.realized_regret, extra.realized_regret)
    with pytest.raises(ValueError, match="unknown family"):
        homo.with_extra_families(["gaussian"])
    assert "beta" in FAMILIES


# ------------------------------------------------------------------------------------------
# params checked where they arrive (run calls check_params on every params, per sweep entry)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("factory, params", [
    (ucb, UCBParams(np.array([1.0, 2.0, 3.0, 4.0]))),          # [M]: one alpha per arm
    (ucb, UCBParams(np.array([2.0]))),                         # [1]: broadcast silently
    (kl_ucb, KLUCBParams(np.array([0.0, 3.0, 0.0, 3.0]))),
    (pooled_ucb, UCBParams(np.array([1.0, 2.0, 3.0, 4.0]))),
])
def test_run_refuses_a_vector_where_one_number_is_meant(factory, params):
    """A vector where a scalar is meant would be applied per arm by broadcasting: run refuses
    it (without a sweep) with the field named; evaluate too."""
    alg = bandit_algorithm(factory(), bernoulli(MEANS), num_agents=2)
    field = params._fields[0]
    with pytest.raises(ValueError, match=rf"params\.{field} must be one number"):
        run(alg, params, [0], 5, progress=False)
    with pytest.raises(ValueError, match=rf"params\.{field} must be one number"):
        evaluate(factory(), bernoulli(MEANS), 5, [0], num_agents=2, params=params)
    env_alg = bandit_algorithm(factory(), bernoulli(MEANS), num_agents=2,
                               environment_in_params=True)
    from decentral.bandits import BanditParams, bandit_environment

    full = BanditParams(params, bandit_environment(factory(), bernoulli(MEANS), 2))
    with pytest.raises(ValueError, match=rf"params\.policy\.{field} must be one number"):
        run(env_alg, full, [0], 5, progress=False)


def test_sweeps_are_checked_entry_by_entry():
    arms = bernoulli(MEANS)
    alg = bandit_algorithm(ucb(), arms, num_agents=2)
    # P = 2 entries of [M] vectors: each entry is still a vector
    with pytest.raises(ValueError, match=r"sweep entry 0: .*params\.exploration_alpha must be "
                                         r"one number"):
        run(alg, UCBParams(np.ones((2, 4))), [0], 5, sweep=True, progress=False)
    with pytest.raises(ValueError, match=r"sweep entry 1: .*params\.exploration_alpha must be "
                                         r">= 0"):
        evaluate(ucb(), arms, 5, [0], num_agents=2, params=UCBParams(np.array([0.5, -1.0])),
                 sweep=True)
    # a sweep of scalars is what a vector means: it runs, and equals separate runs
    swept = evaluate(ucb(), arms, 20, [0, 1], num_agents=2,
                     params=UCBParams(np.array([0.5, 2.0])), sweep=True, record_every=20)
    assert swept.params.exploration_alpha.shape == (2,)
    one = evaluate(ucb(0.5), arms, 20, [0, 1], num_agents=2, record_every=20)
    np.testing.assert_array_equal(swept.pulls[0], one.pulls)


def test_per_agent_constants_must_have_one_value_per_agent():
    """Dec_UCB's c, Dec-UCB1's beta and Dec-KL-UCB's varsigma are a scalar or [N]: another
    length (here [1], [M] and [N - 1]) would broadcast or fail inside the step."""
    from decentral.bandits import (
        DecKLUCBParams,
        DecUCB1Params,
        DecUCBParams,
        dec_kl_ucb,
        dec_ucb,
        dec_ucb1,
    )

    ring = g.ring(5, directed=False)                    # N = 5, M = 4
    arms = bernoulli(MEANS)
    for policy, params in [(dec_ucb(ring, theorem=2), DecUCBParams(np.ones(1))),
                           (dec_ucb(ring, theorem=1), DecUCBParams(np.ones(4))),
                           (dec_ucb1(ring), DecUCB1Params(np.full(4, 0.1))),
                           (dec_kl_ucb(ring), DecKLUCBParams(np.full(1, 0.1))),
                           (dec_ucb1(ring), DecUCB1Params(np.full((2, 5), 0.1)))]:
        field = params._fields[0]
        with pytest.raises(ValueError, match=rf"params\.{field} must be a scalar or one value "
                                             r"per agent \[N = 5\]"):
            run(bandit_algorithm(policy, arms), params, [0], 5, progress=False)
    # one value per agent runs, as does a sweep of them [P, N]
    res = evaluate(dec_ucb1(ring), arms, 10, [0], params=DecUCB1Params(np.full((2, 5), 0.1)),
                   sweep=True, record_every=10)
    assert res.pulls.shape == (2, 1, 5, 4)


def test_pseudo_regret_checks_shapes():
    """gaps [N] with N = M would otherwise be read as one row of per-arm gaps."""
    from decentral.bandits import pseudo_regret

    pulls = np.array([[[3, 1, 1], [1, 4, 1], [2, 2, 2]]])       # [S, N, M], N = M = 3
    gaps = np.array([[0.0, 0.5, 0.1]] * 3)
    np.testing.assert_allclose(pseudo_regret(pulls, gaps), [[0.0, 1.5, 0.6]])
    np.testing.assert_allclose(np.asarray(pseudo_regret(jnp.asarray(pulls), gaps)),
                               [[0.0, 1.5, 0.6]])
    for bad in (gaps[0], gaps[:2], gaps[:, :2]):
        with pytest.raises(ValueError, match="pseudo_regret needs gaps"):
            pseudo_regret(pulls, bad)
    with pytest.raises(ValueError, match="pseudo_regret needs gaps"):
        pseudo_regret(pulls[0, 0], gaps)


def test_policy_fields_become_the_algorithm_s_and_per_seed_graphs_is_gone():
    from decentral.bandits import dec_ucb

    assert "per_seed_graphs" not in Policy._fields
    drops = g.random_edge_drops(g.complete(4), 0.3, rule="row", shared_across_seeds=False)
    pol = dec_ucb(drops, theorem=1)
    assert pol.graphs.draws_per_seed
    for in_params in (False, True):
        alg = bandit_algorithm(pol, bernoulli(MEANS), environment_in_params=in_params)
        assert alg.name == "bandits.dec_ucb"
        assert alg.config["policy_config"] == dict(pol.config)
        assert alg.config["policy_version"] == pol.version
        assert alg.config["graphs"] == ("params" if in_params else drops.digest())
    # ucb() and ucb1() share their functions: with the environment as data, one program name
    assert bandit_algorithm(ucb1(), bernoulli(MEANS), environment_in_params=True).name == \
        "bandits.ucb"


def test_environment_graphs_as_data_none_and_refusals(x64):
    """environment.graphs None runs the policy's own sequence (closed over), the same numbers
    as passing it as data; another sequence of the same structure is another graph; what
    the algorithm cannot run is refused by run with the field named."""
    from decentral.bandits import BanditParams, bandit_environment, dec_ucb

    ring, star = g.ring(5, directed=False), g.star(5)
    arms = bernoulli([0.7, 0.4, 0.2])
    pol = dec_ucb(ring, theorem=2)
    alg = bandit_algorithm(pol, arms, environment_in_params=True)
    env = bandit_environment(pol, arms)
    assert env.graphs is pol.graphs
    as_data = run(alg, BanditParams(pol.params, env), [0, 1], 30, progress=False)
    closed = run(alg, BanditParams(pol.params, env._replace(graphs=None)), [0, 1], 30,
                 progress=False)
    np.testing.assert_array_equal(as_data.final_state.pulls, closed.final_state.pulls)
    np.testing.assert_array_equal(as_data.final_state.policy.z, closed.final_state.policy.z)
    other = dec_ucb(star, theorem=2)
    swapped = run(alg, BanditParams(pol.params, env._replace(graphs=other.graphs)), [0, 1], 30,
                  progress=False)
    built = run(bandit_algorithm(other, arms), other.params, [0, 1], 30, progress=False)
    np.testing.assert_array_equal(swapped.final_state.pulls, built.final_state.pulls)
    for graphs, match in [(dec_ucb(g.ring(6, directed=False), theorem=2).graphs,
                           r"params\.environment\.graphs has another structure"),
                          (pol.graphs.replace(weights=np.full((1, 5, 5), 0.5)),
                           r"params\.environment\.graphs.*row-stochastic")]:
        with pytest.raises(ValueError, match=match):
            run(alg, BanditParams(pol.params, env._replace(graphs=graphs)), [0], 5,
                progress=False)
    with pytest.raises(ValueError, match=r"params\.environment\.gaps must be >= 0"):
        run(alg, BanditParams(pol.params, env._replace(gaps=-np.asarray(env.gaps))), [0], 5,
            progress=False)


def test_evaluate_takes_num_steps_as_every_front_door_does():
    """Time is num_steps everywhere; horizon stays the bandit literature's alias."""
    a = evaluate(ucb1(), bernoulli([0.7, 0.4]), 30, [0, 1], num_agents=2, record_every=30)
    b = evaluate(ucb1(), bernoulli([0.7, 0.4]), horizon=30, seeds=[0, 1], num_agents=2,
                 record_every=30)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    assert a.num_steps == a.horizon == 30
    with pytest.raises(ValueError, match="not both"):
        evaluate(ucb1(), bernoulli([0.7, 0.4]), 30, [0], horizon=30)
    with pytest.raises(ValueError, match="needs num_steps"):
        evaluate(ucb1(), bernoulli([0.7, 0.4]), seeds=[0])
