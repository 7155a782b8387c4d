"""Derivatives of ``.at[i].multiply(u)`` (scatter kind=mul) where an update is zero: the
JVP used to divide by the update (0/0 = NaN under jit; found by the fuzzer, seed 18627)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

X = np.array([1.5, -2.0, 0.7])
IDX = np.array([0, 0, 1, 2, 2])  # duplicates: two updates hit positions 0 and 2
W = np.array([1.0, 2.0, 3.0])


def f(x, u):
    return fnp.sum(fnp.at(x)[IDX].mul(u) * W)


def fd(fun, v, eps=1e-6):
    g = np.zeros_like(v)
    for i in range(v.size):
        up, um = v.copy(), v.copy()
        up[i] += eps
        um[i] -= eps
        g[i] = (fun(up) - fun(um)) / (2 * eps)
    return g


@pytest.mark.parametrize("u", [
    np.array([0.0, 3.0, 2.0, 0.0, 1.5]),   # one zero at each of two positions
    np.array([0.0, 0.0, 2.0, 1.0, 1.5]),   # two zeros at one position
    np.array([2.0, 3.0, 0.5, 1.0, 1.5]),   # no zeros
])
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_gradient_w_r_t_updates_and_operand(u, wrap):
    g = fg.grad(f, argnums=(0, 1))
    g = fg.jit(g) if wrap == "jit" else g
    gx, gu = g(X, u)
    np.testing.assert_allclose(gu, fd(lambda v: float(f(X, v)), u), atol=1e-7)
    np.testing.assert_allclose(gx, fd(lambda v: float(f(v, u)), X), atol=1e-7)
    t = fg.jvp(lambda v: f(X, v), (u,), (np.ones(5),))[1]
    np.testing.assert_allclose(t, fd(lambda v: float(f(X, v)), u).sum(), atol=1e-7)


def test_fuzzer_seed_18627():
    x0 = np.array([[-0.969, 0.416, -0.925]])
    c1 = np.cos(1.3 * np.arange(3.0) + 1).reshape((1, 3))

    def loss(x):
        v1 = fnp.abs(x)
        v2 = (fnp.abs(v1) + 0.5) ** v1
        v4, _ = lax.scan(lambda c, xx: (c, xx > -0.5), v2, v1)
        v6 = fnp.einsum("ij,ij->", v4, v1.astype(np.int64))  # 0: every |x| < 1
        return fnp.sum(fnp.at(v2)[fnp.argmax(v4) % 1].mul(v6) * c1)

    np.testing.assert_array_equal(fg.jit(fg.grad(loss))(x0), fg.grad(loss)(x0))
    assert not np.isnan(fg.jit(fg.grad(loss))(x0)).any()
