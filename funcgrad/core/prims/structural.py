"""Shape and layout primitives: broadcast, reshape, transpose, rev, concatenate, pad,
slice, iota. Params are static tuples of Python ints, shown in the printed IR.

Most batch rules put the batch axis first and shift their static axis params by one."""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.ad_util import defjvp_zero, deflinear, is_undefined
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import batch_size, bdim_at
from funcgrad.core.primitive import AVALS, NOTHING, Primitive, allow_missing, batch_rules, defvjp_eager
from funcgrad.core.prims._checks import check_axes
from funcgrad.core.trace import get_aval_any


def _shape_tuple(op, shape, argname="shape"):
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"{op}: negative dimension in {argname} {shape}")
    return shape


# --- broadcast_in_dim -----------------------------------------------------------------
# Operand dim i goes to output dim broadcast_dimensions[i]; it must be 1 or equal.
broadcast_in_dim_p = Primitive("broadcast_in_dim")


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    # A read-only zero-stride view, like numpy.broadcast_to, but built directly: this is
    # on the eager hot path of every op that mixes a scalar with an array.
    x = np.asarray(x)
    if x.flags.c_contiguous:
        strides = [0] * len(shape)
        for i, d in enumerate(broadcast_dimensions):
            if x.shape[i] != 1:
                strides[d] = x.strides[i]
        view = np.ndarray(shape, x.dtype, x, 0, tuple(strides))
        view.flags.writeable = False
        return view
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions):
    shape = _shape_tuple("broadcast_in_dim", shape)
    bd = tuple(broadcast_dimensions)
    if len(bd) != x.ndim:
        raise ValueError(
            f"broadcast_in_dim: broadcast_dimensions {bd} must have one entry per operand "
            f"dimension of {x.str_short()}"
        )
    if any(b <= a for a, b in zip(bd, bd[1:])) or any(not 0 <= d < len(shape) for d in bd):
        raise ValueError(f"broadcast_in_dim: broadcast_dimensions {bd} must be increasing and < {len(shape)}")
    for i, d in enumerate(bd):
        if x.shape[i] not in (1, shape[d]):
            raise ValueError(
                f"broadcast_in_dim: operand {x.str_short()} dimension {i} (size {x.shape[i]}) "
                f"cannot broadcast to size {shape[d]} of shape {shape}"
            )
    return ShapedArray(shape, x.dtype, False)  # (strong: see ShapedArray.weak_type)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    # Sum over the new dims and over operand dims of size 1 that were expanded.
    in_shape = x.aval.shape
    kept = set(broadcast_dimensions)
    expanded = [d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1]
    summed = sorted([d for d in range(len(shape)) if d not in kept] + expanded)
    return [lax.reshape(lax.reduce_sum(ct, summed), in_shape)]


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _broadcast_in_dim_vjp(ct, ans, p, which, *, shape, broadcast_dimensions):
    in_shape = p[0].shape
    kept = set(broadcast_dimensions)
    expanded = [d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1]
    summed = tuple(sorted([d for d in range(len(shape)) if d not in kept] + expanded))
    ct = np.asarray(ct)
    if summed:
        ct = np.add.reduce(ct, axis=summed, dtype=ct.dtype)
    return [ct.reshape(in_shape)]


defvjp_eager(broadcast_in_dim_p, _broadcast_in_dim_vjp, primals=AVALS)


