"""Reductions over static axes, arg-reductions and cumulative scans."""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core import dtypes
from funcgrad.core.ad_util import Zero, defjvp_zero, deflinear
from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import (
    AVALS,
    GENERAL_PATH,
    Primitive,
    allow_missing,
    batch_rules,
    defvjp_eager,
    impl_rules,
    jvp_rules,
)
from funcgrad.core.prims import elementwise as _ew
from funcgrad.core.prims import structural as _st
from funcgrad.core.prims._checks import check_axes, check_kind
from funcgrad.core.trace import get_aval_any, is_staging


def _batch_rule(prim):
    def register(rule):
        batch_rules[prim] = rule
        return rule

    return register


# Identities of the reductions' monoids, per dtype (a NumPy scalar of that dtype).
def _zero(dtype):
    return dtype.type(0)


def _one(dtype):
    return dtype.type(1)


def _lowest(dtype):
    """max's identity: -inf, the smallest integer, or False."""
    if dtype.kind == "b":
        return dtype.type(False)
    return dtype.type(-np.inf) if dtype.kind in "fc" else dtype.type(np.iinfo(dtype).min)


def _highest(dtype):
    """min's identity: inf, the largest integer, or True."""
    if dtype.kind == "b":
        return dtype.type(True)
    return dtype.type(np.inf) if dtype.kind in "fc" else dtype.type(np.iinfo(dtype).max)


def reduction(name: str, ufunc, kinds: str, *, combiner: Primitive, identity, keep_int_dtype: bool,
              requires_nonempty: bool = False) -> Primitive:
    """Declare ``name(x, axes=...)`` reducing the given axes away with a monoid.

    ``ufunc`` computes it eagerly (its ``reduce``: what ``np.sum``/``np.max``/... call for
    an ndarray, without their Python wrappers). ``combiner`` (a binary elementwise
    primitive) and ``identity(dtype)`` name the monoid, read by lowering. The result
    keeps the operand's dtype (the abstract eval says so); ``keep_int_dtype``: the ufunc
    would widen small integers (``np.add``: int32 to int64), so ask it not to.
    ``requires_nonempty``: reducing a zero-size axis is an error, as in NumPy (``max``).
    """
    prim = Primitive(name)
    reduce = ufunc.reduce

    @prim.def_impl
    def _impl(x, *, axes):
        x = np.asarray(x)
        if not axes:
            return x
        if keep_int_dtype:
            return reduce(x, axis=tuple(axes), dtype=x.dtype)
        return reduce(x, axis=tuple(axes))

    @prim.def_abstract_eval
    def _abstract_eval(x, *, axes):
        check_kind(name, x, kinds)
        axes = check_axes(name, axes, x.ndim)
        if requires_nonempty and any(x.shape[a] == 0 for a in axes):
            raise ValueError(
                f"{name}: zero-size array to reduction operation which has no identity ({x.str_short()}, axes={axes})"
            )
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, False)  # strong, as every primitive output (see unop)

    prim.kinds = kinds
    prim.combiner = combiner
    prim.identity = identity

    @_batch_rule(prim)
    def _batch(args, bdims, *, axes):  # renumber the reduced axes around the batch axis
        (x,), (d,) = args, bdims
        new_axes = tuple(a + (a >= d) for a in axes)
        return prim.bind(x, axes=new_axes), d - sum(a < d for a in new_axes)

    return prim


def _kept_dims(ndim, axes):
    return tuple(d for d in range(ndim) if d not in axes)


def _bcast_back(y, shape, axes):
    """Broadcast a reduced result back over the reduced ``axes`` of ``shape``."""
    return lax.broadcast_in_dim(y, shape, _kept_dims(len(shape), axes))


def _bcast_back_numpy(y, shape, axes):
    """``_bcast_back`` on NumPy values (broadcast_in_dim's impl: a read-only view)."""
    return impl_rules[_st.broadcast_in_dim_p](y, shape=shape, broadcast_dimensions=_kept_dims(len(shape), axes))


reduce_sum_p = reduction("reduce_sum", np.add, "iufc", combiner=_ew.add_p, identity=_zero, keep_int_dtype=True)
deflinear(reduce_sum_p, lambda ct, x, *, axes: [_bcast_back(ct, x.aval.shape, axes)])


