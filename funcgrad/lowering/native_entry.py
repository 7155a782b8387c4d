"""A jitted function's call as a native builtin: argument checks, outputs, result tree.

``install`` compiles (once per process; the disk cache keeps its object code) one
``METH_FASTCALL | METH_KEYWORDS`` C function written in LLVM IR, ``@fg_main_disp_entry``,
and makes it the ``__call__`` of the jitted-function class as a method descriptor
(``PyDescr_NewMethod``). A call then runs no Python at all when one of the function's
*native plans* (``self._native_plans``, a list) matches its arguments:

- a plan is a tuple ``(program, executable, raise_status, keep...)``; ``program`` is an
  int64 ndarray that the entry interprets: opcodes that fetch positional arguments, dict
  values (by key object), list/tuple items, and check each leaf (an ndarray or funcgrad
  Array: exact type, rank, dims, dtype number, byte order, C-contiguous and aligned; a
  NumPy scalar of the exact dtype for a 0-d leaf; a Python float/complex by type, read at
  ``ob_fval``; an int through ``PyLong_AsLongLongAndOverflow``; a bool by identity);
- the outputs are allocated with NumPy's ``PyArray_NewFromDescr``, the core runs (the
  GIL released around long work, as ``dispatch.tuple_entry`` does), then each output is
  frozen and wrapped exactly as ``core.array.fresh_caller`` does (read-only; viewed as a
  read-only ``Array``, 0-d ones too) and the output tree is built by a
  small postorder program (tuples, lists, dicts with str keys, None, leaves).

On any mismatch, with keyword arguments, inside ``disable_jit()`` or while a staging
trace is active, the entry calls the Python ``__call__`` (``fallback``) with the same
arguments, so every check, error message and cache-miss explanation stays as it is. A
non-zero status from the core calls the plan's ``raise_status`` (host-callback errors,
out of memory), as the Python path does. Plans are data, not code: a new signature
compiles nothing here.

What the two native entries share (this one and ``numpy_api/eager_native.py``) is in
``lowering/native_call.py``: the declarations and the binding by name at link time of
everything the IR refers to (type objects, ``None``/``True``/``False``, attribute names,
CPython's and NumPy's C API functions; no process address appears in the IR text), the
"nothing is staging" check (the ``core.trace.STAGING`` counter first), the freezing of
the outputs and the method descriptor. If an object layout cannot be verified or the
NumPy table is not found, ``available()`` is False and calls stay on the Python path.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.array import Array
from funcgrad.core.trace import TRACE_STATE
from funcgrad.lowering import dispatch, effects, engine, interrupt, native_call, native_entry_ir

MAX_PLANS = 8  # tried in order by the entry; more signatures use the Python plans
_MAX_NODES, _MAX_LEAVES, _MAX_OUTS = 256, 256, 64

# opcodes of a plan's program (see ``_MATCH``)
_END, _ARG, _DICT, _GET, _SEQ, _ITEM, _NONE, _ARR, _BOXED, _INT, _BOOL = range(11)
# opcodes of the output tree program (postorder; ``_END`` ends it)
_T_LEAF, _T_TUPLE, _T_LIST, _T_DICT, _T_NONE = range(1, 6)
_MAX_TREE = 120  # (the entry's tree stack has 128 slots)
_HEADER = 8  # nargs, n_in, n_out, core, release, tree at, outputs at, perm at


def available() -> bool:
    """True when calls can be dispatched natively in this process."""
    return native_call.available()


# PyObject *entry(self, args, nargsf, kwnames): try the plans, else call the fallback.
ENTRY = """\
define ptr @fg_main_disp_entry(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) {
entry:
  %wptr = alloca [256 x ptr]
  %scratch = alloca [256 x i64]
  %nargs = and i64 %nargsf, 9223372036854775807
  %haskw = icmp ne ptr %kwnames, null
  br i1 %haskw, label %fallback, label %chk_disabled
chk_disabled:
  %dlp = getelementptr i8, ptr @fg_disp_disabled, i64 24
  %dli = load ptr, ptr %dlp
  %dl0 = load ptr, ptr %dli
  %enabled = icmp eq ptr %dl0, @fg_py_false
  br i1 %enabled, label %chk_trace, label %fallback
""" + native_call.not_staging("chk_trace", "get_plans", "fallback", "clear_fallback") + """\
get_plans:
  %plans = call ptr @PyObject_GetAttr(ptr %self, ptr @fg_disp_str_plans)
  %pnull = icmp eq ptr %plans, null
  br i1 %pnull, label %clear_fallback, label %plan_loop
plan_loop:
  %i = phi i64 [ 0, %get_plans ], [ %i1, %plan_next ]
  %np = getelementptr i8, ptr %plans, i64 16
  %n = load i64, ptr %np
  %more = icmp slt i64 %i, %n
  br i1 %more, label %plan_try, label %plans_done
plan_try:
  %itp = getelementptr i8, ptr %plans, i64 24
  %items = load ptr, ptr %itp
  %pp = getelementptr ptr, ptr %items, i64 %i
  %plan = load ptr, ptr %pp
  %prgp = getelementptr i8, ptr %plan, i64 24
  %prga = load ptr, ptr %prgp
  %prgd = getelementptr i8, ptr %prga, i64 16
  %prog = load ptr, ptr %prgd
  %m = call i32 @fg_disp_match(ptr %prog, ptr %args, i64 %nargs, ptr %wptr, ptr %scratch)
  %i1 = add i64 %i, 1
  %hit = icmp ne i32 %m, 0
  br i1 %hit, label %run, label %plan_next
plan_next:
  br label %plan_loop
run:
  call void @Py_IncRef(ptr %plan)
  call void @Py_DecRef(ptr %plans)
  %r = call ptr @fg_disp_run(ptr %prog, ptr %plan, ptr %wptr)
  call void @Py_DecRef(ptr %plan)
  ret ptr %r
plans_done:
  call void @Py_DecRef(ptr %plans)
  br label %fallback
clear_fallback:
  call void @PyErr_Clear()
  br label %fallback
fallback:
  %kwn = icmp eq ptr %kwnames, null
  br i1 %kwn, label %fb_count, label %fb_kw
fb_kw:
  %kwsp = getelementptr i8, ptr %kwnames, i64 16
  %kws = load i64, ptr %kwsp
  br label %fb_count
fb_count:
  %nkw = phi i64 [ 0, %fallback ], [ %kws, %fb_kw ]
  %tot = add i64 %nargs, %nkw
  %tot1 = add i64 %tot, 1
  %stack = alloca ptr, i64 %tot1
  store ptr %self, ptr %stack
  %rest = getelementptr ptr, ptr %stack, i64 1
  %bytes = shl i64 %tot, 3
  call void @llvm.memcpy.p0.p0.i64(ptr %rest, ptr %args, i64 %bytes, i1 false)
  %nargs1 = add i64 %nargs, 1
  %fr = call ptr @PyObject_Vectorcall(ptr @fg_disp_fallback, ptr %stack, i64 %nargs1, ptr %kwnames)
  ret ptr %fr
}
"""


def _text() -> str:
    return native_entry_ir.text() + ENTRY


def install(cls, fallback, trace_state, disabled: list, doc: str = ""):
    """Compile the entry and return the method descriptor that calls it as ``cls``'s
    ``__call__`` (the caller assigns it). ``fallback(self, *args, **kwargs)`` is the
    Python call; nothing may be staging (``trace_state``, which must be
    ``core.trace.TRACE_STATE``: ``native_call.not_staging`` reads it) and ``disabled[0]``
    must be False for the native plans (``self._native_plans``) to be tried."""
    if not native_call.available():
        raise RuntimeError("native dispatch is not available (NumPy ABI not verified)")
    if trace_state is not TRACE_STATE:
        raise ValueError("native dispatch: the trace state must be core.trace.TRACE_STATE")
    objects = {"fg_disp_fallback": fallback, "fg_disp_str_plans": "_native_plans", "fg_disp_disabled": disabled}
    native_call.bind(objects, native_entry_ir.FUNCS)
    addrs = engine.compile_library("native_dispatch_entry/2", _text, ["disp_entry"])
    descr = native_call.method(cls, addrs["disp_entry"], doc)
    _installed.append(objects)
    return descr


_installed: list = []  # the objects bound by each install: alive for the process


# --- plans ---------------------------------------------------------------------------------------

def raise_status(workspace_bytes: int, rc: int):
    """The error of a non-zero status from compiled code (as ``Executable._slow``); for
    an interrupt, what the signal's handler raised, or None: the entry runs it again."""
    if rc == interrupt.STATUS:
        interrupt.handle()
        return None
    effects.raise_pending()  # a host callback raised: its exception
    if rc == 2:
        raise MemoryError(f"compiled function: cannot allocate {workspace_bytes} bytes of workspace")
    raise RuntimeError(f"compiled function failed with status {rc}")


