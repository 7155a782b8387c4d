"""Vectorisable transcendental functions written in LLVM IR (float64 and float32).

Scalar libm calls (``@exp``, ``@sin``, ...) stop LLVM's loop vectoriser: the backend
splits ``llvm.sin.v4f64`` into four scalar calls. The functions here are plain
arithmetic instead -- range reduction, polynomials evaluated with FMA, ``select`` for
special values and the 1.5*2^52 "magic add" for rounding to an integer (AVX2 has no
packed double -> int64 conversion).

How kernels use them (``call(b, name, *xs)``): each function is compiled once per
process, as a ``<W x double>`` body (W = 8 with AVX-512, 4 with AVX, else 2) in its own module of the
one JIT engine (sin and cos: one module, ``vecmath_trig``), and bound by name. A kernel calls the scalar entry
``@fg_vm_<name>_<f64|f32>`` (a splat of the vector body, used by remainder loops and
0-d code); its declaration carries ``"vector-function-abi-variant"``, so the loop
vectoriser replaces it with one call of ``@fg_vm_<name>_f64_v<W>`` (float32:
``@fg_vm_<name>_f32_v<2W>``, two W-lane float64 calls) per vector of elements.
Compiling the bodies into every kernel instead cost ~5 ms of LLVM time per function
per kernel. float32 runs the float64 algorithm and rounds once (<= 0.5 ulp + 2^-29).

Accuracy (float64, against mpmath over the grids of
tests/test_lowering_vecmath_accuracy.py): exp 0.83 ulp, expm1 0.98, log 0.81, log1p
0.75, sin 0.73, cos 0.71, tan 1.96, tanh 1.29, sinh 1.17, cosh 1.14 (NumPy/glibc:
0.5-1.2). Issue #17 evaluates the polynomials by Estrin's scheme, and exp scales in
one step, sending |x| > 708 to the C library. A 120-bit mpmath check of 6000 points each
then gave exp 0.84, expm1 1.04, log 0.78, sin/cos 0.69 and tanh 1.43 ulp. One thread,
1e5 elements into a reused output: exp 1.23 -> 1.06 ns/element, tanh 2.20 -> 1.93, log
1.44 -> 1.5 (NumPy's AVX2 loops: 0.52, 1.13, 0.72; its sin: 11.7, ours 1.15).
Part V of #17 (an AVX-512 host): 8-lane bodies, float64 exp/log from 16-entry tables
(``vecmath_avx512``), tanh from 16 interval polynomials (``vecmath_tanh64``): 0.54 /
0.61 / 0.98 ulp against 40-digit decimals; float32 exp/log/tanh in float32
(``vecmath_f32``). Constants come from one global array per body (``vecmath_ir.Pool``),
specials leave the fast paths by one mask test and a cold branch per vector (``_body``);
ns/element in bench/vecmath_bench.py.

Special values follow C99 Annex F / NumPy: exp overflow to inf and gradual underflow
to subnormals and 0, log(0) = -inf, log(<0) = nan, sin/cos(+-inf) = nan, tanh
saturates to +-1, +-0 are preserved.

sin/cos/tan (``vecmath_trig``): arguments up to 2^30 are reduced in double-double
arithmetic, larger ones (and +-inf) go to the C library; sin and cos are one library
(one body taking the quadrant offset at run time), compiled and bound together.

The polynomials are Taylor series (``1/n!``, ``2/(2n+1)``) truncated where the first
omitted term is below ~2^-60 relative on the reduced interval; nothing here is taken
from another library's source.
"""
from __future__ import annotations

import math
import os
import re
import threading
from fractions import Fraction

import numpy as np

from funcgrad.lowering import engine, vecmath_avx512, vecmath_f32, vecmath_tanh64, vecmath_trig
from funcgrad.lowering.builder import F32, F64, ModuleBuilder, Value
from funcgrad.lowering.vecmath_ir import Fn, Pool, c_library_lanes
from funcgrad.lowering.vecmath_trig import TRIG_HUGE


def _taylor(coeffs) -> list:
    return [float(c) for c in coeffs]


