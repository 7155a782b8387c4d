"""Op-table rows for the funcgrad.lax extras of issue #13 (``funcgrad/lax/*.py``):
clamp and friends, the *_in_dim slicing helpers, cumulative reductions, sort with
several operands, top_k, reduce with a user function, associative_scan, map and the
implicitly differentiated solvers. References are plain NumPy (sequential loops for the
scans). Float inputs are distinct random values, away from clamp's kinks and ties."""
import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax

from harness import rand, randpos, row

f32, i32, i64 = np.float32, np.int32, np.int64

X1 = rand(7)
X2 = rand(3, 5)
X3 = rand(2, 3, 4)
P2 = randpos(3, 5)
F2 = rand(3, 5, dtype=f32)
LO, HI = rand(3, 5, low=-2.0, high=-0.5), rand(3, 5, low=0.5, high=2.0)
U2 = rand(3, 2)
K1 = np.array([2, 0, 1, 2, 0, 1, 1], i64)  # sort keys with ties
K2 = np.array([1, 1, 0, 0, 1, 0, 1], i32)
A = rand(3, 3) + 4 * np.eye(3)  # well conditioned, not symmetric
B = rand(3)


def _seq_scan(fn, xs):
    """Sequential inclusive scan along axis 0 (the reference for associative_scan)."""
    out, acc = [], None
    for x in zip(*xs):
        acc = x if acc is None else fn(acc, x)
        out.append(acc)
    return tuple(np.stack(o) for o in zip(*out))


def _affine(a, b):  # composition of x -> a x + b maps: associative, not commutative
    return a[0] * b[0], a[1] * b[0] + b[1]


def _argmax_pair(a, b):
    pick = (a[0] > b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
    return fnp.where(pick, a[0], b[0]), fnp.where(pick, a[1], b[1])


def _newton_sqrt(f, x0):  # the user's solver: never differentiated
    return lax.fori_loop(0, 40, lambda i, x: x - f(x) / (2 * x), x0)


def _root_sqrt(a):
    return lax.custom_root(lambda x: x * x - a, fnp.ones_like(a), _newton_sqrt, lambda g, y: y / g(fnp.ones_like(y)))


def _lin_solve(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, r: fnp.linalg.solve(a, r),
                                   lambda vm, r: fnp.linalg.solve(a.T, r))


def _top_k_ref(x, k):
    idx = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, idx, -1), idx.astype(i32)


