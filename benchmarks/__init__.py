"""Speed and memory benchmarks, reported as ratios against references measured in the same run.

A benchmark never asserts an absolute time: each row times a ``decentral`` computation and a
reference computation (a plain numpy loop, another backend, another PRNG implementation) in the
same process and reports ``ratio = reference / decentral`` (> 1: decentral is faster / smaller).
Every row that can be checked also says whether both sides computed the same numbers
(``agree``, ``max_abs_diff``): a benchmark that computes something else is worthless.

This module is the shared harness: :class:`BenchResult` (one table row), :func:`measure` (first
call, then the median of repeats, with ``time.perf_counter`` and ``jax.block_until_ready``),
:func:`jax_config` (temporary JAX configuration, restored afterwards), and the table / JSON /
markdown writers. The benchmarks themselves live in :mod:`benchmarks.bench_foundation`; the
command line is ``python -m benchmarks [--quick] [--only PATTERN] [--out DIR]``.

Example:
    >>> from benchmarks import bench_foundation as bf
    >>> rows = bf.run_benchmarks("tiny", only=["consensus.plain"])
    >>> sorted({r.name for r in rows}), all(r.agree for r in rows)
    (['consensus.plain'], True)
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import jax

from decentral.results import atomic_write_bytes, to_jsonable

__all__ = [
    "BenchResult",
    "Timing",
    "measure",
    "jax_config",
    "tree_nbytes",
    "format_table",
    "format_markdown",
    "write_results",
    "device_summary",
    "cost_text",
    "DEFAULT_OUT",
]

DEFAULT_OUT = Path("benchmarks") / "out"
"""Where ``python -m benchmarks`` writes ``results.json`` and ``results.md`` by default
(relative to the working directory, so an installed package never writes into itself)."""


def device_summary() -> str:
    """The devices JAX computes on, in words: ``"CPU, 2 devices (2 cores)"``,
    ``"GPU (NVIDIA H200), 1 device"``. Starts the JAX backend."""
    from decentral.devices import cpu_core_count

    devices = jax.devices()
    backend = jax.default_backend()
    count = f"{len(devices)} device{'s' if len(devices) != 1 else ''}"
    if backend == "cpu":
        cores = cpu_core_count()
        return f"CPU, {count} ({cores} core{'s' if cores != 1 else ''} available)"
    kind = getattr(devices[0], "device_kind", "") if devices else ""
    return f"{backend.upper()}{f' ({kind})' if kind else ''}, {count}"


def cost_text(seconds: float, noise_s: float, *, per: int = 1, unit: str = "us",
              what: str = "") -> tuple[str, float | None]:
    """A cost derived as a difference of two timings, never printed negative.

    Args:
        seconds: the difference (for example ``t_random - t_stack``), in seconds.
        noise_s: the measurement noise of that difference (seconds, >= 0), e.g. the larger
            spread (max - min) of the two sets of repeats.
        per: divide by this many items (steps, draws) before printing.
        unit: ``"us"`` (microseconds) or ``"ns"``.
        what: what the cost is per, appended as ``/what``.

    Returns:
        ``(text, value)``: ``value`` is the cost per item in ``unit`` or None when the difference
        is negative or within ``noise_s``; then ``text`` says ``"< measurement noise (+-x)"``.

    Example:
        >>> cost_text(-3e-6, 1e-6, per=1)
        ('< measurement noise (+-1.0 us)', None)
    """
    scale = {"us": 1e6, "ns": 1e9}[unit]
    suffix = f" {unit}" + (f"/{what}" if what else "")
    per = max(int(per), 1)
    if not math.isfinite(seconds) or seconds <= max(noise_s, 0.0):
        return f"< measurement noise (+-{max(noise_s, 0.0) / per * scale:.1f}{suffix})", None
    value = seconds / per * scale
    return f"{value:.1f}{suffix}", value


@dataclasses.dataclass
class Timing:
    """Wall-clock times of one callable.

    Attributes:
        first_s: the first call (compilation, tracing and one execution).
        median_s: median of the ``repeats`` calls after the first.
        times_s: every repeat.
        compile_s: ``max(first_s - median_s, 0)``, the one-off cost of the first call
            (compilation and tracing; ~0 for numpy).
    """

    first_s: float
    median_s: float
    times_s: list[float]
    compile_s: float


def _block(tree: Any) -> Any:
    return jax.block_until_ready(tree)


def measure(fn: Callable[[], Any], repeats: int) -> tuple[Timing, Any]:
    """Time ``fn()``: one warm-up call (timed separately), then ``repeats`` timed calls.

    Every call's output is passed through ``jax.block_until_ready`` before the clock stops, so
    asynchronous dispatch is not mistaken for speed.

    Args:
        fn: zero-argument callable returning a pytree (JAX or numpy arrays).
        repeats: number of timed calls after the warm-up (>= 1).

    Returns:
        ``(Timing, output of the last call)``.

    Example:
        >>> import jax.numpy as jnp
        >>> timing, out = measure(lambda: jnp.ones(3) * 2, repeats=3)
        >>> timing.median_s > 0
        True
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}.")
    start = time.perf_counter()
    out = _block(fn())
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = _block(fn())
        times.append(time.perf_counter() - start)
    med = statistics.median(times)
    return Timing(first, med, times, max(first - med, 0.0)), out