# --- constants ------------------------------------------------------------------------------
MAGIC = 6755399441055744.0  # 1.5 * 2^52: x + MAGIC rounds x to an integer in the low bits
INVLN2 = float.fromhex("0x1.71547652b82fep+0")
LN2_HI = float.fromhex("0x1.62e42fefa39efp-1")  # ln 2 = LN2_HI + LN2_LO (+ 5.7e-34)
LN2_LO = float.fromhex("0x1.abc9e3b39803fp-56")
LN2_HI42 = float.fromhex("0x1.62e42fefa3800p-1")  # 42 bits: k * LN2_HI42 exact for |k| < 2^11
LN2_LO42 = float.fromhex("0x1.ef35793c76730p-45")
SQRT_HALF_BITS = 0x3FE6A09E667F3BCD

# e^r - 1 - r = r^2 * EXP_P(r) on |r| <= ln2/2: 1/2!, 1/3!, ..., 1/13! (first omitted 2^-64)
EXP_P = _taylor(Fraction(1, math.factorial(n)) for n in range(2, 14))
# log(1+f) = 2 atanh(s) = 2s + s * z * LOG_Q(z), s = f/(2+f), z = s^2 <= 0.0295: 2/3, 2/5, ..., 2/23
LOG_Q = _taylor(Fraction(2, 2 * n + 1) for n in range(1, 12))


_Fn = Fn  # the name special.py imports


# --- building blocks (emit code, return refs) -----------------------------------------------
def _exp_reduce(f: _Fn, x):
    """x = k ln2 + r + rlo, |r| <= ~ln2/2 (double-double); returns (r, rlo, k as i64).
    x must be clamped (|x| < 2^40)."""
    kf, k = f.round_magic(x, INVLN2)
    r1 = f.fma(kf, -LN2_HI, x)  # exact: the result has <= 53 significant bits
    c = f.mul(kf, -LN2_LO)
    r = f.add(r1, c)
    rlo = f.sub(c, f.sub(r, r1))  # Fast2Sum
    return r, rlo, k


def _exp_tail(f: _Fn, r, rlo):
    """e^(r+rlo) - 1 - r for |r| <= ~0.35: rlo + r^2 P(r)."""
    r2 = f.mul(r, r)
    return f.fma(r2, f.estrin(r, EXP_P, r2), rlo)


def _exp_scaled(f: _Fn, x, bias: int = 0):
    """e^x * 2^-bias for clamped x in [-750, 712], scaled in two steps (subnormals rounded once)."""
    r, rlo, k = _exp_reduce(f, x)
    p = f.add(f.add(r, _exp_tail(f, r, rlo)), 1.0)
    if bias:
        k = f.i("sub", k, bias)
    k1 = f.i("ashr", k, 1)
    k2 = f.i("sub", k, k1)
    return f.mul(f.mul(p, f.pow2(k1)), f.pow2(k2))


def _expm1_core(f: _Fn, x):
    """e^x - 1 = hi + lo (lo below hi's last bit) for x clamped to [-45, 710]; hi is
    inf beyond ~709.78 and within about 0.5 ulp."""
    r, rlo, k = _exp_reduce(f, x)
    tail = _exp_tail(f, r, rlo)  # e^r - 1 = r + tail
    two = f.pow2(f.i("sub", k, 1))  # 2^(k-1)
    # 2^k (e^r - 1 + 1) - 1 = 2 * ((2^(k-1) - 1/2) + 2^(k-1) r + 2^(k-1) tail): the first
    # two terms are exact (whenever they matter) and summed with Fast2Sum
    # (|2^(k-1) - 1/2| >= |2^(k-1) r| unless k == 0, where the first is 0).
    v = f.sub(two, 0.5)
    a = f.mul(two, r)
    s1 = f.add(v, a)
    w = f.fma(two, tail, f.sub(a, f.sub(s1, v)))
    hi = f.add(s1, w)
    lo = f.sub(w, f.sub(hi, s1))
    return f.mul(hi, 2.0), f.mul(lo, 2.0)


def _log_reduced(f: _Fn, u):
    """For a positive normal finite u: (k as i64, f, lo) with u = 2^k (1+f),
    f in [sqrt(1/2)-1, sqrt(2)-1] exact, log(1+f) = f - lo."""
    iu = f.bits(u)
    k = f.i("ashr", f.i("sub", iu, SQRT_HALF_BITS), 52)
    m = f.fbits(f.i("sub", iu, f.i("shl", k, 52)))
    fr = f.sub(m, 1.0)  # exact (Sterbenz)
    s = f.div(fr, f.add(fr, 2.0))
    z = f.mul(s, s)
    t = f.mul(z, f.estrin(z, LOG_Q))  # 2 atanh(s) = 2s + s*t, and 2s = f - s*f
    lo = f.mul(s, f.sub(fr, t))  # log(1+f) = f - s*(f - t)
    return k, fr, lo


