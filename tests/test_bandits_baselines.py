"""coop-UCB2 and DDUCB: the jitted runs against plain numpy loops fed the same rewards, the
consensus invariants, a regret sanity check against independent UCB1 agents, the refusal of
time-varying graphs, bad input."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

import decentral.graphs as g
from decentral.bandits import (
    CoopUCB2Params,
    DDUCBParams,
    bandit_algorithm,
    bernoulli,
    coop_ucb2,
    dducb,
    dducb_mixing_rounds,
    landgren_consensus_matrix,
    second_eigenvalue_magnitude,
    seed_reward_key,
    ucb1,
)
from decentral.hypotheses import HypothesisWarning
from decentral.runner import run

pytestmark = pytest.mark.usefixtures("x64_module")

# 6 agents, undirected, degrees (2, 3, 1, 3, 2, 3); Metropolis |lambda_2| ~ 0.83, so DDUCB's
# stages last C = 26 steps (10 accelerated; 13 and 6 for eps = 0.5)
UNDIRECTED = np.array([[1, 1, 0, 0, 1, 0], [1, 1, 0, 1, 0, 1], [0, 0, 1, 1, 0, 0],
                       [0, 1, 1, 1, 0, 1], [1, 0, 0, 0, 1, 1], [0, 1, 0, 1, 1, 1]], bool)
CYCLE = g.ring(4, directed=False)           # Metropolis |lambda_2| = 1/3: C = 5 (4 accelerated)
EASY = bernoulli([0.9, 0.4])
SEEDS, STEPS = [0, 1, 2, 3], 200            # one recorded run per policy serves every test

# one policy object per configuration: the runner compiles once per (policy, arms, record_fn)
COOP = coop_ucb2(UNDIRECTED)
DD_PLAIN = dducb(UNDIRECTED)
DD_ACCEL = dducb(UNDIRECTED, accelerated=True)
UCB1 = ucb1()
_RUNS: dict = {}


def _record(state):
    return state.policy, state.pulls


def _states(policy, params=None):
    """Per-step policy states and true pulls ``[S, T + 1, N, M]`` (t = 0 included) on
    ``EASY`` over ``SEEDS`` (memoised: the tests share the runs)."""
    params = policy.params if params is None else params
    key = (id(policy), tuple(params))
    if key not in _RUNS:
        res = run(bandit_algorithm(policy, EASY, num_agents=6), params, seeds=SEEDS,
                  num_steps=STEPS, record_fn=_record, record_every=1, record_initial=True,
                  progress=False)
        state, pulls = res.records
        state = type(state)(*(None if v is None else np.asarray(v) for v in state))
        _RUNS[key] = (state, np.asarray(pulls))
    return _RUNS[key]


def _chosen(pulls):
    return np.argmax(np.diff(pulls, axis=-3), axis=-1)                  # [S, T, N]


def _reward_table(arms, seed, N, T):
    """``table[i, k, j]``: the reward of agent i's j-th pull of arm k (``arms.reward``)."""
    key = seed_reward_key(seed)
    i, k, j = np.meshgrid(np.arange(N), np.arange(arms.num_arms), np.arange(T + 1),
                          indexing="ij")
    draw = jax.vmap(lambda a, b, c: arms.reward(key, a, b, c))
    return np.asarray(draw(i.ravel(), k.ravel(), j.ravel())).reshape(i.shape)


# ------------------------------------------------------------------------------------------
# plain numpy references (loops over time and agents, the papers' formulas)
# ------------------------------------------------------------------------------------------

def _coop_reference(adj, rewards, T, gamma, eta, sigma, kappa):
    N, M = rewards.shape[:2]
    a = adj & ~np.eye(N, dtype=bool)
    deg = a.sum(1)
    P = np.eye(N) - kappa / deg.max() * (np.diag(deg) - a)
    pulled = np.zeros((N, M), int)                        # j of the next pull (0 = initial)
    nhat, shat = np.ones((N, M)), rewards[:, :, 0].copy()
    pulled += 1
    states, chosen = [(nhat, shat)], []
    G = 1 - eta ** 2 / 16
    for t in range(T):
        L = math.log(t) if t > 1 else 0.0
        xi, r = np.zeros((N, M)), np.zeros((N, M))
        row = []
        for i in range(N):
            idx = [shat[i, k] / nhat[i, k] + sigma * math.sqrt(
                2 * gamma / G * (nhat[i, k] + math.sqrt(L)) / (N * nhat[i, k]) * L / nhat[i, k])
                for k in range(M)]
            k = int(np.argmax(idx))
            row.append(k)
            xi[i, k] = 1
            r[i, k] = rewards[i, k, pulled[i, k]]
            pulled[i, k] += 1
        nhat, shat = P @ (nhat + xi), P @ (shat + r)
        states.append((nhat, shat))
        chosen.append(row)
    return np.array(chosen), states


