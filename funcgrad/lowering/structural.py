"""Fused index-remapping rules for ``core/prims/structural.py``.

Every layout op is a view: it computes the operand index an output element reads
from, and never copies. Out-of-range positions (pad, concatenate) read a *clamped*
index and select the padding value, so no access leaves its buffer.
"""
from __future__ import annotations

from funcgrad.core.avals import ShapedArray
from funcgrad.core.prims import structural as st
from funcgrad.lowering.builder import I64, Value, const
from funcgrad.lowering.context import BufferOperand, lower_materialized, lower_view
from funcgrad.lowering.elementwise import convert


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _same_flat_layout(eqn) -> bool:
    """A broadcast from a single element, or one that only adds size-1 dims."""
    n = _size(eqn.inputs[0].aval.shape)
    return n == 1 or n == _size(eqn.params["shape"])


@lower_view(st.broadcast_in_dim_p, flat=_same_flat_layout, cheap=True, complex_ok=True)
def _broadcast_in_dim_lower(ctx, x, *, shape, broadcast_dimensions):
    if tuple(x.shape) == tuple(shape):
        return x
    if _size(x.shape) == 1:  # a scalar broadcast reads the one element
        return ctx.view(ctx.out_aval, lambda idx: x.at(ctx.idx(x.shape, flat=0)))
    if _size(x.shape) == _size(shape):  # only size-1 dims added: same flat layout
        return ctx.view(ctx.out_aval, lambda idx: x.at(ctx.idx(x.shape, flat=idx.flat)))

    def at(idx):
        comps = [0 if n == 1 else idx.comps[d] for n, d in zip(x.shape, broadcast_dimensions)]
        return x.at(ctx.idx(x.shape, comps=comps))

    return ctx.view(ctx.out_aval, at)


@lower_view(st.reshape_p, flat=True, cheap=True, complex_ok=True)
def _reshape_lower(ctx, x, *, new_sizes):
    return ctx.view(ctx.out_aval, lambda idx: x.at(ctx.idx(x.shape, flat=idx.flat)))


@lower_view(st.transpose_p, cheap=True, complex_ok=True)
def _transpose_lower(ctx, x, *, permutation):
    if tuple(permutation) == tuple(range(len(permutation))):
        return x
    view = _transposed(ctx, x, tuple(permutation), ctx.out_aval)
    if x.is_buffer and len(permutation) > 2:  # (its write loops over runs of dims: ``ctx.write``)
        merged, perm = merged_dims(ctx, x, tuple(permutation))
        if len(perm) < len(permutation):
            view.coarse = _transposed(ctx, merged, perm, ShapedArray([merged.shape[p] for p in perm], x.dtype))
    return view


def _transposed(ctx, x, permutation, aval):
    def at(idx):
        comps = [0] * len(permutation)
        for d, p in enumerate(permutation):
            comps[p] = idx.comps[d]
        return x.at(ctx.idx(x.shape, comps=comps))

    return ctx.view(aval, at)


def merged_dims(ctx, x, perm):
    """``x`` reshaped so that each run of dims that ``perm`` keeps adjacent and in order is
    one dim (a buffer: the same pointer; a fused value: read at the same flat offsets),
    and the permutation of those merged dims."""
    runs = [[perm[0]]]
    for d in perm[1:]:
        if d == runs[-1][-1] + 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    if len(runs) == len(perm):
        return x, perm
    by_start = sorted(range(len(runs)), key=lambda r: runs[r][0])
    shape = [_size([x.shape[d] for d in runs[r]]) for r in by_start]
    aval = ShapedArray(shape, x.dtype)
    if x.is_buffer:
        merged = BufferOperand(ctx, aval, x.ptr)
    else:
        merged = ctx.view(aval, lambda idx: x.at(ctx.idx(x.shape, flat=idx.flat)))
    return merged, tuple(by_start.index(r) for r in range(len(runs)))


@lower_view(st.rev_p, cheap=True, complex_ok=True)
def _rev_lower(ctx, x, *, dimensions):
    if not dimensions:
        return x
    b = ctx.b

    def at(idx):
        comps = [b.isub(n - 1, c) if d in dimensions else c for d, (c, n) in enumerate(zip(idx.comps, x.shape))]
        return x.at(ctx.idx(x.shape, comps=comps))

    return ctx.view(ctx.out_aval, at)


@lower_view(st.slice_p, cheap=True, complex_ok=True)
def _slice_lower(ctx, x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    b = ctx.b

    def at(idx):
        comps = [b.iadd(s, b.imul(c, k)) for c, s, k in zip(idx.comps, start_indices, strides)]
        return x.at(ctx.idx(x.shape, comps=comps))

    return ctx.view(ctx.out_aval, at)


@lower_view(st.iota_p, cheap=True, complex_ok=True)
def _iota_lower(ctx, *, dtype, shape, dimension):
    aval = ctx.out_aval

    def at(idx):
        c = idx.comps[dimension]
        if isinstance(c, int):
            return const(aval.dtype, c)
        return convert(ctx.b, Value(c, I64), aval.dtype)

    return ctx.view(aval, at)


@lower_view(st.concatenate_p, cheap=True, complex_ok=True)
def _concatenate_lower(ctx, *xs, dimension):
    parts, off = [], 0
    for x in xs:
        n = x.shape[dimension]
        if n:
            parts.append((off, n, x))
        off += n
    b = ctx.b

    def at(idx):
        c = idx.comps[dimension]
        r = None
        for start, n, x in reversed(parts):
            comps = list(idx.comps)
            comps[dimension] = b.iclamp(b.isub(c, start), 0, n - 1)
            v = x.at(ctx.idx(x.shape, comps=comps))
            r = v if r is None else b.select(Value(b.icmp("slt", c, start + n), None), v, r)
        return r

    return ctx.view(ctx.out_aval, at)


@lower_view(st.pad_p, cheap=True, complex_ok=True)
def _pad_lower(ctx, x, padding_value, *, padding_config):
    b = ctx.b
    if _size(x.shape) == 0:
        return ctx.view(ctx.out_aval, lambda idx: ctx.scalar(padding_value))

    def at(idx):
        valid, comps = "true", []
        for c, n, (lo, hi, it) in zip(idx.comps, x.shape, padding_config):
            j = b.isub(c, lo)
            span = (n - 1) * (it + 1)  # last operand element sits at j == span
            jc = b.iclamp(j, 0, span)
            if lo > 0:
                valid = b.band(valid, b.icmp("sge", j, 0))
            if hi > 0:
                valid = b.band(valid, b.icmp("sle", j, span))
            if it:
                valid = b.band(valid, b.icmp("eq", b.irem_const(jc, it + 1), 0))
            comps.append(b.idiv_const(jc, it + 1))
        v = x.at(ctx.idx(x.shape, comps=comps))
        if valid == "true":
            return v
        return b.select(Value(valid, None), v, ctx.scalar(padding_value))

    return ctx.view(ctx.out_aval, at)


@lower_materialized(st.optimization_barrier_p, complex_ok=True)
def _optimization_barrier(ctx, x):
    # Not a view: the operand's fused region runs once, into this buffer.
    ctx.write(ctx.outs[0], x)
