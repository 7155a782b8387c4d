"""The gamma function family: gammaln, digamma, polygamma (primitives), and as
composites gamma, rgamma, betaln, beta, multigammaln, factorial, comb, gammasgn,
loggamma, poch.

- ``gamma(x) = sign * exp(gammaln(x))`` and ``rgamma`` its reciprocal (0 at the poles);
  the relative error is that of ``gammaln`` times its size (< 1e-13 up to the overflow
  at 171.6).
- ``betaln`` uses Stirling's series for the large arguments (as R's ``lbeta``: the
  log-gamma *corrections* are subtracted, not the log-gammas themselves), so
  ``betaln(1e5, 1e5)`` keeps its relative accuracy; ``log|B(a, b)|`` for negative
  non-integer arguments.
- ``comb(N, k)`` is ``exp(-log1p(N) - betaln(N - k + 1, k + 1))`` (0 outside
  ``0 <= k <= N``, as SciPy); ``factorial(n)`` is ``gamma(n + 1)`` (0 for n < 0).
  ``exact=True`` needs concrete integers and returns Python ints, as SciPy's scalars.
- ``poch(z, m) = Gamma(z + m) / Gamma(z)`` is ``sign * exp(gammaln(z + m) - gammaln(z))``;
  for an integer ``m`` with ``z`` or ``z + m`` at a pole it is the reflected
  ``(-1)^m Gamma(1 - z) / Gamma(1 - z - m)`` (finite, or 0), as SciPy.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import lax_api as lax
from funcgrad.core.prims import special as _sp
from funcgrad.core.trace import Tracer
from funcgrad.numpy_api import _util
from funcgrad.scipy.special._util import float_args as _float_args
from funcgrad.scipy.special._util import horner, in_float64, safe
from funcgrad.scipy.special._util import out as _out
from funcgrad.scipy.special._util import unary as _unary

__all__ = [
    "gammaln", "digamma", "psi", "polygamma", "gamma", "rgamma", "betaln", "beta",
    "multigammaln", "factorial", "comb", "gammasgn", "loggamma", "poch",
]

gammaln = _unary("gammaln", _sp.lgamma, "``log|Gamma(x)|``; ``inf`` at the poles 0, -1, -2, ...")
digamma = _unary("digamma", _sp.digamma, "``d/dx log Gamma(x)``; NaN at the poles -1, -2, ...")
psi = digamma


def polygamma(n, x):
    """``n``-th derivative of ``digamma`` (``polygamma(0, x) == digamma(x)``).

    ``n`` must be concrete (a Python int or an integer-valued array of known values);
    each distinct order becomes one primitive and the results are selected by ``n``.
    """
    if isinstance(n, Tracer):
        raise TypeError("polygamma: the order n must be concrete (not traced); derivatives are only taken in x")
    n_arr = np.asarray(n)
    if n_arr.dtype.kind not in "iuf" or np.any(n_arr != np.round(n_arr)) or np.any(n_arr < 0):
        raise ValueError(f"polygamma: n must hold non-negative integers, got {n!r}")
    (x,) = _float_args("polygamma", x)
    if n_arr.ndim == 0:
        return _out(_polygamma_scalar(int(n_arr), x))
    shape = _util.broadcast_shapes("polygamma", n_arr.shape, _util.shape_of(x))
    x = _util.broadcast_to(x, shape)
    n_b = np.broadcast_to(n_arr, shape)
    orders = sorted({int(v) for v in n_b.ravel()})
    out = _polygamma_scalar(orders[0], x)
    for order in orders[1:]:
        out = lax.select(np.asarray(n_b == order), _polygamma_scalar(order, x), out)
    return _out(out)


def _polygamma_scalar(n: int, x):
    return _sp.digamma(x) if n == 0 else _sp.polygamma(n, x)



# --- gamma and its reciprocal --------------------------------------------------------------
def _gamma_sign(x):
    """The sign of Gamma(x): +1 for x > 0, (-1)^ceil(-x) between the negative poles."""
    odd = fnp.remainder(fnp.floor(x), 2.0) == 1.0
    return fnp.where((x > 0) | ~odd, 1.0, -1.0)


def _gamma(x):
    g = _gamma_sign(x) * fnp.exp(_sp.lgamma(x))
    pole = (x <= 0) & (x == fnp.floor(x))
    # SciPy: +-inf at a signed zero, NaN at the negative integers and at -inf.
    at_zero = fnp.where(fnp.signbit(x), -math.inf, math.inf)
    return fnp.where(pole, fnp.where(x == 0, at_zero, math.nan), g)


def _rgamma(x):
    return _gamma_sign(x) * fnp.exp(-_sp.lgamma(x))


def gamma(x):
    """The gamma function; ``+-inf`` at ``+-0``, NaN at the negative integers.

    >>> round(float(gamma(5.0)), 10)   # exp(lgamma(x)): within a few ulp of 24
    24.0
    """
    return in_float64("gamma", _gamma, x)


def rgamma(x):
    """``1 / gamma(x)``: an entire function, 0 at the poles of ``gamma``."""
    return in_float64("rgamma", _rgamma, x)


# --- log beta --------------------------------------------------------------------------------
_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_STIRLING_FROM = 10.0
# lgamma(x) - ((x - 1/2) log x - x + log sqrt(2 pi)) = sum_k B_2k / (2k (2k-1) x^(2k-1)):
# coefficients of 1/x, 1/x^3, ... (at x = 10 the ninth term is < 1e-19).
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798]
_STIRLING = [b / (2 * k * (2 * k - 1)) for k, b in enumerate(_BERNOULLI, start=1)]


def _lgamma_correction(x):
    """lgamma's remainder after Stirling's formula, for x >= 10."""
    return horner(_STIRLING, 1.0 / (x * x)) / x


def _betaln(a, b):
    p, q = fnp.minimum(a, b), fnp.maximum(a, b)
    both_big = p >= _STIRLING_FROM
    one_big = (q >= _STIRLING_FROM) & ~both_big & (p > 0)
    # (a) both large: every log-gamma replaced by Stirling + its small correction
    pb, qb = safe(~both_big, p, _STIRLING_FROM), safe(~both_big, q, _STIRLING_FROM)
    corr = _lgamma_correction(pb) + _lgamma_correction(qb) - _lgamma_correction(pb + qb)
    ratio = pb / (pb + qb)
    big = -0.5 * fnp.log(qb) + _LN_SQRT_2PI + corr + (pb - 0.5) * fnp.log(ratio) + qb * fnp.log1p(-ratio)
    # (b) only q large
    p1, q1 = safe(~one_big, p, 1.0), safe(~one_big, q, _STIRLING_FROM)
    corr1 = _lgamma_correction(q1) - _lgamma_correction(p1 + q1)
    mixed = _sp.lgamma(p1) + corr1 + p1 - p1 * fnp.log(p1 + q1) + (q1 - 0.5) * fnp.log1p(-p1 / (p1 + q1))
    # (c) both small (or negative): the log-gammas themselves
    small = _sp.lgamma(a) + _sp.lgamma(b) - _sp.lgamma(a + b)
    return fnp.where(both_big, big, fnp.where(one_big, mixed, small))


def betaln(a, b):
    """``log|B(a, b)|`` with ``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)``."""
    return in_float64("betaln", _betaln, a, b)


def _beta(a, b):
    sign = _gamma_sign(a) * _gamma_sign(b) * _gamma_sign(a + b)
    return sign * fnp.exp(_betaln(a, b))


def beta(a, b):
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``."""
    return in_float64("beta", _beta, a, b)


