"""Reductions, arg-reductions and cumulative scans (``core/prims/reductions.py``).

A reduction evaluates its fused operand inside its own loop nest, so producers are
absorbed (``sum(x * x)`` makes no ``x * x`` buffer). Loops follow the operand's
row-major order: trailing reduced axes accumulate in a register (with ``reassoc``
fast-math on float sums/products only, which lets LLVM vectorise the accumulator);
a kept innermost axis accumulates into the output row, which vectorises too.
Cumulative scans are sequential and strict, so they match NumPy bitwise.

Each reduction and scan declares its monoid (``core/prims/reductions.py``): the combiner,
a binary elementwise primitive, and ``identity(dtype)``. ``_COMBINE`` below maps each
combiner to its scalar step, so no rule here looks at a primitive's name.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.prims import elementwise as ew
from funcgrad.core.prims import reductions as rd
from funcgrad.lowering import parallel as splitting
from funcgrad.lowering.builder import BOOL, I64, Value, const, int_pred
from funcgrad.lowering.complex_math import arg_take, cmax, cmin, complex_combine
from funcgrad.lowering.context import COMPLEX_LOWERED, lower_materialized
from funcgrad.lowering.elementwise import convert, intrinsic


def _identity(prim, dtype) -> Value:
    """The identity of ``prim``'s monoid as a constant of ``dtype``."""
    dtype = np.dtype(dtype)
    return const(dtype, prim.identity(dtype))


def _arith(fop: str, iop: str):
    """Sum/product step; ``reassoc`` lets LLVM reorder a float accumulation (vectorise)."""

    def combine(b, acc: Value, x: Value, reassoc: bool) -> Value:
        if acc.dtype.kind == "c":  # componentwise sums reassociate like float ones
            return complex_combine(b, fop, acc, x, "reassoc" if reassoc else "")
        if acc.dtype.kind == "f":
            return b.op(fop, acc, x, flags="reassoc" if reassoc else "")
        return b.op(iop, acc, x)

    return combine


def _extreme(float_intrinsic: str, int_intrinsic: str, bool_op: str):
    """Max/min step: NaN-propagating on floats, like numpy.max/min; any/all on bool."""

    def combine(b, acc: Value, x: Value, reassoc: bool) -> Value:
        if acc.dtype == BOOL:
            return b.op(bool_op, acc, x)
        if acc.dtype.kind == "c":  # lexicographic, the first nan wins (NumPy's maximum/minimum)
            return (cmax if float_intrinsic == "maximum" else cmin)(b, acc, x)
        if acc.dtype.kind == "f":
            return intrinsic(float_intrinsic, acc, x, b=b)
        name = f"llvm.{int_pred(acc.dtype, int_intrinsic)}.{acc.ty}"  # smax -> umax for unsigned
        return b.call(name, acc.dtype, acc, x, decl=f"declare {acc.ty} @{name}({acc.ty}, {acc.ty})")

    return combine


# combiner primitive (a monoid's operation) -> ``combine(b, acc, x, reassoc) -> Value``
_COMBINE = {
    ew.add_p: _arith("fadd", "add"),
    ew.mul_p: _arith("fmul", "mul"),
    ew.max_p: _extreme("maximum", "smax", "or"),
    ew.min_p: _extreme("minimum", "smin", "and"),
}


def _combine(b, prim, acc: Value, x: Value, reassoc: bool = True) -> Value:
    """One step of ``prim``'s monoid. Reductions may reassociate float sums/products."""
    return _COMBINE[prim.combiner](b, acc, x, reassoc)


def carried_nest(ctx, shape, carry: list, body):
    """Nested loops over ``shape`` threading ``carry`` through: ``body(comps, carry)
    -> carry``. Returns the final carried values."""
    comps: list = []

    def level(d, carried):
        if d == len(shape):
            return body(list(comps), carried)

        def inner(i, c):
            comps.append(i)
            out = level(d + 1, c)
            comps.pop()
            return out

        if shape[d] == 1:
            return inner(0, carried)
        return ctx.for_range(shape[d], inner, carry=carried)

    try:
        return level(0, carry)
    finally:
        level = None  # (it refers to itself: a cycle holding ``body`` and the context)


def reduce_into(ctx, out, x, axes, prim) -> None:
    """out[kept] = reduce_{axes} x with ``prim``'s monoid, looping in x's row-major order."""
    b, shape, axes = ctx.b, x.shape, sorted(axes)
    if not axes:
        ctx.write(out, x)
        return
    r = len(shape)
    t = 0  # trailing axes that are all reduced: these accumulate in a register
    while t < r and (r - 1 - t) in axes:
        t += 1
    outer, inner = shape[: r - t], shape[r - t:]
    kept = [d for d in range(r) if d not in axes]
    ident = _identity(prim, x.dtype)
    through_memory = any(a < r - t for a in axes)
    if through_memory or int(np.prod(shape, dtype=np.int64)) == 0:
        ctx.loop_nest(out.shape, lambda idx: out.store(idx, ident))

    def per_outer(oidx):
        oc = oidx.comps
        if t:
            (acc,) = carried_nest(
                ctx, inner, [ident], lambda ic, c: [_combine(b, prim, c[0], x.at(ctx.idx(shape, comps=oc + ic)))]
            )
        else:
            acc = x.at(ctx.idx(shape, comps=oc))
        dst = ctx.idx(out.shape, comps=[oc[d] for d in kept])
        if through_memory:
            acc = _combine(b, prim, out.at(dst), acc)
        out.store(dst, acc)

    size = int(np.prod(shape, dtype=np.int64))
    if outer:  # (rows are independent unless they accumulate into shared outputs)
        ctx.loop_nest(outer, per_outer, parallel=not through_memory)
    elif ctx.parallel_ok and size >= splitting.MIN_ELEMENTS and shape[0] > 1:
        _chunked_total(ctx, out, x, prim, ident)
    else:
        per_outer(ctx.idx((), comps=[]))


