"""Checkpoints of a chunked run: configuration, fingerprint, encode/decode, resume.

Layout of a checkpoint folder: ``config.json`` (the fingerprinted configuration and the
provenance), ``programs.json`` (the texts of the traced programs, to name the first line that
differs when a resume is refused), ``records_<k>.npz`` (the records of chunk k) and
``state.npz`` (the carried state, the next chunk index and the divergence log), each written
atomically. After the last chunk the folder marks the run complete: the same call returns the
stored result without computing. A folder holding any other file is refused (it is not a
checkpoint, and a run must never write over a user's files).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from decentral.results import atomic_write_bytes, provenance, read_npz, write_npz_atomic

from .fingerprint import fingerprint

__all__ = ["CKPT_FORMAT", "Checkpoint", "is_key_dtype", "fetch", "to_host", "is_writer",
           "barrier"]

CKPT_FORMAT = "decentral.runner.checkpoint/3"

#: The names a checkpoint folder may hold: its files and the temporary files of their atomic
#: writes (``.<name>.<random>.tmp``, left behind only by a killed process).
_OWN_FILE = re.compile(r"(config\.json|programs\.json|state\.npz|records_\d{6}\.npz"
                       r"|\.(config\.json|programs\.json|state\.npz|records_\d{6}\.npz)\.[^/]*"
                       r"\.tmp)")


def is_key_dtype(dtype) -> bool:
    try:
        return jnp.issubdtype(dtype, jax.dtypes.prng_key)
    except Exception:
        return False


def fetch(leaf):
    """A device array on the host, whole: numpy (PRNG-key leaves stay JAX arrays). An array
    spread over several processes (a ``jax.distributed`` job) is gathered from all of them,
    a collective every process must call."""
    if getattr(leaf, "is_fully_addressable", True):
        return leaf if is_key_dtype(leaf.dtype) else np.asarray(leaf)
    from jax.experimental import multihost_utils

    if is_key_dtype(leaf.dtype):
        data = multihost_utils.process_allgather(jax.random.key_data(leaf), tiled=True)
        return jax.random.wrap_key_data(data, impl=jax.random.key_impl(leaf))
    return np.asarray(multihost_utils.process_allgather(leaf, tiled=True))


def to_host(leaf, seed_axis: int, n_seeds: int):
    """Drop padded seeds and move to host (numpy; PRNG-key leaves stay JAX arrays)."""
    index = (slice(None),) * seed_axis + (slice(0, n_seeds),)
    return fetch(leaf)[index]


def encode(tree) -> dict[str, np.ndarray]:
    out = {}
    for i, leaf in enumerate(jax.tree_util.tree_leaves(tree)):
        if is_key_dtype(leaf.dtype):
            leaf = jax.random.key_data(leaf)
        out[f"leaf_{i:05d}"] = np.asarray(leaf)
    return out


def _corrupt(path: Path, detail: str) -> ValueError:
    return ValueError(f"checkpoint file {path} is corrupted: {detail}. Delete the checkpoint "
                      "folder (or pass another checkpoint_dir) to start over.")


def decode(data: dict, template, what: str, path: Path):
    """Rebuild a pytree shaped like ``template`` from ``data`` (checked leaf by leaf)."""
    leaves, treedef = jax.tree_util.tree_flatten(template)
    out = []
    for i, tmpl in enumerate(leaves):
        key = f"leaf_{i:05d}"
        if key not in data:
            raise _corrupt(path, f"{what} leaf {i} is missing")
        arr = data[key]
        if is_key_dtype(tmpl.dtype):
            expected = tuple(jax.eval_shape(jax.random.key_data,
                                            jax.ShapeDtypeStruct(tmpl.shape, tmpl.dtype)).shape)
            if arr.shape != expected:
                raise _corrupt(path, f"{what} leaf {i} has shape {arr.shape}, expected "
                                     f"{expected}")
            out.append(jax.random.wrap_key_data(arr, impl=tmpl.dtype._impl))
            continue
        if arr.shape != tuple(tmpl.shape) or arr.dtype != np.dtype(tmpl.dtype):
            raise _corrupt(path, f"{what} leaf {i} has shape {arr.shape} dtype {arr.dtype}, "
                                 f"expected {tuple(tmpl.shape)} {np.dtype(tmpl.dtype)}")
        out.append(arr)
    return jax.tree_util.tree_unflatten(treedef, out)


class _Mismatch(Exception):
    pass


def diff_fields(stored, now, prefix: str = "") -> list[str]:
    """Dotted paths of the configuration fields that differ (recursing into dicts)."""
    if isinstance(stored, dict) and isinstance(now, dict):
        out = []
        for k in sorted(set(stored) | set(now)):
            if stored.get(k) != now.get(k):
                sub = diff_fields(stored.get(k), now.get(k), f"{prefix}{k}.")
                out.extend(sub or [f"{prefix}{k}"])
        return out
    return [prefix[:-1]] if stored != now and prefix else []


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) < 80 else text[:77] + "..."


def _lookup(tree, dotted: str):
    for part in dotted.split("."):
        if not isinstance(tree, dict):
            return None
        tree = tree.get(part)
    return tree


def is_writer() -> bool:
    """True in the process that writes checkpoints: the only one, or process 0 of a
    multi-process job (every process reads them)."""
    return jax.process_index() == 0


def barrier(name: str) -> None:
    """Wait until every process of a multi-process job gets here (nothing with one process)."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


