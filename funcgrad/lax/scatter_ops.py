"""``jax.lax``'s scatter functions with ``ScatterDimensionNumbers``: ``scatter_add``,
``scatter_sub``, ``scatter_mul``, ``scatter_min``, ``scatter_max``.

They are written on funcgrad's ``scatter`` primitive, which writes whole rows: an index
vector picks a point in some operand axes and the update fills every other axis. So the
form supported is JAX's common one, the one ``x.at[idx].add(v)`` produces: every indexed
axis is an inserted window axis (``inserted_window_dims`` are the axes of
``scatter_dims_to_operand_dims``, in any order) and the update windows span the other axes
whole. Partial windows (slices starting at an index) and batching axes raise
``NotImplementedError`` naming the field. (funcgrad's own ``lax.scatter(operand, indices,
updates, kind, mode)`` is the primitive's form.)
"""
from __future__ import annotations

from typing import NamedTuple

from funcgrad.core import lax_api as lax
from funcgrad.lax import _util

__all__ = ["ScatterDimensionNumbers", "scatter_add", "scatter_apply", "scatter_sub", "scatter_mul", "scatter_min",
           "scatter_max"]


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter's indices and updates map to the operand's axes (JAX's fields):
    ``update_window_dims`` (axes of ``updates`` that are window axes),
    ``inserted_window_dims`` (operand axes the windows have size 1 in, left out of
    ``updates``), ``scatter_dims_to_operand_dims`` (the operand axis each index-vector
    entry addresses), and the batching axes (not supported by funcgrad: empty)."""

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _scatter(fname, kind, operand, scatter_indices, updates, dimension_numbers, mode):
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(f"{fname}: dimension_numbers must be a lax.ScatterDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    dn = dimension_numbers
    op, idx, upd = (_util.aval(fname, v, name) for v, name in
                    ((operand, "operand"), (scatter_indices, "scatter_indices"), (updates, "updates")))
    if dn.operand_batching_dims or dn.scatter_indices_batching_dims:
        raise NotImplementedError(f"{fname}: operand_batching_dims / scatter_indices_batching_dims are not "
                                  "supported by funcgrad (use vmap over the scatter instead)")
    pointed = tuple(int(d) for d in dn.scatter_dims_to_operand_dims)
    if sorted(int(d) for d in dn.inserted_window_dims) != sorted(pointed):
        raise NotImplementedError(
            f"{fname}: only scatters whose indexed axes are all inserted window axes are supported (got "
            f"inserted_window_dims={tuple(dn.inserted_window_dims)}, scatter_dims_to_operand_dims={pointed}): "
            "partial update windows are not implemented in funcgrad")
    if idx.ndim == 0 or idx.shape[-1] != len(pointed):
        raise ValueError(f"{fname}: scatter_indices of shape {idx.shape} must end in an index vector of length "
                         f"{len(pointed)} (len(scatter_dims_to_operand_dims))")
    rest = [d for d in range(op.ndim) if d not in pointed]
    window = tuple(int(d) for d in dn.update_window_dims)
    batch = [d for d in range(upd.ndim) if d not in window]
    want = tuple(idx.shape[:-1]) + tuple(op.shape[d] for d in rest)
    got = tuple(upd.shape[d] for d in batch) + tuple(upd.shape[d] for d in window)
    if len(window) != len(rest) or got != want:
        raise ValueError(f"{fname}: updates of shape {upd.shape} with update_window_dims={window} do not fit "
                         f"operand {op.shape} and scatter_indices {idx.shape} (batch then window sizes {want} "
                         "expected; windows span the non-indexed operand axes whole)")
    # Bring the indexed axes to the front, in index-vector order, and the update windows last.
    perm = pointed + tuple(rest)
    operand_t = lax.transpose(operand, perm) if perm != tuple(range(op.ndim)) else operand
    uperm = tuple(batch) + window
    updates_t = lax.transpose(updates, uperm) if uperm != tuple(range(upd.ndim)) else updates
    out = lax.scatter(operand_t, scatter_indices, updates_t, kind, mode if mode is not None else "drop")
    if perm == tuple(range(op.ndim)):
        return out
    inverse = tuple(perm.index(d) for d in range(op.ndim))
    return lax.transpose(out, inverse)


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """``operand`` with ``updates`` added at the points ``scatter_indices`` select (repeated
    points add up); out-of-range points are dropped unless ``mode="clip"``."""
    return _scatter("scatter_add", "add", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """``operand`` with ``updates`` subtracted at the points ``scatter_indices`` select."""
    return _scatter("scatter_sub", "add", operand, scatter_indices, lax.neg(updates), dimension_numbers, mode)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """``operand`` multiplied by ``updates`` at the points ``scatter_indices`` select."""
    return _scatter("scatter_mul", "mul", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """The minimum of ``operand`` and ``updates`` at the points ``scatter_indices`` select."""
    return _scatter("scatter_min", "min", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """The maximum of ``operand`` and ``updates`` at the points ``scatter_indices`` select."""
    return _scatter("scatter_max", "max", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False,
                  unique_indices=False, mode=None):
    """``operand`` with ``func`` applied at the points ``scatter_indices`` select (``update_shape``
    is the shape updates would have; a point selected ``n`` times gets ``func`` applied ``n``
    times, as JAX's scatter does). ``func`` maps an array to one of the same shape and dtype,
    elementwise (JAX traces it on scalars).

    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter_apply(np.ones(4), np.array([[1], [3], [3]]), lambda x: 2 * x, dn, update_shape=(3,))
    Array([1., 2., 1., 4.])
    """
    import numpy as np

    from funcgrad.transforms.control_flow import while_loop

    op = _util.aval("scatter_apply", operand)
    zeros = lax.broadcast_in_dim(np.zeros((), np.int64), op.shape, ())
    ones = lax.broadcast_in_dim(np.ones((), np.int64), tuple(update_shape), ())
    counts = _scatter("scatter_apply", "add", zeros, scatter_indices, ones, dimension_numbers, mode)
    applied = lax.broadcast_in_dim(np.zeros((), np.int64), op.shape, ())
    if unique_indices:
        return lax.select(lax.gt(counts, applied), func(operand), operand)
    most = lax.reduce_max(counts, tuple(range(op.ndim))) if op.ndim else counts

    def body(carry):
        k, x = carry
        todo = lax.gt(counts, lax.broadcast_in_dim(k, op.shape, ()))
        return lax.add(k, np.int64(1)), lax.select(todo, func(x), x)

    return while_loop(lambda c: lax.lt(c[0], most), body, (np.int64(0), operand))[1]
