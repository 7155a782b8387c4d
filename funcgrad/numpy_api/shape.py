"""funcgrad.numpy: shape and structure functions (reshape, transpose, tile, flip, pad, ...);
joining and splitting (concatenate, stack, split) are in ``joining.py``.

Each function is a composite of the structural primitives (``broadcast_in_dim``,
``reshape``, ``transpose``, ``rev``, ``concatenate``, ``pad``, ``slice``,
``dynamic_slice``, ``gather``); NumPy is used only for static metadata (shapes, axes,
split points, repeat counts). Eager results equal NumPy's in values, shape and dtype.

Choices where funcgrad differs from NumPy:
- funcgrad arrays are immutable, so whether a result is a view or a copy never shows;
- shapes are static: sizes, axes, ``split`` points, ``repeat`` counts, ``tile`` reps and
  ``pad`` widths must be concrete (a traced value raises a ``ConcretizationError``).
  ``roll`` also accepts a traced integer ``shift`` (via ``dynamic_slice``);
- ``order=`` other than ``'C'`` is rejected (``pad`` is in ``padding.py``);
- dtype promotion across inputs (``concatenate``, ``stack``, ...) follows NumPy for
  arrays: Python scalars inside the inputs are converted to arrays first (not weak).
"""
from __future__ import annotations

import operator

import numpy as np

from funcgrad import errors
from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import (
    asarray,
    aval_of,
    broadcast_shapes,
    canonicalize_axes,
    canonicalize_axis,
    check_arraylike,
    is_tracer,
    shape_of,
)

__all__ = [
    "shape", "ndim", "size",
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
    "tile", "repeat", "broadcast_to", "broadcast_arrays",
    "flip", "fliplr", "flipud", "roll", "rot90", "atleast_1d", "atleast_2d", "atleast_3d",
    "diagonal", "trace", "copy",
]


# --- helpers (public names: joining.py shares them) ----------------------------------
def array_arg(x, fname):
    check_arraylike(fname, x)
    return asarray(x, fname=fname)


def static_int(v, fname: str, what: str) -> int:
    if is_tracer(v):
        raise errors.ConcretizationError(
            f"{fname}: {what} must be a concrete integer, got a traced value {v.aval.str_short()}. "
            "Shapes are static in funcgrad; pass a Python int (or mark the argument static under jit)."
        )
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be an integer, got {type(v).__name__}") from None


def _static_ints(v, fname: str, what: str) -> tuple:
    """An int or a sequence of ints as a tuple of Python ints."""
    if isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim > 0):
        return tuple(static_int(d, fname, what) for d in v)
    return (static_int(v, fname, what),)


def _check_order(fname, order):
    if order not in ("C", "A", "K", None):
        raise NotImplementedError(f"{fname}: only order='C' is supported, got order={order!r}")


def check_out(fname, out):
    if out is not None:
        raise NotImplementedError(f"{fname}: the 'out' argument is not supported (funcgrad arrays are immutable)")


def cast(x, dtype):
    if is_tracer(x):
        return lax.convert_element_type(x, dtype)  # also drops a weak type
    return x if x.dtype == dtype else x.astype(dtype)


def unstack(x):
    """The sub-arrays along axis 0 of an array (NumPy iterates an array argument)."""
    shp = shape_of(x)
    if not shp:
        raise TypeError("iteration over a 0-d array")
    return [lax.reshape(lax.slice(x, (i,) + (0,) * (len(shp) - 1), (i + 1,) + shp[1:]), shp[1:]) for i in range(shp[0])]


def slice_axis(x, axis, start, stop, step=1):
    shp = shape_of(x)
    starts = [0] * len(shp)
    limits = list(shp)
    strides = [1] * len(shp)
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return lax.slice(x, starts, limits, strides)


# --- metadata -----------------------------------------------------------------------------
def shape(a) -> tuple:
    """The shape of ``a`` (static), e.g. ``fnp.shape([[1, 2, 3]]) == (1, 3)``."""
    return np.shape(a) if not is_tracer(a) and not isinstance(a, (list, tuple)) else aval_of(a).shape


