"""funcgrad.scipy.linalg against scipy.linalg: values (SciPy's conventions and
defaults), derivatives against finite differences, vmap against a loop, jit against
eager, and errors naming the function, the argument and the shapes."""
import numpy as np
import pytest
import scipy.linalg as sl

import funcgrad as fg
from funcgrad.scipy import linalg as L
from funcgrad.test_util import check_grads

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = rng.standard_normal((4, 2))
BV = rng.standard_normal(4)
TALL = rng.standard_normal((5, 3))


def close(got, want, tol=1e-10):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


VALUE_CASES = {
    "solve_triangular": (lambda m, s: m.solve_triangular(A, B), None),
    "solve_triangular/lower-trans-vec": (lambda m, s: m.solve_triangular(A, BV, trans=1, lower=True), None),
    "solve_triangular/unit": (lambda m, s: m.solve_triangular(A, B, trans="T", unit_diagonal=True), None),
    "cholesky/upper-default": (lambda m, s: m.cholesky(SPD), None),
    "cholesky/lower": (lambda m, s: m.cholesky(SPD, lower=True), None),
    "cho_solve/upper": (lambda m, s: m.cho_solve(m.cho_factor(SPD), B), None),
    "cho_solve/lower-vec": (lambda m, s: m.cho_solve(m.cho_factor(SPD, lower=True), BV), None),
    "lu": (lambda m, s: m.lu(A), None),
    "lu/permute_l": (lambda m, s: m.lu(A, permute_l=True), None),
    "lu/p_indices": (lambda m, s: m.lu(A, p_indices=True), None),
    "lu/wide": (lambda m, s: m.lu(TALL.T), None),
    "lu_factor": (lambda m, s: m.lu_factor(A), None),
    "lu_solve": (lambda m, s: m.lu_solve(m.lu_factor(A), B), None),
    "lu_solve/trans-vec": (lambda m, s: m.lu_solve(m.lu_factor(A), BV, trans=1), None),
    "solve/gen": (lambda m, s: m.solve(A, B), None),
    "solve/pos-lower": (lambda m, s: m.solve(np.tril(SPD), BV, assume_a="pos", lower=True), None),
    "solve/sym-transposed": (lambda m, s: m.solve(A, B, assume_a="sym", transposed=True), None),
    "inv": (lambda m, s: m.inv(A), None),
    "det": (lambda m, s: m.det(A), None),
    "eigh/values": (lambda m, s: m.eigh(np.triu(SPD), lower=False, eigvals_only=True), None),
    "eigh/generalized-values": (lambda m, s: m.eigh(SPD, A @ A.T + np.eye(4), eigvals_only=True), None),
    "qr/full-square": (lambda m, s: m.qr(A), None),
    "qr/full-wide": (lambda m, s: m.qr(TALL.T), None),
    "qr/economic-tall": (lambda m, s: m.qr(TALL, mode="economic"), None),
    "qr/r-tall": (lambda m, s: m.qr(TALL, mode="r"), None),
    "svd/values": (lambda m, s: m.svd(TALL, compute_uv=False), None),
    "block_diag": (lambda m, s: m.block_diag(np.array([1.0, 2.0]), 3, np.ones((2, 2)), np.arange(4).reshape(2, 2)), None),
    "toeplitz": (lambda m, s: m.toeplitz(np.arange(3.0), np.arange(5.0) + 10), None),
    "toeplitz/batched-c-only": (lambda m, s: m.toeplitz(np.arange(6.0).reshape(2, 3)), None),
    "expm/small": (lambda m, s: m.expm(1e-3 * A), None),
    "expm/medium": (lambda m, s: m.expm(0.7 * A), None),
    "expm/squarings": (lambda m, s: m.expm(9 * A), 1e-9),
    "expm_frechet": (lambda m, s: m.expm_frechet(A, B @ B.T), None),
    "sqrtm/spd": (lambda m, s: m.sqrtm(SPD), 1e-9),
    "sqrtm/nonsymmetric": (lambda m, s: m.sqrtm(A @ A + 3 * np.eye(4)), 1e-9),
}


@pytest.mark.parametrize("name", list(VALUE_CASES))
def test_values_match_scipy(name):
    fn, tol = VALUE_CASES[name]
    got, want = fn(L, True), fn(sl, False)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, tol or 1e-10)
    else:
        close(got, want, tol or 1e-10)


def test_eigh_and_svd_vectors_up_to_sign():
    w, v = L.eigh(SPD)
    ws, vs = sl.eigh(SPD)
    close(w, ws)
    close(np.abs(v), np.abs(vs))
    w, v = L.eigh(SPD, A @ A.T + np.eye(4))
    np.testing.assert_allclose(v.T @ (A @ A.T + np.eye(4)) @ v, np.eye(4), atol=1e-10)
    u, s, vh = L.svd(TALL)
    us, ss, vhs = sl.svd(TALL)
    assert u.shape == (5, 5) and vh.shape == (3, 3)
    close(s, ss)
    close(np.abs(u[:, :3]), np.abs(us[:, :3]))


