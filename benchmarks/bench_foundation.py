"""Benchmarks of the foundation: the runner, the mixing backends, graph sequences, the PRNG, memory.

Every benchmark times a ``decentral`` computation against a reference measured in the same run
and reports ``ratio = reference / decentral``; every row that can be checked also says whether
both sides computed the same numbers. The algorithm timed is :func:`decentral.consensus.consensus`
(plain consensus ``x(t+1) = W_t x(t)``, ``x(0) ~ N(0, I)`` drawn from each seed's init key).

* ``runner.overhead`` — what the runner costs over the computation itself: plain consensus on a
  static dense graph (S seeds x N agents x T steps, float32) through :func:`decentral.runner.run`
  at its default chunking and with ``chunk_size=T``, against a bare ``jax.jit`` of the same step
  in a ``lax.scan`` vmapped over seeds (same keys, same record points, same devices). The rows
  say ``runner/bare`` (target <= 1.10); a third row fits ``time = a + b * n_chunks`` over runs
  of 1, 4 and 16 chunks at a short horizon: ``b`` is the host cost per chunk, ``a`` minus the
  bare run of that horizon the host cost per call.
* ``runner.sharding`` — the same run with the seeds sharded over 1 CPU device vs one per core,
  each in a fresh Python (the device count is fixed when JAX starts): the speed-up of using
  every core.
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

Sizes: :data:`SIZES` (``"default"`` a few minutes on 2 CPU cores, ``"quick"`` under a minute,
``"tiny"`` for the smoke test); every row carries the sizes it was measured at. At the small sizes
the wall time is mostly compilation: every runner configuration compiles once, about 1 s on 2
CPU cores, reported in the ``compile`` column and excluded from the timed medians. A cost derived
as a difference of two timings is never printed negative: below the spread of the repeats it
reads ``< measurement noise``. Entry point: :func:`run_benchmarks`, or ``python -m benchmarks``.

Example:
    >>> from benchmarks.bench_foundation import run_benchmarks
    >>> rows = run_benchmarks("tiny", only=["mixing"])
    >>> [r.name for r in rows], all(r.ratio > 0 for r in rows)   # ratio: dense / sparse time
    (['mixing.dense_vs_sparse'], True)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from benchmarks import BenchResult, Timing, _ratio, cost_text, jax_config, measure, tree_nbytes
from benchmarks.bench_bandits import bench_bandits
from benchmarks.bench_consensus_sa import bench_consensus_sa
from benchmarks.bench_gridworld import bench_env_steps
from benchmarks.bench_resilient_ac import bench_resilient_ac
from benchmarks.bench_resilient_linear import bench_linear_updates
from decentral.consensus import consensus, consensus_params
from decentral.devices import cpu_core_count
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
from decentral.runner import Algorithm, run

__all__ = [
    "SIZES",
    "REPEATS",
    "MIN_REPEATS",
    "MAX_REPEATS",
    "BENCHMARKS",
    "CONSENSUS_PARAMS",
    "NoisyState",
    "consensus_algorithm",
    "noisy_consensus_algorithm",
    "initial_states",
    "bare_runner",
    "dense_static_graph",
    "sharded_run",
    "run_child",
    "numpy_consensus",
    "numpy_noisy_consensus",
    "bench_runner_overhead",
    "bench_sharding",
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
        "runner.overhead": dict(S=256, N=32, T=100_000, n_records=100, fit_T=64,
                                fit_record_every=4),
        "runner.sharding": dict(S=256, N=32, T=100_000, n_records=100),
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
        "consensus_sa.td0": dict(S=256, N=50, d=10, T=10_000, states=20, loop_seeds=2,
                                 loop_steps=(500, 2000)),
        "resilient_ac.wmsr": dict(S=16, N=1000, K=16, d=64, H=2, deg=(8, 15),
                                  loop_seeds=(4, 16)),
        "resilient_ac.gridworld_steps": dict(S=256, E=500, loop_seeds=4),
        "resilient_ac.linear_updates": dict(S=64, N=5, d=8, T=10_000, states=10,
                                            loop_steps=(200, 1000), check_steps=50),
        "bandits.dec_ucb": dict(S=100, N=50, M=10, T=10_000, edge_prob=0.5, ref_seeds=2,
                                ref_steps=(500, 1000), check_T=500, check_seeds=(50, 10)),
    },
    "quick": {
        "runner.overhead": dict(S=256, N=32, T=2_000, n_records=100, fit_T=64,
                                fit_record_every=4),
        "runner.sharding": dict(S=256, N=32, T=10_000, n_records=100),
        "consensus.plain": dict(S=64, N=16, T=400, record_every=40,
                                dtypes=("float32", "float64"), one_chunk=False),
        "mixing.dense_vs_sparse": dict(S=8, cases=((1024, 40),),
                                       offsets=(1, -1, 7, -7)),
        "graphs.random_edge_drops": dict(S=64, T=400, cases=(("dense", 16, "erdos_renyi"),),
                                         drop_prob=0.3, per_seed=False),
        "prng.threefry_vs_rbg": dict(S=64, N=16, T=400, impls=("threefry2x32", "rbg")),
        "memory.records": dict(S=4, N=8, horizons=(1_000, 100_000), n_records=10),
        "consensus_sa.td0": dict(S=64, N=50, d=10, T=2000, states=20, loop_seeds=1,
                                 loop_steps=(200, 800)),
        "resilient_ac.wmsr": dict(S=4, N=1000, K=16, d=64, H=2, deg=(8, 15),
                                  loop_seeds=(1, 4)),
        "resilient_ac.gridworld_steps": dict(S=64, E=20, loop_seeds=2),
        "resilient_ac.linear_updates": dict(S=16, N=5, d=8, T=2_000, states=10,
                                            loop_steps=(100, 400), check_steps=50),
        "bandits.dec_ucb": dict(S=20, N=50, M=10, T=1000, edge_prob=0.5, ref_seeds=1,
                                ref_steps=(250, 500), check_T=200, check_seeds=(20, 4)),
    },
    "tiny": {
        "runner.overhead": dict(S=8, N=6, T=200, n_records=10, fit_T=16, fit_record_every=1),
        "runner.sharding": dict(S=8, N=6, T=200, n_records=10),
        "consensus.plain": dict(S=4, N=6, T=40, record_every=10,
                                dtypes=("float32", "float64"), one_chunk=False),
        "mixing.dense_vs_sparse": dict(S=3, cases=((16, 20),), offsets=(1, -1, 3)),
        "graphs.random_edge_drops": dict(S=4, T=20, cases=(("dense", 6, "erdos_renyi"),),
                                         drop_prob=0.3, per_seed=False),
        "prng.threefry_vs_rbg": dict(S=4, N=6, T=40, impls=("threefry2x32", "rbg")),
        "memory.records": dict(S=2, N=4, horizons=(100, 1_000), n_records=10),
        "consensus_sa.td0": dict(S=4, N=6, d=3, T=50, states=4, loop_seeds=1,
                                 loop_steps=(10, 20)),
        "resilient_ac.wmsr": dict(S=2, N=8, K=6, d=3, H=1, deg=(2, 5), loop_seeds=(1, 2)),
        "resilient_ac.gridworld_steps": dict(S=2, E=2, loop_seeds=1, variants=("v2",)),
        "resilient_ac.linear_updates": dict(S=2, N=3, d=2, T=20, states=3, loop_steps=(10, 20),
                                            check_steps=10),
        "bandits.dec_ucb": dict(S=4, N=6, M=3, T=50, edge_prob=0.5, ref_seeds=1,
                                ref_steps=(10, 20), check_T=30, check_seeds=(8, 4)),
    },
}
"""Benchmark sizes per mode: ``{mode: {benchmark id: keyword arguments}}``."""

REPEATS: dict[str, int] = {"default": 5, "quick": 2, "tiny": 1}
"""Timed repeats per side (after one warm-up call) per mode."""

MIN_REPEATS: dict[str, int] = {"runner.overhead": 5, "runner.sharding": 5}
"""Benchmarks whose rows are medians of at least this many timed calls, whatever the mode."""

MAX_REPEATS: dict[str, int] = {"bandits.dec_ucb": 1}
"""Benchmarks whose repeated calls are long (a full Monte-Carlo run each): at most this many
timed calls at the per-mode default (an explicit ``repeats`` is taken as given)."""

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


class NoisyState(NamedTuple):
    """Per-seed state of noisy consensus: ``x [N]`` and the running sum of squared noise."""

    x: jax.Array
    noise_sq: jax.Array


CONSENSUS_PARAMS = consensus_params()
"""Params of every consensus run here: no fixed ``x0``, so each seed draws ``x(0) ~ N(0, I)``."""


def consensus_algorithm(seq: GraphSequence, dtype: str, *,
                        per_seed_graph: bool = False) -> Algorithm:
    """:func:`decentral.consensus.consensus` over ``seq`` drawing ``x(0)`` in ``dtype`` (build
    ``seq`` under the same x64 setting); ``per_seed_graph`` for random sequences drawn per seed.
    Run it with params :data:`CONSENSUS_PARAMS`.

    Example:
        >>> alg = consensus_algorithm(static(ring(4), rule="row"), "float32")
        >>> run(alg, CONSENSUS_PARAMS, seeds=[0], num_steps=10).final_state.x.shape
        (1, 4)
    """
    return consensus(seq, dtype=_DTYPES[dtype], per_seed_graphs=per_seed_graph)


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


def _derive_keys(seed):
    """The runner's key derivation (v1): ``init_key, step_root = split(key(seed))``; the key of
    step t is ``fold_in(step_root, t)``. Works on a traced uint32 seed."""
    init_key, step_root = jax.random.split(jax.random.key(seed))
    return init_key, step_root


def initial_states(algorithm: Algorithm, params: Any, seeds: Sequence[int]) -> Any:
    """The states ``algorithm.init`` gives each seed under the runner's key derivation, stacked
    over seeds — the reference's starting point."""
    seeds_u32 = jnp.asarray(np.asarray(seeds, dtype=np.uint32))
    keys = jax.vmap(lambda s: _derive_keys(s)[0])(seeds_u32)
    return jax.vmap(algorithm.init, in_axes=(0, None))(keys, params)


