"""Push-sum: the straight average over one-way links, and push-sum stochastic approximation.

* :func:`push_sum` — ratio consensus (Kempe, Dobra, Gehrke 2003; Bénézit et al.): each agent
  keeps a value ``x`` and a weight ``y`` (``y_0 = 1``), pushes both with column-stochastic
  weights, and ``x / y`` reaches the plain average of ``x(0)`` on any uniformly strongly
  connected directed sequence.
* :func:`push_sum_sa` — push-SA, Lin, Gupta, Liu eq. (9): the linear SA drift is evaluated at
  the de-biased ratio ``theta = theta~ / y`` and added to the unnormalised ``theta~`` before
  the push; every ``theta^i`` reaches ``theta*_unif = -A^{-1} (1/N) sum_i b^i`` (Theorem 4).
* :func:`contraction_bound` — the push-SA factor ``eps_bar <= (1 - 1/N^{NL})^{1/L}``
  (Theorem 5).
* :func:`exact_moments` — the exact-moment oracle of push-SA (the sequence ``y_t`` is
  deterministic on a deterministic graph sequence, so the recursion is linear).

The weights are column-stochastic, ``W^[i, j] = 1 / |out-neighbours of j, itself included|``
for every edge j -> i (rule ``"column"`` of :mod:`decentral.graphs`), with the project-wide
orientation ``W[i, j] > 0`` iff i receives from j. Each sender needs only its own out-degree.
"""

from .core import (
    PushSumParams,
    PushSumSAState,
    PushSumState,
    contraction_bound,
    exact_moments,
    push_sum,
    push_sum_params,
    push_sum_sa,
    push_weights_sequence,
    ratio_of,
    theta_of,
)

__all__ = [
    "PushSumState", "PushSumParams", "push_sum", "push_sum_params", "ratio_of",
    "PushSumSAState", "push_sum_sa", "theta_of", "contraction_bound", "exact_moments",
    "push_weights_sequence",
]