def _dducb_reference(W, rewards, T, eta, sigma, eps, accelerated):
    N, M = rewards.shape[:2]
    lam = np.sort(np.abs(np.linalg.eigvalsh(W)))[::-1][1]
    if accelerated:
        C = max(1, math.ceil(math.log(2 * N / eps) / math.sqrt(2 * math.log(1 / lam))))
    else:
        C = max(1, math.ceil(math.log(N / eps) / math.log(1 / lam)))
    pulled = np.ones((N, M), int)
    X0 = rewards[:, :, 0]
    zero = np.zeros((N, M))
    beta = [X0.copy(), np.ones((N, M))]                      # (sums, counts)
    alpha = [X0 / N, np.ones((N, M)) / N]
    fresh, settled, y_prev = [zero, zero], [zero, zero], [zero, zero]
    w, w_prev = 1.0, 0.0
    chosen, alphas = [], [[a.copy() for a in alpha]]
    for t in range(T):
        s = M + N * t if t < C else N * (M + t - C)
        row = []
        fresh = [f.copy() for f in fresh]
        for i in range(N):
            idx = alpha[0][i] / alpha[1][i] + sigma * np.sqrt(
                2 * eta * math.log(s) / (N * alpha[1][i]))
            k = int(np.argmax(idx))
            row.append(k)
            r = rewards[i, k, pulled[i, k]]
            pulled[i, k] += 1
            fresh[0][i, k] += r
            fresh[1][i, k] += 1
            alpha[0][i, k] += r / N
            alpha[1][i, k] += 1 / N
        chosen.append(row)
        end = (t + 1) % C == 0
        if not accelerated:
            beta = [W @ b for b in beta]
            if end:
                alpha = [b.copy() for b in beta]
                beta = [b + f for b, f in zip(beta, fresh, strict=True)]
                fresh = [zero, zero]
        else:
            if t % C == 0:
                new, w_new = [W @ b / lam for b in beta], w / lam
            else:
                new = [2 / lam * (W @ b) - p for b, p in zip(beta, y_prev, strict=True)]
                w_new = 2 / lam * w - w_prev
            y_prev, beta, w_prev, w = beta, new, w, w_new
            if end:
                settled = [d + b / w for d, b in zip(settled, beta, strict=True)]
                alpha = [d.copy() for d in settled]
                beta, fresh, y_prev = fresh, [zero, zero], [zero, zero]
                w, w_prev = 1.0, 0.0
        alphas.append([a.copy() for a in alpha])
    return np.array(chosen), alphas, C


# ------------------------------------------------------------------------------------------
# jit == numpy
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed_index", [0, 3])
def test_coop_ucb2_equals_numpy_loop(seed_index):
    state, pulls = _states(COOP)
    p = COOP.params
    rewards = _reward_table(EASY, SEEDS[seed_index], 6, STEPS)
    chosen, ref = _coop_reference(UNDIRECTED, rewards, STEPS, p.exploration_gamma,
                                  p.concentration_eta, p.reward_sd, p.consensus_kappa)
    np.testing.assert_array_equal(_chosen(pulls)[seed_index], chosen)
    for t, (nhat, shat) in enumerate(ref):
        np.testing.assert_allclose(state.count_estimates[seed_index, t], nhat, atol=1e-12)
        np.testing.assert_allclose(state.sum_estimates[seed_index, t], shat, atol=1e-12)
    assert 0 < chosen.sum() < chosen.size                       # both arms played
    a = UNDIRECTED & ~np.eye(6, dtype=bool)
    lap = np.diag(a.sum(1)) - a
    np.testing.assert_allclose(landgren_consensus_matrix(UNDIRECTED), np.eye(6) - lap / 4,
                               atol=1e-15)                       # kappa = 3/4, d_max = 3


@pytest.mark.parametrize("policy", [DD_PLAIN, DD_ACCEL], ids=["plain", "accelerated"])
def test_dducb_equals_numpy_loop(policy):
    accelerated = policy.config["accelerated"]
    W = np.asarray(policy.graphs.at(0), np.float64)
    np.testing.assert_allclose(W, g.metropolis(UNDIRECTED), atol=1e-15)
    lam = second_eigenvalue_magnitude(W)
    rewards = _reward_table(EASY, SEEDS[1], 6, STEPS)
    for params in (policy.params, policy.params._replace(consensus_precision=0.5,
                                                         exploration_eta=1.5)):
        state, pulls = _states(policy, params)
        chosen, alphas, C = _dducb_reference(W, rewards, STEPS, params.exploration_eta,
                                             params.reward_sd, params.consensus_precision,
                                             accelerated)
        assert C == dducb_mixing_rounds(lam, 6, params.consensus_precision,
                                        accelerated=accelerated)
        assert STEPS > 3 * C                                     # several stages
        np.testing.assert_array_equal(_chosen(pulls)[1], chosen)
        for t, (sums, counts) in enumerate(alphas):
            np.testing.assert_allclose(state.decision_sums[1, t], sums, atol=1e-12)
            np.testing.assert_allclose(state.decision_counts[1, t], counts, atol=1e-12)
    assert policy.config["mixing_rounds"] == (10 if accelerated else 26)
    assert dducb(CYCLE).config["mixing_rounds"] == dducb_mixing_rounds(1 / 3, 4) == 5


