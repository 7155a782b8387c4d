"""``funcgrad.image``: resize and scale_and_translate against closed forms of JAX's
conventions (half-pixel centres, antialiased downsampling, normalised weights)."""
import numpy as np
import pytest

import funcgrad as fg

rng = np.random.default_rng(0)


def test_linear_upsampling_is_half_pixel_interpolation():
    np.testing.assert_allclose(fg.image.resize(np.array([0.0, 1.0]), (4,), "linear"), [0, 0.25, 0.75, 1.0])
    x = rng.normal(size=6)
    out = fg.image.resize(x, (12,), "bilinear")
    pos = np.clip((np.arange(12) + 0.5) / 2 - 0.5, 0, 5)
    np.testing.assert_allclose(out, np.interp(pos, np.arange(6), x), rtol=1e-13)


def test_linear_downsampling_with_and_without_antialias():
    x = rng.normal(size=8)
    plain = fg.image.resize(x, (4,), "linear", antialias=False)
    np.testing.assert_allclose(plain, 0.5 * (x[0::2] + x[1::2]), rtol=1e-13)
    smooth = fg.image.resize(x, (4,), "linear")  # the triangle widened to 2 pixels: (1, 3, 3, 1) / 8
    padded = np.concatenate([[0.0], x, [0.0]])
    w = np.array([1, 3, 3, 1]) / 8.0
    expected = np.array([padded[2 * j:2 * j + 4] @ w for j in range(4)])
    expected[0] = x[0:3] @ np.array([3, 3, 1]) / 7  # edge samples renormalised over the pixels inside
    expected[-1] = x[-3:] @ np.array([1, 3, 3]) / 7
    np.testing.assert_allclose(smooth, expected, rtol=1e-13)


def test_nearest_keeps_dtype_and_picks_centres():
    x = np.arange(20).reshape(4, 5)
    out = fg.image.resize(x, (3, 7), "nearest")
    rows = np.floor((np.arange(3) + 0.5) * 4 / 3).astype(int)
    cols = np.floor((np.arange(7) + 0.5) * 5 / 7).astype(int)
    np.testing.assert_array_equal(out, x[np.ix_(rows, cols)])
    assert out.dtype == x.dtype


@pytest.mark.parametrize("method", ["cubic", "lanczos3", "lanczos5", "linear"])
def test_constants_stay_constant_and_shapes(method):
    x = np.full((2, 5, 6, 3), 1.5)
    out = fg.image.resize(x, (2, 9, 4, 3), method)
    assert out.shape == (2, 9, 4, 3)
    np.testing.assert_allclose(out, 1.5, rtol=1e-13)


def test_cubic_reproduces_a_quadratic_inside():
    t = np.arange(10.0)
    x = 0.3 * t ** 2 - t + 2
    out = fg.image.resize(x, (20,), "cubic")
    pos = (np.arange(20) + 0.5) / 2 - 0.5
    inside = (pos >= 1) & (pos <= 8)  # (the four-tap kernel sees only pixels that exist)
    np.testing.assert_allclose(out[inside], 0.3 * pos[inside] ** 2 - pos[inside] + 2, rtol=1e-12)


def test_scale_and_translate_shifts():
    x = rng.normal(size=8)
    out = fg.image.scale_and_translate(x, (8,), (0,), np.array([1.0]), np.array([1.0]), "linear")
    np.testing.assert_allclose(out[1:], x[:-1], rtol=1e-13)  # output j reads input j - 1
    assert out[0] == 0.0  # its sample, -1, lies outside the input: 0
    with pytest.raises(ValueError, match="nearest"):
        fg.image.scale_and_translate(x, (8,), (0,), [1.0], [0.0], "nearest")


def test_resize_under_transforms():
    x = rng.normal(size=(5, 4))
    f = lambda x: fg.image.resize(x, (8, 6), "lanczos3").sum()  # noqa: E731
    g = fg.grad(f)(x)
    eps, i = 1e-6, (2, 1)
    d = np.zeros_like(x)
    d[i] = eps
    np.testing.assert_allclose(g[i], (f(x + d) - f(x - d)) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(fg.jit(lambda x: fg.image.resize(x, (8, 6), "cubic"))(x),
                               fg.image.resize(x, (8, 6), "cubic"), rtol=1e-13)
    batched = fg.vmap(lambda x: fg.image.resize(x, (8,), "linear"))(x.T)
    np.testing.assert_allclose(batched, fg.image.resize(x.T, (4, 8), "linear"), rtol=1e-13)


def test_resize_errors_and_method_names():
    assert fg.image.ResizeMethod.from_string("bicubic") is fg.image.ResizeMethod.CUBIC
    with pytest.raises(ValueError, match="Unknown resize method"):
        fg.image.resize(np.ones(3), (4,), "spline")
    with pytest.raises(ValueError, match="one entry per axis"):
        fg.image.resize(np.ones((3, 3)), (4,), "linear")
    assert fg.image.resize(np.arange(4), (2,), "linear").dtype == np.float64
