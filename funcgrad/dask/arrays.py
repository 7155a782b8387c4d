"""``map_blocks`` and ``vmap`` over Dask arrays: funcgrad programs as the per-chunk kernels.

Both are lazy: they build a Dask graph whose tasks call a ``Shipped`` program (the
exported form of the function, one per distinct block signature), and return Dask
arrays with their chunks, shapes and dtypes known from tracing the function (what
``funcgrad.eval_shape`` gives), so Dask never calls the function to guess its output.
"""
from __future__ import annotations

import functools
import itertools
import string

import dask
import dask.array as da
import numpy as np

from funcgrad.core import pytree
from funcgrad.dask.shipping import Shipped, as_arrays, describe
from funcgrad.transforms.batching import vmap as fg_vmap


def _with_blocks(f, args, where):
    """``f`` as a function of the Dask blocks only (the other arguments fixed), one output."""
    fixed = [a for i, a in enumerate(args) if i not in where]

    def kernel(*blocks):
        it_b, it_f = iter(blocks), iter(fixed)
        return [f(*[next(it_b) if i in where else next(it_f) for i in range(len(args))])]

    return kernel


def _first(shipped, dtype, *blocks):
    return shipped(*blocks)[0].astype(dtype, copy=False)


def map_blocks(f, *args, dtype=None, chunks=None, drop_axis=None, new_axis=None, name=None, **kwargs):
    """``dask.array.map_blocks`` with ``f`` run as a compiled funcgrad program on each block.

    >>> import dask.array as da
    >>> x = da.from_array(np.linspace(-1.0, 1.0, 6), chunks=3)
    >>> y = funcgrad.dask.map_blocks(lambda x: fnp.tanh(x) ** 2, x)
    >>> y.compute().round(6)
    array([0.580026, 0.288422, 0.038957, 0.038957, 0.288422, 0.580026])

    Dask arrays among ``args`` are aligned and broadcast as ``dask.array.map_blocks``
    does; other arguments and ``kwargs`` are constants baked into the program. The output
    dtype and chunks come from tracing ``f`` on each distinct block shape (so ``f`` may
    change a block's size, e.g. ``x[::2]``, as long as each output dimension follows the
    same input dimension); pass ``chunks`` with ``drop_axis``/``new_axis`` when the
    number of dimensions changes. ``f`` returns one array (``funcgrad.dask.vmap`` returns
    pytrees). ``block_info``/``block_id`` are not passed (the program is fixed per shape).
    """
    fname = f"map_blocks({getattr(f, '__name__', 'f')})"
    where = [i for i, a in enumerate(args) if isinstance(a, da.Array)]
    if not where:
        raise TypeError(f"funcgrad.dask.map_blocks: no dask.array among the {len(args)} positional arguments "
                        f"({', '.join(describe(a) for a in args)}); call {getattr(f, '__name__', 'f')} directly")
    full = [a if i in where else as_arrays(a) for i, a in enumerate(args)]
    g = (lambda *a: f(*a, **kwargs)) if kwargs else f
    arrays = [args[i] for i in where]
    out_nd = max(a.ndim for a in arrays)
    letters = string.ascii_letters[:out_nd]
    inds = [letters[out_nd - a.ndim:] for a in arrays]
    chunkss, arrays = da.core.unify_chunks(*[v for a, i in zip(arrays, inds) for v in (a, i)])
    sizes = [sorted(set(chunkss[c])) for c in letters]
    sigs = []
    for combo in itertools.product(*sizes):
        per = dict(zip(letters, combo))
        sigs.append([np.empty(tuple(1 if a.numblocks[k] == 1 and a.shape[k] == 1 else per[c]
                                    for k, c in enumerate(ind)), a.dtype) for a, ind in zip(arrays, inds)])
    kernel = _with_blocks(g, full, where)
    shipped = Shipped(kernel, sigs, fname)
    outs = [shipped.out_avals(s) for s in sigs]
    if len(outs[0]) != 1:
        raise TypeError(f"funcgrad.dask.map_blocks: {fname} returns {len(outs[0])} arrays; it must return one "
                        "(funcgrad.dask.vmap maps functions that return pytrees)")
    out_dtype = np.dtype(dtype) if dtype is not None else outs[0][0].dtype
    if chunks is None and drop_axis is None and new_axis is None:
        chunks = _derived_chunks(fname, chunkss, letters, sizes, outs)
    ndim = len(chunks) if chunks is not None else outs[0][0].ndim
    meta = np.empty((0,) * ndim, out_dtype)
    run = functools.partial(_first, shipped, out_dtype)
    return da.map_blocks(run, *arrays, dtype=out_dtype, chunks=chunks, drop_axis=drop_axis, new_axis=new_axis,
                         name=name, token=None if name else "fg_map_blocks", meta=meta)


