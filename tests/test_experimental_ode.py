"""funcgrad.experimental.ode.odeint: values against closed forms and
scipy.integrate.solve_ivp, adjoint gradients against closed forms and finite
differences, jit against eager, vmap against a loop, pytrees, errors."""
import numpy as np
import pytest
import scipy.integrate as si

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.experimental.ode import odeint
from tests.harness import fd_grad

TS = np.linspace(0.0, 2.0, 5)


def decay(y, t, k):
    return -k * y


def oscillator(state, t, w):
    x, v = state
    return v, -w ** 2 * x


def lotka_volterra(y, t, p):
    a, b, c, d = p[0], p[1], p[2], p[3]
    return fnp.stack([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])


P = np.array([1.1, 0.4, 0.4, 0.1])
Y0 = np.array([10.0, 5.0])


def test_closed_forms():
    ys = odeint(decay, np.array([1.0, 2.0]), TS, 1.5)
    np.testing.assert_allclose(ys, np.array([1.0, 2.0]) * np.exp(-1.5 * TS)[:, None], rtol=1e-7)
    x, v = odeint(oscillator, (1.0, 0.0), TS, 2.0)
    np.testing.assert_allclose(x, np.cos(2 * TS), atol=1e-7)
    np.testing.assert_allclose(v, -2 * np.sin(2 * TS), atol=1e-7)
    assert x.dtype == np.float64 and x.shape == (5,)


def test_matches_solve_ivp_rk45():
    ts = np.linspace(0.0, 15.0, 7)
    ys = odeint(lotka_volterra, Y0, ts, P, rtol=1e-10, atol=1e-10)
    ref = si.solve_ivp(lambda t, y: [P[0] * y[0] - P[1] * y[0] * y[1], P[3] * y[0] * y[1] - P[2] * y[1]],
                       (0.0, 15.0), Y0, method="RK45", t_eval=ts, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ys, ref.y.T, rtol=1e-7)


def test_adjoint_gradients_closed_form():
    # y(t) = y0 exp(-k (t - t0)): d y_T / dk = -(T - t0) y_T, d y_T / d y0 = exp(-k T)
    k, y0 = 1.5, 2.0
    yT = y0 * np.exp(-k * TS[-1])
    g_y0, g_k = fg.grad(lambda y0, k: odeint(decay, y0, TS, k)[-1], argnums=(0, 1))(y0, k)
    np.testing.assert_allclose(g_y0, np.exp(-k * TS[-1]), rtol=1e-6)
    np.testing.assert_allclose(g_k, -TS[-1] * yT, rtol=1e-6)
    g_t = fg.grad(lambda ts: odeint(decay, y0, ts, k).sum())(TS)
    ys = y0 * np.exp(-k * TS)
    np.testing.assert_allclose(g_t, np.concatenate([[k * ys[1:].sum()], -k * ys[1:]]), rtol=1e-6)
    g_w = fg.grad(lambda w: odeint(oscillator, (1.0, 0.0), TS, w)[0][-1])(2.0)
    np.testing.assert_allclose(g_w, -TS[-1] * np.sin(2.0 * TS[-1]), rtol=1e-6)


def test_adjoint_gradients_against_finite_differences():
    ts = np.linspace(0.0, 3.0, 4)

    def loss(p, y0):
        ys = odeint(lotka_volterra, y0, ts, p, rtol=1e-10, atol=1e-10)
        return fnp.sum(ys[1:] ** 2 * np.array([1.0, 0.5]))

    g_p, g_y0 = fg.grad(loss, argnums=(0, 1))(P, Y0)
    np.testing.assert_allclose(g_p, fd_grad(lambda p: loss(p, Y0), P, eps=1e-6), rtol=1e-5)
    np.testing.assert_allclose(g_y0, fd_grad(lambda y: loss(P, y), Y0, eps=1e-6), rtol=1e-5)
    # forward mode differentiates the solver's steps: the same derivative
    _, t_out = fg.jvp(lambda p: loss(p, Y0), (P,), (np.array([1.0, 0.0, 0.0, 0.0]),))
    np.testing.assert_allclose(t_out, g_p[0], rtol=1e-5)


