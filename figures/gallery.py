"""The figure gallery of the docs: ``docs/gallery.md`` and its images ``docs/img/gallery/<id>.png``.

``python -m figures --gallery`` draws the selected figures (``--only``; default every figure, at
the quick size), copies each PNG to ``docs/img/gallery/<id>.png`` and rewrites
``docs/gallery.md`` from the registry: one entry per registered figure (id, title, paper, image),
grouped by family. The page is generated, never edited by hand; the docs build only reads the
committed images, and a test checks that every registered figure has its entry and image.

Example:
    >>> from figures.registry import Figure
    >>> entry = Figure("demo.curve", "a curve", "no paper", run=None)
    >>> print(gallery_markdown([entry]).split("## demo")[1].strip().splitlines()[0])
    ### `demo.curve`
"""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

from figures.registry import Figure

__all__ = ["DOCS", "IMAGES", "PAGE", "COMMAND", "gallery_markdown", "image_path",
           "copy_images", "write_page", "page_entries"]

DOCS = Path(__file__).resolve().parents[1] / "docs"
"""The repository's ``docs/`` folder."""

IMAGES = Path("img") / "gallery"
"""Where the images live, relative to ``docs/``."""

PAGE = "gallery.md"
"""The gallery page, relative to ``docs/``."""

COMMAND = "python -m figures --gallery"
"""The command that regenerates the gallery."""

_ENTRY = re.compile(r"^### `([^`]+)`\s*$", re.M)


def image_path(figure_id: str, docs: str | Path = DOCS) -> Path:
    """``docs/img/gallery/<id>.png``."""
    return Path(docs) / IMAGES / f"{figure_id}.png"


def gallery_markdown(figures: Mapping[str, Figure] | Iterable[Figure]) -> str:
    """The gallery page for ``figures``: sorted by id, one section per family (the id's part
    before the first dot), one entry per figure with its title, paper and image."""
    pool = list(figures.values()) if isinstance(figures, Mapping) else list(figures)
    pool.sort(key=lambda f: f.id)
    lines = [
        "# Figure gallery",
        "",
        _wrap("Every figure `python -m figures` draws, grouped by family, at the quick size "
              "(the paper-scale versions: `python -m figures --full`). Each image is redrawn, "
              "with this page, by one command from the repository root:"),
        "",
        "```bash",
        f"{COMMAND}                   # every figure (minutes per family)",
        f"{COMMAND} --only bandits    # one family (any id substring; repeatable)",
        "```",
        "",
        _wrap("It draws the selected figures at the quick size (`--size` / `--full` to change "
              "it), writes their data and PNGs to `figures/out/` as `python -m figures` does, "
              f"copies each PNG to `docs/{IMAGES.as_posix()}/<id>.png` and rewrites this page "
              "from the figure registry (`figures/gallery.py`): do not edit it by hand. The "
              "docs build only reads the committed images; a test checks that every registered "
              "figure has an entry here and an image."),
        "",
    ]
    family = None
    for f in pool:
        fam = f.id.split(".", 1)[0]
        if fam != family:
            family = fam
            lines += [f"## {fam}", ""]
        lines += [f"### `{f.id}`", "", _wrap(f"{_escape(f.title)}."), "",
                  _wrap(f"*Source:* {_escape(f.paper)}."), "",
                  f"![{f.id}]({(IMAGES / f'{f.id}.png').as_posix()})", ""]
    return "\n".join(lines)


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=100, break_long_words=False, break_on_hyphens=False)


def _escape(text: str) -> str:
    """Markdown-safe plain text: ``*``, ``_`` and backticks would start emphasis or code."""
    text = text.rstrip(".")
    return re.sub(r"([*_`\[\]<>])", r"\\\1", text)


def page_entries(text: str) -> list[str]:
    """The figure ids with an entry (``### `id` ``) on a gallery page."""
    return _ENTRY.findall(text)


def copy_images(pngs: Mapping[str, str | Path], docs: str | Path = DOCS) -> list[Path]:
    """Copy each figure's PNG (id -> path) to ``docs/img/gallery/<id>.png``; returns the
    written paths."""
    written = []
    for fid, src in pngs.items():
        dst = image_path(fid, docs)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        written.append(dst)
    return written


def write_page(figures: Mapping[str, Figure] | Iterable[Figure], docs: str | Path = DOCS
               ) -> Path:
    """Rewrite ``docs/gallery.md`` for ``figures`` (every registered figure); returns its
    path."""
    path = Path(docs) / PAGE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(gallery_markdown(figures), encoding="utf-8")
    return path
