"""``jax.nn``'s attention and scaled products: ``dot_product_attention`` (JAX's ``xla``
implementation: multi-head, grouped-query and multi-query attention, bias, boolean and
causal masks, padding by sequence lengths, local windows), ``scaled_matmul``,
``scaled_dot_general`` and ``logmeanexp``. Composites of ``funcgrad.numpy``, so ``grad``,
``vmap`` and ``jit`` see through them.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import dtypes
from funcgrad.errors import UnsupportedDtypeError
from funcgrad.numpy_api import _util
from funcgrad.scipy import special as _special
from funcgrad.transforms.ad_api import stop_gradient

__all__ = ["dot_product_attention", "logmeanexp", "scaled_dot_general", "scaled_matmul"]


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(exp(x)))`` over ``axis`` (of the entries ``where`` selects), computed as
    ``logsumexp(x) - log(n)`` without overflow.

    >>> logmeanexp(np.log(np.array([1.0, 3.0])))
    Array(0.69314718)
    """
    _util.check_arraylike("logmeanexp", x)
    (x,) = _util.promote_args_inexact("logmeanexp", x)
    x = fnp.asarray(x)
    weights = None if where is None else fnp.broadcast_to(fnp.asarray(where), x.shape).astype(x.dtype)
    lse = _special.logsumexp(x, axis=axis, b=weights, keepdims=keepdims)
    if where is None:
        axes = _util.canonicalize_axes(axis, x.ndim, "logmeanexp")
        count = math.prod(x.shape[a] for a in axes)
    else:
        count = fnp.sum(fnp.broadcast_to(fnp.asarray(where), x.shape), axis=axis, keepdims=keepdims)
    return lse - fnp.log(fnp.asarray(count, dtype=lse.dtype))


def _as_4d(name, t):
    t = fnp.asarray(t)
    if t.ndim > 4:
        raise ValueError(f"dot_product_attention: {name} has {t.ndim} dimensions (shape {t.shape}); at most 4")
    return fnp.reshape(t, (1,) * (4 - t.ndim) + t.shape)


