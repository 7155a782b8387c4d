"""The eager fast path's hot calls as one native function (``eager_fast`` uses it).

In Python the fixed cost of a fast call (the function call, the trace-state check, the
type and dtype checks, the plan lookup, NumPy's error state around the call, freezing
the result) is ~0.5 us on top of NumPy's own ~0.25 us for a 3-element ``add``. Here one
``METH_FASTCALL | METH_KEYWORDS`` C function written in LLVM IR, ``@fg_main_eager_entry``,
does the same for the last plan a function used, and is the ``__call__`` of the class
``EagerFunction`` (a method descriptor made by ``PyDescr_NewMethod``; an instance keeps
the general function's name, docstring and attributes). It is also each instance's
*vectorcall* function (the same signature): the class has 8 bytes per instance after its
slots holding the entry's address and the type's ``tp_vectorcall_offset`` pointing at
them, so a call ``fnp.add(a, b)`` reaches the entry directly, not through the type's
``tp_call`` (an argument tuple, the ``__call__`` lookup, a descriptor call: ~40 ns).

An instance's ``_cfg`` is a list ``[fallback, flags, plan]``: ``fallback`` is the Python
fast form (``eager_fast``), which handles every call the entry does not and stores in
``plan`` the tuple ``(fn, dtype_0, ..., dtype_n-1)`` of the last call that needed no
conversion (one store: a reader never sees half of a plan). ``flags`` is an int: bit 0
silences floating-point errors around the call (``fp_errors``), bit 1 (``SEQ``) makes the
one operand a non-empty list/tuple of ndarrays, each checked as an operand against
``dtype_0`` (``concatenate``), bits 8-15 and 16-23 bound the operands' ranks, bit 2
(``GEMM``) calls ``cfg[3]`` for two aligned C-contiguous matrices, each dimension in
[2, 2^31), whose product has at least bits 32-63 elements (``matmul``: ``numpy.matmul``
there, see ``eager_fast``), and leaves an operand of one element to ``fallback``
(``numpy.dot`` would skip its products with a 0 there: ``dot.blas_dot``). The entry
takes the plan when there are no keywords, no staging trace (``trace.STAGING[0]`` is 0,
or ``TRACE_STATE.dynamic is None``), as many operands as dtypes, each an
``ndarray`` (or an ``Array`` whose base is one, passed as that base, as ``eager_fast``
does) of exactly that dtype object and of a rank in bounds. It then calls ``fn`` and
freezes the result as ``eager_fast`` does (writeable flag cleared, viewed as ``Array``;
a NumPy scalar is made a 0-d array first, ``PyArray_FromAny``). Any other call, and any
error raised by ``fn`` (the Python path then gives the general path's error), goes to
``fallback`` with the same arguments.

Quiet calls run with NumPy's error state "ignore". Setting NumPy's context variable
around the call (``PyContextVar_Set``/``Reset``: two mapping copies and a token) cost
~0.1 us; instead the entry enters a private ``contextvars.Context`` holding only that
variable (``PyContext_Enter``/``Exit``: pointer swaps) for the NumPy call, in which
nothing but NumPy's own lookup of its error state runs (numeric ufuncs, ``dot``,
``concatenate`` on plain ndarrays call no Python code). If that context is busy (entered
by another thread whose call released the GIL, or by a call further up this thread) the
entry sets the variable in the caller's context as before; if a call changed it (code
run by the garbage collector during the call setting a context variable) the entry stops
using it (``CONTEXT``) and ``enable`` makes a fresh one.

The library is compiled on first need (``enable``; the disk cache keeps its object code):
never at import. What it shares with the jit entry (``lowering/native_entry.py``) is in
``lowering/native_call.py``: declarations and binding by name, the staging check, the
freezing of the result, the method descriptor. Offsets (``native_call.available``
verifies them): ``ob_type`` 8, list ``ob_item`` 24, tuple size 16 and items 24, ndarray
nd 24, base 48, descr 56, flags 64; the ``_cfg`` slot's offset is checked at install,
a ``Context``'s variables' (24) when the context is made, and the type fields
``tp_basicsize`` (32), ``tp_vectorcall_offset`` (56) and ``tp_flags`` (168) against
``__basicsize__``/``__flags__`` before the class is widened (without them: ``__call__``).
"""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from funcgrad.core.trace import STAGING as _STAGING

