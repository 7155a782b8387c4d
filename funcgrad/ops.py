"""``funcgrad.ops``: segment reductions, as ``jax.ops``.

``segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
unique_indices=False, bucket_size=None, mode=None)`` and ``segment_max``/``min``/``prod``
reduce the rows of ``data`` that share a segment id into row ``id`` of a result with
``num_segments`` rows. Empty segments hold the identity (0, -inf, +inf, 1; the dtype's
lowest/highest value for integers). Ids outside ``[0, num_segments)`` (negative ones
too) are dropped (JAX's default mode ``"fill"``/``"drop"``; ``mode="clip"`` clamps them
instead). ``indices_are_sorted``, ``unique_indices`` and ``bucket_size`` are accepted
hints. ``num_segments`` fixes the output shape, so it must be static under ``jit``
(without it, the ids must be concrete: their maximum + 1 is used).

Derivatives: ``segment_sum`` is linear; ``segment_max``/``min`` send the tangent to the
entries equal to their segment's extreme, shared equally among ties (as JAX);
``segment_prod`` is exact with zeros in a segment (the product of the others).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core.prims.indexing import scatter_mode
from funcgrad.errors import ConcretizationError
from funcgrad.lax import _util
from funcgrad.transforms.custom import custom_jvp

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _lowest(dt):
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


def _highest(dt):
    return np.inf if dt.kind == "f" else np.iinfo(dt).max


def _args(fname, data, segment_ids, num_segments, mode):
    import funcgrad.numpy as fnp

    data = data if hasattr(data, "shape") else fnp.asarray(data)
    segment_ids = segment_ids if hasattr(segment_ids, "shape") else fnp.asarray(segment_ids)
    d = _util.aval(fname, data, "data")
    s = _util.aval(fname, segment_ids, "segment_ids")
    if d.dtype.kind not in "iuf":
        raise TypeError(f"{fname}: data must be a numeric array, got {d.str_short()}")
    if s.dtype.kind not in "iu" or s.ndim != 1 or d.ndim < 1 or s.shape[0] != d.shape[0]:
        raise ValueError(f"{fname}: segment_ids must be a 1-d integer array with one id per row of data, got "
                         f"segment_ids {s.str_short()} for data {d.str_short()}")
    if num_segments is None:
        ids = _util.concrete_value(segment_ids)
        if ids is None:
            raise ConcretizationError(
                f"{fname}: num_segments=None needs concrete segment_ids (the output size is max(ids) + 1), but "
                f"segment_ids {s.str_short()} is traced; pass a static num_segments")
        num_segments = int(np.max(ids)) + 1 if ids.size else 0
    num_segments = _util.static_int(fname, num_segments, "num_segments")
    if num_segments < 0:
        raise ValueError(f"{fname}: num_segments must be >= 0, got {num_segments} (data {d.str_short()})")
    return data, segment_ids, num_segments, scatter_mode(mode, fname), d


def _scatter(data, segment_ids, num_segments, mode, kind, identity, d):
    out = lax.broadcast_in_dim(np.asarray(identity, d.dtype), (num_segments,) + d.shape[1:], ())
    return lax.scatter(out, lax.reshape(segment_ids, (d.shape[0], 1)), data, kind, mode)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """Sum of the rows of ``data`` in each segment (0 for an empty one).

    >>> segment_sum(fnp.arange(5.0), fnp.array([0, 0, 1, 1, 1]), num_segments=3)
    Array([1., 9., 0.])
    """
    data, ids, n, mode, d = _args("segment_sum", data, segment_ids, num_segments, mode)
    return _scatter(data, ids, n, mode, "add", 0, d)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """Maximum of the rows of ``data`` in each segment (-inf, or the lowest integer, if empty)."""
    data, ids, n, mode, d = _args("segment_max", data, segment_ids, num_segments, mode)
    return _scatter(data, ids, n, mode, "max", _lowest(d.dtype), d)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """Minimum of the rows of ``data`` in each segment (+inf, or the highest integer, if empty)."""
    data, ids, n, mode, d = _args("segment_min", data, segment_ids, num_segments, mode)
    return _scatter(data, ids, n, mode, "min", _highest(d.dtype), d)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                 bucket_size=None, mode=None):
    """Product of the rows of ``data`` in each segment (1 if empty)."""
    data, ids, n, mode, d = _args("segment_prod", data, segment_ids, num_segments, mode)
    if d.dtype.kind != "f":
        return _scatter(data, ids, n, mode, "mul", 1, d)
    return _segment_prod_float(ids, n, mode, data)


def _segment_prod_float(ids, n, mode, data):
    prod = custom_jvp(lambda ids, x: _scatter(x, ids, n, mode, "mul", 1, _util.aval("segment_prod", x)))

    @prod.defjvp
    def _segment_prod_jvp(primals, tangents):
        # d prod_s / d x_i = the product of the segment's other entries: the product of its
        # nonzero entries divided by x_i when it has no zero, that product at its only
        # zero, and 0 otherwise (the scatter-mul rule would divide by zero there).
        ids, x = primals
        _, x_dot = tangents
        a = _util.aval("segment_prod", x)
        zero = lax.eq(x, lax.broadcast_in_dim(np.zeros((), a.dtype), a.shape, ()))
        ones = lax.broadcast_in_dim(np.ones((), a.dtype), a.shape, ())
        safe = lax.select(zero, ones, x)
        nonzero_prod = _scatter(safe, ids, n, mode, "mul", 1, a)
        zeros_in = _scatter(lax.convert_element_type(zero, a.dtype), ids, n, mode, "add", 0, a)
        idx = lax.reshape(ids, (a.shape[0], 1))
        p_i = lax.gather(nonzero_prod, idx, mode="clip") if n else ones
        z_i = lax.gather(zeros_in, idx, mode="clip") if n else ones
        zeros = lax.broadcast_in_dim(np.zeros((), a.dtype), a.shape, ())
        only_zero = lax.bitwise_and(zero, lax.eq(z_i, ones))
        partial = lax.select(lax.eq(z_i, zeros), lax.div(p_i, safe), lax.select(only_zero, p_i, zeros))
        out = _scatter(x, ids, n, mode, "mul", 1, a)
        return out, _scatter(lax.mul(x_dot, partial), ids, n, mode, "add", 0, a)

    return prod(ids, data)
