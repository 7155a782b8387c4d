"""``funcgrad.scipy.stats``: probability distributions as in ``jax.scipy.stats``, one
module per distribution, each with the methods JAX has (``norm.logpdf``, ``gamma.cdf``,
``poisson.logpmf``, ...). Arguments broadcast as in SciPy, ``loc``/``scale`` default to
0/1, values outside the support give ``-inf`` log-densities (0 densities), invalid
parameters (``scale <= 0``, ``p`` outside [0, 1], ...) give NaN, as SciPy. Every method
is a composite of ``funcgrad.numpy`` and ``funcgrad.scipy.special``, differentiable in
``x`` and the parameters, under ``jit`` and ``vmap``. Beside the distributions: the
kernel density estimator ``gaussian_kde`` and the sample statistics ``mode``,
``rankdata`` and ``sem``.

>>> from funcgrad.scipy.stats import norm
>>> round(float(norm.logcdf(-40.0)), 6)
-804.608442
"""
from funcgrad.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from funcgrad.scipy.stats._kde import gaussian_kde
from funcgrad.scipy.stats._summary import ModeResult, mode, rankdata, sem

__all__ = [
    "ModeResult", "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
    "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "mode", "multinomial",
    "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "rankdata", "sem", "t", "truncnorm", "uniform",
    "vonmises", "wrapcauchy",
]
