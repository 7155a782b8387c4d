"""Compiling the same program again must give the same code and the same answer.

A lowering cache once keyed generated code on ``id()`` of operands that could be freed
mid-compilation; a new operand at the same address then received stale code, so a fresh
``jit`` of the same function returned different values from run to run.
"""
import numpy as np

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
