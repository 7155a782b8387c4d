"""The Faddeeva function and its relatives: ``wofz``, ``dawsn``, ``fresnel``.

- ``wofz(z) = exp(-z^2) erfc(-i z)``: in the upper half plane Weideman's rational series
  (SIAM J. Numer. Anal. 31, 1994) with N = 40 terms, ``w = 2 p(Z) / (L - i z)^2 +
  1 / (sqrt(pi) (L - i z))``, ``Z = (L + i z) / (L - i z)``, ``L = sqrt(N / sqrt 2)``, the
  coefficients of ``p`` from one FFT at import (relative error ~1e-14 against SciPy);
  beyond |z| = 60 Laplace's continued fraction ``(i / sqrt(pi)) / (z - (1/2) / (z - 1 /
  (z - ...)))`` (10 levels). Below the real axis ``w(z) = 2 exp(-z^2) - w(-z)`` (which
  overflows far down, as SciPy's). Holomorphic composites: ``grad`` gives ``w'(z) = -2 z
  w(z) + 2 i / sqrt(pi)`` to rounding.
- ``dawsn(x) = sqrt(pi)/2 Im w(x)``: its Maclaurin series (all terms of one sign ratio, 24
  terms) for |x| < 1, Weideman's series for 1 <= |x| <= 6, the asymptotic series
  ``sum_k (2k-1)!! / (2^(k+1) x^(2k+1))`` (30 terms) beyond.
- ``fresnel(x) = (S(x), C(x))``: Maclaurin series for |x| < 1; beyond, from ``C + i S =
  (1 + i)/2 (1 - exp(i pi x^2 / 2) w(sqrt(pi) (1 + i) x / 2))``, odd in x, 1/2 at infinity
  (and beyond 1e150, where SciPy's NaN comes from ``x^2`` overflowing). The phase ``pi x^2 /
  2`` is reduced exactly (Dekker's split of x^2), so the oscillating term is right far out
  where SciPy's rounded phase is off by up to ~1e-12 relative.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util
from funcgrad.scipy.special._util import float_args, horner, in_float64, out, safe

__all__ = ["wofz", "dawsn", "fresnel"]

_N = 40
_SQRT_PI = math.sqrt(math.pi)


def _weideman_coefs(n):
    m = 2 * n
    k = np.arange(-m + 1, m)
    L = math.sqrt(n / math.sqrt(2))
    t = L * np.tan(k * np.pi / (2 * m))
    f = np.r_[0.0, np.exp(-t * t) * (L * L + t * t)]
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return [float(c) for c in a[1:n + 1]], L  # lowest power first


_COEFS, _L = _weideman_coefs(_N)
_CF_FROM = 60.0
_CF_LEVELS = 10


def _w_upper(z):
    """w(z) for Im z >= 0 (complex128)."""
    big = fnp.abs(z) > _CF_FROM
    zs = safe(big, z, 0j)
    zb = safe(~big, z, complex(_CF_FROM + 1.0))
    d = _L - 1j * zs
    series = 2.0 * horner(_COEFS, (_L + 1j * zs) / d) / (d * d) + (1.0 / _SQRT_PI) / d
    cf = zb
    for k in range(_CF_LEVELS, 0, -1):
        cf = zb - (k / 2.0) / cf
    return fnp.where(big, (1j / _SQRT_PI) / cf, series)


def _wofz(z):
    lower = fnp.imag(z) < 0
    zu = fnp.where(lower, -z, z)
    w = _w_upper(zu)
    # (where the reflection's exp(-z^2) overflows, SciPy's value is inf as well)
    return fnp.where(lower, 2.0 * fnp.exp(-z * z) - w, w)


def wofz(z):
    """The Faddeeva function ``w(z) = exp(-z^2) erfc(-i z)`` (complex; a real ``z`` gives a
    complex result, as SciPy). Differentiable (holomorphic).

    >>> complex(fnp.round(wofz(1j), 12))   # w(i y) = erfcx(y)
    (0.427583576156+0j)
    """
    (z,) = float_args("wofz", z)
    dtype = _util.aval_of(z).dtype
    cdt = np.result_type(dtype, np.complex64)
    z = lax.convert_element_type(z, np.dtype(np.complex128))
    with np.errstate(all="ignore"):
        w = _wofz(z)
    return out(lax.convert_element_type(w, cdt) if cdt != np.complex128 else w)


def _w_real_imag(x):
    """Im w(x) for real x (through the complex series)."""
    return fnp.imag(_w_upper(lax.convert_element_type(x, np.dtype(np.complex128))))


_DAWSN_SERIES = [(-2.0) ** k / math.prod(range(1, 2 * k + 2, 2)) for k in range(24)]  # x^(2k+1) coefficients
_DAWSN_ASYM = [math.prod(range(1, 2 * k, 2)) / 2.0 ** (k + 1) for k in range(30)]  # x^-(2k+1)


def _dawsn(x):
    ax = fnp.abs(x)
    small, large = ax < 1.0, ax > 6.0
    xs = safe(~small, x, 0.5)
    xl = safe(~large, x, 7.0)
    xm = safe(small | large, x, 2.0)
    series = xs * horner(_DAWSN_SERIES, xs * xs)
    asym = horner(_DAWSN_ASYM, 1.0 / (xl * xl)) / xl
    mid = (_SQRT_PI / 2.0) * _w_real_imag(xm)
    return fnp.where(small, series, fnp.where(large, asym, mid))


def dawsn(x):
    """Dawson's integral ``D(x) = exp(-x^2) int_0^x exp(t^2) dt`` (odd; ``D'(x) = 1 - 2 x D``).

    >>> round(float(dawsn(1.0)), 12)
    0.538079506913
    """
    return in_float64("dawsn", _dawsn, x)


_FS = [(-1.0) ** n * (math.pi / 2) ** (2 * n + 1) / (math.factorial(2 * n + 1) * (4 * n + 3)) for n in range(14)]
_FC = [(-1.0) ** n * (math.pi / 2) ** (2 * n) / (math.factorial(2 * n) * (4 * n + 1)) for n in range(14)]


def _half_pi_square(x):
    """``pi x^2 / 2`` reduced modulo 2 pi without rounding the phase: x^2 split exactly
    into ``hi + lo`` (Dekker), ``hi / 2`` reduced modulo 2 exactly (``fmod``). The naive
    product's rounding error (~1e-6 rad at x = 1e5) would show in the oscillating term."""
    hi = x * x
    big = x * 134217729.0  # 2^27 + 1: Dekker's split
    xh = big - (big - x)
    xl = x - xh
    lo = ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl
    return math.pi * (fnp.fmod(0.5 * hi, 2.0) + 0.5 * lo)


