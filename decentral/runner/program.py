"""The traced-program fingerprint: what a function computes, read from its jaxpr.

:func:`trace_program` traces a function at given argument shapes (``jax.make_jaxpr``) and writes
the jaxpr as a canonical text: every operation with its shapes, dtypes and parameters (nested
jaxprs of ``scan`` / ``while`` / ``cond`` / ``jit`` inline), literals by value, and every
closed-over constant by content (dtype, shape and a sha256 of its bytes; in the text a closed-over
array appears only as a shape). Variables are numbered in order of appearance, so the text does
not depend on the process, on memory addresses, on comments or on the names of local variables,
and it changes whenever anything the function computes changes: its code, the code of every
function it calls (the user's modules, methods, globals read at trace time, ``decentral``
itself), and the values of the arrays and Python numbers it closes over.

What a trace cannot see is reported as *opaque* (:attr:`Program.opaque`): the Python function of
a ``pure_callback`` / ``io_callback`` (it runs on the host, outside the program) and the
derivative rules of ``custom_jvp`` / ``custom_vjp`` functions (only their primal computation is
in the jaxpr). :func:`~decentral.runner.run` refuses to checkpoint a program with opaque parts
unless its :class:`~decentral.runner.Algorithm` carries a ``config`` that describes them.
``debug_callback`` (``jax.debug.print``) returns nothing to the program and is not opaque.

The text is stable across processes for one jax / jaxlib version (tested in two processes);
versions enter the checkpoint fingerprint beside it, and the project pins the oldest jax it was
checked with (0.10.2): other versions may print and parameterise operations differently.

Example:
    >>> import jax.numpy as jnp
    >>> a = trace_program(lambda x: x * 2.0, jnp.ones(3))
    >>> b = trace_program(lambda y: y * 2.0, jnp.ones(3))     # a renamed local
    >>> c = trace_program(lambda x: x * 3.0, jnp.ones(3))
    >>> a.digest == b.digest, a.digest == c.digest, a.opaque
    (True, False, ())
"""

from __future__ import annotations

import enum
import functools
import hashlib
import math
import re
import types
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.extend import core as jcore

from .fingerprint import Unfingerprintable, array_digest

__all__ = ["Program", "Unfingerprintable", "trace_program", "program_lines_diff"]

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

#: Parameters that are derived from another parameter the text already holds (the Python
#: function ``lax.reduce`` builds from its jaxpr) or that never reach the program's values.
_DERIVED = {("reduce", "computation"), ("debug_callback", "callback")}

#: Primitives whose Python functions the jaxpr does not contain, and what to call them.
_OPAQUE_KIND = {
    "pure_callback": "a pure_callback (host Python code)",
    "io_callback": "an io_callback (host Python code)",
    "custom_jvp_call": "the derivative rule of a custom_jvp function",
    "custom_vjp_call": "the derivative rules of a custom_vjp function",
    "custom_vjp_call_jaxpr": "the derivative rules of a custom_vjp function",
    "custom_lin": "the derivative rules of a custom_vjp function",
}


