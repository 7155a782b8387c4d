"""Dirichlet distribution: ``dirichlet.logpdf(x, alpha)``, pdf (as JAX and SciPy).

``alpha`` has shape (K,); ``x`` has shape (K, ...) (or (K-1, ...): the last component is
``1 - sum``). Points off the simplex (a component <= 0, or a sum differing from 1 by
more than 1e-6 — JAX's test) have density 0."""
import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util
from funcgrad.scipy.special import gammaln, xlogy
from funcgrad.scipy.special._util import out

__all__ = ["logpdf", "pdf"]


def _args(fname, x, alpha):
    _util.check_arraylike(fname, x, alpha)
    x, alpha = _util.promote_dtypes_inexact(fnp.asarray(x), fnp.asarray(alpha), fname=fname)
    a_shape, x_shape = _util.shape_of(alpha), _util.shape_of(x)
    if len(a_shape) != 1:
        raise ValueError(f"{fname}: alpha must be one-dimensional, got shape {a_shape}")
    k = a_shape[0]
    if not x_shape or x_shape[0] not in (k, k - 1):
        raise ValueError(f"{fname}: x must have shape ({k}, ...) or ({k - 1}, ...) for alpha of shape "
                         f"{a_shape}, got {x_shape}")
    if x_shape[0] == k - 1:
        x = fnp.concatenate([x, 1.0 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
    return x, alpha


def logpdf(x, alpha):
    """Log density of the Dirichlet distribution with concentration ``alpha`` at ``x``."""
    x, alpha = _args("dirichlet.logpdf", x, alpha)
    a = fnp.reshape(alpha, alpha.shape + (1,) * (len(_util.shape_of(x)) - 1))
    with np.errstate(all="ignore"):
        normalize = fnp.sum(gammaln(alpha)) - gammaln(fnp.sum(alpha))
        on_simplex = fnp.all(x > 0, axis=0) & (fnp.abs(fnp.sum(x, axis=0) - 1.0) < 1e-6)
        xs = fnp.where(x > 0, x, 1.0)
        v = fnp.sum(xlogy(a - 1.0, xs), axis=0) - normalize
        return out(fnp.where(on_simplex, v, -math.inf))


def pdf(x, alpha):
    """Density of the Dirichlet distribution with concentration ``alpha`` at ``x``."""
    return out(fnp.exp(logpdf(x, alpha)))
