"""Tail diagnostics of Monte-Carlo samples: how much of a sample mean its largest seeds carry.

A confidence interval from the central limit theorem assumes the sample mean is close to
normal. Per-seed squared errors of stochastic approximation can have a heavy right tail: a few
seeds then carry much of the mean, the sample mean of a few dozen seeds usually falls *below*
the true mean, and the interval misses it far more often than its nominal level says.
:func:`top_share` measures this on the samples themselves.

Reference values (derived in the docs page on claims and verdicts): for samples with an
exponential distribution the share carried by the largest fraction ``q`` tends to
``q (1 + ln(1/q))`` as the seed count grows, 5.6 % for ``q = 0.01``; for a distribution with
a Pareto tail of index ``a > 1`` it tends to ``q^(1 - 1/a)``, 21.5 % for ``q = 0.01`` and
``a = 1.5``.

Example:
    >>> import numpy as np
    >>> top_share(np.array([1.0, 1.0, 1.0, 97.0]), fraction=0.25)
    0.97
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from decentral._checks import check_int
from decentral.verify.stats import _as_samples

__all__ = ["top_share", "exponential_top_share"]


def top_share(samples: Any, fraction: float = 0.01) -> float:
    """Share of the sum of non-negative samples carried by the largest ``ceil(fraction * n)``
    of them (at least one).

    Args:
        samples: 1-D array of non-negative, finite values (one per seed, e.g. a squared error).
        fraction: the fraction of seeds counted from the top, in (0, 1].

    Returns:
        ``sum(largest k) / sum(all)`` in [k/n, 1]; 0.0 when every sample is 0.

    Raises:
        ValueError: ``samples`` is not a non-empty 1-D array of finite non-negative reals, or
            ``fraction`` is not in (0, 1].
    """
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.floating)) \
            or not 0.0 < float(fraction) <= 1.0:
        raise ValueError(f"fraction must be a number in (0, 1]; got {fraction!r}.")
    arr = _as_samples(samples)        # real, finite, non-empty, as float64
    if arr.ndim != 1:
        raise ValueError(f"samples must be a 1-D array (one value per seed); got shape "
                         f"{arr.shape}.")
    if np.any(arr < 0):
        raise ValueError("samples must be non-negative (top_share measures how a sum of "
                         "non-negative values is spread over the seeds).")
    total = float(arr.sum())
    if total == 0.0:
        return 0.0
    k = max(1, math.ceil(float(fraction) * arr.size))
    top = np.partition(arr, arr.size - k)[arr.size - k:]
    return float(top.sum() / total)


def exponential_top_share(n: int, fraction: float = 0.01) -> float:
    """The share :func:`top_share` expects for ``n`` exponential samples (a light-tail reference).

    With ``k = ceil(fraction * n)`` and ``H_j`` the harmonic numbers, the ``i``-th largest of
    ``n`` unit exponentials has mean ``H_n - H_{i-1}``, so the ratio of expected sums is
    ``(k H_n - sum_{j<k} H_j) / n``: 7.4 % for ``n = 64`` and 5.6 % for ``n = 2000`` at
    ``fraction = 0.01`` (tending to ``q (1 + ln(1/q))``).

    Example:
        >>> round(exponential_top_share(64), 3)
        0.074
    """
    n = check_int(n, "n (the number of samples)")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.floating)) \
            or not 0.0 < float(fraction) <= 1.0:
        raise ValueError(f"fraction must be a number in (0, 1]; got {fraction!r}.")
    k = max(1, math.ceil(float(fraction) * n))
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])   # H_0 .. H_n
    return float((k * harmonic[n] - harmonic[:k].sum()) / n)
