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

from decentral.optimization.base import mix_together, noise_key

__all__ = ["TrackingState", "X_FORMS", "Y_FORMS", "tracking_init", "tracking_update"]

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
