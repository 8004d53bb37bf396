"""Shared pytest configuration: hypothesis profile, float64 fixture, headless matplotlib."""

from __future__ import annotations

import contextlib
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import jax  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Compiled properties: the first jit call blows hypothesis' 200 ms deadline; derandomize so a
# red CI run replays exactly; keep the example count modest.
settings.register_profile("ci", deadline=None, derandomize=True, max_examples=25, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@contextlib.contextmanager
def _x64_enabled():
    previous = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)


@pytest.fixture
def x64():
    """Enable float64 for one test and restore the previous setting afterwards."""
    with _x64_enabled():
        yield


@pytest.fixture(scope="module")
def x64_module():
    """Enable float64 for a whole test module (``pytestmark = usefixtures("x64_module")``)."""
    with _x64_enabled():
        yield
