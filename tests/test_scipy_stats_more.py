"""The later funcgrad.scipy.stats distributions (gumbel_l/_r, pareto, truncnorm, gennorm,
vonmises, wrapcauchy, betabinom, multinomial, poisson.entropy), gaussian_kde and the sample
statistics (mode, rankdata, sem) against scipy.stats: values on grids with points outside
the support and invalid parameters, derivatives against finite differences, jit and vmap."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy import stats as fst
from funcgrad.test_util import check_grads

sst = pytest.importorskip("scipy.stats")

X = np.array([-3.0, -0.5, 0.0, 0.2, 0.7, 1.0, 2.5, 9.0])[:, None]
Q = np.array([0.0, 1e-9, 0.1, 0.5, 0.93, 1.0])[:, None]
K = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 7.0, 40.0])[:, None]
LOC, SCALE = np.array([0.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5])

CASES = [
    ("gumbel_r", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X, [LOC, SCALE]),
    ("gumbel_r", ["ppf"], Q, [LOC, SCALE]),
    ("gumbel_l", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X, [LOC, SCALE]),
    ("gumbel_l", ["ppf"], Q, [LOC, SCALE]),
    ("pareto", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X + 1.5, [np.array([0.5, 2.0, 5.0]), LOC, SCALE]),
    ("pareto", ["ppf"], Q, [np.array([0.5, 2.0, 5.0]), LOC, SCALE]),
    ("truncnorm", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], X,
     [np.array([-1.0, 0.5, -30.0, -2.0]), np.array([2.0, 3.0, -25.0, 8.0]), np.array([0.0, -1.0, 0.5, 0.0]),
      np.array([1.0, 2.0, 0.5, 1.0])]),
    ("gennorm", ["logpdf", "pdf", "cdf"], X, [np.array([0.5, 1.0, 2.0, 8.0])]),
    ("vonmises", ["logpdf", "pdf"], X, [np.array([0.1, 1.0, 4.0, 300.0])]),
    ("wrapcauchy", ["logpdf", "pdf"], X + 3.0, [np.array([0.1, 0.5, 0.95])]),
    ("betabinom", ["logpmf", "pmf"], K, [np.array([5.0, 10.0, 50.0]), np.array([0.5, 2.0, 8.0]), np.array([1.5, 0.7, 3.0])]),
]


def _scipy(dist, m, pts, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(getattr(sst, dist), m)(pts, *params)


@pytest.mark.parametrize("dist,methods,pts,params", CASES, ids=[f"{c[0]}-{c[1][0]}" for c in CASES])
def test_values_match_scipy_stats(dist, methods, pts, params):
    for m in methods:
        got = getattr(getattr(fst, dist), m)(pts, *params)
        want = _scipy(dist, m, pts, params)
        assert got.shape == want.shape and got.dtype == np.float64, (m, got.shape, got.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-300, equal_nan=True, err_msg=f"{dist}.{m}")


def test_invalid_parameters_give_nan():
    assert np.isnan(fst.gumbel_r.pdf(0.0, 0.0, -1.0)) and np.isnan(fst.pareto.cdf(2.0, -1.0))
    assert np.isnan(fst.truncnorm.logpdf(0.0, 1.0, -1.0)) and np.isnan(fst.gennorm.pdf(0.0, 0.0))
    assert np.isnan(fst.wrapcauchy.pdf(1.0, 1.0)) and np.isnan(fst.betabinom.pmf(1.0, 3.5, 1.0, 1.0))
    assert np.isnan(fst.vonmises.logpdf(1.0, -1.0)) and np.isnan(fst.poisson.entropy(-1.0))


def test_truncnorm_far_tails_are_finite():
    for a, b in [(30.0, 31.0), (-31.0, -30.0), (8.0, np.inf)]:
        x = np.array([a + 0.1, a + 0.5]) if np.isfinite(b) else np.array([8.1, 9.0])
        got = fst.truncnorm.logpdf(x, a, b)
        np.testing.assert_allclose(got, sst.truncnorm.logpdf(x, a, b), rtol=1e-9)
        np.testing.assert_allclose(fst.truncnorm.logcdf(x, a, b), sst.truncnorm.logcdf(x, a, b), rtol=1e-9)


def test_multinomial():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 6.0], [2.0, 2.0, 1.0]])
    p = np.array([0.2, 0.3, 0.5])
    want = sst.multinomial.logpmf(x, 6, p)
    np.testing.assert_allclose(fst.multinomial.logpmf(x, 6.0, p), want, rtol=1e-13)
    assert fst.multinomial.logpmf(x[2], 6.0, p) == -np.inf  # the counts add up to 5
    np.testing.assert_allclose(fst.multinomial.pmf(x[0], 6, p), sst.multinomial.pmf(x[0], 6, p), rtol=1e-13)
    check_grads(lambda q: fst.multinomial.logpmf(x[0], 6.0, q), (p,), order=2)


def test_poisson_entropy():
    mu = np.array([0.0, 1e-3, 0.5, 3.0, 10.0, 99.0, 150.0, 399.0, 401.0, 1000.0])
    np.testing.assert_allclose(fst.poisson.entropy(mu), sst.poisson.entropy(mu), rtol=1e-11, atol=1e-16)
    np.testing.assert_allclose(fst.poisson.entropy(3.0, loc=2.0), sst.poisson.entropy(3.0, loc=2.0), rtol=1e-13)
    check_grads(fst.poisson.entropy, (np.array([0.7, 20.0, 700.0]),), order=1)


@pytest.mark.parametrize("fn,args", [
    (fst.gumbel_r.logcdf, (np.array([-1.0, 0.4]), 0.2, 1.3)),
    (fst.gumbel_l.logpdf, (np.array([-1.0, 0.4]), 0.2, 1.3)),
    (fst.pareto.logpdf, (np.array([1.6, 3.0]), 2.5, 0.1, 1.3)),
    (fst.truncnorm.logpdf, (np.array([-0.3, 0.9]), -1.0, 1.5, 0.2, 1.1)),
    (fst.truncnorm.cdf, (np.array([-0.3, 0.9]), -1.0, 1.5)),
    (fst.gennorm.cdf, (np.array([-0.3, 0.9]), 1.7)),
    (fst.vonmises.logpdf, (np.array([-0.3, 0.9]), 2.5)),
    (fst.wrapcauchy.logpdf, (np.array([0.3, 2.9]), 0.4)),
    (lambda a, b: fst.betabinom.logpmf(np.array([1.0, 3.0]), 5.0, a, b), (1.5, 2.5)),  # (in a and b: k is discrete)
])
def test_grads_in_x_and_parameters(fn, args):
    check_grads(fn, args, order=1)


def test_jit_and_vmap():
    x = np.linspace(-1.0, 3.0, 7)
    f = lambda x, a: fst.truncnorm.logsf(x, a, 2.0)  # noqa: E731
    np.testing.assert_allclose(fg.jit(f)(x, -0.5), f(x, -0.5), rtol=1e-13)
    np.testing.assert_allclose(fg.vmap(fst.gumbel_r.pdf)(x), fst.gumbel_r.pdf(x), rtol=1e-14)
    np.testing.assert_allclose(fg.jit(fst.poisson.entropy)(np.array([2.0, 500.0])),
                               fst.poisson.entropy(np.array([2.0, 500.0])), rtol=1e-13)


def test_gaussian_kde():
    rng = np.random.default_rng(0)
    data, w = rng.normal(size=(2, 30)), rng.uniform(size=30)
    pts = rng.normal(size=(2, 6))
    for bw in [None, "silverman", 0.3, lambda k: 0.5]:
        got, want = fst.gaussian_kde(data, bw, w), sst.gaussian_kde(data, bw, w)
        np.testing.assert_allclose(got.covariance, want.covariance, rtol=1e-13)
        np.testing.assert_allclose(got(pts), want(pts), rtol=1e-12)
        np.testing.assert_allclose(got.logpdf(pts), want.logpdf(pts), rtol=1e-12)
        np.testing.assert_allclose(got.integrate_gaussian([0.1, 0.2], [[1.0, 0.2], [0.2, 2.0]]),
                                   want.integrate_gaussian([0.1, 0.2], [[1.0, 0.2], [0.2, 2.0]]), rtol=1e-12)
        small, small_s = fst.gaussian_kde(data[:, :7]), sst.gaussian_kde(data[:, :7])
        v = got.integrate_kde(small)
        assert v > 0
        np.testing.assert_allclose(v, want.integrate_kde(small_s), rtol=1e-12)
    one, one_s = fst.gaussian_kde(data[0]), sst.gaussian_kde(data[0])
    np.testing.assert_allclose(one.integrate_box_1d(-0.5, 1.0), one_s.integrate_box_1d(-0.5, 1.0), rtol=1e-13)
    np.testing.assert_allclose(one.logpdf(40.0), one_s.logpdf(40.0), rtol=1e-12)  # pdf underflows to 0 there
    np.testing.assert_allclose(fg.jit(lambda k, p: k.pdf(p))(one, np.array([0.3])), one_s(0.3), rtol=1e-13)
    h = 1e-6
    fd = (one_s(0.3 + h) - one_s(0.3 - h)) / (2 * h)
    np.testing.assert_allclose(fg.grad(lambda p: one.pdf(p)[0])(0.3), fd[0], rtol=1e-6)
    draws = one.resample(fg.random.key(0), (4000,))
    assert draws.shape == (1, 4000)
    sd = np.sqrt(one_s.covariance[0, 0] + np.var(data[0]))
    assert abs(draws.mean() - data[0].mean()) < 5 * sd / np.sqrt(4000)
    with pytest.raises(NotImplementedError, match="set_bandwidth"):
        one.set_bandwidth("scott")
    with pytest.raises(ValueError, match="dimension"):
        fst.gaussian_kde(data).evaluate(np.zeros((3, 2)))


def test_mode_rankdata_sem():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, (5, 9)).astype(float)
    a[2, 3] = np.nan
    for axis in [0, 1, -1, None]:
        got, want = fst.mode(a, axis=axis), sst.mode(a, axis=axis)
        np.testing.assert_array_equal(got.mode, want.mode)
        np.testing.assert_array_equal(got.count, want.count)
        got, want = fst.mode(a, axis=axis, keepdims=True), sst.mode(a, axis=axis, keepdims=True)
        assert got.mode.shape == want.mode.shape
        np.testing.assert_allclose(fst.sem(a, axis=axis, ddof=2), sst.sem(a, axis=axis, ddof=2), rtol=1e-13)
        for method in ["average", "min", "max", "dense", "ordinal"]:
            np.testing.assert_array_equal(fst.rankdata(a, method, axis=axis), sst.rankdata(a, method, axis=axis))
    np.testing.assert_array_equal(fg.jit(lambda x: fst.rankdata(x, axis=1))(a[:, :4]), sst.rankdata(a[:, :4], axis=1))
    np.testing.assert_array_equal(fg.jit(lambda x: fst.mode(x, axis=1).mode)(a), sst.mode(a, axis=1).mode)
    check_grads(lambda x: fst.sem(x), (rng.normal(size=(6, 2)),), order=2)
    with pytest.raises(NotImplementedError, match="omit"):
        fst.rankdata(a, nan_policy="omit")
    with pytest.raises(ValueError, match="method"):
        fst.rankdata(a, "bad")


def test_float32_stays_float32():
    x = np.random.default_rng(3).normal(size=20).astype(np.float32)
    assert fst.sem(x).dtype == np.float32 and fst.gaussian_kde(x).pdf(x[:2]).dtype == np.float32
    assert fst.truncnorm.logpdf(x, np.float32(-1), np.float32(1)).dtype == np.float32
    assert fst.gumbel_l.cdf(x).dtype == np.float32 and fst.vonmises.pdf(x, np.float32(2)).dtype == np.float32
