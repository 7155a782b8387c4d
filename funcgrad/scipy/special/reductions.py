"""logsumexp, softmax and log_softmax over axes, computed stably."""
from __future__ import annotations

import math

from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util
from funcgrad.scipy.special._util import const as _const
from funcgrad.scipy.special._util import float_args as _float_args
from funcgrad.scipy.special._util import out as _out

__all__ = ["logsumexp", "softmax", "log_softmax"]


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
    Array(0.69314718)
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
