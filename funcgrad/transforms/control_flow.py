"""Structured control flow: cond / switch, while_loop, fori_loop, scan.

Each construct is a higher-order primitive carrying closed sub-jaxprs. Their rules
rewrite those jaxprs with the interpreters (jvp, linearize, transpose, vmap), so they
live here rather than in ``core`` (which must not import transforms).

Eager semantics: when the predicate / index / trip count is concrete (no transform
stages it) the user's Python functions run directly, after a type check of the
branches/body. Under ``grad`` with concrete values this unrolls into the linear
program naturally, which is how reverse mode goes through ``while_loop`` eagerly.

Staged reverse mode: a JVP rule linearizes each sub-jaxpr *abstractly*, splitting it
into a forward jaxpr (outputs + residuals) and a linear jaxpr (residuals + tangents ->
tangents); the linear construct is what gets transposed.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import UndefinedPrimal, Zero, instantiate, is_differentiable, is_undefined, tangent_aval
from funcgrad.core.avals import ShapedArray, TapeAval
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr, Jaxpr, Var
from funcgrad.core.primitive import Primitive, allow_missing, batch_rules, jvp_rules, transpose_rules
from funcgrad.core.staging import hoist_consts, trace_to_jaxpr
from funcgrad.core.trace import Tracer, get_aval_any
from funcgrad.transforms.jvp import is_linearizing, jvp_flat
from funcgrad.transforms.linearize import linearize_flat
from funcgrad.transforms.transpose import backward_pass


# --- helpers -----------------------------------------------------------------------------

def _avals(xs):
    return [get_aval_any(x) for x in xs]


def _concrete(x):
    """The concrete value of ``x`` if known now (NumPy value, or a tracer that knows it)."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    return x


def _closed(fun_flat, in_avals) -> ClosedJaxpr:
    jaxpr, consts = trace_to_jaxpr(fun_flat, list(in_avals))
    return ClosedJaxpr(jaxpr, consts)


def _trace_pytree_fun(fun, args_tree, in_avals, what: str):
    """Trace ``fun`` (pytree in, pytree out) -> (closed jaxpr, out_tree); the closed
    jaxpr's consts are hoisted later by ``_hoist``."""
    out_tree = []

    def flat(*leaves):
        out = fun(*pytree.tree_unflatten(args_tree, leaves))
        out_leaves, tree = pytree.tree_flatten(out)
        out_tree[:] = [tree]
        return out_leaves

    flat.__name__ = getattr(fun, "__name__", what)
    jaxpr, consts = trace_to_jaxpr(flat, list(in_avals))
    return jaxpr, consts, out_tree[0]


def _describe_mismatch(what, names, trees, avals_lists):
    if trees[0] != trees[1]:
        return f"{what}: {names[0]} returns structure {trees[0]} but {names[1]} returns {trees[1]}"
    for i, (a, b) in enumerate(zip(*avals_lists)):
        if not a.same_type(b):
            return f"{what}: output leaf {i} is {a.str_short()} in {names[0]} but {b.str_short()} in {names[1]}"
    return None


# --- cond / switch -------------------------------------------------------------------------

cond_p = Primitive("cond", multiple_results=True)


@cond_p.def_impl
def _cond_impl(index, *operands, branches):
    i = int(np.clip(int(index), 0, len(branches) - 1))
    return eval_jaxpr(branches[i].jaxpr, branches[i].consts, *operands)


@cond_p.def_abstract_eval
def _cond_abstract_eval(index, *operands, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond: index must be an int32 scalar, got {index.str_short()}")
    for k, br in enumerate(branches):
        if len(br.in_avals) != len(operands) or not all(a.same_type(b) for a, b in zip(br.in_avals, operands)):
            raise TypeError(f"cond: branch {k} takes {[a.str_short() for a in br.in_avals]} but operands are {[a.str_short() for a in operands]}")
        msg = _describe_mismatch("cond", ("branch 0", f"branch {k}"), (None, None), (branches[0].out_avals, br.out_avals))
        if msg or len(br.out_avals) != len(branches[0].out_avals):
            raise TypeError(msg or "cond: branches return different numbers of outputs")
    return [a.strip_weak_type() for a in branches[0].out_avals]


def switch(index, branches, *operands):
    """Apply ``branches[index](*operands)``; ``index`` is clamped into range (like JAX).

    With a concrete index the chosen Python function runs directly (after a type check
    of all branches); under tracing one ``cond`` primitive is staged.
    """
    return _switch(index, list(branches), operands, [f"branch {k}" for k in range(len(branches))])


def _switch(index, branches, operands, names):
    if not branches:
        raise ValueError("switch: needs at least one branch")
    idx_aval = get_aval_any(index)
    if idx_aval.shape != () or idx_aval.dtype.kind not in "iub":
        raise TypeError(f"switch: index must be an integer scalar, got {idx_aval.str_short()}")
    leaves, in_tree = pytree.tree_flatten(operands)
    in_avals = [a.strip_weak_type() for a in _avals(leaves)]
    traced = [_trace_pytree_fun(b, in_tree, in_avals, f"branch{k}") for k, b in enumerate(branches)]
    for k, (jx, _, tree) in enumerate(traced):
        msg = _describe_mismatch(
            "cond/switch branch outputs must agree", (names[-1], names[k]) if len(names) == 2 else (names[0], names[k]),
            (traced[-1][2] if len(names) == 2 else traced[0][2], tree),
            ((traced[-1] if len(names) == 2 else traced[0])[0].out_avals, jx.out_avals),
        )
        if msg:
            raise TypeError(msg)
    out_tree = traced[0][2]
    concrete = _concrete(index)
    if concrete is not None:
        i = int(np.clip(int(np.asarray(concrete)), 0, len(branches) - 1))
        return branches[i](*operands)
    closed, consts = hoist_consts([(jx, c) for jx, c, _ in traced])
    from funcgrad.core import lax_api as lax

    idx = lax.convert_element_type(index, np.int32)
    outs = cond_p.bind(idx, *consts, *leaves, branches=tuple(closed))
    return pytree.tree_unflatten(out_tree, outs)


def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands) if pred else false_fun(*operands)`` for a scalar ``pred``
    (traced or not). Both branches must return the same types."""
    p_aval = get_aval_any(pred)
    if p_aval.shape != ():
        raise TypeError(f"cond: pred must be a scalar, got {p_aval.str_short()}; use fnp.where for elementwise choice")
    concrete = _concrete(pred)
    names = ["false_fun", "true_fun"]
    if concrete is not None:
        return _switch(np.int32(bool(np.asarray(concrete))), [false_fun, true_fun], operands, names)
    from funcgrad.core import lax_api as lax

    if p_aval.dtype != np.bool_:
        pred = lax.ne(pred, lax.convert_element_type(np.zeros((), p_aval.dtype), p_aval.dtype))
    return _switch(lax.convert_element_type(pred, np.int32), [false_fun, true_fun], operands, names)


def _linearize_abstract(body: ClosedJaxpr):
    """Linearize ``body`` at abstract inputs: (forward closed jaxpr: inputs -> outputs +
    residuals, the LinearFunction whose constvars are those residuals)."""
    holder = []

    def fwd(*xs):
        outs, lin = linearize_flat(jaxpr_as_fun(body), list(xs))
        holder.append(lin)
        return list(outs) + list(lin.consts)

    return _closed(fwd, body.in_avals), holder[0]


def _split_linear_branch(branch: ClosedJaxpr, n_ops: int):
    """Linearize ``branch`` abstractly: (forward closed jaxpr: ops -> outs + residuals,
    linear closed jaxpr: residuals + tangents -> tangents, residual avals)."""
    fwd_closed, lin = _linearize_abstract(branch)
    j = lin.jaxpr
    lin_closed = ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), [])
    res_avals = [get_aval_any(c) for c in lin.consts]
    return fwd_closed, lin_closed, res_avals


def _zero_residual(aval):
    """A placeholder for another branch's residual: zeros, or an empty tape."""
    if isinstance(aval, TapeAval):
        return tape_empty_p.bind(aval=aval)
    from funcgrad.core.ad_util import zeros_like_aval

    return zeros_like_aval(aval)


