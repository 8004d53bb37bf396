"""use_all_cpu_cores: the device count is fixed when JAX starts its backend, so each case runs in
a fresh Python."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_BEFORE = """
import jax
from decentral.devices import use_all_cpu_cores
print(use_all_cpu_cores(3), len(jax.devices("cpu")))
"""

_AFTER = """
import warnings
import jax, jax.numpy as jnp
from decentral.devices import use_all_cpu_cores
jnp.zeros(1).block_until_ready()          # the backend has started
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    n = use_all_cpu_cores(3)
print(n, len(jax.devices("cpu")), any("after JAX started" in str(w.message) for w in caught))
"""


def _python(code: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300, check=True)
    return out.stdout.split()


@pytest.mark.subprocess
def test_device_count_set_before_the_backend_starts():
    assert _python(_BEFORE) == ["3", "3"]


@pytest.mark.subprocess
def test_too_late_warns_and_reports_the_count_in_force():
    assert _python(_AFTER) == ["1", "1", "True"]