# ------------------------------------------------------------------------------------------
# invariants
# ------------------------------------------------------------------------------------------

def test_coop_ucb2_count_consensus_conserves_the_network_count():
    state, pulls = _states(COOP)
    nhat = state.count_estimates
    gap = np.abs(nhat.sum(axis=2) - pulls.sum(axis=2)).max()    # sum_i nhat = sum_i n
    assert gap < 1e-9, gap
    assert np.all(nhat >= 1 - 1e-12)                              # convex mixing of >= 1
    late = nhat[:, -1]                                            # the estimates agree
    assert np.all(late.max(axis=1) - late.min(axis=1) < 0.1 * late.mean(axis=1))


@pytest.mark.parametrize("policy", [DD_PLAIN, DD_ACCEL], ids=["plain", "accelerated"])
def test_dducb_stage_bookkeeping_conserves_every_pull(policy):
    state, pulls = _states(policy)
    N, M = pulls.shape[2:]
    C = policy.config["mixing_rounds"]
    total = state.fresh_counts
    if policy.config["accelerated"]:
        w = state.chebyshev_weight[..., None]                      # [S, T+1, N, 1]
        total = total + state.settled_counts + state.mixing_counts / w
    else:
        total = total + state.mixing_counts
    # every pull is in exactly one of gamma / beta (/ delta) at every step, per arm
    gap = np.abs(total.sum(axis=2) - pulls.sum(axis=2)).max()
    assert gap < 1e-9, gap
    # right after each stage, alpha holds the network's pulls up to the previous stage start:
    # N * sum_k alpha_cnt = s of the next decision = N (M + t - C), summed over the agents
    for t in range(2 * C, STEPS + 1, C):
        net = state.decision_counts[:, t].sum(axis=(1, 2))
        np.testing.assert_allclose(net, N * (M + t - C), atol=1e-9)


def test_single_agent_and_exact_mixing_graphs():
    one = np.ones((1, 1), bool)
    assert dducb(one).config["mixing_rounds"] == 1
    assert coop_ucb2(one).num_agents == 1
    assert second_eigenvalue_magnitude(np.ones((1, 1))) == 0.0
    assert dducb(g.complete(5), accelerated=True).config["mixing_rounds"] == 1  # lambda_2 = 0


# ------------------------------------------------------------------------------------------
# regret sanity: both use the network's samples, so they beat N independent UCB1 agents
# ------------------------------------------------------------------------------------------

def test_regret_below_independent_ucb1_on_an_easy_instance():
    gaps = EASY.gaps(6)

    def network_regret(policy):
        _, pulls = _states(policy)
        return ((pulls[:, -1] - 1) * gaps).sum(axis=(1, 2)).mean()

    independent = network_regret(UCB1)
    found = {p.name + str(p.config.get("accelerated", "")): network_regret(p)
             for p in (COOP, DD_PLAIN, DD_ACCEL)}
    assert all(v < independent for v in found.values()), (found, independent)


# ------------------------------------------------------------------------------------------
# refusals and bad input
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("factory", [coop_ucb2, dducb])
def test_time_varying_graphs_are_refused(factory):
    cycle = g.ring(5, directed=False)
    path = g.add_self_loops(g.path(5, directed=False))
    for graph in (g.periodic([cycle, path], rule="metropolis"), [cycle, path],
                  g.random_edge_drops(cycle, 0.2, rule="metropolis", key=0)):
        with pytest.raises(ValueError, match="static graph"):
            factory(graph)
    pol = factory(g.static(cycle, rule="metropolis"))       # a static sequence is fine
    assert pol.num_agents == 5


def test_directed_and_disconnected_graphs():
    directed = g.ring(4)
    for factory in (coop_ucb2, dducb):
        with pytest.raises(ValueError, match="undirected"):
            factory(directed)
    split = np.eye(4, dtype=bool)
    split[0, 1] = split[1, 0] = split[2, 3] = split[3, 2] = True
    with pytest.raises(ValueError, match="lambda_2"):
        dducb(split)
    with pytest.warns(HypothesisWarning, match="not connected"):
        coop_ucb2(split)
    with pytest.raises(ValueError, match="doubly stochastic"):
        dducb(g.row_stochastic(g.add_self_loops(g.star(4))))


