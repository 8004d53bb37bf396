"""The horizon an algorithm's functions allow: the shortest explicit graph stack they reach.

An explicit graph sequence (:func:`decentral.graphs.explicit`) supplies ``length`` steps; an
algorithm whose functions close over one cannot run longer. :func:`reachable_horizon` finds the
sequences a function reaches (closure cells, default arguments, ``functools.partial``
arguments, bound ``self``, wrapped functions, containers, dataclasses and plain objects, and the
module globals its code reads) and returns the shortest length, so
:class:`~decentral.runner.Algorithm` can refuse a longer run before compiling. It is a best-effort
*guard* only: what a run computes is identified by its traced program
(:mod:`~decentral.runner.program`), never by this walk.
"""

from __future__ import annotations

import dataclasses
import functools
import types

__all__ = ["reachable_horizon"]

_MAX_DEPTH = 12


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _children(v):
    """The values ``v`` holds that could lead to a graph sequence."""
    if isinstance(v, functools.partial):
        return [v.func, *v.args, *v.keywords.values()]
    if isinstance(v, types.MethodType):
        return [v.__func__, v.__self__]
    if isinstance(v, types.FunctionType):
        out = list(v.__defaults__ or ()) + list((v.__kwdefaults__ or {}).values())
        for cell in v.__closure__ or ():
            try:
                out.append(cell.cell_contents)
            except ValueError:              # an empty cell
                pass
        glob = v.__globals__
        out += [glob[n] for n in sorted(_code_names(v.__code__)) if n in glob
                and not isinstance(glob[n], types.ModuleType | type)]
        return out
    if isinstance(v, tuple | list | set | frozenset):
        return list(v)
    if isinstance(v, dict):
        return list(v.values())
    wrapped = getattr(v, "__wrapped__", None)
    if wrapped is not None and callable(v):
        return [wrapped]
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return [getattr(v, f.name) for f in dataclasses.fields(v)]
    if hasattr(v, "__dict__") and not isinstance(v, types.ModuleType | type):
        module = type(v).__module__ or ""
        if module.split(".", 1)[0] not in ("jax", "jaxlib", "numpy", "builtins"):
            return list(vars(v).values())
    return []


def reachable_horizon(values) -> int | None:
    """The shortest finite ``length`` of the graph sequences (and the smallest ``max_horizon``
    of the algorithms) reachable from ``values``; None if there is none.

    Example:
        >>> import numpy as np
        >>> import decentral.graphs as g
        >>> seq = g.explicit(np.stack([g.row_stochastic(g.ring(3))] * 5))
        >>> reachable_horizon([lambda t: seq.at(t)])
        5
    """
    from decentral.graphs import GraphSequence

    found: list[int] = []
    seen: set[int] = set()
    stack = [(v, 0) for v in values]
    while stack:
        v, depth = stack.pop()
        if id(v) in seen or depth > _MAX_DEPTH or v is None:
            continue
        seen.add(id(v))
        if isinstance(v, GraphSequence):
            if v.length is not None:
                found.append(int(v.length))
            continue
        horizon = getattr(v, "max_horizon", None)
        if isinstance(horizon, int) and hasattr(v, "init") and hasattr(v, "step"):
            found.append(horizon)
        if isinstance(v, bool | int | float | complex | str | bytes):
            continue
        try:
            kids = _children(v)
        except Exception:                   # an object that refuses inspection: skip it
            continue
        stack.extend((k, depth + 1) for k in kids)
    return min(found) if found else None
