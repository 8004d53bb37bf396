"""Benchmark ``mixing.dense_vs_sparse``: the sparse mixing backend against the dense one.

Measured: plain consensus on a sparse circulant graph (row-stochastic, K in-neighbours) with
``backend="sparse"`` (a gather and a weighted sum over the K in-neighbours per step), for
several N. Reference: the same consensus with ``backend="dense"`` (one ``W @ x`` per step,
N x N); ``ratio = dense / sparse`` time, and both backends must give the same final states and
records.

Example:
    >>> rows = bench_backends(S=3, cases=((16, 20),), offsets=(1, -1, 3), repeats=1)
    >>> [r.name for r in rows], all(r.ratio > 0 for r in rows)   # ratio: dense / sparse time
    (['mixing.dense_vs_sparse'], True)
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import numpy as np

from benchmarks.consensus_workload import (
    CONSENSUS_PARAMS,
    TOLERANCES,
    consensus_algorithm,
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
from decentral.graphs import circulant, row_stochastic, static

__all__ = ["bench_backends"]


def bench_backends(*, S: int, cases: Sequence[tuple[int, int]], offsets: Sequence[int],
                   dtype: str = "float32", repeats: int = 3) -> list[BenchResult]:
    """Consensus on ``circulant(N, offsets)`` (row-stochastic, K = len(offsets) + 1 in-neighbours)
    with ``backend="sparse"`` vs ``backend="dense"``; ``cases`` are ``(N, T)`` pairs, records
    every T / 10 steps. Both backends must give the same final states and records.
    """
    rows = []
    seeds = np.arange(S)
    for n, T in cases:
        W = row_stochastic(circulant(n, list(offsets)))
        record_every = max(T // 10, 1)
        with x64_for(dtype):
            algs = {b: consensus_algorithm(static(W, backend=b), dtype)
                    for b in ("dense", "sparse")}
            t_dense, r_dense = measure(runner_call(algs["dense"], CONSENSUS_PARAMS, seeds, T,
                                                   record_every), repeats)
            t_sparse, r_sparse = measure(runner_call(algs["sparse"], CONSENSUS_PARAMS, seeds, T,
                                                     record_every),
                                         repeats)
            impl, x64 = prng_impl(), bool(jax.config.jax_enable_x64)
        diff = max_abs_diff([(r_sparse.final_state.x, r_dense.final_state.x),
                             (r_sparse.records.x, r_dense.records.x)])
        tol = TOLERANCES[dtype]
        k = len(set(int(o) % n for o in offsets) - {0}) + 1
        winner = "sparse" if t_sparse.median_s < t_dense.median_s else "dense"
        rows.append(BenchResult(
            name="mixing.dense_vs_sparse", variant=f"sparse vs dense, N={n}", dtype=dtype,
            size=dict(S=S, N=n, K=k, T=T, record_every=record_every),
            metric="time_s", value=t_sparse.median_s,
            reference="decentral backend='dense' (one W @ x per step, N x N), same graph",
            reference_value=t_dense.median_s,
            ratio=ratio(t_dense.median_s, t_sparse.median_s),
            compile_s=t_sparse.compile_s, reference_compile_s=t_dense.compile_s,
            times_s=t_sparse.times_s, reference_times_s=t_dense.times_s, repeats=repeats,
            max_abs_diff=diff, agree=bool(diff <= tol), tolerance=tol, prng_impl=impl,
            enable_x64=x64,
            notes=f"{winner} wins; sparse {us_per_step(t_sparse.median_s, T):.1f} us/step, "
                  f"dense {us_per_step(t_dense.median_s, T):.1f} us/step",
            extra=dict(sparse_us_per_step=us_per_step(t_sparse.median_s, T),
                       dense_us_per_step=us_per_step(t_dense.median_s, T),
                       dense_matrix_bytes=n * n * np.dtype(dtype).itemsize,
                       table_bytes=n * k * (4 + np.dtype(dtype).itemsize + 1)),
            reference_label="dense backend",
        ))
    return rows
