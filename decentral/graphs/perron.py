"""Perron vectors and absolute probability sequences (host, numpy/scipy).

An absolute probability sequence of row-stochastic ``W_0, W_1, …`` is a sequence of stochastic
vectors with ``π_tᵀ = π_{t+1}ᵀ W_t`` for every t (Lin–Gupta–Liu Definition 2; Kolmogorov,
Blackwell). Under Assumption 1 and uniform strong connectivity it is unique (Lemma 1), and the
π-weighted average ``⟨θ⟩_t = Σ_i π_t^i θ_t^i`` is what consensus-type SA tracks. π_t depends
on the *future* matrices: it is a backward object.

Example:
    >>> from decentral.graphs import ring, row_stochastic, static, absolute_probability_sequence
    >>> pis = absolute_probability_sequence(static(row_stochastic(ring(4))), 10)
    >>> pis.shape
    (11, 4)
"""

from __future__ import annotations

import warnings
from collections import deque
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu

from decentral._checks import check_int, sum_tolerance

from ._validate import _refuse_sparse
from .checks import _sparse_weights
from .sequences import GraphSequence
from .weights import DEFAULT_TOL, effective_tolerance, require_stochastic

__all__ = ["perron_vector", "right_perron_vector", "absolute_probability_sequence", "APSResult",
           "closed_classes"]


#: A closed class of a scipy sparse W with at most this many agents is solved like a dense one
#: (Grassmann–Taksar–Heyman on its dense block, 0.05 s at 512 agents); larger ones iteratively.
SPARSE_GTH_LIMIT = 512

_POWER_TOL = 1e-13            # estimated l1 error of π at which the power iteration stops
_POWER_MAX_STEPS = 3000       # then the sparse LU solve takes over (slowly mixing chains)
_ROUNDOFF_CHANGE = 64 * np.finfo(np.float64).eps     # l1 change of one step at roundoff level


def closed_classes(pattern) -> list[np.ndarray]:
    """Closed classes of the pattern ``pattern[i, j]`` (i hears j): strongly connected groups
    of agents that hear nobody outside the group (the recurrent classes of the chain that moves
    i -> j with probability W[i, j]).

    ``pattern`` is a dense boolean array or a scipy sparse matrix whose nonzero stored entries
    are the edges (a sparse weight matrix may be passed as it is); the sparse one costs
    O(n + stored entries) with ``scipy.sparse.csgraph``.

    Example:
        >>> from decentral.graphs import path
        >>> [c.tolist() for c in closed_classes(path(3, sparse=True))]   # 0 hears nobody
        [[0]]
    """
    if sp.issparse(pattern):
        p = sp.csr_array(pattern, copy=True)
        p.eliminate_zeros()
        return _sparse_closed_classes(p)
    n_comp, label = connected_components(csr_matrix(pattern), directed=True,
                                         connection="strong")
    recv, send = np.nonzero(pattern)
    return _classes_hearing_nobody_outside(n_comp, label, recv, send)


def _sparse_closed_classes(p: sp.csr_array) -> list[np.ndarray]:
    """:func:`closed_classes` of a CSR matrix without stored zeros (not copied)."""
    n_comp, label = connected_components(p, directed=True, connection="strong")
    if n_comp == 1:
        return [np.arange(p.shape[0])]
    recv = np.repeat(np.arange(p.shape[0], dtype=p.indices.dtype), np.diff(p.indptr))
    return _classes_hearing_nobody_outside(n_comp, label, recv, p.indices)


def _classes_hearing_nobody_outside(n_comp: int, label: np.ndarray, recv: np.ndarray,
                                    send: np.ndarray) -> list[np.ndarray]:
    hears_outside = np.zeros(n_comp, dtype=bool)
    hears_outside[label[recv][label[recv] != label[send]]] = True
    return [np.flatnonzero(label == c) for c in range(n_comp) if not hears_outside[c]]


