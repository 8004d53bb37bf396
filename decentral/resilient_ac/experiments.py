"""The grid-world experiments of resilient projection-based consensus actor-critic (Figura, Lin,
Liu, Gupta, "Resilient Consensus-based Multi-agent Reinforcement Learning with Function
Approximation", arXiv:2111.06776): episode collection, the training loop, scenarios, metrics
and the arrays behind the figures.

**One update** (the unit of the training loop, :func:`learner`'s ``step``):

1. collect ``n_ep_fixed`` episodes (v1: 100, v2: 50) of 20 steps with the current policies
   (each agent samples its action from its actor, replaced with probability ``epsilon = 0.05``
   by a uniform one); the episodes of one update are independent given the policies, so they
   are vmapped, and each is a ``lax.scan`` over the horizon;
2. run the consensus epochs (v1: 20, v2: 10; :func:`~decentral.resilient_ac.mlp.consensus_epoch`)
   on the batch (v1: the 2000 fresh transitions; v2: a replay buffer of the last two
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

Example:
    >>> res = run_experiment("malicious", 1, seeds=(50,), episodes=100, progress=False)
    >>> res.coop_return.shape, res.config["variant"]
    ((1, 100), 'v1-corrected')
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import check_index, check_indices, check_int
from decentral.datasets.figura2021 import EXPERIMENT_IN_NODES

from .attackers import Attacker
from .gridworld import GridParams, GridWorld, grid_world, paper_targets
from .mlp import (
    AGENT_TYPES,
    COOPERATIVE,
    Batch,
    LearningProtocol,
    Nets,
    Variant,
    _check_agent_types,
    actor_deltas,
    adam_init,
    apply,
    consensus_epoch,
    get_protocol,
    get_variant,
    init_nets,
    mlp_actor_step,
    value,
)

__all__ = [
    "SCENARIOS", "ADVERSARY", "PAPER_IN_NODES", "K5_IN_NODES", "resolve_graph", "HYPERPARAMS",
    "LearnParams", "LearnerState", "EpisodeMetrics", "ExperimentResult", "collect_episodes",
    "learner", "learner_params", "stack_runs", "RUN_FIELDS", "run_experiment", "run_grid",
    "run_runs", "window_mean", "rolling_mean", "V1_LOGGED",
    "V2_LOGGED", "v1_panel_arrays", "v2_panel_arrays", "summary_levels", "default_seeds",
    "default_phases",
]

#: The scenarios of the paper's figures.
SCENARIOS: tuple[str, ...] = ("cooperative", "greedy", "faulty", "malicious")

ADVERSARY = 4
"""The adversarial agent of the paper's runs."""

PAPER_IN_NODES = EXPERIMENT_IN_NODES
"""The experiment graph (own index first): 2-robust only, not 3-robust
(:data:`decentral.datasets.figura2021.EXPERIMENT_IN_NODES`, re-exported here)."""

K5_IN_NODES = np.asarray([[(i + j) % 5 for j in range(5)] for i in range(5)], np.int32)
"""The complete graph on 5 agents (3-robust), own index first."""

#: Hyperparameters of the logged runs (both versions): critic / team-reward SGD rate, actor
#: Adam rate, discount, exploration probability.
HYPERPARAMS: dict[str, float] = {"critic_lr": 0.01, "actor_lr": 0.002, "gamma": 0.9,
                                 "epsilon": 0.05}

#: Mean over the 5 seeds of the authors' v1 logs (commit 61b07cf,
#: ``simulation_results/raw_data/projection-based``): (scenario, H) -> coop first 500 episodes,
#: coop last 1000, adversary first 500, adversary last 1000, Est last 1000 (None: no adversary).
V1_LOGGED: dict[tuple[str, int], tuple] = {
    ("cooperative", 0): (-3.70, -1.98, None, None, -2.28),
    ("cooperative", 1): (-3.70, -2.12, None, None, -2.33),
    ("greedy", 0): (-3.70, -4.15, -3.64, -1.50, -0.89),
    ("greedy", 1): (-3.70, -2.32, -3.64, -1.57, -2.10),
    ("faulty", 0): (-3.69, -4.04, -3.65, -2.49, 0.01),
    ("faulty", 1): (-3.69, -2.48, -3.65, -2.45, -2.21),
    ("malicious", 0): (-3.70, -4.68, -3.65, -1.50, 2.07),
    ("malicious", 1): (-3.69, -2.49, -3.64, -1.56, -2.04),
}

#: Mean over the 3 seeds of the authors' v2 logs (commit f10f863, the logged 4000-episode
#: phase): (scenario, H) -> coop first 200, coop last 500, Est last 500, oracle coop last 500.
V2_LOGGED: dict[tuple[str, int], tuple] = {
    ("cooperative", 0): (-6.97, -5.23, -5.79, -4.58),
    ("cooperative", 1): (-6.97, -5.36, -6.13, -4.60),
    ("greedy", 0): (-7.06, -6.67, -4.43, -6.89),
    ("greedy", 1): (-7.06, -5.55, -5.86, -4.69),
    ("faulty", 0): (-7.06, -6.79, -1.15, -6.70),
    ("faulty", 1): (-7.06, -5.57, -5.86, -4.75),
    ("malicious", 0): (-7.06, -7.20, 4.24, -6.94),
    ("malicious", 1): (-7.06, -5.46, -5.65, -4.95),
}

_PAPER_SEEDS = {"v1": (50, 100, 200, 500, 1000), "v2": (100, 200, 300)}
_PAPER_EPISODES = {"v1": 10_000, "v2": 4_000}
_PAPER_PHASES = {"v1": 1, "v2": 2}


def default_phases(version: str) -> int:
    """The number of training phases of the authors' runs (v1: 1, v2: 2)."""
    get_protocol(version)
    return _PAPER_PHASES[version]


def default_seeds(version: str) -> tuple[int, ...]:
    """The seeds of the authors' logged runs (their targets are tabulated)."""
    get_protocol(version)
    return _PAPER_SEEDS[version]


# ------------------------------------------------------------------------------------------
# graph
# ------------------------------------------------------------------------------------------


