"""``funcgrad.scipy.integrate``: the trapezoidal rule over samples, as SciPy/JAX.
(ODE solving is ``funcgrad.experimental.ode.odeint``, as in JAX.)

>>> trapezoid(np.array([1.0, 2.0, 3.0]))
array(4.)
"""
from __future__ import annotations

import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import shape_of

__all__ = ["trapezoid", "cumulative_trapezoid"]


def _prepare(fname, y, x, dx, axis):
    """(y moved so ``axis`` is last, the spacings along it)."""
    _util.check_arraylike(fname, y)
    y = _util.asarray(y, fname=fname)
    (y,) = _util.promote_dtypes_inexact(y, fname=fname)
    ndim = len(shape_of(y))
    if ndim == 0:
        raise ValueError(f"{fname}: y must have at least one dimension, got a scalar")
    axis = _util.canonicalize_axis(axis, ndim, fname)
    y = fnp.moveaxis(y, axis, -1)
    if x is None:
        return y, dx
    _util.check_arraylike(fname, x)
    x = _util.asarray(x, fname=fname)
    y, x = _util.promote_dtypes_inexact(y, x, fname=fname)
    n = shape_of(y)[-1]
    if len(shape_of(x)) == 1:
        if shape_of(x)[0] != n:
            raise ValueError(f"{fname}: x with shape {shape_of(x)} does not match y's axis {axis} of length {n} "
                             f"(y shape {shape_of(fnp.moveaxis(y, -1, axis))})")
        return y, x[1:] - x[:-1]
    if len(shape_of(x)) != ndim:
        raise ValueError(f"{fname}: x must be 1-d or have y's number of dims, got x {shape_of(x)} and y "
                         f"{shape_of(fnp.moveaxis(y, -1, axis))}")
    x = fnp.moveaxis(x, axis, -1)
    _util.broadcast_shapes(fname, shape_of(x), shape_of(y))
    return y, x[..., 1:] - x[..., :-1]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of the samples ``y`` along ``axis`` by the trapezoidal rule, at sample
    points ``x`` (1-d, or broadcastable to ``y``) or with uniform spacing ``dx``."""
    y, d = _prepare("trapezoid", y, x, dx, axis)
    return fnp.sum(d * (y[..., 1:] + y[..., :-1]) * 0.5, axis=-1)


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """Running trapezoidal integral along ``axis`` (one sample shorter than ``y``, or
    the same length with ``initial=0`` prepended; SciPy accepts only 0 there)."""
    if initial is not None and not (isinstance(initial, (int, float)) and initial == 0):
        raise ValueError(f"cumulative_trapezoid: initial must be None or 0, got {initial!r}")
    y, d = _prepare("cumulative_trapezoid", y, x, dx, axis)
    out = fnp.cumsum(d * (y[..., 1:] + y[..., :-1]) * 0.5, axis=-1)
    if initial is not None:
        out = fnp.concatenate([fnp.zeros(shape_of(out)[:-1] + (1,), out.dtype), out], axis=-1)
    return fnp.moveaxis(out, -1, axis if axis >= 0 else len(shape_of(out)) + axis)
