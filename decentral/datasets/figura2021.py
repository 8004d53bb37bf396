"""The experiment graph and our Example 1 reconstruction of Figura, Lin, Liu, Gupta, "Resilient
Consensus-based Multi-agent Reinforcement Learning with Function Approximation",
arXiv:2111.06776.

Provenance.

* :data:`EXPERIMENT_IN_NODES`: the five-agent communication graph of the paper's grid-world
  experiments, as the authors' code builds it (``in_nodes`` tables: agent ``i`` hears itself
  and the three agents ``i + 1, i + 2, i + 3 (mod 5)``). It is 2-robust but not 3-robust.
* :data:`LOGGED_SEEDS`, :data:`LOGGED_TARGETS`, :data:`LOGGED_EPISODES`,
  :data:`LOGGED_PHASES`: the runs the authors logged with their grid-world code, per code
  version (``"v1"``, ``"v2"``): the seeds, the target cell of each of the five agents for each
  seed, the episodes per training phase and the number of phases (v2 trains twice, the second
  phase starting from the first's networks).
* :data:`EXAMPLE1_FEATURES`, :data:`EXAMPLE1_REWARDS`, :func:`example1_mdp`,
  :func:`example1_attacker`: **our reconstruction** of the paper's Example 1 (Figs. 3-4). The
  paper's rewards, features and adversary were not in the material we had; the values here were
  chosen so that the attack's effect is visible (the reasons are in the docs page on the linear
  actor-critic).

Example:
    >>> experiment_graph().sum(axis=1).tolist()          # every agent hears 3 others + itself
    [4, 4, 4, 4, 4]
    >>> example1_mdp().rewards.shape                     # [N, S, A]
    (5, 2, 1)
"""

from __future__ import annotations

import numpy as np

__all__ = ["EXPERIMENT_IN_NODES", "experiment_graph", "LOGGED_SEEDS", "LOGGED_TARGETS",
           "LOGGED_EPISODES", "LOGGED_PHASES", "EXAMPLE1_FEATURES", "EXAMPLE1_REWARDS",
           "example1_mdp", "example1_attacker"]

#: The experiment graph as an in-node table ``[5, 4]`` (own index first, then the agents heard).
EXPERIMENT_IN_NODES = np.asarray([[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 0], [3, 4, 0, 1],
                                  [4, 0, 1, 2]], np.int32)

#: Seeds of the authors' logged grid-world runs, per code version.
LOGGED_SEEDS: dict[str, tuple[int, ...]] = {
    "v1": (50, 100, 200, 500, 1000),
    "v2": (100, 200, 300),
}

#: Target cells ``(row, col)`` of agents 0..4 in the authors' logged runs, by
#: ``(code version, seed)``.
LOGGED_TARGETS: dict[tuple[str, int], tuple[tuple[int, int], ...]] = {
    ("v1", 50): ((0, 0), (3, 5), (1, 4), (5, 5), (5, 2)),
    ("v1", 100): ((0, 0), (3, 0), (2, 4), (2, 5), (2, 2)),
    ("v1", 200): ((2, 1), (0, 4), (2, 4), (1, 3), (1, 1)),
    ("v1", 500): ((2, 1), (1, 5), (0, 5), (5, 1), (1, 5)),
    ("v1", 1000): ((3, 0), (3, 4), (1, 5), (0, 1), (5, 0)),
    ("v2", 100): ((0, 0), (3, 0), (2, 4), (2, 2), (2, 2)),
    ("v2", 200): ((2, 1), (0, 4), (2, 4), (1, 3), (1, 1)),
    ("v2", 300): ((1, 1), (2, 2), (1, 3), (1, 1), (4, 2)),
}

#: Episodes per training phase of the authors' logged runs, per code version.
LOGGED_EPISODES: dict[str, int] = {"v1": 10_000, "v2": 4_000}

#: Training phases of the authors' logged runs (v2: a second phase warm-started from the
#: first's networks).
LOGGED_PHASES: dict[str, int] = {"v1": 1, "v2": 2}

