"""funcgrad.numpy: covariance and correlation (``cov``, ``corrcoef``).

NumPy's algorithm step by step (weighted ``average``, deviations, one ``dot`` with
the transposed deviations, then a multiplication by ``1 / fact``), so values match to
the last bits and derivatives come from the composites. Results are at least float64
(NumPy computes ``cov`` in ``result_type(m, float64)``). The weight checks NumPy makes
(integer, non-negative ``fweights``, non-negative ``aweights``) run when the weights are
concrete; a non-positive ``fact`` gives inf/nan instead of a warning.

>>> fnp.cov(np.array([[0., 1., 2.], [2., 1., 0.]]))
Array([[ 1., -1.],
       [-1.,  1.]])
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util
from funcgrad.numpy_api import reductions as _red
from funcgrad.numpy_api.selection import arg, concrete_or_none

__all__ = ["cov", "corrcoef"]


def _variables(fname, m, rowvar, dtype, name):
    """``m`` as a 2-D (variables, observations) array of ``dtype`` (NumPy's ``ndmin=2``)."""
    x = arg(fname, m, name)
    shape = _util.shape_of(x)
    if len(shape) > 2:
        raise ValueError(f"{fname}: {name} has more than 2 dimensions (shape {shape})")
    x = lax.convert_element_type(x, dtype)
    x = lax.reshape(x, (1,) * (2 - len(shape)) + shape)
    if not rowvar and _util.shape_of(x)[0] != 1:
        x = lax.transpose(x, (1, 0))
    return x


def _weights(fname, w, n, name, integral):
    w = arg(fname, w, name)
    if integral:
        val = concrete_or_none(w)
        if val is not None and not np.all(val == np.around(val)):
            raise TypeError(f"{fname}: {name} must be integer")
    w = lax.convert_element_type(w, dtypes.float64)
    shape = _util.shape_of(w)
    if len(shape) > 1:
        raise RuntimeError(f"{fname}: cannot handle multidimensional {name} (shape {shape})")
    if shape[0] != n:
        raise RuntimeError(f"{fname}: incompatible numbers of samples and {name} ({shape[0]} != {n})")
    val = concrete_or_none(w)
    if val is not None and np.any(val < 0):
        raise ValueError(f"{fname}: {name} cannot be negative")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """Covariance matrix of the variables in the rows of ``m`` (columns if
    ``rowvar=False``), with ``y``'s variables appended; normalised by ``N - 1`` (``N``
    with ``bias=True``, ``N - ddof`` with ``ddof``), with frequency (``fweights``) and
    reliability (``aweights``) weights of the observations. One variable gives a 0-d
    array.

    >>> fnp.cov(np.array([1., 2., 4.]))
    Array(2.33333333)
    """
    args = [m] + ([] if y is None else [y])
    _util.check_arraylike("cov", *args)
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"cov: ddof must be an integer, got {ddof!r}")
    if dtype is None:
        dt = np.result_type(*[_util.aval_of(arg("cov", a)).dtype for a in args], dtypes.float64)
    else:
        dt = dtypes.canonicalize(dtype, what="cov dtype")
    x = _variables("cov", m, rowvar, dt, "m")
    if _util.shape_of(x)[0] == 0:
        return _util.full((0, 0), 0, dt)
    if y is not None:
        yv = _variables("cov", y, rowvar, dt, "y")
        if _util.shape_of(yv)[1] != _util.shape_of(x)[1]:
            raise ValueError(f"cov: m and y must have the same number of observations, got "
                             f"{_util.shape_of(x)} and {_util.shape_of(yv)}")
        x = lax.concatenate([x, yv], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    nvar, nobs = _util.shape_of(x)
    w = None
    if fweights is not None:
        w = _weights("cov", fweights, nobs, "fweights", True)
    aw = None
    if aweights is not None:
        aw = _weights("cov", aweights, nobs, "aweights", False)
        w = aw if w is None else lax.mul(w, aw)
    avg, w_sum = _red.average(x, axis=1, weights=w, returned=True)
    w_sum = lax.reshape(lax.slice(w_sum, (0,), (1,)), ())
    if w is None:
        fact = _util.full((), nobs - ddof, dt)
    elif ddof == 0:
        fact = w_sum
    elif aw is None:
        fact = lax.sub(w_sum, _util.full((), float(ddof), dtypes.float64))
    else:
        corr = lax.div(lax.reduce_sum(lax.mul(w, aw), (0,)), w_sum)
        fact = lax.sub(w_sum, lax.mul(_util.full((), float(ddof), dtypes.float64), corr))
    fact = lax.convert_element_type(fact, dt)
    fact = lax.select(lax.le(fact, _util.full((), 0, dt)), _util.full((), 0, dt), fact)
    dev = lax.sub(x, lax.broadcast_in_dim(avg, (nvar, nobs), (0,)))
    if w is None:
        dev_w = dev
    else:
        dev_w = lax.mul(dev, lax.broadcast_in_dim(lax.convert_element_type(w, dt), (nvar, nobs), (1,)))
    if _util.aval_of(dev_w).dtype.kind == "c":  # NumPy: X @ X^H
        dev_w = lax.conj(dev_w)
    c = lax.dot_general(dev, dev_w, (((1,), (1,)), ((), ())))
    scale = lax.div(_util.full((), 1, dt), fact)  # NumPy: c *= true_divide(1, fact)
    c = lax.mul(c, lax.broadcast_in_dim(scale, (nvar, nvar), ()))
    return lax.reshape(c, ()) if nvar == 1 else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients: ``cov`` divided by the outer product of the
    standard deviations, clipped to [-1, 1] (a single variable gives ``c / c``).

    >>> fnp.corrcoef(np.array([[0., 1., 2.], [2., 1., 0.5]]))[0, 1] < 0
    Array(True)
    """
    c = cov(x, y, rowvar, dtype=dtype)
    shape = _util.shape_of(c)
    if not shape:
        return lax.div(c, c)
    d = lax.sqrt(lax.reshape(lax.gather(c, lax.concatenate(
        [lax.reshape(lax.iota(dtypes.int64, (shape[0],), 0), (shape[0], 1))] * 2, 1), mode="clip"), (shape[0],)))
    c = lax.div(c, lax.broadcast_in_dim(d, shape, (0,)))
    c = lax.div(c, lax.broadcast_in_dim(d, shape, (1,)))
    one = _util.full(shape, 1, _util.aval_of(c).dtype)
    return lax.max(lax.min(c, one), lax.neg(one))
