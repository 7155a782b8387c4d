"""funcgrad.numpy: joining and splitting arrays (concatenate, stack, split, ...).

Composites of the ``concatenate`` and ``slice`` primitives, like the rest of
``numpy_api/shape.py`` (whose argument helpers they share). Choices where funcgrad
differs from NumPy:
- split points and section counts must be concrete (a traced value raises a
  ``ConcretizationError``);
- dtype promotion across inputs is funcgrad's for arrays (NumPy's, or JAX's under
  ``funcgrad_promotion="jax"``): Python scalars inside the inputs are converted to arrays
  first (not weak).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import aval_of, canonicalize_axis, is_tracer, shape_of
from funcgrad.numpy_api.shape import array_arg, atleast, cast, check_out, ravel, slice_axis, static_int, unstack

__all__ = [
    "concatenate", "stack", "vstack", "hstack", "dstack", "column_stack", "append",
    "split", "array_split",
]


# --- helpers ----------------------------------------------------------------------------
def _promote(fname, xs, dtype=None, casting="same_kind"):
    """Cast ``xs`` to their common dtype (``dtypes.promote``; or to ``dtype``, checking ``casting``)."""
    srcs = [aval_of(x).dtype for x in xs]
    if dtype is None:
        target = dtypes.promote(*srcs)
    else:
        target = dtypes.canonicalize(dtype, what=f"{fname} dtype")
        for i, src in enumerate(srcs):
            if not np.can_cast(src, target, casting):
                raise TypeError(
                    f"{fname}: cannot cast the array at index {i} from dtype {src} to {target} "
                    f"according to the rule {casting!r}"
                )
    return [cast(x, target) for x in xs]


def _seq(fname, arrays):
    if is_tracer(arrays) or isinstance(arrays, np.ndarray):
        return unstack(arrays)
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{fname}: expected a sequence of arrays, got {type(arrays).__name__}")
    return [array_arg(a, fname) for a in arrays]


# --- joining ------------------------------------------------------------------------------
def _concat(fname, xs, axis, dtype=None, casting="same_kind"):
    if not xs:
        raise ValueError(f"{fname}: need at least one array to concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    shapes = [shape_of(x) for x in xs]
    nd = len(shapes[0])
    if any(len(s) == 0 for s in shapes):
        raise ValueError(f"{fname}: zero-dimensional arrays cannot be concatenated")
    for i, s in enumerate(shapes):
        if len(s) != nd:
            raise ValueError(
                f"{fname}: all the input arrays must have same number of dimensions, but the array at "
                f"index 0 has shape {shapes[0]} and the array at index {i} has shape {s}"
            )
    axis = canonicalize_axis(axis, nd, fname)
    for i, s in enumerate(shapes):
        for d in range(nd):
            if d != axis and s[d] != shapes[0][d]:
                raise ValueError(
                    f"{fname}: all the input array dimensions except for the concatenation axis "
                    f"(axis {axis}) must match exactly, but along dimension {d}, the array at index 0 "
                    f"has shape {shapes[0]} and the array at index {i} has shape {s}"
                )
    return lax.concatenate(_promote(fname, xs, dtype, casting), axis)


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis; ``axis=None`` flattens them first.

    >>> fnp.concatenate([fnp.zeros(2), fnp.ones(3)]).shape
    (5,)
    """
    check_out("concatenate", out)
    return _concat("concatenate", _seq("concatenate", arrays), axis, dtype, casting)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join same-shape arrays along a new axis."""
    check_out("stack", out)
    xs = _seq("stack", arrays)
    if not xs:
        raise ValueError("stack: need at least one array to stack")
    shapes = [shape_of(x) for x in xs]
    for i, s in enumerate(shapes):
        if s != shapes[0]:
            raise ValueError(
                f"stack: all input arrays must have the same shape, but the array at index 0 has "
                f"shape {shapes[0]} and the array at index {i} has shape {s}"
            )
    axis = canonicalize_axis(axis, len(shapes[0]) + 1, "stack")
    new = shapes[0][:axis] + (1,) + shapes[0][axis:]
    return _concat("stack", [lax.reshape(x, new) for x in xs], axis, dtype, casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays row-wise (along axis 0, after ``atleast_2d``)."""
    return _concat("vstack", [atleast(x, 2, "vstack") for x in _seq("vstack", tup)], 0, dtype, casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays column-wise (axis 1; axis 0 for 1-d inputs)."""
    xs = [atleast(x, 1, "hstack") for x in _seq("hstack", tup)]
    axis = 0 if xs and len(shape_of(xs[0])) == 1 else 1
    return _concat("hstack", xs, axis, dtype, casting)


def dstack(tup):
    """Stack arrays depth-wise (along axis 2, after ``atleast_3d``)."""
    return _concat("dstack", [atleast(x, 3, "dstack") for x in _seq("dstack", tup)], 2)


def column_stack(tup):
    """Stack 1-d arrays as columns of a 2-d array (2-d inputs are joined along axis 1)."""
    xs = []
    for x in _seq("column_stack", tup):
        shp = shape_of(x)
        xs.append(lax.reshape(x, (shp[0] if shp else 1, 1)) if len(shp) < 2 else x)
    return _concat("column_stack", xs, 1)


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None)."""
    return _concat("append", [array_arg(arr, "append"), array_arg(values, "append")], axis)


# --- splitting ----------------------------------------------------------------------------
def split_sections(fname, ary, indices_or_sections, axis, equal):
    x = array_arg(ary, fname)
    shp = shape_of(x)
    axis = canonicalize_axis(axis, len(shp), fname)
    n = shp[axis]
    ios = indices_or_sections
    if isinstance(ios, (list, tuple)) or (isinstance(ios, np.ndarray) and ios.ndim > 0):
        points = [0] + [static_int(i, fname, "split index") for i in ios] + [n]
        bounds = []
        for lo, hi in zip(points, points[1:]):
            start, stop, _ = slice(lo, hi).indices(n)  # Python slice semantics, like NumPy
            bounds.append((start, max(start, stop)))
    else:
        if is_tracer(ios):
            static_int(ios, fname, "indices_or_sections")
        try:
            sections = int(ios)
        except (TypeError, ValueError):
            raise TypeError(f"{fname}: indices_or_sections must be an integer or a sequence of integers") from None
        if sections <= 0:
            raise ValueError(f"{fname}: number sections must be larger than 0.")
        if equal and n % sections:
            raise ValueError(
                f"{fname}: array split does not result in an equal division (axis {axis} of size {n} "
                f"into {sections} sections)"
            )
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        bounds = list(zip(starts, starts[1:]))
    return [slice_axis(x, axis, lo, hi) for lo, hi in bounds]


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int) or at the given indices; returns a list."""
    return split_sections("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary, indices_or_sections, axis=0):
    """Like ``split``, but an int need not divide the axis: the first sections get one more."""
    return split_sections("array_split", ary, indices_or_sections, axis, equal=False)
