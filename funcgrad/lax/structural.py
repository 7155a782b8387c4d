"""``jax.lax``'s shape and layout helpers built from the primitives: ``tile``, ``split``,
``stack``, ``unstack``, ``collapse``, ``broadcast_shapes``, ``shape_as_value``, ``dtype``,
``empty``, ``batch_matmul``, ``approx_max_k``/``approx_min_k`` (exact here: a valid answer
at any recall target), ``ragged_dot``/``ragged_dot_general``, ``composite`` and
``platform_dependent``.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.trace import get_aval_any
from funcgrad.lax import _util
from funcgrad.lax.dot import dot_general
from funcgrad.lax.sorting import top_k

__all__ = [
    "approx_max_k", "approx_min_k", "batch_matmul", "broadcast_shapes", "collapse", "composite", "dtype", "empty",
    "platform_dependent", "ragged_dot", "ragged_dot_general", "shape_as_value", "split", "stack", "tile", "unstack",
]


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along axis ``i`` (``len(reps) == operand.ndim``).

    >>> lax.tile(np.array([1, 2]), (3,))
    Array([1, 2, 1, 2, 1, 2])
    """
    aval = _util.aval("tile", operand)
    reps = tuple(_util.static_int("tile", r, "reps") for r in reps)
    if len(reps) != aval.ndim or any(r < 0 for r in reps):
        raise ValueError(f"tile: reps {reps} must give one non-negative count per axis of the operand, "
                         f"shape {aval.shape}")
    # broadcast to (r0, d0, r1, d1, ...) then merge each pair
    pairs = tuple(x for r, d in zip(reps, aval.shape) for x in (r, d))
    wide = lax.broadcast_in_dim(operand, pairs, tuple(range(1, 2 * aval.ndim, 2)))
    return lax.reshape(wide, tuple(r * d for r, d in zip(reps, aval.shape)))


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into pieces of the given ``sizes`` (which sum to its length).

    >>> [p.tolist() for p in lax.split(np.arange(5), (2, 3))]
    [[0, 1], [2, 3, 4]]
    """
    aval = _util.aval("split", operand)
    ax = _util.axis("split", axis, aval.ndim, aval.shape)
    sizes = [_util.static_int("split", s, "sizes") for s in sizes]
    if sum(sizes) != aval.shape[ax] or any(s < 0 for s in sizes):
        raise ValueError(f"split: sizes {tuple(sizes)} must be non-negative and sum to the length "
                         f"{aval.shape[ax]} of axis {ax} (operand shape {aval.shape})")
    pieces, start = [], 0
    for s in sizes:
        lo, hi = [0] * aval.ndim, list(aval.shape)
        lo[ax], hi[ax] = start, start + s
        pieces.append(lax.slice(operand, tuple(lo), tuple(hi)))
        start += s
    return pieces


def stack(operands, axis=0):
    """The operands (one shape and dtype) joined along a new axis ``axis``.

    >>> lax.stack([np.zeros(2), np.ones(2)], axis=1).shape
    (2, 2)
    """
    operands = list(operands)
    if not operands:
        raise ValueError("stack: needs at least one operand")
    avals = [_util.aval("stack", x, f"operands[{i}]") for i, x in enumerate(operands)]
    shape, dt = avals[0].shape, avals[0].dtype
    for i, a in enumerate(avals):
        if a.shape != shape or a.dtype != dt:
            raise TypeError(f"stack: operands[{i}] is {a.str_short()}, operands[0] is {avals[0].str_short()}; "
                            "lax.stack needs one shape and dtype")
    ax = _util.axis("stack", axis, len(shape) + 1, shape + (1,))
    new = shape[:ax] + (1,) + shape[ax:]
    return lax.concatenate([lax.reshape(x, new) for x in operands], ax)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``)."""
    aval = _util.aval("unstack", x)
    ax = _util.axis("unstack", axis, aval.ndim, aval.shape)
    rest = aval.shape[:ax] + aval.shape[ax + 1:]
    return tuple(lax.reshape(p, rest) for p in split(x, [1] * aval.shape[ax], ax))


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with axes ``start_dimension:stop_dimension`` merged into one (Python slice rules).

    >>> lax.collapse(np.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    aval = _util.aval("collapse", operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(aval.ndim)
    if hi < lo:
        raise ValueError(f"collapse: invalid dimension range [{start_dimension}:{stop_dimension}] for shape "
                         f"{aval.shape}")
    return lax.reshape(operand, aval.shape[:lo] + (math.prod(aval.shape[lo:hi]),) + aval.shape[hi:])


def broadcast_shapes(*shapes):
    """The shape NumPy broadcasting gives ``shapes`` (a ``ValueError`` if they do not broadcast).

    >>> lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    try:
        return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise ValueError(f"broadcast_shapes: incompatible shapes for broadcasting: "
                         f"{tuple(map(tuple, shapes))}") from None


def shape_as_value(shape):
    """``shape`` as an int64 array (JAX's form for shapes that may be symbolic; funcgrad's are static).

    >>> lax.shape_as_value((2, 3))
    array([2, 3])
    """
    return np.asarray(tuple(shape), dtype=np.int64).reshape(len(tuple(shape)))


def dtype(x):
    """The dtype funcgrad computes ``x`` in: an array's dtype, or the default one for a Python
    scalar or a type (``float`` -> float64, ``int`` -> int64, ``bool`` -> bool).

    >>> lax.dtype(1.0), lax.dtype(np.float32)
    (dtype('float64'), dtype('float32'))
    """
    if isinstance(x, type) and x in (bool, int, float, complex):
        return dtypes.python_scalar_dtype(x())
    if isinstance(x, (type, np.dtype, str)):
        return dtypes.canonicalize(x, what="lax.dtype")
    return get_aval_any(x).dtype


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values are unspecified (funcgrad gives zeros)."""
    dt = dtypes.canonicalize(dtype, what="empty dtype")
    shape = tuple(_util.static_int("empty", d, "shape") for d in shape)
    return lax.broadcast_in_dim(np.zeros((), dt), shape, ())


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over leading batch axes: ``(..., m, k) @ (..., k, n)`` with equal batch shapes.

    >>> lax.batch_matmul(np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape
    (2, 3, 5)
    """
    la, ra = _util.aval("batch_matmul", lhs, "lhs"), _util.aval("batch_matmul", rhs, "rhs")
    if la.ndim < 2 or la.ndim != ra.ndim or la.shape[:-2] != ra.shape[:-2] or la.shape[-1] != ra.shape[-2]:
        raise ValueError(f"batch_matmul: shapes {la.shape} and {ra.shape} must be (..., m, k) and (..., k, n) "
                         "with the same batch axes")
    batch = tuple(range(la.ndim - 2))
    return dot_general(lhs, rhs, (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch)), precision=precision)


def _approx_k(fname, operand, k, reduction_dimension, largest):
    aval = _util.aval(fname, operand)
    ax = _util.axis(fname, reduction_dimension, aval.ndim, aval.shape, "reduction_dimension")
    last = aval.ndim - 1
    x = operand if ax == last else lax.transpose(operand, tuple(d for d in range(aval.ndim) if d != ax) + (ax,))
    def flip(v):  # order-reversing and its own inverse (no overflow: ~v for signed, max - v unsigned)
        if aval.dtype.kind == "f":
            return lax.neg(v)
        if aval.dtype.kind == "i":
            return lax.bitwise_not(v)
        return lax.sub(lax.broadcast_in_dim(np.asarray(np.iinfo(aval.dtype).max, aval.dtype),
                                            get_aval_any(v).shape, ()), v)

    if not largest:
        x = flip(x)
    values, indices = top_k(x, k)
    if not largest:
        values = flip(values)
    if ax != last:
        back = tuple(range(ax)) + (last,) + tuple(range(ax, last))
        values, indices = lax.transpose(values, back), lax.transpose(indices, back)
    return values, indices


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The ``k`` largest values along ``reduction_dimension`` and their indices. JAX's
    approximate search may miss some at ``recall_target``; on the CPU it is exact, as here.

    >>> lax.approx_max_k(np.array([3.0, 1.0, 4.0, 1.5]), 2)[1]
    Array([2, 0], dtype=int32)
    """
    return _approx_k("approx_max_k", operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The ``k`` smallest values along ``reduction_dimension`` and their indices (exact)."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, False)


def _group_masks(fname, group_sizes, m, dtype_of_rows):
    """(g, m) 0/1 matrix: row ``i`` of the ragged axis belongs to group ``j``."""
    gs = _util.aval(fname, group_sizes, "group_sizes")
    if gs.ndim != 1 or gs.dtype.kind not in "iu":
        raise ValueError(f"{fname}: group_sizes must be a 1-d integer array, got {gs.str_short()}")
    ends = lax.cumsum(lax.convert_element_type(group_sizes, np.int64), 0)
    starts = lax.sub(ends, lax.convert_element_type(group_sizes, np.int64))
    rows = lax.iota(np.int64, m)
    g = gs.shape[0]
    r = lax.broadcast_in_dim(rows, (g, m), (1,))
    inside = lax.bitwise_and(lax.ge(r, lax.broadcast_in_dim(starts, (g, m), (0,))),
                             lax.lt(r, lax.broadcast_in_dim(ends, (g, m), (0,))))
    return lax.convert_element_type(inside, dtype_of_rows)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None,
               out_sharding=None):
    """Grouped matrix product: ``lhs`` ``(m, k)``'s rows come in consecutive groups of
    ``group_sizes`` ``(g,)``; group ``j``'s rows multiply ``rhs[j]`` (``rhs`` ``(g, k, n)``).
    Rows past ``sum(group_sizes)`` give zeros. Result ``(m, n)``.

    >>> lax.ragged_dot(np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)]), np.array([1, 2]))
    Array([[1., 1.],
           [2., 2.],
           [2., 2.]])
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset (for sharded groups) is not supported by funcgrad")
    la, ra = _util.aval("ragged_dot", lhs, "lhs"), _util.aval("ragged_dot", rhs, "rhs")
    if la.ndim != 2 or ra.ndim != 3 or la.shape[1] != ra.shape[1]:
        raise ValueError(f"ragged_dot: lhs (m, k) and rhs (g, k, n) expected, got {la.shape} and {ra.shape}")
    products = dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision=precision,
                           preferred_element_type=preferred_element_type)  # (m, g, n)
    out_dtype = get_aval_any(products).dtype
    masks = _group_masks("ragged_dot", group_sizes, la.shape[0], out_dtype)  # (g, m)
    if get_aval_any(group_sizes).shape[0] != ra.shape[0]:
        raise ValueError(f"ragged_dot: group_sizes has {get_aval_any(group_sizes).shape[0]} groups, rhs {ra.shape[0]}")
    return lax.reduce_sum(lax.mul(products, lax.broadcast_in_dim(lax.transpose(masks, (1, 0)),
                                                                 get_aval_any(products).shape, (0, 1))), (1,))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """``ragged_dot`` with explicit dimension numbers. funcgrad supports the form ``ragged_dot``
    uses: ``lhs`` ``(m, k)`` ragged in axis 0, ``rhs`` ``(g, k, n)`` grouped in axis 0,
    contracting ``k``; other forms raise ``NotImplementedError`` naming the dimension numbers."""
    dn = ragged_dot_dimension_numbers
    plain = ((((1,), (1,)), ((), ())), (0,), (0,))
    got = (tuple(tuple(map(tuple, p)) for p in dn.dot_dimension_numbers), tuple(dn.lhs_ragged_dimensions),
           tuple(dn.rhs_group_dimensions))
    if got != plain:
        raise NotImplementedError(f"ragged_dot_general: only the ragged_dot form {plain} is supported by "
                                  f"funcgrad, got {got}")
    return ragged_dot(lhs, rhs, group_sizes, precision, preferred_element_type, group_offset)


def composite(decomposition, name, version=0):
    """Mark ``decomposition`` as the composite operation ``name`` (JAX records it for
    backends that have a fused kernel). funcgrad runs the decomposition: the result is
    ``decomposition`` with its name and version attached.

    >>> gelu = lax.composite(lambda x: x * 0.5 * (1 + lax.erf(x / np.sqrt(2))), "my.gelu")
    >>> float(gelu(0.0))
    0.0
    """
    @functools.wraps(decomposition)
    def run(*args, **kwargs):
        return decomposition(*args, **kwargs)

    run.composite_name, run.composite_version = name, version
    return run


def platform_dependent(*args, default=None, **per_platform):
    """Call the branch for the platform running the code: ``cpu=`` (the only platform
    funcgrad has), else ``default``. Other platforms' branches are never called.

    >>> lax.platform_dependent(2.0, cpu=lambda x: x + 1, default=lambda x: x)
    3.0
    """
    unknown = set(per_platform) - {"cpu", "cuda", "rocm", "tpu", "gpu", "METAL"}
    if unknown:
        raise TypeError(f"platform_dependent: unknown platform keyword(s) {sorted(unknown)}")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(f"platform_dependent: no branch for the 'cpu' platform and no default "
                                  f"(branches for {sorted(per_platform)})")
    return branch(*args)
