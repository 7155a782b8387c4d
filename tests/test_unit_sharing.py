"""Units keyed by structure (``lowering/unit_keys.py``, ``unit_library.py``): a program
repeating a block emits each distinct loop nest once and calls it from a table
(``unit_calls.py``); the units are compiled once per process and found in the disk cache
by a new process, even for a program it never compiled."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lowering import compile_jaxpr, unit_library, units

from harness import unrolled_steps

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(1)
X = RNG.normal(size=(16, 8))
W = RNG.normal(size=(8, 8)) / 3


def steps(n, w=W):
    """``n`` unrolled steps cycling through four kinds of layer, then a reduction."""
    return unrolled_steps(n, w)


def _stats(fn, *args):
    return compile_jaxpr(fg.make_jaxpr(fn)(*args)).stats["units"]


@pytest.mark.parametrize("grad", [False, True])
def test_a_repeated_block_emits_each_distinct_nest_once(grad):
    def program(n):
        return fg.grad(steps(n)) if grad else steps(n)

    small, large = _stats(program(8), X), _stats(program(64), X)
    assert small["distinct"] == large["distinct"] > 0
    assert large["calls"] > 7 * small["calls"]
    # every region after the first of its structure calls its unit without emitting it
    assert large["reused"] >= large["calls"] - 2 * large["distinct"]


def test_the_calls_are_a_table_not_code():
    text = compile_jaxpr(fg.make_jaxpr(steps(64))(X)).llvm_ir_unoptimized
    core = text[text.index("@fg_main_core("):]
    core = core[:core.index("\n}")]
    assert core.count("call ") <= 4
    assert "@fg_unit_calls = internal constant" in text


def test_regions_differing_in_aliasing_or_a_literals_sign_keep_their_own_code(monkeypatch):
    # ``y * y`` and ``y * x`` have the same operations; ``max(y, 0.0)`` and
    # ``max(y, -0.0)`` differ only in the sign of a literal
    def f(x):
        y = x
        for i in range(24):
            k = i % 4
            if k == 0:
                y = fnp.sin(y * y)
            elif k == 1:
                y = fnp.sin(y * x)
            elif k == 2:
                y = fnp.copysign(1.0, fnp.maximum(y, 0.0)) * fnp.cos(y)
            else:
                y = fnp.copysign(1.0, fnp.maximum(y, -0.0)) * fnp.cos(y)
        return y

    x = np.linspace(-1.0, 1.0, 64).reshape(8, 8)
    closed = fg.make_jaxpr(f)(x)
    got = compile_jaxpr(closed)(x)[0]
    monkeypatch.setattr(units, "OUTLINE", False)
    want = compile_jaxpr(closed)(x)[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, f(x), rtol=1e-13, atol=1e-15)


def test_units_are_compiled_once_per_process():
    w = np.eye(8)[::-1] / 2  # (shapes and values of this test only)
    x = RNG.normal(size=(12, 8))
    fg.jit(steps(28, w))(x)  # (a program making enough unit calls to share them)
    before = dict(unit_library.counts)
    out = fg.jit(steps(40, w))(x)  # another program made of the same nests
    assert unit_library.counts["compiled"] == before["compiled"]
    assert unit_library.counts["shared"] > before["shared"]
    np.testing.assert_allclose(out, steps(40, w)(x), rtol=1e-12)
    # the forward nests of the gradient program are the forward program's
    before = dict(unit_library.counts)
    fg.jit(fg.grad(steps(28, w)))(x)
    assert unit_library.counts["shared"] > before["shared"]


CHILD = textwrap.dedent("""
    import sys, numpy as np
    import funcgrad as fg, funcgrad.numpy as fnp
    from funcgrad.lowering import unit_library
    n = int(sys.argv[1])
    w = np.linspace(-1, 1, 64).reshape(8, 8) / 4
    def f(x):
        for i in range(n):
            x = fnp.tanh(x @ w) if i % 2 == 0 else x * 0.5 + fnp.exp(-x * x) - fnp.mean(x, 0)
        return fnp.sum(x)
    x = np.linspace(0, 1, 40).reshape(5, 8)
    print(float(fg.jit(f)(x)), float(f(x)), unit_library.counts["compiled"], unit_library.counts["loaded"])
""")


def _child(cache_dir, n):
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=str(cache_dir), PYTHONPATH=ROOT)
    res = subprocess.run([sys.executable, "-c", CHILD, str(n)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    got, want, compiled, loaded = res.stdout.split()
    assert float(got) == pytest.approx(float(want), rel=1e-12)
    return int(compiled), int(loaded)


def test_a_new_process_finds_the_units_of_a_program_it_never_saw(fresh_disk_cache):
    compiled, loaded = _child(fresh_disk_cache, 24)
    assert compiled > 0 and loaded == 0
    compiled, loaded = _child(fresh_disk_cache, 48)  # another program, the same nests
    assert compiled == 0 and loaded > 0
    assert _child(fresh_disk_cache, 48) == (0, loaded)  # the program's own record names them


def test_shared_units_keep_the_vectorised_math_calls(fresh_disk_cache):
    # (a unit library declares the math functions' vector variants and keeps them until
    # the vectoriser has run, as the program module did)
    x = np.linspace(-2.0, 2.0, 32 * 72).reshape(32, 72)

    def f(v):
        for _ in range(40):
            v = v * 0.9 + fnp.sin(v) * 0.1
            v = v - fnp.mean(v, 0)
        return v

    np.testing.assert_allclose(fg.jit(f)(x), f(x), rtol=1e-12, atol=1e-14)
    text = "\n".join(h.optimized for h in unit_library._kept[-2:])
    assert re.search(r"call <\d+ x double> @fg_vm_sin_f64", text)
