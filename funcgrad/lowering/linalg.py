"""Linear algebra (``core/prims/linalg.py``): calls into the LAPACK NumPy already loaded.

NumPy's wheels bundle one OpenBLAS (``libscipy_openblas64_``) that also exports LAPACK;
``numpy.linalg`` calls it, and so does the code generated here, through the library
``dot.find_blas()`` located (no second search): ``scipy_dpotrf_64_``-style Fortran
symbols (ILP64: every integer is an ``i64`` passed by pointer, character arguments
are followed by their hidden ``size_t`` lengths) and ``scipy_cblas_dtrsm64_`` /
``scipy_cblas_dtrsv64_``. To give the *same* numbers as the primitives' NumPy impls,
each rule does what ``numpy/linalg/umath_linalg.cpp`` does:

=================  ===============================================================
primitive          generated code (per matrix of the batch, a loop)
=================  ===============================================================
cholesky           copy to column-major, ``dpotrf('L')``, copy back, zero the
                   upper triangle
triangular_solve   the impl's ``np.linalg.solve`` (``dgesv``) on an upper-triangular
                   matrix is back substitution: build the same column-major upper
                   matrix (rows/columns reversed for a lower system, as the impl
                   does), then ``cblas_dtrsv`` (one right-hand side) or
                   ``cblas_dtrsm`` -- the kernels ``dgetrs`` itself calls
lu                 native loop: the impl's own partial-pivoting elimination, op for op
                   (LAPACK ``dgetrf`` picks the same pivots on generic input but
                   rounds differently -- left-looking, reciprocal scaling -- and on
                   integer-valued or singular matrices a different rounding can flip
                   a pivot tie; the loop is bitwise equal to the impl instead)
eigh               ``dsyevd('V', 'L'|'U')`` -- what ``np.linalg.eigh`` calls, so the
                   eigenvector signs are LAPACK's, exactly as in the impl
qr                 ``dgeqrf``, R from its upper triangle, then ``dorgqr`` in place
svd                ``dgesdd`` with jobz 'A' / 'S' / 'N' (as ``np.linalg.svd``)
=================  ===============================================================

Complex input calls the ``z`` routines (``zpotrf``, ``cblas_ztrsv``/``ztrsm`` with alpha by
pointer, ``zheevd`` and ``zgesdd`` with their real ``rwork``, ``zgeqrf``/``zungqr``) in
complex128, as ``numpy.linalg`` does; complex ``lu``'s loop uses NumPy's complex abs,
Smith division and multiply (``complex_math``), bitwise the impl's.

float32 inputs are computed in double and rounded at the end, because that is what
``numpy.linalg`` does (its ``_commonType`` always picks double); ``lu``'s impl is
plain NumPy arithmetic in the input dtype, and so is its loop. Workspace sizes are
queried at compile time (``lwork = -1``, shapes are static) with the same arguments
NumPy uses, so LAPACK takes the same (blocked) code paths; all buffers come from the
compiled function's workspace and are reused by every matrix of the batch.

Errors: where NumPy raises ``LinAlgError`` (cholesky of a matrix that is not positive
definite, eigh/svd not converging, a triangular solve with a zero on the diagonal),
compiled code does what JAX does and returns NaNs for that matrix (every output of
the failing batch entry) instead of raising; the eager impls do the same. ``lu`` of a singular matrix is not an
error (as in the impl). A routine missing from the loaded library raises
``LoweringError`` at compile time, and jit then runs the program with the evaluator.

Measured against the impls (tests/test_lowering_linalg.py): bitwise equal on this
machine for every primitive in float64 and float32; the tests allow 1e-12 relative.
"""
from __future__ import annotations

import ctypes

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.prims import elementwise as ew
from funcgrad.core.prims import linalg as la
from funcgrad.errors import LoweringError
from funcgrad.lowering import dot, engine
from funcgrad.lowering.builder import BOOL, C64, C128, F32, F64, I32, I64, Value, const
from funcgrad.lowering.complex_math import cmul, cne, csub, to_complex
from funcgrad.lowering.context import lower_materialized
from funcgrad.lowering.elementwise import COMPLEX_EMITTERS

# CBLAS enums
_COL_MAJOR, _NO_TRANS, _UPPER, _NON_UNIT, _LEFT = 102, 111, 121, 131, 141

