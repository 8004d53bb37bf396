"""Reporting benchmark rows: the console table, ``results.md`` and ``results.json``.

The console table (:func:`format_table`) fits :data:`TABLE_WIDTH` columns: per row the
benchmark, its variant, the reference in a few words, ``ratio = reference / decentral``, the
target, whether it is met, and whether the two sides agree. ``results.md``
(:func:`format_markdown`) adds both measurements, sizes, compile times, max |d|, notes and each
reference in full;
``results.json`` (:func:`write_results`) holds every field of every row with the provenance and
the configuration of the run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness import BenchResult
from decentral.results import atomic_write_bytes, to_jsonable

__all__ = [
    "DEFAULT_OUT",
    "TABLE_WIDTH",
    "format_value",
    "format_table",
    "format_markdown",
    "write_results",
]

DEFAULT_OUT = Path("benchmarks") / "out"
"""Where ``python -m benchmarks`` writes ``results.json`` and ``results.md`` by default
(relative to the working directory, so an installed package never writes into itself)."""

TABLE_WIDTH = 120
"""The console table's width limit (details: the markdown and JSON outputs)."""


def format_value(x: float | None, metric: str) -> str:
    """A measurement for a table cell: bytes in B / KiB / MiB / GiB, seconds in s / ms / us,
    ``"-"`` for a missing or non-finite value.

    Example:
        >>> format_value(0.0123, "time_s"), format_value(5120, "bytes"), format_value(None, "")
        ('12.3 ms', '5.0 KiB', '-')
    """
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if metric == "bytes":
        x = float(x)
        for unit in ("B", "KiB", "MiB", "GiB"):
            if x < 1024 or unit == "GiB":
                return f"{x:.0f} {unit}" if unit == "B" else f"{x:.1f} {unit}"
            x /= 1024
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.1f} ms"
    return f"{x * 1e6:.0f} us"


def _size_cell(size: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in size.items())


def _ratio_cell(row: BenchResult) -> str:
    return "-" if row.ratio is None else f"{row.ratio:.3g}"


def _target_cell(row: BenchResult) -> str:
    return "-" if row.target_ratio is None else f">= {row.target_ratio:.3g}"


def _met_cell(row: BenchResult) -> str:
    return {None: "-", True: "met", False: "NOT met"}[row.met]


def _agree_cell(row: BenchResult) -> str:
    return "-" if row.agree is None else ("ok" if row.agree else "DIFFER")


def _agree_diff(row: BenchResult) -> str:
    if row.agree is None:
        return "-"
    diff = "-" if row.max_abs_diff is None else f"{row.max_abs_diff:.1e}"
    return f"{_agree_cell(row)} {diff}"


def _against_cell(row: BenchResult) -> str:
    return row.reference_label or "-"


# --------------------------------------------------------------------------------------------
# console table
# --------------------------------------------------------------------------------------------

_TABLE_COLUMNS = ("benchmark", "variant", "against", "ratio", "target", "met", "agree")

# columns that give way, in this order, down to these widths, when a table is too wide
_SHRINK = ((1, 16), (2, 14), (0, 16))


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"