def _log_combine(f: _Fn, k, fr, lo, extra=None):
    """k ln2 + fr - lo (+ extra), with k*ln2_hi + fr summed exactly (Fast2Sum)."""
    kf = f.sitofp(k)
    hi = f.mul(kf, LN2_HI42)  # exact
    t = f.add(hi, fr)
    e1 = f.sub(fr, f.sub(t, hi))
    tail = f.fma(kf, LN2_LO42, f.sub(e1, lo))
    if extra is not None:
        tail = f.add(tail, extra)
    return f.add(t, tail)


# --- the functions (body builders: f, x[, y] -> result ref) ---------------------------------
EXP_FAST = 708.0  # |x| above (and +-inf): the C library, lane by lane (results near the range ends)


def _exp(f: _Fn, x):
    """For |x| <= EXP_FAST: x = k ln2 + r (+ rlo), e^x = 2^k (1 + r + tail) with 2^k a normal
    double, scaled in one step (larger |x| take the exact C-library path, ``_FALLBACK``).
    8 lanes (AVX-512): the table-driven version of ``vecmath_avx512``."""
    if f.lanes == 8:
        return vecmath_avx512.exp(f, x)
    r, rlo, k = _exp_reduce(f, x)
    p = f.add(f.add(r, _exp_tail(f, r, rlo)), 1.0)
    return f.mul(p, f.pow2(k))


def _expm1(f: _Fn, x):
    r = _expm1_core(f, f.clamp(x, -45.0, 710.0))[0]
    return f.sel(f.cmp("olt", f.abs(x), 2.0 ** -54), x, r)  # keeps -0 and subnormals exact


def _log_specials(f: _Fn, x, r, zero_at):
    """x in (zero_at, inf): r; x == zero_at: -inf; x == inf: inf; x < zero_at: nan; nan: nan."""
    ok = f.and1(f.cmp("ogt", x, zero_at), f.cmp("olt", x, math.inf))
    spec = f.sel(f.cmp("oeq", x, math.inf), math.inf, math.nan)
    spec = f.sel(f.cmp("oeq", x, zero_at), -math.inf, spec)
    spec = f.sel(f.cmp("uno", x, x), x, spec)
    return f.sel(ok, r, spec)


def _log(f: _Fn, x):
    sub = f.cmp("olt", x, 2.0 ** -1022)  # subnormal (or <= 0: handled below)
    u = f.sel(sub, f.mul(x, 2.0 ** 54), x)
    if f.lanes == 8:  # AVX-512: the table-driven version
        return _log_specials(f, x, vecmath_avx512.log_positive(f, u, f.isel(sub, -54, 0)), 0.0)
    k, fr, lo = _log_reduced(f, u)
    k = f.i("add", k, f.isel(sub, -54, 0))
    return _log_specials(f, x, _log_combine(f, k, fr, lo), 0.0)


def _log1p(f: _Fn, x):
    u = f.add(x, 1.0)
    small = f.cmp("olt", f.abs(x), 1.0)
    c = f.sel(small, f.sub(x, f.sub(u, 1.0)), f.sub(1.0, f.sub(u, x)))  # u + c == 1 + x exactly
    uc = f.sel(f.cmp("ogt", u, 0.0), u, 1.0)  # keep the reduction on positive normals
    k, fr, lo = _log_reduced(f, uc)
    r = _log_combine(f, k, fr, lo, extra=f.div(c, uc))
    r = _log_specials(f, x, r, -1.0)
    return f.sel(f.cmp("oeq", x, 0.0), x, r)  # log1p(-0) = -0


def _sin(f, x):
    return vecmath_trig.sincos(f, x, 0)


def _cos(f, x):
    return vecmath_trig.sincos(f, x, 1)


