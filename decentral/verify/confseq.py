"""Anytime-valid confidence sequences for the mean of bounded samples.

A *confidence sequence* is a sequence of intervals ``C_1, C_2, ...`` that hold the mean at every
sample size at once: ``P(mu in C_t for all t) >= 1 - alpha``. A check may therefore look after
every seed and stop whenever it likes, and the interval it stops on still has its stated error
rate; a fixed-``n`` interval checked that way has none.

:func:`empirical_bernstein_cs` is the predictable plug-in empirical-Bernstein sequence of
Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting" (JRSS B 86(1),
2024), Theorem 2 and equations (13)-(15). For samples ``x_i`` rescaled into [0, 1]:

* running estimates ``m_t = (1/2 + sum_{i<=t} x_i) / (t + 1)`` and
  ``s2_t = (1/4 + sum_{i<=t} (x_i - m_i)^2) / (t + 1)`` (``m_0 = 1/2``, ``s2_0 = 1/4``);
* predictable bets ``l_t = min(sqrt(2 ln(2/alpha) / (s2_{t-1} t ln(1 + t))), c)``, ``c = 1/2``;
* ``v_t = 4 (x_t - m_{t-1})^2`` and ``psi(l) = (-ln(1 - l) - l) / 4``;
* ``C_t = sum l_i x_i / sum l_i  ±  (ln(2/alpha) + sum v_i psi(l_i)) / sum l_i``,

intersected over ``t`` (the running intersection is a confidence sequence too; where it would
be empty, an event of probability at most ``alpha``, the step's own interval is kept) and
clipped to [0, 1]. It needs only independence (or a common conditional mean) and the range;
its width tracks the sample variance, not the range, once ``t`` is large.

Example:
    >>> import numpy as np
    >>> x = np.random.default_rng(0).uniform(size=2000)
    >>> lo, hi = empirical_bernstein_cs(x, (0.0, 1.0), alpha=0.05)
    >>> bool(lo[-1] < 0.5 < hi[-1]), bool(hi[-1] - lo[-1] < 0.1)
    (True, True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from decentral.verify.stats import _as_samples, _open_unit, _real

__all__ = ["empirical_bernstein_cs"]


def empirical_bernstein_cs(samples: Any, value_range: tuple[float, float], alpha: float = 0.05,
                           *, max_bet: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Running lower and upper ends of the empirical-Bernstein confidence sequence.

    Args:
        samples: 1-D array of i.i.d. samples in the order they were drawn (seed 0 first).
        value_range: ``(lower, upper)``, an interval no sample can leave (a pull count in
            ``(0, T)``, a reward in ``(0, 1)``). Samples outside it are an error: the bound would
            be false.
        alpha: the error rate, in (0, 1): the intervals hold the mean at every ``t`` together
            with probability at least ``1 - alpha``. Default 0.05.
        max_bet: the cap ``c`` on the bets ``l_t``, in (0, 1); 1/2 as in the paper's experiments.

    Returns:
        ``(lo, hi)``, arrays of the sample count's length in the samples' units; entry ``t - 1``
        is the interval after ``t`` samples.

    Raises:
        ValueError: samples not a non-empty 1-D finite array, outside ``value_range``, a range
            that is not ``lower < upper``, ``alpha`` or ``max_bet`` outside (0, 1).
    """
    alpha = _open_unit(alpha, "alpha")
    max_bet = _open_unit(max_bet, "max_bet")
    try:
        lower, upper = value_range
    except (TypeError, ValueError):
        raise ValueError(f"value_range must be a pair (lower, upper); got {value_range!r}.") \
            from None
    lower, upper = _real(lower, "value_range[0]"), _real(upper, "value_range[1]")
    if not lower < upper:
        raise ValueError(f"value_range must have lower < upper; got {value_range!r}.")
    arr = _as_samples(samples)
    if arr.ndim != 1:
        raise ValueError(f"samples must be 1-D (one value per seed, in seed order); got shape "
                         f"{arr.shape}.")
    if np.any(arr < lower) or np.any(arr > upper):
        raise ValueError(f"samples must lie within value_range [{lower}, {upper}]; they span "
                         f"[{arr.min()}, {arr.max()}].")
    x = (arr - lower) / (upper - lower)
    n = x.size
    t = np.arange(1, n + 1, dtype=np.float64)
    m = (0.5 + np.cumsum(x)) / (t + 1.0)                       # m_1 .. m_n
    m_prev = np.concatenate([[0.5], m[:-1]])                   # m_0 .. m_{n-1}
    s2 = (0.25 + np.cumsum((x - m) ** 2)) / (t + 1.0)
    s2_prev = np.concatenate([[0.25], s2[:-1]])
    log_term = math.log(2.0 / alpha)
    bets = np.minimum(np.sqrt(2.0 * log_term / (s2_prev * t * np.log1p(t))), max_bet)
    v = 4.0 * (x - m_prev) ** 2
    psi = (-np.log1p(-bets) - bets) / 4.0
    bet_sum = np.cumsum(bets)
    centre = np.cumsum(bets * x) / bet_sum
    margin = (log_term + np.cumsum(v * psi)) / bet_sum
    lo_t, hi_t = np.clip(centre - margin, 0.0, 1.0), np.clip(centre + margin, 0.0, 1.0)
    lo, hi = np.maximum.accumulate(lo_t), np.minimum.accumulate(hi_t)
    # An empty intersection (probability <= alpha) keeps that step's own interval.
    empty = lo > hi
    lo, hi = np.where(empty, lo_t, lo), np.where(empty, hi_t, hi)
    return lower + (upper - lower) * lo, lower + (upper - lower) * hi
