"""Benchmark ``prng.threefry_vs_rbg``: the cost of JAX's PRNG implementations in a noisy step.

Measured: noisy consensus ``x(t+1) = W x(t) + sigma * xi(t)``
(:func:`benchmarks.consensus_workload.noisy_consensus_algorithm`), S x N standard normals per
step, float32, under ``threefry2x32`` (JAX's default), ``rbg`` and ``unsafe_rbg``. Reference:
for threefry2x32, a numpy loop drawing PCG64 normals
(:func:`benchmarks.consensus_workload.numpy_noisy_consensus`; another random stream, so only
the cost and the noise statistics compare); for every other implementation, the threefry2x32
run of the same step. Check: the mean of ``xi^2`` over all draws is 1 within 6 standard errors.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.consensus_workload import (
    CONSENSUS_PARAMS,
    consensus_algorithm,
    initial_states,
    noisy_consensus_algorithm,
    numpy_noisy_consensus,
    runner_call,
)
from benchmarks.harness import (
    BenchResult,
    cost_text,
    jax_config,
    measure,
    prng_impl,
    ratio,
    timing_noise,
    x64_for,
)
from decentral.graphs import erdos_renyi, row_stochastic, static

__all__ = ["bench_prng"]


def bench_prng(*, S: int, N: int, T: int,
               impls: Sequence[str] = ("threefry2x32", "rbg"), sigma: float = 0.1,
               edge_prob: float = 0.3, repeats: int = 3) -> list[BenchResult]:
    """Noisy consensus (S x N normals per step) under each PRNG implementation in ``impls``.

    The first implementation (threefry2x32, JAX's default) is timed against the numpy loop
    :func:`numpy_noisy_consensus` (PCG64 normals); every other implementation against the first.
    ``jax_default_prng_impl`` is set for the run and restored afterwards; each implementation
    gets its own Algorithm object (the runner's compile cache is keyed on it). Check: the mean
    of ``xi^2`` over all S x N x T draws is 1 within 6 standard errors (``sqrt(2 / (S N T))``).
    """
    W_host = row_stochastic(erdos_renyi(N, edge_prob, kind="strong", seed=0))
    seeds = np.arange(S)
    dtype = "float32"
    n_draws = S * N * T
    tol = 6.0 * float(np.sqrt(2.0 / n_draws))
    rows: list[BenchResult] = []
    with x64_for(dtype):
        W = jnp.asarray(W_host, jnp.float32)
        base_alg = consensus_algorithm(static(W_host), dtype)
        t_plain, _ = measure(runner_call(base_alg, CONSENSUS_PARAMS, seeds, T, T // 10 or 1),
                             repeats)
    first = None
    for impl in impls:
        with x64_for(dtype), jax_config(jax_default_prng_impl=impl):
            alg = noisy_consensus_algorithm(W, N, dtype, name=f"bench.prng.{impl}")
            timing, res = measure(runner_call(alg, sigma, seeds, T, T // 10 or 1), repeats)
            impl_now, x64 = prng_impl(), bool(jax.config.jax_enable_x64)
            x0 = np.asarray(initial_states(alg, sigma, seeds).x) if first is None else None
        mean_sq = float(np.sum(np.asarray(res.final_state.noise_sq, np.float64)) / n_draws)
        dev = abs(mean_sq - 1.0)
        normal_text, ns_per_normal = cost_text(timing.median_s - t_plain.median_s,
                                               timing_noise(timing, t_plain), per=n_draws,
                                               unit="ns", what="normal")
        extra = dict(noise_free_s=t_plain.median_s, ns_per_normal=ns_per_normal,
                     ns_per_normal_raw=(timing.median_s - t_plain.median_s) / n_draws * 1e9,
                     mean_noise_sq=mean_sq, normals=n_draws)
        if first is None:
            ref_timing, (_, ref_sq) = measure(
                lambda x=x0: numpy_noisy_consensus(W_host.astype(dtype), x, sigma, T), repeats)
            extra["reference_mean_noise_sq"] = float(np.sum(ref_sq, dtype=np.float64) / n_draws)
            reference = ("numpy: Python loop over t of X @ W.T + sigma * PCG64 standard_normal"
                         "([S, N]) (another stream: only cost and noise statistics compare)")
            ref_value, ref_times, ref_compile = ref_timing.median_s, ref_timing.times_s, None
            label = "numpy PCG64 loop"
            first = (impl, timing)
        else:
            reference = f"decentral under {first[0]} (same step, same run)"
            ref_value, ref_times = first[1].median_s, first[1].times_s
            ref_compile = first[1].compile_s
            label = f"{first[0]} run"
        rows.append(BenchResult(
            name="prng.threefry_vs_rbg", variant=impl, dtype=dtype,
            size=dict(S=S, N=N, T=T, normals_per_step=S * N, backend="dense"),
            metric="time_s",
            value=timing.median_s, reference=reference, reference_value=ref_value,
            ratio=ratio(ref_value, timing.median_s), compile_s=timing.compile_s,
            reference_compile_s=ref_compile, times_s=timing.times_s,
            reference_times_s=ref_times, repeats=repeats, max_abs_diff=dev,
            agree=bool(dev <= tol and np.all(np.isfinite(res.final_state.x))), tolerance=tol,
            prng_impl=impl_now, enable_x64=x64,
            notes=f"{normal_text} over noise-free "
                  f"{t_plain.median_s * 1e3:.1f} ms; check mean xi^2 = 1",
            extra=extra,
            reference_label=label,
        ))
    return rows
