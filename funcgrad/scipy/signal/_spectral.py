"""Spectral analysis: ``detrend``, ``stft``, ``istft``, ``csd``, ``welch``, following
SciPy's ``_spectral_helper`` step by step (as JAX's do): move the data axis last, extend
the ends (``boundary``), zero-pad to whole segments (``padded``), cut segments of
``nperseg`` every ``nperseg - noverlap`` samples (a gather with a static index table),
detrend and window each, FFT (``rfft`` for real data unless two-sided output is asked),
scale ('density': ``1 / (fs sum w^2)``, 'spectrum': ``1 / (sum w)^2``; square roots for
the STFT), and for the one-sided PSD double every bin but DC (and Nyquist when ``nfft``
is even). ``istft`` is the weighted overlap-add with the squared-window normalisation.

Windows: a name or ``(name, parameter)`` tuple of ``_windows`` ('hann', the default,
'hamming', 'blackman', 'nuttall', 'blackmanharris', 'flattop', 'bartlett', 'triang',
'cosine', 'bohman', 'boxcar'; ``('kaiser', beta)``, ``('tukey', alpha)``, ``('gaussian',
std)``, ``('general_hamming', alpha)``) in SciPy's periodic (DFT-even) form, or an array of
length ``nperseg``; other SciPy window names raise ``ValueError`` (JAX hands them to SciPy,
which funcgrad does not depend on). Everything is a composite, so ``grad``, ``vmap`` and
``jit`` apply.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import asarray, canonicalize_axis, check_arraylike, shape_of
from funcgrad.scipy.signal._windows import periodic_window

__all__ = ["detrend", "stft", "istft", "csd", "welch"]


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """Remove the mean (``type='constant'``) or the least-squares line (``'linear'``, one
    per piece between the breakpoints ``bp``) along ``axis`` (``scipy.signal.detrend``).

    >>> fnp.round(detrend(np.array([1.0, 3.0, 5.0, 8.0])), 12)
    Array([ 0.2, -0.1, -0.4,  0.3])
    """
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {type!r}")
    check_arraylike("detrend", data)
    data = asarray(data, fname="detrend")
    (data,) = _util.promote_dtypes_inexact(data)
    if not shape_of(data):
        raise ValueError("detrend: data must have at least one dimension")
    axis = canonicalize_axis(axis, len(shape_of(data)), "detrend")
    if type in ("constant", "c"):
        return data - fnp.mean(data, axis=axis, keepdims=True)
    x = fnp.moveaxis(data, axis, -1)
    n = shape_of(x)[-1]
    if n == 0:  # no points, nothing to fit: the empty data back, as type='constant' gives
        return data
    bps = np.unique(np.r_[0, np.atleast_1d(np.asarray(bp, dtype=np.int64)), n])
    if np.any(bps > n) or np.any(bps < 0):
        raise ValueError(f"detrend: breakpoints must be within [0, {n}], got {bp!r}")
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        seg = x[..., lo:hi]
        length = int(hi - lo)
        if length == 1:
            pieces.append(fnp.zeros_like(seg))  # (one point: the fitted line passes through it)
            continue
        t = (np.arange(length, dtype=np.float64) - (length - 1) / 2.0).astype(fnp.result_type(seg))
        centred = seg - fnp.mean(seg, axis=-1, keepdims=True)
        slope = fnp.sum(centred * t, axis=-1, keepdims=True) / float(np.sum(t * t))
        pieces.append(centred - slope * t)
    out = fnp.concatenate(pieces, axis=-1) if len(pieces) > 1 else pieces[0]
    return fnp.moveaxis(out, -1, axis)


def _window(fname, window, nperseg, dtype):
    if isinstance(window, (str, tuple)):
        return fnp.asarray(periodic_window(fname, window, nperseg).astype(dtype))
    check_arraylike(fname, window)
    w = asarray(window, fname=fname)
    if len(shape_of(w)) != 1:
        raise ValueError(f"{fname}: window must be 1-d, got shape {shape_of(w)}")
    if shape_of(w)[0] != nperseg:
        raise ValueError(f"{fname}: window must have length nperseg = {nperseg}, got {shape_of(w)[0]}")
    return w


def _segments_setup(fname, window, nperseg, noverlap, nfft, length):
    """(nperseg, noverlap, nfft) as SciPy's ``_triage_segments`` and checks decide them."""
    if not isinstance(window, (str, tuple)):
        n_win = len(np.shape(window))
        if n_win != 1:
            raise ValueError(f"{fname}: window must be 1-d, got shape {np.shape(window)}")
        n_win = np.shape(window)[0]
        if nperseg is not None and int(nperseg) != n_win:
            raise ValueError(f"{fname}: value specified for nperseg ({nperseg}) differs from the window length {n_win}")
        nperseg = n_win
    else:
        nperseg = 256 if nperseg is None else int(nperseg)
        nperseg = min(nperseg, length)
    if nperseg < 1:
        raise ValueError(f"{fname}: nperseg must be a positive integer, got {nperseg}")
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError(f"{fname}: nfft ({nfft}) must be greater than or equal to nperseg ({nperseg})")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"{fname}: noverlap ({noverlap}) must be less than nperseg ({nperseg})")
    return nperseg, noverlap, nfft


