"""Statistics for verdicts: confidence intervals, seed counts, rate fits and envelope checks.

Everything here runs in numpy on the host, in float64, and is deterministic given ``seed`` (an
integer or a :class:`numpy.random.Generator`). The leading axis of a ``samples`` / ``values`` array
is the seed (Monte-Carlo replicate) axis.

Which interval to use:

* bounded quantities (pull counts, regret <= T * gap_max, values in [0, 1]):
  :func:`hoeffding_ci` / :func:`empirical_bernstein_ci`, seed counts from
  :func:`hoeffding_num_seeds` / :func:`bernstein_num_seeds` for a stated false-verdict
  probability ``delta``;
* unbounded ones (MSE): a pilot run, then :func:`clt_ci` or :func:`bootstrap_ci`, seed counts from
  :func:`clt_num_seeds` or :func:`empirical_bernstein_num_seeds` on the pilot variance;
* rates and shapes: :func:`loglog_slope`, :func:`semilog_slope`, :func:`geometric_rate` (bootstrap
  over seeds) and :func:`envelope_check` against a bound curve.

Example:
    >>> x = np.random.default_rng(0).uniform(size=500)
    >>> mean, lo, hi = hoeffding_ci(x, 0.0, 1.0, delta=0.01)
    >>> lo < 0.5 < hi
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from scipy import special

from decentral._checks import check_int

__all__ = [
    "bootstrap_ci",
    "clt_ci",
    "hoeffding_ci",
    "empirical_bernstein_ci",
    "hoeffding_num_seeds",
    "bernstein_num_seeds",
    "empirical_bernstein_num_seeds",
    "clt_num_seeds",
    "SlopeFit",
    "RateFit",
    "EnvelopeResult",
    "loglog_slope",
    "semilog_slope",
    "geometric_rate",
    "envelope_check",
]

# Largest number of float64 elements materialised at once by the bootstrap loops (~160 MB).
_CHUNK_ELEMENTS = 20_000_000


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _as_samples(samples: Any, name: str = "samples", *, min_n: int = 1) -> np.ndarray:
    try:
        arr = np.asarray(samples)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    if arr.dtype == object or np.issubdtype(arr.dtype, np.complexfloating) or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_
    ):
        raise ValueError(f"{name} must hold real numbers; got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array with the seeds on axis 0; got a scalar.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); nothing to estimate from.")
    bad = ~np.isfinite(arr)
    if bad.any():
        first = np.argwhere(bad)[0].tolist()
        raise ValueError(
            f"{name} has {int(bad.sum())} NaN/inf entries (first at index {first}); a diverged "
            "run must be reported where it diverged, not averaged. Check the run or drop it "
            "explicitly and say so."
        )
    if arr.shape[0] < min_n:
        raise ValueError(f"{name} has {arr.shape[0]} samples along the seed axis; need at least "
                         f"{min_n}.")
    return arr


def _real(x: Any, name: str) -> float:
    if isinstance(x, bool):
        raise ValueError(f"{name} must be a real number; got {x!r}.")
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number; got {x!r}.") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite; got {x!r}.")
    return v


def _open_unit(x: Any, name: str) -> float:
    v = _real(x, name)
    if not 0.0 < v < 1.0:
        hint = " (e.g. 0.95)" if name == "level" else " (e.g. 0.05)"
        raise ValueError(f"{name} must lie strictly between 0 and 1{hint}; got {x!r}.")
    return v


def _positive(x: Any, name: str) -> float:
    v = _real(x, name)
    if v <= 0:
        raise ValueError(f"{name} must be > 0; got {x!r}.")
    return v


def _n_boot(n_boot: Any) -> int:
    return check_int(n_boot, "n_boot (bootstrap resamples, e.g. 2000)")


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(check_int(seed, "seed (an integer or a numpy Generator)",
                                           minimum=None))


def _out(x: np.ndarray) -> float | np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


# --------------------------------------------------------------------------------------------
# Confidence intervals
# --------------------------------------------------------------------------------------------


def bootstrap_ci(
    samples: Any,
    statistic: Callable[..., Any] = np.mean,
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int | np.random.Generator = 0,
    axis: int = 0,
) -> tuple[Any, Any, Any]:
    """Percentile bootstrap confidence interval, resampling along the seed axis.

    Draw ``n_boot`` resamples of the ``n`` seeds with replacement, evaluate the statistic on each,
    and return the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the replicates (Efron's
    percentile interval). Seeds are resampled as whole rows, so a vector-valued statistic (a curve
    over t) keeps the dependence between its entries.

    Args:
        samples: array with the seeds on ``axis``; other axes are carried along.
        statistic: ``f(x, axis=k)`` reducing axis ``k`` (``np.mean``, ``np.median``, ...). A
            function without an ``axis`` argument is called as ``f(x)`` on each resample with the
            seeds on axis 0 (slower).
        level: confidence level in (0, 1).
        n_boot: number of bootstrap replicates.
        seed: integer seed or numpy Generator.
        axis: the seed axis of ``samples``.

    Returns:
        ``(estimate, lo, hi)``: floats for a scalar statistic, arrays for a vector-valued one.

    Raises:
        ValueError: NaN/inf or empty samples, fewer than 2 seeds, level outside (0, 1).

    Example:
        >>> x = np.random.default_rng(1).normal(size=(100, 3))
        >>> est, lo, hi = bootstrap_ci(x, np.mean, level=0.9)
        >>> est.shape, bool(np.all(lo <= hi))
        ((3,), True)
    """
    level = _open_unit(level, "level")
    n_boot = _n_boot(n_boot)
    arr = _as_samples(samples)
    try:
        arr = np.moveaxis(arr, axis, 0)
    except np.exceptions.AxisError:
        raise ValueError(f"axis {axis} is out of range for samples of shape {arr.shape}.") from None
    n = arr.shape[0]
    if n < 2:
        raise ValueError(f"bootstrap needs at least 2 seeds along axis {axis}; got {n}.")
    rng = _rng(seed)
    try:
        estimate = np.asarray(statistic(arr, axis=0), dtype=np.float64)
        vectorised = True
    except TypeError:
        estimate = np.asarray(statistic(arr), dtype=np.float64)
        vectorised = False
    boots = np.empty((n_boot,) + estimate.shape, dtype=np.float64)
    if vectorised:
        chunk = max(1, _CHUNK_ELEMENTS // max(1, arr.size))
        for start in range(0, n_boot, chunk):
            m = min(chunk, n_boot - start)
            idx = rng.integers(0, n, size=(m, n))
            boots[start:start + m] = statistic(arr[idx], axis=1)
    else:
        for b in range(n_boot):
            boots[b] = statistic(arr[rng.integers(0, n, size=n)])
    alpha = 1.0 - level
    lo = np.quantile(boots, alpha / 2, axis=0)
    hi = np.quantile(boots, 1 - alpha / 2, axis=0)
    return _out(estimate), _out(lo), _out(hi)


def clt_ci(samples: Any, level: float = 0.95) -> tuple[Any, Any, Any]:
    """Normal-approximation (CLT) interval for the mean, with the Student-t quantile.

    ``mean ± t_{n-1, (1+level)/2} * s / sqrt(n)`` with ``s`` the unbiased sample standard
    deviation; the t quantile makes small-``n`` coverage closer to nominal and tends to the normal
    one as ``n`` grows. Valid asymptotically for any finite-variance quantity (e.g. MSE across
    seeds); use a pilot run to size ``n`` (:func:`clt_num_seeds`).

    Args:
        samples: array with the seeds on axis 0 (extra axes give per-entry intervals).
        level: confidence level in (0, 1).

    Returns:
        ``(mean, lo, hi)``.

    Example:
        >>> m, lo, hi = clt_ci(np.arange(10.0), level=0.95)
        >>> round(m, 2), lo < m < hi
        (4.5, True)
    """
    level = _open_unit(level, "level")
    arr = _as_samples(samples, min_n=2)
    n = arr.shape[0]
    mean = arr.mean(axis=0)
    sd = arr.std(axis=0, ddof=1)
    q = float(special.stdtrit(n - 1, 0.5 + level / 2))
    half = q * sd / math.sqrt(n)
    return _out(mean), _out(mean - half), _out(mean + half)


def hoeffding_ci(samples: Any, lower: float, upper: float, delta: float) -> tuple[Any, Any, Any]:
    """Two-sided Hoeffding interval for the mean of samples bounded in ``[lower, upper]``.

    With ``R = upper - lower``, Hoeffding's inequality
    ``P(|mean - mu| >= h) <= 2 exp(-2 n h² / R²)`` gives, with probability at least ``1 - delta``,
    ``|mean - mu| <= R * sqrt(ln(2/delta) / (2 n))``. The interval is clipped to
    ``[lower, upper]``. It holds for every ``n`` (no asymptotics) and is conservative.

    Args:
        samples: i.i.d. samples with the seeds on axis 0, all within ``[lower, upper]``.
        lower, upper: the a-priori bounds of a sample.
        delta: false-coverage probability in (0, 1).

    Raises:
        ValueError: a sample outside ``[lower, upper]`` (the bound would be false), bad bounds,
            delta outside (0, 1), NaN/inf or empty samples.

    Example:
        >>> m, lo, hi = hoeffding_ci(np.full(200, 0.3), 0.0, 1.0, 0.05)
        >>> round(hi - m, 4)
        0.096
    """
    delta = _open_unit(delta, "delta")
    lower = _real(lower, "lower")
    upper = _real(upper, "upper")
    if not lower < upper:
        raise ValueError(f"need lower < upper for a bounded quantity; got [{lower}, {upper}].")
    arr = _as_samples(samples)
    _check_within(arr, lower, upper)
    n = arr.shape[0]
    mean = arr.mean(axis=0)
    half = (upper - lower) * math.sqrt(math.log(2.0 / delta) / (2.0 * n))
    return _out(mean), _out(np.maximum(mean - half, lower)), _out(np.minimum(mean + half, upper))


def _check_within(arr: np.ndarray, lower: float, upper: float) -> None:
    below, above = arr < lower, arr > upper
    if below.any() or above.any():
        bad = below | above
        first = np.argwhere(bad)[0].tolist()
        raise ValueError(
            f"{int(bad.sum())} samples lie outside the stated bounds [{lower}, {upper}] (first at "
            f"index {first}: {arr[tuple(first)]!r}); the concentration bound would not hold. "
            "State bounds that the quantity cannot leave."
        )


def _range_arg(value_range: Any) -> tuple[float, float | None, float | None]:
    """``value_range`` as (width, lower, upper); a scalar width leaves the ends unknown."""
    if np.ndim(value_range) == 0:
        return _positive(value_range, "value_range"), None, None
    vr = np.asarray(value_range)
    if vr.shape != (2,):
        raise ValueError("value_range must be a width R > 0 or a pair (lower, upper); got "
                         f"shape {vr.shape}.")
    lo, hi = _real(vr[0], "value_range[0]"), _real(vr[1], "value_range[1]")
    if not lo < hi:
        raise ValueError(f"value_range (lower, upper) needs lower < upper; got ({lo}, {hi}).")
    return hi - lo, lo, hi


def empirical_bernstein_ci(
    samples: Any, value_range: Any, delta: float
) -> tuple[Any, Any, Any]:
    """Two-sided empirical-Bernstein interval (Maurer & Pontil 2009, Theorem 4).

    Maurer & Pontil, "Empirical Bernstein Bounds and Sample Variance Penalization" (COLT 2009),
    Theorem 4: for i.i.d. ``X_i`` in ``[0, 1]``, ``n >= 2`` and ``V_n`` the unbiased sample
    variance, with probability at least ``1 - d``

        E[X] - mean  <=  sqrt(2 V_n ln(2/d) / n) + 7 ln(2/d) / (3 (n - 1)).

    Applied to both tails with ``d = delta / 2`` each (union bound) and rescaled to samples of range
    ``R``: half-width ``sqrt(2 V_n ln(4/delta) / n) + 7 R ln(4/delta) / (3 (n - 1))``, with ``V_n``
    the sample variance of the unscaled samples. Much narrower than Hoeffding when the variance is
    small compared with ``R²/4``.

    Args:
        samples: i.i.d. samples with the seeds on axis 0 (n >= 2).
        value_range: the width ``R`` of the interval a sample cannot leave, or a pair
            ``(lower, upper)`` (then samples are checked against it and the interval is clipped).
        delta: false-coverage probability in (0, 1).

    Returns:
        ``(mean, lo, hi)``.

    Raises:
        ValueError: samples spread wider than ``R`` (or outside ``(lower, upper)``), NaN/inf,
            fewer than 2 samples, delta outside (0, 1).
    """
    delta = _open_unit(delta, "delta")
    width, lower, upper = _range_arg(value_range)
    arr = _as_samples(samples, min_n=2)
    if lower is not None:
        _check_within(arr, lower, upper)
    else:
        spread = float(np.max(np.ptp(arr, axis=0)))
        if spread > width * (1 + 1e-12):
            raise ValueError(f"samples spread over {spread}, wider than value_range {width}; the "
                             "bound needs a range the samples cannot leave.")
    n = arr.shape[0]
    mean = arr.mean(axis=0)
    var = arr.var(axis=0, ddof=1)
    log_term = math.log(4.0 / delta)
    half = np.sqrt(2.0 * var * log_term / n) + 7.0 * width * log_term / (3.0 * (n - 1))
    lo, hi = mean - half, mean + half
    if lower is not None:
        lo, hi = np.maximum(lo, lower), np.minimum(hi, upper)
    return _out(mean), _out(lo), _out(hi)


# --------------------------------------------------------------------------------------------
# Seed counts
# --------------------------------------------------------------------------------------------


def hoeffding_num_seeds(value_range: float, half_width: float, delta: float) -> int:
    """Smallest ``n`` with ``2 exp(-2 n h² / R²) <= delta``.

    That is ``n = ceil(R² ln(2/delta) / (2 h²))``: with this many i.i.d. seeds of a quantity of
    range ``R``, the Hoeffding interval of half-width ``h`` misses the mean with probability at
    most ``delta`` (the false-verdict probability of a check that compares it with a bound at
    distance ``h``).

    Example:
        >>> hoeffding_num_seeds(1.0, 0.05, 0.01)
        1060
    """
    r = _positive(value_range, "value_range")
    h = _positive(half_width, "half_width")
    delta = _open_unit(delta, "delta")

    def ok(n: int) -> bool:
        return 2.0 * math.exp(-2.0 * n * h * h / (r * r)) <= delta

    n = max(1, math.ceil(r * r * math.log(2.0 / delta) / (2.0 * h * h)))
    while n > 1 and ok(n - 1):  # guard against rounding in the closed form
        n -= 1
    while not ok(n):
        n += 1
    return n


def bernstein_num_seeds(
    variance: float, value_range: float, half_width: float, delta: float
) -> int:
    """Smallest ``n`` with Bernstein's two-sided tail ``2 exp(-n h² / (2σ² + 2 R h / 3)) <= delta``.

    Bernstein's inequality for i.i.d. ``X_i`` with variance ``σ²`` and ``|X_i - mu| <= R``; so
    ``n = ceil(ln(2/delta) (2σ² + 2Rh/3) / h²)``. ``variance`` must be an a-priori *upper bound*
    on the true variance (e.g. ``p(1-p)`` for an indicator); with only a pilot estimate use
    :func:`empirical_bernstein_num_seeds`. Never more than about the Hoeffding count when
    ``σ² = R²/4``, far fewer when the variance is small.

    Raises:
        ValueError: negative variance, or variance above ``R²/4`` (impossible for range ``R``).
    """
    var = _real(variance, "variance")
    r = _positive(value_range, "value_range")
    h = _positive(half_width, "half_width")
    delta = _open_unit(delta, "delta")
    if var < 0:
        raise ValueError(f"variance must be >= 0; got {variance!r}.")
    if var > r * r / 4 * (1 + 1e-12):
        raise ValueError(f"variance {var} exceeds R²/4 = {r * r / 4}, the largest variance of a "
                         f"quantity of range {r}; check the range or the variance.")
    denom = 2.0 * var + 2.0 * r * h / 3.0

    def ok(n: int) -> bool:
        return 2.0 * math.exp(-n * h * h / denom) <= delta

    n = max(1, math.ceil(math.log(2.0 / delta) * denom / (h * h)))
    while n > 1 and ok(n - 1):
        n -= 1
    while not ok(n):
        n += 1
    return n


def empirical_bernstein_num_seeds(
    pilot_variance: float, value_range: float, half_width: float, delta: float
) -> int:
    """Smallest ``n >= 2`` whose :func:`empirical_bernstein_ci` half-width is ``<= h``.

    Solves ``sqrt(2 V ln(4/delta) / n) + 7 R ln(4/delta) / (3 (n - 1)) <= h`` for a pilot sample
    variance ``V``. The real run's variance differs from the pilot's: recompute the interval on
    the real run (it remains valid whatever ``n`` was chosen).
    """
    var = _real(pilot_variance, "pilot_variance")
    r = _positive(value_range, "value_range")
    h = _positive(half_width, "half_width")
    delta = _open_unit(delta, "delta")
    if var < 0:
        raise ValueError(f"pilot_variance must be >= 0; got {pilot_variance!r}.")
    log_term = math.log(4.0 / delta)

    def half(n: int) -> float:
        return math.sqrt(2.0 * var * log_term / n) + 7.0 * r * log_term / (3.0 * (n - 1))

    hi = max(2, math.ceil(8.0 * var * log_term / (h * h)), math.ceil(14.0 * r * log_term / (3 * h))
             + 1) + 1
    while half(hi) > h:  # safety; the bracket above already satisfies it
        hi *= 2
    lo = 2
    if half(lo) <= h:
        return lo
    while hi - lo > 1:  # half(lo) > h >= half(hi); half is decreasing in n
        mid = (lo + hi) // 2
        if half(mid) <= h:
            hi = mid
        else:
            lo = mid
    return hi


def clt_num_seeds(std: float, half_width: float, level: float = 0.95) -> int:
    """Seeds for a CLT interval of half-width ``h``: ``ceil((z σ / h)²)``, at least 2.

    ``z`` is the standard-normal ``(1+level)/2`` quantile and ``σ`` a pilot standard deviation.
    An approximation (no finite-sample guarantee); prefer the Bernstein counts for bounded
    quantities.
    """
    s = _real(std, "std")
    if s < 0:
        raise ValueError(f"std must be >= 0; got {std!r}.")
    h = _positive(half_width, "half_width")
    level = _open_unit(level, "level")
    z = float(special.ndtri(0.5 + level / 2))
    return max(2, math.ceil((z * s / h) ** 2))


# --------------------------------------------------------------------------------------------
# Rate / shape fits
# --------------------------------------------------------------------------------------------


class SlopeFit(NamedTuple):
    """A least-squares slope with a bootstrap-over-seeds percentile interval.

    Attributes:
        slope: fitted slope of the seed-mean curve.
        lo, hi: percentile bootstrap interval (equal to ``slope`` for an exact 1-D curve).
        intercept: fitted intercept.
        n_points: number of t values in the fit window.
        n_seeds: number of seeds (1 for an exact curve).
        level: confidence level of ``[lo, hi]``.
    """

    slope: float
    lo: float
    hi: float
    intercept: float
    n_points: int
    n_seeds: int = 1
    level: float = 0.95


class RateFit(NamedTuple):
    """A fitted geometric rate ``rho`` of ``mean(values) ≈ C rho^t`` with a bootstrap interval.

    Attributes:
        rate_per_step: ``rho``.
        lo, hi: percentile bootstrap interval for ``rho``.
        log_rate: ``log rho`` (the fitted slope of ``log mean`` against t).
        intercept: fitted ``log C``.
        n_points, n_seeds, level: as in :class:`SlopeFit`.
    """

    rate_per_step: float
    lo: float
    hi: float
    log_rate: float = float("nan")
    intercept: float = float("nan")
    n_points: int = 0
    n_seeds: int = 1
    level: float = 0.95


class EnvelopeResult(NamedTuple):
    """Whether a measured curve stays below a bound curve.

    Attributes:
        holds: every point satisfies ``value <= bound``.
        worst_ratio: ``max_t value(t) / bound(t)`` (``<= 1`` iff ``holds``).
        worst_t: the t where the worst ratio occurs.
        n_violations: number of points with ``value > bound``.
        n_points: number of points compared.
    """

    holds: bool
    worst_ratio: float
    worst_t: float
    n_violations: int = 0
    n_points: int = 0


def _prepare_curves(
    t: Any, values: Any, t_min: float | None, t_max: float | None, *, positive_t: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Window ``t``/``values``; return (t_w, per-seed values [S, P] or None, mean curve [P])."""
    tt = _as_samples(t, "t")
    if tt.ndim != 1:
        raise ValueError(f"t must be 1-D (the time points); got shape {tt.shape}.")
    vals = _as_samples(values, "values")
    if vals.ndim == 1:
        if vals.shape[0] != tt.shape[0]:
            raise ValueError(f"values has length {vals.shape[0]} but t has {tt.shape[0]} points; "
                             "give one value per t (or [seeds, len(t)] per-seed curves).")
    elif vals.ndim == 2:
        if vals.shape[1] != tt.shape[0]:
            raise ValueError(f"values has shape {vals.shape} but t has {tt.shape[0]} points; "
                             "per-seed curves must be [seeds, len(t)].")
        if vals.shape[0] < 2:
            raise ValueError("values has a single seed ([1, len(t)]): a bootstrap interval needs "
                             ">= 2 seeds. Run more seeds, or pass a 1-D array if the curve is "
                             "exact (e.g. an expectation computed by an oracle).")
    else:
        raise ValueError(f"values must be [len(t)] or [seeds, len(t)]; got shape {vals.shape}.")
    mask = np.ones(tt.shape, dtype=bool)
    if t_min is not None:
        mask &= tt >= _real(t_min, "t_min")
    if t_max is not None:
        mask &= tt <= _real(t_max, "t_max")
    tw = tt[mask]
    if np.unique(tw).size < 2:
        raise ValueError(f"the fit window [{t_min}, {t_max}] keeps {tw.size} point(s) with "
                         f"{np.unique(tw).size} distinct t; need at least 2 distinct t.")
    if positive_t and np.any(tw <= 0):
        raise ValueError("t must be > 0 in the fit window for a log(t) fit; set t_min > 0 "
                         f"(smallest t in the window: {tw.min()}).")
    if vals.ndim == 1:
        return tw, None, vals[mask]
    per_seed = vals[:, mask]
    return tw, per_seed, per_seed.mean(axis=0)