def _in_node_tables(patterns: np.ndarray, what: str) -> np.ndarray:
    """Boolean patterns ``[P, A, A]`` (``adj[i, j]``: i hears j) -> in-node tables
    ``[P, A, K]``: own index first, then the in-neighbours in cyclic order ``i + 1, i + 2, ...
(mod A)`` (the layout of the paper's table). The batch
    learners gather a fixed number ``K`` of messages per receiver, so every agent at every step
    must have the same in-degree."""
    P, A, _ = patterns.shape
    patterns = patterns | np.eye(A, dtype=bool)[None]
    degrees = patterns.sum(-1)
    if np.any(degrees != degrees.flat[0]):
        raise ValueError(f"{what}: the batch (MLP) learners need every agent to hear the same "
                         f"number of agents at every step (in-degrees with self-loops: "
                         f"{sorted(set(degrees.ravel().tolist()))}); pass an in_nodes table "
                         "or a graph with equal in-degrees (e.g. circulant, complete).")
    out = np.empty((P, A, int(degrees.flat[0])), np.int32)
    for p in range(P):
        for i in range(A):
            others = sorted((j for j in np.flatnonzero(patterns[p, i]) if j != i),
                            key=lambda j, i=i: (j - i) % A)
            out[p, i] = [i, *others]
    return out


def _check_in_nodes(arr, num_agents: int, name: str = "in_nodes") -> np.ndarray:
    """An in-node stack ``[P, A, K]`` after checking it: integers (not bools, not floats),
    ``A = num_agents`` rows, indices in ``0..A-1`` (never clamped), each row starting with the
    agent's own index. The one check of :func:`resolve_graph` and the learner's
    ``check_params`` (``params.in_nodes``)."""
    arr = np.asarray(arr)
    if arr.ndim != 3 or arr.shape[1] != num_agents or arr.shape[0] < 1 or arr.shape[2] < 1 \
            or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be an integer table [A = {num_agents}, K] (or a stack "
                         f"[P, A, K]) listing each agent's own index first; got shape "
                         f"{arr.shape}, dtype {arr.dtype}.")
    if arr.min() < 0 or arr.max() >= num_agents:
        raise ValueError(f"{name} holds indices outside 0..{num_agents - 1} (they would be "
                         "clamped by the gather).")
    if np.any(arr[:, :, 0] != np.arange(num_agents)):
        raise ValueError(f"{name}[i][0] must be i (each agent hears itself first).")
    return arr


def resolve_graph(graphs, num_agents: int = 5) -> np.ndarray:
    """The in-node stack int32 ``[P, A, K]`` of the batch learners' graphs, used periodically
    (``in_nodes[u % P]`` at update ``u``).

    ``graphs`` is anything :func:`decentral.graphs.as_sequence` accepts, read for who hears
    whom only (weights ignored; an adjacency without a rule is read with ``rule="row"``): a
    :class:`~decentral.graphs.GraphSequence` with a period (static, periodic, one-peer: its
    edge patterns over one period), a float weight matrix ``[A, A]``, a boolean adjacency
    ``[A, A]`` with self-loops (``adj[i, j]``: i hears j); or, as documented shortcuts, the
    names ``"paper"`` / ``"k5"`` (5 agents) and an integer in-node table ``[A, K]`` / stack
    ``[P, A, K]`` (own index first). Graphs become tables with the own index first, then the
    in-neighbours in cyclic order ``i + 1, i + 2, ... (mod A)``.

    Raises:
        ValueError: an unknown name, a table of the wrong shape, indices outside the agents,
            a row that does not start with the agent's own index, a graph ``as_sequence``
            refuses (an adjacency without self-loops among them: see
            :func:`decentral.graphs.add_self_loops`), a graph whose agents do not all have the
            same in-degree, a random or explicit (finite) sequence, another number of agents.

    Example:
        >>> import decentral.graphs as g
        >>> resolve_graph(g.complete(3), 3)[0].tolist()
        [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    """
    from decentral.graphs import GraphSequence, as_sequence

    if isinstance(graphs, str):
        if graphs not in ("paper", "k5"):
            raise ValueError(f"unknown graph {graphs!r}; use 'paper' (the experiment graph, "
                             "2-robust), 'k5' (complete, 3-robust), an in_nodes table or any "
                             "graph decentral.graphs.as_sequence accepts.")
        if num_agents != 5:
            raise ValueError(f"graph {graphs!r} has 5 agents; this run has {num_agents}.")
        table = PAPER_IN_NODES if graphs == "paper" else K5_IN_NODES
        return table[None].copy()
    if isinstance(graphs, GraphSequence):
        seq = graphs
    else:
        arr = np.asarray(graphs)
        if arr.dtype == np.bool_ or (arr.ndim == 2 and arr.shape[0] == arr.shape[1]
                                     and np.issubdtype(arr.dtype, np.floating)):
            if arr.shape != (num_agents, num_agents):
                kind = "an adjacency must be bool" if arr.dtype == np.bool_ else \
                    "a weight matrix must be"
                raise ValueError(f"{kind} [{num_agents}, {num_agents}]; got shape "
                                 f"{arr.shape}.")
            seq = as_sequence(arr, default_rule="row")
        else:
            return _check_in_nodes(arr[None] if arr.ndim == 2 else arr, num_agents
                                   ).astype(np.int32)
    if seq.n != num_agents:
        raise ValueError(f"the graph sequence has {seq.n} agents; this run has {num_agents}.")
    if seq.period is None:
        raise ValueError(f"a {seq.form!r} graph sequence has no period; the batch "
                         "learners take static, periodic or one-peer sequences (or an "
                         "in_nodes stack).")
    pats = seq.weights_host(seq.period) != 0
    return _in_node_tables(pats, "graph sequence")


def _num_agents_of(graphs) -> int:
    """The number of agents of a ``graphs`` argument (5 for the named graphs)."""
    from decentral.graphs import GraphSequence

    if isinstance(graphs, str):
        return 5
    if isinstance(graphs, GraphSequence):
        return graphs.n
    shape = np.shape(graphs)
    if len(shape) < 2:
        raise ValueError(f"graphs must be 'paper', 'k5', an in_nodes table [A, K] / stack "
                         f"[P, A, K] or a graph decentral.graphs.as_sequence accepts; got "
                         f"shape {shape}.")
    return int(shape[-2])


def _graphs_alias(graphs, graph):
    """``graphs``, or its older keyword ``graph`` (never both); default ``"paper"``."""
    if graph is not None:
        if graphs is not None:
            raise ValueError("give graphs= or its older name graph=, not both.")
        return graph
    return "paper" if graphs is None else graphs


def _version_alias(code_version, version):
    """``code_version``, or its older keyword ``version`` (never both); default ``"v1"``."""
    if version is not None:
        if code_version is not None:
            raise ValueError("give code_version= or its older name version=, not both.")
        return version
    return "v1" if code_version is None else code_version


# ------------------------------------------------------------------------------------------
# params, state, episodes
# ------------------------------------------------------------------------------------------


