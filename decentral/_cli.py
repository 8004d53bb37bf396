"""Small helpers shared by the command lines (``python -m proofs_checks``, ``-m figures``,
``-m benchmarks``)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import pkgutil
import traceback
from collections.abc import Iterable, Iterator, MutableMapping

_SKIP = frozenset({"registry", "__main__"})


def positive_int(text: str) -> int:
    """argparse type: a positive integer, with a clear message otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


def import_submodules(package: str, errors: MutableMapping[str, str]) -> None:
    """Import every module of ``package`` (its registrations run on import), sorted by name.

    Skips ``registry``, ``__main__`` and names starting with ``_``. A module that fails to
    import does not stop the others: its traceback goes to ``errors[name]`` (and a module that
    imports again is removed from ``errors``).
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


@contextlib.contextmanager
def verification_backends() -> Iterator[None]:
    """Float64 in JAX and matplotlib's Agg backend for the duration of a command (the entry
    points of ``proofs_checks`` and ``figures`` check identities to ~1e-12); JAX's previous
    x64 setting is restored afterwards, also when the command raises."""
    import jax
    import matplotlib

    matplotlib.use("Agg", force=True)
    previous = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)