def _reduce_sum_vjp(ct, ans, p, which, *, axes):
    if not axes:
        return [ct]
    return [_bcast_back_numpy(ct, p[0].shape, axes)]


defvjp_eager(reduce_sum_p, _reduce_sum_vjp, primals=AVALS)

# The eager tape runs products through their JVP rule and its transposes.
_PRODUCT_SCAN = GENERAL_PATH + "its JVP is a product scan (exact at zeros); no NumPy rule is written"
reduce_prod_p = reduction("reduce_prod", np.multiply, "iufc", combiner=_ew.mul_p, identity=_one, keep_int_dtype=True)


def _reduce_prod_jvp(primals, tangents, *, axes):
    # Division-free (exact at zeros): move the reduced axes last and flatten them; the
    # derivative by x_j is the product of all the others, the exclusive cumulative
    # products from both ends multiplied (two cumprods: O(n) work and program size).
    (x,), (g,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    if type(g) is Zero:
        return ans, Zero.like(ans)
    shape = _aval(x).shape
    kept = _kept_dims(len(shape), axes)
    n = math.prod([shape[a] for a in axes])
    if n == 0:
        return ans, ad.zeros_like_aval(ad.tangent_aval(_aval(ans)))
    flat_shape = tuple(shape[d] for d in kept) + (n,)
    perm = kept + tuple(axes)
    xf = lax.reshape(lax.transpose(x, perm), flat_shape)
    gf = lax.reshape(lax.transpose(g, perm), flat_shape)
    last = len(flat_shape) - 1
    others = lax.mul(_exclusive_cumprod(xf, last, reverse=False), _exclusive_cumprod(xf, last, reverse=True))
    t = reduce_sum_p.bind(lax.mul(gf, others), axes=(last,))
    return ans, lax.reshape(t, _aval(ans).shape)


jvp_rules[reduce_prod_p] = _reduce_prod_jvp
ad.nonlinear(reduce_prod_p)
allow_missing("eager_vjp", reduce_prod_p, _PRODUCT_SCAN)


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


def _reduce_chooser_vjp(ct, ans, p, which, *, axes):
    # The JVP is the mean of the tangents where the extreme is attained, so the
    # cotangent is shared equally among those positions.
    x = p[0]
    hit = (x == _bcast_back_numpy(ans, x.shape, axes)).astype(x.dtype)
    count = np.add.reduce(hit, axis=tuple(axes), dtype=x.dtype) if axes else hit
    share = _bcast_back_numpy(np.asarray(ct / count), x.shape, axes)
    return [share * hit]


# (Python's max/min on bool: any/all.) No identity for empty axes, like NumPy.
reduce_max_p = reduction("reduce_max", np.maximum, "biufc", combiner=_ew.max_p, identity=_lowest, keep_int_dtype=False,
                         requires_nonempty=True)
_reduce_chooser_jvp(reduce_max_p)
defvjp_eager(reduce_max_p, _reduce_chooser_vjp, ans=True)
reduce_min_p = reduction("reduce_min", np.minimum, "biufc", combiner=_ew.min_p, identity=_highest, keep_int_dtype=False,
                         requires_nonempty=True)
_reduce_chooser_jvp(reduce_min_p)
defvjp_eager(reduce_min_p, _reduce_chooser_vjp, ans=True)


def arg_reduction(name: str, impl) -> Primitive:
    prim = Primitive(name)

    @prim.def_impl
    def _impl(x, *, axis, index_dtype):
        return impl(np.asarray(x), axis=axis).astype(index_dtype)

    @prim.def_abstract_eval
    def _abstract_eval(x, *, axis, index_dtype):
        check_kind(name, x, "biufc")  # (complex: lexicographic, as NumPy)
        (axis,) = check_axes(name, (axis,), x.ndim, "axis")
        if x.shape[axis] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence ({x.str_short()}, axis={axis})")
        idt = dtypes.canonicalize(index_dtype, what=f"{name} index_dtype")
        if idt.kind not in "iu":
            raise TypeError(f"{name}: index_dtype must be an integer dtype, got {idt.name}")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i != axis), idt, False)

    @_batch_rule(prim)
    def _batch(args, bdims, *, axis, index_dtype):
        (x,), (d,) = args, bdims
        ax = axis + (axis >= d)
        return prim.bind(x, axis=ax, index_dtype=index_dtype), d - (ax < d)

    return prim


