"""Adjacency builders: static topologies, random graphs, networkx and adjlist I/O.

Every builder returns a boolean numpy array ``adj`` of shape ``[n, n]`` with
``adj[i, j]`` True iff agent ``i`` receives from agent ``j`` (edge ``j -> i``), and with the
diagonal True (every agent hears itself).

Example:
    >>> from decentral.graphs import ring, row_stochastic
    >>> adj = ring(4, directed=True)   # i receives from i - 1 (mod 4)
    >>> W = row_stochastic(adj)        # W[i, i] = W[i, i-1] = 1/2
    >>> W[1].tolist()
    [0.5, 0.5, 0.0, 0.0]
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Sequence

import networkx as nx
import numpy as np

from decentral._checks import check_int

from ._validate import as_adjacency

__all__ = [
    "add_self_loops",
    "ring",
    "path",
    "star",
    "complete",
    "circulant",
    "exponential",
    "grid2d",
    "erdos_renyi",
    "from_edges",
    "from_networkx",
    "to_networkx",
    "read_adjlist",
]

_ER_KINDS = ("strong", "weak", "undirected")


def _check_n(n, minimum: int = 1) -> int:
    return check_int(n, "the number of agents", minimum=minimum)


def add_self_loops(adj) -> np.ndarray:
    """Return a copy of a boolean adjacency with every diagonal entry set to True."""
    a = as_adjacency(adj, require_self_loops=False).copy()
    np.fill_diagonal(a, True)
    return a


def from_edges(n: int, edges: Iterable[tuple[int, int]]) -> np.ndarray:
    """Adjacency from directed edges ``(sender, receiver)`` (edge j -> i sets ``adj[i, j]``).

    Self-loops are added.

    Example:
        >>> adj = from_edges(3, [(0, 1), (1, 2), (2, 0)])   # directed 3-cycle
        >>> bool(adj[1, 0])                                  # 1 receives from 0
        True
    """
    n = _check_n(n)
    a = np.eye(n, dtype=bool)
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
        a[int(receiver), int(sender)] = True
    return a


def ring(n: int, *, directed: bool = True) -> np.ndarray:
    """Ring: agent i receives from i - 1 (mod n); undirected also from i + 1.

    Example:
        >>> adj = ring(5, directed=False)
        >>> int(adj.sum(axis=1)[0])     # self, left and right neighbour
        3
    """
    n = _check_n(n)
    return circulant(n, [1] if directed else [1, -1])


def path(n: int, *, directed: bool = True) -> np.ndarray:
    """Path 0 - 1 - ... - (n-1); directed: agent i receives from i - 1 (edges i -> i+1)."""
    n = _check_n(n)
    a = np.eye(n, dtype=bool)
    i = np.arange(1, n)
    a[i, i - 1] = True
    if not directed:
        a[i - 1, i] = True
    return a


def star(n: int) -> np.ndarray:
    """Undirected star with hub 0 and leaves 1..n-1 (hub hears every leaf, leaves hear the hub)."""
    n = _check_n(n)
    a = np.eye(n, dtype=bool)
    a[0, :] = True
    a[:, 0] = True
    return a


def complete(n: int) -> np.ndarray:
    """Complete graph K_n: every agent hears every agent."""
    n = _check_n(n)
    return np.ones((n, n), dtype=bool)


def circulant(n: int, offsets: Sequence[int]) -> np.ndarray:
    """Circulant digraph: agent i receives from (i - k) mod n for every offset k.

    Example:
        >>> adj = circulant(5, [-1, -2, -3])   # i receives from i+1, i+2, i+3 (mod 5)
        >>> sorted(map(int, adj[0].nonzero()[0]))
        [0, 1, 2, 3]
    """
    n = _check_n(n)
    a = np.eye(n, dtype=bool)
    i = np.arange(n)
    for k in offsets:
        a[i, (i - check_int(k, "a circulant offset", minimum=None)) % n] = True
    return a


def exponential(n: int) -> np.ndarray:
    """Static exponential graph: i receives from (i - 2^k) mod n for every k with 2^k < n."""
    n = _check_n(n)
    offsets = []
    k = 1
    while k < n:
        offsets.append(k)
        k *= 2
    return circulant(n, offsets)


def grid2d(rows: int, cols: int) -> np.ndarray:
    """Undirected 4-neighbour grid; agent index is ``r * cols + c``."""
    rows = _check_n(rows)
    cols = _check_n(cols)
    return from_networkx(nx.grid_2d_graph(rows, cols), nodes=[(r, c) for r in range(rows)
                                                               for c in range(cols)])


def from_networkx(graph: nx.Graph, *, nodes: Sequence | None = None) -> np.ndarray:
    """Adjacency from a networkx graph; an edge ``u -> v`` means v receives from u.

    Undirected graphs give symmetric adjacencies. Self-loops are added.

    Args:
        graph: a ``networkx.Graph`` or ``networkx.DiGraph``.
        nodes: the node order that defines agent indices. Default: ``sorted(graph.nodes)`` if
            the labels are exactly the integers 0..n-1, else the graph's own node order.
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
    a = np.eye(n, dtype=bool)
    for u, v in graph.edges():
        a[index[v], index[u]] = True
        if not graph.is_directed():
            a[index[u], index[v]] = True
    return a


def to_networkx(adj, *, self_loops: bool = False) -> nx.DiGraph:
    """networkx DiGraph with an edge ``j -> i`` for every ``adj[i, j]`` (self-loops optional).

    ``adj`` is a boolean adjacency with self-loops (as every graph argument of
    :mod:`decentral.graphs`); ``self_loops=True`` also writes them as edges ``i -> i``.

    Example:
        >>> sorted(to_networkx(ring(3)).edges())
        [(0, 1), (1, 2), (2, 0)]
    """
    a = as_adjacency(adj)
    g = nx.DiGraph()
    g.add_nodes_from(range(a.shape[0]))
    receivers, senders = np.nonzero(a)
    g.add_edges_from((int(j), int(i)) for i, j in zip(receivers, senders, strict=True)
                     if self_loops or i != j)
    return g


