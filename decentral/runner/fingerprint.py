"""Fingerprints of what an algorithm computes, for checkpoints that can never resume another run.

A checkpoint stores a fingerprint of its configuration; :func:`~decentral.runner.run` resumes it
only when the fingerprint of the current call is equal, and otherwise names the fields that
differ. For the algorithm's functions the fingerprint covers

* their byte code and constants (recursively through nested code objects), and
* every *value* they can reach: closure cells, the module globals their code reads, default
  arguments, ``functools.partial`` arguments, bound ``self``, the wrapped function of a
  ``jax.jit``; arrays by content (dtype, shape, bytes), scalars and strings by value, tuples /
  lists / dicts / dataclasses / NamedTuples by their items, objects with a ``digest()`` method
  (graph sequences) by that digest, nested functions recursively. Functions and classes of
  well-known packages (jax, numpy, scipy, networkx, optax, the standard library, decentral
  itself) are identified by their qualified name.

A value the walker cannot identify (an open file, a lock, a device mesh, ...) makes the function
*unfingerprintable*: :func:`run` then refuses to checkpoint it and says which value, unless the
:class:`~decentral.runner.Algorithm` carries a ``config`` that describes what it closes over.

Note that JAX's ``jit`` reads module globals when it traces: a function reading a global that is
later reassigned keeps the old value in an already compiled run. The fingerprint reads the
current value, so a checkpoint is refused, never silently mixed.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import re
import types
from typing import Any

import jax
import numpy as np

__all__ = [
    "array_digest",
    "function_parts",
    "reachable_horizon",
    "hash_tree",
    "Unfingerprintable",
]

_OPAQUE_PACKAGES = frozenset({
    "jax", "jaxlib", "numpy", "scipy", "networkx", "optax", "matplotlib", "ml_dtypes",
    "decentral", "builtins", "functools", "math", "operator", "typing", "collections",
    "itertools", "abc", "dataclasses", "enum", "types", "inspect", "warnings", "numbers",
})


class Unfingerprintable(ValueError):
    """A value reached by an algorithm's function that the fingerprint cannot identify."""


def array_digest(value) -> str:
    """``"array:<dtype><shape>:<sha256 of the bytes>"`` of a concrete numpy / JAX array.

    Example:
        >>> array_digest(np.zeros(2))[:17]
        'array:float64[2]:'
        >>> array_digest(np.zeros(2)) == array_digest(np.zeros(2))
        True
    """
    if isinstance(value, jax.core.Tracer):
        raise Unfingerprintable("a JAX tracer (an abstract value inside jit/vmap) has no content")
    if _is_key(value):
        impl = str(jax.random.key_impl(value))
        value = jax.random.key_data(value)
    else:
        impl = ""
    arr = np.ascontiguousarray(np.asarray(value))
    h = hashlib.sha256(arr.tobytes())
    h.update(arr.dtype.str.encode())
    shape = ",".join(map(str, arr.shape))
    return f"array:{impl}{arr.dtype}[{shape}]:{h.hexdigest()}"


def _is_key(value) -> bool:
    try:
        return jax.numpy.issubdtype(getattr(value, "dtype", None), jax.dtypes.prng_key)
    except Exception:
        return False


def _top_package(module: str | None) -> str:
    return (module or "").split(".", 1)[0]


def _type_name(cls) -> tuple[str, str]:
    """``(module, qualname)`` of a library class; ``("<user>", qualname)`` of any other (a
    script run as ``__main__`` in one process and imported in another defines the same
    class under two module names)."""
    if _top_package(cls.__module__) in _OPAQUE_PACKAGES:
        return cls.__module__, cls.__qualname__
    return "<user>", cls.__qualname__


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _feed_code(h, code: types.CodeType) -> None:
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _feed_code(h, const)
        elif isinstance(const, frozenset):
            h.update(repr(sorted(map(repr, const))).encode())
        else:
            h.update(repr(const).encode())


