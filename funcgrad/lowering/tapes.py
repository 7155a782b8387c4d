"""Run-time tapes in compiled code: the tape header, record layouts, growth, moving
tapes between owners, freeing, zero tapes, and the lower rules of tape_split /
tape_zip / tape_empty / tape_zeros. ``control_flow.py`` lowers the loops that make
and read tapes (while_tape, tape_apply, tape_scan) and the constructs that carry them
(cond outputs, scan ``ys``/``xs``, tapes recorded inside another tape's records).

**Header.** A tape value lives in memory as a 32-byte header
``{ptr data, i64 count, i64 capacity, i64 initialised}``; all zeros is the empty tape.
``data`` holds ``capacity`` fixed-size records (one per loop iteration), grown by
doubling with ``realloc``. A stack of tapes (``TapeAval`` with a shape: one tape per
iteration of an enclosing scan) is an array of headers.

**Ownership.** Every heap buffer is owned by exactly one header, and every header is
either a workspace slot (zeroed in the prologue, freed at every exit of the compiled
function) or a field of a record of another tape (freed with that tape). Records that
hold tapes are initialised (their headers zeroed) when first reserved; ``initialised``
counts them, so a buffer that is reused keeps the inner buffers of its old records for
reuse too, and freeing walks exactly the initialised records. So memory stays bounded
by the largest tapes alive at once, whatever the trip counts.

**Making and storing tapes.** Each equation that makes a tape writes it into a slot of
its own (one per place in the program, reused by every execution: a tape made and
consumed inside a loop body costs no allocation after the first iteration). When a
tape must outlive the iteration that made it (a scan's stacked output, a record field
of an outer while_tape, a cond's output), the body's tape is *moved* into that
location by swapping headers: the location gets the new tape, the producer's slot gets
whatever buffer the location held before (to be reused). Tapes a body did not make
itself (its inputs, views) are copied instead, and the empty tape just sets the count.

**Views.** ``tape_split`` and ``tape_zip`` of two halves of one buffer need no copy:
their results read the same records with a subset of the fields (a ``TapeOperand`` is
a header pointer plus the byte offset of each residual in a record and the record
size). Only zipping tapes from different buffers copies records.

**Zero tapes.** ``tape_zeros`` (an instantiated symbolic-zero tangent or cotangent
of a tape) has no records of its own: scanned, zipped or split together with real
tapes it reads as records of zeros, as many as the others have. At run time a header
whose count is ``ZERO`` (-1) is a zero tape (its buffer, if any, is still owned and
freed as usual); a ``TapeOperand`` flagged ``zero`` is one statically (its fields fold
to zero constants). Storing a zero tape only sets the destination's count to ``ZERO``;
a split of a zero tape is two zero tapes (views keep the header); readers of records
(tape_scan, zipping copies) take the length from the other tapes (an unsigned min:
``ZERO`` is the largest count) and read a zero tape's record ``i`` from a record of
zeros (whose tape fields are zero tapes again); when every tape read is zero, there
are no records (a zipping copy gives a zero tape, a tape_scan an empty ``ys`` tape,
as in the interpreter). Loops that test ``i < count`` as signed numbers run no
iteration over a zero tape.

Not lowered (``LoweringError``, so jit runs the interpreter): tapes as loop carries,
and tape_scan over stacks of tapes.
"""
from __future__ import annotations

import hashlib

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.errors import LoweringError
from funcgrad.lowering.builder import FunctionBuilder, Value
from funcgrad.lowering.context import BufferOperand, ConstOperand, Operand, lower_materialized
from funcgrad.tapes import TapeAval, split_tape_avals, tape_empty_p, tape_split_p, tape_zeros_p, tape_zip_p

HDR = 32  # bytes of a tape header
COUNT, CAP, INIT = 8, 16, 24  # byte offsets of the header's fields after ``data``
ZERO = -1  # the count of a zero tape (reads as records of zeros, as many as its partners have)
RECORD_ALIGN = 32
FIRST_RECORDS_BYTES = 1 << 20  # the first allocation holds at most ~1 MiB of records