@contextlib.contextmanager
def jax_config(**updates: Any) -> Iterator[None]:
    """Set JAX configuration options (``jax_enable_x64=True``, ``jax_default_prng_impl="rbg"``)
    for the duration of a ``with`` block and restore the previous values afterwards, also when
    the block raises.

    Example:
        >>> import jax.numpy as jnp
        >>> with jax_config(jax_enable_x64=True):
        ...     jnp.ones(2).dtype
        dtype('float64')
    """
    previous = {name: getattr(jax.config, name) for name in updates}
    try:
        for name, value in updates.items():
            jax.config.update(name, value)
        yield
    finally:
        for name, value in previous.items():
            jax.config.update(name, value)


def tree_nbytes(tree: Any) -> int:
    """Total ``nbytes`` of the array leaves of a pytree (PRNG-key leaves count their key data)."""
    total = 0
    for leaf in jax.tree_util.tree_leaves(tree):
        dtype = getattr(leaf, "dtype", None)
        if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        total += int(getattr(leaf, "nbytes", 0))
    return total


@dataclasses.dataclass
class BenchResult:
    """One row of the benchmark table.

    Attributes:
        name: benchmark id (``consensus.plain``, ``mixing.dense_vs_sparse``, ...).
        variant: what distinguishes rows of one benchmark (backend, PRNG impl, horizon).
        dtype: floating dtype the decentral side ran in.
        size: the sizes (``S`` seeds, ``N`` agents, ``T`` steps, ...).
        metric: ``"time_s"`` (median wall-clock seconds) or ``"bytes"``.
        value: the decentral measurement (median seconds or bytes).
        reference: what the reference is, in words.
        reference_value: the reference measurement, same metric.
        ratio: ``reference_value / value`` (> 1: decentral faster or smaller).
        compile_s: first call minus median for the decentral side (compile + trace).
        reference_compile_s: the same for the reference side (None for numpy).
        times_s: every timed repeat of the decentral side.
        reference_times_s: every timed repeat of the reference side.
        repeats: timed repeats per side.
        max_abs_diff: max |decentral - reference| over the compared outputs (None if not
            comparable).
        agree: whether the outputs agree to ``tolerance`` (None if not comparable).
        tolerance: absolute tolerance of the agreement check.
        prng_impl: ``jax.config.jax_default_prng_impl`` while the decentral side ran.
        enable_x64: ``jax.config.jax_enable_x64`` while the decentral side ran.
        notes: free text (what was compared, derived per-step costs).
        extra: further numbers (per-step costs, byte counts, alternative timings).
        target_ratio: the ratio this row is held to (met when ``ratio >= target_ratio``), or
            None for a row reported without a target. A target stated as ``decentral /
            reference <= c`` is stored as ``1 / c``.
    """

    name: str
    variant: str
    dtype: str
    size: dict[str, Any]
    metric: str
    value: float
    reference: str
    reference_value: float | None
    ratio: float | None
    compile_s: float | None = None
    reference_compile_s: float | None = None
    times_s: list[float] = dataclasses.field(default_factory=list)
    reference_times_s: list[float] = dataclasses.field(default_factory=list)
    repeats: int = 0
    max_abs_diff: float | None = None
    agree: bool | None = None
    tolerance: float | None = None
    prng_impl: str = ""
    enable_x64: bool = False
    notes: str = ""
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    target_ratio: float | None = None

    @property
    def met(self) -> bool | None:
        """Whether the row reaches its target (None: no target, or no ratio)."""
        if self.target_ratio is None or self.ratio is None:
            return None
        return bool(self.ratio >= self.target_ratio)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return to_jsonable(dataclasses.asdict(self), where=f"benchmark {self.name}")


def _ratio(reference_value: float | None, value: float) -> float | None:
    if reference_value is None or not value > 0:
        return None
    return float(reference_value) / float(value)


# --------------------------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------------------------


def _fmt_value(x: float | None, metric: str) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if metric == "bytes":
        x = float(x)
        for unit in ("B", "KiB", "MiB", "GiB"):
            if x < 1024 or unit == "GiB":
                return f"{x:.0f} {unit}" if unit == "B" else f"{x:.1f} {unit}"
            x /= 1024
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.1f} ms"
    return f"{x * 1e6:.0f} us"


def _fmt_size(size: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in size.items())


def _fmt_diff(row: BenchResult) -> str:
    if row.agree is None:
        return "-"
    diff = "-" if row.max_abs_diff is None else f"{row.max_abs_diff:.1e}"
    return f"{'ok' if row.agree else 'DIFFER'} {diff}"


_COLUMNS = ("name", "variant", "dtype", "size", "compile", "decentral", "reference",
            "ratio ref/dec", "target", "met", "agree max|d|", "notes")


