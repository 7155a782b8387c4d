"""Reverse mode under staging: differentiate only the live part of the primal program.

Under ``jit`` (any staging trace but ``make_jaxpr``'s, whose output shows what was
traced), the primal work of ``grad``/``vjp`` is staged, not run, so nothing is lost by
staging the function first, dropping the equations no output needs, and linearizing the
rest by evaluating that jaxpr under the JVP. A function that builds candidates and keeps
one (bench W10: 400 of 503 equations dead) then pays the JVP rules, their residuals and
their tangent records for the live equations only, and the ``funcgrad.numpy`` layer once.

The program is the same as linearizing the function directly, minus dead equations (which
``jit``'s simplification removes anyway): each live equation is bound again in order, with
the user's source line it was staged from (``source_info.staged_from``), so errors and
lines are unchanged. Taken only when every primal is a tracer of the innermost staging
trace: a concrete primal can be branched on in Python under ``grad``, a traced one cannot,
so staging it first changes nothing the function could observe.
"""
from __future__ import annotations

from funcgrad.core import source_info
from funcgrad.core.interpret import walk_jaxpr
from funcgrad.core.ir import Jaxpr, Var
from funcgrad.core.prims.effects import eqn_has_effects
from funcgrad.core.staging import JaxprTracer, prune_allowed, trace_to_jaxpr
from funcgrad.core.trace import bind, dynamic_payload

# Off switch (tests compare both routes; also a way out if a program ever differs).
ENABLED = [True]


def wants_staged_primal(primals) -> bool:
    """True when ``primals`` are all tracers of the innermost staging trace and it may drop
    dead equations (see the module docstring)."""
    if not ENABLED[0] or not primals or not prune_allowed():
        return False
    builder = dynamic_payload()
    if builder is None:
        return False
    for p in primals:
        if type(p) is not JaxprTracer or p._trace.main.payload is not builder:
            return False
    return True


def staged_primal(f_flat, in_avals):
    """``f_flat`` staged at ``in_avals`` with its dead equations dropped, as a flat function
    that binds the live ones again (under whatever transform calls it)."""
    jaxpr, consts = trace_to_jaxpr(f_flat, list(in_avals))
    live = _live_part(jaxpr)

    def run(*args):
        saved = source_info.staged_from
        try:
            return walk_jaxpr(live, consts, list(args), _bind_with_line)
        finally:
            source_info.staged_from = saved

    run.__name__ = getattr(f_flat, "__name__", "primal")
    return run


def _live_part(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` without the equations no output needs (``jaxpr_ad.dce_jaxpr``'s rule:
    equations without outputs and effectful ones stay), one test per single-output
    equation: most of a dead-heavy program's equations are tested and dropped here."""
    live = {id(v) for v in jaxpr.outvars if type(v) is Var}
    kept = []
    plain = _plain
    for e in reversed(jaxpr.eqns):
        outs = e.outputs
        if (id(outs[0]) in live if len(outs) == 1 else not outs or any([id(o) in live for o in outs])) \
                or (e.primitive not in plain and _may_have_effects(e)):
            kept.append(e)
            for a in e.inputs:
                if type(a) is Var:
                    live.add(id(a))
    kept.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, kept, jaxpr.outvars)


# Primitives that never have effects (no effect flag, no sub-programs): most dead equations
# are tested against this set, not by ``eqn_has_effects``.
_plain: set = set()


def _may_have_effects(e) -> bool:
    prim = e.primitive
    if not prim.jaxpr_params and getattr(prim, "effectful", None) is None:
        _plain.add(prim)
        return False
    return eqn_has_effects(e)


def _bind_with_line(eqn, invals):
    source_info.staged_from = eqn.source_info
    return bind(eqn.primitive, *invals, **eqn.params)


__all__ = ["ENABLED", "staged_primal", "wants_staged_primal"]