def bare_runner(algorithm: Algorithm, params: Any, num_steps: int, record_every: int
                ) -> Callable[[jax.Array], Any]:
    """The reference the runner is timed against: one ``jax.jit`` of ``init`` and a nested
    ``lax.scan`` (outer over record points, inner over ``record_every`` steps) of
    ``algorithm.step``, vmapped over seeds, with the runner's keys — no chunks, no checks, no
    host round trips.

    Returns:
        ``f(seeds_uint32 [S]) -> (final_state, records)`` (device arrays; records
        ``[S, num_steps // record_every, ...]``); the seeds' sharding decides the devices.
    """
    if num_steps % record_every:
        raise ValueError(f"record_every = {record_every} does not divide T = {num_steps}.")
    n_records = num_steps // record_every

    def one(seed):
        init_key, step_root = _derive_keys(seed)
        state = algorithm.init(init_key, params)

        def step(st, t):
            new, _ = algorithm.step(jax.random.fold_in(step_root, t), st, params, t, None)
            return new, None

        def block(st, ts):
            st, _ = lax.scan(step, st, ts)
            return st, st

        ts = jnp.arange(num_steps, dtype=jnp.int32).reshape(n_records, record_every)
        return lax.scan(block, state, ts)

    return jax.jit(jax.vmap(one))


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


