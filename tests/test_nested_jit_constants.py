"""jit around functions that call jitted functions closing over arrays.

Compiled code inlines nested calls (``lowering/inline.py``): a nested ``jit``, a
``custom_jvp``/``custom_vjp`` body, a ``checkpoint``, the program of an ``Exported`` or
of an unpickled jitted function. Inlining a body re-traces it, which gives it new
constants; every value below is compared with the eager one, for constants of several
shapes (0-d, vectors, matrices, zero-size, float32, int64, several at once), at several
nesting depths, with ``grad``/``vmap``/``jvp``/``jacrev``/``hessian`` around and inside.

Every test runs twice: with the disk cache on (a directory of this module's own, so
later tests link programs an earlier one stored) and with it off.
"""
import functools
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config, lax

from harness import CHILD_COUNTING_COMPILES


@pytest.fixture(scope="module")
def module_cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("nested_jit_cache")


@pytest.fixture(autouse=True, params=["disk_cache_on", "disk_cache_off"])
def disk_cache_mode(request, monkeypatch, module_cache_dir):
    if request.param == "disk_cache_on":
        monkeypatch.setenv(config.CACHE_DIR, str(module_cache_dir))
        monkeypatch.delenv(config.NO_DISK_CACHE, raising=False)
    else:
        monkeypatch.setenv(config.NO_DISK_CACHE, "1")
    return request.param


def close(got, want, rtol=1e-12, atol=1e-12):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


X = np.array([0.3, -1.2, 0.7])
XS = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.2], [-0.5, 0.9, 2.0], [0.0, 0.25, -1.0]])
T = np.array([1.0, -0.5, 2.0])

# Constants of several shapes, each in a function R^3 -> R^3.
_M = np.arange(9.0).reshape(3, 3) / 7.0
_KINDS = {
    "0d": lambda C=np.array(2.5): lambda x: fnp.sin(x * C) + C,
    "vector": lambda C=np.array([1.0, 2.0, 3.0]): lambda x: fnp.sin(x * C) + C,
    "matrix": lambda C=_M: lambda x: fnp.sin(C @ x),
    "zero_size_1d": lambda C=np.zeros((0,)): lambda x: fnp.sin(x) * 2.0 + fnp.sum(C),
    "zero_size_2d": lambda C=np.zeros((3, 0)): lambda x: fnp.sin(x) + fnp.sum(x[:, None] * C, axis=1),
    "float32_matrix": lambda C=_M.astype(np.float32): lambda x: fnp.tanh(C @ x),
    "int64_vector": lambda C=np.array([3, -1, 2]): lambda x: fnp.cos(x + C),
    "several": lambda M=_M, v=np.array([0.5, -0.25, 1.5]), s=np.array(1.5), z=np.zeros((2, 0)):
        lambda x: fnp.sin(M @ x + v) * s + fnp.sum(z) + v,
}
KINDS = sorted(_KINDS)


def body(kind):
    return _KINDS[kind]()


def sq(f):
    return lambda x: fnp.sum(f(x) ** 2)


# --- the reproducers ---------------------------------------------------------------------

def test_jit_of_a_function_calling_a_jitted_closure():
    C = np.arange(9.0).reshape(3, 3)
    inner = fg.jit(lambda x: x @ C)
    close(fg.jit(lambda x: inner(x))(np.eye(3)), C)


def test_jit_of_a_jitted_library_function():
    A = np.array([[1.0, 2.0, 0.5], [0.0, 1.0, 3.0]])
    close(fg.jit(lambda x: fg.jit(fnp.linalg.pinv)(x))(A), np.linalg.pinv(A), rtol=1e-10, atol=1e-12)


def test_jit_of_an_exported_call_holding_a_constant():
    W = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    e = fg.export(fg.jit(lambda x: fnp.tanh(W @ x)))(np.ones(2))
    x = np.array([0.2, -0.4])
    close(fg.jit(e.call)(x), np.tanh(W @ x))


