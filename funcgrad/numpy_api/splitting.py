"""funcgrad.numpy: splitting and moving axes (hsplit, rollaxis, unstack, ...), and the
functions that insert, delete, resize or trim elements at static positions.

Composites of the structural primitives (``slice``, ``transpose``, ``reshape``,
``concatenate``, ``gather``): NumPy computes only static metadata (which positions to
keep or fill), so every function is differentiable in its array arguments, batches
under ``vmap`` and lowers under ``jit``. Choices where funcgrad differs from NumPy:

- positions (``obj`` of ``insert``/``delete``, split points) must be concrete: a traced
  value raises a ``ConcretizationError``, except ``delete(..., assume_unique_indices=True)``,
  which accepts traced positions as JAX does;
- ``trim_zeros`` needs concrete values (its output shape depends on them): under
  ``jit``/``vmap`` it raises ``DataDependentShapeError``.
"""
from __future__ import annotations

import numpy as np

from funcgrad import errors
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import AxisError, aval_of, canonicalize_axis, full, is_tracer, shape_of
from funcgrad.numpy_api.joining import concatenate, split_sections
from funcgrad.numpy_api.shape import array_arg, cast, moveaxis, ravel, slice_axis, static_int, transpose

__all__ = [
    "hsplit", "vsplit", "dsplit", "rollaxis", "permute_dims", "matrix_transpose", "unstack", "concat",
    "resize", "insert", "delete", "trim_zeros",
]


# --- helpers ---------------------------------------------------------------------------
def take_static(x, axis, idx):
    """``x`` gathered along ``axis`` at concrete positions ``idx`` (a 1-d int array)."""
    idx = np.asarray(idx, np.int64).reshape(-1, 1)
    out = lax.gather(moveaxis(x, axis, 0), idx)
    return moveaxis(out, 0, axis)


def concrete_value(x, fname, argname, hint):
    """The NumPy value of ``x`` (a tracer whose value the trace knows, e.g. eager ``grad``,
    counts), or ``DataDependentShapeError`` naming ``fname``/``argname`` and ``hint``."""
    if not is_tracer(x):
        return np.asarray(x)
    val = x.to_concrete_value()
    if val is None:
        raise errors.DataDependentShapeError(
            f"{fname}: the output shape depends on the values of `{argname}`, which are traced "
            f"({x.aval.str_short()}) and only known when the program runs. {hint}"
        )
    return np.asarray(val)


def _static_positions(obj, fname):
    if is_tracer(obj) or (isinstance(obj, (list, tuple)) and any(map(is_tracer, obj))):
        raise errors.ConcretizationError(
            f"{fname}: `obj` must be concrete (a Python int, slice, list or NumPy array), got a traced "
            "value; the positions decide the output shape. Pass them as a constant or mark them static under jit."
        )
    return np.asarray(obj)


def _flat_axis(fname, arr, axis):
    x = array_arg(arr, fname)
    if axis is None:
        x = ravel(x) if aval_of(x).ndim != 1 else x
        return x, 0
    return x, canonicalize_axis(axis, aval_of(x).ndim, fname)