def _noise(*timings: Timing) -> float:
    """Measurement noise of a difference of medians: the largest spread (max - min) of the
    repeats of the timings involved (0 with a single repeat each)."""
    return max((max(t.times_s) - min(t.times_s) for t in timings if t.times_s), default=0.0)


# --------------------------------------------------------------------------------------------
# 0. the runner's own cost: runner vs a bare jit of the same scan; 1 vs all CPU devices
# --------------------------------------------------------------------------------------------


def dense_static_graph(n: int, edge_prob: float = 0.5, seed: int = 0) -> np.ndarray:
    """Row-stochastic weights of a strongly connected Erdős–Rényi digraph (the runner rows'
    static graph; mixed with the dense backend, one ``W @ x`` per step)."""
    return row_stochastic(erdos_renyi(n, edge_prob, kind="strong", seed=seed))


def _sharded_seeds(num_seeds: int, devices: Sequence[Any]) -> jax.Array:
    """Seeds ``0..S-1`` as uint32, padded (repeating seed 0) to a multiple of the device count
    and sharded over ``devices`` — the placement the runner gives them."""
    seeds = np.arange(num_seeds, dtype=np.uint32)
    pad = (-num_seeds) % len(devices)
    seeds = np.concatenate([seeds, np.zeros(pad, np.uint32)])
    mesh = Mesh(np.asarray(list(devices), dtype=object), ("seeds",))
    return jax.device_put(seeds, NamedSharding(mesh, P("seeds")))


