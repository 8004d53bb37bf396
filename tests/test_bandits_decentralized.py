"""Dec_UCB, Dec-UCB1 and Dec-KL-UCB: the N = 1 reduction to UCB(4/3), the consensus invariants
on random graphs, the jitted run against a plain numpy loop fed the same rewards, dense ==
sparse, the authors'-code options, bad input."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

import decentral.graphs as g
from decentral.bandits import (
    bandit_algorithm,
    bernoulli,
    beta_distribution,
    evaluate,
    seed_reward_key,
    ucb,
)
from decentral.bandits.decentralized import (
    DecKLUCBParams,
    DecUCB1Params,
    DecUCBParams,
    dec_kl_ucb,
    dec_ucb,
    dec_ucb1,
    neighbourhood_sizes,
)
from decentral.runner import run

pytestmark = pytest.mark.usefixtures("x64_module")

UNDIRECTED = np.array([[1, 1, 0, 0, 1, 0], [1, 1, 0, 1, 0, 1], [0, 0, 1, 1, 0, 0],
                       [0, 1, 1, 1, 0, 1], [1, 0, 0, 0, 1, 1], [0, 1, 0, 1, 1, 1]], bool)
ARMS = bernoulli([0.7, 0.5, 0.45])


def _policy_states(policy, arms, seeds, T, num_agents=None):
    """Per-step policy states and true pulls ``[S, T+1, N, M]`` (t = 0 included)."""
    alg = bandit_algorithm(policy, arms, num_agents=num_agents)
    res = run(alg, policy.params, seeds=list(seeds), num_steps=T,
              record_fn=lambda s: (s.policy, s.pulls), record_every=1, record_initial=True,
              progress=False)
    state, pulls = res.records
    return state, np.asarray(pulls)


def _arms_from_pulls(pulls):
    return np.argmax(np.diff(pulls, axis=-3), axis=-1)                 # [S, T, N]


def test_single_agent_dec_ucb_is_ucb_four_thirds():
    # continuous rewards: exact index ties (common with Bernoulli rewards) would be broken by
    # the 1e-15 round-off between z and xbar, not by the rule
    arms = beta_distribution([0.7, 0.5, 0.45], 0.05)
    one = np.ones((1, 1), bool)
    T = 400
    dec_state, dec_pulls = _policy_states(dec_ucb(one, theorem=1), arms, range(4), T)
    ucb_state, ucb_pulls = _policy_states(ucb(4 / 3), arms, range(4), T, num_agents=1)
    np.testing.assert_array_equal(_arms_from_pulls(dec_pulls), _arms_from_pulls(ucb_pulls))
    np.testing.assert_allclose(np.asarray(dec_state.z), np.asarray(dec_state.means), atol=1e-9)
    np.testing.assert_array_equal(np.asarray(dec_state.max_counts),
                                  np.asarray(dec_state.counts))          # forced never fires


def _check_invariants(adj, theorem, seeds, T):
    pol = dec_ucb(adj, theorem=theorem)
    state, pulls = _policy_states(pol, ARMS, seeds, T)
    n, xbar = np.asarray(state.counts), np.asarray(state.means)
    m, z = np.asarray(state.max_counts), np.asarray(state.z)
    np.testing.assert_array_equal(n, pulls)
    W = np.asarray(pol.graphs.at(0), np.float64)
    pi = g.perron_vector(W)
    gap = np.abs(np.einsum("i,stik->stk", pi, z - xbar)).max()
    assert gap < 1e-9, gap
    top = n.max(axis=2, keepdims=True)
    assert np.all(n <= m) and np.all(m <= top)
    d = int(g.diameter(adj))
    if T > d:
        assert np.all(m[:, d:] >= n[:, :-d].max(axis=2, keepdims=True) if d else True)


@settings(max_examples=4, deadline=None)
@given(n=st.integers(2, 6), p=st.floats(0.3, 0.9), seed=st.integers(0, 10_000))
def test_invariants_on_random_undirected_graphs(n, p, seed):
    adj = g.erdos_renyi(n, p, kind="undirected", seed=seed)
    _check_invariants(adj, 2, [seed % 7], 60)


@settings(max_examples=4, deadline=None)
@given(n=st.integers(2, 6), p=st.floats(0.3, 0.9), seed=st.integers(0, 10_000))
def test_invariants_on_random_directed_graphs_pi_weighted(n, p, seed):
    adj = g.erdos_renyi(n, p, kind="strong", seed=seed)
    _check_invariants(adj, 1, [seed % 5], 60)


def test_metropolis_sum_invariant_and_flocking_is_not_plain_average():
    pol = dec_ucb(g.ring(5), theorem=1)                   # directed ring: pi uniform
    strong = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [1, 0, 1, 1], [1, 0, 0, 1]], bool)
    pol = dec_ucb(strong, theorem=1)
    state, _ = _policy_states(pol, ARMS, [0], 80)
    diff = np.asarray(state.z) - np.asarray(state.means)
    pi = g.perron_vector(np.asarray(pol.graphs.at(0)))
    assert np.abs(np.einsum("i,stik->stk", pi, diff)).max() < 1e-9
    assert np.abs(diff.sum(axis=2)).max() > 1e-6          # the plain sum is not conserved
    state, _ = _policy_states(dec_ucb(UNDIRECTED, theorem=2), ARMS, [0], 80)
    diff = np.asarray(state.z) - np.asarray(state.means)
    assert np.abs(diff.sum(axis=2)).max() < 1e-9


def _kl_ref(p, q):
    p, q = min(max(p, 0.0), 1.0), min(max(q, 1e-12), 1 - 1e-12)
    out = 0.0
    if p > 0:
        out += p * np.log(p / q)
    if p < 1:
        out += (1 - p) * np.log((1 - p) / (1 - q))
    return out


def _kl_index_ref(p, budget):
    """max{q in [p, 1] : kl(p, q) <= budget} by scipy's brentq."""
    p = min(max(p, 0.0), 1.0)
    if budget <= 0 or p >= 1:
        return p
    if _kl_ref(p, 1 - 1e-12) <= budget:
        return 1 - 1e-12
    return brentq(lambda q: _kl_ref(p, q) - budget, p, 1 - 1e-12, xtol=1e-14)


