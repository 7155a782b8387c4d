"""Algebraic simplification of compiled programs (``funcgrad/lowering/algebra.py``).

Each rewrite is checked twice: it happens (the simplified program no longer holds
what it removes) and the compiled values match the evaluator on the unrewritten
program (bitwise where the rewrite is exact, otherwise within the dot_general /
reduction tolerance of tests/test_lowering.py: 1e-13 float64, 1e-5 float32).
"""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import ad_util
from funcgrad.lowering import algebra
from funcgrad.lowering.compiler import simplify
from tests.harness import assert_same, compiled_and_evaluated

RNG = np.random.default_rng(7)


def _prims(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


def _simplified(f, *args):
    closed = fg.make_jaxpr(f)(*args)
    return simplify(closed.jaxpr, closed.consts)


def _check(f, *args, rtol=None):
    got, want = compiled_and_evaluated(f, *args)
    assert_same(got, want, rtol=rtol)


def _logistic(A):
    return lambda x: fnp.sum(fnp.log(1 + fnp.exp(A @ x)))


def test_hessian_identity_product_and_output_transpose_are_gone():
    A, x = RNG.normal(size=(20, 10)), RNG.normal(size=10)
    f = fg.hessian(_logistic(A))
    staged = fg.make_jaxpr(f)(x).jaxpr
    assert _prims(staged).count("dot_general") == 4  # the staged program is untouched
    simple = _simplified(f, x)
    assert _prims(simple).count("dot_general") == 2  # A @ x and the one Hessian product
    assert "transpose" not in [e.primitive.name for e in simple.eqns if e.outputs[0] in simple.outvars]
    _check(f, x, rtol=1e-13)
    s = 1 / (1 + np.exp(-(A @ x)))
    np.testing.assert_allclose(fg.jit(f)(x), (A.T * (s * (1 - s))) @ A, rtol=1e-12)


@pytest.mark.parametrize("side", ["rhs", "lhs"])
def test_identity_constant_dot(side):
    eye, y = ad_util.mark_transform_basis(np.eye(5)), RNG.normal(size=(3, 5, 4))  # (as jacfwd makes it)
    if side == "rhs":
        def f(y):
            return lax.dot_general(y, eye, (((1,), (1,)), ((), ())))  # -> [3, 4, 5]
    else:
        def f(y):
            return lax.dot_general(eye, y, (((0,), (1,)), ((), ())))  # -> [5, 3, 4]
    assert "dot_general" not in _prims(_simplified(f, y))
    got, want = compiled_and_evaluated(f, y)
    assert_same(got, want, rtol=0)  # exact: y*1 + zeros


def test_users_identity_matrix_is_a_product():
    """``x @ I`` is not ``x`` when ``x`` holds inf or nan (``inf * 0`` is nan): only
    the bases transforms make are dropped."""
    eye, y = np.eye(4), np.array([[np.inf, 1.0, -0.0, np.nan]])
    f = lambda y: y @ eye  # noqa: E731
    assert "dot_general" in _prims(_simplified(f, y))
    (got,), (want,) = compiled_and_evaluated(f, y)
    assert np.array_equal(got, want, equal_nan=True) and np.isnan(got[0, 1])


def test_non_identity_constant_is_a_product():
    m, y = np.eye(4) * 2.0, RNG.normal(size=(4, 3))
    f = lambda y: m @ y  # noqa: E731
    assert "dot_general" in _prims(_simplified(f, y))
    _check(f, y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_transpose_of_product_becomes_swapped_product(dtype):
    a = RNG.integers(-3, 4, (6, 5)).astype(dtype)
    b = RNG.integers(-3, 4, (5, 7)).astype(dtype)
    f = lambda a, b: (a @ b).T  # noqa: E731
    simple = _simplified(f, a, b)
    assert _prims(simple) == ["dot_general"]
    got, want = compiled_and_evaluated(f, a, b)
    assert_same(got, want, rtol=1e-5 if dtype == np.float32 else 1e-13)


def test_transpose_of_batched_product_keeps_batch_dims():
    a, b = RNG.normal(size=(3, 4, 5)), RNG.normal(size=(3, 5, 2))
    f = lambda a, b: fnp.swapaxes(a @ b, 1, 2)  # noqa: E731
    assert _prims(_simplified(f, a, b)) == ["dot_general"]
    _check(f, a, b, rtol=1e-13)


def test_product_read_twice_is_not_rewritten():
    a, b = RNG.normal(size=(4, 5)), RNG.normal(size=(5, 3))

    def f(a, b):
        p = a @ b
        return p.T, p

    assert _prims(_simplified(f, a, b)).count("dot_general") == 1
    _check(f, a, b, rtol=1e-13)


def test_unit_dims_dropped_through_reshape():
    a, b = RNG.normal(size=(4, 1, 6)), RNG.normal(size=(6, 3))
    f = lambda a, b: lax.transpose(lax.reshape(lax.dot_general(a, b, (((2,), (0,)), ((), ()))), (4, 3)), (1, 0))  # noqa: E731
    simple = _simplified(f, a, b)
    assert _prims(simple).count("dot_general") == 1 and simple.eqns[-1].primitive.name == "dot_general"
    _check(f, a, b, rtol=1e-13)


def test_transpose_of_transpose():
    x = RNG.normal(size=(2, 3, 4))
    f = lambda x: lax.transpose(lax.transpose(x, (1, 2, 0)), (2, 0, 1))  # noqa: E731 (identity)
    assert _prims(_simplified(f, x)) == []
    g = lambda x: lax.transpose(lax.transpose(x, (1, 2, 0)), (1, 0, 2))  # noqa: E731
    assert _prims(_simplified(g, x)) == ["transpose"]
    _check(f, x, rtol=0)
    _check(g, x, rtol=0)


def _zeros(value):
    return lax.broadcast_in_dim(lax.broadcast_in_dim(value, (3,), ()), (3, 4), (0,))


def test_zeros_and_ones():
    """The zeros transforms make (``ad_util.transform_zero``) drop out of any arithmetic."""
    x = RNG.normal(size=(3, 4))
    z = lambda: _zeros(ad_util.transform_zero(np.float64))  # noqa: E731

    def f(x):
        return (x + z()) * 1.0 - z(), x * z(), z() + x

    simple = _simplified(f, x)
    assert "add" not in _prims(simple) and "mul" not in _prims(simple) and "sub" not in _prims(simple)
    _check(f, x, rtol=0)
    xi = np.arange(6).reshape(2, 3)
    _check(lambda x: (x + 0) * 1, xi)
    assert _prims(_simplified(lambda x: (x + 0) * 1 - 0, xi)) == []  # exact on integers


def test_users_zeros_stay_unless_exact():
    """On a user's float zeros only ``x - 0.0``, ``x + (-0.0)`` and ``x * 1`` go: ``x + 0.0``
    is ``0.0`` at ``x = -0.0`` and ``x * 0.0`` is nan at inf and nan."""
    x = np.array([[np.nan, np.inf, -np.inf, -0.0], [0.0, -1.0, 2.0, 0.5], [1.0, -0.0, 3.0, -2.0]])
    kept = [lambda x: x + _zeros(0.0), lambda x: _zeros(0.0) + x, lambda x: x * _zeros(0.0),
            lambda x: _zeros(-0.0) * x, lambda x: x - _zeros(-0.0)]
    for f in kept:
        assert len(_prims(_simplified(f, x))) == 3
        _check(f, x, rtol=0)
    gone = [lambda x: x + _zeros(-0.0), lambda x: _zeros(-0.0) + x, lambda x: x - _zeros(0.0), lambda x: x * 1.0]
    for f in gone:
        assert "add" not in _prims(_simplified(f, x)) and "sub" not in _prims(_simplified(f, x))
        _check(f, x, rtol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_reduce_of_broadcast(dtype):
    x = np.arange(1, 4).astype(dtype)

    def f(x):
        big = lax.broadcast_in_dim(x, (5, 3, 4), (1,))
        return lax.reduce_sum(big, (0, 2)), lax.reduce_max(big, (0, 2)), lax.reduce_min(big, (0, 2))

    simple = _simplified(f, x)
    assert not any(e.primitive.name.startswith("reduce") for e in simple.eqns)
    _check(f, x, rtol=1e-15)
    partial = lambda x: lax.reduce_sum(lax.broadcast_in_dim(x, (5, 3, 4), (1,)), (2,))  # noqa: E731 (stays)
    assert "reduce_sum" in _prims(_simplified(partial, x))
    _check(partial, x, rtol=1e-15)


def test_scan_outer_product_accumulator_is_one_product():
    W, xs = RNG.normal(size=(8, 8)) * 0.3, RNG.normal(size=(30, 8))

    def loss(W, xs):
        h, _ = lax.scan(lambda h, x: (fnp.tanh(W @ h + x), None), np.zeros(8), xs)
        return fnp.sum(h)

    g = fg.grad(loss)
    simple = _simplified(g, W, xs)
    scans = [e for e in simple.eqns if e.primitive.name == "scan"]
    back = scans[-1].params["jaxpr"].jaxpr
    assert all(e.params.get("dimension_numbers") != (((), ()), ((), ())) for e in back.eqns
               if e.primitive.name == "dot_general")  # no rank-1 update per step
    assert simple.eqns[-1].primitive.name == "dot_general"
    _check(g, W, xs, rtol=1e-13)
    # against the gradient by finite differences (float64)
    e = RNG.normal(size=W.shape)
    fd = (loss(W + 1e-6 * e, xs) - loss(W - 1e-6 * e, xs)) / 2e-6
    np.testing.assert_allclose(np.sum(fg.jit(g)(W, xs) * e), fd, rtol=1e-6)


def test_scan_accumulator_with_nonzero_init_and_other_readers_stays_right():
    xs = RNG.normal(size=(6, 3))

    def f(acc0, xs):
        def body(c, x):
            acc, s = c
            return (acc + lax.dot_general(x, x * s, (((), ()), ((), ()))), s + 1.0), acc[0, 0]
        return lax.scan(body, (acc0, 1.0), xs)

    acc0 = RNG.normal(size=(3, 3))
    simple = _simplified(f, acc0, xs)  # acc is read by ys: not an accumulator only
    assert any(e.primitive.name == "scan" and e.params["num_carry"] == 2 for e in simple.eqns)
    _check(f, acc0, xs, rtol=1e-13)

    def g(acc0, xs):
        return lax.scan(lambda acc, x: (acc + lax.dot_general(x, 2 * x, (((), ()), ((), ()))), None), acc0, xs)[0]

    simple = _simplified(g, acc0, xs)
    assert [e.params["num_carry"] for e in simple.eqns if e.primitive.name == "scan"] == [0]
    _check(g, acc0, xs, rtol=1e-13)


def test_rewrite_leaves_other_programs_alone():
    x = RNG.normal(size=(3,))
    closed = fg.make_jaxpr(lambda x: fnp.sin(x) * 2.0 + x)(x)
    out = algebra.rewrite(closed.jaxpr, closed.consts)
    assert _prims(out) == _prims(closed.jaxpr)
