"""Compiled code computes what the evaluator computes on NaN, ±inf and ±0.0, bit for bit
(sign of zero included; any NaN matches any NaN), for every elementwise primitive.

Each float primitive of the op table (unary and binary) runs on arrays of the special
values, and each binary one also with a special value written as a constant (a literal,
or a broadcast of one) on either side: the constants are where simplifications that
assume finite values (``x * 0 -> 0``, ``x + 0 -> x``) would change the result. Those
apply only to the zeros and identity bases the transforms make (``test_algebra.py``).
"""
import inspect

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax
from funcgrad.core.primitive import PRIMITIVES, abstract_eval_rules
from funcgrad.core.trace import bind

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 2.0, 0.5]
DTYPES = [np.float64, np.float32]


def _arity(prim) -> int:
    params = inspect.signature(abstract_eval_rules[prim]).parameters.values()
    return sum(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)


def _float_prims(arity):
    out = []
    for name, p in sorted(PRIMITIVES.items()):
        kinds = getattr(p, "kinds", None)
        if kinds is None or "f" not in kinds or not getattr(p, "elementwise", False) or _arity(p) != arity:
            continue
        out.append(name)
    return out


PARAMS = {"polygamma": {"n": 1}}
UNARY = _float_prims(1)
BINARY = _float_prims(2)


EXACT = {"add", "sub", "mul", "div", "rem", "max", "min", "copysign", "complex", "neg", "abs", "sign",
         "floor", "ceil", "round", "sqrt", "real", "imag", "conj", "stop_gradient", "is_finite"}


def _same_bits(got, want, what, exact=True):
    """Bit for bit (any NaN matches any NaN); where ``exact`` is False (a math function
    whose compiled kernel differs from NumPy's libm in the last bits) finite nonzero
    results may differ by a few ulps, but NaN, ±inf and ±0.0 must match exactly."""
    got, want = np.atleast_1d(np.asarray(got)), np.atleast_1d(np.asarray(want))
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if got.dtype.kind not in "fc":
        bad = got != want
    else:
        same = got.view(np.uint8).reshape(got.shape + (-1,)) == want.view(np.uint8).reshape(want.shape + (-1,))
        same = same.all(-1) | (np.isnan(got) & np.isnan(want))
        if not exact:
            finite = np.isfinite(want) & (want != 0) & np.isfinite(got)
            tol = 8 * np.finfo(got.dtype).eps
            with np.errstate(all="ignore"):
                same |= finite & (np.abs(got - want) <= tol * np.abs(want))
        bad = ~same
    assert not bad.any(), f"{what}: compiled {got[bad]} vs evaluator {want[bad]}"


def _pairs(dtype):
    s = np.array(SPECIAL, dtype)
    x, y = np.meshgrid(s, s, indexing="ij")
    return x.ravel(), y.ravel()


def test_the_loop_covers_the_arithmetic():
    assert {"add", "sub", "mul", "div", "pow", "max", "min", "rem", "atan2"} <= set(BINARY)
    assert {"neg", "exp", "log", "sqrt", "sin", "abs", "sign", "floor"} <= set(UNARY)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_on_special_values(name, dtype):
    prim = PRIMITIVES[name]
    x = np.array(SPECIAL, dtype)
    f = lambda x: bind(prim, x, **PARAMS.get(name, {}))  # noqa: E731
    with np.errstate(all="ignore"):
        want = f(x)
        _same_bits(fg.jit(f)(x), want, f"{name}({dtype.__name__})", name in EXACT)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_on_special_values(name, dtype):
    prim = PRIMITIVES[name]
    x, y = _pairs(dtype)
    f = lambda x, y: bind(prim, x, y)  # noqa: E731
    with np.errstate(all="ignore"):
        _same_bits(fg.jit(f)(x, y), f(x, y), f"{name} arrays", name in EXACT)


def _const(c, dtype, shape):
    """``c`` as the program writes a constant: a literal, broadcast to ``shape``."""
    lit = np.asarray(c, dtype)[()]
    return lax.broadcast_in_dim(lit, shape, ()) if shape else lit


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_with_a_constant_operand(name, dtype):
    prim = PRIMITIVES[name]
    x = np.array(SPECIAL, dtype)
    for c in SPECIAL:
        for shape in [(), x.shape]:
            for side in ("rhs", "lhs"):
                def f(x):
                    k = _const(c, dtype, shape)
                    return bind(prim, x, k) if side == "rhs" else bind(prim, k, x)

                with np.errstate(all="ignore"):
                    for xs in ([np.asarray(v) for v in x] if shape == () else [x]):
                        if name == "pow" and side == "lhs" and shape == () and xs == 0.5:
                            continue  # NumPy's 0-d power takes sqrt for the exponent 0.5 (below)
                        _same_bits(fg.jit(f)(xs), f(xs), f"{name} {side} const {c!r} {dtype.__name__} {shape}",
                                   name in EXACT)


def test_user_multiplication_by_zero_keeps_nan_inf_and_sign():
    x = np.array([np.nan, np.inf, -1.0])
    got = fg.jit(lambda x: x * 0.0)(x)
    assert np.isnan(got[:2]).all() and got[2] == 0.0 and np.signbit(got[2])


