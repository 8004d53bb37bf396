"""Plotting helpers: they take arrays and return ``(fig, ax)``; they never run simulations.

:func:`plot_curves` draws the mean over seeds of each curve with a percentile band, and a legend
outside the axes (:func:`legend_outside`) whose last entry says what the shaded bands are
(:func:`band_patch`), so no legend covers data and no band goes unexplained.

Example:
    >>> fig, ax = plot_curves(np.arange(1, 11), {"error": np.ones((3, 10))}, logy=True,
    ...                       xlabel="$t$ (steps)", ylabel="error")
    >>> ax.get_yscale(), [t.get_text() for t in ax.get_legend().get_texts()]
    ('log', ['error', 'shaded: 10–90% of seeds'])
    >>> plt.close(fig)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import Patch

__all__ = ["plot_curves", "band_patch", "legend_outside", "BAND_GID"]

BAND_GID = "decentral-band"
"""The ``gid`` of the percentile bands :func:`plot_curves` draws (how :func:`legend_outside`
finds them)."""


def band_patch(band: tuple[float, float] = (10.0, 90.0), over: str = "seeds") -> Patch:
    """A grey legend entry saying what the shaded bands are: ``"shaded: 10–90% of seeds"``."""
    lo, hi = band
    return Patch(facecolor="0.55", alpha=0.3, linewidth=0,
                 label=f"shaded: {lo:g}–{hi:g}% of {over}")


def legend_outside(ax, *, band: tuple[float, float] | None = None, over: str = "seeds",
                   extra: Sequence = (), fontsize: float = 8, **kwargs):
    """The legend of ``ax`` placed to the right of the axes, where it covers no data.

    Args:
        ax: the axes whose labelled artists make the legend.
        band: percentiles of the shaded bands; by default those of the bands
            :func:`plot_curves` drew on ``ax`` (none drawn: no band entry).
        over: what the band's percentiles run over (``"seeds"``, ``"runs"``).
        extra: more handles (proxy artists with labels) appended to the legend.
        fontsize: legend font size.
        kwargs: passed on to ``ax.legend``.

    Returns:
        The :class:`matplotlib.legend.Legend`. Call ``fig.tight_layout()`` (or use a
        constrained layout) afterwards: both make room for it.
    """
    handles, labels = ax.get_legend_handles_labels()
    handles, labels = list(handles), list(labels)
    if band is None:
        band = getattr(ax, "_decentral_band", None)
    extras = list(extra) + ([band_patch(band, over)] if band is not None else [])
    for h in extras:
        handles.append(h)
        labels.append(h.get_label())
    options = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0,
               "fontsize": fontsize, **kwargs}
    return ax.legend(handles, labels, **options)


def plot_curves(t, curves: Mapping[str, np.ndarray], *, logx: bool = False, logy: bool = True,
                band: tuple[float, float] = (10.0, 90.0), xlabel: str | None = None,
                ylabel: str | None = None, title: str | None = None, ax=None,
                linestyle: str = "-", color=None, legend: bool = True, over: str = "seeds"):
    """Mean over seeds of each curve, with a percentile band across seeds.

    Args:
        t: ``[T]`` x values.
        curves: label -> ``[S, T]`` per-seed values (or ``[T]`` for one curve).
        logx, logy: log axes.
        band: lower and upper percentiles of the shaded band (over seeds).
        xlabel, ylabel, title: set when given; on a new figure the x label defaults to
            ``"t"``. Drawing into existing axes (``ax``) leaves the labels it was not given.
        ax: draw into these axes (a panel of a larger figure) instead of a new figure.
        linestyle: line style of every curve (e.g. ``"--"`` for exact curves beside
            Monte-Carlo ones).
        color: one colour for every curve and its band (default: the axes' colour cycle).
        legend: draw the legend outside the axes (:func:`legend_outside`), with an entry for
            the bands when some were drawn; redrawn on every call on the same axes.
        over: what the band's percentiles run over, in the legend entry.

    Returns:
        ``(fig, ax)``; a figure without a constrained layout is re-laid out (``tight_layout``)
        after every call, so the outside legend stays inside the canvas.

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
    new = ax is None
    if new:
        fig, ax = plt.subplots(figsize=(6.0, 4.0))
        xlabel = "t" if xlabel is None else xlabel
    else:
        fig = ax.figure
    for label, values in checked.items():
        mean = values.mean(axis=0)
        (line,) = ax.plot(t, mean, label=label, linestyle=linestyle, color=color)
        if values.shape[0] > 1:
            lo, hi = np.percentile(values, band, axis=0)
            poly = ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
            poly.set_gid(BAND_GID)
            ax._decentral_band = tuple(band)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    if legend:
        legend_outside(ax, over=over)
    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        fig.tight_layout()
    return fig, ax
