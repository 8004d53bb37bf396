"""Claims of decentralized optimization on directed time-varying graphs (the methods of
:mod:`decentral.optimization`): :mod:`.exact` (identities, closed-form limits, equivalences,
planted instabilities), :mod:`.rates` (exact convergence, linear rates, biases, their planted
controls), :mod:`.stochastic` (sublinear and noise-driven claims) and :mod:`.certificates`
(worst cases certified by performance estimation); :mod:`.setups` holds the
problem and the graph fixtures G1-G6 they share with the figures and benchmarks. Importing the
package registers every claim."""

from . import certificates, exact, rates, setups, stochastic

__all__ = ["certificates", "exact", "rates", "setups", "stochastic"]
