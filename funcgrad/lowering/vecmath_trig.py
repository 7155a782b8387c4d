"""sin, cos and tan of the vector-math library (``vecmath``), and the one library that
serves both sin and cos.

Reduction: arguments up to 2^30 are reduced with a three-part pi/2 (159 bits) in
double-double arithmetic (error ~2^-130 relative to the reduced argument, enough for
the doubles closest to multiples of pi/2); lanes with larger arguments (and +-inf) are
sent to the C library's exact reduction by a masked lane loop that returns at once when
no lane needs it. Both kernels are evaluated on the reduced argument; the quadrant picks
one and its sign (cos x = sin(x + pi/2): cos adds 1 to the quadrant).

One library for sin and cos (issue #17): sin and cos are the same code but for the
quadrant offset, the tiny-x select (sin x == x below 2^-26: keeps -0 and subnormals) and
the C function of the cold path. Compiled apart they cost two libraries' LLVM time, and
the gradient of a function using sin paid the cos library inside its first call
(~4.5 ms). So one vector body ``@fg_vm_sincos_f64_v<W>(x, offset)`` takes the offset as
a run-time ``<W x i64>`` (0 for sin, 1 for cos), selects x for tiny lanes only where the
offset is 0 and calls the C library's sin or cos per lane by it; it is ``noinline`` so the
optimised build keeps one copy, and the exported entries ``fg_vm_sin_*``/``fg_vm_cos_*``
(the names and signatures the loop vectoriser's ``vector-function-abi-variant``
attributes and the disk cache refer to) are thin calls of it with a constant offset. The
operations are those of the two separate bodies, in the same order, so the bits are too
(``tests/test_vecmath_sincos.py`` compares against a frozen copy of the old generator).

The polynomials are Taylor series (``1/n!``) truncated where the first omitted term is
below ~2^-60 relative on the reduced interval.
"""
from __future__ import annotations

import math
from fractions import Fraction

from funcgrad.lowering.builder import ModuleBuilder
from funcgrad.lowering.vecmath_ir import Fn, Pool

__all__ = ["SINCOS", "TRIG_HUGE", "library_text", "sincos", "tan"]

SINCOS = ("sin", "cos")  # the functions of the one library, by their quadrant offset
TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")
PIO2_1 = float.fromhex("0x1.921fb54442d18p+0")  # pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (+ 5.6e-50)
PIO2_2 = float.fromhex("0x1.1a62633145c07p-54")
PIO2_3 = float.fromhex("-0x1.f1976b7ed8fbcp-110")
TRIG_HUGE = 2.0 ** 30  # larger |x| go to the C library
# sin r = r + r * z * SIN_S(z), z = r^2, |r| <= pi/4: -1/3!, +1/5!, ..., +1/17!
SIN_S = [float(Fraction((-1) ** n, math.factorial(2 * n + 1))) for n in range(1, 9)]
# cos r = 1 - z/2 + z^2 * COS_C(z): 1/4!, -1/6!, ..., 1/18!
COS_C = [float(Fraction((-1) ** n, math.factorial(2 * n))) for n in range(2, 10)]
_ATTRS = "nounwind willreturn memory(none)"
_DEF_ATTRS = "nounwind willreturn memory(read)"  # (the body reads its constant pool)


def _trig_reduce(f: Fn, x):
    """x = j pi/2 + (rh + rl), |rh| <= ~pi/4, double-double exact to ~2^-130 relative
    for |x| <= 2^30; returns (rh, rl, j as i64)."""
    jf, j = f.round_magic(x, TWO_OVER_PI)
    a = f.fma(jf, -PIO2_1, x)  # exact
    p = f.mul(jf, PIO2_2)
    pe = f.fma(jf, PIO2_2, f.neg(p))  # jf*PIO2_2 = p + pe exactly
    s = f.sub(a, p)  # TwoSum(a, -p) = s + e
    bb = f.sub(s, a)
    e = f.add(f.sub(a, f.sub(s, bb)), f.sub(f.neg(p), bb))
    lo = f.fma(jf, -PIO2_3, f.sub(e, pe))
    rh = f.add(s, lo)
    rl = f.add(f.sub(s, rh), lo)
    return rh, rl, j


def _sin_kernel(f: Fn, rh, rl, z):
    """sin(rh + rl), z = rh^2."""
    ps = f.mul(z, f.estrin(z, SIN_S))
    corr = f.fma(f.mul(z, rl), -0.5, rl)  # rl * cos(rh) ~ rl (1 - z/2)
    return f.add(rh, f.fma(rh, ps, corr))


