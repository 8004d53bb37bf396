"""Consensus-type distributed linear stochastic approximation with Markovian noise.

Lin, Gupta, Liu, *Finite-Time Error Bounds for Distributed Linear Stochastic Approximation*:
N agents, each holding ``theta^i``, mix their parameters with a merely **row-stochastic**
``W_t`` and take a linear SA step driven by one shared Markov chain. The network reaches the
``pi``-weighted equilibrium ``theta*_pi = -A^{-1} sum_i pi_inf^i b^i`` (Theorem 2), with the
finite-time rates of Theorem 3. The pieces, in the order data flows:

* :mod:`~decentral.consensus_sa.problem` — :class:`LinearSAProblem`, :func:`td0_problem`
  (distributed TD(0), the flagship instance), :func:`random_mrp`, :func:`limit`;
* :mod:`~decentral.consensus_sa.algorithm` — :func:`consensus_sa` (eq. (1)/(3), and Remark 1's
  adapt-then-combine variant), :func:`sa_params`;
* :mod:`~decentral.consensus_sa.bounds` — :func:`bound_quantities` (Theorem 3's quantities,
  eq. (6));
* :mod:`~decentral.consensus_sa.moments` — :func:`exact_moments`, the exact mean and second
  moment of the iterate (a Markov jump linear system), the noise-free oracle of the checks;
* :mod:`~decentral.consensus_sa.metrics` — the error decompositions the claims log.

Push-sum SA (eq. (9)) lives in :mod:`decentral.push_sum` and shares the problem and params.
"""

from .algorithm import (
    DIVERGENCE_FACTOR,
    VARIANTS,
    SAParams,
    SAState,
    consensus_sa,
    divergence_scale,
    initial_chain_state,
    sa_params,
    theta_of,
)
from .bounds import BoundQuantities, bound_quantities, contraction_factor, window_diameter
from .metrics import error_parts
from .moments import DEFAULT_FLOP_BUDGET, Moments, exact_moments, weighted_error_from_moments
from .problem import MRP, LinearSAProblem, limit, local_limits, random_mrp, td0_problem

__all__ = [
    "LinearSAProblem", "MRP", "td0_problem", "random_mrp", "limit", "local_limits",
    "SAState", "SAParams", "sa_params", "consensus_sa", "VARIANTS", "theta_of",
    "initial_chain_state", "DIVERGENCE_FACTOR", "divergence_scale",
    "BoundQuantities", "bound_quantities", "contraction_factor", "window_diameter",
    "Moments", "exact_moments", "weighted_error_from_moments", "DEFAULT_FLOP_BUDGET",
    "error_parts",
]
