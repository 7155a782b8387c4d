"""Poisson distribution: ``poisson.logpmf(k, mu, loc=0)``, pmf, cdf, entropy (as JAX). ``k`` that
is not a non-negative integer (after ``loc``) has probability 0, as in SciPy."""
import math

from funcgrad.numpy import arange, exp, floor, log, sum, where
from funcgrad.scipy.special import entr, gammaincc, gammaln, xlogy
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpmf", "pmf", "cdf", "entropy"]
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


_SUM_BELOW = 400.0  # mu below: the sum over k < 760 (> mu + 15 sqrt(mu) + 20, the mass left < 1e-40)


@_m
def entropy(mu, loc=0):
    """``scipy.stats.poisson.entropy(mu, loc=0)``: ``-sum_k pmf(k) log pmf(k)`` (``loc``
    shifts, so it does not change the entropy). Below ``mu = 400`` the sum over
    ``k < 760``; beyond, the asymptotic series ``log(2 pi e mu) / 2 - 1/(12 mu) -
    1/(24 mu^2) - 19/(360 mu^3)`` (next term below 1e-12). NaN for ``mu < 0``."""
    small = mu < _SUM_BELOW
    ms = where(small, mu, 1.0)
    k = arange(760.0).reshape((760,) + (1,) * len(mu.shape))
    terms = entr(exp(xlogy(k, ms) - ms - gammaln(k + 1.0)))
    direct = sum(terms, axis=0)
    mb = where(small, _SUM_BELOW, mu)
    asym = 0.5 * log(2 * math.pi * math.e * mb) - 1 / (12 * mb) - 1 / (24 * mb**2) - 19 / (360 * mb**3)
    return invalid_to_nan(where(small, direct, asym) + 0.0 * loc, mu >= 0)
