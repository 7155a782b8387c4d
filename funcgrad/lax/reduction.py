"""``reduce(operands, init_values, computation, dimensions)`` with a user function, as
``jax.lax.reduce``.

A recognised monoid (``lax.add``/``mul``/``max``/``min``/``bitwise_or``/``bitwise_and``, the
``funcgrad.numpy`` ufuncs or ``operator`` functions, with their identity as the initial
value) becomes the fast reduction primitive. Any other ``computation`` (which must be
associative and commutative, as XLA assumes) is applied as a balanced tree of vmapped
calls over halves of the reduced elements: ``log2(n)`` rounds of ordinary operations, so
``jit``, ``vmap`` and ``grad`` go through it. The initial value is combined once, last
(for an identity, as JAX documents it should be, that is the same result)."""
from __future__ import annotations

import operator

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core import pytree
from funcgrad.core.avals import is_python_scalar
from funcgrad.core.trace import Tracer
from funcgrad.lax import _util
from funcgrad.transforms.batching import vmap

__all__ = ["reduce"]


def _monoids():
    import funcgrad.numpy as fnp

    def lowest(dt):
        return -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)

    def highest(dt):
        return np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)

    table = {}
    for fns, identity, red, kinds in (
        ((lax.add, fnp.add, operator.add), lambda dt: 0, lax.reduce_sum, "iuf"),
        ((lax.mul, fnp.multiply, operator.mul), lambda dt: 1, lax.reduce_prod, "iuf"),
        ((lax.max, fnp.maximum), lowest, lax.reduce_max, "biuf"),
        ((lax.min, fnp.minimum), highest, lax.reduce_min, "biuf"),
        ((lax.bitwise_or, fnp.logical_or, operator.or_), lambda dt: False, lax.reduce_max, "b"),
        ((lax.bitwise_and, fnp.logical_and, operator.and_), lambda dt: True, lax.reduce_min, "b"),
    ):
        for fn in fns:
            table[fn] = (identity, red, kinds)
    return table


_MONOIDS: dict = {}


def _monoid_reducer(computation, operand_aval, init):
    """The reduction primitive for ``computation`` when ``init`` is its identity."""
    if not _MONOIDS:
        _MONOIDS.update(_monoids())
    try:
        identity, red, kinds = _MONOIDS.get(computation, (None, None, ""))
    except TypeError:  # an unhashable callable
        return None
    if red is None or operand_aval.dtype.kind not in kinds:
        return None
    if isinstance(init, Tracer):
        init = init.to_concrete_value()
        if init is None:
            return None
    init = np.asarray(init)
    if init.shape != () or not init == identity(operand_aval.dtype):
        return None
    return red


def _tree_reduce(computation, tree, leaves, n):
    """Combine ``leaves`` (each ``(m, n)``: m independent problems, n elements) pairwise
    into ``(m,)``, calling ``computation`` on scalars through vmap."""
    combine = _util.flat_combiner("reduce", computation, tree, "computation", "the operands")
    pairwise = vmap(vmap(combine))
    while n > 1:
        half = n // 2
        a = [lax.slice(x, (0, 0), (x.shape[0], half)) for x in leaves]
        b = [lax.slice(x, (0, half), (x.shape[0], 2 * half)) for x in leaves]
        merged = pairwise(a, b)
        if n % 2:  # the odd one out waits for the next round
            merged = [lax.concatenate([m, lax.slice(x, (0, n - 1), x.shape)], 1) for m, x in zip(merged, leaves)]
        leaves, n = merged, half + n % 2
    return leaves


def reduce(operands, init_values, computation, dimensions):  # noqa: A001 - JAX's name
    """Reduce ``operands`` (an array or a pytree of same-shaped arrays) over
    ``dimensions`` with ``computation(x, y) -> z`` (scalars or pytrees of scalars of the
    operands' structure), starting from ``init_values`` (the same structure).

    >>> x = fnp.array([[1.0, 5.0], [3.0, 2.0], [2.0, 4.0]])
    >>> lax.reduce(x, 0.0, lax.add, (0,))   # a reduce_sum
    Array([ 6., 11.])
    >>> def argmax_pair(a, b):   # any associative function: (value, index) of the larger
    ...     (va, ia), (vb, ib) = a, b
    ...     return lax.select(va >= vb, va, vb), lax.select(va >= vb, ia, ib)
    >>> rows = lax.broadcasted_iota(fnp.int64, x.shape, 0)
    >>> lax.reduce((x, rows), (-fnp.inf, 0), argmax_pair, (0,))
    (Array([3., 5.]), Array([1, 0]))
    """
    if not callable(computation):
        raise TypeError(f"reduce: computation must be a callable (x, y) -> z, got {type(computation).__name__}")
    leaves, tree = pytree.tree_flatten(operands)
    inits, init_tree = pytree.tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(f"reduce: init_values structure {init_tree} does not match operands structure {tree}")
    avals = [_util.aval("reduce", x, "operands") for x in leaves]
    shape = avals[0].shape
    if any(a.shape != shape for a in avals):
        raise TypeError(f"reduce: operands must have the same shape, got {[a.shape for a in avals]}")
    dims = sorted({_util.axis("reduce", d, len(shape), shape, "dimensions") for d in dimensions})
    if len(dims) != len(tuple(dimensions)):
        raise ValueError(f"reduce: repeated entries in dimensions {tuple(dimensions)} (shape {shape})")
    inits = [_init("reduce", v, a) for v, a in zip(inits, avals)]
    if len(leaves) == 1:
        red = _monoid_reducer(computation, avals[0], inits[0])
        if red is not None:
            return pytree.tree_unflatten(tree, [red(leaves[0], dims)])
    kept = [d for d in range(len(shape)) if d not in dims]
    m = int(np.prod([shape[d] for d in kept], dtype=np.int64))
    n = int(np.prod([shape[d] for d in dims], dtype=np.int64))
    flat = [lax.reshape(lax.transpose(x, kept + dims), (m, n)) for x in leaves]
    full = [lax.broadcast_in_dim(v, (m, 1), ()) for v in inits]
    if n:
        reduced = _tree_reduce(computation, tree, flat, n)
        full = _tree_reduce(computation, tree, [lax.concatenate([r, f], 1) for r, f in zip(reduced, full)], 2)
    out_shape = tuple(shape[d] for d in kept)
    return pytree.tree_unflatten(tree, [lax.reshape(x, out_shape) for x in full])


def _init(fname, value, operand_aval):
    if is_python_scalar(value):
        return np.asarray(value, operand_aval.dtype)
    a = _util.aval(fname, value, "init_values")
    if a.shape != () or a.dtype != operand_aval.dtype:
        raise TypeError(f"{fname}: each init value must be a scalar of its operand's dtype "
                        f"({operand_aval.str_short()}), got {a.str_short()}")
    return value
