"""``custom_gradient`` and ``closure_convert``, JAX's helpers on top of ``custom_vjp``.

- ``custom_gradient(f)``: ``f(*args)`` returns ``(value, vjp_fn)``; reverse mode uses
  ``vjp_fn(ct) -> cotangents of the arguments`` (one value for a single argument, a
  tuple otherwise). The ``vjp_fn`` closure is staged to a jaxpr at the output's tangent
  types, so the values it closes over travel as residuals (through ``jit``, ``vmap``).
- ``closure_convert(fun, *example_args)``: ``(converted, consts)`` with
  ``converted(*args, *consts) == fun(*args)``, where ``consts`` are the traced values
  ``fun`` closes over. Pass them to a ``custom_vjp`` function as arguments, so its rule
  sees (and gives cotangents for) what it would otherwise close over.
"""
from __future__ import annotations

from funcgrad.core import pytree
from funcgrad.core.ad_util import tangent_aval
from funcgrad.core.interpret import eval_jaxpr
from funcgrad.core.staging import abstractify, trace_to_jaxpr
from funcgrad.core.trace import Tracer, get_aval_any
from funcgrad.core.wrapping import fun_name
from funcgrad.transforms.custom import custom_vjp

__all__ = ["custom_gradient", "closure_convert"]


class _StagedRule:
    """A staged ``vjp_fn``: its closed-over values are pytree children (residuals), the
    jaxpr and the argument structure are static."""

    def __init__(self, jaxpr, consts, in_tree, out_tree, n_args):
        self.jaxpr, self.consts, self.in_tree, self.out_tree = jaxpr, list(consts), in_tree, out_tree
        self.n_args = n_args


pytree.register_pytree_node(
    _StagedRule,
    lambda r: (r.consts, (r.jaxpr, r.in_tree, r.out_tree, r.n_args)),
    lambda aux, consts: _StagedRule(aux[0], consts, *aux[1:]),
)


def custom_gradient(fun):
    """Define ``fun``'s reverse-mode derivative inline: ``fun`` returns ``(value, vjp_fn)``.

    >>> @custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: g * 3.0 * x   # a deliberately different gradient
    >>> fg.grad(f)(2.0)
    Array(6.)
    """
    name = fun_name(fun)

    def primal(*args):
        value, _ = fun(*args)
        return value

    primal.__name__ = primal.__qualname__ = name
    wrapped = custom_vjp(primal)

    def fwd(*args):
        value, rule = fun(*args)
        if not callable(rule):
            raise TypeError(f"custom_gradient function {name} must return (value, vjp_fn); "
                            f"its second output is a {type(rule).__name__}")
        leaves, out_tree = pytree.tree_flatten(value)
        in_tree = []

        def rule_flat(*cts):
            ct_in = rule(pytree.tree_unflatten(out_tree, cts))
            ct_leaves, tree = pytree.tree_flatten(ct_in)
            in_tree[:] = [tree]
            return ct_leaves

        ct_avals = [tangent_aval(get_aval_any(x)) for x in leaves]
        jaxpr, consts = trace_to_jaxpr(rule_flat, ct_avals)
        return value, _StagedRule(jaxpr, consts, in_tree[0], out_tree, len(args))

    def bwd(res, ct):
        ct_leaves, tree = pytree.tree_flatten(ct)
        if tree != res.out_tree:
            raise TypeError(f"custom_gradient function {name}: cotangent structure {tree} "
                            f"differs from the output's {res.out_tree}")
        cts_in = pytree.tree_unflatten(res.in_tree, eval_jaxpr(res.jaxpr, res.consts, *ct_leaves))
        # One argument: vjp_fn may return its cotangent bare (JAX's convention).
        if res.n_args == 1 and not (isinstance(cts_in, tuple) and len(cts_in) == 1):
            return (cts_in,)
        return tuple(cts_in)

    wrapped.defvjp(fwd, bwd)
    return wrapped


def closure_convert(fun, *example_args):
    """``(converted, consts)``: ``fun`` with the traced values it closes over hoisted
    into explicit trailing arguments, ``converted(*args, *consts)``. Concrete constants
    stay closed over. ``example_args`` fix the argument structure, shapes and dtypes."""
    leaves, in_tree = pytree.tree_flatten(example_args)
    out_tree = []

    def flat(*xs):
        out_leaves, tree = pytree.tree_flatten(fun(*pytree.tree_unflatten(in_tree, xs)))
        out_tree[:] = [tree]
        return out_leaves

    jaxpr, consts = trace_to_jaxpr(flat, [abstractify(x, f"closure_convert example argument {i}")
                                          for i, x in enumerate(leaves)])
    traced = [isinstance(c, Tracer) for c in consts]
    hoisted = [c for c, t in zip(consts, traced) if t]
    kept = [c for c, t in zip(consts, traced) if not t]
    n = len(hoisted)

    def converted(*args_and_consts):
        if len(args_and_consts) < n:
            raise TypeError(f"closure_convert({fun_name(fun)}): expected the arguments "
                            f"followed by {n} hoisted constants, got {len(args_and_consts)} values")
        args, hc = args_and_consts[:len(args_and_consts) - n], list(args_and_consts[len(args_and_consts) - n:])
        arg_leaves, tree = pytree.tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"closure_convert({fun_name(fun)}): arguments of structure "
                            f"{tree}, but the example arguments had {in_tree}")
        it_h, it_k = iter(hc), iter(kept)
        all_consts = [next(it_h) if t else next(it_k) for t in traced]
        return pytree.tree_unflatten(out_tree[0], eval_jaxpr(jaxpr, all_consts, *arg_leaves))

    converted.__name__ = fun_name(fun)
    return converted, hoisted
