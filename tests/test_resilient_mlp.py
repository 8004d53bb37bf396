"""The MLP experiments of the resilient actor-critic (decentral.resilient_ac.mlp / experiments):
networks, the cooperative update of every variant against a numpy reference on a tiny batch,
the per-sample form against its error form, the v1 flatten layout, the adversaries, episode
collection, batching, input errors, and negative controls for the learning-claim judges."""

from __future__ import annotations

import functools
import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from decentral.resilient_ac import Attacker
from decentral.resilient_ac import learning as ex
from decentral.resilient_ac.learning import mlp
from proofs_checks.resilient_ac import learning as rl
from proofs_checks.resilient_ac import setups

pytestmark = pytest.mark.usefixtures("x64_module")

TINY = mlp.LearningProtocol("v1", width=4, episodes_per_update=2, epochs=2, message_steps=1,
                            adversary_epochs=1, adversary_batch=0, adversary_actor_batch=0,
                            buffer_collections=1, shared_templates=True)
TINY_V2 = mlp.LearningProtocol("v2", width=4, episodes_per_update=2, epochs=2, message_steps=2,
                               adversary_epochs=2, adversary_batch=16, adversary_actor_batch=16,
                               buffer_collections=2, shared_templates=False)


# ------------------------------------------------------------------------------------------
# numpy references
# ------------------------------------------------------------------------------------------

def np_forward(p, x):
    def leaky(z):
        return np.where(z >= 0, z, 0.1 * z)
    p = [np.asarray(v, np.float64) for v in p]
    h = leaky(leaky(x @ p[0] + p[1]) @ p[2] + p[3])
    return h, (h @ p[4] + p[5])[..., 0]


def np_wmsr(v, H):
    x0, rest = v[0], np.asarray(v[1:])
    up, dn = np.sort(rest[rest > x0])[::-1], np.sort(rest[rest < x0])
    drop_up = up[:H] if up.size >= H else up
    drop_dn = dn[:H] if dn.size >= H else dn
    kept = list(rest)
    for d in list(drop_up) + list(drop_dn):
        kept.remove(d)
    return (x0 + sum(kept)) / (1 + len(kept))


def np_trimmed(v, H):
    s = np.sort(v)
    return s[H:len(v) - H].mean()


def np_clipped(v, H):
    s = np.sort(v)
    lo, hi = min(s[H], v[0]), max(s[len(v) - H - 1], v[0])
    return np.clip(v, lo, hi).mean()


NP_AGG = {"wmsr": np_wmsr, "trimmed": np_trimmed, "clipped": np_clipped}


def np_elementwise(name, stack, H):
    stack = np.asarray(stack, np.float64)
    flat = stack.reshape(stack.shape[0], -1)
    out = np.array([NP_AGG[name](flat[:, j], H) for j in range(flat.shape[1])])
    return out.reshape(stack.shape[1:])


def np_cooperative_update(own, received, x, H, lr, variant, team_reward):
    """The update rules written out sample by sample in numpy (float64)."""
    K = received[0].shape[0]
    hidden = [np_elementwise(variant.hidden_aggregator, received[j], H) for j in range(4)]
    own = [np.asarray(v, np.float64) for v in own]
    new = hidden + own[4:]
    phi_new, yhat_new = np_forward(new, x)
    aug = np.concatenate([phi_new, np.ones((x.shape[0], 1))], axis=1)
    w = np.concatenate([own[4][:, 0], own[5]])
    B = x.shape[0]
    if variant.proj_norm == "per_sample":
        y = np.stack([aug @ np.concatenate([np.asarray(received[4][k])[:, 0],
                                            np.asarray(received[5][k])]) for k in range(K)])
        ystar = np.array([NP_AGG[variant.aggregator](y[:, b], H) for b in range(B)])
        dw = sum((ystar[b] - aug[b] @ w) * aug[b] / (aug[b] @ aug[b]) for b in range(B)) / B
        return hidden + [(w + dw)[:-1, None], (w + dw)[-1:]]
    phi_old, yhat = np_forward(own, x)
    y = np.stack([np_forward([np.asarray(r[k]) for r in received], x)[1] for k in range(K)])
    norm = (phi_old ** 2).sum() + 1.0
    scale = lr if team_reward else 2 * lr
    e = (y - yhat) / (scale * norm)
    # v1 layout: raveled in-node major, first entry the only own value
    ebar = np_wmsr(e.reshape(-1), H)
    dw = 2 * lr * ebar * aug.mean(axis=0)
    return hidden + [(w + dw)[:-1, None], (w + dw)[-1:]]


def random_mlp(rng, d, width, K=None, scale=0.5):
    """An MLP with normal entries (numpy RNG, no JAX dispatch); a leading [K] axis if K."""
    lead = () if K is None else (K,)
    shapes = [(d, width), (width,), (width, width), (width,), (width, 1), (1,)]
    return mlp.MLP(*[jnp.asarray(scale * rng.normal(size=lead + sh)) for sh in shapes])


def random_case(seed, B=3, d=6, width=4, K=4):
    rng = np.random.default_rng(seed)
    own = random_mlp(rng, d, width)
    received = random_mlp(rng, d, width, K)
    return own, received, jnp.asarray(rng.normal(size=(B, d)))


UPDATE = jax.jit(mlp.cooperative_update, static_argnums=(5, 6))
ERROR_FORM = jax.jit(mlp.error_form_update, static_argnums=(5, 6))


