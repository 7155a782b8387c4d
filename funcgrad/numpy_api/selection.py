"""funcgrad.numpy: selection and searching (nonzero and its ``size=`` form, partition,
lexsort, searchsorted, digitize, bincount).

Functions whose output shape depends on the data (``nonzero``, ``bincount``) run on
concrete values eagerly, and take JAX's static ``size=`` / ``length=`` under tracing;
without it they raise ``DataDependentShapeError`` naming the keyword. Everything else
is a composite of ``sort``, ``gather``, ``scatter`` and elementwise primitives, so it
traces, batches and lowers like any other function. Index results are int64 (NumPy's
``intp``).

>>> fnp.searchsorted(np.array([1., 2., 3.]), np.array([2.5, 0.]))
Array([2, 0])
"""
from __future__ import annotations

import math
import operator

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.trace import Tracer
from funcgrad.errors import DataDependentShapeError
from funcgrad.numpy_api import _util

__all__ = [
    "nonzero", "argwhere", "flatnonzero", "partition", "argpartition", "lexsort", "searchsorted",
    "digitize", "bincount",
]

_i64 = dtypes.int64


# --- helpers shared with sets.py and histograms.py ----------------------------------------
def arg(fname, a, name="a"):
    """``a`` as an ndarray or tracer of a supported dtype (the argument named in errors)."""
    if _util._uniform_dtype((a,)) is not None:
        return a
    if not (_util.is_arraylike(a) or isinstance(a, (list, tuple))):
        raise TypeError(f"{fname}: argument {name!r} of type {type(a).__name__} is not an array")
    return _util.asarray(a, fname=fname)


def concrete_or_none(x):
    """The NumPy value of ``x`` if it is known now (eagerly, also under eager ``grad``),
    else None."""
    if isinstance(x, Tracer):
        val = x.to_concrete_value()
        return None if val is None else np.asarray(val)
    return np.asarray(x)


def needs_size(fname, x, keyword="size"):
    """The error for a data-dependent output shape under tracing, as JAX words it."""
    return DataDependentShapeError(
        f"{fname}: the size of its output depends on the values of its input, which are traced "
        f"({x.aval.str_short()}) and only known when the program runs. Pass the static "
        f"{keyword}= argument to make {fname} traceable (the output is then padded or cut to "
        f"that length), or call it outside the transformed function."
    )


def static_size(fname, size, keyword="size"):
    if isinstance(size, Tracer):
        raise TypeError(f"{fname}: {keyword} must be a static Python int, not a traced value")
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(f"{fname}: {keyword} must be an int, got {type(size).__name__}") from None
    if size < 0:
        raise ValueError(f"{fname}: {keyword} must be non-negative, got {size}")
    return size


def numpy_result(out, scalar=True):
    """An eager 0-d result as NumPy gives it: a NumPy scalar (``scalar=True``, what
    reductions return) or a 0-d array (what ufuncs on 0-d arrays return)."""
    if scalar and type(out) is np.ndarray and out.ndim == 0:  # (0-d values stay values)
        return out[()]
    if not scalar and isinstance(out, np.generic):
        return np.asarray(out)
    return out


def const(value, dtype, shape=()):
    return _util.full(shape, value, dtype)


def lt_total(x, y):
    """``x < y`` in sort order: NaN is larger than every number (NumPy's and sort's order)."""
    if _util.aval_of(x).dtype.kind != "f":
        return lax.lt(x, y)
    return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))


def first_true(mask, size):
    """(positions, valid): the indices (int64) of the first ``size`` True entries of a 1-D
    bool ``mask``, in order, padded with 0, and which of the ``size`` slots are real."""
    n = _util.shape_of(mask)[0]
    idx = lax.iota(_i64, (n,), 0)
    pos = lax.sort([lax.bitwise_not(mask), idx], 0, num_keys=1)[1] if n else idx
    if size <= n:
        pos = lax.slice(pos, (0,), (size,))
    else:
        pos = lax.pad(pos, const(0, _i64), [(0, size - n, 0)])
    count = lax.reduce_sum(lax.convert_element_type(mask, _i64), (0,)) if n else const(0, _i64)
    valid = lax.lt(lax.iota(_i64, (size,), 0), lax.broadcast_in_dim(count, (size,), ()))
    return lax.select(valid, pos, const(0, _i64, (size,))), valid


def take1d(x, idx):
    """``x[idx]`` for a 1-D ``x`` and int64 ``idx`` of any shape, clamped into range."""
    return lax.gather(x, lax.reshape(idx, _util.shape_of(idx) + (1,)), mode="clip")


