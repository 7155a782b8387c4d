"""Transposition: a linear program's cotangents, output to input (reverse mode's second half).

Every equation of a linear program (what ``linearize.py`` records) is linear in its
tangent inputs; its other inputs are residuals: constants of the linear map. Walking
the equations in reverse and applying each primitive's ``transpose`` rule (registered
under it in ``core/prims``) to the cotangent of its outputs gives the cotangents of its
linear inputs; cotangents of a value used several times add up. A cotangent may be a
symbolic ``Zero``, and an equation whose outputs got none is skipped.
"""
from __future__ import annotations

from funcgrad.core.ad_util import UndefinedPrimal, Zero, add_tangents
from funcgrad.core.ir import Jaxpr, Literal
from funcgrad.core.primitive import missing_rule, transpose_rules

def backward_pass(jaxpr: Jaxpr, consts, cts_out) -> list:
    """Transpose a linear jaxpr: cotangents of the outputs -> of the inputs.

    Every equation of a linearized jaxpr that reads a non-constant input is linear in
    it; constvars, literals and equations computed from them alone are the residuals.
    """
    const_env = {id(v): c for v, c in zip(jaxpr.constvars, consts)}
    ct_env: dict[int, object] = {}

    def read_primal(a):
        if type(a) is Literal:
            return a.val
        if id(a) in const_env:
            return const_env[id(a)]
        return UndefinedPrimal(a.aval)

    def write_ct(v, ct):
        if ct is None or type(v) is Literal or id(v) in const_env:
            return
        prev = ct_env.get(id(v))
        ct_env[id(v)] = ct if prev is None else add_tangents(prev, ct)

    # Equations with no linear input (instantiated zero tangents, or residual work a rule
    # put in its linear body, e.g. a forward loop that records a tape) are evaluated
    # forwards: their results are constants of the linear map, not things to transpose.
    for eqn in jaxpr.eqns:
        if all(type(a) is Literal or id(a) in const_env for a in eqn.inputs):
            out = eqn.primitive.bind(*[read_primal(a) for a in eqn.inputs], **eqn.params)
            for v, o in zip(eqn.outputs, out if eqn.primitive.multiple_results else [out]):
                const_env[id(v)] = o

    for v, ct in zip(jaxpr.outvars, cts_out):
        if type(ct) is not Zero:
            write_ct(v, ct)

    for eqn in reversed(jaxpr.eqns):
        cts = [ct_env.pop(id(v), None) for v in eqn.outputs]
        if all(c is None or type(c) is Zero for c in cts):
            continue
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise missing_rule("transpose", eqn.primitive)
        args = [read_primal(a) for a in eqn.inputs]
        if eqn.primitive.multiple_results:
            ct_arg = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outputs, cts)]
        else:
            ct_arg = cts[0]
        cts_in = rule(ct_arg, *args, **eqn.params)
        for a, ct in zip(eqn.inputs, cts_in):
            if ct is not None and type(ct) is not Zero:
                write_ct(a, ct)

    out = []
    for v in jaxpr.invars:
        ct = ct_env.get(id(v))
        out.append(Zero(v.aval) if ct is None else ct)
    return out


__all__ = ["backward_pass"]
