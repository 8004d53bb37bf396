"""Projection-based resilient consensus of linear parameters (Figura, Lin, Liu, Gupta,
arXiv:2111.06776, "resilient projection-based consensus"; the equations below are our
reconstruction from the paper's description and the authors' code, see ``docs/resilient.md``).

A cooperative agent ``i`` with linear parameter ``v^i`` (a critic ``V(s) = phi(s)^T v`` or a
team-reward model ``f(s, a)^T lambda``) receives its in-neighbours' locally updated parameters
``v~^j = v^j + beta delta^j phi`` (Byzantine ones: anything). Instead of trimming parameter
coordinates, which a Byzantine agent defeats by putting every coordinate at the edge of the
cooperative range, it trims scalars: each message is **projected onto the current feature**,

    e^{ij} = (v~^j - v^i)^T phi / (beta ||phi||^2)            (own message: e^{ii} = delta^i),

the projections are aggregated with W-MSR (own value at k = 0), ``e-bar^i = WMSR_H({e^{ij}})``,
and the parameter moves along the feature only:

    v^i_{t+1} = v^i + beta e-bar^i phi.

Consequences (derived in ``docs/resilient.md``): ``v^i_{t+1} - v^i`` is parallel to ``phi``;
``phi^T v^i_{t+1} = WMSR_H({phi^T v~^j})`` since W-MSR commutes with positive affine maps; with
``H = 0`` the new prediction is the plain average of the neighbours' post-step predictions; for a
cooperative ``j``, ``e^{ij} = delta^j + (v^j - v^i)^T phi / (beta ||phi||^2)``.

The batch form of the experiments updates an output layer ``w = [kernel; bias]`` towards targets
``y*_b`` by one SGD step on the mean squared error with per-sample weights
``1 / (2 lr (||phi_b||^2 + 1))`` (:func:`weighted_output_step`): the step is
``Delta w = (1/B) sum_b (y*_b - y_b) [phi_b; 1] / (||phi_b||^2 + 1)``, which for ``B = 1`` puts
the prediction exactly on the target.

Example:
    >>> import jax.numpy as jnp
    >>> phi = jnp.array([1.0, 2.0]); v = jnp.zeros(2)
    >>> msgs = jnp.array([[0.1, 0.2], [0.3, 0.6], [9.0, 9.0]])   # own, honest, Byzantine
    >>> new = projection_step(v, msgs, None, phi, beta=0.1, H=1)
    >>> round(float(phi @ new), 6)                                # mean of 0.5 and 1.5
    1.0
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp

from .aggregators import get_aggregator

__all__ = ["projected_errors", "projection_step", "weighted_output_step"]


def projected_errors(v_own, received, phi, beta):
    """``e^{ij} = (v~^j - v^i)^T phi / (beta ||phi||^2)`` for every received ``v~^j``.

    Args:
        v_own: ``[d]`` the receiver's current parameter ``v^i``.
        received: ``[K, d]`` received updated parameters, the receiver's own ``v~^i`` at
            ``k = 0``.
        phi: ``[d]`` the current feature (nonzero).
        beta: the step size.

    Returns:
        ``[K]`` the projected errors.
    """
    phi = jnp.asarray(phi)
    return (jnp.asarray(received) - v_own) @ phi / (beta * jnp.dot(phi, phi))


def projection_step(v_own, received, mask, phi, beta, H, aggregator: str | Callable = "wmsr"):
    """``v^i + beta * agg_H(projected_errors) * phi`` (one projection-based consensus step).

    Args:
        v_own, received, phi, beta: as :func:`projected_errors`.
        mask: ``[K]`` real entries (None: all).
        H: Byzantine in-neighbours tolerated.
        aggregator: ``"wmsr"`` (the paper) or any name of
            :data:`~decentral.resilient_ac.AGGREGATORS`.

    Returns:
        ``[d]`` the new parameter.
    """
    e = projected_errors(v_own, received, phi, beta)
    return v_own + beta * get_aggregator(aggregator)(e, mask, H) * jnp.asarray(phi)


def weighted_output_step(w, features, targets, lr):
    """One SGD step (rate ``lr``) on ``mean_b c_b (y*_b - [phi_b; 1]^T w)^2`` with
    ``c_b = 1 / (2 lr (||phi_b||^2 + 1))``: the batch output-layer step of the experiments.

    Args:
        w: ``[d + 1]`` output layer, kernel then bias.
        features: ``[B, d]`` last-hidden-layer features ``phi_b``.
        targets: ``[B]`` targets ``y*_b``.
        lr: learning rate.

    Returns:
        ``[d + 1]``: ``w + (1/B) sum_b (y*_b - y_b) [phi_b; 1] / (||phi_b||^2 + 1)``.
    """
    feats = jnp.asarray(features)
    aug = jnp.concatenate([feats, jnp.ones(feats.shape[:-1] + (1,), feats.dtype)], axis=-1)
    pred = aug @ w
    weight = 1.0 / (2.0 * lr * jnp.sum(aug * aug, axis=-1))
    grad = -2.0 * jnp.mean((weight * (jnp.asarray(targets) - pred))[:, None] * aug, axis=0)
    return w - lr * grad
