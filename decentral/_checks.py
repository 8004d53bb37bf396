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

__all__ = ["check_int"]


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
