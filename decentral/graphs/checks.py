"""Graph checks on the host: strong connectivity, connectivity windows (B-connectivity),
diameter, minimum positive weight.

These run outside jit with numpy/scipy. Checks return plain booleans or numbers; the
``*_report`` companions explain a failure (which window is not strongly connected).

:func:`is_strongly_connected`, :func:`diameter`, :func:`diameter_bounds` and
:func:`min_positive_weight` also take one scipy sparse graph (a boolean adjacency or a float
weight matrix) and then work on its stored entries with :mod:`scipy.sparse.csgraph`, never
through an ``[n, n]`` array; the connectivity windows take dense graphs only.

Example:
    >>> from decentral.graphs import ring, path, connectivity_window
    >>> connectivity_window([path(3), ring(3)])      # the second graph alone is strongly connected
    2
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, shortest_path

from decentral._checks import check_int, is_float_dtype, sum_tolerance

from ._validate import _refuse_sparse, as_pattern, as_weight_stack
from .builders import DENSE_LIMIT
from .sequences import GraphSequence
from .sparse import as_sparse_adjacency
from .weights import DEFAULT_TOL, WEIGHT_RULES, stochasticity_violations

__all__ = [
    "is_strongly_connected",
    "diameter",
    "diameter_bounds",
    "DIAMETER_EXACT_WORK",
    "min_positive_weight",
    "connectivity_window",
    "connectivity_window_report",
    "WindowReport",
    "window_unions",
    "pattern_stack",
    "sequence_stochasticity_failure",
    "require_stochastic_sequence",
]


#: Largest ``n × (stored entries)`` for which :func:`diameter` of a scipy sparse graph runs a
#: breadth-first search from every agent (about 9 s on this project's 2-core machine in
#: 2026-12: the exponential graph reaches it at n = 8000). Above it :func:`diameter` refuses and
#: :func:`diameter_bounds` gives a lower and an upper bound from a few searches.
DIAMETER_EXACT_WORK = 10**9

# rows of distances per call of the all-sources search (a block of [rows, n] float64 ≈ 32 MB)
_DISTANCE_BLOCK_ENTRIES = 2**22


def _pattern(graph) -> np.ndarray:
    g = np.asarray(graph)
    if g.ndim == 3:
        raise ValueError(f"expected one [n, n] graph, got a stack of shape {g.shape}; check "
                         "the graphs one by one, or their union with connectivity_window.")
    return as_pattern(g, name="graph")


def _sparse_shape(x, name: str) -> int:
    """``n`` of a scipy sparse ``[n, n]`` graph, after checking the shape."""
    shape = x.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square [n, n] sparse matrix; got shape {shape}.")
    if shape[0] == 0:
        raise ValueError(f"{name} has no agents (shape {shape}); need n >= 1.")
    return int(shape[0])


def _sparse_weights(W, name: str = "W") -> sp.csr_array:
    """A canonical float CSR copy of a scipy sparse weight matrix after the checks of the dense
    ``as_weights``: square, real numbers (integers become float64, booleans are refused),
    every stored entry finite and non-negative. Explicit zeros are dropped."""
    _sparse_shape(W, name)
    dtype = W.dtype
    if dtype == np.bool_ or not np.issubdtype(dtype, np.number) or \
            np.issubdtype(dtype, np.complexfloating):
        raise ValueError(f"{name} must hold real numbers; got dtype {dtype}.")
    w = sp.csr_array(W, dtype=dtype if is_float_dtype(dtype) else np.float64, copy=True)
    w.sum_duplicates()
    data = w.data
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{name} has a NaN or infinite entry (first at index "
                         f"{_stored_index(w, ~np.isfinite(data))}); weights must be finite.")
    if np.any(data < 0):
        where = _stored_index(w, data < 0)
        raise ValueError(f"{name} has a negative entry {w[tuple(where)]!r} at index {where}; "
                         "mixing weights must be non-negative.")
    w.eliminate_zeros()
    return w


def _stored_index(w: sp.csr_array, mask: np.ndarray) -> list[int]:
    """``[row, column]`` of the first stored entry of ``w`` (row-major order) where ``mask``."""
    k = int(np.flatnonzero(mask)[0])
    row = int(np.searchsorted(w.indptr, k, side="right") - 1)
    return [row, int(w.indices[k])]


def _sparse_pattern(graph, name: str = "graph") -> sp.csr_array:
    """Boolean CSR pattern of a scipy sparse graph: a boolean adjacency (self-loops required)
    or a float weight matrix (finite, non-negative, positive diagonal; the pattern is its
    positive stored entries). The same checks and messages as the dense ``as_pattern``."""
    _sparse_shape(graph, name)
    if graph.dtype == np.bool_:
        return as_sparse_adjacency(graph, name=name)
    if not is_float_dtype(graph.dtype):
        raise ValueError(
            f"{name} must be a boolean adjacency or a float weight matrix; got dtype "
            f"{graph.dtype}. For a 0/1 adjacency use `{name}.astype(bool)`.")
    w = _sparse_weights(graph, name)
    diag = w.diagonal()
    if np.any(diag <= 0):
        bad = np.flatnonzero(diag <= 0).tolist()
        raise ValueError(f"{name} has no self-loop weight at agents {bad[:10]}: every agent "
                         "must hear itself (W[i, i] > 0).")
    return sp.csr_array((np.ones(w.nnz, dtype=bool), w.indices, w.indptr), shape=w.shape)


def _strongly_connected(p) -> bool:
    n_comp, _ = connected_components(csr_matrix(p), directed=True, connection="strong")
    return n_comp == 1


def is_strongly_connected(graph) -> bool:
    """True iff the directed graph of ``graph`` is strongly connected (every agent reaches
    every other along edges ``j -> i``).

    Args:
        graph: a boolean adjacency with self-loops, or a float weight matrix with a positive
            diagonal (read by its pattern ``W > 0``); dense, or scipy sparse (any format: the
            pattern is then the stored entries, positive for weights), checked in
            O(n + stored entries) with ``scipy.sparse.csgraph.connected_components``.

    Example:
        >>> from decentral.graphs import exponential, path, ring, row_stochastic
        >>> is_strongly_connected(ring(4)), is_strongly_connected(row_stochastic(path(4)))
        (True, False)
        >>> is_strongly_connected(exponential(10**5, sparse=True))
        True
    """
    if sp.issparse(graph):
        return _strongly_connected(_sparse_pattern(graph))
    return _strongly_connected(_pattern(graph))


def diameter(graph) -> int | float:
    """Longest shortest directed path (hops), ``math.inf`` if not strongly connected.

    Takes the same graphs as :func:`is_strongly_connected`. Orientation does not change it
    (reversing every edge keeps all distances' maximum).

    A scipy sparse graph is searched breadth-first from every agent, in blocks of sources
    (O(n × stored entries) time, O(n + stored entries) memory beyond a 32 MB block of
    distances), while ``n × stored entries <= DIAMETER_EXACT_WORK``; a larger strongly
    connected one is refused with a ValueError pointing at :func:`diameter_bounds`. Whether
    it is strongly connected is decided first, at any size (``math.inf`` otherwise).

    Example:
        >>> from decentral.graphs import ring
        >>> diameter(ring(5)), diameter(ring(5, directed=False))
        (4, 2)
        >>> diameter(ring(5, sparse=True))
        4
    """
    if sp.issparse(graph):
        return _sparse_diameter(_sparse_pattern(graph))
    p = _pattern(graph)
    if p.shape[0] == 1:
        return 0
    dist = shortest_path(csr_matrix(p & ~np.eye(p.shape[0], dtype=bool)), unweighted=True)
    d = float(dist.max())
    return math.inf if not np.isfinite(d) else int(d)


def _sparse_diameter(p: sp.csr_array) -> int | float:
    n = p.shape[0]
    if n == 1:
        return 0
    if not _strongly_connected(p):
        return math.inf
    if n * p.nnz > DIAMETER_EXACT_WORK:
        raise ValueError(
            f"the exact diameter of this sparse graph needs a breadth-first search from each "
            f"of its {n} agents over {p.nnz} stored entries (n × entries = {n * p.nnz:.2e} > "
            f"DIAMETER_EXACT_WORK = {DIAMETER_EXACT_WORK:.0e}); use "
            "decentral.graphs.checks.diameter_bounds(graph) for a lower and an upper bound.")
    g = csr_matrix(p)
    block = max(1, _DISTANCE_BLOCK_ENTRIES // n)
    longest = 0.0
    for start in range(0, n, block):
        sources = np.arange(start, min(n, start + block))
        dist = shortest_path(g, method="D", unweighted=True, indices=sources)
        longest = max(longest, float(dist.max()))
    return int(longest)


def _eccentricities(g: csr_matrix, gt: csr_matrix, source: int) -> tuple[int, int, int, int]:
    """Hops from ``source`` to its farthest agent along the edges of ``g`` and along the
    reversed edges (``gt``), with those farthest agents."""
    fwd = shortest_path(g, method="D", unweighted=True, indices=source)
    bwd = shortest_path(gt, method="D", unweighted=True, indices=source)
    far_f, far_b = int(np.argmax(fwd)), int(np.argmax(bwd))
    return int(fwd[far_f]), int(bwd[far_b]), far_f, far_b


def diameter_bounds(graph, *, sweeps: int = 2) -> tuple[int | float, int | float]:
    """A lower and an upper bound on :func:`diameter`, from ``2 * sweeps`` breadth-first
    searches: for graphs too large for the exact search (any size; dense or scipy sparse).

    Each sweep searches from one agent r along the edges and against them, giving its out- and
    in-eccentricities e⁺(r), e⁻(r) (hops to the farthest agent either way). Every
    eccentricity is at most the diameter D, and every shortest path u → v is at most the one
    through r, so ``max(e⁺(r), e⁻(r)) <= D <= e⁺(r) + e⁻(r)``; the bounds are the best over
    the sweeps. The first sweep starts at the agent with the most stored entries in its row and
    column, each next one at the agent farthest from the previous start (the double sweep, which
    often finds D itself as the lower bound). For an undirected graph the upper bound is at
    most twice the lower one; when they are equal they are D. A graph that is not strongly
    connected gives ``(math.inf, math.inf)``.

    Cost: O(sweeps × stored entries) time (about 1.5 s per sweep on the exponential graph at
    n = 10^6, 2.1·10^7 entries, on this project's 2-core machine in 2026-12), O(n + stored
    entries) memory (the reversed graph is built once).

    Args:
        graph: as for :func:`is_strongly_connected` (dense or scipy sparse).
        sweeps: number of agents searched from (>= 1).

    Returns:
        ``(lower, upper)`` with ``lower <= diameter(graph) <= upper``.

    Example:
        >>> from decentral.graphs import exponential, ring
        >>> diameter_bounds(ring(6, directed=False))
        (3, 6)
        >>> diameter_bounds(exponential(1024, sparse=True))      # diameter(...) is 10
        (10, 20)
    """
    sweeps = check_int(sweeps, "sweeps", minimum=1)
    p = _sparse_pattern(graph) if sp.issparse(graph) else csr_matrix(_pattern(graph))
    n = p.shape[0]
    if n == 1:
        return 0, 0
    if not _strongly_connected(p):
        return math.inf, math.inf
    g = csr_matrix(p)
    gt = csr_matrix(g.T)
    degree = np.diff(g.indptr) + np.diff(gt.indptr)
    source, lower, upper = int(np.argmax(degree)), 0, math.inf
    for k in range(sweeps):
        e_out, e_in, far_out, far_in = _eccentricities(g, gt, source)
        lower, upper = max(lower, e_out, e_in), min(upper, e_out + e_in)
        source = far_out if k % 2 == 0 else far_in
    return lower, upper


def min_positive_weight(Ws) -> float:
    """β: the smallest positive entry over one weight matrix or a stack ``[T, n, n]``; one
    scipy sparse weight matrix is read by its stored entries."""
    if sp.issparse(Ws):
        pos = _sparse_weights(Ws, "Ws").data
    else:
        if isinstance(Ws, list | tuple) and any(sp.issparse(w) for w in Ws):
            _refuse_sparse(next(w for w in Ws if sp.issparse(w)), "an element of Ws")
        w = as_weight_stack(Ws)
        pos = w[w > 0]
    if pos.size == 0:
        raise ValueError("the weights have no positive entry.")
    return float(pos.min())


def pattern_stack(seq, *, horizon: int | None = None, key=None) -> tuple[np.ndarray, bool, str]:
    """Boolean patterns ``[T, n, n]`` of a sequence, whether windows wrap, and how observed.

    ``seq`` may be a list / stack of graphs (boolean adjacencies with self-loops or weight
    matrices with a positive diagonal; finite, no wrap), or a :class:`GraphSequence`: static
    and periodic forms wrap over their period; explicit stacks are finite; random forms are
    *observed* over ``horizon`` steps (``key`` for per-seed draws).

    With ``horizon=H`` only the steps ``0 … H-1`` are examined (windows that fit inside them,
    no wrap-around); a finite list or explicit stack shorter than H is refused.
    """
    _refuse_sparse_windows(seq)
    if horizon is not None:
        horizon = check_int(horizon, "horizon", minimum=1)
    if isinstance(seq, GraphSequence):
        if seq.form == "random":
            if horizon is None:
                raise ValueError("a random sequence is only observed over a horizon: pass "
                                 "horizon=T (and key= for per-seed draws).")
            return seq.weights_host(horizon, key=key) > 0, False, f"observed over {horizon} steps"
        if seq.form != "explicit":
            if horizon is None:
                return seq.weights_host(seq.period) > 0, True, f"periodic, period {seq.period}"
            return (seq.weights_host(horizon) > 0, False,
                    f"periodic, period {seq.period}, observed over {horizon} steps")
        pats, how = seq.weights_host(seq.length) > 0, "finite explicit stack"
    else:
        arr = np.asarray(seq)
        if arr.ndim == 2:
            arr = arr[None]
        if arr.ndim != 3:
            raise ValueError(f"expected a list or stack of [n, n] graphs, got shape {arr.shape}.")
        pats = np.stack([as_pattern(a, name=f"graph {k}") for k, a in enumerate(arr)])
        how = "finite list"
    if horizon is not None:
        if horizon > pats.shape[0]:
            raise ValueError(f"horizon={horizon} is longer than the {pats.shape[0]} graphs "
                             "given; pass horizon <= their number (or None for all of them).")
        pats, how = pats[:horizon], f"{how}, first {horizon} graphs"
    return pats, False, how


def _refuse_sparse_windows(seq) -> None:
    """The connectivity windows take dense graphs only: say so for a scipy sparse graph given
    alone or inside a list."""
    if sp.issparse(seq):
        _refuse_sparse(seq, "seq")
    if isinstance(seq, list | tuple):
        for k, graph in enumerate(seq):
            if sp.issparse(graph):
                _refuse_sparse(graph, f"seq[{k}]")


@dataclass(frozen=True)
class WindowReport:
    """Why a window length fails: the first window whose union is not strongly connected."""

    window: int
    holds: bool
    failing_start: int | None
    unreachable_pairs: int | None      # None: a large sparse union with too many components
    how: str

    def __str__(self) -> str:
        if self.holds:
            return (f"every window of {self.window} consecutive graphs is strongly connected "
                    f"({self.how})")
        pairs = ("more than " + str(UNREACHABLE_COUNT_MAX_COMPONENTS) + " strongly connected "
                 "components") if self.unreachable_pairs is None else \
            f"{self.unreachable_pairs} ordered pairs unreachable"
        return (f"the union of graphs {self.failing_start}..{self.failing_start + self.window - 1}"
                f" is not strongly connected ({pairs}; {self.how})")


def window_unions(pats: np.ndarray, window: int, wrap: bool) -> tuple[np.ndarray, np.ndarray]:
    """Unions of every window of ``window`` consecutive patterns ``pats [T, N, N]`` (bool),
    vectorized via cumsums.

    Returns ``(unions, starts)``: ``unions[k]`` is the union of ``pats[starts[k] : starts[k] +
    window]``; with ``wrap`` (a periodic sequence) every start ``0..T-1`` wraps around the
    period, without it the starts are ``0..T-window``."""
    t = pats.shape[0]
    if wrap:
        reps = math.ceil((t + window) / t)
        pats = np.concatenate([pats] * reps)[: t + window - 1]
        starts = np.arange(t)
    else:
        starts = np.arange(t - window + 1)
    csum = np.concatenate([np.zeros((1,) + pats.shape[1:], np.int64),
                           np.cumsum(pats, axis=0, dtype=np.int64)])
    unions = (csum[starts + window] - csum[starts]) > 0
    return unions, starts


def connectivity_window_report(seq, window: int, *, horizon: int | None = None,
                               key=None) -> WindowReport:
    """Check one window length L and explain the first failing window (see
    :func:`connectivity_window`)."""
    window = check_int(window, "window", minimum=1)
    pats, wrap, how = _window_patterns(seq, horizon, key)
    if not wrap and window > len(pats):
        raise ValueError(f"window {window} is longer than the {len(pats)} graphs given.")
    for s, u in _unions(pats, int(window), wrap):
        if not _strongly_connected(u):
            return WindowReport(int(window), False, int(s), _unreachable_pairs(u), how)
    return WindowReport(int(window), True, None, 0, how)


def connectivity_window(seq, *, horizon: int | None = None, key=None) -> int | None:
    """Smallest L such that the union over every window of L consecutive graphs is strongly
    connected (uniform strong connectivity, Lin–Gupta–Liu Definition 1; B-connectivity).

    * a finite list or explicit stack: sliding windows inside the list (no wrap-around);
    * static / periodic sequences: windows wrap around the period (L ≤ P or None);
    * random sequences: *observed* over ``horizon`` steps (a statement about that draw);
    * ``horizon=H`` restricts any sequence to its steps ``0 … H-1`` (no wrap-around); a
      finite list or explicit stack with fewer than H graphs is refused (ValueError).

    Sparse graphs: a list holding scipy sparse graphs, and a fixed-form sparse-backend
    sequence of any size, are searched on their CSR patterns (one sum of L patterns per
    window, O(L x edges) each, and a strong-components search), never an ``[n, n]`` array.
    A random sparse sequence above :data:`DENSE_LIMIT` agents is refused.

    Example:
        >>> from decentral.graphs import path
        >>> connectivity_window([path(3), path(3).T] * 5, horizon=4)
        2

    Returns None when no window length works (even the union of everything given is not
    strongly connected).
    """
    pats, wrap, _ = _window_patterns(seq, horizon, key)
    t = len(pats)
    everything = pats.any(axis=0) if isinstance(pats, np.ndarray) else _csr_union(pats)
    if not _strongly_connected(everything):
        return None
    # Monotone in L (a longer window contains a shorter one): binary search on [1, t].
    def every_window_connected(window: int) -> bool:
        return all(_strongly_connected(u) for _, u in _unions(pats, window, wrap))

    lo, hi = 1, t
    while lo < hi:
        mid = (lo + hi) // 2
        if every_window_connected(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


# ---- windows of sparse sequences: the same questions on CSR patterns, never [n, n] ----------

def _window_patterns(seq, horizon, key):
    """What the windows are computed on: the dense ``pattern_stack`` where the graphs are
    dense or fit :data:`DENSE_LIMIT`; otherwise a list of boolean CSR patterns (a list of
    graphs with scipy sparse ones, a scipy sparse graph, or a fixed-form sparse-backend
    sequence above the limit), with the same wrap rule and description."""
    items = [seq] if sp.issparse(seq) else seq
    if isinstance(items, list | tuple) and any(sp.issparse(gr) for gr in items):
        pats = [_sparse_pattern(gr, f"seq[{k}]") if sp.issparse(gr) else
                sp.csr_array(as_pattern(gr, name=f"seq[{k}]")) for k, gr in enumerate(items)]
        if len({p.shape for p in pats}) != 1:
            raise ValueError(f"all graphs of seq need the same shape; got "
                             f"{sorted({p.shape for p in pats})}.")
        how = "finite list"
        if horizon is not None:
            horizon = check_int(horizon, "horizon", minimum=1)
            if horizon > len(pats):
                raise ValueError(f"horizon={horizon} is longer than the {len(pats)} graphs "
                                 "given; pass horizon <= their number (or None for all).")
            pats, how = pats[:horizon], f"{how}, first {horizon} graphs"
        return pats, False, how
    if not (isinstance(seq, GraphSequence) and seq.backend == "sparse" and seq.n > DENSE_LIMIT):
        pats, wrap, how = pattern_stack(seq, horizon=horizon, key=key)
        return pats, wrap, how
    if seq.form == "random":
        raise ValueError(f"the connectivity windows of a random sparse sequence of {seq.n} "
                         f"agents (above DENSE_LIMIT = {DENSE_LIMIT}) are not available: its "
                         "draws are observed through dense stacks. Check the base graph "
                         "(is_strongly_connected) or a smaller instance.")
    fixed = [sp.csr_array(w.astype(bool)) for w in seq.fixed_csr()]
    if horizon is not None:
        horizon = check_int(horizon, "horizon", minimum=1)
        steps = seq._steps(horizon, 0)
        return ([fixed[int(k)] for k in steps], False,
                f"periodic, period {seq.period}, observed over {horizon} steps"
                if seq.form != "explicit" else f"finite explicit stack, first {horizon} graphs")
    if seq.form == "explicit":
        return fixed, False, "finite explicit stack"
    return fixed, True, f"periodic, period {seq.period}"


def _csr_union(mats) -> sp.csr_array:
    """The union (logical or) of boolean CSR patterns."""
    u = mats[0]
    for m in mats[1:]:
        u = u + m                      # a boolean sum is the logical or
    return u


def _unions(pats, window: int, wrap: bool):
    """``(start, union)`` of every window: :func:`window_unions` on a dense stack; on CSR
    patterns one sum of ``window`` sparse patterns per start (O(window x edges) each)."""
    if isinstance(pats, np.ndarray):
        unions, starts = window_unions(pats, window, wrap)
        yield from zip(starts, unions, strict=True)
        return
    t = len(pats)
    for start in range(t if wrap else t - window + 1):
        yield start, _csr_union([pats[(start + k) % t] for k in range(window)])


#: Largest number of strongly connected components for which a sparse failing window's
#: unreachable pairs are counted (one search of the condensation per component).
UNREACHABLE_COUNT_MAX_COMPONENTS = 4096


def _unreachable_pairs(u) -> int | None:
    """Ordered pairs (i, j) such that j does not reach i in the union ``u`` (its dense
    shortest-path count on small graphs; on large sparse ones the count over the condensation,
    None above :data:`UNREACHABLE_COUNT_MAX_COMPONENTS` components)."""
    if not sp.issparse(u):
        reach = shortest_path(csr_matrix(u), unweighted=True)
        return int(np.sum(~np.isfinite(reach)))
    n = u.shape[0]
    n_comp, label = connected_components(csr_matrix(u), directed=True, connection="strong")
    if n_comp > UNREACHABLE_COUNT_MAX_COMPONENTS:
        return None
    sizes = np.bincount(label, minlength=n_comp)
    coo = u.tocoo()
    cond = csr_matrix((np.ones(coo.nnz, bool), (label[coo.row], label[coo.col])),
                      shape=(n_comp, n_comp))
    reach = shortest_path(cond, unweighted=True)        # n_comp x n_comp, over components
    reached = np.isfinite(reach).astype(np.int64) @ sizes   # agents reached from each class
    return int(n * n - np.dot(sizes, reached))


# ---- stochasticity of a whole sequence (one verdict for every form and backend) ------------

#: The kinds of stochasticity every matrix of a weight rule has by construction.
_RULE_KINDS = {"row": ("row",), "column": ("column",), "metropolis": ("row", "column")}

_KIND_FIX = {"row": "Build them with rule='row' (or 'metropolis' on an undirected graph).",
             "column": "Build them with rule='column' (or 'metropolis' on an undirected graph)."}


def _fixed_tables(seq: GraphSequence) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The ``(idx, weight, mask)`` host tables of a fixed sparse sequence, one per stored step."""
    lv = seq.leaves
    idx, weight, mask = (np.asarray(lv[k]) for k in ("idx", "weight", "mask"))
    return list(zip(idx, weight, mask, strict=True))


def _first_table_violation(table, kind: str) -> str | None:
    """:func:`_first_violation` of the weights a table ``(idx [n, K], weight, mask)`` holds
    (entries with ``mask`` and a nonzero weight; a neighbour listed twice adds up), summed one
    column of the table at a time in float64: O(n K) time, O(n) memory beyond the table."""
    idx, weight, mask = table
    n, width = idx.shape
    tol = sum_tolerance(weight.dtype, n, DEFAULT_TOL)
    sums = np.zeros(n, np.float64)
    for k in range(width):
        w_k = np.where(mask[:, k], weight[:, k], 0).astype(np.float64)
        if kind == "row":
            sums += w_k
        else:
            sums += np.bincount(idx[:, k], weights=w_k, minlength=n)
    bad = np.flatnonzero(~(np.abs(sums - 1.0) <= tol))       # NaN sums fail too
    if not bad.size:
        return None
    return f"{kind} {int(bad[0])} sums to {float(sums[bad[0]])!r}"


def _first_violation(w: np.ndarray, kind: str) -> str | None:
    bad = stochasticity_violations(w, axis=1 if kind == "row" else 0)
    if not bad:
        return None
    k, total = bad[0]
    return f"{kind} {k} sums to {total!r}"


def _random_witnesses(seq: GraphSequence) -> list[tuple[np.ndarray, str]]:
    """Patterns a random edge-drop sequence can draw that decide its verdict, with how each
    arises: the base graph (never dropped), and for ``drop_prob > 0`` one smallest sub-pattern
    that breaks the stochasticity a rule does not guarantee: a single kept directed edge
    (independent drops), or two kept undirected edges at one agent (symmetric drops; a graph
    whose edges are all disjoint keeps every rule doubly stochastic)."""
    if seq.leaves["base"] is None:
        raise ValueError(
            f"this random edge-drop sequence has {seq.n} agents, above DENSE_LIMIT = "
            f"{DENSE_LIMIT}, and its rule {seq.rule!r} does not guarantee the stochasticity "
            "asked for: the check by witness patterns needs the dense base graph, which a "
            "sequence this large does not hold. Use the rule the algorithm needs (row for "
            "pull mixing, column for push-sum).")
    base = np.asarray(seq.leaves["base"], bool)
    out = [(base, "the base graph (no edge dropped)")]
    if np.all(np.asarray(seq.leaves["drop_prob"]) == 0.0):     # (a swept drop_prob: any > 0)
        return out
    n = seq.n
    eye = np.eye(n, dtype=bool)
    off = base & ~eye
    if not seq.symmetric_drops:
        recv, send = np.nonzero(off)
        if recv.size:
            pat = eye.copy()
            pat[recv[0], send[0]] = True
            out.append((pat, f"only the edge {send[0]} -> {recv[0]} kept"))
        return out
    degree = off.sum(axis=1)
    hub = np.flatnonzero(degree >= 2)
    if hub.size:
        j = int(hub[0])
        i, k = np.flatnonzero(off[j])[:2]
        pat = eye.copy()
        pat[[i, j, j, k], [j, i, k, j]] = True
        out.append((pat, f"only the undirected edges {i} - {j} - {k} kept"))
    return out


def sequence_stochasticity_failure(seq: GraphSequence, kind: str = "row") -> str | None:
    """Why some matrix ``W(t)`` of ``seq`` is not ``kind``-stochastic, or None when none is.

    One verdict for a matrix whatever carries it: the weights of fixed forms (static,
    periodic, explicit, one-peer exponential) are checked as stored, on the dense and the
    sparse backend alike (the sparse tables are rebuilt into the same dense matrices); a
    random edge-drop sequence is judged by *every* matrix it can draw. Its rule guarantees
    one kind by construction (``row`` rows, ``column`` columns, ``metropolis`` both); for the
    other kind, ``drop_prob = 0`` leaves only the base graph (judged like a static one), and
    ``drop_prob > 0`` can draw any sub-graph of the base, so the kind holds only when every
    sub-graph keeps it (exactly when the base has no edge other than self-loops, or, with
    symmetric drops, when no agent has two neighbours). Tolerances follow the weights' dtype
    (:func:`~decentral.graphs.weights.effective_tolerance`).

    Args:
        seq: a :class:`GraphSequence` with concrete leaves.
        kind: ``"row"``, ``"column"`` or ``"doubly"``.

    Returns:
        None, or a message naming the step (or the drawn graph) and the row / column sum.

    Raises:
        ValueError: ``seq`` is not a GraphSequence, an unknown ``kind``, or traced leaves.

    Example:
        >>> from decentral.graphs import ring, static, random_edge_drops
        >>> sequence_stochasticity_failure(static(ring(4), rule="column"), "row") is None
        True
        >>> seq = random_edge_drops(ring(4), 0.5, rule="column", key=0)   # drops break rows
        >>> sequence_stochasticity_failure(seq, "row").split(" (")[0]
        'graph drawn with only the edge 3 -> 0 kept'
    """
    if not isinstance(seq, GraphSequence):
        raise ValueError(f"seq must be a decentral.graphs.GraphSequence; got "
                         f"{type(seq).__name__}.")
    if kind not in ("row", "column", "doubly"):
        raise ValueError(f"kind must be 'row', 'column' or 'doubly', got {kind!r}.")
    seq._require_concrete("stochasticity checks")
    kinds = ("row", "column") if kind == "doubly" else (kind,)
    if seq.form == "random":
        for k in kinds:
            if k in _RULE_KINDS[seq.rule]:
                continue
            for pat, how in _random_witnesses(seq):
                bad = _first_violation(WEIGHT_RULES[seq.rule](pat), k)
                if bad is not None:
                    drop = np.asarray(seq.leaves["drop_prob"])
                    return (f"graph drawn with {how} (rule={seq.rule!r}, drop_prob="
                            f"{float(np.max(drop)):g}): {bad}")
        return None
    # above the dense limit a sparse sequence is checked on its tables, O(n + edges)
    large = seq.backend == "sparse" and seq.n > DENSE_LIMIT
    stack = _fixed_tables(seq) if large else seq._fixed_host()
    first = _first_table_violation if large else _first_violation
    for k in kinds:
        bad = [(t, first(w, k)) for t, w in enumerate(stack)]
        bad = [(t, why) for t, why in bad if why is not None]
        if bad:
            steps = [t for t, _ in bad]
            return (f"the graphs at steps {steps[:5]}{' ...' if len(steps) > 5 else ''} of "
                    f"the {seq.form} sequence are not (step {bad[0][0]}: {bad[0][1]})")
    return None


def require_stochastic_sequence(seq: GraphSequence, kind: str = "row", *,
                                who: str = "this algorithm") -> None:
    """Raise ValueError when some matrix of ``seq`` is not ``kind``-stochastic (the one check
    every family runs on its graphs; see :func:`sequence_stochasticity_failure`).

    Args:
        seq: the sequence.
        kind: ``"row"`` (consensus-type mixing ``W @ X``), ``"column"`` (push-sum) or
            ``"doubly"``.
        who: the algorithm, for the message.

    Raises:
        ValueError: naming the failing step or drawn graph, with how to build the weights.

    Example:
        >>> from decentral.graphs import ring, static
        >>> require_stochastic_sequence(static(ring(4), rule="row"), "row", who="consensus")
    """
    why = sequence_stochasticity_failure(seq, kind)
    if why is None:
        return
    fix = _KIND_FIX.get(kind, "Build them with rule='metropolis' on an undirected graph.")
    what = {"row": "rows", "column": "columns", "doubly": "rows and columns"}[kind]
    raise ValueError(f"{who} needs {kind}-stochastic weights W(t) ({what} sum to 1); {why}. "
                     f"{fix}")
