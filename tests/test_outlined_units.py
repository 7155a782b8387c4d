"""Each top-level equation's code is a function of its own (``lowering/units.py``), shared
by the equations emitting the same code: LLVM sees functions of bounded size, and a
program repeating a block compiles that block's code once."""
from __future__ import annotations

import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lowering import compile_jaxpr, units

from harness import unrolled_steps

RNG = np.random.default_rng(0)
X = RNG.normal(size=(16, 8))
W = RNG.normal(size=(8, 8)) / 3


def steps(n):
    """``n`` unrolled steps cycling through four kinds of layer, then a reduction."""
    return unrolled_steps(n, W)


def _ir(fn, *args) -> str:
    return compile_jaxpr(fg.make_jaxpr(fn)(*args)).llvm_ir_unoptimized


def _units(text: str) -> int:
    return len(re.findall(r"^define .*@fg_unit_\w+\(", text, re.M))  # (not their table wrappers, ``.w``)


@pytest.mark.parametrize("grad", [False, True])
def test_a_repeated_block_compiles_its_code_once(grad):
    def program(n):
        return fg.grad(steps(n)) if grad else steps(n)

    small, large = _ir(program(8), X), _ir(program(64), X)
    assert _units(large) == _units(small)  # the same units, called more often
    assert _units(small) > 0
    # the rest grows with the number of calls only: linear in the program
    assert len(large.splitlines()) < 8 * len(small.splitlines())
    # and the calls are grouped into chunks of bounded size
    core = large[large.index("@fg_main_core("):]
    core = core[:core.index("\n}")]
    assert core.count("call ") <= 4 + large.count("call void @fg_unit_") // 16


@pytest.mark.parametrize("grad", [False, True])
def test_outlined_code_computes_what_code_in_place_computes(grad, monkeypatch):
    fn = fg.grad(steps(11)) if grad else steps(11)
    closed = fg.make_jaxpr(fn)(X)
    got = compile_jaxpr(closed)(X)[0]
    monkeypatch.setattr(units, "OUTLINE", False)
    want = compile_jaxpr(closed)(X)[0]
    # (reductions reassociate: their rounding may differ with the code around them)
    atol = 1e-14 * float(np.max(np.abs(want)))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=atol)
    np.testing.assert_allclose(got, fn(X), rtol=1e-13, atol=atol)


def test_a_failure_inside_a_unit_takes_the_program_exit():
    # the callback's status check branches to the core function's failure exit: from a
    # unit, a returned status does
    def boom(v):
        raise ValueError("boom inside a unit")

    def f(x):
        y = steps(6)(x) * fnp.sin(x)  # (enough loop nests to be outlined)
        z = fg.pure_callback(boom, fg.ShapeDtypeStruct(y.shape, y.dtype), y)
        return steps(6)(fnp.exp(z) + y + x)

    assert "label %fg_fail_cb" in _ir(f, X) and "switch i32" in _ir(f, X)
    with pytest.raises(ValueError, match="boom inside a unit"):
        fg.jit(f)(X)


def test_loops_that_poll_for_ctrl_c_are_outlined_too():
    # Loops long enough to poll the interrupt flag leave to the core function's
    # ``%fg_interrupted`` exit: their units return a status instead of staying in place.
    big = RNG.normal(size=(2048, 8))
    ir = _ir(steps(16), big)
    assert "fg_interrupted" in ir and _units(ir) > 0
    np.testing.assert_allclose(fg.jit(steps(16))(big), steps(16)(big), rtol=1e-12)
