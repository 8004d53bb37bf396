"""Byzantine attackers: what each Byzantine sender sends to each of its receivers.

A Byzantine agent may send anything, and a different value to each receiver (LeBlanc, Zhang,
Koutsoukos, Sundaram, IEEE JSAC 31(4) 2013; Figura, Lin, Liu, Gupta, arXiv:2111.06776). An
attacker produces the messages of the Byzantine senders only, ``[B, N, ...]`` (``B`` Byzantine
agents, one message per receiver; entries for agents that do not hear that sender are ignored),
never an ``[N, N, ...]`` tensor; the algorithm writes them into the gathered in-neighbour values
(:func:`decentral.graphs.replace_sender_messages` semantics, see
:func:`replace_byzantine_messages`).

**The protocol** (:class:`Attacker`): ``init(key, params, values, ctx) -> state`` and
``step(key, state, params, t, values, ctx) -> (messages [B, N, ...], state)``, with ``values``
the agents' current values ``[N, ...]`` (the attacker is omniscient) and ``ctx`` an
:class:`AttackContext` (this step's in-neighbour table, the Byzantine indices, the cooperative
mask). Its sweepable constants live in ``params`` (the ``attacker`` field of the algorithm's
params; :attr:`Attacker.params` are the defaults). A learning adversary (the actor-critic
family) carries its own state through ``init``/``step``; the runner carries it with the
algorithm's state.

**Stateless attackers** are written as one unbatched rule per (sender, receiver):
``rule(key, t, view, params) -> message [...]`` with ``view`` a :class:`ReceiverView`
(the receiver's honest gathered values, which of them come from cooperative senders, ...);
:func:`stateless` vmaps it over receivers and senders, each pair with its own key. The
library's:

=====================  ===================================================================
:func:`constant`       every receiver gets ``value``
:func:`huge`           ``±magnitude`` with a random sign per coordinate, receiver and step
:func:`random_values`  uniform in ``[low, high]`` per coordinate, receiver and step
:func:`just_inside`    the top (``side > 0``) or bottom of the cooperative values the receiver
                       sees, moved inward by ``margin`` times their range
:func:`split_brain`    receivers at or above the cooperative mean get a high value, the others
                       a low one (``±magnitude``, or the extremes of what they see with
                       ``inside=True``): equivocation that pushes the two halves apart
:func:`coordinate_extreme`  per coordinate, the max (``direction >= 0``) or min of the
                       cooperative values the receiver sees: every coordinate lies inside the
                       cooperative range, so element-wise trimming keeps it (the attack of
                       the projection paper on element-wise trimming)
=====================  ===================================================================

Example:
    >>> import jax, jax.numpy as jnp
    >>> import decentral.graphs as g
    >>> table = g.adjacency_to_table(g.complete(3))
    >>> ctx = AttackContext(table, jnp.array([2]), jnp.array([True, True, False]))
    >>> att = constant(7.0)
    >>> values = jnp.array([0.0, 1.0, 5.0])
    >>> state = att.init(jax.random.key(0), att.params, values, ctx)
    >>> msgs, _ = att.step(jax.random.key(1), state, att.params, 0, values, ctx)
    >>> msgs.tolist()                                       # [B = 1, N = 3]
    [[7.0, 7.0, 7.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from decentral.graphs import NeighborTable

__all__ = ["Attacker", "AttackContext", "ReceiverView", "stateless", "constant", "huge",
           "random_values", "just_inside", "split_brain", "coordinate_extreme",
           "replace_byzantine_messages", "receiver_views", "switch_attacker"]


class AttackContext(NamedTuple):
    """What an attacker knows about the step besides the values.

    Attributes:
        table: this step's in-neighbour table (own index at ``k = 0``).
        byzantine: ``[B]`` int32 indices of the Byzantine agents (message order).
        cooperative: ``[N]`` bool, True for cooperative agents.
    """

    table: NeighborTable
    byzantine: jax.Array
    cooperative: jax.Array


class ReceiverView(NamedTuple):
    """One (Byzantine sender, receiver) pair, as a stateless rule sees it.

    Attributes:
        sender: int, the Byzantine sender's agent index.
        receiver: int, the receiver's agent index.
        received: ``[K, ...]`` the honest values the receiver gathers (own value at ``k = 0``;
            Byzantine senders' entries hold their own current values).
        cooperative: ``[K]`` bool, real entries whose sender is cooperative (the receiver's
            own entry included when it is cooperative).
        values: ``[N, ...]`` every agent's current value.
        cooperative_agents: ``[N]`` bool.
    """

    sender: jax.Array
    receiver: jax.Array
    received: jax.Array
    cooperative: jax.Array
    values: jax.Array
    cooperative_agents: jax.Array


class Attacker(NamedTuple):
    """The attacker protocol (see the module docstring).

    Attributes:
        init: ``(key, params, values, ctx) -> state``.
        step: ``(key, state, params, t, values, ctx) -> (messages [B, N, ...], state)``.
        params: the default params (a pytree of arrays; swept like any params).
        name: a readable name (reports, figure legends).
    """

    init: Callable[..., Any]
    step: Callable[..., tuple[jax.Array, Any]]
    params: Any
    name: str


def receiver_views(values, ctx: AttackContext, sender) -> ReceiverView:
    """The views of every receiver ``[N]`` (batched along the leading axis) for one sender."""
    table = ctx.table
    received = values[table.idx]                                    # [N, K, ...]
    coop = table.mask & ctx.cooperative[table.idx]                   # [N, K]
    n = table.idx.shape[0]
    return ReceiverView(
        sender=jnp.broadcast_to(sender, (n,)), receiver=jnp.arange(n), received=received,
        cooperative=coop, values=jnp.broadcast_to(values, (n,) + values.shape),
        cooperative_agents=jnp.broadcast_to(ctx.cooperative, (n,) + ctx.cooperative.shape))


def stateless(rule: Callable[..., jax.Array], params: Any, name: str) -> Attacker:
    """An :class:`Attacker` from an unbatched rule ``rule(key, t, view, params) -> message``.

    The rule is vmapped over receivers and Byzantine senders; pair ``(b, i)`` draws from
    ``fold_in(fold_in(key, b), i)``. The message must have the shape of one agent's value.
    """

    def init(key, params, values, ctx):
        del key, params, values, ctx
        return ()

    def step(key, state, params, t, values, ctx: AttackContext):
        values = jnp.asarray(values)

        def one_sender(b, sender):
            views = receiver_views(values, ctx, sender)
            keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.fold_in(key, b), i))(
                jnp.arange(values.shape[0]))
            return jax.vmap(rule, in_axes=(0, None, 0, None))(keys, t, views, params)

        num_b = ctx.byzantine.shape[0]
        msgs = jax.vmap(one_sender)(jnp.arange(num_b), ctx.byzantine)
        return msgs.astype(values.dtype), state

    return Attacker(init, step, params, name)


def _view_range(view: ReceiverView):
    """Per-coordinate min and max of the cooperative values a receiver sees."""
    m = view.cooperative.reshape(view.cooperative.shape + (1,) * (view.received.ndim - 1))
    big = jnp.finfo(view.received.dtype).max
    hi = jnp.max(jnp.where(m, view.received, -big), axis=0)
    lo = jnp.min(jnp.where(m, view.received, big), axis=0)
    any_coop = jnp.any(view.cooperative)
    own = view.received[0]
    return jnp.where(any_coop, lo, own), jnp.where(any_coop, hi, own)


def _const_rule(key, t, view, params):
    return jnp.broadcast_to(jnp.asarray(params["value"], view.received.dtype),
                            view.received.shape[1:])


def constant(value: float = 10.0) -> Attacker:
    """Every Byzantine agent sends ``value`` (params ``{"value"}``) to every receiver."""
    return stateless(_const_rule, {"value": jnp.asarray(value)}, "constant")


def _huge_rule(key, t, view, params):
    sign = jnp.where(jax.random.bernoulli(jax.random.fold_in(key, t),
                                          shape=view.received.shape[1:]), 1.0, -1.0)
    return (sign * params["magnitude"]).astype(view.received.dtype)


def huge(magnitude: float = 1e6) -> Attacker:
    """``±magnitude`` (params ``{"magnitude"}``), the sign drawn per coordinate, receiver and
    step."""
    return stateless(_huge_rule, {"magnitude": jnp.asarray(magnitude)}, "huge")


def _random_rule(key, t, view, params):
    u = jax.random.uniform(jax.random.fold_in(key, t), view.received.shape[1:],
                           dtype=view.received.dtype)
    return params["low"] + (params["high"] - params["low"]) * u


def random_values(low: float = -10.0, high: float = 10.0) -> Attacker:
    """Uniform in ``[low, high]`` (params ``{"low", "high"}``), drawn per coordinate, receiver
    and step."""
    return stateless(_random_rule, {"low": jnp.asarray(low), "high": jnp.asarray(high)},
                     "random")


def _inside_rule(key, t, view, params):
    lo, hi = _view_range(view)
    inward = params["margin"] * (hi - lo)
    return jnp.where(params["side"] >= 0, hi - inward, lo + inward)


def just_inside(side: float = 1.0, margin: float = 0.0) -> Attacker:
    """The top (``side >= 0``) or bottom edge of the cooperative values the receiver sees,
    moved inward by ``margin`` times their range (params ``{"side", "margin"}``); per
    coordinate. Inside the honest range, so no trimming rule can tell it from an honest value.
    """
    return stateless(_inside_rule, {"side": jnp.asarray(side), "margin": jnp.asarray(margin)},
                     "just_inside")


def _split_rule(inside: bool):
    def rule(key, t, view, params):
        m = view.cooperative_agents.reshape(view.cooperative_agents.shape
                                            + (1,) * (view.values.ndim - 1))
        coop_mean = jnp.sum(jnp.where(m, view.values, 0.0), axis=0) / jnp.maximum(
            jnp.sum(view.cooperative_agents), 1)
        upper = view.received[0] >= coop_mean
        if inside:
            lo, hi = _view_range(view)
        else:
            hi = jnp.broadcast_to(params["magnitude"], coop_mean.shape)
            lo = -hi
        return jnp.where(upper, hi, lo).astype(view.received.dtype)
    return rule


def split_brain(magnitude: float = 1e6, *, inside: bool = False) -> Attacker:
    """Equivocation: a receiver whose own value is at or above the mean of the cooperative
    values gets a high message, the others a low one, per coordinate — ``±magnitude`` (params
    ``{"magnitude"}``), or with ``inside=True`` the top / bottom of the cooperative values that
    receiver sees."""
    return stateless(_split_rule(bool(inside)), {"magnitude": jnp.asarray(magnitude)},
                     "split_brain_inside" if inside else "split_brain")


def _extreme_rule(key, t, view, params):
    lo, hi = _view_range(view)
    direction = jnp.broadcast_to(params["direction"], hi.shape)
    return jnp.where(direction >= 0, hi, lo)


def coordinate_extreme(direction=1.0) -> Attacker:
    """Per coordinate ``k``: the max of the cooperative values the receiver sees where
    ``direction[k] >= 0``, else the min (params ``{"direction"}``, a scalar or an array that
    broadcasts to one value's shape). Each coordinate is inside the cooperative range, but the
    vector as a whole can lie far outside the cooperative agents' convex hull."""
    return stateless(_extreme_rule, {"direction": jnp.asarray(direction)},
                     "coordinate_extreme")


def switch_attacker(attackers) -> Attacker:
    """One attacker that plays ``attackers[which]``, ``which`` a param (so it can be swept).

    Params ``{"which": int32, "each": (params of every attacker, in order)}``. Every attacker
    steps with the same key and its own state, and the chosen one's messages are sent, so attack
    ``k`` sends exactly what ``attackers[k]`` alone sends. Sweeping ``which`` runs a whole
    attack suite with one compile (``run(..., sweep=True)``) instead of one per attack; the
    price is that every attacker's messages are computed at every step.

    Example:
        >>> import jax.numpy as jnp
        >>> sw = switch_attacker([constant(1.0), constant(2.0)])
        >>> sw.params["which"].tolist(), sw.name
        (0, 'switch(constant, constant)')
    """
    attackers = tuple(attackers)
    if not attackers or not all(isinstance(a, Attacker) for a in attackers):
        raise ValueError("switch_attacker needs a non-empty list of Attacker.")

    def init(key, params, values, ctx):
        return tuple(a.init(key, p, values, ctx)
                     for a, p in zip(attackers, params["each"], strict=True))

    def step(key, state, params, t, values, ctx):
        sent, states = [], []
        for a, st, p in zip(attackers, state, params["each"], strict=True):
            m, st = a.step(key, st, p, t, values, ctx)
            sent.append(jnp.asarray(m).astype(jnp.asarray(values).dtype))
            states.append(st)
        return jnp.stack(sent)[params["which"]], tuple(states)

    params = {"which": jnp.asarray(0, jnp.int32), "each": tuple(a.params for a in attackers)}
    return Attacker(init, step, params, "switch(" + ", ".join(a.name for a in attackers) + ")")


def replace_byzantine_messages(table: NeighborTable, gathered, byzantine_slot, messages):
    """Write the Byzantine senders' messages into the gathered values.

    Args:
        table: the step's table.
        gathered: ``[N, K, ...]`` honest gathered values (own at ``k = 0``).
        byzantine_slot: ``[N]`` int32, the position of each agent in the Byzantine list, -1
            for cooperative agents.
        messages: ``[B, N, ...]`` what Byzantine sender ``b`` sends receiver ``i``.

    Returns:
        ``[N, K, ...]``: entry ``(i, k > 0)`` with a real Byzantine sender ``j = idx[i, k]``
        becomes ``messages[slot[j], i]``; own entries (``k = 0``) and padding are untouched.
        The same rule as :func:`decentral.graphs.replace_sender_messages`, for all Byzantine
        senders at once.
    """
    slot = byzantine_slot[table.idx]                                 # [N, K]
    hit = (slot >= 0) & table.mask
    hit = hit.at[:, 0].set(False)
    if messages.shape[0] == 0:
        return gathered
    rows = jnp.broadcast_to(jnp.arange(table.idx.shape[0])[:, None], slot.shape)
    msg = messages[jnp.maximum(slot, 0), rows]                       # [N, K, ...]
    hit = hit.reshape(hit.shape + (1,) * (gathered.ndim - 2))
    return jnp.where(hit, msg, gathered)