_state: dict = {}
_queries: dict = {}


# --- the library and its symbols ----------------------------------------------------------------
def _library():
    """(ctypes library, symbol prefix, 'i64' | 'i32') of the BLAS dot.py found, or None."""
    if "lib" not in _state:
        found = dot.find_blas()
        result = None
        if found is not None:
            try:
                lib = ctypes.CDLL(found["library"])  # the handle NumPy's copy already has
            except OSError:
                lib = None
            if lib is not None:
                prefix = found["symbol"].split("cblas_")[0]  # "scipy_" or ""
                result = (lib, prefix, found["int"])
        _state["lib"] = result
    return _state["lib"]


@engine.provider("lapack")
def lapack_symbol(name: str, cblas: bool = False):
    """Bind LAPACK routine ``name`` (e.g. ``dpotrf``) or CBLAS ``name`` (``dtrsm``) as
    ``fg_lapack_<name>``; return (IR symbol, ctypes function, integer IR type)."""
    key = ("sym", name)
    if key in _state:
        return _state[key]
    found = _library()
    if found is None:
        raise LoweringError(f"linear algebra: no BLAS/LAPACK library found in this process (needed for {name})")
    lib, prefix, ity = found
    if cblas:
        candidates = [f"{prefix}cblas_{name}64_"] if ity == "i64" else [f"{prefix}cblas_{name}"]
    else:
        if ity == "i64":
            candidates = [f"{prefix}{name}_64_", f"{prefix}{name}64_"]
        else:
            candidates = [f"{prefix}{name}_", f"{prefix}{name}"]
    for cand in candidates:
        try:
            fn = getattr(lib, cand)
        except AttributeError:
            continue
        sym = f"fg_lapack_{name}"
        engine.add_symbol(sym, ctypes.cast(fn, ctypes.c_void_p).value)
        _state[key] = (sym, fn, ity)
        return _state[key]
    raise LoweringError(f"linear algebra: the loaded BLAS/LAPACK ({found[1]}...) does not export any of {candidates}")


def _cint(ity):
    return ctypes.c_int64 if ity == "i64" else ctypes.c_int32


def _np_int(ity):
    return I64 if ity == "i64" else I32


def lapack_query(name: str, build_args, nwork: int = 1) -> list:
    """Workspace query (``lwork = -1``) at compile time; returns the first ``nwork`` of
    (work[0] as int, iwork[0]) as LAPACK reports them. Cached per argument tuple."""
    sym, fn, ity = lapack_symbol(name)
    key = (name, build_args.__name__, getattr(build_args, "key", None))
    if key in _queries:
        return _queries[key]
    ci = _cint(ity)
    work = np.zeros(2, np.float64)  # (a complex routine writes a complex: its real part is work[0])
    iwork = np.zeros(1, np.int64 if ity == "i64" else np.int32)
    rwork = np.zeros(1, np.float64)  # (complex eigh: zheevd's real workspace)
    info = ci(0)
    args = build_args(ci, work, iwork, info, rwork)
    fn.restype = None
    fn(*args)
    if info.value != 0:
        raise LoweringError(f"linear algebra: workspace query of {name} failed (info={info.value})")
    out = [int(work[0]), int(iwork[0]), int(rwork[0])][:nwork]
    _queries[key] = out
    return out


def ref_arg(ci, v):
    return ctypes.byref(ci(v))


def chr_arg(c: str):
    return ctypes.c_char_p(c.encode())


LEN1 = ctypes.c_size_t(1)  # the hidden length of a CHARACTER*1 argument


