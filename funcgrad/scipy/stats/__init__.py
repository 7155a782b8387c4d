"""``funcgrad.scipy.stats``: probability distributions as in ``jax.scipy.stats``, one
module per distribution, each with the methods JAX has (``norm.logpdf``, ``gamma.cdf``,
``poisson.logpmf``, ...). Arguments broadcast as in SciPy, ``loc``/``scale`` default to
0/1, values outside the support give ``-inf`` log-densities (0 densities), invalid
parameters (``scale <= 0``, ``p`` outside [0, 1], ...) give NaN, as SciPy. Every method
is a composite of ``funcgrad.numpy`` and ``funcgrad.scipy.special``, differentiable in
``x`` and the parameters, under ``jit`` and ``vmap``.

>>> from funcgrad.scipy.stats import norm
>>> round(float(norm.logcdf(-40.0)), 6)
-804.608442
"""
from funcgrad.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    geom,
    laplace,
    logistic,
    multivariate_normal,
    nbinom,
    norm,
    poisson,
    t,
    uniform,
)

__all__ = [
    "bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "geom", "laplace",
    "logistic", "multivariate_normal", "nbinom", "norm", "poisson", "t", "uniform",
]
