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


def error_parts(theta, pi, target) -> dict[str, np.ndarray]:
    """The parts of the pi-weighted error of iterates ``theta [..., N, d]``.

    Args:
        theta: iterates with the agent axis second to last.
        pi: weights ``[..., N]`` broadcastable against ``theta[..., 0]``.
        target: ``[d]`` (e.g. ``theta*_pi``).

    Returns:
        ``weighted`` (sum_i pi^i ||theta^i - target||^2), ``consensus`` (V_pi), ``average``
        (||<theta> - target||^2), ``max_deviation`` (max_i ||theta^i - <theta>||) and
        ``average_value`` (<theta>), each with the leading axes of ``theta``.

    Example:
        >>> parts = error_parts(np.array([[0.0], [2.0]]), np.array([0.5, 0.5]), np.array([0.0]))
        >>> float(parts["weighted"]), float(parts["consensus"]), float(parts["average"])
        (2.0, 1.0, 1.0)
    """
    th = np.asarray(theta, np.float64)
    w = np.broadcast_to(np.asarray(pi, np.float64), th.shape[:-1])
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
