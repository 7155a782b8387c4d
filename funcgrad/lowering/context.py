"""Operands, indices, the lowering context and the one loop-nest generator.

Lowering rules (``lower_rules[prim]``, signature ``lower(ctx, *operands, **params)``)
come in two kinds, registered with the decorators below:

- **view rules** (``@lower_view``) return an ``Operand`` saying how to compute one
  output element at an index, in terms of the input operands' elements. Elementwise,
  broadcast, reshape, transpose, slice, pad, ... are view rules; a chain of them is
  *fused*: nothing is computed until a loop nest asks for an element, so fused
  intermediates never get a buffer.
- **materialising rules** (``@lower_materialized``) emit their own loops and write
  into ``ctx.outs`` (buffers). Reductions, dot_general and scatter are of this kind; a
  reduction evaluates its (fused) operand inside its own loop, so ``sum(x * x)``
  creates no ``x * x`` buffer.

An ``Idx`` is one position in an array of a given shape, known by its components
and/or its row-major flat offset (each computed from the other on demand), so
reshapes and same-shape elementwise chains never pay for div/mod index arithmetic.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from funcgrad.core.primitive import lower_rules
from funcgrad.lowering import parallel as splitting
from funcgrad.lowering.builder import FunctionBuilder, Value, const

VIEW_PRIMS: set = set()  # primitives whose lower rule returns a fused Operand
# view primitive -> predicate(eqn): does it read its inputs only at the output's flat
# offset (or at a constant position)? Then a fused region can run as one flat loop.
FLAT_PRIMS: dict = {}
CHEAP_PRIMS: set = set()  # view primitives cheap enough to recompute in several loops
# Primitives whose lower rule handles complex operands and results: ``check_supported``
# sends a program applying any other primitive to a complex value to the evaluator.
COMPLEX_LOWERED: set = set()


def lower_view(*prims, flat=False, cheap: bool = False, complex_ok: bool = False):
    """Register a fused (view) rule. ``flat``: True, or a predicate on the equation.
    ``complex_ok``: the rule handles complex operands too (``COMPLEX_LOWERED``)."""
    def register(rule):
        for p in prims:
            lower_rules[p] = rule
            VIEW_PRIMS.add(p)
            if complex_ok:
                COMPLEX_LOWERED.add(p)
            if flat:
                FLAT_PRIMS[p] = flat if callable(flat) else (lambda eqn: True)
            if cheap:
                CHEAP_PRIMS.add(p)
        return rule

    return register


def lower_materialized(*prims, complex_ok: bool = False):
    def register(rule):
        for p in prims:
            lower_rules[p] = rule
            if complex_ok:
                COMPLEX_LOWERED.add(p)
        return rule

    return register


class Idx:
    """A position in an array of ``shape``: components and/or flat offset (lazy)."""

    __slots__ = ("b", "shape", "_comps", "_flat")

    def __init__(self, b: FunctionBuilder, shape, comps=None, flat=None):
        self.b, self.shape, self._comps, self._flat = b, tuple(shape), comps, flat
        if comps is not None:
            self._comps = [0 if d == 1 else c for c, d in zip(comps, self.shape)]

    @property
    def comps(self) -> list:
        if self._comps is None:
            comps, f = [], self._flat
            for k in range(len(self.shape) - 1, -1, -1):
                d = self.shape[k]
                if k == 0:  # f < shape[0] here: no division needed
                    comps.append(0 if d == 1 else f)
                    break
                comps.append(0 if d == 1 else self.b.irem_const(f, d))
                f = self.b.idiv_const(f, d)
            self._comps = comps[::-1]
        return self._comps

    @property
    def flat(self):
        if self._flat is None:
            f = 0
            for c, d in zip(self._comps, self.shape):
                f = self.b.iadd(self.b.imul(f, d), c)
            self._flat = f
        return self._flat

    @property
    def key(self):
        return tuple(self._comps) if self._comps is not None else ("flat", self._flat)


class Operand:
    """An array value available inside loop nests: ``at(idx)`` gives one element."""

    is_buffer = False

    def __init__(self, aval):
        self.aval = aval
        self.dtype = np.dtype(aval.dtype)
        self.shape = tuple(aval.shape)

    def at(self, idx: Idx) -> Value:
        raise NotImplementedError


class BufferOperand(Operand):
    """A dense row-major array in memory at pointer ``ptr``."""

    is_buffer = True

    def __init__(self, ctx, aval, ptr: str):
        super().__init__(aval)
        self.ctx, self.ptr = ctx, ptr

    def at(self, idx: Idx) -> Value:
        b = self.ctx.b
        return b.load(b.gep(self.ptr, self.dtype, idx.flat), self.dtype)

    def store(self, idx: Idx, v: Value) -> None:
        b = self.ctx.b
        b.store(b.gep(self.ptr, self.dtype, idx.flat), v)


class ConstOperand(Operand):
    """A scalar known at compile time (a literal or a 0-d constant), any shape."""

    def __init__(self, aval, value):
        super().__init__(aval)
        self.value = const(self.dtype, value)

    def at(self, idx: Idx) -> Value:
        return self.value


class RegOperand(Operand):
    """A 0-d value held in a register (e.g. a loop-carried scalar)."""

    def __init__(self, aval, value: Value):
        super().__init__(aval)
        self.value = value

    def at(self, idx: Idx) -> Value:
        return self.value


class LazyOperand(Operand):
    """A fused value: ``fn(idx)`` emits the code computing one element (memoised per
    loop body, so an element used twice is computed once)."""

    def __init__(self, ctx, aval, fn: Callable[[Idx], Value]):
        super().__init__(aval)
        self.ctx, self.fn = ctx, fn

    def at(self, idx: Idx) -> Value:
        # Keyed on the operand itself (held by the memo), never on id(): an operand freed
        # mid-compilation could hand its address to a new one and receive its stale code.
        key = (self, idx.key)
        memo = self.ctx.memo
        v = memo.get(key)
        if v is None:
            v = memo[key] = self.fn(idx)
        return v


class LoweringContext:
    """What rules see: the function builder, loop helpers, scratch buffers."""

    def __init__(self, b: FunctionBuilder, workspace):
        self.b = b
        self.memo: dict = {}
        self.outs: list[BufferOperand] = []
        self._workspace = workspace  # allocate(nbytes) -> pointer text
        self.eqn = None  # the equation being lowered
        self.out_aval = None  # its (first) output's aval, for view rules
        self.work = 0  # estimated element operations, to decide on releasing the GIL
        self.keep: list = []  # constant arrays the code reads (``@fg_const<k>``, bound at link time)
        self.keep_src: dict = {}  # k -> index of the program constant keep[k] holds (if it is one)
        self.prologue: list[str] = []  # IR lines run once at function entry (after %ws exists)
        self.cleanup: list = []  # fn(builder) emitting code run before every return
        self.global_slot = None  # global_slot(nbytes) -> pointer made in the prologue
        self.fail_used = False  # did code branch to %fg_fail_oom (frees, returns status 2)?
        self.workspace_used = lambda: None  # note that %ws is referenced
        self.parallel_ok = False  # may nests be split across threads here (top level only)?

    def workspace_region(self, nbytes: int) -> str:
        """A pointer to ``nbytes`` of workspace owned by the caller for the whole call."""
        return self._workspace(nbytes)

    def scoped(self, fn: Callable):
        """Run ``fn()`` with memoised values scoped to it (for code in its own blocks:
        values it computes do not dominate what follows)."""
        saved = self.memo
        self.memo = dict(saved)
        try:
            return fn()
        finally:
            self.memo = saved

    # --- operands ------------------------------------------------------------------
    def view(self, aval, fn: Callable[[Idx], Value]) -> LazyOperand:
        return LazyOperand(self, aval, fn)

    def idx(self, shape, comps=None, flat=None) -> Idx:
        return Idx(self.b, shape, comps, flat)

    def scalar(self, operand: Operand) -> Value:
        """The value of a 0-d operand."""
        return operand.at(self.idx((), []))

    def temp_buffer(self, aval) -> BufferOperand:
        """Scratch memory for the current equation only (e.g. BLAS operand packing)."""
        nbytes = int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize
        return BufferOperand(self, aval, self._workspace(nbytes))

    # --- loops ---------------------------------------------------------------------
    def for_range(self, n, body: Callable, carry=(), start=0):
        """``builder.for_range`` that scopes memoised values to the loop body."""
        saved = self.memo

        def scoped(i, carried):
            self.memo = dict(saved)
            try:
                return body(i, carried)
            finally:
                self.memo = saved

        if isinstance(n, int) and isinstance(start, int) and n - start == 1 and not carry:
            self.memo = dict(saved)
            try:
                body(start, [])
            finally:
                self.memo = saved
            return []
        return self.b.for_range(n, scoped, carry, start)

    def if_then(self, cond: str, body: Callable) -> None:
        saved = self.memo
        self.memo = dict(saved)
        try:
            self.b.if_then(cond, body)
        finally:
            self.memo = saved

    def loop_nest(self, shape, body: Callable[[Idx], None], flat: bool = False, parallel: bool = False) -> None:
        """THE loop-nest generator: run ``body(idx)`` for every index of ``shape`` in
        row-major order. ``flat=True`` uses one loop over the flat offset (for regions
        that only read operands at the same flat offset). ``parallel=True``: iterations
        of the outer loop are independent (each writes its own outputs), so a large nest
        may be split across threads (``parallel.py``)."""
        shape = tuple(shape)
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:
            return
        split = parallel and self.parallel_ok and size >= splitting.MIN_ELEMENTS
        if split and splitting.outline(self, shape, body, flat):
            return
        if flat or len(shape) <= 1:
            self.for_range(size, lambda i, _: body(self.idx(shape, flat=i)) or [])
            return
        comps: list = []

        def level(d):
            if d == len(shape):
                body(self.idx(shape, comps=list(comps)))
                return
            if shape[d] == 1:
                comps.append(0)
                level(d + 1)
                comps.pop()
                return

            def inner(i, _):
                comps.append(i)
                level(d + 1)
                comps.pop()
                return []

            self.for_range(shape[d], inner)

        try:
            level(0)
        finally:
            level = None  # (it refers to itself: a cycle holding ``body`` and this context)

    def write(self, dest: BufferOperand, src: Operand, flat: bool = False, parallel: bool = False) -> None:
        """Materialise ``src`` into ``dest`` (same shape) with one loop nest. A view with
        a ``coarse`` form (the same elements in the same row-major order, as an operand
        of fewer dims: a transpose of a buffer whose dims move in runs) is written by a
        loop per dim of that form."""
        coarse = getattr(src, "coarse", None)
        if coarse is not None and not flat:
            src, dest = coarse, BufferOperand(self, coarse.aval, dest.ptr)
        self.loop_nest(dest.shape, lambda idx: dest.store(idx, src.at(idx)), flat=flat, parallel=parallel)
