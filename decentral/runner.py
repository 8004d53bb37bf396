"""The runner: many seeds (and hyperparameter values) of one algorithm, compiled once.

An algorithm is a pair of pure functions (:class:`Algorithm`); :func:`run` drives it with
``lax.scan`` over time inside ``jit``, ``vmap`` over seeds (and over a leading params axis when
``sweep=True``), records a thinned trajectory, runs in chunks so a progress bar can tick and a
long run can checkpoint and resume, and shards the seeds axis over devices when more than one is
present (the same code path on one CPU).

Keys (derivation v1, so results never depend on chunking, resuming or device count)::

    seed_key            = jax.random.key(seed)              # seed: integer in [0, 2**32)
    init_key, step_root = jax.random.split(seed_key)
    key for step t      = jax.random.fold_in(step_root, t)  # t = 0, 1, ..., num_steps - 1

``init(init_key, params)`` makes the state; ``step(key_t, state, params, t, x_t)`` performs update
``t`` (0-based). A record taken "at step k" is the state after k updates (k = 0 is the initial
state). :func:`seed_keys` and :func:`step_key` reproduce these keys outside the runner.

Memory is O(seeds x state + recorded points): time is a nested scan (outer over record points,
inner over ``record_every`` steps), and only ``record_fn(state)`` at the record points is kept.

Compilation: the chunk function is jitted once per ``(algorithm, record_fn, record_every, sweep,
devices)`` and cached across calls; the chunk start ``t0`` is a traced argument. A last chunk
shorter than ``chunk_size`` (when ``chunk_size`` does not divide ``num_steps``) costs one more
compile; the default ``chunk_size`` always divides ``num_steps``.

Checkpoints (``checkpoint_dir``): ``config.json`` (the fingerprinted configuration and provenance),
``records_<k>.npz`` (the records of chunk k) and ``state.npz`` (the carried state and the next
chunk index), each written atomically. After the last chunk the checkpoint stays in place and marks
the run complete: calling :func:`run` again with the same arguments returns the stored result
without computing. Delete the folder to recompute. The fingerprint covers the algorithm's ``name``
and ``version`` (bump ``version`` when its numbers change), hashes of the byte code of ``init``,
``step`` and ``record_fn`` (values captured in closures are not hashed), ``num_steps``,
``record_every``, ``chunk_size``, ``record_initial``, ``sweep``, the seeds, the shapes and dtypes
of state and records, ``record_fn``'s qualified name, hashes of the params and ``xs`` values, the
key derivation, the PRNG implementation and the x64 flag; a mismatch is refused with the differing
fields named. The device count is not part of it: a run resumed on another device count continues
correctly, equal up to floating-point reassociation.

Example:
    >>> alg = Algorithm(init=lambda k, p: jnp.zeros(3),
    ...                 step=lambda k, s, p, t, x: (s + p * jax.random.normal(k, (3,)), None),
    ...                 name="random_walk")
    >>> res = run(alg, 0.1, seeds=[0, 1], num_steps=100, record_every=10)
    >>> res.records.shape, res.record_steps[:3]
    ((2, 10, 3), array([10, 20, 30]))
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from decentral.results import (
    atomic_write_bytes,
    provenance,
    read_npz,
    to_jsonable,
    write_npz_atomic,
)

__all__ = [
    "Algorithm",
    "RunResult",
    "DivergenceError",
    "DivergenceWarning",
    "run",
    "seed_keys",
    "step_key",
    "stack_params",
    "KEY_DERIVATION",
]

KEY_DERIVATION = "v1: init,root=split(key(seed)); step t: fold_in(root, t)"
_MAX_SEED = 2**32 - 1
_CKPT_FORMAT = "decentral.runner.checkpoint/1"


class Algorithm(NamedTuple):
    """An algorithm as pure functions, the unit :func:`run` executes.

    Attributes:
        init: ``init(key, params) -> State`` for one seed (unbatched pytree).
        step: ``step(key, state, params, t, x_t) -> (State, Info)``; ``t`` is an int32 scalar
            (0-based index of the update), ``x_t`` the t-th slice of the scanned inputs ``xs``
            (None when :func:`run` got no ``xs``). ``Info`` is per-step diagnostics, never fed
            back (it may be None).
        name: identifies the algorithm in checkpoint fingerprints.
        version: bump it when the algorithm's numbers change, so old checkpoints are refused.
        max_horizon: largest ``num_steps`` the algorithm supports (e.g. the length of an explicit
            graph stack); None for unbounded.

    Example:
        >>> alg = Algorithm(init=lambda k, p: jnp.zeros(2),
        ...                 step=lambda k, s, p, t, x: (s + p, None), name="drift")
        >>> run(alg, 1.0, seeds=[0], num_steps=4).final_state
        array([[4., 4.]], dtype=float32)
    """

    init: Callable
    step: Callable
    name: str
    version: str = "0"
    max_horizon: int | None = None


class RunResult(NamedTuple):
    """What :func:`run` returns.

    Attributes:
        records: pytree of ``record_fn`` outputs with leading axes ``[P?, S, n_records, ...]``
            (``P`` only when ``sweep=True``), as numpy arrays.
        record_steps: ``[n_records]`` int64, the number of updates done at each record (0 for
            the initial state when ``record_initial``; then ``record_every``, ..., ``num_steps``).
        final_state: the state after ``num_steps`` updates, leading axes ``[P?, S, ...]`` (numpy
            arrays; PRNG-key leaves stay JAX key arrays).
        seeds: ``[S]`` int64, the seeds in output order.
        num_steps: number of updates performed.
    """

    records: Any
    record_steps: np.ndarray
    final_state: Any
    seeds: np.ndarray
    num_steps: int


class DivergenceError(FloatingPointError):
    """The carried state became non-finite (NaN or inf).

    Attributes:
        chunk: index of the chunk after which the state was non-finite (-1: the initial state).
        step_range: ``(first, last)`` 0-based step indices of that chunk.
        seeds: the seeds whose state is non-finite.
        param_indices: for a sweep, the params index of each diverged seed (else None).
    """

    def __init__(self, message, *, chunk, step_range, seeds, param_indices=None):
        super().__init__(message)
        self.chunk = chunk
        self.step_range = step_range
        self.seeds = seeds
        self.param_indices = param_indices

    def __reduce__(self):  # keep the attributes when pickled (e.g. across processes)
        kwargs = dict(chunk=self.chunk, step_range=self.step_range, seeds=self.seeds,
                      param_indices=self.param_indices)
        return (_rebuild_divergence, (str(self), kwargs))


def _rebuild_divergence(message, kwargs):
    return DivergenceError(message, **kwargs)


class DivergenceWarning(RuntimeWarning):
    """Warning issued instead of :class:`DivergenceError` when ``on_divergence="warn"``."""


# --------------------------------------------------------------------------------------------
# keys
# --------------------------------------------------------------------------------------------


def _derive(seed):
    seed_key = jax.random.key(seed)
    init_key, step_root = jax.random.split(seed_key)
    return init_key, step_root


def seed_keys(seed: int) -> tuple[jax.Array, jax.Array]:
    """The ``(init_key, step_root)`` pair :func:`run` uses for ``seed`` (derivation v1).

    Example:
        >>> init_key, root = seed_keys(3)
        >>> x0 = jax.random.normal(jax.random.fold_in(root, 0))  # the draw step 0 sees
    """
    seeds = _validate_seeds([seed])
    return _derive(jnp.uint32(seeds[0]))


def step_key(seed: int, t: int) -> jax.Array:
    """The key :func:`run` passes to ``step`` at 0-based step ``t`` for ``seed``.

    Example:
        >>> k = step_key(0, 5)
        >>> bool(jnp.all(jax.random.key_data(k) == jax.random.key_data(step_key(0, 5))))
        True
    """
    _, root = seed_keys(seed)
    return jax.random.fold_in(root, t)


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _validate_seeds(seeds) -> np.ndarray:
    if isinstance(seeds, int | np.integer) and not isinstance(seeds, bool):
        raise ValueError(
            f"seeds must be a 1-D sequence of integers; got the single integer {seeds}. "
            f"Pass [{seeds}] for one seed or range(n) for n seeds."
        )
    try:
        arr = np.asarray(list(seeds) if not isinstance(seeds, np.ndarray) else seeds)
    except TypeError as exc:
        raise ValueError(f"seeds must be a sequence of integers; got {seeds!r}.") from exc
    if arr.ndim != 1:
        raise ValueError(f"seeds must be 1-D; got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError("seeds is empty; pass at least one integer seed, e.g. seeds=range(8).")
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"seeds must be integers; got dtype {arr.dtype} ({arr[:5].tolist()}...). Pass e.g. "
            "seeds=range(8) or np.arange(8)."
        )
    arr = arr.astype(np.int64) if arr.dtype != np.uint64 else arr
    if np.any(arr < 0) or np.any(arr > _MAX_SEED):
        bad = arr[(arr < 0) | (arr > _MAX_SEED)][:5].tolist()
        raise ValueError(f"seeds must lie in [0, 2**32 - 1]; got {bad}.")
    arr = arr.astype(np.int64)
    uniq, counts = np.unique(arr, return_counts=True)
    if np.any(counts > 1):
        dup = uniq[counts > 1][:10].tolist()
        raise ValueError(
            f"seeds contain duplicates {dup}; duplicated seeds give identical runs and would "
            "bias any statistic. Pass distinct seeds."
        )
    return arr


def _as_int(value, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer; got {value!r} ({type(value).__name__}).")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}.")
    return value


def _is_key_dtype(dtype) -> bool:
    try:
        return jnp.issubdtype(dtype, jax.dtypes.prng_key)
    except Exception:
        return False


def _leaves_with_paths(tree):
    return jax.tree_util.tree_flatten_with_path(tree)[0]


def _check_params(params, sweep: bool) -> int | None:
    """NaN check on concrete float leaves; returns the sweep size P (or None)."""
    sizes = []
    for path, leaf in _leaves_with_paths(params):
        name = "params" + jax.tree_util.keystr(path)
        if isinstance(leaf, jax.core.Tracer):
            raise ValueError(
                f"{name} is a JAX tracer; run() is a host-side driver and cannot be called "
                "inside jit/vmap. Call it with concrete params."
            )
        if _is_key_dtype(getattr(leaf, "dtype", None)):
            arr = None
            shape = tuple(leaf.shape)
        else:
            arr = np.asarray(leaf)
            shape = arr.shape
            if arr.dtype == object:
                raise ValueError(f"{name} has dtype object; params leaves must be numeric arrays.")
            if np.issubdtype(arr.dtype, np.inexact) and np.any(np.isnan(arr)):
                raise ValueError(
                    f"{name} contains NaN ({arr.ravel()[:5].tolist()}...); hyperparameters must "
                    "be numbers. Check how this parameter was computed."
                )
        if sweep:
            if len(shape) == 0:
                raise ValueError(
                    f"sweep=True needs a leading sweep axis on every params leaf, but {name} is a "
                    "scalar. Broadcast shared values to [P, ...] (or use stack_params)."
                )
            sizes.append((name, shape[0]))
    if not sweep:
        return None
    if not sizes:
        raise ValueError("sweep=True but params has no array leaves to sweep over.")
    distinct = sorted({s for _, s in sizes})
    if len(distinct) != 1:
        detail = ", ".join(f"{n}: {s}" for n, s in sizes[:8])
        raise ValueError(
            f"params sweep with inconsistent leading axis ({detail}); every leaf needs the same "
            "sweep size P. Broadcast shared values to [P, ...] (or use stack_params)."
        )
    if distinct[0] < 1:
        raise ValueError("params sweep axis has size 0; pass at least one params value.")
    return distinct[0]


def _check_xs(xs, num_steps: int):
    leaves = _leaves_with_paths(xs)
    out = []
    for path, leaf in leaves:
        name = "xs" + jax.tree_util.keystr(path)
        shape = np.shape(leaf)
        if len(shape) == 0:
            raise ValueError(
                f"{name} is a scalar; scanned inputs need a leading time axis of length >= "
                f"num_steps = {num_steps}."
            )
        if shape[0] < num_steps:
            raise ValueError(
                f"{name} has leading axis {shape[0]} < num_steps = {num_steps}; x_t is needed for "
                f"t = 0..{num_steps - 1}. Give at least num_steps slices or run fewer steps."
            )
        out.append(leaf)
    if not out:
        return None
    return jax.tree_util.tree_map(lambda a: jnp.asarray(a)[:num_steps], xs)


def _default_chunk_records(n_records: int, target_chunks: int = 16, max_chunks: int = 256) -> int:
    """Records per chunk: a divisor of n_records giving about ``target_chunks`` chunks."""
    best, best_score = n_records, math.inf
    for d in range(1, int(math.isqrt(n_records)) + 1):
        if n_records % d:
            continue
        for div in (d, n_records // d):
            chunks = n_records // div
            if chunks > max_chunks:
                continue
            score = abs(math.log(chunks / target_chunks))
            if score < best_score or (score == best_score and div > best):
                best, best_score = div, score
    return best


def _wants_info(record_fn) -> bool:
    try:
        sig = inspect.signature(record_fn)
    except (TypeError, ValueError):
        return False
    positional = 0
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            return True
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            if p.default is inspect.Parameter.empty:
                positional += 1
    return positional >= 2


def stack_params(params_list: Sequence[Any]) -> Any:
    """Stack a list of params pytrees into one with a leading sweep axis, for ``sweep=True``.

    Example:
        >>> swept = stack_params([Params(alpha=0.1), Params(alpha=0.2)])
        >>> run(alg, swept, seeds=range(4), num_steps=100, sweep=True)  # doctest: +SKIP
    """
    if len(params_list) == 0:
        raise ValueError("stack_params needs at least one params value.")
    return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *params_list)


# --------------------------------------------------------------------------------------------
# hashing / fingerprint
# --------------------------------------------------------------------------------------------


def _code_hash(fn) -> str | None:
    """Hash of a function's byte code and constants (recursively through nested code objects),
    so a checkpoint made with different code under the same name is refused."""
    if fn is None:
        return None
    target = inspect.unwrap(getattr(fn, "func", fn))   # functools.partial, jax.jit, wraps
    code = getattr(target, "__code__", None)
    if code is None:
        code = getattr(type(target).__call__, "__code__", None) if callable(target) else None
    if code is None:
        return type(fn).__qualname__
    h = hashlib.sha256()

    def feed(c):
        h.update(c.co_code)
        h.update(repr(c.co_names).encode())
        for const in c.co_consts:
            if hasattr(const, "co_code"):
                feed(const)
            elif isinstance(const, frozenset):
                h.update(repr(sorted(map(repr, const))).encode())
            else:
                h.update(repr(const).encode())

    feed(code)
    return h.hexdigest()


def _check_step_types(algorithm, params, sweep, xs) -> None:
    """Trace one init and one step abstractly; refuse a step whose new state does not match
    the state it was given (a clear ValueError instead of lax.scan's TypeError)."""
    one_params = jax.tree_util.tree_map(lambda a: a[0], params) if sweep else params
    x0 = None if xs is None else jax.tree_util.tree_map(lambda a: a[0], xs)
    init_key, step_root = _derive(jnp.uint32(0))
    state = jax.eval_shape(algorithm.init, init_key, one_params)
    new_state = jax.eval_shape(
        lambda s: algorithm.step(jax.random.fold_in(step_root, 0), s, one_params,
                                 jnp.int32(0), x0)[0], state)
    before = jax.tree_util.tree_flatten_with_path(state)
    after = jax.tree_util.tree_flatten_with_path(new_state)
    if before[1] != after[1]:
        raise ValueError(f"{algorithm.name}: step returns a state with structure {after[1]} but "
                         f"init/step take {before[1]}; step must return (State, Info) with the "
                         "same State structure.")
    for (path, a), (_, b) in zip(before[0], after[0], strict=True):
        if a.shape != b.shape or a.dtype != b.dtype:
            leaf = jax.tree_util.keystr(path) or "<root>"
            raise ValueError(f"{algorithm.name}: step changes state leaf {leaf} from "
                             f"{a.dtype}{list(a.shape)} to {b.dtype}{list(b.shape)}; the state "
                             "must keep its shapes and "
                             "dtypes (cast explicitly, e.g. x.astype(state.dtype)).")


def _hash_tree(tree) -> str:
    h = hashlib.sha256()
    leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
    h.update(_treedef_text(tree).encode())
    for path, leaf in leaves:
        h.update(jax.tree_util.keystr(path).encode())
        if _is_key_dtype(getattr(leaf, "dtype", None)):
            h.update(str(leaf.dtype).encode())
            leaf = jax.random.key_data(leaf)
        arr = np.ascontiguousarray(np.asarray(leaf))
        h.update(arr.dtype.str.encode())
        h.update(repr(arr.shape).encode())
        h.update(arr.tobytes())
    return h.hexdigest()


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _treedef_text(tree) -> str:
    """The tree structure as text without memory addresses (custom nodes such as
    ``jax.tree_util.Partial`` print their functions with an address that changes per process)."""
    return _ADDRESS.sub("", str(jax.tree_util.tree_structure(tree)))


def _spec(tree) -> list:
    return [
        [jax.tree_util.keystr(path), list(leaf.shape), str(leaf.dtype)]
        for path, leaf in _leaves_with_paths(tree)
    ] + [["treedef", _treedef_text(tree)]]


def _fingerprint(config: dict) -> str:
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# compiled pieces
# --------------------------------------------------------------------------------------------


def _all_finite(tree) -> jax.Array:
    flags = [
        jnp.all(jnp.isfinite(leaf))
        for leaf in jax.tree_util.tree_leaves(tree)
        if jnp.issubdtype(leaf.dtype, jnp.inexact)
    ]
    if not flags:
        return jnp.bool_(True)
    return functools.reduce(jnp.logical_and, flags)


class _Compiled(NamedTuple):
    init: Callable
    chunk: Callable


def _build(algorithm, record_fn, record_every, sweep, wants_info, mesh) -> _Compiled:
    step = algorithm.step
    spec = P(None, "seeds") if sweep else P("seeds")
    batched = NamedSharding(mesh, spec)

    def record(state, info):
        if record_fn is None:
            return state
        return record_fn(state, info) if wants_info else record_fn(state)

    def info_zeros(step_root, state, params, x0):
        shapes = jax.eval_shape(
            lambda k, s: step(k, s, params, jnp.int32(0), x0)[1],
            jax.random.fold_in(step_root, 0),
            state,
        )
        return jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)

    def first_x(xs):
        return jax.tree_util.tree_map(lambda a: a[0], xs)

    def init_one(seed, params, xs):
        init_key, step_root = _derive(seed)
        state = jax.tree_util.tree_map(jnp.asarray, algorithm.init(init_key, params))
        info = info_zeros(step_root, state, params, first_x(xs)) if wants_info else None
        return state, record(state, info), _all_finite(state)

    def chunk_one(seed, state, params, xs, t0, n_blocks):
        _, step_root = _derive(seed)
        length = n_blocks * record_every
        ts = (t0 + jnp.arange(length, dtype=jnp.int32)).reshape(n_blocks, record_every)
        xs_blocks = jax.tree_util.tree_map(
            lambda a: lax.dynamic_slice_in_dim(a, t0, length, axis=0).reshape(
                (n_blocks, record_every) + a.shape[1:]
            ),
            xs,
        )

        def one_step(carry, inp):
            st, _ = carry
            t, x_t = inp
            new_st, info = step(jax.random.fold_in(step_root, t), st, params, t, x_t)
            return (new_st, info if wants_info else None), None

        def block(carry, inp):
            carry, _ = lax.scan(one_step, carry, inp)
            return carry, record(*carry)

        info0 = info_zeros(step_root, state, params, first_x(xs)) if wants_info else None
        (state, _), recs = lax.scan(block, (state, info0), (ts, xs_blocks))
        return state, recs, _all_finite(state)

    init_v = jax.vmap(init_one, in_axes=(0, None, None))
    chunk_v = jax.vmap(chunk_one, in_axes=(0, 0, None, None, None, None))
    if sweep:
        init_v = jax.vmap(init_v, in_axes=(None, 0, None))
        chunk_v = jax.vmap(chunk_v, in_axes=(None, 0, 0, None, None, None))

    init_jit = jax.jit(init_v, out_shardings=batched)
    chunk_jit = jax.jit(chunk_v, static_argnums=(5,), out_shardings=batched)
    return _Compiled(init_jit, chunk_jit)


