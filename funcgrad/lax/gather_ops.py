"""``jax.lax.gather`` with ``GatherDimensionNumbers`` and ``slice_sizes`` (XLA's general
gather), and ``index_take``.

Each index vector (the last axis of ``start_indices``) gives the start of a slice of
``slice_sizes`` in the operand axes ``start_index_map`` (0 in the others); the slices are
cut with ``dynamic_slice`` under ``vmap`` over the batch of index vectors, the
``collapsed_slice_dims`` (of size 1) dropped, and the remaining slice axes placed at
``offset_dims`` of the output, the batch axes filling the other positions in order. Out-of-
range starts are clamped (``mode="clip"``, ``"promise_in_bounds"``) or give a slice of
``fill_value`` (``"fill"``, the default, as JAX's). Batching dims are not supported
(``vmap`` the gather instead). ``lax.gather(operand, indices, mode, fill_value)`` without
dimension numbers is funcgrad's row gather, the primitive's form.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core.trace import get_aval_any
from funcgrad.lax import _util
from funcgrad.lax.types import GatherDimensionNumbers, GatherScatterMode

__all__ = ["gather", "index_take"]


def _default_fill(dtype):
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def gather(operand, start_indices, dimension_numbers=None, slice_sizes=None, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather (``jax.lax.gather``): slices of ``operand`` of ``slice_sizes`` starting at
    the index vectors of ``start_indices`` (last axis), arranged by ``dimension_numbers``
    (a ``GatherDimensionNumbers``). Called as ``gather(operand, indices, mode, fill_value)``
    (no dimension numbers), it is funcgrad's row gather: ``operand[r[0], ..., r[k-1]]`` per
    index row ``r``.

    >>> dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    >>> lax.gather(np.arange(12.0).reshape(4, 3), np.array([[2], [0]]), dn, (1, 3))
    Array([[6., 7., 8.],
           [0., 1., 2.]])
    """
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        if dimension_numbers is not None and not isinstance(dimension_numbers, (str, GatherScatterMode)):
            raise TypeError(f"gather: dimension_numbers must be a lax.GatherDimensionNumbers (or, for the row "
                            f"gather, a mode), got {type(dimension_numbers).__name__}")
        row_mode = dimension_numbers if dimension_numbers is not None else (mode or "clip")
        return lax.gather(operand, start_indices, mode=row_mode, fill_value=fill_value)
    dn = dimension_numbers
    op = _util.aval("gather", operand)
    idx = _util.aval("gather", start_indices, "start_indices")
    if dn.operand_batching_dims or dn.start_indices_batching_dims:
        raise NotImplementedError("gather: operand_batching_dims / start_indices_batching_dims are not supported "
                                  "by funcgrad (vmap the gather instead)")
    if slice_sizes is None or len(slice_sizes) != op.ndim:
        raise ValueError(f"gather: slice_sizes must give one size per operand axis (operand {op.shape}), "
                         f"got {slice_sizes}")
    sizes = tuple(_util.static_int("gather", s, "slice_sizes") for s in slice_sizes)
    starts_map = tuple(int(d) for d in dn.start_index_map)
    collapsed = tuple(sorted(int(d) for d in dn.collapsed_slice_dims))
    offset_dims = tuple(int(d) for d in dn.offset_dims)
    if idx.ndim == 0 or idx.shape[-1] != len(starts_map) or idx.dtype.kind not in "iu":
        raise ValueError(f"gather: start_indices {idx.str_short()} must be integers ending in an index vector of "
                         f"length {len(starts_map)} (len(start_index_map))")
    if any(not 0 <= s <= d for s, d in zip(sizes, op.shape)) or any(sizes[d] != 1 for d in collapsed):
        raise ValueError(f"gather: slice_sizes {sizes} must fit operand {op.shape} and be 1 at the "
                         f"collapsed_slice_dims {collapsed}")
    kept = [d for d in range(op.ndim) if d not in collapsed]
    batch_shape = idx.shape[:-1]
    out_rank = len(batch_shape) + len(kept)
    if len(offset_dims) != len(kept) or sorted(offset_dims) != list(offset_dims) or \
            any(not 0 <= d < out_rank for d in offset_dims):
        raise ValueError(f"gather: offset_dims {offset_dims} must be {len(kept)} increasing output axes below "
                         f"{out_rank}")
    parsed = GatherScatterMode.from_any(mode)
    if fill_value is None:
        fill_value = _default_fill(op.dtype)
    from funcgrad.transforms.batching import vmap

    n = int(np.prod(batch_shape, dtype=np.int64))
    flat_idx = lax.reshape(lax.convert_element_type(start_indices, np.int64), (n, len(starts_map)))
    limits = [op.shape[d] - sizes[d] for d in range(op.ndim)]

    def one(index_vector):
        starts, in_bounds = [], None
        for d in range(op.ndim):
            if d not in starts_map:
                starts.append(np.int64(0))
                continue
            s = lax.reshape(lax.slice(index_vector, (starts_map.index(d),), (starts_map.index(d) + 1,)), ())
            ok = lax.bitwise_and(lax.ge(s, np.int64(0)), lax.le(s, np.int64(limits[d])))
            in_bounds = ok if in_bounds is None else lax.bitwise_and(in_bounds, ok)
            starts.append(lax.max(lax.min(s, np.int64(limits[d])), np.int64(0)))
        piece = lax.dynamic_slice(operand, starts, sizes)
        piece = lax.reshape(piece, tuple(sizes[d] for d in kept))
        if parsed in (GatherScatterMode.FILL_OR_DROP, GatherScatterMode.ONE_HOT) and in_bounds is not None:
            shape = get_aval_any(piece).shape
            fill = lax.broadcast_in_dim(np.asarray(fill_value, op.dtype), shape, ())
            piece = lax.select(lax.broadcast_in_dim(in_bounds, shape, ()), piece, fill)
        return piece

    pieces = vmap(one)(flat_idx) if n else lax.broadcast_in_dim(np.zeros((), op.dtype), (0,) + tuple(
        sizes[d] for d in kept), ())
    pieces = lax.reshape(pieces, batch_shape + tuple(sizes[d] for d in kept))
    # batch axes fill the output positions that are not offset_dims, in order
    batch_positions = [d for d in range(out_rank) if d not in offset_dims]
    source = {pos: i for i, pos in enumerate(batch_positions)}
    source.update({pos: len(batch_shape) + i for i, pos in enumerate(offset_dims)})
    perm = tuple(source[d] for d in range(out_rank))
    return pieces if perm == tuple(range(out_rank)) else lax.transpose(pieces, perm)


