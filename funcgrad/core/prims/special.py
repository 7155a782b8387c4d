"""Special-function primitives: erf, erfc, erf_inv, lgamma, digamma, polygamma.

Each is a unary float primitive (``unop`` family, or by hand for ``polygamma``'s static
order ``n``) with its jvp rule right below it. The derivative chain closes on itself:
d lgamma = digamma, d digamma = polygamma(1, .), d polygamma(n, .) = polygamma(n + 1, .),
so every derivative is differentiable again, to any order.

``impl`` rules use NumPy and the ``math`` module only (SciPy is not a runtime
dependency). They compute in float64 and round to the input dtype (float32 in,
float32 out), accurate to a few ulp in float64:

- erf/erfc: ``math.erf``/``math.erfc`` per element;
- lgamma: ``math.lgamma`` per element, but power series about its roots 1 and 2
  (where libm loses relative accuracy);
- erf_inv: Newton's method on ``math.erf`` (or on ``log(erfc)`` in the tails, so
  inputs near +-1 keep full relative precision);
- digamma/polygamma: the recurrence shifts the argument to >= 10, then the
  asymptotic (Euler-Maclaurin) series; near digamma's positive root a Taylor series
  about the root keeps relative accuracy; negative arguments use the reflection
  formula, with ``cot(pi x)`` evaluated on ``x - round(x)`` (exact) so large
  arguments lose nothing.

Values at singular points follow SciPy: lgamma is ``inf`` at poles; digamma is
``-inf`` at ``+0``, ``+inf`` at ``-0``, NaN at negative integers and ``-inf``;
polygamma(n, .) is ``(-1)**(n+1) * inf`` at poles. (One deviation: ``lgamma(-inf)``
is ``inf``, like ``math.lgamma``; SciPy gives ``-inf``.)
"""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core.ad_util import defjvp
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import defbatch_elementwise
from funcgrad.core.primitive import Primitive
from funcgrad.core.prims._checks import check_kind
from funcgrad.core.prims.elementwise import FLOAT, unop
from funcgrad.core.trace import get_aval_any


def _in_float64(fn):
    """An impl computing ``fn`` on a float64 copy and rounding back to the input dtype."""

    def impl(x, **params):
        x = np.asarray(x)
        with np.errstate(all="ignore"):
            out = np.asarray(fn(x.astype(np.float64), **params), np.float64)
        return out.astype(x.dtype, copy=False)

    return impl


def _per_element(scalar_fn):
    """A vectorised float64 function from a Python scalar one (e.g. ``math.erf``)."""
    ufunc = np.frompyfunc(scalar_fn, 1, 1)
    return lambda x: np.asarray(ufunc(x), dtype=np.float64)


# --- erf, erfc, erf_inv -------------------------------------------------------------------
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
_erf64 = _per_element(math.erf)
_erfc64 = _per_element(math.erfc)


def _gauss_slope(x):
    """2/sqrt(pi) * exp(-x**2): the derivative of erf (in primitives)."""
    return lax.mul(_const(x, _TWO_OVER_SQRT_PI), lax.exp(lax.neg(lax.mul(x, x))))


erf_p = unop("erf", _in_float64(_erf64))
defjvp(erf_p, lambda g, ans, x: lax.mul(g, _gauss_slope(x)))
erfc_p = unop("erfc", _in_float64(_erfc64))  # a primitive: 1 - erf(x) loses all digits for large x
defjvp(erfc_p, lambda g, ans, x: lax.neg(lax.mul(g, _gauss_slope(x))))


def _erf_inv64(x):
    a = np.abs(x)
    central = a <= 0.5
    # Starting points: erf's Taylor series in the centre; erfc(y) ~ exp(-y^2)/(y sqrt(pi))
    # in the tails, where we solve for q = 1 - a (exact for a >= 0.5) instead of a.
    q = np.where(central, 0.5, 1.0 - a)
    t = np.sqrt(-np.log(q))
    y_tail = np.sqrt(np.maximum(t * t - np.log(t * math.sqrt(math.pi)), 0.01))
    y = np.where(central, _SQRT_PI_OVER_2 * a * (1.0 + math.pi / 12.0 * a * a), y_tail)
    y = np.where(np.isfinite(y), y, 0.0)
    for _ in range(6):  # Newton: quadratic convergence from a start good to ~1e-2
        e = np.exp(-y * y) * _TWO_OVER_SQRT_PI
        step_central = (_erf64(y) - a) / e
        erfc_y = _erfc64(y)
        step_tail = -np.log(erfc_y / q) * erfc_y / e  # Newton on log(erfc(y)) - log(q)
        y = y - np.where(central, step_central, step_tail)
    y = np.where(a == 1.0, np.inf, np.where(a > 1.0, np.nan, y))
    return np.copysign(y, x)


