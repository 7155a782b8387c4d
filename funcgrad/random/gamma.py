"""Gamma and the samplers built on it: ``gamma``, ``loggamma``, ``beta``, ``dirichlet``,
``t``, ``chisquare``, ``f``, ``generalized_normal``, ``ball``; implicit
reparameterisation gradients.

Sampling (JAX's algorithm, key for key): ``split(key, size)`` gives each element its own
key; for it, ``key, boost_key = split(key)``, then Marsaglia and Tsang's rejection
sampler ("A simple method for generating gamma variables", 2000) loops on ``key``: each
round splits ``key, x_key, u_key = split(key, 3)``, draws ``x = normal(k)`` from
``k, sub = split(k)`` (``k`` from ``x_key``) until ``v = 1 + c x > 0``, and ``U =
uniform(u_key)``, accepting when ``U < 1 - 0.0331 x**4`` or ``log U < x**2/2 + d (1 - v**3
+ log v**3)``. ``alpha < 1`` samples ``Gamma(alpha + 1)`` and multiplies by ``(1 -
uniform(boost_key)) ** (1 / alpha)`` (``loggamma`` adds the log of that instead, so tiny
``alpha`` does not underflow). The elementwise sampler is ``vmap``-ed over a
``lax.while_loop``, so it runs eagerly, under ``jit`` (native loops) and under ``vmap``.

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
from funcgrad.random.continuous import const, exponential_raw, float_dtype, out_shape, param, uniform_raw
from funcgrad.random.discrete import rademacher_raw
from funcgrad.random.keys import shape_arg, single_key, split
from funcgrad.random.normal import normal_raw
from funcgrad.transforms.batching import vmap
from funcgrad.transforms.custom import custom_jvp

_SQUEEZE = 0.0331  # Marsaglia-Tsang's squeeze constant


def _gamma_one(key, alpha, log_space):
    """One Gamma(alpha) sample (or its log) for scalar ``alpha`` (JAX's loop, see above)."""
    dt = np.dtype(alpha.dtype)
    zero, one = fnp.zeros((), dt), fnp.ones((), dt)
    third = const(1.0 / 3.0, dt)
    boost_mask = alpha >= one
    alpha_orig = alpha
    alpha = fnp.where(boost_mask, alpha, alpha + one)
    d = alpha - third
    c = third / fnp.sqrt(d)

    def rejected(s):
        _, x2, v3, u = s
        squeeze = u >= one - const(_SQUEEZE, dt) * (x2 * x2)
        return squeeze & (fnp.log(u) >= x2 * const(0.5, dt) + d * ((one - v3) + fnp.log(v3)))

    def next_x(s):
        k, sub = split(s[0])
        x = normal_raw(sub, (), dt)
        return k, x, one + x * c

    def body(s):
        k, x_key, u_key = split(s[0], 3)
        _, x, v = lax.while_loop(lambda s: s[2] <= zero, next_x, (x_key, zero, -one))
        return k, x * x, v * v * v, uniform_raw(u_key, (), dt)

    key, boost_key = split(key)
    _, _, v3, _ = lax.while_loop(rejected, body, (key, zero, one, const(2.0, dt)))
    if log_space:
        log_u = fnp.log1p(-uniform_raw(boost_key, (), dt))  # -exponential(boost_key)
        log_boost = fnp.where(boost_mask | (log_u == 0), zero, log_u * (one / alpha_orig))
        return fnp.log(d) + fnp.log(v3) + log_boost
    u = one - uniform_raw(boost_key, (), dt)
    return d * v3 * fnp.where(boost_mask, one, fnp.power(u, one / alpha_orig))


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


def _flat_sampler(log_space: bool):
    """Gamma(alpha[i]) samples (or their logs) with keys[i], flat arrays; differentiable
    in alpha."""

    @custom_jvp
    def flat(keys, alpha):
        return vmap(lambda k, a: _gamma_one(k, a, log_space))(keys, alpha)

    @flat.defjvp
    def _flat_jvp(primals, tangents):
        keys, alpha = primals
        out = flat(keys, alpha)
        if not log_space:
            # (in differentiable operations, so second derivatives are right too)
            return out, tangents[1] * vmap(_dsample_dalpha)(alpha, out)
        x = fnp.exp(out)
        x = fnp.where(x == 0, const(np.finfo(x.dtype).tiny, x.dtype), x)  # d log x = dx / x
        return out, tangents[1] * vmap(_dsample_dalpha)(alpha, x) / x

    return flat


_FLAT = {False: _flat_sampler(False), True: _flat_sampler(True)}


def gamma_raw(raw, alpha, shape, dtype, log_space=False):
    """Gamma samples (or their logs) of ``shape`` for ``alpha`` broadcast to ``shape``."""
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return fnp.zeros(shape, dtype)
    keys = split(raw, size)
    alpha = fnp.reshape(fnp.broadcast_to(alpha, shape), (size,))
    return fnp.reshape(_FLAT[log_space](keys, alpha), shape)


def _gamma_args(fname, key, a, shape, dtype):
    raw, _ = single_key(fname, key)
    dt = float_dtype(fname, dtype)
    a = param(fname, "a", a, dt)
    return raw, a, out_shape(fname, shape, a), dt


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats (shape parameter ``a`` > 0, unit scale); ``grad`` w.r.t. ``a`` by
    implicit reparameterisation.

    >>> funcgrad.random.gamma(funcgrad.random.key(0), 2.5, (3,))
    Array([1.8048802 , 1.5385597 , 4.44249172])
    """
    raw, a, shape, dt = _gamma_args("gamma", key, a, shape, dtype)
    return gamma_raw(raw, a, shape, dt)


def loggamma(key, a, shape=None, dtype=None):
    """The logs of Gamma(a, 1) samples, computed in log space (accurate for tiny ``a``,
    where the samples themselves underflow); ``exp(loggamma(k, a))`` is ``gamma(k, a)``
    to rounding."""
    raw, a, shape, dt = _gamma_args("loggamma", key, a, shape, dtype)
    return gamma_raw(raw, a, shape, dt, log_space=True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats: ``g_a / (g_a + g_b)`` of two gamma draws, formed from their logs
    (differentiable in a, b)."""
    raw, _ = single_key("beta", key)
    dt = float_dtype("beta", dtype)
    a, b = param("beta", "a", a, dt), param("beta", "b", b, dt)
    shape = out_shape("beta", shape, a, b)
    key_a, key_b = split(raw)
    log_a = gamma_raw(key_a, a, shape, dt, log_space=True)
    log_b = gamma_raw(key_b, b, shape, dt, log_space=True)
    log_max = fnp.maximum(log_a, log_b)
    ga, gb = fnp.exp(log_a - log_max), fnp.exp(log_b - log_max)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors (``alpha`` of shape (..., k)): the softmax of log-gamma
    draws; the result has shape ``shape + (k,)`` (``shape`` defaults to ``alpha.shape[:-1]``)."""
    raw, _ = single_key("dirichlet", key)
    dt = float_dtype("dirichlet", dtype)
    alpha = param("dirichlet", "alpha", alpha, dt)
    ashape = fnp.shape(alpha)
    if len(ashape) < 1:
        raise ValueError(f"dirichlet: alpha must have at least one dimension (..., k), got shape {ashape}")
    batch = out_shape("dirichlet", shape, fnp.zeros(ashape[:-1]))
    logs = gamma_raw(raw, alpha, batch + ashape[-1:], dt, log_space=True)
    unnormalised = fnp.exp(logs - fnp.max(logs, axis=-1, keepdims=True))
    return unnormalised / fnp.sum(unnormalised, axis=-1, keepdims=True)


def t(key, df, shape=None, dtype=None):
    """Student's t floats with ``df`` degrees of freedom: ``z * sqrt(df / (2 g))`` with
    ``g ~ Gamma(df / 2)`` (differentiable in ``df`` through ``gamma``)."""
    raw, _ = single_key("t", key)
    dt = float_dtype("t", dtype)
    df = param("t", "df", df, dt)
    shape = out_shape("t", shape, df)
    key_n, key_g = split(raw)
    z = normal_raw(key_n, shape, dt)
    half_df = df / 2
    return z * fnp.sqrt(half_df / gamma_raw(key_g, half_df, shape, dt))


def _chisquare_raw(raw, df, shape, dt):
    return fnp.exp(gamma_raw(raw, df / 2, shape, dt, log_space=True)) * const(2.0, dt)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square floats with ``df`` degrees of freedom: ``2 Gamma(df / 2)``."""
    raw, _ = single_key("chisquare", key)
    dt = float_dtype("chisquare", dtype)
    df = param("chisquare", "df", df, dt)
    return _chisquare_raw(raw, df, out_shape("chisquare", shape, df), dt)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) floats: the ratio of two chi-squares, each over its degrees of
    freedom."""
    raw, _ = single_key("f", key)
    dt = float_dtype("f", dtype)
    dfnum, dfden = param("f", "dfnum", dfnum, dt), param("f", "dfden", dfden, dt)
    shape = out_shape("f", shape, dfnum, dfden)
    key_dfd, key_dfn = split(raw)
    num = _chisquare_raw(key_dfn, dfnum, shape, dt) / dfnum
    return num / (_chisquare_raw(key_dfd, dfden, shape, dt) / dfden)


def _generalized_normal_raw(raw, p, shape, dt):
    k_g, k_r = split(raw)
    inv_p = 1 / fnp.asarray(p, dt)
    g = gamma_raw(k_g, inv_p, shape, dt)
    return rademacher_raw(k_r, shape, dt) * fnp.power(g, inv_p)


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalised normal floats, density proportional to ``exp(-|x|**p)``: a random sign
    times ``Gamma(1/p) ** (1/p)``."""
    raw, _ = single_key("generalized_normal", key)
    dt = float_dtype("generalized_normal", dtype)
    return _generalized_normal_raw(raw, p, shape_arg("generalized_normal", shape), dt)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit ``p``-norm ball of dimension ``d`` (shape ``shape +
    (d,)``): generalised normals over ``(sum |g|**p + e) ** (1/p)``, ``e`` exponential
    (Barthe, Guédon, Mendelson and Naor, 2005)."""
    raw, _ = single_key("ball", key)
    dt = float_dtype("ball", dtype)
    shape = shape_arg("ball", shape)
    d = shape_arg("ball", (d,))[0]
    k1, k2 = split(raw)
    g = _generalized_normal_raw(k1, p, shape + (d,), dt)
    e = exponential_raw(k2, shape, dt)
    p = fnp.asarray(p, dt)
    return g / fnp.power(fnp.sum(fnp.power(fnp.abs(g), p), axis=-1) + e, 1 / p)[..., None]
