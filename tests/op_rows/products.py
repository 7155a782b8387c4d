"""Op-table rows for funcgrad.numpy products: dot, matmul, vdot, inner, outer,
tensordot, einsum, kron, cross.

Tolerance: contractions run through ``dot_general``, whose NumPy impl is one BLAS
``matmul`` call; NumPy's own ``dot``/``einsum``/``tensordot`` may pick another kernel
(ddot, gemv, einsum's C loops) that adds in a different order, so float64 rows that
sum more than one product use ``rtol=1e-13`` (``BLAS`` below) and a tiny ``atol`` for
entries that cancel to near zero. Elementwise products (outer, kron, cross) and integer
rows are exact.
"""
import warnings

import numpy as np

import funcgrad.numpy as fnp

from harness import rand, row

BLAS = dict(rtol=1e-13, atol=1e-14)
f32, i32, i64 = np.float32, np.int32, np.int64


def brow(name, f, g, *args, **kw):
    """A row for a contraction: BLAS-order tolerance when all inputs are float64."""
    if all(np.asarray(a).dtype == np.float64 for a in args) and "rtol" not in kw:
        kw = {**BLAS, **kw}
    return row(name, f, g, *args, **kw)


def ein(name, spec, *args, **kw):
    return brow(f"einsum/{name}", lambda *a: fnp.einsum(spec, *a), lambda *a: np.einsum(spec, *a), *args, **kw)


def _np_cross_2d(*a, **kw):
    with warnings.catch_warnings():  # NumPy 2 deprecates 2-vectors; funcgrad keeps them
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.cross(*a, **kw)


