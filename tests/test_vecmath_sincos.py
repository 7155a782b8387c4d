"""sin and cos of the vector-math library against a frozen copy of the generator they had
before issue #17 merged them into one library (``vecmath_trig``).

The reference is built here, not stored: ``_old_sincos`` below is a verbatim copy of the
old ``vecmath._sincos`` with its reduction and kernels (and their constants), emitted as
a scalar function (strict IEEE: the same operations in the same order give the same bits
on any lane count and at any optimisation level), compiled in-test; lanes the old library
sent to the C library (|x| > 2^30, +-inf) take the process's C ``sin``/``cos`` through
ctypes, as the old cold path did. float32 was the float64 body between an fpext and an
fptrunc. The library under test is linked from ``vecmath.library_text`` and called
through its scalar entry and its vector variant; every lane must match bitwise (NaN
lanes: both NaN, as the C library and the fast path pick NaN payloads the test does not
freeze).
"""
import ctypes
import ctypes.util
import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

from funcgrad.lowering import engine, tiered, vecmath
from funcgrad.lowering.builder import ModuleBuilder
from funcgrad.lowering.vecmath_ir import Fn

from harness import ir_drive_loop

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --- the old generator, frozen (do not edit: it is the reference) -----------------------------
TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")
PIO2_1 = float.fromhex("0x1.921fb54442d18p+0")
PIO2_2 = float.fromhex("0x1.1a62633145c07p-54")
PIO2_3 = float.fromhex("-0x1.f1976b7ed8fbcp-110")
SIN_S = [float(Fraction((-1) ** n, math.factorial(2 * n + 1))) for n in range(1, 9)]
COS_C = [float(Fraction((-1) ** n, math.factorial(2 * n))) for n in range(2, 10)]


def _trig_reduce(f, x):
    jf, j = f.round_magic(x, TWO_OVER_PI)
    a = f.fma(jf, -PIO2_1, x)
    p = f.mul(jf, PIO2_2)
    pe = f.fma(jf, PIO2_2, f.neg(p))
    s = f.sub(a, p)
    bb = f.sub(s, a)
    e = f.add(f.sub(a, f.sub(s, bb)), f.sub(f.neg(p), bb))
    lo = f.fma(jf, -PIO2_3, f.sub(e, pe))
    rh = f.add(s, lo)
    rl = f.add(f.sub(s, rh), lo)
    return rh, rl, j


def _sin_kernel(f, rh, rl, z):
    ps = f.mul(z, f.estrin(z, SIN_S))
    corr = f.fma(f.mul(z, rl), -0.5, rl)
    return f.add(rh, f.fma(rh, ps, corr))


def _cos_kernel(f, rh, rl, z):
    ze = f.fma(rh, rh, f.neg(z))
    hz = f.mul(z, 0.5)
    w = f.sub(1.0, hz)
    comp = f.sub(f.sub(1.0, w), hz)
    tail = f.sub(comp, f.fma(ze, 0.5, f.mul(rh, rl)))
    z2 = f.mul(z, z)
    poly = f.mul(z2, f.estrin(z, COS_C, z2))
    return f.add(w, f.add(tail, poly))


def _old_sincos(f, x, want_cos: bool):
    rh, rl, j = _trig_reduce(f, x)
    z = f.mul(rh, rh)
    s = _sin_kernel(f, rh, rl, z)
    c = _cos_kernel(f, rh, rl, z)
    q = j if not want_cos else f.i("add", j, 1)
    odd = f.odd(q)
    v = f.sel(odd, c, s)
    sign = f.i("shl", f.i("and", q, 2), 62)
    r = f.fbits(f.i("xor", f.bits(v), sign))
    if not want_cos:
        r = f.sel(f.cmp("olt", f.abs(x), 2.0 ** -26), x, r)
    return r
# --- end of the frozen copy -------------------------------------------------------------------


