"""r-robustness and (r, s)-robustness of directed graphs.

Orientation (as everywhere in ``decentral``): ``adj[i, j]`` is True iff agent ``i`` receives
from agent ``j``; the diagonal is True. ``N_i = {j != i : adj[i, j]}`` are the in-neighbours of
``i`` (the self-loop is never counted).

Definitions (H. J. LeBlanc, H. Zhang, X. Koutsoukos, S. Sundaram, "Resilient Asymptotic Consensus
in Robust Networks", IEEE JSAC 31(4), 2013, Defs. 6-7):

* a nonempty set ``S`` is *r-reachable* if some ``i in S`` has ``|N_i \\ S| >= r``;
* the graph is *r-robust* if for every pair of nonempty disjoint ``S1, S2`` at least one of them
  is r-reachable;
* with ``X^r_S = {i in S : |N_i \\ S| >= r}``, the graph is *(r, s)-robust* if for every such pair
  ``|X^r_S1| = |S1|`` or ``|X^r_S2| = |S2|`` or ``|X^r_S1| + |X^r_S2| >= s``.
  ``(r, 1)``-robust is the same as r-robust.

Two exact methods are provided.

* **Enumeration** (exact, vectorized with numpy, ``O(n 2^n)`` time and ``O(2^n)`` memory instead
  of the ``3^n`` labelings of a naive search). For every subset ``S`` (a bitmask) it computes
  ``reach(S) = max_{i in S} |N_i \\ S|`` with one matrix product per block of subsets. Then
  ``min over disjoint (S1, S2) of max(reach(S1), reach(S2))`` is
  ``min_{S1} max(reach(S1), m(V \\ S1))`` where ``m(T) = min_{nonempty S2 subset of T} reach(S2)``
  comes from a subset-minimum ("zeta") transform over the bitmask lattice, ``n`` vectorized
  passes. The graph is r-robust iff that minimum is ``>= r``. (r, s)-robustness uses the same
  transform on ``|X^r_S|``.
* **MILP** (J. Usevitch, D. Panagou, "r-Robustness and (r, s)-Robustness of Circulant Graphs" /
  "Determining r-Robustness of Digraphs Using Mixed Integer Linear Programming",
  arXiv:1810.01784, arXiv:1901.11000), solved by HiGHS through :func:`scipy.optimize.milp`; see
  :func:`r_robustness`.

The checks run outside ``jit`` on host numpy arrays. The examples assume ``import numpy as np``.
They take dense adjacencies only (enumeration is limited to a few dozen agents, and the MILP
to graphs of moderate size): a scipy sparse adjacency is refused with a ValueError that says
so; a small one is passed as ``adj.toarray()``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator

import numpy as np

from decentral.graphs._validate import _refuse_sparse, as_adjacency

__all__ = [
    "ENUMERATION_HARD_MAX_N",
    "ENUMERATION_MAX_N",
    "RobustnessTimeoutError",
    "is_r_robust",
    "is_rs_robust",
    "r_robustness",
    "robustness_witness",
]

#: ``method="auto"`` enumerates all subsets for ``n <= ENUMERATION_MAX_N`` and solves the MILP
#: above. Enumeration at this size takes well under a second.
ENUMERATION_MAX_N: int = 16

#: ``method="enumerate"`` refuses graphs with more agents than this (2^n subsets are held in
#: memory; n = 22 is about 4 million subsets and a few seconds).
ENUMERATION_HARD_MAX_N: int = 22

_METHODS = ("auto", "enumerate", "milp")
_BLOCK = 1 << 15  # subsets per block in the matrix-product stage
_NO_SET = np.int32(1 << 30)  # sentinel of the subset-minimum: "no admissible subset here"


class RobustnessTimeoutError(TimeoutError):
    """The MILP stopped on its time limit before it proved the answer.

    Attributes:
        lower_bound: best proven lower bound on ``min max(reach(S1), reach(S2))`` (or None).
        upper_bound: best value found by a feasible pair (or None if none was found).
    """

    def __init__(self, message: str, lower_bound: float | None, upper_bound: float | None):
        super().__init__(message)
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound


# ----------------------------------------------------------------------------- validation


def _check_order(value, name: str, minimum: int) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise ValueError(
            f"{name} must be an integer >= {minimum}; got {value!r} of type "
            f"{type(value).__name__}. Pass e.g. {name}={max(minimum, 1)}."
        )
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return value


def _check_method(method: str, n: int) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}; got {method!r}.")
    if method == "auto":
        return "enumerate" if n <= ENUMERATION_MAX_N else "milp"
    if method == "enumerate":
        _check_enumerable(n)
    return method


def _check_enumerable(n: int) -> None:
    if n > ENUMERATION_HARD_MAX_N:
        raise ValueError(
            f"n = {n} agents is too large for enumeration (2^{n} subsets; the limit is "
            f"ENUMERATION_HARD_MAX_N = {ENUMERATION_HARD_MAX_N}). Use method='milp' (or "
            "method='auto') instead."
        )


def _check_time_limit(time_limit) -> float:
    try:
        tl = float(time_limit)
    except (TypeError, ValueError):
        tl = float("nan")
    if not (tl > 0) or math.isnan(tl):
        raise ValueError(
            f"time_limit must be a positive number of seconds (math.inf for none); "
            f"got {time_limit!r}."
        )
    return tl


# ----------------------------------------------------------------------------- enumeration


def _in_neighbour_matrix(a: np.ndarray) -> np.ndarray:
    """Float32 ``[n, n]`` matrix ``A0`` with ``A0[i, j] = 1`` iff j in N_i (no self-loops)."""
    a0 = a.astype(np.float32)
    np.fill_diagonal(a0, 0.0)
    return a0


def _subset_blocks(n: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield ``(start, stop, bits)`` with ``bits[k, i] = 1`` iff bit i of mask ``start + k``."""
    shifts = np.arange(n, dtype=np.int64)
    total = 1 << n
    for start in range(0, total, _BLOCK):
        stop = min(total, start + _BLOCK)
        masks = np.arange(start, stop, dtype=np.int64)
        bits = ((masks[:, None] >> shifts[None, :]) & 1).astype(np.float32)
        yield start, stop, bits


