"""Control flow in compiled code (``transforms/control_flow.py``): cond, while, scan,
and reverse mode through while loops (while_tape / tape_apply).

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
  doubling with ``realloc``. The buffer's pointer and capacity live in a workspace
  slot, so a tape made inside another loop reuses its buffer; every exit of the
  compiled function frees it. A failed allocation returns status 2 (MemoryError).
  Nothing is ever truncated.
- ``tape_apply``: a loop over the tape's records, forwards or backwards.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.avals import ShapedArray, TapeAval
from funcgrad.core.ir import ClosedJaxpr, Var
from funcgrad.errors import LoweringError
from funcgrad.lowering import compiler
from funcgrad.lowering.builder import BOOL, I32, I64, Value, const
from funcgrad.lowering.context import BufferOperand, ConstOperand, Operand, RegOperand, lower_materialized
from funcgrad.transforms import control_flow as cf

_INLINE = {"jit_call", "custom_jvp_call", "custom_vjp_call", "checkpoint_call"}
_prepared: dict = {}
WHILE_WORK_FACTOR = 16  # work estimate for a loop whose trip count is unknown
RECORD_ALIGN = 32


# --- sub-jaxprs --------------------------------------------------------------------------
def prepare(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with nested calls inlined and CSE/DCE applied (memoised)."""
    hit = _prepared.get(id(closed))
    if hit is not None and hit[0] is closed:
        return hit[1]
    c = closed
    if any(e.primitive.name in _INLINE for e in c.jaxpr.eqns):
        from funcgrad.transforms.jit import inline_calls

        c = inline_calls(c)
    out = ClosedJaxpr(compiler.simplify(c.jaxpr), c.consts)
    if len(_prepared) > 1024:
        _prepared.clear()
    _prepared[id(closed)] = (closed, out)
    return out


def sub_jaxprs(e) -> list:
    """[(description, prepared closed jaxpr)] of a control-flow equation."""
    name, p = e.primitive.name, e.params
    if name == "cond":
        return [(f"branch {k}", prepare(br)) for k, br in enumerate(p["branches"])]
    if name in ("while", "while_tape"):
        return [("cond_fun", prepare(p["cond_jaxpr"])), ("body", prepare(p["body_jaxpr"]))]
    if name == "scan":
        return [("body", prepare(p["jaxpr"]))]
    if name == "tape_apply":
        return [("body", prepare(p["body"]))]
    return []


def tape_positions(e):
    """(input positions, output positions) where an equation may take/make a tape."""
    name = e.primitive.name
    if name == "while_tape":
        return (), {len(e.outputs) - 1}
    if name == "tape_apply":
        return {0}, ()
    return (), ()


def _emit(ctx, closed: ClosedJaxpr, in_ops, dests):
    return ctx.scoped(lambda: compiler.emit_jaxpr(ctx, closed.jaxpr, closed.consts, in_ops, dests))


def _loop_invariant(ctx, op: Operand) -> Operand:
    """``op`` in a form that is cheap to read in every iteration of a loop: fused
    values are computed once, before the loop."""
    if op.is_buffer or isinstance(op, (ConstOperand, RegOperand)):
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
@lower_materialized(cf.cond_p)
def _cond_lower(ctx, index, *ops, branches):
    outs = list(ctx.outs)
    brs = [prepare(br) for br in branches]
    n = len(brs)
    if isinstance(index, ConstOperand) or n == 1:
        k = 0 if n == 1 else int(np.clip(_const_int(index), 0, n - 1))
        _emit(ctx, brs[k], list(ops), outs)
        return
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
        _emit(ctx, brs[k], list(ops), outs)
        b.br(join)
    b.start_block(join)


def _const_int(op: ConstOperand) -> int:
    ref = op.value.ref
    return int(ref == "true") if op.dtype == BOOL else int(ref)


# --- while ------------------------------------------------------------------------------------
@lower_materialized(cf.while_p)
def _while_lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    outs = list(ctx.outs)
    w0 = ctx.work
    cj, bj = prepare(cond_jaxpr), prepare(body_jaxpr)
    cc = [_loop_invariant(ctx, o) for o in args[:cond_nconsts]]
    bc = [_loop_invariant(ctx, o) for o in args[cond_nconsts:cond_nconsts + body_nconsts]]
    init = list(args[cond_nconsts + body_nconsts:])
    avals = [o.aval for o in init]

    def test(cur, ex):
        (pred,) = compiler.emit_jaxpr(ctx, cj.jaxpr, cj.consts, cc + cur, [None])
        return ctx.scalar(pred).ref

    def body(cur, dests, ex):
        return compiler.emit_jaxpr(ctx, bj.jaxpr, bj.consts, bc + cur, dests), []

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


