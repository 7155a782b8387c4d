"""funcgrad.numpy: the parts of a float and integer number theory -- ``fmod``, ``modf``,
``frexp``, ``ldexp``, ``nextafter``, ``spacing``, ``gcd``, ``lcm``.

All are composites of existing primitives. ``frexp``, ``ldexp``, ``nextafter`` and
``spacing`` read and build floats bit by bit with ``bitcast_convert_type`` and integer
shifts (no new primitive), so they are exact, lowered under ``jit`` and batched by
``vmap`` like any other composite. Derivatives:

- ``fmod``: 1 in ``x1`` and ``-trunc(x1 / x2)`` in ``x2`` (the ``rem`` primitive's);
- ``modf``: the fractional part has derivative 1, the integral part 0;
- ``frexp``: the mantissa ``x * 2**-e`` has derivative ``2**-e`` (the exponent is an
  integer); ``ldexp(x, n)``: ``2**n`` in ``x``;
- ``nextafter(x1, x2)`` follows ``x1`` (derivative 1 in ``x1``, 0 in ``x2``, as the result
  differs from ``x1`` by one unit in the last place); ``spacing`` is piecewise constant (0).

Bool operands of ``fmod``/``gcd``/``lcm`` raise TypeError (NumPy computes them in int8,
which funcgrad lacks); ``modf``/``frexp``/``spacing``/``nextafter`` of integers or bools
compute in float64 (NumPy: float16 for bools).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import (
    asarray,
    check_arraylike,
    full,
    promote_args,
    promote_args_inexact,
    promote_shapes,
    reject_complex,
    shape_of,
)
from funcgrad.transforms.control_flow import while_loop

__all__ = ["fmod", "modf", "frexp", "ldexp", "nextafter", "spacing", "gcd", "lcm"]


def _out(x):
    """NumPy ufuncs give a NumPy scalar for 0-d results (select/casts give 0-d arrays)."""
    return x[()] if type(x) is np.ndarray and not x.shape else x


def _const(like, value, dtype=None):
    return full(shape_of(like), value, like.dtype if dtype is None else dtype)


def _int_no_bool(name, x):
    if x.dtype == dtypes.bool_:
        raise TypeError(
            f"{name}: not supported for boolean operands (NumPy would compute in int8, which funcgrad does "
            "not support); convert first, e.g. x.astype(numpy.int64)"
        )


# --- fmod and modf ----------------------------------------------------------------------------
def fmod(x1, x2, /):
    """C's ``fmod``: the remainder of truncating division, with the sign of ``x1``
    (``remainder`` has the sign of ``x2``). Integers: ``x % 0`` is 0 (NumPy warns).

    >>> fnp.fmod(np.array([-3, -2, -1, 1, 2, 3]), 2)
    Array([-1,  0, -1,  1,  0,  1])
    """
    check_arraylike("fmod", x1, x2)
    x1, x2 = promote_args("fmod", x1, x2)
    _int_no_bool("fmod", x1)
    return _out(lax.rem(x1, x2))


def _trunc(x):
    return lax.select(lax.lt(x, _const(x, 0.0)), lax.ceil(x), lax.floor(x))


def modf(x, /):
    """``(fractional, integral)`` parts of ``x``, both with the sign of ``x``
    (``modf(-2.5) == (-0.5, -2.0)``, ``modf(inf) == (0.0, inf)``).

    >>> fnp.modf(np.array([0.0, 3.5]))
    (Array([0. , 0.5]), Array([0., 3.]))
    """
    check_arraylike("modf", x)
    (x,) = promote_args_inexact("modf", x)
    whole = _trunc(x)
    # x - trunc(x) is nan for infinities (inf - inf); their fractional part is 0.
    finite = lax.is_finite(x)
    frac = lax.sub(x, lax.select(finite, whole, _const(x, 0.0)))
    frac = lax.select(finite, frac, _const(x, 0.0))
    frac = lax.select(lax.ne(x, x), x, lax.copysign(frac, x))  # -0.0 for negative integers
    return _out(frac), _out(whole)


# --- the bits of a float ----------------------------------------------------------------------
# (float dtype) -> (same-width signed int, mantissa bits, exponent bias, exponent field mask)
_LAYOUT = {
    dtypes.float64: (dtypes.int64, 52, 1023, 0x7FF),
    dtypes.float32: (dtypes.int32, 23, 127, 0xFF),
}


def _pow2(k, dtype):
    """``2.0 ** k`` for an integer array ``k`` in the normal range of ``dtype``, built
    from its exponent bits (exact, no pow)."""
    sint, mant, bias, _ = _LAYOUT[dtype]
    k = lax.convert_element_type(k, sint)
    bits = lax.shift_left(lax.add(k, _const(k, bias)), _const(k, mant))
    return lax.bitcast_convert_type(bits, dtype)


def _frexp(x):
    """(mantissa in [0.5, 1) with x's sign, exponent as x's signed int dtype); 0, inf and
    nan give (x, 0). Subnormals are scaled into the normal range first."""
    dt = x.dtype
    sint, mant, bias, mask = _LAYOUT[dt]
    scale_bits = mant + 2
    tiny = np.finfo(dt).tiny
    sub = lax.bitwise_and(lax.lt(lax.abs(x), _const(x, tiny)), lax.ne(x, _const(x, 0.0)))
    xs = lax.select(sub, lax.mul(x, _const(x, 2.0 ** scale_bits)), x)
    bits = lax.bitcast_convert_type(xs, sint)
    field = lax.bitwise_and(lax.shift_right_logical(bits, _const(bits, mant)), _const(bits, mask))
    e = lax.sub(field, _const(field, bias - 1))
    e = lax.select(sub, lax.sub(e, _const(e, scale_bits)), e)
    special = lax.bitwise_or(lax.eq(x, _const(x, 0.0)), lax.bitwise_not(lax.is_finite(x)))
    e = lax.select(special, _const(e, 0), e)
    # mantissa = x * 2**-e in two exact steps (2**-e alone may overflow for subnormal x)
    half = lax.div(e, _const(e, 2))
    m = lax.mul(lax.mul(x, _pow2(lax.neg(half), dt)), _pow2(lax.sub(half, e), dt))
    return m, e


def _float_arg(name, x):
    check_arraylike(name, x)
    (x,) = promote_args_inexact(name, x)
    reject_complex(name, x)
    return x


def frexp(x, /):
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent``, ``0.5 <= |mantissa| < 1``
    and an int32 exponent; 0, inf and nan give ``(x, 0)``.

    >>> fnp.frexp(np.array([1.0, 8.0]))
    (Array([0.5, 0.5]), Array([1, 4], dtype=int32))
    """
    x = _float_arg("frexp", x)
    m, e = _frexp(x)
    return _out(m), _out(lax.convert_element_type(e, dtypes.int32))


