"""Sample statistics of ``jax.scipy.stats``: ``mode``, ``rankdata``, ``sem``.

All three work along one axis (``axis=None``: the flattened array) by sorting: ``mode``
and ``rankdata`` find the runs of equal values in the sorted data with cumulative sums
and a sort (no data-dependent shapes, so they trace and compile), ``sem`` is
``std(a, ddof) / sqrt(n)``. As JAX, only ``nan_policy='propagate'`` is implemented
('omit' raises NotImplementedError, 'raise' raises as SciPy on concrete NaN input is not
traceable): a NaN is a value unequal to every other (``mode``), or turns its whole
slice to NaN (``rankdata``, ``sem``)."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api._util import asarray, canonicalize_axis, check_arraylike, shape_of

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
    """``(mode, count)``: the most common value (the smallest among ties) and how often it occurs."""
    mode: Any
    count: Any


def _policy(fname, nan_policy):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{fname}: nan_policy must be 'propagate', 'omit' or 'raise', got {nan_policy!r}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"{fname}: nan_policy={nan_policy!r} is not implemented (as in JAX); "
                                  "use nan_policy='propagate'")


def _to_last(fname, a, axis):
    """``a`` with ``axis`` moved last (``axis=None``: flattened) and the axis used."""
    check_arraylike(fname, a)
    a = asarray(a, fname=fname)
    if axis is None:
        return fnp.ravel(a), None
    if not shape_of(a):
        a = fnp.reshape(a, (1,))
    axis = canonicalize_axis(axis, len(shape_of(a)), fname)
    return fnp.moveaxis(a, axis, -1), axis


def _runs(s):
    """For ``s`` sorted along the last axis, the runs of equal values (a NaN is a run of its
    own): (True where a run starts, each element's run start index, its run's last index).
    Cumulative sums and a sort, not a running maximum: ``jit`` compiles them in time
    independent of the length."""
    shape = shape_of(s)
    n = shape[-1]
    idx = fnp.broadcast_to(np.arange(n), shape)
    ones = fnp.ones(shape[:-1] + (1,), bool)
    new = fnp.concatenate([ones, s[..., 1:] != s[..., :-1]], axis=-1)
    last = fnp.concatenate([s[..., 1:] != s[..., :-1], ones], axis=-1)
    run = fnp.cumsum(new, axis=-1) - 1  # each element's run number
    starts = fnp.sort(fnp.where(new, idx, n), axis=-1)  # run r starts at starts[r]
    ends = fnp.sort(fnp.where(last, idx, n), axis=-1)
    return new, fnp.take_along_axis(starts, run, -1), fnp.take_along_axis(ends, run, -1)


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """``scipy.stats.mode``: the most common value along ``axis`` (the smallest of ties)
    and its count, as ``ModeResult(mode, count)``.

    >>> mode(np.array([3, 1, 3, 1, 2]))
    ModeResult(mode=Array(1), count=Array(2))
    """
    _policy("mode", nan_policy)
    x, ax = _to_last("mode", a, axis)
    n = shape_of(x)[-1]
    if n == 0:
        shape = shape_of(x)[:-1]
        res = ModeResult(fnp.full(shape, np.nan), fnp.zeros(shape, np.int64))
    else:
        s = fnp.sort(x, axis=-1)
        _, start, _ = _runs(s)
        running = fnp.broadcast_to(np.arange(n), shape_of(s)) - start + 1  # position within the run
        best = fnp.argmax(running, axis=-1)  # the first run to reach the largest count: the smallest value
        res = ModeResult(fnp.take_along_axis(s, best[..., None], -1)[..., 0],
                         fnp.max(running, axis=-1).astype(np.int64))
    if keepdims:
        where = ax if ax is not None else 0
        res = ModeResult(*(fnp.expand_dims(r, where) if ax is not None else fnp.reshape(r, (1,) * len(shape_of(a)))
                           for r in res))
    return res


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """``scipy.stats.rankdata``: ranks from 1, ties by ``method`` ('average', 'min',
    'max', 'dense' or 'ordinal'); along ``axis`` (``None``: of the flattened array). A
    slice holding a NaN is all NaN. Float64 ranks for every method (as JAX).

    >>> rankdata(np.array([10.0, 30.0, 20.0, 20.0]))
    Array([1. , 4. , 2.5, 2.5])
    """
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: unknown method {method!r}; use one of {_RANK_METHODS}")
    _policy("rankdata", nan_policy)
    x, ax = _to_last("rankdata", a, axis)
    order = fnp.argsort(x, axis=-1, stable=True)
    s = fnp.take_along_axis(x, order, -1)
    inv = fnp.argsort(order, axis=-1)  # the sorted position of each element
    if method == "ordinal":
        ranks = inv + 1
    else:
        new, start, last = _runs(s)
        if method == "dense":
            sorted_rank = fnp.cumsum(new, axis=-1)
        else:
            lo, hi = start + 1, last + 1
            sorted_rank = {"min": lo, "max": hi, "average": (lo + hi) / 2.0}[method]
        ranks = fnp.take_along_axis(sorted_rank, inv, -1)
    ranks = ranks.astype(np.float64)
    if fnp.result_type(x).kind in "fc":
        ranks = fnp.where(fnp.any(fnp.isnan(x), axis=-1, keepdims=True), np.nan, ranks)
    return fnp.moveaxis(ranks, -1, ax) if ax is not None else ranks


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """``scipy.stats.sem``: the standard error of the mean, ``std(a, ddof=ddof) / sqrt(n)``,
    along ``axis`` (``None``: all elements). Differentiable.

    >>> float(sem(np.array([1.0, 2.0, 3.0, 4.0])))
    0.6454972243679028
    """
    _policy("sem", nan_policy)
    check_arraylike("sem", a)
    a = asarray(a, fname="sem")
    if axis is None:
        a, axis = fnp.ravel(a), 0
    n = shape_of(a)[canonicalize_axis(axis, max(len(shape_of(a)), 1), "sem")] if shape_of(a) else 1
    return fnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / math.sqrt(n)
