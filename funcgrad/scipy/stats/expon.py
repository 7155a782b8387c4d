"""Exponential distribution: ``expon.logpdf(x, loc=0, scale=1)`` and pdf, cdf, logcdf,
sf, logsf, ppf (as JAX); ``cdf`` is ``-expm1(-y)`` so small ``x`` keeps its digits."""
import math

from funcgrad.numpy import exp, expm1, log, log1p, maximum, where
from funcgrad.scipy.stats._common import invalid_to_nan, log_of, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]
_m = method("expon")


@_m
def logpdf(x, loc=0, scale=1):
    y = standardize(x, loc, scale)
    return invalid_to_nan(where(y >= 0, -y - log(scale), -math.inf), scale > 0)


@_m
def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


@_m
def cdf(x, loc=0, scale=1):
    return invalid_to_nan(-expm1(-maximum(standardize(x, loc, scale), 0.0)), scale > 0)


@_m
def logcdf(x, loc=0, scale=1):
    return log_of(cdf(x, loc, scale), sf(x, loc, scale))


@_m
def sf(x, loc=0, scale=1):
    return exp(logsf(x, loc, scale))


@_m
def logsf(x, loc=0, scale=1):
    return invalid_to_nan(-maximum(standardize(x, loc, scale), 0.0), scale > 0)


@_m
def ppf(q, loc=0, scale=1):
    ok = (scale > 0) & (q >= 0) & (q <= 1)
    return invalid_to_nan(-log1p(-q) * scale + loc, ok)
