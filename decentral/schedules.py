"""Step-size schedules as data: one formula, parameters in a NamedTuple of arrays.

Every schedule is

    alpha_t = alpha0 / (t + t0) ** power,        t = 0, 1, 2, ...

where **t is the 0-based index of the update: the first update uses alpha_0**
(``alpha0 / t0 ** power``). So ``harmonic(alpha0)`` (``t0 = 1``) gives ``alpha0 / (t + 1)``,
the ``alpha_t = alpha0 / (t + 1)`` of Theorems 3 and 5 of Lin, Gupta and Liu ("Finite-Time
Error Bounds for Distributed Linear Stochastic Approximation"), whose first step is
``alpha0``; and
``harmonic(5.0, 51.0)`` starts at ``5 / 51``. State which convention a caller uses: an update
written with step index ``t + 1`` would shift the whole schedule by one (optax issue #415).

Because a schedule is a NamedTuple of arrays, a sweep over step sizes is one array with a
leading axis (:func:`stack_schedules`) that ``jax.vmap`` maps over, compiled once: the
hyperparameters users sweep are data, not closed-over constants.

Example:
    >>> sched = harmonic(5.0, 51.0)
    >>> round(float(step_size(sched, 0)), 6)          # 5/51, the step of the FIRST update
    0.098039
    >>> sweep = stack_schedules([constant(0.1), harmonic(1.0), polynomial(1.0, 0.75)])
    >>> steps = jax.vmap(step_size, in_axes=(0, None))(sweep, 10)   # 0.1, 1/11, 1/11**0.75
    >>> [round(float(s), 4) for s in steps]
    [0.1, 0.0909, 0.1656]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "StepSize",
    "check_step_size_field",
    "constant",
    "harmonic",
    "polynomial",
    "step_size",
    "stack_schedules",
    "satisfies_robbins_monro",
    "validate_step_size",
]


class StepSize(NamedTuple):
    """Parameters of ``alpha_t = alpha0 / (t + t0) ** power`` (t = 0 for the first update).

    Build it with :func:`constant`, :func:`harmonic` or :func:`polynomial`, which validate the
    values; the fields may be scalars or arrays with a common leading (sweep) axis, see
    :func:`stack_schedules`. Calling ``schedule(t)`` is :func:`step_size`.

    Attributes:
        alpha0: numerator, > 0.
        t0: offset of the step index, > 0 when ``power > 0`` (``alpha_0 = alpha0 / t0**power``).
        power: decay exponent, >= 0 (0: constant step; 1: harmonic).
    """

    alpha0: jax.Array
    t0: jax.Array
    power: jax.Array

    def __call__(self, t) -> jax.Array:
        """Step size of update ``t`` (0-based); see :func:`step_size`."""
        return step_size(self, t)


def _is_traced(*values) -> bool:
    return any(isinstance(v, jax.core.Tracer) for v in values)


def _as_param(value, name: str):
    """A validated-type parameter: Python numbers become Python floats (weakly typed under JAX)."""
    if isinstance(value, jax.core.Tracer):
        return value
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, not a bool ({value!r}).")
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    arr = np.asarray(value)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) or np.issubdtype(
        arr.dtype, np.complexfloating
    ):
        raise ValueError(f"{name} must hold real numbers; got dtype {arr.dtype}.")
    return jnp.asarray(value)


def validate_step_size(schedule: StepSize) -> StepSize:
    """Check a :class:`StepSize` on the host and return it unchanged.

    Checks, elementwise for swept (array) fields: ``alpha0`` finite and > 0; ``power`` finite
    and >= 0; ``t0`` finite, and > 0 when ``power > 0`` (otherwise ``t + t0`` is 0 or negative
    at ``t = 0`` and the step is infinite or NaN). Fields that are JAX tracers (the schedule was
    built inside ``jit``/``vmap``) cannot be inspected and are not checked.

    Raises:
        ValueError: naming the offending field and value and saying how to fix it.

    Example:
        >>> validate_step_size(StepSize(0.1, 1.0, 0.0))      # fine, returned as is
        StepSize(alpha0=0.1, t0=1.0, power=0.0)
        >>> validate_step_size(StepSize(0.1, 0.0, 1.0))
        Traceback (most recent call last):
        ...
        ValueError: t0 must be > 0 when power > 0; got t0 = [0.0]. ...
        >>> validate_step_size(StepSize(float("nan"), 1.0, 0.0))
        Traceback (most recent call last):
        ...
        ValueError: alpha0 must be finite and > 0; got [nan]. ...
    """
    if not isinstance(schedule, StepSize):
        raise ValueError(
            f"expected a StepSize (build one with constant/harmonic/polynomial); got "
            f"{type(schedule).__name__}."
        )
    if _is_traced(*schedule):
        return schedule
    alpha0, t0, power = (np.asarray(v, dtype=np.float64) for v in schedule)
    try:
        np.broadcast_shapes(alpha0.shape, t0.shape, power.shape)
    except ValueError as err:
        raise ValueError(
            f"StepSize fields have incompatible shapes alpha0 {alpha0.shape}, t0 {t0.shape}, "
            f"power {power.shape}; a sweep needs one common leading axis (use stack_schedules)."
        ) from err
    if not np.all(np.isfinite(alpha0)) or np.any(alpha0 <= 0):
        bad = alpha0[~(np.isfinite(alpha0) & (alpha0 > 0))] if alpha0.ndim else alpha0
        raise ValueError(
            f"alpha0 must be finite and > 0; got {np.ravel(bad)[:5].tolist()}. A NaN or "
            "non-positive step size would make the iterates NaN or run the update backwards."
        )
    if not np.all(np.isfinite(power)) or np.any(power < 0):
        raise ValueError(
            f"power must be finite and >= 0 (0: constant step, 1: harmonic); got "
            f"{np.ravel(power)[:5].tolist()}. A negative power makes the step grow without bound."
        )
    if not np.all(np.isfinite(t0)):
        raise ValueError(f"t0 must be finite; got {np.ravel(t0)[:5].tolist()}.")
    t0_b, power_b = np.broadcast_arrays(t0, power)
    bad = (power_b > 0) & (t0_b <= 0)
    if np.any(bad):
        raise ValueError(
            f"t0 must be > 0 when power > 0; got t0 = {np.ravel(t0_b[bad])[:5].tolist()}. The "
            "first update uses t = 0, so alpha_0 = alpha0 / t0**power would divide by zero (or "
            "take a power of a negative number). Use t0 = 1 for alpha0 / (t + 1)."
        )
    return schedule


def check_step_size_field(value, name: str = "params.step_size") -> None:
    """The check of a params field that must hold a :class:`StepSize`: its type, then
    :func:`validate_step_size`, each error prefixed with ``name``.

    Example:
        >>> check_step_size_field(constant(0.1))
        >>> check_step_size_field(0.1)      # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: params.step_size must be a decentral.schedules.StepSize ...; got float.
    """
    if not isinstance(value, StepSize):
        raise ValueError(f"{name} must be a decentral.schedules.StepSize (constant(0.1), "
                         f"harmonic(alpha0, t0), ...); got {type(value).__name__}.")
    try:
        validate_step_size(value)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def constant(alpha) -> StepSize:
    """Constant step ``alpha_t = alpha`` for every t (Theorem 3, eq. 7 of Lin-Gupta-Liu).

    Stored as ``StepSize(alpha0=alpha, t0=1.0, power=0.0)``.

    Args:
        alpha: the step, finite and > 0 (scalar or array for a sweep).

    Raises:
        ValueError: if ``alpha`` is NaN, infinite or <= 0.

    Example:
        >>> sched = constant(0.05)
        >>> [round(float(step_size(sched, t)), 6) for t in (0, 1000)]
        [0.05, 0.05]
        >>> satisfies_robbins_monro(sched)                    # sum alpha_t^2 = inf
        False
    """
    return validate_step_size(StepSize(_as_param(alpha, "alpha"), 1.0, 0.0))


def harmonic(alpha0, t0=1.0) -> StepSize:
    """Harmonic step ``alpha_t = alpha0 / (t + t0)``; ``t0 = 1`` gives ``alpha0 / (t + 1)``.

    ``t`` is the 0-based update index, so the first update uses ``alpha0 / t0``.

    Args:
        alpha0: numerator, finite and > 0.
        t0: offset, finite and > 0 (default 1).

    Raises:
        ValueError: for a NaN/inf/non-positive ``alpha0`` or ``t0 <= 0``.

    Example:
        >>> sched = harmonic(5.0, 51.0)
        >>> round(float(step_size(sched, 0)), 6), round(float(step_size(sched, 10)), 6)
        (0.098039, 0.081967)
    """
    return validate_step_size(
        StepSize(_as_param(alpha0, "alpha0"), _as_param(t0, "t0"), 1.0)
    )


def polynomial(alpha0, power, t0=1.0) -> StepSize:
    """Polynomial step ``alpha_t = alpha0 / (t + t0) ** power`` (``t`` 0-based).

    ``power = 0`` is a constant step, ``power = 1`` harmonic; A5's conditions
    (``sum alpha_t = inf``, ``sum alpha_t^2 < inf``) hold iff ``0.5 < power <= 1``.

    Args:
        alpha0: numerator, finite and > 0.
        power: exponent, finite and >= 0.
        t0: offset, finite; must be > 0 when ``power > 0``.

    Raises:
        ValueError: for NaN/inf/non-positive ``alpha0``, negative or non-finite ``power``, or
            ``t0 <= 0`` with ``power > 0``.

    Example:
        >>> sched = polynomial(1.0, 0.75)
        >>> float(step_size(sched, 0)), float(step_size(sched, 15))    # 1 and 16 ** -0.75
        (1.0, 0.125)
    """
    return validate_step_size(
        StepSize(_as_param(alpha0, "alpha0"), _as_param(t0, "t0"), _as_param(power, "power"))
    )


def step_size(schedule: StepSize, t) -> jax.Array:
    """Evaluate ``alpha_t = alpha0 / (t + t0) ** power``; jit- and vmap-able.

    **t is the 0-based update index: the first update of a run uses t = 0**, i.e.
    ``alpha0 / t0 ** power``. ``t`` may be an int or an array (broadcast against the fields).

    Args:
        schedule: a :class:`StepSize` (scalar fields, or vmap over a stacked one).
        t: step index, ``t >= 0``.

    Returns:
        The step size, in the floating dtype JAX is set to (float64 with x64 enabled).

    Example:
        >>> float(step_size(harmonic(1.0), 0))               # alpha0 / (0 + 1)
        1.0
        >>> [round(float(s), 4) for s in step_size(harmonic(1.0), jnp.arange(3))]
        [1.0, 0.5, 0.3333]
        >>> round(float(jax.jit(step_size)(constant(0.1), 7)), 6)
        0.1
    """
    alpha0, t0, power = schedule
    base = jnp.asarray(t) + t0
    # power == 1 divides exactly (pow may differ from division in the last bit)
    return jnp.where(power == 1, alpha0 / base, alpha0 / base**power)


def stack_schedules(schedules: Sequence[StepSize]) -> StepSize:
    """Stack scalar schedules into one :class:`StepSize` with a leading sweep axis ``[K]``.

    ``jax.vmap(f, in_axes=(0, ...))(stack_schedules([...]), ...)`` then runs every schedule in
    one compiled program; entry ``k`` of the result equals running schedule ``k`` alone.

    Args:
        schedules: non-empty sequence of validated :class:`StepSize` with scalar fields.

    Returns:
        A :class:`StepSize` whose fields are arrays of shape ``[K]``.

    Raises:
        ValueError: if the sequence is empty, holds something that is not a StepSize, or a
            schedule with non-scalar fields.

    Example:
        >>> sweep = stack_schedules([constant(0.1), harmonic(2.0)])
        >>> [round(float(a), 6) for a in sweep.alpha0]
        [0.1, 2.0]
        >>> [round(float(s), 6) for s in jax.vmap(step_size, in_axes=(0, None))(sweep, 0)]
        [0.1, 2.0]
    """
    schedules = list(schedules)
    if not schedules:
        raise ValueError("stack_schedules needs at least one schedule; got an empty sequence.")
    for k, sched in enumerate(schedules):
        if not isinstance(sched, StepSize):
            raise ValueError(
                f"schedules[{k}] is a {type(sched).__name__}, not a StepSize; build it with "
                "constant/harmonic/polynomial."
            )
        validate_step_size(sched)
        if any(jnp.ndim(v) != 0 for v in sched):
            raise ValueError(
                f"schedules[{k}] has non-scalar fields (shapes "
                f"{[tuple(jnp.shape(v)) for v in sched]}); stack scalar schedules only."
            )
    return StepSize(*(jnp.stack([jnp.asarray(s[i]) for s in schedules]) for i in range(3)))


def satisfies_robbins_monro(schedule: StepSize) -> bool | np.ndarray:
    """Whether assumption A5 holds: ``sum_t alpha_t = inf`` and ``sum_t alpha_t^2 < inf``.

    For ``alpha0 / (t + t0) ** power`` (with ``alpha0 > 0``, ``t0 > 0``) this holds iff
    ``0.5 < power <= 1``; the step is then also positive and non-increasing, as A5 asks. A5 is
    needed only for the asymptotic results (Theorems 1, 2, 4); the finite-time bounds also
    cover constant steps. Host-side.

    Args:
        schedule: a :class:`StepSize` with concrete (not traced) fields.

    Returns:
        A Python bool for a scalar schedule, a boolean numpy array for a stacked one.

    Example:
        >>> satisfies_robbins_monro(harmonic(1.0))
        True
        >>> satisfies_robbins_monro(polynomial(1.0, 0.5))   # sum alpha_t^2 = sum 1/(t+1) = inf
        False
        >>> satisfies_robbins_monro(constant(0.1))
        False
    """
    validate_step_size(schedule)
    if _is_traced(*schedule):
        raise ValueError("satisfies_robbins_monro runs on the host; pass a concrete schedule.")
    alpha0, t0, power = (np.asarray(v, dtype=np.float64) for v in schedule)
    ok = (power > 0.5) & (power <= 1.0) & (alpha0 > 0) & (t0 > 0)
    if ok.ndim == 0:
        return bool(ok)
    return ok

