"""Inlining pass: call-like equations (``Primitive.inline``) replaced by their bodies.

Compiled code runs what a call computes; its derivative rules do not matter there. A
call whose body is a sub-jaxpr (``jit_call``, the custom-rule calls, ``checkpoint_call``:
its one ``jaxpr_params`` entry) is evaluated in place, recursively. A call whose body is
a Python function (``custom_lin``) has an inliner of its own in ``inliners``.
"""
from __future__ import annotations

from typing import Callable

from funcgrad.core.interpret import eval_closed_jaxpr, walk_jaxpr
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.prims.calls import custom_lin_p
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.core.trace import get_aval_any


def _quiet(msg: str) -> None:
    del msg


def inline_calls(closed: ClosedJaxpr, log: Callable[[str], None] = _quiet) -> ClosedJaxpr:
    """``closed`` with its call-like equations inlined (``closed`` itself if it has none).
    ``log`` is told about a call that stays (its body could not be inlined)."""
    if not any(e.primitive.inline for e in closed.jaxpr.eqns):
        return closed

    def handle(eqn, invals):
        prim = eqn.primitive
        if not prim.inline:
            return prim.bind(*invals, **eqn.params)
        inliner = inliners.get(prim)
        if inliner is not None:
            return inliner(eqn, invals, log)
        (param,) = prim.jaxpr_params
        # The inlined body is a new program with constants of its own (re-tracing makes new
        # constvars): evaluate it as the closed pair it is, never with ``sub``'s constants.
        return eval_closed_jaxpr(inline_calls(eqn.params[param], log), *invals)

    def flat(*args):
        return walk_jaxpr(closed.jaxpr, closed.consts, list(args), handle)

    jaxpr, consts = trace_to_jaxpr(flat, closed.in_avals)
    return ClosedJaxpr(jaxpr, consts)


def _inline_custom_lin(eqn, invals, log):
    """A ``custom_lin`` (a linear map given by Python callables) traced in place: its
    forward function on the operands. If that cannot be traced, the equation stays
    (and jit runs the interpreter, which calls the function on arrays)."""
    from funcgrad.core import lax_api as lax

    p = eqn.params
    k = p["num_nonlin"]
    try:
        outs = list(p["jvp_fn"](list(invals[:k]), list(invals[k:])))
        if len(outs) != len(p["out_avals"]) or any(
                tuple(get_aval_any(o).shape) != tuple(a.shape) for o, a in zip(outs, p["out_avals"])):
            raise TypeError("custom_lin: its forward function returned values of other shapes")
        return [lax.convert_element_type(o, a.dtype, a.weak_type) for o, a in zip(outs, p["out_avals"])]
    except Exception as e:  # noqa: BLE001  (any failure: keep the equation)
        log(f"custom_lin not inlined ({type(e).__name__}: {str(e)[:200]})")
        return eqn.primitive.bind(*invals, **p)


# Inline calls whose body is not a sub-jaxpr: primitive -> inline(eqn, invals, log).
inliners: dict = {custom_lin_p: _inline_custom_lin}
