""":func:`run`: orchestration over a validated :class:`~decentral.runner.plan.Plan`.

The order of work in one call:

1. :func:`~decentral.runner.plan.make_plan` checks every argument on the host (nothing compiles
   before the plan is valid) and fixes the record points and the chunks;
2. the seeds are padded to a multiple of the device count and placed on a one-axis mesh;
3. the cached compiled functions (:func:`~decentral.runner.compile.compiled`) build the initial
   state; with ``checkpoint_dir`` the configuration is fingerprinted and an existing checkpoint
   resumed (or refused, naming the fields that differ);
4. chunks are dispatched one ahead of the host: while chunk ``c + 1`` runs, the host checks
   chunk ``c``'s finiteness flags, copies its records, writes its checkpoint and ticks the
   progress bar (JAX dispatch is asynchronous, so the device never waits for the host);
5. a flagged chunk is replayed step by step to name the first non-finite update of each seed
   (only on failure); the result is assembled on the host.
"""

from __future__ import annotations

import os
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from decentral.results import to_jsonable

from .algorithm import Algorithm, DivergenceError, DivergenceWarning, RunResult
from .checkpoint import (
    CKPT_FORMAT,
    Checkpoint,
    barrier,
    fetch,
    is_key_dtype,
    is_writer,
    pad_seeds,
    to_host,
)
from .compile import Options, compiled
from .fingerprint import hash_tree, tree_spec
from .keys import KEY_DERIVATION, derive
from .layout import choose_layout, make_mesh
from .plan import Plan, make_plan
from .program import RunPrograms, abstract, trace_run

__all__ = ["run"]


