"""Splitting a large loop nest across funcgrad's thread pool (``threadpool.py``).

``outline(ctx, shape, body, flat)`` emits the nest's body into a function of its own,
``@fg_par<k>_body(lo, hi, free values...)``, looping over ``[lo, hi)`` of the outer
dimension (the flat offset for flat nests). Values the body reads from the enclosing
function (buffer pointers, scalars computed before the nest) become its parameters:
they are found in the body's text and typed from their definitions. The enclosing
function then either calls the body once over the whole range (small nests) or stores
the values in an environment and calls ``@fg_par_run`` on a trampoline running chunk
``c`` as ``body(c * grain, min((c + 1) * grain, n), ...)``.

What is guaranteed: only nests in which every output element is computed by exactly one
iteration of the outer loop, in the same order as the single-threaded code, are split
(elementwise maps written to a buffer, reductions over trailing axes with kept leading
axes). Chunk boundaries are compile-time constants (never the thread count), so results
are bitwise identical for every ``FUNCGRAD_NUM_THREADS`` and every schedule. Nests in
control-flow bodies, nests that may call back into Python (``debug.print``,
``pure_callback``) or leave through a failure exit stay single-threaded.
"""
from __future__ import annotations

import re

import numpy as np

from funcgrad.lowering import threadpool

MIN_ELEMENTS = 4096  # smaller nests are never considered
MIN_NS = 60_000  # estimated single-thread time above which a nest is split
MAX_CHUNKS = 64  # chunks per nest: enough for dynamic balance on a shared machine
_NS_PER_INSTR, _NS_PER_VECMATH = 0.12, 1.5  # a rough per-element cost model (Zen 3)

_NAME = re.compile(r"%[A-Za-z_.$][\w.$]*")
IR_DEF = re.compile(r"^\s*(%[\w.$]+) = (.*)$")
IR_LABEL = re.compile(r"^([\w.$]+):")
_SCALARS = {"ptr", "i1", "i8", "i16", "i32", "i64", "float", "double"}
_BINARY = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor",
           "fadd", "fsub", "fmul", "fdiv", "frem", "fneg"}
_FLAGS = {"nuw", "nsw", "exact", "disjoint", "fast", "reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn",
          "inbounds"}
_UNSAFE = ("fg_host_callback", "label %fg_fail", "PyEval_", "PyGILState")


def result_type(rhs: str) -> str | None:
    """The type of an instruction's result, from its text (None: not understood)."""
    words = rhs.replace(",", " ").split()
    op = words[0]
    ty = None
    if op in ("getelementptr", "alloca", "inttoptr"):
        ty = "ptr"
    elif op in ("icmp", "fcmp"):
        ty = "i1" if "<" not in rhs else None
    elif op in ("load", "phi") or op in _BINARY:
        rest = [w for w in words[1:] if w not in _FLAGS and w not in ("atomic", "volatile")]
        ty = rest[0] if rest else None
    elif op == "select":
        m = re.match(r"select i1 [^,]+, (\S+) ", rhs)
        ty = m.group(1) if m else None
    elif op == "call":
        m = re.match(r"call (?:[a-z]+ )*(\S+) @", rhs)
        ty = m.group(1) if m else None
    elif " to " in rhs:
        ty = rhs.rsplit(" to ", 1)[1].split()[0]
    return ty if ty in _SCALARS else None


def _free_values(body_lines, known: dict) -> list | None:
    """[(name, type)] of the values ``body_lines`` reads but does not define, or None
    if one of them cannot be typed."""
    defined = {"%lo", "%hi"}
    for line in body_lines:
        m = IR_DEF.match(line)
        if m:
            defined.add(m.group(1))
        m = IR_LABEL.match(line)
        if m:
            defined.add("%" + m.group(1))
    free = []
    for name in dict.fromkeys(_NAME.findall("\n".join(body_lines))):
        if name in defined:
            continue
        ty = known.get(name)
        if ty is None:
            return None
        free.append((name, ty))
    return free


def _known_types(ctx, parent_lines) -> dict:
    known = {"%ws": "ptr", **getattr(ctx, "known_types", {})}  # (the core function's, in a unit)
    for k in range(256):
        known[f"%a{k}"] = known[f"%o{k}"] = "ptr"
    for line in list(parent_lines) + list(ctx.prologue):
        m = IR_DEF.match(line)
        if m:
            ty = result_type(m.group(2))
            if ty is not None:
                known[m.group(1)] = ty
    return known


