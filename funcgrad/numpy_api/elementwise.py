"""funcgrad.numpy: elementwise functions (NumPy's ufuncs and a few relatives).

Each function checks and promotes its arguments with ``_util`` (NumPy 2 rules, weak
Python scalars), broadcasts them, then applies strict primitives from ``lax_api``.
Many are composites; they are written so that valid inputs raise no RuntimeWarning
eagerly where NumPy raises none: an operation whose result a ``select`` discards is
fed a harmless operand (e.g. a denominator of 1) instead of the real one.

Deviations from NumPy, by design:

- bool, int8 and uint8 inputs to floating-point functions (``sin``, ``sqrt``, ``rint``,
  ``round``, ``arctan2``, ...) give float64 where NumPy gives float16 (funcgrad has no
  float16); int16/uint16 give float32, as in NumPy (``dtypes.float_loop_dtype``);
- functions for which NumPy turns bools into int8 (``power``, ``square``,
  ``reciprocal``, ``conj``, ``floor_divide``, ``remainder``, ``divmod``) do so too;
- integer division, remainder and reciprocal by zero give 0 without a RuntimeWarning
  (NumPy warns, and its ``reciprocal`` of integer 0 gives the dtype's minimum);
- under tracing, an integer ``power`` with a traced negative exponent cannot raise
  NumPy's ValueError (a negative Python-int exponent still raises).
"""
from __future__ import annotations

import builtins  # this module defines abs, round and divmod; builtins keeps Python's
import functools
import math
import operator

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.prims import elementwise as _ewp
from funcgrad.core.staging import JaxprTracer
from funcgrad.core.trace import Tracer
from funcgrad.numpy_api import staged
from funcgrad.numpy_api._util import (
    _uniform_dtype,
    asarray,
    aval_of,
    check_arraylike,
    full,
    promote_args,
    promote_args_float_loop,
    promote_args_inexact,
    promote_dtypes,
    promote_shapes,
    reject_complex,
)

__all__ = [
    # arithmetic
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod",
    "remainder", "divmod", "power", "float_power", "negative", "positive", "abs",
    "absolute", "fabs", "sign", "reciprocal", "square",
    # exponents, logarithms, roots
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "logaddexp", "logaddexp2",
    # trigonometric and hyperbolic
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "degrees",
    "radians", "sinc",
    # rounding
    "floor", "ceil", "trunc", "rint", "fix", "round", "around",
    # comparison, selection, float classification
    "maximum", "minimum", "fmax", "fmin", "clip", "where", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "isfinite", "isnan", "isinf", "signbit",
    "copysign", "heaviside", "nan_to_num",
    # logical and bitwise
    "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
]

_BOOL = dtypes.bool_


# --- helpers -------------------------------------------------------------------------

def _out(x):
    """NumPy ufuncs return a NumPy scalar for 0-d inputs; primitives built on
    ``np.where``/``astype`` (select, casts, integer division) return 0-d arrays."""
    if type(x) is np.ndarray and not x.shape:
        return x[()]
    return x


def _const(like, value):
    """``value`` broadcast to the shape and dtype of the (promoted) array ``like``."""
    return full(like.shape, value, like.dtype)


def _is_float(x) -> bool:
    return x.dtype.kind == "f"


def _no_bool(name: str, x, why: str = "") -> None:
    if x.dtype == _BOOL:
        raise TypeError(
            f"{name}: not supported for boolean operands{why}; convert first, e.g. "
            "x.astype(numpy.int64)"
        )


def _int8_if_bool(*xs):
    """Bool operands as int8: NumPy's loop for the arithmetic that bools lack
    (``np.square(True)`` is ``int8(1)``)."""
    out = [lax.convert_element_type(x, dtypes.int8) if x.dtype == _BOOL else x for x in xs]
    return out if len(out) > 1 else out[0]


def _elementwise(promote):
    """Decorator: promote and broadcast the arguments with ``promote`` (named after the
    decorated function, for errors), then run the body on them. A body in ``_DIRECT`` is
    that primitive for non-bool operands: staged calls try ``numpy_api/staged.py`` first."""

    def decorator(body):
        name = body.__name__
        prim, nin = _DIRECT.get(name, (None, 0))
        if prim is not None:
            attempt = (staged.unary(name, prim, staged.NUMERIC) if nin == 1
                       else staged.binary(name, prim, staged.NUMERIC, promote))

            @functools.wraps(body)
            def fn(*args):
                if args and (isinstance(args[0], _Tracer) or isinstance(args[-1], _Tracer)):
                    out = attempt(*args)
                    if out is not None:
                        return out
                return _out(body(*promote(name, *args)))

            return fn

        @functools.wraps(body)
        def fn(*args):
            return _out(body(*promote(name, *args)))

        return fn

    return decorator