class Program(NamedTuple):
    """A traced program.

    Attributes:
        digest: sha256 of :attr:`text` (the program's identity).
        text: the canonical text (operations, shapes, parameters, literals, constants by
            content digest), one line per operation.
        out_avals: the output shapes and dtypes (``jax.ShapeDtypeStruct`` pytree).
        opaque: descriptions of the parts the text cannot see (empty when complete).
        jaxpr: the ``ClosedJaxpr`` itself.
        num_inputs: the number of array leaves of the arguments it was traced with.
    """

    digest: str
    text: str
    out_avals: Any
    opaque: tuple
    jaxpr: Any
    num_inputs: int

    def function(self):
        """A function evaluating this program: it takes arguments with the pytree structure,
        shapes and dtypes of the traced ones and returns outputs shaped like
        :attr:`out_avals`, every constant held by the program (:meth:`hoisted` with nothing
        hoisted)."""
        _, evaluate = self.hoisted(min_bytes=math.inf)
        return functools.partial(evaluate, ())

    def hoisted(self, min_bytes: float | None = None) -> tuple[tuple, Any]:
        """``(constants, function)``: the program's constants of at least ``min_bytes`` bytes
        (default :data:`HOIST_MIN_BYTES`), and a function like :meth:`function` that takes
        them as its first argument (a tuple) instead of holding them. It takes arguments with
        the pytree structure, shapes and dtypes of the traced ones and returns outputs shaped
        like :attr:`out_avals`. The runner compiles these, so what runs is exactly what was
        fingerprinted (and the user's Python code is traced once).

        A constant a compiled program holds is copied into the executable (once per program
        and per device, and several times while XLA compiles it); a neighbour table of 10^6
        agents is 180 MB. Passed as an argument it is stored once, wherever the caller puts
        it. Smaller constants stay in the program, where XLA can fold them."""
        limit = HOIST_MIN_BYTES if min_bytes is None else min_bytes
        consts = list(self.jaxpr.consts)
        big = [i for i, c in enumerate(consts)
               if int(getattr(c, "nbytes", 0)) >= limit and hasattr(c, "shape")]
        inner = self.jaxpr.jaxpr
        out_tree = jax.tree_util.tree_structure(self.out_avals)
        expected = self.num_inputs

        def evaluate(hoisted, *args):
            leaves = jax.tree_util.tree_leaves(args)
            if len(leaves) != expected:
                raise TypeError(f"the program takes {expected} array inputs; got "
                                f"{len(leaves)}")
            values = list(consts)
            for i, value in zip(big, hoisted, strict=True):
                values[i] = value
            closed = jcore.ClosedJaxpr(inner, values)
            outs = [jax.numpy.asarray(o) for o in jcore.jaxpr_as_fun(closed)(*leaves)]
            return jax.tree_util.tree_unflatten(out_tree, outs)

        return tuple(consts[i] for i in big), evaluate


HOIST_MIN_BYTES = 1 << 20
"""Constants of a traced program at least this large are passed to the compiled program as
arguments (:meth:`Program.hoisted`) rather than copied into it."""


