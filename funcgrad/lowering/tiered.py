"""Tiered compilation of a cold program: quick code for the first call, the optimised code
compiled in a background thread and swapped in when ready.

A program with loops gets the full pipeline (O2 with the vectorisers, O2 code generation):
about 11 ms of LLVM time for the 50-op W10 function, 18 ms for its gradient, where the
same IR compiled without optimisation passes and with the fast instruction selector takes
under 3 ms. With the disk cache off, ``compile_quick`` links that quick object first and
queues the full compile on one worker thread.

With the disk cache on, programs are compiled in the foreground as before: the optimised
object is what the next process links (issue #14's warm start), and a short-lived process
would exit before its worker stored it (exit never waits for the worker), leaving every
later process cold.

The swap happens in native code, so no caller needs to know: the quick module's exported
entry points are trampolines that call through a global function pointer, initialised to
the quick body; the worker links the optimised object as a library of its own and stores
its entry's address into that pointer (an aligned 8-byte store, atomic on the targets
LLVM's JIT supports). A call already running finishes in the quick code, which stays
loaded as long as the module; the optimised library is held by the quick module's handle.

Only programs whose results cannot depend on the optimisation level are tiered: no
fast-math flag anywhere in the IR (``reassoc``/``contract``/... let O2 reorder or fuse
floating-point operations; the generated matrix kernels use them), so both tiers compute
the same IEEE operations in the same order, and the vector-math library is the same
compiled code whether the loop calls its vector or its scalar entry
(``tests/test_first_call_tiers.py`` compares the bits over the op-table programs). The
vector-math libraries are tiered the same way, by name (see "process-long libraries").

llvmlite runs one LLVM call at a time in a process (a global lock), so the worker would
hold up the calling thread's next compile for up to one of its steps (≈ 5 ms): it starts a
step only after the calling thread has compiled nothing for ``QUIET`` seconds. A burst of
compiles (a program jitting many functions at start, the test suite) runs quick code and
is optimised after the burst, each program only if it is still alive.

The worker is a daemon thread, created on first use; exit never waits for its queue: at
exit it is told to stop and the interpreter waits at most for the LLVM step it is in
(bounded by ``EXIT_WAIT`` seconds), so the LLVM library is not torn down under it.
``FUNCGRAD_NO_TIERED_COMPILE=1`` (or ``set_mode("off")``) compiles the full pipeline on the
calling thread as before.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import queue
import re
import threading
import time
import weakref

from funcgrad import config
from funcgrad.lowering import engine, llvm_memory

__all__ = ["compile_quick", "eligible", "set_mode", "wait"]

EXIT_WAIT = 2.0  # seconds the interpreter's exit waits for the worker's current LLVM step
QUIET = 0.05  # seconds without a foreground compile before the worker starts an LLVM step
_FAST_MATH = re.compile(r"\b(?:fast|reassoc|contract|nnan|ninf|nsz|arcp|afn)\b")
_TRAMPOLINED = ("entry", "entry_ptrs")  # the symbols that run code (``release`` stays per tier)
_mode = ["auto"]  # "auto" | "off" | "quick" (quick code only, never swapped: for tests)
_state: dict = {}
_pending = [0]  # jobs queued and not finished
_idle = threading.Condition()
# Held by the worker around each of its LLVM calls: a fork waits for it, so the child never
# inherits llvmlite's lock (or the engine's) taken by a thread that does not exist there.
_step = threading.Lock()


def set_mode(mode: str) -> str:
    """``"auto"`` (tier cold programs), ``"off"`` (always the full pipeline, on the calling
    thread) or ``"quick"`` (the quick code only, never swapped in: tests compare tiers).
    Returns the previous mode."""
    if mode not in ("auto", "off", "quick"):
        raise ValueError(f"tiered.set_mode: mode must be 'auto', 'off' or 'quick', got {mode!r}")
    previous, _mode[0] = _mode[0], mode
    return previous


def _enabled() -> bool:
    return _mode[0] != "off" and not config.flag(config.NO_TIERED_COMPILE)


def eligible(text: str, symbols, unique: str, library: bool) -> bool:
    """Whether ``text`` may run quick code first: a program (not a library) that the full
    pipeline would compile, without fast-math flags, whose entry points are the plain
    ``i32 (ptr)`` functions the trampolines forward."""
    if library or unique != "@fg_main_" or not _enabled() or engine.pipeline(text) != "full":
        return False
    if _FAST_MATH.search(text) or not set(symbols) <= {"entry", "entry_ptrs", "release"}:
        return False
    return all(text.count(f"@fg_main_{s}(") == 1 and f"define i32 @fg_main_{s}(ptr %" in text
               for s in symbols if s in _TRAMPOLINED)


def _quick_text(text: str, symbols) -> str:
    """``text`` with each trampolined entry renamed and re-exported as a trampoline."""
    extra = []
    for s in symbols:
        if s not in _TRAMPOLINED:
            continue
        text = text.replace(f"define i32 @fg_main_{s}(ptr %", f"define internal i32 @fg_quick_{s}(ptr %", 1)
        extra.append(
            f"@fg_tier_{s} = global ptr @fg_quick_{s}, align 8\n"
            f"define i32 @fg_main_{s}(ptr %a) nounwind {{\nentry:\n"
            f"  %f = load atomic ptr, ptr @fg_tier_{s} acquire, align 8\n"
            f"  %r = call i32 %f(ptr %a)\n  ret i32 %r\n}}")
    return text + "\n" + "\n".join(extra) + "\n"


def _quick_object(text: str) -> bytes:
    st = engine._init()
    if "tm_quick" not in st:
        st["tm_quick"] = st["make_tm"](0)
    mod = llvm_memory.parse(text)
    try:
        mod.triple, mod.data_layout = st["triple"], st["data_layout"]
        mod.verify()
        return st["tm_quick"].emit_object(mod)
    finally:
        llvm_memory.dispose(mod)


def compile_quick(text: str, symbols, imports):
    """Link ``text``'s quick code (see the module doc) and queue its optimised compile;
    returns the quick ``CompiledModule`` (under ``engine._lock``, which the caller holds)."""
    quick = _quick_text(text, symbols)
    obj = _quick_object(quick)
    tiers = [s for s in symbols if s in _TRAMPOLINED]
    handle = engine.link_object(obj, engine.declared_names(text), symbols, imports, text,
                                extra_exports={f"tier:{s}": f"fg_tier_{s}" for s in tiers}, quick=True)
    if _mode[0] == "quick":
        return handle
    slots = {s: handle.addrs.pop(f"tier:{s}") for s in tiers}
    with _idle:
        _pending[0] += 1
    _worker().put((text, symbols, imports, slots, weakref.ref(handle)))
    return handle


def _worker() -> queue.Queue:
    q = _state.get("queue")
    if q is None or not _state["thread"].is_alive():
        q = _state["queue"] = queue.SimpleQueue()
        _state["stop"] = threading.Event()
        t = _state["thread"] = threading.Thread(target=_run, args=(q, _state["stop"]),
                                                name="funcgrad-tier-up", daemon=True)
        t.start()
    return q


def _run(q, stop) -> None:
    tools = None
    while not stop.is_set():
        job = q.get()
        try:
            if job is None or stop.is_set():
                return
            if tools is None:  # this thread's own target machine and pass options
                with _step:
                    tools = (engine._init()["make_tm"](2), {slp: engine.tuning(slp=slp) for slp in (True, False)})
            (_tier_up_library if isinstance(job, _Library) else _tier_up)(job, tools, stop)
        except Exception:  # noqa: BLE001  (the quick code keeps running: always correct)
            pass
        finally:
            with _idle:
                _pending[0] -= 1
                _idle.notify_all()


def _wait_quiet(stop) -> bool:
    """Wait until the calling threads have compiled nothing for ``QUIET`` seconds; False
    if told to stop meanwhile."""
    while not stop.is_set():
        idle = time.monotonic() - engine.last_compile()
        if idle >= QUIET:
            return True
        stop.wait(QUIET - idle)
    return False


def _tier_up(job, tools, stop) -> None:
    text, symbols, imports, slots, ref = job
    if not _wait_quiet(stop) or ref() is None:  # (the program died first: nothing to swap)
        return
    obj = _optimised_object(text, tools, stop)
    if obj is None or not _wait_quiet(stop):
        return
    with _step, engine._lock:
        quick = ref()
        if quick is None:
            return
        full = engine.link_object(obj, engine.declared_names(text), symbols, imports, text)
        quick.keep(full)  # the optimised library lives exactly as long as the quick one
        for s, slot in slots.items():
            ctypes.c_void_p.from_address(slot).value = full.addrs[s]


def _optimised_object(text: str, tools, stop) -> bytes | None:
    """The full pipeline's object for ``text`` (as ``engine``'s), with this thread's tools."""
    tm, options = tools
    engine._init()
    for slp in (True, False):  # (an optimiser failure: retried without the SLP vectorizer)
        with _step:
            mod = llvm_memory.parse(text)
        try:
            with _step:
                engine.prepare(mod)
                mod.verify()
            if not _wait_quiet(stop):
                return None
            with _step:
                llvm_memory.run_pipeline(mod, tm, options[slp])
                mod.verify()
            if not _wait_quiet(stop):
                return None
            with _step:
                return tm.emit_object(mod)
        except RuntimeError:
            if not slp:
                raise
        finally:
            with _step:
                llvm_memory.dispose(mod)
    return None


