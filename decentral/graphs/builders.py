"""Adjacency builders: static topologies, networkx and adjlist I/O (the random graphs are in
:mod:`decentral.graphs.random_graphs`).

Every builder returns a boolean adjacency ``adj`` of shape ``[n, n]`` with ``adj[i, j]`` True
iff agent ``i`` receives from agent ``j`` (edge ``j -> i``; row i lists agent i's
in-neighbours), and with the diagonal True (every agent hears itself).

By default the adjacency is a dense numpy array, refused above ``DENSE_LIMIT`` agents (its
``n * n`` bytes would be the first thing to exhaust memory). With ``sparse=True`` every builder
returns a ``scipy.sparse.csr_array`` of dtype bool with the same orientation, sorted indices
and no repeated entries, built from index arrays in O(n + edges) memory, never through an
``[n, n]`` intermediate (see :mod:`decentral.graphs.sparse`).

Example:
    >>> from decentral.graphs import ring, row_stochastic
    >>> adj = ring(4, directed=True)   # i receives from i - 1 (mod 4)
    >>> W = row_stochastic(adj)        # W[i, i] = W[i, i-1] = 1/2
    >>> W[1].tolist()
    [0.5, 0.5, 0.0, 0.0]
    >>> big = ring(10**6, sparse=True)            # 2 * 10^6 stored entries, no 10^12 array
    >>> big.shape, big.nnz, sorted(map(int, big[[1]].indices))
    ((1000000, 1000000), 2000000, [0, 1])
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Sequence

import networkx as nx
import numpy as np
import scipy.sparse as sp

from decentral._checks import check_int

from ._validate import as_adjacency
from .sparse import as_sparse_adjacency, csr_from_pairs, csr_from_rows, index_dtype, is_sparse

__all__ = [
    "DENSE_LIMIT",
    "add_self_loops",
    "ring",
    "path",
    "star",
    "complete",
    "circulant",
    "exponential",
    "grid2d",
    "from_edges",
    "from_networkx",
    "to_networkx",
    "read_adjlist",
]

DENSE_LIMIT: int = 8192
"""Largest number of agents a builder returns as a dense ``[n, n]`` array (64 MiB of bools);
above it a dense request raises ValueError and ``sparse=True`` is the way to build the graph.
The complete graph, whose edge count is ``n * n`` in either form, is refused above it even
with ``sparse=True``."""

AdjacencyLike = np.ndarray | sp.csr_array


def _check_n(n, minimum: int = 1) -> int:
    return check_int(n, "the number of agents", minimum=minimum)


def _check_sparse(sparse) -> bool:
    if not isinstance(sparse, bool | np.bool_):
        raise ValueError(f"sparse must be True or False; got {sparse!r} "
                         f"({type(sparse).__name__}).")
    return bool(sparse)


def _wants_sparse(n: int, sparse, what: str) -> bool:
    """``sparse`` checked and as a bool; a dense ``[n, n]`` request above DENSE_LIMIT raises."""
    sparse = _check_sparse(sparse)
    if not sparse and n > DENSE_LIMIT:
        raise ValueError(
            f"{what}: a dense [n, n] adjacency for n = {n} agents would take n*n = {n * n:,} "
            f"bytes; dense graphs are limited to n <= DENSE_LIMIT = {DENSE_LIMIT}. Pass "
            "sparse=True to get a scipy.sparse CSR adjacency built in O(edges) memory.")
    return sparse


def add_self_loops(adj, *, sparse: bool | None = None) -> AdjacencyLike:
    """Return a copy of a boolean adjacency with every diagonal entry set to True.

    Args:
        adj: boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent
            j; a numpy array or a scipy sparse array / matrix (any format) of dtype bool.
        sparse: the kind of the result: None (default) the kind of ``adj``; True a
            ``scipy.sparse.csr_array``; False a dense numpy array (refused above
            :data:`DENSE_LIMIT` agents).

    Returns:
        The adjacency with its diagonal True, same orientation; a canonical bool CSR array
        (sorted indices, no repeats) when sparse.

    Example:
        >>> import numpy as np
        >>> add_self_loops(np.array([[False, True], [False, False]])).tolist()
        [[True, True], [False, True]]
    """
    if sparse is not None:
        sparse = _check_sparse(sparse)
    if is_sparse(adj):
        a = as_sparse_adjacency(adj, require_self_loops=False)
        n = a.shape[0]
        if sparse is False:
            _wants_sparse(n, False, "add_self_loops")
        coo = a.tocoo()
        out = csr_from_pairs(n, coo.row, coo.col)
        return out.toarray() if sparse is False else out
    a = as_adjacency(adj, require_self_loops=False).copy()
    np.fill_diagonal(a, True)
    if sparse:
        receivers, senders = np.nonzero(a)
        return csr_from_pairs(a.shape[0], receivers, senders)
    return a


def _edge_array(n: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(senders, receivers) of an ``[E, 2]`` integer array, checked without a Python loop."""
    if edges.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if edges.ndim != 2 or edges.shape[1] != 2:
        raise ValueError(f"edges given as an array must have shape [E, 2], one pair (sender, "
                         f"receiver) per row; got shape {edges.shape}.")
    if edges.dtype == np.bool_ or not np.issubdtype(edges.dtype, np.integer):
        raise ValueError(f"edges: agents are integer indices 0..{n - 1}; got an array of dtype "
                         f"{edges.dtype}.")
    outside = (edges < 0) | (edges >= n)
    if outside.any():
        sender, receiver = edges[np.flatnonzero(outside.any(axis=1))[0]].tolist()
        raise ValueError(f"edge ({sender}, {receiver}) names an agent outside 0..{n - 1}.")
    return edges[:, 0], edges[:, 1]