# The numeric bodies that are one primitive for every non-bool dtype (see ``_elementwise``).
_DIRECT = {"add": (_ewp.add_p, 2), "subtract": (_ewp.sub_p, 2), "multiply": (_ewp.mul_p, 2),
           "negative": (_ewp.neg_p, 1), "absolute": (_ewp.abs_p, 1)}
_JT = JaxprTracer
_Tracer = Tracer  # (the attempts take the staging trace's and the eager tape's)
_F = promote_args_float_loop
_numeric = _elementwise(promote_args)  # keeps int/bool dtypes (NumPy 2 promotion)
_inexact = _elementwise(promote_args_float_loop)  # ints and bools become float (NumPy's loop)
_inexact64 = _elementwise(promote_args_inexact)  # ints and bools become float64


def _simple(name: str, promote, lax_fn, nin: int, doc: str):
    """A function that is one primitive after promotion (a ``lax`` one with inexact
    promotion: staged calls try ``numpy_api/staged.py`` first)."""
    prim = getattr(lax_fn, "primitive", None) if promote in (promote_args_float_loop, promote_args_inexact) else None
    if nin == 1 and prim is not None:
        attempt = staged.unary(name, prim, staged.INEXACT)

        def fn(x, /):
            if isinstance(x, _Tracer):
                out = attempt(x)
                if out is not None:
                    return out
            return lax_fn(*promote(name, x))
    elif nin == 1:
        def fn(x, /):
            return lax_fn(*promote(name, x))
    elif prim is not None:
        attempt = staged.binary(name, prim, staged.INEXACT, promote)

        def fn(x1, x2, /):
            if isinstance(x1, _Tracer) or isinstance(x2, _Tracer):
                out = attempt(x1, x2)
                if out is not None:
                    return out
            return lax_fn(*promote(name, x1, x2))
    else:
        def fn(x1, x2, /):
            return lax_fn(*promote(name, x1, x2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _real_only(name: str, lax_fn):
    """``lax_fn`` behind NumPy's TypeError for complex input (the ufunc has no complex loop)."""
    def checked(*xs):
        reject_complex(name, *xs)
        return lax_fn(*xs)

    return checked


# --- floating-point functions that are one primitive ---------------------------------
# (integer and bool inputs compute in NumPy's float loop dtype, float64 for most; see module doc)

exp = _simple("exp", _F, lax.exp, 1, "Elementwise ``e ** x``.")
expm1 = _simple("expm1", _F, lax.expm1, 1, "Elementwise ``exp(x) - 1``, accurate near 0.")
log = _simple("log", _F, lax.log, 1, "Elementwise natural logarithm.")
log1p = _simple("log1p", _F, lax.log1p, 1, "Elementwise ``log(1 + x)``, accurate near 0.")
sqrt = _simple("sqrt", _F, lax.sqrt, 1, "Elementwise non-negative square root.")
cbrt = _simple("cbrt", _F, _real_only("cbrt", lax.cbrt), 1, "Elementwise real cube root.")
sin = _simple("sin", _F, lax.sin, 1, "Elementwise sine (radians).")
cos = _simple("cos", _F, lax.cos, 1, "Elementwise cosine (radians).")
tan = _simple("tan", _F, lax.tan, 1, "Elementwise tangent (radians).")
arcsin = _simple("arcsin", _F, lax.asin, 1, "Elementwise inverse sine, in [-pi/2, pi/2].")
arccos = _simple("arccos", _F, lax.acos, 1, "Elementwise inverse cosine, in [0, pi].")
arctan = _simple("arctan", _F, lax.atan, 1, "Elementwise inverse tangent, in [-pi/2, pi/2].")
sinh = _simple("sinh", _F, lax.sinh, 1, "Elementwise hyperbolic sine.")
cosh = _simple("cosh", _F, lax.cosh, 1, "Elementwise hyperbolic cosine.")
tanh = _simple("tanh", _F, lax.tanh, 1, "Elementwise hyperbolic tangent.")
arcsinh = _simple("arcsinh", _F, lax.asinh, 1, "Elementwise inverse hyperbolic sine.")
arccosh = _simple("arccosh", _F, lax.acosh, 1, "Elementwise inverse hyperbolic cosine.")
arctanh = _simple("arctanh", _F, lax.atanh, 1, "Elementwise inverse hyperbolic tangent.")


def _rint(x):
    if x.dtype.kind == "c":  # NumPy rounds the two parts (lax.round takes only reals)
        return lax.complex(lax.round(lax.real(x)), lax.round(lax.imag(x)))
    return lax.round(x)


rint = _simple("rint", _F, _rint, 1, "Round to the nearest integer, halves to even (complex: each part).")
divide = _simple(
    "divide", promote_args_inexact, lax.div, 2,
    "Elementwise true division ``x1 / x2``; integers divide in float64.\n\n"
    ">>> fnp.divide(1, 2)\nArray(0.5)",
)
true_divide = divide
staged.ATTEMPTS["true_divide"] = staged.ATTEMPTS["divide"]  # (the name of the ``/`` operator)
arctan2 = _simple("arctan2", _F, _real_only("arctan2", lax.atan2), 2,
                  "Elementwise angle of the point (x2, x1), in [-pi, pi].")
copysign = _simple("copysign", _F, _real_only("copysign", lax.copysign), 2, "``|x1|`` with the sign (bit) of ``x2``.")

_LN2 = math.log(2.0)


@_inexact
def exp2(x, /):
    """Elementwise ``2 ** x``."""
    return lax.pow(_const(x, 2.0), x)


@_inexact
def log2(x, /):
    """Elementwise base-2 logarithm."""
    return lax.log2(x)


@_inexact
def log10(x, /):
    """Elementwise base-10 logarithm."""
    return lax.log10(x)


@_inexact
def deg2rad(x, /):
    """Degrees to radians (``x * pi/180``, NumPy's constant)."""
    reject_complex("deg2rad", x)
    return lax.mul(x, _const(x, math.pi / 180.0))


@_inexact
def rad2deg(x, /):
    """Radians to degrees (``x * 180/pi``, NumPy's constant)."""
    reject_complex("rad2deg", x)
    return lax.mul(x, _const(x, 180.0 / math.pi))


radians = deg2rad
degrees = rad2deg


@_inexact64
def sinc(x, /):
    """Normalised sinc, ``sin(pi x) / (pi x)`` with ``sinc(0) == 1``.

    Like NumPy, 0 is replaced by a tiny number rather than special-cased, so the result
    is bit-for-bit NumPy's. Bool input gives float64, as in NumPy.
    """
    tiny = _const(x, 1e-20)
    y = lax.mul(_const(x, math.pi), lax.select(lax.eq(x, _const(x, 0.0)), tiny, x))
    return lax.div(lax.sin(y), y)


def _larger_first(a1, a2, x1, x2):
    """(x1, x2) ordered so the first has the larger ``a`` (ties: ``x1`` first), chosen by
    one select on the inputs: the function computed on either side of a tie is then the
    analytic one, and derivatives of every order are right at ties (``max``/``min`` or a
    select of two outputs give each side half of the first derivative and lose the
    second: the Hessian of ``logaddexp`` at ``x1 == x2`` came out zero). A nan ``a`` counts
    as larger, so it reaches the result (``hypot(nan, 0)`` is nan)."""
    first = lax.bitwise_or(lax.ge(a1, a2), lax.ne(a1, a1))
    return lax.select(first, x1, x2), lax.select(first, x2, x1)


@_inexact
def hypot(x1, x2, /):
    """``sqrt(x1**2 + x2**2)`` without overflow or underflow; inf if either is inf."""
    reject_complex("hypot", x1, x2)
    a1, a2 = lax.abs(x1), lax.abs(x2)
    # |big| * sqrt(1 + (small/big)**2), big the input of larger magnitude; the ratio of
    # the signed inputs (no abs: its derivative at 0 would drop d2/dx1^2 of hypot(0, y)).
    big, small = _larger_first(a1, a2, x1, x2)
    ok = lax.bitwise_and(lax.ne(big, _const(big, 0.0)), lax.is_finite(big))  # (a finite, nonzero denominator)
    ratio = lax.div(lax.select(ok, small, _const(small, 0.0)), lax.select(ok, big, _const(big, 1.0)))
    h = lax.mul(lax.abs(big), lax.sqrt(lax.add(_const(big, 1.0), lax.mul(ratio, ratio))))
    inf = _const(big, np.inf)
    return lax.select(lax.bitwise_or(lax.eq(a1, inf), lax.eq(a2, inf)), inf, h)


def _logaddexp(x1, x2, log1p_exp):
    """Shared body, NumPy's formula: ``big + log1p_exp(small - big)`` (at a tie
    ``big + log1p_exp(0)``: ``x + ln 2``, ``x + 1``), with ``big``/``small`` from
    ``_larger_first``. Equal infinities, whose difference is nan, give ``max(x1, x2) +
    log1p_exp(0)`` (inf, -inf; half the derivative to each), their nan difference kept out
    of the other branch (a nan there would reach the gradient through the select)."""
    big, small = _larger_first(x1, x2, x1, x2)
    zero = _const(x1, 0.0)
    same_inf = lax.bitwise_and(lax.eq(x1, x2), lax.bitwise_not(lax.is_finite(x1)))
    d = lax.select(same_inf, zero, lax.sub(small, big))
    on_tie = lax.add(lax.max(x1, x2), log1p_exp(zero))
    return lax.select(same_inf, on_tie, lax.add(big, log1p_exp(d)))


@_inexact
def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))`` without overflow."""
    reject_complex("logaddexp", x1, x2)
    return _logaddexp(x1, x2, lambda d: lax.log1p(lax.exp(d)))


@_inexact
def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)`` without overflow."""
    reject_complex("logaddexp2", x1, x2)
    def log2_1p_exp2(d):
        return lax.div(lax.log1p(lax.pow(_const(d, 2.0), d)), _const(d, _LN2))

    return _logaddexp(x1, x2, log2_1p_exp2)


