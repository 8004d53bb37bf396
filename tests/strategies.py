"""Hypothesis strategies shared by the graph tests (not a test module)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


@st.composite
def digraphs(draw, min_n: int = 1, max_n: int = 10) -> np.ndarray:
    """A random boolean adjacency [n, n] with self-loops (any directed graph)."""
    n = draw(st.integers(min_n, max_n))
    bits = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    a = np.array(bits, dtype=bool).reshape(n, n)
    np.fill_diagonal(a, True)
    return a
