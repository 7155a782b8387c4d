"""Student's t distribution: ``t.logpdf(x, df, loc=0, scale=1)`` and pdf (as JAX)."""
import math

from funcgrad.numpy import exp, log, log1p
from funcgrad.scipy.special import gammaln
from funcgrad.scipy.stats._common import invalid_to_nan, method, standardize

__all__ = ["logpdf", "pdf"]
_m = method("t")


@_m
def logpdf(x, df, loc=0, scale=1):
    z = standardize(x, loc, scale)
    half = 0.5 * (df + 1.0)
    norm = gammaln(half) - gammaln(0.5 * df) - 0.5 * log(df * math.pi) - log(scale)
    return invalid_to_nan(norm - half * log1p(z * z / df), (df > 0) & (scale > 0))


@_m
def pdf(x, df, loc=0, scale=1):
    return exp(logpdf(x, df, loc, scale))
