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
"""
from __future__ import annotations

import math

import funcgrad.numpy as fnp
from funcgrad.scipy.special._util import horner, in_float64, safe

__all__ = ["exp1", "expi"]

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