class Checkpoint:
    """One checkpoint folder bound to one configuration."""

    def __init__(self, directory, config: dict, program_texts: dict | None = None):
        self.dir = Path(directory)
        self.config = config
        self.program_texts = program_texts or {}
        self.fingerprint = fingerprint(config)
        self._refuse_foreign_files()
        self.base = {"format": np.asarray(CKPT_FORMAT),
                     "fingerprint": np.asarray(self.fingerprint)}

    # ---- reading ----
    def _load(self, path: Path) -> dict:
        try:
            data = read_npz(path)
        except Exception as exc:
            raise ValueError(
                f"checkpoint file {path} is corrupted or unreadable ({type(exc).__name__}: "
                f"{exc}). Delete {path.parent} (or pass another checkpoint_dir) to start over."
            ) from exc
        for key in ("format", "fingerprint"):
            if key not in data:
                raise _corrupt(path, f"entry {key!r} is missing")
        if str(data["format"]) != CKPT_FORMAT:
            raise ValueError(f"checkpoint file {path} has format {str(data['format'])!r}, not "
                             f"{CKPT_FORMAT!r} (written by another version of decentral); "
                             f"delete {path.parent} to recompute.")
        if str(data["fingerprint"]) != self.fingerprint:
            raise _Mismatch(str(path))
        return data

    def mismatch_message(self) -> str:
        stored = None
        try:
            stored = json.loads((self.dir / "config.json").read_text()).get("config")
        except Exception:
            pass
        if isinstance(stored, dict):
            fields = diff_fields(stored, self.config)
            detail = (f"fields that differ: {', '.join(fields)}" if fields
                      else "configs look equal")
            diffs = [f"{f}: checkpoint {_short(_lookup(stored, f))} vs now "
                     f"{_short(_lookup(self.config, f))}" for f in fields[:4]
                     if not f.startswith("program.")]
            if diffs:
                detail += " (" + "; ".join(diffs) + ")"
            detail += self._program_diff(fields)
        else:
            detail = "config.json beside it is missing or unreadable"
        return (f"checkpoint in {self.dir} belongs to a different run configuration ({detail}); "
                "refusing to mix runs. Use another checkpoint_dir, or delete this one to start "
                "over.")

    def _refuse_foreign_files(self) -> None:
        if not self.dir.exists():
            return
        if not self.dir.is_dir():
            raise ValueError(f"checkpoint_dir {self.dir} exists and is not a folder; pass a "
                             "folder (new or empty, or one a run checkpointed into).")
        foreign = sorted(p.name for p in self.dir.iterdir() if not _OWN_FILE.fullmatch(p.name))
        if foreign:
            shown = ", ".join(foreign[:8]) + (f" (+{len(foreign) - 8} more)"
                                              if len(foreign) > 8 else "")
            raise ValueError(
                f"checkpoint_dir {self.dir} holds files a checkpoint did not write: {shown}. "
                "A run only writes into a new or empty folder or one it checkpointed into; "
                "pass another checkpoint_dir (e.g. a subfolder).")

    def _program_diff(self, fields) -> str:
        """The first differing line of each differing program, from ``programs.json``."""
        try:
            stored = json.loads((self.dir / "programs.json").read_text())
        except Exception:
            return ""
        out = []
        for f in fields:
            label = f.split(".", 2)[1] if f.startswith("program.") else None
            if label and isinstance(stored.get(label), str) and \
                    isinstance(self.program_texts.get(label), str):
                from .program import program_lines_diff

                diff = program_lines_diff(stored[label], self.program_texts[label])
                out.append(f"{label}: {diff}")
        return ("; the programs differ at " + "; ".join(out)) if out else ""

    def exists(self) -> bool:
        return (self.dir / "state.npz").exists()

    def resume(self, state_template, record_template, chunk_records, seed_axis, n_seeds):
        """``(next_chunk, state, [records of each finished chunk], divergence log)``."""
        n_chunks = len(chunk_records)
        state_file = self.dir / "state.npz"
        try:
            data = self._load(state_file)
        except _Mismatch:
            raise ValueError(self.mismatch_message()) from None
        start = int(data.get("next_chunk", -1))
        if not 0 < start <= n_chunks:
            raise _corrupt(state_file, f"next_chunk = {start} outside 1..{n_chunks}")
        state = decode(data, state_template, "state", state_file)
        try:
            log = [tuple(e) for e in json.loads(str(data.get("divergence_log", "[]")))]
        except ValueError:
            raise _corrupt(state_file, "its divergence log is unreadable") from None
        parts = []
        for c in range(start):
            path = self.dir / f"records_{c:06d}.npz"
            if not path.exists():
                raise ValueError(
                    f"checkpoint in {self.dir} is corrupted: {path.name} is missing although "
                    f"state.npz says {start} chunks are done. Delete {self.dir} to start over.")
            try:
                rdata = self._load(path)
            except _Mismatch:
                raise ValueError(
                    f"checkpoint file {path} belongs to another run (its fingerprint differs "
                    f"from state.npz): {self.dir} is corrupted. Delete it to start over."
                ) from None
            if int(rdata.get("chunk", -1)) != c:
                raise _corrupt(path, "it holds another chunk")

            def shaped(a, nb=chunk_records[c]):
                shape = a.shape[:seed_axis] + (n_seeds, nb) + a.shape[seed_axis + 1:]
                return jax.ShapeDtypeStruct(shape, a.dtype)

            parts.append(decode(rdata, jax.tree_util.tree_map(shaped, record_template),
                                "records", path))
        return start, state, parts, log

    # ---- writing ----
    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = {"config": self.config, "fingerprint": self.fingerprint,
                "provenance": provenance()}
        text = json.dumps(meta, indent=2, sort_keys=True)
        atomic_write_bytes(self.dir / "config.json", lambda f: f.write(text.encode()))
        programs = json.dumps(self.program_texts, sort_keys=True)
        atomic_write_bytes(self.dir / "programs.json", lambda f: f.write(programs.encode()))

    def write_chunk(self, c: int, n_chunks: int, records_host, state_host, log) -> None:
        write_npz_atomic(self.dir / f"records_{c:06d}.npz",
                         {**self.base, "chunk": np.asarray(c), **encode(records_host)})
        write_npz_atomic(self.dir / "state.npz", {
            **self.base,
            "next_chunk": np.asarray(c + 1),
            "num_chunks": np.asarray(n_chunks),
            "complete": np.asarray(c + 1 == n_chunks),
            "divergence_log": np.asarray(json.dumps([list(e) for e in log])),
            **encode(state_host),
        })


def pad_seeds(a, seed_axis: int, n_pad: int):
    """Append ``n_pad`` copies of seed 0's slice along the seeds axis (dropped later)."""
    if n_pad == 0:
        return a
    xp = jnp if is_key_dtype(a.dtype) else np
    first = xp.take(a, xp.asarray([0]), axis=seed_axis)
    return xp.concatenate([a, xp.repeat(first, n_pad, axis=seed_axis)], axis=seed_axis)