QUIET = 1  # flags bit 0: NumPy's floating-point errors ignored around the call
SEQ = 2  # flags bit 1: one operand, a list/tuple of ndarrays (each checked), passed as it is
GEMM = 4  # flags bit 2: two aligned C-contiguous matrices, dimensions in [2, 2^31), whose
#           product has >= bits 32-63 elements: call ``cfg[3]`` instead of the plan's fn


def flags(quiet: bool, min_rank: int = 0, max_rank: int = 64, seq: bool = False, gemm_min: int = 0) -> int:
    return (QUIET if quiet else 0) | (SEQ if seq else 0) | (min_rank << 8) | (max_rank << 16) \
        | ((GEMM | gemm_min << 32) if gemm_min else 0)


class EagerFunction:
    """A ``funcgrad.numpy`` function with a native eager fast path (see the module)."""

    __slots__ = ("_cfg", "__dict__", "__weakref__")

    def __init__(self, cfg: list):
        self._cfg = cfg  # [fallback, flags, plan] (+ [GEMM's function])
        if _VECTORCALL:
            _instances.add(self)
            if _state.get("entry"):
                ctypes.c_void_p.from_address(id(self) + _VECTORCALL).value = _state["entry"]

    def __call__(self, *args, **kwargs):  # until ``enable`` installs the native entry
        if not _STAGING[0]:  # (eager calls only: under a trace the entry never runs, and a
            _count[0] += 1   # jit's first call should not pay for building it)
            if _count[0] == ENABLE_AFTER:
                enable()
        return self._cfg[0](*args, **kwargs)

    def __reduce__(self):  # pickled by reference, as the function it stands for
        return self.__qualname__

    def __repr__(self):
        return f"<funcgrad.numpy function {getattr(self, '__name__', '?')}>"


# The entry needs NumPy 2's error-state context variable and a 64-bit CPython.
POSSIBLE = np.lib.NumpyVersion(np.__version__) >= "2.0.0" and ctypes.sizeof(ctypes.c_void_p) == 8

# ``PyTypeObject`` fields (CPython 3.8+, 64-bit) and the flag that makes a call of an
# instance read the function to call from the instance itself (``tp_vectorcall_offset``).
_TP_BASICSIZE, _TP_VECTORCALL_OFFSET, _TP_FLAGS = 32, 56, 168
_HAVE_VECTORCALL = 1 << 11


def _add_vectorcall_slot(cls) -> int:
    """Give ``cls`` (no instance made yet) 8 more bytes per instance, after its slots,
    for a vectorcall function pointer; return their offset, or 0 if the type's layout
    is not the one expected (then calls go through ``__call__``). The bytes are no slot:
    the garbage collector and deallocation never read them; while they are null (an
    instance made before ``enable``), a call takes ``__call__`` as before."""
    if not POSSIBLE:
        return 0
    try:
        field = lambda off: ctypes.c_ssize_t.from_address(id(cls) + off)  # noqa: E731
        if field(_TP_BASICSIZE).value != cls.__basicsize__ or field(_TP_FLAGS).value != cls.__flags__ \
                or field(_TP_VECTORCALL_OFFSET).value != 0 or cls.__flags__ & _HAVE_VECTORCALL:
            return 0
        offset = cls.__basicsize__
        field(_TP_BASICSIZE).value = offset + 8
        return offset if cls.__basicsize__ == offset + 8 else 0
    except (ValueError, TypeError, OSError):  # pragma: no cover - exotic interpreter
        return 0


