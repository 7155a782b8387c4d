"""funcgrad.numpy: reductions, statistics and sorting.

Every function is a composite of strict primitives (``funcgrad.core.lax_api``): it
checks its arguments, works out axes and dtypes from static metadata, and applies
``reduce_*`` / ``argmax`` / ``cumsum`` / ``sort`` plus elementwise primitives. Values
and dtypes follow NumPy 2, including its order of operations where that decides the
last bit (a float32 mean divides in float64 and rounds back, like NumPy's
``ret / rcount``; ``var`` is NumPy's two-pass algorithm).

>>> import funcgrad.numpy as fnp, numpy as np
>>> fnp.mean(np.arange(4, dtype=np.int32))     # ints average in float64
array(1.5)
Deviations from NumPy (by design; all static-shape friendly):

- ``out=`` is not supported (arrays are immutable); ``where=`` and ``initial=`` are
  not accepted.
- ``average`` with weights that sum to zero returns inf/nan instead of raising
  ``ZeroDivisionError`` (the check would need the values; JAX does the same).
- NumPy's RuntimeWarnings ("Mean of empty slice", "All-NaN slice") are not emitted
  when tracing; the results (nan) are the same.
- ``sort``/``argsort`` are always stable, whatever ``kind``/``stable`` say.
- ``quantile``/``percentile`` support ``method='linear'`` with a concrete ``q`` only.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from funcgrad import config
from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util

__all__ = [
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
    "all", "any", "cumsum", "cumprod", "average", "ptp", "count_nonzero", "nansum",
    "nanmean", "nanmax", "nanmin", "median", "sort", "argsort", "quantile", "percentile",
]

_f64 = dtypes.float64
_i64 = dtypes.int64


# --- helpers: arguments, axes, dtypes ------------------------------------------------
def _arg(fname, a):
    if _util._uniform_dtype((a,)) is not None:
        return a  # already an array or tracer of a supported dtype (the common case)
    _util.check_arraylike(fname, a)
    return _util.asarray(a, fname=fname)


def _no_out(fname, out):
    if out is not None:
        raise NotImplementedError(
            f"{fname}: out= is not supported (funcgrad arrays are immutable); use the return value"
        )


def _reduction_axes(fname, ndim, axis, scalar_axis_ok=False):
    """Sorted non-negative axes to reduce. NumPy's ufunc reductions (sum, max, any, ...)
    accept an integer axis 0 or -1 on a 0-d array and reduce nothing; mean/var/median
    do not, and raise AxisError."""
    if ndim == 0 and scalar_axis_ok and axis is not None and not isinstance(axis, (tuple, list)):
        _util.canonicalize_axis(axis, 1, fname)
        return ()
    return _util.canonicalize_axes(axis, ndim, fname)


def _kept_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _reduced_shape(shape, axes):
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _keep(y, shape, axes, keepdims):
    return lax.reshape(y, _kept_shape(shape, axes)) if keepdims else y


def _count(shape, axes) -> int:
    return math.prod(shape[i] for i in axes)


def _sum_dtype(dtype):
    """Accumulator dtype of sum/prod/cumsum: bool and int32 widen to the default int,
    uint32 to uint64 (NumPy's rule)."""
    return _i64 if dtype.kind in "bi" else dtypes.uint64 if dtype.kind == "u" else dtype


def _float_dtype(dtype):
    """Accumulator dtype of mean/var/std/median: ints and bools average in float64."""
    return dtype if dtype.kind in "fc" else _f64


def _user_dtype(fname, dtype, default=None):
    # (not ``dtype or default``: a numpy.dtype without fields is falsy)
    return default if dtype is None else dtypes.canonicalize(dtype, what=f"{fname} dtype")


def _convert(x, dtype):
    return lax.convert_element_type(x, dtype)


def _div_count(total, count):
    """``total / count`` computed like NumPy's ``ret / rcount`` (rcount is an intp):
    divide in float64, then cast back to ``total``'s dtype (truncating for ints)."""
    aval = _util.aval_of(total)
    wide = dtypes.complex128 if aval.dtype.kind == "c" else _f64
    if isinstance(count, (int, float)):
        count = _util.full(aval.shape, count, wide)
    else:
        count = _convert(count, wide)
    return _convert(lax.div(_convert(total, wide), count), aval.dtype)


def _zeros(shape, dtype):
    return _util.full(shape, 0, dtype)


def _isnan(x):
    return lax.ne(x, x)


def _to_bool(x):
    aval = _util.aval_of(x)
    if aval.dtype == dtypes.bool_:
        return x
    return lax.ne(x, _zeros(aval.shape, aval.dtype))


def _flatten(x):
    return lax.reshape(x, (math.prod(_util.shape_of(x)),))


def _single_axis(fname, x, axis):
    """(operand, axis) for functions taking one integer axis, where ``axis=None``
    flattens and a 0-d operand is treated as 1-d (argmax, cumsum, argsort)."""
    shape = _util.shape_of(x)
    if axis is None:
        return _flatten(x), 0
    if len(shape) == 0:
        _util.canonicalize_axis(axis, 1, fname)
        return lax.reshape(x, (1,)), 0
    return x, _util.canonicalize_axis(axis, len(shape), fname)


# --- sums and products -----------------------------------------------------------------
def _sum_like(fname, reduce, a, axis, dtype, out, keepdims, bool_fallback):
    x = _arg(fname, a)
    _no_out(fname, out)
    aval = _util.aval_of(x)
    axes = _reduction_axes(fname, aval.ndim, axis, scalar_axis_ok=True)
    dt = _user_dtype(fname, dtype, _sum_dtype(aval.dtype))
    if dt == dtypes.bool_:  # NumPy's add/multiply on bool are logical or/and
        return bool_fallback(x, axis=axis, keepdims=keepdims)
    if dt != aval.dtype or aval.weak_type:  # (convert_element_type is a no-op otherwise)
        x = _convert(x, dt)
    y = reduce(x, axes)
    return _keep(y, aval.shape, axes, keepdims)


def sum(a, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Sum over ``axis`` (int, tuple or None). Bools and int32 sum in int64, like NumPy.

    >>> fnp.sum(np.ones((2, 3)), axis=-1)
    Array([3., 3.])
    """
    return _sum_like("sum", lax.reduce_sum, a, axis, dtype, out, keepdims, any)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product over ``axis``; bools and int32 multiply in int64, like NumPy."""
    return _sum_like("prod", lax.reduce_prod, a, axis, dtype, out, keepdims, all)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """``sum`` treating NaN as zero."""
    x = _arg("nansum", a)
    return sum(_nan_to(x, 0), axis, dtype, out, keepdims)


def _nan_to(x, value):
    aval = _util.aval_of(x)
    if aval.dtype.kind not in "fc":  # (complex: nan in either part, as NumPy's isnan)
        return x
    return lax.select(_isnan(x), _util.full(aval.shape, value, aval.dtype), x)


def _cumulative(fname, scan, a, axis, dtype, out):
    x = _arg(fname, a)
    _no_out(fname, out)
    dt = _user_dtype(fname, dtype, _sum_dtype(_util.aval_of(x).dtype))
    if dt == dtypes.bool_:
        raise NotImplementedError(f"{fname}: dtype=bool is not supported; use an integer dtype")
    x, axis = _single_axis(fname, x, axis)
    return scan(_convert(x, dt), axis)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (``None``: over the flattened array)."""
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (``None``: over the flattened array)."""
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype, out)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of non-zero entries (an int64; NumPy 2 also returns ``numpy.int64``)."""
    x = _arg("count_nonzero", a)
    return sum(_convert(_to_bool(x), _i64), axis, keepdims=keepdims)


# --- mean, var, std, average -----------------------------------------------------------
def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean; ints and bools average in float64, float32 stays float32.

    >>> fnp.mean(np.array([[1., 2.], [3., 4.]]), axis=0)
    Array([2., 3.])
    """
    x = _arg("mean", a)
    _no_out("mean", out)
    aval = _util.aval_of(x)
    axes = _reduction_axes("mean", aval.ndim, axis)
    dt = _user_dtype("mean", dtype, _float_dtype(aval.dtype))
    total = lax.reduce_sum(_convert(x, dt), axes)
    return _keep(_div_count(total, _count(aval.shape, axes)), aval.shape, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Variance with ``ddof`` delta degrees of freedom (``correction`` is the Array API
    name for it), by NumPy's two-pass algorithm: the mean, then the sum of squared
    deviations from it."""
    x = _arg("var", a)
    _no_out("var", out)
    if correction is not None:
        ddof = correction
    aval = _util.aval_of(x)
    axes = _reduction_axes("var", aval.ndim, axis)
    dt = _user_dtype("var", dtype, _float_dtype(aval.dtype))
    n = _count(aval.shape, axes)
    mu = _div_count(lax.reduce_sum(_convert(x, dt), axes), n)
    mu = lax.broadcast_in_dim(lax.reshape(mu, _kept_shape(aval.shape, axes)), aval.shape, range(aval.ndim))
    dev_dt = dtypes.promote(aval.dtype, dt)  # NumPy subtracts arr - mean in this dtype
    dev = lax.sub(_convert(x, dev_dt), _convert(mu, dev_dt))
    if dev_dt.kind == "c":  # NumPy: |x - mean|**2, a real variance in the parts' dtype
        re, im = lax.real(dev), lax.imag(dev)
        dt = dtypes.real_dtype(dt)
        ssq = lax.reduce_sum(_convert(lax.add(lax.mul(re, re), lax.mul(im, im)), dt), axes)
    else:
        ssq = lax.reduce_sum(_convert(lax.mul(dev, dev), dt), axes)
    out_ = _div_count(ssq, builtins.max(n - ddof, 0))
    return _keep(out_, aval.shape, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))``."""
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, correction=correction))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average. ``weights`` has ``a``'s shape, or the shape of ``a`` along
    ``axis``; with ``returned=True`` also the sum of the weights (broadcast to the
    result's shape). Zero-sum weights give inf/nan rather than ZeroDivisionError."""
    x = _arg("average", a)
    aval = _util.aval_of(x)
    if axis is not None:  # keep the user's order: it says how weights' axes map to a's
        axis_list = axis if isinstance(axis, (tuple, list)) else (axis,)
        ordered = tuple(_util.canonicalize_axis(ax, aval.ndim, "average") for ax in axis_list)
        if len(set(ordered)) != len(ordered):
            raise ValueError("average: duplicate value in 'axis'")
        axes = tuple(sorted(ordered))
    else:
        ordered = axes = tuple(range(aval.ndim))
    if weights is None:
        avg = mean(x, axes, keepdims=keepdims)
        avg_aval = _util.aval_of(avg)
        scl = _util.full(avg_aval.shape, aval.size / builtins.max(math.prod(avg_aval.shape), 1), avg_aval.dtype)
        return (avg, scl) if returned else avg
    w = _arg("average", weights)
    w_aval = _util.aval_of(w)
    if w_aval.shape != aval.shape:
        if axis is None:
            raise TypeError("average: axis must be specified when shapes of a and weights differ")
        if w_aval.shape != tuple(aval.shape[ax] for ax in ordered):
            raise ValueError(
                f"average: shape of weights {w_aval.shape} must be consistent with shape of a "
                f"{aval.shape} along axis {axis}"
            )
        w = lax.transpose(w, tuple(int(i) for i in np.argsort(ordered)))  # static metadata only
        w = lax.reshape(w, tuple(d if i in axes else 1 for i, d in enumerate(aval.shape)))
    dt = dtypes.promote(aval.dtype, w_aval.dtype)  # (NumPy: integer data averages in float64 at
    if (aval.dtype.kind in "biu" and not config.JAX_PROMOTION[0]) or dt.kind in "biu":  # least; JAX's
        dt = dtypes.promote(aval.dtype, w_aval.dtype, _f64)  # rules: an integer result is a float)
    w = _convert(w, dt)
    scl = sum(w, axes, keepdims=keepdims)
    wx = lax.mul(_convert(x, dt), _util.broadcast_to(w, aval.shape))
    avg = _true_div(sum(wx, axes, keepdims=keepdims), scl)
    if returned:
        return avg, _util.broadcast_to(scl, _util.shape_of(avg))
    return avg


def _true_div(x, y):
    x, y = _util.promote_shapes("average", x, y)
    return lax.div(x, y)


# --- max, min, ptp, arg-reductions -------------------------------------------------------
def _extremum(fname, reduce, a, axis, out, keepdims):
    x = _arg(fname, a)
    _no_out(fname, out)
    aval = _util.aval_of(x)
    axes = _reduction_axes(fname, aval.ndim, axis, scalar_axis_ok=True)
    if _count(aval.shape, axes) == 0:
        raise ValueError(f"{fname}: zero-size array to reduction operation {fname} which has no identity")
    return _keep(reduce(x, axes), aval.shape, axes, keepdims)


def max(a, axis=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Largest element over ``axis``; NaN propagates. Empty reductions raise ValueError."""
    return _extremum("max", lax.reduce_max, a, axis, out, keepdims)


def min(a, axis=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Smallest element over ``axis``; NaN propagates. Empty reductions raise ValueError."""
    return _extremum("min", lax.reduce_min, a, axis, out, keepdims)


amax, amin = max, min


def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak: ``max - min`` over ``axis``."""
    if _util.aval_of(_arg("ptp", a)).dtype == dtypes.bool_:
        raise TypeError("ptp: boolean arrays cannot be subtracted (NumPy raises too); convert to int first")
    return lax.sub(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


def _nan_extremum(fname, reduce, fill, a, axis, out, keepdims):
    """max/min ignoring NaN: NaN becomes -inf/+inf, and all-NaN slices give NaN."""
    x = _arg(fname, a)
    aval = _util.aval_of(x)
    if aval.dtype.kind not in "fc":
        return _extremum(fname, reduce, x, axis, out, keepdims)
    y = _extremum(fname, reduce, _nan_to(x, fill), axis, out, keepdims)
    all_nan = _extremum(fname, lax.reduce_min, _isnan(x), axis, None, keepdims)
    return lax.select(all_nan, _util.full(_util.shape_of(y), np.nan, aval.dtype), y)


def nanmax(a, axis=None, out=None, keepdims=False):
    """``max`` ignoring NaNs (NaN only where a whole slice is NaN)."""
    return _nan_extremum("nanmax", lax.reduce_max, -np.inf, a, axis, out, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    """``min`` ignoring NaNs (NaN only where a whole slice is NaN)."""
    return _nan_extremum("nanmin", lax.reduce_min, np.inf, a, axis, out, keepdims)


def _arg_extremum(fname, prim_fn, a, axis, out, keepdims):
    x = _arg(fname, a)
    _no_out(fname, out)
    shape = _util.shape_of(x)
    flat, ax = _single_axis(fname, x, axis)
    if _util.shape_of(flat)[ax] == 0:
        raise ValueError(f"{fname}: attempt to get {fname} of an empty sequence")
    y = prim_fn(flat, ax, _i64)
    if keepdims:
        kept = (1,) * len(shape) if axis is None else _kept_shape(shape, (ax,))
        y = lax.reshape(y, kept)
    return y


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the first maximum along ``axis`` (``None``: in the flattened array);
    a NaN counts as the maximum, like NumPy. Returns int64."""
    return _arg_extremum("argmax", lax.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the first minimum along ``axis``; NaN counts as the minimum."""
    return _arg_extremum("argmin", lax.argmin, a, axis, out, keepdims)


# --- logical reductions ------------------------------------------------------------------
def _logical(fname, reduce, empty_value, a, axis, out, keepdims):
    x = _arg(fname, a)
    _no_out(fname, out)
    aval = _util.aval_of(x)
    axes = _reduction_axes(fname, aval.ndim, axis, scalar_axis_ok=True)
    if _count(aval.shape, axes) == 0:  # reduce_max/min have no identity; the answer is static
        y = _util.full(_reduced_shape(aval.shape, axes), empty_value, dtypes.bool_)
    else:
        y = reduce(_to_bool(x), axes)
    return _keep(y, aval.shape, axes, keepdims)


def all(a, axis=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """True where every element along ``axis`` is non-zero (NaN counts as non-zero)."""
    return _logical("all", lax.reduce_min, True, a, axis, out, keepdims)


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """True where some element along ``axis`` is non-zero (NaN counts as non-zero)."""
    return _logical("any", lax.reduce_max, False, a, axis, out, keepdims)


# --- NaN-aware mean ----------------------------------------------------------------------
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Mean of the non-NaN elements; NaN for slices with none."""
    x = _arg("nanmean", a)
    aval = _util.aval_of(x)
    if aval.dtype.kind not in "fc":
        return mean(x, axis, dtype, out, keepdims)
    _no_out("nanmean", out)
    dt = _user_dtype("nanmean", dtype)
    if dt is not None and dt.kind not in "fc":
        raise TypeError("nanmean: if a is inexact, then dtype must be inexact")
    mask = _isnan(x)
    total = sum(_nan_to(x, 0), axis, dt, None, keepdims)
    cnt = sum(lax.bitwise_not(mask), axis, _i64, None, keepdims)
    return _div_count(total, cnt)


# --- sorting and order statistics ----------------------------------------------------------
def _check_sort_args(fname, kind, order):
    if order is not None:
        raise NotImplementedError(f"{fname}: order= (structured arrays) is not supported")
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"{fname}: sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """Sorted copy along ``axis`` (``None``: flattened); NaNs last. Always stable.
    ``descending=True`` (the array API's and JAX's keyword): the reverse, NaNs first."""
    _check_sort_args("sort", kind, order)
    x = _arg("sort", a)
    if axis is None:
        x, axis = _flatten(x), 0
    else:
        axis = _util.canonicalize_axis(axis, _util.aval_of(x).ndim, "sort")
    out = lax.sort([x], axis, num_keys=1)[0]
    return lax.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """Indices (int64) that sort ``a`` along ``axis``; stable, NaNs last.

    ``descending=True`` sorts from largest to smallest (NaNs first), still stable: equal
    elements keep their order.

    >>> fnp.argsort(np.array([3., 1., 2.]))
    Array([1, 2, 0])
    """
    _check_sort_args("argsort", kind, order)
    x = _arg("argsort", a)
    x, axis = _single_axis("argsort", x, axis)
    if descending:  # stable: sort the reversed array ascending, then map the positions back
        n = _util.shape_of(x)[axis]
        rev = argsort(lax.rev(x, (axis,)), axis)
        return lax.sub(_util.full(_util.shape_of(x), n - 1, _i64), lax.rev(rev, (axis,)))
    idx = lax.iota(_i64, _util.shape_of(x), axis)
    return lax.sort([x, idx], axis, num_keys=1)[1]


def _sorted_last(x, axes):
    """``x`` with the reduced ``axes`` merged into one sorted trailing axis."""
    aval = _util.aval_of(x)
    keep = [i for i in range(aval.ndim) if i not in axes]
    xt = lax.transpose(x, keep + list(axes))
    xt = lax.reshape(xt, _reduced_shape(aval.shape, axes) + (_count(aval.shape, axes),))
    return lax.sort([xt], -1, num_keys=1)[0] if aval.ndim else xt


def _take_last(x, start, stop):
    shape = _util.shape_of(x)
    return lax.slice(x, (0,) * (len(shape) - 1) + (start,), shape[:-1] + (stop,))


def _nan_if_any_nan(x_sorted, y):
    """NaN sorts last: where the last element is NaN the slice had one, and so is y."""
    shape = _util.shape_of(x_sorted)
    last = lax.reshape(_take_last(x_sorted, shape[-1] - 1, shape[-1]), shape[:-1])
    y_aval = _util.aval_of(y)
    return lax.select(_isnan(last), _util.full(y_aval.shape, np.nan, y_aval.dtype), y)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over ``axis`` (int, tuple or None): the middle element of the sorted
    slice, or the mean of the middle two; NaN if the slice holds a NaN. Ints -> float64."""
    x = _arg("median", a)
    _no_out("median", out)
    aval = _util.aval_of(x)
    axes = _reduction_axes("median", aval.ndim, axis)
    dt = _float_dtype(aval.dtype)
    n = _count(aval.shape, axes)
    out_shape = _reduced_shape(aval.shape, axes)
    if n == 0:
        y = _util.full(out_shape, np.nan, dt)
    else:
        s = _sorted_last(x, axes)
        lo = (n - 1) // 2  # the middle element, or the left one of the middle pair
        mid = _convert(_take_last(s, lo, lo + 2 - n % 2), dt)
        y = _div_count(lax.reduce_sum(mid, (len(out_shape),)), 2 - n % 2)  # NumPy: mean of the middle
        if aval.dtype.kind == "f":
            y = _nan_if_any_nan(s, y)
    return _keep(y, aval.shape, axes, keepdims)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """``q``-th quantile(s) over ``axis`` by linear interpolation between the sorted
    values (NumPy's default ``method='linear'``). ``q`` must be concrete (not traced):
    it decides which sorted positions are read. The dimensions of ``q`` come first in
    the result, like NumPy."""
    return _quantile("quantile", a, q, axis, out, method, keepdims, scale=1.0)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """``q``-th percentile(s): ``quantile(a, q / 100, ...)``."""
    return _quantile("percentile", a, q, axis, out, method, keepdims, scale=100.0)


def _quantile(fname, a, q, axis, out, method, keepdims, scale):
    x = _arg(fname, a)
    _no_out(fname, out)
    if method != "linear":
        raise NotImplementedError(f"{fname}: only method='linear' is supported, got {method!r}")
    if _util.is_tracer(q):
        raise TypeError(
            f"{fname}: q must be concrete (a Python number or NumPy array), not a traced value; "
            "it decides which sorted elements are read"
        )
    aval = _util.aval_of(x)
    if aval.dtype == dtypes.bool_:
        raise TypeError(f"{fname}: boolean arrays are not supported (NumPy cannot subtract booleans)")
    if aval.dtype.kind == "c":  # NumPy: "a must be an array of real numbers" (no order to interpolate in)
        raise TypeError(f"{fname}: a must be an array of real numbers, got {aval.dtype.name} of shape {aval.shape}")
    # Everything about q is static metadata, computed with NumPy as NumPy does:
    # virtual index (n-1)*q, neighbours floor/floor+1 clamped, weight gamma = frac.
    weak_q = type(q) in (int, float)  # a Python q keeps a float32 result float32
    q_arr = np.asarray(q)
    if scale != 1:
        q_arr = np.true_divide(q_arr, scale)
    if q_arr.dtype.kind not in "biuf" or not bool(np.all((q_arr >= 0) & (q_arr <= 1))):
        raise ValueError(f"{fname}: quantiles must be in the range [0, {scale:g}]")
    if q_arr.ndim > 2:
        raise ValueError(f"{fname}: q must be a scalar or 1d")
    axes = _reduction_axes(fname, aval.ndim, axis)
    n = _count(aval.shape, axes)
    if n == 0:
        raise IndexError(f"{fname}: cannot take a quantile over an empty axis")
    s = _sorted_last(x, axes)
    virtual = np.asarray((n - 1) * q_arr)
    ys = [_quantile_at(s, v, n, aval.dtype, virtual.dtype, weak_q) for v in virtual.ravel()]
    if aval.dtype.kind == "f":
        ys = [_nan_if_any_nan(s, y) for y in ys]
    ys = [_keep(y, aval.shape, axes, keepdims) for y in ys]
    if q_arr.ndim == 0:
        return ys[0]
    y_shape = _util.shape_of(ys[0])
    stacked = lax.concatenate([lax.reshape(y, (1,) + y_shape) for y in ys], 0)
    return lax.reshape(stacked, q_arr.shape + y_shape)


def _element(s, i):
    shape = _util.shape_of(s)
    return lax.reshape(_take_last(s, i, i + 1), shape[:-1])


def _quantile_at(s, v, n, x_dtype, v_dtype, weak_q):
    """The sorted slice ``s`` read at static virtual index ``v`` (NumPy's ``_lerp``)."""
    if v_dtype.kind in "iu":  # integral q: no interpolation, the result keeps x's dtype
        return _element(s, int(v))
    if v >= n - 1:
        prev_i, next_i, prev_for_gamma = n - 1, n - 1, -1  # NumPy indexes these with -1
    elif v < 0:
        prev_i = next_i = prev_for_gamma = 0
    else:
        prev_i = prev_for_gamma = int(np.floor(v))
        next_i = prev_i + 1
    gamma = np.asarray(v - prev_for_gamma, dtype=v_dtype)
    if weak_q:  # a Python-float weight: float32 data stays float32
        dt = _float_dtype(x_dtype)
        t, one_minus_t = float(gamma), 1 - float(gamma)
    else:
        dt = dtypes.promote(x_dtype, gamma.dtype)
        dt = _float_dtype(dt)
        t, one_minus_t = gamma, np.asarray(1 - gamma, dtype=gamma.dtype)
    lo, hi = _element(s, prev_i), _element(s, next_i)
    shape = _util.shape_of(lo)
    diff = _convert(lax.sub(hi, lo), dt)  # NumPy subtracts in the data's dtype
    if gamma >= 0.5:
        return lax.sub(_convert(hi, dt), lax.mul(diff, _util.full(shape, one_minus_t, dt)))
    return lax.add(_convert(lo, dt), lax.mul(diff, _util.full(shape, t, dt)))