def _extend(fname, x, n, boundary):
    """SciPy's boundary extensions by ``n`` samples at both ends of the last axis."""
    if boundary is None or n == 0:
        return x
    if boundary == "zeros":
        return fnp.pad(x, [(0, 0)] * (len(shape_of(x)) - 1) + [(n, n)])
    if boundary == "constant":
        return fnp.concatenate([fnp.repeat(x[..., :1], n, -1), x, fnp.repeat(x[..., -1:], n, -1)], axis=-1)
    left, right = fnp.flip(x[..., 1:n + 1], -1), fnp.flip(x[..., -n - 1:-1], -1)
    if boundary == "even":
        return fnp.concatenate([left, x, right], axis=-1)
    if boundary == "odd":
        return fnp.concatenate([2 * x[..., :1] - left, x, 2 * x[..., -1:] - right], axis=-1)
    raise ValueError(f"{fname}: unknown boundary {boundary!r}; use 'even', 'odd', 'constant', 'zeros' or None")


def _segment_fft(x, win, detrend_type, nperseg, noverlap, nfft, onesided):
    """The windowed FFTs of the segments of ``x`` (..., n): (..., nseg, nfreq)."""
    step = nperseg - noverlap
    n = shape_of(x)[-1]
    starts = np.arange(0, n - nperseg + 1, step)
    segs = x[..., starts[:, None] + np.arange(nperseg)[None, :]]
    if detrend_type:
        segs = detrend(segs, axis=-1, type=detrend_type)
    segs = win * segs
    if onesided:
        return fnp.fft.rfft(fnp.real(segs), n=nfft, axis=-1)
    return fnp.fft.fft(segs, n=nfft, axis=-1)


