"""Weight rules (adjacency -> mixing matrix) and stochasticity checks.

Orientation: ``W[i, j] > 0`` iff agent i receives from agent j. Row-stochastic matrices mix by
``W @ X`` (consensus); column-stochastic ones (push-sum) use the same orientation.

The rule formulas are written once, over an array module ``xp`` (numpy or ``jax.numpy``), so
the host builders here and the jitted random graph sequences (:mod:`.sequences`) share them;
they also accept a stack ``[T, n, n]`` of adjacencies (the last two axes are the graph).

Every public rule and check also takes a scipy sparse graph (any format, read as CSR with the
same orientation: row i lists agent i's in-neighbours). A rule then returns a
``scipy.sparse.csr_array`` of float64 weights with exactly the adjacency's pattern (self-loops
included), computed from the index arrays in O(n + edges) without an ``[n, n]`` array; the
weights are those of the dense rule (bit for bit, except the Metropolis diagonal, whose row sum
may be added in another order: within a few ulp).

Example:
    >>> from decentral.graphs import ring, row_stochastic, is_row_stochastic
    >>> W = row_stochastic(ring(5))
    >>> is_row_stochastic(W)
    True
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from decentral._checks import sum_tolerance

from ._validate import as_adjacency, as_weights
from .sparse import as_sparse_adjacency, as_sparse_weights, csr_rows, require_sparse_symmetric

__all__ = [
    "row_stochastic",
    "column_stochastic",
    "metropolis",
    "prescribed_pi_weights",
    "is_row_stochastic",
    "is_column_stochastic",
    "is_doubly_stochastic",
    "stochasticity_violations",
    "WEIGHT_RULES",
]

DEFAULT_TOL = 1e-10


# ---- rule formulas over an array module (shared with the jitted sequences) ---------------

def row_rule(a, xp=np):
    """Uniform over in-neighbours incl. self: ``W[i, j] = a[i, j] / |N_i|``."""
    af = a.astype(xp.float64 if xp is np else float)
    return af / af.sum(axis=-1, keepdims=True)


def column_rule(a, xp=np):
    """One over the sender's out-degree incl. self: ``W[i, j] = a[i, j] / |N_j^-|``."""
    af = a.astype(xp.float64 if xp is np else float)
    return af / af.sum(axis=-2, keepdims=True)


def metropolis_rule(a, xp=np):
    """Metropolis: ``W[i, j] = 1 / max(|N_i|, |N_j|)`` for j != i neighbours; rows sum to 1."""
    af = a.astype(xp.float64 if xp is np else float)
    n = af.shape[-1]
    eye = xp.eye(n, dtype=af.dtype)
    deg = af.sum(axis=-1)                         # |N_i|, counting the self-loop
    off = af * (1.0 - eye) / xp.maximum(deg[..., :, None], deg[..., None, :])
    return off + eye * (1.0 - off.sum(axis=-1))[..., None]


WEIGHT_RULES = {"row": row_rule, "column": column_rule, "metropolis": metropolis_rule}
"""Name -> rule formula, as accepted by the graph sequences' ``rule=`` argument."""


def sparse_rule(a: sp.csr_array, rule: str) -> sp.csr_array:
    """A weight rule on a canonical boolean CSR adjacency, in O(n + edges) (host).

    Args:
        a: canonical CSR adjacency (checked by
            :func:`~decentral.graphs.sparse.as_sparse_adjacency`: sorted, no repeats, diagonal
            stored), ``a[i, j]`` True iff agent i receives from agent j; symmetric for
            ``"metropolis"`` (the caller checks it).
        rule: ``"row"``, ``"column"`` or ``"metropolis"`` (the formulas of
            :func:`row_rule`, :func:`column_rule`, :func:`metropolis_rule`).

    Returns:
        ``scipy.sparse.csr_array`` of float64 weights on ``a``'s pattern (same index arrays).
    """
    n = a.shape[0]
    rows = csr_rows(a)
    if rule == "row":
        deg = np.diff(a.indptr).astype(np.float64)
        data = 1.0 / deg[rows]
    elif rule == "column":
        outdeg = np.bincount(a.indices, minlength=n).astype(np.float64)
        data = 1.0 / outdeg[a.indices]
    elif rule == "metropolis":
        deg = np.diff(a.indptr).astype(np.float64)
        diag = a.indices == rows
        data = 1.0 / np.maximum(deg[rows], deg[a.indices])
        data[diag] = 0.0
        data[diag] = 1.0 - np.bincount(rows, weights=data, minlength=n)
    else:
        raise ValueError(f"unknown weight rule {rule!r}; use 'row', 'column' or 'metropolis'.")
    w = sp.csr_array((data, a.indices.copy(), a.indptr.copy()), shape=a.shape)
    w.has_sorted_indices = True
    return w


