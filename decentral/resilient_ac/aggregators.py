"""Resilient aggregation over one receiver's gathered values (W-MSR, trimmed mean, clipped mean).

Every aggregator takes the values one receiver holds after a gather, ``values [K, ...]`` with
**its own value at k = 0** and its in-neighbours' values at ``k >= 1``, and a boolean
``mask [K]`` of real entries (``mask[0]`` is True; padding entries, which repeat the own value in
a :class:`~decentral.graphs.NeighborTable`, are False and never counted). They work
element-wise over the trailing axes (each coordinate is aggregated on its own) and are
unbatched: the caller vmaps them over receivers and seeds.

All three are jit-friendly: no sort with a data-dependent length, no dynamic shapes. Each entry's
rank among the real entries is counted by pairwise comparison (``O(K^2)`` per coordinate; ties
broken by index), and the kept set is a mask. ``H`` may be a Python int or a traced integer.

The rules (``x0`` the own value, ``x_1..x_d`` the real in-neighbour values, ``K_i = d + 1``):

* :func:`wmsr` — W-MSR with the own-value rule (LeBlanc, Zhang, Koutsoukos, Sundaram, IEEE JSAC
  31(4) 2013; the aggregation of Figura, Lin, Liu, Gupta, arXiv:2111.06776): among the
  neighbour values strictly above ``x0`` drop the H largest, or all of them if fewer than H;
  likewise below ``x0``; average the remaining neighbour values together with ``x0``. Values
  equal to ``x0`` are never dropped, so the result does not depend on how ties are broken.
* :func:`trimmed_mean` — the plain element-wise trimmed mean (the "method of trimmed means"
  baseline): drop exactly the H smallest and the H largest of all ``K_i`` values, own value
  included, and average the rest. It needs ``K_i >= 2H + 1``; with fewer values nothing would
  remain, and the own value is returned.
* :func:`clipped_mean` — the clipping aggregation of the authors' later code: with ``s`` the
  sorted ``K_i`` values, ``lo = min(s[H], x0)``, ``hi = max(s[K_i - H - 1], x0)``; every value is
  clipped to ``[lo, hi]`` and all ``K_i`` are averaged (adversarial values are clipped, not
  removed). Also needs ``K_i >= 2H + 1``; with fewer values the own value is returned.
* :func:`mean` — the plain average of the real entries (no resilience; the ``H = 0`` case of all
  three).

**NaN messages.** Where values are trimmed (``H >= 1``), a received value (``k >= 1``) that is
NaN is read as ``+inf`` before anything is compared: a Byzantine sender that sends NaN is
exactly the sender of ``+inf``, the largest value there is, so it is trimmed first from the top
(W-MSR drops it among the values above the own value, the trimmed mean among the H largest, the
clipped mean clips it to the upper threshold). With at most H such senders the result is the one
the ``+inf`` attack gives, and the theory's guarantee (cooperative values stay inside the
cooperative hull) holds for it as for any Byzantine value. A NaN that is not trimmed (more such
senders than H) leaves the result non-finite, never a finite wrong number; the plain averages
(``H = 0`` with a Python-int H, and :func:`mean`) trim nothing and are left as they were (a NaN
message makes them NaN, as ``+inf`` makes them ``+inf``), which keeps their compiled arithmetic,
and so the bits of finite results, unchanged. A NaN *own* value (``k = 0``) is not a message and
is left as it is (it propagates). Eager calls with concrete values still refuse NaN and
infinite entries; under ``jit`` (inside the algorithms) the values cannot be checked and this
rule applies. Finite inputs give bit-identical results (the trimming paths read the values
through one element-wise select).

Example:
    >>> import jax.numpy as jnp
    >>> vals = jnp.array([1.0, 5.0, -7.0, 2.0, 100.0])     # own value 1.0 first
    >>> round(float(wmsr(vals, None, 1)), 5)                 # drops 100 and -7
    2.66667
    >>> round(float(trimmed_mean(vals, None, 1)), 5), round(float(clipped_mean(vals, None, 1)), 5)
    (2.66667, 2.8)
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["wmsr", "trimmed_mean", "clipped_mean", "mean", "AGGREGATORS", "AGGREGATOR_ALIASES",
           "aggregator_name", "get_aggregator", "ranks"]


_UNROLL_MAX_K = 64
"""Entry counts up to which the streaming passes are unrolled over ``k`` (beyond: fori_loop)."""


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _prepare(values, mask, H, name: str):
    """Validate (when concrete); return the values (floating), the mask broadcast over the
    trailing axes and the ``[K]`` mask itself."""
    values = jnp.asarray(values)
    if values.ndim < 1:
        raise ValueError(f"{name}: values must have a leading entry axis [K, ...]; got a scalar.")
    if not jnp.issubdtype(values.dtype, jnp.floating):
        values = values.astype(jnp.result_type(float))
    K = values.shape[0]
    if mask is None:
        mask = jnp.ones((K,), bool)
    else:
        mask = jnp.asarray(mask)
        if mask.shape != (K,):
            raise ValueError(f"{name}: mask must have shape ({K},) to match values {values.shape};"
                             f" got {mask.shape}.")
        if mask.dtype != bool:
            raise ValueError(f"{name}: mask must be boolean; got {mask.dtype}.")
        if not _is_traced(mask) and not bool(mask[0]):
            raise ValueError(f"{name}: mask[0] must be True (the receiver's own value).")
    if not _is_traced(H):
        if isinstance(H, bool) or not isinstance(H, (int, np.integer)) or H < 0:
            raise ValueError(f"{name}: H must be a non-negative int; got {H!r}.")
    if not _is_traced(values) and not bool(jnp.all(jnp.isfinite(values))):
        raise ValueError(f"{name}: values hold NaN or infinite entries.")
    m = mask.reshape((K,) + (1,) * (values.ndim - 1))
    return values, jnp.broadcast_to(m, values.shape), mask


def _received_nan_as_inf(values):
    """``values`` with every NaN at ``k >= 1`` (a received message) replaced by ``+inf``; the
    own value (``k = 0``) untouched. One element-wise select (see the module docstring)."""
    K = values.shape[0]
    received = (jnp.arange(K) > 0).reshape((K,) + (1,) * (values.ndim - 1))
    return jnp.where(received & jnp.isnan(values), jnp.asarray(jnp.inf, values.dtype), values)


def _entry(values, k, nan_as_inf: bool):
    """``values[k]``; with ``nan_as_inf`` a NaN received value (``k >= 1``) read as ``+inf``.
    The streaming paths read every entry through this, so the select fuses into each pass
    (no second copy of the values)."""
    v = values[k]
    if not nan_as_inf or (isinstance(k, int) and k == 0):
        return v
    nan = jnp.isnan(v) if isinstance(k, int) else jnp.isnan(v) & (k > 0)
    return jnp.where(nan, jnp.asarray(jnp.inf, v.dtype), v)


def _static_H(H) -> int | None:
    """``H`` as a Python int when it is static (validated by :func:`_prepare`), else None."""
    return None if _is_traced(H) else int(H)


def ranks(values, mask):
    """Ascending and descending ranks of each entry among the real entries, ties by index.

    ``rank_asc[k] = #{j real : v_j < v_k} + #{j real : v_j == v_k, j < k}`` and
    ``rank_desc[k] = #{j real : v_j > v_k} + #{j real : v_j == v_k, j < k}``; element-wise over
    trailing axes. ``mask`` is broadcast to ``values.shape``. Entries that are not real get
    ranks too (ignore them).
    """
    K = values.shape[0]
    vi, vj = values[:, None], values[None, :]
    earlier = (jnp.arange(K)[None, :] < jnp.arange(K)[:, None]).reshape(
        (K, K) + (1,) * (values.ndim - 1))
    real_j = mask[None, :]
    tie = (vj == vi) & earlier
    asc = jnp.sum(((vj < vi) | tie) & real_j, axis=1)
    desc = jnp.sum(((vj > vi) | tie) & real_j, axis=1)
    return asc, desc


# ------------------------------------------------------------------------------------------
# streaming building blocks (static H)
# ------------------------------------------------------------------------------------------


def _over_entries(start: int, K: int, body, carry):
    """``carry = body(k, carry)`` for ``k = start .. K - 1``: unrolled in Python for
    ``K <= _UNROLL_MAX_K`` (XLA fuses the whole chain), a ``fori_loop`` beyond (``k`` traced)."""
    if K <= _UNROLL_MAX_K:
        for k in range(start, K):
            carry = body(k, carry)
        return carry
    return jax.lax.fori_loop(start, K, body, carry)


def _extremes(values, mask1, start: int, L: int, nan_as_inf: bool = False):
    """The ``L`` largest (descending) and ``L`` smallest (ascending) real values among the
    entries ``k >= start``, element-wise; missing places hold ``-inf`` / ``+inf``.

    One pass over ``k``; each real value is inserted into both sorted lists by a chain of
    compare-and-swaps (the larger stays, the smaller moves on, and vice versa), so the lists stay
    sorted and hold the extremes of the values seen so far, ties included as separate places.
    """
    x0 = values[0]
    dtype = values.dtype
    neg, pos = jnp.full_like(x0, -jnp.inf), jnp.full_like(x0, jnp.inf)

    def body(k, lists):
        top, bot = lists
        v, real = _entry(values, k, nan_as_inf), mask1[k]
        c = jnp.where(real, v, jnp.asarray(-jnp.inf, dtype))
        new_top = []
        for t in top:
            new_top.append(jnp.maximum(t, c))
            c = jnp.minimum(t, c)
        c = jnp.where(real, v, jnp.asarray(jnp.inf, dtype))
        new_bot = []
        for b in bot:
            new_bot.append(jnp.minimum(b, c))
            c = jnp.maximum(b, c)
        return tuple(new_top), tuple(new_bot)

    return _over_entries(start, values.shape[0], body, ((neg,) * L, (pos,) * L))


def _sum_between(values, mask1, start: int, t_lo, t_hi, nan_as_inf: bool = False):
    """One pass over the entries ``k >= start``: the sum and count of the real values strictly
    inside ``(t_lo, t_hi)`` and the count of the real values ``>= t_hi`` (counts int32)."""
    x0 = values[0]
    zero = jnp.zeros(x0.shape, jnp.int32)

    def body(k, carry):
        total, n_in, n_ge = carry
        v, real = _entry(values, k, nan_as_inf), mask1[k]
        below_hi = v < t_hi
        inside = real & below_hi & (v > t_lo)
        return (total + jnp.where(inside, v, jnp.zeros((), values.dtype)),
                n_in + inside.astype(jnp.int32),
                n_ge + (real & ~below_hi).astype(jnp.int32))

    return _over_entries(start, values.shape[0], body,
                         (jnp.zeros_like(x0), zero, zero))


def _copies(t, n):
    """``n`` copies of ``t`` summed (``n >= 0`` int; 0 where ``n == 0``, even for ``t`` inf)."""
    return jnp.where(n > 0, t, jnp.zeros((), t.dtype)) * n.astype(t.dtype)


def _mean_streaming(values, mask1):
    """The plain average of the real entries, one pass over ``k``."""
    zero = jnp.zeros((), values.dtype)

    def body(k, total):
        return total + jnp.where(mask1[k], values[k], zero)

    total = _over_entries(0, values.shape[0], body, jnp.zeros_like(values[0]))
    return total / jnp.sum(mask1.astype(jnp.int32)).astype(values.dtype)


def _wmsr_streaming(values, mask1, H: int):
    K = values.shape[0]
    H = min(H, K - 1)                          # no more than K - 1 neighbours can be dropped
    if H == 0:
        return _mean_streaming(values, mask1)
    x0 = values[0]
    top, bot = _extremes(values, mask1, 1, H, True)  # neighbour values only (NaN as +inf)
    # dropped: top[h] where above x0 (at most H, the largest), bot[h] where below; the smallest
    # dropped value above is t_hi, the largest below t_lo (+-inf when nothing is dropped).
    # Every value strictly beyond a threshold is dropped, so the kept values are those strictly
    # inside (t_lo, t_hi) plus the copies of t_hi / t_lo that were not dropped.
    t_hi, t_lo = jnp.full_like(x0, jnp.inf), jnp.full_like(x0, -jnp.inf)
    n_up = n_dn = jnp.zeros(x0.shape, jnp.int32)
    for t, b in zip(top, bot, strict=True):
        up, dn = t > x0, b < x0
        t_hi, t_lo = jnp.where(up, t, t_hi), jnp.where(dn, b, t_lo)   # lists run outwards-in
        n_up, n_dn = n_up + up.astype(jnp.int32), n_dn + dn.astype(jnp.int32)
    total, n_in, n_ge = _sum_between(values, mask1, 1, t_lo, t_hi, True)
    n_real = jnp.sum(mask1[1:].astype(jnp.int32))
    kept_hi = n_ge - n_up                              # copies of t_hi kept (>= 0)
    kept_lo = n_real - n_dn - n_in - n_ge              # #(real <= t_lo) - n_dn
    total = x0 + total + _copies(t_hi, kept_hi) + _copies(t_lo, kept_lo)
    return total / (1 + n_real - n_up - n_dn).astype(values.dtype)


def _trimmed_streaming(values, mask1, H: int):
    K = values.shape[0]
    x0 = values[0]
    if 2 * H + 1 > K:                          # never 2H + 1 real values
        return x0
    if H == 0:
        return _mean_streaming(values, mask1)
    top, bot = _extremes(values, mask1, 0, H, True)  # all real values, own included
    t_hi, t_lo = top[-1], bot[-1]              # the H-th largest / smallest
    total, n_in, n_ge = _sum_between(values, mask1, 0, t_lo, t_hi, True)
    count = jnp.sum(mask1.astype(jnp.int32))
    kept = count - 2 * H
    kept_hi = n_ge - H                         # everything above t_hi is among the H dropped
    kept_lo = kept - n_in - kept_hi
    avg = (total + _copies(t_hi, kept_hi) + _copies(t_lo, kept_lo)) / jnp.maximum(
        kept, 1).astype(values.dtype)
    avg = jnp.where(t_lo == t_hi, t_hi, avg)   # every kept value equals the common threshold
    return jnp.where(kept > 0, avg, x0)


def _clipped_streaming(values, mask1, H: int):
    K = values.shape[0]
    x0 = values[0]
    if 2 * H + 1 > K:
        return x0
    if H == 0:
        return _mean_streaming(values, mask1)
    top, bot = _extremes(values, mask1, 0, H + 1, True)
    lo = jnp.minimum(bot[-1], x0)              # s[H]
    hi = jnp.maximum(top[-1], x0)              # s[K_i - H - 1]

    def body(k, total):
        v = _entry(values, k, True)
        return total + jnp.where(mask1[k], jnp.minimum(jnp.maximum(v, lo), hi),
                                 jnp.zeros((), values.dtype))

    total = _over_entries(0, K, body, jnp.zeros_like(x0))
    count = jnp.sum(mask1.astype(jnp.int32))
    return jnp.where(count >= 2 * H + 1, total / count.astype(values.dtype), x0)


# ------------------------------------------------------------------------------------------
# the aggregators
# ------------------------------------------------------------------------------------------


def wmsr(values, mask, H):
    """W-MSR with the own-value rule over ``values [K, ...]`` (own value at ``k = 0``).

    Neighbour values above the own value: the H largest are dropped (all of them if fewer than H
    lie above); below: the H smallest (all if fewer); the kept neighbour values are averaged
    with the own value, uniformly. ``H = 0`` is the plain mean of the real entries.

    With a Python-int ``H`` the streaming path runs (top-H / bottom-H lists, then the kept values
    summed directly; ``O(K H)``); with a traced ``H`` the pairwise-rank path (``O(K^2)``). See
    the module docstring.

    Args:
        values: ``[K, ...]`` gathered values, own value first. A NaN received value
            (``k >= 1``) is trimmed as ``+inf`` (module docstring): with at most H of them the
            result is the one ``+inf`` messages give.
        mask: ``[K]`` bool of real entries (``mask[0]`` True), or None for all real.
        H: the number of Byzantine in-neighbours tolerated (int >= 0, may be traced).

    Returns:
        ``[...]`` the aggregate.

    Example:
        >>> import jax.numpy as jnp
        >>> float(wmsr(jnp.array([0.0, 1.0, 2.0]), None, 1))   # 2 dropped, 1 kept: (0 + 1) / 2
        0.5
    """
    values, m, mask1 = _prepare(values, mask, H, "wmsr")
    h = _static_H(H)
    if h is not None:
        return _wmsr_streaming(values, mask1, h)
    values = _received_nan_as_inf(values)
    nb = m.at[0].set(False)
    x0 = values[0]
    asc, desc = ranks(values, nb)
    drop = ((values > x0) & (desc < H)) | ((values < x0) & (asc < H))
    keep = nb & ~drop
    total = x0 + jnp.sum(jnp.where(keep, values, 0.0), axis=0)
    return total / (1.0 + jnp.sum(keep, axis=0).astype(values.dtype))


def trimmed_mean(values, mask, H):
    """Element-wise trimmed mean: drop exactly the H smallest and H largest of all real values
    (own included), average the rest; the own value when fewer than ``2H + 1`` are real.

    Streaming with a Python-int ``H``, pairwise ranks with a traced one (as :func:`wmsr`).
    Args and returns as :func:`wmsr`.
    """
    values, m, mask1 = _prepare(values, mask, H, "trimmed_mean")
    h = _static_H(H)
    if h is not None:
        return _trimmed_streaming(values, mask1, h)
    values = _received_nan_as_inf(values)
    count = jnp.sum(m, axis=0)
    asc, _ = ranks(values, m)
    keep = m & (asc >= H) & (asc < count - H)
    kept = jnp.sum(keep, axis=0)
    avg = jnp.sum(jnp.where(keep, values, 0.0), axis=0) / jnp.maximum(kept, 1).astype(
        values.dtype)
    return jnp.where(kept > 0, avg, values[0])


def clipped_mean(values, mask, H):
    """Clipped mean (the authors' later aggregation): clip every real value to
    ``[min(s[H], x0), max(s[K_i - H - 1], x0)]`` (``s`` sorted) and average all of them; the own
    value when fewer than ``2H + 1`` are real.

    Streaming with a Python-int ``H`` (lists of the ``H + 1`` extremes), pairwise ranks with a
    traced one (as :func:`wmsr`). Args and returns as :func:`wmsr`.
    """
    values, m, mask1 = _prepare(values, mask, H, "clipped_mean")
    h = _static_H(H)
    if h is not None:
        return _clipped_streaming(values, mask1, h)
    values = _received_nan_as_inf(values)
    count = jnp.sum(m, axis=0)
    asc, _ = ranks(values, m)

    def at_rank(r):
        return jnp.sum(jnp.where(m & (asc == r), values, 0.0), axis=0)

    x0 = values[0]
    lo = jnp.minimum(at_rank(H), x0)
    hi = jnp.maximum(at_rank(count - H - 1), x0)
    clipped = jnp.clip(values, lo, hi)
    avg = jnp.sum(jnp.where(m, clipped, 0.0), axis=0) / count.astype(values.dtype)
    return jnp.where(count >= 2 * H + 1, avg, x0)


def mean(values, mask, H=0):
    """Plain average of the real entries (no trimming; ``H`` is accepted and ignored). Nothing
    is trimmed, so a NaN message makes the average NaN (module docstring).

    Args and returns as :func:`wmsr`.
    """
    values, _, mask1 = _prepare(values, mask, H, "mean")
    return _mean_streaming(values, mask1)


#: The one registry of the family's aggregators, by name: the ``aggregator=`` argument of
#: :func:`~decentral.resilient_ac.resilient_consensus` and
#: :func:`~decentral.resilient_ac.linear_actor_critic`, and the ``aggregator`` /
#: ``hidden_aggregator`` flags of the MLP learners'
#: :class:`~decentral.resilient_ac.learning.mlp.Variant`.
AGGREGATORS: dict[str, Callable] = {
    "wmsr": wmsr,
    "trimmed_mean": trimmed_mean,
    "clipped_mean": clipped_mean,
    "mean": mean,
}

#: Older names accepted everywhere a registry name is (the MLP variants' short names, kept so
#: the labelled variants and user code written with them keep working): alias -> name.
AGGREGATOR_ALIASES: dict[str, str] = {"trimmed": "trimmed_mean", "clipped": "clipped_mean"}


def aggregator_name(aggregator: str) -> str:
    """The registry name of ``aggregator`` (a name of :data:`AGGREGATORS` or an alias of
    :data:`AGGREGATOR_ALIASES`).

    Raises:
        ValueError: an unknown name.

    Example:
        >>> aggregator_name("trimmed"), aggregator_name("wmsr")
        ('trimmed_mean', 'wmsr')
    """
    if isinstance(aggregator, str):
        name = AGGREGATOR_ALIASES.get(aggregator, aggregator)
        if name in AGGREGATORS:
            return name
    raise ValueError(f"unknown aggregator {aggregator!r}; use one of {sorted(AGGREGATORS)} "
                     f"(aliases {sorted(AGGREGATOR_ALIASES)}) or a callable (values, mask, H).")


def get_aggregator(aggregator: str | Callable) -> Callable:
    """The aggregator of a name in :data:`AGGREGATORS` (or an alias of
    :data:`AGGREGATOR_ALIASES`), or a callable ``(values, mask, H)`` itself.

    Example:
        >>> get_aggregator("clipped") is clipped_mean is get_aggregator("clipped_mean")
        True
    """
    if callable(aggregator):
        return aggregator
    return AGGREGATORS[aggregator_name(aggregator)]
