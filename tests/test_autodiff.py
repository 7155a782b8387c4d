"""Autodiff API: jvp, vjp, grad, value_and_grad, linearize, jacobians, hessian."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

X = np.array([0.5, -1.2, 2.0])


def mlp_loss(params, x, y):
    w1, b1, w2 = params["w1"], params["b1"], params["w2"]
    h = fnp.tanh(x @ w1 + b1)
    return fnp.mean((h @ w2 - y) ** 2)


def test_grad_matches_analytic():
    f = lambda x: fnp.sum(fnp.sin(x) * x**2)  # noqa: E731
    np.testing.assert_allclose(fg.grad(f)(X), np.cos(X) * X**2 + 2 * X * np.sin(X), rtol=1e-14)


def test_grad_returns_numpy_values():
    g = fg.grad(lambda x: fnp.sum(x * x))(X)
    assert isinstance(g, np.ndarray) and g.dtype == np.float64
    assert isinstance(fg.grad(lambda x: x * x)(3.0), (np.ndarray, np.generic))


def test_perturbation_confusion():
    assert fg.grad(lambda x: x * fg.grad(lambda y: x * y)(1.0))(2.0) == 4.0


def test_higher_order_scalar():
    f = lambda x: x**4  # noqa: E731
    assert fg.grad(fg.grad(fg.grad(f)))(2.0) == pytest.approx(48.0)


def test_eager_python_control_flow_under_grad():
    def f(x):
        if x > 0:
            return x * x
        return -x

    assert fg.grad(f)(3.0) == 6.0
    assert fg.grad(f)(-3.0) == -1.0


def test_argnums_tuple_and_pytrees():
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4), "w2": rng.normal(size=4)}
    x, y = rng.normal(size=(5, 3)), rng.normal(size=5)
    g = fg.grad(mlp_loss)(params, x, y)
    assert set(g) == {"w1", "b1", "w2"} and g["w1"].shape == (3, 4)
    gp, gx = fg.grad(mlp_loss, argnums=(0, 1))(params, x, y)
    np.testing.assert_allclose(gp["b1"], g["b1"], rtol=1e-14)
    assert gx.shape == (5, 3)
    check_grads(lambda w1: mlp_loss({**params, "w1": w1}, x, y), (params["w1"],), order=2)


def test_value_and_grad_and_has_aux():
    f = lambda x: (fnp.sum(x**2), {"norm": fnp.sqrt(fnp.sum(x**2))})  # noqa: E731
    (val, aux), g = fg.value_and_grad(f, has_aux=True)(X)
    assert val == pytest.approx(np.sum(X**2))
    assert aux["norm"] == pytest.approx(np.linalg.norm(X))
    np.testing.assert_allclose(g, 2 * X)
    g2, aux2 = fg.grad(f, has_aux=True)(X)
    np.testing.assert_allclose(g2, 2 * X)


def test_jvp_and_linearize():
    f = lambda x, y: fnp.sin(x) * y  # noqa: E731
    out, t = fg.jvp(f, (X, 2.0), (np.ones(3), 0.5))
    np.testing.assert_allclose(out, np.sin(X) * 2.0)
    np.testing.assert_allclose(t, np.cos(X) * 2.0 + np.sin(X) * 0.5, rtol=1e-14)
    y, f_jvp = fg.linearize(f, X, 2.0)
    np.testing.assert_allclose(f_jvp(np.ones(3), 0.5), t, rtol=1e-14)


def test_vjp_pytree_output():
    f = lambda x: {"a": x * 2.0, "b": fnp.sum(x)}  # noqa: E731
    out, vjp_fun = fg.vjp(f, X)
    (ct,) = vjp_fun({"a": np.ones(3), "b": 1.0})
    np.testing.assert_allclose(ct, np.full(3, 3.0))


def test_jacobians_and_hessian():
    A = np.random.default_rng(1).normal(size=(4, 3))
    f = lambda x: fnp.tanh(A @ x)  # noqa: E731
    J = (1 - np.tanh(A @ X) ** 2)[:, None] * A
    np.testing.assert_allclose(fg.jacfwd(f)(X), J, rtol=1e-13)
    np.testing.assert_allclose(fg.jacrev(f)(X), J, rtol=1e-13)
    g = lambda x: fnp.sum(fnp.log(1 + fnp.exp(A @ x)))  # noqa: E731
    s = 1 / (1 + np.exp(-(A @ X)))
    H = A.T @ np.diag(s * (1 - s)) @ A
    np.testing.assert_allclose(fg.hessian(g)(X), H, rtol=1e-12)


def test_stop_gradient():
    f = lambda x: x * fg.stop_gradient(x)  # noqa: E731
    assert fg.grad(f)(3.0) == 3.0


def test_linear_transpose():
    f = lambda x: 2.0 * x[::-1]  # noqa: E731
    (ct,) = fg.linear_transpose(f, X)(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(ct, [6.0, 4.0, 2.0])


def test_grad_of_integer_input_is_type_error():
    with pytest.raises(TypeError, match="real-valued.*int64"):
        fg.grad(lambda x: x * 2.0)(3)


def test_grad_of_nonscalar_output_is_type_error():
    with pytest.raises(TypeError, match=r"scalar output.*f64\[3\].*jacrev"):
        fg.grad(lambda x: x * 2.0)(X)


def test_make_jaxpr_of_grad_typechecks_and_evaluates():
    f = lambda x: fnp.sum(fnp.exp(-x * x) * fnp.cos(x))  # noqa: E731
    closed = fg.make_jaxpr(fg.grad(f))(X)
    fg.check_jaxpr(closed)
    (out,) = fg.eval_closed_jaxpr(closed, X)
    np.testing.assert_allclose(out, fg.grad(f)(X), rtol=1e-15)
    assert "transpose" not in str(closed)  # the gradient program, not an interpreter


def test_grad_of_grad_under_make_jaxpr():
    closed = fg.make_jaxpr(fg.grad(fg.grad(lambda x: fnp.sin(x) * x)))(1.0)
    fg.check_jaxpr(closed)
    (out,) = fg.eval_closed_jaxpr(closed, 1.0)
    assert out == pytest.approx(2 * np.cos(1.0) - np.sin(1.0))


@pytest.mark.parametrize(
    "f,args",
    [
        (lambda x: fnp.prod(x), (np.array([0.3, 0.0, 2.0, -1.0]),)),
        (lambda x: fnp.cumprod(x), (np.array([0.3, 1.5, 2.0, -1.0, 0.7]),)),
        (lambda a, b: fnp.einsum("bij,bjk->bki", a, b), (np.arange(24.0).reshape(2, 3, 4) / 10, np.arange(16.0).reshape(2, 4, 2) / 7)),
        (lambda x: fnp.max(x, axis=0), (np.array([[1.0, 5.0], [3.0, 2.0], [0.5, 4.0]]),)),
        (lambda x: fnp.pad(x, ((1, 2),), constant_values=0.5)[::2], (np.linspace(0.1, 1, 5),)),
        (lambda x: fnp.concatenate([x, fnp.flip(x)]).reshape(2, -1).T, (np.linspace(0.1, 1, 5),)),
        (lambda x, y: fnp.arctan2(x, y) * fnp.hypot(x, y) + fnp.power(x, y), (np.array([0.6, 1.1]), np.array([1.3, 0.7]))),
    ],
)
def test_check_grads_compositions(f, args):
    check_grads(f, args, order=2)
