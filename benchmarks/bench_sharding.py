"""Benchmark ``runner.sharding``: the speed-up of sharding the seeds over every CPU core.

Measured: the consensus run of ``runner.overhead`` (default chunking; plain consensus on a
static dense graph, S seeds x N agents x T steps, float32) with the seeds sharded over one CPU
device per core. Reference: the same runner call with the seeds on 1 CPU device. Each side runs
in a fresh Python (``python -m benchmarks._sharding_child``), since the device count is fixed
when JAX starts; ``ratio`` is the speed-up ``t(1 device) / t(all devices)`` and both sides must
give the same final states.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import jax
import numpy as np

from benchmarks.consensus_workload import (
    CONSENSUS_PARAMS,
    TOLERANCES,
    consensus_algorithm,
    dense_static_graph,
    record_interval,
    runner_call,
)
from benchmarks.harness import (
    BenchResult,
    child_env,
    device_summary,
    max_abs_diff,
    measure,
    prng_impl,
    ratio,
    x64_for,
)
from decentral.devices import cpu_core_count
from decentral.graphs import static

__all__ = ["CHILD_MARKER", "sharded_run", "run_child", "bench_sharding"]

CHILD_MARKER = "BENCHMARK-CHILD-RESULT "
"""Prefix of the line a ``benchmarks._sharding_child`` process prints its JSON result on."""


def sharded_run(*, S: int, N: int, T: int, n_records: int, edge_prob: float = 0.5,
                dtype: str = "float32", repeats: int = 5) -> dict[str, Any]:
    """One side of ``runner.sharding``, run inside the child process: the consensus run of
    :func:`benchmarks.bench_runner_overhead.bench_runner_overhead` (default chunking) with the
    seeds sharded over every CPU device of this process. Returns JSON-ready timings, the device
    count and the final states.
    """
    record_every = record_interval(T, n_records)
    cpus = jax.devices("cpu")
    with x64_for(dtype):
        alg = consensus_algorithm(static(dense_static_graph(N, edge_prob)), dtype)
        timing, res = measure(runner_call(alg, CONSENSUS_PARAMS, np.arange(S), T, record_every,
                                          devices=cpus), repeats)
        impl, x64 = prng_impl(), bool(jax.config.jax_enable_x64)
    return {"devices": len(cpus), "device": device_summary(), "median_s": timing.median_s,
            "times_s": timing.times_s, "first_s": timing.first_s, "compile_s": timing.compile_s,
            "prng_impl": impl, "enable_x64": x64,
            "final_x": np.asarray(res.final_state.x, np.float64).tolist()}


def run_child(device_count: int, kwargs: dict[str, Any], timeout_s: float = 900.0
              ) -> dict[str, Any]:
    """Run :func:`sharded_run` in a fresh Python with ``device_count`` CPU devices
    (``python -m benchmarks._sharding_child``) and return its result.

    Raises:
        RuntimeError: the child failed or printed no result (its stderr is in the message).
    """
    arg = json.dumps({"device_count": int(device_count), "kwargs": kwargs})
    proc = subprocess.run([sys.executable, "-m", "benchmarks._sharding_child", arg],
                          capture_output=True, text=True, timeout=timeout_s,
                          env=child_env(cpu_only=True), check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(CHILD_MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"benchmark child with {device_count} CPU device(s) failed (exit "
                           f"{proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(lines[-1][len(CHILD_MARKER):])


def bench_sharding(*, S: int, N: int, T: int, n_records: int, edge_prob: float = 0.5,
                   dtype: str = "float32", repeats: int = 5) -> list[BenchResult]:
    """Seeds sharded over 1 CPU device vs one per core: the run of :func:`sharded_run`, each
    side in its own Python (:func:`run_child`), the device count set by
    :func:`decentral.devices.use_all_cpu_cores` before JAX starts. ``ratio`` is the speed-up
    ``t(1 device) / t(all devices)``; both sides must give the same final states. With a single
    core there is nothing to compare: one child, ratio 1, and the row says so.
    """
    cores = cpu_core_count()
    kwargs = dict(S=S, N=N, T=T, n_records=n_records, edge_prob=edge_prob, dtype=dtype,
                  repeats=repeats)
    one = run_child(1, kwargs)
    many = run_child(cores, kwargs) if cores > 1 else one
    diff = max_abs_diff([(np.asarray(many["final_x"]), np.asarray(one["final_x"]))])
    tol = TOLERANCES[dtype]
    k = int(many["devices"])
    speedup = one["median_s"] / many["median_s"]
    if cores > 1:
        notes = (f"speed-up {speedup:.2f}x with seeds over {k} CPU devices ({cores} cores); "
                 f"each side in a fresh Python")
    else:
        notes = "1 core available: no speed-up to measure (both columns are the same run)"
    return [BenchResult(
        name="runner.sharding", variant=f"{k} devices vs 1 device", dtype=dtype,
        size=dict(S=S, N=N, T=T, record_every=T // n_records, backend="dense",
                  devices=f"1 vs {k}", graph=f"static ER(p={edge_prob})"),
        metric="time_s", value=many["median_s"],
        reference="the same runner call with the seeds on 1 CPU device (another fresh Python)",
        reference_value=one["median_s"], ratio=ratio(one["median_s"], many["median_s"]),
        compile_s=many["compile_s"], reference_compile_s=one["compile_s"],
        times_s=many["times_s"], reference_times_s=one["times_s"], repeats=repeats,
        max_abs_diff=diff, agree=bool(diff <= tol), tolerance=tol, prng_impl=many["prng_impl"],
        enable_x64=bool(many["enable_x64"]), notes=notes,
        extra=dict(speedup=speedup, cores=cores, devices=k, device=many["device"],
                   one_device=one["device"]),
        reference_label="same run, 1 device",
    )]
