"""funcgrad.numpy: tests on numbers and arrays -- ``isclose``, ``allclose``, ``array_equal``,
``array_equiv``, ``isposinf``, ``isneginf``. (The real/complex family -- ``real``,
``imag``, ``angle``, ``isreal``, ``iscomplex``... -- is ``complex_funcs.py``.)

``allclose``, ``array_equal`` and ``array_equiv`` return a 0-d bool (a ``numpy.bool_``
eagerly, a traced bool under transforms, as in JAX) where NumPy returns a Python bool;
operands whose shapes cannot match give ``False`` without looking at the values.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import asarray, check_arraylike, full, promote_args_inexact, promote_dtypes, shape_of

__all__ = [
    "isclose", "allclose", "array_equal", "array_equiv", "isposinf", "isneginf",
]

_BOOL = dtypes.bool_


def _out(x):
    return x[()] if type(x) is np.ndarray and not x.shape else x


def _all(x):
    """Every element true, as a 0-d bool (True for empty arrays)."""
    x = lax.convert_element_type(x, dtypes.int32)
    if shape_of(x):
        x = lax.reduce_min(x, tuple(range(len(shape_of(x)))))
    return _out(lax.eq(x, np.int32(1)))


def _all_or_empty(x):
    if 0 in shape_of(x):
        return np.True_
    return _all(x)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (not symmetric, as NumPy's); infinities
    are close only to themselves, and nan to nan only with ``equal_nan=True``.

    >>> fnp.isclose(np.array([1e10, 1e-7]), np.array([1.00001e10, 1e-8]))
    Array([ True, False])
    """
    check_arraylike("isclose", a, b, rtol, atol)
    x, y, rtol, atol = promote_args_inexact("isclose", a, b, rtol, atol)
    if x.dtype.kind == "c":  # the tolerances compare with |x - y|: real
        rtol, atol = lax.real(rtol), lax.real(atol)
    diff_ok = lax.le(lax.abs(lax.sub(x, y)), lax.add(atol, lax.mul(rtol, lax.abs(y))))
    out = lax.bitwise_or(lax.bitwise_and(diff_ok, lax.is_finite(y)), lax.eq(x, y))
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(lax.ne(x, x), lax.ne(y, y)))
    return _out(out)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``all(isclose(a, b, rtol, atol, equal_nan))``.

    >>> fnp.allclose(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    Array(True)
    """
    return _all_or_empty(isclose(a, b, rtol, atol, equal_nan))


def _pair(name, a1, a2):
    check_arraylike(name, a1, a2)
    return promote_dtypes(asarray(a1, fname=name), asarray(a2, fname=name))


def array_equal(a1, a2, equal_nan=False):
    """True when ``a1`` and ``a2`` have the same shape and elements (nan equal to nan only
    with ``equal_nan=True``).

    >>> fnp.array_equal(np.array([1, 2]), np.array([1.0, 2.0]))
    Array(True)
    """
    x, y = _pair("array_equal", a1, a2)
    if shape_of(x) != shape_of(y):
        return np.False_
    eq = lax.eq(x, y)
    if equal_nan and x.dtype.kind in "fc":  # (complex: nan in either part, as NumPy's isnan)
        eq = lax.bitwise_or(eq, lax.bitwise_and(lax.ne(x, x), lax.ne(y, y)))
    return _all_or_empty(eq)


def array_equiv(a1, a2):
    """True when ``a1`` and ``a2`` broadcast together and are equal elementwise.

    >>> fnp.array_equiv(np.array([1, 2]), np.array([[1, 2], [1, 2]]))
    Array(True)
    """
    x, y = _pair("array_equiv", a1, a2)
    try:
        shape = tuple(np.broadcast_shapes(shape_of(x), shape_of(y)))
    except ValueError:
        return np.False_
    x, y = (v if shape_of(v) == shape else lax.broadcast_to_rank(v, shape) for v in (x, y))
    return _all_or_empty(lax.eq(x, y))


def _inf_test(name, sign):
    def fn(x, /):
        check_arraylike(name, x)
        x = asarray(x, fname=name)
        if x.dtype.kind == "c":  # NumPy: "would be ambiguous"
            raise TypeError(f"{name}: not supported for complex input (got {x.dtype.name} of shape "
                            f"{shape_of(x)}): which part? test fnp.real(x) or fnp.imag(x)")
        if x.dtype.kind != "f":
            return _out(full(shape_of(x), False, _BOOL))
        return _out(lax.eq(x, full(shape_of(x), sign * np.inf, x.dtype)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"True where ``x`` is {'+' if sign > 0 else '-'}inf (always False for integers and bools)."
    return fn


isposinf = _inf_test("isposinf", 1)
isneginf = _inf_test("isneginf", -1)

