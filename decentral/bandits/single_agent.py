"""Single-agent index policies run as N independent agents, and the pooled reference.

Every policy starts from the initialisation round (every arm pulled once at ``t = 0``) and then,
at each ``t = 0, 1, ..., T - 1``, agent i pulls ``a_i(t + 1) = argmax_k I_{i,k}(t)`` (lowest
index on ties) with, ``L(t)`` the clock's logarithm (:func:`~decentral.bandits.log_time`, by
default ``ln t`` with ``L(0) = 0``):

* :func:`ucb` — ``I = xbar_{i,k} + sqrt(alpha L(t) / n_{i,k})``, ``alpha = exploration_alpha``
  (the "UCB(alpha)" ablation of ``docs/bandits.md``; the first version's Remark 1: Dec_UCB with
  N = 1 is ``ucb`` with ``alpha = 4/3``);
* :func:`ucb1` — ``ucb`` with ``alpha = 2``, the index ``xbar + sqrt(2 ln t / n)`` of UCB1
  (Auer, Cesa-Bianchi, Fischer 2002, Fig. 1; they count ``t`` as plays so far,
  ``clock="total_pulls"``);
* :func:`kl_ucb` — ``I = max{q in [xbar, 1] : n kl(xbar, q) <= L(t) + c ln L(t)}`` (Garivier &
  Cappé 2011, ``c = log_log_coefficient``; their theorem takes ``c = 3``, their experiments and
  the authors' code ``c = 0``, the default here); the budget is clamped at 0 (index ``xbar``)
  where ``L(t) + c ln L(t) <= 0``;
* :func:`pooled_ucb` — a centralized oracle: every agent uses the statistics of *all* agents'
  samples, ``n_k = sum_i n_{i,k}``, ``xbar_k = sum_i n_{i,k} xbar_{i,k} / n_k``, with the index
  ``xbar_k + sqrt(alpha L_N(t) / n_k)`` and ``L_N(t) = ln(N t)`` — a lower reference for
  per-agent regret. All agents compute the same index, so all pull the same arm.

The local rules are unbatched (:func:`~decentral.bandits.ucb_index`,
:func:`~decentral.bandits.kl_ucb_index`) and vmapped over agents here.

Example:
    >>> from decentral.bandits import bernoulli, evaluate, ucb
    >>> res = evaluate(ucb(exploration_alpha=4 / 3), bernoulli([0.8, 0.5]), horizon=200,
    ...                seeds=range(3), num_agents=2)
    >>> res.pulls.shape, int(res.pulls[0, 0].sum())      # [S, N, M]; M + T pulls per agent
    ((3, 2, 2), 202)
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .indices import apply_index_floor, check_index_floor, kl_ucb_index, ucb_index
from .policy import (
    IndexStats,
    Policy,
    check_clock,
    initial_stats,
    log_time,
    observe,
    validate_constants,
)

__all__ = ["UCBParams", "KLUCBParams", "ucb", "ucb1", "kl_ucb", "pooled_ucb", "pooled_statistics",
           "kl_budget"]


class UCBParams(NamedTuple):
    """Sweepable constants of :func:`ucb`, :func:`ucb1`, :func:`pooled_ucb`.

    Attributes:
        exploration_alpha: ``alpha >= 0`` in ``sqrt(alpha ln t / n)`` (2 for UCB1); one number
            (a vector would apply per arm: several values are a sweep, ``sweep=True``).
    """

    exploration_alpha: float = 2.0


class KLUCBParams(NamedTuple):
    """Sweepable constants of :func:`kl_ucb`.

    Attributes:
        log_log_coefficient: ``c >= 0`` in the budget ``ln t + c ln ln t`` (0 by default; 3 in
            Garivier & Cappé's theorem); one number (several values are a sweep).
    """

    log_log_coefficient: float = 0.0


def _validate_ucb(name):
    def validate(params):
        if not isinstance(params, UCBParams):
            raise ValueError(f"{name}: params must be a UCBParams(exploration_alpha=...); got "
                             f"{type(params).__name__}.")
        return validate_constants(params, {"exploration_alpha": (0.0, ">=")}, name)
    return validate


def _validate_kl(params):
    if not isinstance(params, KLUCBParams):
        raise ValueError(f"kl_ucb: params must be a KLUCBParams(log_log_coefficient=...); got "
                         f"{type(params).__name__}.")
    return validate_constants(params, {"log_log_coefficient": (0.0, ">=")}, "kl_ucb")


def _init(key, params, first_rewards) -> IndexStats:
    return initial_stats(first_rewards)


def _update(state, params, t, arms, rewards) -> IndexStats:
    return observe(state, arms, rewards)


@functools.cache
def _ucb_select(clock: str):
    """The select function of :func:`ucb` for one clock (cached: one compile per clock)."""

    def select(key, state: IndexStats, params: UCBParams, t, graph):
        m = state.counts.shape[-1]
        log_t = log_time(t, clock, m, dtype=state.means.dtype)
        index = jax.vmap(ucb_index, in_axes=(0, 0, None, None))(
            state.means, state.counts, log_t, params.exploration_alpha)
        return jnp.argmax(index, axis=-1).astype(jnp.int32)

    return select


def ucb(exploration_alpha: float = 2.0, *, clock: str = "paper") -> Policy:
    """UCB(alpha): ``argmax_k xbar_{i,k} + sqrt(alpha ln t / n_{i,k})``, N independent agents.

    Args:
        exploration_alpha: default of the sweepable ``alpha`` (params
            :class:`UCBParams`); 2 is UCB1, 4/3 the first version's Theorem-1 width.
        clock: ``"paper"`` (``ln t``, default), ``"plus_one"`` or ``"total_pulls"``
            (:data:`~decentral.bandits.CLOCKS`).

    Raises:
        ValueError: a NaN / infinite / negative ``exploration_alpha``, an unknown clock.

    Example:
        >>> ucb(4 / 3).params
        UCBParams(exploration_alpha=1.3333333333333333)
    """
    check_clock(clock)
    validate = _validate_ucb("ucb")
    params = validate(UCBParams(exploration_alpha))
    return Policy(name="ucb", init=_init, select=_ucb_select(clock), update=_update,
                  params=UCBParams(float(params.exploration_alpha)), validate=validate,
                  config={"policy": "ucb", "clock": clock})


def ucb1(*, clock: str = "paper") -> Policy:
    """UCB1 (Auer, Cesa-Bianchi, Fischer 2002): :func:`ucb` with ``exploration_alpha = 2``.

    The index ``xbar_{i,k} + sqrt(2 ln t / n_{i,k})``; our baseline takes ``t`` in
    the paper's clock (``clock="paper"``, so UCB1 is Dec_UCB's single-agent form with UCB1's
    width); Auer et al. count plays so far (``clock="total_pulls"``).

    Example:
        >>> ucb1().name, ucb1().params.exploration_alpha
        ('ucb1', 2.0)
    """
    check_clock(clock)
    return Policy(name="ucb1", init=_init, select=_ucb_select(clock), update=_update,
                  params=UCBParams(2.0), validate=_validate_ucb("ucb1"),
                  config={"policy": "ucb", "clock": clock})


def kl_budget(log_t, log_log_coefficient, counts):
    """``max(0, L + c ln L) / n`` with ``L = log_t`` (``c ln L`` taken as 0 when ``L <= 0``)."""
    dtype = jnp.asarray(log_t).dtype
    log_t = jnp.asarray(log_t)
    loglog = jnp.where(log_t > 0, jnp.log(jnp.where(log_t > 0, log_t, 1)), 0)
    total = log_t + jnp.asarray(log_log_coefficient, dtype) * loglog
    return jnp.maximum(total, 0) / counts.astype(dtype)


@functools.cache
def _kl_select(clock: str, steps: int | None, floor: float | None):
    def select(key, state: IndexStats, params: KLUCBParams, t, graph):
        m = state.counts.shape[-1]
        log_t = log_time(t, clock, m, dtype=state.means.dtype)
        budget = kl_budget(log_t, params.log_log_coefficient, state.counts)
        index = kl_ucb_index(state.means, budget, steps)
        index = apply_index_floor(index, state.means, floor)
        return jnp.argmax(index, axis=-1).astype(jnp.int32)

    return select


def kl_ucb(log_log_coefficient: float = 0.0, *, clock: str = "paper",
           bisection_steps: int | None = None, index_floor: float | None = None) -> Policy:
    """KL-UCB (Garivier & Cappé 2011) for rewards in ``[0, 1]``, N independent agents.

    ``a_i(t + 1) = argmax_k max{q in [xbar, 1] : n_{i,k} kl(xbar_{i,k}, q) <= ln t + c ln ln t}``
    with the Bernoulli ``kl`` and ``xbar`` clipped to ``[0, 1]``; the index by
    ``bisection_steps`` of bisection (:func:`~decentral.bandits.kl_ucb_index`).

    Args:
        log_log_coefficient: default of the sweepable ``c >= 0`` (params :class:`KLUCBParams`).
        clock: ``"paper"`` (default), ``"plus_one"`` or ``"total_pulls"``.
        bisection_steps: bisection iterations (static); None: 50 in float64, 30 in float32
            (:func:`~decentral.bandits.kl_ucb_index`).
        index_floor: None (default), or paper parity with the journal version's code
            (csasmith/vip-mab, ``code/KL_UCB/KL_UCB.py``): its Newton iteration starts at
            ``min(xbar + 0.1, 1 - 1e-6)`` and never goes below it, so its index is
            ``max(true index, min(xbar + floor, 1 - 1e-6))`` with ``floor = 0.1``.

    Raises:
        ValueError: a NaN / infinite / negative coefficient, an unknown clock, bad steps or
            floor.

    Example:
        >>> kl_ucb().params
        KLUCBParams(log_log_coefficient=0.0)
    """
    from decentral._checks import check_int

    check_clock(clock)
    steps = None if bisection_steps is None else check_int(bisection_steps, "bisection_steps",
                                                           minimum=1, maximum=200)
    index_floor = check_index_floor(index_floor)
    params = _validate_kl(KLUCBParams(log_log_coefficient))
    return Policy(name="kl_ucb", init=_init, select=_kl_select(clock, steps, index_floor),
                  update=_update, params=KLUCBParams(float(params.log_log_coefficient)),
                  validate=_validate_kl,
                  config={"policy": "kl_ucb", "clock": clock, "bisection_steps": steps,
                          "index_floor": index_floor})


def pooled_statistics(stats: IndexStats):
    """``(n_k, xbar_k)`` of all agents' samples pooled: ``n_k = sum_i n_{i,k}``,
    ``xbar_k = sum_i n_{i,k} xbar_{i,k} / n_k`` (each ``[M]``)."""
    counts = stats.counts.sum(axis=0)
    dtype = stats.means.dtype
    total = (stats.counts.astype(dtype) * stats.means).sum(axis=0)
    return counts, total / counts.astype(dtype)


@functools.cache
def _pooled_select(clock: str):
    def select(key, state: IndexStats, params: UCBParams, t, graph):
        n, m = state.counts.shape
        counts, means = pooled_statistics(state)
        log_t = log_time(t, clock, m, scale=n, dtype=means.dtype)
        arm = jnp.argmax(ucb_index(means, counts, log_t, params.exploration_alpha))
        return jnp.full((n,), arm, jnp.int32)

    return select


def pooled_ucb(exploration_alpha: float = 2.0, *, clock: str = "paper") -> Policy:
    """Centralized pooled UCB: every agent plays the UCB index of all agents' samples.

    The index ``xbar_k + sqrt(alpha ln(N t) / n_k)`` over the pooled counts and means
    (our centralized oracle, see ``docs/bandits.md``: UCB1's ``alpha = 2`` by default,
    ``ln(N t)`` since the network has made ``N t`` post-initialisation plays; with
    ``clock="total_pulls"`` the logarithm is of ``N (M + t)``, all plays so far). It needs
    global information at every step and is a *reference*, not a decentralized algorithm.

    Args:
        exploration_alpha: default of the sweepable ``alpha`` (params :class:`UCBParams`).
        clock: ``"paper"`` (default), ``"plus_one"`` or ``"total_pulls"``.

    Example:
        >>> pooled_ucb().name
        'pooled_ucb'
    """
    check_clock(clock)
    validate = _validate_ucb("pooled_ucb")
    params = validate(UCBParams(exploration_alpha))
    return Policy(name="pooled_ucb", init=_init, select=_pooled_select(clock), update=_update,
                  params=UCBParams(float(params.exploration_alpha)), validate=validate,
                  config={"policy": "pooled_ucb", "clock": clock})
