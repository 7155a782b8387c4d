"""Op-table rows for funcgrad.numpy.linalg on complex64/complex128 (issue #16): values vs
NumPy, jvp (complex tangents: real and imaginary directions) vs central differences,
vjp vs jvp, vmap vs loop, jit vs eager.

Eigenvectors and singular vectors of complex matrices are fixed only up to a phase per
column, and funcgrad's tangents follow JAX's gauge, not LAPACK's: those rows check
phase-invariant products (``V diag(f(w)) V^H``, ``|V|^2``) instead of the vectors.
Inputs are small and well conditioned (``n I`` added; Hermitian positive definite as
``B B^H + n I``).
"""
import numpy as np

import funcgrad.numpy as fnp

from harness import rand, row

c64, c128 = np.complex64, np.complex128
TOL = dict(rtol=1e-12, atol=1e-13)
C64_TOL = dict(rtol=2e-5, atol=1e-5)


def lrow(name, fn, *args, **kw):
    return row(f"complex_linalg.{name}", lambda *a: fn(fnp, *a), lambda *a: fn(np, *a), *args, **kw)


def general(n, dtype=c128):
    return (rand(n, n, dtype=c128) + n * np.eye(n)).astype(dtype)


def hpd(n, dtype=c128):
    b = rand(n, n, dtype=c128)
    return (b @ b.conj().T + n * np.eye(n)).astype(dtype)


def _eigh_invariant(m, a):
    w, v = m.linalg.eigh(a)
    return (v * m.sin(w)[..., None, :]) @ m.conj(m.swapaxes(v, -1, -2))


def _svd_invariant(m, a):
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return (u * m.sin(s)[..., None, :]) @ vh


def _eig_invariant(m, a):
    w, v = m.linalg.eig(a)
    return m.abs(v) ** 2 + m.exp(w)[..., None, :]


G3, H3 = general(3), hpd(3)

ROWS = [
    lrow("solve/c128", lambda m, a, b: m.linalg.solve(a, b), G3, rand(3, dtype=c128), **TOL),
    lrow("inv/c64", lambda m, a: m.linalg.inv(a), general(3, c64), **C64_TOL),
    lrow("det/c128", lambda m, a: m.linalg.det(a), G3, **TOL),
    lrow("cholesky/c128", lambda m, a: m.linalg.cholesky(a), H3, **TOL),
    lrow("cholesky/c64_batched", lambda m, a: m.linalg.cholesky(a), np.stack([hpd(2, c64), hpd(2, c64)]), **C64_TOL),
    lrow("eigvalsh/c128", lambda m, a: m.linalg.eigvalsh(a), H3, **TOL),
    lrow("eigh/invariant_c128", _eigh_invariant, H3, **TOL),
    lrow("qr/tall_c128", lambda m, a: tuple(m.linalg.qr(a)), rand(3, 2, dtype=c128), **TOL),
    lrow("qr/wide_c128", lambda m, a: tuple(m.linalg.qr(a)), rand(2, 3, dtype=c128), **TOL),
    lrow("svd/values_c128", lambda m, a: m.linalg.svd(a, compute_uv=False), rand(3, 2, dtype=c128), **TOL),
    lrow("svd/invariant_c128", _svd_invariant, rand(2, 3, dtype=c128), **TOL),
    lrow("eigvals/c128", lambda m, a: m.linalg.eigvals(a), G3, **TOL),
    # a real matrix with a complex-conjugate pair: NumPy's result is complex here too
    lrow("eigvals/real_input", lambda m, a: m.linalg.eigvals(a), np.array([[1.0, -2.0, 0.5], [2.0, 1.0, 0.0], [0.3, 0.0, 3.0]]), **TOL),
    lrow("eig/invariant_c128", _eig_invariant, G3, **TOL),
    row("complex_linalg.roots/complex", lambda p: fnp.roots(p, strip_zeros=False), np.roots,
        np.array([1.0, 0.5, 2.0, -1.0]), **TOL),
]
