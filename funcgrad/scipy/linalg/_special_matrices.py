"""Structured matrices built from their defining vectors or their order: ``block_diag``,
``toeplitz``, ``circulant``, ``hankel``, ``companion``, ``fiedler``, ``fiedler_companion``,
``leslie``, ``convolution_matrix`` (batched over the leading dims of their vectors, as JAX)
and ``dft``, ``hadamard``, ``helmert``, ``hilbert``, ``invhilbert``, ``pascal``,
``invpascal`` (from a static order; the integer ones in exact Python integers)."""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import shape_of


def block_diag(*arrs):
    """Block-diagonal matrix of ``arrs`` (SciPy: a 0-d or 1-d argument is one row).

    >>> block_diag(np.ones((2, 2)), 3.0).shape
    (3, 3)
    """
    if not arrs:
        return fnp.zeros((1, 0))
    _util.check_arraylike("block_diag", *arrs)
    arrs = [_util.asarray(a, fname="block_diag") for a in arrs]
    for i, a in enumerate(arrs):
        if len(shape_of(a)) > 2:
            raise ValueError(f"block_diag: argument {i} has shape {shape_of(a)}; arguments must have at most 2 dims")
    arrs = _util.promote_dtypes(*arrs)
    arrs = [fnp.atleast_2d(a) for a in arrs]
    rows = [shape_of(a)[0] for a in arrs]
    cols = [shape_of(a)[1] for a in arrs]
    total = sum(cols)
    out_rows = []
    start = 0
    for a, c in zip(arrs, cols):
        out_rows.append(fnp.pad(a, ((0, 0), (start, total - start - c))))
        start += c
    if sum(rows) == 0:
        return fnp.zeros((0, total), arrs[0].dtype)
    return fnp.concatenate(out_rows, axis=0)


def toeplitz(c, r=None):
    """Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` is ignored;
    ``r=None`` means ``r = c``). As SciPy >= 1.17 and JAX, leading dims of ``c`` and
    ``r`` are batch dims (broadcast together): ``c`` (..., m), ``r`` (..., n) give
    (..., m, n).

    >>> toeplitz(np.array([1.0, 2.0, 3.0]))[2]
    Array([3., 2., 1.])
    """
    _util.check_arraylike("toeplitz", c)
    c = fnp.atleast_1d(_util.asarray(c, fname="toeplitz"))
    r = c if r is None else fnp.atleast_1d(_util.asarray(r, fname="toeplitz"))
    c, r = _util.promote_dtypes(c, r)
    m, n = shape_of(c)[-1], shape_of(r)[-1]
    batch = _util.broadcast_shapes("toeplitz", shape_of(c)[:-1], shape_of(r)[:-1])
    c, r = fnp.broadcast_to(c, batch + (m,)), fnp.broadcast_to(r, batch + (n,))
    vals = fnp.concatenate([fnp.flip(r[..., 1:], axis=-1), c], axis=-1)  # r[n-1] ... r[1] c[0] ... c[m-1]
    idx = np.arange(m)[:, None] - np.arange(n)[None, :] + (n - 1)
    return vals[..., idx]


def _vec(fname, a, argname="a"):
    """``a`` as an array of at least one dim (the last: the defining vector, leading: batch)."""
    _util.check_arraylike(fname, a)
    a = fnp.atleast_1d(_util.asarray(a, fname=fname))
    if shape_of(a)[-1] == 0:
        raise ValueError(f"{fname}: {argname} must have at least one element along its last axis, "
                         f"got shape {shape_of(a)}")
    return a


def _gather(vals, idx, valid):
    """``vals[..., idx]`` with 0 where not ``valid`` (``idx`` a static index matrix)."""
    out = vals[..., np.where(valid, idx, 0)]
    return fnp.where(valid, out, fnp.zeros((), fnp.result_type(vals)))


