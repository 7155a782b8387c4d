"""Logistic and entropy functions: expit, logit, xlogy, xlog1py, entr, kl_div,
rel_entr, sinc; the Box-Cox transforms boxcox, boxcox1p. (See the package docstring for
conventions.)"""
from __future__ import annotations

import math

import funcgrad.numpy as fnp
from funcgrad.core import lax_api as lax
from funcgrad.scipy.special._util import const as _const
from funcgrad.scipy.special._util import float_args as _float_args
from funcgrad.scipy.special._util import in_float64
from funcgrad.scipy.special._util import out as _out
from funcgrad.scipy.special._util import real_args as _real_args
from funcgrad.transforms.custom import custom_jvp

__all__ = ["expit", "logit", "xlogy", "xlog1py", "entr", "kl_div", "rel_entr", "sinc", "boxcox", "boxcox1p"]


# --- logistic functions --------------------------------------------------------------------
def expit(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, accurate in both tails. Real input only,
    as SciPy's (no complex loop: a TypeError); ``funcgrad.nn.sigmoid`` takes complex."""
    (x,) = _real_args("expit", x)
    return logistic(x)


def logistic(x):
    """``expit`` of a float or complex array (``jax.lax.logistic``; for ``nn.sigmoid``)."""
    nonneg = lax.ge(x, _const(x, 0.0))
    e = lax.exp(lax.select(nonneg, lax.neg(x), x))  # exp(-|x|) <= 1: never overflows
    one = _const(x, 1.0)
    denom = lax.add(one, e)
    return _out(lax.select(nonneg, lax.div(one, denom), lax.div(e, denom)))


def logit(x):
    """``log(p / (1 - p))``, the inverse of ``expit``."""
    (p,) = _real_args("logit", x)
    one = _const(p, 1.0)
    # Near p = 1/2 the answer is small: 2 atanh(2p - 1) is exact there (2p - 1 is).
    # Elsewhere log(p) - log1p(-p) keeps the relative accuracy of tiny p.
    central = lax.bitwise_and(lax.ge(p, _const(p, 0.25)), lax.le(p, _const(p, 0.75)))
    p_c = lax.select(central, p, _const(p, 0.5))  # harmless operands for the branch not taken
    p_t = lax.select(central, _const(p, 0.1), p)
    by_atanh = lax.mul(_const(p, 2.0), lax.atanh(lax.sub(lax.add(p_c, p_c), one)))
    by_logs = lax.sub(lax.log(p_t), lax.log1p(lax.neg(p_t)))
    return _out(lax.select(central, by_atanh, by_logs))


# --- x log y ---------------------------------------------------------------------------------
def _x_times_log(fname, x, y, log_fn, lowest):
    """``x * log_fn(y)``, 0 where x == 0 unless y is NaN. Where the product would be
    0 * (+-inf or NaN), y is swapped for a harmless value (where log_fn(y) = 0) before
    the log, so the value is 0 and no NaN reaches any derivative."""
    x, y = _float_args(fname, x, y)
    finite_log = lax.bitwise_and(lax.gt(y, _const(y, lowest)), lax.is_finite(y))
    y_is_nan = lax.ne(y, y)
    swap = lax.bitwise_and(lax.eq(x, _const(x, 0.0)), lax.bitwise_not(lax.bitwise_or(finite_log, y_is_nan)))
    safe_y = lax.select(swap, _const(y, 1.0 if lowest == 0.0 else 0.0), y)
    return lax.mul(x, log_fn(safe_y))


def xlogy(x, y):
    """``x * log(y)``, with ``xlogy(0, y) == 0`` for every non-NaN ``y``.

    >>> xlogy(0.0, 0.0)
    Array(0.)
    """
    return _out(_x_times_log("xlogy", x, y, lax.log, 0.0))


def xlog1py(x, y):
    """``x * log1p(y)``, with ``xlog1py(0, y) == 0`` for every non-NaN ``y``."""
    return _out(_x_times_log("xlog1py", x, y, lax.log1p, -1.0))


def entr(x):
    """Elementwise entropy ``-x log x`` for x > 0, 0 at 0, ``-inf`` for x < 0."""
    (x,) = _real_args("entr", x)
    negative = lax.lt(x, _const(x, 0.0))
    safe_x = lax.select(negative, _const(x, 1.0), x)
    value = _x_times_log("entr", safe_x, safe_x, lax.log, 0.0)  # x log x; 0 - it gives +0 at 0
    return _out(lax.select(negative, _const(x, -math.inf), lax.sub(_const(x, 0.0), value)))




def rel_entr(x, y):
    """Elementwise relative entropy: ``x log(x/y)`` for x, y > 0; 0 at x == 0 <= y;
    ``inf`` otherwise (as SciPy)."""
    x, y = _real_args("rel_entr", x, y)
    zero, inf = _const(x, 0.0), _const(x, math.inf)
    both_pos = lax.bitwise_and(lax.gt(x, zero), lax.gt(y, zero))
    one = _const(x, 1.0)
    xs, ys = lax.select(both_pos, x, one), lax.select(both_pos, y, one)
    value = lax.mul(xs, lax.log(lax.div(xs, ys)))
    at_zero = lax.bitwise_and(lax.eq(x, zero), lax.ge(y, zero))
    v = lax.select(both_pos, value, lax.select(at_zero, zero, inf))
    return _out(lax.select(lax.bitwise_or(lax.ne(x, x), lax.ne(y, y)), _const(x, math.nan), v))


def kl_div(x, y):
    """Elementwise ``x log(x/y) - x + y`` for x, y > 0; ``y`` at x == 0 <= y; ``inf``
    otherwise (as SciPy)."""
    x, y = _real_args("kl_div", x, y)
    r = rel_entr(x, y)
    finite = lax.is_finite(r)
    return _out(lax.select(finite, lax.add(lax.sub(r, x), y), r))


def sinc(x):
    """Normalised sinc ``sin(pi x) / (pi x)``, 1 at 0 (as ``numpy.sinc``), with every
    derivative right at 0 too (the first is 0, the second ``-pi^2/3``, ...), as JAX's."""
    (x,) = _float_args("sinc", x)
    zero = lax.eq(x, _const(x, 0.0))
    pi_x = lax.mul(_const(x, math.pi), x)
    safe_pi_x = lax.select(zero, _const(x, 1.0), pi_x)
    return _out(lax.select(zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe_pi_x), safe_pi_x)))