@_inexact
def heaviside(x1, x2, /):
    """Step function: 0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``
    (nan where ``x1`` is nan)."""
    reject_complex("heaviside", x1, x2)
    zero = _const(x1, 0.0)
    step = lax.select(lax.lt(x1, zero), zero, lax.select(lax.gt(x1, zero), _const(x1, 1.0), x1))
    return lax.select(lax.eq(x1, zero), x2, step)


@_inexact
def fabs(x, /):
    """Absolute value, always floating point (ints give float64)."""
    reject_complex("fabs", x)
    return lax.abs(x)


def float_power(x1, x2, /):
    """``x1 ** x2`` computed in float64 (float32 inputs too, like NumPy); complex in complex128."""
    x1, x2 = promote_args_inexact("float_power", x1, x2)
    wide = dtypes.complex128 if x1.dtype.kind == "c" else dtypes.float64  # (float64 would drop imag)
    if x1.dtype != wide:
        x1 = lax.convert_element_type(x1, wide)
        x2 = lax.convert_element_type(x2, wide)
    return lax.pow(x1, x2)


# --- arithmetic --------------------------------------------------------------------

@_numeric
def add(x1, x2, /):
    """Elementwise ``x1 + x2`` (for bools: logical or, like NumPy)."""
    return lax.bitwise_or(x1, x2) if x1.dtype == _BOOL else lax.add(x1, x2)


