"""Linear resilient actor-critic (decentral.resilient_ac.linear): one step of each consensus
variant against hand computation, the actor step, the MDP generator and exact references,
batching, bad inputs, and the negative controls of the resilient_ac.linear_* claims (tiny sizes)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import decentral.graphs as g
from decentral.hypotheses import HypothesisWarning
from decentral.resilient_ac import constant
from decentral.resilient_ac.linear import (
    FiniteMDP,
    exact_references,
    feature_extreme,
    joint_policy,
    linear_actor_step,
    linear_params,
    policy_score,
    random_mdp,
    rpbcac,
    validate_mdp,
)
from decentral.schedules import polynomial
from decentral.verify import Verdict
from proofs_checks.resilient_ac import linear as pcl
from proofs_checks.resilient_ac.setups import example1_figure_data

pytestmark = pytest.mark.usefixtures("x64_module")


# ---------------------------------------------------------------------------------------------
# tiny fixture: 3 agents, 2 states, one action each, deterministic 0 -> 1, d = 2
# ---------------------------------------------------------------------------------------------

PHI = np.array([[1.0, 0.5], [-0.4, 1.0]])          # phi(0), phi(1): mixed signs, not one-hot
REWARDS = np.array([0.3, 1.0, -0.6])               # r^i(0, a)
V0 = np.array([[0.2, -0.1], [0.5, 0.4], [-0.3, 0.6]])
L0 = np.array([[0.1, 0.1], [-0.2, 0.3], [0.4, -0.5]])
GAMMA = 0.9


def tiny_mdp() -> FiniteMDP:
    P = np.zeros((2, 1, 2))
    P[0, 0, 1] = 1.0
    P[1, 0, 0] = 1.0
    R = np.stack([np.stack([[r], [0.0]]) for r in REWARDS])       # [3, 2, 1]
    return validate_mdp(FiniteMDP(P, R, PHI, PHI[:, None, :], np.eye(2), np.array([1.0, 0.0])))


def one_step(consensus, H, *, byzantine=(), attacker=None, actor=False, policy0=0.0,
             actor_iterate="post"):
    """The state after update t = 0 from s_0 = 0 (beta_v = 1, beta_theta = 1 at t = 0)."""
    mdp = tiny_mdp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)
        alg = rpbcac(g.complete(3), H=H, byzantine=byzantine, attacker=attacker,
                     consensus=consensus, actor=actor, actor_iterate=actor_iterate)
        params = linear_params(mdp, discount=GAMMA, critic0=V0, team_reward0=L0,
                               critic_step=polynomial(0.5, 0.65), policy0=policy0)
    state = alg.init(jax.random.key(0), params)
    assert int(state.s) == 0
    new, info = alg.step(jax.random.key(1), state, params, jnp.int32(0), None)
    assert int(info.next_state) == 1
    return new, info, params


def local_messages(beta=0.5):
    delta = REWARDS + GAMMA * V0 @ PHI[1] - V0 @ PHI[0]
    v_loc = V0 + beta * delta[:, None] * PHI[0]
    lam_loc = L0 + beta * (REWARDS - L0 @ PHI[0])[:, None] * PHI[0]
    return v_loc, lam_loc, delta


def wmsr_ref(own, others, H):
    others = np.asarray(others, float)
    above = np.sort(others[others > own])[::-1][H:]
    below = np.sort(others[others < own])[H:]
    kept = np.concatenate([[own], above, below, others[others == own]])
    return kept.mean()


def test_projection_step_matches_hand_computation():
    new, info, _ = one_step("projection", 1)
    v_loc, lam_loc, delta = local_messages()
    np.testing.assert_allclose(np.asarray(info.td_error), delta, atol=1e-12)
    phi = PHI[0]
    for i in range(3):
        for got, loc, old in ((new.critic[i], v_loc, V0[i]), (new.team_reward[i], lam_loc,
                                                                L0[i])):
            preds = loc @ phi
            want_pred = wmsr_ref(preds[i], np.delete(preds, i), 1)
            move = np.asarray(got) - old
            # the update is parallel to phi and sets phi^T v to W-MSR of post-step predictions
            assert abs(move[0] * phi[1] - move[1] * phi[0]) < 1e-12
            assert abs(float(np.asarray(got) @ phi) - want_pred) < 1e-12


def test_projection_h0_is_average_of_predictions():
    new, _, _ = one_step("projection", 0)
    v_loc, lam_loc, _ = local_messages()
    phi = PHI[0]
    np.testing.assert_allclose(np.asarray(new.critic) @ phi, np.full(3, (v_loc @ phi).mean()),
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(new.team_reward) @ phi,
                               np.full(3, (lam_loc @ phi).mean()), atol=1e-12)


def test_mean_is_zhang_step_7_and_trimmed_is_elementwise():
    new, _, _ = one_step("mean", 0)
    v_loc, lam_loc, _ = local_messages()
    # Zhang et al. step 7 with the uniform row-stochastic weights of K3
    np.testing.assert_allclose(np.asarray(new.critic), np.tile(v_loc.mean(0), (3, 1)),
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(new.team_reward), np.tile(lam_loc.mean(0), (3, 1)),
                               atol=1e-12)
    new, _, _ = one_step("trimmed", 1)
    # element-wise trimmed mean of 3 values with H = 1: the median of each coordinate
    np.testing.assert_allclose(np.asarray(new.critic), np.tile(np.median(v_loc, 0), (3, 1)),
                               atol=1e-12)


def test_byzantine_messages_replaced_and_trimmed():
    # agent 2 Byzantine sending 50 everywhere: projection W-MSR (H = 1) drops it
    new, _, _ = one_step("projection", 1, byzantine=[2], attacker=constant(50.0))
    v_loc, _, _ = local_messages()
    phi = PHI[0]
    preds = v_loc @ phi
    bad = np.full(2, 50.0) @ phi
    for i in range(2):
        others = [preds[1 - i], bad]
        assert abs(float(np.asarray(new.critic[i]) @ phi) - wmsr_ref(preds[i], others, 1)) \
            < 1e-12
    # the Byzantine agent's own row keeps its local step
    np.testing.assert_allclose(np.asarray(new.critic[2]), v_loc[2], atol=1e-12)
    # plain averaging is captured by the same message
    new, _, _ = one_step("mean", 0, byzantine=[2], attacker=constant(50.0))
    np.testing.assert_allclose(np.asarray(new.critic[0]), (v_loc[0] + v_loc[1] + 50.0) / 3,
                               atol=1e-12)


def test_feature_extreme_is_coordinatewise_extreme():
    new, _, _ = one_step("trimmed", 0, byzantine=[2], attacker=feature_extreme())
    v_loc, lam_loc, _ = local_messages()
    phi = PHI[0]                                        # both coordinates >= 0
    # receiver 0 sees cooperative {0, 1}: critic message = max, team reward = min (push down)
    m_v = np.maximum(v_loc[0], v_loc[1])
    m_l = np.minimum(lam_loc[0], lam_loc[1])
    np.testing.assert_allclose(np.asarray(new.critic[0]), (v_loc[0] + v_loc[1] + m_v) / 3,
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(new.team_reward[0]),
                               (lam_loc[0] + lam_loc[1] + m_l) / 3, atol=1e-12)
    assert phi.min() >= 0


def test_actor_step_matches_hand_computation():
    theta = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.0]])      # [M = 3, d_p = 2]
    feat = np.array([0.7, -1.2])
    logits = theta @ feat
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    psi = (np.eye(3)[1] - probs)[:, None] * feat[None, :]
    np.testing.assert_allclose(np.asarray(policy_score(jnp.asarray(theta), jnp.asarray(feat),
                                                       1)), psi, atol=1e-12)
    auto = jax.grad(lambda th: jax.nn.log_softmax(th @ feat)[1])(jnp.asarray(theta))
    np.testing.assert_allclose(np.asarray(auto), psi, atol=1e-12)
    np.testing.assert_allclose(np.asarray(linear_actor_step(jnp.asarray(theta),
                                                            jnp.asarray(feat), 1, 0.25, 0.1)),
                               theta + 0.1 * 0.25 * psi, atol=1e-12)


@pytest.mark.parametrize("iterate", ["post", "pre"])
def test_actor_in_the_step_uses_the_chosen_iterate(iterate):
    new, info, _ = one_step("projection", 1, actor=True, actor_iterate=iterate)
    v_loc, lam_loc, _ = local_messages()
    v_a = np.asarray(new.critic) if iterate == "post" else v_loc
    l_a = np.asarray(new.team_reward) if iterate == "post" else lam_loc
    want = l_a @ PHI[0] + GAMMA * v_a @ PHI[1] - v_a @ PHI[0]
    np.testing.assert_allclose(np.asarray(info.team_td_error), want, atol=1e-12)
    # one action per agent: the score is 0, the policy does not move
    np.testing.assert_allclose(np.asarray(new.policy), 0.0, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# the MDP generator and the exact references
# ---------------------------------------------------------------------------------------------

def test_random_mdp_and_exact_references():
    mdp = random_mdp(jax.random.key(3), 4, 2, 3, 3, reward_feature_dim=5)
    P = np.asarray(mdp.transition)
    assert P.shape == (4, 8, 4) and np.all(P > 0)
    np.testing.assert_allclose(P.sum(-1), 1.0, atol=1e-12)
    for feats in (mdp.state_features, mdp.reward_features.reshape(32, -1)):
        assert np.linalg.matrix_rank(feats) == feats.shape[1]
        assert (feats < 0).any() and (feats > 0).any()
        assert not np.all(np.isin(feats, (0.0, 1.0)))             # not one-hot
    theta = np.random.default_rng(0).normal(size=(3, 2, 4))
    ref = exact_references(mdp, theta, discount=0.8)
    pi = joint_policy(mdp, theta)
    np.testing.assert_allclose(pi.sum(1), 1.0, atol=1e-12)
    Pp = np.einsum("sa,sat->st", pi, P)
    r_pi = np.einsum("sa,nsa->ns", pi, mdp.rewards)
    # V solves the Bellman equation; d is stationary
    np.testing.assert_allclose(ref.values, r_pi + 0.8 * ref.values @ Pp.T, atol=1e-10)
    np.testing.assert_allclose(ref.state_distribution @ Pp, ref.state_distribution, atol=1e-12)
    # the TD(0) fixed point and the least-squares fit satisfy their normal equations
    Phi, d = mdp.state_features, ref.state_distribution
    for i in range(3):
        v = ref.critic_fits[i]
        td = Phi.T @ (d * (r_pi[i] + 0.8 * Pp @ Phi @ v - Phi @ v))
        np.testing.assert_allclose(td, 0.0, atol=1e-10)
        F = mdp.reward_features.reshape(32, -1)
        w = ref.state_action_distribution.ravel()
        ls = F.T @ (w * (mdp.rewards[i].ravel() - F @ ref.reward_fits[i]))
        np.testing.assert_allclose(ls, 0.0, atol=1e-10)
    assert np.all(ref.reward_band[0] <= ref.reward_hull[0])
    assert np.all(ref.reward_worst_band[1] >= ref.reward_hull[1] - 1e-12)
    same = random_mdp(3, 4, 2, 3, 3, heterogeneity=0.0)
    np.testing.assert_array_equal(same.rewards[0], same.rewards[2])


# ---------------------------------------------------------------------------------------------
# batching and bad inputs
# ---------------------------------------------------------------------------------------------

def test_runner_vmap_over_seeds_equals_unbatched_jit_and_figure_data():
    # example1_figure_data runs the runner (jit, vmap over seeds); replay seed by seed with
    # the unbatched jitted step and the runner's key derivation
    from decentral.resilient_ac.linear import example1_attacker, example1_mdp

    d = example1_figure_data(num_steps=20, record_every=10, seeds=[0, 1],
                             variants=("projection",))
    assert d["estimates/projection"].shape == (2, 2, 4, 2)
    assert d["hull"].shape == (2, 2) and d["steps"].tolist() == [10, 20]
    mdp = example1_mdp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=example1_attacker(),
                     actor=False)
    params = linear_params(mdp, init_noise=0.5)
    for k, seed in enumerate([0, 1]):
        state = _example1_run(alg, params, steps=20, seed=seed)
        got = d["estimates/projection"][k, -1]
        want = (np.asarray(state.team_reward) @ np.asarray(mdp.state_features).T)[:4]
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_bad_inputs_raise_clear_errors():
    mdp = tiny_mdp()
    K3 = g.complete(3)
    with pytest.raises(ValueError, match="non-negative int"):
        rpbcac(K3, H=-1)
    with pytest.raises(ValueError, match="consensus must be one of"):
        rpbcac(K3, H=1, consensus="median")
    with pytest.raises(ValueError, match="pass H=0"):
        rpbcac(K3, H=1, consensus="mean")
    with pytest.raises(ValueError, match="need an attacker"):
        rpbcac(K3, H=1, byzantine=[2])
    with pytest.raises(ValueError, match="actor_iterate"):
        rpbcac(K3, H=1, actor_iterate="mid")
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        linear_params(mdp, discount=1.0)
    with pytest.raises(ValueError, match="alpha0"):
        linear_params(mdp, critic_step=polynomial(1.0, 0.65)._replace(alpha0=float("nan")))
    with pytest.raises(ValueError, match="policy0 must broadcast"):
        linear_params(mdp, policy0=np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match=r"graphs has 2 agents; the MDP has N = 3"):
        linear_params(mdp, graph=np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="not both"):
        linear_params(mdp, graph=K3, graphs=K3)
    bad = mdp._replace(rewards=np.where(np.isnan(mdp.rewards), 0, np.nan))
    with pytest.raises(ValueError, match="NaN"):
        linear_params(bad)
    with pytest.raises(ValueError, match="sums to"):
        validate_mdp(mdp._replace(transition=mdp.transition * 0.5))
    with pytest.raises(ValueError, match="zero feature rows"):
        validate_mdp(mdp._replace(state_features=np.array([[1.0, 0.0], [0.0, 0.0]])))
    with pytest.warns(HypothesisWarning, match="does not tend to 0"):
        linear_params(mdp, actor_step=polynomial(1.0, 0.6))           # actor not slower
    with warnings.catch_warnings():
        warnings.simplefilter("error", HypothesisWarning)
        with pytest.raises(HypothesisWarning, match="more than H = 0 Byzantine"):
            rpbcac(g.complete(5), H=0, consensus="mean", byzantine=[4],
                   attacker=constant(1.0))


# ---------------------------------------------------------------------------------------------
# negative controls of the claims (tiny sizes)
# ---------------------------------------------------------------------------------------------

def test_claims_10_11_fail_for_plain_averaging_under_attack():
    setup = pcl.fixed_policy_setup(11, num_states=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = pcl.fixed_policy_runs(setup, {"K5": g.complete(5)}, [constant(50.0)],
                                     seeds=[0, 1, 2], num_steps=400, consensus="mean", H=0)
    for which in ("team_reward", "critic"):
        out = pcl.check_bounded_estimates(runs, setup, which=which, variant="mean")
        assert out.verdict is Verdict.FAIL, (which, out.measured["worst_excess_upper"])


def test_claim_12_fails_with_elementwise_in_the_projection_slot():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = pcl.example1_runs({"K5": g.complete(5)}, ("trimmed",), seeds=list(range(16)),
                                 num_steps=1500, directions=("mean_feature",))
    mdp_r = np.asarray(pcl.example1_mdp().rewards)[:4, :, 0]
    hull = np.stack([mdp_r.min(0), mdp_r.max(0)])
    calls = []

    def draw(k):                                 # two batches of 8 from the 16 seeds run
        calls.append(k)
        return {key: v[8 * k:8 * (k + 1)] for key, v in runs.items()}

    out = pcl.check_projection_beats_elementwise(draw, hull, batch=8, max_seeds=16,
                                                 resilient="trimmed", elementwise="trimmed",
                                                 fraction=0.1)
    row = out.measured["runs"]["K5 / mean_feature"]
    assert row["elementwise"]["fraction_outside"] == 1.0         # the attack works on trimming
    assert out.verdict is Verdict.FAIL                            # so trimming is no "projection"
    assert row["resilient"]["verdict"] == "FAIL" and row["elementwise"]["verdict"] == "PASS"
    assert calls == sorted(set(calls)) and out.measured["alpha"] == 0.05
    assert "family-wise alpha 0.05" in out.reason


def test_claim_13_fails_when_the_actor_is_faster_than_the_critic():
    setup = pcl.two_time_scale_setup(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = pcl.two_time_scale_runs(setup, [(0.8, 0.5), (0.65, 0.85)], seeds=[0, 1, 2, 3],
                                       num_steps=3000, num_snapshots=6)
    out = pcl.check_two_time_scales(runs, setup, judged=(0.8, 0.5), n_boot=100)
    assert out.verdict is Verdict.FAIL, out.measured
    # the broken hypothesis is the judged run's own here ...
    assert any("does not tend to 0" in h for h in out.hypotheses_failed)
    assert "Predicted vs measured" in out.details and out.reason.startswith("lag slope")
    # ... and only the contrast's when the separated pair is judged
    other = pcl.check_two_time_scales(runs, setup, judged=(0.65, 0.85), n_boot=100)
    assert other.hypotheses_failed == []
    assert "breaks the hypothesis on purpose" in other.details


# ---------------------------------------------------------------------------------------------
# the learning adversaries as stateful attackers
# ---------------------------------------------------------------------------------------------

def _adv_ctx(n=3, byz=(2,), **kw):
    from decentral.resilient_ac.linear import LinearAttackContext

    coop = np.ones(n, bool)
    coop[list(byz)] = False
    return LinearAttackContext(g.adjacency_to_table(g.complete(n)), jnp.asarray(byz, jnp.int32),
                               jnp.asarray(coop), **kw)


def test_greedy_and_faulty_adversaries_send_own_fit_and_initial_values():
    from decentral.resilient_ac.linear import faulty_adversary, greedy_adversary

    key = jax.random.key(0)
    v0 = jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    v1 = v0 + 10.0
    ctx = _adv_ctx(feature=jnp.array([1.0, 0.0]), target=jnp.int32(0))
    greedy, faulty = greedy_adversary(), faulty_adversary()
    msgs, _ = greedy.step(key, greedy.init(key, {}, v0, ctx), {}, 0, v1, ctx)
    np.testing.assert_array_equal(msgs, np.broadcast_to([15.0, 16.0], (1, 3, 2)))
    state = faulty.init(key, {}, v0, ctx)
    for t, v in enumerate((v1, v1 * 3)):
        msgs, state = faulty.step(key, state, {}, t, v, ctx)
        np.testing.assert_array_equal(msgs, np.broadcast_to([5.0, 6.0], (1, 3, 2)))


def test_malicious_adversary_one_step_by_hand():
    from decentral.resilient_ac.linear import malicious_adversary

    key, adv = jax.random.key(0), malicious_adversary()
    v0 = jnp.array([[0.0, 1.0], [1.0, 0.0], [2.0, -1.0]])       # agent 2 is Byzantine
    rewards = jnp.array([1.0, 3.0, 100.0])                       # cooperative mean 2
    phi, phi_n = jnp.array([1.0, 0.5]), jnp.array([0.0, 1.0])
    ctx0 = _adv_ctx(feature=phi, target=jnp.int32(0))
    state = adv.init(key, {}, v0, ctx0)
    # critic: w = (2, -1); delta = -2 + 0.5 * (phi' . w) - phi . w = -2 - 0.5 - 1.5 = -4
    ctx = _adv_ctx(feature=phi, target=jnp.int32(0), rewards=rewards, next_feature=phi_n,
                   step_size=jnp.asarray(0.1), discount=0.5)
    msgs, (w, _) = adv.step(key, state, {}, 0, v0, ctx)
    np.testing.assert_allclose(w, [[2.0 - 0.4, -1.0 - 0.2]])
    np.testing.assert_allclose(msgs, np.broadcast_to([1.6, -1.2], (1, 3, 2)))
    # team-reward model: w = (2, -1), f = phi: w + 0.1 (-2 - 1.5) f
    ctx = _adv_ctx(feature=phi, target=jnp.int32(1), rewards=rewards,
                   step_size=jnp.asarray(0.1))
    _, (w, _) = adv.step(key, state, {}, 0, v0, ctx)
    np.testing.assert_allclose(w, [[2.0 - 0.35, -1.0 - 0.175]])
    # average reward: scalar values, (1 - 0.1) w - 0.1 * 2
    mu0 = jnp.array([0.0, 0.0, 1.0])
    st = adv.init(key, {}, mu0, _adv_ctx(feature=jnp.ones(()), target=jnp.int32(2)))
    ctx = _adv_ctx(feature=jnp.ones(()), target=jnp.int32(2), rewards=rewards,
                   step_size=jnp.asarray(0.1))
    msgs, (w, _) = adv.step(key, st, {}, 0, mu0, ctx)
    np.testing.assert_allclose(w, [0.9 - 0.2])
    with pytest.raises(ValueError, match="rewards and step size"):
        adv.step(key, state, {}, 0, v0, ctx0)


def test_malicious_adversary_captures_plain_averaging_not_the_projection():
    """With plain averaging the cooperative team-reward models converge to the malicious
    agent's fit of minus the team reward; the projection-based step (H = 1, K5) keeps them in
    the band of the cooperative fits."""
    from decentral.resilient_ac.linear import linear_actor_critic, malicious_adversary
    from decentral.runner import run

    mdp = random_mdp(jax.random.key(0), num_states=4, num_actions_per_agent=2, num_agents=5,
                     feature_dim=4, reward_feature_dim=6)
    params = linear_params(mdp)
    ref = exact_references(mdp, params.policy0, np.array([True] * 4 + [False]))
    F = np.asarray(mdp.reward_features)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)
        for cons, H in (("mean", 0), ("projection", 1)):
            alg = linear_actor_critic(g.complete(5), H=H, byzantine=[4],
                                      attacker=malicious_adversary(), consensus=cons,
                                      actor=False)
            res = run(alg, params, seeds=range(2), num_steps=3000, progress=False)
            out[cons] = np.asarray(res.final_state.team_reward)[:, :4]
    assert np.abs(out["mean"] + ref.team_reward_fit).max() < 0.05
    est = np.einsum("nkd,sad->nksa", out["projection"], F)
    lo, hi = ref.reward_band
    assert np.maximum(est - hi, lo - est).max() <= 0.0
    assert np.abs(out["projection"] + ref.team_reward_fit).max() > 0.5


# ---------------------------------------------------------------------------------------------
# H as data, and time-varying graph sequences
# ---------------------------------------------------------------------------------------------

def _example1_run(alg, params, steps=25, seed=3):
    """``steps`` jitted unbatched updates with the runner's key derivation (seed by seed, as
    the runner derives them); the final state."""
    from decentral.runner import seed_keys

    init_key, root = seed_keys(seed)
    state = alg.init(init_key, params)
    step = jax.jit(alg.step)
    for t in range(steps):
        state, _ = step(jax.random.fold_in(root, t), state, params, jnp.int32(t), None)
    return state


def _example1_alg(graph=None, H=1, consensus="projection"):
    from decentral.resilient_ac.linear import example1_attacker

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)
        return rpbcac(g.complete(5) if graph is None else graph, H=H, byzantine=[4],
                      attacker=example1_attacker(), consensus=consensus)


@pytest.mark.parametrize("consensus", ["projection", "trimmed"])
def test_params_H_replaces_the_algorithms_H(consensus):
    """A data H (traced, pairwise-rank aggregation) gives the run of an algorithm built with
    that H (static, streaming aggregation), and one compiled step sweeps H under vmap."""
    from decentral.resilient_ac.linear import example1_mdp

    mdp = example1_mdp()
    base = linear_params(mdp, init_noise=0.5)
    built = {h: _example1_run(_example1_alg(H=h, consensus=consensus), base) for h in (0, 1)}
    assert not np.allclose(built[0].team_reward, built[1].team_reward)   # H matters here
    alg0 = _example1_alg(H=0, consensus=consensus)
    for h in (0, 1):
        got = _example1_run(alg0, linear_params(mdp, init_noise=0.5, H=h))
        for field in ("critic", "team_reward", "policy"):
            np.testing.assert_allclose(getattr(got, field), getattr(built[h], field),
                                       rtol=1e-10, atol=1e-12)
    # unjitted (a concrete params.H) and vmapped over H in one call
    p1 = linear_params(mdp, init_noise=0.5, H=1)
    s0 = alg0.init(jax.random.key(0), p1)
    eager, _ = alg0.step(jax.random.key(1), s0, p1, jnp.int32(0), None)
    ref, _ = jax.jit(_example1_alg(H=1, consensus=consensus).step)(
        jax.random.key(1), s0, base, jnp.int32(0), None)
    np.testing.assert_allclose(eager.team_reward, ref.team_reward, rtol=1e-12)
    swept = jax.jit(jax.vmap(lambda h: alg0.step(jax.random.key(1), s0, p1._replace(H=h),
                                                 jnp.int32(0), None)[0].team_reward))(
        jnp.array([0, 1], jnp.int32))
    np.testing.assert_allclose(swept[1], ref.team_reward, rtol=1e-12)


def test_params_H_bad_input():
    from decentral.resilient_ac.linear import example1_mdp

    mdp = example1_mdp()
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match="non-negative int"):
            linear_params(mdp, H=bad)
    alg = _example1_alg(H=0, consensus="mean")
    p = linear_params(mdp, H=1)
    with pytest.raises(ValueError, match="trims nothing"):
        alg.step(jax.random.key(1), alg.init(jax.random.key(0), p), p, jnp.int32(0), None)
    alg = _example1_alg(H=1)
    p = linear_params(mdp)._replace(H=jnp.array([1, 1], jnp.int32))
    with pytest.raises(ValueError, match="scalar int"):
        alg.step(jax.random.key(1), alg.init(jax.random.key(0), p), p, jnp.int32(0), None)


def test_time_varying_graph_sequences_are_accepted():
    """Any graph sequence: a constant periodic sequence and edge drops with probability 0
    reproduce the static graph exactly; real drops change the run and keep it finite."""
    from decentral.resilient_ac.linear import example1_mdp

    params = linear_params(example1_mdp(), init_noise=0.5)
    K5 = g.complete(5)
    static = _example1_run(_example1_alg(), params)
    for seq in (g.periodic([K5, K5], rule="row"), g.random_edge_drops(K5, 0.0, key=0)):
        got = _example1_run(_example1_alg(seq), params)
        np.testing.assert_allclose(got.team_reward, static.team_reward, rtol=1e-12)
    dropped = _example1_run(_example1_alg(g.random_edge_drops(K5, 0.4, key=0)), params)
    assert np.all(np.isfinite(dropped.team_reward)) and np.all(np.isfinite(dropped.critic))
    assert not np.allclose(dropped.team_reward, static.team_reward)
