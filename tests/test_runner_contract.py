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
    with pytest.raises(ValueError, match=r"different run configuration.*program\.step.*"
                                         r"const v0:float32\[5,5\]"):
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
    expect = r"program\.step.*differ at step: line \d+: '.*mul.* 1\.0:.*' vs '.*mul.* 1000\.0:"
    with pytest.raises(ValueError, match=expect):
        run(_scaled_algorithm(1000.0), None, **kw)
    resumed = run(_scaled_algorithm(1.0), None, **kw)           # the same scale resumes
    fresh = run(_scaled_algorithm(1.0), None, seeds=[0, 1], num_steps=40)
    np.testing.assert_array_equal(resumed.final_state, fresh.final_state)


SCALE = 2.0
GAIN = 0.5          # read by a method in the fingerprint test (reassigned there)


def _global_step(key, x, params, t, x_t):
    return x * SCALE, None


def test_module_global_and_partial_arguments_enter_the_fingerprint(tmp_path, monkeypatch):
    alg = Algorithm(lambda k, p: jnp.ones(2), _global_step, name="global_reader")
    run(alg, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "a")
    monkeypatch.setattr(__import__(__name__), "SCALE", 3.0)
    with pytest.raises(ValueError, match=r"program\.step.* 2\.0:.* vs .* 3\.0:"):
        run(alg, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "a")
    # a checkpointed run computes the current code: the new value, not the compiled one
    fresh = run(alg, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "c")
    np.testing.assert_array_equal(fresh.final_state, np.full((1, 2), 27.0, np.float32))

    def scaled(key, x, params, t, x_t, *, by):
        return x * by, None

    one = Algorithm(lambda k, p: jnp.ones(2), functools.partial(scaled, by=2.0), name="p")
    two = Algorithm(lambda k, p: jnp.ones(2), functools.partial(scaled, by=5.0), name="p")
    run(one, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "b")
    with pytest.raises(ValueError, match=r"program\.step.* 2\.0:.* vs .* 5\.0:"):
        run(two, None, seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "b")


