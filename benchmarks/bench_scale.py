"""Benchmarks ``scale.*``: speed and peak memory of the sparse backend up to 10^6 agents (issue 26,
"Scale and speed").

Every case runs in a fresh Python (``python -m benchmarks._scale_child``, one process per case
at the default sizes), so its peak resident set size (RSS) is its own: **peak memory** is the
peak RSS of the process while the case runs (graph and tables, the factory, compilation, the
runs) minus the RSS after importing JAX and ``decentral`` and starting the backend (the
baseline). All runs are float32 on the sparse backend with 8 seeds by default, on one CPU
device (:data:`DEVICES`: XLA spreads each large step over the cores itself).

* ``scale.families``: plain consensus (:func:`decentral.consensus.consensus`, row weights) and
  push-sum (:func:`decentral.push_sum.push_sum`, column weights) with d values per agent on
  ``exponential(N, sparse=True)`` and ``random_regular(N, 8, seed=0, sparse=True)`` as static
  sequences, at N = 10^3, 10^4, 10^5 (T = 10^3) and 10^6 (T = 50). Per size two rows:
  the timed run (agent-steps per second in the notes) against ``scipy.sparse`` CSR matmuls
  ``W @ X`` of the same float32 numbers (``X = [N, S*d]``, one thread; timed over the check
  steps and scaled to T), and the peak memory against the state + table bytes (the run's final
  state and the device table ``idx`` int32, ``weight`` float32, ``mask`` bool; target at
  10^6: peak <= 4 x that). Per family and graph, the graph + neighbour-table construction time
  at the largest N (target <= 10 s at 10^6) and the exponent b of time per step ~ edges^b,
  least squares on log-log over every size (target b <= 1.15). Last, the largest N whose
  consensus on the exponential graph would fit in this machine's memory: an **estimate** from
  the measured peak, never run.
* ``scale.horizon``: plain consensus at N = 100 recording every 10^3 steps: the peak at
  T = 10^6 against the peak at T = 10^5, recording the agents' mean (target: within 10 %) and
  the whole state (no target: 10x the records by design; the row says how much the peak grew
  per record byte).
* ``scale.dec_ucb``: Dec_UCB (:func:`decentral.bandits.dec_ucb`, Theorem 1) at N = 10^5 on the
  exponential graph, M = 10 arms, a short horizon, against plain consensus of the same
  ``[N, M]`` values on the same graph; and its peak memory.
* ``scale.wmsr``: W-MSR resilient consensus (:func:`decentral.resilient_ac.resilient_consensus`)
  at N = 10^6 on ``random_regular(N, 8)`` with agent 0 Byzantine, against plain consensus on
  the same graph; and its peak memory. The factory is called first as a user calls it (the
  hypotheses checked); if that refuses, a row says so with the message and the run uses
  ``check=False``.
* ``scale.consensus_sa``: consensus SA (:func:`decentral.consensus_sa.consensus_sa`,
  distributed TD(0) on a random MRP of a few states) at N = 10^6 on the exponential graph,
  against plain consensus of the same ``[N, d]`` values on the same graph; and its peak memory
  against state + table + the problem's tables.

**Agreement.** Consensus and push-sum: the final state of the check run (compilation plus
``check_steps`` steps, the timed run's compiled program) equals the scipy reference from the
same initial draws (every seed, max |d| <= 1e-4), and the timed run keeps its invariants (the
agents' mean of x under doubly stochastic row weights on these regular graphs; the means of x
and of y = 1 under column weights); construction rows: the table has the graph's width and its
row (column) sums are 1. Dec_UCB: every agent has made exactly M + T pulls. W-MSR: the
cooperative values stay within the range of the cooperative initial values (W-MSR's safety
with at most H Byzantine in-neighbours) and their spread does not grow. Consensus SA: over a
check run recorded step by step, the agents' mean of theta follows the centralized recursion
``mean_{t+1} = mean_t (I + alpha A(X_t))^T + alpha mean_i b_i(X_t)`` (the graph is doubly
stochastic), replayed in float64 along the recorded chain path.

The measuring tools live here (the child imports them): :class:`PeakMeter` (the peak RSS of
each phase, reset between phases through ``/proc/self/clear_refs``), :class:`CompileWatch`
(seconds of XLA compilation during a block: a timed run must show none) and
:func:`short_record_points` (a short run that compiles the timed runs' program).

A case that raises (or a child that dies) becomes a row saying so (``refused: ...``, no ratio,
``agree`` None) instead of stopping the benchmark. Timings on a shared machine are noisy: the
README gives the conditions of each measurement.
"""

from __future__ import annotations

import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from benchmarks.harness import BenchResult, child_env, ratio
from decentral.devices import cpu_core_count

__all__ = [
    "CHILD_MARKER",
    "CHECK_TOLERANCE",
    "INVARIANT_TOLERANCE",
    "TABLE_TOLERANCE",
    "rss_bytes",
    "peak_rss_bytes",
    "reset_peak_rss",
    "PeakMeter",
    "CompileWatch",
    "short_record_points",
    "run_child",
    "measure_cases",
    "fit_exponent",
    "n_text",
    "largest_n_estimate",
    "bench_scale_families",
    "bench_scale_horizon",
    "bench_scale_dec_ucb",
    "bench_scale_wmsr",
    "bench_scale_sa",
    "SA_REPLAY_TOLERANCE",
]

