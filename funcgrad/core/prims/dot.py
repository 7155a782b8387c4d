"""dot_general: contraction over given dims with batch dims (matmul, dot, einsum, ...).

``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``. The
result's dims are: batch dims, then lhs free dims, then rhs free dims (like JAX).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import Primitive
from funcgrad.core.prims._checks import check_axes, check_kind

dot_general_p = Primitive("dot_general")


def _free(ndim, contract, batch):
    return tuple(d for d in range(ndim) if d not in contract and d not in batch)


@dot_general_p.def_impl
def _dot_general_impl(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = np.asarray(x), np.asarray(y)
    lf, rf = _free(x.ndim, lc, lb), _free(y.ndim, rc, rb)
    # Bring both to (batch, m, k) @ (batch, k, n) so NumPy's BLAS-backed matmul does it.
    xt = np.transpose(x, lb + lf + lc)
    yt = np.transpose(y, rb + rc + rf)
    bshape = tuple(x.shape[d] for d in lb)
    m = int(np.prod([x.shape[d] for d in lf], dtype=np.int64))
    k = int(np.prod([x.shape[d] for d in lc], dtype=np.int64))
    n = int(np.prod([y.shape[d] for d in rf], dtype=np.int64))
    out = np.matmul(xt.reshape(bshape + (m, k)), yt.reshape(bshape + (k, n)))
    return out.reshape(bshape + tuple(x.shape[d] for d in lf) + tuple(y.shape[d] for d in rf))


@dot_general_p.def_abstract_eval
def _dot_general_abstract_eval(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    check_kind("dot_general", x, "if", "lhs")
    if x.dtype != y.dtype:
        raise TypeError(f"dot_general: lhs {x.str_short()} and rhs {y.str_short()} must have the same dtype")
    check_axes("dot_general", lc + lb, x.ndim, "lhs dimensions")
    check_axes("dot_general", rc + rb, y.ndim, "rhs dimensions")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(f"dot_general: dimension_numbers {dimension_numbers} pair up unequal counts")
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        if x.shape[a] != y.shape[b]:
            raise ValueError(
                f"dot_general: lhs {x.str_short()} dimension {a} (size {x.shape[a]}) does not match "
                f"rhs {y.str_short()} dimension {b} (size {y.shape[b]})"
            )
    shape = (
        tuple(x.shape[d] for d in lb)
        + tuple(x.shape[d] for d in _free(x.ndim, lc, lb))
        + tuple(y.shape[d] for d in _free(y.ndim, rc, rb))
    )
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)
