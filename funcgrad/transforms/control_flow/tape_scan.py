"""``tape_scan``: a loop over run-time tapes with a carry and per-record outputs, and
the rules that make reverse mode through a staged ``while_loop`` differentiable again.

First-order reverse mode through a staged while (``tapes.py``) is a forward
loop ``while_tape`` that records each iteration's residuals on a tape whose length is
known only at run time, plus ``tape_apply``, which replays it. Differentiating *that*
program in reverse (``grad(grad(f))`` under ``jit``/``make_jaxpr``) needs the
derivative of a tape's contents: a tangent tape (one record of residual tangents per
iteration) on the way forward and a cotangent tape on the way back. ``tape_scan`` is
the one construct all of those rules produce:

    tape_scan(tape_1 .. tape_m, consts, carry; body) -> (carry', ys_tape)

iterates over the records of the tapes (all of one length) forwards or backwards;
``body(fields of record i of every tape, consts, carry) -> (carry', ys_i)``; ``ys_i``
become record ``i`` of a new tape (records stay in index order whatever the
direction). It is a scan whose ``xs`` and ``ys`` are tapes.

Its rules close the system under differentiation:

- linearize (``jvp`` with staged tangents): linearize the body abstractly into
  ``fwd: in -> (out, s)`` and ``lin: (s, d_in) -> d_out``; the primal is a tape_scan of
  ``fwd`` recording ``s`` next to ``ys``; the tangent a tape_scan of ``lin`` over that
  ``s``-tape and the input tangent tapes, in the same direction.
- transpose: the same walk in the other direction over the non-linear tapes and the
  cotangent of ``ys``, carrying the cotangents of the linear carry and accumulating
  those of the linear consts; the cotangents of linear *tapes* come out as ``ys``.
- ``while_tape`` under linearization records the body's second-level residuals on its
  tape and its tangent is a forward tape_scan (below); ``tape_apply`` is a tape_scan
  without ``ys``, so its derivative rules are these.

``tape_split`` / ``tape_zip`` (records cut in two / put side by side) are linear and
transpose into each other. Batched tapes (``vmap``) go through ``_tape_scan_batch``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.ad_util import Zero, instantiate, is_undefined, tangent_aval, zeros_like_aval
from funcgrad.core.interpret import jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr, Jaxpr
from funcgrad.core.primitive import allow_missing, batch_rules, jvp_rules, transpose_rules
from funcgrad.core.prims.control_flow import scan_p
from funcgrad.core.trace import get_aval_any
from funcgrad.tapes import (
    TapeAval,
    field_avals,
    is_tape,
    scan_parts,
    tape_aval_of,
    tape_empty_p,
    tape_scan,
    tape_scan_p,
    tape_split_p,
    tape_zeros_p,
    tape_zip_p,
    while_tape_p,
)
from funcgrad.transforms.control_flow.common import split_list
from funcgrad.transforms.jaxpr_ad import closed_jaxpr, linearize_jaxpr
from funcgrad.transforms.jvp import is_linearizing, jvp_flat
from funcgrad.transforms.transpose import backward_pass


def _fill_zeros(fn, avals, present):
    """``fn`` taking only the inputs marked ``present``; the others are zeros."""
    def wrapped(*xs):
        it = iter(xs)
        full = [next(it) if p else zeros_like_aval(a) for a, p in zip(avals, present)]
        return fn(*full)
    return wrapped


# --- linearization ---------------------------------------------------------------------------

def _tape_scan_jvp(primals, tangents, *, body, num_tapes, num_consts, reverse, linear, ys_aval):
    tapes, consts, carry = scan_parts(primals, num_tapes, num_consts)
    t_tapes, t_consts, t_carry = scan_parts(tangents, num_tapes, num_consts)
    nk = len(carry)
    out_avals = [get_aval_any(c).strip_weak_type() for c in carry] + ([ys_aval] if ys_aval is not None else [])
    params = dict(
        body=body, num_tapes=num_tapes, num_consts=num_consts, reverse=reverse, linear=linear, ys_aval=ys_aval
    )
    if all(type(t) is Zero for t in tangents):
        outs = tape_scan_p.bind(*primals, **params)
        return outs, [Zero(tangent_aval(a)) for a in out_avals]
    fields = field_avals([tape_aval_of(t) for t in tapes])
    sizes = [len(tape_aval_of(t).res_avals) for t in tapes]
    in_avals = list(body.in_avals)
    n_in = len(in_avals)
    # Which body inputs carry a tangent: fields of tapes with a tangent tape, and every
    # const / carry (those are instantiated: arrays of a known shape cost nothing here).
    tape_has = [type(t) is not Zero for t in t_tapes]
    present = [h for h, s in zip(tape_has, sizes) for _ in range(s)] + [True] * (n_in - len(fields))
    d_ops = [t for t, h in zip(t_tapes, tape_has) if h] + [instantiate(t) for t in t_consts + t_carry]
    n_ys = len(body.out_avals) - nk
    # A batched ys tape (vmap) ends each record with the lanes' mask: it stays last.
    ysb = ys_aval is not None and ys_aval.batch is not None
    nm = ys_aval.n_masks if ys_aval is not None else 0  # lane masks (one per vmap level), last
    n_ysf = n_ys - nm
    if not is_linearizing(tangents):
        return _joint_jvp(tapes, consts, carry, d_ops, present, tape_has, params, in_avals, nk, n_ysf)
    fwd, lin, s_avals = linearize_jaxpr(body)
    n_s = len(s_avals)
    # fwd: in -> (carry', ys, [mask], s); record s next to ys, and keep the records
    # batched (the lanes' mask last) when the loop is: the transpose needs a mask for
    # the cotangent tapes of batched tapes.
    in_mask, pos = None, 0
    for t, sz in zip(tapes, sizes):
        if in_mask is None and tape_aval_of(t).batch is not None:
            src = tape_aval_of(t)
            in_mask = list(range(pos + sz - src.n_masks, pos + sz))
        pos += sz
    if ysb:
        fwd = _permuted(
            fwd, list(range(nk + n_ysf)) + list(range(nk + n_ys, nk + n_ys + n_s)) + list(range(nk + n_ysf, nk + n_ys))
        )
        ys_s = ys_aval.with_fields(list(ys_aval.fields) + list(s_avals))
    elif in_mask is not None:
        fwd_fn = jaxpr_as_fun(fwd)
        fwd = closed_jaxpr(lambda *xs: list(fwd_fn(*xs)) + [xs[i] for i in in_mask], fwd.in_avals)
        ys_s = src.with_fields(list(body.out_avals[nk:]) + list(s_avals)).update(shape=())
    else:
        ys_s = TapeAval(list(body.out_avals[nk:]) + list(s_avals))
    outs = tape_scan(tapes, consts, carry, fwd, reverse=reverse, linear=(False,) * len(primals), ys_aval=ys_s)
    ys_tape, s_tape = tape_split_p.bind(outs[nk], n=n_ysf)
    primal_out = list(outs[:nk]) + ([ys_tape] if ys_aval is not None else [])
    # lin: (s, d_in) -> (d_carry', d_ys); absent tangent tapes are zeros inside the body.
    lin_fn = jaxpr_as_fun(lin)
    n_sf = len(tape_aval_of(s_tape).res_avals)  # the s tape's fields (with the mask when batched)

    def lin_body(*xs):
        s, d = xs[:n_s], xs[n_sf:]
        out = _fill_zeros(lambda *full: lin_fn(*s, *full), [tangent_aval(a) for a in in_avals], present)(*d)
        return list(out[:nk + n_ysf]) + list(xs[n_s:n_s + nm])  # the masks of this record

    d_field_avals = [tangent_aval(a) for a, p in zip(in_avals, present) if p]
    lin_closed = closed_jaxpr(lin_body, list(tape_aval_of(s_tape).res_avals) + d_field_avals)
    n_dt = sum(tape_has)
    d_ys = None
    if ys_aval is not None:
        d_ys = ys_aval.with_fields([tangent_aval(a) for a in ys_aval.fields]) if ysb else TapeAval(
            [tangent_aval(a) for a in body.out_avals[nk:]])
    t_out = tape_scan([s_tape] + d_ops[:n_dt], d_ops[n_dt:n_dt + num_consts], d_ops[n_dt + num_consts:], lin_closed,
                      reverse=reverse, linear=(False,) + (True,) * len(d_ops), ys_aval=d_ys)
    return primal_out, list(t_out)


def _permuted(closed: ClosedJaxpr, order) -> ClosedJaxpr:
    """``closed`` with its outputs in the order ``order`` (indices into its outputs)."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.eqns, [j.outvars[i] for i in order]), closed.consts)


