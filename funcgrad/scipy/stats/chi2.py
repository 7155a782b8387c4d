"""Chi-squared distribution: ``chi2.logpdf(x, df, loc=0, scale=1)`` and pdf, cdf,
logcdf, sf, logsf (as JAX): a gamma distribution with ``a = df/2``, ``scale = 2 scale``."""
from funcgrad.scipy.stats import gamma as _gamma
from funcgrad.scipy.stats._common import method

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
_m = method("chi2")


@_m
def logpdf(x, df, loc=0, scale=1):
    return _gamma.logpdf(x, 0.5 * df, loc, 2.0 * scale)


@_m
def pdf(x, df, loc=0, scale=1):
    return _gamma.pdf(x, 0.5 * df, loc, 2.0 * scale)


@_m
def cdf(x, df, loc=0, scale=1):
    return _gamma.cdf(x, 0.5 * df, loc, 2.0 * scale)


@_m
def logcdf(x, df, loc=0, scale=1):
    return _gamma.logcdf(x, 0.5 * df, loc, 2.0 * scale)


@_m
def sf(x, df, loc=0, scale=1):
    return _gamma.sf(x, 0.5 * df, loc, 2.0 * scale)


@_m
def logsf(x, df, loc=0, scale=1):
    return _gamma.logsf(x, 0.5 * df, loc, 2.0 * scale)
