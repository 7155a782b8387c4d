"""``jax.lax`` names built from the primitives in a line or two: filled arrays (``full``,
``full_like``), shape changes (``broadcast``, ``broadcasted_iota``, ``squeeze``), the
elementwise ``logistic`` and ``exp2``, and the logical reductions ``reduce_and``/``or``/``xor``.

Like the rest of ``funcgrad.lax`` they do not promote: operands keep their dtype."""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.avals import is_python_scalar
from funcgrad.lax import _util
from funcgrad.lax.reduction import reduce

__all__ = ["full", "full_like", "broadcast", "broadcasted_iota", "squeeze", "logistic", "exp2", "reduce_and",
           "reduce_or", "reduce_xor"]


def _shape(fname, shape):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return tuple(_util.static_int(fname, d, "shape") for d in shape)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of ``shape`` filled with ``fill_value`` (its dtype unless ``dtype`` is
    given; a Python float is float64, funcgrad's default)."""
    shape = _shape("full", shape)
    if np.shape(fill_value) != () and not hasattr(fill_value, "aval"):
        raise TypeError(f"full: fill_value must be a scalar, got shape {np.shape(fill_value)}")
    if dtype is not None:
        dtype = dtypes.canonicalize(dtype, what="full dtype")
        value = np.asarray(fill_value, dtype) if is_python_scalar(fill_value) else \
            lax.convert_element_type(fill_value, dtype)
    else:
        value = np.asarray(fill_value) if is_python_scalar(fill_value) else fill_value
    if _util.aval("full", value, "fill_value").shape != ():
        raise TypeError(f"full: fill_value must be a scalar, got shape {_util.aval('full', value).shape}")
    return lax.broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None, *, sharding=None):
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``."""
    a = _util.aval("full_like", x, "x")
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype)


def broadcast(operand, sizes):
    """``operand`` with new leading axes of ``sizes``: shape ``sizes + operand.shape``."""
    a = _util.aval("broadcast", operand)
    sizes = _shape("broadcast", sizes)
    return lax.broadcast_in_dim(operand, sizes + a.shape, tuple(range(len(sizes), len(sizes) + a.ndim)))


def broadcasted_iota(dtype, shape, dimension):
    """An array of ``shape`` counting 0, 1, 2, ... along ``dimension``."""
    return lax.iota(dtype, _shape("broadcasted_iota", shape), dimension)


def squeeze(array, dimensions):
    """``array`` without its size-1 axes ``dimensions`` (negative ones count from the end)."""
    a = _util.aval("squeeze", array, "array")
    dims = {_util.axis("squeeze", d, a.ndim, a.shape, "dimensions") for d in dimensions}
    bad = [d for d in sorted(dims) if a.shape[d] != 1]
    if bad:
        raise ValueError(f"squeeze: dimensions {tuple(dimensions)} of shape {a.shape} must have size 1 "
                         f"(axis {bad[0]} has size {a.shape[bad[0]]})")
    return lax.reshape(array, tuple(n for i, n in enumerate(a.shape) if i not in dims))


def logistic(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))`` elementwise (float operands)."""
    a = _util.aval("logistic", x, "x")
    if a.dtype.kind not in "fc":
        raise TypeError(f"logistic: x must be a floating-point array, got {a.str_short()}")
    one = lax.broadcast_in_dim(np.ones((), a.dtype), a.shape, ())
    return lax.div(one, lax.add(one, lax.exp(lax.neg(x))))


def exp2(x):
    """``2 ** x`` elementwise (float operands)."""
    a = _util.aval("exp2", x, "x")
    if a.dtype.kind not in "fc":
        raise TypeError(f"exp2: x must be a floating-point array, got {a.str_short()}")
    return lax.pow(lax.broadcast_in_dim(np.full((), 2, a.dtype), a.shape, ()), x)


def _logical_reduce(fname, op, all_ones, operand, axes):
    a = _util.aval(fname, operand)
    if a.dtype.kind not in "biu":
        raise TypeError(f"{fname}: operand must be a boolean or integer array, got {a.str_short()}")
    init = np.zeros((), a.dtype)
    return reduce(operand, np.invert(init) if all_ones else init, op, tuple(axes))  # (True / every bit set)


def reduce_and(operand, axes):
    """Logical (bool) or bitwise (int) AND over ``axes``."""
    return _logical_reduce("reduce_and", lax.bitwise_and, True, operand, axes)


def reduce_or(operand, axes):
    """Logical (bool) or bitwise (int) OR over ``axes``."""
    return _logical_reduce("reduce_or", lax.bitwise_or, False, operand, axes)


def reduce_xor(operand, axes):
    """Logical (bool) or bitwise (int) XOR over ``axes``."""
    return _logical_reduce("reduce_xor", lax.bitwise_xor, False, operand, axes)