# ---- public host builders -----------------------------------------------------------------

def row_stochastic(adj) -> np.ndarray | sp.csr_array:
    """Row-stochastic "flocking" weights: uniform over in-neighbours including self.

    ``W[i, j] = 1 / |N_i|`` for ``j ∈ N_i`` (|N_i| counts i itself), else 0 — the consensus
    weights of Lin–Gupta–Liu (Assumption 1) and of Dec_UCB Thm 1 (Zhu et al.).

    Args:
        adj: boolean adjacency with self-loops, ``adj[i, j]`` True iff agent i receives from
            agent j: a dense array, or a scipy sparse array (any format).

    Returns:
        float64 ``W`` in the same orientation: a dense array for a dense ``adj``; for a sparse
        one a ``scipy.sparse.csr_array`` with ``adj``'s pattern, built in O(n + edges).

    Example:
        >>> from decentral.graphs import complete, ring
        >>> W = row_stochastic(complete(3))
        >>> float(W[0, 1])
        0.3333333333333333
        >>> row_stochastic(ring(4, sparse=True)).data.tolist()[:2]
        [0.5, 0.5]
    """
    if sp.issparse(adj):
        return sparse_rule(as_sparse_adjacency(adj, name="adj"), "row")
    return row_rule(as_adjacency(adj))


def column_stochastic(adj) -> np.ndarray | sp.csr_array:
    """Column-stochastic push-sum weights: ``W[i, j] = 1 / |N_j^-|`` (sender's out-degree, self
    included), Lin–Gupta–Liu eq. (9).

    Args:
        adj: boolean adjacency with self-loops, ``adj[i, j]`` True iff agent i receives from
            agent j: a dense array, or a scipy sparse array (any format).

    Returns:
        float64 ``W`` in the same orientation: a dense array for a dense ``adj``; for a sparse
        one a ``scipy.sparse.csr_array`` with ``adj``'s pattern, built in O(n + edges).

    Example:
        >>> from decentral.graphs import ring
        >>> W = column_stochastic(ring(4))
        >>> bool(np.allclose(W.sum(axis=0), 1.0))
        True
    """
    if sp.issparse(adj):
        return sparse_rule(as_sparse_adjacency(adj, name="adj"), "column")
    return column_rule(as_adjacency(adj))


def metropolis(adj) -> np.ndarray | sp.csr_array:
    """Metropolis weights on an undirected graph: ``W[i, j] = 1 / max(|N_i|, |N_j|)``, j ≠ i.

    |N| counts the self-loop; the diagonal takes the remaining mass. Doubly stochastic and
    symmetric (Zhu et al., Dec_UCB Thm 2).

    Args:
        adj: symmetric boolean adjacency with self-loops: a dense array, or a scipy sparse
            array (any format).

    Returns:
        float64 ``W``: a dense array for a dense ``adj``; for a sparse one a
        ``scipy.sparse.csr_array`` with ``adj``'s pattern, built in O(n + edges) (its diagonal
        equals the dense one's within a few ulp: the row sums are added in another order).

    Raises:
        ValueError: if ``adj`` is not symmetric (Metropolis weights need an undirected graph).
    """
    if sp.issparse(adj):
        a = as_sparse_adjacency(adj, name="adj")
        require_sparse_symmetric(a, name="adj", what="metropolis weights")
        return sparse_rule(a, "metropolis")
    a = as_adjacency(adj)
    if not np.array_equal(a, a.T):
        i, j = np.argwhere(a != a.T)[0]
        raise ValueError(
            f"metropolis weights need an undirected (symmetric) adjacency, but adj[{i}, {j}] = "
            f"{a[i, j]} while adj[{j}, {i}] = {a[j, i]}. Use row_stochastic or column_stochastic "
            "for directed graphs, or symmetrise with `adj | adj.T`."
        )
    return metropolis_rule(a)


