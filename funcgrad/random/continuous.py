"""Continuous samplers built on ``uniform``: JAX's transforms, reparameterised, so
``grad`` flows to ``minval``/``maxval``, ``lower``/``upper``, ``mean``/``cov`` and (through
``gamma``) ``df``.

Floats from bits (as JAX): the top mantissa-many bits, or'ed into the bit pattern of
1.0, give a float in [1, 2); minus 1 that is uniform on [0, 1) on a grid of 2**-52
(float64) or 2**-23 (float32). ``normal`` is Box-Muller (exact in distribution, no
rejection, vectorised under jit); JAX uses ``sqrt(2) erf_inv(u)``, so normal values (and
what is built on them) differ from JAX's while the bits and uniforms agree.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import dtypes
from funcgrad.random.keys import random_bits, shape_arg, single_key, split

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


def unit_floats(raw, shape, dtype):
    """Uniform floats on [0, 1) from mantissa bits (see the module docstring)."""
    nbits, nmant = 8 * dtype.itemsize, np.finfo(dtype).nmant
    uint = np.dtype(f"u{dtype.itemsize}")
    one_bits = np.array(1.0, dtype).view(uint)
    b = random_bits(raw, nbits, shape)
    mant = (b >> (nbits - nmant)) | one_bits
    return lax.bitcast_convert_type(mant, dtype) - np.array(1.0, dtype)


def uniform_raw(fname, raw, shape, dtype, minval, maxval):
    floats = unit_floats(raw, shape, dtype)
    return fnp.maximum(minval, floats * (maxval - minval) + minval)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats on [minval, maxval) of ``shape`` (default float64).

    >>> funcgrad.random.uniform(funcgrad.random.key(0), (2,))
    Array([0.41845711, 0.21629545])
    """
    raw, _ = single_key("uniform", key)
    dt = float_dtype("uniform", dtype)
    lo, hi = param("uniform", "minval", minval, dt), param("uniform", "maxval", maxval, dt)
    return uniform_raw("uniform", raw, out_shape("uniform", shape, lo, hi), dt, lo, hi)


def normal_raw(raw, shape, dtype):
    """Box-Muller: from uniforms (u1, u2) of the first and second half of the counters,
    ``r = sqrt(-2 log(1 - u1))`` (1 - u1 in (0, 1]) and the pair ``r cos(2 pi u2)``,
    ``r sin(2 pi u2)``. Exact in distribution, and all its functions vectorise under jit
    (erf_inv, JAX's route, is a scalar Newton solve here and ~17x slower)."""
    n = math.prod(shape)
    m = (n + 1) // 2
    u = unit_floats(raw, (2, m), dtype)
    # The barriers make compiled code compute each pair's radius and angle once, into
    # buffers; fused into the output loop, each of the pair's two outputs would hash both
    # counters and take the log again.
    r, theta = lax.optimization_barrier((
        fnp.sqrt(np.array(-2.0, dtype) * fnp.log(np.array(1.0, dtype) - u[0])),
        np.array(2 * np.pi, dtype) * u[1]))
    # cos(theta - pi/2) = sin(theta): one branch-free expression for both halves, so the
    # compiled loop vectorises (a concatenate of cos and sin halves selects per element).
    phase = np.array([[0.0], [np.pi / 2]], dtype)
    # Computed as a (2, m) array (a barrier again: the output's flat loop would map each
    # index back to (half, pair) and lose vectorisation of the cos), then laid out flat.
    z = lax.optimization_barrier(r * fnp.cos(theta - phase))
    return fnp.reshape(fnp.reshape(z, (2 * m,))[:n], shape)


def normal(key, shape=(), dtype=None):
    """Standard normal floats of ``shape`` (Box-Muller pairs of uniforms, see ``normal_raw``)."""
    raw, _ = single_key("normal", key)
    return normal_raw(raw, shape_arg("normal", shape), float_dtype("normal", dtype))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal values conditioned on ``lower < x < upper`` (inverse-CDF method;
    differentiable in ``lower``/``upper``)."""
    raw, _ = single_key("truncated_normal", key)
    dt = float_dtype("truncated_normal", dtype)
    lower, upper = param("truncated_normal", "lower", lower, dt), param("truncated_normal", "upper", upper, dt)
    shape = out_shape("truncated_normal", shape, lower, upper)
    sqrt2 = np.array(np.sqrt(2.0), dt)
    a, b = lax_erf(lower / sqrt2), lax_erf(upper / sqrt2)
    u = uniform_raw("truncated_normal", raw, shape, dt, a, b)
    out = sqrt2 * lax.erf_inv(u)
    # Rounding may land on a bound: clamp into the open interval, as JAX does.
    return fnp.clip(out, _next_up(lower), -_next_up(-upper))


def lax_erf(x):
    return lax.erf(fnp.asarray(x))


def _next_up(x):
    """``numpy.nextafter(x, inf)`` for non-NaN ``x``, on the bits (no nextafter primitive)."""
    x = fnp.asarray(x)
    dt = np.dtype(x.dtype)
    sint = np.dtype(f"i{dt.itemsize}")
    i = lax.bitcast_convert_type(x, sint)
    step = fnp.where(x >= 0, i + 1, i - 1)  # (the positive zero's successor is the smallest subnormal)
    up = lax.bitcast_convert_type(fnp.asarray(step, sint), dt)
    tiny = np.array(np.nextafter(dt.type(0), dt.type(1)), dt)
    return fnp.where(x == 0, tiny, fnp.where(x == np.inf, x, up))


def _open_uniform(fname, key, shape, dtype, minval):
    """Uniform on [minval, 1) for the log-based transforms below."""
    raw, _ = single_key(fname, key)
    dt = float_dtype(fname, dtype)
    return uniform_raw(fname, raw, shape_arg(fname, shape), dt, np.array(minval(dt), dt), np.array(1.0, dt)), dt


def exponential(key, shape=(), dtype=None):
    """Exponential(1) floats: ``-log1p(-u)``."""
    u, _ = _open_uniform("exponential", key, shape, dtype, lambda dt: 0.0)
    return -fnp.log1p(-u)


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1) floats: ``sign(u) * log1p(-|u|)`` for ``u`` uniform on (-1, 1)."""
    u, _ = _open_uniform("laplace", key, shape, dtype, lambda dt: -1.0 + np.finfo(dt).epsneg)
    return fnp.sign(u) * fnp.log1p(-fnp.abs(u))


