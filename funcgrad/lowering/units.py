"""Outlining: each top-level equation's code (its loop nest, BLAS call, control flow...)
becomes a function of its own, shared by every equation that emits the same code.

LLVM's optimisation passes and code generation cost more than linearly in a function's
size: a program emitted as one function of a few thousand loop nests took minutes to
compile, nearly all of it in LLVM. Here the program's core function only computes buffer
pointers and calls *units*: ``@fg_unit_<digest>(ptr noalias %p0, ...)``, each holding one
equation's code, so every function LLVM sees is bounded by one equation. A unit's text is
made canonical (its own values and labels renamed in order of appearance, the values it
reads from the caller, buffer pointers and constants' globals among them, passed as
parameters), and ``digest`` is a hash of that text: the equations of a program that
repeats a block (the layers of a network, the steps of an unrolled loop) emit the same
units, compiled once.

A unit that ends in one of the core function's failure exits (``label %fg_fail_<why>``,
or ``%fg_interrupted`` when a loop saw Ctrl-C: ``interrupt.py``) returns a status instead
(``ret i32 k``), and the call site branches to that exit. Code that cannot move to a
function of its own (a rule returning operands that live in registers, a value of the
caller whose type is unknown here) stays in the core function, as does a tiny unit (a few
instructions and no branch: a call would cost more than it saves), up to
``SPLICE_BUDGET`` instructions in all.
"""
from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from funcgrad.lowering import unit_calls
from funcgrad.lowering.parallel import IR_DEF, IR_LABEL, result_type

OUTLINE = True  # (tests compare with the code emitted in place)
MIN_NESTS = 8  # a program with fewer loop nests is one function (its IR as small as can be)
SMALL_UNIT = 12  # instructions: a unit this small is emitted in place (within the budget)
SPLICE_BUDGET = 1500  # instructions emitted in place in the core function, at most
MIN_CHUNK_CALLS = 32  # fewer calls in a run are made in place (``Outliner.flush``)
_TOKEN = re.compile(r"%([-\w.$]+)|^([-\w.$]+):|@(fg_const\d+)\b", re.M)
_FAIL = re.compile(r"label %(fg_fail_\w+|fg_interrupted)")  # (the core function's exits)
_OFFSET = re.compile(r"getelementptr inbounds i8, ptr (%ws|%[ao]\d+), i64 (\d+)")
_CHUNKABLE = re.compile(r"(?:(?:ptr (?:%ws|%[ao]\d+|@fg_const\d+)|i64 \d+)(?:, |$))*")
_ARG = re.compile(r"%ws\b|%[ao]\d+\b")
_PARAM = re.compile(r"%[ao]\d+")  # the core function's arguments: its inputs' and outputs' buffers


