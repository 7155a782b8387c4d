"""Wrapped Cauchy distribution: ``wrapcauchy.logpdf(x, c)``, pdf (as
``jax.scipy.stats.wrapcauchy``): ``(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))`` on
``0 <= x <= 2 pi`` (0 outside), for ``0 < c < 1`` (NaN otherwise)."""
import math

from funcgrad.numpy import cos, exp, log, where
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpdf", "pdf"]
_m = method("wrapcauchy")


@_m
def logpdf(x, c):
    v = log(1.0 - c * c) - math.log(2.0 * math.pi) - log(1.0 + c * c - 2.0 * c * cos(x))
    v = where((x >= 0) & (x <= 2.0 * math.pi), v, -math.inf)
    return invalid_to_nan(v, (c > 0) & (c < 1))


@_m
def pdf(x, c):
    return exp(logpdf(x, c))
