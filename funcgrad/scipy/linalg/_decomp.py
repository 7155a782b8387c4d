"""Factorisations and solves with SciPy's conventions (defaults differ from
``numpy.linalg``: ``cholesky`` is *upper* by default, ``qr`` is ``mode='full'``,
``lu`` returns ``P`` with ``a = P @ L @ U``). Composites of the linear-algebra
primitives, so every function differentiates, batches over leading dims and compiles.
SciPy's ``overwrite_*``/``check_finite`` flags are accepted and ignored (as in JAX):
funcgrad never writes into its inputs, and non-finite input gives NaN, not an error."""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.prims import linalg as _plin
from funcgrad.numpy_api._util import aval_of, shape_of
from funcgrad.scipy.linalg import _util as U

_INT = _plin.INDEX_DTYPE


def _tri_solve(a, b, *, lower, trans=False, unit_diagonal=False):
    return _plin.triangular_solve(a, b, lower=lower, transpose_a=trans, unit_diagonal=unit_diagonal)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """Solve ``a x = b`` (``trans=0``) or ``a^T x = b`` (``trans=1``/``2``) for
    triangular ``a``, reading only its ``lower`` (default: upper) triangle.

    >>> solve_triangular(np.array([[2.0, 1.0], [0.0, 4.0]]), np.array([3.0, 4.0]))
    Array([1., 1.])
    """
    transposed = U.trans_flag("solve_triangular", trans)
    a, b, vector = U.rhs("solve_triangular", U.matrix("solve_triangular", a), b)
    x = _tri_solve(a, b, lower=bool(lower), trans=transposed, unit_diagonal=bool(unit_diagonal))
    return U.unvector(x, vector)