ROWS = [
    # dot
    row("dot/0d_0d", fnp.dot, np.dot, rand(), rand()),
    row("dot/0d_2d", fnp.dot, np.dot, rand(), rand(2, 3)),
    row("dot/2d_0d", fnp.dot, np.dot, rand(2, 3), np.float64(1.5)),
    row("dot/python_scalars", lambda: fnp.dot(2, 3), lambda: np.dot(2, 3)),
    # NumPy's products asarray their inputs: a Python float is strong float64 here
    row("dot/python_float_f32", lambda x: fnp.dot(2.0, x), lambda x: np.dot(2.0, x), rand(3, dtype=f32)),
    row("dot/list_f32", lambda x: fnp.dot(x, [1.5, 2.0, 3.0]), lambda x: np.dot(x, [1.5, 2.0, 3.0]), rand(2, 3, dtype=f32)),
    brow("dot/1d_1d", fnp.dot, np.dot, rand(5), rand(5)),
    brow("dot/2d_1d", fnp.dot, np.dot, rand(3, 4), rand(4)),
    brow("dot/1d_2d", fnp.dot, np.dot, rand(3), rand(3, 4)),
    brow("dot/2d_2d", fnp.dot, np.dot, rand(3, 4), rand(4, 2)),
    brow("dot/3d_1d", fnp.dot, np.dot, rand(2, 3, 4), rand(4)),
    brow("dot/3d_3d", fnp.dot, np.dot, rand(2, 3, 4), rand(5, 4, 2)),
    brow("dot/1d_3d", fnp.dot, np.dot, rand(4), rand(2, 4, 3)),
    row("dot/int", fnp.dot, np.dot, rand(3, 4, dtype=i64), rand(4, 2, dtype=i64)),
    row("dot/int32", fnp.dot, np.dot, rand(3, 4, dtype=i32), rand(4, dtype=i32)),
    row("dot/f32", fnp.dot, np.dot, rand(3, 4, dtype=f32), rand(4, 2, dtype=f32)),
    brow("dot/int_float", fnp.dot, np.dot, rand(3, 4, dtype=i64), rand(4, 2)),
    row("dot/bool", fnp.dot, np.dot, rand(3, 4, dtype=np.bool_), rand(4, 2, dtype=np.bool_)),
    row("dot/bool_1d", fnp.dot, np.dot, rand(6, dtype=np.bool_), rand(6, dtype=np.bool_)),
    row("dot/empty_contraction", fnp.dot, np.dot, rand(2, 0), rand(0, 3)),
    row("dot/empty_free", fnp.dot, np.dot, rand(0, 3), rand(3, 2)),
    # matmul
    brow("matmul/2d", fnp.matmul, np.matmul, rand(3, 4), rand(4, 5)),
    brow("matmul/1d_2d", fnp.matmul, np.matmul, rand(4), rand(4, 5)),
    brow("matmul/2d_1d", fnp.matmul, np.matmul, rand(3, 4), rand(4)),
    brow("matmul/1d_1d", fnp.matmul, np.matmul, rand(4), rand(4)),
    brow("matmul/3d_2d", fnp.matmul, np.matmul, rand(2, 3, 4), rand(4, 5)),
    brow("matmul/2d_3d", fnp.matmul, np.matmul, rand(3, 4), rand(2, 4, 5)),
    brow("matmul/batch", fnp.matmul, np.matmul, rand(2, 3, 4), rand(2, 4, 5)),
    brow("matmul/batch_broadcast", fnp.matmul, np.matmul, rand(2, 1, 3, 4), rand(5, 4, 2)),
    brow("matmul/1d_batch", fnp.matmul, np.matmul, rand(4), rand(2, 3, 4, 5)),
    brow("matmul/batch_1d", fnp.matmul, np.matmul, rand(2, 3, 4), rand(4)),
    row("matmul/int", fnp.matmul, np.matmul, rand(2, 3, dtype=i64), rand(3, 2, dtype=i64)),
    row("matmul/int32", fnp.matmul, np.matmul, rand(2, 3, 4, dtype=i32), rand(4, 2, dtype=i32)),
    row("matmul/f32", fnp.matmul, np.matmul, rand(2, 3, 4, dtype=f32), rand(2, 4, 3, dtype=f32)),
    brow("matmul/f32_f64", fnp.matmul, np.matmul, rand(3, 4, dtype=f32), rand(4, 2)),
    row("matmul/bool", fnp.matmul, np.matmul, rand(3, 4, dtype=np.bool_), rand(4, 3, dtype=np.bool_)),
    row("matmul/empty", fnp.matmul, np.matmul, rand(0, 3), rand(3, 4)),
    row("matmul/empty_batch", fnp.matmul, np.matmul, rand(0, 2, 3), rand(3, 4)),
    row("matmul/empty_contraction", fnp.matmul, np.matmul, rand(2, 0), rand(0, 4)),
    # vdot, inner, outer
    brow("vdot/1d", fnp.vdot, np.vdot, rand(5), rand(5)),
    brow("vdot/2d", fnp.vdot, np.vdot, rand(2, 3), rand(3, 2)),
    row("vdot/int", fnp.vdot, np.vdot, rand(4, dtype=i64), rand(2, 2, dtype=i64)),
    brow("inner/1d", fnp.inner, np.inner, rand(4), rand(4)),
    brow("inner/2d_2d", fnp.inner, np.inner, rand(2, 4), rand(3, 4)),
    brow("inner/3d_1d", fnp.inner, np.inner, rand(2, 3, 4), rand(4)),
    row("inner/0d", fnp.inner, np.inner, np.float64(2.0), rand(3)),
    row("inner/int", fnp.inner, np.inner, rand(2, 3, dtype=i64), rand(3, dtype=i64)),
    row("outer/1d", fnp.outer, np.outer, rand(3), rand(4)),
    row("outer/flattens", fnp.outer, np.outer, rand(2, 2), rand(3, 1)),
    row("outer/int_float", fnp.outer, np.outer, rand(3, dtype=i64), rand(2, dtype=f32)),
    row("outer/bool", fnp.outer, np.outer, rand(3, dtype=np.bool_), rand(2, dtype=np.bool_)),
    row("outer/scalar", fnp.outer, np.outer, np.float64(2.0), rand(3)),
    row("outer/empty", fnp.outer, np.outer, rand(0), rand(3)),
    # tensordot
    brow("tensordot/default", fnp.tensordot, np.tensordot, rand(2, 3, 4), rand(3, 4, 5)),
    brow("tensordot/axes1", lambda a, b: fnp.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1), rand(2, 3), rand(3, 4)),
    row("tensordot/axes0", lambda a, b: fnp.tensordot(a, b, 0), lambda a, b: np.tensordot(a, b, 0), rand(2), rand(3)),
    brow("tensordot/pairs", lambda a, b: fnp.tensordot(a, b, ([0, 2], [2, 1])),
         lambda a, b: np.tensordot(a, b, ([0, 2], [2, 1])), rand(2, 3, 4), rand(5, 4, 2)),
    brow("tensordot/int_pair", lambda a, b: fnp.tensordot(a, b, (1, 0)),
         lambda a, b: np.tensordot(a, b, (1, 0)), rand(2, 3), rand(3, 4)),
    brow("tensordot/negative_axes", lambda a, b: fnp.tensordot(a, b, ([-1], [-2])),
         lambda a, b: np.tensordot(a, b, ([-1], [-2])), rand(2, 3), rand(3, 4)),
    brow("tensordot/full", lambda a, b: fnp.tensordot(a, b, 2), lambda a, b: np.tensordot(a, b, 2), rand(2, 3), rand(2, 3)),
    row("tensordot/int", fnp.tensordot, np.tensordot, rand(2, 3, 4, dtype=i64), rand(3, 4, dtype=i64)),
    # einsum
    ein("matmul", "ij,jk->ik", rand(3, 4), rand(4, 5)),
    ein("matmul_implicit", "ij,jk", rand(3, 4), rand(4, 5)),
    ein("diag", "ii->i", rand(4, 4)),
    ein("trace", "ii", rand(4, 4)),
    ein("trace_explicit", "ii->", rand(3, 3)),
    ein("sum_all", "ij->", rand(3, 4)),
    ein("sum_axis", "ij->j", rand(3, 4)),
    ein("transpose", "ij->ji", rand(3, 4)),
    ein("transpose_implicit", "ba", rand(3, 4)),
    ein("batch_matmul", "bij,bjk->bik", rand(2, 3, 4), rand(2, 4, 5)),
    ein("inner", "i,i", rand(5), rand(5)),
    ein("outer", "i,j->ij", rand(3), rand(4)),
    ein("outer_implicit", "i,j", rand(3), rand(4)),
    ein("hadamard", "ij,ij->ij", rand(2, 3), rand(2, 3)),
    ein("rowwise_dot", "ij,ij->i", rand(2, 3), rand(2, 3)),
    ein("three", "ij,jk,kl->il", rand(2, 3), rand(3, 4), rand(4, 2)),
    ein("three_shared", "i,ij,j->", rand(3), rand(3, 4), rand(4)),
    ein("three_batch", "bi,bj,bk->bijk", rand(2, 3), rand(2, 2), rand(2, 4)),
    ein("ellipsis_matmul", "...ij,...jk", rand(2, 3, 4), rand(4, 5)),
    ein("ellipsis_explicit", "...ij,...jk->...ik", rand(2, 1, 3, 4), rand(5, 4, 2)),
    ein("ellipsis_sum", "i...->...", rand(3, 2, 4)),
    ein("ellipsis_middle", "i...j->j...i", rand(2, 3, 4, 5)),
    ein("ellipsis_diag", "...ii->...i", rand(2, 3, 3)),
    ein("ellipsis_broadcast1", "...i,...i->...", rand(3, 1, 4), rand(2, 4)),
    ein("triple_diag", "iii->i", rand(3, 3, 3)),
    ein("diag_mixed", "iij->ij", rand(3, 3, 2)),
    ein("diag_then_contract", "ii,ij->j", rand(3, 3), rand(3, 4)),
    ein("scalar_operand", ",ij->ij", np.float64(2.0), rand(2, 3)),
    ein("spaces", "ij, jk -> ik", rand(2, 3), rand(3, 2)),
    ein("int", "ij,jk->ik", rand(2, 3, dtype=i64), rand(3, 2, dtype=i64)),
    ein("int32", "ij,jk->ik", rand(2, 3, dtype=i32), rand(3, 2, dtype=i32)),
    ein("f32", "bij,bjk->bik", rand(2, 3, 4, dtype=f32), rand(2, 4, 2, dtype=f32)),
    ein("mixed_dtypes", "ij,j->i", rand(2, 3, dtype=i64), rand(3, dtype=f32)),
    ein("bool", "i,i", rand(5, dtype=np.bool_), rand(5, dtype=np.bool_)),
    ein("bool_matmul", "ij,jk->ik", rand(3, 3, dtype=np.bool_), rand(3, 2, dtype=np.bool_)),
    ein("empty", "ij,jk->ik", rand(0, 3), rand(3, 2)),
    ein("empty_contraction", "ij,jk->ik", rand(2, 0), rand(0, 2)),
    ein("uppercase", "Ab,bC->AC", rand(2, 3), rand(3, 2)),
    # kron
    row("kron/2d", fnp.kron, np.kron, rand(2, 3), rand(3, 2)),
    row("kron/1d", fnp.kron, np.kron, rand(3), rand(2)),
    row("kron/1d_2d", fnp.kron, np.kron, rand(3), rand(2, 2)),
    row("kron/3d_2d", fnp.kron, np.kron, rand(2, 1, 2), rand(2, 3)),
    row("kron/scalar", fnp.kron, np.kron, np.int64(3), np.int64(4)),
    row("kron/scalar_2d", fnp.kron, np.kron, np.float64(3.0), rand(2, 2)),
    row("kron/int_float", fnp.kron, np.kron, rand(2, 2, dtype=i64), rand(2, dtype=f32)),
    row("kron/python_float_f32", lambda x: fnp.kron(x, 2.0), lambda x: np.kron(x, 2.0), rand(2, dtype=f32)),
    row("kron/bool", fnp.kron, np.kron, rand(2, dtype=np.bool_), rand(2, 2, dtype=np.bool_)),
    # cross
    row("cross/3d_vectors", fnp.cross, np.cross, rand(3), rand(3)),
    row("cross/batch", fnp.cross, np.cross, rand(4, 3), rand(4, 3)),
    row("cross/broadcast", fnp.cross, np.cross, rand(2, 1, 3), rand(5, 3)),
    row("cross/int", fnp.cross, np.cross, rand(2, 3, dtype=i64), rand(3, dtype=i64)),
    row("cross/f32", fnp.cross, np.cross, rand(3, dtype=f32), rand(3, dtype=f32)),
    row("cross/axis0", lambda a, b: fnp.cross(a, b, axis=0), lambda a, b: np.cross(a, b, axis=0), rand(3, 4), rand(3, 4)),
    row("cross/axisa_axisb", lambda a, b: fnp.cross(a, b, axisa=0, axisb=1),
        lambda a, b: np.cross(a, b, axisa=0, axisb=1), rand(3, 4), rand(4, 3)),
    row("cross/axisc", lambda a, b: fnp.cross(a, b, axisc=0), lambda a, b: np.cross(a, b, axisc=0), rand(4, 3), rand(4, 3)),
    row("cross/2d_vectors", fnp.cross, _np_cross_2d, rand(2), rand(2)),
    row("cross/2d_batch", fnp.cross, _np_cross_2d, rand(4, 2), rand(4, 2)),
    row("cross/2_and_3", fnp.cross, _np_cross_2d, rand(4, 2), rand(4, 3)),
    row("cross/3_and_2", fnp.cross, _np_cross_2d, rand(3), rand(2)),
]
