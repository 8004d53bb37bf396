"""Benchmarks of the foundation: the runner, the mixing backends, graph sequences, the PRNG, memory.

Every benchmark times a ``decentral`` computation against a reference measured in the same run
and reports ``ratio = reference / decentral``; every row that can be checked also says whether
both sides computed the same numbers.

* ``consensus.plain`` — plain consensus ``x(t+1) = W_t x(t)`` (a periodic stack of P
  row-stochastic Erdős–Rényi graphs, dense backend) for S seeds x N agents x T steps through
  :func:`decentral.runner.run`, against a numpy loop over t of ``X @ W_t.T`` (the einsum
  ``'ij,sj->si'`` through BLAS, vectorised over seeds), in float32 and float64; final states and
  records must agree.
* ``mixing.dense_vs_sparse`` — the same consensus on a sparse circulant graph with
  ``backend="sparse"`` (gather + weighted sum over K in-neighbours) against ``backend="dense"``
  (one ``W @ x``): ratio = dense / sparse, for several N.
* ``graphs.random_edge_drops`` — a :func:`~decentral.graphs.random_edge_drops` sequence drawn
  per step inside the runner (shared key) against a periodic stack of the very same T graphs
  precomputed on the host: the cost of the per-step Bernoulli draw and re-weighting. A per-seed
  variant (each seed its own graphs) shows the cost of S x (base edges) draws per step.
* ``prng.threefry_vs_rbg`` — a step that draws S x N standard normals per step (noisy
  consensus), under ``threefry2x32`` (JAX's default) and ``rbg`` (and ``unsafe_rbg``); the
  threefry row is compared with a numpy loop using PCG64 normals.
* ``memory.records`` — the bytes of the runner's records for horizons T = 10^3 and 10^5 with
  the same number of records: equal (records are O(recorded points), not O(T)).

Sizes: :data:`SIZES` (``"default"`` about 1 minute on 2 CPU cores, ``"quick"`` about 15 s,
``"tiny"`` for the smoke test). At the small sizes the wall time is mostly compilation: every
runner configuration compiles once, about 1 s on 2 CPU cores, reported in the ``compile``
column and excluded from the timed medians. Entry point: :func:`run_benchmarks`, or
``python -m benchmarks``.

Example:
    >>> from benchmarks.bench_foundation import run_benchmarks
    >>> rows = run_benchmarks("quick", only=["mixing"])
    >>> [round(r.ratio, 1) for r in rows]        # dense time / sparse time per N
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import BenchResult, _ratio, jax_config, measure, tree_nbytes
from decentral.graphs import (
    circulant,
    erdos_renyi,
    mix,
    periodic,
    random_edge_drops,
    ring,
    row_stochastic,
    static,
)
from decentral.graphs.sequences import GraphSequence
from decentral.runner import Algorithm, run, seed_keys

__all__ = [
    "SIZES",
    "REPEATS",
    "BENCHMARKS",
    "ConsensusState",
    "NoisyState",
    "consensus_algorithm",
    "noisy_consensus_algorithm",
    "initial_states",
    "numpy_consensus",
    "numpy_noisy_consensus",
    "bench_consensus",
    "bench_backends",
    "bench_random_graphs",
    "bench_prng",
    "bench_memory",
    "selected",
    "run_benchmark",
    "run_benchmarks",
]

# --------------------------------------------------------------------------------------------
# sizes
# --------------------------------------------------------------------------------------------

SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "default": {
        "consensus.plain": dict(S=256, N=32, T=2000, record_every=100,
                                dtypes=("float32", "float64"), one_chunk=True),
        "mixing.dense_vs_sparse": dict(S=32, cases=((64, 2000), (512, 500), (2048, 100)),
                                       offsets=(1, -1, 7, -7)),
        "graphs.random_edge_drops": dict(S=256, T=2000,
                                         cases=(("dense", 32, "erdos_renyi"),
                                                ("sparse", 64, "circulant")),
                                         drop_prob=0.3, per_seed=True),
        "prng.threefry_vs_rbg": dict(S=256, N=32, T=2000,
                                     impls=("threefry2x32", "rbg", "unsafe_rbg")),
        "memory.records": dict(S=8, N=16, horizons=(1_000, 100_000), n_records=10),
    },
    "quick": {
        "consensus.plain": dict(S=64, N=16, T=400, record_every=40,
                                dtypes=("float32", "float64"), one_chunk=False),
        "mixing.dense_vs_sparse": dict(S=8, cases=((1024, 40),),
                                       offsets=(1, -1, 7, -7)),
        "graphs.random_edge_drops": dict(S=64, T=400, cases=(("dense", 16, "erdos_renyi"),),
                                         drop_prob=0.3, per_seed=False),
        "prng.threefry_vs_rbg": dict(S=64, N=16, T=400, impls=("threefry2x32", "rbg")),
        "memory.records": dict(S=4, N=8, horizons=(1_000, 100_000), n_records=10),
    },
    "tiny": {
        "consensus.plain": dict(S=4, N=6, T=40, record_every=10,
                                dtypes=("float32", "float64"), one_chunk=False),
        "mixing.dense_vs_sparse": dict(S=3, cases=((16, 20),), offsets=(1, -1, 3)),
        "graphs.random_edge_drops": dict(S=4, T=20, cases=(("dense", 6, "erdos_renyi"),),
                                         drop_prob=0.3, per_seed=False),
        "prng.threefry_vs_rbg": dict(S=4, N=6, T=40, impls=("threefry2x32", "rbg")),
        "memory.records": dict(S=2, N=4, horizons=(100, 1_000), n_records=10),
    },
}
"""Benchmark sizes per mode: ``{mode: {benchmark id: keyword arguments}}``."""

REPEATS: dict[str, int] = {"default": 5, "quick": 2, "tiny": 1}
"""Timed repeats per side (after one warm-up call) per mode."""

_TOL = {"float32": 1e-4, "float64": 1e-10}
_DTYPES = {"float32": jnp.float32, "float64": jnp.float64}


def _x64(dtype: str):
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}.")
    return jax_config(jax_enable_x64=dtype == "float64")


def _prng_impl() -> str:
    return str(jax.config.jax_default_prng_impl)


# --------------------------------------------------------------------------------------------
# the algorithms being timed
# --------------------------------------------------------------------------------------------


class ConsensusState(NamedTuple):
    """Per-seed state of plain consensus: ``x [N]``."""

    x: jax.Array


class NoisyState(NamedTuple):
    """Per-seed state of noisy consensus: ``x [N]`` and the running sum of squared noise."""

    x: jax.Array
    noise_sq: jax.Array


def consensus_algorithm(seq: GraphSequence, n: int, dtype: str, *, name: str,
                        per_seed_graph: bool = False) -> Algorithm:
    """Plain consensus ``x(t+1) = W_t x(t)`` with ``x(0) ~ N(0, I_N)`` drawn from the init key.

    Args:
        seq: graph sequence (any form and backend) with ``seq.n == n``.
        n: number of agents.
        dtype: ``"float32"`` or ``"float64"`` (build ``seq`` under the same x64 setting).
        name: algorithm name (each Algorithm object compiles once in the runner).
        per_seed_graph: pass the step key to ``seq.at`` (random sequences drawn per seed).

    Example:
        >>> alg = consensus_algorithm(static(ring(4), rule="row"), 4, "float32", name="c")
        >>> run(alg, None, seeds=[0], num_steps=10).final_state.x.shape
        (1, 4)
    """
    dt = _DTYPES[dtype]

    def init(key, params):
        return ConsensusState(jax.random.normal(key, (n,), dt))

    def step(key, state, params, t, x_t):
        graph = seq.at(t, key) if per_seed_graph else seq.at(t)
        return ConsensusState(mix(graph, state.x).astype(dt)), None

    return Algorithm(init, step, name=name)


def noisy_consensus_algorithm(W: jax.Array, n: int, dtype: str, *, name: str) -> Algorithm:
    """Noisy consensus ``x(t+1) = W x(t) + sigma * xi(t)``, ``xi(t) ~ N(0, I_N)`` from the step
    key (N normals per seed per step); params is ``sigma``. The state also sums ``|xi(t)|^2``
    so the draws can be checked (mean ``N`` per step).

    Example:
        >>> alg = noisy_consensus_algorithm(jnp.eye(3), 3, "float32", name="n")
        >>> run(alg, 0.1, seeds=[0], num_steps=10).final_state.noise_sq.shape
        (1,)
    """
    dt = _DTYPES[dtype]

    def init(key, params):
        return NoisyState(jax.random.normal(key, (n,), dt), jnp.zeros((), dt))

    def step(key, state, params, t, x_t):
        xi = jax.random.normal(key, (n,), dt)
        x = mix(W, state.x) + params * xi
        return NoisyState(x.astype(dt), state.noise_sq + jnp.sum(xi * xi)), None

    return Algorithm(init, step, name=name)


def initial_states(algorithm: Algorithm, params: Any, seeds: Sequence[int]) -> Any:
    """The states ``algorithm.init`` gives each seed, from the runner's public key derivation
    (:func:`decentral.runner.seed_keys`), stacked over seeds — the reference's starting point."""
    keys = jnp.stack([seed_keys(int(s))[0] for s in seeds])
    return jax.vmap(algorithm.init, in_axes=(0, None))(keys, params)


