"""The algorithm contract: a checkpoint sees everything an algorithm closes over, the horizon guard
is automatic, record_fn gets its context by an explicit choice, record points can be irregular,
a sweep may map over some params only, and divergence is reported at its exact update."""

from __future__ import annotations

import functools
import threading
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import decentral.graphs as g
from decentral.consensus import consensus, consensus_params
from decentral.runner import (
    Algorithm,
    DivergenceError,
    DivergenceWarning,
    FrozenConfig,
    RecordContext,
    log_spaced_steps,
    run,
    stack_params,
)


class _Stop(Exception):
    pass


def _stop_after(chunk):
    def hook(c):
        if c == chunk:
            raise _Stop

    return hook


def _graph_algorithm(W):
    """What a user writes: a plain Algorithm over closures (no config)."""
    W = jnp.asarray(W)

    def init(key, params):
        return jnp.arange(W.shape[0], dtype=W.dtype)

    def step(key, x, params, t, x_t):
        return W @ x, None

    return Algorithm(init, step, name="my_consensus")


# ------------------------------------------------------------------------------------------
# reproductions: a checkpoint must never hand back another run's result
# ------------------------------------------------------------------------------------------


def test_ring_checkpoint_is_not_returned_for_a_complete_graph(tmp_path):
    ring = _graph_algorithm(g.row_stochastic(g.ring(5)))
    full = _graph_algorithm(g.row_stochastic(g.complete(5)))
    run(ring, None, seeds=[0], num_steps=6, checkpoint_dir=tmp_path)
    with pytest.raises(ValueError, match=r"different run configuration.*closure 'W'"):
        run(full, None, seeds=[0], num_steps=6, checkpoint_dir=tmp_path)
    # the same graph built again resumes (returns the stored, complete run)
    again = run(_graph_algorithm(g.row_stochastic(g.ring(5))), None, seeds=[0], num_steps=6,
                checkpoint_dir=tmp_path)
    np.testing.assert_allclose(again.final_state, run(ring, None, [0], 6).final_state)


def _scaled_algorithm(scale):
    def init(key, params):
        return jnp.zeros(2)

    def step(key, x, params, t, x_t):
        return x + scale * jax.random.normal(key, (2,)), None

    return Algorithm(init, step, name="scaled")


def test_resume_with_another_closed_over_scale_is_refused(tmp_path):
    kw = dict(seeds=[0, 1], num_steps=40, chunk_size=10, checkpoint_dir=tmp_path)
    with pytest.raises(_Stop):
        run(_scaled_algorithm(1.0), None, on_chunk_end=_stop_after(1), **kw)
    expect = r"closure 'scale': checkpoint \"float 1\.0\" vs now \"float 1000\.0\""
    with pytest.raises(ValueError, match=expect):
        run(_scaled_algorithm(1000.0), None, **kw)
    resumed = run(_scaled_algorithm(1.0), None, **kw)           # the same scale resumes
    fresh = run(_scaled_algorithm(1.0), None, seeds=[0, 1], num_steps=40)
    np.testing.assert_array_equal(resumed.final_state, fresh.final_state)


SCALE = 2.0


def _global_step(key, x, params, t, x_t):
    return x * SCALE, None


def test_module_global_and_partial_arguments_enter_the_fingerprint(tmp_path, monkeypatch):
    alg = Algorithm(lambda k, p: jnp.ones(2), _global_step, name="global_reader")
    run(alg, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "a")
    monkeypatch.setattr(__import__(__name__), "SCALE", 3.0)
    with pytest.raises(ValueError, match="global 'SCALE'"):
        run(alg, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "a")

    def scaled(key, x, params, t, x_t, *, by):
        return x * by, None

    one = Algorithm(lambda k, p: jnp.ones(2), functools.partial(scaled, by=2.0), name="p")
    two = Algorithm(lambda k, p: jnp.ones(2), functools.partial(scaled, by=5.0), name="p")
    run(one, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "b")
    with pytest.raises(ValueError, match="functions.step"):
        run(two, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "b")


