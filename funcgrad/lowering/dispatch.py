"""Calling compiled code from Python cheaply.

Fast path: one ``PYFUNCTYPE`` entry takes the tuple ``(inputs..., outputs...)`` and
reads the ndarray structs itself (data at offset 16, nd 24, dimensions 32, descr 56,
flags 64; ``descr->type_num`` at 28), checking type, rank, shape, dtype, C-contiguity
and alignment with a few compares. A 0-d input may also be a NumPy scalar of the
exact dtype (its value sits at offset 16). Anything else returns status 1 and the
Python wrapper takes the slow path: convert with NumPy, then call a ``CFUNCTYPE``
entry taking an array of data pointers. The offsets are verified once at import;
if they do not hold (another NumPy ABI), every call takes the slow path.

The fast entry releases the GIL (``PyEval_SaveThread``) around native work larger
than ``GIL_RELEASE_WORK`` element operations; the slow entry runs without the GIL
(ctypes releases it for CFUNCTYPE calls).
"""
from __future__ import annotations

import ctypes

import numpy as np

_TYPES = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float32, np.float64, np.complex64, np.complex128)
_TYPE_NUMS = {np.dtype(t): np.dtype(t).num for t in _TYPES}
_SCALAR_TYPES = {np.dtype(t): t for t in _TYPES}


def type_num(dtype) -> int | None:
    """NumPy's type number of ``dtype`` when compiled entries handle it, else None."""
    return _TYPE_NUMS.get(np.dtype(dtype))


def scalar_type(dtype):
    """The NumPy scalar type of ``dtype`` (one of ``_TYPES``)."""
    return _SCALAR_TYPES[np.dtype(dtype)]


def _layout_ok() -> bool:
    try:
        a = np.zeros((3, 4))
        base = id(a)
        ok = ctypes.c_void_p.from_address(base + 16).value == a.ctypes.data
        ok &= ctypes.c_int.from_address(base + 24).value == 2
        dims = ctypes.c_void_p.from_address(base + 32).value
        ok &= ctypes.c_int64.from_address(dims + 8).value == 4
        ok &= ctypes.c_void_p.from_address(base + 8).value == id(np.ndarray)
        descr = ctypes.c_void_p.from_address(base + 56).value
        ok &= ctypes.c_int.from_address(descr + 28).value == a.dtype.num
        ok &= (ctypes.c_int.from_address(base + 64).value & 0x101) == 0x101
        for t, ct in ((np.float64, ctypes.c_double), (np.int32, ctypes.c_int32), (np.float32, ctypes.c_float)):
            x = t(3)
            ok &= ct.from_address(id(x) + 16).value == 3
        ok &= ctypes.c_double.from_address(id(2.5) + 16).value == 2.5
        return bool(ok)
    except Exception:  # pragma: no cover - exotic ABI
        return False


LAYOUT_OK = _layout_ok()

# The Python type objects the entry compares against, as external globals bound to
# their addresses when the code is linked (``type_symbols``): no address in the IR text.
_TYPE_OBJECTS = {"fg_pytype_ndarray": np.ndarray, "fg_pytype_float": float, "fg_pytype_complex": complex,
                 **{f"fg_pytype_{np.dtype(t).name}": t for t in _SCALAR_TYPES.values()}}
_TYPE_NAMES = {id(t): name for name, t in _TYPE_OBJECTS.items()}


def type_symbols() -> dict:
    """{name: (declaration, address)} of the type objects ``tuple_entry`` refers to."""
    return {name: (f"@{name} = external global i8", id(t)) for name, t in _TYPE_OBJECTS.items()}