@functools.lru_cache(maxsize=32)
def _build_cached(algorithm, record_fn, record_every, sweep, wants_info, mesh) -> _Compiled:
    return _build(algorithm, record_fn, record_every, sweep, wants_info, mesh)


def _compiled(algorithm, record_fn, record_every, sweep, wants_info, mesh) -> _Compiled:
    try:
        return _build_cached(algorithm, record_fn, record_every, sweep, wants_info, mesh)
    except TypeError:  # unhashable pieces: build without caching
        return _build(algorithm, record_fn, record_every, sweep, wants_info, mesh)


# --------------------------------------------------------------------------------------------
# host-side helpers
# --------------------------------------------------------------------------------------------


def _to_host(leaf, seed_axis: int, n_seeds: int):
    """Drop padded seeds and move to host (numpy; PRNG-key leaves stay JAX arrays)."""
    index = (slice(None),) * seed_axis + (slice(0, n_seeds),)
    if _is_key_dtype(leaf.dtype):
        return leaf[index]
    return np.asarray(leaf)[index]


def _concat(parts, axis):
    if not parts:
        return None
    first = parts[0]
    if _is_key_dtype(getattr(first, "dtype", None)):
        return jnp.concatenate(parts, axis=axis)
    return np.concatenate(parts, axis=axis)


