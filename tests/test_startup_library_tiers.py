"""Tiered vector-math libraries (``tiered.compile_library_quick``): a library linked quick
first (no passes, fast instruction selection) computes the same bits as its optimised code,
through both its scalar entry and its vector variant; the worker binds the optimised code
in its place; any optimised link of a program that needs it makes it first; libraries with
fast-math flags, or with the disk cache on, are compiled optimised at once."""
import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from funcgrad.lowering import engine, tiered, vecmath

from harness import ir_drive_loop

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _inputs(dtype, width: int) -> np.ndarray:
    """Special values, both fallback bounds of the trig/exp paths, subnormals and a spread
    of ordinary values, padded to a multiple of the vector width."""
    fi = np.finfo(dtype)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, fi.tiny, -fi.tiny, fi.tiny / 8, fi.max, -fi.max, 1.0, -1.0,
               2.0 ** 30, 2.0 ** 30 + 3.0, -(2.0 ** 31), 1e300, 707.9, 708.1, 709.9, -745.2, -708.5, 88.5, -103.0,
               np.pi / 2, np.pi, 1e-8, 3e-300]
    rng = np.random.default_rng(17)
    ordinary = np.concatenate([np.linspace(-40.0, 40.0, 397), rng.normal(scale=3.0, size=300),
                               rng.uniform(0.0, 5.0, 200), np.exp(rng.uniform(-30.0, 30.0, 100))])
    with np.errstate(over="ignore"):
        x = np.concatenate([np.array(special), ordinary]).astype(dtype)
    pad = (-len(x)) % width
    return np.concatenate([x, np.full(pad, 0.5, dtype)])


def _run(library, sym: str, ty: str, width: int | None, x: np.ndarray) -> bytes:
    text = ir_drive_loop(sym, ty, width)
    with engine._lock:
        drv = engine.link_object(tiered._quick_object(text), [sym], ["drive"], {sym: library.addrs[sym]}, text,
                                 quick=True)
    y = np.empty_like(x)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(drv.addrs["drive"])
    fn(x.ctypes.data, y.ctypes.data, len(x) // (width or 1))
    return y.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quick_and_optimised_libraries_give_the_same_bits(dtype):
    for name in vecmath.FUNCTIONS:
        text = vecmath.library_text(name, dtype)
        base, vec, width = vecmath._exports(name, np.dtype(dtype))
        declared = engine.declared_names(text)
        with engine._lock:
            quick = engine.link_object(tiered._quick_object(text), declared, [base, vec], {}, text, library=True,
                                       quick=True)
            full = engine.link_object(engine._object_code(text, library=True), declared, [base, vec], {}, text,
                                      library=True)
        ty = "double" if dtype == np.float64 else "float"
        x = _inputs(dtype, width)
        got = {(lib, entry): _run(handle, sym, ty, w, x)
               for lib, handle in (("quick", quick), ("full", full))
               for entry, sym, w in (("scalar", base, None), ("vector", vec, width))}
        reference = got["full", "vector"]
        for where, bits in got.items():
            assert bits == reference, (name, np.dtype(dtype).name, where)
        with np.errstate(all="ignore"):  # (and they are the function: a loose check)
            want = getattr(np, name)(x)
        y = np.frombuffer(reference, dtype)
        finite = np.isfinite(want) & (np.abs(x) < 1e6)
        np.testing.assert_allclose(y[finite], want[finite], rtol=1e-5, atol=1e-37, err_msg=name)


def test_which_libraries_may_be_tiered():
    previous = tiered.set_mode("auto")
    try:
        plain = "define <4 x double> @f(<4 x double> %x, <4 x double> %fast) {\n  %nsz = fadd <4 x double> %x, %fast\n"
        assert tiered.library_eligible(plain)  # (value names are not flags)
        assert tiered.library_eligible(plain + "  br label %fast\nfast:\n  ret <4 x double> %x\n")  # (nor labels)
        for flag in ("fast", "reassoc", "contract", "afn", "nnan"):
            assert not tiered.library_eligible(plain + f"  %y = fmul {flag} double 1.0, 2.0\n")
        tiered.set_mode("off")
        assert not tiered.library_eligible(plain)
    finally:
        tiered.set_mode(previous)


# A new process (the libraries are compiled once per process), disk cache off.
CHILD = textwrap.dedent("""
    import numpy as np
    import funcgrad as fg, funcgrad.numpy as fnp
    from funcgrad.lowering import engine, tiered
    x = np.linspace(-3.0, 3.0, 101)
    tiered.set_mode("auto")
    f = fg.jit(lambda v: fnp.cos(v) * 2.0)
    first = f(x).tobytes()
    assert "fg_vm_cos_f64" in engine._quick_bound  # the quick library is bound
    quick = engine._symbols["fg_vm_cos_f64"]
    assert tiered.wait(60)
    assert "fg_vm_cos_f64" not in engine._quick_bound and engine._symbols["fg_vm_cos_f64"] != quick
    assert f(x).tobytes() == first  # the optimised program, with the optimised library
    # mode "quick": nothing is queued; a program compiled optimised makes the library first
    tiered.set_mode("quick")
    g = fg.jit(lambda v: fnp.sinh(v) - 1.0)
    quick_bits = g(x).tobytes()
    assert "fg_vm_sinh_f64" in engine._quick_bound
    quick = engine._symbols["fg_vm_sinh_f64"]
    tiered.set_mode("off")
    engine._module_cache.clear()
    h = fg.jit(lambda v: fnp.sinh(v) - 1.0)
    assert h(x).tobytes() == quick_bits
    assert "fg_vm_sinh_f64" not in engine._quick_bound and engine._symbols["fg_vm_sinh_f64"] != quick
    np.testing.assert_allclose(np.frombuffer(quick_bits), np.sinh(x) - 1.0, rtol=1e-14)
    print("ok", len(engine._quick_bound))
""")


def _child(extra_env):
    env = dict(os.environ, PYTHONPATH=ROOT, **extra_env)
    env.pop("FUNCGRAD_NO_TIERED_COMPILE", None)
    res = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=180)
    return res


def test_the_worker_binds_the_optimised_library_and_optimised_links_make_it_first():
    res = _child({"FUNCGRAD_NO_DISK_CACHE": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["ok", "0"]


def test_with_the_disk_cache_on_libraries_are_optimised_at_once(tmp_path):
    child = textwrap.dedent("""
        import numpy as np
        import funcgrad as fg, funcgrad.numpy as fnp
        from funcgrad.lowering import engine, tiered
        tiered.set_mode("auto")
        y = fg.jit(lambda v: fnp.cos(v) * 2.0)(np.linspace(-3.0, 3.0, 101))
        print(len(engine._quick_bound), float(np.max(np.abs(y - 2.0 * np.cos(np.linspace(-3.0, 3.0, 101))))))
    """)
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCGRAD_CACHE_DIR=str(tmp_path))
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    env.pop("FUNCGRAD_NO_TIERED_COMPILE", None)
    res = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=180)
    assert res.returncode == 0, res.stderr
    bound, err = res.stdout.split()
    assert bound == "0" and float(err) < 1e-15
