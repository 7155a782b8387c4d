"""Left-skewed Gumbel (extreme value of minima): ``gumbel_l.logpdf(x, loc=0, scale=1)``
and pdf, cdf, logcdf, sf, logsf, ppf (as ``jax.scipy.stats.gumbel_l``): the mirror image
of ``gumbel_r``, ``gumbel_l(x; loc) = gumbel_r(-x; -loc)`` with cdf and sf exchanged."""
from funcgrad.numpy import exp, expm1, log, log1p
from funcgrad.scipy.stats._common import invalid_to_nan, log_of, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]
_m = method("gumbel_l")


@_m
def logpdf(x, loc=0, scale=1):
    z = standardize(x, loc, scale)
    return invalid_to_nan(z - exp(z) - log(scale), scale > 0)


@_m
def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


@_m
def logsf(x, loc=0, scale=1):
    return invalid_to_nan(-exp(standardize(x, loc, scale)), scale > 0)


@_m
def sf(x, loc=0, scale=1):
    return exp(logsf(x, loc, scale))


@_m
def cdf(x, loc=0, scale=1):
    return invalid_to_nan(-expm1(-exp(standardize(x, loc, scale))), scale > 0)


@_m
def logcdf(x, loc=0, scale=1):
    return log_of(cdf(x, loc, scale), sf(x, loc, scale))


@_m
def ppf(p, loc=0, scale=1):
    ok = (scale > 0) & (p >= 0) & (p <= 1)
    return invalid_to_nan(loc + scale * log(-log1p(-p)), ok)
