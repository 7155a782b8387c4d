"""Cauchy distribution: ``cauchy.logpdf(x, loc=0, scale=1)`` and pdf, cdf, logcdf, sf,
logsf, ppf, isf (as JAX; ``cdf = 1/2 + atan(y)/pi`` as SciPy; ``ppf`` as ``-cot(pi q)``)."""
import math

from funcgrad.numpy import arctan, exp, log, log1p, tan, where
from funcgrad.scipy.stats._common import invalid_to_nan, log_of, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
_m = method("cauchy")


@_m
def logpdf(x, loc=0, scale=1):
    y = standardize(x, loc, scale)
    return invalid_to_nan(-math.log(math.pi) - log(scale) - log1p(y * y), scale > 0)


@_m
def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


@_m
def cdf(x, loc=0, scale=1):
    return invalid_to_nan(0.5 + arctan(standardize(x, loc, scale)) / math.pi, scale > 0)


@_m
def logcdf(x, loc=0, scale=1):
    return log_of(cdf(x, loc, scale), sf(x, loc, scale))


@_m
def sf(x, loc=0, scale=1):
    return invalid_to_nan(0.5 - arctan(standardize(x, loc, scale)) / math.pi, scale > 0)


@_m
def logsf(x, loc=0, scale=1):
    return log_of(sf(x, loc, scale), cdf(x, loc, scale))


def _standard_ppf(q):
    """tan(pi (q - 1/2)) as -1/tan(pi q) (or 1/tan(pi (1 - q))): the tail q keeps its
    relative accuracy (SciPy's ``tan(pi q - pi/2)`` loses it for tiny q)."""
    lower = q < 0.5
    ql, qu = where(lower, q, 0.25), where(lower, 0.75, q)
    v = where(lower, -1.0 / tan(math.pi * ql), 1.0 / tan(math.pi * (1.0 - qu)))
    return where(q == 0.5, 0.0, v)


@_m
def ppf(q, loc=0, scale=1):
    ok = (scale > 0) & (q >= 0) & (q <= 1)
    return invalid_to_nan(_standard_ppf(q) * scale + loc, ok)


@_m
def isf(q, loc=0, scale=1):
    ok = (scale > 0) & (q >= 0) & (q <= 1)
    return invalid_to_nan(-_standard_ppf(q) * scale + loc, ok)
