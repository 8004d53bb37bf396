"""The compiled pieces of a run: init and chunk functions, vmapped over seeds (and params),
jitted with the seeds axis sharded over a device mesh, and cached across calls.

A chunk advances every seed from update ``t0`` and returns the new state, the records taken in
the chunk and one finiteness flag per seed (state, and records unless ``check_records=False``).
Two record layouts:

* regular (``record_every = r`` with ``r`` below
  :data:`~decentral.runner.driver.GAP_LAYOUT_MIN_SPACING`): a nested ``lax.scan`` — outer over
  the chunk's record points, inner over ``r`` steps; the chunk length is static;
* gaps (``record_at``, and sparser regular grids): an outer ``lax.scan`` over the chunk's
  record points whose inputs are the gaps between them, an inner ``lax.fori_loop`` over a gap
  (dynamic trip count). The driver pads the gaps of a chunk with zeros to a power-of-two count
  and drops the records they produce, so the program depends on neither the horizon nor the
  record points, only on that padded count.

What is compiled is the runner's *traced programs* (:mod:`~decentral.runner.program`), not the
user's Python functions: they are traced once, and the program that runs is the one the
checkpoint fingerprint describes.

Memory is O(seeds x state + records) either way. When a chunk is flagged, :func:`locate` runs it
again one step at a time to find the first non-finite update of each seed (only on failure, so
the hot path pays nothing).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .keys import derive
from .layout import agent_leaves, state_shardings

__all__ = ["Options", "Compiled", "compiled", "all_finite"]


class Options(NamedTuple):
    """The static choices a compiled run depends on (hashable: the cache key)."""

    record_fn: Callable | None
    record_every: int | None      # None: irregular record points
    params_axes: tuple            # (treedef, leaves 0/None) of the params in_axes; () no sweep
    record_context: bool
    check_records: bool
    num_agents: int | None = None   # set only when the mesh splits agents


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
    programs: Any       # the RunPrograms compiled (what the checkpoint fingerprint reads)
    state_sharding: Any  # the NamedSharding of every batched state leaf
    init: Callable      # (seeds, params, xs) -> (state, record0, finite0)
    chunk: Callable     # regular: (seeds, state, params, xs, t0, n_blocks); irregular: (..., gaps)
    locate: Callable    # (seeds, state, params, xs, t0, is_record[L]) -> (state_ok, rec_ok) [.., L]


def _zeros_like_struct(tree):
    return jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), tree)


def _build(programs, opts: Options, mesh, cpu_compiler_options) -> Compiled:
    """Compile the traced ``programs`` (:class:`~decentral.runner.program.RunPrograms`): what
    runs is exactly what was fingerprinted, and the user's functions are not traced again."""
    # Large constants (neighbour tables, problem tables) are passed to the compiled programs
    # as one argument ``c = (init, step, record)`` rather than copied into each of them.
    init_consts, init_fn = programs.init.hoisted()
    step_consts, step = programs.step.hoisted()
    rec_consts, record_fn = ((), None) if programs.record_fn is None else \
        programs.record_fn.hoisted()
    info_struct = programs.step.out_avals[1]
    sweep = bool(opts.params_axes)
    batched = NamedSharding(mesh, P(None, "seeds") if sweep else P("seeds"))
    check_records = opts.check_records
    split = agent_leaves(programs.init.out_avals, opts.num_agents, mesh)
    splitting = any(jax.tree_util.tree_leaves(split))
    state_sharded = state_shardings(mesh, split, sweep=sweep)
    agent_block = NamedSharding(mesh, P("agents"))

    def keep_blocks(state):
        """Keep the split leaves in blocks of agents after every update (GSPMD then
        communicates what the step reads across blocks)."""
        if not splitting:
            return state
        return jax.tree_util.tree_map(
            lambda a, s: lax.with_sharding_constraint(a, agent_block) if s else a, state, split)

    def record(c, state, t, info, x):
        if record_fn is None:
            return state
        if opts.record_context:
            return record_fn(c[2], state, info, x, t)
        return record_fn(c[2], state)

    def first_x(xs):
        return jax.tree_util.tree_map(lambda a: a[0], xs)

    def context_zeros(step_root, state, params, xs):
        """Zeros shaped like a step's Info and x_t (the context of the initial record)."""
        if not opts.record_context:
            return None, None
        return _zeros_like_struct(info_struct), _zeros_like_struct(first_x(xs))

    def advance(c, step_root, params, carry, t, x_t):
        st = carry[0]
        new_st, info = step(c[1], jax.random.fold_in(step_root, t), st, params, t, x_t)
        new_st = keep_blocks(new_st)
        if opts.record_context:
            return (new_st, info, x_t)
        return (new_st,)

    def take(c, carry, t_done):
        if opts.record_context:
            st, info, x = carry
            return record(c, st, t_done, info, x)
        return record(c, carry[0], t_done, None, None)

    def finite(state, recs):
        ok = all_finite(state)
        return jnp.logical_and(ok, all_finite(recs)) if check_records else ok

    def init_one(c, seed, params, xs):
        init_key, step_root = derive(seed)
        state = init_fn(c[0], init_key, params)
        info, x = context_zeros(step_root, state, params, xs)
        rec = record(c, state, jnp.int32(0), info, x)
        return state, rec, all_finite(state), all_finite(rec)

    def start_carry(step_root, state, params, xs):
        if opts.record_context:
            info, x = context_zeros(step_root, state, params, xs)
            return (state, info, x)
        return (state,)

    def chunk_regular(c, seed, state, params, xs, t0, n_blocks):
        _, step_root = derive(seed)
        every = opts.record_every
        length = n_blocks * every
        ts = (t0 + jnp.arange(length, dtype=jnp.int32)).reshape(n_blocks, every)
        xs_blocks = jax.tree_util.tree_map(
            lambda a: lax.dynamic_slice_in_dim(a, t0, length, axis=0).reshape(
                (n_blocks, every) + a.shape[1:]), xs)

        def one_step(carry, inp):
            t, x_t = inp
            return advance(c, step_root, params, carry, t, x_t), None

        def block(carry, inp):
            carry, _ = lax.scan(one_step, carry, inp)
            return carry, take(c, carry, inp[0][-1] + 1)

        carry, recs = lax.scan(block, start_carry(step_root, state, params, xs), (ts, xs_blocks))
        return carry[0], recs, finite(carry[0], recs)

    def chunk_irregular(c, seed, state, params, xs, t0, gaps):
        _, step_root = derive(seed)

        def body(t, carry):
            x_t = jax.tree_util.tree_map(lambda a: lax.dynamic_index_in_dim(a, t, 0, False), xs)
            return advance(c, step_root, params, carry, t, x_t)

        def segment(inner, gap):
            carry, t = inner
            carry = lax.fori_loop(t, t + gap, body, carry)
            return (carry, t + gap), take(c, carry, t + gap)

        (carry, _), recs = lax.scan(segment, (start_carry(step_root, state, params, xs), t0),
                                    gaps)
        return carry[0], recs, finite(carry[0], recs)

    def locate_one(c, seed, state, params, xs, t0, is_record):
        """Per-step flags of one chunk replayed step by step (the failure path)."""
        _, step_root = derive(seed)

        def one(carry, inp):
            k, rec_here = inp
            t = t0 + k
            x_t = jax.tree_util.tree_map(lambda a: lax.dynamic_index_in_dim(a, t, 0, False), xs)
            carry = advance(c, step_root, params, carry, t, x_t)
            rec_ok = jnp.logical_or(~rec_here, all_finite(take(c, carry, t + 1))) \
                if check_records else jnp.bool_(True)
            return carry, (all_finite(carry[0]), rec_ok)

        steps = jnp.arange(is_record.shape[0], dtype=jnp.int32)
        _, (state_ok, rec_ok) = lax.scan(one, start_carry(step_root, state, params, xs),
                                         (steps, is_record))
        return state_ok, rec_ok

    chunk_one = chunk_regular if opts.record_every is not None else chunk_irregular
    seeds_axis = {"spmd_axis_name": "seeds"} if splitting else {}
    init_group = jax.vmap(init_one, in_axes=(None, 0, None, None), **seeds_axis)
    seed_devices = mesh.shape["seeds"]

    def init_v(c, seeds, params, xs):
        """Every seed's initial state, one seed per device at a time: the seeds ``[S]`` as
        ``[S / D, D]`` (D seed devices; seed ``d * S / D + j`` at ``[j, d]``), a ``lax.map``
        over the first axis of the vmapped init over the second. The states are the same as
        one vmap over all seeds; the temporaries of an init (a random draw of the whole
        state holds several state-sized arrays) are one seed's per device, not all of its
        seeds' at once."""
        per = seeds.shape[0] // seed_devices
        if splitting or per <= 1:
            return init_group(c, seeds, params, xs)
        grouped = jnp.swapaxes(seeds.reshape((seed_devices, per) + seeds.shape[1:]), 0, 1)
        out = lax.map(lambda group: init_group(c, group, params, xs), grouped)
        return jax.tree_util.tree_map(
            lambda a: jnp.swapaxes(a, 0, 1).reshape((seed_devices * per,) + a.shape[2:]), out)

    chunk_v = jax.vmap(chunk_one, in_axes=(None, 0, 0, None, None, None, None), **seeds_axis)
    locate_v = jax.vmap(locate_one, in_axes=(None, 0, 0, None, None, None, None),
                        **seeds_axis)
    if sweep:
        treedef, leaves = opts.params_axes
        axes = jax.tree_util.tree_unflatten(treedef, list(leaves))
        init_v = jax.vmap(init_v, in_axes=(None, None, axes, None))
        chunk_v = jax.vmap(chunk_v, in_axes=(None, None, 0, axes, None, None, None))
        locate_v = jax.vmap(locate_v, in_axes=(None, None, 0, axes, None, None, None))

    static = (6,) if opts.record_every is not None else ()
    on_cpu = all(d.platform == "cpu" for d in mesh.devices.flat)
    own = (dict(cpu_compiler_options) if on_cpu else {}) or None
    # the hoisted constants, placed once on every device of the mesh
    consts = jax.device_put((init_consts, step_consts, rec_consts), NamedSharding(mesh, P()))
    return Compiled(
        programs,
        state_sharded,
        functools.partial(jax.jit(init_v, out_shardings=(state_sharded, batched, batched,
                                                         batched), compiler_options=own),
                          consts),
        functools.partial(jax.jit(chunk_v, static_argnums=static,
                                  out_shardings=(state_sharded, batched, batched),
                                  compiler_options=own), consts),
        functools.partial(jax.jit(locate_v, compiler_options=own), consts),
    )


