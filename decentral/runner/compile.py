"""The compiled pieces of a run: init and chunk functions, vmapped over seeds (and params),
jitted with the seeds axis sharded over a device mesh, and cached across calls.

A chunk advances every seed from update ``t0`` and returns the new state, the records taken in
the chunk and one finiteness flag per seed (state, and records unless ``check_records=False``).
Two record layouts:

* regular (``record_every = r``): a nested ``lax.scan`` — outer over the chunk's record points,
  inner over ``r`` steps; the chunk length is static;
* irregular (``record_at``): an outer ``lax.scan`` over the chunk's record points whose inputs
  are the gaps between them, an inner ``lax.fori_loop`` over a gap (dynamic trip count).

Memory is O(seeds x state + records) either way. When a chunk is flagged, :func:`locate` runs it
again one step at a time to find the first non-finite update of each seed (only on failure, so
the hot path pays nothing).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .algorithm import RecordContext
from .keys import derive

__all__ = ["Options", "Compiled", "compiled", "all_finite"]


class Options(NamedTuple):
    """The static choices a compiled run depends on (hashable: the cache key)."""

    record_fn: Callable | None
    record_every: int | None      # None: irregular record points
    params_axes: tuple            # (treedef, leaves 0/None) of the params in_axes; () no sweep
    record_context: bool
    check_records: bool


def all_finite(tree) -> jax.Array:
    """True when every inexact leaf of ``tree`` is finite (a scalar bool)."""
    flags = [
        jnp.all(jnp.isfinite(leaf))
        for leaf in jax.tree_util.tree_leaves(tree)
        if jnp.issubdtype(leaf.dtype, jnp.inexact)
    ]
    if not flags:
        return jnp.bool_(True)
    return functools.reduce(jnp.logical_and, flags)


class Compiled(NamedTuple):
    init: Callable      # (seeds, params, xs) -> (state, record0, finite0)
    chunk: Callable     # regular: (seeds, state, params, xs, t0, n_blocks); irregular: (..., gaps)
    locate: Callable    # (seeds, state, params, xs, t0, is_record[L]) -> (state_ok, rec_ok) [.., L]


def _zeros_like_struct(tree):
    return jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), tree)


def _build(algorithm, opts: Options, mesh) -> Compiled:
    step = algorithm.step
    sweep = bool(opts.params_axes)
    batched = NamedSharding(mesh, P(None, "seeds") if sweep else P("seeds"))
    check_records = opts.check_records

    def record(state, t, info, x):
        if opts.record_fn is None:
            return state
        if opts.record_context:
            out = opts.record_fn(state, RecordContext(t, info, x))
        else:
            out = opts.record_fn(state)
        return jax.tree_util.tree_map(jnp.asarray, out)   # Python scalars become arrays

    def first_x(xs):
        return jax.tree_util.tree_map(lambda a: a[0], xs)

    def context_zeros(step_root, state, params, xs):
        """Zeros shaped like a step's Info and x_t (the context of the initial record)."""
        if not opts.record_context:
            return None, None
        x0 = first_x(xs)
        info = jax.eval_shape(
            lambda k, s: step(k, s, params, jnp.int32(0), x0)[1],
            jax.random.fold_in(step_root, 0), state)
        return _zeros_like_struct(info), _zeros_like_struct(x0)

    def advance(step_root, params, carry, t, x_t):
        st = carry[0]
        new_st, info = step(jax.random.fold_in(step_root, t), st, params, t, x_t)
        if opts.record_context:
            return (new_st, info, x_t)
        return (new_st,)

    def take(carry, t_done):
        if opts.record_context:
            st, info, x = carry
            return record(st, t_done, info, x)
        return record(carry[0], t_done, None, None)

    def finite(state, recs):
        ok = all_finite(state)
        return jnp.logical_and(ok, all_finite(recs)) if check_records else ok

    def init_one(seed, params, xs):
        init_key, step_root = derive(seed)
        state = jax.tree_util.tree_map(jnp.asarray, algorithm.init(init_key, params))
        info, x = context_zeros(step_root, state, params, xs)
        rec = record(state, jnp.int32(0), info, x)
        return state, rec, all_finite(state), all_finite(rec)

    def start_carry(step_root, state, params, xs):
        if opts.record_context:
            info, x = context_zeros(step_root, state, params, xs)
            return (state, info, x)
        return (state,)

    def chunk_regular(seed, state, params, xs, t0, n_blocks):
        _, step_root = derive(seed)
        every = opts.record_every
        length = n_blocks * every
        ts = (t0 + jnp.arange(length, dtype=jnp.int32)).reshape(n_blocks, every)
        xs_blocks = jax.tree_util.tree_map(
            lambda a: lax.dynamic_slice_in_dim(a, t0, length, axis=0).reshape(
                (n_blocks, every) + a.shape[1:]), xs)

        def one_step(carry, inp):
            t, x_t = inp
            return advance(step_root, params, carry, t, x_t), None

        def block(carry, inp):
            carry, _ = lax.scan(one_step, carry, inp)
            return carry, take(carry, inp[0][-1] + 1)

        carry, recs = lax.scan(block, start_carry(step_root, state, params, xs), (ts, xs_blocks))
        return carry[0], recs, finite(carry[0], recs)

    def chunk_irregular(seed, state, params, xs, t0, gaps):
        _, step_root = derive(seed)

        def body(t, carry):
            x_t = jax.tree_util.tree_map(lambda a: lax.dynamic_index_in_dim(a, t, 0, False), xs)
            return advance(step_root, params, carry, t, x_t)

        def segment(inner, gap):
            carry, t = inner
            carry = lax.fori_loop(t, t + gap, body, carry)
            return (carry, t + gap), take(carry, t + gap)

        (carry, _), recs = lax.scan(segment, (start_carry(step_root, state, params, xs), t0),
                                    gaps)
        return carry[0], recs, finite(carry[0], recs)

    def locate_one(seed, state, params, xs, t0, is_record):
        """Per-step flags of one chunk replayed step by step (the failure path)."""
        _, step_root = derive(seed)

        def one(carry, inp):
            k, rec_here = inp
            t = t0 + k
            x_t = jax.tree_util.tree_map(lambda a: lax.dynamic_index_in_dim(a, t, 0, False), xs)
            carry = advance(step_root, params, carry, t, x_t)
            rec_ok = jnp.logical_or(~rec_here, all_finite(take(carry, t + 1))) \
                if check_records else jnp.bool_(True)
            return carry, (all_finite(carry[0]), rec_ok)

        steps = jnp.arange(is_record.shape[0], dtype=jnp.int32)
        _, (state_ok, rec_ok) = lax.scan(one, start_carry(step_root, state, params, xs),
                                         (steps, is_record))
        return state_ok, rec_ok

    chunk_one = chunk_regular if opts.record_every is not None else chunk_irregular
    init_v = jax.vmap(init_one, in_axes=(0, None, None))
    chunk_v = jax.vmap(chunk_one, in_axes=(0, 0, None, None, None, None))
    locate_v = jax.vmap(locate_one, in_axes=(0, 0, None, None, None, None))
    if sweep:
        treedef, leaves = opts.params_axes
        axes = jax.tree_util.tree_unflatten(treedef, list(leaves))
        init_v = jax.vmap(init_v, in_axes=(None, axes, None))
        chunk_v = jax.vmap(chunk_v, in_axes=(None, 0, axes, None, None, None))
        locate_v = jax.vmap(locate_v, in_axes=(None, 0, axes, None, None, None))

    static = (5,) if opts.record_every is not None else ()
    on_cpu = all(d.platform == "cpu" for d in mesh.devices.flat)
    own = (dict(algorithm.cpu_compiler_options) if on_cpu else {}) or None
    return Compiled(
        jax.jit(init_v, out_shardings=batched, compiler_options=own),
        jax.jit(chunk_v, static_argnums=static, out_shardings=batched,
                compiler_options=own),
        jax.jit(locate_v, compiler_options=own),
    )


@functools.lru_cache(maxsize=64)
def _build_cached(algorithm, opts: Options, mesh) -> Compiled:
    return _build(algorithm, opts, mesh)


def compiled(algorithm, opts: Options, mesh) -> Compiled:
    """The cached :class:`Compiled` for ``(algorithm, opts, mesh)``.

    The key holds the functions themselves (by identity): a new ``record_fn`` lambda on every
    call builds (and compiles) anew, about a second each; define it once and reuse it. (A key
    by code alone would be unsafe: the same code can close over different arrays.)
    """
    try:
        return _build_cached(algorithm, opts, mesh)
    except TypeError:  # an unhashable record_fn (e.g. a callable object defining __eq__)
        return _build(algorithm, opts, mesh)


def _unused(_: Any) -> None:  # pragma: no cover
    return None
