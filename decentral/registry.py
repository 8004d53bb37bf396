"""Registries of named entries, filled by decorators and discovered by importing a package: the
one mechanism behind the claim registry (``python -m proofs_checks``) and the figure registry
(``python -m figures``).

A registry is a plain ``dict`` ``id -> entry``; an entry has a ``run`` callable, whose module
and qualified name identify who registered it. :func:`register` adds an entry (the same function
may register again, as when its module is re-imported; another function may not take its id),
:func:`discover` imports every module of a package so that their decorators run, and
:func:`select` picks entries by substrings of their ids.

Example:
    >>> from typing import NamedTuple
    >>> class Entry(NamedTuple):
    ...     id: str
    ...     run: object
    >>> reg = {}
    >>> def draw(ctx): return ctx
    >>> register(reg, Entry("graphs.demo", draw), kind="figure")
    >>> [e.id for e in select(reg, "demo")]
    ['graphs.demo']
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

__all__ = ["register", "discover", "select", "split_patterns", "import_submodules"]

_SKIP = frozenset({"registry", "__main__"})


def _origin(fn: Callable[..., Any]) -> tuple[str, str]:
    return getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", repr(fn))


def register(registry: MutableMapping[str, Any], entry: Any, *, kind: str) -> None:
    """Add ``entry`` (with fields ``id`` and ``run``) to ``registry`` under ``entry.id``.

    Args:
        registry: the ``id -> entry`` dict.
        entry: the record to register; ``entry.run`` identifies who registers it.
        kind: what an entry is (``"claim"``, ``"figure"``), for the error message.

    Raises:
        ValueError: the id is already registered by another function (the same function
            registering again, e.g. when its module is imported twice, replaces itself).
    """
    previous = registry.get(entry.id)
    if previous is not None and _origin(previous.run) != _origin(entry.run):
        mod, name = _origin(previous.run)
        raise ValueError(f"{kind} id {entry.id!r} is already registered by {mod}.{name}; "
                         f"{kind} ids must be unique, pick another name.")
    registry[entry.id] = entry


def import_submodules(package: str, errors: MutableMapping[str, str]) -> None:
    """Import every module of ``package`` (its registrations run on import), sorted by name.

    Skips ``registry``, ``__main__`` and names starting with ``_``; a subpackage is imported as
    a whole (its ``__init__`` imports what it registers). A module that fails to import does not
    stop the others: its traceback goes to ``errors[name]`` (and a module that imports again is
    removed from ``errors``).
    """
    pkg = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        name = info.name
        if name in _SKIP or name.startswith("_"):
            continue
        try:
            importlib.import_module(f"{package}.{name}")
        except Exception:  # noqa: BLE001 - one broken module must not hide the others
            errors[name] = traceback.format_exc()
        else:
            errors.pop(name, None)


def discover(registry: Mapping[str, Any], package: str, errors: MutableMapping[str, str]
             ) -> Mapping[str, Any]:
    """Import every module of ``package`` (:func:`import_submodules`) and return ``registry``,
    which their decorators filled; import failures go to ``errors``."""
    import_submodules(package, errors)
    return registry


def split_patterns(only: str | Iterable[str] | None) -> list[str]:
    """``--only`` values as a flat list: each may hold several comma-separated patterns.

    Example:
        >>> split_patterns(["graphs.,push_sum", "bandits"])
        ['graphs.', 'push_sum', 'bandits']
    """
    if only is None:
        return []
    items = [only] if isinstance(only, str) else list(only)
    return [p.strip() for item in items for p in str(item).split(",") if p.strip()]


def select(entries: Mapping[str, Any] | Iterable[Any], only: str | Iterable[str] | None
           ) -> list[Any]:
    """Entries whose id contains any of the ``only`` patterns (substring match), sorted by id.

    Args:
        entries: a registry dict or an iterable of entries (each with an ``id``).
        only: ``None`` (every entry), one pattern, a comma-separated list, or a list of these.

    Returns:
        The matching entries in id order (possibly empty).
    """
    pool = list(entries.values()) if isinstance(entries, Mapping) else list(entries)
    patterns = split_patterns(only)
    chosen = pool if not patterns else [e for e in pool if any(p in e.id for p in patterns)]
    return sorted(chosen, key=lambda e: e.id)
