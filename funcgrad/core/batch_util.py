"""Batching vocabulary shared by batch rules (in core) and the vmap transform.

A batch rule has the signature ``batch(args, bdims, **params) -> (out, out_bdim)``:
``bdims[i]`` is the axis of ``args[i]`` that is mapped, or ``None`` (not mapped). For
multiple-result primitives ``out`` and ``out_bdim`` are lists. Rules move batch
dimensions only when they must, and never loop over the batch.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import Primitive, batch_rules
from funcgrad.core.trace import get_aval_any

not_mapped = None


def _lax():
    from funcgrad.core import lax_api  # lazy: lax_api needs every primitive declared

    return lax_api


def shape_of(x):
    return get_aval_any(x).shape


def moveaxis(x, src: int, dst: int):
    """Move axis ``src`` of ``x`` to position ``dst`` (a transpose; no-op if equal)."""
    if src == dst:
        return x
    ndim = len(shape_of(x))
    perm = [d for d in range(ndim) if d != src]
    perm.insert(dst, src)
    return _lax().transpose(x, perm)


def bdim_at(x, bdim, size: int, dst: int = 0):
    """``x`` with its batch dimension at ``dst``; unmapped values are broadcast."""
    if bdim is None:
        shape = list(shape_of(x))
        out_shape = shape[:dst] + [size] + shape[dst:]
        dims = [d for d in range(len(out_shape)) if d != dst]
        return _lax().broadcast_in_dim(x, out_shape, dims)
    return moveaxis(x, bdim, dst)


# Values of other types than arrays (registered by the module that defines the type):
# their batched type, and the batch size of a mapped one (a bdim may be only a flag).
aval_batchers: dict[type, Callable] = {}  # aval type -> batched(aval, size)
aval_batch_sizes: dict[type, Callable] = {}  # aval type -> size(aval, bdim)


def batched_aval(aval, size: int):
    """Type of ``aval`` mapped over a new leading axis of ``size``."""
    rule = aval_batchers.get(type(aval))
    if rule is not None:
        return rule(aval, size)
    return ShapedArray((size,) + aval.shape, aval.dtype)


def batch_size(args, bdims) -> int:
    for x, d in zip(args, bdims):
        if d is not None:
            aval = get_aval_any(x)
            rule = aval_batch_sizes.get(type(aval))
            return rule(aval, d) if rule is not None else aval.shape[d]
    raise ValueError("batch rule called with no mapped argument")


def elementwise_batcher(prim: Primitive):
    """Batch rule for elementwise primitives (all operands share one shape): put every
    operand's batch axis where the first mapped operand has it, broadcasting unmapped
    operands, then apply the primitive once."""

    def rule(args, bdims, **params):
        size = batch_size(args, bdims)
        out_dim = next(d for d in bdims if d is not None)
        if all(d == out_dim for d in bdims):
            return prim.bind(*args, **params), out_dim
        moved = [bdim_at(x, d, size, out_dim) for x, d in zip(args, bdims)]
        return prim.bind(*moved, **params), out_dim

    return rule


def defbatch_elementwise(prim: Primitive) -> None:
    """Register ``elementwise_batcher`` for a primitive declared elementwise."""
    if not prim.elementwise:
        raise ValueError(f"{prim.name}: declare it elementwise (Primitive(..., elementwise=True)) to batch it so")
    batch_rules[prim] = elementwise_batcher(prim)


def shift_axes(axes, bdim):
    """Axes of an unbatched value, renumbered for a value whose batch axis is ``bdim``."""
    return tuple(a + (a >= bdim) for a in axes)


def iota_column(size: int, shape, dtype):
    """``b`` at every position of a ``(size, *shape, 1)`` array: the batch coordinate."""
    return _lax().broadcast_in_dim(_lax().iota(dtype, (size,), 0), (size,) + tuple(shape) + (1,), (0,))


__all__ = [
    "not_mapped",
    "moveaxis",
    "bdim_at",
    "batch_size",
    "elementwise_batcher",
    "defbatch_elementwise",
    "shift_axes",
    "iota_column",
    "np",
]