def tuple_entry(in_avals, n_out: int, release_gil: bool) -> str:
    """IR text of ``i32 @fg_main_entry(ptr tuple)``: validate, then call the core."""
    L = ["define i32 @fg_main_entry(ptr %args) nounwind {", "entry:"]
    nin = len(in_avals)
    arr_t = "@fg_pytype_ndarray"
    datas = []
    for k, aval in enumerate(in_avals):
        dtype = np.dtype(aval.dtype)
        L += [f"  %it{k} = getelementptr i8, ptr %args, i64 {24 + 8 * k}",
              f"  %x{k} = load ptr, ptr %it{k}",
              f"  %tp{k} = getelementptr i8, ptr %x{k}, i64 8",
              f"  %t{k} = load ptr, ptr %tp{k}",
              f"  %isarr{k} = icmp eq ptr %t{k}, {arr_t}",
              f"  br i1 %isarr{k}, label %arr{k}, label %scal{k}",
              f"arr{k}:",
              f"  %ndp{k} = getelementptr i8, ptr %x{k}, i64 24",
              f"  %nd{k} = load i32, ptr %ndp{k}",
              f"  %ndok{k} = icmp eq i32 %nd{k}, {len(aval.shape)}",
              f"  %flp{k} = getelementptr i8, ptr %x{k}, i64 64",
              f"  %fl{k} = load i32, ptr %flp{k}",
              f"  %flm{k} = and i32 %fl{k}, 257",
              f"  %flok{k} = icmp eq i32 %flm{k}, 257",
              f"  %dsp{k} = getelementptr i8, ptr %x{k}, i64 56",
              f"  %ds{k} = load ptr, ptr %dsp{k}",
              f"  %tnp{k} = getelementptr i8, ptr %ds{k}, i64 28",
              f"  %tn{k} = load i32, ptr %tnp{k}",
              f"  %tnok{k} = icmp eq i32 %tn{k}, {_TYPE_NUMS[dtype]}",
              f"  %bop{k} = getelementptr i8, ptr %ds{k}, i64 26",
              f"  %bo{k} = load i8, ptr %bop{k}",
              f"  %book{k} = icmp ne i8 %bo{k}, 62",
              f"  %ok1_{k} = and i1 %ndok{k}, %flok{k}",
              f"  %ok2_{k} = and i1 %ok1_{k}, %tnok{k}",
              f"  %ok3_{k} = and i1 %ok2_{k}, %book{k}",
              f"  br i1 %ok3_{k}, label %dims{k}, label %fail",
              f"dims{k}:"]
        if aval.shape:
            L += [f"  %dmp{k} = getelementptr i8, ptr %x{k}, i64 32", f"  %dm{k} = load ptr, ptr %dmp{k}"]
            cond = "true"
            for d, size in enumerate(aval.shape):
                L += [f"  %dp{k}_{d} = getelementptr i64, ptr %dm{k}, i64 {d}",
                      f"  %dv{k}_{d} = load i64, ptr %dp{k}_{d}",
                      f"  %de{k}_{d} = icmp eq i64 %dv{k}_{d}, {size}",
                      f"  %dc{k}_{d} = and i1 {cond}, %de{k}_{d}"]
                cond = f"%dc{k}_{d}"
            L += [f"  br i1 {cond}, label %data{k}, label %fail"]
        else:
            L += [f"  br label %data{k}"]
        L += [f"data{k}:",
              f"  %ddp{k} = getelementptr i8, ptr %x{k}, i64 16",
              f"  %da{k} = load ptr, ptr %ddp{k}",
              f"  br label %got{k}",
              f"scal{k}:"]
        if not aval.shape:
            py = {np.dtype(np.float64): [id(float)], np.dtype(np.complex128): [id(complex)]}.get(dtype, [])
            scalar_types = [id(_SCALAR_TYPES[dtype])] + py  # (their value sits at offset 16 too)
            cond = "false"
            for j, addr in enumerate(scalar_types):
                L += [f"  %st{k}_{j} = icmp eq ptr %t{k}, @{_TYPE_NAMES[addr]}",
                      f"  %sc{k}_{j} = or i1 {cond}, %st{k}_{j}"]
                cond = f"%sc{k}_{j}"
            L += [f"  %sd{k} = getelementptr i8, ptr %x{k}, i64 16",
                  f"  br i1 {cond}, label %got{k}, label %fail"]
        else:
            L += ["  br label %fail"]
        src = f"[%da{k}, %data{k}]" + (f", [%sd{k}, %scal{k}]" if not aval.shape else "")
        L += [f"got{k}:", f"  %d{k} = phi ptr {src}"]
        datas.append(f"%d{k}")
    outs = []
    for j in range(n_out):
        L += [f"  %oit{j} = getelementptr i8, ptr %args, i64 {24 + 8 * (nin + j)}",
              f"  %ox{j} = load ptr, ptr %oit{j}",
              f"  %odp{j} = getelementptr i8, ptr %ox{j}, i64 16",
              f"  %od{j} = load ptr, ptr %odp{j}"]
        outs.append(f"%od{j}")
    args = ", ".join(f"ptr {a}" for a in datas + outs)
    if release_gil:
        L += ["  %ts = call ptr @PyEval_SaveThread()",
              f"  %rc = call i32 @fg_main_core({args})",
              "  call void @PyEval_RestoreThread(ptr %ts)"]
    else:
        L += [f"  %rc = call i32 @fg_main_core({args})"]
    L += ["  ret i32 %rc", "fail:", "  ret i32 1", "}"]
    return "\n".join(L)