# --- nesting depth -------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [1, 2, 3, 4])
@pytest.mark.parametrize("kind", KINDS)
def test_each_level_closing_over_its_own_constant(kind, depth):
    f = body(kind)
    g, want = fg.jit(f), f
    for level in range(depth):
        D = np.arange(3.0) * (level + 1) / 10.0  # a different constant at every level
        g = (lambda h, D: fg.jit(lambda x: h(x) + D))(g, D)
        want = (lambda h, D: lambda x: h(x) + D)(want, D)
    close(g(X), want(X))
    close(fg.grad(sq(g))(X), fg.grad(sq(want))(X))


# --- transforms around and inside ----------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_grad_around_and_inside(kind):
    f = body(kind)
    inner = fg.jit(f)
    outer = fg.jit(lambda x: inner(x))
    want = fg.grad(sq(f))(X)
    close(fg.grad(sq(outer))(X), want)
    close(fg.jit(fg.grad(sq(inner)))(X), want)
    close(fg.jit(fg.grad(sq(outer)))(X), want)
    close(fg.jit(lambda x: fg.grad(sq(outer))(x))(X), want)
    v, g = fg.jit(fg.value_and_grad(sq(outer)))(X)
    close(v, sq(f)(X))
    close(g, want)


@pytest.mark.parametrize("kind", KINDS)
def test_vmap_around_and_inside(kind):
    f = body(kind)
    inner = fg.jit(f)
    outer = fg.jit(lambda x: inner(x))
    want = np.stack([f(r) for r in XS])
    close(fg.vmap(outer)(XS), want)
    close(fg.jit(fg.vmap(inner))(XS), want)
    close(fg.jit(fg.vmap(outer))(XS), want)
    close(fg.vmap(fg.jit(fg.vmap(outer)))(XS[None]), want[None])
    close(fg.jit(fg.vmap(fg.grad(sq(outer))))(XS), np.stack([fg.grad(sq(f))(r) for r in XS]))


@pytest.mark.parametrize("kind", KINDS)
def test_jvp_jacrev_jacfwd_hessian(kind):
    f = body(kind)
    inner = fg.jit(f)
    outer = fg.jit(lambda x: inner(x))
    tan = fg.jvp(f, (X,), (T,))[1]
    close(fg.jvp(outer, (X,), (T,))[1], tan)
    close(fg.jit(lambda x: fg.jvp(inner, (x,), (T,))[1])(X), tan)
    jac = fg.jacrev(f)(X)
    close(fg.jacrev(outer)(X), jac)
    close(fg.jit(fg.jacrev(inner))(X), jac)
    close(fg.jit(fg.jacfwd(outer))(X), jac)
    hess = fg.hessian(sq(f))(X)
    close(fg.hessian(sq(outer))(X), hess)
    close(fg.jit(fg.hessian(sq(inner)))(X), hess)


# --- call-like bodies: checkpoint, custom rules ---------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_checkpoint_of_a_jitted_closure(kind):
    f = body(kind)
    inner = fg.jit(f)
    close(fg.jit(fg.checkpoint(lambda x: inner(x)))(X), f(X))
    close(fg.jit(fg.grad(sq(fg.checkpoint(inner))))(X), fg.grad(sq(f))(X))
    close(fg.grad(sq(fg.jit(fg.checkpoint(inner))))(X), fg.grad(sq(f))(X))


