"""funcgrad.numpy.linalg: norms (decompositions come with the SVD work).

Integer and boolean inputs are converted to float64 first, as in NumPy.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import aval_of, shape_of

__all__ = ["norm"]

_SVD_NORMS = (
    "comes with the SVD (funcgrad.numpy.linalg.svd), planned in the autodiff issue; use "
    "ord='fro', 1, -1, inf or -inf meanwhile"
)


def _abs(x):
    return lax.abs(x)


def _sum(x, axes):
    return lax.reduce_sum(x, axes)


def _sum_squares(x, axes):
    return _sum(lax.mul(x, x), axes)


def _vector_norm(x, ord, axis):
    """Norm of the vectors along ``axis`` (an int)."""
    dt = aval_of(x).dtype
    ax = (axis,)
    if ord is None or ord == 2:
        return lax.sqrt(_sum_squares(x, ax))
    if ord == np.inf:
        return lax.reduce_max(_abs(x), ax)
    if ord == -np.inf:
        return lax.reduce_min(_abs(x), ax)
    if ord == 0:  # the number of non-zeros
        nz = lax.ne(x, _util.full(shape_of(x), 0, dt))
        return _sum(lax.convert_element_type(nz, dt), ax)
    if ord == 1:
        return _sum(_abs(x), ax)
    p = float(ord)
    powered = lax.pow(_abs(x), _util.full(shape_of(x), p, dt))
    s = _sum(powered, ax)
    return lax.pow(s, _util.full(shape_of(s), 1.0 / p, dt))


def _matrix_norm(x, ord, row, col):
    if ord is None or ord == "fro":
        return lax.sqrt(_sum_squares(x, (row, col)))
    if isinstance(ord, str):
        if ord == "nuc":
            raise NotImplementedError(f"norm: ord='nuc' {_SVD_NORMS}")
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
    if ord in (2, -2):
        raise NotImplementedError(f"norm: ord={ord} (a singular value) {_SVD_NORMS}")
    if ord in (1, -1):  # max/min column sum
        inner, outer = row, col
    elif ord in (np.inf, -np.inf):  # max/min row sum
        inner, outer = col, row
    else:
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
    sums = _sum(_abs(x), (inner,))
    outer = outer - 1 if outer > inner else outer
    return (lax.reduce_max if ord > 0 else lax.reduce_min)(sums, (outer,))


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, like ``numpy.linalg.norm``.

    Vectors (1-d, or ``axis`` an int): ``ord`` None/2, 1, inf, -inf, 0 or any p.
    Matrices (2-d, or ``axis`` a pair): None/'fro', 1, -1, inf, -inf; 2, -2 and 'nuc'
    raise ``NotImplementedError`` until the SVD lands.

    >>> fnp.linalg.norm(np.array([3.0, 4.0]))
    np.float64(5.0)
    """
    _util.check_arraylike("norm", x)
    x = _util.asarray(x, fname="norm")
    if aval_of(x).dtype.kind != "f":
        x = lax.convert_element_type(x, dtypes.float64)
    ndim = aval_of(x).ndim
    if axis is None:
        if ord is None:  # 2-norm of everything, whatever the rank
            flat = lax.reshape(x, (aval_of(x).size,))
            out = lax.sqrt(_sum_squares(flat, (0,)))
            return lax.reshape(out, (1,) * ndim) if keepdims else out
        if ndim not in (1, 2):
            raise ValueError(f"norm: improper number of dimensions to norm ({ndim}-d input with ord={ord!r} needs axis=)")
        axes = tuple(range(ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        axes = (axis,)
    axes = tuple(_util.canonicalize_axis(a, ndim, "norm") for a in axes)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
        out = _vector_norm(x, ord, axes[0])
    elif len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError(f"norm: duplicate axes given ({axis})")
        out = _matrix_norm(x, ord, *axes)
    else:
        raise ValueError(f"norm: improper number of dimensions to norm (axis={axis})")
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(shape_of(x)))
        out = lax.reshape(out, shape)
    return out