def _edge_pairs(n: int, edges: Iterable) -> Iterable[tuple[int, int]]:
    """(sender, receiver) of every edge of an iterable, each checked."""
    for edge in edges:
        try:
            sender, receiver = edge
        except (TypeError, ValueError):
            raise ValueError(f"each edge must be a pair (sender, receiver); got {edge!r}."
                             ) from None
        for end in (sender, receiver):
            if isinstance(end, bool | np.bool_) or not isinstance(end, numbers.Integral):
                raise ValueError(f"edge {edge!r}: agents are integer indices 0..{n - 1}; got "
                                 f"{end!r} ({type(end).__name__}).")
        if not (0 <= sender < n and 0 <= receiver < n):
            raise ValueError(f"edge ({sender}, {receiver}) names an agent outside 0..{n - 1}.")
        yield int(sender), int(receiver)


def from_edges(n: int, edges: Iterable[tuple[int, int]] | np.ndarray, *,
               sparse: bool = False) -> AdjacencyLike:
    """Adjacency from directed edges ``(sender, receiver)`` (edge j -> i sets ``adj[i, j]``).

    Self-loops are added; repeated edges are kept once.

    Args:
        n: number of agents.
        edges: pairs ``(sender, receiver)`` of agent indices in 0..n-1: an iterable of pairs,
            or an integer numpy array ``[E, 2]`` (checked and inserted without a Python loop).
        sparse: return a ``scipy.sparse.csr_array`` built in O(n + E) memory instead of a
            dense array (dense is refused above :data:`DENSE_LIMIT` agents).

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.

    Raises:
        ValueError: an edge that is not a pair of integer indices in 0..n-1.

    Example:
        >>> adj = from_edges(3, [(0, 1), (1, 2), (2, 0)])   # directed 3-cycle
        >>> bool(adj[1, 0])                                  # 1 receives from 0
        True
    """
    n = _check_n(n)
    sparse = _wants_sparse(n, sparse, "from_edges")
    if isinstance(edges, np.ndarray) and edges.dtype != object:
        senders, receivers = _edge_array(n, edges)
        if sparse:
            return csr_from_pairs(n, receivers, senders)
        a = np.eye(n, dtype=bool)
        a[receivers, senders] = True
        return a
    if sparse:
        flat = np.fromiter((end for pair in _edge_pairs(n, edges) for end in pair),
                           dtype=np.int64)
        return csr_from_pairs(n, flat[1::2], flat[0::2])
    a = np.eye(n, dtype=bool)
    for sender, receiver in _edge_pairs(n, edges):
        a[receiver, sender] = True
    return a