def _join_residuals(fwds, lins, res_avals_list, n_out):
    """Give every branch the same residual slots: branch k fills its own and outputs
    zeros in the others'; its linear part reads only its own."""
    from funcgrad.core.ad_util import zeros_like_aval

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

        new_fwds.append(_closed(fwd_k, f.in_avals))
        new_lins.append(_closed(lin_k, all_res + l.in_avals[hi - lo:]))
    return new_fwds, new_lins, all_res


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    op_tangents = [instantiate(t) if is_differentiable(get_aval_any(p)) else Zero(tangent_aval(get_aval_any(p)))
                   for p, t in zip(ops, tangents[1:])]
    concrete = _concrete(index)
    if concrete is not None:  # the branch is known: differentiate it directly
        i = int(np.clip(int(np.asarray(concrete)), 0, len(branches) - 1))
        return jvp_flat(jaxpr_as_fun(branches[i]), list(ops), op_tangents)
    n_out = len(branches[0].out_avals)
    parts = [_split_linear_branch(b, len(ops)) for b in branches]
    fwds, lins, res_all = _join_residuals([p[0] for p in parts], [p[1] for p in parts], [p[2] for p in parts], n_out)
    outs = cond_p.bind(index, *ops, branches=tuple(fwds))
    primal_out, res = outs[:n_out], outs[n_out:]
    tans = [instantiate(t) for t in op_tangents]
    t_out = cond_p.bind(index, *res, *tans, branches=tuple(lins))
    return primal_out, t_out


def _transpose_closed(lin: ClosedJaxpr, linear_mask, ct_avals):
    """Closed jaxpr: (non-linear inputs, cotangents) -> cotangents of the linear inputs."""
    nonlin_avals = [a for a, m in zip(lin.in_avals, linear_mask) if not m]
    lin_avals = [a for a, m in zip(lin.in_avals, linear_mask) if m]
    j = lin.jaxpr
    nonlin_vars = [v for v, m in zip(j.invars, linear_mask) if not m]
    lin_vars = [v for v, m in zip(j.invars, linear_mask) if m]
    as_linear = Jaxpr(list(j.constvars) + nonlin_vars, lin_vars, j.eqns, j.outvars)  # its consts are residuals too

    def transposed(*xs):
        nonlin, cts = xs[: len(nonlin_avals)], xs[len(nonlin_avals):]
        return [instantiate(c) for c in backward_pass(as_linear, list(lin.consts) + list(nonlin), list(cts))]

    del lin_avals
    return _closed(transposed, nonlin_avals + list(ct_avals))


def _cond_transpose(cts, index, *args, branches):
    mask = [is_undefined(a) for a in args]
    nonlin = [a for a in args if not is_undefined(a)]
    ct_avals = [tangent_aval(a) for a in branches[0].out_avals]
    cts = [instantiate(c) if type(c) is not Zero else instantiate(Zero(a)) for c, a in zip(cts, ct_avals)]
    tbranches = tuple(_transpose_closed(b, mask, ct_avals) for b in branches)
    cts_in = cond_p.bind(index, *nonlin, *cts, branches=tbranches)
    it = iter(cts_in)
    return [None] + [next(it) if m else None for m in mask]


def _cond_batch(args, bdims, *, branches):
    from funcgrad.core.batch_util import batch_size, batched_aval, bdim_at
    from funcgrad.transforms.batching import batch_flat

    size = batch_size(args, bdims)
    (index, *ops), (d_index, *d_ops) = args, bdims
    # Tapes keep their own batching (shared tapes stay shared), as in ``_scan_batch``.
    in_dims = [d if _is_tape(x) else 0 for x, d in zip(ops, d_ops)]
    ops = [x if _is_tape(x) else bdim_at(x, d, size, 0) for x, d in zip(ops, d_ops)]
    in_avals = [get_aval_any(x) if _is_tape(x) else batched_aval(a, size) for x, a in zip(ops, branches[0].in_avals)]

    def batch_branches(keep_tapes: bool):
        dims_per_branch, closed = [], []
        for b in branches:
            dims: list | None = [] if keep_tapes else None

            def fn(*xs, b=b, dims=dims):
                if dims is not None:
                    dims.clear()
                return batch_flat(jaxpr_as_fun(b), list(xs), in_dims, size, lambda i, n: 0, dims)

            closed.append(_closed(fn, in_avals))
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
        if _is_tape(results[0][j]):
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
    owners = [k for k, b in enumerate(branches) if not _made_by(b.jaxpr, j, ("tape_empty", "tape_zeros"))]
    if len(owners) > 1:
        raise NotImplementedError("vmap of a cond choosing per lane between different run-time tapes")
    if not owners:  # only placeholders: a zero tape reads as zeros at any length, so prefer it
        owners = [k for k, b in enumerate(branches) if not _made_by(b.jaxpr, j, ("tape_empty",))] or [0]
    return results[owners[0]][j]


