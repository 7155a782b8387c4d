"""funcgrad.scipy.special additions of issue #13 beyond the op table: accuracy sweeps
against SciPy over broad grids, SciPy's edge values, derivatives in the shape parameters,
exact=True, and errors."""
import math
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy import special as fsp
from funcgrad.test_util import check_grads

sps = pytest.importorskip("scipy.special")
inf, nan = np.inf, np.nan


def assert_rel(got, want, rtol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=1e-300)


A = np.concatenate([np.logspace(-2, 0, 5), np.linspace(1.5, 60, 8), [150.0]])[:, None]
X = np.concatenate([np.logspace(-3, 0.5, 6), np.linspace(4, 150, 8)])[None]


def test_incomplete_gamma_grid():
    assert_rel(fsp.gammainc(A, X), sps.gammainc(A, X), 1e-12)
    assert_rel(fsp.gammaincc(A, X), sps.gammaincc(A, X), 1e-12)


def test_incomplete_gamma_and_beta_edges_follow_scipy():
    a = np.array([0.0, 0.0, inf, 1.0, 2.0, -1.0, 1.0, nan])
    x = np.array([1.0, 0.0, 1.0, inf, 0.0, 1.0, -1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(fsp.gammainc(a, x), sps.gammainc(a, x))
        np.testing.assert_array_equal(fsp.gammaincc(a, x), sps.gammaincc(a, x))
    a, b = np.array([0.0, 1.0, 0.0, 1.0, 2.0, 2.0, -1.0]), np.array([1.0, 0.0, 0.0, 1.0, 3.0, 3.0, 1.0])
    x = np.array([0.5, 0.5, 0.5, 1.5, 0.0, 1.0, 0.5])
    np.testing.assert_array_equal(fsp.betainc(a, b, x), sps.betainc(a, b, x))


def test_betainc_grid():
    v = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 20.0, 200.0])
    a, b, x = np.meshgrid(v, v, np.array([1e-5, 0.01, 0.3, 0.5, 0.7, 0.99]), indexing="ij")
    assert_rel(fsp.betainc(a, b, x), sps.betainc(a, b, x), 1e-12)


def test_gammainc_derivative_in_a_and_second_order():
    # d/da has no closed form: forward mode through the series / continued fraction.
    check_grads(lambda a: fsp.gammainc(a, 3.0), (np.array([0.7, 2.5, 6.0]),), order=2)
    check_grads(lambda a, x: fsp.gammaincc(a, x), (np.array([1.5, 4.0]), np.array([0.8, 9.0])), order=1)
    check_grads(lambda a, b: fsp.betainc(a, b, 0.35), (np.array([0.8, 3.0]), np.array([2.0, 1.5])), order=1)
    # d/dx is the density, exactly
    got = fg.vmap(fg.grad(fsp.gammainc, argnums=1))(np.array([0.5, 3.0]), np.array([2.0, 2.0]))
    want = np.exp(-2.0) * 2.0 ** (np.array([0.5, 3.0]) - 1) / sps.gamma([0.5, 3.0])
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_jit_of_grad_through_the_loops():
    f = fg.jit(fg.grad(lambda a, x: fsp.gammainc(a, x) + fsp.betainc(a, 2.0, x / 10), argnums=(0, 1)))
    eager = fg.grad(lambda a, x: fsp.gammainc(a, x) + fsp.betainc(a, 2.0, x / 10), argnums=(0, 1))(1.7, 2.2)
    np.testing.assert_allclose(f(1.7, 2.2), eager, rtol=1e-12)


def test_gamma_family_grid_and_poles():
    g = np.concatenate([np.linspace(-20.5, 171, 200), [0.0, -0.0, -1.0, inf, -inf, nan]])
    assert_rel(fsp.gamma(g), sps.gamma(g), 1e-12)
    assert_rel(fsp.rgamma(g[:-3]), sps.rgamma(g[:-3]), 1e-12)
    p, q = np.logspace(-3, 2, 15)[:, None], np.logspace(-3, 2, 15)[None]
    assert_rel(fsp.betaln(p, q), sps.betaln(p, q), 1e-12)
    assert_rel(fsp.beta(p, q), sps.beta(p, q), 1e-12)
    mg = np.linspace(3, 50, 8)
    assert_rel(fsp.multigammaln(mg, 4), [sps.multigammaln(v, 4) for v in mg], 1e-13)