def _set_vectorcall(on: bool) -> None:
    """Point every instance's vectorcall slot at the entry and set the type's flag (on),
    or clear the flag: calls then go through ``__call__`` (set after any assignment to
    ``__call__``, which clears the flag on Python 3.12+)."""
    cls = EagerFunction
    flags_ = ctypes.c_ulong.from_address(id(cls) + _TP_FLAGS)
    if on:
        ctypes.c_ssize_t.from_address(id(cls) + _TP_VECTORCALL_OFFSET).value = _VECTORCALL
        for f in list(_instances):
            ctypes.c_void_p.from_address(id(f) + _VECTORCALL).value = _state["entry"]
        flags_.value |= _HAVE_VECTORCALL
    else:
        flags_.value &= ~_HAVE_VECTORCALL


_VECTORCALL = _add_vectorcall_slot(EagerFunction)  # (the instance offset of the pointer; 0: none)
_instances: weakref.WeakSet = weakref.WeakSet()
ENABLE_AFTER = 256  # calls (of any of them) before the library is compiled: none at import
_count = [0]
_state: dict = {}


_OWN = ("fg_eager_errvar", "fg_eager_ignore", "fg_eager_context")
# The private context the entry runs quiet calls in (``_private_context``): its address
# and its variables mapping's as made. The entry sets the first to 0 (and from then on
# sets the error-state variable in the caller's context instead) if code run during a
# call changed that context or left another entered; ``enable`` makes a new one.
CONTEXT = (ctypes.c_void_p * 2)()
_SHARED = ("fg_py_ndarray", "fg_py_array", "fg_py_none", "fg_py_list", "fg_py_tuple", "fg_py_staging", "fg_py_zero",
           "fg_py_trace_state", "fg_py_str_dynamic")
_FUNCS = ("PyObject_GetAttr", "PyErr_Clear", "Py_DecRef", "PyLong_AsLongLong", "PyObject_Vectorcall",
          "PyContextVar_Set", "PyContextVar_Reset", "PyContext_Enter", "PyContext_Exit", "fg_np_view",
          "fg_np_from_any")


