"""What the two native ``__call__`` entries share (``lowering/native_call.py``): IR texts
that declare every external name and hold no process address, the "nothing is staging"
check (the cheap counter, then the thread's state) in the eager entry (the jit entry's:
``test_native_dispatch.py``), and the refusal to bind where the layouts are not verified."""
import re

import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad.core import trace
from funcgrad.lowering import native_call, native_entry
from funcgrad.numpy_api import eager_native
from funcgrad.transforms.jit import JittedFunction

pytestmark = pytest.mark.skipif(not native_call.available(), reason="native entries unavailable here")


def test_declare_functions_and_objects():
    text = native_call.declare(("fg_py_none", "my_object", "PyObject_Vectorcall", "fg_np_view"))
    assert text.splitlines() == ["@fg_py_none = external global i8", "@my_object = external global i8",
                                 "declare ptr @PyObject_Vectorcall(ptr, ptr, i64, ptr)",
                                 "declare ptr @fg_np_view(ptr, ptr, ptr)"]


@pytest.mark.parametrize("which", ["jit", "eager"])
def test_entry_ir_declares_every_name_and_holds_no_address(which):
    text = native_entry._text() if which == "jit" else eager_native._text(16)
    defined = set(re.findall(r"^define [^@\n]*@([\w.$]+)\(", text, re.M))
    declared = set(re.findall(r"^(?:declare [^@\n]*@([\w.$]+)\(|@([\w.$]+) = external )", text, re.M))
    declared = {a or b for a, b in declared}
    used = set(re.findall(r"@([\w.$]+)", text)) - {"llvm.memcpy.p0.p0.i64"}
    assert used <= defined | declared, used - defined - declared
    # (an address would be an integer literal beyond 32 bits; the one such constant is the
    # mask clearing PY_VECTORCALL_ARGUMENTS_OFFSET)
    big = {int(n) for n in re.findall(r"\b\d{10,}\b", text)} - {2**63 - 1, 2**32 - 1 - 0x400}
    assert not big
    for obj in (None, np.ndarray, trace.STAGING, trace.TRACE_STATE):
        assert str(id(obj)) not in text


def test_eager_entry_reads_the_counter_then_the_thread():
    assert eager_native.enable(), eager_native._state.get("error")
    a = np.arange(3.0)
    fnp.add(a, a)  # (sets the plan)
    orig, n = fnp.add._cfg[0], [0]

    def counting(*args, **kwargs):
        n[0] += 1
        return orig(*args, **kwargs)

    fnp.add._cfg[0] = counting
    try:
        trace.STAGING[0] += 1  # (as another thread's staging trace would)
        try:
            out = fnp.add(a, a)
        finally:
            trace.STAGING[0] -= 1
        assert n[0] == 0
        np.testing.assert_array_equal(out, a + a)
    finally:
        fnp.add._cfg[0] = orig


def test_bind_refuses_unverified_layouts(monkeypatch):
    monkeypatch.setattr(native_call, "_OK", False)
    assert not native_call.available() and not native_entry.available()
    with pytest.raises(RuntimeError, match="not available"):
        native_call.bind({}, ["Py_DecRef"])
    with pytest.raises(RuntimeError, match="not available"):
        native_entry.install(JittedFunction, JittedFunction._call, trace.TRACE_STATE, [False])


def test_install_needs_the_core_trace_state():
    class Other:
        dynamic = None

    with pytest.raises(ValueError, match="TRACE_STATE"):
        native_entry.install(JittedFunction, JittedFunction._call, Other(), [False])