def _derived_chunks(fname, chunkss, letters, sizes, outs):
    """Output chunks when each output dimension's block size follows its input dimension's."""
    out_nd = len(letters)
    if any(o[0].ndim != out_nd for o in outs):
        raise ValueError(f"funcgrad.dask.map_blocks: {fname} turns {out_nd}-d blocks into {outs[0][0].ndim}-d "
                         "ones; pass chunks= (and drop_axis=/new_axis=) to say how the chunks change")
    maps = [dict() for _ in letters]
    for combo, o in zip(itertools.product(*sizes), outs):
        for d, c in enumerate(combo):
            if maps[d].setdefault(c, o[0].shape[d]) != o[0].shape[d]:
                raise ValueError(f"funcgrad.dask.map_blocks: the size of {fname}'s output along axis {d} does "
                                 "not follow the input blocks' size along that axis alone; pass chunks=")
    return tuple(tuple(maps[d][c] for c in chunkss[letters[d]]) for d in range(out_nd))


def vmap(f, in_axes=0, out_axes=0):
    """``funcgrad.vmap`` over the chunked leading axis of Dask arrays, lazily.

    >>> import dask.array as da
    >>> per_row = funcgrad.dask.vmap(lambda r, w: fnp.tanh(r @ w), in_axes=(0, None))   # r: one row
    >>> X = da.from_array(np.arange(8.0).reshape(4, 2), chunks=(2, 2))   # chunked by rows
    >>> out = per_row(X, np.array([0.5, -0.25]))
    >>> out
    dask.array<..., shape=(4,), dtype=float64, chunksize=(2,), chunktype=numpy.ndarray>
    >>> out.compute()
    array([-0.24491866,  0.24491866,  0.63514895,  0.84828364])

    ``in_axes``: an int or None for every positional argument, or a tuple with one per
    argument (applied to every leaf of that argument). Mapped leaves may be Dask or NumPy
    arrays (the axis is moved to the front, the others become one chunk; all share the
    first Dask array's row chunks); unmapped NumPy leaves are constants of the program,
    unmapped Dask arrays are passed whole to every task. Each chunk runs
    ``jit(funcgrad.vmap(f))`` as one task; the result is ``f``'s output pytree of Dask
    arrays, mapped axis at ``out_axes`` (an int for all outputs).
    """
    fname = getattr(f, "__name__", "f")

    def mapped(*args):
        axes = _per_arg_axes(fname, in_axes, len(args))
        flat, leaf_axes, trees = [], [], []
        for a, ax in zip(args, axes):
            leaves, tree = pytree.tree_flatten(a)
            flat += leaves
            leaf_axes += [ax] * len(leaves)
            trees.append(tree)
        return _vmap_flat(f, fname, flat, leaf_axes, trees, out_axes)

    mapped.__name__ = f"dask_vmap({fname})"
    return mapped


def _per_arg_axes(fname, in_axes, nargs):
    if in_axes is None or isinstance(in_axes, int):
        return [in_axes] * nargs
    if isinstance(in_axes, (tuple, list)) and len(in_axes) == nargs and \
            all(a is None or isinstance(a, int) for a in in_axes):
        return list(in_axes)
    raise ValueError(f"funcgrad.dask.vmap({fname}): in_axes must be an int, None, or a tuple of one int/None per "
                     f"positional argument ({nargs} given), got {in_axes!r}")


