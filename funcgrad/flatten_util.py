"""``funcgrad.flatten_util``: one flat vector from a pytree of arrays, and back.

>>> flat, unravel = ravel_pytree({"w": fnp.ones((2, 2)), "b": fnp.zeros(3)})
>>> flat.shape                          # (7,): the leaves raveled, in tree order
>>> unravel(flat)["w"].shape            # (2, 2)

As ``jax.flatten_util``: the flat vector's dtype is the promotion of the leaves' dtypes
(NumPy 2 rules; float64 when the tree has no leaves, funcgrad's default float), and
``unravel`` casts each piece back to its leaf's dtype. Both are ordinary funcgrad code, so
they work eagerly and under ``jit``, ``grad`` and ``vmap``.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import dtypes
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def _dtype_of(x) -> np.dtype:
    dtype = getattr(x, "dtype", None)
    return np.dtype(dtype) if dtype is not None else fnp.result_type(x)


def ravel_pytree(pytree):
    """Ravel every leaf of ``pytree`` and concatenate them into one 1-d array.

    Returns ``(flat, unravel)``: ``unravel(flat)`` rebuilds a pytree of the same structure,
    shapes and dtypes. When the leaves' dtypes differ, ``flat`` has their promoted dtype
    and ``unravel`` accepts only arrays of that dtype (a ``TypeError`` otherwise); when
    they agree, ``unravel`` keeps the dtype it is given.
    """
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, _Unravel(treedef, unravel_list)


class _Unravel:
    """``unravel`` of ``ravel_pytree``: a flat vector back to the pytree (a plain object,
    so it is hashable and can be a static argument)."""

    def __init__(self, treedef, unravel_list):
        self.treedef, self.unravel_list = treedef, unravel_list

    def __call__(self, flat):
        return tree_unflatten(self.treedef, self.unravel_list(flat))

    def __repr__(self):
        return f"<unravel for {self.treedef}>"


def _ravel_list(leaves):
    if not leaves:
        return fnp.zeros((0,), np.float64), _UnravelList((), (), None, None)
    from_dtypes = tuple(_dtype_of(x) for x in leaves)
    to_dtype = dtypes.promote(*from_dtypes)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    offsets = tuple(int(o) for o in np.cumsum(sizes))
    if all(d == to_dtype for d in from_dtypes):
        # One dtype: no casts, and unravel keeps whatever dtype it is given.
        flat = fnp.concatenate([fnp.ravel(x) for x in leaves])
        return flat, _UnravelList(offsets, shapes, None, None)
    flat = fnp.concatenate([fnp.ravel(lax.convert_element_type(fnp.asarray(x), to_dtype)) for x in leaves])
    return flat, _UnravelList(offsets, shapes, from_dtypes, to_dtype)


class _UnravelList:
    def __init__(self, offsets, shapes, from_dtypes, to_dtype):
        self.offsets, self.shapes = offsets, shapes
        self.from_dtypes, self.to_dtype = from_dtypes, to_dtype

    def __call__(self, flat):
        total = self.offsets[-1] if self.offsets else 0
        shape = tuple(np.shape(flat))
        if shape != (total,):
            raise ValueError(f"unravel: expected a 1-d array of shape {(total,)} (the raveled pytree), "
                             f"got shape {shape}")
        if self.to_dtype is not None and _dtype_of(flat) != self.to_dtype:
            raise TypeError(f"unravel: given an array of dtype {_dtype_of(flat)}, but the pytree was raveled "
                            f"to dtype {self.to_dtype}")
        starts = (0,) + self.offsets[:-1]
        pieces = [fnp.reshape(flat[a:b], s) for a, b, s in zip(starts, self.offsets, self.shapes)]
        if self.from_dtypes is None:
            return pieces
        return [_cast_back(p, d) for p, d in zip(pieces, self.from_dtypes)]


def _cast_back(piece, dtype):
    if dtype.kind != "c" and _dtype_of(piece).kind == "c":
        piece = fnp.real(piece)  # (as JAX: a complex flat vector back to a real leaf drops the imaginary part)
    return lax.convert_element_type(piece, dtype)
