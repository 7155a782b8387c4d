"""Run-time tapes in compiled code beyond one while_tape -> tape_apply pair
(funcgrad/lowering/tapes.py, funcgrad/lowering/control_flow.py): tape_split /
tape_zip (forward-over-reverse through a staged while_loop), tape_empty (gradient of a
cond whose branch holds a while_loop), stacks of tapes (a while_loop inside a scan
under reverse mode; tapes recorded inside another tape's records), custom_lin
(linearized programs through custom_vjp / checkpoint), which is inlined, and
tape_scan / tape_zeros (reverse over reverse through a staged while_loop: tangent and
cotangent tapes, zero tapes, batched tapes, tapes held in records and copied).

Every program here must compile natively (no interpreter fallback), equal the eager
result, and agree with finite differences where that is cheap."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.avals import ShapedArray
from funcgrad.core.prims.control_flow import cond_p, scan_p
from funcgrad.core.pytree import tree_flatten
from funcgrad.errors import LoweringError
from funcgrad.lowering import compile_jaxpr
from funcgrad.tapes import TapeAval, tape_apply_p, tape_empty_p, tape_split_p, tape_zip_p, while_tape_p
from funcgrad.transforms.jaxpr_ad import closed_jaxpr
from test_control_flow import nested_loops

from harness import compiled_and_evaluated

RNG = np.random.default_rng(7)


def assert_native(jitted, *args):
    """``jitted`` compiles to native code for ``args`` (no interpreter fallback)."""
    text = jitted.lower(*args).as_text()
    assert "; not compiled" not in text, text.split("; not compiled")[1].splitlines()[0]


def assert_tree_close(got, want, rtol=1e-12, atol=0.0):
    g_leaves, g_tree = tree_flatten(got)
    w_leaves, w_tree = tree_flatten(want)
    assert g_tree == w_tree
    for g, w in zip(g_leaves, w_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def jit_matches_eager(fun, *args, rtol=1e-12, atol=0.0):
    """jit(fun) is native on ``args`` and equals eager ``fun``; returns the jit result."""
    jf = fg.jit(fun)
    assert_native(jf, *args)
    got = jf(*args)
    assert_tree_close(got, fun(*args), rtol=rtol, atol=atol)
    return got


def fd_derivative(f, x, eps=1e-6):
    """Central differences of a scalar function of a scalar."""
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def check_compiled(fun, *args, rtol=1e-12, atol=0.0):
    """compile(make_jaxpr(fun)) equals the evaluator on the same jaxpr."""
    got, want = compiled_and_evaluated(fun, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=rtol, atol=atol)
    return got


# --- functions ------------------------------------------------------------------------------------

def newton_sqrt(a):
    return lax.while_loop(lambda x: fnp.abs(x * x - a) > 1e-12 * a, lambda x: 0.5 * (x + a / x), a)


def sin_loop(x):
    """A while_loop with a data-dependent trip count and array residuals."""
    c = lax.while_loop(lambda c: fnp.sum(c[0] * c[0]) < 40.0,
                       lambda c: (c[0] * 1.3 + fnp.sin(c[0]) * x, c[1] + 1), (x, 0))
    return fnp.sum(c[0] ** 2) + fnp.prod(x)


def cond_with_loop(x):
    # branch 1 holds a staged while_loop (its tape), branch 0 none (an empty tape)
    return lax.cond(x > 0, lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0 + x, fnp.abs(x) + 0.1),
                    lambda x: fnp.sin(x) * 3.0, x)


def scan_of_loops(x, xs):
    """A scan whose body holds a while_loop; its trip count depends on xs[i] and the carry."""
    def body(c, xi):
        v, k = lax.while_loop(lambda v: v[0] < xi, lambda v: (v[0] * 1.5 + 0.1 + 0.05 * c, v[1] + 1), (c, 0))
        return v * 0.5, fnp.sin(v) + k
    c, ys = lax.scan(body, x, xs)
    return c + fnp.sum(ys)


def trip_counts(x, xs):
    """The inner while_loop's trip count in each iteration of scan_of_loops (eagerly)."""
    counts, c = [], x
    for xi in xs:
        v, k = c, 0
        while v < xi:
            v, k = v * 1.5 + 0.1 + 0.05 * c, k + 1
        counts.append(k)
        c = v * 0.5
    return counts


XS = np.array([1.0, 3.0, 40.0, 0.5, 7.0])


# --- forward over reverse: tape_split / tape_zip --------------------------------------------------

def test_jit_hessian_through_while():
    x = np.array([0.3, 0.4, -0.2])
    h = jit_matches_eager(fg.hessian(sin_loop), x, rtol=1e-11, atol=1e-12)
    prog = str(fg.make_jaxpr(fg.hessian(sin_loop))(x))
    assert "tape_split" in prog and "tape_zip" in prog
    # finite differences of the (eager) gradient, column by column
    g = fg.grad(sin_loop)
    eps = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = eps
        np.testing.assert_allclose(h[:, j], (g(x + e) - g(x - e)) / (2 * eps), rtol=1e-5, atol=1e-5)


def test_jit_jacfwd_jacrev_newton_sqrt():
    for a in (2.0, 9.0, 1e4):
        got = jit_matches_eager(fg.jacfwd(fg.jacrev(newton_sqrt)), np.array(a), rtol=1e-12)
        assert got == pytest.approx(-0.25 * a ** -1.5, rel=1e-8)


