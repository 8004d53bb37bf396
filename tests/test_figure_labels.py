"""Every registered figure reads as a paper figure: checked on the matplotlib objects, not pixels.

Each figure is built once (module fixture, lazily per id) at the ``tiny`` size, or, for the
figures that need saved paper-scale runs (``resilient_ac_learning.*``), drawn from small
synthetic panels through their draw functions. Then, after ``fig.canvas.draw()``:

* ``axis_labels`` — every visible axes has an x and a y label (its own, one of the axes it
  shares that axis with, or the figure's ``supxlabel`` / ``supylabel``), and each label names
  its quantity in words (a word of three letters or more outside ``$...$``);
* ``mathtext`` — no ASCII pseudo-math outside ``$...$`` in any text of the figure: subscripts
  ``x_i``, carets ``pi^i``, norms ``||x||``, Greek letters spelled out (``alpha=``, ``theta``),
  ASCII operators (``->``, ``<=``, ``>=``, ``+-``);
* ``time_units`` — an x axis that shows time (``t``, ``$t$``, "time") says its unit (steps,
  updates, iterations, episodes, rounds, pulls, epochs);
* ``text_overlap`` — no two texts of the figure overlap (tick labels, axis labels, titles,
  legend entries, annotations), and every text lies inside the canvas;
* ``legends`` — an axes with two or more labelled artists has every label in a legend (its own
  or the figure's);
* ``legend_over_data`` — no legend, and no boxed annotation, covers a line, a band or a marker
  (display coordinates, clipped to the axes);
* ``bands`` — every shaded band (``fill_between``, ``axhspan`` / ``axvspan``) is explained: its
  own label or a patch of its colour is in a legend, or a title / legend / figure text says
  what the band or shading is (with ``%``, a percentile, an interval, a range, min / max or the
  hull it shows).

Tests are parametrized by figure id, so ``-k bandits`` checks one family. The checks
themselves are tested on a planted bad figure (negative control) and a clean one."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.path import Path
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from decentral.cli import verification_backends
from figures.registry import DISCOVERY_ERRORS, REGISTRY, FigureContext, discover

# one worker runs this module: the figures are built once and shared by its tests
pytestmark = pytest.mark.xdist_group("figures")

discover()
FIGURE_IDS = sorted(REGISTRY)

# ---------------------------------------------------------------------------------------------
# building the figures
# ---------------------------------------------------------------------------------------------


def _scenarios() -> tuple[str, ...]:
    """The grid-world scenarios the learning figures draw (one column each)."""
    import importlib

    for module in ("decentral.resilient_ac.learning", "decentral.resilient_ac.experiments"):
        try:
            return tuple(importlib.import_module(module).SCENARIOS)
        except (ImportError, AttributeError):
            continue
    raise AssertionError("no module holds the grid-world SCENARIOS")


def _v1_panels(episodes: int = 120) -> dict:
    rng = np.random.default_rng(0)
    ep = np.arange(episodes)
    panels = {}
    for k, s in enumerate(_scenarios()):
        for h in (0, 1):
            coop = -3.7 + 1.5 * (1 - np.exp(-ep / 30)) - 0.2 * k * (1 - h) \
                + 0.1 * rng.standard_normal(episodes)
            adv = np.full(episodes, np.nan) if s == "cooperative" else coop + 1.0
            panels[(s, h)] = (ep, coop, adv)
    return panels


def _v2_panels(episodes: int = 160) -> dict:
    ep = np.arange(episodes)
    panels = {}
    for k, s in enumerate(_scenarios()):
        for h in (0, 1):
            true = -7.0 + 1.5 * (1 - np.exp(-ep / 40))
            panels[(s, h)] = {"episode": ep, "true": true,
                              "estimated": true + (k * (1 - h)) * np.linspace(0, 2, episodes),
                              "true_global": true + 0.5}
    return panels


def _learning_v1():
    from figures import resilient_ac as fr

    return fr.draw_v1_returns(_v1_panels(), "v1-corrected")[0]


def _learning_v2():
    from figures import resilient_ac as fr

    return fr.draw_v2_estimates(_v2_panels(), "v2-corrected", 20, 20)[0]


#: Figures drawn from synthetic panels through their draw functions: even their tiny run trains
#: 8 to 16 grid-world learners (one to two minutes), and their paper-scale run reads the saved
#: claim runs.
SYNTHETIC: dict[str, Callable[[], Any]] = {
    "resilient_ac_learning.v1_returns": _learning_v1,
    "resilient_ac_learning.v2_estimates": _learning_v2,
}


def _build(fid: str):
    with verification_backends():
        if fid in SYNTHETIC:
            fig = SYNTHETIC[fid]()
        else:
            fig = REGISTRY[fid].run(FigureContext("tiny")).fig
    fig.canvas.draw()
    return fig


@pytest.fixture(scope="module")
def drawn():
    """``get(fid) -> Figure``: built on first use, drawn, and shared by the tests of that figure
    (they run one after the other: the tests are parametrized figure first). Only the current
    figure stays open; asking for another closes it."""
    current: dict[str, Any] = {}

    def get(fid: str):
        if fid not in current:
            for old in current.values():
                if not isinstance(old, Exception):
                    plt.close(old)
            current.clear()
            try:
                current[fid] = _build(fid)
            except Exception as exc:  # noqa: BLE001 - every test of the figure reports it
                current[fid] = exc
        got = current[fid]
        if isinstance(got, Exception):
            raise AssertionError(f"figure {fid} could not be built: {got!r}") from got
        return got

    yield get
    for fig in current.values():
        if not isinstance(fig, Exception):
            plt.close(fig)


# ---------------------------------------------------------------------------------------------
# the checks: each takes a drawn figure and returns a list of problems (empty: passes)
# ---------------------------------------------------------------------------------------------

_MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$", re.S)

_GREEK = (r"alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|iota|kappa|lambda|mu|nu|"
          r"xi|pi|rho|sigma|varsigma|tau|phi|chi|psi|omega")

# A subscript is flagged on a math-like base (one letter, a Greek name, sum / max / min / log,
# a closing bracket or a star): "x_i", "theta_t", "max_i", "theta*_pi", "K_10". Names with an
# underscore ("Dec_UCB", the v1 paper's name of its algorithm) are not math.
_PSEUDO_MATH = [
    (re.compile(rf"((?<![A-Za-z])([A-Za-z]|{_GREEK}|sum|max|min|log|exp)|[)\]}}*])"
                r"_[A-Za-z0-9{(\\]"), "subscript with '_'"),
    (re.compile(r"\^"), "power / superscript with '^'"),
    (re.compile(r"\|\|"), "norm with '||'"),
    (re.compile(rf"(?<![A-Za-z])({_GREEK})(?![A-Za-z])"), "Greek letter spelled out"),
    (re.compile(r"<->|->|<-|<=|>=|\+-|!="), "ASCII operator"),
    (re.compile(r"sqrt\("), "sqrt( )"),
]

_TIME = re.compile(r"^\s*(\$\s*t\s*\$|t(?![A-Za-z]))|\btime\b", re.I)
_TIME_UNIT = re.compile(r"\b(steps?|updates?|iterations?|episodes?|rounds?|pulls?|epochs?|"
                        r"seconds|minutes|hours)\b", re.I)
_BAND_WORD = re.compile(r"band|shad(ed|ing)", re.I)
_BAND_WHAT = re.compile(r"%|percentile|quantile|interval|range|min|max|hull|std|standard "
                        r"deviation|\\pm|±", re.I)


def _outside_math(text: str) -> str:
    return _MATH.sub(" ", text)


def _visible_axes(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison]


def _panel(ax) -> str:
    title = ax.get_title() or ax.get_title("left") or ax.get_title("right")
    spec = ax.get_subplotspec()
    where = f"panel ({spec.rowspan.start}, {spec.colspan.start})" if spec else "axes"
    return where + (f" {title!r}" if title else "")


def _drawn_tick_labels(axis) -> list[Text]:
    """The tick labels matplotlib draws: ticks inside the view interval, labels switched on
    (tick objects beyond the view keep stale, 'visible' labels that are never drawn)."""
    lo, hi = sorted(axis.get_view_interval())
    scale = axis.get_transform()
    span = scale.transform([lo, hi])
    tol = 1e-9 * max(1.0, float(abs(span[1] - span[0])))
    out = []
    for locs, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks),
                        (axis.get_minorticklocs(), axis.get_minor_ticks)):
        for loc, tick in zip(locs, ticks(len(locs)), strict=True):
            where = scale.transform([loc])[0]
            if not (min(span) - tol <= where <= max(span) + tol):
                continue
            for label in (tick.label1, tick.label2):
                if label.get_visible() and label.get_text().strip():
                    out.append(label)
    return out


def _texts(fig) -> list[Text]:
    """Every text the figure draws: visible, non-empty, in a visible axes (if any); of the
    tick labels only those drawn."""
    ticks, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in (*axis.majorTicks, *axis.minorTicks):
                ticks.update((id(tick.label1), id(tick.label2)))
            if ax.get_visible() and ax.axison:
                drawn += _drawn_tick_labels(axis)
    out = []
    for t in fig.findobj(Text):
        if id(t) in ticks or not t.get_visible() or not t.get_text().strip():
            continue
        ax = t.axes
        if ax is not None and not (ax.get_visible() and (ax.axison or t in ax.texts
                                                           or t is ax.title)):
            continue
        out.append(t)
    return out + drawn


def _legends(fig) -> list[Legend]:
    out = [ax.get_legend() for ax in _visible_axes(fig) if ax.get_legend() is not None]
    return out + [lg for lg in fig.legends if lg.get_visible()]


def _legend_labels(fig) -> set[str]:
    return {t.get_text() for lg in _legends(fig) for t in lg.get_texts()}


def _shared_label(ax, which: str) -> str:
    own = (ax.get_xlabel() if which == "x" else ax.get_ylabel()).strip()
    if own:
        return own
    group = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for other in group.get_siblings(ax):
        if other is not ax and other.get_visible():
            label = (other.get_xlabel() if which == "x" else other.get_ylabel()).strip()
            if label:
                return label
    sup = getattr(ax.get_figure(root=True), f"_sup{which}label", None)
    return sup.get_text().strip() if sup is not None and sup.get_visible() else ""


def check_axis_labels(fig) -> list[str]:
    problems = []
    for ax in _visible_axes(fig):
        for which in ("x", "y"):
            label = _shared_label(ax, which)
            if not label:
                problems.append(f"{_panel(ax)}: no {which} label")
            elif not re.search(r"[A-Za-z]{3,}", _outside_math(label)):
                problems.append(f"{_panel(ax)}: {which} label {label!r} names no quantity in "
                                "words (only symbols)")
    return problems


def check_mathtext(fig) -> list[str]:
    problems = []
    for t in _texts(fig):
        text = t.get_text()
        plain = _outside_math(text)
        for pattern, what in _PSEUDO_MATH:
            m = pattern.search(plain)
            if m:
                problems.append(f"{what} outside $...$ ({m.group(0)!r}) in {text!r}")
                break
    return problems


def check_time_units(fig) -> list[str]:
    problems = []
    for ax in _visible_axes(fig):
        label = _shared_label(ax, "x")
        if label and _TIME.search(label) and not _TIME_UNIT.search(_outside_math(label)):
            problems.append(f"{_panel(ax)}: time axis {label!r} does not say its unit "
                            "(steps, updates, episodes, ...)")
    return problems


def _extent(t: Text, renderer) -> Bbox | None:
    try:
        bb = t.get_window_extent(renderer)
    except (RuntimeError, ValueError):                       # pragma: no cover
        return None
    if not np.all(np.isfinite(bb.get_points())) or bb.width < 0.5 or bb.height < 0.5:
        return None
    return bb


def check_text_overlap(fig) -> list[str]:
    renderer = fig.canvas.get_renderer()
    items = [(t, _extent(t, renderer)) for t in _texts(fig)]
    items = [(t, bb) for t, bb in items if bb is not None]
    problems = []
    canvas = fig.bbox
    for t, bb in items:
        if (bb.x0 < canvas.x0 - 2 or bb.y0 < canvas.y0 - 2 or bb.x1 > canvas.x1 + 2
                or bb.y1 > canvas.y1 + 2):
            problems.append(f"text {t.get_text()!r} is cut off at the figure's edge")
    if len(items) < 2:
        return problems
    box = np.array([bb.extents for _, bb in items])               # x0, y0, x1, y1
    w = np.minimum(box[:, None, 2], box[None, :, 2]) - np.maximum(box[:, None, 0],
                                                                   box[None, :, 0])
    h = np.minimum(box[:, None, 3], box[None, :, 3]) - np.maximum(box[:, None, 1],
                                                                   box[None, :, 1])
    hit = (w > 1.0) & (h > 1.0)
    for i, j in zip(*np.nonzero(np.triu(hit, 1)), strict=True):
        problems.append(f"texts overlap: {items[i][0].get_text()!r} and "
                        f"{items[j][0].get_text()!r}")
    return problems


def check_legends(fig) -> list[str]:
    problems = []
    shown = _legend_labels(fig)
    for ax in _visible_axes(fig):
        _, labels = ax.get_legend_handles_labels()
        labels = [lb for lb in labels if lb.strip()]
        if len(labels) >= 2:
            missing = [lb for lb in labels if lb not in shown]
            if missing:
                problems.append(f"{_panel(ax)}: {len(labels)} labelled artists, no legend "
                                f"entry for {missing}")
    return problems


def _runs(xy: np.ndarray) -> list[np.ndarray]:
    """Finite runs of consecutive display points (NaN / inf break a line)."""
    ok = np.all(np.isfinite(xy), axis=1)
    runs, start = [], None
    for k, good in enumerate(np.append(ok, False)):
        if good and start is None:
            start = k
        elif not good and start is not None:
            runs.append(xy[start:k])
            start = None
    return runs


def _covers(box: Bbox, artist) -> bool:
    """Whether ``artist`` (a line, band or markers) is drawn inside ``box`` (display)."""
    if not artist.get_visible():
        return False
    if isinstance(artist, Line2D):
        xy = artist.get_xydata()
        if xy is None or len(xy) == 0:
            return False
        pts = artist.get_transform().transform(np.asarray(xy, float))
        for run in _runs(pts):
            if len(run) == 1 or artist.get_linestyle() in ("None", "none", "", " "):
                if np.any(box.contains(run[:, 0], run[:, 1])):
                    return True
            elif Path(run).intersects_bbox(box, filled=False):
                return True
        return False
    if isinstance(artist, PathCollection):
        off = artist.get_offset_transform().transform(np.asarray(artist.get_offsets(), float))
        off = off[np.all(np.isfinite(off), axis=1)]
        return bool(len(off)) and bool(np.any(box.contains(off[:, 0], off[:, 1])))
    if isinstance(artist, PolyCollection | LineCollection):
        filled = isinstance(artist, PolyCollection)
        tr = artist.get_transform()
        for path in artist.get_paths():
            verts = tr.transform(np.asarray(path.vertices, float))
            for run in _runs(verts):
                if len(run) >= 2 and Path(run).intersects_bbox(box, filled=filled):
                    return True
        return False
    return False


def _blockers(fig) -> list[tuple[str, Any, Bbox]]:
    """Legends and boxed annotations: ``(what, axes or None, display box)``."""
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in _visible_axes(fig):
        lg = ax.get_legend()
        if lg is not None and lg.get_visible():
            out.append(("legend", ax, lg.get_window_extent(renderer)))
        for t in ax.texts:
            if t.get_visible() and t.get_text().strip() and t.get_bbox_patch() is not None:
                out.append((f"boxed text {t.get_text()[:40]!r}", ax,
                            t.get_bbox_patch().get_window_extent(renderer)))
    for lg in fig.legends:
        if lg.get_visible():
            out.append(("figure legend", None, lg.get_window_extent(renderer)))
    return out


def check_legend_over_data(fig) -> list[str]:
    problems = []
    for what, owner, box in _blockers(fig):
        for ax in _visible_axes(fig) if owner is None else [owner]:
            inner = Bbox.intersection(box, ax.bbox)
            if inner is None or inner.width <= 2 or inner.height <= 2:
                continue
            inner = Bbox.from_extents(inner.x0 + 1, inner.y0 + 1, inner.x1 - 1, inner.y1 - 1)
            hit = [a for a in (*ax.lines, *ax.collections) if _covers(inner, a)]
            if hit:
                names = sorted({a.get_label() if not a.get_label().startswith("_")
                                else type(a).__name__ for a in hit})
                problems.append(f"{what} covers data of {_panel(ax)}: {names[:4]}")
    return problems


def _is_span(ax, patch) -> bool:
    if not isinstance(patch, Rectangle | Patch) or not patch.get_visible():
        return False
    bb = patch.get_window_extent().transformed(ax.transAxes.inverted())
    return (bb.x0 <= 0.01 and bb.x1 >= 0.99) or (bb.y0 <= 0.01 and bb.y1 >= 0.99)


def _same_colour(a, b) -> bool:
    return np.allclose(matplotlib.colors.to_rgb(a), matplotlib.colors.to_rgb(b), atol=0.02)


def check_bands(fig) -> list[str]:
    texts = [t.get_text() for t in _texts(fig)]
    said = any(_BAND_WORD.search(t) and _BAND_WHAT.search(t) for t in texts)
    shown = _legend_labels(fig)
    legend_patches = [h for lg in _legends(fig) for h in lg.legend_handles
                      if isinstance(h, Patch | PolyCollection)]
    problems = []
    for ax in _visible_axes(fig):
        bands = [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_visible()]
        bands += [p for p in ax.patches if _is_span(ax, p)]
        for band in bands:
            label = band.get_label()
            face = band.get_facecolor()
            face = face[0] if np.ndim(face) == 2 and len(face) else face
            if (not label.startswith("_") and label in shown) or said:
                continue
            if len(np.ravel(face)) and any(
                    _same_colour(face, np.ravel(h.get_facecolor())[:4]) for h in legend_patches):
                continue
            problems.append(f"{_panel(ax)}: a shaded band ({type(band).__name__}) that no "
                            "legend entry, title or caption text explains")
            break
    return problems


CHECKS: dict[str, Callable[[Any], list[str]]] = {
    "axis_labels": check_axis_labels,
    "mathtext": check_mathtext,
    "time_units": check_time_units,
    "text_overlap": check_text_overlap,
    "legends": check_legends,
    "legend_over_data": check_legend_over_data,
    "bands": check_bands,
}

# ---------------------------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------------------------


def test_every_figures_module_imports():
    assert not DISCOVERY_ERRORS, DISCOVERY_ERRORS
    assert FIGURE_IDS


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("fid", FIGURE_IDS)
def test_figure_labels(drawn, fid, check):
    problems = CHECKS[check](drawn(fid))
    assert not problems, f"{fid}: {check}:\n  " + "\n  ".join(problems)


def _bad_figure():
    """A figure with one planted fault per check."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(6, 3))
    t = np.arange(1, 50)
    ax.plot(t, 1 / t, label="alpha=0.1")
    ax.plot(t, 2 / t, label="E sum_i pi^i ||theta_t^i||^2")
    ax.fill_between(t, 0.5 / t, 3 / t, alpha=0.2)                  # band nobody explains
    ax.legend(loc="upper right", borderaxespad=0)                   # over the curves' start
    ax.set_xlabel("t")                                               # time without its unit
    ax.set_xticks(np.linspace(1, 49, 40))                           # crowded tick labels
    ax2.plot(t, t, label="one")
    ax2.plot(t, 2 * t, label="two")                                  # two labels, no legend
    ax2.set_xlabel("$t$ (steps)")                                    # no y label
    fig.canvas.draw()
    return fig


