"""Gradients through funcgrad.random's reparameterised samplers.

Transform samplers (uniform, truncated_normal, multivariate_normal, exponential via
scale...) are smooth in their parameters at a fixed key: checked against central finite
differences. Gamma-family samplers use implicit reparameterisation, whose per-sample
derivative is that of the inverse CDF at the sample's CDF level: checked against
d/dalpha of scipy.stats.gamma.ppf(u, alpha) (and beta.ppf) at u = cdf(sample)."""
import numpy as np
import pytest
from scipy import stats

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random

from harness import fd_grad

KEY = random.PRNGKey(99)


def test_uniform_grad_wrt_minval_maxval_matches_finite_differences():
    def f(p):
        return fnp.sum(random.uniform(KEY, (6,), minval=p[0], maxval=p[1]) ** 2)

    p = np.array([-0.5, 2.0])
    np.testing.assert_allclose(fg.grad(f)(p), fd_grad(f, p), rtol=1e-6)
    np.testing.assert_allclose(fg.jit(fg.grad(f))(p), fd_grad(f, p), rtol=1e-6)


def test_truncated_normal_and_multivariate_normal_grads_match_finite_differences():
    def f(p):
        return fnp.sum(fnp.sin(random.truncated_normal(KEY, p[0], p[1], (5,))))

    p = np.array([-0.7, 1.2])
    np.testing.assert_allclose(fg.grad(f)(p), fd_grad(f, p), rtol=1e-5)

    def g(p):
        mean = p[:2]
        a = fnp.reshape(p[2:], (2, 2))
        cov = a @ a.T + fnp.eye(2)
        return fnp.sum(random.multivariate_normal(KEY, mean, cov, (4,)) ** 3)

    q = np.array([0.3, -0.2, 1.0, 0.4, -0.3, 0.8])
    np.testing.assert_allclose(fg.grad(g)(q), fd_grad(g, q), rtol=1e-5)


def _ppf_grad(ppf, cdf, x, a, h=1e-6):
    u = cdf(x, a)
    return (ppf(u, a + h) - ppf(u, a - h)) / (2 * h)


@pytest.mark.parametrize("alpha", [0.4, 3.5, 40.0])
def test_gamma_implicit_gradient_matches_the_inverse_cdf_derivative(alpha):
    a = np.full(6, alpha)
    x = np.asarray(random.gamma(KEY, a))
    want = _ppf_grad(stats.gamma.ppf, stats.gamma.cdf, x, a)
    g = fg.grad(lambda a: fnp.sum(random.gamma(KEY, a)))(a)
    np.testing.assert_allclose(g, want, rtol=1e-5)


def test_gamma_gradient_forward_mode_and_under_jit():
    a = np.array([0.7, 1.0, 2.0, 9.0])
    x = np.asarray(random.gamma(KEY, a))
    want = _ppf_grad(stats.gamma.ppf, stats.gamma.cdf, x, a)
    jac = fg.jacfwd(lambda a: random.gamma(KEY, a))(a)
    np.testing.assert_allclose(jac, np.diag(want), rtol=1e-5, atol=1e-300)
    g_jit = fg.jit(fg.grad(lambda a: fnp.sum(random.gamma(KEY, a))))(a)
    np.testing.assert_allclose(g_jit, want, rtol=1e-5)


def test_beta_and_dirichlet_gradients():
    a, b = 2.0, 3.0
    x = float(random.beta(KEY, a, b))
    ga = fg.grad(lambda a: random.beta(KEY, a, b))(a)
    # beta = g_a / (g_a + g_b): its implicit gradient is not the beta inverse-CDF's, but the
    # chain rule through the two gamma draws; check that against the gamma ppf derivatives.
    key_a, key_b = random.split(KEY)
    g1 = float(random.gamma(key_a, a, (1,))[0])
    g2 = float(random.gamma(key_b, b, (1,))[0])
    assert np.isclose(x, g1 / (g1 + g2), rtol=1e-13)
    dg1 = _ppf_grad(stats.gamma.ppf, stats.gamma.cdf, g1, a)
    np.testing.assert_allclose(ga, dg1 * g2 / (g1 + g2) ** 2, rtol=1e-5)

    alpha = np.array([1.5, 0.7, 2.0])
    jac = fg.jacrev(lambda al: random.dirichlet(KEY, al))(alpha)
    assert jac.shape == (3, 3)
    np.testing.assert_allclose(np.sum(jac, axis=0), 0.0, atol=1e-12)  # the simplex constraint


def test_t_gradient_flows_to_df():
    g = fg.grad(lambda df: fnp.sum(random.t(KEY, df, (3,)) ** 2))(5.0)
    assert np.isfinite(g) and g != 0.0


def test_loggamma_and_chisquare_grads_are_gammas():
    # exp(loggamma(k, a)) is gamma(k, a) (the same draw, in log space), and so are their
    # implicit-reparameterisation derivatives; chisquare(k, df) is 2 exp(loggamma(k, df/2))
    a = np.array([0.4, 1.0, 3.5])
    g_gamma = fg.grad(lambda a: fnp.sum(random.gamma(KEY, a)))(a)
    g_log = fg.grad(lambda a: fnp.sum(fnp.exp(random.loggamma(KEY, a))))(a)
    np.testing.assert_allclose(g_log, g_gamma, rtol=1e-10)
    g_chi = fg.grad(lambda df: fnp.sum(random.chisquare(KEY, df)))(2 * a)
    np.testing.assert_allclose(g_chi, g_gamma, rtol=1e-10)
    g_jit = fg.jit(fg.grad(lambda a: fnp.sum(random.loggamma(KEY, a))))(a)
    np.testing.assert_allclose(g_jit, g_gamma / np.asarray(random.gamma(KEY, a)), rtol=1e-10)
