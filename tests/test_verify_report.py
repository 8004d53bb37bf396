"""Tests of decentral.verify.claims (claims, run_claim, judges) and decentral.verify.report."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from decentral.verify import claims as C
from decentral.verify import report as R

WORDS = ("PASS", "FAIL", "INCONCLUSIVE", "ERROR")


def make_claim(claim_id, fn, kind=C.Kind.EXACT):
    return C.Claim(claim_id, f"statement of {claim_id}", "Paper, Thm 1", kind, fn)


def results_for(ctx: C.CheckContext) -> list[C.ClaimResult]:
    fig = ctx.figure_path("graphs.passing", "curve")
    fig.write_bytes(b"\x89PNG fake")

    def passing(ctx):
        return C.Outcome(
            C.Verdict.PASS,
            {"residual": np.float64(3e-16), "count": np.int64(7), "flag": np.bool_(True),
             "curve": np.arange(5, dtype=np.float32), "nan": float("nan"), "inf": np.inf},
            "max residual <= 1e-12",
            figures=[str(fig)],
            size="N=6, T=10",
        )

    def failing(ctx):
        return C.Outcome(C.Verdict.FAIL, {"slope": -0.5, "lo": -0.6, "hi": -0.4},
                         "slope CI inside [-1.1, -0.9]", details="the rate is slower",
                         hypotheses_failed=["graph not B-connected"], vacuous=True)

    def raising(ctx):
        raise RuntimeError("boom in the check")

    claims = [make_claim("graphs.passing", passing),
              make_claim("bandits.failing", failing, C.Kind.RATE),
              make_claim("push_sum.raising", raising, C.Kind.STATISTICAL)]
    return [C.run_claim(c, ctx) for c in claims]


# ------------------------------------------------------------------------------------------
# claims
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", "has space.x", "graphs.x\n", 3, None])
def test_claim_id_must_be_a_plain_string(bad):
    with pytest.raises(ValueError, match="claim id"):
        make_claim(bad, lambda ctx: None)


def test_claim_ids_are_generic_here():
    # decentral.verify does not know the proofs_checks families (proofs_checks.registry does)
    c = make_claim("anything.goes_here", lambda ctx: None)
    assert c.family == "anything"
    assert not hasattr(C, "FAMILIES") and not hasattr(C, "validate_claim_id")


def test_claim_fields_are_validated_and_coerced():
    c = C.Claim("resilient_ac.ok_name", "s", "src", "rate", lambda ctx: None)
    assert c.kind is C.Kind.RATE and c.family == "resilient_ac"
    with pytest.raises(ValueError, match="kind"):
        C.Claim("graphs.x", "s", "src", "weird", lambda ctx: None)
    with pytest.raises(ValueError, match="statement"):
        C.Claim("graphs.x", " ", "src", "exact", lambda ctx: None)
    with pytest.raises(ValueError, match="threshold"):
        C.Outcome(C.Verdict.PASS, {}, "")
    with pytest.raises(ValueError, match="verdict"):
        C.Outcome("MAYBE", {}, "x <= 1")
    with pytest.raises(ValueError, match="headline"):
        C.Outcome("PASS", {"a": 1}, "x <= 1", headline=["b"])
    with pytest.raises(ValueError, match="descriptions"):
        C.Outcome("PASS", {"a": 1}, "x <= 1", descriptions={"b": "not measured"})
    assert C.Outcome("PASS", {"a": 1}, "x", descriptions={"a": "one"}).descriptions == {"a": "one"}
    assert C.Outcome("PASS", {}, "x <= 1").verdict is C.Verdict.PASS


def test_check_context(tmp_path):
    ctx = C.CheckContext(out_dir=tmp_path / "out")
    p = ctx.figure_path("graphs.demo", "residuals")
    assert p == tmp_path / "out" / "figures" / "graphs.demo-residuals.png"
    assert p.parent.is_dir()
    assert ctx.seed_count(10, 100) == 10
    assert C.CheckContext(full=True).seed_count(10, 100) == 100
    assert C.CheckContext(full=True, seeds=3).seed_count(10, 100) == 3
    assert ctx.seed_for("graphs.a") != ctx.seed_for("graphs.b")
    assert ctx.seed_for("graphs.a") == C.CheckContext(out_dir=tmp_path).seed_for("graphs.a")
    assert C.CheckContext(base_seed=1).seed_for("graphs.a") != ctx.seed_for("graphs.a")
    with pytest.raises(ValueError):
        C.CheckContext(seeds=0)
    with pytest.raises(ValueError):
        C.CheckContext(seeds=2.0)
    with pytest.raises(ValueError):
        ctx.figure_path("graphs.demo", "../escape")
    # no default output folder in the generic harness: figures need an explicit out_dir
    assert C.CheckContext().out_dir is None
    with pytest.raises(ValueError, match="out_dir"):
        C.CheckContext().figure_path("graphs.demo", "residuals")


def test_run_claim_turns_exceptions_and_bad_returns_into_error(tmp_path):
    ctx = C.CheckContext(out_dir=tmp_path)
    r = C.run_claim(make_claim("graphs.raises", lambda ctx: 1 / 0), ctx)
    assert r.verdict is C.Verdict.ERROR
    assert "ZeroDivisionError" in r.error and "ZeroDivisionError" in r.outcome.details
    assert r.seconds >= 0
    r = C.run_claim(make_claim("graphs.returns_none", lambda ctx: None), ctx)
    assert r.verdict is C.Verdict.ERROR and "not an Outcome" in r.error
    # a measured value with no JSON form would sink the report: an ERROR of that claim instead
    r = C.run_claim(make_claim("graphs.bad_measured",
                               lambda ctx: C.Outcome("PASS", {"fn": print}, "x")), ctx)
    assert r.verdict is C.Verdict.ERROR and "measured.fn" in r.error


def test_run_claim_records_warnings_and_hypotheses(tmp_path):
    from decentral.hypotheses import warn_hypothesis

    class HypothesisLookalike(UserWarning):      # a name match alone must not count
        pass

    def fn(ctx):
        warn_hypothesis("graph is not 3-robust")
        warnings.warn("not a theorem hypothesis", HypothesisLookalike, stacklevel=1)
        warnings.warn("something else", UserWarning, stacklevel=1)
        return C.Outcome(C.Verdict.PASS, {"x": 1}, "x == 1")

    r = C.run_claim(make_claim("graphs.warns", fn), C.CheckContext(out_dir=tmp_path))
    assert r.verdict is C.Verdict.PASS
    assert r.outcome.hypotheses_failed == ["graph is not 3-robust"]
    assert any("something else" in w for w in r.warnings)


def test_judges():
    V = C.Verdict
    assert C.judge_tolerance(1e-13, 1e-12) is V.PASS
    assert C.judge_tolerance(np.array([1e-13, -2e-12]), 1e-12) is V.FAIL
    assert C.judge_tolerance(np.nan, 1e-12) is V.FAIL
    with pytest.raises(ValueError, match="tolerance"):
        C.judge_tolerance(0.0, -1.0, what="residual")
    assert C.judge_upper_bound(0.1, 0.2, 0.3) is V.PASS
    assert C.judge_upper_bound(0.4, 0.5, 0.3) is V.FAIL
    assert C.judge_upper_bound(0.2, 0.4, 0.3) is V.INCONCLUSIVE
    assert C.judge_upper_bound(float("nan"), 0.4, 0.3) is V.INCONCLUSIVE
    assert C.judge_lower_bound(0.4, 0.5, 0.3) is V.PASS
    assert C.judge_lower_bound(0.1, 0.2, 0.3) is V.FAIL
    assert C.judge_interval(-1.05, -0.95, -1.1, -0.9) is V.PASS
    assert C.judge_interval(-0.6, -0.4, -1.1, -0.9) is V.FAIL
    assert C.judge_interval(-1.2, -1.0, -1.1, -0.9) is V.INCONCLUSIVE
    with pytest.raises(ValueError):
        C.judge_interval(0.2, 0.1, 0.0, 1.0)
    assert C.combine_verdicts(["PASS", "INCONCLUSIVE"]) is V.INCONCLUSIVE
    assert C.combine_verdicts([V.PASS, V.FAIL, V.INCONCLUSIVE]) is V.FAIL
    assert C.combine_verdicts([V.PASS, V.PASS]) is V.PASS
    with pytest.raises(ValueError):
        C.combine_verdicts([])


# ------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------


def test_report_uses_the_one_to_jsonable():
    from decentral import results

    assert R.to_jsonable is results.to_jsonable
    assert not hasattr(__import__("decentral.verify", fromlist=["x"]), "to_jsonable")


def test_format_table_rows_carry_verdict_words(tmp_path):
    results = results_for(C.CheckContext(out_dir=tmp_path / "out"))
    table = R.format_table(results)
    rows = [line for line in table.splitlines() if line.split(" ", 1)[0] in
            {r.id for r in results}]
    assert len(rows) == 3
    for line in rows:
        assert sum(w in line.split() for w in WORDS) == 1, line
    failing = next(line for line in rows if line.startswith("bandits.failing"))
    assert "FAIL (vacuous)" in failing and "slope=-0.5" in failing
    assert "boom in the check" in next(line for line in rows if line.startswith("push_sum"))
    assert "residual=3e-16" in next(line for line in rows if line.startswith("graphs.passing"))
    summary = R.format_summary(results)
    assert "1 PASS" in summary and "1 FAIL" in summary and "1 ERROR" in summary
    assert "1 vacuous" in summary


def test_write_report_markdown_and_json(tmp_path):
    out = tmp_path / "out"
    results = results_for(C.CheckContext(out_dir=out))
    context = {"mode": "quick", "versions": {"numpy": np.__version__}, "seeds": None}
    md_path, json_path = R.write_report(results, out, context)
    assert md_path == out / "report.md" and json_path == out / "report.json"
    md = md_path.read_text()
    for r in results:
        assert f"## {r.id}" in md
    for word in ("PASS", "FAIL", "ERROR"):
        assert word in md
    assert "![graphs.passing-curve.png](figures/graphs.passing-curve.png)" in md
    assert "(figure file missing)" not in md
    assert "graph not B-connected" in md and "boom in the check" in md
    assert "max residual <= 1e-12" in md and "N=6, T=10" in md
    data = json.loads(json_path.read_text())
    assert data["context"] == {"mode": "quick", "versions": {"numpy": np.__version__},
                               "seeds": None}
    assert data["summary"]["PASS"] == 1 and data["summary"]["ERROR"] == 1
    by_id = {c["id"]: c for c in data["claims"]}
    assert [c["id"] for c in data["claims"]] == [r.id for r in results]
    p = by_id["graphs.passing"]
    assert p["verdict"] == "PASS" and p["measured"]["count"] == 7
    assert p["measured"]["curve"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert p["measured"]["nan"] == "NaN"
    assert p["figures"] == ["figures/graphs.passing-curve.png"]
    assert by_id["bandits.failing"]["vacuous"] is True
    assert "RuntimeError" in by_id["push_sum.raising"]["error"]
    # Round trip: re-serialising the loaded JSON gives the same text.
    assert json.dumps(data, indent=2) + "\n" == json_path.read_text()
    assert not [f for f in os.listdir(out) if f.endswith(".tmp")]


def long_result(ctx: C.CheckContext) -> C.ClaimResult:
    cases = {f"graph {k}": {"expected": k, "computed": k} for k in range(12)}
    curve = [0.1 * k for k in range(40)]

    def fn(ctx):
        return C.Outcome(
            C.Verdict.PASS,
            {"cases": cases, "curve": curve, "rate_per_step": 0.123456789,
             "horizon": 1028, "mismatches": []},
            "computed == stated",
            headline=["rate_per_step", "horizon", "mismatches", "curve"],
            descriptions={"rate_per_step": "contraction factor per step (dimensionless)",
                          "horizon": "step where the backward recursion started"},
        )

    return C.run_claim(make_claim("graphs.long_values", fn), ctx)


def test_terminal_table_fits_120_columns_and_never_cuts_headline_numbers(tmp_path):
    table = R.format_table([long_result(C.CheckContext(out_dir=tmp_path))])
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= R.TABLE_WIDTH
    start = next(i for i, line in enumerate(lines) if line.startswith("graphs.long_values"))
    body = " ".join(line.strip() for line in lines[start:])
    assert "rate_per_step=0.123, horizon=1028, mismatches=[]" in body
    assert "curve=[0, 0.1, 0.2," in body and "3.9]" in body and "..." not in body
    assert "computed == stated" not in table            # thresholds live in report.md


def test_markdown_is_short_rounded_and_leaves_arrays_to_the_json(tmp_path):
    r = long_result(C.CheckContext(out_dir=tmp_path))
    md_path, json_path = R.write_report([r], tmp_path, {"mode": "quick"})
    md = md_path.read_text()
    assert md.index("How to read this report") < md.index("## Summary")
    for word in ("PASS", "FAIL", "INCONCLUSIVE", "ERROR", "vacuous", "exact", "statistical",
                 "rate", "measured", "threshold"):
        assert f"**{word}**" in md, word
    assert "- `rate_per_step` = 0.1235: contraction factor per step (dimensionless)" in md
    assert "- `horizon` = 1028: step where the backward recursion started" in md
    assert "- *In report.json only:* `curve`, `cases`" in md
    section = md.split("## graphs.long_values")[1]
    assert "graph 11" not in section and len(section.splitlines()) <= 15
    assert "threshold: computed == stated" in md          # no reason given: the threshold
    data = json.loads(json_path.read_text())
    assert data["legend"]["verdicts"]["INCONCLUSIVE"]
    assert data["claims"][0]["descriptions"]["horizon"].startswith("step")
    assert len(data["claims"][0]["measured"]["cases"]) == 12
    assert data["claims"][0]["measured"]["rate_per_step"] == 0.123456789


def test_reason_findings_and_headline_interval(tmp_path):
    def fn(ctx):
        return C.Outcome(C.Verdict.PASS, {"difference": 0.6570606, "difference_ci": [0.0611741,
                                                                                      1.2529471]},
                         "interval above 0", reason="95 % interval above 0 after 1100 seeds",
                         findings=["the stated rate is violated at all 5 step sizes"],
                         headline=["difference"], descriptions={"difference": "a - b"})

    r = C.run_claim(make_claim("graphs.with_finding", fn), C.CheckContext(out_dir=tmp_path))
    assert R.verdict_label(r) == "PASS, with finding"
    assert R.headline(r) == "difference = 0.66 [0.06, 1.25]"
    md = R.write_report([r], tmp_path, {})[0].read_text()
    assert "| **PASS, with finding** | difference = 0.66 [0.06, 1.25] | 95 % interval above 0 " \
           "after 1100 seeds |" in md
    assert "- *Finding:* the stated rate is violated at all 5 step sizes" in md
    assert "PASS, with finding" in R.format_table([r])
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["claims"][0]["findings"] == ["the stated rate is violated at all 5 step sizes"]
    assert data["claims"][0]["reason"].startswith("95 %")


@pytest.mark.parametrize("value, lo, hi, text", [
    (0.6570606, 0.0611741, 1.2529471, "0.66 [0.06, 1.25]"),
    (-23.439910151870464, -24.1, -22.49363976934089, "-23.44 [-24.10, -22.49]"),
    (7.496e-06, 5.93e-06, 7.504e-06, "7.5e-06 [5.93e-06, 7.5e-06]"),
    (1234.5678, 1200.0, 1270.0, "1235 [1200, 1270]"),
])
def test_format_estimate_rounds_to_the_interval(value, lo, hi, text):
    assert R.format_estimate(value, lo, hi) == text


def test_outcome_reason_and_findings_are_checked():
    with pytest.raises(ValueError, match="reason"):
        C.Outcome("PASS", {}, "x", reason=["not", "a", "line"])
    with pytest.raises(ValueError, match="findings"):
        C.Outcome("PASS", {}, "x", findings="one string")
    o = C.Outcome("PASS", {}, "x", reason="two\n lines", findings=["a\n b"])
    assert o.reason == "two lines" and o.findings == ["a b"]


def test_write_report_stem(tmp_path):
    r = long_result(C.CheckContext(out_dir=tmp_path))
    md, js = R.write_report([r], tmp_path, {}, stem="report-only")
    assert (md.name, js.name) == ("report-only.md", "report-only.json")
    assert not (tmp_path / "report.md").exists()
    with pytest.raises(ValueError, match="stem"):
        R.write_report([r], tmp_path, {}, stem="../x")


def test_relative_figure_paths_are_relative_to_the_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ctx = C.CheckContext(out_dir=Path("rel_out"))
    fig = ctx.figure_path("graphs.rel", "plot")  # a cwd-relative path
    assert not fig.is_absolute()
    fig.write_bytes(b"png")

    def fn(ctx):
        return C.Outcome("PASS", {}, "x", figures=[str(fig), "nowhere/missing.png"])

    res = [C.run_claim(make_claim("graphs.rel", fn), ctx)]
    md_path, _ = R.write_report(res, "rel_out", {})
    md = md_path.read_text()
    assert "](figures/graphs.rel-plot.png)" in md
    assert "](../nowhere/missing.png)  *(figure file missing)*" in md


def test_write_is_atomic(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("old report")
    results = results_for(C.CheckContext(out_dir=out))

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(R.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        R.write_report(results, out, {})
    assert (out / "report.md").read_text() == "old report"
    assert sorted(os.listdir(out)) == ["figures", "report.md"]  # no temp files left behind