@_numeric
def multiply(x1, x2, /):
    """Elementwise ``x1 * x2`` (for bools: logical and, like NumPy)."""
    return lax.bitwise_and(x1, x2) if x1.dtype == _BOOL else lax.mul(x1, x2)


@_numeric
def subtract(x1, x2, /):
    """Elementwise ``x1 - x2``. Two bools raise TypeError, like NumPy."""
    if x1.dtype == _BOOL:
        raise TypeError(
            "subtract: boolean subtract (the `-` operator) is not supported, like in NumPy; "
            "use bitwise_xor (the `^` operator) or logical_xor instead"
        )
    return lax.sub(x1, x2)


@_numeric
def negative(x, /):
    """Elementwise ``-x``. Bools raise TypeError, like NumPy."""
    if x.dtype == _BOOL:
        raise TypeError(
            "negative: boolean negative (the `-` operator) is not supported, like in NumPy; "
            "use invert (the `~` operator) or logical_not instead"
        )
    return lax.neg(x)


@_numeric
def positive(x, /):
    """Elementwise ``+x`` (a no-op; bools raise TypeError, like NumPy)."""
    _no_bool("positive", x)
    return x


@_numeric
def absolute(x, /):
    """Elementwise ``|x|``; keeps the dtype (bools stay bools)."""
    return x if x.dtype == _BOOL else lax.abs(x)


abs = absolute  # noqa: A001 - NumPy's name
staged.ATTEMPTS["abs"] = staged.ATTEMPTS["absolute"]  # (the name of ``abs(x)``)


@_numeric
def sign(x, /):
    """-1, 0 or 1 by the sign of ``x`` (nan for nan); bools raise TypeError, like NumPy."""
    _no_bool("sign", x)
    return lax.sign(x)


@_numeric
def square(x, /):
    """Elementwise ``x * x``. Complex ``x`` takes the complex product, as NumPy's square
    loop does (``fma(a, a, -b*b) + fma(a, b, b*a)j``: ``square(1e308+1e308j)`` is
    ``-inf+infj``), not ``power(x, 2)``'s plain one (``nan+infj``, NumPy's too)."""
    x = _int8_if_bool(x)
    if x.dtype.kind == "c":
        return lax.mul(x, x)
    return lax.integer_pow(x, 2)


@_numeric
def reciprocal(x, /):
    """Elementwise ``1 / x``, in ``x``'s dtype: for integers this truncates (and
    ``1 // 0`` gives 0; NumPy gives the dtype's minimum with a warning)."""
    x = _int8_if_bool(x)
    if x.dtype.kind == "c":
        return _complex_reciprocal(x)
    return lax.div(_const(x, 1), x)


