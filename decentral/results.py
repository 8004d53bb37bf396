"""Results on disk: ``.npz`` arrays plus a ``.json`` record of how they were made.

Every result file written by the library is a pair ``<path>.npz`` (plain numeric arrays, read back
with ``np.load(..., allow_pickle=False)``) and ``<path>.json`` (the configuration, the seeds and a
:func:`provenance` record: package versions, JAX PRNG settings, devices, git commit, date). Both
files are written atomically (temporary file in the same folder, then :func:`os.replace`), so a
crash never leaves a half-written file under the final name.

JSON rule (:func:`to_jsonable`, the one converter every file writer of the library uses):
non-finite floats become the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (strict JSON
has no such numbers, and ``None`` would lose which one it was); a value of a type it does not
know raises :class:`TypeError` naming where it sits, never a silent ``str()``.

Arrays of the extended float types of ``ml_dtypes`` (``bfloat16``, ``float8_e4m3fn``, ...,
which numpy's ``.npy`` format can only store as raw bytes ``|V2``) are written as their raw bit
patterns (``uint16`` / ``uint8``) together with the dtype name, and come back with their dtype.

Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> save_results(f"{folder}/run1", {"mse": np.zeros(10)}, {"alpha": 0.1, "seeds": [0, 1]})
    >>> arrays, meta = load_results(f"{folder}/run1")
    >>> meta["config"]["alpha"], arrays["mse"].shape
    (0.1, (10,))
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import math
import os
import platform
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from importlib import metadata as _metadata
from pathlib import Path, PurePath
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
    "PROVENANCE_PACKAGES",
]

#: The packages whose versions :func:`provenance` records (plus Python itself).
PROVENANCE_PACKAGES: tuple[str, ...] = (
    "numpy", "scipy", "jax", "jaxlib", "ml_dtypes", "networkx", "matplotlib", "decentral",
)

#: Member of an ``.npz`` written by :func:`write_npz_atomic` that records the dtype names of
#: arrays stored as raw bits (extended ``ml_dtypes`` floats); not a user array name.
_DTYPES_MEMBER = "__dtypes__"


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
            version = getattr(__import__(name), "__version__", None)
        except Exception:
            return None
        return None if version is None else str(version)


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
        A JSON-serialisable dict with keys ``versions`` (each of :data:`PROVENANCE_PACKAGES`
        and python; None where a package is missing), ``jax`` (``default_prng_impl`` =
        ``jax.config.jax_default_prng_impl``, ``enable_x64``, ``backend``, ``devices``,
        ``device_count``), ``git_commit`` (``git rev-parse HEAD`` of the library's checkout, None
        if unavailable), ``platform`` and ``date`` (UTC, ISO 8601).

    Example:
        >>> p = provenance()
        >>> sorted(p)
        ['date', 'git_commit', 'jax', 'platform', 'versions']
    """
    versions: dict[str, str | None] = {name: _package_version(name)
                                       for name in PROVENANCE_PACKAGES}
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


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, write) -> None:
    """Write a file atomically: ``write(fileobj)`` fills a temp file, then ``os.replace``.
    The file gets the mode a plain ``open`` would give it (``0o666`` less the umask).

    Args:
        path: final file name.
        write: callable receiving a binary file object opened for writing.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())      # mkstemp makes 0600; give the usual mode
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


def _is_extended_dtype(dtype: np.dtype) -> bool:
    """True for the ``ml_dtypes`` types (bfloat16, float8_*, int4, ...): numpy's ``.npy`` header
    cannot describe them (``|V2``, or ``<f1`` that numpy cannot read back), so they need their
    name stored beside them."""
    return getattr(dtype.type, "__module__", "").partition(".")[0] == "ml_dtypes"


def _dtype_label(dtype: np.dtype) -> str:
    """How a dtype is written in the JSON record: its name for ``ml_dtypes`` types (which have
    no array-protocol string of their own), else numpy's ``dtype.str`` (``"<f8"``)."""
    return dtype.name if _is_extended_dtype(dtype) else dtype.str


