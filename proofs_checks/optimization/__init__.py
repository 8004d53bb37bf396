"""Claims of decentralized optimization on directed time-varying graphs (the methods of
:mod:`decentral.optimization`): :mod:`.setups` holds the problem and the graph fixtures G1-G6
the claims share with the figures and benchmarks. Importing the package registers every
claim."""

from . import setups

__all__ = ["setups"]
