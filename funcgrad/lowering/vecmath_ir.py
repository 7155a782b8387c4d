"""The IR emitter of the vector-math bodies (``vecmath``, ``vecmath_f32``, ``special``).

``_Fn`` writes SSA text for one function body on W lanes of float64 or float32:
strict IEEE arithmetic, FMA and other LLVM intrinsics, compares and ``select``s, bit
casts to and from the same-width integers, and the polynomial schemes (Horner,
Estrin) the math functions share.
"""
from __future__ import annotations

import struct

import numpy as np

__all__ = ["Fn", "Pool", "c_library_lanes", "double_bits", "float_bits", "hex_const"]


def hex_const(v) -> str:
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(v)))[0]


def double_bits(v: float) -> int:
    return struct.unpack("<q", struct.pack("<d", float(v)))[0]


def float_bits(v: float) -> int:
    return struct.unpack("<i", struct.pack("<f", float(v)))[0]


class Pool:
    """The constants of one vector body, kept in a global array instead of LLVM's
    constant pool. The JIT's code model is "large", so every constant-pool load is
    a 10-byte ``movabs`` of its address plus the load: 18 extra instructions per
    call of the table exp (of ~70 per 8 elements, front-end bound). From one array
    the addresses are one base register plus displacements, and the values fold
    into the arithmetic as ``{1to8}`` broadcast operands. The array is a writable,
    externally visible global so LLVM cannot fold the loads back into constants
    (the functions reading it are ``memory(read)``, not ``memory(none)``)."""

    def __init__(self, name: str, word: str = "i64"):
        self.name, self.word = name, word
        self.words: list[int] = []
        self.index: dict = {}

    def scalar(self, bits: int) -> int:
        """The index of the word ``bits`` (added on first use)."""
        if bits not in self.index:
            self.index[bits] = len(self.words)
            self.words.append(bits)
            if self.word == "i32":  # (a gap: LLVM merges loads of neighbouring 32-bit
                self.words += [0, 0, 0]  # words into one 64-bit load plus shuffles)
        return self.index[bits]

    def vector(self, bits: list) -> int:
        """The index of a run of words holding ``bits``, aligned to 64 bytes."""
        key = tuple(bits)
        if key not in self.index:
            per_line = 64 // (8 if self.word == "i64" else 4)
            while len(self.words) % per_line:
                self.words.append(0)
            self.index[key] = len(self.words)
            self.words.extend(bits)
        return self.index[key]

    def text(self) -> str:
        body = ", ".join(f"{self.word} {w}" for w in self.words)
        return f"@{self.name} = global [{len(self.words)} x {self.word}] [{body}], align 64"


