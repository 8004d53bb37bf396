"""Measuring one benchmark row: the row itself, timing, the ratio, and the agreement check.

Every benchmark builds its rows from these: :class:`BenchResult` (one table row),
:func:`measure` (a warm-up call, then the median of repeated calls, each output passed through
``jax.block_until_ready`` before the clock stops), :func:`ratio` (``reference / decentral``),
:func:`max_abs_diff` (how far the two sides' outputs are apart), :func:`cost_text` (a cost
derived as a difference of two timings, never printed negative), :func:`jax_config` (JAX
options set for a block and restored afterwards) and :func:`child_env` (the environment of a
benchmark's child Python).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from decentral.results import to_jsonable

__all__ = [
    "BenchResult",
    "Timing",
    "measure",
    "ratio",
    "timing_noise",
    "cost_text",
    "us_per_step",
    "max_abs_diff",
    "jax_config",
    "FLOAT_DTYPES",
    "x64_for",
    "prng_impl",
    "tree_nbytes",
    "device_summary",
    "child_env",
]


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
    out = jax.block_until_ready(fn())
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    med = statistics.median(times)
    return Timing(first, med, times, max(first - med, 0.0)), out


def ratio(reference_value: float | None, value: float) -> float | None:
    """``reference_value / value`` (> 1: decentral faster or smaller), or None when there is
    no reference value or ``value`` is not positive.

    Example:
        >>> ratio(3.0, 1.5), ratio(None, 1.0), ratio(1.0, 0.0)
        (2.0, None, None)
    """
    if reference_value is None or not value > 0:
        return None
    return float(reference_value) / float(value)


def timing_noise(*timings: Timing) -> float:
    """Measurement noise of a difference of medians: the largest spread (max - min) of the
    repeats of the timings involved (0 with a single repeat each)."""
    return max((max(t.times_s) - min(t.times_s) for t in timings if t.times_s), default=0.0)


def cost_text(seconds: float, noise_s: float, *, per: int = 1, unit: str = "us",
              what: str = "") -> tuple[str, float | None]:
    """A cost derived as a difference of two timings, never printed negative.

    Args:
        seconds: the difference (for example ``t_random - t_stack``), in seconds.
        noise_s: the measurement noise of that difference (seconds, >= 0), e.g. the larger
            spread (max - min) of the two sets of repeats (:func:`timing_noise`).
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


def us_per_step(seconds: float, steps: int) -> float:
    """``seconds`` spread over ``steps`` steps, in microseconds per step."""
    return seconds / steps * 1e6


def max_abs_diff(pairs: Sequence[tuple[Any, Any]]) -> float:
    """The largest ``|a - b|`` over every pair of arrays (compared in float64); ``inf`` when a
    difference is not finite.

    Raises:
        ValueError: if the two arrays of a pair have different shapes.

    Example:
        >>> max_abs_diff([([1.0, 2.0], [1.0, 2.5]), (3.0, 3.0)])
        0.5
    """
    worst = 0.0
    for a, b in pairs:
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if a.shape != b.shape:
            raise ValueError(f"compared outputs have shapes {a.shape} and {b.shape}.")
        d = np.abs(a - b)
        if not np.all(np.isfinite(d)):
            return float("inf")
        worst = max(worst, float(d.max(initial=0.0)))
    return worst


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


FLOAT_DTYPES = ("float32", "float64")


def x64_for(dtype: str) -> contextlib.AbstractContextManager[None]:
    """:func:`jax_config` with ``jax_enable_x64`` on exactly when ``dtype`` is ``"float64"``.

    Raises:
        ValueError: if ``dtype`` is neither ``"float32"`` nor ``"float64"``.
    """
    if dtype not in FLOAT_DTYPES:
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}.")
    return jax_config(jax_enable_x64=dtype == "float64")


def prng_impl() -> str:
    """``jax.config.jax_default_prng_impl`` now (rows record it for the decentral side)."""
    return str(jax.config.jax_default_prng_impl)


def tree_nbytes(tree: Any) -> int:
    """Total ``nbytes`` of the array leaves of a pytree (PRNG-key leaves count their key data)."""
    total = 0
    for leaf in jax.tree_util.tree_leaves(tree):
        dtype = getattr(leaf, "dtype", None)
        if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        total += int(getattr(leaf, "nbytes", 0))
    return total


def child_env(*, cpu_only: bool = False) -> dict[str, str]:
    """The environment of a benchmark's child Python: this one, with the repository first on
    ``PYTHONPATH`` (so it runs uninstalled too) and without a CPU device count forced through
    ``XLA_FLAGS`` (the child sets its own with :func:`decentral.devices.use_all_cpu_cores`,
    which leaves a forced count in force); ``cpu_only`` also pins JAX to the CPU."""
    env = dict(os.environ)
    flags = [f for f in env.get("XLA_FLAGS", "").split()
             if "xla_force_host_platform_device_count" not in f]
    env["XLA_FLAGS"] = " ".join(flags)
    if cpu_only:
        env["JAX_PLATFORMS"] = "cpu"
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in
                                                  env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


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
        reference: what the reference is, in full.
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
        reference_label: the reference in a few words, at most 20 characters (``"numpy loop
            over t"``, ``"dense backend"``): the tables' ``against`` column; ``reference``
            says it in full.
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
    reference_label: str = ""

    @property
    def met(self) -> bool | None:
        """Whether the row reaches its target (None: no target, or no ratio)."""
        if self.target_ratio is None or self.ratio is None:
            return None
        return bool(self.ratio >= self.target_ratio)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return to_jsonable(dataclasses.asdict(self), where=f"benchmark {self.name}")