def _fresnel(x):
    ax = fnp.abs(x)
    small = ax < 1.0
    huge = ax > 1e150  # (x^2 overflows: the limits)
    xs = safe(~small, ax, 0.5)
    xb = safe(small | huge, ax, 2.0)
    x4 = xs**4
    s_small = xs**3 * horner(_FS, x4)
    c_small = xs * horner(_FC, x4)
    zeta = (_SQRT_PI * (1 + 1j) / 2.0) * lax.convert_element_type(xb, np.dtype(np.complex128))
    t = _half_pi_square(xb)
    phase = lax.complex(fnp.cos(t), fnp.sin(t))
    cs = (1 + 1j) / 2.0 * (1.0 - phase * _w_upper(zeta))
    s = fnp.where(small, s_small, fnp.where(huge, 0.5, fnp.imag(cs)))
    c = fnp.where(small, c_small, fnp.where(huge, 0.5, fnp.real(cs)))
    sign = fnp.where(x < 0, -1.0, 1.0)
    return sign * s, sign * c


def fresnel(x):
    """The Fresnel integrals ``(S(x), C(x))``: ``S = int_0^x sin(pi t^2 / 2) dt``,
    ``C = int_0^x cos(pi t^2 / 2) dt`` (odd; both tend to 1/2).

    >>> s, c = fresnel(1.0)
    >>> round(float(s), 12), round(float(c), 12)
    (0.43825914739, 0.779893400377)
    """
    s = in_float64("fresnel", lambda x: _fresnel(x)[0], x)
    c = in_float64("fresnel", lambda x: _fresnel(x)[1], x)
    return s, c
