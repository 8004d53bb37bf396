"""Tests of the proofs_checks registry and of `python -m proofs_checks` (in-process, fakes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import pytest

from decentral.verify import CheckContext, Claim, Kind, Outcome, Verdict
from proofs_checks import registry
from proofs_checks.__main__ import build_parser, main

WORDS = ("PASS", "FAIL", "INCONCLUSIVE", "ERROR")
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def fake_registry():
    """Three claims: one PASS, one FAIL, one that raises. Records what each was run with."""
    reg: dict[str, Claim] = {}
    seen: dict[str, object] = {}

    @registry.claim("graphs.fake_pass", statement="passes", source="test", kind=Kind.EXACT,
                    registry=reg)
    def fake_pass(ctx: CheckContext) -> Outcome:
        seen["ctx"] = ctx
        seen["x64"] = bool(jax.config.jax_enable_x64)
        seen["dtype"] = str(jax.numpy.zeros(2).dtype)
        return Outcome(Verdict.PASS, {"residual": 1e-16}, "residual <= 1e-12")

    @registry.claim("graphs.fake_fail", statement="fails", source="test", kind="rate",
                    registry=reg)
    def fake_fail(ctx: CheckContext) -> Outcome:
        return Outcome(Verdict.FAIL, {"slope": -0.5}, "slope CI inside [-1.1, -0.9]",
                       vacuous=True)

    @registry.claim("push_sum.fake_raises", statement="raises", source="test",
                    kind=Kind.STATISTICAL, registry=reg)
    def fake_raises(ctx: CheckContext) -> Outcome:
        raise RuntimeError("planted failure")

    return reg, seen


def claim_lines(text: str, ids) -> list[str]:
    return [line for line in text.splitlines() if line.split(" ", 1)[0] in set(ids)]


# ------------------------------------------------------------------------------------------
# registry
# ------------------------------------------------------------------------------------------


def test_claim_decorator_registers_and_rejects_duplicates():
    reg: dict[str, Claim] = {}

    def fn(ctx):
        return Outcome(Verdict.PASS, {}, "x")

    out = registry.claim("bandits.one", statement="s", source="p", kind="exact",
                         registry=reg)(fn)
    assert out is fn and fn.claim is reg["bandits.one"]
    registry.claim("bandits.one", statement="s", source="p", kind="exact", registry=reg)(fn)

    def other(ctx):
        return Outcome(Verdict.PASS, {}, "x")

    with pytest.raises(ValueError, match="already registered"):
        registry.claim("bandits.one", statement="s", source="p", kind="exact",
                       registry=reg)(other)
    with pytest.raises(ValueError, match="family"):
        registry.claim("bandit.one", statement="s", source="p", kind="exact", registry=reg)(fn)


@pytest.mark.parametrize("bad", ["nofamily", "gaphs.x", "graphs.", "graphs.Bad-Name", 3,
                                 "graphs.1x"])
def test_claim_id_validation(bad):
    with pytest.raises(ValueError):
        registry.validate_claim_id(bad)
    with pytest.raises(ValueError):
        registry.claim(bad, statement="s", source="p", kind="exact", registry={})(
            lambda ctx: None)


def test_harness_conventions_live_in_the_registry():
    assert registry.FAMILIES == ("graphs", "consensus_sa", "push_sum", "bandits",
                                 "resilient_ac", "optimization")
    assert registry.validate_claim_id("push_sum.mass_conserved") == "push_sum.mass_conserved"
    assert registry.DEFAULT_OUT_DIR == Path("proofs_checks/out")
    assert build_parser().parse_args([]).out == registry.DEFAULT_OUT_DIR


def test_select_by_substring(fake_registry):
    reg, _ = fake_registry
    ids = lambda cs: [c.id for c in cs]  # noqa: E731
    assert ids(registry.select(reg, None)) == sorted(reg)
    assert ids(registry.select(reg, "graphs")) == ["graphs.fake_fail", "graphs.fake_pass"]
    assert ids(registry.select(reg, "pass,raises")) == ["graphs.fake_pass", "push_sum.fake_raises"]
    assert ids(registry.select(reg, ["pass", "fail"])) == ["graphs.fake_fail", "graphs.fake_pass"]
    assert registry.select(reg, "xyz-nomatch") == []
    assert ids(registry.select(list(reg.values()), " , fail ")) == ["graphs.fake_fail"]


def test_discover_imports_the_package_modules():
    found = registry.discover()
    assert found is registry.REGISTRY
    for cid, c in found.items():
        assert cid == c.id and c.family in set(registry.FAMILIES)


# ------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------


def test_list(fake_registry, capsys):
    reg, _ = fake_registry
    assert main(["--list"], registry=reg) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == sorted(reg)
    assert main(["--list", "--only", "raises"], registry=reg) == 0
    assert capsys.readouterr().out.split()[0] == "push_sum.fake_raises"


def test_list_real_registry(capsys):
    assert main(["--list"]) == 0


def test_no_match_is_a_usage_error(fake_registry, capsys):
    reg, _ = fake_registry
    assert main(["--only", "xyz-nomatch"], registry=reg) == 2
    err = capsys.readouterr().err
    assert "xyz-nomatch" in err and "graphs.fake_pass" in err
    assert main(["--only", "xyz-nomatch"]) == 2  # the real registry too


@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--seeds", "many"], ["--bogus"],
                                  ["--budget", "0"], ["--budget", "-1"], ["--budget", "nan"],
                                  ["--budget", "lots"]])
def test_bad_arguments_exit_2(argv, capsys):
    assert main(argv, registry={}) == 2


def test_run_with_an_error_exits_1(fake_registry, tmp_path, capsys):
    reg, seen = fake_registry
    x64_before = bool(jax.config.jax_enable_x64)
    rc = main(["--out", str(tmp_path), "--seeds", "7", "--full", "--budget", "2.5"],
              registry=reg)
    assert rc == 1
    out = capsys.readouterr().out
    rows = claim_lines(out, reg)
    assert [line.split()[0] for line in rows] == sorted(reg)  # id order
    for line in rows:
        assert sum(w in line.split() for w in WORDS) == 1, line
    assert "ERROR" in rows[-1] and "planted failure" in rows[-1]
    assert "FAIL (vacuous)" in rows[0]
    # the claim saw the options, float64, and the global flag is restored afterwards
    ctx = seen["ctx"]
    assert ctx.seeds == 7 and ctx.full and ctx.out_dir == tmp_path and ctx.budget == 2.5
    assert seen["x64"] and seen["dtype"] == "float64"
    assert bool(jax.config.jax_enable_x64) == x64_before
    data = json.loads((tmp_path / "report.json").read_text())
    assert {c["id"]: c["verdict"] for c in data["claims"]} == {
        "graphs.fake_fail": "FAIL", "graphs.fake_pass": "PASS", "push_sum.fake_raises": "ERROR"}
    ctx_record = data["context"]
    assert ctx_record["mode"] == "full" and ctx_record["seeds_override"] == 7
    assert ctx_record["budget"] == 2.5
    # the provenance part is decentral.results.provenance(), one record for every file
    from decentral.results import PROVENANCE_PACKAGES, provenance

    assert set(provenance()) <= set(ctx_record)
    assert ctx_record["jax"]["enable_x64"] is True
    assert set(ctx_record["versions"]) == set(PROVENANCE_PACKAGES) | {"python"}
    for pkg in ("numpy", "scipy", "jax", "networkx", "matplotlib", "python"):
        assert ctx_record["versions"][pkg]
    assert "date" in ctx_record and "git_commit" in ctx_record
    md = (tmp_path / "report.md").read_text()
    assert all(f"## {cid}" in md for cid in reg)


def test_run_without_errors_exits_0_even_with_a_fail(fake_registry, tmp_path, capsys):
    reg, _ = fake_registry
    assert main(["--only", "graphs", "--out", str(tmp_path), "--quiet"], registry=reg) == 0
    captured = capsys.readouterr()
    assert "[1/" not in captured.err  # --quiet: no progress lines
    rows = claim_lines(captured.out, reg)
    assert len(rows) == 2 and all(any(w in line for w in WORDS) for line in rows)
    data = json.loads((tmp_path / "report-only.json").read_text())
    assert sorted(c["id"] for c in data["claims"]) == ["graphs.fake_fail", "graphs.fake_pass"]
    assert data["context"]["only"] == ["graphs"]


def test_only_writes_beside_the_full_report(fake_registry, tmp_path, capsys):
    reg, _ = fake_registry
    main(["--out", str(tmp_path), "--quiet"], registry=reg)
    full_md = (tmp_path / "report.md").read_text()
    full_json = (tmp_path / "report.json").read_text()
    capsys.readouterr()
    assert main(["--only", "fake_pass", "--out", str(tmp_path), "--quiet"], registry=reg) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "report.md").read_text() == full_md         # untouched
    assert (tmp_path / "report.json").read_text() == full_json
    only = json.loads((tmp_path / "report-only.json").read_text())
    assert [c["id"] for c in only["claims"]] == ["graphs.fake_pass"]
    assert "## graphs.fake_pass" in (tmp_path / "report-only.md").read_text()
    assert str(tmp_path / "report-only.md") in out and str(tmp_path / "report-only.json") in out


def test_repeated_and_comma_separated_only(fake_registry, tmp_path, capsys):
    reg, _ = fake_registry
    assert main(["--only", "fake_pass", "--only", "nothing,fake_fail", "--out", str(tmp_path)],
                registry=reg) == 0
    rows = claim_lines(capsys.readouterr().out, reg)
    assert [line.split()[0] for line in rows] == ["graphs.fake_fail", "graphs.fake_pass"]


def test_module_import_failure_is_an_error_row(monkeypatch, fake_registry, tmp_path, capsys):
    reg, _ = fake_registry
    monkeypatch.setattr(registry, "discover", lambda: reg)
    monkeypatch.setattr(registry, "DISCOVERY_ERRORS", {"bandits": "Traceback: SyntaxError"})
    assert main(["--out", str(tmp_path), "--only", "graphs.fake_pass,bandits"]) == 1
    rows = claim_lines(capsys.readouterr().out, list(reg) + ["bandits.module_import"])
    assert any(line.startswith("bandits.module_import") and "ERROR" in line for line in rows)


@pytest.mark.subprocess
def test_command_line_entry_point():
    proc = subprocess.run([sys.executable, "-m", "proofs_checks", "--only", "xyz-nomatch"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "matches no claim id" in proc.stderr


@pytest.mark.subprocess
def test_command_uses_one_cpu_device_per_core(tmp_path):
    """``python -m proofs_checks`` asks for one CPU device per core before JAX starts."""
    from decentral.devices import cpu_core_count

    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.run([sys.executable, "-m", "proofs_checks", "--only",
                           "graphs.perron_ring_chord", "--out", str(tmp_path), "--quiet"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    context = json.loads((tmp_path / "report-only.json").read_text())["context"]
    assert context["cpu_devices"] == cpu_core_count()
    assert context["jax"]["device_count"] == cpu_core_count()


def test_seed_budget_scales_and_rounds_to_whole_batches():
    assert CheckContext().seed_budget(2048, 8192, batch=64) == 2048
    assert CheckContext(full=True).seed_budget(2048, 8192, batch=64) == 8192
    assert CheckContext(budget=0.5).seed_budget(2048, 8192, batch=64) == 1024
    assert CheckContext(budget=0.01).seed_budget(100, batch=64) == 64       # at least one batch
    assert CheckContext(budget=1.3).seed_budget(100, batch=64) == 192      # rounded up
    for bad in (0, -1.0, float("inf"), True, "2"):
        with pytest.raises(ValueError, match="budget"):
            CheckContext(budget=bad)


def test_console_output_fits_120_columns(tmp_path, capsys):
    import warnings as w

    reg: dict[str, Claim] = {}

    @registry.claim("graphs.fake_long", statement="long", source="test", kind=Kind.EXACT,
                    registry=reg)
    def fake_long(ctx: CheckContext) -> Outcome:
        w.warn("a very long warning " * 20, RuntimeWarning, stacklevel=1)
        return Outcome(Verdict.PASS, {f"number_{k}": 0.1 * k for k in range(30)},
                       "a threshold that is far too long to fit on one console line " * 4,
                       headline=[f"number_{k}" for k in range(30)])

    assert main(["--out", str(tmp_path)], registry=reg) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines() + captured.err.splitlines()
    long = [line for line in lines if len(line) > 120]
    assert not long, long
    assert "number_29=2.9" in captured.out.replace("\n", " ")