# --- splitting --------------------------------------------------------------------------
def hsplit(ary, indices_or_sections):
    """Split horizontally: along axis 1, or axis 0 of a 1-d array.

    >>> [p.shape for p in fnp.hsplit(fnp.zeros((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    x = array_arg(ary, "hsplit")
    nd = aval_of(x).ndim
    if nd == 0:
        raise ValueError("hsplit: hsplit only works on arrays of 1 or more dimensions, got shape ()")
    return split_sections("hsplit", x, indices_or_sections, 1 if nd > 1 else 0, equal=True)


def vsplit(ary, indices_or_sections):
    """Split vertically (along axis 0) an array of at least 2 dimensions."""
    x = array_arg(ary, "vsplit")
    if aval_of(x).ndim < 2:
        raise ValueError(f"vsplit: vsplit only works on arrays of 2 or more dimensions, got shape {shape_of(x)}")
    return split_sections("vsplit", x, indices_or_sections, 0, equal=True)


def dsplit(ary, indices_or_sections):
    """Split depth-wise (along axis 2) an array of at least 3 dimensions."""
    x = array_arg(ary, "dsplit")
    if aval_of(x).ndim < 3:
        raise ValueError(f"dsplit: dsplit only works on arrays of 3 or more dimensions, got shape {shape_of(x)}")
    return split_sections("dsplit", x, indices_or_sections, 2, equal=True)


def unstack(x, /, *, axis=0):
    """The sub-arrays along ``axis``, as a tuple (the array API's inverse of ``stack``).

    >>> len(fnp.unstack(fnp.zeros((2, 3)), axis=1))
    3
    """
    x = array_arg(x, "unstack")
    shp = shape_of(x)
    if not shp:
        raise ValueError("unstack: unstack requires an array of at least one dimension, got shape ()")
    axis = canonicalize_axis(axis, len(shp), "unstack")
    rest = shp[:axis] + shp[axis + 1:]
    return tuple(lax.reshape(slice_axis(x, axis, i, i + 1), rest) for i in range(shp[axis]))


def concat(arrays, /, *, axis=0):
    """The array API's ``concatenate``: join along ``axis``; ``axis=None`` flattens first.

    >>> fnp.concat([fnp.zeros((1, 2)), fnp.ones((1, 2))], axis=None).shape
    (4,)
    """
    return concatenate(arrays, axis=axis)


# --- moving axes ------------------------------------------------------------------------
def rollaxis(a, axis, start=0):
    """Roll ``axis`` backwards until it lies before position ``start`` (NumPy's older
    ``moveaxis``).

    >>> fnp.rollaxis(fnp.zeros((3, 4, 5)), 2).shape
    (5, 3, 4)
    """
    x = array_arg(a, "rollaxis")
    n = aval_of(x).ndim
    axis = canonicalize_axis(axis, n, "rollaxis")
    start = static_int(start, "rollaxis", "start")
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise AxisError(f"rollaxis: 'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return x
    perm = [d for d in range(n) if d != axis]
    perm.insert(start, axis)
    return lax.transpose(x, perm)


def permute_dims(a, /, axes):
    """The array API's ``transpose``: ``axes`` is a permutation of ``range(a.ndim)``."""
    if axes is None:
        raise TypeError("permute_dims: `axes` is required (a permutation of the axes)")
    return transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two axes (transpose a stack of matrices).

    >>> fnp.matrix_transpose(fnp.zeros((2, 3, 4))).shape
    (2, 4, 3)
    """
    x = array_arg(x, "matrix_transpose")
    nd = aval_of(x).ndim
    if nd < 2:
        raise ValueError(f"matrix_transpose: x must be at least two-dimensional, got shape {shape_of(x)}")
    return lax.transpose(x, list(range(nd - 2)) + [nd - 1, nd - 2])


# --- resize / insert / delete / trim ------------------------------------------------------
def resize(a, new_shape):
    """``a`` flattened and repeated (or cut) to fill ``new_shape`` (NumPy's rule: an empty
    ``a`` gives zeros).

    >>> fnp.resize(fnp.array([1, 2, 3]), (2, 4))
    Array([[1, 2, 3, 1],
           [2, 3, 1, 2]])
    """
    x = array_arg(a, "resize")
    if isinstance(new_shape, (list, tuple)) or (isinstance(new_shape, np.ndarray) and new_shape.ndim):
        shape = tuple(static_int(d, "resize", "new_shape") for d in new_shape)
    else:
        shape = (static_int(new_shape, "resize", "new_shape"),)
    if any(d < 0 for d in shape):
        raise ValueError(f"resize: all elements of `new_shape` must be non-negative, got {shape}")
    size, total = aval_of(x).size, int(np.prod(shape, dtype=np.int64))
    flat = ravel(x)
    if size == 0 or total == 0:
        return full(shape, 0, aval_of(x).dtype)
    reps = -(-total // size)
    if reps > 1:
        flat = lax.reshape(lax.broadcast_in_dim(flat, (reps, size), (1,)), (reps * size,))
    return lax.reshape(slice_axis(flat, 0, 0, total), shape)


def _insert_indices(obj, n, axis):
    """NumPy's reading of ``insert``'s ``obj``: (positions as int64, scalar form?)."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n), dtype=np.int64), False
    idx = _static_positions(obj, "insert")
    if idx.dtype == bool:
        if idx.ndim != 1:
            raise ValueError(f"insert: boolean array argument obj must be one dimensional, got shape {idx.shape}")
        idx = np.flatnonzero(idx)
    elif idx.ndim > 1:
        raise ValueError(f"insert: index array argument obj must be one dimensional or scalar, got shape {idx.shape}")
    if idx.size == 0:
        idx = idx.astype(np.int64)
    if idx.dtype.kind not in "iu":
        raise IndexError(f"insert: arrays used as indices must be integer (or boolean), got {idx.dtype}")
    bad = idx[(idx < -n) | (idx > n)]
    if bad.size:
        raise IndexError(f"insert: index {int(bad[0])} is out of bounds for axis {axis} with size {n}")
    scalar = idx.ndim == 0
    idx = idx.astype(np.int64).reshape(-1)
    return np.where(idx < 0, idx + n, idx), scalar


def _fit_values(v, target, fname):
    vshape = shape_of(v)
    while len(vshape) > len(target) and vshape[0] == 1:
        v, vshape = lax.reshape(v, vshape[1:]), vshape[1:]
    try:
        if len(vshape) > len(target) or np.broadcast_shapes(vshape, target) != tuple(target):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"{fname}: values of shape {vshape} cannot be broadcast to the inserted block {tuple(target)}"
        ) from None
    return lax.broadcast_to_rank(v, tuple(target)) if vshape != tuple(target) else v


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the positions ``obj`` (an int, a slice, a
    sequence or a boolean mask, concrete) along ``axis`` (None: the flattened array).

    >>> fnp.insert(fnp.array([1, 2, 3]), 1, [7, 8])
    Array([1, 7, 8, 2, 3])
    """
    x, axis = _flat_axis("insert", arr, axis)
    shp, dtype = shape_of(x), aval_of(x).dtype
    n = shp[axis]
    idx, scalar = _insert_indices(obj, n, axis)
    v = cast(array_arg(values, "insert"), dtype)
    if idx.size == 1:  # one position: a block whose width comes from `values`
        vshape = shape_of(v)
        if len(vshape) < len(shp):
            v = lax.reshape(v, (1,) * (len(shp) - len(vshape)) + vshape)
        if scalar and len(shape_of(v)):
            v = moveaxis(v, 0, axis)
        width = shape_of(v)[axis] if len(shape_of(v)) == len(shp) else 1
        v = _fit_values(v, shp[:axis] + (width,) + shp[axis + 1:], "insert")
        i = int(idx[0])
        return concatenate([slice_axis(x, axis, 0, i), v, slice_axis(x, axis, i, n)], axis=axis)
    k = idx.size
    v = _fit_values(v, shp[:axis] + (k,) + shp[axis + 1:], "insert")
    order = np.argsort(idx, kind="stable")
    new_pos = idx.copy()
    new_pos[order] += np.arange(k)
    src = np.empty(n + k, np.int64)
    old = np.ones(n + k, bool)
    old[new_pos] = False
    src[old] = np.arange(n)
    src[new_pos] = n + np.arange(k)
    return take_static(concatenate([x, v], axis=axis), axis, src)


def _delete_traced(x, obj, axis):
    """JAX's traced ``delete`` for unique positions: the kept positions are
    ``i + #(sorted, shifted deleted positions <= i)``, a gather with traced indices."""
    from funcgrad.numpy_api.indexing import take

    i64 = np.dtype(np.int64)
    n = shape_of(x)[axis]
    o = lax.convert_element_type(ravel(obj), i64)
    k = aval_of(o).size
    zeros, nn = np.zeros((k,), np.int64), np.full((k,), n, np.int64)
    o = lax.select(lax.lt(o, zeros), lax.add(o, nn), o)  # NumPy's negative positions
    o = lax.min(lax.max(o, zeros), nn)
    o = lax.sub(lax.sort([o])[0], np.arange(k, dtype=np.int64))
    i = np.arange(n - k, dtype=np.int64)
    ge = lax.ge(lax.broadcast_in_dim(i, (k, n - k), (1,)), lax.broadcast_in_dim(o, (k, n - k), (0,)))
    shift = lax.reduce_sum(lax.convert_element_type(ge, i64), (0,))
    return take(x, lax.add(i, shift), axis=axis, mode="clip")


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries at ``obj`` (an int, a slice, a sequence or a boolean
    mask of the axis' length) along ``axis`` (None: the flattened array). Positions must be
    concrete, unless ``assume_unique_indices=True`` (JAX's keyword), which accepts traced,
    unique integer positions.

    >>> fnp.delete(fnp.array([1, 2, 3, 4]), [0, 2])
    Array([2, 4])
    """
    x, axis = _flat_axis("delete", arr, axis)
    n = shape_of(x)[axis]
    if assume_unique_indices and not isinstance(obj, slice) and (is_tracer(obj) or (
            isinstance(obj, (list, tuple)) and any(map(is_tracer, obj)))):
        return _delete_traced(x, array_arg(obj, "delete"), axis)
    keep = np.ones(n, bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        idx = _static_positions(obj, "delete")
        if idx.dtype == bool:
            if idx.shape != (n,):
                raise ValueError(
                    f"delete: boolean array argument obj to delete must be one dimensional and match the axis "
                    f"length of {n}, got shape {idx.shape}"
                )
            keep = ~idx
        else:
            if idx.size == 0:
                idx = idx.astype(np.int64)
            if idx.dtype.kind not in "iu":
                raise IndexError(f"delete: arrays used as indices must be integer (or boolean), got {idx.dtype}")
            bad = idx[(idx < -n) | (idx >= n)]
            if bad.size:
                raise IndexError(f"delete: index {int(bad.flat[0])} is out of bounds for axis {axis} with size {n}")
            keep[idx.reshape(-1)] = False
    if keep.all():
        return x
    return take_static(x, axis, np.flatnonzero(keep))


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros along
    ``axis`` (None: every axis, NumPy 2.2's bounding box). The values must be concrete.

    >>> fnp.trim_zeros(fnp.array([0, 0, 1, 2, 0]))
    Array([1, 2])
    """
    x = array_arg(filt, "trim_zeros")
    if not isinstance(trim, str) or trim.lower() not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    trim = trim.lower()
    val = concrete_value(x, "trim_zeros", "filt", "Call it on concrete values (outside jit/vmap).")
    nd = val.ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = axis if isinstance(axis, (list, tuple)) else (axis,)
        axes = tuple(canonicalize_axis(a, nd, "trim_zeros") for a in axes)
    if not axes:
        return x
    nz = np.argwhere(val)
    if nz.size == 0:
        start = stop = np.zeros(nd, np.int64)
    else:
        start, stop = nz.min(axis=0), nz.max(axis=0) + 1
        if "f" not in trim:
            start = np.zeros(nd, np.int64)
        if "b" not in trim:
            stop = np.asarray(val.shape, np.int64)
    lo = [int(start[d]) if d in axes else 0 for d in range(nd)]
    hi = [int(stop[d]) if d in axes else val.shape[d] for d in range(nd)]
    return lax.slice(x, lo, hi)
