"""Reductions over static axes, arg-reductions and cumulative scans."""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.avals import ShapedArray
from funcgrad.core import ad_util as ad
from funcgrad.core.ad_util import Zero, deflinear, defjvp_zero
from funcgrad.core.primitive import Primitive, jvp_rules
from funcgrad.core.prims._checks import check_axes, check_kind
from funcgrad.core.trace import get_aval_any


def reduction(name: str, impl, kinds: str) -> Primitive:
    """Declare ``name(x, axes=...)`` reducing the given axes away.

    ``impl`` is a ufunc's ``reduce`` (what ``np.sum``/``np.max``/... call for an ndarray,
    without their Python wrappers).
    """
    prim = Primitive(name)
    keep_dtype = name in ("reduce_sum", "reduce_prod")  # NumPy would widen int32 to int64

    @prim.def_impl
    def _impl(x, *, axes):
        x = np.asarray(x)
        if not axes:
            return x
        if keep_dtype:
            return impl(x, axis=tuple(axes), dtype=x.dtype)
        return impl(x, axis=tuple(axes))

    @prim.def_abstract_eval
    def _abstract_eval(x, *, axes):
        check_kind(name, x, kinds)
        axes = check_axes(name, axes, x.ndim)
        if name in ("reduce_max", "reduce_min") and any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{name}: zero-size array to reduction operation which has no identity ({x.str_short()}, axes={axes})")
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)

    prim.kinds = kinds
    return prim


def _kept_dims(ndim, axes):
    return tuple(d for d in range(ndim) if d not in axes)


def _bcast_back(y, shape, axes):
    """Broadcast a reduced result back over the reduced ``axes`` of ``shape``."""
    return lax.broadcast_in_dim(y, shape, _kept_dims(len(shape), axes))


reduce_sum_p = reduction("reduce_sum", np.add.reduce, "if")
deflinear(reduce_sum_p, lambda ct, x, *, axes: [_bcast_back(ct, x.aval.shape, axes)])

reduce_prod_p = reduction("reduce_prod", np.multiply.reduce, "if")


def _reduce_prod_jvp(primals, tangents, *, axes):
    # Division-free (exact at zeros): move the reduced axes last, flatten them, and run
    # the product scan's tangent recurrence; the total product is the scan's last entry.
    (x,), (g,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    if type(g) is Zero:
        return ans, Zero.like(ans)
    shape = _aval(x).shape
    kept = _kept_dims(len(shape), axes)
    n = math.prod([shape[a] for a in axes])
    flat_shape = tuple(shape[d] for d in kept) + (n,)
    perm = kept + tuple(axes)
    xf = lax.reshape(lax.transpose(x, perm), flat_shape)
    gf = lax.reshape(lax.transpose(g, perm), flat_shape)
    if n == 0:
        return ans, ad.zeros_like_aval(ad.tangent_aval(_aval(ans)))
    _, t = _prod_scan_tangent(xf, gf, len(flat_shape) - 1, reverse=False)
    last = len(flat_shape) - 1
    start = [0] * last + [n - 1]
    t_last = lax.slice(t, start, flat_shape)
    return ans, lax.reshape(t_last, _aval(ans).shape)


jvp_rules[reduce_prod_p] = _reduce_prod_jvp
ad.nonlinear(reduce_prod_p)


def _reduce_chooser_jvp(prim):
    # Tangent of max/min: the mean of the tangents at the positions that attain it.
    def rule(primals, tangents, *, axes):
        (x,), (g,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if type(g) is Zero:
            return ans, Zero.like(ans)
        shape = _aval(x).shape
        hit = lax.eq(x, _bcast_back(ans, shape, axes))
        hitf = lax.convert_element_type(hit, _aval(g).dtype)
        num = lax.reduce_sum(lax.mul(g, hitf), axes)
        return ans, lax.div(num, lax.reduce_sum(hitf, axes))

    jvp_rules[prim] = rule
    ad.nonlinear(prim)


reduce_max_p = reduction("reduce_max", np.maximum.reduce, "bif")  # on bool: any
_reduce_chooser_jvp(reduce_max_p)
reduce_min_p = reduction("reduce_min", np.minimum.reduce, "bif")  # on bool: all
_reduce_chooser_jvp(reduce_min_p)


def arg_reduction(name: str, impl) -> Primitive:
    prim = Primitive(name)

    @prim.def_impl
    def _impl(x, *, axis, index_dtype):
        return impl(np.asarray(x), axis=axis).astype(index_dtype)

    @prim.def_abstract_eval
    def _abstract_eval(x, *, axis, index_dtype):
        check_kind(name, x, "bif")
        (axis,) = check_axes(name, (axis,), x.ndim, "axis")
        if x.shape[axis] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence ({x.str_short()}, axis={axis})")
        idt = dtypes.canonicalize(index_dtype, what=f"{name} index_dtype")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i != axis), idt, False)

    return prim