def test_forward_over_reverse_through_while_compiles_like_the_evaluator():
    x = np.array([0.3, 0.4])
    check_compiled(lambda x, t: fg.jvp(fg.grad(sin_loop), (x,), (t,)), x, np.array([1.0, -0.5]), rtol=1e-12)


# --- gradient of a cond whose branch holds a while_loop: tape_empty ---------------------------------

@pytest.mark.parametrize("x", [0.7, -0.7])
def test_jit_grad_cond_with_loop_in_one_branch(x):
    g = jit_matches_eager(fg.grad(cond_with_loop), x)
    prog = str(fg.make_jaxpr(fg.grad(cond_with_loop))(x))
    assert "tape_empty" in prog
    assert g == pytest.approx(fd_derivative(cond_with_loop, x), rel=1e-6)


def test_cond_with_loops_in_both_branches_and_a_scan_around():
    def f(x):
        def body(c, xi):
            y = lax.cond(xi > 0,
                         lambda z: lax.while_loop(lambda u: u < 10.0, lambda u: u * 1.5 + 0.2, fnp.abs(z) + 0.1),
                         lambda z: lax.while_loop(lambda u: u[1] < 3, lambda u: (fnp.sin(u[0]) * 1.1, u[1] + 1), (z, 0))[0],
                         c)
            return y * 0.3, y * xi
        c, ys = lax.scan(body, x, np.array([1.0, -1.0, 2.0, -3.0, 0.5]))
        return c + fnp.sum(ys * ys)

    for x in (0.3, -0.4):
        g = jit_matches_eager(fg.grad(f), x)
        assert g == pytest.approx(fd_derivative(f, x), rel=1e-6)


# --- custom_lin: linearized programs through custom_vjp / checkpoint --------------------------------

@fg.custom_vjp
def softclip(x):
    return fnp.tanh(x) * 2.0


def _softclip_fwd(x):
    y = fnp.tanh(x)
    return y * 2.0, (y,)


def _softclip_bwd(res, g):
    (y,) = res
    return (g * 2.0 * (1.0 - y * y),)


softclip.defvjp(_softclip_fwd, _softclip_bwd)


def with_custom_vjp(x):
    return fnp.sum(softclip(x * x) * fnp.sin(x))


def with_checkpoint(x):
    return fnp.sum(fg.checkpoint(lambda z: fnp.sin(fnp.exp(z) * z))(x) ** 2)


@pytest.mark.parametrize("f", [with_custom_vjp, with_checkpoint], ids=["custom_vjp", "checkpoint"])
@pytest.mark.parametrize("how", ["linearize", "jvp"])
def test_jit_linearized_custom_rules(f, how):
    x, t = RNG.normal(size=4), RNG.normal(size=4)
    if how == "linearize":
        fun = lambda x, t: fg.linearize(f, x)[1](t)  # noqa: E731
    else:
        fun = lambda x, t: fg.jvp(f, (x,), (t,))  # noqa: E731
    assert "custom_lin" in str(fg.make_jaxpr(fun)(x, t))  # it survives into the jitted program
    got = jit_matches_eager(fun, x, t, rtol=1e-13)
    tangent = got if how == "linearize" else got[1]
    eps = 1e-6
    assert tangent == pytest.approx((f(x + eps * t) - f(x - eps * t)) / (2 * eps), rel=1e-6)


def test_jit_hvp_through_checkpoint():
    x, t = RNG.normal(size=3), RNG.normal(size=3)
    fun = lambda x, t: fg.jvp(fg.grad(with_checkpoint), (x,), (t,))[1]  # noqa: E731
    jit_matches_eager(fun, x, t, rtol=1e-12)


def test_custom_lin_inside_a_loop_body_is_inlined():
    def f(x, t):
        def body(c, xi):
            y, ty = fg.jvp(lambda z: softclip(z * xi), (c,), (t,))
            return y, ty
        return lax.scan(body, x, np.array([0.5, 1.0, 1.5]))

    jit_matches_eager(f, np.array([0.2, -0.3]), np.array([1.0, 2.0]), rtol=1e-13)


# --- tapes inside scans: stacks of tapes ----------------------------------------------------------------

@pytest.mark.parametrize("xs", [XS, np.zeros(0)], ids=["length5", "length0"])
def test_jit_grad_scan_with_while_in_body(xs):
    x = 0.3
    if len(xs):
        assert len(set(trip_counts(x, xs))) > 2  # the iterations' tapes differ in length
    g = jit_matches_eager(fg.grad(scan_of_loops), x, xs)
    prog = str(fg.make_jaxpr(fg.grad(scan_of_loops))(x, xs))
    assert f"tape<{len(xs)}>" in prog  # the scan stacks one tape per iteration
    assert g == pytest.approx(fd_derivative(lambda x: scan_of_loops(x, xs), x), rel=1e-6)
    for x2 in (0.05, 0.9, 2.0):  # other trip counts, same compiled code
        assert fg.jit(fg.grad(scan_of_loops))(x2, xs) == pytest.approx(fg.grad(scan_of_loops)(x2, xs), rel=1e-12)


