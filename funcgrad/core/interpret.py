"""The one equation walker, plus evaluation of jaxprs.

``walk_jaxpr`` runs a jaxpr forward with a per-equation handler; evaluation binds
each equation's primitive again (so evaluating under a transform re-traces it: this
is how ``jit`` composes with ``grad`` and ``vmap``). Transpose and lowering use the
same loop shape with their own tables.
"""
from __future__ import annotations

from typing import Callable

from funcgrad.core.ir import ClosedJaxpr, Jaxpr, Literal
from funcgrad.core.trace import bind


def walk_jaxpr(jaxpr: Jaxpr, consts, args, handle_eqn: Callable):
    """Run ``jaxpr`` forward: ``handle_eqn(eqn, input_values) -> output value(s)``."""
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    env: dict[int, object] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[id(v)] = x
    for v, x in zip(jaxpr.invars, args):
        env[id(v)] = x

    def read(a):
        return a.val if type(a) is Literal else env[id(a)]

    for eqn in jaxpr.eqns:
        outs = handle_eqn(eqn, [read(a) for a in eqn.inputs])
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        for v, x in zip(eqn.outputs, outs):
            env[id(v)] = x
    return [read(v) for v in jaxpr.outvars]


def _bind_eqn(eqn, invals):
    return bind(eqn.primitive, *invals, **eqn.params)


def eval_jaxpr(jaxpr: Jaxpr, consts, *args) -> list:
    """Evaluate ``jaxpr`` on NumPy values (or under whatever transform is active)."""
    return walk_jaxpr(jaxpr, consts, list(args), _bind_eqn)


def eval_closed_jaxpr(closed: ClosedJaxpr, *args) -> list:
    """Run the program ``closed`` (from ``make_jaxpr``) on ``args`` with the evaluator;
    returns the list of its outputs."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable:
    """The closed jaxpr as a Python function over flat arguments (list out)."""

    def fun(*args):
        return eval_closed_jaxpr(closed, *args)

    return fun