def ndim(a) -> int:
    """The number of dimensions of ``a`` (static)."""
    return len(shape(a))


def size(a, axis=None) -> int:
    """The number of elements of ``a``, or along ``axis`` (an int or a tuple of ints)."""
    shp = shape(a)
    if axis is None:
        return int(np.prod(shp, dtype=np.int64))
    axes = canonicalize_axes(axis, len(shp), "size")
    return int(np.prod([shp[i] for i in axes], dtype=np.int64))


# --- reshaping ----------------------------------------------------------------------------
def _resolve_shape(fname, old_shape, new_shape) -> tuple:
    new_shape = list(_static_ints(new_shape, fname, "shape"))
    total = int(np.prod(old_shape, dtype=np.int64))
    unknown = [i for i, d in enumerate(new_shape) if d < 0]
    if len(unknown) > 1:
        raise ValueError(f"{fname}: can only specify one unknown dimension (-1), got shape {tuple(new_shape)}")
    if unknown:
        known = int(np.prod([d for d in new_shape if d >= 0], dtype=np.int64))
        if known == 0 or total % known:
            raise ValueError(
                f"{fname}: cannot reshape array of shape {tuple(old_shape)} (size {total}) into shape "
                f"{tuple(new_shape)}"
            )
        new_shape[unknown[0]] = total // known
    if int(np.prod(new_shape, dtype=np.int64)) != total:
        raise ValueError(
            f"{fname}: cannot reshape array of shape {tuple(old_shape)} (size {total}) into shape {tuple(new_shape)}"
        )
    return tuple(new_shape)


def reshape(a, shape, order="C", *, copy=None):
    """``a`` with a new shape (row-major); one dimension may be -1.

    >>> fnp.reshape(fnp.arange(6), (2, -1)).shape
    (2, 3)
    """
    _check_order("reshape", order)
    x = array_arg(a, "reshape")
    return lax.reshape(x, _resolve_shape("reshape", shape_of(x), shape))


def ravel(a, order="C"):
    """``a`` flattened to one dimension (row-major)."""
    _check_order("ravel", order)
    x = array_arg(a, "ravel")
    return lax.reshape(x, (int(np.prod(shape_of(x), dtype=np.int64)),))


def transpose(a, axes=None):
    """Permute the axes of ``a``; ``axes=None`` reverses them."""
    x = array_arg(a, "transpose")
    nd = len(shape_of(x))
    if axes is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        perm = tuple(canonicalize_axis(ax, nd, "transpose") for ax in _static_ints(axes, "transpose", "axes"))
        if len(perm) != nd:
            raise ValueError(f"transpose: axes {tuple(axes)} don't match array of rank {nd}")
        if len(set(perm)) != nd:
            raise ValueError(f"transpose: repeated axis in transpose, got axes {tuple(axes)}")
    return lax.transpose(x, perm)


def swapaxes(a, axis1, axis2):
    """``a`` with ``axis1`` and ``axis2`` interchanged."""
    x = array_arg(a, "swapaxes")
    nd = len(shape_of(x))
    i, j = canonicalize_axis(axis1, nd, "swapaxes"), canonicalize_axis(axis2, nd, "swapaxes")
    perm = list(range(nd))
    perm[i], perm[j] = j, i
    return lax.transpose(x, perm)


def _axis_tuple(axis, nd, fname, argname):
    axes = tuple(canonicalize_axis(ax, nd, fname) for ax in _static_ints(axis, fname, argname))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: repeated axis in `{argname}` argument {axis}")
    return axes


