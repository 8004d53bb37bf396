"""The grid-world learner of resilient projection-based consensus actor-critic (Figura, Lin,
Liu, Gupta, arXiv:2111.06776) as a runner ``Algorithm``: one runner step is one update
(collect episodes, consensus epochs, one actor step; :mod:`decentral.resilient_ac.learning`).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import check_indices, check_int

from ..attackers import Attacker
from .gridworld import GridParams, GridWorld, grid_world
from .mlp import (
    AGENT_TYPES,
    COOPERATIVE,
    Batch,
    LearningProtocol,
    Nets,
    Variant,
    _check_agent_types,
    actor_deltas,
    adam_init,
    apply,
    consensus_epoch,
    get_protocol,
    get_variant,
    init_nets,
    mlp_actor_step,
    value,
)
from .topology import _check_in_nodes

__all__ = ["ADVERSARY", "HYPERPARAMS", "LearnParams", "LearnerState", "EpisodeMetrics",
           "collect_episodes", "learner"]

ADVERSARY = 4
"""The adversarial agent of the paper's runs."""

#: Hyperparameters of the logged runs (both versions): critic / team-reward SGD rate, actor
#: Adam rate, discount, exploration probability.
HYPERPARAMS: dict[str, float] = {"critic_lr": 0.01, "actor_lr": 0.002, "gamma": 0.9,
                                 "epsilon": 0.05}


def _graphs_alias(graphs, graph):
    """``graphs``, or its older keyword ``graph`` (never both); default ``"paper"``."""
    if graph is not None:
        if graphs is not None:
            raise ValueError("give graphs= or its older name graph=, not both.")
        return graph
    return "paper" if graphs is None else graphs


def _version_alias(code_version, version):
    """``code_version``, or its older keyword ``version`` (never both); default ``"v1"``."""
    if version is not None:
        if code_version is not None:
            raise ValueError("give code_version= or its older name version=, not both.")
        return version
    return "v1" if code_version is None else code_version


# ------------------------------------------------------------------------------------------
# params, state, episodes
# ------------------------------------------------------------------------------------------


class LearnParams(NamedTuple):
    """The data of one run (the runner sweeps the grid over them). Checked wherever it
    arrives: the learner's ``check_params`` (which :func:`~decentral.runner.run` calls on
    every run's params, each swept value separately) refuses every field below that breaks its
    contract, with the field named.

    Attributes:
        H: int32 scalar >= 0, in-neighbours the aggregation tolerates (0: plain mean); an
            integer, never a bool or a float (which would be truncated).
        agent_type: int32 ``[A]`` (:data:`~decentral.resilient_ac.learning.mlp.AGENT_TYPES` codes);
            adversarial codes only in the learner's ``adversary_slots``, at least one
            cooperative agent.
        oracle: bool scalar, cooperative agents fit ``r_coop`` instead of their own reward.
        targets: int32 ``[A, 2]`` grid targets, cells of the grid.
        seed: uint32 scalar, the experiment seed (distinct integers in [0, 2**32), checked by
            :func:`decentral.runner.validate_seeds` in :func:`run_runs`), folded into every
            key of the run.
        phase: int32 scalar >= 0, folded into the keys (v2's second phase draws afresh).
        warm: bool scalar, start from ``start_nets`` instead of fresh networks.
        start_nets: :class:`~decentral.resilient_ac.learning.mlp.Nets` to warm-start from
            (the shapes of the learner's networks, also when ``warm`` is False).
        in_nodes: int32 ``[P, A, K]`` in-node tables (own index first, indices in range).
        critic_lr, actor_lr: finite rates > 0; gamma: the discount in ``[0, 1)``; epsilon:
            the exploration probability in ``[0, 1]`` (:data:`HYPERPARAMS`).
    """

    H: Any
    agent_type: Any
    oracle: Any
    targets: Any
    seed: Any
    phase: Any
    warm: Any
    start_nets: Any
    in_nodes: Any
    critic_lr: Any
    actor_lr: Any
    gamma: Any
    epsilon: Any