def _record_every(T: int, n_records: int) -> int:
    if T % n_records:
        raise ValueError(f"n_records = {n_records} does not divide T = {T}.")
    return T // n_records


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
    record_every = _record_every(T, n_records)
    if fit_T % (16 * fit_record_every):
        raise ValueError(f"fit_T = {fit_T} must be a multiple of 16 * fit_record_every = "
                         f"{16 * fit_record_every} (runs of 1, 4 and 16 chunks).")
    devs = jax.devices()
    seeds = np.arange(S)
    with _x64(dtype):
        alg = consensus_algorithm(static(dense_static_graph(N, edge_prob)), dtype)
        seeds_dev = _sharded_seeds(S, devs)
        bare = bare_runner(alg, CONSENSUS_PARAMS, T, record_every)
        t_bare, (bare_final, bare_records) = measure(lambda: bare(seeds_dev), repeats)
        t_def, r_def = measure(_runner(alg, CONSENSUS_PARAMS, seeds, T, record_every),
                               repeats)
        seen, hook = _chunk_counter()
        t_hook, r_hook = measure(_runner(alg, CONSENSUS_PARAMS, seeds, T, record_every,
                                         on_chunk_end=hook), repeats)
        n_hook = len(seen) // (repeats + 1) if seen else 0
        t_one, r_one = measure(_runner(alg, CONSENSUS_PARAMS, seeds, T, record_every,
                                       chunk_size=T), repeats)
        bare_fit = bare_runner(alg, CONSENSUS_PARAMS, fit_T, fit_record_every)
        t_bare_fit, _ = measure(lambda: bare_fit(seeds_dev), repeats)
        fit = {}
        for n_chunks in (1, 4, 16):
            fit[n_chunks], _ = measure(_runner(alg, CONSENSUS_PARAMS, seeds, fit_T,
                                               fit_record_every, chunk_size=fit_T // n_chunks),
                                       repeats)
        impl, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
    bare_final_x = np.asarray(bare_final.x)[:S]
    bare_records_x = np.asarray(bare_records.x)[:S]
    tol = _TOL[dtype]
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
        diff = _max_abs_diff([(res.final_state.x, bare_final_x), (res.records.x, bare_records_x)])
        over = timing.median_s / t_bare.median_s
        rows.append(BenchResult(
            name="runner.overhead", variant=variant, dtype=dtype, size=size, metric="time_s",
            value=timing.median_s, reference=reference, reference_value=t_bare.median_s,
            ratio=_ratio(t_bare.median_s, timing.median_s), compile_s=timing.compile_s,
            reference_compile_s=t_bare.compile_s, times_s=timing.times_s,
            reference_times_s=t_bare.times_s, repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            target_ratio=None if "per-chunk hook" in variant else 1 / 1.10,
            notes=f"runner/bare = {over:.3f} (target <= 1.10); "
                  f"{_us_per_step(timing.median_s, T):.2f} us/step vs bare "
                  f"{_us_per_step(t_bare.median_s, T):.2f}",
            extra=dict(runner_over_bare=over, n_chunks=n_ch,
                       runner_us_per_step=_us_per_step(timing.median_s, T),
                       bare_us_per_step=_us_per_step(t_bare.median_s, T)),
        ))
    counts = np.array(sorted(fit), dtype=float)
    medians = np.array([fit[k].median_s for k in sorted(fit)])
    per_chunk_s, intercept_s = np.polyfit(counts, medians, 1)
    noise = _noise(*fit.values(), t_bare_fit)
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
        reference_value=t_bare_fit.median_s, ratio=_ratio(t_bare_fit.median_s, t16.median_s),
        compile_s=t16.compile_s, reference_compile_s=t_bare_fit.compile_s,
        times_s=t16.times_s, reference_times_s=t_bare_fit.times_s, repeats=repeats,
        prng_impl=impl, enable_x64=x64,
        notes=f"host cost per call (a - bare): {call_text}; per chunk (b): {chunk_text}",
        extra=dict(per_call_us=per_call_us, per_chunk_us=per_chunk_us,
                   per_call_us_raw=float(intercept_s - t_bare_fit.median_s) * 1e6,
                   per_chunk_us_raw=float(per_chunk_s) * 1e6, noise_us=noise * 1e6,
                   fit_medians_s={str(k): fit[k].median_s for k in sorted(fit)},
                   fit_times_s={str(k): fit[k].times_s for k in sorted(fit)}),
    ))
    return rows