def _complex_reciprocal(x):
    """NumPy's complex reciprocal loop (Smith's method with numerator 1), not ``1 / x``:
    they differ at 0 (nan+nanj, not inf+nanj), at subnormals and in the sign of zeros."""
    re, im = lax.real(x), lax.imag(x)
    small_im = lax.le(lax.abs(im), lax.abs(re))
    one = _const(re, 1.0)
    r = lax.div(lax.select(small_im, im, re), lax.select(small_im, re, im))  # the ratio, |r| <= 1
    d = lax.add(lax.mul(lax.select(small_im, im, re), r), lax.select(small_im, re, im))
    out_re = lax.div(lax.select(small_im, one, r), d)
    out_im = lax.neg(lax.div(lax.select(small_im, r, one), d))
    return lax.complex(out_re, out_im)


def power(x1, x2, /):
    """Elementwise ``x1 ** x2``; integers stay integers.

    A Python-int exponent applies ``lax.integer_pow`` (exact, and differentiable at
    negative bases). Integers to negative integer powers raise ValueError, like NumPy
    (eagerly; a traced negative exponent cannot be checked).
    """
    if type(x2) is int:
        dtype = _uniform_dtype((x1,))
        if dtype is None or dtype == _BOOL:  # (a weak int leaves other strong dtypes alone)
            check_arraylike("power", x1, x2)
            x1 = promote_dtypes(x1, x2)[0]
        x1 = _int8_if_bool(x1)
        if x2 < 0 and x1.dtype.kind not in "fc":
            raise ValueError("power: integers to negative integer powers are not allowed (like NumPy)")
        return _out(lax.integer_pow(x1, x2))
    check_arraylike("power", x1, x2)
    x1, x2 = _int8_if_bool(*promote_args("power", x1, x2))
    return lax.pow(x1, x2)


# --- floor division and remainder ---------------------------------------------------
# Floats follow NumPy's npy_divmod step by step, so results are bit-for-bit NumPy's
# (e.g. 1.0 // 0.1 == 9.0, not 10.0): mod = fmod(a, b), div = (a - mod) / b; give mod
# the sign of b (mod += b, div -= 1); round floor(div) to the nearest integer.

def _fmod_sign_fix(a, b):
    """``fmod(a, b)`` and where it is nonzero with a sign different from ``b``'s."""
    zero = _const(a, 0.0)
    mod = lax.rem(a, b)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.lt(b, zero), lax.lt(mod, zero)))
    return mod, fix, zero


def _float_remainder(a, b):
    mod, fix, zero = _fmod_sign_fix(a, b)
    # A zero remainder takes the sign of b (b == 0 leaves fmod's nan).
    return lax.select(lax.eq(mod, zero), lax.copysign(zero, b), lax.select(fix, lax.add(mod, b), mod))


def _float_floor_divide(a, b):
    mod, fix, zero = _fmod_sign_fix(a, b)
    one = _const(a, 1.0)
    b_is_zero = lax.eq(b, zero)
    div = lax.div(lax.sub(a, mod), lax.select(b_is_zero, one, b))
    div = lax.select(fix, lax.sub(div, one), div)
    floor_div = lax.floor(div)
    # div is an integer up to rounding error: round floor(div) to the nearest.
    floor_div = lax.select(lax.gt(lax.sub(div, floor_div), _const(a, 0.5)), lax.add(floor_div, one), floor_div)
    # A zero quotient carries the sign of a / b (sign bits xor'ed, no division needed).
    signed_zero = lax.mul(lax.copysign(zero, a), lax.copysign(one, b))
    floor_div = lax.select(lax.eq(div, zero), signed_zero, floor_div)
    # x // 0 is a / 0 (inf or nan, with NumPy's warning); only the zero entries divide.
    return lax.select(b_is_zero, lax.div(a, lax.select(b_is_zero, b, one)), floor_div)


def _int_floor_divmod(a, b):
    """Floor division and modulo from truncating ``div``/``rem`` (x // 0 == x % 0 == 0)."""
    q, r = lax.div(a, b), lax.rem(a, b)
    zero = _const(a, 0)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
    return lax.select(fix, lax.sub(q, _const(a, 1)), q), lax.select(fix, lax.add(r, b), r)


@_numeric
def floor_divide(x1, x2, /):
    """Elementwise ``x1 // x2``, rounding toward minus infinity; ``x // 0`` is 0 for
    integers (NumPy also warns) and ``x1 / 0`` for floats."""
    x1, x2 = _int8_if_bool(x1, x2)
    if _is_float(x1):
        return _float_floor_divide(x1, x2)
    return _int_floor_divmod(x1, x2)[0]


