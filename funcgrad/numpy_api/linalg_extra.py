"""funcgrad.numpy.linalg, continued: pseudo-inverse, least squares, powers, ranks, chains
of products, condition numbers, tensor inverses/solves and the array API's linalg names
(``matrix_norm``, ``vector_norm``, ``vecdot``, ``svdvals``, ``diagonal``, ``trace``,
``matmul``, ``tensordot``, ``matrix_transpose``, ``cross``, ``outer``).

Everything composes the functions of ``linalg.py`` and the primitives, so it is
differentiable where they are, batches over leading ``...`` dimensions where NumPy's do,
stages and lowers. ``pinv`` has JAX's custom derivative (the Moore-Penrose JVP formula),
which holds at rank-deficient matrices too as long as the rank does not change.
``linalg.py`` re-exports every name here.

Defaults: ``pinv``/``lstsq``/``matrix_rank`` cut singular values at
``max(M, N) * eps * largest`` unless ``rcond``/``rtol``/``tol`` is given (NumPy 2's
``rtol=None`` rule, also JAX's scale; NumPy's legacy ``pinv`` default is 1e-15).
"""
from __future__ import annotations

import operator
from collections import namedtuple

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.errors import DataDependentShapeError
from funcgrad.numpy_api import _util
from funcgrad.numpy_api import elementwise as _ew
from funcgrad.numpy_api import linalg as _la
from funcgrad.numpy_api import products as _prod
from funcgrad.numpy_api import reductions as _red
from funcgrad.numpy_api._util import aval_of, shape_of
from funcgrad.numpy_api.shape import diagonal as _np_diagonal
from funcgrad.numpy_api.shape import reshape as _reshape
from funcgrad.numpy_api.shape import swapaxes as _swapaxes
from funcgrad.numpy_api.shape import trace as _np_trace
from funcgrad.numpy_api.shape import transpose as _transpose
from funcgrad.transforms.custom import custom_jvp

__all__ = [
    "pinv", "lstsq", "matrix_power", "matrix_rank", "multi_dot", "cond", "cross", "outer",
    "tensorinv", "tensorsolve", "matrix_norm", "vector_norm", "vecdot", "svdvals", "diagonal",
    "trace", "matmul", "tensordot", "matrix_transpose",
]

LinAlgError = np.linalg.LinAlgError
LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def _float_matrix(fname, a, square=False):
    _util.check_arraylike(fname, a)
    a = _util.asarray(a, fname=fname)
    aval = aval_of(a)
    if aval.dtype.kind not in "fc":  # (complex stays complex: casting would drop the imaginary part)
        a = lax.convert_element_type(a, dtypes.float64)
    if aval.ndim < 2:
        raise LinAlgError(f"{fname}: {aval.ndim}-dimensional array given (shape {aval.shape}); it must be at least 2-d")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise LinAlgError(f"{fname}: last 2 dimensions of the array must be square, got shape {aval.shape}")
    return a


def _mT(x):
    return _swapaxes(x, -1, -2)


def _mH(x):
    """Conjugate transpose (the plain transpose for real x)."""
    return lax.conj(_mT(x)) if aval_of(x).dtype.kind == "c" else _mT(x)


def _default_rtol(a):
    return max(shape_of(a)[-2:]) * float(np.finfo(aval_of(a).dtype).eps)


def _cutoff_ratio(fname, a, rcond, rtol):
    if rcond is not None and rtol is not None:
        raise ValueError(f"{fname}: pass only one of rcond and rtol")
    r = rcond if rcond is not None else rtol
    return _default_rtol(a) if r is None else r


# --- pinv ----------------------------------------------------------------------------------
def _pinv_value(a, r, hermitian):
    dt = aval_of(a).dtype
    if hermitian:
        w, v = _la.eigh(a)
        s = _ew.abs(w)
    else:
        u, s, vh = _la.svd(a, full_matrices=False)
    r = _util.asarray(r, np.finfo(dt).dtype, fname="pinv")  # (a real ratio, also for complex a)
    cutoff = _ew.multiply(r[..., None], _red.max(s, axis=-1, keepdims=True))
    keep = _ew.greater(s, cutoff)
    inv_s = _ew.where(keep, _ew.divide(1, _ew.where(keep, w if hermitian else s, 1)), 0).astype(dt)
    if hermitian:
        return _prod.matmul(v * inv_s[..., None, :], _mH(v))
    return _prod.matmul(_mH(vh) * inv_s[..., None, :], _mH(u))


