"""``cond`` and ``switch``: the user functions and the rules of ``cond_p`` (declared in
``funcgrad/core/prims/control_flow.py``).

With a concrete index the chosen Python function runs directly (after a type check of
every branch). Staged reverse mode linearizes each branch abstractly into a forward part
(outputs + residuals) and a linear part; the branches' residuals get one slot each
(``_join_residuals``), so the linear cond is what gets transposed.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, is_undefined, tangent_aval, zeros_like_aval
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.primitive import batch_rules, jvp_rules, transpose_rules
from funcgrad.core.prims.control_flow import cond_p, describe_mismatch
from funcgrad.core.staging import hoist_consts
from funcgrad.core.trace import get_aval_any
from funcgrad.tapes import TapeAval, is_tape, tape_empty_p, tape_zeros_p
from funcgrad.transforms.control_flow.common import avals, concrete, operand_values, result_values, trace_pytree_fun
from funcgrad.transforms.jaxpr_ad import closed_jaxpr, linearize_jaxpr_nz, select_invars, transpose_jaxpr
from funcgrad.transforms.jvp import jvp_flat

_NO_OPERAND = object()


def _operands(what, operands, operand):
    """JAX's ``operand=`` keyword (one operand pytree), as an alternative to positional
    operands."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(f"{what}: pass operands positionally or as operand=, not both")
    return (operand,)


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """Apply ``branches[index](*operands)``; ``index`` is clamped into range (like JAX).

    With a concrete index the chosen Python function runs directly (after a type check
    of all branches); under tracing one ``cond`` primitive is staged. ``operand=x`` (JAX's
    older keyword form) means ``switch(index, branches, x)``.
    """
    operands = _operands("switch", operands, operand)
    branches = list(branches)
    for k, b in enumerate(branches):
        if not callable(b):
            raise TypeError(f"switch: branches must be callables, branch {k} is {type(b).__name__}")
    return _switch(index, branches, operands, [f"branch {k}" for k in range(len(branches))])


def _switch(index, branches, operands, names):
    if not branches:
        raise ValueError("switch: needs at least one branch")
    idx_aval = get_aval_any(index)
    if idx_aval.shape != () or idx_aval.dtype.kind not in "iub":
        raise TypeError(f"switch: index must be an integer scalar, got {idx_aval.str_short()}")
    leaves, in_tree = pytree.tree_flatten(operands)
    in_avals = [a.strip_weak_type() for a in avals(leaves)]
    traced = [trace_pytree_fun(b, in_tree, in_avals, f"branch{k}") for k, b in enumerate(branches)]
    for k, (jx, _, tree) in enumerate(traced):
        msg = describe_mismatch(
            "cond/switch branch outputs must agree", (names[-1], names[k]) if len(names) == 2 else (names[0], names[k]),
            (traced[-1][2] if len(names) == 2 else traced[0][2], tree),
            ((traced[-1] if len(names) == 2 else traced[0])[0].out_avals, jx.out_avals),
        )
        if msg:
            raise TypeError(msg)
    out_tree = traced[0][2]
    known = concrete(index)
    if known is not None:
        i = int(np.clip(int(np.asarray(known)), 0, len(branches) - 1))
        return result_values(branches[i](*operand_values(tuple(operands))), traced[i][0].out_avals)
    closed, consts = hoist_consts([(jx, c) for jx, c, _ in traced])
    from funcgrad.core import lax_api as lax

    idx = lax.convert_element_type(index, np.int32)
    outs = cond_p.bind(idx, *consts, *leaves, branches=tuple(closed))
    return pytree.tree_unflatten(out_tree, outs)


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands) if pred else false_fun(*operands)`` for a scalar ``pred``
    (traced or not). Both branches must return the same types.

    JAX's conventions are accepted: any number of positional operands (one pytree is
    the usual form), the ``operand=`` keyword, and the old per-branch form
    ``cond(pred, true_operand, true_fun, false_operand, false_fun)``.
    """
    if not (callable(true_fun) and callable(false_fun)):
        if len(operands) == 2 and callable(false_fun) and callable(operands[1]) and operand is _NO_OPERAND:
            t_op, t_fun, f_op, f_fun = true_fun, false_fun, operands[0], operands[1]
            return cond(pred, lambda ops: t_fun(ops[0]), lambda ops: f_fun(ops[1]), (t_op, f_op))
        raise TypeError("cond: true_fun and false_fun must be callables: cond(pred, true_fun, false_fun, *operands)")
    operands = _operands("cond", operands, operand)
    p_aval = get_aval_any(pred)
    if p_aval.shape != ():
        raise TypeError(f"cond: pred must be a scalar, got {p_aval.str_short()}; use fnp.where for elementwise choice")
    known = concrete(pred)
    names = ["false_fun", "true_fun"]
    if known is not None:
        return _switch(np.int32(bool(np.asarray(known))), [false_fun, true_fun], operands, names)
    from funcgrad.core import lax_api as lax

    if p_aval.dtype != np.bool_:
        pred = lax.ne(pred, lax.convert_element_type(np.zeros((), p_aval.dtype), p_aval.dtype))
    return _switch(lax.convert_element_type(pred, np.int32), [false_fun, true_fun], operands, names)


def _zero_residual(aval):
    """A placeholder for another branch's residual: zeros, or an empty tape."""
    if isinstance(aval, TapeAval):
        return tape_empty_p.bind(aval=aval)
    return zeros_like_aval(aval)