@_numeric
def remainder(x1, x2, /):
    """Elementwise ``x1 % x2`` with the sign of ``x2`` (Python's ``%``); ``x % 0`` is 0
    for integers (NumPy also warns) and nan for floats."""
    x1, x2 = _int8_if_bool(x1, x2)
    if _is_float(x1):
        return _float_remainder(x1, x2)
    return _int_floor_divmod(x1, x2)[1]


mod = remainder


def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    x1, x2 = _int8_if_bool(*promote_args("divmod", x1, x2))
    if _is_float(x1):
        q, r = _float_floor_divide(x1, x2), _float_remainder(x1, x2)
    else:
        q, r = _int_floor_divmod(x1, x2)
    return _out(q), _out(r)


# --- rounding ------------------------------------------------------------------------
# NumPy 2.4 returns integer and bool inputs of floor/ceil/trunc/fix unchanged.

@_numeric
def floor(x, /):
    """Largest integer ``<= x`` (integers and bools are returned unchanged)."""
    reject_complex("floor", x)
    return lax.floor(x) if _is_float(x) else x


@_numeric
def ceil(x, /):
    """Smallest integer ``>= x`` (integers and bools are returned unchanged)."""
    reject_complex("ceil", x)
    return lax.ceil(x) if _is_float(x) else x


@_numeric
def trunc(x, /):
    """Round toward zero (integers and bools are returned unchanged)."""
    reject_complex("trunc", x)
    if not _is_float(x):
        return x
    return lax.select(lax.lt(x, _const(x, 0.0)), lax.ceil(x), lax.floor(x))


def fix(x):
    """Round toward zero; the same as ``trunc``."""
    return trunc(x)


def round(a, decimals=0):  # noqa: A001 - NumPy's name
    """Round to ``decimals`` decimal places, halves to even, like ``numpy.round``.

    Floats compute ``rint(a * 10**decimals) / 10**decimals`` (or divide, then multiply,
    for negative ``decimals``) in their own dtype, so results match NumPy's. Integers
    are returned unchanged for ``decimals >= 0`` and rounded through float64 otherwise.
    Bools: ``decimals`` must be 0 and the result is float64 (NumPy: float16).
    """
    check_arraylike("round", a)
    decimals = int(decimals)
    a = asarray(a, fname="round")
    kind = a.dtype.kind
    if kind == "b":
        if decimals != 0:
            raise TypeError("round: bool input supports only decimals=0 (NumPy cannot round bools either)")
        return _out(lax.round(lax.convert_element_type(a, dtypes.float64)))
    if kind in "iu" and decimals >= 0:
        return _out(a)
    if kind == "c":  # NumPy rounds the two parts separately
        return _out(lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals)))
    if decimals == 0:
        return lax.round(a)
    x = a if kind == "f" else lax.convert_element_type(a, dtypes.float64)
    scale = _const(x, 10.0 ** builtins.abs(decimals))
    if decimals > 0:
        y = lax.div(lax.round(lax.mul(x, scale)), scale)
    else:
        y = lax.mul(lax.round(lax.div(x, scale)), scale)
    return _out(y if kind == "f" else lax.convert_element_type(y, a.dtype))


around = round


# --- comparison and selection -----------------------------------------------------------

maximum = _simple("maximum", promote_args, lax.max, 2, "Elementwise maximum; nan if either is nan.")
minimum = _simple("minimum", promote_args, lax.min, 2, "Elementwise minimum; nan if either is nan.")


@_numeric
def fmax(x1, x2, /):
    """Elementwise maximum ignoring nan (nan only where both are nan; complex: either part)."""
    if x1.dtype.kind not in "fc":
        return lax.max(x1, x2)
    # Replace each nan by the other operand; max then sees a number wherever one exists.
    return lax.max(lax.select(lax.ne(x1, x1), x2, x1), lax.select(lax.ne(x2, x2), x1, x2))


@_numeric
def fmin(x1, x2, /):
    """Elementwise minimum ignoring nan (nan only where both are nan; complex: either part)."""
    if x1.dtype.kind not in "fc":
        return lax.min(x1, x2)
    return lax.min(lax.select(lax.ne(x1, x1), x2, x1), lax.select(lax.ne(x2, x2), x1, x2))


