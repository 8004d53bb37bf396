"""GraphSequence identity (content digest) and its JAX pytree behaviour."""

from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import decentral.graphs as g


def _weights(seed, n=5):
    rng = np.random.default_rng(seed)
    a = g.erdos_renyi(n, 0.5, kind="strong", seed=1)
    w = np.where(a, rng.uniform(0.1, 1.0, a.shape), 0.0)
    return w / w.sum(axis=1, keepdims=True)


def _constructions():
    """name -> zero-argument builder; every builder differs from every other in one thing
    that changes what at(t) answers (or how it is stored)."""
    W, W2 = _weights(0), _weights(1)
    base = g.erdos_renyi(6, 0.5, kind="strong", seed=3)
    sym = g.erdos_renyi(6, 0.5, kind="undirected", seed=3)
    return {
        "static": lambda: g.static(W),
        "static_other_weights": lambda: g.static(W2),
        "static_float32": lambda: g.static(W.astype(np.float32)),
        "static_sparse": lambda: g.static(W, backend="sparse"),
        "static_rule": lambda: g.static(g.ring(5), rule="row"),
        "static_rule_column": lambda: g.static(g.ring(5), rule="column"),
        "periodic_1": lambda: g.periodic([W]),
        "periodic_2": lambda: g.periodic([W, W2]),
        "periodic_2_swapped": lambda: g.periodic([W2, W]),
        "explicit_2": lambda: g.explicit([W, W2]),
        "explicit_3": lambda: g.explicit([W, W2, W]),
        "one_peer_8": lambda: g.one_peer_exponential(8),
        "one_peer_8_sparse": lambda: g.one_peer_exponential(8, backend="sparse"),
        "random": lambda: g.random_edge_drops(base, 0.3, key=0),
        "random_p": lambda: g.random_edge_drops(base, 0.31, key=0),
        "random_key": lambda: g.random_edge_drops(base, 0.3, key=1),
        "random_typed_key_other_impl": lambda: g.random_edge_drops(
            base, 0.3, key=jax.random.key(0, impl="rbg")),
        "random_sparse": lambda: g.random_edge_drops(base, 0.3, key=0, backend="sparse"),
        "random_column": lambda: g.random_edge_drops(base, 0.3, key=0, rule="column"),
        "random_per_seed": lambda: g.random_edge_drops(base, 0.3, shared_across_seeds=False),
        "random_other_base": lambda: g.random_edge_drops(g.ring(6), 0.3, key=0),
        "random_sym": lambda: g.random_edge_drops(sym, 0.3, key=0),
        "random_sym_independent": lambda: g.random_edge_drops(sym, 0.3, key=0,
                                                              symmetric_drops=False),
    }


def test_digest_is_deterministic_and_tells_constructions_apart():
    builds = _constructions()
    digests = {}
    for name, build in builds.items():
        d = build().digest()
        assert isinstance(d, str) and d.startswith("graphs/1:") and len(d) == 9 + 64
        assert build().digest() == d, name                 # same construction, same digest
        digests[name] = d
    assert len(set(digests.values())) == len(digests)      # every change shows


def test_digest_is_the_same_in_another_process():
    code = ("import numpy as np, decentral.graphs as g; "
            "w = g.row_stochastic(g.erdos_renyi(6, 0.5, kind='strong', seed=3)); "
            "print(g.static(w).digest()); "
            "print(g.random_edge_drops(g.complete(5), 0.25, key=7, backend='sparse').digest())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    w = g.row_stochastic(g.erdos_renyi(6, 0.5, kind="strong", seed=3))
    assert out == [g.static(w).digest(),
                   g.random_edge_drops(g.complete(5), 0.25, key=7, backend="sparse").digest()]


def test_digest_does_not_depend_on_the_global_precision(request):
    builds = _constructions()
    before = {name: build().digest() for name, build in builds.items()}
    request.getfixturevalue("x64")
    assert {name: build().digest() for name, build in builds.items()} == before


def test_digest_refuses_traced_leaves_with_a_clear_message():
    seq = g.static(_weights(0))
    with pytest.raises(ValueError, match="traced"):
        jax.jit(lambda s: s.digest())(seq)
    with pytest.raises(ValueError, match="traced"):
        jax.jit(lambda s: s.weights_host(1))(seq)


# ==== pytree =================================================================================

@pytest.mark.parametrize("backend", ["dense", "sparse"])
def test_jit_over_sequences_that_differ_in_weights_traces_once(backend):
    traces = []

    @jax.jit
    def step(seq, x):
        traces.append(1)                       # Python side effect: runs once per trace
        return g.mix(seq.at(3), x)

    x = jnp.arange(5.0)
    W, W2 = _weights(0), _weights(1)           # same pattern, different weights
    for w in (W, W2):
        got = step(g.periodic([w, w], backend=backend), x)
        np.testing.assert_allclose(np.asarray(got), w @ np.arange(5.0), rtol=1e-6)
    k = int((W > 0).sum(axis=1).max())                  # table width K, self included
    other_pattern = g.row_stochastic(g.circulant(5, list(range(1, k))))   # same K
    got = step(g.periodic([other_pattern] * 2, backend=backend), x)
    np.testing.assert_allclose(np.asarray(got), other_pattern @ np.arange(5.0), rtol=1e-6)
    assert len(traces) == 1


def test_jit_over_random_sequences_with_other_drop_prob_and_key_traces_once():
    traces = []

    @jax.jit
    def pattern(seq):
        traces.append(1)
        return seq.dense_at(4) > 0

    base = g.complete(6)
    for p, key in ((0.2, 0), (0.7, 0), (0.7, 5)):
        seq = g.random_edge_drops(base, p, key=key)
        np.testing.assert_array_equal(np.asarray(pattern(seq)), np.asarray(seq.dense_at(4)) > 0)
    assert len(traces) == 1


def test_vmap_over_drop_prob_with_replace():
    seq = g.random_edge_drops(g.complete(8), 0.1, key=3)
    ps = jnp.array([0.0, 0.3, 0.8])
    got = jax.vmap(lambda p: seq.replace(drop_prob=p).dense_at(2) > 0)(ps)
    for k, p in enumerate([0.0, 0.3, 0.8]):
        want = np.asarray(g.random_edge_drops(g.complete(8), p, key=3).dense_at(2)) > 0
        np.testing.assert_array_equal(np.asarray(got[k]), want)
    with pytest.raises(ValueError, match="unknown leaves"):
        seq.replace(weights=jnp.eye(8))


def test_vmap_over_a_stack_of_sequences():
    s1, s2 = g.static(_weights(0)), g.static(_weights(1))
    both = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), s1, s2)
    assert isinstance(both, g.GraphSequence)
    x = jnp.ones(5)
    got = jax.vmap(lambda s: g.mix(s.at(0), x))(both)
    np.testing.assert_allclose(np.asarray(got), np.ones((2, 5)), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(_constructions()))
def test_flatten_unflatten_round_trip(name):
    seq = _constructions()[name]()
    leaves, treedef = jax.tree_util.tree_flatten(seq)
    again = jax.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(again, g.GraphSequence)
    assert again.digest() == seq.digest()
    assert (again.form, again.n, again.backend, again.rule, again.period, again.length) == \
        (seq.form, seq.n, seq.backend, seq.rule, seq.period, seq.length)
    key = jax.random.key(4) if not seq.shared_across_seeds else None
    np.testing.assert_array_equal(np.asarray(again.dense_at(5, key)),
                                  np.asarray(seq.dense_at(5, key)))
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(seq)[0]]
    assert all(p.startswith(".") for p in paths)          # named leaves (GetAttrKey)
