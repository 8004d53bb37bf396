"""The grid world of the resilient actor-critic experiments (Figura, Lin, Liu, Gupta,
arXiv:2111.06776; dynamics as in the authors' code): hand-computed moves and rewards for both
versions, v2's in-place sequential processing, the normalization, jit / vmap agreement, the
targets table, input errors, and the environment-facts claim with planted wrong variants."""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from benchmarks.bench_gridworld import NumpyGridWorld
from decentral.resilient_ac.learning.gridworld import (
    GridState,
    GridWorld,
    grid_params,
    grid_world,
    paper_targets,
    random_targets,
    rollout,
)
from decentral.verify import Verdict
from proofs_checks.resilient_ac import env as pe

V1, V2 = grid_world("v1"), grid_world("v2")
V2_AS_CODED = grid_world("v2", collision="as_coded")


def state_of(pos):
    return GridState(jnp.asarray(pos, jnp.int32), jnp.zeros((), jnp.int32))


def step(env, pos, actions, targets):
    """One joint step through the compiled batch path (one compile per env for the file)."""
    new, rewards = pe.run_cases(env, [pos], [actions], [targets])
    return new[0], rewards[0].astype(np.float64)


def random_cases(size, seed, n=512):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, size, (n, 5, 2)), rng.integers(0, 5, (n, 5)),
            rng.integers(0, size, (n, 5, 2)))


# ---------------------------------------------------------------------------------------------
# moves: every action of each version, interior cell and walls
# ---------------------------------------------------------------------------------------------

# agents at an interior cell and at the four corners, all taking the same action
V1_START = [(2, 3), (0, 0), (5, 5), (0, 5), (5, 0)]
V1_MOVES = {
    0: [(2, 2), (0, 0), (5, 4), (0, 4), (5, 0)],      # LEFT: col - 1
    1: [(1, 3), (0, 0), (4, 5), (0, 5), (4, 0)],      # DOWN: row - 1
    2: [(2, 4), (0, 1), (5, 5), (0, 5), (5, 1)],      # RIGHT: col + 1
    3: [(3, 3), (1, 0), (5, 5), (1, 5), (5, 0)],      # UP: row + 1
    4: V1_START,                                      # STAY
}
V2_START = [(2, 3), (0, 0), (4, 4), (0, 4), (4, 0)]
V2_MOVES = {
    0: V2_START,                                      # stay
    1: [(1, 3), (0, 0), (3, 4), (0, 4), (3, 0)],      # (-1, 0)
    2: [(3, 3), (1, 0), (4, 4), (1, 4), (4, 0)],      # (+1, 0)
    3: [(2, 2), (0, 0), (4, 3), (0, 3), (4, 0)],      # (0, -1)
    4: [(2, 4), (0, 1), (4, 4), (0, 4), (4, 1)],      # (0, +1)
}


@pytest.mark.parametrize("env,start,moves", [(V1, V1_START, V1_MOVES), (V2, V2_START, V2_MOVES),
                                             (V2_AS_CODED, V2_START, V2_MOVES)],
                         ids=["v1", "v2", "v2_as_coded"])
def test_every_action_moves_as_documented_and_clips_at_walls(env, start, moves):
    for a, expected in moves.items():
        new, _ = step(env, start, [a] * 5, [(0, 0)] * 5)
        assert new.tolist() == [list(c) for c in expected], (env.version, a)
    assert env.stay_action == (4 if env.version == "v1" else 0)


# ---------------------------------------------------------------------------------------------
# rewards on hand-computed cases
# ---------------------------------------------------------------------------------------------

def test_v1_rewards_collision_penalty_on_the_new_cell_only():
    targets = paper_targets("v1", 50)                 # (0,0) (3,5) (1,4) (5,5) (5,2)
    pos = [(1, 1), (0, 0), (1, 4), (5, 5), (0, 0)]
    actions = [0, 3, 4, 2, 4]                          # LEFT, UP, STAY, RIGHT (wall), STAY
    obs, st, r, done = V1.step(None, state_of(pos), jnp.asarray(actions, jnp.int32),
                               grid_params(V1, targets))
    new, r = np.asarray(st.pos), np.asarray(r, np.float64)
    assert new.tolist() == [[1, 0], [1, 0], [1, 4], [5, 5], [0, 0]] and int(st.t) == 1
    # 0 and 1 land on (1, 0): distance 1 and 7, each + 1; agent 4 shared (0, 0) with agent 1
    # before the move only, so no penalty
    np.testing.assert_allclose(r, [-0.2, -0.8, 0.0, 0.0, -0.7], atol=1e-6)
    assert not done
    # all on target: reward 0 and done; two agents staying on one shared target: both penalised
    _, _, r, done = V1.step(None, state_of(targets), jnp.full(5, 4, jnp.int32),
                            grid_params(V1, targets))
    assert bool(done) and np.all(np.asarray(r) == 0)
    # two or more agents staying on one shared target: all penalised
    shared = np.array([(2, 2)] * 5)
    _, r = step(V1, shared, [4] * 5, shared)
    assert np.allclose(r, -0.1)


