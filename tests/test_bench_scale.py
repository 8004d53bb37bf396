"""The measuring tools of the ``scale.*`` benchmarks (:mod:`benchmarks.bench_scale`): what their
rows rest on and the tiny smoke run cannot show.

``tests/test_benchmarks_smoke.py`` runs the benchmarks at the tiny size (rows, agreement). Here:
a phase's peak memory is its own (the peak is reset between phases), a short run compiles the
program the timed runs then use (so a timed run is the compiled speed) while a watch does see
a compilation, the fitted exponent, the largest-N bisection, and the rows a failed case gives.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import decentral.graphs as g
from benchmarks.bench_scale import (
    CompileWatch,
    PeakMeter,
    bench_scale_families,
    fit_exponent,
    largest_n_estimate,
    n_text,
    rss_bytes,
    short_record_points,
)
from decentral.consensus import consensus, consensus_params
from decentral.runner import run

MIB = 2**20


def test_a_phase_peak_is_its_own():
    meter = PeakMeter(rss_bytes())
    block = np.ones(96 * MIB // 8)            # 96 MiB written, then freed
    del block
    meter.mark("large")
    small = np.ones(1024)
    meter.mark("small")
    del small
    if not meter.resets:
        pytest.skip("this kernel does not reset the peak RSS (/proc/self/clear_refs)")
    assert meter.phases["large"] >= 90 * MIB
    assert meter.phases["small"] < 48 * MIB       # the earlier peak is not carried over
    assert meter.peak() == meter.phases["large"]
    report = meter.report()
    assert report["peak_reset"] and set(report["phase_end_bytes"]) == {"large", "small"}


def _mean(state):
    return state.x.mean(axis=0)


def test_a_short_run_compiles_the_timed_runs_program():
    alg = consensus(g.static(g.exponential(24, sparse=True), rule="row"), shape=2,
                    dtype=jnp.float32)
    params = consensus_params()
    with CompileWatch() as first:
        run(alg, params, seeds=[0, 1], num_steps=3, record_at=short_record_points(3),
            record_fn=_mean, progress=False)
    with CompileWatch() as timed:
        res = run(alg, params, seeds=[0, 1], num_steps=16, record_at=[0, 16], record_fn=_mean,
                  progress=False)
    assert first.seconds > 0 and timed.seconds == 0.0
    assert res.records.shape == (2, 2, 2)
    # negative control: an end-only grid shorter than 8 steps is another layout, and the
    # watch sees it compile
    with CompileWatch() as other:
        run(alg, params, seeds=[0, 1], num_steps=4, record_at=[0, 4], record_fn=_mean,
            progress=False)
    assert other.seconds > 0
    with pytest.raises(ValueError, match="at least 3 steps"):
        short_record_points(2)


def test_fit_exponent_recovers_a_power_law():
    edges = np.array([1e4, 1e5, 1e6, 2e7])
    b, a = fit_exponent(edges, 3e-9 * edges**1.2)
    assert b == pytest.approx(1.2) and a == pytest.approx(np.log(3e-9))


def test_largest_n_estimate_is_the_boundary():
    def need(n):
        width = 1 + (n - 1).bit_length()
        return 5.0 * n * (8 * 4 * 4 + width * 9)

    usable = 20e9
    n = largest_n_estimate(factor=5.0, usable_bytes=usable, S=8, d=4)
    assert need(n) <= usable < need(n + 1)


def test_n_text():
    assert [n_text(n) for n in (10, 1000, 1_000_000, 64, 100_001)] == \
        ["1e1", "1e3", "1e6", "64", "100001"]


def test_a_failed_case_becomes_a_row_not_an_error(monkeypatch):
    import benchmarks.bench_scale as bench

    def refuse(cases, *, fresh_process_per_case=True, timeout_s=0.0):
        return [{"error": "ValueError: refused for the test", "seconds": 0.5} for _ in cases]

    monkeypatch.setattr(bench, "measure_cases", refuse)
    rows = bench_scale_families(families=["consensus"], graphs=["exponential"],
                                cases=[(64, 8), (128, 8)], S=2, d=2)
    assert [r.variant for r in rows] == ["consensus exponential N=64", "consensus exponential "
                                         "N=128"]
    for r in rows:
        assert r.ratio is None and r.agree is None and r.notes.startswith("refused: ValueError")


def test_a_failed_sharded_side_becomes_a_row(monkeypatch):
    import benchmarks.bench_scale_sharded as sharded

    def fail(specs, timeout_s):
        if specs[0]["mode"] == "process":
            raise RuntimeError("scale.sharded child failed (exit 1):\nno coordinator")
        out = specs[0]["out"]
        np.save(out, np.zeros((2, 8, 2), np.float32))
        return {"times_s": [0.5], "warm_s": 1.0, "build_s": 0.1, "device": "CPU",
                "devices": 2 if specs[0]["mode"] == "agents" else 1, "processes": 1}

    monkeypatch.setattr(sharded, "_launch", fail)
    agents, job = sharded.bench_scale_sharded(N=8, S=2, d=2, T=8)
    assert agents.agree and agents.max_abs_diff == 0.0 and agents.ratio == pytest.approx(1.0)
    assert job.ratio is None and job.agree is None and "no coordinator" not in job.notes
    assert job.notes.startswith("refused: scale.sharded child failed")
    with pytest.raises(ValueError, match="T >= 8"):
        sharded.bench_scale_sharded(N=8, S=2, d=2, T=4)
    assert 0 < sharded.free_port() < 65536


def test_full_is_the_default_size_and_excludes_quick(capsys):
    from benchmarks.__main__ import build_parser, main

    assert build_parser().parse_args(["--full"]).full
    assert main(["--full", "--list"]) == 0
    assert "scale.families" in capsys.readouterr().out.split()
    with pytest.raises(SystemExit) as exc:
        main(["--full", "--quick", "--list"])
    assert exc.value.code == 2


def test_sa_replay_follows_the_recursion_and_sees_a_planted_error():
    from benchmarks._scale_child import sa_replay_diff
    from benchmarks.bench_scale import SA_REPLAY_TOLERANCE

    rng = np.random.default_rng(0)
    P, d, S, R, alpha = 4, 3, 2, 12, 0.05
    A = -np.eye(d) + 0.1 * rng.standard_normal((P, d, d))
    b_mean = rng.standard_normal((P, d))
    chain = rng.integers(0, P, (S, R))
    means = np.zeros((S, R, d))
    means[:, 0] = rng.standard_normal((S, d))
    for t in range(R - 1):
        for s in range(S):
            x = chain[s, t]
            means[s, t + 1] = (np.eye(d) + alpha * A[x]) @ means[s, t] + alpha * b_mean[x]
    assert sa_replay_diff(A, b_mean, alpha, means, chain) < 1e-12
    planted = means.copy()
    planted[1, 7, 2] += 1e-2
    assert sa_replay_diff(A, b_mean, alpha, planted, chain) > SA_REPLAY_TOLERANCE
    # a chain path read one step late is another recursion
    assert sa_replay_diff(A, b_mean, alpha, means, np.roll(chain, 1, axis=1)) > \
        SA_REPLAY_TOLERANCE


def test_child_env_drops_a_forced_device_count_and_keeps_the_rest(monkeypatch):
    from benchmarks.harness import child_env

    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=7 --xla_other=1")
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    env = child_env()
    assert env["XLA_FLAGS"] == "--xla_other=1" and "JAX_PLATFORMS" not in env
    assert (Path(env["PYTHONPATH"].split(os.pathsep)[0]) / "benchmarks" / "harness.py").is_file()
    assert child_env(cpu_only=True)["JAX_PLATFORMS"] == "cpu"