def clip(x=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):  # noqa: A002 - NumPy's names
    """Limit ``x`` to ``[min, max]``: ``minimum(maximum(x, min), max)``.

    Either bound may be None. The signature is the array API's and JAX's
    (``clip(x, /, min, max)``); NumPy's keywords ``a=``, ``a_min=``, ``a_max=`` work too.
    All given arguments promote together, so ``clip(int_array, 0.5, 1.5)`` is float64.
    """
    if a is not None:
        if x is not None:
            raise TypeError("clip: pass the array once, as the first argument or as a=")
        x = a
    if x is None:
        raise TypeError("clip: missing the array to clip (the first argument)")
    if min is not None:
        if a_min is not None:
            raise TypeError("clip: pass only one of a_min and min")
        a_min = min
    if max is not None:
        if a_max is not None:
            raise TypeError("clip: pass only one of a_max and max")
        a_max = max
    a = x
    bounds = [b for b in (a_min, a_max) if b is not None]
    a, *bounds = promote_args("clip", a, *bounds)
    if a_min is not None:
        a = lax.max(a, bounds.pop(0))
    if a_max is not None:
        a = lax.min(a, bounds.pop(0))
    return _out(a)


def _to_bool(x, fname: str):
    x = asarray(x, fname=fname)
    if x.dtype.kind == "c":  # NumPy's truth of a complex is "nonzero"; lax's cast reads only the real part
        return lax.ne(x, full(aval_of(x).shape, 0, x.dtype))
    return x if x.dtype == _BOOL else lax.convert_element_type(x, _BOOL)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``x`` where ``condition`` is true, else ``y`` (promoted and broadcast together).

    Always returns an array (a 0-d one for scalar inputs), like NumPy. The one-argument
    form ``where(condition)`` is ``nonzero(condition, size=size, fill_value=fill_value)``.
    """
    if x is None and y is None:
        from funcgrad.numpy_api.selection import nonzero  # (the nonzero family: selection.py)

        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("where: size and fill_value apply only to the one-argument form where(condition)")
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    check_arraylike("where", condition, x, y)
    cond = _to_bool(condition, "where")
    # NumPy's where casts a Python int outside the other operand's integer range (uint16
    # vs -1) to that dtype, wrapping, where arithmetic would raise OverflowError.
    for s in (x, y):
        if type(s) is int and not -(2**63) <= s < 2**64:  # (no integer dtype holds it)
            raise OverflowError(f"where: Python integer {s} out of bounds for int64")
    if type(x) is int and _outside_int_range(y, x):
        x = np.asarray(x).astype(aval_of(y).dtype)
    elif type(y) is int and _outside_int_range(x, y):
        y = np.asarray(y).astype(aval_of(x).dtype)
    x, y = promote_dtypes(x, y)
    cond, x, y = promote_shapes("where", cond, x, y)
    return lax.select(cond, x, y)


def _outside_int_range(x, s) -> bool:
    """The Python int ``s`` is outside ``x``'s integer dtype (``uint8`` vs -1)."""
    if not isinstance(x, (np.ndarray, np.generic, Tracer)):
        return False  # (Python scalars and lists: NumPy's own rules, through promote_args)
    dt = aval_of(x).dtype
    return dt.kind in "iu" and not np.iinfo(dt).min <= s <= np.iinfo(dt).max


def _traced_int_vs_narrow_int(s, x) -> bool:
    """``s`` a weakly typed traced int (a Python int) and ``x`` an integer operand of a
    dtype int64 holds exactly (not int64 itself, not uint64)."""
    if not (isinstance(s, Tracer) and s.aval.weak_type and s.aval.dtype.kind == "i"):
        return False
    if not isinstance(x, (np.ndarray, np.generic, Tracer)):
        return False
    dt = aval_of(x).dtype
    return dt.kind in "iu" and dt.itemsize < 8 and not (isinstance(x, Tracer) and x.aval.weak_type)