def run(
    algorithm: Algorithm,
    params: Any,
    seeds: Sequence[int] | np.ndarray,
    num_steps: int,
    *,
    record_every: int = 1,
    record_at: Sequence[int] | np.ndarray | None = None,
    record_fn: Callable | None = None,
    record_context: bool = False,
    record_initial: bool = False,
    check_records: bool = True,
    xs: Any = None,
    sweep: bool | str | Sequence[str] | Any = False,
    chunk_size: int | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    progress: bool | None = None,
    on_chunk_end: Callable[[int], Any] | None = None,
    devices: Sequence[Any] | None = None,
    on_divergence: Literal["raise", "warn"] = "raise",
    layout: str | tuple[int, int] | None = None,
) -> RunResult:
    """Run ``algorithm`` for ``num_steps`` updates on every seed (and params value).

    For each seed (keys in :mod:`decentral.runner.keys`): ``state_0 = init(init_key, params)``,
    ``state_{t+1}, info_t = step(fold_in(step_root, t), state_t, params, t, xs[t])``. A record
    "at step k" is ``record_fn`` of the state after ``k`` updates.

    Args:
        algorithm: the :class:`~decentral.runner.Algorithm` to run.
        params: what a user sweeps (a pytree of arrays), shared by all seeds. With ``sweep`` the
            swept leaves carry a leading axis ``P`` and the run is vmapped over it (one compile).
            Checked by ``algorithm.check_params`` (each sweep entry separately) before anything
            compiles.
        seeds: distinct integers in ``[0, 2**32)``.
        num_steps: number of updates ``T >= 1``; at most ``algorithm.max_horizon``.
        record_every: record at ``k = record_every, 2 record_every, ..., T`` (must divide T).
        record_at: instead of ``record_every``, the record steps themselves: strictly increasing
            integers in ``[0, T]`` ending at ``T`` (a ``0`` records the initial state), e.g.
            :func:`~decentral.runner.log_spaced_steps` for a rate fit. Memory stays
            O(records).
        record_fn: ``record_fn(state)`` → the pytree kept at each record point (default: the
            whole state). Define it once and reuse it: a new lambda per call compiles anew
            (about a second), since the compile cache is keyed by the function itself.
        record_context: call ``record_fn(state, ctx)`` with a
            :class:`~decentral.runner.RecordContext` ``(t, info, x)``: the number of updates
            done, the ``Info`` of the update just taken and its scanned input ``xs[t - 1]``
            (zeros shaped like them at the initial record). An explicit choice: the runner never
            guesses from ``record_fn``'s signature.
        record_initial: also record the initial state (record step 0).
        check_records: also treat a non-finite *record* as divergence (default True). Pass
            False when records may legitimately be non-finite (e.g. the log of an error that
            reaches 0); the state is always checked.
        xs: scanned inputs shared by all seeds, a pytree whose leaves have a leading axis
            ``>= num_steps``; ``step`` sees ``xs[t]``.
        sweep: ``False`` (default); ``True`` to map over a leading axis of every params leaf;
            a field name or list of names of a NamedTuple / dict ``params`` to map over those
            fields only (the rest shared, not copied); or a pytree of ``0`` / ``None`` shaped
            like ``params`` (``vmap``'s ``in_axes``).
        chunk_size: updates per chunk (regular records: a multiple of ``record_every``).
            Default: one chunk when nothing needs intermediate results, else about 16 chunks.
            Results never depend on it.
        checkpoint_dir: folder for checkpoints (new, empty, or one a run checkpointed into; a
            folder holding other files is refused, naming them). An existing checkpoint of the
            same configuration is resumed (bit-identical to an uninterrupted run) and a
            complete one returned without computing; one of another configuration is refused,
            naming the differing fields (and the first differing line of a program). The
            fingerprint covers the traced programs of ``init``, one ``step`` and ``record_fn``
            at the run's shapes (:mod:`~decentral.runner.program`: every operation, literal
            and closed-over array by content, whatever module, method or global they come
            from), the algorithm's name, version and ``config``, params, xs, seeds, record
            points, chunks, state/record shapes, the key derivation, the jax / jaxlib
            versions, the JAX settings that change numbers (x64, PRNG implementation,
            ``jax_threefry_partitionable``, matmul precision), ``XLA_FLAGS`` and the
            algorithm's ``cpu_compiler_options``. A program with parts a trace cannot see
            (a host callback, custom derivative rules) is checkpointed only when the
            algorithm has a ``config`` describing them.
        progress: tqdm bar over chunks; None shows it only when stderr is a terminal.
        on_chunk_end: ``on_chunk_end(chunk_index)`` after each chunk is finished and
            checkpointed (not for chunks loaded from a checkpoint).
        devices: devices to run on (default ``jax.devices()``: in a multi-process job
            started with ``jax.distributed.initialize``, every process's devices). The seed
            count is padded to a multiple of the seed-axis device count and the padding
            dropped.
        on_divergence: ``"raise"`` raises :class:`~decentral.runner.DivergenceError` at the
            first chunk with a non-finite state (or record), naming the first non-finite
            update of each diverged seed, before that chunk is checkpointed; ``"warn"`` warns
            once per newly diverged seed and continues. A resumed or reloaded run reports the
            same divergence as the live run did.
        layout: how seeds and agents are split over ``devices``
            (:mod:`~decentral.runner.layout`): None (default: seeds first; the devices the
            seeds cannot fill split the agents of an algorithm that declares
            ``num_agents``, when each device gets at least 1024 agents), ``"seeds"``,
            ``"agents"`` (every device holds a block of every seed's agents), or a pair
            ``(seed devices, agent devices)``. Results do not depend on it beyond the order
            of floating-point sums in a product split over agents.

    Returns:
        A :class:`~decentral.runner.RunResult`: records ``[P?, S, R, ...]``, record steps,
        final state, seeds, ``num_steps``.

    Raises:
        ValueError: malformed input, params refused by ``algorithm.check_params`` (for a
            sweep, naming the entry), a run past ``max_horizon``, a checkpoint of another
            configuration or a corrupted one, a checkpoint_dir holding other files, a
            checkpoint of a program with opaque parts and no ``config``.
        DivergenceError: non-finite state with ``on_divergence="raise"``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from decentral.runner import Algorithm
        >>> walk = Algorithm(init=lambda k, p: jnp.zeros(3),
        ...                  step=lambda k, s, p, t, x: (s + p * jax.random.normal(k, (3,)), None),
        ...                  name="random_walk")
        >>> res = run(walk, 0.1, seeds=[0, 1], num_steps=100, record_every=10)
        >>> res.records.shape, res.record_steps[:3].tolist()
        ((2, 10, 3), [10, 20, 30])
    """
    plan, progress = make_plan(
        algorithm, params, seeds, num_steps, record_every=record_every, record_at=record_at,
        record_fn=record_fn, record_initial=record_initial, xs=xs, sweep=sweep,
        chunk_size=chunk_size, checkpoint_dir=checkpoint_dir, progress=progress,
        on_chunk_end=on_chunk_end, on_divergence=on_divergence)
    return _Execution(plan, params, record_fn, bool(record_context), bool(check_records),
                      devices, on_divergence, checkpoint_dir is not None, layout
                      ).go(checkpoint_dir, progress, on_chunk_end)


