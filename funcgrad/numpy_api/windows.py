"""funcgrad.numpy: window functions (bartlett, blackman, hamming, hanning, kaiser) and
``i0``, NumPy's formulas and float64 values.

``M`` is a static length; ``kaiser``'s ``beta`` may be traced (and differentiated).
``i0`` is ``funcgrad.scipy.special.i0`` (a loop-free series composite, so
``d/dx i0 = i1`` comes from differentiating it), with NumPy's dtypes.
"""
from __future__ import annotations

import math

from funcgrad.core import dtypes
from funcgrad.numpy_api._util import asarray, aval_of, check_arraylike
from funcgrad.numpy_api.creation import arange, ones, zeros
from funcgrad.numpy_api.elementwise import cos, sqrt, where
from funcgrad.numpy_api.shape import cast, static_int

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "i0"]


def _length(fname, M):
    return static_int(M, fname, "M")


def _cosine_window(fname, M, terms):
    """``sum_k c_k cos(k pi n / (M-1))`` over ``n = 1-M, 3-M, ..., M-1``, as NumPy."""
    M = _length(fname, M)
    if M < 1:
        return zeros((0,), dtypes.float64)
    if M == 1:
        return ones((1,), dtypes.float64)
    n = arange(1 - M, M, 2)
    # NumPy's operation order, term by term (2.0 * pi * n, not (2 pi) * n), for equal rounding
    out = terms[0] + terms[1] * cos(math.pi * n / (M - 1))
    if len(terms) > 2:
        out = out + terms[2] * cos(2.0 * math.pi * n / (M - 1))
    return out


def bartlett(M):
    """The triangular Bartlett window of length ``M``.

    >>> fnp.bartlett(5)
    Array([0. , 0.5, 1. , 0.5, 0. ])
    """
    M = _length("bartlett", M)
    if M < 1:
        return zeros((0,), dtypes.float64)
    if M == 1:
        return ones((1,), dtypes.float64)
    n = arange(1 - M, M, 2)
    return where(n <= 0, 1 + n / (M - 1), 1 - n / (M - 1))


def blackman(M):
    """The Blackman window, ``0.42 + 0.5 cos(pi n/(M-1)) + 0.08 cos(2 pi n/(M-1))``.

    >>> fnp.blackman(3)
    Array([-1.38777878e-17,  1.00000000e+00, -1.38777878e-17])
    """
    return _cosine_window("blackman", M, (0.42, 0.5, 0.08))


def hamming(M):
    """The Hamming window, ``0.54 + 0.46 cos(pi n/(M-1))``.

    >>> fnp.hamming(3)
    Array([0.08, 1.  , 0.08])
    """
    return _cosine_window("hamming", M, (0.54, 0.46))


def hanning(M):
    """The Hann window, ``0.5 + 0.5 cos(pi n/(M-1))``.

    >>> fnp.hanning(3)
    Array([0., 1., 0.])
    """
    return _cosine_window("hanning", M, (0.5, 0.5))


def kaiser(M, beta):
    """The Kaiser window, ``i0(beta sqrt(1 - ((n - alpha)/alpha)^2)) / i0(beta)``,
    ``alpha = (M-1)/2``; ``beta`` may be traced.

    >>> fnp.kaiser(3, 5.0)
    Array([0.03671089, 1.        , 0.03671089])
    """
    M = _length("kaiser", M)
    check_arraylike("kaiser", beta)
    b = cast(asarray(beta, fname="kaiser"), dtypes.float64)
    if aval_of(b).ndim != 0:
        raise ValueError(f"kaiser: beta must be a scalar, got shape {aval_of(b).shape}")
    if M < 1:
        return zeros((0,), dtypes.float64)
    if M == 1:
        return ones((1,), dtypes.float64)
    n = arange(0, M)
    alpha = (M - 1) / 2.0
    return i0(b * sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / i0(b)


def i0(x):
    """Modified Bessel function of the first kind, order 0 (``numpy.i0``); float inputs
    keep their dtype, ints and bools give float64. Differentiable: ``d/dx i0 = i1``.

    >>> fnp.i0(np.array([0., 1.]))
    Array([1.        , 1.26606588])
    """
    from funcgrad.scipy.special import bessel  # scipy builds on funcgrad.numpy: import at call time

    check_arraylike("i0", x)
    xv = asarray(x, fname="i0")
    dt = aval_of(xv).dtype
    if dt.kind == "c":  # (the cast below would drop the imaginary part)
        raise TypeError(f"i0: not supported for complex values (got {dt.name} of shape {aval_of(xv).shape}), as NumPy")
    out_dt = dt if dt.kind == "f" else dtypes.float64
    return cast(asarray(bessel.i0(cast(xv, out_dt))), out_dt)
