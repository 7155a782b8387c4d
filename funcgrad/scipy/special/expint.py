"""Exponential integrals: ``exp1(x) = E1(x) = int_x^inf e^-t / t dt`` and
``expi(x) = Ei(x) = -PV int_-x^inf e^-t / t dt``.

- E1 (x > 0): the series ``-gamma - log x - sum_k (-x)^k / (k k!)`` for x <= 2 (28 terms);
  the continued fraction ``e^-x / (x + 1 - 1/(x + 3 - 4/(x + 5 - ...)))`` beyond, as
  Numerical Recipes, 60 steps of Lentz's method unrolled (converged to 1e-16 at x = 2).
- Ei (x > 0): ``gamma + log x + sum_k x^k / (k k!)`` (positive terms, 110 of them) for
  x < 40; ``e^x / x sum_k k! / x^k`` (40 terms, still decreasing) beyond. Ei(x < 0) is
  ``-E1(-x)``. Near Ei's root 0.3725 the relative error grows like any float64
  implementation's (SciPy's included); the absolute error stays ~1e-16.

As SciPy: ``exp1(0) = inf``, ``exp1(x < 0) = NaN`` (its real part is ``-expi(-x)``: the
real function has no value there); ``expi(0) = -inf``, ``expi(-inf) = -0``.

- ``expn(n, x) = int_1^inf e^(-x t) / t^n dt`` (``n`` truncated to an integer, as SciPy):
  for x <= 1 the series ``(-x)^(n-1)/(n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k /
  ((k - n + 1) k!)`` (30 terms), beyond the continued fraction ``e^-x / (x + n - 1 n / (x +
  n + 2 - 2 (n+1) / ...))`` evaluated bottom-up from 100 levels (converged to 1e-15 at x = 1).
- ``sici(x) = (Si(x), Ci(x))``: Maclaurin series for |x| <= 4; beyond, ``Ci - i (Si -
  pi/2) = -E1(i x)`` with E1's continued fraction in complex arithmetic (60 levels).
  ``Ci(-x)`` is ``Ci(x)`` (SciPy's real part), ``Ci(0) = -inf``.
- ``spence(x) = int_1^x log t / (1 - t) dt = Li2(1 - x)`` (x >= 0): Cephes's reductions
  (``x > 2``: ``1/x``; ``x < 1/2``: Euler's reflection; ``x > 3/2``: the inversion) to
  ``Li2(u)`` with ``|u| <= 1/2``, summed as ``sum_k u^k / k^2`` (55 terms).
"""
from __future__ import annotations

import math

import funcgrad.numpy as fnp
from funcgrad.core import lax_api as lax
from funcgrad.core.prims import special as _sp
from funcgrad.scipy.special._util import horner, in_float64, safe

__all__ = ["exp1", "expi", "expn", "sici", "spence"]

_EULER = 0.5772156649015329
_E1_SERIES_TO = 2.0
_E1_SERIES = [0.0] + [(-1.0) ** (k + 1) / (k * math.factorial(k)) for k in range(1, 29)]
_E1_CF_STEPS = 60
_EI_SERIES_BELOW = 40.0
_EI_SERIES = [0.0] + [1.0 / (k * math.factorial(k)) for k in range(1, 111)]
_EI_ASYMPTOTIC = [float(math.factorial(k)) for k in range(40)]


def _e1_positive(x):
    """E1 for x > 0 (finite)."""
    low = x <= _E1_SERIES_TO
    xs = safe(~low, x, 1.0)
    xc = safe(low, x, 2.0 * _E1_SERIES_TO)
    series = -_EULER - fnp.log(xs) + horner(_E1_SERIES, xs)
    b = xc + 1.0
    c = fnp.full_like(xc, 1e300)
    d = 1.0 / b
    h = d
    for i in range(1, _E1_CF_STEPS):
        an = -float(i * i)
        b = b + 2.0
        d = 1.0 / (an * d + b)
        c = b + an / c
        h = h * c * d
    return fnp.where(low, series, h * fnp.exp(-xc))