def _joint_jvp(tapes, consts, carry, d_ops, present, tape_has, params, in_avals, nk, n_ys):
    """Forward mode: one tape_scan over (primal, tangent) records. ``n_ys``: per-record
    outputs without the lane mask of a batched ys tape."""
    body = params["body"]
    ys_aval = params["ys_aval"]
    ysb = ys_aval is not None and ys_aval.batch is not None
    fn = jaxpr_as_fun(body)
    n_tapes = len(tapes)
    n_dt = sum(tape_has)
    nc = len(consts)
    n_fields = len(in_avals) - nc - nk
    d_tapes, d_consts, d_carry = d_ops[:n_dt], d_ops[n_dt:n_dt + nc], d_ops[n_dt + nc:]
    n_dfields = sum(present[:n_fields])

    def joint(*xs):
        fields, dfields, c, dc, k, dk = split_list(xs, n_fields, n_dfields, nc, nc, nk)
        it = iter(dfields)
        full_d = [next(it) if p else Zero(tangent_aval(a)) for a, p in zip(in_avals[:n_fields], present)]
        out, t_out = jvp_flat(fn, list(fields) + list(c) + list(k), full_d + list(dc) + list(dk))
        t_out = [instantiate(t) for t in t_out]
        mask = list(out[nk + n_ys:])  # a batched ys tape's mask: once, last
        return list(out[:nk]) + t_out[:nk] + list(out[nk:nk + n_ys]) + t_out[nk:nk + n_ys] + mask

    ta = lambda avs: [tangent_aval(a) for a in avs]  # noqa: E731
    f_avals, c_avals, k_avals = in_avals[:n_fields], in_avals[n_fields:n_fields + nc], in_avals[n_fields + nc:]
    joint_avals = (
        list(f_avals)
        + [tangent_aval(a) for a, p in zip(f_avals, present) if p]
        + list(c_avals)
        + ta(c_avals)
        + list(k_avals)
        + ta(k_avals)
    )
    joint_closed = closed_jaxpr(joint, joint_avals)
    ys_avals = list(body.out_avals[nk:nk + n_ys])
    ys_joint = None
    if ys_aval is not None:
        ys_joint = ys_aval.with_fields(ys_avals + ta(ys_avals)) if ysb else TapeAval(ys_avals + ta(ys_avals))
    # fields of the tangent tapes come after all primal fields: reorder by building the body
    # with tapes in the order (primal tapes..., tangent tapes...).
    outs = tape_scan(
        list(tapes) + list(d_tapes),
        list(consts) + list(d_consts),
        list(carry) + list(d_carry),
        joint_closed,
        reverse=params["reverse"],
        linear=(False,) * (n_tapes + n_dt + 2 * nc + 2 * nk),
        ys_aval=ys_joint,
    )
    k_out, dk_out = list(outs[:nk]), list(outs[nk:2 * nk])
    if ys_aval is None:
        return k_out, dk_out
    ys, d_ys = tape_split_p.bind(outs[2 * nk], n=n_ys)
    return k_out + [ys], dk_out + [d_ys]


