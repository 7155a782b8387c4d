"""``scan``: the user function and the rules of ``scan_p`` (declared in
``funcgrad/core/prims/control_flow.py``).

Staged reverse mode linearizes the body abstractly: the forward scan outputs the
per-iteration residuals as extra ``ys`` (residuals that depend only on the loop
constants are computed once, outside), and the linear scan reads them back; its
transpose runs the other way. With concrete inputs the JVP iterates in Python.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, is_undefined, tangent_aval, zeros_like_aval
from funcgrad.core.avals import ShapedArray
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr, Jaxpr, Var
from funcgrad.core.primitive import batch_rules, jvp_rules, transpose_rules
from funcgrad.core.prims.control_flow import cond_p, scan_p, unstacked_aval
from funcgrad.core.prims.effects import eqn_has_effects
from funcgrad.core.staging import hoist_consts, trace_to_jaxpr
from funcgrad.core.trace import get_aval_any
from funcgrad.core.wrapping import fun_name
from funcgrad.tapes import is_tape
from funcgrad.transforms.control_flow.common import all_concrete, avals, check_carry, promote_weak_carry, split_list
from funcgrad.transforms.jaxpr_ad import closed_jaxpr, linearize_jaxpr_nz
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.transforms.transpose import backward_pass


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final_carry, stacked_ys)``. ``xs`` may be None with ``length`` given;
    ``reverse=True`` runs from the last element to the first (``ys`` keep their order).

    ``unroll`` (a positive int, or a bool: True unrolls fully) is accepted as in JAX and
    checked, but does not change the program: funcgrad's compiler decides how loops are
    unrolled and vectorised, and results are the same whatever is passed.

    >>> scan(lambda c, x: (c + x, c * x), 0.0, np.arange(4.0))
    (Array(6.), Array([0., 0., 2., 9.]))
    """
    check_unroll("scan", unroll)
    if not callable(f):
        raise TypeError(f"scan: f must be a callable (carry, x) -> (carry, y), got {type(f).__name__}")
    return scan_with_name("scan", f, init, xs, length, reverse)


def scan_with_name(what, f, init, xs, length, reverse):
    """``scan``, with errors naming ``what`` (the function the user called)."""
    x_leaves, x_tree = pytree.tree_flatten(xs)
    lengths = {get_aval_any(x).shape[0] if get_aval_any(x).shape else None for x in x_leaves}
    if None in lengths:
        raise ValueError(f"{what}: every leaf of xs must have a leading axis to scan over")
    if length is not None:
        if isinstance(length, (bool, np.bool_)) or not isinstance(length, (int, np.integer)) or length < 0:
            raise TypeError(f"{what}: length must be a non-negative Python int, got {length!r}")
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError(f"{what}: xs leaves and length disagree on the number of steps: {sorted(lengths)}")
    if not lengths:
        raise ValueError(f"{what}: pass xs or length")
    n = lengths.pop()
    c_leaves, c_tree = pytree.tree_flatten(init)
    x_avals = [ShapedArray(a.shape[1:], a.dtype) for a in avals(x_leaves)]
    out_trees = []

    def body(*args):
        carry = pytree.tree_unflatten(c_tree, args[: len(c_leaves)])
        x = pytree.tree_unflatten(x_tree, args[len(c_leaves):])
        res = f(carry, x)
        if not (isinstance(res, tuple) and len(res) == 2):
            raise TypeError(f"{what}: the body must return a pair (carry, y)")
        new_c, y = res
        c_out, c_tree_out = pytree.tree_flatten(new_c)
        y_out, y_tree = pytree.tree_flatten(y)
        out_trees[:] = [c_tree_out, y_tree]
        return c_out + y_out

    body.__name__ = fun_name(f)
    # A carry leaf initialised with a Python scalar adopts the dtype the body gives it
    # (JAX's rule): a first trace with it weakly typed decides, then the body is traced
    # with strongly typed carries (the loop's residuals and tapes are never weak).
    c_avals = avals(c_leaves)
    jaxpr, consts = trace_to_jaxpr(body, c_avals + x_avals)
    if any(a.weak_type for a in c_avals):
        c_leaves, _ = promote_weak_carry(c_leaves, c_avals, jaxpr.out_avals[: len(c_leaves)])
        c_avals = [a.strip_weak_type() for a in avals(c_leaves)]
        jaxpr, consts = trace_to_jaxpr(body, c_avals + x_avals)
    c_tree_out, y_tree = out_trees
    check_carry(what, c_tree, c_tree_out, c_avals, jaxpr.out_avals[: len(c_leaves)])
    closed, all_consts = hoist_consts([(jaxpr, consts)])
    outs = scan_p.bind(
        *all_consts, *c_leaves, *x_leaves, jaxpr=closed[0], num_consts=len(all_consts),
        num_carry=len(c_leaves), length=n, reverse=bool(reverse),
    )
    carry = pytree.tree_unflatten(c_tree, outs[: len(c_leaves)])
    return carry, pytree.tree_unflatten(y_tree, outs[len(c_leaves):])


