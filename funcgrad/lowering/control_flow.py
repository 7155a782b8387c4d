"""Control flow in compiled code (primitives declared in ``core/prims/control_flow.py``
and ``funcgrad/tapes.py``): cond, while, scan, and reverse mode through while loops
(while_tape / tape_apply / tape_scan).

Sub-jaxprs (branches, loop bodies) are lowered by the same machinery as the top
level (``compiler.emit_jaxpr``): their own fusion and buffer plan, with intermediates
in a workspace region of their own.

- ``cond``: the index is clamped into range (like the evaluator) and a ``switch``
  jumps to one block per branch; every branch writes the cond's output buffers.
- ``while`` / ``scan``: a native loop. 0-d carries live in registers (phis); array
  carries are double-buffered: the body reads the current buffer and writes the
  other one, and the two pointers swap each iteration (no copies). Carries the body
  passes through unchanged stay in one buffer. ``scan`` reads each iteration's slice
  of ``xs`` in place and writes the stacked outputs straight into the preallocated
  output buffers.
- ``while_tape``: the forward loop of a while_loop under reverse mode. Its residuals
  go to a run-time tape: a heap buffer of fixed-size per-iteration records, grown by
  doubling with ``realloc``, described by a header in a workspace slot (a tape made
  inside another loop reuses its slot's buffer); every exit of the compiled function
  frees it. A failed allocation returns status 2 (MemoryError). Nothing is ever
  truncated.
- ``tape_apply``: a loop over the tape's records, forwards or backwards.
- ``tape_scan`` (reverse over reverse through a while_loop): a loop over the records of
  several tapes at once (zero tapes read as zeros and give no length), forwards or
  backwards, with a carry; the per-record outputs go to record ``i`` of a new tape
  allocated once before the loop with exactly as many records as the inputs have.
- Tapes as values of other constructs (see ``tapes.py`` for the header, ownership and
  moves): a cond outputs tapes (each branch moves its tape into the cond's slot); a
  scan stacks the tapes its body makes into an array of headers, one per iteration,
  and reads a stack's element ``i`` in iteration ``i``; a while_tape records the tapes
  its body makes (e.g. a scan's stack of inner tapes) in its own records.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.ir import ClosedJaxpr, Var
from funcgrad.core.prims.control_flow import cond_p, scan_p, while_p
from funcgrad.errors import LoweringError
from funcgrad.lowering import compiler
from funcgrad.lowering.builder import BOOL, I32, I64, Value, const
from funcgrad.lowering.context import BufferOperand, ConstOperand, Operand, RegOperand, lower_materialized
from funcgrad.lowering.inline import inline_calls
from funcgrad.lowering.tapes import (
    COUNT,
    RecordReader,
    TapeOperand,
    count_of,
    data_ptr,
    joint_count,
    layout,
    new_slot,
    record_operands,
    record_ptr,
    records_in,
    reserve,
    reserve_all,
    same_aval,
    scope,
    store_i64,
    store_tapes,
    tape_slots,
)
from funcgrad.tapes import TapeAval, tape_apply_p, tape_scan_p, while_tape_p

_prepared: dict = {}
WHILE_WORK_FACTOR = 16  # work estimate for a loop whose trip count is unknown


# --- sub-jaxprs --------------------------------------------------------------------------
def prepare(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with nested calls inlined and CSE/DCE applied (memoised)."""
    hit = _prepared.get(id(closed))
    if hit is not None and hit[0] is closed:
        return hit[1]
    c = inline_calls(closed)
    out = ClosedJaxpr(compiler.simplify(c.jaxpr, c.consts), c.consts)
    if len(_prepared) > 1024:
        _prepared.clear()
    _prepared[id(closed)] = (closed, out)
    return out


def sub_jaxprs(e) -> list:
    """[(description, prepared closed jaxpr)] of a higher-order equation
    (``Primitive.jaxpr_params``)."""
    subs = []
    for name in e.primitive.jaxpr_params:
        value = e.params[name]
        if isinstance(value, tuple):
            subs += [(f"{name}[{k}]", prepare(c)) for k, c in enumerate(value)]
        else:
            subs.append((name, prepare(value)))
    return subs


