"""The LLVM IR of the native jit entry's helpers (``native_entry``): one module per process.

``@fg_disp_match`` interprets a plan's program (the opcodes of ``native_entry``: fetch an
argument, a dict value by key, a list/tuple item; check a container; check a leaf and
record its data pointer). ``@fg_disp_run`` allocates the outputs, runs the core through the
executable's ``entry_ptrs`` (GIL released when the plan says so), freezes and wraps the
outputs (``native_call.FREEZE``) and builds the result tree (a postorder program on a
stack). The entry itself, ``native_entry.ENTRY``, checks the global state, tries the plans
and otherwise calls the Python fallback. Offsets: ``ob_type`` 8, ``ob_size``/``ma_used``
16, tuple items 24, list ``ob_item`` 24, ndarray data 16, nd 24, dims 32, descr 56, flags
64, descr byteorder 26 and type_num 28 (verified at import: ``dispatch.LAYOUT_OK``,
``native_call.layout_ok``). Declarations come from ``native_call.declare``; every
external name is bound at link time (``native_entry.install``).
"""
from __future__ import annotations

from funcgrad.lowering import native_call

# What the helpers and the entry refer to, bound at link time (``native_entry.install``).
OWN_OBJECTS = ("fg_disp_fallback", "fg_disp_str_plans", "fg_disp_disabled")
SHARED_OBJECTS = ("fg_py_ndarray", "fg_py_array", "fg_py_dict", "fg_py_int", "fg_py_none", "fg_py_true",
                  "fg_py_false", "fg_py_zero", "fg_py_staging", "fg_py_trace_state", "fg_py_str_dynamic")
FUNCS = ("PyObject_GetAttr", "PyErr_Clear", "PyErr_Occurred", "Py_IncRef", "Py_DecRef", "PyDict_GetItemWithError",
         "PyLong_AsLongLongAndOverflow", "PyObject_Vectorcall", "PyTuple_New", "PyList_New", "PyDict_New",
         "PyDict_SetItem", "PyLong_FromLongLong", "PyEval_SaveThread", "PyEval_RestoreThread",
         "fg_np_new_from_descr", "fg_np_view")