# --- IR helpers -------------------------------------------------------------------------------------
class Emitter:
    """IR for one LAPACK-calling rule: constants, buffers, calls, copy loops."""

    def __init__(self, ctx, ity: str, wdt=F64):
        self.ctx, self.b, self.ity = ctx, ctx.b, ity
        self.module = ctx.b.module
        self.wdt = np.dtype(wdt)  # the Fortran buffers' dtype: float64, or complex128

    def int_const(self, v: int) -> str:
        """Pointer to a read-only integer (Fortran passes everything by reference)."""
        name = f"fg_la_{self.ity}_{'m' if v < 0 else ''}{abs(v)}"
        self.module.declare(name, f"@{name} = private unnamed_addr constant {self.ity} {v}")
        return "@" + name

    def char_const(self, c: str) -> str:
        name = f"fg_la_chr_{c}"
        self.module.declare(name, f"@{name} = private unnamed_addr constant i8 {ord(c)}")
        return "@" + name

    def buffer(self, count: int, dtype) -> str:
        return self.ctx.temp_buffer(ShapedArray((max(int(count), 1),), dtype)).ptr

    def ints(self, count: int) -> str:
        return self.buffer(count, _np_int(self.ity))

    def call(self, sym: str, args: list) -> None:
        """``args``: (IR type, value) pairs."""
        types = ", ".join(t for t, _ in args)
        self.module.declare(sym, f"declare void @{sym}({types}) nounwind")
        self.b.stmt(f"call void @{sym}({', '.join(f'{t} {v}' for t, v in args)})")

    def info_failed(self, info_ptr: str) -> str:
        v = self.b.emit(f"load {self.ity}, ptr {info_ptr}, align {4 if self.ity == 'i32' else 8}")
        return self.b.emit(f"icmp ne {self.ity} {v}, 0")

    def loop2(self, rows: int, cols: int, body) -> None:
        """``body(i, j)`` for i < rows, j < cols (j innermost)."""
        if rows * cols == 0:
            return
        self.ctx.for_range(rows, lambda i, _: self.ctx.for_range(cols, lambda j, __: body(i, j) or []) or [])

    def load(self, ptr: str, dtype, off) -> Value:
        return self.b.load(self.b.gep(ptr, dtype, off), dtype)

    def store(self, ptr: str, dtype, off, v: Value) -> None:
        self.b.store(self.b.gep(ptr, dtype, off), self.convert(v, dtype))

    def convert(self, v: Value, dtype) -> Value:
        dtype = np.dtype(dtype)
        if v.dtype == dtype:
            return v
        if dtype.kind == "c":
            return to_complex(self.b, v, dtype)
        return self.b.cast("fpext" if dtype == F64 else "fptrunc", v, dtype)

    def fill(self, ptr: str, dtype, off, count: int, value) -> None:
        c = const(dtype, value)
        if count:
            self.ctx.for_range(count, lambda i, _: self.store(ptr, dtype, self.b.iadd(off, i), c) or [])

    def to_fortran(self, src: str, dtype, off, m: int, n: int, dst: str) -> None:
        """dst (work dtype, column-major, ld m) = src[off:] (row-major m x n)."""
        b = self.b
        self.loop2(m, n, lambda i, j: self.store(
            dst, self.wdt, b.iadd(i, b.imul(j, m)), self.load(src, dtype, b.iadd(off, b.iadd(b.imul(i, n), j)))))

    def from_fortran(self, src: str, ld: int, rows: int, cols: int, dst: str, dtype, off, keep=None) -> None:
        """dst[off:] (row-major rows x cols) = src (work dtype, column-major, ld); entries
        where ``keep(i, j)`` (an i1) is false become 0."""
        b = self.b
        zero = const(self.wdt, 0.0)

        def body(i, j):
            v = self.load(src, self.wdt, b.iadd(i, b.imul(j, ld)))
            if keep is not None:
                v = b.select(Value(keep(i, j), BOOL), v, zero)
            self.store(dst, dtype, b.iadd(off, b.iadd(b.imul(i, cols), j)), v)

        self.loop2(rows, cols, body)


def input_ptr(ctx, x) -> str:
    """A row-major buffer holding operand ``x`` (fused operands are materialised)."""
    if x.is_buffer:
        return x.ptr
    tmp = ctx.temp_buffer(x.aval)
    ctx.write(tmp, x)
    return tmp.ptr


def matrix_batch(shape, core: int) -> int:
    return int(np.prod(shape[:-core], dtype=np.int64)) if len(shape) > core else 1


def check_float(x, complex_ok: bool = True):
    """The dtype LAPACK computes in (NumPy's: float64 / complex128 for every input) and
    the routine prefix, 'd' or 'z'."""
    if x.dtype not in ((F32, F64, C64, C128) if complex_ok else (F32, F64)):
        raise LoweringError(f"linear algebra: unsupported dtype {x.dtype}")
    return (C128, "z") if x.dtype.kind == "c" else (F64, "d")


