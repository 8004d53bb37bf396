"""Upper-confidence indices, written unbatched (one agent, or one arm) and jit-able.

* :func:`ucb_index` — ``xbar_k + sqrt(alpha ln t / n_k)`` (UCB1 of Auer, Cesa-Bianchi, Fischer,
  Machine Learning 47, 2002, is ``alpha = 2``);
* :func:`bernoulli_kl` — ``kl(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))``;
* :func:`kl_ucb_index` — ``max{q in [p, 1] : kl(p, q) <= budget}`` by fixed-iteration bisection
  (Garivier & Cappé, COLT 2011, with ``budget = (ln t + c ln ln t) / n``).

Example:
    >>> import jax.numpy as jnp
    >>> round(float(ucb_index(jnp.array([0.5]), jnp.array([4]), jnp.log(10.0), 2.0)[0]), 4)
    1.573
    >>> round(float(kl_ucb_index(0.5, 0.1)), 4)
    0.7129
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

__all__ = ["ucb_index", "bernoulli_kl", "kl_ucb_index", "kl_clip", "check_index_floor",
           "apply_index_floor", "BISECTION_STEPS",
           "BISECTION_STEPS_FLOAT32"]

#: Default bisection steps of :func:`kl_ucb_index` in float64: the bracket shrinks by
#: ``2^-50 < 1e-15``.
BISECTION_STEPS = 50
#: The same in float32 (``2^-30 < 1e-9``, below float32 resolution).
BISECTION_STEPS_FLOAT32 = 30


def ucb_index(means, counts, log_t, exploration_alpha):
    """``means + sqrt(exploration_alpha * log_t / counts)`` elementwise.

    Args:
        means: float ``[M]`` sample means. counts: int ``[M]`` pull counts (``>= 1``).
        log_t: the clock's logarithm (:func:`~decentral.bandits.policy.log_time`).
        exploration_alpha: ``alpha >= 0``.
    """
    dtype = means.dtype
    width = jnp.sqrt(jnp.asarray(exploration_alpha, dtype) * jnp.asarray(log_t, dtype)
                     / counts.astype(dtype))
    return means + width


def kl_clip(dtype) -> float:
    """The clipping margin of :func:`bernoulli_kl`: ``1e-12`` in float64, ``1e-7`` in float32
    (where ``1 - 1e-12`` rounds to 1)."""
    return 1e-12 if jnp.dtype(dtype).itemsize >= 8 else 1e-7


def bernoulli_kl(p, q):
    """Bernoulli KL divergence ``kl(p, q)``, with ``q`` clipped to ``[eps, 1 - eps]``
    (:func:`kl_clip`) and ``0 ln 0 = 0``, so it is finite for every ``p, q in [0, 1]``; computed
    as a sum of two non-negative terms (no cancellation, non-negative, monotone in ``q`` on each
    side of ``p``).

    Example:
        >>> round(float(bernoulli_kl(0.5, 0.5)), 12), round(float(bernoulli_kl(1.0, 0.5)), 4)
        (0.0, 0.6931)
    """
    p = jnp.asarray(p)
    q = jnp.asarray(q)
    dtype = jnp.result_type(p, q, jnp.zeros(()).dtype)
    p = jnp.clip(p.astype(dtype), 0.0, 1.0)
    eps = kl_clip(dtype)
    q = jnp.clip(q.astype(dtype), eps, 1.0 - eps)
    # kl = -p ln(1 + d/p) - (1-p) ln(1 - d/(1-p)) with d = q - p; adding p (d/p) + (1-p)
    # (-d/(1-p)) = 0 makes both terms x - ln(1 + x) >= 0: no cancellation between them, and
    # kl(p, .) stays monotone near q = p in float32. At p = 0 (p = 1) the first (second)
    # term's limit is d (-d).
    d = q - p
    inside_low = p > 0
    inside_high = p < 1
    a = d / jnp.where(inside_low, p, 1)
    b = -d / jnp.where(inside_high, 1 - p, 1)
    low = jnp.where(inside_low, p * (a - jnp.log1p(a)), d)
    high = jnp.where(inside_high, (1 - p) * (b - jnp.log1p(b)), -d)
    return low + high


def kl_ucb_index(mean, budget, steps: int | None = None):
    """``max{q in [p, 1] : kl(p, q) <= budget}`` with ``p = clip(mean, 0, 1)``.

    ``kl(p, .)`` increases on ``[p, 1]``, and Pinsker's inequality ``kl(p, q) >= 2 (q - p)^2``
    puts the index below ``p + sqrt(budget / 2)``; bisection on ``[p, min(1, p +
    sqrt(budget / 2))]`` for ``steps`` iterations (static, jit- and vmap-friendly) returns the
    largest bracket end known to be feasible, at most ``2^-steps`` times the bracket below the
    true index. A budget ``<= 0`` (or NaN) gives ``p``.

    Args:
        mean: sample mean (any shape; broadcast with ``budget``).
        budget: ``(ln t + c ln ln t) / n`` (already divided by the count).
        steps: bisection iterations (static); None: :data:`BISECTION_STEPS` (50) in float64,
            :data:`BISECTION_STEPS_FLOAT32` (30) in float32, both below round-off.

    Example:
        >>> round(float(kl_ucb_index(0.3, 0.0)), 6), round(float(kl_ucb_index(1.0, 5.0)), 6)
        (0.3, 1.0)
    """
    mean = jnp.asarray(mean)
    dtype = jnp.result_type(mean, jnp.zeros(()).dtype)
    if steps is None:
        steps = BISECTION_STEPS if jnp.dtype(dtype).itemsize >= 8 else BISECTION_STEPS_FLOAT32
    p = jnp.clip(mean.astype(dtype), 0.0, 1.0)
    budget = jnp.asarray(budget, dtype)
    budget = jnp.where(budget > 0, budget, jnp.zeros((), dtype))
    shape = jnp.broadcast_shapes(p.shape, budget.shape)
    p = jnp.broadcast_to(p, shape)
    budget = jnp.broadcast_to(budget, shape)
    lo = p
    hi = jnp.minimum(p + jnp.sqrt(budget / 2), 1.0)      # Pinsker: infeasible beyond

    def halve(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        ok = bernoulli_kl(p, mid) <= budget
        return jnp.where(ok, mid, lo), jnp.where(ok, hi, mid)

    # a static trip count: one loop body to trace and compile, not `steps` copies of it
    lo, hi = lax.fori_loop(0, int(steps), halve, (lo, hi))
    # the right end is feasible itself when it never moved and kl(p, hi) <= budget (hi = 1
    # with kl(p, 1 - eps) <= budget); a zero budget gives p
    index = jnp.where(bernoulli_kl(p, hi) <= budget, hi, lo)
    return jnp.where(budget > 0, index, p)


def check_index_floor(index_floor) -> float | None:
    """``None``, or the authors'-code KL index floor as a float in ``[0, 1)`` (``ValueError``
    otherwise)."""
    if index_floor is None:
        return None
    if isinstance(index_floor, bool) or not isinstance(index_floor, (int, float)) or \
            not (0 <= index_floor < 1):
        raise ValueError(f"index_floor must be None or a number in [0, 1); got {index_floor!r}.")
    return float(index_floor)


def apply_index_floor(index, mean, floor: float | None):
    """``max(index, min(clip(mean, 0, 1) + floor, 1 - 1e-6))``: the authors' Newton iteration
    starts at ``min(mean + floor, 1 - 1e-6)`` and never goes below it (``floor`` None: the
    index unchanged)."""
    if floor is None:
        return index
    top = jnp.asarray(1 - 1e-6, index.dtype)
    return jnp.maximum(index, jnp.minimum(jnp.clip(mean, 0, 1) + floor, top))
