"""jit's arguments follow JAX's conventions (issue #12): static values are keyed by type
too, static_argnums and static_argnames name the same parameters however they are
passed, JAX's other keywords are accepted with JAX's meaning, and bad arguments raise
typed errors naming jit(f) and the argument."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.arange(3)


@pytest.mark.parametrize("first, second, dtype", [(1, 1.0, np.float64), (1, True, np.int64), (True, 1.0, np.float64)])
def test_static_values_that_compare_equal_but_differ_in_type_get_their_own_program(first, second, dtype):
    f = fg.jit(lambda x, n: x * n, static_argnums=1)
    f(X, first)
    out = f(X, second)
    assert out.dtype == dtype and f.cache_size() == 2
    np.testing.assert_array_equal(out, X * second)


def test_static_tuples_are_keyed_on_the_types_inside():
    f = fg.jit(lambda x, t: x * t[0], static_argnums=1)
    assert f(X, (2, "a")).dtype == np.int64
    assert f(X, (2.0, "a")).dtype == np.float64


def _scaled(x, n):
    if n > 1:  # Python control flow on n: only works if n is static
        return x * 2.0
    return x * 1.0


def test_static_argnames_applies_to_a_positional_or_keyword_parameter_passed_by_position():
    f = fg.jit(_scaled, static_argnames="n")
    np.testing.assert_array_equal(f(X, 2), X * 2.0)
    np.testing.assert_array_equal(f(X, n=2), X * 2.0)
    assert f.cache_size() == 1  # the same static value, whichever way it was passed


def test_static_argnums_applies_to_a_parameter_passed_by_keyword():
    f = fg.jit(_scaled, static_argnums=1)
    np.testing.assert_array_equal(f(X, n=2), X * 2.0)
    np.testing.assert_array_equal(f(X, 0), X * 1.0)


def test_static_argnums_beyond_the_signature_raises():
    with pytest.raises(ValueError, match=r"jit\(<lambda>\): static_argnums=\(3,\).*1 positional argument"):
        fg.jit(lambda x: x, static_argnums=3)
    with pytest.raises(TypeError, match="static_argnums must be an int"):
        fg.jit(_scaled, static_argnums="n")


def test_static_argnums_beyond_the_arguments_of_a_varargs_function_raises_at_call():
    f = fg.jit(lambda *xs: xs[0], static_argnums=2)
    with pytest.raises(ValueError, match=r"static_argnums=\(2,\) but it was called with only 1 positional argument"):
        f(1.0)


def test_unhashable_static_value_passed_by_name_raises_naming_the_argument():
    f = fg.jit(_scaled, static_argnames="n")
    with pytest.raises(TypeError, match=r"jit\(_scaled\): static argument 1 of type list is not hashable \('n'\)"):
        f(X, n=[1])
    g = fg.jit(lambda x, *, opts: x, static_argnames="opts")
    with pytest.raises(TypeError, match="static argument 'opts' of type dict is not hashable"):
        g(X, opts={})


def test_bad_keyword_for_the_function_names_jit():
    with pytest.raises(TypeError, match=r"jit\(_scaled\): got an unexpected keyword argument 'm'"):
        fg.jit(_scaled)(X, 1, m=1)


def test_donation_is_accepted_and_never_touches_the_callers_arrays():
    x = np.linspace(0.0, 1.0, 4)
    before = x.copy()
    f = fg.jit(lambda x, y: x * 2.0 + y, donate_argnums=0, donate_argnames="y", keep_unused=True)
    out = f(x, y=x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(out, before * 3.0)
    assert not np.shares_memory(out, x)
    with pytest.raises(NotImplementedError, match="abstracted_axes"):
        fg.jit(lambda x: x, abstracted_axes=("n",))


def test_inline_puts_the_equations_in_the_enclosing_trace():
    inner = fg.jit(lambda x: fnp.sin(x) * 2.0, inline=True)
    text = str(fg.make_jaxpr(lambda x: inner(x) + 1.0)(1.0))
    assert "jit_call" not in text and "sin" in text
    not_inlined = fg.jit(lambda x: fnp.sin(x) * 2.0)
    assert "jit_call" in str(fg.make_jaxpr(lambda x: not_inlined(x) + 1.0)(1.0))
    outer = fg.jit(lambda x: inner(x) + 1.0)
    np.testing.assert_allclose(outer(0.5), np.sin(0.5) * 2.0 + 1.0, rtol=1e-15)
    np.testing.assert_allclose(fg.grad(outer)(0.5), np.cos(0.5) * 2.0, rtol=1e-15)


def test_outputs_that_are_not_arrays():
    assert fg.jit(lambda x: None)(1.0) is None
    with pytest.raises(TypeError, match=r"jit\(<lambda>\): the function's output is a str"):
        fg.jit(lambda x: "a")(1.0)
    with pytest.raises(TypeError, match="output leaf 1 is a str"):
        fg.jit(lambda x: (x, "a"))(1.0)


@pytest.mark.parametrize("big", [2**70, -(2**63) - 1])
def test_python_ints_beyond_int64_name_the_argument(big):
    with pytest.raises(OverflowError, match=r"jit\(<lambda>\): argument 1 \('y'\) is the Python int"):
        fg.jit(lambda x, y: x + y)(1.0, big)
    with pytest.raises(OverflowError, match=r"argument 1 \('y'\) is the Python int"):
        fg.jit(lambda x, y: x + y)(1.0, y=big)
    with pytest.raises(OverflowError, match=r"argument 2 \('y'\), leaf \[1\] is the Python int"):
        fg.jit(lambda x, n, y: x + y[1], static_argnums=1)(1.0, 3, (1, big))
    assert fg.jit(lambda x: x)(2**63 - 1) == 2**63 - 1
