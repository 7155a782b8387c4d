"""Argument handling shared by ``funcgrad.scipy.linalg``: float conversion (ints and
bools become float64, float32 stays float32, as SciPy's LAPACK wrappers do) and checks
that name the function, the argument and the shapes."""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import aval_of, shape_of


def as_float(fname, x, argname):
    _util.check_arraylike(fname, x)
    x = _util.asarray(x, fname=fname)
    (x,) = _util.promote_dtypes_inexact(x, fname=fname)
    return x


def matrix(fname, a, argname="a", square=True):
    """``a`` as a float (stack of) matrices, checked: a ``ValueError`` naming the shape."""
    a = as_float(fname, a, argname)
    shape = shape_of(a)
    if len(shape) < 2:
        raise ValueError(f"{fname}: {argname} must be a (stack of) matrices (..., m, n), got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"{fname}: {argname} must be a (stack of) square matrices (..., n, n), got shape {shape}")
    return a


def promote(fname, a, b):
    """``a`` and ``b`` cast to their common float dtype."""
    a, b = _util.promote_dtypes_inexact(a, b, fname=fname)
    return a, b


def rhs(fname, a, b):
    """``b`` as a (..., n, k) right-hand side for the (..., n, n) ``a``: a vector when
    ``b.ndim == a.ndim - 1`` (SciPy's 1-d ``b`` for a 2-d ``a``), batch dims broadcast.
    Returns (a, b, vector?)."""
    b = as_float(fname, b, "b")
    a, b = promote(fname, a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    n = a_shape[-1]
    vector = len(b_shape) == len(a_shape) - 1
    if len(b_shape) == 0 or b_shape[-1 if vector else -2] != n:
        raise ValueError(
            f"{fname}: b with shape {b_shape} is incompatible with a of shape {a_shape}: b must have "
            f"shape (..., {n}) or (..., {n}, k)"
        )
    if vector:
        b = fnp.expand_dims(b, -1)
    batch = _util.broadcast_shapes(fname, a_shape[:-2], shape_of(b)[:-2])
    return fnp.broadcast_to(a, batch + (n, n)), fnp.broadcast_to(b, batch + shape_of(b)[-2:]), vector


def unvector(x, vector):
    return x[..., 0] if vector else x


def mT(x):
    return fnp.swapaxes(x, -1, -2)


def eye_like(a):
    shape = shape_of(a)
    return fnp.broadcast_to(np.eye(shape[-1], dtype=aval_of(a).dtype), shape)


def trans_flag(fname, trans):
    """SciPy's ``trans``: 0/'N' (a x = b), 1/'T' and 2/'C' (a^T x = b; real matrices)."""
    table = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}
    try:
        return table[trans]
    except (KeyError, TypeError):
        raise ValueError(f"{fname}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}") from None