def _fmt_target(row: BenchResult) -> str:
    return "-" if row.target_ratio is None else f">= {row.target_ratio:.3g}"


def _fmt_met(row: BenchResult) -> str:
    return {None: "-", True: "met", False: "NOT met"}[row.met]


def _cells(row: BenchResult) -> list[str]:
    return [
        row.name,
        row.variant,
        row.dtype,
        _fmt_size(row.size),
        "-" if row.compile_s is None else _fmt_value(row.compile_s, "time_s"),
        _fmt_value(row.value, row.metric),
        _fmt_value(row.reference_value, row.metric),
        "-" if row.ratio is None else f"{row.ratio:.3g}",
        _fmt_target(row),
        _fmt_met(row),
        _fmt_diff(row),
        row.notes,
    ]


#: The console table's width limit (details: the markdown and JSON outputs).
TABLE_WIDTH = 120

_TABLE_COLUMNS = ("benchmark", "variant", "decentral", "reference", "ratio", "target", "met",
                  "agree")


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"


def format_table(rows: Sequence[BenchResult]) -> str:
    """Plain-text table within :data:`TABLE_WIDTH` columns, one line per row: the decentral
    and reference measurements, ``ratio = reference / decentral``, the row's target and
    whether it is met, and whether the two sides agree (sizes, compile times, max |d| and
    notes are in the markdown and JSON outputs)."""
    body = [[r.name, r.variant, _fmt_value(r.value, r.metric),
             _fmt_value(r.reference_value, r.metric),
             "-" if r.ratio is None else f"{r.ratio:.3g}", _fmt_target(r), _fmt_met(r),
             "-" if r.agree is None else ("ok" if r.agree else "DIFFER")] for r in rows]
    cells = [list(_TABLE_COLUMNS)] + body
    widths = [max(len(c[i]) for c in cells) for i in range(len(_TABLE_COLUMNS))]
    spare = TABLE_WIDTH - (sum(widths) + 2 * (len(widths) - 1))
    if spare < 0:                        # the variant column gives way
        widths[1] = max(12, widths[1] + spare)
    lines = []
    for k, c in enumerate(cells):
        lines.append("  ".join(_clip(c[i], widths[i]).ljust(widths[i])
                               for i in range(len(widths))).rstrip())
        if k == 0:
            lines.append("-" * min(TABLE_WIDTH, sum(widths) + 2 * (len(widths) - 1)))
    return "\n".join(lines)


def format_markdown(rows: Sequence[BenchResult], provenance: dict[str, Any],
                    command: str = "", device: str = "") -> str:
    """Markdown report: provenance summary, the table, and what each reference is."""
    jax_info = provenance.get("jax", {})
    versions = provenance.get("versions", {})
    out = ["# decentral benchmarks", ""]
    if command:
        out += [f"Command: `{command}`", ""]
    if device:
        out += [f"- device: {device}"]
    out += [
        f"- date: {provenance.get('date')}",
        f"- git commit: {provenance.get('git_commit')}",
        f"- platform: {provenance.get('platform')}",
        f"- jax {versions.get('jax')} / jaxlib {versions.get('jaxlib')} / numpy "
        f"{versions.get('numpy')}; backend {jax_info.get('backend')}, devices "
        f"{jax_info.get('devices')}",
        f"- default PRNG: {jax_info.get('default_prng_impl')}; x64 at start: "
        f"{jax_info.get('enable_x64')}",
        "",
        "`ratio = reference / decentral` (> 1: decentral faster or smaller); times are medians "
        "of repeated calls after a warm-up call, `compile` is first call minus median.",
        "",
        "| " + " | ".join(c.replace("|", "\\|") for c in _COLUMNS) + " |",
        "|" + "---|" * len(_COLUMNS),
    ]
    for r in rows:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in _cells(r)) + " |")
    out += ["", "## References", ""]
    seen = set()
    for r in rows:
        key = (r.name, r.variant)
        if key in seen:
            continue
        seen.add(key)
        out.append(f"- **{r.name}** ({r.variant}): {r.reference}")
    return "\n".join(out) + "\n"


def write_results(rows: Sequence[BenchResult], out_dir: str | Path, provenance: dict[str, Any],
                  *, config: dict[str, Any] | None = None, command: str = "") -> list[Path]:
    """Write ``results.json`` (rows + provenance + config) and ``results.md`` atomically.

    Returns:
        The two paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": "decentral.benchmarks/1",
        "command": command,
        "config": to_jsonable(config or {}),
        "provenance": provenance,
        "results": [r.to_dict() for r in rows],
    }
    text = json.dumps(doc, indent=2)
    json_path, md_path = out / "results.json", out / "results.md"
    atomic_write_bytes(json_path, lambda f: f.write(text.encode()))
    md = format_markdown(rows, provenance, command, device=str((config or {}).get("device", "")))
    atomic_write_bytes(md_path, lambda f: f.write(md.encode()))
    return [json_path, md_path]