def check_unroll(what, unroll):
    """``unroll`` as JAX accepts it: a positive int or a bool (funcgrad ignores it)."""
    if isinstance(unroll, (bool, np.bool_)):
        return
    if not isinstance(unroll, (int, np.integer)) or unroll < 1:
        raise TypeError(f"{what}: unroll must be a positive int or a bool, got {unroll!r}")


def _invariant_vars(jaxpr: Jaxpr, invariant_inputs):
    """Variables of ``jaxpr`` that depend only on the given inputs (and literals)."""
    inv = {id(v) for v in invariant_inputs}
    for e in jaxpr.eqns:
        if (all(type(a) is not Var or id(a) in inv for a in e.inputs) and e.primitive is not cond_p and e.inputs
                and not eqn_has_effects(e)):  # (an effect runs every iteration)
            inv.update(id(o) for o in e.outputs)
    return inv


def _scan_jvp_eager(primals, tangents, jaxpr, nc, nk, length, reverse):
    """Concrete inputs: iterate in Python, differentiating each step (like while_loop)."""
    from funcgrad.core import lax_api as lax

    consts, carry, xs = list(primals[:nc]), list(primals[nc:nc + nk]), list(primals[nc + nk:])
    t_consts, t_carry, t_xs = list(tangents[:nc]), list(tangents[nc:nc + nk]), list(tangents[nc + nk:])
    body = jaxpr_as_fun(jaxpr)
    ys, t_ys = [], []

    def at(v, i):
        if type(v) is Zero:
            return Zero(ShapedArray(v.aval.shape[1:], v.aval.dtype))
        shape = get_aval_any(v).shape
        return lax.reshape(lax.slice(v, (i,) + (0,) * (len(shape) - 1), (i + 1,) + shape[1:]), shape[1:])

    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        out, t_out = jvp_flat(
            body, consts + carry + [at(x, i) for x in xs], t_consts + t_carry + [at(t, i) for t in t_xs]
        )
        carry, t_carry = list(out[:nk]), list(t_out[:nk])
        ys.append(out[nk:])
        t_ys.append(t_out[nk:])
    if reverse:
        ys, t_ys = ys[::-1], t_ys[::-1]
    y_avals = jaxpr.out_avals[nk:]
    stacked, t_stacked = [], []
    for k, a in enumerate(y_avals):
        if length == 0:
            stacked.append(np.empty((0,) + a.shape, a.dtype))
            t_stacked.append(Zero(tangent_aval(ShapedArray((0,) + a.shape, a.dtype))))
            continue
        stacked.append(lax.concatenate([lax.reshape(y[k], (1,) + a.shape) for y in ys], 0))
        if not is_differentiable(a) or all(type(t[k]) is Zero for t in t_ys):
            t_stacked.append(Zero(tangent_aval(ShapedArray((length,) + a.shape, a.dtype))))
            continue
        ts = [instantiate(t[k]) for t in t_ys]
        t_stacked.append(lax.concatenate([lax.reshape(t, (1,) + a.shape) for t in ts], 0))
    t_carry = [
        t if is_differentiable(get_aval_any(c)) else Zero(tangent_aval(get_aval_any(c))) for c, t in zip(carry, t_carry)
    ]
    return carry + stacked, t_carry + t_stacked