def _chunked_total(ctx, out, x, prim, ident) -> None:
    """A large reduction over all axes: fixed chunks of leading-axis rows each reduce
    into a partial (the chunks may run on several threads), then the partials combine
    in chunk order. Chunks depend only on the shape, so the result does not depend on
    the thread count or on which thread ran which chunk."""
    b, shape = ctx.b, x.shape
    n0, rest = shape[0], list(shape[1:])
    grain = -(-n0 // min(n0, splitting.MAX_CHUNKS))
    nparts = -(-n0 // grain)
    parts = ctx.temp_buffer(out.aval.update(shape=(nparts,)))

    def chunk(cidx):
        lo = b.imul(cidx.flat, grain)
        hi = b.iclamp(b.iadd(lo, grain), 0, n0)

        def row(i, carried):
            return carried_nest(ctx, rest, carried,
                                lambda ic, c: [_combine(b, prim, c[0], x.at(ctx.idx(shape, comps=[i] + ic)))])

        parts.store(cidx, ctx.for_range(hi, row, carry=[ident], start=lo)[0])

    if not splitting.outline(ctx, (nparts,), chunk, flat=True, scale=grain * int(np.prod(rest, dtype=np.int64))):
        ctx.loop_nest((nparts,), chunk)
    (total,) = ctx.for_range(nparts, lambda i, c: [_combine(b, prim, c[0], parts.at(ctx.idx((nparts,), flat=i)),
                                                             reassoc=False)], carry=[ident])
    out.store(ctx.idx((), comps=[]), total)


def _reduction(prim):
    @lower_materialized(prim)
    def rule(ctx, x, *, axes):
        reduce_into(ctx, ctx.outs[0], x, axes, prim)

    rule.__name__ = f"_{prim.name}_lower"
    return rule


for _p in (rd.reduce_sum_p, rd.reduce_prod_p, rd.reduce_max_p, rd.reduce_min_p):
    _reduction(_p)
COMPLEX_LOWERED.update([rd.reduce_sum_p, rd.reduce_prod_p, rd.reduce_max_p, rd.reduce_min_p])


def _arg_reduction(prim, better_pred: dict):
    @lower_materialized(prim)
    def rule(ctx, x, *, axis, index_dtype):
        b, out, n = ctx.b, ctx.outs[0], x.shape[axis]

        def comps_at(oc, i):
            return oc[:axis] + [i] + oc[axis:]

        def per_out(oidx):
            oc = oidx.comps
            first = x.at(ctx.idx(x.shape, comps=comps_at(oc, 0)))

            def step(i, carried):
                best, best_i = carried
                v = x.at(ctx.idx(x.shape, comps=comps_at(oc, i)))
                if v.dtype.kind == "c":
                    take = arg_take(b, better_pred["f"], v, best)
                elif v.dtype.kind == "f":  # the first NaN wins, like NumPy
                    take = b.cmp("fcmp", better_pred["f"], v, best)
                    nan_v = b.cmp("fcmp", "uno", v, v)
                    best_ok = b.cmp("fcmp", "ord", best, best)
                    take = b.op("or", take, b.op("and", nan_v, best_ok))
                else:
                    take = b.cmp("icmp", int_pred(v.dtype, better_pred["i"]), v, best)
                return [b.select(take, v, best), b.select(take, Value(str(i), I64), best_i)]

            _, best_i = (
                ctx.for_range(n, step, carry=[first, const(I64, 0)], start=1) if n > 1 else (first, const(I64, 0))
            )
            out.store(oidx, convert(b, best_i, index_dtype))

        ctx.loop_nest(out.shape, per_out)

    rule.__name__ = f"_{prim.name}_lower"
    return rule


_arg_reduction(rd.argmax_p, {"f": "ogt", "i": "sgt", "b": "ugt"})
_arg_reduction(rd.argmin_p, {"f": "olt", "i": "slt", "b": "ult"})
COMPLEX_LOWERED.update([rd.argmax_p, rd.argmin_p])


def _cumulative(prim):
    @lower_materialized(prim)
    def rule(ctx, x, *, axis, reverse=False):
        b, out, n = ctx.b, ctx.outs[0], x.shape[axis]
        outer = x.shape[:axis] + x.shape[axis + 1:]

        def per_line(oidx):
            oc = oidx.comps

            def step(i, carried):
                pos = b.isub(n - 1, i) if reverse else i
                idx = ctx.idx(x.shape, comps=oc[:axis] + [pos] + oc[axis:])
                acc = _combine(b, prim, carried[0], x.at(idx), reassoc=False)  # strict: NumPy's order
                out.store(idx, acc)
                return [acc]

            ctx.for_range(n, step, carry=[_identity(prim, x.dtype)])

        if n:
            ctx.loop_nest(outer, per_line) if outer else per_line(ctx.idx((), comps=[]))

    rule.__name__ = f"_{prim.name}_lower"
    return rule


_cumulative(rd.cumsum_p)
_cumulative(rd.cumprod_p)
COMPLEX_LOWERED.update([rd.cumsum_p, rd.cumprod_p])
