"""The grid world's former module path: re-exports :mod:`decentral.resilient_ac.learning.gridworld`
(kept for one version; import from ``decentral.resilient_ac.learning``)."""

from .learning.gridworld import *  # noqa: F403
from .learning.gridworld import __all__  # noqa: F401