# i32 match(program, args, nargs, wptr, scratch): 1 when every check of the program holds;
# fills wptr[k] with leaf k's data pointer (walk order). Registers hold borrowed objects.
_MATCH = """\
define internal i32 @fg_disp_match(ptr %prog, ptr %args, i64 %nargs, ptr %wptr, ptr %scratch) {
entry:
  %regs = alloca [256 x ptr]
  %ovf = alloca i32
  %pcp = alloca i64
  %na = load i64, ptr %prog
  %nok = icmp eq i64 %na, %nargs
  store i64 8, ptr %pcp
  br i1 %nok, label %loop, label %fail
loop:
  %pc = load i64, ptr %pcp
  %opp = getelementptr i64, ptr %prog, i64 %pc
  %op = load i64, ptr %opp
  %a1p = getelementptr i64, ptr %opp, i64 1
  %a1 = load i64, ptr %a1p
  %a2p = getelementptr i64, ptr %opp, i64 2
  %a2 = load i64, ptr %a2p
  %a3p = getelementptr i64, ptr %opp, i64 3
  %a4p = getelementptr i64, ptr %opp, i64 4
  %a1c = and i64 %a1, 255
  %r1p = getelementptr ptr, ptr %regs, i64 %a1c
  %o1 = load ptr, ptr %r1p
  %t1p = getelementptr i8, ptr %o1, i64 8
  switch i64 %op, label %fail [ i64 0, label %ok
    i64 1, label %op_arg  i64 2, label %op_dict  i64 3, label %op_get  i64 4, label %op_seq
    i64 5, label %op_item  i64 6, label %op_none  i64 7, label %op_arr  i64 8, label %op_boxed
    i64 9, label %op_int  i64 10, label %op_bool ]
op_arg:
  %ap = getelementptr ptr, ptr %args, i64 %a2
  %av = load ptr, ptr %ap
  store ptr %av, ptr %r1p
  br label %next3
next3:
  %pc3 = add i64 %pc, 3
  store i64 %pc3, ptr %pcp
  br label %loop
op_dict:
  %dt = load ptr, ptr %t1p
  %isd = icmp eq ptr %dt, @fg_py_dict
  br i1 %isd, label %dict_n, label %fail
dict_n:
  %dup = getelementptr i8, ptr %o1, i64 16
  %du = load i64, ptr %dup
  %dok = icmp eq i64 %du, %a2
  br i1 %dok, label %next3, label %fail
op_get:
  %a3 = load i64, ptr %a3p
  %key = inttoptr i64 %a3 to ptr
  %a2c = and i64 %a2, 255
  %r2p = getelementptr ptr, ptr %regs, i64 %a2c
  %o2 = load ptr, ptr %r2p
  %gv = call ptr @PyDict_GetItemWithError(ptr %o2, ptr %key)
  %gnull = icmp eq ptr %gv, null
  br i1 %gnull, label %clear_fail, label %get_ok
get_ok:
  store ptr %gv, ptr %r1p
  %pc4 = add i64 %pc, 4
  store i64 %pc4, ptr %pcp
  br label %loop
op_seq:
  %st = load ptr, ptr %t1p
  %want = inttoptr i64 %a2 to ptr
  %isseq = icmp eq ptr %st, %want
  br i1 %isseq, label %seq_n, label %fail
seq_n:
  %sa3 = load i64, ptr %a3p
  %snp = getelementptr i8, ptr %o1, i64 16
  %sn = load i64, ptr %snp
  %snok = icmp eq i64 %sn, %sa3
  br i1 %snok, label %seq_ok, label %fail
seq_ok:
  %spc = add i64 %pc, 4
  store i64 %spc, ptr %pcp
  br label %loop
op_item:
  %ia3 = load i64, ptr %a3p
  %ia4 = load i64, ptr %a4p
  %ia2c = and i64 %a2, 255
  %ir2p = getelementptr ptr, ptr %regs, i64 %ia2c
  %io2 = load ptr, ptr %ir2p
  %iinl = getelementptr i8, ptr %io2, i64 24
  %islist = icmp ne i64 %ia4, 0
  br i1 %islist, label %item_list, label %item_get
item_list:
  %lip = load ptr, ptr %iinl
  br label %item_get
item_get:
  %items = phi ptr [ %iinl, %op_item ], [ %lip, %item_list ]
  %itp = getelementptr ptr, ptr %items, i64 %ia3
  %itv = load ptr, ptr %itp
  store ptr %itv, ptr %r1p
  %ipc = add i64 %pc, 5
  store i64 %ipc, ptr %pcp
  br label %loop
op_none:
  %isnone = icmp eq ptr %o1, @fg_py_none
  br i1 %isnone, label %none_ok, label %fail
none_ok:
  %npc = add i64 %pc, 2
  store i64 %npc, ptr %pcp
  br label %loop
op_arr:
  %at = load ptr, ptr %t1p
  %isnd = icmp eq ptr %at, @fg_py_ndarray
  %isfa = icmp eq ptr %at, @fg_py_array
  %isany = or i1 %isnd, %isfa
  %aa3 = load i64, ptr %a3p
  %aa4 = load i64, ptr %a4p
  br i1 %isany, label %arr_check, label %arr_scalar
arr_check:
  %ndp = getelementptr i8, ptr %o1, i64 24
  %nd = load i32, ptr %ndp
  %nd64 = sext i32 %nd to i64
  %ndok = icmp eq i64 %nd64, %aa4
  %flp = getelementptr i8, ptr %o1, i64 64
  %fl = load i32, ptr %flp
  %flm = and i32 %fl, 257
  %flok = icmp eq i32 %flm, 257
  %dsp = getelementptr i8, ptr %o1, i64 56
  %ds = load ptr, ptr %dsp
  %tnp = getelementptr i8, ptr %ds, i64 28
  %tn = load i32, ptr %tnp
  %tn64 = sext i32 %tn to i64
  %tnok = icmp eq i64 %tn64, %aa3
  %bop = getelementptr i8, ptr %ds, i64 26
  %bo = load i8, ptr %bop
  %book = icmp ne i8 %bo, 62
  %c1 = and i1 %ndok, %flok
  %c2 = and i1 %c1, %tnok
  %c3 = and i1 %c2, %book
  br i1 %c3, label %dims_head, label %fail
dims_head:
  %dmp = getelementptr i8, ptr %o1, i64 32
  %dm = load ptr, ptr %dmp
  %want0 = getelementptr i64, ptr %opp, i64 6
  br label %dims_loop
dims_loop:
  %d = phi i64 [ 0, %dims_head ], [ %d1, %dims_next ]
  %dmore = icmp slt i64 %d, %aa4
  br i1 %dmore, label %dims_body, label %arr_data
dims_body:
  %hp = getelementptr i64, ptr %dm, i64 %d
  %have = load i64, ptr %hp
  %wp = getelementptr i64, ptr %want0, i64 %d
  %wv = load i64, ptr %wp
  %d1 = add i64 %d, 1
  %deq = icmp eq i64 %have, %wv
  br i1 %deq, label %dims_next, label %fail
dims_next:
  br label %dims_loop
arr_data:
  %ddp = getelementptr i8, ptr %o1, i64 16
  %dd = load ptr, ptr %ddp
  br label %arr_store
arr_scalar:
  %a5p = getelementptr i64, ptr %opp, i64 5
  %a5 = load i64, ptr %a5p
  %sct = inttoptr i64 %a5 to ptr
  %scok1 = icmp ne i64 %a5, 0
  %scok2 = icmp eq ptr %at, %sct
  %scok = and i1 %scok1, %scok2
  %sdp = getelementptr i8, ptr %o1, i64 16
  br i1 %scok, label %arr_store, label %fail
arr_store:
  %adata = phi ptr [ %dd, %arr_data ], [ %sdp, %arr_scalar ]
  %aw = getelementptr ptr, ptr %wptr, i64 %a2
  store ptr %adata, ptr %aw
  %apc0 = add i64 %pc, 6
  %apc = add i64 %apc0, %aa4
  store i64 %apc, ptr %pcp
  br label %loop
op_boxed:
  %bt = load ptr, ptr %t1p
  %ba3 = load i64, ptr %a3p
  %bwant = inttoptr i64 %ba3 to ptr
  %bok = icmp eq ptr %bt, %bwant
  %bdp = getelementptr i8, ptr %o1, i64 16
  %bw = getelementptr ptr, ptr %wptr, i64 %a2
  br i1 %bok, label %boxed_ok, label %fail
boxed_ok:
  store ptr %bdp, ptr %bw
  br label %next4
next4:
  %pcb = add i64 %pc, 4
  store i64 %pcb, ptr %pcp
  br label %loop
op_int:
  %it = load ptr, ptr %t1p
  %isint = icmp eq ptr %it, @fg_py_int
  br i1 %isint, label %int_read, label %fail
int_read:
  store i32 0, ptr %ovf
  %iv = call i64 @PyLong_AsLongLongAndOverflow(ptr %o1, ptr %ovf)
  %ov = load i32, ptr %ovf
  %ovok = icmp eq i32 %ov, 0
  br i1 %ovok, label %int_err, label %fail
int_err:
  %ierr = call ptr @PyErr_Occurred()
  %inoerr = icmp eq ptr %ierr, null
  br i1 %inoerr, label %scalar_store, label %clear_fail
op_bool:
  %ist = icmp eq ptr %o1, @fg_py_true
  %isf = icmp eq ptr %o1, @fg_py_false
  %isb = or i1 %ist, %isf
  %bv = zext i1 %ist to i64
  br i1 %isb, label %scalar_store, label %fail
scalar_store:
  %sv = phi i64 [ %iv, %int_err ], [ %bv, %op_bool ]
  %sp = getelementptr i64, ptr %scratch, i64 %a2
  store i64 %sv, ptr %sp
  %sw = getelementptr ptr, ptr %wptr, i64 %a2
  store ptr %sp, ptr %sw
  br label %next3
clear_fail:
  %cerr = call ptr @PyErr_Occurred()
  %cnone = icmp eq ptr %cerr, null
  br i1 %cnone, label %fail, label %do_clear
do_clear:
  call void @PyErr_Clear()
  br label %fail
ok:
  ret i32 1
fail:
  ret i32 0
}
"""

