"""Normal samplers: ``normal`` and what is built on it (``truncated_normal``,
``lognormal``, ``multivariate_normal``, ``orthogonal``, ``maxwell``,
``double_sided_maxwell``, ``wald``).

``normal`` is JAX's: ``sqrt(2) erf_inv(u)`` for ``u`` uniform on (-1, 1). ``erf_inv``
here is the approximation XLA compiles ``lax.erf_inv`` to (Giles, "Approximating the
erfinv function", GPU Computing Gems, 2011): with ``w = -log1p(-x*x)``, a polynomial in
``w - 3.125`` (``w < 6.25``), ``sqrt(w) - 3.25`` (``w < 16``) or ``sqrt(w) - 5``, times
``x``; single precision has its own two-piece polynomial. Evaluated with the same
coefficients in the same (Horner) order, it gives JAX's values up to the rounding of
``log1p`` (XLA's differs from the C library's by some ulps near ``x*x = sqrt(2) - 1``);
being a polynomial, it vectorises under ``jit``.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import dtypes
from funcgrad.random.continuous import const, float_dtype, out_shape, param, uniform_raw
from funcgrad.random.discrete import rademacher_raw
from funcgrad.random.keys import shape_arg, single_key, split
from funcgrad.transforms.custom import custom_jvp

# Horner coefficients, highest power first, of each piece of XLA's float64 erf_inv.
_ERFINV64 = (
    (6.25, -3.125, (  # w < 6.25: polynomial in w - 3.125
        -3.64441206401782e-21, -1.6850591381820166e-19, 1.28584807152564e-18, 1.1157877678025181e-17,
        -1.3331716628546209e-16, 2.0972767875968562e-17, 6.6376381343583238e-15, -4.0545662729752069e-14,
        -8.1519341976054722e-14, 2.6335093153082323e-12, -1.2975133253453532e-11, -5.4154120542946279e-11,
        1.0512122733215323e-09, -4.1126339803469837e-09, -2.9070369957882005e-08, 4.2347877827932404e-07,
        -1.3654692000834679e-06, -1.3882523362786469e-05, 0.00018673420803405714, -0.000740702534166267,
        -0.0060336708714301491, 0.24015818242558962, 1.6536545626831027)),
    (16.0, 3.25, (  # w < 16: polynomial in sqrt(w) - 3.25
        2.2137376921775787e-09, 9.0756561938885391e-08, -2.7517406297064545e-07, 1.8239629214389228e-08,
        1.5027403968909828e-06, -4.013867526981546e-06, 2.9234449089955446e-06, 1.2475304481671779e-05,
        -4.7318229009055734e-05, 6.8284851459573175e-05, 2.4031110387097894e-05, -0.00035503752036284748,
        0.0009532893797373805, -0.0016882755560235047, 0.0024914420961078508, -0.0037512085075692412,
        0.0053709145535900636, 1.0052589676941592, 3.0838856104922208)),
    (np.inf, 5.0, (  # otherwise: polynomial in sqrt(w) - 5
        -2.7109920616438573e-11, -2.5556418169965252e-10, 1.5076572693500548e-09, -3.789465440126737e-09,
        7.61570120807834e-09, -1.496002662714924e-08, 2.9147953450901081e-08, -6.7711997758452339e-08,
        2.2900482228026655e-07, -9.9298272942317e-07, 4.5260625972231537e-06, -1.9681778105531671e-05,
        7.5995277030017761e-05, -0.00021503011930044477, -0.00013871931833623122, 1.0103004648645344,
        4.8499064014085844)),
)
_ERFINV32 = (
    (5.0, -2.5, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)),
    (np.inf, 3.0, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                   -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)),
)


def _horner(coeffs, t, dt):
    p = fnp.full(fnp.shape(t), coeffs[0], dt)
    for c in coeffs[1:]:
        p = const(c, dt) + p * t
    return p


@custom_jvp
def erf_inv(x):
    """XLA's ``erf_inv`` (see the module docstring) of a float32 or float64 array."""
    dt = np.dtype(x.dtype)
    pieces = _ERFINV64 if dt == np.float64 else _ERFINV32
    w = -fnp.log1p(x * -x)
    root = fnp.sqrt(w)
    # the first piece is in w - shift, the others in sqrt(w) - shift
    p = None
    for bound, shift, coeffs in reversed(pieces):
        t = w + const(shift, dt) if shift < 0 else root - const(shift, dt)
        value = _horner(coeffs, t, dt)
        p = value if p is None else fnp.where(w < const(bound, dt), value, p)
    return fnp.where(fnp.abs(x) == 1, x * const(np.inf, dt), p * x)


@erf_inv.defjvp
def _erf_inv_jvp(primals, tangents):
    # d erf_inv(x)/dx = sqrt(pi)/2 exp(erf_inv(x)**2), not the derivative of the
    # polynomial pieces (whose sqrt and select would give NaN at x = 0 and +-1)
    y = erf_inv(primals[0])
    return y, tangents[0] * const(np.sqrt(np.pi) / 2, y.dtype) * fnp.exp(y * y)


def normal_real(raw, shape, dt):
    lo = np.nextafter(np.array(-1.0, dt), np.array(0.0, dt))
    u = uniform_raw(raw, shape, dt, lo, const(1.0, dt))
    return const(np.sqrt(2), dt) * erf_inv(u)