def _pinv_jvp_term(p, a, a_dot):
    """The Moore-Penrose derivative: -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P."""
    m, n = shape_of(a)[-2:]
    dt = aval_of(p).dtype
    mm = _prod.matmul
    t1 = -mm(mm(p, a_dot), p)
    t2 = mm(mm(mm(p, _mH(p)), _mH(a_dot)), np.eye(m, dtype=dt) - mm(a, p))
    t3 = mm(mm(np.eye(n, dtype=dt) - mm(p, a), _mH(a_dot)), mm(_mH(p), p))
    return t1 + t2 + t3


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """Moore-Penrose pseudo-inverse of (a stack of) matrices, through the SVD (``eigh``
    with ``hermitian=True``): singular values at most ``rcond * largest`` (or ``rtol``;
    an array broadcasts over the stack) count as zero. Differentiable with JAX's rule.

    >>> fnp.linalg.pinv(np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]))
    Array([[1. , 0. , 0. ],
           [0. , 0.5, 0. ]])
    """
    a = _float_matrix("pinv", a)
    m, n = shape_of(a)[-2:]
    if m == 0 or n == 0:
        return _util.full(shape_of(a)[:-2] + (n, m), 0, aval_of(a).dtype)
    r = _cutoff_ratio("pinv", a, rcond, rtol)
    hermitian = bool(hermitian)

    @custom_jvp
    def _pinv(x):
        return _pinv_value(x, r, hermitian)

    @_pinv.defjvp
    def _pinv_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        p = _pinv(x)
        return p, _pinv_jvp_term(p, x, x_dot)

    return _pinv(a)


# --- lstsq ---------------------------------------------------------------------------------
def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of ``a @ x = b`` for a matrix ``a`` (M, N) and ``b`` (M,) or
    (M, K): ``LstsqResult(x, residuals, rank, s)`` as NumPy's tuple. Singular values at
    most ``rcond * largest`` count as zero (default ``max(M, N) * eps``).

    ``residuals`` are the squared 2-norms of ``b - a @ x`` per column, always (JAX's
    default); ``numpy_resid=True`` gives NumPy's: an empty array unless rank == N < M,
    which needs a concrete rank (a ``DataDependentShapeError`` under tracing).

    >>> fnp.linalg.lstsq(np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]), np.array([1.0, 2.0, 3.0]))[0]
    Array([1., 1.])
    """
    a = _float_matrix("lstsq", a)
    _util.check_arraylike("lstsq", b)
    a, b = _util.promote_dtypes_inexact(a, _util.asarray(b, fname="lstsq"), fname="lstsq")
    (m, n), bs = shape_of(a), shape_of(b)
    if len(shape_of(a)) != 2 or len(bs) not in (1, 2) or bs[0] != m:
        raise LinAlgError(
            f"lstsq: a must be a matrix (M, N) and b of shape (M,) or (M, K); got shapes {shape_of(a)} and {bs}"
        )
    r = _cutoff_ratio("lstsq", a, rcond, None)
    vector = len(bs) == 1
    b2 = _reshape(b, (m, 1)) if vector else b
    s = svdvals(a) if min(m, n) else _util.full((0,), 0, aval_of(a).dtype)
    x = _prod.matmul(pinv(a, r), b2)
    if min(m, n):
        rank = _red.sum(_ew.greater(s, r * _red.max(s)), dtype=np.int32)
    else:
        rank = np.int32(0)
    resid = _red.sum(_ew.square(_ew.abs(b2 - _prod.matmul(a, x))), axis=0)  # (|r|^2 for complex)
    if numpy_resid:
        if _util.is_tracer(rank):
            raise DataDependentShapeError(
                "lstsq: numpy_resid=True gives residuals whose shape depends on the rank, which is traced "
                "here; use numpy_resid=False (residuals for every column) under jit/vmap/grad"
            )
        if int(rank) < n or m <= n:
            resid = _util.full((0,), 0, aval_of(a).dtype)
    if vector:
        x = _reshape(x, (n,))
    return LstsqResult(x, resid, rank, s)


# --- powers, ranks, chains -------------------------------------------------------------------
def matrix_power(a, n):
    """``a`` to the integer power ``n`` by repeated squaring; ``n < 0`` inverts first,
    ``n == 0`` gives the identity. Integer matrices stay integer for ``n >= 0``.

    >>> fnp.linalg.matrix_power(np.array([[1, 1], [0, 1]]), 3)
    Array([[1, 3],
           [0, 1]])
    """
    _util.check_arraylike("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent must be an integer, got {type(n).__name__}") from None
    a = _util.asarray(a, fname="matrix_power")
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise LinAlgError(f"matrix_power: a must be a (stack of) square matrices, got shape {shape}")
    if n == 0:
        eye = np.eye(shape[-1], dtype=aval_of(a).dtype)
        return _util.broadcast_to(eye, shape)
    if n < 0:
        a, n = _la.inv(a), -n
    result, z = None, a
    while True:  # binary powering, as NumPy does
        if n & 1:
            result = z if result is None else _prod.matmul(result, z)
        n >>= 1
        if not n:
            return result
        z = _prod.matmul(z, z)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above ``tol`` (default: ``rtol * largest``, with
    ``rtol = max(M, N) * eps``); for 0-d/1-d input, 1 unless all entries are 0.

    >>> fnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]]))
    Array(1)
    """
    _util.check_arraylike("matrix_rank", A)
    a = _util.asarray(A, fname="matrix_rank")
    if aval_of(a).ndim < 2:
        r = _red.sum(_red.any(_ew.not_equal(a, 0)), dtype=np.int64)
        return r[()] if type(r) is np.ndarray else r
    a = _float_matrix("matrix_rank", a)
    s = _ew.abs(_la.eigvalsh(a)) if hermitian else svdvals(a)
    if tol is None:
        r = _default_rtol(a) if rtol is None else _util.asarray(rtol, fname="matrix_rank")[..., None]
        tol = _ew.multiply(_red.max(s, axis=-1, keepdims=True), r)
    else:
        tol = _util.asarray(tol, fname="matrix_rank")[..., None]
    return _red.sum(_ew.greater(s, tol), axis=-1, dtype=np.int64)


