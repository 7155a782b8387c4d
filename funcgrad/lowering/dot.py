"""dot_general (``core/prims/dot.py``): a call into NumPy's own OpenBLAS, or a loop.

Float products become ``cblas_{d,s}gemm`` calls (complex: ``cblas_{z,c}gemm``, alpha and
beta passed by pointer) on the OpenBLAS copy NumPy has already loaded (no new
dependency). Each operand must look like a row-major
``[batch, rows, cols]`` matrix; an operand whose dims are ``[batch, cols, rows]`` is
passed with the BLAS transpose flag instead, and any other layout (or a fused,
not-yet-computed operand) is packed into scratch memory by one fused loop. Batch
dims become a loop of gemm calls.

Integer products, small products and processes without a usable BLAS symbol use a
generated kernel: for one contraction dim read along both operands' last dims
(matrix-vector products) a register accumulator per output element, whose float sum
may be reassociated (so it is vectorised); otherwise a loop in i-k-j order (the
innermost loop runs along contiguous output rows). Fused operands read more than once
are packed first.
Set ``FUNCGRAD_NO_BLAS=1`` (or ``dot.USE_BLAS = False``) to force the loop kernel.

Threads: OpenBLAS splits a product over all cores by default. Inside a funcgrad call
that is a loss: on a busy machine one BLAS thread is descheduled and the others spin
waiting for it (a 128x784x256 product: median 0.4 ms, p90 32 ms with two threads on
a two-core machine with one core busy; 0.67 / 0.75 ms with one). So a product smaller
than ``BLAS_THREADS_MIN_FLOPS`` runs single-threaded: the code sets the library's
thread count to 1 around its gemm calls and puts back what it found (no environment
variable needed; NumPy's own calls keep their threads). Larger products use the
count the library is configured with.
"""
from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

from funcgrad import config
from funcgrad.core.prims import dot as dt
from funcgrad.lowering import engine
from funcgrad.lowering.builder import F64, const
from funcgrad.lowering.complex_math import cadd, cmul
from funcgrad.lowering.context import Operand, lower_materialized
from funcgrad.lowering.structural import merged_dims

USE_BLAS = not config.flag(config.NO_BLAS)  # read once; tests flip the attribute
SMALL_FLOPS = 512  # m*n*k at or below this: the loop kernel beats the call overhead
# Products along the operands' last dims (matrix-vector, ``x @ y.T``) up to this m*n*k
# run the register-accumulator kernel: as fast as a gemm call at 64x64 and 128x128
# matrix-vector (one step of a small recurrent network), and no BLAS threads involved.
DOT_KERNEL_FLOPS = 16384
BLAS_THREADS_MIN_FLOPS = 1 << 28  # 2*m*n*k below this: one BLAS thread (see above)

# (double symbol, single symbol, integer type); tried in order on each library.
_CANDIDATES = [
    ("scipy_cblas_dgemm64_", "scipy_cblas_sgemm64_", "i64"),
    ("cblas_dgemm64_", "cblas_sgemm64_", "i64"),
    ("scipy_cblas_dgemm", "scipy_cblas_sgemm", "i32"),
    ("cblas_dgemm", "cblas_sgemm", "i32"),
]
# The library's thread count getter and setter: (get, set), tried in order.
_THREAD_CANDIDATES = [
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
]
_blas: dict = {}


def _library_paths():
    paths = []
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    paths += sorted(glob.glob(os.path.join(libs, "*openblas*")))
    try:  # whatever BLAS the process has loaded (conda / system NumPy)
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if "blas" in os.path.basename(p).lower() and p.startswith("/") and p not in paths:
                    paths.append(p)
    except OSError:
        pass
    return paths


@engine.provider("blas")
def find_blas():
    """{'int': 'i64'|'i32'} with symbols ``fg_blas_dgemm``/``fg_blas_sgemm`` bound, or None."""
    if "result" in _blas:
        return _blas["result"]
    result = None
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for dname, sname, ity in _CANDIDATES:
            try:
                d, s = getattr(lib, dname), getattr(lib, sname)
            except AttributeError:
                continue
            engine.add_symbol("fg_blas_dgemm", ctypes.cast(d, ctypes.c_void_p).value)
            engine.add_symbol("fg_blas_sgemm", ctypes.cast(s, ctypes.c_void_p).value)
            result = {"int": ity, "library": path, "symbol": dname, "threads": _bind_thread_control(lib),
                      "complex": _bind_complex_gemm(lib, dname)}
            break
        if result:
            break
    _blas["result"] = result
    return result


