"""Lowering of ``callback`` (``core/prims/effects.py``): compiled code calls Python.

Each callback equation becomes::

    store the operand and result buffer pointers into a small array (workspace)
    %id = load i64, ptr @fg_const<k>        ; bound at link time to this callback's id
    %rc = call i32 @fg_host_callback(i64 %id, ptr %ptrs)
    br (%rc != 0) -> %fg_fail_cb            ; frees what the call holds, returns status 3

``fg_host_callback`` is one ctypes trampoline for the whole process, bound by name
(``engine.add_symbol``); the callback's id lives in a one-element array kept by the
executable like a constant. The IR text holds neither address nor id, so the same
program compiles to the same object code in every process (the disk cache stays valid)
and the id is resolved per process when the code is linked. The registry entry goes
when the executable (the owner of that array) dies.

ctypes callbacks take the GIL themselves (``PyGILState_Ensure``), so the trampoline is
safe whether or not the compiled code released it. An exception raised by the host
function is kept (per thread) and re-raised by the executable's Python wrapper
(``raise_pending``), after the native call has returned and freed its workspace.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
import weakref

import numpy as np

from funcgrad.core.prims.effects import callback_p
from funcgrad.lowering import engine
from funcgrad.lowering.compiler import const_symbol
from funcgrad.lowering.context import lower_materialized

_registry: dict[int, tuple] = {}  # id -> (host callback, input avals, output avals)
_ids = itertools.count(1)
_pending = threading.local()
FAIL_LABEL = "fg_fail_cb"
CALLBACK_FAILED = 3  # the status compiled code returns when a host function raised


def _spec(aval):
    """(shape, dtype, ctypes type of its bytes or None when empty), made once per callback."""
    dtype = np.dtype(aval.dtype)
    nbytes = int(np.prod(aval.shape, dtype=np.int64)) * dtype.itemsize
    return tuple(aval.shape), dtype, (ctypes.c_char * nbytes) if nbytes else None


def _array_at(address: int, spec) -> np.ndarray:
    """A view of the buffer at ``address`` holding ``spec``'s array."""
    shape, dtype, raw = spec
    if raw is None:
        return np.empty(shape, dtype)
    return np.frombuffer(raw.from_address(address), dtype).reshape(shape)


def _trampoline(cb_id: int, ptrs: int) -> int:
    try:
        host, in_specs, out_specs, table_type = _registry[cb_id]
        table = table_type.from_address(ptrs)
        args = [_array_at(table[k], s).copy() for k, s in enumerate(in_specs)]
        results = host(*args)
        n_in = len(in_specs)
        for j, (r, s) in enumerate(zip(results, out_specs)):
            if s[2] is not None:
                _array_at(table[n_in + j], s)[...] = r
        return 0
    except BaseException as err:  # noqa: BLE001  (re-raised by the caller, on this thread)
        _pending.error = err
        return 1


_TRAMPOLINE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p)(_trampoline)
engine.add_symbol("fg_host_callback", ctypes.cast(_TRAMPOLINE, ctypes.c_void_p).value)


def raise_pending() -> None:
    """Re-raise the exception a host function raised in this thread's last native call."""
    err = getattr(_pending, "error", None)
    if err is not None:
        _pending.error = None
        raise err


def register(host, in_avals, out_avals) -> np.ndarray:
    """A fresh id for ``host``, as the one-element array compiled code reads it from;
    the registry entry lives as long as that array."""
    cb_id = next(_ids)
    table_type = ctypes.c_void_p * max(1, len(in_avals) + len(out_avals))
    _registry[cb_id] = (host, tuple(map(_spec, in_avals)), tuple(map(_spec, out_avals)), table_type)
    record = np.array([cb_id], dtype=np.int64)
    weakref.finalize(record, _registry.pop, cb_id, None)
    return record


@lower_materialized(callback_p, complex_ok=True)  # (buffers pass by pointer: any dtype)
def _callback_lower(ctx, *ops, callback, out_avals, effect, ordered, vmap_method):
    b = ctx.b
    in_ptrs = []
    for op in ops:
        if not op.is_buffer:  # a fused value or a scalar: give it memory first
            tmp = ctx.temp_buffer(op.aval)
            ctx.write(tmp, op, flat=True)
            op = tmp
        in_ptrs.append(op.ptr)
    ptrs = in_ptrs + [o.ptr for o in ctx.outs]
    table = ctx.workspace_region(8 * max(1, len(ptrs)))
    for k, p in enumerate(ptrs):
        slot = b.emit(f"getelementptr inbounds ptr, ptr {table}, i64 {k}")
        b.stmt(f"store ptr {p}, ptr {slot}, align 8")
    name = const_symbol(len(ctx.keep))
    ctx.keep.append(register(callback, [op.aval for op in ops], out_avals))
    b.module.declare(name, f"@{name} = external global i8")
    b.module.declare("fg_host_callback", "declare i32 @fg_host_callback(i64, ptr)")
    cb_id = b.emit(f"load i64, ptr @{name}, align 8")
    rc = b.emit(f"call i32 @fg_host_callback(i64 {cb_id}, ptr {table})")
    failed = b.emit(f"icmp ne i32 {rc}, 0")
    ok = b.label("cb_ok")
    b.cbr(failed, FAIL_LABEL, ok)
    b.start_block(ok)
    ctx.cb_fail_used = True  # (compiler.emit_core adds the %fg_fail_cb exit)
    return None