# --- process-long libraries (the vector-math functions) -------------------------------------------
# A library's functions run inside programs' loops, so its code is always optimised: 5-9 ms
# of LLVM time for one vector-math function (most of it instruction selection: its IR is
# vectorised by hand, the passes add little), paid inside the first call of the first
# program that needs it. With tiering on and the disk cache off, a library bound by name
# (``engine.compile_library(..., bind=True)``) is linked quick first (no passes, the fast
# instruction selector: about a third of that) and its optimised code is compiled by the
# worker, queued ahead of the programs that call it, then bound in its place. A module
# links the addresses bound at its link time, so only quick program code may bind quick
# library code: any other link of a module declaring one of its names (a program compiled
# optimised at once, a tier-up, a disk-cache load) first makes the optimised library on
# its own thread (``engine._settle``). A library with a fast-math flag is never tiered, so
# both give the same bits (no flag lets LLVM reorder or contract an operation).
_FLAG = re.compile(r"(?<![%@\w.$-])(?:fast|reassoc|contract|nnan|ninf|nsz|arcp|afn)\b(?!:)")  # (not %fast, fast:)


class _Library:
    """A library bound to its quick code, waiting for its optimised code."""

    __slots__ = ("text", "symbols", "done")

    def __init__(self, text: str, symbols):
        self.text, self.symbols, self.done = text, list(symbols), False


