"""Random graph builders: Erdos-Renyi graphs of a given connectivity kind, random regular
digraphs and random geometric graphs, dense or sparse (the contract of
:mod:`decentral.graphs.builders`: row i lists agent i's in-neighbours, the diagonal included)."""

from __future__ import annotations

import math
import numbers

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from decentral._checks import check_int

from .builders import AdjacencyLike, _check_n, _wants_sparse, from_networkx, to_networkx
from .sparse import csr_from_pairs, csr_from_rows, index_dtype

__all__ = ["erdos_renyi", "random_geometric", "random_regular"]

_ER_KINDS = ("strong", "weak", "undirected")


def _kind_of(adj: np.ndarray) -> str:
    """'undirected'-connected / 'strong' / 'weak' / 'disconnected' classification."""
    g = to_networkx(adj)
    if nx.is_strongly_connected(g):
        return "strong"
    if nx.is_weakly_connected(g):
        return "weak"
    return "disconnected"


def erdos_renyi(n: int, p: float, *, kind: str = "strong", seed: int = 0,
                max_tries: int = 200, sparse: bool = False) -> AdjacencyLike:
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

    With ``sparse=True`` the same three steps run on CSR adjacencies, with their own draws:
    every draw and every construction step takes its randomness from one stream,
    ``numpy.random.default_rng(seed)``, so a sparse graph is reproducible from its seed but is
    not the dense graph of the same seed (the dense path is unchanged). A draw costs O(n +
    edges) time and memory: the edges are the successes of independent Bernoulli(p) trials over
    the ``n (n - 1)`` ordered pairs (``n (n - 1) / 2`` unordered ones for ``"undirected"``),
    found by jumping from one success to the next with geometric gaps (for p < 1e-9: a
    binomial count of distinct uniform positions), i.e. exactly G(n, p). The kind is checked
    with ``scipy.sparse.csgraph.connected_components``. Each rejected draw costs a full
    draw: where the kind is unlikely (``"strong"`` below the connectivity threshold
    ``p ~ ln(n) / n``, ``"weak"`` above it) pass a small ``max_tries`` to reach step 3 quickly.

    Args:
        n: number of agents (>= 2 for ``"weak"``).
        p: edge probability in [0, 1].
        kind: ``"strong"`` (strongly connected digraph), ``"weak"`` (weakly but not strongly
            connected digraph) or ``"undirected"`` (connected undirected graph).
        seed: integer seed.
        max_tries: number of rejection draws before the construction of step 3.
        sparse: return a ``scipy.sparse.csr_array`` drawn in O(n + edges) memory (see above)
            instead of a dense array (dense is refused above :data:`DENSE_LIMIT` agents).

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True.

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
    if _wants_sparse(n, sparse, "erdos_renyi"):
        return _erdos_renyi_sparse(n, float(p), kind, np.random.default_rng(seed), max_tries)
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


