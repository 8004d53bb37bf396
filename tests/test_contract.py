"""The contract every public algorithm factory keeps (as jaxopt's common test loops over its
solvers): init / step jit and vmap; the state keeps its types and shapes; the same seed gives
bit-identical results whatever the chunking and the number of devices; a killed run resumes
bit-identically; a checkpoint refuses another configuration; bad params are refused by ``run``
with the field named. A factory is covered by one line in ``tests/contract_cases.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from decentral.runner import run, seed_keys

sys.path.insert(0, str(Path(__file__).parent))
from contract_cases import CASES, leaves_of, record_points  # noqa: E402

# one worker runs this module: its tests share module-level runs (pytest-xdist)
pytestmark = pytest.mark.xdist_group("contract")

SEEDS = [3, 1, 4]
CHILD = Path(__file__).with_name("_contract_child.py")
REPO = Path(__file__).resolve().parents[1]

_BUILT: dict = {}


def case_of(name):
    if name not in _BUILT:
        _BUILT[name] = CASES[name]()
    return _BUILT[name]


def _run(case, **kw):
    kw.setdefault("progress", False)
    return run(case.algorithm, case.params, SEEDS, case.num_steps, record_fn=case.record_fn,
               record_context=case.record_context, record_at=record_points(case), **kw)


def _assert_same(a, b):
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb, strict=True):
        if jax.numpy.issubdtype(getattr(x, "dtype", None), jax.dtypes.prng_key):
            x, y = jax.random.key_data(x), jax.random.key_data(y)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


class _Stop(Exception):
    pass


@pytest.fixture(params=sorted(CASES))
def case(request):
    return case_of(request.param)


def test_init_and_step_jit_vmap_and_keep_the_state_s_types(case):
    """Traced only (``eval_shape``: no compilation): init and step go through ``jit`` and
    ``vmap``, and a step returns a state of the types and shapes it was given. The runs of
    the other tests execute them jitted and vmapped."""
    alg, params = case.algorithm, case.params
    init_key, root = seed_keys(0)
    step_key = jax.random.fold_in(root, 0)
    state = jax.eval_shape(jax.jit(alg.init), init_key, params)
    new, _ = jax.eval_shape(jax.jit(alg.step), step_key, state, params, np.int32(0), None)
    spec = jax.tree_util.tree_map(lambda a: (a.shape, a.dtype), state)
    assert jax.tree_util.tree_map(lambda a: (a.shape, a.dtype), new) == spec
    keys = jax.random.split(init_key, 2)
    states = jax.eval_shape(jax.jit(jax.vmap(alg.init, in_axes=(0, None))), keys, params)
    stepped, _ = jax.eval_shape(jax.jit(jax.vmap(alg.step, in_axes=(0, 0, None, None, None))),
                                keys, states, params, np.int32(0), None)
    assert jax.tree_util.tree_map(lambda a: (a.shape[1:], a.dtype), stepped) == spec


_REFERENCE: dict = {}


def _reference(name):
    """The uninterrupted one-chunk run of a case (computed once per session)."""
    if name not in _REFERENCE:
        _REFERENCE[name] = _run(case_of(name), devices=jax.devices()[:1])
    return _REFERENCE[name]


def test_chunked_killed_and_resumed_runs_equal_the_whole_run(case, request, tmp_path):
    """Same seed, same numbers: whatever the chunking, after a kill and a resume, and on a
    second call; a checkpoint of this run refuses another configuration (before
    compiling it)."""
    reference = _reference(request.node.callspec.params["case"])
    chunk = case.num_steps // 4

    def stop(c):
        if c == 1:
            raise _Stop

    with pytest.raises(_Stop):
        _run(case, chunk_size=chunk, checkpoint_dir=tmp_path, on_chunk_end=stop)
    computed = []
    resumed = _run(case, chunk_size=chunk, checkpoint_dir=tmp_path,
                   on_chunk_end=computed.append)
    assert computed == [2, 3]
    _assert_same(resumed.records, reference.records)
    _assert_same(resumed.final_state, reference.final_state)
    again = _run(case)
    _assert_same(again.records, reference.records)
    with pytest.raises(ValueError, match="different run configuration"):
        run(case.other, case.params, SEEDS, case.num_steps, record_fn=case.record_fn,
            record_context=case.record_context, record_at=record_points(case), chunk_size=chunk,
            checkpoint_dir=tmp_path, progress=False)


def test_bad_params_are_refused_by_run_with_the_field_named(case):
    assert case.bad_params, "every factory has at least one bad-params case"
    for bad, pattern in case.bad_params:
        with pytest.raises(ValueError, match=pattern):
            run(case.algorithm, bad, SEEDS[:1], 4, record_fn=case.record_fn,
                record_context=case.record_context, progress=False)


def test_another_graph_of_the_same_structure_runs_as_data(case):
    if case.graph_swap is None:
        pytest.skip("this factory takes no graphs")
    swapped_params, built = case.graph_swap
    a = _run(case._replace(params=swapped_params))
    b = _run(case._replace(algorithm=built))
    _assert_same(a.records, b.records)
    _assert_same(a.final_state, b.final_state)


@pytest.mark.subprocess
def test_results_do_not_depend_on_the_number_of_devices(tmp_path):
    """Every case in one child with 2 CPU devices (its seeds split over them) gives the numbers
    of the one-device run here, bit for bit. The cases declared batch-dependent (dense mixing
    of non-dyadic weights, the grid-world learner: see ``Case.batch_invariant``) are not run
    there (nothing of theirs is held bit for bit); their sparse twins are."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["JAX_PLATFORMS"] = "cpu"
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    env.pop("JAX_ENABLE_X64", None)
    out = subprocess.run([sys.executable, str(CHILD), str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    invariant = sorted(name for name in CASES if case_of(name).batch_invariant)
    assert report["devices"] == 2 and sorted(report["cases"]) == invariant
    assert len(invariant) >= len(CASES) - 6, "declare a case batch-dependent only for a cause"
    differing = {}
    for name in invariant:
        there = np.load(tmp_path / f"{name}.npz")
        theirs = [there[f"leaf_{i:04d}"] for i in range(len(there.files))]
        reference = _reference(name)
        mine = leaves_of((reference.records, reference.final_state))
        same = len(mine) == len(theirs) and all(
            a.shape == b.shape and np.array_equal(a, b) for a, b in zip(mine, theirs,
                                                                       strict=True))
        if not same:
            differing[name] = max(float(np.max(np.abs(a.astype(float) - b.astype(float))))
                                  for a, b in zip(mine, theirs, strict=True)
                                  if a.shape == b.shape and a.size)
    assert not differing, differing
