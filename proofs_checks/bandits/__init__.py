"""The decentralized-bandit family of claims (Zhu, Mulle, Smith, Liu, arXiv 2111.10933, first
version and IEEE TAC 2025 journal version), in three modules:

* :mod:`~proofs_checks.bandits.setups` — what is run: the graphs, reward laws, swept constants
  and seed conventions, shared with the figures (``figures/bandits``);
* :mod:`~proofs_checks.bandits.judges` — the ``check_*`` judges: recorded numbers in, an
  :class:`~decentral.verify.Outcome` out;
* :mod:`~proofs_checks.bandits.claims` — the ``@claim`` registrations and the runs that feed
  the judges.

Importing the package registers the claims (``proofs_checks.registry.discover`` imports it).
Every public name of the three modules is re-exported here.

Example:
    >>> from proofs_checks import bandits as pb
    >>> pb.V4_SWEEP, pb.strongly_graph().shape
    ((1.0, 0.1, 0.01), (6, 6))
"""

from __future__ import annotations

from . import claims, judges, setups
from .claims import *  # noqa: F403 - the package's public names, listed in __all__ below
from .judges import *  # noqa: F403
from .setups import *  # noqa: F403

__all__ = ["claims", "judges", "setups", *setups.__all__, *judges.__all__, *claims.__all__]
