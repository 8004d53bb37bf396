"""Graph checks on the host: strong connectivity, connectivity windows (B-connectivity),
diameter, minimum positive weight.

These run outside jit with numpy/scipy. Checks return plain booleans or numbers; the
``*_report`` companions explain a failure (which window is not strongly connected).

Example:
    >>> from decentral.graphs import ring, path, connectivity_window
    >>> connectivity_window([path(3), ring(3)])      # the second graph alone is strongly connected
    2
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, shortest_path

from decentral._checks import check_int

from ._validate import as_pattern, as_weight_stack
from .sequences import GraphSequence
from .weights import WEIGHT_RULES, stochasticity_violations

__all__ = [
    "is_strongly_connected",
    "diameter",
    "min_positive_weight",
    "connectivity_window",
    "connectivity_window_report",
    "WindowReport",
    "window_unions",
    "pattern_stack",
    "sequence_stochasticity_failure",
    "require_stochastic_sequence",
]


def _pattern(graph) -> np.ndarray:
    g = np.asarray(graph)
    if g.ndim == 3:
        raise ValueError(f"expected one [n, n] graph, got a stack of shape {g.shape}; check "
                         "the graphs one by one, or their union with connectivity_window.")
    return as_pattern(g, name="graph")


def _strongly_connected(p: np.ndarray) -> bool:
    n_comp, _ = connected_components(csr_matrix(p), directed=True, connection="strong")
    return n_comp == 1


def is_strongly_connected(graph) -> bool:
    """True iff the directed graph of ``graph`` is strongly connected (every agent reaches
    every other along edges ``j -> i``).

    Args:
        graph: a boolean adjacency with self-loops, or a float weight matrix with a positive
            diagonal (read by its pattern ``W > 0``).

    Example:
        >>> from decentral.graphs import path, ring, row_stochastic
        >>> is_strongly_connected(ring(4)), is_strongly_connected(row_stochastic(path(4)))
        (True, False)
    """
    return _strongly_connected(_pattern(graph))


def diameter(graph) -> int | float:
    """Longest shortest directed path (hops), ``math.inf`` if not strongly connected.

    Takes the same graphs as :func:`is_strongly_connected`. Orientation does not change it
    (reversing every edge keeps all distances' maximum).

    Example:
        >>> from decentral.graphs import ring
        >>> diameter(ring(5)), diameter(ring(5, directed=False))
        (4, 2)
    """
    p = _pattern(graph)
    if p.shape[0] == 1:
        return 0
    dist = shortest_path(csr_matrix(p & ~np.eye(p.shape[0], dtype=bool)), unweighted=True)
    d = float(dist.max())
    return math.inf if not np.isfinite(d) else int(d)


def min_positive_weight(Ws) -> float:
    """β: the smallest positive entry over one weight matrix or a stack ``[T, n, n]``."""
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


@dataclass(frozen=True)
class WindowReport:
    """Why a window length fails: the first window whose union is not strongly connected."""

    window: int
    holds: bool
    failing_start: int | None
    unreachable_pairs: int
    how: str

    def __str__(self) -> str:
        if self.holds:
            return (f"every window of {self.window} consecutive graphs is strongly connected "
                    f"({self.how})")
        return (f"the union of graphs {self.failing_start}..{self.failing_start + self.window - 1}"
                f" is not strongly connected ({self.unreachable_pairs} ordered pairs unreachable;"
                f" {self.how})")


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
    pats, wrap, how = pattern_stack(seq, horizon=horizon, key=key)
    if not wrap and window > pats.shape[0]:
        raise ValueError(f"window {window} is longer than the {pats.shape[0]} graphs given.")
    unions, starts = window_unions(pats, int(window), wrap)
    for s, u in zip(starts, unions, strict=True):
        if not _strongly_connected(u):
            reach = shortest_path(csr_matrix(u), unweighted=True)
            return WindowReport(int(window), False, int(s), int(np.sum(~np.isfinite(reach))), how)
    return WindowReport(int(window), True, None, 0, how)


def connectivity_window(seq, *, horizon: int | None = None, key=None) -> int | None:
    """Smallest L such that the union over every window of L consecutive graphs is strongly
    connected (uniform strong connectivity, Lin–Gupta–Liu Definition 1; B-connectivity).

    * a finite list or explicit stack: sliding windows inside the list (no wrap-around);
    * static / periodic sequences: windows wrap around the period (L ≤ P or None);
    * random sequences: *observed* over ``horizon`` steps (a statement about that draw);
    * ``horizon=H`` restricts any sequence to its steps ``0 … H-1`` (no wrap-around); a
      finite list or explicit stack with fewer than H graphs is refused (ValueError).

    Example:
        >>> from decentral.graphs import path
        >>> connectivity_window([path(3), path(3).T] * 5, horizon=4)
        2

    Returns None when no window length works (even the union of everything given is not
    strongly connected).
    """
    pats, wrap, _ = pattern_stack(seq, horizon=horizon, key=key)
    t = pats.shape[0]
    if not _strongly_connected(pats.any(axis=0)):
        return None
    # Monotone in L (a longer window contains a shorter one): binary search on [1, t].
    def every_window_connected(window: int) -> bool:
        unions, _ = window_unions(pats, window, wrap)
        return all(_strongly_connected(u) for u in unions)

    lo, hi = 1, t
    while lo < hi:
        mid = (lo + hi) // 2
        if every_window_connected(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


# ---- stochasticity of a whole sequence (one verdict for every form and backend) ------------

#: The kinds of stochasticity every matrix of a weight rule has by construction.
_RULE_KINDS = {"row": ("row",), "column": ("column",), "metropolis": ("row", "column")}

_KIND_FIX = {"row": "Build them with rule='row' (or 'metropolis' on an undirected graph).",
             "column": "Build them with rule='column' (or 'metropolis' on an undirected graph)."}


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
    stack = seq._fixed_host()
    for k in kinds:
        bad = [(t, _first_violation(w, k)) for t, w in enumerate(stack)]
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
