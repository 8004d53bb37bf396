"""Worst-case certificates of DGD and EXTRA by performance estimation (PEP), over every
symmetric generalized doubly stochastic W with a given spectral interval.

A performance estimation problem asks for the largest value of a metric after K steps of a
method, over all functions of a class and all starting points meeting initial conditions; its
SDP relaxation (Drori & Teboulle 2014; Taylor, Hendrickx & Glineur 2017) is an upper bound on
that worst case: a *certificate*. Colla & Hendrickx ("Automatic performance estimation for
decentralized optimization", IEEE TAC 2023) add the averaging step: the class
``W(lambda_min, lambda_max)`` of symmetric N x N matrices with ``W 1 = 1`` whose other
eigenvalues lie in ``[lambda_min, lambda_max]`` (negative entries allowed), described by
constraints on Gram matrices only, which makes the result a relaxation valid for the whole
class.

Construction, for one averaging step ``Y = W X`` of N agents' points (PEPit ``Point``s):

* ``xbar = sum_i x_i / N``; ``y_i = xbar + (a new point)`` for i < N and
  ``y_N = N xbar - sum_{i<N} y_i``, so the average is kept by construction;
* with centred ``x~_i = x_i - xbar``, ``y~_i = y_i - xbar`` and the K x K Gram matrices
  ``XX[k, l] = sum_i <x~_i(k), x~_i(l)>``, ``XY``, ``YY`` of the K averaging steps of a run:
  one W for all steps (``time_varying=False``): ``XY`` symmetric and
  ``lambda_max XX - XY >= 0``, ``XY - lambda_min XX >= 0``,
  ``-lambda_min lambda_max XX + (lambda_min + lambda_max) XY - YY >= 0`` (positive
  semidefinite); a W per step (``time_varying=True``): the same three conditions on the
  diagonal entries only.

The methods (``f_i`` in the class, ``x*`` the minimiser of their average):

* DGD: ``x_i(k+1) = y_i(k) - alpha grad f_i(x_i(k))``, ``Y(k) = W X(k)``;
* EXTRA with ``W~ = (I + W)/2``: ``X(1) = W X(0) - alpha G(0)``,
  ``X(k+2) = X(k+1) + W X(k+1) - (X(k) + W X(k))/2 - alpha (G(k+1) - G(k))``.

Initial conditions: ``(1/N) sum_i ||x_i(0) - x*||^2 <= D^2`` and
``(1/N) sum_i ||grad f_i(x*)||^2 <= E^2`` (without the second, one step of either method has an
unbounded worst case: the individual gradients at x* are otherwise free).

Metrics: ``"distance"``: ``(1/N) sum_i ||x_i(K) - x*||^2``; ``"objective_at_average"``:
``F(xhat) - F(x*)`` with ``F`` the average of the ``f_i`` and ``xhat`` the average over the
agents and the iterates ``0 .. K-1`` (the quantity of subgradient-method guarantees).

Requires the optional packages ``pepit``, ``cvxpy`` and an SDP solver (Clarabel; SCS as a
fallback): ``pip install "decentral[pep]"``.

Example:
    >>> c = worst_case("dgd", num_agents=2, num_steps=1, step_size=1.0, strong_convexity=0.1,
    ...                smoothness=1.0, lambda_min=-0.5, lambda_max=0.5)   # doctest: +SKIP
    >>> round(c.value, 4)                                                # doctest: +SKIP
    6.25
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

__all__ = ["Certificate", "worst_case", "METHODS", "METRICS", "FUNCTION_CLASSES",
           "require_pep_dependencies"]

METHODS = ("dgd", "extra")
METRICS = ("distance", "objective_at_average")
FUNCTION_CLASSES = ("smooth_strongly_convex", "convex_lipschitz")


class Certificate(NamedTuple):
    """A certified worst case.

    Attributes:
        value: the PEP's optimal value: no instance of the class exceeds it (up to the
            solver's accuracy).
        method, metric, function_class: what was certified.
        num_agents, num_steps: N and K.
        settings: the numbers of the class and the method (step size, constants, spectral
            interval, D, E, time_varying).
        solver: the SDP solver that produced ``value``.
    """

    value: float
    method: str
    metric: str
    function_class: str
    num_agents: int
    num_steps: int
    settings: dict
    solver: str


def require_pep_dependencies() -> tuple[Any, Any]:
    """Import ``PEPit`` and ``cvxpy``, or raise an ImportError saying how to install them."""
    try:
        import cvxpy
        import PEPit
    except ImportError as err:
        raise ImportError("decentral.optimization.pep needs the optional packages pepit, cvxpy "
                          "and an SDP solver (clarabel): pip install 'decentral[pep]'") from err
    return PEPit, cvxpy


def _check(value, name: str, *, low=None, high=None, strict_low=False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number; got {value!r}.")
    v = float(value)
    if not math.isfinite(v) or (low is not None and (v < low or (strict_low and v == low))) \
            or (high is not None and v > high):
        raise ValueError(f"{name} must be finite and in the stated range; got {value!r}.")
    return v


def _averaging(pep_point, xs: list) -> list:
    """``Y = W X`` for the points ``xs``: fresh points with the average kept."""
    n = len(xs)
    xbar = sum(xs[1:], xs[0]) / n
    ys = [xbar + pep_point() for _ in range(n - 1)]
    last = n * xbar - (sum(ys[1:], ys[0]) if ys else 0 * xbar)
    return ys + [last], xbar


def _gram(a: list, b: list):
    return sum((ai * bi for ai, bi in zip(a[1:], b[1:], strict=True)), a[0] * b[0])


def worst_case(method: str, *, num_agents: int = 2, num_steps: int = 1, step_size: float,
               lambda_min: float, lambda_max: float, strong_convexity: float = 0.0,
               smoothness: float | None = None, lipschitz: float | None = None,
               function_class: str = "smooth_strongly_convex", metric: str = "distance",
               initial_distance: float = 1.0, gradient_heterogeneity: float = 1.0,
               time_varying: bool = False, equal_start: bool = False,
               average_over: str = "all") -> Certificate:
    """The certified worst case of ``metric`` after ``num_steps`` steps of ``method``
    (see the module docstring).

    Args:
        method: ``"dgd"`` or ``"extra"``.
        num_agents: N >= 2.
        num_steps: K >= 1.
        step_size: the constant step alpha > 0.
        lambda_min, lambda_max: the interval of W's eigenvalues other than the one of the
            all-ones vector, ``-1 < lambda_min <= lambda_max < 1``.
        strong_convexity, smoothness: mu >= 0 and L > mu of ``"smooth_strongly_convex"``.
        lipschitz: G > 0 of ``"convex_lipschitz"`` (bounded subgradients).
        function_class: ``"smooth_strongly_convex"`` or ``"convex_lipschitz"``.
        metric: ``"distance"`` or ``"objective_at_average"``.
        initial_distance: D > 0.
        gradient_heterogeneity: E >= 0 (``"smooth_strongly_convex"`` only; a Lipschitz class
            bounds the gradients already).
        time_varying: a different W in the class at every step.

    Returns:
        A :class:`Certificate`.

    Raises:
        ImportError: pepit / cvxpy missing (how to install them).
        ValueError: a value outside its range, naming it; or no solver returned a value.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}.")
    if function_class not in FUNCTION_CLASSES:
        raise ValueError(f"function_class must be one of {FUNCTION_CLASSES}; got "
                         f"{function_class!r}.")
    if isinstance(num_agents, bool) or not isinstance(num_agents, int) or num_agents < 2:
        raise ValueError(f"num_agents must be an int >= 2; got {num_agents!r}.")
    if isinstance(num_steps, bool) or not isinstance(num_steps, int) or num_steps < 1:
        raise ValueError(f"num_steps must be an int >= 1; got {num_steps!r}.")
    alpha = _check(step_size, "step_size", low=0.0, strict_low=True)
    lo = _check(lambda_min, "lambda_min", low=-1.0, strict_low=True)
    hi = _check(lambda_max, "lambda_max", high=1.0)
    if not lo <= hi < 1.0:
        raise ValueError(f"need -1 < lambda_min <= lambda_max < 1; got [{lambda_min}, "
                         f"{lambda_max}].")
    D = _check(initial_distance, "initial_distance", low=0.0, strict_low=True)
    E = _check(gradient_heterogeneity, "gradient_heterogeneity", low=0.0)
    PEPit, cvxpy = require_pep_dependencies()
    from PEPit.functions import ConvexLipschitzFunction, SmoothStronglyConvexFunction

    problem = PEPit.PEP()
    if function_class == "smooth_strongly_convex":
        if smoothness is None:
            raise ValueError("smoothness (L) is required for 'smooth_strongly_convex'.")
        mu = _check(strong_convexity, "strong_convexity", low=0.0)
        L = _check(smoothness, "smoothness", low=0.0, strict_low=True)
        if not mu < L:
            raise ValueError(f"need strong_convexity < smoothness; got {mu} and {L}.")
        fs = [problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
              for _ in range(num_agents)]
        settings = {"strong_convexity": mu, "smoothness": L}
    else:
        if lipschitz is None:
            raise ValueError("lipschitz (G) is required for 'convex_lipschitz'.")
        G = _check(lipschitz, "lipschitz", low=0.0, strict_low=True)
        fs = [problem.declare_function(ConvexLipschitzFunction, M=G) for _ in range(num_agents)]
        settings = {"lipschitz": G}
    average = sum(fs[1:], fs[0]) / num_agents
    x_star = average.stationary_point()
    f_star = average(x_star)
    if equal_start:
        X = [problem.set_initial_point()] * num_agents
    else:
        X = [problem.set_initial_point() for _ in range(num_agents)]
    problem.set_initial_condition(
        sum(((x - x_star) ** 2 for x in X[1:]), (X[0] - x_star) ** 2) / num_agents <= D ** 2)
    if function_class == "smooth_strongly_convex":
        grads = [f.gradient(x_star) for f in fs]
        problem.set_initial_condition(
            sum((g ** 2 for g in grads[1:]), grads[0] ** 2) / num_agents <= E ** 2)

    inputs, outputs, iterates = [], [], [X]

    def averaged(points):
        ys, xbar = _averaging(PEPit.Point, points)
        inputs.append([p - xbar for p in points])
        outputs.append([y - xbar for y in ys])
        return ys

    def gradients(points):
        return [f.gradient(p) for f, p in zip(fs, points, strict=True)]

    if method == "dgd":
        for _ in range(num_steps):
            x = iterates[-1]
            y = averaged(x)
            iterates.append([yi - alpha * gi for yi, gi in zip(y, gradients(x), strict=True)])
    else:
        x0 = iterates[0]
        g_prev = gradients(x0)
        w_prev = averaged(x0)
        iterates.append([w - alpha * g for w, g in zip(w_prev, g_prev, strict=True)])
        for _ in range(num_steps - 1):
            x_prev, x = iterates[-2], iterates[-1]
            g = gradients(x)
            w = averaged(x)
            iterates.append([xi + wi - 0.5 * (xp + wp) - alpha * (gi - gp)
                             for xi, wi, xp, wp, gi, gp
                             in zip(x, w, x_prev, w_prev, g, g_prev, strict=True)])
            g_prev, w_prev = g, w
    _spectral_constraints(problem, inputs, outputs, lo, hi, time_varying)

    final = iterates[num_steps]
    if metric == "distance":
        problem.set_performance_metric(
            sum(((x - x_star) ** 2 for x in final[1:]), (final[0] - x_star) ** 2) / num_agents)
    else:
        chosen = {"first_k": iterates[:num_steps], "last_k": iterates[1:],
                  "all": iterates}[average_over]
        points = [p for it in chosen for p in it]
        xhat = sum(points[1:], points[0]) / len(points)
        problem.set_performance_metric(average(xhat) - f_star)

    value, solver = _solve(problem, cvxpy)
    settings |= {"step_size": alpha, "lambda_min": lo, "lambda_max": hi, "initial_distance": D,
                 "gradient_heterogeneity": E, "time_varying": bool(time_varying)}
    return Certificate(value=value, method=method, metric=metric,
                       function_class=function_class, num_agents=num_agents,
                       num_steps=num_steps, settings=settings, solver=solver)


