"""The constructors of graph sequences, one per form: :func:`static`, :func:`periodic`,
:func:`explicit`, :func:`random_edge_drops`, :func:`one_peer_exponential`, and
:func:`as_sequence`, the front door that turns any graph argument into a
:class:`~decentral.graphs.GraphSequence` (dense or scipy sparse inputs; the forms and
backends are described in :mod:`decentral.graphs.sequences`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from decentral._checks import check_int

from ._validate import as_adjacency, as_weights, require_self_weights
from .builders import DENSE_LIMIT
from .sequences import _TABLE_LEAVES, GraphSequence, _as_key, _check_backend, _check_rule
from .sparse import (
    as_sparse_adjacency,
    as_sparse_weights,
    csr_rows,
    is_sparse_symmetric,
    require_sparse_symmetric,
    transpose_positions,
)
from .tables import (
    _csr_table_layout,
    _table_layout,
)
from .weights import (
    WEIGHT_RULES,
    effective_tolerance,
    metropolis,
    sparse_rule,
    stochasticity_violations,
)

__all__ = ["static", "periodic", "explicit", "random_edge_drops", "one_peer_exponential",
           "as_sequence"]


def _resolve_backend(backend: str | None, items: list, name: str) -> str:
    """The backend of a sequence built from ``items``: ``backend`` when given, else
    ``"sparse"`` when some item is a scipy sparse graph and ``"dense"`` otherwise. A dense
    backend above :data:`~decentral.graphs.DENSE_LIMIT` agents for a sparse input is refused
    (it would allocate ``[n, n]`` per graph)."""
    sparse_input = any(sp.issparse(g) for g in items)
    if backend is None:
        return "sparse" if sparse_input else "dense"
    _check_backend(backend)
    if backend == "dense" and sparse_input:
        n = next(g for g in items if sp.issparse(g)).shape[0]
        if n > DENSE_LIMIT:
            raise ValueError(
                f"backend='dense' would turn the scipy sparse {name} ({n} agents) into dense "
                f"[n, n] weights of {8 * n * n:,} bytes; dense graphs are limited to n <= "
                f"DENSE_LIMIT = {DENSE_LIMIT}. Use backend='sparse' (the default for a sparse "
                "graph): the sequence then holds only its neighbour tables.")
    return backend


def _as_dense_input(g):
    """A scipy sparse graph as the dense array it stands for (the dense backend, n <=
    DENSE_LIMIT: checked by :func:`_resolve_backend`); anything else as it is."""
    return g.toarray() if sp.issparse(g) else g


def _require_row_or_column_stochastic(w, name: str, *, zero_one: bool) -> None:
    """Refuse weights ``w`` (dense or CSR) that are neither row- nor column-stochastic, saying
    whether they look like an adjacency (``zero_one``: every stored weight is 0 or 1)."""
    rows = stochasticity_violations(w, axis=1)
    cols = stochasticity_violations(w, axis=0)
    if rows and cols:
        k, s = rows[0]
        if zero_one:
            raise ValueError(
                f"{name} holds only 0s and 1s: it is an adjacency, not weights (row {k} sums "
                f"to its in-degree {s:g}). Pass it as a boolean adjacency with a weight rule, "
                f"e.g. static({name}.astype(bool), rule='row').")
        c, cs = cols[0]
        raise ValueError(
            f"{name} is neither row- nor column-stochastic (row {k} sums to {s!r}, column {c} "
            f"to {cs!r}, tolerance {effective_tolerance(w):.1e}). Weights given as a matrix must "
            f"be stochastic; normalise them, or pass the boolean pattern `({name} > 0)` with "
            "rule='row', 'column' or 'metropolis'.")


def _weights_from(graph, rule: str | None, name: str) -> np.ndarray:
    """Weight matrix from a boolean adjacency + rule, or a given weight matrix (no rule).

    A given weight matrix must be row- or column-stochastic (which of the two a family needs
    is that family's check) with a positive diagonal; a 0/1 array is an adjacency and is
    refused with the conversion to use.
    """
    g = np.asarray(graph)
    if g.dtype == np.bool_:
        if rule is None:
            raise ValueError(f"{name} is a boolean adjacency: pass rule='row', 'column' or "
                             "'metropolis' to turn it into weights (or pass weight matrices).")
        a = as_adjacency(g, name=name)
        if rule == "metropolis":
            return metropolis(a)
        return WEIGHT_RULES[_check_rule(rule)](a)
    if rule is not None:
        kind = "an integer array" if np.issubdtype(g.dtype, np.integer) else \
            f"already a weight matrix (dtype {g.dtype})"
        raise ValueError(f"{name} is {kind}, but rule={rule!r} turns a boolean adjacency into "
                         f"weights. If {name} is a 0/1 adjacency pass `{name}.astype(bool)` "
                         f"with rule={rule!r}; if it holds weights, drop `rule`.")
    w = require_self_weights(as_weights(g, name=name), name)
    _require_row_or_column_stochastic(w, name, zero_one=bool(np.all((w == 0) | (w == 1))))
    return w


def _sparse_weights_from(graph, rule: str | None, name: str) -> sp.csr_array:
    """:func:`_weights_from` for a scipy sparse graph, in O(n + edges): a canonical float CSR
    weight matrix (same orientation, self-loops kept) from a boolean adjacency + rule, or a
    given sparse weight matrix (no rule) after the same checks as a dense one."""
    if graph.dtype == np.bool_:
        if rule is None:
            raise ValueError(f"{name} is a boolean adjacency: pass rule='row', 'column' or "
                             "'metropolis' to turn it into weights (or pass weight matrices).")
        a = as_sparse_adjacency(graph, name=name)
        if _check_rule(rule) == "metropolis":
            require_sparse_symmetric(a, name=name, what="metropolis weights")
        return sparse_rule(a, rule)
    if rule is not None:
        kind = "an integer array" if np.issubdtype(graph.dtype, np.integer) else \
            f"already a weight matrix (dtype {graph.dtype})"
        raise ValueError(f"{name} is {kind}, but rule={rule!r} turns a boolean adjacency into "
                         f"weights. If {name} is a 0/1 adjacency pass `{name}.astype(bool)` "
                         f"with rule={rule!r}; if it holds weights, drop `rule`.")
    w = as_sparse_weights(graph, name=name)
    _require_row_or_column_stochastic(w, name, zero_one=bool(np.all(w.data == 1)))
    return w


def _graph_items(graphs) -> list:
    """The graphs of a stack ``[P, N, N]`` or a list / tuple of ``[N, N]`` graphs (dense or
    scipy sparse), refusing anything else."""
    if isinstance(graphs, np.ndarray) and graphs.ndim == 3 or (
            isinstance(graphs, Sequence) and not isinstance(graphs, np.ndarray)):
        items = list(graphs)
    else:
        what = f"a scipy sparse graph of shape {graphs.shape} (wrap it in a list)" \
            if sp.issparse(graphs) else \
            f"{type(graphs).__name__} with shape {np.shape(graphs)}"
        raise ValueError(f"graphs: expected a stack [P, N, N] or a list of [N, N] graphs; got "
                         f"{what}.")
    if not items:
        raise ValueError("the graph stack is empty; give at least one graph.")
    return items


def _sparse_weight_list(items: list, rule: str | None) -> list[sp.csr_array]:
    """Canonical CSR weight matrices of ``items`` (sparse ones in O(edges); a dense item is
    checked as a dense graph, then stored as CSR), all of one shape and one dtype."""
    ws = []
    for k, g in enumerate(items):
        name = f"graph {k}" if len(items) > 1 else "graph"
        if sp.issparse(g):
            ws.append(_sparse_weights_from(g, rule, name))
        else:
            ws.append(as_sparse_weights(sp.csr_array(_weights_from(g, rule, name)), name=name))
    shapes = {w.shape for w in ws}
    if len(shapes) != 1:
        raise ValueError(f"all graphs of a sequence need the same shape; got {sorted(shapes)}.")
    dtype = np.result_type(*(w.dtype for w in ws))
    return [w.astype(dtype, copy=False) for w in ws]


def _stack_weights(graphs, rule: str | None) -> np.ndarray:
    items = [_as_dense_input(g) for g in _graph_items(graphs)]
    ws = [_weights_from(g, rule, f"graph {k}") for k, g in enumerate(items)]
    shapes = {w.shape for w in ws}
    if len(shapes) != 1:
        raise ValueError(f"all graphs of a sequence need the same shape; got {sorted(shapes)}.")
    return np.stack(ws)


def _fixed(form: str, w: np.ndarray, rule: str | None, backend: str) -> GraphSequence:
    """A static / periodic / explicit / one-peer sequence over the weight stack ``w``."""
    _check_backend(backend)
    n = w.shape[1]
    period = w.shape[0] if form != "explicit" else None
    length = w.shape[0] if form == "explicit" else None
    if backend == "dense":
        leaves = {"weights": w}
    else:
        eye = np.eye(n, dtype=bool)
        pattern = np.any(w > 0, axis=0) | eye
        k = int((pattern & ~eye).sum(axis=1).max(initial=0)) + 1
        parts = []
        for wt in w:
            idx, mask = _table_layout((wt > 0) | eye, k)
            weight = np.where(mask, wt[np.arange(n)[:, None], idx], 0.0).astype(w.dtype)
            parts.append((idx, weight, mask))
        leaves = dict(zip(_TABLE_LEAVES, (np.stack(p) for p in zip(*parts, strict=True)),
                          strict=True))
    return GraphSequence(form=form, n=n, backend=backend, rule=rule, leaves=leaves,
                         period=period, length=length)


def _fixed_sparse(form: str, ws: list[sp.csr_array], rule: str | None, *,
                  width: int | None = None) -> GraphSequence:
    """:func:`_fixed` on the sparse backend from CSR weight matrices, in O(P (n + edges)):
    the same tables (width: the largest in-degree of the union of the P patterns, incl. self)
    as the dense stack of the same weights gives, without an ``[n, n]`` array. A given
    ``width`` (at least every step's largest in-degree) replaces the union's."""
    n = ws[0].shape[0]
    if width is None:
        union = ws[0].astype(bool)
        for w in ws[1:]:
            union = union + w.astype(bool)           # a boolean sum is the logical or
        union.sum_duplicates()
        width = int(np.diff(union.indptr).max(initial=1))   # every row stores its diagonal
    k = width
    parts = [_csr_table_layout(w, k, values=True) for w in ws]
    leaves = {"idx": np.stack([p[0] for p in parts]),
              "weight": np.stack([p[2] for p in parts]),
              "mask": np.stack([p[1] for p in parts])}
    return GraphSequence(form=form, n=n, backend="sparse", rule=rule, leaves=leaves,
                         period=len(ws) if form != "explicit" else None,
                         length=len(ws) if form == "explicit" else None)


def _fixed_from(form: str, items: list, rule: str | None, backend: str | None
                ) -> GraphSequence:
    """A fixed-form sequence from a list of graphs (dense or scipy sparse; see
    :func:`_resolve_backend` for the backend). Sparse inputs on the sparse backend never
    take an ``[n, n]`` array; everything else goes the dense way (sparse inputs densified,
    n <= DENSE_LIMIT), with the numbers of the dense inputs."""
    backend = _resolve_backend(backend, items, "graph" if form == "static" else "graphs")
    if backend == "sparse" and any(sp.issparse(g) for g in items):
        return _fixed_sparse(form, _sparse_weight_list(items, rule), rule)
    if form == "static":
        w = _weights_from(_as_dense_input(items[0]), rule, "graph")[None]
    else:
        w = _stack_weights(items, rule)
    return _fixed(form, w, rule, backend)


def static(graph, *, rule: str | None = None, backend: str | None = None) -> GraphSequence:
    """The same graph at every step.

    Args:
        graph: a row- or column-stochastic weight matrix ``W [N, N]``, or a boolean adjacency
            together with ``rule`` (``W[i, j] > 0`` / ``adj[i, j]``: agent i receives from
            agent j); a dense array or a scipy sparse array (any format).
        rule: ``"row"``, ``"column"`` or ``"metropolis"`` when ``graph`` is an adjacency.
        backend: ``"dense"`` or ``"sparse"``; None (default): ``"sparse"`` when ``graph`` is a
            scipy sparse array, else ``"dense"``. On the sparse backend a sparse ``graph`` is
            read in O(n + edges) and the sequence holds only its neighbour table; a dense
            backend for a sparse ``graph`` densifies it and is refused above
            :data:`~decentral.graphs.DENSE_LIMIT` agents.

    Raises:
        ValueError: ``graph`` is a weight matrix that is neither row- nor column-stochastic
            (a 0/1 array is an adjacency: pass ``adj.astype(bool)`` with a rule), or a
            non-boolean array comes with a rule; ``backend="dense"`` for a sparse graph above
            the dense limit.

    Example:
        >>> from decentral.graphs import exponential, ring
        >>> seq = static(ring(5), rule="row")
        >>> seq.at(7).shape
        (5, 5)
        >>> big = static(exponential(10**5, sparse=True), rule="row")    # no [n, n] array
        >>> big.backend, big.at(0).idx.shape
        ('sparse', (100000, 18))
    """
    return _fixed_from("static", [graph], rule, backend)


def periodic(graphs, *, rule: str | None = None, backend: str | None = None) -> GraphSequence:
    """``W_t = graphs[t % P]`` over a stack (or list) of P weight matrices / adjacencies.

    Args:
        graphs: a stack ``[P, N, N]`` or a list of P graphs, each as :func:`static` takes it
            (dense or scipy sparse; a list may mix both).
        rule: the weight rule of adjacencies.
        backend: as in :func:`static` (None: ``"sparse"`` when some graph is scipy sparse).

    Example:
        >>> from decentral.graphs import complete, ring
        >>> seq = periodic([ring(3), complete(3)], rule="row")
        >>> seq.period, float(seq.at(5)[0, 1])        # step 5 is graph 1: K_3
        (2, 0.3333333432674408)
    """
    return _fixed_from("periodic", _graph_items(graphs), rule, backend)


def explicit(graphs, *, rule: str | None = None, backend: str | None = None) -> GraphSequence:
    """``W_t = graphs[t]`` for t < T over a stack built offline; longer runs are refused.

    Args:
        graphs: a stack ``[T, N, N]`` or a list of T graphs, dense or scipy sparse (as
            :func:`periodic`).
        rule: the weight rule of adjacencies.
        backend: as in :func:`static` (None: ``"sparse"`` when some graph is scipy sparse).

    Example:
        >>> from decentral.graphs import complete, ring
        >>> seq = explicit([ring(3), complete(3)], rule="row")
        >>> seq.length
        2
    """
    return _fixed_from("explicit", _graph_items(graphs), rule, backend)


def _sparse_drop_leaves(a: sp.csr_array, symmetric_drops: bool) -> tuple[dict, int]:
    """The index leaves of a random sequence over a canonical CSR base ``a`` and its edge
    count, in O(n + edges): exactly the arrays :func:`random_edge_drops` derives from the dense
    base of the same graph (entries in row-major order, edges numbered in increasing
    ``(lo, hi)`` / ``(receiver, sender)`` order, the same table layout)."""
    rows = csr_rows(a)
    off = a.indices != rows
    recv, send = rows[off], a.indices[off]
    if symmetric_drops:
        # an undirected edge {lo, hi} is numbered by the rank of its stored entry (lo, hi)
        # among the entries above the diagonal (CSR order is increasing (lo, hi) there); an
        # entry below the diagonal takes the number of its mirror entry
        upper = a.indices > rows
        rank = np.cumsum(upper, dtype=np.int64) - 1
        edge = np.where(upper, rank, rank[transpose_positions(a)])
        edge_of_entry = edge[off]
        num_edges = int(upper.sum())
    else:                                  # the entries are the edges, already in key order
        num_edges = int(recv.size)
        edge_of_entry = np.arange(num_edges, dtype=np.int64)
    idx, mask, _ = _csr_table_layout(a, None)
    real = mask.copy()
    real[:, 0] = False                     # k = 0 (self) and padding: no edge
    edge_table = np.full(mask.shape, num_edges, dtype=np.int32)
    edge_table[real] = edge_of_entry       # row-major: row i's in-neighbours in index order
    leaves = {"recv": recv.astype(np.int32), "send": send.astype(np.int32),
              "edge_of_entry": edge_of_entry.astype(np.int32), "base_idx": idx,
              "base_mask": mask, "edge_table": edge_table}
    return leaves, num_edges


def random_edge_drops(base, drop_prob: float, *, rule: str = "row", key=None,
                      shared_across_seeds: bool = True, symmetric_drops: bool | None = None,
                      backend: str = "dense") -> GraphSequence:
    """Random sequence: every non-self edge of ``base`` is dropped with probability
    ``drop_prob`` independently at each step (from ``fold_in(key, t)``), then re-weighted.

    Args:
        base: boolean base adjacency with self-loops (symmetric bases drop symmetrically),
            ``base[i, j]`` True iff agent i receives from agent j; dense, or a scipy sparse
            array (any format). A sparse base is read from its CSR arrays in O(n + edges) and
            gives the same sequence (leaves, draws, digest) as its dense copy; above
            :data:`~decentral.graphs.DENSE_LIMIT` agents it needs ``backend="sparse"`` and the
            sequence then holds no dense base (its ``base`` leaf is None).
        drop_prob: per-step drop probability in [0, 1).
        rule: weight rule applied to each step's graph (``"metropolis"`` needs a symmetric base).
        key: the sequence's own PRNG key (or an int seed), used when ``shared_across_seeds``.
        shared_across_seeds: True — every seed sees the same graphs (``at(t)``); False — the
            caller passes each seed's key (``at(t, key)``).
        symmetric_drops: drop both directions of an undirected edge together (one draw per
            edge). Default: True iff ``base`` is symmetric; False on a symmetric base drops
            the two directions independently; True needs a symmetric base.
        backend: ``"dense"`` or ``"sparse"``.

    The draws are float32 uniforms whatever the global precision, so one key gives the same
    graphs with and without ``jax_enable_x64``: one uniform per base edge and step, edges
    numbered in increasing (receiver, sender) order (``(min, max)`` for symmetric drops).

    Example:
        >>> from decentral.graphs import complete, exponential
        >>> seq = random_edge_drops(complete(4), 0.5, key=0)
        >>> seq.num_edges                     # undirected K_4: 6 edges, one draw each
        6
        >>> bool((seq.weights_host(3).sum(axis=2) > 0.999).all())
        True
        >>> big = random_edge_drops(exponential(10**5, sparse=True), 0.3, key=0,
        ...                         backend="sparse")       # no [n, n] array
        >>> big.num_edges, big.at(0).idx.shape
        (1700000, (100000, 18))
    """
    if sp.issparse(base):
        a = as_sparse_adjacency(base, name="base")
        n = a.shape[0]
        if backend == "dense" and n > DENSE_LIMIT:
            raise ValueError(
                f"base is a scipy sparse adjacency of {n} agents: backend='dense' would build "
                f"dense [n, n] weights of {8 * n * n:,} bytes per step; dense graphs are "
                f"limited to n <= DENSE_LIMIT = {DENSE_LIMIT}. Use backend='sparse': the "
                "drops are then drawn per edge and each step is a neighbour table.")
        symmetric = is_sparse_symmetric(a)
    else:
        a = as_adjacency(base, name="base")
        n = a.shape[0]
        symmetric = bool(np.array_equal(a, a.T))
    _check_rule(rule)
    _check_backend(backend)
    if isinstance(drop_prob, bool) or not isinstance(drop_prob, (int, float, np.floating,
                                                                 np.integer)) \
            or not (np.isfinite(drop_prob) and 0.0 <= drop_prob < 1.0):
        raise ValueError(f"drop_prob must be a number in [0, 1), got {drop_prob!r}.")
    if rule == "metropolis" and not symmetric:
        raise ValueError("rule='metropolis' needs an undirected (symmetric) base graph.")
    if symmetric_drops is None:
        symmetric_drops = symmetric
    if symmetric_drops and not symmetric:
        raise ValueError("symmetric_drops=True needs a symmetric (undirected) base graph.")
    if rule == "metropolis" and not symmetric_drops:
        raise ValueError("rule='metropolis' needs symmetric drops (each step undirected).")
    if shared_across_seeds:
        if key is None:
            raise ValueError("a shared random sequence needs its own key: pass key=jax.random."
                             "key(seed) or an integer seed.")
        key = _as_key(key)
    elif key is not None:
        raise ValueError("shared_across_seeds=False draws from each seed's key (at(t, key)); "
                         "the sequence takes no key of its own: drop key=.")
    if sp.issparse(a):
        index_leaves, num_edges = _sparse_drop_leaves(a, bool(symmetric_drops))
        # the dense base only where it fits (the checks of a drawn graph read it); above the
        # dense limit the sequence holds the base as its table and edge arrays only
        dense_base = a.toarray() if n <= DENSE_LIMIT else None
        leaves = {"base": dense_base, "drop_prob": float(drop_prob), "key": key,
                  **index_leaves}
        return GraphSequence(form="random", n=n, backend=backend, rule=rule, leaves=leaves,
                             shared_across_seeds=shared_across_seeds,
                             symmetric_drops=bool(symmetric_drops), num_edges=num_edges)
    idx, mask = _table_layout(a, None)
    # One uniform draw per edge of the base graph (an undirected edge is one edge): the
    # off-diagonal entries (receiver, sender) and the edge each belongs to.
    recv, send = np.nonzero(a & ~np.eye(n, dtype=bool))
    lo, hi = np.minimum(recv, send), np.maximum(recv, send)
    key_of = lo * n + hi if symmetric_drops else recv * n + send
    uniq, edge_of_entry = np.unique(key_of, return_inverse=True)
    rows = np.broadcast_to(np.arange(n)[:, None], idx.shape)
    ea, eb = (np.minimum(rows, idx), np.maximum(rows, idx)) if symmetric_drops else (rows, idx)
    real = mask.copy()
    real[:, 0] = False                               # k = 0 (self) and padding: no edge
    edge_table = np.where(real, np.searchsorted(uniq, ea * n + eb), uniq.size)
    leaves = {"base": a, "drop_prob": float(drop_prob), "key": key,
              "recv": recv.astype(np.int32), "send": send.astype(np.int32),
              "edge_of_entry": edge_of_entry.reshape(-1).astype(np.int32),
              "base_idx": idx, "base_mask": mask, "edge_table": edge_table.astype(np.int32)}
    return GraphSequence(form="random", n=n, backend=backend, rule=rule, leaves=leaves,
                         shared_across_seeds=shared_across_seeds,
                         symmetric_drops=bool(symmetric_drops), num_edges=int(uniq.size))


def one_peer_exponential(n: int, *, rule: str = "row", backend: str = "dense") -> GraphSequence:
    """One-peer exponential graphs: at step t agent i hears itself and ``i − 2^(t mod τ)``,
    ``τ = ⌈log₂ n⌉`` (period τ; for n = 1 the single graph is the self-loop).

    With ``backend="sparse"`` the steps are built as sparse patterns in O(τ n) (any n; the
    dense backend is limited to ``n <= DENSE_LIMIT``): tables of width 2 (the agent and the
    step's peer), so a step costs O(n), and the numbers of the dense backend.

    Every agent has in-degree 2 (itself and one peer) and, as ``j ↦ j + 2^k`` is a bijection,
    out-degree 2 as well; so ``rule="row"`` (``1/|N_i|``) and ``rule="column"``
    (``1/|N_j^-|``) both put 1/2 on every edge, and each step is doubly stochastic.

    Example:
        >>> seq = one_peer_exponential(8)
        >>> seq.period, float(seq.at(2)[0, 4])        # step 2: agent 0 hears 0 − 4 = 4 (mod 8)
        (3, 0.5)
    """
    n = check_int(n, "n", minimum=1)
    _check_rule(rule)
    _check_backend(backend)
    tau = max(1, math.ceil(math.log2(n))) if n > 1 else 1
    i = np.arange(n)
    if backend == "sparse":          # O(tau n): each step's CSR pattern, never [n, n]
        adjs = []
        for k in range(tau):
            cols = np.stack([i, (i - 2**k) % n], axis=1) if n > 1 else i[:, None]
            a = sp.csr_array((np.ones(cols.size, bool), cols.reshape(-1),
                              np.arange(0, cols.size + 1, cols.shape[1])), shape=(n, n))
            a.sum_duplicates()
            a.sort_indices()
            adjs.append(a)
        # one width for every step, 2 (self and the step's peer): the union of the tau
        # patterns would pad each step's table to tau + 1 columns
        return _fixed_sparse("one_peer_exponential", _sparse_weight_list(adjs, rule), rule,
                             width=min(n, 2))
    if n > DENSE_LIMIT:
        raise ValueError(f"one_peer_exponential({n}) with backend='dense' would build {tau} "
                         f"dense [n, n] weight matrices; dense graphs are limited to n <= "
                         f"DENSE_LIMIT = {DENSE_LIMIT}. Pass backend='sparse'.")
    adjs = []
    for k in range(tau):
        a = np.eye(n, dtype=bool)
        if n > 1:
            a[i, (i - 2**k) % n] = True
        adjs.append(a)
    return _fixed("one_peer_exponential", _stack_weights(adjs, rule), rule, backend)


def as_sequence(graph, *, rule: str | None = None, backend: str | None = None,
                default_rule: str | None = None) -> GraphSequence:
    """The one graph convention of every algorithm factory: a sequence from what a user gives.

    Accepted, and nothing else:

    * a :class:`GraphSequence` (any form, any backend), returned as it is;
    * a weight matrix ``W [N, N]`` (row- or column-stochastic, positive diagonal): the static
      sequence of W;
    * a boolean adjacency ``adj [N, N]`` (``adj[i, j]``: i receives from j, self-loops
      included) together with a weight ``rule`` (``"row"``, ``"column"``, ``"metropolis"``):
      the static sequence of the rule's weights.

    Weight matrices and adjacencies may be dense arrays or scipy sparse arrays (any format, the
    same orientation); a sparse one gives a sparse-backend sequence unless ``backend`` says
    otherwise.

    Args:
        graph: see above.
        rule: the weight rule of an adjacency (None for a weight matrix or a sequence; a
            sequence built with another rule is refused).
        backend: ``"dense"`` or ``"sparse"`` for a sequence built here (default: ``"sparse"``
            for a scipy sparse ``graph``, else ``"dense"``; see :func:`static`); a given
            sequence must already be on it.
        default_rule: the rule an algorithm applies to an adjacency given without one (a
            factory's documented default, e.g. W-MSR, which reads only who hears whom); None:
            an adjacency needs ``rule``.

    Raises:
        ValueError: anything else (lists, stacks, other shapes and dtypes), with one message
            that names what is accepted; a sequence on another backend or with another rule.

    Example:
        >>> from decentral.graphs import ring, row_stochastic
        >>> as_sequence(ring(4), rule="row").describe()
        "form='static', n=4, backend='dense', rule='row'"
        >>> as_sequence(row_stochastic(ring(4)), backend="sparse").backend
        'sparse'
    """
    if backend is not None:
        _check_backend(backend)
    if isinstance(graph, GraphSequence):
        if backend is not None and graph.backend != backend:
            raise ValueError(f"graphs is a sequence on the {graph.backend!r} backend but "
                             f"backend={backend!r} was asked; build the sequence with "
                             f"backend={backend!r} (or drop backend=).")
        if rule is not None and graph.rule != rule:
            raise ValueError(f"graphs is a sequence built with rule={graph.rule!r}; rule="
                             f"{rule!r} applies to an adjacency only. Drop rule= or build the "
                             f"sequence with rule={rule!r}.")
        return graph
    accepted = ("graphs must be a decentral.graphs.GraphSequence (static, periodic, explicit, "
                "random_edge_drops, one_peer_exponential), a row- or column-stochastic weight "
                "matrix [N, N], or a boolean adjacency [N, N] with rule='row', 'column' or "
                "'metropolis'")
    if sp.issparse(graph):
        shape = graph.shape
        if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 1:
            raise ValueError(f"{accepted}; got a scipy sparse array of shape {shape}.")
        if graph.dtype == np.bool_:
            use = rule if rule is not None else default_rule
            if use is None:
                raise ValueError(f"{accepted}; got a boolean sparse adjacency without a rule: "
                                 "pass rule='row', 'column' or 'metropolis'.")
            return static(graph, rule=use, backend=backend)
        if not (np.issubdtype(graph.dtype, np.floating) or
                np.issubdtype(graph.dtype, np.integer)):
            raise ValueError(f"{accepted}; got a scipy sparse array of dtype {graph.dtype}.")
        return static(graph, rule=rule, backend=backend)
    if isinstance(graph, (list, tuple)) or isinstance(graph, (str, bytes, dict)) or \
            graph is None:
        hint = " (for a sequence of graphs use periodic(...) or explicit(...))" \
            if isinstance(graph, (list, tuple)) else ""
        raise ValueError(f"{accepted}; got {type(graph).__name__}{hint}.")
    try:
        arr = np.asarray(graph)
    except Exception:
        raise ValueError(f"{accepted}; got {type(graph).__name__}.") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        hint = (" (a stack of graphs: use periodic(...) or explicit(...))" if arr.ndim == 3
                else "")
        raise ValueError(f"{accepted}; got an array of shape {arr.shape}{hint}.")
    if arr.dtype == np.bool_:
        use = rule if rule is not None else default_rule
        if use is None:
            raise ValueError(f"{accepted}; got a boolean adjacency without a rule: pass "
                             "rule='row', 'column' or 'metropolis'.")
        return static(arr, rule=use, backend=backend or "dense")
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{accepted}; got an array of dtype {arr.dtype}.")
    return static(arr, rule=rule, backend=backend or "dense")