def ring(n: int, *, directed: bool = True, sparse: bool = False) -> AdjacencyLike:
    """Ring: agent i receives from i - 1 (mod n); undirected also from i + 1.

    Args:
        n: number of agents.
        directed: if False, every agent also hears i + 1 (mod n).
        sparse: return a ``scipy.sparse.csr_array`` (O(n) memory) instead of a dense array.

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.

    Example:
        >>> adj = ring(5, directed=False)
        >>> int(adj.sum(axis=1)[0])     # self, left and right neighbour
        3
    """
    n = _check_n(n)
    return circulant(n, [1] if directed else [1, -1], sparse=sparse)


def path(n: int, *, directed: bool = True, sparse: bool = False) -> AdjacencyLike:
    """Path 0 - 1 - ... - (n-1); directed: agent i receives from i - 1 (edges i -> i+1).

    Args:
        n: number of agents.
        directed: if False, agent i also hears i + 1.
        sparse: return a ``scipy.sparse.csr_array`` (O(n) memory) instead of a dense array.

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.
    """
    n = _check_n(n)
    if _wants_sparse(n, sparse, "path"):
        i = np.arange(1, n)
        if directed:
            return csr_from_pairs(n, i, i - 1)
        return csr_from_pairs(n, np.concatenate([i, i - 1]), np.concatenate([i - 1, i]))
    a = np.eye(n, dtype=bool)
    i = np.arange(1, n)
    a[i, i - 1] = True
    if not directed:
        a[i - 1, i] = True
    return a


def star(n: int, *, sparse: bool = False) -> AdjacencyLike:
    """Undirected star with hub 0 and leaves 1..n-1 (hub hears every leaf, leaves hear the hub).

    Args:
        n: number of agents.
        sparse: return a ``scipy.sparse.csr_array`` (O(n) memory) instead of a dense array.

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.
    """
    n = _check_n(n)
    if _wants_sparse(n, sparse, "star"):
        leaves = np.arange(1, n)
        hub = np.zeros(n - 1, dtype=leaves.dtype)
        return csr_from_pairs(n, np.concatenate([hub, leaves]), np.concatenate([leaves, hub]))
    a = np.eye(n, dtype=bool)
    a[0, :] = True
    a[:, 0] = True
    return a


def complete(n: int, *, sparse: bool = False) -> AdjacencyLike:
    """Complete graph K_n: every agent hears every agent.

    K_n has ``n * n`` edges: its CSR form (4 or 8 index bytes per edge) is larger than the
    dense one (1 byte per entry), so ``sparse=True`` is offered for code that wants CSR
    throughout, and like the dense form it is refused above :data:`DENSE_LIMIT` agents.

    Args:
        n: number of agents (at most :data:`DENSE_LIMIT`).
        sparse: return a ``scipy.sparse.csr_array`` instead of a dense array.

    Returns:
        Boolean adjacency ``[n, n]``, all True.
    """
    n = _check_n(n)
    sparse = _check_sparse(sparse)
    if n > DENSE_LIMIT:
        raise ValueError(
            f"complete: K_n on n = {n} agents has n*n = {n * n:,} edges, dense or sparse; it is "
            f"limited to n <= DENSE_LIMIT = {DENSE_LIMIT} (sparse=True does not help here). "
            "For a dense mixing at scale use a sparse graph (exponential, random_regular).")
    if sparse:
        return csr_from_rows(np.tile(np.arange(n), (n, 1)))
    return np.ones((n, n), dtype=bool)


