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

__all__ = ["wmsr", "trimmed_mean", "clipped_mean", "mean", "AGGREGATORS", "get_aggregator",
           "ranks"]


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _prepare(values, mask, H, name: str):
    """Validate (when concrete) and broadcast the mask over the trailing axes."""
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
    return values, jnp.broadcast_to(m, values.shape)


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


def wmsr(values, mask, H):
    """W-MSR with the own-value rule over ``values [K, ...]`` (own value at ``k = 0``).

    Neighbour values above the own value: the H largest are dropped (all of them if fewer than H
    lie above); below: the H smallest (all if fewer); the kept neighbour values are averaged
    with the own value, uniformly. ``H = 0`` is the plain mean of the real entries.

    Args:
        values: ``[K, ...]`` gathered values, own value first.
        mask: ``[K]`` bool of real entries (``mask[0]`` True), or None for all real.
        H: the number of Byzantine in-neighbours tolerated (int >= 0, may be traced).

    Returns:
        ``[...]`` the aggregate.

    Example:
        >>> import jax.numpy as jnp
        >>> float(wmsr(jnp.array([0.0, 1.0, 2.0]), None, 1))   # 2 dropped, 1 kept: (0 + 1) / 2
        0.5
    """
    values, m = _prepare(values, mask, H, "wmsr")
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

    Args and returns as :func:`wmsr`.
    """
    values, m = _prepare(values, mask, H, "trimmed_mean")
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

    Args and returns as :func:`wmsr`.
    """
    values, m = _prepare(values, mask, H, "clipped_mean")
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
    """Plain average of the real entries (no trimming; ``H`` is accepted and ignored).

    Args and returns as :func:`wmsr`.
    """
    values, m = _prepare(values, mask, H, "mean")
    return jnp.sum(jnp.where(m, values, 0.0), axis=0) / jnp.sum(m, axis=0).astype(values.dtype)


#: Aggregators by name (the ``aggregator=`` argument of the algorithms of this family).
AGGREGATORS: dict[str, Callable] = {
    "wmsr": wmsr,
    "trimmed_mean": trimmed_mean,
    "clipped_mean": clipped_mean,
    "mean": mean,
}


def get_aggregator(aggregator: str | Callable) -> Callable:
    """The aggregator of a name in :data:`AGGREGATORS`, or a callable ``(values, mask, H)``."""
    if callable(aggregator):
        return aggregator
    if aggregator not in AGGREGATORS:
        raise ValueError(f"unknown aggregator {aggregator!r}; use one of "
                         f"{sorted(AGGREGATORS)} or a callable (values, mask, H).")
    return AGGREGATORS[aggregator]
