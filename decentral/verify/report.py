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
import math
import os
import pathlib
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from decentral.results import atomic_write_bytes, to_jsonable
from decentral.verify.claims import Claim, ClaimResult, Kind, Outcome, Verdict

__all__ = [
    "LEGEND",
    "VERDICT_MEANINGS",
    "KIND_MEANINGS",
    "format_value",
    "format_estimate",
    "format_measured",
    "verdict_label",
    "headline",
    "TABLE_WIDTH",
    "format_table",
    "format_summary",
    "summarize",
    "write_report",
    "read_report",
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
                 "headline number; the claim's section lists the main ones with what each one "
                 "is and its unit, and report.json all of them, unrounded."),
    ("threshold", "the verdict rule in words and numbers, fixed before running; the verdict "
                  "follows mechanically from the measured numbers and this rule."),
    ("size", "what was run: agents N, horizon T (number of steps), seeds, graphs."),
    ("seconds", "wall-clock time of the check."),
)


def _legend_markdown() -> str:
    lines = ["## How to read this report", ""]
    lines.append("**Verdicts**: " + " ".join(f"**{k}**: {v}" for k, v in VERDICT_MEANINGS.items()))
    lines.append("")
    lines.append("**Kinds of check**: " + " ".join(f"**{k}**: {v}" for k, v in
                                                   KIND_MEANINGS.items()))
    lines.append("")
    lines.append("**Columns**: " + " ".join(f"**{k}**: {v}" for k, v in _READING))
    return "\n".join(lines)


#: The legend at the top of ``report.md`` (Markdown).
LEGEND: str = _legend_markdown()

#: Width of the console table; rows wrap their headline numbers onto indented lines.
TABLE_WIDTH = 120
_ID_W, _VERDICT_W = 36, 21


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


def format_estimate(value: float, lo: float, hi: float) -> str:
    """``value [lo, hi]`` rounded to what the interval justifies: the decimals that give its
    half-width two significant digits, the same for all three (significant digits instead for
    values far from 1).

    Example:
        >>> format_estimate(0.6570606, 0.0611741, 1.2529471)
        '0.66 [0.06, 1.25]'
    """
    vals = [float(value), float(lo), float(hi)]
    if not all(math.isfinite(v) for v in vals):
        return f"{format_value(value)} [{format_value(lo)}, {format_value(hi)}]"
    half = (vals[2] - vals[1]) / 2
    scale = max(abs(v) for v in vals)
    if half <= 0 or scale == 0:
        return f"{vals[0]:.4g} [{vals[1]:.4g}, {vals[2]:.4g}]"
    decimals = max(0, 1 - math.floor(math.log10(half)))
    decimals = max(decimals, 1 - math.floor(math.log10(scale)))
    if decimals > 12 or scale >= 1e6 or scale < 1e-3:       # far from 1: significant digits
        digits = max(2, math.floor(math.log10(scale)) - math.floor(math.log10(half)) + 2)
        return "{0:.{3}g} [{1:.{3}g}, {2:.{3}g}]".format(*vals, digits)
    return "{0:.{3}f} [{1:.{3}f}, {2:.{3}f}]".format(*vals, decimals)


def format_measured(
    measured: Mapping[str, Any], keys: Sequence[str] = (), *, limit: int = 3
) -> str:
    """``k=v`` pairs for the table: the ``keys`` given, shown in full; else the first ``limit``
    entries, with long lists abbreviated."""
    if keys:
        return ", ".join(f"{k}={format_value(measured[k])}" for k in keys if k in measured)
    names = list(measured)[:limit]
    return ", ".join(f"{k}={format_value(measured[k], items=3)}" for k in names)


def verdict_label(result: ClaimResult) -> str:
    """The verdict as the report prints it: ``PASS``, ``PASS (vacuous)``, ``PASS, with
    finding`` (the run also showed something against the paper), ``INCONCLUSIVE``, ..."""
    text = result.verdict.value
    if result.vacuous:
        text += " (vacuous)"
    if result.outcome.findings and result.verdict is not Verdict.ERROR:
        text += ", with finding" + ("s" if len(result.outcome.findings) > 1 else "")
    return text


def _measured_cell(result: ClaimResult) -> str:
    o = result.outcome
    if result.verdict is Verdict.ERROR:
        return " ".join(o.details.split())
    return format_measured(o.measured, o.headline)


