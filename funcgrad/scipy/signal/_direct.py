"""Direct convolution and correlation: ``convolve``, ``correlate`` (n-d) and
``convolve2d``, ``correlate2d`` (with SciPy's boundary modes), as
``jax.scipy.signal``'s.

The direct method is one ``lax.conv_general_dilated`` (the kernel flipped, padded to the
full size s1 + s2 - 1), so it traces, compiles and differentiates like any convolution;
complex inputs are four real convolutions. ``method='fft'`` hands the work to
``fftconvolve``; ``'auto'`` is direct (as JAX: SciPy picks by estimated cost, and both
agree to rounding). 'same' crops the full result to in1's size, centred; 'valid' keeps
where the inputs overlap completely and needs one input at least as large as the other
along every axis (SciPy swaps them when in2 is the larger).
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import asarray, check_arraylike, shape_of
from funcgrad.scipy.signal._fftconvolve import centered, fftconvolve

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]

_MODES = ("full", "same", "valid")


def _inputs(fname, in1, in2, mode, ndim=None):
    check_arraylike(fname, in1, in2)
    in1, in2 = asarray(in1, fname=fname), asarray(in2, fname=fname)
    if mode not in _MODES:
        raise ValueError(f"{fname}: mode must be one of {_MODES}, got {mode!r}")
    s1, s2 = shape_of(in1), shape_of(in2)
    if len(s1) != len(s2):
        raise ValueError(f"{fname}: in1 and in2 should have the same dimensionality, got shapes {s1} and {s2}")
    if ndim is not None and len(s1) != ndim:
        raise ValueError(f"{fname}: inputs must be {ndim}-d, got shapes {s1} and {s2}")
    if 0 in s1 or 0 in s2:
        raise ValueError(f"{fname}: zero-size arrays are not supported, got shapes {s1} and {s2}")
    if fnp.result_type(in1) == np.bool_ and fnp.result_type(in2) == np.bool_:
        in1, in2 = in1.astype(np.int64), in2.astype(np.int64)
    return _util.promote_dtypes(in1, in2)


def _valid_order(fname, in1, in2):
    """(in1, in2, swapped) with in1 the larger along every axis, or a ValueError."""
    s1, s2 = shape_of(in1), shape_of(in2)
    if all(a >= b for a, b in zip(s1, s2)):
        return in1, in2, False
    if all(a <= b for a, b in zip(s1, s2)):
        return in2, in1, True
    raise ValueError(f"{fname}: for 'valid' mode one input must be at least as large as the other in every "
                     f"dimension, got shapes {s1} and {s2}")


def _real_full(x, k, precision):
    """The full linear convolution of real ``x`` and ``k`` (same rank)."""
    nd = len(shape_of(x))
    pads = [(s - 1, s - 1) for s in shape_of(k)]
    out = lax.conv_general_dilated(x[None, None], fnp.flip(k)[None, None], (1,) * nd, pads, precision=precision)
    return out[0, 0]


def _full(x, k, precision):
    if fnp.result_type(x).kind != "c":
        return _real_full(x, k, precision)
    xr, xi, kr, ki = fnp.real(x), fnp.imag(x), fnp.real(k), fnp.imag(k)
    re = _real_full(xr, kr, precision) - _real_full(xi, ki, precision)
    im = _real_full(xr, ki, precision) + _real_full(xi, kr, precision)
    return lax.complex(re, im)


def _crop(full, s1, s2, mode):
    if mode == "full":
        return full
    if mode == "same":
        return centered(full, s1)
    return centered(full, tuple(a - b + 1 for a, b in zip(s1, s2)))


def _convolve(fname, in1, in2, mode, method, precision):
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"{fname}: method must be 'auto', 'direct' or 'fft', got {method!r}")
    if len(shape_of(in1)) == 0:
        return fnp.multiply(in1, in2)
    if mode == "valid":
        in1, in2, _ = _valid_order(fname, in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _crop(_full(in1, in2, precision), shape_of(in1), shape_of(in2), mode)


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The n-d linear convolution of ``in1`` and ``in2`` (``scipy.signal.convolve``);
    ``mode`` 'full', 'same' (in1's size, centred) or 'valid'; ``method`` 'auto'/'direct'
    (``lax.conv_general_dilated``) or 'fft' (``fftconvolve``). Integer inputs stay integer
    with the direct method, as SciPy.

    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5])
    """
    in1, in2 = _inputs("convolve", in1, in2, mode)
    return _convolve("convolve", in1, in2, mode, method, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The n-d cross-correlation ``z[k] = sum_l in1[l] conj(in2[l - k + N - 1])``
    (``scipy.signal.correlate``): a convolution with ``in2`` reversed and conjugated;
    ``mode`` and ``method`` as ``convolve``. In 'valid' mode with ``in2`` the larger, the
    result is SciPy's (the swapped correlation, reversed and conjugated).

    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    Array([0.5, 2. , 3.5, 3. , 0. ])
    """
    in1, in2 = _inputs("correlate", in1, in2, mode)
    if mode == "valid" and len(shape_of(in1)):
        big, small, swapped = _valid_order("correlate", in1, in2)
        if swapped:
            return fnp.conj(fnp.flip(_convolve("correlate", big, fnp.flip(fnp.conj(small)), mode, method, precision)))
    return _convolve("correlate", in1, fnp.flip(fnp.conj(in2)), mode, method, precision)


_PAD_MODES = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap",
              "symm": "symmetric", "symmetric": "symmetric"}


def _convolve2d(fname, in1, in2, mode, boundary, fillvalue, precision):
    if boundary not in _PAD_MODES:
        raise ValueError(f"{fname}: boundary must be 'fill', 'wrap' or 'symm', got {boundary!r}")
    if mode == "valid":
        in1, in2, _ = _valid_order(fname, in1, in2)
        return _crop(_full(in1, in2, precision), shape_of(in1), shape_of(in2), mode)
    pad_mode = _PAD_MODES[boundary]
    pads = [(s - 1, s - 1) for s in shape_of(in2)]
    if pad_mode == "constant":
        ext = fnp.pad(in1, pads, constant_values=fnp.asarray(fillvalue, fnp.result_type(in1)))
    else:
        ext = fnp.pad(in1, pads, mode=pad_mode)
    # The full result over the extended input is its 'valid' part.
    full = _crop(_full(ext, in2, precision), shape_of(ext), shape_of(in2), "valid")
    return _crop(full, shape_of(in1), shape_of(in2), mode)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d convolution of ``in1`` and ``in2`` (``scipy.signal.convolve2d``), ``mode`` as
    ``convolve``; outside ``in1`` the values are ``fillvalue`` (``boundary='fill'``), its
    periodic extension (``'wrap'``) or its mirror image with the edge repeated (``'symm'``).
    (JAX has 'fill' with ``fillvalue=0`` only.)

    >>> convolve2d(np.eye(2), np.ones((2, 2)))
    Array([[1., 1., 0.],
           [1., 2., 1.],
           [0., 1., 1.]])
    """
    in1, in2 = _inputs("convolve2d", in1, in2, mode, ndim=2)
    return _convolve2d("convolve2d", in1, in2, mode, boundary, fillvalue, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d cross-correlation (``scipy.signal.correlate2d``): ``convolve2d`` with ``in2``
    reversed and conjugated; ``mode``, ``boundary`` and ``fillvalue`` as there.

    >>> correlate2d(np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]), mode="valid")
    Array([[5.]])
    """
    in1, in2 = _inputs("correlate2d", in1, in2, mode, ndim=2)
    if mode == "valid":
        big, small, swapped = _valid_order("correlate2d", in1, in2)
        out = _convolve2d("correlate2d", big, fnp.flip(fnp.conj(small)), mode, boundary, fillvalue, precision)
        return fnp.flip(out) if swapped else out  # (SciPy: reversed, not conjugated)
    full = _convolve2d("correlate2d", in1, fnp.flip(fnp.conj(in2)), "full", boundary, fillvalue, precision)
    if mode == "full":
        return full
    # SciPy's 'same' correlation starts at in2's half size (rounded down), not at the centre.
    (m1, n1), (m2, n2) = shape_of(in1), shape_of(in2)
    return full[m2 // 2:m2 // 2 + m1, n2 // 2:n2 // 2 + n1]
