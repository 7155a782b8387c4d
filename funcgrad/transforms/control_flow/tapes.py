"""Transform rules of the run-time tape primitives ``while_tape``, ``tape_apply``,
``tape_split``, ``tape_zip`` and ``tape_empty`` (declared, with the tape model, in
``funcgrad/tapes.py``).

First-order reverse mode through a staged while (``while_jvp_tape``) is a forward loop
``while_tape`` recording each iteration's residuals plus ``tape_apply`` replaying the
linear body over them; ``tape_apply`` transposes into a backwards replay. Forward-mode
rules (hessian = jacfwd(jacrev(f)) differentiates the reverse pass) run primal and
tangent records side by side (``tape_zip`` / ``tape_split``); reverse over reverse
goes through ``tape_scan`` (``tape_scan.py``).
"""
from __future__ import annotations

from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, is_undefined, tangent_aval, zeros_like_aval
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.ir import Jaxpr
from funcgrad.core.primitive import allow_missing, batch_rules, jvp_rules, transpose_rules
from funcgrad.core.prims.control_flow import while_parts
from funcgrad.core.trace import get_aval_any
from funcgrad.tapes import (
    TapeAval,
    is_tape,
    split_tape_avals,
    tape_apply_p,
    tape_aval_of,
    tape_split_p,
    tape_zip_p,
    while_tape_p,
    zip_avals,
)
from funcgrad.transforms.control_flow.tape_scan import batch_tape, tape_apply_as_scan_jvp, while_tape_linearize
from funcgrad.transforms.jaxpr_ad import closed_jaxpr, linearize_jaxpr_nz, select_invars
from funcgrad.transforms.jvp import is_linearizing, jvp_flat
from funcgrad.transforms.transpose import backward_pass


def while_jvp_tape(cc, bc, carry, t_bc, t_carry, cond_jaxpr, body_jaxpr, cond_nconsts, carry_nz):
    """Staged reverse mode through a while (the JVP rule of ``while`` under
    linearization): a forward while recording residuals + a linear tape replay.
    ``carry_nz`` (a fixpoint, ``while_loop.py``) marks the carries with a tangent; body
    constants whose tangent is zero or unread get none."""
    nb, nk = len(bc), len(carry)
    nz_b = [type(t) is not Zero and is_differentiable(get_aval_any(p)) for p, t in zip(bc, t_bc)]
    fwd_closed, body, res_avals, _, used = linearize_jaxpr_nz(body_jaxpr, nz_b + list(carry_nz), carry_nz)
    n_tb = sum(nz_b)
    keep = list(used[:n_tb]) + [True] * sum(carry_nz)
    body = select_invars(body, [True] * len(res_avals) + keep)
    tape_aval = TapeAval(res_avals)
    outs = while_tape_p.bind(
        *cc, *bc, *carry, cond_jaxpr=cond_jaxpr, body_jaxpr=fwd_closed, cond_nconsts=cond_nconsts,
        body_nconsts=nb, tape_aval=tape_aval,
    )
    carry_out, tape = outs[:nk], outs[nk]
    t_b = [instantiate(t) for t, z in zip(t_bc, nz_b) if z]
    t_b = [t for t, k in zip(t_b, keep) if k]
    t_k = [instantiate(t) for t, z in zip(t_carry, carry_nz) if z]
    t_out = iter(tape_apply_p.bind(tape, *t_b, *t_k, body=body, num_consts=len(t_b), reverse=False,
                                   linear=(True,) * (len(t_b) + len(t_k))))
    return carry_out, [next(t_out) if z else Zero(tangent_aval(get_aval_any(c))) for c, z in zip(carry_out, carry_nz)]


def _tape_apply_transpose(cts, tape, *args, body, num_consts, reverse, linear):
    nc = num_consts
    consts, carry = args[:nc], args[nc:]
    c_lin = list(linear[:nc])
    if c_lin != sorted(c_lin) or not all(linear[nc:]):
        raise NotImplementedError("tape_apply transpose: expected non-linear constants first and a linear carry")
    n_res_c = c_lin.count(False)
    res_c, lin_c = list(consts[:n_res_c]), consts[n_res_c:]
    n_tape = len(tape_aval_of(tape).res_avals)
    b = body.jaxpr
    nk = len(carry)
    as_linear = Jaxpr(
        b.invars[:n_tape] + b.invars[n_tape : n_tape + n_res_c], b.invars[n_tape + n_res_c :], b.eqns, b.outvars
    )
    lin_c_avals = [a.aval if is_undefined(a) else tangent_aval(get_aval_any(a)) for a in lin_c]
    ct_avals = [tangent_aval(a) for a in body.out_avals]

    def body_t(*xs):
        res = xs[:n_tape]
        rc = xs[n_tape:n_tape + n_res_c]
        acc = xs[n_tape + n_res_c:n_tape + n_res_c + len(lin_c)]
        ctk = xs[n_tape + n_res_c + len(lin_c):]
        cts_in = [instantiate(c) for c in backward_pass(as_linear, list(res) + list(rc), list(ctk))]
        from funcgrad.core import lax_api as lax

        new_acc = [lax.add(a, c) for a, c in zip(acc, cts_in[: len(lin_c)])]
        return new_acc + cts_in[len(lin_c):]

    t_avals = list(body.in_avals[:n_tape])
    body_closed = closed_jaxpr(body_t, t_avals + [get_aval_any(r) for r in res_c] + lin_c_avals + ct_avals)
    acc0 = [zeros_like_aval(a) for a in lin_c_avals]
    cts = [instantiate(c) for c in cts]
    outs = tape_apply_p.bind(
        tape, *res_c, *acc0, *cts, body=body_closed, num_consts=n_res_c, reverse=not reverse,
        linear=(False,) * n_res_c + (True,) * (len(lin_c) + nk),
    )
    result = [None] * n_res_c + list(outs)
    return [None] + [c if is_undefined(a) else None for c, a in zip(result, args)]