def _ls_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares slope and intercept of ``y[..., :]`` against ``x``."""
    xc = x - x.mean()
    slope = (y - y.mean(axis=-1, keepdims=True)) @ xc / float(xc @ xc)
    intercept = y.mean(axis=-1) - slope * x.mean()
    return slope, intercept


def _boot_mean_curves(
    per_seed: np.ndarray, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Bootstrap replicates of the seed-mean curve: ``[n_boot, P]`` via multinomial weights."""
    s, p = per_seed.shape
    out = np.empty((n_boot, p))
    chunk = max(1, _CHUNK_ELEMENTS // max(1, s + p))
    probs = np.full(s, 1.0 / s)
    for start in range(0, n_boot, chunk):
        m = min(chunk, n_boot - start)
        counts = rng.multinomial(s, probs, size=m).astype(np.float64)
        out[start:start + m] = counts @ per_seed / s
    return out


def _fit(
    t: Any, values: Any, *, x_log: bool, y_log: bool, level: float, n_boot: int,
    seed: int | np.random.Generator, t_min: float | None, t_max: float | None, what: str,
) -> tuple[float, float, float, float, int, int]:
    level = _open_unit(level, "level")
    n_boot = _n_boot(n_boot)
    tw, per_seed, mean = _prepare_curves(t, values, t_min, t_max, positive_t=x_log)
    x = np.log(tw) if x_log else tw
    if y_log and np.any(mean <= 0):
        k = int(np.argmax(mean <= 0))
        raise ValueError(f"{what}: the seed-mean curve is <= 0 at t = {tw[k]} ({mean[k]!r}); a "
                         "log fit needs positive values. Restrict the window with t_min/t_max.")
    y = np.log(mean) if y_log else mean
    slope, intercept = _ls_fit(x, y)
    slope, intercept = float(slope), float(intercept)
    if per_seed is None:
        return slope, slope, slope, intercept, tw.size, 1
    boots = _boot_mean_curves(per_seed, n_boot, _rng(seed))
    if y_log:
        ok = np.all(boots > 0, axis=1)
        if ok.sum() < max(2, n_boot // 2):
            raise ValueError(f"{what}: more than half of the bootstrap replicates have a "
                             "non-positive mean somewhere in the window; restrict the window to "
                             "where the curve is clearly positive, or run more seeds.")
        yb = np.log(boots[ok])
    else:
        yb = boots
    slopes, _ = _ls_fit(x, yb)
    alpha = 1.0 - level
    lo = float(np.quantile(slopes, alpha / 2))
    hi = float(np.quantile(slopes, 1 - alpha / 2))
    return slope, lo, hi, intercept, tw.size, per_seed.shape[0]


def loglog_slope(
    t: Any,
    values: Any,
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int | np.random.Generator = 0,
    t_min: float | None = None,
    t_max: float | None = None,
) -> SlopeFit:
    """Slope of ``log mean(values)`` against ``log t`` (least squares), bootstrap over seeds.

    For a claim ``E[X_t] = O(t^p)``: the slope estimates ``p`` over the window
    ``t_min <= t <= t_max`` (fit over the last decades, where the asymptotics apply). The seed-mean
    curve is fitted (not each seed), so single seeds may touch zero; the interval comes from
    resampling whole seeds.

    Args:
        t: time points ``[P]``, > 0 in the window.
        values: per-seed curves ``[seeds, P]`` (seeds >= 2), or an exact curve ``[P]`` (e.g. from
            an oracle; then ``lo = hi = slope``, no sampling error).
        level: confidence level in (0, 1).
        n_boot: bootstrap replicates.
        seed: integer seed or Generator for the bootstrap.
        t_min, t_max: the fit window (inclusive).

    Returns:
        :class:`SlopeFit`.

    Raises:
        ValueError: mismatched shapes, a single seed in 2-D form, NaN/inf, non-positive t or mean
            in the window, fewer than 2 distinct t.

    Example:
        >>> t = np.logspace(1, 3, 20)
        >>> round(loglog_slope(t, 5.0 / t).slope, 6)
        -1.0
    """
    s, lo, hi, b, p, n = _fit(t, values, x_log=True, y_log=True, level=level, n_boot=n_boot,
                              seed=seed, t_min=t_min, t_max=t_max, what="loglog_slope")
    return SlopeFit(s, lo, hi, b, p, n, float(level))


def semilog_slope(
    t: Any,
    values: Any,
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int | np.random.Generator = 0,
    t_min: float | None = None,
    t_max: float | None = None,
) -> SlopeFit:
    """Slope of ``mean(values)`` against ``ln t`` (least squares), bootstrap over seeds.

    For logarithmic growth claims such as ``E[n_k(T)] ≈ c ln T`` (bandit pull counts, regret):
    the slope estimates the ``ln T`` coefficient ``c``. Arguments and returns as in
    :func:`loglog_slope`; the values may be any sign.

    Example:
        >>> t = np.logspace(2, 4, 10)
        >>> round(semilog_slope(t, 3.0 * np.log(t) + 1.0).slope, 6)
        3.0
    """
    s, lo, hi, b, p, n = _fit(t, values, x_log=True, y_log=False, level=level, n_boot=n_boot,
                              seed=seed, t_min=t_min, t_max=t_max, what="semilog_slope")
    return SlopeFit(s, lo, hi, b, p, n, float(level))


def geometric_rate(
    t: Any,
    values: Any,
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int | np.random.Generator = 0,
    t_min: float | None = None,
    t_max: float | None = None,
) -> RateFit:
    """Geometric rate ``rho`` from ``log mean(values) = a + t log rho`` over a window.

    For a claim ``E[X_t] <= C rho^t`` (consensus error contracting geometrically): fit the
    seed-mean curve's log against t by least squares and bootstrap over seeds. Keep the window
    above the float64 floor (values far above ~1e-300 and above round-off plateaus).

    Args / Raises: as in :func:`loglog_slope` (t may be any real numbers here).

    Returns:
        :class:`RateFit` with ``rate_per_step = exp(slope)`` and its interval.

    Example:
        >>> t = np.arange(50.0)
        >>> round(geometric_rate(t, 2.0 * 0.8 ** t).rate_per_step, 6)
        0.8
    """
    s, lo, hi, b, p, n = _fit(t, values, x_log=False, y_log=True, level=level, n_boot=n_boot,
                              seed=seed, t_min=t_min, t_max=t_max, what="geometric_rate")
    return RateFit(math.exp(s), math.exp(lo), math.exp(hi), s, b, p, n, float(level))


def envelope_check(
    t: Any,
    values_upper_ci: Any,
    bound: Any,
    *,
    t_min: float | None = None,
    t_max: float | None = None,
) -> EnvelopeResult:
    """Does a measured curve (or its upper confidence limit) stay below a bound curve?

    Args:
        t: time points ``[P]``.
        values_upper_ci: the measured curve ``[P]``; pass its pointwise upper confidence limit
            (e.g. ``bootstrap_ci(per_seed)[2]``) to require the bound with confidence, or its
            lower limit to test for a violation with confidence.
        bound: the bound, a scalar, an array ``[P]`` or a callable ``bound(t) -> [P]``; must be
            positive and finite.
        t_min, t_max: optional window (inclusive).

    Returns:
        :class:`EnvelopeResult`.

    Example:
        >>> t = np.arange(1.0, 11.0)
        >>> envelope_check(t, 1.0 / t, 2.0 / t).holds
        True
    """
    tt = _as_samples(t, "t")
    if tt.ndim != 1:
        raise ValueError(f"t must be 1-D; got shape {tt.shape}.")
    vals = _as_samples(values_upper_ci, "values_upper_ci")
    if vals.shape != tt.shape:
        raise ValueError(f"values_upper_ci has shape {vals.shape} but t has shape {tt.shape}; "
                         "pass one curve (e.g. the upper CI of the seed mean), not per-seed "
                         "curves.")
    b = bound(tt) if callable(bound) else bound
    barr = np.broadcast_to(_as_samples(np.atleast_1d(b), "bound"), tt.shape) if np.ndim(b) == 0 \
        else _as_samples(b, "bound")
    if barr.shape != tt.shape:
        raise ValueError(f"bound has shape {barr.shape} but t has shape {tt.shape}.")
    if np.any(barr <= 0):
        raise ValueError("bound must be > 0 everywhere (ratios are taken against it); got "
                         f"min {barr.min()!r}.")
    mask = np.ones(tt.shape, dtype=bool)
    if t_min is not None:
        mask &= tt >= _real(t_min, "t_min")
    if t_max is not None:
        mask &= tt <= _real(t_max, "t_max")
    if not mask.any():
        raise ValueError(f"the window [{t_min}, {t_max}] contains no t.")
    tw, vw, bw = tt[mask], vals[mask], barr[mask]
    ratio = vw / bw
    k = int(np.argmax(ratio))
    n_viol = int(np.sum(vw > bw))
    return EnvelopeResult(n_viol == 0, float(ratio[k]), float(tw[k]), n_viol, int(tw.size))