def _bind_complex_gemm(lib, dname: str) -> bool:
    """Bind ``fg_blas_zgemm``/``fg_blas_cgemm`` (named as the double routine, ``d`` -> ``z``/
    ``c``); False if the library lacks them (complex products then use the loop)."""
    try:
        z, c = getattr(lib, dname.replace("dgemm", "zgemm")), getattr(lib, dname.replace("dgemm", "cgemm"))
    except AttributeError:
        return False
    engine.add_symbol("fg_blas_zgemm", ctypes.cast(z, ctypes.c_void_p).value)
    engine.add_symbol("fg_blas_cgemm", ctypes.cast(c, ctypes.c_void_p).value)
    return True


def _bind_thread_control(lib) -> bool:
    """Bind ``fg_blas_get_threads``/``fg_blas_set_threads`` to ``lib``'s (False if absent)."""
    for gname, sname in _THREAD_CANDIDATES:
        try:
            g, s = getattr(lib, gname), getattr(lib, sname)
        except AttributeError:
            continue
        engine.add_symbol("fg_blas_get_threads", ctypes.cast(g, ctypes.c_void_p).value)
        engine.add_symbol("fg_blas_set_threads", ctypes.cast(s, ctypes.c_void_p).value)
        return True
    return False


def single_threaded(ctx, emit_calls) -> None:
    """Run ``emit_calls()`` (code making BLAS calls) with the library's thread count at 1,
    restoring the count it had (the test and the restore are skipped when it was 1)."""
    b = ctx.b
    b.module.declare("fg_blas_get_threads", "declare i32 @fg_blas_get_threads() nounwind")
    b.module.declare("fg_blas_set_threads", "declare void @fg_blas_set_threads(i32) nounwind")
    prev = b.emit("call i32 @fg_blas_get_threads()")
    many = b.emit(f"icmp sgt i32 {prev}, 1")
    ctx.if_then(many, lambda: b.stmt("call void @fg_blas_set_threads(i32 1)"))
    emit_calls()
    ctx.if_then(many, lambda: b.stmt(f"call void @fg_blas_set_threads(i32 {prev})"))


def _free(ndim, contract, batch):
    return tuple(d for d in range(ndim) if d not in contract and d not in batch)


def _prod(xs) -> int:
    return int(np.prod(list(xs), dtype=np.int64))


class _Permuted(Operand):
    """``x`` with its dims reordered to ``perm`` (a transpose view, for packing)."""

    def __init__(self, ctx, x, perm):
        from funcgrad.core.avals import ShapedArray

        super().__init__(ShapedArray([x.shape[p] for p in perm], x.dtype))
        self.ctx, self.x, self.perm = ctx, x, perm

    def at(self, idx):
        comps = [0] * len(self.perm)
        for d, p in enumerate(self.perm):
            comps[p] = idx.comps[d]
        return self.x.at(self.ctx.idx(self.x.shape, comps=comps))


def _gemm_operand(ctx, x, batch, rows, cols):
    """(pointer, transposed?, leading dim) of ``x`` seen as [batch, rows, cols]."""
    nrows, ncols = _prod(x.shape[d] for d in rows), _prod(x.shape[d] for d in cols)
    order = list(range(len(x.shape)))
    if x.is_buffer:
        if list(batch) + list(rows) + list(cols) == order:
            return x.ptr, False, max(ncols, 1)
        if list(batch) + list(cols) + list(rows) == order:
            return x.ptr, True, max(nrows, 1)
    if list(batch) + list(cols) + list(rows) == order:  # packed as it is, read transposed
        tmp = ctx.temp_buffer(x.aval)
        ctx.write(tmp, x)
        return tmp.ptr, True, max(nrows, 1)
    perm = tuple(batch) + tuple(rows) + tuple(cols)
    x, perm = merged_dims(ctx, x, perm)  # (dims moving together: one loop, not one per dim)
    view = _Permuted(ctx, x, perm)
    tmp = ctx.temp_buffer(view.aval)
    ctx.write(tmp, view)
    return tmp.ptr, False, max(ncols, 1)


def _scalar_ops(dtype, float_flags: str = ""):
    """(mul, add) emitters ``f(b, x, y)`` for the element type: integer, float (with
    ``float_flags``, e.g. reassociation for a vectorised sum), or complex (NumPy's
    formulas, ``complex_math``: no reassociation)."""
    if dtype.kind == "c":
        return cmul, cadd
    fl = dtype.kind == "f"
    flags = float_flags if fl else ""
    mul, add = ("fmul", "fadd") if fl else ("mul", "add")
    return (lambda b, u, v: b.op(mul, u, v, flags=flags)), (lambda b, u, v: b.op(add, u, v, flags=flags))


