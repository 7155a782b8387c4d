"""funcgrad.numpy: the legacy polynomial functions (coefficients highest power first):
polyval, polyfit, poly, polyadd, polysub, polymul, polydiv, polyder, polyint, roots, vander.

Composites of existing functions, so ``grad``/``vmap``/``jit`` follow, except ``roots``,
which needs the eigenvalues of a non-symmetric matrix: concrete input only (as JAX's
``roots`` with ``strip_zeros=True``), computed on the host. Where NumPy trims leading
zeros from a result (``polydiv``'s remainder) the output shape would depend on the data,
so, as JAX, that is opt-in: ``trim_leading_zeros=True`` (concrete only).
"""
from __future__ import annotations

import numpy as np

from funcgrad import errors
from funcgrad.core import dtypes
from funcgrad.numpy_api._util import asarray, aval_of, check_arraylike, is_tracer, result_type
from funcgrad.numpy_api.calculus import convolve
from funcgrad.numpy_api.complex_funcs import conj
from funcgrad.numpy_api.creation import arange, eye, ones, zeros, zeros_like
from funcgrad.numpy_api.elementwise import sqrt, where
from funcgrad.numpy_api.indexing import take
from funcgrad.numpy_api.joining import concatenate
from funcgrad.numpy_api.linalg import eigvals, inv, svd
from funcgrad.numpy_api.padding import pad
from funcgrad.numpy_api.products import matmul, outer
from funcgrad.numpy_api.reductions import all as _all
from funcgrad.numpy_api.reductions import argmin, argsort, cumprod
from funcgrad.numpy_api.reductions import sum as _sum
from funcgrad.numpy_api.shape import broadcast_to, cast, static_int, trace

__all__ = [
    "polyval", "polyfit", "poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
    "roots", "vander",
]


def _vec(x, fname, what="p"):
    check_arraylike(fname, x)
    v = asarray(x, fname=fname)
    nd = aval_of(v).ndim
    if nd == 0:
        return v.reshape(1) if is_tracer(v) else np.atleast_1d(v)
    if nd != 1:
        raise ValueError(f"{fname}: {what} must be a 1-d array of coefficients, got shape {aval_of(v).shape}")
    return v


def _inexact(v):
    dt = aval_of(v).dtype
    return v if dt.kind in "fc" else cast(v, dtypes.float64)  # (complex stays complex: NumPy's)


def polyval(p, x, *, unroll=16):
    """Evaluate the polynomial ``p`` (highest power first) at ``x`` by Horner's rule.

    >>> fnp.polyval(np.array([3., 0., 1.]), 5.)
    Array(76.)
    """
    pv = _vec(p, "polyval")
    xv = asarray(x, fname="polyval")  # a Python scalar counts as a strong float64, as NumPy
    y = zeros_like(xv)
    for k in range(aval_of(pv).shape[0]):
        y = y * xv + pv[k]
    return y


