"""Behaviour of the funcgrad.lax extras the op table cannot express: JAX's tie and NaN
conventions, derivatives at ties, associative_scan against a sequential lax.scan, the
solvers' implicit differentiation (their iterations are never differentiated), and
typed errors naming the function, the argument and the shapes. Values, derivatives,
vmap and jit on ordinary inputs are rows in tests/op_rows/lax_extras.py."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.errors import ConcretizationError

from harness import fd_grad


# --- ties, NaN, derivatives at ties ------------------------------------------------------------
def test_top_k_puts_nan_first_and_lower_index_first_on_ties():
    vals, idx = lax.top_k(np.array([1.0, 3.0, np.nan, 3.0, 2.0]), 3)
    np.testing.assert_array_equal(vals, [np.nan, 3.0, 3.0])
    np.testing.assert_array_equal(idx, [2, 1, 3])
    assert idx.dtype == np.int32
    v, i = lax.top_k(np.array([[5, 5, 5]], np.int32), 2)
    assert v.dtype == np.int32 and i.tolist() == [[0, 1]]


def test_top_k_gradient_goes_to_selected_entries():
    x = np.array([0.5, 3.0, 1.0, 2.0])
    g = fg.grad(lambda x: lax.top_k(x, 2)[0] @ np.array([10.0, 1.0]))(x)
    np.testing.assert_array_equal(g, [0.0, 10.0, 0.0, 1.0])
    assert lax.top_k(x, 0)[0].shape == (0,)


def test_cummax_derivative_at_ties_splits_like_lax_max():
    # out = [x0, max(x0, x1)]: JAX's lax.max gives half of a tie's tangent to each side.
    g = fg.grad(lambda x: lax.cummax(x).sum())(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(g, [1.5, 0.5])
    g = fg.grad(lambda x: lax.cummin(x)[-1])(np.array([3.0, 1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 0.0])


def test_cumlogsumexp_is_stable():
    x = np.array([1000.0, 1000.0, -np.inf, -1000.0])
    np.testing.assert_allclose(lax.cumlogsumexp(x), np.logaddexp.accumulate(x), rtol=1e-15)
    g = fg.grad(lambda x: lax.cumlogsumexp(x)[-1])(np.array([-np.inf, 0.0, 0.0]))
    np.testing.assert_allclose(g, [0.0, 0.5, 0.5])


def test_clamp_derivatives_follow_jax_at_the_bounds():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(fg.grad(lambda x: lax.clamp(-1.0, x, 1.0).sum())(x), [0, 0, 1, 0, 0])
    np.testing.assert_array_equal(fg.grad(lambda lo: lax.clamp(lo, x, 1.0).sum())(-1.0), 1.0)
    np.testing.assert_array_equal(fg.grad(lambda hi: lax.clamp(-1.0, x, hi).sum())(1.0), 1.0)


def test_stop_gradient_on_a_pytree_keeps_int_leaves():
    tree = {"a": np.array([1.0, 2.0]), "n": np.array([1, 2])}
    out = lax.stop_gradient(tree)
    assert out["n"].dtype == np.int64
    assert fg.grad(lambda x: (lax.stop_gradient({"a": x})["a"] * x).sum())(np.array([3.0])) == 3.0


# --- associative_scan, map, reduce -------------------------------------------------------------
def _matmul2(a, b):  # 2x2 matrix products along a batch of leading axes: associative, not commutative
    return fnp.einsum("...ij,...jk->...ik", a, b)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_associative_scan_matches_sequential_scan(n):
    ms = np.random.default_rng(n).normal(size=(n, 2, 2))
    expected = lax.scan(lambda c, m: (_matmul2(c, m), _matmul2(c, m)), np.eye(2), ms)[1]
    got = fg.jit(lambda ms: lax.associative_scan(_matmul2, ms))(ms)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14)
    rev = lax.associative_scan(_matmul2, ms, reverse=True)
    expected_rev = lax.scan(lambda c, m: (_matmul2(c, m), _matmul2(c, m)), np.eye(2), ms, reverse=True)[1]
    np.testing.assert_allclose(rev, expected_rev, rtol=1e-13, atol=1e-14)


def test_associative_scan_grad_matches_finite_differences():
    x = np.random.default_rng(1).uniform(0.5, 1.5, size=6)
    f = lambda x: (lax.associative_scan(fnp.multiply, x) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(fg.grad(f)(x), fd_grad(f, x), rtol=1e-7)


def test_map_batch_size_uses_vmap_and_keeps_the_remainder():
    calls = []

    def f(v):
        calls.append(np.shape(v))
        return fnp.sum(v * v)

    x = np.arange(10.0).reshape(5, 2)
    np.testing.assert_allclose(lax.map(f, x, batch_size=2), (x * x).sum(1))
    assert (2,) in calls  # f sees single slices (vmapped over batches of 2, then the remainder of 1)
    np.testing.assert_allclose(lax.map(f, x, batch_size=9), (x * x).sum(1))
    np.testing.assert_allclose(fg.grad(lambda x: lax.map(f, x, batch_size=3).sum())(x), 2 * x)


def test_reduce_with_a_python_function_under_jit_vmap_grad():
    x = np.random.default_rng(2).uniform(0.5, 1.5, size=(3, 6))

    def f(x):
        return lax.reduce(x, 1.0, lambda a, b: a * b, (1,))

    np.testing.assert_allclose(f(x), x.prod(1), rtol=1e-14)
    np.testing.assert_allclose(fg.jit(f)(x), x.prod(1), rtol=1e-14)
    np.testing.assert_allclose(fg.vmap(f)(np.stack([x, 2 * x])), np.stack([x.prod(1), (2 * x).prod(1)]), rtol=1e-14)
    g = fg.grad(lambda x: f(x).sum())(x)
    np.testing.assert_allclose(g, x.prod(1, keepdims=True) / x, rtol=1e-13)
    assert "reduce_prod" in str(fg.make_jaxpr(lambda x: lax.reduce(x, 1.0, lax.mul, (1,)))(x))
    assert "reduce_prod" not in str(fg.make_jaxpr(f)(x))  # a lambda is not recognised: the tree path
    empty = lax.reduce(np.zeros((2, 0)), 5.0, lambda a, b: a + b, (1,))
    np.testing.assert_array_equal(empty, [5.0, 5.0])


def test_sort_several_operands_returns_a_tuple_and_single_an_array():
    k = np.array([3, 1, 2, 1])
    out = lax.sort((k, np.array([0.0, 1.0, 2.0, 3.0])))
    assert isinstance(out, tuple) and out[1].tolist() == [1.0, 3.0, 2.0, 0.0]
    assert lax.sort(np.array([2.0, np.nan, 1.0])).tolist()[:2] == [1.0, 2.0]


# --- solvers: implicit differentiation, the solver never differentiated ------------------------
class _Undifferentiable(Exception):
    pass


def _guarded(fn):
    """``fn`` that raises if a transform ever differentiates through it."""
    g = fg.custom_jvp(fn)

    @g.defjvp
    def _jvp(primals, tangents):
        raise _Undifferentiable("the solver was differentiated")

    return g


def _newton(f, x0):
    return lax.fori_loop(0, 50, lambda i, x: x - f(x) / (3 * x * x), x0)


def test_custom_root_grad_is_implicit_and_never_differentiates_the_solver():
    solve = lambda f, x0: _guarded(lambda x: _newton(f, x))(x0)  # noqa: E731

    def cube_root(a):  # root of x**3 - a
        return lax.custom_root(lambda x: x ** 3 - a, 1.0, solve, lambda g, y: y / g(1.0))

    a = 5.0
    np.testing.assert_allclose(cube_root(a), a ** (1 / 3), rtol=1e-14)
    fd = (a + 1e-6) ** (1 / 3) - (a - 1e-6) ** (1 / 3)
    np.testing.assert_allclose(fg.grad(cube_root)(a), fd / 2e-6, rtol=1e-8)
    np.testing.assert_allclose(fg.jit(fg.grad(cube_root))(a), a ** (-2 / 3) / 3, rtol=1e-13)
    np.testing.assert_allclose(fg.grad(fg.grad(cube_root))(a), -2 / 9 * a ** (-5 / 3), rtol=1e-12)
    np.testing.assert_allclose(fg.jvp(cube_root, (a,), (1.0,))[1], a ** (-2 / 3) / 3, rtol=1e-13)


def test_custom_root_has_aux_and_pytrees():
    def solve(f, x0):
        x = _newton(lambda v: f({"x": v})["x"], x0["x"])
        return {"x": x}, fnp.asarray(50)

    def root(a):
        return lax.custom_root(lambda d: {"x": d["x"] ** 3 - a}, {"x": 1.0}, solve,
                               lambda g, y: {"x": y["x"] / g({"x": 1.0})["x"]}, has_aux=True)

    (sol, iters) = root(8.0)
    assert abs(sol["x"] - 2.0) < 1e-14 and iters == 50
    np.testing.assert_allclose(fg.grad(lambda a: root(a)[0]["x"])(8.0), 1 / 12, rtol=1e-13)


def test_custom_linear_solve_grads_and_transpose_solve():
    rng = np.random.default_rng(3)
    A, b = rng.normal(size=(3, 3)) + 3 * np.eye(3), rng.normal(size=3)
    calls = {"solve": 0, "transpose": 0}

    def solve(mv, r):
        calls["solve"] += 1
        return _guarded(lambda r: fnp.linalg.solve(A, r))(r)

    def tsolve(vm, r):
        calls["transpose"] += 1
        return fnp.linalg.solve(A.T, r)

    f = lambda b: (lax.custom_linear_solve(lambda x: A @ x, b, solve, tsolve) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(fg.grad(f)(b), fd_grad(f, b), rtol=1e-7)
    assert calls["transpose"] > 0
    no_t = lambda b: lax.custom_linear_solve(lambda x: A @ x, b, solve).sum()  # noqa: E731
    np.testing.assert_allclose(fg.jvp(no_t, (b,), (np.ones(3),))[1], np.linalg.solve(A, np.ones(3)).sum())
    with pytest.raises(TypeError, match="custom_linear_solve: transpose_solve is required"):
        fg.grad(no_t)(b)


def test_custom_linear_solve_symmetric_uses_solve_for_the_transpose():
    rng = np.random.default_rng(4)
    M = rng.normal(size=(3, 3))
    S, b = M @ M.T + 3 * np.eye(3), rng.normal(size=3)

    def f(S, b):
        x = lax.custom_linear_solve(lambda x: S @ x, b, lambda mv, r: fnp.linalg.solve(S, r), symmetric=True)
        return x @ b

    gS = fg.grad(f)(S, b)
    gS_ref = fg.grad(lambda S, b: fnp.linalg.solve(S, b) @ b)(S, b)
    np.testing.assert_allclose(gS, gS_ref, rtol=1e-12)


# --- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, exc, words", [
    (lambda: lax.clamp(np.float32(0), np.ones(3), 1.0), TypeError, ["clamp", "min", "float32"]),
    (lambda: lax.clamp(np.zeros(2), np.ones(3), 1.0), TypeError, ["clamp", "min", "(2,)", "(3,)"]),
    (lambda: lax.rsqrt(np.arange(3)), TypeError, ["rsqrt", "x", "i64[3]"]),
    (lambda: lax.expand_dims(np.ones(3), (0, 0)), ValueError, ["expand_dims", "repeated", "(3,)"]),
    (lambda: lax.slice_in_dim(np.ones((2, 3)), 0, 5, axis=1), ValueError, ["slice_in_dim", "limit_index", "(2, 3)"]),
    (lambda: lax.index_in_dim(np.ones((2, 3)), 3, 1), IndexError, ["index_in_dim", "index 3", "(2, 3)"]),
    (lambda: lax.dynamic_slice_in_dim(np.ones(3), 0, 4), ValueError, ["dynamic_slice_in_dim", "slice_size", "(3,)"]),
    (lambda: lax.cumsum(np.ones((2, 3)), 2), ValueError, ["cumsum", "axis=2", "(2, 3)"]),
    (lambda: lax.cumlogsumexp(np.arange(3)), TypeError, ["cumlogsumexp", "int64"]),
    (lambda: lax.top_k(np.ones((2, 3)), 4), ValueError, ["top_k", "k=4", "(2, 3)"]),
    (lambda: lax.sort((np.ones(3), np.ones(2))), TypeError, ["sort", "(3,)", "(2,)"]),
    (lambda: lax.sort((np.ones(3),), num_keys=2), ValueError, ["sort", "num_keys"]),
    (lambda: lax.reduce(np.ones(3), (0.0, 0.0), lax.add, (0,)), TypeError, ["reduce", "init_values"]),
    (lambda: lax.reduce(np.ones(3), np.float32(0), lambda a, b: a + b, (0,)), TypeError, ["reduce", "f32[]"]),
    (lambda: lax.associative_scan(fnp.add, (np.ones(3), np.ones(4))), ValueError, ["associative_scan", "(3,)", "(4,)"]),
    (lambda: lax.map(fnp.sin, np.ones(3), batch_size=0), ValueError, ["map", "batch_size"]),
    (lambda: lax.custom_root(lambda x: x[:2], np.ones(3), lambda f, x: x, lambda g, y: y), TypeError,
     ["custom_root", "f", "f64[3]", "f64[2]"]),
])
def test_bad_arguments_raise_typed_errors(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_static_arguments_must_be_static_under_jit():
    with pytest.raises(ConcretizationError, match="top_k: k must be a static"):
        fg.jit(lambda x, k: lax.top_k(x, k))(np.ones(3), 2)
    with pytest.raises(ConcretizationError, match="dynamic_slice_in_dim: slice_size"):
        fg.jit(lambda x, n: lax.dynamic_slice_in_dim(x, 0, n))(np.ones(3), 2)