def test_betaln_large_arguments_against_high_precision_values():
    # mpmath (50 digits); SciPy's lgamma differences lose ~1e-12 relative here.
    assert math.isclose(fsp.betaln(0.18873918221350977, 621.0169418915616), 0.3716246319561111275, rel_tol=1e-14)
    assert math.isclose(fsp.betaln(22.122162910704503, 1000.0), -107.29115713563852164, rel_tol=1e-14)


def test_zeta_grid_and_edges():
    x = np.array([1.0001, 1.1, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0, 60.0])[:, None]
    q = np.concatenate([np.logspace(-3, 3, 10), [-0.5, -1.5, -2.5]])[None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_rel(fsp.zeta(x, q), sps.zeta(x, q), 1e-12)
        r = np.concatenate([np.linspace(-60, 60, 121) + 0.013, [-2.0, -4.0, 0.0, 1.0]])
        assert_rel(fsp.zeta(r), sps.zeta(r), 1e-12)
        edges_x, edges_q = np.array([1.0, 0.5, 2.0, 2.5]), np.array([1.0, 1.0, 0.0, -1.5])
        np.testing.assert_array_equal(fsp.zeta(edges_x, edges_q), sps.zeta(edges_x, edges_q))
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    np.testing.assert_allclose(fg.grad(fsp.zeta, argnums=1)(2.5, 1.7), -2.5 * sps.zeta(3.5, 1.7), rtol=1e-12)


def test_bessel_grid_and_infinities():
    b = np.concatenate([np.linspace(-50, 50, 201), [0.0, 700.0, -700.0, 713.0]])
    for name in ("i0", "i0e", "i1", "i1e"):
        assert_rel(getattr(fsp, name)(b), getattr(sps, name)(b), 1e-13)
        np.testing.assert_array_equal(getattr(fsp, name)(np.array([inf, -inf, nan])),
                                      getattr(sps, name)(np.array([inf, -inf, nan])))
    np.testing.assert_allclose(fg.vmap(fg.grad(fsp.i0))(np.array([0.5, 40.0])), sps.i1([0.5, 40.0]), rtol=1e-13)


def test_normal_family_far_in_the_tails():
    x = np.concatenate([np.linspace(-38, 38, 301), [-1e3, 1e3, 0.0, -inf, inf, nan]])
    assert_rel(fsp.ndtr(x), np.where(np.abs(sps.ndtr(x)) < 1e-290, fsp.ndtr(x), sps.ndtr(x)), 1e-12)
    assert_rel(fsp.log_ndtr(x), sps.log_ndtr(x), 1e-12)
    assert_rel(fsp.erfcx(x), sps.erfcx(x), 1e-13)
    p = np.concatenate([np.logspace(-300, -1, 100), np.linspace(0.01, 0.99, 99), 1 - np.logspace(-16, -1, 30),
                        [0.0, 1.0, -1.0, 2.0, nan]])
    assert_rel(fsp.ndtri(p), sps.ndtri(p), 1e-14)
    # custom derivatives: log_ndtr' = pdf / cdf even at -40, ndtri' = 1 / pdf(ndtri)
    np.testing.assert_allclose(fg.grad(fsp.log_ndtr)(-40.0), 40.02498, rtol=1e-6)
    z = fsp.ndtri(1e-30)
    np.testing.assert_allclose(fg.grad(fsp.ndtri)(1e-30), math.sqrt(2 * math.pi) * math.exp(z * z / 2), rtol=1e-13)


def test_exponential_integrals():
    e = np.logspace(-5, 2.85, 150)
    assert_rel(fsp.exp1(e), sps.exp1(e), 1e-13)
    ee = np.concatenate([e, -e])
    away = np.abs(ee - 0.3725) > 0.05  # Ei's root: unbounded relative error for everyone
    assert_rel(fsp.expi(ee[away]), sps.expi(ee[away]), 1e-13)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = np.array([-7.0, 0.0, inf, -inf, nan])
        np.testing.assert_array_equal(fsp.exp1(s), sps.exp1(s))
        assert_rel(fsp.expi(s), sps.expi(s), 1e-13)
    np.testing.assert_allclose(fg.grad(fsp.expi)(2.5), math.exp(2.5) / 2.5, rtol=1e-13)
    np.testing.assert_allclose(fg.grad(fsp.exp1)(4.0), -math.exp(-4.0) / 4.0, rtol=1e-13)


def test_factorial_and_comb():
    n = np.arange(-2, 171.0)
    assert_rel(fsp.factorial(n), sps.factorial(n), 1e-12)
    assert fsp.factorial(25, exact=True) == math.factorial(25)
    np.testing.assert_array_equal(fsp.factorial(np.array([0, 5, -1]), exact=True), [1, 120, 0])
    big_n, k = np.arange(0, 60.0)[:, None], np.arange(0, 60.0)[None]
    assert_rel(fsp.comb(big_n, k), sps.comb(big_n, k), 1e-12)
    assert_rel(fsp.comb(big_n, k, repetition=True), sps.comb(big_n, k, repetition=True), 1e-12)
    assert fsp.comb(60, 30, exact=True) == math.comb(60, 30)
    assert fsp.comb(3, 2, exact=True, repetition=True) == 6


def test_entropies_and_sinc():
    x, y = np.array([0.0, 0.5, 2.0, -1.0, 0.0])[:, None], np.array([0.0, 0.3, 2.0, -1.0, nan])[None]
    np.testing.assert_array_equal(fsp.kl_div(x, y), sps.kl_div(x, y))
    np.testing.assert_array_equal(fsp.rel_entr(x, y), sps.rel_entr(x, y))
    # every derivative of sinc is right at 0: the second is -pi^2/3, the fourth pi^4/5
    d2 = fg.grad(fg.grad(fsp.sinc))(0.0)
    d4 = fg.grad(fg.grad(fg.grad(fg.grad(fsp.sinc))))(0.0)
    np.testing.assert_allclose([d2, d4], [-math.pi**2 / 3, math.pi**4 / 5], rtol=1e-14)
    assert fg.grad(fsp.sinc)(0.0) == 0.0


def test_float32_stays_float32_under_jit():
    x = np.array([0.3, 1.5], np.float32)
    for fn in (fsp.gamma, fsp.i1e, fsp.ndtr, fsp.log_ndtr, fsp.erfcx, fsp.expi, lambda v: fsp.gammainc(v, v)):
        eager, compiled = fn(x), fg.jit(fn)(x)
        assert eager.dtype == compiled.dtype == np.float32
        np.testing.assert_allclose(compiled, eager, rtol=1e-6)


def test_bad_input_errors_name_the_function_and_shapes():
    with pytest.raises(ValueError, match=r"gammainc: .*\(3,\) \(4,\)"):
        fsp.gammainc(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"betainc: .*\(2,\)"):
        fsp.betainc(np.ones(2), 1.0, np.ones(3))
    with pytest.raises(TypeError, match="zeta: argument 0 of type str"):
        fsp.zeta("a", 1.0)
    with pytest.raises(ValueError, match="multigammaln: d must be"):
        fsp.multigammaln(3.0, 0)
    with pytest.raises(TypeError, match="factorial: exact=True needs a concrete value of n"):
        fg.jit(lambda n: fsp.factorial(n, exact=True))(3.0)
    with pytest.raises(ValueError, match="factorial: exact=True overflows"):
        fsp.factorial(np.array([21]), exact=True)
    with pytest.raises(ValueError, match="comb: exact=True needs integer N"):
        fsp.comb(2.5, 1, exact=True)
