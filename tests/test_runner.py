"""Tests of decentral.runner.run: keys, thinning, chunking, sweeps, checkpoints, errors."""

from __future__ import annotations

import json
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import decentral.runner.compile as runner_compile
from decentral.runner import (
    Algorithm,
    DivergenceError,
    DivergenceWarning,
    RunResult,
    run,
    seed_keys,
    stack_params,
    step_key,
)

# ------------------------------------------------------------------------------------------
# toy algorithms (module level, so the runner's compile cache is shared between tests)
# ------------------------------------------------------------------------------------------


class WalkState(NamedTuple):
    x: jax.Array  # [N, d]
    count: jax.Array  # int32 scalar


class WalkParams(NamedTuple):
    alpha: jax.Array
    decay: jax.Array


def _walk_init(key, params):
    return WalkState(jax.random.normal(key, (3, 2)), jnp.zeros((), jnp.int32))


def _walk_step(key, state, params, t, x_t):
    noise = jax.random.normal(key, state.x.shape, state.x.dtype)
    x = params.decay * state.x + params.alpha * noise
    return WalkState(x, state.count + 1), noise


WALK = Algorithm(_walk_init, _walk_step, name="walk")
P0 = WalkParams(alpha=np.float32(0.5), decay=np.float32(0.9))


def _record_x(state):
    return state.x


def _record_noise(state, ctx):
    return ctx.info


def _walk_numpy(seed, num_steps, alpha, decay):
    """Reference loop with the documented key derivation (step_key) and the same draws."""
    init_key, _ = seed_keys(seed)
    x = np.asarray(jax.random.normal(init_key, (3, 2)), dtype=np.float64)
    out = []
    for t in range(num_steps):
        noise = np.asarray(jax.random.normal(step_key(seed, t), (3, 2)), dtype=np.float64)
        x = decay * x + alpha * noise
        out.append(x.copy())
    return np.stack(out)


class AddState(NamedTuple):
    total: jax.Array
    last_t: jax.Array


def _add_init(key, params):
    return AddState(jnp.zeros(4), jnp.full((), -1, jnp.int32))


def _add_step(key, state, params, t, x_t):
    return AddState(state.total + params * x_t, t), None


ADD = Algorithm(_add_init, _add_step, name="add_xs")


# ------------------------------------------------------------------------------------------
# keys and determinism
# ------------------------------------------------------------------------------------------


def test_same_seed_bit_identical_and_seeds_differ():
    a = run(WALK, P0, seeds=[0, 1, 2], num_steps=40, record_every=4, record_fn=_record_x)
    b = run(WALK, P0, seeds=[0, 1, 2], num_steps=40, record_every=4, record_fn=_record_x)
    assert isinstance(a, RunResult)
    assert a.records.shape == (3, 10, 3, 2)
    np.testing.assert_array_equal(a.records, b.records)
    np.testing.assert_array_equal(a.final_state.x, b.final_state.x)
    for i in range(3):
        for j in range(i + 1, 3):
            assert not np.allclose(a.records[i], a.records[j])
    # a seed's trajectory does not depend on which other seeds share the batch
    c = run(WALK, P0, seeds=[7, 2], num_steps=40, record_every=4, record_fn=_record_x)
    np.testing.assert_array_equal(c.records[1], a.records[2])
    np.testing.assert_array_equal(c.seeds, [7, 2])
    assert int(a.final_state.count[0]) == 40


def test_key_derivation_matches_documented_reference():
    res = run(WALK, P0, seeds=[5], num_steps=12, record_fn=_record_x)
    ref = _walk_numpy(5, 12, 0.5, 0.9)
    np.testing.assert_allclose(res.records[0], ref, rtol=1e-5, atol=1e-6)


def test_chunking_invariance_bit_identical():
    kw = dict(seeds=[3, 4], num_steps=100, record_every=5, record_fn=_record_x)
    whole = run(WALK, P0, chunk_size=100, **kw)
    for cs in (10, 50, 30):  # 30 does not divide 100: shorter last chunk
        other = run(WALK, P0, chunk_size=cs, **kw)
        np.testing.assert_array_equal(other.records, whole.records)
        np.testing.assert_array_equal(other.final_state.x, whole.final_state.x)


