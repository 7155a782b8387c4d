"""Bit shifts, as NumPy and ``jax.numpy`` spell them (``left_shift``, ``right_shift`` and
the array-API aliases ``bitwise_left_shift``/``bitwise_right_shift``, ``bitwise_invert``).

Operands promote like any binary ufunc (NumPy 2: ``uint32 << 3`` stays uint32). An
amount >= the bit width (or negative) gives 0, or the sign fill for ``right_shift`` of
a negative signed value, as NumPy and JAX do. ``right_shift`` is arithmetic for signed
integers and logical for unsigned ones. Bools shift as int8, as in NumPy
(``np.left_shift(True, True)`` is ``int8(2)``). The other bitwise functions live with
the elementwise ufuncs; ``bitwise_count`` is in ``bitpack.py``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import check_arraylike, promote_args
from funcgrad.numpy_api.elementwise import invert

__all__ = ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "bitwise_invert"]


def _out(x):
    """A NumPy scalar for a 0-d eager result, as NumPy's ufuncs give (the impl uses np.where)."""
    return x[()] if type(x) is np.ndarray and not x.shape else x


def _int_operands(name: str, x1, x2):
    check_arraylike(name, x1, x2)
    x1, x2 = promote_args(name, x1, x2)
    if x1.dtype == dtypes.bool_:  # NumPy's loop for bools is int8's
        return lax.convert_element_type(x1, dtypes.int8), lax.convert_element_type(x2, dtypes.int8)
    if x1.dtype.kind not in "iu":
        raise TypeError(
            f"{name}: operands must be integers, got {x1.dtype.name} (promoted from the arguments; "
            "shifts of floats are undefined)"
        )
    return x1, x2


def left_shift(x1, x2, /):
    """Elementwise ``x1 << x2`` (wrapping); 0 where ``x2`` >= the bit width or < 0.

    >>> fnp.left_shift(fnp.uint32(1), 31)
    Array(2147483648, dtype=uint32)
    """
    x1, x2 = _int_operands("left_shift", x1, x2)
    return _out(lax.shift_left(x1, x2))


def right_shift(x1, x2, /):
    """Elementwise ``x1 >> x2``: arithmetic (sign-filling) for signed ints, logical for
    unsigned ones; an amount >= the bit width or < 0 gives 0 or -1 (the sign fill)."""
    x1, x2 = _int_operands("right_shift", x1, x2)
    shift = lax.shift_right_logical if x1.dtype.kind == "u" else lax.shift_right_arithmetic
    return _out(shift(x1, x2))


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift
bitwise_invert = invert
