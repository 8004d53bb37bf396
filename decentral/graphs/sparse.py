"""Sparse adjacencies: CSR construction in O(edges) memory and the checks of a sparse graph.

A sparse adjacency follows the same contract as a dense one: a ``scipy.sparse.csr_array`` of
dtype bool and shape ``[n, n]`` with ``adj[i, j]`` True iff agent ``i`` receives from agent
``j`` (edge ``j -> i``), so row ``i`` lists agent i's in-neighbours, and the diagonal True
(every agent hears itself). Every CSR adjacency built here is in canonical form: the column
indices of each row are sorted, without duplicates, and no explicit False is stored.

None of these helpers allocates an ``[n, n]`` array: they take the edges as index arrays and
cost O(n + edges) memory (the index arrays are int32 while ``n`` and the edge count fit).

Example:
    >>> import numpy as np
    >>> adj = csr_from_pairs(3, np.array([1, 2]), np.array([0, 1]))   # 0 -> 1, 1 -> 2
    >>> adj.toarray().astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from decentral._checks import is_float_dtype

__all__ = ["is_sparse", "as_sparse_adjacency", "as_sparse_weights", "csr_from_pairs",
           "csr_from_rows", "csr_rows", "index_dtype", "require_sparse_symmetric"]

_INT32_MAX = np.iinfo(np.int32).max


def is_sparse(x) -> bool:
    """True iff ``x`` is a scipy sparse array or matrix (any format)."""
    return sp.issparse(x)


def index_dtype(n: int, nnz: int) -> type:
    """The index dtype of a CSR adjacency: int32 while ``n`` and ``nnz`` fit, else int64."""
    return np.int32 if max(int(n), int(nnz)) <= _INT32_MAX else np.int64


def csr_from_rows(cols: np.ndarray) -> sp.csr_array:
    """CSR adjacency whose row ``i`` holds exactly the in-neighbours ``cols[i]``.

    Args:
        cols: integer array ``[n, K]``; ``cols[i]`` lists the K distinct agents that agent i
            receives from, the agent itself included (the caller guarantees both). The rows
            need not be sorted; they are sorted here, in place.

    Returns:
        ``scipy.sparse.csr_array`` of dtype bool, shape ``[n, n]``, canonical, with K entries
        in every row.
    """
    n, width = cols.shape
    dtype = index_dtype(n, n * width)
    cols = cols.astype(dtype, copy=False)
    cols.sort(axis=1)
    indptr = np.arange(n + 1, dtype=dtype) * dtype(width)
    return _canonical(np.ones(n * width, dtype=bool), cols.reshape(-1), indptr, n)


def csr_from_pairs(n: int, receivers: np.ndarray, senders: np.ndarray) -> sp.csr_array:
    """CSR adjacency with an edge ``senders[e] -> receivers[e]`` for every e, plus self-loops.

    Repeated edges are merged and the indices of every row sorted; the pairs may come in any
    order. Cost: O(n + E) memory, O(n + E log(max in-degree)) time.

    Args:
        n: number of agents (the caller has checked it).
        receivers: integer array ``[E]`` of agents in 0..n-1 (row indices).
        senders: integer array ``[E]`` of agents in 0..n-1 (column indices).

    Returns:
        ``scipy.sparse.csr_array`` of dtype bool, shape ``[n, n]``, canonical, diagonal True.
    """
    receivers = np.asarray(receivers).reshape(-1)
    senders = np.asarray(senders).reshape(-1)
    dtype = index_dtype(n, receivers.size + n)
    diagonal = np.arange(n, dtype=dtype)
    rows = np.concatenate([receivers.astype(dtype, copy=False), diagonal])
    cols = np.concatenate([senders.astype(dtype, copy=False), diagonal])
    # scipy's COO -> CSR conversion buckets the entries by row in O(n + E), then sorts each
    # row and merges repeats (for bool data a repeat is a logical or), so nothing is [n, n]
    a = sp.csr_array((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(n, n))
    a.sum_duplicates()
    return a


def _canonical(data, indices, indptr, n: int) -> sp.csr_array:
    a = sp.csr_array((data, indices, indptr), shape=(n, n), copy=False)
    a.has_sorted_indices = True            # the callers sort, and their rows have no repeats
    a.has_canonical_format = True
    return a


def as_sparse_adjacency(adj, *, name: str = "adj", require_self_loops: bool = True
                        ) -> sp.csr_array:
    """A canonical boolean CSR copy of a scipy sparse adjacency, after checking it.

    Args:
        adj: scipy sparse array or matrix (any format), square, dtype bool, ``adj[i, j]`` True
            iff agent i receives from agent j.
        name: how the argument is called in error messages.
        require_self_loops: if True, every diagonal entry must be True.

    Returns:
        ``scipy.sparse.csr_array`` of dtype bool with sorted indices, no repeated entries and
        no stored False.

    Raises:
        ValueError: ``adj`` is not scipy sparse, not square, empty, not boolean, or lacks
            self-loops when they are required.
    """
    if not sp.issparse(adj):
        raise ValueError(f"{name} must be a scipy sparse adjacency; got {type(adj).__name__}.")
    shape = adj.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square [n, n] sparse adjacency; got shape {shape}.")
    if shape[0] == 0:
        raise ValueError(f"{name} has no agents (shape {shape}); need n >= 1.")
    if adj.dtype != np.bool_:
        raise ValueError(
            f"{name} must be a boolean sparse adjacency (dtype bool), got dtype {adj.dtype}; "
            "to convert a 0/1 sparse array use `adj.astype(bool)`.")
    a = sp.csr_array(adj, copy=True)
    a.sum_duplicates()
    a.eliminate_zeros()
    if require_self_loops:
        diag = a.diagonal()
        if not diag.all():
            missing = np.flatnonzero(~diag).tolist()
            raise ValueError(
                f"{name} lacks self-loops at agents {missing[:10]}"
                f"{'...' if len(missing) > 10 else ''}; every agent must hear itself. Add "
                "them with decentral.graphs.add_self_loops(adj).")
    return a


def as_sparse_weights(W, *, name: str = "W", require_self_loops: bool = True) -> sp.csr_array:
    """A canonical float CSR copy of a scipy sparse weight matrix, after checking it.

    The sparse counterpart of the dense weight checks: ``W[i, j] > 0`` iff agent i receives
    from agent j (row i holds agent i's in-weights). Stored zeros are dropped, so the stored
    entries are exactly the pattern ``W > 0``.

    Args:
        W: scipy sparse array or matrix (any format), square, real (integers become float64;
            booleans are adjacencies and are refused), finite and non-negative.
        name: how the argument is called in error messages.
        require_self_loops: if True, every diagonal entry must be positive.

    Returns:
        ``scipy.sparse.csr_array`` of W's float dtype with sorted indices, no repeated entries
        and no stored zeros.

    Raises:
        ValueError: ``W`` is not scipy sparse, not square, empty, boolean or not real, has a
            NaN / infinite / negative entry, or a non-positive diagonal entry when self-loops
            are required.
    """
    if not sp.issparse(W):
        raise ValueError(f"{name} must be a scipy sparse weight matrix; got "
                         f"{type(W).__name__}.")
    shape = W.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square [n, n] sparse weight matrix; got shape "
                         f"{shape}.")
    if shape[0] == 0:
        raise ValueError(f"{name} has no agents (shape {shape}); need n >= 1.")
    dtype = W.dtype
    if dtype == np.bool_:
        raise ValueError(f"{name} is a boolean sparse adjacency, not a weight matrix: turn it "
                         "into weights with a weight rule (row_stochastic, column_stochastic, "
                         "metropolis) or pass it with rule=.")
    if not is_float_dtype(dtype):
        if not np.issubdtype(dtype, np.integer):
            raise ValueError(f"{name} must hold real numbers; got dtype {dtype}.")
        dtype = np.dtype(np.float64)
    w = sp.csr_array(W, dtype=dtype, copy=True)
    w.sum_duplicates()
    if not np.all(np.isfinite(w.data)):
        e = int(np.flatnonzero(~np.isfinite(w.data))[0])
        raise ValueError(f"{name} has a NaN or infinite entry (first at index "
                         f"{_entry_of(w, e)}); weights must be finite.")
    if np.any(w.data < 0):
        e = int(np.flatnonzero(w.data < 0)[0])
        raise ValueError(f"{name} has a negative entry {w.data[e]!r} at index "
                         f"{_entry_of(w, e)}; mixing weights must be non-negative.")
    w.eliminate_zeros()
    if require_self_loops:
        diag = w.diagonal() > 0
        if not diag.all():
            bad = np.flatnonzero(~diag).tolist()
            raise ValueError(f"{name} has no self-loop weight at agents {bad[:10]}: every "
                             "agent must hear itself (W[i, i] > 0).")
    return w


def _entry_of(a: sp.csr_array, e: int) -> list[int]:
    """``[row, column]`` of the stored entry number ``e`` of a CSR array."""
    row = int(np.searchsorted(a.indptr, e, side="right")) - 1
    return [row, int(a.indices[e])]


def csr_rows(a: sp.csr_array) -> np.ndarray:
    """Row index of every stored entry of a CSR array (in storage order), in its index dtype."""
    n = a.shape[0]
    return np.repeat(np.arange(n, dtype=a.indices.dtype), np.diff(a.indptr))


def is_sparse_symmetric(a: sp.csr_array) -> bool:
    """True iff the canonical CSR pattern ``a`` equals its transpose (O(edges), as
    :func:`require_sparse_symmetric` compares them)."""
    t = sp.csr_array(a.T)
    t.sum_duplicates()
    return bool(np.array_equal(a.indptr, t.indptr) and np.array_equal(a.indices, t.indices))


def transpose_positions(a: sp.csr_array) -> np.ndarray:
    """For a canonical CSR array ``a`` with a symmetric pattern, the storage position of the
    mirror entry ``(j, i)`` of every stored entry ``(i, j)`` (int64 ``[nnz]``, O(edges)).

    The positions ride through one CSR transpose as data (shifted by one so that no position
    is a zero); with a symmetric pattern the transpose stores its entries in ``a``'s order.
    """
    n = a.shape[0]
    pos = sp.csr_array((np.arange(1, a.nnz + 1, dtype=np.int64), a.indices, a.indptr),
                       shape=(n, n))
    t = sp.csr_array(pos.T)
    t.sort_indices()
    return t.data - 1


def require_sparse_symmetric(a: sp.csr_array, *, name: str = "adj", what: str) -> None:
    """Raise ValueError unless the canonical CSR pattern ``a`` equals its transpose.

    O(edges): the transpose is converted back to canonical CSR and its index arrays compared.

    Args:
        a: canonical CSR array (sorted indices, no repeats, no stored zeros).
        name: how the argument is called in the error message.
        what: what needs the symmetry, for the message (e.g. ``"metropolis weights"``).
    """
    t = sp.csr_array(a.T)
    t.sum_duplicates()
    if np.array_equal(a.indptr, t.indptr) and np.array_equal(a.indices, t.indices):
        return
    diff = (a.astype(bool) != t.astype(bool)).tocoo()
    i, j = int(diff.row[0]), int(diff.col[0])
    has = bool(a[i, j])
    raise ValueError(
        f"{what} need an undirected (symmetric) adjacency, but {name}[{i}, {j}] = {has} while "
        f"{name}[{j}, {i}] = {not has}. Use row_stochastic or column_stochastic for directed "
        f"graphs, or symmetrise with `{name} + {name}.T` (a boolean sum is the logical or).")