def _clip_middle(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` characters (variants of one benchmark often
    differ only at their end)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "~" + text[len(text) - (width - 1 - head):]


def format_table(rows: Sequence[BenchResult]) -> str:
    """Plain-text table within :data:`TABLE_WIDTH` columns, one line per row: the benchmark,
    its variant, the reference in a few words (``against``), ``ratio = reference / decentral``,
    the row's target and whether it is met, and whether the two sides agree. When the table is
    too wide, the variant is cut in the middle, then the reference label at its end (``~``
    marks a cut). The measurements themselves, sizes, compile times, max |d| and notes are in
    the markdown and JSON outputs."""
    body = [[r.name, r.variant, _against_cell(r), _ratio_cell(r), _target_cell(r),
             _met_cell(r), _agree_cell(r)] for r in rows]
    cells = [list(_TABLE_COLUMNS)] + body
    widths = [max(len(c[i]) for c in cells) for i in range(len(_TABLE_COLUMNS))]
    gaps = 2 * (len(widths) - 1)
    for col, least in _SHRINK:
        over = sum(widths) + gaps - TABLE_WIDTH
        if over <= 0:
            break
        widths[col] = max(min(least, widths[col]), widths[col] - over)
    lines = []
    for k, c in enumerate(cells):
        cut = [(_clip_middle if i == 1 else _clip)(text, width)
               for i, (text, width) in enumerate(zip(c, widths, strict=True))]
        line = "  ".join(text.ljust(width) for text, width in zip(cut, widths, strict=True))
        lines.append(_clip(line.rstrip(), TABLE_WIDTH))
        if k == 0:
            lines.append("-" * min(TABLE_WIDTH, sum(widths) + gaps))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# results.md
# --------------------------------------------------------------------------------------------

_MD_COLUMNS = ("name", "variant", "against", "dtype", "size", "compile", "decentral",
               "reference", "ratio ref/dec", "target", "met", "agree max|d|", "notes")


def _md_cells(row: BenchResult) -> list[str]:
    return [
        row.name,
        row.variant,
        _against_cell(row),
        row.dtype,
        _size_cell(row.size),
        "-" if row.compile_s is None else format_value(row.compile_s, "time_s"),
        format_value(row.value, row.metric),
        format_value(row.reference_value, row.metric),
        _ratio_cell(row),
        _target_cell(row),
        _met_cell(row),
        _agree_diff(row),
        row.notes,
    ]


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def format_markdown(rows: Sequence[BenchResult], provenance: dict[str, Any],
                    command: str = "", device: str = "") -> str:
    """Markdown report: provenance summary, the table (with the reference in a few words,
    ``against``), and what each reference is in full."""
    jax_info = provenance.get("jax", {})
    versions = provenance.get("versions", {})
    out = ["# decentral benchmarks", ""]
    if command:
        out += [f"Command: `{command}`", ""]
    if device:
        out += [f"- device: {device}"]
    out += [
        f"- date: {provenance.get('date')}",
        f"- git commit: {provenance.get('git_commit')}",
        f"- platform: {provenance.get('platform')}",
        f"- jax {versions.get('jax')} / jaxlib {versions.get('jaxlib')} / numpy "
        f"{versions.get('numpy')}; backend {jax_info.get('backend')}, devices "
        f"{jax_info.get('devices')}",
        f"- default PRNG: {jax_info.get('default_prng_impl')}; x64 at start: "
        f"{jax_info.get('enable_x64')}",
        "",
        "`ratio = reference / decentral` (> 1: decentral faster or smaller); times are medians "
        "of repeated calls after a warm-up call, `compile` is first call minus median; "
        "`against` names the reference, described in full under References.",
        "",
        _md_row(_MD_COLUMNS),
        "|" + "---|" * len(_MD_COLUMNS),
    ]
    out += [_md_row(_md_cells(r)) for r in rows]
    out += ["", "## References", ""]
    seen = set()
    for r in rows:
        key = (r.name, r.variant)
        if key in seen:
            continue
        seen.add(key)
        out.append(f"- **{r.name}** ({r.variant}): {r.reference}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# results.json (and results.md next to it)
# --------------------------------------------------------------------------------------------


def write_results(rows: Sequence[BenchResult], out_dir: str | Path, provenance: dict[str, Any],
                  *, config: dict[str, Any] | None = None, command: str = "") -> list[Path]:
    """Write ``results.json`` (rows + provenance + config) and ``results.md`` atomically.

    Returns:
        The two paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": "decentral.benchmarks/1",
        "command": command,
        "config": to_jsonable(config or {}),
        "provenance": provenance,
        "results": [r.to_dict() for r in rows],
    }
    text = json.dumps(doc, indent=2)
    json_path, md_path = out / "results.json", out / "results.md"
    atomic_write_bytes(json_path, lambda f: f.write(text.encode()))
    md = format_markdown(rows, provenance, command, device=str((config or {}).get("device", "")))
    atomic_write_bytes(md_path, lambda f: f.write(md.encode()))
    return [json_path, md_path]