def _several_classes_message(classes: list[np.ndarray], what: str) -> str:
    shown = "; ".join(str(c.tolist()[:6])[:-1] + (", ...]" if c.size > 6 else "]")
                      for c in classes[:4])
    return (f"{what} has {len(classes)} closed classes (groups of agents that hear nobody "
            f"outside their group: {shown}{' ...' if len(classes) > 4 else ''}), so its "
            "Perron vector is not unique: every mixture of the classes' vectors is one. Check "
            "is_strongly_connected / connectivity_window; connect the classes.")


def _stationary_gth(P: np.ndarray) -> np.ndarray:
    """Stationary vector of an irreducible chain by Grassmann–Taksar–Heyman state reduction.

    Uses only the off-diagonal entries and never subtracts (the diagonal is implied by
    ``P[k, k] = 1 − Σ_{j≠k} P[k, j]``), so every entry of π is computed to high *relative*
    accuracy even with tiny weights (Grassmann, Taksar & Heyman, Oper. Res. 33(5), 1985).
    """
    a = np.array(P, dtype=np.float64)
    n = a.shape[0]
    for k in range(n - 1, 0, -1):           # censor state k: chain restricted to 0..k-1
        s = a[k, :k].sum()
        a[:k, k] /= s
        a[:k, :k] += np.outer(a[:k, k], a[k, :k])
    x = np.zeros(n)
    x[0] = 1.0
    for k in range(1, n):
        x[k] = x[:k] @ a[:k, k]
    return x / x.sum()


def _stationary_power(sub: sp.csr_array) -> np.ndarray | None:
    """Stationary vector of the irreducible chain ``sub`` by power iteration, or None when it
    does not reach ``_POWER_TOL`` within ``_POWER_MAX_STEPS`` steps.

    Iterates ``x <- x P`` from the uniform vector with ``P = sub`` when every agent keeps a
    positive self-weight (the chain is then aperiodic), else with the lazy chain
    ``P = (I + sub) / 2`` (same stationary vector, aperiodic). The error after a step is
    estimated as ``change * rho / (1 - rho)`` from the l1 change of the step and the largest of
    the last ten ratios ``rho`` of successive changes (the error contracts by about rho per
    step); it stops when that estimate is below ``_POWER_TOL`` or the change is at roundoff
    level."""
    m = sub.shape[0]
    wt = sp.csr_array(sub.T, dtype=np.float64)
    lazy = bool(np.any(sub.diagonal() <= 0))
    x = np.full(m, 1.0 / m)
    ratios: deque[float] = deque(maxlen=10)
    previous = None
    for _ in range(_POWER_MAX_STEPS):
        y = wt @ x
        if lazy:
            y = 0.5 * (x + y)
        y /= y.sum()
        change = float(np.abs(y - x).sum())
        x = y
        if change <= _ROUNDOFF_CHANGE:
            return x
        if previous is not None:
            ratios.append(change / previous)
            rho = max(ratios)
            if len(ratios) == ratios.maxlen and rho < 1 and change * rho / (1 - rho) < _POWER_TOL:
                return x
        previous = change
    return None


def _stationary_lu(sub: sp.csr_array) -> np.ndarray:
    """Stationary vector of the irreducible chain ``sub`` by one sparse LU solve.

    With ``x_0 = 1`` the balance equations of the other agents, ``x (I - P) = 0`` without its
    first column, are the nonsingular system ``(I - P)[1:, 1:]ᵀ x[1:] = P[0, 1:]ᵀ`` (an
    M-matrix for an irreducible chain); SuperLU solves it with a fill-reducing column order,
    which keeps the factors small for the slowly mixing graphs that reach this solver (rings,
    paths, grids: small separators), then x is normalised."""
    m = sub.shape[0]
    if m == 1:
        return np.ones(1)
    p = sp.csc_array(sub, dtype=np.float64)
    reduced = sp.csc_array(sp.eye_array(m - 1) - p[1:, 1:]).T.tocsc()
    rhs = p[[0], 1:].toarray().ravel()
    x = np.empty(m)
    x[0] = 1.0
    x[1:] = splu(reduced, permc_spec="COLAMD").solve(rhs)
    x = np.maximum(x, 0.0)
    return x / x.sum()


