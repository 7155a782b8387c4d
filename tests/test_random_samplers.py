"""funcgrad.random samplers against their distributions at fixed seeds: Kolmogorov-Smirnov
(continuous) or chi-square (discrete) tests with scipy.stats, plus shapes, dtypes and
bad input. The seeds are fixed, so each test is deterministic; a p-value below 1e-3
would mean the sampler is off."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random

N = 4000
KEY = random.PRNGKey(2024)
P_MIN = 1e-3


def ks(sample, dist, *args):
    sample = np.asarray(sample, np.float64).ravel()
    assert np.all(np.isfinite(sample))
    p = stats.kstest(sample, dist, args=args).pvalue
    assert p > P_MIN, f"KS test against {dist}{args}: p = {p:.2g}"


def chi2(counts, probs):
    counts = np.asarray(counts, np.float64)
    expected = np.asarray(probs) * counts.sum()
    p = stats.chisquare(counts, expected).pvalue
    assert p > P_MIN, f"chi-square: p = {p:.2g}, counts {counts}, expected {expected}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_uniform_and_normal(dtype):
    u = random.uniform(KEY, (N,), dtype, minval=-2.0, maxval=3.0)
    assert u.dtype == dtype and u.shape == (N,) and float(u.min()) >= -2 and float(u.max()) < 3
    ks(u, "uniform", -2.0, 5.0)
    z = random.normal(KEY, (N // 40, 40), dtype)
    assert z.dtype == dtype and z.shape == (N // 40, 40)
    ks(z, "norm")
    assert random.normal(KEY, (7,)).shape == (7,)


def test_truncated_normal():
    x = random.truncated_normal(KEY, -0.5, 1.5, (N,))
    assert float(x.min()) > -0.5 and float(x.max()) < 1.5
    ks(x, "truncnorm", -0.5, 1.5)
    assert random.truncated_normal(KEY, np.zeros(3), 1.0).shape == (3,)


@pytest.mark.parametrize("name, dist, args", [
    ("exponential", "expon", ()), ("laplace", "laplace", ()), ("logistic", "logistic", ()),
    ("gumbel", "gumbel_r", ()), ("cauchy", "cauchy", ()),
])
def test_location_scale_samplers(name, dist, args):
    x = getattr(random, name)(KEY, (N,))
    assert x.dtype == np.float64
    ks(x, dist, *args)
    assert getattr(random, name)(KEY, (3,), np.float32).dtype == np.float32


@pytest.mark.parametrize("a", [0.3, 1.0, 4.5, 200.0])
def test_gamma(a):
    x = random.gamma(random.fold_in(KEY, int(a * 10)), a, (N // 2,))
    ks(x, "gamma", a)


def test_beta_dirichlet_and_t():
    ks(random.beta(KEY, 2.0, 0.7, (N // 2,)), "beta", 2.0, 0.7)
    alpha = np.array([1.0, 2.5, 0.5])
    d = random.dirichlet(KEY, alpha, (N // 2,))
    assert d.shape == (N // 2, 3)
    np.testing.assert_allclose(np.sum(d, -1), 1.0, rtol=1e-12)
    ks(d[:, 1], "beta", 2.5, 1.5)  # the marginals of a Dirichlet are beta
    ks(random.t(KEY, 3.0, (N // 2,)), "t", 3.0)


def test_multivariate_normal_methods():
    mean = np.array([1.0, -2.0])
    cov = np.array([[2.0, 0.6], [0.6, 0.5]])
    chol = np.linalg.cholesky(cov)
    for method in ("cholesky", "eigh", "svd"):
        x = random.multivariate_normal(KEY, mean, cov, (N // 2,), method=method)
        assert x.shape == (N // 2, 2)
        white = np.linalg.solve(chol, (np.asarray(x) - mean).T)  # N(0, I) if right
        ks(white[0], "norm")
        ks(white[1], "norm")
    assert random.multivariate_normal(KEY, np.zeros((4, 2)), np.eye(2)).shape == (4, 2)


def test_orthogonal():
    q = random.orthogonal(KEY, 4, (50,))
    assert q.shape == (50, 4, 4)
    np.testing.assert_allclose(np.einsum("bij,bkj->bik", q, q), np.broadcast_to(np.eye(4), (50, 4, 4)), atol=1e-12)
    # Haar: the (0, 0) entry of a 4x4 Haar orthogonal matrix has density prop. to (1 - x^2)^(1/2),
    # i.e. (x + 1) / 2 ~ Beta(3/2, 3/2)
    ks((np.asarray(random.orthogonal(KEY, 4, (N // 2,)))[:, 0, 0] + 1) / 2, "beta", 1.5, 1.5)
    assert random.orthogonal(KEY, 3, m=5).shape == (3, 5)


def test_randint_bernoulli_and_poisson_chi_square():
    r = random.randint(KEY, (N,), -3, 4)
    assert r.dtype == np.int64 and int(r.min()) >= -3 and int(r.max()) < 4
    chi2(np.bincount(np.asarray(r) + 3, minlength=7), np.full(7, 1 / 7))
    assert random.randint(KEY, (3,), 0, 5, np.int32).dtype == np.int32
    np.testing.assert_array_equal(random.randint(KEY, (3,), 5, 5), 5)  # empty range: minval
    big = random.randint(KEY, (N,), 0, 2**62)
    assert int(big.max()) > 2**60
    b = random.bernoulli(KEY, 0.3, (N,))
    assert b.dtype == np.bool_
    chi2([np.sum(~np.asarray(b)), np.sum(b)], [0.7, 0.3])
    for lam in (3.5, 60.0):
        x = np.asarray(random.poisson(random.fold_in(KEY, int(lam)), lam, (N,)))
        assert x.dtype == np.int64
        edges = np.arange(int(stats.poisson.ppf(0.01, lam)), int(stats.poisson.ppf(0.99, lam)) + 1)
        counts = [np.sum(x <= edges[0])] + [np.sum(x == e) for e in edges[1:]] + [np.sum(x > edges[-1])]
        probs = np.concatenate([[stats.poisson.cdf(edges[0], lam)], stats.poisson.pmf(edges[1:], lam),
                                [stats.poisson.sf(edges[-1], lam)]])
        chi2(counts, probs)
    np.testing.assert_array_equal(random.poisson(KEY, 0.0, (3,)), 0)


def test_categorical_and_choice_chi_square():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    c = random.categorical(KEY, np.log(p), shape=(N,))
    assert c.dtype == np.int64
    chi2(np.bincount(np.asarray(c), minlength=4), p)
    c2 = random.categorical(KEY, np.log(np.stack([p, p[::-1]])), axis=1, shape=(N // 2, 2))
    chi2(np.bincount(np.asarray(c2)[:, 1], minlength=4), p[::-1])
    x = random.choice(KEY, 4, (N,), p=p)
    chi2(np.bincount(np.asarray(x), minlength=4), p)
    u = random.choice(KEY, fnp.arange(10.0) * 2, (N,))
    assert u.dtype == np.float64
    chi2(np.bincount((np.asarray(u) / 2).astype(int), minlength=10), np.full(10, 0.1))
    rows = random.choice(KEY, np.arange(12).reshape(3, 4), (2,), replace=False, axis=1)
    assert rows.shape == (3, 2) and len(set(np.asarray(rows)[0])) == 2


def _first_of_three_without_replacement(draw):
    keys = random.split(KEY, 1200)
    return np.asarray(fg.vmap(draw)(keys))


def test_without_replacement_draws_are_distinct_and_weighted():
    p = np.array([0.5, 0.3, 0.2])
    firsts = _first_of_three_without_replacement(lambda k: random.choice(k, 3, (2,), replace=False, p=p))
    assert np.all(firsts[:, 0] != firsts[:, 1])
    chi2(np.bincount(firsts[:, 0], minlength=3), p)
    firsts = _first_of_three_without_replacement(
        lambda k: random.categorical(k, fnp.log(fnp.asarray(p)), shape=(3,), replace=False))
    assert all(sorted(r) == [0, 1, 2] for r in firsts)
    chi2(np.bincount(firsts[:, 0], minlength=3), p)


def test_permutation_is_uniform_over_permutations():
    perms = _first_of_three_without_replacement(lambda k: random.permutation(k, 3))
    index = {p: i for i, p in enumerate(itertools.permutations(range(3)))}
    chi2(np.bincount([index[tuple(r)] for r in perms], minlength=6), np.full(6, 1 / 6))
    x = np.arange(12.0).reshape(3, 4)
    y = random.permutation(KEY, x, axis=1)
    np.testing.assert_array_equal(np.sort(y, axis=1), x)
    assert len({tuple(np.argsort(r)) for r in np.asarray(y)}) == 1  # the same column order in each row
    z = random.permutation(random.PRNGKey(1), np.arange(40).reshape(4, 10), axis=1, independent=True)
    assert len({tuple(r - r.min()) for r in np.asarray(z)}) > 1
    assert sorted(np.asarray(random.permutation(KEY, 50))) == list(range(50))


def test_bad_sampler_arguments():
    with pytest.raises(ValueError, match="choice: cannot take a larger sample \\(5\\) than the population \\(3\\)"):
        random.choice(KEY, 3, (5,), replace=False)
    with pytest.raises(ValueError, match="choice: p must be None or a vector matching the 3 entries"):
        random.choice(KEY, 3, (2,), p=np.ones(4) / 4)
    with pytest.raises(ValueError, match="choice: probabilities p must be non-negative"):
        random.choice(KEY, 2, (2,), p=np.array([1.5, -0.5]))
    with pytest.raises(TypeError, match="choice: shape must be a tuple"):
        random.choice(KEY, 3, 2)
    with pytest.raises(ValueError, match="categorical: shape \\(3,\\) must end with a shape the batch shape \\(2,\\)"):
        random.categorical(KEY, np.zeros((2, 4)), shape=(3,))
    with pytest.raises(ValueError, match="categorical: cannot draw 5 distinct categories out of 4"):
        random.categorical(KEY, np.zeros(4), shape=(5,), replace=False)
    with pytest.raises(TypeError, match="permutation: x must be a concrete int"):
        random.permutation(KEY, 2.5)
    # float bounds are cast to int, as JAX does
    np.testing.assert_array_equal(random.randint(KEY, (4,), 0.5, 3.7), random.randint(KEY, (4,), 0, 3))
    with pytest.raises(ValueError, match="multivariate_normal: mean must have shape \\(..., n\\) and cov"):
        random.multivariate_normal(KEY, np.zeros(2), np.eye(3))
    with pytest.raises(ValueError, match="multivariate_normal: method must be"):
        random.multivariate_normal(KEY, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(ValueError, match="dirichlet: alpha must have at least one dimension"):
        random.dirichlet(KEY, 1.0)
    assert math.isclose(float(np.mean(random.gamma(KEY, 3.0, (N,)))), 3.0, rel_tol=0.05)


@pytest.mark.parametrize("name, args, dist, dist_args", [
    ("lognormal", (0.7,), "lognorm", (0.7,)),
    ("pareto", (2.5,), "pareto", (2.5,)),
    ("weibull_min", (1.5, 2.0), "weibull_min", (2.0, 0.0, 1.5)),
    ("rayleigh", (2.0,), "rayleigh", (0.0, 2.0)),
    ("triangular", (0.0, 0.3, 2.0), "triang", (0.15, 0.0, 2.0)),
    ("wald", (1.5,), "invgauss", (1.5,)),
    ("chisquare", (3.0,), "chi2", (3.0,)),
    ("f", (4.0, 9.0), "f", (4.0, 9.0)),
    ("generalized_normal", (1.5,), "gennorm", (1.5,)),
    ("maxwell", (), "maxwell", ()),
    ("double_sided_maxwell", (0.0, 1.0), "dweibull", None),  # checked below by |x| ~ maxwell
])
def test_more_continuous_samplers(name, args, dist, dist_args):
    x = np.asarray(getattr(random, name)(KEY, *args, shape=(N,)) if name != "double_sided_maxwell"
                   else random.double_sided_maxwell(KEY, *args, shape=(N,)))
    assert x.dtype == np.float64 and x.shape == (N,)
    if dist_args is None:
        ks(np.abs(x), "maxwell")
        chi2([np.sum(x < 0), np.sum(x > 0)], [0.5, 0.5])
    else:
        ks(x, dist, *dist_args)


def test_loggamma_ball_and_exact_counts():
    lg = np.asarray(random.loggamma(KEY, 0.01, (N,)))
    assert np.all(np.isfinite(lg)) and lg.min() < -300  # far below float64's smallest normal: no underflow
    ks(np.exp(np.asarray(random.loggamma(KEY, 2.5, (N,)))), "gamma", 2.5)
    b = np.asarray(random.ball(KEY, 3, 2, (N,)))
    r = np.linalg.norm(b, axis=-1)
    ks(r ** 3, "uniform")  # uniform in the 3-d ball: P(|x| < r) = r**3
    b1 = np.asarray(random.ball(KEY, 2, 1.0, (N,)))
    assert np.all(np.abs(b1).sum(-1) <= 1)


def _discrete_chi2(x, pmf, support):
    counts = [np.sum(x == k) for k in support] + [np.sum(~np.isin(x, support))]
    probs = list(pmf(np.asarray(support)))
    chi2(counts, probs + [1 - sum(probs)])


def test_binomial_geometric_rademacher_multinomial_chi_square():
    for n, p in ((12.0, 0.3), (400.0, 0.6)):  # the inversion and the BTRS branches
        x = np.asarray(random.binomial(random.fold_in(KEY, int(n)), n, p, (N,)))
        assert x.dtype == np.float64
        lo, hi = int(stats.binom.ppf(0.005, n, p)), int(stats.binom.ppf(0.995, n, p))
        _discrete_chi2(x, lambda k: stats.binom.pmf(k, n, p), list(range(lo, hi + 1)))
    assert np.isnan(np.asarray(random.binomial(KEY, -1.0, 0.5)))
    g = np.asarray(random.geometric(KEY, 0.3, (N,)))
    assert g.dtype == np.int64 and g.min() >= 1
    _discrete_chi2(g, lambda k: stats.geom.pmf(k, 0.3), list(range(1, 12)))
    r = np.asarray(random.rademacher(KEY, (N,)))
    assert set(np.unique(r)) == {-1, 1}
    chi2([np.sum(r < 0), np.sum(r > 0)], [0.5, 0.5])
    m = np.asarray(random.multinomial(KEY, 20.0, np.array([0.2, 0.3, 0.5]), shape=(N // 4, 3)))
    np.testing.assert_array_equal(m.sum(-1), 20.0)
    _discrete_chi2(m[:, 1], lambda k: stats.binom.pmf(k, 20, 0.3), list(range(1, 11)))
