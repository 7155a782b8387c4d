"""Data-parallel gradients: a loss summed (or averaged) over the rows of chunked Dask arrays.

Each chunk of rows is one task running ``jit(funcgrad.value_and_grad(loss))`` on that
chunk (shipped as its exported program); the per-chunk values and gradients are summed
in a tree of small tasks (``split_every`` parts per node), so nothing but parameter-sized
arrays travels back to the client. For ``reduce="mean"`` (a loss that is a mean over the
rows it is given) each chunk's result is weighted by its share of the rows.
"""
from __future__ import annotations

import functools

import dask
import dask.array as da
import numpy as np

from funcgrad.core import pytree
from funcgrad.dask.shipping import Shipped, as_arrays, describe
from funcgrad.transforms.ad_api import value_and_grad as fg_value_and_grad


def _chunk_result(shipped, weight, *leaves):
    out = shipped(*leaves)
    return out if weight == 1.0 else [o * weight for o in out]


def _sum_parts(*parts):
    return [functools.reduce(np.add, xs) for xs in zip(*parts)]


def _ints(v, what, fname):
    t = (v,) if isinstance(v, int) else tuple(v) if isinstance(v, (tuple, list)) else None
    if t is None or not t or not all(isinstance(i, int) for i in t):
        raise TypeError(f"funcgrad.dask.value_and_grad({fname}): {what} must be an int or a tuple of ints, got {v!r}")
    return t


class DataParallelValueAndGrad:
    """The function ``funcgrad.dask.value_and_grad`` returns (``grad`` drops the value)."""

    def __init__(self, loss, argnums, data_argnums, reduce, client, split_every, with_value):
        self.loss, self.argnums, self.client, self.with_value = loss, argnums, client, with_value
        self._fname = getattr(loss, "__name__", "loss")
        self.data_argnums = _ints(data_argnums, "data_argnums", self._fname)
        _ints(argnums, "argnums", self._fname)
        if reduce not in ("sum", "mean"):
            raise ValueError(f"funcgrad.dask.value_and_grad({self._fname}): reduce must be 'sum' or 'mean', "
                             f"got {reduce!r}")
        if not (isinstance(split_every, int) and split_every >= 2):
            raise ValueError(f"funcgrad.dask.value_and_grad({self._fname}): split_every must be an int >= 2, "
                             f"got {split_every!r}")
        self.reduce, self.split_every = reduce, split_every
        self._shipped = {}  # (param signature, tree, row-chunk sizes) -> (Shipped, grad tree)
        self.__name__ = f"dask_value_and_grad({self._fname})"

    def __call__(self, *args):
        """(value, gradient) as NumPy values (``grad``: the gradient only), computed on the
        cluster (``client``, or Dask's current scheduler)."""
        d, tree = self._graph(args)
        out = self.client.compute(d).result() if self.client is not None else dask.compute(d)[0]
        value, grads = np.asarray(out[0])[()], pytree.tree_unflatten(tree, [np.asarray(g) for g in out[1:]])
        return (value, grads) if self.with_value else grads

    def delayed(self, *args):
        """The same as a ``dask.delayed`` object of ``[value, *gradient leaves]`` (not computed)."""
        return self._graph(args)[0]

    def _graph(self, args):
        n = len(args)
        data_pos = sorted({i % n for i in self.data_argnums if -n <= i < n})
        if len(data_pos) != len(self.data_argnums):
            raise ValueError(f"{self.__name__}: data_argnums {self.data_argnums} do not name distinct positional "
                             f"arguments of the {n} given")
        diff = _ints(self.argnums, "argnums", self._fname)
        if any(i % n in data_pos for i in diff if -n <= i < n):
            raise ValueError(f"{self.__name__}: argnums {self.argnums} and data_argnums {self.data_argnums} overlap")
        data = [args[i] for i in data_pos]
        lead = [x for x in data if isinstance(x, da.Array)]
        if not lead:
            raise TypeError(f"{self.__name__}: no data argument is a dask.array ({[describe(x) for x in data]}); "
                            "use funcgrad.value_and_grad for NumPy arrays")
        nrows, rows = lead[0].shape[0] if lead[0].ndim else None, lead[0].chunks[0] if lead[0].ndim else ()
        if any(np.ndim(x) == 0 or np.shape(x)[0] != nrows for x in data):
            raise ValueError(f"{self.__name__}: the data arguments {data_pos} must share their leading (rows) axis; "
                             f"shapes {[tuple(np.shape(x)) for x in data]}")
        data = [da.from_array(np.asarray(x), chunks=(rows, *np.shape(x)[1:])) if not isinstance(x, da.Array)
                else x.rechunk({0: rows, **{k: -1 for k in range(1, x.ndim)}}) for x in data]
        others = as_arrays([a for i, a in enumerate(args) if i not in data_pos])
        p_leaves, p_tree = pytree.tree_flatten(others)
        shipped, g_tree = self._program(n, data_pos, p_leaves, p_tree, data, rows)
        blocks = [x.to_delayed().ravel() for x in data]
        task = dask.delayed(_chunk_result, pure=True)
        parts = [task(shipped, c / nrows if self.reduce == "mean" else 1.0, *p_leaves, *[b[k] for b in blocks])
                 for k, c in enumerate(rows)]
        while len(parts) > 1:
            parts = [dask.delayed(_sum_parts, pure=True)(*parts[i:i + self.split_every])
                     for i in range(0, len(parts), self.split_every)]
        return parts[0], g_tree

    def _program(self, n, data_pos, p_leaves, p_tree, data, rows):
        sig_key = (tuple((x.shape, x.dtype.str) for x in p_leaves), p_tree, tuple(data_pos),
                   tuple((x.shape[1:], x.dtype.str) for x in data), tuple(sorted(set(rows))))
        hit = self._shipped.get(sig_key)
        if hit is not None:
            return hit
        grad_tree = []
        vg = fg_value_and_grad(self.loss, argnums=self.argnums)
        n_p = len(p_leaves)

        def chunk_vg(*xs):
            it_o = iter(pytree.tree_unflatten(p_tree, list(xs[:n_p])))
            it_d = iter(xs[n_p:])
            value, grads = vg(*[next(it_d) if i in data_pos else next(it_o) for i in range(n)])
            leaves, tree = pytree.tree_flatten(grads)
            grad_tree.append(tree)
            return [value, *leaves]

        sigs = [[*p_leaves, *[np.empty((c, *x.shape[1:]), x.dtype) for x in data]] for c in sorted(set(rows))]
        shipped = Shipped(chunk_vg, sigs, self.__name__)
        self._shipped[sig_key] = (shipped, grad_tree[0])
        return shipped, grad_tree[0]


