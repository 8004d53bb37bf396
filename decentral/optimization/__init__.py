"""Decentralized optimization: ``min_x F(x) = sum_i f_i(x)`` where agent i evaluates only ``f_i``.

So far: the problems (:mod:`decentral.optimization.problems`), the real data sets split across
agents (:mod:`decentral.optimization.data`), the params every method takes
(:mod:`decentral.optimization.params`) and DGD (:mod:`decentral.optimization.dgd`). The other
methods (subgradient-push, DIGing, push-DIGing, push-pull, EXTRA, stochastic gradient
tracking) are being built on the same contract as :mod:`decentral.consensus`.
"""

from decentral.optimization.data import breast_cancer, diabetes, digits, split_rows, standardize
from decentral.optimization.dgd import DGDState, dgd
from decentral.optimization.params import (
    OptimizationParams,
    check_optimization_params,
    estimate_of,
    optimization_params,
)
from decentral.optimization.problems import (
    L1RegressionProblem,
    LogisticProblem,
    Problem,
    QuadraticProblem,
    l1_regression,
    least_squares,
    logistic_regression,
    quadratic,
    random_quadratic,
)

__all__ = ["Problem", "QuadraticProblem", "LogisticProblem", "L1RegressionProblem",
           "quadratic", "random_quadratic", "least_squares", "logistic_regression",
           "l1_regression", "split_rows", "standardize", "diabetes", "breast_cancer", "digits",
           "OptimizationParams", "optimization_params", "check_optimization_params",
           "estimate_of", "DGDState", "dgd"]
