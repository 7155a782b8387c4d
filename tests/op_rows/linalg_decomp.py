"""Op-table rows for funcgrad.numpy.linalg's decompositions, solves and determinants.

Inputs are small (<= 4x4, so the order-2 derivative checks stay fast) and well
conditioned: general matrices get ``n * I`` added, symmetric positive-definite ones are
``B B^T + n I`` (distinct eigenvalues with probability one), and the SVD inputs are
random (distinct, non-zero singular values with probability one).

Eigenvectors and singular vectors are compared with NumPy directly (both call the same
LAPACK routine, so even their signs agree); their derivatives are checked too, and the
``invariant`` rows also check sign-independent products such as ``V diag(f(w)) V^T``.

Tolerances: ``det``/``slogdet``/``solve``/``inv`` use funcgrad's own LU (NumPy exposes
no LU factorisation), whose rounding differs from LAPACK's blocked ``getrf``: rtol 1e-12.
"""
import numpy as np

import funcgrad.numpy as fnp

from harness import rand, row

LU_TOL = dict(rtol=1e-12)
DECOMP_TOL = dict(rtol=1e-12, atol=1e-14)
F32_TOL = dict(rtol=2e-5, atol=1e-6)


def general(*shape, dtype=np.float64):
    n = shape[-1]
    return (rand(*shape) + n * np.eye(n)).astype(dtype)


def pivoting(n):
    """A well-conditioned matrix whose LU needs row swaps (small leading diagonal)."""
    return (rand(n, n, low=-1.0, high=1.0) + np.fliplr(n * np.eye(n)))


def spd(*shape, dtype=np.float64):
    n = shape[-1]
    b = rand(*shape)
    return (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)).astype(dtype)


def lrow(name, fn, *args, **kw):
    """``fn(module, *args)`` with module = funcgrad.numpy and numpy."""
    return row(f"linalg.{name}", lambda *a: fn(fnp, *a), lambda *a: fn(np, *a), *args, **kw)


def _one_triangle(m):
    """Keyword for funcgrad to read one triangle like NumPy (JAX's default, which
    funcgrad follows, symmetrizes the input first)."""
    return {"symmetrize_input": False} if m is fnp.linalg or m is fnp else {}


def _eigh_invariant(m, a):
    w, v = m.linalg.eigh(a)
    return (v * m.sin(w)[..., None, :]) @ m.swapaxes(v, -1, -2)


def _svd_invariant(m, a):
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return (u * m.sin(s)[..., None, :]) @ vh


A3, A4, P3 = general(3, 3), general(4, 4), pivoting(3)
AB = np.stack([pivoting(3), general(3, 3)])  # one needs row swaps, one does not
S3, S4, SB = spd(3, 3), spd(4, 4), spd(2, 3, 3)

