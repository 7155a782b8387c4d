"""``sort`` (several operands, lexicographic on the first ``num_keys``), ``sort_key_val``
and ``top_k``, with ``jax.lax``'s signatures. All are stable (``is_stable`` is accepted:
a stable sort is a valid unstable one) and put NaNs last in ascending order, as
NumPy and XLA do; derivatives follow the permutation (``sort``'s JVP)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.lax import _util

__all__ = ["sort", "sort_key_val", "top_k"]


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort ``operand`` along ``dimension``. A sequence of same-shaped operands is sorted
    by the first ``num_keys`` of them lexicographically, the others permuted alongside
    (returns a tuple); a single array returns an array.

    >>> keys, vals = lax.sort((fnp.array([2, 1, 2]), fnp.array([0.1, 0.2, 0.3])))
    """
    single = not isinstance(operand, Sequence)
    ops = [operand] if single else list(operand)
    if not ops:
        raise ValueError("sort: operand is an empty sequence; pass at least one array")
    avals = [_util.aval("sort", o, f"operand[{i}]") for i, o in enumerate(ops)]
    if any(a.shape != avals[0].shape for a in avals):
        raise TypeError(f"sort: operands must have the same shape, got {[a.shape for a in avals]}")
    num_keys = _util.static_int("sort", num_keys, "num_keys")
    if not 1 <= num_keys <= len(ops):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of operands ({len(ops)})")
    if avals[0].ndim == 0:
        raise ValueError(f"sort: operands must have at least one dimension, got shape {avals[0].shape}")
    dimension = _util.axis("sort", dimension, avals[0].ndim, avals[0].shape, "dimension")
    out = lax.sort(ops, dimension, num_keys=num_keys)
    return out[0] if single else tuple(out)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """``(sorted keys, values permuted alongside)`` along ``dimension``."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def _descending_key(x, dtype):
    """A key whose ascending order is x's descending order, without overflow: ``-x`` for
    floats (NaN stays NaN, so it is handled separately), ``~x`` for integers and bools."""
    return lax.neg(x) if dtype.kind == "f" else lax.bitwise_not(x)


def top_k(operand, k):
    """The ``k`` largest entries along the last axis, in descending order, and their
    int32 indices. Ties keep the lower index first and NaN counts as the largest value
    (XLA's order); derivatives flow to the selected entries.

    >>> vals, idx = lax.top_k(fnp.array([1.0, 3.0, 2.0, 3.0]), 2)   # [3, 3], [1, 3]
    """
    a = _util.aval("top_k", operand)
    if a.ndim == 0:
        raise ValueError(f"top_k: operand must have at least one dimension, got shape {a.shape}")
    k = _util.static_int("top_k", k, "k")
    n = a.shape[-1]
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k={k} must be between 0 and the last axis' size {n} (operand shape {a.shape})")
    d = a.ndim - 1
    idx = lax.iota(dtypes.int32, a.shape, d)
    key = _descending_key(operand, a.dtype)
    if a.dtype.kind == "f":  # NaN first: sort by (not isnan, -x)
        not_nan = lax.eq(operand, operand)
        _, _, vals, idx = lax.sort([not_nan, key, operand, idx], d, num_keys=2)
    else:
        _, vals, idx = lax.sort([key, operand, idx], d, num_keys=1)
    start, limit = [0] * a.ndim, list(a.shape)
    limit[d] = k
    return lax.slice(vals, start, limit), lax.slice(idx, start, limit)


del np