def _cos_kernel(f: Fn, rh, rl, z):
    """cos(rh + rl), z = rh^2 (rounded); 1 - z/2 is compensated."""
    ze = f.fma(rh, rh, f.neg(z))  # rh^2 = z + ze exactly
    hz = f.mul(z, 0.5)
    w = f.sub(1.0, hz)
    comp = f.sub(f.sub(1.0, w), hz)  # exact: (1 - hz) - w
    tail = f.sub(comp, f.fma(ze, 0.5, f.mul(rh, rl)))
    z2 = f.mul(z, z)
    poly = f.mul(z2, f.estrin(z, COS_C, z2))
    return f.add(w, f.add(tail, poly))


def sincos(f: Fn, x, offset):
    """sin x (``offset`` 0) or cos x (1) for |x| <= 2^30; ``offset`` may also be a
    run-time ``I`` vector of 0s and 1s (the joint library's body)."""
    rh, rl, j = _trig_reduce(f, x)
    z = f.mul(rh, rh)
    s = _sin_kernel(f, rh, rl, z)
    c = _cos_kernel(f, rh, rl, z)
    q = j if offset == 0 else f.i("add", j, offset)  # cos x = sin(x + pi/2)
    v = f.sel(f.odd(q), c, s)
    sign = f.i("shl", f.i("and", q, 2), 62)  # quadrants 2, 3: negate
    r = f.fbits(f.i("xor", f.bits(v), sign))
    if offset == 1:
        return r
    tiny = f.cmp("olt", f.abs(x), 2.0 ** -26)  # sin x == x: keeps -0, subnormals
    if offset != 0:  # (only where the offset is 0: sin)
        tiny = f.and1(tiny, f._t(f"icmp eq {f.I} {offset}, zeroinitializer"))
    return f.sel(tiny, x, r)


def tan(f: Fn, x):
    rh, rl, j = _trig_reduce(f, x)
    z = f.mul(rh, rh)
    s = _sin_kernel(f, rh, rl, z)
    c = _cos_kernel(f, rh, rl, z)
    odd = f.odd(j)  # tan(r + pi/2) = -cos r / sin r
    num, den = f.sel(odd, f.neg(c), s), f.sel(odd, s, c)
    inv = f.div(1.0, den)
    t0 = f.mul(num, inv)
    r = f.fma(f.fma(f.neg(t0), den, num), inv, t0)  # one Newton correction: ~0.5 ulp quotient
    return f.sel(f.cmp("olt", f.abs(x), 2.0 ** -27), x, r)  # tan x == x: keeps -0, subnormals


# --- the joint library ------------------------------------------------------------------------
def _c_library_lanes(module, w: int) -> str:
    """``@fg_vm_sincos_slow_v<w>(x, mask, fast, offset)``: ``fast`` with the masked lanes
    replaced by the C library's sin (offset 0) or cos (an early exit when none is masked).
    A loop over the lanes through memory, not ``vecmath_ir.c_library_lanes``'s unrolled
    lane blocks, and ``optnone`` (no IR passes, fast instruction selection even in the
    optimised build): the unrolled blocks were a third of the library's quick compile
    time (1.2 of 3.4 ms) and the optimised build spent ~2.5 ms on this path, which only
    |x| > 2^30 (and +-inf) take, where the C library's reduction dominates anyway."""
    name = f"fg_vm_sincos_slow_v{w}"
    for c in SINCOS:
        module.declare(c, f"declare double @{c}(double) #1")

    def make():
        vt, mt, it = f"<{w} x double>", f"<{w} x i1>", f"<{w} x i64>"
        red = f"llvm.vector.reduce.or.v{w}i1"
        module.declare(red, f"declare i1 @{red}({mt})")
        return "\n".join([
            f"define internal {vt} @{name}({vt} %x, {mt} %m, {vt} %fast, {it} %off) noinline optnone {_ATTRS} {{",
            "entry:", f"  %any = call i1 @{red}({mt} %m)", "  br i1 %any, label %work, label %none",
            "none:", f"  ret {vt} %fast",
            "work:", f"  %xs = alloca {vt}, align 64", f"  %ys = alloca {vt}, align 64",
            f"  %os = alloca {it}, align 64", f"  %ms = alloca <{w} x i8>, align 64",
            f"  store {vt} %x, ptr %xs", f"  store {vt} %fast, ptr %ys", f"  store {it} %off, ptr %os",
            f"  %m8 = zext {mt} %m to <{w} x i8>", f"  store <{w} x i8> %m8, ptr %ms", "  br label %loop",
            "loop:", "  %i = phi i64 [0, %work], [%i1, %next]",
            "  %pm = getelementptr i8, ptr %ms, i64 %i", "  %mi = load i8, ptr %pm",
            "  %set = icmp ne i8 %mi, 0", "  br i1 %set, label %call, label %next",
            "call:", "  %po = getelementptr i64, ptr %os, i64 %i", "  %o = load i64, ptr %po",
            "  %c = icmp eq i64 %o, 0", "  %fn = select i1 %c, ptr @sin, ptr @cos",
            "  %px = getelementptr double, ptr %xs, i64 %i", "  %e = load double, ptr %px",
            "  %s = call double %fn(double %e) #1",
            "  %py = getelementptr double, ptr %ys, i64 %i", "  store double %s, ptr %py", "  br label %next",
            "next:", "  %i1 = add i64 %i, 1", f"  %more = icmp ult i64 %i1, {w}",
            "  br i1 %more, label %loop, label %done",
            "done:", f"  %r = load {vt}, ptr %ys", f"  ret {vt} %r", "}"])

    return module.helper(name, make)


