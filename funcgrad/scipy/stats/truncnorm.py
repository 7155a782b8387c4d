"""Truncated normal distribution: ``truncnorm.logpdf(x, a, b, loc=0, scale=1)`` and pdf,
cdf, logcdf, sf, logsf (as ``jax.scipy.stats.truncnorm``); ``a`` and ``b`` are the bounds
in standard units, as SciPy's.

The normalising mass ``log(ndtr(b) - ndtr(a))`` is computed where it does not cancel:
both bounds in the left tail as ``log_ndtr(b) + log1p(-exp(log_ndtr(a) - log_ndtr(b)))``,
both in the right tail by symmetry, straddling 0 as ``log1p(-ndtr(a) - ndtr(-b))``. So
``truncnorm.logpdf(x, 30, 31)`` is finite. ``a >= b`` gives NaN, as SciPy."""
import math

from funcgrad.numpy import exp, isnan, log, log1p, where
from funcgrad.scipy.special import log_ndtr, ndtr
from funcgrad.scipy.stats._common import method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
_m = method("truncnorm")
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log_diff(big, small):
    """``log(exp(big) - exp(small))`` for ``big >= small``."""
    return big + log1p(-exp(small - big))


def _log_mass(a, b):
    """``log(ndtr(b) - ndtr(a))`` for ``a <= b``, without cancellation."""
    left = b <= 0
    right = a > 0
    central = ~(left | right)
    al, bl = where(right, -b, a), where(right, -a, b)  # the right tail mirrored onto the left
    tail = _log_diff(log_ndtr(bl), log_ndtr(al))
    mid = log1p(-ndtr(where(central, a, 0.0)) - ndtr(-where(central, b, 0.0)))
    return where(central, mid, tail)


@_m
def logpdf(x, a, b, loc=0, scale=1):
    z = standardize(x, loc, scale)
    v = -0.5 * z * z - _LOG_SQRT_2PI - _log_mass(a, b) - log(scale)
    v = where((z < a) | (z > b), -math.inf, v)
    return where((a >= b) | ~(scale > 0), math.nan, v)


@_m
def pdf(x, a, b, loc=0, scale=1):
    return exp(logpdf(x, a, b, loc, scale))


@_m
def logcdf(x, a, b, loc=0, scale=1):
    z = standardize(x, loc, scale)
    zc = where((z > a) & (z < b), z, 0.5 * (a + b))  # the masked branches stay finite
    zc = where((a >= b) | ~(scale > 0), 0.5, zc)
    total = _log_mass(a, b)
    lcdf = _log_mass(a, zc) - total
    lsf = _log_mass(zc, b) - total
    v = where(lcdf > -0.1, log1p(-exp(lsf)), lcdf)  # near 1: from the sf, as SciPy
    v = where(z <= a, -math.inf, where(z >= b, 0.0, v))
    return where((a >= b) | ~(scale > 0) | isnan(z), math.nan, v)


@_m
def cdf(x, a, b, loc=0, scale=1):
    return exp(logcdf(x, a, b, loc, scale))


@_m
def logsf(x, a, b, loc=0, scale=1):
    return logcdf(-x, -b, -a, -loc, scale)


@_m
def sf(x, a, b, loc=0, scale=1):
    return exp(logsf(x, a, b, loc, scale))
