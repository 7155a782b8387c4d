"""funcgrad.scipy.linalg's structured matrices, polar, qr_multiply, eigh_tridiagonal and
the Schur family (hessenberg, schur, rsf2csf, funm, solve_sylvester) against
scipy.linalg: values, batching, jit, and derivatives against finite differences."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import linalg as fl
from funcgrad.test_util import check_grads

sl = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(0)
V5 = RNG.normal(size=5)
V7 = RNG.normal(size=7)

STRUCTURED = [
    ("circulant", (V5,)), ("circulant", (np.arange(4),)), ("hankel", (V5,)), ("hankel", (V5, V7)),
    ("companion", (V5,)), ("fiedler", (V5,)), ("fiedler_companion", (V5,)), ("fiedler_companion", (V7,)),
    ("fiedler_companion", (V5[:4],)), ("fiedler_companion", (V5[:2],)), ("leslie", (V5, V5[:4])),
    ("convolution_matrix", (V5, 3)), ("convolution_matrix", (V5, 3, "same")), ("convolution_matrix", (V5, 8, "same")),
    ("convolution_matrix", (V5, 3, "valid")), ("convolution_matrix", (V5, 9, "valid")),
    ("convolution_matrix", (V5[:2], 6, "same")), ("dft", (5,)), ("dft", (4, "sqrtn")), ("dft", (3, "n")),
    ("hadamard", (8,)), ("hadamard", (1,)), ("helmert", (5,)), ("helmert", (4, True)), ("hilbert", (4,)),
    ("invhilbert", (7,)), ("pascal", (6,)), ("pascal", (5, "lower")), ("pascal", (5, "upper")), ("invpascal", (6,)),
    ("invpascal", (4, "lower")), ("invpascal", (4, "upper")),
]


@pytest.mark.parametrize("name,args", STRUCTURED, ids=[f"{n}-{i}" for i, (n, _) in enumerate(STRUCTURED)])
def test_structured_matrices_match_scipy(name, args):
    got, want = getattr(fl, name)(*args), getattr(sl, name)(*args)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_structured_matrices_batch_and_jit():
    a = RNG.normal(size=(2, 4))
    for name in ["circulant", "hankel", "companion", "fiedler", "fiedler_companion"]:
        got = getattr(fl, name)(a)
        for i in range(2):
            np.testing.assert_allclose(got[i], getattr(sl, name)(a[i]), rtol=1e-13)
        np.testing.assert_allclose(fg.jit(getattr(fl, name))(a), got, rtol=1e-13)
    np.testing.assert_allclose(fl.convolution_matrix(a, 3)[1], sl.convolution_matrix(a[1], 3))
    check_grads(lambda v: fl.companion(v), (V5,), order=2)
    check_grads(lambda v: fl.convolution_matrix(v, 4, "same"), (V5,), order=1)
    with pytest.raises(ValueError, match="power of 2"):
        fl.hadamard(6)
    with pytest.raises(ValueError, match="one element fewer"):
        fl.leslie(V5, V5)


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5)])
@pytest.mark.parametrize("side", ["right", "left"])
def test_polar(shape, side):
    a = RNG.normal(size=shape)
    for got, want in zip(fl.polar(a, side), sl.polar(a, side)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    check_grads(lambda a: fl.polar(a, side)[1], (a,), order=1)


def test_qr_multiply():
    a = RNG.normal(size=(5, 3))
    cases = [(RNG.normal(size=(4, 5)), "right"), (RNG.normal(size=(3, 4)), "left"), (V5, "right"), (V5[:3], "left")]
    for c, mode in cases:
        for conj in (False, True):
            for got, want in zip(fl.qr_multiply(a, c, mode, conjugate=conj), sl.qr_multiply(a, c, mode, conjugate=conj)):
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    with pytest.raises(ValueError, match="does not fit"):
        fl.qr_multiply(a, np.ones((2, 2)))


def test_eigh_tridiagonal():
    d, e = RNG.normal(size=6), RNG.normal(size=5)
    w, v = fl.eigh_tridiagonal(d, e)
    sw, sv = sl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, sw, rtol=1e-12)
    np.testing.assert_allclose(np.abs(v), np.abs(sv), atol=1e-12)  # eigenvector signs are not unique
    for select, rng in [("i", (1, 3)), ("v", (-1.0, 1.0))]:
        np.testing.assert_allclose(fl.eigh_tridiagonal(d, e, eigvals_only=True, select=select, select_range=rng),
                                   sl.eigh_tridiagonal(d, e, eigvals_only=True, select=select, select_range=rng),
                                   rtol=1e-12)
    np.testing.assert_allclose(fg.jit(lambda d, e: fl.eigh_tridiagonal(d, e, eigvals_only=True))(d, e), sw, rtol=1e-12)
    check_grads(lambda d: fl.eigh_tridiagonal(d, e, eigvals_only=True), (d,), order=1)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
@pytest.mark.parametrize("cplx", [False, True])
def test_hessenberg_matches_scipy(n, cplx):
    a = RNG.normal(size=(n, n)) + (1j * RNG.normal(size=(n, n)) if cplx else 0)
    h, q = fl.hessenberg(a, calc_q=True)
    sh, sq = sl.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(h, sh, atol=1e-12)
    np.testing.assert_allclose(q, sq, atol=1e-12)
    np.testing.assert_allclose(fg.jit(fl.hessenberg)(a), sh, atol=1e-12)


def test_hessenberg_grad_and_batch():
    a = RNG.normal(size=(2, 4, 4))
    np.testing.assert_allclose(fl.hessenberg(a)[1], sl.hessenberg(a[1]), atol=1e-12)
    check_grads(lambda a: fl.hessenberg(a), (a[0],), order=1)


def _same_values(x, y, atol):
    """The same multiset of complex numbers (each matched to its nearest; sorting is fragile
    when real parts tie to rounding)."""
    x, y = np.ravel(x), list(np.ravel(y))
    assert len(x) == len(y)
    for v in x:
        k = int(np.argmin(np.abs(np.asarray(y) - v)))
        assert abs(y[k] - v) <= atol, (v, y)
        y.pop(k)


def _check_schur(a, t, z, real):
    n = a.shape[-1]
    np.testing.assert_allclose(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, atol=1e-12)
    np.testing.assert_allclose(np.conj(np.swapaxes(z, -1, -2)) @ z, np.broadcast_to(np.eye(n), z.shape), atol=1e-12)
    assert np.all(np.tril(t, -2) == 0)
    if real:
        assert t.dtype.kind == "f" and z.dtype.kind == "f"
        sub = np.diagonal(t, -1, -2, -1)
        assert not np.any((sub[..., :-1] != 0) & (sub[..., 1:] != 0))  # blocks are at most 2x2
    else:
        assert np.all(np.tril(t, -1) == 0)
    _same_values(np.linalg.eigvals(t), np.linalg.eigvals(a), 1e-10)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur(output):
    for a in [RNG.normal(size=(5, 5)), RNG.normal(size=(6, 6)), np.diag([1.0, 2.0, 3.0]), np.array([[0.0, -1.0], [1.0, 0.0]]),
              (lambda m: m + m.T)(RNG.normal(size=(4, 4))), RNG.normal(size=(2, 3, 3))]:
        t, z = fl.schur(a, output)
        _check_schur(a, np.asarray(t), np.asarray(z), output == "real")
    a = RNG.normal(size=(4, 4))
    t, z = fg.jit(lambda a: fl.schur(a, output))(a)
    _check_schur(a, np.asarray(t), np.asarray(z), output == "real")
    # The diagonal of the triangular form: the eigenvalues in SciPy's (LAPACK's) order.
    if output == "complex":
        st, _ = sl.schur(a.astype(complex))
        _same_values(np.diag(t), np.diag(st), 1e-12)


def test_rsf2csf():
    a = RNG.normal(size=(6, 6))
    st, sz = sl.schur(a)
    for got, want in zip(fl.rsf2csf(st, sz), sl.rsf2csf(st, sz)):
        np.testing.assert_allclose(got, want, atol=1e-12)
    ct, cz = fg.jit(fl.rsf2csf)(*fl.schur(a))
    _check_schur(a, np.asarray(ct), np.asarray(cz), False)


def test_funm():
    a = RNG.normal(size=(5, 5))
    for f in [np.exp, np.sin, lambda x: x**3 + 1.0]:
        np.testing.assert_allclose(fl.funm(a, f), sl.funm(a, f), atol=1e-12)
    np.testing.assert_allclose(fg.jit(lambda a: fl.funm(a, fnp.exp))(a), sl.expm(a), atol=1e-12)
    f, err = fl.funm(a, np.exp, disp=False)
    np.testing.assert_allclose(err, sl.funm(a, np.exp, disp=False)[1], rtol=1e-6)
    np.testing.assert_allclose(fl.funm(np.diag([1.0, 1.0, 2.0]), np.exp).real, np.diag(np.exp([1.0, 1.0, 2.0])), atol=1e-14)


@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_solve_sylvester(method):
    a, b, c = RNG.normal(size=(4, 4)), RNG.normal(size=(3, 3)), RNG.normal(size=(4, 3))
    x = fl.solve_sylvester(a, b, c, method=method)
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, sl.solve_sylvester(a, b, c), atol=1e-11)
    cc = c + 1j * RNG.normal(size=c.shape)
    # (SciPy's real-Schur path mishandles a complex C with real A and B: compare with its complex path)
    np.testing.assert_allclose(fl.solve_sylvester(a, b, cc, method=method),
                               sl.solve_sylvester(a.astype(complex), b.astype(complex), cc), atol=1e-11)
    ab = RNG.normal(size=(2, 4, 4))
    np.testing.assert_allclose(fl.solve_sylvester(ab, b, c, method=method)[1], sl.solve_sylvester(ab[1], b, c), atol=1e-11)
    np.testing.assert_allclose(fg.jit(lambda a, b, c: fl.solve_sylvester(a, b, c, method=method))(a, b, c), x, atol=1e-12)
    assert np.all(np.isnan(fl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)), method=method)))
    check_grads(lambda c: fl.solve_sylvester(a, b, c, method=method), (c,), order=1)


def test_float32_stays_float32():
    a = RNG.normal(size=(4, 4)).astype(np.float32)
    for method in ["schur", "eigen"]:
        x = fl.solve_sylvester(a, a.T, a, method=method)
        assert x.dtype == np.float32
        np.testing.assert_allclose(a @ x + x @ a.T, a, atol=1e-3)
    assert fl.schur(a)[0].dtype == np.float32 and fl.hessenberg(a).dtype == np.float32
    assert fl.polar(a)[1].dtype == np.float32 and fl.circulant(a[0]).dtype == np.float32