class _Builder:
    def __init__(self):
        self.ops, self.keep, self.nodes, self.leaves = [], [], 0, 0

    def node(self) -> int:
        self.nodes += 1
        return self.nodes - 1

    def leaf(self, reg: int, x, aval) -> bool:
        t, dtype, k = type(x), np.dtype(aval.dtype), self.leaves
        self.leaves += 1
        if t is np.ndarray or t is Array or isinstance(x, np.generic):
            num = dispatch.type_num(dtype)
            if num is None or x.dtype != dtype:
                return False
            scalar = dispatch.scalar_type(dtype) if not aval.shape else None
            self.keep.append(scalar)
            self.ops += [_ARR, reg, k, num, len(aval.shape), id(scalar) if scalar is not None else 0,
                         *aval.shape]
        elif t is float and dtype == np.float64 or t is complex and dtype == np.complex128:
            self.ops += [_BOXED, reg, k, id(t)]
        elif t is int and dtype == np.int64:
            self.ops += [_INT, reg, k]
        elif t is bool and dtype == np.bool_:
            self.ops += [_BOOL, reg, k]
        else:
            return False
        return True

    def walk(self, x, reg: int, avals) -> bool:
        """Ops checking ``x`` (in register ``reg``) as ``jit_dispatch.walk_args`` walks it."""
        t = type(x)
        if t is dict:
            if not all(type(key) is str for key in x):
                return False
            self.ops += [_DICT, reg, len(x)]
            self.keep.append(tuple(x))
            for key, v in x.items():
                r = self.node()
                self.ops += [_GET, r, reg, id(key)]
                if not self.walk(v, r, avals):
                    return False
            return True
        if t is list or t is tuple:
            self.ops += [_SEQ, reg, id(t), len(x)]
            for j, v in enumerate(x):
                r = self.node()
                self.ops += [_ITEM, r, reg, j, int(t is list)]
                if not self.walk(v, r, avals):
                    return False
            return True
        if x is None:
            self.ops += [_NONE, reg]
            return True
        if self.leaves >= len(avals):
            return False
        return self.leaf(reg, x, avals[self.leaves])


