"""Poisson distribution: ``poisson.logpmf(k, mu, loc=0)``, pmf, cdf (as JAX). ``k`` that
is not a non-negative integer (after ``loc``) has probability 0, as in SciPy."""
import math

from funcgrad.numpy import exp, floor, where
from funcgrad.scipy.special import gammaincc, gammaln, xlogy
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpmf", "pmf", "cdf"]
_m = method("poisson")


@_m
def logpmf(k, mu, loc=0):
    y = k - loc
    support = (y >= 0) & (y == floor(y))
    ys = where(support, y, 0.0)
    return invalid_to_nan(where(support, xlogy(ys, mu) - mu - gammaln(ys + 1.0), -math.inf), mu >= 0)


@_m
def pmf(k, mu, loc=0):
    return exp(logpmf(k, mu, loc))


@_m
def cdf(k, mu, loc=0):
    y = floor(k - loc)
    inside = y >= 0
    return invalid_to_nan(where(inside, gammaincc(where(inside, y, 0.0) + 1.0, mu), 0.0), mu >= 0)
