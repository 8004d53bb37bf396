"""Benchmark ``memory.records``: the runner's records are O(recorded points), not O(T).

Measured: the bytes of the runner's records (``res.records``) of plain consensus on a ring,
float32, for horizons T = 10^3 and 10^5 (``tiny``: 10^2 and 10^3) with the same number of
records: they must be equal. Reference: what recording every step would hold,
``S * T * N * itemsize`` bytes (computed, not allocated).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import numpy as np

from benchmarks.consensus_workload import CONSENSUS_PARAMS, consensus_algorithm, runner_call
from benchmarks.harness import BenchResult, measure, prng_impl, ratio, tree_nbytes, x64_for
from decentral.graphs import ring, row_stochastic, static

__all__ = ["bench_memory"]


def bench_memory(*, S: int, N: int, horizons: Sequence[int], n_records: int = 10,
                 repeats: int = 1) -> list[BenchResult]:
    """Bytes of the runner's records (``res.records``) for each horizon T with
    ``record_every = T / n_records``: equal for every T (O(recorded points), never O(T)).

    The reference is what recording every step would hold, ``S * T * N * itemsize`` (computed,
    not allocated). Each row also carries the run time (``extra``).
    """
    dtype = "float32"
    W = row_stochastic(ring(N, directed=False))
    seeds = np.arange(S)
    measured = []
    with x64_for(dtype):
        for T in horizons:
            if T % n_records:
                raise ValueError(f"horizon {T} is not a multiple of n_records = {n_records}.")
            alg = consensus_algorithm(static(W), dtype)
            timing, res = measure(runner_call(alg, CONSENSUS_PARAMS, seeds, T, T // n_records),
                                  repeats)
            measured.append((T, timing, res, prng_impl(), bool(jax.config.jax_enable_x64)))
    rec_bytes = [tree_nbytes(res.records) for _, _, res, _, _ in measured]
    all_equal = len(set(rec_bytes)) == 1
    rows = []
    itemsize = np.dtype(dtype).itemsize
    for (T, timing, res, impl, x64), nbytes in zip(measured, rec_bytes, strict=True):
        full = S * T * N * itemsize
        rows.append(BenchResult(
            name="memory.records", variant=f"T={T}", dtype=dtype,
            size=dict(S=S, N=N, T=T, record_every=T // n_records, n_records=n_records,
                      backend="dense"),
            metric="bytes", value=float(nbytes),
            reference="records of every step (record_every=1): S*T*N*itemsize bytes "
                      "(computed, not allocated)",
            reference_value=float(full), ratio=ratio(full, nbytes),
            compile_s=timing.compile_s, times_s=timing.times_s, repeats=repeats,
            max_abs_diff=float(abs(nbytes - rec_bytes[0])), agree=all_equal, tolerance=0.0,
            prng_impl=impl, enable_x64=x64,
            notes=f"records equal across T: {all_equal}; run {timing.median_s * 1e3:.1f} ms",
            extra=dict(record_bytes=nbytes, final_state_bytes=tree_nbytes(res.final_state),
                       record_steps_bytes=int(res.record_steps.nbytes), run_s=timing.median_s),
            reference_label="every-step records",
        ))
    return rows
