"""Tests of decentral.results: atomic .npz + .json round trip, refusals, provenance."""

from __future__ import annotations

import json
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import pytest

from decentral.results import load_results, provenance, save_results


class Cfg(NamedTuple):
    alpha: float
    n: int


def test_round_trip(tmp_path):
    arrays = {
        "mse": np.linspace(0.0, 1.0, 7),
        "counts": np.arange(12, dtype=np.int32).reshape(3, 4),
        "flags": np.array([True, False]),
        "jax_array": jnp.ones((2, 2)),
        "file": np.zeros(1),  # a name np.savez itself would choke on
    }
    config = {"algorithm": "td0", "params": Cfg(0.1, 5), "grid": np.array([1, 2]), "seeds": [3, 4]}
    save_results(tmp_path / "sub" / "run1", arrays, config)
    assert (tmp_path / "sub" / "run1.npz").exists() and (tmp_path / "sub" / "run1.json").exists()
    loaded, meta = load_results(tmp_path / "sub" / "run1.npz")  # suffix is stripped
    assert set(loaded) == set(arrays)
    for key, value in arrays.items():
        np.testing.assert_array_equal(loaded[key], np.asarray(value))
        assert loaded[key].dtype == np.asarray(value).dtype
    assert meta["config"]["params"] == {"alpha": 0.1, "n": 5}
    assert meta["config"]["grid"] == [1, 2]
    assert meta["seeds"] == [3, 4]
    assert meta["arrays"]["counts"] == {"shape": [3, 4], "dtype": "<i4"}
    assert not list((tmp_path / "sub").glob("*.tmp"))  # no temp files left behind


def test_object_arrays_and_bad_config_refused(tmp_path):
    with pytest.raises(ValueError, match="dtype object"):
        save_results(tmp_path / "r", {"ragged": np.array([[1], [1, 2]], dtype=object)}, {})
    with pytest.raises(ValueError, match="cannot be written to JSON"):
        save_results(tmp_path / "r", {"a": np.zeros(2)}, {"fn": print})
    assert not (tmp_path / "r.npz").exists() and not (tmp_path / "r.json").exists()


def test_load_refuses_missing_or_mismatched(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_results(tmp_path / "nothing")
    save_results(tmp_path / "r", {"a": np.zeros(2)}, {}, seeds=[0])
    meta = json.loads((tmp_path / "r.json").read_text())
    assert meta["seeds"] == [0]
    meta["arrays"]["b"] = {"shape": [1], "dtype": "<f8"}
    (tmp_path / "r.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not written together"):
        load_results(tmp_path / "r")
    (tmp_path / "r.npz").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="corrupted"):
        load_results(tmp_path / "r")


def test_provenance_keys():
    p = provenance()
    assert set(p) >= {"versions", "jax", "git_commit", "date", "platform"}
    for name in ("numpy", "scipy", "jax", "jaxlib", "networkx", "decentral"):
        assert name in p["versions"]
    assert p["versions"]["numpy"] == np.__version__
    assert p["jax"]["default_prng_impl"] == "threefry2x32"
    assert isinstance(p["jax"]["enable_x64"], bool)
    assert p["jax"]["device_count"] >= 1
    assert p["git_commit"] is None or len(p["git_commit"]) >= 7
    json.dumps(p)  # serialisable