def _sinc_maclaurin_raw(k, y):
    """The k-th derivative of sin(y)/y at y = 0, shaped like y (only used where y == 0):
    (-1)^(k/2) / (k + 1) for even k, 0 for odd k. Its JVP is the next order, so the
    derivatives of sinc at 0 are right to any order."""
    value = 0.0 if k % 2 else (-1.0) ** (k // 2) / (k + 1)
    return _const(y, value)


_sinc_maclaurin = custom_jvp(_sinc_maclaurin_raw, nondiff_argnums=(0,))


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k, primals, tangents):
    (y,), (t,) = primals, tangents
    return _sinc_maclaurin(k, y), lax.mul(t, _sinc_maclaurin(k + 1, y))


def _boxcox(log_x, lmbda):
    # SciPy: log(x) once |lambda| < 1e-19, else expm1(lambda log x) / lambda (accurate near 0).
    tiny = fnp.abs(lmbda) < 1e-19
    ls = fnp.where(tiny, 1.0, lmbda)
    return fnp.where(tiny, log_x, fnp.expm1(ls * log_x) / ls)


def boxcox(x, lmbda):
    """The Box-Cox transform ``(x^lmbda - 1) / lmbda`` (``log(x)`` for ``lmbda == 0``),
    computed as ``expm1(lmbda log x) / lmbda``; NaN for ``x < 0``.

    >>> float(boxcox(4.0, 0.5))
    2.0
    """
    return in_float64("boxcox", lambda x, lm: _boxcox(fnp.log(x), lm), x, lmbda)


def boxcox1p(x, lmbda):
    """``boxcox(1 + x, lmbda)`` without rounding ``1 + x``: ``expm1(lmbda log1p(x)) / lmbda``.

    >>> float(boxcox1p(3.0, 0.5))
    2.0
    """
    return in_float64("boxcox1p", lambda x, lm: _boxcox(fnp.log1p(x), lm), x, lmbda)
