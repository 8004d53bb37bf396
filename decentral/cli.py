"""Small helpers shared by the command lines (``python -m proofs_checks``, ``-m figures``,
``-m benchmarks``): argument types and the numerical backends of a verification run. Their
registries are :mod:`decentral.registry`."""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Iterator

__all__ = ["positive_int", "positive_float", "verification_backends"]


def positive_int(text: str) -> int:
    """argparse type: a positive integer, with a clear message otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0, with a clear message otherwise."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return x


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
