"""Byzantine-resilient aggregation and consensus (Figura, Lin, Liu, Gupta, "Resilient
Consensus-based Multi-agent Reinforcement Learning with Function Approximation",
arXiv:2111.06776; W-MSR of LeBlanc, Zhang, Koutsoukos, Sundaram, IEEE JSAC 31(4) 2013).

The pieces, in the order data flows:

* :mod:`.aggregators` — :func:`wmsr`, :func:`trimmed_mean`, :func:`clipped_mean`, :func:`mean`
  over one receiver's gathered values ``[K, ...]`` (own value first), element-wise, jit-able;
* :mod:`.attackers` — the :class:`Attacker` protocol (stateless rules per receiver, or a state
  the runner carries) and the attacks :func:`constant`, :func:`huge`, :func:`random_values`,
  :func:`just_inside`, :func:`split_brain`, :func:`coordinate_extreme`;
* :mod:`.consensus` — :func:`resilient_consensus` (a runner ``Algorithm``), the hypotheses it
  checks (:func:`check_hypotheses`), the record function :func:`values_of`;
* :mod:`.projection` — the projection-based consensus step of linear parameters
  (:func:`projection_step`) and the batch output-layer step (:func:`weighted_output_step`);
* :mod:`.metrics` — cooperative spread and hull violation of recorded values.

The theory a user needs to read the claims (robust graphs, the rules, the attacks, the
experiment graph's robustness) is in ``docs/resilient.md``.
"""

from .aggregators import AGGREGATORS, clipped_mean, get_aggregator, mean, ranks, trimmed_mean, wmsr
from .attackers import (
    AttackContext,
    Attacker,
    ReceiverView,
    constant,
    coordinate_extreme,
    huge,
    just_inside,
    random_values,
    receiver_views,
    replace_byzantine_messages,
    split_brain,
    stateless,
    switch_attacker,
)
from .consensus import (
    ROBUSTNESS_AUTO_MAX_N,
    ResilientParams,
    ResilientState,
    check_hypotheses,
    consensus_params,
    resilient_consensus,
    values_of,
)
from .metrics import cooperative_spread, hull_violation
from .projection import projected_errors, projection_step, weighted_output_step

__all__ = [
    "wmsr", "trimmed_mean", "clipped_mean", "mean", "ranks", "AGGREGATORS", "get_aggregator",
    "Attacker", "AttackContext", "ReceiverView", "stateless", "receiver_views",
    "replace_byzantine_messages", "constant", "huge", "random_values", "just_inside",
    "split_brain", "coordinate_extreme", "switch_attacker",
    "resilient_consensus", "consensus_params", "ResilientParams", "ResilientState",
    "check_hypotheses", "values_of", "ROBUSTNESS_AUTO_MAX_N",
    "projected_errors", "projection_step", "weighted_output_step",
    "cooperative_spread", "hull_violation",
]