@lower_materialized(cf.scan_p)
def _scan_lower(ctx, *args, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    outs = list(ctx.outs)
    w0 = ctx.work
    bj = prepare(jaxpr)
    consts = [_loop_invariant(ctx, o) for o in args[:num_consts]]
    init = list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])
    avals = [o.aval for o in init]
    b = ctx.b
    ys = outs[num_carry:]

    def test(cur, ex):
        return _counter_test(b, ex[0], length)

    def body(cur, dests, ex):
        i = _position(b, ex[0], length, reverse)
        x_ops = [_slice(ctx, x, i) for x in xs]
        y_dests = [_slice(ctx, y, i) for y in ys]
        res = compiler.emit_jaxpr(ctx, bj.jaxpr, bj.consts, consts + cur + x_ops, dests + y_dests)
        return res[:num_carry], [_step(b, ex[0])]

    if length > 0 or num_carry:
        _emit_loop(ctx, avals, init, outs[:num_carry], _invariant_mask(bj.jaxpr, num_consts, num_carry),
                   [const(I64, 0)], test, body)
    _scaled_work(ctx, w0, max(length, 1))


# --- while_tape / tape_apply ------------------------------------------------------------------
def _record_layout(res_avals):
    """(byte offset of each residual in a record, record size)."""
    offs, off = [], 0
    for a in res_avals:
        al = min(RECORD_ALIGN, max(np.dtype(a.dtype).itemsize, 1)) if a.shape else np.dtype(a.dtype).itemsize
        off = (off + al - 1) // al * al
        offs.append(off)
        off += _size(a) * np.dtype(a.dtype).itemsize
    size = (off + 7) // 8 * 8
    if size and any(a.shape for a in res_avals):
        size = (size + RECORD_ALIGN - 1) // RECORD_ALIGN * RECORD_ALIGN
    return offs, size


class TapeOperand(Operand):
    """A run-time tape in compiled code: its slot ``{ptr data, i64 capacity}`` in the
    workspace and its number of records."""

    def __init__(self, aval, slot: str, count: Value, offsets, size):
        super().__init__(aval)
        self.slot, self.count, self.offsets, self.size = slot, count, offsets, size

    def at(self, idx):
        raise LoweringError("a tape has no elements")


def _declare_heap(module):
    module.declare("realloc", "declare noalias ptr @realloc(ptr, i64) nounwind")
    module.declare("free", "declare void @free(ptr) nounwind")
    module.declare("llvm.umul.with.overflow.i64", "declare {i64, i1} @llvm.umul.with.overflow.i64(i64, i64)")


def _tape_slot(ctx) -> str:
    """A workspace slot {ptr data = null, i64 capacity = 0}, freed at every exit."""
    slot = ctx.global_slot(16)
    capp = ctx.b.tmp()
    ctx.prologue += [f"  store ptr null, ptr {slot}, align 8",
                     f"  {capp} = getelementptr inbounds i8, ptr {slot}, i64 8",
                     f"  store i64 0, ptr {capp}, align 8"]

    def free(b):
        p = b.emit(f"load ptr, ptr {slot}, align 8")
        b.stmt(f"call void @free(ptr {p})")

    ctx.cleanup.append(free)
    return slot


