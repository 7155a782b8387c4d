"""Gamma distribution: ``gamma.logpdf(x, a, loc=0, scale=1)`` and pdf, cdf, logcdf, sf,
logsf (as JAX); the CDFs are ``gammainc``/``gammaincc`` of ``(x - loc)/scale``."""
import math

from funcgrad.numpy import exp, log, maximum, where
from funcgrad.scipy.special import gammainc, gammaincc, gammaln, xlogy
from funcgrad.scipy.stats._common import invalid_to_nan, log_of, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
_m = method("gamma")


@_m
def logpdf(x, a, loc=0, scale=1):
    y = standardize(x, loc, scale)
    inside = y >= 0
    ys = where(inside, y, 1.0)
    v = where(inside, xlogy(a - 1.0, ys) - ys - gammaln(a) - log(scale), -math.inf)
    return invalid_to_nan(v, (a > 0) & (scale > 0))


@_m
def pdf(x, a, loc=0, scale=1):
    return exp(logpdf(x, a, loc, scale))


@_m
def cdf(x, a, loc=0, scale=1):
    return invalid_to_nan(gammainc(a, maximum(standardize(x, loc, scale), 0.0)), (a > 0) & (scale > 0))


@_m
def logcdf(x, a, loc=0, scale=1):
    return log_of(cdf(x, a, loc, scale), sf(x, a, loc, scale))


@_m
def sf(x, a, loc=0, scale=1):
    return invalid_to_nan(gammaincc(a, maximum(standardize(x, loc, scale), 0.0)), (a > 0) & (scale > 0))


@_m
def logsf(x, a, loc=0, scale=1):
    return log_of(sf(x, a, loc, scale), cdf(x, a, loc, scale))