def circulant(c):
    """Circulant matrix with first column ``c``: ``C[i, j] = c[(i - j) % n]``; leading dims
    of ``c`` are batch dims (as JAX).

    >>> circulant(np.array([1, 2, 3]))
    Array([[1, 3, 2],
           [2, 1, 3],
           [3, 2, 1]])
    """
    c = _vec("circulant", c, "c")
    n = shape_of(c)[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def hankel(c, r=None):
    """Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored; ``r=None``:
    zeros below the anti-diagonal): ``H[i, j] = c[i + j]`` for ``i + j < m``, else
    ``r[i + j - m + 1]``. Leading dims are batch dims (broadcast together).

    >>> hankel(np.array([1, 2, 3]), np.array([3, 4]))
    Array([[1, 2],
           [2, 3],
           [3, 4]])
    """
    c = _vec("hankel", c, "c")
    r = fnp.zeros_like(c) if r is None else _vec("hankel", r, "r")
    c, r = _util.promote_dtypes(c, r)
    m, n = shape_of(c)[-1], shape_of(r)[-1]
    batch = _util.broadcast_shapes("hankel", shape_of(c)[:-1], shape_of(r)[:-1])
    c, r = fnp.broadcast_to(c, batch + (m,)), fnp.broadcast_to(r, batch + (n,))
    vals = fnp.concatenate([c, r[..., 1:]], axis=-1)
    return vals[..., np.arange(m)[:, None] + np.arange(n)[None, :]]


def companion(a):
    """Companion matrix of the polynomial with coefficients ``a`` (highest first): first row
    ``-a[1:] / a[0]``, ones on the subdiagonal; its eigenvalues are the roots. Leading dims
    are batch dims. (A zero ``a[0]`` gives inf/NaN rather than SciPy's ValueError, which
    would need the value.)

    >>> companion(np.array([1.0, -3.0, 2.0]))
    Array([[ 3., -2.],
           [ 1.,  0.]])
    """
    a = _vec("companion", a)
    n = shape_of(a)[-1]
    if n < 2:
        raise ValueError(f"companion: a must have at least two coefficients, got shape {shape_of(a)}")
    (a,) = _util.promote_dtypes_inexact(a)
    first = -a[..., 1:] / a[..., :1]
    sub = np.eye(n - 2, n - 1, dtype=_util.aval_of(a).dtype)
    return fnp.concatenate([first[..., None, :], fnp.broadcast_to(sub, shape_of(a)[:-1] + sub.shape)], axis=-2)


def fiedler(a):
    """Fiedler matrix ``|a[i] - a[j]|`` (symmetric, zero diagonal); leading dims are batch dims.

    >>> fiedler(np.array([1, 4, 2]))
    Array([[0, 3, 1],
           [3, 0, 2],
           [1, 2, 0]])
    """
    a = _vec("fiedler", a)
    return fnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest first):
    same eigenvalues as ``companion(a)``, SciPy's arrangement. Leading dims are batch dims;
    fewer than three coefficients give SciPy's small cases (a 1x1 or a 0x0 matrix)."""
    a = _vec("fiedler_companion", a)
    (a,) = _util.promote_dtypes_inexact(a)
    size = shape_of(a)[-1]
    batch = shape_of(a)[:-1]
    if size <= 2:
        if size == 2:
            return fnp.reshape(-(a[..., -1] / a[..., 0]), batch + (1, 1))
        return fnp.zeros(batch + (0, 0), fnp.result_type(a))
    a = a / a[..., :1]
    n = size - 1
    # Each entry of the result is 1, -a[k] or 0: a static table of which.
    src = np.full((n, n), -1)
    one = np.zeros((n, n), bool)
    one[range(3, n, 2), range(1, n - 2, 2)] = True
    src[range(2, n, 2), range(1, n - 1, 2)] = np.arange(3, size, 2)[: len(range(2, n, 2))]
    one[range(0, n - 2, 2), range(2, n, 2)] = True
    src[range(0, n - 1, 2), range(1, n, 2)] = np.arange(2, size, 2)[: len(range(0, n - 1, 2))]
    src[0, 0] = 1
    one[1, 0] = True
    picked = -_gather(a, src, src >= 0)
    return fnp.where(one, fnp.ones((), fnp.result_type(a)), picked)


def leslie(f, s):
    """Leslie matrix: fecundities ``f`` (n,) in the first row, survival rates ``s`` (n - 1,)
    on the subdiagonal. Leading dims are batch dims (broadcast together).

    >>> leslie(np.array([0.1, 2.0, 1.0]), np.array([0.2, 0.8]))
    Array([[0.1, 2. , 1. ],
           [0.2, 0. , 0. ],
           [0. , 0.8, 0. ]])
    """
    f = _vec("leslie", f, "f")
    _util.check_arraylike("leslie", s)
    s = fnp.atleast_1d(_util.asarray(s, fname="leslie"))
    n = shape_of(f)[-1]
    if shape_of(s)[-1] != n - 1:
        raise ValueError(f"leslie: s must have one element fewer than f along the last axis, got shapes "
                         f"{shape_of(f)} and {shape_of(s)}")
    f, s = _util.promote_dtypes_inexact(f, s)
    batch = _util.broadcast_shapes("leslie", shape_of(f)[:-1], shape_of(s)[:-1])
    f, s = fnp.broadcast_to(f, batch + (n,)), fnp.broadcast_to(s, batch + (n - 1,))
    rows = fnp.where(np.eye(n - 1, n, dtype=bool), s[..., :, None], fnp.zeros((), fnp.result_type(s)))
    return fnp.concatenate([f[..., None, :], rows], axis=-2)


