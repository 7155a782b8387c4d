"""Count samplers: ``poisson``, ``binomial``, ``multinomial`` (JAX's algorithms, which
follow TensorFlow's and NumPy's).

- ``poisson``: the rate is taken in float32 (as JAX); Knuth's product of float32 uniforms
  for rates below 10, Hörmann's transformed rejection (PTRS, 1993) above. Both run on
  the same key, each in a ``lax.while_loop`` over the whole array, and the rate picks one.
- ``binomial`` (float counts, default float64): for ``n q <= 10`` (``q = min(p, 1 - p)``)
  the count of geometric waiting times that fit in ``n`` trials, above that Hörmann's
  BTRS rejection with Stirling tail corrections; again both on the same key.
- ``multinomial``: a ``lax.scan`` over the categories drawing each count as a binomial
  of the trials left, with probability ``p_i / (p_i + ... + p_k)``.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.random.continuous import float_dtype, out_shape, uniform_raw
from funcgrad.random.discrete import int_dtype
from funcgrad.random.keys import single_key, split

_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def _poisson_knuth(raw, lam, shape, dt, max_iters):
    def more(s):
        i, _, _, log_prod = s
        return fnp.any(log_prod > -lam) & (i < max_iters)

    def body(s):
        i, k, r, log_prod = s
        r, sub = split(r)
        k = fnp.where(log_prod > -lam, k + 1, k)
        return i + 1, k, r, log_prod + fnp.log(uniform_raw(sub, shape, _F32))

    init = (fnp.zeros((), _I64), fnp.zeros(shape, dt), raw, fnp.zeros(shape, _F32))
    return (lax.while_loop(more, body, init)[1] - 1).astype(dt)


def _poisson_rejection(raw, lam, shape, dt, max_iters):
    log_lam = fnp.log(lam)
    b = 0.931 + 2.53 * fnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(s):
        i, k_out, accepted, r = s
        r, k0, k1 = split(r, 3)
        u = uniform_raw(k0, shape, lam.dtype) - 0.5
        v = uniform_raw(k1, shape, lam.dtype)
        us = 0.5 - fnp.abs(u)
        k = fnp.floor((2 * a / us + b) * u + lam + 0.43)
        s_ = fnp.log(v * inv_alpha / (a / (us * us) + b))
        t_ = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s_ <= t_))
        return i + 1, fnp.where(accept, k, k_out), accepted | accept, r

    init = (fnp.zeros((), _I64), fnp.full(shape, -1.0, lam.dtype), fnp.zeros(shape, bool), raw)
    more = lambda s: fnp.any(~s[2]) & (s[0] < max_iters)  # noqa: E731
    return lax.while_loop(more, body, init)[1].astype(dt)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers (default int64): Knuth's method for lam < 10, Hörmann's
    transformed rejection above (see the module docstring)."""
    raw, _ = single_key("poisson", key)
    dt = int_dtype("poisson", dtype)
    lam = fnp.asarray(lam)
    shape = out_shape("poisson", shape, lam)
    lam = fnp.broadcast_to(lam, shape).astype(_F32)
    max_iters = int(np.iinfo(dt).max)
    use_knuth = fnp.isnan(lam) | (lam < 10)
    lam_knuth = fnp.where(use_knuth, lam, np.float32(0))
    lam_rejection = fnp.where(use_knuth, np.float32(1e5), lam)
    out = fnp.where(use_knuth, _poisson_knuth(raw, lam_knuth, shape, dt, max_iters),
                    _poisson_rejection(raw, lam_rejection, shape, dt, max_iters))
    return fnp.where(lam == 0, fnp.zeros((), dt), out)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    """``log k! - (Stirling's approximation)``: a table for k <= 9; above it JAX's series
    at k clamped to 9 (JAX clamps before the series; kept for equal values)."""
    dt = np.dtype(k.dtype)
    table = fnp.asarray(np.array(_STIRLING_TAIL, dt))
    small = k <= 9
    k = fnp.clip(k, np.array(0.0, dt), np.array(9.0, dt))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return fnp.where(small, table[fnp.floor(k).astype(np.int32)], approx)