# --- cholesky ------------------------------------------------------------------------------------
@lower_materialized(la.cholesky_p, complex_ok=True)
def _cholesky_lower(ctx, x):
    wdt, pre = check_float(x)
    out = ctx.outs[0]
    n = x.shape[-1]
    nb = matrix_batch(x.shape, 2)
    if nb * n == 0:
        return
    sym, _, ity = lapack_symbol(pre + "potrf")
    e = Emitter(ctx, ity, wdt)
    src = input_ptr(ctx, x)
    fa, info = e.buffer(n * n, wdt), e.ints(1)
    ctx.work += nb * n ** 3 // 3
    b = ctx.b

    def one(bi, _):
        off = b.imul(bi, n * n)
        e.to_fortran(src, x.dtype, off, n, n, fa)
        e.call(sym, [("ptr", e.char_const("L")), ("ptr", e.int_const(n)), ("ptr", fa),
                     ("ptr", e.int_const(max(n, 1))), ("ptr", info), ("i64", 1)])
        e.from_fortran(fa, n, n, n, out.ptr, x.dtype, off, keep=lambda i, j: b.icmp("sge", i, j))
        ctx.if_then(e.info_failed(info), lambda: e.fill(out.ptr, x.dtype, off, n * n, np.nan))
        return []

    ctx.for_range(nb, one)


# --- triangular_solve ------------------------------------------------------------------------------
@lower_materialized(la.triangular_solve_p, complex_ok=True)
def _triangular_solve_lower(ctx, a, rhs, *, lower, transpose_a, unit_diagonal):
    wdt, pre = check_float(a)
    out = ctx.outs[0]
    n, k = rhs.shape[-2], rhs.shape[-1]
    nb = matrix_batch(rhs.shape, 2)
    if nb * n * k == 0:
        return
    single = k == 1
    sym, _, ity = lapack_symbol(pre + ("trsv" if single else "trsm"), cblas=True)
    e = Emitter(ctx, ity, wdt)
    pa, pb = input_ptr(ctx, a), input_ptr(ctx, rhs)
    fa, fb = e.buffer(n * n, wdt), e.buffer(n * k, wdt)
    ctx.work += nb * n * n * k
    b = ctx.b
    # The impl solves op(A) X = B with op(A) the chosen triangle (unit diagonal if asked),
    # transposed if asked; a lower op(A) is turned upper by reversing rows and columns.
    is_lower = lower != transpose_a
    one_c = const(wdt, 1.0)

    def a_index(i, j):
        """Row-major offset within one matrix of A of U'[i, j] (i <= j)."""
        if is_lower:  # U'[i, j] = M[n-1-i, n-1-j]
            i, j = b.isub(n - 1, i), b.isub(n - 1, j)
        r, c = (j, i) if transpose_a else (i, j)
        return b.iadd(b.imul(r, n), c)

    def row(i):
        return b.isub(n - 1, i) if is_lower else i

    def one(bi, _):
        aoff, boff = b.imul(bi, n * n), b.imul(bi, n * k)

        def copy_a(i, j):  # column-major upper U' (the strict lower part is never read)
            def upper():
                if unit_diagonal:
                    v = b.select(Value(b.icmp("eq", i, j), BOOL), one_c,
                                 e.convert(e.load(pa, a.dtype, b.iadd(aoff, a_index(i, j))), wdt))
                else:
                    v = e.load(pa, a.dtype, b.iadd(aoff, a_index(i, j)))
                e.store(fa, wdt, b.iadd(i, b.imul(j, n)), v)

            ctx.if_then(b.icmp("sle", i, j), upper)

        e.loop2(n, n, copy_a)
        e.loop2(n, k, lambda i, j: e.store(fb, wdt, b.iadd(i, b.imul(j, n)),
                                           e.load(pb, rhs.dtype, b.iadd(boff, b.iadd(b.imul(row(i), k), j)))))
        ity_ = e.ity
        # (ztrsm takes alpha by pointer: dot.py's module constant 1 + 0i)
        alpha = ("ptr", dot.gemm_scalars(ctx, C128)[2]) if pre == "z" else ("double", const(F64, 1.0).ref)
        if single:
            e.call(sym, [("i32", _COL_MAJOR), ("i32", _UPPER), ("i32", _NO_TRANS), ("i32", _NON_UNIT),
                         (ity_, n), ("ptr", fa), (ity_, max(n, 1)), ("ptr", fb), (ity_, 1)])
        else:
            e.call(sym, [("i32", _COL_MAJOR), ("i32", _LEFT), ("i32", _UPPER), ("i32", _NO_TRANS),
                         ("i32", _NON_UNIT), (ity_, n), (ity_, k), alpha,
                         ("ptr", fa), (ity_, max(n, 1)), ("ptr", fb), (ity_, max(n, 1))])
        e.loop2(n, k, lambda i, j: e.store(out.ptr, rhs.dtype, b.iadd(boff, b.iadd(b.imul(row(i), k), j)),
                                           e.load(fb, wdt, b.iadd(i, b.imul(j, n)))))
        if not unit_diagonal:  # NumPy: "Singular matrix" when a diagonal entry is 0
            zero = const(F64, 0.0)

            def scan(i, carried):
                d = e.load(fa, wdt, b.iadd(i, b.imul(i, n)))
                if pre == "z":  # 0 + 0i: both parts zero
                    re, im = b.parts(d)
                    z = b.op("and", b.cmp("fcmp", "oeq", re, zero), b.cmp("fcmp", "oeq", im, zero))
                else:
                    z = b.cmp("fcmp", "oeq", d, zero)
                return [b.op("or", carried[0], z)]

            (bad,) = ctx.for_range(n, scan, carry=[const(BOOL, False)])
            ctx.if_then(bad.ref, lambda: e.fill(out.ptr, rhs.dtype, boff, n * k, np.nan))
        return []

    ctx.for_range(nb, one)