def _broadcast_in_dim_batch(args, bdims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, bdims
    x = bdim_at(x, d, 0)
    size = get_aval_any(x).shape[0]
    bd = (0,) + tuple(b + 1 for b in broadcast_dimensions)
    return broadcast_in_dim_p.bind(x, shape=(size,) + tuple(shape), broadcast_dimensions=bd), 0


batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch


# --- reshape (row-major) ----------------------------------------------------------------
reshape_p = Primitive("reshape")


@reshape_p.def_impl
def _reshape_impl(x, *, new_sizes):
    return x.reshape(new_sizes) if isinstance(x, np.ndarray) else np.reshape(x, new_sizes)


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(x, *, new_sizes):
    new_sizes = _shape_tuple("reshape", new_sizes, "new_sizes")
    if math.prod(new_sizes) != math.prod(x.shape):  # (Python ints: a crafted shape cannot overflow)
        raise ValueError(f"reshape: cannot reshape {x.str_short()} (size {x.size}) into shape {new_sizes}")
    return ShapedArray(new_sizes, x.dtype, False)


deflinear(reshape_p, lambda ct, x, *, new_sizes: [lax.reshape(ct, x.aval.shape)])
defvjp_eager(reshape_p, lambda ct, ans, p, which, *, new_sizes: [np.reshape(ct, p[0].shape)], primals=AVALS)


def _reshape_batch(args, bdims, *, new_sizes):
    (x,), (d,) = args, bdims
    x = bdim_at(x, d, 0)
    return reshape_p.bind(x, new_sizes=(get_aval_any(x).shape[0],) + tuple(new_sizes)), 0


batch_rules[reshape_p] = _reshape_batch


def _inverse_perm(perm):
    return tuple(sorted(range(len(perm)), key=perm.__getitem__))


# --- transpose --------------------------------------------------------------------------
transpose_p = Primitive("transpose")


@transpose_p.def_impl
def _transpose_impl(x, *, permutation):
    return x.transpose(permutation) if isinstance(x, np.ndarray) else np.transpose(x, permutation)


@transpose_p.def_abstract_eval
def _transpose_abstract_eval(x, *, permutation):
    perm = check_axes("transpose", permutation, x.ndim, "permutation")
    if len(perm) != x.ndim:
        raise ValueError(f"transpose: permutation {perm} does not match rank of {x.str_short()}")
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype, False)


deflinear(transpose_p, lambda ct, x, *, permutation: [lax.transpose(ct, _inverse_perm(permutation))])
defvjp_eager(transpose_p, lambda ct, ans, p, which, *, permutation: [np.transpose(ct, _inverse_perm(permutation))],
             primals=NOTHING)


def _transpose_batch(args, bdims, *, permutation):
    (x,), (d,) = args, bdims
    # Keep the batch axis where it is: permute the other axes around it.
    others = [a for a in range(len(permutation) + 1) if a != d]
    perm = [others[p] for p in permutation]
    perm.insert(d, d)
    return transpose_p.bind(x, permutation=tuple(perm)), d


batch_rules[transpose_p] = _transpose_batch


# --- rev (flip along dimensions) ----------------------------------------------------------
rev_p = Primitive("rev")


@rev_p.def_impl
def _rev_impl(x, *, dimensions):
    return np.flip(x, dimensions) if dimensions else x


@rev_p.def_abstract_eval
def _rev_abstract_eval(x, *, dimensions):
    check_axes("rev", dimensions, x.ndim, "dimensions")
    return x


deflinear(rev_p, lambda ct, x, *, dimensions: [lax.rev(ct, dimensions)])


def _rev_batch(args, bdims, *, dimensions):
    (x,), (d,) = args, bdims
    return rev_p.bind(x, dimensions=tuple(a + (a >= d) for a in dimensions)), d


batch_rules[rev_p] = _rev_batch


# --- concatenate ------------------------------------------------------------------------
concatenate_p = Primitive("concatenate")


@concatenate_p.def_impl
def _concatenate_impl(*xs, dimension):
    return np.concatenate(xs, axis=dimension)


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*xs, dimension):
    if not xs:
        raise ValueError("concatenate: needs at least one operand")
    first = xs[0]
    if not 0 <= dimension < max(first.ndim, 1) or first.ndim == 0:
        raise ValueError(f"concatenate: dimension {dimension} out of range for {first.str_short()}")
    for i, x in enumerate(xs):
        if x.dtype != first.dtype or x.ndim != first.ndim or any(
            a != b for d, (a, b) in enumerate(zip(x.shape, first.shape)) if d != dimension
        ):
            shown = ", ".join(a.str_short() for a in xs)
            raise TypeError(
                f"concatenate: operand {i} does not match operand 0 outside dimension "
                f"{dimension} (operands: {shown})"
            )
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, False)


def _concatenate_transpose(ct, *xs, dimension):
    cts, start = [], 0
    shape = get_aval_any(ct).shape
    for x in xs:
        size = (x.aval if is_undefined(x) else get_aval_any(x)).shape[dimension]
        if is_undefined(x):
            lo = [0] * len(shape)
            hi = list(shape)
            lo[dimension], hi[dimension] = start, start + size
            cts.append(lax.slice(ct, lo, hi))
        else:
            cts.append(None)
        start += size
    return cts


deflinear(concatenate_p, _concatenate_transpose)


