"""Normal distribution: ``norm.logpdf(x, loc=0, scale=1)`` and pdf, cdf, logcdf, sf,
logsf, ppf, isf (as ``jax.scipy.stats.norm``). The tails use ``log_ndtr``/``ndtri``,
accurate far out (``norm.logcdf(-40)``, ``norm.ppf(1e-300)``)."""
import math

from funcgrad.numpy import exp, log
from funcgrad.scipy.special import log_ndtr, ndtr, ndtri
from funcgrad.scipy.stats._common import invalid_to_nan, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_m = method("norm")


@_m
def logpdf(x, loc=0, scale=1):
    z = standardize(x, loc, scale)
    return invalid_to_nan(-0.5 * z * z - _LOG_SQRT_2PI - log(scale), scale > 0)


@_m
def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


@_m
def cdf(x, loc=0, scale=1):
    return invalid_to_nan(ndtr(standardize(x, loc, scale)), scale > 0)


@_m
def logcdf(x, loc=0, scale=1):
    return invalid_to_nan(log_ndtr(standardize(x, loc, scale)), scale > 0)


@_m
def sf(x, loc=0, scale=1):
    return invalid_to_nan(ndtr(-standardize(x, loc, scale)), scale > 0)


@_m
def logsf(x, loc=0, scale=1):
    return invalid_to_nan(log_ndtr(-standardize(x, loc, scale)), scale > 0)


@_m
def ppf(q, loc=0, scale=1):
    return invalid_to_nan(ndtri(q) * scale + loc, scale > 0)


@_m
def isf(q, loc=0, scale=1):
    return invalid_to_nan(-ndtri(q) * scale + loc, scale > 0)