def _join_residuals(fwds, lins, res_avals_list, n_out):
    """Give every branch the same residual slots: branch k fills its own and outputs
    zeros in the others'; its linear part reads only its own."""
    all_res = [a for ra in res_avals_list for a in ra]
    offsets = np.cumsum([0] + [len(r) for r in res_avals_list]).tolist()
    new_fwds, new_lins = [], []
    for k, (f, l) in enumerate(zip(fwds, lins)):
        lo, hi = offsets[k], offsets[k + 1]

        def fwd_k(*xs, f=f, lo=lo, hi=hi):
            out = eval_jaxpr(f.jaxpr, f.consts, *xs)
            own = out[n_out:]
            res = [own[j - lo] if lo <= j < hi else _zero_residual(a) for j, a in enumerate(all_res)]
            return list(out[:n_out]) + res

        def lin_k(*xs, l=l, lo=lo, hi=hi):
            res, tans = xs[: len(all_res)], xs[len(all_res):]
            return eval_jaxpr(l.jaxpr, l.consts, *res[lo:hi], *tans)

        new_fwds.append(closed_jaxpr(fwd_k, f.in_avals))
        new_lins.append(closed_jaxpr(lin_k, all_res + l.in_avals[hi - lo:]))
    return new_fwds, new_lins, all_res


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    known = concrete(index)
    if known is not None:  # the branch is known: differentiate it directly
        i = int(np.clip(int(np.asarray(known)), 0, len(branches) - 1))
        outs, t_outs = jvp_flat(jaxpr_as_fun(branches[i]), list(ops), list(tangents[1:]))
        return outs, [t if is_differentiable(get_aval_any(o)) else Zero(tangent_aval(get_aval_any(o)))
                      for o, t in zip(outs, t_outs)]
    n_out = len(branches[0].out_avals)
    # An output has a tangent if some branch makes it depend on a non-zero input tangent;
    # inputs that no branch's tangent reads get none (so no cotangent is built for them).
    nz = [type(t) is not Zero and is_differentiable(get_aval_any(p)) for p, t in zip(ops, tangents[1:])]
    out_nz = [False] * n_out
    for b in branches:
        out_nz = [a or b for a, b in zip(out_nz, linearize_jaxpr_nz(b, nz, [False] * n_out)[3])]
    if not any(out_nz):
        outs = cond_p.bind(index, *ops, branches=branches)
        return outs, [Zero(tangent_aval(get_aval_any(o))) for o in outs]
    parts = [linearize_jaxpr_nz(b, nz, out_nz) for b in branches]
    used = [any(p[4][k] for p in parts) for k in range(sum(nz))]
    lins = [select_invars(p[1], [True] * len(p[2]) + used) for p in parts]
    fwds, lins, res_all = _join_residuals([p[0] for p in parts], lins, [p[2] for p in parts], n_out)
    outs = cond_p.bind(index, *ops, branches=tuple(fwds))
    primal_out, res = outs[:n_out], outs[n_out:]
    tans = [instantiate(t) for t, z in zip(tangents[1:], nz) if z]
    t_out = iter(cond_p.bind(index, *res, *[t for t, u in zip(tans, used) if u], branches=tuple(lins)))
    return primal_out, [next(t_out) if z else Zero(tangent_aval(get_aval_any(o))) for o, z in zip(primal_out, out_nz)]