def _text(cfg_offset: int) -> str:
    from funcgrad.lowering import native_call

    return native_call.declare(_OWN + _SHARED + _FUNCS) + native_call.FREEZE + f"""\
define ptr @fg_main_eager_entry(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) {{
entry:
  %plain = alloca [4 x ptr]
  %nargs = and i64 %nargsf, 9223372036854775807
  %cfgp = getelementptr i8, ptr %self, i64 {cfg_offset}
  %cfg = load ptr, ptr %cfgp
  %itp = getelementptr i8, ptr %cfg, i64 24
  %items = load ptr, ptr %itp
  %fb = load ptr, ptr %items
  %flp = getelementptr ptr, ptr %items, i64 1
  %flo = load ptr, ptr %flp
  %plp = getelementptr ptr, ptr %items, i64 2
  %plan = load ptr, ptr %plp
  %haskw = icmp ne ptr %kwnames, null
  %noplan = icmp eq ptr %plan, @fg_py_none
  %skip = or i1 %haskw, %noplan
  br i1 %skip, label %fallback, label %chk_n
chk_n:
  %psp = getelementptr i8, ptr %plan, i64 16
  %psize = load i64, ptr %psp
  %want = sub i64 %psize, 1
  %nok = icmp eq i64 %want, %nargs
  br i1 %nok, label %chk_staging, label %fallback
{native_call.not_staging('chk_staging', 'get_flags', 'fallback', 'clear_fallback')}get_flags:
  %fl = call i64 @PyLong_AsLongLong(ptr %flo)
  %lo = lshr i64 %fl, 8
  %lo8 = and i64 %lo, 255
  %hi = lshr i64 %fl, 16
  %hi8 = and i64 %hi, 255
  %pitems = getelementptr i8, ptr %plan, i64 24
  %seqbit = and i64 %fl, 2
  %isseq = icmp ne i64 %seqbit, 0
  br i1 %isseq, label %seq, label %loop
seq:
  %s = load ptr, ptr %args
  %seqtp = getelementptr i8, ptr %s, i64 8
  %seqt = load ptr, ptr %seqtp
  %islist = icmp eq ptr %seqt, @fg_py_list
  %istuple = icmp eq ptr %seqt, @fg_py_tuple
  %sszp = getelementptr i8, ptr %s, i64 16
  %ssz = load i64, ptr %sszp
  %sip = getelementptr i8, ptr %s, i64 24
  %lit = load ptr, ptr %sip
  %sitems = select i1 %islist, ptr %lit, ptr %sip
  %isseqt = or i1 %islist, %istuple
  %nonempty = icmp sgt i64 %ssz, 0
  %seqok = and i1 %isseqt, %nonempty
  %wdp0 = getelementptr ptr, ptr %pitems, i64 1
  %wd0 = load ptr, ptr %wdp0
  br i1 %seqok, label %sloop, label %fallback
sloop:
  %j = phi i64 [ 0, %seq ], [ %j1, %snext ]
  %smore = icmp slt i64 %j, %ssz
  br i1 %smore, label %sitem, label %sdone
sitem:
  %xp = getelementptr ptr, ptr %sitems, i64 %j
  %x = load ptr, ptr %xp
  %xtp = getelementptr i8, ptr %x, i64 8
  %xt = load ptr, ptr %xtp
  %xnd = icmp eq ptr %xt, @fg_py_ndarray
  br i1 %xnd, label %sdescr, label %fallback
sdescr:
  %xdp = getelementptr i8, ptr %x, i64 56
  %xd = load ptr, ptr %xdp
  %xdok = icmp eq ptr %xd, %wd0
  %xrp = getelementptr i8, ptr %x, i64 24
  %xr32 = load i32, ptr %xrp
  %xr = sext i32 %xr32 to i64
  %xge = icmp sge i64 %xr, %lo8
  %xle = icmp sle i64 %xr, %hi8
  %xrok = and i1 %xge, %xle
  %xok = and i1 %xdok, %xrok
  br i1 %xok, label %snext, label %fallback
snext:
  %j1 = add i64 %j, 1
  br label %sloop
sdone:
  store ptr %s, ptr %plain
  br label %call
loop:
  %i = phi i64 [ 0, %get_flags ], [ %i1, %next ]
  %more = icmp slt i64 %i, %nargs
  br i1 %more, label %arg, label %call
arg:
  %ap = getelementptr ptr, ptr %args, i64 %i
  %a = load ptr, ptr %ap
  %atp = getelementptr i8, ptr %a, i64 8
  %at = load ptr, ptr %atp
  %isnd = icmp eq ptr %at, @fg_py_ndarray
  br i1 %isnd, label %have, label %chk_array
chk_array:
  %isarr = icmp eq ptr %at, @fg_py_array
  br i1 %isarr, label %unwrap, label %fallback
unwrap:
  %bp = getelementptr i8, ptr %a, i64 48
  %b = load ptr, ptr %bp
  %bnull = icmp eq ptr %b, null
  br i1 %bnull, label %fallback, label %base_type
base_type:
  %btp = getelementptr i8, ptr %b, i64 8
  %bt = load ptr, ptr %btp
  %bnd = icmp eq ptr %bt, @fg_py_ndarray
  br i1 %bnd, label %have, label %fallback
have:
  %p = phi ptr [ %a, %arg ], [ %b, %base_type ]
  %dp = getelementptr i8, ptr %p, i64 56
  %d = load ptr, ptr %dp
  %i_1 = add i64 %i, 1
  %wdp = getelementptr ptr, ptr %pitems, i64 %i_1
  %wd = load ptr, ptr %wdp
  %dok = icmp eq ptr %d, %wd
  %ndp = getelementptr i8, ptr %p, i64 24
  %nd32 = load i32, ptr %ndp
  %nd = sext i32 %nd32 to i64
  %ge = icmp sge i64 %nd, %lo8
  %le = icmp sle i64 %nd, %hi8
  %rok = and i1 %ge, %le
  %ok = and i1 %dok, %rok
  br i1 %ok, label %next, label %fallback
next:
  %slot = getelementptr ptr, ptr %plain, i64 %i
  store ptr %p, ptr %slot
  %i1 = add i64 %i, 1
  br label %loop
call:
  %fn0 = load ptr, ptr %pitems
  %gemmbit = and i64 %fl, 4
  %isgemm = icmp ne i64 %gemmbit, 0
  br i1 %isgemm, label %gemm_chk, label %call_fn
gemm_chk:
  %g0 = load ptr, ptr %plain
  %g1p = getelementptr ptr, ptr %plain, i64 1
  %g1 = load ptr, ptr %g1p
  %g0ndp = getelementptr i8, ptr %g0, i64 24
  %g0nd = load i32, ptr %g0ndp
  %g1ndp = getelementptr i8, ptr %g1, i64 24
  %g1nd = load i32, ptr %g1ndp
  %s0dp = getelementptr i8, ptr %g0, i64 32
  %s0d = load ptr, ptr %s0dp
  %s0a = load i64, ptr %s0d
  %s0bp = getelementptr i64, ptr %s0d, i64 1
  %s0b = load i64, ptr %s0bp
  %s0one = icmp eq i32 %g0nd, 1
  %s0bb = select i1 %s0one, i64 1, i64 %s0b
  %s0n = mul i64 %s0a, %s0bb
  %s1dp = getelementptr i8, ptr %g1, i64 32
  %s1d = load ptr, ptr %s1dp
  %s1a = load i64, ptr %s1d
  %s1bp = getelementptr i64, ptr %s1d, i64 1
  %s1b = load i64, ptr %s1bp
  %s1one = icmp eq i32 %g1nd, 1
  %s1bb = select i1 %s1one, i64 1, i64 %s1b
  %s1n = mul i64 %s1a, %s1bb
  %s0sc = icmp eq i64 %s0n, 1
  %s1sc = icmp eq i64 %s1n, 1
  %gscalar = or i1 %s0sc, %s1sc
  br i1 %gscalar, label %fallback, label %gemm_lay
gemm_lay:
  %g0flp = getelementptr i8, ptr %g0, i64 64
  %g0fl = load i32, ptr %g0flp
  %g1flp = getelementptr i8, ptr %g1, i64 64
  %g1fl = load i32, ptr %g1flp
  %gfl = and i32 %g0fl, %g1fl
  %gca = and i32 %gfl, 257
  %g2d0 = icmp eq i32 %g0nd, 2
  %g2d1 = icmp eq i32 %g1nd, 2
  %g2d = and i1 %g2d0, %g2d1
  %gcc = icmp eq i32 %gca, 257
  %glay = and i1 %g2d, %gcc
  br i1 %glay, label %gemm_size, label %call_fn
gemm_size:
  %g0dp = getelementptr i8, ptr %g0, i64 32
  %g0d = load ptr, ptr %g0dp
  %rows = load i64, ptr %g0d
  %g0d1 = getelementptr i64, ptr %g0d, i64 1
  %inner = load i64, ptr %g0d1
  %g1dp = getelementptr i8, ptr %g1, i64 32
  %g1d = load ptr, ptr %g1dp
  %g1d1 = getelementptr i64, ptr %g1d, i64 1
  %cols = load i64, ptr %g1d1
  %rk = or i64 %rows, %inner
  %rkc = or i64 %rk, %cols
  %high = lshr i64 %rkc, 31
  %nothigh = icmp eq i64 %high, 0
  %grok = icmp sge i64 %rows, 2
  %gkok = icmp sge i64 %inner, 2
  %gcok = icmp sge i64 %cols, 2
  %rkok = and i1 %grok, %gkok
  %rkcok = and i1 %rkok, %gcok
  %dimok = and i1 %rkcok, %nothigh
  %outn = mul i64 %rows, %cols
  %gmin = lshr i64 %fl, 32
  %gbig = icmp sge i64 %outn, %gmin
  %gtake = and i1 %dimok, %gbig
  br i1 %gtake, label %gemm_alt, label %call_fn
gemm_alt:
  %altp = getelementptr ptr, ptr %items, i64 3
  %alt = load ptr, ptr %altp
  br label %call_fn
call_fn:
  %fn = phi ptr [ %fn0, %call ], [ %fn0, %gemm_lay ], [ %fn0, %gemm_size ], [ %alt, %gemm_alt ]
  %quiet = and i64 %fl, 1
  %isq = icmp ne i64 %quiet, 0
  br i1 %isq, label %call_quiet, label %call_plain
call_plain:
  %r0 = call ptr @PyObject_Vectorcall(ptr %fn, ptr %plain, i64 %nargs, ptr null)
  br label %called
call_quiet:
  %ctx = load ptr, ptr @fg_eager_context
  %usectx = icmp ne ptr %ctx, null
  br i1 %usectx, label %enter, label %call_var
enter:
  %en = call i32 @PyContext_Enter(ptr %ctx)
  %entered = icmp eq i32 %en, 0
  br i1 %entered, label %call_c, label %enter_failed
call_c:
  %r2 = call ptr @PyObject_Vectorcall(ptr %fn, ptr %plain, i64 %nargs, ptr null)
  %ex = call i32 @PyContext_Exit(ptr %ctx)
  %exok = icmp eq i32 %ex, 0
  br i1 %exok, label %exited, label %exit_failed
exit_failed:
  store ptr null, ptr @fg_eager_context
  %r2null = icmp eq ptr %r2, null
  br i1 %r2null, label %clear_fallback, label %exit_drop
exit_drop:
  call void @Py_DecRef(ptr %r2)
  br label %clear_fallback
exited:
  %varsp = getelementptr i8, ptr %ctx, i64 {_CTX_VARS}
  %vars = load ptr, ptr %varsp
  %pvp = getelementptr ptr, ptr @fg_eager_context, i64 1
  %pv = load ptr, ptr %pvp
  %pristine = icmp eq ptr %vars, %pv
  br i1 %pristine, label %called, label %ctx_spoilt
ctx_spoilt:
  store ptr null, ptr @fg_eager_context
  br label %called
enter_failed:
  call void @PyErr_Clear()
  br label %call_var
call_var:
  %tok = call ptr @PyContextVar_Set(ptr @fg_eager_errvar, ptr @fg_eager_ignore)
  %toknull = icmp eq ptr %tok, null
  br i1 %toknull, label %clear_fallback, label %call_q
call_q:
  %r1 = call ptr @PyObject_Vectorcall(ptr %fn, ptr %plain, i64 %nargs, ptr null)
  %r1null = icmp eq ptr %r1, null
  br i1 %r1null, label %q_err, label %q_reset
q_err:
  call void @PyErr_Clear()
  br label %q_reset
q_reset:
  %rs = call i32 @PyContextVar_Reset(ptr @fg_eager_errvar, ptr %tok)
  call void @Py_DecRef(ptr %tok)
  br label %called
called:
  %r = phi ptr [ %r0, %call_plain ], [ %r1, %q_reset ], [ %r2, %exited ], [ %r2, %ctx_spoilt ]
  %rnull = icmp eq ptr %r, null
  br i1 %rnull, label %clear_fallback, label %freeze
freeze:
  %rtp = getelementptr i8, ptr %r, i64 8
  %rt = load ptr, ptr %rtp
  %rnd = icmp eq ptr %rt, @fg_py_ndarray
  br i1 %rnd, label %frozen, label %done
frozen:
  %v = call ptr @fg_py_freeze(ptr %r)
  ret ptr %v
done:
  ; a NumPy scalar (a 0-d result, dot of vectors): a 0-d array first, then a 0-d value
  %z = call ptr @fg_np_from_any(ptr %r, ptr null, i32 0, i32 0, i32 0, ptr null)
  call void @Py_DecRef(ptr %r)
  %znull = icmp eq ptr %z, null
  br i1 %znull, label %clear_fallback, label %zfrozen
zfrozen:
  %zv = call ptr @fg_py_freeze(ptr %z)
  ret ptr %zv
clear_fallback:
  call void @PyErr_Clear()
  br label %fallback
fallback:
  %res = call ptr @PyObject_Vectorcall(ptr %fb, ptr %args, i64 %nargsf, ptr %kwnames)
  ret ptr %res
}}
"""