def _concatenate_vjp(ct, ans, p, which, *, dimension):
    got, start = [None] * len(p), 0
    index = [slice(None)] * np.ndim(ct)
    for i, x in enumerate(p):
        size = x.shape[dimension]
        if i in which:
            index[dimension] = slice(start, start + size)
            got[i] = ct[tuple(index)]
        start += size
    return got


defvjp_eager(concatenate_p, _concatenate_vjp, primals=AVALS)


def _concatenate_batch(args, bdims, *, dimension):
    size = batch_size(args, bdims)
    return concatenate_p.bind(*[bdim_at(x, d, size, 0) for x, d in zip(args, bdims)], dimension=dimension + 1), 0


batch_rules[concatenate_p] = _concatenate_batch


# --- pad: (low, high, interior) per dimension; negative low/high crop ---------------------
pad_p = Primitive("pad")


@pad_p.def_impl
def _pad_impl(x, padding_value, *, padding_config):
    x = np.asarray(x)
    out_shape = _pad_shape(x.shape, padding_config)
    out = np.full(out_shape, padding_value, dtype=x.dtype)
    # Place x with interior spacing into a buffer with non-negative padding, then crop.
    full_shape = [
        max(lo, 0) + (n - 1) * (it + 1) + 1 + max(hi, 0) if n else max(lo, 0) + max(hi, 0)
        for n, (lo, hi, it) in zip(x.shape, padding_config)
    ]
    buf = np.full(full_shape, padding_value, dtype=x.dtype)
    dst = tuple(slice(max(lo, 0), max(lo, 0) + (n - 1) * (it + 1) + 1, it + 1) if n else slice(0, 0)
                for n, (lo, hi, it) in zip(x.shape, padding_config))
    buf[dst] = x
    crop = tuple(slice(-min(lo, 0), -min(lo, 0) + m) for m, (lo, hi, it) in zip(out_shape, padding_config))
    out[...] = buf[crop]
    return out


def _pad_shape(shape, padding_config):
    out = []
    for n, (lo, hi, it) in zip(shape, padding_config):
        core = n + max(n - 1, 0) * it
        out.append(lo + hi + core)
    return tuple(out)


@pad_p.def_abstract_eval
def _pad_abstract_eval(x, padding_value, *, padding_config):
    if padding_value.shape != () or padding_value.dtype != x.dtype:
        raise TypeError(
            f"pad: padding_value must be a scalar of the operand dtype, got "
            f"{padding_value.str_short()} for operand {x.str_short()}"
        )
    if len(padding_config) != x.ndim or any(len(c) != 3 or c[2] < 0 for c in padding_config):
        raise ValueError(
            f"pad: padding_config {padding_config} must be one (low, high, interior>=0) per dim of {x.str_short()}"
        )
    shape = _pad_shape(x.shape, padding_config)
    if any(d < 0 for d in shape):
        raise ValueError(f"pad: padding_config {padding_config} gives negative shape {shape}")
    return ShapedArray(shape, x.dtype, False)  # (strong: see ShapedArray.weak_type)


def _pad_transpose(ct, x, padding_value, *, padding_config):
    # The cotangent at the operand's positions: undo low/high padding (pad by their
    # negatives), then drop interior padding. The padding value gets all the rest.
    ct_at_x = None
    if is_undefined(x) or is_undefined(padding_value):
        dtype = get_aval_any(ct).dtype
        unpadded = lax.pad(ct, np.zeros((), dtype), [(-lo, -hi, 0) for lo, hi, _ in padding_config])
        strides = [it + 1 for _, _, it in padding_config]
        ct_at_x = lax.slice(unpadded, [0] * len(padding_config), get_aval_any(unpadded).shape, strides)
    ct_pv = None
    if is_undefined(padding_value):
        axes = range(len(padding_config))
        ct_pv = lax.sub(lax.reduce_sum(ct, axes), lax.reduce_sum(ct_at_x, axes))
    return [ct_at_x if is_undefined(x) else None, ct_pv]


deflinear(pad_p, _pad_transpose)


def _pad_batch(args, bdims, *, padding_config):
    (x, pv), (dx, dpv) = args, bdims
    size = batch_size(args, bdims)
    x = bdim_at(x, dx, size, 0)
    cfg = ((0, 0, 0),) + tuple(padding_config)
    if dpv is None:
        return pad_p.bind(x, pv, padding_config=cfg), 0
    # A per-example padding value: pad with zeros, then fill the padding per example.
    zero = np.zeros((), get_aval_any(x).dtype)
    padded = pad_p.bind(x, zero, padding_config=cfg)
    ones = lax.broadcast_in_dim(np.ones((), np.bool_), get_aval_any(x).shape, ())
    inside = pad_p.bind(ones, np.zeros((), np.bool_), padding_config=cfg)
    out_shape = get_aval_any(padded).shape
    fill = lax.broadcast_in_dim(bdim_at(pv, dpv, size, 0), out_shape, (0,))
    return lax.select(inside, padded, fill), 0


