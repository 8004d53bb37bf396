"""Runner tests that need a fresh Python: a SIGKILLed run resumes bit-identically, and a run
sharded over 4 emulated CPU devices (6 seeds, padded) matches the single-device run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from children import load_child

from decentral.results import load_results
from decentral.runner import run

CHILD = Path(__file__).with_name("_runner_child.py")
REPO = Path(__file__).resolve().parents[1]


def _child_module():
    return load_child(CHILD)


def _run_child(args, extra_env=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("XLA_FLAGS", None)
    env.pop("JAX_ENABLE_X64", None)
    if extra_env:
        env.update(extra_env)
    return subprocess.run([sys.executable, str(CHILD), *args], env=env, capture_output=True,
                          text=True, timeout=240, check=False)


def _reference(child, seeds):
    import jax

    # the parent's run is the single-device reference, whatever devices this process has
    return child.arrays_of(run(child.ALGORITHM, child.PARAMS, seeds, progress=False,
                               devices=jax.devices("cpu")[:1], **child.RUN_KW))


@pytest.mark.subprocess
def test_sigkilled_run_resumes_bit_identically(tmp_path):
    child = _child_module()
    ckpt = tmp_path / "ckpt"
    killed = _run_child(["kill", str(tmp_path / "out"), str(ckpt), "2"])
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not (tmp_path / "out.npz").exists()  # it died before saving anything
    assert (ckpt / "state.npz").exists()

    resumed = _run_child(["kill", str(tmp_path / "out"), str(ckpt), "-1"])
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    arrays, meta = load_results(tmp_path / "out")
    n_chunks = child.RUN_KW["num_steps"] // child.RUN_KW["chunk_size"]
    assert meta["config"]["computed_chunks"] == list(range(3, n_chunks))  # 0..2 came from disk

    ref = _reference(child, child.KILL_SEEDS)
    assert set(arrays) == set(ref)
    for key in ref:
        np.testing.assert_array_equal(arrays[key], ref[key], err_msg=key)


@pytest.mark.subprocess
def test_sharded_over_four_devices_matches_single_device(tmp_path):
    child = _child_module()
    out = _run_child(["devices", str(tmp_path / "dev"), str(tmp_path / "ckpt")],
                     {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"})
    assert out.returncode == 0, out.stderr[-2000:]
    arrays, meta = load_results(tmp_path / "dev")
    assert meta["config"]["device_count"] == 4
    assert meta["provenance"]["jax"]["device_count"] == 4

    ref = _reference(child, child.DEVICE_SEEDS)
    assert arrays["rec_x"].shape == ref["rec_x"].shape == (6, 24, 4, 2)  # padding dropped
    np.testing.assert_array_equal(arrays["seeds"], ref["seeds"])
    np.testing.assert_array_equal(arrays["rec_bits"], ref["rec_bits"])  # identical raw draws
    np.testing.assert_allclose(arrays["rec_normal"], ref["rec_normal"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(arrays["rec_x"], ref["rec_x"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arrays["final_x"], ref["final_x"], rtol=1e-5, atol=1e-6)

    # the 4-device checkpoint (6 seeds padded to 8, stopped after chunk 2) resumes on 1 device
    resumed = child.run(child.ALGORITHM, child.PARAMS, child.DEVICE_SEEDS, progress=False,
                        checkpoint_dir=tmp_path / "ckpt", **child.RUN_KW)
    np.testing.assert_array_equal(resumed.records["bits"], ref["rec_bits"])
    np.testing.assert_allclose(resumed.records["x"], ref["rec_x"], rtol=1e-5, atol=1e-6)
    # the traced programs' texts are identical in the two processes (the fingerprint's basis)
    child.run(child.ALGORITHM, child.PARAMS, child.DEVICE_SEEDS, progress=False,
              checkpoint_dir=tmp_path / "here", **child.RUN_KW)
    there = json.loads((tmp_path / "ckpt" / "programs.json").read_text())
    here = json.loads((tmp_path / "here" / "programs.json").read_text())
    assert there == here and len(here["step"].splitlines()) > 10
