"""Tiered compilation (``funcgrad/lowering/tiered.py``): the quick code a cold program runs
first gives the same bits as the optimised code swapped in later; the swap happens; the
worker never keeps the interpreter from exiting; fast-math programs are never tiered."""
import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.lowering import engine, tiered

from op_rows import all_rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Every 24th op-table row (about 120 programs over every family), plus some loops of our own.
ROWS = all_rows()[::24]


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch):
    # Tiered compilation is what a program gets with the disk cache off (with it on, the
    # object code is compiled optimised once and stored); these tests compile with it off.
    monkeypatch.setenv("FUNCGRAD_NO_DISK_CACHE", "1")


@pytest.fixture
def tier_mode():
    previous = tiered.set_mode("auto")
    yield tiered.set_mode
    tiered.wait(30)
    tiered.set_mode(previous)


def _run(fun, args, mode, tiers=None):
    """``jit(fun)(*args)`` compiled from scratch in tier ``mode``, as bytes per output leaf;
    a list ``tiers`` gets whether the program ran quick code (asked while it is alive: a
    dropped program's module goes at once)."""
    tiered.set_mode(mode)
    engine._module_cache.clear()  # (a program compiled before would be reused as it is)
    f = fg.jit(fun)
    out = f(*args)
    if tiers is not None:
        tiers.append(any("tier:entry" in m.addrs for m in list(engine._module_cache.values())))
    leaves = fg.tree_util.tree_leaves(out)
    return [(np.asarray(v).dtype.str, np.asarray(v).shape, np.asarray(v).tobytes()) for v in leaves]


def test_quick_and_optimised_code_give_the_same_bits_over_the_op_table(tier_mode):
    tiers: list = []
    for row in ROWS:
        try:
            quick = _run(row.fun, row.args, "quick", tiers)
        except (TypeError, ValueError, NotImplementedError, fg.errors.ConcretizationError):
            continue  # (a row jit does not take: test_op_table covers it)
        full = _run(row.fun, row.args, "off")
        assert quick == full, row.name
    assert sum(tiers) >= 30  # (most rows have a loop: they did run quick code)


