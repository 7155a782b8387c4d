"""Beta distribution: ``beta.logpdf(x, a, b, loc=0, scale=1)`` and pdf, cdf, logcdf, sf,
logsf (as JAX); ``sf`` is ``betainc(b, a, 1 - y)``, accurate where it is small."""
import math

from funcgrad.numpy import clip, exp, log, where
from funcgrad.scipy.special import betainc, betaln, xlog1py, xlogy
from funcgrad.scipy.stats._common import invalid_to_nan, log_of, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
_m = method("beta")


def _ok(a, b, scale):
    return (a > 0) & (b > 0) & (scale > 0)


@_m
def logpdf(x, a, b, loc=0, scale=1):
    y = standardize(x, loc, scale)
    inside = (y >= 0) & (y <= 1)
    ys = where(inside, y, 0.5)
    v = xlogy(a - 1.0, ys) + xlog1py(b - 1.0, -ys) - betaln(a, b) - log(scale)
    return invalid_to_nan(where(inside, v, -math.inf), _ok(a, b, scale))


@_m
def pdf(x, a, b, loc=0, scale=1):
    return exp(logpdf(x, a, b, loc, scale))


@_m
def cdf(x, a, b, loc=0, scale=1):
    y = clip(standardize(x, loc, scale), 0.0, 1.0)
    return invalid_to_nan(betainc(a, b, y), _ok(a, b, scale))


@_m
def logcdf(x, a, b, loc=0, scale=1):
    return log_of(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


@_m
def sf(x, a, b, loc=0, scale=1):
    y = clip(standardize(x, loc, scale), 0.0, 1.0)
    return invalid_to_nan(betainc(b, a, 1.0 - y), _ok(a, b, scale))


@_m
def logsf(x, a, b, loc=0, scale=1):
    return log_of(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))
