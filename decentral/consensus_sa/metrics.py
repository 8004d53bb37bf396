"""Error decompositions the finite-time claims log (host numpy, on recorded iterates).

With weights ``pi`` (the absolute probability sequence at the recorded step) and the
weighted average ``<theta> = sum_i pi^i theta^i``:

    sum_i pi^i ||theta^i - theta*||^2 = sum_i pi^i ||theta^i - <theta>||^2 + ||<theta> - theta*||^2

exactly (the cross term vanishes because ``sum_i pi^i (theta^i - <theta>) = 0``); the paper's
proof of Theorem 3 uses the inequality with factors 2. The first part is the consensus error
``V_pi`` (Touri's comparison function), the second the "single-agent" error.
"""

from __future__ import annotations

import numpy as np

__all__ = ["error_parts"]


def error_parts(theta, pi, target, *, agent_axis: int = -2) -> dict[str, np.ndarray]:
    """The parts of the pi-weighted error of iterates ``theta [..., N, d]``.

    Args:
        theta: iterates ``[..., N, d]``: the agent axis at ``agent_axis`` (default second to
            last), the parameter axis ``d`` last. A scalar per agent is ``[..., N, 1]``.
        pi: weights ``[..., N]`` broadcastable against ``theta`` without its parameter axis
            (after the agent axis is moved second to last).
        target: ``[d]`` (e.g. ``theta*_pi``), or ``[..., d]`` broadcastable against the
            averages.
        agent_axis: the agents' axis of ``theta`` (any axis but the last, which is ``d``);
            nothing is inferred from lengths, so ``d = N`` or ``T = N`` is never ambiguous.

    Returns:
        ``weighted`` (sum_i pi^i ||theta^i - target||^2), ``consensus`` (V_pi), ``average``
        (||<theta> - target||^2), ``max_deviation`` (max_i ||theta^i - <theta>||) and
        ``average_value`` (<theta>), each with the leading axes of ``theta``.

    Raises:
        ValueError: ``theta`` with fewer than two axes, an ``agent_axis`` that is not an int
            or names the parameter axis, ``pi`` whose last axis is not the N agents (or that
            does not broadcast), ``target`` whose last axis is not ``d``.

    Example:
        >>> parts = error_parts(np.array([[0.0], [2.0]]), np.array([0.5, 0.5]), np.array([0.0]))
        >>> float(parts["weighted"]), float(parts["consensus"]), float(parts["average"])
        (2.0, 1.0, 1.0)
    """
    th = np.asarray(theta, np.float64)
    if th.ndim < 2:
        raise ValueError(f"theta must be [..., N, d] (a scalar per agent is [..., N, 1]); got "
                         f"shape {th.shape}.")
    if isinstance(agent_axis, bool | np.bool_) or not isinstance(agent_axis, int | np.integer) \
            or not -th.ndim <= agent_axis < th.ndim or int(agent_axis) % th.ndim == th.ndim - 1:
        raise ValueError(f"agent_axis must be an int naming an axis of theta {th.shape} other "
                         f"than the last (the parameter axis d); got {agent_axis!r}.")
    th = np.moveaxis(th, int(agent_axis), -2)
    n, d = th.shape[-2], th.shape[-1]
    p = np.asarray(pi, np.float64)
    if p.ndim < 1 or p.shape[-1] != n:
        raise ValueError(f"pi must be [..., N] with N = {n} (theta's agent axis {agent_axis}); "
                         f"got shape {p.shape}.")
    try:
        w = np.broadcast_to(p, th.shape[:-1])
    except ValueError:
        raise ValueError(f"pi {p.shape} does not broadcast against theta's [..., N] = "
                         f"{th.shape[:-1]}.") from None
    tgt = np.asarray(target, np.float64)
    if tgt.ndim < 1 or tgt.shape[-1] != d:
        raise ValueError(f"target must be [d] = [{d}] (theta's last axis); got shape "
                         f"{tgt.shape}.")
    avg = np.einsum("...i,...ij->...j", w, th)
    dev = th - avg[..., None, :]
    dev_sq = (dev ** 2).sum(-1)
    err = th - np.asarray(target, np.float64)
    return {
        "weighted": (w * (err ** 2).sum(-1)).sum(-1),
        "consensus": (w * dev_sq).sum(-1),
        "average": ((avg - target) ** 2).sum(-1),
        "max_deviation": np.sqrt(dev_sq.max(-1)),
        "average_value": avg,
    }