def _device_leaf(x):
    """A params leaf ready for ``jax.device_put``: arrays and scalars as they are (numpy ones go
    straight to the devices; ``jnp.asarray`` of a numpy value would compile a small program per
    shape first), anything else through ``jnp.asarray``. Same dtypes and weak types either way."""
    if isinstance(x, jax.Array) and jax.process_count() > 1 and not is_key_dtype(x.dtype):
        return np.asarray(x)    # a process's local array cannot be placed on others' devices
    if isinstance(x, (jax.Array, np.ndarray, np.generic, bool, int, float, complex)):
        return x
    return jnp.asarray(x)


class _Execution:
    """The device-side state of one :func:`run` call."""

    def __init__(self, plan: Plan, params, record_fn, record_context, check_records, devices,
                 on_divergence, checkpointing: bool = False, layout=None):
        self.plan = plan
        self.params = params
        self.record_fn = record_fn
        self.mode = on_divergence
        self.seed_axis = 1 if plan.sweep else 0
        self.n_seeds = len(plan.seeds)
        devs = list(jax.devices() if devices is None else devices)
        if not devs:
            raise ValueError("devices is empty; pass None (all devices) or a list of jax "
                             "devices.")
        self.grid = choose_layout(layout, n_devices=len(devs), n_seeds=self.n_seeds,
                                  num_agents=plan.algorithm.num_agents)
        mesh = make_mesh(devs, self.grid)
        self.n_pad = (-self.n_seeds) % self.grid[0]
        padded = np.concatenate([plan.seeds, np.repeat(plan.seeds[:1], self.n_pad)])
        replicated = NamedSharding(mesh, P())
        self.seeds_dev = jax.device_put(padded.astype(np.uint32), NamedSharding(mesh, P("seeds")))
        self.params_dev = jax.device_put(jax.tree_util.tree_map(_device_leaf, params), replicated)
        self.xs_dev = None if plan.xs is None else jax.device_put(plan.xs, replicated)
        # the compiled layout: a regular grid of dense records keeps its nested scans; sparser
        # grids run in the gap layout, padded to a power-of-two record count per chunk, so one
        # compiled program serves every horizon and record grid of the same padded size
        self.layout_every = plan.record_every if plan.record_every is not None and \
            plan.record_every < GAP_LAYOUT_MIN_SPACING else None
        opts = Options(record_fn, self.layout_every, plan.params_axes, record_context,
                       check_records,
                       plan.algorithm.num_agents if self.grid[1] > 1 else None)
        self.opts = opts
        self.params_abstract = abstract(self.params_dev)
        if plan.sweep:       # one sweep entry: swept leaves lose their leading axis
            treedef, axes = plan.params_axes
            leaves = jax.tree_util.tree_leaves(self.params_abstract)
            self.params_abstract = jax.tree_util.tree_unflatten(treedef, [
                jax.ShapeDtypeStruct(a.shape[1:], a.dtype, weak_type=a.weak_type) if ax == 0
                else a for a, ax in zip(leaves, axes, strict=True)])
        self.x_abstract = None if plan.xs is None else abstract(plan.xs, drop_leading=True)
        self.fns = compiled(plan.algorithm, opts, mesh,
                            (self.params_abstract, self.x_abstract), self.trace,
                            fresh=checkpointing)
        self.state_sharding = self.fns.state_sharding
        self.diverged: set = set()
        self.log: list = []   # [(param index or -1, seed index, chunk, first_step, where)]

    def trace(self) -> RunPrograms:
        """Trace the run's programs (called by the compile cache when it needs them)."""
        return trace_run(self.plan.algorithm, self.params_abstract, self.x_abstract,
                         self.record_fn, self.opts.record_context)

    def programs(self) -> RunPrograms:
        """The programs compiled for this run (what a checkpoint fingerprint reads)."""
        return self.fns.programs

    # ---------------- host helpers ----------------
    def host(self, tree):
        return jax.tree_util.tree_map(lambda a: to_host(a, self.seed_axis, self.n_seeds), tree)

    def chunk_call(self, state, c: int):
        plan = self.plan
        a, b = plan.chunk_bounds[c]
        t0 = plan.chunk_steps[c][0]
        if self.layout_every is not None:
            extra = b - a
        else:
            steps = plan.record_steps[a:b]
            prev = np.concatenate([[t0], steps[:-1]])
            gaps = (steps - prev).astype(np.int32)
            extra = np.zeros(padded_record_count(b - a), np.int32)    # zero gaps: no update,
            extra[: b - a] = gaps                                     # records dropped later
        try:
            return self.fns.chunk(self.seeds_dev, state, self.params_dev, self.xs_dev,
                                  np.int32(t0), extra)
        except TypeError:
            _explain_state_mismatch(plan, self.params)
            raise

    # ---------------- main ----------------
    def go(self, checkpoint_dir, progress, on_chunk_end) -> RunResult:
        plan = self.plan
        n_chunks = len(plan.chunk_bounds)
        ckpt = None
        start, parts, loaded = 0, [], None
        if checkpoint_dir is not None:
            # from the traced programs, before anything compiles: a checkpoint of another run
            # is refused at once
            ckpt = Checkpoint(checkpoint_dir, self.checkpoint_config(),
                              self.programs().texts())
            found = ckpt.exists()
            barrier("decentral.run: checkpoint opened")   # all read before process 0 writes
            if found:
                chunk_records = [b - a for a, b in plan.chunk_bounds]
                start, loaded, parts, log = ckpt.resume(self.spec("state"), self.spec("record"),
                                                        chunk_records, self.seed_axis,
                                                        self.n_seeds)
            elif is_writer():
                ckpt.start()
        try:
            state, rec0, state_ok0, rec_ok0 = self.fns.init(self.seeds_dev, self.params_dev,
                                                           self.xs_dev)
        except TypeError as exc:
            if self.record_fn is not None and "positional argument" in str(exc):
                raise ValueError(
                    f"record_fn raised TypeError: {exc}. record_fn is called as "
                    "record_fn(state), or as record_fn(state, ctx) with run(..., "
                    "record_context=True) (ctx = RecordContext(t, info, x)).") from exc
            raise
        if loaded is not None:
            state = jax.device_put(jax.tree_util.tree_map(
                lambda a: pad_seeds(a, self.seed_axis, self.n_pad), loaded), self.state_sharding)
            self.replay_log(log)
        if start == 0:
            state_ok0, rec_ok0 = fetch(state_ok0), fetch(rec_ok0)
            if not plan.record_initial or not self.opts.check_records:
                rec_ok0 = np.ones_like(rec_ok0)   # the initial record is not returned
            bad = self.bad_pairs(~(state_ok0 & rec_ok0))
            if bad:
                where = {pair: "state" if not state_ok0[self.index(pair)] else "record"
                         for pair in bad}
                self.report(bad, -1, {pair: -1 for pair in bad}, where)

        bar = None
        if progress and start < n_chunks:
            from tqdm.auto import tqdm

            bar = tqdm(total=n_chunks, initial=start, desc=plan.algorithm.name, unit="chunk")
        pending: deque = deque()
        try:
            for c in range(start, n_chunks):
                before = state
                state, recs, finite = self.chunk_call(state, c)
                pending.append((c, before, state, recs, finite))
                if len(pending) > 1:   # sync one chunk late: chunk c runs meanwhile
                    parts.append(self.finish(pending.popleft(), ckpt, n_chunks, bar,
                                             on_chunk_end))
            while pending:
                parts.append(self.finish(pending.popleft(), ckpt, n_chunks, bar, on_chunk_end))
        finally:
            if bar is not None:
                bar.close()
        return self.assemble(state, rec0, parts)

    def finish(self, item, ckpt, n_chunks, bar, on_chunk_end):
        c, before, after, recs, finite = item
        bad = self.bad_pairs(~fetch(finite))
        if bad:
            first, where = self.locate(c, before, bad)
            self.report(bad, c, first, where)
        a, b = self.plan.chunk_bounds[c]
        axis = self.seed_axis + 1           # drop the padding records of the gap layout
        recs_host = jax.tree_util.tree_map(
            lambda r: r[(slice(None),) * axis + (slice(0, b - a),)], self.host(recs))
        if ckpt is not None:
            state_host = self.host(after)        # a collective in a multi-process job
            if is_writer():
                ckpt.write_chunk(c, n_chunks, recs_host, state_host, self.log)
        if bar is not None:
            bar.update(1)
        if on_chunk_end is not None:
            on_chunk_end(c)
        return recs_host

    # ---------------- divergence ----------------
    def bad_pairs(self, bad) -> list[tuple[int, int]]:
        """``(param index or -1, seed index)`` of the flagged, unpadded entries."""
        bad = np.asarray(bad)
        if self.seed_axis:
            p_idx, s_idx = np.nonzero(bad[:, : self.n_seeds])
            return list(zip(p_idx.tolist(), s_idx.tolist(), strict=True))
        return [(-1, s) for s in np.nonzero(bad[: self.n_seeds])[0].tolist()]

    def index(self, pair):
        """Array index of a ``(param index, seed index)`` pair in ``[P?, S_padded, ...]``."""
        return pair if self.seed_axis else (pair[1],)

    def locate(self, c, before, bad):
        """Replay chunk ``c`` one step at a time: first non-finite update per bad pair."""
        plan = self.plan
        t0, t1 = plan.chunk_steps[c]
        a, b = plan.chunk_bounds[c]
        is_record = np.zeros(t1 - t0, dtype=bool)
        is_record[plan.record_steps[a:b] - t0 - 1] = True
        state_ok, rec_ok = self.fns.locate(self.seeds_dev, before, self.params_dev,
                                           self.xs_dev, np.int32(t0), is_record)
        state_ok, rec_ok = fetch(state_ok), fetch(rec_ok)
        first, where = {}, {}
        for p, s in bad:
            ok_s, ok_r = state_ok[self.index((p, s))], rec_ok[self.index((p, s))]
            broken = np.nonzero(~(ok_s & ok_r))[0]
            k = int(broken[0]) if broken.size else t1 - t0 - 1
            first[(p, s)] = t0 + k
            where[(p, s)] = "state" if not ok_s[k] else "record"
        return first, where

    def report(self, bad, chunk, first, where):
        entries = [(p, s, chunk, int(first[(p, s)]), where[(p, s)]) for p, s in bad]
        new = [e for e in entries if (e[0], e[1]) not in self.diverged]
        if self.mode == "warn" and not new:
            return
        self.log.extend(new)
        self.diverged |= {(e[0], e[1]) for e in new}
        self.signal(entries if self.mode == "raise" else new)

    def replay_log(self, log):
        """A resumed run reports what the live run reported (same chunk, same steps)."""
        self.log = [tuple(e) for e in log]
        self.diverged = {(e[0], e[1]) for e in self.log}
        for chunk in sorted({e[2] for e in self.log}):
            self.signal([e for e in self.log if e[2] == chunk])

    def signal(self, entries):
        plan = self.plan
        chunk = entries[0][2]
        step_range = (0, 0) if chunk < 0 else (plan.chunk_steps[chunk][0],
                                               plan.chunk_steps[chunk][1] - 1)
        seeds = [int(plan.seeds[e[1]]) for e in entries]
        p_idx = [e[0] for e in entries] if plan.sweep else None
        lines = []
        for e, seed in zip(entries[:10], seeds, strict=False):
            at = "the initial state" if e[3] < 0 else f"update t = {e[3]}"
            what = "state" if e[4] == "state" else "record (record_fn output)"
            ptxt = f", params index {e[0]}" if plan.sweep else ""
            lines.append(f"seed {seed}{ptxt}: non-finite {what} after {at}")
        more = f" (+{len(entries) - 10} more)" if len(entries) > 10 else ""
        span = "the initial state" if chunk < 0 else \
            f"chunk {chunk} (updates {step_range[0]}..{step_range[1]})"
        own = plan.algorithm.divergence_hint
        hint = ((f"Check the inputs and params; {plan.algorithm.name}: {own}" if own else
                 "Check the inputs and params") if any(e[4] == "state" for e in entries)
                else "The record_fn output is non-finite while the state is finite; if that is "
                     "legitimate (e.g. log of a zero error) pass check_records=False")
        msg = (f"run diverged in {span}: " + "; ".join(lines) + more + f". {hint}; "
               "on_divergence='warn' continues instead.")
        if self.mode == "raise":
            raise DivergenceError(msg, chunk=chunk, step_range=step_range, seeds=seeds,
                                  param_indices=p_idx, first_step=[e[3] for e in entries],
                                  where=[e[4] for e in entries])
        warnings.warn(msg, DivergenceWarning, stacklevel=4)

    # ---------------- checkpoint configuration ----------------
    def spec(self, which: str):
        """``jax.ShapeDtypeStruct`` tree of the run's ``"state"`` or ``"record"``, with the
        leading ``[P?, S]`` axes (unpadded seeds), from the traced programs."""
        programs = self.programs()
        per_seed = programs.init.out_avals if which == "state" or programs.record_fn is None \
            else programs.record_fn.out_avals
        lead = ((self.plan.sweep_size,) if self.plan.sweep else ()) + (self.n_seeds,)
        return jax.tree_util.tree_map(
            lambda a: jax.ShapeDtypeStruct(lead + tuple(a.shape), a.dtype), per_seed)

    def checkpoint_config(self) -> dict:
        plan = self.plan
        alg = plan.algorithm
        programs = self.programs()
        if programs.opaque and alg.config is None:
            raise ValueError(
                "cannot checkpoint this run: its traced program has parts the fingerprint "
                "cannot see (" + "; ".join(programs.opaque) + "). A checkpoint must tell this "
                "run from any other; give the Algorithm a config that describes these parts "
                "(a JSON-like dict, e.g. which callback or derivative rule it uses), or run "
                "without checkpoint_dir.")
        record_steps = plan.record_steps
        config = {
            "format": CKPT_FORMAT,
            "algorithm": {"name": alg.name, "version": alg.version,
                          "max_horizon": alg.max_horizon,
                          "config": None if alg.config is None else alg.config.to_json()},
            "program": {"init": programs.init.digest, "step": programs.step.digest,
                        "record_fn": None if programs.record_fn is None
                        else programs.record_fn.digest,
                        "opaque": list(programs.opaque)},
            **({"cpu_compiler_options": [list(p) for p in alg.cpu_compiler_options]}
               if alg.cpu_compiler_options else {}),
            "num_steps": plan.num_steps,
            "record_every": plan.record_every,
            "record_steps": hash_tree(record_steps) if plan.record_every is None else None,
            "record_initial": plan.record_initial,
            "record_context": self.opts.record_context,
            "check_records": self.opts.check_records,
            "chunks": [list(ab) for ab in plan.chunk_bounds],
            "sweep": to_jsonable(plan.sweep_spec),
            "sweep_size": plan.sweep_size,
            "seeds": plan.seeds.tolist(),
            "state_spec": tree_spec(self.spec("state")),
            "record_spec": tree_spec(self.spec("record")),
            "params": hash_tree(self.params),
            "xs": None if plan.xs is None else hash_tree(plan.xs),
            "key_derivation": KEY_DERIVATION,
            "jax": numeric_settings(),
            **({"agent_devices": self.grid[1]} if self.grid[1] > 1 else {}),
        }
        return to_jsonable(config)

    # ---------------- result ----------------
    def assemble(self, state, rec0, parts) -> RunResult:
        plan = self.plan
        rec_axis = self.seed_axis + 1
        if plan.record_initial:
            first = jax.tree_util.tree_map(
                lambda a: (jnp if is_key_dtype(a.dtype) else np).expand_dims(a, rec_axis),
                self.host(rec0))
            parts = [first] + list(parts)
        records = jax.tree_util.tree_map(lambda *xs: _concat(list(xs), rec_axis), *parts)
        steps = plan.record_steps
        if plan.record_initial:
            steps = np.concatenate([[0], steps])
        return RunResult(records, steps.astype(np.int64), self.host(state), plan.seeds.copy(),
                         plan.num_steps)