def _made_by(jaxpr, j: int, names) -> bool:
    v = jaxpr.outvars[j]
    return any(e.primitive.name in names and any(o is v for o in e.outputs) for e in jaxpr.eqns)


jvp_rules[cond_p] = _cond_jvp
transpose_rules[cond_p] = _cond_transpose
batch_rules[cond_p] = _cond_batch


# --- scan ----------------------------------------------------------------------------------

scan_p = Primitive("scan", multiple_results=True)


def _stacked(aval, n):
    """Aval of ``n`` values of type ``aval`` stacked on a new leading axis (tapes too)."""
    return aval.update(shape=(n,) + aval.shape)


def _unstacked(aval):
    return aval.update(shape=aval.shape[1:])


class TapeStack:
    """Run-time value of a stacked TapeAval: one Tape per iteration of a scan."""

    __slots__ = ("tapes", "aval")

    def __init__(self, tapes, aval):
        self.tapes, self.aval = list(tapes), aval

    def __getitem__(self, i):
        return self.tapes[i]


def _stack(values, aval, length):
    if isinstance(aval, TapeAval):
        return TapeStack(values, _stacked(aval, length))
    if length == 0:
        return np.empty((0,) + aval.shape, aval.dtype)
    return np.stack([np.asarray(v, aval.dtype) for v in values])


def _index(x, i):
    return x[i] if isinstance(x, TapeStack) else np.asarray(x)[i]


@scan_p.def_impl
def _scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    consts, carry, xs = args[:num_consts], list(args[num_consts:num_consts + num_carry]), args[num_consts + num_carry:]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [[None] * length for _ in y_avals]
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        out = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *carry, *[_index(x, i) for x in xs])
        carry = out[:num_carry]
        for k, y in enumerate(out[num_carry:]):
            ys[k][i] = y
    return list(carry) + [_stack(v, a, length) for v, a in zip(ys, y_avals)]


