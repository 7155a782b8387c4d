"""funcgrad.numpy: differences and calculus (diff, gradient, trapezoid, interp, unwrap,
convolve, ...), NumPy's signatures and values, as composites of existing functions.

Everything here is slicing, arithmetic, gathers with static index arrays and cumulative
sums, so derivatives, vmap and jit come from those. Where NumPy decides something from
the data (``gradient``'s "are these coordinates uniform?"), a concrete argument gets
NumPy's choice and a traced one the general formula (equal up to rounding).
"""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import (
    asarray,
    aval_of,
    canonicalize_axes,
    canonicalize_axis,
    check_arraylike,
    is_tracer,
    result_type,
)
from funcgrad.numpy_api.elementwise import abs as _abs
from funcgrad.numpy_api.elementwise import isnan, not_equal, remainder, subtract, where
from funcgrad.numpy_api.indexing import take
from funcgrad.numpy_api.joining import concatenate
from funcgrad.numpy_api.padding import pad
from funcgrad.numpy_api.products import matmul
from funcgrad.numpy_api.reductions import argsort, cumprod, cumsum
from funcgrad.numpy_api.reductions import sum as _sum
from funcgrad.numpy_api.selection import searchsorted
from funcgrad.numpy_api.shape import broadcast_to, cast, ravel, reshape, static_int

__all__ = [
    "diff", "ediff1d", "gradient", "trapezoid", "cumulative_sum", "cumulative_prod", "nancumsum",
    "nancumprod", "interp", "unwrap", "convolve", "correlate",
]


def _arg(x, fname):
    check_arraylike(fname, x)
    return asarray(x, fname=fname)


def _slice(x, axis, start, stop):
    """``x[..., start:stop, ...]`` along ``axis`` (static bounds)."""
    idx = [slice(None)] * aval_of(x).ndim
    idx[axis] = slice(start, stop)
    return x[tuple(idx)]


def _float_dtype(dt):
    return dt if dt.kind == "f" else dtypes.float64


# --- differences ------------------------------------------------------------------------
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``; bool inputs give ``!=``, as NumPy.

    >>> fnp.diff(np.array([1, 2, 4, 7, 0]))
    Array([ 1,  2,  3, -7])
    """
    x = _arg(a, "diff")
    n = static_int(n, "diff", "n")
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got n={n}")
    if n == 0:
        return x
    nd = aval_of(x).ndim
    if nd == 0:
        raise ValueError("diff: diff requires input that is at least one dimensional (got shape ())")
    axis = canonicalize_axis(axis, nd, "diff")
    parts = []
    for extra, what in ((prepend, "prepend"), (None, None), (append, "append")):
        if what is None:
            parts.append(x)
        elif extra is not None:
            e = _arg(extra, "diff")
            if aval_of(e).ndim == 0:
                shp = list(aval_of(x).shape)
                shp[axis] = 1
                e = broadcast_to(e, tuple(shp))
            parts.append(e)
    if len(parts) > 1:
        x = concatenate(parts, axis)
    op = not_equal if aval_of(x).dtype == dtypes.bool_ else subtract
    for _ in range(n):
        m = aval_of(x).shape[axis]
        x = op(_slice(x, axis, 1, m), _slice(x, axis, 0, max(m - 1, 0)))
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened ``ary``, with optional values before and after (cast
    to ``ary``'s dtype, as NumPy).

    >>> fnp.ediff1d(np.array([1, 2, 4, 7]), to_begin=-99)
    Array([-99,   1,   2,   3])
    """
    x = ravel(_arg(ary, "ediff1d"))
    dt = aval_of(x).dtype
    parts = []
    for extra, what in ((to_begin, "to_begin"), (None, None), (to_end, "to_end")):
        if what is None:
            m = aval_of(x).shape[0]
            parts.append(subtract(x[1:], x[: max(m - 1, 0)]) if dt != dtypes.bool_ else not_equal(x[1:], x[:-1]))
        elif extra is not None:
            e = ravel(_arg(extra, "ediff1d"))
            edt = aval_of(e).dtype
            if not np.can_cast(edt, dt, casting="same_kind"):
                raise TypeError(f"ediff1d: dtype of `{what}` ({edt}) must be compatible with input `ary` ({dt}) "
                                "under the `same_kind` rule")
            parts.append(cast(e, dt))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def _spacings(fname, varargs, axes, shape):
    """One spacing per axis: a Python/NumPy scalar, or a 1-d coordinate array."""
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and aval_of(asarray(varargs[0], fname=fname)).ndim == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"{fname}: invalid number of arguments: {len(varargs)} spacings for {len(axes)} axes")
    out = []
    for ax, h in zip(axes, varargs):
        ha = asarray(h, fname=fname)
        hd = aval_of(ha)
        if hd.ndim == 0:
            out.append(h)
            continue
        if hd.ndim != 1:
            raise ValueError(f"{fname}: distances must be either scalars or 1d, got shape {hd.shape} for axis {ax}")
        if hd.shape[0] != shape[ax]:
            raise ValueError(f"{fname}: when 1d, distances must match the length of the corresponding dimension "
                             f"(got {hd.shape[0]} coordinates for axis {ax} of length {shape[ax]})")
        if hd.dtype.kind in "iub":
            ha = cast(ha, dtypes.float64)
        dx = diff(ha)
        if not is_tracer(dx) and dx.size and (np.asarray(dx) == np.asarray(dx)[0]).all():
            dx = np.asarray(dx)[0]  # NumPy treats uniform coordinates as a scalar spacing
        out.append(dx)
    return out


