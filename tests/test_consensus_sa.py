"""Tests of decentral.consensus_sa (consensus SA, Lin-Gupta-Liu eq. (1)/(3)) and
decentral.push_sum.core (push-SA, eq. (9)): hand-computed steps, numpy reference loops,
backends, configurations, the weighted-average recursion, exact moments vs Monte Carlo,
limits, Theorem 3's quantities, errors.

The whole module runs in float64 (``x64_module``): most checks compare with ~1e-12.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import digraphs

import decentral.graphs as g
from decentral.consensus_sa import (
    LinearSAProblem,
    bound_quantities,
    consensus_sa,
    contraction_factor,
    error_parts,
    exact_moments,
    limit,
    local_limits,
    random_mrp,
    sa_params,
    td0_problem,
    theta_of,
    weighted_error_from_moments,
)
from decentral.push_sum import exact_moments as push_exact_moments
from decentral.push_sum import push_sum_sa
from decentral.push_sum import theta_of as push_theta_of
from decentral.runner import run, seed_keys, step_key
from decentral.schedules import constant, harmonic

pytestmark = pytest.mark.usefixtures("x64_module")


# ------------------------------------------------------------------------------------------
# record functions (module level: the runner's compile cache is keyed by them)
# ------------------------------------------------------------------------------------------


def _whole_state(state):
    return state


# ------------------------------------------------------------------------------------------
# small problems
# ------------------------------------------------------------------------------------------

# iid chain (identical rows) on S = 2 states, N = 2 agents, d = 2
TINY_P = np.array([[0.3, 0.7], [0.3, 0.7]])
TINY_A = np.array([[[-1.0, 0.5], [0.2, -2.0]],
                   [[-0.5, 0.0], [1.0, -1.5]]])
TINY_B = np.array([[[1.0, -1.0], [0.5, 2.0]],
                   [[-2.0, 0.0], [0.3, 0.4]]])            # [S, N, d]
TINY_THETA0 = np.array([[1.0, 2.0], [-1.0, 0.5]])
W_ROW = np.array([[0.6, 0.4], [0.25, 0.75]])             # row- but not column-stochastic
W_COL = W_ROW.T.copy()                                    # column- but not row-stochastic
ALPHA = 0.1


@pytest.fixture(scope="module")
def tiny(x64_module):
    return LinearSAProblem(TINY_P, TINY_A, TINY_B)


@pytest.fixture(scope="module")
def td3(x64_module):
    """Distributed TD(0): 3 MRP states (9 pair states), d = 2, N = 3."""
    return td0_problem(*random_mrp(0, num_states=3, num_features=2, num_agents=3), 0.8)


def _irregular_adj():
    """A strongly connected digraph on 4 agents with in-degrees 2..4 (sparse padding)."""
    return g.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3), (0, 3)])


# ------------------------------------------------------------------------------------------
# 1. hand-computed steps
# ------------------------------------------------------------------------------------------

SEEDS8 = list(range(8))


@pytest.mark.parametrize("variant", ["combine_then_adapt", "adapt_then_combine"])
def test_consensus_two_steps_by_hand(tiny, variant):
    alg = consensus_sa(tiny, g.static(W_ROW), variant=variant)
    res = run(alg, sa_params(constant(ALPHA), theta0=TINY_THETA0), seeds=SEEDS8, num_steps=2,
              record_fn=_whole_state, record_initial=True)
    theta, xs = np.asarray(res.records.theta), np.asarray(res.records.x)
    assert theta.shape == (8, 3, 2, 2)
    assert set(xs[:, :2].ravel()) == {0, 1}           # both chain states are exercised
    a, eye = ALPHA, np.eye(2)
    for s in range(8):
        np.testing.assert_array_equal(theta[s, 0], TINY_THETA0)
        th = TINY_THETA0
        for t in range(2):
            Ax, Bx = TINY_A[xs[s, t]], TINY_B[xs[s, t]]
            if variant == "combine_then_adapt":   # Theta1 = W Theta0 (I + a A)^T + a B
                th = W_ROW @ th @ (eye + a * Ax).T + a * Bx
            else:                                 # Theta1 = W Theta0 + a (Theta0 A^T + B)
                th = W_ROW @ th + a * (th @ Ax.T + Bx)
            np.testing.assert_allclose(theta[s, t + 1], th, rtol=0, atol=1e-14)


def test_consensus_one_step_scalar_by_hand(x64_module):
    """d = 1, written out agent by agent: theta^0_1 = (0.6 th0 + 0.4 th1)(1 + a A) + a b^0."""
    A = np.array([[[-1.0]], [[-3.0]]])
    b = np.array([[[2.0], [-1.0]], [[0.5], [4.0]]])
    prob = LinearSAProblem(TINY_P, A, b)
    alg = consensus_sa(prob, g.static(W_ROW))
    res = run(alg, sa_params(constant(0.1), theta0=[[1.0], [3.0]]), seeds=SEEDS8, num_steps=1,
              record_fn=_whole_state, record_initial=True)
    for s in range(8):
        x0 = int(res.records.x[s, 0])
        a_x = [-1.0, -3.0][x0]
        b0, b1 = [(2.0, -1.0), (0.5, 4.0)][x0]
        v0, v1 = 0.6 * 1.0 + 0.4 * 3.0, 0.25 * 1.0 + 0.75 * 3.0     # 1.8, 2.5
        expect = [v0 * (1 + 0.1 * a_x) + 0.1 * b0, v1 * (1 + 0.1 * a_x) + 0.1 * b1]
        np.testing.assert_allclose(res.records.theta[s, 1, :, 0], expect, rtol=0, atol=1e-14)


def test_push_sum_sa_two_steps_by_hand(tiny):
    alg = push_sum_sa(tiny, g.static(W_COL))
    res = run(alg, sa_params(constant(ALPHA), theta0=TINY_THETA0), seeds=SEEDS8, num_steps=2,
              record_fn=_whole_state, record_initial=True)
    rec = res.records
    tt, y, xs = np.asarray(rec.theta_tilde), np.asarray(rec.y), np.asarray(rec.x)
    assert set(xs[:, :2].ravel()) == {0, 1}
    a = ALPHA
    for s in range(8):
        np.testing.assert_array_equal(y[s, 0], [1.0, 1.0])
        np.testing.assert_array_equal(tt[s, 0], TINY_THETA0)
        theta_tilde, yy = TINY_THETA0, np.ones(2)
        for t in range(2):
            Ax, Bx = TINY_A[xs[s, t]], TINY_B[xs[s, t]]
            theta = theta_tilde / yy[:, None]
            u = theta_tilde + a * (theta @ Ax.T + Bx)
            yy = W_COL @ yy
            theta_tilde = W_COL @ u
            np.testing.assert_allclose(y[s, t + 1], yy, rtol=0, atol=1e-15)
            np.testing.assert_allclose(tt[s, t + 1], theta_tilde, rtol=0, atol=1e-14)
        # y_2 = W^2 1 is not all ones here, so the de-biasing matters at step 2
        assert np.abs(yy - 1).max() > 0.1
        theta_final = np.asarray(res.final_state.theta[s])
        np.testing.assert_allclose(theta_final, theta_tilde / yy[:, None], rtol=0, atol=1e-14)


# ------------------------------------------------------------------------------------------
# 2. numpy reference loops over recorded chain states
# ------------------------------------------------------------------------------------------

T_REF = 30


def _consensus_reference(prob, ws, alphas, theta0, xs, variant):
    th = np.array(theta0, dtype=np.float64)
    out = [th]
    eye = np.eye(prob.dim)
    for t, x in enumerate(xs):
        W, a, Ax, Bx = ws[t], alphas[t], prob.A[x], prob.b[x]
        if variant == "combine_then_adapt":
            th = W @ th @ (eye + a * Ax).T + a * Bx
        else:
            th = W @ th + a * (th @ Ax.T + Bx)
        out.append(th)
    return np.stack(out)


def _push_reference(prob, ws, alphas, theta0, xs):
    tt, y = np.array(theta0, dtype=np.float64), np.ones(prob.num_agents)
    out = [tt / y[:, None]]
    for t, x in enumerate(xs):
        W, a = ws[t], alphas[t]
        u = tt + a * ((tt / y[:, None]) @ prob.A[x].T + prob.b[x])
        y, tt = W @ y, W @ u
        out.append(tt / y[:, None])
    return np.stack(out), y


def _harmonic_alphas(alpha0, t0, T):
    return alpha0 / (np.arange(T) + t0)


@pytest.mark.parametrize("variant", ["combine_then_adapt", "adapt_then_combine"])
def test_consensus_matches_numpy_loop(td3, variant):
    # periodic row-stochastic sequence: also checks that step t uses W_t and alpha_t
    seq = g.periodic([g.ring(3), g.complete(3), g.path(3) | g.ring(3)], rule="row")
    alg = consensus_sa(td3, seq, variant=variant)
    theta0 = np.arange(6.0).reshape(3, 2) - 2.5
    res = run(alg, sa_params(harmonic(2.0, 5.0), theta0=theta0), seeds=[0, 1, 2],
              num_steps=T_REF, record_fn=_whole_state, record_initial=True)
    ws = seq.weights_host64(T_REF)
    alphas = _harmonic_alphas(2.0, 5.0, T_REF)
    xs = np.asarray(res.records.x)
    assert len(set(xs.ravel())) >= 4            # the chain moves
    for s in range(3):
        ref = _consensus_reference(td3, ws, alphas, theta0, xs[s, :T_REF], variant)
        np.testing.assert_allclose(res.records.theta[s], ref, rtol=1e-12, atol=1e-12)


def test_push_sum_sa_matches_numpy_loop(td3):
    seq = g.periodic([g.ring(3), g.path(3) | g.ring(3)], rule="column")
    alg = push_sum_sa(td3, seq)
    theta0 = np.arange(6.0).reshape(3, 2) - 2.5
    res = run(alg, sa_params(harmonic(2.0, 5.0), theta0=theta0), seeds=[0, 1, 2],
              num_steps=T_REF, record_fn=_whole_state, record_initial=True)
    ws = seq.weights_host64(T_REF)
    alphas = _harmonic_alphas(2.0, 5.0, T_REF)
    xs = np.asarray(res.records.x)
    for s in range(3):
        ref, y_final = _push_reference(td3, ws, alphas, theta0, xs[s, :T_REF])
        np.testing.assert_allclose(res.records.theta[s], ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res.final_state.y[s], y_final, rtol=1e-13)


# ------------------------------------------------------------------------------------------
# 3. eager step == jitted step; 4. dense == sparse backend
# ------------------------------------------------------------------------------------------


def _step_loop(alg, params, seed, num_steps, step_fn):
    init_key, _ = seed_keys(seed)
    state = alg.init(init_key, params)
    states = [state]
    for t in range(num_steps):
        state, _ = step_fn(step_key(seed, t), state, params, jnp.asarray(t), None)
        states.append(state)
    return states


def _agree(states_a, states_b, rtol=1e-13, atol=1e-14):
    for sa, sb in zip(states_a, states_b, strict=True):
        for la, lb in zip(jax.tree.leaves(sa), jax.tree.leaves(sb), strict=True):
            np.testing.assert_allclose(la, lb, rtol=rtol, atol=atol)


def _td3_algorithms(prob, adj, backend="dense"):
    return {
        "consensus_cta": consensus_sa(prob, g.static(adj, rule="row", backend=backend)),
        "consensus_atc": consensus_sa(prob, g.static(adj, rule="row", backend=backend),
                                      variant="adapt_then_combine"),
        "push_sum": push_sum_sa(prob, g.static(adj, rule="column", backend=backend)),
    }


@pytest.mark.parametrize("which", ["consensus_cta", "consensus_atc", "push_sum"])
def test_eager_step_equals_jitted_step(td3, which):
    alg = _td3_algorithms(td3, g.ring(3))[which]
    params = sa_params(harmonic(1.0, 4.0), theta0=np.ones((3, 2)))
    eager = _step_loop(alg, params, 3, 6, alg.step)
    jitted = _step_loop(alg, params, 3, 6, jax.jit(alg.step))
    _agree(eager, jitted)
    assert not np.allclose(eager[-1][0], eager[0][0])             # it moved


def test_dense_and_sparse_backends_agree():
    prob = td0_problem(*random_mrp(1, num_states=3, num_features=2, num_agents=4), 0.7)
    adj = _irregular_adj()                      # in-degrees differ: the tables are padded
    dense, sparse = _td3_algorithms(prob, adj), _td3_algorithms(prob, adj, "sparse")
    params = sa_params(constant(0.05), theta0=np.arange(8.0).reshape(4, 2))
    for which in dense:
        for seed in (0, 1):
            a = _step_loop(dense[which], params, seed, 20, jax.jit(dense[which].step))
            b = _step_loop(sparse[which], params, seed, 20, jax.jit(sparse[which].step))
            np.testing.assert_array_equal([s.x for s in a], [s.x for s in b])
            _agree(a, b, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------------
# 5. configurations: one agent; Metropolis + adapt-then-combine (Doan et al.)
# ------------------------------------------------------------------------------------------


def test_single_agent_is_plain_linear_sa(x64_module):
    mrp = random_mrp(2, num_states=3, num_features=2, num_agents=1)
    prob = td0_problem(*mrp, 0.9)
    params = sa_params(harmonic(1.0, 3.0), theta0=[[0.5, -0.5]])
    alphas = _harmonic_alphas(1.0, 3.0, 20)
    alg = consensus_sa(prob, g.static(np.ones((1, 1))))
    res = run(alg, params, seeds=[4], num_steps=20, record_fn=_whole_state,
              record_initial=True)
    th = np.array([0.5, -0.5])
    for t in range(20):
        x = int(res.records.x[0, t])
        th = th + alphas[t] * (prob.A[x] @ th + prob.b[x, 0])
        np.testing.assert_allclose(res.records.theta[0, t + 1, 0], th, rtol=1e-12,
                                   atol=1e-13)


def test_metropolis_adapt_then_combine_is_doan_stacked_update(x64_module):
    mrp = random_mrp(5, num_states=3, num_features=2, num_agents=4, next_state_rewards=True)
    prob = td0_problem(*mrp, 0.8)
    adj = g.path(4, directed=False)
    W = g.metropolis(adj)
    assert g.is_doubly_stochastic(W) and not np.allclose(W, W[0, 0])
    alg = consensus_sa(prob, g.static(W), variant="adapt_then_combine")
    theta0 = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 2.0], [0.5, 0.5]])
    res = run(alg, sa_params(constant(0.2), theta0=theta0), seeds=[0, 1, 2], num_steps=1,
              record_fn=_whole_state, record_initial=True)
    S, d = mrp.transition.shape[0], 2
    for s in range(3):
        x = int(res.records.x[s, 0])
        st_, nx = divmod(x, S)                    # pair (s_t, s_{t+1})
        phi, phi_next = mrp.features[st_], mrp.features[nx]
        A_t = np.outer(phi, 0.8 * phi_next - phi)                   # d x d
        r_phi = np.concatenate([mrp.rewards[i, st_, nx] * phi for i in range(4)])
        stacked = theta0.reshape(-1)
        expect = np.kron(W, np.eye(d)) @ stacked + 0.2 * (r_phi + np.kron(np.eye(4), A_t)
                                                          @ stacked)
        np.testing.assert_allclose(res.records.theta[s, 1].reshape(-1), expect, rtol=0,
                                   atol=1e-14)


# ------------------------------------------------------------------------------------------
# 6. hypothesis: eq. (4) for the pi-weighted average; push-sum invariants
# ------------------------------------------------------------------------------------------


def _random_stack(rng, first_adj, count, axis):
    """``count`` random stochastic matrices (rows if axis=1, columns if axis=0) with positive
    diagonals; even steps use the pattern ``first_adj``, odd ones a random dense-ish one."""
    n = first_adj.shape[0]
    out = np.empty((count, n, n))
    for t in range(count):
        pattern = first_adj if t % 2 == 0 else (rng.random((n, n)) < 0.6)
        pattern = pattern | np.eye(n, dtype=bool)
        w = np.where(pattern, rng.uniform(0.1, 1.0, (n, n)), 0.0)
        out[t] = w / w.sum(axis=axis, keepdims=True)
    return out


T_PROP = 12


def _stack_states(states):
    """A list of states -> one state with a leading time axis (host numpy)."""
    return jax.tree.map(lambda *leaves: np.stack([np.asarray(v) for v in leaves]), *states)


@settings(max_examples=8)
@given(adj=digraphs(min_n=2, max_n=4), seed=st.integers(0, 2**31 - 1),
       dim=st.integers(1, 2), alpha0=st.floats(0.05, 1.0))
def test_weighted_average_recursion_and_push_sum_invariants(adj, seed, dim, alpha0):
    # eager steps with the runner's keys (a runner call would compile once per example)
    rng = np.random.default_rng(seed)
    n, S = adj.shape[0], 3
    P = rng.dirichlet(np.ones(S), size=S)
    A = rng.standard_normal((S, dim, dim)) - 2.0 * np.eye(dim)
    b = rng.standard_normal((S, n, dim))
    prob = LinearSAProblem(P, A, b)
    params = sa_params(harmonic(alpha0, 2.0), theta0=rng.standard_normal((n, dim)))
    alphas = _harmonic_alphas(alpha0, 2.0, T_PROP)

    # consensus SA on an explicit row-stochastic stack; pi from its absolute probabilities
    # (the stack runs well past T so the backward recursion converges)
    seq = g.explicit(_random_stack(rng, adj, 4 * T_PROP + 200, axis=1))
    pi = g.absolute_probability_sequence(seq, T_PROP)                   # [T + 1, N]
    alg = consensus_sa(prob, seq)
    traj = _stack_states(_step_loop(alg, params, seed % 1000, T_PROP, alg.step))
    avg = np.einsum("ti,tij->tj", pi, traj.theta)                      # <theta>_t
    for t in range(T_PROP):
        x, a = traj.x[t], alphas[t]
        rhs = (np.eye(dim) + a * A[x]) @ avg[t] + a * pi[t + 1] @ b[x]
        assert np.abs(avg[t + 1] - rhs).max() <= 1e-11

    # push-SA on an explicit column-stochastic stack: sum_i y = N and
    # sum_i theta~_{t+1} = sum_i theta~_t + a_t sum_i (A(X_t) theta^i_t + b^i(X_t))
    alg = push_sum_sa(prob, g.explicit(_random_stack(rng, adj, T_PROP, axis=0)))
    traj = _stack_states(_step_loop(alg, params, seed % 1000, T_PROP, alg.step))
    np.testing.assert_allclose(traj.y.sum(axis=-1), n, rtol=0, atol=1e-12)
    for t in range(T_PROP):
        x, a = traj.x[t], alphas[t]
        theta_t = traj.theta_tilde[t] / traj.y[t][:, None]
        drift = (theta_t @ A[x].T + b[x]).sum(axis=0)
        resid = traj.theta_tilde[t + 1].sum(axis=0) - traj.theta_tilde[t].sum(axis=0) \
            - a * drift
        assert np.abs(resid).max() <= 1e-11


# ------------------------------------------------------------------------------------------
# 7. exact moments: deterministic chains exactly; random chains against Monte Carlo
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["combine_then_adapt", "adapt_then_combine", "push_sum",
                                   "shared_random_drops"])
def test_exact_moments_of_a_deterministic_chain_are_the_trajectory(which, x64_module):
    # a 2-cycle started in state 0: X_t = t mod 2, so the iterate is deterministic and the
    # exact mean / second moment must be the trajectory and its outer product
    rng = np.random.default_rng(7)
    A = rng.standard_normal((2, 2, 2)) - 2 * np.eye(2)
    b = rng.standard_normal((2, 3, 2))
    prob = LinearSAProblem([[0.0, 1.0], [1.0, 0.0]], A, b)
    params = sa_params(harmonic(0.5, 2.0), theta0=rng.standard_normal((3, 2)),
                       initial_distribution=[1.0, 0.0])
    T = 9
    if which == "push_sum":
        seq = g.periodic([g.ring(3), g.complete(3)], rule="column")
        alg = push_sum_sa(prob, seq)
        mom = push_exact_moments(prob, seq, params, T)
    elif which == "shared_random_drops":
        # one shared realisation: the host float64 re-weighting must match the device draws
        seq = g.random_edge_drops(g.complete(3), 0.4, key=3)
        assert len({W.tobytes() for W in seq.weights_host64(T)}) > 2
        alg = consensus_sa(prob, seq)
        mom = exact_moments(prob, seq, params, T)
    else:
        seq = g.periodic([g.ring(3), g.path(3) | g.ring(3)], rule="row")
        alg = consensus_sa(prob, seq, variant=which)
        mom = exact_moments(prob, seq, params, T, variant=which)
    states = _step_loop(alg, params, 11, T, alg.step)
    np.testing.assert_array_equal([int(s.x) for s in states], np.arange(T + 1) % 2)
    traj = np.stack([np.asarray(s.theta) for s in states])            # [T + 1, N, d]
    np.testing.assert_array_equal(mom.steps, np.arange(T + 1))
    np.testing.assert_allclose(mom.mean, traj, rtol=1e-12, atol=1e-12)
    flat = traj.reshape(T + 1, -1)
    np.testing.assert_allclose(mom.second, flat[:, :, None] * flat[:, None, :], rtol=1e-11,
                               atol=1e-12)
    # the pi-weighted error from moments == error_parts on the (deterministic) trajectory
    w, target = np.array([0.2, 0.3, 0.5]), np.array([0.1, -0.4])
    np.testing.assert_allclose(weighted_error_from_moments(mom, w, target),
                               error_parts(traj, w, target)["weighted"], rtol=1e-10)
    if which == "push_sum":                # record_at picks the same values
        sub = push_exact_moments(prob, seq, params, T, record_at=[0, 4, 9])
        np.testing.assert_array_equal(sub.steps, [0, 4, 9])
        np.testing.assert_allclose(sub.mean, mom.mean[[0, 4, 9]], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(sub.second, mom.second[[0, 4, 9]], rtol=1e-13, atol=1e-14)


MC_SEEDS = 2000
MC_T = 60


@pytest.mark.parametrize("which", ["combine_then_adapt", "adapt_then_combine", "push_sum"])
def test_exact_moments_match_monte_carlo(td3, which):
    """Tolerance rule: with n = 2000 independent seeds, the Monte-Carlo mean of each quantity
    is within 4 standard errors (sample std / sqrt(n)) of the exact expectation. For a
    (near-)Gaussian sample mean a 4-SE miss has probability ~6e-5 per coordinate; the seeds
    are fixed, so the test is deterministic."""
    params = sa_params(constant(0.05), theta0=np.array([[1.0, -1.0], [0.0, 2.0], [3.0, 0.5]]))
    adj = g.from_edges(3, [(0, 1), (1, 2), (2, 0), (0, 2)])
    if which == "push_sum":
        seq = g.static(adj, rule="column")
        alg = push_sum_sa(td3, seq)
        mom = push_exact_moments(td3, seq, params, MC_T, record_at=[MC_T])
        rec = push_theta_of
    else:
        seq = g.static(adj, rule="row")
        alg = consensus_sa(td3, seq, variant=which)
        mom = exact_moments(td3, seq, params, MC_T, variant=which, record_at=[MC_T])
        rec = theta_of
    res = run(alg, params, seeds=range(MC_SEEDS), num_steps=MC_T, record_every=MC_T,
              record_fn=rec)
    theta = np.asarray(res.records[:, 0])                               # [n, N, d]
    se = theta.std(axis=0, ddof=1) / np.sqrt(MC_SEEDS)
    assert np.all(se > 0)
    assert np.all(np.abs(theta.mean(axis=0) - mom.mean[0]) <= 4 * se)
    sq = (theta ** 2).sum(axis=(1, 2))                                  # sum_i ||theta^i||^2
    exact_sq = np.trace(mom.second[0])
    assert abs(sq.mean() - exact_sq) <= 4 * sq.std(ddof=1) / np.sqrt(MC_SEEDS)
    # the moments are not trivial: the iterate moved away from theta0 and has spread
    assert np.abs(mom.mean[0] - params.theta0).max() > 0.1
    assert exact_sq - (mom.mean[0] ** 2).sum() > 1e-4


# ------------------------------------------------------------------------------------------
# 8. limits
# ------------------------------------------------------------------------------------------


def test_limit_tabular_is_true_value_function_and_validates_pi(x64_module):
    mrp = random_mrp(4, num_states=4, num_features=4, num_agents=3, next_state_rewards=True)
    gamma = 0.9
    prob = td0_problem(mrp.transition, np.eye(4), mrp.rewards, gamma)
    pi = np.array([0.2, 0.5, 0.3])
    rbar = np.einsum("i,ist,st->s", pi, mrp.rewards, mrp.transition)   # pi-weighted E r
    value = np.linalg.solve(np.eye(4) - gamma * mrp.transition, rbar)
    np.testing.assert_allclose(limit(prob, pi), value, rtol=1e-10, atol=1e-12)
    local = local_limits(prob)
    assert local.shape == (3, 4)
    np.testing.assert_allclose(pi @ local, limit(prob, pi), rtol=1e-12, atol=1e-12)
    for i in range(3):
        np.testing.assert_allclose(local[i], limit(prob, np.eye(3)[i]), rtol=1e-12,
                                   atol=1e-12)
    for bad in ([0.5, 0.6, 0.0], [1.5, -0.5, 0.0], [0.5, 0.5], [np.nan, 0.5, 0.5]):
        with pytest.raises(ValueError, match="stochastic vector of length N = 3"):
            limit(prob, bad)


def test_limit_refuses_non_hurwitz_A(x64_module):
    prob = LinearSAProblem([[1.0]], np.array([[[0.5]]]), np.ones((1, 2, 1)))
    with pytest.raises(ValueError, match="not Hurwitz"):
        limit(prob, [0.5, 0.5])
    with pytest.raises(ValueError, match="not Hurwitz"):
        local_limits(prob)


# ------------------------------------------------------------------------------------------
# 9. Theorem 3's quantities
# ------------------------------------------------------------------------------------------


def test_bound_quantities_on_a_directed_ring(x64_module):
    n = 5
    prob = td0_problem(*random_mrp(0, num_states=4, num_features=2, num_agents=n), 0.8)
    seq = g.static(g.ring(n), rule="row")
    q = bound_quantities(prob, seq, harmonic(1.0, 10.0), horizon=20)
    W = g.row_stochastic(g.ring(n))
    assert q.alpha == pytest.approx(0.1)
    assert q.window == 1
    assert q.delta_max == n - 1
    assert q.beta == pytest.approx(W[W > 0].min()) == pytest.approx(0.5)
    np.testing.assert_allclose(q.pi_inf, g.perron_vector(W), atol=1e-12)
    assert q.pi.shape == (21, n)
    np.testing.assert_allclose(q.pi, np.broadcast_to(q.pi_inf, q.pi.shape), atol=1e-12)
    np.testing.assert_allclose(q.eta, 0.0, atol=1e-12)
    assert q.pi_min == pytest.approx(q.pi.min())
    assert q.epsilon_limit == pytest.approx(1 - q.pi_min * q.beta ** 2 / (2 * q.delta_max),
                                            rel=1e-14)
    A, P = prob.mean_A(), q.lyapunov
    np.testing.assert_allclose(A.T @ P + P @ A, -np.eye(2), atol=1e-10)
    np.testing.assert_allclose(P, P.T, atol=0)
    eig = np.linalg.eigvalsh(P)
    assert 0 < q.gamma_min == pytest.approx(eig[0]) and q.gamma_max == pytest.approx(eig[-1])
    assert q.single_agent_rate == pytest.approx(1 - 0.9 * 0.1 / q.gamma_max)
    reach = prob.reachable()
    assert q.A_max == pytest.approx(max(np.linalg.norm(prob.A[x], 2) for x in reach))
    assert q.b_max == pytest.approx(np.linalg.norm(prob.b[reach], axis=-1).max())
    assert q.epsilon > q.epsilon_limit
    assert q.admissible == (q.log2_condition and q.epsilon_below_one)

    # a non-regular ring-with-chord: non-uniform pi_inf, beta = 1/3, window 1
    adj = _irregular_adj()
    q2 = bound_quantities(td0_problem(*random_mrp(0, num_states=4, num_features=2,
                                                  num_agents=4), 0.8),
                          g.static(adj, rule="row"), 0.01, horizon=10)
    W2 = g.row_stochastic(adj)
    np.testing.assert_allclose(q2.pi_inf, g.perron_vector(W2), atol=1e-12)
    assert np.ptp(q2.pi_inf) > 0.01
    assert q2.beta == pytest.approx(W2[W2 > 0].min())
    assert q2.delta_max == g.diameter(adj)


def test_contraction_factor_monotonicities():
    base = dict(A_max=2.0, b_max=1.5, pi_min=0.2, beta=0.3, window=2, delta_max=3)
    alphas = np.linspace(0.0, 0.05, 11)
    eps = contraction_factor(alphas, **base)
    assert np.all(np.diff(eps) > 0)                                   # worse with alpha
    g0 = base["pi_min"] * base["beta"] ** 4 / (2 * base["delta_max"])
    assert eps[0] == pytest.approx(1 - g0, rel=1e-14)

    def at(**kw):
        return float(contraction_factor(0.01, **{**base, **kw}))

    assert at(pi_min=0.3) < at(pi_min=0.2) < at(pi_min=0.1)           # better with pi_min
    assert at(beta=0.5) < at(beta=0.3) < at(beta=0.1)                 # better with beta
    assert at(delta_max=2) < at(delta_max=3) < at(delta_max=6)        # worse with diameter
    assert at(window=1) < at(window=2) < at(window=3)                 # worse with window
    assert at(b_max=0.5) < at(b_max=1.5) < at(b_max=3.0)              # worse with b_max


# ------------------------------------------------------------------------------------------
# 10. bad inputs
# ------------------------------------------------------------------------------------------


def test_problem_validation_errors():
    P, A, b = TINY_P, TINY_A, TINY_B
    with pytest.raises(ValueError, match=r"b must be \[S, N, d\]"):
        LinearSAProblem(P, A, np.zeros((2, 2, 3)))
    with pytest.raises(ValueError, match="A must be"):
        LinearSAProblem(P, np.zeros((2, 2, 3)), b)
    with pytest.raises(ValueError, match="transition must be square"):
        LinearSAProblem(np.full((2, 3), 1 / 3), A, b)
    with pytest.raises(ValueError, match="NaN"):
        LinearSAProblem(P, np.where(A == 0.5, np.nan, A), b)
    with pytest.raises(ValueError, match="NaN"):
        LinearSAProblem([[0.3, np.nan], [0.3, 0.7]], A, b)
    with pytest.raises(ValueError, match="must have 3 axes"):
        LinearSAProblem(P, A[0], b)
    with pytest.raises(ValueError):
        LinearSAProblem([[0.5, 0.6], [0.3, 0.7]], A, b)              # rows not stochastic

    mrp = random_mrp(0, num_states=3, num_features=2, num_agents=2)
    with pytest.raises(ValueError, match="full column rank"):
        td0_problem(mrp.transition, np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]),
                    mrp.rewards, 0.5)
    for gamma in (1.0, -0.1, np.nan):
        with pytest.raises(ValueError, match="discount"):
            td0_problem(*mrp, gamma)
    with pytest.raises(ValueError, match="features must be"):
        td0_problem(mrp.transition, np.eye(4)[:, :2], mrp.rewards, 0.5)


def test_algorithm_validation_errors(tiny):
    with pytest.raises(ValueError, match="row-stochastic"):
        consensus_sa(tiny, g.static(W_COL))
    with pytest.raises(ValueError, match="row-stochastic"):
        consensus_sa(tiny, g.static(g.from_edges(2, [(0, 1)]), rule="column"))
    with pytest.raises(ValueError, match="3 agents but the problem's b has N = 2"):
        consensus_sa(tiny, g.static(g.ring(3), rule="row"))
    with pytest.raises(ValueError, match="variant"):
        consensus_sa(tiny, g.static(W_ROW), variant="adapt_then_adapt")
    with pytest.raises(ValueError, match="column-stochastic"):
        push_sum_sa(tiny, g.static(W_ROW))
    with pytest.raises(ValueError, match="agents"):
        push_sum_sa(tiny, g.static(g.ring(3), rule="column"))
    with pytest.raises(ValueError, match="StepSize"):
        sa_params(0.1)
    with pytest.raises(ValueError, match="theta0"):
        sa_params(constant(0.1), theta0=[[np.nan, 0.0]])
    with pytest.raises(ValueError, match="initial_distribution"):
        sa_params(constant(0.1), initial_distribution=[0.5, 0.6])
    with pytest.raises(ValueError, match="LinearSAProblem"):
        consensus_sa("not a problem", g.static(W_ROW))
    # the sequence decides whether it draws per seed: the old per_seed_graphs is unneeded,
    # and refused only when it contradicts the sequence
    drops = g.random_edge_drops(g.complete(2), 0.3, shared_across_seeds=False)
    assert consensus_sa(tiny, drops).config["per_seed_graphs"] is True
    assert consensus_sa(tiny, drops, per_seed_graphs=True).config["per_seed_graphs"] is True
    with pytest.raises(ValueError, match="per_seed_graphs"):
        consensus_sa(tiny, drops, per_seed_graphs=False)


def test_moment_and_horizon_errors(td3):
    params = sa_params(constant(0.05))
    per_seed = g.random_edge_drops(g.complete(3), 0.3, shared_across_seeds=False)
    with pytest.raises(ValueError, match="shared_across_seeds=False"):
        exact_moments(td3, per_seed, params, 10)
    with pytest.raises(ValueError, match="shared_across_seeds=False"):
        push_exact_moments(td3, g.random_edge_drops(g.complete(3), 0.3, rule="column",
                                                    shared_across_seeds=False), params, 10)
    with pytest.raises(ValueError, match="max_flops"):
        exact_moments(td3, g.static(g.ring(3), rule="row"), params, 10, max_flops=1.0)
    with pytest.raises(ValueError, match="max_flops"):
        push_exact_moments(td3, g.static(g.ring(3), rule="column"), params, 10,
                           max_flops=1.0)
    with pytest.raises(ValueError, match="variant"):
        exact_moments(td3, g.static(g.ring(3), rule="row"), params, 10, variant="nope")
    short = g.explicit([g.ring(3), g.complete(3)] * 3, rule="row")       # 6 graphs
    with pytest.raises(ValueError, match="exceeds the 6 graphs"):
        exact_moments(td3, short, params, 7)
    alg = consensus_sa(td3, short)
    assert alg.max_horizon == 6
    with pytest.raises(ValueError, match="max_horizon = 6"):
        run(alg, params, seeds=[0], num_steps=7)
    push_short = push_sum_sa(td3, g.explicit([g.ring(3)] * 4, rule="column"))
    with pytest.raises(ValueError, match="max_horizon = 4"):
        run(push_short, params, seeds=[0], num_steps=5)


# ------------------------------------------------------------------------------------------
# 11. error decomposition
# ------------------------------------------------------------------------------------------


@settings(max_examples=20)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6), d=st.integers(1, 4))
def test_error_parts_identity(seed, n, d):
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((3, 2, n, d)) * 5
    pi = rng.dirichlet(np.ones(n), size=(3, 2))
    target = rng.standard_normal(d)
    parts = error_parts(theta, pi, target)
    assert parts["weighted"].shape == (3, 2)
    np.testing.assert_allclose(parts["weighted"], parts["consensus"] + parts["average"],
                               rtol=1e-12, atol=1e-12)
    avg = np.einsum("abi,abij->abj", pi, theta)
    np.testing.assert_allclose(parts["average_value"], avg, rtol=1e-12, atol=1e-12)
    dev = np.linalg.norm(theta - avg[..., None, :], axis=-1)
    np.testing.assert_allclose(parts["max_deviation"], dev.max(-1), rtol=1e-12)
    assert np.all(parts["consensus"] >= 0)


def test_params_of_the_wrong_shape_are_refused_not_reshaped_or_clamped():
    prob = td0_problem(*random_mrp(1, num_states=3, num_features=3, num_agents=2), 0.5)
    alg = consensus_sa(prob, g.static(g.complete(2), rule="row"))
    with pytest.raises(ValueError, match=r"initial_distribution must have shape \[S\] = \[9\]"):
        run(alg, sa_params(constant(0.1), initial_distribution=[0, 0, 0, 0, 1.0]), [0], 2)
    with pytest.raises(ValueError, match=r"theta0 must have shape \[N, d\] = \[2, 3\]"):
        run(alg, sa_params(constant(0.1), theta0=np.zeros((3, 2))), [0], 2)
    with pytest.raises(ValueError, match="theta0 must be finite numbers"):
        sa_params(constant(0.1), theta0="abc")
    with pytest.raises(ValueError, match="row-stochastic"):
        exact_moments(prob, g.static(np.array([[0.5, 0.0], [0.5, 1.0]])),
                      sa_params(constant(0.1)), 3)
    with pytest.raises(ValueError, match="column-stochastic"):
        push_exact_moments(prob, g.static(np.array([[0.5, 0.5], [0.0, 1.0]])),
                           sa_params(constant(0.1)), 3)


# ------------------------------------------------------------------------------------------
# 12. divergence: a finite iterate far beyond every limit is reported with its update
# ------------------------------------------------------------------------------------------


def _first_blowup(problem, graphs, alpha, theta0, factor, make=consensus_sa, after=0):
    """Host reference: the first update t >= after whose iterate leaves the documented ball."""
    from decentral.consensus_sa import divergence_scale

    res = run(make(problem, graphs, divergence_factor=None),
              sa_params(constant(alpha), theta0=theta0), seeds=[0], num_steps=60,
              record_fn=(push_theta_of if make is push_sum_sa else theta_of))
    traj = np.asarray(res.records)[0]              # theta_1 .. theta_T (update t gives t + 1)
    ref = max(divergence_scale(problem), np.linalg.norm(theta0, axis=-1).max())
    norms = np.linalg.norm(traj, axis=-1).max(-1)
    hits = [t for t in range(len(norms)) if t >= after and norms[t] > factor * ref]
    return hits[0], norms


@pytest.mark.parametrize("make", [consensus_sa, push_sum_sa])
def test_blowup_is_reported_at_its_update_and_a_stable_run_is_untouched(td3, make):
    from decentral.runner import DivergenceError

    graphs = g.static(g.ring(3), rule="row" if make is consensus_sa else "column")
    theta0 = np.ones((3, 2))
    # alpha = 40 is far outside the admissible range: the iterate grows geometrically
    first, norms = _first_blowup(td3, graphs, 40.0, theta0, 1e3, make=make)
    assert norms[-1] < np.inf and first > 0          # still finite: only the norm check sees it
    alg = make(td3, graphs, divergence_factor=1e3)
    with pytest.raises(DivergenceError, match=f"update t = {first}"):
        run(alg, sa_params(constant(40.0), theta0=theta0), seeds=[0], num_steps=60)
    # a late start of the check moves the reported update
    later, _ = _first_blowup(td3, graphs, 40.0, theta0, 1e3, make=make, after=first + 3)
    with pytest.raises(DivergenceError, match=f"update t = {later}"):
        run(make(td3, graphs, divergence_factor=1e3, divergence_after=first + 3),
            sa_params(constant(40.0), theta0=theta0), seeds=[0], num_steps=60)
    # the default check leaves a stable run bit-for-bit unchanged
    params = sa_params(constant(0.05), theta0=theta0)
    a = run(make(td3, graphs), params, seeds=[0, 1], num_steps=50).final_state
    b = run(make(td3, graphs, divergence_factor=None), params, seeds=[0, 1],
            num_steps=50).final_state
    assert jax.tree.all(jax.tree.map(lambda u, v: bool(jnp.array_equal(u, v)), a, b))


def test_divergence_options_are_validated(tiny):
    for bad in (0.5, float("inf"), "big"):
        with pytest.raises(ValueError, match="divergence_factor"):
            consensus_sa(tiny, g.static(W_ROW), divergence_factor=bad)
    with pytest.raises(ValueError, match="divergence_after"):
        push_sum_sa(tiny, g.static(W_COL), divergence_after=-1)
