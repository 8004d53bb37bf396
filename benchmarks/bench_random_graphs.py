"""Benchmark ``graphs.random_edge_drops``: random graphs drawn per step against a stored stack.

Measured: plain consensus over a :func:`~decentral.graphs.random_edge_drops` sequence drawn per
step inside the runner (one key shared by the seeds), float32, on a dense Erdős–Rényi and a
sparse circulant base graph. Reference: a periodic stack of the very same T graphs precomputed
on the host (``seq.weights_host(T)``, read as ``W[t % T]``): the difference is the cost of the
per-step Bernoulli draw and re-weighting, and the two runs must agree. A per-seed variant (each
seed its own graphs) shows the cost of S x (base edges) draws per step; it has no equal
reference, so its check is that every final state lies inside its seed's initial range.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import numpy as np

from benchmarks.consensus_workload import (
    CONSENSUS_PARAMS,
    TOLERANCES,
    consensus_algorithm,
    initial_states,
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
from decentral.graphs import circulant, erdos_renyi, periodic, random_edge_drops

__all__ = ["bench_random_graphs"]


def _base_graph(kind: str, n: int, edge_prob: float) -> np.ndarray:
    if kind == "erdos_renyi":
        return erdos_renyi(n, edge_prob, kind="strong", seed=0)
    if kind == "circulant":
        return circulant(n, [1, -1, 7 % n or 1, -(7 % n or 1)])
    raise ValueError(f"unknown base graph {kind!r}; use 'erdos_renyi' or 'circulant'.")


def bench_random_graphs(*, S: int, T: int, cases: Sequence[tuple[str, int, str]],
                        drop_prob: float = 0.3, per_seed: bool = False, edge_prob: float = 0.3,
                        repeats: int = 3, per_seed_steps: int | None = None
                        ) -> list[BenchResult]:
    """A ``random_edge_drops`` sequence drawn inside the runner vs a periodic stack of the same
    T graphs, precomputed on the host with ``seq.weights_host(T)``.

    ``cases`` are ``(backend, N, base)`` with base ``"erdos_renyi"`` (strongly connected,
    ``edge_prob``) or ``"circulant"`` (offsets ±1, ±7). The shared-key rows must agree with the
    stack exactly up to summation order. With ``per_seed`` a further row draws each seed's own
    graphs (``shared_across_seeds=False``: S x edges uniform draws per step); there is no
    equal reference, so its check is that every final state lies inside its seed's initial
    range (mixing is convex). Per-seed draws are slow, so that row runs ``per_seed_steps``
    steps (default: one record interval, T / 10) against the stack run for as many steps, with
    at most 3 repeats.
    """
    rows = []
    seeds = np.arange(S)
    dtype = "float32"
    for backend, n, base_kind in cases:
        record_every = max(T // 10, 1)
        base = _base_graph(base_kind, n, edge_prob)
        with x64_for(dtype):
            rand = random_edge_drops(base, drop_prob, rule="row", key=0, backend=backend)
            stack = periodic(rand.weights_host(T), backend=backend)
            alg_r = consensus_algorithm(rand, dtype)
            alg_p = consensus_algorithm(stack, dtype)
            t_r, r_r = measure(runner_call(alg_r, CONSENSUS_PARAMS, seeds, T, record_every),
                               repeats)
            t_p, r_p = measure(runner_call(alg_p, CONSENSUS_PARAMS, seeds, T, record_every),
                               repeats)
            impl, x64 = prng_impl(), bool(jax.config.jax_enable_x64)
            if per_seed:
                t_ps = record_every if per_seed_steps is None else int(per_seed_steps)
                rep_ps = min(repeats, 3)
                rand_s = random_edge_drops(base, drop_prob, rule="row",
                                           shared_across_seeds=False, backend=backend)
                alg_s = consensus_algorithm(rand_s, dtype, per_seed_graph=True)
                t_s, r_s = measure(runner_call(alg_s, CONSENSUS_PARAMS, seeds, t_ps,
                                               record_every), rep_ps)
                t_p_short, _ = measure(runner_call(alg_p, CONSENSUS_PARAMS, seeds, t_ps,
                                                   record_every), rep_ps)
                x0 = np.asarray(initial_states(alg_s, CONSENSUS_PARAMS, seeds).x)
        diff = max_abs_diff([(r_r.final_state.x, r_p.final_state.x),
                             (r_r.records.x, r_p.records.x)])
        tol = TOLERANCES[dtype]
        size = dict(S=S, N=n, T=T, base=base_kind, drop_prob=drop_prob, backend=backend)
        draw_text, draw_us = cost_text(t_r.median_s - t_p.median_s, timing_noise(t_r, t_p),
                                       per=T, what="step")
        rows.append(BenchResult(
            name="graphs.random_edge_drops", variant=f"shared draw, {backend}", dtype=dtype,
            size=size, metric="time_s", value=t_r.median_s,
            reference="decentral periodic stack of the same T graphs (precomputed on the host "
                      "by weights_host(T), read as W[t % T])",
            reference_value=t_p.median_s, ratio=ratio(t_p.median_s, t_r.median_s),
            compile_s=t_r.compile_s, reference_compile_s=t_p.compile_s, times_s=t_r.times_s,
            reference_times_s=t_p.times_s, repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            notes=f"draw + re-weight cost over the stack: {draw_text}",
            extra=dict(draw_us_per_step=draw_us,
                       draw_us_per_step_raw=us_per_step(t_r.median_s - t_p.median_s, T),
                       host_stack_bytes=T * n * n * np.dtype(dtype).itemsize),
            reference_label="precomputed stack",
        ))
        if per_seed:
            final = np.asarray(r_s.final_state.x, dtype=np.float64)
            lo, hi = x0.min(axis=1, keepdims=True), x0.max(axis=1, keepdims=True)
            slack = 1e-5
            outside = float(np.max(np.maximum(lo - final, final - hi), initial=0.0))
            ok = bool(np.all(np.isfinite(final)) and outside <= slack)
            per_seed_text, per_seed_us = cost_text(t_s.median_s - t_p_short.median_s,
                                                   timing_noise(t_s, t_p_short), per=t_ps,
                                                   what="step")
            rows.append(BenchResult(
                name="graphs.random_edge_drops", variant=f"per-seed draw, {backend}",
                dtype=dtype, size={**size, "T": t_ps}, metric="time_s", value=t_s.median_s,
                reference="decentral periodic stack of shared graphs (as above) for as many "
                          "steps; no equal reference: check = final states inside each seed's "
                          "initial range",
                reference_value=t_p_short.median_s,
                ratio=ratio(t_p_short.median_s, t_s.median_s),
                compile_s=t_s.compile_s, reference_compile_s=t_p.compile_s,
                times_s=t_s.times_s, reference_times_s=t_p_short.times_s, repeats=rep_ps,
                max_abs_diff=max(outside, 0.0), agree=ok, tolerance=slack, prng_impl=impl,
                enable_x64=x64,
                notes=f"S x edges draws per step, cost over the stack: {per_seed_text}",
                extra=dict(draw_us_per_step=per_seed_us,
                           draw_us_per_step_raw=us_per_step(t_s.median_s - t_p_short.median_s,
                                                            t_ps)),
                reference_label="shared-draw stack",
            ))
    return rows