def sharded_run(*, S: int, N: int, T: int, n_records: int, edge_prob: float = 0.5,
                dtype: str = "float32", repeats: int = 5) -> dict[str, Any]:
    """One side of ``runner.sharding``, run inside the child process: the consensus run of
    :func:`bench_runner_overhead` (default chunking) with the seeds sharded over every CPU
    device of this process. Returns JSON-ready timings, the device count and the final states.
    """
    from benchmarks import device_summary

    record_every = _record_every(T, n_records)
    cpus = jax.devices("cpu")
    with _x64(dtype):
        alg = consensus_algorithm(static(dense_static_graph(N, edge_prob)), dtype)
        timing, res = measure(_runner(alg, CONSENSUS_PARAMS, np.arange(S), T, record_every,
                                      devices=cpus), repeats)
        impl, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
    return {"devices": len(cpus), "device": device_summary(), "median_s": timing.median_s,
            "times_s": timing.times_s, "first_s": timing.first_s, "compile_s": timing.compile_s,
            "prng_impl": impl, "enable_x64": x64,
            "final_x": np.asarray(res.final_state.x, np.float64).tolist()}


CHILD_MARKER = "BENCHMARK-CHILD-RESULT "
"""Prefix of the line a ``benchmarks._sharding_child`` process prints its JSON result on."""


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    flags = [f for f in env.get("XLA_FLAGS", "").split()
             if "xla_force_host_platform_device_count" not in f]
    env["XLA_FLAGS"] = " ".join(flags)
    env["JAX_PLATFORMS"] = "cpu"
    root = str(Path(__file__).resolve().parent.parent)       # so it runs uninstalled too
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in
                                                  env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def run_child(device_count: int, kwargs: dict[str, Any], timeout_s: float = 900.0
              ) -> dict[str, Any]:
    """Run :func:`sharded_run` in a fresh Python with ``device_count`` CPU devices
    (``python -m benchmarks._sharding_child``) and return its result.

    Raises:
        RuntimeError: the child failed or printed no result (its stderr is in the message).
    """
    arg = json.dumps({"device_count": int(device_count), "kwargs": kwargs})
    proc = subprocess.run([sys.executable, "-m", "benchmarks._sharding_child", arg],
                          capture_output=True, text=True, timeout=timeout_s, env=_child_env(),
                          check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(CHILD_MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"benchmark child with {device_count} CPU device(s) failed (exit "
                           f"{proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(lines[-1][len(CHILD_MARKER):])


def bench_sharding(*, S: int, N: int, T: int, n_records: int, edge_prob: float = 0.5,
                   dtype: str = "float32", repeats: int = 5) -> list[BenchResult]:
    """Seeds sharded over 1 CPU device vs one per core: the run of :func:`sharded_run`, each
    side in its own Python (:func:`run_child`), the device count set by
    :func:`decentral.devices.use_all_cpu_cores` before JAX starts. ``ratio`` is the speed-up
    ``t(1 device) / t(all devices)``; both sides must give the same final states. With a single
    core there is nothing to compare: one child, ratio 1, and the row says so.
    """
    cores = cpu_core_count()
    kwargs = dict(S=S, N=N, T=T, n_records=n_records, edge_prob=edge_prob, dtype=dtype,
                  repeats=repeats)
    one = run_child(1, kwargs)
    many = run_child(cores, kwargs) if cores > 1 else one
    diff = _max_abs_diff([(np.asarray(many["final_x"]), np.asarray(one["final_x"]))])
    tol = _TOL[dtype]
    k = int(many["devices"])
    speedup = one["median_s"] / many["median_s"]
    if cores > 1:
        notes = (f"speed-up {speedup:.2f}x with seeds over {k} CPU devices ({cores} cores); "
                 f"each side in a fresh Python")
    else:
        notes = "1 core available: no speed-up to measure (both columns are the same run)"
    return [BenchResult(
        name="runner.sharding", variant=f"{k} devices vs 1 device", dtype=dtype,
        size=dict(S=S, N=N, T=T, record_every=T // n_records, backend="dense",
                  devices=f"1 vs {k}", graph=f"static ER(p={edge_prob})"),
        metric="time_s", value=many["median_s"],
        reference="the same runner call with the seeds on 1 CPU device (another fresh Python)",
        reference_value=one["median_s"], ratio=_ratio(one["median_s"], many["median_s"]),
        compile_s=many["compile_s"], reference_compile_s=one["compile_s"],
        times_s=many["times_s"], reference_times_s=one["times_s"], repeats=repeats,
        max_abs_diff=diff, agree=bool(diff <= tol), tolerance=tol, prng_impl=many["prng_impl"],
        enable_x64=bool(many["enable_x64"]), notes=notes,
        extra=dict(speedup=speedup, cores=cores, devices=k, device=many["device"],
                   one_device=one["device"]),
    )]


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
            alg = consensus_algorithm(seq, dtype)
            timing, res = measure(_runner(alg, CONSENSUS_PARAMS, seeds, T, record_every), repeats)
            impl, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
            x0 = np.asarray(initial_states(alg, CONSENSUS_PARAMS, seeds).x)
            extra: dict[str, Any] = {}
            if one_chunk:
                t1, res1 = measure(_runner(alg, CONSENSUS_PARAMS, seeds, T, record_every,
                                           chunk_size=T), repeats)
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
            size=dict(S=S, N=N, T=T, record_every=record_every, P=period, backend="dense"),
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
            algs = {b: consensus_algorithm(static(W, backend=b), dtype)
                    for b in ("dense", "sparse")}
            t_dense, r_dense = measure(_runner(algs["dense"], CONSENSUS_PARAMS, seeds, T,
                                               record_every), repeats)
            t_sparse, r_sparse = measure(_runner(algs["sparse"], CONSENSUS_PARAMS, seeds, T,
                                                  record_every),
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
            alg_r = consensus_algorithm(rand, dtype)
            alg_p = consensus_algorithm(stack, dtype)
            t_r, r_r = measure(_runner(alg_r, CONSENSUS_PARAMS, seeds, T, record_every), repeats)
            t_p, r_p = measure(_runner(alg_p, CONSENSUS_PARAMS, seeds, T, record_every), repeats)
            impl, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
            if per_seed:
                t_ps = record_every if per_seed_steps is None else int(per_seed_steps)
                rep_ps = min(repeats, 3)
                rand_s = random_edge_drops(base, drop_prob, rule="row",
                                           shared_across_seeds=False, backend=backend)
                alg_s = consensus_algorithm(rand_s, dtype, per_seed_graph=True)
                t_s, r_s = measure(_runner(alg_s, CONSENSUS_PARAMS, seeds, t_ps, record_every),
                                   rep_ps)
                t_p_short, _ = measure(_runner(alg_p, CONSENSUS_PARAMS, seeds, t_ps, record_every),
                                       rep_ps)
                x0 = np.asarray(initial_states(alg_s, CONSENSUS_PARAMS, seeds).x)
        diff = _max_abs_diff([(r_r.final_state.x, r_p.final_state.x),
                              (r_r.records.x, r_p.records.x)])
        tol = _TOL[dtype]
        size = dict(S=S, N=n, T=T, base=base_kind, drop_prob=drop_prob, backend=backend)
        draw_text, draw_us = cost_text(t_r.median_s - t_p.median_s, _noise(t_r, t_p), per=T,
                                       what="step")
        rows.append(BenchResult(
            name="graphs.random_edge_drops", variant=f"shared draw, {backend}", dtype=dtype,
            size=size, metric="time_s", value=t_r.median_s,
            reference="decentral periodic stack of the same T graphs (precomputed on the host "
                      "by weights_host(T), read as W[t % T])",
            reference_value=t_p.median_s, ratio=_ratio(t_p.median_s, t_r.median_s),
            compile_s=t_r.compile_s, reference_compile_s=t_p.compile_s, times_s=t_r.times_s,
            reference_times_s=t_p.times_s, repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            notes=f"draw + re-weight cost over the stack: {draw_text}",
            extra=dict(draw_us_per_step=draw_us,
                       draw_us_per_step_raw=_us_per_step(t_r.median_s - t_p.median_s, T),
                       host_stack_bytes=T * n * n * np.dtype(dtype).itemsize),
        ))
        if per_seed:
            final = np.asarray(r_s.final_state.x, dtype=np.float64)
            lo, hi = x0.min(axis=1, keepdims=True), x0.max(axis=1, keepdims=True)
            slack = 1e-5
            outside = float(np.max(np.maximum(lo - final, final - hi), initial=0.0))
            ok = bool(np.all(np.isfinite(final)) and outside <= slack)
            per_seed_text, per_seed_us = cost_text(t_s.median_s - t_p_short.median_s,
                                                   _noise(t_s, t_p_short), per=t_ps, what="step")
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
                notes=f"S x edges draws per step, cost over the stack: {per_seed_text}",
                extra=dict(draw_us_per_step=per_seed_us,
                           draw_us_per_step_raw=_us_per_step(t_s.median_s - t_p_short.median_s,
                                                             t_ps)),
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
        base_alg = consensus_algorithm(static(W_host), dtype)
        t_plain, _ = measure(_runner(base_alg, CONSENSUS_PARAMS, seeds, T, T // 10 or 1), repeats)
    first = None
    for impl in impls:
        with _x64(dtype), jax_config(jax_default_prng_impl=impl):
            alg = noisy_consensus_algorithm(W, N, dtype, name=f"bench.prng.{impl}")
            timing, res = measure(_runner(alg, sigma, seeds, T, T // 10 or 1), repeats)
            impl_now, x64 = _prng_impl(), bool(jax.config.jax_enable_x64)
            x0 = np.asarray(initial_states(alg, sigma, seeds).x) if first is None else None
        mean_sq = float(np.sum(np.asarray(res.final_state.noise_sq, np.float64)) / n_draws)
        dev = abs(mean_sq - 1.0)
        normal_text, ns_per_normal = cost_text(timing.median_s - t_plain.median_s,
                                               _noise(timing, t_plain), per=n_draws, unit="ns",
                                               what="normal")
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
            first = (impl, timing)
        else:
            reference = f"decentral under {first[0]} (same step, same run)"
            ref_value, ref_times = first[1].median_s, first[1].times_s
            ref_compile = first[1].compile_s
        rows.append(BenchResult(
            name="prng.threefry_vs_rbg", variant=impl, dtype=dtype,
            size=dict(S=S, N=N, T=T, normals_per_step=S * N, backend="dense"),
            metric="time_s",
            value=timing.median_s, reference=reference, reference_value=ref_value,
            ratio=_ratio(ref_value, timing.median_s), compile_s=timing.compile_s,
            reference_compile_s=ref_compile, times_s=timing.times_s,
            reference_times_s=ref_times, repeats=repeats, max_abs_diff=dev,
            agree=bool(dev <= tol and np.all(np.isfinite(res.final_state.x))), tolerance=tol,
            prng_impl=impl_now, enable_x64=x64,
            notes=f"{normal_text} over noise-free "
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
            alg = consensus_algorithm(static(W), dtype)
            timing, res = measure(_runner(alg, CONSENSUS_PARAMS, seeds, T, T // n_records),
                                     repeats)
            measured.append((T, timing, res, _prng_impl(), bool(jax.config.jax_enable_x64)))
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
    "runner.overhead": bench_runner_overhead,
    "runner.sharding": bench_sharding,
    "consensus.plain": bench_consensus,
    "mixing.dense_vs_sparse": bench_backends,
    "graphs.random_edge_drops": bench_random_graphs,
    "prng.threefry_vs_rbg": bench_prng,
    "memory.records": bench_memory,
    "consensus_sa.td0": bench_consensus_sa,
    "resilient_ac.wmsr": bench_resilient_ac,
    "resilient_ac.gridworld_steps": bench_env_steps,
    "resilient_ac.linear_updates": bench_linear_updates,
    "bandits.dec_ucb": bench_bandits,
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
    if repeats is None and name in MAX_REPEATS:
        kwargs["repeats"] = min(kwargs["repeats"], MAX_REPEATS[name])
    kwargs["repeats"] = max(kwargs["repeats"], MIN_REPEATS.get(name, 1))
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