# --- lu (native loop, op for op the impl) ------------------------------------------------------------
@lower_materialized(la.lu_p, complex_ok=True)
def _lu_lower(ctx, x):
    check_float(x)
    lu_out, piv_out, perm_out = ctx.outs
    n = x.shape[-1]
    nb = matrix_batch(x.shape, 2)
    if nb * n == 0:
        return
    dt = x.dtype
    cplx = dt.kind == "c"  # (complex: NumPy's abs, Smith division, multiply: complex_math's)
    rdt = np.dtype(dt).type(0).real.dtype
    ty = "double" if rdt == F64 else "float"
    fabs = f"llvm.fabs.{'f64' if rdt == F64 else 'f32'}"
    ctx.b.module.declare(fabs, f"declare {ty} @{fabs}({ty})")
    ctx.write(lu_out, x, flat=True)
    ctx.work += nb * n ** 3
    b, p = ctx.b, lu_out.ptr
    zero = const(dt, 0.0)

    def at(base, i, j):
        return b.iadd(base, b.iadd(b.imul(i, n), j))

    def absval(v):
        if cplx:
            return COMPLEX_EMITTERS[ew.abs_p](b, v)
        return Value(b.emit(f"call {ty} @{fabs}({ty} {v.ref})"), dt)

    def one(bi, _):
        base, vbase = b.imul(bi, n * n), b.imul(bi, n)
        ctx.for_range(n, lambda i, _: b.store(b.gep(perm_out.ptr, I32, b.iadd(vbase, i)),
                                               Value(b.emit(f"trunc i64 {i} to i32"), I32)) or [])

        def step(k, _):
            # pivot: the first entry of largest magnitude in column k at or below row k
            # (NaN counts as largest, like np.argmax)
            best0 = absval(b.load(b.gep(p, dt, at(base, k, k)), dt))

            def search(i, carried):
                bv, bidx = carried
                v = absval(b.load(b.gep(p, dt, at(base, i, k)), dt))
                gt = b.cmp("fcmp", "ogt", v, bv)
                vnan = b.cmp("fcmp", "uno", v, v)
                bnum = b.cmp("fcmp", "ord", bv, bv)
                take = b.op("or", gt, b.op("and", vnan, bnum))
                return [b.select(take, v, bv), b.select(take, Value(i, I64), bidx)]

            _, piv = ctx.for_range(n, search, carry=[best0, Value(k, I64)], start=b.iadd(k, 1))
            b.store(b.gep(piv_out.ptr, I32, b.iadd(vbase, k)), Value(b.emit(f"trunc i64 {piv.ref} to i32"), I32))

            def swap_rows():
                def sw(j, _):
                    pk, pp = b.gep(p, dt, at(base, k, j)), b.gep(p, dt, at(base, piv.ref, j))
                    vk, vp = b.load(pk, dt), b.load(pp, dt)
                    b.store(pk, vp)
                    b.store(pp, vk)
                    return []

                ctx.for_range(n, sw)
                qk, qp = b.gep(perm_out.ptr, I32, b.iadd(vbase, k)), b.gep(perm_out.ptr, I32, b.iadd(vbase, piv.ref))
                ik, ip = b.load(qk, I32), b.load(qp, I32)
                b.store(qk, ip)
                b.store(qp, ik)

            ctx.if_then(b.icmp("ne", piv.ref, k), swap_rows)
            pivot = b.load(b.gep(p, dt, at(base, k, k)), dt)
            # piv != 0 (true for NaN, as in NumPy)
            nonzero = cne(b, pivot, zero) if cplx else b.cmp("fcmp", "une", pivot, zero)

            def scale(i, _):
                q = b.gep(p, dt, at(base, i, k))
                v = b.load(q, dt)
                quot = COMPLEX_EMITTERS[ew.div_p](b, v, pivot) if cplx else b.op("fdiv", v, pivot)
                b.store(q, b.select(nonzero, quot, v))
                return []

            ctx.for_range(n, scale, start=b.iadd(k, 1))

            def update(i, _):
                lik = b.load(b.gep(p, dt, at(base, i, k)), dt)

                def inner(j, __):
                    q = b.gep(p, dt, at(base, i, j))
                    ukj = b.load(b.gep(p, dt, at(base, k, j)), dt)
                    if cplx:
                        b.store(q, csub(b, b.load(q, dt), cmul(b, lik, ukj)))
                    else:
                        b.store(q, b.op("fsub", b.load(q, dt), b.op("fmul", lik, ukj)))
                    return []

                ctx.for_range(n, inner, start=b.iadd(k, 1))
                return []

            ctx.for_range(n, update, start=b.iadd(k, 1))
            return []

        ctx.for_range(n, step)
        return []

    ctx.for_range(nb, one)