@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    consts, carry, xs = avals[:num_consts], avals[num_consts:num_consts + num_carry], avals[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan: scanned input {x.str_short()} must have leading dimension {length}")
    expect = list(consts) + list(carry) + [_unstacked(x) for x in xs]
    if len(expect) != len(jaxpr.in_avals) or not all(a.same_type(b) for a, b in zip(expect, jaxpr.in_avals)):
        raise TypeError("scan: body inputs " + str([a.str_short() for a in jaxpr.in_avals]) + " do not match operands " + str([a.str_short() for a in expect]))
    outs = jaxpr.out_avals
    for k, (a, b) in enumerate(zip(carry, outs[:num_carry])):
        if not a.same_type(b):
            raise TypeError(f"scan: carry leaf {k} enters the body as {a.str_short()} but leaves as {b.str_short()}")
    return [a.strip_weak_type() for a in outs[:num_carry]] + [_stacked(a, length) for a in outs[num_carry:]]


def _check_carry(what, in_tree, out_tree, in_avals, out_avals):
    if in_tree != out_tree:
        raise TypeError(f"{what}: the body must return the carry's structure {in_tree}, got {out_tree}")
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if not a.same_type(b):
            raise TypeError(
                f"{what}: carry leaf {k} has type {a.str_short()} on input but the body returns "
                f"{b.str_short()}; the carry must keep its shape and dtype (cast with .astype)"
            )


def scan(f, init, xs=None, length=None, reverse=False):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final_carry, stacked_ys)``. ``xs`` may be None with ``length`` given.

    >>> scan(lambda c, x: (c + x, c * x), 0.0, np.arange(4.0))
    """
    x_leaves, x_tree = pytree.tree_flatten(xs)
    lengths = {get_aval_any(x).shape[0] if get_aval_any(x).shape else None for x in x_leaves}
    if None in lengths:
        raise ValueError("scan: every leaf of xs must have a leading axis to scan over")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError(f"scan: xs leaves and length disagree on the number of steps: {sorted(lengths)}")
    if not lengths:
        raise ValueError("scan: pass xs or length")
    n = lengths.pop()
    c_leaves, c_tree = pytree.tree_flatten(init)
    c_avals = [a.strip_weak_type() for a in _avals(c_leaves)]
    x_avals = [ShapedArray(a.shape[1:], a.dtype) for a in _avals(x_leaves)]
    out_trees = []

    def body(*args):
        carry = pytree.tree_unflatten(c_tree, args[: len(c_leaves)])
        x = pytree.tree_unflatten(x_tree, args[len(c_leaves):])
        res = f(carry, x)
        if not (isinstance(res, tuple) and len(res) == 2):
            raise TypeError("scan: the body must return a pair (carry, y)")
        new_c, y = res
        c_out, c_tree_out = pytree.tree_flatten(new_c)
        y_out, y_tree = pytree.tree_flatten(y)
        out_trees[:] = [c_tree_out, y_tree]
        return c_out + y_out

    body.__name__ = getattr(f, "__name__", "body")
    jaxpr, consts = trace_to_jaxpr(body, c_avals + x_avals)
    c_tree_out, y_tree = out_trees
    _check_carry("scan", c_tree, c_tree_out, c_avals, jaxpr.out_avals[: len(c_leaves)])
    closed, all_consts = hoist_consts([(jaxpr, consts)])
    outs = scan_p.bind(
        *all_consts, *c_leaves, *x_leaves, jaxpr=closed[0], num_consts=len(all_consts),
        num_carry=len(c_leaves), length=n, reverse=bool(reverse),
    )
    carry = pytree.tree_unflatten(c_tree, outs[: len(c_leaves)])
    return carry, pytree.tree_unflatten(y_tree, outs[len(c_leaves):])


def _invariant_vars(jaxpr: Jaxpr, invariant_inputs):
    """Variables of ``jaxpr`` that depend only on the given inputs (and literals)."""
    inv = {id(v) for v in invariant_inputs}
    for e in jaxpr.eqns:
        if all(type(a) is not Var or id(a) in inv for a in e.inputs) and not e.params.get("branches") and e.inputs:
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
        out, t_out = jvp_flat(body, consts + carry + [at(x, i) for x in xs], t_consts + t_carry + [at(t, i) for t in t_xs])
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
        ts = [instantiate(t[k]) for t in t_ys]
        t_stacked.append(lax.concatenate([lax.reshape(t, (1,) + a.shape) for t in ts], 0))
    return carry + stacked, t_carry + t_stacked


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    nc, nk = num_consts, num_carry
    if _all_concrete(primals):
        return _scan_jvp_eager(primals, tangents, jaxpr, nc, nk, length, reverse)
    tangents = [instantiate(t) if is_differentiable(get_aval_any(p)) else instantiate(Zero(tangent_aval(get_aval_any(p))))
                for p, t in zip(primals, tangents)]
    fwd_closed, lin = _linearize_abstract(jaxpr)
    n_out = len(jaxpr.out_avals)
    res_vars = fwd_closed.jaxpr.outvars[n_out:]
    # Residuals that depend only on the loop constants are the same every iteration:
    # compute them once, outside, instead of stacking one copy per step.
    inv = _invariant_vars(fwd_closed.jaxpr, fwd_closed.jaxpr.invars[:nc])
    inv_mask = [type(v) is Var and id(v) in inv for v in res_vars]
    fj = fwd_closed.jaxpr
    inv_eqns = [e for e in fj.eqns if all(id(o) in inv for o in e.outputs) and e.inputs]
    inv_jaxpr = Jaxpr(fj.constvars, fj.invars[:nc], inv_eqns, [v for v, m in zip(res_vars, inv_mask) if m])
    inv_res = eval_jaxpr(inv_jaxpr, fwd_closed.consts, *primals[:nc])
    # Forward scan: primal outputs plus the per-iteration residuals as extra ys.
    per_iter = [v for v, m in zip(res_vars, inv_mask) if not m]
    fwd_body = ClosedJaxpr(Jaxpr(fj.constvars, fj.invars, fj.eqns, fj.outvars[:n_out] + per_iter), fwd_closed.consts)
    outs = scan_p.bind(*primals, jaxpr=fwd_body, num_consts=nc, num_carry=nk, length=length, reverse=reverse)
    n_y = n_out - nk
    primal_out, stacked_res = outs[: nk + n_y], outs[nk + n_y:]
    # Linear scan: constants = (invariant residuals, const tangents); carry = carry
    # tangents; xs = (per-iteration residuals, x tangents).
    lj = lin.jaxpr
    res_in = list(lj.constvars)
    inv_in = [v for v, m in zip(res_in, inv_mask) if m]
    it_in = [v for v, m in zip(res_in, inv_mask) if not m]
    t_c, t_k, t_x = lj.invars[:nc], lj.invars[nc:nc + nk], lj.invars[nc + nk:]
    lin_body = ClosedJaxpr(Jaxpr([], inv_in + list(t_c) + list(t_k) + it_in + list(t_x), lj.eqns, lj.outvars), [])
    # ``linear`` marks which operands the transpose treats as linear (a tangent may be
    # a concrete zero, which is still linear by position).
    lin_mask = (False,) * len(inv_res) + (True,) * (nc + nk) + (False,) * len(stacked_res) + (True,) * (len(primals) - nc - nk)
    t_out = scan_p.bind(
        *inv_res, *tangents[:nc], *tangents[nc:nc + nk], *stacked_res, *tangents[nc + nk:],
        jaxpr=lin_body, num_consts=len(inv_res) + nc, num_carry=nk, length=length, reverse=reverse,
        linear=lin_mask,
    )
    return primal_out, t_out


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    nc, nk = num_consts, num_carry
    if linear is None:
        linear = tuple(is_undefined(a) for a in args)
    consts, carry, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    c_lin, k_lin, x_lin = list(linear[:nc]), list(linear[nc:nc + nk]), list(linear[nc + nk:])
    if not all(k_lin):
        raise NotImplementedError("scan transpose: the carry must be entirely linear")
    # Layout of a linear scan from _scan_jvp: non-linear constants first, then linear ones;
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
    res_x_avals = [_unstacked(get_aval_any(r)) for r in res_x]

    def body_t(*args_t):
        i = 0
        rc = args_t[i:i + n_res_c]; i += n_res_c
        acc = args_t[i:i + len(lin_c)]; i += len(lin_c)
        ctk = args_t[i:i + nk]; i += nk
        rx = args_t[i:i + n_res_x]; i += n_res_x
        cty = args_t[i:]
        cts_in = backward_pass(as_linear, list(rc) + list(rx), list(ctk) + list(cty))
        cts_in = [instantiate(c) for c in cts_in]
        ct_c, ct_k, ct_x = cts_in[: len(lin_c)], cts_in[len(lin_c):len(lin_c) + nk], cts_in[len(lin_c) + nk:]
        from funcgrad.core import lax_api as lax

        new_acc = [lax.add(a, c) for a, c in zip(acc, ct_c)]
        return list(new_acc) + list(ct_k) + list(ct_x)

    body_closed = _closed(body_t, [get_aval_any(r) for r in res_c] + lin_c_avals + ct_carry_avals + res_x_avals + ct_y_avals)
    from funcgrad.core.ad_util import zeros_like_aval

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
    is_tape = [_is_tape(x) for x in args]
    carry_b = [d is not None for d in bdims[nc:nc + nk]]

    def layout(carry_b):
        moved, in_dims, in_avals = [], [], []
        for i, (x, d, a, t) in enumerate(zip(args, bdims, jaxpr.in_avals, is_tape)):
            batched = carry_b[i - nc] if nc <= i < nc + nk else d is not None
            if t:
                moved.append(x)
                in_dims.append(d)
                in_avals.append(get_aval_any(x) if i < nc + nk else _unstacked(get_aval_any(x)))
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

        return moved, _closed(body_fn, in_avals), dims

    for _ in range(nk + 1):
        _, _, dims = traced(carry_b, [KEEP] * nk)
        new = [b or d is not None for b, d in zip(carry_b, dims[:nk])]
        if new == carry_b:
            break
        carry_b = new
    moved, body, dims = traced(carry_b, [0 if b else None for b in carry_b])
    outs = scan_p.bind(*moved, jaxpr=body, num_consts=nc, num_carry=nk, length=length, reverse=reverse, linear=linear)
    y_dims = [d if _is_tape(o) else (None if d is None else 1) for o, d in zip(outs[nk:], dims)]
    return outs, [0 if b else None for b in carry_b] + y_dims


def _is_tape(x) -> bool:
    return isinstance(get_aval_any(x), TapeAval)


def _batch_tape(x, d, size):
    from funcgrad.transforms.tape_scan import tape_broadcast

    return x if d is not None else tape_broadcast(x, size)


jvp_rules[scan_p] = _scan_jvp
transpose_rules[scan_p] = _scan_transpose
batch_rules[scan_p] = _scan_batch


# --- while_loop ----------------------------------------------------------------------------

while_p = Primitive("while", multiple_results=True)


def _while_parts(args, cond_nconsts, body_nconsts):
    return args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts], list(args[cond_nconsts + body_nconsts:])


@while_p.def_impl
def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = _while_parts(args, cond_nconsts, body_nconsts)
    while bool(eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)[0]):
        carry = eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *bc, *carry)
    return carry


@while_p.def_abstract_eval
def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = _while_parts(avals, cond_nconsts, body_nconsts)
    (pred,) = cond_jaxpr.out_avals
    if pred.shape != () or pred.dtype != np.bool_:
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, got {pred.str_short()}")
    for k, (a, b) in enumerate(zip(carry, body_jaxpr.out_avals)):
        if not a.same_type(b):
            raise TypeError(f"while_loop: carry leaf {k} enters the body as {a.str_short()} but leaves as {b.str_short()}")
    return [a.strip_weak_type() for a in carry]


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
        if isinstance(checkpoints, (bool, np.bool_)) or not isinstance(checkpoints, (int, np.integer)) or checkpoints < 1:
            raise ValueError(f"while_loop: checkpoints must be a positive int, got {checkpoints!r}")
        k = int(checkpoints)
        return _segmented_while(cond_fun, body_fun, init_val, k)
    c_leaves, c_tree = pytree.tree_flatten(init_val)
    args_tree = pytree.tree_structure((init_val,))
    c_avals = [a.strip_weak_type() for a in _avals(c_leaves)]
    cond_j, cond_consts, cond_tree = _trace_pytree_fun(cond_fun, args_tree, c_avals, "cond_fun")
    if len(cond_j.out_avals) != 1 or cond_j.out_avals[0].shape != () or cond_j.out_avals[0].dtype.kind not in "bif":
        shown = [a.str_short() for a in cond_j.out_avals]
        raise TypeError(f"while_loop: cond_fun must return a scalar boolean, got {shown}")
    if cond_j.out_avals[0].dtype != np.bool_:
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, got {cond_j.out_avals[0].str_short()}")
    body_j, body_consts, body_tree = _trace_pytree_fun(body_fun, args_tree, c_avals, "body_fun")
    _check_carry("while_loop", c_tree, body_tree, c_avals, body_j.out_avals)
    if _all_concrete(c_leaves) and not _has_tracers(cond_consts + body_consts):
        # Eager: run the user's functions directly (they may run under eager grad).
        val = init_val
        while bool(np.asarray(_concrete(cond_fun(val)))):
            val = body_fun(val)
        return val
    (cc,), ccs = hoist_consts([(cond_j, cond_consts)])
    (bb,), bcs = hoist_consts([(body_j, body_consts)])
    outs = while_p.bind(*ccs, *bcs, *c_leaves, cond_jaxpr=cc, body_jaxpr=bb, cond_nconsts=len(ccs), body_nconsts=len(bcs))
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


def _all_concrete(xs):
    return all(_concrete(x) is not None for x in xs)


def _has_tracers(xs):
    return any(isinstance(x, Tracer) and x.to_concrete_value() is None for x in xs)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = _while_parts(primals, cond_nconsts, body_nconsts)
    nb = body_nconsts
    tans = [instantiate(t) if is_differentiable(get_aval_any(p)) else Zero(tangent_aval(get_aval_any(p)))
            for p, t in zip(primals, tangents)]
    t_bc, t_carry = tans[cond_nconsts:cond_nconsts + nb], tans[cond_nconsts + nb:]
    body_fn = jaxpr_as_fun(body_jaxpr)
    if _all_concrete(list(cc) + list(carry)) and not _has_tracers(list(cc)):
        # The trip count is decided now: iterate in Python, differentiating each step.
        # Under reverse mode every step's tangent ops are recorded (a tape whose length
        # is known only at run time), and the backward pass replays them in reverse.
        while bool(np.asarray(_concrete(eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)[0]))):
            carry, t_carry = jvp_flat(body_fn, list(bc) + list(carry), list(t_bc) + list(t_carry))
            t_carry = [instantiate(t) if get_aval_any(p).dtype.kind == "f" else t for p, t in zip(carry, t_carry)]
        return list(carry), list(t_carry)
    if is_linearizing(list(t_bc) + list(t_carry)):
        return _while_jvp_tape(cc, bc, carry, t_bc, t_carry, cond_jaxpr, body_jaxpr, cond_nconsts)
    # Staged forward mode: one while over (carry, carry tangents).
    float_mask = [get_aval_any(p).dtype.kind == "f" for p in carry]
    t_carry_in = [t for t, m in zip(t_carry, float_mask) if m]
    t_bc_in = [instantiate(t) for t in t_bc]
    nk = len(carry)

    def body_jvp(*xs):
        b, t_b = xs[:nb], xs[nb:2 * nb]
        k, t_k = xs[2 * nb:2 * nb + nk], xs[2 * nb + nk:]
        it = iter(t_k)
        full_t = [next(it) if m else Zero(tangent_aval(get_aval_any(v))) for v, m in zip(k, float_mask)]
        out, t_out = jvp_flat(body_fn, list(b) + list(k), list(t_b) + full_t)
        return list(out) + [instantiate(t) for t, m in zip(t_out, float_mask) if m]

    def cond_jvp(*xs):
        c, k = xs[:cond_nconsts], xs[cond_nconsts:cond_nconsts + nk]
        return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *c, *k)

    b_avals = body_jaxpr.in_avals[:nb]
    k_avals = [get_aval_any(p).strip_weak_type() for p in carry]
    tk_avals = [tangent_aval(a) for a, m in zip(k_avals, float_mask) if m]
    body_closed = _closed(body_jvp, list(b_avals) + [tangent_aval(a) for a in b_avals] + k_avals + tk_avals)
    cond_closed = _closed(cond_jvp, list(cond_jaxpr.in_avals[:cond_nconsts]) + k_avals + tk_avals)
    outs = while_p.bind(
        *cc, *bc, *t_bc_in, *carry, *t_carry_in, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
        cond_nconsts=cond_nconsts, body_nconsts=2 * nb,
    )
    it = iter(outs[nk:])
    t_out = [next(it) if m else Zero(tangent_aval(a)) for a, m in zip(k_avals, float_mask)]
    return outs[:nk], t_out


def _while_batch(args, bdims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    from funcgrad.core import lax_api as lax
    from funcgrad.core.batch_util import batch_size, batched_aval, bdim_at
    from funcgrad.transforms.batching import batch_flat

    size = batch_size(args, bdims)
    moved = [_batch_tape(x, d, size) if _is_tape(x) else bdim_at(x, d, size, 0) for x, d in zip(args, bdims)]
    cc, bc, carry = _while_parts(moved, cond_nconsts, body_nconsts)
    batched = lambda a: ShapedArray((size,) + a.shape, a.dtype)  # noqa: E731
    b_cond = lambda *xs: batch_flat(jaxpr_as_fun(cond_jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    b_body = lambda *xs: batch_flat(jaxpr_as_fun(body_jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    nc, nb = cond_nconsts, body_nconsts

    def any_lane(*xs):
        (pred,) = b_cond(*xs)
        return [lax.reduce_max(pred, (0,))]

    def step(*xs):
        # Run every lane's body, but keep the old carry in lanes that are already done.
        c, b, k = xs[:nc], xs[nc:nc + nb], xs[nc + nb:]
        (pred,) = b_cond(*c, *k)
        new = b_body(*b, *k)
        return [lax.select(lax.broadcast_in_dim(pred, get_aval_any(n).shape, (0,)), n, o) for n, o in zip(new, k)]

    k_avals = [batched(a) for a in cond_jaxpr.in_avals[nc:]]
    cond_closed = _closed(any_lane, [batched(a) for a in cond_jaxpr.in_avals[:nc]] + k_avals)
    body_closed = _closed(step, [batched(a) for a in cond_jaxpr.in_avals[:nc]] + [batched(a) for a in body_jaxpr.in_avals[:nb]] + k_avals)
    outs = while_p.bind(*cc, *cc, *bc, *carry, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
                        cond_nconsts=nc, body_nconsts=nc + nb)
    return outs, [0] * len(outs)


jvp_rules[while_p] = _while_jvp
batch_rules[while_p] = _while_batch


# --- fori_loop -----------------------------------------------------------------------------

def fori_loop(lower, upper, body_fun, init_val):
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    Concrete bounds become a ``scan`` (so reverse mode works staged, like JAX); traced
    bounds become a ``while_loop`` (reverse mode works too: see ``while_loop``).
    """
    lo, hi = _concrete(lower), _concrete(upper)
    if lo is not None and hi is not None and not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        lo_i, hi_i = int(np.asarray(lo)), int(np.asarray(hi))
        n = max(hi_i - lo_i, 0)
        if n == 0:
            return init_val
        from funcgrad.core import lax_api as lax

        idx_dtype = np.result_type(np.asarray(lo).dtype if hasattr(lo, "dtype") else np.int64, np.int64)

        def step(val, i):
            return body_fun(i, val), None

        steps = lax.add(lax.iota(idx_dtype, (n,), 0), lax.broadcast_in_dim(np.asarray(lo_i, idx_dtype), (n,), ()))
        val, _ = scan(step, init_val, steps)
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

    return while_loop(cond, body, (lower, upper, init_val))[2]


