"""Content digests: arrays, pytrees and configurations by value, for checkpoint fingerprints.

A checkpoint stores a fingerprint of its configuration (:func:`fingerprint`): the traced
program of the run (:mod:`~decentral.runner.program`), its params and scanned inputs by content
(:func:`hash_tree`), the shapes of its state and records (:func:`tree_spec`), and the settings
that change numbers. Digests never depend on the process (no ids, no memory addresses).
"""

from __future__ import annotations

import hashlib
import json
import re

import jax
import numpy as np

__all__ = [
    "Unfingerprintable",
    "array_digest",
    "hash_tree",
    "tree_spec",
    "treedef_text",
    "fingerprint",
]


class Unfingerprintable(ValueError):
    """A value (or a part of a traced program) whose content a fingerprint cannot identify."""


def array_digest(value) -> str:
    """``"array:<dtype><shape>:<sha256 of the bytes>"`` of a concrete numpy / JAX array.

    Example:
        >>> array_digest(np.zeros(2))[:17]
        'array:float64[2]:'
        >>> array_digest(np.zeros(2)) == array_digest(np.zeros(2))
        True
    """
    if isinstance(value, jax.core.Tracer):
        raise Unfingerprintable("a JAX tracer (an abstract value inside jit/vmap) has no content")
    if _is_key(value):
        impl = str(jax.random.key_impl(value))
        value = jax.random.key_data(value)
    else:
        impl = ""
    arr = np.ascontiguousarray(np.asarray(value))
    h = hashlib.sha256(arr.tobytes())
    h.update(arr.dtype.str.encode())
    shape = ",".join(map(str, arr.shape))
    return f"array:{impl}{arr.dtype}[{shape}]:{h.hexdigest()}"


def _is_key(value) -> bool:
    try:
        return jax.numpy.issubdtype(getattr(value, "dtype", None), jax.dtypes.prng_key)
    except Exception:
        return False


# --------------------------------------------------------------------------------------------
# params / xs / spec hashing
# --------------------------------------------------------------------------------------------

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def treedef_text(tree) -> str:
    """The tree structure as text without memory addresses (custom nodes such as
    ``jax.tree_util.Partial`` print their functions with an address that changes per process)."""
    return _ADDRESS.sub("", str(jax.tree_util.tree_structure(tree)))


def hash_tree(tree) -> str:
    """sha256 of a pytree's structure, leaf paths and leaf contents."""
    h = hashlib.sha256()
    leaves, _ = jax.tree_util.tree_flatten_with_path(tree)
    h.update(treedef_text(tree).encode())
    for path, leaf in leaves:
        h.update(jax.tree_util.keystr(path).encode())
        h.update(array_digest(leaf).encode())
    return h.hexdigest()


def tree_spec(tree) -> list:
    """``[path, shape, dtype]`` of every leaf plus the structure, JSON-able."""
    return [
        [jax.tree_util.keystr(path), list(leaf.shape), str(leaf.dtype)]
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]
    ] + [["treedef", treedef_text(tree)]]


def fingerprint(config: dict) -> str:
    """sha256 of a JSON-able configuration (sorted keys)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
