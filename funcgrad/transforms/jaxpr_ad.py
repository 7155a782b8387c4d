"""Autodiff on closed jaxprs, for the rules of higher-order primitives (control flow,
``jit_call``, run-time tapes): their rules rewrite sub-jaxprs rather than values.

- ``closed_jaxpr(fun_flat, in_avals)``: stage a flat function into a closed jaxpr.
- ``linearize_jaxpr(closed)``: split a program into a forward part (inputs -> outputs
  + residuals) and a linear part (residuals + tangents -> output tangents), by
  linearizing it at abstract inputs.
- ``transpose_jaxpr(lin, linear_mask, ct_avals)``: the transpose of a program linear
  in the inputs ``linear_mask`` marks: (other inputs, output cotangents) -> cotangents
  of the linear inputs.
"""
from __future__ import annotations

from funcgrad.core.ad_util import instantiate
from funcgrad.core.interpret import jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr, Jaxpr
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.core.trace import get_aval_any
from funcgrad.transforms.linearize import linearize_flat
from funcgrad.transforms.transpose import backward_pass


def closed_jaxpr(fun_flat, in_avals) -> ClosedJaxpr:
    """``fun_flat(*values) -> list`` staged at ``in_avals``."""
    jaxpr, consts = trace_to_jaxpr(fun_flat, list(in_avals))
    return ClosedJaxpr(jaxpr, consts)


def linearize_jaxpr(closed: ClosedJaxpr):
    """(forward closed jaxpr: inputs -> outputs + residuals, linear closed jaxpr:
    residuals + input tangents -> output tangents, residual avals)."""
    holder = []

    def fwd(*xs):
        outs, lin = linearize_flat(jaxpr_as_fun(closed), list(xs))
        holder.append(lin)
        return list(outs) + list(lin.consts)

    fwd_closed = closed_jaxpr(fwd, closed.in_avals)
    lin = holder[0]
    j = lin.jaxpr
    lin_closed = ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), [])
    res_avals = [get_aval_any(c) for c in lin.consts]
    return fwd_closed, lin_closed, res_avals


def transpose_jaxpr(lin: ClosedJaxpr, linear_mask, ct_avals) -> ClosedJaxpr:
    """Closed jaxpr: (non-linear inputs, cotangents) -> cotangents of the linear inputs."""
    nonlin_avals = [a for a, m in zip(lin.in_avals, linear_mask) if not m]
    j = lin.jaxpr
    nonlin_vars = [v for v, m in zip(j.invars, linear_mask) if not m]
    lin_vars = [v for v, m in zip(j.invars, linear_mask) if m]
    as_linear = Jaxpr(list(j.constvars) + nonlin_vars, lin_vars, j.eqns, j.outvars)  # its consts are residuals too

    def transposed(*xs):
        nonlin, cts = xs[: len(nonlin_avals)], xs[len(nonlin_avals):]
        return [instantiate(c) for c in backward_pass(as_linear, list(lin.consts) + list(nonlin), list(cts))]

    return closed_jaxpr(transposed, nonlin_avals + list(ct_avals))
