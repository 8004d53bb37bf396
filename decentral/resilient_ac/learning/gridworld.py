"""The cooperative-navigation grid world of the resilient actor-critic experiments.

Figura, Lin, Liu, Gupta, "Resilient Consensus-based Multi-agent Reinforcement Learning with
Function Approximation", arXiv:2111.06776, evaluate their method on a grid world in which five
agents each walk to their own target cell. The environment is only described in words in the
paper; the dynamics below follow the authors' code (repository
``mfigura/Resilient-consensus-based-MARL``), which has one grid per code version:

**v1** (commit ``61b07cf``, the arXiv v1 runs): 6 x 6 grid. Actions ``0 LEFT`` (col - 1),
``1 DOWN`` (row - 1), ``2 RIGHT`` (col + 1), ``3 UP`` (row + 1), ``4 STAY``, clipped at the
walls; all agents move at once. Agent i's reward is

    r^i = -( ||p^i_new - g^i||_1 + 1[some agent j != i has p^j_new = p^i_new] ) / 10,

so it lies in [-1.1, 0] (the largest distance on 6 x 6 is 10). The code's docstring speaks of
a collision penalty of half the distance reward; the code subtracts 1, and so do we.

**v2** (commit ``f10f863``): 5 x 5 grid. Actions as (d_row, d_col): ``0`` (0, 0) stay,
``1`` (-1, 0), ``2`` (+1, 0), ``3`` (0, -1), ``4`` (0, +1), clipped at the walls. Agents are
processed one after the other in index order and each agent's position is overwritten as soon
as it moves, so agent i sees agents j < i at their new cells and agents j > i at their old
ones. With d the distance to the target before the move and d' after it:

* ``collision="fixed"`` (default, the corrected rule): if no *other* agent is on the new cell,
  r^i = -d'; else if the agent stayed (action 0) on its target (d = 0), r^i = 0; else
  r^i = -d - 1.
* ``collision="as_coded"`` (as in the authors' code): the occupancy test also counts the agent
  itself, so the new cell is never free and the first branch never fires:
  r^i = 0 if d = 0 and a^i = 0, else -d - 1.

Rewards are divided by 5. In both versions agents may share cells and targets may coincide;
initial positions are uniform and independent per agent at every reset; an episode has a fixed
horizon of 20 steps (``done``, all agents on their targets, is only reported, and ``step``
never resets).

**Observation** (what every actor, critic and team-reward network sees): the positions
standardized per coordinate by the mean and population standard deviation of the coordinate
values 0..size-1 — (x - 2.5)/sqrt(35/12) on 6 x 6, (x - 2)/sqrt(2) on 5 x 5, so a uniform
position has mean 0 and standard deviation 1 — flattened agent-major ``[r0, c0, r1, c1, ...]``.
**Team-reward input** (:meth:`GridWorld.tr_input`): v1 the observation followed by the raw
integer joint action (10 + 5 numbers); v2 per agent ``[row, col, a^i]`` (normalized position,
raw action), flattened agent-major (5 x 3), as in the authors' code.

**Targets** are fixed per seed. The authors drew them with NumPy's generator, which JAX cannot
reproduce, so the targets of the logged runs are tabulated (:func:`paper_targets`); other seeds
draw uniform cells (:func:`random_targets`).

The environment is written in the style of gymnax: pure functions, explicit keys, the per-seed
data (:class:`GridParams`) apart from the static configuration (:class:`GridWorld`, hashable,
so it can be a static argument of ``jax.jit``), NamedTuple states, no Python branching on
traced values; the caller vmaps over seeds.

Example:
    >>> import jax, jax.numpy as jnp
    >>> env = grid_world("v1")
    >>> params = grid_params(env, 50)
    >>> obs, state = env.reset(jax.random.key(0), params)
    >>> obs.shape, state.pos.shape
    ((10,), (5, 2))
    >>> obs, state, rewards, done = env.step(jax.random.key(1), state,
    ...                                      jnp.full(5, 4, jnp.int32), params)
    >>> rewards.shape, int(state.t)
    ((5,), 1)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import check_indices, check_int
from decentral.datasets.figura2021 import LOGGED_SEEDS, LOGGED_TARGETS

__all__ = [
    "GridParams",
    "GridState",
    "GridWorld",
    "Trajectory",
    "VERSIONS",
    "COLLISION_RULES",
    "ACTION_DELTAS",
    "ACTION_NAMES",
    "PAPER_SEEDS",
    "grid_world",
    "paper_targets",
    "random_targets",
    "grid_params",
    "uniform_policy",
    "rollout",
]

#: The two code versions of the environment.
VERSIONS: tuple[str, ...] = ("v1", "v2")

#: The v2 collision rules: ``"fixed"`` (other agents only) and ``"as_coded"`` (self included).
COLLISION_RULES: tuple[str, ...] = ("fixed", "as_coded")

#: Displacement (d_row, d_col) of each action, per version.
ACTION_DELTAS: dict[str, tuple[tuple[int, int], ...]] = {
    "v1": ((0, -1), (-1, 0), (0, 1), (1, 0), (0, 0)),
    "v2": ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)),
}

#: Names of the actions, per version (v1 names are the authors'; v2 says the displacement).
ACTION_NAMES: dict[str, tuple[str, ...]] = {
    "v1": ("LEFT", "DOWN", "RIGHT", "UP", "STAY"),
    "v2": ("STAY", "ROW-1", "ROW+1", "COL-1", "COL+1"),
}

_SIZE = {"v1": 6, "v2": 5}
_REWARD_SCALE = {"v1": 10, "v2": 5}

PAPER_SEEDS = LOGGED_SEEDS
"""Seeds of the authors' logged runs, per version (the seeds :func:`paper_targets` knows):
:data:`decentral.datasets.figura2021.LOGGED_SEEDS`, re-exported."""


class GridParams(NamedTuple):
    """Per-seed data of the grid world (vmap it over seeds).

    Attributes:
        targets: int32 ``[N, 2]``, the (row, col) target of each agent.
    """

    targets: jax.Array


class GridState(NamedTuple):
    """State of one episode.

    Attributes:
        pos: int32 ``[N, 2]``, the (row, col) of each agent.
        t: int32 scalar, steps taken since the reset.
    """

    pos: jax.Array
    t: jax.Array


class Trajectory(NamedTuple):
    """One episode of :func:`rollout`.

    Attributes:
        obs: ``[T + 1, 2N]`` observations, the reset's first.
        actions: int32 ``[T, N]``.
        rewards: ``[T, N]`` scaled rewards.
        done: bool ``[T]``, all agents on their targets after the step.
        pos: int32 ``[T + 1, N, 2]`` positions, the reset's first.
    """

    obs: jax.Array
    actions: jax.Array
    rewards: jax.Array
    done: jax.Array
    pos: jax.Array


def _float_dtype() -> np.dtype:
    """The default float dtype (float32, or float64 when x64 is enabled)."""
    return jax.dtypes.canonicalize_dtype(np.float64)


def _is_traced(x: Any) -> bool:
    return isinstance(x, jax.core.Tracer)


def _check_int_array(x: Any, name: str, shape: tuple[int, ...], upper: int | None,
                     how: str) -> None:
    """Shape and dtype checks (always possible, also under jit); value checks when concrete."""
    xshape = tuple(np.shape(x))
    if xshape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {xshape}. {how}")
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    if not np.issubdtype(dtype, np.integer):
        raise ValueError(f"{name} must hold integers; got dtype {dtype}. {how}")
    if upper is not None and not _is_traced(x):
        v = np.asarray(x)
        if v.size and (v.min() < 0 or v.max() >= upper):
            raise ValueError(f"{name} must lie in 0..{upper - 1}; got values from {v.min()} "
                             f"to {v.max()}. {how}")


@dataclass(frozen=True)
class GridWorld:
    """Static configuration of the grid world (hashable: a valid ``jax.jit`` static argument).

    Build it with :func:`grid_world`. The dynamics, rewards and encodings are in the module
    docstring (Figura, Lin, Liu, Gupta, arXiv:2111.06776, as in the authors' code).

    Attributes:
        version: the code version, ``"v1"`` (6 x 6, simultaneous moves, ÷10) or ``"v2"``
            (5 x 5, sequential moves, ÷5); also readable as :attr:`code_version`.
        collision: v2's occupancy rule, ``"fixed"`` (default) or ``"as_coded"``; v1's code
            already leaves the agent itself out, so both names give the same v1 dynamics.
        num_agents: N (5 in the paper).
        horizon: steps per episode (20 in the paper); used by :func:`rollout`.
    """

    version: str = "v1"
    collision: str = "fixed"
    num_agents: int = 5
    horizon: int = 20

    def __post_init__(self) -> None:
        if self.version not in VERSIONS:
            raise ValueError(f"unknown grid-world version {self.version!r}; use one of "
                             f"{', '.join(repr(v) for v in VERSIONS)} (v1: 6x6 grid of the "
                             "arXiv v1 code, v2: 5x5 grid of the later code).")
        if self.collision not in COLLISION_RULES:
            raise ValueError(f"unknown collision rule {self.collision!r}; use 'fixed' (the "
                             "corrected occupancy test, other agents only) or 'as_coded' (the "
                             "authors' v2 code, which counts the agent itself).")
        object.__setattr__(self, "num_agents", check_int(self.num_agents, "num_agents"))
        object.__setattr__(self, "horizon", check_int(self.horizon, "horizon"))

    # --- derived configuration -----------------------------------------------------------

    @property
    def code_version(self) -> str:
        """The authors' code version this grid follows (``version``: ``"v1"`` / ``"v2"``)."""
        return self.version

    @property
    def size(self) -> int:
        """Side of the square grid (6 for v1, 5 for v2)."""
        return _SIZE[self.version]

    @property
    def num_actions(self) -> int:
        """Actions per agent (5)."""
        return len(ACTION_DELTAS[self.version])

    @property
    def reward_scale(self) -> int:
        """The raw integer reward is divided by this (10 for v1, 5 for v2)."""
        return _REWARD_SCALE[self.version]

    @property
    def obs_dim(self) -> int:
        """Length of an observation, 2N (10)."""
        return 2 * self.num_agents

    @property
    def tr_input_dim(self) -> int:
        """Length of a team-reward input, 3N (15) in both versions."""
        return 3 * self.num_agents

    @property
    def stay_action(self) -> int:
        """The action that keeps an agent in place (4 for v1, 0 for v2)."""
        return ACTION_DELTAS[self.version].index((0, 0))

    @property
    def coord_mean(self) -> float:
        """Mean of the coordinate values 0..size-1 ((size - 1) / 2)."""
        return (self.size - 1) / 2.0

    @property
    def coord_std(self) -> float:
        """Population standard deviation of 0..size-1 (sqrt((size^2 - 1) / 12))."""
        return math.sqrt((self.size ** 2 - 1) / 12.0)

    @property
    def action_deltas(self) -> jax.Array:
        """int32 ``[num_actions, 2]``: (d_row, d_col) of each action."""
        return jnp.asarray(ACTION_DELTAS[self.version], jnp.int32)

    # --- input checks --------------------------------------------------------------------

    def _check_pos(self, pos: Any, name: str = "state.pos") -> None:
        _check_int_array(pos, name, (self.num_agents, 2), self.size,
                         f"It holds one (row, col) cell of the {self.size}x{self.size} grid "
                         "per agent.")

    def _check_params(self, params: GridParams) -> None:
        if not isinstance(params, GridParams):
            raise ValueError(f"params must be a GridParams; got {type(params).__name__}. Build "
                             "it with grid_params(env, seed_or_targets).")
        self._check_pos(params.targets, "params.targets")

    def _check_actions(self, actions: Any) -> None:
        _check_int_array(actions, "actions", (self.num_agents,), self.num_actions,
                         f"Give one action index per agent, 0..{self.num_actions - 1} "
                         f"({', '.join(ACTION_NAMES[self.version])}). Under jit, values out "
                         "of range cannot be checked and are clamped to that range.")

    # --- the environment -----------------------------------------------------------------

    def reset(self, key: jax.Array, params: GridParams) -> tuple[jax.Array, GridState]:
        """Start an episode: each agent on a uniform cell, independently; ``t = 0``.

        Args:
            key: PRNG key (one draw of ``[N, 2]`` integers).
            params: the seed's :class:`GridParams`.

        Returns:
            ``(obs [2N], state)``.
        """
        self._check_params(params)
        pos = jax.random.randint(key, (self.num_agents, 2), 0, self.size, dtype=jnp.int32)
        state = GridState(pos=pos, t=jnp.zeros((), jnp.int32))
        return self.observation(state), state

    def transition(self, pos: jax.Array, actions: jax.Array, targets: jax.Array
                   ) -> tuple[jax.Array, jax.Array]:
        """The dynamics without scaling: ``(new_pos int32 [N, 2], raw_rewards int32 [N])``.

        The raw rewards are the integers of the module docstring (before ÷10 or ÷5). Concrete
        actions must be integers in ``0..num_actions-1`` (a float or bool, which ``int32`` would
        truncate, or an index out of range is refused); under jit, where they cannot be
        checked, an out-of-range action is clamped.

        Raises:
            ValueError: concrete actions that are not integer action indices.
        """
        if not isinstance(actions, jax.core.Tracer):
            acts = np.asarray(actions)
            if acts.dtype == np.bool_ or not np.issubdtype(acts.dtype, np.integer):
                raise ValueError(f"actions must be integer action indices "
                                 f"0..{self.num_actions - 1}; got dtype {acts.dtype}.")
            check_indices(acts, "actions", self.num_actions,
                          hint="Actions index the grid moves (0..num_actions-1).")
        pos = jnp.asarray(pos, jnp.int32)
        actions = jnp.clip(jnp.asarray(actions, jnp.int32), 0, self.num_actions - 1)
        targets = jnp.asarray(targets, jnp.int32)
        moves = self.action_deltas[actions]
        if self.version == "v1":
            return self._transition_v1(pos, moves, targets)
        return self._transition_v2(pos, moves, actions, targets)

    def _transition_v1(self, pos, moves, targets):
        new = jnp.clip(pos + moves, 0, self.size - 1)
        same_cell = jnp.all(new[:, None, :] == new[None, :, :], axis=-1)
        others = ~jnp.eye(self.num_agents, dtype=bool)
        collided = jnp.any(same_cell & others, axis=1)
        dist_next = jnp.sum(jnp.abs(new - targets), axis=1, dtype=jnp.int32)
        return new, -(dist_next + collided.astype(jnp.int32))

    def _transition_v2(self, pos, moves, actions, targets):
        agents = jnp.arange(self.num_agents)
        stay = self.stay_action
        count_self = self.collision == "as_coded"

        def agent(i, carry):                    # index order, positions overwritten in place
            pos, raw = carry
            dist = jnp.sum(jnp.abs(pos[i] - targets[i]), dtype=jnp.int32)
            cell = jnp.clip(pos[i] + moves[i], 0, self.size - 1)
            pos = pos.at[i].set(cell)
            here = jnp.all(pos == cell, axis=1)
            if not count_self:
                here = here & (agents != i)
            # as coded, `here` still counts agent i itself: the cell is never free
            free = ~jnp.any(here)
            dist_next = jnp.sum(jnp.abs(cell - targets[i]), dtype=jnp.int32)
            stayed_on_target = (dist == 0) & (actions[i] == stay)
            blocked = jnp.where(stayed_on_target, 0, -dist - 1)
            return pos, raw.at[i].set(jnp.where(free, -dist_next, blocked).astype(jnp.int32))

        return jax.lax.fori_loop(0, self.num_agents, agent,
                                 (pos, jnp.zeros(self.num_agents, jnp.int32)))

    def step(self, key: jax.Array, state: GridState, actions: jax.Array, params: GridParams
             ) -> tuple[jax.Array, GridState, jax.Array, jax.Array]:
        """One joint step.

        Args:
            key: PRNG key (unused: the dynamics are deterministic; kept for the usual
                signature).
            state: the current :class:`GridState`.
            actions: int32 ``[N]``, one action index per agent (encodings in the module
                docstring).
            params: the seed's :class:`GridParams`.

        Returns:
            ``(obs [2N], new_state, rewards [N] (scaled), done)``; ``done`` (every agent on
            its target) is only informative: episodes last ``horizon`` steps and ``step`` never
            resets.

        Raises:
            ValueError: wrong shapes or dtypes; out-of-range values when they are concrete.
        """
        del key
        self._check_pos(state.pos)
        self._check_params(params)
        self._check_actions(actions)
        pos, raw = self.transition(state.pos, actions, params.targets)
        rewards = raw.astype(_float_dtype()) / self.reward_scale
        done = jnp.all(pos == params.targets)
        new_state = GridState(pos=pos, t=jnp.asarray(state.t, jnp.int32) + 1)
        return self.observation(new_state), new_state, rewards, done

    def observation(self, state: GridState) -> jax.Array:
        """Standardized positions, flattened agent-major ``[r0, c0, r1, c1, ...]`` (``[2N]``)."""
        pos = jnp.asarray(state.pos)
        return self.normalize(pos).reshape(*pos.shape[:-2], -1)

    def normalize(self, coords: jax.Array) -> jax.Array:
        """``(x - coord_mean) / coord_std`` element-wise, in the default float dtype."""
        x = jnp.asarray(coords).astype(_float_dtype())
        return (x - self.coord_mean) / self.coord_std

    def tr_input(self, obs: jax.Array, actions: jax.Array) -> jax.Array:
        """Input of the team-reward network: ``[3N]`` (leading batch axes allowed).

        v1: ``obs`` followed by the raw integer joint action; v2: per agent
        ``[row, col, a^i]`` (normalized position, raw action), flattened agent-major.
        """
        obs = jnp.asarray(obs)
        actions = jnp.asarray(actions)
        n = self.num_agents
        if obs.shape[-1:] != (2 * n,) or actions.shape[-1:] != (n,) \
                or obs.shape[:-1] != actions.shape[:-1]:
            raise ValueError(f"tr_input needs obs [..., {2 * n}] and actions [..., {n}] with "
                             f"the same leading axes; got {obs.shape} and {actions.shape}.")
        a = actions.astype(obs.dtype)
        if self.version == "v1":
            return jnp.concatenate([obs, a], axis=-1)
        per_agent = jnp.concatenate([obs.reshape(*obs.shape[:-1], n, 2), a[..., None]], axis=-1)
        return per_agent.reshape(*obs.shape[:-1], 3 * n)


def grid_world(code_version: str | None = None, *, collision: str = "fixed",
               num_agents: int = 5, horizon: int = 20, version: str | None = None
               ) -> GridWorld:
    """The paper's grid world (Figura, Lin, Liu, Gupta, arXiv:2111.06776).

    Args:
        code_version: ``"v1"`` (6 x 6, the default) or ``"v2"`` (5 x 5), the two code versions
            of the authors' repository (not an algorithm's revision label); ``version=`` is
            its older name (give one of the two; :attr:`GridWorld.version` keeps it).
        collision: v2's occupancy test: ``"fixed"`` (default, the corrected rule) or
            ``"as_coded"`` (as in the authors' code, commit f10f863: the agent counts itself,
            so the free-cell reward never fires). Same dynamics for v1.
        num_agents: N (5 in the paper).
        horizon: steps per episode (20 in the paper).

    Example:
        >>> env = grid_world("v2", collision="as_coded")
        >>> env.size, env.reward_scale, env.obs_dim, env.tr_input_dim
        (5, 5, 10, 15)
    """
    if version is not None and code_version is not None:
        raise ValueError("give code_version= or its older name version=, not both.")
    code = version if version is not None else "v1" if code_version is None else code_version
    return GridWorld(version=code, collision=collision, num_agents=num_agents, horizon=horizon)


def _check_version(version: str) -> str:
    if version not in VERSIONS:
        raise ValueError(f"unknown grid-world version {version!r}; use one of "
                         f"{', '.join(repr(v) for v in VERSIONS)}.")
    return version


def paper_targets(version: str, seed: int) -> np.ndarray:
    """The targets of the authors' logged runs: int32 ``[5, 2]`` (row, col), agents 0..4.

    Args:
        version: ``"v1"`` (seeds 50, 100, 200, 500, 1000) or ``"v2"`` (seeds 100, 200, 300).
        seed: the run's seed.

    Raises:
        ValueError: a seed the table does not hold (use :func:`random_targets`).

    Example:
        >>> paper_targets("v2", 300).tolist()
        [[1, 1], [2, 2], [1, 3], [1, 1], [4, 2]]
    """
    _check_version(version)
    seed = check_int(seed, "seed", minimum=None)
    if (version, seed) not in LOGGED_TARGETS:
        raise ValueError(f"seed {seed} has no tabulated targets for {version}; the authors' "
                         f"{version} runs used seeds {list(PAPER_SEEDS[version])}. For other "
                         "seeds draw targets with random_targets(key, env), or call "
                         "grid_params(env, seed, allow_random=True).")
    return np.asarray(LOGGED_TARGETS[(version, seed)], np.int32)


def random_targets(key: jax.Array, env: GridWorld) -> jax.Array:
    """Targets for seeds outside the table: one uniform cell per agent, independently (targets
    may coincide, as in the paper). int32 ``[N, 2]``; vmap over keys for many seeds."""
    return jax.random.randint(key, (env.num_agents, 2), 0, env.size, dtype=jnp.int32)


def _targets_for_seed(env: GridWorld, seed: int, allow_random: bool) -> np.ndarray:
    seed = check_int(seed, "seed", minimum=None)
    if (env.version, seed) in LOGGED_TARGETS and env.num_agents == 5:
        return paper_targets(env.version, seed)
    if allow_random:
        return np.asarray(random_targets(jax.random.key(seed), env))
    if env.num_agents != 5:
        raise ValueError(f"the tabulated targets are for 5 agents; this env has "
                         f"{env.num_agents}. Pass targets, or allow_random=True.")
    return paper_targets(env.version, seed)          # raises the table's error


def grid_params(env: GridWorld, seed_or_targets: Any, *, allow_random: bool = False
                ) -> GridParams:
    """Build :class:`GridParams` from a seed, seeds, or targets.

    Args:
        env: the :class:`GridWorld`.
        seed_or_targets: an int seed (the tabulated targets of :func:`paper_targets`), a 1-D
            sequence of seeds (params stacked over seeds, ``targets [S, N, 2]``), targets
            ``[N, 2]``, or stacked targets ``[S, N, 2]``.
        allow_random: seeds outside the table get ``random_targets(jax.random.key(seed),
            env)`` instead of an error.

    Raises:
        ValueError: unknown seeds (unless ``allow_random``), targets of the wrong shape or
            dtype, or outside the grid.

    Example:
        >>> env = grid_world("v1")
        >>> grid_params(env, [50, 100]).targets.shape
        (2, 5, 2)
    """
    if not isinstance(env, GridWorld):
        raise ValueError(f"env must be a GridWorld (see grid_world()); got "
                         f"{type(env).__name__}.")
    if isinstance(seed_or_targets, numbers.Integral) and not isinstance(seed_or_targets, bool):
        return GridParams(jnp.asarray(_targets_for_seed(env, seed_or_targets, allow_random)))
    arr = np.asarray(seed_or_targets)
    if arr.ndim == 0:
        return GridParams(jnp.asarray(_targets_for_seed(env, seed_or_targets, allow_random)))
    if arr.ndim == 1:
        stacked = [_targets_for_seed(env, s, allow_random) for s in arr.tolist()]
        return GridParams(jnp.asarray(np.stack(stacked)))
    if arr.ndim not in (2, 3):
        raise ValueError(f"seed_or_targets must be a seed, a list of seeds, targets "
                         f"[{env.num_agents}, 2] or stacked targets [S, {env.num_agents}, 2]; "
                         f"got an array of shape {arr.shape}.")
    how = f"Targets are (row, col) cells of the {env.size}x{env.size} grid, one per agent."
    for k, t in enumerate(arr.reshape(-1, *arr.shape[-2:])):
        name = "targets" if arr.ndim == 2 else f"targets[{k}]"
        _check_int_array(t, name, (env.num_agents, 2), env.size, how)
    return GridParams(jnp.asarray(arr, jnp.int32))


def uniform_policy(env: GridWorld) -> Callable[[jax.Array, jax.Array], jax.Array]:
    """``policy(key, obs) -> actions [N]``: every agent picks a uniform action."""
    def policy(key, obs):
        del obs
        return jax.random.randint(key, (env.num_agents,), 0, env.num_actions, dtype=jnp.int32)
    return policy


def rollout(env: GridWorld, params: GridParams, key: jax.Array,
            policy_fn: Callable[[jax.Array, jax.Array], jax.Array],
            num_steps: int | None = None) -> Trajectory:
    """One episode: reset, then ``num_steps`` (default ``env.horizon``) steps of
    ``policy_fn(key, obs) -> actions [N]`` in a ``lax.scan``. jit- and vmap-able (vmap over
    ``params`` and ``key`` for many seeds).

    Keys: ``key`` splits into the reset key and the steps' key; the steps' key splits into a
    (policy, environment) pair of keys per step, all before the scan.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> env = grid_world("v2")
        >>> stay = lambda key, obs: jnp.zeros(5, jnp.int32)
        >>> traj = rollout(env, grid_params(env, 100), jax.random.key(0), stay)
        >>> traj.rewards.shape, traj.obs.shape
        ((20, 5), (21, 10))
    """
    num_steps = env.horizon if num_steps is None else check_int(num_steps, "num_steps")
    reset_key, steps_key = jax.random.split(key)
    obs0, state0 = env.reset(reset_key, params)

    def body(carry, keys):
        obs, state = carry
        actions = jnp.asarray(policy_fn(keys[0], obs), jnp.int32)
        obs2, state2, rewards, done = env.step(keys[1], state, actions, params)
        return (obs2, state2), (obs2, actions, rewards, done, state2.pos)

    _, (obs, actions, rewards, done, pos) = jax.lax.scan(
        body, (obs0, state0), jax.random.split(steps_key, (num_steps, 2)))
    return Trajectory(obs=jnp.concatenate([obs0[None], obs]), actions=actions, rewards=rewards,
                      done=done, pos=jnp.concatenate([state0.pos[None], pos]))