def _good_figure():
    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    t = np.arange(1, 50)
    for k in (1, 2):
        (line,) = ax.plot(t, k / t, label=fr"step size $\alpha = {k / 10:g}$")
        ax.fill_between(t, 0.8 * k / t, 1.2 * k / t, color=line.get_color(), alpha=0.2,
                        linewidth=0)
    ax.set_xlabel("$t$ (steps)")
    ax.set_ylabel(r"error $\sum_i \pi^i \|\theta_t^i - \theta^*\|^2$")
    ax.set_yscale("log")
    ax.set_title("mean over seeds; shaded band: 10–90% of seeds")
    fig.legend(loc="outside right upper")
    fig.canvas.draw()
    return fig


def test_the_checks_catch_planted_faults_and_pass_a_clean_figure():
    bad, good = _bad_figure(), _good_figure()
    try:
        caught = {name: check(bad) for name, check in CHECKS.items()}
        assert all(caught.values()), {k: v for k, v in caught.items() if not v}
        assert any("no y label" in p for p in caught["axis_labels"])
        assert any("Greek" in p for p in caught["mathtext"])
        assert any("subscript" in p for p in caught["mathtext"])
        assert any("texts overlap" in p for p in caught["text_overlap"])
        clean = {name: check(good) for name, check in CHECKS.items()}
        assert not any(clean.values()), clean
    finally:
        plt.close(bad)
        plt.close(good)