@pytest.mark.parametrize("kind", KINDS)
def test_custom_vjp_body_and_rules_calling_a_jitted_closure(kind):
    f = body(kind)
    inner = fg.jit(f)
    S = np.array([1.0, 0.5, 2.0])  # the custom_vjp's own closure

    @fg.custom_vjp
    def cv(x):
        return inner(x) * S

    cv.defvjp(lambda x: (inner(x) * S, x), lambda r, ct: (fg.vjp(inner, r)[1](ct * S)[0],))
    want, gwant = f(X) * S, fg.grad(lambda x: fnp.sum((f(x) * S) ** 2))(X)
    close(fg.jit(cv)(X), want)
    close(fg.jit(lambda x: fg.jit(cv)(x))(X), want)
    close(fg.jit(fg.grad(sq(cv)))(X), gwant)
    close(fg.grad(sq(fg.jit(cv)))(X), gwant)
    close(fg.jit(fg.vmap(cv))(XS), np.stack([f(r) * S for r in XS]))


@pytest.mark.parametrize("kind", KINDS)
def test_custom_jvp_body_and_rule_calling_a_jitted_closure(kind):
    f = body(kind)
    inner = fg.jit(f)

    @fg.custom_jvp
    def cj(x):
        return inner(x)

    @cj.defjvp
    def _(primals, tangents):
        return fg.jvp(inner, primals, tangents)

    close(fg.jit(cj)(X), f(X))
    close(fg.jit(lambda x: fg.jit(cj)(x))(X), f(X))
    close(fg.jit(fg.grad(sq(cj)))(X), fg.grad(sq(f))(X))
    close(fg.jit(lambda x: fg.jvp(cj, (x,), (T,))[1])(X), fg.jvp(f, (X,), (T,))[1])


# --- programs that come back: pickled jitted functions, exports ---------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_unpickled_jitted_function_called_inside_jit(kind):
    f = body(kind)
    jf = fg.jit(lambda x: fg.jit(f)(x))
    jf(X)  # (a jitted function pickles the signatures it has compiled)
    pj = pickle.loads(pickle.dumps(jf))
    close(pj(X), f(X))
    close(fg.jit(lambda x: pj(x))(X), f(X))
    close(fg.jit(fg.grad(sq(pj)))(X), fg.grad(sq(f))(X))
    close(fg.grad(sq(fg.jit(pj)))(X), fg.grad(sq(f))(X))
    close(fg.jit(fg.vmap(pj))(XS), np.stack([f(r) for r in XS]))


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
@pytest.mark.parametrize("kind", KINDS)
def test_exported_call_inside_jit_grad_vmap(kind, nested):
    f = body(kind)
    jf = fg.jit(lambda x: fg.jit(f)(x)) if nested else fg.jit(f)
    want, gwant = f(X), fg.grad(sq(f))(X)
    vwant = np.stack([f(r) for r in XS])
    e = fg.export(jf)(X)
    loaded = fg.deserialize(e.serialize(vjp_order=1))
    for ex in (e, loaded):
        close(ex.call(X), want)
        close(fg.jit(ex.call)(X), want)
        close(fg.jit(lambda x: fg.jit(ex.call)(x))(X), want)
        close(fg.grad(sq(ex.call))(X), gwant)
        close(fg.jit(fg.grad(sq(ex.call)))(X), gwant)
        close(fg.vmap(ex.call)(XS), vwant)
        close(fg.jit(fg.vmap(ex.call))(XS), vwant)
        close(fg.jit(lambda x: fg.jvp(ex.call, (x,), (T,))[1])(X), fg.jvp(f, (X,), (T,))[1])
    # an export of a function that calls an export
    e2 = fg.export(fg.jit(lambda x: e.call(x) + 1.0))(X)
    close(fg.jit(e2.call)(X), want + 1.0)


@pytest.mark.parametrize("kind", KINDS)
def test_lower_shows_and_runs_the_inlined_program(kind):
    f = body(kind)
    outer = fg.jit(lambda x: fg.jit(lambda y: fg.jit(f)(y) * 2.0)(x))
    lowered = outer.lower(X)
    text = lowered.as_text()
    assert "jit_call" not in text.split("# LLVM IR")[0]  # every nested call was inlined
    close(lowered.compile()(X), f(X) * 2.0)
    close(outer(X), f(X) * 2.0)


# --- more contexts around the nested call (the constants of ``several``) ------------------