def _numpy_replay(policy, adj_w, arms, seed, T, kind, const, max_consensus="paper"):
    """A plain numpy loop over time and agents of the decentralized rule, fed the same rewards
    (``arms.reward``) and checked against the recorded run step by step."""
    state, pulls = _policy_states(policy, arms, [seed], T)
    chosen = _arms_from_pulls(pulls)[0]                                   # [T, N]
    N, M = pulls.shape[2], pulls.shape[3]
    W = np.asarray(adj_w, np.float64)
    deg = ((W > 0) | np.eye(N, dtype=bool)).sum(1)
    key = seed_reward_key(seed)
    X0 = np.array([[float(arms.reward(key, i, k, 0)) for k in range(M)] for i in range(N)])
    n = np.ones((N, M), int)
    m = np.ones((N, M), int)
    xbar = X0.copy()
    z = X0.copy()
    for t in range(T):
        L = np.log(t) if t > 1 else 0.0
        for i in range(N):
            forced = [k for k in range(M) if n[i, k] <= m[i, k] - M]
            if forced:
                assert chosen[t, i] in forced, (t, i)
                continue
            if kind == "thm1":
                idx = z[i] + np.sqrt(const * L / n[i])
            elif kind == "thm2":
                idx = z[i] + np.sqrt(const * L / (deg[i] * n[i]))
            else:                                                          # kl
                ll = np.log(L) if L > 0 else 0.0
                q = max(0.0, 3 * (1 + const) * (L + 3 * ll) / (2 * deg[i]))
                idx = np.array([_kl_index_ref(z[i, k], q / n[i, k]) for k in range(M)])
            assert chosen[t, i] == int(np.argmax(idx)), (t, i)
        n1, xbar1 = n.copy(), xbar.copy()
        for i in range(N):
            k = chosen[t, i]
            r = float(arms.reward(key, i, k, n[i, k]))
            n1[i, k] += 1
            xbar1[i, k] += (r - xbar1[i, k]) / n1[i, k]
        m1 = np.empty_like(m)
        for i in range(N):
            nbrs = [j for j in range(N) if W[i, j] > 0 or j == i]
            if max_consensus == "paper":
                m1[i] = np.maximum(n1[i], np.max(m[nbrs], axis=0))
            else:
                m1[i] = np.maximum(n1[i], m[max(nbrs)])
        z = W @ z + xbar1 - xbar
        n, xbar, m = n1, xbar1, m1
        np.testing.assert_array_equal(np.asarray(state.counts)[0, t + 1], n)
        np.testing.assert_array_equal(np.asarray(state.max_counts)[0, t + 1], m)
        np.testing.assert_allclose(np.asarray(state.means)[0, t + 1], xbar, atol=1e-12)
        np.testing.assert_allclose(np.asarray(state.z)[0, t + 1], z, atol=1e-12)
    return chosen


