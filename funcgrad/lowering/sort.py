"""sort (``core/prims/sort.py``): a stable bottom-up merge sort of indices per row.

For every row along ``dimension`` an index permutation is sorted by the first
``num_keys`` operands (lexicographically; floats order NaN last, like NumPy; -0.0
and 0.0 compare equal, and equal keys keep their order). Complex keys use NumPy's sort
order (``_complex_less``: by real, then imaginary part, with R+Rj < R+nanj < nan+Rj <
nan+nanj), so ``sort``/``argsort``/``sort_complex`` compile bitwise equal to eager. The passes are unrolled at
compile time (the row length is static): pass ``w`` merges runs of length ``w`` from
one index buffer into the other with a branch-free merge loop. Then every operand is
gathered through the permutation into its output. Keys that are fused values are
materialised first (they are read O(n log n) times).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.prims.sort import sort_p
from funcgrad.lowering.builder import BOOL, I64, Value, int_pred
from funcgrad.lowering.context import lower_materialized


def _complex_less(b, x: Value, y: Value) -> str:
    """x < y in NumPy's complex sort order (npysort's ``CFLOAT_LT``, which ``np.lexsort``
    and ``np.sort`` use; not the ``<`` ufunc, under which nothing with a nan is ordered):
    xr < yr: xi is a number or yi is nan; xr > yr: yi is nan and xi is not;
    xr == yr or both real parts nan: xi < yi, or yi is nan and xi is not;
    else (exactly one real part nan): yr is nan. Branch-free (i1 ref)."""
    (xr, xi), (yr, yi) = b.parts(x), b.parts(y)
    ximnum = b.cmp("fcmp", "ord", xi, xi)
    yimnan = b.cmp("fcmp", "uno", yi, yi)
    yrenan = b.cmp("fcmp", "uno", yr, yr)
    late_nan = b.op("and", yimnan, ximnum)  # only y's imaginary part is nan
    below = b.op("or", ximnum, yimnan)
    same = b.op("or", b.cmp("fcmp", "oeq", xr, yr), b.op("and", b.cmp("fcmp", "uno", xr, xr), yrenan))
    tie = b.op("or", b.cmp("fcmp", "olt", xi, yi), late_nan)
    r = b.select(same, tie, yrenan)
    r = b.select(b.cmp("fcmp", "ogt", xr, yr), late_nan, r)
    return b.select(b.cmp("fcmp", "olt", xr, yr), below, r).ref


def _less(b, x: Value, y: Value) -> str:
    """x < y in the sort order (i1 ref)."""
    if x.dtype.kind == "c":
        return _complex_less(b, x, y)
    if x.dtype.kind == "f":
        lt = b.emit(f"fcmp olt {x.ty} {x.ref}, {y.ref}")
        xnum = b.emit(f"fcmp ord {x.ty} {x.ref}, 0.0")
        ynan = b.emit(f"fcmp uno {y.ty} {y.ref}, 0.0")
        last = b.emit(f"and i1 {xnum}, {ynan}")
        return b.emit(f"or i1 {lt}, {last}")
    pred = int_pred(x.dtype, "slt")
    return b.emit(f"icmp {pred} {x.ty} {x.ref}, {y.ref}")


def _lex_less(b, xs, ys) -> str:
    """Lexicographic x < y over the keys (i1 ref)."""
    result = None
    for x, y in reversed(list(zip(xs, ys))):
        lt = _less(b, x, y)
        if result is None:
            result = lt
            continue
        gt = _less(b, y, x)
        ne = b.emit(f"or i1 {lt}, {gt}")
        eq = b.emit(f"xor i1 {ne}, true")
        tie = b.emit(f"and i1 {eq}, {result}")
        result = b.emit(f"or i1 {lt}, {tie}")
    return result


@lower_materialized(sort_p, complex_ok=True)
def _sort_lower(ctx, *ops, dimension, num_keys=1):
    outs = list(ctx.outs)
    shape = ops[0].shape
    if not shape:
        for o, x in zip(outs, ops):
            ctx.write(o, x)
        return
    b = ctx.b
    n = shape[dimension]
    if n <= 1:
        for o, x in zip(outs, ops):
            ctx.write(o, x)
        return
    idx_aval = ShapedArray((n,), I64)
    # Ping-pong buffers for one row: the indices, and a copy of each key moved along
    # with them (merges then read memory sequentially instead of key[perm[i]]).
    bufs = [[ctx.temp_buffer(idx_aval)] + [ctx.temp_buffer(ShapedArray((n,), k.dtype)) for k in ops[:num_keys]]
            for _ in range(2)]
    key_dtypes = [k.dtype for k in ops[:num_keys]]
    row_shape = tuple(d for k, d in enumerate(shape) if k != dimension)
    ctx.work += int(np.prod(shape, dtype=np.int64)) * max(1, int(np.ceil(np.log2(n)))) * (2 + num_keys)
    b.module.declare("llvm.smin.i64", "declare i64 @llvm.smin.i64(i64, i64)")

    def at_pos(comps, t):
        full = list(comps[:dimension]) + [t] + list(comps[dimension:])
        return ctx.idx(shape, comps=full)

    def load(buf, t, dtype):
        return b.load(b.gep(buf.ptr, dtype, t), dtype)

    def store(buf, t, v: Value):
        b.store(b.gep(buf.ptr, v.dtype, t), v)

    def smin(x, y):
        return b.emit(f"call i64 @llvm.smin.i64(i64 {x}, i64 {y})")

    def per_row(ridx):
        comps = ridx.comps

        def init(t, _):
            store(bufs[0][0], t, Value(t, I64))
            for buf, k in zip(bufs[0][1:], ops[:num_keys]):
                store(buf, t, k.at(at_pos(comps, t)))
            return []

        ctx.for_range(n, init)
        src, dst = 0, 1
        w = 1
        while w < n:
            s_bufs, d_bufs = bufs[src], bufs[dst]
            nruns = (n + 2 * w - 1) // (2 * w)

            def merge(r, _, s_bufs=s_bufs, d_bufs=d_bufs, w=w):
                lo = b.imul(r, 2 * w)
                mid = smin(b.iadd(lo, w), n)
                hi = smin(b.iadd(lo, 2 * w), n)
                midm1, him1 = b.isub(mid, 1), b.isub(hi, 1)

                def step(k, carry):
                    i, j = carry
                    ii, jj = smin(i.ref, midm1), smin(j.ref, him1)
                    left = [load(buf, ii, dt) for buf, dt in zip(s_bufs, [I64] + key_dtypes)]
                    right = [load(buf, jj, dt) for buf, dt in zip(s_bufs, [I64] + key_dtypes)]
                    right_first = _lex_less(b, right[1:], left[1:])
                    left_ok = b.emit(f"icmp slt i64 {i.ref}, {mid}")
                    right_ok = b.emit(f"icmp slt i64 {j.ref}, {hi}")
                    left_done = b.emit(f"xor i1 {left_ok}, true")
                    want_right = b.emit(f"or i1 {left_done}, {right_first}")
                    take_right = Value(b.emit(f"and i1 {right_ok}, {want_right}"), BOOL)
                    for buf, lv, rv in zip(d_bufs, left, right):
                        store(buf, k, b.select(take_right, rv, lv))
                    tr = b.emit(f"zext i1 {take_right.ref} to i64")
                    return [Value(b.emit(f"sub i64 {b.iadd(i.ref, 1)}, {tr}"), I64), Value(b.iadd(j.ref, tr), I64)]

                b.for_range(hi, lambda k, c: ctx.scoped(lambda: step(k, c)),
                            carry=[Value(str(lo), I64), Value(str(mid), I64)], start=lo)
                return []

            ctx.for_range(nruns, merge)
            src, dst = dst, src
            w *= 2
        perm = bufs[src][0]

        def gather(t, _):
            p = load(perm, t, I64).ref
            for o, x in zip(outs, ops):
                o.store(at_pos(comps, t), x.at(at_pos(comps, p)))
            return []

        ctx.for_range(n, gather)

    if row_shape:
        ctx.loop_nest(row_shape, per_row)
    else:
        per_row(ctx.idx((), comps=[]))
