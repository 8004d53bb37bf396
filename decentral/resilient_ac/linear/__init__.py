"""Resilient consensus actor-critic with linear function approximation (RPBCAC, linear case).

Figura, Lin, Liu, Gupta, "Resilient Consensus-based Multi-agent Reinforcement Learning with
Function Approximation", arXiv:2111.06776, built on the networked actor-critic of Zhang, Yang,
Liu, Zhang, Başar, "Fully Decentralized Multi-Agent Reinforcement Learning with Networked
Agents", ICML 2018 (arXiv:1802.08757), Algorithm 2.

**The linear equations below are OUR RECONSTRUCTION** from the paper's description (abstract,
figure captions) and the authors' code: the body text of the paper, with its exact equations,
was not available. The reconstruction and its derivations are in ``docs/resilient_linear.md``.

Setting. ``N`` agents see the global state ``s`` of a finite MDP and the joint action
``a = (a^1, ..., a^N)``; agent ``i`` receives a private reward ``r^i(s, a)``. The team objective
is the discounted return of the cooperative agents' average reward. Every agent keeps a linear
critic ``V(s; v) = phi(s)^T v``, a linear team-reward model ``rbar(s, a; lambda) = f(s, a)^T
lambda`` and a softmax policy over its own actions with logits ``theta^i phi_pi(s)``.

One iteration ``t`` (0-based), in this order:

1. every agent samples ``a^i ~ pi^i(. | s_t; theta^i)``; the MDP moves to ``s_{t+1}`` and pays
   ``r^i_{t+1} = r^i(s_t, a_t)``;
2. local step of every agent (fast step ``beta_v = beta_{v,t}``)::

       delta^i   = r^i + gamma phi(s_{t+1})^T v^i - phi(s_t)^T v^i
       v~^i      = v^i + beta_v delta^i phi(s_t)
       lambda~^i = lambda^i + beta_v (r^i - f_t^T lambda^i) f_t          f_t = f(s_t, a_t)

   (average-reward criterion: ``delta^i = r^i - mu^i + phi(s_{t+1})^T v^i - phi(s_t)^T v^i``
   and ``mu~^i = (1 - beta_v) mu^i + beta_v r^i``);
3. every agent sends ``v~^i, lambda~^i`` (and ``mu~^i``) to its out-neighbours; a Byzantine
   agent's messages come from an :class:`~decentral.resilient_ac.Attacker`, per receiver;
4. consensus of every cooperative receiver ``i`` over the received values (own at ``k = 0``):

   * ``consensus="projection"`` (the paper's resilient projection-based consensus): each
     received parameter is projected onto the current feature,
     ``e^{ij} = (v~^j - v^i)^T phi_t / (beta_v ||phi_t||^2)``, the scalars are aggregated with
     W-MSR, ``ebar^i = WMSR_H({e^{ij}})``, and ``v^i <- v^i + beta_v ebar^i phi_t``; the same for
     ``lambda`` with ``f_t`` (:func:`~decentral.resilient_ac.projection_step`). The new
     prediction is ``phi_t^T v^i_{t+1} = WMSR_H({phi_t^T v~^j})``;
   * ``consensus="trimmed"`` (the baseline "method of trimmed means"): every coordinate of the
     received parameters is aggregated on its own (element-wise trimmed mean by default);
   * ``consensus="mean"`` (Zhang et al. step 7, not resilient, ``H = 0``):
     ``v^i <- sum_j c(i, j) v~^j`` with the graph's row-stochastic weights;

   ``mu`` (average reward only) is a scalar and is aggregated directly;
5. actor (slow step ``beta_theta = beta_{theta,t}``) of every cooperative agent::

       deltã^i  = f_t^T lambda^i + gamma phi(s_{t+1})^T v^i - phi(s_t)^T v^i
       theta^i <- theta^i + beta_theta deltã^i psi^i,   psi^i = grad log pi^i(a^i | s_t)

   with the post-consensus iterates ``v^i_{t+1}, lambda^i_{t+1}`` (``actor_iterate="post"``,
   default) or the local-step ones ``v~^i, lambda~^i`` (``"pre"``). Byzantine agents act with
   their initial policy forever (a stationary policy, as the paper's actor result assumes).

Step sizes are data (:class:`LinearACParams`): ``beta_{v,t} = (t + 1)^-0.65`` and
``beta_{theta,t} = (t + 1)^-0.85`` by default, evaluated at the 0-based update index ``t``
(the first update uses ``t = 0``, i.e. steps of 1). ``actor=False`` keeps every policy at its
initial value (the fixed-policy mode of the critic / team-reward theorem).

The MDP is data too (:class:`FiniteMDP`, a NamedTuple of arrays inside the params), so one
compiled algorithm serves any MDP of the same sizes; :func:`random_mdp` draws one and
:func:`exact_references` computes what the critic and the team-reward model converge to.

Example:
    >>> import jax, decentral.graphs as g
    >>> from decentral.runner import run
    >>> mdp = random_mdp(jax.random.key(0), num_states=4, num_actions_per_agent=2,
    ...                  num_agents=5, feature_dim=3)
    >>> alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
    >>> res = run(alg, linear_params(mdp), seeds=[0, 1], num_steps=200)
    >>> res.final_state.critic.shape                       # [seeds, agents, d]
    (2, 5, 3)
"""

from decentral.datasets.figura2021 import (
    EXAMPLE1_FEATURES,
    EXAMPLE1_REWARDS,
    example1_attacker,
    example1_mdp,
)

from .adversaries import (
    ADVERSARIES,
    LinearAttackContext,
    faulty_adversary,
    feature_extreme,
    greedy_adversary,
    malicious_adversary,
)
from .algorithm import (
    CONSENSUS_VARIANTS,
    LinearACInfo,
    LinearACParams,
    LinearACState,
    estimates_of,
    linear_actor_critic,
    linear_params,
    parameters_of,
    rpbcac,
)
from .mdp import (
    FiniteMDP,
    LinearReferences,
    exact_references,
    joint_policy,
    num_actions_per_agent,
    random_mdp,
    validate_mdp,
)
from .rules import (
    actor_step,
    linear_actor_step,
    local_critic_step,
    local_reward_step,
    policy_score,
)

__all__ = [
    "FiniteMDP", "random_mdp", "validate_mdp", "num_actions_per_agent", "joint_policy",
    "LinearReferences", "exact_references",
    "LinearAttackContext", "feature_extreme", "greedy_adversary", "faulty_adversary",
    "malicious_adversary", "ADVERSARIES",
    "LinearACParams", "LinearACState", "LinearACInfo", "linear_params",
    "linear_actor_critic", "rpbcac", "CONSENSUS_VARIANTS",
    "local_critic_step", "local_reward_step", "policy_score", "linear_actor_step", "actor_step",
    "estimates_of", "parameters_of",
    "example1_mdp", "example1_attacker", "EXAMPLE1_FEATURES", "EXAMPLE1_REWARDS",
]


def __getattr__(name: str):
    if name == "example1_figure_data":
        raise AttributeError("decentral.resilient_ac.linear.example1_figure_data moved out of the "
                             "library to proofs_checks.resilient_ac.setups.example1_figure_data "
                             "(the claim checks' and figures' setups).")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