def _vmap_flat(f, fname, flat, leaf_axes, trees, out_axes):
    moved = {}
    for i, (x, ax) in enumerate(zip(flat, leaf_axes)):
        if ax is not None:
            x = x if isinstance(x, da.Array) else np.asarray(x)
            if not -x.ndim <= ax < x.ndim:
                raise ValueError(f"funcgrad.dask.vmap({fname}): in_axes {ax} is out of range for argument leaf {i} "
                                 f"of shape {x.shape}")
            moved[i] = da.moveaxis(x, ax, 0) if isinstance(x, da.Array) else np.moveaxis(x, ax, 0)
    lead = [m for m in moved.values() if isinstance(m, da.Array)]
    if not lead:
        raise TypeError(f"funcgrad.dask.vmap({fname}): no mapped argument is a dask.array (shapes "
                        f"{[describe(x) for x in flat]}); use funcgrad.vmap for NumPy arrays")
    n, row_chunks = lead[0].shape[0], lead[0].chunks[0]
    if any(m.shape[0] != n for m in moved.values()):
        raise ValueError(f"funcgrad.dask.vmap({fname}): mapped axes have different sizes: "
                         f"{[(i, tuple(m.shape)) for i, m in moved.items()]} (leaf, shape with the mapped axis first)")
    for i, m in moved.items():
        single = {k: -1 for k in range(1, m.ndim)}
        moved[i] = da.from_array(m, chunks=(row_chunks, *m.shape[1:])) if isinstance(m, np.ndarray) \
            else m.rechunk({0: row_chunks, **single})
    dask_unmapped = [i for i, x in enumerate(flat) if i not in moved and isinstance(x, da.Array)]
    inputs = sorted(moved) + dask_unmapped
    consts = {i: np.asarray(x) for i, x in enumerate(flat) if i not in moved and i not in dask_unmapped}

    def per_example(*xs):
        it, full = iter(xs), []
        for i in range(len(flat)):
            full.append(consts[i] if i in consts else next(it))
        args, pos = [], 0
        for t in trees:
            args.append(pytree.tree_unflatten(t, full[pos:pos + t.num_leaves]))
            pos += t.num_leaves
        return f(*args)

    out_tree_cell = []

    def kernel(*xs):
        out = fg_vmap(per_example, in_axes=tuple(0 if i in moved else None for i in inputs))(*xs)
        leaves, tree = pytree.tree_flatten(out)
        out_tree_cell.append(tree)
        return leaves

    whole = {i: flat[i] for i in dask_unmapped}
    sigs = [[np.empty((c, *moved[i].shape[1:]), moved[i].dtype) if i in moved else
             np.empty(whole[i].shape, whole[i].dtype) for i in inputs] for c in sorted(set(row_chunks))]
    shipped = Shipped(kernel, sigs, f"dask_vmap({fname})")
    blocks = {i: moved[i].to_delayed().ravel() for i in moved}
    for i in dask_unmapped:
        blocks[i] = [flat[i].rechunk(-1).to_delayed().ravel()[0]] * len(row_chunks)
    task = dask.delayed(shipped, pure=True)
    pieces = []
    for k, c in enumerate(row_chunks):
        avals = shipped.out_avals([np.empty((c, *moved[i].shape[1:]), moved[i].dtype) if i in moved else whole[i]
                                   for i in inputs])
        res = task(*[blocks[i][k] for i in inputs])
        pieces.append([da.from_delayed(res[j], a.shape, dtype=a.dtype, meta=np.empty((0,) * a.ndim, a.dtype))
                       for j, a in enumerate(avals)])
    outs = [da.concatenate([p[j] for p in pieces], axis=0) for j in range(len(pieces[0]))]
    outs = [o if out_axes == 0 else da.moveaxis(o, 0, out_axes) for o in outs]
    return pytree.tree_unflatten(out_tree_cell[0], outs)
