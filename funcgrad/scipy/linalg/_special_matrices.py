"""Structured matrices built from their defining vectors: ``block_diag``, ``toeplitz``."""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import shape_of


def block_diag(*arrs):
    """Block-diagonal matrix of ``arrs`` (SciPy: a 0-d or 1-d argument is one row).

    >>> block_diag(np.ones((2, 2)), 3.0).shape
    (3, 3)
    """
    if not arrs:
        return fnp.zeros((1, 0))
    _util.check_arraylike("block_diag", *arrs)
    arrs = [_util.asarray(a, fname="block_diag") for a in arrs]
    for i, a in enumerate(arrs):
        if len(shape_of(a)) > 2:
            raise ValueError(f"block_diag: argument {i} has shape {shape_of(a)}; arguments must have at most 2 dims")
    arrs = _util.promote_dtypes(*arrs)
    arrs = [fnp.atleast_2d(a) for a in arrs]
    rows = [shape_of(a)[0] for a in arrs]
    cols = [shape_of(a)[1] for a in arrs]
    total = sum(cols)
    out_rows = []
    start = 0
    for a, c in zip(arrs, cols):
        out_rows.append(fnp.pad(a, ((0, 0), (start, total - start - c))))
        start += c
    if sum(rows) == 0:
        return fnp.zeros((0, total), arrs[0].dtype)
    return fnp.concatenate(out_rows, axis=0)


def toeplitz(c, r=None):
    """Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` is ignored;
    ``r=None`` means ``r = c``). As SciPy >= 1.17 and JAX, leading dims of ``c`` and
    ``r`` are batch dims (broadcast together): ``c`` (..., m), ``r`` (..., n) give
    (..., m, n).

    >>> toeplitz(np.array([1.0, 2.0, 3.0]))[2]
    Array([3., 2., 1.])
    """
    _util.check_arraylike("toeplitz", c)
    c = fnp.atleast_1d(_util.asarray(c, fname="toeplitz"))
    r = c if r is None else fnp.atleast_1d(_util.asarray(r, fname="toeplitz"))
    c, r = _util.promote_dtypes(c, r)
    m, n = shape_of(c)[-1], shape_of(r)[-1]
    batch = _util.broadcast_shapes("toeplitz", shape_of(c)[:-1], shape_of(r)[:-1])
    c, r = fnp.broadcast_to(c, batch + (m,)), fnp.broadcast_to(r, batch + (n,))
    vals = fnp.concatenate([fnp.flip(r[..., 1:], axis=-1), c], axis=-1)  # r[n-1] ... r[1] c[0] ... c[m-1]
    idx = np.arange(m)[:, None] - np.arange(n)[None, :] + (n - 1)
    return vals[..., idx]