def ldexp(x1, x2, /):
    """``x1 * 2**x2`` for an integer ``x2``, rounded once (also into and out of the
    subnormal range). Integer ``x1`` gives float64.

    >>> fnp.ldexp(np.array([1.0, 3.0]), np.array([2, -1]))
    Array([4. , 1.5])
    """
    check_arraylike("ldexp", x1, x2)
    x2 = asarray(x2, fname="ldexp")
    if x2.dtype.kind not in "iu":
        raise TypeError(f"ldexp: the exponent x2 must be an integer array, got {x2.dtype.name}")
    (x1,) = promote_args_inexact("ldexp", x1)
    reject_complex("ldexp", x1)
    x1, x2 = promote_shapes("ldexp", x1, x2)
    dt = x1.dtype
    m, e = _frexp(x1)
    # m * 2**k with |m| in [0.5, 1): clamp k where the result is surely 0 or inf, then
    # split it in two halves, each in the normal range: only the last product rounds.
    limit = 1100 if dt == dtypes.float64 else 160
    n = lax.convert_element_type(x2, e.dtype)
    k = lax.add(e, lax.max(lax.min(n, _const(n, 2 * limit)), _const(n, -2 * limit)))
    k = lax.max(lax.min(k, _const(k, limit)), _const(k, -limit))
    half = lax.div(k, _const(k, 2))
    return _out(lax.mul(lax.mul(m, _pow2(lax.sub(k, half), dt)), _pow2(half, dt)))


def _stop(x):
    return lax.stop_gradient_p.bind(x)


def _step_away(x, toward_up):
    """The float next to ``x`` (not 0, not nan): up the integer bits where the magnitude grows."""
    sint = _LAYOUT[x.dtype][0]
    bits = lax.bitcast_convert_type(x, sint)
    one = _const(bits, 1)
    grow = lax.eq(toward_up, lax.gt(x, _const(x, 0.0)))
    return lax.bitcast_convert_type(lax.select(grow, lax.add(bits, one), lax.sub(bits, one)), x.dtype)