def _sparse_perron_vector(W, tol: float | None) -> np.ndarray:
    """:func:`perron_vector` of a scipy sparse W (same checks and messages)."""
    w = _sparse_weights(W, "W")
    n = w.shape[0]
    limit = sum_tolerance(w.dtype, n, DEFAULT_TOL if tol is None else tol)
    sums = w.sum(axis=1, dtype=np.float64)
    bad = np.flatnonzero(np.abs(sums - 1.0) > limit)
    if bad.size:
        shown = ", ".join(f"row {k} sums to {float(sums[k])!r}" for k in bad[:5])
        raise ValueError(f"W must be row-stochastic but {shown}"
                         f"{' ...' if bad.size > 5 else ''}. Build it with a weight rule "
                         "(row_stochastic, column_stochastic, metropolis).")
    classes = _sparse_closed_classes(w)        # w has no stored zeros
    if len(classes) != 1:
        raise ValueError(_several_classes_message(classes, "W"))
    closed = classes[0]
    sub = w if closed.size == n else w[closed][:, closed]
    pi = np.zeros(n)
    if closed.size <= SPARSE_GTH_LIMIT:
        pi[closed] = _stationary_gth(sub.toarray())
    else:
        found = _stationary_power(sub)
        pi[closed] = _stationary_lu(sub) if found is None else found
    return pi.astype(w.dtype)


def perron_vector(W, *, tol: float | None = None) -> np.ndarray:
    """Normalised left Perron vector π of a row-stochastic W: ``πᵀ W = πᵀ``, ``Σ π = 1``.

    π is the stationary vector of the chain ``i -> j`` with probability ``W[i, j]``. It is
    unique iff the graph has exactly one closed class (a strongly connected group of agents
    that hears nobody outside it); π is then positive on that class and zero elsewhere, and
    for an irreducible W (strongly connected graph) positive everywhere. With several closed
    classes a ValueError says so.

    The classes are found on the pattern ``W > 0``; π on the closed class comes from the
    Grassmann–Taksar–Heyman reduction in float64, which is subtraction-free: float32 weights
    and weights as small as 1e-10 give π to about the precision of W's entries. The result
    has W's floating dtype.

    A scipy sparse W (any format; its stored entries are the weights) gets the same checks
    and messages without an ``[n, n]`` array. A closed class of at most
    ``SPARSE_GTH_LIMIT = 512`` agents is solved by the same reduction on its dense block
    (the dense result, bit for bit); a larger one by power iteration in float64 (on the lazy
    chain ``(I + W) / 2`` when some agent of the class has no self-weight), stopped when the
    l1 error estimated from the contraction of successive steps is below 1e-13. A chain that
    mixes too slowly for 3000 steps (long rings, paths, grids) is solved instead by one
    sparse LU factorisation of its balance equations (SuperLU, fill-reducing order: small
    factors on such graphs). The exponential graph with random weights takes about 0.4 s at
    n = 10^5 and about 5 s at n = 10^6 (2.1·10^7 entries, about 215 steps) on this project's
    2-core machine (2026-12); a ring of 10^5 agents (LU) about 1 s.

    Args:
        W: row-stochastic ``[n, n]`` (rows sum to 1 within the dtype's tolerance), a numpy
            array or a scipy sparse matrix.
        tol: row-sum tolerance of the stochasticity check (default: 1e-10, raised to
            ``64 n eps`` of W's dtype).

    Example:
        >>> W = np.array([[0.5, 0.5], [0.25, 0.75]])
        >>> perron_vector(W)          # (1/3, 2/3)
        array([0.33333333, 0.66666667])
        >>> perron_vector(W.astype(np.float32)).dtype
        dtype('float32')
    """
    if sp.issparse(W):
        return _sparse_perron_vector(W, tol)
    w = require_stochastic(W, "row", name="W") if tol is None else \
        require_stochastic(W, "row", name="W", tol=tol)
    classes = closed_classes(w > 0)
    if len(classes) != 1:
        raise ValueError(_several_classes_message(classes, "W"))
    closed = classes[0]
    pi = np.zeros(w.shape[0])
    pi[closed] = _stationary_gth(w[np.ix_(closed, closed)])
    return pi.astype(w.dtype)


