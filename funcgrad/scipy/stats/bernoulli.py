"""Bernoulli distribution: ``bernoulli.logpmf(k, p, loc=0)``, pmf, cdf, ppf (as JAX).
``ppf(0)`` is ``loc - 1``, as for every SciPy discrete distribution."""
import math

from funcgrad.numpy import exp, where
from funcgrad.scipy.special import xlog1py, xlogy
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpmf", "pmf", "cdf", "ppf"]
_m = method("bernoulli")


def _ok(p):
    return (p >= 0) & (p <= 1)


@_m
def logpmf(k, p, loc=0):
    y = k - loc
    v = where(y == 0, xlog1py(1.0, -p), where(y == 1, xlogy(1.0, p), -math.inf))
    return invalid_to_nan(v, _ok(p))


@_m
def pmf(k, p, loc=0):
    return exp(logpmf(k, p, loc))


@_m
def cdf(k, p, loc=0):
    y = k - loc
    return invalid_to_nan(where(y < 0, 0.0, where(y < 1, 1.0 - p, 1.0)), _ok(p))


@_m
def ppf(q, p, loc=0):
    v = where(q == 0, -1.0, where((q <= 1.0 - p) & (q < 1), 0.0, 1.0)) + loc
    return invalid_to_nan(v, _ok(p) & (q >= 0) & (q <= 1))
