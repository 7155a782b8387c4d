"""The ``fft`` primitive: JAX's ``lax.fft(x, fft_type, fft_lengths)``.

A discrete Fourier transform over the trailing ``len(fft_lengths)`` (1 to 3) axes, with
``lax``'s fixed normalisation (NumPy's ``norm="backward"``): FFT and RFFT unscaled, IFFT
and IRFFT scaled by 1/N, N = prod(fft_lengths). The primitive is strict (JAX's too):

=======  ==============================  ==============================================
type     operand                         result
=======  ==============================  ==============================================
fft      complex, (..., *L)              same shape and dtype
ifft     complex, (..., *L)              same shape and dtype
rfft     float32/64, (..., *L)           complex64/128, (..., *L[:-1], L[-1]//2 + 1)
irfft    complex, (..., *L[:-1], L//2+1) float32/64, (..., *L): the imaginary parts of the
                                         zero and Nyquist bins of the last axis are
                                         ignored, as NumPy does
=======  ==============================  ==============================================

``funcgrad.lax.fft`` converts other dtypes as ``jax.lax.fft`` does; ``funcgrad.numpy.fft``
adds NumPy's n/s, axes and norm. The impl is ``numpy.fft`` (eager values are NumPy's).

Linear, so the JVP applies the op to the tangent; the transposes are the linear ones for
the pairing <a, b> = Re(sum(a * b)) (docs/guide/complex.md), no conjugation: the DFT
matrix is symmetric, so FFT and IFFT are their own transposes. RFFT (= slice of FFT of a
real input) transposes to ``N * irfft(conj(ct) / c)`` and IRFFT to ``conj(c / N *
rfft(ct))``, c = 1 at the zero (and, for even length, the Nyquist) bin of the last axis
and 2 elsewhere: the bins RFFT keeps once stand for two of the full FFT. JAX's rules
(``jax/_src/lax/fft.py``) are the same maps; tests compare ``vjp`` with the dense DFT
matrix. The lowering (``lowering/fft_lower.py``) calls the native plans of
``lowering/fft.py``.
"""
from __future__ import annotations

import enum

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core import dtypes
from funcgrad.core.ad_util import Zero
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import moveaxis
from funcgrad.core.primitive import Primitive, batch_rules
from funcgrad.core.trace import get_aval_any