def vander(x, N=None, increasing=False):
    """Vandermonde matrix: columns ``x**(N-1), ..., x**0`` (reversed if ``increasing``),
    by cumulative products as NumPy (so integer powers are exact).

    >>> fnp.vander(np.array([1, 2, 3]), 3)
    Array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]])
    """
    check_arraylike("vander", x)
    xv = asarray(x, fname="vander")
    if aval_of(xv).ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional array or sequence, got shape {aval_of(xv).shape}")
    n = aval_of(xv).shape[0]
    N = n if N is None else static_int(N, "vander", "N")
    if N < 0:
        raise ValueError(f"vander: N must be non-negative, got {N}")
    dt = dtypes.promote(aval_of(xv).dtype, np.int64)
    xv = cast(xv, dt)
    if N == 0:
        return zeros((n, 0), dt)
    cols = concatenate([ones((n, 1), dt), broadcast_to(xv[:, None], (n, N - 1))], axis=1)
    out = cumprod(cols, axis=1)
    return out if increasing else out[:, ::-1]


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree ``deg`` (NumPy's column scaling and
    ``rcond``; SVD solve). ``full=True`` adds ``(residuals, rank, singular_values, rcond)``;
    ``cov=True`` (or ``"unscaled"``) adds the coefficient covariance.

    >>> fnp.polyfit(np.array([0., 1., 2.]), np.array([1., 3., 5.]), 1)
    Array([2., 1.])
    """
    deg = static_int(deg, "polyfit", "deg")
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    xv, yv = (_inexact(asarray(v, fname="polyfit")) for v in (x, y))
    xv = cast(xv, result_type(xv, yv))
    yv = cast(yv, result_type(xv, yv))
    order = deg + 1
    if aval_of(xv).ndim != 1 or aval_of(xv).shape[0] == 0:
        raise TypeError(f"polyfit: expected a non-empty 1-d x, got shape {aval_of(xv).shape}")
    if aval_of(yv).ndim not in (1, 2) or aval_of(yv).shape[0] != aval_of(xv).shape[0]:
        raise TypeError(f"polyfit: expected a 1-d or 2-d y with len(y) == len(x), got shapes "
                        f"x {aval_of(xv).shape} and y {aval_of(yv).shape}")
    m = aval_of(xv).shape[0]
    if rcond is None:
        rcond = m * float(np.finfo(aval_of(xv).dtype).eps)
    lhs, rhs = vander(xv, order), yv
    if w is not None:
        wv = asarray(w, fname="polyfit")
        if aval_of(wv).ndim != 1 or aval_of(wv).shape[0] != m:
            raise TypeError(f"polyfit: expected a 1-d w of length {m}, got shape {aval_of(wv).shape}")
        lhs = lhs * wv[:, None]
        rhs = rhs * (wv if aval_of(rhs).ndim == 1 else wv[:, None])
    scale = sqrt(_sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    u, s, vt = svd(lhs, full_matrices=False)
    keep = s > rcond * s[0]
    s_inv = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
    uty = matmul(conj(u).T, rhs)  # (the pseudo-inverse V S^-1 U^H: conjugate for complex data)
    c = matmul(conj(vt).T, (s_inv * uty.T).T if aval_of(rhs).ndim == 2 else s_inv * uty)
    c = (c.T / scale).T
    if not (full or cov):
        return c
    rank = _sum(cast(keep, dtypes.int32), dtype=np.int32)
    resid = rhs - matmul(lhs, (c.T * scale).T)
    sq = _sum((resid * conj(resid)).real if aval_of(resid).dtype.kind == "c" else resid * resid, axis=0)
    if full:
        # NumPy reports residuals only for a full-rank, over-determined fit.
        if m > order and (is_tracer(rank) or int(rank) == order):
            resids = sq.reshape(-1) if aval_of(rhs).ndim == 1 else sq
        else:
            resids = zeros((0,), aval_of(c).dtype)
        return c, resids, rank, s, np.asarray(rcond, aval_of(c).dtype)[()]
    base = inv(matmul(lhs.T, lhs)) / outer(scale, scale)
    if cov == "unscaled":
        fac = 1.0
    else:
        if m <= order:
            raise ValueError(f"polyfit: the number of data points ({m}) must exceed order ({order}) to scale the "
                             "covariance matrix")
        fac = sq / (m - order)
    return c, (base * fac if aval_of(rhs).ndim == 1 else base[:, :, None] * fac)


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots; for a square matrix,
    its characteristic polynomial (Faddeev-LeVerrier, real arithmetic, differentiable).

    >>> fnp.poly(np.array([1., 2.]))
    Array([ 1., -3.,  2.])
    """
    check_arraylike("poly", seq_of_zeros)
    z = asarray(seq_of_zeros, fname="poly")
    shp = aval_of(z).shape
    z = _inexact(z)
    dt = aval_of(z).dtype
    if len(shp) == 2 and shp[0] == shp[1] and shp[0] != 0:
        n = shp[0]
        coefs, mk = [ones((), dt)], zeros((n, n), dt)
        ident = eye(n, dtype=dt)
        for k in range(1, n + 1):
            mk = matmul(z, mk) + coefs[-1] * ident
            coefs.append(-trace(matmul(z, mk)) / k)
        return concatenate([c.reshape(1) if is_tracer(c) else np.reshape(c, 1) for c in coefs])
    if len(shp) != 1:
        raise ValueError(f"poly: input must be 1d or non-empty square 2d array, got shape {shp}")
    a = ones((1,), dt)
    for k in range(shp[0]):
        a = convolve(a, concatenate([ones((1,), dt), -z[k:k + 1]]))
    return a


