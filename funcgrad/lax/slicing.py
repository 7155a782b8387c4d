"""``jax.lax``'s one-axis slicing helpers: ``slice_in_dim``, ``index_in_dim``,
``dynamic_slice_in_dim``, ``dynamic_index_in_dim``, ``dynamic_update_slice_in_dim`` and
``dynamic_update_index_in_dim``. Static positions are checked like NumPy's (negative ones
count from the end); dynamic ones follow ``lax.dynamic_slice`` (wrap once, then clamp)."""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core.avals import is_python_scalar
from funcgrad.lax import _util

__all__ = [
    "dynamic_index_in_dim", "dynamic_slice_in_dim", "dynamic_update_index_in_dim",
    "dynamic_update_slice_in_dim", "index_in_dim", "slice_in_dim",
]


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[..., start:limit:stride, ...]`` along ``axis`` (None: the ends)."""
    a = _util.aval("slice_in_dim", operand)
    axis = _util.axis("slice_in_dim", axis, a.ndim, a.shape)
    n = a.shape[axis]
    start = 0 if start_index is None else _util.static_int("slice_in_dim", start_index, "start_index")
    limit = n if limit_index is None else _util.static_int("slice_in_dim", limit_index, "limit_index")
    stride = _util.static_int("slice_in_dim", stride, "stride")
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    if stride < 1 or not 0 <= start <= n or not 0 <= limit <= n or limit < start:
        raise ValueError(f"slice_in_dim: start_index={start_index}, limit_index={limit_index}, stride={stride} "
                         f"do not describe a slice of axis {axis} of an operand of shape {a.shape}")
    starts, limits, strides = [0] * a.ndim, list(a.shape), [1] * a.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return lax.slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """``operand`` at static position ``index`` of ``axis`` (kept as a size-1 axis by default)."""
    a = _util.aval("index_in_dim", operand)
    axis = _util.axis("index_in_dim", axis, a.ndim, a.shape)
    index = _util.static_int("index_in_dim", index, "index")
    n = a.shape[axis]
    if not -n <= index < n:
        raise IndexError(f"index_in_dim: index {index} is out of bounds for axis {axis} of an operand "
                         f"of shape {a.shape}")
    index %= n
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else lax.reshape(out, a.shape[:axis] + a.shape[axis + 1:])


def _start(fname, start_index, a, axis):
    """The dynamic start as a 0-d integer (a Python int becomes int64, as jnp does)."""
    if is_python_scalar(start_index) or isinstance(start_index, np.integer):
        return np.asarray(_util.static_int(fname, start_index, "start_index"), np.int64)
    s = _util.aval(fname, start_index, "start_index")
    if s.shape != () or s.dtype.kind not in "iu":
        raise TypeError(f"{fname}: start_index must be a scalar integer, got {s.str_short()} "
                        f"(operand of shape {a.shape}, axis {axis})")
    return start_index


def _starts(fname, start_index, a, axis):
    s = _start(fname, start_index, a, axis)
    zero = lax.convert_element_type(np.asarray(0, np.int64), _util.aval(fname, s).dtype)
    return [s if d == axis else zero for d in range(a.ndim)]


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """``slice_size`` elements of ``axis`` from a possibly traced ``start_index``."""
    a = _util.aval("dynamic_slice_in_dim", operand)
    axis = _util.axis("dynamic_slice_in_dim", axis, a.ndim, a.shape)
    size = _util.static_int("dynamic_slice_in_dim", slice_size, "slice_size")
    if not 0 <= size <= a.shape[axis]:
        raise ValueError(f"dynamic_slice_in_dim: slice_size={size} does not fit axis {axis} of an operand "
                         f"of shape {a.shape}")
    sizes = list(a.shape)
    sizes[axis] = size
    return lax.dynamic_slice(operand, _starts("dynamic_slice_in_dim", start_index, a, axis), sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """``operand`` at a possibly traced position ``index`` of ``axis``."""
    a = _util.aval("dynamic_index_in_dim", operand)
    axis = _util.axis("dynamic_index_in_dim", axis, a.ndim, a.shape)
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else lax.reshape(out, a.shape[:axis] + a.shape[axis + 1:])


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """``operand`` with ``update`` written along ``axis`` from ``start_index``."""
    fname = "dynamic_update_slice_in_dim"
    a = _util.aval(fname, operand)
    u = _util.aval(fname, update, "update")
    axis = _util.axis(fname, axis, a.ndim, a.shape)
    if u.ndim != a.ndim or any(m > n for m, n in zip(u.shape, a.shape)) or u.dtype != a.dtype:
        raise TypeError(f"{fname}: update {u.str_short()} must have the rank and dtype of operand "
                        f"{a.str_short()} and fit inside it")
    return lax.dynamic_update_slice(operand, update, _starts(fname, start_index, a, axis))


def dynamic_update_index_in_dim(operand, update, index, axis):
    """``operand`` with ``update`` written at position ``index`` of ``axis`` (``update``
    may lack that axis)."""
    fname = "dynamic_update_index_in_dim"
    a = _util.aval(fname, operand)
    u = _util.aval(fname, update, "update")
    axis = _util.axis(fname, axis, a.ndim, a.shape)
    if u.ndim == a.ndim - 1:
        update = lax.reshape(update, u.shape[:axis] + (1,) + u.shape[axis:])
    return dynamic_update_slice_in_dim(operand, update, index, axis)
