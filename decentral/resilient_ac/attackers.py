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

**Return order.** The library's step functions return ``(state, info)``; an attacker's
``step`` historically returns ``(messages, state)``, and every attacker written that way keeps
working (``Attacker.state_first = False``, the default). A new attacker may return
``(state, messages)``, the library's order, by setting ``state_first=True``. The algorithms
never read ``step`` directly: they call :meth:`Attacker.advance`, which returns
``(state, messages)`` whichever order ``step`` uses.

**Checked params.** ``Attacker.check_params`` (optional, default None) is
``check_params(params) -> None``, raising ``ValueError`` for params the attacker cannot use
(e.g. :func:`switch_attacker`'s selector out of range, which the gather would clamp to the last
attacker). The algorithms of the family call :meth:`Attacker.validate_params` on the attacker
params of every run (each swept value too): it checks that the params have the pytree structure
of the defaults, then calls ``check_params``; the message names ``params.attacker``.

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
import numpy as np

from decentral._checks import check_index
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
        step: ``(key, state, params, t, values, ctx) -> (messages [B, N, ...], state)``, or
            ``(state, messages)`` when ``state_first`` (the library's ``(state, info)`` order).
            Call :meth:`advance` rather than ``step`` to get one order whatever the flag.
        params: the default params (a pytree of arrays; swept like any params).
        name: a readable name (reports, figure legends).
        check_params: None, or ``check_params(params) -> None`` raising ``ValueError`` for
            params this attacker cannot use (called through :meth:`validate_params` by the
            algorithms' ``check_params`` on every run's attacker params).
        state_first: False (default, the historical order): ``step`` returns
            ``(messages, state)``; True: it returns ``(state, messages)``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> def step(key, state, params, t, values, ctx):     # the library's order
        ...     return state + 1, jnp.zeros((1,) + values.shape, values.dtype)
        >>> att = Attacker(lambda k, p, v, c: 0, step, {}, "counter", state_first=True)
        >>> att.advance(None, 0, {}, 0, jnp.zeros(3), None)[0]
        1
    """

    init: Callable[..., Any]
    step: Callable[..., tuple[Any, Any]]
    params: Any
    name: str
    check_params: Callable[[Any], None] | None = None
    state_first: bool = False

    def advance(self, key, state, params, t, values, ctx) -> tuple[Any, Any]:
        """One step in the library's order: ``(new state, messages [B, N, ...])``, whichever
        order :attr:`step` returns (see :attr:`state_first`)."""
        out = self.step(key, state, params, t, values, ctx)
        if self.state_first:
            return out[0], out[1]
        return out[1], out[0]

    def validate_params(self, params, name: str = "params.attacker") -> None:
        """Check the params a run gives this attacker (None: the defaults): the pytree
        structure of :attr:`params` (the keys a rule reads), then :attr:`check_params`.

        Raises:
            ValueError: naming ``name`` and the attacker.
        """
        if params is None:
            params = self.params
        want = jax.tree_util.tree_structure(self.params)
        got = jax.tree_util.tree_structure(params)
        if want != got:
            raise ValueError(f"{name} does not have the structure of attacker {self.name!r}'s "
                             f"params: expected {want}, got {got}. Start from its defaults "
                             f"(attacker.params) and replace values.")
        if self.check_params is None:
            return
        try:
            self.check_params(params)
        except ValueError as exc:
            raise ValueError(f"{name} (attacker {self.name!r}): {exc}") from None


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


def stateless(rule: Callable[..., jax.Array], params: Any, name: str, *,
              check_params: Callable[[Any], None] | None = None) -> Attacker:
    """An :class:`Attacker` from an unbatched rule ``rule(key, t, view, params) -> message``.

    The rule is vmapped over receivers and Byzantine senders; pair ``(b, i)`` draws from
    ``fold_in(fold_in(key, b), i)``. The message must have the shape of one agent's value.
    ``check_params`` is the attacker's check of its params (see :class:`Attacker`).
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

    return Attacker(init, step, params, name, check_params)


def _numbers(*keys: str) -> Callable[[Any], None]:
    """A ``check_params`` requiring real numbers (no bool, string or object) under ``keys``."""

    def check(params) -> None:
        for k in keys:
            arr = np.asarray(params[k])
            if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) or \
                    np.issubdtype(arr.dtype, np.complexfloating):
                raise ValueError(f"[{k!r}] must hold real numbers; got dtype {arr.dtype}.")

    return check


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
    return stateless(_const_rule, {"value": jnp.asarray(value)}, "constant",
                     check_params=_numbers("value"))


