"""Complex scalars in compiled code: emitters for complex operands (``COMPLEX_EMITTERS``)
and the lower rules of ``real``/``imag``/``conj``/``complex`` (``core/prims/complex.py``).

A complex register is the aggregate ``{ double, double }`` (``builder.py``); emitters take
it apart with ``b.parts`` and build results with ``b.pack``. Arithmetic uses NumPy's
formulas in the same order with strict IEEE operations (FMAs exactly where NumPy's loops
have them), so add/sub/mul/neg/conj agree bitwise with NumPy.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.prims import complex as cx
from funcgrad.core.prims import elementwise as ew
from funcgrad.lowering.builder import Value, const, part_dtype
from funcgrad.lowering.context import COMPLEX_LOWERED
from funcgrad.lowering.elementwise import COMPLEX_EMITTERS, convert, elementwise, intrinsic, select_cases


def complex_emitter(*prims):
    """Register ``emit(b, *scalars, **params)`` for complex operands of ``prims``."""

    def register(emit):
        for p in prims:
            COMPLEX_EMITTERS[p] = emit
            COMPLEX_LOWERED.add(p)
        return emit

    return register


def fop(b, opcode: str, x: Value, y: Value) -> Value:
    return b.op(opcode, x, y)


def fneg(b, x: Value) -> Value:
    return Value(b.emit(f"fneg {x.ty} {x.ref}"), x.dtype)


def cpack(b, re: Value, im: Value) -> Value:
    return b.pack(re, im)


# --- arithmetic (NumPy's loops: the same operations in the same order) ---------------
@complex_emitter(ew.add_p)
def cadd(b, x, y):
    (a, c), (d, e) = b.parts(x), b.parts(y)
    return b.pack(fop(b, "fadd", a, d), fop(b, "fadd", c, e))


@complex_emitter(ew.sub_p)
def csub(b, x, y):
    (a, c), (d, e) = b.parts(x), b.parts(y)
    return b.pack(fop(b, "fsub", a, d), fop(b, "fsub", c, e))


@complex_emitter(ew.mul_p)
def cmul(b, x, y):
    """(a + ic)(d + ie) = (ad - ce) + i(ae + cd) as NumPy's loop computes it (measured:
    fma(a, d, -(c e)) and fma(a, e, c d), bitwise), inf/nan as NumPy."""
    (a, c), (d, e) = b.parts(x), b.parts(y)
    re = intrinsic("fma", a, d, fneg(b, fop(b, "fmul", c, e)), b=b)
    im = intrinsic("fma", a, e, fop(b, "fmul", c, d), b=b)
    return b.pack(re, im)


def complex_combine(b, opcode: str, acc: Value, x: Value, flags: str = "") -> Value:
    """A reduction or scatter step: ``fadd`` (componentwise, ``flags`` such as ``reassoc``
    let LLVM vectorise a sum) or ``fmul`` (the complex product, strict)."""
    (a, c), (d, e) = b.parts(acc), b.parts(x)
    if opcode == "fmul":  # NumPy's reduce/accumulate loop: no FMA (measured, bitwise)
        re = fop(b, "fsub", fop(b, "fmul", a, d), fop(b, "fmul", c, e))
        return b.pack(re, fop(b, "fadd", fop(b, "fmul", a, e), fop(b, "fmul", c, d)))
    return b.pack(b.op("fadd", a, d, flags=flags), b.op("fadd", c, e, flags=flags))


@complex_emitter(ew.neg_p)
def cneg(b, x):
    re, im = b.parts(x)
    return b.pack(fneg(b, re), fneg(b, im))


@complex_emitter(cx.conj_p)
def cconj(b, x):
    re, im = b.parts(x)
    return b.pack(re, fneg(b, im))


@complex_emitter(ew.stop_gradient_p)
def _identity(b, x):
    return x


complex_emitter(ew.select_n_p)(select_cases)  # (select works on aggregates)


# --- comparisons -------------------------------------------------------------------------
@complex_emitter(ew.eq_p)
def ceq(b, x, y):
    (a, c), (d, e) = b.parts(x), b.parts(y)
    return b.op("and", b.cmp("fcmp", "oeq", a, d), b.cmp("fcmp", "oeq", c, e))


@complex_emitter(ew.ne_p)
def cne(b, x, y):
    (a, c), (d, e) = b.parts(x), b.parts(y)
    return b.op("or", b.cmp("fcmp", "une", a, d), b.cmp("fcmp", "une", c, e))


# --- casts -----------------------------------------------------------------------------------
def to_complex(b, x: Value, dtype) -> Value:
    """A real (any kind) or complex ``x`` as complex ``dtype``."""
    dtype, p = np.dtype(dtype), part_dtype(dtype)
    if x.dtype.kind == "c":
        if x.dtype == dtype:
            return x
        re, im = b.parts(x)
        return b.pack(convert(b, re, p), convert(b, im, p))
    return b.pack(convert(b, x, p), const(p, 0.0))


@complex_emitter(ew.convert_element_type_p)
def cconvert(b, x, *, new_dtype, weak_type=False):
    new = np.dtype(new_dtype)
    if new.kind == "c":
        return to_complex(b, x, new)
    return convert(b, b.parts(x)[0], new)  # complex -> real keeps the real part (JAX, eager)


# --- real / imag / conj / complex: their own primitives ---------------------------------
elementwise(cx.real_p, lambda b, x: b.parts(x)[0], cheap=True)
elementwise(cx.imag_p, lambda b, x: b.parts(x)[1], cheap=True)
elementwise(cx.conj_p, cconj, cheap=True)
elementwise(cx.complex_p, cpack, cheap=True)
COMPLEX_EMITTERS[cx.real_p] = lambda b, x: b.parts(x)[0]
COMPLEX_EMITTERS[cx.imag_p] = lambda b, x: b.parts(x)[1]
COMPLEX_EMITTERS[cx.complex_p] = cpack
COMPLEX_LOWERED.update([cx.real_p, cx.imag_p, cx.complex_p])

__all__ = ["complex_emitter", "cadd", "csub", "cmul", "cneg", "cconj", "ceq", "cne", "to_complex"]