def _drive(text: str, declared, imports: dict, x: np.ndarray, width) -> np.ndarray:
    with engine._lock:
        drv = engine.link_object(tiered._quick_object(text), declared, ["drive"], imports, text, quick=True)
    y = np.empty_like(x)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(drv.addrs["drive"])
    fn(x.ctypes.data, y.ctypes.data, len(x) // (width or 1))
    return y


def _reference(name: str, x64: np.ndarray) -> np.ndarray:
    """The old library's float64 results for ``x64``."""
    mb = ModuleBuilder()
    f = Fn(mb, 1)
    r = _old_sincos(f, "%x", name == "cos")
    body = "\n".join(f.lines)
    mb.functions.append(f"define internal double @ref_{name}(double %x) {{\nentry:\n{body}\n  ret double {r}\n}}")
    text = ir_drive_loop(f"ref_{name}", "double", None, mb.text())
    y = _drive(text, engine.declared_names(text), {}, x64, None)
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    c = getattr(libm, name)
    c.restype, c.argtypes = ctypes.c_double, [ctypes.c_double]
    big = np.abs(x64) > 2.0 ** 30  # (the old cold path: the C library, lane by lane)
    y[big] = [c(float(v)) for v in x64[big]]
    return y


def _inputs(dtype, width: int) -> np.ndarray:
    """Random over many magnitudes, multiples of pi/2 +- a few ulps, tiny and subnormal,
    around the 2^-26 and 2^30 bounds, huge, +-0, +-inf and NaN; a multiple of ``width``."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(1717)
    fi = np.finfo(dtype)
    mags = 10.0 ** rng.uniform(-12.0, 12.0, 1500) * rng.choice([-1.0, 1.0], 1500)
    k = np.concatenate([np.arange(-64, 65), rng.integers(-10 ** 8, 10 ** 8, 200), [2 ** 29, 683565275]])
    mult = (k * (np.pi / 2)).astype(dtype)
    near = [mult]
    up, down = mult.copy(), mult.copy()
    for _ in range(3):
        up, down = np.nextafter(up, dtype.type(np.inf)), np.nextafter(down, dtype.type(-np.inf))
        near += [up, down]
    bounds = [2.0 ** -26, 2.0 ** -27, 2.0 ** 30, 2.0 ** 31, 1e10, 1e22, 1e300, 3.0e38]
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-8, 1e-20, 1e-300, 5e-324, 2.2e-308]
    with np.errstate(over="ignore"):
        parts = [mags.astype(dtype), *near, np.array(bounds + special).astype(dtype)]
        b = np.array(bounds).astype(dtype)
        parts += [np.nextafter(b, dtype.type(0)), np.nextafter(b, dtype.type(np.inf)), -b]
        parts += [np.array([fi.tiny, fi.tiny / 8, fi.smallest_subnormal, fi.max], dtype) * s for s in (1, -1)]
    x = np.concatenate(parts).astype(dtype)
    pad = (-len(x)) % width
    return np.concatenate([x, np.full(pad, 0.75, dtype)])


def _same(got: np.ndarray, want: np.ndarray) -> None:
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    ib = {4: np.int32, 8: np.int64}[got.dtype.itemsize]
    bad = np.flatnonzero(got[~nan].view(ib) != want[~nan].view(ib))
    assert bad.size == 0, (got[~nan][bad[:5]], want[~nan][bad[:5]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_library_matches_the_old_generator_bitwise(name, dtype):
    dtype = np.dtype(dtype)
    base, vec, width = vecmath._exports(name, dtype)
    x = _inputs(dtype, width)
    with np.errstate(all="ignore"):
        want = _reference(name, x.astype(np.float64)).astype(dtype)
    text = vecmath.library_text(name, dtype)
    declared = engine.declared_names(text)
    with engine._lock:  # (optimised: the code kernels bind once tiered up; quick == full: its own test)
        lib = engine.link_object(engine._object_code(text, library=True), declared, [base, vec], {}, text,
                                 library=True)
    ty = "double" if dtype == np.float64 else "float"
    for sym, w in ((base, None), (vec, width)):
        _same(_drive(ir_drive_loop(sym, ty, w), [sym], {sym: lib.addrs[sym]}, x, w), want)


def test_jitted_sin_and_cos_match_the_old_generator():
    import funcgrad as fg
    import funcgrad.numpy as fnp

    x = _inputs(np.float64, 8)[:1001]  # (an odd length: vector loop and scalar remainder)
    with np.errstate(all="ignore"):
        want_s, want_c = _reference("sin", x), _reference("cos", x)
    s, c = fg.jit(lambda v: (fnp.sin(v), fnp.cos(v)))(x)
    _same(np.asarray(s), want_s)
    _same(np.asarray(c), want_c)
    _same(np.asarray(fg.jit(fnp.cos)(np.float64(x[7]))).reshape(1), want_c[7:8])  # (0-d: the scalar entry)


def test_compiling_either_binds_both():
    """One library for sin and cos: the first use of sin makes cos's symbols too, in one
    compile (a new process: the libraries are compiled once per process)."""
    child = textwrap.dedent("""
        import numpy as np
        import funcgrad as fg, funcgrad.numpy as fnp
        from funcgrad.lowering import engine, vecmath
        x = np.linspace(-3.0, 3.0, 37, dtype=np.float32)
        fg.jit(fnp.sin)(x)
        print(sorted(k for k in vecmath._LIB), sorted(k for k in engine._symbols if k.startswith("fg_vm_cos")))
        y = fg.jit(fnp.cos)(x)
        print(float(np.max(np.abs(y - np.cos(x)))))
    """)
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCGRAD_NO_DISK_CACHE="1")
    res = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("['fg_vm_cos_f32', 'fg_vm_sin_f32'] ['fg_vm_cos_f32'"), lines[0]
    assert float(lines[1]) < 1e-6