def _tanh(f: _Fn, x):
    if f.lanes == 8:  # AVX-512: interval polynomials (``vecmath_tanh64``)
        return vecmath_tanh64.tanh(f, x)
    ax = f.abs(x)
    a2 = f.mul(f.sel(f.cmp("ogt", ax, 22.0), 22.0, ax), 2.0)  # tanh(22) == 1 in double
    h, l = _expm1_core(f, a2)  # e^(2|x|) - 1 = h + l
    tiny = f.cmp("olt", a2, 2.0 ** -54)
    h = f.sel(tiny, a2, h)
    l = f.sel(tiny, 0.0, l)
    # tanh|x| = em/(em+2) (|x| < 0.55) or 1 - 2/(em+2), em = h + l; em + 2 = d + de.
    d = f.add(h, 2.0)
    de = f.add(f.sub(2.0, f.sub(d, h)), l)  # Fast2Sum (h <= 2 where it matters)
    inv = f.div(1.0, d)
    small = f.cmp("olt", ax, 0.55)
    num = f.sel(small, h, 2.0)
    numl = f.sel(small, l, 0.0)
    q0 = f.mul(num, inv)
    rho = f.add(f.fma(f.neg(q0), d, num), f.fma(f.neg(q0), de, numl))  # num - q0 (em + 2)
    q = f.fma(rho, inv, q0)
    t = f.sel(small, q, f.sub(1.0, q))
    return f.copysign(t, x)


# sinh x = x + x^3 SINH_P(x^2) for |x| < 1: 1/3!, 1/5!, ..., 1/19!
SINH_P = _taylor(Fraction(1, math.factorial(2 * n + 1)) for n in range(1, 10))


def _sinh(f: _Fn, x):
    ax = f.abs(x)
    z = f.mul(x, x)
    poly = f.fma(f.mul(x, z), f.horner(z, SINH_P), x)
    em = _expm1_core(f, f.sel(f.cmp("ogt", ax, 23.0), 23.0, ax))[0]
    mid = f.mul(f.add(em, f.div(em, f.add(em, 1.0))), 0.5)  # (e - 1/e)/2 with e = em + 1
    half = _exp_scaled(f, f.sel(f.cmp("ogt", ax, 712.0), 712.0, ax), bias=1)  # e^|x| / 2
    big = f.sub(half, f.div(0.25, half))
    r = f.copysign(f.sel(f.cmp("olt", ax, 22.0), mid, big), x)
    return f.sel(f.cmp("olt", ax, 1.0), poly, r)


def _cosh(f: _Fn, x):
    ax = f.abs(x)
    half = _exp_scaled(f, f.sel(f.cmp("ogt", ax, 712.0), 712.0, ax), bias=1)  # e^|x| / 2
    return f.add(half, f.div(0.25, half))


FUNCTIONS = {
    "exp": (_exp, 1), "expm1": (_expm1, 1), "log": (_log, 1), "log1p": (_log1p, 1),
    "sin": (_sin, 1), "cos": (_cos, 1), "tan": (vecmath_trig.tan, 1), "tanh": (_tanh, 1), "sinh": (_sinh, 1),
    "cosh": (_cosh, 1),
}
# functions whose fast path has a bound, above which the C library is called
_FALLBACK = {"sin": TRIG_HUGE, "cos": TRIG_HUGE, "tan": TRIG_HUGE, "exp": EXP_FAST}
# AVX-512: fast paths for the common case, (f, x) -> (result, mask of other lanes)
_FAST = {"log": vecmath_avx512.log_fast}


def _lanes() -> tuple:
    """Vector widths (in doubles) to provide variants for: what the loop vectoriser
    picks on this host (AVX-512: 8, with ``engine`` dropping LLVM's 256-bit preference;
    AVX2: 4; SSE2/NEON: 2)."""
    if _LANES_CACHE:
        return _LANES_CACHE[0]
    try:
        feats = engine.host_features()  # (the engine's, asked once per process)
        lanes = (8,) if feats.get("avx512f") else (4,) if feats.get("avx") else (2,)
    except Exception:  # pragma: no cover - be generous when the host is unknown
        lanes = (2, 4, 8)
    _LANES_CACHE.append(lanes)
    return lanes


_LANES_CACHE: list = []
_ATTRS = "nounwind willreturn memory(none)"
_DEF_ATTRS = "nounwind willreturn memory(read)"  # (the definitions read their constant pools)


