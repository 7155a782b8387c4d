"""``funcgrad.scipy.special``: SciPy's special functions, differentiable to any order.

Each function promotes its arguments like SciPy's ufuncs (ints and bools compute in
float64; float32 stays float32) and is a composite of primitives, so ``grad``,
``jvp``, ``vmap`` and ``make_jaxpr`` see through it.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(fg.grad(special.gammaln)(3.0)), 12)  # digamma(3) = 1.5 - euler_gamma
0.922784335098

Conventions and deviations from SciPy (by design):

- ``xlogy(x, y)`` / ``xlog1py(x, y)`` are 0 where ``x == 0`` (unless ``y`` is NaN, like
  SciPy). Derivatives follow JAX: ``d/dx = log(y)`` and ``d/dy = x / y``, so at
  ``x == 0`` the gradient in ``y`` is 0 and in ``x`` is ``log(y)``. Where ``log(y)``
  is not finite (``x == 0`` with ``y <= 0`` or ``y == inf``) the gradient is 0 in
  both arguments rather than JAX's ``-inf``/NaN.
- ``polygamma(n, x)`` needs a concrete integer ``n`` (differentiable in ``x`` only);
  ``polygamma`` and all other functions keep float32 for float32 ``x``, where SciPy's
  ``polygamma`` returns float64.
- ``logsumexp``/``softmax``/``log_softmax`` subtract the (gradient-stopped) maximum
  for stability; the gradient of ``logsumexp`` is ``softmax`` even where inputs are
  ``-inf``. ``logsumexp`` with ``b`` ignores entries where ``b == 0`` when choosing
  the maximum, like SciPy.
- ``gammaln(-inf)`` is ``inf`` (SciPy gives ``-inf``).

Modules, by family: ``error`` (erf, erfc, erfinv, erfcx, ndtr, log_ndtr, ndtri, owens_t),
``gamma_family`` (gammaln, digamma, polygamma, gamma, rgamma, beta, betaln, multigammaln,
factorial, comb, gammasgn, loggamma, poch), ``incomplete`` (gammainc, gammaincc, betainc),
``hurwitz`` (zeta, bernoulli), ``bessel`` (i0, i0e, i1, i1e, bessel_jn), ``expint`` (expi,
exp1, expn, sici, spence), ``faddeeva`` (wofz, dawsn, fresnel), ``hypergeometric``
(hyp1f1, hyp2f1), ``spherical`` (sph_harm_y), ``basic`` (expit, logit, xlogy, xlog1py,
entr, kl_div, rel_entr, sinc, boxcox, boxcox1p), ``reductions`` (logsumexp, softmax,
log_softmax). Each module's docstring gives its algorithms and accuracy.
"""
from funcgrad.scipy.special import (
    basic,
    bessel,
    error,
    expint,
    faddeeva,
    gamma_family,
    hurwitz,
    hypergeometric,
    incomplete,
    reductions,
    spherical,
)
from funcgrad.scipy.special.basic import *  # noqa: F401,F403
from funcgrad.scipy.special.bessel import *  # noqa: F401,F403
from funcgrad.scipy.special.error import *  # noqa: F401,F403
from funcgrad.scipy.special.expint import *  # noqa: F401,F403
from funcgrad.scipy.special.faddeeva import *  # noqa: F401,F403
from funcgrad.scipy.special.gamma_family import *  # noqa: F401,F403
from funcgrad.scipy.special.hurwitz import *  # noqa: F401,F403
from funcgrad.scipy.special.hypergeometric import *  # noqa: F401,F403
from funcgrad.scipy.special.incomplete import *  # noqa: F401,F403
from funcgrad.scipy.special.reductions import *  # noqa: F401,F403
from funcgrad.scipy.special.spherical import *  # noqa: F401,F403

__all__ = [
    name
    for mod in (error, gamma_family, incomplete, hurwitz, bessel, expint, faddeeva, hypergeometric, spherical, basic,
                reductions)
    for name in mod.__all__
]