def test_record_every_thinning_and_shapes():
    short = run(WALK, P0, seeds=[1], num_steps=100, record_every=10, record_fn=_record_x)
    long = run(WALK, P0, seeds=[1], num_steps=1000, record_every=100, record_fn=_record_x)
    assert short.records.shape == long.records.shape == (1, 10, 3, 2)
    np.testing.assert_array_equal(short.record_steps, np.arange(10, 101, 10))
    np.testing.assert_array_equal(long.record_steps, np.arange(100, 1001, 100))
    # thinned records are exactly the dense trajectory at the record steps
    dense = run(WALK, P0, seeds=[1], num_steps=100, record_every=1, record_fn=_record_x)
    np.testing.assert_array_equal(dense.records[:, short.record_steps - 1], short.records)
    np.testing.assert_array_equal(long.final_state.x, long.records[:, -1])


def test_progress_bar_ticks_over_chunks(capsys):
    res = run(WALK, P0, seeds=[1], num_steps=100, record_every=10, record_fn=_record_x,
              chunk_size=20, progress=True)
    err = capsys.readouterr().err
    assert "walk" in err and "5/5" in err
    quiet = run(WALK, P0, seeds=[1], num_steps=100, record_every=10, record_fn=_record_x,
                chunk_size=20, progress=False)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(res.records, quiet.records)


def test_record_initial_and_default_record_fn():
    res = run(WALK, P0, seeds=[0, 9], num_steps=6, record_every=3, record_initial=True)
    np.testing.assert_array_equal(res.record_steps, [0, 3, 6])
    assert isinstance(res.records, WalkState)
    assert res.records.x.shape == (2, 3, 3, 2)
    np.testing.assert_array_equal(res.records.count, [[0, 3, 6], [0, 3, 6]])
    init_key, _ = seed_keys(9)
    x0 = np.asarray(jax.random.normal(init_key, (3, 2)))
    np.testing.assert_array_equal(res.records.x[1, 0], x0)


def test_record_fn_with_info_sees_the_step_draws():
    res = run(WALK, P0, seeds=[2], num_steps=8, record_every=2, record_fn=_record_noise,
              record_initial=True, record_context=True)
    assert res.records.shape == (1, 5, 3, 2)
    np.testing.assert_array_equal(res.records[0, 0], 0.0)  # zeros for the initial record
    for r, t in enumerate([1, 3, 5, 7], start=1):  # the Info of the step that ended the block
        expect = jax.random.normal(step_key(2, t), (3, 2))
        np.testing.assert_array_equal(res.records[0, r], np.asarray(expect))


def test_xs_are_scanned_inputs():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(21, 4)).astype(np.float32)  # longer than num_steps is fine
    res = run(ADD, np.float32(2.0), seeds=[0, 1], num_steps=20, record_every=4, xs=xs,
              chunk_size=8)
    expect = 2.0 * np.cumsum(xs[:20].astype(np.float64), axis=0)[3::4]
    np.testing.assert_allclose(res.records.total[0], expect, rtol=1e-5)
    np.testing.assert_array_equal(res.records.total[0], res.records.total[1])
    np.testing.assert_array_equal(res.records.last_t[0], [3, 7, 11, 15, 19])


def test_params_sweep_equals_separate_runs(x64):
    alphas = [0.1, 0.5, 1.3]
    swept = stack_params([WalkParams(np.float64(a), np.float64(0.8)) for a in alphas])
    res = run(WALK, swept, seeds=[0, 1], num_steps=30, record_every=3, sweep=True,
              record_fn=_record_x, chunk_size=15)
    assert res.records.shape == (3, 2, 10, 3, 2)
    assert res.records.dtype == np.float64
    for p, a in enumerate(alphas):
        single = run(WALK, WalkParams(np.float64(a), np.float64(0.8)), seeds=[0, 1],
                     num_steps=30, record_every=3, record_fn=_record_x)
        np.testing.assert_allclose(res.records[p], single.records, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res.final_state.x[p], single.final_state.x, rtol=1e-12)
    assert not np.allclose(res.records[0], res.records[1])


_TRACES: list[int] = []


def _counting_step(key, state, params, t, x_t):
    _TRACES.append(1)  # runs once per trace of the user's function, not per step
    return _walk_step(key, state, params, t, x_t)


COUNTING = Algorithm(_walk_init, _counting_step, name="counting")


