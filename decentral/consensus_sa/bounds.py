"""The quantities in Theorem 3 of Lin, Gupta, Liu (finite-time bounds of consensus SA).

Everything the theorem's hypotheses and its contraction factor need, computed on the host in
float64 (the paper's symbol in brackets):

* ``P`` solving the Lyapunov equation ``A^T P + P A = -I`` (Assumption 4), its extreme
  eigenvalues ``gamma_max``, ``gamma_min``;
* ``A_max = max_x ||A(x)||_2``, ``b_max = max_{i,x} ||b^i(x)||_2`` over the states the chain
  visits (Assumption 2);
* the mixing time ``tau(alpha)`` (Assumption 3, :func:`decentral.markov.mixing_time`);
* the absolute probability sequence ``pi_t`` (Definition 2), ``pi_min``, ``pi_inf`` and
  ``eta_t = ||pi_t - pi_inf||_2``;
* ``beta`` (the smallest positive weight, Assumption 1), the window ``L`` (Definition 1) and
  ``delta_max``, the largest diameter of a window union;
* the contraction factor of eq. (6)

      eps(alpha) = (1 + 2 b_max/A_max - pi_min beta^{2L} / (2 delta_max)) (1 + alpha A_max)^{2L}
                   - (2 b_max / A_max) (1 + alpha A_max)^L,

  its limit ``1 - pi_min beta^{2L} / (2 delta_max)`` as ``alpha -> 0``, and the single-agent
  rate ``1 - 0.9 alpha / gamma_max`` of eq. (7);
* the step-size condition ``0 < alpha < min{K1, log 2 / (A_max tau(alpha)), 0.1 / (K2
  gamma_max)}``: K1 and K2 are defined in the paper's appendix, which we do not have, so only
  the computable part is checked, with ``eps(alpha) < 1`` as a stand-in for K1.

Which ``alpha`` enters eq. (6) under a time-varying step is not stated in the paper; for a
:class:`~decentral.schedules.StepSize` this module uses its first step ``alpha_0``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.linalg

from decentral._checks import check_int
from decentral.graphs import GraphSequence, absolute_probability_sequence, connectivity_window
from decentral.graphs.checks import pattern_stack, window_unions
from decentral.markov import mixing_time
from decentral.schedules import StepSize

from .problem import LinearSAProblem

__all__ = ["BoundQuantities", "bound_quantities", "contraction_factor", "window_diameter"]


class BoundQuantities(NamedTuple):
    """The quantities of Theorem 3 (see the module docstring for each symbol)."""

    alpha: float                 # alpha: the step size entering eq. (6)
    lyapunov: np.ndarray         # P [d, d]
    gamma_max: float             # largest eigenvalue of P
    gamma_min: float             # smallest eigenvalue of P
    A_max: float
    b_max: float
    tau: int                     # tau(alpha)
    pi: np.ndarray               # pi_0 .. pi_T  [T + 1, N]
    pi_inf: np.ndarray           # pi_infinity   [N]
    pi_min: float
    eta: np.ndarray              # ||pi_t - pi_inf||_2  [T + 1]
    beta: float
    window: int                  # L
    delta_max: int
    epsilon: float               # eq. (6) at alpha
    epsilon_limit: float         # eq. (6) as alpha -> 0
    single_agent_rate: float     # 1 - 0.9 alpha / gamma_max
    log2_condition: bool         # alpha < log 2 / (A_max tau(alpha))
    epsilon_below_one: bool      # the stand-in for alpha < K1
    admissible: bool             # both computable parts hold (K2's part is unknown)


def contraction_factor(alpha, *, A_max: float, b_max: float, pi_min: float, beta: float,
                       window: int, delta_max: int) -> np.ndarray:
    """eq. (6): ``eps(alpha)`` (array-friendly in ``alpha``).

    Example:
        >>> e = contraction_factor(0.0, A_max=1.0, b_max=1.0, pi_min=0.1, beta=0.1, window=1,
        ...                        delta_max=2)
        >>> round(float(1 - e), 6)          # pi_min beta^2 / (2 delta) = 0.1 * 0.01 / 4
        0.00025
    """
    a = np.asarray(alpha, dtype=np.float64)
    ratio = 2.0 * b_max / A_max
    g = pi_min * beta ** (2 * window) / (2.0 * delta_max)
    grow = (1.0 + a * A_max)
    return (1.0 + ratio - g) * grow ** (2 * window) - ratio * grow ** window


def window_diameter(graphs, window: int, *, horizon: int | None = None) -> int:
    """``delta_max``: the largest diameter of the unions of ``window`` consecutive graphs."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    pats, wrap, _ = pattern_stack(graphs, horizon=horizon)
    unions, _ = window_unions(pats, window, wrap)
    worst = 0
    for u in np.unique(unions, axis=0):
        dist = shortest_path(csr_matrix(u.T), unweighted=True)
        if not np.all(np.isfinite(dist)):
            raise ValueError(f"a union of {window} consecutive graphs is not strongly "
                             "connected; the window is too short.")
        worst = max(worst, int(dist.max()))
    return max(worst, 1)


