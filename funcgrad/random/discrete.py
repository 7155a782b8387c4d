"""Discrete samplers and shuffles: ``randint``, ``bernoulli``, ``rademacher``,
``geometric``, ``categorical``, ``choice``, ``permutation`` (JAX's algorithms, so the
values match ``jax.random`` under ``jax_enable_x64``).

- ``randint``: two words of bits per value, combined modulo the span so the bias is
  about ``span / 2**64`` rather than ``span / 2**32``; 8- and 16-bit integers are drawn
  as int32 and cast, as JAX does;
- ``categorical``: the Gumbel-max trick (``argmax(logits + gumbel)``); without
  replacement, the Gumbel top-k trick;
- ``permutation``: sort by random 32-bit keys, repeated enough rounds (3 log n / log 2**32)
  that ties are unlikely to bias it.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import dtypes
from funcgrad.core.trace import Tracer
from funcgrad.random.continuous import const, gumbel_mode, gumbel_raw, out_shape, param, uniform_raw
from funcgrad.random.keys import random_bits, shape_arg, single_key, split

_I64 = np.dtype(np.int64)
_I32 = np.dtype(np.int32)


def int_dtype(fname, dtype) -> np.dtype:
    dt = dtypes.canonicalize(_I64 if dtype is None else dtype, what=f"{fname} dtype")
    if dt.kind not in "iu":
        raise TypeError(f"{fname}: dtype must be an integer dtype, got {dt.name}")
    return dt


def _convert_and_clip(val, dt):
    """``val`` (an integer array) cast to ``dt``, clipped to its range instead of wrapping."""
    src = np.iinfo(val.dtype)
    info = np.iinfo(dt)
    lo, hi = max(info.min, src.min), min(info.max, src.max)
    return fnp.clip(val, np.array(lo, val.dtype), np.array(hi, val.dtype)).astype(dt)


def _int_bound(name, v):
    v = fnp.asarray(v)
    if v.dtype.kind not in "iub":
        v = v.astype(_I64)
    return v


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform on [minval, maxval) of ``shape`` (default int64); ``minval`` is
    returned where ``maxval <= minval``.

    >>> funcgrad.random.randint(funcgrad.random.key(0), (3,), 0, 10)
    Array([5, 1, 5])
    """
    raw, _ = single_key("randint", key)
    dt = int_dtype("randint", dtype)
    lo, hi = _int_bound("minval", minval), _int_bound("maxval", maxval)
    shape = out_shape("randint", shape, lo, hi)
    sdt = dt
    if dt.itemsize < 4:  # drawn as int32 (less modulo bias), as JAX
        sdt, info = _I32, np.iinfo(dt)
        lo = fnp.clip(lo.astype(_I32), int(info.min), int(info.max))
        hi = fnp.clip(hi.astype(_I32), int(info.min), int(info.max) + 1)
    return _randint(raw, lo, hi, shape, sdt).astype(dt)


