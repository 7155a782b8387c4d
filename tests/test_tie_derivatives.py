"""First and second derivatives of ``logaddexp``, ``logaddexp2`` and ``hypot`` at ties
(``x1 == x2``; for ``hypot`` ``|x1| == |x2|`` and a zero argument), where the functions
are smooth, against central finite differences: forward and reverse, eagerly, under
``jit`` and under ``vmap``; and finite, nan-free derivatives at infinite arguments.
"""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

FUNCS = {"logaddexp": fnp.logaddexp, "logaddexp2": fnp.logaddexp2, "hypot": fnp.hypot}
POINTS = {
    "logaddexp": [(0.4, 0.4), (-1.3, -1.3), (0.0, 0.0), (25.0, 25.0), (0.3, -1.2), (-2.0, 1.5)],
    "logaddexp2": [(0.4, 0.4), (-1.3, -1.3), (0.0, 0.0), (0.3, -1.2), (-2.0, 1.5)],
    "hypot": [(0.4, 0.4), (3.0, -3.0), (-1.5, -1.5), (0.0, 2.5), (-2.0, 0.0), (0.3, -1.2)],
}
H = 1e-4


def _fd_grad(f, p):
    p = np.asarray(p, float)
    out = []
    for i in range(2):
        e = np.eye(2)[i] * H
        out.append((f(*(p + e)) - f(*(p - e))) / (2 * H))
    return np.array(out)


def _fd_hessian(f, p):
    p = np.asarray(p, float)
    hess = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            ei, ej = np.eye(2)[i] * H, np.eye(2)[j] * H
            hess[i, j] = (f(*(p + ei + ej)) - f(*(p + ei - ej)) - f(*(p - ei + ej)) + f(*(p - ei - ej))) / (4 * H * H)
    return hess


def _np(name):
    return getattr(np, name)


def _as_matrix(h):
    return np.array([[float(h[i][j]) for j in range(2)] for i in range(2)])


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_first_derivatives_forward_and_reverse(name):
    f = FUNCS[name]
    for p in POINTS[name]:
        want = _fd_grad(_np(name), p)
        for how, g in [("grad", fg.grad(f, (0, 1))), ("jacfwd", fg.jacfwd(f, (0, 1))),
                       ("jit(grad)", fg.jit(fg.grad(f, (0, 1))))]:
            got = np.array([float(v) for v in g(*p)])
            np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, err_msg=f"{name}{p} {how}")


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_second_derivatives_at_ties_and_away(name):
    f = FUNCS[name]
    ways = {
        "hessian": fg.hessian(f, (0, 1)),
        "jacrev(jacrev)": fg.jacrev(fg.jacrev(f, (0, 1)), (0, 1)),
        "jacfwd(jacfwd)": fg.jacfwd(fg.jacfwd(f, (0, 1)), (0, 1)),
        "jit(hessian)": fg.jit(fg.hessian(f, (0, 1))),
    }
    for p in POINTS[name]:
        want = _fd_hessian(_np(name), p)
        assert np.abs(want).max() > 1e-3  # (a nonzero Hessian: the ties used to give zeros)
        for how, hess in ways.items():
            np.testing.assert_allclose(_as_matrix(hess(*p)), want, rtol=1e-5, atol=1e-6, err_msg=f"{name}{p} {how}")


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_second_derivatives_under_vmap(name):
    f = FUNCS[name]
    pts = np.array(POINTS[name])
    d2 = fg.grad(fg.grad(f, 0), 0)  # d^2 f / d x1^2
    want = np.array([_fd_hessian(_np(name), p)[0, 0] for p in pts])
    for how, g in [("vmap", fg.vmap(d2)), ("jit(vmap)", fg.jit(fg.vmap(d2)))]:
        np.testing.assert_allclose(g(pts[:, 0], pts[:, 1]), want, rtol=1e-5, atol=1e-6, err_msg=how)


def test_logaddexp_at_ties_is_numpys_value():
    x = np.array([0.4, -1.3, 0.0, 25.0, -70.0, 1e30])
    for name in ("logaddexp", "logaddexp2"):
        for dtype in (np.float64, np.float32):
            xs = x.astype(dtype)
            want = _np(name)(xs, xs)
            np.testing.assert_array_equal(FUNCS[name](xs, xs), want)
            np.testing.assert_array_equal(fg.jit(FUNCS[name])(xs, xs), want)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_infinite_arguments(name):
    f = FUNCS[name]
    cases = {(-np.inf, -np.inf): (-np.inf, [0.5, 0.5]), (np.inf, np.inf): (np.inf, [0.5, 0.5]),
             (-np.inf, 1.0): (1.0, [0.0, 1.0]), (2.0, -np.inf): (2.0, [1.0, 0.0]),
             (np.inf, 1.0): (np.inf, [1.0, 0.0]), (np.inf, -np.inf): (np.inf, [1.0, 0.0])}
    for p, (value, grad) in cases.items():
        assert f(*p) == value and fg.jit(f)(*p) == value
        for g in (fg.grad(f, (0, 1)), fg.jit(fg.grad(f, (0, 1))), fg.jacfwd(f, (0, 1))):
            np.testing.assert_array_equal([float(v) for v in g(*p)], grad, err_msg=f"{name}{p}")
        hess = _as_matrix(fg.hessian(f, (0, 1))(*p))
        assert np.isfinite(hess).all(), (name, p, hess)


def test_hypot_infinite_and_nan_arguments():
    f = fnp.hypot
    for p in [(np.inf, 1.0), (-np.inf, -np.inf), (1.0, -np.inf)]:
        assert f(*p) == np.inf
        assert np.isfinite([float(v) for v in fg.grad(f, (0, 1))(*p)]).all()
        assert np.isfinite(_as_matrix(fg.hessian(f, (0, 1))(*p))).all()
    assert fnp.hypot(np.nan, np.inf) == np.inf
    for p in [(np.nan, 0.0), (0.0, np.nan), (np.nan, 1.0)]:
        assert np.isnan(f(*p)) and np.isnan(fg.jit(f)(*p))
