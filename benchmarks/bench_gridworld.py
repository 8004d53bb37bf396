"""Throughput of the grid world (:mod:`decentral.resilient_ac.learning.gridworld`) against numpy.

The environment of the resilient actor-critic experiments (Figura, Lin, Liu, Gupta,
arXiv:2111.06776; dynamics as in the authors' code) run as a workload of its own: S seeds (each
with its own targets), E episodes per seed, T = 20 steps per episode, every agent taking a
uniformly random action; one "env step" is one joint step of all N = 5 agents.

* decentral: ``jax.jit`` of :func:`~decentral.resilient_ac.learning.gridworld.rollout` with
  :func:`~decentral.resilient_ac.learning.gridworld.uniform_policy` (a ``lax.scan`` over the 20
  steps), ``lax.map`` over the E episodes (each from a fresh reset), ``vmap`` over the S seeds,
  the seeds sharded over every device. It draws its initial positions and actions itself (threefry),
  inside the timed call. Reported compiled (median of repeats) and including compilation
  (the first call). The compilation is paid once per program, whatever the number of steps,
  so the ratio including it depends on the size.
* the reference: a numpy environment written the way such code usually is (a class holding the
  positions, ``step`` looping over the agents with Python integers), driven by Python loops over
  seeds, episodes and steps. It replays the initial positions and actions the decentral side
  drew (so it pays for no random draws: the ratio is, if anything, in numpy's favour). Timed on
  the first ``loop_seeds`` seeds (every episode of them); a rate needs no extrapolation.

Both sides compute the same dynamics; the row checks that the rewards agree exactly (the
integer rewards before scaling, recovered by ``round(r * scale)``) and reports the largest
difference of the scaled rewards.

Example:
    >>> rows = bench_env_steps(S=2, E=2, loop_seeds=1, repeats=1, variants=("v2",))
    >>> [r.variant.split()[0] for r in rows], all(r.agree for r in rows)
    (['v2'], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from benchmarks.harness import BenchResult, measure, ratio
from decentral.resilient_ac.learning.gridworld import (
    ACTION_DELTAS,
    GridParams,
    GridWorld,
    grid_world,
    random_targets,
    rollout,
    uniform_policy,
)

__all__ = ["NumpyGridWorld", "numpy_rollouts", "jax_rollouts", "bench_env_steps", "VARIANTS"]

#: The benchmark's variants: label -> (version, collision).
VARIANTS: dict[str, tuple[str, str]] = {
    "v1": ("v1", "fixed"),
    "v2": ("v2", "fixed"),
    "v2_as_coded": ("v2", "as_coded"),
}


class NumpyGridWorld:
    """The grid world as a plain stateful numpy class (the reference side).

    ``reset(pos)`` sets the positions; ``step(actions)`` moves the agents (v1 all at once, v2
    one after the other with in-place updates) and returns the scaled rewards ``[N]``.
    """

    def __init__(self, version: str, collision: str, targets: np.ndarray):
        self.version = version
        self.collision = collision
        self.targets = np.asarray(targets, np.int64)
        self.n = self.targets.shape[0]
        self.size = 6 if version == "v1" else 5
        self.scale = 10.0 if version == "v1" else 5.0
        self.moves = [np.array(m) for m in ACTION_DELTAS[version]]
        self.stay = 4 if version == "v1" else 0
        self.pos = np.zeros((self.n, 2), np.int64)

    def reset(self, pos: np.ndarray) -> None:
        self.pos = np.array(pos, np.int64)

    def _moved(self, cell: np.ndarray, action: int) -> np.ndarray:
        return np.clip(cell + self.moves[action], 0, self.size - 1)

    def step(self, actions: Sequence[int]) -> np.ndarray:
        rewards = np.zeros(self.n)
        if self.version == "v1":
            new = np.array([self._moved(self.pos[i], int(actions[i])) for i in range(self.n)])
            for i in range(self.n):
                hit = any(j != i and new[j, 0] == new[i, 0] and new[j, 1] == new[i, 1]
                          for j in range(self.n))
                dist_next = abs(new[i] - self.targets[i]).sum()
                rewards[i] = -(dist_next + int(hit)) / self.scale
            self.pos = new
            return rewards
        for i in range(self.n):
            a = int(actions[i])
            dist = abs(self.pos[i] - self.targets[i]).sum()
            self.pos[i] = self._moved(self.pos[i], a)
            gaps = abs(self.pos - self.pos[i]).sum(axis=1)
            if self.collision == "fixed":
                gaps[i] = 1                      # the agent itself does not occupy the cell
            dist_next = abs(self.pos[i] - self.targets[i]).sum()
            if gaps.min() > 0:
                rewards[i] = -dist_next / self.scale
            elif dist == 0 and a == self.stay:
                rewards[i] = 0.0
            else:
                rewards[i] = -(dist + 1) / self.scale
        return rewards


def numpy_rollouts(version: str, collision: str, targets: np.ndarray, init_pos: np.ndarray,
                   actions: np.ndarray) -> np.ndarray:
    """Reference loops: ``targets [S, N, 2]``, ``init_pos [S, E, N, 2]``, ``actions
    [S, E, T, N]`` -> rewards ``[S, E, T, N]`` (float64)."""
    S, E, T, N = actions.shape
    out = np.zeros((S, E, T, N))
    for s in range(S):
        env = NumpyGridWorld(version, collision, targets[s])
        for e in range(E):
            env.reset(init_pos[s, e])
            for t in range(T):
                out[s, e, t] = env.step(actions[s, e, t])
    return out


def jax_rollouts(env: GridWorld, num_episodes: int):
    """``f(keys [S], targets [S, N, 2]) -> (init_pos [S, E, N, 2], actions [S, E, T, N],
    rewards [S, E, T, N])``, jitted; E = ``num_episodes``, T = ``env.horizon``."""
    policy = uniform_policy(env)

    def one_seed(key, targets):
        params = GridParams(targets)

        def episode(k):
            traj = rollout(env, params, k, policy)
            return traj.pos[0], traj.actions, traj.rewards

        return jax.lax.map(episode, jax.random.split(key, num_episodes))

    return jax.jit(jax.vmap(one_seed))


def _place(arrays: Sequence[Any], devices: Sequence[Any]) -> list[jax.Array]:
    """Pad the leading (seed) axis to a multiple of the device count (repeating seed 0) and
    shard it over ``devices``."""
    mesh = Mesh(np.asarray(list(devices), dtype=object), ("seeds",))
    out = []
    for a in arrays:
        pad = (-a.shape[0]) % len(devices)
        if pad:
            a = jnp.concatenate([a, jnp.repeat(a[:1], pad, axis=0)])
        out.append(jax.device_put(a, NamedSharding(mesh, P("seeds"))))
    return out


def bench_env_steps(*, S: int, E: int, loop_seeds: int, repeats: int = 3,
                    variants: Sequence[str] = ("v1", "v2"), seed: int = 0
                    ) -> list[BenchResult]:
    """Rows ``resilient_ac.gridworld_steps``, one per variant (see the module docstring).

    Args:
        S: seeds (vmapped, sharded over devices), each with random targets.
        E: episodes per seed (20 steps each).
        loop_seeds: how many seeds the numpy loop runs (all E episodes of each).
        repeats: timed repeats of each side after the first call.
        variants: labels of :data:`VARIANTS`.
        seed: seeds the targets and the decentral side's keys.

    Returns:
        Rows with ``metric="time_s"`` for the whole S x E x 20 steps (numpy's time scaled from
        its rate) and, in ``extra``, the env steps per second: ``jax_steps_per_s`` (compiled),
        ``jax_steps_per_s_with_compile`` (first call), ``numpy_steps_per_s``.
    """
    loop_seeds = min(int(loop_seeds), int(S))
    if loop_seeds < 1:
        raise ValueError(f"loop_seeds must be >= 1; got {loop_seeds}.")
    devices = jax.devices()
    rows = []
    for label in variants:
        if label not in VARIANTS:
            raise ValueError(f"unknown variant {label!r}; use some of {list(VARIANTS)}.")
        version, collision = VARIANTS[label]
        env = grid_world(version, collision=collision)
        keys = jax.random.split(jax.random.key(seed), 2 * S)
        targets = jax.vmap(lambda k, env=env: random_targets(k, env))(keys[:S])
        placed = _place([keys[S:], targets], devices)
        f = jax_rollouts(env, E)
        t_jax, (pos0, actions, rewards) = measure(lambda f=f, placed=placed: f(*placed),
                                                  repeats)
        steps = S * E * env.horizon
        rdtype = str(rewards.dtype)
        pos0, actions = np.asarray(pos0)[:loop_seeds], np.asarray(actions)[:loop_seeds]
        rewards = np.asarray(rewards, np.float64)[:loop_seeds]
        tg = np.asarray(targets)[:loop_seeds]
        t_np, ref = measure(lambda v=version, c=collision, tg=tg, p=pos0, a=actions:
                            numpy_rollouts(v, c, tg, p, a), max(1, repeats // 2))
        loop_steps = loop_seeds * E * env.horizon
        jax_rate = steps / t_jax.median_s
        jax_rate_first = steps / t_jax.first_s
        np_rate = loop_steps / t_np.median_s
        np_time = steps / np_rate
        diff = float(np.abs(rewards - ref).max(initial=0.0))
        same_ints = bool(np.array_equal(np.rint(rewards * env.reward_scale),
                                        np.rint(ref * env.reward_scale)))
        tol = 1e-6
        rows.append(BenchResult(
            name="resilient_ac.gridworld_steps",
            variant=f"{label} ({version}, collision={collision}) vs numpy loop",
            dtype=rdtype,
            size=dict(S=S, E=E, T=env.horizon, N=env.num_agents, devices=len(devices)),
            metric="time_s", value=t_jax.median_s, compile_s=t_jax.compile_s,
            times_s=t_jax.times_s, repeats=repeats,
            reference="numpy class with a step method looping over agents (Python ints), "
                      "Python loops over seeds, episodes and steps, replaying the decentral "
                      f"side's initial positions and actions; timed on {loop_seeds} seed(s) "
                      f"x {E} episodes, its time for S x E x T steps scaled from its rate",
            reference_value=np_time, ratio=ratio(np_time, t_jax.median_s),
            reference_times_s=t_np.times_s,
            max_abs_diff=diff, agree=bool(same_ints and diff <= tol), tolerance=tol,
            prng_impl=str(jax.config.jax_default_prng_impl),
            enable_x64=bool(jax.config.jax_enable_x64),
            target_ratio=10.0,
            notes=f"target >= 10x; env steps/s: jax {jax_rate:,.0f} compiled, "
                  f"{jax_rate_first:,.0f} with "
                  f"compile ({jax_rate_first / np_rate:.1f}x); numpy {np_rate:,.0f}; compared "
                  f"on {loop_seeds} seed(s)",
            extra=dict(jax_steps_per_s=jax_rate, jax_steps_per_s_with_compile=jax_rate_first,
                       numpy_steps_per_s=np_rate, ratio_with_compile=jax_rate_first / np_rate,
                       jax_first_call_s=t_jax.first_s,
                       numpy_loop_s=t_np.median_s, loop_seeds=loop_seeds,
                       integer_rewards_identical=same_ints, env_steps=steps),
            reference_label="numpy env class loop"))
    return rows
