"""Smoke test of the benchmarks at the tiny size: shapes of the results, sane times, and that
every decentral computation agrees with its reference. No timing assertions."""

from __future__ import annotations

import json
import math

import jax
import numpy as np
import pytest

from benchmarks import (
    BenchResult,
    bench_consensus_plain,
    consensus_workload,
    format_markdown,
    format_table,
    jax_config,
    registry,
    write_results,
)
from benchmarks import __main__ as cli
from decentral.graphs import erdos_renyi, row_stochastic
from decentral.results import provenance

# one worker runs this module: its tests share module-level runs (pytest-xdist)
pytestmark = pytest.mark.xdist_group("benchmarks_smoke")

EXPECTED_KEYS = {
    "name", "variant", "dtype", "size", "metric", "value", "reference", "reference_value",
    "ratio", "compile_s", "reference_compile_s", "times_s", "reference_times_s", "repeats",
    "max_abs_diff", "agree", "tolerance", "prng_impl", "enable_x64", "notes", "extra",
    "target_ratio", "reference_label",
}


@pytest.fixture(scope="module")
def tiny_rows():
    before = (bool(jax.config.jax_enable_x64), str(jax.config.jax_default_prng_impl))
    rows = registry.run_benchmarks("tiny")
    after = (bool(jax.config.jax_enable_x64), str(jax.config.jax_default_prng_impl))
    return rows, before, after


def test_every_benchmark_ran_with_expected_keys(tiny_rows):
    rows, _, _ = tiny_rows
    assert {r.name for r in rows} == set(registry.BENCHMARKS)
    for r in rows:
        assert isinstance(r, BenchResult)
        d = r.to_dict()
        assert set(d) == EXPECTED_KEYS
        json.dumps(d)                      # JSON-ready
        assert r.metric in ("time_s", "bytes")


def test_times_are_finite_and_positive(tiny_rows):
    rows, _, _ = tiny_rows
    for r in rows:
        assert math.isfinite(r.value) and r.value > 0, r
        assert r.reference_value is not None and math.isfinite(r.reference_value)
        assert r.reference_value > 0
        assert r.ratio == pytest.approx(r.reference_value / r.value)
        if r.metric == "time_s":
            assert len(r.times_s) == r.repeats >= 1
            assert all(math.isfinite(t) and t > 0 for t in r.times_s + r.reference_times_s)
            assert r.compile_s is not None and r.compile_s >= 0


def test_decentral_agrees_with_reference(tiny_rows):
    rows, _, _ = tiny_rows
    unchecked = [(r.name, r.variant) for r in rows if r.agree is None]
    # only the fitted host-cost row compares no outputs (its runs are the checked rows' kind)
    assert unchecked == [("runner.overhead", "host costs (fit over 1, 4, 16 chunks)")]
    for r in rows:
        if r.agree is None:
            continue
        assert r.agree is True, (r.name, r.variant, r.dtype, r.max_abs_diff, r.tolerance)
        assert r.max_abs_diff is not None and r.max_abs_diff <= r.tolerance
    consensus = {r.dtype: r for r in rows if r.name == "consensus.plain"}
    assert set(consensus) == {"float32", "float64"}
    assert consensus["float64"].enable_x64 and not consensus["float32"].enable_x64
    assert consensus["float64"].max_abs_diff <= 1e-10


def test_memory_records_do_not_grow_with_horizon(tiny_rows):
    rows, _, _ = tiny_rows
    mem = [r for r in rows if r.name == "memory.records"]
    assert len(mem) == 2 and mem[0].size["T"] < mem[1].size["T"]
    assert mem[0].value == mem[1].value
    assert mem[1].reference_value == pytest.approx(mem[0].reference_value * mem[1].size["T"]
                                                   / mem[0].size["T"])


def test_prng_impl_recorded_and_config_restored(tiny_rows):
    rows, before, after = tiny_rows
    assert before == after
    prng = {r.variant: r for r in rows if r.name == "prng.threefry_vs_rbg"}
    assert set(prng) == {"threefry2x32", "rbg"}
    for impl, r in prng.items():
        assert r.prng_impl == impl


