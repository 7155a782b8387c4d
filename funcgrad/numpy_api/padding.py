"""funcgrad.numpy: ``pad`` in every NumPy mode.

Axes are padded one after another (axis 0 first), so later axes own the corners, as in
NumPy. Each mode is static slicing, gathers with static index arrays, reductions and
concatenation, so ``pad`` is differentiable (in ``array``, ``constant_values`` and
``end_values``), batches and compiles. ``reflect``/``symmetric`` repeat NumPy's
chunk-by-chunk loop, so widths larger than the axis (and ``reflect_type='odd'``) give
NumPy's values. ``mode='empty'`` fills with zeros (NumPy leaves memory uninitialised;
JAX also gives zeros). A callable ``mode`` is called on each 1-d slice along each axis,
``mode(vector, (before, after), axis, kwargs)``: it may return the padded vector (JAX)
or, on concrete input, fill the NumPy vector it is given in place (NumPy).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import aval_of, canonicalize_axis, is_tracer
from funcgrad.numpy_api.elementwise import floor
from funcgrad.numpy_api.elementwise import round as _round
from funcgrad.numpy_api.joining import concatenate, stack
from funcgrad.numpy_api.reductions import max as _max
from funcgrad.numpy_api.reductions import mean, median
from funcgrad.numpy_api.reductions import min as _min
from funcgrad.numpy_api.shape import array_arg, broadcast_to, cast, moveaxis, reshape, static_int

__all__ = ["pad"]

_STAT_MODES = {"maximum": _max, "minimum": _min, "mean": mean, "median": median}
_MODE_KWARGS = {
    "constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
    "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}, "linear_ramp": {"end_values"},
    "maximum": {"stat_length"}, "minimum": {"stat_length"}, "mean": {"stat_length"}, "median": {"stat_length"},
}


def _pad_widths(pad_width, nd):
    if isinstance(pad_width, dict):
        widths = np.zeros((nd, 2), dtype=np.int64)
        for ax, w in pad_width.items():
            widths[canonicalize_axis(ax, nd, "pad")] = np.broadcast_to(np.asarray(w), (2,))
        pw = widths
    else:
        if is_tracer(pad_width):
            static_int(pad_width, "pad", "pad_width")
        pw = np.asarray(pad_width)
    if pw.dtype.kind not in "iu":
        raise TypeError(f"pad: `pad_width` must be of integral type, got {pad_width!r}")
    try:
        pw = np.broadcast_to(pw, (nd, 2))
    except ValueError:
        raise ValueError(
            f"pad: pad_width {pad_width!r} must be an int, a (before, after) pair or one pair per "
            f"axis of an array of rank {nd}"
        ) from None
    if (pw < 0).any():
        raise ValueError(f"pad: index can't contain negative values, got pad_width {pad_width!r}")
    return [(int(lo), int(hi)) for lo, hi in pw]


def _pad_value(v, dtype):
    if is_tracer(v):
        if v.aval.shape != ():
            raise NotImplementedError("pad: a traced constant_values must be a scalar")
        return lax.convert_element_type(v, dtype)
    return np.asarray(v).astype(dtype)


def _pairs(fname, what, value, nd):
    """``value`` as one (before, after) pair of scalars per axis (NumPy's ``_as_pairs``)."""
    if is_tracer(value):
        if value.aval.ndim == 0:
            return [(value, value)] * nd
        value = broadcast_to(value, (nd, 2))
        return [(value[i, 0], value[i, 1]) for i in range(nd)]
    try:
        arr = np.broadcast_to(np.asarray(value), (nd, 2))
    except ValueError:
        raise ValueError(f"{fname}: {what} {value!r} must be a scalar, a pair or one pair per axis of an array "
                         f"of rank {nd}") from None
    return [(arr[i, 0], arr[i, 1]) for i in range(nd)]


def _take(x, axis, idx):
    """``x`` gathered at the static positions ``idx`` along ``axis``."""
    return x[(slice(None),) * axis + (np.asarray(idx, np.int64),)]


def _constant(x, widths, cv):
    nd = aval_of(x).ndim
    dt = aval_of(x).dtype
    if is_tracer(cv) or np.size(cv) == 1:
        value = _pad_value(cv if is_tracer(cv) else np.asarray(cv).reshape(()), dt)
        return lax.pad(x, value, [(lo, hi, 0) for lo, hi in widths])
    values = _pairs("pad", "constant_values", cv, nd)
    for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, values)):
        for width, v, side in ((lo, vlo, 0), (hi, vhi, 1)):
            if width:
                cfg = [(0, 0, 0)] * nd
                cfg[ax] = (width, 0, 0) if side == 0 else (0, width, 0)
                x = lax.pad(x, _pad_value(v, dt), cfg)
    return x