# --------------------------------------------------------------------------------------------
# numpy references
# --------------------------------------------------------------------------------------------


def numpy_consensus(weights: np.ndarray, x0: np.ndarray, num_steps: int,
                    record_every: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference: ``X <- X @ W_{t mod P}.T`` for t = 0..T-1 (a Python loop over time,
    vectorised over seeds; the einsum ``'ij,sj->si'`` through BLAS).

    Args:
        weights: ``[P, N, N]`` periodic stack (dtype = the run's dtype).
        x0: ``[S, N]`` initial states.
        num_steps: T.
        record_every: keep ``X`` after every this many steps.

    Returns:
        ``(final [S, N], records [S, T // record_every, N])``.
    """
    wt = np.ascontiguousarray(np.swapaxes(weights, 1, 2))
    period = wt.shape[0]
    x = np.array(x0, copy=True)
    records = np.empty((x.shape[0], num_steps // record_every, x.shape[1]), x.dtype)
    for t in range(num_steps):
        x = x @ wt[t % period]
        if (t + 1) % record_every == 0:
            records[:, (t + 1) // record_every - 1] = x
    return x, records


def numpy_noisy_consensus(W: np.ndarray, x0: np.ndarray, sigma: float, num_steps: int,
                          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Reference: ``X <- X @ W.T + sigma * xi`` with numpy's PCG64 ``standard_normal``
    (``[S, N]`` per step, the run's dtype); returns ``(final X, per-seed sum of xi^2)``.
    Another random stream than JAX's, so only the cost (and the noise statistics) compare."""
    rng = np.random.default_rng(seed)
    wt = np.ascontiguousarray(W.T)
    x = np.array(x0, copy=True)
    sq = np.zeros(x.shape[0], x.dtype)
    scale = x.dtype.type(sigma)
    for _ in range(num_steps):
        xi = rng.standard_normal(x.shape, dtype=x.dtype)
        x = x @ wt + scale * xi
        sq += np.einsum("sn,sn->s", xi, xi)
    return x, sq


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _max_abs_diff(pairs: Sequence[tuple[Any, Any]]) -> float:
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


def _runner(alg: Algorithm, params: Any, seeds: np.ndarray, num_steps: int, record_every: int,
            **kwargs: Any) -> Callable[[], Any]:
    return lambda: run(alg, params, seeds, num_steps, record_every=record_every,
                       progress=False, **kwargs)


def _us_per_step(seconds: float, steps: int) -> float:
    return seconds / steps * 1e6


# --------------------------------------------------------------------------------------------
# 1. plain consensus: runner vs numpy
# --------------------------------------------------------------------------------------------


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
        with _x64(dtype):
            seq = periodic(w_host, backend="dense")
            alg = consensus_algorithm(seq, N, dtype, name=f"bench.consensus.{dtype}")
            timing, res = measure(_runner(alg, None, seeds, T, record_every), repeats)
            impl, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
            x0 = np.asarray(initial_states(alg, None, seeds).x)
            extra: dict[str, Any] = {}
            if one_chunk:
                t1, res1 = measure(_runner(alg, None, seeds, T, record_every, chunk_size=T),
                                   repeats)
                extra.update(one_chunk_s=t1.median_s, one_chunk_compile_s=t1.compile_s,
                             one_chunk_equal=bool(np.array_equal(res1.final_state.x,
                                                                 res.final_state.x)))
        w_ref = w_host.astype(dtype)
        ref_timing, (ref_final, ref_records) = measure(
            lambda w=w_ref, x=x0: numpy_consensus(w, x, T, record_every), repeats)
        diff = _max_abs_diff([(res.final_state.x, ref_final), (res.records.x, ref_records)])
        tol = _TOL[dtype]
        extra.update(decentral_us_per_step=_us_per_step(timing.median_s, T),
                     reference_us_per_step=_us_per_step(ref_timing.median_s, T),
                     final_spread=float(np.ptp(ref_final, axis=1).max()))
        notes = f"{_us_per_step(timing.median_s, T):.1f} us/step (S x N matvec)"
        if one_chunk:
            notes += f"; chunk_size=T: {extra['one_chunk_s'] * 1e3:.1f} ms"
        rows.append(BenchResult(
            name="consensus.plain", variant="runner vs numpy", dtype=dtype,
            size=dict(S=S, N=N, T=T, record_every=record_every, P=period),
            metric="time_s", value=timing.median_s,
            reference="numpy: Python loop over t of X @ W_t.T (BLAS einsum 'ij,sj->si' "
                      "vectorised over seeds), same records",
            reference_value=ref_timing.median_s, ratio=_ratio(ref_timing.median_s,
                                                              timing.median_s),
            compile_s=timing.compile_s, reference_compile_s=None, times_s=timing.times_s,
            reference_times_s=ref_timing.times_s, repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            notes=notes, extra=extra,
        ))
    return rows


# --------------------------------------------------------------------------------------------
# 2. dense vs sparse mixing backends
# --------------------------------------------------------------------------------------------


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
        with _x64(dtype):
            algs = {b: consensus_algorithm(static(W, backend=b), n, dtype,
                                           name=f"bench.backend.{b}.{n}")
                    for b in ("dense", "sparse")}
            t_dense, r_dense = measure(_runner(algs["dense"], None, seeds, T, record_every),
                                       repeats)
            t_sparse, r_sparse = measure(_runner(algs["sparse"], None, seeds, T, record_every),
                                         repeats)
            impl, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
        diff = _max_abs_diff([(r_sparse.final_state.x, r_dense.final_state.x),
                              (r_sparse.records.x, r_dense.records.x)])
        tol = _TOL[dtype]
        k = len(set(int(o) % n for o in offsets) - {0}) + 1
        winner = "sparse" if t_sparse.median_s < t_dense.median_s else "dense"
        rows.append(BenchResult(
            name="mixing.dense_vs_sparse", variant=f"sparse vs dense, N={n}", dtype=dtype,
            size=dict(S=S, N=n, K=k, T=T, record_every=record_every),
            metric="time_s", value=t_sparse.median_s,
            reference="decentral backend='dense' (one W @ x per step, N x N), same graph",
            reference_value=t_dense.median_s,
            ratio=_ratio(t_dense.median_s, t_sparse.median_s),
            compile_s=t_sparse.compile_s, reference_compile_s=t_dense.compile_s,
            times_s=t_sparse.times_s, reference_times_s=t_dense.times_s, repeats=repeats,
            max_abs_diff=diff, agree=bool(diff <= tol), tolerance=tol, prng_impl=impl,
            enable_x64=x64,
            notes=f"{winner} wins; sparse {_us_per_step(t_sparse.median_s, T):.1f} us/step, "
                  f"dense {_us_per_step(t_dense.median_s, T):.1f} us/step",
            extra=dict(sparse_us_per_step=_us_per_step(t_sparse.median_s, T),
                       dense_us_per_step=_us_per_step(t_dense.median_s, T),
                       dense_matrix_bytes=n * n * np.dtype(dtype).itemsize,
                       table_bytes=n * k * (4 + np.dtype(dtype).itemsize + 1)),
        ))
    return rows


# --------------------------------------------------------------------------------------------
# 3. random graph sequences: per-step draws vs a precomputed stack
# --------------------------------------------------------------------------------------------


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
        with _x64(dtype):
            rand = random_edge_drops(base, drop_prob, rule="row", key=0, backend=backend)
            stack = periodic(rand.weights_host(T), backend=backend)
            alg_r = consensus_algorithm(rand, n, dtype, name=f"bench.random.{backend}.{n}")
            alg_p = consensus_algorithm(stack, n, dtype, name=f"bench.stack.{backend}.{n}")
            t_r, r_r = measure(_runner(alg_r, None, seeds, T, record_every), repeats)
            t_p, r_p = measure(_runner(alg_p, None, seeds, T, record_every), repeats)
            impl, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
            if per_seed:
                t_ps = record_every if per_seed_steps is None else int(per_seed_steps)
                rep_ps = min(repeats, 3)
                rand_s = random_edge_drops(base, drop_prob, rule="row",
                                           shared_across_seeds=False, backend=backend)
                alg_s = consensus_algorithm(rand_s, n, dtype, per_seed_graph=True,
                                            name=f"bench.random_per_seed.{backend}.{n}")
                t_s, r_s = measure(_runner(alg_s, None, seeds, t_ps, record_every), rep_ps)
                t_p_short, _ = measure(_runner(alg_p, None, seeds, t_ps, record_every), rep_ps)
                x0 = np.asarray(initial_states(alg_s, None, seeds).x)
        diff = _max_abs_diff([(r_r.final_state.x, r_p.final_state.x),
                              (r_r.records.x, r_p.records.x)])
        tol = _TOL[dtype]
        size = dict(S=S, N=n, T=T, base=base_kind, drop_prob=drop_prob)
        draw_us = _us_per_step(t_r.median_s - t_p.median_s, T)
        rows.append(BenchResult(
            name="graphs.random_edge_drops", variant=f"shared draw, {backend}", dtype=dtype,
            size=size, metric="time_s", value=t_r.median_s,
            reference="decentral periodic stack of the same T graphs (precomputed on the host "
                      "by weights_host(T), read as W[t % T])",
            reference_value=t_p.median_s, ratio=_ratio(t_p.median_s, t_r.median_s),
            compile_s=t_r.compile_s, reference_compile_s=t_p.compile_s, times_s=t_r.times_s,
            reference_times_s=t_p.times_s, repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            notes=f"draw + re-weight costs {draw_us:.1f} us/step over the stack",
            extra=dict(draw_us_per_step=draw_us,
                       host_stack_bytes=T * n * n * np.dtype(dtype).itemsize),
        ))
        if per_seed:
            final = np.asarray(r_s.final_state.x, dtype=np.float64)
            lo, hi = x0.min(axis=1, keepdims=True), x0.max(axis=1, keepdims=True)
            slack = 1e-5
            outside = float(np.max(np.maximum(lo - final, final - hi), initial=0.0))
            ok = bool(np.all(np.isfinite(final)) and outside <= slack)
            per_seed_us = _us_per_step(t_s.median_s - t_p_short.median_s, t_ps)
            rows.append(BenchResult(
                name="graphs.random_edge_drops", variant=f"per-seed draw, {backend}",
                dtype=dtype, size={**size, "T": t_ps}, metric="time_s", value=t_s.median_s,
                reference="decentral periodic stack of shared graphs (as above) for as many "
                          "steps; no equal reference: check = final states inside each seed's "
                          "initial range",
                reference_value=t_p_short.median_s,
                ratio=_ratio(t_p_short.median_s, t_s.median_s),
                compile_s=t_s.compile_s, reference_compile_s=t_p.compile_s,
                times_s=t_s.times_s, reference_times_s=t_p_short.times_s, repeats=rep_ps,
                max_abs_diff=max(outside, 0.0), agree=ok, tolerance=slack, prng_impl=impl,
                enable_x64=x64,
                notes=f"S x edges draws per step: {per_seed_us:.1f} us/step over the stack",
                extra=dict(draw_us_per_step=per_seed_us),
            ))
    return rows


# --------------------------------------------------------------------------------------------
# 4. PRNG implementations
# --------------------------------------------------------------------------------------------


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
    with _x64(dtype):
        W = jnp.asarray(W_host, jnp.float32)
        base_alg = consensus_algorithm(static(W_host), N, dtype, name="bench.prng.no_noise")
        t_plain, _ = measure(_runner(base_alg, None, seeds, T, T // 10 or 1), repeats)
    first = None
    for impl in impls:
        with _x64(dtype), jax_config(jax_default_prng_impl=impl):
            alg = noisy_consensus_algorithm(W, N, dtype, name=f"bench.prng.{impl}")
            timing, res = measure(_runner(alg, sigma, seeds, T, T // 10 or 1), repeats)
            impl_now, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
            x0 = np.asarray(initial_states(alg, sigma, seeds).x) if first is None else None
        mean_sq = float(np.sum(np.asarray(res.final_state.noise_sq, np.float64)) / n_draws)
        dev = abs(mean_sq - 1.0)
        ns_per_normal = (timing.median_s - t_plain.median_s) / n_draws * 1e9
        extra = dict(noise_free_s=t_plain.median_s, ns_per_normal=ns_per_normal,
                     mean_noise_sq=mean_sq, normals=n_draws)
        if first is None:
            ref_timing, (_, ref_sq) = measure(
                lambda x=x0: numpy_noisy_consensus(W_host.astype(dtype), x, sigma, T), repeats)
            extra["reference_mean_noise_sq"] = float(np.sum(ref_sq, dtype=np.float64) / n_draws)
            reference = ("numpy: Python loop over t of X @ W.T + sigma * PCG64 standard_normal"
                         "([S, N]) (another stream: only cost and noise statistics compare)")
            ref_value, ref_times, ref_compile = ref_timing.median_s, ref_timing.times_s, None
            first = (impl, timing)
        else:
            reference = f"decentral under {first[0]} (same step, same run)"
            ref_value, ref_times = first[1].median_s, first[1].times_s
            ref_compile = first[1].compile_s
        rows.append(BenchResult(
            name="prng.threefry_vs_rbg", variant=impl, dtype=dtype,
            size=dict(S=S, N=N, T=T, normals_per_step=S * N), metric="time_s",
            value=timing.median_s, reference=reference, reference_value=ref_value,
            ratio=_ratio(ref_value, timing.median_s), compile_s=timing.compile_s,
            reference_compile_s=ref_compile, times_s=timing.times_s,
            reference_times_s=ref_times, repeats=repeats, max_abs_diff=dev,
            agree=bool(dev <= tol and np.all(np.isfinite(res.final_state.x))), tolerance=tol,
            prng_impl=impl_now, enable_x64=x64,
            notes=f"{ns_per_normal:.1f} ns/normal over noise-free "
                  f"{t_plain.median_s * 1e3:.1f} ms; check mean xi^2 = 1",
            extra=extra,
        ))
    return rows


# --------------------------------------------------------------------------------------------
# 5. memory of records
# --------------------------------------------------------------------------------------------


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
    with _x64(dtype):
        for T in horizons:
            if T % n_records:
                raise ValueError(f"horizon {T} is not a multiple of n_records = {n_records}.")
            alg = consensus_algorithm(static(W), N, dtype, name=f"bench.memory.{T}")
            timing, res = measure(_runner(alg, None, seeds, T, T // n_records), repeats)
            measured.append((T, timing, res, _prng_impl(), bool(jax.config.jax_enable_x64)))
    rec_bytes = [tree_nbytes(res.records) for _, _, res, _, _ in measured]
    all_equal = len(set(rec_bytes)) == 1
    rows = []
    itemsize = np.dtype(dtype).itemsize
    for (T, timing, res, impl, x64), nbytes in zip(measured, rec_bytes, strict=True):
        full = S * T * N * itemsize
        rows.append(BenchResult(
            name="memory.records", variant=f"T={T}", dtype=dtype,
            size=dict(S=S, N=N, T=T, record_every=T // n_records, n_records=n_records),
            metric="bytes", value=float(nbytes),
            reference="records of every step (record_every=1): S*T*N*itemsize bytes "
                      "(computed, not allocated)",
            reference_value=float(full), ratio=_ratio(full, nbytes),
            compile_s=timing.compile_s, times_s=timing.times_s, repeats=repeats,
            max_abs_diff=float(abs(nbytes - rec_bytes[0])), agree=all_equal, tolerance=0.0,
            prng_impl=impl, enable_x64=x64,
            notes=f"records equal across T: {all_equal}; run {timing.median_s * 1e3:.1f} ms",
            extra=dict(record_bytes=nbytes, final_state_bytes=tree_nbytes(res.final_state),
                       record_steps_bytes=int(res.record_steps.nbytes), run_s=timing.median_s),
        ))
    return rows


# --------------------------------------------------------------------------------------------
# registry and driver
# --------------------------------------------------------------------------------------------

BENCHMARKS: dict[str, Callable[..., list[BenchResult]]] = {
    "consensus.plain": bench_consensus,
    "mixing.dense_vs_sparse": bench_backends,
    "graphs.random_edge_drops": bench_random_graphs,
    "prng.threefry_vs_rbg": bench_prng,
    "memory.records": bench_memory,
}
"""Benchmark id -> function; ``--only`` selects ids by substring."""


def selected(only: Sequence[str] | None = None) -> list[str]:
    """Benchmark ids whose id contains any pattern of ``only`` (all ids when None/empty).

    Raises:
        ValueError: if no benchmark matches.
    """
    pats = [p for item in (only or []) for p in str(item).split(",") if p]
    names = [n for n in BENCHMARKS if not pats or any(p in n for p in pats)]
    if not names:
        raise ValueError(f"--only {pats} matches no benchmark; ids are {list(BENCHMARKS)}.")
    return names


def run_benchmark(name: str, size: str = "default", repeats: int | None = None
                  ) -> list[BenchResult]:
    """Run one benchmark at one of the :data:`SIZES` modes."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}.")
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; ids are {list(BENCHMARKS)}.")
    kwargs = dict(SIZES[size][name])
    kwargs["repeats"] = REPEATS[size] if repeats is None else int(repeats)
    if name == "memory.records":
        kwargs["repeats"] = 1      # the bytes are the point; one timed call suffices
    return BENCHMARKS[name](**kwargs)


def run_benchmarks(size: str = "default", only: Sequence[str] | None = None,
                   repeats: int | None = None,
                   log: Callable[[str], Any] | None = None) -> list[BenchResult]:
    """Run the selected benchmarks (see :func:`selected`) and return every row.

    Example:
        >>> rows = run_benchmarks("tiny", only=["memory"])
        >>> rows[0].agree
        True
    """
    rows: list[BenchResult] = []
    for name in selected(only):
        if log is not None:
            log(f"running {name} ({size}) ...")
        rows.extend(run_benchmark(name, size, repeats))
    return rows