# Programs with loops and no fast-math flag (a reduction's ``reassoc`` adds are excluded:
# those programs are compiled optimised at once).
LOOPS = [
    (lambda x: fnp.sin(x) * 3.0 / (x * x + 1.0), (np.linspace(-2.0, 3.0, 37),)),
    (lambda x: fnp.sort(fnp.tanh(x) - x[::-1]), (np.linspace(-2.0, 3.0, 23),)),
    (lambda x: lax.fori_loop(0, 7, lambda i, c: c * 1.1 + fnp.exp(-c * c), x), (np.linspace(-1.0, 1.0, 9),)),
    (lambda x: (x.astype(np.int32) // 3, fnp.argmax(x * x, axis=1)), (np.linspace(-9.0, 9.0, 24).reshape(4, 6),)),
    (lambda x: fnp.where(x > 0.5, fnp.log1p(x * x), fnp.nan) + fnp.float32(1.5) * x,
     (np.linspace(-1.0, 2.0, 50, dtype=np.float32),)),
    (lambda x: fg.grad(lambda v: fnp.sum(fnp.sin(v) ** 3 * fnp.cos(v)))(x), (np.linspace(-3.0, 3.0, 101),)),
]


@pytest.mark.parametrize("k", range(len(LOOPS)))
def test_loops_quick_and_optimised_identical_and_swapped_in(tier_mode, k):
    fun, args = LOOPS[k]
    quick = _run(fun, args, "quick")
    full = _run(fun, args, "off")
    assert quick == full
    # "auto": the first call runs the quick code, the optimised code is swapped in after.
    tiered.set_mode("auto")
    engine._module_cache.clear()
    f = fg.jit(fun)
    first = f(*args)
    assert tiered.wait(30)
    mods = [m for m in engine._module_cache.values() if m._kept]
    assert mods and all(len(m._kept) == 1 for m in mods)  # swapped: the optimised library held
    again = f(*args)
    for a, b in zip(fg.tree_util.tree_leaves(first), fg.tree_util.tree_leaves(again)):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    for a, b in zip(fg.tree_util.tree_leaves(again), fg.tree_util.tree_leaves(fun(*args))):
        np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                                   rtol=1e-6, atol=1e-12)


def test_the_optimised_library_dies_with_the_program(tier_mode):
    engine._module_cache.clear()
    f = fg.jit(lambda x: fnp.sin(x) * fnp.exp(x) - 0.5)
    f(np.linspace(0.0, 1.0, 64))
    assert tiered.wait(30)
    (mod,) = [m for m in engine._module_cache.values() if m._kept]
    import weakref

    quick, full = weakref.ref(mod), weakref.ref(mod._kept[0])
    del f, mod
    gc.collect()
    assert quick() is None and full() is None


def test_fast_math_and_libraries_are_never_tiered():
    body = "define i32 @fg_main_entry(ptr %a) {\n  br label %l\nl:\n  br label %l\n}\n"
    assert tiered.eligible(body, ["entry"], "@fg_main_", False) in (True, False)  # (mode-dependent)
    previous = tiered.set_mode("auto")
    try:
        assert tiered.eligible(body, ["entry"], "@fg_main_", False)
        assert not tiered.eligible(body.replace("br label %l\n}", "%x = fadd reassoc double 1.0, 2.0\n  br label %l\n}"),
                                   ["entry"], "@fg_main_", False)
        assert not tiered.eligible(body, ["entry"], "@fg_main_", True)  # a library: always optimised
        assert not tiered.eligible(body, ["other"], "@fg_main_", False)  # unknown entry points
        assert not tiered.eligible("define i32 @fg_main_entry(ptr %a) {\n  ret i32 0\n}\n", ["entry"],
                                   "@fg_main_", False)  # loop-free: the cheap pipeline already
    finally:
        tiered.set_mode(previous)
    with pytest.raises(ValueError, match="set_mode"):
        tiered.set_mode("fast")


def test_a_matrix_kernel_with_fast_math_flags_runs_optimised_code_at_once(tier_mode, monkeypatch):
    from funcgrad.lowering import dot

    monkeypatch.setattr(dot, "USE_BLAS", False)  # the generated kernel, whose adds are ``reassoc``
    engine._module_cache.clear()
    a = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    # (contracting both operands' last dims: the kernel whose adds may be reassociated)
    f = fg.jit(lambda x, y: lax.dot_general(x, y, (((1,), (1,)), ((), ()))))  # (held: its module lives)
    out = f(a, a + 1.0)
    np.testing.assert_allclose(out, a @ (a + 1.0).T, rtol=1e-14)
    assert tiered.wait(30)
    assert any("entry" in m.addrs for m in engine._module_cache.values())
    assert not any(m._kept or "tier:entry" in m.addrs for m in engine._module_cache.values())


EXIT_CHILD = textwrap.dedent("""
    import numpy as np, threading
    import funcgrad as fg, funcgrad.numpy as fnp
    x = np.linspace(-1.0, 1.0, 1000)
    out = fg.jit(lambda v: fnp.tanh(fnp.sin(v) * 2.0) + fnp.exp(-v * v))(x)
    workers = [t for t in threading.enumerate() if t.name == "funcgrad-tier-up"]
    print(float(out.sum()), len(workers), all(t.daemon for t in workers))
""")


def test_the_worker_never_keeps_the_interpreter_alive():
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCGRAD_NO_DISK_CACHE="1")
    env.pop("FUNCGRAD_NO_TIERED_COMPILE", None)
    res = subprocess.run([sys.executable, "-c", EXIT_CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    total, workers, daemon = res.stdout.split()
    x = np.linspace(-1.0, 1.0, 1000)
    np.testing.assert_allclose(float(total), np.sum(np.tanh(np.sin(x) * 2.0) + np.exp(-x * x)), rtol=1e-13)
    assert workers == "1" and daemon == "True"  # (exit did not wait for the queue: it is a daemon)


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("FUNCGRAD_NO_TIERED_COMPILE", "1")
    previous = tiered.set_mode("auto")
    try:
        engine._module_cache.clear()
        f = fg.jit(lambda v: fnp.cos(v) * 3.0 + v)
        np.testing.assert_allclose(f(np.arange(5.0)), np.cos(np.arange(5.0)) * 3.0 + np.arange(5.0), rtol=1e-15)
        assert not any("tier:entry" in m.addrs or m._kept for m in engine._module_cache.values())
    finally:
        tiered.set_mode(previous)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_compiles_while_the_parent_tiers_up(tier_mode):
    engine._module_cache.clear()
    x = np.linspace(-1.0, 1.0, 300)
    f = fg.jit(lambda v: fnp.tanh(v) * fnp.sin(v * 3.0) + 2.0)
    f(x)  # its optimised code is queued (or being compiled) now
    pid = os.fork()
    if pid == 0:  # the child: no worker thread, no lock held by one
        code = 1
        try:
            g = fg.jit(lambda v: fnp.exp(-v * v) * 4.0 + v)
            ok = np.allclose(g(x), np.exp(-x * x) * 4.0 + x, rtol=1e-14) and tiered.wait(30)
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert tiered.wait(30)
    np.testing.assert_allclose(f(x), np.tanh(x) * np.sin(x * 3.0) + 2.0, rtol=1e-14)