def _variants(scalar: str, arity: int, width: int, vector: str | None = None) -> str:
    vector = vector or f"{scalar}_v{width}"
    return f'"vector-function-abi-variant"="_ZGV_LLVM_N{width}{"v" * arity}_{scalar}({vector})"'


def _body(module, name: str, lanes: int, pool=None, cold: bool = False):
    """The body of ``name`` on ``lanes`` lanes (arguments %x0, ...): (text, result ref).
    Specials leave the fast path through one mask test and a cold branch per call:
    lanes beyond a bound (``_FALLBACK``) go to the C library; with AVX-512 a function
    of ``_FAST`` computes only the common case and sends a vector with any other lane
    to the whole function (``cold``: that body, ``@fg_vm_<name>_cold_v<lanes>``). The
    text then ends with its own ``ret``s and the result ref is None."""
    body_fn, arity = FUNCTIONS[name]
    f = _Fn(module, lanes, pool=pool)
    args = [f"%x{i}" for i in range(arity)]
    fast = None if cold or lanes != 8 else _FAST.get(name)
    if fast is not None:
        r, bad = fast(f, *args)
        whole = module.helper(f"fg_vm_{name}_cold_v{lanes}", lambda: _define_core(module, name, lanes, cold=True))
        f.ret_unless(bad, r, lambda: f._t(f"call {f.F} {whole}({f.F} {args[0]})"))
        return "\n".join(f.lines), None
    r = body_fn(f, *args)
    bound = _FALLBACK.get(name)
    if bound is None:
        return "\n".join(f.lines), r
    big = f.cmp("ogt", f.abs(args[0]), bound)
    slow = c_library_lanes(module, name, lanes, _ATTRS)
    f.ret_unless(big, r, lambda: f._t(f"call {f.F} {slow}({f.F} {args[0]}, {f.B} {big}, {f.F} {r})"))
    return "\n".join(f.lines), None


def _define_core(module, name: str, lanes: int, cold: bool = False) -> str:
    """``@fg_vm_<name>_f64_v<lanes>`` (``cold``: ``_cold_v<lanes>``): the compiled body
    of ``name``, its constants in the global ``@fg_vm_k_<...>`` (``vecmath_ir.Pool``)."""
    _, arity = FUNCTIONS[name]
    ty = f"<{lanes} x double>"
    params = ", ".join(f"{ty} %x{i}" for i in range(arity))
    fn = f"{name}_{'cold' if cold else 'f64'}_v{lanes}"
    pool = Pool(f"fg_vm_k_{fn}") if lanes > 1 else None
    body, r = _body(module, name, lanes, pool, cold)
    if pool is not None:
        module.helper(pool.name, pool.text)
    ret = f"\n  ret {ty} {r}" if r is not None else ""
    return f"define internal {ty} @fg_vm_{fn}({params}) noinline {_DEF_ATTRS} {{\nentry:\n{body}{ret}\n}}"


def _splat(ref: str, ty: str, n: int, out: str) -> str:
    return (f"  {out}.i = insertelement <{n} x {ty}> poison, {ty} {ref}, i64 0\n"
            f"  {out} = shufflevector <{n} x {ty}> {out}.i, <{n} x {ty}> poison, <{n} x i32> zeroinitializer")


def _exports(name: str, dtype) -> tuple:
    """(scalar entry, vector variant, its width) of ``name`` for ``dtype``."""
    w = _lanes()[0]
    if dtype == F64:
        return f"fg_vm_{name}_f64", f"fg_vm_{name}_f64_v{w}", w
    return f"fg_vm_{name}_f32", f"fg_vm_{name}_f32_v{2 * w}", 2 * w


