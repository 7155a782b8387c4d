"""fnp.linalg on complex matrices (issue #16): solve, inv, det, slogdet (through the LU
primitives, whose rules hold for complex as written: the factors are rational in A) with
holomorphic derivatives; cholesky/eigh/qr/svd with JAX's JVPs (conjugate transposes,
JAX's phase gauge); eig/eigvals; roots with complex roots.

Eigenvectors and singular vectors are fixed only up to a phase per column: their tangents
follow JAX's gauge (diag(V^H dV) = 0, diag(U^H dU) imaginary for svd), not LAPACK's, so
they are checked through vjp/jvp consistency and phase-invariant functions, whose
derivatives are checked against finite differences (real and imaginary directions)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core.prims import eig as peig
from funcgrad.core.prims import linalg as plin
from funcgrad.test_util import check_grads, check_jvp, check_vjp, numerical_jvp

rng = np.random.default_rng(7)
A = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
B = rng.normal(size=3) + 1j * rng.normal(size=3)
H = A @ A.conj().T + 3 * np.eye(3)  # Hermitian positive definite
R = rng.normal(size=(4, 4))  # real, with a complex-conjugate pair of eigenvalues


def test_values_match_numpy():
    np.testing.assert_allclose(fnp.linalg.solve(A, B), np.linalg.solve(A, B), rtol=1e-12)
    np.testing.assert_allclose(fnp.linalg.inv(A), np.linalg.inv(A), rtol=1e-12)
    np.testing.assert_allclose(fnp.linalg.det(A), np.linalg.det(A), rtol=1e-12)
    sign, logabs = fnp.linalg.slogdet(A.astype(np.complex64))
    want = np.linalg.slogdet(A.astype(np.complex64))
    assert sign.dtype == want.sign.dtype and logabs.dtype == want.logabsdet.dtype
    np.testing.assert_allclose([sign, logabs], [want.sign, want.logabsdet], rtol=1e-5)
    s = fnp.linalg.svd(A, compute_uv=False)
    assert s.dtype == np.float64
    np.testing.assert_allclose(s, np.linalg.svd(A, compute_uv=False), rtol=1e-12)


@pytest.mark.parametrize("f,args", [
    (fnp.linalg.solve, (A, B)),
    (fnp.linalg.inv, (A,)),
    (lambda a: fnp.linalg.slogdet(a)[1], (A,)),
])
def test_derivatives_match_finite_differences(f, args):
    check_grads(f, args, order=2)


def test_det_derivative_is_the_adjugate_also_when_singular():
    check_grads(fnp.linalg.det, (A,), order=1)
    s = np.array([[1, 2j], [1, 2j]])
    np.testing.assert_allclose(fg.grad(fnp.linalg.det, holomorphic=True)(s), [[2j, -1], [-2j, 1]], atol=1e-12)


def test_vmap_and_jit():
    stack = np.stack([A, A.T, A * 1j])
    np.testing.assert_allclose(fg.vmap(fnp.linalg.inv)(stack), [np.linalg.inv(m) for m in stack], rtol=1e-12)
    got = fg.jit(fnp.linalg.solve)(A, B)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, np.linalg.solve(A, B), rtol=1e-12)




def test_decomposition_values_and_dtypes_match_numpy():
    for dt, tol in ((np.complex128, 1e-12), (np.complex64, 1e-5)):
        h, a = H.astype(dt), A.astype(dt)
        l = fnp.linalg.cholesky(h)
        assert l.dtype == dt
        np.testing.assert_allclose(l, np.linalg.cholesky(h), rtol=tol, atol=tol)
        np.testing.assert_allclose(fnp.linalg.cholesky(h, upper=True), np.linalg.cholesky(h).conj().T, rtol=tol, atol=tol)
        w, v = fnp.linalg.eigh(h)
        nw, nv = np.linalg.eigh(h)
        assert w.dtype == nw.dtype and v.dtype == dt
        np.testing.assert_allclose(w, nw, rtol=tol)
        np.testing.assert_allclose(np.abs(v), np.abs(nv), rtol=tol, atol=tol)
        q, r = fnp.linalg.qr(a[:, :2])
        np.testing.assert_allclose(q @ r, a[:, :2], rtol=tol, atol=tol)
        np.testing.assert_allclose(r, np.linalg.qr(a[:, :2])[1], rtol=tol, atol=tol)
        u, s, vh = fnp.linalg.svd(a, full_matrices=False)
        assert s.dtype == np.dtype(dt).type(0).real.dtype
        np.testing.assert_allclose((u * s) @ vh, a, rtol=10 * tol, atol=10 * tol)


def _imaginary_direction_jvp(f, x):
    """jvp of ``f`` in a purely imaginary direction vs central differences."""
    t = 1j * np.random.default_rng(3).normal(size=x.shape)
    got = fg.jvp(f, (x,), (t,))[1]
    want = numerical_jvp(f, (x,), (t,), 1e-6)
    for g, w in zip(fg.tree_util.tree_leaves(got), fg.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# Factors whose LAPACK convention is smooth and JAX's gauge (Cholesky, R with a real
# diagonal): the tangents themselves match finite differences, real and imaginary.
@pytest.mark.parametrize("f,x", [
    (fnp.linalg.cholesky, H),
    (lambda a: fnp.linalg.cholesky(a, symmetrize_input=False), H),
    (fnp.linalg.eigvalsh, H),
    (fnp.linalg.qr, A),
    (fnp.linalg.qr, A[:, :2]),
    (fnp.linalg.qr, A[:2]),
    (lambda a: fnp.linalg.svd(a, compute_uv=False), A[:2]),
    (fnp.linalg.eigvals, A),
    (fnp.linalg.eigvals, R),
])
def test_tangents_match_finite_differences(f, x):
    check_grads(f, (x,), order=1)
    if x.dtype.kind == "c":
        _imaginary_direction_jvp(f, x)


def test_second_order_cholesky_and_eigvals():
    check_grads(fnp.linalg.cholesky, (H,), order=2)
    check_grads(fnp.linalg.eigvals, (A,), order=2)


@pytest.mark.parametrize("f,x", [
    (fnp.linalg.eigh, H),
    (lambda a: fnp.linalg.svd(a, full_matrices=False), A),
    (lambda a: fnp.linalg.svd(a, full_matrices=False), A[:, :2]),
    (lambda a: fnp.linalg.svd(a, full_matrices=False), A[:2]),
    (fnp.linalg.eig, A),
    (fnp.linalg.eig, R),
])
def test_vector_tangents_vjp_consistent_with_jvp(f, x):
    check_vjp(f, (x,))


def _eigh_projector_trace(a):
    _, v = fnp.linalg.eigh(a)
    p0 = fnp.outer(v[:, 0], fnp.conj(v[:, 0]))  # phase-invariant
    return fnp.real(fnp.trace(p0 @ C))


def _svd_rank1_loss(a):
    u, s, vh = fnp.linalg.svd(a, full_matrices=False)
    rank1 = s[0] * fnp.outer(u[:, 0], vh[0])  # phase-invariant
    return fnp.sum(fnp.abs(rank1) ** 2 * fnp.abs(C[: rank1.shape[0], : rank1.shape[1]]))


def _svd_reconstruction_loss(a):
    u, s, vh = fnp.linalg.svd(a, full_matrices=False)
    return fnp.sum(fnp.abs((u * s) @ vh) ** 3)


C = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))


@pytest.mark.parametrize("f,x", [
    (_eigh_projector_trace, H),
    (_svd_rank1_loss, A),
    (_svd_rank1_loss, A[:, :2]),
    (_svd_reconstruction_loss, A[:2]),
    (lambda a: fnp.abs(fnp.linalg.eig(a).eigenvectors) ** 2, A),
    (lambda a: fnp.abs(fnp.linalg.eig(a).eigenvectors) ** 2, R),
])
def test_gauge_invariant_losses_match_finite_differences(f, x):
    check_jvp(f, (x,))
    if x.dtype.kind == "c":
        _imaginary_direction_jvp(f, x)
    if np.ndim(f(x)) == 0:  # grad is JAX's: df = Re(sum(grad * t)) (conjugate-Wirtinger, no conj)
        g = fg.grad(f)(x)
        t = rng.normal(size=x.shape) + (1j * rng.normal(size=x.shape) if x.dtype.kind == "c" else 0)
        want = numerical_jvp(f, (x,), (t,), 1e-6)
        np.testing.assert_allclose(np.real(np.sum(g * t)), want, rtol=1e-5)


def test_lu_and_triangular_solve_transposes_are_plain_transposes():
    # Linear in b: vjp is the transpose (no conjugation), JAX's convention.
    lower = np.tril(A) + 3 * np.eye(3)
    f = lambda b: plin.triangular_solve(lower, b, lower=True)  # noqa: E731
    bm = B.reshape(3, 1)
    ct = np.ones((3, 1)) + 2j
    got = fg.vjp(f, bm)[1](ct)[0]
    np.testing.assert_allclose(got, np.linalg.solve(lower.T, ct), rtol=1e-12)
    check_grads(lambda a: plin.lu(a)[0], (A,), order=1)


def test_eig_values_batching_and_jit():
    w, v = fnp.linalg.eig(R)
    nw, nv = np.linalg.eig(R)
    assert w.dtype == v.dtype == np.complex128  # (NumPy: complex here since a pair is complex)
    np.testing.assert_allclose(w, nw, rtol=1e-12)
    np.testing.assert_allclose(v, nv, rtol=1e-12, atol=1e-12)
    sym = R + R.T  # real eigenvalues: NumPy returns float64, funcgrad complex (JAX's static dtype)
    assert fnp.linalg.eigvals(sym).dtype == np.complex128
    np.testing.assert_allclose(fnp.linalg.eigvals(sym), np.linalg.eigvals(sym), rtol=1e-12)
    assert fnp.linalg.eigvals(R.astype(np.float32)).dtype == np.complex64
    stack = np.stack([A, A.T, 2 * A])
    np.testing.assert_allclose(fg.vmap(fnp.linalg.eigvals)(stack), [np.linalg.eigvals(m) for m in stack], rtol=1e-12)
    got = fg.jit(fnp.linalg.eig)(A)
    np.testing.assert_allclose(got[0], np.linalg.eig(A)[0], rtol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="eig.*square"):
        fnp.linalg.eig(np.ones((2, 3)))
    with pytest.raises(TypeError, match="eig"):
        peig.eig(np.ones((2, 2), np.int32))


def test_roots_complex_and_traceable():
    p = np.array([1.0, 0.0, 1.0])
    got, want = fnp.roots(p), np.roots(p)
    assert got.dtype == want.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want), atol=1e-12)
    q = np.array([0.0, 1.0, -6.0, 11.0, -6.0, 0.0])
    traced = fg.jit(lambda c: fnp.roots(c, strip_zeros=False))(q)
    assert traced.dtype == np.complex128 and traced.shape == (5,)
    np.testing.assert_allclose(np.sort_complex(traced[:3]), [1, 2, 3], atol=1e-10)
    assert traced[3] == 0 and np.isnan(traced[4])  # zero roots sorted last, then a NaN per leading zero
    check_grads(lambda c: fnp.roots(c, strip_zeros=False), (np.array([1.0, 2.0, 3.0, 4.0]),), order=1)


# --- compiled complex products (lowering/dot.py: cblas_zgemm/cgemm or a generated loop) ---
def _compiled(f, *args):
    """``f`` compiled, raising if any equation would fall back to the evaluator."""
    from funcgrad.lowering import compile_jaxpr
    from funcgrad.lowering.inline import inline_calls

    leaves, _ = fg.tree_util.tree_flatten(args)
    return compile_jaxpr(inline_calls(fg.make_jaxpr(f)(*args)))(*leaves)


def _z(*shape, dtype=np.complex128):
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)


@pytest.mark.parametrize("use_blas", [True, False])
@pytest.mark.parametrize("f,args", [
    (lambda x, y: x @ y, (_z(3, 4), _z(4, 2))),  # small: the loop kernel
    (lambda x, y: x @ y, (_z(20, 30), _z(30, 10))),  # gemm
    (lambda x, y: x @ y, (_z(20, 30, dtype=np.complex64), _z(30, 10, dtype=np.complex64))),
    (lambda x, y: x @ y, (_z(2, 12, 20), _z(2, 20, 8))),  # batch dims: a loop of gemm calls
    (lambda x, y: x.T @ y, (_z(30, 20), _z(30, 10))),  # transposed operand (no conjugation)
    (lambda x, y: x @ y.T, (_z(64), _z(32, 64))),  # matrix-vector: register accumulators
    (lambda x, y: x @ y, (rng.normal(size=(20, 30)), _z(30, 10))),  # real x complex (promoted)
    (lambda x, y: fnp.vdot(x, y), (_z(40), _z(40))),
    (lambda x, y: fnp.einsum("bij,bkj->bik", x, y), (_z(2, 10, 30), _z(2, 12, 30))),
])
def test_compiled_complex_products_match_numpy(f, args, use_blas, monkeypatch):
    from funcgrad.lowering import dot

    monkeypatch.setattr(dot, "USE_BLAS", use_blas)
    (got,) = _compiled(f, *args)
    want = f(*args)
    assert got.dtype == want.dtype and got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-4 if want.dtype == np.complex64 else 1e-12)
    np.testing.assert_allclose(got, f(*(np.asarray(a) for a in args)), rtol=1e-4 if want.dtype == np.complex64 else 1e-12)


# --- compiled complex decompositions (lowering/linalg.py: zpotrf, ztrsm/ztrsv, zheevd, ---
# --- zgeqrf/zungqr, zgesdd): bitwise the eager impls' numbers, NaN where LAPACK fails ---
_HB = np.stack([H, H.conj() + np.eye(3)])


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("f,args", [
    (plin.cholesky, (_HB,)),
    (plin.cholesky, (np.array([[1.0, 2j], [-2j, 1.0]]),)),  # not positive definite: NaN
    (lambda a, b: plin.triangular_solve(a, b, lower=True), (_HB, _HB[..., :2])),
    (lambda a, b: plin.triangular_solve(a, b, lower=False, transpose_a=True, unit_diagonal=True), (_HB, _HB[..., :1])),
    (lambda a, b: plin.triangular_solve(a, b), (np.triu(_HB) * (1 - np.eye(3)), _HB[..., :2])),  # singular: NaN
    (plin.eigh, (_HB,)),
    (lambda a: plin.eigh(a, lower=False), (_HB,)),
    (plin.qr, (A[:, :2],)),
    (plin.qr, (A[:2],)),
    (lambda a: plin.svd(a), (A[:, :2],)),
    (lambda a: plin.svd(a, full_matrices=True), (A[:2],)),
    (lambda a: plin.svd(a, compute_uv=False), (_HB,)),
    (plin.lu, (np.stack([A, A.T]),)),
    (plin.lu, (np.array([[1, 2j], [1, 2j]]),)),  # singular: no error, as the impl
])
def test_compiled_complex_decompositions_match_eager(f, args, dtype):
    args = tuple(np.asarray(a, dtype) for a in args)
    got = _compiled(f, *args)
    want = f(*args)
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("f,args", [
    (fnp.linalg.solve, (A, B)),
    (fnp.linalg.inv, (np.stack([A, 2 * A]),)),
    (fnp.linalg.det, (A.astype(np.complex64),)),
])
def test_compiled_complex_solve_inv_det(f, args):
    (got,) = _compiled(f, *args)
    want = f(*args)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if want.dtype == np.complex64 else 1e-13)


@pytest.mark.parametrize("compute_eigenvectors", [True, False])
@pytest.mark.parametrize("a", [
    np.stack([R, R.T]),  # real input: dgeev's packed conjugate pairs unpacked
    R.astype(np.float32),
    A,
    A.astype(np.complex64),
    np.array([[1.0, 2.0], [np.nan, 0.0]]),  # LAPACK not called (NumPy raises): NaN outputs
])
def test_compiled_eig_matches_eager(a, compute_eigenvectors):
    f = lambda m: peig.eig(m, compute_eigenvectors=compute_eigenvectors)  # noqa: E731
    got, want = _compiled(f, a), f(a)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
