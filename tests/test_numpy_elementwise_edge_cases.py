"""funcgrad.numpy elementwise functions: what the op table cannot express (errors,
dtype promotion with weak Python scalars, NumPy interop on tracers, warnings)."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.numpy_api import elementwise

REQUIRED = """add subtract multiply divide true_divide floor_divide mod remainder divmod power
float_power negative positive abs absolute fabs sign reciprocal sqrt cbrt square exp exp2
expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh
arccosh arctanh hypot floor ceil round around trunc rint fix clip maximum minimum fmax fmin
where isfinite isnan isinf logical_and logical_or logical_not logical_xor bitwise_and
bitwise_or bitwise_xor bitwise_not invert equal not_equal less less_equal greater
greater_equal deg2rad rad2deg degrees radians sinc logaddexp logaddexp2 copysign
nan_to_num signbit heaviside""".split()


def test_all_names_exported():
    missing = [n for n in REQUIRED if n not in elementwise.__all__ or not callable(getattr(fnp, n, None))]
    assert not missing
    assert all(getattr(fnp, n) is getattr(elementwise, n) for n in elementwise.__all__)


def staged_dtype(f, *args):
    """dtype of ``f``'s output aval when traced with ``make_jaxpr``."""
    closed = fg.make_jaxpr(f)(*args)
    fg.check_jaxpr(closed)
    return closed.jaxpr.outvars[0].aval.dtype


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["add", "subtract", "maximum", "arctan2", "floor_divide", "where_xy",
                                  "logical_and", "bitwise_or", "power", "equal", "hypot"])
def test_broadcast_error_names_function_and_shapes(name):
    x, y = np.ones((2, 3)), np.ones(4)
    if name == "where_xy":
        name, f = "where", lambda a, b: fnp.where(True, a, b)
    elif name == "bitwise_or":
        x, y = x.astype(np.int64), y.astype(np.int64)
        f = fnp.bitwise_or
    else:
        f = getattr(fnp, name)
    for run in (lambda: f(x, y), lambda: fg.make_jaxpr(f)(x, y)):
        with pytest.raises(ValueError, match=rf"{name}.*\(2, 3\).*\(4,\)"):
            run()


def test_clip_broadcast_error():
    with pytest.raises(ValueError, match=r"clip.*\(3,\).*\(2,\)"):
        fnp.clip(np.ones(3), np.zeros(2), 1.0)


def test_bool_subtract_and_negative_raise_like_numpy():
    b = np.array([True, False])
    with pytest.raises(TypeError, match="subtract.*bitwise_xor"):
        fnp.subtract(b, b)
    with pytest.raises(TypeError, match="negative.*logical_not"):
        fnp.negative(b)
    with pytest.raises(TypeError, match="subtract"):
        fg.make_jaxpr(fnp.subtract)(b, True)
    for name in ("sign", "positive"):
        with pytest.raises(TypeError, match=name):
            getattr(fnp, name)(b)
    # With a Python int the result is int64, which is fine (as in NumPy).
    assert fnp.subtract(b, 1).dtype == np.int64


@pytest.mark.parametrize("name", ["square", "reciprocal", "conj", "floor_divide", "remainder", "divmod", "power"])
def test_bool_ops_numpy_computes_in_int8_give_int8(name):
    b, c = np.array([True, False]), np.array([True, True])
    args = (b,) if name in ("square", "reciprocal", "conj") else (b, c)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(*args)
    got = getattr(fnp, name)(*args)
    for w, g in zip(*((want, got) if name == "divmod" else ((want,), (got,)))):
        assert g.dtype == w.dtype == np.int8
        np.testing.assert_array_equal(g, w)


def test_int_negative_power_raises_value_error():
    i = np.array([2, 3], np.int32)
    with pytest.raises(ValueError, match="negative integer powers"):
        fnp.power(i, -1)
    with pytest.raises(ValueError, match="negative integer powers"):
        fnp.power(i, np.array([1, -2], np.int32))
    with pytest.raises(ValueError, match="negative integer powers"):
        fnp.power(2, -1)
    with pytest.raises(ValueError, match="negative integer powers"):  # a static exponent is checked when tracing
        fg.make_jaxpr(lambda x: x ** -2)(i)
    assert fnp.power(2.0, -1) == 0.5 and fnp.power(i, 0).dtype == np.int32


def test_bitwise_on_floats_raises():
    with pytest.raises(TypeError, match="bitwise_and.*float64"):
        fnp.bitwise_and(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="invert.*float32"):
        fnp.invert(np.ones(2, np.float32))


@pytest.mark.parametrize("bad", [np.ones(2, np.clongdouble), np.ones(2, np.float16), np.array(["a", "b"]), "ab", None,
                                 np.clongdouble(1j)])
def test_unsupported_inputs_raise_type_error(bad):
    with pytest.raises(TypeError):
        fnp.add(bad, 1.0)
    with pytest.raises(TypeError):
        fnp.sin(bad)


