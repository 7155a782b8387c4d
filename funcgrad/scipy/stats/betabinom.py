"""Beta-binomial distribution: ``betabinom.logpmf(k, n, a, b, loc=0)``, pmf (as
``jax.scipy.stats.betabinom``): ``C(n, k) B(k + a, n - k + b) / B(a, b)``, the binomial
coefficient as ``-log1p(n) - betaln(n - k + 1, k + 1)``. ``k`` that is not an integer in
``[0, n]`` (after ``loc``) has probability 0, as in SciPy; ``n`` not a non-negative integer,
``a <= 0`` or ``b <= 0`` give NaN."""
import math

from funcgrad.numpy import exp, floor, log1p, where
from funcgrad.scipy.special import betaln
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpmf", "pmf"]
_m = method("betabinom")


@_m
def logpmf(k, n, a, b, loc=0):
    y = k - loc
    support = (y >= 0) & (y <= n) & (y == floor(y))
    ys = where(support, y, 0.0)
    log_comb = -log1p(n) - betaln(n - ys + 1.0, ys + 1.0)
    v = where(support, log_comb + betaln(ys + a, n - ys + b) - betaln(a, b), -math.inf)
    return invalid_to_nan(v, (n >= 0) & (n == floor(n)) & (a > 0) & (b > 0))


@_m
def pmf(k, n, a, b, loc=0):
    return exp(logpmf(k, n, a, b, loc))
