"""funcgrad.numpy: unique values and set operations (``unique`` and the Array API's
``unique_all``/``unique_counts``/``unique_inverse``/``unique_values``, ``isin``,
``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``).

The number of results depends on the data. Eagerly (also under eager ``grad``) the
values are known and the result has NumPy's length; under ``jit``/``vmap`` pass JAX's
static ``size=``: the first ``size`` results, padded with ``fill_value`` (default: the
smallest result, as JAX; padded indices and counts are 0). Without it tracing raises
``DataDependentShapeError``. Each function is one sort plus elementwise work, gathers
and a compaction (a sort on a keep-mask), so derivatives flow to the selected values.
Results are sorted (NumPy 2's ``unique_values`` leaves the order unspecified).

>>> fnp.unique(np.array([3, 1, 3, 2]))
Array([1, 2, 3])
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util
from funcgrad.numpy_api.selection import (
    arg,
    concrete_or_none,
    first_true,
    needs_size,
    numpy_result,
    searchsorted,
    static_size,
    take1d,
)

__all__ = [
    "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values", "isin", "intersect1d",
    "union1d", "setdiff1d", "setxor1d",
]

_i64 = dtypes.int64


class UniqueAllResult(NamedTuple):
    values: np.ndarray
    indices: np.ndarray
    inverse_indices: np.ndarray
    counts: np.ndarray


class UniqueCountsResult(NamedTuple):
    values: np.ndarray
    counts: np.ndarray


class UniqueInverseResult(NamedTuple):
    values: np.ndarray
    inverse_indices: np.ndarray


# --- helpers ---------------------------------------------------------------------------------
def _flat(x):
    return lax.reshape(x, (math.prod(_util.shape_of(x)),))


def _neq_prev(s, equal_nan):
    """For a sorted 1-D ``s``: True where ``s[i]`` starts a new run (``s[0]`` always)."""
    n = _util.shape_of(s)[0]
    if n == 0:
        return _util.full((0,), True, dtypes.bool_)
    a, b = lax.slice(s, (1,), (n,)), lax.slice(s, (0,), (n - 1,))
    new = lax.ne(a, b)
    if equal_nan and _util.aval_of(s).dtype.kind == "f":  # two NaNs are one value
        new = lax.bitwise_and(new, lax.bitwise_not(lax.bitwise_and(lax.ne(a, a), lax.ne(b, b))))
    return lax.concatenate([_util.full((1,), True, dtypes.bool_), new], 0)


def _sort_with_index(x):
    n = _util.shape_of(x)[0]
    if n == 0:
        return x, lax.iota(_i64, (0,), 0)
    s, perm = lax.sort([x, lax.iota(_i64, (n,), 0)], 0, num_keys=1)
    return s, perm


def _compact(values, keep, size, fill_value):
    """The first ``size`` entries of ``values`` where ``keep`` (order kept), padded with
    ``fill_value`` (default: the first kept value, JAX's "smallest result" for sorted
    values); also the positions read and which slots are real."""
    pos, valid = first_true(keep, size)
    dtype = _util.aval_of(values).dtype
    out = take1d(values, pos) if _util.shape_of(values)[0] else _util.full((size,), 0, dtype)
    if fill_value is None:
        if not size:
            return out, pos, valid
        fill = lax.reshape(lax.slice(out, (0,), (1,)), ())
    else:
        fill = lax.convert_element_type(fill_value if _util.is_tracer(fill_value) else
                                        _util.asarray(fill_value, fname="fill_value"), dtype)
        if _util.aval_of(fill).ndim:
            raise ValueError(f"fill_value must be a scalar, got shape {_util.shape_of(fill)}")
    return lax.select(valid, out, lax.broadcast_in_dim(fill, (size,), ())), pos, valid


def _out_size(fname, size, x, concrete_len):
    """``size`` if given; else the concrete result length (``concrete_len(value)``)."""
    if size is not None:
        return static_size(fname, size)
    vals = [concrete_or_none(v) for v in x]
    if any(v is None for v in vals):
        raise needs_size(fname, next(v for v, c in zip(x, vals) if c is None))
    return concrete_len(*vals)


# --- unique ------------------------------------------------------------------------------------
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None, sorted=True):  # noqa: A002 - NumPy's name
    """The sorted unique elements of ``ar`` (flattened, or the unique slices along
    ``axis``), and optionally the index of each one's first occurrence, the inverse
    (``ar``'s shape for ``axis=None``, as NumPy 2) and the counts. ``equal_nan`` makes
    all NaNs one value. ``size``/``fill_value`` as in the module docstring.

    >>> vals, inv = fnp.unique(np.array([2., 1., 2.]), return_inverse=True)
    >>> vals, inv
    (Array([1., 2.]), Array([1, 0, 1]))
    """
    x = arg("unique", ar, "ar")
    if axis is not None:
        axis = _util.canonicalize_axis(axis, _util.aval_of(x).ndim, "unique")

    def count(v):  # (before any staged op on x: make_jaxpr stages even constants)
        if axis is None:
            return np.unique(v, equal_nan=equal_nan).size
        return np.unique(v, axis=axis).shape[axis] if v.shape[axis] else 0

    size = _out_size("unique", size, (x,), count)
    if axis is not None:
        return _unique_axis(x, return_index, return_inverse, return_counts, axis, size, fill_value)
    flat = _flat(x)
    n = _util.shape_of(flat)[0]
    s, perm = _sort_with_index(flat)
    new = _neq_prev(s, equal_nan)
    vals, pos, valid = _compact(s, new, size, fill_value)
    out = [vals]
    if return_index:
        out.append(lax.select(valid, take1d(perm, pos), _util.full((size,), 0, _i64)) if n else pos)
    group = lax.sub(lax.cumsum(lax.convert_element_type(new, _i64), 0), _util.full((n,), 1, _i64))
    if return_inverse:  # group of each sorted element, sent back to its original position
        inv = lax.scatter(_util.full((n,), 0, _i64), lax.reshape(perm, (n, 1)), group, kind="set", mode="drop")
        out.append(lax.reshape(inv, _util.shape_of(x)))
    if return_counts:
        ones = _util.full((n,), 1, _i64)
        out.append(lax.scatter(_util.full((size,), 0, _i64), lax.reshape(group, (n, 1)), ones, kind="add",
                               mode="drop"))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_axis(x, return_index, return_inverse, return_counts, axis, size, fill_value):
    """Unique slices along ``axis``: the slices flattened to rows, sorted lexicographically
    (one sort key per column), and a row starts a new value where any column changes."""
    shape = _util.shape_of(x)
    moved = lax.transpose(x, [axis] + [d for d in range(len(shape)) if d != axis])
    n = shape[axis]
    rest = tuple(d for i, d in enumerate(shape) if i != axis)
    m = math.prod(rest)
    rows = lax.reshape(moved, (n, m))
    cols = [lax.reshape(lax.slice(rows, (0, j), (n, j + 1)), (n,)) for j in range(m)]
    idx = lax.iota(_i64, (n,), 0)
    *scols, perm = lax.sort(cols + [idx], 0, num_keys=m) if m and n else (cols + [idx])
    new = _util.full((n,), True, dtypes.bool_)
    if n and m:
        new = _neq_prev(scols[0], False)
        for c in scols[1:]:
            new = lax.bitwise_or(new, _neq_prev(c, False))
    elif n:
        new = lax.eq(idx, _util.full((n,), 0, _i64))  # zero-width rows are all equal
    pos, valid = first_true(new, size)
    rows_at = take1d(perm, pos) if n else pos
    picked = lax.gather(rows, lax.reshape(rows_at, (size, 1)), mode="clip") if n else \
        _util.full((size, m), 0, _util.aval_of(x).dtype)
    if fill_value is not None:
        fill = lax.convert_element_type(_util.asarray(fill_value, fname="unique"), _util.aval_of(x).dtype)
        picked = lax.select(lax.broadcast_in_dim(valid, (size, m), (0,)), picked,
                            lax.broadcast_in_dim(fill, (size, m), ()))
    vals = lax.reshape(picked, (size,) + rest)
    order = list(range(1, len(shape)))
    vals = lax.transpose(vals, order[:axis] + [0] + order[axis:])
    out = [vals]
    if return_index:
        out.append(lax.select(valid, rows_at, _util.full((size,), 0, _i64)))
    group = lax.sub(lax.cumsum(lax.convert_element_type(new, _i64), 0), _util.full((n,), 1, _i64))
    if return_inverse:
        out.append(lax.scatter(_util.full((n,), 0, _i64), lax.reshape(perm, (n, 1)), group, kind="set", mode="drop"))
    if return_counts:
        out.append(lax.scatter(_util.full((size,), 0, _i64), lax.reshape(group, (n, 1)), _util.full((n,), 1, _i64),
                               kind="add", mode="drop"))
    return out[0] if len(out) == 1 else tuple(out)


def unique_all(x, /, *, size=None, fill_value=None):
    """``(values, indices, inverse_indices, counts)`` as a named tuple; NaNs are distinct
    (NumPy 2's ``equal_nan=False``) and ``inverse_indices`` has ``x``'s shape."""
    return UniqueAllResult(*unique(x, True, True, True, equal_nan=False, size=size, fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    """``(values, counts)`` as a named tuple (NaNs distinct)."""
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """``(values, inverse_indices)`` as a named tuple (NaNs distinct; inverse in ``x``'s shape)."""
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
    """The unique values of ``x``, sorted (NaNs distinct)."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# --- isin ------------------------------------------------------------------------------------------
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None, method="auto"):
    """Elementwise ``element in test_elements`` (bool, ``element``'s shape); ``invert``
    negates. ``method`` (JAX) or ``kind`` (NumPy) picks the algorithm: ``'compare_all'``
    compares every pair; ``'sort'``/``'binary_search'`` (``'auto'`` for long
    ``test_elements``) search the sorted test values. NaN is never found.

    >>> fnp.isin(np.array([1, 2, 3]), np.array([3, 1]))
    Array([ True, False,  True])
    """
    e = arg("isin", element, "element")
    t = _flat(arg("isin", test_elements, "test_elements"))
    if method not in ("auto", "compare_all", "sort", "binary_search"):
        raise ValueError(f"isin: method must be 'auto', 'compare_all', 'sort' or 'binary_search', got {method!r}")
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: kind must be None, 'sort' or 'table', got {kind!r}")
    e, t = _util.promote_dtypes(e, t)
    shape, m = _util.shape_of(e), _util.shape_of(t)[0]
    if m == 0:
        found = _util.full(shape, False, dtypes.bool_)
    elif method == "compare_all" or (method == "auto" and m <= 64):
        nd = len(shape)
        eq = lax.eq(lax.broadcast_in_dim(e, shape + (m,), tuple(range(nd))),
                    lax.broadcast_in_dim(t, shape + (m,), (nd,)))
        found = lax.reduce_max(eq, (nd,))
    else:
        st = lax.sort([t], 0, num_keys=1)[0]
        at = take1d(st, searchsorted(st, e))
        found = lax.eq(at, e)
    return numpy_result(lax.bitwise_not(found) if invert else found, scalar=False)


# --- intersect1d, union1d, setdiff1d, setxor1d -------------------------------------------------------
def _sorted_unique_mask(x):
    """(sorted values, original positions, first-of-run mask) of a flattened array."""
    s, perm = _sort_with_index(_flat(x))
    return s, perm, _neq_prev(s, True)


def _len_of(fn):
    return lambda *vals: len(fn(*vals))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """Sorted unique values in both arrays; with ``return_indices`` also the index of
    each one's first occurrence in ``ar1`` and in ``ar2`` (flattened).

    >>> fnp.intersect1d(np.array([1, 3, 4, 3]), np.array([3, 1, 2, 1]))
    Array([1, 3])
    """
    a, b = _util.promote_dtypes(arg("intersect1d", ar1, "ar1"), arg("intersect1d", ar2, "ar2"))
    size = _out_size("intersect1d", size, (a, b), _len_of(np.intersect1d))
    s1, perm1, first1 = _sorted_unique_mask(a)
    keep = lax.bitwise_and(first1, isin(s1, b))
    vals, pos, valid = _compact(s1, keep, size, fill_value)
    if not return_indices:
        return vals
    zero = _util.full((size,), 0, _i64)
    i1 = lax.select(valid, take1d(perm1, pos), zero) if _util.shape_of(s1)[0] else zero
    s2, perm2 = _sort_with_index(_flat(b))
    if _util.shape_of(s2)[0]:
        i2 = lax.select(valid, take1d(perm2, searchsorted(s2, vals)), zero)
    else:
        i2 = zero
    return vals, i1, i2


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted unique values in either array (both flattened).

    >>> fnp.union1d(np.array([-1, 0, 1]), np.array([-2, 0, 2]))
    Array([-2, -1,  0,  1,  2])
    """
    a, b = _util.promote_dtypes(arg("union1d", ar1, "ar1"), arg("union1d", ar2, "ar2"))
    both = lax.concatenate([_flat(a), _flat(b)], 0)
    size = _out_size("union1d", size, (a, b), _len_of(np.union1d))
    return unique(both, size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ``ar1`` not in ``ar2``; with ``assume_unique=True`` the
    values of ``ar1`` not in ``ar2`` in ``ar1``'s order (NumPy's rule).

    >>> fnp.setdiff1d(np.array([1, 2, 3, 2, 4, 1]), np.array([3, 4, 5, 6]))
    Array([1, 2])
    """
    a, b = _util.promote_dtypes(arg("setdiff1d", ar1, "ar1"), arg("setdiff1d", ar2, "ar2"))
    size = _out_size("setdiff1d", size, (a, b), _len_of(lambda u, v: np.setdiff1d(u, v, assume_unique)))
    if assume_unique:
        s = _flat(a)
        keep = isin(s, b, invert=True)
    else:
        s, _, first = _sorted_unique_mask(a)
        keep = lax.bitwise_and(first, isin(s, b, invert=True))
    return _compact(s, keep, size, fill_value)[0]


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of the two arrays (each made unique first).

    >>> fnp.setxor1d(np.array([1, 2, 3, 2, 4]), np.array([2, 3, 5, 7, 5]))
    Array([1, 4, 5, 7])
    """
    a, b = _util.promote_dtypes(arg("setxor1d", ar1, "ar1"), arg("setxor1d", ar2, "ar2"))
    size = _out_size("setxor1d", size, (a, b), _len_of(lambda u, v: np.setxor1d(u, v, assume_unique)))
    parts, firsts = [], []
    for x in (a, b):
        if assume_unique:
            parts.append(_flat(x))
            firsts.append(_util.full(_util.shape_of(parts[-1]), True, dtypes.bool_))
        else:
            s, _, first = _sorted_unique_mask(x)
            parts.append(s)
            firsts.append(first)
    c, valid = lax.concatenate(parts, 0), lax.concatenate(firsts, 0)
    n = _util.shape_of(c)[0]
    if n == 0:
        return _compact(c, valid, size, fill_value)[0]
    # Valid (unique) values first, sorted; then drop every value that appears twice.
    invalid, c = lax.sort([lax.bitwise_not(valid), c], 0, num_keys=2)
    valid = lax.bitwise_not(invalid)
    differs = lax.ne(lax.slice(c, (1,), (n,)), lax.slice(c, (0,), (n - 1,)))
    yes = _util.full((1,), True, dtypes.bool_)
    prev_ok = lax.concatenate([yes, differs], 0)
    next_ok = lax.concatenate([lax.bitwise_or(differs, lax.bitwise_not(lax.slice(valid, (1,), (n,)))), yes], 0)
    keep = lax.bitwise_and(valid, lax.bitwise_and(prev_ok, next_ok))
    return _compact(c, keep, size, fill_value)[0]
