"""Gating effects by a predicate: what keeps ``debug.print`` to the taken lanes under vmap.

``vmap`` of a ``cond`` whose index is per example runs *every* branch on every lane and
selects the results (``control_flow/cond.py``); ``vmap`` of a ``while_loop`` keeps
running the body of lanes that are already done. Their values are discarded, but an
effect (a debug/io callback) in them must not fire. So, before such a body is batched,
``predicate_effects`` rewrites it to take a leading bool scalar ``taken`` and to run
each of its effects only when ``taken`` holds: each callback equation gets ``taken`` as
a first operand and its host function is wrapped in ``Predicated``; higher-order
equations holding effects pass ``taken`` on to their sub-jaxprs (``gate_rules``).
Batched with ``taken`` mapped (the lane's ``index == k``, or the lane's loop predicate),
each callback runs per lane and skips the lanes whose ``taken`` is false.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.interpret import eval_jaxpr, walk_jaxpr
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.prims.calls import jit_call_p
from funcgrad.core.prims.control_flow import cond_p, scan_p, while_p
from funcgrad.core.prims.effects import Predicated, callback_p, eqn_has_effects, jaxpr_has_effects
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.tapes import while_tape_p

_BOOL = ShapedArray((), np.dtype(np.bool_))


def has_effects(closed: ClosedJaxpr) -> bool:
    return jaxpr_has_effects(closed.jaxpr)


def predicate_effects(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` taking a leading bool scalar that gates every effect inside it."""

    def gated(taken, *args):
        def handle(eqn, invals):
            if not eqn_has_effects(eqn):
                return eqn.primitive.bind(*invals, **eqn.params)
            rule = gate_rules.get(eqn.primitive)
            if rule is None:
                if eqn.primitive.inline:  # a call: its body runs in place (its custom rules are dropped)
                    (param,) = eqn.primitive.jaxpr_params
                    sub = predicate_effects(eqn.params[param])
                    return eval_jaxpr(sub.jaxpr, sub.consts, taken, *invals)
                raise NotImplementedError(
                    f"vmap: effects (debug.print, callbacks) inside '{eqn.primitive.name}' under a per-example "
                    "cond or while_loop are not supported")
            return rule(taken, invals, **eqn.params)

        return walk_jaxpr(closed.jaxpr, closed.consts, list(args), handle)

    jaxpr, consts = trace_to_jaxpr(gated, [_BOOL] + list(closed.in_avals))
    return ClosedJaxpr(jaxpr, consts)


def _gate_callback(taken, invals, *, callback, **params):
    return callback_p.bind(taken, *invals, callback=Predicated(callback), **params)


def _gate_cond(taken, invals, *, branches):
    index, *ops = invals
    return cond_p.bind(index, taken, *ops, branches=tuple(predicate_effects(b) for b in branches))


def _gate_while(prim):
    def rule(taken, invals, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, **params):
        cc, rest = invals[:cond_nconsts], invals[cond_nconsts:]
        return prim.bind(taken, *cc, taken, *rest, cond_jaxpr=predicate_effects(cond_jaxpr),
                         body_jaxpr=predicate_effects(body_jaxpr), cond_nconsts=cond_nconsts + 1,
                         body_nconsts=body_nconsts + 1, **params)

    return rule


def _gate_scan(taken, invals, *, jaxpr, num_consts, linear=None, **params):
    if linear is not None:
        linear = (False,) + tuple(linear)
    return scan_p.bind(taken, *invals, jaxpr=predicate_effects(jaxpr), num_consts=num_consts + 1,
                       linear=linear, **params)


def _gate_jit_call(taken, invals, *, jaxpr, name):
    return jit_call_p.bind(taken, *invals, jaxpr=predicate_effects(jaxpr), name=name)


# primitive -> rule(taken, operands, **params) -> outputs: the equation with its effects gated.
gate_rules = {
    callback_p: _gate_callback,
    cond_p: _gate_cond,
    while_p: _gate_while(while_p),
    while_tape_p: _gate_while(while_tape_p),
    scan_p: _gate_scan,
    jit_call_p: _gate_jit_call,
}


def gate_cond_branches(args, bdims, branches):
    """A cond with a per-example index made equivalent with gated effects: each branch
    k also takes the index and runs its effects only if the (clamped) index is k.
    Returns (args, bdims, branches) for the cond batch rule to batch as usual."""
    from funcgrad.core import lax_api as lax

    index, *ops = args
    n = len(branches)
    new = []
    for k, b in enumerate(branches):
        gated = predicate_effects(b)

        def branch(i, *xs, gated=gated, k=k):
            clamped = lax.max(lax.min(i, np.int32(n - 1)), np.int32(0))
            return eval_jaxpr(gated.jaxpr, gated.consts, lax.eq(clamped, np.int32(k)), *xs)

        jaxpr, consts = trace_to_jaxpr(branch, [ShapedArray((), np.dtype(np.int32))] + list(b.in_avals))
        new.append(ClosedJaxpr(jaxpr, consts))
    return [index, index, *ops], [bdims[0], bdims[0], *bdims[1:]], tuple(new)


__all__ = ["has_effects", "predicate_effects", "gate_rules", "gate_cond_branches"]
