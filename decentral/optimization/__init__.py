"""Decentralized optimization: ``min_x F(x) = sum_i f_i(x)`` where agent i evaluates only ``f_i``.

So far: the problems (:mod:`decentral.optimization.problems`) and the real data sets split across
agents (:mod:`decentral.optimization.data`). The algorithms (DGD, subgradient-push, DIGing,
push-DIGing, push-pull, EXTRA, stochastic gradient tracking) are being built on the same
contract as :mod:`decentral.consensus`.
"""

from decentral.optimization.data import breast_cancer, diabetes, digits, split_rows, standardize
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
           "l1_regression", "split_rows", "standardize", "diabetes", "breast_cancer", "digits"]