def _loop_kernel(ctx, out, x, y, lc, rc, lb, rb):
    """out[b, i, j] += x[b, i, k] * y[b, k, j] over i-k-j (contiguous innermost j)."""
    b = ctx.b
    lf, rf = _free(len(x.shape), lc, lb), _free(len(y.shape), rc, rb)
    zero = const(out.dtype, 0)
    ctx.loop_nest(out.shape, lambda idx: out.store(idx, zero), flat=True)
    shape = [x.shape[d] for d in lb + lf + lc] + [y.shape[d] for d in rf]
    nb, nf, nc = len(lb), len(lf), len(lc)
    mul, add = _scalar_ops(x.dtype)

    def body(idx):
        c = idx.comps
        cb, ci, ck, cj = c[:nb], c[nb:nb + nf], c[nb + nf:nb + nf + nc], c[nb + nf + nc:]
        xc, yc = [0] * len(x.shape), [0] * len(y.shape)
        for dims, vals, target in ((lb, cb, xc), (lf, ci, xc), (lc, ck, xc), (rb, cb, yc), (rc, ck, yc), (rf, cj, yc)):
            for d, v in zip(dims, vals):
                target[d] = v
        prod = mul(b, x.at(ctx.idx(x.shape, comps=xc)), y.at(ctx.idx(y.shape, comps=yc)))
        o = ctx.idx(out.shape, comps=cb + ci + cj)
        out.store(o, add(b, out.at(o), prod))

    ctx.loop_nest(shape, body)


def _dot_kernel(ctx, out, x, y, lc, rc, lb, rb):
    """out[b, i, j] = sum_k x[b, i, k] * y[b, k, j] for one contraction dim ``k`` read
    along both operands' last dims (matrix-vector products, ``x @ y.T``): per output
    element, a register accumulator over ``k``. Its float adds may be reassociated, so
    LLVM vectorises the sum (several partial sums, as BLAS does: same tolerance)."""
    b = ctx.b
    lf, rf = _free(len(x.shape), lc, lb), _free(len(y.shape), rc, rb)
    nb, nf = len(lb), len(lf)
    mul, add = _scalar_ops(x.dtype, "reassoc contract")
    (kx,), (ky,) = lc, rc

    def body(idx):
        c = idx.comps
        xc, yc = [0] * len(x.shape), [0] * len(y.shape)
        for dims, vals, target in ((lb, c[:nb], xc), (lf, c[nb:nb + nf], xc), (rb, c[:nb], yc), (rf, c[nb + nf:], yc)):
            for d, v in zip(dims, vals):
                target[d] = v

        def step(k, acc):
            xc[kx], yc[ky] = k, k
            xv, yv = x.at(ctx.idx(x.shape, comps=list(xc))), y.at(ctx.idx(y.shape, comps=list(yc)))
            return [add(b, acc[0], mul(b, xv, yv))]

        (total,) = ctx.for_range(x.shape[kx], step, carry=[const(out.dtype, 0)])
        out.store(idx, total)

    ctx.loop_nest(out.shape, body)


def _packed(ctx, x, reads: int):
    """``x`` itself if it is in memory or read once per element, else a packed copy (a
    fused operand would be recomputed on every read)."""
    if x.is_buffer or reads <= 1:
        return x
    tmp = ctx.temp_buffer(x.aval)
    ctx.write(tmp, x)
    return tmp


def _dot_kernel_fits(x, y, lc, rc, n) -> bool:
    return len(lc) == 1 and (n == 1 or (lc[0] == len(x.shape) - 1 and rc[0] == len(y.shape) - 1))


def small_product(ctx, out, x, y, lc, rc, lb, rb, m, n):
    """A product small enough that a generated loop beats a BLAS call (or with no BLAS)."""
    x, y = _packed(ctx, x, n), _packed(ctx, y, m)
    if _dot_kernel_fits(x, y, lc, rc, n):
        _dot_kernel(ctx, out, x, y, lc, rc, lb, rb)
    else:
        _loop_kernel(ctx, out, x, y, lc, rc, lb, rb)


def gemm_scalars(ctx, dtype):
    """(symbol, alpha/beta IR type, alpha = 1, beta = 0) of the gemm for ``dtype``. The
    complex routines take alpha and beta by pointer: module constants ``{1, 0}`` and
    ``{0, 0}`` (no process address in the IR text)."""
    wide = dtype == np.dtype(np.complex128)
    if dtype.kind == "f":
        fty = "double" if dtype == F64 else "float"
        return ("fg_blas_dgemm" if dtype == F64 else "fg_blas_sgemm"), fty, const(dtype, 1.0).ref, const(dtype, 0.0).ref
    part = "double" if wide else "float"
    tag = "z" if wide else "c"
    for val, nm in ((1, "one"), (0, "zero")):
        ctx.b.module.declare(f"fg_gemm_{tag}{nm}", f"@fg_gemm_{tag}{nm} = private unnamed_addr constant "
                             f"[2 x {part}] [{part} {val}.0, {part} 0.0], align 16")
    return f"fg_blas_{tag}gemm", "ptr", f"@fg_gemm_{tag}one", f"@fg_gemm_{tag}zero"