def _bernoulli_positions(total: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Sorted positions in 0..total-1, each one present independently with probability p."""
    if total == 0 or p == 0.0:
        return np.zeros(0, dtype=np.int64)
    if p == 1.0:
        return np.arange(total, dtype=np.int64)
    if p < 1e-9:                  # geometric gaps could pass 2^63; the count is tiny here
        count = int(rng.binomial(total, p))
        return np.sort(rng.choice(total, size=count, replace=False, shuffle=False))
    chunks = []
    last = -1
    while True:                   # successes of Bernoulli(p) trials: gaps are Geometric(p)
        mean = (total - 1 - last) * p
        size = int(mean + 6.0 * math.sqrt(mean) + 16.0)
        hits = last + np.cumsum(rng.geometric(p, size=size))
        inside = hits[: np.searchsorted(hits, total)]
        chunks.append(inside)
        if inside.size < size:
            return np.concatenate(chunks)
        last = int(hits[-1])


def _gnp_pairs(n: int, p: float, directed: bool, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray]:
    """(receivers, senders) of a G(n, p) draw without self-loops, in O(n + edges)."""
    if n < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if directed:
        # position q = i (n - 1) + r enumerates the ordered pairs (i, j != i) row by row
        receivers, rest = np.divmod(_bernoulli_positions(n * (n - 1), p, rng), n - 1)
        return receivers, rest + (rest >= receivers)
    # position q enumerates the pairs i < j row by row: row i starts at i (n - 1) - i (i - 1) / 2
    q = _bernoulli_positions(n * (n - 1) // 2, p, rng)
    agent = np.arange(n, dtype=np.int64)
    starts = agent * (n - 1) - agent * (agent - 1) // 2
    low = np.searchsorted(starts, q, side="right") - 1
    high = q - starts[low] + low + 1
    return np.concatenate([low, high]), np.concatenate([high, low])


def _sparse_kind(adj: sp.csr_array) -> str:
    """'strong' / 'weak' / 'disconnected' of a sparse adjacency (scipy.sparse.csgraph)."""
    if connected_components(adj, directed=True, connection="strong", return_labels=False) == 1:
        return "strong"
    if connected_components(adj, directed=True, connection="weak", return_labels=False) == 1:
        return "weak"
    return "disconnected"


def _erdos_renyi_sparse(n: int, p: float, kind: str, rng: np.random.Generator,
                        max_tries: int) -> sp.csr_array:
    """The construction of :func:`erdos_renyi` on CSR adjacencies, all draws from ``rng``."""
    directed = kind != "undirected"
    wanted = "strong" if kind in ("strong", "undirected") else "weak"
    adj = None
    for _ in range(max_tries):
        adj = csr_from_pairs(n, *_gnp_pairs(n, p, directed, rng))
        if _sparse_kind(adj) == wanted:
            return adj
    assert adj is not None
    edges = adj.tocoo()
    if kind == "strong":
        perm = rng.permutation(n)
        return csr_from_pairs(n, np.concatenate([edges.row, perm]),
                              np.concatenate([edges.col, np.roll(perm, 1)]))
    if kind == "undirected":
        perm = rng.permutation(n)
        return csr_from_pairs(n, np.concatenate([edges.row, perm[1:], perm[:-1]]),
                              np.concatenate([edges.col, perm[:-1], perm[1:]]))
    strong = _erdos_renyi_sparse(n, p, "strong",
                                 np.random.default_rng(int(rng.integers(2**31 - 1))), max_tries)
    v = int(rng.integers(n))
    edges = strong.tocoo()
    keep = (edges.col != v) | (edges.row == v)          # nobody but v itself hears v
    return csr_from_pairs(n, edges.row[keep], edges.col[keep])


# --------------------------------------------------------------------------------------------
# Random regular digraphs
# --------------------------------------------------------------------------------------------

_REGULAR_RESTARTS = 20
_SEQUENTIAL_REPAIR = 32


def random_regular(n: int, k: int, *, seed: int = 0, sparse: bool = False) -> AdjacencyLike:
    """Random k-regular digraph: every agent hears exactly k distinct others and is heard by
    exactly k others, plus its self-loop (in- and out-degree k + 1 with the diagonal).

    Construction (the directed configuration model with switch repairs), O(n k) time and
    memory for fixed k:

    1. Give every agent k out-stubs and match them to the n k in-slots (k per receiver) by a
       uniformly random permutation: row i of an ``[n, k]`` table lists whom agent i hears.
    2. Repair the self-loops and repeated senders of each row (about k + k (k - 1) / 2 entries in
       expectation, independent of n): swap a bad entry with a uniformly random entry of another
       row when the swap creates no new self-loop or repeat, until no bad entry is left (a batch
       of independent swaps per round while many are left, then one at a time). Swaps keep every
       row's size (in-degree k) and every agent's number of appearances (out-degree k).
    3. For ``k > (n - 1) / 2`` build the ``(n - 1 - k)``-regular graph this way and return its
       complement (without the diagonal), which is k-regular. The complement goes through an
       ``[n, n]`` boolean mask, which is smaller than the result (more than n^2 / 2 entries).

    Distribution: without repairs the permutation is uniform over the stub matchings, so a
    draw that needed none is uniform over the simple k-regular digraphs; the repairs touch a
    number of entries that does not grow with n and make the law close to, but not exactly,
    uniform. For k >= 2 the graph is strongly connected with high probability (checked in the
    tests for the seeds there); k = 1 gives a permutation without fixed points, a union of
    disjoint cycles. The repairs are negligible next to the n k entries while k is small
    (measured: n = 10^6, k = 8 in 0.4 s; n = 10^4, k = 100 in 0.1 s) and take seconds for k
    in the thousands (n = 5000, k = 1000: 2.5 s). The dense and the sparse result of a seed
    are the same graph.

    Args:
        n: number of agents (>= 2).
        k: number of distinct other agents each agent hears, 1 <= k <= n - 1.
        seed: non-negative integer seed of ``numpy.random.default_rng``.
        sparse: return a ``scipy.sparse.csr_array`` with ``n (k + 1)`` entries instead of a
            dense array (dense is refused above :data:`DENSE_LIMIT` agents).

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        diagonal True, every row and every column with exactly k + 1 True entries.

    Raises:
        ValueError: k outside 1..n-1, a bad n or seed, or a dense request above the limit.

    Example:
        >>> adj = random_regular(6, 2, seed=1)
        >>> adj.sum(axis=1).tolist(), adj.sum(axis=0).tolist()
        ([3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3])
    """
    n = _check_n(n)
    k = check_int(k, "k (the number of others each agent hears)", minimum=None)
    if not 1 <= k <= n - 1:
        raise ValueError(f"random_regular needs 1 <= k <= n - 1 = {n - 1} (every agent hears k "
                         f"distinct others); got k = {k} for n = {n}.")
    seed = check_int(seed, "seed", minimum=0)
    sparse = _wants_sparse(n, sparse, "random_regular")
    others = _regular_in_neighbours(n, k, np.random.default_rng(seed))
    if sparse:
        diagonal = np.arange(n, dtype=others.dtype)[:, None]
        return csr_from_rows(np.concatenate([others, diagonal], axis=1))
    a = np.eye(n, dtype=bool)
    a[np.arange(n)[:, None], others] = True
    return a


def _regular_in_neighbours(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``[n, k]`` table: row i lists k distinct agents other than i; each agent appears k times."""
    dtype = index_dtype(n, n * (k + 1))
    if 2 * k > n - 1:
        keep = ~np.eye(n, dtype=bool)
        keep[np.arange(n)[:, None], _regular_in_neighbours(n, n - 1 - k, rng)] = False
        return np.nonzero(keep)[1].astype(dtype).reshape(n, k)
    stubs = np.repeat(np.arange(n, dtype=dtype), k)
    for _ in range(_REGULAR_RESTARTS):
        others = rng.permutation(stubs).reshape(n, k)
        if _repair_regular(others, rng):
            return others
    raise RuntimeError(f"random_regular({n}, {k}): the switch repair did not finish in "
                       f"{_REGULAR_RESTARTS} restarts; please report this with n, k and seed.")


def _bad_entries(others: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, position) of every self-loop and every repeat after its first copy in ``rows``."""
    block = others[rows]
    order = np.argsort(block, axis=1, kind="stable")
    ordered = np.take_along_axis(block, order, axis=1)
    bad = ordered == rows[:, None]
    bad[:, 1:] |= ordered[:, 1:] == ordered[:, :-1]
    r, j = np.nonzero(bad)
    return rows[r], order[r, j]


class _Members:
    """``value in others[row]`` for many (row, value) pairs at once: a scan of the rows, or,
    when there are many more queries than agents, a sorted array of the keys ``row * n +
    value`` kept up to date through the swaps (O(log(n k)) per query, O(n k) per update)."""

    def __init__(self, others: np.ndarray, indexed: bool):
        self.others = others
        self.n = others.shape[0]
        self.keys = None
        if indexed:
            rows = np.arange(self.n, dtype=np.int64)[:, None]
            self.keys = np.sort((rows * self.n + others).reshape(-1))

    def holds(self, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        if self.keys is not None:
            q = rows.astype(np.int64) * self.n + values
            order = np.argsort(q)                       # sorted queries: cache-friendly
            at = np.searchsorted(self.keys, q[order])
            found = np.zeros(q.size, dtype=bool)
            inside = at < self.keys.size
            found[order[inside]] = self.keys[at[inside]] == q[order[inside]]
            return found
        out = np.zeros(rows.size, dtype=bool)
        step = max(1, 2**22 // max(self.others.shape[1], 1))
        for lo in range(0, rows.size, step):
            hi = lo + step
            out[lo:hi] = (self.others[rows[lo:hi]] == values[lo:hi, None]).any(axis=1)
        return out

    def replace(self, rows: np.ndarray, old: np.ndarray, new: np.ndarray) -> None:
        """Record that ``others[rows[m]]`` lost one copy of ``old[m]`` and gained ``new[m]``."""
        if self.keys is None or rows.size == 0:
            return
        rows = rows.astype(np.int64) * self.n
        gone = np.sort(rows + old)
        rank = np.arange(gone.size) - np.searchsorted(gone, gone, side="left")
        kept = np.delete(self.keys, np.searchsorted(self.keys, gone, side="left") + rank)
        came = np.sort(rows + new)
        self.keys = np.insert(kept, np.searchsorted(kept, came), came)


def _first(keys: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Mask of the ``ok`` entries that come first among the ``ok`` entries with their key."""
    idx = np.flatnonzero(ok)
    _, first = np.unique(keys[idx], return_index=True)
    out = np.zeros(ok.shape, dtype=bool)
    out[idx[first]] = True
    return out


def _swap_round(others: np.ndarray, rows: np.ndarray, pos: np.ndarray, members: _Members,
                active: np.ndarray, rng: np.random.Generator
                ) -> tuple[int, np.ndarray, np.ndarray]:
    """One batch of independent repairing swaps; returns how many were made and the bad
    entries left (a superset: a partner's swap may also have mended one of its own)."""
    n, k = others.shape
    chosen = np.unique(rows)
    chosen = chosen[rng.random(chosen.size) < 0.5]      # rows repaired in this round
    active[chosen] = True
    take = active[rows]
    r, a = rows[take], pos[take]
    u = others[r, a]
    partner = rng.integers(n, size=r.size)
    slot = rng.integers(k, size=r.size)
    v = others[partner, slot]
    # partner rows are outside this round's repaired rows; a row gets each new value and gives
    # each slot at most once, so every test reads the rows as they are at the start of the round
    ok = ~active[partner] & (v != r) & (u != partner)
    active[chosen] = False
    ok &= ~members.holds(r, v) & ~members.holds(partner, u)
    wide_r, wide_p = r.astype(np.int64), partner.astype(np.int64)
    ok &= _first(wide_r * n + v, ok) & _first(wide_p * n + u, ok) & _first(wide_p * k + slot, ok)
    others[r[ok], a[ok]] = v[ok]
    others[partner[ok], slot[ok]] = u[ok]
    members.replace(np.concatenate([r[ok], partner[ok]]), np.concatenate([u[ok], v[ok]]),
                    np.concatenate([v[ok], u[ok]]))
    left = ~ok
    return (int(ok.sum()), np.concatenate([rows[~take], r[left]]),
            np.concatenate([pos[~take], a[left]]))


def _repair_regular(others: np.ndarray, rng: np.random.Generator) -> bool:
    """Remove self-loops and repeats from the rows of ``others`` in place by swaps; False if
    the budget of the one-at-a-time phase ran out (the caller draws again)."""
    n, k = others.shape
    ordered = np.sort(others, axis=1)
    bad_row = (ordered == np.arange(n, dtype=others.dtype)[:, None]).any(axis=1)
    bad_row |= (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
    del ordered
    rows, pos = _bad_entries(others, np.flatnonzero(bad_row))
    if rows.size > _SEQUENTIAL_REPAIR:
        members = _Members(others, indexed=rows.size > 8 * n)
        active = np.zeros(n, dtype=bool)
        stalled = 0
        while rows.size > _SEQUENTIAL_REPAIR and stalled < 8:
            made, rows, pos = _swap_round(others, rows, pos, members, active, rng)
            stalled = 0 if made else stalled + 1
        rows, pos = _bad_entries(others, np.unique(rows))
    budget = 10_000 + 1_000 * rows.size
    for i in np.unique(rows).tolist():
        row = others[i]
        while True:
            values = row.tolist()
            seen: set[int] = set()
            a = -1
            for j, x in enumerate(values):
                if x == i or x in seen:
                    a = j
                    break
                seen.add(x)
            if a < 0:
                break
            u = values[a]
            rest = set(values[:a] + values[a + 1:])
            while True:
                budget -= 1
                if budget < 0:
                    return False
                i2 = int(rng.integers(n))
                b = int(rng.integers(k))
                v = int(others[i2, b])
                # v != u follows: a repeated u is in rest, a self-loop u == i is refused
                if i2 == i or v == i or v in rest or u == i2 or bool((others[i2] == u).any()):
                    continue
                row[a] = v
                others[i2, b] = u
                break
    return True


# --------------------------------------------------------------------------------------------
# Random geometric graphs
# --------------------------------------------------------------------------------------------


def random_geometric(n: int, radius: float, *, dim: int = 2, seed: int = 0, torus: bool = False,
                     sparse: bool = False) -> AdjacencyLike:
    """Random geometric graph: n agents at uniform random points of the unit cube, two agents
    hearing each other iff their points are at Euclidean distance at most ``radius``.

    Construction: the points are ``numpy.random.default_rng(seed).random((n, dim))``, i.e.
    uniform in ``[0, 1)^dim``; the points are not returned (the builders return an adjacency
    only), and that one line redraws them for a plot or a check. Agents ``i != j`` hear each
    other iff ``|x_i - x_j| <= radius``; with ``torus=True`` the distance is that of the flat
    torus ``[0, 1)^dim``, coordinate differences taken modulo 1 (``min(d, 1 - d)`` per
    coordinate), so there is no boundary. The pairs come from
    ``scipy.spatial.cKDTree(points).query_pairs(radius)`` (``boxsize=1.0`` for the torus): a
    k-d tree, O(n log n + edges) time and O(n + edges) memory, never an ``[n, n]`` distance
    matrix. The graph is undirected (symmetric) with self-loops, and the dense and the sparse
    result of a seed are the same graph.

    The expected number of others an agent hears is ``(n - 1) V`` on the torus, ``V`` the
    volume of the ball of radius ``radius`` (``pi r^2`` in 2-D, for ``radius <= 1/2``); in the
    plain cube the agents near the boundary hear fewer (in 2-D, ``radius <= 1``: ``(n - 1)
    (pi r^2 - 8 r^3 / 3 + r^4 / 2)``). The graph is connected with high probability once
    ``n V`` exceeds about ``ln n``; it is not checked. Measured (2-core machine): n = 10^6,
    2-D, mean degree 8, in 0.8-0.9 s (plain) and about 1 s (torus) with ``sparse=True``.

    Args:
        n: number of agents (>= 1).
        radius: connection radius, a finite number > 0.
        dim: dimension of the cube (>= 1).
        seed: non-negative integer seed of ``numpy.random.default_rng``.
        torus: measure distances on the torus (wrap around every face) instead of the cube.
        sparse: return a ``scipy.sparse.csr_array`` built in O(n + edges) memory instead of a
            dense array (dense is refused above :data:`DENSE_LIMIT` agents).

    Returns:
        Boolean adjacency ``[n, n]``, ``adj[i, j]`` True iff agent i receives from agent j,
        symmetric, diagonal True.

    Raises:
        ValueError: a bad n, radius, dim, seed, torus or sparse (the message names it), or a
            dense request above the limit.

    Example:
        >>> import numpy as np
        >>> adj = random_geometric(50, 0.3, seed=4)
        >>> bool((adj == adj.T).all()), bool(adj.diagonal().all())
        (True, True)
        >>> points = np.random.default_rng(4).random((50, 2))     # the points of the graph
        >>> near = np.linalg.norm(points[:, None] - points[None], axis=-1) <= 0.3
        >>> bool((near == adj).all())
        True
        >>> random_geometric(10**5, 0.005, seed=4, sparse=True).shape
        (100000, 100000)
    """
    n = check_int(n, "n (the number of agents)", minimum=1)
    if (isinstance(radius, bool | np.bool_) or not isinstance(radius, numbers.Real)
            or not math.isfinite(float(radius)) or float(radius) <= 0.0):
        raise ValueError(f"radius must be a finite number > 0; got {radius!r} "
                         f"({type(radius).__name__}).")
    radius = float(radius)
    dim = check_int(dim, "dim (the dimension of the cube)", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    if not isinstance(torus, bool | np.bool_):
        raise ValueError(f"torus must be True or False; got {torus!r} ({type(torus).__name__}).")
    sparse = _wants_sparse(n, sparse, "random_geometric")
    points = np.random.default_rng(seed).random((n, dim))
    tree = cKDTree(points, boxsize=1.0 if torus else None)
    pairs = tree.query_pairs(radius, output_type="ndarray")       # [E, 2], i < j
    low, high = pairs[:, 0], pairs[:, 1]
    if sparse:
        return csr_from_pairs(n, np.concatenate([low, high]), np.concatenate([high, low]))
    a = np.eye(n, dtype=bool)
    a[low, high] = True
    a[high, low] = True
    return a