def test_compiles_once_across_chunks_and_calls():
    _TRACES.clear()
    run(COUNTING, P0, seeds=[0, 1], num_steps=50, chunk_size=10, record_fn=_record_x)
    assert len(_TRACES) == 1  # 5 chunks, the chunk start is a traced argument
    other = WalkParams(np.float32(0.3), np.float32(0.5))
    run(COUNTING, other, seeds=[2, 3], num_steps=80, chunk_size=10, record_fn=_record_x)
    assert len(_TRACES) == 1  # new params values, seeds and horizon: no recompilation
    chunk = runner_compile._BY_IDENTITY[next(reversed(runner_compile._BY_IDENTITY))].chunk
    compiled_chunks = chunk.func._cache_size()
    run(COUNTING, P0, seeds=[0, 1], num_steps=55, chunk_size=10, record_fn=_record_x)
    # a shorter last chunk compiles once more (documented), from the program traced once
    assert len(_TRACES) == 1
    assert chunk.func._cache_size() == compiled_chunks + 1
    # the same algorithm built anew (equal traced program) reuses the compilation
    again = Algorithm(_walk_init, lambda *args: _counting_step(*args), name="counting")
    assert again != COUNTING
    run(again, P0, seeds=[0, 1], num_steps=50, chunk_size=10, record_fn=_record_x)
    assert len(_TRACES) == 2 and chunk.func._cache_size() == compiled_chunks + 1


def test_cpu_compiler_options_reach_the_compiler_and_keep_the_numbers():
    legacy = WALK.replace(cpu_compiler_options={"xla_cpu_use_fusion_emitters": False})
    assert legacy.cpu_compiler_options == (("xla_cpu_use_fusion_emitters", False),)
    assert hash(legacy) != hash(WALK) and legacy != WALK       # its own compiled programs
    kw = dict(seeds=[0, 4], num_steps=30, record_every=3, record_fn=_record_x)
    a, b = run(legacy, P0, **kw), run(WALK, P0, **kw)
    np.testing.assert_allclose(a.records, b.records, rtol=1e-6, atol=1e-6)
    # the options are passed on: XLA refuses an unknown one (CPU devices here)
    bogus = WALK.replace(cpu_compiler_options={"xla_no_such_option_for_a_test": True})
    with pytest.raises(Exception, match="xla_no_such_option_for_a_test"):
        run(bogus, P0, seeds=[0], num_steps=3)


@pytest.mark.parametrize("options", [{1: True}, {"xla_x": [1]}, [("a", 1, 2)], "xla_x"])
def test_cpu_compiler_options_bad_input(options):
    with pytest.raises(ValueError, match="cpu_compiler_options"):
        Algorithm(_walk_init, _walk_step, name="walk", cpu_compiler_options=options)


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------


def _exploding_init(key, params):
    raise AssertionError("init must not be traced for a refused run")


NEVER = Algorithm(_exploding_init, _walk_step, name="never", max_horizon=50)


def test_max_horizon_refused_before_compile():
    with pytest.raises(ValueError, match="max_horizon = 50"):
        run(NEVER, P0, seeds=[0], num_steps=51)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_steps=0), "num_steps must be >= 1"),
        (dict(num_steps=2.5), "num_steps must be an integer"),
        (dict(num_steps=10, record_every=3), "does not divide num_steps"),
        (dict(num_steps=12, record_every=3, chunk_size=4), "not a multiple of record_every"),
        (dict(num_steps=12, chunk_size=0), "chunk_size must be >= 1"),
        (dict(seeds=[]), "seeds is empty"),
        (dict(seeds=[1, 2, 1]), "duplicates"),
        (dict(seeds=[0.5, 1.0]), "seeds must be integers"),
        (dict(seeds=3), "single integer"),
        (dict(seeds=[-1]), r"\[0, 2\*\*32 - 1\]"),
        (dict(num_steps=10, xs=np.zeros((9, 4))), "leading axis 9 < num_steps = 10"),
        (dict(on_divergence="ignore"), "on_divergence"),
    ],
)
def test_bad_input_raises_value_error(kwargs, match):
    base = dict(seeds=[0], num_steps=4)
    base.update(kwargs)
    seeds = base.pop("seeds")
    num_steps = base.pop("num_steps")
    with pytest.raises(ValueError, match=match):
        run(NEVER, P0, seeds, num_steps, **base)


def test_bad_params_raise_value_error():
    with pytest.raises(ValueError, match=r"params\.alpha contains NaN"):
        run(NEVER, WalkParams(np.float32(np.nan), np.float32(0.9)), seeds=[0], num_steps=4)
    with pytest.raises(ValueError, match="inconsistent leading axis"):
        run(NEVER, WalkParams(np.ones(3), np.ones(2)), seeds=[0], num_steps=4, sweep=True)
    with pytest.raises(ValueError, match="scalar"):
        run(NEVER, WalkParams(np.ones(3), np.float32(0.9)), seeds=[0], num_steps=4, sweep=True)


# ------------------------------------------------------------------------------------------
# divergence
# ------------------------------------------------------------------------------------------