class LearnParams(NamedTuple):
    """The data of one run (the runner sweeps the grid over them). Checked wherever it
    arrives: the learner's ``check_params`` (which :func:`~decentral.runner.run` calls on
    every run's params, each swept value separately) refuses every field below that breaks its
    contract, with the field named.

    Attributes:
        H: int32 scalar >= 0, in-neighbours the aggregation tolerates (0: plain mean); an
            integer, never a bool or a float (which would be truncated).
        agent_type: int32 ``[A]`` (:data:`~decentral.resilient_ac.mlp.AGENT_TYPES` codes);
            adversarial codes only in the learner's ``adversary_slots``, at least one
            cooperative agent.
        oracle: bool scalar, cooperative agents fit ``r_coop`` instead of their own reward.
        targets: int32 ``[A, 2]`` grid targets, cells of the grid.
        seed: uint32 scalar, the experiment seed (distinct integers in [0, 2**32), checked by
            :func:`decentral.runner.validate_seeds` in :func:`run_runs`), folded into every
            key of the run.
        phase: int32 scalar >= 0, folded into the keys (v2's second phase draws afresh).
        warm: bool scalar, start from ``start_nets`` instead of fresh networks.
        start_nets: :class:`~decentral.resilient_ac.mlp.Nets` to warm-start from (the shapes
            of the learner's networks, also when ``warm`` is False).
        in_nodes: int32 ``[P, A, K]`` in-node tables (own index first, indices in range).
        critic_lr, actor_lr: finite rates > 0; gamma: the discount in ``[0, 1)``; epsilon:
            the exploration probability in ``[0, 1]`` (:data:`HYPERPARAMS`).
    """

    H: Any
    agent_type: Any
    oracle: Any
    targets: Any
    seed: Any
    phase: Any
    warm: Any
    start_nets: Any
    in_nodes: Any
    critic_lr: Any
    actor_lr: Any
    gamma: Any
    epsilon: Any


class LearnerState(NamedTuple):
    """State of one run between updates.

    Attributes:
        nets: all agents' networks (:class:`~decentral.resilient_ac.mlp.Nets`).
        actor_opt: Adam state of each actor, stacked over agents.
        buffer: the previous collection (v2 replay buffer) or None (v1).
        has_buffer: bool, ``buffer`` holds real transitions.
    """

    nets: Nets
    actor_opt: Any
    buffer: Any
    has_buffer: Any


class EpisodeMetrics(NamedTuple):
    """Per-episode numbers (leading axes as the caller's).

    Attributes:
        coop_return: mean discounted return of the cooperative agents ("True").
        adversary_return: mean discounted return of the adversaries (0 if none).
        estimate: mean over cooperative agents of ``V_i(s_0)`` ("Estimated", Est).
    """

    coop_return: Any
    adversary_return: Any
    estimate: Any


def collect_episodes(key, env: GridWorld, actors, critics, agent_type, targets, n_episodes: int,
                     epsilon, gamma):
    """``n_episodes`` episodes of the current policies (vmapped; each a ``lax.scan`` over the
    horizon).

    Args:
        key: PRNG key.
        env: the grid world.
        actors, critics: :class:`~decentral.resilient_ac.mlp.MLP` stacked over agents.
        agent_type: int32 ``[A]``.
        targets: int32 ``[A, 2]``.
        n_episodes: static.
        epsilon: exploration probability (uniform action instead of the policy's).
        gamma: discount of the recorded returns.

    Returns:
        ``(batch, metrics, returns)``: the transitions flattened to ``B = n_episodes *
        horizon`` (:class:`~decentral.resilient_ac.mlp.Batch`), :class:`EpisodeMetrics`
        ``[n_episodes]``, and the per-agent discounted returns ``[n_episodes, A]``.
    """
    params = GridParams(jnp.asarray(targets, jnp.int32))
    A, T, nA = env.num_agents, env.horizon, env.num_actions
    coop = (agent_type == COOPERATIVE).astype(jnp.result_type(float))
    n_coop = jnp.maximum(jnp.sum(coop), 1.0)
    n_adv = jnp.sum(1.0 - coop)

    def episode(k):
        k_reset, k_steps = jax.random.split(k)
        obs0, state0 = env.reset(k_reset, params)
        v0 = jax.vmap(value, in_axes=(0, None))(critics, obs0)
        est = jnp.sum(coop * v0) / n_coop

        def step(carry, ks):
            obs, state = carry
            k_pol, k_explore, k_uniform = jax.random.split(ks, 3)
            logits = jax.vmap(apply, in_axes=(0, None))(actors, obs)          # [A, nA]
            a_pol = jax.random.categorical(k_pol, logits, axis=-1)
            explore = jax.random.bernoulli(k_explore, epsilon, (A,))
            a_uni = jax.random.randint(k_uniform, (A,), 0, nA)
            actions = jnp.where(explore, a_uni, a_pol).astype(jnp.int32)
            nobs, nstate, rewards, _ = env.step(ks, state, actions, params)
            return (nobs, nstate), (obs, nobs, actions, rewards)

        _, (obs, nobs, actions, rewards) = jax.lax.scan(step, (obs0, state0),
                                                        jax.random.split(k_steps, T))
        discount = gamma ** jnp.arange(T, dtype=rewards.dtype)
        returns = discount @ rewards                                          # [A]
        return obs, nobs, actions, rewards, returns, est

    obs, nobs, actions, rewards, returns, est = jax.vmap(episode)(
        jax.random.split(key, n_episodes))
    B = n_episodes * T
    obs, nobs = obs.reshape(B, -1), nobs.reshape(B, -1)
    actions, rewards = actions.reshape(B, A), rewards.reshape(B, A)
    batch = Batch(obs, nobs, actions, rewards, env.tr_input(obs, actions))
    coop_ret = returns @ coop / n_coop
    adv_ret = jnp.where(n_adv > 0, returns @ (1.0 - coop) / jnp.maximum(n_adv, 1.0), 0.0)
    return batch, EpisodeMetrics(coop_ret, adv_ret, est), returns


# ------------------------------------------------------------------------------------------
# the learner (one runner step = one update)
# ------------------------------------------------------------------------------------------


def _concat_batches(a: Batch, b: Batch) -> Batch:
    return jax.tree_util.tree_map(lambda x, y: jnp.concatenate([x, y], axis=0), a, b)


