"""Results on disk: ``.npz`` arrays plus a ``.json`` record of how they were made.

Every result file written by the library is a pair ``<path>.npz`` (plain numeric arrays, read back
with ``np.load(..., allow_pickle=False)``) and ``<path>.json`` (the configuration, the seeds and a
:func:`provenance` record: package versions, JAX PRNG settings, devices, git commit, date). Both
files are written atomically (temporary file in the same folder, then :func:`os.replace`), so a
crash never leaves a half-written file under the final name.

Example:
    >>> save_results("out/run1", {"mse": np.zeros(10)}, {"alpha": 0.1, "seeds": [0, 1]})
    >>> arrays, meta = load_results("out/run1")
    >>> meta["config"]["alpha"], arrays["mse"].shape
    (0.1, (10,))
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from importlib import metadata as _metadata
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "provenance",
    "save_results",
    "load_results",
    "to_jsonable",
    "atomic_write_bytes",
    "write_npz_atomic",
    "read_npz",
]

_PACKAGES = ("numpy", "scipy", "jax", "jaxlib", "networkx", "decentral")


# --------------------------------------------------------------------------------------------
# provenance
# --------------------------------------------------------------------------------------------


def _package_version(name: str) -> str | None:
    if name == "decentral":
        try:
            import decentral

            return str(decentral.__version__)
        except Exception:  # pragma: no cover - decentral is importable when this runs
            return None
    try:
        return _metadata.version(name)
    except _metadata.PackageNotFoundError:
        try:
            module = __import__(name)
            return str(getattr(module, "__version__", None))
        except Exception:
            return None


def _git_commit() -> str | None:
    """``git rev-parse HEAD`` run in the package directory; None if unavailable."""
    package_dir = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=package_dir,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    if out.returncode != 0 or len(commit) < 7:
        return None
    return commit


def provenance() -> dict[str, Any]:
    """Describe the software and hardware a result was produced with.

    Shared by :func:`save_results`, the runner's checkpoint JSON and the ``proofs_checks``
    report, so every file the library writes says how to reproduce it.

    Returns:
        A JSON-serialisable dict with keys ``versions`` (numpy, scipy, jax, jaxlib, networkx,
        decentral, python; None where a package is missing), ``jax`` (``default_prng_impl`` =
        ``jax.config.jax_default_prng_impl``, ``enable_x64``, ``backend``, ``devices``,
        ``device_count``), ``git_commit`` (``git rev-parse HEAD`` of the library's checkout, None
        if unavailable), ``platform`` and ``date`` (UTC, ISO 8601).

    Example:
        >>> p = provenance()
        >>> sorted(p)
        ['date', 'git_commit', 'jax', 'platform', 'versions']
    """
    versions: dict[str, str | None] = {name: _package_version(name) for name in _PACKAGES}
    versions["python"] = platform.python_version()
    jax_info: dict[str, Any]
    try:
        import jax

        devices = jax.devices()
        jax_info = {
            "default_prng_impl": str(jax.config.jax_default_prng_impl),
            "enable_x64": bool(jax.config.jax_enable_x64),
            "backend": jax.default_backend(),
            "devices": [f"{d.platform}:{getattr(d, 'device_kind', '?')}:{d.id}" for d in devices],
            "device_count": len(devices),
        }
    except Exception as exc:  # pragma: no cover - jax is a hard dependency
        jax_info = {"error": f"{type(exc).__name__}: {exc}"}
    return {
        "versions": versions,
        "jax": jax_info,
        "git_commit": _git_commit(),
        "platform": platform.platform(),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


# --------------------------------------------------------------------------------------------
# atomic file helpers (also used by decentral.runner for checkpoints)
# --------------------------------------------------------------------------------------------


def atomic_write_bytes(path: str | os.PathLike, write) -> None:
    """Write a file atomically: ``write(fileobj)`` fills a temp file, then ``os.replace``.

    Args:
        path: final file name.
        write: callable receiving a binary file object opened for writing.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _check_array(name: str, value) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except Exception as exc:
        raise ValueError(
            f"array {name!r} cannot be converted to a numpy array ({type(exc).__name__}: {exc}); "
            "store plain numeric arrays (for JAX PRNG keys store jax.random.key_data(key))."
        ) from exc
    if arr.dtype == object or arr.dtype.hasobject:
        raise ValueError(
            f"array {name!r} has dtype object; result files hold plain numeric/bool/str arrays "
            "only (they are loaded with allow_pickle=False). Convert it, e.g. "
            "np.asarray(x, dtype=float), or put non-array data in the config dict."
        )
    return arr


