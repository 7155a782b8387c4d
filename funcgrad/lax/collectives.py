"""The rest of ``jax.lax``'s collectives over a named ``vmap`` axis, as composites of
``all_gather``, ``psum`` and ``axis_index`` (so they differentiate and batch as those do):
``ppermute``, ``pshuffle``, ``pbroadcast``, ``all_to_all``, ``pswapaxes``, ``psum_scatter``,
``pcast``, and ``with_sharding_constraint`` (one device: the identity). Each takes a pytree
``x`` and one axis name.

>>> import funcgrad as fg
>>> fg.vmap(lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")(np.arange(3.0))
Array([2., 0., 1.])
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.trace import get_aval_any
from funcgrad.lax import _util
from funcgrad.transforms.collectives import all_gather, axis_index, axis_size, psum

__all__ = ["all_to_all", "pbroadcast", "pcast", "ppermute", "pshuffle", "psum_scatter", "pswapaxes",
           "with_sharding_constraint"]


def _fnp():
    from funcgrad import numpy as fnp

    return fnp


def _one_name(fname, axis_name):
    if isinstance(axis_name, (tuple, list)):
        if len(axis_name) != 1:
            raise NotImplementedError(f"{fname}: one axis name at a time in funcgrad, got {tuple(axis_name)}")
        axis_name = axis_name[0]
    return axis_name


def ppermute(x, axis_name, perm):
    """Send each example's ``x`` to another: ``perm`` lists ``(source, destination)`` pairs
    (each index at most once on each side); an example no pair sends to gets zeros.

    >>> import funcgrad as fg
    >>> fg.vmap(lambda x: lax.ppermute(x, "i", [(0, 1)]), axis_name="i")(np.array([5.0, 6.0]))
    Array([0., 5.])
    """
    fnp = _fnp()
    axis_name = _one_name("ppermute", axis_name)
    n = axis_size(axis_name)
    perm = [(int(s), int(d)) for s, d in perm]
    sources, dests = [s for s, _ in perm], [d for _, d in perm]
    if len(set(sources)) != len(sources) or len(set(dests)) != len(dests) or \
            any(not 0 <= i < n for i in sources + dests):
        raise ValueError(f"ppermute: perm {perm} must have distinct sources and distinct destinations in "
                         f"range({n}) (the size of axis {axis_name!r})")
    table = np.full(n, -1, np.int64)
    for s, d in perm:
        table[d] = s
    src = fnp.asarray(table)[axis_index(axis_name)]

    def leaf(v):
        gathered = all_gather(v, axis_name)
        picked = fnp.take(gathered, fnp.maximum(src, 0), axis=0)
        return fnp.where(src >= 0, picked, fnp.zeros_like(picked))

    return pytree.tree_map(leaf, x)


def pshuffle(x, axis_name, perm):
    """Example ``i`` gets the ``x`` of example ``perm[i]`` (``perm`` a permutation of the axis)."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"pshuffle: perm {perm} is not a permutation of range({len(perm)})")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pbroadcast(x, axis_name, source):
    """Every example gets the ``x`` of example ``source``."""
    fnp = _fnp()
    axis_name = _one_name("pbroadcast", axis_name)
    n = axis_size(axis_name)
    if not 0 <= int(source) < n:
        raise ValueError(f"pbroadcast: source {source} is out of range for axis {axis_name!r} of size {n}")
    return pytree.tree_map(lambda v: fnp.take(all_gather(v, axis_name), int(source), axis=0), x)


def _piece(fnp, v, axis, index, n, tiled, fname, argname, shown):
    """Slice ``index`` (a traced scalar) of ``n`` along ``axis`` of ``v``: one entry (removed)
    or, with ``tiled``, one chunk of ``shape[axis] // n``. Errors name the user's
    ``argname``, whose value is ``shown`` (``axis`` may count a gathered leading axis)."""
    length = get_aval_any(v).shape[axis]
    if tiled:
        if length % n:
            raise ValueError(f"{fname}: {argname}={shown} has length {length}, which does not split into {n} "
                             f"chunks (the size of the named axis)")
        chunk = length // n
        return fnp.take(v, index * chunk + fnp.arange(chunk), axis=axis)
    if length != n:
        raise ValueError(f"{fname}: {argname}={shown} has length {length}, not the size {n} of the named axis "
                         f"(or pass tiled=True)")
    return fnp.take(v, index, axis=axis)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Example ``i`` gets piece ``i`` (along ``split_axis``) of every example's ``x``, stacked
    (or, ``tiled``, concatenated) along ``concat_axis`` in example order. Untiled, the
    output shape is ``x.shape`` without ``split_axis`` (which must be the axis size) with the
    axis size inserted at ``concat_axis``."""
    fnp = _fnp()
    if axis_index_groups is not None:
        raise NotImplementedError("all_to_all: axis_index_groups is not supported")
    axis_name = _one_name("all_to_all", axis_name)
    n, me = axis_size(axis_name), axis_index(axis_name)

    def leaf(v):
        aval = get_aval_any(v)
        split = _util.axis("all_to_all", split_axis, aval.ndim, aval.shape, "split_axis")
        concat = _util.axis("all_to_all", concat_axis, aval.ndim, aval.shape, "concat_axis")
        gathered = all_gather(v, axis_name)  # (n, *shape): axis 0 is the sender
        mine = _piece(fnp, gathered, split + 1, me, n, tiled, "all_to_all", "split_axis", split_axis)
        if not tiled:
            return fnp.moveaxis(mine, 0, concat)
        moved = fnp.moveaxis(mine, 0, concat)
        shape = get_aval_any(moved).shape
        return fnp.reshape(moved, shape[:concat] + (shape[concat] * shape[concat + 1],) + shape[concat + 2:])

    return pytree.tree_map(leaf, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named vmap axis with the axis ``axis`` of ``x`` (of the same size):
    ``all_to_all(x, axis_name, axis, axis)``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum(x, axis_name)``, of which example ``i`` keeps piece ``i`` along
    ``scatter_dimension`` (an entry, removed; or with ``tiled`` a chunk)."""
    fnp = _fnp()
    if axis_index_groups is not None:
        raise NotImplementedError("psum_scatter: axis_index_groups is not supported")
    axis_name = _one_name("psum_scatter", axis_name)
    n, me = axis_size(axis_name), axis_index(axis_name)

    def leaf(v):
        aval = get_aval_any(v)
        dim = _util.axis("psum_scatter", scatter_dimension, aval.ndim, aval.shape, "scatter_dimension")
        return _piece(fnp, psum(v, axis_name), dim, me, n, tiled, "psum_scatter", "scatter_dimension",
                      scatter_dimension)

    return pytree.tree_map(leaf, x)


_PCAST_TO = ("varying", "invariant", "reduced", "unreduced")


def pcast(x, axis_name, *, to):
    """Change how ``x`` is typed with respect to the named axis (JAX's ``shard_map`` types:
    ``to="varying"``, ...). Values never change; funcgrad's vmap has no such types, so it
    checks the axis is bound and ``to`` is valid and returns ``x``."""
    if to not in _PCAST_TO:
        raise ValueError(f"pcast: to={to!r}; allowed values are {_PCAST_TO}")
    for name in (axis_name if isinstance(axis_name, tuple) else (axis_name,)):
        axis_size(name)
    return x


def with_sharding_constraint(x, shardings):
    """Ask for ``x`` to be laid out across devices as ``shardings`` says. funcgrad runs on one
    device, where every sharding is the whole array: the values are ``x``'s."""
    return x