# --- eigh ----------------------------------------------------------------------------------------------
@lower_materialized(la.eigh_p, complex_ok=True)
def _eigh_lower(ctx, x, *, lower=True):
    wdt, pre = check_float(x)
    w_out, v_out = ctx.outs
    n = x.shape[-1]
    nb = matrix_batch(x.shape, 2)
    if nb * n == 0:
        return
    # (complex: zheevd, with a real workspace rwork after work)
    routine = "zheevd" if pre == "z" else "dsyevd"
    sym, _, ity = lapack_symbol(routine)
    uplo = "L" if lower else "U"
    e = Emitter(ctx, ity, wdt)

    def q(ci, work, iwork, info, rwork):
        a, w = np.zeros(n * n, wdt), np.zeros(n)
        ptr = [work.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, -1)]
        if pre == "z":
            ptr += [rwork.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, -1)]
        return [chr_arg("V"), chr_arg(uplo), ref_arg(ci, n), a.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, max(n, 1)),
                w.ctypes.data_as(ctypes.c_void_p), *ptr,
                iwork.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, -1), ctypes.byref(info), LEN1, LEN1]

    q.key = (n, uplo, pre)
    lwork, liwork, lrwork = lapack_query(routine, q, 3)
    src = input_ptr(ctx, x)
    fa, fw, work, iwork, info = (e.buffer(n * n, wdt), e.buffer(n, F64), e.buffer(lwork, wdt),
                                 e.ints(liwork), e.ints(1))
    rwork = [("ptr", e.buffer(lrwork, F64)), ("ptr", e.int_const(lrwork))] if pre == "z" else []
    wdtype = np.dtype(x.dtype).type(0).real.dtype  # (the eigenvalues are real)
    ctx.work += nb * 9 * n ** 3
    b = ctx.b

    def one(bi, _):
        off, woff = b.imul(bi, n * n), b.imul(bi, n)
        e.to_fortran(src, x.dtype, off, n, n, fa)
        e.call(sym, [("ptr", e.char_const("V")), ("ptr", e.char_const(uplo)), ("ptr", e.int_const(n)),
                     ("ptr", fa), ("ptr", e.int_const(max(n, 1))), ("ptr", fw), ("ptr", work),
                     ("ptr", e.int_const(lwork)), *rwork, ("ptr", iwork), ("ptr", e.int_const(liwork)),
                     ("ptr", info), ("i64", 1), ("i64", 1)])
        ctx.for_range(n, lambda i, _: e.store(w_out.ptr, wdtype, b.iadd(woff, i), e.load(fw, F64, i)) or [])
        e.from_fortran(fa, n, n, n, v_out.ptr, x.dtype, off)

        def failed():
            e.fill(w_out.ptr, wdtype, woff, n, np.nan)
            e.fill(v_out.ptr, x.dtype, off, n * n, np.nan)

        ctx.if_then(e.info_failed(info), failed)
        return []

    ctx.for_range(nb, one)


