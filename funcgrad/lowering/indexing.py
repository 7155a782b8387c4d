"""Data-dependent indexing (``core/prims/indexing.py``), memory-safe by construction.

Every index read from data is clamped before it addresses memory, exactly as the
primitives' impls define: dynamic_slice / dynamic_update_slice wrap a negative start
once (``s + n``) and then clamp it so the window fits (JAX's ``lax.dynamic_slice``);
gather ``clip`` clamps each index and ``fill`` selects ``fill_value`` for out-of-range
rows (reading a clamped, in-bounds position); scatter ``clip`` clamps and ``drop``
skips out-of-range rows with a branch. gather and the dynamic slices are fused views;
scatter copies the operand and then applies the updates in row order (so with
duplicate indices the last "set" wins, like NumPy).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.prims import indexing as ix
from funcgrad.lowering.builder import BOOL, I64, Value, const
from funcgrad.lowering.complex_math import cmax, cmin, complex_combine
from funcgrad.lowering.context import ConstOperand, lower_materialized, lower_view
from funcgrad.lowering.elementwise import _max_min, convert
from funcgrad.lowering.index_paths import SAME_POSITION


def _index(ctx, operand, idx=None) -> str | int:
    v = ctx.scalar(operand) if idx is None else operand.at(idx)
    v = convert(ctx.b, v, I64)
    return v.ref if not v.ref.lstrip("-").isdigit() else int(v.ref)


def _wrapped(b, s, n):
    """``s + n`` where ``s < 0`` (a Python int stays one)."""
    if isinstance(s, int):
        return s + n if s < 0 else s
    return b.emit(f"select i1 {b.icmp('slt', s, 0)}, i64 {b.iadd(s, n)}, i64 {s}")


def _clamped_starts(ctx, starts, shape, sizes):
    return [ctx.b.iclamp(_wrapped(ctx.b, _index(ctx, s), n), 0, n - m) for s, n, m in zip(starts, shape, sizes)]


@lower_view(ix.dynamic_slice_p, complex_ok=True)
def _dynamic_slice_lower(ctx, x, *starts, slice_sizes):
    b = ctx.b

    def at(idx):
        st = _clamped_starts(ctx, starts, x.shape, slice_sizes)
        return x.at(ctx.idx(x.shape, comps=[b.iadd(s, c) for s, c in zip(st, idx.comps)]))

    return ctx.view(ctx.out_aval, at)


@lower_view(ix.dynamic_update_slice_p, complex_ok=True)
def _dynamic_update_slice_lower(ctx, x, update, *starts):
    b = ctx.b
    if int(np.prod(update.shape, dtype=np.int64)) == 0:
        return x

    def at(idx):
        st = _clamped_starts(ctx, starts, x.shape, update.shape)
        inside, uc = "true", []
        for s, c, m in zip(st, idx.comps, update.shape):
            j = b.isub(c, s)
            inside = b.band(inside, b.band(b.icmp("sge", j, 0), b.icmp("slt", j, m)))
            uc.append(b.iclamp(j, 0, m - 1))
        u = update.at(ctx.idx(update.shape, comps=uc))
        return b.select(Value(inside, None), u, x.at(idx))

    return ctx.view(ctx.out_aval, at)


def _rows(ctx, indices, batch_comps, dims, clip: bool):
    """Clamped operand positions of one index row and whether the row was in range."""
    b, ok, pos = ctx.b, "true", []
    for j, n in enumerate(dims):
        v = _index(ctx, indices, ctx.idx(indices.shape, comps=list(batch_comps) + [j]))
        if not clip:
            ok = b.band(ok, b.band(b.icmp("sge", v, 0), b.icmp("slt", v, n)))
        pos.append(b.iclamp(v, 0, max(n - 1, 0)))
    return pos, ok


@lower_view(ix.gather_p, complex_ok=True)
def _gather_lower(ctx, operand, indices, *, mode, fill_value=None):
    b = ctx.b
    k = indices.shape[-1]
    nb = len(indices.shape) - 1
    dims = operand.shape[:k]
    fill = ix.default_fill_value(operand.dtype) if fill_value is None else fill_value
    fv = const(operand.dtype, fill)
    if any(n == 0 for n in dims):  # nothing to read: every row is out of range
        return ConstOperand(ctx.out_aval, fill)

    def at(idx):
        c = idx.comps
        pos, ok = _rows(ctx, indices, c[:nb], dims, clip=(mode == "clip"))
        v = operand.at(ctx.idx(operand.shape, comps=pos + list(c[nb:])))
        return v if ok == "true" else b.select(Value(ok, None), v, fv)

    return ctx.view(ctx.out_aval, at)


def _gather_reads_indices_in_place(eqn, k) -> bool:
    """One index per output element (``x[idx]``, ``idx[..., 1]``): that element's offset."""
    indices, out = eqn.inputs[1].aval, eqn.outputs[0].aval
    return k == 1 and indices.shape[-1:] == (1,) and tuple(out.shape) == tuple(indices.shape[:-1])


SAME_POSITION[ix.gather_p] = _gather_reads_indices_in_place
SAME_POSITION[ix.dynamic_update_slice_p] = lambda eqn, k: k == 0  # (the operand, outside the update)
_MAX, _MIN = _max_min("ogt", "sgt", "or"), _max_min("olt", "slt", "and")


def _scatter_combine(b, kind, old: Value, u: Value) -> Value:
    if kind == "set":
        return u
    if kind == "max":
        return (cmax if old.dtype.kind == "c" else _MAX)(b, old, u)
    if kind == "min":
        return (cmin if old.dtype.kind == "c" else _MIN)(b, old, u)
    if old.dtype == BOOL:
        return b.op("or" if kind == "add" else "and", old, u)
    if old.dtype.kind == "c":
        return complex_combine(b, "fadd" if kind == "add" else "fmul", old, u)
    if old.dtype.kind == "f":
        return b.op("fadd" if kind == "add" else "fmul", old, u)
    return b.op("add" if kind == "add" else "mul", old, u)


@lower_materialized(ix.scatter_p, complex_ok=True)
def _scatter_lower(ctx, operand, indices, updates, *, kind, mode):
    out = ctx.outs[0]
    ctx.write(out, operand)
    k = indices.shape[-1]
    batch, window = indices.shape[:-1], out.shape[k:]
    dims = out.shape[:k]
    if int(np.prod(out.shape, dtype=np.int64)) == 0 or int(np.prod(updates.shape, dtype=np.int64)) == 0:
        return

    def per_row(ridx):
        pos, ok = _rows(ctx, indices, ridx.comps, dims, clip=(mode == "clip"))

        def apply():
            def per_elem(widx):
                target = ctx.idx(out.shape, comps=pos + list(widx.comps))
                u = updates.at(ctx.idx(updates.shape, comps=list(ridx.comps) + list(widx.comps)))
                out.store(target, _scatter_combine(ctx.b, kind, out.at(target), u))

            if window:
                ctx.loop_nest(window, per_elem)
            else:
                per_elem(ctx.idx((), comps=[]))

        if ok == "true":
            apply()
        else:
            ctx.if_then(ok, apply)

    if batch:
        ctx.loop_nest(batch, per_row)
    else:
        per_row(ctx.idx((), comps=[]))