def _outside_counts(bits: np.ndarray, a0: np.ndarray, deg: np.ndarray) -> np.ndarray:
    """``out[k, i] = |N_i \\ S_k|`` for the subsets ``S_k`` encoded by ``bits`` (all i)."""
    return deg[None, :] - bits @ a0.T


def _reach_of_all_subsets(a: np.ndarray) -> np.ndarray:
    """``reach[S] = max_{i in S} |N_i \\ S|`` for every bitmask S (``reach[0] = -1``), int16."""
    n = a.shape[0]
    a0 = _in_neighbour_matrix(a)
    deg = a0.sum(axis=1)
    reach = np.empty(1 << n, dtype=np.int16)
    for start, stop, bits in _subset_blocks(n):
        out = _outside_counts(bits, a0, deg)
        reach[start:stop] = np.where(bits > 0, out, -1.0).max(axis=1).astype(np.int16)
    return reach


def _subset_min(values: np.ndarray, n: int) -> np.ndarray:
    """``res[mask] = min_{T subset of mask} values[T]`` (T ranges over all subsets, empty too)."""
    res = values.copy()
    for b in range(n):
        view = res.reshape(-1, 2, 1 << b)  # axes: higher bits, bit b, lower bits
        np.minimum(view[:, 1, :], view[:, 0, :], out=view[:, 1, :])
    return res


