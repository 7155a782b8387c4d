"""Multinomial distribution: ``multinomial.logpmf(x, n, p)``, pmf (as
``jax.scipy.stats.multinomial``): counts ``x`` (..., k) of ``n`` trials with category
probabilities ``p`` (..., k); ``log n! + sum_i (x_i log p_i - log x_i!)``, ``-inf`` where the
counts do not add up to ``n``. Leading dims of ``x``, ``n`` and ``p`` broadcast."""
import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.scipy.special import gammaln, xlogy
from funcgrad.scipy.special._util import float_args, out

__all__ = ["logpmf", "pmf"]


def _args(fname, x, n, p):
    x, p = float_args(fname, x, p)  # (broadcast together: both (..., k))
    (n,) = float_args(fname, n)
    if not fnp.shape(x):
        raise ValueError(f"{fname}: x must have a trailing category axis (..., k), got shape {fnp.shape(x)}")
    n, x = fnp.asarray(n, fnp.result_type(x)), fnp.asarray(x, fnp.result_type(n, x))
    return x, n, fnp.asarray(p, fnp.result_type(x))


def logpmf(x, n, p):
    """``scipy.stats.multinomial.logpmf(x, n, p)``: the log-probability of the counts ``x``
    (last axis: the categories) in ``n`` trials with probabilities ``p``; ``-inf`` where
    ``sum(x) != n``. Differentiable in ``p``."""
    x, n, p = _args("multinomial.logpmf", x, n, p)
    with np.errstate(all="ignore"):
        v = gammaln(n + 1.0) + fnp.sum(xlogy(x, p) - gammaln(x + 1.0), axis=-1)
        return out(fnp.where(fnp.sum(x, axis=-1) == n, v, -math.inf))


def pmf(x, n, p):
    """``scipy.stats.multinomial.pmf(x, n, p)``: ``exp(logpmf(x, n, p))``."""
    return out(fnp.exp(logpmf(x, n, p)))