def _emit_body(ctx, closed: ClosedJaxpr, in_ops, dests):
    """Emit a sub-jaxpr at the current position in a tape scope of its own; returns
    (its output operands, the scope: tapes its equations made, which may be moved)."""
    # The buffers passed in and written out are laid out by the operands' and results'
    # types; a sub-jaxpr declaring others would read or write past them. The type
    # checker guarantees this for every program it passed; this keeps it true here.
    j = closed.jaxpr
    if len(in_ops) != len(j.invars) or not all(same_aval(o.aval, v.aval) for o, v in zip(in_ops, j.invars)) \
            or len(dests) != len(j.outvars) or not all(
                d is None or same_aval(d.aval, v.aval) for d, v in zip(dests, j.outvars)):
        raise LoweringError("a sub-jaxpr's declared inputs or outputs do not match the values it is given")
    token = object()
    saved, saved_par = scope(ctx), ctx.parallel_ok
    ctx.tape_scope, ctx.parallel_ok = token, False  # bodies run single-threaded
    try:
        return compiler.emit_jaxpr(ctx, closed.jaxpr, closed.consts, in_ops, dests), token
    finally:
        ctx.tape_scope, ctx.parallel_ok = saved, saved_par


def _no_tape_carries(what, ops):
    if any(isinstance(o, TapeOperand) for o in ops):
        raise LoweringError(f"{what}: a tape as a loop carry is not lowered")


def _tape_results(ctx, res, positions, dests, token):
    """Store the body's tape results ``res[k]`` (k in ``positions``) into ``dests[k]``."""
    pairs = []
    for k in positions:
        if not isinstance(res[k], TapeOperand):
            raise LoweringError("a body's tape output is not a tape of this program")
        pairs.append((dests[k], res[k]))
    store_tapes(ctx, pairs, token)


def _loop_invariant(ctx, op: Operand) -> Operand:
    """``op`` in a form that is cheap to read in every iteration of a loop: fused
    values are computed once, before the loop."""
    if op.is_buffer or isinstance(op, (ConstOperand, RegOperand, TapeOperand)):
        return op
    if not op.shape:
        return RegOperand(op.aval, ctx.scalar(op))
    tmp = ctx.temp_buffer(op.aval)
    ctx.write(tmp, op)
    return tmp


def _size(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64))


def _scaled_work(ctx, w0, factor):
    ctx.work = w0 + (ctx.work - w0) * factor


# --- the generic loop ----------------------------------------------------------------------
def _emit_loop(ctx, avals, inits, homes, invariant, extra, test, body):
    """A loop with carried values.

    ``avals``/``inits``/``homes``: type, initial operand and result buffer of each
    carry; ``invariant[k]``: the body passes carry k through unchanged. ``extra``:
    initial ``Value``s of additional register state (counters). ``test(cur, ex) ->
    i1 ref`` (emitted at the loop head); ``body(cur, dests, ex) -> (carry out
    operands, new extra Values)`` must write array carries into ``dests``.
    """
    b = ctx.b
    n = len(avals)
    is_reg = [not a.shape for a in avals]
    other: list = [None] * n
    reg_init: list = [None] * n
    for k in range(n):
        if is_reg[k]:
            reg_init[k] = ctx.scalar(inits[k])
            continue
        if not (inits[k].is_buffer and inits[k].ptr == homes[k].ptr):
            ctx.write(homes[k], inits[k], flat=True)
        if not invariant[k]:
            other[k] = ctx.workspace_region(_size(avals[k]) * np.dtype(avals[k].dtype).itemsize)
    pre = b.block
    head, body_l, exit_l = b.label("loop"), b.label("body"), b.label("done")
    b.br(head)
    b.start_block(head)
    slots = {}
    cur: list = [None] * n
    for k in range(n):
        if is_reg[k]:
            v = Value(b.tmp(), np.dtype(avals[k].dtype))
            slots[k] = (b.placeholder(), v.ref, v.ty, reg_init[k].ref)
            cur[k] = RegOperand(avals[k], v)
        elif invariant[k]:
            cur[k] = homes[k]
        else:
            p = b.tmp()
            slots[k] = (b.placeholder(), p, "ptr", homes[k].ptr)
            cur[k] = BufferOperand(ctx, avals[k], p)
    ex = [Value(b.tmp(), v.dtype) for v in extra]
    ex_slots = [b.placeholder() for _ in extra]
    go = ctx.scoped(lambda: test(cur, ex))
    b.cbr(go, body_l, exit_l)
    b.start_block(body_l)

    def run_body():
        dests: list = [None] * n
        nxt: list = [None] * n
        for k in range(n):
            if not is_reg[k] and not invariant[k]:
                same = b.emit(f"icmp eq ptr {cur[k].ptr}, {homes[k].ptr}")
                nxt[k] = b.emit(f"select i1 {same}, ptr {other[k]}, ptr {homes[k].ptr}")
                dests[k] = BufferOperand(ctx, avals[k], nxt[k])
        outs, new_ex = body(cur, dests, ex)
        new_regs = {k: ctx.scalar(outs[k]).ref for k in range(n) if is_reg[k]}
        return nxt, new_regs, new_ex

    nxt, new_regs, new_ex = ctx.scoped(run_body)
    b.interrupt_check()  # (each iteration: interrupt.py)
    b.work += 1 << 40  # (a loop of unknown length: the for_range loops around it poll too)
    latch = b.block
    b.br(head)
    for k, (line, name, ty, init) in slots.items():
        upd = new_regs[k] if is_reg[k] else nxt[k]
        b.lines[line] = f"  {name} = phi {ty} [{init}, %{pre}], [{upd}, %{latch}]"
    for line, v, v0, v1 in zip(ex_slots, ex, extra, new_ex):
        b.lines[line] = f"  {v.ref} = phi {v.ty} [{v0.ref}, %{pre}], [{v1.ref}, %{latch}]"
    b.start_block(exit_l)
    for k in range(n):
        if is_reg[k]:
            homes[k].store(ctx.idx((), []), cur[k].value)
        elif not invariant[k]:
            differ = b.emit(f"icmp ne ptr {cur[k].ptr}, {homes[k].ptr}")
            ctx.if_then(differ, lambda k=k: ctx.write(homes[k], cur[k], flat=True))
    return ex


