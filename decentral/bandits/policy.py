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

``graph`` is the step's graph ``policy.graphs.at(t)`` (dense ``W [N, N]`` or a
:class:`~decentral.graphs.NeighborTable`; drawn with the step's graph key for sequences drawn
per seed), computed once per step and handed to both ``select`` and ``communicate``; it is None
for policies without a graph. ``W[i, j] > 0`` means agent i receives from agent j.

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

from collections.abc import Callable, Mapping
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
        validate: ``validate(params) -> params`` on the host: returns params as arrays, raises
            ``ValueError`` for invalid values (NaN, out of range). Swept params (a leading
            axis) are checked elementwise.
        communicate: None, or ``communicate(key, previous, local, params, t, graph) -> state``:
            the exchange over the step's graph, from the time-t state ``previous`` (the values
            broadcast) and the state after the local observation ``local``.
        graphs: the :class:`~decentral.graphs.GraphSequence` the policy communicates over, or
            None. Its ``length`` (an explicit stack) bounds the horizon.
        per_seed_graphs: draw random graphs per seed (``graphs.at(t, graph_key)``).
        num_agents: N when the policy fixes it (a graph does), else None (any N).
        config: JSON-like description of everything the functions close over (graph digest,
            options, clock); it enters checkpoint fingerprints.
        version: bump when the policy's numbers change.
    """

    name: str
    init: Callable
    select: Callable
    update: Callable
    params: Any
    validate: Callable
    communicate: Callable | None = None
    graphs: Any = None
    per_seed_graphs: bool = False
    num_agents: int | None = None
    config: Mapping | None = None
    version: str = "1"


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


def validate_constants(params, fields: Mapping[str, tuple[float, str]], policy: str):
    """Host-side check of a params NamedTuple's float constants.

    Args:
        params: the params NamedTuple (each field a number or an array, e.g. a sweep axis).
        fields: ``{field: (lower, rule)}`` with ``rule`` ``">="`` or ``">"``: every entry must
            be finite and satisfy ``value rule lower``.
        policy: the policy's name, for messages.

    Returns:
        params with every checked field as a float numpy array (kept as is when traced).

    Raises:
        ValueError: NaN / infinite / out-of-range entries, naming the field.
    """
    out = {}
    for name, (lower, rule) in fields.items():
        value = getattr(params, name)
        if isinstance(value, jax.core.Tracer):
            out[name] = value
            continue
        arr = np.asarray(value)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)):
            raise ValueError(f"{policy}: {name} must be a number (or an array of numbers for a "
                             f"sweep); got {value!r}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{policy}: {name} must be finite; got {arr.tolist()}.")
        bad = arr < lower if rule == ">=" else arr <= lower
        if np.any(bad):
            raise ValueError(f"{policy}: {name} must be {rule} {lower:g}; got {arr.tolist()}.")
        out[name] = arr.astype(np.result_type(arr.dtype, np.float32))
    return params._replace(**out)