def _randint(raw, lo, hi, shape, dt):
    # maxval past the dtype's range (randint(k, s, 0, 256, uint8)): the span is one larger
    top = _convert_and_clip(np.array(np.iinfo(dt).max, dt), hi.dtype)
    out_of_range = hi > top
    lo, hi = _convert_and_clip(lo, dt), _convert_and_clip(hi, dt)
    nbits = 8 * dt.itemsize
    udt = np.dtype(f"u{dt.itemsize}")
    k1, k2 = split(raw)
    higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    span = (hi - lo).astype(udt)
    span = fnp.where(hi <= lo, np.array(1, udt), span)
    span = fnp.where(out_of_range & (hi > lo), span + np.array(1, udt), span)
    span = fnp.broadcast_to(span, shape)
    # (2**nbits) mod span, from (2**(nbits/2) mod span) squared, all in nbits-wide words
    mult = _rem(fnp.full(shape, 2 ** (nbits // 2), udt), span)
    mult = _rem(mult * mult, span)
    offset = _rem(_rem(higher, span) * mult + _rem(lower, span), span)
    return fnp.broadcast_to(lo, shape) + offset.astype(dt)


def _rem(a, b):
    """Unsigned ``a % b`` with XLA's ``a % 0 == a`` (a span of 2**nbits wraps to 0, and
    then the remainders must leave the bits alone)."""
    zero = b == 0
    return fnp.where(zero, a, lax.rem(a, fnp.where(zero, np.array(1, b.dtype), b)))


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability ``p``: ``uniform < p``; ``mode="high"``
    compares with two uniforms' worth of bits, for tiny ``p``."""
    raw, _ = single_key("bernoulli", key)
    if mode not in ("low", "high"):
        raise ValueError(f"bernoulli: mode must be 'low' or 'high', got {mode!r}")
    p = fnp.asarray(p)
    dt = p.dtype if p.dtype.kind == "f" else np.dtype(np.float64)
    p = param("bernoulli", "p", p, dt)
    shape = out_shape("bernoulli", shape, p)
    return bernoulli_raw(raw, p, shape, dt, mode)


def bernoulli_raw(raw, p, shape, dt, mode="low"):
    if mode == "high":
        u = uniform_raw(raw, (2,) + shape, dt)
        return u[1] * const(2.0 ** -np.finfo(dt).nmant, dt) < p - u[0]
    return uniform_raw(raw, shape, dt) < p


def rademacher_raw(raw, shape, dt):
    b = bernoulli_raw(raw, const(0.5, np.float64), shape, np.dtype(np.float64)).astype(dt)
    return (2 * b - 1).astype(dt)


def rademacher(key, shape=(), dtype=None):
    """-1 or 1 with equal probability (default int64)."""
    raw, _ = single_key("rademacher", key)
    dt = dtypes.canonicalize(_I64 if dtype is None else dtype, what="rademacher dtype")
    return rademacher_raw(raw, shape_arg("rademacher", shape), dt)


def geometric(key, p, shape=None, dtype=None):
    """Geometric(p) integers >= 1 (trials up to the first success; default int64):
    ``floor(log u / log1p(-p)) + 1``."""
    raw, _ = single_key("geometric", key)
    dt = int_dtype("geometric", dtype)
    p = fnp.asarray(p)
    p = p if p.dtype.kind == "f" else p.astype(np.float64)
    shape = out_shape("geometric", shape, p)
    u = uniform_raw(raw, shape, p.dtype)
    u = fnp.where(u == 0, const(1.0, p.dtype), u)
    log_q = fnp.broadcast_to(fnp.log1p(-p), shape)
    return (fnp.floor(fnp.log(u) / log_q) + 1).astype(dt)


def _axis(fname, axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fname}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis`` (int64; int32
    with ``replace=False``, as JAX's top-k).

    ``shape`` must be a shape the batch shape (``logits.shape`` without ``axis``)
    broadcasts to; its leading dimensions are independent draws. ``replace=False`` draws
    distinct indices (then ``prod(shape[:-batch])`` must not exceed the number of
    categories)."""
    raw, _ = single_key("categorical", key)
    mode = gumbel_mode("categorical", mode)
    logits = fnp.asarray(logits)
    if logits.dtype.kind != "f":
        logits = logits.astype(np.float64)
    ndim = logits.ndim
    if ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension (the categories)")
    ax = _axis("categorical", axis, ndim)
    batch = tuple(d for i, d in enumerate(logits.shape) if i != ax)
    if shape is None:
        shape = batch
    else:
        shape = shape_arg("categorical", shape)
        tail = shape[len(shape) - len(batch):]
        try:
            ok = len(shape) >= len(batch) and np.broadcast_shapes(tail, batch) == tail
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"categorical: shape {shape} must end with a shape the batch shape {batch} (logits "
                             f"{logits.shape} without axis {ax}) broadcasts to")
    prefix = shape[: len(shape) - len(batch)]
    if replace:
        lshape = list(shape[len(prefix):])
        lshape.insert(ax, logits.shape[ax])
        g = gumbel_raw(raw, prefix + tuple(lshape), logits.dtype, mode)
        return fnp.argmax(g + fnp.reshape(logits, (1,) * len(prefix) + logits.shape), axis=ax - ndim)
    k = math.prod(prefix)
    if k > logits.shape[ax]:
        raise ValueError(f"categorical: cannot draw {k} distinct categories out of {logits.shape[ax]} "
                         "with replace=False")
    perturbed = logits + gumbel_raw(raw, logits.shape, logits.dtype, mode)
    _, top = lax.top_k(fnp.moveaxis(perturbed, ax, -1), k)
    return fnp.reshape(fnp.moveaxis(top, -1, 0), shape)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random elements of ``a`` along ``axis`` (or of ``arange(a)`` for an int ``a``).

    ``p`` (probabilities of the ``n`` entries; scaled to sum to 1, as JAX does) weights
    the draw: with replacement by inverting the cumulative sum, without by the Gumbel
    top-k trick. The result has shape ``a.shape[:axis] + shape + a.shape[axis+1:]``."""
    raw, _ = single_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"choice: shape must be a tuple of ints, got {shape!r}")
    shape = shape_arg("choice", shape)
    mode = gumbel_mode("choice", mode)
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
            r = cum[-1] * (1 - uniform_raw(raw, shape, p.dtype))
            ind = fnp.minimum(fnp.sum(cum < r[..., None], axis=-1), n - 1)  # searchsorted, side left
        else:
            g = gumbel_raw(raw, (n,), p.dtype, mode) + fnp.log(p)
            ind = lax.top_k(g, draws)[1].astype(_I64)
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
