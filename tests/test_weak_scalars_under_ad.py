"""A differentiated Python scalar stays weakly typed under jvp/grad, as under jit and
eagerly: ``(x + 0.5) * float32_array`` is float32 in every mode (found by the fuzzer)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

B = np.ones(2, np.float32)


def f(x):
    return (x + 0.5) * B


def g(x):
    return fnp.sum((x * 2.0 + 1.0) * B)


def test_eager_and_jit_agree_on_float32():
    assert f(1.5).dtype == fg.jit(f)(1.5).dtype == np.float32


def test_jvp_keeps_python_scalar_weak():
    p, t = fg.jvp(f, (1.5,), (1.0,))
    assert p.dtype == t.dtype == np.float32
    np.testing.assert_allclose(t, [1.0, 1.0])


@pytest.mark.parametrize("path", ["eager", "general"])
def test_value_and_grad_value_matches_jit(path):
    from funcgrad.transforms import eager_vjp

    if path == "general":
        with eager_vjp.disabled():
            v, dg = fg.value_and_grad(g)(1.5)
    else:
        v, dg = fg.value_and_grad(g)(1.5)
    vj, dgj = fg.jit(fg.value_and_grad(g))(1.5)
    assert v.dtype == vj.dtype == np.float32
    assert dg.dtype == dgj.dtype == np.float64  # the gradient has the argument's dtype
    assert dg == dgj == 4.0


def test_vjp_and_jacfwd_outputs_follow_jit():
    assert fg.vjp(f, 1.5)[0].dtype == np.float32
    assert fg.jacfwd(f)(1.5).dtype == np.float32


def test_weak_scalar_through_a_loop_under_eager_grad():
    # The eager tape sends a weak operand through the general path; a loop carry that
    # starts weak adopts the body's float32.
    def h(x):
        c = fg.lax.fori_loop(0, 3, lambda i, c: c * 0.5 + x * B, fnp.zeros(2, np.float32))
        return fnp.sum(c * x)

    assert fg.jit(h)(1.5).dtype == h(1.5).dtype == fg.value_and_grad(h)(1.5)[0].dtype
    np.testing.assert_allclose(fg.grad(h)(1.5), fg.jit(fg.grad(h))(1.5), rtol=1e-6)


def test_second_order_through_weak_scalar():
    assert fg.grad(fg.grad(lambda x: fnp.sum((x * x + 1.0) * B)))(1.5) == 4.0
