"""Small ``jax.lax`` conveniences over the primitives: ``clamp``, ``rsqrt``, ``square``,
``reciprocal``, ``expand_dims``, ``stop_gradient`` and ``optimization_barrier`` (on pytrees).

Like ``jax.lax`` they do not promote: operands keep their dtype, and an array of another
dtype is a TypeError (Python scalars are weak and take the operand's dtype)."""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core.avals import is_python_scalar
from funcgrad.lax import _util
from funcgrad.transforms.ad_api import stop_gradient

__all__ = ["clamp", "expand_dims", "optimization_barrier", "reciprocal", "rsqrt", "square", "stop_gradient"]


def _like(fname, argname, v, x_aval):
    """``v`` (a Python scalar or an array of x's dtype) broadcast to x's shape."""
    if is_python_scalar(v):
        v = np.asarray(v, x_aval.dtype)
    a = _util.aval(fname, v, argname)
    if a.dtype != x_aval.dtype:
        raise TypeError(f"{fname}: {argname} has dtype {a.dtype.name} but operand has {x_aval.dtype.name} "
                        "(lax does not promote; cast with lax.convert_element_type)")
    if a.shape not in ((), x_aval.shape):
        raise TypeError(f"{fname}: {argname} of shape {a.shape} must be a scalar or have the operand's shape "
                        f"{x_aval.shape}")
    return lax.broadcast_in_dim(v, x_aval.shape, ()) if a.shape != x_aval.shape else v


def clamp(min, x, max):  # noqa: A002 - JAX's argument names and order
    """``x`` clipped to ``[min, max]`` elementwise (``min``/``max`` scalars or of x's shape).

    Derivatives are JAX's: ``x`` gets the tangent where ``min < x < max`` strictly, ``min``
    where ``x < min < max``, ``max`` where ``max < x``; at a tie none does.

    >>> lax.clamp(0.0, fnp.array([-1.0, 0.5, 2.0]), 1.0)
    Array([0. , 0.5, 1. ])
    """
    xa = _util.aval("clamp", x, "x")
    lo, hi = _like("clamp", "min", min, xa), _like("clamp", "max", max, xa)
    value = lax.min(lax.max(x, lo), hi)
    inside = lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi))
    below = lax.bitwise_and(lax.gt(lo, x), lax.lt(lo, hi))
    above = lax.lt(hi, x)
    if xa.dtype.kind == "f":  # ties and min > max: the value, without a derivative (as JAX)
        value = lax.stop_gradient_p.bind(value)
    return lax.select(inside, x, lax.select(above, hi, lax.select(below, lo, value)))


def _float_unary(fname, x):
    a = _util.aval(fname, x, "x")
    if a.dtype.kind != "f":
        raise TypeError(f"{fname}: x must be a floating-point array, got {a.str_short()}")
    return a


def rsqrt(x):
    """``1 / sqrt(x)`` elementwise (float operands)."""
    a = _float_unary("rsqrt", x)
    return lax.div(lax.broadcast_in_dim(np.ones((), a.dtype), a.shape, ()), lax.sqrt(x))


def square(x):
    """``x * x`` elementwise (any numeric dtype)."""
    _util.aval("square", x, "x")
    return lax.integer_pow(x, 2)


def reciprocal(x):
    """``1 / x`` elementwise (float operands, as ``jax.lax.reciprocal``)."""
    _float_unary("reciprocal", x)
    return lax.integer_pow(x, -1)


def expand_dims(array, dimensions):
    """Insert size-1 axes at ``dimensions`` (positions in the result; negative count from
    its end), as ``jax.lax.expand_dims``."""
    a = _util.aval("expand_dims", array, "array")
    dimensions = tuple(dimensions) if not isinstance(dimensions, int) else (dimensions,)
    ndim_out = a.ndim + len(dimensions)
    dims = [_util.axis("expand_dims", d, ndim_out, a.shape, "dimensions") for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"expand_dims: repeated axis in dimensions {tuple(dimensions)} for shape {a.shape}")
    kept = [d for d in range(ndim_out) if d not in dims]
    shape = [1] * ndim_out
    for d, n in zip(kept, a.shape):
        shape[d] = n
    return lax.broadcast_in_dim(array, tuple(shape), tuple(kept))


def optimization_barrier(operand):
    """The identity on a pytree of arrays, as JAX's: compiled code computes each leaf once
    into a buffer of its own rather than fusing it into (and recomputing it in) every
    loop that reads it. Derivatives and batching pass through it."""
    from funcgrad.core import pytree

    return pytree.tree_map(lambda v: lax.optimization_barrier_1(_util_array(v)), operand)


def _util_array(v):
    _util.aval("optimization_barrier", v, "operand")  # a typed error for a non-array leaf
    return np.asarray(v) if is_python_scalar(v) else v