def learner(code_version: str | LearningProtocol | None = None,
            variant: str | Variant = "corrected", *, collision: str | None = None,
            num_agents: int = 5, adversary_slots: tuple[int, ...] = (ADVERSARY,),
            attacker: Attacker | None = None, version: str | LearningProtocol | None = None):
    """The training loop of one run as a runner :class:`~decentral.runner.Algorithm` (cached
    for the default attacker: the same arguments give the same object, so the runner compiles
    once).

    ``init(key, params: LearnParams) -> LearnerState`` draws fresh networks (v1: shared critic
    and team-reward templates) or takes ``params.start_nets``; ``step(key, state, params, t,
    None) -> (state, EpisodeMetrics [n_ep_fixed])`` is one update (module docstring).

    **One runner step is one update** ("time is ``num_steps`` everywhere"): the collection of
    ``protocol.episodes_per_update`` episodes, ``protocol.epochs`` consensus epochs and one
    actor step. A run of ``E`` episodes is ``run(alg, params, seeds, E //
    episodes_per_update)``; ``t`` is the update index (graph ``params.in_nodes[t % P]``), and
    each record holds the metrics of that update's ``episodes_per_update`` episodes.

    The graphs are data (``params.in_nodes``, built by :func:`resolve_graph` in
    :func:`run_runs`), so the learner has no graph argument; every run's params are checked by
    its ``check_params`` (:class:`LearnParams`).

    Args:
        code_version: ``"v1"`` / ``"v2"`` (the authors' code version:
            :class:`~decentral.resilient_ac.mlp.LearningProtocol`) or a protocol; default
            ``"v1"``. ``version=`` is its older name (give one of the two).
        variant: ``"corrected"`` (default), ``"faithful"``, a label or a
            :class:`~decentral.resilient_ac.mlp.Variant`.
        collision: the grid world's occupancy rule (default: the variant's).
        num_agents: A.
        adversary_slots: agents that may be adversarial (adversary-only fits run for them
            only; ``agent_type`` must be cooperative elsewhere).
        attacker: what the adversarial agents send in each consensus epoch (default: the
            experiments' greedy / faulty / malicious agents,
            :func:`~decentral.resilient_ac.mlp.learning_adversaries`; any attacker of the
            contract of :func:`~decentral.resilient_ac.mlp.consensus_epoch`). Its params are
            its own (not swept; checked here by its ``check_params``); the agents' actors learn
            from the critic rows it keeps.
    """
    code_version = _version_alias(code_version, version)
    if attacker is not None and not isinstance(attacker, Attacker):
        raise ValueError(f"attacker must be a resilient_ac.Attacker; got "
                         f"{type(attacker).__name__}.")
    slots = check_indices(adversary_slots, "adversary_slots",
                          check_int(num_agents, "num_agents"), unique=True,
                          hint="adversary_slots lists agent indices, e.g. (4,).")
    if attacker is None:
        return _learner(code_version, variant, collision, num_agents, slots, None)
    attacker.validate_params(None, name="attacker.params")
    return _learner.__wrapped__(code_version, variant, collision, num_agents, slots, attacker)


def _real_scalar(x, name: str) -> float:
    """``x`` as a float after checking it is one real number (not a bool, not an array)."""
    arr = np.asarray(x)
    if arr.ndim != 0 or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be one real number; got {x!r}.")
    return float(arr)


def _check_positive_finite(x, name):
    v = _real_scalar(x, name) if not isinstance(x, bool) else math.nan
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite positive number; got {x!r}.")
    return v


def _check_gamma(x, name: str = "gamma") -> float:
    v = _real_scalar(x, name) if not isinstance(x, bool) else math.nan
    if not 0.0 <= v < 1.0:
        raise ValueError(f"{name} (the discount) must lie in [0, 1); got {x!r}.")
    return v


def _check_epsilon(x, name: str = "epsilon") -> float:
    v = _real_scalar(x, name) if not isinstance(x, bool) else math.nan
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} (exploration probability) must lie in [0, 1]; got {x!r}.")
    return v


def _check_H(H, name: str = "H"):
    if np.ndim(H) != 0:
        raise ValueError(f"{name} must be one non-negative int per run (0 = plain mean, the "
                         f"non-resilient baseline); got shape {np.shape(H)}.")
    if isinstance(H, np.ndarray):
        H = H[()]
    if isinstance(H, bool | np.bool_) or not isinstance(H, (int, np.integer)) or H < 0:
        raise ValueError(f"{name} must be a non-negative int (0 = plain mean, the "
                         f"non-resilient baseline); got {H!r}.")
    return int(H)


def _scalar_of(x, name: str, kind: str):
    """One value of ``kind`` (``"bool"`` or ``"int"``) from ``x`` (a 0-d array or scalar)."""
    arr = np.asarray(x)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be one {kind} per run; got shape {arr.shape}.")
    if kind == "bool":
        if arr.dtype != np.bool_:
            raise ValueError(f"{name} must be a bool; got {x!r} (dtype {arr.dtype}).")
        return bool(arr)
    return check_int(arr, name, minimum=0)


def _check_learn_params(params, env: GridWorld, slots: tuple, template) -> None:
    """The learner's ``check_params``: every field of :class:`LearnParams` (one run)."""
    if not isinstance(params, LearnParams):
        raise ValueError(f"params must be LearnParams (see run_runs); got "
                         f"{type(params).__name__}.")
    A = env.num_agents
    _check_H(params.H, "params.H")
    types = np.asarray(params.agent_type)
    if types.shape != (A,) or types.dtype == np.bool_ or \
            not np.issubdtype(types.dtype, np.integer):
        raise ValueError(f"params.agent_type must be integer codes [A = {A}] "
                         f"({AGENT_TYPES}); got shape {types.shape}, dtype {types.dtype}.")
    unknown = sorted(set(types.tolist()) - set(AGENT_TYPES.values()))
    if unknown:
        raise ValueError(f"params.agent_type holds unknown codes {unknown}; use "
                         f"{AGENT_TYPES}.")
    try:
        _check_agent_types(types, slots)
    except ValueError as exc:
        raise ValueError(f"params.agent_type: {exc}") from None
    if not np.any(types == COOPERATIVE):
        raise ValueError("params.agent_type: at least one agent must be cooperative.")
    _scalar_of(params.oracle, "params.oracle", "bool")
    env._check_params(GridParams(params.targets))
    seed = _scalar_of(params.seed, "params.seed", "int")
    seed_dtype = np.asarray(params.seed).dtype
    if seed > 2**32 - 1 or (np.issubdtype(seed_dtype, np.signedinteger)
                            and seed > 2**31 - 1):
        raise ValueError(f"params.seed must lie in [0, 2**32) and be stored unsigned "
                         f"(np.uint32) above 2**31 - 1; got {seed} ({seed_dtype}).")
    _scalar_of(params.phase, "params.phase", "int")
    _scalar_of(params.warm, "params.warm", "bool")
    want = jax.tree_util.tree_structure(template)
    if jax.tree_util.tree_structure(params.start_nets) != want:
        raise ValueError(f"params.start_nets must be Nets of the learner's networks; got "
                         f"{jax.tree_util.tree_structure(params.start_nets)}.")
    for (path, leaf), tmpl in zip(jax.tree_util.tree_flatten_with_path(params.start_nets)[0],
                                  jax.tree_util.tree_leaves(template), strict=True):
        if tuple(np.shape(leaf)) != tuple(tmpl.shape):
            raise ValueError(f"params.start_nets{jax.tree_util.keystr(path)} must have shape "
                             f"{tuple(tmpl.shape)} (the learner's networks); got "
                             f"{tuple(np.shape(leaf))}.")
    _check_in_nodes(params.in_nodes, A, "params.in_nodes")
    _check_positive_finite(params.critic_lr, "params.critic_lr")
    _check_positive_finite(params.actor_lr, "params.actor_lr")
    _check_gamma(params.gamma, "params.gamma")
    _check_epsilon(params.epsilon, "params.epsilon")


