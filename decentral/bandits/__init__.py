"""Cooperative multi-armed bandits: arms, index policies, regret.

Zhu, Mulle, Smith, Liu, *Decentralized Multi-Armed Bandit Can Outperform Classic Upper
Confidence Bound* (arXiv 2111.10933): N agents on a graph face the same M arms, each agent
pulls one arm per step and may talk to its neighbours; the regret of each agent is compared
with single-agent UCB1 (Auer, Cesa-Bianchi, Fischer 2002) and KL-UCB (Garivier & Cappé 2011).

The pieces, in the order data flows:

* :mod:`~decentral.bandits.arms` — reward laws on ``[0, 1]`` (:func:`bernoulli`,
  :func:`beta_distribution`, :func:`truncated_normal` with its exact true means,
  :func:`uniform`, :func:`heterogeneous`) and counter-based reward streams: the ``j``-th pull
  of arm ``k`` by agent ``i`` gives the same sample under every policy on a seed;
* :mod:`~decentral.bandits.policy` — the :class:`Policy` protocol (``init`` / ``select`` /
  ``update`` / optional ``communicate`` over per-agent statistics ``[N, M]``), the clock
  (initial pulls at ``t = 0``, then ``ln t``) and the shared local rules;
* :mod:`~decentral.bandits.indices` — :func:`ucb_index`, :func:`bernoulli_kl`,
  :func:`kl_ucb_index` (fixed-iteration bisection);
* :mod:`~decentral.bandits.single_agent` — :func:`ucb1`, :func:`ucb` (UCB(alpha)),
  :func:`kl_ucb` run as N independent agents, and the centralized :func:`pooled_ucb`;
* :mod:`~decentral.bandits.decentralized` — Dec_UCB (:func:`dec_ucb`, Theorems 1 and 2 of the
  first version), :func:`dec_ucb1` and :func:`dec_kl_ucb` of the journal version: forced
  exploration, max-consensus on counts, running consensus on means;
* :mod:`~decentral.bandits.evaluate` — :func:`bandit_algorithm` (a runner ``Algorithm``) and
  :func:`evaluate` (pulls, standard pseudo-regret, realized regret);
* :mod:`~decentral.bandits.bounds` — :func:`lai_robbins_constant`, :func:`ucb1_regret_bound`.

Example:
    >>> import numpy as np
    >>> from decentral.bandits import UCBParams, bernoulli, evaluate, ucb
    >>> arms = bernoulli([0.9, 0.8, 0.5])
    >>> alphas = UCBParams(exploration_alpha=np.array([2.0, 4 / 3]))    # UCB1 and UCB(4/3)
    >>> res = evaluate(ucb(), arms, horizon=500, seeds=range(8), num_agents=2, params=alphas,
    ...                sweep=True)                   # both in one compile
    >>> res.pulls.shape, res.regret.shape            # [P, S, N, M], [P, S, N]
    ((2, 8, 2, 3), (2, 8, 2))
    >>> bool(np.all(res.pulls.sum(-1) == 3 + 500))   # M initial pulls + T decisions
    True
    >>> bool(res.regret[1].mean() < res.regret[0].mean())   # less exploration, less regret
    True
"""

from .arms import (
    FAMILIES,
    Arms,
    bernoulli,
    beta_distribution,
    heterogeneous,
    truncated_normal,
    truncated_normal_mean,
    uniform,
)
from .baselines import (
    SUBLINEAR_TERMS,
    CoopUCB2Params,
    CoopUCB2State,
    DDUCBParams,
    DDUCBState,
    coop_ucb2,
    dducb,
    dducb_mixing_rounds,
    landgren_consensus_matrix,
    second_eigenvalue_magnitude,
)
from .bounds import (
    BOUND_TERMS,
    GraphConstants,
    TheoremBound,
    bernoulli_kl_np,
    burn_in_time,
    dec_kl_ucb_log_coefficient,
    dec_ucb1_log_coefficient,
    gaps_of,
    graph_constants,
    kl_ucb_log_coefficient,
    lai_robbins_constant,
    theorem_bound,
    theorem_log_coefficient,
    ucb1_log_coefficient,
    ucb1_regret_bound,
)
from .decentralized import (
    MAX_CONSENSUS,
    DecKLUCBParams,
    DecState,
    DecUCB1Params,
    DecUCBParams,
    dec_graphs,
    dec_kl_ucb,
    dec_ucb,
    dec_ucb1,
    neighbourhood_sizes,
)
from .evaluate import (
    BanditEnvironment,
    BanditInfo,
    BanditParams,
    BanditRecord,
    BanditResult,
    BanditState,
    bandit_algorithm,
    bandit_environment,
    default_record_steps,
    evaluate,
    pseudo_regret,
    resolve_num_agents,
    seed_reward_key,
)
from .indices import BISECTION_STEPS, bernoulli_kl, kl_ucb_index, ucb_index
from .paper_graphs import (
    PAPER_GRAPH_ORDERS,
    paper_graph,
    paper_graph_kind,
    paper_graph_names,
    paper_graph_order,
)
from .policy import (
    CLOCKS,
    IndexStats,
    Policy,
    check_clock,
    initial_stats,
    log_time,
    observe,
    observe_one,
    validate_constants,
)
from .single_agent import (
    KLUCBParams,
    UCBParams,
    kl_budget,
    kl_ucb,
    pooled_statistics,
    pooled_ucb,
    ucb,
    ucb1,
)

__all__ = [
    "Arms", "FAMILIES", "bernoulli", "beta_distribution", "truncated_normal", "uniform",
    "heterogeneous", "truncated_normal_mean",
    "Policy", "IndexStats", "CLOCKS", "initial_stats", "observe", "observe_one", "log_time",
    "check_clock", "validate_constants",
    "ucb_index", "bernoulli_kl", "kl_ucb_index", "BISECTION_STEPS",
    "UCBParams", "KLUCBParams", "ucb", "ucb1", "kl_ucb", "pooled_ucb", "pooled_statistics",
    "kl_budget",
    "dec_ucb", "dec_ucb1", "dec_kl_ucb", "DecState", "DecUCBParams", "DecUCB1Params",
    "DecKLUCBParams", "dec_graphs", "neighbourhood_sizes", "MAX_CONSENSUS",
    "BanditState", "BanditInfo", "BanditRecord", "BanditResult", "bandit_algorithm",
    "BanditEnvironment", "BanditParams", "bandit_environment", "evaluate", "pseudo_regret",
    "resolve_num_agents", "default_record_steps",
    "seed_reward_key",
    "lai_robbins_constant", "ucb1_regret_bound", "bernoulli_kl_np", "gaps_of",
    "GraphConstants", "graph_constants", "burn_in_time", "TheoremBound", "theorem_bound",
    "theorem_log_coefficient", "ucb1_log_coefficient", "kl_ucb_log_coefficient",
    "dec_ucb1_log_coefficient", "dec_kl_ucb_log_coefficient", "BOUND_TERMS",
    "paper_graph", "paper_graph_names", "paper_graph_kind", "paper_graph_order",
    "PAPER_GRAPH_ORDERS",
    "coop_ucb2", "CoopUCB2Params", "CoopUCB2State", "landgren_consensus_matrix",
    "dducb", "DDUCBParams", "DDUCBState", "dducb_mixing_rounds", "second_eigenvalue_magnitude",
    "SUBLINEAR_TERMS",
]
