"""Pareto distribution: ``pareto.logpdf(x, b, loc=0, scale=1)`` and pdf, cdf, logcdf, sf,
logsf, ppf (as ``jax.scipy.stats.pareto``). With ``z = (x - loc) / scale >= 1``:
``pdf = b z^-(b+1) / scale``, ``sf = z^-b``, ``cdf = 1 - z^-b`` (``-expm1(-b log z)``,
accurate near the support's edge); below it the density is 0."""
import math

from funcgrad.numpy import exp, expm1, isnan, log, log1p, where
from funcgrad.scipy.stats._common import invalid_to_nan, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]
_m = method("pareto")


def _z(x, loc, scale):
    z = standardize(x, loc, scale)
    inside = z >= 1
    return where(inside, z, 1.0), inside, ~isnan(z)


@_m
def logpdf(x, b, loc=0, scale=1):
    z, inside, known = _z(x, loc, scale)
    v = where(inside, log(b) - (b + 1.0) * log(z) - log(scale), -math.inf)
    return invalid_to_nan(v, (b > 0) & (scale > 0) & known)


@_m
def pdf(x, b, loc=0, scale=1):
    return exp(logpdf(x, b, loc, scale))


@_m
def logsf(x, b, loc=0, scale=1):
    z, inside, known = _z(x, loc, scale)
    return invalid_to_nan(where(inside, -b * log(z), 0.0), (b > 0) & (scale > 0) & known)


@_m
def sf(x, b, loc=0, scale=1):
    return exp(logsf(x, b, loc, scale))


@_m
def cdf(x, b, loc=0, scale=1):
    return -expm1(logsf(x, b, loc, scale))


@_m
def logcdf(x, b, loc=0, scale=1):
    return log1p(-sf(x, b, loc, scale))


@_m
def ppf(q, b, loc=0, scale=1):
    ok = (b > 0) & (scale > 0) & (q >= 0) & (q <= 1)
    return invalid_to_nan(loc + scale * exp(-log1p(-q) / b), ok)