def _n(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def unstacked(aval: TapeAval) -> TapeAval:
    return aval.update(shape=())


# --- where equations take and make tapes ----------------------------------------------------------
# primitive -> ``slots(eqn) -> (input positions, output positions)`` where the equation may
# take / make a tape (or a stack of tapes): its lower rule handles exactly these. Registered
# next to each lower rule; the compiler refuses a tape anywhere else.
tape_slots: dict = {}


def tape_positions(e):
    rule = tape_slots.get(e.primitive)
    return rule(e) if rule is not None else (set(), set())


# --- record layout -----------------------------------------------------------------------------
class Layout:
    """Canonical record layout of a tape type: ``offsets`` (bytes) of each residual in a
    record, record ``size``, and ``nested``: the residuals that are tapes themselves, as
    (offset, number of headers, unstacked TapeAval)."""

    def __init__(self, res_avals):
        offs, off, nested = [], 0, []
        for a in res_avals:
            if isinstance(a, TapeAval):
                al, nbytes = 8, HDR * _n(a.shape)
            else:
                item = np.dtype(a.dtype).itemsize
                al = min(RECORD_ALIGN, max(item, 1)) if a.shape else item
                nbytes = _n(a.shape) * item
            off = (off + al - 1) // al * al
            offs.append(off)
            if isinstance(a, TapeAval) and nbytes:
                nested.append((off, _n(a.shape), unstacked(a)))
            off += nbytes
        size = (off + 7) // 8 * 8
        if size and any(a.shape for a in res_avals if not isinstance(a, TapeAval)):  # (vector-friendly)
            size = (size + RECORD_ALIGN - 1) // RECORD_ALIGN * RECORD_ALIGN
        self.offsets, self.size, self.nested = offs, size, nested


_layouts: dict = {}


def layout(aval: TapeAval) -> Layout:
    key = aval.res_avals
    hit = _layouts.get(key)
    if hit is None:
        hit = _layouts[key] = Layout(aval.res_avals)
    return hit


def same_aval(a, b) -> bool:
    if isinstance(a, TapeAval) or isinstance(b, TapeAval):
        return isinstance(a, TapeAval) and isinstance(b, TapeAval) and a.same_type(b)
    return tuple(a.shape) == tuple(b.shape) and np.dtype(a.dtype) == np.dtype(b.dtype)


# --- the operand ----------------------------------------------------------------------------------
class TapeOperand(Operand):
    """A tape (or a stack of tapes) in compiled code: ``hdr`` points at its header(s);
    record ``size`` and the byte ``offsets`` of its residuals within a record describe
    how to read the buffer (a view may use a subset of another type's fields).
    ``owner``: the body scope whose equation made this slot (only the maker may move
    it); ``empty``: statically the empty tape; ``zero``: statically a zero tape (its
    header, never written, has count ``ZERO``; any other tape may still be a zero tape
    at run time, unless ``nonzero``: made by a loop that records, never a zero tape)."""

    def __init__(self, aval: TapeAval, hdr: str, offsets, size: int, owner=None, empty=False, zero=False,
                 nonzero=False):
        super().__init__(aval)
        self.hdr, self.offsets, self.size = hdr, list(offsets), size
        self.owner, self.empty, self.zero, self.nonzero = owner, empty, zero, nonzero

    def at(self, idx):
        raise LoweringError("a tape has no elements")

    @property
    def canonical(self) -> bool:
        lay = layout(self.aval)
        return self.offsets == lay.offsets and self.size == lay.size

    def header(self, ctx, j) -> str:
        """Pointer to the header of flat element ``j`` of a stack of tapes."""
        return _gep(ctx.b, self.hdr, ctx.b.imul(j, HDR))

    def element(self, ctx, i) -> "TapeOperand":
        """Tape ``i`` along the leading axis of a stack of tapes (a view)."""
        if not self.shape:
            raise LoweringError("indexing a tape that is not a stack of tapes")
        per = _n(self.shape[1:])
        return TapeOperand(self.aval.update(shape=self.shape[1:]), self.header(ctx, ctx.b.imul(i, per)),
                           self.offsets, self.size, None, self.empty, self.zero, self.nonzero)

    def with_owner(self, owner) -> "TapeOperand":
        return TapeOperand(self.aval, self.hdr, self.offsets, self.size, owner, self.empty, self.zero, self.nonzero)

    def view(self, aval: TapeAval, offsets) -> "TapeOperand":
        """The same records (same header), read with other fields: not owned."""
        return TapeOperand(aval, self.hdr, offsets, self.size, None, self.empty, self.zero, self.nonzero)


def canonical(aval: TapeAval, hdr: str, owner=None) -> TapeOperand:
    lay = layout(aval)
    return TapeOperand(aval, hdr, lay.offsets, lay.size, owner)


def scope(ctx):
    """The body being emitted (tapes its equations make may be moved out of it)."""
    return getattr(ctx, "tape_scope", None)


# --- small IR helpers ------------------------------------------------------------------------------
def _gep(b, ptr: str, off):
    if isinstance(off, int) and off == 0:
        return ptr
    return b.emit(f"getelementptr inbounds i8, ptr {ptr}, i64 {off}")


def _load_i64(b, hdr: str, field: int) -> str:
    return b.emit(f"load i64, ptr {_gep(b, hdr, field)}, align 8")


def store_i64(b, hdr: str, field: int, v) -> None:
    b.stmt(f"store i64 {v}, ptr {_gep(b, hdr, field)}, align 8")


def data_ptr(b, hdr: str) -> str:
    return b.emit(f"load ptr, ptr {hdr}, align 8")


def count_of(b, hdr: str) -> str:
    return _load_i64(b, hdr, COUNT)


def _memset0(b, ptr: str, nbytes, align: int = 8) -> None:
    b.module.declare("llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
    b.stmt(f"call void @llvm.memset.p0.i64(ptr align {align} {ptr}, i8 0, i64 {nbytes}, i1 false)")


def _umin(b, x, y) -> str:
    b.module.declare("llvm.umin.i64", "declare i64 @llvm.umin.i64(i64, i64)")
    return b.emit(f"call i64 @llvm.umin.i64(i64 {x}, i64 {y})")


def _umax(b, x, y) -> str:
    b.module.declare("llvm.umax.i64", "declare i64 @llvm.umax.i64(i64, i64)")
    return b.emit(f"call i64 @llvm.umax.i64(i64 {x}, i64 {y})")


def records_in(b, count) -> str:
    """The number of records to visit for a count (``ZERO``: none)."""
    b.module.declare("llvm.smax.i64", "declare i64 @llvm.smax.i64(i64, i64)")
    return b.emit(f"call i64 @llvm.smax.i64(i64 {count}, i64 0)")


def _memcpy(b, dst: str, src: str, nbytes: int) -> None:
    b.module.declare("llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
    b.stmt(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {nbytes}, i1 false)")


def declare_heap(module) -> None:
    module.declare("realloc", "declare noalias ptr @realloc(ptr, i64) nounwind")
    module.declare("free", "declare void @free(ptr) nounwind")
    module.declare("llvm.umul.with.overflow.i64", "declare {i64, i1} @llvm.umul.with.overflow.i64(i64, i64)")


def _each(ctx, n: int, fn) -> None:
    """``fn(j)`` for j in range(n) (a loop unless n is 0 or 1)."""
    if n == 1:
        fn(0)
    elif n > 1:
        ctx.for_range(n, lambda j, _: fn(j) or [])


# --- freeing -------------------------------------------------------------------------------------------
def free_helper(module, aval: TapeAval) -> str:
    """``void @fg_tape_free_*(ptr headers, i64 n)``: free the buffers of ``n`` tapes of
    (unstacked) type ``aval``, and the tapes held in their initialised records."""
    aval = unstacked(aval)
    name = "fg_tape_free_" + hashlib.sha1(aval.str_short().encode()).hexdigest()[:16]
    if name in module.helpers:
        return "@" + name
    lay = layout(aval)
    inner = [(off, n, free_helper(module, t)) for off, n, t in lay.nested]
    declare_heap(module)
    b = FunctionBuilder(module, prefix="t")
    b.lines.append("entry:")

    def one(j, _):
        h = _gep(b, "%h", b.imul(j, HDR))
        data = data_ptr(b, h)
        if inner:
            init = _load_i64(b, h, INIT)

            def record(i, _):
                rec = _gep(b, data, b.imul(i, lay.size))
                for off, n, fn in inner:
                    b.stmt(f"call void {fn}(ptr {_gep(b, rec, off)}, i64 {n})")
                return []

            b.for_range(init, record)
        b.stmt(f"call void @free(ptr {data})")
        return []

    b.for_range("%n", one)
    b.stmt("ret void")
    text = f"define internal void @{name}(ptr %h, i64 %n) nounwind {{\n{b.text()}\n}}"
    return module.helper(name, lambda: text)


def new_slot(ctx, aval: TapeAval, owner=None, empty=False) -> TapeOperand:
    """Workspace header(s) for a tape (or stack of tapes) made by the current equation:
    zeroed in the prologue, freed at every exit of the compiled function."""
    n = _n(aval.shape)
    slot = ctx.global_slot(max(HDR * n, 8))
    b = ctx.b
    if n:
        b.module.declare("llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
        ctx.prologue.append(f"  call void @llvm.memset.p0.i64(ptr align 8 {slot}, i8 0, i64 {HDR * n}, i1 false)")
    if n and layout(aval).size and not empty:  # (tapes without residuals never allocate)
        fn = free_helper(b.module, aval)
        ctx.cleanup.append(lambda bb: bb.stmt(f"call void {fn}(ptr {slot}, i64 {n})"))
    op = canonical(aval, slot, owner)
    op.empty = empty
    return op


# --- zero tapes -------------------------------------------------------------------------------------
def _set_zero_helper(module) -> str:
    """``void @fg_tapes_set_zero(ptr headers, i64 n)``: ``n`` headers of zero tapes
    (no buffer, count ``ZERO``)."""
    name = "fg_tapes_set_zero"
    text = (f"define internal void @{name}(ptr %h, i64 %n) nounwind {{\n"
            "entry:\n  br label %loop\n"
            "loop:\n  %i = phi i64 [0, %entry], [%j, %body]\n  %go = icmp slt i64 %i, %n\n"
            "  br i1 %go, label %body, label %done\n"
            f"body:\n  %off = mul nuw nsw i64 %i, {HDR}\n  %p = getelementptr inbounds i8, ptr %h, i64 %off\n"
            f"  store <4 x i64> <i64 0, i64 {ZERO}, i64 0, i64 0>, ptr %p, align 8\n"
            "  %j = add nuw nsw i64 %i, 1\n  br label %loop\n"
            "done:\n  ret void\n}")
    return module.helper(name, lambda: text)


def _function_cache(ctx, name: str) -> dict:
    cache = getattr(ctx, name, None)
    if cache is None:
        cache = {}
        setattr(ctx, name, cache)
    return cache


def zero_tape(ctx, aval: TapeAval) -> TapeOperand:
    """A static zero tape (or stack of zero tapes) of type ``aval``: header(s) with count
    ``ZERO``, set in the prologue and never written (not freed: they own nothing)."""
    cache = _function_cache(ctx, "tape_zero_slots")
    key = (aval.res_avals, aval.batch, aval.shape, aval.inner)
    slot = cache.get(key)
    if slot is None:
        n = _n(aval.shape)
        slot = cache[key] = ctx.global_slot(max(HDR * n, 8))
        if n:
            ctx.prologue.append(f"  call void {_set_zero_helper(ctx.b.module)}(ptr {slot}, i64 {n})")
    op = canonical(aval, slot)
    op.zero = True
    return op


def zero_record(ctx, tape: TapeOperand) -> str:
    """A record of zeros laid out like ``tape``'s records (its tape fields are zero
    tapes), set in the prologue and never written."""
    nested = tuple((off, _n(a.shape)) for a, off in zip(tape.aval.res_avals, tape.offsets)
                   if isinstance(a, TapeAval) and _n(a.shape))
    cache = _function_cache(ctx, "tape_zero_records")
    key = (tape.size, nested)
    rec = cache.get(key)
    if rec is None:
        rec = cache[key] = ctx.global_slot(max(tape.size, 8))
        b = ctx.b
        b.module.declare("llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
        ctx.prologue.append(
            f"  call void @llvm.memset.p0.i64(ptr align 8 {rec}, i8 0, i64 {max(tape.size, 8)}, i1 false)"
        )
        for off, n in nested:
            p = b.tmp()
            ctx.prologue.append(f"  {p} = getelementptr inbounds i8, ptr {rec}, i64 {off}")
            ctx.prologue.append(f"  call void {_set_zero_helper(b.module)}(ptr {p}, i64 {n})")
    return rec


def zero_fields(ctx, aval: TapeAval) -> list:
    """The fields of a record of a zero tape: zero constants, and zero tapes."""
    return [zero_tape(ctx, a) if isinstance(a, TapeAval) else ConstOperand(ShapedArray(a.shape, a.dtype), 0)
            for a in aval.res_avals]


# --- reading records --------------------------------------------------------------------------------
def record_operands(ctx, tape: TapeOperand, rec: str) -> list:
    """The fields of the record at ``rec``: arrays in place, tapes as their headers."""
    b = ctx.b
    ops = []
    for a, off in zip(tape.aval.res_avals, tape.offsets):
        p = _gep(b, rec, off)
        ops.append(canonical(a, p) if isinstance(a, TapeAval) else BufferOperand(ctx, ShapedArray(a.shape, a.dtype), p))
    return ops


class RecordReader:
    """Reads the records of one (unstacked) tape inside a loop; made before the loop.
    A zero tape (statically, or at run time: count ``ZERO``) reads as records of
    zeros. ``count``: the tape's count (None for a static zero tape)."""

    def __init__(self, ctx, tape: TapeOperand, hdr: str | None = None):
        self.tape, self.count = tape, None
        if tape.zero:
            return
        b = ctx.b
        hdr = tape.hdr if hdr is None else hdr
        self.count = count_of(b, hdr)
        if tape.size:
            self.data = data_ptr(b, hdr)
            if not tape.nonzero:
                self.is_zero = b.emit(f"icmp eq i64 {self.count}, {ZERO}")
                self.zrec = zero_record(ctx, tape)

    def pointer(self, ctx, i) -> str:
        """Pointer to record ``i`` (or to the record of zeros)."""
        t = self.tape
        if not t.size:
            return "null"
        b = ctx.b
        p = _gep(b, self.data, b.emit(f"mul nuw nsw i64 {i}, {t.size}"))
        if t.nonzero:
            return p
        return b.emit(f"select i1 {self.is_zero}, ptr {self.zrec}, ptr {p}")

    def operands(self, ctx, i) -> list:
        if self.tape.zero:
            return zero_fields(ctx, self.tape.aval)
        return record_operands(ctx, self.tape, self.pointer(ctx, i))


def joint_count(b, readers):
    """The count of tapes read together: the unsigned min of their counts (``ZERO``,
    the largest, when every one is a zero tape at run time); None when all are static
    zero tapes."""
    count = None
    for r in readers:
        if r.count is not None:
            count = r.count if count is None else _umin(b, count, r.count)
    return count


# --- growing ---------------------------------------------------------------------------------------
def _grow(ctx, hdr: str, need: str, size: int, doubling: bool) -> None:
    """Make the buffer of ``hdr`` hold at least ``need`` (> capacity) records."""
    b = ctx.b
    cap = _load_i64(b, hdr, CAP)
    if doubling:
        twice = b.emit(f"shl i64 {cap}, 1")
        is0 = b.emit(f"icmp eq i64 {cap}, 0")
        first = max(1, min(16, FIRST_RECORDS_BYTES // size))
        newcap = b.emit(f"select i1 {is0}, i64 {first}, i64 {twice}")
        newcap = b.emit(f"call i64 @llvm.umax.i64(i64 {newcap}, i64 {need})")
        b.module.declare("llvm.umax.i64", "declare i64 @llvm.umax.i64(i64, i64)")
    else:
        newcap = need
    prod = b.emit(f"call {{i64, i1}} @llvm.umul.with.overflow.i64(i64 {newcap}, i64 {size})")
    nbytes = b.emit(f"extractvalue {{i64, i1}} {prod}, 0")
    ovf = b.emit(f"extractvalue {{i64, i1}} {prod}, 1")
    alloc, ok = b.label("tape_alloc"), b.label("tape_grown")
    b.cbr(ovf, "fg_fail_oom", alloc)
    b.start_block(alloc)
    # On failure realloc leaves the old buffer alone: the header still owns it and the
    # exit path frees it.
    new = b.emit(f"call ptr @realloc(ptr {data_ptr(b, hdr)}, i64 {nbytes})")
    null = b.emit(f"icmp eq ptr {new}, null")
    b.cbr(null, "fg_fail_oom", ok)
    b.start_block(ok)
    b.stmt(f"store ptr {new}, ptr {hdr}, align 8")
    store_i64(b, hdr, CAP, newcap)
    ctx.fail_used = True


def _ensure(ctx, hdr: str, need: str, size: int, doubling: bool) -> None:
    b = ctx.b
    cap = _load_i64(b, hdr, CAP)
    full = b.emit(f"icmp ugt i64 {need}, {cap}")
    declare_heap(b.module)
    ctx.if_then(full, lambda: _grow(ctx, hdr, need, size, doubling))


def reserve(ctx, tape: TapeOperand, i: Value) -> str:
    """Pointer to record ``i`` of ``tape`` (canonical, unstacked) after making room for
    it; records holding tapes get zeroed headers the first time they are used."""
    b = ctx.b
    lay = layout(tape.aval)
    need = b.emit(f"add nuw nsw i64 {i.ref}, 1")
    _ensure(ctx, tape.hdr, need, lay.size, doubling=True)
    rec = _gep(b, data_ptr(b, tape.hdr), b.emit(f"mul nuw nsw i64 {i.ref}, {lay.size}"))
    if lay.nested:
        fresh = b.emit(f"icmp uge i64 {i.ref}, {_load_i64(b, tape.hdr, INIT)}")

        def init():
            for off, n, _ in lay.nested:
                _memset0(b, _gep(b, rec, off), HDR * n)
            store_i64(b, tape.hdr, INIT, need)

        ctx.if_then(fresh, init)
    return rec


def reserve_all(ctx, tape: TapeOperand, n: str) -> str:
    """Make room for records ``0 .. n-1`` of ``tape`` (canonical, unstacked; grown to
    exactly ``n`` records if it must grow), with the headers of their tape fields
    initialised; returns the data pointer."""
    return _reserve_all(ctx, tape.hdr, layout(tape.aval), n)


def _reserve_all(ctx, hdr: str, lay: Layout, n: str) -> str:
    b = ctx.b
    if not lay.size:
        return "null"
    _ensure(ctx, hdr, n, lay.size, doubling=False)
    data = data_ptr(b, hdr)
    if lay.nested:
        init = _load_i64(b, hdr, INIT)

        def fresh(i, _):
            rec = _gep(b, data, b.emit(f"mul nuw nsw i64 {i}, {lay.size}"))
            for off, k, _t in lay.nested:
                _memset0(b, _gep(b, rec, off), HDR * k)
            return []

        ctx.for_range(n, fresh, start=init)
        store_i64(b, hdr, INIT, _umax(b, init, n))
    return data


def record_ptr(ctx, data: str, tape: TapeOperand, i) -> str:
    return _gep(ctx.b, data, ctx.b.emit(f"mul nuw nsw i64 {i}, {tape.size}"))


# --- storing a tape into an owned location ---------------------------------------------------------
def store_tapes(ctx, pairs, body_scope) -> None:
    """Write each ``(dest, src)``: ``dest`` a canonical location that owns its buffers
    (a slot, a stack element, a record field; same type as ``src``). A tape made by
    the body (``src.owner is body_scope``) is moved in by swapping headers; the empty
    tape and a static zero tape set the count; anything else is copied (a zero tape at
    run time copies as one). Copies come first, so they read sources before any swap
    moves them."""
    empties, zeros, copies, swaps, seen = [], [], [], [], set()
    for dest, src in pairs:
        if not same_aval(dest.aval, src.aval):
            raise LoweringError(f"storing a tape of type {src.aval.str_short()} into {dest.aval.str_short()}")
        if src.empty:
            empties.append(dest)
        elif src.zero:
            zeros.append(dest)
        elif src.owner is not None and src.owner is body_scope and src.canonical and id(src) not in seen:
            seen.add(id(src))
            swaps.append((dest, src))
        else:
            copies.append((dest, src))
    b = ctx.b
    for dest in empties:
        _each(ctx, _n(dest.shape), lambda j, d=dest: store_i64(b, d.header(ctx, j), COUNT, 0))
    for dest in zeros:
        _each(ctx, _n(dest.shape), lambda j, d=dest: store_i64(b, d.header(ctx, j), COUNT, ZERO))
    for dest, src in copies:
        idx = list(range(len(src.aval.res_avals)))
        _each(ctx, _n(dest.shape), lambda j, d=dest, s=src: copy_records(
            ctx, d.header(ctx, j), d.aval, [(s.header(ctx, j), s, idx)]))
    for dest, src in swaps:
        _each(ctx, _n(dest.shape), lambda j, d=dest, s=src: _swap(b, d.header(ctx, j), s.header(ctx, j)))


def _swap(b, p: str, q: str) -> None:
    x = b.emit(f"load <4 x i64>, ptr {p}, align 8")
    y = b.emit(f"load <4 x i64>, ptr {q}, align 8")
    b.stmt(f"store <4 x i64> {y}, ptr {p}, align 8")
    b.stmt(f"store <4 x i64> {x}, ptr {q}, align 8")


def copy_records(ctx, dest_hdr: str, dest_aval: TapeAval, parts) -> None:
    """Fill the tape at ``dest_hdr`` (canonical, owns its buffer, which it reuses) with
    records whose fields are, in order, the fields ``idx`` of each source
    ``(header, TapeOperand giving the layout, idx)``; as many records as the shortest
    source has. Zero tapes among the sources give zeros (and no length); when all are
    zero tapes the result is a zero tape. Tapes held in the records are copied too
    (into the destination records' own tapes, whose buffers are reused)."""
    lay = layout(unstacked(dest_aval))
    b = ctx.b
    readers = [RecordReader(ctx, src, hdr) for hdr, src, _ in parts]
    count = joint_count(b, readers)
    if count is None:
        store_i64(b, dest_hdr, COUNT, ZERO)
        return
    fields = []  # (dest offset, part number, source offset, bytes, (headers, unstacked type) of a tape field)
    k = 0
    for p, (_, src, idx) in enumerate(parts):
        for r in idx:
            a = src.aval.res_avals[r]
            if isinstance(a, TapeAval):
                fields.append((lay.offsets[k], p, src.offsets[r], 0, (_n(a.shape), unstacked(a))))
            else:
                fields.append((lay.offsets[k], p, src.offsets[r], _n(a.shape) * np.dtype(a.dtype).itemsize, None))
            k += 1
    if lay.size and any(f[3] or (f[4] and f[4][0]) for f in fields):
        n = records_in(b, count)
        ddata = _reserve_all(ctx, dest_hdr, lay, n)

        def rec(i, _):
            drec = _gep(b, ddata, b.emit(f"mul nuw nsw i64 {i}, {lay.size}"))
            srecs = [None if r.tape.zero else r.pointer(ctx, i) for r in readers]
            for doff, p, soff, nbytes, tape in fields:
                if tape is not None:
                    _each(ctx, tape[0], lambda j, doff=doff, p=p, soff=soff, t=tape[1]: _copy_field(
                        ctx, _gep(b, drec, b.iadd(doff, b.imul(j, HDR))),
                        None if srecs[p] is None else _gep(b, srecs[p], b.iadd(soff, b.imul(j, HDR))), t))
                elif not nbytes:
                    continue
                elif srecs[p] is None:
                    _memset0(b, _gep(b, drec, doff), nbytes, align=1)
                else:
                    _memcpy(b, _gep(b, drec, doff), _gep(b, srecs[p], soff), nbytes)
            return []

        ctx.for_range(n, rec)
    store_i64(b, dest_hdr, COUNT, count)


def _copy_field(ctx, dest_hdr: str, src_hdr, aval: TapeAval) -> None:
    """Copy the tape held in a record field (``src_hdr`` None: a zero tape)."""
    if src_hdr is None:
        store_i64(ctx.b, dest_hdr, COUNT, ZERO)
        return
    copy_records(ctx, dest_hdr, aval, [(src_hdr, canonical(aval, src_hdr), list(range(len(aval.res_avals))))])


# --- tape_empty / tape_split / tape_zip -------------------------------------------------------------
def _split_indices(aval: TapeAval, n: int):
    r, f = len(aval.res_avals), len(aval.fields)
    masks = list(range(f, r))  # a batched tape's records end with the lanes' masks: both keep them
    return list(range(n)) + masks, list(range(n, f)) + masks


tape_slots[tape_empty_p] = lambda e: (set(), {0})
@lower_materialized(tape_empty_p, complex_ok=True)
def _tape_empty_lower(ctx, *, aval):
    # A zeroed slot nobody ever writes to: reads see count 0; storing it elsewhere
    # only sets the destination's count.
    return [new_slot(ctx, aval, empty=True)]


tape_slots[tape_split_p] = lambda e: ({0}, {0, 1})
@lower_materialized(tape_split_p, complex_ok=True)
def _tape_split_lower(ctx, tape, *, n):
    if not isinstance(tape, TapeOperand):
        raise LoweringError("tape_split: the operand is not a tape of this program")
    a_aval, b_aval = split_tape_avals(tape.aval, n)
    ia, ib = _split_indices(tape.aval, n)
    # Views of the same records (no copy); whoever stores them elsewhere copies. (The
    # halves of a zero tape are zero tapes: static ones by the flag, run-time ones by
    # the shared header's count.)
    return [tape.view(a_aval, [tape.offsets[k] for k in ia]), tape.view(b_aval, [tape.offsets[k] for k in ib])]


tape_slots[tape_zip_p] = lambda e: ({0, 1}, {0})
@lower_materialized(tape_zip_p, complex_ok=True)
def _tape_zip_lower(ctx, a, b):
    if not (isinstance(a, TapeOperand) and isinstance(b, TapeOperand)):
        raise LoweringError("tape_zip: the operands are not tapes of this program")
    out_aval = ctx.out_aval
    ra, rb = len(a.aval.res_avals), len(b.aval.res_avals)
    ia, ib = list(range(len(a.aval.fields))), list(range(len(b.aval.fields)))
    tail = list(range(len(a.aval.fields), ra))  # the lanes' masks (one per vmap level), once, last
    del rb
    if a.empty or b.empty:
        return [new_slot(ctx, out_aval, empty=True)]
    if a.zero and b.zero:
        return [zero_tape(ctx, out_aval)]
    if not (a.zero or b.zero) and a.hdr == b.hdr and a.size == b.size:
        # Two views of one buffer (tape_split's halves): a view again.
        offs = [a.offsets[k] for k in ia] + [b.offsets[k] for k in ib] + [a.offsets[k] for k in tail]
        return [TapeOperand(out_aval, a.hdr, offs, a.size, nonzero=a.nonzero and b.nonzero)]
    out = new_slot(ctx, out_aval, owner=scope(ctx))
    out.nonzero = a.nonzero or b.nonzero  # (its length is that of a tape that is never zero)
    _each(ctx, _n(out_aval.shape), lambda j: copy_records(
        ctx, out.header(ctx, j), out_aval,
        [(a.header(ctx, j), a, ia), (b.header(ctx, j), b, ib), (a.header(ctx, j), a, tail)]))
    return [out]


tape_slots[tape_zeros_p] = lambda e: (set(), {0})
@lower_materialized(tape_zeros_p, complex_ok=True)
def _tape_zeros_lower(ctx, *, aval):
    return [zero_tape(ctx, aval)]
