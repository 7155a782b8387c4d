"""``jax.lax``'s remaining elementwise functions, as composites: ``round`` with JAX's
``rounding_method`` (away from zero by default), ``clz``, ``mulhi``, ``nextafter``,
``reduce_precision`` (XLA's bit-level rounding), and the special functions under their
``lax`` names (``igamma``, ``igammac``, ``igamma_grad_a``, ``random_gamma_grad``, ``zeta``,
``betainc``, ``bessel_i0e``, ``bessel_i1e``: ``funcgrad.scipy.special``'s).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.prims import bits
from funcgrad.lax import _util
from funcgrad.lax.types import RoundingMethod

__all__ = [
    "bessel_i0e", "bessel_i1e", "betainc", "clz", "igamma", "igamma_grad_a", "igammac", "mulhi", "nextafter",
    "random_gamma_grad", "reduce_precision", "round", "zeta",
]


def _full(x, value, dtype=None):
    aval = _util.aval("lax", x)
    dt = aval.dtype if dtype is None else np.dtype(dtype)
    return lax.broadcast_in_dim(np.asarray(value, dt), aval.shape, ())


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - jax.lax.round
    """Round to the nearest integer; ties go away from zero (``RoundingMethod.AWAY_FROM_ZERO``,
    JAX's default: 2.5 -> 3, -2.5 -> -3) or to the even one (``TO_NEAREST_EVEN``: 2.5 -> 2).

    >>> lax.round(np.array([0.5, 1.5, 2.5, -2.5]))
    Array([ 1.,  2.,  3., -3.])
    """
    method = RoundingMethod(rounding_method)
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return lax.round(x)
    trunc = lax.mul(lax.sign(x), lax.floor(lax.abs(x)))
    away = lax.ge(lax.abs(lax.sub(x, trunc)), _full(x, 0.5))
    return lax.select(away, lax.add(trunc, lax.sign(x)), trunc)


def _int_operand(fname, x):
    aval = _util.aval(fname, x, "x")
    if aval.dtype.kind not in "iu":
        raise TypeError(f"{fname}: x must be an integer array, got {aval.str_short()}")
    return aval


def clz(x):
    """Count of leading zero bits of each integer (of its two's-complement bits; 0 has all of them).

    >>> lax.clz(np.array([1, 255, 0], dtype=np.uint8))
    Array([7, 0, 8], dtype=uint8)
    """
    aval = _int_operand("clz", x)
    width = aval.dtype.itemsize * 8
    y, s = x, 1
    while s < width:  # smear the top set bit into every lower bit
        y = lax.bitwise_or(y, bits.shift_right_logical(y, _full(y, s)))
        s *= 2
    return lax.sub(_full(x, width), bits.population_count(y))


def mulhi(x, y):
    """The high half of the double-width product ``x * y`` of two integers of one dtype
    (signed or unsigned), as ``jax.lax.mulhi``.

    >>> int(lax.mulhi(np.uint32(2**31), np.uint32(6)))
    3
    """
    ax = _int_operand("mulhi", x)
    ay = _util.aval("mulhi", y, "y")
    if ay.dtype != ax.dtype or ay.shape != ax.shape:
        raise TypeError(f"mulhi: x and y must have one shape and dtype, got {ax.str_short()} and {ay.str_short()}")
    width = ax.dtype.itemsize * 8
    signed = ax.dtype.kind == "i"
    if width < 64:
        wide = np.dtype(f"{'i' if signed else 'u'}8")
        prod = lax.mul(lax.convert_element_type(x, wide), lax.convert_element_type(y, wide))
        shift = bits.shift_right_arithmetic if signed else bits.shift_right_logical
        return lax.convert_element_type(shift(prod, _full(prod, width)), ax.dtype)
    u64 = np.dtype(np.uint64)
    a, b = bits.bitcast_convert_type(x, u64), bits.bitcast_convert_type(y, u64)
    lo_mask = _full(a, 0xFFFFFFFF)
    thirty_two = _full(a, 32)
    a_lo, a_hi = lax.bitwise_and(a, lo_mask), bits.shift_right_logical(a, thirty_two)
    b_lo, b_hi = lax.bitwise_and(b, lo_mask), bits.shift_right_logical(b, thirty_two)
    lo_lo, hi_lo = lax.mul(a_lo, b_lo), lax.mul(a_hi, b_lo)
    lo_hi, hi_hi = lax.mul(a_lo, b_hi), lax.mul(a_hi, b_hi)
    cross = lax.add(lax.add(bits.shift_right_logical(lo_lo, thirty_two), lax.bitwise_and(hi_lo, lo_mask)),
                    lax.bitwise_and(lo_hi, lo_mask))
    high = lax.add(lax.add(hi_hi, bits.shift_right_logical(hi_lo, thirty_two)),
                   lax.add(bits.shift_right_logical(lo_hi, thirty_two), bits.shift_right_logical(cross, thirty_two)))
    if signed:  # two's complement: subtract the other operand for each negative one
        zero = _full(x, 0)
        high = lax.sub(high, lax.select(lax.lt(x, zero), b, _full(a, 0)))
        high = lax.sub(high, lax.select(lax.lt(y, zero), a, _full(a, 0)))
        return bits.bitcast_convert_type(high, ax.dtype)
    return high


def _float_bits(fname, x):
    aval = _util.aval(fname, x)
    if aval.dtype.kind != "f":
        raise TypeError(f"{fname}: the operand must be a float array, got {aval.str_short()}")
    return aval, np.dtype(f"i{aval.dtype.itemsize}")


def nextafter(x1, x2):
    """The next float after ``x1`` towards ``x2`` (``numpy.nextafter``; operands of one dtype).

    >>> float(lax.nextafter(1.0, 2.0)) - 1.0
    2.220446049250313e-16
    """
    aval, ity = _float_bits("nextafter", x1)
    a2 = _util.aval("nextafter", x2, "x2")
    if a2.dtype != aval.dtype or a2.shape != aval.shape:
        raise TypeError(f"nextafter: x1 and x2 must have one shape and dtype, got {aval.str_short()} and "
                        f"{a2.str_short()}")
    i1 = bits.bitcast_convert_type(x1, ity)
    zero = _full(x1, 0.0)
    one = _full(i1, 1)
    # away from zero when moving in the direction of x1's sign: the bit pattern grows
    grows = lax.eq(lax.lt(x1, x2), lax.gt(x1, zero))
    stepped = bits.bitcast_convert_type(lax.select(grows, lax.add(i1, one), lax.sub(i1, one)), aval.dtype)
    sign_of_x2 = lax.bitwise_and(bits.bitcast_convert_type(x2, ity), _full(i1, np.iinfo(ity).min))
    tiny = bits.bitcast_convert_type(lax.bitwise_or(sign_of_x2, one), aval.dtype)  # smallest subnormal
    out = lax.select(lax.eq(x1, zero), tiny, stepped)
    out = lax.select(lax.eq(x1, x2), x2, out)
    nan = lax.bitwise_or(lax.ne(x1, x1), lax.ne(x2, x2))
    return lax.select(nan, _full(x1, np.nan), out)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` rounded to a float with ``exponent_bits`` and ``mantissa_bits`` (XLA's
    ReducePrecision: mantissa rounded to nearest even, too-large values become infinity,
    values below the smallest normal become signed zero, NaN stays NaN), kept in its dtype.

    >>> float(lax.reduce_precision(np.float64(1 + 2**-12), exponent_bits=5, mantissa_bits=10))
    1.0
    """
    aval, ity = _float_bits("reduce_precision", operand)
    exponent_bits = _util.static_int("reduce_precision", exponent_bits, "exponent_bits")
    mantissa_bits = _util.static_int("reduce_precision", mantissa_bits, "mantissa_bits")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: exponent_bits={exponent_bits} must be >= 1 and "
                         f"mantissa_bits={mantissa_bits} >= 0")
    info = np.finfo(aval.dtype)
    src_mant, src_exp = info.nmant, info.nexp
    uty = np.dtype(f"u{aval.dtype.itemsize}")
    v = bits.bitcast_convert_type(operand, uty)
    if mantissa_bits < src_mant:
        drop = src_mant - mantissa_bits
        last_bit = 1 << drop
        last = bits.shift_right_logical(lax.bitwise_and(v, _full(v, last_bit)), _full(v, drop))
        v = lax.add(v, lax.add(last, _full(v, (last_bit >> 1) - 1)))
        v = lax.bitwise_and(v, _full(v, ~(last_bit - 1) & ((1 << (8 * aval.dtype.itemsize)) - 1)))
    if exponent_bits < src_exp:
        exp_mask = ((1 << src_exp) - 1) << src_mant
        bias, reduced_bias = (1 << (src_exp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = lax.bitwise_and(v, _full(v, exp_mask))
        signed_zero = lax.bitwise_and(v, _full(v, 1 << (8 * aval.dtype.itemsize - 1)))
        signed_inf = lax.bitwise_or(signed_zero, _full(v, exp_mask))
        v = lax.select(lax.gt(exponent, _full(v, (bias + reduced_bias) << src_mant)), signed_inf,
                       lax.select(lax.le(exponent, _full(v, (bias - reduced_bias) << src_mant)), signed_zero, v))
    out = bits.bitcast_convert_type(v, aval.dtype)
    return lax.select(lax.ne(operand, operand), operand, out)


def _special():
    from funcgrad.scipy import special

    return special


def _float_operands(fname, *args):
    """As jax.lax: array operands must be floating and of one dtype (Python scalars adapt)."""
    typed = [(i, np.dtype(a.dtype)) for i, a in enumerate(args)
             if hasattr(a, "dtype") and not isinstance(a, (bool, int, float))]
    for i, dt in typed:
        if not np.issubdtype(dt, np.floating):
            raise TypeError(f"lax.{fname}: operand {i} has dtype {dt}; it takes floating-point arrays "
                            f"(cast with .astype(float))")
    if len({dt for _, dt in typed}) > 1:
        got = ", ".join(str(dt) for _, dt in typed)
        raise TypeError(f"lax.{fname} requires arguments to have the same dtypes, got {got} "
                        f"(cast them to one dtype, or use funcgrad.scipy.special, which promotes)")


def igamma(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)`` (``scipy.special.gammainc``)."""
    _float_operands("igamma", a, x)
    return _special().gammainc(a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    _float_operands("igammac", a, x)
    return _special().gammaincc(a, x)


def igamma_grad_a(a, x):
    """``d/da P(a, x)``, elementwise (the derivative of ``igamma`` in its first argument)."""
    from funcgrad.numpy_api import creation
    from funcgrad.transforms.ad_api import jvp

    _float_operands("igamma_grad_a", a, x)
    a_arr = creation.asarray(a)
    a_arr = a_arr.astype(dtypes.promote(a_arr.dtype, np.float32))
    p, dp = jvp(lambda a_: _special().gammainc(a_, x), (a_arr,), (creation.ones_like(a_arr),))
    return _nan_where_nan(p, dp)  # no derivative where P itself is undefined (a <= 0, NaN), as JAX


def _nan_where_nan(p, dp):
    from funcgrad import numpy as fnp

    return fnp.where(fnp.isnan(p), np.nan, dp)


def random_gamma_grad(a, x):
    """``dx/da`` of a Gamma(``a``, 1) sample ``x`` held at a fixed quantile (implicit
    reparameterization): ``-(dP/da) / (dP/dx)`` with ``P = igamma``."""
    from funcgrad import numpy as fnp

    _float_operands("random_gamma_grad", a, x)
    special = _special()
    density = fnp.exp((fnp.asarray(a) - 1) * fnp.log(x) - x - special.gammaln(a))
    return -igamma_grad_a(a, x) / density


def zeta(x, q):
    """The Hurwitz zeta function ``sum_k (k + q) ** -x`` (``scipy.special.zeta(x, q)``)."""
    _float_operands("zeta", x, q)
    return _special().zeta(x, q)


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)`` (``scipy.special.betainc``)."""
    _float_operands("betainc", a, b, x)
    return _special().betainc(a, b, x)


def bessel_i0e(x):
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
    return _special().i0e(x)


def bessel_i1e(x):
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
    return _special().i1e(x)
