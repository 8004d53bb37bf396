"""DIGing: gradient tracking over doubly stochastic, time-varying graphs.

Nedić, Olshevsky & Shi, "Achieving geometric convergence for distributed optimization over
time-varying graphs", SIAM J. Optim. 27(4), 2017, Algorithm 1 (R-linear convergence:
Theorem 10). ``W(k)`` doubly stochastic,
``y(0) = grad F(x(0))``, and at step k, in this order::

    x(k+1) = W(k) x(k) - alpha_k y(k)
    y(k+1) = W(k) y(k) + grad F(x(k+1)) - grad F(x(k))

(with ``gradient_noise = sigma`` every gradient is a sample ``grad f_i + sigma eps_i``; the
sample at ``x(k)`` enters both the correction of step k-1 and that of step k). The paper's
step is constant; a schedule gives ``alpha_k``. Communication: ``2 d`` numbers per edge per
step (``x`` and ``y``).

Exact identities (float64): ``sum_i y_i(k) = sum_i grad f_i(x_i(k))`` (the tracking
invariant) and ``mean_i x_i(k+1) = mean_i x_i(k) - alpha_k mean_i y_i(k)``.

Example:
    >>> import numpy as np
    >>> import decentral.graphs as g
    >>> from decentral.optimization import diging, optimization_params, random_quadratic
    >>> from decentral.runner import run
    >>> p = random_quadratic(4, 2, smoothness=2.0, heterogeneity=1.0, seed=0)
    >>> res = run(diging(p, g.static(g.ring(4) | g.ring(4).T, rule="metropolis")),
    ...           optimization_params(0.05), seeds=[0], num_steps=2000)
    >>> bool(np.abs(np.asarray(res.final_state.x[0]) - p.optimum).max() < 1e-4)
    True
"""

from __future__ import annotations

from decentral.optimization.base import check_problem, sequence_for
from decentral.optimization.tracking import tracking_algorithm

__all__ = ["diging"]


def diging(problem, graphs, *, dtype=None, rule: str | None = None,
           backend: str | None = None):
    """DIGing over a doubly stochastic graph sequence (see the module docstring).

    Args:
        problem: a :class:`~decentral.optimization.problems.Problem` (closed over).
        graphs: the sequence ``k -> W(k)``, doubly stochastic (``rule="metropolis"`` on
            undirected graphs), time-varying allowed.
        dtype: dtype of the iterates when the params give no ``x0``.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An :class:`~decentral.runner.Algorithm` with state
        :class:`~decentral.optimization.tracking.TrackingState`.

    Raises:
        ValueError: not a Problem, weights not doubly stochastic, or another number of agents.
    """
    check_problem(problem, "diging")
    graphs = sequence_for(problem, graphs, "doubly", "diging", rule=rule, backend=backend)
    return tracking_algorithm(problem, {"graphs": (graphs, "doubly")}, name="diging",
                              x_form="combine_then_adapt", y_form="mix_tracker", dtype=dtype)