def _extended_dtype(name: str) -> np.dtype:
    """The ``ml_dtypes`` dtype called ``name`` (ValueError if there is none)."""
    import ml_dtypes

    scalar = getattr(ml_dtypes, name, None) if name.isidentifier() else None
    try:
        dtype = np.dtype(scalar) if scalar is not None else None
    except TypeError:
        dtype = None
    if dtype is None or not _is_extended_dtype(dtype):
        raise ValueError(f"dtype {name!r} is not one of ml_dtypes' types (bfloat16, "
                         f"float8_e4m3fn, ...) in the installed ml_dtypes {ml_dtypes.__version__};"
                         " the file was written with another version, or is corrupted.")
    return dtype


def _dtype_from_label(label: str) -> np.dtype:
    try:
        return np.dtype(label)
    except TypeError:
        return _extended_dtype(label)


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


def _check_names(arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
    checked = {}
    for key, value in arrays.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"array names must be non-empty strings; got {key!r}.")
        if key == _DTYPES_MEMBER:
            raise ValueError(f"array name {key!r} is reserved (it records the dtypes of "
                             "bfloat16/float8 arrays); rename the array.")
        checked[key] = _check_array(key, value)
    return checked


def write_npz_atomic(path: str | os.PathLike, arrays: Mapping[str, Any]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` at ``path`` atomically (no pickling).

    Each array ``name`` is the member ``name + ".npy"``. Arrays of an ``ml_dtypes`` type
    (bfloat16, float8_e4m3fn, ...) are stored as their bit patterns (unsigned integers of the
    same width) and their dtype names go in the member ``__dtypes__.npy`` (a JSON string), so
    :func:`read_npz` restores them; a plain ``np.load`` shows the bits and that member.

    Raises:
        ValueError: if a name is not a non-empty string or is the reserved ``"__dtypes__"``, or
            an array has dtype object.

    Example:
        >>> import ml_dtypes, tempfile
        >>> path = tempfile.mkdtemp() + "/a.npz"
        >>> write_npz_atomic(path, {"w": np.ones(3, dtype=ml_dtypes.bfloat16)})
        >>> read_npz(path)["w"].dtype
        dtype(bfloat16)
    """
    checked = _check_names(arrays)
    stored: dict[str, np.ndarray] = {}
    extended: dict[str, str] = {}
    for key, arr in checked.items():
        if _is_extended_dtype(arr.dtype):
            extended[key] = arr.dtype.name
            arr = np.ascontiguousarray(arr).view(np.dtype(f"u{arr.dtype.itemsize}"))
        stored[key] = arr
    if extended:
        stored[_DTYPES_MEMBER] = np.array(json.dumps(extended, sort_keys=True))

    def write(f):
        with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for key, arr in stored.items():
                with zf.open(key + ".npy", mode="w", force_zip64=True) as member:
                    np.lib.format.write_array(member, arr, allow_pickle=False)

    atomic_write_bytes(path, write)


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read every array of an ``.npz`` eagerly with ``allow_pickle=False``.

    Member ``name.npy`` becomes the array ``name``; members are read by their exact names (so
    arrays called ``x`` and ``x.npy`` stay apart, which ``np.load``'s lookup confuses), and
    arrays listed in ``__dtypes__`` get their ``ml_dtypes`` dtype back. Reading eagerly makes zip
    CRC errors surface here. Errors propagate unchanged (the caller decides how to word them),
    except a member that is not ``*.npy``, which is a ``ValueError``.
    """
    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as zf:
        for member in zf.namelist():
            if not member.endswith(".npy"):
                raise ValueError(f"{path}: member {member!r} is not a .npy array; this is not "
                                 "an .npz of arrays.")
            with zf.open(member) as f:
                out[member[:-4]] = np.lib.format.read_array(f, allow_pickle=False)
    dtypes_entry = out.pop(_DTYPES_MEMBER, None)
    if dtypes_entry is not None:
        for key, name in json.loads(str(dtypes_entry[()])).items():
            if key not in out:
                raise ValueError(f"{path}: {_DTYPES_MEMBER} lists {key!r}, which is missing.")
            dtype = _extended_dtype(name)
            if out[key].dtype.itemsize != dtype.itemsize:
                raise ValueError(f"{path}: array {key!r} holds {out[key].dtype.itemsize}-byte "
                                 f"items, not the {dtype.itemsize}-byte {name}.")
            out[key] = out[key].view(dtype)
    return out


# --------------------------------------------------------------------------------------------
# JSON conversion
# --------------------------------------------------------------------------------------------

_JSON_KINDS = ("None, bool, int, float, str, enums, paths, dates, numpy/JAX scalars and "
               "arrays, dtypes, lists, tuples, sets, dicts, NamedTuples and dataclasses")


def _json_float(x: float) -> float | str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def _array_to_json(arr: np.ndarray, where: str) -> Any:
    if _is_extended_dtype(arr.dtype):  # bfloat16, float8, ...: through float64; int4 & co: int64
        arr = arr.astype(np.int64 if "int" in arr.dtype.name else np.float64)
    if arr.dtype.kind in "biu" or arr.dtype.kind in "SU":
        return arr.tolist()
    if arr.dtype.kind == "f" and bool(np.all(np.isfinite(arr))):
        return arr.tolist()
    if arr.ndim == 0:
        return to_jsonable(arr[()], where=where)
    return [_array_to_json(sub, f"{where}[{i}]") for i, sub in enumerate(arr)]


def to_jsonable(value: Any, *, where: str = "value") -> Any:
    """Convert ``value`` into plain JSON types (dict / list / str / int / float / bool / None).

    The single converter behind every JSON file of the library (results, checkpoints, the
    ``proofs_checks`` report, benchmarks). Rules:

    * numpy and JAX scalars and arrays become Python numbers and nested lists (``ml_dtypes``
      floats through float64); complex numbers become ``{"real": x, "imag": y}``;
    * non-finite floats become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, so the
      output is strict JSON (``json.dumps(..., allow_nan=False)`` accepts it);
    * NamedTuples and dataclass instances become dicts of their fields; enums their value;
      paths POSIX strings; dates ISO 8601 strings; dtypes (and numpy scalar types) their name;
      tuples lists; sets sorted lists;
    * dict keys must be strings, or numbers / bools / None / enums (written as strings);
    * anything else raises :class:`TypeError` naming the entry, never a silent ``str()``.

    Args:
        value: what to convert.
        where: a name for ``value`` in error messages (entries are named ``where.key``,
            ``where[i]``).

    Raises:
        TypeError: naming the offending entry if something has no JSON form (a function, a
            PRNG key array: store ``jax.random.key_data(key)``, an arbitrary object).

    Example:
        >>> to_jsonable({"a": np.float32(0.5), "b": [np.nan, -np.inf], "c": np.arange(2)})
        {'a': 0.5, 'b': ['NaN', '-Infinity'], 'c': [0, 1]}
        >>> to_jsonable({"f": print})
        Traceback (most recent call last):
        ...
        TypeError: value.f = <built-in function print> (type builtin_function_or_method) has no JSON form; ...
    """  # noqa: E501
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, where=where)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _json_float(float(value))
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return _json_float(float(value))
    if isinstance(value, complex | np.complexfloating):
        return {"real": _json_float(float(value.real)), "imag": _json_float(float(value.imag))}
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, type) and value.__module__.startswith("jax"):  # jnp.float32 & co
        try:
            return np.dtype(value).name
        except TypeError:
            pass
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # NamedTuple
        return {f: to_jsonable(getattr(value, f), where=f"{where}.{f}") for f in value._fields}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name), where=f"{where}.{f.name}")
                for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if isinstance(k, enum.Enum):
                k = k.value
            if not isinstance(k, str | int | float | bool | np.integer) and k is not None:
                raise TypeError(f"{where} has a key {k!r} of type {type(k).__name__}; JSON keys "
                                "must be strings (or numbers, written as strings).")
            out[k if isinstance(k, str) else json.dumps(to_jsonable(k))] = to_jsonable(
                v, where=f"{where}.{k}")
        return out
    if isinstance(value, list | tuple):
        return [to_jsonable(v, where=f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, set | frozenset):
        items = [to_jsonable(v, where=f"{where}{{}}") for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, np.generic) or hasattr(value, "__array__"):
        try:
            arr = np.asarray(value)
        except Exception as exc:
            raise TypeError(f"{where} ({type(value).__name__}) cannot be converted to a numpy "
                            f"array for JSON: {exc}") from exc
        if arr.dtype == object:
            return to_jsonable(arr.tolist(), where=where)
        if arr.dtype.kind == "c":
            return to_jsonable(arr.tolist(), where=where)
        if arr.dtype.kind in "mMV" and not _is_extended_dtype(arr.dtype):
            raise TypeError(f"{where} has dtype {arr.dtype}, which has no JSON form; convert "
                            "it to numbers or strings first.")
        return _array_to_json(arr, where)
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise TypeError(
        f"{where} = {shown} (type {type(value).__name__}) has no JSON form; pass {_JSON_KINDS}, "
        "or convert it yourself (e.g. str(x)) if a text form is what you want."
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
        arrays: name -> array (numpy, JAX or anything ``np.asarray`` accepts, including the
            ``ml_dtypes`` floats such as bfloat16). Object arrays are refused: result files are
            loaded with ``allow_pickle=False``.
        config: the full configuration of the run (converted by :func:`to_jsonable`).
        seeds: the seeds used; defaults to ``config["seeds"]`` when present.

    The JSON holds ``config``, ``seeds``, ``arrays`` (name -> shape and dtype: numpy's dtype
    string such as ``"<f8"``, or the ``ml_dtypes`` name such as ``"bfloat16"``) and
    ``provenance`` (see :func:`provenance`). The ``.npz`` is written first, so a ``.json`` file
    whose arrays are missing means the pair was written by something else.

    Raises:
        ValueError: on object arrays, bad or reserved array names, a config that is not a dict.
        TypeError: a config entry that has no JSON form (see :func:`to_jsonable`).

    Example:
        >>> import tempfile
        >>> base = tempfile.mkdtemp() + "/td0"
        >>> save_results(base, {"theta": np.ones((4, 3))}, {"alpha": 0.1, "seeds": [0]})
        >>> load_results(base)[1]["seeds"]
        [0]
    """
    base = _base_path(path)
    checked = _check_names(arrays)
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a dict; got {type(config).__name__}.")
    config_json = to_jsonable(dict(config), where="config")
    if seeds is None:
        seeds = config.get("seeds")
    meta = {
        "format": "decentral.results/1",
        "config": config_json,
        "seeds": to_jsonable(seeds, where="seeds"),
        "arrays": {k: {"shape": list(a.shape), "dtype": _dtype_label(a.dtype)}
                   for k, a in checked.items()},
        "provenance": provenance(),
    }
    text = json.dumps(meta, indent=2, sort_keys=True, allow_nan=False)
    write_npz_atomic(base.with_name(base.name + ".npz"), checked)
    atomic_write_bytes(base.with_name(base.name + ".json"), lambda f: f.write(text.encode()))


def load_results(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a pair written by :func:`save_results`.

    Args:
        path: the same base name given to :func:`save_results` (``.npz``/``.json`` stripped).

    Returns:
        ``(arrays, meta)``: name -> numpy array (loaded with ``allow_pickle=False``, bfloat16 /
        float8 arrays with their dtype) and the parsed JSON (``config``, ``seeds``, ``arrays``,
        ``provenance``).

    Raises:
        ValueError: if either file is missing or unreadable, or they disagree on the arrays
            (names, shapes or dtypes).

    Example:
        >>> import tempfile
        >>> base = tempfile.mkdtemp() + "/run"
        >>> save_results(base, {"x": np.arange(3)}, {})
        >>> arrays, meta = load_results(base)
        >>> sorted(meta["provenance"]["versions"])[:3]
        ['decentral', 'jax', 'jaxlib']
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
    if isinstance(listed, dict):
        if set(listed) != set(arrays):
            raise ValueError(
                f"{js} lists arrays {sorted(listed)} but {npz} holds {sorted(arrays)}; the pair "
                "was not written together."
            )
        for key, info in listed.items():
            arr = arrays[key]
            try:
                want = _dtype_from_label(str(info["dtype"]))
                shape = [int(s) for s in info["shape"]]
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{js}: the entry of array {key!r} is malformed ({exc}).") from exc
            if arr.dtype != want or list(arr.shape) != shape:
                raise ValueError(
                    f"{js} lists array {key!r} as {info['dtype']} {shape} but {npz} holds "
                    f"{_dtype_label(arr.dtype)} {list(arr.shape)}; the pair was not written "
                    "together."
                )
    return arrays, meta
