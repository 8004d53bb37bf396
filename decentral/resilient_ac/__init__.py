"""Byzantine-resilient aggregation and consensus (Figura, Lin, Liu, Gupta, "Resilient
Consensus-based Multi-agent Reinforcement Learning with Function Approximation",
arXiv:2111.06776; W-MSR of LeBlanc, Zhang, Koutsoukos, Sundaram, IEEE JSAC 31(4) 2013).

Three families, each in its own part of the package:

1. **Resilient consensus** (W-MSR and its relatives), in the order data flows:

   * :mod:`.aggregators` — :func:`wmsr`, :func:`trimmed_mean`, :func:`clipped_mean`,
     :func:`mean` over one receiver's gathered values ``[K, ...]`` (own value first),
     element-wise, jit-able;
   * :mod:`.attackers` — the :class:`Attacker` protocol (stateless rules per receiver, or a
     state the runner carries) and the attacks :func:`constant`, :func:`huge`,
     :func:`random_values`, :func:`just_inside`, :func:`split_brain`,
     :func:`coordinate_extreme`;
   * :mod:`.consensus` — :func:`resilient_consensus` (a runner ``Algorithm``), the hypotheses
     it checks (:func:`check_hypotheses`), the record function :func:`values_of`;
   * :mod:`.projection` — the projection-based consensus step of linear parameters
     (:func:`projection_step`) and the batch output-layer step (:func:`weighted_output_step`);
   * :mod:`.metrics` — cooperative spread and hull violation of recorded values.

2. **The actor-critic with linear function approximation**, :mod:`.linear`: finite MDPs and
   their exact references (:mod:`.linear.mdp`), the attackers of linear parameters and the
   learning adversaries (:mod:`.linear.adversaries`), the local rules (:mod:`.linear.rules`)
   and the algorithm (:func:`linear_actor_critic`, :func:`rpbcac`; :mod:`.linear.algorithm`).

3. **The grid-world learners** (MLP actors and critics), :mod:`.learning`: the grid world
   (:func:`grid_world`), the networks and per-update rules (:mod:`.learning.mlp`), the learner
   as a runner ``Algorithm`` and the experiment driver (:func:`run_experiment`,
   :func:`run_grid`, :func:`run_runs`).

The modules ``gridworld``, ``mlp`` and ``experiments`` directly under this package are the
learners' former paths and re-export them for one version. The paper's small public data (the
experiment graph, the logged runs' seeds and targets, our Example 1 reconstruction) is in
:mod:`decentral.datasets.figura2021`.

**The contract.** Every factory takes ``graphs`` as the library's factories do
(:func:`decentral.graphs.as_sequence`; W-MSR reads only who hears whom, so an adjacency without
a rule gets ``rule="row"``), carries an optional same-structure sequence in its params
(``params.graphs``; the grid-world learners take their in-node tables as data), and checks
every run's params in its ``check_params`` (each swept value too), attacker params included
(:meth:`Attacker.validate_params`).

**Names** (one per concept; the older names stay as aliases): :func:`resilient_consensus_params`
(``consensus_params``; plain consensus's is :func:`decentral.consensus.consensus_params`);
``graphs=`` (``graph=``) in :func:`linear_actor_critic`, :func:`rpbcac` (the paper's name for
``linear_actor_critic(consensus="projection")``), :func:`linear_params` and the experiment
runners; ``code_version=`` (``version=``) for the authors' code versions ``"v1"`` / ``"v2"``
of the grid world and the learners (not ``Algorithm.version``, a revision label);
``linear.linear_actor_step`` and ``mlp.mlp_actor_step`` (each ``actor_step`` in its module);
``mlp.LearningProtocol`` (``mlp.Protocol``); one aggregator registry :data:`AGGREGATORS`
(``"trimmed"`` / ``"clipped"`` as :data:`AGGREGATOR_ALIASES`); :meth:`Attacker.advance` returns
``(state, messages)``, the library's order, whichever order an attacker's ``step`` uses
(``Attacker.state_first``).

The theory a user needs to read the claims (robust graphs, the rules, the attacks, the
experiment graph's robustness) is in ``docs/resilient.md``; the actor-critic with linear
function approximation in ``docs/resilient_linear.md``; the grid-world learning experiments in
``docs/resilient_learning.md``.
"""

from .aggregators import (
    AGGREGATOR_ALIASES,
    AGGREGATORS,
    aggregator_name,
    clipped_mean,
    get_aggregator,
    mean,
    ranks,
    trimmed_mean,
    wmsr,
)
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
    resilient_consensus_params,
    values_of,
)
from .learning import (
    RUN_FIELDS,
    SCENARIOS,
    ExperimentResult,
    GridParams,
    GridState,
    GridWorld,
    LearnParams,
    Trajectory,
    grid_params,
    grid_world,
    learner_params,
    paper_targets,
    random_targets,
    resolve_graph,
    rollout,
    run_experiment,
    run_grid,
    run_runs,
    stack_runs,
    uniform_policy,
)
from .linear import (
    ADVERSARIES,
    CONSENSUS_VARIANTS,
    FiniteMDP,
    LinearACInfo,
    LinearACParams,
    LinearACState,
    LinearReferences,
    exact_references,
    example1_attacker,
    example1_mdp,
    faulty_adversary,
    feature_extreme,
    greedy_adversary,
    linear_actor_critic,
    linear_params,
    malicious_adversary,
    random_mdp,
    rpbcac,
)
from .metrics import cooperative_spread, hull_violation
from .projection import projected_errors, projection_step, weighted_output_step

__all__ = [
    "wmsr", "trimmed_mean", "clipped_mean", "mean", "ranks", "AGGREGATORS", "AGGREGATOR_ALIASES",
    "aggregator_name", "get_aggregator",
    "Attacker", "AttackContext", "ReceiverView", "stateless", "receiver_views",
    "replace_byzantine_messages", "constant", "huge", "random_values", "just_inside",
    "split_brain", "coordinate_extreme", "switch_attacker",
    "resilient_consensus", "resilient_consensus_params", "consensus_params", "ResilientParams",
    "ResilientState",
    "check_hypotheses", "values_of", "ROBUSTNESS_AUTO_MAX_N",
    "projected_errors", "projection_step", "weighted_output_step",
    "cooperative_spread", "hull_violation",
    "grid_world", "grid_params", "paper_targets", "random_targets", "GridWorld", "GridParams",
    "GridState", "Trajectory", "rollout", "uniform_policy",
    "linear_actor_critic", "rpbcac", "linear_params", "LinearACParams", "LinearACState",
    "LinearACInfo", "CONSENSUS_VARIANTS", "FiniteMDP", "random_mdp", "exact_references",
    "LinearReferences", "feature_extreme", "example1_mdp", "example1_attacker",
    "greedy_adversary", "faulty_adversary", "malicious_adversary", "ADVERSARIES",
    "run_experiment", "run_grid", "run_runs", "learner_params", "stack_runs", "RUN_FIELDS",
    "LearnParams", "ExperimentResult", "SCENARIOS",
    "resolve_graph",
]