@pytest.mark.parametrize("theorem", [1, 2])
def test_dec_ucb_equals_numpy_loop(theorem):
    pol = dec_ucb(UNDIRECTED, theorem=theorem)
    W = np.asarray(pol.graphs.at(0))
    const = 4 / 3 if theorem == 1 else 3.0
    _numpy_replay(pol, W, ARMS, 3, 120, f"thm{theorem}", const)


def test_dec_kl_ucb_and_v1_code_max_consensus_equal_numpy_loop():
    pol = dec_kl_ucb(UNDIRECTED, varsigma=0.1)
    _numpy_replay(pol, np.asarray(pol.graphs.at(0)), ARMS, 1, 80, "kl", 0.1)
    path = g.from_edges(4, [(0, 1), (1, 2), (2, 3)])                  # directed path
    pol = dec_ucb(path, theorem=1, max_consensus="v1_code")
    _numpy_replay(pol, np.asarray(pol.graphs.at(0)), ARMS, 2, 80, "thm1", 4 / 3,
                  max_consensus="v1_code")


def test_v1_code_max_consensus_freezes_agents_that_are_their_own_last_neighbour():
    # directed path 0 -> 1 -> 2 -> 3: agent i hears i - 1, so its highest-index neighbour is
    # itself and m stays n: forced exploration never fires (the first version's code's bug)
    path = g.from_edges(4, [(0, 1), (1, 2), (2, 3)])
    state, _ = _policy_states(dec_ucb(path, theorem=1, max_consensus="v1_code"), ARMS, [0], 60)
    np.testing.assert_array_equal(np.asarray(state.max_counts), np.asarray(state.counts))


def test_dec_ucb1_beta_zero_limit_matches_theorem_two_width():
    # (1 + beta)^2 * 3 with beta -> 0 is Theorem 2's constant 3: equal decisions for tiny beta
    a = evaluate(dec_ucb(UNDIRECTED, theorem=2), ARMS, horizon=300, seeds=range(3))
    b = evaluate(dec_ucb1(UNDIRECTED, beta=1e-12), ARMS, horizon=300, seeds=range(3))
    np.testing.assert_array_equal(np.asarray(a.pulls), np.asarray(b.pulls))
    per_agent = dec_ucb1(UNDIRECTED, beta=np.linspace(0.01, 1, 6))
    res = evaluate(per_agent, ARMS, horizon=50, seeds=[0])
    assert res.pulls.shape == (1, 6, 3)


def test_dense_equals_sparse_and_time_varying_sequences_run():
    dense = evaluate(dec_ucb(UNDIRECTED, theorem=2), ARMS, horizon=200, seeds=range(2))
    sparse = evaluate(dec_ucb(UNDIRECTED, theorem=2, backend="sparse"), ARMS, horizon=200,
                      seeds=range(2))
    np.testing.assert_array_equal(np.asarray(dense.pulls), np.asarray(sparse.pulls))
    seq = g.random_edge_drops(g.complete(5), 0.3, rule="row", key=0)
    res = evaluate(dec_ucb(seq, theorem=1), ARMS, horizon=100, seeds=range(2))
    assert res.pulls.shape == (2, 5, 3)


def test_neighbourhood_sizes_dense_and_table():
    W = g.metropolis(UNDIRECTED)
    np.testing.assert_array_equal(np.asarray(neighbourhood_sizes(W)), [3, 4, 2, 4, 3, 4])
    table = g.as_table(W)
    np.testing.assert_array_equal(np.asarray(neighbourhood_sizes(table)), [3, 4, 2, 4, 3, 4])