def _spectral_constraints(problem, inputs, outputs, lo, hi, time_varying) -> None:
    K = len(inputs)
    XX = [[_gram(inputs[k], inputs[m]) for m in range(K)] for k in range(K)]
    XY = [[_gram(inputs[k], outputs[m]) for m in range(K)] for k in range(K)]
    YY = [[_gram(outputs[k], outputs[m]) for m in range(K)] for k in range(K)]
    if time_varying:
        for k in range(K):
            problem.add_constraint(XY[k][k] <= hi * XX[k][k])
            problem.add_constraint(XY[k][k] >= lo * XX[k][k])
            problem.add_constraint(YY[k][k] - (lo + hi) * XY[k][k] + lo * hi * XX[k][k] <= 0)
        return
    import numpy as np

    for k in range(K):
        for m in range(k + 1, K):
            problem.add_constraint(XY[k][m] == XY[m][k])
    upper = np.array([[hi * XX[k][m] - XY[k][m] for m in range(K)] for k in range(K)])
    lower = np.array([[XY[k][m] - lo * XX[k][m] for m in range(K)] for k in range(K)])
    both = np.array([[-lo * hi * XX[k][m] + (lo + hi) * XY[k][m] - YY[k][m]
                      for m in range(K)] for k in range(K)])
    for mat in (upper, lower, both):
        problem.add_psd_matrix(mat)


def _solve(problem, cvxpy) -> tuple[float, str]:
    attempts = [("clarabel", {"solver": cvxpy.CLARABEL}),
                ("scs", {"solver": cvxpy.SCS, "eps": 1e-9})]
    errors = []
    for name, kwargs in attempts:
        try:
            value = problem.solve(wrapper="cvxpy", verbose=0, **kwargs)
        except Exception as err:  # noqa: BLE001 - a solver failure falls back to the next
            errors.append(f"{name}: {type(err).__name__}: {err}")
            continue
        if value is not None and math.isfinite(float(value)):
            return float(value), name
        errors.append(f"{name}: returned {value!r}")
    raise ValueError("no SDP solver returned a value for this PEP (" + "; ".join(errors) + ").")
