"""Bit-level primitives on integers: shifts, population count, bitcasts (JAX's ``lax``).

Shifts follow XLA/JAX, not C: the shift amount is read as an unsigned number, and an
amount >= the bit width gives 0 (``shift_left``, ``shift_right_logical``) or the sign
fill (``shift_right_arithmetic``: 0 or -1), never undefined behaviour. NumPy's
``left_shift``/``right_shift`` agree. ``bitcast_convert_type`` reinterprets the bits of
a value as another dtype of the same width (uint32 <-> float32, uint64 <-> float64): the
step from random bits to floats. All of them are piecewise constant or integer-valued,
so their tangents are zero. Lowering: ``funcgrad/lowering/bits.py``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.ad_util import defjvp_zero
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import defbatch_elementwise
from funcgrad.core.primitive import Primitive
from funcgrad.core.prims._checks import check_kind
from funcgrad.core.prims.elementwise import INT, binop, unop


def _unsigned(x: np.ndarray) -> np.ndarray:
    """The same bits as the unsigned int of the same width (a view, no copy)."""
    x = np.asarray(x)
    return x if x.dtype.kind == "u" else x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _shift_amount(x: np.ndarray, y: np.ndarray):
    """(amount as unsigned, whether it is below the bit width, the amount made safe)."""
    uy = _unsigned(y)
    ok = uy < 8 * x.dtype.itemsize
    return ok, np.where(ok, uy, 0).astype(uy.dtype)


def _shift_left(x, y):
    x = np.asarray(x)
    ok, amt = _shift_amount(x, y)
    return np.where(ok, np.left_shift(_unsigned(x), amt), 0).astype(_unsigned(x).dtype).view(x.dtype)


def _shift_right_logical(x, y):
    x = np.asarray(x)
    ok, amt = _shift_amount(x, y)
    return np.where(ok, np.right_shift(_unsigned(x), amt), 0).astype(_unsigned(x).dtype).view(x.dtype)


def _shift_right_arithmetic(x, y):
    x = np.asarray(x)
    signed = x if x.dtype.kind == "i" else x.view(np.dtype(f"i{x.dtype.itemsize}"))
    bits = 8 * x.dtype.itemsize
    amt = np.minimum(_unsigned(y), bits - 1).astype(signed.dtype)  # overshift: sign fill
    return np.right_shift(signed, amt).view(x.dtype)


shift_left_p = binop("shift_left", _shift_left, INT)
shift_right_logical_p = binop("shift_right_logical", _shift_right_logical, INT)
shift_right_arithmetic_p = binop("shift_right_arithmetic", _shift_right_arithmetic, INT)
population_count_p = unop("population_count", lambda x: np.bitwise_count(_unsigned(x)).astype(np.asarray(x).dtype), INT)
for _p in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p, population_count_p):
    defjvp_zero(_p)  # integer results carry no tangent


# --- bitcast_convert_type: same bits, another dtype of the same width ---------------------
bitcast_convert_type_p = Primitive("bitcast_convert_type", elementwise=True)


@bitcast_convert_type_p.def_impl
def _bitcast_convert_type_impl(x, *, new_dtype):
    return np.asarray(x).view(new_dtype)


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_convert_type_abstract_eval(x: ShapedArray, *, new_dtype):
    new = dtypes.canonicalize(new_dtype, what="bitcast_convert_type new_dtype")
    check_kind("bitcast_convert_type", x, "iuf")
    if new.kind not in "iuf" or new.itemsize != x.dtype.itemsize:
        raise TypeError(
            f"bitcast_convert_type: operand {x.str_short()} cannot be reinterpreted as {new.name}: "
            f"funcgrad bitcasts between numeric dtypes of the same width only ({x.dtype.itemsize * 8} bits here)"
        )
    return ShapedArray(x.shape, new, False)


defjvp_zero(bitcast_convert_type_p)  # a float result of a bitcast is not a smooth function of its input
defbatch_elementwise(bitcast_convert_type_p)



# --- the lax functions (one primitive each; operands of identical shape and dtype) ---------
def shift_left(x, y):
    """``x << y`` elementwise; 0 where ``y`` (read as unsigned) >= the bit width."""
    return shift_left_p.bind(x, y)


def shift_right_logical(x, y):
    """``x >> y`` filling with zeros; 0 where ``y`` (read as unsigned) >= the bit width."""
    return shift_right_logical_p.bind(x, y)


def shift_right_arithmetic(x, y):
    """``x >> y`` filling with the sign bit; overshifts give 0 or -1 (the sign fill)."""
    return shift_right_arithmetic_p.bind(x, y)


def population_count(x):
    """Number of set bits of each element (of its two's-complement bits), in ``x``'s dtype."""
    return population_count_p.bind(x)


def bitcast_convert_type(operand, new_dtype):
    """The bits of ``operand`` read as ``new_dtype`` (same width, e.g. uint32 -> float32)."""
    new_dtype = dtypes.canonicalize(new_dtype, what="bitcast_convert_type new_dtype")
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


__all__ = [n for n in dir() if n.endswith("_p")] + [
    "shift_left", "shift_right_logical", "shift_right_arithmetic", "population_count", "bitcast_convert_type",
]
