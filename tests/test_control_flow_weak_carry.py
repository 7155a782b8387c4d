"""Issue #12: a loop carry initialised with a weakly typed Python scalar adopts the dtype
the body gives it, as in JAX (``0.0`` updated with float32 stays float32; ``0`` updated
with a float becomes a float), identically eagerly, under ``make_jaxpr`` and under
``jit``; errors from ``fori_loop`` name ``fori_loop``."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

B = np.float32(1.5)
XS = np.ones(3, np.float32)

CASES = {
    "while_loop 0.0 + f32": (lambda b: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + b), (0, 0.0))[1],
                             np.float32, 4.5),
    "fori_loop 0.0 + f32": (lambda b: lax.fori_loop(0, 3, lambda i, c: c + b, 0.0), np.float32, 4.5),
    "fori_loop traced bounds": (lambda b: lax.fori_loop(0, (b > 0).astype(np.int32) * 3, lambda i, c: c + b, 0.0),
                                np.float32, 4.5),
    "scan 0.0 + f32": (lambda b: lax.scan(lambda c, x: (c + x * b, c), 0.0, XS)[0], np.float32, 4.5),
    "fori_loop int init, float body": (lambda b: lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0), np.float64, 1.5),
    "fori_loop int init, f32 body": (lambda b: lax.fori_loop(0, 3, lambda i, c: c + b, 0), np.float32, 4.5),
    "fori_loop traced, int init": (lambda b: lax.fori_loop(0, (b > 0).astype(np.int32) * 3, lambda i, c: c + 0.5, 0),
                                   np.float64, 1.5),
    "while_loop int init, float body": (lambda b: lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0), np.float64, 3.0),
    "scan pytree with one weak leaf": (lambda b: lax.scan(lambda c, x: ((c[0] * b, c[1] + 1), None), (1.0, 0), XS)[0][0],
                                       np.float32, 1.5 ** 3),
}


@pytest.mark.parametrize("name", list(CASES))
def test_weak_carry_adopts_the_body_dtype(name):
    f, dtype, value = CASES[name]
    eager = f(B)
    staged = fg.make_jaxpr(f)(B).jaxpr.out_avals[0]
    jitted = fg.jit(f)(B)
    assert np.asarray(eager).dtype == dtype
    assert staged.dtype == dtype
    assert np.asarray(jitted).dtype == dtype
    assert float(eager) == pytest.approx(value) and float(jitted) == pytest.approx(value)


def test_strong_carries_keep_their_dtype():
    # Only weak (Python scalar) leaves adopt: a float64 array stays float64.
    f = lambda b: lax.fori_loop(0, 3, lambda i, c: c + b, np.float64(0.0))  # noqa: E731
    assert f(B).dtype == np.float64 and fg.jit(f)(B).dtype == np.float64
    with pytest.raises(TypeError, match=r"fori_loop: carry leaf 0 has type i64\[\]"):
        lax.fori_loop(0, 3, lambda i, c: c + 0.5, np.int64(0))


def test_weak_carry_gradient():
    f = lambda x: lax.fori_loop(0, 3, lambda i, c: c + x * x, 0.0)  # noqa: E731
    x = np.float32(1.5)
    for g in (fg.grad(f), fg.jit(fg.grad(f)), fg.grad(fg.jit(f))):
        out = g(x)
        assert np.asarray(out).dtype == np.float32 and float(out) == pytest.approx(9.0)


@pytest.mark.parametrize("bounds", ["static", "traced"])
def test_fori_loop_errors_name_fori_loop(bounds):
    def run(body, init):
        if bounds == "static":
            return lax.fori_loop(0, 3, body, init)
        return fg.jit(lambda n: lax.fori_loop(0, n, body, init))(3)

    with pytest.raises(TypeError, match=r"fori_loop: carry leaf 0 has type f64\[\] on input but the body returns f64\[2\]"):
        run(lambda i, c: fnp.ones(2) * c, 1.0)
    with pytest.raises(TypeError, match=r"fori_loop: carry leaf 0 has type f32\[\] on input but the body returns i32\[\]"):
        run(lambda i, c: c.astype(np.int32), np.float32(1))