def _encode(tree) -> dict[str, np.ndarray]:
    out = {}
    for i, leaf in enumerate(jax.tree_util.tree_leaves(tree)):
        if _is_key_dtype(leaf.dtype):
            leaf = jax.random.key_data(leaf)
        out[f"leaf_{i:05d}"] = np.asarray(leaf)
    return out


def _decode(data: dict, template, what: str, path: Path):
    """Rebuild a pytree shaped like ``template`` (host arrays) from ``data``."""
    leaves, treedef = jax.tree_util.tree_flatten(template)
    out = []
    for i, tmpl in enumerate(leaves):
        key = f"leaf_{i:05d}"
        if key not in data:
            raise ValueError(
                f"checkpoint file {path} is corrupted: {what} leaf {i} is missing. Delete the "
                "checkpoint folder (or pass another checkpoint_dir) to start over."
            )
        arr = data[key]
        if _is_key_dtype(tmpl.dtype):
            expected = tuple(jax.random.key_data(tmpl).shape)
            if arr.shape != expected:
                raise ValueError(f"checkpoint file {path} is corrupted: {what} leaf {i} shape.")
            out.append(jax.random.wrap_key_data(arr, impl=jax.random.key_impl(tmpl)))
            continue
        if arr.shape != tuple(tmpl.shape) or arr.dtype != np.dtype(tmpl.dtype):
            raise ValueError(
                f"checkpoint file {path} is corrupted: {what} leaf {i} has shape {arr.shape} "
                f"dtype {arr.dtype}, expected {tuple(tmpl.shape)} {np.dtype(tmpl.dtype)}. Delete "
                "the checkpoint folder (or pass another checkpoint_dir) to start over."
            )
        out.append(arr)
    return jax.tree_util.tree_unflatten(treedef, out)