class _Walker:
    """Hash a value and everything it reaches; collect graph-sequence lengths on the way."""

    def __init__(self, *, hashing: bool = True):
        self.hashing = hashing
        self.horizons: list[int] = []
        self._stack: set[int] = set()

    # the hash is a running sha256; ``tag`` separates fields unambiguously
    def digest(self, value, path: str) -> str:
        h = hashlib.sha256()
        self._value(h, value, path)
        return h.hexdigest()

    def _tag(self, h, *parts) -> None:
        if self.hashing:
            for p in parts:
                h.update(str(p).encode())
                h.update(b"\x00")

    def _value(self, h, v, path: str) -> None:  # noqa: C901 - one dispatch table
        if v is None or isinstance(v, bool | int | float | complex | str | bytes):
            self._tag(h, type(v).__name__, repr(v))
            return
        if isinstance(v, enum.Enum):
            self._tag(h, "enum", type(v).__qualname__, repr(v.value))
            return
        if isinstance(v, types.ModuleType):
            self._tag(h, "module", v.__name__)
            return
        if isinstance(v, type):
            if _top_package(v.__module__) in _OPAQUE_PACKAGES:
                self._tag(h, "type", v.__module__, v.__qualname__)
            else:
                # a user class: by name and fields, not module (a script run as __main__ in
                # one process and imported in another defines the same class)
                self._tag(h, "usertype", v.__qualname__,
                          *getattr(v, "_fields", ()), *getattr(v, "__annotations__", {}))
            return
        if isinstance(v, np.dtype):
            self._tag(h, "dtype", str(v))
            return
        if isinstance(v, np.ndarray | np.generic | jax.Array):
            if isinstance(v, jax.core.Tracer):
                raise Unfingerprintable(f"{path} is a JAX tracer")
            self._tag(h, "array", array_digest(v) if self.hashing else "")
            return
        key = id(v)
        if key in self._stack:
            self._tag(h, "cycle")
            return
        self._stack.add(key)
        try:
            self._composite(h, v, path)
        finally:
            self._stack.discard(key)

    def _composite(self, h, v, path: str) -> None:  # noqa: C901
        from decentral.graphs import GraphSequence

        if isinstance(v, GraphSequence):
            if v.length is not None:
                self.horizons.append(int(v.length))
            self._tag(h, "graphs", v.digest() if self.hashing else "")
            return
        # an Algorithm reached by another one (a wrapper): its own bound counts too
        from .algorithm import Algorithm, FrozenConfig

        if isinstance(v, Algorithm) and v.max_horizon is not None:
            self.horizons.append(v.max_horizon)
        if isinstance(v, FrozenConfig):
            self._tag(h, "config", v._text)
            return
        if isinstance(v, functools.partial):
            self._tag(h, "partial", type(v).__qualname__)
            self._value(h, v.func, f"{path}.func")
            for i, a in enumerate(v.args):
                self._value(h, a, f"{path}.args[{i}]")
            for k in sorted(v.keywords):
                self._tag(h, k)
                self._value(h, v.keywords[k], f"{path}.keywords[{k!r}]")
            return
        if isinstance(v, types.MethodType):
            self._tag(h, "method")
            self._value(h, v.__func__, f"{path}.__func__")
            self._value(h, v.__self__, f"{path}.__self__")
            return
        if isinstance(v, types.FunctionType):
            self._function(h, v, path)
            return
        if isinstance(v, types.BuiltinFunctionType | types.BuiltinMethodType | np.ufunc):
            self._tag(h, "builtin", getattr(v, "__module__", ""), getattr(v, "__qualname__",
                                                                          repr(v)))
            return
        wrapped = getattr(v, "__wrapped__", None)
        if wrapped is not None and callable(v):  # jax.jit, functools.wraps
            self._tag(h, "wrapped", type(v).__qualname__)
            self._value(h, wrapped, f"{path}.__wrapped__")
            return
        if isinstance(v, tuple | list):
            self._tag(h, *_type_name(type(v)), len(v))
            for i, item in enumerate(v):
                self._value(h, item, f"{path}[{i}]")
            return
        if isinstance(v, dict):
            self._tag(h, type(v).__qualname__, len(v))
            for k in sorted(v, key=repr):
                self._value(h, k, f"{path} key")
                self._value(h, v[k], f"{path}[{k!r}]")
            return
        if isinstance(v, set | frozenset):
            items = sorted(self.digest(item, f"{path} item") for item in v)
            self._tag(h, "set", *items)
            return
        if dataclasses.is_dataclass(v):
            self._tag(h, "dataclass", *_type_name(type(v)))
            for f in dataclasses.fields(v):
                self._tag(h, f.name)
                self._value(h, getattr(v, f.name), f"{path}.{f.name}")
            return
        digest = getattr(v, "digest", None)
        if callable(digest) and not isinstance(v, type):
            self._tag(h, "digest", type(v).__qualname__, digest() if self.hashing else "")
            return
        module = type(v).__module__
        if _top_package(module) not in _OPAQUE_PACKAGES and hasattr(v, "__dict__"):
            # an instance of a user class: its class (and call method) plus its attributes
            self._tag(h, "object", *_type_name(type(v)))
            call = vars(type(v)).get("__call__")
            if isinstance(call, types.FunctionType):
                self._function(h, call, f"{path}.__call__")
            for k in sorted(vars(v)):
                self._tag(h, k)
                self._value(h, vars(v)[k], f"{path}.{k}")
            return
        raise Unfingerprintable(
            f"{path} is a {module}.{type(v).__qualname__}, whose content the runner cannot "
            "fingerprint"
        )

    def _function(self, h, fn: types.FunctionType, path: str) -> None:
        if _top_package(fn.__module__) in _OPAQUE_PACKAGES:
            self._tag(h, "libfn", fn.__module__, fn.__qualname__)
            if _top_package(fn.__module__) == "decentral":
                # a closure made by a decentral factory (e.g. an algorithm's step reached
                # without its Algorithm): what it closes over is data, walk it
                for name, part in function_items(fn):
                    if name != "code" and not name.startswith("global"):
                        self._tag(h, name)
                        self._value(h, part, f"{path} → {name}")
            return
        for name, part in function_items(fn):
            self._tag(h, name)
            if name == "code":
                if self.hashing:
                    _feed_code(h, part)
            else:
                self._value(h, part, f"{path} → {name}")


