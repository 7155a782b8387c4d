"""Gamma, beta and Dirichlet samplers with implicit reparameterisation gradients.

Sampling (as JAX): each element gets its own key (``split``) and runs Marsaglia and
Tsang's rejection sampler ("A simple method for generating gamma variables", 2000) in
a ``lax.while_loop``; the elementwise sampler is ``vmap``-ed, so it runs eagerly, under
``jit`` (native loops) and under further ``vmap``. For ``alpha < 1`` it samples
``Gamma(alpha + 1)`` and multiplies by ``u ** (1 / alpha)``.

Gradient (Figurnov, Mohamed and Mnih, "Implicit reparameterization gradients", 2018, as
JAX): with ``F(x; alpha)`` the CDF, the accepted sample moves with alpha so that its CDF
level stays put, ``dx/dalpha = -(dF/dalpha) / f(x; alpha)``. ``F`` is the regularised
lower incomplete gamma function ``P(alpha, x) = sum_n x**(alpha+n) e**-x / Gamma(alpha+n+1)``,
and its alpha-derivative is that series differentiated term by term,
``sum_n t_n (log x - digamma(alpha+n+1))``, summed in a ``while_loop`` until the terms
are below 1e-17 of the sum.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.random.continuous import float_dtype, normal_raw, out_shape, param, uniform_raw
from funcgrad.random.keys import single_key, split
from funcgrad.transforms.batching import vmap
from funcgrad.transforms.custom import custom_jvp

_SQUEEZE = 0.0331  # Marsaglia-Tsang's squeeze constant


def _normal_positive_v(key, c):
    """Draw ``x ~ N(0, 1)`` until ``v = 1 + c x > 0``; returns ``(x, v)``."""
    dt = np.dtype(c.dtype)

    def body(s):
        k, _, _ = s
        k, sub = split(k)
        x = normal_raw(sub, (), dt)
        return k, x, 1 + x * c

    _, x, v = lax.while_loop(lambda s: s[2] <= 0, body, (key, fnp.zeros((), dt), fnp.full((), -1.0, dt)))
    return x, v


def _gamma_one(key, alpha):
    """One Gamma(alpha) sample (scalar ``alpha``) by Marsaglia-Tsang."""
    dt = np.dtype(alpha.dtype)
    key, boost_key = split(key)
    small = alpha < 1
    a = fnp.where(small, alpha + 1, alpha)
    d = a - 1 / 3
    c = (1 / 3) / fnp.sqrt(d)

    def rejected(s):
        _, x, v, u = s
        xx = x * x
        return (u >= 1 - _SQUEEZE * xx * xx) & (fnp.log(u) >= 0.5 * xx + d * (1 - v + fnp.log(v)))

    def body(s):
        k = s[0]
        k, kx, ku = split(k, 3)
        x, v = _normal_positive_v(kx, c)
        u = uniform_raw("gamma", ku, (), dt, np.array(0.0, dt), np.array(1.0, dt))
        return k, x, v * v * v, u

    init = (key, fnp.zeros((), dt), fnp.ones((), dt), fnp.full((), 2.0, dt))
    _, _, v, _ = lax.while_loop(rejected, body, init)
    sample = d * v
    u = uniform_raw("gamma", boost_key, (), dt, np.array(0.0, dt), np.array(1.0, dt))
    safe_alpha = fnp.where(small, alpha, 1.0)
    return fnp.where(small, sample * u ** (1 / safe_alpha), sample)


def _dP_dalpha(alpha, x):
    """d/dalpha of the regularised lower incomplete gamma P(alpha, x), by the series."""
    logx = fnp.log(x)
    t0 = fnp.exp(alpha * logx - x - lax.lgamma(alpha + 1))
    psi0 = lax.digamma(alpha + 1)
    dt = np.dtype(x.dtype)
    eps = np.array(1e-17 if dt == np.float64 else 1e-8, dt)

    def more(s):
        n, t, _, p, _ = s
        return (n < 100_000) & ((t > eps * p) | (x > alpha + n))

    def body(s):
        n, t, psi, p, dp = s
        dp = dp + t * (logx - psi)
        an = alpha + n + 1
        return n + 1, t * x / an, psi + 1 / an, p + t, dp

    zero = fnp.zeros_like(x)
    _, _, _, _, dp = lax.while_loop(more, body, (zero, t0, psi0, zero, zero))
    return dp


def _dsample_dalpha(alpha, x):
    """Implicit reparameterisation: -(dP/dalpha) / density at the sample."""
    ok = x > 0
    xs = fnp.where(ok, x, 1.0)
    log_density = (alpha - 1) * fnp.log(xs) - xs - lax.lgamma(alpha)
    return fnp.where(ok, -_dP_dalpha(alpha, xs) / fnp.exp(log_density), 0.0)


@custom_jvp
def _gamma_flat(keys, alpha):
    """Gamma(alpha[i]) samples with keys[i] (flat arrays); differentiable in alpha."""
    return vmap(_gamma_one)(keys, alpha)


@_gamma_flat.defjvp
def _gamma_flat_jvp(primals, tangents):
    keys, alpha = primals
    x = _gamma_flat(keys, alpha)
    # (in terms of differentiable operations, so second derivatives are right too)
    return x, tangents[1] * vmap(_dsample_dalpha)(alpha, x)


def gamma_raw(fname, raw, alpha, shape, dtype):
    """Gamma samples of ``shape`` for ``alpha`` already broadcast to ``shape``."""
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return fnp.zeros(shape, dtype)
    keys = split(raw, size)
    return fnp.reshape(_gamma_flat(keys, fnp.reshape(alpha, (size,))), shape)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats (shape parameter ``a`` > 0, unit scale); ``grad`` w.r.t. ``a`` by
    implicit reparameterisation.

    >>> funcgrad.random.gamma(funcgrad.random.key(0), 2.5, (3,))
    Array([3.475762  , 3.31135268, 2.09209258])
    """
    raw, _ = single_key("gamma", key)
    dt = float_dtype("gamma", dtype)
    a = param("gamma", "a", a, dt)
    shape = out_shape("gamma", shape, a)
    return gamma_raw("gamma", raw, fnp.broadcast_to(a, shape), shape, dt)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats: ``g_a / (g_a + g_b)`` of two gamma draws (differentiable in a, b)."""
    raw, _ = single_key("beta", key)
    dt = float_dtype("beta", dtype)
    a, b = param("beta", "a", a, dt), param("beta", "b", b, dt)
    shape = out_shape("beta", shape, a, b)
    key_a, key_b = split(raw)
    ga = gamma_raw("beta", key_a, fnp.broadcast_to(a, shape), shape, dt)
    gb = gamma_raw("beta", key_b, fnp.broadcast_to(b, shape), shape, dt)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors (``alpha`` of shape (..., k)): normalised gamma draws;
    the result has shape ``shape + (k,)`` (``shape`` defaults to ``alpha.shape[:-1]``)."""
    raw, _ = single_key("dirichlet", key)
    dt = float_dtype("dirichlet", dtype)
    alpha = param("dirichlet", "alpha", alpha, dt)
    ashape = fnp.shape(alpha)
    if len(ashape) < 1:
        raise ValueError(f"dirichlet: alpha must have at least one dimension (..., k), got shape {ashape}")
    batch = out_shape("dirichlet", shape, fnp.zeros(ashape[:-1]))
    full = batch + ashape[-1:]
    g = gamma_raw("dirichlet", raw, fnp.broadcast_to(alpha, full), full, dt)
    return g / fnp.sum(g, axis=-1, keepdims=True)
