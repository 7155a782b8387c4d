"""The one equation walker, plus evaluation of jaxprs.

``walk_jaxpr`` runs a jaxpr forward with a per-equation handler; evaluation binds
each equation's primitive again (so evaluating under a transform re-traces it: this
is how ``jit`` composes with ``grad`` and ``vmap``). Transpose and lowering use the
same loop shape with their own tables.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from funcgrad import config
from funcgrad.core import dtypes
from funcgrad.core.array import Array, unwrap
from funcgrad.core.ir import ClosedJaxpr, Jaxpr, Literal
from funcgrad.core.primitive import impl_rules
from funcgrad.core.trace import Tracer, bind, is_staging

_PY_SCALARS = (bool, int, float, complex)
_debug_checks = config.DEBUG_CHECKS  # ([0]: jax_debug_nans/infs: every equation goes through bind)


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


def eval_closed_impls(closed: ClosedJaxpr, *args) -> list:
    """``eval_closed_jaxpr`` for the impls of loop and call primitives (``scan``,
    ``while``, ``cond``, custom-rule calls), whose operands are all concrete: each
    equation's NumPy impl is called directly, from a plan of integer slots made once per
    program (kept in ``closed.memo``). No dispatch through ``bind`` (nothing can claim a
    concrete operation), no per-equation signature check (the program was built by
    abstract evaluation and the loop's operands were checked against it), no read-only
    value made of each intermediate (the loop's own ``bind`` makes values of its
    results): the same impls, so the same values, at a fraction of the cost per
    equation. Anything traced, staging or a debug check (``jax_debug_nans``): the
    evaluator (``eval_jaxpr``)."""
    if _debug_checks[0] or is_staging():
        return eval_closed_jaxpr(closed, *args)
    jaxpr = closed.jaxpr
    memo = closed.memo
    if memo is None:
        memo = closed.memo = {}
    plan = memo.get("impl_plan")
    if plan is None or plan[0] != len(jaxpr.eqns):
        plan = memo["impl_plan"] = _impl_plan(jaxpr)
    _, size, literals, steps, out_slots = plan
    env = [None] * size
    k = 0
    for xs in (closed.consts, args):
        for x in xs:
            t = type(x)
            if t is Array:
                x = unwrap(x)
            elif t in _PY_SCALARS:
                x = np.asarray(x)  # (as ``bind`` gives the impls)
            elif isinstance(x, Tracer):
                return eval_closed_jaxpr(closed, *args)
            if isinstance(x, (np.ndarray, np.generic)) and not x.dtype.isnative:
                x = dtypes.native(x)
            env[k] = x
            k += 1
    for i, v in literals:
        env[i] = v
    for impl, prim, ins, outs, params in steps:
        vals = [env[i] for i in ins]
        if impl is None:  # user code (host callbacks, calls): the full eager path, as before
            out = bind(prim, *vals, **params)
            out = [unwrap(x) if type(x) is Array else x for x in out] if prim.multiple_results else (
                unwrap(out) if type(out) is Array else out)
        else:
            out = impl(*vals, **params)
        if prim.multiple_results:
            for i, x in zip(outs, out):
                env[i] = x
        else:
            env[outs[0]] = out
    return [env[i] for i in out_slots]


def _impl_plan(jaxpr: Jaxpr):
    """(equation count, slots, [(slot, literal value)], [(impl, primitive, input slots,
    output slots, params)], output slots) of ``jaxpr``: its variables numbered. A
    primitive that runs user code (``impl_takes_python_scalars``: host callbacks, calls)
    gets no impl: it goes through ``bind``, whose values contract the user code sees."""
    slots: dict[int, int] = {}
    for v in jaxpr.constvars + jaxpr.invars:
        slots[id(v)] = len(slots)
    size = len(slots)
    literals = []

    def slot_of(a):
        nonlocal size
        if type(a) is Literal:
            val = a.val
            literals.append((size, np.asarray(val) if type(val) in _PY_SCALARS else val))
            size += 1
            return size - 1
        return slots[id(a)]

    steps = []
    for eqn in jaxpr.eqns:
        ins = tuple(slot_of(a) for a in eqn.inputs)
        outs = []
        for o in eqn.outputs:
            slots[id(o)] = size
            outs.append(size)
            size += 1
        prim = eqn.primitive
        impl = None if prim.impl_takes_python_scalars else impl_rules.get(prim)  # (None: through bind)
        steps.append((impl, prim, ins, tuple(outs), eqn.params))
    out_slots = [slot_of(v) for v in jaxpr.outvars]
    return len(jaxpr.eqns), size, literals, steps, out_slots


def eval_closed_jaxpr(closed: ClosedJaxpr, *args) -> list:
    """Run the program ``closed`` (from ``make_jaxpr``) on ``args`` with the evaluator;
    returns the list of its outputs."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable:
    """The closed jaxpr as a Python function over flat arguments (list out)."""

    def fun(*args):
        return eval_closed_jaxpr(closed, *args)

    return fun