def test_an_edited_user_module_and_a_method_reading_a_global_are_seen(tmp_path, monkeypatch):
    """The two gaps of the closure walker: a step calling a function of the user's own module
    (identified by name only), and a method reading a global (the bound object's attributes
    only). Editing either must refuse the old checkpoint."""
    import importlib
    import sys

    source = tmp_path / "user_dynamics.py"
    source.write_text("def drift(x):\n    return x * 1.5\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("user_dynamics", None)
    module = importlib.import_module("user_dynamics")

    def step(key, x, params, t, x_t):
        return module.drift(x), None

    alg = Algorithm(lambda k, p: jnp.ones(2), step, name="user_module")
    kw = dict(seeds=[0], num_steps=3, checkpoint_dir=tmp_path / "ckpt")
    run(alg, None, **kw)
    source.write_text("def drift(x):\n    return x * 2.5\n")     # the user edits the module
    importlib.reload(module)
    with pytest.raises(ValueError, match=r"program\.step.* 1\.5:.* vs .* 2\.5:"):
        run(alg, None, **kw)

    class Model:
        def step(self, key, x, params, t, x_t):
            return x * GAIN, None

    monkeypatch.setitem(globals(), "GAIN", 0.5)
    model = Model()
    alg = Algorithm(lambda k, p: jnp.ones(2), model.step, name="method")
    kw["checkpoint_dir"] = tmp_path / "ckpt2"
    run(alg, None, **kw)
    monkeypatch.setitem(globals(), "GAIN", 0.25)
    with pytest.raises(ValueError, match=r"program\.step.* 0\.5:.* vs .* 0\.25:"):
        run(alg, None, **kw)


def test_a_host_callback_refuses_the_checkpoint_unless_described(tmp_path):
    def host_double(v):                  # host Python code: outside the traced program
        return np.asarray(v) * 2

    def step_with_callback(key, x, params, t, x_t):
        return jax.pure_callback(host_double, jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                vmap_method="sequential"), None

    alg = Algorithm(lambda k, p: jnp.ones(1), step_with_callback, name="calls_back")
    assert float(run(alg, None, seeds=[0], num_steps=2).final_state[0, 0]) == 4.0
    with pytest.raises(ValueError, match=r"cannot checkpoint this run.*pure_callback.*"
                                         r"host_double.*config"):
        run(alg, None, seeds=[0], num_steps=2, checkpoint_dir=tmp_path / "a")
    # a config that describes the callback makes it checkpointable
    described = alg.replace(config={"callback": "host_double: doubles"})
    res = run(described, None, seeds=[0], num_steps=2, checkpoint_dir=tmp_path / "b")
    assert float(res.final_state[0, 0]) == 4.0
    with pytest.raises(ValueError, match="algorithm.config.callback"):
        run(described.replace(config={"callback": "another"}), None, seeds=[0], num_steps=2,
            checkpoint_dir=tmp_path / "b")


def test_a_custom_derivative_rule_refuses_the_checkpoint_unless_described(tmp_path):
    alg = Algorithm(lambda k, p: -jnp.ones(2),
                    lambda k, x, p, t, xt: (jax.nn.relu(x) - 1.0, None), name="relu_user")
    with pytest.raises(ValueError, match=r"derivative rule of a custom_jvp function 'relu'"):
        run(alg, None, seeds=[0], num_steps=2, checkpoint_dir=tmp_path / "a")
    run(alg.replace(config={"uses": "jax.nn.relu"}), None, seeds=[0], num_steps=2,
        checkpoint_dir=tmp_path / "b")


def test_a_lock_closed_over_does_not_matter_to_the_program(tmp_path):
    """What is not computed does not enter the identity: a lock in a default argument, a
    comment, a renamed local."""
    lock = threading.Lock()

    def step_with_lock(key, x, params, t, x_t, _lock=lock):
        return x + 1.0, None

    def renamed(key, state, params, t, x_t):
        # a comment the other one does not have
        value = state + 1.0
        return value, None

    a = Algorithm(lambda k, p: jnp.zeros(1), step_with_lock, name="locked")
    b = Algorithm(lambda k, p: jnp.zeros(1), renamed, name="locked")
    run(a, None, seeds=[0], num_steps=2, checkpoint_dir=tmp_path)
    computed = []
    res = run(b, None, seeds=[0], num_steps=2, checkpoint_dir=tmp_path,
              on_chunk_end=computed.append)
    assert computed == [] and float(res.final_state[0, 0]) == 2.0      # resumed, complete


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


# ------------------------------------------------------------------------------------------
# params checked where they arrive; checkpoint folders; divergence advice
# ------------------------------------------------------------------------------------------


class _GainParams(NamedTuple):
    gain: float
    offset: float = 0.0


def _check_gain(params):
    gain = np.asarray(params.gain)
    if gain.ndim != 0 or not 0.0 < float(gain) < 1.0:
        raise ValueError(f"params.gain must be a scalar in (0, 1); got {params.gain!r}.")


_GAIN = Algorithm(lambda k, p: jnp.ones(2), lambda k, x, p, t, xt: (x * p.gain + p.offset, None),
                  name="gain", check_params=_check_gain)


def test_check_params_sees_replaced_and_swept_values():
    good = _GainParams(np.float32(0.5))
    run(_GAIN, good, seeds=[0], num_steps=2)
    with pytest.raises(ValueError, match=r"params\.gain must be a scalar in \(0, 1\)"):
        run(_GAIN, good._replace(gain=np.float32(1.5)), seeds=[0], num_steps=2)
    swept = _GainParams(np.asarray([0.5, 0.9, 2.0], np.float32), np.float32(0.0))
    with pytest.raises(ValueError, match=r"sweep entry 2: params\.gain"):
        run(_GAIN, swept, seeds=[0], num_steps=2, sweep="gain")
    ok = swept._replace(gain=np.asarray([0.5, 0.9], np.float32))
    assert run(_GAIN, ok, seeds=[0], num_steps=2, sweep="gain").final_state.shape == (2, 1, 2)
    with pytest.raises(ValueError, match="check_params"):
        Algorithm(lambda k, p: 0.0, lambda k, s, p, t, x: (s, None), name="bad",
                  check_params="not callable")


def test_checkpoint_dir_refuses_a_folder_holding_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("my own work")
    (tmp_path / "results.npz").write_bytes(b"")
    with pytest.raises(ValueError, match=r"holds files a checkpoint did not write: notes\.txt, "
                                         r"results\.npz"):
        run(_GAIN, _GainParams(np.float32(0.5)), seeds=[0], num_steps=2,
            checkpoint_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "results.npz"]
    empty = tmp_path / "empty"
    empty.mkdir()
    run(_GAIN, _GainParams(np.float32(0.5)), seeds=[0], num_steps=2, checkpoint_dir=empty)
    assert {p.name for p in empty.iterdir()} >= {"config.json", "programs.json", "state.npz",
                                                 "records_000000.npz"}
    run(_GAIN, _GainParams(np.float32(0.5)), seeds=[0], num_steps=2, checkpoint_dir=empty)
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ValueError, match="not a folder"):
        run(_GAIN, _GainParams(np.float32(0.5)), seeds=[0], num_steps=2,
            checkpoint_dir=tmp_path / "a_file")


def test_divergence_advice_is_the_algorithm_s_own():
    blow = Algorithm(lambda k, p: jnp.ones(1), lambda k, x, p, t, xt: (x * 1e30, None),
                     name="blow")
    with pytest.raises(DivergenceError) as info:
        run(blow, None, seeds=[0], num_steps=4)
    assert "step size" not in str(info.value) and "Check the inputs and params" in str(info.value)
    hinted = blow.replace(divergence_hint="reduce params.step_size")
    with pytest.raises(DivergenceError, match="blow: reduce params.step_size"):
        run(hinted, None, seeds=[0], num_steps=4)