# --- transposition -------------------------------------------------------------------------

def _tape_scan_transpose(cts, *args, body, num_tapes, num_consts, reverse, linear, ys_aval):
    tapes, consts, carry = scan_parts(args, num_tapes, num_consts)
    nk = len(carry)
    # A carry operand that is a known value is an instantiated zero tangent (a linear
    # program holds no other constants in linear positions): transpose it as linear.
    ct_carry, ct_ys = list(cts[:nk]), (cts[nk] if ys_aval is not None else None)
    has_ys_ct = ct_ys is not None and type(ct_ys) is not Zero
    lin_tape = [is_undefined(t) for t in tapes]
    lin_const = [is_undefined(c) for c in consts]
    nonlin_tapes = [t for t, m in zip(tapes, lin_tape) if not m]
    if not nonlin_tapes and not has_ys_ct:
        raise NotImplementedError("tape_scan transpose: no tape left to give the trip count")
    lin_avals = [t.aval for t, m in zip(tapes, lin_tape) if m]
    ys_batched = ys_aval is not None and ys_aval.batch is not None
    sizes = [len(tape_aval_of(t).res_avals) if not m else len(t.aval.res_avals) for t, m in zip(tapes, lin_tape)]
    j = body.jaxpr
    n_fields = sum(sizes)
    field_vars, const_vars, carry_vars = (
        j.invars[:n_fields],
        j.invars[n_fields : n_fields + num_consts],
        j.invars[n_fields + num_consts :],
    )
    field_lin = [m for m, s in zip(lin_tape, sizes) for _ in range(s)]
    nonlin_vars = [v for v, m in zip(field_vars, field_lin) if not m] + [
        v for v, m in zip(const_vars, lin_const) if not m
    ]
    lin_vars = (
        [v for v, m in zip(field_vars, field_lin) if m]
        + [v for v, m in zip(const_vars, lin_const) if m]
        + list(carry_vars)
    )
    as_linear = Jaxpr(nonlin_vars, lin_vars, j.eqns, j.outvars)
    n_nonlin = len(nonlin_vars)
    n_lin_fields = sum(field_lin)
    n_lin_consts = sum(lin_const)
    ys_ct_avals = [tangent_aval(a) for a in body.out_avals[nk:]]
    nonlin_field_avals = [v.aval for v, m in zip(field_vars, field_lin) if not m]
    n_nonlin_fields = len(nonlin_field_avals)
    nl_const_avals = [v.aval for v, m in zip(const_vars, lin_const) if not m]
    lin_const_avals = [tangent_aval(v.aval) for v, m in zip(const_vars, lin_const) if m]
    k_ct_avals = [tangent_aval(v.aval) for v in carry_vars]

    # Batched (vmapped) tapes end each record with their lanes' mask. A cotangent tape
    # of a batched tape reads the mask of a non-linear tape (or of the ys cotangent)
    # batched the same way; where that can be read inside the transposed body:
    mask_at, pos = {}, 0
    for t, m, sz in zip(tapes, lin_tape, sizes):
        a = tape_aval_of(t) if not m else None
        if a is not None and a.batch is not None:
            mask_at.setdefault((a.batch, a.inner), list(range(pos + sz - a.n_masks, pos + sz)))
        pos += 0 if m else sz
    if has_ys_ct and ys_batched:
        end = n_nonlin_fields + len(ys_ct_avals)
        mask_at.setdefault((ys_aval.batch, ys_aval.inner), list(range(end - ys_aval.n_masks, end)))
    # One reverse scan per batching of the linear tapes (almost always one): its per-record
    # outputs are the cotangents of those tapes, with their mask last.
    groups: dict = {}
    for i, a in enumerate(lin_avals):
        groups.setdefault((a.batch, a.inner), []).append(i)
    for sig in groups:
        if sig[0] is not None and sig not in mask_at:
            raise NotImplementedError("tape_scan transpose: no lane mask for the cotangent of a batched tape")
    field_owner = [i for i, a in enumerate(lin_avals) for _ in a.res_avals]
    field_is_mask = [k >= len(a.fields) for a in lin_avals for k in range(len(a.res_avals))]

    def reverse_scan(group):
        sig = (lin_avals[group[0]].batch, lin_avals[group[0]].inner) if group else (None, ())
        keep = [o in group and not mk for o, mk in zip(field_owner, field_is_mask)]

        def body_t(*xs):
            i = 0
            nl_fields = xs[i:i + n_nonlin_fields]
            i += n_nonlin_fields
            y_cts = list(xs[i:i + len(ys_ct_avals)]) if has_ys_ct else [Zero(a) for a in ys_ct_avals]
            if has_ys_ct and ys_batched:  # the masks: not cotangents
                for q in range(len(y_cts) - ys_aval.n_masks, len(y_cts)):
                    y_cts[q] = Zero(ys_ct_avals[q])
            i += len(ys_ct_avals) if has_ys_ct else 0
            nl_consts, acc, k_ct = split_list(xs[i:], n_nonlin - n_nonlin_fields, n_lin_consts)
            got = backward_pass(as_linear, list(nl_fields) + list(nl_consts), list(k_ct) + list(y_cts))
            got = [instantiate(g) for g in got]
            f_ct, c_ct, prev_k = (
                got[:n_lin_fields],
                got[n_lin_fields : n_lin_fields + n_lin_consts],
                got[n_lin_fields + n_lin_consts :],
            )
            from funcgrad.core import lax_api as lax

            f_ct = [c for c, k in zip(f_ct, keep) if k] + ([xs[q] for q in mask_at[sig]] if sig[0] is not None else [])
            return [lax.add(a, c) for a, c in zip(acc, c_ct)] + list(prev_k) + f_ct

        t_avals = (
            nonlin_field_avals + (ys_ct_avals if has_ys_ct else []) + nl_const_avals + lin_const_avals + k_ct_avals
        )
        body_closed = closed_jaxpr(body_t, t_avals)
        g_fields = [tangent_aval(a) for i in group for a in lin_avals[i].fields]
        new_ys = None
        if group:
            new_ys = lin_avals[group[0]].with_fields(g_fields) if sig[0] is not None else TapeAval(g_fields)
        acc0 = [zeros_like_aval(a) for a in lin_const_avals]
        k0 = [instantiate(c) if type(c) is not Zero else zeros_like_aval(a) for c, a in zip(ct_carry, k_ct_avals)]
        new_tapes = nonlin_tapes + ([ct_ys] if has_ys_ct else [])
        nl_consts = [c for c, m in zip(consts, lin_const) if not m]
        outs = tape_scan(new_tapes, nl_consts, acc0 + k0, body_closed, reverse=not reverse,
                         linear=(False,) * (len(new_tapes) + len(nl_consts)) + (True,) * (len(acc0) + len(k0)),
                         ys_aval=new_ys)
        # cut the ys tape apart in operand order
        rest, cts_of = (outs[-1] if group else None), {}
        for n, i in enumerate(group):
            if n == len(group) - 1:
                cts_of[i] = rest
            else:
                cts_of[i], rest = tape_split_p.bind(rest, n=len(lin_avals[i].fields))
        return outs[:n_lin_consts], outs[n_lin_consts:n_lin_consts + nk], cts_of

    if not groups:  # no linear tapes: a plain reverse scan over the records
        groups = {None: []}
    tape_cts: dict = {}
    acc_out = k_out = None
    for group in groups.values():
        a, k, c = reverse_scan(group)
        tape_cts.update(c)
        if acc_out is None:
            acc_out, k_out = a, k
    it_c = iter(acc_out)
    lin_idx = iter(range(len(lin_avals)))
    return ([tape_cts[next(lin_idx)] if m else None for m in lin_tape] + [next(it_c) if m else None for m in lin_const]
            + list(k_out))


