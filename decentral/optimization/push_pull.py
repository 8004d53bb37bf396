"""Push-pull (and the AB method): gradient tracking with a row-stochastic pull graph for the
iterates and a column-stochastic push graph for the trackers.

Pu, Shi, Xu & Nedić, "Push-pull gradient methods for distributed optimization in networks",
IEEE TAC 66(1), 2021; Xin & Khan, "A linear algorithm for optimization over directed graphs
with geometric convergence", IEEE Control Syst. Lett. 2(3), 2018 (AB). ``R(k)``
row-stochastic, ``C(k)`` column-stochastic, ``y(0) = grad F(x(0))``, and at step k::

    x(k+1) = R(k) (x(k) - alpha_k y(k))                   variant="push_pull"
           = R(k) x(k) - alpha_k y(k)                     variant="ab", "ab_mixed_correction"
    y(k+1) = C(k) y(k) + grad F(x(k+1)) - grad F(x(k))    variant="push_pull", "ab"
           = C(k) (y(k) + grad F(x(k+1)) - grad F(x(k)))  variant="ab_mixed_correction"

A random push sequence draws from ``fold_in(step key, 2)``, the pull sequence from the step key.
Communication: ``d`` numbers on each edge of the pull graph (receivers pull ``x``) and ``d`` on
each edge of the push graph (senders push ``y``) per step.

Exact identities (float64): ``sum_i y_i(k) = sum_i grad f_i(x_i(k))``; for a static R with left
Perron vector u (``u^T R = u^T``), push-pull keeps ``u^T x(k+1) = u^T (x(k) - alpha y(k))``.

Example:
    >>> import numpy as np
    >>> import decentral.graphs as g
    >>> from decentral.optimization import optimization_params, push_pull, random_quadratic
    >>> from decentral.runner import run
    >>> p = random_quadratic(4, 2, smoothness=2.0, heterogeneity=1.0, seed=0)
    >>> A = g.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])
    >>> alg = push_pull(p, g.static(A, rule="row"), g.static(A, rule="column"))
    >>> res = run(alg, optimization_params(0.05), seeds=[0], num_steps=3000)
    >>> bool(np.abs(np.asarray(res.final_state.x[0]) - p.optimum).max() < 1e-4)
    True
"""

from __future__ import annotations

from decentral.optimization.base import check_problem, sequence_for
from decentral.optimization.tracking import tracking_algorithm

__all__ = ["push_pull", "PUSH_PULL_VARIANTS"]

PUSH_PULL_VARIANTS = {
    "push_pull": ("adapt_then_combine", "mix_tracker"),
    "ab": ("combine_then_adapt", "mix_tracker"),
    "ab_mixed_correction": ("combine_then_adapt", "mix_correction"),
}


def push_pull(problem, pull_graphs, push_graphs, *, variant: str = "push_pull", dtype=None,
              rule: str | None = None, backend: str | None = None):
    """Push-pull / AB over a row-stochastic pull sequence and a column-stochastic push
    sequence (see the module docstring).

    Args:
        problem: a :class:`~decentral.optimization.problems.Problem` (closed over).
        pull_graphs: ``k -> R(k)``, row-stochastic (``rule="row"``).
        push_graphs: ``k -> C(k)``, column-stochastic (``rule="column"``).
        variant: ``"push_pull"`` (Pu et al.), ``"ab"`` (Xin & Khan) or
            ``"ab_mixed_correction"`` (AB with the correction mixed too).
        dtype: dtype of the iterates when the params give no ``x0``.
        rule, backend: as in :func:`decentral.graphs.as_sequence`, for both sequences.

    Returns:
        An :class:`~decentral.runner.Algorithm` with state
        :class:`~decentral.optimization.tracking.TrackingState`; ``params.graphs``, where
        given, is the pair ``(pull, push)``.

    Raises:
        ValueError: not a Problem, ``pull_graphs`` not row-stochastic, ``push_graphs`` not
            column-stochastic, another number of agents, or an unknown ``variant``.
    """
    check_problem(problem, "push_pull")
    if variant not in PUSH_PULL_VARIANTS:
        raise ValueError(f"variant must be one of {tuple(PUSH_PULL_VARIANTS)}; got {variant!r}.")
    x_form, y_form = PUSH_PULL_VARIANTS[variant]
    pull = sequence_for(problem, pull_graphs, "row", "push_pull", rule=rule, backend=backend,
                        name="pull_graphs")
    push = sequence_for(problem, push_graphs, "column", "push_pull", rule=rule,
                        backend=backend, name="push_graphs")
    return tracking_algorithm(problem, {"pull_graphs": (pull, "row"),
                                        "push_graphs": (push, "column")},
                              name="push_pull", x_form=x_form, y_form=y_form, dtype=dtype,
                              options={"variant": variant})
