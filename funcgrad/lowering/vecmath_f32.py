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

Specials as NumPy: exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(<0) = nan,
tanh(+-inf) = +-1, +-0 and subnormals kept by tanh, nan in -> nan out. Accuracy
(against NumPy's float64 result, tests/test_lowering_vecmath_native.py):
at most ~1 ulp (exp 0.96, log 0.79, tanh 0.96 measured; NumPy's
float32 loops: 2.1, 2.6, 1.3).

The fitted coefficients are computed here (least squares at 400 Chebyshev points of
the interval, relative weights, float64 reference values from NumPy) the first time a
body is built, i.e. once per process and only when the disk cache misses.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from funcgrad.lowering.vecmath_ir import Fn

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
    f2 = f.mul(fr, fr)
    tail = f.fma(f.mul(f2, fr), f.estrin(fr, _log_q(), f2), f.mul(kf, LN2_LO))
    lo = f.add(fr, f.fma(f2, -0.5, tail))
    r = f.fma(kf, LN2_HI, lo)  # kf * LN2_HI exact: one rounding
    # specials: x in (0, inf) iff bits(x) - 1 < 0x7F7FFFFF unsigned; else +inf and nan
    # are their own log, -0/+0 give -inf, negatives nan
    ok = f.i("icmp ult", f.i("sub", f.bits(x), 1), 0x7F7FFFFF)
    spec = f.sel(f.cmp("oeq", x, 0.0), -math.inf, f.sel(f.cmp("olt", x, 0.0), math.nan, x))
    return f.sel(ok, r, spec)


def _tanh(f: Fn, x):
    ax = f.abs(x)
    z = f.mul(x, x)
    small = f.fma(f.mul(x, z), f.horner(z, _tanh_t()), x)  # (Estrin: 1.27 ulp, Horner: 0.96)
    a2 = f.mul(f.sel(f.cmp("ogt", ax, 9.25), 9.25, ax), 2.0)  # tanh(9.25) rounds to 1
    em = _exp_core(f, a2, two_step=False)
    e1 = f.add(em, 1.0)
    # AVX-512: 2/(em+1) by vrcp14ps and one Newton step (2^-28 relative), not a divide
    big = f.sub(1.0, f.mul(f.recip(e1, 1), 2.0) if f.lanes == 16 else f.div(2.0, e1))
    return f.copysign(f.sel(f.cmp("olt", ax, TANH_SMALL), small, big), x)  # (small: -0 + -0*T is +0)


FUNCTIONS = {"exp": _exp, "log": _log, "tanh": _tanh}


def body(module, name: str, lanes: int, arg: str, pool=None) -> tuple:
    """The float32 body of ``name`` on ``lanes`` lanes of ``arg``: (text, result ref);
    constants from ``pool`` (a ``vecmath_ir.Pool`` of i32 words) when given."""
    f = Fn(module, lanes, elem="float", pool=pool)
    r = FUNCTIONS[name](f, arg)
    return "\n".join(f.lines), r