def test_where_forms():
    assert [list(i) for i in fnp.where(np.array([True, False, True]))] == [[0, 2]]  # = nonzero
    with pytest.raises(ValueError, match="both or neither"):
        fnp.where(np.array([True]), 1.0)
    out = fnp.where(True, 1.0, 2)
    assert type(out) is fg.Array and out.shape == () and out.dtype == np.float64


def test_clip_bound_keywords():
    x = np.array([-2.0, 0.0, 2.0])
    np.testing.assert_array_equal(fnp.clip(x, min=-1.0), [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(fnp.clip(x, a_max=1.0), [-2.0, 0.0, 1.0])  # NumPy's keywords
    np.testing.assert_array_equal(fnp.clip(a=x, min=0.0, max=1.0), [0.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="a_min and min"):
        fnp.clip(x, a_min=-1.0, min=-1.0)
    with pytest.raises(TypeError, match="pass the array once"):
        fnp.clip(x, a=x)


def test_round_rejects_bool_decimals():
    with pytest.raises(TypeError, match="round"):
        fnp.round(np.array([True]), 1)


# --- dtype promotion (NumPy 2, weak Python scalars) --------------------------------------

f32, f64, i32, i64, b = np.float32, np.float64, np.int32, np.int64, np.bool_
PROMOTION = [
    (fnp.add, (np.ones(2, f32), 1.0), f32),  # Python float is weak
    (fnp.add, (np.ones(2, f32), 1), f32),
    (fnp.add, (np.ones(2, f32), np.float64(1.0)), f64),  # NumPy scalars are strong
    (fnp.add, (np.ones(2, i32), 1), i32),
    (fnp.add, (np.ones(2, i32), 1.0), f64),
    (fnp.add, (np.ones(2, i32), np.ones(2, i64)), i64),
    (fnp.add, (np.ones(2, i32), np.ones(2, f32)), f64),
    (fnp.add, (np.ones(2, b), 1), i64),
    (fnp.add, (np.ones(2, b), np.ones(2, b)), b),
    (fnp.multiply, (np.ones(2, b), 2.0), f64),
    (fnp.sin, (np.ones(2, i32),), f64),
    (fnp.sin, (np.ones(2, f32),), f32),
    (fnp.sin, (np.ones(2, b),), f64),  # NumPy: float16 (unsupported); documented deviation
    (fnp.true_divide, (np.ones(2, i32), np.ones(2, i32)), f64),
    (fnp.divide, (np.ones(2, f32), 2), f32),
    (fnp.floor_divide, (np.ones(2, i32), 2), i32),
    (fnp.power, (np.ones(2, i32), 2), i32),
    (fnp.power, (np.ones(2, i32), 2.0), f64),
    (fnp.power, (np.ones(2, f32), 2), f32),
    (fnp.float_power, (np.ones(2, f32), 2), f64),
    (fnp.arctan2, (np.ones(2, f32), 1), f32),
    (fnp.hypot, (np.ones(2, i32), np.ones(2, f32)), f64),
    (fnp.floor, (np.ones(2, i32),), i32),
    (fnp.rint, (np.ones(2, i32),), f64),
    (fnp.round, (np.ones(2, i32),), i32),
    (fnp.fabs, (np.ones(2, i32),), f64),
    (fnp.maximum, (np.ones(2, i32), 0.5), f64),
    (fnp.clip, (np.ones(2, i32), 0, 1), i32),
    (fnp.clip, (np.ones(2, i32), 0.5, 1), f64),
    (fnp.clip, (np.ones(2, f32), np.int64(0), 1), f64),
    (fnp.where, (np.ones(2, b), np.ones(2, f32), 0.0), f32),
    (fnp.where, (np.ones(2, b), np.ones(2, i32), 0.5), f64),
    (fnp.less, (np.ones(2, i32), 1.5), b),
    (fnp.nan_to_num, (np.ones(2, f32),), f32),
    (fnp.nan_to_num, (np.ones(2, i32),), i32),
]


@pytest.mark.parametrize("f,args,dtype", PROMOTION, ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(PROMOTION)])
def test_promotion_matches_numpy_eager_and_staged(f, args, dtype):
    assert np.asarray(f(*args)).dtype == dtype
    ref = getattr(np, f.__name__)
    if f is not fnp.sin or args[0].dtype != b:  # NumPy's float16 for bool is the documented exception
        assert np.asarray(ref(*args)).dtype == dtype
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    scalars = {i: a for i, a in enumerate(args) if not isinstance(a, np.ndarray)}

    def staged(*arrs):
        it = iter(arrs)
        return f(*[scalars[i] if i in scalars else next(it) for i in range(len(args))])

    assert staged_dtype(staged, *arrays) == dtype


def test_scalar_results_are_0d_values():
    # ufuncs of 0-d / Python inputs give 0-d values (NumPy: scalars), composites on select too
    for out in (fnp.trunc(np.float64(-2.5)), fnp.floor_divide(7, 2), fnp.isnan(1.0), fnp.nan_to_num(np.nan),
                fnp.heaviside(0.0, 0.5), fnp.divmod(7, -2)[1], fnp.round(np.array(15), -1)):
        assert type(out) is fg.Array and out.shape == () and not out.flags.writeable, type(out)
    assert fnp.floor_divide(7, 2) == 3 and fnp.floor_divide(7, 2).dtype == np.int64


def test_int_division_by_zero_gives_zero():
    x = np.array([5, -5, 0])
    np.testing.assert_array_equal(fnp.floor_divide(x, 0), [0, 0, 0])
    np.testing.assert_array_equal(fnp.remainder(x, 0), [0, 0, 0])


def test_float_floor_divide_matches_numpy_bits():
    a = np.array([1.0, -1.0, 0.3, 7.0, -7.0, 1e-300, 5.0])
    c = np.array([0.1, 0.1, 0.1, -0.7, 0.7, 1e300, -np.inf])
    np.testing.assert_array_equal(fnp.floor_divide(a, c), np.floor_divide(a, c))
    np.testing.assert_array_equal(np.signbit(fnp.remainder(a, c)), np.signbit(np.remainder(a, c)))
    assert fnp.floor_divide(1.0, 0.1) == 9.0


# --- tracers and NumPy interop --------------------------------------------------------------

def test_numpy_ufunc_on_tracer_dispatches_to_fnp():
    x = np.linspace(0.1, 1.0, 4)
    closed = fg.make_jaxpr(lambda t: np.sin(t) + np.maximum(t, 0.5) * np.power(t, 2))(x)
    text = str(closed)
    assert "sin" in text and "max" in text and "integer_pow" in text
    out = fg.eval_closed_jaxpr(closed, x)[0]
    np.testing.assert_allclose(out, np.sin(x) + np.maximum(x, 0.5) * x**2, rtol=1e-14)
    closed = fg.make_jaxpr(lambda t: np.divmod(t, 0.3))(x)  # a two-output ufunc
    q, r = fg.eval_closed_jaxpr(closed, x)
    np.testing.assert_array_equal(q, np.floor_divide(x, 0.3))
    np.testing.assert_array_equal(r, np.remainder(x, 0.3))


def test_numpy_ufunc_method_on_tracer_raises():
    with pytest.raises(TypeError, match="add.reduce"):
        fg.make_jaxpr(lambda t: np.add.reduce(t))(np.ones(3))


def test_operators_on_tracers_match_numpy():
    x = np.array([1.0, -1.0, 2.5, -0.3])

    def f(t):
        return [t // 0.1, t % 0.7, -t, abs(t), t ** 2, 2.0 ** t, t / 3, (t > 0) & (t < 2), ~(t > 0)]

    closed = fg.make_jaxpr(f)(x)
    fg.check_jaxpr(closed)
    for got, want in zip(fg.eval_closed_jaxpr(closed, x), f(x)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_round_and_nan_to_num_under_tracing():
    x = np.array([1.005, 2.675, -0.125, np.nan, np.inf])
    for f in (lambda t: fnp.round(t, 2), lambda t: fnp.around(t, -1), lambda t: fnp.nan_to_num(t, nan=-1.0)):
        closed = fg.make_jaxpr(f)(x)
        np.testing.assert_array_equal(fg.eval_closed_jaxpr(closed, x)[0], f(x))


# --- no spurious warnings ---------------------------------------------------------------------

def test_no_runtime_warnings_where_numpy_has_none():
    x = np.array([1e300, -1e300, 0.0, np.inf, -np.inf, 1.0])
    y = np.array([1e300, 1e-300, 0.0, np.inf, 1.0, -np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("hypot", "logaddexp", "logaddexp2", "fmax", "fmin", "copysign", "heaviside"):
            np.testing.assert_array_equal(getattr(fnp, name)(x, y), getattr(np, name)(x, y))
        np.testing.assert_array_equal(fnp.sinc(np.array([0.0, 1.0])), np.sinc(np.array([0.0, 1.0])))
        fnp.floor_divide(np.array([1.0, -3.0]), np.array([1e-300, 7.0]))  # NumPy: no warning either
        fnp.nan_to_num(np.array([np.nan, np.inf]))
        fnp.isinf(np.array([np.nan, np.inf]))
        fnp.signbit(np.array([-np.nan, -0.0]))


def test_negative_zero_python_scalar_is_not_confused_with_zero():
    # Python scalars become memoised 0-d constants; -0.0 == 0.0 must not share one.
    x = np.ones(2)
    for s in (1.0, -1.0, 0.0, -0.0, 1.0, -1.0):  # (and a signed zero is not confused with +-1)
        np.testing.assert_array_equal(fnp.multiply(x, s), x * s)
    for first, second in ((0.0, -0.0), (-0.0, 0.0)):
        for s in (first, second):
            np.testing.assert_array_equal(np.signbit(fnp.multiply(x, s)), np.signbit(x * s))
            np.testing.assert_array_equal(np.signbit(fg.jit(lambda v, s=s: v * s)(x)), np.signbit(x * s))