def library_eligible(text: str) -> bool:
    """Whether the library ``text`` may be linked quick first (tiering on, no fast-math)."""
    return _enabled() and not _FLAG.search(text)


def compile_library_quick(text: str, symbols) -> dict:
    """Link the library ``text``'s quick code, bind ``symbols`` to it by name and queue its
    optimised compile (mode ``"quick"``: not queued; the next optimised link that needs it
    compiles it). Returns the quick addresses (under ``engine._lock``, which the caller holds)."""
    handle = engine.link_object(_quick_object(text), engine.declared_names(text), symbols, {}, text,
                                library=True, quick=True)
    engine._permanent.append(handle)
    job = _Library(text, symbols)
    for s in job.symbols:
        engine._symbols[s] = handle.addrs[s]
        engine._quick_bound[s] = lambda: _upgrade(job)
    if _mode[0] != "quick":
        with _idle:
            _pending[0] += 1
        _worker().put(job)
    return dict(handle.addrs)


def _upgrade(job: _Library, obj: bytes | None = None) -> None:
    """Link ``job``'s optimised object (``obj``, or compiled here with the engine's own
    tools) and bind its names to it, unless done already."""
    with engine._lock:
        if job.done:
            return
        if obj is None:
            obj = engine._object_code(job.text, library=True)
        full = engine.link_object(obj, engine.declared_names(job.text), job.symbols, {}, job.text, library=True)
        engine._permanent.append(full)
        engine._module_cache[(job.text, (), True)] = full  # (``compile_ir`` of the same text)
        job.done = True
        for s in job.symbols:
            engine._symbols[s] = full.addrs[s]
            engine._quick_bound.pop(s, None)


def _tier_up_library(job: _Library, tools, stop) -> None:
    if job.done or not _wait_quiet(stop):
        return
    obj = _optimised_object(job.text, tools, stop)
    if obj is None or job.done or not _wait_quiet(stop):
        return
    with _step:
        _upgrade(job, obj)


def wait(timeout: float | None = None) -> bool:
    """Block until every queued optimised compile has been swapped in (tests, benchmarks);
    False if ``timeout`` seconds passed first."""
    with _idle:
        return _idle.wait_for(lambda: _pending[0] == 0, timeout)


def _stop_at_exit() -> None:
    stop, t = _state.get("stop"), _state.get("thread")
    if stop is None or t is None:
        return
    stop.set()
    _state["queue"].put(None)
    t.join(EXIT_WAIT)


def _after_fork_in_child() -> None:  # the worker thread does not exist in a forked child
    global _idle
    _state.clear()
    _pending[0] = 0
    _idle = threading.Condition()
    _step.release()


atexit.register(_stop_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_step.acquire, after_in_parent=_step.release, after_in_child=_after_fork_in_child)
