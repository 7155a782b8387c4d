"""funcgrad.numpy: the real/complex family -- ``real``, ``imag``, ``conj``/``conjugate``,
``angle``, ``isreal``, ``iscomplex``, ``isrealobj``, ``iscomplexobj``, ``sort_complex``.

On complex dtypes they apply the ``real``/``imag``/``conj``/``complex`` primitives
(``core/prims/complex.py``); on real dtypes ``real`` and ``conj`` are the identity,
``imag`` is zeros and ``angle`` is ``arctan2(0, x)`` (0 or pi), as in NumPy. Derivatives
follow JAX's convention (docs/guide/complex.md).
"""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.trace import Tracer
from funcgrad.numpy_api._util import asarray, check_arraylike, full, promote_args_inexact, shape_of

__all__ = [
    "real", "imag", "conj", "conjugate", "angle", "isreal", "iscomplex", "isrealobj", "iscomplexobj",
    "sort_complex",
]


def _out(x):
    return x[()] if type(x) is np.ndarray and not x.shape else x


def _is_complex(x) -> bool:
    return x.dtype.kind == "c"


def real(val, /):
    """The real part (``val`` itself for real dtypes).

    >>> fnp.real(np.array([1+2j, -3j]))
    Array([ 1., -0.])
    """
    check_arraylike("real", val)
    x = asarray(val, fname="real")
    return _out(lax.real(x) if _is_complex(x) else x)


def imag(val, /):
    """The imaginary part (zeros of ``val``'s shape and dtype for real dtypes).

    >>> fnp.imag(np.array([1+2j, -3j]))
    Array([ 2., -3.])
    """
    check_arraylike("imag", val)
    x = asarray(val, fname="imag")
    return _out(lax.imag(x) if _is_complex(x) else full(shape_of(x), 0, x.dtype))


def conjugate(x, /):
    """Complex conjugate, elementwise (the identity for real dtypes; bools become int8,
    NumPy's loop).

    >>> fnp.conj(np.array([1+2j]))
    Array([1.-2.j])
    """
    check_arraylike("conjugate", x)
    x = asarray(x, fname="conjugate")
    if _is_complex(x):
        return _out(lax.conj(x))
    return _out(lax.convert_element_type(x, dtypes.int8) if x.dtype == dtypes.bool_ else x)


conj = conjugate


def angle(z, deg=False):
    """The argument of ``z`` in the complex plane, ``arctan2(imag(z), real(z))`` in
    [-pi, pi] (degrees with ``deg=True``); for real ``z``: 0 for ``z >= +0``, pi for
    ``z < 0`` or ``z == -0.0``.

    >>> fnp.angle(np.array([1j, -1.0]))
    Array([1.57079633, 3.14159265])
    """
    check_arraylike("angle", z)
    (x,) = promote_args_inexact("angle", z)
    if _is_complex(x):
        out = lax.atan2(lax.imag(x), lax.real(x))
    else:
        out = lax.atan2(full(shape_of(x), 0.0, x.dtype), x)
    if deg:
        out = lax.mul(out, full(shape_of(out), 180.0 / math.pi, out.dtype))
    return _out(out)


def _imag_test(name: str, compare, real_answer: bool, x):
    """``compare(imag(x), 0)`` for complex ``x``; ``real_answer`` everywhere for real ``x``."""
    check_arraylike(name, x)
    x = asarray(x, fname=name)
    if _is_complex(x):
        return _out(compare(lax.imag(x), full(shape_of(x), 0, dtypes.real_dtype(x.dtype))))
    return _out(full(shape_of(x), real_answer, dtypes.bool_))


def isreal(x, /):
    """True where the imaginary part is 0 (everywhere, for real dtypes).

    >>> fnp.isreal(np.array([1.0, 2j]))
    Array([ True, False])
    """
    return _imag_test("isreal", lax.eq, True, x)


def iscomplex(x, /):
    """True where the imaginary part is not 0 (nowhere, for real dtypes).

    >>> fnp.iscomplex(np.array([1.0, 2j]))
    Array([False,  True])
    """
    return _imag_test("iscomplex", lax.ne, False, x)


def iscomplexobj(x):
    """True if ``x`` has a complex dtype (traced values too).

    >>> fnp.iscomplexobj(np.array([1.0]))
    False
    """
    if isinstance(x, Tracer):
        return x.aval.dtype.kind == "c"
    return bool(np.iscomplexobj(x))


def isrealobj(x):
    """True unless ``x`` has a complex dtype.

    >>> fnp.isrealobj(np.array([1.0]))
    True
    """
    return not iscomplexobj(x)


def sort_complex(a):
    """Sort along the last axis by real part, then imaginary part; always complex
    (int8/int16/uint8/uint16 give complex64, other real dtypes complex128, as NumPy).

    >>> fnp.sort_complex(np.array([1+2j, 1-1j, 0j]))
    Array([0.+0.j, 1.-1.j, 1.+2.j])
    """
    from funcgrad.numpy_api.reductions import sort

    check_arraylike("sort_complex", a)
    x = asarray(a, fname="sort_complex")
    if not _is_complex(x):
        target = dtypes.complex64 if x.dtype.kind in "iu" and x.dtype.itemsize <= 2 else dtypes.complex128
        x = lax.convert_element_type(x, target)
    return _out(sort(x, axis=-1))
