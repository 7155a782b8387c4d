"""funcgrad.numpy.fft: NumPy's (and ``jax.numpy.fft``'s) discrete Fourier transforms.

Each transform checks its arguments as NumPy does, converts the dtype (float32 ->
complex64; ints, bools, float64 -> complex128; ``irfft`` of complex64 -> float32), crops or
zero-pads every transformed axis to ``n``/``s``, moves the axes last and applies the
``fft`` primitive (``core/prims/fft.py``: ``lax.fft``, at most 3 axes a call: more axes
chain calls), then scales for ``norm``: "backward" (the default: inverse transforms divide
by N), "ortho" (both by sqrt(N)), "forward" (forward transforms divide by N). Eager
values are ``numpy.fft``'s; under ``jit`` the native plans run (``lowering/fft_lower.py``).

Differences from NumPy, as JAX: repeated axes raise ``ValueError`` (NumPy transforms the
axis twice); ``fftfreq``/``rfftfreq`` take ``dtype=``. ``s`` without ``axes`` means the
last ``len(s)`` axes (NumPy 2's deprecated reading, and JAX's); an entry -1 of ``s`` means
the axis's own length (NumPy 2).
"""
from __future__ import annotations

import operator

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.prims.fft import fft_p
from funcgrad.numpy_api._util import asarray, canonicalize_axis, check_arraylike, shape_of

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
    "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_NORMS = (None, "backward", "ortho", "forward")
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _check_norm(fname: str, norm):
    if norm not in _NORMS:
        raise ValueError(f'{fname}: invalid norm value {norm!r}; should be "backward", "ortho" or "forward"')
    return norm or "backward"


def _operand(fname: str, a, kind: str):
    """``a`` as an array of the dtype the transform reads (NumPy 2's conversions)."""
    check_arraylike(fname, a)
    x = asarray(a, fname=fname)
    dt = np.dtype(x.dtype)
    if kind == "rfft":
        if dt.kind == "c":
            raise TypeError(f"{fname}: the input must be real, got dtype {dt} (shape {shape_of(x)})")
        target = dt if dt.kind == "f" else np.dtype(np.float64)
    else:
        target = dtypes.complex_dtype(dt) if dt.kind in "fc" else np.dtype(np.complex128)
    return lax.convert_element_type(x, target)


