"""Reverse over reverse through a *staged* while_loop (beyond JAX): ``grad(grad(f))``,
``jacrev(jacrev(f))`` and third order under ``make_jaxpr`` / ``jit``, where the trip
count is only known at run time. The rules are in ``transforms/control_flow/tape_scan.py``: tangent
tapes on the way forward, cotangent tapes on the way back."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.test_util import check_grads
from test_control_flow import nested_loops, newton_sqrt, staged


def damped(x):
    """Vector carry, a closure over x, an integer counter."""
    body = lambda c: (fnp.sin(c[0]) * x + 0.3 * c[0], c[1] + 1)  # noqa: E731
    return fnp.sum(lax.while_loop(lambda c: c[1] < 6, body, (x, 0))[0] ** 2)


def data_dependent(x):
    """The trip count depends on the input values."""
    def body(c):
        v, s, i = c
        return v * 0.8 + fnp.tanh(v) * 0.1, s + fnp.sum(v * v), i + 1

    return lax.while_loop(lambda c: fnp.max(fnp.abs(c[0])) > 0.05, body, (x, 0.0, 0))[1]


def test_newton_sqrt_second_and_third_derivative_staged():
    for a in (2.0, 9.0):
        d2 = staged(fg.grad(fg.grad(newton_sqrt)), a)
        assert float(d2) == pytest.approx(-0.25 * a**-1.5, rel=1e-9)
        d3 = staged(fg.grad(fg.grad(fg.grad(newton_sqrt))), a)
        assert float(d3) == pytest.approx(0.375 * a**-2.5, rel=1e-8)
    assert float(fg.jit(fg.grad(fg.grad(newton_sqrt)))(4.0)) == pytest.approx(-0.25 / 8, rel=1e-9)


@pytest.mark.parametrize("f", [damped, data_dependent], ids=["damped", "data_dependent"])
def test_grad_of_grad_staged_matches_eager_and_finite_differences(f):
    x = np.array([0.4, -0.7, 1.1])
    gg = lambda v: fnp.sum(fg.grad(f)(v) * fnp.cos(v))  # noqa: E731
    want = fg.grad(gg)(x)  # eager: the loop runs in Python
    np.testing.assert_allclose(staged(fg.grad(gg), x), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fg.jit(fg.grad(gg))(x), want, rtol=1e-10, atol=1e-12)
    # order 2 in reverse mode of the staged function: reverse over reverse, vs finite differences
    check_grads(fg.jit(f), (x,), order=2, modes=("rev",))
    check_grads(fg.jit(fg.grad(f)), (x,), order=1)


def test_jacrev_of_jacrev_equals_hessian():
    x = np.array([0.4, -0.7])
    h = fg.hessian(damped)(x)
    np.testing.assert_allclose(staged(fg.jacrev(fg.jacrev(damped)), x), h, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fg.jit(fg.jacrev(fg.jacrev(damped)))(x), h, rtol=1e-10, atol=1e-12)


def test_reverse_over_reverse_with_checkpoints_and_traced_trip_count():
    def loop(x, n):
        body = lambda c: (fnp.sin(c[0]) * 0.9 + c[0] * 0.2, c[1] + 1)  # noqa: E731
        return fnp.sum(lax.while_loop(lambda c: c[1] < n, body, (x, np.int64(0)), checkpoints=4)[0] ** 3)

    x = np.array([0.3, -0.5])
    want = fg.hessian(lambda v: loop(v, 11))(x)
    got = fg.jit(fg.jacrev(fg.grad(loop)))(x, np.int64(11))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_reverse_over_reverse_traced_fori_loop_rk4():
    def final(y0, k, n):
        def rk4(i, y):
            h = 0.05
            f = lambda v: -k * v * v  # noqa: E731
            a = f(y); b = f(y + h / 2 * a); c = f(y + h / 2 * b); d = f(y + h * c)  # noqa: E702
            return y + h / 6 * (a + 2 * b + 2 * c + d)

        return lax.fori_loop(0, n, rk4, y0)

    n = np.int64(20)
    d2 = staged(fg.grad(fg.grad(final), argnums=1), 1.0, 0.5, n)
    want = fg.grad(fg.grad(final), argnums=1)(1.0, 0.5, 20)
    assert float(d2) == pytest.approx(float(want), rel=1e-10)


def test_reverse_over_reverse_nested_and_in_cond():
    x = 0.4
    np.testing.assert_allclose(staged(fg.grad(fg.grad(nested_loops)), x), fg.grad(fg.grad(nested_loops))(x), rtol=1e-10)

    def f(x):
        def loop(v):
            return lax.while_loop(lambda c: c[1] < 3, lambda c: (fnp.sin(c[0]) * v, c[1] + 1), (v, 0))[0]

        return lax.cond(x > 1.0, loop, lambda v: v ** 3, x)

    for x in (2.0, 0.5):
        assert float(staged(fg.grad(fg.grad(f)), x)) == pytest.approx(float(fg.grad(fg.grad(f))(x)), rel=1e-10)


def test_mixed_orders_through_staged_while():
    x = np.array([0.4, -0.7])
    # reverse over forward: grad of a jvp through the staged loop
    gj = lambda v: fg.jvp(damped, (v,), (fnp.ones_like(v),))[1]  # noqa: E731
    np.testing.assert_allclose(staged(fg.grad(gj), x), fg.grad(gj)(x), rtol=1e-10)
    # forward over reverse over reverse
    t = np.array([1.0, 0.5])
    third = lambda v: fg.jvp(fg.grad(lambda u: fnp.sum(fg.grad(damped)(u))), (v,), (t,))[1]  # noqa: E731
    np.testing.assert_allclose(staged(third, x), third(x), rtol=1e-9, atol=1e-12)
    # the program type-checks and shows the tape loops
    prog = fg.make_jaxpr(fg.grad(fg.grad(newton_sqrt)))(2.0)
    fg.check_jaxpr(prog)
    assert "tape_scan" in str(prog)


# --- vmap of reverse mode through staged whiles nested in other constructs -----------------

def _loop_cond(x):
    def loop(v):
        return lax.while_loop(lambda c: c[1] < 3, lambda c: (fnp.sin(c[0]) * v + 0.1, c[1] + 1), (v, 0))[0]

    return lax.cond(x > 1.0, loop, lambda v: v ** 3, x)


@pytest.mark.parametrize("f", [nested_loops, _loop_cond], ids=["while_in_scan_in_while", "while_in_cond"])
def test_vmap_of_grad_through_nested_staged_while(f):
    xs = np.array([0.4, -0.2, 1.3, 2.0])
    want = np.array([fg.grad(f)(x) for x in xs])
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(xs), want, rtol=1e-12)
    np.testing.assert_allclose(staged(fg.vmap(fg.grad(f)), xs), want, rtol=1e-12)
    np.testing.assert_allclose(fg.jit(fg.vmap(fg.grad(f)))(xs), want, rtol=1e-12)
    want2 = np.array([fg.grad(fg.grad(f))(x) for x in xs])
    np.testing.assert_allclose(staged(fg.vmap(fg.grad(fg.grad(f))), xs), want2, rtol=1e-10)


def test_vmap_of_reverse_over_reverse_with_per_lane_trip_counts():
    xs = np.array([2.0, 9.0, 100.0])
    got = staged(fg.vmap(fg.grad(fg.grad(newton_sqrt))), xs)
    np.testing.assert_allclose(got, -0.25 * xs**-1.5, rtol=1e-9)
    x = np.array([0.4, -0.7, 1.1])
    h = np.array([fg.grad(lambda v: fg.grad(damped)(v)[i])(x) for i in range(3)])
    np.testing.assert_allclose(fg.jit(fg.jacrev(fg.grad(damped)))(x), h, rtol=1e-10, atol=1e-12)


# --- every construct, staged under jit, to order 2 in both modes vs finite differences -------

def _cond(x):
    return lax.cond(fnp.sum(x) > 0.0, lambda v: fnp.sin(v) * v, lambda v: fnp.exp(-v * v), x)


def _switch(x):
    return lax.switch(np.int32(1), [lambda v: v ** 3, lambda v: fnp.tanh(v) * v, lambda v: -v], x)


def _scan(x):
    return lax.scan(lambda c, xi: (fnp.sin(c) * xi + c * 0.5, c * xi), x, np.linspace(0.5, 1.5, 4))


def _fori_traced(x):
    n = fnp.asarray(4) + fnp.asarray(fnp.sum(x) > 100.0, dtype=np.int64)  # traced under jit
    return lax.fori_loop(0, n, lambda i, v: fnp.cos(v) * v + 0.1 * i, x)


@pytest.mark.parametrize("f", [_cond, _switch, _scan, _fori_traced, damped, newton_sqrt],
                         ids=["cond", "switch", "scan", "fori_traced", "while", "newton_while"])
def test_every_construct_jitted_order_two_both_modes(f):
    x = np.array([0.3, 0.8]) if f is not newton_sqrt else 3.0
    check_grads(fg.jit(f), (x,), order=2, modes=("fwd", "rev"))


def test_grad_of_jit_with_a_while_inside_runs_compiled(monkeypatch, capsys):
    # The tape cannot leave compiled code, so the linear part recomputes the forward
    # (tape included) natively; nested loops and closed-over constants included. (The
    # executables die with their programs, so the compile log is what is checked.)
    monkeypatch.setenv("FUNCGRAD_LOG_COMPILES", "1")
    for f, x in ((damped, np.array([0.4, -0.7])), (nested_loops, 0.4), (newton_sqrt, 9.0)):
        g = fg.grad(lambda v, f=f: fnp.sum(fg.jit(f)(v)))
        np.testing.assert_allclose(g(x), fg.grad(lambda v, f=f: fnp.sum(f(v)))(x), rtol=1e-12)
        log = capsys.readouterr().err
        assert "compiling jit(" in log and "running the interpreter" not in log, log
        check_grads(fg.jit(f), (x,), order=2, modes=("rev",))
