"""``while_loop`` (with ``checkpoints=k``) and ``fori_loop``: the user functions and the
rules of ``while_p`` (declared in ``funcgrad/core/prims/control_flow.py``).

With a concrete trip count the Python functions run directly (so eager ``grad``
unrolls the loop). Staged forward mode is one while over (carry, tangents); staged
reverse mode records each iteration's residuals on a run-time tape (``tapes.py``).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, tangent_aval
from funcgrad.core.avals import ShapedArray
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.primitive import allow_missing, batch_rules, jvp_rules
from funcgrad.core.prims.control_flow import while_p, while_parts
from funcgrad.core.staging import hoist_consts
from funcgrad.core.trace import Tracer, get_aval_any, is_staging
from funcgrad.tapes import is_tape
from funcgrad.transforms.control_flow.common import (
    all_concrete,
    avals,
    check_carry,
    concrete,
    has_tracers,
    operand_values,
    promote_weak_carry,
    result_values,
    trace_pytree_fun,
)
from funcgrad.transforms.control_flow.scan import check_unroll, scan_with_name
from funcgrad.transforms.control_flow.tape_scan import batch_tape
from funcgrad.transforms.control_flow.tapes import while_jvp_tape
from funcgrad.transforms.jaxpr_ad import closed_jaxpr, linearize_jaxpr_nz
from funcgrad.transforms.jvp import is_linearizing, jvp_flat


def while_loop(cond_fun, body_fun, init_val, checkpoints=None):
    """``while cond_fun(val): val = body_fun(val)``; returns the final ``val``.

    Differentiable in forward and reverse mode, including when the trip count is only
    known at run time (beyond JAX): the forward sweep records each iteration's
    residuals on a tape whose length is decided as the loop runs, and the backward
    sweep replays it in reverse. Nothing is truncated.

    ``checkpoints=k`` bounds that memory: the loop runs in segments of at most ``k``
    iterations and reverse mode stores only the carry at the start of each segment,
    recomputing a segment's iterations when the backward sweep reaches it. Cost: each
    iteration's forward work runs once more (about 2x the forward time of the loop);
    memory drops from n iterations' residuals to n/k carries plus k iterations'
    residuals at a time (best near k = sqrt(n)).
    """
    if checkpoints is not None:
        if (
            isinstance(checkpoints, (bool, np.bool_))
            or not isinstance(checkpoints, (int, np.integer))
            or checkpoints < 1
        ):
            raise ValueError(f"while_loop: checkpoints must be a positive int, got {checkpoints!r}")
        k = int(checkpoints)
        return _segmented_while(cond_fun, body_fun, init_val, k)
    return while_with_name("while_loop", cond_fun, body_fun, init_val)


def while_with_name(what, cond_fun, body_fun, init_val, first_leaf=0):
    """``while_loop`` without checkpoints, with errors naming ``what`` (the function the
    user called; ``first_leaf`` carry leaves were added by it)."""
    c_leaves, c_tree = pytree.tree_flatten(init_val)
    args_tree = pytree.tree_structure((init_val,))
    # A carry leaf initialised with a Python scalar adopts the dtype the body gives it
    # (JAX's rule): a first trace with it weakly typed decides, then the body is traced
    # with strongly typed carries (the loop's residuals and tapes are never weak).
    c_avals = avals(c_leaves)
    body_j, body_consts, body_tree = trace_pytree_fun(body_fun, args_tree, c_avals, "body_fun")
    if any(a.weak_type for a in c_avals):
        c_leaves, changed = promote_weak_carry(c_leaves, c_avals, body_j.out_avals)
        if changed:
            init_val = pytree.tree_unflatten(c_tree, c_leaves)
        c_avals = [a.strip_weak_type() for a in avals(c_leaves)]
        body_j, body_consts, body_tree = trace_pytree_fun(body_fun, args_tree, c_avals, "body_fun")
    check_carry(what, c_tree, body_tree, c_avals, body_j.out_avals, first_leaf)
    cond_j, cond_consts, cond_tree = trace_pytree_fun(cond_fun, args_tree, c_avals, "cond_fun")
    if len(cond_j.out_avals) != 1 or cond_j.out_avals[0].shape != () or cond_j.out_avals[0].dtype.kind not in "bif":
        shown = [a.str_short() for a in cond_j.out_avals]
        raise TypeError(f"{what}: cond_fun must return a scalar boolean, got {shown}")
    if cond_j.out_avals[0].dtype != np.bool_:
        raise TypeError(f"{what}: cond_fun must return a boolean scalar, got {cond_j.out_avals[0].str_short()}")
    if not is_staging() and all_concrete(c_leaves) and not has_tracers(cond_consts + body_consts):
        # Eager: run the user's functions directly (they may run under eager grad). Not
        # while staging (make_jaxpr, jit): the predicate would be a staged value there,
        # even from a constant init, so the loop itself is staged.
        val = operand_values(init_val)
        while bool(np.asarray(concrete(cond_fun(val)))):
            val = operand_values(body_fun(val))  # (NumPy operators in the body give ndarrays)
        # Python scalars the body returned become values of the carry's dtype, as staged.
        return result_values(val, c_avals)
    (cc,), ccs = hoist_consts([(cond_j, cond_consts)])
    (bb,), bcs = hoist_consts([(body_j, body_consts)])
    outs = while_p.bind(
        *ccs, *bcs, *c_leaves, cond_jaxpr=cc, body_jaxpr=bb, cond_nconsts=len(ccs), body_nconsts=len(bcs)
    )
    return pytree.tree_unflatten(c_tree, outs)


def _segmented_while(cond_fun, body_fun, init_val, k):
    from funcgrad.core import lax_api as lax
    from funcgrad.transforms.custom import checkpoint

    def segment(val):
        # Up to k iterations of the loop; rematerialised in reverse mode.
        def seg_cond(s):
            return lax.bitwise_and(_as_bool(cond_fun(s[0])), lax.lt(s[1], np.int64(k)))

        def seg_body(s):
            return body_fun(s[0]), lax.add(s[1], np.int64(1))

        return while_loop(seg_cond, seg_body, (val, np.int64(0)))[0]

    segment.__name__ = f"segment_of_{k}"
    return while_loop(cond_fun, checkpoint(segment), init_val)


def _as_bool(x):
    return x if isinstance(x, Tracer) else np.asarray(x, np.bool_)


def _carry_nonzero(body_jaxpr, nz_b, carry_nz):
    """Which carries have a non-zero tangent: a fixpoint over the body (a carry gets one
    when the body makes it depend on a non-zero tangent), as JAX's while JVP does."""
    carry_nz = list(carry_nz)
    for _ in range(len(carry_nz) + 1):
        out_nz = linearize_jaxpr_nz(body_jaxpr, nz_b + carry_nz, carry_nz)[3]
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            break
        carry_nz = new
    return carry_nz


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = while_parts(primals, cond_nconsts, body_nconsts)
    nb = body_nconsts
    tans = [t if is_differentiable(get_aval_any(p)) else Zero(tangent_aval(get_aval_any(p)))
            for p, t in zip(primals, tangents)]
    t_bc, t_carry = tans[cond_nconsts:cond_nconsts + nb], tans[cond_nconsts + nb:]
    body_fn = jaxpr_as_fun(body_jaxpr)
    if not is_staging() and all_concrete(list(cc) + list(carry)) and not has_tracers(list(cc) + list(bc)):
        # The trip count is decided now: iterate in Python, differentiating each step.
        # Under reverse mode every step's tangent ops are recorded (a tape whose length
        # is known only at run time), and the backward pass replays them in reverse.
        while bool(np.asarray(concrete(eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)[0]))):
            carry, t_carry = jvp_flat(body_fn, list(bc) + list(carry), list(t_bc) + list(t_carry))
            t_carry = [t if is_differentiable(get_aval_any(p)) else Zero(tangent_aval(get_aval_any(p)))
                       for p, t in zip(carry, t_carry)]
        return list(carry), list(t_carry)
    nz_b = [type(t) is not Zero for t in t_bc]
    carry_nz = _carry_nonzero(body_jaxpr, nz_b, [type(t) is not Zero for t in t_carry])
    if not any(carry_nz):
        outs = while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                            cond_nconsts=cond_nconsts, body_nconsts=nb)
        return outs, [Zero(tangent_aval(get_aval_any(o))) for o in outs]
    if is_linearizing(list(t_bc) + list(t_carry)):
        return while_jvp_tape(cc, bc, carry, t_bc, t_carry, cond_jaxpr, body_jaxpr, cond_nconsts, carry_nz)
    # Staged forward mode: one while over (carry, tangents of the non-zero carries).
    t_carry_in = [instantiate(t) for t, m in zip(t_carry, carry_nz) if m]
    t_bc_in = [instantiate(t) for t, m in zip(t_bc, nz_b) if m]
    nk, n_tb = len(carry), len(t_bc_in)

    def body_jvp(*xs):
        b, t_b = xs[:nb], iter(xs[nb:nb + n_tb])
        k, t_k = xs[nb + n_tb:nb + n_tb + nk], iter(xs[nb + n_tb + nk:])
        full_b = [next(t_b) if m else Zero(tangent_aval(get_aval_any(v))) for v, m in zip(b, nz_b)]
        full_t = [next(t_k) if m else Zero(tangent_aval(get_aval_any(v))) for v, m in zip(k, carry_nz)]
        out, t_out = jvp_flat(body_fn, list(b) + list(k), full_b + full_t)
        return list(out) + [instantiate(t) for t, m in zip(t_out, carry_nz) if m]

    def cond_jvp(*xs):
        c, k = xs[:cond_nconsts], xs[cond_nconsts:cond_nconsts + nk]
        return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *c, *k)

    b_avals = body_jaxpr.in_avals[:nb]
    k_avals = [get_aval_any(p).strip_weak_type() for p in carry]
    tb_avals = [tangent_aval(a) for a, m in zip(b_avals, nz_b) if m]
    tk_avals = [tangent_aval(a) for a, m in zip(k_avals, carry_nz) if m]
    body_closed = closed_jaxpr(body_jvp, list(b_avals) + tb_avals + k_avals + tk_avals)
    cond_closed = closed_jaxpr(cond_jvp, list(cond_jaxpr.in_avals[:cond_nconsts]) + k_avals + tk_avals)
    outs = while_p.bind(
        *cc, *bc, *t_bc_in, *carry, *t_carry_in, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
        cond_nconsts=cond_nconsts, body_nconsts=nb + n_tb,
    )
    it = iter(outs[nk:])
    t_out = [next(it) if m else Zero(tangent_aval(a)) for a, m in zip(k_avals, carry_nz)]
    return outs[:nk], t_out


