"""A policy on arms as a runner :class:`~decentral.runner.Algorithm`, and :func:`evaluate`.

:func:`bandit_algorithm` is the environment: it owns the reward streams (counter-based, see
:mod:`~decentral.bandits.arms`), every agent's true pull counts ``n_{i,k}(t)`` and the regret
accumulators, and calls the policy's functions in the order of
:mod:`~decentral.bandits.policy`. One runner step ``t`` (0-based) is the iteration from ``t``
to ``t + 1``: decide ``a_i(t + 1)``, draw the reward of agent i's ``n_{i,a}(t)``-th pull of arm
``a`` (0-based, the initial pull being pull 0), observe, communicate.

**Regret** (Zhu et al., arXiv 2111.10933; Lai & Robbins 1985): the standard per-agent
pseudo-regret over the decisions ``t = 1..T``::

    R_i(T) = sum_{t=1}^T Delta_{i, a_i(t)} = sum_k Delta_{i,k} (n_{i,k}(T) - 1),

``n_{i,k}(T)`` counting the initial pull at ``t = 0``, whose cost ``sum_k Delta_{i,k}`` (the
initialisation cost) is reported separately. The paper's identity ``R_i(T) = sum_k Delta_k
E[n_{i,k}(T)]`` counts that cost too. Gaps come from the true means of the distributions
sampled (:meth:`~decentral.bandits.Arms.gaps`). Also recorded: the *realized* regret
``T mu*_i - sum_{t=1}^T X_{i,a_i(t)}(t)`` (Kahan-compensated sums), and on request the first
version's plotting metric (:func:`evaluate` ``running_average=True``).

Example:
    >>> from decentral.bandits import bernoulli, bandit_algorithm, ucb1
    >>> from decentral.runner import run
    >>> alg = bandit_algorithm(ucb1(), bernoulli([0.7, 0.4]), num_agents=3)
    >>> res = run(alg, ucb1().params, seeds=[0, 1], num_steps=50, record_every=50)
    >>> res.final_state.pulls.shape, int(res.final_state.pulls[0].sum())
    ((2, 3, 2), 156)
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import check_int

from .arms import FAMILIES, Arms
from .policy import Policy

__all__ = ["BanditState", "BanditInfo", "BanditRecord", "BanditResult", "BanditEnvironment",
           "BanditParams", "bandit_algorithm", "bandit_environment", "evaluate",
           "resolve_num_agents", "pseudo_regret", "default_record_steps", "seed_reward_key"]


class BanditState(NamedTuple):
    """State of a bandit run (one seed).

    Attributes:
        policy: the policy's state.
        pulls: int32 ``[N, M]`` ``n_{i,k}(t)``, the initial pull included (indexes the reward
            streams).
        realized_regret: ``[N]`` ``sum_{s=1}^t (mu*_i - X_{i,a_i(s)}(s))``.
        realized_carry: ``[N]`` its Kahan compensation.
        stream_keys: ``[N, M]`` keys of every (agent, arm) reward stream
            (:meth:`~decentral.bandits.Arms.stream_keys` of the seed's reward key, which is
            derived from the init key only); pull j of arm k by agent i uses
            ``fold_in(stream_keys[i, k], j)``.
        running_average: None, or ``(reward_sum, reward_carry, metric, metric_carry)`` ``[N]``
            each, the first version's plotting metric (:func:`evaluate`).
        gaps: None, or ``[N, M]`` ``Delta_{i,k}`` when the environment is read from params
            (:func:`bandit_algorithm` ``environment_in_params=True``, as in :func:`evaluate`):
            the record function computes the pseudo-regret from it (a constant of the run).
    """

    policy: Any
    pulls: jax.Array
    realized_regret: jax.Array
    realized_carry: jax.Array
    stream_keys: jax.Array
    running_average: Any = None
    gaps: Any = None


class BanditEnvironment(NamedTuple):
    """The environment's numbers as data (:func:`bandit_environment`), for
    :func:`bandit_algorithm` ``environment_in_params=True``.

    Attributes:
        arms: the arms' parameter tables (:meth:`~decentral.bandits.Arms.tables`).
        best_means: ``[N]`` ``mu*_i``.
        gaps: ``[N, M]`` ``Delta_{i,k}``.
        graphs: the graph sequence of the run as data (:func:`bandit_environment` puts the
            policy's :class:`~decentral.graphs.GraphSequence` here): any sequence of the
            structure the policy was built with can take its place, one compiled program for
            all of them (``check_params`` refuses another structure, weights that are not
            row-stochastic, and what the policy's ``validate_graphs`` refuses). None: the
            policy's own sequence, closed over (a constant of the program); always None for
            a policy without graphs.
    """

    arms: Any
    best_means: Any
    gaps: Any
    graphs: Any = None


class BanditParams(NamedTuple):
    """Params of a bandit algorithm built with ``environment_in_params=True``.

    Attributes:
        policy: the policy's params (what a sweep maps over).
        environment: the :class:`BanditEnvironment` (shared by every sweep entry).
    """

    policy: Any
    environment: BanditEnvironment


class BanditInfo(NamedTuple):
    """Per-step diagnostics (not fed back): ``arms`` int32 ``[N]`` pulled at ``t + 1`` and the
    ``rewards [N]`` received (record them with ``run(..., record_context=True)``)."""

    arms: jax.Array
    rewards: jax.Array


class BanditRecord(NamedTuple):
    """What :func:`evaluate` records at each record point.

    Attributes:
        regret: ``[N]`` pseudo-regret ``sum_k Delta_{i,k} (n_{i,k}(t) - 1)``.
        realized_regret: ``[N]``.
        running_average_regret: ``[N]`` or None.
        pulls: int32 ``[N, M]`` or None.
    """

    regret: jax.Array
    realized_regret: jax.Array
    running_average_regret: Any = None
    pulls: Any = None


class BanditResult(NamedTuple):
    """What :func:`evaluate` returns (numpy arrays; ``P`` only for a params sweep).

    Attributes:
        pulls: int ``[P?, S, N, M]`` ``n_{i,k}(T)``, the initial pull included.
        regret: ``[P?, S, N]`` standard pseudo-regret ``sum_k Delta_{i,k} (n_{i,k}(T) - 1)``.
        regret_path: ``[P?, S, R, N]`` the same at the record steps.
        realized_regret: ``[P?, S, N]`` ``T mu*_i - sum_{t=1}^T X_{i,a_i(t)}(t)``.
        realized_regret_path: ``[P?, S, R, N]``.
        record_steps: int ``[R]`` the ``t`` of each record (decisions made).
        initialization_cost: ``[N]`` ``sum_k Delta_{i,k}``, the cost of the ``t = 0`` round
            (not in ``regret``).
        gaps: ``[N, M]`` ``Delta_{i,k}`` from the true means. means: ``[N, M]`` true means.
        running_average_regret: None, or ``[P?, S, R, N]`` the first version's plotting
            metric ("paper parity", see :func:`evaluate`).
        pulls_path: None, or int ``[P?, S, R, N, M]`` (``record_pulls=True``).
        final_state: the :class:`BanditState` after ``T`` steps, leading axes ``[P?, S]``.
        seeds: ``[S]``. horizon: ``T``. params: the params run. policy: the policy's name.
    """

    pulls: np.ndarray
    regret: np.ndarray
    regret_path: np.ndarray
    realized_regret: np.ndarray
    realized_regret_path: np.ndarray
    record_steps: np.ndarray
    initialization_cost: np.ndarray
    gaps: np.ndarray
    means: np.ndarray
    running_average_regret: np.ndarray | None
    pulls_path: np.ndarray | None
    final_state: Any
    seeds: np.ndarray
    horizon: int
    params: Any
    policy: str

    @property
    def num_steps(self) -> int:
        """``T``, the runner's name for :attr:`horizon`."""
        return self.horizon


def resolve_num_agents(policy: Policy, arms: Arms, num_agents: int | None) -> int:
    """N from the explicit argument, the policy (its graph) or the arms (per-agent arms);
    1 when none of them fixes it.

    Raises:
        ValueError: they disagree, or ``num_agents`` is not a positive int.

    Example:
        >>> from decentral.bandits import bernoulli, ucb1
        >>> resolve_num_agents(ucb1(), bernoulli([0.1, 0.2]), None)
        1
    """
    given = {}
    if num_agents is not None:
        given["num_agents"] = check_int(num_agents, "num_agents")
    if policy.num_agents is not None:
        given[f"the policy {policy.name!r}"] = int(policy.num_agents)
    if arms.num_agents is not None:
        given["the per-agent arms"] = int(arms.num_agents)
    values = set(given.values())
    if len(values) > 1:
        raise ValueError("the number of agents disagrees: " + ", ".join(
            f"{k} has N = {v}" for k, v in given.items()) + ".")
    return values.pop() if values else 1


def pseudo_regret(pulls, gaps):
    """``sum_k Delta_{i,k} (n_{i,k} - 1)`` over the last axis: ``pulls [..., N, M]``,
    ``gaps [N, M]`` (numpy or JAX).

    Raises:
        ValueError: ``gaps`` is not ``[N, M]`` or ``pulls`` does not end in the same
            ``[N, M]`` (no broadcasting: gaps ``[N]`` with ``N = M`` would otherwise be read
            as one row of per-arm gaps shared by every agent).

    Example:
        >>> pseudo_regret(np.array([[3, 1]]), np.array([[0.0, 0.5]]))
        array([0.])
    """
    xp = jnp if isinstance(pulls, jax.Array) else np
    g = xp.asarray(gaps)
    shape, gshape = tuple(np.shape(pulls)), tuple(g.shape)
    if len(gshape) != 2 or len(shape) < 2 or shape[-2:] != gshape:
        raise ValueError(f"pseudo_regret needs gaps [N, M] and pulls [..., N, M] of the same "
                         f"N and M; got pulls of shape {shape} and gaps of shape {gshape} "
                         "(per-agent gaps: arms.gaps(N)).")
    return ((pulls - 1) * g).sum(axis=-1) if xp is np else \
        ((pulls - 1).astype(g.dtype) * g).sum(axis=-1)


def seed_reward_key(seed: int):
    """The reward key of ``seed`` in :func:`bandit_algorithm` runs: ``reward_key, _ =
    split(init_key)`` with the runner's init key of the seed
    (:func:`~decentral.runner.seed_keys`). With :meth:`~decentral.bandits.Arms.reward` it gives
    any reward of a run without running it (references, tests).

    Example:
        >>> from decentral.bandits import bernoulli
        >>> r = bernoulli([0.3, 0.6]).reward(seed_reward_key(0), 1, 0, 4)   # agent 1, arm 0
        >>> float(r) in (0.0, 1.0)
        True
    """
    from decentral.runner import seed_keys

    init_key, _ = seed_keys(seed)
    return jax.random.split(init_key)[0]


CPU_COMPILER_OPTIONS = {"xla_cpu_use_fusion_emitters": False}
"""XLA options of the bandit programs on CPU (:attr:`decentral.runner.Algorithm.
cpu_compiler_options`): XLA's older loop emitters. Measured on Dec_UCB (Theorem 2, 100 seeds,
N = 50, M = 10, T = 10^4, 2 CPU devices): the step program compiles in 1.1 s instead of 1.6 s
and the run takes 3.5 s instead of 4.0 s (the bandit step is threefry hashing, elementwise
max/select chains and one small matmul); the quick bandit claims give bit-identical numbers
with and without them. Bandits on sparse graphs (ER(N, 8/N), N = 50 and 200) run as fast
either way. Families whose step is dominated by gathers (sparse mixing) run 2.5-4.5x slower
with them, so this is the bandits' setting, not the runner's default."""


def _kahan(total, carry, x):
    y = x - carry
    new = total + y
    return new, (new - total) - y


def _float_dtype():
    """JAX's default float (float32 unless x64 is on), read without running an op."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))


def bandit_environment(policy: Policy, arms: Arms, num_agents: int | None = None
                       ) -> BanditEnvironment:
    """The :class:`BanditEnvironment` of ``policy`` playing ``arms`` (numpy arrays, floats in
    JAX's default float): what :func:`bandit_algorithm` ``environment_in_params=True`` reads
    from ``BanditParams.environment``.

    Example:
        >>> from decentral.bandits import bernoulli, ucb1
        >>> env = bandit_environment(ucb1(), bernoulli([0.7, 0.4]), num_agents=3)
        >>> env.gaps.shape, env.graphs is None
        ((3, 2), True)
    """
    _check_policy(policy)
    n = resolve_num_agents(policy, arms, num_agents)
    dt = _float_dtype()
    return BanditEnvironment(arms=arms.tables(dt),
                             best_means=np.asarray(arms.best_means(n), dt),
                             gaps=np.asarray(arms.gaps(n), dt), graphs=policy.graphs)


def _check_policy(policy) -> None:
    if not isinstance(policy, Policy):
        raise ValueError(f"policy must be a decentral.bandits.Policy (ucb1(), ucb(), kl_ucb(), "
                         f"...); got {type(policy).__name__}.")


def bandit_algorithm(policy: Policy, arms: Arms, *, num_agents: int | None = None,
                     running_average: bool = False, environment_in_params: bool = False):
    """The runner :class:`~decentral.runner.Algorithm` of ``policy`` playing ``arms``.

    State :class:`BanditState`, info :class:`BanditInfo`, params: the policy's params.
    ``init`` splits the seed's init key into the reward key (:func:`seed_reward_key`) and the
    policy's init key, derives the ``[N, M]`` stream keys, draws the initialisation round
    (pull 0 of every arm by every agent) and builds the policy's state from it. ``step`` splits
    the runner's step key into ``(graph_key, select_key, communicate_key)``; rewards never use
    it, so they depend on the seed and on (agent, arm, pull) only; the step's graph is
    ``graphs.at(t, graph_key)`` and the sequence decides whether the key is used. The
    Algorithm's name, config and graphs come from the policy's fields (see
    :class:`~decentral.bandits.Policy`).

    The params are checked wherever they arrive: ``run`` calls the Algorithm's
    ``check_params`` on every params it gets (each sweep entry separately), which calls the
    policy's ``validate`` (values, ranges, and the shapes the step would otherwise broadcast
    silently: one number where one is meant, ``[N]`` for per-agent constants) and, with
    ``environment_in_params``, checks the environment: its arrays' shapes, finite values,
    non-negative gaps, reward families the program evaluates, and its graphs (the structure
    the policy was built with, row-stochastic weights, the policy's ``validate_graphs``).
    Messages name the field (``params.policy.<field>``, ``params.environment.<field>``).

    Args:
        policy: a :class:`~decentral.bandits.Policy`.
        arms: an :class:`~decentral.bandits.Arms`.
        num_agents: N (see :func:`resolve_num_agents`).
        running_average: carry the first version's plotting metric (:func:`evaluate`).
        environment_in_params: False (default): the arms' parameters, the gaps and the graph's
            weights are closed over (constants of the compiled program). True: they are read
            from the params, which are then :class:`BanditParams` ``(policy params,``
            :func:`bandit_environment` ``)``: the traced program then holds only the
            *structure* (policy functions, N, M, the families present, the graph's form and
            shapes), and the runner's compile cache, keyed by the program, serves every graph
            and every arm parameter of the same shapes with one compilation
            (:func:`evaluate` runs this way). The state then carries the gaps
            (:attr:`BanditState.gaps`). The numbers are the same either way; so are they
            with ``params.environment.graphs = None`` (the policy's own graphs, closed over).

    Raises:
        ValueError: not a Policy / Arms, disagreeing agent counts.

    Example:
        >>> import decentral.graphs as g
        >>> from decentral.bandits import DecUCBParams, bernoulli, dec_ucb
        >>> from decentral.runner import run
        >>> pol = dec_ucb(g.ring(4, directed=False), theorem=2)
        >>> alg = bandit_algorithm(pol, bernoulli([0.7, 0.4]))
        >>> alg.name, alg.config["policy_config"]["theorem"]
        ('bandits.dec_ucb', 2)
        >>> try:                          # [M] = [2] constants: neither one number nor [N]
        ...     run(alg, DecUCBParams(np.array([3.0, 1.0])), seeds=[0], num_steps=10)
        ... except ValueError as exc:
        ...     print(str(exc)[:59])
        dec_ucb: params.exploration_constant must be a scalar or on
    """
    from decentral.runner import Algorithm

    _check_policy(policy)
    if not isinstance(arms, Arms):
        raise ValueError(f"arms must be a decentral.bandits.Arms (bernoulli(means), ...); got "
                         f"{type(arms).__name__}.")
    n = resolve_num_agents(policy, arms, num_agents)
    in_params = bool(environment_in_params)
    name, graphs, config = _from_policy(policy, in_params)
    m = arms.num_arms
    agent_ids = np.arange(n, dtype=np.int32)   # numpy: constants of the trace, no eager op
    arm_ids = np.arange(m, dtype=np.int32)
    env_template = bandit_environment(policy, arms, n) if in_params else None

    def check_params(params) -> None:
        if not in_params:
            policy.validate(params)
            return
        if not isinstance(params, BanditParams):
            raise ValueError(f"this bandit algorithm reads the environment from params "
                             f"(environment_in_params=True): pass BanditParams(policy params, "
                             f"bandit_environment(policy, arms, N)); got "
                             f"{type(params).__name__}.")
        try:
            policy.validate(params.policy)
        except ValueError as exc:       # the policy names its fields params.<field>
            raise ValueError(_POLICY_FIELD.sub("params.policy.", str(exc))) from exc
        _check_environment(params.environment, env_template, policy, arms)

    if in_params:
        def split(params):
            if not isinstance(params, BanditParams):
                raise ValueError(f"this bandit algorithm reads the environment from params "
                                 f"(environment_in_params=True): pass BanditParams(policy params, "
                                 f"bandit_environment(policy, arms, N)); got "
                                 f"{type(params).__name__}.")
            return params.policy, params.environment
    else:
        constants = bandit_environment(policy, arms, n)
        best_host = arms.best_means(n)

        def split(params):
            return params, constants

    def sampler(env):
        return arms.sampler(tables=env.arms) if in_params else arms.sampler()

    def best_means(env, dtype):
        return jnp.asarray(env.best_means if in_params else best_host, dtype)

    def graph_at(env, t, graph_key):
        if graphs is None:
            return None
        seq = graphs if not in_params or env.graphs is None else env.graphs   # static branch
        return seq.at(t, graph_key)                      # the sequence decides on the key

    def init(key, params) -> BanditState:
        policy_params, env = split(params)
        draw = sampler(env)
        reward_key, policy_key = jax.random.split(key)
        stream_keys = arms.stream_keys(reward_key, n, tables=env.arms if in_params else None)
        first = jax.vmap(draw)(stream_keys.reshape(-1), jnp.repeat(agent_ids, m),
                               jnp.tile(arm_ids, n), jnp.zeros((n * m,), jnp.int32))
        first = first.reshape(n, m)                                          # pull 0
        state = policy.init(policy_key, policy_params, first)
        zeros = jnp.zeros((n,), first.dtype)
        average = None
        if running_average:
            best = best_means(env, first.dtype)
            average = (zeros, zeros, 2 * best, zeros)
        gaps = jnp.asarray(env.gaps, first.dtype) if in_params else None
        return BanditState(state, jnp.ones((n, m), jnp.int32), zeros, zeros, stream_keys,
                           average, gaps)

    def step(key, state: BanditState, params, t, x_t):
        policy_params, env = split(params)
        draw = sampler(env)
        graph_key, select_key, communicate_key = jax.random.split(key, 3)
        graph = graph_at(env, t, graph_key)
        arms_t = policy.select(select_key, state.policy, policy_params, t, graph)
        if tuple(arms_t.shape) != (n,):
            raise ValueError(f"{policy.name}: select must return one arm per agent, int [N] = "
                             f"[{n}]; got shape {list(arms_t.shape)}.")
        arms_t = arms_t.astype(jnp.int32)
        pull_index = jnp.take_along_axis(state.pulls, arms_t[:, None], axis=1)[:, 0]
        keys = jnp.take_along_axis(state.stream_keys, arms_t[:, None], axis=1)[:, 0]
        rewards = jax.vmap(draw)(keys, agent_ids, arms_t, pull_index)
        local = policy.update(state.policy, policy_params, t, arms_t, rewards)
        new = local if policy.communicate is None else policy.communicate(
            communicate_key, state.policy, local, policy_params, t, graph)
        pulls = state.pulls + jax.nn.one_hot(arms_t, m, dtype=jnp.int32)
        dtype = state.realized_regret.dtype
        best = best_means(env, dtype)
        realized, carry = _kahan(state.realized_regret, state.realized_carry,
                                 best - rewards.astype(dtype))
        average = state.running_average
        if average is not None:
            total, total_carry, metric, metric_carry = average
            total, total_carry = _kahan(total, total_carry, rewards.astype(dtype))
            mean_so_far = total / (t + 3).astype(dtype)    # two leading zeros, t + 1 rewards
            metric, metric_carry = _kahan(metric, metric_carry, best - mean_so_far)
            average = (total, total_carry, metric, metric_carry)
        return (BanditState(new, pulls, realized, carry, state.stream_keys, average,
                            state.gaps), BanditInfo(arms_t, rewards))

    config.update({"arms": arms.digest() if not in_params else
                   {"families": [FAMILIES[c] for c in arms.structure()[0]],
                    "per_agent": arms.per_agent, "tables": list(arms.family.shape),
                    "parameters": "params"},
                   "num_agents": n, "running_average": bool(running_average)})
    if in_params:
        config["environment"] = "params"
    return Algorithm(init=init, step=step, name=name, version="1",
                     max_horizon=None if graphs is None else graphs.length, config=config,
                     cpu_compiler_options=CPU_COMPILER_OPTIONS, check_params=check_params)


#: ``params.<field>`` in a policy's messages (not preceded by a name or a dot).
_POLICY_FIELD = re.compile(r"(?<![\w.])params\.(?=\w)")


def _from_policy(policy: Policy, in_params: bool):
    """What the Algorithm takes from the policy, in one place: ``(name, graphs, config)``.

    The name is ``"bandits.<label>"``, the label the policy's name or, with the environment in
    params, its ``config["policy"]`` (``ucb()`` and ``ucb1()`` share their functions, so they
    run one program). The graphs are the policy's sequence (max horizon, default of
    ``params.environment.graphs``). The config records the label, the policy's version and
    config, and the graphs (digest; ``"params"`` when read from params).
    """
    label = str((policy.config or {}).get("policy", policy.name)) if in_params else policy.name
    graphs = policy.graphs
    config = {"policy": label, "policy_version": policy.version,
              "policy_config": dict(policy.config or {}),
              "graphs": None if graphs is None else
              ("params" if in_params else graphs.digest())}
    return f"bandits.{label}", graphs, config


def _check_environment(env, template: BanditEnvironment, policy: Policy, arms: Arms) -> None:
    """Refuse an environment the algorithm cannot run: arrays of other shapes than it was
    built for (the arms' tables, ``[N]`` best means, ``[N, M]`` gaps), non-finite values,
    negative gaps, reward families the program does not evaluate, and graphs of another
    structure, not row-stochastic, or refused by the policy's ``validate_graphs``."""
    if not isinstance(env, BanditEnvironment):
        raise ValueError(f"params.environment must be a BanditEnvironment "
                         f"(bandit_environment(policy, arms, N)); got {type(env).__name__}.")
    for field in ("arms", "best_means", "gaps"):
        want = jax.tree_util.tree_map(np.shape, getattr(template, field))
        got = jax.tree_util.tree_map(np.shape, getattr(env, field))
        if jax.tree_util.tree_structure(want) != jax.tree_util.tree_structure(got) or \
                jax.tree_util.tree_leaves(want) != jax.tree_util.tree_leaves(got):
            raise ValueError(f"params.environment.{field} has shapes {got}; the algorithm was "
                             f"built for {want} (build it with bandit_environment(policy, "
                             "arms, N) for the same N, M and reward families).")
    tables = env.arms
    for name, value in (("arms['first']", tables["first"]), ("arms['second']", tables["second"]),
                        ("best_means", env.best_means), ("gaps", env.gaps)):
        arr = np.asarray(value)
        if not np.issubdtype(arr.dtype, np.floating) or not np.all(np.isfinite(arr)):
            raise ValueError(f"params.environment.{name} must be finite floats; build the "
                             "environment with bandit_environment(policy, arms, N).")
    if np.any(np.asarray(env.gaps) < 0):
        raise ValueError("params.environment.gaps must be >= 0 (Delta_{i,k} = mu*_i - "
                         "mu_{i,k}); build them with arms.gaps(N).")
    family = np.asarray(tables["family"])
    codes = arms.structure()[0]
    if not np.issubdtype(family.dtype, np.integer) or not np.all(np.isin(family, codes)):
        raise ValueError(f"params.environment.arms['family'] must hold the family codes the "
                         f"algorithm evaluates {list(codes)} "
                         f"({[FAMILIES[c] for c in codes]}); build the arms with these "
                         "families (or Arms.with_extra_families) and the algorithm on them.")
    graphs = policy.graphs
    if graphs is None:
        if env.graphs is not None:
            raise ValueError("params.environment.graphs must be None: this policy does not "
                             "communicate.")
        return
    if env.graphs is None or env.graphs is graphs:        # the policy's own sequence
        return
    graphs.require_same_structure(env.graphs, name="params.environment.graphs")
    from decentral.graphs import require_stochastic_sequence

    require_stochastic_sequence(env.graphs, "row", who="params.environment.graphs")
    if policy.validate_graphs is not None:
        policy.validate_graphs(env.graphs)


@functools.cache
def _record_fn(running_average: bool, record_pulls: bool):
    """The record function of :func:`evaluate` (one per pair of flags, so the runner compiles
    once per layout): the pseudo-regret from the gaps the state carries."""

    def record(state: BanditState) -> BanditRecord:
        dtype = state.realized_regret.dtype
        regret = pseudo_regret(state.pulls, jnp.asarray(state.gaps, dtype))
        average = state.running_average[2] if running_average else None
        return BanditRecord(regret, state.realized_regret, average,
                            state.pulls if record_pulls else None)

    return record


def default_record_steps(horizon: int, points: int = 100) -> np.ndarray:
    """About ``points`` evenly spaced record steps in ``[1, horizon]``, ending at ``horizon``.

    Example:
        >>> default_record_steps(10, 4).tolist()
        [2, 5, 8, 10]
    """
    steps = np.unique(np.round(np.linspace(0, horizon, points + 1)).astype(np.int64))
    return steps[steps >= 1]


_RESERVED = ("record_fn", "record_context", "xs", "num_steps", "params")


def _sweep_in_axes(policy_params, environment, sweep):
    """The runner's ``sweep`` of the policy params (True, field names or an in_axes pytree)
    as an in_axes pytree of the :class:`BanditParams`: the environment is never swept."""
    from decentral.runner.plan import sweep_axes

    if sweep is False or sweep is None:
        return sweep
    _, (treedef, leaves), _ = sweep_axes(policy_params, sweep)
    return BanditParams(jax.tree_util.tree_unflatten(treedef, list(leaves)),
                        jax.tree_util.tree_map(lambda _: None, environment))


def _validated(policy: Policy, params, sweep):
    """``policy.validate`` on ``params`` (validate checks one params value), or on each sweep
    entry separately, the validated entries' swept leaves stacked again (so a sweep of ``P``
    scalars is ``[P]``, of ``P`` per-agent vectors ``[P, N]``). A sweep the runner will refuse
    (inconsistent or missing leading axes) is returned as it is, for the runner to explain."""
    if sweep is False or sweep is None:
        return policy.validate(params)
    from decentral.runner.plan import sweep_axes, sweep_entries

    _, (treedef, mapped), _ = sweep_axes(params, sweep)
    leaves = jax.tree_util.tree_leaves(params)
    sizes = {np.shape(leaf)[0] if np.ndim(leaf) else None
             for leaf, ax in zip(leaves, mapped, strict=True) if ax == 0}
    if len(sizes) != 1 or None in sizes or 0 in sizes:
        return params
    entries = []
    for i, entry in enumerate(sweep_entries(params, (treedef, mapped), sizes.pop())):
        try:
            entries.append(policy.validate(entry))
        except ValueError as exc:             # the runner's wording for a refused entry
            raise ValueError(f"params sweep entry {i}: {exc}") from exc
    flat = [jax.tree_util.tree_flatten(e) for e in entries]
    if any(len(f[0]) != len(mapped) for f in flat):
        return params
    stacked = [np.stack([np.asarray(f[0][k]) for f in flat]) if ax == 0 else flat[0][0][k]
               for k, ax in enumerate(mapped)]
    return jax.tree_util.tree_unflatten(flat[0][1], stacked)


def evaluate(policy: Policy, arms: Arms, num_steps: int | None = None, seeds=None, *,
             horizon: int | None = None, num_agents: int | None = None,
             params: Any = None, record_every: int | None = None, record_at=None,
             record_pulls: bool = False, running_average: bool = False,
             checkpoint_dir=None, **runner_options) -> BanditResult:
    """Run ``policy`` on ``arms`` for ``T = num_steps`` decisions after the initialisation
    round, on every seed, and return pulls and regret.

    A thin layer over :func:`~decentral.runner.run`: it builds
    :func:`bandit_algorithm` ``(policy, arms, environment_in_params=True)`` and its params,
    calls ``run`` once, and reads pulls and regret off the result (the same numbers as calling
    ``run`` yourself). **Compiles** once per program: the arms' parameters, the gaps and the
    graph are data, and the runner's compile cache is keyed by the traced program, so every
    run with the same policy functions, N, M, reward families, graph structure and params
    layout shares one compilation whatever the graph, the means and the horizon.

    Args:
        policy: a :class:`~decentral.bandits.Policy` (``ucb1()``, ``kl_ucb()``, ...).
        arms: an :class:`~decentral.bandits.Arms`.
        num_steps: ``T >= 1``, the runner's ``num_steps`` (one runner step is one decision
            of every agent): the decisions ``t = 1..T`` after the ``t = 0`` round; each agent
            pulls ``M + T`` times in all.
        horizon: the bandit literature's name for ``num_steps`` (an alias; give one of them).
        seeds: distinct integers in ``[0, 2**32)``; seed s gives the same reward streams to
            every policy.
        num_agents: N (default: fixed by the policy's graph or per-agent arms, else 1).
        params: the policy's params (default ``policy.params``, the papers' constants);
            checked by ``policy.validate`` (each sweep entry separately). With ``sweep=...``
            (a runner option) the swept leaves carry a leading axis ``P``; without it, a
            vector where one number is meant is refused (it would apply per arm).
        record_every: record every this many decisions (must divide ``T``); ``record_at``:
            the record steps themselves (e.g. :func:`~decentral.runner.log_spaced_steps`).
            Neither: about 100 evenly spaced points (:func:`default_record_steps`).
        record_pulls: also record ``n_{i,k}(t)`` at each record point.
        running_average: also record the first version's plotting metric ("paper parity",
            the authors' ``Dec_UCB.py`` in csasmith/vip-mab): with ``S(t)`` the sum of an
            agent's rewards at decisions ``1..t``, ``A(t) = 2 mu* + sum_{u=1}^t (mu* - S(u) /
            (u + 2))`` — the cumulative sum of ``mu*`` minus the running average reward, over a
            reward list that starts with two zeros for the initialisation (the authors' curve
            at index ``t + 1``; its last point, for ``T_code`` loop steps, is ``t = T_code - 1``).
            Not a regret in the standard sense; ``mu*`` is the true best mean.
        checkpoint_dir: checkpoint and resume (see :func:`~decentral.runner.run`).
        **runner_options: passed to :func:`~decentral.runner.run` (``chunk_size``,
            ``progress``, ``devices``, ``sweep``, ``record_initial``, ``on_divergence``, ...).

    Returns:
        A :class:`BanditResult`.

    Raises:
        ValueError: a horizon below 1 (no decision after the initial pulls), invalid params
            (e.g. a NaN or negative ``exploration_alpha``), disagreeing agent counts, runner
            options that :func:`evaluate` sets itself, and the runner's own checks.

    Example:
        >>> from decentral.bandits import bernoulli, ucb1
        >>> res = evaluate(ucb1(), bernoulli([0.9, 0.6, 0.5]), horizon=100, seeds=[0, 1],
        ...                num_agents=4, record_every=50)
        >>> res.regret.shape, res.regret_path.shape, res.record_steps.tolist()
        ((2, 4), (2, 2, 4), [50, 100])
        >>> res.initialization_cost.round(12).tolist()     # sum_k Delta_k per agent
        [0.7, 0.7, 0.7, 0.7]
    """
    from decentral.runner import run

    _check_policy(policy)
    if num_steps is not None and horizon is not None:
        raise ValueError("give num_steps or its alias horizon, not both.")
    horizon = num_steps if horizon is None else horizon
    if horizon is None or seeds is None:
        raise ValueError("evaluate needs num_steps (or horizon) and seeds, e.g. "
                         "evaluate(policy, arms, 1000, seeds=range(8)).")
    if isinstance(horizon, bool) or not isinstance(horizon, int | np.integer) or horizon < 1:
        raise ValueError(f"num_steps (horizon) must be an integer T >= 1 (the decisions t = 1..T "
                         f"after the M initial pulls at t = 0); got {horizon!r}.")
    horizon = int(horizon)
    bad = [k for k in runner_options if k in _RESERVED]
    if bad:
        raise ValueError(f"evaluate sets {bad} itself; use run(bandit_algorithm(...), ...) for "
                         "a custom record function or inputs.")
    if record_every is not None and record_at is not None:
        raise ValueError("give either record_every or record_at, not both.")
    checked = _validated(policy, policy.params if params is None else params,
                         runner_options.get("sweep"))
    alg = bandit_algorithm(policy, arms, num_agents=num_agents,
                           running_average=running_average, environment_in_params=True)
    n = alg.config["num_agents"]
    gaps = arms.gaps(n)
    if record_every is None and record_at is None:
        record_at = default_record_steps(horizon)
    record = _record_fn(bool(running_average), bool(record_pulls))
    environment = bandit_environment(policy, arms, n)
    if "sweep" in runner_options:
        runner_options["sweep"] = _sweep_in_axes(checked, environment, runner_options["sweep"])
    full = BanditParams(checked, environment)
    res = run(alg, full, seeds, horizon, record_every=1 if record_every is None else
              record_every, record_at=record_at, record_fn=record,
              checkpoint_dir=checkpoint_dir, **runner_options)
    final = res.final_state
    pulls = np.asarray(final.pulls)
    return BanditResult(
        pulls=pulls,
        regret=pseudo_regret(pulls.astype(np.int64), gaps),
        regret_path=np.asarray(res.records.regret),
        realized_regret=np.asarray(final.realized_regret),
        realized_regret_path=np.asarray(res.records.realized_regret),
        record_steps=res.record_steps,
        initialization_cost=gaps.sum(axis=1),
        gaps=gaps,
        means=arms.true_means(n),
        running_average_regret=None if not running_average else
        np.asarray(res.records.running_average_regret),
        pulls_path=None if not record_pulls else np.asarray(res.records.pulls),
        final_state=final,
        seeds=res.seeds,
        horizon=horizon,
        params=checked,
        policy=policy.name,
    )