def right_perron_vector(C, *, tol: float | None = None) -> np.ndarray:
    """Normalised right Perron vector v of a column-stochastic C: ``C v = v``, ``Σ v = 1``.

    The fixed point of push-sum mixing ``x <- C x`` (``C[i, j]`` the share agent j sends to
    agent i): for a primitive C (strongly connected with a self-loop, say) repeated pushes of
    any ``x`` tend to ``v (1ᵀ x)``; a periodic C only cycles around it. Since ``Cᵀ`` is
    row-stochastic, v is the left Perron vector of ``Cᵀ`` (:func:`perron_vector`, same
    uniqueness rule: exactly one closed class of ``Cᵀ``'s chain, i.e. one group of agents that
    sends to nobody outside it; positive everywhere for a strongly connected graph), with the
    column sums checked here under C's own name.

    Args:
        C: column-stochastic ``[n, n]`` (columns sum to 1), a numpy array or a scipy sparse
            matrix.
        tol: column-sum tolerance (default as in :func:`perron_vector`).

    Example:
        >>> C = np.array([[0.5, 0.25], [0.5, 0.75]])     # columns sum to 1
        >>> right_perron_vector(C)                         # C v = v: (1/3, 2/3)
        array([0.33333333, 0.66666667])
    """
    c = require_stochastic(C, "column", name="C") if tol is None else \
        require_stochastic(C, "column", name="C", tol=tol)
    return perron_vector(c.T, tol=tol)


class APSResult(NamedTuple):
    """Absolute probability sequence with its accuracy.

    Attributes:
        pi: ``[T + 1, N]`` stochastic vectors π_0 … π_T.
        error: estimated max-abs error of ``pi``: for the exact static/periodic forms 0
            (solver precision) with float64 weights; for backward recursions the change of
            π_0…π_T when the horizon was doubled last (inf when it could not be doubled); for
            weights stored below float64 never less than ``64 n eps`` of their dtype.
        horizon: the backward horizon H used (π_H uniform); None for exact forms.
        exact: True for static and periodic sequences (Perron vector of the period product).
    """

    pi: np.ndarray
    error: float
    horizon: int | None
    exact: bool


def _backward(ws: np.ndarray, num_points: int, start: np.ndarray | None = None) -> np.ndarray:
    """π_0…π_{num_points-1} by π_t = W_tᵀ π_{t+1} from π_H = ``start`` (uniform by default),
    H = len(ws); points at or beyond H are π_H."""
    n = ws.shape[1]
    pi = np.full(n, 1.0 / n) if start is None else start
    out = np.empty((num_points, n))
    out[ws.shape[0]:] = pi
    for t in range(ws.shape[0] - 1, -1, -1):      # host recursion over the horizon (outside jit)
        pi = ws[t].T @ pi
        pi = pi / pi.sum()
        if t < num_points:
            out[t] = pi
    return out


def _checked(ws: np.ndarray, start: int = 0) -> np.ndarray:
    for k, w in enumerate(ws, start=start):
        require_stochastic(w, "row", name=f"W_{k}")
    return ws


