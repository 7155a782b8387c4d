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
"""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core.prims import special as _sp
from funcgrad.core.trace import Tracer
from funcgrad.numpy_api import _util

__all__ = [
    "erf", "erfc", "erfinv", "gammaln", "digamma", "psi", "polygamma", "expit", "logit",
    "xlogy", "xlog1py", "entr", "logsumexp", "softmax", "log_softmax",
]


# --- helpers ---------------------------------------------------------------------------------
def _out(x):
    """0-d results as NumPy scalars, like SciPy's ufuncs."""
    if type(x) is np.ndarray and not x.shape:
        return x[()]
    return x


def _const(like, value):
    aval = _util.aval_of(like)
    return _util.full(aval.shape, value, aval.dtype)


def _float_args(fname, *args):
    for a in args:
        _util.check_arraylike(fname, a)
    return _util.promote_args_inexact(fname, *args)


def _unary(fname, prim_fn, doc):
    def fn(x):
        (x,) = _float_args(fname, x)
        return _out(prim_fn(x))

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = doc
    return fn


# --- one primitive each ------------------------------------------------------------------
erf = _unary("erf", _sp.erf, "Error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.")
erfc = _unary("erfc", _sp.erfc, "Complementary error function ``1 - erf(x)``, accurate for large ``x``.")
erfinv = _unary("erfinv", _sp.erf_inv, "Inverse of ``erf`` on (-1, 1); +-inf at +-1, NaN outside.")
gammaln = _unary("gammaln", _sp.lgamma, "``log|Gamma(x)|``; ``inf`` at the poles 0, -1, -2, ...")
digamma = _unary("digamma", _sp.digamma, "``d/dx log Gamma(x)``; NaN at the poles -1, -2, ...")
psi = digamma


def polygamma(n, x):
    """``n``-th derivative of ``digamma`` (``polygamma(0, x) == digamma(x)``).

    ``n`` must be concrete (a Python int or an integer-valued array of known values);
    each distinct order becomes one primitive and the results are selected by ``n``.
    """
    if isinstance(n, Tracer):
        raise TypeError("polygamma: the order n must be concrete (not traced); derivatives are only taken in x")
    n_arr = np.asarray(n)
    if n_arr.dtype.kind not in "iuf" or np.any(n_arr != np.round(n_arr)) or np.any(n_arr < 0):
        raise ValueError(f"polygamma: n must hold non-negative integers, got {n!r}")
    (x,) = _float_args("polygamma", x)
    if n_arr.ndim == 0:
        return _out(_polygamma_scalar(int(n_arr), x))
    shape = _util.broadcast_shapes("polygamma", n_arr.shape, _util.shape_of(x))
    x = _util.broadcast_to(x, shape)
    n_b = np.broadcast_to(n_arr, shape)
    orders = sorted({int(v) for v in n_b.ravel()})
    out = _polygamma_scalar(orders[0], x)
    for order in orders[1:]:
        out = lax.select(np.asarray(n_b == order), _polygamma_scalar(order, x), out)
    return _out(out)


def _polygamma_scalar(n: int, x):
    return _sp.digamma(x) if n == 0 else _sp.polygamma(n, x)


