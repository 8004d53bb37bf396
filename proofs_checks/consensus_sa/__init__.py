"""Claims of consensus SA (Lin, Gupta, Liu, "Finite-Time Error Bounds for Distributed Linear
Stochastic Approximation"): :mod:`.claims` registers them; :mod:`.setups` holds the problems,
graphs and runs they share with the figures and the push-SA claims
(:mod:`proofs_checks.push_sum`). Importing the package registers every claim."""

from . import claims, setups

__all__ = ["claims", "setups"]
