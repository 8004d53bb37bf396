"""Shared pytest configuration: hypothesis profile, float64 fixture, headless matplotlib."""

from __future__ import annotations

import contextlib
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import jax  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# The one place for shared hypothesis settings. Test modules do not repeat them: a test that
# needs another example count writes only `@settings(max_examples=N)`, which inherits the rest
# from the loaded profile.
#
# "ci" (default): the first jit call blows hypothesis' 200 ms deadline, so no deadline;
# derandomize so a red run replays exactly; a modest example count for compiled properties.
# "dev" (HYPOTHESIS_PROFILE=dev): random examples and more of them, to hunt for new failures
# locally; hypothesis prints the seed of a failure so it can be replayed.
settings.register_profile("ci", deadline=None, derandomize=True, max_examples=25, print_blob=True)
settings.register_profile("dev", deadline=None, derandomize=False, max_examples=200,
                          print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_CACHE_ENV = "DECENTRAL_TEST_COMPILATION_CACHE"


def _share_compilations() -> None:
    """One on-disk compilation cache for this test run, shared by its xdist workers and the
    child processes its tests start: the controller makes the folder and names it in the
    environment, which the workers and children inherit. A program that several tests compile
    is compiled once; JAX keys the cache by the program, the compile options, the devices and
    the versions, so a hit is the same executable. The controller removes the folder when the
    run ends (``pytest_sessionfinish``)."""
    import tempfile

    folder = os.environ.get(_CACHE_ENV)
    if folder is None:
        folder = tempfile.mkdtemp(prefix="decentral-tests-")
        os.environ[_CACHE_ENV] = folder
    os.environ["JAX_COMPILATION_CACHE_DIR"] = folder
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)


_share_compilations()


def pytest_sessionfinish(session, exitstatus):
    """Remove this run's compilation cache (in the controller, once every worker is done)."""
    import shutil

    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        shutil.rmtree(os.environ[_CACHE_ENV], ignore_errors=True)


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
