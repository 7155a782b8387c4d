"""``funcgrad.scipy.signal``: SciPy's signal processing as in ``jax.scipy.signal``:
convolution and correlation (``convolve``, ``correlate``, ``convolve2d``,
``correlate2d``, ``fftconvolve``), ``detrend``, and spectral analysis (``stft``,
``istft``, ``csd``, ``welch``). Composites of ``funcgrad.numpy`` and ``lax``, so they
trace, compile and differentiate.

>>> convolve(np.array([1.0, 1.0]), np.array([1.0, 2.0, 3.0]))
Array([1., 3., 5., 3.])
"""
from funcgrad.scipy.signal._direct import convolve, convolve2d, correlate, correlate2d
from funcgrad.scipy.signal._fftconvolve import fftconvolve
from funcgrad.scipy.signal._spectral import csd, detrend, istft, stft, welch

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft",
           "welch"]
