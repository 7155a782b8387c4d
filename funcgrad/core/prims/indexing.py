"""Indexing primitives with data-dependent indices: dynamic_slice, dynamic_update_slice,
gather and scatter.

Index semantics are memory-safe by construction (the same in eager, traced and
compiled code), following JAX's documented behaviour:
- dynamic_slice / dynamic_update_slice clamp the start so the window fits;
- gather ``mode="clip"`` clamps each index into range, ``mode="fill"`` returns
  ``fill_value`` for out-of-range rows;
- scatter ``mode="drop"`` ignores out-of-range updates, ``mode="clip"`` clamps.
Negative indices are *not* wrapped here; ``funcgrad.numpy`` normalises them first.

gather(operand, indices): ``indices`` has shape ``batch + (k,)``; row ``r`` selects
``operand[r[0], ..., r[k-1], ...]``, so the result has shape
``batch + operand.shape[k:]``. scatter is its mirror.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import Primitive
from funcgrad.core.prims._checks import check_kind

SCATTER_KINDS = ("set", "add", "mul", "min", "max")


def _check_starts(op, x, starts):
    if len(starts) != x.ndim:
        raise ValueError(f"{op}: need {x.ndim} start indices for {x.str_short()}, got {len(starts)}")
    for i, s in enumerate(starts):
        if s.shape != () or s.dtype.kind != "i":
            raise TypeError(f"{op}: start index {i} must be a scalar integer, got {s.str_short()}")


def _clamped_starts(starts, shape, sizes):
    return tuple(int(min(max(int(s), 0), n - m)) for s, n, m in zip(starts, shape, sizes))


# --- dynamic_slice ------------------------------------------------------------------------
dynamic_slice_p = Primitive("dynamic_slice")


@dynamic_slice_p.def_impl
def _dynamic_slice_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    st = _clamped_starts(starts, x.shape, slice_sizes)
    return x[tuple(slice(s, s + m) for s, m in zip(st, slice_sizes))]


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(x, *starts, slice_sizes):
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= m <= n for m, n in zip(slice_sizes, x.shape)):
        raise ValueError(f"dynamic_slice: slice_sizes {slice_sizes} do not fit in {x.str_short()}")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


# --- dynamic_update_slice ---------------------------------------------------------------------
dynamic_update_slice_p = Primitive("dynamic_update_slice")


@dynamic_update_slice_p.def_impl
def _dynamic_update_slice_impl(x, update, *starts):
    out = np.array(x, copy=True)
    update = np.asarray(update)
    st = _clamped_starts(starts, out.shape, update.shape)
    out[tuple(slice(s, s + m) for s, m in zip(st, update.shape))] = update
    return out


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract_eval(x, update, *starts):
    _check_starts("dynamic_update_slice", x, starts)
    if update.dtype != x.dtype or update.ndim != x.ndim or any(m > n for m, n in zip(update.shape, x.shape)):
        raise TypeError(
            f"dynamic_update_slice: update {update.str_short()} must have the operand's dtype and "
            f"rank and fit inside operand {x.str_short()}"
        )
    return x


# --- gather -----------------------------------------------------------------------------
gather_p = Primitive("gather")


def default_fill_value(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min


def _index_rows(indices, k):
    indices = np.asarray(indices)
    # Not reshape(-1, k): NumPy cannot infer -1 when k == 0 (rows that index nothing).
    return indices.reshape(int(np.prod(indices.shape[:-1], dtype=np.int64)), k)


@gather_p.def_impl
def _gather_impl(operand, indices, *, mode, fill_value=None):
    operand = np.asarray(operand)
    indices = np.asarray(indices)
    k = indices.shape[-1]
    batch = indices.shape[:-1]
    dims = np.array(operand.shape[:k], dtype=np.int64)
    rows = _index_rows(indices, k).astype(np.int64)
    if k == 0:
        out = np.broadcast_to(operand, (rows.shape[0],) + operand.shape).copy()
        return out.reshape(batch + operand.shape)
    if mode == "clip":
        rows = np.clip(rows, 0, np.maximum(dims - 1, 0))
        out = operand[tuple(rows.T)]
    else:
        ok = np.all((rows >= 0) & (rows < dims), axis=1)
        safe = np.where(ok[:, None], rows, 0)
        if operand.size == 0:
            out = np.empty((rows.shape[0],) + operand.shape[k:], operand.dtype)
        else:
            out = operand[tuple(safe.T)]
        fv = default_fill_value(operand.dtype) if fill_value is None else fill_value
        out = np.where(ok.reshape((-1,) + (1,) * (operand.ndim - k)), out, np.asarray(fv, operand.dtype))
    return out.reshape(batch + operand.shape[k:])


@gather_p.def_abstract_eval
def _gather_abstract_eval(operand, indices, *, mode, fill_value=None):
    if mode not in ("clip", "fill"):
        raise ValueError(f"gather: mode must be 'clip' or 'fill', got {mode!r}")
    check_kind("gather", indices, "i", "indices")
    if indices.ndim < 1 or indices.shape[-1] > operand.ndim:
        raise ValueError(
            f"gather: indices {indices.str_short()} must end in a dimension of size <= rank of operand {operand.str_short()}"
        )
    if mode == "clip" and any(operand.shape[d] == 0 for d in range(indices.shape[-1])) and indices.size:
        raise IndexError(f"gather: cannot index into a zero-size dimension of {operand.str_short()}")
    k = indices.shape[-1]
    return ShapedArray(indices.shape[:-1] + operand.shape[k:], operand.dtype, operand.weak_type)


# --- scatter --------------------------------------------------------------------------------
scatter_p = Primitive("scatter")

_SCATTER_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


@scatter_p.def_impl
def _scatter_impl(operand, indices, updates, *, kind, mode):
    out = np.array(operand, copy=True)
    indices = np.asarray(indices)
    k = indices.shape[-1]
    rows = _index_rows(indices, k).astype(np.int64)
    upd = np.asarray(updates).reshape((rows.shape[0],) + out.shape[k:])
    dims = np.array(out.shape[:k], dtype=np.int64)
    if mode == "clip":
        rows = np.clip(rows, 0, np.maximum(dims - 1, 0))
    else:
        ok = np.all((rows >= 0) & (rows < dims), axis=1)
        rows, upd = rows[ok], upd[ok]
    if k == 0:  # every row addresses the whole operand
        for u in upd:
            out[...] = u if kind == "set" else _SCATTER_UFUNCS[kind](out, u)
        return out
    where = tuple(rows.T)
    if kind == "set":
        out[where] = upd
    else:
        _SCATTER_UFUNCS[kind].at(out, where, upd)
    return out


@scatter_p.def_abstract_eval
def _scatter_abstract_eval(operand, indices, updates, *, kind, mode):
    if kind not in SCATTER_KINDS:
        raise ValueError(f"scatter: kind must be one of {SCATTER_KINDS}, got {kind!r}")
    if mode not in ("clip", "drop"):
        raise ValueError(f"scatter: mode must be 'clip' or 'drop', got {mode!r}")
    check_kind("scatter", indices, "i", "indices")
    if indices.ndim < 1 or indices.shape[-1] > operand.ndim:
        raise ValueError(
            f"scatter: indices {indices.str_short()} must end in a dimension of size <= rank of operand {operand.str_short()}"
        )
    k = indices.shape[-1]
    expected = indices.shape[:-1] + operand.shape[k:]
    if updates.shape != expected or updates.dtype != operand.dtype:
        raise TypeError(
            f"scatter: updates must be {ShapedArray(expected, operand.dtype).str_short()} for operand "
            f"{operand.str_short()} and indices {indices.str_short()}, got {updates.str_short()}"
        )
    return operand.update(weak_type=operand.weak_type and updates.weak_type)
