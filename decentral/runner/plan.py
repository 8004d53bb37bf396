"""Argument checks of :func:`~decentral.runner.run`, all on the host and before anything
compiles, gathered into one validated :class:`Plan`."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import check_int

from .algorithm import Algorithm

__all__ = ["Plan", "make_plan", "validate_seeds", "log_spaced_steps", "sweep_axes",
           "sweep_entries"]

_MAX_SEED = 2**32 - 1
_MAX_STEPS = 2**31 - 1


class Plan(NamedTuple):
    algorithm: Algorithm
    seeds: np.ndarray             # [S] int64
    num_steps: int
    record_steps: np.ndarray      # [R] int64, updates done at each record (0 = initial)
    record_initial: bool
    record_every: int | None      # regular grid spacing, None for irregular record points
    chunk_bounds: list            # [(first record index, end record index)] over the R' records
    chunk_steps: list             # [(t0, t1)] update range of each chunk (t1 exclusive)
    sweep: bool
    sweep_size: int | None
    params_axes: tuple            # (treedef, leaves) or ()
    sweep_spec: Any               # JSON-able description of what is swept
    xs: Any


def validate_seeds(seeds) -> np.ndarray:
    """Seeds as a 1-D int64 array of distinct integers in ``[0, 2**32)``."""
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


def log_spaced_steps(num_steps: int, count: int, *, first: int = 1) -> np.ndarray:
    """About ``count`` distinct, geometrically spaced record steps in ``[first, num_steps]``,
    ending at ``num_steps`` — the ``record_at`` of a rate fit.

    Example:
        >>> log_spaced_steps(1000, 4).tolist()
        [1, 10, 100, 1000]
    """
    num_steps = check_int(num_steps, "num_steps")
    count = check_int(count, "count")
    first = check_int(first, "first", maximum=num_steps)
    grid = np.geomspace(first, num_steps, count)
    steps = np.unique(np.round(grid).astype(np.int64))
    steps[-1] = num_steps
    return np.unique(steps)


def _is_key_dtype(dtype) -> bool:
    try:
        return jnp.issubdtype(dtype, jax.dtypes.prng_key)
    except Exception:
        return False


def _coerce_algorithm(algorithm) -> Algorithm:
    if isinstance(algorithm, Algorithm):
        return algorithm
    if not all(hasattr(algorithm, a) for a in ("init", "step", "name")):
        raise ValueError(
            f"algorithm must be a decentral.runner.Algorithm(init, step, name); got "
            f"{type(algorithm).__name__}."
        )
    return Algorithm(algorithm.init, algorithm.step, str(algorithm.name),
                     str(getattr(algorithm, "version", "0")),
                     getattr(algorithm, "max_horizon", None), getattr(algorithm, "config", None),
                     getattr(algorithm, "cpu_compiler_options", ()),
                     getattr(algorithm, "check_params", None),
                     getattr(algorithm, "divergence_hint", None))


def _record_schedule(num_steps, record_every, record_at, record_initial):
    if record_at is None:
        record_every = check_int(record_every, "record_every")
        if num_steps % record_every:
            raise ValueError(
                f"record_every = {record_every} does not divide num_steps = {num_steps}; choose "
                f"num_steps as a multiple of record_every (e.g. "
                f"{num_steps - num_steps % record_every} or "
                f"{num_steps + record_every - num_steps % record_every}).")
        steps = np.arange(record_every, num_steps + 1, record_every, dtype=np.int64)
        return steps, bool(record_initial), record_every
    if record_every != 1:
        raise ValueError("give either record_every or record_at, not both.")
    arr = np.asarray(record_at)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"record_at must be a non-empty 1-D sequence of steps; got shape "
                         f"{arr.shape}.")
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"record_at must hold integers (numbers of updates done); got dtype "
                         f"{arr.dtype}.")
    arr = arr.astype(np.int64)
    if np.any(np.diff(arr) <= 0):
        raise ValueError("record_at must be strictly increasing (no repeated steps).")
    if arr[0] < 0 or arr[-1] > num_steps:
        raise ValueError(f"record_at must lie in [0, num_steps = {num_steps}]; got "
                         f"{arr[0]}..{arr[-1]}.")
    initial = bool(record_initial) or arr[0] == 0
    steps = arr[arr > 0]
    if steps.size == 0 or steps[-1] != num_steps:
        # the run must end on a record point so every chunk ends on one; say so
        raise ValueError(f"record_at must end at num_steps = {num_steps} (the final state is "
                         f"always recorded); got last step {int(arr[-1])}.")
    every = None
    gaps = np.diff(np.concatenate([[0], steps]))
    if np.all(gaps == gaps[0]):
        every = int(gaps[0])  # a regular grid after all: the faster static layout
    return steps, initial, every


def _default_records_per_chunk(n_records: int, target_chunks: int = 16,
                               max_chunks: int = 256) -> int:
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


def _chunks(record_steps, record_every, chunk_size, want_intermediate):
    """Chunk boundaries, each chunk ending on a record point."""
    n = len(record_steps)
    if chunk_size is None:
        per = _default_records_per_chunk(n) if want_intermediate else n
    elif record_every is not None:
        chunk_size = check_int(chunk_size, "chunk_size")
        if chunk_size % record_every:
            raise ValueError(
                f"chunk_size = {chunk_size} is not a multiple of record_every = {record_every}; "
                "every chunk must end on a record point.")
        per = max(1, min(chunk_size // record_every, n))
    else:
        per = check_int(chunk_size, "chunk_size")
        per = None  # irregular: a chunk holds the records within chunk_size updates
    bounds = []
    if per is not None:
        bounds = [(i, min(i + per, n)) for i in range(0, n, per)]
    else:
        start, t_start = 0, 0
        for i, s in enumerate(record_steps):
            if s - t_start >= chunk_size or i == n - 1:
                bounds.append((start, i + 1))
                start, t_start = i + 1, int(s)
    steps = []
    for a, b in bounds:
        t0 = 0 if a == 0 else int(record_steps[a - 1])
        steps.append((t0, int(record_steps[b - 1])))
    return bounds, steps


def sweep_axes(params, sweep):
    """``(sweep?, in_axes (treedef, leaves), JSON spec)`` from ``sweep``."""
    if sweep is False or sweep is None:
        return False, (), False
    leaves, treedef = jax.tree_util.tree_flatten(params)
    if sweep is True:
        return True, (treedef, tuple(0 for _ in leaves)), True
    names = [sweep] if isinstance(sweep, str) else sweep
    if isinstance(names, Sequence) and all(isinstance(n, str) for n in names):
        fields = getattr(params, "_fields", None)
        keys = list(fields) if fields is not None else (
            list(params) if isinstance(params, dict) else None)
        if keys is None:
            raise ValueError("sweep by field name needs params to be a NamedTuple or a dict; "
                             f"got {type(params).__name__}.")
        unknown = [n for n in names if n not in keys]
        if unknown:
            raise ValueError(f"sweep names {unknown} are not params fields {keys}.")
        getter = (lambda k: getattr(params, k)) if fields is not None else params.__getitem__
        parts = {k: jax.tree_util.tree_map(lambda _, k=k: 0 if k in names else None,
                                           getter(k)) for k in keys}
        axes = type(params)(**parts) if fields is not None else parts
        return (*_from_axes_tree(params, axes), sorted(names))
    # a pytree of in_axes (0 / None leaves) shaped like params
    return (*_from_axes_tree(params, sweep), "in_axes")


def _from_axes_tree(params, axes):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    try:
        flat = treedef.flatten_up_to(axes) if not _is_none_tree(axes) else [None] * len(leaves)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"sweep in_axes must have the structure of params ({treedef}); "
                         f"{exc}") from None
    out = []
    for a in flat:
        if a not in (0, None):
            raise ValueError(f"sweep in_axes leaves must be 0 (swept) or None (shared); got "
                             f"{a!r}.")
        out.append(a)
    if all(a is None for a in out):
        raise ValueError("sweep selects no params leaf; sweep at least one.")
    return True, (treedef, tuple(out))


def _is_none_tree(t):
    return t is None


def _check_params(params, axes):
    """NaN/tracer checks on params; returns the sweep size P (or None)."""
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    mapped = axes[1] if axes else (None,) * len(leaves)
    sizes = []
    for (path, leaf), ax in zip(leaves, mapped, strict=True):
        name = "params" + jax.tree_util.keystr(path)
        if isinstance(leaf, jax.core.Tracer):
            raise ValueError(
                f"{name} is a JAX tracer; run() is a host-side driver and cannot be called "
                "inside jit/vmap. Call it with concrete params.")
        if _is_key_dtype(getattr(leaf, "dtype", None)):
            shape = tuple(leaf.shape)
        else:
            arr = np.asarray(leaf)
            shape = arr.shape
            if arr.dtype == object:
                raise ValueError(f"{name} has dtype object; params leaves must be numeric "
                                 "arrays.")
            if np.issubdtype(arr.dtype, np.inexact) and np.any(np.isnan(arr)):
                raise ValueError(
                    f"{name} contains NaN ({arr.ravel()[:5].tolist()}...); hyperparameters "
                    "must be numbers. Check how this parameter was computed.")
        if ax == 0:
            if len(shape) == 0:
                raise ValueError(
                    f"the sweep needs a leading sweep axis on every swept params leaf, but "
                    f"{name} is a scalar. Broadcast it to [P, ...] (or use stack_params), or "
                    "sweep only some fields (sweep='name').")
            sizes.append((name, shape[0]))
    if not axes:
        return None
    if not sizes:
        raise ValueError("the sweep has no array leaves to sweep over.")
    distinct = sorted({s for _, s in sizes})
    if len(distinct) != 1:
        detail = ", ".join(f"{n}: {s}" for n, s in sizes[:8])
        raise ValueError(
            f"params sweep with inconsistent leading axis ({detail}); every swept leaf needs "
            "the same sweep size P. Broadcast shared values to [P, ...] (or use stack_params).")
    if distinct[0] < 1:
        raise ValueError("params sweep axis has size 0; pass at least one params value.")
    return distinct[0]


def sweep_entries(params, axes, sweep_size):
    """The params of each sweep entry (host values), or ``[params]`` without a sweep."""
    if not axes:
        return [params]
    treedef, mapped = axes
    leaves = jax.tree_util.tree_leaves(params)
    out = []
    for i in range(sweep_size):
        out.append(jax.tree_util.tree_unflatten(treedef, [
            (leaf[i] if _is_key_dtype(getattr(leaf, "dtype", None)) else np.asarray(leaf)[i])
            if ax == 0 else leaf for leaf, ax in zip(leaves, mapped, strict=True)]))
    return out


def run_check_params(algorithm, params, axes, sweep_size) -> None:
    """Call ``algorithm.check_params`` on the params of every sweep entry (or on ``params``);
    a refusal of a sweep entry names its index."""
    check = algorithm.check_params
    if check is None:
        return
    entries = sweep_entries(params, axes, sweep_size)
    for i, entry in enumerate(entries):
        try:
            check(entry)
        except ValueError as exc:
            if len(entries) == 1 and not axes:
                raise
            raise type(exc)(f"params sweep entry {i}: {exc}") from exc


def _check_xs(xs, num_steps: int):
    leaves = jax.tree_util.tree_flatten_with_path(xs)[0]
    if not leaves:
        return None
    for path, leaf in leaves:
        name = "xs" + jax.tree_util.keystr(path)
        shape = np.shape(leaf)
        if len(shape) == 0:
            raise ValueError(
                f"{name} is a scalar; scanned inputs need a leading time axis of length >= "
                f"num_steps = {num_steps}.")
        if shape[0] < num_steps:
            raise ValueError(
                f"{name} has leading axis {shape[0]} < num_steps = {num_steps}; x_t is needed "
                f"for t = 0..{num_steps - 1}. Give at least num_steps slices or run fewer "
                "steps.")
    return jax.tree_util.tree_map(lambda a: jnp.asarray(a)[:num_steps], xs)


def make_plan(algorithm, params, seeds, num_steps, *, record_every, record_at, record_fn,
              record_initial, xs, sweep, chunk_size, checkpoint_dir, progress, on_chunk_end,
              on_divergence) -> tuple[Plan, bool]:
    """Validate every argument of :func:`run`; returns the plan and the resolved ``progress``."""
    algorithm = _coerce_algorithm(algorithm)
    num_steps = check_int(num_steps, "num_steps", maximum=_MAX_STEPS)
    if algorithm.max_horizon is not None and num_steps > algorithm.max_horizon:
        raise ValueError(
            f"num_steps = {num_steps} exceeds algorithm {algorithm.name!r}'s max_horizon = "
            f"{algorithm.max_horizon} (e.g. the length of its explicit graph stack); run at "
            f"most {algorithm.max_horizon} steps or build a longer sequence.")
    steps, initial, every = _record_schedule(num_steps, record_every, record_at,
                                             record_initial)
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    want_intermediate = bool(progress) or checkpoint_dir is not None or on_chunk_end is not None
    bounds, chunk_steps = _chunks(steps, every, chunk_size, want_intermediate)
    if on_divergence not in ("raise", "warn"):
        raise ValueError(f"on_divergence must be 'raise' or 'warn'; got {on_divergence!r}.")
    seeds = validate_seeds(seeds)
    is_sweep, axes, sweep_spec = sweep_axes(params, sweep)
    sweep_size = _check_params(params, axes)
    run_check_params(algorithm, params, axes, sweep_size)
    xs = _check_xs(xs, num_steps)
    if record_fn is not None and not callable(record_fn):
        raise ValueError(f"record_fn must be callable or None; got {record_fn!r}.")
    plan = Plan(algorithm, seeds, num_steps, steps, initial, every, bounds, chunk_steps,
                is_sweep, sweep_size, axes, sweep_spec, xs)
    return plan, bool(progress)