# --- reverse mode through a staged while_loop: the run-time tape -----------------------------
# Beyond JAX: the trip count is unknown until the loop runs, so the forward loop
# (``while_tape``) appends each iteration's residuals to a tape whose length is decided
# at run time (a Python list here; a growable buffer in compiled code), and the linear
# map (``tape_apply``) replays the tape; its transpose replays it backwards.



class Tape:
    """Run-time value of a TapeAval: a list of per-iteration residual tuples."""

    __slots__ = ("entries", "aval")

    def __init__(self, entries, aval: TapeAval):
        self.entries = entries
        self.aval = aval

    def __repr__(self):
        if self.entries is None:
            return f"Tape(zeros of {self.aval.str_short()})"
        return f"Tape({len(self.entries)} iterations of {self.aval.str_short()})"

    def records(self, n: int):
        """The records; a zero tape (``entries is None``, a tangent known to be zero)
        gives ``n`` records of zeros."""
        if self.entries is not None:
            return self.entries
        zeros = tuple(zero_value(a) for a in self.aval.res_avals)
        return [zeros] * n


def zero_value(aval):
    """A concrete zero of ``aval``: an array, a zero tape, or a stack of zero tapes."""
    if not isinstance(aval, TapeAval):
        return np.zeros(aval.shape, aval.dtype)
    if aval.shape:
        inner = aval.update(shape=aval.shape[1:])
        return TapeStack([zero_value(inner) for _ in range(aval.shape[0])], aval)
    return Tape(None, aval)


