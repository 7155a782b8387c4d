"""Decompositions built on the others: ``polar`` (from the SVD), ``qr_multiply`` (from the
economic QR) and ``eigh_tridiagonal`` (from ``eigh`` of the assembled tridiagonal
matrix). Each inherits the derivatives of what it is built on."""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import aval_of, shape_of
from funcgrad.scipy.linalg import _util as U
from funcgrad.scipy.linalg._decomp import qr


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """Polar decomposition ``a = u p`` (``side='right'``) or ``a = p u`` (``'left'``): ``u``
    (m, n) with orthonormal columns or rows, ``p`` Hermitian positive semi-definite ((n, n)
    right, (m, m) left). Computed from the economic SVD ``a = W s Vh`` as ``u = W Vh``,
    ``p = Vh^H s Vh`` or ``W s W^H``, whichever ``method`` ('qdwh' or 'svd': JAX's
    iteration converges to the same factors; ``eps`` and ``max_iterations`` are accepted
    and unused) -- so any shape works on either side, and ``grad`` follows the SVD's.

    >>> u, p = polar(np.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> u
    Array([[ 1.,  0.],
           [ 0., -1.]])
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    a = U.matrix("polar", a, square=False)
    w, s, vh = fnp.linalg.svd(a, full_matrices=False)
    u = fnp.matmul(w, vh)
    if side == "right":
        p = fnp.matmul(fnp.conj(U.mT(vh)) * s[..., None, :], vh)
    else:
        p = fnp.matmul(w * s[..., None, :], fnp.conj(U.mT(w)))
    return u, p


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """``(c @ Q, R)`` (``mode='right'``) or ``(Q @ c, R)`` (``'left'``) for the economic QR
    of ``a`` (m, n), ``Q`` (m, k), ``R`` (k, n), ``k = min(m, n)``; ``conjugate`` uses
    ``conj(Q)``. A 1-d ``c`` is a row (right) or a column (left) and gives a 1-d result, as
    SciPy. ``pivoting`` is not supported (as JAX).

    >>> cq, r = qr_multiply(np.eye(2), np.array([[1.0, 2.0]]))
    >>> cq
    Array([[1., 2.]])
    """
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True is not supported (as in JAX)")
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    a = U.matrix("qr_multiply", a, square=False)
    c = U.as_float("qr_multiply", c, "c")
    a, c = U.promote("qr_multiply", a, c)
    q, r = qr(a, mode="economic")
    if conjugate:
        q = fnp.conj(q)
    m, k = shape_of(q)[-2:]
    vector = len(shape_of(c)) == 1
    need = m if mode == "right" else k
    axis_len = shape_of(c)[-1] if mode == "right" or vector else shape_of(c)[-2]
    if axis_len != need:
        raise ValueError(f"qr_multiply: c with shape {shape_of(c)} does not fit Q of shape ({m}, {k}) with "
                         f"mode={mode!r} (c needs {need} {'columns' if mode == 'right' else 'rows'})")
    if mode == "right":
        out = fnp.matmul(c, q)
    else:
        out = fnp.matmul(q, c) if not vector else fnp.matmul(q, c[:, None])[:, 0]
    return out, r


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """Eigenvalues (ascending) and, unless ``eigvals_only``, eigenvectors of the symmetric
    (Hermitian) tridiagonal matrix with diagonal ``d`` (n,) and off-diagonal ``e`` (n - 1,).

    ``select``: 'a' all, 'i' the eigenvalues with indices ``select_range = (lo, hi)``
    (inclusive), 'v' those in the half-open interval ``(lo, hi]`` -- 'v' needs concrete
    values (the count decides the shape), so it works eagerly and not under ``jit``.
    The matrix is assembled and handed to ``eigh`` (LAPACK's ``syevd``), so the values
    match SciPy's ``stebz``/``stemr`` to rounding; ``tol`` and ``key`` (JAX's bisection
    tolerance and its random start) are accepted and unused.

    >>> eigh_tridiagonal(np.array([2.0, 2.0]), np.array([1.0]), eigvals_only=True)
    Array([1., 3.])
    """
    _util.check_arraylike("eigh_tridiagonal", d, e)
    d, e = fnp.atleast_1d(_util.asarray(d, fname="eigh_tridiagonal")), fnp.atleast_1d(
        _util.asarray(e, fname="eigh_tridiagonal"))
    d, e = _util.promote_dtypes_inexact(d, e, fname="eigh_tridiagonal")
    n = shape_of(d)[-1]
    if len(shape_of(d)) != 1 or shape_of(e) != (max(n - 1, 0),):
        raise ValueError(f"eigh_tridiagonal: d must have shape (n,) and e shape (n - 1,), got {shape_of(d)} "
                         f"and {shape_of(e)}")
    if select not in ("a", "i", "v"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    dtype = aval_of(e).dtype
    t = fnp.diag(d.astype(dtype)) + fnp.diag(e, 1) + fnp.diag(fnp.conj(e), -1)
    w, v = fnp.linalg.eigh(t)
    if select == "i":
        lo, hi = (int(x) for x in select_range)
        if not 0 <= lo <= hi < n:
            raise ValueError(f"eigh_tridiagonal: select_range {select_range} must satisfy 0 <= lo <= hi < n = {n}")
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    elif select == "v":
        lo, hi = select_range
        keep = np.nonzero((np.asarray(w) > lo) & (np.asarray(w) <= hi))[0]
        w, v = w[keep], v[:, keep]
    return w if eigvals_only else (w, v)
