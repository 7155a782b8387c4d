"""dot_general: contraction over given dims with batch dims (matmul, dot, einsum, ...).

``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``. The
result's dims are: batch dims, then lhs free dims, then rhs free dims (like JAX).
"""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core.ad_util import defjvp, is_undefined
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import moveaxis, shift_axes
from funcgrad.core.primitive import Primitive, batch_rules, defvjp_eager
from funcgrad.core.prims._checks import check_axes, check_kind
from funcgrad.core.trace import get_aval_any

dot_general_p = Primitive("dot_general")


def blas_dot(x, y):
    """``numpy.dot(x, y)`` of 1-d/2-d arrays, with every product computed. With an operand
    of one element NumPy calls BLAS ``axpy``, which by BLAS's definition adds nothing
    when that element is 0: ``numpy.dot([[inf]], [0.0])`` is 0 there, where the product
    is NaN (``numpy.matmul``, ``einsum``, compiled code and JAX give NaN). Those go to
    ``numpy.matmul`` (the same values otherwise)."""
    if x.size == 1 or y.size == 1:
        return np.matmul(x, y)
    return np.dot(x, y)


def _free(ndim, contract, batch):
    return tuple(d for d in range(ndim) if d not in contract and d not in batch)


@dot_general_p.def_impl
def _dot_general_impl(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = np.asarray(x), np.asarray(y)
    xnd = x.ndim
    if not lb and xnd and xnd <= 2 and y.ndim <= 2 and lc == (xnd - 1,) and rc == (0,):
        return blas_dot(x, y)  # the common vector/matrix products: straight to BLAS
    if not lc and not lb:
        # Plain outer product: [lhs dims, rhs dims] in order.
        return np.multiply.outer(x, y)
    lf, rf = _free(xnd, lc, lb), _free(y.ndim, rc, rb)
    xs, ys = x.shape, y.shape
    if not lc:
        # No contraction: an outer product per batch element, i.e. a broadcast multiply
        # laid out directly as [batch, lhs free, rhs free] (a matmul with k == 1 is slow).
        xb = x.transpose(lb + lf).reshape(tuple(xs[d] for d in lb + lf) + (1,) * len(rf))
        yt = y.transpose(rb + rf)
        yb = yt.reshape(tuple(ys[d] for d in rb) + (1,) * len(lf) + tuple(ys[d] for d in rf))
        return np.multiply(xb, yb)
    # Bring both to (batch, m, k) @ (batch, k, n) so NumPy's BLAS-backed matmul does it.
    xt = x.transpose(lb + lf + lc)
    yt = y.transpose(rb + rc + rf)
    bshape = tuple(xs[d] for d in lb)
    m = math.prod([xs[d] for d in lf])
    k = math.prod([xs[d] for d in lc])
    n = math.prod([ys[d] for d in rf])
    out = np.matmul(xt.reshape(bshape + (m, k)), yt.reshape(bshape + (k, n)))
    return out.reshape(bshape + tuple(xs[d] for d in lf) + tuple(ys[d] for d in rf))


@dot_general_p.def_abstract_eval
def _dot_general_abstract_eval(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    check_kind("dot_general", x, "iufc", "lhs")  # (complex: no conjugation, as lax's)
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
    return ShapedArray(shape, x.dtype, False)  # (strong: see ShapedArray.weak_type)


def _dot_transpose_dims(o_ndim, dimension_numbers, ct_is_lhs_of_ans: bool, arg_ndim: int):
    """How to get the cotangent of one operand ("arg") of dot_general from ``ct`` and
    the other operand: ``transpose(dot_general(ct, other, dims), perm)``.

    ans dims are [batch, lhs kept, rhs kept]. The cotangent of arg contracts ``ct``'s
    dims of the *other* operand's kept dims with ``other``, giving dims
    [batch, arg kept, arg contract (ordered like other's contract dims)], which are then
    permuted back to arg's own order. (Shared with the eager tape, which applies it to
    NumPy values directly.)
    """
    (a_con, o_con), (a_bat, o_bat) = dimension_numbers
    a_kept = [d for d in range(arg_ndim) if d not in a_con and d not in a_bat]
    o_kept = [d for d in range(o_ndim) if d not in o_con and d not in o_bat]
    nb = len(a_bat)
    if ct_is_lhs_of_ans:  # arg is lhs: ans = [batch, arg kept, other kept]
        ct_other_kept = list(range(nb + len(a_kept), nb + len(a_kept) + len(o_kept)))
    else:  # arg is rhs: ans = [batch, other kept, arg kept]
        ct_other_kept = list(range(nb, nb + len(o_kept)))
    dims = ((tuple(ct_other_kept), tuple(o_kept)), (tuple(range(nb)), tuple(o_bat)))
    # res dims: batch, ct's remaining dims (= arg kept, in order), other's free dims
    # (= other's contract dims, ascending) which pair with arg's contract dims.
    a_con_by_other = [a for _, a in sorted(zip(o_con, a_con))]
    perm = list(a_bat) + a_kept + a_con_by_other
    return dims, tuple(sorted(range(len(perm)), key=perm.__getitem__))


def _dot_transpose_one(ct, other, dimension_numbers, ct_is_lhs_of_ans: bool, arg_ndim: int):
    """Cotangent of one operand of dot_general given the other (``_dot_transpose_dims``)."""
    dims, perm = _dot_transpose_dims(_ndim(other), dimension_numbers, ct_is_lhs_of_ans, arg_ndim)
    return lax.transpose(lax.dot_general(ct, other, dims), perm)


def _ndim(x):
    return get_aval_any(x).ndim


def _dot_general_transpose(ct, x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    ct_x = ct_y = None
    if is_undefined(x):
        ct_x = _dot_transpose_one(ct, y, ((lc, rc), (lb, rb)), True, x.aval.ndim)
    if is_undefined(y):
        ct_y = _dot_transpose_one(ct, x, ((rc, lc), (rb, lb)), False, y.aval.ndim)
    return [ct_x, ct_y]


defjvp(
    dot_general_p,
    lambda g, ans, x, y, *, dimension_numbers: lax.dot_general(g, y, dimension_numbers),
    lambda g, ans, x, y, *, dimension_numbers: lax.dot_general(x, g, dimension_numbers),
)
ad.deftranspose(dot_general_p, _dot_general_transpose)


def _dot_general_vjp(ct, ans, p, which, *, dimension_numbers):
    # ``_dot_general_transpose`` on NumPy values (the eager tape's rule).
    x, y = p
    (lc, rc), (lb, rb) = dimension_numbers
    xnd, ynd = x.ndim, y.ndim
    if not lb and 0 < xnd <= 2 and 0 < ynd <= 2 and lc == (xnd - 1,) and rc == (0,):
        # x @ y for vectors and matrices (np.dot's cases): straight to BLAS.
        ct = np.asarray(ct)
        ct_x = ct_y = None
        if 0 in which:
            if ynd == 1:
                ct_x = ct * y if xnd == 1 else np.multiply.outer(ct, y)
            else:
                ct_x = blas_dot(ct, y.T)
        if 1 in which:
            if xnd == 1:
                ct_y = ct * x if ynd == 1 else np.multiply.outer(x, ct)
            else:
                ct_y = blas_dot(x.T, ct)
        return [ct_x, ct_y]
    got = [None, None]
    if 0 in which:
        got[0] = _dot_ct_numpy(ct, y, ((lc, rc), (lb, rb)), True, x.ndim)
    if 1 in which:
        got[1] = _dot_ct_numpy(ct, x, ((rc, lc), (rb, lb)), False, y.ndim)
    return got


def _dot_ct_numpy(ct, other, dimension_numbers, arg_is_lhs, arg_ndim):
    # ``_dot_transpose_one`` on concrete values, calling the impls directly.
    dims, perm = _dot_transpose_dims(other.ndim, dimension_numbers, arg_is_lhs, arg_ndim)
    return np.transpose(_dot_general_impl(np.asarray(ct), other, dimension_numbers=dims), perm)


defvjp_eager(dot_general_p, _dot_general_vjp)


def _dot_general_batch(args, bdims, *, dimension_numbers):
    (x, y), (dx, dy) = args, bdims
    (lc, rc), (lb, rb) = dimension_numbers
    if dx is not None and dy is not None:
        # Both mapped: the batch axis becomes a new leading dot_general batch dimension.
        x, y = moveaxis(x, dx, 0), moveaxis(y, dy, 0)
        up = lambda dims: tuple(d + 1 for d in dims)  # noqa: E731
        dn = ((up(lc), up(rc)), ((0,) + up(lb), (0,) + up(rb)))
        return dot_general_p.bind(x, y, dimension_numbers=dn), 0
    if dx is not None:
        # Only the lhs is mapped: its batch axis is one more free lhs dimension.
        lc2, lb2 = shift_axes(lc, dx), shift_axes(lb, dx)
        free = [d for d in range(_ndim(x)) if d not in lc2 and d not in lb2]
        out_dim = len(lb) + free.index(dx)
        return dot_general_p.bind(x, y, dimension_numbers=((lc2, rc), (lb2, rb))), out_dim
    rc2, rb2 = shift_axes(rc, dy), shift_axes(rb, dy)
    free = [d for d in range(_ndim(y)) if d not in rc2 and d not in rb2]
    n_lhs_free = _ndim(x) - len(lc) - len(lb)
    out_dim = len(lb) + n_lhs_free + free.index(dy)
    return dot_general_p.bind(x, y, dimension_numbers=((lc, rc2), (lb, rb2))), out_dim


batch_rules[dot_general_p] = _dot_general_batch

from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives above)