class LearnerState(NamedTuple):
    """State of one run between updates.

    Attributes:
        nets: all agents' networks (:class:`~decentral.resilient_ac.learning.mlp.Nets`).
        actor_opt: Adam state of each actor, stacked over agents.
        buffer: the previous collection (v2 replay buffer) or None (v1).
        has_buffer: bool, ``buffer`` holds real transitions.
    """

    nets: Nets
    actor_opt: Any
    buffer: Any
    has_buffer: Any


class EpisodeMetrics(NamedTuple):
    """Per-episode numbers (leading axes as the caller's).

    Attributes:
        coop_return: mean discounted return of the cooperative agents ("True").
        adversary_return: mean discounted return of the adversaries (0 if none).
        estimate: mean over cooperative agents of ``V_i(s_0)`` ("Estimated", Est).
    """

    coop_return: Any
    adversary_return: Any
    estimate: Any


def collect_episodes(key, env: GridWorld, actors, critics, agent_type, targets, n_episodes: int,
                     epsilon, gamma):
    """``n_episodes`` episodes of the current policies (vmapped; each a ``lax.scan`` over the
    horizon).

    Args:
        key: PRNG key.
        env: the grid world.
        actors, critics: :class:`~decentral.resilient_ac.learning.mlp.MLP` stacked over agents.
        agent_type: int32 ``[A]``.
        targets: int32 ``[A, 2]``.
        n_episodes: static.
        epsilon: exploration probability (uniform action instead of the policy's).
        gamma: discount of the recorded returns.

    Returns:
        ``(batch, metrics, returns)``: the transitions flattened to ``B = n_episodes *
        horizon`` (:class:`~decentral.resilient_ac.learning.mlp.Batch`), :class:`EpisodeMetrics`
        ``[n_episodes]``, and the per-agent discounted returns ``[n_episodes, A]``.
    """
    params = GridParams(jnp.asarray(targets, jnp.int32))
    A, T, nA = env.num_agents, env.horizon, env.num_actions
    coop = (agent_type == COOPERATIVE).astype(jnp.result_type(float))
    n_coop = jnp.maximum(jnp.sum(coop), 1.0)
    n_adv = jnp.sum(1.0 - coop)

    def episode(k):
        k_reset, k_steps = jax.random.split(k)
        obs0, state0 = env.reset(k_reset, params)
        v0 = jax.vmap(value, in_axes=(0, None))(critics, obs0)
        est = jnp.sum(coop * v0) / n_coop

        def step(carry, ks):
            obs, state = carry
            k_pol, k_explore, k_uniform = jax.random.split(ks, 3)
            logits = jax.vmap(apply, in_axes=(0, None))(actors, obs)          # [A, nA]
            a_pol = jax.random.categorical(k_pol, logits, axis=-1)
            explore = jax.random.bernoulli(k_explore, epsilon, (A,))
            a_uni = jax.random.randint(k_uniform, (A,), 0, nA)
            actions = jnp.where(explore, a_uni, a_pol).astype(jnp.int32)
            nobs, nstate, rewards, _ = env.step(ks, state, actions, params)
            return (nobs, nstate), (obs, nobs, actions, rewards)

        _, (obs, nobs, actions, rewards) = jax.lax.scan(step, (obs0, state0),
                                                        jax.random.split(k_steps, T))
        discount = gamma ** jnp.arange(T, dtype=rewards.dtype)
        returns = discount @ rewards                                          # [A]
        return obs, nobs, actions, rewards, returns, est

    obs, nobs, actions, rewards, returns, est = jax.vmap(episode)(
        jax.random.split(key, n_episodes))
    B = n_episodes * T
    obs, nobs = obs.reshape(B, -1), nobs.reshape(B, -1)
    actions, rewards = actions.reshape(B, A), rewards.reshape(B, A)
    batch = Batch(obs, nobs, actions, rewards, env.tr_input(obs, actions))
    coop_ret = returns @ coop / n_coop
    adv_ret = jnp.where(n_adv > 0, returns @ (1.0 - coop) / jnp.maximum(n_adv, 1.0), 0.0)
    return batch, EpisodeMetrics(coop_ret, adv_ret, est), returns


# ------------------------------------------------------------------------------------------
# the learner (one runner step = one update)
# ------------------------------------------------------------------------------------------


