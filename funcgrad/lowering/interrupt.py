"""Ctrl-C inside compiled code: ``KeyboardInterrupt`` within a fraction of a second.

CPython runs a Python signal handler only when control returns to the interpreter, so a
compiled loop running for minutes would ignore SIGINT until it finished. Instead:

- a native SIGINT handler (``_HANDLER_IR``, compiled once per process) sets the
  process-wide flag ``@fg_interrupt`` and then calls the handler it replaced (CPython's
  own, which marks the signal for the interpreter, as before). It is installed with
  ``sigaction`` when a program that polls the flag is compiled or loaded (Linux, and only
  over a C handler CPython installed: not over ``SIG_DFL``/``SIG_IGN``; a Python handler
  set later replaces it until the next compile reinstalls it);
- compiled programs poll the flag (a volatile load and a branch) before each iteration
  of a loop whose iterations run ``POLL_WORK`` or more inner iterations, after each
  ``while``/``scan`` step, and every ``BLOCK`` iterations of long loops
  (``builder.FunctionBuilder.for_range``): at most a few 10^8 loop iterations pass
  between polls (~0.1-0.5 s at worst, usually milliseconds). They leave through
  their normal exit path (workspace and tapes freed) with ``STATUS``; the rest of the
  program does not run, so no partial value is used;
- the caller (``Executable._slow``, ``native_entry``) then calls ``handle``: it clears
  the flag and, on the main thread, runs the pending Python handlers
  (``PyErr_CheckSignals``: the default one raises ``KeyboardInterrupt``). When no handler
  raises (another thread's signal, a handler that returns), the call is run again from
  the start: its outputs are written afresh, nothing partial escapes.

Not interruptible: a single BLAS/LAPACK call (inside OpenBLAS), host callbacks' Python
code (interrupted as Python), and helper functions outside a program's core.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

from funcgrad.lowering import engine

STATUS = 130  # a program's return status when it stopped for an interrupt (128 + SIGINT)
BLOCK = 1 << 20  # innermost loops longer than this poll the flag every BLOCK iterations
POLL_WORK = 256  # a loop polls before each iteration that runs this many inner iterations
FLAG = "fg_interrupt"  # the flag's name in programs (an external global, bound by address)
DECLARATION = f"@{FLAG} = external global i32"

_flag = ctypes.c_int32(0)
_prev = ctypes.c_void_p(0)  # the handler ours replaced (called after setting the flag)
engine._symbols[FLAG] = ctypes.addressof(_flag)  # (bound without initialising LLVM)
engine._symbols["fg_sigint_prev"] = ctypes.addressof(_prev)

_HANDLER_IR = f"""{DECLARATION}
@fg_sigint_prev = external global ptr

define void @fg_main_on_sigint(i32 %sig) nounwind {{
entry:
  store volatile i32 1, ptr @{FLAG}, align 4
  %prev = load volatile ptr, ptr @fg_sigint_prev, align 8
  call void %prev(i32 %sig)
  ret void
}}
"""

_state: dict = {}
_lock = threading.Lock()


class _Sigaction(ctypes.Structure):  # glibc's ``struct sigaction`` (Linux)
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


_SIG_DFL, _SIG_IGN, _SA_SIGINFO = 0, 1, 4


@engine.provider("interrupt")
def ensure() -> None:
    """Install the native SIGINT handler if CPython's C handler is the current one
    (called when a program polling the flag is compiled or loaded)."""
    if not sys.platform.startswith("linux"):
        return
    with _lock:
        if "libc" not in _state:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.sigaction.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
            _state["libc"] = libc
            _state["ours"] = engine.compile_ir(_HANDLER_IR, ["on_sigint"])["on_sigint"]
        libc, ours = _state["libc"], _state["ours"]
        old = _Sigaction()
        if libc.sigaction(signal.SIGINT, None, ctypes.byref(old)) != 0:
            return
        if old.handler in (None, _SIG_DFL, _SIG_IGN, ours) or old.flags & _SA_SIGINFO:
            return  # (no C handler to chain to, or ours already)
        _prev.value = old.handler
        new = _Sigaction.from_buffer_copy(old)
        new.handler = ours
        libc.sigaction(signal.SIGINT, ctypes.byref(new), None)


def handle() -> None:
    """A call returned ``STATUS``: clear the flag and let Python handle the signal (the
    default handler raises ``KeyboardInterrupt``); returning means: run the call again."""
    if threading.current_thread() is threading.main_thread():
        _flag.value = 0
        ctypes.pythonapi.PyErr_CheckSignals()  # (raises what a Python handler raised)
        return
    # Another thread: Python handles the signal on the main thread, whose compiled call
    # (if any) must see the flag first; clear it if nothing did within 0.2 s.
    deadline = time.monotonic() + 0.2
    while _flag.value and time.monotonic() < deadline:
        time.sleep(0.005)
    _flag.value = 0


if hasattr(os, "register_at_fork"):  # (another thread may hold the lock at a fork)
    os.register_at_fork(after_in_child=_lock._at_fork_reinit)
