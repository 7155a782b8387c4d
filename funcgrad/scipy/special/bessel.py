"""Modified Bessel functions of the first kind, orders 0 and 1: i0, i0e, i1, i1e.

Two expansions, each with positive terms or well inside its range of convergence:
for ``|x| < 30`` the power series ``I_nu(x) = (x/2)^nu sum_k (x^2/4)^k / (k! (k+nu)!)``
(all terms positive, 60 terms: the remainder is < 1e-30 relative at 30); beyond, the
asymptotic series ``I_nu(x) e^-x = (2 pi x)^(-1/2) sum_k (-1)^k a_k(nu) / x^k`` with
``a_k = prod_{j<=k} (4 nu^2 - (2j-1)^2) / (k! 8^k)``, 30 terms (still decreasing at
x = 30, where the last is ~1e-21). Both are one polynomial (Horner), so the functions are
loop-free composites; derivatives follow by differentiation (``i0' = i1``).
The exponentially scaled forms ``i0e = e^-|x| i0``, ``i1e = e^-|x| i1`` never overflow.
At +-inf SciPy gives NaN for i0/i1 (and 0 for the scaled ones); so does this.
"""
from __future__ import annotations

import math

import funcgrad.numpy as fnp
from funcgrad.scipy.special._util import horner, in_float64, safe

__all__ = ["i0", "i0e", "i1", "i1e"]

_SERIES_BELOW = 30.0
_SERIES = {nu: [1.0 / (math.factorial(k) * math.factorial(k + nu)) for k in range(60)] for nu in (0, 1)}


def _asymptotic_coefs(nu, terms=30):
    coefs, a = [], 1.0
    for k in range(terms):
        coefs.append((-1.0) ** k * a)
        a = a * (4 * nu * nu - (2 * k + 1) ** 2) / ((k + 1) * 8)
    return coefs


_ASYMPTOTIC = {nu: _asymptotic_coefs(nu) for nu in (0, 1)}


def _parts(nu, x):
    """(series value of I_nu(|x|) for |x| < 30, asymptotic e^-|x| I_nu(|x|) beyond, mask)."""
    ax = fnp.abs(x)
    small = ax < _SERIES_BELOW
    xs = safe(~small, ax, 1.0)
    xb = safe(small, ax, _SERIES_BELOW)
    series = horner(_SERIES[nu], 0.25 * xs * xs)
    if nu == 1:
        series = 0.5 * xs * series
    scaled = horner(_ASYMPTOTIC[nu], 1.0 / xb) / fnp.sqrt(2.0 * math.pi * xb)
    return series, scaled, small, xs, xb


def _bessel(nu, x, exp_scaled):
    series, scaled, small, xs, xb = _parts(nu, x)
    if exp_scaled:
        v = fnp.where(small, fnp.exp(-xs) * series, scaled)
    else:
        v = fnp.where(small, series, fnp.exp(xb) * scaled)
        v = fnp.where(fnp.abs(x) == math.inf, math.nan, v)
    return fnp.where(x < 0, -v, v) if nu == 1 else v


def i0(x):
    """Modified Bessel function of the first kind, order 0."""
    return in_float64("i0", lambda x: _bessel(0, x, False), x)


def i0e(x):
    """Exponentially scaled ``i0``: ``exp(-|x|) i0(x)``."""
    return in_float64("i0e", lambda x: _bessel(0, x, True), x)


def i1(x):
    """Modified Bessel function of the first kind, order 1 (odd in x)."""
    return in_float64("i1", lambda x: _bessel(1, x, False), x)


def i1e(x):
    """Exponentially scaled ``i1``: ``exp(-|x|) i1(x)``."""
    return in_float64("i1e", lambda x: _bessel(1, x, True), x)
