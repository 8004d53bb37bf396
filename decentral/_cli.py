"""Small helpers shared by the command lines (``python -m proofs_checks``, ``-m benchmarks``)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """argparse type: a positive integer, with a clear message otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n
