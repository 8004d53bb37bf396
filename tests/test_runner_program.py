"""The traced-program fingerprint: what changes the numbers changes the digest, what does not
(names, comments, addresses, processes) leaves it alone, and what a trace cannot see is named."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from decentral.runner import trace_program
from decentral.runner.program import program_lines_diff

X = jnp.ones(3, jnp.float32)


def test_equal_programs_equal_digests_and_names_do_not_count():
    def first(x):
        y = x * 2.0                      # a comment
        return jnp.sin(y) + 1.0

    def second(value):
        doubled = value * 2.0
        return jnp.sin(doubled) + 1.0

    assert trace_program(first, X).digest == trace_program(second, X).digest
    assert trace_program(first, X).digest != trace_program(first, X.astype(jnp.float16)).digest
    assert trace_program(first, X).digest != trace_program(first, jnp.ones(4)).digest


def test_closed_over_arrays_count_by_content():
    a, b = np.eye(3), np.eye(3)
    c = np.eye(3)
    c[0, 1] = 1e-12
    pa, pb, pc = (trace_program(lambda x, m=m: m @ x, X) for m in (a, b, c))
    assert pa.digest == pb.digest != pc.digest
    assert "const v0:float32[3,3] = array:" in pa.text.splitlines()[0] or \
        "const v0:float64[3,3] = array:" in pa.text.splitlines()[0]
    assert program_lines_diff(pa.text, pc.text).startswith("line 1: 'const v0")


def test_literals_nested_jaxprs_and_hidden_parameters_count():
    def scan_body(scale):
        def f(x):
            return jax.lax.scan(lambda c, _: (c * scale, None), x, None, length=3)[0]
        return f

    assert trace_program(scan_body(2.0), X).digest != trace_program(scan_body(3.0), X).digest
    assert trace_program(lambda x: jax.lax.scan(lambda c, _: (c + 1, None), x, None,
                                                length=3)[0], X).digest != \
        trace_program(lambda x: jax.lax.scan(lambda c, _: (c + 1, None), x, None,
                                             length=4)[0], X).digest
    # a parameter the pretty-printer hides: the precision of a matrix product
    m = jnp.ones((3, 3))
    default = trace_program(lambda x: jnp.dot(m, x), X).digest
    highest = trace_program(lambda x: jnp.dot(m, x, precision="highest"), X).digest
    assert default != highest


def test_opaque_parts_are_named_and_derived_ones_are_not():
    def calls_back(x):
        return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    assert "pure_callback" in trace_program(calls_back, X).opaque[0]
    assert "custom_jvp" in trace_program(jax.nn.relu, X).opaque[0]
    # lax.reduce's Python function is built from its jaxpr; debug printing returns nothing;
    # wrapping key data names a PRNG implementation: none of them is opaque
    assert trace_program(lambda x: jax.lax.reduce(x, 0.0, lambda a, b: a + b, (0,)),
                         X).opaque == ()

    def prints(x):
        jax.debug.print("{}", x)
        return x

    assert trace_program(prints, X).opaque == ()
    data = jnp.zeros(2, jnp.uint32)
    assert trace_program(lambda d: jax.random.key_data(jax.random.wrap_key_data(d)),
                         data).opaque == ()


def test_the_program_function_evaluates_what_was_traced():
    def f(x, scale):
        return {"y": x * scale + 1.0, "flag": True}

    prog = trace_program(f, X, jnp.float32(2.0))
    out = prog.function()(X, jnp.float32(2.0))
    np.testing.assert_array_equal(out["y"], np.full(3, 3.0, np.float32))
    assert bool(out["flag"]) and out["flag"].dtype == jnp.bool_


def test_hoisted_constants_are_an_argument_and_give_the_same_numbers():
    big = np.arange(300_000, dtype=np.float32) / 7.0          # 1.2 MB: above the default limit
    small = np.array([0.5, 2.0, 3.0], np.float32)

    def f(x):
        return x * small + jnp.sum(jnp.asarray(big)[:3] * x)

    prog = trace_program(f, X)
    want = np.asarray(prog.function()(X))
    consts, fn = prog.hoisted()
    assert len(consts) == 1 and consts[0].shape == big.shape        # the small one stays in
    np.testing.assert_array_equal(np.asarray(jax.jit(fn)(consts, X)), want)
    every, fn_all = prog.hoisted(min_bytes=0)
    assert len(every) == 2
    np.testing.assert_array_equal(np.asarray(jax.jit(fn_all)(every, X)), want)
    # the argument is what the program computes with: another value gives another answer
    doubled = (np.asarray(consts[0]) * 2,)
    assert not np.array_equal(np.asarray(fn(doubled, X)), want)