def test_jit_grad_reverse_scan_and_array_carries_with_while_in_body():
    def f(x):
        def body(c, xi):
            v = lax.while_loop(lambda v: fnp.sum(v * v) < xi, lambda v: v * 1.2 + fnp.sin(v) * 0.1, c)
            return v * 0.7, fnp.cos(v) * xi
        c, ys = lax.scan(body, x, np.array([2.0, 30.0, 5.0, 100.0]), reverse=True)
        return fnp.sum(c) + fnp.sum(ys)

    jit_matches_eager(fg.grad(f), np.array([0.5, 1.0, -0.3]), rtol=1e-11, atol=1e-13)


def test_jit_grad_scan_of_scans_with_while():
    # a stack of stacks of tapes (tape<2,3>)
    def f(x):
        def inner(c, xi):
            v = lax.while_loop(lambda v: v < xi, lambda v: v * 1.3 + 0.05, c)
            return v * 0.4, v

        def outer(c, row):
            c2, ys = lax.scan(inner, c, row)
            return c2 + 0.1, fnp.sum(ys)

        c, ys = lax.scan(outer, x, np.array([[1.0, 2.0, 0.3], [4.0, 0.1, 6.0]]))
        return c * fnp.sum(ys)

    g = jit_matches_eager(fg.grad(f), 0.3)
    assert g == pytest.approx(fd_derivative(f, 0.3), rel=1e-6)


def test_jit_grad_while_inside_scan_inside_while():
    # the outer while's tape records, per iteration, the scan's stack of inner tapes
    g = fg.jit(fg.grad(nested_loops))
    assert_native(g, 0.3)
    for x in np.linspace(-1.0, 1.0, 9):
        assert g(x) == pytest.approx(fg.grad(nested_loops)(x), rel=1e-12)
    assert g(0.4) == pytest.approx(fd_derivative(nested_loops, 0.4), rel=1e-6)


def test_tapes_made_and_consumed_inside_loop_bodies():
    # a gradient (while_tape + tape_apply, or a scan stacking tapes) inside a while body:
    # the tapes live only within an iteration and their buffers are reused
    def inner(x):
        return lax.while_loop(lambda c: c[0] < 5.0, lambda c: (c[0] * 1.7 + fnp.sin(c[1]), c[1]), (x, x))[0]

    def f(x):
        return lax.while_loop(lambda c: c[1] < 4,
                              lambda c: (c[0] + 0.1 * fg.grad(inner)(c[0] * 0.3 + 0.2), c[1] + 1), (x, 0))[0]

    def h(x):
        return lax.while_loop(lambda c: c[1] < 3,
                              lambda c: (c[0] + 0.01 * fg.grad(scan_of_loops)(c[0] * 0.5, XS), c[1] + 1), (x, 0))[0]

    jit_matches_eager(f, 0.4)
    jit_matches_eager(h, 0.2)


# --- the primitives directly: views, copies, tapes through cond/scan as operands -------------------------

F64, I64 = ShapedArray((), np.float64), ShapedArray((), np.int64)


def _record(x, n, res_fn, res_avals):
    """A while_tape running n steps of x -> 1.1 x + 0.1, recording res_fn(x) per step."""
    body = closed_jaxpr(lambda x, k: [x * 1.1 + 0.1, k + np.int64(1)] + list(res_fn(x)), [F64, I64])
    cond = closed_jaxpr(lambda n, x, k: [k < n], [I64, F64, I64])
    x_out, _, tape = while_tape_p.bind(n, x, np.int64(0), cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=1,
                                          body_nconsts=0, tape_aval=TapeAval(res_avals))
    return x_out, tape


def _fold(tape, res_avals, fn, reverse=False, consts=()):
    """tape_apply with carry acc -> fn(acc, *residuals, *consts) (consts: f64[] values)."""
    nr = len(res_avals)
    body = closed_jaxpr(lambda *xs: [fn(xs[-1], *xs[:nr], *xs[nr:-1])], list(res_avals) + [F64] * (len(consts) + 1))
    (out,) = tape_apply_p.bind(tape, *consts, np.float64(0.0), body=body, num_consts=len(consts),
                                  reverse=reverse, linear=(False,) * (len(consts) + 1))
    return out


V2, V3 = ShapedArray((2,), np.float64), ShapedArray((3,), np.float64)


def _two_field_tape(x, n):
    return _record(x, n, lambda x: [x, fnp.stack([x, x * 2.0])], [F64, V2])


@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_zip_of_tapes_from_different_loops_copies_records(n):
    def f(x, n):
        _, t1 = _two_field_tape(x, n)
        _, t2 = _record(x * 0.5, n, lambda x: [fnp.stack([x, -x, x * x])], [V3])
        a, b = tape_split_p.bind(t1, n=1)  # views of t1
        z = tape_zip_p.bind(b, t2)  # different buffers: a copy
        back = tape_zip_p.bind(a, b)  # halves of one buffer: a view again
        s1 = _fold(z, [V2, V3], lambda acc, u, v: acc * 0.9 + fnp.sum(u) * fnp.sum(v * v), reverse=True)
        s2 = _fold(back, [F64, V2], lambda acc, p, u: acc + p * fnp.sum(u))
        return s1, s2

    check_compiled(f, 0.3, np.int64(n))


