"""Automatic differentiation: forward mode (JVP), linearize, transpose, reverse mode.

Forward mode is a ``JVPTrace`` whose tracers carry (primal, tangent); each primitive's
``jvp`` rule (registered under it in ``core/prims``) computes both.

Reverse mode is *direct linearization* followed by transposition:
``linearize`` runs the JVP with the tangent inputs being tracers of a (non-dynamic)
``JaxprTrace`` one level below the JVP. Primal work therefore runs on concrete values
(eagerly, so Python ``if x > 0:`` works under ``grad``) or is staged by an enclosing
``make_jaxpr``/``jit``, while every tangent operation is recorded into a linear jaxpr
whose constants are the residuals. ``backward_pass`` walks that jaxpr in reverse,
applying each primitive's ``transpose`` rule.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.ad_util import (
    UndefinedPrimal,
    Zero,
    add_tangents,
    instantiate,
    is_differentiable,
    tangent_aval,
)
from funcgrad.core.ir import Jaxpr, Literal
from funcgrad.core.primitive import jvp_rules, missing_rule, transpose_rules
from funcgrad.core.staging import JaxprBuilder, JaxprTrace
from funcgrad.core.trace import Trace, Tracer, full_raise, get_aval_any, new_main
from funcgrad.core.typecheck import check_jaxpr, debug_checks_enabled


# --- forward mode --------------------------------------------------------------------

class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "_aval")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self._aval = None

    @property
    def aval(self):
        if self._aval is None:  # the primal never changes: compute once
            self._aval = get_aval_any(self.primal)
        return self._aval

    def full_lower(self):
        # A value with a zero tangent is just its primal to this transform.
        if type(self.tangent) is Zero:
            p = self.primal
            return p.full_lower() if isinstance(p, Tracer) else p
        return self

    def to_concrete_value(self):
        p = self.primal
        return p.to_concrete_value() if isinstance(p, Tracer) else p


class JVPTrace(Trace):
    def pure(self, val):
        return JVPTracer(self, val, Zero.like(val))

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise missing_rule("jvp", primitive)
        primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)


def _unpack(trace: JVPTrace, out):
    t = full_raise(trace, out)
    return t.primal, t.tangent


def is_linearizing(tangents) -> bool:
    """True if any tangent is being staged into a linear program (reverse mode), so a
    JVP rule must keep primal and tangent computations apart."""
    from funcgrad.core.staging import JaxprTracer

    return any(isinstance(t, JaxprTracer) and t._trace.builder.linearize for t in tangents)


def jvp_flat(f_flat, primals, tangents):
    """Push ``tangents`` (Zero allowed) through ``f_flat``: (primals_out, tangents_out)."""
    # Python scalars become NumPy values: primitive impls only ever see arrays.
    primals = [np.asarray(p) if type(p) in (bool, int, float) else p for p in primals]
    tangents = [np.asarray(t) if type(t) in (bool, int, float) else t for t in tangents]
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        tracers = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = f_flat(*tracers)
        pairs = [_unpack(trace, o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


# --- linearize ---------------------------------------------------------------------------

class LinearFunction:
    """A linear jaxpr from input tangents to output tangents (residuals as consts)."""

    def __init__(self, jaxpr: Jaxpr, consts, in_avals, out_avals):
        self.jaxpr, self.consts = jaxpr, consts
        self.in_avals, self.out_avals = in_avals, out_avals

    def __call__(self, *tangents):
        from funcgrad.core.interpret import eval_jaxpr

        return eval_jaxpr(self.jaxpr, self.consts, *tangents)

    def transpose(self, cts_out):
        return backward_pass(self.jaxpr, self.consts, cts_out)


def linearize_flat(f_flat, primals):
    """Run ``f_flat`` at ``primals``; return (primal outputs, LinearFunction)."""
    builder = JaxprBuilder(record_source=False, linearize=True)  # linear eqns never reach user errors
    in_avals = [tangent_aval(get_aval_any(p)) for p in primals]
    with new_main(JaxprTrace, builder) as lin_main:
        lin_trace = JaxprTrace(lin_main)
        tangent_in = [builder.new_tracer(lin_trace, a) for a in in_avals]
        tangents = [t if is_differentiable(a) else Zero(a) for t, a in zip(tangent_in, in_avals)]
        primals_out, tangents_out = jvp_flat(f_flat, primals, tangents)
        out_tracers = [full_raise(lin_trace, instantiate(t)) for t in tangents_out]
        jaxpr, consts = builder.build(tangent_in, out_tracers)
    if debug_checks_enabled():
        check_jaxpr(jaxpr)
    out_avals = [tangent_aval(get_aval_any(p)) for p in primals_out]
    return primals_out, LinearFunction(jaxpr, consts, in_avals, out_avals)


# --- transposition ---------------------------------------------------------------------

def backward_pass(jaxpr: Jaxpr, consts, cts_out) -> list:
    """Transpose a linear jaxpr: cotangents of the outputs -> of the inputs.

    Every equation of a linearized jaxpr is linear in its non-constant inputs, so the
    walk is purely backwards; constvars and literals are the residuals.
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


__all__ = [
    "JVPTrace", "JVPTracer", "jvp_flat", "linearize_flat", "LinearFunction", "backward_pass",
    "Zero", "UndefinedPrimal", "instantiate",
]