# ------------------------------------------------------------------------------------------
# networks
# ------------------------------------------------------------------------------------------

def test_network_shapes_and_init():
    nets = jax.jit(mlp.init_nets, static_argnums=(1, 2, 3, 4, 5, 6))(
        jax.random.key(0), 5, 10, 15, 5, 30, True)      # v1 sizes
    assert nets.actor.w1.shape == (5, 10, 30) and nets.actor.w3.shape == (5, 30, 5)
    assert nets.critic.w3.shape == (5, 30, 1) and nets.team_reward.w1.shape == (5, 15, 30)
    for leaf in (nets.actor.b1, nets.critic.b2, nets.team_reward.b3):
        assert not np.any(np.asarray(leaf))
    lim = math.sqrt(6 / (10 + 30))
    assert np.abs(np.asarray(nets.actor.w1)).max() <= lim
    assert np.abs(np.asarray(nets.actor.w1)).max() > 0.8 * lim
    # v1: one critic template and one team-reward template; actors independent
    assert np.all(np.asarray(nets.critic.w1) == np.asarray(nets.critic.w1[0]))
    assert np.all(np.asarray(nets.private_critic.w2) == np.asarray(nets.critic.w2))
    assert np.all(np.asarray(nets.team_reward.w2) == np.asarray(nets.team_reward.w2[0]))
    assert not np.allclose(nets.actor.w1[0], nets.actor.w1[1])
    v2 = jax.eval_shape(lambda: mlp.init_nets(jax.random.key(0), 5, 10, 15, 5, 20, False))
    assert v2.critic.w1.shape == (5, 10, 20)
    p = jax.tree_util.tree_map(lambda v: v[0], nets.critic)
    x = jnp.ones((3, 10))
    assert mlp.features(p, x).shape == (3, 30) and mlp.value(p, x).shape == (3,)
    np.testing.assert_allclose(np_forward(p, np.ones((3, 10)))[1], mlp.value(p, x), rtol=1e-12)
    w = mlp.output_layer(p)
    assert w.shape == (31,)
    assert all(np.array_equal(a, b) for a, b in zip(mlp.with_output_layer(p, w), p, strict=True))


# ------------------------------------------------------------------------------------------
# the cooperative update
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("label", sorted(mlp.VARIANTS))
@pytest.mark.parametrize("team_reward", [False, True])
def test_cooperative_update_matches_numpy_reference(label, team_reward):
    variant = mlp.VARIANTS[label]
    H, lr = 1, 0.01
    own, received, x = random_case(7 if team_reward else 3)
    got = UPDATE(own, received, x, H, lr, variant, team_reward)
    want = np_cooperative_update(list(own), list(received), np.asarray(x), H, lr, variant,
                                 team_reward)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-12)


def test_plain_mean_baseline_is_H0_of_every_variant():
    own, received, x = random_case(1)
    mean_variant = mlp.Variant("mean", aggregator="mean", hidden_aggregator="mean")
    ref = UPDATE(own, received, x, 0, 0.01, mean_variant, False)
    for label in ("v1-corrected", "v2-faithful", "v2-corrected"):
        got = UPDATE(own, received, x, 0, 0.01, mlp.VARIANTS[label], False)
        for g, r in zip(got, ref, strict=True):
            np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("agg", ["wmsr", "trimmed", "clipped"])
def test_per_sample_form_equals_error_form(agg):
    own, received, x = random_case(11, B=5)
    variant = mlp.Variant("x", aggregator=agg, hidden_aggregator=agg)
    for H in (0, 1):
        a = UPDATE(own, received, x, H, 0.01, variant, False)
        b = ERROR_FORM(own, received, x, H, 0.01, agg, agg)
        for u, v in zip(a, b, strict=True):
            np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-13)


def test_single_sample_lands_on_the_aggregated_prediction():
    own, received, x = random_case(21, B=1)
    new = UPDATE(own, received, x, 1, 0.01, mlp.VARIANTS["v1-corrected"], False)
    phi = mlp.features(new, x)
    aug = jnp.concatenate([phi, jnp.ones((1, 1))], axis=1)
    y = mlp.output_layer(received) @ aug.T
    np.testing.assert_allclose(mlp.value(new, x)[0], np_wmsr(np.asarray(y[:, 0]), 1),
                               rtol=1e-10)


def test_flatten_v1_layout_hand_case():
    # [K = 2, B = 3] raveled: own value 0.0 (own message, sample 0); others 5, -1, 9, -7, 1
    e = jnp.array([[0.0, 5.0, -1.0], [9.0, -7.0, 1.0]])
    # H = 1: drop the largest above (9) and the smallest below (-7): (0 + 5 - 1 + 1) / 4
    assert float(mlp.flatten_v1_wmsr(e, 1)) == pytest.approx(5 / 4)
    assert float(mlp.flatten_v1_wmsr(e, 0)) == pytest.approx(7 / 6)
    # H = 2: drops 9, 5 and -7, -1
    assert float(mlp.flatten_v1_wmsr(e, 2)) == pytest.approx(1 / 2)
    # all others above the own value: only the H largest go
    assert float(mlp.flatten_v1_wmsr(jnp.array([[0.0, 1.0], [2.0, 3.0]]), 1)) == \
        pytest.approx(1.0)
    # the per-sample layout would give three different values instead of one
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.normal(size=(4, 5))
        assert float(mlp.flatten_v1_wmsr(jnp.asarray(v), 1)) == \
            pytest.approx(np_wmsr(v.reshape(-1), 1), rel=1e-12)


