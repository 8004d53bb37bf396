"""The gradient-tracking update that DIGing, push-pull / AB and DSGT share, and their state.

With ``R`` the weights that mix the iterates, ``C`` those that mix the trackers, ``g(x)`` the
agents' (stochastic) gradients and ``y(0) = g(x(0))``, one step is::

    x(k+1) = R (x(k) - alpha y(k))                   x_form="adapt_then_combine"
           = R x(k) - alpha y(k)                     x_form="combine_then_adapt"
    y(k+1) = C y(k) + g(x(k+1)) - g(x(k))            y_form="mix_tracker"
           = C (y(k) + g(x(k+1)) - g(x(k)))          y_form="mix_correction"

The gradient at the current iterate is kept in the state (``g``), so each step evaluates one
gradient per agent and a stochastic gradient is the same sample in both differences it enters.
Whatever the forms, ``sum_i y_i(k) = sum_i g_i(x(k))`` (the tracking invariant) for
column-stochastic ``C``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from decentral.optimization.base import (
    graphs_of,
    mix_together,
    noise_key,
    params_checker,
    state_dtype,
)
from decentral.schedules import step_size

__all__ = ["TrackingState", "X_FORMS", "Y_FORMS", "tracking_init", "tracking_update",
           "tracking_algorithm"]

X_FORMS = ("adapt_then_combine", "combine_then_adapt")
Y_FORMS = ("mix_tracker", "mix_correction")


class TrackingState(NamedTuple):
    """State of the gradient-tracking methods (DIGing, push-pull / AB, DSGT).

    Attributes:
        x: ``[N, d]`` the iterates.
        y: ``[N, d]`` the gradient trackers (``y(0) = g(x(0))``).
        g: ``[N, d]`` the (stochastic) gradients at ``x``, as used in the last correction.
    """

    x: jax.Array
    y: jax.Array
    g: jax.Array

    @property
    def estimate(self) -> jax.Array:
        """The agents' estimates ``[N, d]``: the iterates."""
        return self.x


def tracking_init(problem, key, params, x_dtype) -> TrackingState:
    """``x(0) = params.x0`` (zeros if None), ``y(0) = g(0) = g(x(0))`` with the noise of
    ``noise_key(key)``."""
    n, d = problem.num_agents, problem.dim
    x = jnp.zeros((n, d), x_dtype) if params.x0 is None else jnp.asarray(params.x0)
    g = problem.stochastic_gradient(noise_key(key), x, params.gradient_noise).astype(x.dtype)
    return TrackingState(x, g, g)


def tracking_update(state: TrackingState, R, C, alpha, gradient: Callable, *, x_form: str,
                    y_form: str, same: bool) -> TrackingState:
    """One step of the update in the module docstring.

    Args:
        state: the current :class:`TrackingState`.
        R, C: this step's weights (dense or a neighbour table).
        alpha: this step's step size.
        gradient: ``x -> [N, d]`` the agents' (stochastic) gradients of this step.
        x_form, y_form: the forms above.
        same: ``R`` and ``C`` are one matrix (then the mixings of one step share one call).
    """
    x, y, g = state
    moved = x - alpha * y if x_form == "adapt_then_combine" else x
    if y_form == "mix_tracker" and same:
        x_new, y_mixed = mix_together(R, moved, y)
    else:
        (x_new,) = mix_together(R, moved)
        y_mixed = mix_together(C, y)[0] if y_form == "mix_tracker" else None
    if x_form == "combine_then_adapt":
        x_new = x_new - alpha * y
    g_new = gradient(x_new)
    if y_form == "mix_tracker":
        y_new = y_mixed + g_new - g
    else:
        (y_new,) = mix_together(C, y + g_new - g)
    return TrackingState(x_new, y_new, g_new)


def tracking_algorithm(problem, sequences: dict, *, name: str, x_form: str, y_form: str,
                       dtype=None, options: dict | None = None):
    """The :class:`~decentral.runner.Algorithm` of a tracking method: one sequence
    (``{"graphs": (seq, kind)}``, mixing iterates and trackers alike) or two
    (``{"pull_graphs": ..., "push_graphs": ...}``: R, then C, whose random draws use
    ``fold_in(step key, 2)``), the forms above, and ``options`` recorded in the config."""
    from decentral.runner import Algorithm

    x_dtype = state_dtype(dtype)
    own = tuple(seq for seq, _ in sequences.values())
    same = len(own) == 1

    def init(key, params) -> TrackingState:
        return tracking_init(problem, key, params, x_dtype)

    def step(key, state, params, t, x_t):
        seqs = graphs_of(params, own)
        R = seqs[0].at(t, key)
        C = R if same else seqs[1].at(t, jax.random.fold_in(key, 2))
        alpha = step_size(params.step_size, t).astype(state.x.dtype)

        def gradient(x):
            return problem.stochastic_gradient(noise_key(key), x, params.gradient_noise)

        return tracking_update(state, R, C, alpha, gradient, x_form=x_form, y_form=y_form,
                               same=same), None

    lengths = [seq.length for seq in own if seq.length is not None]
    config = ({"problem": problem.config()}
              | {key: seq.digest() for key, (seq, _) in sequences.items()}
              | (options or {}) | {"dtype": str(x_dtype)})
    return Algorithm(init=init, step=step, name=name, version="1",
                     max_horizon=min(lengths) if lengths else None, config=config,
                     check_params=params_checker(problem, sequences, name),
                     num_agents=problem.num_agents)