erf_inv_p = unop("erf_inv", _in_float64(_erf_inv64))
# d erf_inv(x) = sqrt(pi)/2 * exp(erf_inv(x)^2): written with ``ans`` so it differentiates again.
defjvp(erf_inv_p, lambda g, ans, x: lax.mul(g, lax.mul(_const(x, _SQRT_PI_OVER_2), lax.exp(lax.mul(ans, ans)))))


# --- digamma and polygamma: shared float64 machinery ------------------------------------------
# Bernoulli numbers B_2, B_4, ..., B_20 (exact fractions written as floats).
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330]
_SHIFT_TO = 10.0  # recurrence target: the asymptotic series is used for arguments >= this


def _shift_sum(x, power, target):
    """(sum_{k<m} (x+k)^-power, x+m) with m the smallest count making x+m >= target."""
    acc = np.zeros_like(x)
    y = x.copy()
    for _ in range(int(math.ceil(target)) + 1):
        low = y < target
        if not low.any():
            break
        yl = np.where(low, y, 1.0)
        acc = acc + np.where(low, yl**-power if power != 1 else 1.0 / yl, 0.0)
        y = np.where(low, y + 1.0, y)
    return acc, y


def _digamma_asymptotic(y):
    """psi(y) for y >= 10: log y - 1/(2y) - sum_k B_2k / (2k y^2k)."""
    w = 1.0 / (y * y)
    series = np.zeros_like(y)
    for k in range(8, 0, -1):  # Horner in w; the first omitted term is < 1e-17 at y = 10
        series = (series + _BERNOULLI[k - 1] / (2 * k)) * w
    return np.log(y) - 0.5 / y - series


def _hurwitz_zeta(s: int, q):
    """zeta(s, q) = sum_{k>=0} (q+k)^-s for an integer s >= 2 and q >= 0."""
    target = _SHIFT_TO + s  # the Euler-Maclaurin terms shrink fast once q >> s
    head, y = _shift_sum(q, s, target)
    tail = y ** (1.0 - s) / (s - 1) + 0.5 * y**-s
    rising = float(s)  # s (s+1) ... (s+2k-2)
    term_power = y ** (-s - 1.0)
    for k in range(1, len(_BERNOULLI) + 1):
        tail = tail + _BERNOULLI[k - 1] / math.factorial(2 * k) * rising * term_power
        rising *= (s + 2 * k - 1) * (s + 2 * k)
        term_power = term_power / (y * y)
    return head + tail


def _cot_derivative_poly(n: int) -> list:
    """Coefficients (lowest first) of P_n with d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)):
    P_0 = c and P_{k+1} = -(1 + c^2) P_k'(c)."""
    p = [0, 1]
    for _ in range(n):
        dp = [i * p[i] for i in range(1, len(p))] or [0]
        nxt = [0] * (len(dp) + 2)
        for i, v in enumerate(dp):
            nxt[i] -= v
            nxt[i + 2] -= v
        p = nxt
    return p


def _reflect(x, n: int, value_at_1_minus_x):
    """psi^(n)(x) for x < 0 from psi^(n)(1-x): psi^(n)(x) = (-1)^n psi^(n)(1-x) - pi^(n+1) P_n(cot(pi x))."""
    r = x - np.round(x)  # exact; cot(pi x) has period 1
    c = 1.0 / np.tan(math.pi * r)
    poly = np.zeros_like(x)
    for coef in reversed(_cot_derivative_poly(n)):
        poly = poly * c + float(coef)
    return (-1.0) ** n * value_at_1_minus_x - math.pi ** (n + 1) * poly, r == 0


def _power_series(coefs, z):
    """sum_j coefs[j-1] z^j (Horner)."""
    out = np.zeros_like(z)
    for c in reversed(coefs):
        out = (out + c) * z
    return out


# Digamma's positive root x0 as hi + lo, and Taylor coefficients about it:
# psi(x0 + d) = sum_j c_j d^j with c_j = (-1)^(j+1) zeta(j+1, x0).
_ROOT_HI, _ROOT_LO = 1.4616321449683622, 9.549995429965697e-17
_ROOT_RADIUS = 0.25
_ROOT_COEFS = [(-1.0) ** (j + 1) * float(_hurwitz_zeta(j + 1, np.array([_ROOT_HI]))[0]) for j in range(1, 26)]


def _digamma_nonneg(x):
    head, y = _shift_sum(x, 1, _SHIFT_TO)
    out = _digamma_asymptotic(y) - head
    d = (x - _ROOT_HI) - _ROOT_LO
    near_root = np.abs(d) < _ROOT_RADIUS
    if near_root.any():
        out = np.where(near_root, _power_series(_ROOT_COEFS, d), out)
    return out


def _digamma64(x):
    neg = x < 0
    out = _digamma_nonneg(np.where(neg, 1.0 - x, x))
    if neg.any():
        reflected, pole = _reflect(x, 0, out)
        out = np.where(neg, np.where(pole, np.nan, reflected), out)
    return out