def pointer_entry(n_in: int, n_out: int) -> str:
    """IR text of ``i32 @fg_main_entry_ptrs(ptr array_of_data_pointers)``."""
    L = ["define i32 @fg_main_entry_ptrs(ptr %p) nounwind {", "entry:"]
    names = []
    for k in range(n_in + n_out):
        L += [f"  %q{k} = getelementptr ptr, ptr %p, i64 {k}", f"  %d{k} = load ptr, ptr %q{k}"]
        names.append(f"ptr %d{k}")
    L += [f"  %rc = call i32 @fg_main_core({', '.join(names)})", "  ret i32 %rc", "}"]
    return "\n".join(L)


def gil_declarations() -> dict:
    return {"PyEval_SaveThread": "declare ptr @PyEval_SaveThread()",
            "PyEval_RestoreThread": "declare void @PyEval_RestoreThread(ptr)"}


def make_caller(in_avals, out_avals, entry, slow):
    """A fixed-arity Python function: allocate outputs, one native call, status check."""
    n = len(in_avals)
    params = [f"a{k}" for k in range(n)]
    outs = [f"o{j}" for j in range(len(out_avals))]
    items = params + outs
    tup = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    ins = "(" + ", ".join(params) + ("," if n == 1 else "") + ")"
    lines = [f"def call({', '.join(params)}):"]
    lines += [f"    o{j} = _empty(_s{j}, _d{j})" for j in range(len(out_avals))]
    if LAYOUT_OK:
        lines += [f"    if _entry({tup}):", f"        return _slow({ins}, [{', '.join(outs)}])",
                  f"    return [{', '.join(outs)}]"]
    else:
        lines += [f"    return _slow({ins}, [{', '.join(outs)}])"]
    ns = {"_empty": np.empty, "_entry": entry, "_slow": slow}
    for j, aval in enumerate(out_avals):
        ns[f"_s{j}"], ns[f"_d{j}"] = tuple(aval.shape), np.dtype(aval.dtype)
    exec("\n".join(lines), ns)  # noqa: S102 - generated from avals only
    return ns.pop("call")  # (its globals are ``ns``: left in there, it would be a cycle)


def convert_arg(k: int, x, aval) -> np.ndarray:
    """The slow path's argument check: exact shape, same dtype (any byte order)."""
    want = np.dtype(aval.dtype)
    # Python scalars and lists are weakly typed: they take the expected dtype.
    a = np.asarray(x) if isinstance(x, (np.ndarray, np.generic)) else np.asarray(x, dtype=want)
    if a.shape != tuple(aval.shape):
        raise TypeError(f"compiled function argument {k}: expected shape {tuple(aval.shape)} "
                        f"({aval.str_short()}), got {a.shape}")
    if a.dtype != want:
        if a.dtype.kind == want.kind and a.dtype.itemsize == want.itemsize:
            a = a.astype(want)
        else:
            raise TypeError(f"compiled function argument {k}: expected dtype {want} "
                            f"({aval.str_short()}), got {a.dtype}")
    return np.require(a, want, ["C", "A"])
