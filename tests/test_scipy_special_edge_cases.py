"""funcgrad.scipy.special beyond the op table: singular points, derivative conventions,
higher-order derivatives and accuracy sweeps against SciPy."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy import special as fsp
from funcgrad.test_util import check_grads

sps = pytest.importorskip("scipy.special")

inf, nan = np.inf, np.nan


def test_erf_family_at_infinity():
    np.testing.assert_array_equal(fsp.erf(np.array([-inf, inf, 0.0])), [-1.0, 1.0, 0.0])
    np.testing.assert_array_equal(fsp.erfc(np.array([-inf, inf])), [2.0, 0.0])
    np.testing.assert_array_equal(fsp.erfinv(np.array([-1.0, 1.0, 0.0])), [-inf, inf, 0.0])
    assert np.isnan(fsp.erfinv(1.5)) and np.isnan(fsp.erf(nan))


def test_erfc_keeps_relative_accuracy_in_the_tail():
    x = np.array([5.0, 10.0, 25.0])
    np.testing.assert_allclose(fsp.erfc(x), sps.erfc(x), rtol=1e-14)
    assert fsp.erfc(25.0) > 0


def test_gammaln_poles_and_overflow():
    x = np.array([0.0, -0.0, -1.0, -2.0, -50.0, inf, 1e308])
    np.testing.assert_array_equal(fsp.gammaln(x), np.full(x.shape, inf))


def test_digamma_singular_points_follow_scipy():
    x = np.array([0.0, -0.0, -1.0, -3.0, -inf, inf, nan])
    np.testing.assert_array_equal(fsp.digamma(x), sps.digamma(x))


def test_polygamma_poles_follow_scipy():
    x = np.array([0.0, -0.0, -1.0, -4.0])
    for n in (1, 2, 3):
        np.testing.assert_array_equal(fsp.polygamma(n, x), sps.polygamma(n, x))


def test_digamma_negative_non_integers():
    # Away from digamma's negative roots, where relative error is unbounded for everyone.
    x = -np.arange(0, 30) - np.array([0.1, 0.25, 0.4, 0.45] * 7 + [0.1, 0.25])
    np.testing.assert_allclose(fsp.digamma(x), sps.digamma(x), rtol=1e-13)
    # Reflection: psi(1 - x) - psi(x) = pi cot(pi x).
    np.testing.assert_allclose(fsp.digamma(1 - x) - fsp.digamma(x), np.pi / np.tan(np.pi * x), rtol=1e-12)


def test_accuracy_sweep_against_scipy():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(0.01, 40.0, 400), np.geomspace(1e-6, 1e6, 40)])
    np.testing.assert_allclose(fsp.digamma(x), sps.digamma(x), rtol=1e-13)
    for n in (1, 2, 5):
        np.testing.assert_allclose(fsp.polygamma(n, x), sps.polygamma(n, x), rtol=1e-13)
    far_from_roots = x[(np.abs(x - 1) > 0.05) & (np.abs(x - 2) > 0.05)]
    np.testing.assert_allclose(fsp.gammaln(far_from_roots), sps.gammaln(far_from_roots), rtol=1e-13)
    u = rng.uniform(-0.999, 0.999, 400)
    np.testing.assert_allclose(fsp.erfinv(u), sps.erfinv(u), rtol=1e-14)
    np.testing.assert_allclose(fsp.erf(fsp.erfinv(u)), u, rtol=1e-15)


def test_float32_in_float32_out():
    x = np.array([0.5, 1.5], np.float32)
    for f in (fsp.erf, fsp.erfc, fsp.erfinv, fsp.gammaln, fsp.digamma, fsp.expit, fsp.logit, fsp.entr, fsp.softmax):
        x_in = x / 2 if f is fsp.erfinv or f is fsp.logit else x
        assert f(x_in).dtype == np.float32, f.__name__
    assert fsp.polygamma(2, x).dtype == np.float32
    assert fsp.xlogy(x, x).dtype == np.float32
    assert fsp.logsumexp(x).dtype == np.float32


def test_int_inputs_compute_in_float64():
    assert fsp.gammaln(np.array([3, 4])).dtype == np.float64
    np.testing.assert_allclose(fsp.gammaln(np.array([3, 4])), np.log([2.0, 6.0]), rtol=1e-15)


def test_logsumexp_all_neg_inf():
    assert fsp.logsumexp(np.array([-inf, -inf])) == -inf
    out = fsp.logsumexp(np.array([[-inf, -inf], [0.0, -inf]]), axis=1)
    np.testing.assert_array_equal(out, [-inf, 0.0])


def test_logsumexp_gradient_is_softmax_with_neg_inf_entries():
    a = np.array([1.0, -inf, 2.0, 0.5])
    g = fg.grad(fsp.logsumexp)(a)
    np.testing.assert_allclose(g, fsp.softmax(a), rtol=1e-15)
    assert g[1] == 0.0


def test_logsumexp_is_stable_and_keeps_inf():
    np.testing.assert_allclose(fsp.logsumexp(np.array([1e4, 1e4])), 1e4 + np.log(2), rtol=1e-15)
    assert fsp.logsumexp(np.array([inf, 1.0])) == inf
    assert np.isnan(fsp.logsumexp(np.array([nan, 1.0])))


def test_logsumexp_return_sign_and_zero_weights():
    a, b = np.array([1.0, 2.0, 800.0]), np.array([-1.0, 0.5, 0.0])
    out, sign = fsp.logsumexp(a, b=b, return_sign=True)
    want_out, want_sign = sps.logsumexp(a, b=b, return_sign=True)
    np.testing.assert_allclose(out, want_out, rtol=1e-14)
    assert sign == want_sign == 1.0


def test_softmax_gradient():
    x, w = np.array([0.3, -1.2, 2.0]), np.array([1.0, 2.0, -0.5])
    s = fsp.softmax(x)
    g = fg.grad(lambda v: fsp.softmax(v) @ w)(x)
    np.testing.assert_allclose(g, s * (w - s @ w), rtol=1e-14)
    np.testing.assert_allclose(fg.grad(lambda v: fsp.log_softmax(v)[0])(x), np.eye(3)[0] - s, rtol=1e-14)


def test_xlogy_zero_zero_and_its_gradient():
    assert fsp.xlogy(0.0, 0.0) == 0.0
    assert fsp.xlog1py(0.0, -1.0) == 0.0
    # JAX's convention at x == 0: d/dx = log(y), d/dy = x / y = 0 ...
    gx, gy = fg.grad(fsp.xlogy, argnums=(0, 1))(0.0, 2.0)
    assert gx == np.log(2.0) and gy == 0.0
    # ... and where log(y) is not finite, 0 (JAX: -inf and NaN).
    gx, gy = fg.grad(fsp.xlogy, argnums=(0, 1))(0.0, 0.0)
    assert gx == 0.0 and gy == 0.0
    gx, gy = fg.grad(fsp.xlog1py, argnums=(0, 1))(0.0, -1.0)
    assert gx == 0.0 and gy == 0.0


def test_xlogy_special_values_follow_scipy():
    x = np.array([0.0, 0.0, 0.0, 0.0, 1.0, -1.0])
    y = np.array([0.0, nan, inf, -1.0, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = sps.xlogy(x, y)
    np.testing.assert_array_equal(fsp.xlogy(x, y), want)


def test_valid_inputs_raise_no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fsp.xlogy(0.0, 0.0)
        fsp.expit(np.array([-800.0, 800.0]))
        fsp.entr(np.array([0.0, 1.0]))
        fsp.logit(np.array([0.2, 0.5, 0.9]))
        fg.grad(fsp.xlogy, argnums=(0, 1))(0.0, 0.0)


def test_expit_logit_tails():
    assert fsp.expit(-800.0) == 0.0 and fsp.expit(800.0) == 1.0
    np.testing.assert_allclose(fsp.expit(-700.0), np.exp(-700.0), rtol=1e-14)
    np.testing.assert_allclose(fsp.logit(fsp.expit(np.array([-30.0, -1.0, 0.3]))), [-30.0, -1.0, 0.3], rtol=1e-13)
    np.testing.assert_array_equal(fsp.logit(np.array([0.0, 1.0])), [-inf, inf])


def test_entr_special_values():
    np.testing.assert_array_equal(fsp.entr(np.array([0.0, -1.0, inf])), [0.0, -inf, -inf])


@pytest.mark.parametrize("f", [fsp.gammaln, fsp.digamma, lambda x: fsp.polygamma(1, x)], ids=["gammaln", "digamma", "trigamma"])
def test_third_order_derivatives(f):
    # The derivative chain lgamma -> digamma -> polygamma(1) -> polygamma(2) ... is closed.
    check_grads(f, (np.array([0.7, 2.5, -1.3]),), order=3, modes=("fwd", "rev"))


def test_gammaln_second_derivative_is_trigamma():
    x = 3.25
    np.testing.assert_allclose(fg.grad(fg.grad(fsp.gammaln))(x), sps.polygamma(1, x), rtol=1e-14)


def test_polygamma_rejects_bad_orders():
    with pytest.raises(ValueError, match="non-negative integers"):
        fsp.polygamma(-1, 1.0)
    with pytest.raises(ValueError, match="non-negative integers"):
        fsp.polygamma(1.5, 1.0)
    with pytest.raises(TypeError, match="concrete"):
        fg.grad(lambda n: fsp.polygamma(n, 1.0))(1.0)


def test_jaxpr_shows_the_primitives():
    text = str(fg.make_jaxpr(fg.grad(fsp.digamma))(1.5))
    assert "digamma" in text and "polygamma[n=1]" in text
