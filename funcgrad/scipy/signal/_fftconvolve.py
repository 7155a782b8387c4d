"""``fftconvolve``: SciPy's FFT convolution (``jax.scipy.signal.fftconvolve``).

The convolution is the product of the inputs' transforms at the full linear size
s1 + s2 - 1 along ``axes`` (any length: the native plans need no padding to a fast
length, so the values match SciPy's to rounding), through ``rfftn``/``irfftn`` when both
inputs are real (real output, as SciPy) and ``fftn``/``ifftn`` otherwise; then SciPy's
``mode`` crop. Differentiable and traceable like any ``funcgrad.numpy`` code.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api._util import asarray, canonicalize_axis, check_arraylike, shape_of

__all__ = ["fftconvolve"]

_MODES = ("full", "same", "valid")


def _conv_axes(in1, in2, axes):
    """SciPy's ``_init_freq_conv_axes`` checks: the transformed axes (sorted, unique), and
    the other axes must be equal or 1 in one of the inputs (they broadcast)."""
    s1, s2 = shape_of(in1), shape_of(in2)
    nd = len(s1)
    if axes is None:
        axes = tuple(range(nd))
    else:
        axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
        axes = tuple(canonicalize_axis(a, nd, "fftconvolve") for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"fftconvolve: all axes must be unique, got axes {axes}")
    axes = tuple(sorted(axes))
    for a in range(nd):
        if a not in axes and s1[a] != s2[a] and 1 not in (s1[a], s2[a]):
            raise ValueError(f"fftconvolve: incompatible shapes for in1 {s1} and in2 {s2} along axis {a} "
                             f"(not transformed: the sizes must be equal or 1)")
    # Axes where one input has length 1 need no transform (a product broadcasts), as SciPy.
    return tuple(a for a in axes if s1[a] != 1 and s2[a] != 1)


def centered(x, new_shape):
    """The centre ``new_shape`` part of ``x`` (SciPy's "same"/"valid" modes cut it out)."""
    shape = shape_of(x)
    index = tuple(slice((m - n) // 2, (m - n) // 2 + n) for m, n in zip(shape, new_shape))
    return x[index]


def fftconvolve(in1, in2, mode="full", axes=None):
    """The linear convolution of two n-d arrays via FFTs (``scipy.signal.fftconvolve``).

    ``mode``: "full" (size s1 + s2 - 1 along ``axes``), "same" (in1's size, centred),
    "valid" (where the inputs overlap completely: ``abs(s1 - s2) + 1``; needs one input at least
    as large as the other along every axis). ``axes``: default all; other axes broadcast.

    >>> fnp.round(fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])), 12)
    Array([-0. ,  1. ,  2.5,  4. ,  1.5])
    """
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = asarray(in1, fname="fftconvolve"), asarray(in2, fname="fftconvolve")
    if mode not in _MODES:
        raise ValueError(f"fftconvolve: acceptable mode flags are {_MODES}, got mode={mode!r}")
    s1, s2 = shape_of(in1), shape_of(in2)
    if len(s1) != len(s2):
        raise ValueError(f"fftconvolve: in1 and in2 should have the same dimensionality, got shapes {s1} and {s2}")
    if len(s1) == 0:
        return fnp.multiply(in1, in2)
    if 0 in s1 or 0 in s2:
        return fnp.zeros((0,) * len(s1), fnp.result_type(in1, in2, 1.0))
    axes = _conv_axes(in1, in2, axes)
    if mode == "valid" and axes:
        bigger1 = all(s1[a] >= s2[a] for a in axes)
        if not bigger1 and not all(s2[a] >= s1[a] for a in axes):
            raise ValueError(f"fftconvolve: for 'valid' mode, one input must be at least as large as the "
                             f"other in every axis, got shapes {s1} and {s2} (axes {axes})")
        if not bigger1:  # SciPy swaps the inputs (convolution commutes)
            in1, in2, s1, s2 = in2, in1, s2, s1
    if not axes:
        ret = fnp.multiply(in1, in2)
    else:
        full = [s1[a] + s2[a] - 1 for a in axes]
        real = fnp.result_type(in1).kind != "c" and fnp.result_type(in2).kind != "c"
        if real:
            sp = fnp.multiply(fnp.fft.rfftn(in1, full, axes), fnp.fft.rfftn(in2, full, axes))
            ret = fnp.fft.irfftn(sp, full, axes)
        else:
            sp = fnp.multiply(fnp.fft.fftn(in1, full, axes), fnp.fft.fftn(in2, full, axes))
            ret = fnp.fft.ifftn(sp, full, axes)
    if mode == "full":
        return ret
    if mode == "same":
        return centered(ret, s1)  # (over every axis, as SciPy: a broadcast axis keeps in1's size)
    valid = [s1[a] - s2[a] + 1 if a in axes else shape_of(ret)[a] for a in range(len(s1))]
    return centered(ret, valid)
