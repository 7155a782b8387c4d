"""Regularised incomplete gamma and beta functions: gammainc, gammaincc, betainc.

Algorithms (Numerical Recipes 6.2 and 6.4, as Cephes), as ``while_loop``s that stop when
every lane has converged (the next term below 1e-17 of the sum, or a continued fraction's
factor within an ulp of 1) or after 300 steps; a lane that
has converged keeps adding exact zeros (or multiplying by 1) while the others finish, so
``vmap`` and native ``jit`` lowering see one plain loop:

- ``gammainc(a, x)`` = P(a, x): the series ``x^a e^-x / Gamma(a+1) sum x^n / (a+1)_n``
  for ``x < a + 1``; otherwise ``1 - Q`` with Q from Legendre's continued fraction
  (modified Lentz). ``gammaincc`` is the complement, computed from the same two pieces
  (Q directly where it is small, so its upper tail keeps its relative accuracy).
  300 steps: converged for ``a`` up to ~1e3. The common factor
  ``exp(a log x - x - lgamma(a))`` costs about ``a eps log a`` of relative accuracy
  (within 1e-12 of SciPy for a <= ~200; SciPy switches to Temme's expansion for large a).
- ``betainc(a, b, x)``: ``x^a (1-x)^b / (a B(a, b))`` times the continued fraction in
  ``x`` where ``x < (a+1)/(a+b+2)``, the symmetry ``1 - I_{1-x}(b, a)`` elsewhere.

Derivatives: in ``x`` the exact densities (custom JVPs): ``x^(a-1) e^-x / Gamma(a)`` and
``x^(a-1) (1-x)^(b-1) / B(a, b)``; in ``a`` (and ``b``) forward-mode through the series
and continued fraction (the derivative of the partial sums, which converge with them),
as JAX differentiates ``igamma`` in ``a``. JAX does not differentiate ``betainc`` in
``a``, ``b``; here those derivatives exist too.

Edge values follow SciPy: NaN for ``a < 0``, ``x < 0`` (and for betainc ``x > 1``,
``b < 0``); ``gammainc(0, x > 0) = 1``; ``gammainc(a, 0) = 0``; ``gammainc(a, inf) = 1``.
"""
from __future__ import annotations

import math

import funcgrad.numpy as fnp
from funcgrad.core.prims import special as _sp
from funcgrad.scipy.special._util import in_float64, safe
from funcgrad.transforms.ad_api import jvp
from funcgrad.transforms.control_flow import while_loop
from funcgrad.transforms.custom import custom_jvp

__all__ = ["gammainc", "gammaincc", "betainc"]

_STEPS = 300
_TINY = 1e-300  # Lentz's guard against a zero denominator
_EPS = 1e-17  # series terms: relative size
_CF_EPS = 2.3e-16  # continued fractions: the last factor within an ulp of 1


def _iterate(step, init, converged):
    """Run ``step(n, carry)`` for n = 1, 2, ... until ``converged(carry)`` holds in every
    lane (or ``_STEPS`` steps)."""

    def cond(state):
        n, carry = state
        return (n < _STEPS) & ~fnp.all(converged(carry))

    def body(state):
        n, carry = state
        return n + 1.0, step(n, carry)

    return while_loop(cond, body, (fnp.asarray(1.0), init))[1]


def _lentz_guard(v):
    return fnp.where(fnp.abs(v) < _TINY, _TINY, v)


# --- incomplete gamma ------------------------------------------------------------------------
def _igam_pq(a, x):
    """(P, Q) for a > 0, x > 0 (finite): the series or the continued fraction."""
    use_series = x < a + 1.0
    xs = safe(~use_series, x, 0.5 * a)  # series lanes; stand-ins keep the other lanes finite
    xc = safe(use_series, x, a + 2.0)  # continued-fraction lanes
    b0 = xc + 1.0 - a

    def step(n, carry):
        ap, term, total, b, c, d, h = carry
        ap = ap + 1.0
        term = term * xs / ap
        total = total + term
        an = -n * (n - a)
        b = b + 2.0
        d = 1.0 / _lentz_guard(an * d + b)
        c = _lentz_guard(b + an / c)
        return ap, term, total, b, c, d, h * d * c

    one_over_a = 1.0 / a
    init = (a, one_over_a, one_over_a, b0, fnp.full_like(a, 1.0 / _TINY), 1.0 / b0, 1.0 / b0)
    def converged(carry):
        _, term, total, _, c, d, _ = carry
        return (fnp.abs(term) <= _EPS * fnp.abs(total)) & (fnp.abs(c * d - 1.0) <= _CF_EPS)

    _, _, total, _, _, _, h = _iterate(step, init, converged)
    log_prefactor_s = a * fnp.log(xs) - xs - _sp.lgamma(a)
    log_prefactor_c = a * fnp.log(xc) - xc - _sp.lgamma(a)
    p_series = total * fnp.exp(log_prefactor_s)
    q_cf = h * fnp.exp(log_prefactor_c)
    return fnp.where(use_series, p_series, 1.0 - q_cf), fnp.where(use_series, 1.0 - p_series, q_cf)


