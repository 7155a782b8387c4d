"""A Python scalar through any one-argument function, then combined with a float32, int32
or int8 array: eager, ``make_jaxpr`` and ``jit`` give the same dtypes.

The rule (``ShapedArray``'s docstring, the README's weak-scalar paragraph): a weak value
stands for a Python scalar, and only Python's operators on Python scalars give one; every
function's result is strong, as NumPy's are (``np.repeat(1.5, 2) + f32`` is float64).
The sweep covers every op-table function that takes one argument (``tests/op_rows``),
with an int, a float, a bool and a complex Python scalar.
"""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

from op_rows import all_rows

ARRAYS = [np.ones((), np.float32), np.ones((), np.int32), np.ones((), np.int8)]
SCALARS = [2, 1.5, True, 1.5 + 0.5j]
# Python's own operators on a bool give ints (``-True`` is -1); on a traced Python bool
# they follow NumPy's bool rules (``-`` raises, as JAX's does): not a dtype question.
PY_BOOL_ARITHMETIC = {"where"}


def _functions():
    first = {}
    for r in all_rows():
        if len(r.args) == 1:
            first.setdefault(r.name.split("/")[0], r)
    return sorted(first.items())


FUNCTIONS = _functions()


def _dtypes(outs):
    return [str(np.asarray(o).dtype) for o in outs]


def _leaves(y):
    """The arrays a function returned (rows may return a tuple of several calls' results)."""
    leaves = list(y) if isinstance(y, (tuple, list)) else [y]
    if not all(isinstance(v, (np.ndarray, np.generic)) or hasattr(v, "aval") for v in leaves):
        raise TypeError("not arrays")
    return leaves


def _combined(fun):
    return lambda s: tuple(v + a for v in _leaves(fun(s)) for a in ARRAYS)


def _cases():
    """(name, fun, scalar) for each function that takes the scalar eagerly."""
    out = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, r in FUNCTIONS:
            for s in SCALARS:
                if isinstance(s, bool) and name in PY_BOOL_ARITHMETIC:
                    continue
                try:
                    _combined(r.fun)(s)
                except Exception:  # (the function does not take a scalar, or not this one)
                    continue
                out.append((name, r.fun, s))
    return out


CASES = _cases()


def test_the_sweep_covers_the_functions():
    names = {name for name, _, _ in CASES}
    assert len(CASES) > 700 and len(names) > 200
    assert {"repeat", "where", "ravel", "squeeze", "lax.expand_dims", "lax.square"} <= names


@pytest.mark.parametrize("part", range(4))
def test_eager_staged_and_jit_trace_agree(part):
    bad = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, fun, s in CASES[part::4]:
            g = _combined(fun)
            eager = _dtypes(g(s))
            staged = [str(v.aval.dtype) for v in fg.make_jaxpr(g)(s).jaxpr.outvars]
            traced = [str(o.dtype) for o in fg.eval_shape(fg.jit(g), s)]
            if not eager == staged == traced:
                bad.append(f"{name}({s!r}): eager {eager}, make_jaxpr {staged}, jit {traced}")
    assert not bad, "\n".join(bad)


def test_compiled_dtypes_agree():
    """Compiled calls, for a slice of the sweep (every function above is traced by jit;
    compiling each of the ~800 cases would take half a minute)."""
    chosen = {"repeat", "where", "reshape", "lax.expand_dims", "lax.square", "lax.reciprocal", "asarray"}
    cases = [c for k, c in enumerate(CASES) if c[0] in chosen or k % 16 == 0]
    assert len(cases) > 60
    bad = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, fun, s in cases:
            g = _combined(fun)
            eager, compiled = _dtypes(g(s)), _dtypes(fg.jit(g)(s))
            if eager != compiled:
                bad.append(f"{name}({s!r}): eager {eager}, jit {compiled}")
    assert not bad, "\n".join(bad)


def test_reported_cases():
    b = np.ones(2, np.float32)
    f = lambda s: fnp.repeat(s, 2) + b  # noqa: E731
    assert f(1.5).dtype == fg.jit(f)(1.5).dtype == np.float64
    g = lambda s: fnp.where(s > 1, s, s) + np.int32(3)  # noqa: E731
    assert g(2).dtype == fg.jit(g)(2).dtype == np.int64
    h = lambda s: fnp.asarray(s) + b  # noqa: E731  (an argument returned as it is: strong too)
    assert h(1.5).dtype == fg.jit(h)(1.5).dtype == np.float64


def test_python_operators_keep_the_scalar_weak():
    b = np.ones(2, np.float32)
    for f in (lambda s: (s + 0.5) + b, lambda s: (-s * 2.0) + b, lambda s: (s ** 2) + b, lambda s: abs(s) + b):
        assert f(1.5).dtype == fg.jit(f)(1.5).dtype == np.float32
