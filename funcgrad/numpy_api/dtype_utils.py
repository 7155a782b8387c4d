"""funcgrad.numpy: dtype and shape utilities -- ``result_type``, ``promote_types``,
``can_cast``, ``isdtype``, ``broadcast_shapes``, ``isscalar``, ``iterable``.

``result_type`` applies funcgrad's promotion, which is NumPy 2's with *weak* Python
scalars (``result_type(float32_array, 1.0)`` is float32), to arrays, traced values
(whose weak flag it reads) and dtypes alike; it is the dtype the elementwise functions
give. Under ``funcgrad_promotion="jax"`` it and ``promote_types`` answer by JAX's
lattice. ``finfo`` and ``iinfo`` take arrays and traced values too, and give the array
API's fields as Python numbers. (``dtype`` and ``issubdtype`` are NumPy's own.)
"""
from __future__ import annotations

import numpy as np

from funcgrad import config
from funcgrad.core import dtypes
from funcgrad.core.array import Array
from funcgrad.core.avals import is_python_scalar
from funcgrad.core.trace import Tracer
from funcgrad.numpy_api._util import asarray

__all__ = ["finfo", "iinfo",
           "result_type", "promote_types", "can_cast", "isdtype", "broadcast_shapes", "isscalar", "iterable"]


def _dtype_and_weak(x):
    if isinstance(x, Tracer):
        return x.aval.dtype, x.aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype, False
    if is_python_scalar(x):
        return dtypes.python_scalar_dtype(x), True
    if isinstance(x, (list, tuple)):
        return asarray(x, fname="result_type").dtype, False
    try:
        return np.dtype(x), False
    except TypeError:
        raise TypeError(f"result_type: {x!r} is neither an array, a scalar nor a dtype") from None


def _dtype_arg(fname, x) -> np.dtype:
    if isinstance(x, Tracer):
        return x.aval.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    try:
        return np.dtype(x)
    except TypeError:
        raise TypeError(f"{fname}: expected a dtype or an array, got {x!r}") from None


class _Info:
    """NumPy's ``finfo``/``iinfo`` fields, with the array API's as Python numbers."""

    _fields: tuple = ()

    def __getattr__(self, name):  # the rest of NumPy's fields (nmant, precision, ...)
        return getattr(self._np, name)

    def __repr__(self):
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({fields}, dtype={self.dtype})"


class finfo(_Info):  # noqa: N801 - NumPy's name
    """Machine limits of a floating dtype (or of an array's dtype), as ``numpy.finfo``,
    with ``bits`` an int and ``eps``, ``max``, ``min``, ``smallest_normal``, ``tiny`` and
    ``resolution`` Python floats, as the array API standard asks. For a complex dtype, the
    limits of its real part.

    >>> fnp.finfo(np.float32).eps
    1.1920928955078125e-07
    """

    _fields = ("bits", "eps", "max", "min", "smallest_normal", "resolution")

    def __init__(self, dtype):
        dt = _dtype_arg("finfo", dtype)
        if dt.kind not in "fc":
            raise ValueError(f"finfo: expected a floating or complex dtype, got {dt}")
        self._np = info = np.finfo(dt)
        self.bits, self.dtype = int(info.bits), info.dtype
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.smallest_normal = self.tiny = float(info.smallest_normal)
        self.resolution = float(info.resolution)


class iinfo(_Info):  # noqa: N801 - NumPy's name
    """Machine limits of an integer dtype (or of an array's dtype), as ``numpy.iinfo``,
    with ``bits``, ``max`` and ``min`` Python ints.

    >>> fnp.iinfo(np.uint8).max
    255
    """

    _fields = ("bits", "min", "max")

    def __init__(self, int_type):
        dt = _dtype_arg("iinfo", int_type)
        if dt.kind not in "iu":
            raise ValueError(f"iinfo: expected an integer dtype, got {dt}")
        self._np = info = np.iinfo(dt)
        self.bits, self.dtype = int(info.bits), info.dtype
        self.min, self.max = int(info.min), int(info.max)


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on these arrays, scalars and dtypes (NumPy 2 promotion,
    or JAX's under ``funcgrad_promotion="jax"``; Python scalars and weakly typed traced
    values only raise the kind).

    >>> fnp.result_type(np.float32(1), 2.0), fnp.result_type(np.int32, np.float32)
    (dtype('float32'), dtype('float64'))
    """
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    return dtypes.result_type(*map(_dtype_and_weak, arrays_and_dtypes))[0]


def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` cast to safely (NumPy's table; JAX's
    lattice under ``funcgrad_promotion="jax"``, as ``jax.numpy.promote_types``).

    >>> fnp.promote_types(np.int32, np.uint32)
    dtype('int64')
    """
    a, b = np.dtype(type1), np.dtype(type2)
    if config.JAX_PROMOTION[0]:
        dt = dtypes.jax_join(((a, False), (b, False)))
        if dt is not None:
            return dt
    return np.promote_types(a, b)


def can_cast(from_, to, casting="safe"):
    """Whether ``from_`` (a dtype, an array or a traced value) casts to ``to`` under
    ``casting`` ('no', 'equiv', 'safe', 'same_kind', 'unsafe').

    >>> fnp.can_cast(np.int32, np.float64), fnp.can_cast(np.float64, np.int32)
    (True, False)
    """
    if isinstance(from_, Tracer):
        from_ = from_.aval.dtype
    elif is_python_scalar(from_):
        raise TypeError(
            f"can_cast: Python scalars ({type(from_).__name__}) have no dtype of their own (NumPy 2 "
            "rejects them too); pass a dtype or an array"
        )
    return bool(np.can_cast(from_, to, casting=casting))


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, or one of 'bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric', or
    a tuple of these.

    >>> fnp.isdtype(np.float32, "real floating"), fnp.isdtype(np.int64, ("bool", "integral"))
    (True, True)
    """
    return bool(np.isdtype(np.dtype(dtype), kind))


def broadcast_shapes(*shapes):
    """The shape that arrays of ``shapes`` broadcast to.

    >>> fnp.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        shown = ", ".join(str(s) for s in shapes)
        raise ValueError(f"broadcast_shapes: shapes {shown} cannot be broadcast together") from None


def isscalar(element):
    """Whether ``element`` is a scalar: NumPy's answer for concrete values (Python and
    NumPy scalars, not 0-d NumPy arrays), and True for funcgrad's 0-d values, traced or
    not (a funcgrad 0-d result is a 0-d ``Array``), as ``jax.numpy.isscalar``.

    >>> fnp.isscalar(3.0), fnp.isscalar(np.array([3.0]))
    (True, False)
    """
    if isinstance(element, Tracer):
        return element.aval.ndim == 0
    if type(element) is Array:
        return element.ndim == 0
    return bool(np.isscalar(element))


def iterable(y):
    """Whether ``iter(y)`` works (for traced values: whether they have a leading axis).

    >>> fnp.iterable([1, 2]), fnp.iterable(2.0)
    (True, False)
    """
    if isinstance(y, Tracer):
        return y.aval.ndim > 0
    return bool(np.iterable(y))
