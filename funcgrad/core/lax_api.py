"""Primitive-level functions: each applies exactly one primitive (strict types).

Rules in ``core`` call these (never NumPy), so every rule is itself traceable. The
public ``funcgrad.lax`` module re-exports them.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.array import copied_value
from funcgrad.core.prims import complex as _cx
from funcgrad.core.prims import dot as _dot
from funcgrad.core.prims import elementwise as _ew
from funcgrad.core.prims import indexing as _ix
from funcgrad.core.prims import reductions as _red
from funcgrad.core.prims import sort as _sort
from funcgrad.core.prims import structural as _st
from funcgrad.core.staging import JaxprTracer as _JT
from funcgrad.core.staging import stage_binary, stage_unary
from funcgrad.core.trace import TRACE_STATE as _TS
from funcgrad.core.trace import dynamic_payload, get_aval_any

_PY_SCALARS = (bool, int, float, complex)  # (before ``complex`` is rebound below)


# Staged operands of the innermost staging trace go to ``stage_unary``/``stage_binary``
# (what ``bind`` would do, minus its search for the trace): the rules of ``grad`` and
# ``jvp`` under ``jit`` call these functions on staged primals and residuals all the time.

def _unary(prim):
    def f(x):
        if type(x) is _JT and x._trace.main is _TS.dynamic:
            return stage_unary(prim, x, 1)
        return prim.bind(x)

    f.__name__ = prim.name
    f.__doc__ = f"Elementwise ``{prim.name}`` (primitive; no promotion)."
    f.primitive = prim  # (numpy_api/staged.py stages it directly)
    return f


def _binary(prim):
    def f(x, y):
        if type(x) is _JT and type(y) is _JT and x._trace.main is _TS.dynamic and y._trace.main is x._trace.main:
            return stage_binary(prim, x, y, 1)
        return prim.bind(x, y)

    f.__name__ = prim.name
    f.__doc__ = f"Elementwise ``{prim.name}`` of two operands of identical shape and dtype."
    f.primitive = prim
    return f


exp, log, log1p, expm1 = map(_unary, (_ew.exp_p, _ew.log_p, _ew.log1p_p, _ew.expm1_p))
log2, log10 = map(_unary, (_ew.log2_p, _ew.log10_p))
sin, cos, tan = map(_unary, (_ew.sin_p, _ew.cos_p, _ew.tan_p))
asin, acos, atan = map(_unary, (_ew.asin_p, _ew.acos_p, _ew.atan_p))
sinh, cosh, tanh = map(_unary, (_ew.sinh_p, _ew.cosh_p, _ew.tanh_p))
asinh, acosh, atanh = map(_unary, (_ew.asinh_p, _ew.acosh_p, _ew.atanh_p))
sqrt, cbrt, floor, ceil, round = map(_unary, (_ew.sqrt_p, _ew.cbrt_p, _ew.floor_p, _ew.ceil_p, _ew.round_p))
is_finite, neg, abs, sign = map(_unary, (_ew.is_finite_p, _ew.neg_p, _ew.abs_p, _ew.sign_p))
bitwise_not = _unary(_ew.not_p)
real, imag, conj = map(_unary, (_cx.real_p, _cx.imag_p, _cx.conj_p))
complex = _binary(_cx.complex_p)  # noqa: A001 - lax's name: x + iy from two reals
stop_gradient_p = _ew.stop_gradient_p

add, sub, mul, div, rem, pow = map(_binary, (_ew.add_p, _ew.sub_p, _ew.mul_p, _ew.div_p, _ew.rem_p, _ew.pow_p))
max, min, atan2, copysign = map(_binary, (_ew.max_p, _ew.min_p, _ew.atan2_p, _ew.copysign_p))
bitwise_and, bitwise_or, bitwise_xor = map(_binary, (_ew.and_p, _ew.or_p, _ew.xor_p))
eq, ne, lt, le, gt, ge = map(_binary, (_ew.eq_p, _ew.ne_p, _ew.lt_p, _ew.le_p, _ew.gt_p, _ew.ge_p))


def integer_pow(x, y: int):
    """``x ** y`` for a Python int ``y`` (repeated multiplication; ``jax.lax.integer_pow``)."""
    return _ew.integer_pow_p.bind(x, y=int(y))


def select_n(which, *cases):
    """``cases[which]`` elementwise; a bool ``which`` picks ``cases[1]`` where True."""
    return _ew.select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """``pred ? on_true : on_false`` elementwise (operands of identical type)."""
    return _ew.select_n_p.bind(pred, on_false, on_true)


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Cast ``x`` to ``new_dtype``; a no-op (no equation) when it already has it."""
    new_dtype = dtypes.canonicalize(new_dtype, what="convert_element_type new_dtype")
    aval = get_aval_any(x)
    if aval.dtype == new_dtype and aval.weak_type == weak_type and not isinstance(x, _PY_SCALARS):
        return copied_value(x)
    return _ew.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """``x`` broadcast to ``shape``: dimension ``i`` of ``x`` becomes dimension
    ``broadcast_dimensions[i]`` of the result (size 1 or equal), as ``jax.lax.broadcast_in_dim``."""
    shape, bd = tuple(map(int, shape)), tuple(map(int, broadcast_dimensions))
    aval = get_aval_any(x)
    if aval.shape == shape and bd == tuple(range(len(shape))):
        return copied_value(x)
    if type(x) is np.ndarray and not x.flags.writeable:
        # A read-only constant (a Python scalar's array, ``_util._scalar_constant``) broadcast
        # while staging: ``y * 0.5`` in a loop stages one broadcast, not one per use.
        memo = getattr(dynamic_payload(), "const_broadcasts", None)
        if memo is not None:
            key = (id(x), shape, bd)
            hit = memo.get(key)
            if hit is None or hit[0] is not x:
                hit = memo[key] = (x, _st.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=bd))
            return hit[1]
    return _st.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=bd)