def normal_raw(raw, shape, dt):
    """Standard normal values of ``shape`` and float or complex ``dt`` (JAX's algorithm)."""
    if dt.kind != "c":
        return normal_real(raw, shape, dt)
    real = dtypes.real_dtype(dt)
    key_re, key_im = split(raw)
    re = normal_real(key_re, shape, real).astype(dt)
    im = normal_real(key_im, shape, real).astype(dt)
    return (re + 1j * im) / const(np.sqrt(2), dt)


def normal(key, shape=(), dtype=None):
    """Standard normal values of ``shape`` (float64 by default; complex dtypes give
    real and imaginary parts of variance 1/2 each, as JAX).

    >>> funcgrad.random.normal(funcgrad.random.key(0), (3,))
    Array([-0.20584214, -0.78476578,  1.81608667])
    """
    raw, _ = single_key("normal", key)
    dt = dtypes.canonicalize(np.float64 if dtype is None else dtype, what="normal dtype")
    if dt.kind not in "fc":
        raise TypeError(f"normal: dtype must be a floating-point or complex dtype, got {dt.name}")
    return normal_raw(raw, shape_arg("normal", shape), dt)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal values conditioned on ``lower < x < upper`` (inverse-CDF method;
    differentiable in ``lower``/``upper``)."""
    raw, _ = single_key("truncated_normal", key)
    dt = float_dtype("truncated_normal", dtype)
    lower, upper = param("truncated_normal", "lower", lower, dt), param("truncated_normal", "upper", upper, dt)
    shape = out_shape("truncated_normal", shape, lower, upper)
    sqrt2 = const(np.sqrt(2), dt)
    a, b = lax.erf(lower / sqrt2), lax.erf(upper / sqrt2)
    u = uniform_raw(raw, shape, dt, a, b)
    out = sqrt2 * erf_inv(u)
    # Rounding may land on a bound: clamp into the open interval, as JAX does.
    lo, hi = lax.stop_gradient(lower), lax.stop_gradient(upper)
    return fnp.clip(out, fnp.nextafter(lo, const(np.inf, dt)), fnp.nextafter(hi, const(-np.inf, dt)))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """Log-normal floats: ``exp(sigma * z)`` for standard normal ``z``."""
    raw, _ = single_key("lognormal", key)
    dt = float_dtype("lognormal", dtype)
    sigma = param("lognormal", "sigma", sigma, dt)
    shape = out_shape("lognormal", shape, sigma)
    return fnp.exp(normal_raw(raw, shape, dt) * sigma)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal vectors with ``mean`` (..., n) and covariance ``cov`` (..., n, n): ``mean +
    A z`` with ``A A^T = cov`` from ``method`` ``"cholesky"``, ``"eigh"`` or ``"svd"``."""
    raw, _ = single_key("multivariate_normal", key)
    if method not in ("cholesky", "eigh", "svd"):
        raise ValueError(f"multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', got {method!r}")
    mean, cov = fnp.asarray(mean), fnp.asarray(cov)
    inexact = np.result_type(*(d if d.kind in "fc" else np.float64 for d in (mean.dtype, cov.dtype)))
    dt = float_dtype("multivariate_normal", inexact if dtype is None else dtype)
    mean, cov = mean.astype(inexact), cov.astype(inexact)
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
        factor = v * fnp.sqrt(w[..., None, :])
    else:
        u, s, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(s[..., None, :])
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


def maxwell_raw(raw, shape, dt):
    return fnp.linalg.norm(normal_raw(raw, shape + (3,), dt), axis=-1)


def maxwell(key, shape=(), dtype=None):
    """One-sided Maxwell floats: the length of a standard normal 3-vector."""
    raw, _ = single_key("maxwell", key)
    return maxwell_raw(raw, shape_arg("maxwell", shape), float_dtype("maxwell", dtype))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell floats: ``sign * maxwell * scale + loc`` with a Rademacher sign.
    The result has shape ``shape + broadcast(loc, scale).shape`` (``shape`` () stands for
    the parameters' shape, giving it twice, as JAX)."""
    raw, _ = single_key("double_sided_maxwell", key)
    dt = float_dtype("double_sided_maxwell", dtype)
    shape = shape_arg("double_sided_maxwell", shape)
    params = tuple(np.broadcast_shapes(fnp.shape(loc), fnp.shape(scale)))
    shape = (shape or params) + params
    key_m, key_r = split(raw)
    mag = maxwell_raw(key_m, shape, dt)
    sign = rademacher_raw(key_r, shape, dt)
    return sign * mag * scale + loc


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats with ``mean`` (Michael, Schucany and Haas' method)."""
    raw, _ = single_key("wald", key)
    dt = float_dtype("wald", dtype)
    mean = param("wald", "mean", mean, dt)
    shape = out_shape("wald", shape, mean)
    k1, k2 = split(raw)
    mean = fnp.broadcast_to(mean, shape)
    v = normal_raw(k1, shape, dt)
    z = uniform_raw(k2, shape, dt)
    y = v * v
    y_sq = y * y
    mean_sq = mean * mean
    sqrt_term = fnp.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return fnp.where(z <= mean / (mean + x), x, mean_sq / x)
