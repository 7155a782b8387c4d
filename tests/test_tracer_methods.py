"""Traced values behave like arrays: operators, attributes, methods, indexing, .at."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.arange(1.0, 7.0).reshape(2, 3)
Y = np.linspace(0.5, 2.0, 3)


def both(f, *args):
    """f traced through make_jaxpr and evaluated equals f on plain NumPy inputs."""
    closed = fg.make_jaxpr(f)(*args)
    fg.check_jaxpr(closed)
    out = fg.tree_util.tree_unflatten(closed.out_tree, fg.eval_closed_jaxpr(closed, *args))
    ref = f(*args)
    for o, r in zip(fg.tree_util.tree_leaves(out), fg.tree_util.tree_leaves(ref)):
        np.testing.assert_allclose(o, r, rtol=1e-15)
        assert np.asarray(o).dtype == np.asarray(r).dtype
    return out


@pytest.mark.parametrize(
    "expr",
    [
        lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
        lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x ** y, lambda x, y: x @ y,
        lambda x, y: 2.0 + x, lambda x, y: 2.0 - x, lambda x, y: 2.0 * x, lambda x, y: 2.0 / x,
        lambda x, y: 7.0 // x, lambda x, y: 7.0 % x, lambda x, y: 2.0 ** y, lambda x, y: -x,
        lambda x, y: +x, lambda x, y: abs(-x), lambda x, y: x < y, lambda x, y: x <= y,
        lambda x, y: x > y, lambda x, y: x >= y, lambda x, y: x == y, lambda x, y: x != y,
        lambda x, y: (x > 2) & (x < 5), lambda x, y: (x > 2) | (x < 1), lambda x, y: ~(x > 2),
    ],
)
def test_operators(expr):
    # Reference: the same expression on fnp-converted NumPy arrays follows NumPy.
    closed = fg.make_jaxpr(expr)(X, Y)
    (out,) = fg.eval_closed_jaxpr(closed, X, Y)
    ref = expr(X, Y)
    np.testing.assert_allclose(out, ref, rtol=1e-15)
    assert np.asarray(out).dtype == np.asarray(ref).dtype


def test_attributes_and_len():
    def f(x):
        assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float64
        assert len(x) == 2 and x.T.shape == (3, 2)
        return x.T

    both(f, X)


@pytest.mark.parametrize(
    "method",
    [
        lambda x: x.sum(), lambda x: x.sum(axis=0), lambda x: x.mean(axis=1), lambda x: x.max(),
        lambda x: x.min(axis=0), lambda x: x.prod(), lambda x: x.reshape(3, 2),
        lambda x: x.reshape((6,)), lambda x: x.astype(np.float32), lambda x: x.astype(np.int32),
        lambda x: x.transpose(), lambda x: x.transpose(1, 0), lambda x: x.ravel(),
        lambda x: x.flatten(), lambda x: x.std(), lambda x: x.var(axis=0), lambda x: x.argmax(),
        lambda x: x.cumsum(axis=1), lambda x: x.clip(2, 5), lambda x: x.round(), lambda x: x.squeeze(),
        lambda x: x.swapaxes(0, 1), lambda x: x.all(), lambda x: x.any(), lambda x: x.dot(x.T),
    ],
)
def test_methods(method):
    both(method, X)


@pytest.mark.parametrize(
    "index",
    [0, -1, (1, 2), slice(None, None, -1), (Ellipsis, 1), (None, 0), (slice(0, 1), [2, 0])],
)
def test_indexing(index):
    both(lambda x: x[index], X)


def test_at_updates_on_tracers_and_function_form():
    f = lambda x: x.at[0, 1].set(-1.0).at[1].add(10.0).at[:, 2].multiply(2.0).at[0].min(2.5).at[1, 0].max(100.0)  # noqa: E731
    closed = fg.make_jaxpr(f)(X)
    (out,) = fg.eval_closed_jaxpr(closed, X)
    ref = X.copy()
    ref[0, 1] = -1.0
    ref[1] += 10.0
    ref[:, 2] *= 2.0
    ref[0] = np.minimum(ref[0], 2.5)
    ref[1, 0] = max(ref[1, 0], 100.0)
    np.testing.assert_array_equal(out, ref)
    eager = fnp.at(X)[0, 1].set(-1.0)
    assert eager[0, 1] == -1.0 and X[0, 1] == 2.0  # the input is never mutated


def test_traced_int_index_and_iteration():
    both(lambda x, i: x[i], X, np.int64(1))
    both(lambda x: [row.sum() for row in x], X)


def test_every_operator_and_method_names_an_existing_function():
    # Tracer operators look their funcgrad.numpy function up by name at call time: a
    # misspelt or missing name would only show as an AttributeError on first use.
    from funcgrad.numpy_api import methods

    names = list(methods._BINARY.values()) + list(methods._COMPARE.values())
    names += list(methods._UNARY.values()) + list(methods._METHODS)
    assert [n for n in names if not hasattr(fnp, n)] == []


@pytest.mark.parametrize("expr", [lambda x: x << 1, lambda x: x >> 1, lambda x: 1 << x, lambda x: 8 >> x])
@pytest.mark.parametrize("transform", [fg.jit, fg.vmap])
def test_shift_operators_on_tracers_are_numpy_shifts(expr, transform):
    # << and >> on traced values are fnp.left_shift/right_shift, NumPy's values and dtypes.
    x = np.arange(3)
    got, want = transform(expr)(x), expr(x)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_shift_operators_stay_numpy_eagerly():
    # Eager values are NumPy arrays, so NumPy's shifts apply unchanged.
    np.testing.assert_array_equal(fnp.arange(3) << 1, [0, 2, 4])
    np.testing.assert_array_equal(fnp.arange(8) >> 2, np.arange(8) >> 2)
