"""Per-element emitters for ``core/prims/bits.py``: shifts with XLA's overshift rule,
``llvm.ctpop`` and ``bitcast``.

LLVM's ``shl``/``lshr``/``ashr`` give poison for an amount >= the bit width, so each
shift computes with a safe amount and selects the defined result (0 or the sign fill).
"""
from __future__ import annotations

from funcgrad.core.prims import bits
from funcgrad.lowering.builder import Value, const
from funcgrad.lowering.elementwise import elementwise


def _shift(opcode: str, overshift):
    """``x opcode y`` with ``overshift(b, x)`` where ``y`` (unsigned) >= the width."""

    def emit(b, x, y):
        width = const(y.dtype, 8 * x.dtype.itemsize)
        ok = b.cmp("icmp", "ult", y, width)
        amt = b.select(ok, y, const(y.dtype, 0))
        return b.select(ok, b.op(opcode, x, amt), overshift(b, x))

    return emit


def _sign_fill(b, x):
    return b.op("ashr", x, const(x.dtype, 8 * x.dtype.itemsize - 1))


def _zero(b, x):
    return const(x.dtype, 0)


def _population_count(b, x):
    name = f"llvm.ctpop.{x.ty}"
    return b.call(name, x.dtype, x, decl=f"declare {x.ty} @{name}({x.ty})")


def _bitcast(b, x, *, new_dtype):
    new = Value(x.ref, new_dtype)
    if new.ty == x.ty:  # int32 <-> uint32: the register type does not change
        return new
    return b.cast("bitcast", x, new_dtype)


elementwise(bits.shift_left_p, _shift("shl", _zero), cheap=True)
elementwise(bits.shift_right_logical_p, _shift("lshr", _zero), cheap=True)
elementwise(bits.shift_right_arithmetic_p, _shift("ashr", _sign_fill), cheap=True)
elementwise(bits.population_count_p, _population_count, cheap=True)
elementwise(bits.bitcast_convert_type_p, _bitcast, cheap=True)
