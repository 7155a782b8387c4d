"""Confluent and Gauss hypergeometric functions: ``hyp1f1(a, b, x)`` and
``hyp2f1(a, b, c, x)`` for real arguments.

- ``hyp1f1``: Kummer's transformation ``M(a, b, x) = e^x M(b - a, b, -x)`` maps x < 0 to
  x > 0 (where for positive parameters every term of the series is positive); the power
  series ``sum_k (a)_k / (b)_k x^k / k!`` (700 terms, a ``fori_loop``) below x = 300, the
  asymptotic series ``Gamma(b) / Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / (k! x^k)``
  (30 terms) beyond (where the expansion's algebraic second term is negligible). A
  polynomial (``a`` a non-positive integer) is always summed.
  ``b`` a non-positive integer gives ``inf``, as SciPy.
- ``hyp2f1`` (x <= 1; for x > 1 only the polynomial cases are real, otherwise ``inf``, as
  SciPy): Pfaff's transformation ``(1 - x)^-a 2F1(a, c - b; c; x / (x - 1))`` maps x < 0
  into (0, 1); there the power series (700 terms) up to 0.9 and beyond the ``1 - z``
  connection formula (two series of 80 terms in ``1 - z``, Gamma-function weights). Where
  ``c - a - b`` is an integer that formula's weights have poles; there it is evaluated at
  ``c +- d`` and ``c +- 2d`` (d = 3e-4) and combined by Richardson extrapolation (relative
  error ~1e-11). At x = 1 Gauss's sum ``Gamma(c) Gamma(c-a-b) / (Gamma(c-a) Gamma(c-b))``
  (``inf`` unless ``c > a + b``); ``c`` a non-positive integer gives ``inf``.

Accuracy: ~1e-13 relative for moderate parameters (|a|, |b|, |c| up to ~20); large
parameters cancel in the series (as any fixed-precision summation). Both are composites,
differentiable in every argument.
"""
from __future__ import annotations

import math

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.prims import special as _sp
from funcgrad.scipy.special._util import in_float64, safe

__all__ = ["hyp1f1", "hyp2f1"]


def _is_nonpos_int(v):
    return (v <= 0) & (v == fnp.floor(v))


def _series(num, den, z, terms):
    """``sum_{k < terms} prod(num)_k / prod(den)_k z^k / k!`` (Pochhammer products)."""
    def body(k, carry):
        term, total = carry
        kf = lax.convert_element_type(k, z.dtype)
        ratio = z / (kf + 1.0)
        ends = term == 0
        for p in num:
            ratio = ratio * (p + kf)
            ends = ends | (p + kf == 0)
        for q in den:
            ratio = ratio / (q + kf)
        # once a numerator's Pochhammer factor hits 0 the sum has terminated: later terms
        # stay 0 even where a denominator's factor reaches 0 too (0/0, 0 * inf)
        term = fnp.where(ends, 0.0, term * ratio)
        return term, total + term

    one = fnp.ones_like(z)
    return lax.fori_loop(0, terms - 1, body, (one, one))[1]


def _gamma_signed(x):
    """(sign, log|Gamma|) with sign 0 at the poles (so ``sign * exp(...)`` is ``1/Gamma``-safe)."""
    pole = _is_nonpos_int(x)
    xs = safe(pole, x, 1.0)
    odd = fnp.remainder(fnp.floor(xs), 2.0) == 1.0
    sign = fnp.where((xs > 0) | ~odd, 1.0, -1.0)
    return fnp.where(pole, 0.0, sign), _sp.lgamma(xs)


# --- 1F1 ------------------------------------------------------------------------------------
_M_SERIES_BELOW = 300.0


def _hyp1f1_nonneg(a, b, y):
    """M(a, b, y) for y >= 0."""
    poly = _is_nonpos_int(a)
    small = (y < _M_SERIES_BELOW) | poly
    ys = safe(~small, y, 1.0)
    series = _series([a], [b], ys, 700)
    yb = safe(small, y, 2.0 * _M_SERIES_BELOW)
    asym = _series([b - a, 1.0 - a], [], 1.0 / yb, 30)
    sb, lb = _gamma_signed(b)
    sa, la = _gamma_signed(safe(poly, a, 0.5))
    big = sb * sa * fnp.exp(yb + (a - b) * fnp.log(yb) + lb - la) * asym
    return fnp.where(small, series, big)


