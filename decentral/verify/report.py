"""Verdict table and report files (``report.md``, ``report.json``) for a verification run.

Both files are written atomically (temporary file in the same folder, then :func:`os.replace`),
so an interrupted run never leaves a half-written report. Figures are linked relative to the
report, so the output folder can be moved or published as a whole.

Example:
    >>> from decentral.verify.claims import CheckContext, Claim, Kind, Outcome, Verdict, run_claim
    >>> c = Claim("graphs.demo", "demo", "none", Kind.EXACT,
    ...           lambda ctx: Outcome(Verdict.PASS, {"residual": 0.0}, "residual <= 1e-12"))
    >>> "PASS" in format_table([run_claim(c, CheckContext())])
    True
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import math
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from decentral.results import atomic_write_bytes
from decentral.verify.claims import ClaimResult, Verdict

__all__ = [
    "to_jsonable",
    "format_value",
    "format_measured",
    "format_table",
    "format_summary",
    "summarize",
    "write_report",
    "atomic_write_text",
]

_ID_W, _KIND_W, _VERDICT_W, _MEASURED_W, _THRESH_W = 36, 11, 23, 44, 40


# --------------------------------------------------------------------------------------------
# JSON conversion
# --------------------------------------------------------------------------------------------


def _float_json(x: float) -> float | str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def to_jsonable(obj: Any) -> Any:
    """Convert ``obj`` to plain JSON types.

    numpy scalars -> Python numbers, arrays -> (nested) lists, enums -> their value, paths ->
    strings, dataclasses / NamedTuples -> dicts, sets / tuples -> lists, dates -> ISO strings.
    Non-finite floats become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (strict JSON
    has no such numbers). Anything else becomes its ``repr``.
    """
    if obj is None or isinstance(obj, bool | str):
        return obj
    if isinstance(obj, enum.Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return _float_json(float(obj))
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return _float_json(float(obj))
    if isinstance(obj, np.complexfloating | complex):
        return {"real": _float_json(float(obj.real)), "imag": _float_json(float(obj.imag))}
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()] if obj.ndim else to_jsonable(obj.item())
    if isinstance(obj, pathlib.PurePath):
        return obj.as_posix()
    if isinstance(obj, _dt.datetime | _dt.date):
        return obj.isoformat()
    if hasattr(obj, "_asdict") and isinstance(obj, tuple):  # NamedTuple
        return {str(k): to_jsonable(v) for k, v in obj._asdict().items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if not callable(getattr(obj, f.name))}
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in obj]
    if hasattr(obj, "__array__"):  # jax arrays and friends
        try:
            return to_jsonable(np.asarray(obj))
        except Exception:  # noqa: BLE001
            pass
    return repr(obj)


# --------------------------------------------------------------------------------------------
# Text formatting
# --------------------------------------------------------------------------------------------


def _clip(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: max(0, width - 3)] + "..."


def format_value(value: Any) -> str:
    """Short text for one measured value: ``3 significant digits``, lists abbreviated."""
    v = to_jsonable(value)
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, int):
        return str(v) if abs(v) < 10**7 else f"{v:.3g}"
    if isinstance(v, list):
        if len(v) <= 3:
            return "[" + ", ".join(format_value(x) for x in v) + "]"
        return "[" + ", ".join(format_value(x) for x in v[:2]) + f", ...] ({len(v)})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {format_value(x)}" for k, x in list(v.items())[:2]) + (
            ", ...}" if len(v) > 2 else "}")
    return str(v)


def format_measured(
    measured: Mapping[str, Any], keys: Sequence[str] = (), *, limit: int = 3
) -> str:
    """``k=v`` pairs for the table: the ``keys`` given, else the first ``limit`` entries."""
    names = list(keys) if keys else list(measured)[:limit]
    return ", ".join(f"{k}={format_value(measured[k])}" for k in names if k in measured)


def _verdict_text(result: ClaimResult) -> str:
    text = result.verdict.value
    return text + " (vacuous)" if result.vacuous else text


def format_table(results: Sequence[ClaimResult]) -> str:
    """Plain-text verdict table: id, kind, verdict, key measured numbers, threshold, seconds.

    Every claim row carries the word PASS, FAIL, INCONCLUSIVE or ERROR (with ``(vacuous)`` when
    the bound was vacuous at the sizes run). Long cells are abbreviated with ``...``.
    """
    header = (f"{'id':<{_ID_W}} {'kind':<{_KIND_W}} {'verdict':<{_VERDICT_W}} "
              f"{'measured':<{_MEASURED_W}} {'threshold':<{_THRESH_W}} {'seconds':>8}")
    lines = [header, "-" * len(header)]
    for r in results:
        o = r.outcome
        measured = o.details if r.verdict is Verdict.ERROR else format_measured(o.measured,
                                                                                o.headline)
        lines.append(
            f"{_clip(r.id, _ID_W):<{_ID_W}} {r.claim.kind.value:<{_KIND_W}} "
            f"{_verdict_text(r):<{_VERDICT_W}} {_clip(measured, _MEASURED_W):<{_MEASURED_W}} "
            f"{_clip(o.threshold, _THRESH_W):<{_THRESH_W}} {r.seconds:>8.2f}"
        )
    return "\n".join(lines)


def summarize(results: Sequence[ClaimResult]) -> dict[str, int]:
    """Counts per verdict, plus ``vacuous`` (vacuous results count as no evidence) and ``total``."""
    counts = {v.value: 0 for v in Verdict}
    for r in results:
        counts[r.verdict.value] += 1
    counts["vacuous"] = sum(1 for r in results if r.vacuous)
    counts["total"] = len(results)
    return counts


def format_summary(results: Sequence[ClaimResult]) -> str:
    """One line such as ``"5 claims: 3 PASS, 1 FAIL, 0 INCONCLUSIVE, 1 ERROR; 1 vacuous"``."""
    c = summarize(results)
    seconds = sum(r.seconds for r in results)
    return (f"{c['total']} claims: {c['PASS']} PASS, {c['FAIL']} FAIL, {c['INCONCLUSIVE']} "
            f"INCONCLUSIVE, {c['ERROR']} ERROR; {c['vacuous']} vacuous (no evidence); "
            f"{seconds:.1f} s")


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


def atomic_write_text(path: str | os.PathLike[str], text: str) -> pathlib.Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (temp file in the same folder, fsync,
    ``os.replace``); on failure an existing ``path`` is left untouched."""
    data = text.encode("utf-8")
    atomic_write_bytes(path, lambda f: f.write(data))
    return pathlib.Path(path)