# --- logistic functions --------------------------------------------------------------------
def expit(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, accurate in both tails."""
    (x,) = _float_args("expit", x)
    nonneg = lax.ge(x, _const(x, 0.0))
    e = lax.exp(lax.select(nonneg, lax.neg(x), x))  # exp(-|x|) <= 1: never overflows
    one = _const(x, 1.0)
    denom = lax.add(one, e)
    return _out(lax.select(nonneg, lax.div(one, denom), lax.div(e, denom)))


def logit(x):
    """``log(p / (1 - p))``, the inverse of ``expit``."""
    (p,) = _float_args("logit", x)
    one = _const(p, 1.0)
    # Near p = 1/2 the answer is small: 2 atanh(2p - 1) is exact there (2p - 1 is).
    # Elsewhere log(p) - log1p(-p) keeps the relative accuracy of tiny p.
    central = lax.bitwise_and(lax.ge(p, _const(p, 0.25)), lax.le(p, _const(p, 0.75)))
    p_c = lax.select(central, p, _const(p, 0.5))  # harmless operands for the branch not taken
    p_t = lax.select(central, _const(p, 0.1), p)
    by_atanh = lax.mul(_const(p, 2.0), lax.atanh(lax.sub(lax.add(p_c, p_c), one)))
    by_logs = lax.sub(lax.log(p_t), lax.log1p(lax.neg(p_t)))
    return _out(lax.select(central, by_atanh, by_logs))


# --- x log y ---------------------------------------------------------------------------------
def _x_times_log(fname, x, y, log_fn, lowest):
    """``x * log_fn(y)``, 0 where x == 0 unless y is NaN. Where the product would be
    0 * (+-inf or NaN), y is swapped for a harmless value (where log_fn(y) = 0) before
    the log, so the value is 0 and no NaN reaches any derivative."""
    x, y = _float_args(fname, x, y)
    finite_log = lax.bitwise_and(lax.gt(y, _const(y, lowest)), lax.is_finite(y))
    y_is_nan = lax.ne(y, y)
    swap = lax.bitwise_and(lax.eq(x, _const(x, 0.0)), lax.bitwise_not(lax.bitwise_or(finite_log, y_is_nan)))
    safe_y = lax.select(swap, _const(y, 1.0 if lowest == 0.0 else 0.0), y)
    return lax.mul(x, log_fn(safe_y))


def xlogy(x, y):
    """``x * log(y)``, with ``xlogy(0, y) == 0`` for every non-NaN ``y``.

    >>> xlogy(0.0, 0.0)
    np.float64(0.0)
    """
    return _out(_x_times_log("xlogy", x, y, lax.log, 0.0))


def xlog1py(x, y):
    """``x * log1p(y)``, with ``xlog1py(0, y) == 0`` for every non-NaN ``y``."""
    return _out(_x_times_log("xlog1py", x, y, lax.log1p, -1.0))


def entr(x):
    """Elementwise entropy ``-x log x`` for x > 0, 0 at 0, ``-inf`` for x < 0."""
    (x,) = _float_args("entr", x)
    negative = lax.lt(x, _const(x, 0.0))
    safe_x = lax.select(negative, _const(x, 1.0), x)
    value = _x_times_log("entr", safe_x, safe_x, lax.log, 0.0)  # x log x; 0 - it gives +0 at 0
    return _out(lax.select(negative, _const(x, -math.inf), lax.sub(_const(x, 0.0), value)))


# --- reductions over axes ----------------------------------------------------------------------
def _stopped_max(x, axes, shape):
    """max over ``axes`` (kept as size-1 dims, broadcast back), 0 where it is not finite,
    with no gradient: the shift cancels mathematically."""
    m = lax.reduce_max(x, axes)
    m = lax.select(lax.is_finite(m), m, _const(m, 0.0))
    m = lax.stop_gradient_p.bind(m)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return m, lax.broadcast_in_dim(m, shape, kept)


def _keep(y, shape, axes, keepdims):
    if not keepdims:
        return y
    return lax.reshape(y, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a)))`` over ``axis`` without overflow.

    With ``return_sign=True`` returns ``(log|s|, sign(s))`` for ``s = sum(b * exp(a))``
    (``b`` may then be negative). The gradient with respect to ``a`` is ``softmax``.

    >>> logsumexp(np.array([0.0, 0.0]))
    np.float64(0.6931471805599453)
    """
    if b is None:
        (a,) = _float_args("logsumexp", a)
    else:
        a, b = _float_args("logsumexp", a, b)
    shape = _util.shape_of(a)
    axes = _util.canonicalize_axes(axis, len(shape), "logsumexp")
    if b is None:
        m, m_full = _stopped_max(a, axes, shape)
        terms = lax.exp(lax.sub(a, m_full))
    else:
        # Like SciPy, entries with weight 0 do not count towards the maximum; their
        # exponent is capped at 0 so that 0 * exp(huge) cannot make a NaN.
        b_zero = lax.eq(b, _const(b, 0.0))
        m, m_full = _stopped_max(lax.select(b_zero, _const(a, -math.inf), a), axes, shape)
        shifted = lax.sub(a, m_full)
        shifted = lax.select(b_zero, lax.min(shifted, _const(shifted, 0.0)), shifted)
        terms = lax.mul(b, lax.exp(shifted))
    total = lax.reduce_sum(terms, axes)
    sign = None
    if return_sign:
        sign = lax.sign(total)
        total = lax.abs(total)
    out = _keep(lax.add(lax.log(total), m), shape, axes, keepdims)
    if return_sign:
        return _out(out), _out(_keep(sign, shape, axes, keepdims))
    return _out(out)


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default), computed stably."""
    (x,) = _float_args("softmax", x)
    shape = _util.shape_of(x)
    axes = _util.canonicalize_axes(axis, len(shape), "softmax")
    # SciPy subtracts the raw maximum (NaN for an all--inf slice); so do we.
    m = lax.stop_gradient_p.bind(lax.reduce_max(x, axes))
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    unnormalized = lax.exp(lax.sub(x, lax.broadcast_in_dim(m, shape, kept)))
    total = lax.broadcast_in_dim(lax.reduce_sum(unnormalized, axes), shape, kept)
    return _out(lax.div(unnormalized, total))


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (all axes by default), computed stably."""
    (x,) = _float_args("log_softmax", x)
    shape = _util.shape_of(x)
    axes = _util.canonicalize_axes(axis, len(shape), "log_softmax")
    _, m_full = _stopped_max(x, axes, shape)
    shifted = lax.sub(x, m_full)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    log_total = lax.log(lax.reduce_sum(lax.exp(shifted), axes))
    return _out(lax.sub(shifted, lax.broadcast_in_dim(log_total, shape, kept)))