def _gradient_axis(f, axis, h, edge_order):
    n = aval_of(f).shape[axis]
    sl = lambda a, b: _slice(f, axis, a, b)  # noqa: E731
    last = n
    if aval_of(asarray(h)).ndim == 0:
        mid = (sl(2, n) - sl(0, n - 2)) / (2.0 * h)
        if edge_order == 1:
            lo = (sl(1, 2) - sl(0, 1)) / h
            hi = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
        else:
            lo = (-1.5 * sl(0, 1) + 2.0 * sl(1, 2) - 0.5 * sl(2, 3)) / h
            hi = (0.5 * sl(n - 3, n - 2) - 2.0 * sl(n - 2, n - 1) + 1.5 * sl(n - 1, n)) / h
        return concatenate([lo, mid, hi], axis)
    nd = aval_of(f).ndim
    shape = [1] * nd
    shape[axis] = -1

    def along(v):
        return reshape(v, tuple(shape))

    dx1, dx2 = h[: last - 2], h[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    mid = along(a) * sl(0, n - 2) + along(b) * sl(1, n - 1) + along(c) * sl(2, n)
    if edge_order == 1:
        lo = (sl(1, 2) - sl(0, 1)) / h[0]
        hi = (sl(n - 1, n) - sl(n - 2, n - 1)) / h[-1]
    else:
        d1, d2 = h[0], h[1]
        lo = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * sl(0, 1) + (d1 + d2) / (d1 * d2) * sl(1, 2)
              - d1 / (d2 * (d1 + d2)) * sl(2, 3))
        d1, d2 = h[-2], h[-1]
        hi = (d2 / (d1 * (d1 + d2)) * sl(n - 3, n - 2) - (d2 + d1) / (d1 * d2) * sl(n - 2, n - 1)
              + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * sl(n - 1, n))
    return concatenate([lo, mid, hi], axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """Second-order central differences inside, one-sided (``edge_order`` 1 or 2) at the
    ends; spacings are scalars or coordinate arrays, one per axis. Returns an array for
    one axis, else a tuple (NumPy 2).

    >>> fnp.gradient(np.array([1., 2., 4., 7., 11.]))
    Array([1. , 1.5, 2.5, 3.5, 4. ])
    """
    y = _arg(f, "gradient")
    aval = aval_of(y)
    axes = tuple(range(aval.ndim)) if axis is None else canonicalize_axes(axis, aval.ndim, "gradient")
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: 'edge_order' greater than 2 not supported, got {edge_order!r}")
    spacings = _spacings("gradient", varargs, axes, aval.shape)
    if aval.dtype.kind in "iub":
        y = cast(y, dtypes.float64)
    outs = []
    for ax, h in zip(axes, spacings):
        if aval.shape[ax] < edge_order + 1:
            raise ValueError(f"gradient: shape of array too small to calculate a numerical gradient, at least "
                             f"(edge_order + 1) = {edge_order + 1} elements are required along axis {ax} "
                             f"(got shape {aval.shape})")
        outs.append(_gradient_axis(y, ax, h, edge_order))
    return outs[0] if len(outs) == 1 else tuple(outs)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (samples at ``x``, or
    spaced ``dx``).

    >>> fnp.trapezoid(np.array([1., 2., 3.]), x=np.array([4., 6., 8.]))
    Array(8.)
    """
    yv = _arg(y, "trapezoid")
    nd = aval_of(yv).ndim
    if nd == 0:
        raise ValueError("trapezoid: y must be at least one dimensional (got shape ())")
    axis = canonicalize_axis(axis, nd, "trapezoid")
    if x is None:
        d = dx
    else:
        xv = _arg(x, "trapezoid")
        if aval_of(xv).ndim == 1:
            if aval_of(xv).shape[0] != aval_of(yv).shape[axis]:
                raise ValueError(f"trapezoid: x of shape {aval_of(xv).shape} does not match y of shape "
                                 f"{aval_of(yv).shape} along axis {axis}")
            shape = [1] * nd
            shape[axis] = -1
            d = reshape(diff(xv), tuple(shape))
        else:
            d = diff(xv, axis=axis)
    m = aval_of(yv).shape[axis]
    return _sum(d * (_slice(yv, axis, 1, m) + _slice(yv, axis, 0, max(m - 1, 0))) / 2.0, axis)


# --- cumulative ---------------------------------------------------------------------------
def _array_api_cumulative(fname, scan, initial, x, axis, dtype, include_initial):
    x = _arg(x, fname)
    nd = aval_of(x).ndim
    if axis is None:
        if nd > 1:
            raise ValueError(f"{fname}: for arrays which have more than one dimension the ``axis`` argument is "
                             f"required (got shape {aval_of(x).shape})")
        axis = 0
    if nd == 0:
        raise ValueError(f"{fname}: the input must be at least one dimensional (got shape ())")
    axis = canonicalize_axis(axis, nd, fname)
    out = scan(x, axis=axis, dtype=dtype)
    if include_initial:
        widths = [(0, 0)] * nd
        widths[axis] = (1, 0)
        out = pad(out, widths, constant_values=initial)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative sum: ``axis`` required for ``ndim > 1``; ``include_initial``
    prepends a 0.

    >>> fnp.cumulative_sum(np.array([1, 2, 3]), include_initial=True)
    Array([0, 1, 3, 6])
    """
    return _array_api_cumulative("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative product; ``include_initial`` prepends a 1.

    >>> fnp.cumulative_prod(np.array([1, 2, 3]))
    Array([1, 2, 6])
    """
    return _array_api_cumulative("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


def _nan_to(x, value, fname):
    x = _arg(x, fname)
    return where(isnan(x), value, x) if aval_of(x).dtype.kind in "fc" else x


def nancumsum(a, axis=None, dtype=None, out=None):
    """``cumsum`` with NaNs counted as 0.

    >>> fnp.nancumsum(np.array([1., np.nan, 2.]))
    Array([1., 1., 3.])
    """
    return cumsum(_nan_to(a, 0, "nancumsum"), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """``cumprod`` with NaNs counted as 1."""
    return cumprod(_nan_to(a, 1, "nancumprod"), axis, dtype, out)


# --- interpolation and phase ----------------------------------------------------------------
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x`` (``xp`` increasing); float64
    results as NumPy. ``period`` wraps ``x`` and ``xp`` (``left``/``right`` then unused).

    >>> fnp.interp(2.5, np.array([1., 2., 3.]), np.array([3., 2., 0.]))
    Array(1.)
    """
    f64 = dtypes.float64
    xv, xpv = (cast(_arg(v, "interp"), f64) for v in (x, xp))
    fpv = _arg(fp, "interp")  # complex fp interpolates complex (NumPy): a float64 cast would drop imag
    fpv = cast(fpv, dtypes.complex128 if aval_of(fpv).dtype.kind == "c" else f64)
    if aval_of(xpv).ndim != 1 or aval_of(fpv).ndim != 1:
        raise ValueError(f"interp: xp and fp must be one-dimensional, got shapes {aval_of(xpv).shape} and "
                         f"{aval_of(fpv).shape}")
    if aval_of(xpv).shape != aval_of(fpv).shape:
        raise ValueError(f"interp: fp and xp are not of the same length ({aval_of(fpv).shape[0]} and "
                         f"{aval_of(xpv).shape[0]})")
    if aval_of(xpv).shape[0] == 0:
        raise ValueError("interp: array of sample points (xp) is empty")
    if period is not None:
        if not is_tracer(period) and period == 0:
            raise ValueError("interp: period must be a non-zero value")
        period = _abs(period)
        xv = remainder(xv, period)
        xpv = remainder(xpv, period)
        order = argsort(xpv)
        xpv, fpv = take(xpv, order, mode="clip"), take(fpv, order, mode="clip")
        xpv = concatenate([xpv[-1:] - period, xpv, xpv[:1] + period])
        fpv = concatenate([fpv[-1:], fpv, fpv[:1]])
        left = right = None
    m = aval_of(xpv).shape[0]
    # j: the last sample with xp[j] <= x (a binary search: O(len(x) log len(xp)))
    j = searchsorted(xpv, xv, side="right") - 1
    j0 = where(j < 0, 0, where(j > m - 2, max(m - 2, 0), j))
    j1 = where(j0 + 1 > m - 1, m - 1, j0 + 1)
    x0, x1, f0, f1 = (take(v, j, mode="clip") for v, j in ((xpv, j0), (xpv, j1), (fpv, j0), (fpv, j1)))
    dxs = x1 - x0
    safe = where(dxs == 0, 1.0, dxs)
    val = where(dxs == 0, f0, (f1 - f0) / safe * (xv - x0) + f0)
    val = where(xv == xpv[m - 1], fpv[m - 1], val)
    lo = fpv[0] if left is None else left
    hi = fpv[m - 1] if right is None else right
    val = where(xv < xpv[0], lo, where(xv > xpv[m - 1], hi, val))
    return cast(asarray(val), aval_of(fpv).dtype)


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """Undo jumps larger than ``discont`` (default ``period/2``) by adding multiples of
    ``period`` along ``axis``.

    >>> fnp.unwrap(np.array([0., 0.78, 5.49, 6.28]))
    Array([ 0.        ,  0.78      , -0.79318531, -0.00318531])
    """
    x = _arg(p, "unwrap")
    nd = aval_of(x).ndim
    if nd == 0:
        raise ValueError("unwrap: p must be at least one dimensional (got shape ())")
    axis = canonicalize_axis(axis, nd, "unwrap")
    dd = diff(x, axis=axis)
    if discont is None:
        discont = period / 2
    dt = result_type(dd, period)
    if dt.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddmod = remainder(dd - low, period) + low
    if ambiguous:
        ddmod = where((ddmod == low) & (dd > 0), high, ddmod)
    correct = where(_abs(dd) < discont, 0, ddmod - dd)
    out_dt = result_type(x, correct)
    m = aval_of(x).shape[axis]
    tail = _slice(x, axis, 1, m) + cumsum(correct, axis=axis)
    return concatenate([cast(_slice(x, axis, 0, 1), out_dt), cast(tail, out_dt)], axis)


# --- convolution ----------------------------------------------------------------------------
def _correlate_full(fname, a, v):
    """Full cross-correlation of 1-d ``a`` (length n) and ``v`` (length m <= n):
    ``out[k] = sum_j a_pad[k + j] v[j]`` as one gather with a static index matrix and a
    matrix-vector product."""
    n, m = aval_of(a).shape[0], aval_of(v).shape[0]
    a_pad = pad(a, (m - 1, m - 1))
    idx = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    return matmul(a_pad[idx], v)


def _correlate(fname, a, v, mode, flip_v):
    av, vv = _arg(a, fname), _arg(v, fname)
    if aval_of(av).ndim != 1 or aval_of(vv).ndim != 1:
        raise ValueError(f"{fname}: only 1-d inputs are supported, got shapes {aval_of(av).shape} and "
                         f"{aval_of(vv).shape}")
    n, m = aval_of(av).shape[0], aval_of(vv).shape[0]
    if n == 0 or m == 0:
        raise ValueError(f"{fname}: inputs cannot be empty, got shapes {aval_of(av).shape} and {aval_of(vv).shape}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{fname}: mode must be one of 'full', 'same', 'valid', got {mode!r}")
    dt = result_type(av, vv)
    if dt == dtypes.bool_:
        dt = dtypes.int64  # computed in int64, cast back below (NumPy gives bool: any product)
    av, vv = cast(av, dt), cast(vv, dt)
    swapped = m > n
    if swapped:
        av, vv, n, m = vv, av, m, n
    if flip_v:  # convolve: NumPy swaps first, then correlates with the shorter one reversed
        vv, swapped = vv[::-1], False
    out = _correlate_full(fname, av, vv)
    if swapped:
        out = out[::-1]
    if mode == "same":
        start = (m - 1) // 2 if not swapped else m // 2
        out = out[start: start + n]
    elif mode == "valid":
        out = out[m - 1: n]
    return out if result_type(_arg(a, fname), _arg(v, fname)) != dtypes.bool_ else out != 0


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-d arrays (NumPy's modes; the shorter one
    slides, as NumPy swaps them).

    >>> fnp.convolve(np.array([1., 2., 3.]), np.array([0., 1., 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5])
    """
    return _correlate("convolve", a, v, mode, flip_v=True)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-d arrays, ``c[k] = sum_n a[n + k] conj(v[n])`` (NumPy's modes;
    a longer ``v`` gives the reversed result, as NumPy).

    >>> fnp.correlate(np.array([1., 2., 3.]), np.array([0., 1., 0.5]))
    Array([3.5])
    """
    vv = _arg(v, "correlate")
    if aval_of(vv).dtype.kind == "c":  # NumPy's (and JAX's) c[k] = sum_n a[n + k] conj(v[n])
        vv = lax.conj(vv)
    return _correlate("correlate", a, vv, mode, flip_v=False)