def _chain_order(dims):
    """The matrix-chain split table for matrices of shapes (dims[i], dims[i+1])."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, precision=None):
    """``arrays[0] @ arrays[1] @ ...`` in the order with the fewest multiplications;
    the first and last may be 1-d (a row and a column vector). ``precision`` is
    accepted for JAX compatibility (products are always full precision here).

    >>> fnp.linalg.multi_dot([np.ones((2, 3)), np.ones((3, 4)), np.ones(4)])
    Array([12., 12.])
    """
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: expecting at least two arrays, got {len(arrays)}")
    _util.check_arraylike("multi_dot", *arrays)
    arrays = [_util.asarray(x, fname="multi_dot") for x in arrays]
    first_1d, last_1d = aval_of(arrays[0]).ndim == 1, aval_of(arrays[-1]).ndim == 1
    if first_1d:
        arrays[0] = arrays[0][None, :]
    if last_1d:
        arrays[-1] = arrays[-1][:, None]
    for i, x in enumerate(arrays):
        if aval_of(x).ndim != 2:
            raise ValueError(f"multi_dot: array {i} has shape {shape_of(x)}; all but the first and last must be 2-d")
    dims = [shape_of(arrays[0])[0]] + [shape_of(x)[1] for x in arrays]
    split = _chain_order(dims)
    stack = [(0, len(arrays) - 1)]
    done = {}
    while stack:  # iterative post-order over the split tree
        i, j = stack[-1]
        if i == j:
            done[(i, j)] = arrays[i]
            stack.pop()
            continue
        k = split[i][j]
        left, right = (i, k), (k + 1, j)
        missing = [c for c in (left, right) if c not in done]
        if missing:
            stack.extend(missing)
            continue
        done[(i, j)] = _prod.matmul(done[left], done[right])
        stack.pop()
    out = done[(0, len(arrays) - 1)]
    if first_1d and last_1d:
        return out[0, 0]
    if first_1d:
        return out[0]
    return out[:, 0] if last_1d else out


def cond(x, p=None):
    """Condition number of (a stack of) matrices in the norm ``p`` (None/2: largest over
    smallest singular value, -2: the reverse; 'fro', 'nuc', 1, -1, inf, -inf:
    ``norm(x, p) * norm(inv(x), p)``). Singular matrices give inf, as in NumPy.

    >>> fnp.linalg.cond(np.array([[1.0, 0.0], [0.0, 4.0]]))
    Array(4.)
    """
    a = _float_matrix("cond", x, square=p not in (None, 2, -2))
    if 0 in shape_of(a)[-2:]:
        raise LinAlgError(f"cond: not defined on empty arrays (shape {shape_of(a)})")
    if p is None or p == 2 or p == -2:
        s = svdvals(a)
        big, small = s[..., 0], s[..., -1]
        r = _ew.divide(small, big) if p == -2 else _ew.divide(big, small)
    else:
        r = _la.norm(a, p, axis=(-2, -1)) * _la.norm(_la.inv(a), p, axis=(-2, -1))
    # NaN from a singular matrix (0/0, inv's NaNs) means inf, unless the input had NaNs.
    had_nan = _red.any(_ew.isnan(a), axis=(-2, -1))
    r = _ew.where(_ew.logical_and(_ew.isnan(r), _ew.logical_not(had_nan)), np.inf, r)
    return r[()] if type(r) is np.ndarray and not r.shape else r


# --- tensors ---------------------------------------------------------------------------------
def tensorinv(a, ind=2):
    """The inverse of ``a`` seen as a square matrix of its first ``ind`` axes by the
    rest: ``tensordot(tensorinv(a, ind), a, ind)`` is the identity on ``a.shape[ind:]``.

    >>> fnp.linalg.tensorinv(4 * np.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    _util.check_arraylike("tensorinv", a)
    a = _util.asarray(a, fname="tensorinv")
    shape = shape_of(a)
    if operator.index(ind) <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind}")
    rows, cols = int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))
    if rows != cols:
        raise LinAlgError(f"tensorinv: shape {shape} with ind={ind} is not square ({rows} x {cols})")
    return _reshape(_la.inv(_reshape(a, (rows, cols))), shape[ind:] + shape[:ind])