_CACHE_SIZE = 64
_BY_IDENTITY: OrderedDict = OrderedDict()
_BY_PROGRAM: OrderedDict = OrderedDict()


def _remember(cache: OrderedDict, key, value) -> None:
    cache[key] = value
    cache.move_to_end(key)
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def _signature(tree) -> tuple:
    """Hashable structure, shapes, dtypes and weak types of an abstract pytree."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((tuple(a.shape), str(a.dtype), bool(a.weak_type)) for a in leaves)


def compiled(algorithm, opts: Options, mesh, abstract_inputs, programs, *,
             fresh: bool = False) -> Compiled:
    """The cached :class:`Compiled` of a run.

    Two levels: by identity — the same ``Algorithm`` object and ``record_fn`` with the same
    options, mesh and params / ``xs`` shapes reuse their functions without tracing anything —
    and by program — an algorithm built anew (a factory called again, another graph passed as
    data) whose traced programs (:func:`~decentral.runner.program.trace_run`, via the callable
    ``programs``) equal an earlier one's, at the same shapes, options and mesh, reuses that
    earlier compilation: equal programs with equal constants compute the same numbers. A key
    by code alone would be unsafe (the same code can close over different arrays); a key by
    the program sees the arrays by content.
    """
    try:
        identity = (algorithm, opts, mesh, _signature(abstract_inputs))
        hash(identity)
    except TypeError:           # an unhashable record_fn (a callable object defining __eq__)
        identity = None
    if identity is not None and identity in _BY_IDENTITY:
        _BY_IDENTITY.move_to_end(identity)
        hit = _BY_IDENTITY[identity]
        if not fresh:
            return hit
        progs = programs()
        if progs.digest == hit.programs.digest and not progs.opaque:
            return hit
    else:
        progs = programs()
    by_program = None
    if not progs.opaque:        # host callbacks are not in the program: never shared
        by_program = (progs.digest, opts._replace(record_fn=None), mesh,
                      algorithm.cpu_compiler_options, _signature(abstract_inputs))
    fns = None if by_program is None else _BY_PROGRAM.get(by_program)
    if fns is None:
        fns = _build(progs, opts, mesh, algorithm.cpu_compiler_options)
        if by_program is not None:
            _remember(_BY_PROGRAM, by_program, fns)
    if identity is not None:
        _remember(_BY_IDENTITY, identity, fns)
    return fns