def value_and_grad(loss, argnums=0, *, data_argnums=(1,), reduce="sum", client=None, split_every=8):
    """``funcgrad.value_and_grad`` of a loss over data held in chunked Dask arrays.

    >>> import dask.array as da
    >>> def loss(w, X, y):
    ...     return fnp.sum((X @ w - y) ** 2)
    >>> X = da.from_array(np.arange(8.0).reshape(4, 2) / 8, chunks=(2, 2))   # chunked by rows
    >>> y = da.from_array(np.array([0.0, 1.0, 0.0, 1.0]), chunks=2)
    >>> vg = funcgrad.dask.value_and_grad(loss, data_argnums=(1, 2))
    >>> vg(np.array([1.0, -1.0]), X, y)   # NumPy results
    (np.float64(2.5625), array([-2.375, -3.   ]))

    ``loss(*args)`` must be a sum (``reduce="sum"``) or a mean (``reduce="mean"``) over
    the rows (leading axis) of the arguments at ``data_argnums``, which are Dask arrays
    (NumPy ones are chunked like the first Dask one) sharing their row chunks. The
    gradient is taken with respect to ``argnums`` (none of them data), as
    ``funcgrad.value_and_grad``; the result equals it on the whole data up to the order of
    summation. Other arguments are passed to every task. Each call computes on the
    cluster: ``persist()`` the data first so an optimiser loop does not reload it.
    ``has_aux`` is not supported (an auxiliary output has no reduction).
    """
    return DataParallelValueAndGrad(loss, argnums, data_argnums, reduce, client, split_every, True)


def grad(loss, argnums=0, *, data_argnums=(1,), reduce="sum", client=None, split_every=8):
    """``funcgrad.dask.value_and_grad`` without the value (``funcgrad.grad``'s result)."""
    return DataParallelValueAndGrad(loss, argnums, data_argnums, reduce, client, split_every, False)