def moveaxis(a, source, destination):
    """Move axes ``source`` to positions ``destination``; the others keep their order."""
    x = array_arg(a, "moveaxis")
    nd = len(shape_of(x))
    src = _axis_tuple(source, nd, "moveaxis", "source")
    dst = _axis_tuple(destination, nd, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same number of elements")
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(x, order)


def squeeze(a, axis=None):
    """Remove length-one axes (all of them, or those in ``axis``)."""
    x = array_arg(a, "squeeze")
    shp = shape_of(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(shp) if d == 1)
    else:
        axes = canonicalize_axes(axis, len(shp), "squeeze")
        bad = [i for i in axes if shp[i] != 1]
        if bad:
            raise ValueError(
                f"squeeze: cannot select an axis to squeeze out which has size not equal to one "
                f"(axis {bad[0]} of shape {shp} has size {shp[bad[0]]})"
            )
    return lax.reshape(x, tuple(d for i, d in enumerate(shp) if i not in axes))


def expand_dims(a, axis):
    """Insert length-one axes at positions ``axis`` (an int or a tuple) of the result."""
    x = array_arg(a, "expand_dims")
    shp = shape_of(x)
    axes = _static_ints(axis, "expand_dims", "axis")
    out_nd = len(shp) + len(axes)
    axes = tuple(canonicalize_axis(ax, out_nd, "expand_dims") for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    it = iter(shp)
    return lax.reshape(x, tuple(1 if i in axes else next(it) for i in range(out_nd)))


def atleast(x, n, fname):
    x = array_arg(x, fname)
    shp = shape_of(x)
    if len(shp) >= n:
        return x
    if n == 1:
        new = (1,)
    elif n == 2:
        new = (1,) + shp if shp else (1, 1)
    else:
        new = {0: (1, 1, 1), 1: (1,) + shp + (1,), 2: shp + (1,)}[len(shp)]
    return lax.reshape(x, new)


def _atleast_nd(n, arys):
    out = [atleast(a, n, f"atleast_{n}d") for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """Each input with at least one dimension; one input gives an array, several a tuple."""
    return _atleast_nd(1, arys)


def atleast_2d(*arys):
    """Each input with at least two dimensions (a 1-d ``(N,)`` becomes ``(1, N)``)."""
    return _atleast_nd(2, arys)


def atleast_3d(*arys):
    """Each input with at least three dimensions: ``(N,) -> (1, N, 1)``, ``(M, N) -> (M, N, 1)``."""
    return _atleast_nd(3, arys)


# --- repeating and broadcasting -----------------------------------------------------------
def tile(A, reps):
    """``A`` repeated ``reps`` times per axis (broadcast into interleaved axes, then merged)."""
    x = array_arg(A, "tile")
    reps = _static_ints(reps, "tile", "reps")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative dimensions are not allowed in reps {reps}")
    nd = len(shape_of(x))
    d = max(len(reps), nd)
    shp = (1,) * (d - nd) + shape_of(x)
    reps = (1,) * (d - len(reps)) + reps
    big = tuple(v for r, s in zip(reps, shp) for v in (r, s))  # (r0, s0, r1, s1, ...)
    y = lax.broadcast_in_dim(x, big, tuple(range(2 * (d - nd) + 1, 2 * d, 2)))
    return lax.reshape(y, tuple(r * s for r, s in zip(reps, shp)))


def repeat(a, repeats, axis=None):
    """Repeat elements of ``a``: ``repeats`` is a static int, or one static count per element
    along ``axis``; ``axis=None`` works on the flattened array."""
    x = array_arg(a, "repeat")
    if axis is None:
        x, axis = ravel(x), 0
    shp = shape_of(x)
    axis = canonicalize_axis(axis, len(shp), "repeat")
    if is_tracer(repeats) or (isinstance(repeats, (list, tuple)) and any(map(is_tracer, repeats))):
        raise errors.ConcretizationError(
            "repeat: repeats must be concrete (a Python int or a NumPy array), not a traced value, "
            "because they decide the output shape. Pass them as a constant or mark them static under jit."
        )
    r = np.asarray(repeats)
    if r.dtype.kind not in "iub":
        raise TypeError(f"repeat: repeats must be integers, got dtype {r.dtype}")
    if r.ndim > 1:
        raise ValueError(f"repeat: repeats must be a scalar or 1-d, got shape {r.shape}")
    if (r < 0).any():
        raise ValueError("repeat: repeats may not contain negative values")
    n = shp[axis]
    if r.size == 1:  # uniform: broadcast into a new axis after `axis`, then merge the two
        k = int(r.reshape(()))
        big = shp[: axis + 1] + (k,) + shp[axis + 1:]
        dims = tuple(i for i in range(len(big)) if i != axis + 1)
        y = lax.broadcast_in_dim(x, big, dims)
        return lax.reshape(y, shp[:axis] + (n * k,) + shp[axis + 1:])
    if r.size != n:
        raise ValueError(f"repeat: operands could not be broadcast together with shape ({n},) {r.shape}")
    idx = np.repeat(np.arange(n, dtype=np.int64), r.astype(np.int64))[:, None]
    front = moveaxis(x, axis, 0)
    return moveaxis(lax.gather(front, idx), 0, axis)


def broadcast_to(array, shape):
    """``array`` broadcast to ``shape`` with NumPy's trailing-dimension rules."""
    x = array_arg(array, "broadcast_to")
    shape = _static_ints(shape, "broadcast_to", "shape")
    if any(d < 0 for d in shape):
        raise ValueError(f"broadcast_to: all elements of broadcast shape must be non-negative, got {shape}")
    shp = shape_of(x)
    if len(shape) < len(shp) or any(s not in (1, t) for s, t in zip(shp[::-1], shape[::-1])):
        raise ValueError(f"broadcast_to: cannot broadcast an array of shape {shp} to the requested shape {shape}")
    return lax.broadcast_to_rank(x, shape)


def broadcast_arrays(*args):
    """The arguments broadcast against each other; returns a list, as JAX and the array
    API standard do (NumPy 2 returns a tuple)."""
    xs = [array_arg(a, "broadcast_arrays") for a in args]
    shp = broadcast_shapes("broadcast_arrays", *[shape_of(x) for x in xs])
    return [lax.broadcast_to_rank(x, shp) for x in xs]


# --- reordering ---------------------------------------------------------------------------
def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (None: all axes)."""
    x = array_arg(m, "flip")
    axes = canonicalize_axes(axis, len(shape_of(x)), "flip")
    if not axes and isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]  # NumPy gives a scalar for a 0-d input
    return lax.rev(x, axes)


def fliplr(m):
    """Reverse along axis 1 (left/right); needs at least 2 dimensions."""
    x = array_arg(m, "fliplr")
    if len(shape_of(x)) < 2:
        raise ValueError(f"fliplr: Input must be >= 2-d, got shape {shape_of(x)}.")
    return lax.rev(x, (1,))


def flipud(m):
    """Reverse along axis 0 (up/down); needs at least 1 dimension."""
    x = array_arg(m, "flipud")
    if len(shape_of(x)) < 1:
        raise ValueError("flipud: Input must be >= 1-d.")
    return lax.rev(x, (0,))


def _roll_static(x, k, axis):
    n = shape_of(x)[axis]
    if n == 0 or k % n == 0:
        return x
    k %= n
    return lax.concatenate([slice_axis(x, axis, n - k, n), slice_axis(x, axis, 0, n - k)], axis)


def _roll_traced(x, s, axis):
    """Roll by a traced scalar: a window of ``concatenate([x, x])`` starting at ``(-s) mod n``."""
    shp = shape_of(x)
    n = shp[axis]
    if n == 0:
        return x
    if s.aval.dtype.kind not in "iu" or s.aval.shape != ():
        raise TypeError(f"roll: a traced shift must be an integer scalar, got {s.aval.str_short()}")
    s = lax.convert_element_type(s, np.int64)
    nn = np.int64(n)
    start = lax.rem(lax.sub(nn, lax.rem(s, nn)), nn)
    starts = [np.int64(0)] * len(shp)
    starts[axis] = start
    return lax.dynamic_slice(lax.concatenate([x, x], axis), starts, shp)


def roll(a, shift, axis=None):
    """Roll elements along ``axis`` (None: the flattened array); ``shift`` and ``axis`` may
    be sequences (broadcast together). ``shift`` may be a traced integer."""
    x = array_arg(a, "roll")
    shp = shape_of(x)
    if axis is None:
        return lax.reshape(roll(ravel(x), shift, 0), shp)
    if isinstance(shift, (list, tuple)) and any(map(is_tracer, shift)):
        shifts = list(shift)
    elif is_tracer(shift):
        if shift.aval.ndim > 1:
            raise ValueError("roll: 'shift' and 'axis' should be scalars or 1D sequences")
        shifts = [shift] if shift.aval.ndim == 0 else unstack(shift)
    else:
        sh = np.asarray(shift)
        if sh.ndim > 1:
            raise ValueError("roll: 'shift' and 'axis' should be scalars or 1D sequences")
        shifts = sh.reshape(-1).tolist()
    axes = list(_static_ints(axis, "roll", "axis"))
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shape mismatch: shift {shift} and axis {axis} cannot be broadcast together")
    totals = {}
    for s, ax in zip(shifts, axes):
        ax = canonicalize_axis(ax, len(shp), "roll")
        if is_tracer(s):
            x = _roll_traced(x, s, ax)
        else:
            totals[ax] = totals.get(ax, 0) + static_int(s, "roll", "shift")
    for ax, k in totals.items():
        x = _roll_static(x, k, ax)
    return x


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first towards
    the second axis)."""
    x = array_arg(m, "rot90")
    nd = len(shape_of(x))
    axes = _static_ints(axes, "rot90", "axes")
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError(f"rot90: Axes must be different, got {axes}.")
    if not all(-nd <= ax < nd for ax in axes):
        raise ValueError(f"rot90: Axes={axes} out of range for array of ndim={nd}.")
    k = static_int(k, "rot90", "k") % 4
    a0, a1 = axes[0] % nd, axes[1] % nd
    if k == 0:
        return x
    if k == 2:
        return lax.rev(x, sorted((a0, a1)))
    perm = list(range(nd))
    perm[a0], perm[a1] = a1, a0
    if k == 1:
        return lax.transpose(lax.rev(x, (a1,)), perm)
    return lax.rev(lax.transpose(x, perm), (a1,))


# --- diagonals ------------------------------------------------------------------------------
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of the 2-d sub-arrays over ``axis1``/``axis2``, as a new last axis.

    Implemented without gather: move the two axes last, slice the ``L x L`` square that
    holds the diagonal, flatten it and take every ``(L+1)``-th element.
    """
    x = array_arg(a, "diagonal")
    nd = len(shape_of(x))
    if nd < 2:
        raise ValueError(f"diagonal: diag requires an array of at least two dimensions, got shape {shape_of(x)}")
    i, j = canonicalize_axis(axis1, nd, "diagonal"), canonicalize_axis(axis2, nd, "diagonal")
    if i == j:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    offset = static_int(offset, "diagonal", "offset")
    x = lax.transpose(x, [d for d in range(nd) if d not in (i, j)] + [i, j])
    *batch, n, m = shape_of(x)
    batch = tuple(batch)
    if offset >= 0:
        r0, c0, size_ = 0, offset, min(n, m - offset)
    else:
        r0, c0, size_ = -offset, 0, min(n + offset, m)
    if size_ <= 0:
        r0 = c0 = size_ = 0
    zeros = (0,) * len(batch)
    square = lax.slice(x, zeros + (r0, c0), batch + (r0 + size_, c0 + size_))
    flat = lax.reshape(square, batch + (size_ * size_,))
    return lax.slice(flat, zeros + (0,), batch + (size_ * size_,), (1,) * len(batch) + (size_ + 1,))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal; bool and signed ints accumulate in int64, unsigned ints in
    uint64, like ``numpy.sum``."""
    check_out("trace", out)
    d = diagonal(a, offset, axis1, axis2)
    aval = aval_of(d)
    if dtype is None:
        acc = {"b": np.dtype(np.int64), "i": np.dtype(np.int64), "u": np.dtype(np.uint64)}.get(
            aval.dtype.kind, aval.dtype)
    else:
        acc = dtypes.canonicalize(dtype, what="trace dtype")
    last = (aval.ndim - 1,)
    if acc.kind == "b":  # a bool sum is a logical or
        return lax.convert_element_type(lax.reduce_sum(cast(d, np.dtype(np.int64)), last), acc)
    return lax.reduce_sum(cast(d, acc), last)


def copy(a, order="K", subok=False):
    """A copy of ``a`` (eagerly a fresh ndarray; traced values are immutable, so the same value)."""
    x = array_arg(a, "copy")
    return x if is_tracer(x) else np.array(x, copy=True)