batch_rules[pad_p] = _pad_batch


# --- slice: static start/limit/stride per dimension ----------------------------------------
slice_p = Primitive("slice")


@slice_p.def_impl
def _slice_impl(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    return np.asarray(x)[tuple(slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


@slice_p.def_abstract_eval
def _slice_abstract_eval(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
        raise ValueError(f"slice: need one start/limit/stride per dimension of {x.str_short()}")
    shape = []
    for d, (s, l, st, n) in enumerate(zip(start_indices, limit_indices, strides, x.shape)):
        if not (0 <= s <= l <= n) or st < 1:
            raise ValueError(
                f"slice: invalid start {s} / limit {l} / stride {st} for dimension {d} of {x.str_short()}"
            )
        shape.append((l - s + st - 1) // st)
    return ShapedArray(shape, x.dtype, False)  # (strong: see ShapedArray.weak_type)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    out_shape = _slice_abstract_eval(
        x.aval, start_indices=start_indices, limit_indices=limit_indices, strides=strides
    ).shape
    cfg = []
    for s, st, n, m in zip(start_indices, strides, x.aval.shape, out_shape):
        covered = (m - 1) * st + 1 if m else 0
        cfg.append((s, n - s - covered, st - 1))
    return [lax.pad(ct, np.zeros((), x.aval.dtype), cfg)]


deflinear(slice_p, _slice_transpose)


def _slice_vjp(ct, ans, p, which, *, start_indices, limit_indices, strides=None):
    x = p[0]
    out = np.zeros(x.shape, np.asarray(ct).dtype)
    strides = strides or (1,) * len(start_indices)
    out[tuple(slice(s, lim, st) for s, lim, st in zip(start_indices, limit_indices, strides))] = ct
    return [out]


defvjp_eager(slice_p, _slice_vjp, primals=AVALS)


def _slice_batch(args, bdims, *, start_indices, limit_indices, strides=None):
    (x,), (d,) = args, bdims
    n = get_aval_any(x).shape[d]
    start = tuple(start_indices[:d]) + (0,) + tuple(start_indices[d:])
    limit = tuple(limit_indices[:d]) + (n,) + tuple(limit_indices[d:])
    st = None if strides is None else tuple(strides[:d]) + (1,) + tuple(strides[d:])
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=st), d


batch_rules[slice_p] = _slice_batch


# --- iota: 0, 1, 2, ... along one dimension of a new array --------------------------------
iota_p = Primitive("iota")


@iota_p.def_impl
def _iota_impl(*, dtype, shape, dimension):
    v = np.arange(shape[dimension], dtype=dtype)
    bshape = [1] * len(shape)
    bshape[dimension] = shape[dimension]
    return np.broadcast_to(v.reshape(bshape), shape)


@iota_p.def_abstract_eval
def _iota_abstract_eval(*, dtype, shape, dimension):
    shape = _shape_tuple("iota", shape)
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota: dimension {dimension} out of range for shape {shape}")
    dt = dtypes.canonicalize(dtype, what="iota dtype")
    if dt.kind == "b":
        raise TypeError("iota: dtype must be numeric, got bool")
    return ShapedArray(shape, dt, False)


defjvp_zero(iota_p)
allow_missing("batch", iota_p, "iota takes no array inputs, so it is never batched")


# --- optimization_barrier -----------------------------------------------------------------
# The identity, as JAX's ``lax.optimization_barrier``: compiled code computes its operand
# once into a buffer instead of fusing it into every consumer (which would recompute it
# per element read, e.g. twice per Box-Muller pair in ``random.normal``).
optimization_barrier_p = Primitive("optimization_barrier")


@optimization_barrier_p.def_impl
def _optimization_barrier_impl(x):
    return x


@optimization_barrier_p.def_abstract_eval
def _optimization_barrier_abstract_eval(x):
    return x


deflinear(optimization_barrier_p, lambda ct, x: [ct])
batch_rules[optimization_barrier_p] = lambda args, bdims: (optimization_barrier_p.bind(args[0]), bdims[0])


from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives above)
