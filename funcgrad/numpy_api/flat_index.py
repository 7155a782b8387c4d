"""Flat indices and multi-indices: ``ravel_multi_index`` and ``unravel_index``.

NumPy's values for valid indices. Out-of-range indices: NumPy raises; with concrete
indices funcgrad does too, and with traced ones (whose values are unknown) it does what
JAX does: ``unravel_index`` clips into range (after wrapping negative indices once), and
``ravel_multi_index`` needs ``mode='wrap'`` or ``'clip'``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.trace import Tracer
from funcgrad.errors import ConcretizationError
from funcgrad.numpy_api import elementwise as ew
from funcgrad.numpy_api._util import asarray

__all__ = ["ravel_multi_index", "unravel_index"]


def _dims(shape, fname: str) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(int(d.__index__()) for d in shape)
    except (AttributeError, TypeError):
        raise TypeError(f"{fname}: the shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{fname}: dimensions must be non-negative, got {dims}")
    return dims


def _int_index(x, fname: str, what: str):
    x = asarray(x, fname=fname)
    dt = x.aval.dtype if isinstance(x, Tracer) else x.dtype
    if not dtypes.is_integer(dt):
        raise TypeError(f"{fname}: {what} must be integers, got dtype {np.dtype(dt).name}")
    return x


def unravel_index(indices, shape):
    """The multi-index (a tuple of arrays, one per dimension) of each flat ``indices`` in
    an array of ``shape`` (C order).

    >>> fnp.unravel_index(fnp.asarray([22, 41, 37]), (7, 6))
    (Array([3, 6, 6]), Array([4, 5, 1]))
    """
    dims = _dims(shape, "unravel_index")
    idx = _int_index(indices, "unravel_index", "indices")
    size = int(np.prod(dims, dtype=np.int64))
    if not isinstance(idx, Tracer):
        flat = np.asarray(idx)
        if flat.size and (flat.min() < 0 or flat.max() >= size):
            bad = flat[(flat < 0) | (flat >= size)].ravel()[0]
            raise ValueError(f"unravel_index: index {bad} is out of bounds for an array of size {size} "
                             f"(shape {dims})")
    idx = asarray(idx, np.int64, fname="unravel_index")  # (NumPy's intp)
    if isinstance(idx, Tracer):  # (JAX: negative indices wrap once, the rest is clipped)
        idx = ew.where(ew.less(idx, 0), ew.add(idx, size), idx)
        idx = ew.clip(idx, 0, max(size - 1, 0))
    out = []
    for d in reversed(dims):
        if d == 0:
            out.append(ew.multiply(idx, 0))
            continue
        out.append(ew.remainder(idx, d))
        idx = ew.floor_divide(idx, d)
    return tuple(reversed(out))


_MODES = ("raise", "wrap", "clip")


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat index of each multi-index (``multi_index``: one integer array per
    dimension of ``dims``), in C or Fortran ``order``; out-of-range entries: ``mode``
    'raise', 'wrap' or 'clip' (or one mode per dimension).

    >>> fnp.ravel_multi_index((fnp.asarray([3, 6, 6]), fnp.asarray([4, 5, 1])), (7, 6))
    Array([22, 41, 37])
    """
    dims = _dims(dims, "ravel_multi_index")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    if not isinstance(multi_index, (tuple, list)):
        raise TypeError("ravel_multi_index: multi_index must be a tuple of integer arrays, one per dimension")
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: got {len(multi_index)} index arrays for {len(dims)} dimensions {dims}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(dims) or any(m not in _MODES for m in modes):
        raise ValueError(f"ravel_multi_index: mode must be one of {_MODES} or one per dimension, got {mode!r}")
    parts = []
    for k, (i, d, m) in enumerate(zip(multi_index, dims, modes)):
        i = _int_index(i, "ravel_multi_index", f"multi_index[{k}]")
        if m == "raise":
            if isinstance(i, Tracer):
                raise ConcretizationError(
                    "ravel_multi_index: mode='raise' checks the index values, which are not known while "
                    "tracing (under jit, vmap or grad); use mode='wrap' or mode='clip'")
            arr = np.asarray(i)
            if arr.size and (arr.min() < 0 or arr.max() >= d):
                raise ValueError(f"ravel_multi_index: invalid entry in coordinates array {k} "
                                 f"(values must lie in [0, {d}) for dims {dims})")
        elif m == "wrap":
            i = ew.remainder(i, d) if d else i
        else:
            i = ew.clip(i, 0, max(d - 1, 0))
        parts.append(asarray(i, np.int64, fname="ravel_multi_index"))
    strides, acc = [], 1
    for d in (reversed(dims) if order == "C" else dims):
        strides.append(acc)
        acc *= d
    if order == "C":
        strides.reverse()
    out = None
    for i, s in zip(parts, strides):
        term = ew.multiply(i, s)
        out = term if out is None else ew.add(out, term)
    return out