def test_a_value_that_cannot_be_fingerprinted_refuses_the_checkpoint(tmp_path):
    lock = threading.Lock()

    def step_with_lock(key, x, params, t, x_t, _lock=lock):
        return x + 1.0, None

    alg = Algorithm(lambda k, p: jnp.zeros(1), step_with_lock, name="locked")
    run(alg, None, seeds=[0], num_steps=2)                       # runs without a checkpoint
    with pytest.raises(ValueError, match=r"cannot checkpoint this run.*lock.*config"):
        run(alg, None, seeds=[0], num_steps=2, checkpoint_dir=tmp_path / "a")
    # a config that describes what the functions close over makes it checkpointable
    described = alg.replace(config={"note": "the lock guards nothing numeric"})
    res = run(described, None, seeds=[0], num_steps=2, checkpoint_dir=tmp_path / "b")
    assert float(res.final_state[0, 0]) == 2.0
    with pytest.raises(ValueError, match="algorithm.config.note"):
        run(described.replace(config={"note": "another"}), None, seeds=[0], num_steps=2,
            checkpoint_dir=tmp_path / "b")


def test_factory_config_names_the_graph_and_digest_is_stable(tmp_path):
    ring = consensus(g.static(g.ring(4), rule="row"))
    params = consensus_params([0.0, 1.0, 2.0, 3.0])
    run(ring, params, seeds=[0], num_steps=5, checkpoint_dir=tmp_path)
    full = consensus(g.static(g.complete(4), rule="row"))
    with pytest.raises(ValueError, match="algorithm.config.graphs"):
        run(full, params, seeds=[0], num_steps=5, checkpoint_dir=tmp_path)
    assert isinstance(ring.config, FrozenConfig)
    assert hash(ring) == hash(ring.replace())                    # frozen, hashable: cacheable


_TRACES: list[int] = []


def test_a_config_does_not_disable_the_compile_cache():
    def step(key, x, params, t, x_t):
        _TRACES.append(1)
        return x * params, None

    alg = Algorithm(lambda k, p: jnp.ones(2), step, name="cfg", config={"w": np.eye(2)})
    _TRACES.clear()
    run(alg, np.float32(0.5), seeds=[0], num_steps=4)
    run(alg, np.float32(0.7), seeds=[1], num_steps=4)
    assert len(_TRACES) == 1


# ------------------------------------------------------------------------------------------
# horizon guard
# ------------------------------------------------------------------------------------------


def _never_init(key, params):
    raise AssertionError("init must not be traced for a refused run")


def test_explicit_stack_bounds_the_horizon_of_any_algorithm_reaching_it():
    seq = g.explicit(np.stack([g.row_stochastic(g.ring(3))] * 7))

    def step(key, x, params, t, x_t):
        return g.mix(seq.at(t), x), None

    alg = Algorithm(_never_init, step, name="stack_user")
    assert alg.max_horizon == 7
    with pytest.raises(ValueError, match="max_horizon = 7"):
        run(alg, None, seeds=[0], num_steps=8)
    assert consensus(seq).max_horizon == 7


# ------------------------------------------------------------------------------------------
# record_fn context, record points, partial sweeps
# ------------------------------------------------------------------------------------------


def _count_init(key, params):
    return jnp.zeros((), jnp.float32)


def _count_step(key, s, params, t, x_t):
    return s + x_t, 10.0 * (s + x_t)


COUNT = Algorithm(_count_init, _count_step, name="count")


def test_record_fn_with_a_default_argument_is_never_sniffed():
    res = run(COUNT, None, seeds=[0], num_steps=3, xs=np.ones(3, np.float32),
              record_fn=lambda s, info=None: (s, info is None))
    assert res.records[1].all()          # called as record_fn(state): info stays None


def _with_context(state, ctx):
    assert isinstance(ctx, RecordContext)
    return {"t": ctx.t, "info": ctx.info, "x": ctx.x, "s": state}


def test_record_context_gives_t_info_and_x():
    xs = np.arange(1.0, 7.0, dtype=np.float32)
    res = run(COUNT, None, seeds=[0], num_steps=6, record_every=2, xs=xs,
              record_fn=_with_context, record_context=True, record_initial=True)
    r = res.records
    np.testing.assert_array_equal(r["t"][0], [0, 2, 4, 6])
    np.testing.assert_array_equal(r["x"][0], [0.0, 2.0, 4.0, 6.0])       # xs[t - 1]
    np.testing.assert_array_equal(r["s"][0], [0.0, 3.0, 10.0, 21.0])
    np.testing.assert_array_equal(r["info"][0], [0.0, 30.0, 100.0, 210.0])