def test_qr_full_tall_is_a_complete_orthogonal_factorisation():
    q, r = L.qr(TALL)  # SciPy's default mode='full': the extra columns of Q are not unique
    assert q.shape == (5, 5) and r.shape == (5, 3)
    np.testing.assert_allclose(q.T @ q, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(q @ r, TALL, atol=1e-12)
    close(np.abs(r), np.abs(sl.qr(TALL)[1]))


def test_expm_dtypes_nan_and_zero():
    assert L.expm(np.eye(2, dtype=np.float32)).dtype == np.float32
    np.testing.assert_allclose(L.expm(np.eye(2, dtype=np.float32)), np.e * np.eye(2), rtol=1e-6)
    assert L.expm(np.eye(3, dtype=np.int64)).dtype == np.float64
    close(L.expm(np.zeros((3, 3))), np.eye(3))
    assert np.isnan(L.expm(np.full((2, 2), np.nan))).all()
    assert np.isnan(L.expm(1e6 * np.eye(2))).all()  # more than max_squarings: NaN, as JAX


def test_sqrtm_without_real_root_is_nan():
    assert np.isnan(L.sqrtm(-np.eye(2))).all()


GRAD_CASES = {
    "expm": (lambda x: L.expm(x), 0.5 * A),
    "expm/with-squarings": (lambda x: L.expm(x), 3 * A),
    "sqrtm": (lambda x: L.sqrtm(x), SPD),
    "solve_triangular": (lambda x: L.solve_triangular(x + 4 * np.eye(4), B, trans=1), A),
    "cho_solve": (lambda x: L.cho_solve(L.cho_factor(x), B), SPD),
    "lu_solve": (lambda x: L.lu_solve(L.lu_factor(x), BV, trans=1), A),
    "lu": (lambda x: L.lu(x)[1:], A),
    "solve/pos": (lambda x: L.solve(x, B, assume_a="pos"), SPD),
    "eigh/generalized": (lambda x: L.eigh(SPD, x @ x.T + np.eye(4), eigvals_only=True), A),
    "qr/full-tall-R": (lambda x: L.qr(x)[1], TALL),
    "toeplitz": (lambda x: L.toeplitz(x, x[::-1] ** 2), BV),
    "block_diag": (lambda x: L.block_diag(x, x[:2] * 2), B),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_derivatives_match_finite_differences(name):
    fn, x = GRAD_CASES[name]
    check_grads(fn, (x,), order=1, atol=1e-6, rtol=1e-6)


def test_expm_second_order_and_grad_is_scipy_frechet_adjoint():
    check_grads(L.expm, (0.3 * A,), order=2, atol=1e-5, rtol=1e-5)
    e = rng.standard_normal((4, 4))
    g = fg.grad(lambda x: (L.expm(x) * e).sum())(2.5 * A)
    np.testing.assert_allclose(g, sl.expm_frechet(2.5 * A.T, e)[1], rtol=1e-9, atol=1e-9)
    close(L.expm_frechet(A, e, method="blockEnlarge", compute_expm=False), sl.expm_frechet(A, e)[1], 1e-9)


def test_vmap_matches_loop_and_stacks_match():
    stack = rng.standard_normal((3, 3, 3)) * np.array([0.01, 0.6, 6.0])[:, None, None]
    loop = np.stack([sl.expm(m) for m in stack])
    np.testing.assert_allclose(fg.vmap(L.expm)(stack), loop, rtol=1e-10)
    np.testing.assert_allclose(L.expm(stack), loop, rtol=1e-10)
    spd = stack @ np.swapaxes(stack, 1, 2) + 2 * np.eye(3)
    np.testing.assert_allclose(fg.vmap(L.sqrtm)(spd), np.stack([sl.sqrtm(m) for m in spd]), rtol=1e-8)
    lus = fg.vmap(lambda m: L.lu_solve(L.lu_factor(m), np.ones(3)))(spd)
    np.testing.assert_allclose(lus, np.stack([np.linalg.solve(m, np.ones(3)) for m in spd]), rtol=1e-10)
    np.testing.assert_allclose(fg.vmap(L.cholesky)(spd), np.stack([sl.cholesky(m) for m in spd]), rtol=1e-10)


def test_jit_matches_eager():
    def program(a, spd, b):
        x = L.lu_solve(L.lu_factor(a), b)
        y = L.cho_solve(L.cho_factor(spd, lower=True), b)
        return L.expm(0.3 * a) @ x + L.sqrtm(spd) @ y + L.solve_triangular(a, b, lower=True)

    want = program(A, SPD, B)
    got = fg.jit(program)(A, SPD, B)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("call, words", [
    (lambda: L.solve_triangular(A, np.ones(3)), ["solve_triangular", "b", "(3,)", "(4, 4)"]),
    (lambda: L.cholesky(np.ones((2, 3))), ["cholesky", "a", "(2, 3)"]),
    (lambda: L.expm(np.ones(3)), ["expm", "A", "(3,)"]),
    (lambda: L.expm_frechet(A, np.ones((3, 3))), ["expm_frechet", "E", "(3, 3)", "(4, 4)"]),
    (lambda: L.lu_solve((A, np.zeros(3, np.int32)), BV), ["lu_solve", "piv", "(3,)"]),
    (lambda: L.solve(A, BV, assume_a="banana"), ["solve", "assume_a", "banana"]),
    (lambda: L.solve_triangular(A, B, trans=7), ["solve_triangular", "trans", "7"]),
])
def test_bad_input_raises_value_error_naming_things(call, words):
    with pytest.raises(ValueError) as info:
        call()
    for w in words:
        assert w in str(info.value)


def test_unsupported_options_raise():
    with pytest.raises(NotImplementedError, match="qr: pivoting"):
        L.qr(A, pivoting=True)
    with pytest.raises(NotImplementedError, match="lu: tall"):
        L.lu(TALL)
    with pytest.raises(TypeError, match="cho_solve"):
        L.cho_solve(SPD, B)
