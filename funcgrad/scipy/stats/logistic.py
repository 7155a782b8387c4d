"""Logistic distribution: ``logistic.logpdf(x, loc=0, scale=1)`` and pdf, cdf, sf, ppf,
isf (as JAX), through ``expit``/``logit`` (accurate in both tails)."""
from funcgrad.numpy import abs, exp, log, log1p  # noqa: A004
from funcgrad.scipy.special import expit, logit
from funcgrad.scipy.stats._common import invalid_to_nan, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]
_m = method("logistic")


@_m
def logpdf(x, loc=0, scale=1):
    a = abs(standardize(x, loc, scale))  # the density is symmetric: exp(-|y|) never overflows
    return invalid_to_nan(-a - 2.0 * log1p(exp(-a)) - log(scale), scale > 0)


@_m
def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


@_m
def cdf(x, loc=0, scale=1):
    return invalid_to_nan(expit(standardize(x, loc, scale)), scale > 0)


@_m
def sf(x, loc=0, scale=1):
    return invalid_to_nan(expit(-standardize(x, loc, scale)), scale > 0)


@_m
def ppf(q, loc=0, scale=1):
    return invalid_to_nan(logit(q) * scale + loc, scale > 0)


@_m
def isf(q, loc=0, scale=1):
    return invalid_to_nan(-logit(q) * scale + loc, scale > 0)
