"""Adversarial tests for the eager reverse mode (``transforms/eager_vjp.py``).

Every case runs ``value_and_grad`` on the eager tape (the fast path, used when ``grad``
is the outermost transform) and on the general path (``eager_vjp.ENABLED = False``:
JVP + linear tape + transposition) and requires the same observable behaviour: values,
dtypes, Python types of the leaves, pytree structure, and -- when the program is
rejected -- the same exception type and message (up to the name of the tracer class and
the trace level, which legitimately differ). Where the general path is itself suspect
the reference is a closed form.

The bugs these cases found are fixed. The cases still marked ``xfail(strict=True)`` pin a
documented limitation (docs/guide/semantics.md): a NumPy array mutated in place after a
traced operation has used it may change the gradient, because residuals are held by
reference (as in autograd), not copied.
"""
import contextlib
import functools
import random
import re
import threading
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import trace as core_trace
from funcgrad.core.pytree import tree_flatten
from funcgrad.core.trace import Tracer
from funcgrad.errors import UnexpectedTracerError
from funcgrad.transforms import eager_vjp

# --- helpers -------------------------------------------------------------------------------

general_path = eager_vjp.disabled  # grad on the general reverse mode


@pytest.fixture(autouse=True)
def _clean_trace_state():
    """Every test starts and must end with nothing on the trace stack."""
    assert core_trace.is_eager() and eager_vjp.ENABLED
    yield
    assert core_trace.is_eager(), (core_trace._state.stack, core_trace._state.dynamic)
    assert eager_vjp.ENABLED


