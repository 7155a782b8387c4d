"""Issue #12: tangents and cotangents through cond/switch/while_loop/fori_loop/scan stay
symbolic zeros where nothing can make them non-zero.

- A value a loop or branch receives but never uses in its outputs gets no cotangent at
  all (a materialised zero cotangent of ``s = sqrt(x - x)`` became 0 * inf = NaN).
- Booleans and integers flowing through control flow under differentiation never get a
  tangent array (adding or multiplying bool zeros raised ``TypeError: add/mul``).
"""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

from harness import fd_grad


def _unused_in_fori(x):
    s = fnp.sqrt(x - x)
    return lax.fori_loop(0, 2, lambda i, c: (s * 2.0, c)[1], x)


def _unused_in_traced_fori(x):
    s = fnp.sqrt(x - x)
    n = fnp.asarray(x > -10.0).astype(np.int32) * 2  # a traced trip count: a while
    return lax.fori_loop(0, n, lambda i, c: (s * 2.0, c * 1.0)[1], x)


def _unused_in_cond(x):
    s = fnp.sqrt(x - x)
    return lax.cond(x > 0, lambda c: (s * 2.0, c)[1], lambda c: c, x)


def _unused_in_switch(x):
    s = fnp.sqrt(x - x)
    i = (x > 0).astype(np.int32) + 1
    return lax.switch(i, [lambda c: c * 3.0, lambda c: (s + c, c)[1], lambda c: c * 2.0], x)


def _unused_in_while(x):
    s = fnp.sqrt(x - x)
    return lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, (s * 2.0, c[1])[1]), (0, x))[1]


def _unused_in_scan(x):
    s = fnp.sqrt(x - x)
    return lax.scan(lambda c, _: ((s * 2.0, c)[1], None), x, None, length=2)[0]


def _unused_operand_of_cond(x):
    s = fnp.sqrt(x - x)
    return lax.cond(x > 0, lambda a, c: c, lambda a, c: c * 1.0, s, x)


UNUSED = [_unused_in_fori, _unused_in_traced_fori, _unused_in_cond, _unused_in_switch,
          _unused_in_while, _unused_in_scan, _unused_operand_of_cond]