def _load_checkpoint_file(path: Path, fingerprint: str) -> dict:
    try:
        data = read_npz(path)
    except Exception as exc:
        raise ValueError(
            f"checkpoint file {path} is corrupted or unreadable ({type(exc).__name__}: {exc}). "
            f"Delete {path.parent} (or pass another checkpoint_dir) to start over."
        ) from exc
    for key in ("format", "fingerprint"):
        if key not in data:
            raise ValueError(
                f"checkpoint file {path} is corrupted: entry {key!r} is missing. Delete "
                f"{path.parent} (or pass another checkpoint_dir) to start over."
            )
    if str(data["format"]) != _CKPT_FORMAT:
        raise ValueError(f"checkpoint file {path} has unknown format {str(data['format'])!r}.")
    if str(data["fingerprint"]) != fingerprint:
        raise _MismatchError(path)
    return data


class _MismatchError(Exception):
    def __init__(self, path):
        super().__init__(str(path))
        self.path = path


def _mismatch_message(ckpt_dir: Path, config: dict) -> str:
    stored = None
    try:
        stored = json.loads((ckpt_dir / "config.json").read_text()).get("config")
    except Exception:
        pass
    if isinstance(stored, dict):
        fields = sorted(k for k in set(stored) | set(config) if stored.get(k) != config.get(k))
        detail = f"fields that differ: {', '.join(fields)}" if fields else "configs look equal"
        diffs = []
        for k in fields[:4]:
            a, b = json.dumps(stored.get(k)), json.dumps(config.get(k))
            a = a if len(a) < 80 else a[:77] + "..."
            b = b if len(b) < 80 else b[:77] + "..."
            diffs.append(f"{k}: checkpoint {a} vs now {b}")
        if diffs:
            detail += " (" + "; ".join(diffs) + ")"
    else:
        detail = "config.json beside it is missing or unreadable"
    return (
        f"checkpoint in {ckpt_dir} belongs to a different run configuration ({detail}); refusing "
        "to mix runs. Use another checkpoint_dir, or delete this one to start over."
    )


