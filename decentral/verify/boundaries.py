"""Group-sequential boundaries: alpha-spending functions and the critical values they give.

A Monte-Carlo check that looks at its running mean after every batch of seeds and stops as soon
as the interval decides tests repeatedly; with a fixed 95 % interval at every look its error
rate grows with the number of looks. Group-sequential designs fix this (Jennison & Turnbull,
*Group Sequential Methods with Applications to Clinical Trials*, 2000, chapters 2, 7 and 9):

* the standardised statistic at look ``k`` is ``Z_k = S_k / sqrt(t_k)`` where ``S`` is a
  Brownian motion observed at the *information fractions* ``0 < t_1 < ... < t_K`` (the share of
  the planned maximum seed count used so far);
* a spending function ``a(t)``, increasing from ``a(0) = 0`` to ``a(1) = alpha``, says how much of
  the two-sided error rate may be used up to fraction ``t`` (Lan & DeMets 1983);
* the critical values ``c_k`` solve ``P(|Z_j| < c_j for j < k, |Z_k| >= c_k) = a(t_k) - a(t_{k-1})``
  one look after the other, so the probability that ``|Z_k| >= c_k`` at *some* look is
  ``a(t_K)``.

The crossing probabilities are computed by carrying the sub-density of ``S_k`` on the
continuation region from one look to the next (the recursive integration of Armitage, McPherson
& Rowe 1969), on a uniform grid with Simpson weights.

Spending functions (``a`` is the two-sided total; ``z_p = Phi^{-1}(p)``):

* O'Brien–Fleming type: each side spends ``alpha / 2`` by Lan & DeMets' function
  ``2 - 2 Phi(z_{1 - alpha/4} / sqrt(t))``, so ``a(t) = 4 - 4 Phi(z_{1 - alpha/4} / sqrt(t))``. It
  spends almost nothing early, so the final critical value stays close to the fixed-sample one.
  (Splitting ``alpha`` into two one-sided halves is the convention of the tabulated values of
  Reboussin, DeMets, Kim & Lan 2000; applying the function to the two-sided ``alpha`` directly,
  ``2 - 2 Phi(z_{1 - alpha/2} / sqrt(t))``, is another design with other values.)
* Pocock type: ``a(t) = alpha ln(1 + (e - 1) t)`` — spends evenly, critical values nearly
  constant.

Example:
    >>> c = spending_bounds([0.2, 0.4, 0.6, 0.8, 1.0], alpha=0.05)
    >>> [round(float(v), 2) for v in c]
    [4.88, 3.36, 2.68, 2.29, 2.03]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import optimize, special

from decentral.verify.stats import _open_unit

__all__ = [
    "SPENDING_FUNCTIONS",
    "obrien_fleming_spending",
    "pocock_spending",
    "spending_bounds",
    "crossing_probability",
]

# Grid spacing of the recursive integration, as a fraction of the smallest increment's standard
# deviation, and the cap on grid points per look (memory ~ 8 * points² bytes).
_GRID_PER_SD = 24
_MAX_POINTS = 4001
_MIN_POINTS = 401


def _phi_bar(x: np.ndarray | float) -> np.ndarray | float:
    """Upper normal tail ``1 - Phi(x)``, accurate far in the tail."""
    return special.ndtr(-np.asarray(x, dtype=np.float64))


def obrien_fleming_spending(t: Any, alpha: float = 0.05) -> np.ndarray | float:
    """O'Brien–Fleming-type spending, two-sided: ``4 - 4 Phi(z_{1-alpha/4} / sqrt(t))``.

    Each side spends ``alpha / 2`` by Lan & DeMets' (1983) function ``2 - 2 Phi(z_{1-a/2} /
    sqrt(t))`` with ``a = alpha / 2``: the convention of published tables.

    Args:
        t: information fraction(s) in [0, 1].
        alpha: the two-sided error rate spent by ``t = 1``, in (0, 1).

    Example:
        >>> round(float(obrien_fleming_spending(1.0, 0.05)), 6)
        0.05
    """
    alpha = _open_unit(alpha, "alpha")
    t = _fractions_arg(t)
    z = special.ndtri(1.0 - alpha / 4.0)
    with np.errstate(divide="ignore"):
        out = np.where(t > 0, 4.0 * _phi_bar(z / np.sqrt(np.where(t > 0, t, 1.0))), 0.0)
    return float(out) if out.ndim == 0 else out


def pocock_spending(t: Any, alpha: float = 0.05) -> np.ndarray | float:
    """Pocock-type spending (Lan & DeMets 1983): ``alpha ln(1 + (e - 1) t)``.

    Example:
        >>> round(float(pocock_spending(1.0, 0.05)), 6)
        0.05
    """
    alpha = _open_unit(alpha, "alpha")
    t = _fractions_arg(t)
    out = alpha * np.log1p((math.e - 1.0) * t)
    return float(out) if out.ndim == 0 else out


SPENDING_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "obrien_fleming": obrien_fleming_spending,
    "pocock": pocock_spending,
}


def _fractions_arg(t: Any) -> np.ndarray:
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise ValueError(f"information fractions must lie in [0, 1]; got {t!r}.")
    return arr


def _look_fractions(fractions: Sequence[float] | np.ndarray) -> np.ndarray:
    try:
        t = np.asarray(fractions, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"fractions must be a 1-D sequence of numbers in (0, 1]; got "
                         f"{fractions!r}.") from None
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"fractions must be a non-empty 1-D sequence (one information fraction "
                         f"per look); got shape {t.shape}.")
    if not np.all(np.isfinite(t)) or t[0] <= 0 or t[-1] > 1 or np.any(np.diff(t) <= 0):
        raise ValueError(f"fractions must increase strictly within (0, 1], e.g. n_k / n_max for "
                         f"looks after n_1 < n_2 < ... seeds; got {t.tolist()}.")
    return t


def _grid(half_width: float, step_sd: float) -> tuple[np.ndarray, np.ndarray]:
    """Uniform grid on [-half_width, half_width] with Simpson weights (odd point count)."""
    m = int(math.ceil(2.0 * half_width * _GRID_PER_SD / step_sd))
    m = min(max(m, _MIN_POINTS), _MAX_POINTS)
    m += 1 - m % 2
    x = np.linspace(-half_width, half_width, m)
    h = x[1] - x[0]
    w = np.full(m, 2.0)
    w[1::2] = 4.0
    w[0] = w[-1] = 1.0
    return x, w * h / 3.0


class _Recursion:
    """The sub-density of ``S_k`` on the continuation region, carried look to look."""

    def __init__(self, t: np.ndarray):
        self.t = t
        self.min_sd = float(np.sqrt(np.min(np.diff(np.concatenate([[0.0], t])))))
        self.k = 0
        self.x: np.ndarray | None = None      # grid of S_{k} inside the continuation region
        self.mass: np.ndarray | None = None   # density * weight at the grid points

    def exit_probability(self, c: float) -> float:
        """P(no earlier crossing, |Z_k| >= c) at the next look."""
        t_k = self.t[self.k]
        b = c * math.sqrt(t_k)
        if self.k == 0:
            return float(2.0 * _phi_bar(c))
        sd = math.sqrt(t_k - self.t[self.k - 1])
        assert self.x is not None and self.mass is not None
        tail = _phi_bar((b - self.x) / sd) + _phi_bar((b + self.x) / sd)
        return float(np.dot(self.mass, tail))

    def advance(self, c: float) -> None:
        """Move to the next look with critical value ``c`` (``inf``: no stopping there)."""
        t_k = self.t[self.k]
        b = c * math.sqrt(t_k) if math.isfinite(c) else 9.0 * math.sqrt(t_k)
        x, w = _grid(b, self.min_sd)
        if self.k == 0:
            dens = np.exp(-0.5 * x**2 / t_k) / math.sqrt(2 * math.pi * t_k)
        else:
            assert self.x is not None and self.mass is not None
            sd = math.sqrt(t_k - self.t[self.k - 1])
            kernel = np.exp(-0.5 * ((x[:, None] - self.x[None, :]) / sd) ** 2)
            dens = kernel @ self.mass / (sd * math.sqrt(2 * math.pi))
        self.x, self.mass = x, dens * w
        self.k += 1


def spending_bounds(fractions: Sequence[float] | np.ndarray, alpha: float = 0.05,
                    spending: str | Callable[..., Any] = "obrien_fleming") -> np.ndarray:
    """Two-sided critical values ``c_1, ..., c_K`` of a group-sequential design.

    ``|Z_k| >= c_k`` at the first look where it happens rejects; the probability of that under
    ``Z = S / sqrt(t)`` for a standard Brownian motion ``S`` is ``a(t_K)`` (``alpha`` when the
    last fraction is 1), spent look by look as ``a(t_k) - a(t_{k-1})``. A look that may spend
    nothing (``a`` flat there) gets ``c_k = inf``.

    Args:
        fractions: information fractions ``t_1 < ... < t_K`` in (0, 1] (for a Monte-Carlo mean:
            seeds used so far / the planned maximum).
        alpha: two-sided error rate in (0, 1); the default 0.05 gives 95 % repeated intervals.
        spending: ``"obrien_fleming"`` (default), ``"pocock"`` or a callable ``a(t, alpha)``
            increasing from 0 to ``alpha``.

    Returns:
        Array of ``K`` critical values on the ``Z`` scale.

    Raises:
        ValueError: fractions not strictly increasing in (0, 1], alpha outside (0, 1), an
            unknown spending name, or a spending function that decreases or exceeds ``alpha``.
    """
    alpha = _open_unit(alpha, "alpha")
    t = _look_fractions(fractions)
    if isinstance(spending, str):
        if spending not in SPENDING_FUNCTIONS:
            raise ValueError(f"spending must be one of {sorted(SPENDING_FUNCTIONS)} or a "
                             f"callable a(t, alpha); got {spending!r}.")
        spend_fn = SPENDING_FUNCTIONS[spending]
    elif callable(spending):
        spend_fn = spending
    else:
        raise ValueError(f"spending must be a name or a callable a(t, alpha); got {spending!r}.")
    spent = np.asarray([float(spend_fn(float(tk), alpha)) for tk in t])
    if not np.all(np.isfinite(spent)) or np.any(spent < 0) or np.any(spent > alpha * (1 + 1e-12)) \
            or np.any(np.diff(spent) < 0):
        raise ValueError(f"spending function must increase within [0, alpha]; its values at "
                         f"{t.tolist()} are {spent.tolist()}.")
    increments = np.diff(np.concatenate([[0.0], spent]))
    rec = _Recursion(t)
    bounds = np.empty(t.size)
    for k, target in enumerate(increments):
        if target <= 1e-300:
            c = math.inf
        else:
            def excess(c: float, target: float = target) -> float:
                return rec.exit_probability(c) - target
            hi = 1.0
            while excess(hi) > 0 and hi < 60:
                hi *= 2.0
            lo = 0.0
            if excess(lo) < 0:
                raise ValueError(f"look {k + 1}: the spending function asks to spend "
                                 f"{target:.3g}, more than the probability left to spend.")
            c = optimize.brentq(excess, lo, hi, xtol=1e-10, rtol=1e-12)
        bounds[k] = c
        rec.advance(c)
    return bounds


def crossing_probability(bounds: Sequence[float] | np.ndarray,
                         fractions: Sequence[float] | np.ndarray) -> float:
    """Probability that ``|Z_k| >= c_k`` at some look, for ``Z`` a standardised Brownian motion
    observed at ``fractions`` (the design's overall two-sided error rate).

    Example:
        >>> round(crossing_probability([1.959964], [1.0]), 4)
        0.05
    """
    t = _look_fractions(fractions)
    c = np.asarray(bounds, dtype=np.float64)
    if c.shape != t.shape or np.any(np.isnan(c)) or np.any(c <= 0):
        raise ValueError(f"bounds must be positive critical values, one per fraction "
                         f"({t.size}); got {np.asarray(bounds).tolist()}.")
    rec = _Recursion(t)
    total = 0.0
    for ck in c:
        if math.isfinite(ck):
            total += rec.exit_probability(float(ck))
        rec.advance(float(ck))
    return total