@pytest.mark.parametrize("bad", [
    {"exploration_gamma": float("nan")}, {"exploration_gamma": -1.0},
    {"concentration_eta": 0.0}, {"concentration_eta": 4.0}, {"concentration_eta": -2.0},
    {"reward_sd": -0.5}, {"consensus_kappa": 1.5}, {"consensus_kappa": 0.0},
    {"consensus_kappa": float("inf")},
])
def test_coop_ucb2_bad_params(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        coop_ucb2(CYCLE, **bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        COOP.validate(COOP.params._replace(**bad))


@pytest.mark.parametrize("bad", [
    {"exploration_eta": float("nan")}, {"exploration_eta": -1.0}, {"reward_sd": -1.0},
    {"consensus_precision": 0.0}, {"consensus_precision": 1.0},
    {"consensus_precision": float("nan")},
])
def test_dducb_bad_params(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        dducb(CYCLE, **bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        DD_PLAIN.validate(DD_PLAIN.params._replace(**bad))


def test_gamma_at_most_one_warns_and_wrong_params_type():
    with pytest.warns(HypothesisWarning, match="gamma > 1"):
        coop_ucb2(CYCLE, exploration_gamma=1.0)
    with pytest.raises(ValueError, match="CoopUCB2Params"):
        COOP.validate(DDUCBParams())
    with pytest.raises(ValueError, match="DDUCBParams"):
        DD_PLAIN.validate(CoopUCB2Params())
    with pytest.raises(ValueError, match="sublinear"):
        coop_ucb2(CYCLE, sublinear="cubic")
    with pytest.raises(ValueError, match="lambda_2"):
        dducb_mixing_rounds(1.0, 4)


def test_graphs_argument_and_no_silent_self_loop_repair():
    """graphs goes through decentral.graphs.as_sequence (graph= an alias): an adjacency
    without self-loops is refused, not repaired; still static undirected graphs only."""
    no_loops = UNDIRECTED & ~np.eye(6, dtype=bool)
    for factory in (coop_ucb2, dducb):
        with pytest.raises(ValueError, match="add_self_loops"):
            factory(no_loops)
        with pytest.raises(ValueError, match="once"):
            factory(CYCLE, graph=CYCLE)
        assert factory(graph=CYCLE).num_agents == 4
        assert factory(CYCLE, backend="sparse").graphs.backend == "sparse"
    assert dducb(graphs=CYCLE).graphs.digest() == g.static(CYCLE, rule="metropolis").digest()


@pytest.mark.parametrize("policy, field", [(COOP, "exploration_gamma"),
                                           (COOP, "consensus_kappa"),
                                           (DD_PLAIN, "consensus_precision"),
                                           (DD_ACCEL, "exploration_eta")])
def test_run_refuses_a_constant_per_arm(policy, field):
    """One number each: a vector [M] would apply per arm (or per stage length) silently."""
    value = np.full(EASY.num_arms, float(getattr(policy.params, field)))
    with pytest.raises(ValueError, match=rf"params\.{field} must be one number"):
        run(bandit_algorithm(policy, EASY), policy.params._replace(**{field: value}), [0], 5,
            progress=False)


def test_graphs_as_data_must_be_what_the_policy_was_built_for():
    """DDUCB's stage length and Chebyshev weights come from |lambda_2| of its P; a P of
    another spectrum in params is refused. coop-UCB2's H must keep P non-negative."""
    from decentral.bandits import BanditParams, bandit_environment

    def params_with(policy, graphs):
        env = bandit_environment(policy, EASY)._replace(graphs=graphs)
        return BanditParams(policy.params, env)

    perm = [3, 1, 5, 0, 2, 4]                       # the same graph relabelled: same spectrum
    relabelled = UNDIRECTED[np.ix_(perm, perm)]
    for policy in (DD_PLAIN, DD_ACCEL):
        alg = bandit_algorithm(policy, EASY, environment_in_params=True)
        res = run(alg, params_with(policy, dducb(relabelled).graphs), [0], 20, progress=False)
        assert res.final_state.pulls.shape == (1, 6, 2)
        with pytest.raises(ValueError, match=r"params\.environment\.graphs has \|lambda_2\|"):
            run(alg, params_with(policy, dducb(g.complete(6)).graphs), [0], 5, progress=False)
    alg = bandit_algorithm(COOP, EASY, environment_in_params=True)
    rows = np.asarray(g.row_stochastic(g.ring(6)))[None]
    with pytest.raises(ValueError, match=r"params\.environment\.graphs must hold H"):
        run(alg, params_with(COOP, COOP.graphs.replace(weights=rows)), [0], 5, progress=False)
