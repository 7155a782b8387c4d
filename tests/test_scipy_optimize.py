"""funcgrad.scipy.optimize: minimize (BFGS, as JAX's) and root against SciPy, under
jit and vmap, implicit derivatives against finite differences, errors."""
import numpy as np
import pytest
import scipy.optimize as so

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import optimize as O


def rosen(x):
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quartic(x, a):
    return fnp.sum((x - a) ** 2 * np.arange(1.0, 4.0)) + fnp.sum(x ** 4) + x[0] * x[1]


def system(x, p):
    return fnp.stack([x[0] ** 3 + x[1] - p[0], fnp.sin(x[0]) * x[1] - p[1]])


A = np.array([1.0, 2.0, -0.5])
P = np.array([2.0, 0.5])


def fd_jac(f, a, eps=1e-6):
    return np.stack([(np.asarray(f(a + eps * e)) - np.asarray(f(a - eps * e))) / (2 * eps) for e in np.eye(len(a))], -1)


def test_minimize_rosenbrock_matches_scipy():
    res = O.minimize(rosen, np.array([-1.2, 1.0]))
    assert isinstance(res, O.OptimizeResults)
    assert bool(res.success) and int(res.status) == 0
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-6)
    assert res.hess_inv.shape == (2, 2) and int(res.nit) > 5 and int(res.nfev) >= int(res.nit)
    np.testing.assert_allclose(res.jac, so.rosen_der(np.asarray(res.x)), atol=1e-12)
    ref = so.minimize(quartic, np.zeros(3), (A,), method="BFGS", tol=1e-10)
    ours = O.minimize(quartic, np.zeros(3), (A,), tol=1e-10)
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-7)
    np.testing.assert_allclose(ours.fun, ref.fun, rtol=1e-12)


def test_minimize_maxiter_status():
    res = O.minimize(rosen, np.array([-1.2, 1.0]), options=dict(maxiter=3))
    assert not bool(res.success) and int(res.status) == 1 and int(res.nit) == 3


def test_minimize_jit_and_vmap_over_x0():
    x0s = np.array([[-1.2, 1.0], [2.0, 2.0], [0.0, 0.0]])
    jitted = fg.jit(lambda x0: O.minimize(rosen, x0))
    eager = O.minimize(rosen, x0s[0])
    assert jitted(x0s[0]).x.dtype == eager.x.dtype
    np.testing.assert_allclose(jitted(x0s[0]).x, eager.x, rtol=1e-12)
    assert int(jitted(x0s[0]).nit) == int(eager.nit)
    loop = np.stack([jitted(x0).x for x0 in x0s])  # lanes take different numbers of iterations
    np.testing.assert_allclose(fg.vmap(lambda x0: O.minimize(rosen, x0).x)(x0s), loop, atol=1e-10)


def test_minimize_implicit_derivative_wrt_args():
    def argmin(a):
        return O.minimize(quartic, np.zeros(3), (a,), options=dict(gtol=1e-11)).x

    jac = fg.jacrev(argmin)(A)
    np.testing.assert_allclose(jac, fd_jac(fg.jit(argmin), A), atol=1e-6)
    np.testing.assert_allclose(fg.jit(fg.jacfwd(argmin))(A), jac, rtol=1e-10)
    # envelope theorem: d f(x*(a), a) / da = df/da at x*
    g = fg.grad(lambda a: O.minimize(quartic, np.zeros(3), (a,), options=dict(gtol=1e-11)).fun)(A)
    x = argmin(A)
    np.testing.assert_allclose(g, -2 * (x - A) * np.arange(1.0, 4.0), rtol=1e-6)


@pytest.mark.parametrize("method", ["hybr", "newton"])
def test_root_matches_scipy_and_differentiates(method):
    res = O.root(system, np.array([1.0, 1.0]), (P,), method=method)
    ref = so.root(lambda x: np.asarray(system(x, P)), [1.0, 1.0])
    assert bool(res.success) and int(res.status) == 0
    np.testing.assert_allclose(res.x, ref.x, atol=1e-10)
    np.testing.assert_allclose(res.fun, 0.0, atol=1e-12)
    solve = lambda p: O.root(system, np.array([1.0, 1.0]), (p,), method=method).x  # noqa: E731
    np.testing.assert_allclose(fg.jacrev(solve)(P), fd_jac(solve, P), atol=1e-6)
    np.testing.assert_allclose(fg.jacfwd(solve)(P), fd_jac(solve, P), atol=1e-6)


def test_root_hard_start_jit_vmap_and_matrix_shape():
    # from far away Newton needs damping and the dogleg its trust region
    for method in ("hybr", "newton"):
        res = O.root(lambda x: fnp.tanh(x) - 0.5, np.array([3.0]), method=method)
        np.testing.assert_allclose(res.x, np.arctanh(0.5), atol=1e-10)
    ps = np.array([[2.0, 0.5], [3.0, 0.3], [1.5, 0.8]])
    solve = lambda p: O.root(system, np.array([1.0, 1.0]), (p,)).x  # noqa: E731
    np.testing.assert_allclose(fg.vmap(solve)(ps), np.stack([solve(p) for p in ps]), atol=1e-12)
    np.testing.assert_allclose(fg.jit(solve)(P), solve(P), rtol=1e-13)
    m = np.array([[2.0, 1.0], [1.0, 3.0]])
    res = O.root(lambda x, b: x @ x - b, np.eye(2), (m,), method="newton")
    assert res.x.shape == (2, 2)
    np.testing.assert_allclose(res.x @ res.x, m, atol=1e-10)


def test_root_singular_jacobian_reports_failure():
    res = O.root(lambda x: x ** 2 + 1.0, np.array([0.0]), method="newton")
    assert not bool(res.success) and int(res.status) == 2


@pytest.mark.parametrize("call, exc, words", [
    (lambda: O.minimize(rosen, np.zeros(2), method="Nelder-Mead"), ValueError, ["minimize", "Nelder-Mead"]),
    (lambda: O.minimize(rosen, np.zeros((2, 2))), ValueError, ["minimize", "x0", "(2, 2)"]),
    (lambda: O.minimize(quartic, np.zeros(3), A), TypeError, ["minimize", "args", "tuple"]),
    (lambda: O.minimize(rosen, np.zeros(2), options=dict(xtol=1)), TypeError, ["minimize", "xtol"]),
    (lambda: O.root(system, np.ones(2), (P,), method="lm"), ValueError, ["root", "method", "lm"]),
    (lambda: O.root(lambda x: x[:1], np.ones(2)), ValueError, ["root", "(2,)", "(1,)"]),
])
def test_bad_input(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value)