@functools.lru_cache(maxsize=32)
def _learner(version, variant, collision, num_agents, slots, attacker):
    from decentral.runner import Algorithm

    protocol = get_protocol(version)
    var = get_variant(protocol.version, variant)
    env = grid_world(protocol.version, collision=collision or var.collision,
                     num_agents=num_agents)
    n_ep = protocol.episodes_per_update
    template = jax.eval_shape(lambda: init_nets(jax.random.key(0), env.num_agents, env.obs_dim,
                                                env.tr_input_dim, env.num_actions,
                                                protocol.width, protocol.shared_templates))

    def check_params(params) -> None:
        _check_learn_params(params, env, slots, template)

    def keys_of(key, params):
        key = jax.random.fold_in(jax.random.fold_in(key, params.seed), params.phase)
        return key

    def init(key, params: LearnParams) -> LearnerState:
        key = keys_of(key, params)
        fresh = init_nets(key, env.num_agents, env.obs_dim, env.tr_input_dim, env.num_actions,
                          protocol.width, protocol.shared_templates)
        nets = jax.tree_util.tree_map(lambda a, b: jnp.where(params.warm, a, b),
                                      params.start_nets, fresh)
        opt = jax.vmap(adam_init)(nets.actor)
        if protocol.buffer_collections > 1:
            B = n_ep * env.horizon
            f = jnp.result_type(float)
            buffer = Batch(jnp.zeros((B, env.obs_dim), f), jnp.zeros((B, env.obs_dim), f),
                           jnp.zeros((B, env.num_agents), jnp.int32),
                           jnp.zeros((B, env.num_agents), f),
                           jnp.zeros((B, env.tr_input_dim), f))
        else:
            buffer = None
        return LearnerState(nets, opt, buffer, jnp.zeros((), bool))

    def step(key, state: LearnerState, params: LearnParams, t, x_t):
        del x_t
        # host arrays (params held fixed under vmap) indexed by traced values need JAX arrays
        params = jax.tree_util.tree_map(jnp.asarray, params)
        key = keys_of(key, params)
        k_collect, k_epochs, k_actor = jax.random.split(key, 3)
        nets = state.nets
        batch, metrics, _ = collect_episodes(k_collect, env, nets.actor, nets.critic,
                                             params.agent_type, params.targets, n_ep,
                                             params.epsilon, params.gamma)
        if protocol.buffer_collections > 1:
            old = jax.tree_util.tree_map(lambda a, b: jnp.where(state.has_buffer, a, b),
                                         state.buffer, batch)
            train = _concat_batches(old, batch)
        else:
            train = batch
        table = params.in_nodes[t % params.in_nodes.shape[0]]

        def epoch(n, k):
            return consensus_epoch(k, n, train, params.agent_type, table, params.H,
                                   params.oracle, params.critic_lr, params.gamma, protocol,
                                   var, slots, attacker=attacker, t=t), None

        nets, _ = jax.lax.scan(epoch, nets, jax.random.split(k_epochs, protocol.epochs))
        deltas = actor_deltas(nets, batch, params.agent_type, params.gamma)
        actors, opt = mlp_actor_step(k_actor, nets.actor, state.actor_opt, batch, deltas,
                                     params.agent_type, params.actor_lr,
                                     protocol.adversary_actor_batch)
        nets = nets._replace(actor=actors)
        buffer = batch if protocol.buffer_collections > 1 else None
        return LearnerState(nets, opt, buffer, jnp.ones((), bool)), metrics

    config = {"protocol": protocol.__dict__, "variant": var.__dict__,
              "env": {"version": env.version, "collision": env.collision,
                      "num_agents": env.num_agents, "horizon": env.horizon},
              "adversary_slots": list(slots)}
    if attacker is not None:
        from decentral.runner.fingerprint import hash_tree

        config["attacker"] = {"name": attacker.name, "params": hash_tree(attacker.params)}
    return Algorithm(init=init, step=step, name=f"rpbcac.{protocol.version}.{var.name}",
                     version="1", config=config, check_params=check_params,
                     divergence_hint="reduce params.critic_lr or params.actor_lr")


def _record_metrics(state, ctx):
    """Runner record: the update's per-episode metrics."""
    del state
    return ctx.info


# ------------------------------------------------------------------------------------------
# running grids
# ------------------------------------------------------------------------------------------


class ExperimentResult(NamedTuple):
    """What :func:`run_grid` / :func:`run_experiment` return (numpy arrays).

    Attributes:
        coop_return, adversary_return, estimate: ``[..., S, episodes]`` per-episode
            :class:`EpisodeMetrics` (v2: both phases concatenated, ``phases * episodes``);
            adversary return is NaN where the scenario has no adversary.
        config: the grid axes and settings (JSON-like).
        seconds: wall time of the call.
    """

    coop_return: np.ndarray
    adversary_return: np.ndarray
    estimate: np.ndarray
    config: dict
    seconds: float


def _agent_types(scenario, num_agents: int, adversary: int) -> np.ndarray:
    if isinstance(scenario, str):
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}; use one of "
                             f"{', '.join(SCENARIOS)} or a per-agent list of type names.")
        types = np.zeros(num_agents, np.int32)
        if scenario != "cooperative":
            types[check_index(adversary, "adversary", num_agents,
                              hint="adversary is the adversarial agent's index.")] = \
                AGENT_TYPES[scenario]
        return types
    arr = list(scenario)
    if len(arr) != num_agents:
        raise ValueError(f"a per-agent scenario needs {num_agents} entries; got {len(arr)}.")
    out = []
    for a in arr:
        if isinstance(a, str):
            if a not in AGENT_TYPES:
                raise ValueError(f"unknown agent type {a!r}; use one of {sorted(AGENT_TYPES)}.")
            out.append(AGENT_TYPES[a])
        elif isinstance(a, numbers.Integral) and not isinstance(a, bool | np.bool_) \
                and int(a) in AGENT_TYPES.values():
            out.append(int(a))
        else:
            raise ValueError(f"unknown agent type code {a!r} in scenario: use a type name of "
                             f"{sorted(AGENT_TYPES)} or its integer code "
                             f"{sorted(AGENT_TYPES.values())} (not a bool or a float).")
    if all(t != COOPERATIVE for t in out):
        raise ValueError("at least one agent must be cooperative.")
    return np.asarray(out, np.int32)


