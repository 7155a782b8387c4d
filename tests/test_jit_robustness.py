"""jit must never crash the process or answer differently from run to run.

Determinism: a lowering cache once keyed generated code on ``id()`` of operands that could be freed
mid-compilation; a new operand at the same address then received stale code, so a fresh
``jit`` of the same function returned different values from run to run.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax


def _loop_program(x):
    v2 = x @ fnp.swapaxes(x, -1, -2) + 2 * fnp.eye(1)
    v9 = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, fnp.degrees(v2)), (0, fnp.linalg.inv(v2)))[1]
    return fnp.sum(fnp.logaddexp(v2, v9))


def test_fresh_compilations_agree():
    x = np.array([[0.3, -1.2]])
    want = fg.grad(_loop_program)(x)
    got = {tuple(fg.jit(fg.grad(lambda x: _loop_program(x)))(x).ravel()) for _ in range(40)}
    assert len(got) == 1, got
    np.testing.assert_allclose(np.array(got.pop()).reshape(want.shape), want, rtol=1e-12)


_SORT_PROGRAM = textwrap.dedent("""
    import numpy as np, funcgrad as fg, funcgrad.numpy as fnp
    s = lambda x: fnp.sort(fnp.stack([x, x]), axis=0)
    f = lambda x: (s(x) * 3.0, s(x) + x)
    x = np.random.default_rng(0).random((3, 2))
    got, want = fg.jit(f)(x), f(x)
    assert all(np.array_equal(g, w) for g, w in zip(got, want)), (got, want)
    print("ok")
""")


def test_optimiser_bug_does_not_abort_the_process():
    # LLVM's SLP vectorizer turns this (valid) fused sort loop into a broken function;
    # code generation then called abort(). Run it in a child so an abort fails the test
    # instead of killing the test run, and demand native code (no interpreter fallback).
    env = dict(os.environ, FUNCGRAD_LOG_COMPILES="1")
    r = subprocess.run([sys.executable, "-c", _SORT_PROGRAM], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "ok"
    assert "running the interpreter" not in r.stderr, r.stderr


def test_invalid_ir_is_a_python_exception():
    from funcgrad.lowering import engine

    with pytest.raises(RuntimeError):
        engine.compile_ir("define i32 @fg_main_bad() {\nentry:\n  ret i64 0\n}\n", ["bad"])
