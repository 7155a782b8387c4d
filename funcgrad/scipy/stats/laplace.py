"""Laplace distribution: ``laplace.logpdf(x, loc=0, scale=1)``, pdf, cdf (as JAX)."""
import math

from funcgrad.numpy import abs, exp, log, where  # noqa: A004
from funcgrad.scipy.stats._common import invalid_to_nan, method, standardize

__all__ = ["logpdf", "pdf", "cdf"]
_m = method("laplace")


@_m
def logpdf(x, loc=0, scale=1):
    return invalid_to_nan(-math.log(2.0) - log(scale) - abs(standardize(x, loc, scale)), scale > 0)


@_m
def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


@_m
def cdf(x, loc=0, scale=1):
    y = standardize(x, loc, scale)
    below = y < 0
    yl, yh = where(below, y, 0.0), where(below, 0.0, y)
    return invalid_to_nan(where(below, 0.5 * exp(yl), 1.0 - 0.5 * exp(-yh)), scale > 0)
