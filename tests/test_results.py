"""Tests of decentral.results: atomic .npz + .json round trip, refusals, provenance."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import zipfile
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from decentral.results import (
    PROVENANCE_PACKAGES,
    load_results,
    provenance,
    read_npz,
    save_results,
    to_jsonable,
    write_npz_atomic,
)


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
    with pytest.raises(TypeError, match=r"config\.fn = <built-in function print>.*no JSON form"):
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
    assert set(p["versions"]) == set(PROVENANCE_PACKAGES) | {"python"}
    for name in ("numpy", "scipy", "jax", "jaxlib", "networkx", "matplotlib", "decentral"):
        assert p["versions"][name], name
    assert p["versions"]["numpy"] == np.__version__
    assert p["jax"]["default_prng_impl"] == "threefry2x32"
    assert isinstance(p["jax"]["enable_x64"], bool)
    assert p["jax"]["device_count"] >= 1
    assert p["git_commit"] is None or len(p["git_commit"]) >= 7
    json.dumps(p)  # serialisable


# ------------------------------------------------------------------------------------------
# to_jsonable: the one converter (non-finite floats -> strings, unknown types -> TypeError)
# ------------------------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: float
    y: int


def test_to_jsonable_converts_numpy_jax_and_friends():
    payload = {"a": np.float32(1.5), "b": np.int64(3), "c": np.bool_(False),
               "d": np.arange(3), "e": Path("x/y"), "f": Color.RED,
               "g": (1, 2), "h": float("nan"), "i": -np.inf, "j": np.array(2.0),
               "k": jnp.array([1.0, jnp.inf]), "l": Cfg(0.5, 2), "m": Point(1.0, 2),
               "n": {3, 1, 2}, "o": complex(1, -2), "p": np.dtype("float32"),
               "q": datetime.date(2024, 1, 2), "r": np.array([[np.nan, 1.0]]),
               "s": np.ones(2, dtype=ml_dtypes.bfloat16), 7: "int key", "t": jnp.float32}
    out = to_jsonable(payload)
    assert json.loads(json.dumps(out, allow_nan=False)) == {
        "a": 1.5, "b": 3, "c": False, "d": [0, 1, 2], "e": "x/y", "f": "red", "g": [1, 2],
        "h": "NaN", "i": "-Infinity", "j": 2.0, "k": [1.0, "Infinity"],
        "l": {"alpha": 0.5, "n": 2}, "m": {"x": 1.0, "y": 2}, "n": [1, 2, 3],
        "o": {"real": 1.0, "imag": -2.0}, "p": "float32", "q": "2024-01-02",
        "r": [["NaN", 1.0]], "s": [1.0, 1.0], "7": "int key", "t": "float32"}


@pytest.mark.parametrize("bad, where", [
    ({"fn": print}, "value.fn"),
    ({"nested": [1, object()]}, r"value.nested\[1\]"),
    ({"key": jax.random.key(0)}, "value.key"),
    ({(1, 2): 3}, "key"),
    ({"bytes": b"raw"}, "value.bytes"),
])
def test_to_jsonable_refuses_unknown_types_with_a_type_error(bad, where):
    with pytest.raises(TypeError, match=where):
        to_jsonable(bad)


def test_to_jsonable_output_is_strict_json():
    text = json.dumps(to_jsonable([np.nan, np.inf, -np.inf, np.float32("nan")]), allow_nan=False)
    assert text == '["NaN", "Infinity", "-Infinity", "NaN"]'


# ------------------------------------------------------------------------------------------
# extended dtypes and member names
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                   ml_dtypes.float8_e5m2])
def test_bfloat16_and_float8_round_trip(tmp_path, dtype):
    values = np.array([[0.0, -1.5, 2.0], [0.25, 3.0, -0.125]]).astype(dtype)
    jax_values = jnp.asarray(values)
    save_results(tmp_path / "r", {"w": values, "from_jax": jax_values, "plain": np.ones(2)},
                 {"dtype": np.dtype(dtype)})
    arrays, meta = load_results(tmp_path / "r")
    for name in ("w", "from_jax"):
        assert arrays[name].dtype == np.dtype(dtype), arrays[name].dtype
        np.testing.assert_array_equal(arrays[name].astype(np.float32),
                                      values.astype(np.float32))
    assert arrays["plain"].dtype == np.float64
    assert meta["arrays"]["w"] == {"shape": [2, 3], "dtype": np.dtype(dtype).name}
    assert meta["config"]["dtype"] == np.dtype(dtype).name
    # the raw npz holds the bits and the dtype record, loadable without pickling
    with np.load(tmp_path / "r.npz", allow_pickle=False) as raw:
        assert raw["w"].dtype == np.dtype(f"u{np.dtype(dtype).itemsize}")


def test_names_x_and_x_npy_do_not_collide(tmp_path):
    arrays = {"x": np.arange(3), "x.npy": np.arange(5) * 10, "x.npy.npy": np.zeros(1)}
    save_results(tmp_path / "r", arrays, {})
    loaded, _ = load_results(tmp_path / "r")
    assert set(loaded) == set(arrays)
    for key, value in arrays.items():
        np.testing.assert_array_equal(loaded[key], value)
    path = tmp_path / "raw.npz"
    write_npz_atomic(path, arrays)
    assert {k: v.tolist() for k, v in read_npz(path).items()} == {
        k: v.tolist() for k, v in arrays.items()}


def test_reserved_name_and_foreign_members_refused(tmp_path):
    with pytest.raises(ValueError, match="reserved"):
        save_results(tmp_path / "r", {"__dtypes__": np.zeros(1)}, {})
    path = tmp_path / "odd.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("notes.txt", "hello")
    with pytest.raises(ValueError, match="not a .npy array"):
        read_npz(path)


def test_load_refuses_a_dtype_or_shape_mismatch(tmp_path):
    save_results(tmp_path / "r", {"a": np.zeros((2, 2), dtype=ml_dtypes.bfloat16)}, {})
    meta = json.loads((tmp_path / "r.json").read_text())
    meta["arrays"]["a"]["dtype"] = "float8_e4m3fn"
    (tmp_path / "r.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not written together"):
        load_results(tmp_path / "r")
    meta["arrays"]["a"] = {"shape": [4], "dtype": "bfloat16"}
    (tmp_path / "r.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not written together"):
        load_results(tmp_path / "r")


def test_written_files_follow_the_umask(tmp_path):
    import os
    import stat

    from decentral.results import atomic_write_bytes

    old = os.umask(0o022)
    try:
        atomic_write_bytes(tmp_path / "a.bin", lambda f: f.write(b"x"))
        assert stat.S_IMODE((tmp_path / "a.bin").stat().st_mode) == 0o644
        os.umask(0o077)
        atomic_write_bytes(tmp_path / "b.bin", lambda f: f.write(b"x"))
        assert stat.S_IMODE((tmp_path / "b.bin").stat().st_mode) == 0o600
    finally:
        os.umask(old)