def test_jit_matches_eager_and_grad_under_jit():
    f = lambda y0, k: odeint(decay, y0, TS, k)  # noqa: E731
    y0 = np.array([1.0, -0.5])
    eager, compiled = f(y0, 0.7), fg.jit(f)(y0, 0.7)
    assert compiled.dtype == eager.dtype and compiled.shape == eager.shape
    np.testing.assert_allclose(compiled, eager, rtol=1e-13)
    loss = lambda k: odeint(oscillator, (1.0, 0.0), TS, k)[0][-1]  # noqa: E731
    np.testing.assert_allclose(fg.jit(fg.grad(loss))(2.0), fg.grad(loss)(2.0), rtol=1e-12)


def test_vmap_over_y0_matches_loop():
    y0s = np.array([[1.0, 2.0], [30.0, 0.1], [0.0, 0.0]])  # very different step histories
    got = fg.vmap(lambda y0: odeint(lotka_volterra, y0, TS, P))(y0s)
    want = np.stack([odeint(lotka_volterra, y0, TS, P) for y0 in y0s])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_pytree_state_float32_and_single_time():
    ys = odeint(lambda s, t: {"a": -s["a"], "b": 2 * s["a"][0]}, {"a": np.ones(2), "b": np.zeros(())}, TS)
    np.testing.assert_allclose(ys["a"], np.exp(-TS)[:, None] * np.ones(2), rtol=1e-7)
    np.testing.assert_allclose(ys["b"], 2 * (1 - np.exp(-TS)), rtol=1e-7)
    y32 = odeint(decay, np.float32(1.0), TS.astype(np.float32), 1.0, rtol=1e-5, atol=1e-5)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, np.exp(-TS), rtol=1e-4)
    np.testing.assert_allclose(odeint(decay, 3.0, np.array([0.5]), 1.0), [3.0])


def test_mxstep_and_hmax():
    stalled = odeint(decay, 1.0, np.array([0.0, 10.0]), 1.0, mxstep=2)
    assert stalled[-1] > 0.5  # stopped advancing after two steps, as JAX
    np.testing.assert_allclose(odeint(decay, 1.0, TS, 1.0, hmax=0.01), np.exp(-TS), rtol=1e-8)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: odeint(decay, 1.0, np.ones((2, 2)), 1.0), ValueError, ["odeint", "t", "(2, 2)"]),
    (lambda: odeint(lambda y, t: y[:1], np.ones(2), TS), ValueError, ["odeint", "(1,)", "(2,)"]),
    (lambda: odeint(lambda y, t: (y, y), np.ones(2), TS), ValueError, ["odeint", "structure"]),
    (lambda: odeint("f", 1.0, TS), TypeError, ["odeint", "func", "str"]),
    (lambda: odeint(decay, 1.0, TS, 1.0, rtol="tight"), TypeError, ["odeint", "rtol"]),
])
def test_bad_input(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value)


def test_gradient_through_a_closed_over_parameter():
    # JAX's odeint closure-converts func: a parameter func closes over is differentiated
    # by the adjoint too.
    t = np.linspace(0.0, 1.0, 5)

    def closed(k):
        return odeint(lambda y, s: -k * y, 1.0, t)[-1]

    def explicit(k):
        return odeint(lambda y, s, k: -k * y, 1.0, t, k)[-1]

    np.testing.assert_allclose(fg.grad(closed)(0.7), -np.exp(-0.7), rtol=1e-7)
    np.testing.assert_allclose(fg.grad(closed)(0.7), fg.grad(explicit)(0.7), rtol=1e-12)
    np.testing.assert_allclose(fg.jit(fg.grad(closed))(0.7), fg.grad(closed)(0.7), rtol=1e-12)