def tensorsolve(a, b, axes=None):
    """Solve ``tensordot(a, x, axes=x.ndim) == b`` for ``x`` (of shape
    ``a.shape[b.ndim:]``), optionally after moving ``axes`` of ``a`` to the end.

    >>> fnp.linalg.tensorsolve(2 * np.eye(6).reshape(2, 3, 6), np.ones((2, 3))).shape
    (6,)
    """
    _util.check_arraylike("tensorsolve", a, b)
    a, b = _util.asarray(a, fname="tensorsolve"), _util.asarray(b, fname="tensorsolve")
    an = aval_of(a).ndim
    if axes is not None:
        order = [i for i in range(an) if i not in [_util.canonicalize_axis(k, an, "tensorsolve") for k in axes]]
        order += [_util.canonicalize_axis(k, an, "tensorsolve") for k in axes]
        a = _transpose(a, order)
    out_shape = shape_of(a)[aval_of(b).ndim:]
    n = int(np.prod(out_shape))
    if aval_of(a).size != n * n or aval_of(b).size != n:
        raise LinAlgError(
            f"tensorsolve: shapes {shape_of(a)} and {shape_of(b)} do not satisfy "
            "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim]) == b.size"
        )
    x = _la.solve(_reshape(a, (n, n)), _reshape(b, (n,)))
    return _reshape(x, out_shape)


