"""The consensus computations the foundation benchmarks time, and the references they time them
against.

The algorithm timed is :func:`decentral.consensus.consensus`, plain consensus
``x(t+1) = W_t x(t)`` with ``x(0) ~ N(0, I)`` drawn from each seed's init key
(:func:`consensus_algorithm`), and a noisy variant ``x(t+1) = W x(t) + sigma * xi(t)``
(:func:`noisy_consensus_algorithm`). The references: :func:`bare_runner` (one ``jax.jit`` of a
nested ``lax.scan`` vmapped over seeds, with the runner's keys), :func:`numpy_consensus` and
:func:`numpy_noisy_consensus` (Python loops over time, BLAS matmuls vectorised over seeds), all
started from the states the runner gives each seed (:func:`initial_states`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from decentral.consensus import consensus, consensus_params
from decentral.graphs import erdos_renyi, mix, row_stochastic
from decentral.graphs.sequences import GraphSequence
from decentral.runner import Algorithm, run

__all__ = [
    "CONSENSUS_PARAMS",
    "DTYPES",
    "TOLERANCES",
    "NoisyState",
    "consensus_algorithm",
    "noisy_consensus_algorithm",
    "initial_states",
    "bare_runner",
    "runner_call",
    "record_interval",
    "dense_static_graph",
    "numpy_consensus",
    "numpy_noisy_consensus",
]

DTYPES = {"float32": jnp.float32, "float64": jnp.float64}
"""The floating dtypes the consensus rows run in, by name."""

TOLERANCES = {"float32": 1e-4, "float64": 1e-10}
"""Absolute tolerance of the consensus rows' agreement check, per dtype."""

CONSENSUS_PARAMS = consensus_params()
"""Params of every consensus run here: no fixed ``x0``, so each seed draws ``x(0) ~ N(0, I)``."""


class NoisyState(NamedTuple):
    """Per-seed state of noisy consensus: ``x [N]`` and the running sum of squared noise."""

    x: jax.Array
    noise_sq: jax.Array


def consensus_algorithm(seq: GraphSequence, dtype: str, *,
                        per_seed_graph: bool = False) -> Algorithm:
    """:func:`decentral.consensus.consensus` over ``seq`` drawing ``x(0)`` in ``dtype`` (build
    ``seq`` under the same x64 setting); ``per_seed_graph`` for random sequences drawn per seed.
    Run it with params :data:`CONSENSUS_PARAMS`.

    Example:
        >>> from decentral.graphs import ring, static
        >>> alg = consensus_algorithm(static(ring(4), rule="row"), "float32")
        >>> run(alg, CONSENSUS_PARAMS, seeds=[0], num_steps=10).final_state.x.shape
        (1, 4)
    """
    return consensus(seq, dtype=DTYPES[dtype], per_seed_graphs=per_seed_graph)


def noisy_consensus_algorithm(W: jax.Array, n: int, dtype: str, *, name: str) -> Algorithm:
    """Noisy consensus ``x(t+1) = W x(t) + sigma * xi(t)``, ``xi(t) ~ N(0, I_N)`` from the step
    key (N normals per seed per step); params is ``sigma``. The state also sums ``|xi(t)|^2``
    so the draws can be checked (mean ``N`` per step).

    Example:
        >>> alg = noisy_consensus_algorithm(jnp.eye(3), 3, "float32", name="n")
        >>> run(alg, 0.1, seeds=[0], num_steps=10).final_state.noise_sq.shape
        (1,)
    """
    dt = DTYPES[dtype]

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


def runner_call(alg: Algorithm, params: Any, seeds: np.ndarray, num_steps: int,
                record_every: int, **kwargs: Any) -> Callable[[], Any]:
    """A zero-argument call of :func:`decentral.runner.run` (progress off; ``kwargs`` passed
    on), the decentral side :func:`benchmarks.harness.measure` times."""
    return lambda: run(alg, params, seeds, num_steps, record_every=record_every,
                       progress=False, **kwargs)


def record_interval(T: int, n_records: int) -> int:
    """``T / n_records``, the steps between records.

    Raises:
        ValueError: if ``n_records`` does not divide ``T``.
    """
    if T % n_records:
        raise ValueError(f"n_records = {n_records} does not divide T = {T}.")
    return T // n_records


def dense_static_graph(n: int, edge_prob: float = 0.5, seed: int = 0) -> np.ndarray:
    """Row-stochastic weights of a strongly connected Erdős–Rényi digraph (the runner rows'
    static graph; mixed with the dense backend, one ``W @ x`` per step)."""
    return row_stochastic(erdos_renyi(n, edge_prob, kind="strong", seed=seed))


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
