"""``eig`` (``core/prims/eig.py``) compiled: LAPACK ``?geev`` as ``numpy.linalg.eig`` calls
it (jobvl 'N', jobvr 'V' or 'N' for ``eigvals``; the workspace queried with the same
arguments), through the calling layer of ``linalg.py``. Computed in float64 / complex128
and rounded at the end, as NumPy.

Real input (``dgeev``) returns the eigenvalues as ``wr + i wi`` and a complex-conjugate
pair's eigenvectors packed in two real columns (``vr[:, j] +- i vr[:, j+1]``, the first
of the pair with ``wi > 0``); they are unpacked as NumPy's ``mk_geev_complex_eigenvectors``
does, column by column: ``wi[j] == 0`` real, ``wi[j] > 0`` the pair's first, ``wi[j] < 0``
its conjugate. A matrix LAPACK fails on gets NaN outputs (as the impl).
"""
from __future__ import annotations

import ctypes

import numpy as np

from funcgrad.core.prims import eig as eg
from funcgrad.lowering.builder import BOOL, C64, F64, I32, I64, Value, const
from funcgrad.lowering.context import lower_materialized
from funcgrad.lowering.linalg import (
    LEN1,
    Emitter,
    check_float,
    chr_arg,
    input_ptr,
    lapack_query,
    lapack_symbol,
    matrix_batch,
    ref_arg,
)


@lower_materialized(eg.eig_p, complex_ok=True)
def _eig_lower(ctx, x, *, compute_eigenvectors=True):
    wdt, pre = check_float(x)
    w_out = ctx.outs[0]
    v_out = ctx.outs[1] if compute_eigenvectors else None
    n = x.shape[-1]
    nb = matrix_batch(x.shape, 2)
    if nb * n == 0:
        return
    cdt = np.dtype(w_out.dtype)
    jobvr = "V" if compute_eigenvectors else "N"
    ldvr = n if compute_eigenvectors else 1
    sym, _, ity = lapack_symbol(pre + "geev")
    e = Emitter(ctx, ity, wdt)
    real = pre == "d"

    def q(ci, work, iwork, info, rwork):
        a, vr = np.zeros(n * n, wdt), np.zeros(max(ldvr * n, 1), wdt)
        vl = np.zeros(1, wdt)
        ws = [np.zeros(n), np.zeros(n)] if real else [np.zeros(n, wdt)]
        tail = [] if real else [np.zeros(2 * n).ctypes.data_as(ctypes.c_void_p)]
        return [chr_arg("N"), chr_arg(jobvr), ref_arg(ci, n), a.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, n),
                *[w.ctypes.data_as(ctypes.c_void_p) for w in ws], vl.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, 1),
                vr.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, ldvr), work.ctypes.data_as(ctypes.c_void_p),
                ref_arg(ci, -1), *tail, ctypes.byref(info), LEN1, LEN1]

    q.key = (n, jobvr, pre)
    lwork = max(1, lapack_query(pre + "geev", q)[0])
    src = input_ptr(ctx, x)
    fa, fvr, fvl = e.buffer(n * n, wdt), e.buffer(ldvr * n, wdt), e.buffer(1, wdt)
    fw = [("ptr", e.buffer(n, F64)), ("ptr", e.buffer(n, F64))] if real else [("ptr", e.buffer(n, wdt))]
    work, info = e.buffer(lwork, wdt), e.ints(1)
    rwork = [] if real else [("ptr", e.buffer(2 * n, F64))]
    ctx.work += nb * 25 * n ** 3
    b = ctx.b

    def cplx(re: Value, im: Value) -> Value:
        """re + i im (float64 parts) as the output's complex dtype."""
        return e.convert(b.pack(re, im), C64) if cdt == C64 else b.pack(re, im)

    def one(bi, _):
        off, woff = b.imul(bi, n * n), b.imul(bi, n)
        e.to_fortran(src, x.dtype, off, n, n, fa)
        bad = _non_finite(ctx, e, fa, n * n)
        # NumPy raises before calling LAPACK on inf/nan (which would print "illegal value"):
        # skip the call and report failure (NaN outputs)
        b.store(info, Value("-1", I64 if ity == "i64" else I32))
        args = [("ptr", e.char_const("N")), ("ptr", e.char_const(jobvr)), ("ptr", e.int_const(n)), ("ptr", fa),
                ("ptr", e.int_const(n)), *fw, ("ptr", fvl), ("ptr", e.int_const(1)), ("ptr", fvr),
                ("ptr", e.int_const(ldvr)), ("ptr", work), ("ptr", e.int_const(lwork)), *rwork, ("ptr", info),
                ("i64", 1), ("i64", 1)]
        ctx.if_then(b.op("xor", bad, const(BOOL, True)).ref, lambda: e.call(sym, args))
        if real:
            wr, wi = fw[0][1], fw[1][1]
            ctx.for_range(n, lambda j, _: e.store(w_out.ptr, cdt, b.iadd(woff, j),
                                                  cplx(e.load(wr, F64, j), e.load(wi, F64, j))) or [])
            if compute_eigenvectors:
                e.loop2(n, n, lambda i, j: _unpack(e, b, fvr, wi, n, i, j, v_out.ptr, cdt, off, cplx))
        else:
            ctx.for_range(n, lambda j, _: e.store(w_out.ptr, cdt, b.iadd(woff, j), e.load(fw[0][1], wdt, j)) or [])
            if compute_eigenvectors:
                e.from_fortran(fvr, n, n, n, v_out.ptr, cdt, off)

        def failed():
            e.fill(w_out.ptr, cdt, woff, n, np.nan)
            if compute_eigenvectors:
                e.fill(v_out.ptr, cdt, off, n * n, np.nan)

        ctx.if_then(e.info_failed(info), failed)
        return []

    ctx.for_range(nb, one)


def _non_finite(ctx, e, ptr, count: int) -> Value:
    """True if any entry (any part) of the work buffer is inf or nan (x - x is nan then)."""
    b = ctx.b

    def scan(i, carried):
        v = e.load(ptr, e.wdt, i)
        acc = carried[0]
        for p in (b.parts(v) if e.wdt.kind == "c" else (v,)):
            d = b.op("fsub", p, p)
            acc = b.op("or", acc, b.cmp("fcmp", "uno", d, d))
        return [acc]

    (bad,) = ctx.for_range(count, scan, carry=[const(BOOL, False)])
    return bad


def _unpack(e, b, fvr, wi, n, i, j, dst, cdt, off, cplx):
    """v[i, j] from dgeev's packed columns (see the module docstring)."""
    zero = const(F64, 0.0)
    w = e.load(wi, F64, j)
    pos, neg = b.cmp("fcmp", "ogt", w, zero), b.cmp("fcmp", "olt", w, zero)
    # the columns holding the real and the imaginary part (j - 1 / j + 1 only when they exist)
    re_col = b.select(neg, Value(str(b.isub(j, 1)), I64), Value(str(j), I64)).ref
    im_col = b.select(pos, Value(str(b.iadd(j, 1)), I64), Value(str(j), I64)).ref
    re = e.load(fvr, F64, b.iadd(i, b.imul(re_col, n)))
    im = e.load(fvr, F64, b.iadd(i, b.imul(im_col, n)))
    im = b.select(pos, im, b.select(neg, Value(b.emit(f"fneg double {im.ref}"), F64), zero))
    e.store(dst, cdt, b.iadd(off, b.iadd(b.imul(i, n), j)), cplx(re, im))
