"""Verdict table and report files (``report.md``, ``report.json``) for a verification run.

The Markdown report opens with a legend (:data:`LEGEND`: what the verdicts and kinds mean and how
to read "measured" and "threshold"), then the run's context (options, package versions, JAX
settings, git commit), the summary table, and one section per claim with every measured number,
its description and unit, uncut. ``report.json`` holds the same content for programs.

Both files are written atomically (temporary file in the same folder, then :func:`os.replace`),
so an interrupted run never leaves a half-written report. Figures are linked relative to the
report, so the output folder can be moved or published as a whole. JSON conversion is
:func:`decentral.results.to_jsonable` (non-finite floats become ``"NaN"`` / ``"Infinity"``).

Example:
    >>> from decentral.verify.claims import CheckContext, Claim, Kind, Outcome, Verdict, run_claim
    >>> c = Claim("demo.residual", "demo", "none", Kind.EXACT,
    ...           lambda ctx: Outcome(Verdict.PASS, {"residual": 0.0}, "residual <= 1e-12"))
    >>> "PASS" in format_table([run_claim(c, CheckContext())])
    True
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

from decentral.results import atomic_write_bytes, to_jsonable
from decentral.verify.claims import ClaimResult, Kind, Verdict

__all__ = [
    "LEGEND",
    "VERDICT_MEANINGS",
    "KIND_MEANINGS",
    "format_value",
    "format_measured",
    "format_table",
    "format_summary",
    "summarize",
    "write_report",
    "atomic_write_text",
]

#: What each verdict means (the legend of the report).
VERDICT_MEANINGS: dict[str, str] = {
    Verdict.PASS.value: "the measured numbers satisfy the claim's threshold, which is fixed in the "
                        "claim's code before anything runs.",
    Verdict.FAIL.value: "the measured numbers contradict the claim at that threshold. This is a "
                        "finding (about the paper's claim or the library), not a crash.",
    Verdict.INCONCLUSIVE.value: "the run had too little power to decide (too few seeds, too "
                                "short a horizon); the claim's details say which size would "
                                "decide, usually `--full`.",
    Verdict.ERROR.value: "the check itself raised an exception; its traceback is in the claim's "
                         "section, and the command exits with status 1.",
    "vacuous": "written after the verdict, e.g. `PASS (vacuous)`: the bound is vacuous at the "
               "sizes run (a contraction factor indistinguishable from 1, a constant larger "
               "than anything reachable), so whatever the verdict it counts as no evidence.",
}

#: What each kind of check means (the legend of the report).
KIND_MEANINGS: dict[str, str] = {
    Kind.EXACT.value: "an identity that holds on every sample path, computed in float64 and "
                      "compared with a tolerance near round-off (e.g. 1e-12).",
    Kind.STATISTICAL.value: "an expectation compared with a bound or a baseline by Monte Carlo "
                            "over seeds, with a confidence interval: PASS or FAIL only when "
                            "the whole interval is on one side.",
    Kind.RATE.value: "a rate or shape (geometric contraction, a log-log slope) fitted to the "
                     "measured curve, with a bootstrap interval over seeds, compared with the "
                     "claimed rate.",
}

_READING = (
    ("measured", "the numbers the check computed. The summary table shows each claim's "
                 "headline numbers; the claim's section lists all of them with what each one is "
                 "and its unit."),
    ("threshold", "the verdict rule in words and numbers, fixed before running; the verdict "
                  "follows mechanically from the measured numbers and this rule."),
    ("size", "what was run: agents N, horizon T (number of steps), seeds, graphs."),
    ("seconds", "wall-clock time of the check."),
)


def _legend_markdown() -> str:
    lines = ["## How to read this report", "", "**Verdicts**", ""]
    lines += [f"- **{k}**: {v}" for k, v in VERDICT_MEANINGS.items()]
    lines += ["", "**Kinds of check**", ""]
    lines += [f"- **{k}**: {v}" for k, v in KIND_MEANINGS.items()]
    lines += ["", "**Columns**", ""]
    lines += [f"- **{k}**: {v}" for k, v in _READING]
    return "\n".join(lines)


#: The legend at the top of ``report.md`` (Markdown).
LEGEND: str = _legend_markdown()

_ID_W, _KIND_W, _VERDICT_W, _THRESH_W, _ERROR_W = 36, 11, 23, 48, 100


# --------------------------------------------------------------------------------------------
# Text formatting
# --------------------------------------------------------------------------------------------


def _clip(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: max(0, width - 3)] + "..."


def format_value(value: Any, *, items: int | None = None) -> str:
    """Short text for one measured value: floats with 3 significant digits.

    Args:
        value: the value (converted by :func:`decentral.results.to_jsonable` first).
        items: show at most this many entries of a list or dict, then ``...`` and the count;
            None shows them all.

    Example:
        >>> format_value([0.123456, 2, 3, 4], items=2)
        '[0.123, 2, ...] (4)'
    """
    v = to_jsonable(value)
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, int):
        return str(v) if abs(v) < 10**7 else f"{v:.3g}"
    if isinstance(v, list):
        if items is None or len(v) <= items:
            return "[" + ", ".join(format_value(x, items=items) for x in v) + "]"
        return ("[" + ", ".join(format_value(x, items=items) for x in v[:items])
                + f", ...] ({len(v)})")
    if isinstance(v, dict):
        pairs = list(v.items())
        shown = pairs if items is None else pairs[:items]
        text = ", ".join(f"{k}: {format_value(x, items=items)}" for k, x in shown)
        return "{" + text + (", ...}" if len(shown) < len(pairs) else "}")
    return str(v)


def format_measured(
    measured: Mapping[str, Any], keys: Sequence[str] = (), *, limit: int = 3
) -> str:
    """``k=v`` pairs for the table: the ``keys`` given, shown in full; else the first ``limit``
    entries, with long lists abbreviated."""
    if keys:
        return ", ".join(f"{k}={format_value(measured[k])}" for k in keys if k in measured)
    names = list(measured)[:limit]
    return ", ".join(f"{k}={format_value(measured[k], items=3)}" for k in names)


def _verdict_text(result: ClaimResult) -> str:
    text = result.verdict.value
    return text + " (vacuous)" if result.vacuous else text


def _measured_cell(result: ClaimResult) -> str:
    o = result.outcome
    if result.verdict is Verdict.ERROR:
        return _clip(o.details, _ERROR_W)
    return format_measured(o.measured, o.headline)


def format_table(results: Sequence[ClaimResult]) -> str:
    """Plain-text verdict table: id, kind, verdict, seconds, threshold, headline numbers.

    Every claim row carries the word PASS, FAIL, INCONCLUSIVE or ERROR (with ``(vacuous)`` when
    the bound was vacuous at the sizes run). The headline numbers come last and are never cut
    (the threshold is abbreviated with ``...``; ``report.md`` has it in full); for an ERROR the
    last column is the exception message.
    """
    id_w = max([_ID_W] + [len(r.id) for r in results])
    header = (f"{'id':<{id_w}} {'kind':<{_KIND_W}} {'verdict':<{_VERDICT_W}} {'seconds':>8} "
              f"{'threshold':<{_THRESH_W}} measured")
    lines = [header, "-" * (len(header) + 40)]
    for r in results:
        lines.append(
            f"{r.id:<{id_w}} {r.claim.kind.value:<{_KIND_W}} {_verdict_text(r):<{_VERDICT_W}} "
            f"{r.seconds:>8.2f} {_clip(r.outcome.threshold, _THRESH_W):<{_THRESH_W}} "
            f"{_measured_cell(r)}"
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
# Markdown
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


_INLINE = 80  # JSON texts longer than this get their own block below the measured table


def _json_text(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


def _md_inline(v: Any) -> str:
    """A converted value as table-cell text (floats with 6 significant digits)."""
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, str):
        return v
    return _json_text(v)


def _md_block(name: str, v: Any) -> list[str]:
    """Full rendering of a long list or dict: a table for a dict of flat records with the
    same fields, else pretty-printed JSON."""
    lines = [f"`{name}`:", ""]
    records = list(v.values()) if isinstance(v, dict) else []
    if records and all(isinstance(r, dict) and r for r in records):
        fields = list(records[0])
        flat = all(list(r) == fields and not any(isinstance(x, dict | list) for x in r.values())
                   for r in records)
        if flat:
            lines.append("| key | " + " | ".join(_md_cell(f) for f in fields) + " |")
            lines.append("|---|" + "---|" * len(fields))
            for key, r in v.items():
                cells = " | ".join(_md_cell(_md_inline(r[f])) for f in fields)
                lines.append(f"| {_md_cell(key)} | {cells} |")
            return lines + [""]
    lines += ["```json", json.dumps(v, indent=2, allow_nan=False), "```", ""]
    return lines


def _measured_markdown(measured: Mapping[str, Any], descriptions: Mapping[str, str]) -> list[str]:
    lines = ["| measured | value | what it is |", "|---|---|---|"]
    blocks: list[str] = []
    for k, value in measured.items():
        v = to_jsonable(value, where=f"measured.{k}")
        text = _md_inline(v)
        if isinstance(v, list | dict) and len(text) > _INLINE:
            blocks += _md_block(k, v)
            text = f"{type(v).__name__} of {len(v)}, in full below"
        lines.append(f"| {_md_cell(k)} | {_md_cell(text)} | {_md_cell(descriptions.get(k, ''))} |")
    return lines + [""] + blocks


def _context_text(v: Any) -> str:
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_context_text(x)}" for k, x in v.items())
    if isinstance(v, list):
        return ", ".join(_context_text(x) for x in v) if v else "[]"
    return "null" if v is None else str(v)


def _markdown(results: Sequence[ClaimResult], out_dir: pathlib.Path, context: Mapping[str, Any],
              figure_links: list[list[tuple[str, bool]]]) -> str:
    lines = ["# Verification report", "", LEGEND, ""]
    ctx = to_jsonable(dict(context), where="context")
    if ctx:
        lines += ["## Run", "", "| context | value |", "|---|---|"]
        for k, v in ctx.items():
            lines.append(f"| {_md_cell(k)} | {_md_cell(_context_text(v))} |")
        lines.append("")
    lines += ["## Summary", "", f"**{format_summary(results)}**", ""]
    lines += ["| id | kind | verdict | measured (headline) | threshold | seconds |",
              "|---|---|---|---|---|---:|"]
    for r in results:
        lines.append(f"| [{r.id}](#{_anchor(r.id)}) | {r.claim.kind.value} "
                     f"| **{_verdict_text(r)}** "
                     f"| {_md_cell(_measured_cell(r))} | {_md_cell(r.outcome.threshold)} "
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
            lines += _measured_markdown(o.measured, o.descriptions)
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
    *,
    stem: str = "report",
) -> tuple[pathlib.Path, pathlib.Path]:
    """Write ``out_dir/<stem>.md`` and ``out_dir/<stem>.json`` atomically.

    Args:
        results: the claim results, in the order to report them.
        out_dir: output folder (created if needed).
        context: the run's context (options and a :func:`decentral.results.provenance` record).
        stem: file name without suffix (``"report"``; a partial run may use ``"report-only"``
            so it does not overwrite the full report).

    Returns:
        ``(md_path, json_path)``.

    The JSON has ``{"legend", "context", "summary", "claims": [...]}``, one entry per claim with
    its id, statement, source, kind, verdict, vacuous flag, size, threshold, measured numbers
    and their descriptions, details, hypotheses failed, figures (relative to ``out_dir``),
    seconds, error and warnings.
    """
    if not stem or any(c in stem for c in "/\\") or stem.startswith("."):
        raise ValueError(f"stem {stem!r} must be a plain file name without suffix.")
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figure_links = [[_relative_link(f, out) for f in r.outcome.figures] for r in results]
    claims = []
    for r, links in zip(results, figure_links, strict=True):
        d = r.to_dict()
        d["figures"] = [link for link, _ in links]
        claims.append(d)
    payload = {
        "legend": {"verdicts": VERDICT_MEANINGS, "kinds": KIND_MEANINGS,
                   "columns": dict(_READING)},
        "context": dict(context),
        "summary": summarize(results),
        "claims": claims,
    }
    json_text = json.dumps(to_jsonable(payload, where="report"), indent=2,
                           allow_nan=False) + "\n"
    md_text = _markdown(results, out, context, figure_links)
    md_path = atomic_write_text(out / f"{stem}.md", md_text)
    json_path = atomic_write_text(out / f"{stem}.json", json_text)
    return md_path, json_path