def _tape_loop(f):
    # a while_loop whose trip count is known only at run time: reverse mode records a tape
    return lambda x: lax.while_loop(lambda c: fnp.sum(c[0] ** 2) < 50.0,
                                    lambda c: (f(c[0]) * 1.5 + c[0], c[1] + 1), (x, 0))[0]


def _printing(f):
    def g(y):
        fg.debug.print("y={y}", y=y)
        return f(y)
    return g


# name -> (build the program from (the eager function f, its jitted form inner), the
# eager program built from f alone)
CONTEXTS = {
    "closure_over_an_outer_tracer": (
        lambda f, inner: fg.jit(lambda x: fg.jit(lambda y: inner(y) * x)(x)),
        lambda f: lambda x: f(x) * x),
    "grad_of_a_closure_over_an_outer_tracer": (
        lambda f, inner: fg.jit(fg.grad(lambda x: fnp.sum(fg.jit(lambda y: inner(y) * x)(x)))),
        lambda f: fg.grad(lambda x: fnp.sum(f(x) * x))),
    "static_argument_of_the_inner_function": (
        lambda f, inner: fg.jit(lambda x: fg.jit(lambda y, n: inner(y) * n, static_argnums=1)(x, 3)),
        lambda f: lambda x: f(x) * 3),
    "inline_true": (
        lambda f, inner: fg.jit(lambda x: fg.jit(lambda y: inner(y) + 1.0, inline=True)(x)),
        lambda f: lambda x: f(x) + 1.0),
    "jit_of_vjp": (
        lambda f, inner: fg.jit(lambda x: fg.vjp(fg.jit(lambda y: inner(y)), x)[1](T)[0]),
        lambda f: lambda x: fg.vjp(f, x)[1](T)[0]),
    "jit_of_a_second_derivative": (
        lambda f, inner: fg.jit(lambda x: fg.grad(fg.grad(lambda s: fnp.sum(fg.jit(lambda y: inner(y * s))(x))))(0.7)),
        lambda f: lambda x: fg.grad(fg.grad(lambda s: fnp.sum(f(x * s))))(0.7)),
    "linearize": (
        lambda f, inner: lambda x: fg.linearize(fg.jit(lambda y: inner(y)), x)[1](T),
        lambda f: lambda x: fg.jvp(f, (x,), (T,))[1]),
    "scan_body": (
        lambda f, inner: fg.jit(lambda x: lax.scan(lambda c, _: (inner(c), None), x, None, length=3)[0]),
        lambda f: lambda x: f(f(f(x)))),
    "grad_of_a_scan_body": (
        lambda f, inner: fg.jit(fg.grad(lambda x: fnp.sum(lax.scan(lambda c, _: (inner(c), None), x, None,
                                                                     length=3)[0]))),
        lambda f: fg.grad(lambda x: fnp.sum(f(f(f(x)))))),
    "cond_branches": (
        lambda f, inner: fg.jit(lambda x: lax.cond(fnp.sum(x) < 0, inner, lambda y: fg.jit(f)(y) * 2.0, x)),
        lambda f: lambda x: f(x) if np.sum(x) < 0 else f(x) * 2.0),
    "fori_loop_body": (
        lambda f, inner: fg.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: inner(c), x)),
        lambda f: lambda x: f(f(f(x)))),
    "grad_through_a_run_time_trip_count": (
        lambda f, inner: fg.jit(fg.grad(lambda y: fnp.sum(fg.jit(lambda z: fg.jit(_tape_loop(inner))(z))(y)))),
        lambda f: fg.grad(lambda y: fnp.sum(_tape_loop(f)(y)))),
    "an_effect_in_the_inner_function": (
        lambda f, inner: fg.jit(lambda x: fg.jit(_printing(inner))(x)),
        lambda f: f),
    "an_effect_under_a_batched_cond": (
        lambda f, inner: fg.jit(fg.vmap(lambda x: lax.cond(fnp.sum(x) > 0, fg.jit(_printing(inner)),
                                                            lambda y: y + 1.0, x))),
        lambda f: lambda xs: np.stack([f(r) if r.sum() > 0 else r + 1.0 for r in xs])),
}