def _compare(name, lax_fn, doc, py_op):
    def fn(x1, x2, /):
        # NumPy 2 compares integers with out-of-range Python ints exactly (uint8 > -1 is
        # True everywhere) where arithmetic raises OverflowError: every element of x's
        # dtype compares with s as 0 does.
        if type(x2) is int and _outside_int_range(x1, x2):
            return _out(full(aval_of(x1).shape, py_op(0, x2), _BOOL))
        if type(x1) is int and _outside_int_range(x2, x1):
            return _out(full(aval_of(x2).shape, py_op(x1, 0), _BOOL))
        if _traced_int_vs_narrow_int(x1, x2) or _traced_int_vs_narrow_int(x2, x1):
            # A traced Python int (a jit argument: its value is unknown while tracing)
            # compared with a narrower integer: compare in int64, where both are exact, so
            # uint16 > -1 is True as NumPy's answer for the Python int is (fuzzer 3135, 9274).
            x1, x2 = asarray(x1, np.int64, fname=name), asarray(x2, np.int64, fname=name)
        return lax_fn(*promote_args(name, x1, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


equal = _compare("equal", lax.eq, "Elementwise ``x1 == x2`` (bool).", operator.eq)
not_equal = _compare("not_equal", lax.ne, "Elementwise ``x1 != x2`` (bool).", operator.ne)
less = _compare("less", lax.lt, "Elementwise ``x1 < x2`` (bool).", operator.lt)
less_equal = _compare("less_equal", lax.le, "Elementwise ``x1 <= x2`` (bool).", operator.le)
greater = _compare("greater", lax.gt, "Elementwise ``x1 > x2`` (bool).", operator.gt)
greater_equal = _compare("greater_equal", lax.ge, "Elementwise ``x1 >= x2`` (bool).", operator.ge)


# --- floating-point classification ------------------------------------------------------
# Integers and bools are always finite; those answers do not depend on the values.

def _float_class(name: str, float_fn, int_value: bool, doc: str):
    def fn(x, /):
        check_arraylike(name, x)
        x = asarray(x, fname=name)
        return _out(float_fn(x) if x.dtype.kind in "fc" else _const_bool(x, int_value))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _const_bool(like, value: bool):
    return full(like.shape, value, _BOOL)


isfinite = _float_class("isfinite", lax.is_finite, True, "True where ``x`` is neither inf nor nan.")
isnan = _float_class("isnan", lambda x: lax.ne(x, x), False, "True where ``x`` is nan.")
isinf = _float_class(  # (complex: either part infinite, as NumPy)
    "isinf", lambda x: lax.eq(lax.abs(x), full(x.shape, np.inf, lax.abs(x).dtype)), False,
    "True where ``x`` is +inf or -inf.",
)


def signbit(x, /):
    """True where the sign bit is set (also for -0.0 and negative nans)."""
    check_arraylike("signbit", x)
    x = asarray(x, fname="signbit")
    reject_complex("signbit", x)
    if _is_float(x):
        # copysign reads the sign bit, which comparisons cannot see for -0.0 and nan.
        return lax.lt(lax.copysign(_const(x, 1.0), x), _const(x, 0.0))
    if x.dtype == _BOOL:
        return _out(_const_bool(x, False))
    return lax.lt(x, _const(x, 0))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace nan by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (defaults: the
    dtype's largest and smallest finite values). Integers and bools are unchanged.
    ``copy`` is accepted for NumPy compatibility; results are never views."""
    check_arraylike("nan_to_num", x)
    x = asarray(x, fname="nan_to_num")
    if x.dtype.kind == "c":  # NumPy replaces in each part separately
        return _out(lax.complex(*(nan_to_num(p, copy, nan, posinf, neginf) for p in (lax.real(x), lax.imag(x)))))
    if not _is_float(x):
        return _out(x)
    info = np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    inf = _const(x, np.inf)
    y = lax.select(lax.ne(x, x), full(x.shape, nan, x.dtype), x)
    y = lax.select(lax.eq(x, inf), full(x.shape, posinf, x.dtype), y)
    y = lax.select(lax.eq(x, lax.neg(inf)), full(x.shape, neginf, x.dtype), y)
    return _out(y)


# --- logical and bitwise ------------------------------------------------------------

def _logical(name: str, lax_fn, doc: str):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        return _out(lax_fn(*promote_shapes(name, _to_bool(x1, name), _to_bool(x2, name))))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


logical_and = _logical("logical_and", lax.bitwise_and, "Elementwise truth of ``x1 and x2`` (bool).")
logical_or = _logical("logical_or", lax.bitwise_or, "Elementwise truth of ``x1 or x2`` (bool).")
logical_xor = _logical("logical_xor", lax.ne, "Elementwise truth of ``bool(x1) != bool(x2)``.")


def logical_not(x, /):
    """Elementwise ``not x`` (bool)."""
    check_arraylike("logical_not", x)
    return _out(lax.bitwise_not(_to_bool(x, "logical_not")))


def _check_int_or_bool(name: str, x) -> None:
    if x.dtype.kind not in "iub":
        raise TypeError(
            f"{name}: operands must be integers or booleans, got {x.dtype.name} (like NumPy, "
            "bitwise operations are not defined for floating point)"
        )


def _bitwise(name: str, lax_fn, nin: int, doc: str):
    def checked(*args):
        _check_int_or_bool(name, args[0])
        return lax_fn(*args)

    return _simple(name, promote_args, checked, nin, doc)


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and, 2, "Elementwise ``x1 & x2`` (ints and bools).")
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or, 2, "Elementwise ``x1 | x2`` (ints and bools).")
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor, 2, "Elementwise ``x1 ^ x2`` (ints and bools).")
invert = _bitwise("invert", lax.bitwise_not, 1, "Elementwise ``~x``: bitwise not (logical not for bools).")
bitwise_not = invert
