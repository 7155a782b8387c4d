"""What the native ``__call__`` entries share: C API binding by name, the method
descriptor, the "nothing is staging" check and the freezing of a result.

Two entries are ``METH_FASTCALL | METH_KEYWORDS`` C functions written in LLVM IR and made
a class's ``__call__``: ``lowering/native_entry.py`` (a jitted function's cached call)
and ``numpy_api/eager_native.py`` (the eager fast path of ``funcgrad.numpy``). Each
builds its IR text from the pieces here and calls ``bind`` and ``method``:

- ``declare(names)``: IR declarations of the shared objects (``OBJECTS``: types,
  ``None``/``True``/``False``, the staging counter, ...) as external globals and of the
  C functions (``FUNCS``: CPython's, and NumPy's from its ``_ARRAY_API`` capsule table)
  with their signatures. ``bind(objects, funcs)`` binds them, and an entry's own objects,
  by name at link time (``engine.add_symbol``): the IR text holds no process address, as
  the disk cache requires.
- ``not_staging(label, go, fallback, error)``: IR blocks that branch to ``go`` when no
  staging trace is active, i.e. ``TRACE_STATE.dynamic is None`` (``core.trace``). The
  counter ``STAGING`` (staging traces in all threads, the int object 0 when there are
  none) is read first; only while some thread stages is the thread's state read with
  ``PyObject_GetAttr`` (every writer of ``dynamic`` is ``core.trace.new_main``, which
  counts: the two tests agree).
- ``FREEZE`` (``@fg_py_freeze``): an ndarray result made read-only and viewed as a
  funcgrad ``Array`` (0-d ones too), as ``core.array.fresh_caller`` does.
- ``method(cls, address, doc)``: the method descriptor (``PyDescr_NewMethod``) of the
  compiled function, kept alive for the process.

``available()`` is False (the entries stay on their Python paths) when an object offset
the entries read cannot be verified (``dispatch.LAYOUT_OK`` for ndarrays, ``layout_ok``
for dicts, tuples, lists, floats and complexes) or NumPy's C API table is not found.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from funcgrad.core.array import Array
from funcgrad.core.trace import STAGING, TRACE_STATE
from funcgrad.lowering import dispatch, engine

METH_FASTCALL_KEYWORDS = 0x0080 | 0x0002
WRITEABLE = 0x0400  # NPY_ARRAY_WRITEABLE

# Process-long objects an entry compares with or reads (bound by ``id``; all immortal or
# held here). An entry's own objects (its fallback, ...) are bound with its own prefix.
OBJECTS = {"fg_py_ndarray": np.ndarray, "fg_py_array": Array, "fg_py_dict": dict, "fg_py_list": list,
           "fg_py_tuple": tuple, "fg_py_int": int, "fg_py_none": None, "fg_py_true": True, "fg_py_false": False,
           "fg_py_zero": 0, "fg_py_staging": STAGING, "fg_py_trace_state": TRACE_STATE,
           "fg_py_str_dynamic": "dynamic"}

# C functions an entry may call: name -> (return type, parameter types) in LLVM IR.
FUNCS = {
    "PyObject_GetAttr": ("ptr", "ptr, ptr"), "PyErr_Clear": ("void", ""), "PyErr_Occurred": ("ptr", ""),
    "Py_IncRef": ("void", "ptr"), "Py_DecRef": ("void", "ptr"), "PyDict_GetItemWithError": ("ptr", "ptr, ptr"),
    "PyLong_AsLongLong": ("i64", "ptr"), "PyLong_AsLongLongAndOverflow": ("i64", "ptr, ptr"),
    "PyLong_FromLongLong": ("ptr", "i64"), "PyObject_Vectorcall": ("ptr", "ptr, ptr, i64, ptr"),
    "PyTuple_New": ("ptr", "i64"), "PyList_New": ("ptr", "i64"), "PyDict_New": ("ptr", ""),
    "PyDict_SetItem": ("i32", "ptr, ptr, ptr"), "PyEval_SaveThread": ("ptr", ""),
    "PyEval_RestoreThread": ("void", "ptr"), "PyContextVar_Set": ("ptr", "ptr, ptr"),
    "PyContextVar_Reset": ("i32", "ptr, ptr"), "PyContext_Enter": ("i32", "ptr"), "PyContext_Exit": ("i32", "ptr"),
    # NumPy's, from its C API table (``_NUMPY_SLOTS``)
    "fg_np_new_from_descr": ("ptr", "ptr, ptr, i32, ptr, ptr, ptr, i32, ptr"),  # PyArray_NewFromDescr
    "fg_np_view": ("ptr", "ptr, ptr, ptr"),  # PyArray_View(array, dtype, subtype)
    "fg_np_from_any": ("ptr", "ptr, ptr, i32, i32, i32, ptr"),  # PyArray_FromAny (a NumPy scalar -> 0-d)
}
_NUMPY_SLOTS = {"fg_np_new_from_descr": 94, "fg_np_view": 137, "fg_np_from_any": 69}


def layout_ok() -> bool:
    """The CPython object offsets the entries read: a dict's ``ma_used`` (16), a tuple's
    items (24), a list's ``ob_item`` (24), ``ob_size`` (16), a float's and a complex's
    value (16)."""
    try:
        item = object()
        d, t, lst, z = {"k": item}, (item, 1), [1, item], complex(1.5, 2.5)
        at = lambda addr, ct=ctypes.c_int64: ct.from_address(addr).value  # noqa: E731
        ok = at(id(d) + 16) == 1 and at(id(t) + 16) == 2 and at(id(t) + 24) == id(item)
        ok &= at(id(lst) + 16) == 2 and at(at(id(lst) + 24) + 8) == id(item)
        ok &= at(id(z) + 24, ctypes.c_double) == 2.5 and at(id(1.25) + 16, ctypes.c_double) == 1.25
        return bool(ok)
    except (ValueError, TypeError, OSError):  # pragma: no cover - exotic interpreter
        return False


@functools.lru_cache(maxsize=None)
def numpy_api():
    """{name: address} of the NumPy C API functions in ``FUNCS``, or None when the table
    is not found or not of the expected layout."""
    try:
        try:
            from numpy._core import _multiarray_umath as mu
        except ImportError:  # pragma: no cover - NumPy 1.x
            from numpy.core import _multiarray_umath as mu
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        table = get(mu._ARRAY_API, None)
        if not table:
            return None
        slot = lambda i: ctypes.c_void_p.from_address(table + 8 * i).value  # noqa: E731
        # PyArray_Type is slot 2: checking it guards against a table of another layout.
        if slot(2) != id(np.ndarray):
            return None
        return {name: slot(i) for name, i in _NUMPY_SLOTS.items()}
    except (ImportError, AttributeError, ValueError, TypeError):  # pragma: no cover - exotic NumPy
        return None


_OK = dispatch.LAYOUT_OK and layout_ok()


def available() -> bool:
    """True when the native entries can run in this process (offsets and table verified)."""
    return _OK and numpy_api() is not None


def declare(names) -> str:
    """IR declarations of ``names``: objects (``OBJECTS`` or an entry's own, external
    globals) and functions (``FUNCS``)."""
    lines = []
    for name in names:
        if name in FUNCS:
            ret, params = FUNCS[name]
            lines.append(f"declare {ret} @{name}({params})")
        else:
            lines.append(f"@{name} = external global i8")
    return "\n".join(lines) + "\n"


def bind(objects: dict, funcs) -> None:
    """Bind, by name at link time, ``objects`` ({name: object}, by ``id``: the caller keeps
    them alive), the shared ``OBJECTS`` and the functions ``funcs`` (names in ``FUNCS``)."""
    if not available():
        raise RuntimeError("native entries are not available (object layout or NumPy ABI not verified)")
    numpy = numpy_api()
    for name, obj in {**OBJECTS, **objects}.items():
        engine.add_symbol(name, id(obj))
    for name in funcs:
        address = numpy[name] if name in numpy else ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value
        engine.add_symbol(name, address)


def not_staging(label: str, go: str, fallback: str, error: str) -> str:
    """IR blocks from ``label``: to ``go`` when nothing is staging, else to ``fallback``;
    to ``error`` (which must clear the Python error) if reading the state fails. Needs
    ``fg_py_staging``, ``fg_py_zero``, ``fg_py_trace_state``, ``fg_py_str_dynamic``,
    ``fg_py_none``, ``PyObject_GetAttr`` and ``Py_DecRef``."""
    return f"""\
{label}:
  %ns_stp = getelementptr i8, ptr @fg_py_staging, i64 24
  %ns_sti = load ptr, ptr %ns_stp
  %ns_st0 = load ptr, ptr %ns_sti
  %ns_zero = icmp eq ptr %ns_st0, @fg_py_zero
  br i1 %ns_zero, label %{go}, label %ns_thread