def _invariant_mask(jaxpr, first_carry: int, n: int):
    ins, outs = jaxpr.invars, jaxpr.outvars
    return [isinstance(outs[k], Var) and outs[k] is ins[first_carry + k] for k in range(n)]


def _counter_test(b, t, n):
    return b.emit(f"icmp slt i64 {t.ref}, {n if isinstance(n, int) else n.ref}")


def _step(b, t):
    return Value(b.emit(f"add nuw nsw i64 {t.ref}, 1"), I64)


def _position(b, t, n, reverse):
    """Index of iteration ``t`` of ``n`` (counting down when ``reverse``)."""
    if not reverse:
        return t.ref
    last = n - 1 if isinstance(n, int) else b.emit(f"sub i64 {n.ref}, 1")
    return b.emit(f"sub i64 {last}, {t.ref}")


# --- cond -------------------------------------------------------------------------------------
# (tape positions: a cond passes tapes in and out of its branches)
tape_slots[cond_p] = lambda e: (set(range(1, len(e.inputs))), set(range(len(e.outputs))))
@lower_materialized(cond_p, complex_ok=True)
def _cond_lower(ctx, index, *ops, branches):
    outs = list(ctx.outs)
    brs = [prepare(br) for br in branches]
    n = len(brs)
    # Tape outputs: a slot each; every branch moves (or copies) its tape into it.
    tapes = {j: new_slot(ctx, v.aval, owner=scope(ctx)) for j, v in enumerate(ctx.eqn.outputs)
             if isinstance(v.aval, TapeAval)}

    def branch(k):
        def run():
            res, token = _emit_body(ctx, brs[k], list(ops), outs)
            _tape_results(ctx, res, list(tapes), tapes, token)
        ctx.scoped(run)

    result = [tapes.get(j, o) for j, o in enumerate(outs)] if tapes else None
    if isinstance(index, ConstOperand) or n == 1:
        branch(0 if n == 1 else int(np.clip(_const_int(index), 0, n - 1)))
        return result
    b = ctx.b
    idx = ctx.scalar(index)
    if idx.dtype != I32:
        raise LoweringError(f"cond: index must be int32, got {idx.dtype}")
    lo = b.emit(f"call i32 @llvm.smax.i32(i32 {idx.ref}, i32 0)")
    clamped = b.emit(f"call i32 @llvm.smin.i32(i32 {lo}, i32 {n - 1})")
    b.module.declare("llvm.smax.i32", "declare i32 @llvm.smax.i32(i32, i32)")
    b.module.declare("llvm.smin.i32", "declare i32 @llvm.smin.i32(i32, i32)")
    labels = [b.label(f"branch{k}_") for k in range(n)]
    join = b.label("endcond")
    cases = " ".join(f"i32 {k}, label %{labels[k]}" for k in range(n - 1))
    b.stmt(f"switch i32 {clamped}, label %{labels[n - 1]} [{cases}]")
    for k in range(n):
        b.start_block(labels[k])
        branch(k)
        b.br(join)
    b.start_block(join)
    return result