# ------------------------------------------------------------------------------------------
# one consensus epoch: adversaries
# ------------------------------------------------------------------------------------------

def _tiny_batch(key, B=8):
    env = ex.grid_world("v1")
    ks = jax.random.split(key, 4)
    obs = jax.random.normal(ks[0], (B, 10))
    nobs = jax.random.normal(ks[1], (B, 10))
    actions = jax.random.randint(ks[2], (B, 5), 0, 5)
    rewards = -jax.random.uniform(ks[3], (B, 5))
    return mlp.Batch(obs, nobs, actions, rewards, env.tr_input(obs, actions))


def test_adversaries_in_one_epoch():
    nets = mlp.init_nets(jax.random.key(0), 5, 10, 15, 5, 4, shared_templates=False)
    batch = _tiny_batch(jax.random.key(1))
    lr, gamma = 0.05, 0.9
    types = jnp.array([0, 1, 2, 3, 0])            # greedy 1, faulty 2, malicious 3
    out = jax.jit(mlp.consensus_epoch, static_argnums=(9, 10, 11))(
        jax.random.key(2), nets, batch, types, jnp.asarray(ex.K5_IN_NODES), 1, False, lr, gamma,
        TINY, mlp.VARIANTS["v1-corrected"], (1, 2, 3))

    def agent(tree, i):
        return jax.tree_util.tree_map(lambda v: v[i], tree)

    def fitted(p, x, y):
        return mlp.local_fit(p, x, y, lr, 1)

    r = batch.rewards
    r_coop = (r[:, 0] + r[:, 4]) / 2
    # faulty: critic and team reward never change
    for a, b in zip(agent(out.critic, 2), agent(nets.critic, 2), strict=True):
        assert np.array_equal(a, b)
    # greedy: one full-batch step on its own reward (critic target r + gamma V(s'))
    c1 = agent(nets.critic, 1)
    want = fitted(c1, batch.obs, r[:, 1] + gamma * mlp.value(c1, batch.next_obs))
    for a, b in zip(agent(out.critic, 1), want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    want_t = fitted(agent(nets.team_reward, 1), batch.tr_input, r[:, 1])
    for a, b in zip(agent(out.team_reward, 1), want_t, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # malicious: transmitted team reward fits -r_coop, private critic its own reward
    want_m = fitted(agent(nets.team_reward, 3), batch.tr_input, -r_coop)
    for a, b in zip(agent(out.team_reward, 3), want_m, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    p3 = agent(nets.private_critic, 3)
    want_p = fitted(p3, batch.obs, r[:, 3] + gamma * mlp.value(p3, batch.next_obs))
    for a, b in zip(agent(out.private_critic, 3), want_p, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # the malicious TR predicts higher than the greedy one where the team does badly
    assert float(jnp.mean(mlp.value(agent(out.team_reward, 3), batch.tr_input))) > \
        float(jnp.mean(mlp.value(agent(nets.team_reward, 3), batch.tr_input)))
    # cooperative agents change, actors untouched
    assert not np.allclose(out.critic.w3[0], nets.critic.w3[0])
    assert np.array_equal(out.actor.w1, nets.actor.w1)


def _echo_attacker():
    """A custom MLP attacker: each receiver gets its *own* honest message back (a different
    network per receiver), and the Byzantine agents' networks never change."""
    def init(key, params, values, ctx):
        return mlp.learning_adversaries(TINY).init(key, params, values, ctx)

    def step(key, state, params, t, values, ctx):
        S = ctx.byzantine.shape[0]
        return jax.tree_util.tree_map(lambda v: jnp.broadcast_to(v[None], (S,) + v.shape),
                                      values), state

    return Attacker(init, step, {}, "echo")


def test_custom_attacker_messages_reach_each_receiver():
    nets = mlp.init_nets(jax.random.key(3), 5, 10, 15, 5, 4, shared_templates=False)
    batch = _tiny_batch(jax.random.key(4))
    lr, gamma, H = 0.05, 0.9, 1
    var = mlp.VARIANTS["v1-corrected"]
    types = jnp.array([0, 0, 0, 0, 1])                  # agent 4 Byzantine
    epoch = functools.partial(mlp.consensus_epoch, attacker=_echo_attacker())
    out = jax.jit(epoch, static_argnums=(9, 10, 11))(
        jax.random.key(5), nets, batch, types, jnp.asarray(ex.K5_IN_NODES), H, False, lr,
        gamma, TINY, var, (4,))

    def agent(tree, i):
        return jax.tree_util.tree_map(lambda v: v[i], tree)

    rho = mlp.team_targets(batch.rewards, types, False)
    msgs = [mlp.local_fit(agent(nets.critic, j), batch.obs, rho[:, j] + gamma * mlp.value(
        agent(nets.critic, j), batch.next_obs), lr, TINY.message_steps) for j in range(5)]
    for i in range(4):
        row = ex.K5_IN_NODES[i]
        got = [msgs[i] if j == 4 else msgs[j] for j in row]       # agent 4 echoes i's own
        gathered = jax.tree_util.tree_map(lambda *v: jnp.stack(v), *got)
        want = mlp.cooperative_update(agent(nets.critic, i), gathered, batch.obs, H, lr, var,
                                      team_reward=False)
        for a, b in zip(agent(out.critic, i), want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(agent(out.critic, 4), agent(nets.critic, 4), strict=True):
        assert np.array_equal(a, b)                  # its state: never updated
    # the experiments' attacker is the default, and the learner refuses a non-attacker
    assert ex.learner(TINY, "corrected", adversary_slots=(4,)).config.get("attacker") is None
    alg = ex.learner(TINY, "corrected", adversary_slots=(4,), attacker=_echo_attacker())
    assert alg.config is None or alg.config["attacker"]["name"] == "echo"
    with pytest.raises(ValueError, match="resilient_ac.Attacker"):
        ex.learner(TINY, "corrected", attacker=lambda *a: None)
    with pytest.raises(ValueError, match="MLPAttackContext"):
        mlp.learning_adversaries(TINY).step(jax.random.key(0), None, {}, 0, None, None)


def test_consensus_epoch_refuses_stray_adversaries_and_bad_attacker_state():
    nets = mlp.init_nets(jax.random.key(3), 5, 10, 15, 5, 4, shared_templates=False)
    batch = _tiny_batch(jax.random.key(4))
    var = mlp.VARIANTS["v1-corrected"]
    args = (jax.random.key(5), nets, batch)
    rest = (jnp.asarray(ex.K5_IN_NODES), 1, False, 0.05, 0.9, TINY, var, (4,))
    # agent 1 is greedy but only agent 4 is an adversary slot: it would silently do nothing
    with pytest.raises(ValueError, match=r"agents \[1\] are not cooperative"):
        mlp.consensus_epoch(*args, jnp.array([0, 2, 0, 0, 1]), *rest)
    echo = _echo_attacker()
    wrong = Attacker(echo.init, lambda k, s, p, t, v, c: (echo.step(k, s, p, t, v, c)[0], {}),
                     {}, "stateless")
    # refused while tracing (eager, the epoch before the attacker's step costs seconds)
    epoch = functools.partial(mlp.consensus_epoch, attacker=wrong)
    with pytest.raises(ValueError, match="must be an AdversaryNets"):
        jax.jit(epoch, static_argnums=(9, 10, 11))(*args, jnp.array([0, 0, 0, 0, 1]), *rest)


def test_team_targets_oracle_and_malicious():
    r = jnp.array([[-1.0, -2.0, -3.0, -4.0, -9.0]])
    types = jnp.array([0, 0, 0, 0, 3])
    rho = mlp.team_targets(r, types, False)
    np.testing.assert_allclose(rho, [[-1, -2, -3, -4, 2.5]])
    np.testing.assert_allclose(mlp.team_targets(r, types, True), [[-2.5] * 4 + [2.5]])


# ------------------------------------------------------------------------------------------
# episodes, learner, batching
# ------------------------------------------------------------------------------------------

def test_episode_collection_shapes_and_returns():
    env = ex.grid_world("v1")
    nets = mlp.init_nets(jax.random.key(0), 5, 10, 15, 5, 4, shared_templates=True)
    types = jnp.array([0, 0, 0, 0, 1])
    batch, m, returns = ex.collect_episodes(jax.random.key(1), env, nets.actor, nets.critic,
                                            types, jnp.asarray(ex.paper_targets("v1", 50)), 3,
                                            0.05, 0.9)
    assert batch.obs.shape == (60, 10) and batch.tr_input.shape == (60, 15)
    assert batch.actions.shape == (60, 5) and m.coop_return.shape == (3,)
    r = np.asarray(batch.rewards).reshape(3, 20, 5)
    G = (0.9 ** np.arange(20))[None, :, None] * r
    np.testing.assert_allclose(returns, G.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(m.coop_return, G.sum(axis=1)[:, :4].mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(m.adversary_return, G.sum(axis=1)[:, 4], rtol=1e-12)
    # next observations continue the episode; rewards of v1 lie in [-1.1, 0]
    np.testing.assert_allclose(np.asarray(batch.next_obs).reshape(3, 20, 10)[:, :-1],
                               np.asarray(batch.obs).reshape(3, 20, 10)[:, 1:])
    assert r.min() >= -1.1 and r.max() <= 0
    # Est: mean of the cooperative critics at the first observation
    v0 = jax.vmap(mlp.value, in_axes=(0, None))(nets.critic, batch.obs[0])
    assert float(m.estimate[0]) == pytest.approx(float(v0[:4].mean()), rel=1e-12)


def test_collect_vmapped_over_seeds_equals_unbatched():
    env = ex.grid_world("v1")
    nets = mlp.init_nets(jax.random.key(0), 5, 10, 15, 5, 4, shared_templates=True)
    types = jnp.array([0, 0, 0, 0, 3])
    targets = jnp.stack([jnp.asarray(ex.paper_targets("v1", s)) for s in (50, 100)])
    keys = jax.random.split(jax.random.key(3), 2)

    def run(k, tg):
        return ex.collect_episodes(k, env, nets.actor, nets.critic, types, tg, 2, 0.05, 0.9)

    batched = jax.jit(jax.vmap(run))(keys, targets)
    single = jax.jit(run)(keys[1], targets[1])
    for a, b in zip(jax.tree_util.tree_leaves(batched), jax.tree_util.tree_leaves(single),
                    strict=True):
        np.testing.assert_allclose(a[1], b, rtol=1e-12)


def _params(P, types, H):
    tmpl = jax.eval_shape(lambda: mlp.init_nets(jax.random.key(0), 5, 10, 15, 5, 4, False))
    f = jnp.float64
    return ex.LearnParams(
        H=jnp.asarray(H, jnp.int32), agent_type=jnp.asarray(types, jnp.int32),
        oracle=jnp.zeros(P, bool), targets=jnp.stack([jnp.asarray(ex.paper_targets("v2", s))
                                                      for s in (100, 200)][:P]),
        seed=jnp.asarray([100, 200][:P], jnp.int32), phase=jnp.zeros(P, jnp.int32),
        warm=jnp.zeros(P, bool),
        start_nets=jax.tree_util.tree_map(lambda s: jnp.zeros((P,) + s.shape, s.dtype), tmpl),
        in_nodes=jnp.asarray(ex.PAPER_IN_NODES[None]), critic_lr=jnp.asarray(0.01, f),
        actor_lr=jnp.asarray(0.002, f), gamma=jnp.asarray(0.9, f), epsilon=jnp.asarray(0.05, f))


SWEPT = ("H", "agent_type", "oracle", "targets", "seed", "phase", "warm", "start_nets")


def _run_slice(lp, i):
    return lp._replace(**{f: jax.tree_util.tree_map(lambda v: v[i], getattr(lp, f))
                          for f in SWEPT})


def test_vmapped_learner_runs_are_independent():
    """One v2-protocol update (replay buffer, minibatch adversary fits and actor epochs)
    vmapped over two runs (other seed, targets, scenario, H): each run's numbers do not
    depend on its batch position or neighbour (the batch reversed gives the same runs; one
    compile), and the buffer fills. Unbatched == vmapped is checked on the episodes below."""
    alg = ex.learner(TINY_V2, "faithful", adversary_slots=(4,))
    lp = _params(2, [[0, 0, 0, 0, 3], [0, 0, 0, 0, 1]], [1, 0])
    axes = ex.LearnParams(0, 0, 0, 0, 0, 0, 0, 0, None, None, None, None, None)

    def one_update(key, p):
        s = alg.init(key, p)
        s, m = alg.step(jax.random.fold_in(key, 1), s, p, 0, None)
        return s.nets.critic.w3, s.nets.actor.w1, m.coop_return, m.estimate, s.buffer.obs

    fn = jax.jit(jax.vmap(one_update, in_axes=(None, axes)))
    batched = fn(jax.random.key(0), lp)
    swapped = _run_slice(lp, np.array([1, 0]))
    reverse = fn(jax.random.key(0), swapped)
    for a, b in zip(batched, reverse, strict=True):
        np.testing.assert_allclose(a[::-1], b, rtol=1e-9, atol=1e-12)
    single = [x[1] for x in batched]
    assert np.all(np.isfinite(np.asarray(batched[0])))
    assert not np.allclose(batched[2][0], batched[2][1])     # other seed, targets, scenario
    assert single[4].shape == (2 * 20, 10) and np.any(np.asarray(single[4]) != 0)


# ------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(Hs=[-1]), "non-negative"),
    (dict(critic_lr=float("nan")), "critic_lr"),
    (dict(actor_lr=0.0), "actor_lr"),
    (dict(gamma=1.0), "gamma"),
    (dict(gamma=-0.1), "gamma"),
    (dict(epsilon=1.5), "epsilon"),
    (dict(variant="exact"), "unknown variant"),
    (dict(version="v3"), "unknown version"),
    (dict(scenarios=["byzantine"]), "unknown scenario"),
    (dict(graph="ring"), "unknown graph"),
    (dict(graph=[[1, 0], [0, 1]]), "in_nodes"),
    (dict(episodes=150), "multiple of 100"),
    (dict(scenarios=[["greedy"] * 5]), "cooperative"),
])
def test_bad_inputs_raise(kwargs, match):
    args = dict(scenarios=["cooperative"], Hs=[1], seeds=(50,), episodes=100)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        ex.run_grid(args.pop("scenarios"), args.pop("Hs"), **args)


def test_variant_flags_validate():
    with pytest.raises(ValueError, match="trim_layout"):
        mlp.Variant(trim_layout="rows")
    with pytest.raises(ValueError, match="flatten_v1"):
        mlp.Variant(trim_layout="flatten_v1", aggregator="clipped")
    assert mlp.get_variant("v2", "faithful").aggregator == "clipped"
    assert mlp.get_variant("v1", "corrected").trim_layout == "per_sample"


def test_rolling_and_window_means():
    x = np.arange(10.0)
    np.testing.assert_allclose(ex.rolling_mean(x, 3)[:4], [0, 0.5, 1, 2])
    assert ex.window_mean(np.stack([x, x + 1]), -2) == pytest.approx(9.0)


# ------------------------------------------------------------------------------------------
# judges of the learning claims: negative controls
# ------------------------------------------------------------------------------------------

_NOISE = np.array([-0.2, -0.1, 0.0, 0.1, 0.2])     # per-seed spread: t-interval +-0.20


def _seeds(level, noise=_NOISE):
    return level + noise


def _levels(coop_h0, coop_h1, adv=-2.0, est_h0=-2.0, est_h1=-3.0, noise=_NOISE):
    """Per-seed window means (5 seeds) around the given levels; the same per-seed noise in
    every run, so paired differences are exact and only unpaired ones carry the spread."""
    lv = {}
    for s in ex.SCENARIOS:
        for h, c, e in ((0, coop_h0, est_h0), (1, coop_h1, est_h1)):
            lv[(s, h)] = {"coop_first": _seeds(-3.7, noise), "coop_last": _seeds(c, noise),
                          "adversary_first": _seeds(-3.6, noise),
                          "adversary_last": _seeds(np.nan if s == "cooperative" else adv, noise),
                          "est_last": _seeds(e, noise)}
    return lv


def test_interval_check_judges_the_seed_interval():
    # mean 1, sd 0.158, n 5: 95% t-interval 1 +- 2.776 * 0.0707 = [0.80, 1.20]
    c = rl.interval_check(1.0 + _NOISE, 0.0)
    assert c["verdict"] == "PASS" and c["ci"] == pytest.approx([0.8037, 1.1963], abs=1e-4)
    assert rl.interval_check(1.0 + _NOISE, 0.9)["verdict"] == "INCONCLUSIVE"
    assert rl.interval_check(1.0 + _NOISE, 1.3)["verdict"] == "FAIL"
    assert rl.interval_check(1.0 + _NOISE, -0.5, 0.5)["verdict"] == "FAIL"
    assert rl.interval_check(_NOISE, -0.5, 0.5)["verdict"] == "PASS"
    assert rl.interval_check([1.0], 0.0) == {"verdict": "INCONCLUSIVE", "mean": 1.0,
                                             "ci": None, "seeds": 1}
    with pytest.raises(ValueError, match="per-seed values"):
        rl.interval_check(1.0)
    with pytest.raises(ValueError, match="finite"):
        rl.interval_check([1.0, np.nan, 2.0])


def test_judges_pass_on_planted_orderings_and_fail_when_reversed():
    good = _levels(-4.2, -2.4)
    assert rl.judge_h1_beats_h0(good, seeds=5, min_seeds=3).verdict == "PASS"
    bad = _levels(-2.4, -4.2)
    assert rl.judge_h1_beats_h0(bad, seeds=5, min_seeds=3).verdict == "FAIL"
    # learning_h0_stalls: coop declines while the adversary improves
    assert rl.judge_h0_stalls(good, seeds=5, min_seeds=3).verdict == "PASS"
    improving = _levels(-2.0, -2.4)
    assert rl.judge_h0_stalls(improving, seeds=5, min_seeds=3).verdict == "FAIL"
    # learning_estimate_bias: Est diverges at H = 0, tracks at H = 1
    est = _levels(-4.5, -2.4, est_h0=1.5, est_h1=-2.6)
    assert rl.judge_estimate(est, seeds=5, min_seeds=3).verdict == "PASS"
    no_gap = _levels(-4.5, -2.4, est_h0=-4.5, est_h1=-2.6)
    assert rl.judge_estimate(no_gap, seeds=5, min_seeds=3).verdict == "FAIL"
    # learning_cooperative_cost: cooperative H = 1 within 0.15 of H = 0
    assert rl.judge_cooperative_cost(_levels(-2.0, -2.1), seeds=5, min_seeds=3).verdict == \
        "PASS"
    assert rl.judge_cooperative_cost(_levels(-2.0, -2.6), seeds=5, min_seeds=3).verdict == \
        "FAIL"
    # learning_oracle_upper: the oracle is an upper reference
    assert rl.judge_oracle(_seeds(-4.6), {"cooperative": _seeds(-5.2),
                                          "greedy": _seeds(-5.5)},
                           seeds=5, min_seeds=3).verdict == "PASS"
    assert rl.judge_oracle(_seeds(-6.0), {"cooperative": _seeds(-5.2)}, seeds=5,
                           min_seeds=3).verdict == "FAIL"
    # too few seeds or episodes: INCONCLUSIVE, never PASS, and the one-line reason says so
    small = rl.judge_h1_beats_h0(good, seeds=1, min_seeds=3)
    assert small.verdict == "INCONCLUSIVE"
    assert small.reason.startswith("size rule: too small to decide") and "PASS" in small.reason
    full = rl.judge_h1_beats_h0(good, seeds=5, min_seeds=3)
    assert full.reason.endswith("0 failed, 0 undecided; 5 seeds, alpha 0.05 per check")


def test_judges_are_inconclusive_inside_the_seed_noise():
    """The same mean orderings as above, but with per-seed differences whose spread covers
    the threshold: no verdict either way."""
    rng = np.random.default_rng(0)
    wide = np.array([-1.5, 1.2, -0.4, 0.9, -0.2])        # paired differences straddle 0
    lv = _levels(-3.0, -3.0)
    for s in ex.SCENARIOS:
        lv[(s, 1)]["coop_last"] = lv[(s, 0)]["coop_last"] + 0.1 + wide
    out = rl.judge_h1_beats_h0(lv, seeds=5, min_seeds=3)
    assert out.verdict == "INCONCLUSIVE"
    assert out.measured["min_gain_h1_minus_h0"] > 0            # the means say "H = 1 better"
    assert len(out.measured["undecided"]) == 3 and not out.measured["failed"]
    # learning_cooperative_cost with a mean cost of 0.1 (< 0.15) but a wide paired spread
    assert rl.judge_cooperative_cost(lv, seeds=5, min_seeds=3).verdict == "INCONCLUSIVE"
    # learning_oracle_upper: a strict ordering tied within the noise stays undecided ...
    tie = _seeds(-1.9) + rng.normal(0, 0.01, 5)
    out = rl.judge_oracle(_seeds(-1.9), {"greedy H=1": tie, "cooperative H=1": _seeds(-2.5)},
                          seeds=5, min_seeds=3)
    assert out.verdict == "INCONCLUSIVE" and out.measured["undecided"] == [
        "oracle - greedy H=1 >= 0"]
    # ... while the all-cooperative H = 0 run (same team average as the oracle) is judged
    # for non-inferiority: a tie passes, trailing by more than the margin fails
    out = rl.judge_oracle(_seeds(-1.9), {"cooperative H=0": tie, "cooperative H=1":
                                         _seeds(-2.5)}, seeds=5, min_seeds=3)
    assert out.verdict == "PASS"
    assert rl.ORACLE_TIE_MARGIN == rl.COOP_COST == 0.15
    out = rl.judge_oracle(_seeds(-2.2), {"cooperative H=0": tie}, seeds=5, min_seeds=3)
    assert out.verdict == "FAIL"
    # in v2 (no tie by construction: the logs show the oracle 0.65 above) the tie is undecided
    assert rl.ORACLE_TIES["v2"] == ()
    out = rl.judge_oracle(_seeds(-1.9), {"cooperative H=0": tie}, seeds=5, min_seeds=3,
                          ties=rl.ORACLE_TIES["v2"])
    assert out.verdict == "INCONCLUSIVE"


def test_faithful_levels_are_judged_against_the_logs():
    """Faithful variants: the seed mean's interval against logged +- 0.5."""
    logged = setups.V1_LOGGED
    near = {(s, h): {q: _seeds(v) for q, v in zip(
        ("coop_first", "coop_last", "adversary_first", "adversary_last", "est_last"),
        [np.nan if x is None else x for x in logged[(s, h)]], strict=True)}
        for s in ex.SCENARIOS for h in (0, 1)}
    out = rl.judge_h1_beats_h0(near, seeds=5, min_seeds=3, logged=logged)
    assert out.verdict == "PASS"
    assert sum(k.startswith("level") for k in out.measured["checks"]) == 6
    far = {k: {q: v - 1.0 if q == "coop_last" else v for q, v in d.items()}
           for k, d in near.items()}
    out = rl.judge_h1_beats_h0(far, seeds=5, min_seeds=3, logged=logged)
    assert out.verdict == "FAIL"
    assert all(k.startswith("level") for k in out.measured["failed"])
    assert len(out.measured["failed"]) == 6


def test_judge_saved_rejudges_saved_arrays(tmp_path):
    """A planted paper-size v1 result (5 seeds x 10 000 episodes) saved as the claims save
    it: H = 1 ends 1.0 above H = 0 for every adversary -> PASS; reversed -> FAIL."""
    from decentral.results import load_results, save_results

    specs = rl.SPECS_V1
    S, E = 5, 10_000
    rng = np.random.default_rng(1)

    def save(gain, name):
        coop = np.full((len(specs), S, E), -3.7) + rng.normal(0, 0.05, (len(specs), S, E))
        for r, (s, h, _) in enumerate(specs):
            if s != "cooperative" and h == 1:
                coop[r, :, -1000:] += gain
        adv = np.where(np.array([s == "cooperative" for s, _, _ in specs])[:, None, None],
                       np.nan, -2.0)
        cfg = {"version": "v1", "variant": "v1-corrected", "graph": "paper",
               "scenarios": [s for s, _, _ in specs], "H": [h for _, h, _ in specs],
               "oracle": [o for _, _, o in specs], "seeds": list(range(S)),
               "episodes_per_phase": E, "phases": 1, "grid": False}
        base = tmp_path / name
        save_results(base, {"coop_return": coop, "adversary_return": adv + 0 * coop,
                            "estimate": coop.copy()}, cfg)
        return rl.judge_saved(base)

    out = save(1.0, "good")
    assert set(out) == {f"resilient_ac.learning_{k}" for k in (
        "h1_beats_h0", "h0_stalls", "estimate_bias", "cooperative_cost", "oracle_upper")}
    assert out["resilient_ac.learning_h1_beats_h0"].verdict == "PASS"
    assert save(-1.0, "bad")["resilient_ac.learning_h1_beats_h0"].verdict == "FAIL"
    # the per-seed window means alone (export_levels) give the same verdicts and numbers
    rl.export_levels([tmp_path / "good"], tmp_path / "levels.json")
    again = rl.judge_levels(tmp_path / "levels.json")
    assert list(again) == ["v1-corrected/paper"]
    for cid, o in again["v1-corrected/paper"].items():
        assert o.verdict == out[cid].verdict and o.measured == out[cid].measured
    with pytest.raises(ValueError, match="a second run of configuration"):
        rl.export_levels([tmp_path / "good", tmp_path / "bad"], tmp_path / "twice.json")
    text = (tmp_path / "levels.json").read_text()
    assert "NaN" not in text and "null" in text            # strict JSON: no adversary -> null
    data = json.loads(text)
    data["configurations"][0]["runs"] = data["configurations"][0]["runs"][1:]
    (tmp_path / "cut.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="lacks"):
        rl.judge_levels(tmp_path / "cut.json")
    data["windows"] = {"v1": [100, 100], "v2": [200, 500]}
    (tmp_path / "cut.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="window means over"):
        rl.judge_levels(tmp_path / "cut.json")
    save_results(tmp_path / "other", {"x": np.zeros(3)}, {"version": "v1"})
    with pytest.raises(ValueError, match="not a saved learning run"):
        rl.judge_saved(tmp_path / "other")
    arrays, meta = load_results(tmp_path / "good")
    cfg = meta.get("config", meta)
    save_results(tmp_path / "echo", arrays, {**cfg, "attacker": "echo"})
    with pytest.raises(ValueError, match="custom attacker 'echo'"):
        rl.judge_saved(tmp_path / "echo")
    save_results(tmp_path / "onephase", arrays, {**cfg, "phases": 2})
    with pytest.raises(ValueError, match="2 phase"):
        rl.judge_saved(tmp_path / "onephase")
    keep = [r for r, s in enumerate(cfg["scenarios"]) if s != "faulty"]
    part = {k: v[keep] for k, v in arrays.items()}
    save_results(tmp_path / "part", part, {**cfg, **{k: [cfg[k][r] for r in keep]
                                                     for k in ("scenarios", "H", "oracle")}})
    with pytest.raises(ValueError, match=r"lacks \(scenario, H, oracle\) \[\('faulty'"):
        rl.judge_saved(tmp_path / "part")


def test_resolve_graph_accepts_adjacency_and_periodic_sequences():
    import decentral.graphs as g
    from decentral.resilient_ac.learning import K5_IN_NODES, PAPER_IN_NODES, resolve_graph

    np.testing.assert_array_equal(resolve_graph(g.circulant(5, [-1, -2, -3]))[0], PAPER_IN_NODES)
    np.testing.assert_array_equal(resolve_graph(g.complete(5))[0], K5_IN_NODES)
    seq = g.periodic([g.circulant(5, [-1, -2, -3]), g.circulant(5, [1, 2, 3])], rule="row")
    tables = resolve_graph(seq)
    assert tables.shape == (2, 5, 4)
    np.testing.assert_array_equal(tables[1, 0], [0, 2, 3, 4])        # cyclic order from 0 + 1
    np.testing.assert_array_equal(tables[:, :, 0], np.tile(np.arange(5), (2, 1)))
    with pytest.raises(ValueError, match="same\nnumber|same number"):
        resolve_graph(g.periodic([g.circulant(5, [-1, -2, -3]), g.complete(5)], rule="row"))
    with pytest.raises(ValueError, match="no period"):
        resolve_graph(g.random_edge_drops(g.complete(5), 0.3, rule="row", key=0))
    with pytest.raises(ValueError, match=r"bool \[5, 5\]"):
        resolve_graph(g.complete(4))
    with pytest.raises(ValueError, match="has 4 agents"):
        resolve_graph(g.static(g.complete(4), rule="row"))


def test_committed_paper_scale_levels_are_judged_at_full_size():
    """The per-seed window means of the paper-scale runs kept in the repo are complete and
    judged with the paper's size (no configuration gated as too small)."""
    from pathlib import Path

    path = Path(rl.__file__).parents[1] / "reference" / "resilient_learning_full_levels.json"
    judged = rl.judge_levels(path)
    for label, outcomes in judged.items():
        for o in outcomes.values():
            assert "too small to decide" not in o.details, label
    # the verdicts docs/resilient_learning.md and docs/status.md quote (claim order as _JUDGES)
    quoted = {"v1-faithful/paper": ["INCONCLUSIVE", "INCONCLUSIVE", "INCONCLUSIVE", "FAIL",
                                    "PASS"],
              "v1-corrected/paper": ["PASS", "INCONCLUSIVE", "INCONCLUSIVE", "FAIL",
                                     "INCONCLUSIVE"],
              "v1-corrected/k5": ["PASS", "INCONCLUSIVE", "INCONCLUSIVE", "INCONCLUSIVE",
                                  "INCONCLUSIVE"],
              "v2-faithful/paper": ["INCONCLUSIVE", "FAIL", "INCONCLUSIVE", "INCONCLUSIVE",
                                    "INCONCLUSIVE"],
              "v2-corrected/paper": ["INCONCLUSIVE", "FAIL", "INCONCLUSIVE", "INCONCLUSIVE",
                                     "INCONCLUSIVE"],
              "v2-corrected/k5": ["INCONCLUSIVE", "FAIL", "PASS", "INCONCLUSIVE",
                                  "INCONCLUSIVE"]}
    assert set(judged) == set(quoted)
    for label, verdicts in quoted.items():
        assert [str(judged[label][f"resilient_ac.{k}"].verdict) for k in rl._JUDGES] == \
            verdicts, label
    # and a few quoted numbers: the cooperative cost (paired interval) and the malicious Est
    cost = judged["v1-faithful/paper"]["resilient_ac.learning_cooperative_cost"]
    check = cost.measured["per_configuration"]["v1-faithful/paper"]["checks"]
    assert check["|coop(H=1) - coop(H=0)| <= 0.15"]["ci"] == pytest.approx([-1.1161, -0.2683],
                                                                          abs=1e-4)
    est = judged["v1-corrected/paper"]["resilient_ac.learning_estimate_bias"]
    assert est.measured["v1-corrected/paper: malicious_h0_est"] == pytest.approx(3.6482,
                                                                                abs=1e-4)
    k5 = judged["v2-corrected/k5"]["resilient_ac.learning_estimate_bias"]
    assert k5.measured["v2-corrected/k5: malicious_h0_est"] == pytest.approx(3.1139, abs=1e-4)


def test_only_paper_size_runs_save_under_the_plain_name():
    """A quick or reseeded claims run never overwrites the hours-long --full arrays."""
    from decentral.verify.claims import CheckContext

    assert rl._size_suffix(CheckContext(full=True)) == ""
    assert rl._size_suffix(CheckContext(full=False)) == "-quick"
    assert rl._size_suffix(CheckContext(full=True, seeds=2)) == "-seeds2"
    assert rl._size_suffix(CheckContext(full=True, base_seed=7)) == "-base7"