def nextafter(x1, x2, /):
    """The next float after ``x1`` in the direction of ``x2`` (``x2`` when they are equal).

    >>> fnp.nextafter(1.0, 2.0) - 1.0 == np.finfo(np.float64).eps
    Array(True)
    """
    check_arraylike("nextafter", x1, x2)
    x1, x2 = promote_args_inexact("nextafter", x1, x2)
    reject_complex("nextafter", x1, x2)
    zero = _const(x1, 0.0)
    is_zero = lax.eq(x1, zero)
    safe = lax.select(is_zero, _const(x1, 1.0), x1)  # 0 steps to the signed smallest subnormal
    stepped = _step_away(safe, lax.gt(x2, x1))
    smallest = lax.copysign(_const(x1, np.nextafter(x1.dtype.type(0), x1.dtype.type(1))), x2)
    out = lax.select(is_zero, smallest, stepped)
    out = lax.select(lax.eq(x1, x2), x2, out)
    out = lax.select(lax.bitwise_or(lax.ne(x1, x1), lax.ne(x2, x2)), _const(x1, np.nan), out)
    # the result is x1 to within one ulp: let derivatives follow x1 (where it is finite)
    base = lax.select(lax.is_finite(x1), x1, zero)
    res = lax.add(base, _stop(lax.sub(out, base)))
    # (exact but for a zero's sign: 0.0 + -0.0 is 0.0, and nextafter(0.0, -0.0) is -0.0)
    return _out(lax.select(lax.eq(out, zero), lax.copysign(res, out), res))


def spacing(x, /):
    """The distance from ``x`` to the next float away from zero, with the sign of ``x``
    (``spacing(1.0) == eps``); nan for inf and nan. Its derivative is 0.

    >>> fnp.spacing(1.0) == np.finfo(np.float64).eps
    Array(True)
    """
    x = _stop(_float_arg("spacing", x))
    a = lax.abs(x)
    zero = _const(a, 0.0)
    up = _step_away(lax.select(lax.eq(a, zero), _const(a, 1.0), a), lax.eq(a, a))
    tiny = _const(a, np.nextafter(a.dtype.type(0), a.dtype.type(1)))
    d = lax.select(lax.eq(a, zero), tiny, lax.sub(up, a))
    d = lax.select(lax.is_finite(x), d, _const(x, np.nan))
    return _out(lax.select(lax.lt(x, zero), lax.neg(d), d))


# --- gcd and lcm ------------------------------------------------------------------------------
def _int_pair(name, x1, x2):
    check_arraylike(name, x1, x2)
    x1, x2 = promote_args(name, x1, x2)
    _int_no_bool(name, x1)
    if x1.dtype.kind not in "iu":
        raise TypeError(f"{name}: operands must be integers, got {x1.dtype.name} (promoted from the arguments)")
    return x1, x2


def _gcd(a, b):
    """Euclid's algorithm on |a|, |b|, all elements at once, until every b is 0."""
    zero = _const(a, 0)
    if 0 in shape_of(a):
        return a

    def cond(ab):
        nz = lax.convert_element_type(lax.ne(ab[1], zero), dtypes.int32)
        return lax.gt(lax.reduce_max(nz, tuple(range(len(shape_of(nz))))), np.int32(0))

    def body(ab):
        a, b = ab
        done = lax.eq(b, zero)
        safe_b = lax.select(done, _const(b, 1), b)
        return lax.select(done, a, b), lax.select(done, zero, lax.rem(a, safe_b))

    return while_loop(cond, body, (lax.abs(a), lax.abs(b)))[0]


def gcd(x1, x2, /):
    """Greatest common divisor of ``|x1|`` and ``|x2|`` (``gcd(0, 0) == 0``).

    >>> fnp.gcd(np.array([12, 20]), 8)
    Array([4, 4])
    """
    x1, x2 = _int_pair("gcd", x1, x2)
    return _out(_gcd(x1, x2))


def lcm(x1, x2, /):
    """Lowest common multiple of ``|x1|`` and ``|x2|`` (0 if either is 0).

    >>> fnp.lcm(np.array([4, 6]), 10)
    Array([20, 30])
    """
    x1, x2 = _int_pair("lcm", x1, x2)
    g = _gcd(x1, x2)
    zero = _const(g, 0)
    is_zero = lax.eq(g, zero)
    q = lax.div(lax.abs(x1), lax.select(is_zero, _const(g, 1), g))
    return _out(lax.select(is_zero, zero, lax.abs(lax.mul(q, x2))))
