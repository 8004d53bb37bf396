"""Decentralized optimization: ``min_x F(x) = sum_i f_i(x)`` where agent i evaluates only ``f_i``.

The problems (:mod:`~decentral.optimization.problems`), the real data sets split across
agents (:mod:`~decentral.optimization.data`), the params every method takes
(:mod:`~decentral.optimization.params`), and the methods, each a factory on the contract of
:mod:`decentral.consensus` (``run(factory(problem, graphs), optimization_params(...), ...)``):

========================  ====================  ==============================================
factory                   weights               paper
========================  ====================  ==============================================
``dgd``                   row-stochastic        Nedić & Ozdaglar 2009; Yuan, Ling & Yin 2016
``subgradient_push``      column-stochastic     Nedić & Olshevsky 2015, 2016
``diging``                doubly stochastic     Nedić, Olshevsky & Shi 2017, Alg. 1
``push_diging``           column-stochastic     Nedić, Olshevsky & Shi 2017, Alg. 2
``push_pull``             row + column          Pu, Shi, Xu & Nedić 2021; Xin & Khan 2018
``extra``                 static symmetric      Shi, Ling, Wu & Yin 2015
``dsgt``, ``dsgd``        doubly stochastic     Pu & Nedić 2021
========================  ====================  ==============================================

:func:`estimate_of` reads the agents' estimates ``[N, d]`` from any of their states.
"""

from decentral.optimization.data import breast_cancer, diabetes, digits, split_rows, standardize
from decentral.optimization.dgd import DGDState, dgd
from decentral.optimization.diging import diging
from decentral.optimization.dsgt import DSGDState, dsgd, dsgt
from decentral.optimization.extra import ExtraState, extra
from decentral.optimization.fixed_points import dgd_fixed_point, weighted_optimum
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
from decentral.optimization.push_diging import PushDIGingState, push_diging
from decentral.optimization.push_pull import push_pull
from decentral.optimization.subgradient_push import SubgradientPushState, subgradient_push
from decentral.optimization.tracking import TrackingState

__all__ = ["Problem", "QuadraticProblem", "LogisticProblem", "L1RegressionProblem",
           "quadratic", "random_quadratic", "least_squares", "logistic_regression",
           "l1_regression", "split_rows", "standardize", "diabetes", "breast_cancer", "digits",
           "OptimizationParams", "optimization_params", "check_optimization_params",
           "estimate_of", "DGDState", "dgd", "SubgradientPushState", "subgradient_push",
           "TrackingState", "diging", "PushDIGingState", "push_diging", "push_pull",
           "ExtraState", "extra", "DSGDState", "dsgt", "dsgd", "dgd_fixed_point",
           "weighted_optimum"]
