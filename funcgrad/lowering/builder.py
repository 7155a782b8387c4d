"""A small textual LLVM IR builder (opaque ``ptr`` syntax) with structured loops.

Textual IR is cheaper to build than ``llvmlite.ir`` objects and makes attributes and
intrinsics easy to spell. Scalars are ``Value(ref, dtype)``; index arithmetic works on
``int | str`` (Python ints are compile-time constants and fold).

Register types: bool ``i1``, intN/uintN ``iN`` (N = 8, 16, 32, 64), float32
``float``, float64 ``double``, complex64/complex128 the first-class aggregates
``{ float, float }`` / ``{ double, double }`` (real, imaginary: NumPy's interleaved
layout, so buffers, phis and selects need nothing special; ``parts``/``pack`` reach
the components). In memory bool is one byte (``i8``), like NumPy. LLVM
integers have no sign: the dtype's kind picks the signed or unsigned instruction
(``int_pred``, ``int_op``).
"""
from __future__ import annotations

import struct
from typing import Callable, NamedTuple

import numpy as np

BOOL, I32, I64 = np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64)
U32, U64 = np.dtype(np.uint32), np.dtype(np.uint64)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
LLTYPE = {BOOL: "i1", F32: "float", F64: "double", C64: "{ float, float }", C128: "{ double, double }",
          **{np.dtype(f"{k}{n}"): f"i{8 * n}" for k in "iu" for n in (1, 2, 4, 8)}}
MEMTYPE = {**LLTYPE, BOOL: "i8"}
SUPPORTED_DTYPES = frozenset(LLTYPE)


def int_pred(dtype, pred: str) -> str:
    """The ``icmp`` predicate for ``dtype``: a signed one (``slt``...) becomes unsigned
    (``ult``...) for unsigned ints and bool."""
    if pred[0] == "s" and np.dtype(dtype).kind in "ub":
        return "u" + pred[1:]
    return pred


def int_op(dtype, signed: str, unsigned: str) -> str:
    """``signed`` (sdiv, srem, smax, sext, sitofp...) or its unsigned twin for ``dtype``."""
    return unsigned if np.dtype(dtype).kind in "ub" else signed


class Value(NamedTuple):
    """A scalar in a register: its SSA name (or literal text) and NumPy dtype."""

    ref: str
    dtype: np.dtype

    @property
    def ty(self) -> str:
        return LLTYPE[self.dtype]


def part_dtype(dtype) -> np.dtype:
    """The dtype of a complex dtype's components (complex128 -> float64)."""
    return F64 if np.dtype(dtype) == C128 else F32


def const_text(dtype: np.dtype, value) -> str:
    if dtype.kind == "c":
        z, p = complex(np.asarray(value).astype(dtype)), part_dtype(dtype)
        return f"{{ {LLTYPE[p]} {const_text(p, z.real)}, {LLTYPE[p]} {const_text(p, z.imag)} }}"
    if dtype == BOOL:
        return "true" if bool(value) else "false"
    if dtype.kind in "iu":  # the same bits as a signed number (an i32 literal must fit i32)
        signed = np.dtype(f"i{dtype.itemsize}")
        return str(int(np.asarray(value).astype(dtype).view(signed)))
    v = float(np.asarray(value).astype(dtype))  # exactly representable in the type
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", v))[0]


def const(dtype, value) -> Value:
    dtype = np.dtype(dtype)
    return Value(const_text(dtype, value), dtype)


class ModuleBuilder:
    """Declarations and helper functions shared by the functions of one module."""

    def __init__(self):
        self.decls: dict[str, str] = {}
        self.helpers: dict[str, str] = {}
        self.functions: list[str] = []

    def declare(self, name: str, text: str) -> str:
        self.decls.setdefault(name, text)
        return "@" + name

    def helper(self, name: str, make_text: Callable[[], str]) -> str:
        if name not in self.helpers:
            self.helpers[name] = make_text()
        return "@" + name

    def text(self) -> str:
        parts = list(self.decls.values()) + list(self.helpers.values()) + self.functions
        parts.append("attributes #0 = { nounwind }")
        parts.append("attributes #1 = { nounwind willreturn memory(none) }")
        return "\n".join(parts) + "\n"


