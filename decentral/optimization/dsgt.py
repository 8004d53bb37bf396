"""Distributed stochastic gradient tracking (DSGT) and its no-tracking contrast DSGD.

Pu & Nedić, "Distributed stochastic gradient tracking methods", Math. Program. 187, 2021,
eq. (4) (constant step: Theorem 1; ``alpha_k = theta / (m + k)``: Theorem 2).
``W`` doubly stochastic, ``g(x)`` the agents' stochastic gradients (``grad f_i + sigma eps_i``,
fresh samples every step, ``sigma = params.gradient_noise``), ``y(0) = g(x(0))``, and at step
k, in this order::

    x(k+1) = W (x(k) - alpha_k y(k))
    y(k+1) = W y(k) + g(x(k+1)) - g(x(k))          variant="pu_nedic"
           = W (y(k) + g(x(k+1)) - g(x(k)))        variant="mixed_correction"

(the second form is the one some public implementations use). DSGD drops the tracker::

    x(k+1) = W (x(k) - alpha_k g(x(k)))

the adapt-then-combine form (``dgd(..., grad_at="own")`` with gradient noise is the
combine-then-adapt one). Communication per edge per step: ``2 d`` numbers (DSGT), ``d`` (DSGD).

Exact identities (float64, sample path by sample path): ``sum_i y_i(k) = sum_i g_i(x_i(k))``;
with ``sigma = 0`` DSGT is push-pull with ``R = C = W``.

Example:
    >>> import numpy as np
    >>> import decentral.graphs as g
    >>> from decentral.optimization import dsgt, optimization_params, random_quadratic
    >>> from decentral.runner import run
    >>> p = random_quadratic(4, 2, smoothness=2.0, heterogeneity=1.0, seed=0)
    >>> res = run(dsgt(p, g.static(g.complete(4), rule="metropolis")),
    ...           optimization_params(0.05, gradient_noise=0.01), seeds=[0], num_steps=2000)
    >>> bool(np.abs(np.asarray(res.final_state.x[0]) - p.optimum).max() < 0.05)
    True
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from decentral.optimization.base import (
    check_problem,
    graphs_of,
    mix_together,
    noise_key,
    params_checker,
    sequence_for,
    state_dtype,
)
from decentral.optimization.params import OptimizationParams
from decentral.optimization.tracking import tracking_algorithm
from decentral.schedules import step_size

__all__ = ["dsgt", "dsgd", "DSGDState", "DSGT_VARIANTS"]

DSGT_VARIANTS = {"pu_nedic": "mix_tracker", "mixed_correction": "mix_correction"}


class DSGDState(NamedTuple):
    """State of DSGD.

    Attributes:
        x: ``[N, d]`` the iterates.
    """

    x: jax.Array

    @property
    def estimate(self) -> jax.Array:
        """The agents' estimates ``[N, d]``: the iterates."""
        return self.x


def dsgt(problem, graphs, *, variant: str = "pu_nedic", dtype=None, rule: str | None = None,
         backend: str | None = None):
    """DSGT over a doubly stochastic graph sequence (see the module docstring).

    Args:
        problem: a :class:`~decentral.optimization.problems.Problem` (closed over).
        graphs: ``k -> W(k)``, doubly stochastic (the paper's W is static; time-varying
            sequences run the same update).
        variant: ``"pu_nedic"`` (the paper's) or ``"mixed_correction"``.
        dtype: dtype of the iterates when the params give no ``x0``.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An :class:`~decentral.runner.Algorithm` with state
        :class:`~decentral.optimization.tracking.TrackingState`.

    Raises:
        ValueError: not a Problem, weights not doubly stochastic, another number of agents,
            or an unknown ``variant``.
    """
    check_problem(problem, "dsgt")
    if variant not in DSGT_VARIANTS:
        raise ValueError(f"variant must be one of {tuple(DSGT_VARIANTS)}; got {variant!r}.")
    graphs = sequence_for(problem, graphs, "doubly", "dsgt", rule=rule, backend=backend)
    return tracking_algorithm(problem, {"graphs": (graphs, "doubly")}, name="dsgt",
                              x_form="adapt_then_combine", y_form=DSGT_VARIANTS[variant],
                              dtype=dtype, options={"variant": variant})


def dsgd(problem, graphs, *, dtype=None, rule: str | None = None, backend: str | None = None):
    """DSGD, ``x(k+1) = W (x(k) - alpha_k g(x(k)))``, over a doubly stochastic sequence: DSGT
    without the tracker (see the module docstring; arguments as :func:`dsgt`)."""
    from decentral.runner import Algorithm

    check_problem(problem, "dsgd")
    graphs = sequence_for(problem, graphs, "doubly", "dsgd", rule=rule, backend=backend)
    n, d = problem.num_agents, problem.dim
    x_dtype = state_dtype(dtype)

    def init(key, params: OptimizationParams) -> DSGDState:
        return DSGDState(jnp.zeros((n, d), x_dtype) if params.x0 is None
                         else jnp.asarray(params.x0))

    def step(key, state, params: OptimizationParams, t, x_t):
        (seq,) = graphs_of(params, (graphs,))
        x = state.x
        g = problem.stochastic_gradient(noise_key(key), x, params.gradient_noise)
        alpha = step_size(params.step_size, t).astype(x.dtype)
        return DSGDState(mix_together(seq.at(t, key), x - alpha * g)[0]), None

    config = {"problem": problem.config(), "graphs": graphs.digest(), "dtype": str(x_dtype)}
    return Algorithm(init=init, step=step, name="dsgd", version="1",
                     max_horizon=graphs.length, config=config,
                     check_params=params_checker(problem, {"graphs": (graphs, "doubly")},
                                                 "dsgd"),
                     num_agents=n)
