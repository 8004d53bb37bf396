"""The local rules of the linear actor-critic, unbatched (rlax style; vmap them over agents):
the critic's TD(0) step, the team-reward regression step and the actor's policy-gradient step
(equations in :mod:`decentral.resilient_ac.linear`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["local_critic_step", "local_reward_step", "policy_score", "linear_actor_step",
           "actor_step"]


def local_critic_step(v, phi, phi_next, reward, discount, step, average_reward=None):
    """``(v~, delta)``: ``delta = r + gamma phi'^T v - phi^T v`` (average reward:
    ``r - mu + phi'^T v - phi^T v``) and ``v~ = v + step delta phi``."""
    if average_reward is None:
        delta = reward + discount * jnp.dot(phi_next, v) - jnp.dot(phi, v)
    else:
        delta = reward - average_reward + jnp.dot(phi_next, v) - jnp.dot(phi, v)
    return v + step * delta * phi, delta


def local_reward_step(lam, f, reward, step):
    """``lambda~ = lambda + step (r - f^T lambda) f`` (the local team-reward step)."""
    return lam + step * (reward - jnp.dot(f, lam)) * f


def policy_score(theta, policy_feature, action):
    """``psi = grad_theta log pi(action | s)`` for logits ``theta [M, d_p] @ phi_pi(s)``:
    ``(e_action - pi(. | s)) phi_pi(s)^T`` ``[M, d_p]``."""
    probs = jax.nn.softmax(theta @ policy_feature)
    onehot = jax.nn.one_hot(action, theta.shape[0], dtype=probs.dtype)
    return (onehot - probs)[:, None] * policy_feature[None, :]


def linear_actor_step(theta, policy_feature, action, team_td_error, step):
    """``theta + step deltã psi`` (one actor step of the linear family; the MLP learners'
    is :func:`~decentral.resilient_ac.learning.mlp.mlp_actor_step`)."""
    return theta + step * team_td_error * policy_score(theta, policy_feature, action)


#: The older name of :func:`linear_actor_step` (kept for user code; the step-size field
#: ``LinearACParams.actor_step`` is another thing: the actor's step size ``beta_theta``).
actor_step = linear_actor_step
