"""Spherical harmonics: ``sph_harm_y(n, m, theta, phi)`` (SciPy's convention: ``theta``
the polar angle, ``phi`` the azimuth, the Condon-Shortley phase included).

``Y_n^m = Pbar_n^|m|(cos theta) e^(i m phi)`` (times ``(-1)^m`` for negative ``m``) with
the normalised associated Legendre function ``Pbar`` from the standard stable recurrences:
``Pbar_m^m = -sqrt((2m + 1) / 2m) sin(theta) Pbar_(m-1)^(m-1)`` from ``1 / sqrt(4 pi)``, then
``Pbar_(m+1)^m = sqrt(2m + 3) cos(theta) Pbar_m^m`` and
``Pbar_l^m = a_lm (cos(theta) Pbar_(l-1)^m - b_lm Pbar_(l-2)^m)``, ``a_lm = sqrt((4l^2 - 1) /
(l^2 - m^2))``, ``b_lm = sqrt(((l-1)^2 - m^2) / (4 (l-1)^2 - 1))``. Each element runs its own
degree and order through ``n_max`` masked steps (``n_max`` static: the largest degree, read
from a concrete ``n`` when not given). ``|m| > n`` gives 0, as SciPy.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util
from funcgrad.scipy.special._util import out, real_args

__all__ = ["sph_harm_y"]


def _legendre_normalised(n, am, theta, n_max):
    """Pbar_n^am(cos theta) elementwise (n, am float arrays of integers, 0 <= am <= n)."""
    x, s = fnp.cos(theta), fnp.abs(fnp.sin(theta))  # (SciPy: sqrt(1 - x^2) >= 0 for any theta)
    p = fnp.full_like(x, 1.0 / math.sqrt(4.0 * math.pi))
    for j in range(1, n_max + 1):  # Pbar_am^am
        p = fnp.where(j <= am, -math.sqrt((2 * j + 1) / (2.0 * j)) * s * p, p)
    prev, cur = fnp.zeros_like(p), p  # Pbar_(l-1), Pbar_l at l = am
    for k in range(1, n_max + 1):  # degree l = am + k
        l_ = am + k
        first = k == 1
        a = fnp.sqrt((4.0 * l_ * l_ - 1.0) / fnp.maximum(l_ * l_ - am * am, 1.0))
        b = fnp.sqrt(fnp.maximum((l_ - 1.0) ** 2 - am * am, 0.0) / (4.0 * (l_ - 1.0) ** 2 - 1.0))
        nxt = a * (x * cur - b * prev) if not first else fnp.sqrt(2.0 * am + 3.0) * x * cur
        step = l_ <= n
        prev, cur = fnp.where(step, cur, prev), fnp.where(step, nxt, cur)
    return cur


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic ``Y_n^m(theta, phi)`` of degree ``n`` and order ``m``
    (integers; arrays broadcast), complex. ``n_max`` (static) bounds the degrees; by
    default it is read from a concrete ``n``. ``diff_n`` (derivatives) is not supported.
    Differentiable in ``theta`` and ``phi``.

    >>> complex(fnp.round(sph_harm_y(0, 0, 0.3, 0.4), 12))   # 1 / sqrt(4 pi)
    (0.282094791774+0j)
    """
    if diff_n not in (None, 0):
        raise NotImplementedError(f"sph_harm_y: diff_n={diff_n!r} (derivatives) is not supported")
    _util.check_arraylike("sph_harm_y", n, m, theta, phi)
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n))) if np.size(n) else 0
        except Exception:  # (a traced n)
            raise TypeError("sph_harm_y: n_max must be given when n is traced (under jit or vmap)") from None
    n_max = max(int(n_max), 0)
    n, m, theta, phi = real_args("sph_harm_y", n, m, theta, phi)
    dtype = _util.aval_of(theta).dtype
    with np.errstate(all="ignore"):
        am = fnp.abs(m)
        valid = (am <= n) & (n >= 0)
        p = _legendre_normalised(fnp.where(valid, n, 0.0), fnp.where(valid, am, 0.0), theta, n_max)
        p = fnp.where(valid, p, 0.0)
        p = fnp.where((m < 0) & (fnp.remainder(am, 2.0) == 1.0), -p, p)  # (-1)^m conj(Y_n^|m|)
        y = lax.complex(p * fnp.cos(m * phi), p * fnp.sin(m * phi))
    return out(y.astype(np.result_type(dtype, np.complex64)))
