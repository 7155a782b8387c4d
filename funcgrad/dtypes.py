"""``jax.dtypes``: dtype queries with funcgrad's promotion rules (NumPy 2's, with weak Python
scalars), ``float0``, the narrow ``bfloat16`` name, and the key dtypes' categories.

>>> import funcgrad as fg
>>> fg.dtypes.result_type(np.float32, 1.0), fg.dtypes.canonicalize_dtype(np.int32)
(dtype('float32'), dtype('int32'))
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes as _dt
from funcgrad.core.dtypes import float0
from funcgrad.errors import TypePromotionError

__all__ = [
    "TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo", "float0", "iinfo", "issubdtype",
    "itemsize_bits", "prng_key", "result_type", "scalar_type_of",
]

bfloat16 = _dt.NARROW_TYPES["bfloat16"]
finfo, iinfo = np.finfo, np.iinfo
_KEY_DTYPE = "key<fry>"  # the dtype funcgrad.random's typed keys report


class extended:  # noqa: N801 - JAX's name
    """The category of dtypes that are not numbers (JAX's extended dtypes): ``funcgrad.random``'s
    typed keys (``issubdtype(key.dtype, extended)``)."""


class prng_key(extended):  # noqa: N801 - JAX's name
    """The category of random-key dtypes (``issubdtype(fg.random.key(0).dtype, prng_key)``)."""


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """``dtype`` as the ``numpy.dtype`` funcgrad computes in (every supported dtype is its own;
    float64 stays float64). An ``UnsupportedDtypeError`` for the others."""
    if allow_extended_dtype and dtype == _KEY_DTYPE:
        return dtype
    return _dt.canonicalize(dtype, what="canonicalize_dtype")


def issubdtype(a, b) -> bool:
    """``numpy.issubdtype``, knowing funcgrad's key dtype (a ``prng_key``, an ``extended``)."""
    if a == _KEY_DTYPE or b in (extended, prng_key):
        return a == _KEY_DTYPE and b in (extended, prng_key, _KEY_DTYPE)
    return bool(np.issubdtype(a, b))


def itemsize_bits(dtype) -> int:
    """The size of one element of ``dtype`` in bits.

    >>> fg.dtypes.itemsize_bits(np.float32)
    32
    """
    return np.dtype(dtype).itemsize * 8


def result_type(*args, return_weak_type_flag=False):
    """The dtype of an operation on ``args`` (arrays, scalars, dtypes) by funcgrad's
    promotion; with ``return_weak_type_flag``, ``(dtype, weak)`` (weak: every argument a
    Python scalar or weakly typed)."""
    from funcgrad.core.avals import is_python_scalar
    from funcgrad.core.trace import Tracer

    if not args:
        raise ValueError("result_type: at least one array or dtype is required")
    sigs = []
    for x in args:
        if is_python_scalar(x) or (type(x) is type and x in (bool, int, float, complex)):  # (dtype("int64") == int)
            sigs.append((_dt.python_scalar_dtype(x() if isinstance(x, type) else x), True))
        elif isinstance(x, Tracer):
            sigs.append((x.aval.dtype, x.aval.weak_type))
        else:
            spec = x if isinstance(x, (type, np.dtype, str)) else getattr(x, "dtype", x)
            sigs.append((_dt.canonicalize(spec, what="result_type argument"), False))
    dtype, weak = _dt.result_type(*sigs)
    return (dtype, weak) if return_weak_type_flag else dtype


def scalar_type_of(x):
    """The Python scalar type of ``x``'s dtype: ``bool``, ``int``, ``float`` or ``complex``.

    >>> fg.dtypes.scalar_type_of(np.float32(1))
    <class 'float'>
    """
    kind = np.dtype(getattr(x, "dtype", None) or type(x)).kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]