ROWS = [
    # --- clamp, rsqrt, square, reciprocal, expand_dims ---------------------------------------
    row("lax.clamp/scalars", lambda x: lax.clamp(-1.0, x, 1.0), lambda x: np.clip(x, -1.0, 1.0), X2),
    row("lax.clamp/arrays", lax.clamp, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), LO, X2, HI),
    row("lax.clamp/int32", lambda x: lax.clamp(np.int32(-1), x, np.int32(2)), lambda x: np.clip(x, -1, 2).astype(i32),
        rand(4, 3, dtype=i32, low=-5, high=5)),
    row("lax.rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), P2),
    row("lax.square/float32", lax.square, np.square, F2),
    row("lax.optimization_barrier", lambda x: lax.optimization_barrier(fnp.sin(x)) * 2.0, lambda x: np.sin(x) * 2.0,
        X2),
    row("lax.optimization_barrier/int32", lambda x: lax.optimization_barrier(x * 3), lambda x: x * 3,
        np.arange(6, dtype=i32).reshape(2, 3)),
    row("lax.reciprocal", lax.reciprocal, np.reciprocal, P2),
    row("lax.expand_dims", lambda x: lax.expand_dims(x, (0, -1)), lambda x: np.expand_dims(x, (0, -1)), X2),
    # --- one-axis slicing ---------------------------------------------------------------------
    row("lax.slice_in_dim/neg_limit", lambda x: lax.slice_in_dim(x, 1, -1, axis=1), lambda x: x[:, 1:-1], X2),
    row("lax.slice_in_dim/stride", lambda x: lax.slice_in_dim(x, None, None, 2, -1), lambda x: x[..., ::2], X3),
    row("lax.index_in_dim", lambda x: lax.index_in_dim(x, -2, 1, keepdims=False), lambda x: x[:, -2], X3),
    row("lax.dynamic_slice_in_dim", lambda x, s: lax.dynamic_slice_in_dim(x, s, 2, axis=1),
        lambda x, s: x[:, s:s + 2], X2, np.int64(2)),
    row("lax.dynamic_index_in_dim", lambda x, s: lax.dynamic_index_in_dim(x, s, 0, keepdims=False),
        lambda x, s: x[s], X2, np.int32(1)),
    row("lax.dynamic_update_slice_in_dim", lambda x, u, s: lax.dynamic_update_slice_in_dim(x, u, s, 1),
        lambda x, u, s: np.concatenate([x[:, :s], u, x[:, s + 2:]], 1), X2, U2, np.int64(1)),
    row("lax.dynamic_update_index_in_dim", lambda x, u, s: lax.dynamic_update_index_in_dim(x, u, s, 1),
        lambda x, u, s: np.concatenate([x[:, :s], u[:, None], x[:, s + 1:]], 1), X2, U2[:, 0], np.int64(4)),
    # --- cumulative reductions -----------------------------------------------------------------
    row("lax.cumsum/axis_neg", lambda x: lax.cumsum(x, -1), lambda x: np.cumsum(x, -1), X3),
    row("lax.cumprod/reverse", lambda x: lax.cumprod(x, 1, reverse=True),
        lambda x: np.flip(np.cumprod(np.flip(x, 1), 1), 1), X2, rtol=1e-13),
    row("lax.cummax", lambda x: lax.cummax(x, 1), lambda x: np.maximum.accumulate(x, 1), X2),
    row("lax.cummax/odd_1d", lax.cummax, np.maximum.accumulate, X1),
    row("lax.cummin/reverse", lambda x: lax.cummin(x, 0, reverse=True),
        lambda x: np.flip(np.minimum.accumulate(np.flip(x, 0), 0), 0), X3),
    row("lax.cummax/int32", lambda x: lax.cummax(x, 1), lambda x: np.maximum.accumulate(x, 1),
        rand(3, 6, dtype=i32, low=-9, high=9)),
    row("lax.cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1), lambda x: np.logaddexp.accumulate(x, 1),
        X2 * 300, rtol=1e-13),
    row("lax.cumlogsumexp/reverse_f32", lambda x: lax.cumlogsumexp(x, reverse=True),
        lambda x: np.flip(np.logaddexp.accumulate(np.flip(x, 0), 0), 0), F2, rtol=1e-5),
    # --- sort, top_k -----------------------------------------------------------------------------
    row("lax.sort/key_val_ties", lambda k, v: lax.sort((k, v)),
        lambda k, v: (np.sort(k, kind="stable"), v[np.argsort(k, kind="stable")]), K1, X1),
    row("lax.sort/two_keys", lambda k1, k2, v: lax.sort((k1, k2, v), num_keys=2),
        lambda k1, k2, v: tuple(a[np.lexsort((k2, k1))] for a in (k1, k2, v)), K1, K2, X1),
    row("lax.sort/single_dim0", lambda x: lax.sort(x, dimension=0), lambda x: np.sort(x, 0), X2),
    row("lax.sort_key_val", lambda k, v: lax.sort_key_val(k, v, 1),
        lambda k, v: (np.sort(k, 1), np.take_along_axis(v, np.argsort(k, 1), 1)), X2, P2),
    row("lax.top_k", lambda x: lax.top_k(x, 3), lambda x: _top_k_ref(x, 3), X2),
    row("lax.top_k/int_ties", lambda x: lax.top_k(x, 4), lambda x: _top_k_ref(x, 4), K1),
    # --- reduce, associative_scan, map -----------------------------------------------------------
    row("lax.reduce/monoid_max", lambda x: lax.reduce(x, -np.inf, lax.max, (1,)), lambda x: x.max(1), X3),
    row("lax.reduce/python_fn", lambda x: lax.reduce(x, 0.0, lambda a, b: a + b, (0, 2)),
        lambda x: x.sum((0, 2)), X3, rtol=1e-13),
    row("lax.reduce/argmax_pair", lambda x, i: lax.reduce((x, i), (-np.inf, np.int64(0)), _argmax_pair, (1,)),
        lambda x, i: (x.max(1), x.argmax(1)), X2, np.broadcast_to(np.arange(5), (3, 5)).copy()),
    row("lax.associative_scan/affine_odd", lambda a, b: lax.associative_scan(_affine, (a, b)),
        lambda a, b: _seq_scan(_affine, (a, b)), X1, rand(7), rtol=1e-13),
    row("lax.associative_scan/reverse_axis1", lambda x: lax.associative_scan(fnp.multiply, x, reverse=True, axis=1),
        lambda x: np.flip(np.cumprod(np.flip(x, 1), 1), 1), rand(2, 8), rtol=1e-13),
    row("lax.map", lambda x: lax.map(lambda v: fnp.sin(v).sum(), x), lambda x: np.sin(x).sum(1), X2, rtol=1e-13),
    row("lax.map/batch_size", lambda x: lax.map(lambda v: (v * v, v[0]), x, batch_size=2),
        lambda x: (x * x, x[:, 0]), X2),
    # --- fills, shapes, logistic/exp2, logical reductions, dot ----------------------------------
    row("lax.full_like", lambda x: x * lax.full_like(x, 2.5), lambda x: x * 2.5, X2),
    row("lax.full", lambda x: x + lax.full((3, 5), 0.5), lambda x: x + 0.5, X2),
    row("lax.broadcast", lambda x: lax.broadcast(x, (2,)), lambda x: np.broadcast_to(x, (2, 3, 5)), X2),
    row("lax.broadcasted_iota", lambda x: x * lax.broadcasted_iota(np.float64, (3, 5), 1),
        lambda x: x * np.arange(5.0), X2),
    row("lax.squeeze", lambda x: lax.squeeze(x, (0, -1)), lambda x: x[0, :, :, 0], rand(1, 3, 2, 1)),
    row("lax.logistic", lax.logistic, lambda x: 1 / (1 + np.exp(-x)), X2 * 5, rtol=1e-13),
    row("lax.logistic/float32", lax.logistic, lambda x: (1 / (1 + np.exp(-x))).astype(f32), F2, rtol=1e-6),
    row("lax.exp2", lax.exp2, np.exp2, X2 * 4, rtol=1e-13),
    row("lax.reduce_or/bool", lambda x: lax.reduce_or(x > 0.5, (1,)), lambda x: (x > 0.5).any(1), X2),
    row("lax.reduce_and/int32", lambda x: lax.reduce_and(x, (0,)), lambda x: np.bitwise_and.reduce(x, 0),
        rand(4, 3, dtype=i32, low=0, high=64)),
    row("lax.reduce_xor/bool", lambda x: lax.reduce_xor(x > 0.5, (0, 1)), lambda x: np.logical_xor.reduce(
        (x > 0.5).ravel()), X2),
    row("lax.dot/matvec", lambda a, b: lax.dot(a, b, precision=lax.Precision.HIGHEST), np.dot, A, B),
    row("lax.dot_general/preferred_f32", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                                      preferred_element_type=f32),
        lambda a, b: (a.astype(f32) @ b.astype(f32)), A, B, rtol=1e-6),
    # --- implicitly differentiated solvers -----------------------------------------------------
    row("lax.custom_root/sqrt", _root_sqrt, np.sqrt, randpos(4), rtol=1e-13),
    row("lax.custom_linear_solve", _lin_solve, np.linalg.solve, A, B, rtol=1e-12),
]
