"""Metrics of recorded values (host numpy): cooperative spread and hull violation.

Example:
    >>> import numpy as np
    >>> x = np.array([[0.0, 1.0, 9.0], [0.5, 0.6, 9.0]])        # [T, N], agent 2 Byzantine
    >>> coop = np.array([True, True, False])
    >>> cooperative_spread(x, coop).tolist()
    [1.0, 0.09999999999999998]
    >>> hull_violation(x, np.array([0.0, 1.0, 9.0]), coop).tolist()
    [0.0, 0.0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["cooperative_spread", "hull_violation"]


def _coop(values, cooperative):
    x = np.asarray(values, np.float64)
    c = np.asarray(cooperative, bool)
    if c.ndim != 1 or x.ndim < 1:
        raise ValueError("cooperative must be a boolean [N] mask and values [..., N, ...].")
    return x, c


def cooperative_spread(values, cooperative, *, agent_axis: int | None = None) -> np.ndarray:
    """``max_{i, j coop} |x^i - x^j|``, the largest per-coordinate spread of the cooperative
    agents. ``values [..., N]`` or ``[..., N, d...]`` with the agent axis at ``agent_axis``
    (default: the axis of length N, the last such one for ``[..., N]``, else ``-1 - ndim(d)``).
    """
    x, c = _coop(values, cooperative)
    ax = _agent_axis(x, c, agent_axis)
    xc = np.compress(c, x, axis=ax)
    spread = xc.max(axis=ax) - xc.min(axis=ax)
    rest = tuple(range(ax if ax >= 0 else x.ndim + ax, spread.ndim))
    return spread.max(axis=rest) if rest else spread


def hull_violation(values, x0, cooperative, *, agent_axis: int | None = None) -> np.ndarray:
    """How far the cooperative values lie outside ``[min, max]`` of the cooperative initial
    values ``x0 [N, ...]``, per coordinate, maximised over agents and coordinates (0 inside)."""
    x, c = _coop(values, cooperative)
    ax = _agent_axis(x, c, agent_axis)
    init = np.asarray(x0, np.float64)[c]
    lo, hi = init.min(axis=0), init.max(axis=0)
    xc = np.moveaxis(np.compress(c, x, axis=ax), ax, -1 - (init.ndim - 1))
    out = np.maximum(np.maximum(lo - xc, xc - hi), 0.0)
    k = out.ndim - (init.ndim - 1) - 1
    return out.reshape(out.shape[:k] + (-1,)).max(axis=-1)


def _agent_axis(x, c, agent_axis):
    n = c.shape[0]
    if agent_axis is not None:
        if x.shape[agent_axis] != n:
            raise ValueError(f"axis {agent_axis} of values has length {x.shape[agent_axis]}, "
                             f"not N = {n}.")
        return agent_axis
    for ax in range(x.ndim - 1, -1, -1):
        if x.shape[ax] == n:
            return ax
    raise ValueError(f"no axis of values {x.shape} has length N = {n}.")
