"""cond / switch / while_loop / fori_loop / scan: values, every transform, errors."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.test_util import check_grads

rng = np.random.default_rng(0)


def staged(f, *args):
    """f evaluated through its staged jaxpr (type-checked)."""
    closed = fg.make_jaxpr(f)(*args)
    fg.check_jaxpr(closed)
    leaves = fg.tree_util.tree_leaves(args)
    return fg.tree_util.tree_unflatten(closed.out_tree, fg.eval_closed_jaxpr(closed, *leaves))


# --- seed scenarios ---------------------------------------------------------------------

def counter(a, b):
    return lax.while_loop(lambda c: c[0] < c[1], lambda c: (c[0] + 2, c[1] + 1), (a, b))


def test_counter_loop_eager_staged_vmapped():
    assert counter(0, 10) == (20, 20)
    out = staged(counter, 0, 10)
    assert (int(out[0]), int(out[1])) == (20, 20)
    firsts, seconds = fg.vmap(counter)(np.array([0, 5, 30]), np.array([10, 10, 10]))
    np.testing.assert_array_equal(firsts, [20, 15, 30])
    np.testing.assert_array_equal(seconds, [20, 15, 10])


def newton_sqrt(a):
    return lax.while_loop(lambda x: fnp.abs(x * x - a) > 1e-12 * a, lambda x: 0.5 * (x + a / x), a)


def test_newton_sqrt_value_and_gradient():
    assert newton_sqrt(2.0) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    assert fg.grad(newton_sqrt)(2.0) == pytest.approx(1 / (2 * np.sqrt(2.0)), rel=1e-12)
    check_grads(newton_sqrt, (3.0,), order=2)
    # forward mode through the staged loop
    f = lambda a: staged(newton_sqrt, a)  # noqa: E731
    _, t = fg.jvp(f, (9.0,), (1.0,))
    assert t == pytest.approx(1 / 6, rel=1e-12)


def rnn_loss(W, xs, h0):
    h, _ = lax.scan(lambda h, x: (fnp.tanh(W @ h + x), None), h0, xs)
    return fnp.sum(h)


def bptt(W, xs, h0):
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(W @ hs[-1] + x))
    dh, dW = np.ones_like(h0), np.zeros_like(W)
    for t in range(len(xs), 0, -1):
        da = dh * (1 - hs[t] ** 2)
        dW += np.outer(da, hs[t - 1])
        dh = W.T @ da
    return dW


def test_rnn_1000_steps_gradient_matches_bptt():
    W = rng.normal(size=(8, 8)) * 0.3
    xs = rng.normal(size=(1000, 8)) * 0.5
    h0 = np.zeros(8)
    g = fg.grad(rnn_loss)(W, xs, h0)
    np.testing.assert_allclose(g, bptt(W, xs, h0), rtol=1e-10, atol=1e-12)
    # staged gradient program: a forward scan and one reverse scan
    gp = fg.make_jaxpr(fg.grad(rnn_loss))(W, xs, h0)
    assert str(gp).count("scan[") == 2
    np.testing.assert_allclose(fg.eval_closed_jaxpr(gp, W, xs, h0)[0], g, rtol=1e-12)


def test_rnn_short_check_grads():
    W, xs, h0 = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(5, 3)), rng.normal(size=3)
    check_grads(rnn_loss, (W, xs, h0), order=2)


def rk4(y0, k, n):
    def f(y):
        return -k * y + fnp.sin(y)

    def step(i, y):
        h = 0.01
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    return lax.fori_loop(0, n, step, y0)


def test_rk4_sensitivities_traced_step_count():
    y0, k, n = np.array([0.5, -0.3]), 0.7, np.int64(50)
    for argnum in (0, 1):
        fd_args = [y0, k]

        def f(*a, argnum=argnum):
            full = list(fd_args)
            full[argnum] = a[0]
            return fnp.sum(rk4(full[0], full[1], n))

        check_grads(f, (fd_args[argnum],), order=2)
    # staged forward mode with the step count traced
    out = staged(lambda y, kk, nn: rk4(y, kk, nn), y0, k, n)
    np.testing.assert_allclose(out, rk4(y0, k, 50), rtol=1e-14)


# --- cond / switch ------------------------------------------------------------------------

def piecewise(x):
    return lax.cond(fnp.sum(x) > 0, lambda v: fnp.sin(v) * 2.0, lambda v: fnp.cos(v) + 1.0, x)


@pytest.mark.parametrize("x", [np.array([0.5, 1.0]), np.array([-0.5, -1.0])])
def test_cond_all_transforms(x):
    ref = np.sin(x) * 2.0 if x.sum() > 0 else np.cos(x) + 1.0
    np.testing.assert_allclose(piecewise(x), ref)
    np.testing.assert_allclose(staged(piecewise, x), ref)
    check_grads(piecewise, (x,), order=2)
    g_staged = staged(fg.grad(lambda v: fnp.sum(piecewise(v))), x)
    np.testing.assert_allclose(g_staged, fg.grad(lambda v: fnp.sum(piecewise(v)))(x), rtol=1e-14)
    check_grads(lambda v: staged(piecewise, v), (x,), order=2)


def test_cond_batched_predicate_selects_per_lane():
    xs = np.array([[0.5, 1.0], [-0.5, -1.0], [2.0, -1.0]])
    out = fg.vmap(piecewise)(xs)
    np.testing.assert_allclose(out, np.stack([piecewise(x) for x in xs]))
    g = fg.vmap(fg.grad(lambda v: fnp.sum(piecewise(v))))(xs)
    np.testing.assert_allclose(g, np.stack([fg.grad(lambda v: fnp.sum(piecewise(v)))(x) for x in xs]), rtol=1e-14)


def test_switch_clamps_index_and_closures():
    y = np.array([1.0, 2.0])
    branches = [lambda x: x + y, lambda x: x * y, lambda x: x - y]
    for i, expect in [(-5, 1.0 + y), (0, 1.0 + y), (1, 1.0 * y), (2, 1.0 - y), (7, 1.0 - y)]:
        np.testing.assert_allclose(lax.switch(i, branches, 1.0), expect)
        np.testing.assert_allclose(staged(lambda i: lax.switch(i, branches, 1.0), np.int32(i)), expect)
    out = fg.vmap(lambda i: lax.switch(i, branches, 1.0))(np.array([0, 1, 2, 9], np.int32))
    np.testing.assert_allclose(out, [1.0 + y, y, 1.0 - y, 1.0 - y])


def test_grad_wrt_value_only_closed_over():
    def f(a):
        return lax.cond(a > 0, lambda _: a * a, lambda _: -a, 0.0)

    assert fg.grad(f)(3.0) == 6.0
    g = staged(fg.grad(f), 3.0)
    assert float(g) == 6.0

    def h(w):
        return lax.scan(lambda c, x: (c * w + x, None), 1.0, np.arange(3.0))[0]

    check_grads(h, (0.7,), order=2)


def test_branch_type_mismatch_error():
    with pytest.raises(TypeError, match=r"output leaf 0 is f64\[2\] in true_fun but f64\[3\] in false_fun"):
        fg.make_jaxpr(lambda x: lax.cond(x > 0, lambda: np.ones(2), lambda: np.ones(3)))(1.0)
    with pytest.raises(TypeError, match="structure"):
        lax.cond(True, lambda: (1.0, 2.0), lambda: 1.0)


def test_carry_type_mismatch_error():
    with pytest.raises(TypeError, match=r"carry leaf 0 has type f64\[\] on input but the body returns f64\[2\]"):
        lax.while_loop(lambda c: c < 3, lambda c: fnp.ones(2), 0.0)
    # (a strongly typed int: a weak Python ``1`` adopts the body's float, as in JAX --
    # tests/test_control_flow_weak_carry.py)
    with pytest.raises(TypeError, match=r"carry leaf 1 has type i64\[\]"):
        lax.scan(lambda c, x: ((c[0], c[1] * 0.5), x), (1.0, np.int64(1)), np.arange(3.0))


def test_body_exception_propagates_unchanged():
    class Boom(Exception):
        pass

    def body(c):
        raise Boom("from the body")

    with pytest.raises(Boom, match="from the body"):
        lax.while_loop(lambda c: c < 3, body, 0)


# --- scan / fori ---------------------------------------------------------------------------

def test_scan_reverse_pytree_and_length():
    xs = {"a": np.arange(4.0), "b": np.arange(8.0).reshape(4, 2)}
    carry, ys = lax.scan(lambda c, x: (c + x["a"], x["b"] * c), 0.0, xs, reverse=True)
    ref_c, ref_ys = 0.0, []
    for i in reversed(range(4)):
        ref_ys.append(xs["b"][i] * ref_c)
        ref_c += xs["a"][i]
    assert carry == ref_c
    np.testing.assert_allclose(ys, np.stack(ref_ys[::-1]))
    c2, _ = lax.scan(lambda c, _: (c * 2.0, None), 1.0, None, length=5)
    assert c2 == 32.0
    out = staged(lambda x: lax.scan(lambda c, v: (c + v["a"], v["b"] * c), 0.0, x, reverse=True), xs)
    np.testing.assert_allclose(out[1], ys)


def test_scan_vmap_and_grad_of_vmap():
    W = rng.normal(size=(3, 3)) * 0.5
    xs = rng.normal(size=(4, 6, 3))
    f = lambda x: rnn_loss(W, x, np.zeros(3))  # noqa: E731
    np.testing.assert_allclose(fg.vmap(f)(xs), [f(x) for x in xs], rtol=1e-14)
    check_grads(lambda W: fnp.sum(fg.vmap(lambda x: rnn_loss(W, x, np.zeros(3)))(xs)), (W,), order=2)


def test_fori_loop_static_and_traced_bounds():
    assert lax.fori_loop(0, 5, lambda i, v: v + i, 0) == 10
    assert float(staged(lambda n: lax.fori_loop(0, n, lambda i, v: v + i, 0), np.int64(5))) == 10
    assert fg.grad(lambda x: lax.fori_loop(0, 3, lambda i, v: v * x, 1.0))(2.0) == 12.0
    assert fg.grad(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * x, 1.0))(2.0, np.int64(3)) == 12.0


def test_nested_control_flow():
    def f(x):
        def outer(c, xi):
            inner = lax.while_loop(lambda v: v[1] < 3, lambda v: (v[0] * 0.9 + xi, v[1] + 1), (c, 0))[0]
            return lax.cond(inner > 0, lambda z: z, lambda z: -z, inner), inner

        return lax.scan(outer, x, np.linspace(-1, 1, 4))[0]

    ref = f(0.3)
    np.testing.assert_allclose(staged(f, 0.3), ref)
    check_grads(f, (0.3,), order=2)


def test_while_checkpoints_same_gradient_eager_staged_vmapped():
    def loop(x, n, k=None):
        body = lambda c: (fnp.sin(c[0]) * 0.9 + c[0] * 0.2, c[1] + 1)  # noqa: E731
        return lax.while_loop(lambda c: c[1] < n, body, (x, np.int64(0)), checkpoints=k)[0]

    x = np.array([0.3, -0.7])
    g = fg.grad(lambda x: fnp.sum(loop(x, 23)))(x)
    g_ck = fg.grad(lambda x: fnp.sum(loop(x, 23, 5)))(x)
    np.testing.assert_allclose(g_ck, g, rtol=1e-14)
    # staged, with the trip count itself traced
    prog = fg.make_jaxpr(fg.grad(lambda x, n: fnp.sum(loop(x, n, 5))))(x, np.int64(23))
    np.testing.assert_allclose(fg.eval_closed_jaxpr(prog, x, np.int64(23))[0], g, rtol=1e-14)
    check_grads(lambda x: loop(x, 7, 3), (x,), order=1)
    with pytest.raises(ValueError, match="checkpoints"):
        loop(x, 3, 0)


def test_staged_while_reverse_mode_runtime_trip_count():
    # One gradient program, different trip counts at run time (beyond JAX).
    prog = fg.make_jaxpr(fg.grad(newton_sqrt))(2.0)
    assert "while_tape" in str(prog) and "tape_apply" in str(prog)
    for a in (2.0, 9.0, 1e6):
        (g,) = fg.eval_closed_jaxpr(prog, a)
        assert g == pytest.approx(1 / (2 * np.sqrt(a)), rel=1e-10)
    g = fg.vmap(fg.grad(newton_sqrt))(np.array([2.0, 9.0, 100.0]))
    np.testing.assert_allclose(g, 1 / (2 * np.sqrt([2.0, 9.0, 100.0])), rtol=1e-10)
    np.testing.assert_allclose(staged(fg.vmap(fg.grad(newton_sqrt)), np.array([4.0, 16.0])), [0.25, 0.125], rtol=1e-10)


def nested_loops(x):
    """A while inside a scan inside a while (shared with the lowering tests)."""

    def scan_body(c, xi):
        inner = lax.while_loop(lambda v: v[1] < 2, lambda v: (fnp.sin(v[0]) + xi, v[1] + 1), (c, 0))[0]
        return inner, inner

    def outer_body(s):
        return lax.scan(scan_body, s[0], np.linspace(-0.5, 0.5, 3))[0] * 0.5, s[1] + 1

    return lax.while_loop(lambda s: s[1] < 3, outer_body, (x, 0))[0]


def test_while_inside_scan_inside_while():
    f = nested_loops
    x = 0.4
    check_grads(f, (x,), order=2)
    np.testing.assert_allclose(staged(f, x), f(x), rtol=1e-15)
    np.testing.assert_allclose(staged(fg.grad(f), x), fg.grad(f)(x), rtol=1e-13)
    # vmap of reverse mode through the staged nesting (tapes of tapes, batched)
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(np.array([0.4, -0.2])), [fg.grad(f)(0.4), fg.grad(f)(-0.2)], rtol=1e-12)


def test_switch_derivatives_all_modes():
    branches = [lambda x: fnp.sin(x) * x, lambda x: fnp.exp(-x * x), lambda x: x**3]
    for i in range(3):
        f = lambda x, i=i: lax.switch(i, branches, x)  # noqa: E731
        check_grads(f, (np.array([0.3, -0.8]),), order=2)
        fs = lambda x, i=i: staged(lambda v, j: lax.switch(j, branches, v), x, np.int32(i))  # noqa: E731
        check_grads(fs, (np.array([0.3, -0.8]),), order=2)


def test_staged_hessian_through_while_loop():
    # Forward-over-reverse through the run-time tape (while_tape / tape_apply JVPs).
    h = staged(fg.hessian(newton_sqrt), 2.0)
    assert float(np.asarray(h)) == pytest.approx(-0.25 * 2.0**-1.5, rel=1e-10)
    assert float(fg.jit(fg.hessian(newton_sqrt))(9.0)) == pytest.approx(-0.25 * 9.0**-1.5, rel=1e-10)
    f = lambda v: fnp.sum(fg.vmap(newton_sqrt)(v) * v)  # noqa: E731
    x = np.array([2.0, 9.0])
    np.testing.assert_allclose(staged(fg.hessian(f), x), fg.hessian(f)(x), rtol=1e-10)

    def g(x):
        return lax.while_loop(lambda c: c[1] < 5, lambda c: (fnp.sin(c[0]) * x + c[0], c[1] + 1), (x, 0))[0]

    xx = np.array([0.3, 0.5])
    np.testing.assert_allclose(staged(fg.hessian(lambda v: fnp.sum(g(v))), xx), fg.hessian(lambda v: fnp.sum(g(v)))(xx), rtol=1e-12)
    # Hessian-vector product, staged
    hvp = lambda v, t: fg.jvp(fg.grad(lambda u: fnp.sum(g(u))), (v,), (t,))[1]  # noqa: E731
    np.testing.assert_allclose(staged(hvp, xx, np.array([1.0, 0.0])), fg.hessian(lambda v: fnp.sum(g(v)))(xx)[:, 0], rtol=1e-12)


def test_reverse_over_reverse_through_staged_while():
    # more in test_reverse_over_reverse.py
    assert float(staged(fg.grad(fg.grad(newton_sqrt)), 2.0)) == pytest.approx(-0.25 * 2.0**-1.5, rel=1e-10)
    assert fg.grad(fg.grad(newton_sqrt))(2.0) == pytest.approx(-0.25 * 2.0**-1.5, rel=1e-10)  # eager


def test_grad_of_cond_whose_branch_contains_a_while_loop():
    def f(x):
        def loop(v):
            return lax.while_loop(lambda c: c[1] < 3, lambda c: (fnp.sin(c[0]) + v, c[1] + 1), (v, 0))[0]

        return lax.cond(x > 1.0, loop, lambda v: v * 2.0, x)

    for x in (2.0, 0.5):
        g = fg.grad(f)(x)
        assert float(staged(fg.grad(f), x)) == pytest.approx(g, rel=1e-14)
        assert float(fg.jit(fg.grad(f))(x)) == pytest.approx(g, rel=1e-14)
    check_grads(f, (2.0,), order=1)