def _targets(version: str, seed: int, num_agents: int) -> np.ndarray:
    try:
        return paper_targets(version, seed)
    except ValueError:
        env = grid_world(version, num_agents=num_agents)
        from .gridworld import random_targets
        return np.asarray(random_targets(jax.random.key(int(seed)), env))


def run_grid(scenarios: Sequence, Hs: Sequence[int], *, oracles: Sequence[bool] = (False,),
             **kwargs) -> ExperimentResult:
    """Every combination of ``scenarios x Hs x oracles`` (and seeds) as one compiled program.

    Arguments as :func:`run_runs` (``scenarios``: names of :data:`SCENARIOS` or per-agent type
    lists; ``Hs``: ints >= 0, 0 the plain-mean baseline; ``oracles``: which oracle flags).

    Returns:
        :class:`ExperimentResult` with arrays ``[n_scenarios, n_H, n_oracles, S, phases *
        episodes]``.
    """
    specs = list(itertools.product(list(scenarios), list(Hs), [bool(o) for o in oracles]))
    res = run_runs(specs, **kwargs)
    shape = (len(scenarios), len(Hs), len(oracles)) + res.coop_return.shape[1:]
    cfg = dict(res.config)
    cfg.update(scenarios=cfg["scenarios"][::len(Hs) * len(oracles)],
               H=[_check_H(h) for h in Hs], oracle=[bool(o) for o in oracles], grid=True)
    return ExperimentResult(res.coop_return.reshape(shape), res.adversary_return.reshape(shape),
                            res.estimate.reshape(shape), cfg, res.seconds)


#: The :class:`LearnParams` fields that differ between the runs of a grid: :func:`run_runs`
#: stacks them along a leading run axis and sweeps them (``run(..., sweep=RUN_FIELDS)``).
RUN_FIELDS: tuple[str, ...] = ("H", "agent_type", "oracle", "targets", "seed", "phase", "warm",
                               "start_nets")


def _one_run(protocol: LearningProtocol, types: np.ndarray, H: int, oracle: bool, seed: int,
             in_nodes: np.ndarray, rates: tuple) -> LearnParams:
    """One run's params from checked values (fresh networks, phase 0)."""
    A = types.shape[0]
    f = np.dtype(jnp.result_type(float))
    env = grid_world(protocol.version, num_agents=A)
    tmpl = jax.eval_shape(lambda: init_nets(jax.random.key(0), A, env.obs_dim,
                                            env.tr_input_dim, env.num_actions, protocol.width,
                                            protocol.shared_templates))
    critic_lr, actor_lr, gamma, epsilon = rates
    return LearnParams(
        H=np.int32(H), agent_type=types, oracle=np.bool_(oracle),
        targets=_targets(protocol.version, seed, A), seed=np.uint32(seed), phase=np.int32(0),
        warm=np.bool_(False),
        start_nets=jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), tmpl),
        in_nodes=in_nodes, critic_lr=np.asarray(critic_lr, f), actor_lr=np.asarray(actor_lr, f),
        gamma=np.asarray(gamma, f), epsilon=np.asarray(epsilon, f))


def stack_runs(runs: Sequence[LearnParams]) -> LearnParams:
    """Several runs' :class:`LearnParams` as one, :data:`RUN_FIELDS` stacked along a leading
    axis (the other fields, shared by every run, taken from the first; they must be equal)."""
    runs = list(runs)
    if not runs:
        raise ValueError("stack_runs needs at least one LearnParams.")
    for name in LearnParams._fields:
        if name in RUN_FIELDS:
            continue
        first = np.asarray(getattr(runs[0], name))
        if any(not np.array_equal(first, np.asarray(getattr(r, name))) for r in runs[1:]):
            raise ValueError(f"the runs differ in {name}, which every run of one call shares; "
                             f"only {', '.join(RUN_FIELDS)} may differ.")
    stacked = {name: jax.tree_util.tree_map(lambda *v: np.stack(v),
                                            *[getattr(r, name) for r in runs])
               for name in RUN_FIELDS}
    return runs[0]._replace(**stacked)


def learner_params(scenario="cooperative", H: int = 1, seed: int | None = None, *,
                   code_version: str | LearningProtocol | None = None, oracle: bool = False,
                   graphs: Any = None, adversary: int = ADVERSARY,
                   critic_lr: float = HYPERPARAMS["critic_lr"],
                   actor_lr: float = HYPERPARAMS["actor_lr"], gamma: float = HYPERPARAMS["gamma"],
                   epsilon: float = HYPERPARAMS["epsilon"]) -> LearnParams:
    """The params of one run of :func:`learner` (fresh networks, first phase): what
    :func:`run_runs` builds for each ``(scenario, H, oracle)`` and seed, for calling
    :func:`~decentral.runner.run` yourself.

    Args:
        scenario, H, oracle, graphs, adversary, critic_lr, actor_lr, gamma, epsilon,
            code_version: as :func:`run_runs`.
        seed: one experiment seed (default: the first of :func:`default_seeds`); the authors'
            seeds use their tabulated targets.

    Returns:
        An unbatched :class:`LearnParams`; :func:`stack_runs` stacks several for one call of
        ``run(learner(...), stacked, [0], num_updates, sweep=list(RUN_FIELDS))``, which is
        what :func:`run_runs` does.

    Example:
        >>> p = learner_params("greedy", 1, 50)
        >>> p.agent_type.tolist(), int(p.seed), p.in_nodes.shape
        ([0, 0, 0, 0, 1], 50, (1, 5, 4))
    """
    from decentral.runner import validate_seeds

    protocol = get_protocol(_version_alias(code_version, None))
    graph = _graphs_alias(graphs, None)
    A = _num_agents_of(graph)
    in_nodes = resolve_graph(graph, A)
    seed = default_seeds(protocol.version)[0] if seed is None else seed
    seed = int(validate_seeds([seed])[0])
    rates = (_check_positive_finite(critic_lr, "critic_lr"),
             _check_positive_finite(actor_lr, "actor_lr"), _check_gamma(gamma),
             _check_epsilon(epsilon))
    return _one_run(protocol, _agent_types(scenario, A, adversary), _check_H(H), bool(oracle),
                    seed, in_nodes, rates)


