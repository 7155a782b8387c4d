"""funcgrad.nn: values against NumPy/SciPy formulas, derivatives against finite
differences away from kinks, JAX's derivatives at kinks, vmap against a loop, jit
against eager, int promotion, extreme inputs, errors."""
import math

import numpy as np
import pytest
import scipy.special as sps

import funcgrad as fg
import funcgrad.nn as nn
from tests.harness import fd_grad

SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _sig(x):
    return sps.expit(x)


# name -> (funcgrad function, NumPy/SciPy reference)
ELEMENTWISE = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.clip(x, 0, 6)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "elu_alpha": (lambda x: nn.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    "selu": (nn.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x))),
    "celu": (lambda x: nn.celu(x, 2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    "gelu_tanh": (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
    "gelu_exact": (lambda x: nn.gelu(x, approximate=False), lambda x: x * sps.ndtr(x)),
    "silu": (nn.silu, lambda x: x * _sig(x)),
    "swish": (nn.swish, lambda x: x * _sig(x)),
    "sigmoid": (nn.sigmoid, _sig),
    "softplus": (nn.softplus, lambda x: np.log1p(np.exp(x))),
    "sparse_plus": (nn.sparse_plus, lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    "sparse_sigmoid": (nn.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1)),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "log_sigmoid": (nn.log_sigmoid, lambda x: np.log(_sig(x))),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hard_swish": (nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "leaky_relu_slope": (lambda x: nn.leaky_relu(x, negative_slope=0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "squareplus": (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    "mish": (nn.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "tanh": (nn.tanh, np.tanh),
    "identity": (nn.identity, lambda x: x),
}

# Points away from every kink (0, +-1, +-3, 6).
X = np.array([-4.3, -2.2, -0.7, -0.3, 0.4, 0.8, 1.6, 2.5, 4.1, 7.2])


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_values_grads_vmap_jit(name):
    f, ref = ELEMENTWISE[name]
    got = f(X)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_allclose(got, ref(X), rtol=1e-13, atol=1e-15)
    # Derivative: elementwise, so the gradient of the sum is the derivative at each point.
    g = fg.grad(lambda x: fg.numpy.sum(f(x)))(X)
    np.testing.assert_allclose(g, fd_grad(lambda x: np.sum(ref(x)), X), rtol=1e-6, atol=1e-8)
    # vmap against a loop, jit against eager (values and dtypes).
    xs = X.reshape(2, 5)
    np.testing.assert_allclose(fg.vmap(f)(xs), np.stack([f(r) for r in xs]), rtol=1e-14)
    jitted = fg.jit(f)(X)
    assert jitted.dtype == got.dtype and jitted.shape == got.shape
    np.testing.assert_allclose(jitted, got, rtol=1e-13, atol=1e-15)
    # float32 stays float32.
    assert f(X.astype(np.float32)).dtype == np.float32


KINKS = [  # (function, point, JAX's derivative there)
    (nn.relu, 0.0, 0.0), (nn.relu6, 0.0, 0.0), (nn.relu6, 6.0, 0.0), (nn.relu6, 3.0, 1.0),
    (nn.hard_sigmoid, -3.0, 0.0), (nn.hard_sigmoid, 3.0, 0.0), (nn.leaky_relu, 0.0, 1.0),
    (nn.hard_tanh, 1.0, 1.0), (nn.hard_tanh, -1.0, 1.0), (nn.elu, 0.0, 1.0),
    (lambda x: nn.elu(x, 0.5), 0.0, 0.5), (nn.celu, 0.0, 1.0), (nn.sparse_plus, -1.0, 0.0),
    (nn.sparse_plus, 1.0, 1.0), (nn.hard_silu, 0.0, 0.5),
]


@pytest.mark.parametrize("i", range(len(KINKS)))
def test_derivatives_at_kinks_follow_jax(i):
    f, x, want = KINKS[i]
    assert fg.grad(f)(x) == want
    assert fg.jit(fg.grad(f))(x) == want  # staged and compiled agree
    assert fg.jvp(f, (x,), (1.0,))[1] == want


def test_relu_second_derivative_and_vmap_of_grad():
    assert fg.grad(fg.grad(nn.relu))(2.0) == 0.0
    assert np.isnan(nn.relu(np.nan)) and np.isnan(nn.relu6(np.nan))  # NaN propagates, as through maximum
    xs = np.array([-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(fg.vmap(fg.grad(nn.relu6))(np.array([-1.0, 0.0, 6.0, 2.0])), [0, 0, 0, 1])
    np.testing.assert_array_equal(fg.jit(fg.vmap(fg.grad(nn.relu)))(xs), [0.0, 0.0, 1.0])


def test_int_inputs_promote_as_jax():
    i = np.array([-2, 0, 3])
    assert nn.relu(i).dtype == np.int64 and list(nn.relu(i)) == [0, 0, 3]
    assert nn.hard_tanh(i).dtype == np.int64
    for f in (nn.sigmoid, nn.gelu, nn.silu, nn.softplus, nn.elu, nn.leaky_relu, nn.relu6):
        assert f(i).dtype == np.float64, f
    assert nn.softmax(i).dtype == np.float64
    assert nn.sigmoid(1) == pytest.approx(sps.expit(1.0))


def test_large_and_small_inputs_stay_finite():
    x = np.array([-1e4, -800.0, 800.0, 1e4])
    for f in (nn.softplus, nn.log_sigmoid, nn.sigmoid, nn.silu, nn.gelu, nn.elu, nn.selu, nn.mish):
        assert np.all(np.isfinite(f(x))), f
        assert np.all(np.isfinite(fg.grad(lambda v: fg.numpy.sum(f(v)))(x))), f
    np.testing.assert_allclose(nn.softplus(x), [0, 0, 800, 1e4], atol=1e-300)
    np.testing.assert_allclose(nn.log_sigmoid(x), [-1e4, -800, 0, 0], atol=1e-300)
    big = np.array([1000.0, 1001.0, -1e4])
    np.testing.assert_allclose(nn.softmax(big), sps.softmax(big), rtol=1e-14)
    np.testing.assert_allclose(nn.log_softmax(big), sps.log_softmax(big), rtol=1e-14)


def test_log1mexp():
    x = np.array([1e-10, 0.3, 0.69, 0.7, 5.0, 40.0])
    want = np.where(x < np.log(2), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))  # accurate both ends
    np.testing.assert_allclose(nn.log1mexp(x), want, rtol=1e-13)
    np.testing.assert_allclose(fg.grad(lambda v: fg.numpy.sum(nn.log1mexp(v)))(x[1:]),
                               fd_grad(lambda v: np.sum(np.log(-np.expm1(-v))), x[1:]), rtol=1e-6, atol=1e-12)


def test_glu():
    x = np.arange(12.0).reshape(3, 4) / 5 - 1
    np.testing.assert_allclose(nn.glu(x), x[:, :2] * _sig(x[:, 2:]), rtol=1e-14)
    np.testing.assert_allclose(nn.glu(x[:2], axis=0), x[:1] * _sig(x[1:2]), rtol=1e-14)
    g = fg.grad(lambda v: fg.numpy.sum(nn.glu(v) ** 2))(x)
    np.testing.assert_allclose(g, fd_grad(lambda v: np.sum((v[:, :2] * _sig(v[:, 2:])) ** 2), x), rtol=1e-6)
    with pytest.raises(ValueError, match=r"glu.*x.*\(3, 4\).*axis 0"):
        nn.glu(x, axis=0)


# --- softmax family --------------------------------------------------------------------------

M = np.array([[0.3, -1.2, 2.0, 0.1], [1.5, 0.2, -0.4, 3.0], [-2.0, 0.0, 0.5, 0.7]])


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
def test_softmax_log_softmax_values(axis):
    np.testing.assert_allclose(nn.softmax(M, axis=axis), sps.softmax(M, axis=axis), rtol=1e-14)
    np.testing.assert_allclose(nn.log_softmax(M, axis=axis), sps.log_softmax(M, axis=axis), rtol=1e-13)
    np.testing.assert_allclose(nn.logsumexp(M, axis=axis), sps.logsumexp(M, axis=axis), rtol=1e-14)


def test_softmax_grads_vmap_jit():
    w = np.linspace(-1, 1, M.size).reshape(M.shape)
    for f, ref in ((nn.softmax, sps.softmax), (nn.log_softmax, sps.log_softmax)):
        g = fg.grad(lambda x: fg.numpy.sum(w * f(x)))(M)
        np.testing.assert_allclose(g, fd_grad(lambda x: np.sum(w * ref(x, axis=-1)), M), rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(fg.vmap(f)(M), np.stack([f(r) for r in M]), rtol=1e-14)
        np.testing.assert_allclose(fg.jit(f)(M), f(M), rtol=1e-14)
        assert fg.jit(f)(M).dtype == np.float64
    hess = fg.hessian(lambda x: nn.log_softmax(x)[0])(M[0])
    p = sps.softmax(M[0])
    np.testing.assert_allclose(hess, -(np.diag(p) - np.outer(p, p)), rtol=1e-12, atol=1e-15)


def test_softmax_where_masks_like_jax():
    mask = np.array([[True, False, True, True], [False, False, True, True], [True, True, True, False]])
    got = nn.softmax(M, where=mask)
    for r in range(3):
        keep = mask[r]
        want = np.zeros(4)
        want[keep] = sps.softmax(M[r][keep])
        np.testing.assert_allclose(got[r], want, rtol=1e-14)
    ls = nn.log_softmax(M, where=mask)
    assert np.all(np.isneginf(ls[~mask]))
    np.testing.assert_allclose(ls[mask], np.log(got[mask]), rtol=1e-13)
    # Masked entries get no gradient; the gradient is finite.
    g = fg.grad(lambda x: fg.numpy.sum(nn.softmax(x, where=mask) * np.arange(12.0).reshape(3, 4)))(M)
    assert np.all(g[~mask] == 0) and np.all(np.isfinite(g))
    g2 = fg.grad(lambda x: fg.numpy.sum(fg.numpy.where(mask, nn.log_softmax(x, where=mask), 0.0)))(M)
    assert np.all(g2[~mask] == 0) and np.all(np.isfinite(g2))
    np.testing.assert_allclose(fg.jit(lambda x: nn.softmax(x, where=mask))(M), got, rtol=1e-14)
    with pytest.raises(ValueError, match=r"softmax.*where.*\(2,\).*\(3, 4\)"):
        nn.softmax(M, where=np.array([True, False]))


def test_standardize():
    want = (M - M.mean(-1, keepdims=True)) / np.sqrt(M.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.standardize(M), want, rtol=1e-12)
    want0 = (M - M.mean(0)) / np.sqrt(M.var(0) + 1e-3)
    np.testing.assert_allclose(nn.standardize(M, axis=0, epsilon=1e-3), want0, rtol=1e-12)
    np.testing.assert_allclose(nn.standardize(M, mean=1.0, variance=4.0), (M - 1) / np.sqrt(4 + 1e-5), rtol=1e-14)
    mask = M > 0
    got = nn.standardize(M, where=mask)
    r = M[1][mask[1]]
    np.testing.assert_allclose(got[1][mask[1]], (r - r.mean()) / np.sqrt(r.var() + 1e-5), rtol=1e-12)

    def ref_loss(x):
        return np.sum(np.sin(x) * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5))

    g = fg.grad(lambda x: fg.numpy.sum(fg.numpy.sin(x) * nn.standardize(x)))(M)
    np.testing.assert_allclose(g, fd_grad(ref_loss, M), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fg.vmap(nn.standardize)(M), np.stack([nn.standardize(r) for r in M]), rtol=1e-14)


def test_one_hot():
    idx = np.array([0, 2, -1, 3, 1])
    got = nn.one_hot(idx, 3)
    want = (idx[:, None] == np.arange(3)).astype(np.float64)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(nn.one_hot(idx, 3, axis=0), want.T)
    assert nn.one_hot(idx, 4, dtype=np.int32).dtype == np.int32
    np.testing.assert_array_equal(fg.jit(lambda i: nn.one_hot(i, 3))(idx), want)
    np.testing.assert_array_equal(fg.vmap(lambda i: nn.one_hot(i, 3))(idx.reshape(5, 1)), want.reshape(5, 1, 3))
    with pytest.raises(TypeError, match="one_hot.*num_classes.*concrete"):
        fg.jit(lambda i, n: nn.one_hot(i, n))(idx, 3)
    with pytest.raises(TypeError, match="one_hot.*num_classes"):
        nn.one_hot(idx, 2.5)


def test_bad_input_names_function_and_argument():
    with pytest.raises(TypeError, match="relu"):
        nn.relu("abc")
    with pytest.raises(TypeError, match="sigmoid"):
        nn.sigmoid(None)
    with pytest.raises(Exception, match="softmax"):
        nn.softmax(M, axis=5)


def test_gelu_both_forms_close_and_dtype():
    x = np.linspace(-3, 3, 13)
    assert np.max(np.abs(nn.gelu(x) - nn.gelu(x, approximate=False))) < 1e-3
    assert nn.gelu(x.astype(np.float32), approximate=False).dtype == np.float32
    assert math.isclose(float(fg.grad(lambda v: nn.gelu(v, approximate=False))(0.0)), 0.5)
