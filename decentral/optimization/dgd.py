"""Decentralized (sub)gradient descent, DGD: mix with the neighbours, then step along the own
gradient.

Nedić & Ozdaglar, "Distributed subgradient methods for multi-agent optimization", IEEE TAC
54(1), 2009, eq. (3); the constant-step analysis of Yuan, Ling & Yin, SIAM J. Optim. 26(3),
2016. Agent i at step t, in this order::

    g_i = grad f_i(x_i(t))               (own, pre-mixing point; grad_at="own", the papers')
    m_i = sum_j W_ij(t) x_j(t)
    x_i(t+1) = m_i - alpha_t g_i

or, with ``grad_at="mixed"``, ``g_i = grad f_i(m_i)`` (the variant that takes the gradient at
the mixed point). In matrix form ``X(t+1) = W(t) X(t) - alpha_t G(X(t))``. With
``gradient_noise = sigma`` each ``g_i`` gets ``sigma eps_i``, ``eps_i ~ N(0, I)`` drawn from the
step's key. Communication: one d-vector per edge per step.

Exact identities (float64): for doubly stochastic W(t), ``mean_i x_i(t+1) = mean_i x_i(t) -
alpha_t mean_i g_i``; for a static row-stochastic W with left Perron vector pi, ``pi^T X(t+1) =
pi^T X(t) - alpha_t pi^T G``.

Example:
    >>> import numpy as np
    >>> import decentral.graphs as g
    >>> from decentral.optimization import dgd, optimization_params, random_quadratic
    >>> from decentral.runner import run
    >>> p = random_quadratic(4, 2, heterogeneity=0.0, seed=0)
    >>> res = run(dgd(p, g.static(g.complete(4), rule="metropolis")),
    ...           optimization_params(0.05), seeds=[0], num_steps=500)
    >>> bool(np.abs(np.asarray(res.final_state.x[0]) - p.optimum).max() < 1e-4)
    True
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral.graphs import mix
from decentral.optimization.base import (
    check_problem,
    graphs_of,
    noise_key,
    params_checker,
    sequence_for,
    state_dtype,
    static_symmetric_weights,
    warn_step_above,
)
from decentral.optimization.params import OptimizationParams
from decentral.schedules import step_size

__all__ = ["DGDState", "dgd"]

GRAD_AT = ("own", "mixed")


class DGDState(NamedTuple):
    """State of DGD.

    Attributes:
        x: ``[N, d]`` the agents' iterates.
    """

    x: jax.Array

    @property
    def estimate(self) -> jax.Array:
        """The agents' estimates ``[N, d]``: the iterates."""
        return self.x


def dgd(problem, graphs, *, grad_at: str = "own", dtype=None, rule: str | None = None,
        backend: str | None = None):
    """DGD over a row-stochastic graph sequence (see the module docstring).

    Args:
        problem: a :class:`~decentral.optimization.problems.Problem` (structure: closed over).
        graphs: the sequence ``t -> W(t)``, anything :func:`decentral.graphs.as_sequence`
            accepts; row-stochastic (doubly stochastic for the papers' convergence to x*;
            a row-stochastic W drives the agents towards ``argmin sum_i pi_i f_i`` instead).
        grad_at: ``"own"`` (the papers') or ``"mixed"``.
        dtype: dtype of the iterates when the params give no ``x0`` (default JAX's float).
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An :class:`~decentral.runner.Algorithm` with state :class:`DGDState` and params
        :class:`~decentral.optimization.params.OptimizationParams`.

    Raises:
        ValueError: ``problem`` is not a Problem, the sequence is not row-stochastic or has
            another number of agents, or ``grad_at`` is unknown.

    Warns:
        HypothesisWarning: where params arrive, for a static symmetric W, when the largest step
            exceeds ``(1 + lambda_N(W)) / L`` (Yuan, Ling & Yin, Theorem 1: ``alpha <= ...``).
    """
    from decentral.runner import Algorithm

    check_problem(problem, "dgd")
    if grad_at not in GRAD_AT:
        raise ValueError(f"grad_at must be one of {GRAD_AT}; got {grad_at!r}.")
    graphs = sequence_for(problem, graphs, "row", "dgd", rule=rule, backend=backend)
    n, d = problem.num_agents, problem.dim
    x_dtype = state_dtype(dtype)
    W = static_symmetric_weights(graphs)
    extra = None
    if W is not None:
        threshold = (1.0 + float(np.linalg.eigvalsh(W)[0])) / problem.max_smoothness

        def extra(params) -> None:
            warn_step_above(params, threshold, "DGD's condition alpha <= (1 + lambda_N(W)) / "
                            "L (Yuan, Ling & Yin 2016, Theorem 1)", boundary_allowed=True)

    def init(key, params: OptimizationParams):
        if params.x0 is None:
            return DGDState(jnp.zeros((n, d), x_dtype))
        return DGDState(jnp.asarray(params.x0))

    def step(key, state, params: OptimizationParams, t, x_t):
        (seq,) = graphs_of(params, (graphs,))
        x = state.x
        mixed = mix(seq.at(t, key), x, exact_nonfinite=False).astype(x.dtype)
        g = problem.stochastic_gradient(noise_key(key), x if grad_at == "own" else mixed,
                                        params.gradient_noise)
        alpha = step_size(params.step_size, t).astype(x.dtype)
        return DGDState(mixed - alpha * g), None

    config = {"problem": problem.config(), "graphs": graphs.digest(), "grad_at": grad_at,
              "dtype": str(x_dtype)}
    return Algorithm(init=init, step=step, name="dgd", version="1",
                     max_horizon=graphs.length, config=config,
                     check_params=params_checker(problem, {"graphs": (graphs, "row")}, "dgd",
                                                 extra),
                     num_agents=n)
