"""Right-skewed Gumbel (extreme value of maxima): ``gumbel_r.logpdf(x, loc=0, scale=1)``
and pdf, cdf, logcdf, sf, logsf, ppf (as ``jax.scipy.stats.gumbel_r``). With
``z = (x - loc) / scale``: ``logpdf = -z - exp(-z) - log(scale)``, ``logcdf = -exp(-z)``;
``sf = -expm1(-exp(-z))`` so the right tail keeps its digits, and ``logsf`` from the cdf where the
sf is near 1."""
from funcgrad.numpy import exp, expm1, log
from funcgrad.scipy.stats._common import invalid_to_nan, log_of, method, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]
_m = method("gumbel_r")

@_m
def logpdf(x, loc=0, scale=1):
    z = standardize(x, loc, scale)
    return invalid_to_nan(-z - exp(-z) - log(scale), scale > 0)

@_m
def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))

@_m
def logcdf(x, loc=0, scale=1):
    return invalid_to_nan(-exp(-standardize(x, loc, scale)), scale > 0)

@_m
def cdf(x, loc=0, scale=1):
    return exp(logcdf(x, loc, scale))

@_m
def logsf(x, loc=0, scale=1):
    return log_of(sf(x, loc, scale), cdf(x, loc, scale))

@_m
def sf(x, loc=0, scale=1):
    return invalid_to_nan(-expm1(-exp(-standardize(x, loc, scale))), scale > 0)

@_m
def ppf(p, loc=0, scale=1):
    ok = (scale > 0) & (p >= 0) & (p <= 1)
    return invalid_to_nan(loc - scale * log(-log(p)), ok)