jvp_rules[tape_scan_p] = _tape_scan_jvp
transpose_rules[tape_scan_p] = _tape_scan_transpose


# --- vmap ----------------------------------------------------------------------------------

def _tape_scan_batch(args, bdims, *, body, num_tapes, num_consts, reverse, linear, ys_aval):
    """A batched tape (from a batched while_tape) ends each record with the lanes'
    "still running" mask: stopped lanes keep their carry. Unbatched tapes are shared by
    all lanes. The ys tape comes out batched, with the mask of the batched input tape
    (all true when every tape was shared)."""
    from funcgrad.core import lax_api as lax
    from funcgrad.core.batch_util import batch_size, batched_aval, bdim_at
    from funcgrad.transforms.batching import batch_flat

    tapes, consts, carry = scan_parts(args, num_tapes, num_consts)
    d_tapes, d_consts, _ = scan_parts(bdims, num_tapes, num_consts)
    t_avals = [tape_aval_of(t) for t in tapes]
    # A tape mapped at this level (bdim 0) has this level's mask last; one with bdim None
    # is shared by the lanes (it may still be batched by an inner vmap: plain fields here).
    for a, d in zip(t_avals, d_tapes):
        if (d is not None and a.batch is None) or a.shape:
            raise NotImplementedError("tape_scan: inconsistent batching of a tape")
    batched_sizes = {a.batch for a, d in zip(t_avals, d_tapes) if d is not None}
    size = batched_sizes.pop() if batched_sizes else batch_size(args[num_tapes:], bdims[num_tapes:])
    consts = [x if d is None else bdim_at(x, d, size, 0) for x, d in zip(consts, d_consts)]
    carry = [batch_tape(x, d, size) if is_tape(x) else bdim_at(x, d, size, 0)
             for x, d in zip(carry, bdims[num_tapes + num_consts:])]
    nk = len(carry)
    sizes = [len(a.res_avals) for a in t_avals]
    masked = [d is not None for d in d_tapes]
    b = lambda a: batched_aval(a, size)  # noqa: E731
    inner_dims = (
        [d for m, a in zip(masked, t_avals) for d in ([0] * (len(a.res_avals) - 1) if m else [None] * len(a.res_avals))]
        + [None if d is None else 0 for d in d_consts]
        + [0] * nk
    )
    fn = jaxpr_as_fun(body)

    def batched_body(*xs):
        i, fields, mask = 0, [], None
        for m, s in zip(masked, sizes):
            group = list(xs[i:i + s])
            i += s
            if m:
                mask = group.pop() if mask is None else mask
                if len(group) == s:  # not popped: drop this tape's (identical) mask
                    group.pop()
            fields += group
        rest = list(xs[i:])
        outs = batch_flat(fn, fields + rest, inner_dims, size, lambda j, n: 0)
        new, ys = outs[:nk], outs[nk:]
        if mask is not None:
            old = rest[len(rest) - nk:]
            new = [lax.select(lax.broadcast_in_dim(mask, get_aval_any(n).shape, (0,)), n, o) for n, o in zip(new, old)]
        if ys_aval is None:
            return new
        if mask is None:
            mask = lax.broadcast_in_dim(np.array(True), (size,), ())
        return list(new) + list(ys) + [mask]

    in_avals = (
        [f for a in t_avals for f in a.res_avals] + [get_aval_any(c) for c in consts] + [get_aval_any(k) for k in carry]
    )
    new_body = closed_jaxpr(batched_body, in_avals)
    new_ys = None
    if ys_aval is not None:
        new_ys = b(ys_aval)
    outs = tape_scan(tapes, consts, carry, new_body, reverse=reverse, linear=linear, ys_aval=new_ys)
    return outs, [0] * len(outs)