def test_tapes_through_cond_and_scan_operands_and_outputs():
    def f(x, n, idx):
        _, t = _two_field_tape(x, n)
        a, b = tape_split_p.bind(t, n=1)
        # a cond returning its tape operand (a copy), a view, or an empty tape
        br0 = closed_jaxpr(lambda tt, y: [tt, y * 2.0], [TapeAval([F64, V2]), F64])
        br1 = closed_jaxpr(lambda tt, y: [tape_zip_p.bind(*tape_split_p.bind(tt, n=1)), y], [TapeAval([F64, V2]), F64])
        br2 = closed_jaxpr(lambda tt, y: [tape_empty_p.bind(aval=TapeAval([F64, V2])), y + 1.0], [TapeAval([F64, V2]), F64])
        tc, y = cond_p.bind(idx, t, x, branches=(br0, br1, br2))
        s = _fold(tc, [F64, V2], lambda acc, p, u: acc + p * u[1])

        # a scan whose body reads an outer tape (a const) and stacks views of tapes it makes
        def body(tt, m, c, xi):
            _, inner = _two_field_tape(c + xi, m)
            ai, _ = tape_split_p.bind(inner, n=1)
            return [c + _fold(tt, [V2], lambda acc, u, w: acc + u[0] * w, consts=(xi,)), ai]

        sb = closed_jaxpr(body, [TapeAval([V2]), I64, F64, F64])
        c, stack = scan_p.bind(b, n, x, np.array([0.1, 0.2, 0.3]), jaxpr=sb, num_consts=2, num_carry=1, length=3,
                                  reverse=False, linear=(False,) * 4)

        def read(c, tt):
            return [_fold(tt, [F64], lambda acc, p: acc + p) + c * 0.5]

        rb = closed_jaxpr(lambda c, tt: read(c, tt) + [c], [F64, TapeAval([F64])])
        r, _ = scan_p.bind(c, stack, jaxpr=rb, num_consts=0, num_carry=1, length=3, reverse=True,
                              linear=(False, False))
        return s, y, c, r

    for n in (0, 3, 20):
        for idx in (-1, 0, 1, 2, 7):
            check_compiled(f, 0.3, np.int64(n), np.int32(idx))


def test_tape_as_a_loop_carry_is_not_lowered_and_jit_falls_back():
    def f(x, n):
        _, t = _two_field_tape(x, n)
        body = closed_jaxpr(lambda tt, c, xi: [tt, c + xi], [TapeAval([F64, V2]), F64, F64])
        tt, c = scan_p.bind(t, x, np.array([1.0, 2.0]), jaxpr=body, num_consts=0, num_carry=2, length=2,
                               reverse=False, linear=(False, False, False))
        return c + _fold(tt, [F64, V2], lambda acc, p, u: acc + p)

    closed = fg.make_jaxpr(f)(0.3, np.int64(4))
    with pytest.raises(LoweringError, match="tape"):
        compile_jaxpr(closed)
    jf = fg.jit(f)
    assert "; not compiled" in jf.lower(0.3, np.int64(4)).as_text()
    assert jf(0.3, np.int64(4)) == pytest.approx(f(0.3, np.int64(4)), rel=1e-14)


# --- memory ----------------------------------------------------------------------------------------------

def _rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux procfs")
def test_stacked_tapes_repeated_calls_do_not_grow_memory():
    def f(x, xs):
        def body(c, xi):
            v = lax.while_loop(lambda v: fnp.sum(v[0]) < xi, lambda v: (v[0] * 1.01 + 0.001, v[1] + 1), (c, 0))
            return v[0] * 0.5, fnp.sin(v[0])
        c, ys = lax.scan(body, x, xs)
        return fnp.sum(c) + fnp.sum(ys)

    g = fg.jit(fg.grad(f))
    x = np.linspace(0.1, 0.2, 500)  # 4 KB of residuals per inner iteration
    xs = np.array([500.0, 2000.0, 10.0, 4000.0, 300.0])  # up to ~700 inner iterations: ~10 MB per call
    assert_native(g, x, xs)
    g(x, xs)
    before = _rss_mb()
    for k in range(100):
        g(x, xs * (1 + k % 3))
    # 100 leaked calls would be about a gigabyte
    assert _rss_mb() - before < 150
    np.testing.assert_allclose(g(x, xs), fg.grad(f)(x, xs), rtol=1e-10)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses RLIMIT_AS")
