"""The grid-world learning family of resilient projection-based consensus actor-critic (Figura,
Lin, Liu, Gupta, "Resilient Consensus-based Multi-agent Reinforcement Learning with Function
Approximation", arXiv:2111.06776): MLP actors and critics, trained in batches of episodes.

* :mod:`.gridworld` — the cooperative-navigation grid world (``code_version="v1" | "v2"``);
* :mod:`.networks` — the actor, critic and team-reward MLPs of every agent;
* :mod:`.variants` — agent types, the authors' code variants and per-update protocols;
* :mod:`.mlp` — the per-update rules (local fits, consensus epochs, the learning adversaries,
  actors);
* :mod:`.topology` — the communication graph as in-node tables (:func:`resolve_graph`);
* :mod:`.algorithm` — one update as a runner ``Algorithm`` (:func:`learner`);
* :mod:`.experiments` — grids of runs (:func:`run_runs`, :func:`run_grid`,
  :func:`run_experiment`) and their metrics.

**One update** (the unit of the training loop, :func:`learner`'s ``step``):

1. collect ``n_ep_fixed`` episodes (v1: 100, v2: 50) of 20 steps with the current policies
   (each agent samples its action from its actor, replaced with probability ``epsilon = 0.05``
   by a uniform one); the episodes of one update are independent given the policies, so they
   are vmapped, and each is a ``lax.scan`` over the horizon;
2. run the consensus epochs (v1: 20, v2: 10;
   :func:`~decentral.resilient_ac.learning.mlp.consensus_epoch`) on the batch (v1: the 2000
   fresh transitions; v2: a replay buffer of the last two
   collections, 2000 transitions; in the first update, whose buffer holds only the fresh
   1000, they are used twice, which leaves every full-batch mean unchanged);
3. one actor step per agent (v1: Adam, full batch; v2: the fresh 1000 transitions,
   adversaries one epoch of minibatches of 200).

Per episode it records the discounted return ``G^i = sum_j gamma^j r^i_{j+1}`` (gamma = 0.9,
scaled rewards) averaged over the cooperative agents (*coop return*, "True"), over the
adversaries (*adversary return*; 0 when there is none), and *Est*, the mean over cooperative
agents of ``V_i(s_0)`` at the start of the episode ("Estimated").

**v2's two phases.** The authors' v2 runs have two phases of 4000 episodes, the second started
from the first's saved weights. Here phase 2 starts from phase 1's final networks (actors,
critics, team-reward models), with fresh Adam moments and an empty replay buffer; only the
weights are carried over. How the authors' logged phase was initialised is only partly known,
so compare shapes and final levels, not episode-by-episode values.

**Scenarios** (agent 4 is the adversary in the paper's runs): ``"cooperative"`` (no
adversary), ``"greedy"``, ``"faulty"``, ``"malicious"``; or an explicit per-agent list of type
names / codes. **Oracle** runs give the cooperative agents ``r_coop`` (the mean cooperative
reward) instead of their private reward, the "True (global)" reference of the v2 figure.

**Graphs.** ``graphs`` (``graph=`` is its older name) takes what every factory of the library
takes (:func:`decentral.graphs.as_sequence`: a ``GraphSequence``, a weight matrix, a boolean
adjacency with self-loops; only who hears whom is read) and, as shortcuts, the names
``"paper"`` and ``"k5"`` and in-node tables. ``"paper"`` (the default): ``in_nodes =
[[0,1,2,3],[1,2,3,4],[2,3,4,0],[3,4,0,1],[4,0,1,2]]`` (agent i hears itself and i+1, i+2, i+3
mod 5). This graph is only **2-robust**, below the 3-robust (2H + 1 for H = 1) hypothesis of the
paper's results; its cooperative subgraph is 2-robust = H + 1, the weaker condition for W-MSR
with Byzantine agents. ``"k5"`` is the complete graph (3-robust: the hypothesis holds). An
integer ``in_nodes`` table ``[A, K]`` (own index first) is accepted, or a stack ``[P, A, K]``
used periodically, ``in_nodes[u % P]`` at update ``u``; a sequence with a period (static,
periodic, one-peer) becomes the stack of its period. The batch learners gather a fixed number
of messages, so every agent must have the same in-degree (:func:`resolve_graph`).

**Time.** As everywhere in the library, time is the runner's ``num_steps``. For these
episode-based learners one runner step is one *update* (the unit above: one collection of
``episodes_per_update`` episodes, the consensus epochs, one actor step), so a run of ``E``
episodes is ``num_steps = E / episodes_per_update`` runner steps; the step index ``t`` is the
update index (the graph of update ``t`` is ``in_nodes[t % P]``, the attacker sees ``t``),
and the records hold ``episodes_per_update`` episodes per step.

**Compilation.** A whole grid (scenarios x H x oracle x seeds) is one vmapped program:
scenario, H, oracle flag, targets and seed are data (``agent_type`` selects the branches with
``where``). The training loop is the library's runner (:func:`decentral.runner.run`, one
update per runner step, the grid as its sweep axis), which gives chunking, a progress bar and
checkpoints (``checkpoint_dir``): an interrupted run resumes bit-identically. Every run's
:class:`LearnParams` are checked by the learner's ``check_params`` before anything compiles.

**Code versions.** ``code_version`` (``"v1"`` / ``"v2"``; ``version=`` is its older name) is
the authors' code version the grid world and the protocol follow, not the algorithm's
revision label (``Algorithm.version``); result configurations keep the key ``"version"``.

"""

from . import algorithm, experiments, gridworld, mlp, networks, topology, variants
from .algorithm import (
    ADVERSARY,
    HYPERPARAMS,
    EpisodeMetrics,
    LearnerState,
    LearnParams,
    collect_episodes,
    learner,
)
from .experiments import (
    RUN_FIELDS,
    SCENARIOS,
    ExperimentResult,
    default_episodes,
    default_phases,
    default_seeds,
    learner_params,
    rolling_mean,
    run_experiment,
    run_grid,
    run_runs,
    split_runs,
    stack_runs,
    window_mean,
)
from .gridworld import (
    GridParams,
    GridState,
    GridWorld,
    Trajectory,
    grid_params,
    grid_world,
    paper_targets,
    random_targets,
    rollout,
    uniform_policy,
)
from .mlp import LearningProtocol, Variant, get_protocol, get_variant, learning_adversaries
from .topology import K5_IN_NODES, PAPER_IN_NODES, resolve_graph

__all__ = [
    "algorithm", "experiments", "gridworld", "mlp", "networks", "topology", "variants",
    "GridParams", "GridState", "GridWorld", "Trajectory", "grid_params", "grid_world",
    "paper_targets", "random_targets", "rollout", "uniform_policy",
    "LearningProtocol", "Variant", "get_protocol", "get_variant", "learning_adversaries",
    "PAPER_IN_NODES", "K5_IN_NODES", "resolve_graph",
    "ADVERSARY", "HYPERPARAMS", "LearnParams", "LearnerState", "EpisodeMetrics",
    "collect_episodes", "learner",
    "SCENARIOS", "ExperimentResult", "learner_params", "stack_runs", "RUN_FIELDS",
    "run_experiment", "run_grid", "run_runs", "window_mean", "rolling_mean", "split_runs",
    "default_seeds", "default_phases", "default_episodes",
]
