"""Geometric distribution (trials up to the first success, support 1, 2, ...):
``geom.logpmf(k, p, loc=0)``, pmf (as JAX)."""
import math

from funcgrad.numpy import exp, floor, log, where
from funcgrad.scipy.special import xlog1py
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpmf", "pmf"]
_m = method("geom")


@_m
def logpmf(k, p, loc=0):
    y = k - loc
    support = (y >= 1) & (y == floor(y))
    ys = where(support, y, 1.0)
    v = where(support, xlog1py(ys - 1.0, -p) + log(p), -math.inf)
    return invalid_to_nan(v, (p > 0) & (p <= 1))


@_m
def pmf(k, p, loc=0):
    return exp(logpmf(k, p, loc))