def _axes_and_sizes(fname: str, x, s, axes, kind: str):
    """(axes, s) as tuples of ints: NumPy's defaults and checks."""
    ndim = len(shape_of(x))
    if s is not None:
        try:
            s = tuple(operator.index(v) for v in (s if isinstance(s, (list, tuple)) else np.ravel(s)))
        except TypeError:
            raise TypeError(f"{fname}: s must be a sequence of integers, got {s!r}") from None
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
    else:
        axes = tuple(axes) if isinstance(axes, (list, tuple)) else tuple(np.ravel(axes))
    axes = tuple(canonicalize_axis(a, ndim, fname) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: repeated axes are not supported, got axes {axes} for shape {shape_of(x)}")
    if not axes:
        raise ValueError(f"{fname}: no axes to transform (input of shape {shape_of(x)})")
    if s is None:
        shape = shape_of(x)
        s = tuple(shape[a] for a in axes)
        if kind == "irfft":
            s = s[:-1] + (2 * (s[-1] - 1),)
    if len(s) != len(axes):
        raise ValueError(f"{fname}: shape s={s} and axes={axes} have different lengths")
    s = tuple(shape_of(x)[a] if n == -1 else n for a, n in zip(axes, s))
    for n in s:
        if n < 1:
            raise ValueError(f"{fname}: invalid number of FFT data points ({n}) specified (input shape "
                             f"{shape_of(x)}, axes {axes})")
    return axes, s


def _fit(x, axis: int, n: int):
    """Crop or zero-pad ``x`` along ``axis`` to length ``n``."""
    shape = shape_of(x)
    m = shape[axis]
    if m > n:
        limit = list(shape)
        limit[axis] = n
        return lax.slice(x, (0,) * len(shape), limit)
    if m < n:
        cfg = [(0, 0, 0)] * len(shape)
        cfg[axis] = (0, n - m, 0)
        return lax.pad(x, np.zeros((), x.dtype), cfg)
    return x


def _apply(x, axes, kind: str, lengths):
    """The ``fft`` primitive over ``axes`` (at most 3, in order): moved last, then back."""
    nd = len(shape_of(x))
    rest = [d for d in range(nd) if d not in axes]
    perm = rest + list(axes)
    y = fft_p.bind(lax.transpose(x, perm), fft_type=kind, fft_lengths=tuple(lengths))
    return lax.transpose(y, tuple(int(i) for i in np.argsort(perm)))


def _scale(y, factor: float):
    if factor == 1.0:
        return y
    return lax.mul(y, lax.broadcast_in_dim(np.asarray(factor, y.dtype), shape_of(y), ()))


def _transform(fname: str, kind: str, a, s, axes, norm):
    """The n-d transform: kind "fft" / "ifft" / "rfft" / "irfft"."""
    norm = _check_norm(fname, norm)
    x = _operand(fname, a, kind)
    if len(shape_of(x)) == 0:
        raise ValueError(f"{fname}: the input must have at least one axis, got a 0-d array")
    axes, s = _axes_and_sizes(fname, x, s, axes, kind)
    for axis, n in zip(axes, s):
        x = _fit(x, axis, n // 2 + 1 if kind == "irfft" and axis == axes[-1] else n)
    # Groups of at most 3 axes (lax.fft's limit): the real-input group holds the last axis
    # and runs first (rfft) or last (irfft); complex groups commute.
    groups = [(axes[i:i + 3], s[i:i + 3]) for i in range(0, len(axes), 3)][::-1]
    if kind == "irfft":
        groups = groups[1:] + groups[:1]
    for g_axes, g_s in groups:
        real_group = axes[-1] in g_axes
        g_kind = kind if real_group or kind in ("fft", "ifft") else ("fft" if kind == "rfft" else "ifft")
        x = _apply(x, g_axes, g_kind, g_s)
    total = float(np.prod(s, dtype=np.float64))
    inverse = kind in ("ifft", "irfft")
    if norm == "ortho":
        x = _scale(x, np.sqrt(total) if inverse else 1.0 / np.sqrt(total))
    elif norm == "forward":
        x = _scale(x, total if inverse else 1.0 / total)
    return x


def _one_axis(fname, kind, a, n, axis, norm):
    # ``n=-1`` would read as fftn's "s[i] = -1: the input's length"; NumPy's 1-d n has no such
    # meaning and raises, as for any n < 1.
    if n is not None:
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError(f"{fname}: n must be an integer, got {n!r}") from None
        if n < 1:
            raise ValueError(f"{fname}: invalid number of FFT data points ({n}) specified (n; input shape "
                             f"{shape_of(asarray(a, fname=fname))}, axis {axis})")
    return _transform(fname, kind, a, None if n is None else (n,), (axis,), norm)


def fft(a, n=None, axis=-1, norm=None):
    """The 1-d DFT, ``numpy.fft.fft``: ``n`` crops or zero-pads the axis first.

    >>> fnp.fft.fft(np.array([1.0, 2.0, 3.0, 4.0]))
    Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    return _one_axis("fft", "fft", a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """The inverse of ``fft`` (``numpy.fft.ifft``)."""
    return _one_axis("ifft", "ifft", a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """The DFT of real input, the n//2 + 1 non-negative frequencies (``numpy.fft.rfft``)."""
    return _one_axis("rfft", "rfft", a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """The inverse of ``rfft``: ``n`` real outputs (default 2*(m - 1)); the imaginary
    parts of the zero (and, for even n, the Nyquist) term are ignored, as NumPy does."""
    return _one_axis("irfft", "irfft", a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The DFT of a Hermitian-symmetric signal given by its first half: real output,
    ``irfft(conj(a), n)`` with the norm's direction swapped (``numpy.fft.hfft``)."""
    norm = _check_norm("hfft", norm)
    x = lax.conj(_operand("hfft", a, "irfft"))
    return _one_axis("hfft", "irfft", x, n, axis, _SWAP[norm])


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of ``hfft`` for real input: ``conj(rfft(a, n))`` with the norm's
    direction swapped (``numpy.fft.ihfft``)."""
    norm = _check_norm("ihfft", norm)
    return lax.conj(_one_axis("ihfft", "rfft", a, n, axis, _SWAP[norm]))


def fftn(a, s=None, axes=None, norm=None):
    """The n-d DFT over ``axes`` (default: all, or the last ``len(s)``), ``numpy.fft.fftn``."""
    return _transform("fftn", "fft", a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """The inverse of ``fftn``."""
    return _transform("ifftn", "ifft", a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """The n-d DFT of real input: the last of ``axes`` keeps s[-1]//2 + 1 frequencies."""
    return _transform("rfftn", "rfft", a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of ``rfftn``; ``s[-1]`` (default 2*(m - 1)) is the real output length."""
    return _transform("irfftn", "irfft", a, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """``fftn`` over two axes (default the last two)."""
    return _transform("fft2", "fft", a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """``ifftn`` over two axes (default the last two)."""
    return _transform("ifft2", "ifft", a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """``rfftn`` over two axes (default the last two)."""
    return _transform("rfft2", "rfft", a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """``irfftn`` over two axes (default the last two)."""
    return _transform("irfft2", "irfft", a, s, axes, norm)


# --- frequencies and shifts ------------------------------------------------------------------
def _freq_length(fname: str, n) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{fname}: n must be a (static) integer, got {type(n).__name__}") from None
    if n < 1:
        raise ValueError(f"{fname}: n must be positive, got {n}")
    return n


def _freqs(fname: str, k: np.ndarray, n: int, d, dtype):
    from funcgrad.numpy_api.elementwise import multiply, true_divide

    val = true_divide(1.0, multiply(n, d))  # NumPy's order: k * (1 / (n * d))
    out = multiply(k, val)
    return out if dtype is None else lax.convert_element_type(out, dtypes.canonicalize(dtype, what=f"{fname} dtype"))


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of ``fft``: [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d*n).
    ``dtype`` (JAX's keyword): the result dtype (default float64); ``device`` is ignored."""
    n = _freq_length("fftfreq", n)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _freqs("fftfreq", k, n, d, dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of ``rfft``: [0, 1, ..., n//2] / (d*n)."""
    n = _freq_length("rfftfreq", n)
    return _freqs("rfftfreq", np.arange(0, n // 2 + 1), n, d, dtype)


def _shift(fname: str, x, axes, sign: int):
    from funcgrad.numpy_api.shape import roll

    check_arraylike(fname, x)
    x = asarray(x, fname=fname)
    shape = shape_of(x)
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(canonicalize_axis(a, len(shape), fname) for a in axes)
    if not axes:
        return x
    return roll(x, [sign * (shape[a] // 2) for a in axes], axes)


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (``numpy.fft.fftshift``; axes default all)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift``."""
    return _shift("ifftshift", x, axes, -1)
