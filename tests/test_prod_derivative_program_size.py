"""Issue #12: the derivatives of ``prod`` and ``cumprod`` are O(n) programs (the log-depth
product scan they used fused into LLVM IR quadratic in n: 88k lines and 14.7 s to compile
``jit(grad(prod))`` at n = 128); values and derivatives (order 2, zeros included) are
unchanged, checked against finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

from harness import fd_grad


def _prod(x):
    return fnp.prod(x)


def _cumprod(x):
    return fnp.sum(fnp.cumprod(x) * fnp.arange(1.0, 1.0 + x.size))


def _cumprod_2d_reverse(x):
    return fnp.sum(fnp.flip(fnp.cumprod(fnp.flip(x.reshape(-1, 2), 0), axis=0), 0) ** 2)


def _prod_axis(x):
    return fnp.sum(fnp.prod(x.reshape(-1, 2), axis=0) ** 2)


@pytest.mark.parametrize("f", [_prod, _cumprod], ids=lambda f: f.__name__)
def test_compiled_derivative_is_linear_in_n(f):
    sizes = {}
    for n in (16, 128):
        x = np.linspace(0.5, 1.5, n)
        sizes[n] = len(fg.jit(fg.grad(f)).lower(x).as_text().splitlines())
    # 8x the elements: a loop program grows by a constant, a quadratic one by 64x.
    assert sizes[128] < 2 * sizes[16] + 200, sizes


_fd_grad = fd_grad


X_WITH_ZEROS = [
    np.array([0.5, 0.0, 2.0, 3.0, 0.0, 1.5]),
    np.array([0.5, 0.0, 2.0, 3.0, -1.0, 1.5]),
    np.array([0.7, -1.2, 2.0, 0.9, 1.1, 1.5]),
]


@pytest.mark.parametrize("f", [_prod, _cumprod, _cumprod_2d_reverse, _prod_axis], ids=lambda f: f.__name__)
@pytest.mark.parametrize("k", range(len(X_WITH_ZEROS)))
def test_derivatives_match_finite_differences(f, k):
    x = X_WITH_ZEROS[k]
    want = _fd_grad(lambda v: float(f(v)), x)
    for g in (fg.grad(f), fg.jit(fg.grad(f)), fg.grad(fg.jit(f))):
        np.testing.assert_allclose(g(x), want, rtol=1e-7, atol=1e-7)
    # order 2: the Hessian rows against differences of the exact gradient
    want_h = np.stack([_fd_grad(lambda v: float(fg.grad(f)(v)[i]), x) for i in range(x.size)])
    for h in (fg.hessian(f), fg.jit(fg.hessian(f))):
        np.testing.assert_allclose(h(x), want_h, rtol=1e-6, atol=1e-6)
    t = np.linspace(-1.0, 1.0, x.size)
    np.testing.assert_allclose(fg.jit(lambda v: fg.jvp(f, (v,), (t,))[1])(x), want @ t, rtol=1e-7, atol=1e-7)