# --- the array API's linalg names --------------------------------------------------------------
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Norm of the matrices over the last two axes (``norm(x, ord, axis=(-2, -1))``).

    >>> fnp.linalg.matrix_norm(np.array([[3.0, 0.0], [0.0, 4.0]]))
    Array(5.)
    """
    return _la.norm(x, ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over ``axis`` (an int, a tuple of axes taken as one flattened vector,
    or None: every element).

    >>> fnp.linalg.vector_norm(np.array([[3.0, 0.0], [0.0, 4.0]]))
    Array(5.)
    """
    _util.check_arraylike("vector_norm", x)
    x = _util.asarray(x, fname="vector_norm")
    shape, nd = shape_of(x), aval_of(x).ndim
    axes = tuple(range(nd)) if axis is None else axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(_util.canonicalize_axis(a, nd, "vector_norm") for a in axes)
    rest = tuple(i for i in range(nd) if i not in axes)
    flat = _reshape(_transpose(x, axes + rest), (int(np.prod([shape[i] for i in axes])),) + tuple(
        shape[i] for i in rest))
    out = _la.norm(flat, ord, axis=0)
    if keepdims:
        out = _reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return out


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products of the vectors along ``axis`` (other axes broadcast; integers stay
    integers).

    >>> fnp.linalg.vecdot(np.array([[1, 2], [3, 4]]), np.array([1, 1]))
    Array([3, 7])
    """
    _util.check_arraylike("vecdot", x1, x2)
    x1, x2 = _util.asarray(x1, fname="vecdot"), _util.asarray(x2, fname="vecdot")
    s1, s2 = shape_of(x1), shape_of(x2)
    n1 = s1[_util.canonicalize_axis(axis, len(s1), "vecdot")] if s1 else None
    n2 = s2[_util.canonicalize_axis(axis, len(s2), "vecdot")] if s2 else None
    if n1 != n2:
        raise ValueError(f"vecdot: shapes {s1} and {s2} differ along axis {axis} ({n1} != {n2})")
    if aval_of(x1).dtype.kind == "c":  # NumPy's (and JAX's) vecdot conjugates x1
        x1 = lax.conj(x1)
    prod = _ew.multiply(x1, x2)  # summed in its own dtype, as NumPy's (uint8 stays uint8)
    return _red.sum(prod, axis=axis, dtype=aval_of(prod).dtype)


def svdvals(x, /):
    """Singular values of (a stack of) matrices, descending.

    >>> fnp.linalg.svdvals(np.array([[3.0, 0.0], [0.0, -4.0]]))
    Array([4., 3.])
    """
    return _la.svd(_float_matrix("svdvals", x), compute_uv=False)


def diagonal(x, /, *, offset=0):
    """The ``offset``-th diagonal of the matrices over the last two axes.

    >>> fnp.linalg.diagonal(np.arange(4.0).reshape(2, 2))
    Array([0., 3.])
    """
    _matrix_rank_at_least_2("diagonal", x)
    return _np_diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the ``offset``-th diagonal of the matrices over the last two axes.

    >>> fnp.linalg.trace(np.arange(4.0).reshape(2, 2))
    Array(3.)
    """
    _matrix_rank_at_least_2("trace", x)
    return _np_trace(x, offset, -2, -1, dtype)


def matrix_transpose(x, /):
    """Swap the last two axes.

    >>> fnp.linalg.matrix_transpose(np.ones((2, 3))).shape
    (3, 2)
    """
    _matrix_rank_at_least_2("matrix_transpose", x)
    return _mT(x)


def _matrix_rank_at_least_2(fname, x):
    _util.check_arraylike(fname, x)
    if len(_util.shape_of(x)) < 2:
        raise ValueError(f"{fname}: x must be at least 2-d, got shape {_util.shape_of(x)}")


def matmul(x1, x2, /):
    """``x1 @ x2`` (``funcgrad.numpy.matmul``)."""
    return _prod.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """``funcgrad.numpy.tensordot`` with the array API's keyword-only ``axes``."""
    return _prod.tensordot(x1, x2, axes)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along ``axis`` (other axes broadcast).

    >>> fnp.linalg.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    Array([0., 0., 1.])
    """
    _util.check_arraylike("cross", x1, x2)
    for x in (x1, x2):
        s = shape_of(x)
        if not s or s[_util.canonicalize_axis(axis, len(s), "cross")] != 3:
            raise ValueError(f"cross: both inputs must have 3 elements along axis {axis}, got shapes "
                             f"{shape_of(x1)} and {shape_of(x2)}")
    return _prod.cross(x1, x2, axis=axis)


def outer(x1, x2, /):
    """Outer product of two vectors (both must be 1-d).

    >>> fnp.linalg.outer(np.array([1, 2]), np.array([1, 10]))
    Array([[ 1, 10],
           [ 2, 20]])
    """
    _util.check_arraylike("outer", x1, x2)
    if len(shape_of(x1)) != 1 or len(shape_of(x2)) != 1:
        raise ValueError(f"outer: x1 and x2 must be 1-d, got shapes {shape_of(x1)} and {shape_of(x2)}")
    return _prod.outer(x1, x2)