def circulant(n: int, offsets: Sequence[int], *, sparse: bool = False) -> AdjacencyLike:
    """Circulant digraph: agent i receives from (i - k) mod n for every offset k.

    Args:
        n: number of agents.
        offsets: integer offsets (any sign; taken mod n, repeats and multiples of n merge).
        sparse: return a ``scipy.sparse.csr_array`` (O(n * len(offsets)) memory) instead of a
            dense array.

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.

    Example:
        >>> adj = circulant(5, [-1, -2, -3])   # i receives from i+1, i+2, i+3 (mod 5)
        >>> sorted(map(int, adj[0].nonzero()[0]))
        [0, 1, 2, 3]
    """
    n = _check_n(n)
    if _wants_sparse(n, sparse, "circulant"):
        residues = {0} | {check_int(k, "a circulant offset", minimum=None) % n for k in offsets}
        dtype = index_dtype(n, n * len(residues))
        shifts = np.array(sorted(residues), dtype=dtype)
        cols = np.arange(n, dtype=dtype)[:, None] - shifts[None, :]
        np.add(cols, dtype(n), out=cols, where=cols < 0)          # (i - k) mod n, no division
        return csr_from_rows(cols)
    a = np.eye(n, dtype=bool)
    i = np.arange(n)
    for k in offsets:
        a[i, (i - check_int(k, "a circulant offset", minimum=None)) % n] = True
    return a


def exponential(n: int, *, sparse: bool = False) -> AdjacencyLike:
    """Static exponential graph: i receives from (i - 2^k) mod n for every k with 2^k < n.

    Args:
        n: number of agents.
        sparse: return a ``scipy.sparse.csr_array`` (about ``n * (log2(n) + 1)`` entries)
            instead of a dense array.

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.
    """
    n = _check_n(n)
    offsets = []
    k = 1
    while k < n:
        offsets.append(k)
        k *= 2
    return circulant(n, offsets, sparse=sparse)


def grid2d(rows: int, cols: int, *, sparse: bool = False) -> AdjacencyLike:
    """Undirected 4-neighbour grid; agent index is ``r * cols + c``.

    Args:
        rows: number of grid rows.
        cols: number of grid columns.
        sparse: return a ``scipy.sparse.csr_array`` built by index arithmetic (O(rows * cols)
            memory) instead of a dense array.

    Returns:
        Boolean adjacency ``[n, n]`` with ``n = rows * cols``, ``adj[i, j]`` True iff agent i
        receives from agent j (grid neighbours both ways), diagonal True.
    """
    rows = _check_n(rows)
    cols = _check_n(cols)
    n = rows * cols
    if _wants_sparse(n, sparse, "grid2d"):
        agent = np.arange(n, dtype=np.int64)
        r, c = np.divmod(agent, cols)
        receivers, senders = [], []
        for has, step in ((c > 0, -1), (c < cols - 1, 1), (r > 0, -cols), (r < rows - 1, cols)):
            here = agent[has]
            receivers.append(here)
            senders.append(here + step)
        return csr_from_pairs(n, np.concatenate(receivers), np.concatenate(senders))
    return from_networkx(nx.grid_2d_graph(rows, cols), nodes=[(r, c) for r in range(rows)
                                                               for c in range(cols)])


