"""What users sweep in every optimization method: the step size, the start, the gradient noise.

:func:`optimization_params` builds :class:`OptimizationParams`; :func:`check_optimization_params`
is the one check every factory's ``check_params`` applies wherever params arrive (constructor,
``run``, sweep). :func:`estimate_of` reads the agents' current estimates ``[N, d]`` from the
state of any method of the family.

Example:
    >>> p = optimization_params(0.1)
    >>> p.step_size
    StepSize(alpha0=0.1, t0=1.0, power=0.0)
    >>> float(p.gradient_noise)
    0.0
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from decentral._checks import check_agent_values
from decentral.schedules import StepSize, check_step_size_field, constant

__all__ = ["OptimizationParams", "optimization_params", "check_optimization_params",
           "estimate_of"]


class OptimizationParams(NamedTuple):
    """Params of the optimization methods.

    Attributes:
        step_size: a :class:`~decentral.schedules.StepSize` (``alpha_t``, t = 0 for the first
            update).
        x0: ``[N, d]`` starting points, or None for zeros.
        gradient_noise: ``sigma >= 0``: each agent's gradient is ``grad f_i + sigma eps``,
            ``eps ~ N(0, I)`` (0: exact gradients).
        graphs: None (the algorithm's own sequence) or a sequence of the same structure.
    """

    step_size: Any
    x0: Any = None
    gradient_noise: Any = 0.0
    graphs: Any = None


def optimization_params(step_size, x0=None, gradient_noise=0.0, *,
                        graphs=None) -> OptimizationParams:
    """Params of every method of :mod:`decentral.optimization`.

    Args:
        step_size: a float (a constant step) or a :mod:`decentral.schedules` schedule
            (``constant``, ``harmonic``, ``polynomial``; ``stack_schedules`` to sweep).
        x0: ``[N, d]`` starting points (default zeros).
        gradient_noise: ``sigma >= 0`` (a float, or an array to sweep).
        graphs: the graphs of this run; default the algorithm's own.

    Raises:
        ValueError: naming the field (see :func:`check_optimization_params`).
    """
    if not isinstance(step_size, StepSize):
        if isinstance(step_size, bool) or not isinstance(step_size, int | float | np.number):
            raise ValueError("step_size must be a positive float or a decentral.schedules "
                             f"StepSize; got {type(step_size).__name__}.")
        step_size = constant(float(step_size))
    params = OptimizationParams(step_size, None if x0 is None else np.asarray(x0),
                                np.asarray(gradient_noise, np.float64)
                                if not np.isscalar(gradient_noise) else gradient_noise, graphs)
    check_optimization_params(params)
    return params


def check_optimization_params(params, *, num_agents: int | None = None,
                              dim: int | None = None) -> None:
    """The one check of :class:`OptimizationParams`: a valid step-size schedule, finite
    ``x0`` (``[N, d]`` where the sizes are given) and a finite ``gradient_noise >= 0``.

    Raises:
        ValueError: naming the field (``params.step_size``, ``params.x0``,
            ``params.gradient_noise``).
    """
    if not isinstance(params, OptimizationParams):
        raise ValueError("params must be OptimizationParams (decentral.optimization."
                         f"optimization_params(...)); got {type(params).__name__}.")
    check_step_size_field(params.step_size)
    if params.x0 is not None:
        x0 = check_agent_values(params.x0, num_agents)
        if num_agents is not None and x0.shape != (num_agents, dim):
            raise ValueError(f"params.x0 must be [N, d] = [{num_agents}, {dim}]; got shape "
                             f"{x0.shape}.")
    noise = np.asarray(params.gradient_noise)
    if noise.dtype == object or noise.dtype == bool or not np.issubdtype(noise.dtype, np.number) \
            or not np.all(np.isfinite(noise)) or np.any(noise < 0):
        raise ValueError(f"params.gradient_noise must be finite and >= 0; got "
                         f"{np.ravel(noise)[:5].tolist()}.")


def estimate_of(state) -> Any:
    """The agents' current estimates ``[N, d]`` of any optimization method's state (the
    iterates ``x`` for pull-type methods, the de-biased ratios for push-sum ones)."""
    estimate = getattr(type(state), "estimate", None)
    if estimate is None:
        raise ValueError(f"estimate_of needs the state of a decentral.optimization method; got "
                         f"{type(state).__name__}.")
    return state.estimate