def test_user_addition_of_zero_keeps_negative_zero():
    x = np.array([-0.0, 1.0])
    for f in (lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x - (-0.0)):
        assert not np.signbit(fg.jit(f)(x)[0])
    for f in (lambda x: x + (-0.0), lambda x: x - 0.0, lambda x: x * 1.0):  # exact: these may drop
        assert np.signbit(fg.jit(f)(x)[0])


def test_user_identity_matrix_product_keeps_inf():
    x = np.array([np.inf, 1.0])
    eye = np.eye(2)
    with np.errstate(invalid="ignore"):
        _same_bits(fg.jit(lambda x: x @ eye)(x), x @ eye, "x @ eye")
        _same_bits(fg.jit(lambda x: eye @ x)(x), eye @ x, "eye @ x")


def test_square_root_power_is_numpys():
    """NumPy's power takes ``sqrt`` for a scalar exponent 0.5 (``(-inf) ** 0.5`` is nan,
    ``(-0.0) ** 0.5`` is ``-0.0``; C's ``pow`` gives inf and 0.0): so does compiled code."""
    import funcgrad.numpy as fnp

    x = np.array([-np.inf, -0.0, 0.0, np.inf, np.nan, 4.0, 2.0, -1.0])
    for dtype in DTYPES:
        xs = x.astype(dtype)
        for f in (lambda x: x ** 0.5, lambda x: fnp.power(x, 0.5), lambda x: fnp.sqrt(x)):
            with np.errstate(invalid="ignore"):
                _same_bits(fg.jit(f)(xs), f(fnp.asarray(xs)), "x ** 0.5")


@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_power_and_casts_on_special_values(dtype):
    x = np.array(SPECIAL, dtype)
    with np.errstate(all="ignore"):
        for y in (-3, -2, -1, 0, 1, 2, 3, 5):
            f = lambda x: lax.integer_pow(x, y)  # noqa: E731
            _same_bits(fg.jit(f)(x), f(x), f"integer_pow {y}")
        for to in (np.float32, np.float64, np.complex128):
            f = lambda x: lax.convert_element_type(x, to)  # noqa: E731
            _same_bits(fg.jit(f)(x), f(x), f"convert to {np.dtype(to).name}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_math_functions_return_numpys_nan(dtype):
    """The sign of the NaN a math function returns for a NaN is NumPy's (it differs by
    function and machine: float32 ``exp(-nan)`` is +NaN, float64's keeps the sign), so
    ``signbit`` of it agrees eagerly and compiled."""
    from funcgrad.lowering import nan_signs

    x = np.array([np.nan, -np.nan] * 9, dtype)
    assert np.signbit(x).tolist() == [False, True] * 9
    prims = {"asin": "asin", "acos": "acos", "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh"}
    for name in nan_signs.NAMES:
        prim = PRIMITIVES[prims.get(name, name)]
        f = lambda x: bind(prim, x)  # noqa: E731
        with np.errstate(all="ignore"):
            want, got = np.asarray(f(x)), np.asarray(fg.jit(f)(x))
        assert np.isnan(got).all() and np.signbit(got).tolist() == np.signbit(want).tolist(), name


@pytest.mark.parametrize("dtype", DTYPES)
def test_signbit_of_exp_of_negated_abs_at_nan(dtype):
    import funcgrad.numpy as fnp

    def f(x):
        return fnp.signbit(fnp.exp(-fnp.abs(x))), fnp.copysign(1.0, fnp.tanh(-x))

    x = np.array([0.0, -np.inf, np.nan, -0.0], dtype)
    with np.errstate(all="ignore"):
        want = f(x)
        assert np.signbit(np.exp(-np.abs(x))).tolist() == want[0].tolist()  # eager is NumPy
        for got, w in zip(fg.jit(f)(x), want):
            assert got.tolist() == w.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_product_with_a_one_element_zero_operand_is_nan(dtype):
    """``numpy.dot`` with an operand of one element calls BLAS ``axpy``, which skips the
    products when that element is 0 (``dot([[inf]], [0.0])`` is 0); funcgrad computes
    them, eagerly as compiled (``numpy.matmul``'s values)."""
    import funcgrad.numpy as fnp

    a = np.array([[-0.0], [np.inf], [np.nan], [2.0]], dtype)
    for x, y in [(a, np.array([-0.0], dtype)), (a, np.array([[0.0]], dtype)), (np.array([0.0], dtype), a.T),
                 (np.array([[0.0]], dtype), a.T)]:
        with np.errstate(invalid="ignore"):
            want = np.matmul(x, y)
            for f in (fnp.dot, fnp.matmul, lambda x, y: x @ fnp.asarray(y)):
                for _ in range(3):  # (the eager native entry, once enabled, included)
                    _same_bits(f(x, y), want, f"eager {x.shape} {y.shape}")
                _same_bits(fg.jit(f)(x, y), want, f"jit {x.shape} {y.shape}")
    assert np.isnan(fnp.dot(a, np.array([0.0], dtype))[1:3]).all()