class Outliner:
    """Emits top-level equations as units (``run``) for the core function being built
    with ``ctx.b``; ``known`` holds the types of the core function's values."""

    def __init__(self, ctx):
        self.ctx, self.b = ctx, ctx.b
        self.known: dict[str, str] = {"%ws": "ptr"}
        # buffer pointers (the workspace, or an argument, plus a constant offset): a unit
        # takes the base and the offset and adds them itself, so the core function keeps
        # no pointer live across its calls but the workspace (thousands of long-lived
        # pointers made register allocation quadratic), and equations differing only in
        # where their buffers lie call the same unit
        self.remat: dict[str, str] = {}
        self._scanned = [0, 0]  # lines of the core function / its prologue already typed
        self.pre: list | None = None  # core-function lines computed for the open unit
        self.spliced = 0
        self.units = self.calls = self.chunks = 0  # distinct units / calls to units / tables runs
        self.pending: list = []  # (unit, args) of calls queued for a table, to go at ``mark``
        self.mark = self.seen = 0
        self.table = None  # the program's table of unit calls (``unit_calls``), made on first use
        self.shapes: dict = {}  # full structural key -> _Shape of its unit (``unit_keys``)
        self.reused = 0  # regions whose unit was called without emitting its code
        ctx.known_types = self.known  # (``parallel.outline`` types its free values with them)

    def typed(self, name: str, ty: str) -> None:
        self.known[name] = ty

    def before_unit(self, rhs: str, ty: str) -> str:
        """Emit ``name = rhs`` in the core function ahead of the open unit's call (or at
        the current position when no unit is open); return ``name``."""
        if self.pre is None:
            return self.b.emit(rhs)
        name = self.b.tmp()
        self.pre.append(f"  {name} = {rhs}")
        self.known[name] = ty
        if _OFFSET.fullmatch(rhs):
            self.remat[name] = rhs
        return name

    def _scan(self) -> None:
        for src, k in ((self.b.lines, 0), (self.ctx.prologue, 1)):
            for line in src[self._scanned[k]:]:
                m = IR_DEF.match(line)
                if m:
                    ty = result_type(m.group(2))
                    if ty is not None:
                        self.known[m.group(1)] = ty
                    if _OFFSET.fullmatch(m.group(2)):
                        self.remat[m.group(1)] = m.group(2)
            self._scanned[k] = len(src)

    def run(self, emit, key=None):
        """``emit()`` (one equation's code) as a unit; returns what ``emit`` returns.
        ``key``: the region's structural key and slot pointers (``unit_keys``): a region
        with the key of one already emitted calls that unit without emitting."""
        ctx, b = self.ctx, self.b
        self._scan()
        full = None
        if key is not None:
            full = (key[0], self._aliasing(key[1]))
            shape = self.shapes.get(full)
            if shape is not None:
                self._reuse(shape, key[1])
                return None
        entry = b.label("unit")
        saved = (b.lines, b.block, ctx.memo)
        before = (ctx.work, len(ctx.keep), len(ctx.cleanup), len(ctx.prologue))
        b.lines, b.block, ctx.memo = [f"{entry}:"], entry, dict(ctx.memo)
        self.pre = pre = []
        scratch: list = []  # (bytes, pointer) of each scratch buffer the code asked for
        alloc = ctx._workspace
        ctx._workspace = lambda nbytes: scratch.append((nbytes, alloc(nbytes))) or scratch[-1][1]
        try:
            result = emit()
            lines, last = b.lines, b.block
        finally:
            b.lines, b.block, ctx.memo = saved
            ctx._workspace = alloc
            self.pre = None
        b.lines += pre
        if len(lines) == 1:  # (no code: an empty nest)
            return result
        n_instr = sum(1 for line in lines if line.startswith("  "))
        straight = not any(IR_LABEL.match(line) for line in lines[1:])  # (no loop, no branch)
        small = n_instr < SMALL_UNIT and straight and self.spliced + n_instr <= SPLICE_BUDGET
        shape = None if result is not None or small else self._define(lines)
        if shape is not None:
            self._emit_call(shape, shape.free)
            side_effects = (len(ctx.keep), len(ctx.cleanup), len(ctx.prologue)) != before[1:]
            if full is not None and not side_effects:
                self._remember(full, shape, key[1], scratch, ctx.work - before[0])
        else:
            # in place (the names are unique in the core function already); straight-line
            # code joins the current block: a long chain of blocks would make LLVM's
            # liveness analysis cost blocks x live buffer pointers
            if straight:
                b.lines += lines[1:]
            else:
                b.br(entry)
                b.lines += lines
                b.block = last
            self.spliced += n_instr
        return result

    def _define(self, lines: list) -> "_Shape | None":
        """Define (once) the unit made of ``lines``; its shape, or None if it cannot be."""
        text = "\n".join(lines)
        fails = sorted(set(_FAIL.findall(text)))
        ret = "i32" if fails else "void"
        text += "\n  ret i32 0" if fails else "\n  ret void"
        text += "".join(f"\n{f}:\n  ret i32 {k}" for k, f in enumerate(fails, 1))
        local = {m.group(1) for m in map(IR_DEF.match, lines) if m}
        local |= {"%" + m.group(1) for m in map(IR_LABEL.match, lines) if m}
        local |= {"%" + f for f in fails}
        names: dict[str, str] = {}
        free: list = []  # (caller's operand text, type)

        def rename(m) -> str:
            if m.group(2) is not None:  # a label definition
                key = "%" + m.group(2)
            else:
                key = m.group(0)
            new = names.get(key)
            if new is None:
                if key in local:
                    new = f"%t{len(names) - len(free)}"
                else:
                    ty = "ptr" if key.startswith("@") or _PARAM.fullmatch(key) else self.known.get(key)
                    if ty is None:
                        raise _Untyped(key)
                    new = f"%p{len(free)}"
                    free.append((key, ty))
                names[key] = new
            return new[1:] + ":" if m.group(2) is not None else new

        try:
            canon = _TOKEN.sub(rename, text)
        except _Untyped:
            return None
        params, head, based = [], [], []
        for j, (key, ty) in enumerate(free):
            if self._based(key):  # (a buffer: its base and offset, see ``remat``)
                params += [f"ptr noalias nocapture %p{j}.b", f"i64 %p{j}.o"]
                head.append(f"  %p{j} = getelementptr inbounds i8, ptr %p{j}.b, i64 %p{j}.o")
                based.append(True)
            else:
                params.append(f"ptr noalias nocapture %p{j}" if ty == "ptr" else f"{ty} %p{j}")
                based.append(False)
        entry, _, body = canon.partition("\n")
        canon = "\n".join([entry, *head, body])
        params = ", ".join(params)
        digest = hashlib.sha1(f"{ret}({params})\n{canon}".encode()).hexdigest()[:20]
        name = f"fg_unit_{digest}"
        if name not in self.b.module.helpers:
            self.units += 1
            self.b.module.helpers[name] = f"define internal {ret} @{name}({params}) noinline nounwind {{\n{canon}\n}}"
        return _Shape(name, fails, free, tuple(based))

    def _based(self, name: str):
        """(base, offset) when ``name`` is a buffer pointer at a constant offset from the
        workspace or an argument, else None."""
        m = _OFFSET.fullmatch(self.remat.get(name, ""))
        return (m.group(1), m.group(2)) if m else None

    def _emit_call(self, shape: "_Shape", free) -> None:
        """Call ``shape``'s unit with ``free`` (the caller's operand text and type per
        parameter of the unit's text)."""
        b = self.b
        args = []
        for (key, ty), based in zip(free, shape.based):
            if based:
                base, off = self._based(key)
                args += [f"ptr {base}", f"i64 {off}"]
            else:
                args.append(f"{ty} {key}")
        self.calls += 1
        name, fails = shape.name, shape.fails
        args = ", ".join(args)
        if not fails and _CHUNKABLE.fullmatch(args):
            self._pend(name, args)
            return
        if not fails:
            b.stmt(f"call void @{name}({args})")
            return
        status = b.emit(f"call i32 @{name}({args})")
        cont = b.label("unit_ok")
        cases = " ".join(f"i32 {k}, label %{f}" for k, f in enumerate(fails, 1))
        b.stmt(f"switch i32 {status}, label %{cont} [ {cases} ]")
        b.start_block(cont)

    # --- regions with the structure of one already emitted (``unit_keys``) -------------
    def _aliasing(self, slots: list) -> tuple:
        """Per slot: the first slot holding the same pointer, and whether it is a buffer
        at an offset (a unit takes those as base and offset): part of the full key."""
        seen: dict = {}
        out = []
        for k, ptr in enumerate(slots):
            based = self._based(ptr)
            out.append((seen.setdefault(based or ptr, k), based is not None))
        return tuple(out)

    def _remember(self, full, shape: "_Shape", slots: list, scratch: list, work: int) -> None:
        """Record how the unit just defined takes its parameters from a region's slots
        and scratch buffers; nothing if some parameter is neither (a value computed by
        the core function), so that structure is emitted again each time."""
        where = {}
        for k, ptr in enumerate(slots):
            where.setdefault(self._based(ptr) or ptr, ("slot", k))
        for k, (_, ptr) in enumerate(scratch):
            where.setdefault(self._based(ptr) or ptr, ("scratch", k))
        sources = []
        for key, ty in shape.free:
            src = where.get(self._based(key) or key)
            if src is None:
                return
            sources.append((src, ty))
        self.shapes[full] = shape._replace(sources=tuple(sources), scratch=tuple(n for n, _ in scratch),
                                           work=work)

    def _reuse(self, shape: "_Shape", slots: list) -> None:
        """Call ``shape``'s unit for a region with the same full key."""
        scratch = [self.ctx._workspace(n) for n in shape.scratch]
        self._scan()
        free = [(slots[k] if kind == "slot" else scratch[k], ty) for (kind, k), ty in shape.sources]
        self.reused += 1
        self.ctx.work += shape.work
        self._emit_call(shape, free)

    # --- calls to units: tables ----------------------------------------------------------------
    def _pend(self, name: str, args: str) -> None:
        """Queue a call for the current run of calls (see ``flush``)."""
        lines = self.b.lines
        if self.pending and not all(_is_offset(line) for line in lines[self.seen:]):
            self.flush()  # (code after the queued calls, which may read what they write)
        if not self.pending:
            self.mark = len(lines)
        self.seen = len(lines)
        self.pending.append((name, args))

    def flush(self) -> None:
        """Emit the queued unit calls where they were made: as a table of calls when there
        are enough of them. The core function would otherwise hold one call per
        equation, a single block in which LLVM's register allocator and scheduler cost
        grows quadratically (seconds for ten thousand calls); as a table (data, see
        ``unit_calls``) the calls cost LLVM nothing."""
        calls, self.pending = self.pending, []
        if len(calls) < MIN_CHUNK_CALLS:
            self.b.lines[self.mark:self.mark] = [f"  call void @{n}({a})" for n, a in calls]
            return
        if self.table is None:
            self.table = unit_calls.CallTable(self.ctx)
        self.chunks += 1
        self.b.lines.insert(self.mark, self.table.add(calls))

    def finish(self) -> None:
        """Flush the last calls and define the call table (at the end of the core function)."""
        self.flush()
        if self.table is not None:
            self.table.finish(self.b.module)
        # (``Executable.stats["units"]``: tests count what was emitted and reused)
        self.b.module.unit_stats = {"distinct": self.units, "calls": self.calls, "reused": self.reused,
                                    "spliced": self.spliced}


class _Shape(NamedTuple):
    name: str  # the unit's function
    fails: list  # the core function's exits it may take
    free: list  # (caller's operand text, type) per parameter of its text
    based: tuple  # per parameter: passed as a base pointer and an offset?
    sources: tuple = ()  # per parameter: (("slot" | "scratch", k), type) (``_remember``)
    scratch: tuple = ()  # bytes of each scratch buffer to ask for
    work: int = 0  # what the rule added to ``ctx.work``


def _is_offset(line: str) -> bool:
    """Is ``line`` a buffer pointer's definition (which reads no memory)?"""
    m = IR_DEF.match(line)
    return m is not None and _OFFSET.fullmatch(m.group(2)) is not None


class _Untyped(Exception):
    pass
