"""Negative binomial distribution (failures before the n-th success):
``nbinom.logpmf(k, n, p, loc=0)``, pmf (as JAX). ``log C(n+k-1, k)`` is
``-log(n + k) - betaln(n, k + 1)`` (real ``n`` allowed, as SciPy)."""
import math

from funcgrad.numpy import exp, floor, log, where
from funcgrad.scipy.special import betaln, xlog1py
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpmf", "pmf"]
_m = method("nbinom")


@_m
def logpmf(k, n, p, loc=0):
    y = k - loc
    support = (y >= 0) & (y == floor(y))
    ys = where(support, y, 0.0)
    ok = (n > 0) & (p > 0) & (p <= 1)
    ns = where(ok, n, 1.0)
    v = -log(ns + ys) - betaln(ns, ys + 1.0) + ns * log(p) + xlog1py(ys, -p)
    return invalid_to_nan(where(support, v, -math.inf), ok)


@_m
def pmf(k, n, p, loc=0):
    return exp(logpmf(k, n, p, loc))
