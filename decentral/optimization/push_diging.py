"""Push-DIGing: gradient tracking with push-sum de-biasing over column-stochastic,
time-varying, directed graphs.

Nedić, Olshevsky & Shi, "Achieving geometric convergence for distributed optimization over
time-varying graphs", SIAM J. Optim. 27(4), 2017, Algorithm 2 (R-linear convergence:
Theorem 18, with the out-degree weights ``C_ij = 1/(outdeg_j + 1)``). ``C(k)`` column-stochastic,
``u(0) = x(0)``, ``v(0) = 1``, ``y(0) = grad F(x(0))``, and at step k, in this order::

    u(k+1) = C(k) (u(k) - alpha_k y(k))
    v(k+1) = C(k) v(k)
    x_i(k+1) = u_i(k+1) / v_i(k+1)
    y(k+1) = C(k) y(k) + grad F(x(k+1)) - grad F(x(k))

(stochastic gradients with ``gradient_noise > 0``, as in :mod:`~decentral.optimization.diging`).
Communication: ``2 d + 1`` numbers per out-edge per step (``u``, ``y`` and ``v`` in one
message); an agent needs only its out-degree.

Exact identities (float64): ``sum_i v_i(k) = N``, ``sum_i y_i(k) = sum_i grad f_i(x_i(k))``,
``sum_i u_i(k+1) = sum_i u_i(k) - alpha_k sum_i y_i(k)``. With a doubly stochastic ``C`` it is
push-pull with ``R = C``.

Example:
    >>> import numpy as np
    >>> import decentral.graphs as g
    >>> from decentral.optimization import optimization_params, push_diging, random_quadratic
    >>> from decentral.runner import run
    >>> p = random_quadratic(4, 2, smoothness=2.0, heterogeneity=1.0, seed=0)
    >>> A = g.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])
    >>> res = run(push_diging(p, g.static(A, rule="column")), optimization_params(0.05),
    ...           seeds=[0], num_steps=3000)
    >>> bool(np.abs(np.asarray(res.final_state.x[0]) - p.optimum).max() < 1e-4)
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

__all__ = ["PushDIGingState", "push_diging"]


class PushDIGingState(NamedTuple):
    """State of push-DIGing.

    Attributes:
        u: ``[N, d]`` push-sum numerators.
        v: ``[N]`` push-sum weights (``v(0) = 1``).
        x: ``[N, d]`` de-biased iterates ``u / v``.
        y: ``[N, d]`` gradient trackers.
        g: ``[N, d]`` the (stochastic) gradients at ``x``.
    """

    u: jax.Array
    v: jax.Array
    x: jax.Array
    y: jax.Array
    g: jax.Array

    @property
    def estimate(self) -> jax.Array:
        """The agents' estimates ``[N, d]``: the ratios ``x = u / v``."""
        return self.x


def push_diging(problem, graphs, *, dtype=None, rule: str | None = None,
                backend: str | None = None):
    """Push-DIGing over a column-stochastic graph sequence (see the module docstring).

    Args:
        problem: a :class:`~decentral.optimization.problems.Problem` (closed over).
        graphs: ``k -> C(k)``, column-stochastic (``rule="column"``), directed and
            time-varying allowed.
        dtype: dtype of the iterates when the params give no ``x0``.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An :class:`~decentral.runner.Algorithm` with state :class:`PushDIGingState`.

    Raises:
        ValueError: not a Problem, weights not column-stochastic, or another number of agents.
    """
    from decentral.runner import Algorithm

    check_problem(problem, "push_diging")
    graphs = sequence_for(problem, graphs, "column", "push_diging", rule=rule, backend=backend)
    n, d = problem.num_agents, problem.dim
    x_dtype = state_dtype(dtype)

    def init(key, params: OptimizationParams) -> PushDIGingState:
        x = jnp.zeros((n, d), x_dtype) if params.x0 is None else jnp.asarray(params.x0)
        g = problem.stochastic_gradient(noise_key(key), x, params.gradient_noise).astype(x.dtype)
        return PushDIGingState(u=x, v=jnp.ones((n,), x.dtype), x=x, y=g, g=g)

    def step(key, state, params: OptimizationParams, t, x_t):
        (seq,) = graphs_of(params, (graphs,))
        alpha = step_size(params.step_size, t).astype(state.x.dtype)
        u, v, y_mixed = mix_together(seq.at(t, key), state.u - alpha * state.y,
                                     state.v[:, None], state.y)
        v = v[:, 0]
        x = u / v[:, None]
        g = problem.stochastic_gradient(noise_key(key), x, params.gradient_noise)
        return PushDIGingState(u=u, v=v, x=x, y=y_mixed + g - state.g, g=g), None

    config = {"problem": problem.config(), "graphs": graphs.digest(), "dtype": str(x_dtype)}
    return Algorithm(init=init, step=step, name="push_diging", version="1",
                     max_horizon=graphs.length, config=config,
                     check_params=params_checker(problem, {"graphs": (graphs, "column")},
                                                 "push_diging"),
                     num_agents=n)