def _exp1(x):
    pos = (x > 0) & (x < math.inf)
    v = _e1_positive(safe(~pos, x, 1.0))
    v = fnp.where(x == 0, math.inf, fnp.where(x == math.inf, 0.0, v))
    return fnp.where((x < 0) | (x != x), math.nan, v)


def _expi(x):
    pos = (x > 0) & (x < math.inf)
    small = x < _EI_SERIES_BELOW
    xs = safe(~(pos & small), x, 1.0)
    xb = safe(~(pos & ~small), x, _EI_SERIES_BELOW)
    series = _EULER + fnp.log(xs) + horner(_EI_SERIES, xs)
    asymptotic = fnp.exp(xb) / xb * horner(_EI_ASYMPTOTIC, 1.0 / xb)
    neg = (x < 0) & (x > -math.inf)
    negative = -_e1_positive(safe(~neg, -x, 1.0))
    v = fnp.where(small, series, asymptotic)
    v = fnp.where(neg, negative, v)
    v = fnp.where(x == 0, -math.inf, fnp.where(x == -math.inf, -0.0, v))
    v = fnp.where(x == math.inf, math.inf, v)
    return fnp.where(x != x, math.nan, v)


def exp1(x):
    """Exponential integral ``E1(x) = int_x^inf exp(-t)/t dt`` (x > 0).

    >>> round(float(exp1(1.0)), 12)
    0.219383934396
    """
    return in_float64("exp1", _exp1, x)


def expi(x):
    """Exponential integral ``Ei(x)`` (principal value for x > 0)."""
    return in_float64("expi", _expi, x)


_EN_SERIES_TERMS = 30
_EN_CF_LEVELS = 100


def _expn(n, x):
    n = fnp.trunc(n)
    bad = (n < 0) | fnp.isnan(n) | (x < 0) | fnp.isnan(x)
    pos = (x > 0) & (x < math.inf) & ~bad
    low, high = pos & (x <= 1.0) & (n >= 1), pos & (x > 1.0)
    # The series (x <= 1, n >= 1); the k = n - 1 term is the logarithmic one.
    xs, ns = safe(~low, x, 0.5), safe(~low, n, 1.0)
    total = fnp.zeros_like(xs)
    power = fnp.ones_like(xs)  # (-x)^k / k!
    for k in range(_EN_SERIES_TERMS):
        denom = k - ns + 1.0
        total = total + fnp.where(denom == 0, 0.0, power / safe(denom == 0, denom, 1.0))
        power = power * (-xs) / (k + 1.0)
    lead = fnp.exp((ns - 1.0) * fnp.log(xs) - _sp.lgamma(ns)) * (_sp.digamma(ns) - fnp.log(xs))
    series = fnp.where(fnp.remainder(ns, 2.0) == 0.0, -lead, lead) - total  # (-1)^(n-1)
    # The continued fraction (x > 1), bottom-up.
    xc, nc = safe(~high, x, 2.0), safe(~high, n, 1.0)
    d = xc + nc + 2.0 * _EN_CF_LEVELS
    for j in range(_EN_CF_LEVELS, 0, -1):
        d = xc + nc + 2.0 * (j - 1) - j * (nc + j - 1.0) / d
    cf = fnp.exp(-xc) / d
    x0 = safe(~pos, x, 1.0)
    v = fnp.where(high, cf, fnp.where(n == 0, fnp.exp(-x0) / x0, series))
    at_zero = fnp.where(n <= 1, math.inf, 1.0 / safe(n <= 1, n - 1.0, 2.0))
    v = fnp.where(x == 0, at_zero, fnp.where(x == math.inf, 0.0, v))
    return fnp.where(bad, math.nan, v)