ROWS = [
    # determinants
    lrow("det/2x2", lambda m, a: m.linalg.det(a), general(2, 2), **LU_TOL),
    lrow("det/3x3", lambda m, a: m.linalg.det(a), A3, **LU_TOL),
    lrow("det/pivoting", lambda m, a: m.linalg.det(a), P3, **LU_TOL),
    lrow("det/4x4", lambda m, a: m.linalg.det(a), A4, **LU_TOL),
    lrow("det/1x1", lambda m, a: m.linalg.det(a), np.array([[-1.5]]), **LU_TOL),
    lrow("det/batched", lambda m, a: m.linalg.det(a), AB, **LU_TOL),
    lrow("det/f32", lambda m, a: m.linalg.det(a), general(3, 3, dtype=np.float32), **F32_TOL),
    lrow("det/int", lambda m, a: m.linalg.det(a), np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]]), **LU_TOL),
    lrow("slogdet/3x3", lambda m, a: tuple(m.linalg.slogdet(a)), A3, **LU_TOL),
    lrow("slogdet/negative", lambda m, a: tuple(m.linalg.slogdet(a)), P3 * np.array([[-1.0], [1.0], [1.0]]), **LU_TOL),
    lrow("slogdet/batched", lambda m, a: tuple(m.linalg.slogdet(a)), np.stack([P3, -A3]), **LU_TOL),
    lrow("slogdet/f32", lambda m, a: tuple(m.linalg.slogdet(a)), general(3, 3, dtype=np.float32), **F32_TOL),
    # inverse and solve
    lrow("inv/3x3", lambda m, a: m.linalg.inv(a), A3, **LU_TOL),
    lrow("inv/pivoting", lambda m, a: m.linalg.inv(a), P3, **LU_TOL),
    lrow("inv/batched", lambda m, a: m.linalg.inv(a), AB, **LU_TOL),
    lrow("inv/f32", lambda m, a: m.linalg.inv(a), general(3, 3, dtype=np.float32), **F32_TOL),
    lrow("solve/vector", lambda m, a, b: m.linalg.solve(a, b), P3, rand(3), **LU_TOL),
    lrow("solve/matrix", lambda m, a, b: m.linalg.solve(a, b), A4, rand(4, 2), **LU_TOL),
    lrow("solve/batched_vector_b", lambda m, a, b: m.linalg.solve(a, b), AB, rand(3), **LU_TOL),
    lrow("solve/batched_both", lambda m, a, b: m.linalg.solve(a, b), AB, rand(2, 3, 2), **LU_TOL),
    lrow("solve/broadcast_batch", lambda m, a, b: m.linalg.solve(a, b), A3, rand(2, 3, 1), **LU_TOL),
    lrow("solve/mixed_dtypes", lambda m, a, b: m.linalg.solve(a, b), general(3, 3, dtype=np.float32), rand(3), **LU_TOL),
    # cholesky
    lrow("cholesky/3x3", lambda m, a: m.linalg.cholesky(a), S3, **DECOMP_TOL),
    lrow("cholesky/4x4", lambda m, a: m.linalg.cholesky(a), S4, **DECOMP_TOL),
    lrow("cholesky/batched", lambda m, a: m.linalg.cholesky(a), SB, **DECOMP_TOL),
    lrow("cholesky/upper", lambda m, a: m.linalg.cholesky(a, upper=True), S3, **DECOMP_TOL),
    lrow("cholesky/reads_lower", lambda m, a: m.linalg.cholesky(a, **_one_triangle(m)), S3 + np.triu(rand(3, 3), 1), **DECOMP_TOL),
    lrow("cholesky/f32", lambda m, a: m.linalg.cholesky(a), spd(3, 3, dtype=np.float32), **F32_TOL),
    # eigh
    lrow("eigh/3x3", lambda m, a: tuple(m.linalg.eigh(a)), S3, **DECOMP_TOL),
    lrow("eigh/upper", lambda m, a: tuple(m.linalg.eigh(a, UPLO="U", **_one_triangle(m))), S3 + np.tril(rand(3, 3), -1), **DECOMP_TOL),
    lrow("eigh/batched", lambda m, a: tuple(m.linalg.eigh(a)), SB, **DECOMP_TOL),
    lrow("eigh/indefinite", lambda m, a: tuple(m.linalg.eigh(a)), A4 + A4.T, **DECOMP_TOL),
    lrow("eigh/invariant", _eigh_invariant, S4, **DECOMP_TOL),
    lrow("eigh/invariant_batched", _eigh_invariant, SB, **DECOMP_TOL),
    lrow("eigh/f32", lambda m, a: m.linalg.eigh(a)[0], spd(3, 3, dtype=np.float32), **F32_TOL),
    lrow("eigvalsh/3x3", lambda m, a: m.linalg.eigvalsh(a), S3, **DECOMP_TOL),
    lrow("eigvalsh/upper_batched", lambda m, a: m.linalg.eigvalsh(a, UPLO="U"), SB, **DECOMP_TOL),
    # qr
    lrow("qr/square", lambda m, a: tuple(m.linalg.qr(a)), A3, **DECOMP_TOL),
    lrow("qr/tall", lambda m, a: tuple(m.linalg.qr(a)), rand(4, 3), **DECOMP_TOL),
    lrow("qr/wide", lambda m, a: tuple(m.linalg.qr(a)), rand(2, 4), **DECOMP_TOL),
    lrow("qr/batched", lambda m, a: tuple(m.linalg.qr(a)), rand(2, 3, 2), **DECOMP_TOL),
    lrow("qr/mode_r", lambda m, a: m.linalg.qr(a, mode="r"), rand(4, 3), **DECOMP_TOL),
    lrow("qr/f32", lambda m, a: tuple(m.linalg.qr(a)), rand(3, 3, dtype=np.float32), **F32_TOL),
    # svd
    lrow("svd/square", lambda m, a: tuple(m.linalg.svd(a)), rand(3, 3), **DECOMP_TOL),
    lrow("svd/tall", lambda m, a: tuple(m.linalg.svd(a, full_matrices=False)), rand(4, 3), **DECOMP_TOL),
    lrow("svd/wide", lambda m, a: tuple(m.linalg.svd(a, full_matrices=False)), rand(2, 4), **DECOMP_TOL),
    lrow("svd/batched", lambda m, a: tuple(m.linalg.svd(a, full_matrices=False)), rand(2, 3, 4), **DECOMP_TOL),
    lrow("svd/values", lambda m, a: m.linalg.svd(a, compute_uv=False), rand(4, 3), **DECOMP_TOL),
    lrow("svd/values_batched", lambda m, a: m.linalg.svd(a, compute_uv=False), rand(2, 2, 3), **DECOMP_TOL),
    lrow("svd/invariant_tall", _svd_invariant, rand(4, 2), **DECOMP_TOL),
    lrow("svd/invariant_wide", _svd_invariant, rand(2, 3), **DECOMP_TOL),
    lrow("svd/full_matrices_tall", lambda m, a: tuple(m.linalg.svd(a)), rand(3, 2), **DECOMP_TOL,
         tags={"no_grad": "U's extra columns (full_matrices=True) have no unique derivative"}),
    lrow("svd/f32", lambda m, a: m.linalg.svd(a, compute_uv=False), rand(3, 3, dtype=np.float32), **F32_TOL),
    # norms through the SVD
    lrow("norm/matrix_2", lambda m, a: m.linalg.norm(a, 2), rand(3, 4), **DECOMP_TOL),
    lrow("norm/matrix_neg2", lambda m, a: m.linalg.norm(a, -2), rand(4, 3), **DECOMP_TOL),
    lrow("norm/matrix_nuc", lambda m, a: m.linalg.norm(a, "nuc"), rand(3, 3), **DECOMP_TOL),
    lrow("norm/batched_2_axes", lambda m, a: m.linalg.norm(a, 2, axis=(2, 0)), rand(3, 2, 4), **DECOMP_TOL),
    lrow("norm/nuc_keepdims", lambda m, a: m.linalg.norm(a, "nuc", axis=(0, 1), keepdims=True), rand(2, 3, 2), **DECOMP_TOL),
]
