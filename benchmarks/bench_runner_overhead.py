"""Benchmark ``runner.overhead``: what :func:`decentral.runner.run` costs over the computation.

Measured: plain consensus (:func:`benchmarks.consensus_workload.consensus_algorithm`) on a
static dense graph (:func:`~benchmarks.consensus_workload.dense_static_graph`), S seeds x N
agents x T steps, float32, recording the state every ``T / n_records`` steps, through the runner
at its default chunking (without and with a per-chunk hook) and with ``chunk_size=T``.

Reference: a bare ``jax.jit`` of the same step in a ``lax.scan`` vmapped over seeds
(:func:`~benchmarks.consensus_workload.bare_runner`): the same keys, the same record points, the
seeds sharded over the same devices; no chunks, no checks, no host copies. The rows say
``runner/bare`` (target <= 1.10, stored as ``target_ratio = 1 / 1.10``; the hooked row has no
target) and must give the bare run's final states and records. A further row fits
``time = a + b * n_chunks`` over runs of 1, 4 and 16 chunks at a short horizon: ``b`` is the host
cost per chunk, ``a`` minus the bare run of that horizon the host cost per call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from benchmarks.consensus_workload import (
    CONSENSUS_PARAMS,
    TOLERANCES,
    bare_runner,
    consensus_algorithm,
    dense_static_graph,
    record_interval,
    runner_call,
)
from benchmarks.harness import (
    BenchResult,
    cost_text,
    max_abs_diff,
    measure,
    prng_impl,
    ratio,
    timing_noise,
    us_per_step,
    x64_for,
)
from decentral.graphs import static

__all__ = ["bench_runner_overhead"]


def _sharded_seeds(num_seeds: int, devices: Sequence[Any]) -> jax.Array:
    """Seeds ``0..S-1`` as uint32, padded (repeating seed 0) to a multiple of the device count
    and sharded over ``devices`` — the placement the runner gives them."""
    seeds = np.arange(num_seeds, dtype=np.uint32)
    pad = (-num_seeds) % len(devices)
    seeds = np.concatenate([seeds, np.zeros(pad, np.uint32)])
    mesh = Mesh(np.asarray(list(devices), dtype=object), ("seeds",))
    return jax.device_put(seeds, NamedSharding(mesh, P("seeds")))


def _chunk_counter() -> tuple[list[int], Callable[[int], None]]:
    """A no-op ``on_chunk_end`` hook that counts the chunks (asking for per-chunk results is
    what makes the runner's default cut a run into about 16 chunks)."""
    seen: list[int] = []
    return seen, seen.append


def bench_runner_overhead(*, S: int, N: int, T: int, n_records: int, fit_T: int,
                          fit_record_every: int, edge_prob: float = 0.5,
                          dtype: str = "float32", repeats: int = 5) -> list[BenchResult]:
    """The runner against a bare ``jax.jit`` of the same computation (:func:`bare_runner`).

    Plain consensus on a static dense graph (:func:`dense_static_graph`), S seeds x N agents x
    T steps, recording the state every ``T / n_records`` steps (both sides), seeds sharded over
    all of ``jax.devices()`` (both sides). Rows:

    * default chunking and ``chunk_size=T``: ``runner/bare`` time (target <= 1.10); both must
      give the bare run's final states and records;
    * host costs: ``time = a + b * n_chunks`` fitted (least squares) to runs of 1, 4 and 16
      chunks at ``fit_T`` steps (records every ``fit_record_every``): ``b`` is the host cost of
      a chunk, ``a - bare(fit_T)`` the host cost of a call beyond the computation. A fitted
      value that is negative or below the spread of the repeats reads ``< measurement noise``.
    """
    record_every = record_interval(T, n_records)
    if fit_T % (16 * fit_record_every):
        raise ValueError(f"fit_T = {fit_T} must be a multiple of 16 * fit_record_every = "
                         f"{16 * fit_record_every} (runs of 1, 4 and 16 chunks).")
    devs = jax.devices()
    seeds = np.arange(S)
    with x64_for(dtype):
        alg = consensus_algorithm(static(dense_static_graph(N, edge_prob)), dtype)
        seeds_dev = _sharded_seeds(S, devs)
        bare = bare_runner(alg, CONSENSUS_PARAMS, T, record_every)
        t_bare, (bare_final, bare_records) = measure(lambda: bare(seeds_dev), repeats)
        t_def, r_def = measure(runner_call(alg, CONSENSUS_PARAMS, seeds, T, record_every),
                               repeats)
        seen, hook = _chunk_counter()
        t_hook, r_hook = measure(runner_call(alg, CONSENSUS_PARAMS, seeds, T, record_every,
                                             on_chunk_end=hook), repeats)
        n_hook = len(seen) // (repeats + 1) if seen else 0
        t_one, r_one = measure(runner_call(alg, CONSENSUS_PARAMS, seeds, T, record_every,
                                           chunk_size=T), repeats)
        bare_fit = bare_runner(alg, CONSENSUS_PARAMS, fit_T, fit_record_every)
        t_bare_fit, _ = measure(lambda: bare_fit(seeds_dev), repeats)
        fit = {}
        for n_chunks in (1, 4, 16):
            fit[n_chunks], _ = measure(runner_call(alg, CONSENSUS_PARAMS, seeds, fit_T,
                                                   fit_record_every,
                                                   chunk_size=fit_T // n_chunks),
                                       repeats)
        impl, x64 = prng_impl(), bool(jax.config.jax_enable_x64)
    bare_final_x = np.asarray(bare_final.x)[:S]
    bare_records_x = np.asarray(bare_records.x)[:S]
    tol = TOLERANCES[dtype]
    size = dict(S=S, N=N, T=T, record_every=record_every, backend="dense",
                devices=len(devs), graph=f"static ER(p={edge_prob})")
    reference = ("bare jax.jit of vmap over seeds of lax.scan(step) (init + nested scan, the "
                 "runner's keys and record points, same devices; no chunks, no checks, no host "
                 "copies)")
    rows = []
    for variant, timing, res, n_ch in (
        ("default chunking, no hook (1 chunk)", t_def, r_def, 1),
        (f"default chunking with a per-chunk hook ({n_hook} chunks)", t_hook, r_hook, n_hook),
        ("chunk_size=T (1 chunk)", t_one, r_one, 1),
    ):
        diff = max_abs_diff([(res.final_state.x, bare_final_x),
                             (res.records.x, bare_records_x)])
        over = timing.median_s / t_bare.median_s
        rows.append(BenchResult(
            name="runner.overhead", variant=variant, dtype=dtype, size=size, metric="time_s",
            value=timing.median_s, reference=reference, reference_value=t_bare.median_s,
            ratio=ratio(t_bare.median_s, timing.median_s), compile_s=timing.compile_s,
            reference_compile_s=t_bare.compile_s, times_s=timing.times_s,
            reference_times_s=t_bare.times_s, repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            target_ratio=None if "per-chunk hook" in variant else 1 / 1.10,
            notes=f"runner/bare = {over:.3f} (target <= 1.10); "
                  f"{us_per_step(timing.median_s, T):.2f} us/step vs bare "
                  f"{us_per_step(t_bare.median_s, T):.2f}",
            extra=dict(runner_over_bare=over, n_chunks=n_ch,
                       runner_us_per_step=us_per_step(timing.median_s, T),
                       bare_us_per_step=us_per_step(t_bare.median_s, T)),
            reference_label="bare jit(vmap(scan))",
        ))
    counts = np.array(sorted(fit), dtype=float)
    medians = np.array([fit[k].median_s for k in sorted(fit)])
    per_chunk_s, intercept_s = np.polyfit(counts, medians, 1)
    noise = timing_noise(*fit.values(), t_bare_fit)
    chunk_text, per_chunk_us = cost_text(float(per_chunk_s), noise / (counts[-1] - counts[0]),
                                         what="chunk")
    call_text, per_call_us = cost_text(float(intercept_s - t_bare_fit.median_s), noise,
                                       what="call")
    t16 = fit[16]
    rows.append(BenchResult(
        name="runner.overhead", variant="host costs (fit over 1, 4, 16 chunks)", dtype=dtype,
        size={**size, "T": fit_T, "record_every": fit_record_every},
        metric="time_s", value=t16.median_s,
        reference=f"the bare jit (as above) at T={fit_T}; decentral side: the runner with 16 "
                  "chunks; fit time = a + b * n_chunks over runs of 1, 4, 16 chunks",
        reference_value=t_bare_fit.median_s, ratio=ratio(t_bare_fit.median_s, t16.median_s),
        compile_s=t16.compile_s, reference_compile_s=t_bare_fit.compile_s,
        times_s=t16.times_s, reference_times_s=t_bare_fit.times_s, repeats=repeats,
        prng_impl=impl, enable_x64=x64,
        notes=f"host cost per call (a - bare): {call_text}; per chunk (b): {chunk_text}",
        extra=dict(per_call_us=per_call_us, per_chunk_us=per_chunk_us,
                   per_call_us_raw=float(intercept_s - t_bare_fit.median_s) * 1e6,
                   per_chunk_us_raw=float(per_chunk_s) * 1e6, noise_us=noise * 1e6,
                   fit_medians_s={str(k): fit[k].median_s for k in sorted(fit)},
                   fit_times_s={str(k): fit[k].times_s for k in sorted(fit)}),
        reference_label=f"bare jit, T={fit_T}",
    ))
    return rows