def write_npz_atomic(path: str | os.PathLike, arrays: Mapping[str, Any]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` at ``path`` atomically (no pickling).

    Raises:
        ValueError: if a key is not a non-empty string or an array has dtype object.
    """
    checked = {}
    for key, value in arrays.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"array names must be non-empty strings; got {key!r}.")
        checked[key] = _check_array(key, value)

    def write(f):
        with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for key, arr in checked.items():
                with zf.open(key + ".npy", mode="w", force_zip64=True) as member:
                    np.lib.format.write_array(member, arr, allow_pickle=False)

    atomic_write_bytes(path, write)


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read every array of an ``.npz`` eagerly with ``allow_pickle=False``.

    Reading eagerly makes zip CRC errors surface here. Errors propagate unchanged (the caller
    decides how to word them).
    """
    with np.load(path, allow_pickle=False) as data:
        return {key: np.array(data[key]) for key in data.files}


# --------------------------------------------------------------------------------------------
# JSON conversion
# --------------------------------------------------------------------------------------------


def to_jsonable(value: Any, *, where: str = "config") -> Any:
    """Convert ``value`` into plain JSON types (dict/list/str/int/float/bool/None).

    NamedTuples become dicts with their field names, numpy/JAX arrays and scalars become lists
    and Python numbers, paths become strings. Non-finite floats are kept (Python's ``json``
    writes ``NaN``/``Infinity``).

    Raises:
        ValueError: naming the offending entry if something cannot be represented.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {f: to_jsonable(getattr(value, f), where=f"{where}.{f}") for f in value._fields}
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str | int | float | bool) and k is not None:
                raise ValueError(f"{where} has a non-string key {k!r}; JSON keys must be strings.")
            out[str(k)] = to_jsonable(v, where=f"{where}.{k}")
        return out
    if isinstance(value, list | tuple | set | frozenset):
        seq = sorted(value) if isinstance(value, set | frozenset) else value
        return [to_jsonable(v, where=f"{where}[{i}]") for i, v in enumerate(seq)]
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "__array__") or isinstance(value, np.ndarray):
        try:
            arr = np.asarray(value)
        except Exception as exc:
            raise ValueError(f"{where} cannot be converted for JSON: {exc}") from exc
        if arr.dtype == object:
            return to_jsonable(arr.tolist(), where=where)
        return arr.tolist()
    if isinstance(value, complex):
        return [value.real, value.imag]
    raise ValueError(
        f"{where} = {value!r} (type {type(value).__name__}) cannot be written to JSON; pass "
        "numbers, strings, lists, dicts, NamedTuples or numpy arrays."
    )


def _base_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        p = p.with_suffix("")
    return p


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


def save_results(
    path: str | os.PathLike,
    arrays: Mapping[str, Any],
    config: Mapping[str, Any],
    *,
    seeds: Any = None,
) -> None:
    """Write ``<path>.npz`` (the arrays) and ``<path>.json`` (config + provenance) atomically.

    Args:
        path: base name; a trailing ``.npz`` or ``.json`` is stripped. Parent folders are created.
        arrays: name -> array (numpy, JAX or anything ``np.asarray`` accepts). Object arrays are
            refused: result files are loaded with ``allow_pickle=False``.
        config: the full configuration of the run (JSON-serialisable after :func:`to_jsonable`).
        seeds: the seeds used; defaults to ``config["seeds"]`` when present.

    The JSON holds ``config``, ``seeds``, ``arrays`` (name -> shape and dtype) and
    ``provenance`` (see :func:`provenance`). The ``.npz`` is written first, so a ``.json`` file
    whose arrays are missing means the pair was written by something else.

    Raises:
        ValueError: on object arrays, bad array names or a config that is not JSON-serialisable.

    Example:
        >>> save_results("out/td0", {"theta": np.ones((4, 3))}, {"alpha": 0.1, "seeds": [0]})
        >>> load_results("out/td0")[1]["seeds"]
        [0]
    """
    base = _base_path(path)
    checked = {}
    for key, value in arrays.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"array names must be non-empty strings; got {key!r}.")
        checked[key] = _check_array(key, value)
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a dict; got {type(config).__name__}.")
    config_json = to_jsonable(dict(config), where="config")
    if seeds is None:
        seeds = config.get("seeds")
    meta = {
        "format": "decentral.results/1",
        "config": config_json,
        "seeds": to_jsonable(seeds, where="seeds"),
        "arrays": {k: {"shape": list(a.shape), "dtype": a.dtype.str} for k, a in checked.items()},
        "provenance": provenance(),
    }
    text = json.dumps(meta, indent=2, sort_keys=True)
    write_npz_atomic(base.with_name(base.name + ".npz"), checked)
    atomic_write_bytes(base.with_name(base.name + ".json"), lambda f: f.write(text.encode()))


def load_results(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a pair written by :func:`save_results`.

    Args:
        path: the same base name given to :func:`save_results` (``.npz``/``.json`` stripped).

    Returns:
        ``(arrays, meta)``: name -> numpy array (loaded with ``allow_pickle=False``) and the
        parsed JSON (``config``, ``seeds``, ``arrays``, ``provenance``).

    Raises:
        ValueError: if either file is missing or unreadable, or they disagree on the arrays.

    Example:
        >>> arrays, meta = load_results("out/td0")
        >>> meta["provenance"]["versions"]["jax"]  # doctest: +SKIP
        '0.10.2'
    """
    base = _base_path(path)
    npz = base.with_name(base.name + ".npz")
    js = base.with_name(base.name + ".json")
    for f in (npz, js):
        if not f.exists():
            raise ValueError(f"result file {f} does not exist; save it with save_results first.")
    try:
        arrays = read_npz(npz)
    except Exception as exc:
        raise ValueError(
            f"result file {npz} is unreadable or corrupted ({type(exc).__name__}: {exc})."
        ) from exc
    try:
        meta = json.loads(js.read_text())
    except Exception as exc:
        raise ValueError(
            f"result file {js} is not valid JSON ({type(exc).__name__}: {exc})."
        ) from exc
    listed = meta.get("arrays")
    if isinstance(listed, dict) and set(listed) != set(arrays):
        raise ValueError(
            f"{js} lists arrays {sorted(listed)} but {npz} holds {sorted(arrays)}; the pair was "
            "not written together."
        )
    return arrays, meta