def prescribed_pi_weights(adj, pi, *, scale: float | None = None) -> np.ndarray:
    """Row-stochastic weights with a prescribed left eigenvector π on a weight-balanced digraph.

    ``W = I − c · D_π⁻¹ · L`` with ``L = diag(A 1) − A`` the in-Laplacian of the off-diagonal
    adjacency A. Balance (in-degree = out-degree at every agent) gives ``L 1 = 0`` and
    ``1ᵀ L = 0``, hence ``W 1 = 1 − c D_π⁻¹ L 1 = 1`` and ``πᵀ W = πᵀ − c 1ᵀ L = πᵀ`` (as
    ``πᵀ D_π⁻¹ = 1ᵀ``). Off the diagonal ``W[i, j] = c A[i, j] / π_i ≥ 0``; on it
    ``W[i, i] = 1 − c L_ii / π_i``, which is strictly positive iff ``c < π_i / L_ii``: hence the
    requirement ``0 < c < min_i π_i / L_ii`` (self-loops keep positive weight, Lin–Gupta–Liu
    Assumption 1). With uniform π on a directed balanced graph the result is doubly stochastic.

    Args:
        adj: boolean adjacency with self-loops (``adj[i, j]`` True iff agent i receives from
            agent j), dense or scipy sparse (any format); its off-diagonal part must be
            weight-balanced (e.g. a directed cycle or a union of directed cycles).
        pi: stochastic vector, entries > 0 (summing to 1 within 1e-12, or ``64 n eps`` of
            its dtype when that is larger).
        scale: c. Default ``0.5 · min_i π_i / L_ii`` over agents with ``L_ii > 0``.

    Returns:
        float64 ``W`` in the orientation of ``adj``: dense for a dense ``adj``; for a sparse one
        a ``scipy.sparse.csr_array`` with ``adj``'s pattern (the same numbers), built in
        O(n + edges).

    Example:
        >>> from decentral.graphs import ring
        >>> pi = np.array([0.4, 0.3, 0.2, 0.1])
        >>> W = prescribed_pi_weights(ring(4), pi)
        >>> bool(np.allclose(pi @ W, pi))
        True
    """
    if sp.issparse(adj):
        return _sparse_prescribed_pi(as_sparse_adjacency(adj, name="adj"), pi, scale)
    a = as_adjacency(adj)
    n = a.shape[0]
    given = np.asarray(pi)
    pi = np.asarray(pi, dtype=np.float64)
    if pi.shape != (n,):
        raise ValueError(f"pi must have shape ({n},) to match adj, got {pi.shape}.")
    _check_pi(given, pi, n)
    off = (a & ~np.eye(n, dtype=bool)).astype(np.float64)
    indeg, outdeg = off.sum(axis=1), off.sum(axis=0)
    _check_balanced(indeg, outdeg)
    lap = np.diag(indeg) - off
    active = indeg > 0
    if not np.any(active):
        return np.eye(n)
    scale = _pi_scale(pi, indeg, active, scale)
    return np.eye(n) - scale * (lap / pi[:, None])


def _check_pi(given: np.ndarray, pi: np.ndarray, n: int) -> None:
    tol = sum_tolerance(given.dtype, n, 1e-12)          # a float32 pi sums to 1 within ~n eps32
    if not np.all(np.isfinite(pi)) or np.any(pi <= 0) or abs(pi.sum() - 1.0) > tol:
        raise ValueError("pi must be a stochastic vector with strictly positive entries "
                         f"(sum {pi.sum()!r}, min {pi.min()!r}); normalise it with pi / pi.sum().")


def _check_balanced(indeg: np.ndarray, outdeg: np.ndarray) -> None:
    if not np.array_equal(indeg, outdeg):
        bad = np.flatnonzero(indeg != outdeg).tolist()
        raise ValueError(
            f"prescribed_pi_weights needs a weight-balanced digraph (in-degree = out-degree at "
            f"every agent); agents {bad} are unbalanced. Use directed cycles or unions of them."
        )


def _pi_scale(pi: np.ndarray, indeg: np.ndarray, active: np.ndarray, scale) -> float:
    c_max = float(np.min(pi[active] / indeg[active]))
    if scale is None:
        scale = 0.5 * c_max
    if not (np.isfinite(scale) and 0.0 < scale < c_max):
        raise ValueError(f"scale c must satisfy 0 < c < min_i pi_i / L_ii = {c_max!r} (keeps the "
                         f"diagonal strictly positive); got {scale!r}.")
    return scale


def _sparse_prescribed_pi(a: sp.csr_array, pi, scale) -> sp.csr_array:
    """:func:`prescribed_pi_weights` on a canonical CSR adjacency, entry by entry in
    O(n + edges), with the dense expressions (hence the same float64 numbers)."""
    n = a.shape[0]
    given = np.asarray(pi)
    pi = np.asarray(pi, dtype=np.float64)
    if pi.shape != (n,):
        raise ValueError(f"pi must have shape ({n},) to match adj, got {pi.shape}.")
    _check_pi(given, pi, n)
    rows = csr_rows(a)
    diag = a.indices == rows
    indeg = (np.diff(a.indptr) - 1).astype(np.float64)
    outdeg = (np.bincount(a.indices, minlength=n) - 1).astype(np.float64)
    _check_balanced(indeg, outdeg)
    active = indeg > 0
    data = np.ones(a.nnz)
    if np.any(active):
        scale = _pi_scale(pi, indeg, active, scale)
        # dense: W = I - c (L / pi[:, None]), L = diag(indeg) - A: off the diagonal
        # 0 - c (-1 / pi_i), on it 1 - c (indeg_i / pi_i)
        data = np.where(diag, 1.0 - scale * (indeg[rows] / pi[rows]),
                        0.0 - scale * (-1.0 / pi[rows]))
    w = sp.csr_array((data, a.indices.copy(), a.indptr.copy()), shape=a.shape)
    w.has_sorted_indices = True
    return w