def run_runs(specs: Sequence[tuple], *, code_version: str | LearningProtocol | None = None,
             variant: str | Variant = "corrected", seeds: Sequence[int] | None = None,
             episodes: int | None = None, phases: int | None = None, graphs: Any = None,
             adversary: int = ADVERSARY, critic_lr: float = HYPERPARAMS["critic_lr"],
             actor_lr: float = HYPERPARAMS["actor_lr"], gamma: float = HYPERPARAMS["gamma"],
             epsilon: float = HYPERPARAMS["epsilon"], collision: str | None = None,
             checkpoint_dir: str | None = None, progress: bool | None = None,
             chunk_size: int | None = None, attacker: Attacker | None = None,
             version: str | LearningProtocol | None = None, graph: Any = None
             ) -> ExperimentResult:
    """A list of runs ``(scenario, H, oracle)``, each on every seed, as one compiled program.

    Args:
        specs: ``(scenario, H, oracle)`` triples; scenario a name of :data:`SCENARIOS` or a
            per-agent list of type names / codes; H an int >= 0 (0: plain mean); oracle bool.
        code_version: ``"v1"`` (default) or ``"v2"``, the authors' code version (or a
            :class:`~decentral.resilient_ac.mlp.LearningProtocol`); ``version=`` is its older
            name (give one of the two).
        variant: ``"corrected"`` (default), ``"faithful"``, a label or a Variant.
        seeds: ints; the authors' seeds (:func:`default_seeds`, the default) use their
            tabulated targets, other seeds draw targets from ``jax.random.key(seed)``.
        episodes: episodes per phase (default: the paper's, 10 000 / 4000); a multiple of the
            protocol's episodes per update (one runner step is one update: module docstring).
        phases: default 1 (v1) / 2 (v2); each later phase warm-starts from the previous one's
            networks.
        graphs: ``"paper"`` (default), ``"k5"``, an in_nodes table / stack, or anything
            :func:`decentral.graphs.as_sequence` accepts (:func:`resolve_graph`); ``graph=``
            is its older name (give one of the two).
        adversary: the adversary's index for named scenarios.
        critic_lr, actor_lr, gamma, epsilon: hyperparameters (:data:`HYPERPARAMS`).
        collision: the v2 occupancy rule (default: the variant's).
        checkpoint_dir: resume / store the run here (one sub-folder per phase).
        progress: the runner's progress bar.
        chunk_size: updates per chunk (default: the runner's).
        attacker: what the adversarial agents send (default: the experiments' greedy /
            faulty / malicious agents as their scenario names them; see :func:`learner`).

    Returns:
        :class:`ExperimentResult` with arrays ``[R, S, phases * episodes]``; its ``config``
        keeps the keys ``"version"`` (the code version) and ``"graph"``.

    Raises:
        ValueError: unknown version / variant / scenario / graph, H < 0, non-finite or
            non-positive rates, gamma outside [0, 1), epsilon outside [0, 1], an episode count
            that is not a positive multiple of the episodes per update (the rates, gamma,
            epsilon and H by the same checks as the learner's ``check_params``).
    """
    from decentral.runner import run

    protocol = get_protocol(_version_alias(code_version, version))
    graph = _graphs_alias(graphs, graph)
    var = get_variant(protocol.version, variant)
    critic_lr = _check_positive_finite(critic_lr, "critic_lr")
    actor_lr = _check_positive_finite(actor_lr, "actor_lr")
    gamma = _check_gamma(gamma)
    epsilon = _check_epsilon(epsilon)
    A = _num_agents_of(graph)
    in_nodes = resolve_graph(graph, A)
    from decentral.runner import validate_seeds

    # the experiment seeds are swept params (the runner runs one seed of the whole grid),
    # checked by the runner's own rule: distinct integers in [0, 2**32)
    seeds = [int(s) for s in validate_seeds(default_seeds(protocol.version) if seeds is None
                                            else seeds)]
    n_up_ep = protocol.episodes_per_update
    episodes = _PAPER_EPISODES[protocol.version] if episodes is None else episodes
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) \
            or episodes < n_up_ep or episodes % n_up_ep:
        raise ValueError(f"episodes must be a positive multiple of {n_up_ep} (episodes per "
                         f"update of {protocol.version}); got {episodes!r}.")
    phases = _PAPER_PHASES[protocol.version] if phases is None else check_int(phases, "phases")
    if not specs:
        raise ValueError("specs is empty.")
    specs = [(s, _check_H(h), bool(o)) for s, h, o in specs]
    types = [_agent_types(s, A, adversary) for s, _, _ in specs]
    slots = tuple(sorted({int(i) for t in types for i in np.flatnonzero(t != COOPERATIVE)}))
    alg = learner(protocol, var, collision=collision, num_agents=A,
                  adversary_slots=slots, attacker=attacker)

    combos = list(itertools.product(range(len(specs)), range(len(seeds))))
    P = len(combos)
    rates = (critic_lr, actor_lr, gamma, epsilon)
    params = stack_runs([_one_run(protocol, types[r], specs[r][1], specs[r][2], seeds[k],
                                  in_nodes, rates) for r, k in combos])
    swept = list(RUN_FIELDS)
    n_updates = episodes // n_up_ep
    start = time.perf_counter()
    parts = []
    res = None
    for ph in range(phases):
        if ph:
            params = params._replace(phase=np.full(P, ph, np.int32), warm=np.ones(P, bool),
                                     start_nets=jax.tree_util.tree_map(
                                         lambda v: np.asarray(v)[:, 0], res.final_state.nets))
        ck = None if checkpoint_dir is None else f"{checkpoint_dir}/phase{ph + 1}"
        res = run(alg, params, [0], n_updates, record_fn=_record_metrics, record_context=True,
                  sweep=swept, checkpoint_dir=ck, progress=progress, chunk_size=chunk_size)
        parts.append(jax.tree_util.tree_map(lambda v: np.asarray(v)[:, 0].reshape(P, -1),
                                            res.records))
    seconds = time.perf_counter() - start
    shape = (len(specs), len(seeds), phases * episodes)
    out = [np.concatenate([getattr(p, name) for p in parts], axis=1).reshape(shape)
           for name in EpisodeMetrics._fields]
    no_adv = np.asarray([np.all(t == COOPERATIVE) for t in types])
    out[1] = np.where(no_adv[:, None, None], np.nan, out[1])
    config = {"version": protocol.version, "variant": var.name,
              "scenarios": [s if isinstance(s, str) else list(map(int, t))
                            for (s, _, _), t in zip(specs, types, strict=True)],
              "H": [h for _, h, _ in specs], "oracle": [o for _, _, o in specs],
              "seeds": seeds, "episodes_per_phase": int(episodes),
              "phases": phases, "graph": graph if isinstance(graph, str) else
              in_nodes.tolist(), "adversary_slots": list(slots),
              "hyperparams": {"critic_lr": critic_lr, "actor_lr": actor_lr,
                              "gamma": float(gamma), "epsilon": float(epsilon)},
              "collision": collision or var.collision, "grid": False}
    if attacker is not None:
        config["attacker"] = attacker.name
    return ExperimentResult(*out, config=config, seconds=seconds)