# PyObject *run(program, plan, wptr): allocate outputs, run the core, wrap, build the tree.
_RUN = """\
define internal ptr @fg_disp_run(ptr %prog, ptr %plan, ptr %wptr) {
entry:
  %ptrs = alloca [320 x ptr]
  %outs = alloca [64 x ptr]
  %one = alloca ptr
  %stk = alloca [128 x ptr]
  %tpcp = alloca i64
  %spp = alloca i64
  %leafp = alloca i64
  %nip = getelementptr i64, ptr %prog, i64 1
  %nin = load i64, ptr %nip
  %nop = getelementptr i64, ptr %prog, i64 2
  %nout = load i64, ptr %nop
  %corep = getelementptr i64, ptr %prog, i64 3
  %corei = load i64, ptr %corep
  %core = inttoptr i64 %corei to ptr
  %relp = getelementptr i64, ptr %prog, i64 4
  %rel = load i64, ptr %relp
  %treep = getelementptr i64, ptr %prog, i64 5
  %treeat = load i64, ptr %treep
  %osp = getelementptr i64, ptr %prog, i64 6
  %os = load i64, ptr %osp
  %permp = getelementptr i64, ptr %prog, i64 7
  %perm = load i64, ptr %permp
  br label %in_loop
in_loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %in_body ]
  %imore = icmp slt i64 %i, %nin
  br i1 %imore, label %in_body, label %out_head
in_body:
  %pip = getelementptr i64, ptr %prog, i64 %perm
  %pi = getelementptr i64, ptr %pip, i64 %i
  %wk = load i64, ptr %pi
  %wsrc = getelementptr ptr, ptr %wptr, i64 %wk
  %wv = load ptr, ptr %wsrc
  %pdst = getelementptr ptr, ptr %ptrs, i64 %i
  store ptr %wv, ptr %pdst
  %i1 = add i64 %i, 1
  br label %in_loop
out_head:
  br label %out_loop
out_loop:
  %j = phi i64 [ 0, %out_head ], [ %j1, %out_ok ]
  %pc = phi i64 [ %os, %out_head ], [ %pcn, %out_ok ]
  %jmore = icmp slt i64 %j, %nout
  br i1 %jmore, label %out_body, label %call
out_body:
  %dp = getelementptr i64, ptr %prog, i64 %pc
  %di = load i64, ptr %dp
  %descr = inttoptr i64 %di to ptr
  %ndp = getelementptr i64, ptr %dp, i64 1
  %nd = load i64, ptr %ndp
  %nd32 = trunc i64 %nd to i32
  %dims = getelementptr i64, ptr %dp, i64 2
  call void @Py_IncRef(ptr %descr)
  %o = call ptr @fg_np_new_from_descr(ptr @fg_py_ndarray, ptr %descr, i32 %nd32, ptr %dims,
                                       ptr null, ptr null, i32 0, ptr null)
  %onull = icmp eq ptr %o, null
  br i1 %onull, label %alloc_fail, label %out_ok
out_ok:
  %oslot = getelementptr ptr, ptr %outs, i64 %j
  store ptr %o, ptr %oslot
  %odp = getelementptr i8, ptr %o, i64 16
  %od = load ptr, ptr %odp
  %pj = add i64 %nin, %j
  %pjp = getelementptr ptr, ptr %ptrs, i64 %pj
  store ptr %od, ptr %pjp
  %j1 = add i64 %j, 1
  %pc2 = add i64 %pc, 2
  %pcn = add i64 %pc2, %nd
  br label %out_loop
alloc_fail:
  call void @fg_disp_decref_range(ptr %outs, i64 0, i64 %j)
  ret ptr null
call:
  %endpc = phi i64 [ %pc, %out_loop ], [ %endpc, %interrupted_again ]
  %relz = icmp ne i64 %rel, 0
  br i1 %relz, label %call_nogil, label %call_gil
call_nogil:
  %ts = call ptr @PyEval_SaveThread()
  %rc1 = call i32 %core(ptr %ptrs)
  call void @PyEval_RestoreThread(ptr %ts)
  br label %called
call_gil:
  %rc2 = call i32 %core(ptr %ptrs)
  br label %called
called:
  %rc = phi i32 [ %rc1, %call_nogil ], [ %rc2, %call_gil ]
  %rcok = icmp eq i32 %rc, 0
  br i1 %rcok, label %wrap_head, label %check_interrupt
check_interrupt:
  %rcint = icmp eq i32 %rc, 130
  br i1 %rcint, label %interrupted, label %status
interrupted:
  %irco = call ptr @PyLong_FromLongLong(i64 130)
  %irconull = icmp eq ptr %irco, null
  br i1 %irconull, label %status, label %interrupted_call
interrupted_call:
  store ptr %irco, ptr %one
  %iefp = getelementptr i8, ptr %plan, i64 40
  %ief = load ptr, ptr %iefp
  %ier = call ptr @PyObject_Vectorcall(ptr %ief, ptr %one, i64 1, ptr null)
  call void @Py_DecRef(ptr %irco)
  %iernull = icmp eq ptr %ier, null
  br i1 %iernull, label %interrupted_raised, label %interrupted_again
interrupted_again:
  call void @Py_DecRef(ptr %ier)
  br label %call
interrupted_raised:
  call void @fg_disp_decref_range(ptr %outs, i64 0, i64 %nout)
  ret ptr null
status:
  call void @fg_disp_decref_range(ptr %outs, i64 0, i64 %nout)
  %rc64 = sext i32 %rc to i64
  %rco = call ptr @PyLong_FromLongLong(i64 %rc64)
  %rconull = icmp eq ptr %rco, null
  br i1 %rconull, label %retnull, label %raise
raise:
  store ptr %rco, ptr %one
  %efp = getelementptr i8, ptr %plan, i64 40
  %ef = load ptr, ptr %efp
  %er = call ptr @PyObject_Vectorcall(ptr %ef, ptr %one, i64 1, ptr null)
  call void @Py_DecRef(ptr %rco)
  %ernull = icmp eq ptr %er, null
  br i1 %ernull, label %retnull, label %raise_odd
raise_odd:
  call void @Py_DecRef(ptr %er)
  br label %retnull
retnull:
  ret ptr null
wrap_head:
  br label %wrap_loop
wrap_loop:
  %k = phi i64 [ 0, %wrap_head ], [ %k1, %wrap_next ]
  %kmore = icmp slt i64 %k, %nout
  br i1 %kmore, label %wrap_body, label %build
wrap_body:
  %kslot = getelementptr ptr, ptr %outs, i64 %k
  %ko = load ptr, ptr %kslot
  %kv = call ptr @fg_py_freeze(ptr %ko)
  store ptr %kv, ptr %kslot
  %k1 = add i64 %k, 1
  %kvnull = icmp eq ptr %kv, null
  br i1 %kvnull, label %view_fail, label %wrap_next
view_fail:
  call void @fg_disp_decref_range(ptr %outs, i64 0, i64 %k)
  call void @fg_disp_decref_range(ptr %outs, i64 %k1, i64 %nout)
  ret ptr null
wrap_next:
  br label %wrap_loop
build:
  store i64 %treeat, ptr %tpcp
  store i64 0, ptr %spp
  store i64 0, ptr %leafp
  br label %tree
tree:
  %tpc = load i64, ptr %tpcp
  %sp = load i64, ptr %spp
  %top = getelementptr ptr, ptr %stk, i64 %sp
  %top1 = getelementptr ptr, ptr %top, i64 1
  %sp1 = add i64 %sp, 1
  %topp = getelementptr i64, ptr %prog, i64 %tpc
  %top_op = load i64, ptr %topp
  %tnp = getelementptr i64, ptr %topp, i64 1
  %tn = load i64, ptr %tnp
  %tbase_i = sub i64 %sp, %tn
  %tbase = getelementptr ptr, ptr %stk, i64 %tbase_i
  %tbytes = shl i64 %tn, 3
  %tpc1 = add i64 %tpc, 1
  %tpc2 = add i64 %tpc, 2
  %sp_after = add i64 %tbase_i, 1
  switch i64 %top_op, label %tree_done [ i64 1, label %t_leaf  i64 2, label %t_tuple  i64 3, label %t_list
                                         i64 4, label %t_dict  i64 5, label %t_none ]
t_leaf:
  %lf = load i64, ptr %leafp
  %lfp = getelementptr ptr, ptr %outs, i64 %lf
  %lfo = load ptr, ptr %lfp
  store ptr %lfo, ptr %top
  %lf1 = add i64 %lf, 1
  store i64 %lf1, ptr %leafp
  br label %t_push1
t_push1:
  store i64 %sp1, ptr %spp
  store i64 %tpc1, ptr %tpcp
  br label %tree
t_none:
  call void @Py_IncRef(ptr @fg_py_none)
  store ptr @fg_py_none, ptr %top
  br label %t_push1
t_tuple:
  %tup = call ptr @PyTuple_New(i64 %tn)
  %tupnull = icmp eq ptr %tup, null
  br i1 %tupnull, label %tree_fail, label %t_tuple_fill
t_tuple_fill:
  %tupitems = getelementptr i8, ptr %tup, i64 24
  call void @llvm.memcpy.p0.p0.i64(ptr %tupitems, ptr %tbase, i64 %tbytes, i1 false)
  store ptr %tup, ptr %tbase
  br label %t_pushn
t_pushn:
  store i64 %sp_after, ptr %spp
  store i64 %tpc2, ptr %tpcp
  br label %tree
t_list:
  %lst = call ptr @PyList_New(i64 %tn)
  %lstnull = icmp eq ptr %lst, null
  br i1 %lstnull, label %tree_fail, label %t_list_fill
t_list_fill:
  %lstitp = getelementptr i8, ptr %lst, i64 24
  %lstitems = load ptr, ptr %lstitp
  call void @llvm.memcpy.p0.p0.i64(ptr %lstitems, ptr %tbase, i64 %tbytes, i1 false)
  store ptr %lst, ptr %tbase
  br label %t_pushn
t_dict:
  %dct = call ptr @PyDict_New()
  %dctnull = icmp eq ptr %dct, null
  br i1 %dctnull, label %tree_fail, label %t_dict_loop
t_dict_loop:
  %m = phi i64 [ 0, %t_dict ], [ %m1, %t_dict_set ]
  %mmore = icmp slt i64 %m, %tn
  br i1 %mmore, label %t_dict_body, label %t_dict_done
t_dict_body:
  %kp0 = getelementptr i64, ptr %topp, i64 2
  %kp = getelementptr i64, ptr %kp0, i64 %m
  %kiv = load i64, ptr %kp
  %kobj = inttoptr i64 %kiv to ptr
  %mslot = getelementptr ptr, ptr %tbase, i64 %m
  %mo = load ptr, ptr %mslot
  %src = call i32 @PyDict_SetItem(ptr %dct, ptr %kobj, ptr %mo)
  %m1 = add i64 %m, 1
  %srok = icmp eq i32 %src, 0
  br i1 %srok, label %t_dict_set, label %t_dict_fail
t_dict_set:
  br label %t_dict_loop
t_dict_fail:
  call void @Py_DecRef(ptr %dct)
  br label %tree_fail
t_dict_done:
  call void @fg_disp_decref_range(ptr %tbase, i64 0, i64 %tn)
  store ptr %dct, ptr %tbase
  store i64 %sp_after, ptr %spp
  %tpcd = add i64 %tpc2, %tn
  store i64 %tpcd, ptr %tpcp
  br label %tree
tree_done:
  %res = load ptr, ptr %stk
  ret ptr %res
tree_fail:
  %fsp = load i64, ptr %spp
  call void @fg_disp_decref_range(ptr %stk, i64 0, i64 %fsp)
  %fleaf = load i64, ptr %leafp
  call void @fg_disp_decref_range(ptr %outs, i64 %fleaf, i64 %nout)
  ret ptr null
}

define internal void @fg_disp_decref_range(ptr %outs, i64 %from, i64 %to) {
entry:
  br label %loop
loop:
  %i = phi i64 [ %from, %entry ], [ %i1, %body ]
  %more = icmp slt i64 %i, %to
  br i1 %more, label %body, label %done
body:
  %p = getelementptr ptr, ptr %outs, i64 %i
  %o = load ptr, ptr %p
  call void @Py_DecRef(ptr %o)
  %i1 = add i64 %i, 1
  br label %loop
done:
  ret void
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
"""

def text() -> str:
    """The helpers of ``@fg_main_disp_entry`` (``native_entry.ENTRY``) and their declarations."""
    return native_call.declare(OWN_OBJECTS + SHARED_OBJECTS + FUNCS) + _MATCH + _RUN + native_call.FREEZE


__all__ = ["FUNCS", "OWN_OBJECTS", "SHARED_OBJECTS", "text"]