# --- multivariate gamma, factorial, comb -----------------------------------------------------
def multigammaln(a, d):
    """Log of the multivariate gamma function of dimension ``d`` (a static int):
    ``d(d-1)/4 log(pi) + sum_{j<d} gammaln(a - j/2)``. Like JAX (unlike SciPy) it does
    not check ``a > (d - 1)/2``."""
    if isinstance(d, Tracer) or isinstance(d, bool) or int(np.asarray(d)) != np.asarray(d) or int(d) < 1:
        raise ValueError(f"multigammaln: d must be a concrete integer >= 1, got {d!r}")
    d = int(d)

    def fn(a):
        total = d * (d - 1) / 4.0 * math.log(math.pi)
        for j in range(d):
            total = total + _sp.lgamma(a - j / 2.0)
        return total

    return in_float64("multigammaln", fn, a)


def _concrete_ints(fname, **args):
    """The arguments as NumPy integer arrays (exact=True needs known integer values)."""
    values = []
    for name, v in args.items():
        if isinstance(v, Tracer):
            raise TypeError(f"{fname}: exact=True needs a concrete value of {name} (it was traced); "
                            "use exact=False inside jit, grad and vmap")
        arr = np.asarray(v)
        if arr.dtype.kind not in "iub" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
            raise ValueError(f"{fname}: exact=True needs integer {name}, got {v!r}")
        values.append(arr.astype(np.int64))
    return values


def factorial(n, exact=False):
    """``n!``: ``gamma(n + 1)``, 0 for ``n < 0`` (float, differentiable).

    ``exact=True`` computes with Python integers: a scalar gives a Python int (any
    size), an array an int64 array (a ValueError when a value passes 20!).

    >>> round(float(factorial(5)), 10)
    120.0
    >>> factorial(25, exact=True)
    15511210043330985984000000
    """
    if exact:
        (n_arr,) = _concrete_ints("factorial", n=n)
        if n_arr.ndim == 0:
            return math.factorial(int(n_arr)) if n_arr >= 0 else 0
        if n_arr.size and n_arr.max() > 20:
            raise ValueError(f"factorial: exact=True overflows int64 for n > 20 (got max {n_arr.max()})")
        return np.array([math.factorial(int(v)) if v >= 0 else 0 for v in n_arr.ravel()],
                        np.int64).reshape(n_arr.shape)
    return in_float64("factorial", lambda n: fnp.where(n < 0, 0.0, fnp.exp(_sp.lgamma(n + 1.0))), n)


