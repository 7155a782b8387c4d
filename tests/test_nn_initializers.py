"""funcgrad.nn.initializers against their definitions (variance by fan, bounds,
orthogonality), deterministic per key, eager == jit, clear errors."""
import numpy as np
import pytest
from scipy import stats

import funcgrad as fg
from funcgrad.nn import initializers as I

KEY = fg.random.key(7)


@pytest.mark.parametrize("factory, scale, mode, dist", [
    (I.glorot_uniform, 1.0, "fan_avg", "uniform"), (I.glorot_normal, 1.0, "fan_avg", "truncated_normal"),
    (I.lecun_uniform, 1.0, "fan_in", "uniform"), (I.lecun_normal, 1.0, "fan_in", "truncated_normal"),
    (I.he_uniform, 2.0, "fan_in", "uniform"), (I.he_normal, 2.0, "fan_in", "truncated_normal"),
])
def test_named_variance_scaling(factory, scale, mode, dist):
    shape = (3, 3, 40, 30)  # receptive field 9: fan_in 360, fan_out 270
    fan = {"fan_in": 360.0, "fan_avg": 315.0}[mode]
    w = factory()(KEY, shape)
    assert w.shape == shape and w.dtype == np.float64
    flat = np.asarray(w).ravel() / np.sqrt(scale / fan)
    if dist == "uniform":
        assert np.abs(flat).max() <= np.sqrt(3.0)
        assert stats.kstest(flat, stats.uniform(-np.sqrt(3), 2 * np.sqrt(3)).cdf).pvalue > 1e-3
    else:  # standard normal truncated to (-2, 2), rescaled to unit variance
        t = stats.truncnorm(-2, 2, scale=1 / 0.87962566103423978)
        assert np.abs(flat).max() < 2 / 0.87962566103423978
        assert stats.kstest(flat, t.cdf).pvalue > 1e-3
    np.testing.assert_allclose(flat.var(), 1.0, rtol=0.05)


@pytest.mark.parametrize("mode, fan", [("fan_in", 6.0), ("fan_out", 4.0), ("fan_avg", 5.0), ("fan_geo", np.sqrt(24))])
def test_variance_scaling_modes_and_axes(mode, fan):
    # in_axis=0 (6), out_axis=1 (4), batch axis 2 excluded from the receptive field.
    w = I.variance_scaling(3.0, mode, "normal", in_axis=0, out_axis=1, batch_axis=2)(KEY, (6, 4, 500))
    np.testing.assert_allclose(np.asarray(w).var(), 3.0 / fan, rtol=0.08)


def test_orthogonal():
    q = I.orthogonal(scale=2.0)(KEY, (6, 4))
    np.testing.assert_allclose(q.T @ q, 4 * np.eye(4), atol=1e-12)
    wide = I.orthogonal()(KEY, (3, 5))
    np.testing.assert_allclose(wide @ wide.T, np.eye(3), atol=1e-12)
    conv = I.orthogonal(column_axis=0)(KEY, (4, 2, 3))
    m = np.moveaxis(np.asarray(conv), 0, -1).reshape(6, 4)
    np.testing.assert_allclose(m.T @ m, np.eye(4), atol=1e-12)


def test_simple_initializers_and_dtypes():
    np.testing.assert_array_equal(I.zeros(KEY, (2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(I.ones(KEY, (2,), np.float32), np.ones(2, np.float32))
    assert I.ones(KEY, (2,), np.float32).dtype == np.float32
    np.testing.assert_array_equal(I.constant(-1.5)(KEY, (3,)), [-1.5] * 3)
    u = I.uniform(0.5)(KEY, (2000,))
    assert 0 <= u.min() and u.max() < 0.5
    np.testing.assert_allclose(np.asarray(I.normal(0.1)(KEY, (4000,))).std(), 0.1, rtol=0.05)
    t = I.truncated_normal(0.1)(KEY, (4000,))
    assert np.abs(t).max() < 0.2
    assert I.glorot_uniform(dtype=np.float32)(KEY, (4, 5)).dtype == np.float32
    assert I.he_normal()(KEY, (4, 5), np.float32).dtype == np.float32


def test_deterministic_per_key_and_jit_agrees():
    init = I.glorot_normal()
    a, b = init(KEY, (5, 7)), init(KEY, (5, 7))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, init(fg.random.key(8), (5, 7)))
    np.testing.assert_array_equal(fg.jit(lambda k: init(k, (5, 7)))(KEY), a)
    raw = fg.random.PRNGKey(7)
    np.testing.assert_array_equal(init(raw, (5, 7)), a)  # raw and typed keys give the same bits
    per_key = fg.vmap(lambda k: I.lecun_uniform()(k, (2, 3)))(fg.random.split(KEY, 3))
    for i, k in enumerate(fg.random.split(KEY, 3)):
        np.testing.assert_array_equal(per_key[i], I.lecun_uniform()(k, (2, 3)))


def test_bad_arguments():
    with pytest.raises(ValueError, match="variance_scaling: invalid mode"):
        I.variance_scaling(1.0, "fan_all", "normal")
    with pytest.raises(ValueError, match="variance_scaling: invalid distribution"):
        I.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="rank >= 2"):
        I.glorot_uniform()(KEY, (5,))
    with pytest.raises(TypeError, match="float dtype"):
        I.he_normal()(KEY, (3, 3), np.int32)
    with pytest.raises(ValueError, match="orthogonal: needs a shape of rank >= 2"):
        I.orthogonal()(KEY, (4,))