def _cfg_offset():
    """The byte offset of ``EagerFunction._cfg`` in an instance, or None if unverified."""
    probe = EagerFunction([None, 0, None])
    for off in (16, 24, 32):
        if ctypes.c_void_p.from_address(id(probe) + off).value == id(probe._cfg):
            return off
    return None


_CTX_VARS = 24  # offset of a ``contextvars.Context``'s variables (``ctx_vars``, a HAMT mapping)


def _private_context(var, value):
    """(a ``contextvars.Context`` holding only ``var = value``, its variables mapping), or
    None when the ``ctx_vars`` offset cannot be verified (then there is no entry)."""
    import contextvars

    ctx = contextvars.Context()
    ctx.run(var.set, value)
    at = lambda c: ctypes.c_void_p.from_address(id(c) + _CTX_VARS).value  # noqa: E731
    try:
        vars_, other = at(ctx), contextvars.copy_context()
        twin = ctx.copy()  # (a copy shares the mapping; a set in it makes a new one)
        ok = at(twin) == vars_ and type(ctypes.cast(vars_, ctypes.py_object).value).__name__ == "hamt"
        twin.run(var.set, None)
        ok = ok and at(twin) != vars_ and at(ctx) == vars_ and at(other) != vars_
    except (ValueError, TypeError, OSError):  # pragma: no cover - exotic interpreter
        return None
    return (ctx, ctypes.cast(vars_, ctypes.py_object).value) if ok else None