CHILD_MARKER = "SCALE-CHILD-RESULT "
"""Prefix of the line a ``benchmarks._scale_child`` process prints its JSON result on."""

CHECK_TOLERANCE = 1e-4
"""Max |decentral - scipy| after the check steps (both float32)."""

INVARIANT_TOLERANCE = 1e-4
"""Max drift of an invariant mean (float32 sums over up to 10^6 agents, T steps)."""

TABLE_TOLERANCE = 1e-5
"""Max |row (column) sum - 1| of a float32 table."""

CHILD_TIMEOUT_S = 1800.0
"""Seconds one child process may run before it counts as failed."""

DEVICES = 1
"""CPU devices of the child processes: one, JAX's default. XLA's CPU backend spreads each large
fused loop of one device over the cores itself; emulated CPU devices share those cores and
the memory, and each holds its own copy of the neighbour table, so splitting seeds over them
does not pay for these gather-bound steps (the row ``scale.families`` "seeds over 2 CPU
devices" measures it; ``scale.sharded`` measures splitting agents)."""


# ---- measuring tools (used in the child) ------------------------------------------------------

STATUS = Path("/proc/self/status")


def _status_bytes(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` in bytes (None where there is no such file)."""
    try:
        text = STATUS.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return None


def _maxrss_bytes() -> int:
    scale = 1 if sys.platform == "darwin" else 1024        # bytes on macOS, KiB elsewhere
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * scale


def rss_bytes() -> int:
    """The resident set size now (``VmRSS``; the peak so far where /proc is missing)."""
    now = _status_bytes("VmRSS")
    return _maxrss_bytes() if now is None else now


def peak_rss_bytes() -> int:
    """The peak resident set size since the last :func:`reset_peak_rss` (``VmHWM``)."""
    peak = _status_bytes("VmHWM")
    return _maxrss_bytes() if peak is None else peak


def reset_peak_rss() -> bool:
    """Reset the peak RSS to the RSS now (``5 > /proc/self/clear_refs``); False where the
    kernel does not allow it (the peak then stays the process's)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


class PeakMeter:
    """Peak RSS of each phase of one case, in bytes above the process baseline."""

    def __init__(self, baseline: int):
        self.baseline = int(baseline)
        self.phases: dict[str, int] = {}
        self.after: dict[str, int] = {}
        self.resets = reset_peak_rss()

    def mark(self, phase: str) -> None:
        """Close ``phase``: its peak is the peak since the previous mark (or the start); the RSS
        left when it ends is what it retained (both above the baseline)."""
        self.phases[phase] = peak_rss_bytes() - self.baseline
        self.after[phase] = rss_bytes() - self.baseline
        self.resets = reset_peak_rss() and self.resets

    def peak(self) -> int:
        """The case's peak: the largest phase peak."""
        return max(self.phases.values(), default=0)

    def report(self) -> dict[str, Any]:
        """JSON-ready peaks: the case's, each phase's, and whether the peaks were reset."""
        return {"peak_bytes": self.peak(), "phase_peak_bytes": dict(self.phases),
                "phase_end_bytes": dict(self.after), "peak_reset": self.resets}


COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
"""The ``jax.monitoring`` event XLA compilations report their duration under."""


_compile_seconds = [0.0]
_listening = [False]


def _count_compile(event: str, duration: float, **kwargs: Any) -> None:
    if event == COMPILE_EVENT:
        _compile_seconds[0] += float(duration)


class CompileWatch:
    """Seconds spent in XLA compilations while the ``with`` block runs (a timed run that
    compiles is not the compiled program's speed: the rows say so). The first watch
    registers a ``jax.monitoring`` listener for the rest of the process."""

    def __enter__(self) -> CompileWatch:
        if not _listening[0]:
            jax.monitoring.register_event_duration_secs_listener(_count_compile)
            _listening[0] = True
        self.seconds = 0.0
        self._start = _compile_seconds[0]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = _compile_seconds[0] - self._start


def short_record_points(steps: int) -> list[int]:
    """Record points of a short run that compiles to the timed runs' program: the runner lays
    out an end-only grid ``[0, T]`` with ``T >= 8`` and any irregular grid the same way (one
    padded record buffer), so a short run records at ``[0, 1, steps]`` (``steps >= 3``, an
    irregular grid) and costs compilation plus ``steps`` steps. Whether the timed runs
    compiled anyway is measured (:class:`CompileWatch`)."""
    if steps < 3:
        raise ValueError(f"a short run needs at least 3 steps; got {steps}.")
    return [0, 1, int(steps)]



# ---- child processes --------------------------------------------------------------------------

def run_child(cases: Sequence[dict[str, Any]], *, timeout_s: float = CHILD_TIMEOUT_S,
              devices: int | None = DEVICES) -> dict[str, Any]:
    """Run ``cases`` in one fresh Python (``python -m benchmarks._scale_child`` with ``devices``
    CPU devices; None: one per core) and return its result: the device, the baseline RSS and
    one result per case.

    Raises:
        RuntimeError: the child failed, timed out or printed no result (its stderr is in the
            message).
    """
    arg = json.dumps({"device_count": devices, "cases": list(cases)})
    try:
        proc = subprocess.run([sys.executable, "-m", "benchmarks._scale_child", arg],
                              capture_output=True, text=True, timeout=timeout_s,
                              env=child_env(), check=False)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"scale benchmark child ran past {timeout_s:.0f} s") from exc
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(CHILD_MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"scale benchmark child failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-4000:]}")
    return json.loads(lines[-1][len(CHILD_MARKER):])


def measure_cases(cases: Sequence[dict[str, Any]], *, fresh_process_per_case: bool = True,
                  timeout_s: float = CHILD_TIMEOUT_S, devices: int | None = DEVICES
                  ) -> list[dict[str, Any]]:
    """Every case's result, in order, each with its child's ``device``, ``devices``,
    ``baseline_rss_bytes`` and ``prng_impl``: one child per case, or all cases in one child. A
    child that fails gives each of its cases ``{"error": ...}``."""
    groups = [[c] for c in cases] if fresh_process_per_case else [list(cases)]
    out: list[dict[str, Any]] = []
    for group in groups:
        start = time.perf_counter()
        try:
            child = run_child(group, timeout_s=timeout_s, devices=devices)
        except RuntimeError as exc:
            seconds = time.perf_counter() - start
            out.extend({"error": str(exc).splitlines()[0], "detail": str(exc)[-3000:],
                        "seconds": seconds} for _ in group)
            continue
        for result in child["cases"]:
            result.update(device=child["device"], devices=child["devices"],
                          baseline_rss_bytes=child["baseline_rss_bytes"],
                          prng_impl=child["prng_impl"])
            out.append(result)
    return out


# ---- derived numbers --------------------------------------------------------------------------

def fit_exponent(edges: Sequence[float], seconds: Sequence[float]) -> tuple[float, float]:
    """Least squares of ``log t = a + b log E``; returns ``(b, a)``.

    Example:
        >>> b, a = fit_exponent([1e3, 1e4, 1e5], [1e-3, 1e-2, 1e-1])
        >>> round(b, 6)
        1.0
    """
    b, a = np.polyfit(np.log(np.asarray(edges, float)), np.log(np.asarray(seconds, float)), 1)
    return float(b), float(a)


def _exponential_width(n: int) -> int:
    return 1 + (int(n) - 1).bit_length()


def largest_n_estimate(*, factor: float, usable_bytes: float, S: int, d: int,
                       itemsize: int = 4, table_entry_bytes: int = 9) -> int:
    """The largest N with ``factor * (state + table)`` bytes within ``usable_bytes`` for consensus
    on the exponential graph: state ``S * N * d * itemsize``, table ``N * K(N) *
    table_entry_bytes`` with ``K(N) = 1 + ceil(log2 N)`` (bisection over N).

    Example:
        >>> largest_n_estimate(factor=1.0, usable_bytes=1e9, S=1, d=1)  # 220 bytes per agent
        4545454
    """
    def need(n: int) -> float:
        return factor * n * (S * d * itemsize + _exponential_width(n) * table_entry_bytes)

    lo, hi = 1, 2
    while need(hi) <= usable_bytes:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if need(mid) <= usable_bytes else (lo, mid)
    return lo


def _machine_bytes() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def n_text(n: int) -> str:
    """An agent count for a variant: ``1e6`` for a power of ten, the number otherwise.

    Example:
        >>> n_text(1_000_000), n_text(256)
        ('1e6', '256')
    """
    n = int(n)
    k = len(str(n)) - 1
    return f"1e{k}" if n >= 10 and n == 10**k else str(n)


def _compiled_text(res: dict[str, Any]) -> str:
    seconds = float(res.get("timed_compile_s") or 0.0)
    return f"; the timed run COMPILED for {seconds:.2f} s" if seconds > 0 else ""


def _mib(x: float) -> str:
    return f"{x / 2**20:.1f} MiB"


def _per_step(seconds: float, steps: int) -> str:
    per = seconds / max(int(steps), 1)
    return f"{per * 1e3:.2f} ms/step" if per >= 1e-3 else f"{per * 1e6:.1f} us/step"


def _refusal_row(name: str, variant: str, size: dict[str, Any], result: dict[str, Any],
                 what: str = "refused") -> BenchResult:
    """A row saying a case did not run (its message), with no ratio and nothing compared."""
    seconds = max(float(result.get("seconds", 0.0)), 1e-9)
    return BenchResult(
        name=name, variant=variant, dtype="float32", size=size, metric="time_s", value=seconds,
        reference="none: the case did not run", reference_value=None, ratio=None,
        compile_s=0.0, times_s=[seconds], repeats=1,
        notes=f"{what}: {result.get('error', '')}"[:2000],
        extra={k: v for k, v in result.items() if k != "error"},
        reference_label="-")


def _require_horizon(T: int, short: int) -> None:
    """The timed runs record at ``[0, T]``: ``T >= 8`` shares the short run's compiled program
    (see :func:`benchmarks._scale_child.short_record_points`)."""
    if int(T) < 8 or int(short) < 3:
        raise ValueError(f"scale benchmarks need T >= 8 and a short run of >= 3 steps (one "
                         f"compiled program for both); got T={T}, short run {short}.")


def _compile_s(first_s: float, steps: int, times_s: Sequence[float], T: int) -> float:
    """The first (short) call minus what its steps cost at the timed rate."""
    per = statistics.median(times_s) / T
    return max(first_s - steps * per, 0.0)


# ---- scale.families ---------------------------------------------------------------------------

def _family_rows(spec: dict[str, Any], res: dict[str, Any], *, target_N: int,
                 memory_factor: float) -> list[BenchResult]:
    family, graph, N, T, S, d = (spec[k] for k in ("family", "graph", "N", "T", "S", "d"))
    label = f"{family} {graph} N={n_text(N)}"
    size = dict(S=S, N=N, T=T, d=d, graph=graph, backend="sparse")
    if "error" in res:
        return [_refusal_row("scale.families", label, size, res)]
    size.update(K=res["width"], edges=res["edges"], devices=res["devices"])
    med = statistics.median(res["times_s"])
    ref_step = statistics.median(res["reference_step_times_s"])
    agent_steps = S * N * T / med
    diff = max(res["check_diff"], res["invariant_diff"])
    agree = res["check_diff"] <= CHECK_TOLERANCE and res["invariant_diff"] <= INVARIANT_TOLERANCE
    bound = res["state_bytes"] + res["table_bytes"]
    phases = ", ".join(f"{k} {_mib(v)}" for k, v in res["phase_peak_bytes"].items())
    common = dict(dtype="float32", size=size, repeats=len(res["times_s"]), max_abs_diff=diff,
                  agree=agree, tolerance=CHECK_TOLERANCE, prng_impl=res["prng_impl"],
                  enable_x64=False)
    extra = {k: v for k, v in res.items() if k not in ("device",)}
    extra.update(device=res["device"], agent_steps_per_s=agent_steps, seconds_per_step=med / T,
                 reference_seconds_per_step=ref_step)
    time_row = BenchResult(
        name="scale.families", variant=f"{label} T={T}", metric="time_s", value=med,
        reference=f"scipy.sparse CSR matmul W @ X of the same float32 numbers, X = [N, S*d"
                  f"{' + S' if family == 'push_sum' else ''}] (one thread), timed over "
                  f"{len(res['reference_step_times_s'])} steps and scaled to T={T}",
        reference_value=ref_step * T, ratio=ratio(ref_step * T, med),
        compile_s=_compile_s(res["check_s"], len(res["reference_step_times_s"]),
                             res["times_s"], T),
        times_s=list(res["times_s"]),
        notes=f"{agent_steps:.3g} agent-steps/s ({_per_step(med, T)}); check vs scipy max|d| "
              f"{res['check_diff']:.1e}, invariant drift {res['invariant_diff']:.1e}; "
              f"construction {res['build_s']:.2f} s, factory {res['factory_s']:.2f} s"
              f"{_compiled_text(res)}",
        extra=extra, reference_label="scipy CSR matmul", **common)
    mem_row = BenchResult(
        name="scale.families", variant=f"{label} peak memory", metric="bytes",
        value=float(res["peak_bytes"]),
        reference="the run's state (final state, every seed) + the device neighbour table "
                  "(idx int32, weight float32, mask bool)",
        reference_value=float(bound), ratio=ratio(bound, res["peak_bytes"]),
        target_ratio=1.0 / memory_factor if N >= target_N else None,
        notes=f"peak {_mib(res['peak_bytes'])} above the baseline "
              f"({_mib(res['baseline_rss_bytes'])}) = {res['peak_bytes'] / bound:.2f} x "
              f"(state {_mib(res['state_bytes'])} + table {_mib(res['table_bytes'])}); "
              f"phases: {phases}; host table {_mib(res['host_table_bytes'])}",
        extra=extra, reference_label="state + table", **common)
    return [time_row, mem_row]


def _construction_row(spec: dict[str, Any], res: dict[str, Any], *, target_N: int,
                      build_target_s: float) -> BenchResult:
    family, graph, N = spec["family"], spec["graph"], spec["N"]
    diff = max(float(abs(res["width"] - res["expected_width"])), res["table_diff"])
    agree = res["width"] == res["expected_width"] and res["table_diff"] <= TABLE_TOLERANCE
    rule = "row" if family == "consensus" else "column"
    return BenchResult(
        name="scale.families", variant=f"{family} {graph} N={n_text(N)} construction",
        dtype="float32", size=dict(N=N, graph=graph, rule=rule, K=res["width"],
                                   edges=res["edges"]),
        metric="time_s", value=res["build_s"],
        reference=f"the target: graph + neighbour tables within {build_target_s:g} s at "
                  f"N = {n_text(target_N)}",
        reference_value=build_target_s, ratio=ratio(build_target_s, res["build_s"]),
        target_ratio=1.0 if N >= target_N else None, compile_s=0.0, times_s=[res["build_s"]],
        repeats=1, max_abs_diff=diff, agree=agree, tolerance=TABLE_TOLERANCE,
        prng_impl=res["prng_impl"], enable_x64=False,
        notes=f"graph {res['graph_s']:.2f} s + static(rule={rule!r}) tables "
              f"{res['build_s'] - res['graph_s']:.2f} s; table K={res['width']} (expected "
              f"{res['expected_width']}), max |sum - 1| {res['table_diff']:.1e}; the factory "
              f"(stochasticity check) {res['factory_s']:.2f} s more",
        extra=dict(graph_s=res["graph_s"], build_s=res["build_s"],
                   factory_s=res["factory_s"]),
        reference_label=f"target {build_target_s:g} s")


def _exponent_row(family: str, graph: str, points: list[tuple[dict, dict]], *,
                  exponent_target: float) -> BenchResult:
    edges = [float(r["entries"]) for _, r in points]
    per_step = [statistics.median(r["times_s"]) / s["T"] for s, r in points]
    b, a = fit_exponent(edges, per_step)
    e_min, e_max = min(edges), max(edges)
    fitted_max = math.exp(a + b * math.log(e_max))
    bound = math.exp(a + b * math.log(e_min)) * (e_max / e_min) ** exponent_target
    agree = all(_family_agree(r) for _, r in points)
    diff = max(max(r["check_diff"], r["invariant_diff"]) for _, r in points)
    sizes = [s["N"] for s, _ in points]
    return BenchResult(
        name="scale.families", variant=f"{family} {graph} time/step ~ edges^b",
        dtype="float32", size=dict(N=sizes, entries=[int(e) for e in edges], graph=graph),
        metric="time_s", value=fitted_max,
        reference=f"the fitted line's time per step at the most edges if b were "
                  f"{exponent_target:g} (the same line's value at the fewest edges times "
                  f"(E_max / E_min)^{exponent_target:g}); ratio >= 1 iff b <= "
                  f"{exponent_target:g}",
        reference_value=bound, ratio=ratio(bound, fitted_max), target_ratio=1.0,
        compile_s=0.0, times_s=[fitted_max], repeats=1, max_abs_diff=diff, agree=agree,
        tolerance=CHECK_TOLERANCE, prng_impl=points[-1][1]["prng_impl"], enable_x64=False,
        notes=f"b = {b:.3f} (least squares of log time per step on log table entries, self "
              f"included, over N = {', '.join(n_text(n) for n in sizes)}; target b <= "
              f"{exponent_target:g}); per step: "
              + ", ".join(_per_step(t, 1) for t in per_step),
        extra=dict(exponent=b, intercept=a, entries=edges, seconds_per_step=per_step),
        reference_label=f"exponent {exponent_target:g}")


def _family_agree(res: dict[str, Any]) -> bool:
    return res["check_diff"] <= CHECK_TOLERANCE and res["invariant_diff"] <= INVARIANT_TOLERANCE


def _largest_n_row(spec: dict[str, Any], res: dict[str, Any]) -> BenchResult | None:
    machine = _machine_bytes()
    if machine is None:
        return None
    S, d, N = spec["S"], spec["d"], spec["N"]
    factor = res["peak_bytes"] / (res["state_bytes"] + res["table_bytes"])
    usable = machine - res["baseline_rss_bytes"]
    n_max = largest_n_estimate(factor=factor, usable_bytes=usable, S=S, d=d)
    need = factor * n_max * (S * d * 4 + _exponential_width(n_max) * 9)
    return BenchResult(
        name="scale.families", variant=f"consensus exponential largest N ~ {n_max:.2e} "
                                       f"(estimate)",
        dtype="float32", size=dict(S=S, d=d, N_measured=N, N_estimate=n_max),
        metric="bytes", value=float(need),
        reference="this machine's memory (os.sysconf) minus the child's baseline RSS, shared "
                  "with everything else running",
        reference_value=float(usable), ratio=ratio(usable, need),
        max_abs_diff=max(res["check_diff"], res["invariant_diff"]),
        agree=_family_agree(res), tolerance=CHECK_TOLERANCE, prng_impl=res["prng_impl"],
        enable_x64=False,
        notes=f"an ESTIMATE, not run: peak = {factor:.2f} x (state + table) as measured at "
              f"N = {n_text(N)}, the table width growing as 1 + ceil(log2 N) "
              f"(K = {_exponential_width(n_max)} at the estimate), S = {S}, d = {d}; agree: "
              f"the measured run's check",
        extra=dict(factor=factor, usable_bytes=usable, machine_bytes=machine,
                   n_estimate=n_max),
        reference_label="machine memory")


def bench_scale_families(*, families: Sequence[str], graphs: Sequence[str],
                         cases: Sequence[Sequence[int]], S: int, d: int, degree: int = 8,
                         check_steps: int = 3, target_N: int = 1_000_000,
                         build_target_s: float = 10.0, memory_factor: float = 4.0,
                         exponent_target: float = 1.15, fresh_process_per_case: bool = True,
                         repeats: int = 1, split_devices: int = 2) -> list[BenchResult]:
    """Consensus and push-sum at every ``(N, T)`` of ``cases`` on every graph: the timed run
    and the peak memory per size, the construction time and the exponent of time per step vs
    edges per family and graph, the largest-N estimate (see the module docstring). With
    ``fresh_process_per_case=False`` every case shares one child (the ``tiny`` sizes: fast, but
    a later case's peak includes what earlier ones left). With ``split_devices > 1`` (and as
    many cores), the largest consensus case on the exponential graph runs once more with its
    seeds split over that many CPU devices: one more row, against one device."""
    for _, T in cases:
        _require_horizon(T, check_steps)
    specs = [dict(kind="family", family=f, graph=gr, N=int(N), T=int(T), S=S, d=d,
                  degree=degree, graph_seed=0, check_steps=check_steps, repeats=repeats)
             for f in families for gr in graphs for N, T in cases]
    results = measure_cases(specs, fresh_process_per_case=fresh_process_per_case)
    rows: list[BenchResult] = []
    for f in families:
        for gr in graphs:
            points = [(s, r) for s, r in zip(specs, results, strict=True)
                      if s["family"] == f and s["graph"] == gr]
            for s, r in points:
                rows.extend(_family_rows(s, r, target_N=target_N, memory_factor=memory_factor))
            done = [(s, r) for s, r in points if "error" not in r]
            if done:
                s, r = max(done, key=lambda p: p[0]["N"])
                rows.append(_construction_row(s, r, target_N=target_N,
                                              build_target_s=build_target_s))
            if len(done) >= 2:
                rows.append(_exponent_row(f, gr, done, exponent_target=exponent_target))
    done = [(s, r) for s, r in zip(specs, results, strict=True) if "error" not in r
            and s["family"] == "consensus" and s["graph"] == "exponential"]
    if done:
        row = _largest_n_row(*max(done, key=lambda p: p[0]["N"]))
        if row is not None:
            rows.append(row)
    if split_devices > 1 and cpu_core_count() >= split_devices and done:
        spec, one = max(done, key=lambda p: p[0]["N"])
        split = measure_cases([spec], devices=split_devices)[0]
        rows.append(_split_row(spec, one, split))
    return rows


def _split_row(spec: dict[str, Any], one: dict[str, Any], split: dict[str, Any]
               ) -> BenchResult:
    """The largest consensus case again with its seeds split over several CPU devices (the
    runner's default with that many devices), against the same case on one device."""
    N, T, S, d = spec["N"], spec["T"], spec["S"], spec["d"]
    label = f"consensus exponential N={n_text(N)} seeds over {split.get('devices', '?')} CPU " \
            "devices"
    size = dict(S=S, N=N, T=T, d=d, graph="exponential", backend="sparse")
    if "error" in split:
        return _refusal_row("scale.families", label, size, split)
    t_one, t_split = statistics.median(one["times_s"]), statistics.median(split["times_s"])
    bound = split["state_bytes"] + split["table_bytes"]
    diff = float(max(split["check_diff"], split["invariant_diff"]))
    return BenchResult(
        name="scale.families", variant=label, dtype="float32",
        size=dict(size, devices=split["devices"]), metric="time_s", value=t_split,
        reference="the same case on one CPU device (this benchmark's other rows)",
        reference_value=t_one, ratio=ratio(t_one, t_split), compile_s=0.0,
        times_s=list(split["times_s"]), repeats=len(split["times_s"]), max_abs_diff=diff,
        agree=_family_agree(split), tolerance=CHECK_TOLERANCE,
        prng_impl=split["prng_impl"], enable_x64=False,
        notes=f"{_per_step(t_split, T)} split vs {_per_step(t_one, T)} on one device; peak "
              f"{_mib(split['peak_bytes'])} = {split['peak_bytes'] / bound:.2f} x (state + "
              f"table) split vs {_mib(one['peak_bytes'])} = "
              f"{one['peak_bytes'] / bound:.2f} x on one device (each device holds the table)",
        extra=dict(one_device=one["times_s"], split=split["times_s"],
                   split_peak_bytes=split["peak_bytes"], one_peak_bytes=one["peak_bytes"],
                   devices=split["devices"]),
        reference_label="one CPU device")


# ---- scale.horizon ---------------------------------------------------------------------

RECORD_WORDS = {"mean": "the agents' mean", "state": "the whole state"}
"""What ``scale.horizon`` records, in words."""


def bench_scale_horizon(*, N: int, S: int, d: int, horizons: Sequence[int], record_every: int,
                        records: Sequence[str] = ("mean", "state"), tolerance: float = 0.10,
                        fresh_process_per_case: bool = True, repeats: int = 1
                        ) -> list[BenchResult]:
    """Peak memory of plain consensus at N agents recording every ``record_every`` steps, for
    each horizon T and each kind of record, against the peak at the first T with the same
    records. Recording the agents' mean (a few bytes per record) isolates the runner: its peak
    must stay within ``tolerance`` (relative). Recording the whole state adds ``T /
    record_every`` states by design; those rows have no target and say how many bytes the
    peak grew per record byte. Each T runs once, compilation included (``repeats`` is not
    used)."""
    del repeats
    specs = [dict(kind="horizon", N=N, S=S, d=d, T=int(T), record_every=record_every,
                  record=rec) for rec in records for T in horizons]
    results = measure_cases(specs, fresh_process_per_case=fresh_process_per_case)
    rows = []
    for spec, res in zip(specs, results, strict=True):
        T, rec = spec["T"], spec["record"]
        base = next(r for s, r in zip(specs, results, strict=True)
                    if s["record"] == rec and s["T"] == horizons[0])
        size = dict(S=S, N=N, d=d, T=T, record_every=record_every, records=rec,
                    graph="exponential", backend="sparse")
        label = f"N={N} T={n_text(T)} records: {RECORD_WORDS[rec]}"
        if "error" in res or "error" in base:
            rows.append(_refusal_row("scale.horizon", label, size,
                                     res if "error" in res else base))
            continue
        want = res["records"] * res["per_record_bytes"]
        agree = res["invariant_diff"] <= INVARIANT_TOLERANCE and res["record_bytes"] == want
        first = T == horizons[0]
        grew = res["peak_bytes"] - base["peak_bytes"]
        more = res["record_bytes"] - base["record_bytes"]
        growth = "" if first else f"; the peak grew {_mib(grew)} for {_mib(more)} more records"
        if more >= 2**20:
            growth += f" ({grew / more:.1f} x the extra record bytes)"
        rows.append(BenchResult(
            name="scale.horizon", variant=label, dtype="float32", size=size,
            metric="bytes", value=float(res["peak_bytes"]),
            reference=f"the peak of the same run at T={horizons[0]} (another fresh Python)",
            reference_value=float(base["peak_bytes"]),
            ratio=ratio(base["peak_bytes"], res["peak_bytes"]),
            target_ratio=None if first or rec != "mean" else 1.0 / (1.0 + tolerance),
            max_abs_diff=res["invariant_diff"], agree=agree, tolerance=INVARIANT_TOLERANCE,
            prng_impl=res["prng_impl"], enable_x64=False,
            notes=f"peak {_mib(res['peak_bytes'])} above the baseline; run "
                  f"{res['run_s']:.1f} s with compilation ({_per_step(res['run_s'], T)}); "
                  f"records {_mib(res['record_bytes'])} = {res['records']} x "
                  f"{res['per_record_bytes']} B ({res['record_bytes'] == want}); mean drift "
                  f"{res['invariant_diff']:.1e}{growth}",
            extra=dict(res),
            reference_label=f"peak at T={n_text(horizons[0])}"))
    return rows


# ---- scale.dec_ucb and scale.wmsr -------------------------------------------------------------

def _algorithm_rows(name: str, label: str, size: dict[str, Any], res: dict[str, Any], *,
                    T: int, warm_steps: int, agents: int, seeds: int, reference: str,
                    reference_label: str, diff: float, agree: bool, tolerance: float,
                    check_text: str, more_bytes: int = 0, more_what: str = ""
                    ) -> list[BenchResult]:
    med = statistics.median(res["times_s"])
    ref = statistics.median(res["reference_times_s"])
    bound = res["state_bytes"] + res["table_bytes"] + int(more_bytes)
    phases = ", ".join(f"{k} {_mib(v)}" for k, v in res["phase_peak_bytes"].items())
    extra = dict(res, agent_steps_per_s=seeds * agents * T / med, seconds_per_step=med / T)
    common = dict(dtype="float32", size=dict(size, devices=res["devices"]),
                  max_abs_diff=diff, agree=agree, tolerance=tolerance,
                  prng_impl=res["prng_impl"], enable_x64=False, extra=extra)
    return [
        BenchResult(
            name=name, variant=f"{label} T={T}", metric="time_s", value=med,
            reference=reference, reference_value=ref, ratio=ratio(ref, med),
            compile_s=_compile_s(res["warm_s"], warm_steps, res["times_s"], T),
            times_s=list(res["times_s"]), repeats=len(res["times_s"]),
            notes=f"{_per_step(med, T)}, {seeds * agents * T / med:.3g} agent-steps/s; "
                  f"reference {_per_step(ref, T)}; {check_text}{_compiled_text(res)}",
            reference_label=reference_label, **common),
        BenchResult(
            name=name, variant=f"{label} peak memory", metric="bytes",
            value=float(res["peak_bytes"]),
            reference="the run's state (final state, every seed) + the device neighbour table"
                      + (f" + {more_what}" if more_bytes else ""),
            reference_value=float(bound), ratio=ratio(bound, res["peak_bytes"]),
            notes=f"peak {_mib(res['peak_bytes'])} = {res['peak_bytes'] / bound:.2f} x (state "
                  f"{_mib(res['state_bytes'])} + table {_mib(res['table_bytes'])}"
                  + (f" + {more_what} {_mib(more_bytes)}" if more_bytes else "")
                  + f"); phases: {phases}",
            reference_label="state + table" + (" + more" if more_bytes else ""), **common),
    ]


def _vs_plain_rows(name: str, label: str, size: dict[str, Any], res: dict[str, Any], *,
                   N: int, S: int, d: int, **kwargs: Any) -> list[BenchResult]:
    """:func:`_algorithm_rows` against plain consensus of ``[N, d]`` values on the same graph."""
    return _algorithm_rows(
        name, label, size, res, agents=N, seeds=S, reference_label="plain consensus",
        reference=f"plain consensus of [N, d] = [{N}, {d}] float32 values on the same graph "
                  f"(row weights), same seeds and steps, timed the same way", **kwargs)


def bench_scale_dec_ucb(*, N: int, M: int, S: int, T: int, warm_steps: int = 3,
                        repeats: int = 1) -> list[BenchResult]:
    """Dec_UCB at N agents, M arms, S seeds, T steps: time per step against plain consensus of
    ``[N, M]`` values on the same graph, and the peak memory (module docstring)."""
    _require_horizon(T, warm_steps)
    spec = dict(kind="dec_ucb", N=N, M=M, S=S, T=T, warm_steps=warm_steps, repeats=repeats)
    res = measure_cases([spec])[0]
    label = f"Dec_UCB exponential N={n_text(N)} M={M}"
    size = dict(S=S, N=N, M=M, T=T, graph="exponential", backend="sparse", theorem=1)
    if "error" in res:
        return [_refusal_row("scale.dec_ucb", label, size, res)]
    return _algorithm_rows(
        "scale.dec_ucb", label, size, res, T=T, warm_steps=warm_steps, agents=N, seeds=S,
        reference=f"plain consensus of [N, M] = [{N}, {M}] float32 values on the same graph "
                  f"(row weights), same seeds and steps, timed the same way",
        reference_label="plain consensus", diff=res["pulls_diff"],
        agree=res["pulls_diff"] == 0, tolerance=0.0,
        check_text=f"every agent made M + T pulls: {res['pulls_diff'] == 0}; construction "
                   f"and factory {res['build_s']:.2f} s")


def bench_scale_wmsr(*, N: int, K: int, H: int, S: int, d: int, T: int, warm_steps: int = 3,
                     repeats: int = 1) -> list[BenchResult]:
    """W-MSR resilient consensus at N agents on ``random_regular(N, K)``, agent 0 Byzantine:
    time per step against plain consensus on the same graph, the peak memory, and a row for
    the default factory call when it refuses (module docstring)."""
    _require_horizon(T, warm_steps)
    spec = dict(kind="wmsr", N=N, K=K, H=H, S=S, d=d, T=T, warm_steps=warm_steps,
                repeats=repeats)
    res = measure_cases([spec])[0]
    label = f"W-MSR random_regular k={K} N={n_text(N)}"
    size = dict(S=S, N=N, K=K, H=H, d=d, T=T, graph="random_regular", backend="sparse",
                byzantine=1)
    if "error" in res:
        return [_refusal_row("scale.wmsr", label, size, res)]
    rows = []
    if res["refused"] is not None:
        rows.append(_refusal_row("scale.wmsr", f"{label} factory, check=True (default)", size,
                                 dict(error=res["refused"], seconds=res["refused_s"])))
        label += " check=False"
    agree = res["outside_diff"] <= TABLE_TOLERANCE and res["spread"] <= res["spread0"]
    rows.extend(_vs_plain_rows(
        "scale.wmsr", label, size, res, T=T, warm_steps=warm_steps, N=N, S=S, d=d,
        diff=res["outside_diff"], agree=agree, tolerance=TABLE_TOLERANCE,
        check_text=f"cooperative values within their initial range (max excess "
                   f"{res['outside_diff']:.1e}), spread {res['spread0']:.3g} -> "
                   f"{res['spread']:.3g}; factory {res['factory_s']:.2f} s"))
    return rows


def bench_scale_sa(*, N: int, S: int, d: int, T: int, states: int = 4, alpha: float = 0.01,
                   check_steps: int = 20, warm_steps: int = 3, repeats: int = 1
                   ) -> list[BenchResult]:
    """Consensus SA (distributed TD(0)) at N agents on the exponential graph: time per step
    against plain consensus of ``[N, d]`` values on the same graph, and the peak memory against
    the state, the table and the problem's tables. The check: over ``check_steps`` steps
    recorded one by one, the agents' mean of theta follows the centralized recursion it must
    follow on a doubly stochastic graph (relative gap at most :data:`SA_REPLAY_TOLERANCE`)."""
    _require_horizon(T, warm_steps)
    spec = dict(kind="sa", N=N, S=S, d=d, T=T, states=states, alpha=alpha,
                check_steps=check_steps, warm_steps=warm_steps, repeats=repeats)
    res = measure_cases([spec])[0]
    label = f"consensus SA exponential N={n_text(N)} d={d}"
    size = dict(S=S, N=N, d=d, T=T, mrp_states=states, pair_states=states ** 2,
                graph="exponential", backend="sparse")
    if "error" in res:
        return [_refusal_row("scale.consensus_sa", label, size, res)]
    agree = res["replay_diff"] <= SA_REPLAY_TOLERANCE and res["finite"]
    return _vs_plain_rows(
        "scale.consensus_sa", label, size, res, T=T, warm_steps=warm_steps, N=N, S=S, d=d,
        diff=res["replay_diff"], agree=agree, tolerance=SA_REPLAY_TOLERANCE,
        check_text=f"agents' mean vs the centralized recursion over {check_steps} steps: "
                   f"relative gap {res['replay_diff']:.1e}; final state finite: "
                   f"{res['finite']}; problem, graph and factory {res['build_s']:.2f} s",
        more_bytes=res["problem_bytes"], more_what="the problem's tables A, b")


SA_REPLAY_TOLERANCE = 1e-4
"""Largest relative gap between the recorded agents' mean and its float64 replay (float32
runs)."""