# --- Cholesky ---------------------------------------------------------------------------
def _chol(fname, a, lower):
    """Cholesky factor from the symmetric part of ``a`` (JAX's ``symmetrize_input``), so
    gradients are symmetric; exact for symmetric input."""
    a = U.matrix(fname, a)
    l = _plin.cholesky((a + U.mT(a)) * 0.5)
    return l if lower else U.mT(l)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor of a symmetric positive-definite matrix: *upper* ``R`` with
    ``a = R^T R`` by default (SciPy's convention), lower ``L`` with ``lower=True``.
    Not positive definite: NaNs (JAX's convention)."""
    return _chol("cholesky", a, bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for ``cho_solve``. Unlike SciPy, the unused triangle of ``c`` is
    zero (SciPy leaves arbitrary values there), as in JAX."""
    return _chol("cho_factor", a, bool(lower)), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` given ``cho_factor(a)``."""
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError("cho_solve: c_and_lower must be the pair (c, lower) returned by cho_factor") from None
    c, b, vector = U.rhs("cho_solve", U.matrix("cho_solve", c, "c"), b)
    lower = bool(lower)
    # lower: a = L L^T; upper: a = R^T R. First solve with the lower factor, then its transpose.
    y = _tri_solve(c, b, lower=lower, trans=not lower)
    x = _tri_solve(c, y, lower=lower, trans=lower)
    return U.unvector(x, vector)


# --- LU ---------------------------------------------------------------------------------
def _perm_matrix(perm, dtype):
    return _plin.permutation_matrix(perm, dtype)  # (P @ A)[i] = A[perm[i]]


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """LU with partial pivoting as SciPy: ``(p, l, u)`` with ``a = p @ l @ u``, or
    ``(p @ l, u)`` when ``permute_l``; ``p_indices=True`` gives ``p`` as int32 row
    indices with ``a = l[p] @ u``. Square and wide (m <= n) matrices; tall ones are
    not supported (the primitive factors square matrices)."""
    a = U.matrix("lu", a, square=False)
    m, n = shape_of(a)[-2:]
    if m > n:
        raise NotImplementedError(f"lu: tall matrices (m > n) are not supported, got shape {shape_of(a)}")
    square = a[..., :, :m]
    lu_, _, perm = _plin.lu(square)
    dt = aval_of(a).dtype
    eye = np.eye(m, dtype=dt)
    l = fnp.tril(lu_, -1) + eye
    pmat = _perm_matrix(perm, dt)  # pmat @ a == l @ u
    u = fnp.triu(lu_) if m == n else _tri_solve(l, pmat @ a, lower=True, unit_diagonal=True)
    p = U.mT(pmat)
    if permute_l:
        return p @ l, u
    if p_indices:
        inv = fnp.argsort(perm, axis=-1).astype(fnp.int32)  # a = l[inv] @ u
        return inv, l, u
    return p, l, u


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)``: ``lu`` holds U and the unit-lower L, ``piv`` LAPACK's row
    interchanges (0-based, int32: row i was swapped with row ``piv[i]``)."""
    lu_, piv, _ = _plin.lu(U.matrix("lu_factor", a))
    return lu_, piv


def _pivots_to_permutation(piv):
    """Apply LAPACK's successive row swaps to ``arange(n)``: ``a[perm] = l @ u``."""
    shape = shape_of(piv)
    n = shape[-1]
    iota = lax.iota(_INT, shape, len(shape) - 1)

    def swap(k, perm):
        pk = fnp.take_along_axis(piv, fnp.full(shape[:-1] + (1,), k, _INT), axis=-1)
        at_k = fnp.take_along_axis(perm, fnp.full(shape[:-1] + (1,), k, _INT), axis=-1)
        at_p = fnp.take_along_axis(perm, pk, axis=-1)
        return fnp.where(iota == k, at_p, fnp.where(iota == pk, at_k, perm))

    return lax.fori_loop(0, n, swap, iota)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` (``trans=0``) or ``a^T x = b`` (1, 2) from ``lu_factor(a)``."""
    try:
        lu_, piv = lu_and_piv
    except (TypeError, ValueError):
        raise TypeError("lu_solve: lu_and_piv must be the pair (lu, piv) returned by lu_factor") from None
    transposed = U.trans_flag("lu_solve", trans)
    lu_ = U.matrix("lu_solve", lu_, "lu")
    piv = fnp.asarray(piv)
    if shape_of(piv) != shape_of(lu_)[:-1] or aval_of(piv).dtype.kind != "i":
        raise ValueError(f"lu_solve: piv must be integers of shape {shape_of(lu_)[:-1]}, got "
                         f"{aval_of(piv).dtype} {shape_of(piv)}")
    pmat = _perm_matrix(_pivots_to_permutation(piv.astype(_INT)), aval_of(lu_).dtype)
    lu_, b, vector = U.rhs("lu_solve", lu_, b)
    pmat = fnp.broadcast_to(pmat, shape_of(lu_))
    if not transposed:  # P a = L U
        y = _tri_solve(lu_, pmat @ b, lower=True, unit_diagonal=True)
        x = _tri_solve(lu_, y, lower=False)
    else:  # a^T = U^T L^T P
        y = _tri_solve(lu_, b, lower=False, trans=True)
        x = U.mT(pmat) @ _tri_solve(lu_, y, lower=True, trans=True, unit_diagonal=True)
    return U.unvector(x, vector)


# --- solve, inv, det --------------------------------------------------------------------
_ASSUME = {"gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym", "her": "sym",
           "hermitian": "sym", "pos": "pos", "positive definite": "pos"}


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False):
    """Solve ``a x = b``. ``assume_a``: ``'gen'`` (default: LU), ``'sym'``/``'her'``
    (LU of the symmetric matrix mirrored from the ``lower``/upper triangle, the one
    SciPy reads), ``'pos'`` (Cholesky of that matrix). ``b`` is a vector when ``b.ndim == a.ndim - 1``."""
    kind = "gen" if assume_a is None else _ASSUME.get(assume_a)
    if kind is None:
        raise ValueError(f"solve: assume_a must be one of {sorted(_ASSUME)}, got {assume_a!r}")
    a, b, vector = U.rhs("solve", U.matrix("solve", a), b)
    if kind != "gen":
        half = fnp.tril(a) if lower else fnp.triu(a)
        a = half + U.mT(half) - fnp.tril(fnp.triu(a))  # the triangle SciPy reads, mirrored
    elif transposed:
        a = U.mT(a)
    if kind == "pos":
        l = _plin.cholesky(a)
        x = _tri_solve(l, _tri_solve(l, b, lower=True), lower=True, trans=True)
    else:
        x = fnp.linalg.solve(a, b)
    return U.unvector(x, vector)


def inv(a, overwrite_a=False, check_finite=True):
    """Inverse of (a stack of) square matrices; singular ones give NaNs (JAX)."""
    return fnp.linalg.inv(U.matrix("inv", a))


def det(a, overwrite_a=False, check_finite=True):
    """Determinant (LU); its gradient is the adjugate, also at singular matrices."""
    return fnp.linalg.det(U.matrix("det", a))


# --- eigh, qr, svd ----------------------------------------------------------------------
def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
         check_finite=True, subset_by_index=None, subset_by_value=None, driver=None, turbo=True,
         eigvals=None):
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric ``a``, read
    from its ``lower`` triangle (symmetrized as in JAX, so gradients are symmetric).
    With ``b`` (symmetric positive definite): the generalized problem ``a v = w b v``
    (``type=1``) through ``b``'s Cholesky factor, eigenvectors normalised so
    ``v^T b v = I`` as SciPy's. ``subset_by_*``/``driver`` are not supported."""
    if subset_by_index is not None or subset_by_value is not None or eigvals is not None:
        raise NotImplementedError("eigh: subset_by_index/subset_by_value/eigvals are not supported; slice the result")
    a = U.matrix("eigh", a)
    tri = fnp.tril(a) if lower else fnp.triu(a)
    sym = tri + U.mT(tri) - fnp.tril(fnp.triu(a))
    if b is None:
        w, v = _plin.eigh(sym)
    else:
        if type != 1:
            raise NotImplementedError(f"eigh: only type=1 (a v = w b v) is supported, got type={type!r}")
        b = U.matrix("eigh", b, "b")
        if shape_of(b)[-1] != shape_of(a)[-1]:
            raise ValueError(f"eigh: b with shape {shape_of(b)} does not match a with shape {shape_of(a)}")
        sym, b = U.promote("eigh", sym, b)
        l = _chol("eigh", b, True)
        l = fnp.broadcast_to(l, shape_of(sym)) if shape_of(l) != shape_of(sym) else l
        c = U.mT(_tri_solve(l, U.mT(_tri_solve(l, sym, lower=True)), lower=True))  # L^-1 a L^-T
        w, y = _plin.eigh((c + U.mT(c)) * 0.5)
        v = _tri_solve(l, y, lower=True, trans=True)
    return w if eigvals_only else (w, v)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR as SciPy: ``mode='full'`` (default) ``(Q, R)`` with Q (m, m), R (m, n);
    ``'economic'`` Q (m, k), R (k, n); ``'r'`` gives ``(R,)`` (a 1-tuple, as SciPy).
    Tall full mode: the extra columns of Q (a basis of the orthogonal complement, not
    unique) come from the QR of ``[a | I]``; derivatives of Q and R are exact, those of
    the extra columns are those of that construction. ``'raw'`` and ``pivoting`` are
    not supported."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported")
    if mode not in ("full", "economic", "r"):
        if mode == "raw":
            raise NotImplementedError("qr: mode='raw' (LAPACK's Householder form) is not supported")
        raise ValueError(f"qr: mode must be 'full', 'r', 'economic' or 'raw', got {mode!r}")
    a = U.matrix("qr", a, square=False)
    m, n = shape_of(a)[-2:]
    q, r = _plin.qr(a)
    if mode != "economic" and m > n:
        r = fnp.concatenate([r, fnp.zeros(shape_of(r)[:-2] + (m - n, n), aval_of(r).dtype)], axis=-2)
        if mode == "full":
            wide = fnp.concatenate([a, fnp.broadcast_to(np.eye(m, dtype=aval_of(a).dtype), shape_of(a)[:-1] + (m,))],
                                   axis=-1)
            q = fnp.concatenate([q, _plin.qr(wide)[0][..., n:]], axis=-1)
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """``(U, s, Vh)`` with ``a = U @ diag(s) @ Vh`` (s descending), or ``s`` alone."""
    a = U.matrix("svd", a, square=False)
    if not compute_uv:
        return fnp.linalg.svd(a, compute_uv=False)
    return tuple(fnp.linalg.svd(a, full_matrices=full_matrices))