class _Writer:
    """Writes a jaxpr as canonical lines (see the module docstring)."""

    def __init__(self):
        self.lines: list[str] = []
        self.opaque: list[str] = []
        self.blocks: dict[int, int] = {}     # id(jaxpr) -> block number (shared sub-jaxprs)

    def block(self, jaxpr, consts, depth: int) -> None:
        names: dict = {}
        pad = "  " * depth

        def name(v) -> str:
            if isinstance(v, jcore.Literal):
                return f"{_literal(v.val)}:{v.aval}"
            if isinstance(v, jcore.DropVar):
                return "_"
            if v not in names:
                names[v] = f"v{len(names)}"
            return names[v]

        for var, value in zip(jaxpr.constvars, consts, strict=True):
            self.lines.append(f"{pad}const {name(var)}:{var.aval} = {_content(value)}")
        self.lines.append(f"{pad}in " + " ".join(f"{name(v)}:{v.aval}" for v in jaxpr.invars))
        if jaxpr.effects:
            self.lines.append(f"{pad}effects {sorted(map(repr, jaxpr.effects))}")
        for eqn in jaxpr.eqns:
            prim = eqn.primitive.name
            outs = " ".join(f"{name(v)}:{v.aval}" for v in eqn.outvars)
            ins = " ".join(name(v) for v in eqn.invars)
            inner = []
            params = []
            for key in sorted(eqn.params):
                value = eqn.params[key]
                if (prim, key) in _DERIVED:
                    continue
                if _is_jaxpr(value) or (isinstance(value, tuple | list) and value
                                        and all(_is_jaxpr(x) for x in value)):
                    inner.append((key, value))
                    continue
                params.append(f"{key}={self.param(prim, key, value)}")
            self.lines.append(f"{pad}{outs} = {prim}[{' '.join(params)}] {ins}")
            for key, value in inner:
                for i, sub in enumerate(value if isinstance(value, tuple | list) else [value]):
                    seen = self.blocks.get(id(sub))
                    if seen is not None:        # a jaxpr used twice is written once
                        self.lines.append(f"{pad}  {key}[{i}]: block {seen}")
                        continue
                    self.blocks[id(sub)] = len(self.blocks)
                    self.lines.append(f"{pad}  {key}[{i}]: block {self.blocks[id(sub)]}")
                    if isinstance(sub, jcore.ClosedJaxpr):
                        self.block(sub.jaxpr, sub.consts, depth + 2)
                    else:
                        self.block(sub, [], depth + 2)
            if prim in _OPAQUE_KIND:
                self.opaque.append(f"{_OPAQUE_KIND[prim]}{_label(eqn.params)}")
        self.lines.append(f"{pad}out " + " ".join(name(v) for v in jaxpr.outvars))

    def param(self, prim: str, key: str, value) -> str:
        if value is None or isinstance(value, bool | int | float | complex | str | bytes):
            return repr(value)
        if isinstance(value, enum.Enum):
            return f"{type(value).__name__}.{value.name}"
        if type(value).__name__ == "PRNGImpl":              # a PRNG implementation: its name
            return f"prng:{value.name}:{value.tag}:{value.key_shape}"
        if isinstance(value, tuple | list):
            return "(" + ",".join(self.param(prim, key, v) for v in value) + ")"
        if isinstance(value, dict):
            return "{" + ",".join(f"{k!r}:{self.param(prim, key, value[k])}"
                                  for k in sorted(value, key=repr)) + "}"
        if isinstance(value, np.ndarray | np.generic | jax.Array):
            return _content(value)
        if isinstance(value, np.dtype) or (isinstance(value, type)
                                           and issubclass(value, np.generic)):
            return str(np.dtype(value))
        if isinstance(value, jcore.Primitive):
            return f"primitive:{value.name}"

        text = repr(value)
        if type(value).__name__ in ("Mesh", "AbstractMesh"):     # a device mesh: its shape
            return text
        if isinstance(value, types.FunctionType | types.MethodType | functools.partial) or \
                _ADDRESS.search(text) or type(value).__name__ == "WrappedFun" or \
                (callable(value) and prim in _OPAQUE_KIND):
            if prim not in _OPAQUE_KIND:
                self.opaque.append(f"parameter {key!r} of {prim!r} ({type(value).__name__})")
            return f"<opaque {type(value).__name__}>"
        return text


def _is_jaxpr(value) -> bool:
    return isinstance(value, jcore.ClosedJaxpr | jcore.Jaxpr)


def _label(params) -> str:
    """`` 'name'`` of a custom function or callback, where its parameters say it."""
    callback = getattr(params.get("callback"), "callback_func", None)
    name = getattr(callback, "__qualname__", None)
    for key in ("call_jaxpr", "fun_jaxpr"):
        if name is None and _is_jaxpr(params.get(key)):
            inner = params[key].jaxpr if isinstance(params[key], jcore.ClosedJaxpr) \
                else params[key]
            src = getattr(getattr(inner, "debug_info", None), "func_src_info", None)
            if isinstance(src, str):
                name = src.split(" at ", 1)[0]
    return f" {name!r}" if isinstance(name, str) and name else ""


def _literal(value) -> str:
    arr = np.asarray(value)
    if arr.size == 1:
        return repr(arr.reshape(()).item())
    return _content(arr)


def _content(value) -> str:
    try:
        return array_digest(value)
    except Exception as exc:                     # pragma: no cover - a const of an odd type
        raise Unfingerprintable(f"a constant of type {type(value).__name__} has no "
                                f"readable content ({exc})") from None


def trace_program(fn, *args) -> Program:
    """Trace ``fn(*args)`` (arrays in ``args`` are abstract: only shapes and dtypes matter)
    and return its :class:`Program`.

    Raises:
        Exception: whatever tracing ``fn`` raises (a shape error of the user's function).
    """
    # a new function object each time: jax.make_jaxpr caches traces by function, and a
    # function reading a global reassigned since must be traced again
    closed, out_shape = jax.make_jaxpr(lambda *a: fn(*a), return_shape=True)(*args)
    writer = _Writer()
    writer.block(closed.jaxpr, closed.consts, 0)
    text = "\n".join(writer.lines)
    return Program(hashlib.sha256(text.encode()).hexdigest(), text, out_shape,
                   tuple(dict.fromkeys(writer.opaque)), closed,
                   len(jax.tree_util.tree_leaves(args)))


