"""sort: stable sort of several same-shaped operands along one dimension, ordered by
the first ``num_keys`` of them (lexicographically). NaNs sort last, like NumPy.
``argsort`` is sort of (x, iota) with num_keys=1."""
from __future__ import annotations

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core.ad_util import Zero
from funcgrad.core.batch_util import batch_size, bdim_at
from funcgrad.core.primitive import Primitive, batch_rules, jvp_rules
from funcgrad.core.prims._checks import check_axes
from funcgrad.core.trace import get_aval_any

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
            raise TypeError(
                "sort: operands must all have the same shape, got " + ", ".join(a.str_short() for a in operands)
            )
    if operands[0].ndim:
        check_axes("sort", (dimension,), operands[0].ndim, "dimension")
    return list(operands)


def _sort_jvp(primals, tangents, *, dimension, num_keys=1):
    # Sort an iota alongside to learn the permutation, then gather the tangents with it.
    shape = _aval(primals[0]).shape
    if not shape:
        return sort_p.bind(*primals, dimension=dimension, num_keys=num_keys), list(tangents)
    iota = lax.iota(np.int64, shape, dimension)
    *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, num_keys=num_keys)
    idx = [lax.iota(np.int64, shape, d) if d != dimension else perm for d in range(len(shape))]
    indices = lax.concatenate([lax.reshape(i, shape + (1,)) for i in idx], len(shape))
    out_t = [t if type(t) is Zero else lax.gather(t, indices, mode="clip") for t in tangents]
    return outs, out_t


_aval = get_aval_any


jvp_rules[sort_p] = _sort_jvp
ad.nonlinear(sort_p)


def _sort_batch(args, bdims, *, dimension, num_keys=1):
    size = batch_size(args, bdims)
    moved = [bdim_at(x, d, size, 0) for x, d in zip(args, bdims)]
    outs = sort_p.bind(*moved, dimension=dimension + 1, num_keys=num_keys)
    return outs, [0] * len(outs)


batch_rules[sort_p] = _sort_batch

from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives above)