def _relative_link(figure: str, out_dir: pathlib.Path) -> tuple[str, bool]:
    """(link relative to out_dir, exists). Relative figure paths are taken relative to the cwd."""
    p = pathlib.Path(figure)
    absolute = p if p.is_absolute() else pathlib.Path.cwd() / p
    exists = absolute.exists()
    try:
        rel = os.path.relpath(absolute.resolve(), out_dir.resolve())
    except ValueError:  # different drives on Windows
        rel = str(absolute)
    return pathlib.Path(rel).as_posix(), exists


def _md_cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _md_value(value: Any) -> str:
    v = to_jsonable(value)
    if isinstance(v, float):
        return f"{v:.6g}"
    text = json.dumps(v, allow_nan=False)
    return text if len(text) <= 200 else text[:197] + "..."


def _markdown(results: Sequence[ClaimResult], out_dir: pathlib.Path, context: Mapping[str, Any],
              figure_links: list[list[tuple[str, bool]]]) -> str:
    lines = ["# Verification report", ""]
    ctx = to_jsonable(dict(context))
    if ctx:
        lines += ["| context | value |", "|---|---|"]
        for k, v in ctx.items():
            text = v if isinstance(v, str) else json.dumps(v)
            lines.append(f"| {_md_cell(k)} | {_md_cell(text)} |")
        lines.append("")
    lines += [f"**Summary:** {format_summary(results)}", ""]
    lines += ["| id | kind | verdict | measured | threshold | seconds |",
              "|---|---|---|---|---|---:|"]
    for r in results:
        o = r.outcome
        measured = o.details if r.verdict is Verdict.ERROR else format_measured(o.measured,
                                                                                o.headline)
        lines.append(f"| [{r.id}](#{_anchor(r.id)}) | {r.claim.kind.value} "
                     f"| **{_verdict_text(r)}** "
                     f"| {_md_cell(_clip(measured, 120))} | {_md_cell(o.threshold)} "
                     f"| {r.seconds:.2f} |")
    lines.append("")
    for r, links in zip(results, figure_links, strict=True):
        o = r.outcome
        lines += [f"## {r.id}", "",
                  f"- **Verdict:** {_verdict_text(r)}"
                  + (" — the bound is vacuous at the sizes run, so this counts as no evidence"
                     if r.vacuous else ""),
                  f"- **Statement:** {_md_cell(r.claim.statement)}",
                  f"- **Source:** {_md_cell(r.claim.source)}",
                  f"- **Kind:** {r.claim.kind.value}",
                  f"- **Size:** {_md_cell(o.size) if o.size else '(not stated)'}",
                  f"- **Threshold (fixed before running):** {_md_cell(o.threshold)}",
                  f"- **Seconds:** {r.seconds:.2f}", ""]
        if o.measured:
            lines += ["| measured | value |", "|---|---|"]
            for k, v in o.measured.items():
                lines.append(f"| {_md_cell(k)} | {_md_cell(_md_value(v))} |")
            lines.append("")
        if o.details and r.error is None:
            lines += ["**Details:**", "", o.details.strip(), ""]
        if o.hypotheses_failed:
            lines += ["**Hypotheses failed:**", ""] + [f"- {h}" for h in o.hypotheses_failed]
            lines.append("")
        if r.warnings:
            lines += ["**Warnings:**", ""] + [f"- {_md_cell(w)}" for w in r.warnings]
            lines.append("")
        if r.error:
            lines += ["**Error:**", "", "```", r.error.rstrip(), "```", ""]
        for fig, (link, exists) in zip(o.figures, links, strict=True):
            name = pathlib.Path(fig).name
            lines.append(f"![{name}]({link})" + ("" if exists else "  *(figure file missing)*"))
        if o.figures:
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _anchor(claim_id: str) -> str:
    """GitHub-style heading anchor: lower case, dots and other punctuation dropped."""
    return "".join(c for c in claim_id.lower() if c.isalnum() or c in "-_ ").replace(" ", "-")


