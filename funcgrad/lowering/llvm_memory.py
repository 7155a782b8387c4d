"""Giving back what llvmlite 0.50's bindings and LLVM keep: each module parsed into an
LLVM context of its own (``parse``/``dispose``), the pass manager freed after each
optimisation run (``run_pipeline``), and LLJITs disposed when their programs are gone
(``take``/``release``). Measured with llvmlite 0.50 (``bench/memory_soak.py``, 2,000
dropped functions, each compiled): a dropped jitted function kept +80 kB at first,
~8-11 kB with freed pass managers and LLJITs, 2-3 kB with a context per module and no
reference cycles around a compiled program (0.5-1 kB when linked from the disk cache).

Contexts: an LLVM context owns what its modules share and never frees it before the
context itself: uniqued constants (every distinct number a program holds), types,
metadata, the distinct loop metadata the vectorisers attach. With every module in the
process-wide (global) context that was ~2 kB per compiled program, for good. A context
per module (``parse``) is freed with it (``dispose``); making one costs ~10 µs.

Pass builders: a run registers LLVM's standard instrumentation on its builder, as
callbacks into an object on the run's own stack, and never removes them, so a builder
must serve one run only (a second run through it would call the first's dead
callbacks). The binding allocates each builder's callback registry and never frees it:
~1 kB per program optimised stays, the one cost per compile left. The module pass
manager is freed here: its ``_dispose`` resolves to ``ObjectRef``'s no-op (~65 kB per
program optimised).

LLJITs: the binding never removes a library (a JITDylib) from its LLJIT: unloading one
frees its code and data, but ~8 kB of bookkeeping per library stays until the LLJIT
itself is disposed. So programs are linked into a *generation*: an LLJIT taking
``LINKS_PER_JIT`` libraries, then retired; a retired generation is disposed when its
last library is unloaded. Libraries that live for the whole process (``compile_ir``)
stay in the engine's first LLJIT. Every name a library takes from another is bound by
address (``engine._link``), so libraries in different LLJITs call each other freely.
A new LLJIT costs ~1.5 ms (amortised: ~25 µs a link); a long-lived program keeps its
generation's bookkeeping (at most ``LINKS_PER_JIT`` × 8 kB) alive with it.
"""
from __future__ import annotations

import llvmlite.binding as llvm

LINKS_PER_JIT = 64


def parse(text: str):
    """``text`` (LLVM IR) parsed into a new context of its own; give both back with
    ``dispose``."""
    context = llvm.create_context()
    try:
        return llvm.parse_assembly(text, context=context)
    except BaseException:
        context.close()
        raise


def dispose(mod) -> None:
    """Free ``mod`` and its context (``parse``'s: no other module is in it)."""
    context = mod._context  # (the binding keeps it on the module; the global one's close is a no-op)
    mod.close()
    context.close()


def run_pipeline(mod, tm, pto) -> None:
    """Run the default module pipeline (``pto``'s level) over ``mod`` with a pass
    builder of its own; free the pass manager and the builder after."""
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    try:
        pm.run(mod, pb)
    finally:
        if type(pm)._dispose is llvm.ffi.ObjectRef._dispose:  # (the binding's bug: free it here)
            llvm.ffi.lib.LLVMPY_DisposeNewModulePassManger(pm)
            pm.detach()
        else:  # (a fixed binding frees it itself)
            pm.close()
        pb.close()


class Generation:
    """One LLJIT for programs: ``links`` made into it, ``live`` still loaded."""

    __slots__ = ("jit", "links", "live")

    def __init__(self, jit):
        self.jit, self.links, self.live = jit, 0, 0


_current: list = []  # [the generation taking new links]


def take(jit_tm) -> Generation:
    """The generation the next program library is linked into, counted as holding it
    (callers hold ``engine._lock``; ``jit_tm``: the target machine LLJITs copy)."""
    if not _current or _current[0].links >= LINKS_PER_JIT:
        old = _current[0] if _current else None
        _current[:] = [Generation(llvm.create_lljit_compiler(jit_tm))]
        if old is not None and old.live == 0:
            old.jit.close()
    g = _current[0]
    g.links += 1
    g.live += 1
    return g


def release(g: Generation) -> None:
    """One of ``g``'s libraries is unloaded (or its link failed): dispose ``g``'s LLJIT
    when that was its last and it takes no more links (callers hold ``engine._lock``)."""
    g.live -= 1
    if g.live == 0 and not (_current and _current[0] is g):
        g.jit.close()