class Fn:
    """Emits the SSA body of one float64 (``elem="float"``: float32) helper on ``lanes``
    lanes (1: scalars, n > 1: ``<n x double>``); values are text refs, Python numbers
    are constants (rounded to the element type). ``I`` is the integer type of the same
    width (i64 / i32), ``BIAS`` and ``MANT`` the exponent bias and mantissa bits."""

    def __init__(self, module, lanes: int = 1, elem: str = "double", pool: Pool | None = None):
        self.module = module
        self.pool = pool if lanes > 1 else None  # (a Pool: constants are loaded from it)
        self._loaded: dict = {}
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
        if self.pool is not None:
            return self._pooled(self._bits(a), self.elem)
        c = self._const(a)
        return c if self.lanes == 1 else f"splat ({self.elem} {c})"

    def ic(self, a, pooled: bool = True) -> str:
        if not isinstance(a, int):
            return a
        if self.pool is not None and pooled:
            return self._pooled(a, self.ity)
        return str(a) if self.lanes == 1 else f"splat ({self.ity} {a})"

    def _bits(self, v) -> int:
        """The element's bit pattern of the constant ``v`` (signed)."""
        return float_bits(np.float32(v)) if self.elem == "float" else double_bits(v)

    def _pooled(self, bits: int, ty: str) -> str:
        """A splat of the pool word ``bits`` (read as ``ty``), loaded once per body."""
        wbits = 64 if self.pool.word == "i64" else 32
        bits &= (1 << wbits) - 1
        if bits >= 1 << (wbits - 1):
            bits -= 1 << wbits
        key = (bits, ty)
        if key not in self._loaded:
            at = self.pool.scalar(bits)
            s = self._t(f"load {ty}, ptr getelementptr inbounds ({self.pool.word}, ptr @{self.pool.name}, i64 {at})")
            v = self._t(f"insertelement <{self.lanes} x {ty}> poison, {ty} {s}, i64 0")
            self._loaded[key] = self._t(f"shufflevector <{self.lanes} x {ty}> {v}, <{self.lanes} x {ty}> poison, "
                                        f"<{self.lanes} x i32> zeroinitializer")
        return self._loaded[key]

    def table(self, values: list) -> str:
        """A ``<n x elem>`` of the n ``values`` (from the pool when there is one)."""
        ty = f"<{len(values)} x {self.elem}>"
        if self.pool is None:
            return "<" + ", ".join(f"{self.elem} {self._const(v)}" for v in values) + ">"
        bits = [self._bits(v) for v in values]
        key = ("table", tuple(bits))
        if key not in self._loaded:
            at = self.pool.vector(bits)
            self._loaded[key] = self._t(f"load {ty}, ptr getelementptr inbounds ({self.pool.word}, "
                                        f"ptr @{self.pool.name}, i64 {at}), align 64")
        return self._loaded[key]

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
        if self.pool is not None:  # (the same and, its mask from the pool)
            return self.fbits(self.i("and", self.bits(a), (1 << (63 if self.ity == "i64" else 31)) - 1))
        return self._intr("fabs", a)

    def copysign(self, a, b):
        if self.pool is not None:
            sign = -(1 << (63 if self.ity == "i64" else 31))
            mag = self.i("and", self.bits(a), ~sign)
            return self.fbits(self.i("or", mag, self.i("and", self.bits(b), sign)))
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
        shift = op in ("shl", "ashr", "lshr")  # (immediate shift counts: never from the pool)
        return self._t(f"{op} {self.I} {self.ic(a)}, {self.ic(b, not shift)}")

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

    def ret_unless(self, mask: str, fast, cold) -> None:
        """End the body: return ``fast``, or where any lane of ``mask`` is set, what
        ``cold()`` emits (in a block of its own, expected not taken: one ``kortest``
        and a branch on the fast path)."""
        red = f"llvm.vector.reduce.or.v{self.lanes}i1"
        self.module.declare(red, f"declare i1 @{red}({self.B})")
        self.module.declare("llvm.expect.i1", "declare i1 @llvm.expect.i1(i1, i1)")
        anyb = self._t(f"call i1 @{red}({self.B} {mask})")
        expect = self._t(f"call i1 @llvm.expect.i1(i1 {anyb}, i1 false)")
        self.lines += [f"  br i1 {expect}, label %cold, label %fast", "fast:", f"  ret {self.F} {fast}", "cold:"]
        self.lines.append(f"  ret {self.F} {cold()}")

    def avx512(self, op: str, *args) -> str:
        """``llvm.x86.avx512.<op>.<pd|ps>.512`` on a 512-bit vector (``args``, then
        the all-lanes mask, then for "mask.scalef" the current rounding mode)."""
        pd = self.elem == "double"
        mask = "i8 -1" if pd else "i16 -1"
        full = f"llvm.x86.avx512.{op}.{'pd' if pd else 'ps'}.512"
        extra = [mask] + (["i32 4"] if op.endswith("scalef") else [])
        sig = [self.F] * (len(args) + 1) + [e.split()[0] for e in extra]
        self.module.declare(full, f"declare {self.F} @{full}({', '.join(sig)})")
        arglist = [f"{self.F} {self.d(a)}" for a in args] + [f"{self.F} poison"] + extra
        return self._t(f"call {self.F} @{full}({', '.join(arglist)})")

    def scalef(self, a, b) -> str:
        """a * 2^floor(b) rounded once (``vscalefpd``/``ps``: one instruction for the
        shift-add-shift-multiply of ``pow2``; overflow and gradual underflow as IEEE)."""
        return self.avx512("mask.scalef", a, b)

    def clamp(self, x, lo: float, hi: float):
        """Clamp with ordered compares: NaN passes through."""
        x = self.sel(self.cmp("olt", x, lo), lo, x)
        return self.sel(self.cmp("ogt", x, hi), hi, x)


def c_library_lanes(module, name: str, n: int, attrs: str) -> str:
    """``@fg_vm_<name>_slow_v<n>(x, mask, fast)``: ``fast`` with the masked lanes
    replaced by the C library's ``name`` (an early exit when no lane is masked)."""
    slow = f"fg_vm_{name}_slow_v{n}"
    module.declare(name, f"declare double @{name}(double) #1")

    def make():
        vt, mt = f"<{n} x double>", f"<{n} x i1>"
        module.declare(f"llvm.vector.reduce.or.v{n}i1", f"declare i1 @llvm.vector.reduce.or.v{n}i1({mt})")
        lines = [f"define internal {vt} @{slow}({vt} %x, {mt} %m, {vt} %fast) noinline {attrs} {{", "entry:",
                 f"  %any = call i1 @llvm.vector.reduce.or.v{n}i1({mt} %m)",
                 "  br i1 %any, label %lane0, label %none", "none:", f"  ret {vt} %fast"]
        prev = "%fast"
        for i in range(n):
            incoming = "[%fast, %entry]" if i == 0 else f"[{prev}, %lane{i - 1}], [%w{i - 1}, %call{i - 1}]"
            lines += [f"lane{i}:",
                      f"  %r{i} = phi {vt} " + incoming,
                      f"  %m{i} = extractelement {mt} %m, i32 {i}",
                      f"  br i1 %m{i}, label %call{i}, label %lane{i + 1}",
                      f"call{i}:",
                      f"  %e{i} = extractelement {vt} %x, i32 {i}",
                      f"  %s{i} = call double @{name}(double %e{i}) #1",
                      f"  %w{i} = insertelement {vt} %r{i}, double %s{i}, i32 {i}",
                      f"  br label %lane{i + 1}"]
            prev = f"%r{i}"
        lines += [f"lane{n}:", f"  %res = phi {vt} [{prev}, %lane{n - 1}], [%w{n - 1}, %call{n - 1}]",
                  f"  ret {vt} %res", "}"]
        return "\n".join(lines)

    return module.helper(slow, make)
