"""Control flow in compiled code (funcgrad/lowering/control_flow.py): cond/switch,
while, fori/scan, reverse mode through while loops (while_tape / tape_apply, the
run-time tape) and vmap'd loops. Compiled results are compared with the evaluator on
the same jaxpr, and every program here must compile natively (no interpreter
fallback)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

from harness import compiled_and_evaluated

RNG = np.random.default_rng(1)


def check(f, *args, rtol=1e-13, atol=0.0):
    """compile(make_jaxpr(f)) on args equals eval of the same jaxpr; returns the flat outputs."""
    got, want = compiled_and_evaluated(f, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)
    return got


def assert_native(jitted, *args):
    """``jitted`` compiles to native code for ``args`` (no interpreter fallback)."""
    text = jitted.lower(*args).as_text()
    assert "; not compiled" not in text, text.split("; not compiled")[1].splitlines()[0]


# --- cond / switch -------------------------------------------------------------------------

@pytest.mark.parametrize("index", [-5, -1, 0, 1, 2, 3, 100])
def test_switch_index_clamped(index):
    branches = [lambda x, y: (x + y, y), lambda x, y: (x * 2.0, fnp.sin(y)), lambda x, y: (fnp.exp(-x), y * y)]
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=4)
    out = check(lambda i, x, y: lax.switch(i, branches, x, y), np.int32(index), x, y)
    k = min(max(index, 0), 2)
    want = [np.asarray(w) for w in branches[k](x, y)]
    np.testing.assert_allclose(out[0], want[0], rtol=1e-15)
    np.testing.assert_allclose(out[1], want[1], rtol=1e-15)


@pytest.mark.parametrize("p", [True, False])
def test_cond_scalar_and_array_outputs(p):
    c = RNG.normal(size=5)  # closed over: a constant inside the branches

    def f(p, x, n):
        return lax.cond(p, lambda x, n: (fnp.sum(x * c), n + 1, x.T), lambda x, n: (fnp.max(x), n * 3, -x.T), x, n)

    check(f, np.bool_(p), RNG.normal(size=(2, 5)), np.int32(7))


def test_cond_with_float_predicate_and_nested_cond():
    def f(x):
        inner = lambda y: lax.cond(fnp.sum(y) > 0, lambda y: y * 2.0, lambda y: y - 1.0, y)  # noqa: E731
        return lax.cond(x[0], inner, lambda y: y + 10.0, x)

    for x in ([0.0, 1.0, 2.0], [1.0, -3.0, 0.5], [2.0, 1.0, 1.0]):
        check(f, np.array(x))


def test_jit_cond_is_native_and_matches_eager():
    f = fg.jit(lambda x: lax.cond(fnp.sum(x) > 0, lambda x: fnp.sin(x), lambda x: fnp.cos(x) * 2.0, x))
    for x in (np.arange(4.0), -np.arange(4.0)):
        assert_native(f, x)
        np.testing.assert_allclose(f(x), np.sin(x) if x.sum() > 0 else np.cos(x) * 2.0, rtol=1e-15)


# --- while ------------------------------------------------------------------------------------

def counter(a, b):
    return lax.while_loop(lambda c: c[0] < c[1], lambda c: (c[0] + 2, c[1] + 1), (a, b))


def newton_sqrt(a):
    return lax.while_loop(lambda x: fnp.abs(x * x - a) > 1e-12 * a, lambda x: 0.5 * (x + a / x), a)


def newton_vec(a):
    return lax.while_loop(lambda x: fnp.max(fnp.abs(x * x - a) - 1e-12 * a) > 0, lambda x: 0.5 * (x + a / x), a)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_counter_loop(dtype):
    for a, b in ((0, 10), (5, 10), (30, 10), (-7, 3)):
        out = check(counter, dtype(a), dtype(b))
        want = counter(a, b)
        assert (int(out[0]), int(out[1])) == (int(want[0]), int(want[1]))


def test_newton_sqrt_scalar_and_vector():
    for a in (2.0, 9.0, 1e6, 1e-3):
        (x,) = check(newton_sqrt, a)
        assert x == pytest.approx(np.sqrt(a), rel=1e-12)
    a = RNG.uniform(0.5, 100.0, size=1000)
    (x,) = check(newton_vec, a)
    np.testing.assert_allclose(x, np.sqrt(a), rtol=1e-12)


def test_while_array_carries_swap_and_pass_through():
    # Carries swapped every iteration, one passed through unchanged, one in a register;
    # odd and even trip counts (the double buffers end on either side).
    def f(x, y, z, n):
        def body(c):
            x, y, z, i = c
            return y + 1.0, x * 2.0, z, i + 1

        return lax.while_loop(lambda c: c[3] < n, body, (x, y, z, np.int32(0)))

    x, y, z = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), RNG.normal(size=7)
    for n in (0, 1, 2, 5, 6):
        check(f, x, y, z, np.int32(n))


def test_while_body_with_matmul_and_reduction():
    A = RNG.normal(size=(8, 8))
    A = A / np.linalg.norm(A, 2) * 0.9

    def power(v):
        def body(c):
            v, k = c
            w = A @ v
            return w / fnp.sqrt(fnp.sum(w * w)), k + 1

        return lax.while_loop(lambda c: c[1] < 50, body, (v, 0))

    check(power, RNG.normal(size=8), rtol=1e-12)


def test_fori_loop_static_and_dynamic_bounds():
    f = lambda x: lax.fori_loop(0, 10, lambda i, c: c * 1.5 + i, x)  # noqa: E731
    check(f, RNG.normal(size=3))
    g = lambda x, n: lax.fori_loop(0, n, lambda i, c: fnp.sin(c) + i, x)  # noqa: E731
    for n in (0, 1, 17):
        check(g, RNG.normal(size=(2, 3)), np.int32(n))


# --- scan -------------------------------------------------------------------------------------

from test_control_flow import bptt, nested_loops, rnn_loss  # noqa: E402  (one RNN and its hand-written BPTT)


@pytest.mark.parametrize("n", [4, 64])
def test_rnn_forward_and_gradient(n):
    W, xs, h0 = RNG.normal(size=(n, n)) * (1.0 / np.sqrt(n)), RNG.normal(size=(30, n)), RNG.normal(size=n)
    # (BLAS vs NumPy summation order: compare with an absolute floor)
    check(rnn_loss, W, xs, h0, rtol=1e-12, atol=1e-13)
    (dW,) = check(fg.grad(rnn_loss), W, xs, h0, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(dW, bptt(W, xs, h0), rtol=1e-10, atol=1e-13)
    check(fg.grad(rnn_loss, argnums=(0, 1, 2)), W, xs, h0, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_reverse_stacked_outputs(reverse):
    def f(c0, xs):
        return lax.scan(lambda c, x: (c * 0.5 + x, (c * x, fnp.sum(x))), c0, xs, reverse=reverse)

    check(f, RNG.normal(size=3), RNG.normal(size=(7, 3)))
    check(fg.grad(lambda c0, xs: fnp.sum(f(c0, xs)[1][0]) + f(c0, xs)[0].sum(), argnums=(0, 1)),
          RNG.normal(size=3), RNG.normal(size=(7, 3)))


def test_scan_pytrees_and_fused_xs():
    def f(params, xs):
        def body(carry, x):
            new = {"a": carry["a"] * params["w"] + x["u"], "n": carry["n"] + 1}
            return new, (new["a"] * 2.0, x["v"] > 0)

        # xs["u"] is a fused (not materialised) value: sliced lazily per iteration
        return lax.scan(body, {"a": fnp.zeros(4), "n": np.int32(0)}, {"u": fnp.sin(xs) * 3.0, "v": xs})

    check(f, {"w": RNG.normal(size=4)}, RNG.normal(size=(6, 4)))


def test_scan_without_xs_and_empty_scan():
    check(lambda c: lax.scan(lambda c, _: (c + 1.0, c * 2.0), c, None, length=5), RNG.normal(size=2))
    check(lambda c, xs: lax.scan(lambda c, x: (c + x, c), c, xs), RNG.normal(size=2), np.zeros((0, 2)))


def test_while_inside_scan_inside_while():
    f = nested_loops

    check(f, 0.3)
    assert_native(fg.jit(f), 0.3)
    # Its gradient records tapes inside tapes (a scan stacking while tapes, inside a
    # while tape): not lowered yet, so jit runs the interpreter for it.
    jf = fg.jit(fg.grad(f))
    assert jf(0.3) == pytest.approx(fg.grad(f)(0.3), rel=1e-12)


def test_jit_rnn_forward_and_gradient_are_native():
    W, xs, h0 = RNG.normal(size=(16, 16)) * 0.25, RNG.normal(size=(50, 16)), RNG.normal(size=16)
    f, g = fg.jit(rnn_loss), fg.jit(fg.grad(rnn_loss))
    assert_native(f, W, xs, h0)
    assert_native(g, W, xs, h0)
    assert f(W, xs, h0) == pytest.approx(rnn_loss(W, xs, h0), rel=1e-12)
    np.testing.assert_allclose(g(W, xs, h0), bptt(W, xs, h0), rtol=1e-10, atol=1e-13)


# --- reverse mode through while: the run-time tape ---------------------------------------------

def test_jit_grad_newton_sqrt_native_with_run_time_trip_counts(monkeypatch, capfd):
    monkeypatch.setenv("FUNCGRAD_LOG_COMPILES", "1")
    g = fg.jit(fg.grad(newton_sqrt))
    assert_native(g, 2.0)
    for a in (2.0, 9.0, 1e6, 1e-6, 1e300):  # different numbers of iterations
        assert g(a) == pytest.approx(1 / (2 * np.sqrt(a)), rel=1e-10)
    assert "running the interpreter" not in capfd.readouterr().err
    prog = fg.make_jaxpr(fg.grad(newton_sqrt))(2.0)
    assert "while_tape" in str(prog) and "tape_apply" in str(prog)
    for a in (2.0, 1e6):
        check(fg.grad(newton_sqrt), a, rtol=1e-13)


def test_tape_grows_far_beyond_its_first_capacity():
    # Array residuals, n iterations known only at run time (the tape starts at 16 records).
    def f(x, n):
        out = lax.while_loop(lambda c: c[1] < n, lambda c: (fnp.sin(c[0]) * 1.01 + c[0] * 0.1, c[1] + 1), (x, 0))
        return fnp.sum(out[0] ** 2)

    g = fg.jit(fg.grad(f))
    x = RNG.normal(size=33)
    for n in (0, 1, 15, 16, 17, 1000):
        assert_native(g, x, np.int32(n)) if n == 0 else None
        want = fg.grad(f)(x, np.int32(n))
        np.testing.assert_allclose(g(x, np.int32(n)), want, rtol=1e-11, atol=1e-14)
        check(fg.grad(f), x, np.int32(n), rtol=1e-12)


def test_grad_through_while_with_closure_and_multiple_carries():
    def f(w, x):
        def body(c):
            h, v, k = c
            return fnp.tanh(w * h + v), v * 0.9, k + 1

        h, v, _ = lax.while_loop(lambda c: (c[2] < 25) & (fnp.max(fnp.abs(c[1])) > 1e-3), body, (x, x * 2.0, 0))
        return fnp.sum(h * h) + fnp.sum(v)

    w, x = RNG.normal(size=5), RNG.normal(size=5)
    # (sums of many terms with cancellation: absolute floor)
    check(fg.grad(f, argnums=(0, 1)), w, x, rtol=1e-12, atol=1e-12)
    g = fg.jit(fg.grad(f, argnums=(0, 1)))
    assert_native(g, w, x)
    for a, b in zip(g(w, x), fg.grad(f, argnums=(0, 1))(w, x)):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


def test_tape_repeated_calls_do_not_leak():
    import resource

    g = fg.jit(fg.grad(lambda x, n: fnp.sum(lax.while_loop(lambda c: c[1] < n, lambda c: (c[0] * 1.001, c[1] + 1), (x, 0))[0])))
    x = np.ones(1000)  # 8 KB of residuals per iteration, 2000 iterations: 16 MB per call
    g(x, np.int32(2000))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(30):
        g(x, np.int32(2000))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 100_000  # KiB: 30 leaked tapes would be ~1 GB


# --- vmap'd loops (batched predicates) under jit ------------------------------------------------

def test_jit_vmap_while_batched_predicate():
    f = fg.jit(fg.vmap(counter))
    a, b = np.array([0, 5, 30]), np.array([10, 10, 10])
    assert_native(f, a, b)
    firsts, seconds = f(a, b)
    np.testing.assert_array_equal(firsts, [20, 15, 30])
    np.testing.assert_array_equal(seconds, [20, 15, 10])
    check(fg.vmap(counter), a, b)
    check(fg.vmap(newton_sqrt), np.array([2.0, 9.0, 1e6]))


def test_jit_vmap_grad_while_batched_tape():
    g = fg.jit(fg.vmap(fg.grad(newton_sqrt)))
    a = np.array([2.0, 9.0, 100.0, 1e8])
    assert_native(g, a)
    np.testing.assert_allclose(g(a), 1 / (2 * np.sqrt(a)), rtol=1e-10)
    check(fg.vmap(fg.grad(newton_sqrt)), a, rtol=1e-13)


# --- fallback ---------------------------------------------------------------------------------

def test_unsupported_primitive_inside_a_body_falls_back_to_the_interpreter(monkeypatch, capfd):
    monkeypatch.setenv("FUNCGRAD_LOG_COMPILES", "1")
    spd = np.eye(3) * 2.0

    def f(x):
        return lax.cond(x[0] > 0, lambda x: fnp.linalg.cholesky(spd * x[0])[0], lambda x: x, x)

    x = np.array([1.5, 2.0, 3.0])
    jf = fg.jit(f)
    np.testing.assert_allclose(jf(x), np.linalg.cholesky(spd * 1.5)[0], rtol=1e-14)
    np.testing.assert_allclose(jf(-x), -x)


# --- sort (funcgrad/lowering/sort.py) -------------------------------------------------------------

def _sort(*ops, dimension=0, num_keys=1):
    from funcgrad.core.prims.sort import sort_p

    return sort_p.bind(*ops, dimension=dimension, num_keys=num_keys)


@pytest.mark.parametrize("n", [1, 2, 3, 16, 17, 257])
def test_sort_stable_nan_last_multi_operand(n):
    x = RNG.normal(size=n)
    x[RNG.random(n) < 0.15] = np.nan
    x[RNG.random(n) < 0.2] = 0.0
    x[RNG.random(n) < 0.1] = -0.0  # equal to 0.0: order kept (stable)
    k = RNG.integers(0, 3, size=n).astype(np.int32)
    check(lambda x: _sort(x), x)
    check(lambda x: _sort(x, np.arange(n), num_keys=1), x)  # argsort-style
    check(lambda k, x: _sort(k, x, -x, num_keys=2), k, x)
    check(lambda b, x: _sort(b, x), x > 0, x)
    check(lambda x: _sort(x.astype(np.float32), num_keys=1), x)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_sort_along_each_dimension_of_fused_operands(dim):
    x = RNG.integers(-3, 4, size=(5, 6, 7)).astype(np.float64)  # many ties
    check(lambda x: _sort(x * 2.0, fnp.sin(x), dimension=dim), x)
    check(lambda x: fnp.argsort(x, axis=dim), x)


def test_jit_sort_inside_loop_is_native():
    f = fg.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: fnp.sort(c * -1.0 + i), x))
    x = RNG.normal(size=50)
    assert_native(f, x)
    want = x
    for i in range(3):
        want = np.sort(want * -1.0 + i)
    np.testing.assert_array_equal(f(x), want)