def _pad_seeds(a, seed_axis: int, n_pad: int):
    """Append ``n_pad`` copies of seed 0's slice along the seeds axis (padding is dropped later)."""
    if n_pad == 0:
        return a
    xp = jnp if _is_key_dtype(a.dtype) else np
    first = xp.take(a, xp.asarray([0]), axis=seed_axis)
    return xp.concatenate([a, xp.repeat(first, n_pad, axis=seed_axis)], axis=seed_axis)


def _resume(ckpt_dir, config, fingerprint, state_template, record_template, chunk_lens,
            record_every, seed_axis, n_seeds):
    """Load ``state.npz`` and the finished chunks' records; validate everything."""
    n_chunks = len(chunk_lens)
    state_file = ckpt_dir / "state.npz"
    try:
        data = _load_checkpoint_file(state_file, fingerprint)
    except _MismatchError:
        raise ValueError(_mismatch_message(ckpt_dir, config)) from None
    start_chunk = int(data.get("next_chunk", -1))
    if not 0 < start_chunk <= n_chunks:
        raise ValueError(
            f"checkpoint file {state_file} is corrupted: next_chunk = {start_chunk} outside "
            f"1..{n_chunks}. Delete {ckpt_dir} to start over."
        )
    loaded_state = _decode(data, state_template, "state", state_file)
    parts = []
    for c in range(start_chunk):
        path = ckpt_dir / f"records_{c:06d}.npz"
        if not path.exists():
            raise ValueError(
                f"checkpoint in {ckpt_dir} is corrupted: {path.name} is missing although "
                f"state.npz says {start_chunk} chunks are done. Delete {ckpt_dir} to start over."
            )
        try:
            rdata = _load_checkpoint_file(path, fingerprint)
        except _MismatchError:
            raise ValueError(
                f"checkpoint file {path} belongs to another run (its fingerprint differs from "
                f"state.npz): {ckpt_dir} is corrupted. Delete it to start over."
            ) from None
        if int(rdata.get("chunk", -1)) != c:
            raise ValueError(f"checkpoint file {path} is corrupted: it holds another chunk.")
        n_blocks = chunk_lens[c] // record_every

        def shaped(a, nb=n_blocks):
            shape = a.shape[:seed_axis] + (n_seeds, nb) + a.shape[seed_axis + 1 :]
            return jax.ShapeDtypeStruct(shape, a.dtype)

        parts.append(_decode(rdata, jax.tree_util.tree_map(shaped, record_template), "records",
                             path))
    return start_chunk, loaded_state, parts