class FftType(enum.IntEnum):
    """``jax.lax.FftType``: which transform ``lax.fft`` computes."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


TYPES = ("fft", "ifft", "rfft", "irfft")


def canonical_type(fft_type, fname: str = "fft") -> str:
    """The param spelling of ``fft_type``: an ``FftType`` (or JAX's enum, by name), or one
    of the strings "fft"/"ifft"/"rfft"/"irfft" (any case)."""
    name = getattr(fft_type, "name", fft_type)
    if isinstance(name, str) and name.lower() in TYPES:
        return name.lower()
    raise ValueError(f"{fname}: fft_type must be an FftType or one of {TYPES}, got {fft_type!r}")


# --- the primitive ----------------------------------------------------------------------------
fft_p = Primitive("fft")


@fft_p.def_impl
def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == "fft":
        out = np.fft.fftn(x, axes=axes)
    elif fft_type == "ifft":
        out = np.fft.ifftn(x, axes=axes)
    elif fft_type == "rfft":
        out = np.fft.rfftn(x, axes=axes)
    else:
        out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
    return np.asarray(out, _out_dtype(fft_type, x.dtype))


def _out_dtype(fft_type: str, dtype) -> np.dtype:
    return dtypes.real_dtype(dtype) if fft_type == "irfft" else dtypes.complex_dtype(dtype)


@fft_p.def_abstract_eval
def _fft_abstract_eval(x: ShapedArray, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if fft_type not in TYPES:
        raise ValueError(f"fft: fft_type must be one of {TYPES}, got {fft_type!r}")
    if not 1 <= k <= 3 or any(not isinstance(n, int) or n < 1 for n in fft_lengths):
        raise ValueError(f"fft: fft_lengths must be 1 to 3 positive integers, got {fft_lengths!r}")
    if x.ndim < k:
        raise ValueError(f"fft: operand {x.str_short()} has fewer than len(fft_lengths) = {k} axes")
    want_kind = "f" if fft_type == "rfft" else "c"
    if x.dtype.kind != want_kind:
        what = "real floating-point" if want_kind == "f" else "complex"
        raise TypeError(f"fft: the operand of a {fft_type} must be {what}, got {x.str_short()}")
    lengths = tuple(fft_lengths)
    if fft_type == "irfft":
        lengths = lengths[:-1] + (lengths[-1] // 2 + 1,)
    if x.shape[-k:] != lengths:
        raise ValueError(f"fft: a {fft_type} of fft_lengths {tuple(fft_lengths)} needs trailing axes "
                         f"{lengths}, got operand {x.str_short()}")
    shape = x.shape
    if fft_type == "rfft":
        shape = shape[:-1] + (fft_lengths[-1] // 2 + 1,)
    elif fft_type == "irfft":
        shape = shape[:-1] + (fft_lengths[-1],)
    return ShapedArray(shape, _out_dtype(fft_type, x.dtype), False)


def _last_axis_weights(fft_lengths, dtype, ct, scale: float, doubled: float):
    """A complex constant of ``ct``'s shape: ``scale * doubled`` on the bins of the last
    axis that stand for two of the full FFT, ``scale`` on the zero and Nyquist bins."""
    n = fft_lengths[-1]
    w = np.full(n // 2 + 1, scale * doubled)
    w[0] = scale
    if n % 2 == 0:
        w[-1] = scale
    aval = get_aval_any(ct)
    return lax.broadcast_in_dim(np.asarray(w, dtype), aval.shape, (aval.ndim - 1,))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if type(ct) is Zero:
        return [None]
    params = dict(fft_lengths=fft_lengths)
    if fft_type in ("fft", "ifft"):  # the DFT matrix is symmetric
        return [fft_p.bind(ct, fft_type=fft_type, **params)]
    cdtype = get_aval_any(ct).dtype if fft_type == "rfft" else dtypes.complex_dtype(get_aval_any(ct).dtype)
    total = float(np.prod(fft_lengths))
    if fft_type == "rfft":
        w = _last_axis_weights(fft_lengths, cdtype, ct, total, 0.5)
        return [fft_p.bind(lax.mul(lax.conj(ct), w), fft_type="irfft", **params)]
    y = fft_p.bind(ct, fft_type="rfft", **params)
    return [lax.conj(lax.mul(y, _last_axis_weights(fft_lengths, cdtype, y, 1.0 / total, 2.0)))]


def _fft_batch(args, bdims, *, fft_type, fft_lengths):
    (x,), (d,) = args, bdims
    return fft_p.bind(moveaxis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


ad.deflinear(fft_p, _fft_transpose)  # (the JVP, and the eager cotangent rule from the transpose)
batch_rules[fft_p] = _fft_batch


def fft(x, fft_type, fft_lengths):
    """``jax.lax.fft``: the DFT of ``x`` over its trailing ``len(fft_lengths)`` axes.
    ``fft_type``: ``FftType.FFT``/``IFFT``/``RFFT``/``IRFFT`` (or "fft", ...). Operands are
    converted as JAX does: to complex for fft/ifft/irfft (float32 -> complex64, other
    reals -> complex128), to a float for rfft (complex operands raise)."""
    kind = canonical_type(fft_type, "lax.fft")
    lengths = tuple(int(n) for n in np.atleast_1d(fft_lengths))
    aval = get_aval_any(x)
    if kind == "rfft":
        if aval.dtype.kind == "c":
            raise TypeError(f"lax.fft: an rfft needs a real operand, got {aval.str_short()}")
        target = aval.dtype if aval.dtype.kind == "f" else np.dtype(np.float64)
    else:
        target = dtypes.complex_dtype(aval.dtype) if aval.dtype.kind in "fc" else np.dtype(np.complex128)
    return fft_p.bind(lax.convert_element_type(x, target), fft_type=kind, fft_lengths=lengths)


__all__ = ["FftType", "fft", "fft_p"]

from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives)