def _binomial_inversion(raw, count, prob, shape, max_iters):
    log1mp = fnp.log1p(-prob)

    def body(s):
        i, num_geom, geom_sum, r = s
        sub, r = split(r)
        num_geom = fnp.where(geom_sum <= count, num_geom + 1, num_geom)
        geom = fnp.ceil(fnp.log(uniform_raw(sub, shape, prob.dtype)) / log1mp)
        return i + 1, num_geom, geom_sum + geom, r

    def more(s):
        return fnp.any(s[2] <= count) & (s[0] < max_iters)

    zeros = fnp.zeros(shape, prob.dtype)
    return lax.while_loop(more, body, (fnp.zeros((), _I64), zeros, zeros, raw))[1] - 1


def _btrs(raw, count, prob, shape, max_iters):
    stddev = fnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = fnp.floor((count + 1) * prob)

    def body(s):
        i, k_out, accepted, key = s
        key, k0, k1 = split(key, 3)
        u = uniform_raw(k0, shape, prob.dtype)
        v = uniform_raw(k1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - fnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = fnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = fnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * fnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * fnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * fnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, fnp.where(accept, k, k_out), accepted | accept, key

    init = (fnp.zeros((), _I64), fnp.full(shape, -1.0, prob.dtype), fnp.zeros(shape, bool), raw)
    return lax.while_loop(lambda s: fnp.any(~s[2]) & (s[0] < max_iters), body, init)[1]


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats (default float64; ``n`` may be a float, floored as
    NumPy's): NaN for NaN or negative ``n`` or ``p`` outside [0, 1], inf for infinite ``n``."""
    raw, _ = single_key("binomial", key)
    dt = float_dtype("binomial", dtype)
    p = fnp.asarray(p)
    p = p if p.dtype.kind == "f" else p.astype(np.float64)
    count = fnp.asarray(n).astype(p.dtype)
    shape = out_shape("binomial", shape, count, p)
    return _binomial(raw, fnp.broadcast_to(count, shape), fnp.broadcast_to(p, shape), shape, dt)


def _binomial(raw, count, prob, shape, dt):
    # (eagerly, NumPy would warn where a branch divides by zero in lanes the other fills)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _binomial_branches(raw, count, prob, shape, dt)


def _binomial_branches(raw, count, prob, shape, dt):
    p_lt_half = prob < 0.5
    q = fnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = fnp.isnan(count) | (count < 0.0)
    count_inf = fnp.isinf(count)
    q_is_nan = fnp.isnan(q)
    q_l_0 = q < 0.0
    q = fnp.where(q_is_nan | q_l_0, fnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = fnp.floor(count)
    count_inv = fnp.where(use_inversion, count, fnp.zeros_like(count))
    count_btrs = fnp.where(use_inversion, fnp.full_like(count, 1e4), count)
    q_btrs = fnp.where(use_inversion, fnp.full_like(q, 0.5), q)
    max_iters = float(np.finfo(dt).max)
    samples = fnp.where(use_inversion, _binomial_inversion(raw, count_inv, q, shape, max_iters).astype(dt),
                        _btrs(raw, count_btrs, q_btrs, shape, max_iters).astype(dt))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = fnp.where(invalid, fnp.full_like(samples, np.nan), samples)
    samples = fnp.where(count_inf & ~invalid, fnp.full_like(samples, np.inf), samples)
    return fnp.where(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples, count.astype(dt) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts (floats, default float64) of ``n`` trials over the outcomes on
    the last axis of ``p``; ``shape`` (the result's shape, last axis included, as JAX's
    code) defaults to ``p.shape``. ``unroll`` is the scan's."""
    raw, _ = single_key("multinomial", key)
    dt = float_dtype("multinomial", dtype)
    n, p = fnp.asarray(n), fnp.asarray(p)
    inexact = np.result_type(*(d if d.kind == "f" else np.float64 for d in (n.dtype, p.dtype)))
    n, p = n.astype(inexact), p.astype(inexact)
    shape = tuple(p.shape) if shape is None else out_shape("multinomial", shape, p)
    n = fnp.broadcast_to(n, shape[:-1])
    p = fnp.moveaxis(fnp.broadcast_to(p, shape), -1, 0)
    remaining = fnp.flip(fnp.cumsum(fnp.flip(p, 0), axis=0), 0)
    ratios = p / fnp.where(remaining == 0, 1, remaining)
    keys = split(raw, ratios.shape[0])

    def step(left, ratio_key):
        ratio, k = ratio_key
        prob = fnp.clip(ratio, 0, 1)
        count = _binomial(k, left, prob, tuple(np.broadcast_shapes(left.shape, prob.shape)), np.dtype(left.dtype))
        return left - count, count

    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return fnp.moveaxis(counts, 0, -1).astype(dt)