def _tape_length(tapes) -> int:
    """Records in each of ``tapes`` (zero tapes take the others' length)."""
    lengths = {len(t.entries) for t in tapes if t.entries is not None}
    if len(lengths) > 1:
        raise ValueError(f"tapes of different lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 0


while_tape_p = Primitive("while_tape", multiple_results=True)


@while_tape_p.def_impl
def _while_tape_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    cc, bc, carry = _while_parts(args, cond_nconsts, body_nconsts)
    nk = len(carry)
    entries = []
    while bool(eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)[0]):
        out = eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *bc, *carry)
        carry, res = out[:nk], out[nk:]
        entries.append(tuple(res))
    return list(carry) + [Tape(entries, tape_aval)]


@while_tape_p.def_abstract_eval
def _while_tape_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    carry = avals[cond_nconsts + body_nconsts:]
    return [a.strip_weak_type() for a in carry] + [tape_aval]


tape_apply_p = Primitive("tape_apply", multiple_results=True)


@tape_apply_p.def_impl
def _tape_apply_impl(tape, *args, body, num_consts, reverse, linear):
    consts, carry = args[:num_consts], list(args[num_consts:])
    records = tape.entries if tape.entries is not None else []  # a zero tape has no records of its own
    entries = reversed(records) if reverse else records
    for res in entries:
        carry = eval_jaxpr(body.jaxpr, body.consts, *res, *consts, *carry)
    return carry


@tape_apply_p.def_abstract_eval
def _tape_apply_abstract_eval(tape, *avals, body, num_consts, reverse, linear):
    if not isinstance(tape, TapeAval):
        raise TypeError(f"tape_apply: first operand must be a tape, got {tape.str_short()}")
    return [a.strip_weak_type() for a in avals[num_consts:]]


