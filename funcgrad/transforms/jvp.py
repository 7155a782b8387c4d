"""Forward mode: the JVP interpretation.

A ``JVPTrace``'s tracers carry a (primal, tangent) pair; each primitive's ``jvp`` rule
(registered under it in ``core/prims``) computes both. A tangent may be a symbolic
``Zero``: rules skip work for it, and a value whose tangent is zero is just its primal
to this transform (``full_lower``), so constants never become tracers.

The same interpretation is the first half of reverse mode: ``linearize.py`` runs it with
the tangents being tracers of a trace that records them (a linear jaxpr or a linear tape),
while the primals stay concrete. A rule that must keep primal and tangent work apart in
that case (control flow, ``jit`` calls) asks ``is_linearizing``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.ad_util import Zero, is_differentiable
from funcgrad.core.primitive import abstract_eval_rules, jvp_rules, missing_rule
from funcgrad.core.staging import JaxprTracer
from funcgrad.core.trace import Trace, Tracer, full_raise, get_aval_any, pop_main, push_main


class JVPTracer(Tracer):
    # ``aval`` is a plain slot (shadowing Tracer.aval) filled at construction: every
    # funcgrad.numpy function reads it, so a lazy property would cost more than it saves.
    __slots__ = ("primal", "tangent", "aval")

    def __init__(self, trace, primal, tangent, aval=None):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self.aval = get_aval_any(primal) if aval is None else aval

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
        weak = False
        for a in args:
            if type(a) is JVPTracer and a._trace.main is main:
                primals.append(a.primal)
                tangents.append(a.tangent)
                weak = weak or a.aval.weak_type
            else:
                primals.append(a)
                tangents.append(Zero.like(a))
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise missing_rule("jvp", primitive)
        primal_out, tangent_out = rule(primals, tangents, **params)
        if (weak or params.get("weak_type")) and not primitive.multiple_results:
            return self._weak_outputs(primitive, args, params, primal_out, tangent_out)
        if primitive.multiple_results:
            # A rule built from sub-programs (a jitted call, control flow) may hand back a
            # tangent for a bool/int output: it is zero, and must stay symbolic.
            return [self.lower(p, t if type(t) is Zero or is_differentiable(get_aval_any(p)) else Zero.like(p))
                    for p, t in zip(primal_out, tangent_out)]
        if type(tangent_out) is Zero:  # (self.lower, inlined: this is the hot path)
            return primal_out.full_lower() if isinstance(primal_out, Tracer) else primal_out
        return JVPTracer(self, primal_out, tangent_out, primal_out.aval if type(primal_out) is JaxprTracer else None)

    def _weak_outputs(self, primitive, args, params, primal_out, tangent_out):
        """Outputs of a primitive whose operands include a weakly typed tracer (a
        differentiated Python scalar) or that makes one (single-output primitives: control
        flow and calls give strong outputs). A concrete primal is a NumPy
        array, which cannot say it is weak, so the tracer carries the staged aval: this
        keeps ``(x + 0.5) * float32_array`` float32 under ``jvp``/``grad`` as under ``jit``
        and eagerly."""
        if type(tangent_out) is Zero:
            return primal_out.full_lower() if isinstance(primal_out, Tracer) else primal_out
        aval = abstract_eval_rules[primitive](*map(get_aval_any, args), **params)
        keep = aval.weak_type and not isinstance(primal_out, Tracer)  # (a tracer knows its aval)
        return JVPTracer(self, primal_out, tangent_out, aval if keep else None)

    def lower(self, primal, tangent):
        """The value a (primal, tangent) pair is to the caller: a JVPTracer, or, when
        the tangent is symbolically zero, just the primal (``full_lower``)."""
        if type(tangent) is Zero:
            return primal.full_lower() if isinstance(primal, Tracer) else primal
        return JVPTracer(self, primal, tangent)


def is_linearizing(tangents) -> bool:
    """True if any tangent is being staged into a linear program (reverse mode), so a
    JVP rule must keep primal and tangent computations apart."""
    # (imported here: linearize.py builds on this module)
    from funcgrad.core.staging import JaxprTracer
    from funcgrad.transforms.linearize import LinearTracer

    return any(
        type(t) is LinearTracer or (isinstance(t, JaxprTracer) and t._trace.builder.linearize)
        for t in tangents
    )


_PY_SCALARS = (bool, int, float, complex)


def jvp_flat(f_flat, primals, tangents, out_avals=None):
    """Push ``tangents`` (Zero allowed) through ``f_flat``: (primals_out, tangents_out).
    A list passed as ``out_avals`` receives the outputs' avals (a concrete primal cannot
    say it is weakly typed; its tracer's aval can)."""
    # Python scalars become NumPy values: primitive impls only ever see arrays.
    main = push_main(JVPTrace)
    try:
        trace = main.trace()
        tracers = []
        for p, t in zip(primals, tangents):
            aval = None
            if type(p) in _PY_SCALARS:  # weakly typed, as under jit
                aval = get_aval_any(p)
                p = np.asarray(p)
            if type(t) in _PY_SCALARS:
                t = np.asarray(t)
            tracers.append(JVPTracer(trace, p, t, aval))
        primals_out, tangents_out = [], []
        for out in f_flat(*tracers):
            if not (type(out) is JVPTracer and out._trace is trace):
                out = full_raise(trace, out)  # a constant or a lower-level tracer (or an escaped one: an error)
            primals_out.append(out.primal)
            tangents_out.append(out.tangent)
            if out_avals is not None:
                out_avals.append(out.aval)
    finally:
        pop_main(main)
    return primals_out, tangents_out


__all__ = ["JVPTrace", "JVPTracer", "jvp_flat", "is_linearizing"]