def _seed_axis(sweep: bool) -> int:
    return 1 if sweep else 0


def _handle_divergence(finite, seeds, sweep, chunk, step_range, mode, already):
    finite = np.asarray(finite)
    bad = ~finite
    if not bad.any():
        return
    if sweep:
        p_idx, s_idx = np.nonzero(bad)
    else:
        s_idx = np.nonzero(bad)[0]
        p_idx = None
    p_list = p_idx.tolist() if p_idx is not None else [None] * len(s_idx)
    pairs = set(zip(p_list, s_idx.tolist(), strict=True))
    new = pairs - already
    if mode == "warn" and not new:
        return
    bad_seeds = seeds[s_idx].tolist()
    if chunk < 0:
        where = "the initial state"
    else:
        where = f"chunk {chunk} (steps {step_range[0]}..{step_range[1]})"
    msg = f"run diverged: non-finite state after {where} for seeds {bad_seeds[:20]}"
    if len(bad_seeds) > 20:
        msg += f" (+{len(bad_seeds) - 20} more)"
    if p_idx is not None:
        msg += f" at params indices {p_idx.tolist()[:20]}"
    msg += ". Reduce the step size or check the inputs; on_divergence='warn' continues instead."
    if mode == "raise":
        raise DivergenceError(
            msg,
            chunk=chunk,
            step_range=step_range,
            seeds=bad_seeds,
            param_indices=None if p_idx is None else p_idx.tolist(),
        )
    already |= new
    warnings.warn(msg, DivergenceWarning, stacklevel=3)


# --------------------------------------------------------------------------------------------
# run
# --------------------------------------------------------------------------------------------