def _reserve(ctx, slot: str, count: Value, size: int) -> str:
    """Make room for record ``count`` (doubling the capacity); return its pointer."""
    b = ctx.b
    capp = b.emit(f"getelementptr inbounds i8, ptr {slot}, i64 8")
    cap = b.emit(f"load i64, ptr {capp}, align 8")
    full = b.emit(f"icmp uge i64 {count.ref}, {cap}")
    grow, have = b.label("tape_grow"), b.label("tape_ok")
    b.cbr(full, grow, have)
    b.start_block(grow)
    twice = b.emit(f"shl i64 {cap}, 1")
    is0 = b.emit(f"icmp eq i64 {cap}, 0")
    first = max(1, min(16, (1 << 20) // size))  # records first allocated: at most ~1 MiB
    newcap = b.emit(f"select i1 {is0}, i64 {first}, i64 {twice}")
    prod = b.emit(f"call {{i64, i1}} @llvm.umul.with.overflow.i64(i64 {newcap}, i64 {size})")
    nbytes = b.emit(f"extractvalue {{i64, i1}} {prod}, 0")
    ovf = b.emit(f"extractvalue {{i64, i1}} {prod}, 1")
    old = b.emit(f"load ptr, ptr {slot}, align 8")
    alloc, ok = b.label("tape_alloc"), b.label("tape_grown")
    b.cbr(ovf, "fg_fail_oom", alloc)
    b.start_block(alloc)
    new = b.emit(f"call ptr @realloc(ptr {old}, i64 {nbytes})")
    null = b.emit(f"icmp eq ptr {new}, null")
    b.cbr(null, "fg_fail_oom", ok)
    b.start_block(ok)
    b.stmt(f"store ptr {new}, ptr {slot}, align 8")
    b.stmt(f"store i64 {newcap}, ptr {capp}, align 8")
    b.br(have)
    b.start_block(have)
    ctx.fail_used = True
    data = b.emit(f"load ptr, ptr {slot}, align 8")
    off = b.emit(f"mul nuw nsw i64 {count.ref}, {size}")
    return b.emit(f"getelementptr inbounds i8, ptr {data}, i64 {off}")


def _record_operands(ctx, rec: str, avals, offsets):
    b = ctx.b
    return [BufferOperand(ctx, ShapedArray(a.shape, a.dtype), b.emit(f"getelementptr inbounds i8, ptr {rec}, i64 {o}"))
            for a, o in zip(avals, offsets)]


@lower_materialized(cf.while_tape_p)
def _while_tape_lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    outs = list(ctx.outs)[:-1]
    w0 = ctx.work
    cj, bj = prepare(cond_jaxpr), prepare(body_jaxpr)
    cc = [_loop_invariant(ctx, o) for o in args[:cond_nconsts]]
    bc = [_loop_invariant(ctx, o) for o in args[cond_nconsts:cond_nconsts + body_nconsts]]
    init = list(args[cond_nconsts + body_nconsts:])
    nk = len(init)
    avals = [o.aval for o in init]
    res_avals = list(tape_aval.res_avals)
    body_res = bj.jaxpr.out_avals[nk:]
    if len(body_res) != len(res_avals) or any(tuple(a.shape) != tuple(r.shape) or a.dtype != r.dtype
                                               for a, r in zip(body_res, res_avals)):
        raise LoweringError("while_tape: the body's residuals do not match the tape type")
    offsets, size = _record_layout(res_avals)
    b = ctx.b
    slot = _tape_slot(ctx) if size else None
    if size:
        _declare_heap(b.module)

    def test(cur, ex):
        (pred,) = compiler.emit_jaxpr(ctx, cj.jaxpr, cj.consts, cc + cur, [None])
        return ctx.scalar(pred).ref

    def body(cur, dests, ex):
        res_dests = []
        if size:
            rec = _reserve(ctx, slot, ex[0], size)
            res_dests = _record_operands(ctx, rec, res_avals, offsets)
        res = compiler.emit_jaxpr(ctx, bj.jaxpr, bj.consts, bc + cur, dests + res_dests)
        return res[:nk], [_step(b, ex[0])]

    (count,) = _emit_loop(ctx, avals, init, outs, [False] * nk, [const(I64, 0)], test, body)
    _scaled_work(ctx, w0, WHILE_WORK_FACTOR)
    return outs + [TapeOperand(tape_aval, slot, count, offsets, size)]


@lower_materialized(cf.tape_apply_p)
def _tape_apply_lower(ctx, tape, *args, body, num_consts, reverse, linear):
    if not isinstance(tape, TapeOperand):
        raise LoweringError("tape_apply: the tape must come from a while_tape of the same program")
    outs = list(ctx.outs)
    w0 = ctx.work
    bj = prepare(body)
    consts = [_loop_invariant(ctx, o) for o in args[:num_consts]]
    init = list(args[num_consts:])
    nk = len(init)
    avals = [o.aval for o in init]
    res_avals = list(tape.aval.res_avals)
    n_res = len(bj.jaxpr.invars) - len(args)
    body_res = bj.jaxpr.in_avals[:n_res]
    if n_res != len(res_avals) or any(tuple(a.shape) != tuple(r.shape) or a.dtype != r.dtype
                                      for a, r in zip(body_res, res_avals)):
        raise LoweringError("tape_apply: the body's residual inputs do not match the tape type")
    b = ctx.b
    data = b.emit(f"load ptr, ptr {tape.slot}, align 8") if tape.size else None
    count = tape.count

    def test(cur, ex):
        return _counter_test(b, ex[0], count)

    def run(cur, dests, ex):
        res_ops = []
        if tape.size:
            i = _position(b, ex[0], count, reverse)
            off = b.emit(f"mul nuw nsw i64 {i}, {tape.size}")
            rec = b.emit(f"getelementptr inbounds i8, ptr {data}, i64 {off}")
            res_ops = _record_operands(ctx, rec, res_avals, tape.offsets)
        res = compiler.emit_jaxpr(ctx, bj.jaxpr, bj.consts, res_ops + consts + cur, dests)
        return res, [_step(b, ex[0])]

    _emit_loop(ctx, avals, init, outs, _invariant_mask(bj.jaxpr, n_res + num_consts, nk), [const(I64, 0)], test, run)
    _scaled_work(ctx, w0, WHILE_WORK_FACTOR)
