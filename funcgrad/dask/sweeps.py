"""Parameter sweeps: one function, many parameter sets, run as Dask tasks.

The function is shipped once as its exported program; each task runs a batch of
``batch_size`` parameter sets (``jit(funcgrad.vmap(f))`` over the stacked batch, or
``jit(f)`` on one set when ``batch_size=1``) so Dask's per-task cost is paid once per
batch. With a ``distributed.Client`` the tasks go through ``Client.map``; without one,
through ``dask.delayed`` on Dask's current scheduler.
"""
from __future__ import annotations

import dask
import numpy as np

from funcgrad.core import pytree
from funcgrad.dask.shipping import Shipped, as_arrays
from funcgrad.transforms.batching import vmap as fg_vmap


def sweep(f, params, *, client=None, batch_size=1):
    """``f`` on every parameter set of ``params``, on the cluster; results as NumPy arrays.

    >>> def simulate(k, dt):
    ...     return fnp.exp(-k * dt * fnp.arange(3.0))
    >>> out = funcgrad.dask.sweep(simulate, [(k, 0.1) for k in np.linspace(0, 1, 5)])
    >>> out.shape   # (5, *simulate's output shape); a pytree output gives a pytree
    (5, 3)
    >>> out[-1]
    array([1.        , 0.90483742, 0.81873075])

    ``params``: a list/tuple of parameter sets (a tuple item is ``f``'s positional
    arguments, any other item its one argument) or an array (its rows are the sets). All
    sets share one structure and shapes (``TypeError`` otherwise). The result stacks
    ``f``'s outputs along a new leading axis, in the order of ``params``.
    """
    fname = getattr(f, "__name__", "f")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"funcgrad.dask.sweep({fname}): batch_size must be an int >= 1, got {batch_size!r}")
    items = list(np.asarray(params)) if isinstance(params, np.ndarray) else list(params) \
        if isinstance(params, (list, tuple)) else None
    if items is None:
        raise TypeError(f"funcgrad.dask.sweep({fname}): params must be a list or tuple of parameter sets or an "
                        f"array, got {type(params).__name__}")
    if not items:
        raise ValueError(f"funcgrad.dask.sweep({fname}): params is empty")
    flat = [pytree.tree_flatten(as_arrays(p if isinstance(p, tuple) else (p,))) for p in items]
    tree = flat[0][1]
    sig0 = [(x.shape, x.dtype) for x in flat[0][0]]
    for k, (leaves, t) in enumerate(flat):
        if t != tree or [(x.shape, x.dtype) for x in leaves] != sig0:
            raise TypeError(f"funcgrad.dask.sweep({fname}): parameter set {k} has structure {t} and shapes "
                            f"{[x.shape for x in leaves]}, but set 0 has {tree} and {[s for s, _ in sig0]}")
    out_tree = []

    def one(*leaves):
        leaves_out, t = pytree.tree_flatten(f(*pytree.tree_unflatten(tree, list(leaves))))
        out_tree.append(t)
        return leaves_out

    if batch_size == 1:
        batches = [leaves for leaves, _ in flat]
        kernel = one
    else:
        batches = [[np.stack(col) for col in zip(*[lv for lv, _ in flat[i:i + batch_size]])]
                   for i in range(0, len(flat), batch_size)]

        def kernel(*stacked):
            return fg_vmap(one)(*stacked)

    sizes = {}
    for b in batches:  # one signature per distinct batch length (the last batch may be short)
        sizes.setdefault(len(b[0]) if batch_size > 1 else 1, b)
    shipped = Shipped(kernel, list(sizes.values()), f"sweep({fname})")
    if client is not None:
        results = client.gather(client.map(shipped, *[list(col) for col in zip(*batches)]))
    else:
        task = dask.delayed(shipped, pure=True)
        results = dask.compute(*[task(*b) for b in batches])
    join = np.stack if batch_size == 1 else np.concatenate
    n_out = len(results[0])
    return pytree.tree_unflatten(out_tree[0], [join([r[j] for r in results]) for j in range(n_out)])