class DivState(NamedTuple):
    x: jax.Array
    doomed: jax.Array


def _div_init(key, params):
    return DivState(jnp.ones(2), jax.random.uniform(key) > 0.5)


def _div_step(key, state, params, t, x_t):
    blow = state.doomed & (t == params)
    return DivState(jnp.where(blow, jnp.nan, state.x), state.doomed), None


DIVERGE = Algorithm(_div_init, _div_step, name="diverge")


def _doomed_seeds(seeds):
    return [s for s in seeds if bool(jax.random.uniform(seed_keys(s)[0]) > 0.5)]


def test_divergence_is_reported_with_chunk_and_seeds():
    seeds = list(range(8))
    doomed = _doomed_seeds(seeds)
    assert 0 < len(doomed) < len(seeds)
    with pytest.raises(DivergenceError, match=r"chunk 3 \(updates 30\.\.39\)") as info:
        run(DIVERGE, np.int32(37), seeds=seeds, num_steps=60, chunk_size=10)
    assert info.value.seeds == doomed
    assert info.value.chunk == 3 and info.value.step_range == (30, 39)
    assert info.value.first_step == [37] * len(doomed)  # the exact update, not only the chunk
    assert info.value.where == ["state"] * len(doomed)
    assert isinstance(info.value, ArithmeticError)
    with pytest.warns(DivergenceWarning, match="chunk 3"):
        res = run(DIVERGE, np.int32(37), seeds=seeds, num_steps=60, chunk_size=10,
                  on_divergence="warn")
    bad = np.isnan(res.final_state.x).any(axis=1)
    assert np.flatnonzero(bad).tolist() == doomed


# ------------------------------------------------------------------------------------------
# checkpoints
# ------------------------------------------------------------------------------------------


class _Stop(Exception):
    pass


def _ckpt_kwargs(**extra):
    kw = dict(seeds=[0, 1, 2], num_steps=60, record_every=3, chunk_size=12, record_fn=_record_x,
              record_initial=True)
    kw.update(extra)
    return kw


def test_checkpoint_resume_in_process(tmp_path):
    reference = run(WALK, P0, **_ckpt_kwargs())

    def stop_after_2(c):
        if c == 2:
            raise _Stop

    with pytest.raises(_Stop):
        run(WALK, P0, checkpoint_dir=tmp_path, on_chunk_end=stop_after_2, **_ckpt_kwargs())
    meta = json.loads((tmp_path / "config.json").read_text())
    assert meta["config"]["algorithm"]["name"] == "walk" and "provenance" in meta

    computed = []
    resumed = run(WALK, P0, checkpoint_dir=tmp_path, on_chunk_end=computed.append,
                  **_ckpt_kwargs())
    assert computed == [3, 4]  # chunks 0..2 were not recomputed
    np.testing.assert_array_equal(resumed.records, reference.records)
    np.testing.assert_array_equal(resumed.final_state.x, reference.final_state.x)
    np.testing.assert_array_equal(resumed.record_steps, reference.record_steps)

    again = []
    done = run(WALK, P0, checkpoint_dir=tmp_path, on_chunk_end=again.append, **_ckpt_kwargs())
    assert again == []  # complete checkpoint: returned without computing
    np.testing.assert_array_equal(done.records, reference.records)
    np.testing.assert_array_equal(done.final_state.count, reference.final_state.count)


def test_checkpoint_mismatch_refused(tmp_path):
    run(WALK, P0, checkpoint_dir=tmp_path, **_ckpt_kwargs())
    with pytest.raises(ValueError, match="different run configuration.*params"):
        run(WALK, WalkParams(np.float32(0.4), np.float32(0.9)), checkpoint_dir=tmp_path,
            **_ckpt_kwargs())
    with pytest.raises(ValueError, match="differ: .*num_steps: checkpoint 60 vs now 72"):
        run(WALK, P0, checkpoint_dir=tmp_path, **_ckpt_kwargs(num_steps=72))
    with pytest.raises(ValueError, match="seeds"):
        run(WALK, P0, checkpoint_dir=tmp_path, **_ckpt_kwargs(seeds=[0, 1, 3]))
    legacy = WALK.replace(cpu_compiler_options={"xla_cpu_use_fusion_emitters": False})
    with pytest.raises(ValueError, match="cpu_compiler_options"):
        run(legacy, P0, checkpoint_dir=tmp_path, **_ckpt_kwargs())