def test_params_and_bad_input():
    assert dec_ucb(UNDIRECTED, theorem=1).params == DecUCBParams(4 / 3)
    assert dec_ucb(UNDIRECTED, theorem=2).params == DecUCBParams(3.0)
    assert float(dec_ucb1(UNDIRECTED).params.beta) == 0.01
    assert float(dec_kl_ucb(UNDIRECTED).params.varsigma) == 0.01
    with pytest.raises(ValueError, match="theorem"):
        dec_ucb(UNDIRECTED, theorem=3)
    with pytest.raises(ValueError, match="beta"):
        dec_ucb1(UNDIRECTED, beta=-1.0)
    with pytest.raises(ValueError, match="beta"):
        dec_ucb1(UNDIRECTED, beta=float("nan"))
    with pytest.raises(ValueError, match="varsigma"):
        dec_kl_ucb(UNDIRECTED, varsigma=0.0)
    with pytest.raises(ValueError, match="per agent"):
        dec_ucb1(UNDIRECTED, beta=np.ones((2, 3)))
    with pytest.raises(ValueError, match="max_consensus"):
        dec_ucb(UNDIRECTED, max_consensus="v2")
    with pytest.raises(ValueError, match="symmetric"):
        dec_ucb(g.ring(4), theorem=2)                       # Metropolis needs undirected
    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        dec_ucb(np.ones((2, 3), bool))
    with pytest.raises(ValueError):
        dec_ucb(np.full((3, 3), 0.5))                       # not stochastic
    with pytest.raises(ValueError, match="DecUCB1Params"):
        dec_ucb1(UNDIRECTED).validate(DecKLUCBParams(0.1))
    assert isinstance(dec_ucb1(UNDIRECTED).validate(DecUCB1Params(0.5)), DecUCB1Params)


def test_dense_max_consensus_and_running_count_are_exact_both_ways():
    """The unrolled max over senders / running count and their fallbacks for large N / M
    equal the plain definitions (integers: exact)."""
    from decentral.bandits.decentralized import (
        _UNROLL_ARMS,
        _UNROLL_SENDERS,
        _dense_masked_max,
        _running_count,
    )

    rng = np.random.default_rng(0)
    for n in (5, _UNROLL_SENDERS + 6):
        W = rng.random((n, n)) * (rng.random((n, n)) < 0.3)
        m = rng.integers(0, 1000, (n, 4))
        hears = (W > 0) | np.eye(n, dtype=bool)
        want = np.array([m[hears[i]].max(axis=0) for i in range(n)])
        got = _dense_masked_max(jnp.asarray(W), jnp.asarray(m, jnp.int32))
        np.testing.assert_array_equal(np.asarray(got), want)
    for arms in (7, _UNROLL_ARMS + 3):
        flags = rng.random((3, 5, arms)) < 0.4
        got = _running_count(jnp.asarray(flags), jnp.int32)
        np.testing.assert_array_equal(np.asarray(got), np.cumsum(flags, axis=-1))


def test_graphs_go_through_as_sequence_with_the_theorem_s_rule():
    """graphs: what decentral.graphs.as_sequence accepts, the theorem's rule for an adjacency
    (row for Theorem 1, Metropolis otherwise) unless rule= says otherwise; no lists, no
    silent self-loop repair; graph= stays an alias."""
    assert dec_ucb(UNDIRECTED, theorem=1).graphs.rule == "row"
    assert dec_ucb(UNDIRECTED, theorem=2).graphs.rule == "metropolis"
    assert dec_ucb1(UNDIRECTED).graphs.rule == "metropolis"
    assert dec_kl_ucb(UNDIRECTED).graphs.rule == "metropolis"
    assert dec_ucb(UNDIRECTED, theorem=1, rule="metropolis").graphs.rule == "metropolis"
    assert dec_ucb(graphs=UNDIRECTED, theorem=2).graphs.digest() == \
        dec_ucb(graph=UNDIRECTED, theorem=2).graphs.digest() == \
        g.static(UNDIRECTED, rule="metropolis").digest()
    assert dec_ucb1(UNDIRECTED, backend="sparse").graphs.backend == "sparse"
    with pytest.raises(ValueError, match="once"):
        dec_ucb(UNDIRECTED, graph=UNDIRECTED)
    with pytest.raises(ValueError, match="needs graphs"):
        dec_kl_ucb()
    for factory in (dec_ucb, dec_ucb1, dec_kl_ucb):
        with pytest.raises(ValueError, match=r"periodic\(\.\.\.\)"):
            factory([UNDIRECTED, g.complete(6)])                # a list is periodic(...)
        no_loops = UNDIRECTED & ~np.eye(6, dtype=bool)
        with pytest.raises(ValueError, match="add_self_loops"):
            factory(no_loops)                                   # refused, not repaired
    seq = g.periodic([UNDIRECTED, g.complete(6)], rule="metropolis")
    assert dec_ucb1(seq).graphs is seq
    with pytest.raises(ValueError, match="rule"):
        dec_ucb1(seq, rule="row")                               # a sequence keeps its rule
    with pytest.raises(ValueError, match="row-stochastic"):     # column-stochastic only
        dec_ucb(g.column_stochastic(g.from_edges(4, [(0, 1), (1, 2), (2, 3)])))
