"""The error function family and the standard normal distribution: erf, erfc, erfinv,
erfcx, ndtr, log_ndtr, ndtri, owens_t.

erf, erfc and erfinv are primitives (``funcgrad/core/prims/special.py``); the rest are
composites of them, computed in float64 (see ``_util.in_float64``):

- ``ndtr`` follows Cephes: ``0.5 + 0.5 erf(x/sqrt 2)`` near 0, ``0.5 erfc(|x|/sqrt 2)``
  (or one minus it) outside, so the lower tail keeps its relative accuracy.
- ``erfcx(x) = exp(x^2) erfc(x)`` is that product for x < 10 (the rounding of ``x*x``
  costs at most ``x^2`` ulp there, < 1.2e-14) and the asymptotic series
  ``1/(x sqrt pi) sum_k (-1)^k (2k-1)!! / (2x^2)^k`` beyond (15 terms: < 1e-17 at 10).
- ``log_ndtr`` is SciPy's: ``log1p(-erfc(x/sqrt 2)/2)`` for x >= -1 and
  ``log(erfcx(-x/sqrt 2)/2) - x^2/2`` below, accurate however far in the lower tail.
  Its derivative is ``exp(log_pdf(x) - log_ndtr(x))`` (a custom JVP, as in JAX).
- ``ndtri`` is ``sqrt 2 erfinv(2p - 1)`` on [0.25, 0.75] (where ``2p - 1`` is exact); in
  the tails Abramowitz & Stegun 26.2.23 starts four Newton steps on
  ``log_ndtr(z) = log p``, so ``ndtri(1e-300)`` keeps full relative accuracy. Its
  derivative is ``sqrt(2 pi) exp(z^2 / 2)`` (a custom JVP).
- ``owens_t(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt``: for
  ``|a| <= 1`` 48-point Gauss-Legendre quadrature of ``exp(-h^2 t^2 / 2) / (1 + t^2)`` over
  ``[0, min(|a|, 9 / |h|)]`` (beyond 9 widths the integrand is below 1e-17 of its peak),
  times ``exp(-h^2 / 2)``; for ``|a| > 1`` Owen's identity ``T(h, a) = (ndtr(h) ndtr(-a h) +
  ndtr(a h) ndtr(-h)) / 2 - T(a h, 1 / a)`` (h >= 0; all terms of one sign: no
  cancellation in the tail). Even in ``h``, odd in ``a``.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core.prims import special as _sp
from funcgrad.scipy.special._util import horner, in_float64, safe, unary
from funcgrad.transforms.custom import custom_jvp

__all__ = ["erf", "erfc", "erfinv", "erfcx", "ndtr", "log_ndtr", "ndtri", "owens_t"]

erf = unary("erf", _sp.erf, "Error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.")
erfc = unary("erfc", _sp.erfc, "Complementary error function ``1 - erf(x)``, accurate for large ``x``.")
erfinv = unary("erfinv", _sp.erf_inv, "Inverse of ``erf`` on (-1, 1); +-inf at +-1, NaN outside.")

_SQRT1_2 = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_ERFCX_ASYMPTOTIC_FROM = 10.0
_ERFCX_COEFS = [(-1.0) ** k * math.prod(range(1, 2 * k, 2)) for k in range(15)]  # (-1)^k (2k-1)!!


def _ndtr(x):
    t = x * _SQRT1_2
    z = fnp.abs(t)
    half_erfc = 0.5 * _sp.erfc(z)
    outer = fnp.where(t > 0, 1.0 - half_erfc, half_erfc)
    return fnp.where(z < _SQRT1_2, 0.5 + 0.5 * _sp.erf(t), outer)


def _erfcx(x):
    big = x >= _ERFCX_ASYMPTOTIC_FROM
    xs = safe(big, x, 0.0)
    xb = safe(~big, x, _ERFCX_ASYMPTOTIC_FROM)
    direct = fnp.exp(xs * xs) * _sp.erfc(xs)
    asymptotic = _INV_SQRT_PI / xb * horner(_ERFCX_COEFS, 0.5 / (xb * xb))
    return fnp.where(big, asymptotic, direct)


def _log_ndtr_raw(x):
    t = x * _SQRT1_2
    low = x < -1.0
    t_low = safe(~low, t, -1.0)
    t_high = safe(low, t, 0.0)
    lower = fnp.log(0.5 * _erfcx(-t_low)) - t_low * t_low
    return fnp.where(low, lower, fnp.log1p(-0.5 * _sp.erfc(t_high)))


@custom_jvp
def _log_ndtr(x):
    return _log_ndtr_raw(x)


@_log_ndtr.defjvp
def _log_ndtr_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x)
    return ans, t * fnp.exp(-0.5 * x * x - _LOG_SQRT_2PI - ans)


# Abramowitz & Stegun 26.2.23: |error| < 4.5e-4, the start of the Newton iteration.
_AS_NUM = [2.515517, 0.802853, 0.010328]
_AS_DEN = [1.0, 1.432788, 0.189269, 0.001308]


def _ndtri_lower(p):
    """ndtri(p) for 0 < p < 0.25 (Newton on log_ndtr(z) = log p)."""
    t = fnp.sqrt(-2.0 * fnp.log(p))
    z = -(t - horner(_AS_NUM, t) / horner(_AS_DEN, t))
    log_p = fnp.log(p)
    for _ in range(4):
        log_cdf = _log_ndtr_raw(z)
        slope = fnp.exp(-0.5 * z * z - _LOG_SQRT_2PI - log_cdf)  # d log_ndtr / dz
        z = z - (log_cdf - log_p) / slope
    return z


@custom_jvp
def _ndtri(p):
    central = (p >= 0.25) & (p <= 0.75)
    upper = p > 0.75
    p_c = safe(~central, p, 0.5)
    tail_p = fnp.where(upper, 1.0 - p, p)  # exact for p > 0.75
    tail_p = safe(central | ~(tail_p > 0.0), tail_p, 0.1)
    tail = _ndtri_lower(tail_p)
    z = fnp.where(central, math.sqrt(2.0) * _sp.erf_inv(2.0 * p_c - 1.0), fnp.where(upper, -tail, tail))
    z = fnp.where(p == 0.0, -math.inf, fnp.where(p == 1.0, math.inf, z))
    return fnp.where((p < 0.0) | (p > 1.0) | (p != p), math.nan, z)


@_ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    z = _ndtri(p)
    return z, t * fnp.exp(0.5 * z * z + _LOG_SQRT_2PI)


def ndtr(x):
    """Standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``, accurate in the lower tail.

    >>> float(ndtr(0.0))
    0.5
    """
    return in_float64("ndtr", _ndtr, x)


def log_ndtr(x):
    """``log(ndtr(x))``, accurate far in both tails (``log_ndtr(-40) = -804.6...``)."""
    return in_float64("log_ndtr", _log_ndtr, x)


def ndtri(p):
    """Inverse of ``ndtr``: the standard normal quantile; -inf at 0, inf at 1, NaN outside."""
    return in_float64("ndtri", _ndtri, p)


def erfcx(x):
    """Scaled complementary error function ``exp(x^2) erfc(x)`` (no overflow for large x)."""
    return in_float64("erfcx", _erfcx, x)


_GL_NODES, _GL_WEIGHTS = (list(map(float, v)) for v in np.polynomial.legendre.leggauss(48))


def _owens_t_small_a(h, a):
    """T(h, a) for h >= 0, 0 <= a <= 1."""
    far = h == math.inf
    h = safe(far, h, 1.0)
    hs = safe(h == 0, h, 1.0)
    b = fnp.where(h == 0, a, fnp.minimum(a, 9.0 / hs))
    total = fnp.zeros_like(h)
    for node, weight in zip(_GL_NODES, _GL_WEIGHTS):
        t = 0.5 * b * (node + 1.0)
        total = total + weight * fnp.exp(-0.5 * h * h * t * t) / (1.0 + t * t)
    return fnp.where(far, 0.0, fnp.exp(-0.5 * h * h) * 0.5 * b * total / (2.0 * math.pi))


def _owens_t(h, a):
    h, aa = fnp.abs(h), fnp.abs(a)
    small = aa <= 1.0
    a_small = safe(~small, aa, 0.5)
    a_big = safe(small, aa, 2.0)
    ah = safe(h == 0, a_big * h, 1.0)  # (h = 0: the closed form below)
    big = 0.5 * (_ndtr(h) * _ndtr(-ah) + _ndtr(ah) * _ndtr(-h)) - _owens_t_small_a(ah, 1.0 / a_big)
    v = fnp.where(small, _owens_t_small_a(h, a_small), big)
    v = fnp.where(h == 0, fnp.arctan(aa) / (2.0 * math.pi), v)
    v = fnp.where(h == math.inf, 0.0, v)
    v = fnp.where(a < 0, -v, v)
    return fnp.where(fnp.isnan(a), math.nan, v)  # T(inf, nan) is NaN, as SciPy


def owens_t(h, a):
    """Owen's T function ``T(h, a)``: the probability that ``X > h`` and ``0 < Y < a X`` for
    independent standard normals X, Y. Differentiable in ``h`` and ``a``.

    >>> round(float(owens_t(0.0, 1.0)), 12)   # arctan(1) / (2 pi)
    0.125
    """
    return in_float64("owens_t", _owens_t, h, a)
