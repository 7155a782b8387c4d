"""funcgrad.numpy: histograms (``histogram``, ``histogram_bin_edges``, ``histogram2d``,
``histogramdd``).

The number of bins is static (an int, or an edges array of static length), so all of
these trace: with ``range=None`` the edges run from the traced minimum to maximum
(NumPy's ``linspace`` in NumPy's dtype), and each value's bin is a ``searchsorted``
on the edges (``edges[i] <= x < edges[i+1]``, the last bin closed, values outside or
NaN dropped), counted by a scatter-add. A string ``bins`` (``'auto'``, ``'fd'``, ...)
picks the number of bins from the data, so it needs concrete input (else
``DataDependentShapeError``). Counts are int64 (the weights' dtype with ``weights``;
``histogramdd`` is always float64, as NumPy); derivatives flow to the weights and,
through ``range=None``, to the edges.

>>> fnp.histogram(np.array([1., 2., 1.]), bins=2)
(Array([2, 1]), Array([1. , 1.5, 2. ]))
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util, creation
from funcgrad.numpy_api.selection import arg, concrete_or_none, needs_size, searchsorted

__all__ = ["histogram", "histogram_bin_edges", "histogram2d", "histogramdd"]

_i64, _f64 = dtypes.int64, dtypes.float64


def _scalar(x, i):
    n = _util.shape_of(x)[0]
    return lax.reshape(lax.slice(x, (i % n,), (i % n + 1,)), ())


def _outer_edges(fname, a, rng):
    """(first, last) edge: ``range``, or the data's min and max widened by 0.5 when
    equal (NumPy's ``_get_outer_edges``). Concrete values are NumPy scalars, as NumPy's."""
    if rng is not None:
        try:
            first, last = rng
        except (TypeError, ValueError):
            raise ValueError(f"{fname}: range must be a pair (min, max), got {rng!r}") from None
        first, last = (v if _util.is_tracer(v) else v + 0.0 for v in (first, last))
        if not (_util.is_tracer(first) or _util.is_tracer(last)):
            if first > last:
                raise ValueError(f"{fname}: max must be larger than min in range parameter, got {rng!r}")
            if not (np.isfinite(first) and np.isfinite(last)):
                raise ValueError(f"{fname}: supplied range of [{first}, {last}] is not finite")
        return first, last
    if _util.aval_of(a).size == 0:
        return 0, 1
    val = concrete_or_none(a)
    if val is not None:
        first, last = val.min(), val.max()
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"{fname}: autodetected range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        if not _util.is_tracer(a):
            return first, last
    # A traced a (also under eager grad, where its value is known): the edges follow it.
    flat = lax.reshape(a, (_util.aval_of(a).size,))
    first, last = lax.reduce_min(flat, (0,)), lax.reduce_max(flat, (0,))
    if _util.aval_of(first).dtype.kind != "f":
        first, last = (lax.convert_element_type(v, _f64) for v in (first, last))
    dt = _util.aval_of(first).dtype
    same = lax.eq(first, last)
    half = _util.full((), 0.5, dt)
    return lax.select(same, lax.sub(first, half), first), lax.select(same, lax.add(last, half), last)


def _edges(fname, a, bins, rng, weights=None, linspace_dtype=True):
    """The bin edges for the values ``a``: an int count (uniform edges), an explicit
    edges array, or a string estimator (concrete data only)."""
    if isinstance(bins, str):
        val = concrete_or_none(a)
        if val is None:
            raise needs_size(fname, a, "bins (an int or an edges array)")
        w = None if weights is None else concrete_or_none(weights)
        return np.histogram_bin_edges(val, bins, rng, w)
    if _util.is_tracer(bins) or np.ndim(bins) > 0:
        e = arg(fname, bins, "bins")
        if _util.aval_of(e).ndim != 1:
            raise ValueError(f"{fname}: bins must be 1d, when an array (got shape {_util.shape_of(e)})")
        val = concrete_or_none(e)
        if val is not None and np.any(val[:-1] > val[1:]):
            raise ValueError(f"{fname}: bins must increase monotonically, when an array")
        return e
    try:
        n = operator.index(bins)
    except TypeError:
        raise TypeError(f"{fname}: bins must be an int, an edges array or a string, got {bins!r}") from None
    if n < 1:
        raise ValueError(f"{fname}: bins must be positive, when an integer (got {n})")
    first, last = _outer_edges(fname, a, rng)
    if not linspace_dtype:  # histogramdd: NumPy's linspace picks the dtype from the edges
        return creation.linspace(first, last, n + 1)
    a_dt = _util.aval_of(a).dtype
    edge_dts = [_util.aval_of(v).dtype if _util.is_tracer(v) else np.asarray(v).dtype for v in (first, last)]
    weak = [type(v) in (int, float) for v in (first, last)]
    bin_type = dtypes.promote(*[d for d, w in zip(edge_dts, weak) if not w], a_dt) if not all(weak) else a_dt
    if bin_type.kind != "f":
        bin_type = np.result_type(bin_type, float)
    return creation.linspace(first, last, n + 1, dtype=bin_type)


def _bin_index(x, edges):
    """Bin of each value (int64): ``searchsorted(edges, x, 'right') - 1``, the last edge
    in the last bin, and ``-1`` (dropped by the scatter) outside the edges or NaN."""
    m = _util.shape_of(edges)[0]
    shape = _util.shape_of(x)
    idx = lax.sub(searchsorted(edges, x, "right"), _util.full(shape, 1, _i64))
    last = lax.broadcast_in_dim(_scalar(edges, -1), shape, ())
    x = lax.convert_element_type(x, _util.aval_of(last).dtype) if _util.aval_of(x).dtype != _util.aval_of(last).dtype \
        else x
    idx = lax.select(lax.eq(x, last), _util.full(shape, m - 2, _i64), idx)
    inside = lax.bitwise_and(lax.ge(idx, _util.full(shape, 0, _i64)), lax.lt(idx, _util.full(shape, m - 1, _i64)))
    return lax.select(inside, idx, _util.full(shape, -1, _i64))


def _flat_weights(fname, weights, shape):
    w = arg(fname, weights, "weights")
    if _util.shape_of(w) != shape:
        raise ValueError(f"{fname}: weights should have the same shape as a: {_util.shape_of(w)} != {shape}")
    return lax.reshape(w, (math.prod(shape),))


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    """The edges ``histogram`` would use (see the module docstring).

    >>> fnp.histogram_bin_edges(np.array([0., 1., 2.]), bins=2)
    Array([0., 1., 2.])
    """
    x = arg("histogram_bin_edges", a)
    return _edges("histogram_bin_edges", x, bins, range, weights)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 - NumPy's name
    """``(counts, edges)`` of the values of ``a`` (flattened) in ``bins`` bins over
    ``range``; with ``weights`` the counts are sums of weights, with ``density`` the
    counts are normalised to integrate to 1 (float64).

    >>> fnp.histogram(np.array([0., 1., 1., 3.]), bins=3, range=(0, 3))[0]
    Array([1, 2, 1])
    """
    x = arg("histogram", a)
    edges = _edges("histogram", x, bins, range, weights)
    flat = lax.reshape(x, (_util.aval_of(x).size,))
    nb = _util.shape_of(edges)[0] - 1
    n = _util.shape_of(flat)[0]
    if weights is None:
        w = _util.full((n,), 1, _i64)
    else:
        w = _flat_weights("histogram", weights, _util.shape_of(x))
    idx = _bin_index(flat, edges)
    counts = lax.scatter(_util.full((nb,), 0, _util.aval_of(w).dtype), lax.reshape(idx, (n, 1)), w, kind="add",
                         mode="drop")
    if density:
        widths = lax.convert_element_type(lax.sub(lax.slice(edges, (1,), (nb + 1,)), lax.slice(edges, (0,), (nb,))),
                                          _f64)
        total = lax.convert_element_type(lax.reduce_sum(counts, (0,)), _f64)
        counts = lax.div(lax.div(lax.convert_element_type(counts, _f64), widths),
                         lax.broadcast_in_dim(total, (nb,), ()))
    return counts, edges


def _sample_columns(sample):
    """NumPy's reading of ``sample``: an (N, D) array, a 1-D array (D = 1), or a
    sequence of D arrays of N values."""
    if isinstance(sample, (list, tuple)):
        cols = [arg("histogramdd", s, f"sample[{i}]") for i, s in enumerate(sample)]
        cols = [lax.reshape(c, (_util.aval_of(c).size,)) for c in _util.promote_dtypes(*cols)]
        if len({_util.shape_of(c) for c in cols}) > 1:
            raise ValueError(f"histogramdd: the arrays of sample must have one length, got "
                             f"{[_util.shape_of(c) for c in cols]}")
        return cols
    s = arg("histogramdd", sample, "sample")
    shape = _util.shape_of(s)
    if len(shape) == 1:
        return [s]
    if len(shape) != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), 1-D, or a sequence of D arrays; got shape {shape}")
    return [lax.reshape(lax.slice(s, (0, j), (shape[0], j + 1)), (shape[0],)) for j in range(shape[1])]


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002 - NumPy's name
    """``(counts, [edges per dimension])`` of D-dimensional samples; ``bins`` is an int,
    a sequence of ints or edges arrays (one per dimension), ``range`` a sequence of
    ``(min, max)`` or None per dimension. Counts are float64, as NumPy's.

    >>> fnp.histogramdd(np.array([[0., 0.], [1., 1.], [1., 0.]]), bins=2)[0]
    Array([[1., 0.],
           [1., 1.]])
    """
    cols = _sample_columns(sample)
    d = len(cols)
    n = _util.shape_of(cols[0])[0] if cols else 0
    if isinstance(bins, (list, tuple)) or (np.ndim(bins) > 0 and not isinstance(bins, str)):
        if len(bins) != d:
            raise ValueError(f"histogramdd: the dimension of bins ({len(bins)}) must be equal to the dimension "
                             f"of the sample ({d})")
        bins = list(bins)
    else:
        bins = [bins] * d
    if range is None:
        range = [None] * d  # noqa: A001
    elif len(range) != d:
        raise ValueError(f"histogramdd: range must have one (min, max) or None per dimension ({d}), got {range!r}")
    edges = [_edges("histogramdd", c, b, r, linspace_dtype=False) for c, b, r in zip(cols, bins, range)]
    nbs = [_util.shape_of(e)[0] - 1 for e in edges]
    flat = _util.full((n,), 0, _i64)
    ok = _util.full((n,), True, dtypes.bool_)
    for c, e, nb in zip(cols, edges, nbs):
        idx = _bin_index(c, e)
        ok = lax.bitwise_and(ok, lax.ge(idx, _util.full((n,), 0, _i64)))
        flat = lax.add(lax.mul(flat, _util.full((n,), nb, _i64)), idx)
    flat = lax.select(ok, flat, _util.full((n,), -1, _i64))
    w = _util.full((n,), 1, _f64) if weights is None else \
        lax.convert_element_type(_flat_weights("histogramdd", weights, (n,)), _f64)
    total = math.prod(nbs)
    hist = lax.scatter(_util.full((total,), 0, _f64), lax.reshape(flat, (n, 1)), w, kind="add", mode="drop")
    hist = lax.reshape(hist, tuple(nbs))
    if density:
        s = lax.reduce_sum(hist, tuple(builtins.range(d)))
        for i, (e, nb) in enumerate(zip(edges, nbs)):
            width = lax.convert_element_type(lax.sub(lax.slice(e, (1,), (nb + 1,)), lax.slice(e, (0,), (nb,))), _f64)
            hist = lax.div(hist, lax.broadcast_in_dim(width, tuple(nbs), (i,)))
        hist = lax.div(hist, lax.broadcast_in_dim(s, tuple(nbs), ()))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002 - NumPy's name
    """``(counts, xedges, yedges)``: ``histogramdd`` of the pairs ``(x[i], y[i])``;
    ``bins`` is an int, a pair, or one edges array for both.

    >>> fnp.histogram2d(np.array([0., 1.]), np.array([0., 1.]), bins=2)[0]
    Array([[1., 0.],
           [0., 1.]])
    """
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
