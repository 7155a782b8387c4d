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

``vjp`` (hence ``grad``) never needs the linear program as a jaxpr: it only transposes
it, once or a few times. ``vjp_flat`` therefore records the tangent operations on a
``LinearTape`` instead -- a plain list of records holding each primitive, its params,
its residuals as they are and its linear inputs/outputs as tracer indices -- and
``tape_backward_pass`` runs the same transpose rules over it. This skips Var, Eqn and
Literal construction, const bookkeeping and the jaxpr build, which were most of the
fixed cost of an eager ``grad`` of a small function (issue #3). It works under any
enclosing transform (``jit(grad(f))``, ``grad(grad(f))``, ``vmap(grad(f))``): residuals
that are outer tracers are handed to the transpose rules like any other value.
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
from funcgrad.core.trace import (
    Trace,
    Tracer,
    abstract_eval_tuple,
    full_raise,
    get_aval_any,
    new_main,
    pop_main,
    push_main,
)
from funcgrad.core.typecheck import check_jaxpr, debug_checks_enabled


# --- forward mode --------------------------------------------------------------------

class JVPTracer(Tracer):
    # ``aval`` is a plain slot (shadowing Tracer.aval) filled at construction: every
    # funcgrad.numpy function reads it, so a lazy property would cost more than it saves.
    __slots__ = ("primal", "tangent", "aval")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self.aval = get_aval_any(primal)

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
    # bind hands us constants and lower-level tracers as they are: they are primals
    # with a zero tangent, and wrapping each in a JVPTracer first would only be undone.
    handles_raw_args = True

    def pure(self, val):
        return JVPTracer(self, val, Zero.like(val))

    lift = pure

    def process_primitive(self, primitive, args, params):
        main = self.main
        primals, tangents = [], []
        for a in args:
            if type(a) is JVPTracer and a._trace.main is main:
                primals.append(a.primal)
                tangents.append(a.tangent)
            else:
                primals.append(a)
                tangents.append(Zero.like(a))
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise missing_rule("jvp", primitive)
        primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            # A rule built from sub-programs (a jitted call, control flow) may hand back a
            # tangent for a bool/int output: it is zero, and must stay symbolic.
            return [self.lower(p, t if type(t) is Zero or is_differentiable(get_aval_any(p)) else Zero.like(p))
                    for p, t in zip(primal_out, tangent_out)]
        if type(tangent_out) is Zero:  # (self.lower, inlined: this is the hot path)
            return primal_out.full_lower() if isinstance(primal_out, Tracer) else primal_out
        return JVPTracer(self, primal_out, tangent_out)

    def lower(self, primal, tangent):
        """The value a (primal, tangent) pair is to the caller: a JVPTracer, or, when
        the tangent is symbolically zero, just the primal (``full_lower``)."""
        if type(tangent) is Zero:
            return primal.full_lower() if isinstance(primal, Tracer) else primal
        return JVPTracer(self, primal, tangent)


def is_linearizing(tangents) -> bool:
    """True if any tangent is being staged into a linear program (reverse mode), so a
    JVP rule must keep primal and tangent computations apart."""
    from funcgrad.core.staging import JaxprTracer

    return any(
        type(t) is LinearTracer or (isinstance(t, JaxprTracer) and t._trace.builder.linearize)
        for t in tangents
    )


_PY_SCALARS = (bool, int, float)


def jvp_flat(f_flat, primals, tangents):
    """Push ``tangents`` (Zero allowed) through ``f_flat``: (primals_out, tangents_out)."""
    # Python scalars become NumPy values: primitive impls only ever see arrays.
    main = push_main(JVPTrace)
    try:
        trace = main.trace()
        tracers = []
        for p, t in zip(primals, tangents):
            if type(p) in _PY_SCALARS:
                p = np.asarray(p)
            if type(t) in _PY_SCALARS:
                t = np.asarray(t)
            tracers.append(JVPTracer(trace, p, t))
        primals_out, tangents_out = [], []
        for out in f_flat(*tracers):
            if type(out) is JVPTracer and out._trace is trace:
                primals_out.append(out.primal)
                tangents_out.append(out.tangent)
            else:  # a constant or a lower-level tracer (or an escaped one: an error)
                out = full_raise(trace, out)
                primals_out.append(out.primal)
                tangents_out.append(out.tangent)
    finally:
        pop_main(main)
    return primals_out, tangents_out


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


# --- vjp on a linear tape -----------------------------------------------------------------

class LinearTracer(Tracer):
    """A tangent recorded on a ``LinearTape``: only its type is known, plus its index
    in the tape (the key of its cotangent in the backward pass)."""

    __slots__ = ("aval", "index")  # a plain ``aval`` slot shadows Tracer.aval

    def __init__(self, trace, aval, index):
        self._trace = trace
        self.aval = aval
        self.index = index


class LinearTape(Trace):
    """Records tangent operations (all linear) in order, for ``tape_backward_pass``.

    Non-dynamic, like linearize's ``JaxprTrace``: primal work never reaches it. A
    record is ``(primitive, args, params, linear, first_out, out_avals)``: ``args`` are
    the transpose rule's arguments -- residuals as they are (NumPy values, tracers of
    outer transforms) and an ``UndefinedPrimal`` for each of the tape's own tracers --
    ``linear`` lists (argument position, tracer index) for the latter, and the outputs
    are the tracers numbered ``first_out, first_out + 1, ...``. Keeping tracers out of
    the records makes the backward walk index-based and free of per-argument checks.
    """

    __slots__ = ("count",)
    handles_raw_args = True  # residuals stay plain values; outputs need no lowering

    def __init__(self, main):
        super().__init__(main)
        self.count = 0  # tracers created so far (the next index)

    def new_tracer(self, aval) -> LinearTracer:
        t = LinearTracer(self, aval, self.count)
        self.count += 1
        return t

    def pure(self, val):
        return val

    lift = pure

    def process_primitive(self, primitive, args, params):
        rule_args = list(args)
        avals, linear = [], []
        for i, a in enumerate(args):
            if type(a) is LinearTracer and a._trace is self:
                aval = a.aval
                rule_args[i] = UndefinedPrimal(aval)
                linear.append((i, a.index))
            else:
                aval = get_aval_any(a)
            avals.append(aval)
        out_avals = abstract_eval_tuple(primitive, avals, params)
        first = self.count
        self.count = first + len(out_avals)
        self.main.payload.append((primitive, rule_args, params, linear, first, out_avals))
        if primitive.multiple_results:
            return [LinearTracer(self, a, first + k) for k, a in enumerate(out_avals)]
        return LinearTracer(self, out_avals[0], first)


def vjp_flat(f_flat, primals, in_avals=None, report_nonzero=False):
    """Run ``f_flat`` at ``primals`` recording its linearization on a tape: returns
    (primal outputs, output tangent avals, ``backward(cts_out) -> cts_in``).
    ``in_avals`` (the primals' avals) may be passed when the caller already has them.
    With ``report_nonzero``, also a list saying which outputs depend on the inputs
    (have a tangent that is not symbolically zero)."""
    if in_avals is None:
        in_avals = [get_aval_any(p) for p in primals]
    records: list = []
    main = push_main(LinearTape, records)
    try:
        tape = main.trace()
        tangent_in, tangents = [], []
        for aval in in_avals:
            t = tape.new_tracer(tangent_aval(aval))
            tangent_in.append(t)
            tangents.append(t if is_differentiable(t.aval) else Zero(t.aval))
        primals_out, tangents_out = jvp_flat(f_flat, primals, tangents)
    finally:
        pop_main(main)

    def backward(cts_out):
        return tape_backward_pass(tape, records, tangent_in, tangents_out, cts_out)

    out_avals = [tangent_aval(get_aval_any(p)) for p in primals_out]
    if report_nonzero:
        nonzero = [type(t) is LinearTracer and t._trace is tape for t in tangents_out]
        return primals_out, out_avals, backward, nonzero
    return primals_out, out_avals, backward


def tape_backward_pass(tape, records, tangent_in, tangents_out, cts_out) -> list:
    """Transpose a recorded linear tape: cotangents of the outputs -> of the inputs.

    The walk mirrors ``backward_pass``, with cotangents keyed by tracer index.
    """
    ct_env: dict[int, object] = {}
    for t, ct in zip(tangents_out, cts_out):
        if type(t) is LinearTracer and t._trace is tape and ct is not None and type(ct) is not Zero:
            prev = ct_env.get(t.index)
            ct_env[t.index] = ct if prev is None else add_tangents(prev, ct)

    for prim, args, params, linear, first, out_avals in reversed(records):
        if prim.multiple_results:
            cts = [ct_env.pop(first + k, None) for k in range(len(out_avals))]
            if all(c is None for c in cts):
                continue
            ct_arg = [Zero(a) if c is None else c for a, c in zip(out_avals, cts)]
        else:
            ct_arg = ct_env.pop(first, None)
            if ct_arg is None:
                continue
        rule = transpose_rules.get(prim)
        if rule is None:
            raise missing_rule("transpose", prim)
        cts_in = rule(ct_arg, *args, **params)
        for i, index in linear:
            ct = cts_in[i]
            if ct is not None and type(ct) is not Zero:
                prev = ct_env.get(index)
                ct_env[index] = ct if prev is None else add_tangents(prev, ct)

    out = []
    for t in tangent_in:
        ct = ct_env.get(t.index)
        out.append(Zero(t.aval) if ct is None else ct)
    return out


# --- transposition ---------------------------------------------------------------------

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


__all__ = [
    "JVPTrace", "JVPTracer", "jvp_flat", "linearize_flat", "LinearFunction", "backward_pass",
    "vjp_flat", "tape_backward_pass",
    "Zero", "UndefinedPrimal", "instantiate",
]