batch_rules[tape_scan_p] = _tape_scan_batch


# --- tape_split / tape_zip are linear: each transposes into the other -----------------------

def _zeros_tape_like(tape, aval: TapeAval):
    """A tape of zeros of type ``aval`` with as many records as ``tape``."""
    src = tape_aval_of(tape)

    def zeros(*xs):  # a batched tape keeps the lanes' mask (of the same loop) last
        return [zeros_like_aval(a) for a in aval.fields] + list(xs[len(xs) - aval.n_masks:])

    body = closed_jaxpr(zeros, list(src.res_avals))
    (out,) = tape_scan([tape], [], [], body, reverse=False, linear=(False,), ys_aval=aval)
    return out


def _tape_split_transpose(cts, tape, *, n):
    a, b = cts
    if type(a) is Zero and type(b) is Zero:
        return [None]
    if type(a) is Zero:
        a = _zeros_tape_like(b, a.aval)
    if type(b) is Zero:
        b = _zeros_tape_like(a, b.aval)
    return [tape_zip_p.bind(a, b)]


def _tape_zip_transpose(ct, a, b):
    if type(ct) is Zero:
        return [None, None]
    n = len(a.aval.res_avals) if is_undefined(a) else len(tape_aval_of(a).res_avals)
    pa, pb = tape_split_p.bind(ct, n=n)
    return [pa if is_undefined(a) else None, pb if is_undefined(b) else None]