argmax_p = arg_reduction("argmax", np.argmax)  # first occurrence; NaN wins, like NumPy
defjvp_zero(argmax_p)
argmin_p = arg_reduction("argmin", np.argmin)
defjvp_zero(argmin_p)


def cumulative(name: str, impl, *, combiner: Primitive, identity) -> Primitive:
    """Declare an inclusive scan ``name(x, axis=..., reverse=...)``; ``impl`` is NumPy's
    (``np.cumsum``), ``combiner``/``identity`` its monoid, as for ``reduction``."""
    prim = Primitive(name)
    prim.combiner = combiner
    prim.identity = identity

    @prim.def_impl
    def _impl(x, *, axis, reverse=False):
        x = np.asarray(x)
        if reverse:
            return np.flip(impl(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return impl(x, axis=axis, dtype=x.dtype)

    @prim.def_abstract_eval
    def _abstract_eval(x, *, axis, reverse=False):
        check_kind(name, x, "iufc")
        check_axes(name, (axis,), x.ndim, "axis")
        return x

    @_batch_rule(prim)
    def _batch(args, bdims, *, axis, reverse=False):
        (x,), (d,) = args, bdims
        return prim.bind(x, axis=axis + (axis >= d), reverse=reverse), d

    return prim


cumsum_p = cumulative("cumsum", np.cumsum, combiner=_ew.add_p, identity=_zero)
deflinear(cumsum_p, lambda ct, x, *, axis, reverse=False: [lax.cumsum(ct, axis, not reverse)])

cumprod_p = cumulative("cumprod", np.cumprod, combiner=_ew.mul_p, identity=_one)


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


def _exclusive_cumprod(x, axis, reverse):
    """``prod(x[:i])`` at ``i`` (``prod(x[i+1:])`` reversed), exact at zeros."""
    return _shift(cumprod_p.bind(x, axis=axis, reverse=reverse), 1, axis, 1, reverse)


def _linear_recurrence(a, b, axis, reverse):
    """``t[i] = t[i-1] * a[i] + b[i]`` along ``axis`` (``t[-1] = 0``) as one ``scan``:
    a loop in compiled code, O(n) work and program size. Linear in ``b``."""
    from funcgrad.core.ir import ClosedJaxpr
    from funcgrad.core.prims.control_flow import scan_p
    from funcgrad.core.staging import trace_to_jaxpr

    nd = len(_aval(a).shape)
    perm = (axis,) + tuple(d for d in range(nd) if d != axis)
    a_t, b_t = lax.transpose(a, perm), lax.transpose(b, perm)
    step_aval = ShapedArray(_aval(a_t).shape[1:], _aval(a).dtype)

    def step(t, a_i, b_i):
        t = lax.add(lax.mul(t, a_i), b_i)
        return [t, t]

    jaxpr, consts = trace_to_jaxpr(step, [step_aval] * 3)
    _, ys = scan_p.bind(ad.zeros_like_aval(step_aval), a_t, b_t, jaxpr=ClosedJaxpr(jaxpr, consts), num_consts=0,
                        num_carry=1, length=_aval(a_t).shape[0], reverse=reverse, linear=(True, False, True))
    return lax.transpose(ys, tuple(int(i) for i in np.argsort(perm)))


def _cumprod_jvp(primals, tangents, *, axis, reverse=False):
    (x,), (g,) = primals, tangents
    ans = cumprod_p.bind(x, axis=axis, reverse=reverse)
    if type(g) is Zero:
        return ans, Zero.like(ans)
    if not is_staging() or _aval(x).shape[axis] <= 2:
        # Eagerly: the log-depth product scan runs as a few whole-array NumPy operations.
        return ans, _prod_scan_tangent(x, g, axis, reverse)[1]
    # Staged: t[i] = t[i-1] x[i] + prod(x[:i]) g[i], a loop (the log-depth scan's shifted
    # copies fuse into code quadratic in n).
    return ans, _linear_recurrence(x, lax.mul(_exclusive_cumprod(x, axis, reverse), g), axis, reverse)


jvp_rules[cumprod_p] = _cumprod_jvp
ad.nonlinear(cumprod_p)
allow_missing("eager_vjp", cumprod_p, _PRODUCT_SCAN)


_aval = get_aval_any


from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives above)
