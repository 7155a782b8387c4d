"""The named windows of the spectral functions, in SciPy's periodic (DFT-even) form: the
symmetric window of length ``n + 1`` without its last point (``scipy.signal.get_window``'s
default). Computed in NumPy from the static length, as constants.

Names: 'hann' ('hanning'), 'hamming', 'blackman', 'nuttall', 'blackmanharris', 'flattop'
(the generalized cosine windows), 'bartlett', 'triang', 'cosine', 'bohman', 'boxcar'
('rectangular', 'ones'); with a parameter, as a tuple: ``('kaiser', beta)``, ``('tukey',
alpha)``, ``('gaussian', std)``, ``('general_hamming', alpha)``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["periodic_window"]

_COSINE = {
    "hann": [0.5, 0.5], "hanning": [0.5, 0.5], "hamming": [0.54, 0.46], "blackman": [0.42, 0.50, 0.08],
    "nuttall": [0.3635819, 0.4891775, 0.1365995, 0.0106411],
    "blackmanharris": [0.35875, 0.48829, 0.14128, 0.01168],
    "flattop": [0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368],
}


def _general_cosine(m, a):
    fac = np.linspace(-np.pi, np.pi, m)
    return sum(ak * np.cos(k * fac) for k, ak in enumerate(a))


def _triang(m):
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        w = (2 * n - 1.0) / m
        return np.r_[w, w[::-1]]
    w = 2 * n / (m + 1.0)
    return np.r_[w, w[-2::-1]]


def _bohman(m):
    fac = np.abs(np.linspace(-1, 1, m)[1:-1])
    return np.r_[0.0, (1 - fac) * np.cos(np.pi * fac) + np.sin(np.pi * fac) / np.pi, 0.0]


def _tukey(m, alpha):
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1:
        return _general_cosine(m, [0.5, 0.5])
    n = np.arange(m)
    width = int(np.floor(alpha * (m - 1) / 2.0))
    n1, n3 = n[:width + 1], n[m - width - 1:]
    w1 = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * n1 / alpha / (m - 1))))
    w3 = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * n3 / alpha / (m - 1))))
    return np.r_[w1, np.ones(m - len(w1) - len(w3)), w3]


def _symmetric(name, m, param):
    if name in _COSINE:
        return _general_cosine(m, _COSINE[name])
    table = {
        "bartlett": lambda: 1.0 - np.abs(2.0 * np.arange(m) / (m - 1) - 1.0),
        "triang": lambda: _triang(m),
        "cosine": lambda: np.sin(np.pi / m * (np.arange(m) + 0.5)),
        "bohman": lambda: _bohman(m),
        "boxcar": lambda: np.ones(m), "rectangular": lambda: np.ones(m), "ones": lambda: np.ones(m),
        "kaiser": lambda: np.kaiser(m, param),
        "tukey": lambda: _tukey(m, param),
        "gaussian": lambda: np.exp(-0.5 * ((np.arange(m) - (m - 1) / 2.0) / param) ** 2),
        "general_hamming": lambda: _general_cosine(m, [param, 1.0 - param]),
    }
    return table[name]()


_NEEDS_PARAM = {"kaiser", "tukey", "gaussian", "general_hamming"}
_NAMES = set(_COSINE) | {"bartlett", "triang", "cosine", "bohman", "boxcar", "rectangular", "ones"} | _NEEDS_PARAM


def periodic_window(fname, window, n):
    """The periodic window ``window`` (a name or a ``(name, parameter)`` tuple) of length
    ``n`` as a float64 NumPy array, or a ValueError naming ``fname`` and the known names."""
    name, param = (window, None) if isinstance(window, str) else (window[0], window[1] if len(window) > 1 else None)
    if name not in _NAMES or ((name in _NEEDS_PARAM) != (param is not None)):
        raise ValueError(f"{fname}: unknown window {window!r}; use one of {sorted(_NAMES - _NEEDS_PARAM)}, a tuple "
                         f"('kaiser', beta), ('tukey', alpha), ('gaussian', std), ('general_hamming', alpha), "
                         f"or an array of length nperseg")
    if n <= 1:
        return np.ones(n)
    return np.asarray(_symmetric(name, n + 1, param)[:n], dtype=np.float64)
