"""``funcgrad.nn``'s attention and scaled products against NumPy references."""
import numpy as np
import pytest

import funcgrad as fg
from funcgrad.errors import UnsupportedDtypeError


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _reference(q, k, v, bias=None, keep=None, scale=None):
    """Per-head attention in NumPy loops over batch and head; ``keep`` (B, N, T, S)."""
    B, T, N, H = q.shape
    K = k.shape[2]
    scale = 1 / np.sqrt(H) if scale is None else scale
    out = np.zeros_like(q)
    lse = np.zeros((B, T, N))
    for b in range(B):
        for n in range(N):
            kh = n // (N // K)
            logits = q[b, :, n] @ k[b, :, kh].T * scale
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (B, N, T, k.shape[1]))[b, n]
            if keep is not None:
                logits = np.where(keep[b, n], logits, -0.7 * np.finfo(np.float64).max)
            out[b, :, n] = _softmax(logits) @ v[b, :, kh]
            m = logits.max(-1)
            lse[b, :, n] = m + np.log(np.exp(logits - m[:, None]).sum(-1))
    return out, lse


@pytest.fixture
def qkv():
    rng = np.random.default_rng(0)
    return rng.normal(size=(2, 5, 4, 3)), rng.normal(size=(2, 6, 4, 3)), rng.normal(size=(2, 6, 4, 3))


def test_multi_head_attention_with_bias(qkv):
    q, k, v = qkv
    bias = np.random.default_rng(1).normal(size=(1, 4, 5, 6))
    out = fg.nn.dot_product_attention(q, k, v, bias=bias, scale=0.3)
    np.testing.assert_allclose(out, _reference(q, k, v, bias=bias, scale=0.3)[0], rtol=1e-12)


def test_grouped_and_multi_query_attention(qkv):
    q, k, v = qkv
    for heads in (2, 1):
        out = fg.nn.dot_product_attention(q, k[:, :, :heads], v[:, :, :heads])
        np.testing.assert_allclose(out, _reference(q, k[:, :, :heads], v[:, :, :heads])[0], rtol=1e-12)
    with pytest.raises(ValueError, match="multiple of the key/value heads, got 4 and 3"):
        fg.nn.dot_product_attention(q, k[:, :, :3], v[:, :, :3])


def test_masks_causal_window_and_lengths(qkv):
    q, k, v = qkv
    B, T, N, _ = q.shape
    S = k.shape[1]
    mask = np.random.default_rng(2).random((B, 1, T, S)) > 0.3
    q_len, kv_len = np.array([3, 5], np.int32), np.array([4, 6], np.int32)
    out, lse = fg.nn.dot_product_attention(q, k, v, mask=mask, is_causal=True, local_window_size=(2, 1),
                                           query_seq_lengths=q_len, key_value_seq_lengths=kv_len,
                                           return_residual=True)
    t, s = np.arange(T)[:, None], np.arange(S)[None, :]
    keep = mask & (s <= t) & (t <= s + 2) & (t >= s - 1)
    keep = keep & (np.arange(T)[None, None, :, None] < q_len[:, None, None, None])
    keep = keep & (np.arange(S)[None, None, None, :] < kv_len[:, None, None, None])
    keep = np.broadcast_to(keep, (B, N, T, S))
    ref_out, ref_lse = _reference(q, k, v, keep=keep)
    ref_out = ref_out * (np.arange(T)[None, :, None, None] < q_len[:, None, None, None])
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(lse, ref_lse, rtol=1e-12)


def test_attention_without_batch_axis_under_jit_and_grad(qkv):
    q, k, v = (x[0] for x in qkv)
    out = fg.jit(fg.nn.dot_product_attention)(q, k, v)
    np.testing.assert_allclose(out, _reference(q[None], k[None], v[None])[0][0], rtol=1e-12)
    g = fg.grad(lambda q: fg.nn.dot_product_attention(q, k, v).sum())(q)
    eps, i = 1e-6, (1, 2, 0)
    dq = np.zeros_like(q)
    dq[i] = eps
    fd = (_reference((q + dq)[None], k[None], v[None])[0].sum() - _reference((q - dq)[None], k[None], v[None])[0].sum())
    np.testing.assert_allclose(g[i], fd / (2 * eps), rtol=1e-6)


def test_attention_argument_errors(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        fg.nn.dot_product_attention(q, k, v, mask=np.ones((1, 1, 5, 6)))
    with pytest.raises(ValueError, match="implementation='cudnn'"):
        fg.nn.dot_product_attention(q, k, v, implementation="cudnn")
    with pytest.raises(ValueError, match="value shape should be"):
        fg.nn.dot_product_attention(q, k, v[:, :3])


def test_logmeanexp():
    x = np.random.default_rng(3).normal(size=(3, 4)) * 50
    np.testing.assert_allclose(fg.nn.logmeanexp(x), np.log(np.mean(np.exp(x))), rtol=1e-12)
    np.testing.assert_allclose(fg.nn.logmeanexp(x, axis=1, keepdims=True),
                               np.log(np.mean(np.exp(x), axis=1, keepdims=True)), rtol=1e-12)
    where = x > x.min(axis=1, keepdims=True)  # three of four in each row
    expected = [np.log(np.mean(np.exp(row[w]))) for row, w in zip(x, where)]
    np.testing.assert_allclose(fg.nn.logmeanexp(x, axis=1, where=where), expected, rtol=1e-12)
    np.testing.assert_allclose(fg.nn.logmeanexp(np.array([1000.0, 1000.0])), 1000.0)


def test_scaled_matmul_and_dot_general():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 5, 8))
    sa, sb = rng.random((2, 3, 2)), rng.random((2, 5, 4))
    ref = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 4, -1), b * np.repeat(sb, 2, -1))
    np.testing.assert_allclose(fg.nn.scaled_matmul(a, b, sa, sb), ref, rtol=1e-12)
    assert fg.nn.scaled_matmul(a, b, sa, sb, preferred_element_type=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="lhs_scales"):
        fg.nn.scaled_matmul(a, b, rng.random((2, 3, 3)), sb)
    dims = (((2,), (2,)), ((0,), (0,)))
    np.testing.assert_allclose(fg.nn.scaled_dot_general(a, b, dims), np.einsum("bmk,bnk->bmn", a, b), rtol=1e-12)
    with pytest.raises(UnsupportedDtypeError, match="float8"):
        fg.nn.scaled_dot_general(a, b, dims, configs=[object()] * 3)