def _padded(fname, a1, a2):
    a, b = _vec(a1, fname, "a1"), _vec(a2, fname, "a2")
    n1, n2 = aval_of(a).shape[0], aval_of(b).shape[0]
    n = max(n1, n2)
    return pad(a, (n - n1, 0)), pad(b, (n - n2, 0))


def polyadd(a1, a2):
    """Sum of two polynomials (the shorter one padded with leading zeros).

    >>> fnp.polyadd(np.array([1, 2]), np.array([9, 5, 4]))
    Array([9, 6, 6])
    """
    a, b = _padded("polyadd", a1, a2)
    return a + b


def polysub(a1, a2):
    """Difference of two polynomials.

    >>> fnp.polysub(np.array([2, 10, -2]), np.array([3, 10, -4]))
    Array([-1,  0,  2])
    """
    a, b = _padded("polysub", a1, a2)
    return a - b


def _trim_leading(fname, v, tol=0.0):
    if is_tracer(v):
        raise errors.DataDependentShapeError(
            f"{fname}: trim_leading_zeros=True gives a data-dependent shape; it needs a concrete input, got "
            f"{v.aval.str_short()}. Leave trim_leading_zeros=False under jit/vmap/grad.")
    arr = np.asarray(v)
    nz = np.flatnonzero(np.abs(arr) > tol)
    return v[int(nz[0]):] if nz.size else v[-1:]


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Product of two polynomials (their convolution).

    >>> fnp.polymul(np.array([1., 2., 3.]), np.array([9., 5., 1.]))
    Array([ 9., 23., 38., 17.,  3.])
    """
    a, b = _vec(a1, "polymul", "a1"), _vec(a2, "polymul", "a2")
    if trim_leading_zeros:
        a, b = _trim_leading("polymul", a), _trim_leading("polymul", b)
    return convolve(a, b)


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of ``u / v``. The remainder keeps ``len(u)`` coefficients
    (leading zeros included, as JAX) unless ``trim_leading_zeros=True`` (concrete input),
    which drops them as NumPy does.

    >>> q, r = fnp.polydiv(np.array([3., 5., 2.]), np.array([2., 1.]))
    >>> q
    Array([1.5 , 1.75])
    """
    uv, vv = _inexact(_vec(u, "polydiv", "u")), _inexact(_vec(v, "polydiv", "v"))
    dt = result_type(uv, vv)
    uv, vv = cast(uv, dt), cast(vv, dt)
    m, n = aval_of(uv).shape[0] - 1, aval_of(vv).shape[0] - 1
    scale = 1.0 / vv[0]
    q = []
    for k in range(m - n + 1):
        d = scale * uv[k]
        q.append(d.reshape(1) if is_tracer(d) else np.reshape(d, 1))
        uv = uv - pad(d * vv, (k, m - n - k))
    q = concatenate(q) if q else zeros((1,), dt)
    if trim_leading_zeros:
        uv = _trim_leading("polydiv", uv, tol=1e-8)  # NumPy's allclose(r[0], 0) test
    return q, uv