def _reflect_axis(x, axis, lo, hi, odd, include_edge):
    """NumPy's ``_set_reflect_both`` loop, functionally: each round mirrors at most one
    period of what is already there onto each side."""
    period = aval_of(x).shape[axis]
    edge_offset = 1 if include_edge else 0
    while lo > 0 or hi > 0:
        cur = aval_of(x).shape[axis]
        if include_edge:
            old = cur // period * period
        else:
            old = (cur - 1) // (period - 1) * (period - 1)
        left = right = None
        if lo > 0:
            n = min(old, lo)
            left = _take(x, axis, np.arange(n - edge_offset, -edge_offset, -1))
            if odd:
                left = 2 * _take(x, axis, [0]) - left
            lo -= n
        if hi > 0:
            n = min(old, hi)
            right = _take(x, axis, cur + np.arange(edge_offset - 2, edge_offset - 2 - n, -1))
            if odd:
                right = 2 * _take(x, axis, [cur - 1]) - right
            hi -= n
        x = concatenate([p for p in (left, x, right) if p is not None], axis)
    return x


def _ramp(edge, end, width, axis, dt, reverse):
    """NumPy's ``linspace(end, edge, width, endpoint=False)`` along ``axis``."""
    nd = aval_of(edge).ndim
    shape = [1] * nd
    shape[axis] = width
    steps = np.arange(width, dtype=np.float64).reshape(shape)
    if reverse:
        steps = steps[(slice(None),) * axis + (slice(None, None, -1),)]
    work = dt if dt.kind in "fc" else dtypes.float64
    e = cast(edge, work)
    end = cast(end, work) if is_tracer(end) else np.asarray(end, work)
    out = cast(steps, work) * ((e - end) / width) + end
    return cast(floor(out) if dt.kind in "iu" else out, dt)


def _stat_axis(x, axis, lo, hi, stat, lengths, n):
    dt = aval_of(x).dtype
    fills = []
    for width, length, side in ((lo, lengths[0], 0), (hi, lengths[1], 1)):
        if not width:
            fills.append(None)
            continue
        m = n if length is None else min(int(length), n)
        part = _take(x, axis, np.arange(m) if side == 0 else np.arange(n - m, n))
        v = stat(part, axis=axis, keepdims=True)
        if dt.kind in "iub" and aval_of(v).dtype != dt:
            v = cast(_round(v), dt)  # NumPy rounds an integer array's mean/median
        shape = list(aval_of(x).shape)
        shape[axis] = width
        fills.append(broadcast_to(cast(v, dt), tuple(shape)))
    return concatenate([p for p in (fills[0], x, fills[1]) if p is not None], axis)


