"""Discrete samplers and shuffles: ``randint``, ``bernoulli``, ``categorical``, ``choice``,
``permutation``, ``poisson`` (JAX's algorithms).

- ``randint``: two words of bits per value, combined modulo the span so the bias is
  about ``span / 2**64`` rather than ``span / 2**32``;
- ``categorical``: the Gumbel-max trick (``argmax(logits + gumbel)``); without
  replacement, the Gumbel top-k trick;
- ``permutation``: sort by random 32-bit keys, repeated enough rounds (3 log n / log 2**32)
  that ties are unlikely to bias it;
- ``poisson``: Knuth's product of uniforms for rates < 10, Hörmann's transformed
  rejection (PTRS, 1993) above; both loop in a ``lax.while_loop`` over the whole array.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import dtypes
from funcgrad.core.trace import Tracer
from funcgrad.random.continuous import float_dtype, gumbel, out_shape, param, uniform, uniform_raw
from funcgrad.random.keys import random_bits, shape_arg, single_key, split

_I64 = np.dtype(np.int64)


def _int_dtype(fname, dtype) -> np.dtype:
    dt = dtypes.canonicalize(_I64 if dtype is None else dtype, what=f"{fname} dtype")
    if dt.kind not in "iu":
        raise TypeError(f"{fname}: dtype must be an integer dtype, got {dt.name}")
    return dt


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform on [minval, maxval) of ``shape`` (default int64); ``minval`` is
    returned where ``maxval <= minval``.

    >>> funcgrad.random.randint(funcgrad.random.key(0), (3,), 0, 10)
    Array([5, 1, 5])
    """
    raw, _ = single_key("randint", key)
    dt = _int_dtype("randint", dtype)
    lo, hi = fnp.asarray(minval), fnp.asarray(maxval)
    for name, v in (("minval", lo), ("maxval", hi)):
        if v.dtype.kind not in "iu":
            raise TypeError(f"randint: {name} must be an integer, got {v.dtype.name}")
    lo, hi = lo.astype(dt), hi.astype(dt)
    shape = out_shape("randint", shape, lo, hi)
    nbits = 8 * dt.itemsize
    udt = np.dtype(f"u{dt.itemsize}")
    k1, k2 = split(raw)
    higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    span = fnp.broadcast_to(fnp.where(hi <= lo, fnp.ones((), udt), (hi - lo).astype(udt)), shape)
    # (2**nbits) mod span, from (2**(nbits/2) mod span) squared, all in nbits-wide words
    mult = lax.rem(fnp.full(shape, 2 ** (nbits // 2), udt), span)
    mult = lax.rem(mult * mult, span)
    offset = lax.rem(lax.rem(higher, span) * mult + lax.rem(lower, span), span)
    return fnp.broadcast_to(lo, shape) + offset.astype(dt)


def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability ``p``: ``uniform < p``."""
    raw, _ = single_key("bernoulli", key)
    p = fnp.asarray(p)
    dt = p.dtype if p.dtype.kind == "f" else np.dtype(np.float64)
    p = param("bernoulli", "p", p, dt)
    shape = out_shape("bernoulli", shape, p)
    return uniform_raw("bernoulli", raw, shape, dt, np.array(0.0, dt), np.array(1.0, dt)) < p


def _axis(fname, axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fname}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def categorical(key, logits, axis=-1, shape=None, replace=True):
    """Indices (int64) drawn with probabilities ``softmax(logits)`` along ``axis``.

    ``shape`` must end with the batch shape (``logits.shape`` without ``axis``); its
    leading dimensions are independent draws. ``replace=False`` draws distinct indices
    (then ``prod(shape[:-batch])`` must not exceed the number of categories)."""
    raw, _ = single_key("categorical", key)
    logits = fnp.asarray(logits)
    if logits.dtype.kind != "f":
        logits = logits.astype(np.float64)
    ndim = logits.ndim
    if ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension (the categories)")
    ax = _axis("categorical", axis, ndim)
    batch = tuple(d for i, d in enumerate(logits.shape) if i != ax)
    shape = batch if shape is None else shape_arg("categorical", shape)
    if len(shape) < len(batch) or shape[len(shape) - len(batch):] != batch:
        raise ValueError(f"categorical: shape {shape} must end with the batch shape {batch} (logits "
                         f"{logits.shape} without axis {ax})")
    prefix = shape[: len(shape) - len(batch)]
    if replace:
        g = gumbel(raw, prefix + logits.shape, logits.dtype)
        return fnp.argmax(g + logits, axis=len(prefix) + ax)
    k = math.prod(prefix)
    if k > logits.shape[ax]:
        raise ValueError(f"categorical: cannot draw {k} distinct categories out of {logits.shape[ax]} "
                         "with replace=False")
    perturbed = fnp.moveaxis(logits + gumbel(raw, logits.shape, logits.dtype), ax, -1)
    top = fnp.argsort(-perturbed, axis=-1)[..., :k]
    return fnp.reshape(fnp.moveaxis(top, -1, 0), shape)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Random elements of ``a`` along ``axis`` (or of ``arange(a)`` for an int ``a``).

    ``p`` (probabilities of the ``n`` entries; scaled to sum to 1, as JAX does) weights
    the draw: with replacement by inverting the cumulative sum, without by the Gumbel
    top-k trick. The result has shape ``a.shape[:axis] + shape + a.shape[axis+1:]``."""
    raw, _ = single_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"choice: shape must be a tuple of ints, got {shape!r}")
    shape = shape_arg("choice", shape)
    arr = fnp.asarray(a)
    if arr.ndim == 0:
        if isinstance(a, Tracer) or arr.dtype.kind not in "iu":
            raise TypeError(f"choice: a must be an array or a concrete int, got {arr.dtype.name} {a!r}")
        n = int(a)
    else:
        axis = _axis("choice", axis, arr.ndim)
        n = arr.shape[axis]
    draws = math.prod(shape)
    out_shape_ = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    if draws == 0:
        return fnp.zeros(out_shape_, arr.dtype)
    if n <= 0:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and draws > n:
        raise ValueError(f"choice: cannot take a larger sample ({draws}) than the population ({n}) with replace=False")
    if p is None:
        if replace:
            ind = randint(raw, shape, 0, n)
        else:
            ind = permutation(raw, n)[:draws]
    else:
        p = fnp.asarray(p)
        p = p if p.dtype.kind == "f" else p.astype(np.float64)
        if p.shape != (n,):
            raise ValueError(f"choice: p must be None or a vector matching the {n} entries of a, got shape {p.shape}")
        if not isinstance(p, Tracer) and bool(np.any(np.asarray(p) < 0)):
            raise ValueError("choice: probabilities p must be non-negative")
        if replace:
            cum = fnp.cumsum(p)
            r = cum[-1] * (1 - uniform(raw, shape, p.dtype))
            ind = fnp.minimum(fnp.sum(cum < r[..., None], axis=-1), n - 1)  # searchsorted, side left
        else:
            g = gumbel(raw, (n,), p.dtype) + fnp.log(p)
            ind = fnp.argsort(-g)[:draws]
    if arr.ndim == 0:
        return fnp.reshape(ind, shape)
    return fnp.reshape(fnp.take(arr, fnp.ravel(ind), axis=axis), out_shape_)


def _shuffle(raw, x, axis):
    size = int(np.prod(fnp.shape(x), dtype=np.int64))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        raw, sub = split(raw)
        sort_keys = random_bits(sub, 32, fnp.shape(x))
        x = lax.sort([sort_keys, x], dimension=axis, num_keys=1)[1]
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``
    (``independent=True``: each slice along the other axes shuffled independently)."""
    raw, _ = single_key("permutation", key)
    arr = fnp.asarray(x)
    if arr.ndim == 0:
        if isinstance(x, Tracer) or arr.dtype.kind not in "iu":
            raise TypeError(f"permutation: x must be a concrete int or an array with at least one dimension, got {x!r}")
        return _shuffle(raw, fnp.arange(int(x)), 0)
    axis = _axis("permutation", axis, arr.ndim)
    if independent or arr.ndim == 1:
        return _shuffle(raw, arr, axis)
    ind = _shuffle(raw, fnp.arange(arr.shape[axis]), 0)
    return fnp.take(arr, ind, axis=axis)


def _poisson_knuth(raw, lam, shape, dt):
    def more(s):
        i, _, _, log_prod = s
        return fnp.any(log_prod > -lam) & (i < 100_000)

    def body(s):
        i, k, r, log_prod = s
        r, sub = split(r)
        k = fnp.where(log_prod > -lam, k + 1, k)
        u = uniform_raw("poisson", sub, shape, dt, np.array(0.0, dt), np.array(1.0, dt))
        return i + 1, k, r, log_prod + fnp.log(u)

    init = (fnp.zeros((), _I64), fnp.zeros(shape, _I64), raw, fnp.zeros(shape, dt))
    return lax.while_loop(more, body, init)[1] - 1


def _poisson_rejection(raw, lam, shape, dt):
    log_lam = fnp.log(lam)
    b = 0.931 + 2.53 * fnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(s):
        i, k_out, accepted, r = s
        r, k0, k1 = split(r, 3)
        u = uniform_raw("poisson", k0, shape, dt, np.array(0.0, dt), np.array(1.0, dt)) - 0.5
        v = uniform_raw("poisson", k1, shape, dt, np.array(0.0, dt), np.array(1.0, dt))
        us = 0.5 - fnp.abs(u)
        k = fnp.floor((2 * a / us + b) * u + lam + 0.43)
        s_ = fnp.log(v * inv_alpha / (a / (us * us) + b))
        t_ = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = (accept1 | (~reject & (s_ <= t_))) & ~accepted
        return i + 1, fnp.where(accept, k, k_out), accepted | accept, r

    init = (fnp.zeros((), _I64), fnp.full(shape, -1.0, dt), fnp.zeros(shape, bool), raw)
    out = lax.while_loop(lambda s: fnp.any(~s[2]) & (s[0] < 100_000), body, init)[1]
    return out.astype(_I64)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers (default int64): Knuth's method for lam < 10, Hörmann's
    transformed rejection above (each in a ``while_loop`` over the whole array)."""
    raw, _ = single_key("poisson", key)
    dt = _int_dtype("poisson", dtype)
    lam = param("poisson", "lam", lam, float_dtype("poisson", None))
    shape = out_shape("poisson", shape, lam)
    lam = fnp.broadcast_to(lam, shape)
    k1, k2 = split(raw)
    small = lam < 10
    knuth = _poisson_knuth(k1, fnp.where(small, lam, 0.0), shape, lam.dtype)
    rejection = _poisson_rejection(k2, fnp.where(small, 1e5, lam), shape, lam.dtype)
    out = fnp.where(small, knuth, rejection)
    return fnp.where(lam == 0, 0, out).astype(dt)