def _check(name, t, shape, dtype=None):
    if t is None:
        return
    if t.ndim != len(shape) or any(s != -1 and d != s for d, s in zip(t.shape, shape)):
        want = tuple("_" if s == -1 else s for s in shape)
        raise ValueError(f"dot_product_attention: {name} shape should be {want}, got {t.shape}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"dot_product_attention: {name} dtype should be {np.dtype(dtype).name}, got {t.dtype}")


def _combined_mask(T, S, mask, is_causal, q_seqlen, kv_seqlen, window):
    """The boolean mask (broadcastable to ``(B, N, T, S)``) of the logits that take part."""
    parts = [] if mask is None else [mask]
    q_pos = fnp.arange(T)[:, None]
    k_pos = fnp.arange(S)[None, :]
    if is_causal:
        parts.append((q_pos >= k_pos)[None, None])
    if window is not None:
        left, right = window
        parts.append(((q_pos <= k_pos + left) & (q_pos >= k_pos - right))[None, None])
    if q_seqlen is not None:
        parts.append((fnp.arange(T)[None, :] < q_seqlen[:, None])[:, None, :, None])
    if kv_seqlen is not None:
        parts.append((fnp.arange(S)[None, :] < kv_seqlen[:, None])[:, None, None, :])
    combined = None
    for p in parts:
        combined = p if combined is None else fnp.logical_and(combined, p)
    return combined


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention, per head: ``softmax(Q K^T * scale + bias) V``.

    Shapes (as ``jax.nn``): ``query`` ``(B, T, N, H)``, ``key`` and ``value`` ``(B, S, K, H)``
    (the leading batch axis may be absent); ``N`` a multiple of ``K`` (``K < N``: grouped-query
    attention, query head ``n`` reads key head ``n // (N // K)``). ``bias`` and the boolean
    ``mask`` (True: take part) broadcast to ``(B, N, T, S)``; ``is_causal`` keeps key ``s <=
    t``; ``local_window_size=(left, right)`` (or one int for both) keeps ``t - left <= s <= t +
    right``; ``query_seq_lengths``/``key_value_seq_lengths`` (int32, ``(B,)``) mask the padding
    (padded query rows come out 0). Masked logits are set to ``-0.7 * finfo.max``, as JAX does,
    so a row with nothing to attend to averages all values. ``scale`` defaults to
    ``1/sqrt(H)``. ``implementation``: None or ``"xla"`` (the only one on a CPU).
    ``return_residual=True`` also returns the ``logsumexp`` of each row's logits,
    ``(B, T, N)``. The output has ``query``'s shape.

    >>> q = k = v = np.eye(2).reshape(1, 2, 1, 2)
    >>> dot_product_attention(q, k, v).shape
    (1, 2, 1, 2)
    """
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation={implementation!r} is not available; "
                         "funcgrad runs the 'xla' formulation (None or 'xla')")
    out_shape = fnp.shape(query)
    q, k, v = _as_4d("query", query), _as_4d("key", key), _as_4d("value", value)
    bias = None if bias is None else _as_4d("bias", bias)
    mask = None if mask is None else _as_4d("mask", mask)
    B, S, K, H = k.shape
    _check("value", v, (B, S, K, H), k.dtype)
    _check("query", q, (B, -1, -1, H), k.dtype)
    _check("mask", mask, (-1,) * 4, np.bool_)
    q_len = None if query_seq_lengths is None else fnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else fnp.asarray(key_value_seq_lengths)
    _check("query_seq_lengths", q_len, (B,), np.int32)
    _check("key_value_seq_lengths", kv_len, (B,), np.int32)
    T, N = q.shape[1], q.shape[2]
    if N % K:
        raise ValueError(f"dot_product_attention: the number of query heads must be a multiple of the "
                         f"key/value heads, got {N} and {K}")
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    if K != N:  # grouped-query attention: each key/value head serves N // K query heads
        k, v = fnp.repeat(k, N // K, axis=2), fnp.repeat(v, N // K, axis=2)
    logits_dtype = fnp.promote_types(q.dtype, np.float32)
    logits = fnp.einsum("BTNH,BSNH->BNTS", q, k).astype(logits_dtype) * fnp.asarray(scale, logits_dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits_dtype)
    keep = _combined_mask(T, S, mask, is_causal, q_len, kv_len, local_window_size)
    if keep is not None:
        logits = fnp.where(keep, logits, fnp.asarray(-0.7 * np.finfo(logits_dtype).max, logits_dtype))
    probs = fnp.exp(logits - stop_gradient(fnp.max(logits, axis=-1, keepdims=True)))
    probs = (probs / fnp.sum(probs, axis=-1, keepdims=True)).astype(k.dtype)
    encoded = fnp.einsum("BNTS,BSNH->BTNH", probs, v)
    if q_len is not None:
        encoded = encoded * (fnp.arange(T)[None, :] < q_len[:, None])[:, :, None, None].astype(encoded.dtype)
    encoded = fnp.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    lse = _special.logsumexp(logits, axis=-1).astype(k.dtype)  # (B, N, T)
    lse = fnp.reshape(fnp.transpose(lse, (0, 2, 1)), out_shape[:-1])
    return encoded, stop_gradient(lse)


def _result_dtype(fname, preferred_element_type, *xs):
    if preferred_element_type is None:
        return fnp.result_type(*xs, np.float32)
    return dtypes.canonicalize(preferred_element_type, what=f"{fname} preferred_element_type")


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=None):
    """Block-scaled matrix product: ``lhs`` ``(B, M, K)`` and ``rhs`` ``(B, N, K)`` each times
    its scales repeated over blocks of the contracted axis (``lhs_scales`` ``(B, M, K // block)``),
    then ``einsum('BMK,BNK->BMN')``. ``preferred_element_type`` defaults to the inputs'
    promoted dtype (at least float32; JAX's default is float32 whatever the inputs).

    >>> a, b = np.arange(1.0, 4.0).reshape(1, 1, 3), np.arange(4.0, 7.0).reshape(1, 1, 3)
    >>> scaled_matmul(a, b, np.full((1, 1, 1), 0.5), np.full((1, 1, 1), 0.5))
    Array([[[8.]]])
    """
    lhs, rhs, ls, rs = (fnp.asarray(t) for t in (lhs, rhs, lhs_scales, rhs_scales))
    for name, t in (("lhs", lhs), ("rhs", rhs), ("lhs_scales", ls), ("rhs_scales", rs)):
        if t.ndim != 3:
            raise ValueError(f"scaled_matmul: {name} must have 3 dimensions (B, rows, K), got shape {t.shape}")
    if lhs.shape[0] != rhs.shape[0] or lhs.shape[2] != rhs.shape[2]:
        raise ValueError(f"scaled_matmul: lhs {lhs.shape} and rhs {rhs.shape} must agree on B and K")
    for name, t, s in (("lhs", lhs, ls), ("rhs", rhs, rs)):
        if s.shape[:2] != t.shape[:2] or s.shape[2] == 0 or t.shape[2] % s.shape[2]:
            raise ValueError(f"scaled_matmul: {name}_scales {s.shape} must be (B, rows, K // block) for "
                             f"{name} {t.shape}")
    dtype = _result_dtype("scaled_matmul", preferred_element_type, lhs, rhs)
    a = lhs.astype(dtype) * fnp.repeat(ls.astype(dtype), lhs.shape[2] // ls.shape[2], axis=-1)
    b = rhs.astype(dtype) * fnp.repeat(rs.astype(dtype), rhs.shape[2] // rs.shape[2], axis=-1)
    return fnp.einsum("BMK,BNK->BMN", a, b)


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None, configs=None,
                       implementation=None):
    """``lax.dot_general`` with block-scaled quantization of its operands. With
    ``configs=None`` it is ``lax.dot_general`` (as in JAX); block-scaling ``configs`` quantize
    to float8 / float4 element types, which funcgrad does not have: an
    ``UnsupportedDtypeError``.

    >>> scaled_dot_general(np.ones((2, 3)), np.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
    (2, 4)
    """
    from funcgrad import lax

    if configs is not None:
        raise UnsupportedDtypeError("scaled_dot_general: block-scaled quantization (configs=...) needs the "
                                    "float8/float4 element types (mxfp8, nvfp4), which funcgrad does not support")
    dtype = _result_dtype("scaled_dot_general", preferred_element_type, lhs, rhs)
    lhs, rhs = fnp.asarray(lhs).astype(dtype), fnp.asarray(rhs).astype(dtype)
    return lax.dot_general(lhs, rhs, dimension_numbers)