#: Example 1 reconstruction: team-reward features ``f(s)`` of the two states (mixed signs).
EXAMPLE1_FEATURES = np.array([[1.0, 0.5], [0.3, -1.0]])

#: Example 1 reconstruction: rewards ``r^j(s)`` of the four cooperative agents (rows 0-3:
#: heterogeneous in state 0, nearly equal in state 1) and of the Byzantine agent 4 (never
#: used by the cooperative agents).
EXAMPLE1_REWARDS = np.array([[0.0, 0.40], [0.3, 0.45], [0.7, 0.50], [1.0, 0.55], [1.0, 1.0]])


def experiment_graph() -> np.ndarray:
    """The experiment graph as a boolean adjacency ``[5, 5]``, self-loops included:
    ``adj[i, j]`` is True iff agent ``i`` hears agent ``j`` (the library's orientation)."""
    adj = np.zeros((5, 5), bool)
    adj[np.arange(5)[:, None], EXPERIMENT_IN_NODES] = True
    return adj


def example1_mdp(features=None, rewards=None):
    """Our reconstruction of the paper's Example 1 as a
    :class:`~decentral.resilient_ac.linear.FiniteMDP`: states ``{0, 1}``, 5 agents with one
    action each, ``P(s' | s) = 1/2``, team-reward features :data:`EXAMPLE1_FEATURES`
    (``d = 2``, mixed signs, not one-hot), heterogeneous rewards :data:`EXAMPLE1_REWARDS`
    (agent 4 is the Byzantine one). The critic features are the same as the team-reward ones.

    Args:
        features: ``[S, d]`` features in place of :data:`EXAMPLE1_FEATURES`.
        rewards: ``[N, S]`` rewards in place of :data:`EXAMPLE1_REWARDS`.

    Raises:
        ValueError: rewards whose shape does not match the features, or an MDP that
            :func:`~decentral.resilient_ac.linear.validate_mdp` refuses.
    """
    # imported when called: loading a dataset does not import the algorithm families
    from decentral.resilient_ac.linear.mdp import FiniteMDP, validate_mdp

    f = EXAMPLE1_FEATURES if features is None else np.asarray(features, np.float64)
    r = EXAMPLE1_REWARDS if rewards is None else np.asarray(rewards, np.float64)
    S = f.shape[0]
    if r.ndim != 2 or r.shape[1] != S:
        raise ValueError(f"rewards must be [N, S = {S}]; got {r.shape}.")
    mdp = FiniteMDP(np.full((S, 1, S), 1.0 / S), r[:, :, None].copy(), f.copy(),
                    f[:, None, :].copy(), np.eye(S), np.full(S, 1.0 / S))
    return validate_mdp(mdp)


def example1_attacker(direction: str = "mean_feature", push: float = 1.0, features=None):
    """The Byzantine agent of our Example 1 reconstruction, a
    :func:`~decentral.resilient_ac.linear.feature_extreme` attacker: it pushes the team-reward
    estimate up (``push = +1``, the paper's "overestimation") along the sign of the mean
    feature ``(f(0) + f(1)) / 2`` (``direction="mean_feature"``) or of the current feature
    (``"current_feature"``, which at consensus only repeats the message of the cooperative
    agent with the largest reward).

    Args:
        direction: ``"mean_feature"`` or ``"current_feature"``.
        push: the sign and size of the push on the team-reward parameters.
        features: ``[S, d]`` features in place of :data:`EXAMPLE1_FEATURES`.

    Raises:
        ValueError: an unknown ``direction``.
    """
    # imported when called, as in example1_mdp
    from decentral.resilient_ac.linear.adversaries import feature_extreme

    f = EXAMPLE1_FEATURES if features is None else np.asarray(features, np.float64)
    if direction == "mean_feature":
        return feature_extreme(1.0, push, critic_target=f.mean(0),
                               team_reward_target=f.mean(0))
    if direction == "current_feature":
        return feature_extreme(1.0, push)
    raise ValueError(f"direction must be 'mean_feature' or 'current_feature'; got "
                     f"{direction!r}.")