def run_experiment(scenario, H: int, *, code_version: str | None = None, variant="corrected",
                   seeds: Sequence[int] | None = None, episodes: int | None = None,
                   graphs: Any = None, oracle: bool = False, version: str | None = None,
                   graph: Any = None, **kwargs) -> ExperimentResult:
    """One scenario at one H: arrays ``[S, phases * episodes]``.

    A thin wrapper of :func:`run_runs` (see there for every argument; ``code_version`` and
    ``graphs`` have their older names ``version=`` and ``graph=``). ``H = 0`` is the
    non-resilient plain-mean baseline (Zhang et al. 2018 in the batch form).

    Example: ``run_experiment("faulty", 1, seeds=(50,), episodes=100)`` (about 12 s on two
    CPU cores) returns ``coop_return`` of shape ``(1, 100)``; the module docstring runs one.
    """
    res = run_runs([(scenario, H, oracle)], code_version=_version_alias(code_version, version),
                   variant=variant, seeds=seeds, episodes=episodes,
                   graphs=_graphs_alias(graphs, graph), **kwargs)
    return res._replace(coop_return=res.coop_return[0],
                        adversary_return=res.adversary_return[0], estimate=res.estimate[0])


# ------------------------------------------------------------------------------------------
# metrics and figure arrays
# ------------------------------------------------------------------------------------------


def window_mean(x, start: int | None = None, stop: int | None = None) -> np.ndarray:
    """Mean over episodes ``[start:stop]`` (last axis), then over seeds (second-to-last):
    the per-seed window means averaged, as the logged tables."""
    x = np.asarray(x, np.float64)
    return x[..., start:stop].mean(axis=-1).mean(axis=-1)


def rolling_mean(x, window: int = 200) -> np.ndarray:
    """Trailing rolling mean along the last axis with ``min_periods = 1`` (pandas'
    ``rolling(window, min_periods=1).mean()``)."""
    x = np.asarray(x, np.float64)
    c = np.cumsum(x, axis=-1)
    c = np.concatenate([np.zeros(x.shape[:-1] + (1,)), c], axis=-1)
    n = x.shape[-1]
    hi = np.arange(1, n + 1)
    lo = np.maximum(0, hi - window)
    return (c[..., hi] - c[..., lo]) / (hi - lo)


def _flat(res: ExperimentResult):
    """``(specs, coop, adversary, estimate)`` with arrays ``[R, S, E]`` for a grid or a list
    of runs."""
    cfg = res.config
    if cfg.get("grid"):
        specs = list(itertools.product([str(x) for x in cfg["scenarios"]], cfg["H"],
                                       cfg["oracle"]))
    else:
        specs = [(str(a), int(b), bool(c)) for a, b, c in zip(cfg["scenarios"], cfg["H"],
                                                               cfg["oracle"], strict=True)]
    S, E = res.coop_return.shape[-2:]
    arrs = [np.asarray(x).reshape(len(specs), S, E)
            for x in (res.coop_return, res.adversary_return, res.estimate)]
    return specs, *arrs


def summary_levels(res: ExperimentResult, first: int, last: int) -> dict:
    """Per run ``(scenario, H, oracle)``: coop / adversary / Est means over the first
    ``first`` episodes of the last phase and over the last ``last`` episodes (per seed, then
    averaged over seeds), and the same window means per seed under ``"per_seed"``
    (quantity -> array ``[S]``, seeds in ``res.config["seeds"]`` order, so runs of one result
    pair up seed by seed). Windows longer than the run are clipped to it."""
    cfg = res.config
    E = cfg["episodes_per_phase"]
    base = (cfg["phases"] - 1) * E
    first, last = min(first, E), min(last, E)
    specs, coop, adv, est = _flat(res)
    windows = {"coop_first": (coop, base, base + first), "coop_last": (coop, -last, None),
               "adversary_first": (adv, base, base + first),
               "adversary_last": (adv, -last, None), "est_last": (est, -last, None)}
    out = {}
    for r, key in enumerate(specs):
        per_seed = {q: np.asarray(x[r][:, a:b], np.float64).mean(axis=-1)
                    for q, (x, a, b) in windows.items()}
        out[key] = {**{q: float(v.mean()) for q, v in per_seed.items()}, "per_seed": per_seed}
    return out


def v1_panel_arrays(res: ExperimentResult, oracle: bool = False) -> dict:
    """The eight v1 panels: ``(scenario, H) -> (episode [E], coop mean [E], adversary mean
    [E])``, means over seeds, unsmoothed (adversary NaN for the cooperative scenario)."""
    specs, coop, adv, _ = _flat(res)
    out = {}
    for r, (s, h, o) in enumerate(specs):
        if o == oracle:
            out[(s, h)] = (np.arange(coop.shape[-1]), coop[r].mean(axis=0), adv[r].mean(axis=0))
    return out


def v2_panel_arrays(res: ExperimentResult, drop: int = 500, window: int = 200) -> dict:
    """The v2 panels: per (scenario, H), "Estimated" (Est), "True" (coop return) and, when
    the result holds the matching oracle run, "True (global)" (the oracle's coop return). Per
    phase the first ``drop`` episodes are dropped, the phases concatenated, seeds averaged,
    then a rolling mean of ``window`` (min_periods 1), as the authors' plot script.

    Returns:
        ``(scenario, H) -> {"episode", "estimated", "true", "true_global" (or None)}``.
    """
    cfg = res.config
    E, phases = cfg["episodes_per_phase"], cfg["phases"]
    drop = min(drop, E - 1)
    keep = np.concatenate([np.arange(p * E + drop, (p + 1) * E) for p in range(phases)])
    specs, coop, _, est = _flat(res)
    index = {spec: r for r, spec in enumerate(specs)}

    def curve(x, r):
        return rolling_mean(x[r][..., keep].mean(axis=0), window)

    out = {}
    for (s, h, o), r in index.items():
        if o:
            continue
        g = index.get((s, h, True))
        out[(s, h)] = {"episode": np.arange(keep.size), "estimated": curve(est, r),
                       "true": curve(coop, r),
                       "true_global": None if g is None else curve(coop, g)}
    return out