transpose_rules[tape_split_p] = _tape_split_transpose
transpose_rules[tape_zip_p] = _tape_zip_transpose


# --- while_tape and tape_apply under linearization -----------------------------------------

def while_tape_linearize(cc, bc, carry, t_bc, t_carry, *, cond_jaxpr, body_jaxpr, cond_nconsts, tape_aval):
    """``while_tape`` with staged tangents: the forward loop also records the body's own
    linearization residuals ``s``; the tangent of (carry, tape) is a forward tape_scan
    of the body's linear part over those records."""
    nb, nk = len(bc), len(carry)
    nm = tape_aval.n_masks  # vmapped: records end with the lanes' masks (one per level)
    n_rf = len(tape_aval.fields)
    fwd, lin, s_avals = linearize_jaxpr(body_jaxpr)
    n_s = len(s_avals)
    if nm:  # fwd: (k', r, masks, s) -> record (r, s, masks)
        o = nk + n_rf
        fwd = _permuted(fwd, list(range(o)) + list(range(o + nm, o + nm + n_s)) + list(range(o, o + nm)))
    outs = while_tape_p.bind(
        *cc,
        *bc,
        *carry,
        cond_jaxpr=cond_jaxpr,
        body_jaxpr=fwd,
        cond_nconsts=cond_nconsts,
        body_nconsts=nb,
        tape_aval=tape_aval.with_fields(list(tape_aval.fields) + list(s_avals)),
    )
    r_tape, s_tape = tape_split_p.bind(outs[nk], n=n_rf)
    d_in = [instantiate(t) for t in list(t_bc) + list(t_carry)]
    lin_fn = jaxpr_as_fun(lin)

    def lin_body(*xs):  # (s, [mask], d_in) -> (d_carry', d_r, [mask])
        out = lin_fn(*xs[:n_s], *xs[n_s + nm:])
        return list(out[:nk + n_rf]) + list(xs[n_s:n_s + nm])

    lin_closed = closed_jaxpr(
        lin_body, list(tape_aval_of(s_tape).res_avals) + [tangent_aval(a) for a in body_jaxpr.in_avals]
    )
    d_r = tape_aval.with_fields([tangent_aval(a) for a in tape_aval.fields])
    t_out = tape_scan([s_tape], d_in[:nb], d_in[nb:], lin_closed, reverse=False, linear=(False,) + (True,) * len(d_in),
                      ys_aval=d_r)
    return list(outs[:nk]) + [r_tape], list(t_out)