def _define(module, name: str, dtype) -> str:
    """``@fg_vm_<name>_<f64|f32>``: the scalar entry (calls the vector body on a splat),
    plus for float32 the ``<2W x float>`` variant (two calls of the W-lane float64 body)."""
    _, arity = FUNCTIONS[name]
    w = _lanes()[0]
    if dtype == F32 and name in vecmath_f32.FUNCTIONS:
        return _define_native_f32(module, name, 2 * w)
    core = module.helper(f"fg_vm_{name}_f64_v{w}", lambda: _define_core(module, name, w))
    base, _, vw = _exports(name, dtype)
    vt = f"<{w} x double>"
    lines = []
    if dtype == F64:
        ty, ext = "double", [f"%x{i}" for i in range(arity)]
    else:
        ty = "float"
        ext = [f"%d{i}" for i in range(arity)]
        lines += [f"  %d{i} = fpext float %x{i} to double" for i in range(arity)]
        module.helper(f"{base}_v{vw}", lambda: _define_f32_vector(name, core, w))
    lines += [_splat(e, "double", w, f"%s{i}") for i, e in enumerate(ext)]
    args = ", ".join(f"{vt} %s{i}" for i in range(arity))
    lines.append(f"  %v = call {vt} {core}({args})")
    lines.append("  %r = extractelement " + vt + " %v, i64 0")
    ret = "%r"
    if dtype == F32:
        lines.append("  %t = fptrunc double %r to float")
        ret = "%t"
    params = ", ".join(f"{ty} %x{i}" for i in range(arity))
    return (f"define internal {ty} @{base}({params}) noinline {_DEF_ATTRS} {{\nentry:\n"
            + "\n".join(lines) + f"\n  ret {ty} {ret}\n}}")


def _define_native_f32(module, name: str, n: int) -> str:
    """``@fg_vm_<name>_f32`` and ``@fg_vm_<name>_f32_v<n>`` for the functions
    ``vecmath_f32`` computes in float32 (one argument)."""
    vt = f"<{n} x float>"

    def vector(fn=f"{name}_f32_v{n}", cold=False):
        pool = Pool(f"fg_vm_k_{fn}", "i32")
        whole = None
        if not cold and n == 16 and name in vecmath_f32.FAST:  # (see ``_body``)
            whole = module.helper(f"fg_vm_{name}_f32cold_v{n}", lambda: vector(f"{name}_f32cold_v{n}", True))
        text, r = vecmath_f32.body(module, name, n, "%x0", pool, whole)
        module.helper(pool.name, pool.text)
        ret = f"\n  ret {vt} {r}" if r is not None else ""
        return f"define internal {vt} @fg_vm_{fn}({vt} %x0) noinline {_DEF_ATTRS} {{\nentry:\n{text}{ret}\n}}"

    core = module.helper(f"fg_vm_{name}_f32_v{n}", vector)
    return (f"define internal float @fg_vm_{name}_f32(float %x0) noinline {_DEF_ATTRS} {{\nentry:\n"
            + _splat("%x0", "float", n, "%s0") + f"\n  %v = call {vt} {core}({vt} %s0)\n"
            f"  %r = extractelement {vt} %v, i64 0\n  ret float %r\n}}")


def _define_f32_vector(name: str, core: str, w: int) -> str:
    """``<2w x float>`` variant: widen, two calls of the w-lane float64 body, narrow."""
    _, arity = FUNCTIONS[name]
    n = 2 * w
    ft, dt, ht = f"<{n} x float>", f"<{n} x double>", f"<{w} x double>"
    lo = ", ".join(f"i32 {i}" for i in range(w))
    hi = ", ".join(f"i32 {i}" for i in range(w, n))
    lines = []
    for i in range(arity):
        lines += [f"  %d{i} = fpext {ft} %x{i} to {dt}",
                  f"  %lo{i} = shufflevector {dt} %d{i}, {dt} poison, <{w} x i32> <{lo}>",
                  f"  %hi{i} = shufflevector {dt} %d{i}, {dt} poison, <{w} x i32> <{hi}>"]
    lines.append(f"  %a = call {ht} {core}(" + ", ".join(f"{ht} %lo{i}" for i in range(arity)) + ")")
    lines.append(f"  %b = call {ht} {core}(" + ", ".join(f"{ht} %hi{i}" for i in range(arity)) + ")")
    allidx = ", ".join(f"i32 {i}" for i in range(n))
    lines.append(f"  %c = shufflevector {ht} %a, {ht} %b, <{n} x i32> <{allidx}>")
    lines.append(f"  %r = fptrunc {dt} %c to {ft}")
    params = ", ".join(f"{ft} %x{i}" for i in range(arity))
    return (f"define internal {ft} @fg_vm_{name}_f32_v{n}({params}) noinline {_DEF_ATTRS} {{\nentry:\n"
            + "\n".join(lines) + f"\n  ret {ft} %r\n}}")