def broadcast_to_rank(x, shape):
    """Broadcast ``x`` to ``shape`` with NumPy's trailing-dimension alignment."""
    aval = get_aval_any(x)
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - aval.ndim, len(shape))))


def reshape(x, new_sizes):
    """``x`` with shape ``new_sizes`` (same number of elements, C order), as ``jax.lax.reshape``."""
    new_sizes = tuple(map(int, new_sizes))
    if get_aval_any(x).shape == new_sizes:
        return copied_value(x)
    return _st.reshape_p.bind(x, new_sizes=new_sizes)


def transpose(x, permutation):
    """``x`` with its axes permuted: result axis ``i`` is ``x``'s axis ``permutation[i]``."""
    permutation = tuple(map(int, permutation))
    if permutation == tuple(range(len(permutation))):
        return copied_value(x)
    return _st.transpose_p.bind(x, permutation=permutation)


def rev(x, dimensions):
    """``x`` reversed along each axis in ``dimensions`` (``jax.lax.rev``)."""
    dimensions = tuple(map(int, dimensions))
    return _st.rev_p.bind(x, dimensions=dimensions) if dimensions else copied_value(x)


def concatenate(operands, dimension: int):
    """The arrays ``operands`` (same dtype, equal shapes but along ``dimension``) joined
    along ``dimension`` (``jax.lax.concatenate``)."""
    operands = list(operands)
    if len(operands) == 1:
        return copied_value(operands[0])
    return _st.concatenate_p.bind(*operands, dimension=int(dimension))


def pad(x, padding_value, padding_config):
    """``x`` padded with the scalar ``padding_value``: ``padding_config`` holds one
    ``(low, high, interior)`` triple per axis; negative ``low``/``high`` crop (``jax.lax.pad``)."""
    cfg = tuple((int(lo), int(hi), int(it)) for lo, hi, it in padding_config)
    return _st.pad_p.bind(x, padding_value, padding_config=cfg)


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 - lax's name
    """The static window ``x[start:limit:stride]`` along every axis (``jax.lax.slice``)."""
    start, limit = tuple(map(int, start_indices)), tuple(map(int, limit_indices))
    strides = tuple(map(int, strides)) if strides is not None and any(s != 1 for s in strides) else None
    if start == (0,) * len(start) and limit == get_aval_any(x).shape and strides is None:
        return copied_value(x)
    return _st.slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


def optimization_barrier_1(x):
    """The identity that compiled code computes into a buffer of its own (one array; the
    public ``funcgrad.lax.optimization_barrier`` takes a pytree)."""
    return _st.optimization_barrier_p.bind(x)


