"""The Hurwitz zeta function ``zeta(x, q) = sum_{k>=0} (q + k)^-x`` (and Riemann's, q=None),
and the Bernoulli numbers (``bernoulli(n)``, exact rationals rounded once to float64).

Euler-Maclaurin summation, as Cephes: the first ``N = 12`` terms directly, then the
integral ``w^(1-x)/(x-1) + w^-x / 2`` at ``w = q + N`` and 12 Bernoulli corrections
``B_2j/(2j)! x(x+1)...(x+2j-2) w^(1-x-2j)`` (each ~(x/(2 pi w))^2j smaller than the last).
A fixed number of terms: one loop-free expression that vectorises and differentiates in
both ``x`` and ``q`` (JAX differentiates only in ``q``: ``-x zeta(x+1, q)``, which the
composite reproduces).

Edge values as SciPy: ``inf`` at ``x == 1`` and at non-positive integer ``q``; NaN for
``x < 1`` with ``q`` given, and for negative non-integer ``q`` with non-integer ``x``.
(One deviation: SciPy also sums negative non-integer ``q < -3`` with integer ``x``; here
that gives NaN.) Riemann's zeta (``q=None``) continues to ``x < 1``: Euler-Maclaurin for
``0 <= x < 1`` and the reflection formula ``2^x pi^(x-1) sin(pi x/2) Gamma(1-x) zeta(1-x)``
below 0, with exact zeros at the negative even integers.
"""
from __future__ import annotations

import math
import operator
from fractions import Fraction

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core.prims import special as _sp
from funcgrad.scipy.special._util import in_float64, safe

__all__ = ["zeta", "bernoulli"]

_HEAD = 12
_B2J = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
        -174611 / 330, 854513 / 138, -236364091 / 2730]
_EM_COEFS = [b / math.factorial(2 * j) for j, b in enumerate(_B2J, start=1)]


def _euler_maclaurin(s, q):
    """sum_k (q+k)^-s for s != 1 and q + 12 > 0 (valid for all such s by continuation)."""
    head = fnp.zeros_like(s)
    for k in range(_HEAD):
        head = head + fnp.power(q + k, -s)
    w = q + _HEAD
    tail = fnp.power(w, 1.0 - s) / (s - 1.0) + 0.5 * fnp.power(w, -s)
    w2 = w * w
    power = fnp.power(w, -s - 1.0)
    rising = s
    for j, c in enumerate(_EM_COEFS, start=1):
        tail = tail + c * rising * power
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        power = power / w2
    return head + tail


def _hurwitz(x, q):
    q_int = q == fnp.floor(q)
    x_int = x == fnp.floor(x)
    ok = (x > 1) & (q > -3.0) & ~(q_int & (q <= 0)) & ((q > 0) | x_int)
    v = _euler_maclaurin(safe(~ok, x, 2.0), safe(~ok, q, 1.0))
    v = fnp.where(ok, v, math.nan)
    return fnp.where((x == 1) | ((q <= 0) & q_int & (x > 1)), math.inf, v)


def _riemann(x):
    neg = x < 0
    direct = _euler_maclaurin(safe(neg | (x == 1), x, 2.0), fnp.ones_like(x))
    xn = safe(~neg, x, -1.0)
    # sin(pi x / 2) from x/2 reduced mod 2 (exact), so its zeros are exact.
    half_turns = fnp.remainder(0.5 * xn, 2.0)
    reflected = (fnp.power(2.0, xn) * fnp.power(math.pi, xn - 1.0) * fnp.sin(math.pi * half_turns)
                 * fnp.exp(_sp.lgamma(1.0 - xn)) * _euler_maclaurin(1.0 - xn, fnp.ones_like(xn)))
    v = fnp.where(neg, fnp.where(half_turns == fnp.floor(half_turns), 0.0, reflected), direct)
    return fnp.where(x == 1, math.inf, v)


def zeta(x, q=None):
    """Hurwitz zeta ``sum_{k>=0} (q + k)^-x``; Riemann's ``zeta(x)`` when ``q`` is None.

    >>> round(float(zeta(2.0, 1.0)), 12)  # pi^2 / 6
    1.644934066848
    """
    if q is None:
        return in_float64("zeta", _riemann, x)
    return in_float64("zeta", _hurwitz, x, q)


def bernoulli(n):
    """The Bernoulli numbers ``B_0 ... B_n`` as a float64 array of length ``n + 1`` (SciPy's
    convention ``B_1 = -1/2``), from the Akiyama-Tanigawa recurrence in exact rationals;
    ``n`` is a concrete non-negative integer.

    >>> bernoulli(4)
    Array([ 1.        , -0.5       ,  0.16666667,  0.        , -0.03333333])
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"bernoulli: n must be a concrete integer, got {n!r}") from None
    if n < 0:
        raise ValueError(f"bernoulli: n must be non-negative, got {n}")
    numbers, row = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])  # B_m with B_1 = +1/2
    if n >= 1:
        numbers[1] = -numbers[1]
    return fnp.asarray(np.array([float(b) for b in numbers], dtype=np.float64))