def _cond_transpose(cts, index, *args, branches):
    mask = [is_undefined(a) for a in args]
    nonlin = [a for a in args if not is_undefined(a)]
    ct_avals = [tangent_aval(a) for a in branches[0].out_avals]
    cts = [instantiate(c) if type(c) is not Zero else instantiate(Zero(a)) for c, a in zip(cts, ct_avals)]
    tbranches = tuple(transpose_jaxpr(b, mask, ct_avals) for b in branches)
    cts_in = cond_p.bind(index, *nonlin, *cts, branches=tbranches)
    it = iter(cts_in)
    return [None] + [next(it) if m else None for m in mask]


def _cond_batch(args, bdims, *, branches):
    from funcgrad.core.batch_util import batch_size, batched_aval, bdim_at
    from funcgrad.transforms.batching import batch_flat
    from funcgrad.transforms.effects import gate_cond_branches, has_effects

    size = batch_size(args, bdims)
    if bdims[0] is not None and any(has_effects(b) for b in branches):  # fire only in the lanes taking a branch
        args, bdims, branches = gate_cond_branches(args, bdims, branches)
    (index, *ops), (d_index, *d_ops) = args, bdims
    # Tapes keep their own batching (shared tapes stay shared), as in scan's batch rule.
    in_dims = [d if is_tape(x) else 0 for x, d in zip(ops, d_ops)]
    ops = [x if is_tape(x) else bdim_at(x, d, size, 0) for x, d in zip(ops, d_ops)]
    in_avals = [get_aval_any(x) if is_tape(x) else batched_aval(a, size) for x, a in zip(ops, branches[0].in_avals)]

    def batch_branches(keep_tapes: bool):
        dims_per_branch, closed = [], []
        for b in branches:
            dims: list | None = [] if keep_tapes else None

            def fn(*xs, b=b, dims=dims):
                if dims is not None:
                    dims.clear()
                return batch_flat(jaxpr_as_fun(b), list(xs), in_dims, size, lambda i, n: 0, dims)

            closed.append(closed_jaxpr(fn, in_avals))
            dims_per_branch.append(dims)
        return tuple(closed), dims_per_branch

    batched, tape_dims = batch_branches(True)
    if any(d != tape_dims[0] for d in tape_dims):  # branches disagree: make every tape output batched
        batched, _ = batch_branches(False)
        tape_dims = [[0] * len(tape_dims[0])]
    it = iter(tape_dims[0])
    out_dims = [next(it) if _is_tape_aval(a) else 0 for a in batched[0].out_avals]
    if d_index is None:
        outs = cond_p.bind(index, *ops, branches=batched)
        return outs, out_dims
    # A per-example index: run every branch, then pick each example's result.
    from funcgrad.core import lax_api as lax

    index = bdim_at(index, d_index, size, 0)
    index = lax.max(lax.min(index, lax.broadcast_in_dim(np.int32(len(branches) - 1), (size,), ())),
                    lax.broadcast_in_dim(np.int32(0), (size,), ()))
    results = [eval_jaxpr(b.jaxpr, b.consts, *ops) for b in batched]
    outs = []
    for j in range(len(results[0])):
        if is_tape(results[0][j]):
            outs.append(_select_tape(branches, j, results))
            continue
        shape = get_aval_any(results[0][j]).shape
        which = lax.broadcast_in_dim(index, shape, (0,))
        outs.append(lax.select_n(which, *[r[j] for r in results]) if len(results) > 1 else results[0][j])
    return outs, out_dims


def _is_tape_aval(a) -> bool:
    return isinstance(a, TapeAval)


def _select_tape(branches, j, results):
    """Output ``j`` of a cond with a per-lane index, when it is a tape: a linearized cond
    gives each branch's tapes their own slots, filled with ``tape_empty`` by the other
    branches (and their tangents with zero tapes), so the one branch that makes it is
    chosen for every lane (lanes that took another branch are discarded by the selects
    of the linear cond)."""
    owners = [k for k, b in enumerate(branches) if not _made_by(b.jaxpr, j, (tape_empty_p, tape_zeros_p))]
    if len(owners) > 1:
        raise NotImplementedError("vmap of a cond choosing per lane between different run-time tapes")
    if not owners:  # only placeholders: a zero tape reads as zeros at any length, so prefer it
        owners = [k for k, b in enumerate(branches) if not _made_by(b.jaxpr, j, (tape_empty_p,))] or [0]
    return results[owners[0]][j]


def _made_by(jaxpr, j: int, prims) -> bool:
    v = jaxpr.outvars[j]
    return any(e.primitive in prims and any(o is v for o in e.outputs) for e in jaxpr.eqns)


jvp_rules[cond_p] = _cond_jvp
transpose_rules[cond_p] = _cond_transpose
batch_rules[cond_p] = _cond_batch

