"""Multivariate normal distribution: ``multivariate_normal.logpdf(x, mean, cov)``, pdf
(as JAX). ``x`` is (..., n); ``mean`` (..., n) or a scalar; ``cov`` (..., n, n), or a
scalar (``cov * I``). Computed with the Cholesky factor ``L``: the Mahalanobis term is
``|L^-1 (x - mean)|^2`` and ``log det cov = 2 sum log diag L``. A covariance that is not
positive definite gives NaN (JAX's behaviour); ``allow_singular`` is not supported (as
in JAX)."""
import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util
from funcgrad.scipy.special._util import out

__all__ = ["logpdf", "pdf"]
_LOG_2PI = math.log(2 * math.pi)


def logpdf(x, mean, cov, allow_singular=None):
    """Log density of N(mean, cov) at ``x``."""
    fname = "multivariate_normal.logpdf"
    if allow_singular is not None:
        raise NotImplementedError(f"{fname}: allow_singular is not supported (as in JAX)")
    _util.check_arraylike(fname, x, mean, cov)
    x, mean, cov = _util.promote_dtypes_inexact(fnp.asarray(x), fnp.asarray(mean), fnp.asarray(cov), fname=fname)
    m_shape, c_shape, x_shape = _util.shape_of(mean), _util.shape_of(cov), _util.shape_of(x)
    with np.errstate(all="ignore"):
        if not m_shape:  # univariate
            d = x - mean
            return out(-0.5 * d * d / cov - 0.5 * (_LOG_2PI + fnp.log(cov)))
        n = m_shape[-1]
        if not x_shape or x_shape[-1] != n:
            raise ValueError(f"{fname}: x of shape {x_shape} does not end in the dimension {n} of mean {m_shape}")
        d = x - mean
        if not c_shape:
            return out(-0.5 * fnp.sum(d * d, axis=-1) / cov - 0.5 * n * (_LOG_2PI + fnp.log(cov)))
        if len(c_shape) < 2 or c_shape[-2:] != (n, n):
            raise ValueError(f"{fname}: cov of shape {c_shape} must be ({n}, {n}) (or batched) "
                             f"for mean of shape {m_shape}")
        chol = fnp.linalg.cholesky(cov)
        batch = _util.broadcast_shapes(fname, _util.shape_of(d)[:-1], c_shape[:-2])
        chol = fnp.broadcast_to(chol, batch + (n, n))
        d = fnp.broadcast_to(d, batch + (n,))
        z = fnp.linalg.solve(chol, d[..., None])[..., 0]
        log_det = 2.0 * fnp.sum(fnp.log(fnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        return out(-0.5 * fnp.sum(z * z, axis=-1) - 0.5 * (n * _LOG_2PI + log_det))


def pdf(x, mean, cov, allow_singular=None):
    """Density of N(mean, cov) at ``x``."""
    return out(fnp.exp(logpdf(x, mean, cov, allow_singular)))
