"""The claim registry: ``@claim(...)`` registers a check, :func:`discover` imports every module.

A family module (``proofs_checks/graphs.py``, ``proofs_checks/bandits.py``, ...) declares its
claims with the decorator; ``python -m proofs_checks`` discovers and runs them.

Example:
    >>> from decentral.verify import Kind, Outcome, Verdict
    >>> reg = {}
    >>> @claim("graphs.demo_identity", statement="x == x", source="logic", kind=Kind.EXACT,
    ...        registry=reg)
    ... def demo(ctx):
    ...     return Outcome(Verdict.PASS, {"residual": 0.0}, "residual == 0")
    >>> [c.id for c in select(reg, "demo")]
    ['graphs.demo_identity']
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from decentral.verify.claims import CheckContext, Claim, Kind, Outcome

__all__ = ["REGISTRY", "DISCOVERY_ERRORS", "claim", "discover", "select", "split_patterns"]

#: Every registered claim, by id.
REGISTRY: dict[str, Claim] = {}

#: Modules of the package that failed to import during :func:`discover`: name -> traceback text.
DISCOVERY_ERRORS: dict[str, str] = {}

_SKIP = {"registry", "__main__"}


def _origin(fn: Callable[..., Any]) -> tuple[str, str]:
    return getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", repr(fn))


def claim(
    id: str,
    *,
    statement: str,
    source: str,
    kind: Kind | str,
    registry: dict[str, Claim] | None = None,
) -> Callable[[Callable[[CheckContext], Outcome]], Callable[[CheckContext], Outcome]]:
    """Decorator registering ``fn(ctx) -> Outcome`` as the claim ``id``.

    The function is returned unchanged (so tests can call it directly, e.g. on a planted
    violation), with the :class:`Claim` attached as ``fn.claim``.

    Args:
        id: ``"<family>.<name>"``.
        statement: the claim in words.
        source: paper, theorem / equation.
        kind: :class:`Kind` or its value (``"exact"``, ``"statistical"``, ``"rate"``).
        registry: where to register (default :data:`REGISTRY`); tests pass their own dict.

    Raises:
        ValueError: a malformed id, or an id already registered by a different function
            (re-importing the same module re-registers the same function and is allowed).
    """
    target = REGISTRY if registry is None else registry

    def decorate(fn: Callable[[CheckContext], Outcome]) -> Callable[[CheckContext], Outcome]:
        c = Claim(id=id, statement=statement, source=source, kind=kind, run=fn)
        previous = target.get(id)
        if previous is not None and _origin(previous.run) != _origin(fn):
            mod, name = _origin(previous.run)
            raise ValueError(f"claim id {id!r} is already registered by {mod}.{name}; claim ids "
                             "must be unique, pick another name.")
        target[id] = c
        fn.claim = c  # type: ignore[attr-defined]
        return fn

    return decorate


def discover() -> dict[str, Claim]:
    """Import every module of the ``proofs_checks`` package and return :data:`REGISTRY`.

    Skips ``registry``, ``__main__`` and names starting with ``_``. A module that fails to import
    does not stop discovery: its traceback is stored in :data:`DISCOVERY_ERRORS` (the CLI reports
    it as an ERROR and exits non-zero).
    """
    import proofs_checks

    for info in sorted(pkgutil.iter_modules(proofs_checks.__path__), key=lambda m: m.name):
        name = info.name
        if name in _SKIP or name.startswith("_"):
            continue
        try:
            importlib.import_module(f"proofs_checks.{name}")
        except Exception:  # noqa: BLE001 - one broken module must not hide the others
            DISCOVERY_ERRORS[name] = traceback.format_exc()
        else:
            DISCOVERY_ERRORS.pop(name, None)
    return REGISTRY


def split_patterns(only: str | Iterable[str] | None) -> list[str]:
    """``--only`` values as a flat list: each may hold several comma-separated patterns."""
    if only is None:
        return []
    items = [only] if isinstance(only, str) else list(only)
    out: list[str] = []
    for item in items:
        out += [p.strip() for p in str(item).split(",") if p.strip()]
    return out


def select(
    claims: Mapping[str, Claim] | Iterable[Claim], only: str | Iterable[str] | None
) -> list[Claim]:
    """Claims whose id contains any of the ``only`` patterns (substring match), sorted by id.

    Args:
        claims: a registry dict or an iterable of claims.
        only: ``None`` (all claims), one pattern, a comma-separated list, or a list of these.

    Returns:
        The matching claims in id order (possibly empty).
    """
    pool = list(claims.values()) if isinstance(claims, Mapping) else list(claims)
    patterns = split_patterns(only)
    chosen = pool if not patterns else [c for c in pool if any(p in c.id for p in patterns)]
    return sorted(chosen, key=lambda c: c.id)
