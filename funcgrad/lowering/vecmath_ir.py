"""The IR emitter of the vector-math bodies (``vecmath``, ``vecmath_f32``, ``special``).

``_Fn`` writes SSA text for one function body on W lanes of float64 or float32:
strict IEEE arithmetic, FMA and other LLVM intrinsics, compares and ``select``s, bit
casts to and from the same-width integers, and the polynomial schemes (Horner,
Estrin) the math functions share.
"""
from __future__ import annotations

import struct

import numpy as np

__all__ = ["Fn", "double_bits", "float_bits", "hex_const"]


def hex_const(v) -> str:
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(v)))[0]


def double_bits(v: float) -> int:
    return struct.unpack("<q", struct.pack("<d", float(v)))[0]


def float_bits(v: float) -> int:
    return struct.unpack("<i", struct.pack("<f", float(v)))[0]


class Fn:
    """Emits the SSA body of one float64 (``elem="float"``: float32) helper on ``lanes``
    lanes (1: scalars, n > 1: ``<n x double>``); values are text refs, Python numbers
    are constants (rounded to the element type). ``I`` is the integer type of the same
    width (i64 / i32), ``BIAS`` and ``MANT`` the exponent bias and mantissa bits."""

    def __init__(self, module, lanes: int = 1, elem: str = "double"):
        self.module = module
        self.lines: list[str] = []
        self.n = 0
        self.lanes = lanes
        self.elem = elem
        single = elem == "float"
        self.ity, self.BIAS, self.MANT = ("i32", 127, 23) if single else ("i64", 1023, 52)
        vec = (lambda t: f"<{lanes} x {t}>") if lanes > 1 else (lambda t: t)
        self.F, self.I, self.B = vec(elem), vec(self.ity), vec("i1")
        base = "f32" if single else "f64"
        self.sfx = f"v{lanes}{base}" if lanes > 1 else base
        self._const = (lambda v: hex_const(np.float32(v))) if single else hex_const

    def _t(self, rhs: str) -> str:
        self.n += 1
        name = f"%t{self.n}"
        self.lines.append(f"  {name} = {rhs}")
        return name

    def d(self, a) -> str:
        if not isinstance(a, (int, float)):
            return a
        c = self._const(a)
        return c if self.lanes == 1 else f"splat ({self.elem} {c})"

    def ic(self, a) -> str:
        if not isinstance(a, int):
            return a
        return str(a) if self.lanes == 1 else f"splat ({self.ity} {a})"

    def _intr(self, name: str, *args) -> str:
        full = f"llvm.{name}.{self.sfx}"
        self.module.declare(full, f"declare {self.F} @{full}({', '.join([self.F] * len(args))})")
        arglist = ", ".join(f"{self.F} {self.d(a)}" for a in args)
        return self._t(f"call {self.F} @{full}({arglist})")

    # float arithmetic (strict IEEE)
    def add(self, a, b):
        return self._t(f"fadd {self.F} {self.d(a)}, {self.d(b)}")

    def sub(self, a, b):
        return self._t(f"fsub {self.F} {self.d(a)}, {self.d(b)}")

    def mul(self, a, b):
        return self._t(f"fmul {self.F} {self.d(a)}, {self.d(b)}")

    def div(self, a, b):
        return self._t(f"fdiv {self.F} {self.d(a)}, {self.d(b)}")

    def neg(self, a):
        return self._t(f"fneg {self.F} {self.d(a)}")

    def fma(self, a, b, c):
        return self._intr("fma", a, b, c)

    def abs(self, a):
        return self._intr("fabs", a)

    def copysign(self, a, b):
        return self._intr("copysign", a, b)

    def cmp(self, pred: str, a, b) -> str:
        return self._t(f"fcmp {pred} {self.F} {self.d(a)}, {self.d(b)}")

    def sel(self, c: str, a, b):
        return self._t(f"select {self.B} {c}, {self.F} {self.d(a)}, {self.F} {self.d(b)}")

    def and1(self, a: str, b: str) -> str:
        return self._t(f"and {self.B} {a}, {b}")

    # integer / bit manipulation
    def bits(self, a) -> str:
        return self._t(f"bitcast {self.F} {self.d(a)} to {self.I}")

    def fbits(self, i) -> str:
        return self._t(f"bitcast {self.I} {i} to {self.F}")

    def i(self, op: str, a, b) -> str:
        return self._t(f"{op} {self.I} {self.ic(a)}, {self.ic(b)}")

    def isel(self, c: str, a, b) -> str:
        return self._t(f"select {self.B} {c}, {self.I} {self.ic(a)}, {self.I} {self.ic(b)}")

    def odd(self, i) -> str:
        return self._t(f"trunc {self.I} {i} to {self.B}")

    def sitofp(self, i) -> str:
        return self._t(f"sitofp {self.I} {i} to {self.F}")

    # helpers
    def horner(self, x, coeffs):
        """coeffs[0] + x*(coeffs[1] + x*(...)) with FMAs."""
        acc = self.d(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    def estrin(self, x, coeffs, x2=None):
        """The same polynomial as ``horner`` by Estrin's scheme: pairs ``c0 + c1 x``
        combined with x^2, x^4, ...; a dependency chain of ~log2(n) FMAs instead of n,
        so the out-of-order core overlaps the work of neighbouring vectors."""
        terms = [self.fma(coeffs[i + 1], x, coeffs[i]) if i + 1 < len(coeffs) else self.d(coeffs[i])
                 for i in range(0, len(coeffs), 2)]
        p = x2 if x2 is not None else self.mul(x, x)
        while len(terms) > 1:
            terms = [self.fma(terms[i + 1], p, terms[i]) if i + 1 < len(terms) else terms[i]
                     for i in range(0, len(terms), 2)]
            if len(terms) > 1:
                p = self.mul(p, p)
        return terms[0]

    def pow2(self, k) -> str:
        """2.0**k for an integer k (``I``) in the normal exponent range."""
        return self.fbits(self.i("shl", self.i("add", k, self.BIAS), self.MANT))

    def round_magic(self, x, scale):
        """(k as float, k as integer) with k = round(x * scale), for |x * scale| <
        2^(MANT-1): adding 1.5 * 2^MANT leaves k in the low bits."""
        magic = 1.5 * 2.0 ** self.MANT
        t = self.fma(x, scale, magic)
        kf = self.sub(t, magic)
        mbits = float_bits(magic) if self.elem == "float" else double_bits(magic)
        k = self.i("sub", self.bits(t), mbits)
        return kf, k

    def clamp(self, x, lo: float, hi: float):
        """Clamp with ordered compares: NaN passes through."""
        x = self.sel(self.cmp("olt", x, lo), lo, x)
        return self.sel(self.cmp("ogt", x, hi), hi, x)