def iota(dtype, shape, dimension: int = 0):
    """An array of ``shape`` and ``dtype`` counting 0, 1, 2, ... along ``dimension``
    (``jax.lax.iota`` / ``broadcasted_iota``)."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(map(int, shape))
    return _st.iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=shape, dimension=int(dimension))


def dynamic_slice(x, start_indices, slice_sizes):
    """The window of ``x`` of size ``slice_sizes`` starting at ``start_indices`` (traced
    scalars allowed): a negative start is wrapped once, then clamped so the window fits, as
    ``jax.lax.dynamic_slice``; never reads out of bounds."""
    return _ix.dynamic_slice_p.bind(x, *start_indices, slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(x, update, start_indices):
    """``x`` with the window at ``start_indices`` replaced by ``update``; starts wrap once,
    then clamp so the window fits (``jax.lax.dynamic_update_slice``)."""
    return _ix.dynamic_update_slice_p.bind(x, update, *start_indices)


def gather(operand, indices, mode: str = "clip", fill_value=None):
    """Rows of ``operand`` picked by integer ``indices`` of shape ``batch + (k,)``: row ``r``
    selects ``operand[r[0], ..., r[k-1], ...]``, so the result has shape
    ``batch + operand.shape[k:]``. ``mode="clip"`` clamps out-of-range indices,
    ``"fill"`` returns ``fill_value`` there (default NaN for floats, the most negative
    value for signed ints); JAX's mode names are accepted."""
    if isinstance(fill_value, (bool, int, float, np.bool_, np.integer, np.floating)):
        # As JAX: the fill value takes the operand's dtype (the primitive wants exactly that).
        fill_value = np.asarray(fill_value).astype(get_aval_any(operand).dtype).item()
    return _ix.gather_p.bind(operand, indices, mode=_ix.gather_mode(mode), fill_value=fill_value)


def scatter(operand, indices, updates, kind: str = "set", mode: str = "drop"):
    """``operand`` with ``updates`` written at the rows ``indices`` selects (shapes as
    ``gather``'s): ``kind`` is ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"``;
    ``mode="drop"`` ignores out-of-range rows, ``"clip"`` clamps them."""
    return _ix.scatter_p.bind(operand, indices, updates, kind=kind, mode=_ix.scatter_mode(mode))


def _axes(axes):
    return tuple(sorted(map(int, axes)))


def reduce_sum(x, axes):
    """The sum of ``x`` over ``axes`` (removed from the shape), as ``jax.lax.reduce_sum``."""
    return _red.reduce_sum_p.bind(x, axes=_axes(axes))


def reduce_prod(x, axes):
    """The product of ``x`` over ``axes`` (removed from the shape)."""
    return _red.reduce_prod_p.bind(x, axes=_axes(axes))


def reduce_max(x, axes):
    """The maximum of ``x`` over ``axes`` (removed from the shape); NaN propagates."""
    return _red.reduce_max_p.bind(x, axes=_axes(axes))


def reduce_min(x, axes):
    """The minimum of ``x`` over ``axes`` (removed from the shape); NaN propagates."""
    return _red.reduce_min_p.bind(x, axes=_axes(axes))


def argmax(x, axis: int, index_dtype=dtypes.int64):
    """The index of the largest element along ``axis`` (the first on ties; NaN counts as
    largest), in ``index_dtype`` (``jax.lax.argmax``)."""
    return _red.argmax_p.bind(x, axis=int(axis), index_dtype=dtypes.canonicalize(index_dtype))


def argmin(x, axis: int, index_dtype=dtypes.int64):
    """The index of the smallest element along ``axis`` (the first on ties; NaN counts as
    smallest), in ``index_dtype`` (``jax.lax.argmin``)."""
    return _red.argmin_p.bind(x, axis=int(axis), index_dtype=dtypes.canonicalize(index_dtype))


def cumsum(x, axis: int = 0, reverse: bool = False):
    return _red.cumsum_p.bind(x, axis=int(axis), reverse=bool(reverse))


def cumprod(x, axis: int = 0, reverse: bool = False):
    return _red.cumprod_p.bind(x, axis=int(axis), reverse=bool(reverse))


def dot_general(x, y, dimension_numbers):
    """The general tensor contraction ``jax.lax.dot_general``: ``dimension_numbers`` is
    ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``; the result's axes are the
    batch axes, then ``x``'s free axes, then ``y``'s."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
    return _dot.dot_general_p.bind(x, y, dimension_numbers=dn)


def sort(operands, dimension: int = -1, num_keys: int = 1):
    """Stable sort of a sequence of operands by the first ``num_keys``; returns a list."""
    operands = list(operands)
    ndim = get_aval_any(operands[0]).ndim
    dimension = int(dimension) % ndim if ndim else 0
    return _sort.sort_p.bind(*operands, dimension=dimension, num_keys=int(num_keys))


# Bit operations, linear algebra and special functions: their wrappers live with the primitives.
from funcgrad.core.prims.bits import (  # noqa: E402,F401
    bitcast_convert_type,
    population_count,
    shift_left,
    shift_right_arithmetic,
    shift_right_logical,
)
from funcgrad.core.prims.linalg import cholesky, eigh, lu, qr, svd, triangular_solve  # noqa: E402,F401
from funcgrad.core.prims.special import digamma, erf, erf_inv, erfc, lgamma, polygamma  # noqa: E402,F401