def _while_jvp_tape(cc, bc, carry, t_bc, t_carry, cond_jaxpr, body_jaxpr, cond_nconsts):
    """Staged reverse mode: forward while recording residuals + linear tape replay."""
    nb, nk = len(bc), len(carry)
    fwd_closed, body, res_avals = _split_linear_branch(body_jaxpr, nb + nk)
    tape_aval = TapeAval(res_avals)
    outs = while_tape_p.bind(
        *cc, *bc, *carry, cond_jaxpr=cond_jaxpr, body_jaxpr=fwd_closed, cond_nconsts=cond_nconsts,
        body_nconsts=nb, tape_aval=tape_aval,
    )
    carry_out, tape = outs[:nk], outs[nk]
    tans = [instantiate(t) for t in list(t_bc) + list(t_carry)]
    t_out = tape_apply_p.bind(tape, *tans, body=body, num_consts=nb, reverse=False, linear=(True,) * (nb + nk))
    return carry_out, t_out


def _tape_apply_transpose(cts, tape, *args, body, num_consts, reverse, linear):
    nc = num_consts
    consts, carry = args[:nc], args[nc:]
    c_lin = list(linear[:nc])
    if c_lin != sorted(c_lin) or not all(linear[nc:]):
        raise NotImplementedError("tape_apply transpose: expected non-linear constants first and a linear carry")
    n_res_c = c_lin.count(False)
    res_c, lin_c = list(consts[:n_res_c]), consts[n_res_c:]
    n_tape = len(tape.aval.res_avals) if isinstance(tape, Tape) else len(get_aval_any(tape).res_avals)
    b = body.jaxpr
    nk = len(carry)
    as_linear = Jaxpr(b.invars[:n_tape] + b.invars[n_tape:n_tape + n_res_c], b.invars[n_tape + n_res_c:], b.eqns, b.outvars)
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
    body_closed = _closed(body_t, t_avals + [get_aval_any(r) for r in res_c] + lin_c_avals + ct_avals)
    from funcgrad.core.ad_util import zeros_like_aval

    acc0 = [zeros_like_aval(a) for a in lin_c_avals]
    cts = [instantiate(c) for c in cts]
    outs = tape_apply_p.bind(
        tape, *res_c, *acc0, *cts, body=body_closed, num_consts=n_res_c, reverse=not reverse,
        linear=(False,) * n_res_c + (True,) * (len(lin_c) + nk),
    )
    result = [None] * n_res_c + list(outs)
    return [None] + [c if is_undefined(a) else None for c, a in zip(result, args)]