def _concat_batches(a: Batch, b: Batch) -> Batch:
    return jax.tree_util.tree_map(lambda x, y: jnp.concatenate([x, y], axis=0), a, b)


def learner(code_version: str | LearningProtocol | None = None,
            variant: str | Variant = "corrected", *, collision: str | None = None,
            num_agents: int = 5, adversary_slots: tuple[int, ...] = (ADVERSARY,),
            attacker: Attacker | None = None, version: str | LearningProtocol | None = None):
    """The training loop of one run as a runner :class:`~decentral.runner.Algorithm` (cached
    for the default attacker: the same arguments give the same object, so the runner compiles
    once).

    ``init(key, params: LearnParams) -> LearnerState`` draws fresh networks (v1: shared critic
    and team-reward templates) or takes ``params.start_nets``; ``step(key, state, params, t,
    None) -> (state, EpisodeMetrics [n_ep_fixed])`` is one update (module docstring).

    **One runner step is one update** ("time is ``num_steps`` everywhere"): the collection of
    ``protocol.episodes_per_update`` episodes, ``protocol.epochs`` consensus epochs and one
    actor step. A run of ``E`` episodes is ``run(alg, params, seeds, E //
    episodes_per_update)``; ``t`` is the update index (graph ``params.in_nodes[t % P]``), and
    each record holds the metrics of that update's ``episodes_per_update`` episodes.

    The graphs are data (``params.in_nodes``, built by :func:`resolve_graph` in
    :func:`run_runs`), so the learner has no graph argument; every run's params are checked by
    its ``check_params`` (:class:`LearnParams`).

    Args:
        code_version: ``"v1"`` / ``"v2"`` (the authors' code version:
            :class:`~decentral.resilient_ac.learning.mlp.LearningProtocol`) or a protocol; default
            ``"v1"``. ``version=`` is its older name (give one of the two).
        variant: ``"corrected"`` (default), ``"faithful"``, a label or a
            :class:`~decentral.resilient_ac.learning.mlp.Variant`.
        collision: the grid world's occupancy rule (default: the variant's).
        num_agents: A.
        adversary_slots: agents that may be adversarial (adversary-only fits run for them
            only; ``agent_type`` must be cooperative elsewhere).
        attacker: what the adversarial agents send in each consensus epoch (default: the
            experiments' greedy / faulty / malicious agents,
            :func:`~decentral.resilient_ac.learning.mlp.learning_adversaries`; any attacker of the
            contract of :func:`~decentral.resilient_ac.learning.mlp.consensus_epoch`). Its
            params are its own (not swept; checked here by its ``check_params``); the agents'
            actors learn from the critic rows it keeps.
    """
    code_version = _version_alias(code_version, version)
    if attacker is not None and not isinstance(attacker, Attacker):
        raise ValueError(f"attacker must be a resilient_ac.Attacker; got "
                         f"{type(attacker).__name__}.")
    slots = check_indices(adversary_slots, "adversary_slots",
                          check_int(num_agents, "num_agents"), unique=True,
                          hint="adversary_slots lists agent indices, e.g. (4,).")
    if attacker is None:
        return _learner(code_version, variant, collision, num_agents, slots, None)
    attacker.validate_params(None, name="attacker.params")
    return _learner.__wrapped__(code_version, variant, collision, num_agents, slots, attacker)


def _real_scalar(x, name: str) -> float:
    """``x`` as a float after checking it is one real number (not a bool, not an array)."""
    arr = np.asarray(x)
    if arr.ndim != 0 or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be one real number; got {x!r}.")
    return float(arr)


def _check_positive_finite(x, name):
    v = _real_scalar(x, name) if not isinstance(x, bool) else math.nan
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite positive number; got {x!r}.")
    return v


def _check_gamma(x, name: str = "gamma") -> float:
    v = _real_scalar(x, name) if not isinstance(x, bool) else math.nan
    if not 0.0 <= v < 1.0:
        raise ValueError(f"{name} (the discount) must lie in [0, 1); got {x!r}.")
    return v


def _check_epsilon(x, name: str = "epsilon") -> float:
    v = _real_scalar(x, name) if not isinstance(x, bool) else math.nan
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} (exploration probability) must lie in [0, 1]; got {x!r}.")
    return v


