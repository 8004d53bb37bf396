"""Shape test: the runner carries every later algorithm family without a rewrite.

Toy versions of each family's step run through :func:`decentral.runner.run` on the dense and the
sparse (neighbour-table) backend of :mod:`decentral.graphs`, and the two backends agree:

* push-sum (column-stochastic weights, state ``y [N]``, ``x̃ [N, d]``): mass ``Σ y = N`` kept;
* max-consensus on pull counts (bandits): a masked max over in-neighbours;
* Byzantine-resilient aggregation: gathered ``[N, K, d]`` values, one sender's entries replaced
  per receiver, a trimmed mean; honest values stay inside their initial range;
* π_t fed as scanned inputs (``xs``): ``⟨x⟩_t = π_tᵀ x_t`` is constant on a periodic sequence;
* a params sweep over a step size equals separate runs.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import decentral.graphs as g
from decentral.runner import Algorithm, run

BACKENDS = ("dense", "sparse")


def _by_backend(make):
    """Run ``make(backend) -> RunResult`` for both backends; return the two results."""
    return {b: make(b) for b in BACKENDS}


def _assert_trees_close(a, b, rtol=1e-12, atol=1e-12):
    for la, lb in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(la), np.asarray(lb), rtol=rtol, atol=atol)


def _two_graphs(n):
    """Two different strongly connected digraphs with self-loops (a periodic sequence)."""
    a0 = g.ring(n)
    a1 = g.ring(n).copy()
    a1[0, 2] = a1[3, 1] = a1[1, 4] = True
    return a0, a1


# ------------------------------------------------------------------------------------------
# push-sum
# ------------------------------------------------------------------------------------------


class PushSumState(NamedTuple):
    y: jax.Array  # [N] weights
    x_tilde: jax.Array  # [N, d] numerators


def _push_sum(backend, n=6, d=3):
    a0, a1 = _two_graphs(n)
    seq = g.periodic([g.column_stochastic(a0), g.column_stochastic(a1)], backend=backend)
    assert seq.backend == backend and seq.n == n

    def init(key, params):
        return PushSumState(jnp.ones(n), jax.random.normal(key, (n, d)))

    def step(key, state, params, t, x_t):
        w = seq.at(t)
        return PushSumState(g.mix(w, state.y), g.mix(w, state.x_tilde)), None

    return Algorithm(init, step, name=f"toy_push_sum_{backend}")


def test_push_sum_mass_and_ratio_consensus(x64):
    res = _by_backend(lambda b: run(_push_sum(b), None, seeds=[0, 1], num_steps=120,
                                    record_every=10, record_initial=True, chunk_size=40))
    _assert_trees_close(res["dense"].records, res["sparse"].records)
    for r in res.values():
        y, xt = r.records.y, r.records.x_tilde  # [S, n_rec, N], [S, n_rec, N, d]
        np.testing.assert_allclose(y.sum(axis=-1), 6.0, rtol=0, atol=1e-12)  # Σ y = N always
        np.testing.assert_allclose(xt.sum(axis=-2), xt[:, :1].sum(axis=-2).repeat(13, axis=1),
                                   atol=1e-12)
        ratio = r.final_state.x_tilde / r.final_state.y[..., None]
        initial_mean = xt[:, 0].mean(axis=1)  # [S, d]
        np.testing.assert_allclose(ratio, np.broadcast_to(initial_mean[:, None], ratio.shape),
                                   atol=1e-6)


# ------------------------------------------------------------------------------------------
# max-consensus on counts (bandits)
# ------------------------------------------------------------------------------------------


def _max_counts(backend, n=6, arms=4):
    a0, a1 = _two_graphs(n)
    seq = g.periodic([g.row_stochastic(a0), g.row_stochastic(a1)], backend=backend)

    def init(key, params):
        return jnp.zeros((n, arms), jnp.int32)

    def step(key, counts, params, t, x_t):
        arm = jax.random.randint(key, (n,), 0, arms)
        counts = counts + jax.nn.one_hot(arm, arms, dtype=jnp.int32)  # local pulls
        return g.masked_max(seq.at(t), counts), arm  # dense W or table

    return Algorithm(init, step, name=f"toy_max_counts_{backend}")


def test_masked_max_counts_agree_across_backends():
    res = _by_backend(lambda b: run(_max_counts(b), None, seeds=[3, 4, 5], num_steps=30,
                                    record_every=3))
    np.testing.assert_array_equal(res["dense"].records, res["sparse"].records)
    c = res["sparse"].records  # [S, 10, N, M]
    assert c.dtype == np.int32
    assert np.all(np.diff(c, axis=1) >= 0)  # max-consensus never forgets a pull
    assert np.all(c[:, -1] >= c[:, -1].max(axis=1, keepdims=True) - 30)


# ------------------------------------------------------------------------------------------
# Byzantine sender + trimmed aggregation (resilient actor-critic)
# ------------------------------------------------------------------------------------------

BYZANTINE = 2


def _trimmed_mean(values, mask):
    """Mean of the in-neighbour values without one largest and one smallest (per coordinate)."""
    m = mask[..., None]
    big = jnp.max(jnp.where(m, values, -jnp.inf), axis=1)
    small = jnp.min(jnp.where(m, values, jnp.inf), axis=1)
    total = jnp.sum(jnp.where(m, values, 0.0), axis=1)
    count = mask.sum(axis=1)[:, None]
    return (total - big - small) / (count - 2)


def _resilient(backend, n=7, d=2):
    adj = g.circulant(n, [1, 2, 3])  # 3 in-neighbours + self: trimming 1 on each side is safe
    seq = g.static(g.row_stochastic(adj), backend=backend)
    receivers = jnp.arange(n)

    def init(key, params):
        return jax.random.uniform(key, (n, d))

    def step(key, x, params, t, x_t):
        messages = 100.0 + receivers[:, None] + jax.random.normal(key, (n, d))  # per receiver
        table = g.as_table(seq.at(t))  # the dense W viewed as a K = N table, or the table
        gathered = g.gather(table, x)  # [N, K, d], own value at k = 0
        gathered = g.replace_sender_messages(table, gathered, BYZANTINE, messages)
        new = _trimmed_mean(gathered, table.mask)
        return new.at[BYZANTINE].set(x[BYZANTINE]), None

    return Algorithm(init, step, name=f"toy_resilient_{backend}")


def test_byzantine_sender_trimmed_aggregation(x64):
    res = _by_backend(lambda b: run(_resilient(b), None, seeds=[0, 1, 2], num_steps=20,
                                    record_initial=True, chunk_size=5))
    _assert_trees_close(res["dense"].records, res["sparse"].records)
    x = res["sparse"].records  # [S, 21, N, d]
    honest = np.delete(x, BYZANTINE, axis=2)
    lo = honest[:, :1].min(axis=2, keepdims=True)
    hi = honest[:, :1].max(axis=2, keepdims=True)
    # the attacker's messages (~100) never pull honest agents out of their initial range
    assert np.all(honest >= lo - 1e-12) and np.all(honest <= hi + 1e-12)
    assert np.all(np.abs(honest).max(axis=(2, 3)) < 1.0 + 1e-12)


# ------------------------------------------------------------------------------------------
# π_t as scanned inputs
# ------------------------------------------------------------------------------------------


def _left_perron(M):
    vals, vecs = np.linalg.eig(M.T)
    v = np.real(vecs[:, np.argmin(np.abs(vals - 1.0))])
    return v / v.sum()


class AvgState(NamedTuple):
    x: jax.Array  # [N, d]
    pi_avg: jax.Array  # [d]: π_tᵀ x_t of the state before the last update


def _pi_average(backend, W0, W1, d=2):
    seq = g.periodic([W0, W1], backend=backend)
    n = W0.shape[0]

    def init(key, params):
        return AvgState(jax.random.normal(key, (n, d)), jnp.zeros(d))

    def step(key, state, params, t, pi_t):
        avg = pi_t @ state.x  # ⟨x⟩_t = π_tᵀ x_t
        return AvgState(g.mix(seq.at(t), state.x), avg), None

    return Algorithm(init, step, name=f"toy_pi_average_{backend}")


def test_pi_weighted_average_from_scanned_inputs(x64):
    a0, a1 = _two_graphs(5)
    W0, W1 = g.row_stochastic(a0), g.row_stochastic(a1)
    # absolute probability sequence of the period-2 sequence: π_{t+1}ᵀ W_t = π_tᵀ
    pi0 = _left_perron(W1 @ W0)
    pi1 = pi0 @ W1
    np.testing.assert_allclose(pi1 @ W0, pi0, atol=1e-13)
    assert not np.allclose(pi0, pi1)  # genuinely time-varying
    num_steps = 40
    pis = np.stack([pi0 if t % 2 == 0 else pi1 for t in range(num_steps + 1)])  # [T+1, N]
    res = _by_backend(lambda b: run(_pi_average(b, W0, W1), None, seeds=[0, 1],
                                    num_steps=num_steps, xs=pis, record_initial=True))
    _assert_trees_close(res["dense"].records, res["sparse"].records)
    for r in res.values():
        x0 = r.records.x[:, 0]  # [S, N, d]
        expect = np.einsum("n,snd->sd", pi0, x0)
        avg = r.records.pi_avg[:, 1:]  # record k holds ⟨x⟩_{k-1}
        np.testing.assert_allclose(avg, np.broadcast_to(expect[:, None], avg.shape),
                                   rtol=0, atol=1e-12)
        # a wrong π (uniform) does not give a constant: the check can fail
        wrong = r.records.x.mean(axis=2)
        assert np.abs(wrong - wrong[:, :1]).max() > 1e-3


# ------------------------------------------------------------------------------------------
# params sweep over a step size
# ------------------------------------------------------------------------------------------


class SAParams(NamedTuple):
    step_size: jax.Array
    target: jax.Array  # [d]


def _consensus_sa(backend, n=6, d=2):
    a0, a1 = _two_graphs(n)
    seq = g.periodic([g.row_stochastic(a0), g.row_stochastic(a1)], backend=backend)

    def init(key, params):
        return jax.random.normal(key, (n, d))

    def step(key, theta, params, t, x_t):
        noise = jax.random.normal(key, theta.shape)
        local = params.target - theta + 0.1 * noise
        return g.mix(seq.at(t), theta) + params.step_size * local, None

    return Algorithm(init, step, name=f"toy_consensus_sa_{backend}")


def test_step_size_sweep_equals_separate_runs(x64):
    step_sizes = np.array([0.01, 0.05, 0.2])
    target = np.array([1.0, -2.0])
    swept = SAParams(step_sizes, np.broadcast_to(target, (3, 2)).copy())
    res = _by_backend(lambda b: run(_consensus_sa(b), swept, seeds=[0, 1], num_steps=60,
                                    record_every=6, sweep=True))
    _assert_trees_close(res["dense"].records, res["sparse"].records)
    assert res["sparse"].records.shape == (3, 2, 10, 6, 2)
    alg = _consensus_sa("sparse")
    for p, a in enumerate(step_sizes):  # one compile: the step size is data, not a constant
        single = run(alg, SAParams(np.float64(a), target), seeds=[0, 1], num_steps=60,
                     record_every=6)
        np.testing.assert_allclose(res["sparse"].records[p], single.records, rtol=1e-12,
                                   atol=1e-12)
    # larger step sizes track the target more closely by the end
    err = np.abs(res["sparse"].final_state - target).mean(axis=(1, 2, 3))
    assert err[2] < err[1] < err[0]