def function_items(fn: types.FunctionType):
    """``(name, value)`` pairs a plain function depends on: its code, defaults, closure cells
    (by variable name) and the module globals its code reads."""
    yield "code", fn.__code__
    if fn.__defaults__:
        yield "defaults", fn.__defaults__
    if fn.__kwdefaults__:
        yield "kwdefaults", fn.__kwdefaults__
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned after the function was made)
            value = None
        yield f"closure {name!r}", value
    glob = fn.__globals__
    for name in sorted(_code_names(fn.__code__)):
        if name in glob:
            yield f"global {name!r}", glob[name]


def function_parts(fn, label: str) -> dict[str, str]:
    """Hashes of what ``fn`` depends on, one entry per top-level part (``code``, each closure
    variable, each global it reads, ...), so a mismatch can name the part that changed.

    Raises:
        Unfingerprintable: a reached value cannot be identified (the message says which).

    Functions of decentral itself and of well-known packages are identified by their
    qualified name (one ``value`` entry); a user's function is taken apart.
    """
    walker = _Walker()
    target = fn
    while True:  # unwrap jit / wraps to the user's function
        inner = getattr(target, "__wrapped__", None)
        if inner is None or not callable(target):
            break
        target = inner
    if isinstance(target, types.FunctionType) and \
            _top_package(target.__module__) not in _OPAQUE_PACKAGES:
        return {name: (_code_digest(part) if name == "code" else _scalar_text(part)
                       or walker.digest(part, f"{label} → {name}"))
                for name, part in function_items(target)}
    return {"value": walker.digest(target, label)}


def _scalar_text(value) -> str | None:
    """``"float 1.0"`` for a plain scalar or string (readable in a mismatch message)."""
    if value is None or isinstance(value, bool | int | float | complex | str):
        text = f"{type(value).__name__} {value!r}"
        return text if len(text) <= 200 else None
    return None


def _code_digest(code) -> str:
    h = hashlib.sha256()
    _feed_code(h, code)
    return h.hexdigest()


def reachable_horizon(values) -> int | None:
    """The shortest finite length of the graph sequences (and the smallest ``max_horizon`` of
    the algorithms) reachable from ``values``; None if there is none. Values the fingerprint
    cannot identify are skipped here."""
    walker = _Walker(hashing=False)
    for i, v in enumerate(values):
        try:
            walker.digest(v, f"value {i}")
        except Unfingerprintable:
            # Best effort: walk the parts one by one so one odd value does not hide a graph.
            if isinstance(v, types.FunctionType):
                for name, part in function_items(v):
                    try:
                        walker.digest(part, name)
                    except Unfingerprintable:
                        pass
    return min(walker.horizons) if walker.horizons else None


# --------------------------------------------------------------------------------------------
# params / xs / spec hashing
# --------------------------------------------------------------------------------------------

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def treedef_text(tree) -> str:
    """The tree structure as text without memory addresses (custom nodes such as
    ``jax.tree_util.Partial`` print their functions with an address that changes per process)."""
    return _ADDRESS.sub("", str(jax.tree_util.tree_structure(tree)))


def hash_tree(tree) -> str:
    """sha256 of a pytree's structure, leaf paths and leaf contents."""
    h = hashlib.sha256()
    leaves, _ = jax.tree_util.tree_flatten_with_path(tree)
    h.update(treedef_text(tree).encode())
    for path, leaf in leaves:
        h.update(jax.tree_util.keystr(path).encode())
        h.update(array_digest(leaf).encode())
    return h.hexdigest()


def tree_spec(tree) -> list:
    """``[path, shape, dtype]`` of every leaf plus the structure, JSON-able."""
    return [
        [jax.tree_util.keystr(path), list(leaf.shape), str(leaf.dtype)]
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]
    ] + [["treedef", treedef_text(tree)]]


def fingerprint(config: dict) -> str:
    """sha256 of a JSON-able configuration (sorted keys)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def code_hash(fn) -> str | None:
    """Hash of a function's byte code and constants only (no values): kept for callers that
    want to compare code; the checkpoint uses :func:`function_parts`."""
    if fn is None:
        return None
    target = fn
    while getattr(target, "__wrapped__", None) is not None:
        target = target.__wrapped__
    target = getattr(target, "func", target)
    code = getattr(target, "__code__", None)
    if code is None:
        return type(fn).__qualname__
    return _code_digest(code)


def describe_functions(functions: dict[str, Any]) -> tuple[dict, list[str]]:
    """``({label: parts}, problems)`` for the named functions (None entries skipped)."""
    out, problems = {}, []
    for label, fn in functions.items():
        if fn is None:
            out[label] = None
            continue
        try:
            out[label] = function_parts(fn, label)
        except Unfingerprintable as exc:
            out[label] = None
            problems.append(str(exc))
    return out, problems


def _unused(_: Any) -> None:  # pragma: no cover - keeps linters quiet about re-exports
    return None