def _igam(a, x, upper: bool):
    """P (or Q) with SciPy's edge values; the interior via ``_igam_pq``."""
    interior = (a > 0) & (x > 0) & (x < math.inf) & (a < math.inf)
    p, q = _igam_pq(safe(~interior, a, 1.0), safe(~interior, x, 1.0))
    v = q if upper else p
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    v = fnp.where(x == 0, lo, v)
    v = fnp.where((x == math.inf) | ((a == 0) & (x > 0)), hi, v)
    v = fnp.where((a == math.inf) & (x < math.inf), lo, v)
    bad = (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | ((a == math.inf) & (x == math.inf)) | (a != a) | (x != x)
    return fnp.where(bad, math.nan, v)


def _igam_density(a, x):
    """d P(a, x) / dx = x^(a-1) e^-x / Gamma(a)."""
    return fnp.exp(_xlogy(a - 1.0, x) - x - _sp.lgamma(a))


def _xlogy(k, y):
    """k log y, 0 where k == 0 (so x^0 at x = 0 is 1)."""
    return fnp.where(k == 0, 0.0, k * fnp.log(safe(k == 0, y, 1.0)))


def _with_x_density(raw, density, sign):
    """A custom JVP: the exact density in x (the last argument), forward mode through
    ``raw`` in the other arguments."""
    fn = custom_jvp(raw)

    @fn.defjvp
    def fn_jvp(primals, tangents):
        *params, x = primals
        *t_params, t_x = tangents
        ans, t_out = jvp(lambda *ps: raw(*ps, x), tuple(params), tuple(t_params))
        return ans, t_out + sign * t_x * density(*params, x)

    return fn


_gammainc = _with_x_density(lambda a, x: _igam(a, x, upper=False), _igam_density, 1.0)
_gammaincc = _with_x_density(lambda a, x: _igam(a, x, upper=True), _igam_density, -1.0)


def gammainc(a, x):
    """Regularised lower incomplete gamma ``P(a, x) = gamma(a, x) / Gamma(a)``.

    >>> round(float(gammainc(1.0, 2.0)), 12)  # 1 - exp(-2)
    0.864664716763
    """
    return in_float64("gammainc", _gammainc, a, x)


def gammaincc(a, x):
    """Regularised upper incomplete gamma ``Q(a, x) = 1 - P(a, x)``, accurate where small."""
    return in_float64("gammaincc", _gammaincc, a, x)


# --- incomplete beta -------------------------------------------------------------------------
def _betacf(a, b, x):
    """The continued fraction of I_x(a, b) (NR ``betacf``), modified Lentz."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    d0 = 1.0 / _lentz_guard(1.0 - qab * x / qap)

    def step(m, carry):
        c, d, h, _ = carry
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 / _lentz_guard(1.0 + aa * d)
        c = _lentz_guard(1.0 + aa / c)
        h = h * d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 / _lentz_guard(1.0 + aa * d)
        c = _lentz_guard(1.0 + aa / c)
        delta = d * c
        return c, d, h * delta, delta

    def converged(carry):
        return fnp.abs(carry[3] - 1.0) <= _CF_EPS

    _, _, h, _ = _iterate(step, (fnp.ones_like(a), d0, d0, fnp.zeros_like(a)), converged)
    return h


def _betainc_raw(a, b, x):
    interior = (a > 0) & (b > 0) & (x > 0) & (x < 1) & (a < math.inf) & (b < math.inf)
    a_s, b_s, x_s = safe(~interior, a, 1.0), safe(~interior, b, 1.0), safe(~interior, x, 0.5)
    swap = x_s >= (a_s + 1.0) / (a_s + b_s + 2.0)
    a1, b1 = fnp.where(swap, b_s, a_s), fnp.where(swap, a_s, b_s)
    x1 = fnp.where(swap, 1.0 - x_s, x_s)
    from funcgrad.scipy.special.gamma_family import betaln

    front = fnp.exp(a_s * fnp.log(x_s) + b_s * fnp.log1p(-x_s) - betaln(a_s, b_s))
    part = front * _betacf(a1, b1, x1) / a1
    v = fnp.where(swap, 1.0 - part, part)
    # SciPy's edges: the end points, and the limits a -> 0 (all mass at 0) or b -> 0.
    v = fnp.where(x == 0, 0.0, fnp.where(x == 1, 1.0, v))
    v = fnp.where((a == 0) & (b > 0) & (x >= 0), 1.0, v)
    v = fnp.where((b == 0) & (a > 0) & (x < 1), 0.0, v)
    bad = (a < 0) | (b < 0) | ((a == 0) & (b == 0)) | (x < 0) | (x > 1) | (a != a) | (b != b) | (x != x)
    return fnp.where(bad, math.nan, v)


def _betainc_density(a, b, x):
    from funcgrad.scipy.special.gamma_family import betaln

    return fnp.exp(_xlogy(a - 1.0, x) + _xlogy(b - 1.0, 1.0 - x) - betaln(a, b))


_betainc = _with_x_density(_betainc_raw, _betainc_density, 1.0)


def betainc(a, b, x):
    """Regularised incomplete beta ``I_x(a, b)``.

    >>> round(float(betainc(2.0, 3.0, 0.4)), 12)
    0.5248
    """
    return in_float64("betainc", _betainc, a, b, x)
