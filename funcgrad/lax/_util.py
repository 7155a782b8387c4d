"""Argument checks shared by the ``funcgrad.lax`` composites: each error names the
function, the argument and the shapes, as the rest of funcgrad's errors do."""
from __future__ import annotations

import operator

from funcgrad.core.trace import Tracer, get_aval_any
from funcgrad.errors import ConcretizationError


def aval(fname: str, x, argname: str = "operand"):
    """The abstract value of an array argument, or a TypeError naming it."""
    try:
        return get_aval_any(x)
    except TypeError as e:
        raise TypeError(f"{fname}: {argname} must be an array, got {type(x).__name__} ({e})") from None


def static_int(fname: str, value, argname: str) -> int:
    """A Python int known at trace time (``slice_size``, ``k``, ``num_segments``...)."""
    if isinstance(value, Tracer):
        concrete = value.to_concrete_value()
        if concrete is None or getattr(concrete, "shape", ()) != ():
            raise ConcretizationError(
                f"{fname}: {argname} must be a static Python int (it fixes an output shape), got a traced "
                f"value {value.aval.str_short()}; pass it as a constant or mark it static in jit"
            )
        value = concrete
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fname}: {argname} must be an integer, got {type(value).__name__} {value!r}") from None


def axis(fname: str, value, ndim: int, shape, argname: str = "axis") -> int:
    """A possibly negative axis of an array of ``shape`` as ``0 .. ndim-1``."""
    value = static_int(fname, value, argname)
    if not -ndim <= value < ndim:
        raise ValueError(f"{fname}: {argname}={value} is out of range for an operand of shape {tuple(shape)}")
    return value % ndim


def concrete_value(x):
    """``x``'s value if it is known now (a NumPy value, or a tracer that knows it), else None."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    return x


def int_tuple(fname: str, v, n: int, name: str, where: str, per: str = "spatial dimension", default=1,
              positive=True) -> tuple:
    """A tuple of ``n`` ints (``default`` each when ``v`` is None): strides, dilations,
    window sizes. ``where`` (the operand shapes) and ``per`` (what each entry is for)
    go into the error."""
    if v is None:
        return (default,) * n
    try:
        t = tuple(int(x) for x in v)
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: {name} must be a sequence of {n} ints, got {v!r} ({where})") from None
    if len(t) != n:
        raise ValueError(f"{fname}: {name} needs one entry per {per} ({n}), got {t} ({where})")
    if positive and any(x < 1 for x in t):
        raise ValueError(f"{fname}: {name} entries must be >= 1, got {t} ({where})")
    return t


def flat_combiner(fname: str, fn, tree, what: str, operands: str):
    """``fn`` (a binary function on pytrees of structure ``tree``) as a function of two
    flat leaf lists returning a flat leaf list; a result of another structure is a
    TypeError naming ``fname``, the function (``what``) and the ``operands``."""
    from funcgrad.core import pytree

    def combine(a, b):
        out_leaves, out_tree = pytree.tree_flatten(fn(pytree.tree_unflatten(tree, a), pytree.tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"{fname}: {what} must return the structure of {operands} {tree}, got {out_tree}")
        return out_leaves

    return combine