#: Regular record grids at least this sparse run in the gap layout (see ``_Execution``).
GAP_LAYOUT_MIN_SPACING = 8


def padded_record_count(count: int) -> int:
    """The number of records a chunk of ``count`` records is compiled for in the gap layout:
    the next power of two, at least 4 (4, 8, 16, ...), so that runs of up to 4 records per
    chunk, chunked or not, share one program. The cost: a chunk's record buffer holds that many
    slots (4 for a chunk of 1 record), which matters only for large records (``record_fn=None``
    records the whole state)."""
    return max(4, 1 << max(0, int(count) - 1).bit_length())


#: JAX settings that change a run's numbers without changing its traced program.
_NUMERIC_FLAGS = ("jax_enable_x64", "jax_default_prng_impl", "jax_threefry_partitionable",
                  "jax_default_matmul_precision", "jax_numpy_dtype_promotion")

#: XLA flags that choose how many devices exist, not what they compute (results never depend
#: on the device count).
_DEVICE_COUNT_FLAGS = ("--xla_force_host_platform_device_count",)


def numeric_settings() -> dict:
    """The versions and settings a checkpoint must match besides the program: jax and jaxlib
    versions, the JAX flags that change numbers with an identical jaxpr (x64, the PRNG
    implementation, ``jax_threefry_partitionable``, the default matmul precision) and the
    ``XLA_FLAGS`` environment variable (device-count flags excepted)."""
    import jaxlib

    flags = {name: str(getattr(jax.config, name, None)) for name in _NUMERIC_FLAGS}
    xla = [f for f in os.environ.get("XLA_FLAGS", "").split()
           if not f.startswith(_DEVICE_COUNT_FLAGS)]
    return {"jax": jax.__version__, "jaxlib": getattr(jaxlib, "__version__", "?"),
            **flags, "xla_flags": sorted(xla)}