def _const_int(op: ConstOperand) -> int:
    ref = op.value.ref
    return int(ref == "true") if op.dtype == BOOL else int(ref)


# --- while ------------------------------------------------------------------------------------
def _while_operands(ctx, what, args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """(prepared cond, prepared body, cond consts, body consts, initial carry) of a
    while / while_tape; the consts are hoisted out of the loop."""
    cj, bj = prepare(cond_jaxpr), prepare(body_jaxpr)
    cc = [_loop_invariant(ctx, o) for o in args[:cond_nconsts]]
    bc = [_loop_invariant(ctx, o) for o in args[cond_nconsts:cond_nconsts + body_nconsts]]
    init = list(args[cond_nconsts + body_nconsts:])
    _no_tape_carries(what, init)
    return cj, bj, cc, bc, init


# (tape positions: the loop constants; tapes as loop carries are not lowered)
tape_slots[while_p] = lambda e: (set(range(e.params["cond_nconsts"] + e.params["body_nconsts"])), set())
@lower_materialized(while_p, complex_ok=True)
def _while_lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    outs = list(ctx.outs)
    w0 = ctx.work
    cj, bj, cc, bc, init = _while_operands(ctx, "while", args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
    avals = [o.aval for o in init]

    def test(cur, ex):
        (pred,), _ = _emit_body(ctx, cj, cc + cur, [None])
        return ctx.scalar(pred).ref

    def body(cur, dests, ex):
        return _emit_body(ctx, bj, bc + cur, dests)[0], []

    _emit_loop(ctx, avals, init, outs, _invariant_mask(bj.jaxpr, body_nconsts, len(init)), [], test, body)
    _scaled_work(ctx, w0, WHILE_WORK_FACTOR)


# --- scan -------------------------------------------------------------------------------------
class _SliceOperand(Operand):
    """Slice ``i`` along the leading axis of a (fused) operand."""

    def __init__(self, ctx, x: Operand, i):
        super().__init__(ShapedArray(x.shape[1:], x.dtype))
        self.ctx, self.x, self.i = ctx, x, i
        self.stride = _size(self.aval)

    def at(self, idx):
        b = self.ctx.b
        return self.x.at(self.ctx.idx(self.x.shape, flat=b.iadd(b.imul(self.i, self.stride), idx.flat)))


def _slice(ctx, x: Operand, i):
    aval = ShapedArray(x.shape[1:], x.dtype)
    if x.is_buffer:
        return BufferOperand(ctx, aval, ctx.b.gep(x.ptr, x.dtype, ctx.b.imul(i, _size(aval))))
    if isinstance(x, ConstOperand):
        return _ConstSlice(x, aval)
    return _SliceOperand(ctx, x, i)


class _ConstSlice(Operand):
    def __init__(self, x: ConstOperand, aval):
        super().__init__(aval)
        self.value = x.value

    def at(self, idx):
        return self.value


# (tape positions: constants, and xs / ys as stacks of tapes; not the carry)
tape_slots[scan_p] = lambda e: (
    set(range(e.params["num_consts"])) | set(range(e.params["num_consts"] + e.params["num_carry"], len(e.inputs))),
    set(range(e.params["num_carry"], len(e.outputs))))
@lower_materialized(scan_p, complex_ok=True)
def _scan_lower(ctx, *args, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    outs = list(ctx.outs)
    w0 = ctx.work
    bj = prepare(jaxpr)
    consts = [_loop_invariant(ctx, o) for o in args[:num_consts]]
    init = list(args[num_consts:num_consts + num_carry])
    _no_tape_carries("scan", init)
    xs = list(args[num_consts + num_carry:])
    avals = [o.aval for o in init]
    b = ctx.b
    # Tapes the body makes are stacked: an array of headers, one per iteration.
    tapes = {num_carry + k: new_slot(ctx, v.aval, owner=scope(ctx))
             for k, v in enumerate(ctx.eqn.outputs[num_carry:]) if isinstance(v.aval, TapeAval)}
    ys = outs[num_carry:]

    def test(cur, ex):
        return _counter_test(b, ex[0], length)

    def body(cur, dests, ex):
        i = _position(b, ex[0], length, reverse)
        x_ops = [x.element(ctx, i) if isinstance(x, TapeOperand) else _slice(ctx, x, i) for x in xs]
        y_dests = [None if num_carry + k in tapes else _slice(ctx, y, i) for k, y in enumerate(ys)]
        res, token = _emit_body(ctx, bj, consts + cur + x_ops, dests + y_dests)
        _tape_results(ctx, res, list(tapes), {j: t.element(ctx, i) for j, t in tapes.items()}, token)
        return res[:num_carry], [_step(b, ex[0])]

    if length > 0 or num_carry:
        _emit_loop(ctx, avals, init, outs[:num_carry], _invariant_mask(bj.jaxpr, num_consts, num_carry),
                   [const(I64, 0)], test, body)
    _scaled_work(ctx, w0, max(length, 1))
    return [tapes.get(j, o) for j, o in enumerate(outs)] if tapes else None


# --- while_tape / tape_apply ------------------------------------------------------------------
def _check_residuals(what, body_avals, tape_aval):
    res = tape_aval.res_avals
    if len(body_avals) != len(res) or not all(same_aval(a, r) for a, r in zip(body_avals, res)):
        raise LoweringError(f"{what}: the body's residuals do not match the tape type")


# (tape positions: the loop constants in, the tape it records out)
tape_slots[while_tape_p] = lambda e: (set(range(e.params["cond_nconsts"] + e.params["body_nconsts"])),
                                      {len(e.outputs) - 1})
@lower_materialized(while_tape_p, complex_ok=True)
def _while_tape_lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    outs = list(ctx.outs)[:-1]
    w0 = ctx.work
    cj, bj, cc, bc, init = _while_operands(ctx, "while_tape", args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
    nk = len(init)
    avals = [o.aval for o in init]
    if tape_aval.shape:
        raise LoweringError("while_tape: a stack of tapes as its output")
    _check_residuals("while_tape", bj.jaxpr.out_avals[nk:], tape_aval)
    tape = new_slot(ctx, tape_aval, owner=scope(ctx))
    tape.nonzero = True
    size = layout(tape_aval).size
    fields = [k for k, a in enumerate(tape_aval.res_avals) if isinstance(a, TapeAval)]
    n_res = len(tape_aval.res_avals)
    b = ctx.b

    def test(cur, ex):
        (pred,), _ = _emit_body(ctx, cj, cc + cur, [None])
        return ctx.scalar(pred).ref

    def body(cur, dests, ex):
        # (records of zero bytes, e.g. no residuals: only the count is kept)
        rec_ops = record_operands(ctx, tape, reserve(ctx, tape, ex[0]) if size else "null") if n_res else []
        res_dests = [None if k in fields else o for k, o in enumerate(rec_ops)]
        res, token = _emit_body(ctx, bj, bc + cur, dests + res_dests)
        # Tapes the body made (e.g. a scan's stack of inner tapes) move into the record.
        _tape_results(ctx, res, [nk + k for k in fields], {nk + k: rec_ops[k] for k in fields}, token)
        return res[:nk], [_step(b, ex[0])]

    (count,) = _emit_loop(ctx, avals, init, outs, [False] * nk, [const(I64, 0)], test, body)
    b.stmt(f"store i64 {count.ref}, ptr {b.emit(f'getelementptr inbounds i8, ptr {tape.hdr}, i64 {COUNT}')}, align 8")
    _scaled_work(ctx, w0, WHILE_WORK_FACTOR)
    return outs + [tape]


# (tape positions: the tape and the constants)
tape_slots[tape_apply_p] = lambda e: (set(range(1 + e.params["num_consts"])), set())
@lower_materialized(tape_apply_p, complex_ok=True)
def _tape_apply_lower(ctx, tape, *args, body, num_consts, reverse, linear):
    if not isinstance(tape, TapeOperand) or tape.shape:
        raise LoweringError("tape_apply: the tape must be a tape made by this program")
    outs = list(ctx.outs)
    w0 = ctx.work
    bj = prepare(body)
    consts = [_loop_invariant(ctx, o) for o in args[:num_consts]]
    init = list(args[num_consts:])
    _no_tape_carries("tape_apply", init)
    nk = len(init)
    avals = [o.aval for o in init]
    n_res = len(bj.jaxpr.invars) - len(args)
    _check_residuals("tape_apply", bj.jaxpr.in_avals[:n_res], tape.aval)
    b = ctx.b
    data = data_ptr(b, tape.hdr) if tape.size else "null"
    count = Value(records_in(b, count_of(b, tape.hdr)), I64)  # (a zero tape: no records)

    def test(cur, ex):
        return _counter_test(b, ex[0], count)

    def run(cur, dests, ex):
        res_ops = []
        if n_res:
            rec = record_ptr(ctx, data, tape, _position(b, ex[0], count, reverse)) if tape.size else "null"
            res_ops = record_operands(ctx, tape, rec)
        res, _ = _emit_body(ctx, bj, res_ops + consts + cur, dests)
        return res, [_step(b, ex[0])]

    _emit_loop(ctx, avals, init, outs, _invariant_mask(bj.jaxpr, n_res + num_consts, nk), [const(I64, 0)], test, run)
    _scaled_work(ctx, w0, WHILE_WORK_FACTOR)


# (tape positions: the tapes and the constants in, the ys tape out)
tape_slots[tape_scan_p] = lambda e: (set(range(e.params["num_tapes"] + e.params["num_consts"])),
                                     {len(e.outputs) - 1} if e.params["ys_aval"] is not None else set())
@lower_materialized(tape_scan_p, complex_ok=True)
def _tape_scan_lower(ctx, *args, body, num_tapes, num_consts, reverse, linear, ys_aval):
    tapes = list(args[:num_tapes])
    if not all(isinstance(t, TapeOperand) and not t.shape for t in tapes):
        raise LoweringError("tape_scan: the scanned operands must be (unstacked) tapes made by this program")
    outs = list(ctx.outs)
    w0 = ctx.work
    bj = prepare(body)
    consts = [_loop_invariant(ctx, o) for o in args[num_tapes:num_tapes + num_consts]]
    init = list(args[num_tapes + num_consts:])
    _no_tape_carries("tape_scan", init)
    nk = len(init)
    avals = [o.aval for o in init]
    field_avals = [a for t in tapes for a in t.aval.res_avals]
    nf = len(field_avals)
    in_avals = bj.jaxpr.in_avals
    if len(in_avals) != nf + num_consts + nk or not all(same_aval(a, f) for a, f in zip(in_avals, field_avals)):
        raise LoweringError("tape_scan: the body's inputs do not match the tapes' fields")
    ys_res = list(ys_aval.res_avals) if ys_aval is not None else []
    if ys_aval is not None and ys_aval.shape:
        raise LoweringError("tape_scan: a stack of tapes as its output")
    _check_residuals("tape_scan", bj.jaxpr.out_avals[nk:], ys_aval if ys_aval is not None else TapeAval([]))
    b = ctx.b
    readers = [RecordReader(ctx, t) for t in tapes]  # (header loads: before the loop)
    count = joint_count(b, readers)
    if count is None:
        # Only zero tapes: they have no records (as in the interpreter), so the carry
        # passes through and the ys tape is empty.
        for k in range(nk):
            ctx.write(outs[k], init[k], flat=True)
        return outs[:nk] + ([new_slot(ctx, ys_aval, empty=True)] if ys_aval is not None else [])
    n = Value(records_in(b, count), I64)
    out, ydata = None, None
    tape_fields = [k for k, a in enumerate(ys_res) if isinstance(a, TapeAval)]
    if ys_aval is not None:
        # Allocated once, with room for every record (written at index i in any order).
        out = new_slot(ctx, ys_aval, owner=scope(ctx))
        out.nonzero = True
        ydata = reserve_all(ctx, out, n.ref)

    def test(cur, ex):
        return _counter_test(b, ex[0], n)

    def run(cur, dests, ex):
        i = _position(b, ex[0], n, reverse)
        f_ops = [op for r in readers for op in r.operands(ctx, i)]
        y_dests, rec_ops = [], []
        if out is not None:
            rec_ops = record_operands(ctx, out, record_ptr(ctx, ydata, out, i) if out.size else "null")
            y_dests = [None if k in tape_fields else o for k, o in enumerate(rec_ops)]
        res, token = _emit_body(ctx, bj, f_ops + consts + cur, dests + y_dests)
        # Tapes the body made for a record move into it.
        _tape_results(ctx, res, [nk + k for k in tape_fields], {nk + k: rec_ops[k] for k in tape_fields}, token)
        return res[:nk], [_step(b, ex[0])]

    _emit_loop(ctx, avals, init, outs[:nk], _invariant_mask(bj.jaxpr, nf + num_consts, nk), [const(I64, 0)], test, run)
    _scaled_work(ctx, w0, WHILE_WORK_FACTOR)
    if out is None:
        return outs[:nk]
    store_i64(b, out.hdr, COUNT, n.ref)
    return outs[:nk] + [out]
