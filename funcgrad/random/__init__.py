"""``funcgrad.random``: JAX's functional, splittable, counter-based PRNG (no global state).

    >>> from funcgrad import random
    >>> k = random.key(0)                      # or random.PRNGKey(0): raw uint32[2]
    >>> k1, k2 = random.split(k)
    >>> x = random.normal(k1, (3,))            # same bits eagerly, under jit, per vmap lane

The algorithm (JAX's ``threefry2x32`` with its partitionable counter layout, so raw keys
and bits agree with ``jax.random`` under ``jax_enable_x64``):

- a key is two uint32 words; ``PRNGKey(seed)`` is (high 32 bits, low 32 bits) of the
  64-bit seed;
- everything is Threefry-2x32 (20 rounds, ``threefry.py``) of the key applied to
  counters: element ``i`` (flat, row-major) of a requested shape is hashed at counter
  ``(i >> 32, i & 0xFFFFFFFF)``, giving two words ``(y0, y1)``;
- ``split(key, n)``: key ``i`` is ``(y0, y1)`` at counter ``i``;
- ``fold_in(key, d)``: the hash at the single counter ``(0, d)``;
- ``bits(key, shape)``: uint32 ``y0 ^ y1``; uint64 ``(y0 << 32) | y1``;
- floats: the top mantissa bits or'ed into 1.0's bit pattern give [1, 2), minus 1;
  ``normal`` = ``sqrt(2) erf_inv(u)`` for ``u`` uniform on (-1, 1), with XLA's
  polynomial ``erf_inv``; the other samplers transform these with JAX's formulas, key
  splits and loops (see each module's docstring), so every sampler gives JAX's values
  (to the rounding of transcendental functions, an ulp or a few).

Because values depend only on (key, counter), a function of a key gives the same bits
eagerly, under ``jit`` and in each lane of ``vmap`` over split keys; with no global state
it is safe under every transform. Reparameterised samplers are differentiable
(``uniform``/``normal`` transforms in their parameters; ``gamma``, ``loggamma``, ``beta``,
``dirichlet``, ``t``, ``chisquare`` and ``f`` by implicit reparameterisation, ``gamma.py``).
"""
from funcgrad.random.continuous import (
    cauchy,
    exponential,
    gumbel,
    laplace,
    logistic,
    pareto,
    rayleigh,
    triangular,
    uniform,
    weibull_min,
)
from funcgrad.random.counts import binomial, multinomial, poisson
from funcgrad.random.discrete import bernoulli, categorical, choice, geometric, permutation, rademacher, randint
from funcgrad.random.gamma import ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t
from funcgrad.random.keys import (
    KeyArray,
    PRNGKey,
    bits,
    clone,
    fold_in,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from funcgrad.random.normal import (
    double_sided_maxwell,
    lognormal,
    maxwell,
    multivariate_normal,
    normal,
    orthogonal,
    truncated_normal,
    wald,
)

__all__ = [
    "KeyArray", "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "key_dtype", "clone", "split",
    "fold_in", "bits",
    "uniform", "normal", "truncated_normal", "lognormal", "multivariate_normal", "orthogonal", "maxwell",
    "double_sided_maxwell", "wald", "exponential", "laplace", "logistic", "gumbel", "cauchy", "pareto",
    "weibull_min", "rayleigh", "triangular",
    "gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f", "generalized_normal", "ball",
    "randint", "bernoulli", "rademacher", "geometric", "categorical", "choice", "permutation",
    "poisson", "binomial", "multinomial",
]