def logistic(key, shape=(), dtype=None):
    """Standard logistic floats: ``log(u / (1 - u))``."""
    u, _ = _open_uniform("logistic", key, shape, dtype, lambda dt: np.finfo(dt).tiny)
    return fnp.log(u / (1 - u))


def gumbel(key, shape=(), dtype=None):
    """Standard Gumbel floats: ``-log(-log(u))``."""
    u, _ = _open_uniform("gumbel", key, shape, dtype, lambda dt: np.finfo(dt).tiny)
    return -fnp.log(-fnp.log(u))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy floats: ``tan(pi * (u - 1/2))``."""
    u, dt = _open_uniform("cauchy", key, shape, dtype, lambda dt: np.finfo(dt).eps)
    return fnp.tan(np.array(np.pi, dt) * (u - 0.5))


def t(key, df, shape=(), dtype=None):
    """Student's t floats with ``df`` degrees of freedom: ``z * sqrt(df / (2 g))`` with
    ``g ~ Gamma(df / 2)`` (differentiable in ``df`` through ``gamma``)."""
    from funcgrad.random.gamma import gamma_raw

    raw, _ = single_key("t", key)
    dt = float_dtype("t", dtype)
    df = param("t", "df", df, dt)
    shape = out_shape("t", shape, df)
    key_n, key_g = split(raw)
    half_df = df / 2
    g = gamma_raw("t", key_g, fnp.broadcast_to(half_df, shape), shape, dt)
    return normal_raw(key_n, shape, dt) * fnp.sqrt(half_df / g)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal vectors with ``mean`` (..., n) and covariance ``cov`` (..., n, n): ``mean +
    A z`` with ``A A^T = cov`` from ``method`` ``"cholesky"``, ``"eigh"`` or ``"svd"``."""
    raw, _ = single_key("multivariate_normal", key)
    if method not in ("cholesky", "eigh", "svd"):
        raise ValueError(f"multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', got {method!r}")
    dt = float_dtype("multivariate_normal", dtype)
    mean, cov = param("multivariate_normal", "mean", mean, dt), param("multivariate_normal", "cov", cov, dt)
    ms, cs = fnp.shape(mean), fnp.shape(cov)
    if len(ms) < 1 or len(cs) < 2 or cs[-2:] != (ms[-1], ms[-1]):
        raise ValueError(f"multivariate_normal: mean must have shape (..., n) and cov (..., n, n), got mean {ms} "
                         f"and cov {cs}")
    batch = tuple(np.broadcast_shapes(ms[:-1], cs[:-2]))
    shape = batch if shape is None else shape_arg("multivariate_normal", shape)
    if np.broadcast_shapes(shape, batch) != shape:
        raise ValueError(f"multivariate_normal: shape {shape} must be a shape mean {ms[:-1]} and cov {cs[:-2]} "
                         "batch dimensions broadcast to")
    if method == "cholesky":
        factor = fnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.sqrt(w)[..., None, :]
    else:
        u, s, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(s)[..., None, :]
    z = normal_raw(raw, shape + ms[-1:], dt)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-random orthogonal (n, n) matrices of batch ``shape`` (n x m with orthonormal
    columns or rows when ``m`` is given): QR of a normal matrix with R's diagonal made
    positive."""
    raw, _ = single_key("orthogonal", key)
    dt = float_dtype("orthogonal", dtype)
    n = shape_arg("orthogonal", (n,))[0]
    m = n if m is None else shape_arg("orthogonal", (m,))[0]
    z = normal_raw(raw, shape_arg("orthogonal", shape) + (max(n, m), min(n, m)), dt)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * fnp.sign(d)[..., None, :]
    return fnp.swapaxes(x, -1, -2) if n < m else x
