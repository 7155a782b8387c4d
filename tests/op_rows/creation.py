"""Op-table rows for funcgrad.numpy creation functions.

Rows without arguments check the eager shortcut against NumPy and, through the jaxpr
column, the staged form (iota / broadcast / compare+select). Rows with arguments also
run with traced inputs (full_like(tracer), tril(tracer), linspace of traced bounds).
"""
import numpy as np

import funcgrad.numpy as fnp

from harness import rand, row

f32, i32 = np.float32, np.int32
A = rand(3, 4)
SQ = rand(4, 4)
B3 = rand(2, 3, 3)
I2 = rand(3, 5, dtype=np.int64, low=-5, high=5)
BOOL = rand(4, 4, dtype=np.bool_)

ROWS = [
    # array / asarray
    row("array/list", lambda: fnp.array([[1, 2], [3, 4]]), lambda: np.array([[1, 2], [3, 4]])),
    row("array/dtype", lambda: fnp.array([1, 2, 3], dtype=f32), lambda: np.array([1, 2, 3], dtype=f32)),
    row("array/ndmin", lambda x: fnp.array(x, ndmin=4), lambda x: np.array(x, ndmin=4), A),
    row("array/scalar", lambda: fnp.array(2.5), lambda: np.array(2.5)),
    row("array/traced_dtype", lambda x: fnp.array(x, dtype=np.int64), lambda x: np.array(x, dtype=np.int64), A),
    row("asarray/ndarray", lambda x: fnp.asarray(x), lambda x: np.asarray(x), A),
    row("asarray/np_scalar", lambda: fnp.asarray(np.float32(1.5)), lambda: np.asarray(np.float32(1.5))),
    row("asarray/dtype", lambda x: fnp.asarray(x, dtype=f32), lambda x: np.asarray(x, dtype=f32), A),
    row("asarray/nested", lambda: fnp.asarray([[1.0, 2], [3, 4]]), lambda: np.asarray([[1.0, 2], [3, 4]])),
    # zeros / ones / empty / full
    row("zeros/2d", lambda: fnp.zeros((2, 3)), lambda: np.zeros((2, 3))),
    row("zeros/int_shape", lambda: fnp.zeros(4), lambda: np.zeros(4)),
    row("zeros/0d", lambda: fnp.zeros(()), lambda: np.zeros(())),
    row("zeros/empty", lambda: fnp.zeros((0, 3)), lambda: np.zeros((0, 3))),
    row("zeros/int32", lambda: fnp.zeros((2, 2), dtype=i32), lambda: np.zeros((2, 2), dtype=i32)),
    row("zeros/bool", lambda: fnp.zeros(3, dtype=bool), lambda: np.zeros(3, dtype=bool)),
    row("ones/3d", lambda: fnp.ones((2, 1, 3)), lambda: np.ones((2, 1, 3))),
    row("ones/int", lambda: fnp.ones([2, 2], int), lambda: np.ones([2, 2], int)),
    row("ones/float32", lambda: fnp.ones(5, f32), lambda: np.ones(5, f32)),
    row("empty/2d", lambda: fnp.empty((2, 3)), lambda: np.zeros((2, 3))),
    row("full/int", lambda: fnp.full((2, 3), 7), lambda: np.full((2, 3), 7)),
    row("full/float", lambda: fnp.full(3, 2.5), lambda: np.full(3, 2.5)),
    row("full/bool", lambda: fnp.full((2,), True), lambda: np.full((2,), True)),
    row("full/dtype", lambda: fnp.full((2, 2), 3, dtype=f32), lambda: np.full((2, 2), 3, dtype=f32)),
    row("full/array_fill", lambda v: fnp.full((2, 4), v), lambda v: np.full((2, 4), v), rand(4)),
    row("full/traced_scalar", lambda v: fnp.full((3, 2), v), lambda v: np.full((3, 2), v), np.float64(1.25)),
    # *_like
    row("zeros_like/f32", lambda x: fnp.zeros_like(x), lambda x: np.zeros_like(x), rand(3, 2, dtype=f32)),
    row("zeros_like/scalar", lambda: fnp.zeros_like(3.0), lambda: np.zeros_like(3.0)),
    row("ones_like/int", lambda x: fnp.ones_like(x), lambda x: np.ones_like(x), I2),
    row("ones_like/dtype", lambda x: fnp.ones_like(x, dtype=bool), lambda x: np.ones_like(x, dtype=bool), A),
    row("empty_like/shape", lambda x: fnp.empty_like(x, shape=(2, 2)), lambda x: np.zeros_like(x, shape=(2, 2)), A),
    row("full_like/float", lambda x: fnp.full_like(x, 2.5), lambda x: np.full_like(x, 2.5), A),
    row("full_like/int_truncates", lambda x: fnp.full_like(x, 2.7), lambda x: np.full_like(x, 2.7), I2),
    row("full_like/shape", lambda x: fnp.full_like(x, 4, shape=(3,)), lambda x: np.full_like(x, 4, shape=(3,)), A),
    row("full_like/traced_fill", lambda x, v: fnp.full_like(x, v), lambda x, v: np.full_like(x, v), A, np.float64(-1.5)),
    row("full_like/empty", lambda x: fnp.full_like(x, 1.0), lambda x: np.full_like(x, 1.0), rand(0, 2)),
    # arange
    row("arange/stop", lambda: fnp.arange(5), lambda: np.arange(5)),
    row("arange/start_stop", lambda: fnp.arange(2, 9), lambda: np.arange(2, 9)),
    row("arange/step", lambda: fnp.arange(1, 10, 3), lambda: np.arange(1, 10, 3)),
    row("arange/negative_step", lambda: fnp.arange(5, 0, -2), lambda: np.arange(5, 0, -2)),
    row("arange/float_step", lambda: fnp.arange(0.1, 2.3, 0.3), lambda: np.arange(0.1, 2.3, 0.3)),
    row("arange/float_negative", lambda: fnp.arange(-3.5, 2, 0.7), lambda: np.arange(-3.5, 2, 0.7)),
    row("arange/float_down", lambda: fnp.arange(1.0, -1.0, -0.25), lambda: np.arange(1.0, -1.0, -0.25)),
    row("arange/float_stop", lambda: fnp.arange(4.5), lambda: np.arange(4.5)),
    row("arange/dtype_f32", lambda: fnp.arange(5, dtype=f32), lambda: np.arange(5, dtype=f32)),
    row("arange/dtype_float", lambda: fnp.arange(0, 7, 2, dtype=float), lambda: np.arange(0, 7, 2, dtype=float)),
    row("arange/dtype_int_float_args", lambda: fnp.arange(0.5, 5, 1, dtype=int), lambda: np.arange(0.5, 5, 1, dtype=int)),
    row("arange/int32", lambda: fnp.arange(-4, 4, dtype=i32), lambda: np.arange(-4, 4, dtype=i32)),
    row("arange/empty", lambda: fnp.arange(5, 0), lambda: np.arange(5, 0)),
    row("arange/np_scalars", lambda: fnp.arange(np.int32(3)), lambda: np.arange(np.int32(3))),
    # linspace / logspace
    row("linspace/default", lambda: fnp.linspace(0, 1), lambda: np.linspace(0, 1)),
    row("linspace/odd", lambda: fnp.linspace(-2.3, 7.1, 13), lambda: np.linspace(-2.3, 7.1, 13)),
    row("linspace/no_endpoint", lambda: fnp.linspace(1, 2, 7, endpoint=False), lambda: np.linspace(1, 2, 7, endpoint=False)),
    row("linspace/retstep", lambda: fnp.linspace(0.5, 3, 6, retstep=True), lambda: np.linspace(0.5, 3, 6, retstep=True)),
    row("linspace/num1", lambda: fnp.linspace(2, 3, 1), lambda: np.linspace(2, 3, 1)),
    row("linspace/num0", lambda: fnp.linspace(2, 3, 0), lambda: np.linspace(2, 3, 0)),
    row("linspace/descending", lambda: fnp.linspace(5, -5, 11), lambda: np.linspace(5, -5, 11)),
    row("linspace/dtype_int", lambda: fnp.linspace(-3, 7, 9, dtype=int), lambda: np.linspace(-3, 7, 9, dtype=int)),
    row("linspace/f32", lambda: fnp.linspace(f32(0), f32(1), 9), lambda: np.linspace(f32(0), f32(1), 9)),
    row("linspace/array_bounds", lambda a, b: fnp.linspace(a, b, 5), lambda a, b: np.linspace(a, b, 5), rand(3), rand(2, 3)),
    row("linspace/axis1", lambda a, b: fnp.linspace(a, b, 4, axis=1),
        lambda a, b: np.linspace(a, b, 4, axis=1), rand(2, 3), rand(2, 3)),
    row("linspace/axis_neg", lambda a, b: fnp.linspace(a, b, 4, axis=-1),
        lambda a, b: np.linspace(a, b, 4, axis=-1), rand(2), rand(2)),
    row("linspace/traced", lambda a, b: fnp.linspace(a, b, 7),
        lambda a, b: np.linspace(a, b, 7), np.float64(0.3), np.float64(2.1)),
    row("linspace/traced_retstep", lambda a, b: fnp.linspace(a, b, 5, endpoint=False, retstep=True),
        lambda a, b: np.linspace(a, b, 5, endpoint=False, retstep=True), np.float64(-1.0), np.float64(4.0)),
    row("logspace/default", lambda: fnp.logspace(0, 2, 5), lambda: np.logspace(0, 2, 5)),
    row("logspace/base2", lambda: fnp.logspace(-1, 3, 6, base=2.0), lambda: np.logspace(-1, 3, 6, base=2.0)),
    row("logspace/no_endpoint", lambda: fnp.logspace(0, 1, 4, endpoint=False), lambda: np.logspace(0, 1, 4, endpoint=False)),
    row("logspace/traced", lambda a, b: fnp.logspace(a, b, 5, base=3.0),
        lambda a, b: np.logspace(a, b, 5, base=3.0), np.float64(-1.0), np.float64(2.0)),
    row("logspace/f32", lambda: fnp.logspace(f32(0), f32(1), 3), lambda: np.logspace(f32(0), f32(1), 3)),
    # eye / identity / tri
    row("eye/square", lambda: fnp.eye(3), lambda: np.eye(3)),
    row("eye/rect_k", lambda: fnp.eye(3, 5, k=2), lambda: np.eye(3, 5, k=2)),
    row("eye/neg_k", lambda: fnp.eye(4, 3, k=-1), lambda: np.eye(4, 3, k=-1)),
    row("eye/k_outside", lambda: fnp.eye(2, k=5), lambda: np.eye(2, k=5)),
    row("eye/int", lambda: fnp.eye(3, dtype=int), lambda: np.eye(3, dtype=int)),
    row("eye/bool", lambda: fnp.eye(2, dtype=bool), lambda: np.eye(2, dtype=bool)),
    row("eye/empty", lambda: fnp.eye(0), lambda: np.eye(0)),
    row("identity/4", lambda: fnp.identity(4), lambda: np.identity(4)),
    row("identity/f32", lambda: fnp.identity(2, dtype=f32), lambda: np.identity(2, dtype=f32)),
    row("tri/square", lambda: fnp.tri(3), lambda: np.tri(3)),
    row("tri/rect_k", lambda: fnp.tri(3, 5, 1), lambda: np.tri(3, 5, 1)),
    row("tri/neg_k_int", lambda: fnp.tri(4, k=-2, dtype=int), lambda: np.tri(4, k=-2, dtype=int)),
    # tril / triu
    row("tril/2d", lambda x: fnp.tril(x), lambda x: np.tril(x), A),
    row("tril/k", lambda x: fnp.tril(x, 1), lambda x: np.tril(x, 1), A),
    row("tril/neg_k", lambda x: fnp.tril(x, k=-1), lambda x: np.tril(x, k=-1), SQ),
    row("tril/batch", lambda x: fnp.tril(x), lambda x: np.tril(x), B3),
    row("tril/1d", lambda x: fnp.tril(x), lambda x: np.tril(x), rand(3)),
    row("tril/int", lambda x: fnp.tril(x, 2), lambda x: np.tril(x, 2), I2),
    row("tril/bool", lambda x: fnp.tril(x), lambda x: np.tril(x), BOOL),
    row("tril/empty", lambda x: fnp.tril(x), lambda x: np.tril(x), rand(0, 3)),
    row("triu/2d", lambda x: fnp.triu(x), lambda x: np.triu(x), A),
    row("triu/k", lambda x: fnp.triu(x, 2), lambda x: np.triu(x, 2), A),
    row("triu/neg_k", lambda x: fnp.triu(x, -1), lambda x: np.triu(x, -1), SQ),
    row("triu/batch4d", lambda x: fnp.triu(x), lambda x: np.triu(x), rand(2, 2, 3, 4)),
    row("triu/f32", lambda x: fnp.triu(x), lambda x: np.triu(x), rand(3, 3, dtype=f32)),
    # diag
    row("diag/1d", lambda v: fnp.diag(v), lambda v: np.diag(v), rand(3)),
    row("diag/1d_k", lambda v: fnp.diag(v, 2), lambda v: np.diag(v, 2), rand(3)),
    row("diag/1d_neg_k", lambda v: fnp.diag(v, k=-1), lambda v: np.diag(v, k=-1), rand(4)),
    row("diag/1d_int", lambda v: fnp.diag(v), lambda v: np.diag(v), rand(3, dtype=np.int64)),
    row("diag/1d_empty", lambda v: fnp.diag(v), lambda v: np.diag(v), rand(0)),
    row("diag/2d", lambda m: fnp.diag(m), lambda m: np.diag(m), SQ),
    row("diag/2d_rect_k", lambda m: fnp.diag(m, 1), lambda m: np.diag(m, 1), A),
    row("diag/2d_rect_neg_k", lambda m: fnp.diag(m, -2), lambda m: np.diag(m, -2), A),
    row("diag/2d_tall", lambda m: fnp.diag(m, -1), lambda m: np.diag(m, -1), rand(5, 2)),
    row("diag/2d_k_outside", lambda m: fnp.diag(m, 7), lambda m: np.diag(m, 7), A),
    row("diag/2d_bool", lambda m: fnp.diag(m), lambda m: np.diag(m), BOOL),
    # meshgrid
    row("meshgrid/xy", lambda x, y: fnp.meshgrid(x, y), lambda x, y: np.meshgrid(x, y), rand(3), rand(4)),
    row("meshgrid/ij", lambda x, y: fnp.meshgrid(x, y, indexing="ij"),
        lambda x, y: np.meshgrid(x, y, indexing="ij"), rand(3), rand(4)),
    row("meshgrid/three", lambda x, y, z: fnp.meshgrid(x, y, z), lambda x, y, z: np.meshgrid(x, y, z),
        rand(2), rand(3, dtype=np.int64), rand(4, dtype=f32)),
    row("meshgrid/three_ij", lambda x, y, z: fnp.meshgrid(x, y, z, indexing="ij"),
        lambda x, y, z: np.meshgrid(x, y, z, indexing="ij"), rand(2), rand(3), rand(4)),
    row("meshgrid/sparse", lambda x, y: fnp.meshgrid(x, y, sparse=True),
        lambda x, y: np.meshgrid(x, y, sparse=True), rand(3), rand(4)),
    row("meshgrid/one", lambda x: fnp.meshgrid(x), lambda x: np.meshgrid(x), rand(3)),
    row("meshgrid/flattens", lambda x, y: fnp.meshgrid(x, y), lambda x, y: np.meshgrid(x, y), rand(2, 2), rand(3)),
]
