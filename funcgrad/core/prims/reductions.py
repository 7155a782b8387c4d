"""Reductions over static axes, arg-reductions and cumulative scans."""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import Primitive
from funcgrad.core.prims._checks import check_axes, check_kind


def reduction(name: str, impl, kinds: str) -> Primitive:
    """Declare ``name(x, axes=...)`` reducing the given axes away."""
    prim = Primitive(name)

    @prim.def_impl
    def _impl(x, *, axes):
        return impl(np.asarray(x), axis=tuple(axes)) if axes else np.asarray(x)

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


reduce_sum_p = reduction("reduce_sum", np.sum, "if")
reduce_prod_p = reduction("reduce_prod", np.prod, "if")
reduce_max_p = reduction("reduce_max", np.max, "bif")  # on bool: any
reduce_min_p = reduction("reduce_min", np.min, "bif")  # on bool: all


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
argmin_p = arg_reduction("argmin", np.argmin)


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
cumprod_p = cumulative("cumprod", np.cumprod)
