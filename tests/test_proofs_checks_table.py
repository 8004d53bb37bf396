"""python -m proofs_checks.table: the claims table of docs/claims.md regenerated from a
report.json, keeping the page's own "what it checks" text."""

import json

from decentral.verify import CheckContext, Claim, Kind, Outcome, Verdict, run_claim, write_report
from decentral.verify.report import read_report
from proofs_checks import table

PAGE = """# Claims

Intro text.

| id | kind | verdict | what it checks |
|---|---|---|---|
| `demo.kept` | exact | PASS | hand-written summary, kept |

After the table.
"""


def _report(tmp_path):
    claims = [
        Claim("demo.kept", "statement one", "src", Kind.EXACT,
              lambda ctx: Outcome(Verdict.PASS, {"residual": 1e-16}, "residual <= 1e-12")),
        Claim("demo.new", "a new claim's statement", "src", Kind.STATISTICAL,
              lambda ctx: Outcome(Verdict.FAIL, {"gap": 0.66, "gap_ci": [0.06, 1.25]},
                                  "gap below 0", findings=["something"])),
    ]
    results = [run_claim(c, CheckContext()) for c in claims]
    write_report(results, tmp_path, {"mode": "quick", "date": "2026-12-07T18:00:00+00:00"})
    return tmp_path / "report.json"


def test_table_is_regenerated_from_the_report_and_keeps_the_page_text(tmp_path):
    path = _report(tmp_path)
    results, context = read_report(path)
    assert [r.verdict for r in results] == [Verdict.PASS, Verdict.FAIL]
    page = table.update_page(PAGE, results, context)
    assert page.startswith("# Claims\n\nIntro text.") and page.rstrip().endswith(
        "After the table.")
    assert "quick-size run of 2026-12-07: 2 claims, 1 PASS, 1 FAIL" in page
    assert "| `demo.kept` | exact | PASS | residual = 1e-16 | hand-written summary, kept |" in page
    assert ("| `demo.new` | statistical | **FAIL, with finding** | gap = 0.66 [0.06, 1.25] "
            "| a new claim's statement |") in page
    # a second run replaces the block between the markers, nothing else
    again = table.update_page(page, results, context)
    assert again == page and again.count(table.START) == 1


def test_command_writes_the_page(tmp_path, capsys):
    path = _report(tmp_path)
    page = tmp_path / "claims.md"
    page.write_text(PAGE)
    assert table.main(["--report", str(path), "--page", str(page)]) == 0
    assert table.START in page.read_text()
    assert table.main(["--report", str(tmp_path / "missing.json"), "--page", str(page)]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"no": "claims"}))
    assert table.main(["--report", str(bad), "--page", str(page)]) == 2
    assert "not a report.json" in capsys.readouterr().err
