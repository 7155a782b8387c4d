"""Tracing's fast paths (issue #17, first-call latency) give exactly what the general
paths give: a traced value with a Python scalar is promoted by a plan cached per (rule,
aval, scalar type, position); staging skips funcgrad's frames by a per-code cache when it
looks for the user's line."""
import inspect

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util

DTYPES = [np.float32, np.float64, np.int8, np.int32, np.uint8, np.bool_, np.complex64]
SCALARS = [2, 1.5, True, 0.5 - 1j]
FUNCS = [fnp.add, fnp.multiply, fnp.true_divide, fnp.power, fnp.arctan2, fnp.maximum]


def _eager_or_error(fn, a, b):
    try:
        with np.errstate(all="ignore"):
            return fn(a, b), None
    except (TypeError, ValueError, OverflowError) as e:
        return None, type(e)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_traced_with_python_scalar_matches_general_path(dtype, monkeypatch):
    x = (np.arange(1, 4) % 2 == 1) if dtype is np.bool_ else np.arange(1, 4).astype(dtype)
    cases = [(fn, s, pos) for fn in FUNCS for s in SCALARS for pos in (0, 1)]
    staged = {}
    for general in (False, True):  # the same program text with the plan and without it
        if general:
            monkeypatch.setattr(_util, "_traced_and_scalar", lambda rule, a, b: None)
        for fn, s, pos in cases:
            args = (x, s) if pos == 0 else (s, x)
            want, err = _eager_or_error(fn, *args)
            g = (lambda v, fn=fn, s=s: fn(v, s)) if pos == 0 else (lambda v, fn=fn, s=s: fn(s, v))
            if err is not None:
                with pytest.raises(err):
                    fg.make_jaxpr(g)(x)
                continue
            text = str(fg.make_jaxpr(g)(x))
            if general:
                assert text == staged[fn, s, pos], (fn.__name__, s, pos)
                continue
            staged[fn, s, pos] = text
            with np.errstate(all="ignore"):
                got = fg.jit(g)(x)
            assert got.dtype == want.dtype, (fn.__name__, dtype, s, pos)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, err_msg=f"{fn.__name__} {s}")


def test_weak_traced_scalar_with_python_scalar_stays_weak():
    # a jit argument 1.5 is a weakly typed f64 tracer: (x * 2) + float32 array stays float32
    f = fg.jit(lambda s, a: (s * 2) + a)
    out = f(1.5, np.ones(3, np.float32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.full(3, 4.0, np.float32))


def test_int_scalar_out_of_range_raises_like_numpy():
    x = np.arange(3, dtype=np.int8)
    with pytest.raises(OverflowError):
        np.add(x, 300)
    with pytest.raises(OverflowError):
        fg.jit(lambda v: v + 300)(x)


def test_scalar_plan_is_keyed_by_the_rule():
    # one aval and scalar type under the three promotion rules: int keeps int for add,
    # becomes float64 for true_divide (inexact) and sin-like float loops
    x = np.arange(3, dtype=np.int16)
    jp = fg.make_jaxpr(lambda v: (fnp.add(v, 2), fnp.true_divide(v, 2), fnp.arctan2(v, 2)))(x)
    assert [o.aval.dtype for o in jp.jaxpr.outvars] == [np.int16, np.float64, np.float32]
    assert [o.dtype for o in (np.add(x, 2), np.true_divide(x, 2), np.arctan2(x, 2))] == [np.int16, np.float64,
                                                                                        np.float32]


def test_one_broadcast_per_scalar_constant_in_a_loop():
    def f(y):
        for _ in range(4):
            y = y * 0.5 + 1.0
        return y

    names = [e.primitive.name for e in fg.make_jaxpr(f)(np.ones(3)).jaxpr.eqns]
    assert names.count("broadcast_in_dim") == 2
    assert names.count("mul") == 4 and names.count("add") == 4
    np.testing.assert_array_equal(fg.jit(f)(np.ones(3)), f(np.ones(3)))


def _user(x):
    a = x * 0.5  # line +1
    return fnp.sin(a) - 1.0  # line +2


def test_source_lines_stable_across_traces():
    first = inspect.getsourcelines(_user)[1]
    for _ in range(3):  # the second and third traces walk the cached internal-code table
        eqns = fg.make_jaxpr(_user)(np.ones(2)).jaxpr.eqns
        assert [(e.source_info.lineno - first, e.source_info.filename) for e in eqns] == \
            [(1, __file__)] * 2 + [(2, __file__)] * 3
        assert all(e.source_info.name == "_user" for e in eqns)


def test_trace_errors_still_name_the_users_line():
    def bad(x):
        return fnp.add(x, np.ones(4))  # the shapes disagree

    with pytest.raises(ValueError, match=r"add: .*\(3,\) \(4,\)"):
        fg.jit(bad)(np.ones(3))


def test_scalar_plans_bounded():
    assert len(_util._scalar_plans) <= 4097
