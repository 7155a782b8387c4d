"""Compiled functions are freed with their jitted function (issue #12): the programs,
executables, captured constants and the LLVM modules die with ``jit(f)``; nothing is
kept in module-level caches keyed on ``id()``."""
import gc
import weakref

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

pytest.importorskip("llvmlite")

from funcgrad.lowering import engine  # noqa: E402


class Owner:
    """Owns a constant's memory and can be weakly referenced (plain ndarrays cannot):
    the array made from it keeps it alive through ``.base``."""

    def __init__(self, data):
        self.data = data
        self.__array_interface__ = data.__array_interface__


def const(data):
    owner = Owner(np.asarray(data, dtype=np.float64))
    arr = np.asarray(owner)
    assert arr.base is owner
    return arr, weakref.ref(owner)


def _jitted_closing_over(c):
    return fg.jit(lambda v: fnp.sin(v) * c + 1.0)


def _summed(h):
    return lambda v: fnp.sum(h(v))


def _executables_of(f):
    return [entry[0].memo["exe"] for entry in f._cache.values()]


def test_executable_and_constants_are_collected_with_the_jitted_function():
    c, c_ref = const(np.random.default_rng(0).random(1000))
    f = _jitted_closing_over(c)
    x = np.ones(1000)
    np.testing.assert_allclose(f(x), np.sin(x) * c + 1.0, rtol=1e-15)
    (exe,) = _executables_of(f)
    refs = [weakref.ref(o) for o in (f, exe, exe._module)] + [c_ref]
    tracker = exe._module._finalizer.peek()[2][0]  # the JIT library holding its machine code
    assert not tracker.closed
    del f, exe, c
    gc.collect()
    assert [r() for r in refs] == [None] * 4
    assert tracker.closed  # the library is unloaded: its code and data are freed


def test_programs_derived_by_grad_of_jit_die_with_it():
    older = list(fg.transforms.jit._executables)  # (executables of other tests' functions)
    c, c_ref = const(np.linspace(0.5, 1.5, 50))
    f = _jitted_closing_over(c)
    g = fg.grad(_summed(f))
    np.testing.assert_allclose(g(np.ones(50)), np.cos(1.0) * c, rtol=1e-14)
    derived = [weakref.ref(e) for e in fg.transforms.jit._executables if all(e is not o for o in older)]
    assert len(derived) >= 2  # the forward and the linear part
    del older
    refs = [weakref.ref(f), c_ref]
    del f, g, c
    gc.collect()
    assert [r() for r in refs] == [None, None]
    assert all(r() is None for r in derived)


def test_many_fresh_jitted_functions_do_not_accumulate():
    x = np.ones(2000)
    _jitted_closing_over(np.zeros(2000))(x)
    gc.collect()
    before = engine.live_modules(), len(fg.transforms.jit._executables)
    for i in range(20):
        c = np.full(2000, float(i))
        _jitted_closing_over(c)(x)
    gc.collect()
    assert engine.live_modules() <= before[0] + 1
    assert len(fg.transforms.jit._executables) <= before[1] + 1


def test_a_live_executable_sharing_ir_text_keeps_its_module():
    # Two functions compiling to the same IR share one module; freeing one keeps it.
    f1 = fg.jit(lambda v: v * 3.0 + 1.0)
    f2 = fg.jit(lambda v: v * 3.0 + 1.0)
    x = np.arange(4.0)
    f1(x), f2(x)
    (e1,), (e2,) = _executables_of(f1), _executables_of(f2)
    assert e1._module is e2._module
    del f1, e1
    gc.collect()
    np.testing.assert_array_equal(f2(x), x * 3.0 + 1.0)


def _dropped(kind, i):
    """A fresh jitted function of ``kind`` (its own constant ``i``), its Python function,
    and arguments."""
    fun = (lambda v: fnp.sum(v * i + 1.0)) if kind == "grad_jit" else (lambda v: v * i + 1.0)
    if kind == "jit":
        return fun, fg.jit(fun), (np.ones(8),)
    if kind == "grad_jit":
        return fun, fg.grad(fg.jit(fun)), (np.ones(8),)
    return fun, fg.jit(fg.vmap(fun)), (np.ones((4, 8)),)


@pytest.mark.parametrize("kind", ["jit", "grad_jit", "jit_vmap"])
def test_a_dropped_jitted_function_goes_without_the_garbage_collector(kind):
    # Nothing a compiled function leaves behind is a reference cycle: its trace, program,
    # executable and machine code go by reference counting when it is dropped (a cycle
    # waits for a full collection, and the heap grows with every function meanwhile).
    fun, f, args = _dropped(kind, 0.5)  # (first-use libraries and caches)
    f(*args)
    del fun, f
    gc.collect()
    before = engine.live_modules(), len(fg.transforms.jit._executables)
    refs = []
    gc.disable()
    try:
        for i in range(3):
            fun, f, args = _dropped(kind, i + 1.0)
            f(*args)
            refs += [weakref.ref(fun), weakref.ref(f)]
            del fun, f
        assert [r() for r in refs] == [None] * len(refs)
        assert (engine.live_modules(), len(fg.transforms.jit._executables)) == before
    finally:
        gc.enable()
