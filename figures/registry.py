"""The figure registry: ``@figure(...)`` registers a figure, :func:`discover` imports every module
(the mechanism, shared with the claim registry, is :mod:`decentral.registry`).

A family's module or package (``figures/graphs.py``, ``figures/bandits/``, ...) declares its figures
with the decorator; ``python -m figures`` discovers and draws them. A figure function takes a
:class:`FigureContext` (the size to compute at, the seed offset) and returns a
:class:`FigureOutput`: the matplotlib figure and the arrays and parameters it was drawn from.
The harness (:func:`render`) saves all three — ``<id>.png``, ``<id>.npz`` and ``<id>.json``
(with :func:`decentral.results.provenance`) — so every PNG can be redrawn from its data.

Example:
    >>> reg = {}
    >>> @figure("graphs.demo", title="a line", paper="none", registry=reg)
    ... def demo(ctx):
    ...     fig, ax = plt.subplots(); t = np.arange(ctx.pick(tiny=3, quick=10, full=100))
    ...     ax.plot(t, t)
    ...     return FigureOutput(fig, {"t": t}, {"points": int(t.size)})
    >>> [f.id for f in select(reg, "demo")]
    ['graphs.demo']
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from decentral import registry as _mechanism
from decentral.registry import split_patterns

__all__ = [
    "REGISTRY",
    "DISCOVERY_ERRORS",
    "SIZES",
    "Figure",
    "FigureContext",
    "FigureOutput",
    "figure",
    "discover",
    "select",
    "split_patterns",
    "render",
]

#: Every registered figure, by id.
REGISTRY: dict[str, Figure] = {}

#: Modules of the package that failed to import during :func:`discover`: name -> traceback.
DISCOVERY_ERRORS: dict[str, str] = {}

#: Size modes, smallest first: ``tiny`` (tests, seconds), ``quick`` (the default), ``full``.
SIZES = ("tiny", "quick", "full")

_ID = re.compile(r"^[a-z][a-z0-9_]*\.[a-z0-9_]+(\.[a-z0-9_]+)*$")


@dataclasses.dataclass(frozen=True)
class FigureContext:
    """What a figure function gets: the size to compute at and where the seeds start.

    Attributes:
        size: ``"tiny"``, ``"quick"`` (default of ``python -m figures``) or ``"full"``.
        base_seed: offset added to every seed the figure uses.
    """

    size: str = "quick"
    base_seed: int = 0

    def __post_init__(self) -> None:
        if self.size not in SIZES:
            raise ValueError(f"size must be one of {SIZES}; got {self.size!r}.")

    @property
    def full(self) -> bool:
        """True at the paper-scale size."""
        return self.size == "full"

    def pick(self, *, quick: Any, full: Any, tiny: Any = None) -> Any:
        """The value for this size (``tiny`` defaults to ``quick``).

        Example:
            >>> FigureContext("full").pick(quick=64, full=1000)
            1000
        """
        return {"tiny": quick if tiny is None else tiny, "quick": quick, "full": full}[self.size]


class FigureOutput(NamedTuple):
    """What a figure function returns.

    Attributes:
        fig: the matplotlib figure (closed by the harness after saving).
        data: name -> array, everything the figure was drawn from (saved as ``.npz``).
        parameters: the configuration that produced the data: sizes, seeds, graphs (JSON).
    """

    fig: Any
    data: Mapping[str, Any]
    parameters: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class Figure:
    """A registered figure.

    Attributes:
        id: ``"<paper or family>.<name>"``, also the base name of its files.
        title: what the figure shows, in words.
        paper: the paper (and figure / claim) it reproduces or illustrates.
        run: ``run(ctx) -> FigureOutput``.
    """

    id: str
    title: str
    paper: str
    run: Callable[[FigureContext], FigureOutput]


def figure(id: str, *, title: str, paper: str, registry: dict[str, Figure] | None = None
           ) -> Callable[[Callable[[FigureContext], FigureOutput]],
                         Callable[[FigureContext], FigureOutput]]:
    """Decorator registering ``fn(ctx) -> FigureOutput`` as the figure ``id``.

    The function is returned unchanged, with the :class:`Figure` attached as ``fn.figure``.

    Args:
        id: ``"<family>.<name>"`` (lower case, digits, underscores; dots separate parts).
        title: what the figure shows.
        paper: source paper and figure / claim.
        registry: where to register (default :data:`REGISTRY`); tests pass their own dict.

    Raises:
        ValueError: a malformed id, or an id already registered by another function.
    """
    if not isinstance(id, str) or not _ID.match(id):
        raise ValueError(f"figure id {id!r} must look like '<family>.<name>' (lower case, "
                         "digits, underscores), e.g. 'graphs.consensus_disagreement'.")
    target = REGISTRY if registry is None else registry

    def decorate(fn: Callable[[FigureContext], FigureOutput]
                 ) -> Callable[[FigureContext], FigureOutput]:
        entry = Figure(id=id, title=title, paper=paper, run=fn)
        _mechanism.register(target, entry, kind="figure")
        fn.figure = entry  # type: ignore[attr-defined]
        return fn

    return decorate


def discover() -> dict[str, Figure]:
    """Import every module of the ``figures`` package and return :data:`REGISTRY`.

    Skips ``registry``, ``__main__`` and names starting with ``_``. A module that fails to
    import does not stop discovery: its traceback goes to :data:`DISCOVERY_ERRORS` (the command
    reports it and exits 1).
    """
    return _mechanism.discover(REGISTRY, "figures", DISCOVERY_ERRORS)


def select(figures: Mapping[str, Figure] | Iterable[Figure],
           only: str | Iterable[str] | None) -> list[Figure]:
    """Figures whose id contains any of the ``only`` patterns (substring), sorted by id."""
    return _mechanism.select(figures, only)


def render(entry: Figure, ctx: FigureContext, out_dir: str | Path, *, dpi: int = 120
           ) -> dict[str, Any]:
    """Compute and draw one figure; write ``<id>.npz`` + ``<id>.json`` (data, parameters,
    provenance) and ``<id>.png`` into ``out_dir`` (atomically); close the figure.

    Returns:
        ``{"id", "seconds", "files"}``.

    Raises:
        Whatever the figure function raises; ``TypeError`` / ``ValueError`` when it returns
        something other than a :class:`FigureOutput` with a figure and at least one array.
    """
    import matplotlib.pyplot as plt

    from decentral.results import atomic_write_bytes, save_results

    start = time.perf_counter()
    out = entry.run(ctx)
    try:
        if not isinstance(out, FigureOutput):
            raise TypeError(f"figure {entry.id} returned {type(out).__name__}; it must return "
                            "FigureOutput(fig, data, parameters).")
        if not hasattr(out.fig, "savefig"):
            raise TypeError(f"figure {entry.id}: FigureOutput.fig is not a matplotlib figure.")
        if not out.data:
            raise ValueError(f"figure {entry.id} returned no data; every figure saves the "
                             "arrays it was drawn from.")
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        base = folder / entry.id
        config = {"figure": entry.id, "title": entry.title, "paper": entry.paper,
                  "size": ctx.size, "base_seed": ctx.base_seed,
                  "parameters": dict(out.parameters), "png": f"{entry.id}.png"}
        save_results(base, dict(out.data), config, seeds=out.parameters.get("seeds"))
        png = folder / f"{entry.id}.png"
        atomic_write_bytes(png, lambda f: out.fig.savefig(f, format="png", dpi=dpi))
    finally:
        if hasattr(out, "fig") and out.fig is not None:
            plt.close(out.fig)
    files = [str(folder / f"{entry.id}{ext}") for ext in (".png", ".npz", ".json")]
    return {"id": entry.id, "seconds": time.perf_counter() - start, "files": files}