# --- qr ------------------------------------------------------------------------------------------------
@lower_materialized(la.qr_p, complex_ok=True)
def _qr_lower(ctx, x):
    wdt, pre = check_float(x)
    q_out, r_out = ctx.outs
    m, n = x.shape[-2:]
    k = min(m, n)
    nb = matrix_batch(x.shape, 2)
    if nb * m * n == 0:  # Q (m, 0) or R (0, n): nothing to write
        return
    geqrf, _, ity = lapack_symbol(pre + "geqrf")
    orgqr, _, _ = lapack_symbol("zungqr" if pre == "z" else "dorgqr")
    e = Emitter(ctx, ity, wdt)
    lda = max(1, m)

    def q1(ci, work, iwork, info, rwork):
        a, tau = np.zeros(m * n, wdt), np.zeros(max(k, 1), wdt)
        return [ref_arg(ci, m), ref_arg(ci, n), a.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, lda),
                tau.ctypes.data_as(ctypes.c_void_p), work.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, -1),
                ctypes.byref(info)]

    def q2(ci, work, iwork, info, rwork):
        a, tau = np.zeros(m * max(n, k), wdt), np.zeros(max(k, 1), wdt)
        return [ref_arg(ci, m), ref_arg(ci, k), ref_arg(ci, k), a.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, lda),
                tau.ctypes.data_as(ctypes.c_void_p), work.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, -1),
                ctypes.byref(info)]

    q1.key = q2.key = (m, n, pre)
    lwork1 = max(1, n, lapack_query(pre + "geqrf", q1)[0])  # as NumPy sizes them
    lwork2 = max(1, n, lapack_query("zungqr" if pre == "z" else "dorgqr", q2)[0])
    src = input_ptr(ctx, x)
    fa, tau = e.buffer(m * n, wdt), e.buffer(k, wdt)
    work, info = e.buffer(max(lwork1, lwork2), wdt), e.ints(1)
    ctx.work += nb * 4 * m * n * k
    b = ctx.b

    def one(bi, _):
        off, qoff, roff = b.imul(bi, m * n), b.imul(bi, m * k), b.imul(bi, k * n)
        e.to_fortran(src, x.dtype, off, m, n, fa)
        e.call(geqrf, [("ptr", e.int_const(m)), ("ptr", e.int_const(n)), ("ptr", fa), ("ptr", e.int_const(lda)),
                       ("ptr", tau), ("ptr", work), ("ptr", e.int_const(lwork1)), ("ptr", info)])
        e.from_fortran(fa, lda, k, n, r_out.ptr, x.dtype, roff, keep=lambda i, j: b.icmp("sle", i, j))
        e.call(orgqr, [("ptr", e.int_const(m)), ("ptr", e.int_const(k)), ("ptr", e.int_const(k)), ("ptr", fa),
                       ("ptr", e.int_const(lda)), ("ptr", tau), ("ptr", work), ("ptr", e.int_const(lwork2)),
                       ("ptr", info)])
        e.from_fortran(fa, lda, m, k, q_out.ptr, x.dtype, qoff)
        return []

    ctx.for_range(nb, one)