def _renew_context(var, value) -> bool:
    """Make a private context (``var = value``) the entry's ``CONTEXT``; False if the
    layout is not verified. (Every one made stays alive: an entry may still be in one.)"""
    made = _private_context(var, value)
    if made is None:
        return False
    _contexts.append(made)
    CONTEXT[1] = id(made[1])
    CONTEXT[0] = id(made[0])
    return True


_contexts: list = []


def _setup():
    """Compile the entry; return (descriptor, objects kept alive, its address) or None if
    this process cannot (another NumPy ABI, NumPy 1.x error state, no C API table)."""
    from funcgrad.lowering import engine, native_call

    if not native_call.available():
        return None
    try:
        from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    except ImportError:  # NumPy 1.x: no error-state context variable
        return None
    offset = _cfg_offset()
    if offset is None:
        return None
    ignore = _make_extobj(all="ignore")
    if not _renew_context(_extobj_contextvar, ignore):
        return None
    objects = {"fg_eager_errvar": _extobj_contextvar, "fg_eager_ignore": ignore}
    native_call.bind(objects, _FUNCS)
    engine.add_symbol("fg_eager_context", ctypes.addressof(CONTEXT))
    addrs = engine.compile_library(f"eager_native_entry/6/{offset}", lambda: _text(offset), ["eager_entry"])
    return native_call.method(EagerFunction, addrs["eager_entry"]), objects, addrs["eager_entry"]