def _check_H(H, name: str = "H"):
    if np.ndim(H) != 0:
        raise ValueError(f"{name} must be one non-negative int per run (0 = plain mean, the "
                         f"non-resilient baseline); got shape {np.shape(H)}.")
    if isinstance(H, np.ndarray):
        H = H[()]
    if isinstance(H, bool | np.bool_) or not isinstance(H, (int, np.integer)) or H < 0:
        raise ValueError(f"{name} must be a non-negative int (0 = plain mean, the "
                         f"non-resilient baseline); got {H!r}.")
    return int(H)


def _scalar_of(x, name: str, kind: str):
    """One value of ``kind`` (``"bool"`` or ``"int"``) from ``x`` (a 0-d array or scalar)."""
    arr = np.asarray(x)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be one {kind} per run; got shape {arr.shape}.")
    if kind == "bool":
        if arr.dtype != np.bool_:
            raise ValueError(f"{name} must be a bool; got {x!r} (dtype {arr.dtype}).")
        return bool(arr)
    return check_int(arr, name, minimum=0)


def _check_learn_params(params, env: GridWorld, slots: tuple, template) -> None:
    """The learner's ``check_params``: every field of :class:`LearnParams` (one run)."""
    if not isinstance(params, LearnParams):
        raise ValueError(f"params must be LearnParams (see run_runs); got "
                         f"{type(params).__name__}.")
    A = env.num_agents
    _check_H(params.H, "params.H")
    types = np.asarray(params.agent_type)
    if types.shape != (A,) or types.dtype == np.bool_ or \
            not np.issubdtype(types.dtype, np.integer):
        raise ValueError(f"params.agent_type must be integer codes [A = {A}] "
                         f"({AGENT_TYPES}); got shape {types.shape}, dtype {types.dtype}.")
    unknown = sorted(set(types.tolist()) - set(AGENT_TYPES.values()))
    if unknown:
        raise ValueError(f"params.agent_type holds unknown codes {unknown}; use "
                         f"{AGENT_TYPES}.")
    try:
        _check_agent_types(types, slots)
    except ValueError as exc:
        raise ValueError(f"params.agent_type: {exc}") from None
    if not np.any(types == COOPERATIVE):
        raise ValueError("params.agent_type: at least one agent must be cooperative.")
    _scalar_of(params.oracle, "params.oracle", "bool")
    env._check_params(GridParams(params.targets))
    seed = _scalar_of(params.seed, "params.seed", "int")
    seed_dtype = np.asarray(params.seed).dtype
    if seed > 2**32 - 1 or (np.issubdtype(seed_dtype, np.signedinteger)
                            and seed > 2**31 - 1):
        raise ValueError(f"params.seed must lie in [0, 2**32) and be stored unsigned "
                         f"(np.uint32) above 2**31 - 1; got {seed} ({seed_dtype}).")
    _scalar_of(params.phase, "params.phase", "int")
    _scalar_of(params.warm, "params.warm", "bool")
    want = jax.tree_util.tree_structure(template)
    if jax.tree_util.tree_structure(params.start_nets) != want:
        raise ValueError(f"params.start_nets must be Nets of the learner's networks; got "
                         f"{jax.tree_util.tree_structure(params.start_nets)}.")
    for (path, leaf), tmpl in zip(jax.tree_util.tree_flatten_with_path(params.start_nets)[0],
                                  jax.tree_util.tree_leaves(template), strict=True):
        if tuple(np.shape(leaf)) != tuple(tmpl.shape):
            raise ValueError(f"params.start_nets{jax.tree_util.keystr(path)} must have shape "
                             f"{tuple(tmpl.shape)} (the learner's networks); got "
                             f"{tuple(np.shape(leaf))}.")
    _check_in_nodes(params.in_nodes, A, "params.in_nodes")
    _check_positive_finite(params.critic_lr, "params.critic_lr")
    _check_positive_finite(params.actor_lr, "params.actor_lr")
    _check_gamma(params.gamma, "params.gamma")
    _check_epsilon(params.epsilon, "params.epsilon")