def _gemm_blas(x, y, lc, rc, lb, rb):
    """The BLAS binding a product of ``x`` and ``y`` (avals or operands) is lowered to,
    or None when it runs a generated kernel (or is empty)."""
    lf, rf = _free(len(x.shape), lc, lb), _free(len(y.shape), rc, rb)
    nbatch = _prod(x.shape[d] for d in lb)
    m, k, n = _prod(x.shape[d] for d in lf), _prod(x.shape[d] for d in lc), _prod(y.shape[d] for d in rf)
    if nbatch * m * n == 0 or k == 0:
        return None
    blas = find_blas() if USE_BLAS and np.dtype(x.dtype).kind in "fc" else None
    if blas is not None and np.dtype(x.dtype).kind == "c" and not blas.get("complex"):
        return None
    small = m * n * k <= SMALL_FLOPS or (m * n * k <= DOT_KERNEL_FLOPS and _dot_kernel_fits(x, y, lc, rc, n))
    return None if small else blas


def gemm_reads_in_place(eqn, pos: int) -> bool:
    """Would input ``pos`` of the dot_general ``eqn``, were it in memory, be read by the
    gemm call where it lies (rows-by-cols, or transposed through the BLAS flag)? Then a
    fused operand there is packed into scratch memory anyway, so the planner
    (``compiler.plan``) gives it a buffer of its own instead: its other readers (a bias
    gradient's sum, a second product) then read that buffer rather than recompute it."""
    x, y = (a.aval for a in eqn.inputs)
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    if _gemm_blas(x, y, lc, rc, lb, rb) is None:
        return False
    a, batch, contract = (x, lb, lc) if pos == 0 else (y, rb, rc)
    free = list(_free(len(a.shape), contract, batch))
    order = list(range(len(a.shape)))
    return list(batch) + free + list(contract) == order or list(batch) + list(contract) + free == order


@lower_materialized(dt.dot_general_p, complex_ok=True)
def _dot_general_lower(ctx, x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    out = ctx.outs[0]
    lf, rf = _free(len(x.shape), lc, lb), _free(len(y.shape), rc, rb)
    nbatch = _prod(x.shape[d] for d in lb)
    m, k, n = _prod(x.shape[d] for d in lf), _prod(x.shape[d] for d in lc), _prod(y.shape[d] for d in rf)
    if nbatch * m * n == 0:
        return
    blas = _gemm_blas(x, y, lc, rc, lb, rb)
    if blas is None:
        small_product(ctx, out, x, y, lc, rc, lb, rb, m, n)
        return
    ctx.work += 2 * nbatch * m * n * k
    a_ptr, ta, lda = _gemm_operand(ctx, x, lb, lf, lc)
    b_ptr, tb, ldb = _gemm_operand(ctx, y, rb, rc, rf)
    ity = blas["int"]
    name, fty, one, zero = gemm_scalars(ctx, x.dtype)
    # cblas_?gemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    sig = f"i32, i32, i32, {ity}, {ity}, {ity}, {fty}, ptr, {ity}, ptr, {ity}, {fty}, ptr, {ity}"
    ctx.b.module.declare(name, f"declare void @{name}({sig})")
    bld = ctx.b

    def call(i, _):
        pa = bld.gep(a_ptr, x.dtype, bld.imul(i, m * k))
        pb = bld.gep(b_ptr, x.dtype, bld.imul(i, k * n))
        pc = bld.gep(out.ptr, x.dtype, bld.imul(i, m * n))
        bld.stmt(
            f"call void @{name}(i32 101, i32 {112 if ta else 111}, i32 {112 if tb else 111}, "
            f"{ity} {m}, {ity} {n}, {ity} {k}, {fty} {one}, ptr {pa}, {ity} {lda}, "
            f"ptr {pb}, {ity} {ldb}, {fty} {zero}, ptr {pc}, {ity} {max(n, 1)})"
        )
        return []

    if blas.get("threads") and 2 * nbatch * m * n * k < BLAS_THREADS_MIN_FLOPS:
        single_threaded(ctx, lambda: ctx.for_range(nbatch, call))
    else:
        ctx.for_range(nbatch, call)