def _precision_floor(ws: np.ndarray) -> float:
    """Accuracy floor of π from weights stored in ``ws.dtype``: 0 for float64 (solver
    precision), else the weight-check tolerance ``64 n eps`` — weights rounded to a low
    precision move π by about that much."""
    if ws.dtype == np.float64:
        return 0.0
    return effective_tolerance(ws, 0.0)


def _require_reachable(tol: float, floor: float, dtype) -> None:
    if floor > 0 and tol < floor:
        raise ValueError(
            f"the weights are {np.dtype(dtype).name}: π is only determined to about "
            f"{floor:.1e} by weights of that precision, so tol={tol:g} cannot be met. Pass "
            f"float64 weights (build the stack from float64 arrays, or under "
            f"jax_enable_x64), or ask for tol >= {floor:.1e}.")


def absolute_probability_sequence(seq, num_steps: int, *, key=None, tol: float = 1e-13,
                                  max_horizon: int | None = None,
                                  return_info: bool = False):
    """π_0 … π_T of a row-stochastic graph sequence (``T = num_steps``).

    * **static** W: π_t = Perron vector of W for every t (exact);
    * **periodic** with period P (incl. one-peer exponential): π_0 is the Perron vector of the
      period product ``W_{P-1} ⋯ W_1 W_0`` and π_P = π_0; π_t = W_tᵀ π_{t+1} backwards inside
      the period; then tiled (exact, to solver precision);
    * **other sequences** (explicit stacks, random draws, a plain ``[T', N, N]`` array): the
      backward recursion π_tᵀ = π_{t+1}ᵀ W_t from π_H uniform at a horizon H beyond T. The
      sequence supplies W_t for t up to H. Starting with H = 2T + 64 (or the stack's length),
      H − T is doubled until π_0…π_T change by less than ``tol`` (max-abs); the last change is
      the reported ``error``. Under uniform strong connectivity the error decays geometrically
      in H − t, so a few doublings suffice; an explicit stack that ends before convergence
      gives a warning and its best estimate. Random sequences are re-weighted in float64 on
      the host (the same drawn graphs), whatever the JAX precision.

    π is unique only if the graphs beyond T mix: when the union of ``W_T … W_{H-1}`` has more
    than one closed class (as for a static graph with several closed classes) a ValueError
    says so instead of returning the uniform start.

    Weights stored in less than float64 (float32 stacks) determine π only to about
    ``64 n eps`` of their dtype; ``error`` is then at least that, and a ``tol`` below it is
    refused.

    Args:
        seq: a :class:`GraphSequence`, a weight matrix (static), or a stack ``[T', N, N]``
            (explicit; needs ``T' >= T``).
        num_steps: T; returns T + 1 vectors.
        key: per-seed key for random sequences drawn per seed.
        tol: accuracy target of the backward recursion.
        max_horizon: cap on H (default ``64 * (T + 64)``).
        return_info: return an :class:`APSResult` (pi, error, horizon, exact) instead of pi.

    Returns:
        ``[T + 1, N]`` array (or :class:`APSResult`).

    Example:
        >>> from decentral.graphs import complete, path, explicit, row_stochastic
        >>> stack = [row_stochastic(path(3)), row_stochastic(complete(3))] * 40
        >>> res = absolute_probability_sequence(explicit(stack), 2, return_info=True)
        >>> res.pi.shape, bool(res.error < 1e-13), res.exact
        ((3, 3), True, False)
    """
    _refuse_sparse(seq, "seq")
    if isinstance(seq, list | tuple):
        for k, w in enumerate(seq):
            _refuse_sparse(w, f"seq[{k}]")
    T = check_int(num_steps, "num_steps", minimum=0)
    if isinstance(seq, GraphSequence):
        form = "periodic" if seq.period is not None else seq.form
        length, period = seq.length, seq.period

        def supply(start: int, stop: int) -> np.ndarray:
            return seq.weights_host64(stop - start, start=start, key=key)
    else:
        arr = np.asarray(seq)
        if arr.ndim not in (2, 3):
            raise ValueError(f"seq must be a GraphSequence, a [N, N] matrix or a [T, N, N] stack;"
                             f" got shape {arr.shape}.")
        form = "periodic" if arr.ndim == 2 else "explicit"     # a single W: period 1
        stack = arr[None] if arr.ndim == 2 else arr
        length = None if arr.ndim == 2 else stack.shape[0]
        period = 1

        def supply(start: int, stop: int) -> np.ndarray:
            return stack[start:stop]

    if form == "periodic":                    # static (P = 1), periodic, one-peer exponential
        period_ws = _checked(supply(0, period))
        floor = _precision_floor(period_ws)
        _require_reachable(tol, floor, period_ws.dtype)
        period_ws = period_ws.astype(np.float64)
        product = np.eye(period_ws.shape[1])
        for w in period_ws:                   # product W_{P-1} ⋯ W_0 (host, once)
            product = w @ product
        # π_0 = π_P: one period backwards from π_0 (the product of P rounded matrices has row
        # sums off by up to P times their rounding)
        pi0 = perron_vector(product, tol=max(1e-10, floor * period))
        pis = _backward(period_ws, period, start=pi0)
        out = pis[np.arange(T + 1) % period]
        result = APSResult(out, floor, None, True)
        return result if return_info else out

    if length is not None and length < T:
        raise ValueError(f"the sequence supplies {length} matrices but π_0…π_{T} needs at "
                         f"least W_0…W_{T - 1}.")
    if max_horizon is not None:
        max_horizon = check_int(max_horizon, "max_horizon", minimum=0)
        if max_horizon < T:
            raise ValueError(f"max_horizon={max_horizon} is below num_steps={T}: the backward "
                             "recursion needs W_0 … W_{T-1} at least.")
    cap = max_horizon if max_horizon is not None else 64 * (T + 64)
    horizon = 2 * T + 64
    if length is not None:
        cap = min(cap, length)
    horizon = min(horizon, cap)
    ws = _checked(supply(0, horizon))
    floor = _precision_floor(ws)
    _require_reachable(tol, floor, ws.dtype)
    ws = ws.astype(np.float64)
    _require_mixing_tail(ws, T)
    prev = _backward(ws, T + 1)
    error = np.inf
    while horizon < cap:
        new_h = min(cap, T + 2 * (horizon - T))
        ws = np.concatenate([ws, _checked(supply(horizon, new_h), start=horizon)
                             .astype(np.float64)])
        cur = _backward(ws, T + 1)
        error = max(float(np.max(np.abs(cur - prev))), floor)
        prev, horizon = cur, new_h
        if error < tol:
            break
    if not error < tol:
        if np.isfinite(error):
            what = (f"the last doubling of the horizon (to {horizon}) still changed π_0…π_{T} "
                    f"by {error:.3g}")
        else:
            what = (f"the sequence supplies only {horizon} matrices, so the horizon could not "
                    "be extended and the accuracy is unknown (no doubling to compare with)")
        warnings.warn(
            f"absolute_probability_sequence: the backward recursion did not reach tol={tol:g}: "
            f"{what}. The sequence may not be uniformly strongly connected, or an explicit "
            "stack is too short beyond T.", RuntimeWarning, stacklevel=2)
    result = APSResult(prev, error, horizon, False)
    return result if return_info else prev


def _require_mixing_tail(ws: np.ndarray, T: int) -> None:
    """Refuse a tail ``W_T … W_{H-1}`` whose union has several closed classes: the backward
    recursion would then return (a mixture of) its uniform start, not a unique π."""
    if ws.shape[0] <= T:
        return                                  # no tail: the caller warns instead
    classes = closed_classes(np.any(ws[T:] > 0, axis=0))
    if len(classes) > 1:
        raise ValueError(_several_classes_message(
            classes, f"the union of W_{T} … W_{ws.shape[0] - 1}").replace(
            "its Perron vector", "the absolute probability sequence"))