@functools.lru_cache(maxsize=32)
def _learner(version, variant, collision, num_agents, slots, attacker):
    from decentral.runner import Algorithm

    protocol = get_protocol(version)
    var = get_variant(protocol.version, variant)
    env = grid_world(protocol.version, collision=collision or var.collision,
                     num_agents=num_agents)
    n_ep = protocol.episodes_per_update
    template = jax.eval_shape(lambda: init_nets(jax.random.key(0), env.num_agents, env.obs_dim,
                                                env.tr_input_dim, env.num_actions,
                                                protocol.width, protocol.shared_templates))

    def check_params(params) -> None:
        _check_learn_params(params, env, slots, template)

    def keys_of(key, params):
        key = jax.random.fold_in(jax.random.fold_in(key, params.seed), params.phase)
        return key

    def init(key, params: LearnParams) -> LearnerState:
        key = keys_of(key, params)
        fresh = init_nets(key, env.num_agents, env.obs_dim, env.tr_input_dim, env.num_actions,
                          protocol.width, protocol.shared_templates)
        nets = jax.tree_util.tree_map(lambda a, b: jnp.where(params.warm, a, b),
                                      params.start_nets, fresh)
        opt = jax.vmap(adam_init)(nets.actor)
        if protocol.buffer_collections > 1:
            B = n_ep * env.horizon
            f = jnp.result_type(float)
            buffer = Batch(jnp.zeros((B, env.obs_dim), f), jnp.zeros((B, env.obs_dim), f),
                           jnp.zeros((B, env.num_agents), jnp.int32),
                           jnp.zeros((B, env.num_agents), f),
                           jnp.zeros((B, env.tr_input_dim), f))
        else:
            buffer = None
        return LearnerState(nets, opt, buffer, jnp.zeros((), bool))

    def step(key, state: LearnerState, params: LearnParams, t, x_t):
        del x_t
        # host arrays (params held fixed under vmap) indexed by traced values need JAX arrays
        params = jax.tree_util.tree_map(jnp.asarray, params)
        key = keys_of(key, params)
        k_collect, k_epochs, k_actor = jax.random.split(key, 3)
        nets = state.nets
        batch, metrics, _ = collect_episodes(k_collect, env, nets.actor, nets.critic,
                                             params.agent_type, params.targets, n_ep,
                                             params.epsilon, params.gamma)
        if protocol.buffer_collections > 1:
            old = jax.tree_util.tree_map(lambda a, b: jnp.where(state.has_buffer, a, b),
                                         state.buffer, batch)
            train = _concat_batches(old, batch)
        else:
            train = batch
        table = params.in_nodes[t % params.in_nodes.shape[0]]

        def epoch(n, k):
            return consensus_epoch(k, n, train, params.agent_type, table, params.H,
                                   params.oracle, params.critic_lr, params.gamma, protocol,
                                   var, slots, attacker=attacker, t=t), None

        nets, _ = jax.lax.scan(epoch, nets, jax.random.split(k_epochs, protocol.epochs))
        deltas = actor_deltas(nets, batch, params.agent_type, params.gamma)
        actors, opt = mlp_actor_step(k_actor, nets.actor, state.actor_opt, batch, deltas,
                                     params.agent_type, params.actor_lr,
                                     protocol.adversary_actor_batch)
        nets = nets._replace(actor=actors)
        buffer = batch if protocol.buffer_collections > 1 else None
        return LearnerState(nets, opt, buffer, jnp.ones((), bool)), metrics

    config = {"protocol": protocol.__dict__, "variant": var.__dict__,
              "env": {"version": env.version, "collision": env.collision,
                      "num_agents": env.num_agents, "horizon": env.horizon},
              "adversary_slots": list(slots)}
    if attacker is not None:
        from decentral.runner.fingerprint import hash_tree

        config["attacker"] = {"name": attacker.name, "params": hash_tree(attacker.params)}
    return Algorithm(init=init, step=step, name=f"rpbcac.{protocol.version}.{var.name}",
                     version="1", config=config, check_params=check_params,
                     divergence_hint="reduce params.critic_lr or params.actor_lr")


def _record_metrics(state, ctx):
    """Runner record: the update's per-episode metrics."""
    del state
    return ctx.info