def _body(module, w: int) -> str:
    """``@fg_vm_sincos_f64_v<w>(x, offset)``: sin (offset 0) or cos (1) on w float64 lanes."""
    pool = Pool(f"fg_vm_k_sincos_f64_v{w}")
    f = Fn(module, w, pool=pool)
    r = sincos(f, "%x0", "%off")
    big = f.cmp("ogt", f.abs("%x0"), TRIG_HUGE)
    slow = _c_library_lanes(module, w)
    f.ret_unless(big, r, lambda: f._t(f"call {f.F} {slow}({f.F} %x0, {f.B} {big}, {f.F} {r}, {f.I} %off)"))
    module.helper(pool.name, pool.text)
    vt = f"<{w} x double>"
    return (f"define internal {vt} @fg_vm_sincos_f64_v{w}({vt} %x0, <{w} x i64> %off) noinline {_DEF_ATTRS} "
            "{\nentry:\n" + "\n".join(f.lines) + "\n}")


def _entry(sym: str, ty: str, n: int, w: int, body: str, offset: int) -> str:
    """The exported ``sym`` on ``n`` lanes of ``ty`` (1: the scalar entry): its lanes as
    float64 vectors of ``w``, one body call per vector (float32: widened and narrowed)."""
    vt, ot = f"<{w} x double>", f"<{w} x i64>"
    off = "zeroinitializer" if offset == 0 else "<" + ", ".join([f"i64 {offset}"] * w) + ">"
    at = f"<{n} x {ty}>" if n > 1 else ty
    dt = f"<{n} x double>" if n > 1 else "double"
    lines = [f"  %d = fpext {at} %x to {dt}"] if ty == "float" else []
    d = "%d" if ty == "float" else "%x"
    if n == 1:
        lines += [f"  %s.i = insertelement {vt} poison, double {d}, i64 0",
                  f"  %s = shufflevector {vt} %s.i, {vt} poison, <{w} x i32> zeroinitializer",
                  f"  %v = call {vt} {body}({vt} %s, {ot} {off})", f"  %r = extractelement {vt} %v, i64 0"]
    elif n == w:
        lines += [f"  %r = tail call {vt} {body}({vt} {d}, {ot} {off})"]
    else:  # n == 2w: two calls
        for h, lo in (("a", 0), ("b", w)):
            idx = ", ".join(f"i32 {i}" for i in range(lo, lo + w))
            lines += [f"  %{h}.x = shufflevector {dt} {d}, {dt} poison, <{w} x i32> <{idx}>",
                      f"  %{h} = call {vt} {body}({vt} %{h}.x, {ot} {off})"]
        idx = ", ".join(f"i32 {i}" for i in range(n))
        lines += [f"  %r = shufflevector {vt} %a, {vt} %b, <{n} x i32> <{idx}>"]
    ret = "%r"
    if ty == "float":
        lines.append(f"  %t = fptrunc {dt} %r to {at}")
        ret = "%t"
    return (f"define {at} @fg_main_{sym}({at} %x) noinline {_DEF_ATTRS} {{\nentry:\n"
            + "\n".join(lines) + f"\n  ret {at} {ret}\n}}")


def library_text(exports: dict, float32: bool, w: int) -> str:
    """The IR of the joint sin/cos library: the body on ``w`` float64 lanes and, for each
    of ``exports`` ({"sin": (scalar entry, vector variant, its width), "cos": ...}), its
    two entries exported as ``@fg_main_<symbol>``."""
    mb = ModuleBuilder()
    body = mb.helper(f"fg_vm_sincos_f64_v{w}", lambda: _body(mb, w))
    ty = "float" if float32 else "double"
    for name, (base, vec, vw) in exports.items():
        offset = SINCOS.index(name)
        mb.functions += [_entry(base, ty, 1, w, body, offset), _entry(vec, ty, vw, w, body, offset)]
    return mb.text()
