"""The attackers of the linear actor-critic: the per-coordinate-extreme attack on linear
parameters (:func:`feature_extreme`) and the learning adversaries of the experiments
(greedy, faulty, malicious) as stateful :class:`~decentral.resilient_ac.Attacker` s.

The equations of the algorithm they attack are in :mod:`decentral.resilient_ac.linear`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..attackers import Attacker, receiver_views
from .rules import local_critic_step, local_reward_step

__all__ = ["LinearAttackContext", "feature_extreme", "greedy_adversary", "faulty_adversary",
           "malicious_adversary", "ADVERSARIES", "TARGET_CRITIC", "TARGET_TEAM_REWARD",
           "TARGET_AVERAGE_REWARD"]

#: ``LinearAttackContext.target`` codes: what a message is a parameter of.
TARGET_CRITIC, TARGET_TEAM_REWARD, TARGET_AVERAGE_REWARD = 0, 1, 2


# =============================================================================================
# the per-coordinate-extreme attack on linear parameters
# =============================================================================================

class LinearAttackContext(NamedTuple):
    """:class:`~decentral.resilient_ac.AttackContext` plus what a linear attacker may use.

    Attributes:
        table: this step's in-neighbour table.
        byzantine: ``[B]`` int32 Byzantine indices.
        cooperative: ``[N]`` bool.
        feature: the current feature of the parameter attacked: ``phi(s_t)`` for the critic,
            ``f(s_t, a_t)`` for the team-reward model, ``1`` for the average reward.
        target: int32, 0 critic, 1 team-reward model, 2 average reward.
        rewards: ``[N]`` this step's rewards ``r^i_{t+1}`` (None at ``init``).
        next_feature: ``phi(s_{t+1})`` for the critic messages, else None.
        step_size: this step's fast step ``beta_{v,t}`` (None at ``init``).
        discount: ``gamma``, or None under the average-reward criterion.
    """

    table: Any
    byzantine: jax.Array
    cooperative: jax.Array
    feature: jax.Array
    target: jax.Array
    rewards: Any = None
    next_feature: Any = None
    step_size: Any = None
    discount: Any = None


def feature_extreme(critic: float = 1.0, team_reward: float = -1.0, *,
                    critic_target=None, team_reward_target=None) -> Attacker:
    """The per-coordinate-extreme attack on linear parameters (needs a
    :class:`LinearAttackContext`, which the algorithms of this module pass).

    For receiver ``i`` with cooperative messages ``w^j`` (its own included) and current
    feature ``x``: coordinate ``k`` of the message is ``max_j w^j_k`` where
    ``push * x_k >= 0`` and ``min_j w^j_k`` elsewhere, with ``push = critic`` for critic
    messages (default +1: push the value up) and ``push = team_reward`` for team-reward
    messages (default -1: push the estimate down); the average reward uses ``critic``. Every
    coordinate is inside the cooperative range, so element-wise trimming keeps it, while
    ``x^T message`` is at least (push up) ``max_j x^T w^j``.

    With ``critic_target`` / ``team_reward_target`` (a fixed direction, e.g. the mean feature:
    the "batch-mean feature" form of the attack) the signs of that direction replace those of
    the current feature: the attack then pushes the estimate along the fixed direction, which
    differs from the current feature in the states not visited. Note: with the current feature,
    and the cooperative agents at consensus, the honest messages differ only along ``x``, and
    the message is exactly the one of the cooperative agent with the extreme local step (see
    ``docs/resilient_linear.md``).

    Params ``{"critic", "team_reward", "critic_target", "team_reward_target"}`` (signs and
    directions; all zero directions mean "the current feature"; sweepable).

    Example:
        >>> att = feature_extreme(team_reward_target=[0.5, -0.25])
        >>> att.name, att.params["team_reward_target"].tolist()
        ('feature_extreme_fixed_direction', [0.5, -0.25])
    """

    def init(key, params, values, ctx):
        del key, params, values, ctx
        return ()

    def step(key, state, params, t, values, ctx):
        del key, t
        values = jnp.asarray(values)
        views = receiver_views(values, ctx, ctx.byzantine[0] if ctx.byzantine.shape[0] else 0)
        coop = views.cooperative.reshape(views.cooperative.shape
                                         + (1,) * (values.ndim - 1))        # [N, K, 1...]
        big = jnp.finfo(values.dtype).max
        hi = jnp.max(jnp.where(coop, views.received, -big), axis=1)
        lo = jnp.min(jnp.where(coop, views.received, big), axis=1)
        any_coop = jnp.any(views.cooperative, axis=1).reshape((-1,) + (1,) * (values.ndim - 1))
        own = views.received[:, 0]
        hi, lo = jnp.where(any_coop, hi, own), jnp.where(any_coop, lo, own)
        is_tr = ctx.target == TARGET_TEAM_REWARD
        push = jnp.where(is_tr, params["team_reward"], params["critic"])
        feature = jnp.broadcast_to(jnp.asarray(ctx.feature, values.dtype), values.shape[1:])
        if values.ndim > 1:
            fixed = jnp.where(is_tr, params["team_reward_target"], params["critic_target"])
            d = values.shape[1]
            fixed = jnp.pad(fixed, (0, max(0, d - fixed.shape[0])))[:d].astype(values.dtype)
            feature = jnp.where(jnp.any(fixed != 0), fixed, feature)
        up = push * feature >= 0
        msg = jnp.where(up, hi, lo)                                        # [N, ...]
        return jnp.broadcast_to(msg, (ctx.byzantine.shape[0],) + msg.shape), state

    tc = np.zeros(0) if critic_target is None else np.asarray(critic_target, np.float64)
    tr = np.zeros(0) if team_reward_target is None else np.asarray(team_reward_target,
                                                                   np.float64)
    width = max(tc.size, tr.size, 1)

    def pad(a):
        return jnp.asarray(np.pad(a.ravel(), (0, width - a.size)))

    params = {"critic": jnp.asarray(float(critic)),
              "team_reward": jnp.asarray(float(team_reward)),
              "critic_target": pad(tc), "team_reward_target": pad(tr)}
    name = "feature_extreme" if width == 1 and not (tc.any() or tr.any()) else \
        "feature_extreme_fixed_direction"
    return Attacker(init, step, params, name, _check_feature_extreme)


def _check_feature_extreme(params) -> None:
    """``feature_extreme``'s params: real scalar signs ``critic`` / ``team_reward``, 1-D
    finite direction vectors (zeros: the current feature)."""
    for k in ("critic", "team_reward"):
        arr = np.asarray(params[k])
        if arr.ndim != 0 or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"[{k!r}] must be one real number (the push's sign); got "
                             f"{params[k]!r}.")
    for k in ("critic_target", "team_reward_target"):
        arr = np.asarray(params[k])
        if arr.ndim != 1 or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
                or not np.all(np.isfinite(arr)):
            raise ValueError(f"[{k!r}] must be a 1-D vector of finite numbers (all zeros: "
                             f"the current feature); got shape {arr.shape}.")


# =============================================================================================
# the learning adversaries of the experiments, as stateful attackers
# =============================================================================================

def _broadcast(msg, ctx):
    """``[B, ...]`` per-sender messages -> ``[B, N, ...]``: every receiver gets the same."""
    n = ctx.cooperative.shape[0]
    return jnp.broadcast_to(msg[:, None], (msg.shape[0], n) + msg.shape[1:])


def greedy_adversary() -> Attacker:
    """The greedy adversary of the experiments (Figura, Lin, Liu, Gupta, Section V) in the
    linear family: it fits the critic and the team-reward model to its *own* reward and sends
    that fit to every receiver, ignoring everyone else.

    In :func:`~decentral.resilient_ac.linear.linear_actor_critic` a Byzantine agent's stored
    parameters are its own local steps (step 2 of :mod:`decentral.resilient_ac.linear`; it
    never takes part in consensus), so the message is the honest local-step value of the
    Byzantine agent itself: ``values[b]`` for every receiver.
    Stateless. Works with any :class:`~decentral.resilient_ac.AttackContext`.

    Example:
        >>> greedy_adversary().name
        'greedy'
    """

    def init(key, params, values, ctx):
        del key, params, values, ctx
        return ()

    def step(key, state, params, t, values, ctx):
        del key, params, t
        return _broadcast(jnp.asarray(values)[ctx.byzantine], ctx), state

    return Attacker(init, step, {}, "greedy")


def faulty_adversary() -> Attacker:
    """The faulty adversary of the experiments: it sends its *initial* parameters forever
    (a frozen critic and team-reward model). Stateful: :meth:`~Attacker.init` keeps
    ``values[b]`` of the values it is initialised with (the initial parameters, in
    :func:`~decentral.resilient_ac.linear.linear_actor_critic`), every step sends them to
    every receiver.

    Example:
        >>> faulty_adversary().name
        'faulty'
    """

    def init(key, params, values, ctx):
        del key, params
        return jnp.asarray(values)[ctx.byzantine]

    def step(key, state, params, t, values, ctx):
        del key, params, t, values
        return _broadcast(state, ctx), state

    return Attacker(init, step, {}, "faulty")


def malicious_adversary() -> Attacker:
    """The malicious adversary of the experiments: it fits its critic and team-reward model to
    *minus the mean cooperative reward* and sends that fit to every receiver, so that the
    cooperative agents, if they average it in, minimise their return. Stateful, and it needs
    the :class:`LinearAttackContext` that
    :func:`~decentral.resilient_ac.linear.linear_actor_critic` passes.

    State per Byzantine agent ``b``: its own parameter ``w_b`` (initialised to its initial
    parameter) and, under the average-reward criterion, its own average ``mu_b``. With
    ``rbar_c = mean_{j cooperative} r^j_{t+1}`` and the step's ``beta = beta_{v,t}``, each step
    first moves ``w_b`` by the same local rule as an honest agent (step 2 of the module
    docstring) with reward ``-rbar_c``, then sends the new ``w_b``:

    * critic: ``w += beta (-rbar_c + gamma phi'^T w - phi^T w) phi`` (average reward:
      ``-rbar_c - mu_b + phi'^T w - phi^T w``, then ``mu_b <- (1 - beta) mu_b - beta rbar_c``);
    * team-reward model: ``w += beta (-rbar_c - f^T w) f``;
    * average reward (scalar): ``w <- (1 - beta) w - beta rbar_c``.

    Example:
        >>> malicious_adversary().name
        'malicious'
    """

    def init(key, params, values, ctx):
        del key, params
        w = jnp.asarray(values)[ctx.byzantine]
        return w, jnp.zeros(w.shape[:1], w.dtype)

    def step(key, state, params, t, values, ctx):
        del key, params, t, values
        if ctx.rewards is None or ctx.step_size is None:
            raise ValueError("malicious_adversary needs a LinearAttackContext with this step's "
                             "rewards and step size (the linear actor-critic passes them).")
        w, mu = state
        coop = ctx.cooperative
        rbar = jnp.sum(jnp.where(coop, ctx.rewards, 0)) / jnp.maximum(jnp.sum(coop), 1)
        r = (-rbar).astype(w.dtype)
        beta = jnp.asarray(ctx.step_size, w.dtype)
        if w.ndim == 1:                                             # the average reward
            w = (1 - beta) * w + beta * r
        elif ctx.next_feature is not None:                          # the critic
            w, _ = jax.vmap(local_critic_step, in_axes=(0, None, None, None, None, None,
                                                        None if ctx.discount is not None
                                                        else 0))(
                w, ctx.feature, ctx.next_feature, r, ctx.discount, beta,
                None if ctx.discount is not None else mu)
            if ctx.discount is None:
                mu = (1 - beta) * mu + beta * r
        else:                                                       # the team-reward model
            w = jax.vmap(local_reward_step, in_axes=(0, None, None, None))(w, ctx.feature, r,
                                                                           beta)
        return _broadcast(w, ctx), (w, mu)

    return Attacker(init, step, {}, "malicious")


#: The learning adversaries of the experiments, by name.
ADVERSARIES = {"greedy": greedy_adversary, "faulty": faulty_adversary,
               "malicious": malicious_adversary}