@pytest.mark.parametrize("context", sorted(CONTEXTS))
def test_nested_call_in_other_contexts(context, capfd):
    build, reference = CONTEXTS[context]
    f = body("several")
    x = XS[:2] if context == "an_effect_under_a_batched_cond" else X
    close(build(f, fg.jit(f))(x), reference(f)(x))


def test_the_same_inner_function_under_two_outer_programs():
    """An inner jitted function's program is inlined into each caller (its memo shared)."""
    C = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 3.0]])
    inner = fg.jit(lambda x: C @ x)
    a = fg.jit(lambda x: inner(x) + 1.0)
    b = fg.jit(lambda x: inner(inner(x)) - fnp.sum(C))
    close(a(X), C @ X + 1.0)
    close(b(X), C @ (C @ X) - C.sum())
    close(a(X), C @ X + 1.0)  # (a cached call after b compiled)


def test_closures_over_partial_applications_of_jitted_functions():
    C = np.array([1.0, -2.0, 0.5])
    inner = fg.jit(lambda x, c: x * c + C)
    p = functools.partial(inner, c=np.array([2.0, 3.0, 4.0]))
    close(fg.jit(lambda x: p(x))(X), X * np.array([2.0, 3.0, 4.0]) + C)


# --- a new process, warm from the disk cache --------------------------------------------------

WARM_CHILD = CHILD_COUNTING_COMPILES + """
import pickle
C = np.arange(9.0).reshape(3, 3) / 7.0
v = np.array([0.5, -0.25, 1.5])
inner = fg.jit(lambda x: fnp.sin(C @ x) + v)
outer = fg.jit(lambda x: fg.jit(lambda y: inner(y) * v)(x) + fnp.sum(np.zeros((2, 0))))
x = np.array([0.3, -1.2, 0.7])
e = fg.export(inner)(x)
outs = [outer(x), fg.jit(fg.grad(lambda y: fnp.sum(outer(y) ** 2)))(x), fg.jit(e.call)(x),
        fg.jit(fg.vmap(outer))(np.stack([x, 2 * x]))]
print(b"".join(np.asarray(o).tobytes() for o in outs).hex(), len(optimised))
"""


def test_a_new_process_runs_nested_programs_with_their_constants(tmp_path, disk_cache_mode):
    """Cache on: the second process links every program from disk (nothing compiled) and
    gets the same bits. Cache off: both processes compile and nothing is written."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=str(tmp_path), PYTHONPATH=root)

    def run():
        res = subprocess.run([sys.executable, "-c", WARM_CHILD], capture_output=True, text=True, env=env,
                             timeout=300)
        assert res.returncode == 0, res.stderr
        value, optimised = res.stdout.split()
        return value, int(optimised)

    cold, cold_optimised = run()
    warm, warm_optimised = run()
    assert warm == cold  # bitwise
    assert cold_optimised >= 1
    if disk_cache_mode == "disk_cache_on":
        assert warm_optimised == 0
    else:
        assert warm_optimised == cold_optimised and not any(tmp_path.iterdir())

    C = np.arange(9.0).reshape(3, 3) / 7.0
    v = np.array([0.5, -0.25, 1.5])

    def outer(x):
        return (np.sin(C @ x) + v) * v

    x = np.array([0.3, -1.2, 0.7])
    got = np.frombuffer(bytes.fromhex(warm), np.float64)
    want_grad = fg.grad(lambda y: fnp.sum(((fnp.sin(C @ y) + v) * v) ** 2))(x)
    want = np.concatenate([outer(x), want_grad, np.sin(C @ x) + v, outer(x), outer(2 * x)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
