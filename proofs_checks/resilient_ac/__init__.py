"""Claims of the resilient families (Figura, Lin, Liu, Gupta, arXiv:2111.06776; W-MSR of
LeBlanc, Zhang, Koutsoukos, Sundaram, IEEE JSAC 31(4) 2013), one module per family, and the
setups they share with the figures.

* :mod:`.consensus` — resilient consensus (W-MSR): hull invariance, capture of plain averaging,
  the robustness hypotheses;
* :mod:`.linear` — the actor-critic with linear function approximation (our reconstruction of
  the paper's equations), Example 1;
* :mod:`.env` — the grid world of the experiments;
* :mod:`.learning` — the grid-world learning experiments;
* :mod:`.setups` — the authors' logged numbers, the figure arrays, the saved paper-scale runs
  and the Example 1 figure data.

Importing the package registers every claim (``python -m proofs_checks`` imports it).
"""

from . import consensus, env, learning, linear, setups

__all__ = ["consensus", "env", "learning", "linear", "setups"]
