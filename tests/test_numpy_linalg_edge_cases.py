"""funcgrad.numpy.linalg beyond the op table: error messages, known gradient
identities, the primitive-level functions (lu, triangular_solve) and staging."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core.prims import linalg as plin
from funcgrad.test_util import check_grads

rng = np.random.default_rng(7)


def general(n, *batch):
    return rng.standard_normal(batch + (n, n)) + n * np.eye(n)


def spd(n, *batch):
    b = rng.standard_normal(batch + (n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


# --- errors name the function and the shapes --------------------------------------------
@pytest.mark.parametrize("fname", ["det", "slogdet", "inv", "cholesky", "eigh", "eigvalsh"])
def test_non_square_is_linalg_error(fname):
    with pytest.raises(np.linalg.LinAlgError, match=rf"{fname}: .*square.*\(2, 3\)"):
        getattr(fnp.linalg, fname)(np.ones((2, 3)))


@pytest.mark.parametrize("fname", ["det", "inv", "qr", "svd"])
def test_vector_is_linalg_error(fname):
    with pytest.raises(np.linalg.LinAlgError, match=rf"{fname}: 1-dimensional .*two-dimensional"):
        getattr(fnp.linalg, fname)(np.ones(3))


def test_linalg_error_is_a_value_error_like_numpy():
    with pytest.raises(ValueError):
        fnp.linalg.inv(np.ones((2, 3)))


def test_solve_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"solve: b with shape \(4,\) does not match a with shape \(3, 3\)"):
        fnp.linalg.solve(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match=r"solve: b with shape \(2, 4, 1\) .*\(3, 3\)"):
        fnp.linalg.solve(np.eye(3), np.ones((2, 4, 1)))


def test_solve_batch_mismatch():
    with pytest.raises(ValueError, match=r"solve: .*could not be broadcast.*\(2,\) \(3,\)"):
        fnp.linalg.solve(np.ones((2, 3, 3)), np.ones((3, 3, 1)))


def test_solve_non_square_a():
    with pytest.raises(np.linalg.LinAlgError, match=r"solve: .*square.*\(3, 2\)"):
        fnp.linalg.solve(np.ones((3, 2)), np.ones(3))


def test_errors_under_tracing():
    with pytest.raises(np.linalg.LinAlgError, match="det"):
        fg.make_jaxpr(fnp.linalg.det)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="solve"):
        fg.make_jaxpr(fnp.linalg.solve)(np.eye(3), np.ones(2))


def test_primitive_errors_name_op_and_avals():
    with pytest.raises(ValueError, match=r"cholesky: .*square.*f64\[2,3\]"):
        plin.cholesky(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"triangular_solve: .*f64\[3,3\].*f64\[2,1\]"):
        plin.triangular_solve(np.eye(3), np.ones((2, 1)))
    with pytest.raises(ValueError, match=r"triangular_solve: .*f64\[2,3,3\].*f64\[3,1\]"):
        plin.triangular_solve(np.ones((2, 3, 3)), np.ones((3, 1)))
    with pytest.raises(TypeError, match=r"triangular_solve: .*same dtype"):
        plin.triangular_solve(np.eye(3), np.ones((3, 1), np.float32))
    with pytest.raises(TypeError, match=r"svd: .*floating-point.*i64\[2,2\]"):
        plin.svd(np.ones((2, 2), np.int64))
    with pytest.raises(ValueError, match=r"qr: .*\(\.\.\., m, n\).*f64\[3\]"):
        plin.qr(np.ones(3))


def test_bad_options():
    with pytest.raises(ValueError, match="UPLO"):
        fnp.linalg.eigh(np.eye(2), UPLO="X")
    with pytest.raises(ValueError, match="mode"):
        fnp.linalg.qr(np.eye(2), mode="nope")
    with pytest.raises(NotImplementedError, match="complete"):
        fnp.linalg.qr(np.ones((3, 2)), mode="complete")
    with pytest.raises(NotImplementedError, match="hermitian"):
        fnp.linalg.svd(np.eye(2), hermitian=True)


def test_not_positive_definite_is_nan_like_jax():
    assert np.isnan(fnp.linalg.cholesky(-np.eye(2))).all()


def test_singular_inverse_is_nan_like_compiled_code():
    assert np.isnan(fnp.linalg.inv(np.ones((2, 2)))).all()


def test_singular_determinants():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert fnp.linalg.det(a) == 0.0
    sign, logabsdet = fnp.linalg.slogdet(a)  # no warning (pytest -W error would catch one)
    assert sign == 0.0 and logabsdet == -np.inf


def test_svd_full_matrices_derivative_of_non_square_is_not_implemented():
    a = rng.standard_normal((3, 2))
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        fg.jvp(lambda x: fnp.linalg.svd(x)[0], (a,), (a,))
    # the singular values alone: compute_uv=False (or full_matrices=False)
    check_grads(lambda x: fnp.linalg.svd(x, compute_uv=False), (a,), order=2)
    check_grads(lambda x: fnp.linalg.svd(x, full_matrices=False)[1], (a,), order=2)


# --- result types like NumPy --------------------------------------------------------------
def test_namedtuple_results():
    a = spd(3)
    res = fnp.linalg.eigh(a)
    assert res.eigenvalues.shape == (3,) and res.eigenvectors.shape == (3, 3)
    sl = fnp.linalg.slogdet(a)
    assert type(sl.sign) is type(sl.logabsdet) is fg.Array and sl.sign.shape == sl.logabsdet.shape == ()
    q = fnp.linalg.qr(a)
    assert q.Q.shape == q.R.shape == (3, 3)
    u = fnp.linalg.svd(a)
    assert (u.U.shape, u.S.shape, u.Vh.shape) == ((3, 3), (3,), (3, 3))
    assert type(fnp.linalg.det(a)) is fg.Array and fnp.linalg.det(a).shape == ()


def test_float32_stays_float32():
    a = spd(3).astype(np.float32)
    for f in (fnp.linalg.det, fnp.linalg.inv, fnp.linalg.cholesky, fnp.linalg.eigvalsh):
        assert np.asarray(f(a)).dtype == np.float32
    assert fnp.linalg.solve(a, np.ones(3, np.float32)).dtype == np.float32


def test_svd_full_matrices_values_match_numpy():
    a = rng.standard_normal((2, 4, 3))
    for got, want in zip(fnp.linalg.svd(a), np.linalg.svd(a)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# --- gradient identities -----------------------------------------------------------------
def test_grad_logdet_is_inverse_transpose():
    a = general(3)
    g = fg.grad(lambda x: fnp.linalg.slogdet(x)[1])(a)
    np.testing.assert_allclose(g, np.linalg.inv(a).T, rtol=1e-12)


def test_grad_det_is_det_times_inverse_transpose():
    a = general(4)
    g = fg.grad(fnp.linalg.det)(a)
    np.testing.assert_allclose(g, np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-11)


def test_hessian_of_logdet():
    # d^2 logdet(A)[H, H] = -tr(A^-1 H A^-1 H)
    a, h = general(3), rng.standard_normal((3, 3))
    gfun = fg.grad(lambda x: fnp.linalg.slogdet(x)[1])
    _, hh = fg.jvp(gfun, (a,), (h,))
    ainv = np.linalg.inv(a)
    np.testing.assert_allclose(np.sum(hh * h), -np.trace(ainv @ h @ ainv @ h), rtol=1e-11)


def test_grad_sum_eigvalsh_is_identity():
    # the trace of the symmetric matrix read from the lower triangle: only the diagonal counts
    g = fg.grad(lambda x: fnp.sum(fnp.linalg.eigvalsh(x)))(spd(4))
    np.testing.assert_allclose(g, np.eye(4), atol=1e-12)


def test_grad_top_eigenvalue_reads_the_lower_triangle():
    a = spd(3)
    w, v = np.linalg.eigh(a)
    top = np.outer(v[:, -1], v[:, -1])
    g = fg.grad(lambda x: fnp.linalg.eigvalsh(x, symmetrize_input=False)[-1])(a)
    np.testing.assert_allclose(g, np.tril(2 * top, -1) + np.diag(np.diag(top)), rtol=1e-10, atol=1e-12)
    g_upper = fg.grad(lambda x: fnp.linalg.eigvalsh(x, UPLO="U", symmetrize_input=False)[-1])(a)
    np.testing.assert_allclose(g_upper, g.T, rtol=1e-10, atol=1e-12)


def test_gradients_of_symmetric_factorisations_are_symmetric():
    # JAX symmetrizes the input of eigh/eigvalsh/cholesky: d lambda_max / dA = v v^T and
    # d logdet / dA = A^-1, symmetric -- not lower-triangular with doubled entries.
    a = spd(3)
    w, v = np.linalg.eigh(a)
    for f in (lambda x: fnp.linalg.eigvalsh(x)[-1], lambda x: fnp.linalg.eigh(x)[0][-1]):
        np.testing.assert_allclose(fg.grad(f)(a), np.outer(v[:, -1], v[:, -1]), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fg.jit(fg.grad(f))(a), np.outer(v[:, -1], v[:, -1]), rtol=1e-10, atol=1e-12)

    def logdet(x):
        return 2 * fnp.sum(fnp.log(fnp.diagonal(fnp.linalg.cholesky(x))))

    np.testing.assert_allclose(fg.grad(logdet)(a), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(fg.jit(fg.grad(logdet))(a), np.linalg.inv(a), rtol=1e-10)
    # Values of symmetric input are exactly NumPy's.
    np.testing.assert_array_equal(fnp.linalg.cholesky(a), np.linalg.cholesky(a))


def test_grad_solve_wrt_b_and_a():
    a, b = general(3), rng.standard_normal(3)
    ga, gb = fg.grad(lambda a, b: fnp.sum(fnp.linalg.solve(a, b)), argnums=(0, 1))(a, b)
    lam = np.linalg.solve(a.T, np.ones(3))
    np.testing.assert_allclose(gb, lam, rtol=1e-12)
    np.testing.assert_allclose(ga, -np.outer(lam, np.linalg.solve(a, b)), rtol=1e-12)


def test_grad_nuclear_and_spectral_norms():
    a = rng.standard_normal((4, 3))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.linalg.norm(x, "nuc"))(a), u @ vh, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.linalg.norm(x, 2))(a), np.outer(u[:, 0], vh[0]), rtol=1e-11, atol=1e-13)


def test_cholesky_jvp_reconstructs_the_symmetric_tangent():
    a, h = spd(3), rng.standard_normal((3, 3))
    h = h + h.T
    l, dl = fg.jvp(fnp.linalg.cholesky, (a,), (h,))
    np.testing.assert_allclose(dl @ l.T + l @ dl.T, h, rtol=1e-11, atol=1e-12)
    assert np.allclose(np.triu(dl, 1), 0)


def test_inverse_gradient_identity():
    # d inv(A) = -inv(A) dA inv(A)
    a, h = general(3, 2), rng.standard_normal((2, 3, 3))
    _, d = fg.jvp(fnp.linalg.inv, (a,), (h,))
    ainv = np.linalg.inv(a)
    np.testing.assert_allclose(d, -ainv @ h @ ainv, rtol=1e-11, atol=1e-13)


# --- the primitive-level functions --------------------------------------------------------
def test_lu_reconstructs_with_the_permutation():
    a = rng.standard_normal((2, 4, 4))
    lu, pivots, perm = plin.lu(a)
    assert pivots.dtype == perm.dtype == np.int32
    l, u = np.tril(lu, -1) + np.eye(4), np.triu(lu)
    np.testing.assert_allclose(np.take_along_axis(a, perm[..., None].astype(np.int64), axis=-2), l @ u, atol=1e-14)
    assert np.all(np.abs(np.tril(lu, -1)) <= 1.0)  # partial pivoting bounds the multipliers
    # pivots are LAPACK's row interchanges; applying them in order gives the permutation
    for b in range(2):
        p = np.arange(4)
        for i, j in enumerate(pivots[b]):
            p[[i, j]] = p[[j, i]]
        np.testing.assert_array_equal(p, perm[b])


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve(lower, transpose_a, unit_diagonal):
    a, b = general(3, 2), rng.standard_normal((2, 3, 2))
    x = plin.triangular_solve(a, b, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    m = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        m[..., np.arange(3), np.arange(3)] = 1.0
    if transpose_a:
        m = np.swapaxes(m, -1, -2)
    np.testing.assert_allclose(m @ x, b, atol=1e-13)
    f = lambda a, b: plin.triangular_solve(a, b, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)  # noqa: E731
    check_grads(f, (a, b), order=2)


def test_triangular_solve_transpose_in_b():
    a = general(3)
    f = lambda b: plin.triangular_solve(a, b, lower=True)  # noqa: E731
    ct = rng.standard_normal((3, 2))
    (got,) = fg.linear_transpose(f, np.zeros((3, 2)))(ct)
    np.testing.assert_allclose(got, np.linalg.solve(np.tril(a).T, ct), rtol=1e-12)


def test_lu_jvp_of_factors():
    check_grads(lambda x: plin.lu(x)[0], (rng.standard_normal((2, 3, 3)),), order=2)


def test_jaxpr_shows_the_primitives():
    text = str(fg.make_jaxpr(fnp.linalg.solve)(general(3), np.ones(3)))
    assert "lu" in text and "triangular_solve" in text
    text = str(fg.make_jaxpr(lambda x: fnp.linalg.svd(x, compute_uv=False))(np.ones((2, 3))))
    assert "svd" in text and "compute_uv=False" in text


def test_vmap_of_linalg_matches_numpy():
    a = general(3, 4)
    np.testing.assert_allclose(fg.vmap(fnp.linalg.det)(a), np.linalg.det(a), rtol=1e-12)
    b = rng.standard_normal((4, 3))
    np.testing.assert_allclose(
        fg.vmap(fnp.linalg.solve, in_axes=(None, 0))(a[0], b), np.linalg.solve(a[0], b.T).T, rtol=1e-12
    )
    s = spd(3, 4)
    w = fg.vmap(fnp.linalg.eigvalsh, in_axes=2)(np.moveaxis(s, 0, 2))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s), rtol=1e-12)


def test_grad_det_at_singular_matrices_is_the_adjugate():
    # JAX: grad(det)([[1, 2], [2, 4]]) == [[4, -2], [-2, 1]]; the adjugate exists where the
    # inverse does not (eager LU-based grad raised LinAlgError, compiled gave NaN).
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    want = np.array([[4.0, -2.0], [-2.0, 1.0]])
    for g in (fg.grad(fnp.linalg.det), fg.jit(fg.grad(fnp.linalg.det)), fg.jacfwd(fnp.linalg.det)):
        np.testing.assert_allclose(g(s), want, rtol=1e-12, atol=1e-12)
    # rank n-1 in 3x3: adj(A) = det of the 2x2 minors, checked against cofactors
    a = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 4.0], [1.0, 3.0, 7.0]])
    cof = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(3)]
                    for i in range(3)])
    np.testing.assert_allclose(fg.grad(fnp.linalg.det)(a), cof, atol=1e-12)
    # batched, mixing singular and regular matrices
    batch = np.stack([s, np.array([[2.0, 1.0], [1.0, 3.0]])])
    np.testing.assert_allclose(fg.vmap(fg.grad(fnp.linalg.det))(batch)[1], [[3.0, -1.0], [-1.0, 2.0]], rtol=1e-12)
    # second order at a regular matrix still matches finite differences
    from funcgrad.test_util import check_grads
    check_grads(fnp.linalg.det, (general(3),), order=2)