def _forward(self, *args, **kwargs):
    return self._cfg[0](*args, **kwargs)


def enable(on: bool = True) -> bool:
    """Make the native entry every ``EagerFunction``'s ``__call__`` (compiling it once);
    False if this process cannot, and then calls stay on the Python fast path.
    ``enable(False)`` puts the Python fast path back (tests run both)."""
    if "descr" not in _state:
        try:
            made = _setup()
        except Exception as e:  # noqa: BLE001 - (a failed compilation) the Python fast path serves
            made, _state["error"] = None, e  # (kept for tests and bug reports)
        _state["descr"] = made and made[0]
        _state["keep"] = made and made[1]
        _state["entry"] = made and made[2]
    on = bool(on and _state["descr"])
    if on and not CONTEXT[0]:  # (spoilt by a call: see ``CONTEXT``)
        _renew_context(_state["keep"]["fg_eager_errvar"], _state["keep"]["fg_eager_ignore"])
    EagerFunction.__call__ = _state["descr"] if on else _forward
    if _VECTORCALL:  # (the entry is also each instance's vectorcall: no ``__call__`` lookup)
        _set_vectorcall(on)
    return on


__all__ = ["EagerFunction", "enable", "flags", "QUIET", "SEQ", "GEMM", "ENABLE_AFTER", "POSSIBLE"]
