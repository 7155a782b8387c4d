"""Linearization: the JVP with its tangent work recorded, the primal work done now.

Reverse mode is *direct linearization* followed by transposition (``transpose.py``).
``linearize_flat`` runs the JVP (``jvp.py``) with the tangent inputs being tracers of a
(non-dynamic) ``JaxprTrace`` one level below the JVP. Primal work therefore runs on
concrete values (eagerly, so Python ``if x > 0:`` works under ``grad``) or is staged by
an enclosing ``make_jaxpr``/``jit``, while every tangent operation is recorded into a
linear jaxpr whose constants are the residuals (a ``LinearFunction``).

``vjp`` (hence ``grad``) never needs the linear program as a jaxpr: it only transposes
it, once or a few times. ``vjp_flat`` therefore records the tangent operations on a
``LinearTape`` instead -- a plain list of records holding each primitive's transpose
rule, its params, its residuals as they are and its linear inputs/outputs as tracer
indices -- which the reverse-mode walker (``transpose.backward_walk``) runs directly.
This skips Var, Eqn and Literal construction, const bookkeeping and the jaxpr build,
which were most of the fixed cost of an eager ``grad`` of a small function (issue #3).
It works under any enclosing transform (``jit(grad(f))``, ``grad(grad(f))``,
``vmap(grad(f))``): residuals that are outer tracers are handed to the transpose rules
like any other value.
"""
from __future__ import annotations

from funcgrad.core.ad_util import UndefinedPrimal, Zero, instantiate, is_differentiable, tangent_aval
from funcgrad.core.ir import Jaxpr
from funcgrad.core.primitive import transpose_rules
from funcgrad.core.staging import JaxprBuilder, JaxprTrace, JaxprTracer
from funcgrad.core.trace import (
    Trace,
    Tracer,
    abstract_eval_by_id,
    abstract_eval_tuple,
    full_raise,
    get_aval_any,
    new_main,
    pop_main,
    push_main,
)
from funcgrad.core.typecheck import check_jaxpr, debug_checks_enabled
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.transforms.transpose import TRANSPOSE, backward_pass, backward_walk, transpose_rule_of


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


# --- vjp on a linear tape ------------------------------------------------------------------

class LinearTracer(Tracer):
    """A tangent recorded on a ``LinearTape``: only its type is known, plus its index
    in the tape (the key of its cotangent in the backward pass)."""

    __slots__ = ("aval", "index")  # a plain ``aval`` slot shadows Tracer.aval

    def __init__(self, trace, aval, index):
        self._trace = trace
        self.aval = aval
        self.index = index


class LinearTape(Trace):
    """Records tangent operations (all linear) in order, as records of the reverse-mode
    walker (``transpose.backward_walk``, whose docstring has the format).

    Non-dynamic, like linearize's ``JaxprTrace``: primal work never reaches it. A record
    holds the primitive's transpose rule and its arguments -- residuals as they are
    (NumPy values, tracers of outer transforms) and an ``UndefinedPrimal`` for each of
    the tape's own tracers -- with (argument position, tracer index) for the latter; the
    outputs are the tracers numbered ``first, first + 1, ...``. Keeping tracers out of
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
                aval = a.aval if type(a) is JaxprTracer else get_aval_any(a)
            avals.append(aval)
        hit = None if params else abstract_eval_by_id.get((primitive, *map(id, avals)))  # (the cache, inline)
        out_avals = hit[1] if hit is not None else abstract_eval_tuple(primitive, avals, params)
        first = self.count
        self.count = first + len(out_avals)
        rule = transpose_rules.get(primitive) or transpose_rule_of(primitive)
        if primitive.multiple_results:
            out = tuple([(first + k, a) for k, a in enumerate(out_avals)])
            self.main.payload.append((TRANSPOSE, rule, out, rule_args, None, params, linear))
            return [LinearTracer(self, a, first + k) for k, a in enumerate(out_avals)]
        self.main.payload.append((TRANSPOSE, rule, first, rule_args, None, params, linear))
        return LinearTracer(self, out_avals[0], first)


def vjp_flat(f_flat, primals, in_avals=None, report_nonzero=False):
    """Run ``f_flat`` at ``primals`` recording its linearization on a tape: returns
    (primal outputs, output tangent avals, ``backward(cts_out) -> cts_in``).
    ``in_avals`` (the primals' avals) may be passed when the caller already has them.
    With ``report_nonzero``, the avals returned are the primal outputs' (weak types
    kept), and a list follows saying which outputs depend on the inputs (have a tangent
    that is not symbolically zero)."""
    if in_avals is None:
        in_avals = [get_aval_any(p) for p in primals]
    if type(primals[0] if primals else None) is JaxprTracer:  # (cheap test first: the eager path)
        from funcgrad.transforms.ad_prune import staged_primal, wants_staged_primal

        if wants_staged_primal(primals):  # under jit: linearize only the live primal work
            f_flat = staged_primal(f_flat, in_avals)
    records: list = []
    main = push_main(LinearTape, records)
    try:
        tape = main.trace()
        tangent_in, tangents = [], []
        for aval in in_avals:
            t = tape.new_tracer(tangent_aval(aval))
            tangent_in.append(t)
            tangents.append(t if is_differentiable(t.aval) else Zero(t.aval))
        primal_avals = [] if report_nonzero else None
        primals_out, tangents_out = jvp_flat(f_flat, primals, tangents, primal_avals)
    finally:
        pop_main(main)

    out_index = [t.index if type(t) is LinearTracer and t._trace is tape else None for t in tangents_out]

    def backward(cts_out):  # (may run several times: it walks a copy of the records)
        cts = backward_walk(list(records), tape.count, out_index, cts_out)
        return [Zero(t.aval) if cts[t.index] is None else cts[t.index] for t in tangent_in]

    out_avals = [tangent_aval(get_aval_any(p)) for p in primals_out]
    if report_nonzero:
        nonzero = [k is not None for k in out_index]
        return primals_out, primal_avals, backward, nonzero
    return primals_out, out_avals, backward


__all__ = ["LinearFunction", "linearize_flat", "LinearTape", "LinearTracer", "vjp_flat"]
