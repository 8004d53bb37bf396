"""Tests for decentral.schedules: step sizes as data, t = 0 convention, sweeps, validation."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decentral.schedules import (
    StepSize,
    constant,
    harmonic,
    polynomial,
    satisfies_robbins_monro,
    stack_schedules,
    step_size,
    validate_step_size,
)

# float64 for the whole module (identities compared to ~1e-12), restored afterwards
pytestmark = pytest.mark.usefixtures("x64_module")


# (schedule, alpha at t = 0, alpha at t = 10): t is the 0-based update index
CASES = [
    (lambda: constant(0.3), 0.3, 0.3),
    (lambda: harmonic(5.0, 51.0), 5 / 51, 5 / 61),
    (lambda: harmonic(2.0), 2.0, 2 / 11),
    (lambda: harmonic(1.0, 0.5), 2.0, 1 / 10.5),
    (lambda: polynomial(1.0, 0.75), 1.0, 11**-0.75),
    (lambda: polynomial(3.0, 0.6, t0=4.0), 3 / 4**0.6, 3 / 14**0.6),
    (lambda: polynomial(0.2, 0.0), 0.2, 0.2),
    (lambda: polynomial(0.2, 0.0, t0=0.0), 0.2, 0.2),  # power 0: t0 = 0 is harmless
]


@pytest.mark.parametrize("make, at0, at10", CASES)
def test_values_at_t0_and_t10(make, at0, at10):
    sched = make()
    assert isinstance(sched, StepSize)
    for evaluate in (step_size, jax.jit(step_size)):
        got0, got10 = float(evaluate(sched, 0)), float(evaluate(sched, 10))
        assert got0 == pytest.approx(at0, rel=1e-15, abs=0)
        assert got10 == pytest.approx(at10, rel=1e-15, abs=0)
    assert float(sched(0)) == float(step_size(sched, 0))


def test_harmonic_is_exact_division():
    sched = harmonic(5.0, 51.0)
    ts = np.arange(200)
    np.testing.assert_array_equal(np.asarray(step_size(sched, jnp.asarray(ts))), 5.0 / (ts + 51.0))


def test_dtype_follows_x64():
    assert step_size(harmonic(1.0), 3).dtype == jnp.float64
    assert step_size(constant(0.1), jnp.int32(3)).dtype == jnp.float64


def test_array_of_times():
    sched = harmonic(1.0)
    np.testing.assert_allclose(np.asarray(sched(jnp.arange(4))), [1, 1 / 2, 1 / 3, 1 / 4])


def test_vmap_sweep_equals_separate_evaluation():
    schedules = [
        constant(0.1),
        harmonic(5.0, 51.0),
        harmonic(1.0),
        polynomial(1.0, 0.75),
        polynomial(2.0, 0.55, t0=3.0),
    ]
    sweep = stack_schedules(schedules)
    assert sweep.alpha0.shape == (5,) and sweep.power.shape == (5,)
    ts = jnp.arange(0, 1000, 37)
    swept = jax.jit(jax.vmap(step_size, in_axes=(0, None)))(sweep, ts)
    assert swept.shape == (5, ts.size)
    for k, sched in enumerate(schedules):
        np.testing.assert_allclose(np.asarray(swept[k]), np.asarray(step_size(sched, ts)),
                                   rtol=1e-15, atol=0)
    # doubly vmapped (schedule x time) gives the same table
    grid = jax.vmap(jax.vmap(step_size, in_axes=(None, 0)), in_axes=(0, None))(sweep, ts)
    np.testing.assert_allclose(np.asarray(grid), np.asarray(swept), rtol=1e-15, atol=0)
    assert np.all(satisfies_robbins_monro(sweep) == np.array([False, True, True, True, True]))


def test_constructor_under_vmap_skips_validation_of_tracers():
    alphas = jnp.asarray([0.5, 1.0, 2.0])
    got = jax.vmap(lambda a: step_size(harmonic(a, 2.0), 0))(alphas)
    np.testing.assert_allclose(np.asarray(got), np.asarray(alphas) / 2.0)


@settings(max_examples=40)
@given(
    alpha0=st.floats(1e-4, 1e3),
    t0=st.floats(1e-3, 1e3),
    power=st.floats(0.0, 2.0),
)
def test_formula_positive_and_non_increasing(alpha0, t0, power):
    sched = polynomial(alpha0, power, t0=t0)
    ts = np.arange(0, 500)
    got = np.asarray(step_size(sched, jnp.asarray(ts)))
    np.testing.assert_allclose(got, alpha0 / (ts + t0) ** power, rtol=1e-13, atol=0)
    assert np.all(got > 0)
    assert np.all(np.diff(got) <= 0)
    assert satisfies_robbins_monro(sched) == (0.5 < power <= 1.0)


def test_robbins_monro():
    assert satisfies_robbins_monro(harmonic(1.0)) is True
    assert satisfies_robbins_monro(polynomial(1.0, 0.75)) is True
    assert satisfies_robbins_monro(polynomial(1.0, 0.5)) is False
    assert satisfies_robbins_monro(polynomial(1.0, 1.5)) is False
    assert satisfies_robbins_monro(constant(0.1)) is False


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: constant(float("nan")), "alpha0 must be finite and > 0"),
        (lambda: constant(float("inf")), "alpha0 must be finite and > 0"),
        (lambda: constant(0.0), "alpha0 must be finite and > 0"),
        (lambda: constant(-0.1), "alpha0 must be finite and > 0"),
        (lambda: harmonic(-1.0), "alpha0 must be finite and > 0"),
        (lambda: harmonic(1.0, 0.0), "t0 must be > 0 when power > 0"),
        (lambda: harmonic(1.0, -3.0), "t0 must be > 0 when power > 0"),
        (lambda: polynomial(1.0, 0.7, t0=0.0), "t0 must be > 0 when power > 0"),
        (lambda: polynomial(1.0, -0.5), "power must be finite and >= 0"),
        (lambda: polynomial(1.0, float("nan")), "power must be finite and >= 0"),
        (lambda: polynomial(1.0, 0.0, t0=float("inf")), "t0 must be finite"),
        (lambda: constant(True), "bool"),
        (lambda: constant(np.array(["a"])), "real numbers"),
        (lambda: constant(np.array([0.1, -0.1])), "alpha0 must be finite and > 0"),
        (lambda: validate_step_size((0.1, 1.0, 0.0)), "expected a StepSize"),
        (lambda: validate_step_size(StepSize(0.1, 0.0, 1.0)), "t0 must be > 0"),
        (lambda: stack_schedules([]), "at least one"),
        (lambda: stack_schedules([constant(0.1), 0.2]), "not a StepSize"),
        (lambda: stack_schedules([constant(np.array([0.1, 0.2]))]), "non-scalar"),
        (lambda: stack_schedules([StepSize(0.1, -1.0, 1.0)]), "t0 must be > 0"),
        (lambda: satisfies_robbins_monro(StepSize(-1.0, 1.0, 1.0)), "alpha0"),
    ],
)
def test_validation_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_t0_zero_would_divide_by_zero():
    """The guarded case really is a division by zero at the first update."""
    raw = StepSize(1.0, 0.0, 1.0)  # bypasses the constructors' validation
    assert math.isinf(float(step_size(raw, 0)))
