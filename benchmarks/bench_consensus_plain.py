"""Benchmark ``consensus.plain``: plain consensus through the runner against a numpy loop.

Measured: plain consensus ``x(t+1) = W_t x(t)`` (a periodic stack of P row-stochastic
Erdős–Rényi graphs, dense backend) for S seeds x N agents x T steps through
:func:`decentral.runner.run`, in float32 and float64. Reference: a numpy loop over t of
``X @ W_t.T`` (the einsum ``'ij,sj->si'`` through BLAS, vectorised over seeds;
:func:`benchmarks.consensus_workload.numpy_consensus`) from the same initial states; final states
and records must agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from benchmarks.consensus_workload import (
    CONSENSUS_PARAMS,
    TOLERANCES,
    consensus_algorithm,
    initial_states,
    numpy_consensus,
    runner_call,
)
from benchmarks.harness import (
    BenchResult,
    max_abs_diff,
    measure,
    prng_impl,
    ratio,
    us_per_step,
    x64_for,
)
from decentral.graphs import erdos_renyi, periodic, row_stochastic

__all__ = ["bench_consensus"]


def bench_consensus(*, S: int, N: int, T: int, record_every: int,
                    dtypes: Sequence[str] = ("float32", "float64"), one_chunk: bool = False,
                    period: int = 4, edge_prob: float = 0.3, repeats: int = 3
                    ) -> list[BenchResult]:
    """Plain consensus through the runner vs the numpy loop (:func:`numpy_consensus`).

    The graph sequence is a periodic stack of ``period`` strongly connected Erdős–Rényi graphs
    (``edge_prob``) with row-stochastic weights, dense backend. Both sides start from the
    runner's initial states and must agree on the final state and every record (to 1e-4 in
    float32, 1e-10 in float64). ``one_chunk`` also times the runner with ``chunk_size=T`` (no
    per-chunk host round trips).
    """
    adjs = [erdos_renyi(N, edge_prob, kind="strong", seed=k) for k in range(period)]
    w_host = np.stack([row_stochastic(a) for a in adjs])
    seeds = np.arange(S)
    rows = []
    for dtype in dtypes:
        with x64_for(dtype):
            seq = periodic(w_host, backend="dense")
            alg = consensus_algorithm(seq, dtype)
            timing, res = measure(runner_call(alg, CONSENSUS_PARAMS, seeds, T, record_every),
                                  repeats)
            impl, x64 = prng_impl(), bool(jax.config.jax_enable_x64)
            x0 = np.asarray(initial_states(alg, CONSENSUS_PARAMS, seeds).x)
            extra: dict[str, Any] = {}
            if one_chunk:
                t1, res1 = measure(runner_call(alg, CONSENSUS_PARAMS, seeds, T, record_every,
                                               chunk_size=T), repeats)
                extra.update(one_chunk_s=t1.median_s, one_chunk_compile_s=t1.compile_s,
                             one_chunk_equal=bool(np.array_equal(res1.final_state.x,
                                                                 res.final_state.x)))
        w_ref = w_host.astype(dtype)
        ref_timing, (ref_final, ref_records) = measure(
            lambda w=w_ref, x=x0: numpy_consensus(w, x, T, record_every), repeats)
        diff = max_abs_diff([(res.final_state.x, ref_final), (res.records.x, ref_records)])
        tol = TOLERANCES[dtype]
        extra.update(decentral_us_per_step=us_per_step(timing.median_s, T),
                     reference_us_per_step=us_per_step(ref_timing.median_s, T),
                     final_spread=float(np.ptp(ref_final, axis=1).max()))
        notes = f"{us_per_step(timing.median_s, T):.1f} us/step (S x N matvec)"
        if one_chunk:
            notes += f"; chunk_size=T: {extra['one_chunk_s'] * 1e3:.1f} ms"
        rows.append(BenchResult(
            name="consensus.plain", variant="runner vs numpy", dtype=dtype,
            size=dict(S=S, N=N, T=T, record_every=record_every, P=period, backend="dense"),
            metric="time_s", value=timing.median_s,
            reference="numpy: Python loop over t of X @ W_t.T (BLAS einsum 'ij,sj->si' "
                      "vectorised over seeds), same records",
            reference_value=ref_timing.median_s, ratio=ratio(ref_timing.median_s,
                                                             timing.median_s),
            compile_s=timing.compile_s, reference_compile_s=None, times_s=timing.times_s,
            reference_times_s=ref_timing.times_s, repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            notes=notes, extra=extra,
            reference_label="numpy loop over t",
        ))
    return rows
