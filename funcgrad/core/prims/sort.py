"""sort: stable sort of several same-shaped operands along one dimension, ordered by
the first ``num_keys`` of them (lexicographically). NaNs sort last, like NumPy.
``argsort`` is sort of (x, iota) with num_keys=1."""
from __future__ import annotations

import numpy as np

from funcgrad.core.primitive import Primitive
from funcgrad.core.prims._checks import check_axes

sort_p = Primitive("sort", multiple_results=True)


@sort_p.def_impl
def _sort_impl(*operands, dimension, num_keys=1):
    ops = [np.asarray(o) for o in operands]
    if ops[0].ndim == 0:
        return ops
    moved = [np.moveaxis(o, dimension, -1) for o in ops]
    # np.lexsort sorts by the *last* key first, and puts NaN last; it is stable.
    keys = moved[:num_keys][::-1]
    order = np.lexsort(keys, axis=-1)
    return [np.moveaxis(np.take_along_axis(o, order, axis=-1), -1, dimension) for o in moved]


@sort_p.def_abstract_eval
def _sort_abstract_eval(*operands, dimension, num_keys=1):
    if not operands or not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: need 1 <= num_keys ({num_keys}) <= number of operands ({len(operands)})")
    shape = operands[0].shape
    for o in operands:
        if o.shape != shape:
            raise TypeError("sort: operands must all have the same shape, got " + ", ".join(a.str_short() for a in operands))
    if operands[0].ndim:
        check_axes("sort", (dimension,), operands[0].ndim, "dimension")
    return list(operands)