def _run(f, args, kwargs, argnums, has_aux):
    try:
        return ("ok", fg.value_and_grad(f, argnums=argnums, has_aux=has_aux)(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return ("err", e)


def both(f, *args, argnums=0, has_aux=False, kwargs=None):
    """(fast, slow): each ("ok", result) or ("err", exception)."""
    kwargs = kwargs or {}
    assert eager_vjp.usable()
    fast = _run(f, args, kwargs, argnums, has_aux)
    assert core_trace.is_eager()
    with general_path():
        slow = _run(f, args, kwargs, argnums, has_aux)
    assert core_trace.is_eager()
    return fast, slow


_TRACE_NAMES = re.compile(r"EagerTape|EagerTracer|JVPTrace(r)?|level \d+")


def _norm_msg(e):
    return _TRACE_NAMES.sub("<T>", str(e))


def _is_0d_array_vs_scalar(x, y):
    kinds = {type(x), type(y)}
    return np.ndarray in kinds and len(kinds) == 2 and all(np.ndim(v) == 0 for v in (x, y)) and \
        any(isinstance(v, np.generic) for v in (x, y))


def assert_leaves_same(a, b, *, types="loose", rtol=0.0, atol=0.0):
    """Same structure, leaf types, shapes, dtypes and values. ``types="loose"`` accepts a
    0-d ndarray for a NumPy scalar (that difference is pinned by its own test);
    ``types=True`` is strict; ``types=False`` skips the type check."""
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert str(ta) == str(tb), (ta, tb)
    for x, y in zip(la, lb):
        if types and not (types == "loose" and _is_0d_array_vs_scalar(x, y)):
            assert type(x) is type(y), (type(x), type(y), x, y)
        if isinstance(x, (np.ndarray, np.generic)) or isinstance(y, (np.ndarray, np.generic)):
            xa, ya = np.asarray(x), np.asarray(y)
            assert xa.shape == ya.shape and xa.dtype == ya.dtype, (xa.shape, xa.dtype, ya.shape, ya.dtype)
            if rtol or atol:
                np.testing.assert_allclose(xa, ya, rtol=rtol, atol=atol, equal_nan=True)
            else:
                np.testing.assert_array_equal(xa, ya)
        else:
            assert x == y or (x != x and y != y), (x, y)


def assert_same(f, *args, argnums=0, has_aux=False, kwargs=None, types="loose", rtol=0.0, atol=0.0):
    """Same result, or the same error, on both paths; returns the fast result."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fast, slow = both(f, *args, argnums=argnums, has_aux=has_aux, kwargs=kwargs)
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "err":
        assert type(fast[1]) is type(slow[1]), (fast[1], slow[1])
        assert _norm_msg(fast[1]) == _norm_msg(slow[1]), (str(fast[1]), str(slow[1]))
        return fast
    assert_leaves_same(fast[1], slow[1], types=types, rtol=rtol, atol=atol)
    return fast[1]


X3 = np.array([0.3, -0.7, 1.1])
X3_32 = X3.astype(np.float32)
A33 = np.array([[2.0, 0.3, 0.1], [0.3, 3.0, 0.2], [0.1, 0.2, 4.0]])


# --- scalars, dtypes, shapes -----------------------------------------------------------------

@pytest.mark.parametrize("x", [
    2.0, np.float64(2.0), np.float32(2.0), np.array(2.0), np.array(2.0, np.float32),
], ids=["py", "np64", "np32", "0d64", "0d32"])
@pytest.mark.parametrize("name", ["mul_py", "sin_x", "div_rev", "pow3", "tanh", "exp_log", "sum0d_times", "identity"])
def test_scalar_inputs_and_python_constants(x, name):
    f = {
        "mul_py": lambda x: x * 2.0 + 1,
        "sin_x": lambda x: fnp.sin(x) * x,
        "div_rev": lambda x: 1.0 / (x + 0.5) - 2 / x,
        "pow3": lambda x: x ** 3 + x ** -2 + 2.0 ** x,
        "tanh": lambda x: fnp.tanh(x) * 1.5,
        "exp_log": lambda x: fnp.exp(x) * fnp.log(x),
        "sum0d_times": lambda x: fnp.sum(x * 2.0) * 1.0,
        "identity": lambda x: x,
    }[name]
    v, g = assert_same(f, x)
    assert np.asarray(g).dtype == np.asarray(x).dtype


@pytest.mark.parametrize("fn", [
    lambda x: fnp.sum(x * np.ones(3, np.float32)),          # weak-ish Python float input x f32 constant
    lambda x: fnp.sum(x * np.float64(2.0)),
    lambda x: fnp.sum(x * np.array(2.0)),
    lambda x: fnp.sum(x * X3),
    lambda x: fnp.sum(fnp.exp(fnp.atleast_1d(x)[:, None] * 0.5 - x)),
    lambda x: fnp.sum(x.astype(np.float64) ** 2),
    lambda x: fnp.sum(x.astype(np.float32) * 3),
    lambda x: fnp.mean(x).astype(np.float32),
], ids=["f32const", "np64scalar", "0d64const", "f64const", "bcast", "astype64", "astype32", "mean32"])
@pytest.mark.parametrize("x", [2.0, X3_32, np.float32(1.5), X3], ids=["py", "f32vec", "np32", "f64vec"])
def test_float32_float64_mixing(fn, x):
    assert_same(fn, x)


@pytest.mark.parametrize("fn,x", [
    (lambda x: fnp.sum(x), np.zeros(0)),
    (lambda x: fnp.sum(fnp.exp(x)) + fnp.max(fnp.concatenate([x, np.ones(1)])), np.zeros(0)),
    (lambda x: fnp.sum(x @ np.zeros((0, 3))) + fnp.sum(x), np.zeros((2, 0))),
    (lambda x: fnp.sum(x * np.zeros((0, 3))) + fnp.sum(x), X3),
    (lambda x: fnp.sum(fnp.max(x, axis=1)), np.zeros((0, 3))),
    (lambda x: fnp.mean(x), np.zeros(0)),
    (lambda x: fnp.sum(lax.broadcast_in_dim(x, (0, 3), (1,))) + x[0], np.ones(3)),
    (lambda x: fnp.sum(lax.slice(x, (0, 1), (2, 1))) + x[0, 0], A33[:2]),
    (lambda x: lax.scan(lambda c, v: (c * v, c), x, np.zeros(0))[0], 1.5),
], ids=["sum", "exp_max", "matmul", "bcast", "max_axis", "mean_nan", "bcast_empty", "slice_empty", "scan0"])
def test_empty_arrays(fn, x):
    assert_same(fn, x)


@pytest.mark.parametrize("fn", [
    lambda x, y: fnp.sum(x[:, None] * y),
    lambda x, y: fnp.sum(fnp.sin(x[:, None] + y[None, :] * 2.0)),
    lambda x, y: fnp.sum(fnp.maximum(x, y[:, None])),
    lambda x, y: fnp.sum(fnp.where(x > 0, x, y[:, None])),
    lambda x, y: fnp.sum(fnp.arctan2(x, y[:, None] + 2.0)),
    lambda x, y: fnp.sum(fnp.clip(x[None], y[:, None] - 1, y[:, None] + 0.2)),
    lambda x, y: fnp.sum(lax.broadcast_in_dim(x[:1], (2, 4), (1,)) ** 2) + fnp.sum(y),
], ids=["mul", "sin", "maximum", "where", "arctan2", "clip", "bcast_expand"])
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_broadcasting_in_funcgrad_numpy(fn, dt):
    x = np.array([0.2, -0.4, 0.9], dt)
    y = np.array([0.5, -0.1], dt)
    assert_same(fn, x, y, argnums=(0, 1))


_BASE = np.arange(12.0).reshape(3, 4) / 7
_READ_ONLY = _BASE.copy()
_READ_ONLY.flags.writeable = False


@pytest.mark.parametrize("x", [
    np.asfortranarray(_BASE), _BASE[::-1, ::-1], _BASE[:, ::2], _READ_ONLY,
    np.broadcast_to(np.arange(4.0), (3, 4)), _BASE.T, np.asfortranarray(_BASE.astype(np.float32)),
], ids=["fortran", "negative_strides", "non_contiguous", "read_only", "zero_strides", "transposed", "fortran32"])
@pytest.mark.parametrize("fn", [
    lambda x: fnp.sum(fnp.tanh(x) * x),
    lambda x: fnp.sum(x @ x.T) + fnp.sum(x.T @ x),
    lambda x: fnp.sum(fnp.max(x, axis=1)) + fnp.sum(x[:, :1] * x),
    lambda x: fnp.sum(x[1:, ::2] ** 2) + fnp.sum(fnp.concatenate([x, x], 1) ** 3),
], ids=["tanh", "matmul", "max_bcast", "slice_concat"])
def test_unusual_memory_layouts(fn, x):
    assert_same(fn, x, rtol=1e-13)


def test_value_reused_many_times():
    def f(x):
        acc = 0.0
        for i in range(300):
            acc = acc + x * i + fnp.sin(x) * (i % 3)
        return acc

    v, g = assert_same(f, 0.7, rtol=1e-13)
    assert g == pytest.approx(sum(range(300)) + np.cos(0.7) * sum(i % 3 for i in range(300)), rel=1e-12)
    assert_same(lambda x: fnp.sum(sum([x] * 7)), X3_32)
    assert_same(lambda x: fnp.sum(fnp.stack([x] * 50) * np.arange(50.0)[:, None]), X3)


# --- outputs, argnums, kwargs, aux -------------------------------------------------------------

@pytest.mark.parametrize("fn,args,argnums", [
    (lambda x: x, (2.0,), 0),
    (lambda x: x, (np.float32(2.0),), 0),
    (lambda x, y: x, (1.5, 2.5), 1),                       # output is a non-differentiated input
    (lambda x, y: x, (np.float32(1.5), 2.5), 1),
    (lambda x: 1.0, (2.0,), 0),                            # constant outputs
    (lambda x: np.float32(1.0), (2.0,), 0),
    (lambda x: np.array(2.0, np.float32), (2.0,), 0),
    (lambda x, y: x * y, (2.0, 3.0), -1),
    (lambda x, y: x * y, (2.0, 3.0), (1, 0)),
    (lambda x, y: x * y, (2.0, 3.0), (0, 0)),
    (lambda x, y: x * y, (2.0, 3.0), (-2, -1)),
    (lambda x, y: y * 2.0, ((), 3.0), (0, 1)),
    (lambda p: p["a"] * 2.0, ({"a": 1.0, "b": None},), 0),
    (lambda a, b: b * 2.0, (np.float32(0.3), 0.4), (0, 1)),
    (lambda x: fnp.sum(x[0]) * x[1]["z"], ((np.ones(2), {"z": 3.0}),), 0),
], ids=["id", "id32", "other_in", "other_in32", "const", "const32", "const0d32", "neg", "tuple_rev",
        "dup", "neg_tuple", "empty_tree", "none_leaf", "unused_arg", "nested"])
def test_outputs_and_argnums(fn, args, argnums):
    assert_same(fn, *args, argnums=argnums)


@pytest.mark.parametrize("fn,args", [
    (lambda x: 1, (2.0,)),
    (lambda x: x > 0, (2.0,)),
    (lambda x: (x > 0).astype(int), (2.0,)),
    (lambda x: x * np.ones(2), (2.0,)),
    (lambda x: x * np.ones(1), (2.0,)),
    (lambda x: (x,), (2.0,)),
    (lambda x: [x], (2.0,)),
    (lambda x: None, (2.0,)),
    (lambda x: "a", (2.0,)),
    (lambda n: n * 2.0, (3,)),
    (lambda b: 1.0, (True,)),
    (lambda x: fnp.sum(x), (np.ones(3, np.float16),)),
], ids=["int_out", "bool_out", "astype_int_out", "vector_out", "size1_out", "tuple_out", "list_out",
        "none_out", "str_out", "int_in", "bool_in", "f16_in"])
def test_rejected_programs_raise_the_same_error(fn, args):
    kind, _ = assert_same(fn, *args)
    assert kind == "err"


def test_argnums_out_of_range_and_kwargs():
    assert assert_same(lambda x, y: x * y, 2.0, 3.0, argnums=2)[0] == "err"
    assert assert_same(lambda x, y=1.0: x * y, 2.0, kwargs={"y": 5.0}) == (10.0, 5.0)
    assert_same(lambda x, *, y: x * y, 2.0, kwargs={"y": np.float32(5.0)})
    # a traced value cannot be passed as a keyword argument to grad's target, but a
    # kwarg may be an array that mixes with the traced positional argument
    assert_same(lambda x, w=None: fnp.sum(x * w), X3_32, kwargs={"w": X3})


def test_has_aux_leaves_come_out_concrete():
    def f(x):
        y = fnp.sin(x)
        aux = {
            "y": y,
            "x": x,
            "list": [x * 3, 1.5, 2, True, None],
            "int": fnp.argmax(x),
            "bool": x > 0,
            "jvp": fg.jvp(fnp.sin, (x,), (fnp.ones_like(x),)),
            "grad": fg.grad(lambda z: fnp.sum(fnp.sin(z) * x))(x),
            "vmap": fg.vmap(lambda r: r * x[0])(x),
            "jit": fg.jit(lambda a: a * 2)(x),
            "cond": lax.cond(x[0] > 0, lambda v: v * 2, lambda v: v, x),
        }
        return fnp.sum(y), aux

    (v, aux), g = assert_same(f, X3, has_aux=True)
    for leaf in tree_flatten(aux)[0]:
        assert not isinstance(leaf, Tracer), leaf
    np.testing.assert_array_equal(aux["x"], X3)
    np.testing.assert_array_equal(g, np.cos(X3))


def test_has_aux_errors_match():
    assert assert_same(lambda x: x, 2.0, has_aux=True)[0] == "err"
    assert assert_same(lambda x: [x, x], 2.0, has_aux=True)[0] == "err"
    assert assert_same(lambda x: (x, x, x), 2.0, has_aux=True)[0] == "err"
    assert assert_same(lambda x: ("a", x), 2.0, has_aux=True)[0] == "err"
    assert assert_same(lambda x: ((x,), 1.0), 2.0, has_aux=True)[0] == "err"


@pytest.mark.parametrize("aux", ["a string", (lambda: 1), 1j, np.ones(2, np.float16), np.array(["s"])],
                         ids=["str", "function", "complex", "float16", "str_array"])
def test_has_aux_with_non_array_leaves_behaves_the_same(aux):
    fast, slow = both(lambda x: (x * 2.0, aux), 1.5, has_aux=True)
    assert fast[0] == slow[0], (fast, slow)


# --- nested transforms ----------------------------------------------------------------------------

def test_nested_grad_closed_forms_and_perturbation_confusion():
    # Siskind & Pearlmutter: d/dx [x * d/dy (x + y)] = 1
    assert assert_same(lambda x: x * fg.grad(lambda y: x + y)(1.0), 1.0)[1] == 1.0
    # x * d/dy (x y^2)|_{y=x} = 2 x^3  -> 6 x^2
    assert assert_same(lambda x: x * fg.grad(lambda y: x * y * y)(x), 0.7, rtol=1e-15)[1] == pytest.approx(6 * 0.49)
    # d/dx d/dy (x y)|_{y=x} = d/dx x = 1
    assert assert_same(lambda x: fg.grad(lambda y: x * y)(x), 3.0)[1] == 1.0
    # d/dx [d/dy d/dz (x y z)] = d/dx x = 1
    assert assert_same(lambda x: fg.grad(lambda y: fg.grad(lambda z: x * y * z)(y))(x), 3.0)[1] == 1.0
    f = lambda x: fnp.exp(x) * fnp.sin(x)  # noqa: E731
    third = fg.grad(fg.grad(fg.grad(f)))(0.4)
    assert third == pytest.approx(2 * np.exp(0.4) * (np.cos(0.4) - np.sin(0.4)), rel=1e-12)
    assert_same(fg.grad(fg.grad(f)), 0.4, rtol=1e-14)
    # value_and_grad inside, both outputs used
    assert_same(lambda x: fg.value_and_grad(lambda y: fnp.sin(x * y))(x)[0]
                * fg.value_and_grad(lambda y: fnp.sin(x * y))(x)[1], 0.7, rtol=1e-14)


def _make_jaxpr_closure(x):
    closed = fg.make_jaxpr(lambda y: y * fnp.sin(x))(1.0)
    return fnp.sum(fg.eval_closed_jaxpr(closed, 2.0)[0])


@pytest.mark.parametrize("fn", [
    lambda x: fg.jvp(lambda y: x * fnp.sin(y), (x,), (fnp.ones_like(x),))[1].sum(),
    lambda x: fg.jvp(lambda y: fnp.sin(y) * y, (np.full(3, 2.0),), (x,))[1].sum(),
    lambda x: fg.vjp(lambda y: x * fnp.sin(y), x)[1](x)[0].sum(),
    lambda x: fnp.sum(fg.vmap(lambda r: fnp.sin(r) * x[0])(x)),
    lambda x: fnp.sum(fg.vmap(lambda r, s: r * s, in_axes=(0, None))(x, x[1])),
    lambda x: fnp.sum(fg.jit(lambda y: fnp.sin(y) * y)(x)),
    lambda x: fnp.sum(fg.jit(lambda y: fnp.sin(y) * x)(np.ones(3))),
    lambda x: fnp.sum(fg.jit(lambda y, n: y ** n, static_argnums=1)(x, 3)),
    lambda x: fnp.sum(fg.jacfwd(lambda y: fnp.sin(y) * x)(x)),
    lambda x: fnp.sum(fg.jacrev(lambda y: fnp.sin(y) * x)(x)),
    lambda x: fnp.sum(fg.hessian(lambda y: fnp.sum(fnp.sin(y) * x))(x)),
    lambda x: fg.linearize(lambda y: fnp.sin(y) * x, x)[1](x).sum(),
    _make_jaxpr_closure,
    lambda x: fnp.sum(fg.vmap(fg.grad(lambda y: fnp.sin(y * x[0])))(x)),
    lambda x: fnp.sum(fg.jit(fg.grad(lambda y: fnp.sum(fnp.sin(y) ** 3)))(x) * x),
], ids=["jvp_closure", "jvp_tangent", "vjp", "vmap", "vmap_none", "jit", "jit_closure", "jit_static",
        "jacfwd", "jacrev", "hessian", "linearize", "make_jaxpr", "vmap_grad", "jit_grad"])
def test_inner_transforms_inside_eager_grad(fn):
    assert_same(fn, X3, rtol=1e-13, atol=1e-15)


def test_eager_grad_inside_outer_transforms_matches_eager_results():
    f = lambda x: fnp.sum(fnp.tanh(x) * fnp.maximum(x, 0.1) ** 3)  # noqa: E731
    xs = np.linspace(-1, 1, 12).reshape(4, 3)
    rows = np.stack([fg.grad(f)(r) for r in xs])  # eager tape, row by row
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(xs), rows, rtol=1e-14)
    np.testing.assert_allclose(fg.jit(fg.grad(f))(xs[1]), rows[1], rtol=1e-14)
    np.testing.assert_allclose(fg.jacfwd(fg.grad(f))(xs[1]), fg.hessian(f)(xs[1]), rtol=1e-12)
    jx = fg.make_jaxpr(fg.grad(f))(xs[2])
    np.testing.assert_allclose(fg.eval_closed_jaxpr(jx, xs[2])[0], rows[2], rtol=1e-14)


# --- control flow and custom rules --------------------------------------------------------------

def _wl(x):
    return lax.while_loop(lambda c: c[1] < 10.0, lambda c: (c[0] + 1, c[1] * 1.7 + fnp.sin(c[1])), (0, x))[1]


@pytest.mark.parametrize("fn,x", [
    (lambda x: lax.cond(x > 0, lambda v: fnp.sin(v) * 2, lambda v: v * x, x), 0.4),
    (lambda x: lax.cond(x > 0, lambda v: fnp.sin(v) * 2, lambda v: v * x, x), -0.4),
    (lambda x: lax.cond(True, lambda: x * x, lambda: x), 0.4),
    (lambda x: lax.cond(x > 0, lambda: 1.0, lambda: 2.0) * x, 0.4),
    (lambda x: lax.cond(x, lambda v: v * 2.0, lambda v: v * 3.0, x), 1.5),
    (lambda x: lax.cond(x > 0, lambda v: (1, v * 2.0), lambda v: (2, v), x)[1], 1.5),
    (lambda x: lax.switch(2, [fnp.sin, fnp.cos, lambda v: v * x], x), 0.4),
    (lambda x: lax.switch((x > 0).astype(np.int32), [fnp.sin, fnp.cos], x), 0.4),
    (lambda x: lax.switch(5, [lambda v: v * 2.0, lambda v: v * 3.0], x), 1.2),
    (lambda x: lax.switch(1.5, [lambda v: v * 2.0, lambda v: v * 3.0], x), 1.2),
    (_wl, 0.9),
    (lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1], 1.3),
    (lambda x: lax.while_loop(lambda c: c > 100.0, lambda c: c * 2.0, x), 1.5),
    (lambda x: lax.while_loop(lambda c: c - 5.0, lambda c: c + 1.0, x), 1.0),
    (lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, fnp.sin(c[1]) * 1.5), (0, x), checkpoints=2)[1], 1.5),
    (lambda x: lax.fori_loop(0, 4, lambda i, v: v * x + i, x), 1.3),
    (lambda x: lax.fori_loop(0, (x * 3).astype(np.int32), lambda i, v: v * x, x), 1.3),
    (lambda x: lax.fori_loop(0, x, lambda i, c: c * 2.0, x), 1.5),
    (lambda x: lax.scan(lambda c, v: (c * v + x, c * c), 1.0, x * np.arange(4.0))[1].sum(), 0.9),
    (lambda x: lax.scan(lambda c, _: (c * x, None), 1.0, None, length=3)[0], 0.9),
    (lambda x: lax.scan(lambda c, v: (c + v * x, c), 0.0, np.arange(3.0), reverse=True)[1].sum(), 0.9),
    (lambda x: lax.scan(lambda c, v: ({"a": c["a"] * v, "b": c["b"] + v}, None), {"a": x, "b": 0.0}, np.arange(1.0, 4.0))[0]["a"], 1.5),
    (lambda x: lax.scan(lambda c, v: (lax.cond(v > 0, lambda a: a * v, lambda a: a + v, c), None), x, np.array([1.0, -1.0, 2.0]))[0], 0.9),
    (fg.jit(_wl), 0.9),
    (lambda x: fg.jit(fg.grad(_wl))(x) * x, 0.9),
    (lambda x: lax.scan(lambda c, _: (_wl(c) * 0.1, None), x, None, length=2)[0], 0.9),
], ids=["cond_t", "cond_f", "cond_closure", "cond_const", "cond_float_pred", "cond_int_out", "switch",
        "switch_traced", "switch_oob", "switch_float", "while", "while_int", "while_zero", "while_float_pred",
        "while_ckpt", "fori", "fori_traced_bound", "fori_float_bound", "scan", "scan_closure", "scan_rev",
        "scan_tree", "scan_cond", "jit_while", "jit_grad_while", "scan_while"])
def test_control_flow(fn, x):
    assert_same(fn, x, rtol=1e-13, atol=1e-15)


@fg.custom_jvp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] * (1 / (1 + fnp.exp(-p[0])))))


@fg.custom_jvp
def _mul_defjvps(x, y):
    return x * y


_mul_defjvps.defjvps(lambda g, ans, x, y: g * y, None)


@fg.custom_vjp
def _cube(x):
    return x ** 3


_cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (3 * x * x * g,))


@fg.custom_vjp
def _dict_out(x):
    return {"a": x * 2.0, "b": x * 3.0}


_dict_out.defvjp(lambda x: (_dict_out(x), x), lambda r, g: (g["a"] * 2.0 + g["b"] * 3.0,))


@functools.partial(fg.custom_vjp, nondiff_argnums=(0,))
def _apply(fn, x):
    return fn(x)


_apply.defvjp(lambda fn, x: (fn(x), x), lambda fn, r, g: (g * 10.0,))


@fg.custom_vjp
def _bad_bwd(x):
    return x * 2.0


_bad_bwd.defvjp(lambda x: (x * 2.0, None), lambda r, g: g)


@pytest.mark.parametrize("fn,x", [
    (lambda x: fnp.sum(_softplus(x) * x), X3),
    (fg.grad(lambda x: _softplus(x) * x), 0.3),
    (lambda x: _mul_defjvps(x, 3.0), 2.0),
    (lambda x: fnp.sum(_cube(x)), X3),
    (lambda x: _dict_out(x)["a"], 2.0),
    (lambda x: _apply(fnp.sin, x), 2.0),
    (lambda x: _bad_bwd(x), 2.0),
    (lambda x: fg.checkpoint(lambda y: fnp.sin(y * x))(x), 0.7),
    (lambda x: fg.checkpoint(lambda y, n: y ** n, static_argnums=1)(x, 3), 0.7),
    (lambda x: fg.checkpoint(lambda y: fnp.sin(y * x))(2.0), 0.7),
    (fg.checkpoint(lambda x: lax.scan(lambda c, v: (fnp.sin(c) * v, None), x, np.arange(3.0))[0]), 0.9),
    (lambda x: fnp.sum(fg.checkpoint(lambda a, b: a * b)(x, 2.0)), X3_32),
], ids=["custom_jvp", "custom_jvp_grad", "defjvps_none", "custom_vjp", "custom_vjp_dict", "nondiff_fn",
        "bad_bwd", "ckpt_closure", "ckpt_static", "ckpt_const", "ckpt_scan", "ckpt_pyscalar"])
def test_custom_rules_and_checkpoint(fn, x):
    assert_same(fn, x, rtol=1e-13)


def test_custom_vjp_with_python_scalar_argument_keeps_float32():
    @fg.custom_vjp
    def scale(x, s):
        return x * s

    scale.defvjp(lambda x, s: (x * s, s), lambda s, g: (g * s, fnp.sum(g * 0)))
    x = np.ones(3, np.float32)
    assert scale(x, 2.0).dtype == np.float32  # eager call: float32
    with general_path():
        v_slow, _ = fg.value_and_grad(lambda x: fnp.sum(scale(x, 2.0)))(x)
    assert np.asarray(v_slow).dtype == np.float32
    v_fast, _ = fg.value_and_grad(lambda x: fnp.sum(scale(x, 2.0)))(x)
    assert np.asarray(v_fast).dtype == np.float32


def test_custom_jvp_with_python_scalar_argument_keeps_float32():
    @fg.custom_jvp
    def scale(x, s):
        return x * s

    scale.defjvp(lambda p, t: (scale(*p), t[0] * p[1]))
    x = np.ones(3, np.float32)
    assert scale(x, 2.0).dtype == np.float32
    assert fg.jit(lambda x: scale(x, 2.0))(x).dtype == np.float32
    v, _ = fg.value_and_grad(lambda x: fnp.sum(scale(x, 2.0)))(x)
    assert np.asarray(v).dtype == np.float32


def _custom_jvp_closing_over(x):
    @fg.custom_jvp
    def f(y):
        return fnp.sin(y) * x

    f.defjvp(lambda p, t: (f(p[0]), t[0] * fnp.cos(p[0]) * x))
    return f(x * 2.0)


def _custom_vjp_closing_over(x):
    @fg.custom_vjp
    def f(y):
        return fnp.sin(y) * x

    f.defvjp(lambda y: (f(y), y), lambda y, g: (g * fnp.cos(y) * x,))
    return f(x * 2.0)


@pytest.mark.parametrize("fn", [_custom_jvp_closing_over, _custom_vjp_closing_over], ids=["custom_jvp", "custom_vjp"])
@pytest.mark.parametrize("path", ["eager", "general"])
def test_custom_rules_closing_over_the_differentiated_value_raise_a_clear_error(fn, path):
    # Unsupported (the custom rule cannot see the closed-over value's derivative): both
    # paths refuse it when the function is called, naming the function and the fix.
    # (The general path used to return a leaked JVPTracer and a zero gradient.)
    ctx = general_path() if path == "general" else contextlib.nullcontext()
    with ctx, pytest.raises(UnexpectedTracerError, match="f closes over a value that is being differentiated"):
        fg.value_and_grad(fn)(0.7)


# --- linear algebra, indexing, kinks ----------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x: fnp.sum(fnp.linalg.solve(A33 + fnp.outer(x, x), x)),
    lambda x: fnp.sum(fnp.linalg.inv(A33 * x[0])),
    lambda x: fnp.linalg.det(A33 * x),
    lambda x: fnp.linalg.slogdet(A33 * x)[1],
    lambda x: fnp.sum(fnp.linalg.cholesky(A33 + fnp.outer(x, x))),
    lambda x: fnp.sum(fnp.linalg.eigh(A33 + fnp.outer(x, x))[0]),
    lambda x: fnp.sum(fnp.linalg.eigvalsh(A33 + fnp.outer(x, x)) ** 2),
    lambda x: fnp.sum(fnp.linalg.svd(A33 + fnp.outer(x, x), compute_uv=False)),
    lambda x: fnp.sum(fnp.linalg.qr(A33 + fnp.outer(x, x))[1]),
    lambda x: fnp.linalg.norm(x),
    lambda x: fnp.linalg.norm(x * 0.0),
    lambda x: fnp.linalg.norm(A33 * x, 2),
    lambda x: fnp.linalg.norm(x, ord=np.inf),
    lambda x: fnp.sum(fnp.ones((2, 3, 3)) @ (A33 * x) @ x),
    lambda x: fnp.einsum("ij,j,i->", A33, x, x),
    lambda x: fnp.einsum("ii->", A33 * x),
    lambda x: fnp.sum(fnp.tensordot(A33 * x, A33, axes=([0], [1]))),
    lambda x: fnp.sum((A33 @ x) ** 2) + fnp.sum((x @ A33) ** 2) + x @ x,
    lambda x: fnp.sum(lax.dot_general(x[None, None], A33[None], (((2,), (1,)), ((0,), (0,))))),
    lambda x: fnp.sum(lax.dot_general(A33 * x, A33, (((0,), (0,)), ((), ()))) ** 2),
    lambda x: fnp.sum(lax.dot_general(x, x, (((), ()), ((), ()))) ** 2),
    lambda x: fnp.sum(lax.triangular_solve(fnp.tril(A33 * x), fnp.outer(x, X3), lower=True)),
], ids=["solve", "inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "svd", "qr", "norm", "norm0",
        "norm2", "norminf", "batched_matmul", "einsum", "einsum_trace", "tensordot", "matvec_vecmat",
        "dot_batch", "dot_lhs0", "dot_outer", "solve_triangular"])
def test_linear_algebra(fn):
    assert_same(fn, X3, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn", [
    lambda x: x[1] * x[-1] + fnp.sum(x[::2]),
    lambda x: fnp.sum(x[np.array([0, 0, 2, 1])] ** 2),
    lambda x: fnp.sum(x[np.array([True, False, True])] ** 2),
    lambda x: fnp.sum(x[x > 0] ** 2),
    lambda x: x[fnp.argmin(x)] ** 2,
    lambda x: x[int(fnp.argmax(x))] ** 2,
    lambda x: fnp.sum(x[np.array([-1, -3])] ** 2),
    lambda x: fnp.sum(x[None, ..., 1:] ** 2),
    lambda x: fnp.sum(x.at[1].set(x[0] * 3) ** 2),
    lambda x: fnp.sum(x.at[np.array([1, 1])].set(x[np.array([0, 2])]) ** 2),
    lambda x: fnp.sum(x.at[np.array([1, 1])].add(x[np.array([0, 2])]) ** 2),
    lambda x: fnp.sum(x.at[np.array([1, 1])].multiply(x[np.array([0, 2])]) ** 2),
    lambda x: fnp.sum(x.at[np.array([1, 1])].max(x[np.array([0, 2])]) ** 2),
    lambda x: fnp.sum(x.at[0].min(x[1])),
    lambda x: fnp.sum(fnp.at(np.zeros(3))[1].set(x[0]) * x),
    lambda x: fnp.sum(lax.dynamic_slice(x, (fnp.argmax(x),), (2,)) ** 2),
    lambda x: fnp.sum(lax.dynamic_slice(x, (5,), (2,)) ** 2),
    lambda x: fnp.sum(lax.dynamic_update_slice(x, x[:2] * 5.0, (1,)) ** 2),
    lambda x: fnp.sum(lax.dynamic_update_slice(x, np.array([5.0, 6.0]), (1,)) ** 2),
    lambda x: fnp.sum(lax.dynamic_update_slice(X3 * 1.0, x[1:], (7,)) ** 2),
    lambda x: fnp.sum(fnp.take_along_axis(A33 * x, np.array([[0], [2], [1]]), axis=1) ** 2),
    lambda x: fnp.sum(x[::-1] * X3) + fnp.sum(fnp.flip(x) * fnp.roll(x, 1)),
    lambda x: fnp.sum(fnp.cumsum(x) ** 2) + fnp.sum(fnp.cumprod(x) ** 2),
    lambda x: fnp.prod(x * np.array([0.0, 2.0, 3.0])) + fnp.prod(x * np.array([0.0, 0.0, 1.0])),
    lambda x: fnp.sum(fnp.sort(x) * fnp.arange(3.0)) + fnp.sum(x[fnp.argsort(x * 0)] * fnp.arange(3.0)),
    lambda x: fnp.sum(fnp.concatenate([np.ones(2), x, np.zeros(1)]) ** 2),
    lambda x: fnp.sum(fnp.stack([x, x * 2, np.ones(3)]) ** 2) + fnp.concatenate([x, x])[0],
    lambda x: fnp.sum(fnp.tile(x, 2) * fnp.repeat(x, 2)) + fnp.sum(fnp.split(A33 * x, 3)[1] ** 2),
    lambda x: fnp.sum(lax.pad(x, 0.5, [(2, -1, 1)]) ** 2),
    lambda x: fnp.sum(lax.pad(x, x[0], [(2, 1, 1)]) ** 2),
    lambda x: fnp.sum(lax.select_n(np.array([0, 5, -1], np.int32), x, x * 2, x * 3)),
    lambda x: fnp.median(x) + fnp.percentile(x, 30.0),
], ids=["basic", "adv", "mask", "traced_mask", "traced_int", "int_of_traced", "neg_adv", "none_ellipsis",
        "at_set", "at_set_dup", "at_add_dup", "at_mul", "at_max", "at_min", "at_on_const", "dyn_slice",
        "dyn_slice_clamp", "dus_both", "dus_x", "dus_clamp", "take_along", "rev_roll", "cumsum_cumprod",
        "prod_zeros", "sort", "concat_const", "stack", "tile_repeat_split", "pad_neg", "pad_traced_value",
        "select_n_int", "median"])
def test_indexing_and_structural(fn):
    assert_same(fn, X3, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("fn,args", [
    (lambda x: fnp.sum(fnp.maximum(x, 0.3)), (np.array([0.3, 0.1, 0.5]),)),
    (lambda x: fnp.sum(fnp.maximum(x, x)) + fnp.sum(fnp.minimum(x, x)), (X3,)),
    (lambda x: fnp.max(x) + fnp.min(x), (np.array([1.0, 2.0, 2.0, 1.0]),)),
    (lambda x: fnp.max(x), (np.array([1.0, np.nan, 2.0]),)),
    (lambda x: fnp.max(x), (np.array([1.0, np.inf, np.inf]),)),
    (lambda x: fnp.max(x), (np.array([-0.0, 0.0]),)),
    (lambda x: fnp.sum(fnp.max(x, axis=0) * fnp.min(x, axis=1)), (np.array([[1.0, 2.0], [2.0, 2.0]]),)),
    (lambda x: fnp.sum(fnp.abs(x)), (np.array([0.0, -0.0, 1.0, -2.0]),)),
    (lambda x: fnp.sum(fnp.sqrt(x)), (np.array([0.0, 1.0]),)),
    (lambda x, y: fnp.sum(x / y), (np.array([1.0, 0.0, -1.0]), np.zeros(3))),
    (lambda x: fnp.sum(fnp.log(x)), (np.array([0.0, 1.0, -1.0]),)),
    (lambda x, y: fnp.sum(x ** y), (np.array([0.0, 2.0, 0.0]), np.array([2.0, 0.5, 0.0]))),
    (lambda x: fnp.sum(x ** -2) + fnp.sum(x ** 0) + fnp.sum(x ** 1), (np.array([0.0, 2.0, np.nan, np.inf]),)),
    (lambda x: fnp.sum(fnp.tanh(x)) + fnp.sum(fnp.exp(x)), (np.array([np.inf, -np.inf, np.nan]),)),
    (lambda x: fnp.sum(fnp.clip(x, -0.5, 0.5)), (np.array([-0.5, 0.5, 0.0, 1.0, -1.0]),)),
    (lambda x: fnp.sum(fnp.where(x > 0, fnp.sqrt(x), 0.0)), (X3,)),
    (lambda x: fnp.sum(fnp.where(x > 0, 1.0, x)), (X3_32,)),
    (lambda x: fnp.sum(fnp.arctan2(x, x)) + fnp.sum(fnp.hypot(x, 0.0)), (np.array([0.0, 1.0]),)),
    (lambda x: fnp.sum(fnp.cbrt(x)) + fnp.sum(fnp.arcsin(x * 0.5)), (np.array([0.0, 2.0]),)),
    (lambda x: fnp.sum(fnp.arccosh(x)), (np.array([1.0, 2.0]),)),
    (lambda x: fg.scipy.special.logsumexp(x), (np.array([-np.inf, -np.inf]),)),
    (lambda x: fnp.sum(fnp.logaddexp(x * -np.inf, x * -np.inf)), (X3,)),
    (lambda x, y: fnp.sum(fnp.copysign(x, y)), (X3, np.array([0.2, -0.0, -0.3]))),
    (lambda x: fnp.sum(fg.scipy.special.gammaln(x) + fg.scipy.special.digamma(x)), (np.array([0.0, 2.5, -1.0]),)),
    (lambda x: fnp.sum(fg.scipy.special.erfinv(x)), (np.array([1.0, 0.5]),)),
    (lambda x: fnp.var(x, ddof=1) + fnp.std(x * 0 + 1.0), (X3,)),
], ids=["max_ties", "max_self", "reduce_ties", "reduce_nan", "reduce_inf", "reduce_signed_zero", "reduce_axes",
        "abs0", "sqrt0", "div0", "log0", "pow0", "int_pow_edges", "inf_nan", "clip_edges", "where_nan",
        "where_f32", "atan2_0", "cbrt_asin", "acosh1", "lse_inf", "logaddexp_inf", "copysign", "gamma_poles",
        "erfinv1", "var_std"])
def test_kinks_infinities_and_nans(fn, args):
    assert_same(fn, *args, argnums=tuple(range(len(args))))


def test_runtime_warnings_are_the_same():
    cases = [
        (lambda x: fnp.sum(fnp.sqrt(x)), np.array([0.0, 1.0])),
        (lambda x: fnp.sum(fnp.log(x)), np.array([0.0, 1.0])),
        (lambda x: fnp.max(x), np.array([np.nan, 1.0])),
        (lambda x: fnp.sum(x ** -1), np.array([0.0, 1.0])),
        (lambda x: fnp.mean(x), np.zeros(0)),
    ]
    for f, x in cases:
        seen = []
        for enabled in (True, False):
            eager_vjp.ENABLED = enabled
            try:
                with warnings.catch_warnings(record=True) as rec:
                    warnings.simplefilter("always")
                    fg.grad(f)(x)
            finally:
                eager_vjp.ENABLED = True
            seen.append(sorted({str(r.message) for r in rec}))
        assert seen[0] == seen[1]


# --- integer and boolean intermediates, stop_gradient, Python values --------------------------------

@pytest.mark.parametrize("fn", [
    lambda x: fnp.sum(x.astype(int) * x),
    lambda x: fnp.sum(x.astype(bool) * x),
    lambda x: fnp.sum((x > 0) * x) + fnp.sum((x == x) & (x < 1)),
    lambda x: x[fnp.argmax(x)] + fnp.sum(x * fnp.argmin(x)),
    lambda x: fnp.sum(fnp.floor(x) * x + fnp.round(x) + fnp.sign(x) + fnp.ceil(x)),
    lambda x: fnp.sum(fg.stop_gradient(x) * x),
    lambda x: fg.stop_gradient({"a": x, "n": 3})["a"].sum() + x.sum(),
    lambda x: fnp.sum(x.astype(np.int32)).astype(float) + x[0],
    lambda x: fnp.sum(x * fnp.arange(3, dtype=np.int32)),
    lambda x: fnp.sum(x * np.array([True, False, True])),
    lambda x: fnp.sum(fnp.isfinite(x / x) * x),
    lambda x: lax.convert_element_type(lax.convert_element_type(x, np.dtype(np.int32)), np.dtype(np.float64)).sum() * x[0],
], ids=["astype_int", "astype_bool", "comparisons", "argmax", "piecewise_const", "stop_gradient",
        "stop_gradient_tree", "int_sum", "int_const", "bool_const", "isfinite", "float_int_float"])
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_integer_and_boolean_intermediates(fn, dt):
    assert_same(fn, np.array([0.0, 1.5, -2.5], dt))


@pytest.mark.parametrize("fn,x", [
    (lambda x: x * float(x), 1.5),
    (lambda x: x * x.item(), 1.5),
    (lambda x: x * int(x), 1.5),
    (lambda x: x * bool(x), 1.5),
    (lambda x: x * 2.0 if x > 0 else x * 3.0, -1.5),
    (lambda x: x * 2.0 if x > 0 else x * 3.0, 1.5),
    (lambda x: sum(x), X3),
    (lambda x: abs(x) + pow(x, 3) + 2 ** x + (1 - x) / (2 / x) + (x // 0.4) * x + x % 0.4, -1.5),
    (lambda x: np.sin(x) + np.add(x, 1.0) + np.float64(2.0) * x, 1.5),
    (lambda x: fnp.sum(np.ones(3) * x) + np.sum(x), X3),
    (lambda x: fnp.sum(fnp.array([x[0], x[1] * 2, 3.0])), X3),
    (lambda x: fnp.sum(x @ [[1.0], [2.0], [3.0]]), X3),
    (lambda x: x.mean() + x.std() + x.var() + fnp.sum(x.T), X3),
    (lambda x: fnp.sum(fnp.linspace(x[0], x[1], 5) ** 2) + fnp.sum(fnp.arange(x[2]) * x[0]), X3),
    (lambda x: fnp.sum(fnp.full((2,), x[0]) ** 2) + fnp.sum(fnp.zeros_like(x) + x), X3),
    (lambda x: fnp.sum(x[fnp.nonzero(x > 0)]), X3),
    (lambda x: np.asarray(x).sum() * x, 1.5),
    (lambda x: sum(x.tolist()), X3),
    (lambda x: (hash(x), x)[1], 1.5),
    (lambda x: (round(x), x)[1], 1.5),
    (lambda x: (x.__setitem__(0, 1.0), x[0])[1], X3),
    (lambda x: (f"{x:.2f}", x)[1], 1.5),
], ids=["float", "item", "int", "bool", "if_neg", "if_pos", "iter", "builtins", "numpy_ufuncs", "ndarray_left",
        "list_to_array", "matmul_list", "methods", "ranges_traced", "full_traced", "nonzero", "np_asarray_err",
        "tolist_err", "hash_err", "round_err", "setitem_err", "format_err"])
def test_python_values_and_conversions(fn, x):
    assert_same(fn, x)


# --- things that are not quite the same -----------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x: fnp.maximum(x, 0.0),
    lambda x: fnp.minimum(x, 3.0),
    lambda x: fnp.clip(x, 0.0, 2.0),
    lambda x: fnp.sum(x) * 0.5,
], ids=["relu", "minimum", "clip", "sum0d"])
@pytest.mark.parametrize("x", [1.0, np.float32(1.0)], ids=["py", "np32"])
def test_scalar_gradient_has_the_same_python_type(fn, x):
    assert_same(fn, x, types=True)


@pytest.mark.parametrize("g", [
    lambda x: x ** 0,
    lambda x: fnp.copysign(2.0, x),
    lambda x: lax.fori_loop(0, 3, lambda i, c: (c[0] + 1.0, c[1] * x), (0.0, x))[0],
    lambda x: lax.scan(lambda c, v: (c + 1.0, v * 2), 0.0, x * np.ones(2))[0],
], ids=["pow0", "copysign_sign", "fori_counter", "scan_counter"])
def test_values_independent_of_the_input_are_concrete(g):
    def f(x):
        return x * float(np.asarray(g(x)).sum())

    assert_same(f, 1.5)


def _buffer_reuse_loss(op):
    data = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.2]])

    def loss(w):
        buf = np.empty(3)
        total = 0.0
        for row in data:
            buf[...] = row  # a preallocated scratch buffer, refilled each step
            total = total + fnp.sum(op(w, buf))
        return total

    def reference(w):
        return sum(fnp.sum(op(w, row.copy())) for row in data)

    return loss, reference


_W = np.array([0.4, 0.2, 0.9])


@pytest.mark.parametrize("op", [lambda w, b: fnp.where(b > 0, w, 2 * w), fnp.copysign,
                                lambda w, b: fnp.clip(w, b - 0.1, b + 0.1)], ids=["where", "copysign", "clip"])
def test_buffer_reuse_where_both_paths_are_right(op):
    loss, reference = _buffer_reuse_loss(op)
    want = fg.grad(reference)(_W)
    np.testing.assert_allclose(fg.grad(loss)(_W), want, rtol=1e-13)
    with general_path():
        np.testing.assert_allclose(fg.grad(loss)(_W), want, rtol=1e-13)


@pytest.mark.xfail(strict=True, reason=(
    "documented limitation (docs/guide/semantics.md: arrays are immutable): the eager tape holds "
    "its operands by reference and evaluates partials in the backward pass (max/min, pow, "
    "atan2, sin/cos/log/integer_pow), so refilling a scratch buffer after use changes the "
    "gradient; the general path happens to compute these partials in the forward pass"))
@pytest.mark.parametrize("op", [fnp.maximum, fnp.minimum, lambda w, b: w ** b, fnp.arctan2],
                         ids=["maximum", "minimum", "pow", "arctan2"])
def test_buffer_reuse_eager_matches_general_path(op):
    loss, reference = _buffer_reuse_loss(op)
    want = fg.grad(reference)(_W)
    with general_path():
        np.testing.assert_allclose(fg.grad(loss)(_W), want, rtol=1e-13)
    np.testing.assert_allclose(fg.grad(loss)(_W), want, rtol=1e-13)


@pytest.mark.xfail(strict=True, reason=(
    "documented limitation on both paths (docs/guide/semantics.md: arrays are immutable): the "
    "residual of mul/div/dot_general is the constant operand itself, held by reference "
    "until the backward pass, so refilling a scratch buffer after use changes the gradient"))
@pytest.mark.parametrize("op", [lambda w, b: w * b, lambda w, b: w / b, lambda w, b: w @ b], ids=["mul", "div", "matmul"])
def test_buffer_reuse_mul_div_matmul(op):
    loss, reference = _buffer_reuse_loss(op)
    np.testing.assert_allclose(fg.grad(loss)(_W), fg.grad(reference)(_W), rtol=1e-13)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("fn", [
    lambda x: fnp.sum(x * x),
    lambda x: fnp.sum(fnp.sin(x)),
    lambda x: fnp.sum(fnp.exp(x)),
    lambda x: fnp.sum(fnp.tanh(x)),
], ids=["mul", "sin", "exp", "tanh"])
def test_numpy_matrix_input(fn):
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    _, g = fg.value_and_grad(fn)(m)
    with general_path():
        _, g_slow = fg.value_and_grad(fn)(m)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_slow), rtol=1e-14)


def test_pad_gradient_wrt_padding_value_only():
    # 3 ones, padded with c: (2 low, 1 high, 1 interior) -> 5 padded cells
    f = lambda c: fnp.sum(lax.pad(np.ones(3), c, [(2, 1, 1)]))  # noqa: E731
    with general_path():
        slow = fg.grad(f)(0.5)
    fast = fg.grad(f)(0.5)
    assert fast == slow  # the two paths agree...
    assert fast == 5.0   # ...on the wrong value (8.0)


# --- escaped tracers, exceptions, generators, threads ---------------------------------------------

def _leak():
    box = []
    fg.grad(lambda x: box.append(x) or x * 2.0)(1.0)
    return box[0]


@pytest.mark.parametrize("use", [
    lambda t: fnp.sin(t),
    lambda t: t + 1.0,
    lambda t: bool(t > 0),
    lambda t: fg.grad(lambda y: y * t)(2.0),
    lambda t: fg.grad(lambda y: t)(2.0),
    lambda t: fg.grad(lambda y: (y * 1.0, t), has_aux=True)(2.0),
    lambda t: fg.grad(lambda y: y * 2.0)(t),
    lambda t: fg.vmap(lambda y: y * t)(np.ones(2)),
    lambda t: fg.jit(lambda y: y * t)(2.0),
    lambda t: fg.jit(lambda y: y * 2.0)(t),
    lambda t: fg.jvp(lambda y: y * t, (1.0,), (1.0,)),
], ids=["sin", "add", "bool_of_cmp", "later_grad", "later_grad_output", "later_grad_aux", "later_grad_input",
        "vmap", "jit_closure", "jit_arg", "jvp"])
@pytest.mark.parametrize("path", ["eager", "general"])
def test_escaped_tracers_raise(use, path):
    if path == "general":
        with general_path():
            t = _leak()
    else:
        t = _leak()
    with pytest.raises(UnexpectedTracerError):
        use(t)
    assert fg.grad(lambda x: x * x)(3.0) == 6.0


def test_escaped_tracers_keep_their_concrete_value():
    t = _leak()
    assert float(t) == 1.0 and t.item() == 1.0 and int(t) == 1 and t.shape == ()
    with pytest.raises(fg.errors.TracerArrayConversionError):
        np.asarray(t)


@pytest.mark.parametrize("leak", [
    lambda x, box: fg.jvp(lambda y: box.append(y) or y * 1.0, (x,), (1.0,)),
    lambda x, box: fg.vmap(lambda y: box.append(y) or y * 1.0)(np.ones(2)),
    lambda x, box: fg.jit(lambda y: box.append(y) or y * 1.0)(x),
    lambda x, box: fg.grad(lambda y: box.append(y) or y * 1.0)(x),
], ids=["jvp", "vmap", "jit", "grad"])
@pytest.mark.parametrize("where", ["output", "aux", "use"])
def test_inner_transform_tracers_escaping_into_the_eager_grad(leak, where):
    def f(x):
        box = []
        leak(x, box)
        if where == "output":
            return box[0]
        if where == "aux":
            return x * 1.0, box[0]
        return fnp.sum(box[0] * 2.0)

    kind, err = assert_same(f, 1.5, has_aux=where == "aux")
    assert kind == "err" and isinstance(err, UnexpectedTracerError)


class Boom(Exception):
    pass


def _raiser(x):
    fnp.sin(x)
    raise Boom("boom")


@fg.custom_jvp
def _cj_raising(y):
    return y * 2.0


_cj_raising.defjvp(lambda p, t: _raiser(p[0]))


@fg.custom_vjp
def _cv_raising_bwd(x):
    return x * 2.0


def _bwd_raise(r, g):
    raise Boom("bwd")


_cv_raising_bwd.defvjp(lambda x: (x * 2.0, None), _bwd_raise)


@pytest.mark.parametrize("fn", [
    _raiser,
    lambda x: lax.cond(x > 0, _raiser, lambda v: v, x),
    lambda x: fg.vmap(_raiser)(x * np.ones(2)),
    lambda x: fg.jit(_raiser)(x),
    lambda x: fg.grad(_raiser)(x),
    lambda x: fg.jvp(_raiser, (x,), (1.0,)),
    lambda x: fg.make_jaxpr(_raiser)(x),
    lambda x: fg.checkpoint(_raiser)(x),
    _cj_raising,
    lambda x: _cv_raising_bwd(x) * x,
    lambda x: lax.while_loop(lambda c: c < 3.0, _raiser, x),
    lambda x: lax.scan(lambda c, _: (_raiser(c), None), x, None, length=2)[0],
], ids=["plain", "cond", "vmap", "jit", "inner_grad", "jvp", "make_jaxpr", "checkpoint", "custom_jvp_rule",
        "custom_vjp_bwd", "while", "scan"])
@pytest.mark.parametrize("path", ["eager", "general"])
def test_exceptions_leave_the_trace_stack_clean(fn, path):
    ctx = general_path() if path == "general" else contextlib.nullcontext()
    with ctx, pytest.raises(Boom):
        fg.grad(fn)(0.5)
    assert core_trace.is_eager()
    assert len(core_trace._state.stack) == 1 and core_trace._state.dynamic is None
    assert eager_vjp.usable()
    assert fg.grad(lambda x: fnp.sin(x) * x)(0.5) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5))


@pytest.mark.parametrize("exc", [KeyboardInterrupt, StopIteration, GeneratorExit, SystemExit])
def test_base_exceptions_leave_the_trace_stack_clean(exc):
    def f(x):
        fnp.sin(x)
        raise exc()

    with pytest.raises(exc):
        fg.grad(f)(1.0)
    assert core_trace.is_eager()
    assert fg.grad(lambda x: x * x)(3.0) == 6.0


def test_generators():
    # a generator started outside and driven inside: the tracer it keeps escapes
    def running_total():
        total = 0.0
        while True:
            v = yield total
            total = total + v

    gen = running_total()
    next(gen)
    assert fg.grad(lambda x: gen.send(x * 3.0) * 2.0)(1.0) == 6.0
    with pytest.raises(UnexpectedTracerError):
        gen.send(1.0)
    # a lazy generator created inside and consumed after the grad returned
    lazy = []
    fg.grad(lambda x: lazy.append(x * i for i in range(3)) or x * 1.0)(1.0)
    with pytest.raises(UnexpectedTracerError):
        list(lazy[0])
    # generator expressions consumed inside are fine, on both paths
    assert_same(lambda x: sum(fnp.sin(x * i) for i in range(4)), 0.3)
    # grads computed lazily by a generator, interleaved with an eager grad
    results = []
    for path in ("eager", "general"):
        lazy_grads = (fg.grad(lambda y: y ** 3)(float(i)) for i in range(1, 4))
        ctx = general_path() if path == "general" else contextlib.nullcontext()
        with ctx:
            results.append(fg.value_and_grad(lambda x: x * next(lazy_grads) + fnp.sin(x) * next(lazy_grads))(2.0))
        assert list(lazy_grads) == [27.0]
    assert_leaves_same(results[0], results[1])


def test_concurrent_eager_grads_in_threads():
    def f(x):
        y = lax.cond(x[0] > 0, lambda v: fnp.sin(v) * 2, lambda v: v * v, x)
        z = lax.scan(lambda c, v: (c * v + 1, c), 1.0, y)[0]
        return z + fnp.sum(fnp.tanh(x) * fnp.maximum(x, 0.0)) + fnp.linalg.det(fnp.outer(x, x) + fnp.eye(3))

    xs = [np.random.default_rng(i).normal(size=3) for i in range(8)]
    with general_path():
        want = [fg.value_and_grad(f)(x) for x in xs]
    got = [None] * len(xs)
    errors = []

    def work(i):
        try:
            got[i] = [fg.value_and_grad(f)(xs[i]) for _ in range(3)]
            assert core_trace.is_eager()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, (v, g) in enumerate(want):
        for v2, g2 in got[i]:
            np.testing.assert_allclose(v2, v, rtol=1e-13)
            np.testing.assert_allclose(g2, g, rtol=1e-13)


def test_threads_started_inside_an_eager_grad():
    def run_in_thread(fn):
        box = {}

        def target():
            try:
                box["value"] = fn()
                box["eager"] = core_trace.is_eager()
            except Exception as e:  # noqa: BLE001
                box["error"] = e

        t = threading.Thread(target=target)
        t.start()
        t.join()
        return box

    # a grad in a thread spawned inside an eager grad gets its own (eager) trace stack
    def f(x):
        box = run_in_thread(lambda: fg.grad(lambda y: y * y)(3.0))
        assert box["eager"] and box["value"] == 6.0
        return x * box["value"]

    assert assert_same(f, 2.0) == (12.0, 6.0)

    # the parent's tracer is not alive in the child thread, on both paths
    for path in ("eager", "general"):
        seen = []

        def g(x):
            seen.append(run_in_thread(lambda: fnp.sin(x)))
            seen.append(run_in_thread(lambda: fg.grad(lambda y: y * x)(3.0)))
            return x * 2.0

        ctx = general_path() if path == "general" else contextlib.nullcontext()
        with ctx:
            assert fg.grad(g)(2.0) == 2.0
        assert all(isinstance(b.get("error"), UnexpectedTracerError) for b in seen), seen


# --- random programs -----------------------------------------------------------------------------

_UNARY = [
    fnp.sin, fnp.cos, fnp.tanh, fnp.exp, lambda a: fnp.log(fnp.abs(a) + 0.5), fnp.abs, lambda a: a ** 2,
    lambda a: a ** 3, lambda a: fnp.sqrt(fnp.abs(a)), lambda a: -a, lambda a: fnp.maximum(a, 0.1),
    lambda a: fnp.minimum(a, a * 0.5), lambda a: fnp.clip(a, -0.5, 0.5), lambda a: fnp.where(a > 0, a, 0.3 * a),
    fnp.arctan, fnp.sinh, lambda a: fnp.cumsum(a, axis=-1) if fnp.ndim(a) else a,
    lambda a: fnp.sort(a, axis=-1) if fnp.ndim(a) else a, lambda a: a[..., ::-1] if fnp.ndim(a) else a,
    lambda a: fnp.mean(a, axis=-1, keepdims=True) if fnp.ndim(a) else a,
    lambda a: fnp.max(a, axis=0) if fnp.ndim(a) > 1 else a, lambda a: a.astype(np.float32),
    lambda a: a.astype(np.float64), lambda a: fg.stop_gradient(a) * a, lambda a: fnp.expm1(a * 0.1),
    lambda a: fnp.log1p(fnp.abs(a)), lambda a: a / (1.0 + a * a), lambda a: fnp.round(a) + a,
    lambda a: 2.0 ** a, lambda a: fnp.sign(a) * a, lambda a: fnp.floor(a) * 0.5 + a,
]
_BINARY = [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / (1.5 + b * b), fnp.maximum,
    fnp.minimum, lambda a, b: fnp.where(a > b, a, b), lambda a, b: fnp.arctan2(a, b + 2.0),
    lambda a, b: fnp.abs(a) ** fnp.abs(b),
]
_CONSTS = [2.0, 0.5, np.float32(1.5), np.float64(0.25), 3, np.array(0.7), np.array(0.7, np.float32)]


def _random_program(seed):
    rng = random.Random(seed)
    prog = []
    for _ in range(rng.randint(2, 8)):
        k = rng.random()
        if k < 0.5:
            prog.append(("u", rng.randrange(len(_UNARY)), rng.randrange(100)))
        elif k < 0.8:
            prog.append(("b", rng.randrange(len(_BINARY)), rng.randrange(100)))
        else:
            prog.append(("c", rng.randrange(len(_BINARY)), rng.randrange(len(_CONSTS))))

    def f(*xs):
        vals = list(xs)
        for kind, i, j in prog:
            if kind == "u":
                vals.append(_UNARY[i](vals[j % len(vals)]))
            elif kind == "b":
                vals.append(_BINARY[i](vals[j % len(vals)], vals[(j * 7 + 3) % len(vals)]))
            else:
                vals.append(_BINARY[i](vals[-1], _CONSTS[j]) if j % 2 else _BINARY[i](_CONSTS[j], vals[-1]))
        return fnp.sum(vals[-1]) + fnp.sum(vals[-2]) * 0.5

    args = []
    nrng = np.random.default_rng(seed)
    for _ in range(rng.randint(1, 3)):
        shape = rng.choice([(), (3,), (2, 3), (1, 3)])
        dt = rng.choice([np.float32, np.float64, "py"])
        if dt == "py" and shape == ():
            args.append(rng.uniform(-2, 2))
            continue
        a = np.asarray(nrng.uniform(-2, 2, size=shape)).astype(np.float64 if dt == "py" else dt)
        args.append(a[()] if shape == () and rng.random() < 0.5 else a)
    return f, args


@pytest.mark.parametrize("chunk", range(4))
def test_random_programs_match_the_general_path(chunk):
    # values and dtypes must agree; (the Python type of scalar gradients is pinned by the
    # xfail test above, so it is not compared here)
    for seed in range(chunk * 100, chunk * 100 + 100):
        f, args = _random_program(seed)
        assert_same(f, *args, argnums=tuple(range(len(args))), types=False, rtol=1e-5, atol=1e-6)
