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
    agents.

    Args:
        values: ``[..., N]`` or ``[..., N, d...]`` recorded values.
        cooperative: ``[N]`` boolean mask of the cooperative agents.
        agent_axis: the axis of ``values`` that indexes the agents (negative counts from the
            end). Default None: the one axis of length N; when several axes have length N
            (e.g. ``[T, N, d]`` with ``d = N``, or ``T = N``) the call is refused: pass
            ``agent_axis`` (``-1`` for ``[..., N]``, ``-2`` for ``[..., N, d]``).

    Returns:
        The spread, maximised over the axes after the agent axis (the coordinates), with the
        axes before it.

    Raises:
        ValueError: no axis or several axes of length N with ``agent_axis=None``; an
            ``agent_axis`` that is not an int, out of range, or whose length is not N.
    """
    x, c = _coop(values, cooperative)
    ax = _agent_axis(x, c, agent_axis)
    xc = np.compress(c, x, axis=ax)
    spread = xc.max(axis=ax) - xc.min(axis=ax)
    rest = tuple(range(ax, spread.ndim))
    return spread.max(axis=rest) if rest else spread


def hull_violation(values, x0, cooperative, *, agent_axis: int | None = None) -> np.ndarray:
    """How far the cooperative values lie outside ``[min, max]`` of the cooperative initial
    values ``x0 [N, ...]``, per coordinate, maximised over agents and coordinates (0 inside).

    Args:
        values: recorded values with an agent axis of length N and, after removing it, the
            trailing coordinate axes of ``x0`` last (``[..., N]`` for ``x0 [N]``,
            ``[..., N, d]`` for ``x0 [N, d]``).
        x0: ``[N, ...]`` the initial values.
        cooperative: ``[N]`` boolean mask of the cooperative agents.
        agent_axis: the agents' axis of ``values``. Default None: the documented layout,
            ``values.ndim - x0.ndim`` (the agents just before ``x0``'s coordinate axes; so
            ``[T, N, d]`` with ``d = N`` or ``[T, N]`` with ``T = N`` are read right); values
            laid out otherwise are read by the one axis of length N that leaves ``x0``'s
            coordinate axes last, and refused when several qualify: pass ``agent_axis``.

    Returns:
        The violation with the axes of ``values`` other than the agents and coordinates.

    Raises:
        ValueError: an ambiguous or impossible agent axis (as :func:`cooperative_spread`),
            or ``values`` whose coordinates do not match ``x0``'s.
    """
    x, c = _coop(values, cooperative)
    init_all = np.asarray(x0, np.float64)
    if init_all.ndim < 1 or init_all.shape[0] != c.shape[0]:
        raise ValueError(f"x0 must be [N = {c.shape[0]}, ...]; got shape {init_all.shape}.")
    trail = init_all.shape[1:]
    documented = x.ndim - init_all.ndim
    if agent_axis is None and documented >= 0 and x.shape[documented:] == \
            (c.shape[0],) + tuple(trail):
        ax = documented                       # [..., N, *d]: the layout the docstring states
    else:
        ax = _agent_axis(x, c, agent_axis, trail=trail)
    init = init_all[c]
    lo, hi = init.min(axis=0), init.max(axis=0)
    xc = np.moveaxis(np.compress(c, x, axis=ax), ax, -1 - (init.ndim - 1))
    out = np.maximum(np.maximum(lo - xc, xc - hi), 0.0)
    k = out.ndim - (init.ndim - 1) - 1
    return out.reshape(out.shape[:k] + (-1,)).max(axis=-1)


def _fits(shape: tuple, ax: int, trail: tuple | None) -> bool:
    """Removing axis ``ax`` leaves ``trail`` as the last axes (always True without trail)."""
    if trail is None:
        return True
    rest = shape[:ax] + shape[ax + 1:]
    return len(rest) >= len(trail) and tuple(rest[len(rest) - len(trail):]) == tuple(trail)


def _agent_axis(x, c, agent_axis, *, trail: tuple | None = None) -> int:
    """The agents' axis of ``x`` as a non-negative int: the given one (checked), or the one
    axis of length N (fitting ``trail``); never a guess among several."""
    n = c.shape[0]
    if agent_axis is not None:
        if isinstance(agent_axis, bool | np.bool_) or not isinstance(agent_axis,
                                                                      int | np.integer):
            raise ValueError(f"agent_axis must be an int (an axis of values) or None; got "
                             f"{agent_axis!r}.")
        if not -x.ndim <= agent_axis < x.ndim:
            raise ValueError(f"agent_axis = {agent_axis} is out of range for values of shape "
                             f"{x.shape}.")
        ax = int(agent_axis) % x.ndim
        if x.shape[ax] != n:
            raise ValueError(f"axis {agent_axis} of values has length {x.shape[ax]}, "
                             f"not N = {n}; pass the agents' axis as agent_axis.")
        if not _fits(x.shape, ax, trail):
            raise ValueError(f"with the agents on axis {agent_axis}, values {x.shape} do not "
                             f"end with the coordinate axes {tuple(trail)} of x0.")
        return ax
    found = [ax for ax in range(x.ndim) if x.shape[ax] == n and _fits(x.shape, ax, trail)]
    if not found:
        raise ValueError(f"no axis of values {x.shape} has length N = {n}"
                         + ("" if trail is None else f" with x0's coordinate axes "
                                                     f"{tuple(trail)} after it") + ".")
    if len(found) > 1:
        raise ValueError(f"values {x.shape} has several axes that could index the N = {n} "
                         f"agents ({found}): say which with agent_axis= (e.g. agent_axis=-1 "
                         "for [..., N], agent_axis=-2 for [..., N, d]).")
    return found[0]