def _out_program(tree, ops, keys) -> bool:
    """Postorder ops building the output tree ``tree`` from the outputs (``_RUN``'s tree
    program): a leaf, None, or a tuple / list / dict (str keys) of such."""
    for td in tree.postorder():  # (iterative: an output may be nested deeper than the recursion limit)
        t = td.node_type
        if t is None:
            ops.append(_T_LEAF)
        elif t is type(None):
            ops.append(_T_NONE)
        elif t not in (tuple, list, dict) or (t is dict and not all(type(k) is str for k in td.aux)):
            return False
        elif t is dict:
            keys.extend(td.aux)
            ops += [_T_DICT, len(td.children), *[id(k) for k in td.aux]]
        else:
            ops += [_T_TUPLE if t is tuple else _T_LIST, len(td.children)]
        if len(ops) > _MAX_TREE:
            return False
    return True


def make_plan(args, walk_perm, exe, out_tree):
    """The native plan of a call (a tuple, see the module doc), or None when it cannot be
    dispatched natively. ``walk_perm[i]``: the walk-order index of flattened leaf ``i``
    (``jit_dispatch.leaf_perm``); ``exe``: the compiled ``Executable`` of the call."""
    if not native_call.available() or getattr(exe, "_module", None) is None:
        return None
    in_avals, out_avals = exe.in_avals, exe.out_avals
    tree, key_objs = [], []
    n_out = len(out_avals)
    if not _out_program(out_tree, tree, key_objs) or len(tree) > _MAX_TREE or n_out > _MAX_OUTS \
            or len(in_avals) > _MAX_LEAVES:
        return None
    # Walk-order avals: leaf k of the walk is flattened leaf i where walk_perm[i] == k.
    walk_avals = [None] * len(in_avals)
    for i, k in enumerate(walk_perm):
        walk_avals[k] = in_avals[i]
    if None in walk_avals:
        return None
    b = _Builder()
    for i, a in enumerate(args):
        r = b.node()
        b.ops += [_ARG, r, i]
        if not b.walk(a, r, walk_avals):
            return None
    if b.leaves != len(in_avals) or b.nodes > _MAX_NODES:
        return None
    outs = []
    descrs = [np.dtype(a.dtype) for a in out_avals]
    for a, d in zip(out_avals, descrs):
        if dispatch.type_num(d) is None:
            return None
        outs += [id(d), len(a.shape), *a.shape]
    ops = b.ops + [_END]
    at_outs = _HEADER + len(ops)
    at_tree = at_outs + len(outs)
    at_perm = at_tree + len(tree) + 1
    header = [len(args), len(in_avals), n_out, exe._module.addrs["entry_ptrs"], int(bool(exe.stats["release_gil"])),
              at_tree, at_outs, at_perm]
    prog = np.array(header + ops + outs + tree + [_END] + list(walk_perm) + [0] * 4, dtype=np.int64)
    err = _bound(raise_status, exe.stats.get("workspace_bytes", 0))
    # (the entry reads item 0, the program, and item 2, ``err``; the rest stays alive with it)
    return (prog, exe, err, descrs, key_objs, b.keep)


def _bound(fn, first):
    def raise_it(rc):
        fn(first, rc)

    return raise_it


__all__ = ["available", "install", "make_plan", "raise_status", "MAX_PLANS"]
