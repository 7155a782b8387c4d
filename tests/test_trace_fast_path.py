"""Staging's direct paths (issues #14/#17: tracing cost per equation) record exactly what
the general paths record: ``numpy_api/staged.py`` (elementwise functions and operators on
the staging trace's own tracers) and ``core.staging.stage_unary``/``stage_binary``. Each
program is traced with them and without them (the attempts disabled), and the jaxpr text
and every equation's source line must agree."""
import types

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.core.trace import get_aval_any
from funcgrad.numpy_api import staged


def _no_fast_path(monkeypatch):
    # every attempt first asks whether its tracer belongs to the innermost staging trace
    monkeypatch.setattr(staged, "_st", types.SimpleNamespace(dynamic=None))


def _lines(jaxpr):
    return [(e.primitive.name, e.source_info and e.source_info.filename, e.source_info and e.source_info.lineno)
            for e in jaxpr.eqns]


def _record(fn, *args):
    """(make_jaxpr's text, [(primitive, file, line)] of the jit-style trace and of
    make_jaxpr's, which keeps dead primal work under grad) of ``fn``."""
    closed = fg.make_jaxpr(fn)(*args)
    jaxpr, _ = trace_to_jaxpr(lambda *v: list(fn(*v)) if isinstance(fn(*v), tuple) else [fn(*v)],
                              [get_aval_any(a) for a in args])
    return str(closed), _lines(jaxpr) + _lines(closed.jaxpr)


def _mixed(v):
    a = v * 2 + 1
    b = 3 - v
    c = -v / 2.0
    d = 1.5 / v + v / 4
    e = fnp.sin(v) * fnp.cos(v) - fnp.exp(-v * v)
    f = fnp.add(v, True) + fnp.subtract(2, v) + fnp.multiply(v, v)
    g = fnp.divide(v, v) + fnp.true_divide(v, 3) + fnp.tanh(v) + fnp.sqrt(v * v)
    h = abs(v - 1) + fnp.abs(v) + fnp.absolute(-v) / v
    return a, b, c, d, e, f, g, h


def _casts(v):
    s = v.astype(np.float32)
    i = v.astype(np.int32)
    bo = v > 0
    c = v.astype(np.complex128)
    return (s * 2.0 + 1, s * v, i * 3 + 1 - i, -i, bo + bo, bo * bo, c * 1.5 + c, fnp.sin(c) - c,
            fnp.float32(2) * s, v[0] * 2.0 + v[1], v[None, :] * v[:, None], v + v[0], abs(c), abs(i), abs(bo),
            i / 2, i / (i + 1), s / v)


def _chain(v):
    y = v
    for i in range(10):  # W10's five candidates per step
        y = [fnp.sin(y), y * 1.0001 + 0.1, fnp.tanh(y), y - 0.5 * y * y, fnp.exp(-y * y)][i % 5]
    return y


@pytest.mark.parametrize("fn", [_mixed, _casts, _chain], ids=lambda f: f.__name__)
def test_direct_paths_record_what_the_general_paths_record(fn, monkeypatch):
    x = np.linspace(0.5, 1.5, 4)
    fast = _record(fn, x)
    with monkeypatch.context() as m:
        _no_fast_path(m)
        general = _record(fn, x)
    assert fast[0] == general[0]
    assert fast[1] == general[1]
    assert all(f == __file__ for _, f, _ in fast[1])  # every line is this file's


def test_grad_under_jit_same_program_and_values(monkeypatch):
    x = np.linspace(0.5, 1.5, 4)
    g = fg.grad(lambda v: fnp.sum(_chain(v)))
    fast = _record(g, x)
    with monkeypatch.context() as m:
        _no_fast_path(m)
        general = _record(g, x)
    assert fast == general
    np.testing.assert_allclose(fg.jit(g)(x), g(x), rtol=1e-12)


def test_weak_python_scalar_arguments_take_the_general_path():
    # a jit argument 1.5 is a weakly typed tracer: (s * 2) + float32 stays float32
    out = fg.jit(lambda s, a: (s * 2.0 - s) + a)(1.5, np.ones(3, np.float32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.full(3, 2.5, np.float32))


def test_jit_values_and_dtypes_match_eager():
    x = np.linspace(0.5, 1.5, 4)
    for fn in (_mixed, _casts):
        want = fn(x)
        got = fg.jit(fn)(x)
        for w, o in zip(want, got):
            assert np.asarray(o).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(np.asarray(o), np.asarray(w), rtol=1e-6)


def test_outer_tracers_inside_a_nested_staging_trace(monkeypatch):
    # an outer jit's tracer used inside an inner staged body is a constant there: the
    # attempts must not stage on a trace that is not the innermost one
    def f(v):
        return fg.lax.cond(v[0] > 0, lambda u: v * u + v, lambda u: u - v, v * 2.0)

    x = np.linspace(0.5, 1.5, 4)
    np.testing.assert_allclose(fg.jit(f)(x), x * (2 * x) + x)
    fast = _record(f, x)
    assert "cond" in fast[0]
    with monkeypatch.context() as m:
        _no_fast_path(m)
        assert _record(f, x) == fast


def test_bad_shapes_still_raise_typed_errors():
    with pytest.raises(ValueError, match="multiply"):
        fg.jit(lambda a, b: a * b)(np.ones(3), np.ones(4))


@fg.custom_vjp
def _scaled_sin(x):
    return fnp.sin(x)


def _scaled_sin_fwd(x):
    return fnp.sin(x), fnp.cos(x)


def _scaled_sin_bwd(c, g):
    return (g * c * 2.0,)  # (a line of the user's backward rule: its equations keep it)


_scaled_sin.defvjp(_scaled_sin_fwd, _scaled_sin_bwd)


def test_backward_walk_anchor_keeps_every_line(monkeypatch):
    # the reverse-mode walker anchors the search for the user's line at its frame
    # (source_info.anchored); a user's backward rule staged from inside it keeps its line
    from funcgrad.core import source_info

    def loss(v):
        return fnp.sum(_scaled_sin(v) * v + _chain(v))

    x = np.linspace(0.5, 1.5, 4)
    programs = [fg.grad(loss), fg.grad(lambda v: fnp.sum(fg.grad(lambda u: fnp.sum(fnp.tanh(u) * u))(v) * v))]
    anchored = [_record(g, x) for g in programs]
    with monkeypatch.context() as m:
        m.setattr(source_info, "anchored", lambda frame: source_info.anchor)
        plain = [_record(g, x) for g in programs]
    assert anchored == plain
    bwd_line = _scaled_sin_bwd.__code__.co_firstlineno + 1
    assert any(line == bwd_line for _, _, line in anchored[0][1])
    np.testing.assert_allclose(fg.jit(programs[0])(x), programs[0](x), rtol=1e-12)