def test_record_at_log_spaced_points_match_a_dense_record():
    walk = Algorithm(lambda k, p: jnp.zeros(2),
                     lambda k, s, p, t, x: (s + jax.random.normal(k, (2,)), None), name="walk2")
    at = log_spaced_steps(1000, 7)
    assert at[-1] == 1000 and np.all(np.diff(at) > 0)
    sparse = run(walk, None, seeds=[0, 1], num_steps=1000, record_at=at, chunk_size=300,
                 on_chunk_end=lambda c: None)
    dense = run(walk, None, seeds=[0, 1], num_steps=1000)
    np.testing.assert_array_equal(sparse.record_steps, at)
    np.testing.assert_array_equal(sparse.records, dense.records[:, at - 1])
    with_zero = run(walk, None, seeds=[0], num_steps=10, record_at=[0, 3, 10])
    np.testing.assert_array_equal(with_zero.record_steps, [0, 3, 10])
    np.testing.assert_array_equal(with_zero.records[0, 0], [0.0, 0.0])
    with pytest.raises(ValueError, match="strictly increasing"):
        run(walk, None, seeds=[0], num_steps=10, record_at=[3, 3, 10])
    with pytest.raises(ValueError, match="end at num_steps"):
        run(walk, None, seeds=[0], num_steps=10, record_at=[3, 5])


class StepParams(NamedTuple):
    step_size: jax.Array
    table: jax.Array


def _sa_init(key, params):
    return jnp.ones(3)


def _sa_step(key, x, params, t, x_t):
    return x - params.step_size * (params.table @ x), None


SA = Algorithm(_sa_init, _sa_step, name="sa_toy")


def test_sweep_over_one_field_equals_the_full_sweep(x64):
    table = np.diag([1.0, 2.0, 3.0])
    sizes = np.array([0.01, 0.1, 0.2])
    part = run(SA, StepParams(sizes, table), seeds=[0], num_steps=20, sweep="step_size")
    full = run(SA, stack_params([StepParams(a, table) for a in sizes]), seeds=[0],
               num_steps=20, sweep=True)
    np.testing.assert_array_equal(part.records, full.records)
    axes = StepParams(step_size=0, table=None)
    by_axes = run(SA, StepParams(sizes, table), seeds=[0], num_steps=20, sweep=axes)
    np.testing.assert_array_equal(by_axes.records, full.records)
    with pytest.raises(ValueError, match="not params fields"):
        run(SA, StepParams(sizes, table), seeds=[0], num_steps=20, sweep="alpha")


# ------------------------------------------------------------------------------------------
# divergence at its exact update, in the state or only in a record
# ------------------------------------------------------------------------------------------


def _blow_step(key, x, params, t, x_t):
    return jnp.where(t == params, jnp.inf, x), None


BLOW = Algorithm(lambda k, p: jnp.ones(2), _blow_step, name="blow")


def _log_record(x):
    return jnp.log(x - 1.0)   # -inf at the finite state x = 1


def test_divergence_names_the_first_non_finite_update():
    with pytest.raises(DivergenceError, match="update t = 13") as info:
        run(BLOW, np.int32(13), seeds=[0, 1], num_steps=40, chunk_size=10,
            on_chunk_end=lambda c: None)
    assert info.value.chunk == 1 and info.value.first_step == [13, 13]


def test_a_non_finite_record_is_divergence_unless_opted_out():
    with pytest.raises(DivergenceError, match="record.*check_records=False") as info:
        run(BLOW, np.int32(100), seeds=[0], num_steps=10, record_fn=_log_record)
    assert info.value.where == ["record"] and info.value.first_step == [0]
    res = run(BLOW, np.int32(100), seeds=[0], num_steps=10, record_fn=_log_record,
              check_records=False)
    assert np.all(np.isneginf(res.records))


def test_divergence_is_the_same_live_and_on_reload(tmp_path):
    kw = dict(seeds=[0, 1], num_steps=40, chunk_size=10, checkpoint_dir=tmp_path)
    with pytest.warns(DivergenceWarning, match="update t = 23") as live:
        run(BLOW, np.int32(23), on_divergence="warn", **kw)
    with pytest.warns(DivergenceWarning) as reloaded:
        run(BLOW, np.int32(23), on_divergence="warn", **kw)
    assert [str(w.message) for w in live] == [str(w.message) for w in reloaded]
    with pytest.raises(DivergenceError, match="update t = 23") as info:
        run(BLOW, np.int32(23), **kw)
    assert info.value.chunk == 2 and info.value.first_step == [23, 23]


def test_divergence_in_a_sweep_names_the_params_index():
    with pytest.raises(DivergenceError, match="params index 1") as info:
        run(BLOW, np.array([100, 5], np.int32), seeds=[0], num_steps=10, sweep=True)
    assert info.value.param_indices == [1] and info.value.first_step == [5]
