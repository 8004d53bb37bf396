"""Input validation shared by the graph builders, weight rules and checks.

Every function here raises :class:`ValueError` with a message that says what is wrong and how
to fix it; none of them silently repairs its input.

One rule for every graph argument of :mod:`decentral.graphs`: a graph is either a boolean
adjacency with self-loops (:func:`as_adjacency`) or a real weight matrix with a positive
diagonal (:func:`as_pattern` reads its pattern ``W > 0``). Integer arrays are neither: a 0/1
array is converted explicitly with ``adj.astype(bool)``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from decentral._checks import is_float_dtype

__all__ = ["as_adjacency", "as_pattern", "as_weights", "as_weight_stack"]


def as_adjacency(adj, *, name: str = "adj", require_self_loops: bool = True) -> np.ndarray:
    """Return ``adj`` as a boolean numpy array after checking it is a valid adjacency.

    Args:
        adj: square boolean array, ``adj[i, j]`` True iff agent i receives from agent j.
        name: how the argument is called in error messages.
        require_self_loops: if True, every diagonal entry must be True.

    Raises:
        ValueError: if ``adj`` is not square, not boolean, or lacks self-loops when required.
    """
    _refuse_sparse(adj, name)
    a = np.asarray(adj)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(
            f"{name} must be a square [n, n] array; got shape {a.shape}. Build one with "
            "decentral.graphs builders (ring, complete, erdos_renyi, ...) or from_networkx."
        )
    if a.shape[0] == 0:
        raise ValueError(f"{name} has no agents (shape {a.shape}); need n >= 1.")
    if a.dtype != np.bool_:
        raise ValueError(
            f"{name} must be a boolean adjacency (dtype bool), got dtype {a.dtype}. "
            "For a weight matrix use the weight checks (is_row_stochastic, ...); to convert a "
            "0/1 array use `adj.astype(bool)`."
        )
    if require_self_loops and not np.all(np.diag(a)):
        missing = np.flatnonzero(~np.diag(a)).tolist()
        raise ValueError(
            f"{name} lacks self-loops at agents {missing[:10]}"
            f"{'...' if len(missing) > 10 else ''}; "
            "every agent must hear itself. Add them with decentral.graphs.add_self_loops(adj)."
        )
    return a


def as_pattern(graph, *, name: str = "graph") -> np.ndarray:
    """Boolean pattern ``[n, n]`` of a graph given as a boolean adjacency (validated by
    :func:`as_adjacency`, self-loops required) or a float weight matrix (finite, non-negative,
    positive diagonal; the pattern is ``W > 0``).

    Raises:
        ValueError: not square, an integer / other non-float array, negative or non-finite
            weights, or a missing self-loop.

    Example:
        >>> as_pattern(np.array([[0.5, 0.5], [0.0, 1.0]])).tolist()
        [[True, True], [False, True]]
    """
    _refuse_sparse(graph, name)
    g = np.asarray(graph)
    if g.dtype == np.bool_:
        return as_adjacency(g, name=name)
    if not is_float_dtype(g.dtype):
        raise ValueError(
            f"{name} must be a boolean adjacency or a float weight matrix; got dtype "
            f"{g.dtype}. For a 0/1 adjacency use `{name}.astype(bool)`.")
    return require_self_weights(as_weights(g, name=name), name) > 0


def require_self_weights(w: np.ndarray, name: str) -> np.ndarray:
    """``w`` itself after checking every agent keeps a positive weight on itself."""
    if np.any(np.diag(w) <= 0):
        bad = np.flatnonzero(np.diag(w) <= 0).tolist()
        raise ValueError(f"{name} has no self-loop weight at agents {bad[:10]}: every agent "
                         "must hear itself (W[i, i] > 0).")
    return w


def as_weights(W, *, name: str = "W") -> np.ndarray:
    """Return ``W`` as a float numpy array after checking shape, finiteness and sign."""
    _refuse_sparse(W, name)
    w = np.asarray(W)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"{name} must be a square [n, n] weight matrix; got shape {w.shape}.")
    w = _real_float(w, name)
    _check_finite_nonnegative(w, name)
    return w


def as_weight_stack(Ws, *, name: str = "Ws") -> np.ndarray:
    """Return a ``[T, n, n]`` float stack from one matrix or a sequence of matrices."""
    _refuse_sparse(Ws, name)
    w = np.asarray(Ws)
    if w.ndim == 2:
        w = w[None]
    if w.ndim != 3 or w.shape[1] != w.shape[2] or w.shape[0] == 0:
        raise ValueError(
            f"{name} must be one [n, n] matrix or a non-empty stack [T, n, n]; got shape {w.shape}."
        )
    w = _real_float(w, name)
    _check_finite_nonnegative(w, name)
    return w


def _refuse_sparse(x, name: str) -> None:
    """A clear message for a scipy sparse graph where only dense arrays are taken so far
    (functions that take sparse graphs dispatch on :func:`scipy.sparse.issparse` first)."""
    if sp.issparse(x):
        raise ValueError(
            f"{name} is a scipy sparse {x.format} array of shape {x.shape}: this function takes "
            f"dense arrays only (sparse graphs are produced by the builders' sparse=True and "
            f"taken by the weight rules, the neighbour tables, static / periodic / explicit / "
            f"as_sequence and the functions that say so). For a small graph pass "
            f"{name}.toarray().")


def _real_float(w: np.ndarray, name: str) -> np.ndarray:
    """``w`` itself when it holds real floats (numpy's or JAX's low-precision ones such as
    bfloat16: their tolerances then follow their own precision), integers as float64; other
    dtypes are refused."""
    if is_float_dtype(w.dtype):
        return w
    if w.dtype == np.bool_ or not np.issubdtype(w.dtype, np.number) or \
            np.issubdtype(w.dtype, np.complexfloating):
        raise ValueError(f"{name} must hold real numbers; got dtype {w.dtype}.")
    return w.astype(np.float64)


def _check_finite_nonnegative(w: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(w)):
        where = np.argwhere(~np.isfinite(w))[0].tolist()
        raise ValueError(f"{name} has a NaN or infinite entry (first at index {where}); "
                         "weights must be finite.")
    if np.any(w < 0):
        where = np.argwhere(w < 0)[0].tolist()
        raise ValueError(f"{name} has a negative entry {w[tuple(where)]!r} at index {where}; "
                         "mixing weights must be non-negative.")