def _tape_apply_jvp_fixed_tape(primals, tangents, *, body, num_consts, reverse, linear):
    """The JVP when the tape's tangent is zero: replay the tangents over the same tape."""
    tape, *args = primals
    ans = tape_apply_p.bind(tape, *args, body=body, num_consts=num_consts, reverse=reverse, linear=linear)
    nonlin_moving = [t for t, l in zip(tangents[1:], linear) if not l and type(t) is not Zero]
    if nonlin_moving or is_linearizing(tangents):
        # the residuals' consumers move too (or tangents are staged): the general rule
        return tape_apply_as_scan_jvp(primals, tangents, body=body, num_consts=num_consts, reverse=reverse,
                                      linear=linear)
    t_args = [a if not l else instantiate(t) for a, t, l in zip(args, tangents[1:], linear)]
    if all(type(t) is Zero for t, l in zip(tangents[1:], linear) if l):
        return ans, [Zero(tangent_aval(get_aval_any(a))) for a in ans]
    return ans, tape_apply_p.bind(tape, *t_args, body=body, num_consts=num_consts, reverse=reverse, linear=linear)


def _while_tape_batch(args, bdims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    """Batched forward loop: every lane steps until all are done; each iteration records
    its residuals plus the mask of lanes that were still running."""
    from funcgrad.core import lax_api as lax
    from funcgrad.core.batch_util import batch_size, batched_aval, bdim_at
    from funcgrad.transforms.batching import batch_flat
    from funcgrad.transforms.effects import has_effects, predicate_effects

    size = batch_size(args, bdims)
    moved = [batch_tape(x, d, size) if is_tape(x) else bdim_at(x, d, size, 0) for x, d in zip(args, bdims)]
    cc, bc, carry = while_parts(moved, cond_nconsts, body_nconsts)
    nc, nb, nk = cond_nconsts, body_nconsts, len(carry)
    b = lambda a: batched_aval(a, size)  # noqa: E731
    b_cond = lambda *xs: batch_flat(jaxpr_as_fun(cond_jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    b_body = lambda *xs: batch_flat(jaxpr_as_fun(body_jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    gated = predicate_effects(body_jaxpr) if has_effects(body_jaxpr) else None

    def any_lane(*xs):
        return [lax.reduce_max(b_cond(*xs)[0], (0,))]

    def step(*xs):
        c, bb, k = xs[:nc], xs[nc:nc + nb], xs[nc + nb:]
        (pred,) = b_cond(*c, *k)
        if gated is not None:  # the body's effects fire only in the lanes still running
            out = batch_flat(jaxpr_as_fun(gated), [pred, *bb, *k], [0] * (1 + nb + nk), size, lambda i, n: 0)
        else:
            out = b_body(*bb, *k)
        new, res = out[:nk], out[nk:]
        kept = [lax.select(lax.broadcast_in_dim(pred, get_aval_any(n).shape, (0,)), n, o) for n, o in zip(new, k)]
        return kept + list(res) + [pred]

    k_avals = [b(a) for a in cond_jaxpr.in_avals[nc:]]
    c_avals = [b(a) for a in cond_jaxpr.in_avals[:nc]]
    cond_closed = closed_jaxpr(any_lane, c_avals + k_avals)
    body_closed = closed_jaxpr(step, c_avals + [b(a) for a in body_jaxpr.in_avals[:nb]] + k_avals)
    new_aval = batched_aval(tape_aval, size)
    outs = while_tape_p.bind(*cc, *cc, *bc, *carry, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
                             cond_nconsts=nc, body_nconsts=nc + nb, tape_aval=new_aval)
    return outs, [0] * nk + [0]  # the tape stays a batched value (bdim 0 marks it)


def _tape_apply_batch(args, bdims, *, body, num_consts, reverse, linear):
    from funcgrad.core import lax_api as lax
    from funcgrad.core.batch_util import batch_size, batched_aval, bdim_at
    from funcgrad.transforms.batching import batch_flat

    tape, *rest = args
    d_tape, *d_rest = bdims
    t_aval = tape_aval_of(tape)
    # mapped at this level (bdim 0: this level's mask last), or shared by the lanes (it
    # may still be batched by an inner vmap, whose masks are plain fields here)
    if d_tape is not None and t_aval.batch is None:
        raise NotImplementedError("tape_apply: inconsistent batching of a tape")
    size = t_aval.batch if d_tape is not None else batch_size(rest, d_rest)
    rest = [batch_tape(x, d, size) if is_tape(x) else bdim_at(x, d, size, 0) for x, d in zip(rest, d_rest)]
    n_res = len(body.in_avals) - len(rest)
    b = lambda a: batched_aval(a, size)  # noqa: E731
    inner = lambda *xs: batch_flat(jaxpr_as_fun(body), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    if d_tape is None:
        # An ordinary tape (same residuals for every lane): batch only the body's other
        # inputs; the residuals it reads from the tape are not mapped.
        dims = [None] * n_res + [0] * len(rest)
        plain = lambda *xs: batch_flat(jaxpr_as_fun(body), list(xs), dims, size, lambda i, n: 0)  # noqa: E731
        new_body = closed_jaxpr(plain, list(body.in_avals[:n_res]) + [b(a) for a in body.in_avals[n_res:]])
    else:
        # A batched tape ends each iteration's residuals with the lanes' running mask:
        # lanes that had already stopped keep their carry (identity step).
        nk = len(body.out_avals)

        def masked(*xs):
            res, mask, others = xs[:n_res], xs[n_res], xs[n_res + 1:]
            new = inner(*res, *others)
            old = others[len(others) - nk:]
            return [lax.select(lax.broadcast_in_dim(mask, get_aval_any(n).shape, (0,)), n, o) for n, o in zip(new, old)]

        res_avals = list(t_aval.res_avals)
        new_body = closed_jaxpr(masked, res_avals + [b(a) for a in body.in_avals[n_res:]])
    outs = tape_apply_p.bind(tape, *rest, body=new_body, num_consts=num_consts, reverse=reverse, linear=linear)
    return outs, [0] * len(outs)


# --- forward-mode derivatives of the tape primitives (staged hessian through while_loop) ----
# hessian = jacfwd(jacrev(f)): the outer forward pass differentiates the reverse pass, so
# while_tape and tape_apply need JVP rules. A tape's tangent is a tape of residual
# tangents; ``tape_split`` / ``tape_zip`` separate and rejoin a combined run.

def _while_tape_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    cc, bc, carry = while_parts(primals, cond_nconsts, body_nconsts)
    if is_linearizing(tangents):  # reverse over reverse: see tape_scan.py
        _, t_bc, t_carry = while_parts(tangents, cond_nconsts, body_nconsts)
        return while_tape_linearize(cc, bc, carry, t_bc, t_carry, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                                    cond_nconsts=cond_nconsts, tape_aval=tape_aval)
    tans = [instantiate(t) for t in tangents]
    _, t_bc, t_carry = while_parts(tans, cond_nconsts, body_nconsts)
    nb, nk = len(bc), len(carry)
    body_fn = jaxpr_as_fun(body_jaxpr)

    n_rf = len(tape_aval.fields)  # a vmapped tape's records end with the lanes' mask

    def body_jvp(*xs):
        b, tb, k, tk = xs[:nb], xs[nb:2 * nb], xs[2 * nb:2 * nb + nk], xs[2 * nb + nk:]
        out, t_out = jvp_flat(body_fn, list(b) + list(k), list(tb) + list(tk))
        t_out = [instantiate(t) for t in t_out]
        mask = list(out[nk + n_rf:])
        return list(out[:nk]) + t_out[:nk] + list(out[nk:nk + n_rf]) + t_out[nk:nk + n_rf] + mask

    def cond_fn(*xs):
        return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *xs[:cond_nconsts + nk])

    b_avals = list(body_jaxpr.in_avals[:nb])
    k_avals = list(body_jaxpr.in_avals[nb:])
    ta = lambda avals: [tangent_aval(a) for a in avals]  # noqa: E731
    body_closed = closed_jaxpr(body_jvp, b_avals + ta(b_avals) + k_avals + ta(k_avals))
    cond_closed = closed_jaxpr(cond_fn, list(cond_jaxpr.in_avals) + ta(k_avals))
    combined = tape_aval.with_fields(list(tape_aval.fields) + [tangent_aval(a) for a in tape_aval.fields])
    outs = while_tape_p.bind(*cc, *bc, *t_bc, *carry, *t_carry, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
                             cond_nconsts=cond_nconsts, body_nconsts=2 * nb, tape_aval=combined)
    tape, t_tape = tape_split_p.bind(outs[2 * nk], n=n_rf)
    return list(outs[:nk]) + [tape], list(outs[nk:2 * nk]) + [t_tape]


def _tape_apply_jvp(primals, tangents, *, body, num_consts, reverse, linear):
    tape, *args = primals
    t_tape = tangents[0]
    if type(t_tape) is Zero:
        return _tape_apply_jvp_fixed_tape(
            primals, tangents, body=body, num_consts=num_consts, reverse=reverse, linear=linear
        )
    if is_linearizing(tangents):  # reverse over reverse: see tape_scan.py
        return tape_apply_as_scan_jvp(primals, tangents, body=body, num_consts=num_consts, reverse=reverse,
                                      linear=linear)
    n_args = len(args)
    n_res = len(body.in_avals) - n_args
    t_args = [
        instantiate(t) if type(t) is not Zero else instantiate(Zero(tangent_aval(get_aval_any(a))))
        for a, t in zip(args, tangents[1:])
    ]
    nc = num_consts
    body_fn = jaxpr_as_fun(body)
    t_aval = tape_aval_of(tape)
    nm = n_res - len(t_aval.fields) if t_aval.batch is not None else 0  # zipped records: (res, d_res, masks)
    n_rf = n_res - nm

    def jvp_body(*xs):
        res, dres = list(xs[:n_rf]), list(xs[n_rf:2 * n_rf])
        o = 2 * n_rf
        for q in range(o, o + nm):
            res.append(xs[q])
            dres.append(Zero(tangent_aval(get_aval_any(xs[q]))))
        o += nm
        c, dc = xs[o:o + nc], xs[o + nc:o + 2 * nc]
        k, dk = xs[o + 2 * nc:o + 2 * nc + (n_args - nc)], xs[o + 2 * nc + (n_args - nc):]
        out, t_out = jvp_flat(body_fn, list(res) + list(c) + list(k), list(dres) + list(dc) + list(dk))
        return list(out) + [instantiate(t) for t in t_out]

    res_avals = list(body.in_avals[:n_rf])
    mask_avals = list(body.in_avals[n_rf:n_res])
    c_avals = list(body.in_avals[n_res:n_res + nc])
    k_avals = list(body.in_avals[n_res + nc:])
    ta = lambda avals: [tangent_aval(a) for a in avals]  # noqa: E731
    new_body = closed_jaxpr(
        jvp_body, res_avals + ta(res_avals) + mask_avals + c_avals + ta(c_avals) + k_avals + ta(k_avals)
    )
    zipped = tape_zip_p.bind(tape, t_tape)
    c, k = list(args[:nc]), list(args[nc:])
    tc, tk = t_args[:nc], t_args[nc:]
    outs = tape_apply_p.bind(zipped, *c, *tc, *k, *tk, body=new_body, num_consts=2 * nc, reverse=reverse,
                             linear=(False,) * (2 * n_args))
    nk = n_args - nc
    return outs[:nk], outs[nk:]


def _tape_split_batch(args, bdims, *, n):
    (tape,), (d,) = args, bdims
    return tape_split_p.bind(tape, n=n), [d, d]


def _tape_zip_batch(args, bdims):
    (a, b), (da, db) = args, bdims
    if da != db:
        raise NotImplementedError("tape_zip: tapes batched differently")
    return tape_zip_p.bind(a, b), da


jvp_rules[while_tape_p] = _while_tape_jvp
batch_rules[while_tape_p] = _while_tape_batch
allow_missing("transpose", while_tape_p, "not linear: it is the forward half of a linearized while_loop")
jvp_rules[tape_apply_p] = _tape_apply_jvp
transpose_rules[tape_apply_p] = _tape_apply_transpose
batch_rules[tape_apply_p] = _tape_apply_batch
batch_rules[tape_split_p] = _tape_split_batch
batch_rules[tape_zip_p] = _tape_zip_batch
allow_missing("eager_vjp", tape_zip_p, "uses the general reverse mode for this one primitive: a run-time tape op")
jvp_rules[tape_split_p] = lambda primals, tangents, *, n: (
    tape_split_p.bind(primals[0], n=n),
    [Zero(a) for a in split_tape_avals(get_aval_any(primals[0]), n)]
    if type(tangents[0]) is Zero
    else tape_split_p.bind(tangents[0], n=n),
)
jvp_rules[tape_zip_p] = lambda primals, tangents: (
    tape_zip_p.bind(*primals),
    Zero(zip_avals(*[get_aval_any(p) for p in primals])) if all(type(t) is Zero for t in tangents)
    else tape_zip_p.bind(*[instantiate(t) for t in tangents]),
)
