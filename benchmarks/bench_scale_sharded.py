"""Benchmark ``scale.sharded``: the agent axis split over devices and over processes (issue 26,
"Scale and speed", items 3 and 4), timed against one device.

Plain consensus of d float32 values per agent on ``exponential(N, sparse=True)`` (row weights),
S seeds, T steps, run three ways, each in fresh Pythons (``python -m
benchmarks._scale_sharded_child``):

* **one device** (the reference): one CPU device, ``run(...)`` with the default layout;
* **agents over D devices**: D CPU devices in one process, ``run(..., layout="agents")``;
* **a P-process job**: P processes on ``127.0.0.1`` joined by
  :func:`decentral.devices.initialize_distributed` (gloo collectives), each with one CPU device,
  ``run(..., layout="agents")`` called the same way in every process.

Each side compiles first (a short run), then times T steps; the ratio is the speed-up
``t(one device) / t(split)``. The split runs must give the one-device final state (every seed,
max |d| <= :data:`SHARDED_TOLERANCE`: float32, and XLA may fuse the split program's sums in
another order). On this 2-core machine one CPU device already keeps both cores busy, so the
speed-ups are measured, not targeted; on a machine with several accelerators the same rows
measure the real thing.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_scale import CHILD_MARKER, CHILD_TIMEOUT_S, n_text
from benchmarks.harness import BenchResult, child_env, ratio

__all__ = ["SHARDED_TOLERANCE", "free_port", "bench_scale_sharded"]

SHARDED_TOLERANCE = 1e-5
"""Max |split - one device| of the final float32 states."""

MODULE = "benchmarks._scale_sharded_child"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for the job's coordinator)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _launch(specs: list[dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    """Start one child per spec (all at once: the processes of one job), wait for all, and
    return process 0's result; raise RuntimeError with the failing child's stderr."""
    procs = [subprocess.Popen([sys.executable, "-m", MODULE, json.dumps(spec)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=child_env()) for spec in specs]
    deadline = time.monotonic() + timeout_s
    outs = []
    try:
        for proc in procs:
            outs.append(proc.communicate(timeout=max(deadline - time.monotonic(), 1.0)))
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"scale.sharded child ran past {timeout_s:.0f} s") from exc
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for proc, (_, err) in zip(procs, outs, strict=True):
        if proc.returncode != 0:
            raise RuntimeError(f"scale.sharded child failed (exit {proc.returncode}):\n"
                               f"{err[-4000:]}")
    lines = [ln for ln in outs[0][0].splitlines() if ln.startswith(CHILD_MARKER)]
    if not lines:
        raise RuntimeError(f"scale.sharded child printed no result:\n{outs[0][1][-4000:]}")
    return json.loads(lines[-1][len(CHILD_MARKER):])


def _side(mode: str, case: dict[str, Any], out: Path, *, devices: int, nproc: int,
          timeout_s: float) -> dict[str, Any]:
    """One side's result (``{"error": ...}`` when it failed), with its final state loaded."""
    start = time.perf_counter()
    spec = dict(case, mode=mode, devices=devices, out=str(out))
    try:
        if mode == "process":
            port = free_port()
            res = _launch([dict(spec, pid=p, nproc=nproc, port=port) for p in range(nproc)],
                          timeout_s)
        else:
            res = _launch([spec], timeout_s)
        res["x"] = np.load(out)
    except (RuntimeError, OSError, ValueError) as exc:
        return {"error": str(exc).splitlines()[0], "detail": str(exc)[-3000:],
                "seconds": time.perf_counter() - start}
    return res


def _row(label: str, size: dict[str, Any], res: dict[str, Any], ref: dict[str, Any], *,
         reference: str) -> BenchResult:
    if "error" in res or "error" in ref:
        bad = res if "error" in res else ref
        seconds = max(float(bad.get("seconds", 0.0)), 1e-9)
        return BenchResult(name="scale.sharded", variant=label, dtype="float32", size=size,
                           metric="time_s", value=seconds, reference=reference,
                           reference_value=None, ratio=None, times_s=[seconds], repeats=1,
                           notes=f"refused: {bad['error']}"[:2000],
                           extra={k: v for k, v in bad.items() if k != "error"},
                           reference_label="one device")
    med = float(np.median(res["times_s"]))
    ref_med = float(np.median(ref["times_s"]))
    diff = float(np.max(np.abs(res["x"].astype(np.float64) - ref["x"].astype(np.float64))))
    T, S, N = size["T"], size["S"], size["N"]
    return BenchResult(
        name="scale.sharded", variant=label, dtype="float32",
        size=dict(size, devices=res["devices"], processes=res["processes"]), metric="time_s",
        value=med, reference=reference, reference_value=ref_med, ratio=ratio(ref_med, med),
        compile_s=max(res["warm_s"] - med * 3 / T, 0.0),
        reference_compile_s=max(ref["warm_s"] - ref_med * 3 / T, 0.0),
        times_s=list(res["times_s"]), reference_times_s=list(ref["times_s"]),
        repeats=len(res["times_s"]), max_abs_diff=diff, agree=diff <= SHARDED_TOLERANCE,
        tolerance=SHARDED_TOLERANCE, prng_impl="threefry2x32", enable_x64=False,
        notes=f"speed-up {ref_med / med:.2f}x (measured, no target on CPU): {med / T * 1e3:.1f} "
              f"vs {ref_med / T * 1e3:.1f} ms/step, {S * N * T / med:.3g} agent-steps/s; "
              f"final states max|d| {diff:.1e}; {res['device']}",
        extra={k: v for k, v in res.items() if k != "x"},
        reference_label="one device")


def bench_scale_sharded(*, N: int, S: int, d: int, T: int, devices: int = 2, processes: int = 2,
                        repeats: int = 1, timeout_s: float = CHILD_TIMEOUT_S
                        ) -> list[BenchResult]:
    """The rows of ``scale.sharded`` (see the module docstring): the agents split over
    ``devices`` CPU devices of one process, and over a ``processes``-process job with one CPU
    device each, both against one device."""
    if int(T) < 8:
        raise ValueError(f"scale.sharded needs T >= 8 (the timed runs share the short run's "
                         f"program); got T={T}.")
    case = dict(N=int(N), S=int(S), d=int(d), T=int(T), repeats=int(repeats))
    size = dict(N=int(N), S=int(S), d=int(d), T=int(T), graph="exponential", backend="sparse")
    with tempfile.TemporaryDirectory(prefix="decentral-sharded-") as tmp:
        ref = _side("single", case, Path(tmp) / "single.npy", devices=1, nproc=1,
                    timeout_s=timeout_s)
        agents = _side("agents", case, Path(tmp) / "agents.npy", devices=devices, nproc=1,
                       timeout_s=timeout_s)
        job = _side("process", case, Path(tmp) / "process.npy", devices=1, nproc=processes,
                    timeout_s=timeout_s)
    one = "the same run on one CPU device (a fresh Python), default layout"
    return [
        _row(f"consensus exponential N={n_text(N)}: agents over {devices} devices", size, agents,
             ref, reference=one),
        _row(f"consensus exponential N={n_text(N)}: {processes}-process job (gloo, 1 device "
             f"each)", size, job, ref, reference=one),
    ]