def test_v1_reward_range_is_minus_1_1_to_0():
    # farthest cell from the target plus a collision: -(10 + 1) / 10
    _, r = step(V1, [(5, 5), (5, 5), (0, 0), (0, 0), (0, 0)], [4] * 5,
                [(0, 0), (0, 0), (0, 0), (0, 0), (0, 0)])
    np.testing.assert_allclose(r, [-1.1, -1.1, -0.1, -0.1, -0.1], atol=1e-6)
    _, rew = pe.run_cases(V1, *random_cases(6, 0))
    assert float(rew.min()) >= -1.1 - 1e-6 and float(rew.max()) <= 0.0


# v2 case: targets and positions chosen so that the two collision rules and the in-place
# processing all show
V2_TARGETS = [(0, 0), (0, 0), (2, 2), (2, 2), (4, 4)]
V2_POS = [(2, 0), (3, 0), (2, 1), (2, 2), (4, 4)]
V2_ACTIONS = [1, 1, 4, 0, 0]
# agent 0: (2,0) -> (1,0), free: -d' = -1                     (as coded: -d - 1 = -3)
# agent 1: (3,0) -> (2,0), just vacated by agent 0: free, -2   (as coded: -4)
# agent 2: (2,1) -> (2,2), where agent 3 sits: d = 1, -d - 1 = -2 (both)
# agent 3: stays on its target, agent 2 now on it: 0          (both)
# agent 4: stays on its target, alone: 0                      (both)


def test_v2_corrected_rule_free_cell_and_collision():
    new, r = step(V2, V2_POS, V2_ACTIONS, V2_TARGETS)
    assert new.tolist() == [[1, 0], [2, 0], [2, 2], [2, 2], [4, 4]]
    np.testing.assert_allclose(r, [-0.2, -0.4, -0.4, 0.0, 0.0], atol=1e-6)


def test_v2_as_coded_never_takes_the_free_cell_branch():
    new, r = step(V2_AS_CODED, V2_POS, V2_ACTIONS, V2_TARGETS)
    assert new.tolist() == [[1, 0], [2, 0], [2, 2], [2, 2], [4, 4]]
    np.testing.assert_allclose(r, [-0.6, -0.8, -0.4, 0.0, 0.0], atol=1e-6)
    # on random joint steps every reward is 0 (stayed on target) or -(d + 1) / 5
    pos, acts, tg = random_cases(5, 1)
    _, rew = pe.run_cases(V2_AS_CODED, pos, acts, tg)
    d = np.abs(pos - tg).sum(-1)
    expected = np.where((d == 0) & (acts == 0), 0.0, -(d + 1) / 5)
    np.testing.assert_allclose(np.asarray(rew), expected, atol=1e-6)


def test_v2_in_place_sequential_processing():
    tg = [(4, 4)] * 5
    # agent 0 moves onto agent 1's cell before agent 1 moves away: penalised (a simultaneous
    # rule would see agent 1 gone); agent 1 then moves on to a free cell
    _, r = step(V2, [(0, 0), (1, 0), (4, 4), (3, 3), (2, 2)], [2, 2, 0, 0, 0], tg)
    d0, d1 = 8, 7
    np.testing.assert_allclose(r[:2], [-(d0 + 1) / 5, -(d1 - 1) / 5], atol=1e-6)
    # agent 1 moves into the cell agent 0 just left: free
    new, r = step(V2, [(1, 0), (2, 0), (4, 4), (3, 3), (2, 2)], [1, 1, 0, 0, 0], tg)
    assert new[:2].tolist() == [[0, 0], [1, 0]]
    np.testing.assert_allclose(r[:2], [-8 / 5, -7 / 5], atol=1e-6)
    # agent 1 moves into the cell agent 0 just entered: penalised (-d - 1)
    _, r = step(V2, [(0, 0), (0, 2), (4, 4), (3, 3), (2, 2)], [4, 3, 0, 0, 0], tg)
    np.testing.assert_allclose(r[:2], [-7 / 5, -(6 + 1) / 5], atol=1e-6)