def headline(result: ClaimResult) -> str:
    """One number for the summary: the first headline key (else the first measured one),
    with its interval rounded to what it justifies when ``<key>_ci`` is measured too."""
    o = result.outcome
    keys = list(o.headline) or list(o.measured)
    if result.verdict is Verdict.ERROR or not keys:
        return ""
    k = keys[0]
    v = to_jsonable(o.measured[k])
    ci = to_jsonable(o.measured.get(f"{k}_ci"))
    if isinstance(v, int | float) and not isinstance(v, bool) and isinstance(ci, list) \
            and len(ci) == 2 and all(isinstance(x, int | float) for x in ci):
        return f"{k} = {format_estimate(v, ci[0], ci[1])}"
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, int | float) for x in v):
        return f"{k} = [{v[0]:.4g}, {v[1]:.4g}]"
    return f"{k} = {format_value(v, items=3)}"


def format_table(results: Sequence[ClaimResult], *, width: int = TABLE_WIDTH) -> str:
    """Plain-text verdict table within ``width`` columns: id, verdict, seconds, headline numbers.

    Every claim row carries the word PASS, FAIL, INCONCLUSIVE or ERROR (with ``(vacuous)`` or
    ``, with finding`` where they apply). The headline numbers are never cut: where they do not
    fit, they continue on indented lines. Thresholds are not shown (they are in full in
    ``report.md``), so no formula is cut; for an ERROR the last column is the exception
    message, clipped.
    """
    id_w = min(max([_ID_W] + [len(r.id) for r in results]), width // 2)
    lead = id_w + 1 + _VERDICT_W + 1 + 8 + 1
    header = f"{'id':<{id_w}} {'verdict':<{_VERDICT_W}} {'seconds':>8} headline numbers"
    lines = [header, "-" * min(width, max(len(header), lead + 40))]
    room = max(20, width - lead)
    for r in results:
        start = f"{_clip(r.id, id_w):<{id_w}} {verdict_label(r):<{_VERDICT_W}} {r.seconds:>8.2f} "
        cell = _measured_cell(r)
        if r.verdict is Verdict.ERROR:
            lines.append(start + _clip(cell, room))
            continue
        chunks = textwrap.wrap(cell, room, break_long_words=True, break_on_hyphens=False) or [""]
        lines.append(start + chunks[0])
        lines += [" " * lead + c for c in chunks[1:]]
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


_INLINE = 80        # a value whose text is longer than this is left to report.json
_MAX_ROWS = 4       # measured rows per claim in report.md; the rest are in report.json


def _json_text(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


def _md_number(v: float) -> str:
    return f"{v:.4g}"


def _md_inline(v: Any) -> str:
    """A converted value as table-cell text: numbers with 4 significant digits."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return _md_number(v)
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, int | float) and not isinstance(x, bool)
                                   for x in v):
        return "[" + ", ".join(_md_number(x) if isinstance(x, float) else str(x)
                               for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_md_inline(x)}" for k, x in v.items()) + "}"
    return _json_text(v)


def _measured_markdown(measured: Mapping[str, Any], descriptions: Mapping[str, str],
                       first: Sequence[str]) -> tuple[list[str], list[str]]:
    """The measured numbers as list items ``key = value: what it is`` (headline keys first,
    then the others in order, values that fit a line, at most ``_MAX_ROWS``) and the keys left
    to report.json."""
    order = [k for k in first if k in measured] + [k for k in measured if k not in first]
    rows, left = [], []
    for k in order:
        v = to_jsonable(measured[k], where=f"measured.{k}")
        text = _md_inline(v)
        if len(text) > _INLINE or len(rows) >= _MAX_ROWS:
            left.append(k)
            continue
        what = descriptions.get(k, "")
        rows.append(f"- `{k}` = {_md_cell(text)}" + (f": {_md_cell(what)}" if what else ""))
    return rows, left


def _context_text(v: Any) -> str:
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_context_text(x)}" for k, x in v.items())
    if isinstance(v, list):
        return ", ".join(_context_text(x) for x in v) if v else "[]"
    return "null" if v is None else str(v)


def _markdown(results: Sequence[ClaimResult], out_dir: pathlib.Path, context: Mapping[str, Any],
              figure_links: list[list[tuple[str, bool]]], json_name: str) -> str:
    lines = ["# Verification report", "", LEGEND, ""]
    ctx = to_jsonable(dict(context), where="context")
    if ctx:
        lines += ["## Run", "", "; ".join(f"**{_md_cell(k)}**: {_md_cell(_context_text(v))}"
                                          for k, v in ctx.items()), ""]
    lines += ["## Summary", "", f"**{format_summary(results)}**. Every number below is rounded; "
              f"[{json_name}]({json_name}) holds them unrounded, with every array.", ""]
    lines += ["| claim | verdict | headline | why |", "|---|---|---|---|"]
    for r in results:
        lines.append(f"| [{r.id}](#{_anchor(r.id)}) | **{verdict_label(r)}** "
                     f"| {_md_cell(headline(r))} | {_md_cell(_reason(r))} |")
    lines.append("")
    for r, links in zip(results, figure_links, strict=True):
        o = r.outcome
        lines += [f"## {r.id}",
                  f"**{verdict_label(r)}**"
                  + (" (the bound is vacuous at the sizes run: no evidence)" if r.vacuous else "")
                  + (f" — {_md_cell(o.reason)}" if o.reason else ""), "",
                  f"- *Claim* ({r.claim.kind.value}): {_md_cell(r.claim.statement)} "
                  f"*Source:* {_md_cell(r.claim.source)}",
                  f"- *Run:* {_md_cell(o.size) if o.size else '(size not stated)'}; "
                  f"{r.seconds:.1f} s. *Threshold, fixed before running:* "
                  f"{_md_cell(o.threshold)}"]
        for f in o.findings:
            lines.append(f"- *Finding:* {_md_cell(f)}")
        if o.hypotheses_failed:
            lines.append("- *Hypotheses failed:* " + "; ".join(_md_cell(h)
                                                              for h in o.hypotheses_failed))
        others = [w for w in r.warnings
                  if not any(h in w for h in o.hypotheses_failed)]
        if others:
            lines.append("- *Warnings:* " + "; ".join(_md_cell(w) for w in others))
        rows, left = _measured_markdown(o.measured, o.descriptions, o.headline)
        lines += rows
        if left:
            lines.append(f"- *In {json_name} only:* " + ", ".join(f"`{k}`" for k in left))
        lines.append("")
        if o.details and r.error is None:
            lines += [" ".join(o.details.split()), ""]
        if r.error:
            lines += ["```", r.error.rstrip(), "```", ""]
        figs = [f"![{pathlib.Path(fig).name}]({link})"
                + ("" if exists else "  *(figure file missing)*")
                for fig, (link, exists) in zip(o.figures, links, strict=True)]
        if figs:
            lines += [" ".join(figs), ""]
    return "\n".join(lines).rstrip() + "\n"


def _reason(r: ClaimResult) -> str:
    o = r.outcome
    if r.verdict is Verdict.ERROR:
        return f"the check raised: {' '.join(o.details.split())}"
    return o.reason or f"threshold: {o.threshold}"


def read_report(path: str | os.PathLike[str]) -> tuple[list[ClaimResult], dict[str, Any]]:
    """The claim results and context of a ``report.json`` written by :func:`write_report`, to
    render again (:func:`write_report`, :func:`format_table`) without rerunning anything. The
    claims' ``run`` refuses to run (their code is not in the file).

    Returns:
        ``(results, context)``.
    """
    data = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    try:
        entries, context = data["claims"], data.get("context", {})
    except (KeyError, TypeError):
        raise ValueError(f"{path} is not a report.json written by write_report (no 'claims')."
                         ) from None
    out_dir = pathlib.Path(path).parent

    def not_here(ctx: Any) -> Outcome:
        raise RuntimeError("a claim read from report.json cannot be rerun")

    results = []
    for d in entries:
        claim = Claim(d["id"], d["statement"], d["source"], Kind(d["kind"]), not_here)
        outcome = Outcome(
            verdict=Verdict(d["verdict"]), measured=dict(d["measured"]),
            threshold=d["threshold"], details=d.get("details", ""),
            vacuous=bool(d.get("vacuous", False)),
            figures=[str(out_dir / f) for f in d.get("figures", [])],
            hypotheses_failed=list(d.get("hypotheses_failed", [])), size=d.get("size", ""),
            headline=[k for k in d.get("headline", []) if k in d["measured"]],
            descriptions={k: v for k, v in d.get("descriptions", {}).items()
                          if k in d["measured"]},
            reason=d.get("reason", ""), findings=list(d.get("findings", [])))
        results.append(ClaimResult(claim=claim, outcome=outcome, seconds=float(d["seconds"]),
                                   error=d.get("error"), warnings=list(d.get("warnings", []))))
    return results, context


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
    md_text = _markdown(results, out, context, figure_links, f"{stem}.json")
    md_path = atomic_write_text(out / f"{stem}.md", md_text)
    json_path = atomic_write_text(out / f"{stem}.json", json_text)
    return md_path, json_path