def tape_apply_as_scan_jvp(primals, tangents, *, body, num_consts, reverse, linear):
    """``tape_apply`` is a tape_scan without per-record outputs: use its rule."""
    return _tape_scan_jvp(primals, tangents, body=body, num_tapes=1, num_consts=num_consts, reverse=reverse,
                          linear=(False,) + tuple(linear), ys_aval=None)



# --- tapes made from nothing: zero tapes (no length of their own) and empty placeholders ----
jvp_rules[tape_zeros_p] = lambda primals, tangents, *, aval: (tape_zeros_p.bind(aval=aval), Zero(aval))
allow_missing("batch", tape_zeros_p, "takes no operands, so it is never batched")
allow_missing("transpose", tape_zeros_p, "takes no operands")
allow_missing("eager_vjp", tape_zeros_p, "takes no operands: nothing to send a cotangent to")
jvp_rules[tape_empty_p] = lambda primals, tangents, *, aval: (tape_empty_p.bind(aval=aval), Zero(aval))
allow_missing("batch", tape_empty_p, "takes no operands, so it is never batched")
allow_missing("transpose", tape_empty_p, "tapes are residual storage, not linear values")
allow_missing("eager_vjp", tape_empty_p, "takes no operands: nothing to send a cotangent to")


# --- vmap of values that hold tapes ----------------------------------------------------------

def tape_broadcast(tape, size: int):
    """A shared (unbatched) tape as a batched tape: every field gains a leading axis of
    ``size`` and every record an all-true lane mask."""
    from funcgrad.core import lax_api as lax
    from funcgrad.core.batch_util import batched_aval

    aval = tape_aval_of(tape)
    if aval.shape:  # a stack of tapes: broadcast each, in a scan over the stack
        inner = aval.update(shape=aval.shape[1:])
        body = closed_jaxpr(lambda t: [tape_broadcast(t, size)], [inner])
        (out,) = scan_p.bind(tape, jaxpr=body, num_consts=0, num_carry=0, length=aval.shape[0], reverse=False)
        return out

    def bcast(*fields):
        out = [
            tape_broadcast(f, size)
            if isinstance(get_aval_any(f), TapeAval)
            else lax.broadcast_in_dim(
                f, (size,) + get_aval_any(f).shape, tuple(range(1, 1 + len(get_aval_any(f).shape)))
            )
            for f in fields
        ]
        return out + [lax.broadcast_in_dim(np.array(True), (size,), ())]

    body = closed_jaxpr(bcast, list(aval.res_avals))
    (out,) = tape_scan([tape], [], [], body, reverse=False, linear=(False,), ys_aval=batched_aval(aval, size))
    return out


def batch_tape(x, d, size: int):
    """A tape operand of a batch rule as a batched tape (a shared one is broadcast)."""
    return x if d is not None else tape_broadcast(x, size)