@pytest.mark.parametrize("env", [V1, V2, V2_AS_CODED], ids=["v1", "v2", "v2_as_coded"])
def test_plain_numpy_loop_agrees_with_the_env(env):
    pos, acts, tg = random_cases(env.size, 2, n=300)
    pos[::2] = np.random.default_rng(3).integers(0, 2, (150, 5, 2))   # crowded: collisions
    new, rew = pe.run_cases(env, pos, acts, tg)
    for b in range(300):
        ref = NumpyGridWorld(env.version, env.collision, tg[b])
        ref.reset(pos[b])
        np.testing.assert_allclose(np.asarray(rew[b]), ref.step(acts[b]), atol=1e-6)
        assert np.array_equal(np.asarray(new[b]), ref.pos)


# ---------------------------------------------------------------------------------------------
# observation, team-reward input
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("env,mean,std", [(V1, 2.5, math.sqrt(35 / 12)), (V2, 2.0, math.sqrt(2))],
                         ids=["v1", "v2"])
def test_normalized_coordinates_mean_0_std_1_over_all_cells(env, mean, std, x64):
    assert env.coord_mean == mean and math.isclose(env.coord_std, std, rel_tol=1e-15)
    cells = np.array(list(itertools.product(range(env.size), repeat=2)))
    pos = np.stack([np.roll(cells, k, axis=0) for k in range(5)], axis=1)   # [size^2, 5, 2]
    obs = np.asarray(env.observation(state_of(pos)))
    assert obs.shape == (env.size ** 2, 10) and obs.dtype == np.float64
    np.testing.assert_allclose(obs.mean(0), 0.0, atol=1e-14)
    np.testing.assert_allclose(obs.std(0), 1.0, atol=1e-14)
    # agent-major layout [r0, c0, r1, c1, ...]
    one = np.asarray(env.observation(state_of(pos[7])))
    np.testing.assert_allclose(one, ((pos[7] - mean) / std).reshape(-1), atol=1e-14)


def test_team_reward_input_layouts():
    pos = np.array([(0, 1), (2, 3), (4, 0), (1, 1), (3, 2)])
    acts = jnp.array([4, 0, 1, 2, 3], jnp.int32)
    for env in (V1, V2):
        obs = env.observation(state_of(pos))
        x = np.asarray(env.tr_input(obs, acts))
        assert x.shape == (env.tr_input_dim,) == (15,)
        if env.version == "v1":
            np.testing.assert_allclose(x, np.concatenate([np.asarray(obs), [4, 0, 1, 2, 3]]))
        else:
            norm = (pos - 2.0) / math.sqrt(2)
            expected = np.concatenate([norm, np.asarray(acts)[:, None]], axis=1).reshape(-1)
            np.testing.assert_allclose(x, expected, atol=1e-6)
        batched = env.tr_input(jnp.stack([obs, obs]), jnp.stack([acts, acts]))
        assert batched.shape == (2, 15)
    with pytest.raises(ValueError, match="tr_input needs"):
        V1.tr_input(jnp.zeros(10), jnp.zeros(4, jnp.int32))


# ---------------------------------------------------------------------------------------------
# reset, jit and vmap over seeds, rollout
# ---------------------------------------------------------------------------------------------

def test_jit_and_vmap_over_seeds_equal_unbatched():
    """Both versions in one compiled function (one compile); unbatched runs are eager."""
    seeds = {"v1": [50, 100, 1000], "v2": [100, 200, 300]}
    envs = {"v1": V1, "v2": V2}
    params = {v: grid_params(envs[v], seeds[v]) for v in envs}
    assert params["v1"].targets.shape == (3, 5, 2)
    keys = jax.random.split(jax.random.key(3), 3)
    acts = jnp.asarray(np.random.default_rng(4).integers(0, 5, (3, 5)), jnp.int32)

    def reset_step(key, a, ps):
        out = {}
        for v, env in envs.items():
            obs, st = env.reset(key, ps[v])
            out[v] = (obs, st, env.step(key, st, a, ps[v]))
        return out

    batched = jax.jit(jax.vmap(reset_step))(keys, acts, params)
    for s in range(3):
        single = reset_step(keys[s], acts[s], {v: grid_params(envs[v], seeds[v][s])
                                               for v in envs})
        for got, want in zip(jax.tree.leaves(batched), jax.tree.leaves(single), strict=True):
            np.testing.assert_array_equal(np.asarray(got)[s], np.asarray(want))
    for v, env in envs.items():
        obs0, st0, (_, st1, rewards, done) = batched[v]
        assert st0.pos.dtype == jnp.int32 and int(st0.pos.min()) >= 0
        assert int(st0.pos.max()) < env.size and np.all(np.asarray(st0.t) == 0)
        assert np.all(np.asarray(st1.t) == 1) and obs0.shape == (3, 10)
        assert rewards.shape == (3, 5) and done.shape == (3,)


