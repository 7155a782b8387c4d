"""Uniform distribution on ``[loc, loc + scale]``: logpdf, pdf, cdf, ppf (as JAX)."""
import math

from funcgrad.numpy import clip, exp, log, where
from funcgrad.scipy.stats._common import invalid_to_nan, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "ppf"]
_m = method("uniform")


@_m
def logpdf(x, loc=0, scale=1):
    inside = (x >= loc) & (x <= loc + scale)
    return invalid_to_nan(where(inside, -log(scale), -math.inf), scale > 0)


@_m
def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


@_m
def cdf(x, loc=0, scale=1):
    return invalid_to_nan(clip(standardize(x, loc, scale), 0.0, 1.0), scale > 0)


@_m
def ppf(q, loc=0, scale=1):
    return invalid_to_nan(loc + q * scale, (scale > 0) & (q >= 0) & (q <= 1))