def _spectral(fname, x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided, scaling, axis, mode,
              boundary=None, padded=False):
    same = y is None
    check_arraylike(fname, x)
    x = asarray(x, fname=fname)
    if same:
        (x,) = _util.promote_dtypes_inexact(x)
    else:
        check_arraylike(fname, y)
        x, y = _util.promote_dtypes_inexact(x, asarray(y, fname=fname))
    if not shape_of(x):
        raise ValueError(f"{fname}: x must have at least one dimension")
    axis = canonicalize_axis(axis, len(shape_of(x)), fname)
    x = fnp.moveaxis(x, axis, -1)
    if not same:
        y = fnp.moveaxis(y, canonicalize_axis(axis - len(shape_of(x)), len(shape_of(y)), fname), -1)
        nx, ny = shape_of(x)[-1], shape_of(y)[-1]
        if nx != ny:  # the shorter one zero-padded, as SciPy
            pad = lambda v, k: fnp.pad(v, [(0, 0)] * (len(shape_of(v)) - 1) + [(0, k)])  # noqa: E731
            x, y = (pad(x, ny - nx), y) if nx < ny else (x, pad(y, nx - ny))
        batch = _util.broadcast_shapes(fname, shape_of(x)[:-1], shape_of(y)[:-1])
        x = fnp.broadcast_to(x, batch + shape_of(x)[-1:])
        y = fnp.broadcast_to(y, batch + shape_of(y)[-1:])
    nperseg, noverlap, nfft = _segments_setup(fname, window, nperseg, noverlap, nfft, shape_of(x)[-1])
    complex_in = fnp.result_type(x).kind == "c" or (not same and fnp.result_type(y).kind == "c")
    real_dtype = np.dtype(np.float32) if fnp.result_type(x) in (np.float32, np.complex64) else np.dtype(np.float64)
    win = _window(fname, window, nperseg, real_dtype)
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"{fname}: scaling must be 'density' or 'spectrum', got {scaling!r}")
    scale = 1.0 / (fs * fnp.sum(win * win)) if scaling == "density" else 1.0 / fnp.sum(win) ** 2
    if mode == "stft":
        scale = fnp.sqrt(scale)
    onesided = bool(return_onesided) and not complex_in
    step = nperseg - noverlap
    if boundary is not None:
        x = _extend(fname, x, nperseg // 2, boundary)
        if not same:
            y = _extend(fname, y, nperseg // 2, boundary)
    if padded:
        nadd = (-(shape_of(x)[-1] - nperseg) % step) % nperseg
        x = fnp.pad(x, [(0, 0)] * (len(shape_of(x)) - 1) + [(0, nadd)])
        if not same:
            y = fnp.pad(y, [(0, 0)] * (len(shape_of(y)) - 1) + [(0, nadd)])
    freqs = fnp.fft.rfftfreq(nfft, 1.0 / fs) if onesided else fnp.fft.fftfreq(nfft, 1.0 / fs)
    res = _segment_fft(x, win, detrend_type, nperseg, noverlap, nfft, onesided)
    if not same:
        res = fnp.conj(res) * _segment_fft(y, win, detrend_type, nperseg, noverlap, nfft, onesided)
    elif mode == "psd":
        res = fnp.conj(res) * res
    res = res * scale
    if onesided and mode == "psd":
        double = np.ones(shape_of(res)[-1])
        double[1:] = 2.0
        if nfft % 2 == 0:
            double[-1] = 1.0
        res = res * double.astype(real_dtype)
    time = np.arange(nperseg / 2, shape_of(x)[-1] - nperseg / 2 + 1, step) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    if same and mode != "stft":
        res = fnp.real(res)
    return freqs, time, fnp.moveaxis(res, -1, axis)  # the frequencies where the data axis was, segments last


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False, return_onesided=True,
         boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform (``scipy.signal.stft``): ``(f, t, Zxx)``, ``Zxx``
    with the frequencies in place of ``axis`` and the segments last. ``detrend``: False,
    'constant' or 'linear' per segment; ``boundary``: 'zeros' (default), 'even', 'odd',
    'constant' or None; ``padded`` zero-pads to whole segments.

    >>> f, t, z = stft(np.ones(16), nperseg=8)
    >>> z.shape
    (5, 5)
    """
    return _spectral("stft", x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum", axis,
                     "stft", boundary, padded)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant", return_onesided=True,
        scaling="density", axis=-1, average="mean"):
    """The cross power spectral density of ``x`` and ``y`` by Welch's method
    (``scipy.signal.csd``): ``(f, Pxy)``, the segments' ``conj(X) Y`` averaged by
    ``average`` ('mean' or 'median', the latter bias-corrected as SciPy). ``y=None`` is
    ``x`` itself (the result is then real, as ``welch``).

    >>> f, p = csd(np.arange(8.0), np.arange(8.0), nperseg=4)
    >>> p.shape
    (3,)
    """
    return _csd("csd", x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average)


def _csd(fname, x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average):
    """csd's work; errors name ``fname`` (csd or welch)."""
    if average not in ("mean", "median"):
        raise ValueError(f"{fname}: average must be 'mean' or 'median', got {average!r}")
    freqs, _, pxy = _spectral(fname, x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                              axis, "psd")
    if len(shape_of(pxy)) >= 2 and shape_of(pxy)[-1] > 1:
        if average == "median":
            k = shape_of(pxy)[-1]
            ii = 2.0 * np.arange(1, (k - 1) // 2 + 1)
            bias = 1.0 + np.sum(1.0 / (ii + 1) - 1.0 / ii)
            if fnp.result_type(pxy).kind == "c":
                pxy = lax.complex(fnp.median(fnp.real(pxy), axis=-1), fnp.median(fnp.imag(pxy), axis=-1))
            else:
                pxy = fnp.median(pxy, axis=-1)
            pxy = pxy / bias
        else:
            pxy = fnp.mean(pxy, axis=-1)
    else:
        pxy = fnp.reshape(pxy, shape_of(pxy)[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant", return_onesided=True,
          scaling="density", axis=-1, average="mean"):
    """The power spectral density of ``x`` by Welch's method (``scipy.signal.welch``):
    ``(f, Pxx)``, the average of the windowed segments' periodograms; real.

    >>> f, p = welch(np.sin(np.arange(64.0)), nperseg=16)
    >>> int(fnp.argmax(p))
    3
    """
    freqs, pxx = _csd("welch", x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
                      average)
    return freqs, fnp.real(pxx)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True, boundary=True,
          time_axis=-1, freq_axis=-2):
    """The inverse short-time Fourier transform (``scipy.signal.istft``): ``(t, x)`` by
    weighted overlap-add, divided by the summed squared window where it exceeds 1e-10;
    ``boundary=True`` drops the ``nperseg // 2`` samples ``stft`` added at each end. Real
    output for one-sided input.

    >>> x = np.sin(np.arange(32.0))
    >>> t, y = istft(stft(x, nperseg=8)[2], nperseg=8)
    >>> bool(fnp.allclose(y[:32], x))
    True
    """
    check_arraylike("istft", Zxx)
    z = asarray(Zxx, fname="istft")
    z = z.astype(np.result_type(fnp.result_type(z), np.complex64))
    nd = len(shape_of(z))
    if nd < 2:
        raise ValueError(f"istft: Zxx must be at least 2-d, got shape {shape_of(z)}")
    fa, ta = canonicalize_axis(freq_axis, nd, "istft"), canonicalize_axis(time_axis, nd, "istft")
    if fa == ta:
        raise ValueError("istft: time_axis and freq_axis must differ")
    nseg, nfreq = shape_of(z)[ta], shape_of(z)[fa]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = n_default if nperseg is None else int(nperseg)
    if nperseg < 1:
        raise ValueError(f"istft: nperseg must be a positive integer, got {nperseg}")
    if nfft is None:
        nfft = nperseg if (input_onesided and nperseg == n_default + 1) else n_default
    elif int(nfft) < nperseg:
        raise ValueError(f"istft: nfft ({nfft}) must be greater than or equal to nperseg ({nperseg})")
    nfft = int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"istft: noverlap ({noverlap}) must be less than nperseg ({nperseg})")
    step = nperseg - noverlap
    z = fnp.moveaxis(z, (fa, ta), (-2, -1))
    real_dtype = fnp.result_type(fnp.real(z))
    win = _window("istft", window, nperseg, real_dtype)
    inverse = fnp.fft.irfft if input_onesided else fnp.fft.ifft
    xsubs = inverse(z, n=nfft, axis=-2)[..., :nperseg, :]
    xsubs = xsubs * fnp.sum(win)
    length = nperseg + (nseg - 1) * step
    idx = np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]  # (nseg, nperseg) output positions
    frames = fnp.swapaxes(xsubs, -1, -2) * win  # (..., nseg, nperseg)
    x = fnp.zeros(shape_of(frames)[:-2] + (length,), fnp.result_type(frames)).at[..., idx].add(frames)
    norm = fnp.zeros((length,), fnp.result_type(win)).at[idx].add(fnp.broadcast_to(win * win, (nseg, nperseg)))
    if boundary:
        half = nperseg // 2
        x, norm = x[..., half:length - half], norm[half:length - half]
    x = x / fnp.where(norm > 1e-10, norm, 1.0)
    if input_onesided:
        x = fnp.real(x)
    if len(shape_of(x)) > 1 and ta != nd - 1:
        x = fnp.moveaxis(x, -1, ta - 1 if fa < ta else ta)
    time = np.arange(shape_of(x)[0]) / float(fs)
    return time, x