def _tape_apply_jvp(primals, tangents, *, body, num_consts, reverse, linear):
    tape, *args = primals
    ans = tape_apply_p.bind(tape, *args, body=body, num_consts=num_consts, reverse=reverse, linear=linear)
    nonlin_moving = [t for t, l in zip(tangents[1:], linear) if not l and type(t) is not Zero]
    if nonlin_moving or is_linearizing(tangents):
        # the residuals' consumers move too (or tangents are staged): the general rule
        return tape_scan.tape_apply_as_scan_jvp(primals, tangents, body=body, num_consts=num_consts,
                                                reverse=reverse, linear=linear)
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

    size = batch_size(args, bdims)
    moved = [_batch_tape(x, d, size) if _is_tape(x) else bdim_at(x, d, size, 0) for x, d in zip(args, bdims)]
    cc, bc, carry = _while_parts(moved, cond_nconsts, body_nconsts)
    nc, nb, nk = cond_nconsts, body_nconsts, len(carry)
    b = lambda a: batched_aval(a, size)  # noqa: E731
    b_cond = lambda *xs: batch_flat(jaxpr_as_fun(cond_jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    b_body = lambda *xs: batch_flat(jaxpr_as_fun(body_jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731

    def any_lane(*xs):
        return [lax.reduce_max(b_cond(*xs)[0], (0,))]

    def step(*xs):
        c, bb, k = xs[:nc], xs[nc:nc + nb], xs[nc + nb:]
        (pred,) = b_cond(*c, *k)
        out = b_body(*bb, *k)
        new, res = out[:nk], out[nk:]
        kept = [lax.select(lax.broadcast_in_dim(pred, get_aval_any(n).shape, (0,)), n, o) for n, o in zip(new, k)]
        return kept + list(res) + [pred]

    k_avals = [b(a) for a in cond_jaxpr.in_avals[nc:]]
    c_avals = [b(a) for a in cond_jaxpr.in_avals[:nc]]
    cond_closed = _closed(any_lane, c_avals + k_avals)
    body_closed = _closed(step, c_avals + [b(a) for a in body_jaxpr.in_avals[:nb]] + k_avals)
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
    t_aval = tape.aval if isinstance(tape, Tape) else get_aval_any(tape)
    # mapped at this level (bdim 0: this level's mask last), or shared by the lanes (it
    # may still be batched by an inner vmap, whose masks are plain fields here)
    if d_tape is not None and t_aval.batch is None:
        raise NotImplementedError("tape_apply: inconsistent batching of a tape")
    size = t_aval.batch if d_tape is not None else batch_size(rest, d_rest)
    rest = [_batch_tape(x, d, size) if _is_tape(x) else bdim_at(x, d, size, 0) for x, d in zip(rest, d_rest)]
    n_res = len(body.in_avals) - len(rest)
    b = lambda a: batched_aval(a, size)  # noqa: E731
    inner = lambda *xs: batch_flat(jaxpr_as_fun(body), list(xs), [0] * len(xs), size, lambda i, n: 0)  # noqa: E731
    if d_tape is None:
        # An ordinary tape (same residuals for every lane): batch only the body's other
        # inputs; the residuals it reads from the tape are not mapped.
        dims = [None] * n_res + [0] * len(rest)
        plain = lambda *xs: batch_flat(jaxpr_as_fun(body), list(xs), dims, size, lambda i, n: 0)  # noqa: E731
        new_body = _closed(plain, list(body.in_avals[:n_res]) + [b(a) for a in body.in_avals[n_res:]])
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
        new_body = _closed(masked, res_avals + [b(a) for a in body.in_avals[n_res:]])
    outs = tape_apply_p.bind(tape, *rest, body=new_body, num_consts=num_consts, reverse=reverse, linear=linear)
    return outs, [0] * len(outs)


jvp_rules[tape_apply_p] = _tape_apply_jvp
transpose_rules[tape_apply_p] = _tape_apply_transpose
batch_rules[while_tape_p] = _while_tape_batch
batch_rules[tape_apply_p] = _tape_apply_batch
allow_missing("transpose", while_tape_p, "not linear: it is the forward half of a linearized while_loop")
allow_missing("transpose", while_p, "not linear: reverse mode splits it into while_tape + tape_apply")


# --- forward-mode derivatives of the tape primitives (staged hessian through while_loop) ----
# hessian = jacfwd(jacrev(f)): the outer forward pass differentiates the reverse pass, so
# while_tape and tape_apply need JVP rules. A tape's tangent is a tape of residual
# tangents; ``tape_split`` / ``tape_zip`` separate and rejoin a combined run.

def _split_tape_avals(aval, n):
    return aval.with_fields(aval.fields[:n]), aval.with_fields(aval.fields[n:])


def _entry_parts(entry, n_masks: int):
    """(fields, lane masks) of a record: a vmapped tape's records end with one mask per level."""
    cut = len(entry) - n_masks
    return list(entry[:cut]), list(entry[cut:])


tape_split_p = Primitive("tape_split", multiple_results=True)


@tape_split_p.def_impl
def _tape_split_impl(tape, *, n):
    masked = tape.aval.n_masks
    a_aval, b_aval = _split_tape_avals(tape.aval, n)
    if tape.entries is None:
        return [Tape(None, a_aval), Tape(None, b_aval)]
    a, b = [], []
    for e in tape.entries:
        res, mask = _entry_parts(e, masked)
        a.append(tuple(res[:n] + mask))
        b.append(tuple(res[n:] + mask))
    return [Tape(a, a_aval), Tape(b, b_aval)]


@tape_split_p.def_abstract_eval
def _tape_split_abstract_eval(tape, *, n):
    return list(_split_tape_avals(tape, n))


tape_zip_p = Primitive("tape_zip")


def _zip_avals(a, b):
    return a.with_fields(a.fields + b.fields)


@tape_zip_p.def_impl
def _tape_zip_impl(a, b):
    masked = a.aval.n_masks
    if a.entries is None and b.entries is None:
        return Tape(None, _zip_avals(a.aval, b.aval))
    n = _tape_length([a, b])
    entries = []
    for ea, eb in zip(a.records(n), b.records(n)):
        ra, mask = _entry_parts(ea, masked)
        rb, _ = _entry_parts(eb, masked)
        entries.append(tuple(ra + rb + mask))
    return Tape(entries, _zip_avals(a.aval, b.aval))


@tape_zip_p.def_abstract_eval
def _tape_zip_abstract_eval(a, b):
    return _zip_avals(a, b)


def _while_tape_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    cc, bc, carry = _while_parts(primals, cond_nconsts, body_nconsts)
    if is_linearizing(tangents):  # reverse over reverse: see tape_scan.py
        _, t_bc, t_carry = _while_parts(tangents, cond_nconsts, body_nconsts)
        return tape_scan.while_tape_linearize(cc, bc, carry, t_bc, t_carry, cond_jaxpr=cond_jaxpr,
                                              body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts, tape_aval=tape_aval)
    tans = [instantiate(t) for t in tangents]
    _, t_bc, t_carry = _while_parts(tans, cond_nconsts, body_nconsts)
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
    body_closed = _closed(body_jvp, b_avals + ta(b_avals) + k_avals + ta(k_avals))
    cond_closed = _closed(cond_fn, list(cond_jaxpr.in_avals) + ta(k_avals))
    combined = tape_aval.with_fields(list(tape_aval.fields) + [tangent_aval(a) for a in tape_aval.fields])
    outs = while_tape_p.bind(*cc, *bc, *t_bc, *carry, *t_carry, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
                             cond_nconsts=cond_nconsts, body_nconsts=2 * nb, tape_aval=combined)
    tape, t_tape = tape_split_p.bind(outs[2 * nk], n=n_rf)
    return list(outs[:nk]) + [tape], list(outs[nk:2 * nk]) + [t_tape]


def _tape_apply_jvp_full(primals, tangents, *, body, num_consts, reverse, linear):
    tape, *args = primals
    t_tape = tangents[0]
    if type(t_tape) is Zero:
        return _tape_apply_jvp(primals, tangents, body=body, num_consts=num_consts, reverse=reverse, linear=linear)
    if is_linearizing(tangents):  # reverse over reverse: see tape_scan.py
        return tape_scan.tape_apply_as_scan_jvp(primals, tangents, body=body, num_consts=num_consts,
                                                reverse=reverse, linear=linear)
    n_args = len(args)
    n_res = len(body.in_avals) - n_args
    t_args = [instantiate(t) if type(t) is not Zero else instantiate(Zero(tangent_aval(get_aval_any(a)))) for a, t in zip(args, tangents[1:])]
    nc = num_consts
    body_fn = jaxpr_as_fun(body)
    t_aval = get_aval_any(tape) if not isinstance(tape, Tape) else tape.aval
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
    new_body = _closed(jvp_body, res_avals + ta(res_avals) + mask_avals + c_avals + ta(c_avals) + k_avals + ta(k_avals))
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
jvp_rules[tape_apply_p] = _tape_apply_jvp_full
batch_rules[tape_split_p] = _tape_split_batch
batch_rules[tape_zip_p] = _tape_zip_batch
jvp_rules[tape_split_p] = lambda primals, tangents, *, n: (
    tape_split_p.bind(primals[0], n=n),
    [Zero(a) for a in _split_tape_avals(get_aval_any(primals[0]), n)] if type(tangents[0]) is Zero else tape_split_p.bind(tangents[0], n=n),
)
jvp_rules[tape_zip_p] = lambda primals, tangents: (
    tape_zip_p.bind(*primals),
    Zero(_zip_avals(*[get_aval_any(p) for p in primals])) if all(type(t) is Zero for t in tangents)
    else tape_zip_p.bind(*[instantiate(t) for t in tangents]),
)


# An empty tape: the placeholder a cond branch outputs in another branch's tape slot.
tape_empty_p = Primitive("tape_empty")
tape_empty_p.def_impl(lambda *, aval: Tape([], aval))
tape_empty_p.def_abstract_eval(lambda *, aval: aval)
jvp_rules[tape_empty_p] = lambda primals, tangents, *, aval: (tape_empty_p.bind(aval=aval), Zero(aval))
allow_missing("batch", tape_empty_p, "takes no operands, so it is never batched")
allow_missing("transpose", tape_empty_p, "tapes are residual storage, not linear values")

from funcgrad.transforms import tape_scan  # noqa: E402  (its rules build on the primitives above)
