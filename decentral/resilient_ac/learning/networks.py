"""The networks of the grid-world learners (Figura, Lin, Liu, Gupta, arXiv:2111.06776): every
agent owns three small MLPs (:class:`MLP`), an actor (observation -> softmax over the actions), a
critic ``V(s)`` (observation -> scalar) and a team-reward model ``TR(s, a)`` (team-reward input ->
scalar). All have two hidden layers with LeakyReLU(0.1), Glorot-uniform kernels and zero biases
(Keras defaults); width 30 in the v1 protocol and 20 in v2. Parameters of all agents are stacked
along a leading agent axis ``[A, ...]`` (:class:`Nets`). The last hidden layer is the feature map
and the output layer ``w = [kernel; bias]`` the linear parameter of the resilient step
(:mod:`decentral.resilient_ac.learning.mlp`).

Example:
    >>> import jax, jax.numpy as jnp
    >>> p = init_mlp(jax.random.key(0), 10, 4, 1)
    >>> p.w1.shape, p.w3.shape, features(p, jnp.zeros((3, 10))).shape
    ((10, 4), (4, 1), (3, 4))
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

__all__ = ["LEAKY_SLOPE", "KERAS_ADAM_EPS", "MLP", "Nets", "Batch", "glorot_uniform",
           "init_mlp", "features", "apply", "value", "output_layer", "with_output_layer",
           "hidden_layers", "with_hidden_layers", "init_nets"]

LEAKY_SLOPE = 0.1
"""Negative slope of the LeakyReLU hidden activations."""

KERAS_ADAM_EPS = 1e-7
"""Adam's epsilon (the Keras default used by the authors' code)."""


# ------------------------------------------------------------------------------------------
# networks
# ------------------------------------------------------------------------------------------


class MLP(NamedTuple):
    """A two-hidden-layer perceptron (kernels ``[in, out]``; leading axes allowed for stacks).

    Attributes:
        w1, b1: first hidden layer ``[in, width]``, ``[width]``.
        w2, b2: second hidden layer ``[width, width]``, ``[width]``.
        w3, b3: output layer ``[width, out]``, ``[out]``.
    """

    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array
    w3: jax.Array
    b3: jax.Array


class Nets(NamedTuple):
    """All agents' networks, each field an :class:`MLP` stacked over agents ``[A, ...]``.

    Attributes:
        actor: observation -> logits over the actions (softmax policy).
        critic: the critic each agent keeps (cooperative: the consensus critic; greedy: its
            own; faulty: the fixed initial one; malicious: the compromised transmitted one).
        team_reward: the team-reward model (same roles as ``critic``).
        private_critic: the malicious agent's own critic for its actor (others: unused).
    """

    actor: MLP
    critic: MLP
    team_reward: MLP
    private_critic: MLP


class Batch(NamedTuple):
    """Transitions ``[B, ...]`` of one collection (flattened over episodes and steps).

    Attributes:
        obs: ``[B, obs_dim]`` observations s.
        next_obs: ``[B, obs_dim]`` next observations s'.
        actions: int32 ``[B, A]`` joint actions.
        rewards: ``[B, A]`` (scaled) private rewards.
        tr_input: ``[B, tr_input_dim]`` team-reward inputs of (s, a).
    """

    obs: jax.Array
    next_obs: jax.Array
    actions: jax.Array
    rewards: jax.Array
    tr_input: jax.Array


def glorot_uniform(key, fan_in: int, fan_out: int, dtype=None) -> jax.Array:
    """Glorot (Xavier) uniform ``[fan_in, fan_out]``: ``U(-l, l)``, ``l = sqrt(6 / (fan_in +
    fan_out))`` (the Keras kernel default)."""
    dtype = dtype or jnp.result_type(float)
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return jax.random.uniform(key, (fan_in, fan_out), dtype, -limit, limit)


def init_mlp(key, in_dim: int, width: int, out_dim: int, dtype=None) -> MLP:
    """Glorot-uniform kernels, zero biases (Keras defaults)."""
    dtype = dtype or jnp.result_type(float)
    k1, k2, k3 = jax.random.split(key, 3)
    return MLP(glorot_uniform(k1, in_dim, width, dtype), jnp.zeros((width,), dtype),
               glorot_uniform(k2, width, width, dtype), jnp.zeros((width,), dtype),
               glorot_uniform(k3, width, out_dim, dtype), jnp.zeros((out_dim,), dtype))


def _leaky(x):
    return jnp.where(x >= 0, x, LEAKY_SLOPE * x)


def features(p: MLP, x) -> jax.Array:
    """The last hidden layer ``phi(x)`` ``[..., width]``."""
    h = _leaky(jnp.asarray(x) @ p.w1 + p.b1)
    return _leaky(h @ p.w2 + p.b2)


def apply(p: MLP, x) -> jax.Array:
    """The network output ``[..., out]`` (logits for an actor)."""
    return features(p, x) @ p.w3 + p.b3


def value(p: MLP, x) -> jax.Array:
    """The scalar output ``[...]`` of a critic or team-reward network."""
    return apply(p, x)[..., 0]


def output_layer(p: MLP) -> jax.Array:
    """The scalar output layer as one vector ``[kernel; bias]`` ``[width + 1]``."""
    return jnp.concatenate([p.w3[..., 0], p.b3], axis=-1)


def with_output_layer(p: MLP, w) -> MLP:
    """``p`` with its scalar output layer replaced by ``w = [kernel; bias]``."""
    return p._replace(w3=w[..., :-1, None], b3=w[..., -1:])


def hidden_layers(p: MLP) -> tuple:
    """``(w1, b1, w2, b2)``."""
    return (p.w1, p.b1, p.w2, p.b2)


def with_hidden_layers(p: MLP, hidden) -> MLP:
    """``p`` with ``(w1, b1, w2, b2)`` replaced."""
    w1, b1, w2, b2 = hidden
    return p._replace(w1=w1, b1=b1, w2=w2, b2=b2)


def init_nets(key, num_agents: int, obs_dim: int, tr_dim: int, num_actions: int, width: int,
              shared_templates: bool, dtype=None) -> Nets:
    """Fresh networks of all agents.

    Actors are drawn independently per agent. With ``shared_templates`` (v1 code) every
    agent's critic and private critic are copies of one template and every team-reward
    network a copy of another; otherwise each is drawn independently.
    """
    ka, kc, kt, kp = jax.random.split(key, 4)
    A = num_agents
    actor = jax.vmap(lambda k: init_mlp(k, obs_dim, width, num_actions, dtype))(
        jax.random.split(ka, A))
    if shared_templates:
        def tile(p):
            return jax.tree_util.tree_map(lambda v: jnp.broadcast_to(v, (A,) + v.shape), p)
        critic = tile(init_mlp(kc, obs_dim, width, 1, dtype))
        tr = tile(init_mlp(kt, tr_dim, width, 1, dtype))
        private = critic
    else:
        critic = jax.vmap(lambda k: init_mlp(k, obs_dim, width, 1, dtype))(
            jax.random.split(kc, A))
        tr = jax.vmap(lambda k: init_mlp(k, tr_dim, width, 1, dtype))(jax.random.split(kt, A))
        private = jax.vmap(lambda k: init_mlp(k, obs_dim, width, 1, dtype))(
            jax.random.split(kp, A))
    return Nets(actor, critic, tr, private)
