"""funcgrad.scipy.stats against scipy.stats: every method on grids that include points
outside the support and invalid parameters; derivatives in x and the parameters against
finite differences; vmap against a loop; jit against eager; errors."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy import stats as fst
from funcgrad.test_util import check_grads

sst = pytest.importorskip("scipy.stats")

X = np.array([-3.0, -0.5, 0.0, 0.2, 0.7, 1.0, 2.5, 9.0])[:, None]
Q = np.array([0.0, 1e-9, 0.1, 0.5, 0.93, 1.0, 1.2])[:, None]
K = np.array([-1.0, 0.0, 1.0, 2.0, 3.5, 7.0, 40.0])[:, None]

# (distribution, methods, sample points, parameter columns (each broadcast against the points))
CASES = [
    ("norm", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X, [np.array([0.0, 1.5, -2.0]), np.array([1.0, 0.3, 2.0])]),
    ("norm", ["ppf", "isf"], Q, [np.array([0.0, 1.5, -2.0]), np.array([1.0, 0.3, 2.0])]),
    ("t", ["logpdf", "pdf"], X, [np.array([1.0, 3.5, 30.0]), np.array([0.0, 1.0, -1.0]), np.array([1.0, 2.0, 0.5])]),
    ("gamma", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X,
     [np.array([0.5, 1.0, 4.5]), np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.7])]),
    ("chi2", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X, [np.array([1.0, 2.0, 7.0])]),
    ("beta", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X / 3 + 0.3,
     [np.array([0.5, 2.0, 5.0]), np.array([1.5, 1.0, 0.7])]),
    ("expon", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X, [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("expon", ["ppf"], Q, [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("uniform", ["logpdf", "pdf", "cdf"], X, [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("uniform", ["ppf"], Q, [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("laplace", ["logpdf", "pdf", "cdf"], X, [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("logistic", ["logpdf", "pdf", "cdf", "sf"], X, [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("logistic", ["ppf", "isf"], Q, [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("cauchy", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X, [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("cauchy", ["ppf", "isf"], Q[1:-2], [np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])]),
    ("poisson", ["logpmf", "pmf", "cdf"], K, [np.array([0.0, 0.5, 3.0, 25.0])]),
    ("bernoulli", ["logpmf", "pmf", "cdf"], K, [np.array([0.0, 0.3, 1.0])]),
    ("bernoulli", ["ppf"], Q, [np.array([0.0, 0.3, 1.0])]),
    ("binom", ["logpmf", "pmf"], K, [np.array([5.0, 10.0, 50.0]), np.array([0.0, 0.35, 1.0])]),
    ("geom", ["logpmf", "pmf"], K, [np.array([0.2, 0.5, 1.0])]),
    ("nbinom", ["logpmf", "pmf"], K, [np.array([1.0, 2.5, 10.0]), np.array([0.2, 0.5, 1.0])]),
]


@pytest.mark.parametrize("dist,methods,pts,params", CASES, ids=[f"{c[0]}-{c[1][0]}" for c in CASES])
def test_values_match_scipy_stats(dist, methods, pts, params):
    for m in methods:
        got = getattr(getattr(fst, dist), m)(pts, *params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(getattr(sst, dist), m)(pts, *params)
        assert got.shape == want.shape and got.dtype == np.float64, (m, got.shape, got.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, equal_nan=True, err_msg=f"{dist}.{m}")


def test_invalid_parameters_give_nan():
    assert np.isnan(fst.norm.logpdf(0.0, 0.0, -1.0)) and np.isnan(fst.gamma.cdf(1.0, -2.0))
    assert np.isnan(fst.poisson.logpmf(1.0, -1.0)) and np.isnan(fst.binom.pmf(1.0, 3.0, 1.5))
    assert np.isnan(fst.beta.logpdf(0.5, 0.0, 1.0)) and np.isnan(fst.t.pdf(0.5, -1.0))


def test_far_tails():
    np.testing.assert_allclose(fst.norm.logcdf(-40.0), sst.norm.logcdf(-40.0), rtol=1e-13)
    np.testing.assert_allclose(fst.norm.logsf(40.0), sst.norm.logsf(40.0), rtol=1e-13)
    np.testing.assert_allclose(fst.norm.ppf(1e-300), sst.norm.ppf(1e-300), rtol=1e-14)
    np.testing.assert_allclose(fst.gamma.sf(80.0, 3.0), sst.gamma.sf(80.0, 3.0), rtol=1e-12)
    np.testing.assert_allclose(fst.beta.sf(0.999, 2.0, 3.0), sst.beta.sf(0.999, 2.0, 3.0), rtol=1e-12)


@pytest.mark.parametrize("fn,args", [
    (fst.norm.logcdf, (np.array([-3.0, 0.4]), 0.2, 1.3)),
    (fst.t.logpdf, (np.array([-1.0, 0.4]), 2.5, 0.2, 1.3)),
    (fst.gamma.logpdf, (np.array([0.6, 2.0]), 2.5, 0.1, 1.3)),
    (fst.gamma.cdf, (np.array([0.6, 2.0]), 2.5)),
    (fst.beta.cdf, (np.array([0.3, 0.8]), 2.5, 1.5)),
    (fst.beta.logpdf, (np.array([0.3, 0.8]), 2.5, 1.5)),
    (fst.chi2.sf, (np.array([0.6, 4.0]), 3.0)),
    (fst.logistic.logpdf, (np.array([-2.0, 0.4]), 0.2, 1.3)),
    (fst.cauchy.cdf, (np.array([-2.0, 0.4]), 0.2, 1.3)),
    (fst.poisson.logpmf, (np.array([0.0, 3.0]), 2.5)),
    (fst.nbinom.logpmf, (np.array([0.0, 3.0]), 2.5, 0.4)),
    (fst.binom.logpmf, (np.array([1.0, 3.0]), 6.0, 0.4)),
], ids=["norm.logcdf", "t.logpdf", "gamma.logpdf", "gamma.cdf", "beta.cdf", "beta.logpdf", "chi2.sf",
        "logistic.logpdf", "cauchy.cdf", "poisson.logpmf", "nbinom.logpmf", "binom.logpmf"])
def test_grads_in_x_and_parameters(fn, args):
    # Discrete distributions: derivatives in the continuous parameters only (k, and
    # binom's integer n, stay fixed).
    n_fixed = {"poisson": 1, "nbinom": 1, "binom": 2}.get(fn.__module__.rsplit(".", 1)[-1], 0)
    fixed, diff = args[:n_fixed], args[n_fixed:]

    def f(*d):
        return fn(*fixed, *d)

    check_grads(f, diff, order=2 if len(diff) <= 2 else 1)


def test_vmap_and_jit():
    xs = np.array([0.3, 1.2, 2.5])
    locs = np.array([0.0, 0.5, -0.5])
    looped = np.array([fst.gamma.logcdf(x, 2.0, loc) for x, loc in zip(xs, locs)])
    np.testing.assert_allclose(fg.vmap(lambda x, loc: fst.gamma.logcdf(x, 2.0, loc))(xs, locs), looped, rtol=1e-13)
    for fn, args in [(fst.norm.logsf, (xs,)), (fst.beta.sf, (xs / 3, 2.0, 3.0)), (fst.poisson.cdf, (xs * 3, 2.0)),
                     (fst.t.pdf, (xs, 3.0))]:
        eager, compiled = fn(*args), fg.jit(fn)(*args)
        assert compiled.dtype == eager.dtype
        np.testing.assert_allclose(compiled, eager, rtol=1e-12)
    x32 = np.array([0.3, 1.2], np.float32)
    assert fst.norm.logpdf(x32).dtype == np.float32 and fg.jit(fst.gamma.cdf)(x32, np.float32(2.0)).dtype == np.float32


def test_dirichlet():
    alpha = np.array([0.7, 2.0, 3.5])
    x = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]).T  # (K, N)
    np.testing.assert_allclose(fst.dirichlet.logpdf(x, alpha), sst.dirichlet.logpdf(x, alpha), rtol=1e-13)
    np.testing.assert_allclose(fst.dirichlet.pdf(x[:, 0], alpha), sst.dirichlet.pdf(x[:, 0], alpha), rtol=1e-13)
    np.testing.assert_allclose(fst.dirichlet.logpdf(x[:2], alpha), sst.dirichlet.logpdf(x, alpha), rtol=1e-13)
    assert fst.dirichlet.logpdf(np.array([0.5, 0.6, -0.1]), alpha) == -np.inf
    check_grads(lambda a: fst.dirichlet.logpdf(x, a), (alpha,), order=2)
    with pytest.raises(ValueError, match=r"dirichlet.logpdf: x must have shape \(3, ...\).*got \(5,\)"):
        fst.dirichlet.logpdf(np.ones(5) / 5, alpha)


def test_multivariate_normal():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    mean = np.array([0.3, -1.0, 2.0])
    x = rng.normal(size=(4, 3))
    np.testing.assert_allclose(fst.multivariate_normal.logpdf(x, mean, cov),
                               sst.multivariate_normal.logpdf(x, mean, cov), rtol=1e-12)
    np.testing.assert_allclose(fst.multivariate_normal.pdf(x[0], mean, 2.0),
                               sst.multivariate_normal.pdf(x[0], mean, 2.0 * np.eye(3)), rtol=1e-12)
    np.testing.assert_allclose(fst.multivariate_normal.logpdf(0.4, 0.1, 2.0), sst.norm.logpdf(0.4, 0.1, np.sqrt(2.0)),
                               rtol=1e-13)
    check_grads(lambda m, c: fst.multivariate_normal.logpdf(x, m, c), (mean, cov), order=1, modes=("rev",))
    np.testing.assert_allclose(fg.jit(fst.multivariate_normal.logpdf)(x, mean, cov),
                               fst.multivariate_normal.logpdf(x, mean, cov), rtol=1e-12)
    with pytest.raises(ValueError, match=r"multivariate_normal.logpdf: cov of shape \(2, 2\) must be \(3, 3\)"):
        fst.multivariate_normal.logpdf(x, mean, np.eye(2))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        fst.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)


def test_bad_arguments_name_the_method():
    with pytest.raises(ValueError, match=r"norm.logpdf: .*\(3,\) \(2,\)"):
        fst.norm.logpdf(np.ones(3), np.zeros(2))
    with pytest.raises(TypeError, match="gamma.cdf: missing a required argument: 'a'"):
        fst.gamma.cdf(1.0)
    with pytest.raises(TypeError, match="poisson.pmf: argument 1 of type str"):
        fst.poisson.pmf(1.0, "mu")
