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

from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, tangent_aval
from funcgrad.core.ad_util import instantiate as instantiate_zero
from funcgrad.core.interpret import jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr, Jaxpr, Var
from funcgrad.core.prims.effects import eqn_has_effects
from funcgrad.core.staging import JaxprBuilder, JaxprTrace, trace_to_jaxpr
from funcgrad.core.trace import full_raise, get_aval_any, new_main
from funcgrad.transforms.jvp import jvp_flat
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


# --- symbolic zeros through sub-jaxprs ----------------------------------------------------

def dce_jaxpr(jaxpr: Jaxpr, used_outputs=None, prune_invars: bool = False):
    """Drop the equations no (used) output needs; equations without outputs and
    effectful ones (``eqn_has_effects``: debug/io callbacks, loops holding them) stay.
    Returns (jaxpr, used_inputs): with ``prune_invars`` the jaxpr keeps only the used
    invars (and the used outputs); otherwise its signature is unchanged."""
    if used_outputs is None:
        used_outputs = [True] * len(jaxpr.outvars)
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u] if prune_invars else list(jaxpr.outvars)
    live = {id(v) for v, u in zip(jaxpr.outvars, used_outputs) if u and type(v) is Var}
    kept = []
    for e in reversed(jaxpr.eqns):
        if not e.outputs or any(id(o) in live for o in e.outputs) or eqn_has_effects(e):
            kept.append(e)
            live.update(id(a) for a in e.inputs if type(a) is Var)
    used_inputs = [id(v) in live for v in jaxpr.invars]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs) if u] if prune_invars else jaxpr.invars
    return Jaxpr(jaxpr.constvars, invars, kept[::-1], outvars), used_inputs


def select_invars(closed: ClosedJaxpr, keep) -> ClosedJaxpr:
    """``closed`` taking only the inputs ``keep`` marks (the others must be unused)."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [v for v, k in zip(j.invars, keep) if k], j.eqns, j.outvars), closed.consts)


def linearize_jaxpr_nz(closed: ClosedJaxpr, nonzeros, instantiate):
    """Linearize ``closed`` where only the inputs ``nonzeros`` marks have tangents.

    The body is dead-code eliminated first. Returns (forward closed jaxpr: inputs ->
    outputs + residuals, linear closed jaxpr: residuals + tangents of the non-zero
    inputs -> tangents of the non-zero outputs, residual avals, ``out_nonzero``,
    ``used``). An output's tangent is non-zero when it depends on a non-zero input
    tangent or ``instantiate`` asks for it (non-float outputs never have one);
    ``used[i]`` says whether the linear part reads the tangent of non-zero input ``i``
    (the caller may drop the others with ``select_invars``). Unused residuals are
    dropped from both parts. Like JAX's ``jvp_jaxpr`` with ``instantiate``: what the
    tangents of loops and branches need so that nothing is materialised for inputs
    that cannot affect the outputs."""
    closed = ClosedJaxpr(dce_jaxpr(closed.jaxpr)[0], closed.consts)
    in_avals = closed.in_avals
    nonzeros = [bool(nz) and is_differentiable(a) for nz, a in zip(nonzeros, in_avals)]
    holder = []

    def fwd(*xs):
        builder = JaxprBuilder(record_source=False, linearize=True)
        t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
        with new_main(JaxprTrace, builder) as lin_main:
            lin_trace = JaxprTrace(lin_main)
            t_in = [builder.new_tracer(lin_trace, a) for a in t_avals]
            it = iter(t_in)
            tangents = [next(it) if nz else Zero(tangent_aval(a)) for a, nz in zip(in_avals, nonzeros)]
            outs, t_out = jvp_flat(jaxpr_as_fun(closed), list(xs), tangents)
            out_nz = [is_differentiable(get_aval_any(o)) and (type(t) is not Zero or bool(inst))
                      for o, t, inst in zip(outs, t_out, instantiate)]
            out_tracers = [full_raise(lin_trace, instantiate_zero(t)) for t, nz in zip(t_out, out_nz) if nz]
            jaxpr, consts = builder.build(t_in, out_tracers)
        holder.append((jaxpr, consts, out_nz))
        return list(outs) + list(consts)

    fwd_closed = closed_jaxpr(fwd, in_avals)
    j, consts, out_nz = holder[0]
    n_res = len(consts)
    lin_j, used_in = dce_jaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars))
    res_used, used = used_in[:n_res], used_in[n_res:]
    # Residuals the linear part does not read are not computed for it.
    f = fwd_closed.jaxpr
    n_out = len(f.outvars) - n_res
    f_out = f.outvars[:n_out] + [v for v, u in zip(f.outvars[n_out:], res_used) if u]
    fwd_closed = ClosedJaxpr(dce_jaxpr(Jaxpr(f.constvars, f.invars, f.eqns, f_out))[0], fwd_closed.consts)
    lin_vars = [v for v, u in zip(lin_j.invars[:n_res], res_used) if u] + lin_j.invars[n_res:]
    lin_closed = ClosedJaxpr(Jaxpr([], lin_vars, lin_j.eqns, lin_j.outvars), [])
    res_avals = [get_aval_any(c) for c, u in zip(consts, res_used) if u]
    return fwd_closed, lin_closed, res_avals, out_nz, used