# --- nonzero, argwhere, flatnonzero ---------------------------------------------------------
def _fill_values(fname, fill_value, ndim):
    if fill_value is None:
        return [0] * ndim
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != ndim:
            raise ValueError(f"{fname}: fill_value is a sequence of {len(fill_value)} values; expected {ndim} "
                             "(one per dimension of the input)")
        return list(fill_value)
    if np.ndim(fill_value) != 0:
        raise ValueError(f"{fname}: fill_value must be a scalar or a tuple of one scalar per dimension")
    return [fill_value] * ndim


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one int64 array per dimension (NumPy's order).

    The number of results depends on the data, so under ``jit``/``vmap`` pass the static
    ``size=`` (JAX's keyword): the first ``size`` indices, padded with ``fill_value``
    (default 0; a scalar or one value per dimension).

    >>> fnp.nonzero(np.array([[0, 3], [4, 0]]))
    (Array([0, 1]), Array([1, 0]))
    """
    x = arg("nonzero", a)
    shape = _util.shape_of(x)
    if not shape:
        raise ValueError("nonzero: calling nonzero on 0d arrays is not allowed; use "
                         "fnp.atleast_1d(scalar).nonzero() instead")
    if size is None:
        val = concrete_or_none(x)
        if val is None:
            raise needs_size("nonzero", x)
        return np.nonzero(val)
    size = static_size("nonzero", size)
    fills = _fill_values("nonzero", fill_value, len(shape))
    mask = lax.reshape(_to_bool(x), (math.prod(shape),))
    flat, valid = first_true(mask, size)
    out = []
    for i, (d, fill) in enumerate(zip(shape, fills)):
        stride = math.prod(shape[i + 1:])
        if not (d and stride):  # an empty input: every slot is padding
            coord = flat
        else:
            coord = lax.div(flat, const(stride, _i64, (size,))) if stride != 1 else flat
            coord = lax.rem(coord, const(d, _i64, (size,)))
        fill = lax.convert_element_type(fill, _i64) if isinstance(fill, Tracer) else fill
        out.append(lax.select(valid, coord, lax.broadcast_in_dim(_util.asarray(fill, _i64), (size,), ())))
    return tuple(out)


def _to_bool(x):
    aval = _util.aval_of(x)
    return x if aval.dtype == dtypes.bool_ else lax.ne(x, const(0, aval.dtype, aval.shape))


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements as an ``(N, a.ndim)`` int64 array (``size=`` as in
    ``nonzero``).

    >>> fnp.argwhere(np.array([[0, 3], [4, 0]]))
    Array([[0, 1],
           [1, 0]])
    """
    x = arg("argwhere", a)
    if size is None:
        val = concrete_or_none(x)
        if val is None:
            raise needs_size("argwhere", x)
        return np.argwhere(val)
    shape = _util.shape_of(x)
    if not shape:  # NumPy: one (empty) row if the scalar is non-zero, else none
        return _util.full((static_size("argwhere", size), 0), 0, _i64)
    cols = nonzero(x, size=size, fill_value=fill_value)
    n = _util.shape_of(cols[0])[0]
    return lax.concatenate([lax.reshape(c, (n, 1)) for c in cols], 1)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements of ``ravel(a)`` (int64; ``size=`` as in ``nonzero``)."""
    x = arg("flatnonzero", a)
    if size is None:
        val = concrete_or_none(x)
        if val is None:
            raise needs_size("flatnonzero", x)
        return np.flatnonzero(val)
    return nonzero(lax.reshape(x, (math.prod(_util.shape_of(x)),)), size=size, fill_value=fill_value)[0]


# --- partition, argpartition, lexsort --------------------------------------------------------
def _partition_args(fname, a, kth, axis, kind, order):
    if order is not None:
        raise NotImplementedError(f"{fname}: order= (structured arrays) is not supported")
    if kind != "introselect":
        raise ValueError(f"{fname}: kind must be 'introselect', got {kind!r}")
    x = arg(fname, a)
    if axis is None:
        x, axis = lax.reshape(x, (math.prod(_util.shape_of(x)),)), 0
    shape = _util.shape_of(x)
    if not shape:
        raise _util.AxisError(axis, 0, fname)
    axis = _util.canonicalize_axis(axis, len(shape), fname)
    if isinstance(kth, Tracer):
        raise TypeError(f"{fname}: kth must be a static int or sequence of ints, not a traced value")
    n = shape[axis]
    for k in np.ravel(np.asarray(kth)):
        if np.asarray(k).dtype.kind not in "iu":
            raise TypeError(f"{fname}: kth must be an int or a sequence of ints, got {kth!r}")
        if not -n <= int(k) < n:
            raise ValueError(f"{fname}: kth(={int(k)}) out of bounds for an axis of size {n} (shape {shape})")
    return x, axis


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of ``a`` with the element at each ``kth`` position where a sort would put it,
    smaller ones before and larger ones after. funcgrad sorts the whole axis (a sort is a
    valid partition for every ``kth``), so the order on either side is sorted rather than
    NumPy's arbitrary one; derivatives follow the permutation.

    >>> fnp.partition(np.array([3., 4., 2., 1.]), 2)[2]
    Array(3.)
    """
    x, axis = _partition_args("partition", a, kth, axis, kind, order)
    return lax.sort([x], axis, num_keys=1)[0]


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices (int64) that partition ``a`` along ``axis`` (a stable argsort; see
    ``partition``)."""
    x, axis = _partition_args("argpartition", a, kth, axis, kind, order)
    idx = lax.iota(_i64, _util.shape_of(x), axis)
    return lax.sort([x, idx], axis, num_keys=1)[1]


def lexsort(keys, axis=-1):
    """Indices (int64) that sort by several keys: the *last* key is the primary one (a 2-D
    array's rows are the keys). Stable; NaNs last.

    >>> fnp.lexsort((np.array([1, 5, 1]), np.array([0, 0, -1])))
    Array([2, 0, 1])
    """
    if isinstance(keys, (np.ndarray, Tracer)):
        if _util.aval_of(keys).ndim == 0:
            raise TypeError("lexsort: keys must be a sequence of arrays or an array of at least 1 dimension")
        keys = [keys[i] for i in range(_util.shape_of(keys)[0])]
    elif not isinstance(keys, (list, tuple)):
        raise TypeError(f"lexsort: keys must be a sequence of arrays, got {type(keys).__name__}")
    if not keys:
        raise TypeError("lexsort: need a sequence of keys with len > 0")
    ks = [arg("lexsort", k, f"keys[{i}]") for i, k in enumerate(keys)]
    shapes = [_util.shape_of(k) for k in ks]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"lexsort: all keys need to be the same shape, got {shapes}")
    if not shapes[0]:
        return np.int64(0)  # NumPy: 0-d keys sort trivially
    axis = _util.canonicalize_axis(axis, len(shapes[0]), "lexsort")
    idx = lax.iota(_i64, shapes[0], axis)
    return lax.sort(ks[::-1] + [idx], axis, num_keys=len(ks))[-1]


# --- searchsorted, digitize ------------------------------------------------------------------
_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices (int64) where ``v`` would be inserted into the sorted 1-D ``a`` to keep it
    sorted: the first such place (``side='left'``) or the last (``'right'``). ``sorter``
    sorts an unsorted ``a``. ``method`` is JAX's: ``'compare_all'`` compares every pair
    (fast for short ``a``); the others run a binary search of ``ceil(log2(len(a)+1))``
    steps. NaNs sort last, as in NumPy.

    >>> fnp.searchsorted(np.array([1., 2., 2., 3.]), 2., side='right')
    Array(3)
    """
    x = arg("searchsorted", a)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in _METHODS:
        raise ValueError(f"searchsorted: method must be one of {_METHODS}, got {method!r}")
    if _util.aval_of(x).ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {_util.shape_of(x)}")
    _util.check_arraylike("searchsorted", v)
    if sorter is not None:
        s = arg("searchsorted", sorter, "sorter")
        if _util.shape_of(s) != _util.shape_of(x) or _util.aval_of(s).dtype.kind not in "iu":
            raise ValueError(f"searchsorted: sorter must be integers of a's shape {_util.shape_of(x)}, "
                             f"got {_util.aval_of(s).dtype}{list(_util.shape_of(s))}")
        x = take1d(x, lax.convert_element_type(s, _i64))
    x, v = _util.promote_dtypes(x, v)
    n, vshape = _util.shape_of(x)[0], _util.shape_of(v)
    if n == 0:
        return _util.full(vshape, 0, _i64)

    def goes_right(ai, vi):  # is the insertion point after ai?
        return lt_total(ai, vi) if side == "left" else lax.bitwise_not(lt_total(vi, ai))

    if method == "compare_all":
        nd = len(vshape)
        ab = lax.broadcast_in_dim(x, vshape + (n,), (nd,))
        vb = lax.broadcast_in_dim(v, vshape + (n,), tuple(range(nd)))
        return numpy_result(lax.reduce_sum(lax.convert_element_type(goes_right(ab, vb), _i64), (nd,)))
    lo, hi = const(0, _i64, vshape), const(n, _i64, vshape)
    one, two = const(1, _i64, vshape), const(2, _i64, vshape)
    for _ in range(n.bit_length()):
        active = lax.lt(lo, hi)
        mid = lax.div(lax.add(lo, hi), two)
        right = lax.bitwise_and(active, goes_right(take1d(x, mid), v))
        left = lax.bitwise_and(active, lax.bitwise_not(right))
        lo = lax.select(right, lax.add(mid, one), lo)
        hi = lax.select(left, mid, hi)
    return numpy_result(lo)


def digitize(x, bins, right=False, *, method=None):
    """Index (int64) of the bin of ``bins`` (monotonic, increasing or decreasing) each
    value of ``x`` falls in, as ``numpy.digitize``: ``bins[i-1] <= x < bins[i]``
    (``right=True``: ``bins[i-1] < x <= bins[i]``). Traced bins pick the direction from
    ``bins[-1] >= bins[0]``.

    >>> fnp.digitize(np.array([0.2, 6.4, 3.0]), np.array([0., 1., 2.5, 4.]))
    Array([1, 4, 3])
    """
    xs = arg("digitize", x, "x")
    b = arg("digitize", bins, "bins")
    if _util.aval_of(b).ndim != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {_util.shape_of(b)}")
    n = _util.shape_of(b)[0]
    if n == 0:
        return _util.full(_util.shape_of(xs), 0, _i64)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    bv = concrete_or_none(b)
    if bv is not None:
        d = np.diff(bv)
        if not (np.all(d >= 0) or np.all(d <= 0)):
            raise ValueError("digitize: bins must be monotonically increasing or decreasing")
    increasing = searchsorted(b, xs, side, **kw)
    if bv is not None and (n == 1 or bv[-1] >= bv[0]):
        return increasing
    decreasing = lax.sub(const(n, _i64, _util.shape_of(increasing)), searchsorted(lax.rev(b, (0,)), xs, side, **kw))
    if bv is not None:
        return numpy_result(decreasing)
    up = lax.ge(lax.slice(b, (n - 1,), (n,)), lax.slice(b, (0,), (1,)))
    up = lax.broadcast_in_dim(lax.reshape(up, ()), _util.shape_of(increasing), ())
    return numpy_result(lax.select(up, increasing, decreasing))


# --- bincount ----------------------------------------------------------------------------------
def bincount(x, weights=None, minlength=0, *, length=None):
    """Number of occurrences of each value 0, 1, ... of the non-negative ints ``x``
    (with ``weights``: their sum, in float64 as NumPy). The output length is
    ``max(x) + 1`` (at least ``minlength``), which depends on the data: under tracing
    pass JAX's static ``length=``; values ``>= length`` are then dropped and negative
    ones count as 0 (JAX's rule; concrete negative values raise, as in NumPy).

    >>> fnp.bincount(np.array([0, 1, 1, 3]))
    Array([1, 2, 0, 1])
    """
    xs = arg("bincount", x, "x")
    aval = _util.aval_of(xs)
    if aval.ndim != 1:
        raise ValueError(f"bincount: x must be 1-D, got shape {aval.shape}")
    if aval.dtype.kind not in "iub":
        raise TypeError(f"bincount: x must be integers, got {aval.dtype}")
    minlength = static_size("bincount", 0 if minlength is None else minlength, "minlength")
    val = concrete_or_none(xs)
    if val is not None and val.size and val.min() < 0:
        raise ValueError(f"bincount: x must be non-negative, got a minimum of {val.min()}")
    if length is None:
        if val is None:
            raise needs_size("bincount", xs, "length")
        length = max(int(val.max()) + 1 if val.size else 0, minlength)
    else:
        length = static_size("bincount", length, "length")
    n = aval.shape[0]
    if weights is None:
        w, dt = const(1, _i64, (n,)), _i64
    else:
        w = arg("bincount", weights, "weights")
        if _util.shape_of(w) != (n,):
            raise ValueError(f"bincount: weights of shape {_util.shape_of(w)} must have x's shape {(n,)}")
        if _util.aval_of(w).dtype.kind == "c":  # (the float64 cast would drop imag; NumPy raises too)
            raise TypeError(f"bincount: weights must be real, got {_util.aval_of(w).dtype} of shape {(n,)}")
        dt = dtypes.float64  # NumPy casts the weights to double
        w = lax.convert_element_type(w, dt)
    idx = lax.max(lax.convert_element_type(xs, _i64), const(0, _i64, (n,)))
    return lax.scatter(const(0, dt, (length,)), lax.reshape(idx, (n, 1)), w, kind="add", mode="drop")
