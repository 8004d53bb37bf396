"""Argument checks shared by the whole library: one place for "must be an integer" messages.

Example:
    >>> check_int(5, "num_steps")
    5
    >>> check_int(0, "num_steps")
    Traceback (most recent call last):
    ...
    ValueError: num_steps must be >= 1; got 0.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_int", "check_index", "check_indices", "check_agent_values",
           "is_float_dtype", "float_eps", "sum_tolerance"]


def check_int(value, name: str, *, minimum: int | None = 1, maximum: int | None = None) -> int:
    """``value`` as a Python int after checking it is an integer in ``[minimum, maximum]``.

    Accepts Python and numpy integers (and 0-d integer arrays); refuses bools, floats (even
    ``3.0``: a float where a count is expected is usually a bug upstream) and everything else.

    Args:
        value: the argument to check.
        name: how the argument is called in the error message.
        minimum: smallest allowed value (default 1); None for no lower limit.
        maximum: largest allowed value; None for no upper limit.

    Raises:
        ValueError: what was wrong, with the value received.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer; got {value!r} ({type(value).__name__}).")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}; got {value}.")
    return value


def _index_value(value, name: str, size: int, hint: str, where: str = "the indices") -> int:
    if not isinstance(value, (numbers.Number, np.generic)) and hasattr(value, "__array__") \
            and np.ndim(value) == 0:
        value = np.asarray(value)          # a 0-d numpy or JAX array
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer index in [0, {size}) (a Python int or a "
                         f"numpy integer, not a bool or a float, even an integral one); got "
                         f"{value!r} ({type(value).__name__}).{hint}")
    value = int(value)
    if not 0 <= value < size:
        raise ValueError(f"{name} = {value} is outside {where} 0..{size - 1} (negative indices "
                         f"are not read from the end, large ones never clamped).{hint}")
    return value


def check_index(value, name: str, size: int, *, hint: str = "", where: str = "the indices"
                ) -> int:
    """``value`` as a Python int after checking it is an integer index in ``[0, size)``.

    Accepts Python and numpy integers and 0-d integer arrays; refuses bools, floats (even
    ``2.0``: a float index would be truncated, ``1.5 -> 1``), negative and too-large values
    (never clamped, never read from the end).

    Args:
        value: the index to check.
        name: how the argument is called in the error message.
        size: the number of valid indices.
        hint: appended to the error message (how to fix it).
        where: what the valid range is called in the message (``"the graph's"``).

    Raises:
        ValueError: what was wrong, with the value received.

    Example:
        >>> check_index(np.int32(2), "state", 3)
        2
    """
    return _index_value(value, name, size, f" {hint}" if hint else "", where)


def check_indices(values, name: str, size: int, *, unique: bool = False,
                  hint: str = "", where: str = "the indices") -> tuple[int, ...]:
    """A sequence (or integer array) of indices as a tuple of Python ints, each checked as by
    :func:`check_index`; with ``unique`` a repeated index is refused.

    An array must have an integer dtype (a float or bool array is refused, its first entry
    named); a list may mix Python and numpy integers.

    Args:
        values: a list / tuple / numpy or JAX array of indices (not a scalar).
        name: how the argument is called in the error message.
        size: the number of valid indices.
        unique: refuse an index given twice.
        hint: appended to the error message (how to fix it).
        where: what the valid range is called in the message.

    Raises:
        ValueError: not a sequence of indices, a bool / float / out-of-range entry, or a
            repeat when ``unique``.

    Example:
        >>> check_indices([3, np.int64(0)], "byzantine", 5)
        (3, 0)
    """
    extra = f" {hint}" if hint else ""
    if isinstance(values, (str, bytes)) or np.ndim(values) == 0 and not isinstance(
            values, (list, tuple)):
        raise ValueError(f"{name} must be a sequence of integer indices in [0, {size}); got "
                         f"{values!r}.{extra}")
    if not isinstance(values, np.ndarray) and hasattr(values, "__array__"):
        values = np.asarray(values)        # a JAX array
    if isinstance(values, np.ndarray) and values.dtype != object:
        items = list(values.reshape(-1))
    else:
        try:
            items = list(values)
        except TypeError:
            raise ValueError(f"{name} must be a sequence of integer indices in [0, {size}); "
                             f"got {values!r}.{extra}") from None
    out = tuple(_index_value(v, f"{name}[{k}]", size, extra, where)
                for k, v in enumerate(items))
    if unique and len(set(out)) != len(out):
        raise ValueError(f"{name} lists an index twice: {list(out)}.{extra}")
    return out


def is_float_dtype(dtype) -> bool:
    """True for real floating dtypes, numpy's and JAX's low-precision ones (``bfloat16``, the
    float8 types) alike; ``np.issubdtype(bfloat16, np.floating)`` is False, which would
    silently route such arrays through a float64 cast and a float64-sized tolerance."""
    import jax.numpy as jnp

    try:
        dt = np.dtype(dtype)
    except TypeError:
        return False
    return bool(jnp.issubdtype(dt, jnp.floating))


def float_eps(dtype) -> float:
    """Machine epsilon of a real floating dtype (see :func:`is_float_dtype`); 0.0 otherwise
    (integer and boolean inputs are exact).

    Example:
        >>> float_eps(np.float32) == float(np.finfo(np.float32).eps), float_eps(np.int64)
        (True, 0.0)
    """
    if not is_float_dtype(dtype):
        return 0.0
    import ml_dtypes

    return float(ml_dtypes.finfo(np.dtype(dtype)).eps)


#: Entries of the precision of float32 or better get a margin of 64 ``n eps``; coarser ones
#: (float16, bfloat16, float8) 2 ``n eps``, as 64 ``n eps`` would there reach the size of the
#: weights themselves (``64 * 2 * eps_bfloat16 = 1``) and accept anything.
_HALF_PRECISION_EPS = 1e-6


def sum_tolerance(dtype, count: int, tol: float) -> float:
    """The tolerance of a check that a sum of ``count`` entries of ``dtype`` equals 1 (rows of
    a stochastic matrix, a probability vector): ``tol``, raised to ``64 count eps(dtype)`` when
    that is larger (``2 count eps`` for half precisions and below). A float32 sum of n terms
    is only exact to about ``n eps32``, so a float64-sized ``tol`` applied after a float64
    cast would refuse valid float32 input.

    Example:
        >>> sum_tolerance(np.float64, 10, 1e-10), sum_tolerance(np.float32, 10, 1e-10) > 1e-5
        (1e-10, True)
    """
    eps = float_eps(dtype)
    margin = 64.0 if eps <= _HALF_PRECISION_EPS else 2.0
    return max(float(tol), margin * max(int(count), 1) * eps)


def check_agent_values(values, n: int | None = None, *, name: str = "params.x0"):
    """``values`` as a numpy array after checking it holds per-agent initial values: real
    numbers (not bool, not complex), a leading agent axis ``[N, ...]`` (``N = n`` when ``n``
    is given) and finite entries. The one check of every family's initial values.

    Raises:
        ValueError: naming ``name`` and what is wrong.

    Example:
        >>> check_agent_values([1.0, 2.0], 2).tolist()
        [1.0, 2.0]
    """
    arr = np.asarray(values)
    if arr.dtype == object or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real numbers; got dtype {arr.dtype}.")
    if arr.ndim == 0:
        raise ValueError(f"{name} needs a leading agent axis [N, ...]; got a scalar.")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} agents; the graphs have N = {n} "
                         f"({name.rsplit('.', 1)[-1]} must be [N, ...]).")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} has NaN or infinite entries; initial values must be "
                         "finite.")
    return arr