def _keep_alive(module, names) -> None:
    """Add ``names`` to @llvm.compiler.used: the variants are unreferenced until the
    loop vectoriser has run."""
    used = module.helpers.get("llvm.compiler.used", "")
    refs = [f"ptr @{n}" for n in names]
    if used:
        refs = used[used.index("[", used.index("]")) + 1:used.rindex("]")].split(", ") + refs
    module.helpers["llvm.compiler.used"] = (
        f"@llvm.compiler.used = appending global [{len(refs)} x ptr] [{', '.join(refs)}], section \"llvm.metadata\"")


def supports(name: str, dtype) -> bool:
    return name in FUNCTIONS and np.dtype(dtype) in (F32, F64)


# --- the process-wide library ---------------------------------------------------------------
# Each (function, dtype) is compiled once per process into its own module of the one JIT
# engine and bound by name (``engine.add_symbol``); kernels only declare it. Compiling
# the bodies into every kernel instead cost ~5 ms of LLVM time per function per kernel.
_LIB: dict = {}
_LIB_LOCK = threading.Lock()


@engine.provider("vecmath")
def _library(name: str, dtype: str) -> None:
    """Compile the vector-math ``name`` for ``dtype`` (its name) once per process."""
    dtype = np.dtype(dtype)
    base, vec, _ = _exports(name, dtype)
    with _LIB_LOCK:
        if base in _LIB:
            return
        # sin and cos: one library (``vecmath_trig``), compiled and bound for both at once
        joint = vecmath_trig.SINCOS if name in vecmath_trig.SINCOS else (name,)
        bases = [_exports(n, dtype)[0] for n in joint]
        symbols = [s for n in joint for s in _exports(n, dtype)[:2]]
        # (a warm disk cache links it by name: the text is made only on a miss; bound by
        # name, with tiering its quick code first: ``tiered.compile_library_quick``)
        key = f"vecmath {''.join(joint)} {dtype.name}"
        addrs = engine.compile_library(key, lambda: library_text(name, dtype), symbols, bind=True)
        for b in bases:
            _LIB[b] = addrs


def library_text(name: str, dtype) -> str:
    """The IR of the library of ``name`` for ``dtype``: its scalar entry and vector variant
    (``_exports``) exported as ``@fg_main_<symbol>`` (sin, cos: both functions' entries)."""
    dtype = np.dtype(dtype)
    if name in vecmath_trig.SINCOS:
        exports = {n: _exports(n, dtype) for n in vecmath_trig.SINCOS}
        return vecmath_trig.library_text(exports, dtype == F32, _lanes()[0])
    base, vec, _ = _exports(name, dtype)
    mb = ModuleBuilder()
    mb.helper(base, lambda: _define(mb, name, dtype))
    text = mb.text()
    for sym in (base, vec):  # exported (external: fg_main_<sym> in its own library)
        text = text.replace(f"@{sym}(", f"@fg_main_{sym}(")
    return re.sub(r"define internal ([^@]+) @fg_main_", r"define \1 @fg_main_", text)


def call(b, name: str, *xs: Value) -> Value:
    """Emit a call of the vector-math ``name`` on ``xs`` (float32 or float64 Values).

    The call is to a scalar function whose ``vector-function-abi-variant`` attribute
    names the vector version, so the loop vectoriser replaces it with one call per
    vector of elements."""
    dtype = xs[0].dtype
    _library(name, dtype.name)
    _, arity = FUNCTIONS[name]
    base, vec, vw = _exports(name, dtype)
    ty = xs[0].ty
    vty = f"<{vw} x {ty}>"
    module = b.module
    module.declare(base, f"declare {ty} @{base}({', '.join([ty] * arity)}) {_ATTRS} {_variants(base, arity, vw, vec)}")
    module.declare(vec, f"declare {vty} @{vec}({', '.join([vty] * arity)}) {_ATTRS}")
    if vec not in module.helpers.get("llvm.compiler.used", ""):
        _keep_alive(module, [vec])
    arglist = ", ".join(f"{ty} {x.ref}" for x in xs)
    return Value(b.emit(f"call {ty} @{base}({arglist})"), dtype)


# A forked child has only the forking thread: a lock another thread held at the fork
# would never be released there.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_LIB_LOCK._at_fork_reinit)