def index_take(src, idxs, axes):
    """``src`` indexed along ``axes`` by the integer arrays ``idxs`` (one per axis, one shape;
    indices wrap modulo the axis length), the other axes kept whole after the index axes.

    >>> lax.index_take(np.arange(6.0).reshape(2, 3), (np.array([1, -1]),), (1,))
    Array([[1., 4.],
           [2., 5.]])
    """
    aval = _util.aval("index_take", src, "src")
    axes = tuple(_util.axis("index_take", a, aval.ndim, aval.shape, "axes") for a in axes)
    idxs = list(idxs)
    if len(idxs) != len(axes) or not idxs:
        raise ValueError(f"index_take: give one index array per axis, got {len(idxs)} for axes {axes}")
    shapes = {get_aval_any(i).shape for i in idxs}
    if len(shapes) != 1:
        raise ValueError(f"index_take: the index arrays must have one shape, got {sorted(shapes)}")
    columns = []
    for i, ax in zip(idxs, axes):
        i = lax.convert_element_type(i, np.int64)
        shape = get_aval_any(i).shape
        size = lax.broadcast_in_dim(np.int64(aval.shape[ax]), shape, ())
        wrapped = lax.rem(lax.add(lax.rem(i, size), size), size)
        columns.append(lax.reshape(wrapped, shape + (1,)))
    indices = lax.concatenate(columns, len(shapes.pop()))
    slice_sizes = tuple(1 if d in axes else aval.shape[d] for d in range(aval.ndim))
    batch_rank = get_aval_any(indices).ndim - 1
    dn = GatherDimensionNumbers(offset_dims=tuple(range(batch_rank, batch_rank + aval.ndim - len(axes))),
                                collapsed_slice_dims=tuple(sorted(axes)), start_index_map=axes)
    return gather(src, indices, dn, slice_sizes, mode="clip")
