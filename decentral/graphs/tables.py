"""The receiver-indexed in-neighbour table, and the mixing primitives every family uses.

One table serves every algorithm family. For one step of a graph sequence:

* ``idx [N, K]`` — in-neighbour indices of each receiver, **the agent itself in column 0**,
  padded by repeating the agent's own index;
* ``weight [N, K]`` — the mixing weight ``W[i, idx[i, k]]`` (0 on padding);
* ``mask [N, K]`` — True on real in-neighbours (column 0 always True), False on padding.

Row-stochastic mixing is ``sum_k weight * X[idx]``; push-sum's column-stochastic weights are the
same table with ``weight = 1 / outdeg[idx]``; max-consensus is a masked max over ``X[idx]``;
W-MSR trimming works on the gathered ``[N, K, ...]`` values with the own value at ``k = 0``; a
Byzantine sender's per-receiver message replaces its entries in the gathered tensor
(:func:`replace_sender_messages`). A dense ``W [N, N]`` is the same object with ``K = N`` and is
faster for small N (one matmul): :func:`mix` accepts either.

Example:
    >>> import jax.numpy as jnp
    >>> from decentral.graphs import ring, row_stochastic, dense_to_table, mix
    >>> W = row_stochastic(ring(4)); table = dense_to_table(W)
    >>> bool(jnp.allclose(mix(W, jnp.arange(4.0)), mix(table, jnp.arange(4.0))))
    True
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from ._validate import as_adjacency, as_pattern, as_weights
from .sparse import as_sparse_adjacency, as_sparse_weights, csr_rows

__all__ = [
    "NeighborTable",
    "as_table",
    "dense_to_table",
    "adjacency_to_table",
    "table_to_dense",
    "mix",
    "gather",
    "masked_max",
    "replace_sender_messages",
    "table_rule_weights",
    "take_rows",
]


class NeighborTable(NamedTuple):
    """Receiver-indexed in-neighbour table of one graph (see module docstring).

    Attributes:
        idx: ``[N, K]`` int32 in-neighbour indices, own index in column 0, padding repeats it.
        weight: ``[N, K]`` float mixing weights ``W[i, idx[i, k]]``, 0 on padding.
        mask: ``[N, K]`` bool, True on real in-neighbours (incl. self at k = 0).
    """

    idx: jax.Array
    weight: jax.Array
    mask: jax.Array


def _table_layout(pattern: np.ndarray, width: int | None) -> tuple[np.ndarray, np.ndarray]:
    """idx and mask arrays for a dense boolean pattern with True diagonal (host): the layout of
    :func:`_csr_table_layout` on the pattern's CSR form, so dense and sparse graphs share one
    layout rule."""
    idx, mask, _ = _csr_table_layout(sp.csr_array(np.asarray(pattern, dtype=bool)), width)
    return idx, mask


def _csr_table_layout(a: sp.csr_array, width: int | None, *, values: bool = False
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """idx, mask (and, with ``values``, the weights) of a canonical CSR graph (host, O(edges)).

    The table layout, without any ``[n, n]`` array: ``a`` is a canonical CSR
    adjacency or weight matrix (sorted indices, no repeats, no stored zeros, every diagonal
    entry stored), row i listing agent i's in-neighbours. Column 0 is the agent itself, then
    its in-neighbours in increasing index order, then padding that repeats the own index
    (mask False, weight 0). ``values=True`` also returns ``weight [n, K]`` in ``a``'s dtype:
    the stored ``W[i, idx[i, k]]`` on the mask, 0 on padding.
    """
    n = a.shape[0]
    counts = np.diff(a.indptr) - 1               # off-diagonal in-degree (the diagonal is stored)
    k_needed = int(counts.max(initial=0)) + 1
    if width is None:
        width = k_needed
    if width < k_needed:
        raise ValueError(f"table width K={width} is smaller than the largest in-degree incl. "
                         f"self ({k_needed}); use K >= {k_needed} or K=None.")
    indices = a.indices
    rows = csr_rows(a)
    off = indices != rows
    if np.all(counts == width - 1):              # every row full (regular graphs): no padding
        idx = np.empty((n, width), dtype=np.int32)
        idx[:, 0] = np.arange(n)
        idx[:, 1:] = indices[off].reshape(n, width - 1)
        weight = None
        if values:
            weight = np.empty((n, width), dtype=a.dtype)
            weight[:, 0] = a.data[~off]
            weight[:, 1:] = a.data[off].reshape(n, width - 1)
        return idx, np.ones((n, width), dtype=bool), weight
    # position of an off-diagonal entry among its row's off-diagonal entries: its offset in
    # the row, less one when it comes after the (stored, sorted-in) diagonal entry
    starts = a.indptr[:-1].astype(np.int64)
    col = (np.arange(indices.size, dtype=np.int64) - starts[rows] + 1) - (indices > rows)
    flat = rows[off].astype(np.int64) * width + col[off]
    del col
    idx = np.repeat(np.arange(n, dtype=np.int32)[:, None], width, axis=1)
    idx.reshape(-1)[flat] = indices[off]
    mask = np.zeros((n, width), dtype=bool)
    mask[:, 0] = True
    mask.reshape(-1)[flat] = True
    weight = None
    if values:
        weight = np.zeros((n, width), dtype=a.dtype)
        weight[:, 0] = a.data[~off]              # one diagonal entry per row, in row order
        weight.reshape(-1)[flat] = a.data[off]
    return idx, mask, weight


def dense_to_table(W, *, width: int | None = None) -> NeighborTable:
    """Table of a weight matrix (host). ``K`` defaults to the max in-degree incl. self.

    Entries with ``W[i, j] > 0`` (agent i receives from agent j) become table entries; the
    weight at ``k = 0`` is ``W[i, i]`` (positive: a weight matrix needs its self-loops, as
    every graph argument).

    ``W`` may be a dense array or a scipy sparse weight matrix (any format; read as CSR, row i
    holding agent i's in-weights): a sparse one is laid out in O(edges) without an ``[n, n]``
    array, into the very table the dense matrix gives.

    Example:
        >>> dense_to_table(np.array([[0.5, 0.5], [0.0, 1.0]])).mask.tolist()
        [[True, True], [True, False]]
        >>> import scipy.sparse as sp
        >>> dense_to_table(sp.csr_array(np.array([[0.5, 0.5], [0.0, 1.0]]))).idx.tolist()
        [[0, 1], [1, 1]]
    """
    if sp.issparse(W):
        idx, mask, weight = _csr_table_layout(as_sparse_weights(W, name="W"), width,
                                              values=True)
        return NeighborTable(jnp.asarray(idx), jnp.asarray(weight), jnp.asarray(mask))
    pattern = as_pattern(W, name="W")
    w = as_weights(W)
    n = w.shape[0]
    idx, mask = _table_layout(pattern, width)
    weight = np.where(mask, w[np.arange(n)[:, None], idx], 0.0)
    return NeighborTable(jnp.asarray(idx), jnp.asarray(weight), jnp.asarray(mask))


def adjacency_to_table(adj, *, width: int | None = None) -> NeighborTable:
    """Table of a boolean adjacency with self-loops; weights are the mask as floats (0/1).

    ``adj[i, j]`` True iff agent i receives from agent j. ``adj`` may be a dense array or a
    scipy sparse boolean adjacency (any format; row i lists agent i's in-neighbours): a
    sparse one is laid out in O(edges) into the table the dense adjacency gives.

    Example:
        >>> from decentral.graphs import ring
        >>> adjacency_to_table(ring(4, sparse=True)).idx.tolist()
        [[0, 3], [1, 0], [2, 1], [3, 2]]
    """
    if sp.issparse(adj):
        idx, mask, _ = _csr_table_layout(as_sparse_adjacency(adj, name="adj"), width)
        return NeighborTable(jnp.asarray(idx), jnp.asarray(mask.astype(np.float64)),
                             jnp.asarray(mask))
    a = as_adjacency(adj)
    idx, mask = _table_layout(a, width)
    return NeighborTable(jnp.asarray(idx), jnp.asarray(mask.astype(np.float64)),
                         jnp.asarray(mask))


def table_to_dense(table: NeighborTable) -> jax.Array:
    """Dense ``W [N, N]`` of a table (jit-able): ``W[i, idx[i, k]] += weight[i, k]`` on mask."""
    n = table.idx.shape[0]
    rows = jnp.broadcast_to(jnp.arange(n)[:, None], table.idx.shape)
    w = jnp.where(table.mask, table.weight, 0.0)
    return jnp.zeros((n, n), dtype=w.dtype).at[rows, table.idx].add(w)


_UNROLL_MAX_K = 64   # tables up to this width unroll the neighbour loop into one fused sum
_UNROLL_BLOCK = 16   # wider tables: a fori_loop over blocks of this many columns, each unrolled


def _check_mix_shapes(n_graph: int, X) -> None:
    if X.ndim == 0 or X.shape[0] != n_graph:
        raise ValueError(f"mix: X must have a leading agent axis of length {n_graph} (the "
                         f"graph's N); got X of shape {tuple(X.shape)}.")


def mix(graph: jax.Array | NeighborTable, X: jax.Array, *,
        exact_nonfinite: bool = True) -> jax.Array:
    """Weighted mixing ``Y[i] = sum_{j in N_i} W[i, j] X[j]`` with a dense W or a
    :class:`NeighborTable`, the sum running over the in-neighbours of i (``W[i, j] > 0``,
    self included) only.

    For finite X this is ``W @ X``. Non-finite values travel along edges only: a NaN or ±inf
    at agent j reaches exactly the agents that hear j, with IEEE sum semantics (``inf`` stays
    ``inf``, ``inf − inf`` and NaN give NaN); an absent edge never turns ``0 · NaN`` into NaN.
    Both representations agree on this. The dense path does it in one matmul over
    ``[X with non-finite entries zeroed, +inf/NaN indicator, −inf/NaN indicator]``; the table
    path sums ``K`` weighted gathers ``w[:, k] X[idx[:, k]]`` (linear in the edges, no
    ``[N, K, ...]`` intermediate), skipping padding.

    The edge-exact handling of non-finite values costs the dense path a matmul three times as
    wide plus element-wise work (about twice the time of a plain ``W @ X``). Algorithms' hot
    loops pass ``exact_nonfinite=False``: the dense path is then one plain matmul, where a
    non-finite value may also reach agents that do not hear it (``0 * NaN``), while every agent
    that hears one still gets a non-finite value — so a run diverges at the same update on
    both backends, and the runner reports it there. The table path is the same either way.

    Args:
        graph: dense ``W [N, N]`` or a ``NeighborTable``.
        X: ``[N, ...]`` per-agent values (leading agent axis).
        exact_nonfinite: keep non-finite values on the edges (default); False for the fast
            plain matmul described above.

    Returns:
        ``[N, ...]`` mixed values.

    Raises:
        ValueError: X's leading axis is not N (checked on static shapes, also under jit).

    Example:
        >>> mix(jnp.eye(2), jnp.ones((2, 3))).shape
        (2, 3)
        >>> W = jnp.array([[1.0, 0.0], [0.5, 0.5]])          # agent 0 hears only itself
        >>> mix(W, jnp.array([1.0, jnp.nan])).tolist()      # agent 1's NaN stays with 1
        [1.0, nan]
    """
    X = jnp.asarray(X)
    if isinstance(graph, NeighborTable):
        _check_mix_shapes(graph.idx.shape[0], X)
        return _table_mix(graph, X)
    W = jnp.asarray(graph)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"mix: a dense graph must be a square [N, N] matrix; got shape "
                         f"{tuple(W.shape)}.")
    _check_mix_shapes(W.shape[1], X)
    if not exact_nonfinite:
        return jnp.tensordot(W, X, axes=1)
    return _dense_mix(W, X)


def _dense_mix(W, X):
    if not jnp.issubdtype(X.dtype, jnp.inexact):
        return jnp.tensordot(W, X, axes=1)
    finite = jnp.isfinite(X)
    nan = jnp.isnan(X)
    one = jnp.ones((), W.dtype)
    zero = jnp.zeros((), W.dtype)
    parts = jnp.stack([jnp.where(finite, X, 0).astype(jnp.result_type(W, X)),
                       jnp.where(nan | (X == jnp.inf), one, zero),
                       jnp.where(nan | (X == -jnp.inf), one, zero)], axis=-1)
    out = jnp.tensordot(W, parts, axes=1)              # one matmul of width 3 · X.size / N
    y, pos, neg = out[..., 0], out[..., 1] > 0, out[..., 2] > 0
    # W >= 0: an indicator sum is > 0 iff some in-neighbour (W[i, j] > 0) carries it
    return jnp.where(pos & neg, jnp.nan, jnp.where(pos, jnp.inf, jnp.where(neg, -jnp.inf, y)))


def take_rows(X: jax.Array, idx: jax.Array) -> jax.Array:
    """``X[idx]`` along the agent axis for indices in ``[0, N)`` (a table's own), as one
    gather without the wrap-around of negative indices that ``X[idx]`` adds: that index
    arithmetic is table-sized work XLA would otherwise hoist out of a time loop as a copy.

    Example:
        >>> take_rows(jnp.arange(6.0).reshape(3, 2), jnp.array([2, 0])).tolist()
        [[4.0, 5.0], [0.0, 1.0]]
    """
    X = jnp.asarray(X)
    idx = jnp.asarray(idx)
    dims = jax.lax.GatherDimensionNumbers(
        offset_dims=tuple(range(idx.ndim, idx.ndim + X.ndim - 1)),
        collapsed_slice_dims=(0,), start_index_map=(0,))
    return jax.lax.gather(X, idx[..., None], dims, slice_sizes=(1,) + X.shape[1:],
                          mode=jax.lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _table_mix(table: NeighborTable, X):
    # The barrier ties the table to X, so what is derived from the table (which entries are
    # live, the column slices) is computed where it is used, inside the time loop, fused into
    # the weighted sum. Without it XLA hoists those table-sized derived arrays out of the
    # loop and keeps them for the whole run: a second copy of the table on every device.
    (idx, weight, mask), X = jax.lax.optimization_barrier(
        ((table.idx, table.weight, table.mask), X))
    tail = (1,) * (X.ndim - 1)
    dtype = jnp.result_type(weight, X)

    def term(k):
        mk = jax.lax.dynamic_index_in_dim(mask, k, axis=1, keepdims=False)
        wk = jax.lax.dynamic_index_in_dim(weight, k, axis=1, keepdims=False)
        xk = take_rows(X, jax.lax.dynamic_index_in_dim(idx, k, axis=1, keepdims=False))
        live = (mk & (wk != 0)).reshape(mk.shape + tail)
        return jnp.where(live, wk.reshape(wk.shape + tail) * xk, 0).astype(dtype)

    # The terms are added in the order k = 0, 1, ..., K - 1 whatever the width. Up to
    # _UNROLL_MAX_K they form one fused elementwise sum (the accumulator never leaves the
    # registers); a loop with one column per iteration would read and write the whole
    # accumulator K times, several times slower on large N. Wider tables loop over blocks.
    k_width = table.idx.shape[1]
    acc = term(0)
    if k_width <= _UNROLL_MAX_K:
        for k in range(1, k_width):
            acc = acc + term(k)
        return acc

    def block(b, acc):
        for j in range(_UNROLL_BLOCK):
            acc = acc + term(1 + b * _UNROLL_BLOCK + j)
        return acc

    blocks = (k_width - 1) // _UNROLL_BLOCK
    acc = jax.lax.fori_loop(0, blocks, block, acc)
    for k in range(1 + blocks * _UNROLL_BLOCK, k_width):
        acc = acc + term(k)
    return acc


def as_table(graph: jax.Array | NeighborTable) -> NeighborTable:
    """The table view of a graph (jit-able): a ``NeighborTable`` is returned as is; a dense
    ``W [N, N]`` becomes the ``K = N`` table with ``idx[i, k] = (i + k) mod N`` (own index at
    ``k = 0``), ``weight = W[i, idx]`` and ``mask = weight > 0`` (always True at ``k = 0``)."""
    if isinstance(graph, NeighborTable):
        return graph
    W = jnp.asarray(graph)
    n = W.shape[0]
    idx = (jnp.arange(n)[:, None] + jnp.arange(n)[None, :]) % n
    weight = W[jnp.arange(n)[:, None], idx]
    mask = (weight > 0).at[:, 0].set(True)
    return NeighborTable(idx.astype(jnp.int32), weight, mask)


def gather(graph: jax.Array | NeighborTable, X: jax.Array) -> jax.Array:
    """In-neighbour values ``[N, K, ...]`` (``X[idx]``), own value at ``k = 0``.

    ``graph`` is a ``NeighborTable`` or a dense ``W`` (see :func:`as_table` for its layout).
    Padding entries repeat the own value; combine with the table's ``mask`` where it matters.
    """
    return take_rows(X, as_table(graph).idx)


def masked_max(graph: jax.Array | NeighborTable, X: jax.Array) -> jax.Array:
    """Max over in-neighbours incl. self: ``Y[i] = max_{j ∈ N_i} X[j]`` (max-consensus).

    ``graph`` is a ``NeighborTable`` or a dense ``W`` (in-neighbours are ``W[i, j] > 0``).
    """
    table = as_table(graph)
    g = gather(table, X)
    m = table.mask.reshape(table.mask.shape + (1,) * (g.ndim - 2))
    return jnp.max(jnp.where(m, g, g[:, :1]), axis=1)


def replace_sender_messages(table: jax.Array | NeighborTable, gathered: jax.Array,
                            sender: int | jax.Array, messages: jax.Array) -> jax.Array:
    """Overwrite what agent ``sender`` sends: entries ``k > 0`` with ``idx[i, k] == sender``
    (and mask True) become ``messages[i]`` — a Byzantine sender's per-receiver message.

    The sender's own entry at ``k = 0`` (its own value) is untouched.

    Args:
        table: the step's table (or dense W, viewed by :func:`as_table`).
        gathered: ``[N, K, ...]`` from :func:`gather` on the same graph.
        sender: int (may be traced), the index of the Byzantine agent.
        messages: ``[N, ...]`` message that receiver i gets from ``sender``.
    """
    table = as_table(table)
    hit = (table.idx == sender) & table.mask
    hit = hit.at[:, 0].set(False)
    hit = hit.reshape(hit.shape + (1,) * (gathered.ndim - 2))
    return jnp.where(hit, messages[:, None], gathered)


def table_rule_weights(table: NeighborTable, rule: str) -> jax.Array:
    """Recompute a table's weights from its mask with a weight rule (jit-able).

    ``"row"``: ``mask / |N_i|``; ``"column"``: ``mask / outdeg[idx]`` (sender's out-degree incl.
    self, counted over the table); ``"metropolis"``: ``1 / max(|N_i|, |N_j|)`` off the diagonal,
    the remainder on ``k = 0`` (needs a symmetric pattern).
    """
    m = table.mask.astype(jnp.result_type(float))
    n = table.idx.shape[0]
    if rule == "row":
        return m / m.sum(axis=1, keepdims=True)
    if rule == "column":
        outdeg = jnp.zeros((n,), m.dtype).at[table.idx].add(m)
        return m / outdeg[table.idx]
    if rule == "metropolis":
        deg = m.sum(axis=1)
        off = m.at[:, 0].set(0.0) / jnp.maximum(deg[:, None], deg[table.idx])
        return off.at[:, 0].set(1.0 - off.sum(axis=1))
    raise ValueError(f"unknown weight rule {rule!r}; use 'row', 'column' or 'metropolis'.")