def _alpha_of(step) -> float:
    if isinstance(step, StepSize):
        a0, t0, power = (float(np.asarray(v)) for v in step)
        return a0 / t0 ** power
    a = float(step)
    if not (a > 0 and math.isfinite(a)):
        raise ValueError(f"step size must be a positive number or a StepSize; got {step!r}.")
    return a


def bound_quantities(problem: LinearSAProblem, graphs: GraphSequence, step_size, *,
                     horizon: int = 1000) -> BoundQuantities:
    """Every quantity Theorem 3 needs, for ``problem`` on ``graphs`` at ``step_size``.

    Args:
        problem: the tables (``A`` must be Hurwitz).
        graphs: a row-stochastic sequence; windows and ``pi_t`` are examined over
            ``horizon`` steps (static and periodic forms exactly).
        step_size: the constant ``alpha``, or a :class:`~decentral.schedules.StepSize` (its
            first step is used, see the module docstring).
        horizon: T for ``pi_0 .. pi_T``, ``eta_t`` and the windows of non-periodic forms.

    Raises:
        ValueError: ``A`` not Hurwitz; graphs not uniformly strongly connected over the
            horizon.

    Example:
        >>> import decentral.graphs as g
        >>> from decentral.consensus_sa import random_mrp, td0_problem
        >>> prob = td0_problem(*random_mrp(0, num_states=4, num_features=2, num_agents=3), 0.8)
        >>> q = bound_quantities(prob, g.static(g.ring(3), rule="row"), 0.01, horizon=10)
        >>> q.window, q.delta_max, bool(0 < q.epsilon_limit < 1)
        (1, 2, True)
    """
    alpha = _alpha_of(step_size)
    T = check_int(horizon, "horizon")
    A = problem.mean_A()
    eig = np.linalg.eigvals(A)
    if not np.all(eig.real < 0):
        raise ValueError(f"A is not Hurwitz (max real part {eig.real.max():.3g}): Assumption 4 "
                         "fails, Theorem 3 does not apply.")
    lyap = scipy.linalg.solve_continuous_lyapunov(A.T, -np.eye(problem.dim))
    lyap = 0.5 * (lyap + lyap.T)
    gam = np.linalg.eigvalsh(lyap)
    reach = problem.reachable()
    A_max = float(max(np.linalg.norm(problem.A[x], 2) for x in reach))
    b_max = float(np.linalg.norm(problem.b[reach], axis=-1).max())
    tau = mixing_time(problem.transition, [problem.A, problem.b], alpha,
                      kinds=["matrix", "agents"], start_states=reach)
    window_h = None if graphs.form in ("static", "periodic", "one_peer_exponential") else T
    L = connectivity_window(graphs, horizon=window_h)
    if L is None:
        raise ValueError("the graphs are not uniformly strongly connected over the horizon "
                         "(no window L works): Definition 1 fails.")
    delta = window_diameter(graphs, L, horizon=window_h)
    pi = absolute_probability_sequence(graphs, T)
    if graphs.form == "static":
        pi_inf = pi[0]
    else:
        pi_inf = absolute_probability_sequence(graphs, 4 * T + 64)[-1]
    eta = np.linalg.norm(pi - pi_inf[None], axis=1)
    ws = graphs.weights_host64(T)
    beta = float(ws[ws > 0].min())
    pi_min = float(pi.min())
    eps = float(contraction_factor(alpha, A_max=A_max, b_max=b_max, pi_min=pi_min, beta=beta,
                                   window=L, delta_max=delta))
    eps0 = float(contraction_factor(0.0, A_max=A_max, b_max=b_max, pi_min=pi_min, beta=beta,
                                    window=L, delta_max=delta))
    log2_ok = bool(tau == 0 or alpha < math.log(2) / (A_max * tau))
    eps_ok = bool(0 < eps < 1)
    return BoundQuantities(alpha, lyap, float(gam[-1]), float(gam[0]), A_max, b_max, int(tau),
                           pi, pi_inf, pi_min, eta, beta, int(L), int(delta), eps, eps0,
                           1.0 - 0.9 * alpha / float(gam[-1]), log2_ok, eps_ok,
                           log2_ok and eps_ok)
