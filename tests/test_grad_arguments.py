"""grad/jacfwd/jacrev arguments and outputs follow JAX (issue #12): allow_int, and typed
errors that name the function and say whether the input or the *output* was wrong."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def scaled(x, n):
    return fnp.sum(x * n)


def test_integer_inputs_raise_naming_grad_and_the_argument():
    with pytest.raises(TypeError, match=r"grad\(scaled\).*argument 1 has dtype int64.*allow_int=True"):
        fg.grad(scaled, argnums=(0, 1))(np.ones(3), 2)


@pytest.mark.parametrize("staged", [False, True])
def test_allow_int_gives_zero_gradients_of_the_inputs_shape_and_dtype(staged):
    g = fg.grad(scaled, argnums=(0, 1), allow_int=True)
    if staged:
        g = fg.jit(g)
    x, n = np.array([1.0, 2.0, 3.0]), np.array([2, 3, 4], dtype=np.int32)
    gx, gn = g(x, n)
    np.testing.assert_array_equal(gx, [2.0, 3.0, 4.0])
    assert gn.shape == (3,) and gn.dtype == np.int32 and not np.any(gn)
    # A pytree mixing both: each leaf gets its own kind of gradient.
    gt = fg.grad(lambda p: p["w"] * p["k"] + p["b"], allow_int=True)({"w": 2.0, "k": 3, "b": True})
    assert gt["w"] == 3.0 and gt["k"] == 0 and gt["b"] == 0 and np.asarray(gt["b"]).dtype == np.bool_
    v, g0 = fg.value_and_grad(lambda k: k * 1.5, allow_int=True)(4)
    assert v == 6.0 and g0 == 0


@pytest.mark.parametrize("out, shown", [(None, "output is None"), ("a", "output is a str"),
                                        ((1.0, 2.0), "output is a tuple.*has_aux=True")])
def test_outputs_that_are_not_arrays_say_it_was_the_output(out, shown):
    def f(x):
        return out

    with pytest.raises(TypeError, match=rf"grad\(f\): the function's {shown}"):
        fg.grad(f)(1.0)


def test_non_scalar_and_integer_outputs_say_it_was_the_output():
    with pytest.raises(TypeError, match=r"grad\(<lambda>\).*output is a non-scalar f64\[3\]"):
        fg.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(TypeError, match=r"grad\(<lambda>\).*output is an integer-valued i64\[\]"):
        fg.grad(lambda x: fnp.argmax(x))(np.ones(3))


@pytest.mark.parametrize("jac", [fg.jacrev, fg.jacfwd, fg.hessian])
def test_jacobians_of_integer_outputs_raise_naming_the_function(jac):
    def argmax(x):
        return fnp.argmax(x)

    with pytest.raises(TypeError, match=r"jac(rev|fwd)\(argmax\) requires real-valued .* output is i64\[\]"):
        jac(argmax)(np.ones(3))
    with pytest.raises(TypeError, match=r"output leaf 1 is bool\[3\]"):
        fg.jacrev(lambda x: (x * 2.0, x > 0))(np.ones(3))


def test_python_ints_beyond_int64_name_the_argument():
    with pytest.raises(OverflowError, match=r"grad\(<lambda>\): argument 0 is the Python int"):
        fg.grad(lambda x: x * 1.0)(2**70)
    with pytest.raises(OverflowError, match=r"argument 1, leaf \[1\] is the Python int"):
        fg.grad(lambda x, t: x * 1.0, argnums=(0, 1), allow_int=True)(1.0, (1, -(2**64)))
