"""The bandit policy protocol: :class:`Policy`, the per-agent statistics, the clocks.

A policy is a handful of pure functions over a NamedTuple state with a leading agent axis
(counts and sample means ``[N, M]`` and whatever else it keeps), plus its default params. The
environment (:func:`~decentral.bandits.bandit_algorithm`) owns the reward streams, the true
pull counts and the regret; a policy only decides and learns.

**Clock** (Zhu et al., arXiv 2111.10933; the same for every policy). At ``t = 0``
every agent pulls every arm once (the initialisation round) and the policy is built from those
M rewards by ``init``. Then one *iteration from t to t + 1*, for ``t = 0, 1, ..., T - 1`` (the
runner's 0-based step index is exactly this ``t``), is, in order:

1. **decide** — ``arms = select(key, state, params, t, graph)``: agent i's pull
   ``a_i(t + 1)`` from its time-t statistics (int32 ``[N]``);
2. the environment draws each agent's reward of that pull (counter-based, see
   :mod:`~decentral.bandits.arms`);
3. **observe** — ``local = update(state, params, t, arms, rewards)``: each agent updates its own
   statistics (``n_{i,k}(t + 1)``, ``xbar_{i,k}(t + 1)``); purely local;
4. **communicate** (decentralized policies only) — ``new = communicate(key, state, local,
   params, t, graph)``: agents exchange their *time-t* values (``state``: what was broadcast)
   over the step's graph and merge them with their new local values (``local``), e.g. Dec_UCB's
   max-consensus ``m_i(t+1) = max{n_i(t+1), m_j(t) : j in N_i}`` and running consensus
   ``z(t+1) = W z(t) + xbar(t+1) - xbar(t)``. Single-agent policies leave it None.

``graph`` is the step's graph ``graphs.at(t, graph_key)`` (dense ``W [N, N]`` or a
:class:`~decentral.graphs.NeighborTable`), ``graphs`` the policy's sequence or the one the
run's params carry (``BanditEnvironment.graphs``); the sequence decides whether the step's
graph key is used (a random sequence drawn per seed) or not. It is computed once per step and
handed to both ``select`` and ``communicate``; it is None for policies without a graph.
``W[i, j] > 0`` means agent i receives from agent j.

**Index clock.** Index policies take ``ln t`` in the paper's clock: the width is 0 at ``t = 0``
(``C_{i,k}(0) = 0``) and ``ln 1 = 0`` at ``t = 1``, so the first two decisions are greedy.
:data:`CLOCKS` names the alternatives: ``"plus_one"`` evaluates ``ln(t + 1)``, as the authors'
code does (csasmith/vip-mab: ``t = 1`` at the first decision after initialisation), and
``"total_pulls"`` evaluates ``ln(M + t)``, the number of plays so far of Auer et al. (2002).

**Ties** in an index are broken towards the lowest arm index (``argmax``), as in the authors'
code (``np.argmax``).

Keys: the environment splits the runner's step key into ``(graph_key, select_key,
communicate_key)``; ``update`` is deterministic. ``init`` gets its own key.

Example:
    >>> import jax.numpy as jnp
    >>> stats = initial_stats(jnp.array([[0.2, 0.9], [0.4, 0.1]]))     # N = 2, M = 2
    >>> new = observe(stats, jnp.array([1, 0]), jnp.array([0.5, 0.6]))
    >>> new.counts.tolist(), [round(float(v), 4) for v in new.means[0]]
    ([[1, 2], [2, 1]], [0.2, 0.7])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "Policy",
    "IndexStats",
    "CLOCKS",
    "initial_stats",
    "observe",
    "observe_one",
    "log_time",
    "check_clock",
    "validate_constants",
]

#: The index clocks: ``"paper"`` (``ln t``, 0 at ``t = 0``), ``"plus_one"`` (``ln(t + 1)``, the
#: authors' code), ``"total_pulls"`` (``ln(M + t)``, Auer et al.'s plays so far).
CLOCKS = ("paper", "plus_one", "total_pulls")


class Policy(NamedTuple):
    """A bandit policy for N agents (the order of its functions is in the module docstring).

    A policy is not run by itself: :func:`~decentral.bandits.bandit_algorithm` wraps it into
    the runner's :class:`~decentral.runner.Algorithm`, and takes the fields the two share from
    the policy, in one place (``_from_policy`` in :mod:`~decentral.bandits.evaluate`):

    * ``name`` -> ``Algorithm.name = "bandits.<name>"`` (with ``environment_in_params=True``
      the label is ``config["policy"]`` when the config has one, so policies that share their
      functions, ``ucb()`` and ``ucb1()``, share one program);
    * ``version`` -> ``Algorithm.config["policy_version"]``;
    * ``config`` -> ``Algorithm.config["policy_config"]``;
    * ``graphs`` -> ``Algorithm.config["graphs"]`` (its digest, or ``"params"`` when the
      environment is read from params), ``Algorithm.max_horizon`` (the sequence's
      ``length``) and the default of ``BanditEnvironment.graphs``;
    * ``validate`` (and ``validate_graphs``) -> called by ``Algorithm.check_params`` on every
      params ``run`` gets (each sweep entry separately).

    Attributes:
        name: identifies the policy (checkpoint fingerprints, reports), e.g. ``"ucb1"``.
        init: ``init(key, params, first_rewards) -> state``; ``first_rewards [N, M]`` are the
            rewards of the initialisation round (every agent pulls every arm once at ``t = 0``).
        select: ``select(key, state, params, t, graph) -> arms`` int32 ``[N]``: the pulls
            ``a_i(t + 1)`` decided from the time-t state.
        update: ``update(state, params, t, arms, rewards) -> state``: each agent's own
            observation (local, deterministic).
        params: the default params (a NamedTuple of the policy's sweepable constants, named by
            meaning, e.g. ``exploration_alpha``; the defaults are the papers').
        validate: ``validate(params) -> params`` on the host, for **one** params value (one
            sweep entry: :func:`~decentral.runner.run` and
            :func:`~decentral.bandits.evaluate` call it on each entry of a sweep separately):
            returns params as arrays, raises ``ValueError`` naming the field
            (``params.<field>``) for invalid values (NaN, out of range) and for shapes the
            step would broadcast silently (a vector where one number is meant, a per-agent
            vector of another length than N).
        communicate: None, or ``communicate(key, previous, local, params, t, graph) -> state``:
            the exchange over the step's graph, from the time-t state ``previous`` (the values
            broadcast) and the state after the local observation ``local``.
        graphs: the :class:`~decentral.graphs.GraphSequence` the policy communicates over, or
            None. Its ``length`` (an explicit stack) bounds the horizon. Whether a random
            sequence draws per seed is the sequence's own business
            (``graphs.at(t, graph_key)`` decides; ``graphs.draws_per_seed`` tells).
        num_agents: N when the policy fixes it (a graph does), else None (any N).
        config: JSON-like description of everything the functions close over besides the
            graphs (options, clock); it enters checkpoint fingerprints.
        version: bump when the policy's numbers change.
        validate_graphs: None, or ``validate_graphs(graphs)`` on the host: refuses (with a
            ``ValueError`` naming ``params.environment.graphs``) a sequence given as data that
            this policy cannot run with although it has the structure of ``graphs`` and is
            row-stochastic (what :func:`~decentral.bandits.bandit_algorithm` checks for every
            policy), e.g. DDUCB's gossip matrix of another spectrum.
    """

    name: str
    init: Callable
    select: Callable
    update: Callable
    params: Any
    validate: Callable
    communicate: Callable | None = None
    graphs: Any = None
    num_agents: int | None = None
    config: Mapping | None = None
    version: str = "1"
    validate_graphs: Callable | None = None


class IndexStats(NamedTuple):
    """Each agent's own statistics.

    Attributes:
        counts: int32 ``[N, M]`` ``n_{i,k}(t)``, the initial pull included.
        means: float ``[N, M]`` ``xbar_{i,k}(t)``, the sample mean of agent i's own rewards
            from arm k.
    """

    counts: jax.Array
    means: jax.Array


def initial_stats(first_rewards) -> IndexStats:
    """Statistics after the initialisation round: ``n = 1``, ``xbar = X_{i,k}(0)``."""
    first = jnp.asarray(first_rewards)
    return IndexStats(jnp.ones(first.shape, jnp.int32), first)


def observe_one(counts, means, arm, reward):
    """One agent's observation (unbatched; vmap over agents).

    ``n_k <- n_k + 1[k = a]``, ``xbar_k <- xbar_k + 1[k = a] (r - xbar_k) / n_k`` (the running
    mean of the agent's own rewards).

    Args:
        counts: int ``[M]``. means: float ``[M]``. arm: int scalar. reward: float scalar.

    Returns:
        ``(counts, means)`` after the pull.
    """
    hit = jnp.arange(counts.shape[0]) == arm
    counts1 = counts + hit.astype(counts.dtype)
    step = jnp.where(hit, (reward - means) / counts1.astype(means.dtype), 0)
    return counts1, (means + step).astype(means.dtype)


def observe(stats: IndexStats, arms, rewards) -> IndexStats:
    """:func:`observe_one` for every agent: ``arms [N]`` pulled, ``rewards [N]`` received."""
    counts, means = jax.vmap(observe_one)(stats.counts, stats.means, arms,
                                          jnp.asarray(rewards, stats.means.dtype))
    return IndexStats(counts, means)


def check_clock(clock: str) -> str:
    """``clock`` if it is one of :data:`CLOCKS`, else ``ValueError``."""
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}; got {clock!r}.")
    return clock


def log_time(t, clock: str, num_arms: int, *, scale: float = 1.0, dtype=None):
    """The exploration logarithm of the index at paper time ``t`` (a traced int is fine).

    * ``"paper"``: ``ln(scale * t)``, and 0 at ``t = 0`` (the width ``C(0) = 0``);
    * ``"plus_one"``: ``ln(scale * (t + 1))``;
    * ``"total_pulls"``: ``ln(scale * (num_arms + t))``.

    ``scale`` multiplies the time (the pooled reference uses ``N``: ``ln(N t)``). The result is
    clamped at 0 from below.

    Example:
        >>> [round(float(log_time(t, "paper", 3)), 4) for t in (0, 1, 2)]
        [0.0, 0.0, 0.6931]
        >>> round(float(log_time(0, "total_pulls", 3)), 4)
        1.0986
    """
    dtype = jnp.dtype(dtype) if dtype is not None else jnp.zeros(()).dtype
    tt = jnp.asarray(t).astype(dtype)
    if clock == "paper":
        arg = tt
    elif clock == "plus_one":
        arg = tt + 1
    elif clock == "total_pulls":
        arg = tt + num_arms
    else:
        raise ValueError(f"clock must be one of {CLOCKS}; got {clock!r}.")
    arg = arg * jnp.asarray(scale, dtype)
    return jnp.where(arg > 1, jnp.log(jnp.maximum(arg, 1)), jnp.zeros((), dtype))


def validate_constants(params, fields: Mapping[str, tuple[float, str]], policy: str, *,
                       per_agent: Collection[str] = (), num_agents: int | None = None):
    """Host-side check of one params value's float constants (one sweep entry).

    Every field must hold finite numbers that satisfy its bound, and be **one number** (a
    scalar), except the fields named in ``per_agent``, which may also be one value per agent
    ``[N]``: the step would broadcast any other shape silently (a vector ``[M]`` applied per
    arm, a per-agent vector of another length). Several values are run as a sweep
    (``run(..., sweep=True)``), whose entries are checked one by one.

    Args:
        params: the params NamedTuple of one run (each field a number, or ``[N]`` for the
            per-agent fields).
        fields: ``{field: (lower, rule)}`` with ``rule`` ``">="`` or ``">"``: every entry must
            be finite and satisfy ``value rule lower``.
        policy: the policy's name, for messages.
        per_agent: the fields that may be one value per agent ``[N]``.
        num_agents: N, required when ``per_agent`` is not empty.

    Returns:
        params with every checked field as a float numpy array (kept as is when traced).

    Raises:
        ValueError: NaN / infinite / out-of-range entries, a non-scalar where one number is
            meant, a per-agent vector of another length than N; naming the field
            (``params.<field>``).

    Example:
        >>> from decentral.bandits import UCBParams
        >>> validate_constants(UCBParams(2), {"exploration_alpha": (0.0, ">=")}, "ucb")
        UCBParams(exploration_alpha=array(2.))
        >>> try:                                  # [M] would be applied per arm
        ...     validate_constants(UCBParams(np.array([1.0, 2.0, 3.0])),
        ...                        {"exploration_alpha": (0.0, ">=")}, "ucb")
        ... except ValueError as exc:
        ...     print(str(exc)[:60])
        ucb: params.exploration_alpha must be one number (a scalar);
    """
    if per_agent and num_agents is None:
        raise ValueError("validate_constants: per_agent fields need num_agents.")
    out = {}
    for name, (lower, rule) in fields.items():
        value = getattr(params, name)
        if isinstance(value, jax.core.Tracer):
            _check_shape(np.shape(value), name, name in per_agent, num_agents, policy)
            out[name] = value
            continue
        arr = np.asarray(value)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)):
            raise ValueError(f"{policy}: params.{name} must be a number; got {value!r}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{policy}: params.{name} must be finite; got {arr.tolist()}.")
        bad = arr < lower if rule == ">=" else arr <= lower
        if np.any(bad):
            raise ValueError(f"{policy}: params.{name} must be {rule} {lower:g}; got "
                             f"{arr.tolist()}.")
        _check_shape(arr.shape, name, name in per_agent, num_agents, policy)
        out[name] = arr.astype(np.result_type(arr.dtype, np.float32))
    return params._replace(**out)


def _check_shape(shape: tuple, name: str, per_agent: bool, num_agents: int | None,
                 policy: str) -> None:
    """Refuse a field of another shape than ``()`` (or ``(N,)`` for a per-agent field)."""
    shape = tuple(shape)
    if shape == () or (per_agent and shape == (num_agents,)):
        return
    sweep = ("to run several values, sweep them (run(..., sweep=True) or evaluate(..., "
             "sweep=True)) with a leading axis [P]")
    if per_agent:
        raise ValueError(f"{policy}: params.{name} must be a scalar or one value per agent "
                         f"[N = {num_agents}]; got shape {shape}. A vector of another length "
                         f"would broadcast silently (e.g. per arm); {sweep} (or [P, N]).")
    raise ValueError(f"{policy}: params.{name} must be one number (a scalar); got shape "
                     f"{shape}. A vector would broadcast silently (per arm or per agent); "
                     f"{sweep}.")