def read_adjlist(path: str | os.PathLike, *, directed: bool = True) -> np.ndarray:
    """Read a networkx multiline adjlist file (as shipped with the bandit paper's code).

    A line "j d" followed by d successor lines means edges j -> successor, i.e. each listed
    agent receives from j. Integer node labels are the agent indices (the file must label the
    agents 0..n-1); self-loops are added.

    Note: the authors' loader of the bandit paper (``Dec_UCB.py``) indexes agents by the order in
    which nodes first appear in the file; this reader uses the labels instead, so results are
    stated per labelled agent.
    """
    create_using = nx.DiGraph if directed else nx.Graph
    try:
        g = nx.read_multiline_adjlist(os.fspath(path), create_using=create_using, nodetype=int)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"could not read {path!s} as a networkx multiline adjlist with integer "
                         f"node labels: {exc}") from exc
    labels = sorted(g.nodes)
    if labels != list(range(len(labels))):
        raise ValueError(f"{path!s}: node labels must be the integers 0..n-1, got {labels[:10]}.")
    return from_networkx(g, nodes=labels)


# --------------------------------------------------------------------------------------------
# Erdős–Rényi graphs of a prescribed connectivity kind
# --------------------------------------------------------------------------------------------

def _kind_of(adj: np.ndarray) -> str:
    """'undirected'-connected / 'strong' / 'weak' / 'disconnected' classification."""
    g = to_networkx(adj)
    if nx.is_strongly_connected(g):
        return "strong"
    if nx.is_weakly_connected(g):
        return "weak"
    return "disconnected"


def erdos_renyi(n: int, p: float, *, kind: str = "strong", seed: int = 0,
                max_tries: int = 200) -> np.ndarray:
    """Random G(n, p) graph of exactly the requested connectivity kind, with self-loops.

    Construction (documented so experiments are reproducible):

    1. Draw ``networkx.fast_gnp_random_graph(n, p, seed=seed, directed=kind != "undirected")``.
       If it already has the requested kind, return exactly that graph plus self-loops; this
       reproduces seed-indexed graphs of the papers' experiments.
    2. Otherwise redraw with seeds ``seed_k`` (k = 1..max_tries-1) taken from
       ``numpy.random.default_rng(seed)`` and return the first draw of the right kind.
    3. If all draws fail (rejection is hopeless, e.g. ``kind="weak"`` at n = 50, p = 0.5, where
       a directed G(n, p) is weakly-but-not-strongly connected with probability ~1e-13: that is
       essentially the chance that some agent has no in- or no out-edges (the graph is then
       not strongly connected), at most ``2 n (1 − p)^(n−1) = 100 · 2⁻⁴⁹ ≈ 1.8e-13`` by a union
       bound over the 2n events):

       - ``"weak"``: take a strongly connected draw (by steps 1–3 for ``"strong"``), pick agent
         ``v`` uniformly, and delete all of v's out-edges (nobody hears v). v keeps its in-edges,
         so the graph stays weakly connected and is no longer strongly connected.
       - ``"strong"``: add a directed cycle through a random permutation of the agents to the
         last draw.
       - ``"undirected"``: add an undirected path through a random permutation to the last draw.

    Args:
        n: number of agents (>= 2 for ``"weak"``).
        p: edge probability in [0, 1].
        kind: ``"strong"`` (strongly connected digraph), ``"weak"`` (weakly but not strongly
            connected digraph) or ``"undirected"`` (connected undirected graph).
        seed: integer seed.
        max_tries: number of rejection draws before the construction of step 3.

    Example:
        >>> adj = erdos_renyi(20, 0.5, kind="undirected", seed=3)
        >>> bool((adj == adj.T).all())
        True
    """
    n = _check_n(n)
    if kind not in _ER_KINDS:
        raise ValueError(f"kind must be one of {_ER_KINDS}, got {kind!r}.")
    if not (isinstance(p, (float, int, np.floating)) and 0.0 <= float(p) <= 1.0):
        raise ValueError(f"edge probability p must be a number in [0, 1], got {p!r}.")
    if kind == "weak" and n < 2:
        raise ValueError("a weakly-but-not-strongly connected graph needs n >= 2.")
    seed = check_int(seed, "seed", minimum=None)
    max_tries = check_int(max_tries, "max_tries", minimum=1)
    directed = kind != "undirected"
    wanted = "strong" if kind in ("strong", "undirected") else "weak"
    rng = np.random.default_rng(seed)
    draw_seed = int(seed)
    adj = None
    for attempt in range(max_tries):
        if attempt > 0:
            draw_seed = int(rng.integers(2**31 - 1))
        g = nx.fast_gnp_random_graph(n, float(p), seed=draw_seed, directed=directed)
        adj = from_networkx(g, nodes=list(range(n)))
        if _kind_of(adj) == wanted:
            return adj
    assert adj is not None
    if kind == "strong":
        perm = rng.permutation(n)
        adj[perm, np.roll(perm, 1)] = True
        return adj
    if kind == "undirected":
        perm = rng.permutation(n)
        adj[perm[1:], perm[:-1]] = True
        adj[perm[:-1], perm[1:]] = True
        return adj
    strong = erdos_renyi(n, p, kind="strong", seed=int(rng.integers(2**31 - 1)),
                         max_tries=max_tries)
    v = int(rng.integers(n))
    weak = strong.copy()
    weak[:, v] = False
    weak[v, v] = True
    return weak