def from_networkx(graph: nx.Graph, *, nodes: Sequence | None = None,
                  sparse: bool = False) -> AdjacencyLike:
    """Adjacency from a networkx graph; an edge ``u -> v`` means v receives from u.

    Undirected graphs give symmetric adjacencies. Self-loops are added.

    Args:
        graph: a ``networkx.Graph`` or ``networkx.DiGraph``.
        nodes: the node order that defines agent indices. Default: ``sorted(graph.nodes)`` if
            the labels are exactly the integers 0..n-1, else the graph's own node order.
        sparse: return a ``scipy.sparse.csr_array`` (the edges are read into index arrays, no
            ``[n, n]`` array) instead of a dense array.

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.
    """
    if not isinstance(graph, nx.Graph):
        raise ValueError(f"from_networkx expects a networkx graph, got {type(graph).__name__}.")
    if nodes is None:
        labels = list(graph.nodes)
        integer_labels = all(isinstance(u, (int, np.integer)) and not isinstance(u, bool)
                             for u in labels)
        if integer_labels and sorted(labels) == list(range(len(labels))):
            nodes = list(range(len(labels)))
        else:
            nodes = labels
    index = {u: k for k, u in enumerate(nodes)}
    if len(index) != graph.number_of_nodes() or set(index) != set(graph.nodes):
        raise ValueError("`nodes` must list every node of the graph exactly once.")
    n = _check_n(len(index))
    if _wants_sparse(n, sparse, "from_networkx"):
        flat = np.fromiter((index[end] for edge in graph.edges() for end in edge),
                           dtype=np.int64)
        senders, receivers = flat[0::2], flat[1::2]
        if not graph.is_directed():
            senders, receivers = (np.concatenate([senders, receivers]),
                                  np.concatenate([receivers, senders]))
        return csr_from_pairs(n, receivers, senders)
    a = np.eye(n, dtype=bool)
    for u, v in graph.edges():
        a[index[v], index[u]] = True
        if not graph.is_directed():
            a[index[u], index[v]] = True
    return a


def to_networkx(adj, *, self_loops: bool = False) -> nx.DiGraph:
    """networkx DiGraph with an edge ``j -> i`` for every ``adj[i, j]`` (self-loops optional).

    ``adj`` is a boolean adjacency with self-loops (as every graph argument of
    :mod:`decentral.graphs`), dense or scipy sparse (any format; its stored True entries are
    the edges, read from the index arrays without an ``[n, n]`` array, in the same order as
    the dense one's); ``self_loops=True`` also writes them as edges ``i -> i``. networkx
    keeps Python objects per node and edge: about 250 bytes and 1.6 µs per edge measured
    (2026-12, this project's 2-core machine), so 10^7 edges take about 2.5 GB and 16 s: this
    suits moderate n.

    Example:
        >>> sorted(to_networkx(ring(3)).edges())
        [(0, 1), (1, 2), (2, 0)]
        >>> sorted(to_networkx(ring(3, sparse=True)).edges())
        [(0, 1), (1, 2), (2, 0)]
    """
    if is_sparse(adj):
        a = as_sparse_adjacency(adj)
        receivers = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
        senders = a.indices
    else:
        a = as_adjacency(adj)
        receivers, senders = np.nonzero(a)
    g = nx.DiGraph()
    g.add_nodes_from(range(a.shape[0]))
    g.add_edges_from((int(j), int(i)) for i, j in zip(receivers, senders, strict=True)
                     if self_loops or i != j)
    return g


def read_adjlist(path: str | os.PathLike, *, directed: bool = True,
                 sparse: bool = False) -> AdjacencyLike:
    """Read a networkx multiline adjlist file (as shipped with the bandit paper's code).

    A line "j d" followed by d successor lines means edges j -> successor, i.e. each listed
    agent receives from j. Integer node labels are the agent indices (the file must label the
    agents 0..n-1); self-loops are added.

    Note: the authors' loader of the bandit paper (``Dec_UCB.py``) indexes agents by the order in
    which nodes first appear in the file; this reader uses the labels instead, so results are
    stated per labelled agent.

    Args:
        path: the adjlist file.
        directed: read the edges as directed (False: every edge both ways).
        sparse: return a ``scipy.sparse.csr_array`` instead of a dense array (see
            :func:`from_networkx`).

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.
    """
    _check_sparse(sparse)
    create_using = nx.DiGraph if directed else nx.Graph
    try:
        g = nx.read_multiline_adjlist(os.fspath(path), create_using=create_using, nodetype=int)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"could not read {path!s} as a networkx multiline adjlist with integer "
                         f"node labels: {exc}") from exc
    labels = sorted(g.nodes)
    if labels != list(range(len(labels))):
        raise ValueError(f"{path!s}: node labels must be the integers 0..n-1, got {labels[:10]}.")
    return from_networkx(g, nodes=labels, sparse=sparse)


# --------------------------------------------------------------------------------------------
# Erdős–Rényi graphs of a prescribed connectivity kind
# --------------------------------------------------------------------------------------------