def _huge_rule(key, t, view, params):
    sign = jnp.where(jax.random.bernoulli(jax.random.fold_in(key, t),
                                          shape=view.received.shape[1:]), 1.0, -1.0)
    return (sign * params["magnitude"]).astype(view.received.dtype)


def huge(magnitude: float = 1e6) -> Attacker:
    """``±magnitude`` (params ``{"magnitude"}``), the sign drawn per coordinate, receiver and
    step."""
    return stateless(_huge_rule, {"magnitude": jnp.asarray(magnitude)}, "huge",
                     check_params=_numbers("magnitude"))


def _random_rule(key, t, view, params):
    u = jax.random.uniform(jax.random.fold_in(key, t), view.received.shape[1:],
                           dtype=view.received.dtype)
    return params["low"] + (params["high"] - params["low"]) * u


def random_values(low: float = -10.0, high: float = 10.0) -> Attacker:
    """Uniform in ``[low, high]`` (params ``{"low", "high"}``), drawn per coordinate, receiver
    and step."""
    return stateless(_random_rule, {"low": jnp.asarray(low), "high": jnp.asarray(high)},
                     "random", check_params=_check_random)


def _check_random(params) -> None:
    _numbers("low", "high")(params)
    lo, hi = np.asarray(params["low"]), np.asarray(params["high"])
    if np.any(lo > hi):
        raise ValueError(f"['low'] must not exceed ['high'] (uniform in [low, high]); got "
                         f"low = {lo.tolist()}, high = {hi.tolist()}.")


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
                     "just_inside", check_params=_numbers("side", "margin"))


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
                     "split_brain_inside" if inside else "split_brain",
                     check_params=_numbers("magnitude"))


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
                     "coordinate_extreme", check_params=_numbers("direction"))


def switch_attacker(attackers) -> Attacker:
    """One attacker that plays ``attackers[which]``, ``which`` a param (so it can be swept).

    Params ``{"which": int32, "each": (params of every attacker, in order)}``. Every attacker
    steps with the same key and its own state, and the chosen one's messages are sent, so attack
    ``k`` sends exactly what ``attackers[k]`` alone sends. Sweeping ``which`` runs a whole
    attack suite with one compile (``run(..., sweep=True)``) instead of one per attack; the
    price is that every attacker's messages are computed at every step.

    Its ``check_params`` refuses a ``which`` that is not an integer scalar in
    ``[0, len(attackers))`` (a bool or a float is refused, not truncated; an index past the end
    would be clamped by the gather to the last attacker, a negative one read from the end), and
    checks every attacker's params in ``each`` with that attacker's own check.

    Example:
        >>> import jax.numpy as jnp
        >>> sw = switch_attacker([constant(1.0), constant(2.0)])
        >>> sw.params["which"].tolist(), sw.name
        (0, 'switch(constant, constant)')
        >>> try:
        ...     sw.validate_params({"which": jnp.int32(2), "each": sw.params["each"]})
        ... except ValueError as e:
        ...     print(str(e)[:70])
        params.attacker (attacker 'switch(constant, constant)'): ['which'] = 2
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
            st, m = a.advance(key, st, p, t, values, ctx)
            sent.append(jnp.asarray(m).astype(jnp.asarray(values).dtype))
            states.append(st)
        return jnp.stack(sent)[params["which"]], tuple(states)

    def check_params(params) -> None:
        which = params["which"]
        if np.ndim(which) != 0:
            raise ValueError(f"['which'] must be one integer (sweep it with a leading sweep "
                             f"axis); got shape {np.shape(which)}.")
        check_index(which, "['which']", len(attackers),
                    hint=f"['which'] selects one of the {len(attackers)} attackers.")
        each = params["each"]
        for k, (a, p) in enumerate(zip(attackers, each, strict=True)):
            a.validate_params(p, name=f"['each'][{k}]")

    params = {"which": jnp.asarray(0, jnp.int32), "each": tuple(a.params for a in attackers)}
    return Attacker(init, step, params, "switch(" + ", ".join(a.name for a in attackers) + ")",
                    check_params)


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