def test_corrupted_checkpoint_refused(tmp_path):
    def stop_after_1(c):
        if c == 1:
            raise _Stop

    with pytest.raises(_Stop):
        run(WALK, P0, checkpoint_dir=tmp_path, on_chunk_end=stop_after_1, **_ckpt_kwargs())
    state_file = tmp_path / "state.npz"
    good = state_file.read_bytes()
    state_file.write_bytes(good[: len(good) // 2])  # truncated
    with pytest.raises(ValueError, match="corrupted"):
        run(WALK, P0, checkpoint_dir=tmp_path, **_ckpt_kwargs())
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0xFF  # one flipped bit inside the stored arrays: zip CRC fails
    state_file.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="corrupted"):
        run(WALK, P0, checkpoint_dir=tmp_path, **_ckpt_kwargs())
    state_file.write_bytes(good)
    (tmp_path / "records_000001.npz").write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="corrupted"):
        run(WALK, P0, checkpoint_dir=tmp_path, **_ckpt_kwargs())
    (tmp_path / "records_000001.npz").unlink()
    with pytest.raises(ValueError, match="missing"):
        run(WALK, P0, checkpoint_dir=tmp_path, **_ckpt_kwargs())


class KeyState(NamedTuple):
    key: jax.Array
    x: jax.Array


def _key_init(key, params):
    return KeyState(key, jnp.zeros(()))


def _key_step(key, state, params, t, x_t):
    carried, sub = jax.random.split(state.key)  # a carried key chain in the state
    return KeyState(carried, state.x + jax.random.normal(sub) + jax.random.normal(key)), None


KEYED = Algorithm(_key_init, _key_step, name="keyed_state")


def test_checkpoint_with_prng_key_leaves(tmp_path):
    kw = dict(seeds=[4, 5], num_steps=20, chunk_size=5, record_fn=lambda s: s.x)
    ref = run(KEYED, None, **kw)

    def stop(c):
        if c == 1:
            raise _Stop

    with pytest.raises(_Stop):
        run(KEYED, None, checkpoint_dir=tmp_path, on_chunk_end=stop, **kw)
    res = run(KEYED, None, checkpoint_dir=tmp_path, **kw)
    np.testing.assert_array_equal(res.records, ref.records)
    np.testing.assert_array_equal(
        jax.random.key_data(res.final_state.key), jax.random.key_data(ref.final_state.key)
    )


def test_fingerprint_sees_through_jit_and_ignores_memory_addresses():
    from decentral.runner import trace_program
    from decentral.runner.fingerprint import hash_tree as _hash_tree

    plus, minus = jax.jit(lambda s: s + 1.0), jax.jit(lambda s: s - 1.0)
    x = jnp.ones(3)
    assert trace_program(plus, x).digest != trace_program(minus, x).digest
    assert trace_program(plus, x).digest == trace_program(jax.jit(lambda y: y + 1.0), x).digest
    # two function objects (two addresses, as in two processes) with the same code
    first = jax.tree_util.Partial((lambda: lambda a, b: a + b)(), 1.0)
    second = jax.tree_util.Partial((lambda: lambda a, b: a + b)(), 1.0)
    assert first.func is not second.func
    assert " at 0x" in str(jax.tree_util.tree_structure(first))
    assert _hash_tree(first) == _hash_tree(second)


def test_initial_states_are_drawn_one_seed_per_device_at_a_time():
    """Drawing a random state holds several state-sized temporaries (the counter-based
    generator's words); the compiled init draws one seed per device at a time, so its
    temporaries stay below one copy of every seed's state (they were 3.3 copies for 8 seeds
    drawn at once), and the states are those of each seed drawn alone."""
    import decentral.graphs as g
    from decentral.consensus import consensus, consensus_params

    n, d, seeds = 1 << 14, 4, list(range(8))
    alg = consensus(g.static(g.exponential(n, sparse=True), rule="row"), shape=d,
                    dtype=jnp.float32)
    res = run(alg, consensus_params(), seeds=seeds, num_steps=1, record_every=1,
              progress=False)
    init = runner_compile._BY_IDENTITY[next(reversed(runner_compile._BY_IDENTITY))].init
    lowered = init.func.lower(*init.args, np.asarray(seeds, np.uint32), consensus_params(),
                              None)
    temp = lowered.compile().memory_analysis().temp_size_in_bytes
    state_bytes = len(seeds) * n * d * 4
    assert temp <= state_bytes, (temp, state_bytes)
    alone = run(alg, consensus_params(), seeds=[5], num_steps=1, record_every=1,
                progress=False)
    np.testing.assert_array_equal(np.asarray(res.records.x)[5, 0],
                                  np.asarray(alone.records.x)[0, 0])