def _pair_values(reach: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For every S1 in 1..2^n-2: ``max(reach(S1), min_{S2 subset of V\\S1} reach(S2))``."""
    masked = reach.astype(np.int32)
    masked[0] = _NO_SET  # the empty set is never a valid S2
    best_sub = _subset_min(masked, n)
    full = (1 << n) - 1
    s1 = np.arange(1, full, dtype=np.int64)
    vals = np.maximum(reach[s1].astype(np.int32), best_sub[full ^ s1])
    return s1, vals


def _mask_to_set(mask: int) -> frozenset[int]:
    return frozenset(i for i in range(int(mask).bit_length()) if (mask >> i) & 1)


def _popcount(masks: np.ndarray) -> np.ndarray:
    counts = np.zeros(masks.shape, dtype=np.int64)
    m = masks.copy()
    while np.any(m):
        counts += m & 1
        m >>= 1
    return counts


def _enumerate_r(a: np.ndarray) -> int:
    n = a.shape[0]
    if n == 1:
        return 1
    _, vals = _pair_values(_reach_of_all_subsets(a), n)
    return int(vals.min())


def _enumerate_witness(a: np.ndarray, r: int) -> tuple[frozenset[int], frozenset[int]] | None:
    n = a.shape[0]
    if n == 1 or r == 0:
        return None
    reach = _reach_of_all_subsets(a)
    s1, vals = _pair_values(reach, n)
    bad = s1[vals < r]
    if bad.size == 0:
        return None
    # Prefer small sets: the smallest S1, then the smallest S2 inside its complement.
    m1 = int(bad[np.argmin(_popcount(bad))])
    every = np.arange(1, 1 << n, dtype=np.int64)
    cand = every[((every & m1) == 0) & (reach[1:] < r)]
    m2 = int(cand[np.argmin(_popcount(cand))])
    return _mask_to_set(m1), _mask_to_set(m2)


def _x_counts_of_all_subsets(a: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """``x[S] = |X^r_S|`` and ``size[S] = |S|`` for every bitmask S, int16."""
    n = a.shape[0]
    a0 = _in_neighbour_matrix(a)
    deg = a0.sum(axis=1)
    x = np.empty(1 << n, dtype=np.int16)
    size = np.empty(1 << n, dtype=np.int16)
    for start, stop, bits in _subset_blocks(n):
        out = _outside_counts(bits, a0, deg)
        x[start:stop] = ((out >= r) & (bits > 0)).sum(axis=1)
        size[start:stop] = bits.sum(axis=1)
    return x, size


# ----------------------------------------------------------------------------- MILP


def _milp_solve(a: np.ndarray, time_limit: float, feasibility_r: int | None):
    """Solve the Usevitch-Panagou MILP.

    Variables ``z = [b1 (n), b2 (n), t]``. With ``feasibility_r`` None: minimize ``t``; else
    look for any pair with ``t <= feasibility_r - 1`` (objective 0).
    Returns ``(status, b1, b2, t_value, dual_bound, message)``.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = a.shape[0]
    a0 = _in_neighbour_matrix(a).astype(np.float64)
    lap = np.diag(a0.sum(axis=1)) - a0  # in-Laplacian: (L b)_i = |N_i \ S| for i in S
    eye = np.eye(n)
    zeros_n = np.zeros((n, n))
    zero_col = np.zeros((n, 1))
    one_col = np.ones((n, 1))
    rows = [
        # b1 + b2 <= 1 (disjoint)
        (np.hstack([eye, eye, zero_col]), -np.inf, 1.0),
        # L b1 - t <= 0 and L b2 - t <= 0: for i in S_k the row is |N_i \ S_k| - t, for i
        # outside S_k it is -|N_i cap S_k| - t <= 0 automatically, so no big-M is needed.
        (np.hstack([lap, zeros_n, -one_col]), -np.inf, 0.0),
        (np.hstack([zeros_n, lap, -one_col]), -np.inf, 0.0),
        # nonempty: 1'b1 >= 1, 1'b2 >= 1; symmetry breaking 1'b1 <= 1'b2 (swap S1, S2)
        (np.concatenate([np.ones(n), np.zeros(n), [0.0]])[None, :], 1.0, np.inf),
        (np.concatenate([np.zeros(n), np.ones(n), [0.0]])[None, :], 1.0, np.inf),
        (np.concatenate([np.ones(n), -np.ones(n), [0.0]])[None, :], -np.inf, 0.0),
    ]
    mat = np.vstack([m for m, _, _ in rows])
    lo = np.concatenate([np.full(m.shape[0], lb) for m, lb, _ in rows])
    hi = np.concatenate([np.full(m.shape[0], ub) for m, _, ub in rows])
    # For n >= 2 the optimum is at most ceil(n/2) (split V in two halves; any graph is a
    # subgraph of K_n).
    t_max = float(math.ceil(n / 2)) if feasibility_r is None else float(feasibility_r - 1)
    lb = np.zeros(2 * n + 1)
    ub = np.concatenate([np.ones(2 * n), [t_max]])
    c = np.zeros(2 * n + 1)
    if feasibility_r is None:
        c[-1] = 1.0
    options = {"disp": False}
    if math.isfinite(time_limit):
        options["time_limit"] = time_limit
    res = milp(
        c,
        constraints=LinearConstraint(mat, lo, hi),
        integrality=np.ones(2 * n + 1),
        bounds=Bounds(lb, ub),
        options=options,
    )
    b1 = b2 = None
    t_val = None
    if res.x is not None:
        b1 = np.round(res.x[:n]).astype(bool)
        b2 = np.round(res.x[n : 2 * n]).astype(bool)
        t_val = _pair_reach(a, b1, b2)
    dual = getattr(res, "mip_dual_bound", None)
    return res.status, b1, b2, t_val, dual, res.message


def _pair_reach(a: np.ndarray, b1: np.ndarray, b2: np.ndarray) -> int:
    """Exact ``max(reach(S1), reach(S2))`` for indicator vectors (recomputed, no round-off)."""
    a0 = a.copy()
    np.fill_diagonal(a0, False)
    vals = []
    for b in (b1, b2):
        outside = (a0 & ~b[None, :]).sum(axis=1)
        vals.append(int(outside[b].max()))
    return max(vals)


def _raise_if_solver_failed(status: int, msg: str, n: int) -> None:
    if status != 1:  # 1 = time or iteration limit; anything else left is a solver failure
        raise RuntimeError(
            f"HiGHS failed on the robustness MILP (n = {n}, status {status}: {msg!r}). Use "
            f"method='enumerate' if n <= {ENUMERATION_HARD_MAX_N}."
        )


def _milp_r(a: np.ndarray, time_limit: float) -> int:
    n = a.shape[0]
    if n == 1:
        return 1
    status, _, _, t_val, dual, msg = _milp_solve(a, time_limit, None)
    if status == 0 and t_val is not None:
        return t_val
    _raise_if_solver_failed(status, msg, n)
    lower = None
    if dual is not None and math.isfinite(dual):
        lower = max(0, math.ceil(dual - 1e-6))
    if t_val is not None and lower is not None and lower >= t_val:
        return t_val  # the bounds meet (t is an integer)
    lower_txt = "no lower bound proven yet (>= 0)" if lower is None else f"proven >= {lower}"
    if t_val is not None:
        upper_txt = f"<= {t_val} (best pair found)"
    else:
        upper_txt = f"no pair found yet (<= ceil(n/2) = {math.ceil(n / 2)})"
    raise RobustnessTimeoutError(
        f"The r-robustness MILP (n = {n}) hit the time limit of {time_limit} s before proving "
        f"optimality (HiGHS: {msg!r}). Bounds on r: {lower_txt}; {upper_txt}. Raise "
        f"time_limit, or use method='enumerate' if n <= {ENUMERATION_HARD_MAX_N}.",
        lower_bound=lower,
        upper_bound=t_val,
    )


def _milp_witness(
    a: np.ndarray, r: int, time_limit: float
) -> tuple[frozenset[int], frozenset[int]] | None:
    n = a.shape[0]
    if n == 1 or r == 0:
        return None
    status, b1, b2, t_val, _, msg = _milp_solve(a, time_limit, r)
    if b1 is not None and t_val is not None and t_val < r:
        return (
            frozenset(np.flatnonzero(b1).tolist()),
            frozenset(np.flatnonzero(b2).tolist()),
        )
    if status == 2:  # infeasible: no pair with both sets not r-reachable
        return None
    _raise_if_solver_failed(status, msg, n)
    raise RobustnessTimeoutError(
        f"The {r}-robustness MILP (n = {n}) stopped before it either found a pair of sets that "
        f"are not {r}-reachable or proved none exists: it hit the time limit of {time_limit} s "
        f"(HiGHS: {msg!r}). Raise time_limit, or use method='enumerate' if "
        f"n <= {ENUMERATION_HARD_MAX_N}.",
        lower_bound=None,
        upper_bound=None,
    )


# ----------------------------------------------------------------------------- public API


def r_robustness(adj, *, method: str = "auto", time_limit: float = 60.0) -> int:
    """Largest r such that the digraph is r-robust.

    ``r_robustness(adj) = min over nonempty disjoint S1, S2 of
    max(max_{i in S1} |N_i \\ S1|, max_{i in S2} |N_i \\ S2|)`` (LeBlanc et al. 2013, Def. 6).
    It is 0 when the graph is not 1-robust (1-robust iff some agent reaches every other agent
    along directed information paths, i.e. a rooted out-branching) and at most ``ceil(n/2)``,
    attained by the complete graph. A single agent is vacuously r-robust for every r; by
    convention ``ceil(1/2) = 1`` is returned.

    MILP (Usevitch & Panagou, arXiv:1901.11000): with indicator vectors ``b1, b2 in {0,1}^n`` of
    S1, S2 and the in-Laplacian ``L = D - A`` (``(L b)_i = |N_i \\ S|`` for ``i in S``),
    ``min t  s.t.  L b1 <= t 1,  L b2 <= t 1,  b1 + b2 <= 1,  1'b1 >= 1,  1'b2 >= 1``, with
    ``t, b`` integer. Rows of agents outside S_k are ``-|N_i cap S_k| <= 0 <= t`` on their own,
    so the big-M term of the paper's formulation is not needed.

    Args:
        adj: boolean ``[n, n]`` adjacency, ``adj[i, j]`` True iff i receives from j, self-loops
            on the diagonal.
        method: ``"enumerate"`` (exact over all 2^n subsets, ``n <= ENUMERATION_HARD_MAX_N``),
            ``"milp"`` (HiGHS branch and bound) or ``"auto"`` (enumerate for
            ``n <= ENUMERATION_MAX_N``, else MILP).
        time_limit: seconds allowed to the MILP (``math.inf`` for none).

    Returns:
        The robustness r (a Python int).

    Raises:
        ValueError: malformed ``adj``, unknown ``method``, bad ``time_limit``, or ``n`` too large
            for ``method="enumerate"``.
        RobustnessTimeoutError: the MILP hit ``time_limit`` before proving the optimum (the
            message carries the bounds found).

    Example:
        >>> adj = np.ones((5, 5), dtype=bool)  # complete graph K_5
        >>> r_robustness(adj)
        3
    """
    _refuse_sparse(adj, "adj")
    a = as_adjacency(adj, name="adj", require_self_loops=True)
    n = a.shape[0]
    method = _check_method(method, n)
    time_limit = _check_time_limit(time_limit)
    if method == "enumerate":
        return _enumerate_r(a)
    return _milp_r(a, time_limit)


def robustness_witness(
    adj, r: int, *, method: str = "auto", time_limit: float = 60.0
) -> tuple[frozenset[int], frozenset[int]] | None:
    """A pair of nonempty disjoint sets that are both not r-reachable, or None if r-robust.

    The pair ``(S1, S2)`` certifies ``not r-robust``: every ``i in S_k`` has
    ``|N_i \\ S_k| < r`` for k = 1, 2. Enumeration returns a smallest such S1 and a smallest S2
    next to it; the MILP returns the first pair HiGHS finds.

    Args:
        adj: boolean ``[n, n]`` adjacency with self-loops (``adj[i, j]``: i receives from j).
        r: integer ``>= 0`` (every graph is 0-robust, so ``r = 0`` gives None).
        method: as in :func:`r_robustness`.
        time_limit: seconds allowed to the MILP.

    Returns:
        ``(S1, S2)`` as frozensets of agent indices, or None.

    Example:
        >>> ring = np.eye(4, dtype=bool) | np.roll(np.eye(4, dtype=bool), 1, axis=1)
        >>> robustness_witness(ring, 2)
        (frozenset({0}), frozenset({1}))
    """
    _refuse_sparse(adj, "adj")
    a = as_adjacency(adj, name="adj", require_self_loops=True)
    r = _check_order(r, "r", 0)
    method = _check_method(method, a.shape[0])
    time_limit = _check_time_limit(time_limit)
    if method == "enumerate":
        return _enumerate_witness(a, r)
    return _milp_witness(a, r, time_limit)


def is_r_robust(adj, r: int, *, method: str = "auto", time_limit: float = 60.0) -> bool:
    """Whether the digraph is r-robust (LeBlanc et al. 2013, Def. 6).

    r-robust iff no two nonempty disjoint sets are both not r-reachable, i.e.
    ``r <= r_robustness(adj)`` for ``n >= 2``. A single agent is vacuously r-robust for every r.
    With the MILP this solves the feasibility problem "is there a pair with
    ``L b1 <= (r-1) 1`` and ``L b2 <= (r-1) 1``", usually faster than the optimization.

    Args:
        adj: boolean ``[n, n]`` adjacency with self-loops (``adj[i, j]``: i receives from j).
        r: integer ``>= 0`` (``r = 0`` is always True).
        method: as in :func:`r_robustness`.
        time_limit: seconds allowed to the MILP.

    Example:
        >>> adj = np.ones((5, 5), dtype=bool)
        >>> is_r_robust(adj, 3), is_r_robust(adj, 4)
        (True, False)
    """
    return robustness_witness(adj, r, method=method, time_limit=time_limit) is None


def is_rs_robust(adj, r: int, s: int) -> bool:
    """Whether the digraph is (r, s)-robust (LeBlanc et al. 2013, Def. 7), by enumeration.

    With ``X^r_S = {i in S : |N_i \\ S| >= r}``, (r, s)-robust means: for every pair of nonempty
    disjoint S1, S2, ``|X^r_S1| = |S1|`` or ``|X^r_S2| = |S2|`` or ``|X^r_S1| + |X^r_S2| >= s``.
    A violating pair has both sets "not full" and ``|X^r_S1| + |X^r_S2| < s``; it exists iff
    ``min_{S1 not full} |X^r_S1| + min_{S2 subset of V \\ S1, not full} |X^r_S2| < s``, found
    with a subset-minimum transform over all 2^n subsets. ``(r, 1)``-robust = r-robust.

    Args:
        adj: boolean ``[n, n]`` adjacency with self-loops (``adj[i, j]``: i receives from j),
            ``n <= ENUMERATION_HARD_MAX_N``.
        r: integer ``>= 1``.
        s: integer ``>= 1``.

    Example:
        >>> adj = np.ones((4, 4), dtype=bool)
        >>> is_rs_robust(adj, 2, 4), is_rs_robust(adj, 3, 1)
        (True, False)
    """
    _refuse_sparse(adj, "adj")
    a = as_adjacency(adj, name="adj", require_self_loops=True)
    r = _check_order(r, "r", 1)
    s = _check_order(s, "s", 1)
    n = a.shape[0]
    _check_enumerable(n)
    if n == 1:
        return True
    x, size = _x_counts_of_all_subsets(a, r)
    not_full = x < size  # False for the empty set (0 < 0)
    masked = np.where(not_full, x, _NO_SET).astype(np.int32)
    best_sub = _subset_min(masked, n)
    full = (1 << n) - 1
    s1 = np.arange(1, full, dtype=np.int64)
    s1 = s1[not_full[s1]]
    total = x[s1].astype(np.int32) + best_sub[full ^ s1].astype(np.int32)
    return not bool(np.any(total < s))