def program_lines_diff(before: str, after: str) -> str:
    """The first line where two program texts differ, as ``"line k: 'a' vs 'b'"`` (shortened),
    for mismatch messages.

    Example:
        >>> program_lines_diff("in v0\\nv1 = mul 1.0 v0", "in v0\\nv1 = mul 2.0 v0")
        "line 2: 'v1 = mul 1.0 v0' vs 'v1 = mul 2.0 v0'"
    """
    a, b = before.splitlines(), after.splitlines()
    for k in range(max(len(a), len(b))):
        x = a[k].strip() if k < len(a) else "<end>"
        y = b[k].strip() if k < len(b) else "<end>"
        if x != y:
            return f"line {k + 1}: {_short(x)!r} vs {_short(y)!r}"
    return "texts are equal"


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class RunPrograms(NamedTuple):
    """The traced programs of one :func:`~decentral.runner.run`: ``init``, one ``step`` and the
    ``record_fn`` (None without one), at the run's shapes and dtypes (one seed, one sweep
    entry; the chunk around them is the runner's own and does not enter)."""

    init: Program
    step: Program
    record_fn: Program | None

    @property
    def digest(self) -> str:
        """sha256 over the three program digests."""
        parts = [self.init.digest, self.step.digest,
                 "" if self.record_fn is None else self.record_fn.digest]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()

    @property
    def opaque(self) -> tuple:
        """``"<function>: <part>"`` for every part the traces cannot see."""
        out = []
        for label, prog in zip(self._fields, self, strict=True):
            if prog is not None:
                out += [f"{label}: {part}" for part in prog.opaque]
        return tuple(out)

    def texts(self) -> dict:
        """``{label: text}`` of the programs (None for a missing record_fn)."""
        return {label: None if prog is None else prog.text
                for label, prog in zip(self._fields, self, strict=True)}


def abstract(tree, drop_leading: bool = False):
    """``jax.ShapeDtypeStruct`` leaves (weak types kept) of a pytree of arrays; with
    ``drop_leading`` the leading axis of every leaf is dropped (one sweep entry, one step of
    ``xs``)."""
    def one(leaf):
        shape = tuple(np.shape(leaf))
        if drop_leading:
            shape = shape[1:]
        dtype = leaf.dtype if hasattr(leaf, "dtype") else np.asarray(leaf).dtype
        return jax.ShapeDtypeStruct(shape, dtype, weak_type=bool(getattr(leaf, "weak_type",
                                                                         False)))
    return jax.tree_util.tree_map(one, tree)


def trace_run(algorithm, params_abstract, x_abstract, record_fn, record_context: bool
              ) -> RunPrograms:
    """Trace ``algorithm.init``, one ``algorithm.step`` and ``record_fn`` as
    :func:`~decentral.runner.run` calls them, at abstract params ``params_abstract`` (one sweep
    entry) and one step's scanned input ``x_abstract`` (None without ``xs``)."""
    import jax.numpy as jnp

    from .algorithm import RecordContext
    from .keys import derive

    def arrays(tree):                   # Python scalars in a state or record become arrays
        return jax.tree_util.tree_map(jnp.asarray, tree)

    init_key, step_root = derive(jnp.uint32(0))
    t = jax.ShapeDtypeStruct((), jnp.int32)
    init = trace_program(lambda k, p: arrays(algorithm.init(k, p)), init_key, params_abstract)
    state = init.out_avals
    step = trace_program(algorithm.step, step_root, state, params_abstract, t, x_abstract)
    record = None
    if record_fn is not None:
        if record_context:
            info = step.out_avals[1]
            record = trace_program(
                lambda s, i, x, tt: arrays(record_fn(s, RecordContext(tt, i, x))),
                state, info, x_abstract, t)
        else:
            record = trace_program(lambda s: arrays(record_fn(s)), state)
    return RunPrograms(init, step, record)
