"""Binomial distribution: ``binom.logpmf(k, n, p, loc=0)``, pmf (as JAX). The binomial
coefficient is ``-log1p(n) - betaln(n - k + 1, k + 1)`` (Stirling-corrected for large n)."""
import math

from funcgrad.numpy import exp, floor, log1p, where
from funcgrad.scipy.special import betaln, xlog1py, xlogy
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpmf", "pmf"]
_m = method("binom")


@_m
def logpmf(k, n, p, loc=0):
    y = k - loc
    support = (y >= 0) & (y <= n) & (y == floor(y))
    ys = where(support, y, 0.0)
    log_comb = where((ys == 0) | (ys == n), 0.0, -log1p(n) - betaln(n - ys + 1.0, ys + 1.0))
    v = where(support, log_comb + xlogy(ys, p) + xlog1py(n - ys, -p), -math.inf)
    return invalid_to_nan(v, (n >= 0) & (n == floor(n)) & (p >= 0) & (p <= 1))


@_m
def pmf(k, n, p, loc=0):
    return exp(logpmf(k, n, p, loc))