def test_numpy_reference_is_the_matrix_product():
    # the reference itself must compute x(T) = W_{T-1} ... W_0 x(0)
    rng = np.random.default_rng(0)
    Ws = np.stack([row_stochastic(erdos_renyi(5, 0.5, kind="strong", seed=k)) for k in range(3)])
    x0 = rng.standard_normal((2, 5))
    final, records = consensus_workload.numpy_consensus(Ws, x0, 7, record_every=7)
    prod = np.eye(5)
    for t in range(7):
        prod = Ws[t % 3] @ prod
    np.testing.assert_allclose(final, x0 @ prod.T, atol=1e-12)
    np.testing.assert_allclose(records[:, 0], final)


def test_agreement_check_fails_on_a_wrong_reference(monkeypatch):
    # negative control: a reference with transposed W (the wrong orientation) must be caught
    original = consensus_workload.numpy_consensus

    def transposed(weights, x0, num_steps, record_every):
        return original(np.swapaxes(weights, 1, 2).copy(), x0, num_steps, record_every)

    monkeypatch.setattr(bench_consensus_plain, "numpy_consensus", transposed)
    (row,) = bench_consensus_plain.bench_consensus(S=3, N=6, T=20, record_every=10,
                                                   dtypes=("float64",), repeats=1)
    assert row.agree is False and row.max_abs_diff > row.tolerance


def test_jax_config_restores_on_error():
    before = str(jax.config.jax_default_prng_impl)
    with pytest.raises(RuntimeError), jax_config(jax_default_prng_impl="rbg"):
        assert str(jax.config.jax_default_prng_impl) == "rbg"
        raise RuntimeError("boom")
    assert str(jax.config.jax_default_prng_impl) == before


def test_writers(tiny_rows, tmp_path):
    rows, _, _ = tiny_rows
    prov = provenance()
    paths = write_results(rows, tmp_path, prov, config={"size": "tiny"}, command="test")
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [p.name for p in paths] == ["results.json", "results.md"]
    assert len(doc["results"]) == len(rows)
    assert doc["provenance"]["jax"]["default_prng_impl"] == prov["jax"]["default_prng_impl"]
    md = (tmp_path / "results.md").read_text()
    assert "| name |" in md and md.count("\n| consensus.plain") == 2
    table = format_table(rows)
    assert len(table.splitlines()) == len(rows) + 2
    assert max(len(line) for line in table.splitlines()) <= 120
    # every row with a target says whether it is met; rows without one say "-"
    for line, r in zip(table.splitlines()[2:], rows, strict=True):
        assert (" met" in line or "NOT met" in line) == (r.target_ratio is not None and
                                                         r.ratio is not None), line
    assert sum(r.target_ratio is not None for r in rows) >= 10
    assert format_markdown(rows, prov).startswith("# decentral benchmarks")


def test_every_reference_is_described_in_words(tiny_rows, tmp_path):
    # each row names its reference in a few words: a column of results.md, a field of
    # results.json and a column of the console table (cut to fit, never empty)
    rows, _, _ = tiny_rows
    for r in rows:
        assert r.reference_label and len(r.reference_label) <= 20, (r.name, r.reference_label)
        assert r.reference_label != r.reference
    write_results(rows, tmp_path, provenance(), config={"size": "tiny"})
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [d["reference_label"] for d in doc["results"]] == [r.reference_label for r in rows]
    md = (tmp_path / "results.md").read_text()
    assert "| name | variant | against |" in md
    assert all(f"| {r.reference_label} |" in md for r in rows)
    table = format_table(rows).splitlines()
    assert table[0].split()[:3] == ["benchmark", "variant", "against"]
    for line, r in zip(table[2:], rows, strict=True):
        assert r.reference_label[:10] in line, line


def test_table_stays_within_width_with_long_cells():
    # a variant and a reference label far too long for the table are cut, not wrapped
    row = BenchResult(name="x" * 40, variant="v" * 200, dtype="float32", size={},
                      metric="time_s", value=1.0, reference="r", reference_value=2.0,
                      ratio=2.0, target_ratio=1.5, agree=True, reference_label="l" * 80)
    lines = format_table([row]).splitlines()
    assert max(len(line) for line in lines) <= 120
    assert lines[2].rstrip().endswith("met  ok") and "~" in lines[2]


def test_cli(tmp_path, capsys):
    assert cli.main(["--size", "tiny", "--only", "memory", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "memory.records" in out and "ratio" in out
    doc = json.loads((tmp_path / "results.json").read_text())
    assert {r["name"] for r in doc["results"]} == {"memory.records"}
    assert doc["config"]["size"] == "tiny"
    assert cli.main(["--only", "no-such-benchmark", "--out", str(tmp_path)]) == 2
    assert cli.main(["--list"]) == 0
