"""Similarity reductions and what is built on them: ``hessenberg``, ``schur``,
``rsf2csf``, ``funm``, ``solve_sylvester``.

``hessenberg`` is LAPACK's ``gehrd`` written out: one Householder reflector per column,
``H_k = I - tau v v^H`` with ``v[0] = 1`` and ``beta = -sign(Re alpha) ||x||``, so the
signs match SciPy's. The order is static, so it is a loop-free composite (differentiable).

``schur`` is built on ``eig`` (LAPACK ``geev``, whose eigenvalues come in the order of its
own Schur form) instead of a QR iteration of its own: the QR factorisation ``V = Q R`` of
the eigenvectors gives a unitary ``Q`` whose leading columns span the leading invariant
subspaces, so ``T = Q^H A Q`` is upper triangular. For ``output='real'`` a complex pair's
eigenvectors enter as their real and imaginary parts, so ``Q`` is real and ``T`` quasi
upper triangular with a 2x2 block per pair (not LAPACK's standardised block: its diagonal
entries need not be equal; Schur forms are not unique). The part of ``Q^H A Q`` below the
(quasi-)triangle is rounding error for diagonalizable matrices and is set to zero; for a
defective or nearly defective matrix (a Jordan block) the eigenvectors are ill-conditioned
and ``A - Z T Z^H`` grows like the eigenvalues' sensitivity (about ``eps^(1/k)`` for a
k x k Jordan block), where LAPACK's ``gees`` stays at rounding level.

``funm`` is the Schur-Parlett recurrence (Golub & Van Loan, Algorithm 11.1.1) on the
complex Schur form; ``solve_sylvester`` is Bartels-Stewart (a triangular solve per
column of the Schur forms) or the eigendecomposition method, as JAX's.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import aval_of, shape_of
from funcgrad.scipy.linalg import _util as U
from funcgrad.scipy.linalg._decomp import solve, solve_triangular

__all__ = ["hessenberg", "schur", "rsf2csf", "funm", "solve_sylvester"]


def _cdtype(dtype):
    return np.result_type(dtype, np.complex64)


def _mH(x):
    return fnp.conj(U.mT(x))


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """Upper Hessenberg form ``H = Q^H a Q`` (zero below the first subdiagonal), with the
    unitary ``Q`` when ``calc_q``. Householder reflections with LAPACK's sign convention,
    so the result matches SciPy's; batched over leading dims and differentiable.

    >>> h = hessenberg(np.arange(9.0).reshape(3, 3))
    >>> float(h[2, 0])
    0.0
    """
    a = U.matrix("hessenberg", a)
    n = shape_of(a)[-1]
    dtype = aval_of(a).dtype
    q = U.eye_like(a)
    with np.errstate(all="ignore"):
        # n - 1 reflectors: the last only makes a complex subdiagonal entry real; n <= 2 is
        # already Hessenberg and SciPy returns it as it is.
        for k in range(n - 1 if n > 2 else 0):
            x = a[..., k + 1:, k]
            alpha = x[..., 0]
            xnorm = fnp.sqrt(fnp.sum(fnp.abs(x[..., 1:]) ** 2, axis=-1))
            norm = fnp.sqrt(fnp.abs(alpha) ** 2 + xnorm**2)
            re = fnp.real(alpha)
            beta = fnp.where(re >= 0, -norm, norm)
            skip = (xnorm == 0) & (fnp.imag(alpha) == 0)  # already reduced: H = I (LAPACK's tau = 0)
            beta_s = fnp.where(skip, 1.0, beta)
            tau = fnp.where(skip, 0.0, (beta_s - alpha) / beta_s)
            denom = fnp.where(skip, 1.0, alpha - beta_s)
            v = fnp.concatenate([fnp.zeros(shape_of(x)[:-1] + (k + 1,), dtype), fnp.ones_like(x[..., :1]),
                                 x[..., 1:] / denom[..., None]], axis=-1)
            tau = tau.astype(dtype)
            # a := H^H a H, q := q H with H = I - tau v v^H
            a = a - fnp.conj(tau)[..., None, None] * v[..., :, None] * fnp.matmul(fnp.conj(v)[..., None, :], a)
            a = a - tau[..., None, None] * fnp.matmul(a, v[..., :, None]) * fnp.conj(v)[..., None, :]
            q = q - tau[..., None, None] * fnp.matmul(q, v[..., :, None]) * fnp.conj(v)[..., None, :]
    h = fnp.where(np.tril(np.ones((n, n), bool), -2), fnp.zeros((), dtype), a)
    return (h, q) if calc_q else h


def schur(a, output="real"):
    """Schur decomposition ``a = Z T Z^H``: ``Z`` unitary (orthogonal for real ``a`` with
    ``output='real'``), ``T`` upper triangular (``'complex'``) or quasi upper triangular
    with 2x2 blocks for complex-conjugate eigenvalue pairs (``'real'``). Built on ``eig``
    (see the module notes: accurate for diagonalizable matrices). As JAX's, not
    differentiable-by-design (a derivative flows through ``eig`` where it exists).

    >>> t, z = schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> fnp.round(fnp.diagonal(t), 12)
    Array([1., 3.])
    """
    if output not in ("real", "complex", "r", "c"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    a = U.matrix("schur", a)
    n = shape_of(a)[-1]
    dtype = aval_of(a).dtype
    complex_out = output in ("complex", "c") or dtype.kind == "c"
    if n == 0:
        return a.astype(_cdtype(dtype)) if complex_out else a, a
    w, v = fnp.linalg.eig(a)
    if complex_out:
        a = a.astype(_cdtype(dtype))
        z = fnp.linalg.qr(v)[0]
        t = fnp.matmul(_mH(z), fnp.matmul(a, z))
        return fnp.where(np.tril(np.ones((n, n), bool), -1), fnp.zeros((), aval_of(t).dtype), t), z
    # A pair (LAPACK: the one with positive imaginary part first) spans the same real
    # plane as the real and imaginary parts of its first eigenvector.
    wi = fnp.imag(w)
    basis = fnp.where((wi >= 0)[..., None, :], fnp.real(v), fnp.imag(v)).astype(dtype)
    z = fnp.linalg.qr(basis)[0]
    t = fnp.matmul(U.mT(z), fnp.matmul(a, z))
    first_of_pair = fnp.concatenate([wi[..., :-1] > 0, fnp.zeros(shape_of(wi)[:-1] + (1,), bool)], axis=-1)
    keep = np.triu(np.ones((n, n), bool))
    sub = fnp.zeros(shape_of(t), bool) | (np.eye(n, k=-1, dtype=bool) & first_of_pair[..., None, :])
    return fnp.where(keep | sub, t, fnp.zeros((), dtype)), z


def _block_indicators(n, m, dtype):
    """0/1 matrices of the 2x2 block at rows/columns (m-1, m): its entries (0,0), (0,1),
    (1,0), (1,1), and the identity outside the block."""
    ind = np.zeros((4, n, n), dtype)
    for k, (i, j) in enumerate([(m - 1, m - 1), (m - 1, m), (m, m - 1), (m, m)]):
        ind[k, i, j] = 1
    outside = np.eye(n, dtype=dtype)
    outside[m - 1, m - 1] = outside[m, m] = 0
    return ind, outside


def rsf2csf(T, Z, check_finite=True):
    """Convert a real Schur form ``(T, Z)`` (``schur(a, 'real')``) to the complex one: each
    2x2 block is triangularised by a complex Givens rotation, as SciPy's algorithm; a block
    whose subdiagonal is below ``eps (|t_{m-1,m-1}| + |t_{m,m}|)`` is left as it is (its
    subdiagonal zeroed). Works under ``jit``: every rotation is computed, the identity where
    the test fails.

    >>> t, z = rsf2csf(np.array([[0.0, -1.0], [1.0, 0.0]]), np.eye(2))
    >>> fnp.round(fnp.diagonal(t), 12)
    Array([0.+1.j, 0.-1.j])
    """
    T = U.matrix("rsf2csf", T)
    Z = U.matrix("rsf2csf", Z, "Z")
    if shape_of(T)[-1] != shape_of(Z)[-1]:
        raise ValueError(f"rsf2csf: T and Z must have the same shape, got {shape_of(T)} and {shape_of(Z)}")
    T, Z = U.promote("rsf2csf", T, Z)
    cdt = _cdtype(aval_of(T).dtype)
    T, Z = T.astype(cdt), Z.astype(cdt)
    n = shape_of(T)[-1]
    eps = float(np.finfo(np.float64).eps)
    with np.errstate(all="ignore"):
        for m in range(n - 1, 0, -1):
            a, b = T[..., m - 1, m - 1], T[..., m - 1, m]
            c, d = T[..., m, m - 1], T[..., m, m]
            rotate = fnp.abs(c) > eps * (fnp.abs(a) + fnp.abs(d))
            mu0 = (a - d) / 2 + fnp.sqrt(((a - d) / 2) ** 2 + b * c)  # an eigenvalue of the block, minus d
            r = fnp.sqrt(fnp.abs(mu0) ** 2 + fnp.abs(c) ** 2)
            r = fnp.where(rotate, r, 1.0)
            cs = fnp.where(rotate, mu0 / r, 1.0)[..., None, None]
            sn = fnp.where(rotate, c / r, 0.0)[..., None, None]
            # The rotation as an n x n unitary G (identity outside rows/columns m-1, m): the
            # rows it mixes are zero left of m-1 and the columns zero below m (SciPy's
            # slices), so G T G^H is the same update as three small products.
            ind, outside = _block_indicators(n, m, cdt)
            g = outside + fnp.conj(cs) * ind[0] + sn * ind[1] - sn * ind[2] + cs * ind[3]
            T = fnp.matmul(g, fnp.matmul(T, _mH(g)))
            Z = fnp.matmul(Z, _mH(g))
            T = fnp.where(np.eye(n, k=-1, dtype=bool) & (np.arange(n) == m)[:, None], 0.0, T)
    return T, Z


def funm(A, func, disp=True):
    """The matrix function ``func(A)`` for a scalar function ``func`` (applied elementwise
    to a vector of eigenvalues): the Schur-Parlett recurrence on the complex Schur form
    (Golub & Van Loan, Algorithm 11.1.1), as SciPy's and JAX's. Complex result (as JAX).
    With ``disp=False`` also an estimate of the relative error (large when eigenvalues
    nearly coincide, where the recurrence divides by their differences).

    >>> f = funm(np.array([[1.0, 2.0], [0.0, 3.0]]), fnp.exp)
    >>> fnp.round(f.real, 6)
    Array([[ 2.718282, 17.367255],
           [ 0.      , 20.085537]])
    """
    A = U.matrix("funm", A)
    if len(shape_of(A)) != 2:
        raise ValueError(f"funm: A must be a square matrix, got shape {shape_of(A)}")
    T, Z = schur(A, "complex")
    n = shape_of(T)[-1]
    dtype = aval_of(T).dtype
    diag = fnp.diagonal(T)
    Fm = fnp.asarray(func(diag)).astype(dtype) * np.eye(n, dtype=dtype)
    den = diag[None, :] - diag[:, None]  # T[j, j] - T[i, i]
    zero_den = den == 0
    safe_den = fnp.where(zero_den, 1.0, den)
    minden = fnp.abs(T[0, 0]) if n else fnp.zeros((), np.float64)
    with np.errstate(all="ignore"):
        for p in range(1, n):
            # Superdiagonal p at once: with it still zero in F, the recurrence's
            # T[i,j] (F[j,j] - F[i,i]) + sum_{i<k<j} (T[i,k] F[k,j] - F[i,k] T[k,j]) is (T F - F T)[i,j].
            on_p = np.eye(n, k=p, dtype=bool)
            s_ = fnp.matmul(T, Fm) - fnp.matmul(Fm, T)
            Fm = Fm + fnp.where(on_p, fnp.where(zero_den, s_, s_ / safe_den), 0.0)
            minden = fnp.minimum(minden, fnp.min(fnp.where(on_p, fnp.abs(den), np.inf)))
    Fm = fnp.matmul(Z, fnp.matmul(Fm, _mH(Z)))
    if disp:
        return Fm
    tol = float(np.finfo(aval_of(T).dtype).eps)
    minden = fnp.where(minden == 0, tol, minden)
    err = fnp.minimum(1.0, fnp.maximum(tol, (tol / minden) * fnp.linalg.norm(fnp.triu(T, 1), 1)))
    return Fm, fnp.where(fnp.any(~fnp.isfinite(Fm)), np.inf, err)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """The solution ``X`` (..., m, n) of ``A X + X B = C`` for ``A`` (..., m, m), ``B``
    (..., n, n); batch dims broadcast. ``method='schur'``: Bartels-Stewart on the complex
    Schur forms ``A = U R U^H``, ``B = V S V^H`` (``R Y + Y S = U^H C V``, one triangular
    solve per column of ``Y``); ``'eigen'``: through the eigendecompositions (faster, less
    accurate for ill-conditioned eigenvectors). All NaN where some ``|lambda_A + lambda_B|
    < tol`` (the equation is singular or nearly so), as JAX. Real for real ``C``.

    >>> solve_sylvester(np.eye(2), 2 * np.eye(2), 3 * np.ones((2, 2)))
    Array([[1., 1.],
           [1., 1.]])
    """
    if method not in ("schur", "eigen"):
        raise ValueError(f"solve_sylvester: method must be 'schur' or 'eigen', got {method!r}")
    A, B = U.matrix("solve_sylvester", A, "A"), U.matrix("solve_sylvester", B, "B")
    C = U.matrix("solve_sylvester", C, "C", square=False)
    m, n = shape_of(A)[-1], shape_of(B)[-1]
    if shape_of(C)[-2:] != (m, n):
        raise ValueError(f"solve_sylvester: C must have shape (..., {m}, {n}) for A {shape_of(A)} and B "
                         f"{shape_of(B)}, got {shape_of(C)}")
    batch = _util.broadcast_shapes("solve_sylvester", shape_of(A)[:-2], shape_of(B)[:-2], shape_of(C)[:-2])
    A, B = fnp.broadcast_to(A, batch + (m, m)), fnp.broadcast_to(B, batch + (n, n))
    C = fnp.broadcast_to(C, batch + (m, n))
    real = aval_of(C).dtype.kind != "c"
    cdt = _cdtype(np.result_type(aval_of(A).dtype, aval_of(B).dtype, aval_of(C).dtype))
    if method == "schur":
        R, Uq = schur(A, "complex")
        S, V = schur(B, "complex")
        F = fnp.matmul(_mH(Uq), fnp.matmul(C.astype(cdt), V))
        Y = fnp.zeros_like(F)
        for k in range(n):
            # Columns >= k of Y are still zero, so Y S[:, k] sums the solved ones, j < k.
            rhs = F[..., :, k] - fnp.matmul(Y, S[..., :, k][..., None])[..., 0]
            shifted = R + S[..., k, k][..., None, None] * np.eye(m, dtype=aval_of(R).dtype)
            y = solve_triangular(shifted, rhs[..., None])  # (..., m, 1)
            Y = Y + y * (np.arange(n) == k)
        X = fnp.matmul(Uq, fnp.matmul(Y, _mH(V)))
        la, lb = fnp.diagonal(R, axis1=-2, axis2=-1), fnp.diagonal(S, axis1=-2, axis2=-1)
    else:
        la, Ua = fnp.linalg.eig(A)
        lb, Ub = fnp.linalg.eig(B)
        F = solve(Ua, fnp.matmul(C.astype(cdt), Ub))
        with np.errstate(all="ignore"):  # (a singular equation: NaN below)
            X = fnp.matmul(Ua, fnp.matmul(F / (la[..., :, None] + lb[..., None, :]), fnp.linalg.inv(Ub)))
    singular = fnp.any(fnp.abs(la[..., :, None] + lb[..., None, :]) < tol, axis=(-2, -1))
    if real:
        X = fnp.real(X)
    return fnp.where(singular[..., None, None], np.nan, X)