argmax_p = arg_reduction("argmax", np.argmax)  # first occurrence; NaN wins, like NumPy
defjvp_zero(argmax_p)
argmin_p = arg_reduction("argmin", np.argmin)
defjvp_zero(argmin_p)


def cumulative(name: str, impl) -> Primitive:
    prim = Primitive(name)

    @prim.def_impl
    def _impl(x, *, axis, reverse=False):
        x = np.asarray(x)
        if reverse:
            return np.flip(impl(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return impl(x, axis=axis, dtype=x.dtype)

    @prim.def_abstract_eval
    def _abstract_eval(x, *, axis, reverse=False):
        check_kind(name, x, "if")
        check_axes(name, (axis,), x.ndim, "axis")
        return x

    return prim


cumsum_p = cumulative("cumsum", np.cumsum)
deflinear(cumsum_p, lambda ct, x, *, axis, reverse=False: [lax.cumsum(ct, axis, not reverse)])

cumprod_p = cumulative("cumprod", np.cumprod)


def _shift(a, s, axis, fill, reverse):
    """``a`` moved ``s`` places along ``axis`` (towards the end unless reversed), the
    vacated entries set to ``fill``."""
    shape = _aval(a).shape
    n = shape[axis]
    lo, hi = [0] * len(shape), list(shape)
    if reverse:
        lo[axis] = s
    else:
        hi[axis] = n - s
    cfg = [(0, 0, 0)] * len(shape)
    cfg[axis] = (0, s, 0) if reverse else (s, 0, 0)
    return lax.pad(lax.slice(a, lo, hi), np.asarray(fill, _aval(a).dtype), cfg)


def _prod_scan_tangent(x, g, axis, reverse):
    """Hillis-Steele product scan carrying tangents: (cumprod(x), its jvp along g).
    Built from pad/slice/mul/add only, so it is differentiable and transposable."""
    p, t = x, g
    n, s = _aval(x).shape[axis], 1
    while s < n:
        ps, ts = _shift(p, s, axis, 1, reverse), _shift(t, s, axis, 0, reverse)
        t = lax.add(lax.mul(t, ps), lax.mul(p, ts))
        p = lax.mul(p, ps)
        s *= 2
    return p, t


def _cumprod_jvp(primals, tangents, *, axis, reverse=False):
    (x,), (g,) = primals, tangents
    ans = cumprod_p.bind(x, axis=axis, reverse=reverse)
    if type(g) is Zero:
        return ans, Zero.like(ans)
    return ans, _prod_scan_tangent(x, g, axis, reverse)[1]


jvp_rules[cumprod_p] = _cumprod_jvp
ad.nonlinear(cumprod_p)


_aval = get_aval_any



# --- batching rules (vmap): renumber the static axes around the batch axis ---------------
from funcgrad.core.primitive import batch_rules  # noqa: E402


def _reduction_batch(prim):
    def rule(args, bdims, *, axes):
        (x,), (d,) = args, bdims
        new_axes = tuple(a + (a >= d) for a in axes)
        return prim.bind(x, axes=new_axes), d - sum(a < d for a in new_axes)

    batch_rules[prim] = rule


for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p):
    _reduction_batch(_p)


def _arg_reduction_batch(prim):
    def rule(args, bdims, *, axis, index_dtype):
        (x,), (d,) = args, bdims
        ax = axis + (axis >= d)
        return prim.bind(x, axis=ax, index_dtype=index_dtype), d - (ax < d)

    batch_rules[prim] = rule


_arg_reduction_batch(argmax_p)
_arg_reduction_batch(argmin_p)


def _cumulative_batch(prim):
    def rule(args, bdims, *, axis, reverse=False):
        (x,), (d,) = args, bdims
        return prim.bind(x, axis=axis + (axis >= d), reverse=reverse), d

    batch_rules[prim] = rule


_cumulative_batch(cumsum_p)
_cumulative_batch(cumprod_p)

from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives above)