ns_thread:
  %ns_dyn = call ptr @PyObject_GetAttr(ptr @fg_py_trace_state, ptr @fg_py_str_dynamic)
  %ns_null = icmp eq ptr %ns_dyn, null
  br i1 %ns_null, label %{error}, label %ns_got
ns_got:
  call void @Py_DecRef(ptr %ns_dyn)
  %ns_none = icmp eq ptr %ns_dyn, @fg_py_none
  br i1 %ns_none, label %{go}, label %{fallback}
"""


# ptr freeze(ndarray r): r made read-only and replaced by a read-only ``Array`` view of it,
# 0-d ones too (r's reference passes to the view; null with the error set if the view fails).
FREEZE = """\
define internal ptr @fg_py_freeze(ptr %r) {
entry:
  %fp = getelementptr i8, ptr %r, i64 64
  %f = load i32, ptr %fp
  %f2 = and i32 %f, MASK
  store i32 %f2, ptr %fp
  %v = call ptr @fg_np_view(ptr %r, ptr null, ptr @fg_py_array)
  call void @Py_DecRef(ptr %r)
  ret ptr %v
}
""".replace("MASK", str(~WRITEABLE & 0xFFFFFFFF))
FREEZE_NEEDS = ("fg_py_array", "fg_np_view", "Py_DecRef")


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


_kept: list = []  # (method def, its strings, descriptor): alive for the process


def method(cls, address: int, doc: str = "", name: str = "__call__"):
    """The method descriptor of ``cls`` calling the ``METH_FASTCALL | METH_KEYWORDS``
    function at ``address`` (the caller assigns it)."""
    nameb, docb = name.encode(), doc.encode() if doc else None
    mdef = _MethodDef(nameb, address, METH_FASTCALL_KEYWORDS, docb)
    new = ctypes.pythonapi.PyDescr_NewMethod
    new.restype, new.argtypes = ctypes.py_object, [ctypes.py_object, ctypes.c_void_p]
    descr = new(cls, ctypes.addressof(mdef))
    _kept.append((mdef, nameb, docb, descr))
    return descr


__all__ = ["available", "bind", "declare", "layout_ok", "method", "not_staging", "numpy_api", "FREEZE",
           "FREEZE_NEEDS", "FUNCS", "OBJECTS", "METH_FASTCALL_KEYWORDS", "WRITEABLE"]