def expn(n, x):
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t^n dt``
    (``n`` truncated to an integer, as SciPy; NaN for ``n < 0`` or ``x < 0``,
    ``E_n(0) = 1 / (n - 1)``). Differentiable in ``x`` (``E_n' = -E_(n-1)``).

    >>> round(float(expn(2, 1.0)), 12)
    0.148495506776
    """
    return in_float64("expn", _expn, n, x)


_SI_SERIES = [(-1.0) ** k / ((2 * k + 1) * math.factorial(2 * k + 1)) for k in range(22)]  # x^(2k+1)
_CI_SERIES = [0.0] + [(-1.0) ** k / (2 * k * math.factorial(2 * k)) for k in range(1, 22)]  # x^(2k)
_SICI_SERIES_TO = 4.0
_SICI_CF_LEVELS = 60


def _sici(x):
    ax = fnp.abs(x)
    small = ax <= _SICI_SERIES_TO
    finite = ax < math.inf
    xs = safe(~small | (ax == 0), ax, 1.0)
    x2 = xs * xs
    si_small = xs * horner(_SI_SERIES, x2)
    ci_small = _EULER + fnp.log(xs) + horner(_CI_SERIES, x2)
    xb = safe(small | ~finite, ax, 2.0 * _SICI_SERIES_TO)
    z = lax.complex(fnp.zeros_like(xb), xb)  # i x
    d = z + (2.0 * _SICI_CF_LEVELS + 1.0)
    for k in range(_SICI_CF_LEVELS, 0, -1):
        d = z + (2.0 * k - 1.0) - float(k * k) / d
    e1 = lax.complex(fnp.cos(xb), -fnp.sin(xb)) / d  # E1(i x) = e^(-i x) / d
    si = fnp.where(small, si_small, math.pi / 2 + fnp.imag(e1))
    ci = fnp.where(small, ci_small, -fnp.real(e1))
    si = fnp.where(ax == 0, 0.0, fnp.where(finite, si, math.pi / 2))
    ci = fnp.where(ax == 0, -math.inf, fnp.where(finite, ci, 0.0))
    nan = fnp.isnan(x)
    si = fnp.where(nan, math.nan, fnp.where(x < 0, -si, si))
    return si, fnp.where(nan | (x == -math.inf), math.nan, ci)  # (SciPy: Ci(-inf) is NaN)


def sici(x):
    """The sine and cosine integrals ``(Si(x), Ci(x))``: ``Si = int_0^x sin t / t dt``,
    ``Ci = gamma + log x + int_0^x (cos t - 1) / t dt`` (for ``x < 0`` Ci's real part,
    ``Ci(|x|)``, as SciPy).

    >>> si, ci = sici(1.0)
    >>> round(float(si), 12), round(float(ci), 12)
    (0.946083070367, 0.337403922901)
    """
    si = in_float64("sici", lambda x: _sici(x)[0], x)
    ci = in_float64("sici", lambda x: _sici(x)[1], x)
    return si, ci


_LI2 = [0.0] + [1.0 / (k * k) for k in range(1, 56)]
_PI2_6 = math.pi**2 / 6


def _spence(x):
    bad = (x < 0) | fnp.isnan(x)
    xv = safe(bad | (x == 0), x, 1.0)
    inverted = xv > 2.0
    x1 = fnp.where(inverted, 1.0 / xv, xv)
    reflect = x1 < 0.5
    over = x1 > 1.5
    w = fnp.where(over, 1.0 / x1 - 1.0, fnp.where(reflect, -x1, x1 - 1.0))
    y = horner(_LI2, -w)  # Li2(-w), |w| <= 1/2
    xr = safe(~reflect, x1, 0.25)
    y = fnp.where(reflect, _PI2_6 - fnp.log(xr) * fnp.log1p(-xr) - y, y)
    lx = fnp.log(x1)
    y = fnp.where(inverted | over, -0.5 * lx * lx - y, y)
    return fnp.where(bad | (x == math.inf), math.nan, fnp.where(x == 0, _PI2_6, y))


def spence(x):
    """Spence's function ``int_1^x log t / (1 - t) dt`` (the dilogarithm ``Li2(1 - x)``)
    for real ``x >= 0`` (NaN below and at ``inf``, as SciPy's real ``spence``).

    >>> round(float(spence(0.0)), 12)   # pi^2 / 6
    1.644934066848
    """
    return in_float64("spence", _spence, x)
