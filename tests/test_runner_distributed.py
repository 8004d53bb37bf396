"""``run`` over several devices and processes: agents split over emulated CPU devices, and a
2-process ``jax.distributed`` job on 127.0.0.1, against the single-device run seed for seed.

Both start ``tests/_distributed_child.py`` (a fresh Python: device counts and the distributed
runtime are fixed when JAX starts). The child runs every case of its ``algorithms()`` table in
every layout it names, float64, and a checkpointed run interrupted after its second chunk and
resumed; this process runs the same cases on one device.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from children import load_child

from decentral.runner import run

CHILD = Path(__file__).with_name("_distributed_child.py")
REPO = Path(__file__).resolve().parents[1]


def _child_module():
    return load_child(CHILD)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(pid: int, nproc: int, port: int, out: Path) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["JAX_PLATFORMS"] = "cpu"
    for name in ("XLA_FLAGS", "JAX_ENABLE_X64", "JAX_NUM_CPU_DEVICES"):
        env.pop(name, None)
    return subprocess.Popen([sys.executable, str(CHILD), str(pid), str(nproc), str(port),
                             str(out)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _run_job(nproc: int, out: Path) -> list[dict]:
    port = _free_port()
    procs = [_start(pid, nproc, port, out) for pid in range(nproc)]
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=240)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, log in zip(procs, logs, strict=True):
        assert p.returncode == 0, log[-3000:]
    return [dict(np.load(out / f"p{pid}.npz")) for pid in range(nproc)]


def _references(child) -> dict[str, np.ndarray]:
    """Every case on this process's first device only (no split of any kind)."""
    refs = {}
    cases = child.algorithms()
    for name, (alg, params, _) in cases.items():
        res = run(alg, params, child.SEEDS, devices=jax.devices("cpu")[:1], **child.RUN_KW)
        for i, value in enumerate(jax.tree_util.tree_leaves(res.records)):
            refs[f"{name}.{i}"] = np.asarray(value)
    refs["resumed.0"] = refs["consensus_both.0"]
    return refs


def _check_split(got: dict) -> None:
    """The state of a split layout lives in blocks of agents inside the compiled run."""
    assert str(got["spec.agents"]) == "(None, 'agents')"
    assert str(got["spec.(2, 2)"]) == "('seeds', 'agents')"
    assert str(got["spec.None"]) == "('seeds',)"      # 5 seeds, 4 devices


def _check_against(got: dict, refs: dict) -> None:
    for name, ref in refs.items():
        key = "resumed.x" if name == "resumed.0" else name
        value = got[key]
        assert value.shape == ref.shape, name
        scale = max(float(np.max(np.abs(ref))), 1e-300)
        assert float(np.max(np.abs(value - ref))) <= 1e-12 * scale, name


@pytest.mark.subprocess
def test_agents_split_over_emulated_devices_match_one_device(tmp_path, x64):
    (got,) = _run_job(1, tmp_path)
    assert int(got["process_count"]) == 1 and int(got["device_count"]) == 4
    _check_split(got)
    _check_against(got, _references(_child_module()))


@pytest.mark.subprocess
def test_two_process_job_matches_one_process_seed_for_seed(tmp_path, x64):
    results = _run_job(2, tmp_path)
    refs = _references(_child_module())
    for got in results:          # every process holds the whole result (all seeds)
        assert int(got["process_count"]) == 2 and int(got["device_count"]) == 4
        _check_split(got)
        _check_against(got, refs)
    # the interrupted checkpoint: process 0 wrote it, both resumed it
    files = str(results[0]["files_after_stop"]).split(",")
    assert "records_000001.npz" in files and "records_000002.npz" not in files
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == [
        "config.json", "programs.json", "records_000000.npz", "records_000001.npz",
        "records_000002.npz", "records_000003.npz", "state.npz"]