def convolution_matrix(a, n, mode="full"):
    """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for vectors ``v`` of length
    ``n`` (Toeplitz: ``A[i, j] = a[i + off - j]``), ``mode`` 'full', 'same' or 'valid' as
    ``numpy.convolve``. Leading dims of ``a`` are batch dims.

    >>> convolution_matrix(np.array([1.0, 2.0]), 3)
    Array([[1., 0., 0.],
           [2., 1., 0.],
           [0., 2., 1.],
           [0., 0., 2.]])
    """
    a = _vec("convolution_matrix", a)
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', got {mode!r}")
    n = int(n)
    if n <= 0:
        raise ValueError(f"convolution_matrix: n must be positive, got {n}")
    m = shape_of(a)[-1]
    if mode == "full":
        start, stop = 0, m + n - 1
    else:
        trim = min(n, m) - 1
        head = trim // 2 if mode == "same" else trim
        start, stop = head, m + n - 1 - (trim - head if mode == "same" else trim)
    k = np.arange(start, stop)[:, None] - np.arange(n)[None, :]
    return _gather(a, k, (k >= 0) & (k < m))


def dft(n, scale=None, *, dtype=None):
    """The ``n``-point discrete Fourier transform matrix ``exp(-2 pi i j k / n)``, divided
    by ``sqrt(n)`` (``scale='sqrtn'``) or ``n`` (``scale='n'``); ``dft(n) @ x == fft(x)``.
    complex128 unless ``dtype`` (a complex dtype) says otherwise.

    >>> fnp.round(dft(2), 12)
    Array([[ 1.+0.j,  1.+0.j],
           [ 1.+0.j, -1.-0.j]])
    """
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}")
    n = int(n)
    jk = np.outer(np.arange(n), np.arange(n)) % n  # exact reduction before the angle
    m = np.exp(-2j * np.pi * jk / n)
    m = m / {None: 1.0, "sqrtn": np.sqrt(n), "n": float(n)}[scale]
    return fnp.asarray(m.astype(dtype or np.complex128))


def hadamard(n, dtype=int):
    """The ``n x n`` Hadamard matrix (Sylvester's construction; ``n`` a power of 2).

    >>> hadamard(2)
    Array([[ 1,  1],
           [ 1, -1]])
    """
    n = int(n)
    lg = max(n, 1).bit_length() - 1
    if n < 1 or 2**lg != n:
        raise ValueError(f"hadamard: n must be a positive integer power of 2, got {n}")
    h = np.array([[1]], dtype=dtype)
    for _ in range(lg):
        h = np.block([[h, h], [h, -h]])
    return fnp.asarray(h)


def helmert(n, full=False):
    """The Helmert matrix of order ``n``: orthogonal, first row constant ``1/sqrt(n)``; without
    ``full`` that first row is dropped ((n - 1, n), rows orthogonal to the ones vector).

    >>> helmert(2, full=True) * np.sqrt(2)
    Array([[ 1.,  1.],
           [ 1., -1.]])
    """
    n = int(n)
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    h = h / np.sqrt(d)[:, None]
    return fnp.asarray(h if full else h[1:])


def hilbert(n):
    """The Hilbert matrix ``1 / (i + j + 1)``.

    >>> hilbert(2)
    Array([[1.        , 0.5       ],
           [0.5       , 0.33333333]])
    """
    n = int(n)
    return fnp.asarray(1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1.0))


def invhilbert(n):
    """The inverse of ``hilbert(n)``, from its closed form in exact integers (rounded once
    to float64: exact up to n = 13, beyond that the entries exceed 2**53).

    >>> invhilbert(2)
    Array([[ 4., -6.],
           [-6., 12.]])
    """
    n = int(n)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            s = i + j
            v = (-1) ** s * (s + 1) * math.comb(n + i, n - j - 1) * math.comb(n + j, n - i - 1) * math.comb(s, i) ** 2
            out[i, j] = out[j, i] = float(v)
    return fnp.asarray(out)


def _pascal_lower(n):
    return [[math.comb(i, j) for j in range(n)] for i in range(n)]


def pascal(n, kind="symmetric"):
    """The Pascal matrix: ``kind='lower'`` binomials ``C(i, j)``, ``'upper'`` its transpose,
    ``'symmetric'`` (default; also ``None``) ``C(i + j, i)``, the product of the two. Exact
    integers rounded once to float64 (JAX's are float; SciPy's unsigned ints).

    >>> pascal(3)
    Array([[1., 1., 1.],
           [1., 2., 3.],
           [1., 3., 6.]])
    """
    n, kind = int(n), kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"pascal: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    if kind == "symmetric":
        m = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        m = _pascal_lower(n)
    out = np.array(m, dtype=np.float64).reshape(n, n)
    return fnp.asarray(out.T if kind == "upper" else out)


def invpascal(n, kind="symmetric"):
    """The inverse of ``pascal(n, kind)``: ``L^-1[i, j] = (-1)^(i-j) C(i, j)`` and, for the
    symmetric ``L L^T``, ``L^-T L^-1``, computed in exact integers.

    >>> invpascal(3)
    Array([[ 3., -3.,  1.],
           [-3.,  5., -2.],
           [ 1., -2.,  1.]])
    """
    n, kind = int(n), kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"invpascal: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    li = [[(-1) ** (i - j) * math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "symmetric":
        m = [[sum(li[k][i] * li[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
    else:
        m = li if kind == "lower" else [list(r) for r in zip(*li)]
    return fnp.asarray(np.array(m, dtype=np.float64).reshape(n, n))
