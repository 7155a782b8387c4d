"""Helpers shared by the control-flow constructs (cond, scan, while) and the tape rules."""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes, pytree
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.core.trace import Tracer, get_aval_any


def avals(xs):
    return [get_aval_any(x) for x in xs]


def concrete(x):
    """The concrete value of ``x`` if known now (NumPy value, or a tracer that knows it)."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    return x


def all_concrete(xs):
    return all(concrete(x) is not None for x in xs)


def has_tracers(xs):
    return any(isinstance(x, Tracer) and x.to_concrete_value() is None for x in xs)


def trace_pytree_fun(fun, args_tree, in_avals, what: str):
    """Trace ``fun`` (pytree in, pytree out) -> (closed jaxpr, out_tree); the closed
    jaxpr's consts are hoisted by the caller (``hoist_consts``)."""
    out_tree = []

    def flat(*leaves):
        out = fun(*pytree.tree_unflatten(args_tree, leaves))
        out_leaves, tree = pytree.tree_flatten(out)
        out_tree[:] = [tree]
        return out_leaves

    flat.__name__ = getattr(fun, "__name__", what)
    jaxpr, consts = trace_to_jaxpr(flat, list(in_avals))
    return jaxpr, consts, out_tree[0]


def check_carry(what, in_tree, out_tree, in_avals, out_avals, first_leaf=0):
    """The body keeps the carry's structure and leaf types (``first_leaf``: leaves the
    sugar put in front of the user's carry, not counted in messages)."""
    if in_tree != out_tree:
        raise TypeError(f"{what}: the body must return the carry's structure {in_tree}, got {out_tree}")
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if k >= first_leaf and not a.same_type(b):
            raise TypeError(
                f"{what}: carry leaf {k - first_leaf} has type {a.str_short()} on input but the body returns "
                f"{b.str_short()}; the carry must keep its shape and dtype (cast with .astype)"
            )


def promote_weak_carry(leaves, in_avals, out_avals):
    """JAX's rule for loop carries: a leaf initialised with a weakly typed value (a
    Python scalar) adopts the dtype the body gives it -- ``0.0`` updated with float32
    stays float32, ``0`` updated with a float becomes a float. Returns (leaves, whether
    any changed); the caller traces the body again with the new leaves."""
    from funcgrad.core import lax_api as lax

    leaves, changed = list(leaves), False
    for i, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and type(b) is type(a) and a.shape == b.shape and a.dtype != b.dtype:
            dt, _ = dtypes.result_type((a.dtype, True), (b.dtype, b.weak_type))
            if dt != a.dtype:
                leaves[i] = lax.convert_element_type(leaves[i], dt)
                changed = True
    return leaves, changed


def split_list(xs, *sizes) -> list:
    """``xs`` cut into consecutive pieces of ``sizes``, plus the rest as a last piece."""
    pieces, i = [], 0
    for n in sizes:
        pieces.append(xs[i:i + n])
        i += n
    pieces.append(xs[i:])
    return pieces


def operand_values(tree):
    """Operands handed to the user's functions when a construct runs in Python (a known
    predicate or trip count): NumPy arrays become funcgrad values, as the staged
    construct would pass them (``x.at[i].set(v)`` works on them, and they are read-only);
    NumPy scalars become 0-d values. (Python scalars stay: they are weakly typed.)"""
    from funcgrad.core.array import copied_value

    return pytree.tree_map(lambda x: copied_value(x) if type(x) is np.ndarray or isinstance(x, np.generic) else x,
                           tree)


def result_values(tree, out_avals):
    """The result of a construct run in Python as the staged construct's would be: values,
    Python scalars as 0-d values of the staged output's dtype."""
    from funcgrad.core.array import fresh_value

    leaves, treedef = pytree.tree_flatten(operand_values(tree))
    leaves = [fresh_value(np.asarray(v, a.dtype)) if type(v) in (bool, int, float, complex) else v
              for v, a in zip(leaves, out_avals)]
    return pytree.tree_unflatten(treedef, leaves)