class FunctionBuilder:
    def __init__(self, module: ModuleBuilder, prefix: str = "v"):
        self.module = module
        self.lines: list = []
        self.n = 0
        self.block = "entry"
        self.prefix = prefix
        # Loops poll the interrupt flag (``interrupt.py``) and leave to ``%fg_interrupted``
        # only in a function that has that exit: a program's core (``compiler.emit_core``)
        # and the nests ``parallel.py`` outlines from it. Elsewhere loops run to the end.
        self.interruptible = False
        self.interrupt_used = False
        self.work = 0  # loop iterations emitted so far, an estimate (``for_range``)

    # --- raw emission ------------------------------------------------------------
    def tmp(self) -> str:
        self.n += 1
        return f"%{self.prefix}{self.n}"

    def label(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def emit(self, rhs: str) -> str:
        name = self.tmp()
        self.lines.append(f"  {name} = {rhs}")
        return name

    def stmt(self, text: str) -> None:
        self.lines.append("  " + text)

    def placeholder(self) -> int:
        self.lines.append("")
        return len(self.lines) - 1

    def start_block(self, label: str) -> None:
        self.lines.append(f"{label}:")
        self.block = label

    def br(self, label: str) -> None:
        self.stmt(f"br label %{label}")

    def cbr(self, cond: str, then: str, other: str) -> None:
        self.stmt(f"br i1 {cond}, label %{then}, label %{other}")

    # --- typed scalar helpers ------------------------------------------------------
    def op(self, opcode: str, x: Value, y: Value, dtype=None, flags: str = "") -> Value:
        f = f" {flags}" if flags else ""
        return Value(self.emit(f"{opcode}{f} {x.ty} {x.ref}, {y.ref}"), dtype or x.dtype)

    def cmp(self, kind: str, pred: str, x: Value, y: Value) -> Value:
        return Value(self.emit(f"{kind} {pred} {x.ty} {x.ref}, {y.ref}"), BOOL)

    def select(self, c: Value, a: Value, b: Value) -> Value:
        if a.ref == b.ref:
            return a
        return Value(self.emit(f"select i1 {c.ref}, {a.ty} {a.ref}, {b.ty} {b.ref}"), a.dtype)

    def cast(self, opcode: str, x: Value, dtype) -> Value:
        dtype = np.dtype(dtype)
        return Value(self.emit(f"{opcode} {x.ty} {x.ref} to {LLTYPE[dtype]}"), dtype)

    def call(self, name: str, ret_dtype, *args: Value, decl: str | None = None, flags: str = "") -> Value:
        """Call ``@name`` (declared with ``decl`` when given) returning ``ret_dtype``."""
        if decl is not None:
            self.module.declare(name, decl)
        ret_dtype = np.dtype(ret_dtype)
        f = f"{flags} " if flags else ""
        arglist = ", ".join(f"{a.ty} {a.ref}" for a in args)
        return Value(self.emit(f"call {f}{LLTYPE[ret_dtype]} @{name}({arglist})"), ret_dtype)

    # --- complex registers ------------------------------------------------------------
    def parts(self, z: Value) -> tuple:
        """(re, im) of a complex ``Value``."""
        p = part_dtype(z.dtype)
        return tuple(Value(self.emit(f"extractvalue {z.ty} {z.ref}, {k}"), p) for k in (0, 1))

    def pack(self, re: Value, im: Value) -> Value:
        """The complex ``Value`` re + i im (both of one float dtype)."""
        dtype = C128 if re.dtype == F64 else C64
        ty = LLTYPE[dtype]
        z = self.emit(f"insertvalue {ty} poison, {re.ty} {re.ref}, 0")
        return Value(self.emit(f"insertvalue {ty} {z}, {im.ty} {im.ref}, 1"), dtype)

    # --- index arithmetic (i64; Python ints fold) ------------------------------------
    def iadd(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if b == 0:
            return a
        if a == 0:
            return b
        return self.emit(f"add i64 {a}, {b}")

    def isub(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if b == 0:
            return a
        return self.emit(f"sub i64 {a}, {b}")

    def imul(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 0 or b == 0:
            return 0
        if b == 1:
            return a
        if a == 1:
            return b
        return self.emit(f"mul nsw i64 {a}, {b}")

    def idiv_const(self, a, d: int):
        """a // d for a >= 0 and a constant d > 0."""
        if isinstance(a, int):
            return a // d
        return a if d == 1 else self.emit(f"udiv i64 {a}, {d}")

    def irem_const(self, a, d: int):
        if isinstance(a, int):
            return a % d
        return 0 if d == 1 else self.emit(f"urem i64 {a}, {d}")

    def iclamp(self, a, lo: int, hi: int):
        """min(max(a, lo), hi) for signed i64 a."""
        if isinstance(a, int):
            return min(max(a, lo), hi)
        if lo == hi:
            return lo
        a = self.emit(f"call i64 @llvm.smax.i64(i64 {a}, i64 {lo})")
        self.module.declare("llvm.smax.i64", "declare i64 @llvm.smax.i64(i64, i64)")
        self.module.declare("llvm.smin.i64", "declare i64 @llvm.smin.i64(i64, i64)")
        return self.emit(f"call i64 @llvm.smin.i64(i64 {a}, i64 {hi})")

    def icmp(self, pred: str, a, b) -> str:
        if isinstance(a, int) and isinstance(b, int):
            ops = {"slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b, "eq": a == b, "ne": a != b}
            return "true" if ops[pred] else "false"
        return self.emit(f"icmp {pred} i64 {a}, {b}")

    def band(self, a: str, b: str) -> str:
        if a == "true":
            return b
        if b == "true":
            return a
        if "false" in (a, b):
            return "false"
        return self.emit(f"and i1 {a}, {b}")

    # --- memory ----------------------------------------------------------------------
    def gep(self, ptr: str, dtype, offset) -> str:
        if offset == 0:
            return ptr
        return self.emit(f"getelementptr inbounds {MEMTYPE[np.dtype(dtype)]}, ptr {ptr}, i64 {offset}")

    def load(self, ptr: str, dtype) -> Value:
        dtype = np.dtype(dtype)
        if dtype.kind == "c":  # two scalar loads: LLVM vectorises those (interleaved groups)
            p = part_dtype(dtype)
            return self.pack(self.load(ptr, p), self.load(self.gep(ptr, p, 1), p))
        raw = self.emit(f"load {MEMTYPE[dtype]}, ptr {ptr}, align {dtype.itemsize}")
        if dtype == BOOL:
            return Value(self.emit(f"icmp ne i8 {raw}, 0"), BOOL)
        return Value(raw, dtype)

    def store(self, ptr: str, v: Value) -> None:
        if v.dtype.kind == "c":
            re, im = self.parts(v)
            self.store(ptr, re)
            self.store(self.gep(ptr, re.dtype, 1), im)
            return
        ref = v.ref
        if v.dtype == BOOL:
            ref = self.emit(f"zext i1 {ref} to i8")
        self.stmt(f"store {MEMTYPE[v.dtype]} {ref}, ptr {ptr}, align {v.dtype.itemsize}")

    # --- interrupts --------------------------------------------------------------------
    def interrupt_check(self) -> None:
        """Leave to ``%fg_interrupted`` if the interrupt flag is set (then go on in a new
        block); nothing outside an interruptible function."""
        if self.interruptible:
            go_on = self.label("go")
            self.lines += self._check_lines(go_on)
            self.start_block(go_on)

    def _check_lines(self, go_on: str) -> list:
        from funcgrad.lowering import interrupt  # (it imports the engine)

        if not self.interrupt_used:
            self.interrupt_used = True
            interrupt.ensure()  # (recorded: a program loaded from the disk cache installs it too)
        self.module.declare(interrupt.FLAG, interrupt.DECLARATION)
        flag, stop = self.tmp(), self.tmp()
        return [f"  {flag} = load volatile i32, ptr @{interrupt.FLAG}, align 4", f"  {stop} = icmp ne i32 {flag}, 0",
                f"  br i1 {stop}, label %fg_interrupted, label %{go_on}"]

    @staticmethod
    def _poll_work() -> int:
        from funcgrad.lowering.interrupt import POLL_WORK

        return POLL_WORK

    @staticmethod
    def _unknown_trips() -> int:
        from funcgrad.lowering.interrupt import BLOCK

        return BLOCK

    def _long(self, n, start) -> bool:
        """Whether a loop over ``[start, n)`` may be longer than ``interrupt.BLOCK``."""
        from funcgrad.lowering.interrupt import BLOCK

        if not isinstance(n, int):
            return True
        return n - (start if isinstance(start, int) else 0) > BLOCK

    def _blocked_range(self, n, body: Callable, carry, start):
        """``for_range`` as blocks of ``interrupt.BLOCK`` iterations (an outer loop over
        blocks, which polls the flag, and the inner loop as before)."""
        from funcgrad.lowering.interrupt import BLOCK

        shift = BLOCK.bit_length() - 1
        if isinstance(n, int) and isinstance(start, int):
            nblocks = (max(n - start, 0) + BLOCK - 1) >> shift
        else:
            length = self.emit(f"sub nsw i64 {n}, {start}")
            neg = self.emit(f"icmp slt i64 {length}, 0")
            length = self.emit(f"select i1 {neg}, i64 0, i64 {length}")
            nblocks = self.emit(f"lshr i64 {self.emit(f'add nuw i64 {length}, {BLOCK - 1}')}, {shift}")

        def block(k, cur):
            lo = self.emit(f"add nsw i64 {start}, {self.emit(f'shl nuw nsw i64 {k}, {shift}')}")
            end = self.emit(f"add nsw i64 {lo}, {BLOCK}")
            short = self.emit(f"icmp slt i64 {end}, {n}")
            hi = self.emit(f"select i1 {short}, i64 {end}, i64 {n}")
            return self.for_range(hi, body, cur, start=lo, _blocked=True)

        return self.for_range(nblocks, block, carry, _blocked=True)

    # --- structured control flow -------------------------------------------------------
    def for_range(self, n, body: Callable, carry=(), start=0, _blocked=False):
        """``for i in range(start, n)``: ``body(i, carried) -> new carried``.

        ``carry`` is a list of initial ``Value``s; returns their values after the loop.
        In an interruptible function, a loop whose iterations run at least
        ``interrupt.POLL_WORK`` iterations of inner loops polls the interrupt flag before
        each iteration, and a loop that may be longer than ``interrupt.BLOCK`` runs as
        blocks of it (``_blocked_range``). (Polling every row of a 64 x 64 nest inside a
        scan step cost ~5 % of the RNN benchmark; a poll is a load and a branch.)"""
        if self.interruptible and not _blocked and self._long(n, start):
            return self._blocked_range(n, body, carry, start)
        work_before = self.work
        pre = self.block
        head, body_l, exit_l = self.label("loop"), self.label("body"), self.label("done")
        self.br(head)
        self.start_block(head)
        i = self.tmp()
        slot = self.placeholder()
        phis = [Value(self.tmp(), c.dtype) for c in carry]
        slots = [self.placeholder() for _ in carry]
        cond = self.emit(f"icmp slt i64 {i}, {n}")
        self.cbr(cond, body_l, exit_l)
        branch_at = len(self.lines)
        self.start_block(body_l)
        new = body(i, phis) or []
        if len(new) != len(phis):
            raise RuntimeError("for_range body must return one value per carried value")
        inner = self.work - work_before  # (iterations of inner loops per iteration)
        if self.interruptible and inner >= self._poll_work():  # (poll the flag before each
            check = self.label("poll")  # iteration, in a block of its own)
            self.lines[branch_at - 1] = f"  br i1 {cond}, label %{check}, label %{exit_l}"
            self.lines[branch_at:branch_at] = [f"{check}:", *self._check_lines(body_l)]
        trips = n - start if isinstance(n, int) and isinstance(start, int) else self._unknown_trips()
        self.work = work_before + max(trips, 1) * (1 + inner)
        nxt = self.emit(f"add nuw nsw i64 {i}, 1")
        latch = self.block
        self.br(head)
        self.lines[slot] = f"  {i} = phi i64 [{start}, %{pre}], [{nxt}, %{latch}]"
        for s, p, c, nv in zip(slots, phis, carry, new):
            self.lines[s] = f"  {p.ref} = phi {p.ty} [{c.ref}, %{pre}], [{nv.ref}, %{latch}]"
        self.start_block(exit_l)
        return phis

    def if_then(self, cond: str, body: Callable) -> None:
        then_l, end_l = self.label("then"), self.label("endif")
        self.cbr(cond, then_l, end_l)
        self.start_block(then_l)
        body()
        self.br(end_l)
        self.start_block(end_l)

    def text(self) -> str:
        return "\n".join(self.lines)