def run(
    algorithm: Algorithm,
    params: Any,
    seeds: Sequence[int] | np.ndarray,
    num_steps: int,
    *,
    record_every: int = 1,
    record_fn: Callable | None = None,
    record_initial: bool = False,
    xs: Any = None,
    sweep: bool = False,
    chunk_size: int | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    progress: bool | None = None,
    on_chunk_end: Callable[[int], Any] | None = None,
    devices: Sequence[Any] | None = None,
    on_divergence: Literal["raise", "warn"] = "raise",
) -> RunResult:
    """Run ``algorithm`` for ``num_steps`` updates on every seed (and params value).

    For each seed ``s`` (keys as in the module docstring): ``state_0 = init(init_key, params)``,
    ``state_{t+1}, info_t = step(fold_in(step_root, t), state_t, params, t, xs[t])``; records are
    ``record_fn(state_k)`` for ``k = record_every, 2*record_every, ..., num_steps`` (and ``k = 0``
    if ``record_initial``).

    Args:
        algorithm: the :class:`Algorithm` to run.
        params: hyperparameters (a pytree of arrays), shared by all seeds. With ``sweep=True``
            every leaf has a leading axis ``P`` and the run is vmapped over it (one compile).
        seeds: distinct integers in ``[0, 2**32)``.
        num_steps: number of updates ``T >= 1``.
        record_every: record every this many updates; must divide ``num_steps``.
        record_fn: ``record_fn(state) -> pytree`` kept at the record points (default: the whole
            state). If it takes two positional arguments it is called as
            ``record_fn(state, info)`` with the ``Info`` of the step just taken (zeros for the
            initial record).
        record_initial: also record the initial state (as record step 0).
        xs: scanned inputs shared by all seeds and params values, a pytree whose leaves have a
            leading axis ``>= num_steps``; ``step`` sees ``xs[t]``.
        sweep: vmap over a leading params axis (see ``params``).
        chunk_size: updates per chunk, a multiple of ``record_every`` (default: a divisor of
            ``num_steps`` giving about 16 chunks). Results do not depend on it. If it does not
            divide ``num_steps`` the shorter last chunk compiles once more; a value above
            ``num_steps`` means one chunk.
        checkpoint_dir: folder for checkpoints; an existing checkpoint of the same configuration
            is resumed (bit-identical to an uninterrupted run), a complete one is returned
            without computing.
        progress: tqdm bar over chunks; None shows it only when stderr is a terminal.
        on_chunk_end: ``on_chunk_end(chunk_index)`` after each chunk is finished and
            checkpointed (not called for chunks loaded from a checkpoint).
        devices: devices to shard the seeds axis over (default ``jax.devices()``); the seed
            count is padded to a multiple of the device count and the padding is dropped.
        on_divergence: ``"raise"`` (default) raises :class:`DivergenceError` after the first
            chunk whose state is non-finite (before checkpointing it); ``"warn"`` warns once
            per newly diverged seed and continues.

    Returns:
        A :class:`RunResult`.

    Raises:
        ValueError: malformed input (see the messages), a checkpoint of another configuration,
            a corrupted checkpoint.
        DivergenceError: non-finite state with ``on_divergence="raise"``.

    Example:
        >>> res = run(alg, params, seeds=range(8), num_steps=1000, record_every=10)
        >>> res.records.theta.shape  # [S, 100, N, d]
    """
    # ---------------- validation (all host-side, before anything compiles) ----------------
    if not isinstance(algorithm, Algorithm):
        if not all(hasattr(algorithm, a) for a in ("init", "step", "name")):
            raise ValueError(
                f"algorithm must be a decentral.runner.Algorithm(init, step, name); got "
                f"{type(algorithm).__name__}."
            )
        algorithm = Algorithm(
            algorithm.init, algorithm.step, str(algorithm.name),
            str(getattr(algorithm, "version", "0")), getattr(algorithm, "max_horizon", None),
        )
    if not callable(algorithm.init) or not callable(algorithm.step):
        raise ValueError("algorithm.init and algorithm.step must be callables.")
    num_steps = _as_int(num_steps, "num_steps")
    if num_steps > 2**31 - 1:
        raise ValueError(f"num_steps = {num_steps} exceeds the int32 step counter (2**31 - 1).")
    record_every = _as_int(record_every, "record_every")
    if num_steps % record_every:
        raise ValueError(
            f"record_every = {record_every} does not divide num_steps = {num_steps}; choose "
            f"num_steps as a multiple of record_every (e.g. {num_steps - num_steps % record_every}"
            f" or {num_steps + record_every - num_steps % record_every})."
        )
    if algorithm.max_horizon is not None and num_steps > algorithm.max_horizon:
        raise ValueError(
            f"num_steps = {num_steps} exceeds algorithm {algorithm.name!r}'s max_horizon = "
            f"{algorithm.max_horizon} (e.g. the length of its explicit graph stack); run at most "
            f"{algorithm.max_horizon} steps or build a longer sequence."
        )
    n_records = num_steps // record_every
    if chunk_size is None:
        chunk_size = _default_chunk_records(n_records) * record_every
    else:
        chunk_size = _as_int(chunk_size, "chunk_size")
        if chunk_size % record_every:
            raise ValueError(
                f"chunk_size = {chunk_size} is not a multiple of record_every = {record_every}; "
                "every chunk must end on a record point."
            )
        chunk_size = min(chunk_size, num_steps)
    if on_divergence not in ("raise", "warn"):
        raise ValueError(f"on_divergence must be 'raise' or 'warn'; got {on_divergence!r}.")
    seeds = _validate_seeds(seeds)
    n_seeds = len(seeds)
    n_params = _check_params(params, bool(sweep))
    sweep = bool(sweep)
    xs = _check_xs(xs, num_steps)
    if record_fn is not None and not callable(record_fn):
        raise ValueError(f"record_fn must be callable or None; got {record_fn!r}.")
    wants_info = record_fn is not None and _wants_info(record_fn)

    # ---------------- devices, padding, sharding ----------------
    devs = list(jax.devices() if devices is None else devices)
    if not devs:
        raise ValueError("devices is empty; pass None (all devices) or a list of jax devices.")
    mesh = Mesh(np.asarray(devs, dtype=object), ("seeds",))
    n_pad = (-n_seeds) % len(devs)
    padded = np.concatenate([seeds, np.repeat(seeds[:1], n_pad)]).astype(np.uint32)
    seed_sharding = NamedSharding(mesh, P("seeds"))
    batched = NamedSharding(mesh, P(None, "seeds") if sweep else P("seeds"))
    replicated = NamedSharding(mesh, P())
    seed_axis = _seed_axis(sweep)

    params_dev = jax.device_put(jax.tree_util.tree_map(jnp.asarray, params), replicated)
    xs_dev = None if xs is None else jax.device_put(xs, replicated)
    seeds_dev = jax.device_put(padded, seed_sharding)

    compiled = _compiled(algorithm, record_fn, record_every, sweep, wants_info, mesh)
    state, rec0, finite0 = compiled.init(seeds_dev, params_dev, xs_dev)

    n_chunks = -(-num_steps // chunk_size)
    chunk_starts = [c * chunk_size for c in range(n_chunks)]
    chunk_lens = [min(chunk_size, num_steps - s) for s in chunk_starts]

    state_host_template = jax.tree_util.tree_map(lambda a: _to_host(a, seed_axis, n_seeds), state)
    # records of one chunk look like the record of the initial state with a block axis added
    record_template = jax.eval_shape(lambda r: r, rec0)

    config = None
    fingerprint = None
    ckpt_dir = None
    if checkpoint_dir is not None:
        ckpt_dir = Path(checkpoint_dir)
        config = {
            "format": _CKPT_FORMAT,
            "algorithm": algorithm.name,
            "algorithm_version": algorithm.version,
            "num_steps": num_steps,
            "record_every": record_every,
            "chunk_size": chunk_size,
            "record_initial": bool(record_initial),
            "sweep": sweep,
            "sweep_size": n_params,
            "seeds": seeds.tolist(),
            # specs of the unpadded arrays, so a run padded for one device count resumes on
            # another
            "state_spec": _spec(state_host_template),
            "record_spec": _spec(jax.tree_util.tree_map(
                lambda a: jax.ShapeDtypeStruct(
                    a.shape[:seed_axis] + (n_seeds,) + a.shape[seed_axis + 1:], a.dtype),
                record_template)),
            "record_fn": None if record_fn is None else getattr(
                record_fn, "__qualname__", type(record_fn).__name__
            ),
            "code_hash": {"init": _code_hash(algorithm.init), "step": _code_hash(algorithm.step),
                          "record_fn": _code_hash(record_fn)},
            "params_hash": _hash_tree(params),
            "xs_hash": None if xs is None else _hash_tree(xs),
            "key_derivation": KEY_DERIVATION,
            "prng_impl": str(jax.config.jax_default_prng_impl),
            "enable_x64": bool(jax.config.jax_enable_x64),
        }
        config = to_jsonable(config)
        fingerprint = _fingerprint(config)

    # ---------------- resume ----------------
    start_chunk, loaded_state, record_parts = 0, None, []
    if ckpt_dir is not None and (ckpt_dir / "state.npz").exists():
        start_chunk, loaded_state, record_parts = _resume(
            ckpt_dir, config, fingerprint, state_host_template, record_template, chunk_lens,
            record_every, seed_axis, n_seeds,
        )
        state = jax.device_put(
            jax.tree_util.tree_map(lambda a: _pad_seeds(a, seed_axis, n_pad), loaded_state),
            batched,
        )
    elif ckpt_dir is not None:
        ckpt_dir.mkdir(parents=True, exist_ok=True)
        meta = {"config": config, "fingerprint": fingerprint, "provenance": provenance()}
        text = json.dumps(meta, indent=2, sort_keys=True)
        atomic_write_bytes(ckpt_dir / "config.json", lambda f: f.write(text.encode()))

    diverged: set = set()
    if start_chunk == 0:
        _handle_divergence(
            _to_host(finite0, seed_axis, n_seeds), seeds, sweep, -1, (0, 0), on_divergence,
            diverged,
        )

    # ---------------- chunks ----------------
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    bar = None
    if progress and start_chunk < n_chunks:
        from tqdm.auto import tqdm

        bar = tqdm(total=n_chunks, initial=start_chunk, desc=algorithm.name, unit="chunk")
    try:
        for c in range(start_chunk, n_chunks):
            t0 = chunk_starts[c]
            n_blocks = chunk_lens[c] // record_every
            try:
                state, recs, finite = compiled.chunk(
                    seeds_dev, state, params_dev, xs_dev, jnp.int32(t0), n_blocks
                )
            except TypeError:
                _check_step_types(algorithm, params, sweep, xs)   # explains a state mismatch
                raise
            _handle_divergence(
                _to_host(finite, seed_axis, n_seeds), seeds, sweep, c,
                (t0, t0 + chunk_lens[c] - 1), on_divergence, diverged,
            )
            recs_host = jax.tree_util.tree_map(lambda a: _to_host(a, seed_axis, n_seeds), recs)
            record_parts.append(recs_host)
            if ckpt_dir is not None:
                base = {"format": np.asarray(_CKPT_FORMAT), "fingerprint": np.asarray(fingerprint)}
                write_npz_atomic(
                    ckpt_dir / f"records_{c:06d}.npz",
                    {**base, "chunk": np.asarray(c), **_encode(recs_host)},
                )
                state_host = jax.tree_util.tree_map(
                    lambda a: _to_host(a, seed_axis, n_seeds), state
                )
                write_npz_atomic(
                    ckpt_dir / "state.npz",
                    {
                        **base,
                        "next_chunk": np.asarray(c + 1),
                        "num_chunks": np.asarray(n_chunks),
                        "complete": np.asarray(c + 1 == n_chunks),
                        **_encode(state_host),
                    },
                )
            if bar is not None:
                bar.update(1)
            if on_chunk_end is not None:
                on_chunk_end(c)
    finally:
        if bar is not None:
            bar.close()

    if start_chunk == n_chunks:  # complete checkpoint: check what we return, like a live run
        _handle_divergence(
            np.asarray(_all_finite_host(loaded_state, seed_axis, n_seeds, n_params)),
            seeds, sweep, n_chunks - 1,
            (chunk_starts[-1], num_steps - 1), on_divergence, diverged,
        )

    # ---------------- assemble ----------------
    rec_axis = seed_axis + 1
    parts = record_parts
    if record_initial:
        parts = [jax.tree_util.tree_map(
            lambda a: np.expand_dims(a, rec_axis) if not _is_key_dtype(a.dtype)
            else jnp.expand_dims(a, rec_axis),
            jax.tree_util.tree_map(lambda a: _to_host(a, seed_axis, n_seeds), rec0),
        )] + parts
    records = jax.tree_util.tree_map(lambda *xs_: _concat(list(xs_), rec_axis), *parts)
    record_steps = np.arange(record_every, num_steps + 1, record_every, dtype=np.int64)
    if record_initial:
        record_steps = np.concatenate([[0], record_steps]).astype(np.int64)
    final_state = jax.tree_util.tree_map(lambda a: _to_host(a, seed_axis, n_seeds), state)
    return RunResult(records, record_steps, final_state, seeds.copy(), num_steps)


def _all_finite_host(state, seed_axis, n_seeds, n_params):
    shape = (n_params, n_seeds) if seed_axis == 1 else (n_seeds,)
    ok = np.ones(shape, dtype=bool)
    for leaf in jax.tree_util.tree_leaves(state):
        if _is_key_dtype(leaf.dtype) or not np.issubdtype(np.asarray(leaf).dtype, np.inexact):
            continue
        a = np.isfinite(np.asarray(leaf)).reshape(shape + (-1,))
        ok &= a.all(axis=-1)
    return ok
