"""The MLP learner rules' former module path: re-exports
:mod:`decentral.resilient_ac.learning.mlp` (kept for one version; import from
``decentral.resilient_ac.learning``)."""

from .learning.mlp import *  # noqa: F403
from .learning.mlp import __all__  # noqa: F401
