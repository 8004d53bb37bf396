"""Small public data of the papers this library reproduces, one module per paper, each with
its provenance (in the spirit of ``sklearn.datasets``).

* :mod:`decentral.datasets.zhu2021`: the six agent graphs of the experiments of Zhu, Mulle,
  Smith, Liu, arXiv:2111.10933 v1 (decentralized UCB bandits), as bundled adjlist files.
* :mod:`decentral.datasets.figura2021`: the five-agent experiment graph of Figura, Lin, Liu,
  Gupta, arXiv:2111.06776 (resilient actor-critic), and our reconstruction of its Example 1 MDP.

The old import paths (``decentral.bandits.paper_graph``, ``decentral.resilient_ac.example1_mdp``,
``decentral.resilient_ac.experiments.PAPER_IN_NODES``, ...) re-export these names and keep
working for one version.

Example:
    >>> from decentral.datasets import zhu2021
    >>> int(zhu2021.paper_graph("weakly_path").sum())     # 5 edges + 6 self-loops
    11
"""

from . import figura2021, zhu2021

__all__ = ["figura2021", "zhu2021"]