# --- svd ------------------------------------------------------------------------------------------------
@lower_materialized(la.svd_p, complex_ok=True)
def _svd_lower(ctx, x, *, full_matrices=False, compute_uv=True):
    wdt, pre = check_float(x)
    m, n = x.shape[-2:]
    k = min(m, n)
    nb = matrix_batch(x.shape, 2)
    if compute_uv:
        u_out, s_out, vt_out = ctx.outs
    else:
        (s_out,) = ctx.outs
    if nb == 0:
        return
    if k == 0:  # NumPy returns identities for the non-empty U / Vt of jobz='A'
        if compute_uv and full_matrices:
            b = ctx.b
            for out, d in ((u_out, m), (vt_out, n)):
                if d:
                    ctx.loop_nest(out.shape, lambda idx, out=out: out.store(
                        idx, b.select(Value(b.icmp("eq", idx.comps[-1], idx.comps[-2]), BOOL),
                                      const(x.dtype, 1.0), const(x.dtype, 0.0))))
        return
    jobz = "N" if not compute_uv else ("A" if full_matrices else "S")
    ucols, vtrows = {"N": (0, 0), "A": (m, n), "S": (k, k)}[jobz]
    ldu, ldvt = max(m, 1), max(1, vtrows)
    sym, _, ity = lapack_symbol(pre + "gesdd")
    e = Emitter(ctx, ity, wdt)
    # (complex: zgesdd takes a real workspace rwork after work, sized as NumPy sizes it)
    lrwork = (7 * k if jobz == "N" else max(5 * k * k + 5 * k, 2 * max(m, n) * k + 2 * k * k + k)) if pre == "z" else 0
    rw = np.zeros(max(lrwork, 1))

    def q(ci, work, iwork, info, rwork):
        a, s = np.zeros(m * n, wdt), np.zeros(k)
        u, vt = np.zeros(max(1, m * ucols), wdt), np.zeros(max(1, n * vtrows), wdt)
        iw = np.zeros(8 * k, np.int64)
        real_work = [rw.ctypes.data_as(ctypes.c_void_p)] if pre == "z" else []
        return [chr_arg(jobz), ref_arg(ci, m), ref_arg(ci, n), a.ctypes.data_as(ctypes.c_void_p),
                ref_arg(ci, max(m, 1)), s.ctypes.data_as(ctypes.c_void_p), u.ctypes.data_as(ctypes.c_void_p),
                ref_arg(ci, ldu),
                vt.ctypes.data_as(ctypes.c_void_p), ref_arg(ci, ldvt), work.ctypes.data_as(ctypes.c_void_p),
                ref_arg(ci, -1), *real_work, iw.ctypes.data_as(ctypes.c_void_p), ctypes.byref(info), LEN1]

    q.key = (m, n, jobz, pre)
    lwork = lapack_query(pre + "gesdd", q)[0] or 1
    src = input_ptr(ctx, x)
    fa, fs = e.buffer(m * n, wdt), e.buffer(k, F64)
    fu, fvt = e.buffer(m * ucols, wdt), e.buffer(n * vtrows, wdt)
    work, iwork, info = e.buffer(lwork, wdt), e.ints(8 * k), e.ints(1)
    rwork = [("ptr", e.buffer(lrwork, F64))] if pre == "z" else []
    sdtype = np.dtype(x.dtype).type(0).real.dtype  # (singular values are real)
    ctx.work += nb * 12 * m * n * k
    b = ctx.b

    def one(bi, _):
        off, soff = b.imul(bi, m * n), b.imul(bi, k)
        uoff, vtoff = b.imul(bi, m * ucols), b.imul(bi, vtrows * n)
        e.to_fortran(src, x.dtype, off, m, n, fa)
        e.call(sym, [("ptr", e.char_const(jobz)), ("ptr", e.int_const(m)), ("ptr", e.int_const(n)), ("ptr", fa),
                     ("ptr", e.int_const(max(m, 1))), ("ptr", fs), ("ptr", fu), ("ptr", e.int_const(ldu)),
                     ("ptr", fvt), ("ptr", e.int_const(ldvt)), ("ptr", work), ("ptr", e.int_const(lwork)),
                     *rwork, ("ptr", iwork), ("ptr", info), ("i64", 1)])
        ctx.for_range(k, lambda i, _: e.store(s_out.ptr, sdtype, b.iadd(soff, i), e.load(fs, F64, i)) or [])
        if compute_uv:
            e.from_fortran(fu, ldu, m, ucols, u_out.ptr, x.dtype, uoff)
            e.from_fortran(fvt, ldvt, vtrows, n, vt_out.ptr, x.dtype, vtoff)

        def failed():
            e.fill(s_out.ptr, sdtype, soff, k, np.nan)
            if compute_uv:
                e.fill(u_out.ptr, x.dtype, uoff, m * ucols, np.nan)
                e.fill(vt_out.ptr, x.dtype, vtoff, vtrows * n, np.nan)

        ctx.if_then(e.info_failed(info), failed)
        return []

    ctx.for_range(nb, one)
