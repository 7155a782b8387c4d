"""Every user-facing error: its type and what its message tells the user."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors


def test_python_if_on_tracer_names_user_line_and_suggests_fixes():
    def f(x):
        if x > 0:  # the line the message must point at
            return x
        return -x

    with pytest.raises(errors.TracerBoolConversionError) as info:
        fg.make_jaxpr(f)(1.0)
    msg = str(info.value)
    assert "test_errors.py" in msg and "if x > 0:" in msg
    assert "lax.cond" in msg and "fnp.where" in msg
    assert isinstance(info.value, errors.ConcretizationError)
    assert isinstance(info.value, TypeError)


def test_while_and_and_or_on_tracer():
    with pytest.raises(errors.TracerBoolConversionError):
        fg.make_jaxpr(lambda x: (x > 0) and x)(1.0)
    with pytest.raises(errors.TracerBoolConversionError):
        fg.make_jaxpr(lambda x: [x for _ in range(2) if x])(1.0)


def test_int_float_index_conversions():
    with pytest.raises(errors.TracerIntegerConversionError, match="int"):
        fg.make_jaxpr(lambda x: int(x))(1)
    with pytest.raises(errors.TracerIntegerConversionError):
        fg.make_jaxpr(lambda x: range(x))(3)
    with pytest.raises(errors.ConcretizationError):
        fg.make_jaxpr(lambda x: float(x))(1.0)


def test_numpy_asarray_on_tracer():
    with pytest.raises(errors.TracerArrayConversionError, match="funcgrad.numpy"):
        fg.make_jaxpr(lambda x: np.asarray(x))(np.ones(3))


def test_numpy_ufunc_on_tracer_dispatches_to_funcgrad():
    closed = fg.make_jaxpr(lambda x: np.sin(x) + np.float64(1.0))(np.ones(2))
    assert "sin" in str(closed)


def test_numpy_function_funcgrad_lacks():
    with pytest.raises(TypeError, match="cannot"):
        fg.make_jaxpr(lambda x: np.array_repr(x))(np.ones(4))


def test_broadcast_error_names_function_and_shapes():
    with pytest.raises(ValueError) as info:
        fnp.add(np.ones(3), np.ones(4))
    assert "add" in str(info.value) and "(3,)" in str(info.value) and "(4,)" in str(info.value)
    with pytest.raises(ValueError, match=r"multiply.*\(2, 3\).*\(4,\)"):
        fg.make_jaxpr(lambda a, b: a * b)(np.ones((2, 3)), np.ones(4))


def test_missing_numpy_function_is_attribute_error():
    with pytest.raises(AttributeError, match="funcgrad.numpy has no function 'genfromtxt'"):
        fnp.genfromtxt  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute"):
        fnp.definitely_not_a_numpy_name  # noqa: B018


@pytest.mark.parametrize("bad", [np.ones(2, np.clongdouble), np.array(["a"]), np.array([object()]), np.ones(2, np.float16)])
def test_unsupported_dtype_is_type_error_naming_it(bad):
    with pytest.raises(TypeError) as info:
        fnp.sin(bad)
    assert bad.dtype.name in str(info.value) or "complex" in str(info.value) or "convert" in str(info.value)
    with pytest.raises(TypeError):
        fg.make_jaxpr(lambda x: x)(bad)


def test_complex_python_scalar_is_weak():  # (issue #16: complex dtypes are supported)
    assert fnp.add(np.ones(2, np.float32), 1j).dtype == np.complex64


def test_non_array_argument_to_make_jaxpr():
    with pytest.raises(TypeError, match="str"):
        fg.make_jaxpr(lambda s: s)("hello")


def test_escaped_tracer():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    fg.make_jaxpr(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError, match="escaped|already finished"):
        fnp.sin(leaked[0])


def test_tracers_are_immutable_and_unhashable():
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        fg.make_jaxpr(f)(np.ones(3))
    with pytest.raises(TypeError, match="unhashable"):
        fg.make_jaxpr(lambda x: {x: 1})(1.0)


def test_primitive_strictness_errors_name_op_and_shapes():
    from funcgrad import lax

    with pytest.raises(TypeError, match=r"add: .*f64\[3\], f64\[4\]"):
        fg.make_jaxpr(lambda a, b: lax.add(a, b))(np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match=r"mul: .*f32\[3\], f64\[3\]"):
        lax.mul(np.ones(3, np.float32), np.ones(3))
    with pytest.raises(TypeError, match="sin: operand must be floating-point or complex, got i64"):
        lax.sin(np.ones(3, np.int64))