def polyder(p, m=1):
    """The ``m``-th derivative of the polynomial ``p``.

    >>> fnp.polyder(np.array([1, 1, 1, 1]), 2)
    Array([6, 2])
    """
    pv = _vec(p, "polyder")
    m = static_int(m, "polyder", "m")
    if m < 0:
        raise ValueError(f"polyder: order of derivative must be positive (see polyint), got m={m}")
    for _ in range(m):
        n = aval_of(pv).shape[0] - 1
        if n <= 0:
            return pv[:0]
        pv = pv[:-1] * arange(n, 0, -1)
    return pv


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of ``p``; integration constants ``k`` (a scalar, or one
    per integration, the first used first).

    >>> fnp.polyint(np.array([3., 2., 1.]))
    Array([1., 1., 1., 0.])
    """
    pv = _vec(p, "polyint")
    m = static_int(m, "polyint", "m")
    if m < 0:
        raise ValueError(f"polyint: order of integral must be positive (see polyder), got m={m}")
    if m == 0:
        return pv
    kv = zeros((m,)) if k is None else asarray(k, fname="polyint")
    if aval_of(kv).ndim == 0:
        kv = broadcast_to(kv, (m,))
    if aval_of(kv).ndim != 1 or aval_of(kv).shape[0] < m:
        raise ValueError(f"polyint: k must be a scalar or a sequence of at least m={m} constants, got shape "
                         f"{aval_of(kv).shape}")
    pv = _inexact(pv)
    dt = result_type(pv, kv) if aval_of(kv).dtype.kind in "fc" else aval_of(pv).dtype
    for i in range(m):
        n = aval_of(pv).shape[0]
        pv = concatenate([cast(pv / arange(n, 0, -1), dt), cast(kv[i:i + 1], dt)])
    return pv


def roots(p, *, strip_zeros=True):
    """Roots of the polynomial ``p`` (eigenvalues of its companion matrix).

    ``strip_zeros=True`` (the default) is NumPy's ``roots``: concrete ``p`` only (the
    number of roots depends on its values), NumPy's values and dtype (real when every
    root is real, else complex). ``strip_zeros=False`` is JAX's traceable form: always
    complex, ``len(p) - 1`` roots, with a NaN for each leading zero of ``p`` (the zero
    roots from trailing zeros are sorted to the end first); it differentiates through
    ``linalg.eigvals``.

    >>> fnp.roots(np.array([1., -3., 2.]))
    Array([2., 1.])
    """
    pv = _vec(p, "roots")
    if not strip_zeros:
        return _roots_traceable(pv)
    if is_tracer(pv):
        raise errors.DataDependentShapeError(
            f"roots: strip_zeros=True needs a concrete p (stripping zeros is data-dependent), got "
            f"{pv.aval.str_short()}; pass strip_zeros=False to trace it (JAX's form)")
    arr = np.asarray(pv)
    nz = np.flatnonzero(arr)
    if nz.size == 0:
        return np.zeros((0,), np.float64)
    trailing = arr.size - 1 - int(nz[-1])
    arr = arr[int(nz[0]):int(nz[-1]) + 1]
    arr = arr if arr.dtype.kind in "fc" else arr.astype(np.promote_types(arr.dtype, np.float64))
    n = arr.size - 1
    if n >= 1:
        companion = np.diag(np.ones(n - 1, arr.dtype), -1)
        companion[0, :] = -arr[1:] / arr[0]
        vals = np.linalg.eigvals(companion)  # (NumPy's: real when every root is real)
    else:
        vals = np.zeros((0,), arr.dtype)
    return np.concatenate([vals, np.zeros(trailing, vals.dtype)])


def _roots_traceable(pv):
    """JAX's ``roots(p, strip_zeros=False)``: roll the k leading zeros to the end (they
    become k zero roots), take the companion matrix's eigenvalues, sort zero roots last
    and replace the last k by NaN."""
    pv = _inexact(pv)
    n = aval_of(pv).shape[0]
    cdt = dtypes.complex_dtype(aval_of(pv).dtype)
    if n < 2:
        return zeros((0,), cdt)
    is_zero = pv == 0
    lead = where(_all(is_zero), n, argmin(is_zero))
    pv = where(lead == n, ones((), aval_of(pv).dtype), pv)  # (all zero: no LAPACK on NaNs)
    pv = take(pv, (arange(n) + lead) % n)
    first = -pv[1:] / pv[0]
    companion = concatenate([first.reshape(1, n - 1), eye(n - 2, n - 1, dtype=aval_of(pv).dtype)], axis=0)
    vals = eigvals(companion)
    vals = take(vals, argsort(vals == 0, stable=True))
    return where(arange(n - 1) < n - 1 - lead, vals, np.asarray(complex(np.nan, np.nan), cdt))