def _nonzero(primals, tangents):
    """Which operands have a tangent that is not symbolically zero (floats only)."""
    return [type(t) is not Zero and is_differentiable(get_aval_any(p)) for p, t in zip(primals, tangents)]


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    nc, nk = num_consts, num_carry
    if all_concrete(primals):
        return _scan_jvp_eager(primals, tangents, jaxpr, nc, nk, length, reverse)
    n_out = len(jaxpr.out_avals)
    n_y = n_out - nk
    # Which carry tangents are non-zero: a fixpoint (a carry becomes non-zero when the
    # body makes it depend on a non-zero tangent), as JAX's ``_scan_jvp`` does. Inputs
    # that cannot reach the outputs get no tangent at all (and so no cotangent).
    nz = _nonzero(primals, tangents)
    carry_nz = nz[nc:nc + nk]
    for _ in range(nk + 1):
        parts = linearize_jaxpr_nz(jaxpr, nz[:nc] + carry_nz + nz[nc + nk:], carry_nz + [False] * n_y)
        new = [a or b for a, b in zip(carry_nz, parts[3][:nk])]
        if new == carry_nz:
            break
        carry_nz = new
    fwd_closed, lin, res_avals, out_nz, used = parts
    if not any(out_nz):
        outs = scan_p.bind(*primals, jaxpr=jaxpr, num_consts=nc, num_carry=nk, length=length, reverse=reverse)
        return outs, [Zero(tangent_aval(get_aval_any(o))) for o in outs]
    nz_in = nz[:nc] + carry_nz + nz[nc + nk:]
    # The carry keeps its tangents whether the body reads them or not.
    keep = [u or nc <= i < nc + nk for i, u in zip([i for i, z in enumerate(nz_in) if z], used)]
    n_res = len(res_avals)
    res_vars = fwd_closed.jaxpr.outvars[n_out:]
    # Residuals that depend only on the loop constants are the same every iteration:
    # compute them once, outside, instead of stacking one copy per step.
    inv = _invariant_vars(fwd_closed.jaxpr, fwd_closed.jaxpr.invars[:nc])
    inv_mask = [type(v) is Var and id(v) in inv for v in res_vars]
    fj = fwd_closed.jaxpr
    inv_eqns = [e for e in fj.eqns if all(id(o) in inv for o in e.outputs) and e.inputs and not eqn_has_effects(e)]
    inv_jaxpr = Jaxpr(fj.constvars, fj.invars[:nc], inv_eqns, [v for v, m in zip(res_vars, inv_mask) if m])
    inv_res = eval_jaxpr(inv_jaxpr, fwd_closed.consts, *primals[:nc])
    # Forward scan: primal outputs plus the per-iteration residuals as extra ys.
    per_iter = [v for v, m in zip(res_vars, inv_mask) if not m]
    fwd_body = ClosedJaxpr(Jaxpr(fj.constvars, fj.invars, fj.eqns, fj.outvars[:n_out] + per_iter), fwd_closed.consts)
    outs = scan_p.bind(*primals, jaxpr=fwd_body, num_consts=nc, num_carry=nk, length=length, reverse=reverse)
    primal_out, stacked_res = outs[: nk + n_y], outs[nk + n_y:]
    # Linear scan: constants = (invariant residuals, const tangents); carry = carry
    # tangents; xs = (per-iteration residuals, x tangents). Only non-zero tangents the
    # body reads are operands.
    lj = lin.jaxpr  # (residuals, tangents) -> tangents
    res_in, t_in = list(lj.invars[:n_res]), [v for v, k in zip(lj.invars[n_res:], keep) if k]
    inv_in = [v for v, m in zip(res_in, inv_mask) if m]
    it_in = [v for v, m in zip(res_in, inv_mask) if not m]
    pos = [i for i, z in enumerate(nz_in) if z]
    pos = [i for i, k in zip(pos, keep) if k]
    n_tc, n_tk = sum(i < nc for i in pos), sum(nc <= i < nc + nk for i in pos)
    t_c, t_k, t_x = t_in[:n_tc], t_in[n_tc:n_tc + n_tk], t_in[n_tc + n_tk:]
    lin_body = ClosedJaxpr(Jaxpr([], inv_in + t_c + t_k + it_in + t_x, lj.eqns, lj.outvars), [])
    ops = [instantiate(tangents[i]) for i in pos]
    # ``linear`` marks which operands the transpose treats as linear (a tangent may be
    # a concrete zero, which is still linear by position).
    lin_mask = (False,) * len(inv_res) + (True,) * (n_tc + n_tk) + (False,) * len(stacked_res) + (True,) * len(t_x)
    t_out = scan_p.bind(
        *inv_res, *ops[:n_tc + n_tk], *stacked_res, *ops[n_tc + n_tk:],
        jaxpr=lin_body, num_consts=len(inv_res) + n_tc, num_carry=n_tk, length=length, reverse=reverse,
        linear=lin_mask,
    )
    it = iter(t_out)
    return primal_out, [next(it) if z else Zero(tangent_aval(get_aval_any(o))) for o, z in zip(primal_out, out_nz)]


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    nc, nk = num_consts, num_carry
    if linear is None:
        linear = tuple(is_undefined(a) for a in args)
    consts, xs = args[:nc], args[nc + nk:]
    c_lin, k_lin, x_lin = list(linear[:nc]), list(linear[nc:nc + nk]), list(linear[nc + nk:])
    if not all(k_lin):
        raise NotImplementedError("scan transpose: the carry must be entirely linear")
    # Layout of a linear scan from the JVP rule: non-linear constants first, then linear ones;
    # non-linear xs first, then linear ones.
    if c_lin != sorted(c_lin) or x_lin != sorted(x_lin):
        raise NotImplementedError("scan transpose: expected non-linear operands before linear ones")
    n_res_c, n_res_x = c_lin.count(False), x_lin.count(False)
    res_c, lin_c = list(consts[:n_res_c]), consts[n_res_c:]
    res_x = list(xs[:n_res_x])
    ct_carry = [instantiate(c) if type(c) is not Zero else instantiate(c) for c in cts[:nk]]
    ct_ys = [instantiate(c) for c in cts[nk:]]
    b = jaxpr.jaxpr
    body_nonlin = b.invars[:n_res_c] + b.invars[nc + nk:nc + nk + n_res_x]
    body_lin = b.invars[n_res_c:nc] + b.invars[nc:nc + nk] + b.invars[nc + nk + n_res_x:]
    as_linear = Jaxpr(body_nonlin, body_lin, b.eqns, b.outvars)
    lin_c_avals = [a.aval if is_undefined(a) else tangent_aval(get_aval_any(a)) for a in lin_c]
    ct_carry_avals = [tangent_aval(a) for a in jaxpr.out_avals[:nk]]
    ct_y_avals = [tangent_aval(a) for a in jaxpr.out_avals[nk:]]
    res_x_avals = [unstacked_aval(get_aval_any(r)) for r in res_x]

    def body_t(*args_t):
        rc, acc, ctk, rx, cty = split_list(args_t, n_res_c, len(lin_c), nk, n_res_x)
        cts_in = backward_pass(as_linear, list(rc) + list(rx), list(ctk) + list(cty))
        cts_in = [instantiate(c) for c in cts_in]
        ct_c, ct_k, ct_x = cts_in[: len(lin_c)], cts_in[len(lin_c):len(lin_c) + nk], cts_in[len(lin_c) + nk:]
        from funcgrad.core import lax_api as lax

        new_acc = [lax.add(a, c) for a, c in zip(acc, ct_c)]
        return list(new_acc) + list(ct_k) + list(ct_x)

    body_closed = closed_jaxpr(
        body_t, [get_aval_any(r) for r in res_c] + lin_c_avals + ct_carry_avals + res_x_avals + ct_y_avals
    )
    acc0 = [zeros_like_aval(a) for a in lin_c_avals]
    outs = scan_p.bind(
        *res_c, *acc0, *ct_carry, *res_x, *ct_ys, jaxpr=body_closed, num_consts=n_res_c,
        num_carry=len(lin_c) + nk, length=length, reverse=not reverse,
    )
    ct_consts, ct_init, ct_xs = outs[: len(lin_c)], outs[len(lin_c):len(lin_c) + nk], outs[len(lin_c) + nk:]
    result = [None] * n_res_c + list(ct_consts) + list(ct_init) + [None] * n_res_x + list(ct_xs)
    return [c if is_undefined(a) else None for c, a in zip(result, args)]


