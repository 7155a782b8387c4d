"""Modified Bessel functions of the first kind, orders 0 and 1: i0, i0e, i1, i1e; Bessel
functions of the first kind of integer orders 0..v: bessel_jn.

Two expansions, each with positive terms or well inside its range of convergence:
for ``|x| < 30`` the power series ``I_nu(x) = (x/2)^nu sum_k (x^2/4)^k / (k! (k+nu)!)``
(all terms positive, 60 terms: the remainder is < 1e-30 relative at 30); beyond, the
asymptotic series ``I_nu(x) e^-x = (2 pi x)^(-1/2) sum_k (-1)^k a_k(nu) / x^k`` with
``a_k = prod_{j<=k} (4 nu^2 - (2j-1)^2) / (k! 8^k)``, 30 terms (still decreasing at
x = 30, where the last is ~1e-21). Both are one polynomial (Horner), so the functions are
loop-free composites; derivatives follow by differentiation (``i0' = i1``).
The exponentially scaled forms ``i0e = e^-|x| i0``, ``i1e = e^-|x| i1`` never overflow.
At +-inf SciPy gives NaN for i0/i1 (and 0 for the scaled ones); so does this.

``bessel_jn(z, v=v, n_iter=50)`` is Miller's backward recurrence, as JAX's (Zhang & Jin,
*Computation of special functions*): ``f_(k-1) = 2k f_k / z - f_(k+1)`` from order
``n_iter`` down to 0, normalised by ``J_0 + 2 sum_k J_2k = 1``; the running values are
rescaled whenever they pass 1e150; below |z| = 1 the power series (18 terms) instead, so
tiny ``z`` keeps its relative accuracy. Accurate while ``n_iter`` clears |z| by a margin
(JAX's rule of thumb; with the default 50, |z| up to about 30); the ``n_iter`` start is
JAX's semantics, so larger |z| need a larger ``n_iter``.
"""
from __future__ import annotations

import math
import operator

import funcgrad.numpy as fnp
from funcgrad.scipy.special._util import horner, in_float64, safe

__all__ = ["i0", "i0e", "i1", "i1e", "bessel_jn"]

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


def _bessel_jn_series(z, v):
    """J_0..J_v for |z| < 1: ``(z/2)^n / n! sum_k (-z^2/4)^k / (k! (n+1)_k)``, 18 terms."""
    q = -0.25 * z * z
    rows, lead = [], fnp.ones_like(z)
    for n in range(v + 1):
        coefs = [1.0 / (math.factorial(k) * math.prod(range(n + 1, n + k + 1))) for k in range(18)]
        rows.append(lead * horner(coefs, q))
        lead = lead * (0.5 * z) / (n + 1.0)
    return rows


def _bessel_jn(z, v, n_iter):
    small = fnp.abs(z) < 1.0
    zs = safe(small, z, 1.0)
    f_next = fnp.zeros_like(zs)  # f_(k+1)
    f = fnp.full_like(zs, 1e-16)  # f_k, k = n_iter
    norm = fnp.zeros_like(zs)
    kept = {}
    for k in range(n_iter, -1, -1):
        if k <= v:
            kept[k] = f
        if k % 2 == 0:
            norm = norm + (2.0 * f if k else f)
        if k == 0:
            break
        f_prev = 2.0 * k * f / zs - f_next
        big = fnp.abs(f_prev) > 1e150
        scale = fnp.where(big, 1e-150, 1.0)
        f_next, f = f * scale, f_prev * scale
        norm = norm * scale
        kept = {j: val * scale for j, val in kept.items()}
    rows = [kept[j] / norm if j in kept else fnp.zeros_like(zs) for j in range(v + 1)]
    series = _bessel_jn_series(safe(~small, z, 0.5), v)
    return fnp.stack([fnp.where(small, s, r) for s, r in zip(series, rows)])


def bessel_jn(z, *, v, n_iter=50):
    """Bessel functions of the first kind ``J_0(z) ... J_v(z)`` of real ``z``: an array of
    shape ``(v + 1, *z.shape)`` (as JAX's), by Miller's backward recurrence from order
    ``n_iter`` (see the module notes for its range).

    >>> [round(float(j), 12) for j in bessel_jn(np.array([1.0]), v=1)[:, 0]]
    [0.765197686558, 0.440050585745]
    """
    v, n_iter = operator.index(v), operator.index(n_iter)
    if v < 0 or n_iter < v:
        raise ValueError(f"bessel_jn: need 0 <= v <= n_iter, got v={v}, n_iter={n_iter}")
    return in_float64("bessel_jn", lambda z: _bessel_jn(z, v, n_iter), z)