def comb(N, k, *, exact=False, repetition=False):
    """The number of combinations of ``N`` things taken ``k`` at a time, ``N! / (k! (N-k)!)``
    (with ``repetition``: ``comb(N + k - 1, k)``, and 1 for k == 0); 0 unless
    ``0 <= k <= N`` (with repetition and N < 0 SciPy extends ``binom``; here that is 0).

    ``exact=True`` needs concrete integer scalars and returns a Python int.

    >>> round(float(comb(10, 3)), 10)
    120.0
    """
    if exact:
        n_arr, k_arr = _concrete_ints("comb", N=N, k=k)
        if n_arr.ndim or k_arr.ndim:
            raise ValueError(f"comb: exact=True takes scalars, got shapes {n_arr.shape} and {k_arr.shape}")
        n_i, k_i = int(n_arr), int(k_arr)
        if repetition:
            n_i = n_i + k_i - 1
        return math.comb(n_i, k_i) if 0 <= k_i <= n_i else 0

    def fn(n, k):
        n_given = n
        if repetition:
            n = n + k - 1.0
        valid = (k <= n) & (n >= 0) & (k >= 0)
        ns, ks = safe(~valid, n, 1.0), safe(~valid, k, 0.0)
        v = fnp.where(valid, fnp.exp(-fnp.log1p(ns) - _betaln(ns - ks + 1.0, ks + 1.0)), 0.0)
        # SciPy: with repetition, choosing 0 of N >= 0 things is 1 (comb(N - 1, 0) for N = 0).
        return fnp.where((k == 0) & (n_given >= 0), 1.0, v) if repetition else v

    return in_float64("comb", fn, N, k)


# --- sign, real log-gamma, Pochhammer ---------------------------------------------------------
def _gammasgn(x):
    pole = (x <= 0) & (x == fnp.floor(x)) & (x != 0)
    sign = fnp.where(x == 0, fnp.where(fnp.signbit(x), -1.0, 1.0), _gamma_sign(x))
    return fnp.where(pole | (x == -math.inf) | fnp.isnan(x), math.nan, sign)


def gammasgn(x):
    """The sign of the gamma function: 1 for x > 0, alternating between the negative poles;
    NaN at the poles -1, -2, ... and at -inf, ``+-1`` at ``+-0`` (as SciPy).

    >>> gammasgn(np.array([2.0, -0.5, -1.5]))
    Array([ 1., -1.,  1.])
    """
    return in_float64("gammasgn", _gammasgn, x)


def loggamma(x):
    """The principal branch of ``log Gamma(x)`` for real ``x``: ``gammaln(x)`` for
    ``x >= 0`` (``inf`` at 0), NaN for ``x < 0`` where Gamma is negative or has a pole (as
    SciPy's real ``loggamma``; complex input is not supported).

    >>> round(float(loggamma(4.0)), 12)   # log(3!)
    1.791759469228
    """
    return in_float64("loggamma", lambda x: fnp.where(x < 0, math.nan, _sp.lgamma(x)), x)


def _poch(z, m):
    zm = z + m
    z_pole = (z <= 0) & (z == fnp.floor(z))
    zm_pole = (zm <= 0) & (zm == fnp.floor(zm))
    m_int = m == fnp.floor(m)
    reflect = m_int & (z_pole | zm_pole)
    finite = ~(reflect | z_pole | zm_pole)
    zs, zms = safe(~finite, z, 1.0), safe(~finite, zm, 1.0)
    general = _gamma_sign(zms) * _gamma_sign(zs) * fnp.exp(_sp.lgamma(zms) - _sp.lgamma(zs))
    general = fnp.where(zm_pole & ~reflect, math.inf, fnp.where(z_pole & ~reflect, 0.0, general))
    # (-1)^m Gamma(1 - z) / Gamma(1 - z - m): 1 - z >= 1, and 1 - z - m at a pole gives 0.
    zr, mr = safe(~reflect, z, -1.0), safe(~reflect, m, 1.0)
    odd = fnp.remainder(mr, 2.0) == 1.0
    w = 1.0 - zr - mr
    w_pole = (w <= 0) & (w == fnp.floor(w))
    ws = safe(w_pole, w, 1.0)
    reflected = fnp.where(odd, -1.0, 1.0) * _gamma_sign(ws) * fnp.exp(_sp.lgamma(1.0 - zr) - _sp.lgamma(ws))
    reflected = fnp.where(w_pole, 0.0, fnp.where(zr >= 1.0, math.inf, reflected))  # (Gamma(1 - z) at a pole)
    at_inf = fnp.where(m > 0, math.inf, 0.0)  # Gamma(inf + m) / Gamma(inf)
    return fnp.where(m == 0, 1.0, fnp.where(z == math.inf, at_inf, fnp.where(reflect, reflected, general)))


def poch(z, m):
    """The Pochhammer symbol (rising factorial) ``(z)_m = Gamma(z + m) / Gamma(z)``; at
    the poles as SciPy (``inf`` where only ``z + m`` is a pole, 0 where only ``z`` is).
    Differentiable: ``d/dz = poch(z, m) (digamma(z + m) - digamma(z))``.

    >>> round(float(poch(3.0, 2.0)), 10)   # 3 * 4
    12.0
    """
    return in_float64("poch", _poch, z, m)