def _concat(parts, axis):
    if len(parts) == 1:
        return parts[0]
    if is_key_dtype(parts[0].dtype):
        return jnp.concatenate(parts, axis=axis)
    return np.concatenate(parts, axis=axis)


def _one_params(plan: Plan, params):
    """The params of the first sweep entry (all of params without a sweep)."""
    if not plan.sweep:
        return params
    treedef, axes = plan.params_axes
    leaves = jax.tree_util.tree_leaves(params)
    return jax.tree_util.tree_unflatten(
        treedef, [leaf[0] if ax == 0 else leaf for leaf, ax in zip(leaves, axes, strict=True)])


def _explain_state_mismatch(plan: Plan, params) -> None:
    """Trace one init and one step abstractly; refuse a step whose new state does not match
    the state it was given (a clear ValueError instead of ``lax.scan``'s TypeError)."""
    algorithm = plan.algorithm
    one = _one_params(plan, params)
    x0 = None if plan.xs is None else jax.tree_util.tree_map(lambda a: a[0], plan.xs)
    init_key, step_root = derive(jnp.uint32(0))
    state = jax.eval_shape(algorithm.init, init_key, one)
    new_state = jax.eval_shape(
        lambda s: algorithm.step(jax.random.fold_in(step_root, 0), s, one, jnp.int32(0),
                                 x0)[0], state)
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
                             "must keep its shapes and dtypes (cast explicitly, e.g. "
                             "x.astype(state.dtype)).")