def _callable_axis(x, axis, lo, hi, func, kwargs):
    moved = moveaxis(x, axis, -1)
    lead = aval_of(moved).shape[:-1]
    n = aval_of(moved).shape[-1]
    rows = reshape(moved, (-1, n))
    out = []
    for r in range(aval_of(rows).shape[0]):
        vec = _constant(rows[r], [(lo, hi)], 0)
        if not is_tracer(vec):
            vec = np.array(vec)  # NumPy's protocol: the function may fill this vector in place
        got = func(vec, (lo, hi), axis, kwargs)
        out.append(vec if got is None else got)
    stacked = stack(out) if out else np.zeros((0, n + lo + hi), aval_of(x).dtype)
    return moveaxis(reshape(cast(stacked, aval_of(x).dtype), lead + (n + lo + hi,)), -1, axis)


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array, NumPy's ``pad`` in every mode: ``constant`` (``constant_values``),
    ``edge``, ``reflect``/``symmetric`` (``reflect_type`` ``'even'``/``'odd'``), ``wrap``,
    ``linear_ramp`` (``end_values``), ``maximum``/``minimum``/``mean``/``median``
    (``stat_length``), ``empty`` (zeros) or a function. ``pad_width``: an int, a
    ``(before, after)`` pair, one pair per axis, or a dict ``{axis: width}``.

    >>> fnp.pad(np.array([1., 2., 3.]), 2, mode="reflect")
    Array([3., 2., 1., 2., 3., 2., 1.])
    """
    x = array_arg(array, "pad")
    aval = aval_of(x)
    widths = _pad_widths(pad_width, aval.ndim)
    if callable(mode):
        for ax, (lo, hi) in enumerate(widths):
            x = _callable_axis(x, ax, lo, hi, mode, kwargs)
        return x
    if mode not in _MODE_KWARGS:
        raise ValueError(f"pad: mode {mode!r} is not supported; expected one of {sorted(_MODE_KWARGS)} or a function")
    unknown = set(kwargs) - _MODE_KWARGS[mode]
    if unknown:
        raise ValueError(f"pad: unsupported keyword arguments for mode '{mode}': {sorted(unknown)}")
    if mode in ("constant", "empty"):
        return _constant(x, widths, kwargs.get("constant_values", 0) if mode == "constant" else 0)
    for ax, (lo, hi) in enumerate(widths):
        if aval.shape[ax] == 0 and (lo or hi):
            raise ValueError(f"pad: can't extend empty axis {ax} of shape {aval.shape} using modes other than "
                             f"'constant' or 'empty' (mode={mode!r})")
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    if mode in _STAT_MODES:
        lengths = _pairs("pad", "stat_length", kwargs.get("stat_length"), aval.ndim) \
            if kwargs.get("stat_length") is not None else [(None, None)] * aval.ndim
        for pair in lengths:
            if any(v is not None and (is_tracer(v) or int(v) < 0) for v in pair):
                raise ValueError(f"pad: stat_length must be non-negative integers, got {kwargs.get('stat_length')!r}")
            if any(v is not None and int(v) == 0 for v in pair) and mode in ("mean", "median"):
                raise ValueError(f"pad: stat_length of 0 yields no value for padding (mode={mode!r})")
    if mode == "linear_ramp":
        ends = _pairs("pad", "end_values", kwargs.get("end_values", 0), aval.ndim)
    for ax, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        n = aval_of(x).shape[ax]
        if mode == "edge" or (mode in ("reflect", "symmetric") and aval.shape[ax] == 1):
            x = _take(x, ax, np.clip(np.arange(-lo, n + hi), 0, n - 1))
        elif mode == "wrap":
            x = _take(x, ax, np.arange(-lo, n + hi) % aval.shape[ax])
        elif mode in ("reflect", "symmetric"):
            x = _reflect_axis(x, ax, lo, hi, kwargs.get("reflect_type", "even") == "odd", mode == "symmetric")
        elif mode == "linear_ramp":
            parts = [x]
            if lo:
                parts.insert(0, _ramp(_take(x, ax, [0]), ends[ax][0], lo, ax, aval.dtype, reverse=False))
            if hi:
                parts.append(_ramp(_take(x, ax, [n - 1]), ends[ax][1], hi, ax, aval.dtype, reverse=True))
            x = concatenate(parts, ax)
        else:
            x = _stat_axis(x, ax, lo, hi, _STAT_MODES[mode], lengths[ax], n)
    return x
