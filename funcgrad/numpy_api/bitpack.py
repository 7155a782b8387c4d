"""Counting and packing bits: ``bitwise_count``, ``packbits``, ``unpackbits`` (NumPy's
signatures and uint8 results, ``jax.numpy``'s names).

All three are composites of integer primitives (``population_count``, shifts, a sum in
uint8), so they trace, batch under ``vmap`` and compile under ``jit``. They are not
differentiable (integer results), like NumPy's.

- ``bitwise_count(x)`` counts the one bits of ``|x|`` (NumPy's and JAX's rule for signed
  integers: ``bitwise_count(int8(-1)) == 1``; ``abs(int8(-128))`` wraps to -128, whose
  pattern has one bit set, so it counts 1 as NumPy's does);
- ``packbits(a, axis=None, bitorder="big")``: each element is a bit (nonzero -> 1), eight
  to a byte along ``axis`` (the flattened array when ``axis`` is None), the last byte
  padded with zeros;
- ``unpackbits(a, axis=None, count=None, bitorder="big")``: uint8 input only, eight bits
  per byte along ``axis``; ``count`` keeps that many bits (zero-padded past the end) or,
  negative, drops that many from the end.
"""
from __future__ import annotations

import operator

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util

__all__ = ["bitwise_count", "packbits", "unpackbits"]

_U8 = dtypes.uint8


def _out(x):
    """A NumPy scalar for a 0-d eager result, as NumPy's ufuncs give."""
    return x[()] if type(x) is np.ndarray and not x.shape else x


def bitwise_count(x, /):
    """The number of one bits in ``|x|``, as uint8 (integers and bools).

    >>> fnp.bitwise_count(np.array([0, 7, -1, 255], np.int16))
    Array([0, 3, 1, 8], dtype=uint8)
    """
    x = _util.asarray(x, fname="bitwise_count")
    if x.dtype.kind not in "biu":
        raise TypeError(f"bitwise_count: x must be an integer or bool array, got {x.dtype.name}")
    if x.dtype == dtypes.bool_:
        return _out(lax.convert_element_type(x, _U8))
    if x.dtype.kind == "i":
        x = lax.abs(x)
    return _out(lax.convert_element_type(lax.population_count(x), _U8))


def _bit_axis(fname: str, a, axis):
    """``a`` with the packing axis last (flattened if ``axis`` is None) and that axis."""
    if axis is None:
        return lax.reshape(a, (_util.aval_of(a).size,)), None
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fname}: axis must be an integer or None, got {type(axis).__name__}") from None
    ndim = len(_util.aval_of(a).shape)
    axis = _util.canonicalize_axis(axis, ndim, fname)
    return _moveaxis(a, axis, ndim - 1), axis


def _moveaxis(a, src: int, dst: int):
    perm = list(range(len(_util.aval_of(a).shape)))
    perm.insert(dst, perm.pop(src))
    return a if perm == sorted(perm) else lax.transpose(a, tuple(perm))


def _bitorder(fname: str, bitorder) -> bool:
    if bitorder not in ("big", "little"):
        raise ValueError(f"{fname}: bitorder must be 'big' or 'little', got {bitorder!r}")
    return bitorder == "big"


def _shifts(big: bool, lead: tuple):
    """uint8 shift amounts 7..0 (big) or 0..7 (little), broadcast over ``lead + (8,)``."""
    amounts = np.arange(7, -1, -1, dtype=_U8) if big else np.arange(8, dtype=_U8)
    return lax.broadcast_in_dim(amounts, lead + (8,), (len(lead),))


def packbits(a, /, axis=None, bitorder="big"):
    """Pack the elements of a bool or integer array (nonzero -> 1) into uint8 bytes.

    >>> fnp.packbits(np.array([1, 0, 1, 1, 0, 0, 0, 0, 1]))
    Array([176, 128], dtype=uint8)
    """
    a = _util.asarray(a, fname="packbits")
    if a.dtype.kind not in "biu":
        raise TypeError(f"packbits: a must be a bool or integer array, got {a.dtype.name}")
    big = _bitorder("packbits", bitorder)
    if axis is not None and not _util.aval_of(a).shape:
        raise ValueError("packbits: axis must be None for a 0-d array (got axis=%r)" % (axis,))
    x, axis = _bit_axis("packbits", a, axis)
    shape = _util.aval_of(x).shape
    lead, n = shape[:-1], shape[-1]
    bits = lax.convert_element_type(lax.ne(x, _util.full(shape, 0, x.dtype)), _U8)
    nbytes = -(-n // 8)
    if nbytes * 8 != n:
        bits = lax.pad(bits, np.zeros((), _U8), [(0, 0, 0)] * len(lead) + [(0, nbytes * 8 - n, 0)])
    bits = lax.reshape(bits, lead + (nbytes, 8))
    packed = lax.reduce_sum(lax.shift_left(bits, _shifts(big, lead + (nbytes,))), (len(lead) + 1,))
    return packed if axis is None else _moveaxis(packed, len(lead), axis)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """Unpack the bits of a uint8 array into a uint8 array of 0s and 1s.

    >>> fnp.unpackbits(np.array([176, 128], np.uint8), count=9)
    Array([1, 0, 1, 1, 0, 0, 0, 0, 1], dtype=uint8)
    """
    a = _util.asarray(a, fname="unpackbits")
    if a.dtype != _U8:
        raise TypeError(f"unpackbits: a must be a uint8 array, got {a.dtype.name}")
    big = _bitorder("unpackbits", bitorder)
    if axis is not None and not _util.aval_of(a).shape:
        raise ValueError("unpackbits: axis must be None for a 0-d array (got axis=%r)" % (axis,))
    x, axis = _bit_axis("unpackbits", a, axis)
    shape = _util.aval_of(x).shape
    lead, n = shape[:-1], shape[-1]
    wide = lax.broadcast_in_dim(x, shape + (8,), tuple(range(len(shape))))
    one = _util.full(shape + (8,), 1, _U8)
    bits = lax.bitwise_and(lax.shift_right_logical(wide, _shifts(big, shape)), one)
    bits = lax.reshape(bits, lead + (8 * n,))
    if count is not None:
        try:
            count = operator.index(count)
        except TypeError:
            raise TypeError(f"unpackbits: count must be an integer or None, got {type(count).__name__}") from None
        if -count > 8 * n:
            raise ValueError(f"unpackbits: -count larger than number of elements (count={count}, {8 * n} bits)")
        keep = 8 * n + count if count < 0 else count
        if keep <= 8 * n:
            bits = lax.slice(bits, (0,) * len(shape), lead + (keep,))
        else:
            bits = lax.pad(bits, np.zeros((), _U8), [(0, 0, 0)] * len(lead) + [(0, keep - 8 * n, 0)])
    return bits if axis is None else _moveaxis(bits, len(lead), axis)
