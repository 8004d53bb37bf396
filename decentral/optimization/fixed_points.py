"""Closed-form limits on quadratics: the fixed point of DGD with a constant step and static W,
and the minimiser of a weighted sum of the agents' objectives.

For ``f_i(x) = x^T A_i x / 2 - b_i^T x`` any fixed point of ``X = W X - alpha grad F(X)``
solves ``(I - W) X + alpha (A_i x_i - b_i)_i = 0``, i.e. the linear system
``((I - W) kron I_d + alpha blkdiag(A_i)) vec(X) = alpha vec(b)`` (row-major ``vec``). Its
distance to ``1 x*^T`` is DGD's constant-step bias; for a row-stochastic W with left Perron
vector pi the fixed points approach ``x_pi = argmin sum_i pi_i f_i`` as alpha -> 0.

Example:
    >>> import numpy as np
    >>> from decentral.optimization import random_quadratic
    >>> p = random_quadratic(3, 2, seed=0)
    >>> W = np.full((3, 3), 1 / 3)
    >>> X = dgd_fixed_point(p, W, 0.01)
    >>> bool(np.allclose(X, W @ X - 0.01 * np.asarray(p.gradient(X)), atol=1e-12))
    True
"""

from __future__ import annotations

import numpy as np

from decentral.optimization.problems import QuadraticProblem

__all__ = ["dgd_fixed_point", "weighted_optimum"]


def _quadratic(problem, who: str) -> QuadraticProblem:
    if not isinstance(problem, QuadraticProblem):
        raise ValueError(f"{who} needs a quadratic problem (decentral.optimization.quadratic or "
                         f"random_quadratic); got {type(problem).__name__}.")
    return problem


def dgd_fixed_point(problem, W, alpha: float) -> np.ndarray:
    """The fixed point ``X_alpha [N, d]`` of DGD (``grad_at="own"``) with one weight matrix
    ``W [N, N]`` and a constant step ``alpha > 0``, solved in float64.

    Raises:
        ValueError: not a quadratic problem, W of the wrong shape, alpha not > 0, or a
            singular system (no unique fixed point).
    """
    problem = _quadratic(problem, "dgd_fixed_point")
    n, d = problem.num_agents, problem.dim
    W = np.asarray(W, np.float64)
    if W.shape != (n, n):
        raise ValueError(f"W must be [N, N] = [{n}, {n}]; got shape {W.shape}.")
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be finite and > 0; got {alpha!r}.")
    M = np.kron(np.eye(n) - W, np.eye(d))
    for i in range(n):
        M[i * d:(i + 1) * d, i * d:(i + 1) * d] += alpha * np.asarray(problem.hessians[i])
    rhs = alpha * np.asarray(problem.linear, np.float64).reshape(-1)
    try:
        return np.linalg.solve(M, rhs).reshape(n, d)
    except np.linalg.LinAlgError as err:
        raise ValueError(f"DGD has no unique fixed point for this W and alpha={alpha}.") from err


def weighted_optimum(problem, weights) -> np.ndarray:
    """``argmin_x sum_i w_i f_i(x) = (sum_i w_i A_i)^{-1} sum_i w_i b_i`` for weights
    ``w >= 0`` (``[N]``; the left Perron vector of a row-stochastic W gives ``x_pi``).

    Raises:
        ValueError: not a quadratic problem, weights of the wrong shape or negative, or a
            singular weighted Hessian.
    """
    problem = _quadratic(problem, "weighted_optimum")
    w = np.asarray(weights, np.float64)
    if w.shape != (problem.num_agents,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"weights must be [N] = [{problem.num_agents}] finite and >= 0; got "
                         f"shape {w.shape}.")
    H = np.einsum("i,ide->de", w, np.asarray(problem.hessians, np.float64))
    b = w @ np.asarray(problem.linear, np.float64)
    try:
        return np.linalg.solve(H, b)
    except np.linalg.LinAlgError as err:
        raise ValueError("the weighted Hessian sum_i w_i A_i is singular.") from err