def toward_centre(key, obs):
    """A deterministic policy (no random draws to compile): row towards the centre."""
    del key
    return jnp.where(obs[::2] < 0, 2, 1).astype(jnp.int32)


def test_rollout_shapes_and_replay():
    params = grid_params(V2, 200)
    traj = jax.jit(lambda k: rollout(V2, params, k, toward_centre))(jax.random.key(5))
    assert traj.obs.shape == (21, 10) and traj.actions.shape == (20, 5)
    assert traj.rewards.shape == (20, 5) and traj.done.shape == (20,)
    pos, actions, rewards = (np.asarray(x) for x in (traj.pos, traj.actions, traj.rewards))
    env = NumpyGridWorld("v2", "fixed", np.asarray(params.targets))
    env.reset(pos[0])
    for t in range(20):
        np.testing.assert_allclose(env.step(actions[t]), rewards[t], atol=1e-6)
        assert np.array_equal(env.pos, pos[t + 1])


# ---------------------------------------------------------------------------------------------
# targets, configuration, errors
# ---------------------------------------------------------------------------------------------

def test_targets_table_and_params():
    assert paper_targets("v1", 50).tolist() == [[0, 0], [3, 5], [1, 4], [5, 5], [5, 2]]
    assert paper_targets("v1", 1000).tolist() == [[3, 0], [3, 4], [1, 5], [0, 1], [5, 0]]
    assert paper_targets("v2", 100).tolist() == [[0, 0], [3, 0], [2, 4], [2, 2], [2, 2]]
    for version, seeds in (("v1", (50, 100, 200, 500, 1000)), ("v2", (100, 200, 300))):
        for s in seeds:
            t = paper_targets(version, s)
            size = 6 if version == "v1" else 5
            assert t.shape == (5, 2) and t.dtype == np.int32 and t.min() >= 0
            assert t.max() < size
    with pytest.raises(ValueError, match="seed 7 has no tabulated targets"):
        paper_targets("v1", 7)
    with pytest.raises(ValueError, match="seed 300 has no tabulated targets for v1"):
        grid_params(V1, 300)
    rt = random_targets(jax.random.key(0), V1)
    assert rt.shape == (5, 2) and rt.dtype == jnp.int32
    assert int(rt.min()) >= 0 and int(rt.max()) < 6
    p = grid_params(V2, 7, allow_random=True)
    np.testing.assert_array_equal(p.targets, random_targets(jax.random.key(7), V2))
    assert grid_params(V2, np.int64(300)).targets.tolist() == paper_targets("v2", 300).tolist()
    assert grid_params(V1, np.zeros((2, 5, 2), np.int32)).targets.shape == (2, 5, 2)


def test_configuration():
    assert (V1.size, V1.reward_scale, V1.obs_dim, V1.tr_input_dim, V1.num_actions,
            V1.horizon, V1.num_agents) == (6, 10, 10, 15, 5, 20, 5)
    assert (V2.size, V2.reward_scale) == (5, 5)
    assert hash(V2) == hash(grid_world("v2")) and V2 != V2_AS_CODED
    assert isinstance(V1, GridWorld)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown grid-world version 'v3'"):
        grid_world("v3")
    with pytest.raises(ValueError, match="unknown collision rule 'none'"):
        grid_world("v2", collision="none")
    with pytest.raises(ValueError, match="num_agents must be >= 1"):
        grid_world("v1", num_agents=0)
    with pytest.raises(ValueError, match="unknown grid-world version"):
        paper_targets("v9", 50)
    p = grid_params(V1, 50)
    st = state_of(np.zeros((5, 2)))
    with pytest.raises(ValueError, match=r"actions must have shape \(5,\)"):
        V1.step(None, st, jnp.zeros(4, jnp.int32), p)
    with pytest.raises(ValueError, match="actions must lie in 0..4"):
        V1.step(None, st, jnp.array([0, 1, 2, 3, 5], jnp.int32), p)
    with pytest.raises(ValueError, match="actions must hold integers"):
        V1.step(None, st, jnp.zeros(5), p)
    with pytest.raises(ValueError, match=r"actions must have shape \(5,\)"):
        jax.jit(V1.step)(None, st, jnp.zeros(3, jnp.int32), p)      # shapes checked under jit
    with pytest.raises(ValueError, match="targets must lie in 0..5"):
        grid_params(V1, [[0, 0], [6, 0], [0, 0], [0, 0], [0, 0]])
    with pytest.raises(ValueError, match="targets must lie in 0..4"):
        grid_params(V2, np.full((5, 2), 5))
    with pytest.raises(ValueError, match=r"targets must have shape \(5, 2\)"):
        grid_params(V1, np.zeros((4, 2), np.int32))
    with pytest.raises(ValueError, match="must hold integers"):
        grid_params(V1, np.zeros((5, 2)))
    with pytest.raises(ValueError, match=r"state.pos must have shape \(5, 2\)"):
        V1.step(None, state_of(np.zeros((4, 2))), jnp.zeros(5, jnp.int32), p)
    with pytest.raises(ValueError, match="state.pos must lie in 0..5"):
        V1.step(None, state_of(np.full((5, 2), 6)), jnp.zeros(5, jnp.int32), p)
    with pytest.raises(ValueError, match="params must be a GridParams"):
        V1.reset(jax.random.key(0), (np.zeros((5, 2), np.int32),))
    with pytest.raises(ValueError, match="env must be a GridWorld"):
        grid_params("v1", 50)
    with pytest.raises(ValueError, match="tabulated targets are for 5 agents"):
        grid_params(grid_world("v1", num_agents=3), 50)


