"""``funcgrad.lax.linalg``: the matrix decompositions with ``jax.lax.linalg``'s signatures
and result orders (``eigh`` returns ``(v, w)``, ``qr``/``svd`` default to full matrices,
``triangular_solve`` solves ``X @ op(a) = b`` unless ``left_side``). ``funcgrad.lax``'s own
``cholesky``/``eigh``/``qr``/``svd``/``triangular_solve`` are the primitives' forms."""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as _lax
from funcgrad.core.trace import get_aval_any

__all__ = ["cholesky", "eigh", "lu", "qr", "svd", "triangular_solve"]


def _mT(x):
    nd = get_aval_any(x).ndim
    return _lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _mH(x):
    x = _mT(x)
    return _lax.conj(x) if get_aval_any(x).dtype.kind == "c" else x


def _symmetrize(x):
    aval = get_aval_any(x)
    return _lax.mul(_lax.add(x, _mH(x)), np.full(aval.shape, 0.5, aval.dtype))


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor of (a stack of) Hermitian positive-definite matrices; with
    ``symmetrize_input`` the input is first replaced by ``(x + x^H) / 2``."""
    return _lax.cholesky(_symmetrize(x) if symmetrize_input else x)


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index=None):
    """``(v, w)``: eigenvectors (columns) and ascending eigenvalues of a Hermitian matrix,
    read from its ``lower`` (or upper) triangle; ``subset_by_index=(lo, hi)`` keeps
    eigenpairs ``lo`` to ``hi - 1``."""
    w, v = _lax.eigh(_symmetrize(x) if symmetrize_input else x, lower=lower)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w, v = w[..., lo:hi], v[..., :, lo:hi]
    return v, w


def lu(x):
    """``(lu, pivots, permutation)``: L (unit lower, below the diagonal) and U packed in
    ``lu``, LAPACK-style row ``pivots``, and ``permutation`` with ``x[permutation] = L @ U``."""
    return _lax.lu(x)


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """``(q, r)`` with ``x = q @ r``: complete (``q`` square) by default, reduced with
    ``full_matrices=False``. Column pivoting, and the complete form of a tall matrix, are not
    implemented."""
    if pivoting:
        raise NotImplementedError("lax.linalg.qr: pivoting=True is not implemented in funcgrad")
    m, n = get_aval_any(x).shape[-2:]
    if full_matrices and m > n:
        raise NotImplementedError(f"lax.linalg.qr: full_matrices=True of a tall matrix (shape "
                                  f"{get_aval_any(x).shape}) is not implemented in funcgrad; pass full_matrices=False")
    return _lax.qr(x)  # (for m <= n the reduced and complete forms agree)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None, algorithm=None):
    """``(u, s, vh)`` with ``s`` descending (just ``s`` without ``compute_uv``);
    ``subset_by_index=(lo, hi)`` keeps singular triples ``lo`` to ``hi - 1``."""
    out = _lax.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)
    if subset_by_index is None:
        return out
    lo, hi = subset_by_index
    if not compute_uv:
        return out[..., lo:hi]
    u, s, vh = out
    return u[..., :, lo:hi], s[..., lo:hi], vh[..., lo:hi, :]


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False):
    """Solve ``op(a) @ x = b`` (``left_side=True``) or ``x @ op(a) = b`` (the default, as
    JAX's) for ``x``, reading one triangle of ``a``; ``op`` transposes and/or conjugates."""
    if conjugate_a and get_aval_any(a).dtype.kind == "c":
        a = _lax.conj(a)
    if left_side:
        return _lax.triangular_solve(a, b, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    # x @ op(a) = b  is  op(a)^T @ x^T = b^T
    xt = _lax.triangular_solve(a, _mT(b), lower=lower, transpose_a=not transpose_a, unit_diagonal=unit_diagonal)
    return _mT(xt)