def _hyp1f1(a, b, x):
    neg = x < 0
    poly = _is_nonpos_int(a)
    kummer = neg & ~poly
    y = fnp.where(kummer, -x, x)
    a1 = fnp.where(kummer, b - a, a)
    v = _hyp1f1_nonneg(a1, b, fnp.where(kummer | ~neg, y, 0.0))
    v_poly = _series([a], [b], safe(~(poly & neg), x, 0.0), 700)  # a terminating sum at x < 0
    v = fnp.where(kummer, fnp.exp(x) * v, fnp.where(poly & neg, v_poly, v))
    v = fnp.where(a == 0, 1.0, v)
    # b a pole (0, -1, ...) is infinite unless the sum terminates first (a = -1, -2, ..., a >= b;
    # a = 0 stays infinite, as SciPy)
    return fnp.where(_is_nonpos_int(b) & ~(poly & (a < 0) & (a >= b)), math.inf, v)


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function ``M(a, b, x) = 1F1(a; b; x)``.

    >>> round(float(hyp1f1(1.0, 2.0, 1.0)), 12)   # (e - 1) / 1
    1.718281828459
    """
    return in_float64("hyp1f1", _hyp1f1, a, b, x)


# --- 2F1 ------------------------------------------------------------------------------------
_DIRECT_TO = 0.9
_RICHARDSON_STEP = 3e-4


def _one_minus_z(a, b, c, z):
    """The connection formula at 1 - z (0 < 1 - z <= 0.1); ``c - a - b`` not an integer."""
    w = 1.0 - z
    m = c - a - b
    s_c, l_c = _gamma_signed(c)
    s1, l1 = _gamma_signed(m)
    s2, l2 = _gamma_signed(c - a)
    s3, l3 = _gamma_signed(c - b)
    s4, l4 = _gamma_signed(-m)
    s5, l5 = _gamma_signed(a)
    s6, l6 = _gamma_signed(b)
    first = s_c * s1 * s2 * s3 * fnp.exp(l_c + l1 - l2 - l3) * _series([a, b], [1.0 - m], w, 80)
    second = (s_c * s4 * s5 * s6 * fnp.exp(l_c + l4 - l5 - l6 + m * fnp.log(w))
              * _series([c - a, c - b], [1.0 + m], w, 80))
    return first + second


def _near_one(a, b, c, z):
    m = c - a - b
    integer = fnp.abs(m - fnp.round(m)) < 1e-9
    d = _RICHARDSON_STEP
    plain = _one_minus_z(a, b, fnp.where(integer, c + 0.5 * d, c), z)  # (the shift keeps it finite)
    avg1 = 0.5 * (_one_minus_z(a, b, c + d, z) + _one_minus_z(a, b, c - d, z))
    avg2 = 0.5 * (_one_minus_z(a, b, c + 2 * d, z) + _one_minus_z(a, b, c - 2 * d, z))
    return fnp.where(integer, (4.0 * avg1 - avg2) / 3.0, plain)


def _hyp2f1_unit(a, b, c, z, poly):
    """2F1 for 0 <= z < 1 (any z for a terminating series)."""
    direct = (z <= _DIRECT_TO) | poly
    zd = safe(~direct, z, 0.0)
    zn = safe(direct, z, 0.95)
    return fnp.where(direct, _series([a, b], [c], zd, 700), _near_one(a, b, c, zn))


def _hyp2f1(a, b, c, x):
    poly_a, poly_b = _is_nonpos_int(a), _is_nonpos_int(b)
    poly = poly_a | poly_b
    # Pfaff for x < 0 (the polynomial parameter kept first, so the sum still terminates)
    pfaff = (x < 0) & ~poly
    a1 = fnp.where(poly_b & ~poly_a, b, a)
    b1 = fnp.where(poly_b & ~poly_a, a, b)
    xs = safe(~pfaff, x, -1.0)
    z = fnp.where(pfaff, xs / (xs - 1.0), x)
    bb = fnp.where(pfaff, c - b1, b1)
    inside = poly | ((x < 1) & (x >= 0)) | pfaff
    v = _hyp2f1_unit(a1, bb, c, safe(~inside | ((x == 1) & ~poly), z, 0.0), poly)
    v = fnp.where(pfaff, fnp.exp(-a1 * fnp.log1p(-xs)) * v, v)
    # x = 1: Gauss's sum
    m = c - a - b
    s_c, l_c = _gamma_signed(c)
    s1, l1 = _gamma_signed(safe(m <= 0, m, 1.0))
    s2, l2 = _gamma_signed(c - a)
    s3, l3 = _gamma_signed(c - b)
    gauss = fnp.where(m > 0, s_c * s1 * s2 * s3 * fnp.exp(l_c + l1 - l2 - l3), math.inf)
    v = fnp.where((x == 1) & ~poly, gauss, fnp.where(inside, v, math.inf))
    return fnp.where(_is_nonpos_int(c), math.inf, v)


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function ``2F1(a, b; c; x)`` for real ``x <= 1`` (``x > 1``:
    finite for a terminating series, ``inf`` otherwise, as SciPy).

    >>> round(float(hyp2f1(1.0, 1.0, 2.0, -1.0)), 12)   # log(2)
    0.69314718056
    """
    return in_float64("hyp2f1", _hyp2f1, a, b, c, x)