def _scan_batch(args, bdims, *, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    from funcgrad.core.batch_util import batch_size, batched_aval, bdim_at
    from funcgrad.transforms.batching import KEEP, batch_flat

    size = batch_size(args, bdims)
    nc, nk = num_consts, num_carry
    # Only what depends on the batch is batched: consts and xs as given, the carry by a
    # fixpoint (a carry becomes batched when the body makes it so). Batched consts and
    # carries get the axis in front; batched xs second (after the scanned axis). Tapes
    # keep their own batching (a bdim is a flag for them): a shared tape stays shared.
    tapes = [is_tape(x) for x in args]
    carry_b = [d is not None for d in bdims[nc:nc + nk]]

    def layout(carry_b):
        moved, in_dims, in_avals = [], [], []
        for i, (x, d, a, t) in enumerate(zip(args, bdims, jaxpr.in_avals, tapes)):
            batched = carry_b[i - nc] if nc <= i < nc + nk else d is not None
            if t:
                moved.append(x)
                in_dims.append(d)
                in_avals.append(get_aval_any(x) if i < nc + nk else unstacked_aval(get_aval_any(x)))
            elif batched:
                moved.append(bdim_at(x, d, size, 0 if i < nc + nk else 1))
                in_dims.append(0)
                in_avals.append(batched_aval(a, size))
            else:
                moved.append(x)
                in_dims.append(None)
                in_avals.append(a)
        return moved, in_dims, in_avals

    def traced(carry_b, carry_want):
        moved, in_dims, in_avals = layout(carry_b)
        dims: list = []

        def body_fn(*xs):
            dims.clear()
            return batch_flat(jaxpr_as_fun(jaxpr), list(xs), in_dims, size,
                              lambda i, n: carry_want[i] if i < nk else KEEP, dims)

        return moved, closed_jaxpr(body_fn, in_avals), dims

    for _ in range(nk + 1):
        _, _, dims = traced(carry_b, [KEEP] * nk)
        new = [b or d is not None for b, d in zip(carry_b, dims[:nk])]
        if new == carry_b:
            break
        carry_b = new
    moved, body, dims = traced(carry_b, [0 if b else None for b in carry_b])
    outs = scan_p.bind(*moved, jaxpr=body, num_consts=nc, num_carry=nk, length=length, reverse=reverse, linear=linear)
    y_dims = [d if is_tape(o) else (None if d is None else 1) for o, d in zip(outs[nk:], dims)]
    return outs, [0 if b else None for b in carry_b] + y_dims


jvp_rules[scan_p] = _scan_jvp
transpose_rules[scan_p] = _scan_transpose
batch_rules[scan_p] = _scan_batch