def _while_batch(args, bdims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    from funcgrad.core import lax_api as lax
    from funcgrad.core.batch_util import batch_size, bdim_at
    from funcgrad.transforms.batching import batch_flat
    from funcgrad.transforms.effects import has_effects, predicate_effects

    size = batch_size(args, bdims)
    moved = [batch_tape(x, d, size) if is_tape(x) else bdim_at(x, d, size, 0) for x, d in zip(args, bdims)]
    cc, bc, carry = while_parts(moved, cond_nconsts, body_nconsts)
    batched = lambda a: ShapedArray((size,) + a.shape, a.dtype)  # noqa: E731
    b_cond = lambda *xs: batch_flat(jaxpr_as_fun(cond_jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    b_body = lambda *xs: batch_flat(jaxpr_as_fun(body_jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    nc, nb = cond_nconsts, body_nconsts
    gated = predicate_effects(body_jaxpr) if has_effects(body_jaxpr) else None

    def any_lane(*xs):
        (pred,) = b_cond(*xs)
        return [lax.reduce_max(pred, (0,))]

    def step(*xs):
        # Run every lane's body, but keep the old carry in lanes that are already done.
        c, b, k = xs[:nc], xs[nc:nc + nb], xs[nc + nb:]
        (pred,) = b_cond(*c, *k)
        if gated is not None:  # the body's effects fire only in the lanes still running
            new = batch_flat(jaxpr_as_fun(gated), [pred, *b, *k], [0] * (1 + len(xs) - nc), size, lambda i, n: 0)
        else:
            new = b_body(*b, *k)
        return [lax.select(lax.broadcast_in_dim(pred, get_aval_any(n).shape, (0,)), n, o) for n, o in zip(new, k)]

    k_avals = [batched(a) for a in cond_jaxpr.in_avals[nc:]]
    if has_effects(cond_jaxpr):
        return _while_batch_cond_effects(cc, bc, carry, size, b_cond, b_body, gated, cond_jaxpr, body_jaxpr, k_avals)
    cond_closed = closed_jaxpr(any_lane, [batched(a) for a in cond_jaxpr.in_avals[:nc]] + k_avals)
    body_closed = closed_jaxpr(
        step, [batched(a) for a in cond_jaxpr.in_avals[:nc]] + [batched(a) for a in body_jaxpr.in_avals[:nb]] + k_avals
    )
    outs = while_p.bind(*cc, *cc, *bc, *carry, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
                        cond_nconsts=nc, body_nconsts=nc + nb)
    return outs, [0] * len(outs)


def _while_batch_cond_effects(cc, bc, carry, size, b_cond, b_body, gated, cond_jaxpr, body_jaxpr, k_avals):
    """The batched loop when ``cond_fun`` has effects (``debug.print``): each lane's
    predicate is carried, so ``cond_fun`` runs once per iteration and only in the lanes
    whose body just ran (every lane evaluates it once before the loop), as if each lane
    looped on its own."""
    from funcgrad.core import lax_api as lax
    from funcgrad.transforms.batching import batch_flat
    from funcgrad.transforms.effects import predicate_effects

    nc, nb = len(cc), len(bc)
    batched = lambda a: ShapedArray((size,) + a.shape, a.dtype)  # noqa: E731
    gated_cond = predicate_effects(cond_jaxpr)
    (pred0,) = b_cond(*cc, *carry)

    def any_lane(pred, *k):
        return [lax.reduce_max(pred, (0,))]

    def step(*xs):
        c, b, pred, k = xs[:nc], xs[nc:nc + nb], xs[nc + nb], xs[nc + nb + 1:]
        if gated is not None:  # the body's effects fire only in the lanes still running
            new = batch_flat(jaxpr_as_fun(gated), [pred, *b, *k], [0] * (2 + nb + len(k) - 1), size, lambda i, n: 0)
        else:
            new = b_body(*b, *k)
        k = [lax.select(lax.broadcast_in_dim(pred, get_aval_any(n).shape, (0,)), n, o) for n, o in zip(new, k)]
        (again,) = batch_flat(jaxpr_as_fun(gated_cond), [pred, *c, *k], [0] * (1 + nc + len(k)), size,
                              lambda i, n: 0)
        return [lax.bitwise_and(again, pred), *k]

    pred_aval = ShapedArray((size,), np.dtype(np.bool_))
    cond_closed = closed_jaxpr(any_lane, [pred_aval] + k_avals)
    body_closed = closed_jaxpr(step, [batched(a) for a in cond_jaxpr.in_avals[:nc]]
                               + [batched(a) for a in body_jaxpr.in_avals[:nb]] + [pred_aval] + k_avals)
    outs = while_p.bind(*cc, *bc, pred0, *carry, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
                        cond_nconsts=0, body_nconsts=nc + nb)
    return outs[1:], [0] * (len(outs) - 1)


jvp_rules[while_p] = _while_jvp
batch_rules[while_p] = _while_batch
allow_missing("transpose", while_p, "not linear: reverse mode splits it into while_tape + tape_apply")


# --- fori_loop -----------------------------------------------------------------------------

def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    Concrete bounds become a ``scan`` (so reverse mode works staged, like JAX); traced
    bounds become a ``while_loop`` (reverse mode works too: see ``while_loop``).
    ``unroll`` is accepted as in JAX (a positive int or a bool, only with concrete
    bounds) and ignored: funcgrad's compiler decides how loops are unrolled.
    """
    if unroll is not None:
        check_unroll("fori_loop", unroll)
        if isinstance(lower, Tracer) or isinstance(upper, Tracer):
            if concrete(lower) is None or concrete(upper) is None:
                raise ValueError("fori_loop: unroll can only be given when lower and upper are concrete (as in JAX)")
    lo, hi = concrete(lower), concrete(upper)
    if lo is not None and hi is not None and not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        lo_i, hi_i = int(np.asarray(lo)), int(np.asarray(hi))
        n = max(hi_i - lo_i, 0)
        if n == 0:  # (JAX: the init, as a value the caller's later writes cannot change)
            return operand_values(init_val)
        from funcgrad.core import lax_api as lax

        idx_dtype = np.result_type(np.asarray(lo).dtype if hasattr(lo, "dtype") else np.int64, np.int64)

        def step(val, i):
            return body_fun(i, val), None

        steps = lax.add(lax.iota(idx_dtype, (n,), 0), lax.broadcast_in_dim(np.asarray(lo_i, idx_dtype), (n,), ()))
        val, _ = scan_with_name("fori_loop", step, init_val, steps, None, False)
        return val
    from funcgrad.core import lax_api as lax

    dtype = np.result_type(get_aval_any(lower).dtype, get_aval_any(upper).dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)

    def cond(c):
        return lax.lt(c[0], c[1])

    def body(c):
        i, u, v = c
        return lax.add(i, np.ones((), dtype)), u, body_fun(i, v)

    return while_with_name("fori_loop", cond, body, (lower, upper, init_val), first_leaf=2)[2]