# ---- checks -------------------------------------------------------------------------------

def effective_tolerance(W, tol: float = DEFAULT_TOL) -> float:
    """``tol``, raised to ``64 · n · eps`` of W's dtype when that is larger (float32 sums of n
    weights are only exact to about ``n · eps``); half precisions (float16, JAX's bfloat16)
    get ``2 · n · eps``, as a 64-fold margin would there accept any row
    (:func:`decentral._checks.sum_tolerance`). ``W`` may be dense or scipy sparse."""
    w = W if sp.issparse(W) else np.asarray(W)
    return sum_tolerance(w.dtype, w.shape[-1], tol)


def stochasticity_violations(W, axis: int = 1, *, tol: float = DEFAULT_TOL
                             ) -> list[tuple[int, float]]:
    """List ``(index, sum)`` of the rows (axis=1) or columns (axis=0) whose sum differs from 1
    by more than ``tol`` (see :func:`effective_tolerance` for low-precision inputs); empty when
    stochastic. Serves the error messages of the checks.

    ``W[i, j]`` is agent i's weight on agent j. ``W`` may be a dense array or a scipy sparse
    weight matrix (any format), whose row / column sums are taken over its stored entries in
    O(n + edges)."""
    if sp.issparse(W):
        w = as_sparse_weights(W, name="W", require_self_loops=False)
        tol = effective_tolerance(w, tol)
        data = w.data.astype(np.float64)
        at = csr_rows(w) if axis in (1, -1) else w.indices
        sums = np.bincount(at, weights=data, minlength=w.shape[0])
        bad = np.flatnonzero(np.abs(sums - 1.0) > tol)
        return [(int(k), float(sums[k])) for k in bad]
    w = as_weights(W)
    tol = effective_tolerance(w, tol)
    sums = w.sum(axis=axis, dtype=np.float64)
    bad = np.flatnonzero(np.abs(sums - 1.0) > tol)
    return [(int(k), float(sums[k])) for k in bad]


def is_row_stochastic(W, *, tol: float = DEFAULT_TOL) -> bool:
    """True iff W is non-negative, finite and every row sums to 1 within ``tol``."""
    return not stochasticity_violations(W, axis=1, tol=tol)


def is_column_stochastic(W, *, tol: float = DEFAULT_TOL) -> bool:
    """True iff W is non-negative, finite and every column sums to 1 within ``tol``."""
    return not stochasticity_violations(W, axis=0, tol=tol)


def is_doubly_stochastic(W, *, tol: float = DEFAULT_TOL) -> bool:
    """True iff W is both row- and column-stochastic within ``tol``."""
    return is_row_stochastic(W, tol=tol) and is_column_stochastic(W, tol=tol)


def require_stochastic(W, kind: str = "row", *, name: str = "W", tol: float = DEFAULT_TOL
                       ) -> np.ndarray | sp.csr_array:
    """Return ``W`` as float array or raise ValueError naming the rows/columns that fail.

    ``W[i, j]`` is agent i's weight on agent j; a scipy sparse ``W`` (any format) is checked
    in O(n + edges) and returned as a canonical float CSR array."""
    w = as_sparse_weights(W, name=name, require_self_loops=False) if sp.issparse(W) else \
        as_weights(W, name=name)
    axes = {"row": (1,), "column": (0,), "doubly": (1, 0)}
    if kind not in axes:
        raise ValueError(f"kind must be 'row', 'column' or 'doubly', got {kind!r}.")
    for axis in axes[kind]:
        bad = stochasticity_violations(w, axis=axis, tol=tol)
        if bad:
            what = "row" if axis == 1 else "column"
            shown = ", ".join(f"{what} {k} sums to {s!r}" for k, s in bad[:5])
            raise ValueError(f"{name} must be {kind}-stochastic but {shown}"
                             f"{' ...' if len(bad) > 5 else ''}. Build it with a weight rule "
                             "(row_stochastic, column_stochastic, metropolis).")
    return w