def write_report(
    results: Sequence[ClaimResult],
    out_dir: str | os.PathLike[str],
    context: Mapping[str, Any],
) -> tuple[pathlib.Path, pathlib.Path]:
    """Write ``out_dir/report.md`` and ``out_dir/report.json`` atomically.

    Args:
        results: the claim results, in the order to report them.
        out_dir: output folder (created if needed).
        context: the run's context (mode, seeds, package versions, git commit, date, ...).

    Returns:
        ``(md_path, json_path)``.

    The JSON has ``{"context", "summary", "claims": [...]}``, one entry per claim with its id,
    statement, source, kind, verdict, vacuous flag, size, threshold, measured numbers, details,
    hypotheses failed, figures (relative to ``out_dir``), seconds, error and warnings.
    """
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figure_links = [[_relative_link(f, out) for f in r.outcome.figures] for r in results]
    claims = []
    for r, links in zip(results, figure_links, strict=True):
        d = r.to_dict()
        d["figures"] = [link for link, _ in links]
        claims.append(d)
    payload = {
        "context": dict(context),
        "summary": summarize(results),
        "claims": claims,
    }
    json_text = json.dumps(to_jsonable(payload), indent=2, allow_nan=False) + "\n"
    md_text = _markdown(results, out, context, figure_links)
    md_path = atomic_write_text(out / "report.md", md_text)
    json_path = atomic_write_text(out / "report.json", json_text)
    return md_path, json_path
