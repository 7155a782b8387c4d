"""funcgrad.numpy: NaN-ignoring statistics (nanargmax/min, nanprod, nanvar, nanstd,
nanmedian, nanquantile, nanpercentile); ``nansum``, ``nanmean``, ``nanmax`` and
``nanmin`` are in ``reductions.py``.

Composites of the reductions, ``sort`` and ``gather``: a NaN becomes the reduction's
identity (or is counted out), so derivatives flow to the other elements, and the
number of non-NaN elements of a slice is a traced count, never a shape. Integer and
bool inputs have no NaN and give what the plain function gives. Values and dtypes are
NumPy's, with its order of operations (``nanvar`` is NumPy's two-pass algorithm over
the non-NaN elements). Differences, as in JAX: all-NaN slices give ``-1`` from
``nanargmax``/``nanargmin`` rather than raising ValueError (the check would need the
values), and no "All-NaN slice" warnings are emitted.

>>> fnp.nanvar(np.array([1., np.nan, 3.]))
Array(1.)
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util
from funcgrad.numpy_api import reductions as _red
from funcgrad.numpy_api.selection import arg, numpy_result, take1d

__all__ = [
    "nanargmax", "nanargmin", "nanprod", "nanvar", "nanstd", "nanmedian", "nanquantile", "nanpercentile",
]

_i64, _f64 = dtypes.int64, dtypes.float64


def _is_float(x):
    """Can hold NaN: float or complex (a complex is NaN where either part is, as NumPy's isnan)."""
    return _util.aval_of(x).dtype.kind in "fc"


def _full_like(x, value, dtype=None):
    aval = _util.aval_of(x)
    return _util.full(aval.shape, value, aval.dtype if dtype is None else dtype)


def _masked(fname, x, where):
    """``x`` with the elements ``where`` excludes turned into NaN (ints become float64)."""
    if where is None:
        return x
    w = _util.broadcast_to(_red._to_bool(arg(fname, where, "where")), _util.shape_of(x))
    if not _is_float(x):
        x = lax.convert_element_type(x, _f64)
    return lax.select(w, x, _full_like(x, np.nan))


# --- nanargmax, nanargmin ----------------------------------------------------------------
def _nan_arg(fname, a, axis, out, keepdims):
    x = arg(fname, a)
    _red._no_out(fname, out)
    prim = lax.argmax if fname == "nanargmax" else lax.argmin
    if not _is_float(x):
        return _red._arg_extremum(fname, prim, x, axis, None, keepdims)
    flat, ax = _red._single_axis(fname, x, axis)
    if _util.shape_of(flat)[ax] == 0:
        raise ValueError(f"{fname}: attempt to get {fname} of an empty sequence (shape {_util.shape_of(x)})")
    # NumPy's rule: a NaN becomes -inf (+inf for argmin), so [nan, -inf] gives 0.
    idx = prim(_red._nan_to(flat, -np.inf if fname == "nanargmax" else np.inf), ax, _i64)
    all_nan = _red.all(_red._isnan(flat), axis=ax)
    idx = lax.select(all_nan, _full_like(idx, -1), idx)
    if keepdims:
        kept = (1,) * len(_util.shape_of(x)) if axis is None else _red._kept_shape(_util.shape_of(x), (ax,))
        idx = lax.reshape(idx, kept)
    return idx


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index (int64) of the first maximum ignoring NaNs; ``-1`` for an all-NaN slice (JAX).

    >>> fnp.nanargmax(np.array([np.nan, 2., 5., 5.]))
    Array(2)
    """
    return numpy_result(_nan_arg("nanargmax", a, axis, out, keepdims))


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index (int64) of the first minimum ignoring NaNs; ``-1`` for an all-NaN slice (JAX)."""
    return numpy_result(_nan_arg("nanargmin", a, axis, out, keepdims))


# --- nanprod, nanvar, nanstd ---------------------------------------------------------------
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaNs (and elements ``where`` excludes) as one; ``initial`` is a
    starting factor.

    >>> fnp.nanprod(np.array([2., np.nan, 3.]))
    Array(6.)
    """
    x = arg("nanprod", a)
    if where is not None:
        w = _util.broadcast_to(_red._to_bool(arg("nanprod", where, "where")), _util.shape_of(x))
        x = lax.select(w, x, _full_like(x, 1))
    y = _red.prod(_red._nan_to(x, 1), axis, dtype, out, keepdims)
    if initial is not None:
        y, init = _util.promote_dtypes(y, initial)
        y = lax.mul(y, _util.broadcast_to(init, _util.shape_of(y)))
    return y


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance of the non-NaN elements (``where`` excludes more), with ``ddof`` (or the
    Array API's ``correction``) delta degrees of freedom; NaN where ``count - ddof <= 0``.

    >>> fnp.nanvar(np.array([[1., np.nan], [3., 4.]]), axis=0)
    Array([1., 0.])
    """
    x = _masked("nanvar", arg("nanvar", a), where)
    _red._no_out("nanvar", out)
    if correction is not None:
        ddof = correction
    if not _is_float(x):
        return _red.var(x, axis, dtype, None, ddof, keepdims)
    aval = _util.aval_of(x)
    axes = _red._reduction_axes("nanvar", aval.ndim, axis)
    dt = _red._user_dtype("nanvar", dtype)
    nan = _red._isnan(x)
    cnt = _red.sum(lax.bitwise_not(nan), axes, _i64, None, True)
    arr = _red._nan_to(x, 0)
    avg = _red._div_count(_red.sum(arr, axes, dt, None, True), cnt)
    dev = lax.sub(arr, _util.broadcast_to(lax.convert_element_type(avg, aval.dtype), aval.shape))
    dev = lax.select(nan, _full_like(dev, 0), dev)
    if aval.dtype.kind == "c":  # NumPy: |x - mean|**2, real
        dev = lax.add(lax.mul(lax.real(dev), lax.real(dev)), lax.mul(lax.imag(dev), lax.imag(dev)))
        dt = None if dt is None else dtypes.real_dtype(dt)
    else:
        dev = lax.mul(dev, dev)
    var = _red.sum(dev, axes, dt, None, keepdims)
    dof = lax.sub(cnt if keepdims else lax.reshape(cnt, _util.shape_of(var)), _full_like(var, ddof, _i64))
    var = _red._div_count(var, dof)
    return numpy_result(lax.select(lax.le(dof, _full_like(dof, 0)), _full_like(var, np.nan), var))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Standard deviation of the non-NaN elements: ``sqrt(nanvar(...))``."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


# --- nanmedian, nanquantile, nanpercentile --------------------------------------------------
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of the non-NaN elements (NaN for an all-NaN slice).

    >>> fnp.nanmedian(np.array([3., np.nan, 1., 2.]))
    Array(2.)
    """
    x = arg("nanmedian", a)
    if not _is_float(x):
        return numpy_result(_red.median(x, axis, out, overwrite_input, keepdims))
    _red._no_out("nanmedian", out)
    aval = _util.aval_of(x)
    axes = _red._reduction_axes("nanmedian", aval.ndim, axis)
    if _red._count(aval.shape, axes) == 0:
        return _red._keep(_util.full(_red._reduced_shape(aval.shape, axes), np.nan, aval.dtype),
                          aval.shape, axes, keepdims)
    s, k = _sorted_and_count(x, axes)
    rshape = _util.shape_of(k)
    one, two = _util.full(rshape, 1, _i64), _util.full(rshape, 2, _i64)
    lo_i = lax.div(lax.sub(k, one), two)  # (k-1)//2 and k//2: the middle pair (k >= 1)
    hi_i = lax.div(k, two)
    lo, hi = _gather_last(s, lo_i), _gather_last(s, hi_i)
    # NumPy's median is the mean of the middle elements: (lo + hi) / 2, or lo itself.
    mid = lax.div(lax.add(lo, hi), _util.full(rshape, 2, aval.dtype))
    y = lax.select(lax.eq(lo_i, hi_i), lo, mid)
    y = lax.select(lax.le(k, _util.full(rshape, 0, _i64)), _util.full(rshape, np.nan, aval.dtype), y)
    return numpy_result(_red._keep(y, aval.shape, axes, keepdims))


def _sorted_and_count(x, axes):
    """The reduced axes merged into one sorted trailing axis (NaNs last), and the number
    of non-NaN elements of each slice (int64)."""
    s = _red._sorted_last(x, axes)
    return s, _red.sum(lax.bitwise_not(_red._isnan(s)), -1, _i64)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """``q``-th quantile(s) of the non-NaN elements over ``axis`` (``method='linear'``,
    as ``quantile``). The sorted positions read depend on each slice's NaN count, so
    ``q`` may be traced. The dimensions of ``q`` come first in the result.

    >>> fnp.nanquantile(np.array([1., np.nan, 3., 2.]), 0.25)
    Array(1.5)
    """
    return _nan_quantile("nanquantile", a, q, axis, out, method, keepdims, 1.0)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """``q``-th percentile(s) of the non-NaN elements: ``nanquantile(a, q / 100, ...)``."""
    return _nan_quantile("nanpercentile", a, q, axis, out, method, keepdims, 100.0)


def _q_array(fname, q, scale):
    """``q / scale`` as a float array (float64 unless ``q`` is a float32 array)."""
    qa = q if _util.is_tracer(q) else np.asarray(_util.asarray(q, fname=fname))
    qd = _util.aval_of(qa).dtype
    if qd.kind not in "biuf":
        raise TypeError(f"{fname}: q must be real numbers, got {qd}")
    if qd.kind != "f":  # (an integral q with scale 1 is read as indices: kept as int64)
        qa, qd = lax.convert_element_type(qa, _i64 if scale == 1 else _f64), _i64 if scale == 1 else _f64
    if scale != 1:
        qa = lax.div(qa, _util.full(_util.shape_of(qa), scale, qd))
    val = None if _util.is_tracer(qa) else np.asarray(qa)
    if val is not None and not bool(np.all((val >= 0) & (val <= 1))):
        raise ValueError(f"{fname}: quantiles must be in the range [0, {scale:g}], got {q!r}")
    if len(_util.shape_of(qa)) > 1:
        raise ValueError(f"{fname}: q must be a scalar or 1d, got shape {_util.shape_of(qa)}")
    return qa, qd


def _nan_quantile(fname, a, q, axis, out, method, keepdims, scale):
    x = arg(fname, a)
    _red._no_out(fname, out)
    if method != "linear":
        raise NotImplementedError(f"{fname}: only method='linear' is supported, got {method!r}")
    aval = _util.aval_of(x)
    if aval.dtype == dtypes.bool_:
        raise TypeError(f"{fname}: boolean arrays are not supported (NumPy cannot subtract booleans)")
    if aval.dtype.kind == "c":  # NumPy: "a must be an array of real numbers"
        raise TypeError(f"{fname}: a must be an array of real numbers, got {aval.dtype.name} of shape {aval.shape}")
    qa, qd = _q_array(fname, q, scale)
    if not _is_float(x) and qd.kind == "f":
        # No NaNs; NumPy interpolates the ints in float64, exactly like float64 data.
        x = lax.convert_element_type(x, _f64)
        aval = _util.aval_of(x)
    # NumPy 2: a Python q (also one traced as a weak scalar) keeps float32 data float32.
    weak_q = type(q) in (int, float) or (_util.is_tracer(q) and q.aval.weak_type)
    axes = _red._reduction_axes(fname, aval.ndim, axis)
    n = _red._count(aval.shape, axes)
    if n == 0:
        raise IndexError(f"{fname}: cannot take a quantile over an empty axis (shape {aval.shape})")
    s, k = _sorted_and_count(x, axes)
    qflat = lax.reshape(qa, (int(np.prod(_util.shape_of(qa), dtype=int)),))
    qs = [lax.reshape(lax.slice(qflat, (i,), (i + 1,)), ()) for i in range(_util.shape_of(qflat)[0])]
    if qd.kind == "f":
        ys = [_lerp_at(s, k, qi, qd, aval.dtype, weak_q) for qi in qs]
    else:  # an integral q (0 or 1): the element at (k-1)*q, in the data's dtype
        ys = [_element_at(s, k, qi) for qi in qs]
    ys = [_red._keep(y, aval.shape, axes, keepdims) for y in ys]
    if not _util.shape_of(qa):
        return numpy_result(ys[0])
    y_shape = _util.shape_of(ys[0])
    return lax.concatenate([lax.reshape(y, (1,) + y_shape) for y in ys], 0)


def _element_at(s, k, q):
    rshape = _util.shape_of(k)
    idx = lax.mul(lax.sub(k, _util.full(rshape, 1, _i64)), lax.broadcast_in_dim(q, rshape, ()))
    y = _gather_last(s, idx)
    if not _is_float(s):
        return y
    return lax.select(lax.le(k, _util.full(rshape, 0, _i64)), _util.full(rshape, np.nan, _util.aval_of(s).dtype), y)


def _lerp_at(s, k, q, qd, x_dtype, weak_q):
    """NumPy's linear quantile of each sorted slice of ``s`` over its first ``k`` (non-NaN)
    elements: virtual index ``(k-1)*q`` between ``floor`` and ``floor+1``, both clamped
    to ``k-1``, and ``_lerp``'s two-sided formula."""
    rshape = _util.shape_of(k)
    km1 = lax.sub(k, _util.full(rshape, 1, _i64))
    v = lax.mul(lax.convert_element_type(km1, qd), lax.broadcast_in_dim(q, rshape, ()))
    above = lax.ge(v, lax.convert_element_type(km1, qd))
    prev_f = lax.floor(v)
    prev = lax.select(above, km1, lax.convert_element_type(prev_f, _i64))
    nxt = lax.select(above, km1, lax.add(prev, _util.full(rshape, 1, _i64)))
    gamma = lax.sub(v, lax.select(above, _util.full(rshape, -1, qd), prev_f))
    lo, hi = _gather_last(s, prev), _gather_last(s, nxt)
    dt = x_dtype if weak_q else dtypes.promote(x_dtype, qd)
    diff = lax.convert_element_type(lax.sub(hi, lo), dt)
    t = lax.convert_element_type(gamma, dt)
    one_minus_t = lax.convert_element_type(lax.sub(_util.full(rshape, 1, qd), gamma), dt)
    low_side = lax.add(lax.convert_element_type(lo, dt), lax.mul(diff, t))
    high_side = lax.sub(lax.convert_element_type(hi, dt), lax.mul(diff, one_minus_t))
    y = lax.select(lax.ge(gamma, _util.full(rshape, 0.5, qd)), high_side, low_side)
    return lax.select(lax.le(k, _util.full(rshape, 0, _i64)), _util.full(rshape, np.nan, dt), y)


def _gather_last(s, idx):
    """``s[..., idx[...]]``: one element of each trailing slice (``idx`` clamped)."""
    shape = _util.shape_of(s)
    if len(shape) == 1:
        return take1d(s, idx)
    n = shape[-1]
    flat = lax.reshape(s, (int(np.prod(shape)),))
    base = lax.mul(_row_ids(shape[:-1]), _util.full(shape[:-1], n, _i64))
    clamped = lax.max(lax.min(idx, _util.full(shape[:-1], n - 1, _i64)), _util.full(shape[:-1], 0, _i64))
    return take1d(flat, lax.add(base, clamped))


def _row_ids(shape):
    """Row-major position of each element of ``shape`` (int64)."""
    return lax.reshape(lax.iota(_i64, (int(np.prod(shape)),), 0), shape)
