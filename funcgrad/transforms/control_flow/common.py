"""Helpers shared by the control-flow constructs (cond, scan, while) and the tape rules."""
from __future__ import annotations

from funcgrad.core import pytree
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


def check_carry(what, in_tree, out_tree, in_avals, out_avals):
    if in_tree != out_tree:
        raise TypeError(f"{what}: the body must return the carry's structure {in_tree}, got {out_tree}")
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if not a.same_type(b):
            raise TypeError(
                f"{what}: carry leaf {k} has type {a.str_short()} on input but the body returns "
                f"{b.str_short()}; the carry must keep its shape and dtype (cast with .astype)"
            )