# ---------------------------------------------------------------------------------------------
# the environment-facts claim and its negative controls
# ---------------------------------------------------------------------------------------------

class _UpDownSwapped(GridWorld):
    """v1 with DOWN and UP exchanged."""

    @property
    def action_deltas(self):
        return jnp.asarray(((0, -1), (1, 0), (0, 1), (-1, 0), (0, 0)), jnp.int32)


class _SampleStd(GridWorld):
    """Normalized by the sample standard deviation (n - 1) instead of the population one."""

    @property
    def coord_std(self):
        return math.sqrt(self.size * (self.size + 1) / 12.0)


class _NoCollisionPenalty(GridWorld):
    """v1 without the collision term."""

    def _transition_v1(self, pos, moves, targets):
        new = jnp.clip(pos + moves, 0, self.size - 1)
        return new, -jnp.sum(jnp.abs(new - targets), axis=1)


NUM_RANDOM = 2000


def test_environment_facts_pass_on_the_library():
    out = pe.check_environment_facts(num_random=NUM_RANDOM, seed=0)
    assert out.verdict == Verdict.PASS, out.measured
    assert out.measured["v2_as_coded_free_branch_taken"] == 0
    lo, hi = out.measured["v1_reward_range"]
    assert math.isclose(lo, -1.1, abs_tol=1e-6) and hi == 0.0
    per = out.measured["per_env"]
    assert per["v2_fixed"]["free_branch_taken"] == per["v2_fixed"]["free_cell_distinguishable"] > 0
    assert per["v1"]["collisions_penalised"] == per["v1"]["collisions"] > 0
    assert out.reason and "\n" not in out.reason
    assert f"in {out.measured['env_steps']} joint steps" in out.reason, out.reason
    assert "free-cell branch 0 of" in out.reason and "[-1.1, 0]" in out.reason, out.reason


@pytest.mark.parametrize("label,env,what", [
    ("v2_fixed", V2_AS_CODED, "as-coded rule labelled corrected"),
    ("v2_as_coded", V2, "corrected rule labelled as coded"),
    ("v1", _UpDownSwapped("v1"), "DOWN and UP swapped"),
    ("v1", _SampleStd("v1"), "sample standard deviation"),
    ("v1", _NoCollisionPenalty("v1"), "no collision penalty"),
], ids=["as_coded_as_fixed", "fixed_as_as_coded", "swapped_actions", "sample_std",
        "no_collision_penalty"])
def test_environment_facts_fail_on_planted_wrong_variants(label, env, what):
    out = pe.check_environment_facts({label: env}, num_random=NUM_RANDOM, seed=0)
    assert out.verdict == Verdict.FAIL, what
    assert out.measured["failed"] == [label]
    assert out.reason.startswith(f"{label}: ") and "\n" not in out.reason, out.reason
    assert any(ch.isdigit() for ch in out.reason), out.reason      # the count that broke it


def test_environment_facts_claim_is_registered():
    assert pe._environment_facts.claim.id == "resilient_ac.environment_facts"
    with pytest.raises(ValueError, match="labels among"):
        pe.check_environment_facts({"v3": V1})
