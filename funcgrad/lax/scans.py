"""``associative_scan`` (a parallel prefix over pytrees, JAX's algorithm) and ``map``
(a ``scan`` over the leading axis, optionally in vmapped batches)."""
from __future__ import annotations

from funcgrad.core import lax_api as lax
from funcgrad.core import pytree
from funcgrad.lax import _util
from funcgrad.transforms.batching import vmap
from funcgrad.transforms.control_flow import scan

__all__ = ["associative_scan", "map"]


def _slice(x, start, limit, stride, axis):
    a = _util.aval("associative_scan", x)
    starts, limits, strides = [0] * a.ndim, list(a.shape), [1] * a.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return lax.slice(x, starts, limits, strides)


def _interleave(a, b, axis):
    """``a0 b0 a1 b1 ...`` along ``axis``; ``a`` has as many elements as ``b`` or one more.
    Stack-and-reshape keeps every value exact (no pad-and-add: signed zeros, overflow)."""
    sa, sb = _util.aval("associative_scan", a).shape, _util.aval("associative_scan", b).shape
    m = sb[axis]
    head = _slice(a, 0, m, 1, axis) if sa[axis] != m else a
    pair = sb[:axis + 1] + (1,) + sb[axis + 1:]
    both = lax.concatenate([lax.reshape(head, pair), lax.reshape(b, pair)], axis + 1)
    out = lax.reshape(both, sb[:axis] + (2 * m,) + sb[axis + 1:])
    return out if sa[axis] == m else lax.concatenate([out, _slice(a, m, m + 1, 1, axis)], axis)


def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations ``fn(...fn(fn(e0, e1), e2)..., ek)`` along ``axis``, for an
    associative ``fn`` over pytrees of arrays (vectorised: it gets whole slices), in
    ``O(log n)`` rounds: JAX's parallel-prefix algorithm (the same combination tree, so
    derivatives at ties match JAX's). ``reverse=True`` scans from the end, keeping the
    argument order: ``out[i] = fn(...fn(e[n-1], e[n-2])..., e[i])``, as JAX.

    >>> lax.associative_scan(fnp.add, fnp.arange(5.0))
    Array([ 0.,  1.,  3.,  6., 10.])
    """
    if not callable(fn):
        raise TypeError(f"associative_scan: fn must be a callable (a, b) -> c, got {type(fn).__name__}")
    leaves, tree = pytree.tree_flatten(elems)
    if not leaves:
        raise ValueError("associative_scan: elems has no arrays")
    avals = [_util.aval("associative_scan", x, "elems") for x in leaves]
    if avals[0].ndim == 0:
        raise ValueError(f"associative_scan: elems must have an axis to scan over, got shape {avals[0].shape}")
    axis = _util.axis("associative_scan", axis, avals[0].ndim, avals[0].shape)
    n = avals[0].shape[axis]
    if any(a.ndim <= axis or a.shape[axis] != n for a in avals):
        raise ValueError(f"associative_scan: every leaf of elems needs the same length along axis {axis}, got "
                         f"shapes {[a.shape for a in avals]}")
    if reverse:
        leaves = [lax.rev(x, (axis,)) for x in leaves]

    combine = _util.flat_combiner("associative_scan", fn, tree, "fn", "elems")

    def scan_level(xs):  # recursion depth is log2(n)
        m = _util.aval("associative_scan", xs[0]).shape[axis]
        if m < 2:
            return xs
        reduced = combine([_slice(x, 0, m - 1, 2, axis) for x in xs], [_slice(x, 1, m, 2, axis) for x in xs])
        odd = scan_level(reduced)
        if m % 2 == 0:
            even = combine([_slice(x, 0, m // 2 - 1, 1, axis) for x in odd], [_slice(x, 2, m, 2, axis) for x in xs])
        else:
            even = combine(odd, [_slice(x, 2, m, 2, axis) for x in xs])
        even = [lax.concatenate([_slice(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan_level(leaves)
    if reverse:
        out = [lax.rev(x, (axis,)) for x in out]
    return pytree.tree_unflatten(tree, out)


def map(f, xs, *, batch_size=None):  # noqa: A001 - JAX's name
    """``f`` applied to each slice of ``xs`` along the leading axis, stacked: a ``scan``.
    With ``batch_size``, ``f`` is vmapped over batches of that many slices (the remainder
    in one more vmapped call), as ``jax.lax.map``.

    >>> lax.map(lambda x: x ** 2, fnp.arange(4.0))
    Array([0., 1., 4., 9.])
    """
    if not callable(f):
        raise TypeError(f"map: f must be a callable, got {type(f).__name__}")
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), (), xs)[1]
    batch_size = _util.static_int("map", batch_size, "batch_size")
    if batch_size < 1:
        raise ValueError(f"map: batch_size must be a positive int, got {batch_size}")
    leaves, tree = pytree.tree_flatten(xs)
    shapes = [_util.aval("map", x, "xs").shape for x in leaves]
    if not leaves or any(not s for s in shapes) or len({s[0] for s in shapes}) != 1:
        raise ValueError(f"map: every leaf of xs needs the same leading axis, got shapes {shapes}")
    n = shapes[0][0]
    num_batches, rem = divmod(n, batch_size)
    parts = []
    if num_batches:
        main = [lax.reshape(_slice(x, 0, num_batches * batch_size, 1, 0), (num_batches, batch_size) + s[1:])
                for x, s in zip(leaves, shapes)]
        ys = scan(lambda carry, x: (carry, vmap(f)(x)), (), pytree.tree_unflatten(tree, main))[1]
        parts.append(pytree.tree_map(_merge_batches, ys))
    if rem:
        tail = [_slice(x, n - rem, n, 1, 0) for x in leaves]
        parts.append(vmap(f)(pytree.tree_unflatten(tree, tail)))
    if len(parts) == 1:
        return parts[0]
    return pytree.tree_map(lambda a, b: lax.concatenate([a, b], 0), parts[0], parts[1])


def _merge_batches(y):
    s = _util.aval("map", y).shape
    return lax.reshape(y, (s[0] * s[1],) + s[2:])
