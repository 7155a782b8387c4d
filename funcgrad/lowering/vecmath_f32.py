"""Vectorisable float32 exp, log and tanh computed in float32 (``vecmath`` uses them).

The float64 algorithms rounded to float32 (what the other float32 functions use) cost
as much per element as float64: half the lanes per instruction and float64-sized
polynomials. These work on ``<2W x float>`` (16 lanes with AVX-512) with polynomials
sized for float32 (first omitted term below ~2^-27 relative), so a float32 element
costs a third to a fifth of a float64 one.

- exp: Cody-Waite reduction x = k ln2 + r (the high part of ln2 has 15 bits, so
  k * LN2_HI and x - k * LN2_HI are exact), e^r = 1 + r + r^2 (1/2! + ... + 1/7! r^5),
  scaled by 2^k in two steps so subnormal results are rounded once. x is clamped to
  [-104, 89] first: beyond, the result is 0 or inf anyway; NaN passes through.
- log: x = 2^k (1 + f) with f in [sqrt(1/2) - 1, sqrt(2) - 1] (exact bit arithmetic;
  subnormals scaled by 2^23 first), log(1+f) = f - f^2/2 + f^3 Q(f) with Q a degree-8
  polynomial fitted at Chebyshev points (``_fit``), k ln2 added with one FMA.
- tanh: |x| < 0.97: x + x^3 T(x^2), T a degree-6 fitted polynomial; else
  1 - 2 / (e^(2|x|) + 1) with the exp above (2|x| capped at 18.5, where tanh rounds to
  1; one divide: a Newton reciprocal in FMAs measured slower, the divider runs beside
  the FMA ports), and the sign of x copied back.
- AVX-512 (16 lanes): exp scales by ``vscalefps`` (one rounding, subnormals included);
  log's fast path (``FAST``) skips the subnormal and special-value work, and a vector
  with any such lane takes a cold branch to the whole ``_log``; tanh is 32 fitted
  interval polynomials whose coefficients ``vpermt2ps`` looks up (``_tanh_avx512``:
  about 20 vector instructions per 16 elements instead of ~45 with the divide).

Specials as NumPy: exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(<0) = nan,
tanh(+-inf) = +-1, +-0 and subnormals kept by tanh, nan in -> nan out. Accuracy
(against NumPy's float64 result, tests/test_lowering_vecmath_native.py):
at most ~1 ulp (exp 0.96, log 0.79, tanh 0.96 measured; AVX-512: 0.99, 0.76, 1.06;
NumPy's float32 loops: 2.1, 2.6, 1.3).

The fitted coefficients are computed here (least squares at 400 Chebyshev points of
the interval, relative weights, float64 reference values from NumPy) the first time a
body is built, i.e. once per process and only when the disk cache misses.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from funcgrad.lowering.vecmath_ir import Fn, float_bits

__all__ = ["FUNCTIONS", "body"]

INVLN2 = 1.4426950408889634
LN2_HI = 0.693145751953125  # 45426 * 2^-16: k * LN2_HI is exact for |k| < 2^9
LN2_LO = float(np.float32(math.log(2) - LN2_HI))
SQRT_HALF_BITS = 0x3F3504F3  # float32 sqrt(1/2)
# e^r - 1 - r = r^2 * EXP_P(r) on |r| <= ~ln2/2: 1/2!, ..., 1/7! (first omitted 2^-28)
EXP_P = [1.0 / math.factorial(n) for n in range(2, 8)]
# tanh: below, the odd polynomial; above, 1 - 2/(e^2x + 1) with 2/(e^2x + 1) < 1/4, so
# its rounding errors are at most a quarter ulp of the result each (at 0.55 they were
# half an ulp: 1.36 ulp in all)
TANH_SMALL = 0.97


def _fit(fn, lo: float, hi: float, degree: int) -> list:
    """Coefficients (low order first) of the degree-``degree`` polynomial closest to
    ``fn`` on [lo, hi] in relative error, by weighted least squares at Chebyshev points."""
    t = np.cos(np.pi * (np.arange(400) + 0.5) / 400)
    x = (lo + hi) / 2 + (hi - lo) / 2 * t
    y = fn(x)
    v = np.vander(x, degree + 1, increasing=True) / y[:, None]  # rows scaled: relative error
    return [float(c) for c in np.linalg.lstsq(v, np.ones_like(x), rcond=None)[0]]


@functools.cache
def _log_q() -> list:
    """(log(1+f) - f + f^2/2) / f^3 on the reduced interval."""
    def q(f):
        # log1p loses nothing here; f^3 >= 1e-9 on these points (none is near 0)
        return (np.log1p(f) - f + f * f / 2) / f ** 3
    lo, hi = math.sqrt(0.5) - 1, math.sqrt(2) - 1
    # the points nearest 0 cancel badly in float64: fit on both halves away from 0 plus
    # the Taylor value at 0 via the series 1/3 - f/4 + f^2/5 - ...
    def q_safe(f):
        series = sum((-1) ** n * f ** n / (n + 3) for n in range(30))
        return np.where(np.abs(f) < 0.02, series, q(np.where(np.abs(f) < 0.02, 0.5, f)))
    return _fit(q_safe, lo, hi, 8)


@functools.cache
def _tanh_t() -> list:
    """(tanh(x)/x - 1) / x^2 as a polynomial in z = x^2 on [0, TANH_SMALL^2]."""
    def t(z):
        x = np.sqrt(z)
        # series for small z: -1/3 + 2/15 z - 17/315 z^2 + 62/2835 z^3 - ...
        series = -1 / 3 + z * (2 / 15 + z * (-17 / 315 + z * (62 / 2835 - z * 1382 / 155925)))
        safe = np.where(z < 1e-3, 0.25, z)
        direct = (np.tanh(np.sqrt(safe)) / np.sqrt(safe) - 1) / safe
        return np.where(z < 1e-3, series, direct) + 0 * x
    return _fit(t, 0.0, TANH_SMALL ** 2, 6)


def _exp_core(f: Fn, x, two_step: bool = True):
    """e^x for x already clamped to [-104, 89] (or NaN)."""
    kf, k = f.round_magic(x, INVLN2)
    r = f.fma(kf, -LN2_HI, x)  # exact
    r = f.fma(kf, -LN2_LO, r)
    r2 = f.mul(r, r)
    e = f.add(f.fma(r2, f.estrin(r, EXP_P, r2), r), 1.0)
    if f.lanes == 16:  # AVX-512: e * 2^k rounded once by vscalefps (subnormals included)
        return f.scalef(e, kf)
    if not two_step:
        return f.mul(e, f.pow2(k))
    k1 = f.i("ashr", k, 1)
    return f.mul(f.mul(e, f.pow2(k1)), f.pow2(f.i("sub", k, k1)))


def _exp(f: Fn, x):
    return _exp_core(f, f.clamp(x, -104.0, 89.0))


def _log(f: Fn, x):
    sub = f.cmp("olt", x, 2.0 ** -126)  # subnormal (or <= 0: replaced below)
    u = f.sel(sub, f.mul(x, 2.0 ** 23), x)
    iu = f.bits(u)
    k = f.i("ashr", f.i("sub", iu, SQRT_HALF_BITS), 23)
    fr = f.sub(f.fbits(f.i("sub", iu, f.i("shl", k, 23))), 1.0)  # exact
    kf = f.sitofp(f.i("add", k, f.isel(sub, -23, 0)))
    r = _log_tail(f, fr, kf)
    # specials: x in (0, inf) iff bits(x) - 1 < 0x7F7FFFFF unsigned; else +inf and nan
    # are their own log, -0/+0 give -inf, negatives nan
    ok = f.i("icmp ult", f.i("sub", f.bits(x), 1), 0x7F7FFFFF)
    spec = f.sel(f.cmp("oeq", x, 0.0), -math.inf, f.sel(f.cmp("olt", x, 0.0), math.nan, x))
    return f.sel(ok, r, spec)


def _log_tail(f: Fn, fr, kf):
    """k ln2 + log(1 + f) from f (exact) and k (as a float)."""
    f2 = f.mul(fr, fr)
    tail = f.fma(f.mul(f2, fr), f.estrin(fr, _log_q(), f2), f.mul(kf, LN2_LO))
    lo = f.add(fr, f.fma(f2, -0.5, tail))
    return f.fma(kf, LN2_HI, lo)  # kf * LN2_HI exact: one rounding


# AVX-512 tanh: 32 intervals of |x| (``_tanh_table``), each with a degree-5 polynomial
TANH_FIRST = 2.0 ** -4  # intervals: [0, 1.25 * 2^-4), then quarter binades up to 16
TANH_DEGREE = 5


@functools.cache
def _tanh_table() -> tuple:
    """(B, C): on interval j, tanh(b + y) = C[0][j] + C[1][j] y + ... (y = |x| - B[j] >= 0).
    Intervals: j = 0 is [0, 1.25 * 2^-4) with an odd polynomial (C1 = 1, C0 = C2 = C4
    = 0: tiny and subnormal x come back exactly); j >= 1 the quarter binades from
    1.25 * 2^-4, B[j] their left ends, so C0 = tanh(B) is at most the result and its
    float32 rounding at most half an ulp of it (centred intervals cost 1.4 ulp near
    0.5, where C0 and the result lie in different binades). Least squares at
    Chebyshev points, relative to tanh (float64 reference values: float32 needs no
    more). Measured against float64 tanh rounded: at most ~1.1 ulp."""
    t = np.cos(np.pi * (np.arange(400) + 0.5) / 400)
    bs, rows = [], []
    for j in range(32):
        e, q = divmod(j, 4)
        lo = 0.0 if j == 0 else TANH_FIRST * 2.0 ** e * (1 + q / 4)
        hi = TANH_FIRST * 2.0 ** e * (1 + (q + 1) / 4) if j else TANH_FIRST * 1.25
        x = (lo + hi) / 2 + (hi - lo) / 2 * t
        th = np.tanh(x)
        if j == 0:  # (tanh x - x) / x^3 = c3 + c5 x^2, in relative terms
            z = x * x
            target = np.where(x < 1e-3, -1 / 3 + 2 / 15 * z, (th - x) / np.maximum(x, 1e-3) ** 3)
            v = np.stack([x ** 3, x ** 5], axis=1) / th[:, None]
            c3, c5 = np.linalg.lstsq(v, target * x ** 3 / th, rcond=None)[0]
            cs = [0.0, 1.0, 0.0, c3, 0.0, c5]
        else:
            v = np.vander(x - lo, TANH_DEGREE + 1, increasing=True) / th[:, None]
            cs = np.linalg.lstsq(v, np.ones_like(x), rcond=None)[0]
        bs.append(float(np.float32(lo)))
        rows.append([float(np.float32(c)) for c in cs])
    return bs, [list(col) for col in zip(*rows)]


def _lookup32(f: Fn, values: list, index: str) -> str:
    """values[index & 31] on 16 float32 lanes: ``vpermt2ps`` over two registers."""
    name = "llvm.x86.avx512.vpermi2var.ps.512"
    f.module.declare(name, f"declare <16 x float> @{name}(<16 x float>, <16 x i32>, <16 x float>)")
    return f._t(f"call <16 x float> @{name}(<16 x float> {f.table(values[:16])}, <16 x i32> {index}, "
                f"<16 x float> {f.table(values[16:])})")


def _tanh_avx512(f: Fn, x):
    """tanh on 16 lanes: the interval of |x| from its exponent and top two mantissa
    bits, its coefficients by register permutes (no gathers), one Horner polynomial.
    |x| is capped at 12 (tanh rounds to 1 from ~9.01; inf too), NaN stays NaN,
    the sign is copied back (-0 -> -0)."""
    ax = f.abs(x)
    ax = f.sel(f.cmp("ogt", ax, 12.0), 12.0, ax)  # (one vminps; NaN stays)
    # the permutes read the low 5 bits of bits(max(ax, 2^-4)) >> 21: the tables are
    # rotated so that entry (j + bits(2^-4) >> 21) mod 32 is interval j's
    j = f.i("lshr", f.bits(f.sel(f.cmp("olt", ax, TANH_FIRST), TANH_FIRST, ax)), 21)
    rot = (float_bits(TANH_FIRST) >> 21) % 32
    bs, cs = _tanh_table()
    bs, cs = _rotate(bs, rot), [_rotate(col, rot) for col in cs]
    y = f.sub(ax, _lookup32(f, bs, j))  # exact (Sterbenz; j = 0: b = 0)
    r = _lookup32(f, cs[-1], j)
    for col in reversed(cs[:-1]):
        r = f.fma(r, y, _lookup32(f, col, j))
    return f.copysign(r, x)  # (on [12, 14): C0 = 1, C1 12 ~ 1e-10: 1 exactly)


def _rotate(col: list, rot: int) -> list:
    """Entry p of the result is ``col[(p - rot) mod 32]``."""
    return [col[(p - rot) % 32] for p in range(32)]


def _tanh(f: Fn, x):
    if f.lanes == 16:
        return _tanh_avx512(f, x)
    ax = f.abs(x)
    z = f.mul(x, x)
    small = f.fma(f.mul(x, z), f.horner(z, _tanh_t()), x)  # (Estrin: 1.27 ulp, Horner: 0.96)
    a2 = f.mul(f.sel(f.cmp("ogt", ax, 9.25), 9.25, ax), 2.0)  # tanh(9.25) rounds to 1
    em = _exp_core(f, a2, two_step=False)
    big = f.sub(1.0, f.div(2.0, f.add(em, 1.0)))
    return f.copysign(f.sel(f.cmp("olt", ax, TANH_SMALL), small, big), x)  # (small: -0 + -0*T is +0)


FUNCTIONS = {"exp": _exp, "log": _log, "tanh": _tanh}


def _log_fast(f: Fn, x):
    """(log x for positive normal finite x, mask of the other lanes): ``_log`` without
    the subnormal scaling and the special-value selects (AVX-512 hosts)."""
    iu = f.bits(x)
    bad = f.i("icmp uge", f.i("sub", iu, 0x00800000), 0x7F000000)
    t = f.i("sub", iu, SQRT_HALF_BITS)
    k = f.i("ashr", t, 23)
    fr = f.sub(f.fbits(f.i("add", f.i("and", t, 2 ** 23 - 1), SQRT_HALF_BITS)), 1.0)  # exact
    return _log_tail(f, fr, f.sitofp(k)), bad


FAST = {"log": _log_fast}


def body(module, name: str, lanes: int, arg: str, pool=None, whole=None) -> tuple:
    """The float32 body of ``name`` on ``lanes`` lanes of ``arg``: (text, result ref);
    constants from ``pool`` (a ``vecmath_ir.Pool`` of i32 words) when given. With
    ``whole`` (the function computing every lane), the ``FAST`` path and a cold
    branch to ``whole`` (then the text ends with its ``ret``s; the ref is None)."""
    f = Fn(module, lanes, elem="float", pool=pool)
    if whole is not None:
        r, bad = FAST[name](f, arg)
        f.ret_unless(bad, r, lambda: f._t(f"call {f.F} {whole}({f.F} {arg})"))
        return "\n".join(f.lines), None
    r = FUNCTIONS[name](f, arg)
    return "\n".join(f.lines), r