MODES = {
    "grad": lambda f: fg.grad(f),
    "jit(grad)": lambda f: fg.jit(fg.grad(f)),
    "grad(jit)": lambda f: fg.grad(fg.jit(f)),
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("f", UNUSED, ids=lambda f: f.__name__)
def test_value_unused_by_control_flow_gets_no_nan_cotangent(f, mode):
    with np.errstate(invalid="ignore", divide="ignore"):
        got = MODES[mode](f)(-0.32)
    assert np.asarray(got) == pytest.approx(1.0)


@pytest.mark.parametrize("f", [_unused_in_fori, _unused_in_scan, _unused_in_cond, _unused_in_while],
                         ids=lambda f: f.__name__)
def test_unused_const_gets_no_tangent_operand(f):
    # The staged derivative never transposes anything into ``sqrt``: no ``div`` by it.
    text = str(fg.make_jaxpr(fg.grad(f))(-0.32))
    assert " div " not in text, text


def test_carry_tangent_fixpoint_scan():
    # The first carry only becomes x-dependent through the second: the fixpoint must
    # find it (a one-pass mask would drop its tangent).
    def f(x):
        def body(c, _):
            a, b = c
            return (a + b, b * 2.0), a
        (a, b), ys = lax.scan(body, (0.0, x), None, length=3)
        return a + fnp.sum(ys)

    for mode in MODES.values():
        assert mode(f)(1.5) == pytest.approx(11.0)  # a = 7x, ys = (0, x, 3x)
    assert fg.jvp(f, (1.5,), (1.0,))[1] == pytest.approx(11.0)
    assert fg.jit(lambda x: fg.jvp(f, (x,), (1.0,))[1])(1.5) == pytest.approx(11.0)


def test_carry_tangent_fixpoint_while():
    def f(x):
        def body(c):
            i, a, b = c
            return i + 1, a + b, b * 2.0
        return lax.while_loop(lambda c: c[0] < 3, body, (0, 0.0, x))[1]

    for mode in MODES.values():
        assert mode(f)(1.5) == pytest.approx(7.0)
    assert fg.jit(lambda x: fg.jvp(f, (x,), (1.0,))[1])(1.5) == pytest.approx(7.0)


# --- booleans and integers -------------------------------------------------------------------

def _scan_times_bool_count(x):
    m = x > 0
    return fnp.sum(lax.scan(lambda c, _: (c * fnp.sum(m), c), x, None, length=2)[0])


def _scan_bool_ys(x):
    b = lax.scan(lambda c, _: (c * 2, c > 1), x, None, length=3)[1]
    return fnp.sum(x * fnp.any(b))


def _scan_bool_carry(x):
    m = x > 0
    (c, k), _ = lax.scan(lambda c, _: ((c[0] * fnp.sum(c[1]), fnp.logical_not(c[1])), None), (x, m), None, length=2)
    return fnp.sum(fnp.where(k, c, 0.0))


def _while_bool_const_and_carry(x):
    m = x > 0
    c = lax.while_loop(lambda c: c[2] < 3,
                       lambda c: (c[0] * fnp.sum(m), fnp.logical_not(c[1]), c[2] + 1), (x, m, 0))
    return fnp.sum(fnp.where(c[1], c[0], 0.0))


def _cond_bool_operand(x):
    m = x > 0
    c = lax.cond(fnp.sum(x) > 0, lambda a, b: (a * fnp.sum(b), b), lambda a, b: (a, fnp.logical_not(b)), x, m)
    return fnp.sum(fnp.where(c[1], c[0], 0.0))


_jitted = fg.jit(lambda x, m: (x * fnp.sum(m), fnp.logical_not(m)))


def _jit_bool_output_in_cond(x):
    # A multiple-output call (jit_call, cond) returns a bool output: its tangent is zero.
    out = lax.cond(fnp.sum(x) > 0, lambda a, b: _jitted(a, b), lambda a, b: _jitted(a * 2, b), x, x > 0)
    return fnp.sum(fnp.where(out[1], out[0], 1.0))


BOOLS = [_jit_bool_output_in_cond, _scan_times_bool_count, _scan_bool_ys, _scan_bool_carry, _while_bool_const_and_carry, _cond_bool_operand]
X = np.array([0.5, 1.5, -1.25])


_fd = fd_grad


@pytest.mark.parametrize("f", BOOLS, ids=lambda f: f.__name__)
def test_bools_under_differentiation(f):
    expected = _fd(lambda x: float(f(x)), X)
    np.testing.assert_allclose(fg.grad(f)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fg.jit(fg.grad(f))(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fg.grad(fg.jit(f))(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fg.jacrev(fg.jit(f))(X), expected, rtol=1e-6, atol=1e-8)
    t = np.ones_like(X)
    np.testing.assert_allclose(fg.jvp(f, (X,), (t,))[1], expected.sum(), rtol=1e-6)
    np.testing.assert_allclose(fg.jit(lambda x: fg.jvp(f, (x,), (t,))[1])(X), expected.sum(), rtol=1e-6)
    np.testing.assert_allclose(fg.jvp(fg.jit(f), (X,), (t,))[1], expected.sum(), rtol=1e-6)
    np.testing.assert_allclose(fg.jit(fg.hessian(f))(X), fg.hessian(f)(X), atol=1e-12)


def test_while_from_a_closed_over_constant_is_staged_under_jit():
    # Found by the fuzzer: with a NumPy constant as the init, jit ran the loop in Python
    # on a staged predicate whose value is unknown at trace time, and skipped it.
    c0 = np.array([1.0, 2.0])

    def f(x):
        return x + lax.while_loop(lambda c: fnp.sum(c) < 4.5, lambda c: c + 1, c0)

    x = np.zeros(2)
    np.testing.assert_array_equal(f(x), [2.0, 3.0])
    np.testing.assert_array_equal(fg.jit(f)(x), [2.0, 3.0])
    np.testing.assert_array_equal(fg.core.eval_closed_jaxpr(fg.make_jaxpr(f)(x), x)[0], [2.0, 3.0])
    g = fg.jit(fg.grad(lambda x: fnp.sum(f(x) * x)))(np.ones(2))
    np.testing.assert_allclose(g, [4.0, 5.0])  # d/dx of sum((x + w) * x) is w + 2x
