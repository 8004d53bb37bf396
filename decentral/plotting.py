"""Plotting helpers: they take arrays and return ``(fig, ax)``; they never run simulations.

Example:
    >>> fig, ax = plot_curves(np.arange(1, 11), {"error": np.ones((3, 10))}, logy=True)
    >>> ax.get_yscale()
    'log'
    >>> plt.close(fig)
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["plot_curves"]


def plot_curves(t, curves: Mapping[str, np.ndarray], *, logx: bool = False, logy: bool = True,
                band: tuple[float, float] = (10.0, 90.0), xlabel: str = "t",
                ylabel: str = "", title: str = "", ax=None, linestyle: str = "-"):
    """Mean over seeds of each curve, with a percentile band across seeds.

    Args:
        t: ``[T]`` x values.
        curves: label -> ``[S, T]`` per-seed values (or ``[T]`` for one curve).
        logx, logy: log axes.
        band: lower and upper percentiles of the shaded band (over seeds).
        ax: draw into these axes (a panel of a larger figure) instead of a new figure.
        linestyle: line style of every curve (e.g. ``"--"`` for exact curves beside
            Monte-Carlo ones).

    Returns:
        ``(fig, ax)``.

    Raises:
        ValueError: on shape mismatches or non-finite values (never a silent NaN plot).
    """
    t = np.asarray(t, dtype=float)
    checked = {}
    for label, values in curves.items():       # validate everything before drawing anything
        v = np.asarray(values, dtype=float)
        v = v[None] if v.ndim == 1 else v
        if v.ndim != 2 or v.shape[1] != t.shape[0]:
            raise ValueError(f"curve {label!r} has shape {np.shape(values)}; expected [S, {t.size}]"
                             " or [T].")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"curve {label!r} has NaN or infinite values; refusing to plot them.")
        checked[label] = v
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 4.0))
    else:
        fig = ax.figure
    for label, v in checked.items():
        mean = v.mean(axis=0)
        (line,) = ax.plot(t, mean, label=label, linestyle=linestyle)
        if v.shape[0] > 1:
            lo, hi = np.percentile(v, band, axis=0)
            ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return fig, ax
