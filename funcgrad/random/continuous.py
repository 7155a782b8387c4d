"""Samplers that transform uniforms: ``uniform`` and the inverse-CDF family
(``exponential``, ``laplace``, ``logistic``, ``gumbel``, ``cauchy``, ``pareto``,
``weibull_min``, ``rayleigh``, ``triangular``), each JAX's formula with JAX's order of
operations, so the values match ``jax.random`` (under ``jax_enable_x64``) to within the
rounding of the transcendental functions.

Floats from bits (as JAX): the top mantissa-many bits, or'ed into the bit pattern of
1.0, give a float in [1, 2); minus 1 that is uniform on [0, 1) on a grid of 2**-52
(float64) or 2**-23 (float32). ``uniform`` is reparameterised: ``grad`` flows to
``minval``/``maxval`` (and through the transforms to their parameters).
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import dtypes
from funcgrad.random.keys import random_bits, shape_arg, single_key

_F64 = np.dtype(np.float64)


def float_dtype(fname: str, dtype) -> np.dtype:
    dt = dtypes.canonicalize(_F64 if dtype is None else dtype, what=f"{fname} dtype")
    if dt.kind != "f":
        raise TypeError(f"{fname}: dtype must be a floating-point dtype (float32 or float64), got {dt.name}")
    return dt


def param(fname: str, name: str, x, dtype):
    """A distribution parameter as an array of ``dtype`` (traced values stay traced)."""
    try:
        return fnp.asarray(x, dtype)
    except TypeError as e:
        raise TypeError(f"{fname}: {name} must be an array of numbers, got {type(x).__name__}") from e


def out_shape(fname: str, shape, *params) -> tuple:
    """``shape`` (or, when None, the broadcast of the parameters' shapes), checked to be
    a shape the parameters broadcast to (JAX's rule)."""
    pshapes = [fnp.shape(p) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*pshapes)) if pshapes else ()
    shape = shape_arg(fname, shape)
    try:
        ok = np.broadcast_shapes(shape, *pshapes) == shape
    except ValueError:
        ok = False
    if not ok:
        shown = ", ".join(str(s) for s in pshapes)
        raise ValueError(f"{fname}: shape {shape} must be a shape the parameter shapes ({shown}) broadcast to")
    return shape


def const(x, dtype):
    return np.array(x, dtype)


def unit_floats(raw, shape, dtype):
    """Uniform floats on [0, 1) from mantissa bits (see the module docstring)."""
    nbits, nmant = 8 * dtype.itemsize, np.finfo(dtype).nmant
    uint = np.dtype(f"u{dtype.itemsize}")
    one_bits = np.array(1.0, dtype).view(uint)
    b = random_bits(raw, nbits, shape)
    mant = (b >> (nbits - nmant)) | one_bits
    return lax.bitcast_convert_type(mant, dtype) - np.array(1.0, dtype)


def uniform_raw(raw, shape, dtype, minval=0.0, maxval=1.0):
    """``max(minval, u * (maxval - minval) + minval)`` for ``u`` uniform on [0, 1) (JAX's
    order of operations); ``minval``/``maxval`` arrays of ``dtype`` or Python floats."""
    floats = unit_floats(raw, shape, dtype)
    lo = minval if hasattr(minval, "dtype") else const(minval, dtype)
    hi = maxval if hasattr(maxval, "dtype") else const(maxval, dtype)
    return fnp.maximum(lo, floats * (hi - lo) + lo)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats on [minval, maxval) of ``shape`` (default float64).

    >>> funcgrad.random.uniform(funcgrad.random.key(0), (2,))
    Array([0.41845711, 0.21629545])
    """
    raw, _ = single_key("uniform", key)
    dt = float_dtype("uniform", dtype)
    lo, hi = param("uniform", "minval", minval, dt), param("uniform", "maxval", maxval, dt)
    out_shape("uniform", shape, lo, hi)
    return uniform_raw(raw, shape_arg("uniform", shape), dt, lo, hi)


def _sampler_args(fname, key, shape, dtype):
    raw, _ = single_key(fname, key)
    return raw, shape_arg(fname, shape), float_dtype(fname, dtype)


def exponential(key, shape=(), dtype=None):
    """Exponential(1) floats: ``-log1p(-u)``."""
    raw, shape, dt = _sampler_args("exponential", key, shape, dtype)
    return exponential_raw(raw, shape, dt)


def exponential_raw(raw, shape, dt):
    return -fnp.log1p(-uniform_raw(raw, shape, dt))


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1) floats: ``sign(u) * log1p(-|u|)`` for ``u`` uniform on (-1, 1)."""
    raw, shape, dt = _sampler_args("laplace", key, shape, dtype)
    u = uniform_raw(raw, shape, dt, -1.0 + float(np.finfo(dt).epsneg), 1.0)
    return fnp.sign(u) * fnp.log1p(-fnp.abs(u))


def logistic(key, shape=(), dtype=None):
    """Standard logistic floats: ``log(u) - log1p(-u)``."""
    raw, shape, dt = _sampler_args("logistic", key, shape, dtype)
    u = uniform_raw(raw, shape, dt, float(np.finfo(dt).tiny), 1.0)
    return fnp.log(u) - fnp.log1p(-u)


def gumbel_mode(fname, mode):
    """The Gumbel sampler's ``mode`` (None means "low"), checked."""
    if mode is None:
        return "low"
    if mode not in ("low", "high", "highest"):
        raise ValueError(f"{fname}: mode must be None, 'low', 'high' or 'highest', got {mode!r}")
    return mode


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel floats: ``-log(-log(u))``; ``mode="high"`` (or ``"highest"``) adds a
    second uniform's bits below the first's for values further into the tail, as JAX."""
    raw, shape, dt = _sampler_args("gumbel", key, shape, dtype)
    return gumbel_raw(raw, shape, dt, gumbel_mode("gumbel", mode))


def gumbel_raw(raw, shape, dt, mode="low"):
    info = np.finfo(dt)
    if mode == "low":
        return -fnp.log(-fnp.log(uniform_raw(raw, shape, dt, float(info.tiny), 1.0)))
    if mode == "highest" and dt == np.float32:
        return _gumbel_highest32(raw, shape)
    u = uniform_raw(raw, (2,) + shape, dt)
    high, low = u[0], u[1]
    x = fnp.where(high >= 0.5, high, high + const(2.0 ** -info.nmant, dt) * low + const(info.tiny, dt))
    return -fnp.log(-fnp.log1p(-x))


def _clz32(x):
    """Leading zero bits of uint32 ``x`` (32 for 0), by halving."""
    n = fnp.zeros(fnp.shape(x), np.uint32)
    for s in (16, 8, 4, 2, 1):
        small = x < np.uint32(1 << (32 - s))
        n = fnp.where(small, n + np.uint32(s), n)
        x = fnp.where(small, x << np.uint32(s), x)
    return n + (x >> np.uint32(31) == 0).astype(np.uint32)


def _safe_int_to_float(hi, lo):
    """The 64-bit fixed-point fraction ``(hi, lo) / 2**64`` as a float32 in (0, 1), keeping
    every significant bit (JAX's ``_safe_int_to_float``)."""
    u32 = np.uint32
    hiclz, loclz = _clz32(hi), _clz32(lo)
    mant = (hi << hiclz) | fnp.where(hiclz == 32, lo << loclz, lo >> (u32(32) - hiclz))
    mant = (mant >> u32(8)) & u32((1 << 23) - 1)
    exp = (u32(126) - fnp.where(hiclz == 32, u32(32) + loclz, hiclz)) << u32(23)
    exp = exp & u32((1 << 30) - (1 << 22))
    return lax.bitcast_convert_type(exp | mant, np.dtype(np.float32))


def _gumbel_highest32(raw, shape):
    bits = random_bits(raw, 32, (2,) + shape)
    neg = ~bits
    lo_bits = neg[1]
    # 1 - bits in 64-bit fixed point
    carry = (lo_bits == np.uint32(0xFFFFFFFF)).astype(np.uint32)
    neg = neg + fnp.stack([carry, fnp.ones_like(lo_bits)])
    flip = bits[0] < np.uint32(1 << 31)
    sel = fnp.where(flip, bits, neg)
    x = _safe_int_to_float(sel[0], sel[1])
    return fnp.where(flip, -fnp.log(-fnp.log1p(-x)), -fnp.log(-fnp.log(x)))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy floats: ``tan(pi * (u - 1/2))``."""
    raw, shape, dt = _sampler_args("cauchy", key, shape, dtype)
    u = uniform_raw(raw, shape, dt, float(np.finfo(dt).eps), 1.0)
    return fnp.tan(const(np.pi, dt) * (u - const(0.5, dt)))


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) floats on [1, inf): ``exp(e / b)`` for ``e`` exponential."""
    raw, _ = single_key("pareto", key)
    dt = float_dtype("pareto", dtype)
    b = param("pareto", "b", b, dt)
    shape = out_shape("pareto", shape, b)
    return fnp.exp(exponential_raw(raw, shape, dt) / b)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats: ``(-log1p(-u)) ** (1 / concentration) * scale`` (inverse CDF)."""
    raw, shape, dt = _sampler_args("weibull_min", key, shape, dtype)
    u = uniform_raw(raw, shape, dt)
    # (Python numbers stay weak, so float32 draws stay float32, as in JAX)
    c = concentration if isinstance(concentration, (int, float)) else fnp.asarray(concentration)
    return fnp.power(-fnp.log1p(-u), 1.0 / c) * scale


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(scale) floats: ``scale * sqrt(-2 log u)``."""
    raw, _ = single_key("rayleigh", key)
    dt = float_dtype("rayleigh", dtype)
    scale = param("rayleigh", "scale", scale, dt)
    shape = out_shape("rayleigh", shape, scale)
    u = uniform_raw(raw, shape, dt)
    return fnp.broadcast_to(scale, shape) * fnp.sqrt(fnp.log(u) * const(-2.0, dt))


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(left, mode, right) floats by the inverse CDF on either side of ``mode``."""
    raw, _ = single_key("triangular", key)
    dt = float_dtype("triangular", dtype)
    left, mode, right = (param("triangular", n, v, dt) for n, v in (("left", left), ("mode", mode), ("right", right)))
    shape = out_shape("triangular", shape, left, mode, right)
    left, mode, right = (fnp.broadcast_to(v, shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform_raw(raw, shape, dt)
    out1 = left + fnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - fnp.sqrt((1 - u) * (right - left) * (right - mode))
    return fnp.where(u < fc, out1, out2)