def test_failed_tape_allocation_raises_memory_error_and_frees_everything():
    # In a child process with a capped address space: nested tapes too big to fit.
    code = textwrap.dedent("""
        import os, resource
        import numpy as np, funcgrad as fg, funcgrad.numpy as fnp
        from funcgrad import lax

        def f(x, n):
            def body(c, xi):
                v = lax.while_loop(lambda v: v[1] < n, lambda v: (v[0] * 1.0001, v[1] + 1), (c, 0))
                return v[0] * 0.5, fnp.sum(v[0]) * xi
            c, ys = lax.scan(body, x, np.arange(1.0, 5.0))
            return fnp.sum(c) + fnp.sum(ys)

        g = fg.jit(fg.grad(f))
        x = np.ones(1000)  # 8 KB of residuals per inner iteration
        small = g(x, np.int32(10))
        pages = lambda i: int(open("/proc/self/statm").read().split()[i]) * os.sysconf("SC_PAGE_SIZE")
        limit = pages(0) + (1 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        before = pages(1)
        try:
            g(x, np.int32(1_000_000))  # 4 tapes of 8 GB
            print("no error")
        except MemoryError:
            print("MemoryError")
        print(pages(1) - before < (64 << 20))
        print(np.array_equal(g(x, np.int32(10)), small))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(fg.__file__))]
                                                       + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["MemoryError", "True", "True"], out.stdout + out.stderr


# --- reverse over reverse: tape_scan and zero tapes (tape_zeros) ----------------------------------------
# grad(grad(f)) through a staged while_loop differentiates the tapes themselves: tangent tapes
# are made by forward tape_scans over the while_tape's records, cotangent tapes by reverse
# tape_scans; a tape's symbolic-zero (co)tangent becomes a zero tape.

def counted_vec(x, n):
    """Vector carry mixing components, closure over x, run-time trip count n (0 allowed)."""
    body = lambda c: (fnp.sin(c[0]) * x + 0.1 * c[0][::-1], c[1] + 1)  # noqa: E731
    return fnp.sum(lax.while_loop(lambda c: c[1] < n, body, (x * 2.0, 0))[0] ** 2)


def counted(x, n):
    return lax.while_loop(lambda c: c[1] < n, lambda c: (fnp.sin(c[0]) * x + 0.3, c[1] + 1), (x * 2.0, 0))[0] ** 2


def data_dependent(x):
    """The trip count depends on x (x >= 3 runs zero times): lanes of a vmap stop at different times."""
    def body(c):
        return c[0] * 1.5 + fnp.sin(c[1]) * 0.1, c[1] * fnp.cos(c[0]) + c[0]

    u, v = lax.while_loop(lambda c: c[0] < 3.0, body, (x, x))
    return v * u + fnp.sin(v)


def grad2(f, **kw):
    return fg.grad(fg.grad(f, **kw), **kw)


def _prims(fun, *args):
    return str(fg.make_jaxpr(fun)(*args))


@pytest.mark.parametrize("n", [0, 1, 4, 9])
def test_jit_grad_of_grad_vector_loop_traced_trip_count(n):
    x = np.array([0.4, -0.7, 1.1])
    gg = fg.grad(lambda v, n: fnp.sum(fg.grad(counted_vec)(v, n) * fnp.cos(v)))
    assert "tape_scan" in _prims(gg, x, np.int64(n))
    jit_matches_eager(gg, x, np.int64(n), rtol=1e-11, atol=1e-13)
    # one compiled program for every trip count
    jf = fg.jit(gg)
    for m in (0, 3, 17):
        assert_tree_close(jf(x, np.int64(m)), gg(x, np.int64(m)), rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_jit_third_order_through_while(n):
    f = lambda x: counted(x, n)  # noqa: E731
    jit_matches_eager(fg.grad(grad2(f)), 0.45, rtol=1e-10, atol=1e-12)
    jit_matches_eager(grad2(newton_sqrt), 9.0, rtol=1e-10)
    got = jit_matches_eager(fg.grad(grad2(newton_sqrt)), 4.0, rtol=1e-10)
    assert got == pytest.approx(0.375 * 4.0 ** -2.5, rel=1e-8)


def test_jit_jacrev_of_jacrev_through_while():
    x = np.array([0.4, -0.7, 0.2])
    h = jit_matches_eager(fg.jacrev(fg.jacrev(lambda v: counted_vec(v, 5))), x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, fg.hessian(lambda v: counted_vec(v, 5))(x), rtol=1e-10, atol=1e-12)
    jit_matches_eager(fg.jacrev(fg.grad(data_dependent)), np.array(0.3), rtol=1e-10, atol=1e-12)


def test_jit_vmap_of_grad_of_grad_per_lane_trip_counts():
    # batched tapes: every record ends with the lanes' "still running" mask
    xs = np.array([0.3, 2.9, 3.5, 0.1, 1.0])  # 3.5: a lane with no iteration at all
    F = fg.vmap(grad2(data_dependent))
    assert "tape_scan" in _prims(F, xs)
    got = jit_matches_eager(F, xs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, [grad2(data_dependent)(x) for x in xs], rtol=1e-10, atol=1e-12)
    ns = np.array([0, 3, 1, 6], dtype=np.int64)
    G = fg.vmap(grad2(counted), in_axes=(None, 0))
    got = jit_matches_eager(G, 0.45, ns, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, [grad2(counted)(0.45, n) for n in ns], rtol=1e-10, atol=1e-12)


def test_jit_hessian_of_vmap_and_jacrev_of_vmapped_grad():
    xs = np.array([0.3, 2.9, 0.1])
    total = lambda v: fnp.sum(fg.vmap(data_dependent)(v))  # noqa: E731
    h = jit_matches_eager(fg.jacrev(fg.grad(total)), xs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.diag(h), [grad2(data_dependent)(x) for x in xs], rtol=1e-10, atol=1e-12)
    jit_matches_eager(fg.hessian(total), xs, rtol=1e-10, atol=1e-12)
    jit_matches_eager(fg.grad(lambda v: fnp.sum(fg.vmap(fg.grad(data_dependent))(v) ** 2)), xs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("xs", [XS, np.zeros(0)], ids=["length5", "length0"])
def test_jit_grad_of_grad_loop_inside_scan(xs):
    f = lambda x: scan_of_loops(x, xs)  # noqa: E731
    assert "tape_scan" in _prims(grad2(f), 0.3)
    for x in (0.3, 0.05, 2.0):
        jit_matches_eager(grad2(f), x, rtol=1e-10, atol=1e-12)


def test_jit_grad_of_grad_nested_loops():
    for x in (0.4, -0.3):
        jit_matches_eager(grad2(nested_loops), x, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("x", [0.7, -0.7, 3.0])
def test_jit_grad_of_grad_cond_with_loop_in_one_branch_zero_tapes(x):
    def f(x):  # the loop's result depends on x non-linearly, so every order is nonzero
        return lax.cond(x > 0, lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 1.5 + fnp.sin(x) * x, fnp.abs(x) + 0.1),
                        lambda x: fnp.sin(x) * 3.0, x)

    prog = _prims(grad2(f), x)
    assert "tape_zeros" in prog and "tape_scan" in prog
    jit_matches_eager(grad2(f), x, rtol=1e-10, atol=1e-12)
    jit_matches_eager(fg.grad(grad2(f)), x, rtol=1e-9, atol=1e-12)
    jit_matches_eager(grad2(cond_with_loop), x)


def test_jit_vmap_of_grad_of_grad_cond_with_loop_per_lane():
    def f(x):
        def loop(v):
            return lax.while_loop(lambda c: c[1] < 3, lambda c: (fnp.sin(c[0]) * v + 0.1, c[1] + 1), (v, 0))[0]
        return lax.cond(x > 1.0, loop, lambda v: v ** 3, x)

    xs = np.array([0.4, -0.2, 1.3, 2.0])
    got = jit_matches_eager(fg.vmap(grad2(f)), xs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, [grad2(f)(x) for x in xs], rtol=1e-10, atol=1e-12)


# --- tape_scan / tape_zeros directly: zero tapes next to real ones, views, tapes in records --------------

def _scan_tapes(tapes, consts, carry, fn, res_avals_list, carry_avals, reverse=False, ys_aval=None):
    from funcgrad.core.trace import get_aval_any
    from funcgrad.tapes import tape_scan
    const_avals = [get_aval_any(c).strip_weak_type() for c in consts]
    body = closed_jaxpr(fn, [a for r in res_avals_list for a in r] + const_avals + list(carry_avals))
    return tape_scan(tapes, consts, carry, body, reverse=reverse, linear=(False,) * (len(tapes) + len(consts) + len(carry)),
                     ys_aval=ys_aval)


@pytest.mark.parametrize("n", [0, 1, 7, 40])
def test_tape_scan_with_zero_tapes_and_views(n):
    from funcgrad.tapes import tape_zeros_p

    def f(x, n, idx):
        _, t = _two_field_tape(x, n)  # tape[f64, f64[2]]
        a, b = tape_split_p.bind(t, n=1)
        z = tape_zeros_p.bind(aval=TapeAval([V3]))
        za, zb = tape_split_p.bind(tape_zeros_p.bind(aval=TapeAval([F64, V2])), n=1)
        # forwards: a real view, a zero tape, the other half of a zero tape; ys with 2 fields
        c, ys = _scan_tapes([a, z, zb], [x], [np.float64(0.0)],
                            lambda p, w, u, x, acc: [acc * 0.5 + p * x + fnp.sum(w) + fnp.sum(u), fnp.stack([p, acc]), acc + 1.0],
                            [[F64], [V3], [V2]], [F64], ys_aval=TapeAval([V2, F64]))
        # backwards over the ys tape zipped with a zero tape (a copy that fills zeros)
        zz = tape_zip_p.bind(ys, tape_zeros_p.bind(aval=TapeAval([F64])))
        (r,) = _scan_tapes([zz, b], [], [np.float64(1.0)], lambda u, q, o, v, acc: [acc * 0.9 + u[0] - q + o + v[1]],
                           [[V2, F64, F64], [V2]], [F64], reverse=True)
        # only zero tapes: no records
        (e, ye) = _scan_tapes([za], [], [x], lambda p, acc: [acc + p + 1.0, acc], [[F64]], [F64], ys_aval=TapeAval([F64]))
        s = _fold(ye, [F64], lambda acc, p: acc + p + 1.0)
        # a cond choosing (at run time) between a real tape and a zero tape; then zipped and scanned
        br0 = closed_jaxpr(lambda tt: [tt], [TapeAval([V2])])
        br1 = closed_jaxpr(lambda tt: [tape_zeros_p.bind(aval=TapeAval([V2]))], [TapeAval([V2])])
        (tc,) = cond_p.bind(idx, b, branches=(br0, br1))
        (w,) = _scan_tapes([tc, a], [], [np.float64(0.0)], lambda v, p, acc: [acc + fnp.sum(v) * p + p],
                           [[V2], [F64]], [F64])
        zc = tape_zip_p.bind(tc, tape_zeros_p.bind(aval=TapeAval([F64])))  # zero when tc is
        (w2,) = _scan_tapes([zc], [], [np.float64(0.0)], lambda v, p, acc: [acc + fnp.sum(v) + p + 1.0],
                            [[V2, F64]], [F64])
        return c, r, e, s, w, w2

    for idx in (0, 1):
        check_compiled(f, 0.3, np.int64(n), np.int32(idx))
        assert_native(fg.jit(f), 0.3, np.int64(n), np.int32(idx))


def test_tape_scan_ys_records_hold_tapes_and_zero_stacks():
    # tape_broadcast of a tape whose records hold tapes: the ys records get inner tapes
    # made by the body (moved into the record), possibly zero tapes, or stacks of them
    from funcgrad.tapes import tape_zeros_p

    def f(x, n, m):
        def outer_body(m, v, k):
            _, inner = _record(v, m, lambda u: [u * u], [F64])
            return [v * 0.9 + 0.05, k + np.int64(1), inner]
        body = closed_jaxpr(outer_body, [I64, F64, I64])
        cond = closed_jaxpr(lambda n, v, k: [k < n], [I64, F64, I64])
        inner_aval = TapeAval([F64])
        _, _, t = while_tape_p.bind(n, m, x, np.int64(0), cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=1,
                                       body_nconsts=1, tape_aval=TapeAval([inner_aval]))

        # ys: (a copy of the inner tape scaled, a zero tape, a stack of 2 zero tapes)
        stack = TapeAval([F64], shape=(2,))

        def per_record(it, acc):
            (s, scaled) = _scan_tapes([it], [], [np.float64(0.0)], lambda u, a: [a + u, u * 3.0], [[F64]], [F64],
                                      ys_aval=TapeAval([F64]))
            return [acc + s, scaled, tape_zeros_p.bind(aval=inner_aval), tape_zeros_p.bind(aval=stack)]

        c, ys = _scan_tapes([t], [], [np.float64(0.0)], per_record, [[inner_aval]], [F64], reverse=True,
                            ys_aval=TapeAval([inner_aval, inner_aval, stack]))

        def read(it, zt, st, acc):
            (a,) = _scan_tapes([it, zt], [], [acc], lambda u, z, a: [a * 1.01 + u + z], [[F64], [F64]], [F64])
            (b,) = _scan_tapes([zt], [], [a], lambda z, q: [q * 2.0 + z + 1.0], [[F64]], [F64])  # no records
            return [b]

        (r,) = _scan_tapes([ys], [], [np.float64(0.0)], read, [[inner_aval, inner_aval, stack]], [F64])
        return c, r

    for n, m in ((0, 0), (1, 0), (3, 2), (6, 5)):
        check_compiled(f, 0.3, np.int64(n), np.int64(m))
        assert_native(fg.jit(f), 0.3, np.int64(n), np.int64(m))


def test_tape_scan_over_stacks_of_tapes_is_not_lowered():
    # (the interpreter does not scan stacks of tapes either: the jaxpr is rejected at lowering)
    from funcgrad.tapes import tape_zeros_p

    def f(x):
        z = tape_zeros_p.bind(aval=TapeAval([F64], shape=(2,)))
        (c,) = _scan_tapes([z], [], [x], lambda p, a: [a + p], [[F64]], [F64])
        return c

    with pytest.raises(LoweringError, match="tape_scan"):
        compile_jaxpr(fg.make_jaxpr(f)(0.3))


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux procfs")
def test_reverse_over_reverse_repeated_calls_do_not_grow_memory():
    g = fg.jit(fg.grad(lambda v, n: fnp.sum(fg.grad(counted_vec)(v, n) * fnp.cos(v))))
    x = np.linspace(0.1, 0.2, 500)  # several 4 KB fields per record
    assert_native(g, x, np.int64(3))
    g(x, np.int64(300))
    before = _rss_mb()
    for k in range(60):
        g(x, np.int64(100 + 100 * (k % 3)))  # ~10-20 MB of tapes per call
    assert _rss_mb() - before < 150


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses RLIMIT_AS")
def test_failed_tape_scan_allocation_raises_memory_error_and_frees_everything():
    # In a child process with a capped address space: a tape_scan's output tape too big
    # to allocate, and one whose records hold tapes that stop fitting halfway through.
    code = textwrap.dedent('''
        import os, resource
        import numpy as np, funcgrad as fg, funcgrad.numpy as fnp
        from funcgrad.core.avals import ShapedArray
        from funcgrad.tapes import TapeAval, tape_scan, while_tape_p
        from funcgrad.transforms.jaxpr_ad import closed_jaxpr

        F64, I64, BIG = ShapedArray((), np.float64), ShapedArray((), np.int64), ShapedArray((1000,), np.float64)

        def record(x, n):
            body = closed_jaxpr(lambda x, k: [x * 1.1 + 0.1, k + np.int64(1), x], [F64, I64])
            cond = closed_jaxpr(lambda n, x, k: [k < n], [I64, F64, I64])
            return while_tape_p.bind(n, x, np.int64(0), cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=1,
                                        body_nconsts=0, tape_aval=TapeAval([F64]))[2]

        def f(x, n):  # ys records of 8 KB: the output tape is allocated at once
            t = record(x, n)
            body = closed_jaxpr(lambda p, a: [a + p, fnp.ones(1000) * p], [F64, F64])
            c, ys = tape_scan([t], [], [np.float64(0.0)], body, reverse=True, linear=(False, False), ys_aval=TapeAval([BIG]))
            body2 = closed_jaxpr(lambda u, a: [a + fnp.sum(u)], [BIG, F64])
            (s,) = tape_scan([ys], [], [c], body2, reverse=False, linear=(False, False), ys_aval=None)
            return s

        def g(x, n, m):  # ys records hold tapes made in the body: a failure in the middle of the loop
            t = record(x, n)
            def per(p, m, a):
                inner = closed_jaxpr(lambda x, k: [x * 0.5, k + np.int64(1), fnp.ones(1000) * x], [F64, I64])
                cond = closed_jaxpr(lambda n, x, k: [k < n], [I64, F64, I64])
                _, _, it = while_tape_p.bind(m, p, np.int64(0), cond_jaxpr=cond, body_jaxpr=inner, cond_nconsts=1,
                                                body_nconsts=0, tape_aval=TapeAval([BIG]))
                return [a + p, it]
            body = closed_jaxpr(per, [F64, I64, F64])
            c, ys = tape_scan([t], [m], [np.float64(0.0)], body, reverse=False, linear=(False,) * 3,
                              ys_aval=TapeAval([TapeAval([BIG])]))
            def read(it, a):
                b2 = closed_jaxpr(lambda u, q: [q + fnp.sum(u)], [BIG, F64])
                (q,) = tape_scan([it], [], [a], b2, reverse=True, linear=(False, False), ys_aval=None)
                return [q]
            (s,) = tape_scan([ys], [], [c], closed_jaxpr(read, [TapeAval([BIG]), F64]), reverse=False, linear=(False, False), ys_aval=None)
            return s

        jf, jg = fg.jit(f), fg.jit(g)
        for j in (jf,):
            assert "; not compiled" not in j.lower(0.3, np.int64(5)).as_text()
        assert "; not compiled" not in jg.lower(0.3, np.int64(5), np.int64(3)).as_text()
        small_f, small_g = jf(0.3, np.int64(50)), jg(0.3, np.int64(7), np.int64(5))
        print(np.isclose(small_f, f(0.3, np.int64(50))), np.isclose(small_g, g(0.3, np.int64(7), np.int64(5))))
        pages = lambda i: int(open("/proc/self/statm").read().split()[i]) * os.sysconf("SC_PAGE_SIZE")
        limit = pages(0) + (1 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        before = pages(1)
        for call in (lambda: jf(0.3, np.int64(1_000_000)), lambda: jg(0.3, np.int64(100), np.int64(2000))):
            try:
                call()
                print("no error")
            except MemoryError:
                print("MemoryError")
            print(pages(1) - before < (64 << 20))
        print(jf(0.3, np.int64(50)) == small_f, jg(0.3, np.int64(7), np.int64(5)) == small_g)
    ''')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(fg.__file__))]
                                                       + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True"] * 2 + ["MemoryError", "True"] * 2 + ["True"] * 2, out.stdout + out.stderr


def test_tape_scans_inside_a_loop_reuse_buffers_and_copy_tapes_held_in_records():
    # Each iteration of a while runs tape_scans whose ys records hold tapes (their buffers
    # are reused by the next iteration, with more or fewer records), and zips such a tape
    # with a zero tape (a copy of the records and of the tapes they hold).
    from funcgrad.tapes import tape_zeros_p

    ia = TapeAval([F64, V2])

    def inner(x, n, m, rev):
        def outer_body(m, v, k):
            _, it = _record(v, m, lambda u: [u * u, fnp.stack([u, -u])], [F64, V2])
            return [v * 0.9 + 0.05, k + np.int64(1), it]
        body = closed_jaxpr(outer_body, [I64, F64, I64])
        cond = closed_jaxpr(lambda n, v, k: [k < n], [I64, F64, I64])
        _, _, t = while_tape_p.bind(n, m, x, np.int64(0), cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=1,
                                       body_nconsts=1, tape_aval=TapeAval([ia]))

        def per_record(it, acc):
            a, b = tape_split_p.bind(it, n=1)
            (s, scaled) = _scan_tapes([a, b], [], [np.float64(0.0)], lambda u, w, q: [q + u + w[1], w * 3.0, u],
                                      [[F64], [V2]], [F64], ys_aval=TapeAval([V2, F64]), reverse=rev)
            return [acc + s, scaled, it]

        c, ys = _scan_tapes([t], [], [np.float64(0.0)], per_record, [[ia]], [F64], reverse=not rev,
                            ys_aval=TapeAval([TapeAval([V2, F64]), ia]))
        zz = tape_zip_p.bind(ys, tape_zeros_p.bind(aval=TapeAval([F64])))

        def read(st, it, z, acc):
            (q,) = _scan_tapes([st, it], [], [acc], lambda w, p, u, v, q: [q * 1.01 + fnp.sum(w) * p + u + v[0]],
                               [[V2, F64], [F64, V2]], [F64])
            return [q + z]

        (r,) = _scan_tapes([zz], [], [c], read, [[TapeAval([V2, F64]), ia, F64]], [F64])
        return r

    def f(x, ns, ms):
        def body(c):
            k, acc = c
            return k + 1, acc + inner(x + 0.01 * k, ns[k], ms[k], False) + inner(x, ms[k], ns[k], True)
        return lax.while_loop(lambda c: c[0] < ns.shape[0], body, (0, 0.0))[1]

    ns = np.array([3, 0, 7, 2, 9, 1], dtype=np.int64)
    ms = np.array([2, 5, 0, 8, 1, 4], dtype=np.int64)
    check_compiled(f, 0.3, ns, ms)
    assert_native(fg.jit(f), 0.3, ns, ms)
