"""Subgradient-push (and stochastic gradient-push): push-sum de-biasing of a (sub)gradient
method on column-stochastic, time-varying, directed graphs.

Nedić & Olshevsky, "Distributed optimization over time-varying directed graphs", IEEE TAC
60(3), 2015, the subgradient-push iteration; with stochastic gradients and ``alpha_t = p/t``,
Nedić & Olshevsky, "Stochastic gradient-push for strongly convex functions on time-varying
directed graphs", IEEE TAC 61(12), 2016. ``A(t)`` column-stochastic (``rule="column"``: agent
j keeps and sends equal shares ``1/(out-degree of j, self included)``), ``y(0) = 1``, and at
step t, in this order::

    w(t+1) = A(t) x(t)                     (push the numerators)
    y(t+1) = A(t) y(t)                     (push the scalar weights)
    z_i(t+1) = w_i(t+1) / y_i(t+1)         (de-biased estimates)
    x_i(t+1) = w_i(t+1) - alpha_t g_i      g_i a subgradient of f_i at z_i(t+1)

(``g_i`` plus ``sigma eps_i`` with ``gradient_noise = sigma``). The estimates are the ratios
``z``; the state also keeps the step-weighted running average
``z~_i(t) = sum_{s<t} alpha_s z_i(s+1) / sum_{s<t} alpha_s`` (each ``z(s+1)`` weighted by the
step that used its gradient), the average the 2015 rate is stated for.
Communication: ``d + 1`` numbers per out-edge per step; an agent needs only its out-degree.

Exact identities (float64): ``sum_i y_i(t) = N``; ``sum_i x_i(t+1) = sum_i x_i(t) -
alpha_t sum_i g_i``.

Example:
    >>> import numpy as np
    >>> import decentral.graphs as g
    >>> from decentral.optimization import optimization_params, random_quadratic
    >>> from decentral.optimization import subgradient_push
    >>> from decentral.runner import run
    >>> from decentral.schedules import harmonic
    >>> p = random_quadratic(4, 2, smoothness=2.0, heterogeneity=1.0, seed=0)
    >>> res = run(subgradient_push(p, g.static(g.ring(4), rule="column")),
    ...           optimization_params(harmonic(1.0, 5.0)), seeds=[0], num_steps=4000)
    >>> bool(np.abs(np.asarray(res.final_state.z[0]) - p.optimum).max() < 1e-3)
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
from decentral.schedules import step_size

__all__ = ["SubgradientPushState", "subgradient_push"]


class SubgradientPushState(NamedTuple):
    """State of subgradient-push.

    Attributes:
        x: ``[N, d]`` push-sum numerators.
        y: ``[N]`` push-sum weights (``y(0) = 1``).
        z: ``[N, d]`` de-biased estimates ``x / y`` after the last mixing (``z(0) = x(0)``).
        weighted_sum: ``[N, d]`` ``sum_s alpha_s z(s+1)``.
        weight_total: ``[]`` ``sum_s alpha_s``.
    """

    x: jax.Array
    y: jax.Array
    z: jax.Array
    weighted_sum: jax.Array
    weight_total: jax.Array

    @property
    def estimate(self) -> jax.Array:
        """The agents' estimates ``[N, d]``: the ratios ``z``."""
        return self.z

    @property
    def running_average(self) -> jax.Array:
        """``[N, d]`` the step-weighted running average ``z~`` (``z(0)`` before any step)."""
        safe = jnp.where(self.weight_total > 0, self.weight_total, 1.0)
        return jnp.where(self.weight_total > 0, self.weighted_sum / safe, self.z)


def subgradient_push(problem, graphs, *, dtype=None, rule: str | None = None,
                     backend: str | None = None):
    """Subgradient-push over a column-stochastic graph sequence (see the module docstring).

    Args:
        problem: a :class:`~decentral.optimization.problems.Problem` (closed over); smooth or
            not (``gradient`` returns a subgradient for ``l1_regression``).
        graphs: the sequence ``t -> A(t)``, column-stochastic (``rule="column"``), directed
            and time-varying allowed.
        dtype: dtype of the iterates when the params give no ``x0``.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An :class:`~decentral.runner.Algorithm` with state :class:`SubgradientPushState` and
        params :class:`~decentral.optimization.params.OptimizationParams`.

    Raises:
        ValueError: not a Problem, weights not column-stochastic (row-stochastic pull weights
            included) or another number of agents.
    """
    from decentral.runner import Algorithm

    check_problem(problem, "subgradient_push")
    graphs = sequence_for(problem, graphs, "column", "subgradient_push", rule=rule,
                          backend=backend)
    n, d = problem.num_agents, problem.dim
    x_dtype = state_dtype(dtype)

    def init(key, params: OptimizationParams):
        x = jnp.zeros((n, d), x_dtype) if params.x0 is None else jnp.asarray(params.x0)
        return SubgradientPushState(x=x, y=jnp.ones((n,), x.dtype), z=x,
                                    weighted_sum=jnp.zeros_like(x),
                                    weight_total=jnp.zeros((), x.dtype))

    def step(key, state, params: OptimizationParams, t, x_t):
        (seq,) = graphs_of(params, (graphs,))
        w, y = mix_together(seq.at(t, key), state.x, state.y[:, None])
        y = y[:, 0]
        z = w / y[:, None]
        g = problem.stochastic_gradient(noise_key(key), z, params.gradient_noise)
        alpha = step_size(params.step_size, t).astype(w.dtype)
        return SubgradientPushState(x=w - alpha * g, y=y, z=z,
                                    weighted_sum=state.weighted_sum + alpha * z,
                                    weight_total=state.weight_total + alpha), None

    config = {"problem": problem.config(), "graphs": graphs.digest(), "dtype": str(x_dtype)}
    return Algorithm(init=init, step=step, name="subgradient_push", version="1",
                     max_horizon=graphs.length, config=config,
                     check_params=params_checker(problem, {"graphs": (graphs, "column")},
                                                 "subgradient_push"),
                     num_agents=n)
