"""Generalized normal distribution: ``gennorm.logpdf(x, beta)``, pdf, cdf (as
``jax.scipy.stats.gennorm``, which has no loc/scale): density
``beta / (2 Gamma(1/beta)) exp(-|x|^beta)`` (beta = 2: a normal of variance 1/2, beta = 1:
Laplace), cdf ``(1 + sign(x) gammainc(1/beta, |x|^beta)) / 2``. ``beta <= 0`` gives NaN."""
import math

from funcgrad.numpy import abs, exp, log, sign
from funcgrad.scipy.special import gammainc, gammaln
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpdf", "pdf", "cdf"]
_m = method("gennorm")


@_m
def logpdf(x, beta):
    return invalid_to_nan(log(beta) - math.log(2.0) - gammaln(1.0 / beta) - abs(x) ** beta, beta > 0)


@_m
def pdf(x, beta):
    return exp(logpdf(x, beta))


@_m
def cdf(x, beta):
    return invalid_to_nan(0.5 + 0.5 * sign(x) * gammainc(1.0 / beta, abs(x) ** beta), beta > 0)