def _cost_ns(lines, size: int) -> float:
    instrs = sum(1 for line in lines if line.startswith("  "))
    vecmath = sum(line.count("@fg_vm_") for line in lines)
    return size * (_NS_PER_INSTR * instrs + _NS_PER_VECMATH * vecmath)


def outline(ctx, shape, body, flat: bool, scale: int = 1) -> bool:
    """Emit the loop nest ``ctx.loop_nest(shape, body, flat)`` as an outlined function,
    split across threads when large. False (nothing emitted) when it cannot be.
    ``scale``: iterations of the body's own loops per element (for the cost model)."""
    shape = tuple(shape)
    size = int(np.prod(shape, dtype=np.int64))
    nd_outer = not (flat or len(shape) <= 1)
    outer = shape[0] if nd_outer else size
    if outer < 2:
        return False
    b = ctx.b
    k = ctx.parallel_count = getattr(ctx, "parallel_count", 0) + 1
    saved = (b.lines, b.block, b.prefix, ctx.memo, ctx.parallel_ok, ctx.fail_used)
    b.lines, b.block, b.prefix = ["entry:"], "entry", f"q{k}_"
    ctx.memo, ctx.parallel_ok = {}, False  # (values of the enclosing function are not reused)
    try:
        if nd_outer:
            inner = shape[1:]

            def row(i, _):
                ctx.loop_nest(inner, lambda iidx: body(ctx.idx(shape, comps=[i] + list(iidx.comps))))
                return []

            ctx.for_range("%hi", row, start="%lo")
        else:
            ctx.for_range("%hi", lambda i, _: body(ctx.idx(shape, flat=i)) or [], start="%lo")
        b.stmt("ret void")
        if any("label %fg_interrupted" in line for line in b.lines):  # (its loops poll the
            b.lines += ["fg_interrupted:", "  ret void"]  # interrupt flag: interrupt.py)
        lines = b.lines
    finally:
        b.lines, b.block, b.prefix, ctx.memo, ctx.parallel_ok, failed = saved
        ctx.fail_used = failed
    text = "\n".join(lines)
    if any(s in text for s in _UNSAFE):
        return False
    free = _free_values(lines, _known_types(ctx, b.lines))
    if free is None:
        return False
    params = ", ".join(["i64 %lo", "i64 %hi"] + [f"{t} {'noalias nocapture ' if t == 'ptr' else ''}{n}"
                                                 for n, t in free])
    name = f"fg_par{k}"
    b.module.functions.append(f"define internal void @{name}_body({params}) nounwind {{\n{text}\n}}")
    args = [f"{t} {n}" for n, t in free]
    if _cost_ns(lines, size * scale) < MIN_NS:
        b.stmt(f"call void @{name}_body(i64 0, i64 {outer}, {', '.join(args)})".replace(", )", ")"))
        return True
    grain = -(-outer // MAX_CHUNKS)
    if not nd_outer and grain >= 64:
        grain = -(-grain // 16) * 16  # whole vectors per chunk
    chunks = -(-outer // grain)
    tramp = [f"define internal void @{name}(ptr %env, i64 %c) nounwind {{", "entry:",
             f"  %lo = mul i64 %c, {grain}", f"  %hi0 = add i64 %lo, {grain}",
             f"  %hi = call i64 @llvm.smin.i64(i64 %hi0, i64 {outer})"]
    env = b.emit(f"alloca [{max(1, len(free))} x i64], align 8")
    for j, (n, t) in enumerate(free):
        slot = b.emit(f"getelementptr inbounds i64, ptr {env}, i64 {j}")
        b.stmt(f"store {t} {n}, ptr {slot}")
        tramp += [f"  %s{j} = getelementptr inbounds i64, ptr %env, i64 {j}", f"  %f{j} = load {t}, ptr %s{j}"]
    call_args = ", ".join(["i64 %lo", "i64 %hi"] + [f"{t} %f{j}" for j, (_, t) in enumerate(free)])
    tramp += [f"  call void @{name}_body({call_args})", "  ret void", "}"]
    b.module.functions.append("\n".join(tramp))
    b.module.declare("llvm.smin.i64", "declare i64 @llvm.smin.i64(i64, i64)")
    threadpool.ensure_pool()
    b.module.declare("fg_par_run", threadpool.RUN_DECL)
    b.stmt(f"call void @fg_par_run(ptr @{name}, ptr {env}, i64 {chunks})")
    ctx.parallel_used = True
    return True
