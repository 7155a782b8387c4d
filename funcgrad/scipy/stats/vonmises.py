"""Von Mises distribution on the circle: ``vonmises.logpdf(x, kappa)``, pdf (as
``jax.scipy.stats.vonmises``): ``exp(kappa cos x) / (2 pi I0(kappa))``, written with the
scaled ``i0e`` as ``kappa (cos x - 1) - log(2 pi i0e(kappa))`` so a large ``kappa`` does not
overflow. Periodic in ``x`` (no support bounds, as SciPy); ``kappa <= 0`` gives NaN, as JAX."""
import math

from funcgrad.numpy import cos, exp, log
from funcgrad.scipy.special import i0e
from funcgrad.scipy.stats._common import invalid_to_nan, method

__all__ = ["logpdf", "pdf"]
_m = method("vonmises")


@_m
def logpdf(x, kappa):
    return invalid_to_nan(kappa * (cos(x) - 1.0) - log(2.0 * math.pi * i0e(kappa)), kappa > 0)


@_m
def pdf(x, kappa):
    return exp(logpdf(x, kappa))
