"""The key derivation (v1): results never depend on chunking, resuming or device count.

::

    seed_key            = jax.random.key(seed)              # seed: integer in [0, 2**32)
    init_key, step_root = jax.random.split(seed_key)
    key for step t      = jax.random.fold_in(step_root, t)  # t = 0, 1, ..., num_steps - 1
"""

from __future__ import annotations

import jax

__all__ = ["KEY_DERIVATION", "derive", "seed_keys", "step_key"]

KEY_DERIVATION = "v1: init,root=split(key(seed)); step t: fold_in(root, t)"


def derive(seed):
    """``(init_key, step_root)`` of a (possibly traced) uint32 seed."""
    seed_key = jax.random.key(seed)
    init_key, step_root = jax.random.split(seed_key)
    return init_key, step_root


def seed_keys(seed: int) -> tuple[jax.Array, jax.Array]:
    """The ``(init_key, step_root)`` pair :func:`~decentral.runner.run` uses for ``seed``.

    Example:
        >>> init_key, root = seed_keys(3)
        >>> x0 = jax.random.normal(jax.random.fold_in(root, 0))  # the draw step 0 sees
        >>> x0.shape
        ()
    """
    from .plan import validate_seeds

    seeds = validate_seeds([seed])
    return derive(jax.numpy.uint32(seeds[0]))


def step_key(seed: int, t: int) -> jax.Array:
    """The key :func:`~decentral.runner.run` passes to ``step`` at 0-based step ``t``.

    Example:
        >>> k = step_key(0, 5)
        >>> bool((jax.random.key_data(k) == jax.random.key_data(step_key(0, 5))).all())
        True
    """
    _, root = seed_keys(seed)
    return jax.random.fold_in(root, t)