def _polygamma64(x, *, n: int):
    sign_fact = (-1.0) ** (n + 1) * math.factorial(n)
    neg = x < 0
    pos_arg = np.where(neg, 1.0 - x, np.abs(x))  # np.abs: -0.0 is the pole at +0
    out = sign_fact * _hurwitz_zeta(n + 1, pos_arg)
    if neg.any():
        reflected, pole = _reflect(x, n, out)
        pole_value = math.copysign(math.inf, sign_fact)
        out = np.where(neg, np.where(pole, pole_value, reflected), out)
    return np.where(x == -np.inf, np.nan, out)


# --- lgamma ---------------------------------------------------------------------------------
_EULER_GAMMA = 0.5772156649015329
_LGAMMA1_RADIUS, _LGAMMA2_RADIUS = 0.4, 0.6  # series about 1 and about 2
_ZETA_M1 = {k: float(_hurwitz_zeta(k, np.array([2.0]))[0]) for k in range(2, 51)}  # zeta(k) - 1
_LGAMMA1_COEFS = [-_EULER_GAMMA] + [(-1.0) ** k * (1.0 + _ZETA_M1[k]) / k for k in range(2, 51)]
_LGAMMA2_COEFS = [1.0 - _EULER_GAMMA] + [(-1.0) ** k * _ZETA_M1[k] / k for k in range(2, 51)]


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):  # poles (0, -1, -2, ...) and huge arguments
        return math.inf


_lgamma_libm = _per_element(_lgamma_scalar)


def _lgamma64(x):
    # libm's lgamma loses relative accuracy next to its roots 1 and 2; there we use
    # lgamma(1+z) = -gamma z + sum_k (-1)^k zeta(k)/k z^k and
    # lgamma(2+z) = (1-gamma) z + sum_k (-1)^k (zeta(k)-1)/k z^k.
    out = _lgamma_libm(x)
    z1, z2 = x - 1.0, x - 2.0
    near1, near2 = np.abs(z1) < _LGAMMA1_RADIUS, np.abs(z2) < _LGAMMA2_RADIUS
    if near1.any() or near2.any():
        out = np.where(near1, _power_series(_LGAMMA1_COEFS, z1), out)
        out = np.where(near2, _power_series(_LGAMMA2_COEFS, z2), out)
    return out


lgamma_p = unop("lgamma", _in_float64(_lgamma64))  # log|Gamma(x)|
defjvp(lgamma_p, lambda g, ans, x: lax.mul(g, digamma(x)))


# --- digamma --------------------------------------------------------------------------------
digamma_p = unop("digamma", _in_float64(_digamma64))
defjvp(digamma_p, lambda g, ans, x: lax.mul(g, polygamma(1, x)))


# --- polygamma(n, x): the n-th derivative of digamma, for a static integer n >= 1 -------------
MAX_POLYGAMMA_ORDER = 163  # beyond, n! and the reflection formula's coefficients overflow a float64
polygamma_p = Primitive("polygamma", elementwise=True)
polygamma_p.def_impl(_in_float64(_polygamma64))
polygamma_p.kinds = FLOAT


@polygamma_p.def_abstract_eval
def _polygamma_abstract_eval(x: ShapedArray, *, n: int) -> ShapedArray:
    check_kind("polygamma", x, FLOAT)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise TypeError(f"polygamma: the order n must be a Python int >= 1 (use digamma for n = 0), got {n!r}")
    if n > MAX_POLYGAMMA_ORDER:  # (every path would raise OverflowError computing its coefficients)
        raise ValueError(f"polygamma: the order n must be <= {MAX_POLYGAMMA_ORDER}, got {n}")
    return x.strip_weak_type()  # (see ShapedArray.weak_type)


defjvp(polygamma_p, lambda g, ans, x, *, n: lax.mul(g, polygamma(n + 1, x)))
defbatch_elementwise(polygamma_p)


# --- primitive-level wrappers (one primitive each; no promotion) ------------------------------
def erf(x):
    """The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to ``x`` (``jax.lax.erf``)."""
    return erf_p.bind(x)


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate where it is small."""
    return erfc_p.bind(x)


def erf_inv(x):
    """The inverse of ``erf`` on (-1, 1); +-inf at +-1, NaN outside."""
    return erf_inv_p.bind(x)


def lgamma(x):
    """The log of the absolute value of the gamma function (``jax.lax.lgamma``)."""
    return lgamma_p.bind(x)


def digamma(x):
    """The digamma function, the derivative of ``lgamma`` (``jax.lax.digamma``)."""
    return digamma_p.bind(x)


def polygamma(n: int, x):
    """The n-th derivative of digamma (``n`` a static int >= 1)."""
    return polygamma_p.bind(x, n=int(n))


def _const(x, value):
    aval = get_aval_any(x)
    return lax.broadcast_in_dim(np.asarray(value, aval.dtype), aval.shape, ())


__all__ = ["erf_p", "erfc_p", "erf_inv_p", "lgamma_p", "digamma_p", "polygamma_p",
           "erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma"]

from funcgrad.core import lax_api as lax  # noqa: E402  (bottom, like elementwise: rules use it at call time)
