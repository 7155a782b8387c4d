"""Edge inputs (NaN, inf) of recently added scipy names, checked against SciPy."""
import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as st

import funcgrad as fg
import funcgrad.scipy.special as fs
import funcgrad.scipy.stats as fst

X = np.array([-np.inf, -2.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, np.inf, np.nan])


def test_owens_t_nan_a_propagates():
    h = np.array([np.inf, -np.inf, 0.5, 0.0])
    a = np.array([np.nan, np.nan, np.nan, 1.0])
    np.testing.assert_allclose(fs.owens_t(h, a), ss.owens_t(h, a), equal_nan=True)


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_truncnorm_nan_x_is_nan(name):
    got = getattr(fst.truncnorm, name)(X, -1.0, 2.0)
    np.testing.assert_allclose(got, getattr(st.truncnorm, name)(X, -1.0, 2.0), rtol=1e-9, equal_nan=True)
    jitted = fg.jit(lambda x: getattr(fst.truncnorm, name)(x, -1.0, 2.0))(X)
    np.testing.assert_allclose(jitted, got, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_pareto_nan_x_is_nan(name):
    got = getattr(fst.pareto, name)(X, 2.5)
    np.testing.assert_allclose(got, getattr(st.pareto, name)(X, 2.5), rtol=1e-9, equal_nan=True)


@pytest.mark.parametrize("fill_value", [np.nan, None])
def test_regular_grid_nearest_nan_query_is_nan(fill_value):
    import scipy.interpolate as si

    import funcgrad.scipy.interpolate as fsi
    pts = (np.array([0.0, 1, 2]), np.array([0.0, 1, 3, 4]))
    vals = np.arange(12.0).reshape(3, 4) ** 1.5
    q = np.array([[0.5, 0.5], [np.nan, 1.0], [1.0, np.nan], [1.5, 2.0]])
    want = si.RegularGridInterpolator(pts, vals, method="nearest", bounds_error=False, fill_value=fill_value)(q)
    interp = fsi.RegularGridInterpolator(pts, vals, method="nearest", bounds_error=False, fill_value=fill_value)
    np.testing.assert_allclose(interp(q), want, equal_nan=True)
    np.testing.assert_allclose(fg.jit(lambda p: interp(p))(q), want, equal_nan=True)
    vals3 = np.stack([vals, -vals], axis=-1)  # trailing value dimensions
    want3 = si.RegularGridInterpolator(pts, vals3, method="nearest", bounds_error=False, fill_value=fill_value)(q)
    got3 = fsi.RegularGridInterpolator(pts, vals3, method="nearest", bounds_error=False, fill_value=fill_value)(q)
    np.testing.assert_allclose(got3, want3, equal_nan=True)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator_closed_over_in_jit(method):
    import scipy.interpolate as si

    import funcgrad.scipy.interpolate as fsi
    pts = (np.array([0.0, 1, 2]), np.array([0.0, 1, 3, 4]))
    vals = np.arange(12.0).reshape(3, 4) ** 1.5
    q = np.array([[0.5, 0.5], [1.5, 2.0], [1.9, 3.9]])
    interp = fsi.RegularGridInterpolator(pts, vals, method=method)
    want = si.RegularGridInterpolator(pts, vals, method=method)(q)
    np.testing.assert_allclose(fg.jit(lambda p: interp(p))(q), want, rtol=1e-12)
    np.testing.assert_allclose(fg.vmap(interp)(q), want, rtol=1e-12)


@pytest.mark.parametrize("shape, axis", [((0,), -1), ((2, 0), -1), ((0, 3), 0)])
def test_detrend_linear_of_an_empty_axis_is_empty(shape, axis):
    import funcgrad.scipy.signal as fsg
    for dtype in (np.float32, np.float64):
        data = np.zeros(shape, dtype)
        out = fsg.detrend(data, axis=axis, type="linear")
        assert out.shape == shape and out.dtype == dtype
        const = fsg.detrend(data, axis=axis, type="constant")
        assert const.shape == out.shape and const.dtype == out.dtype


def test_welch_errors_name_welch():
    import funcgrad.scipy.signal as fsg
    with pytest.raises(ValueError, match=r"^welch: nperseg"):
        fsg.welch(np.zeros(0))
    with pytest.raises(ValueError, match=r"^welch: average"):
        fsg.welch(np.ones(16), nperseg=8, average="mode")
    with pytest.raises(ValueError, match=r"^welch: scaling"):
        fsg.welch(np.ones(16), nperseg=8, scaling="power")
    with pytest.raises(ValueError, match=r"^csd: average"):
        fsg.csd(np.ones(16), np.ones(16), nperseg=8, average="mode")


@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "zeta"])
def test_lax_special_names_take_one_float_dtype_as_jax(name):
    from funcgrad import lax
    f = getattr(lax, name)
    a64, x64 = np.array([1.5, 2.0]), np.array([0.5, 1.0])
    with pytest.raises(TypeError, match=rf"lax\.{name} requires arguments to have the same dtypes"):
        f(a64.astype(np.float32), x64)
    with pytest.raises(TypeError, match=rf"lax\.{name}: operand 0 has dtype int64"):
        f(np.array([1, 2]), x64)
    want = f(a64, x64)  # same dtypes and Python scalars are accepted, eager and under jit
    np.testing.assert_allclose(fg.jit(f)(a64, x64), want, rtol=1e-12)
    assert f(a64.astype(np.float32), x64.astype(np.float32)).dtype == np.float32
    f(1.5, x64)


def test_lax_igamma_grad_a_is_nan_where_igamma_is():
    from funcgrad import lax
    a = np.array([-1.0, 0.0, np.nan, 2.0])
    x = np.array([1.0, 1.0, 1.0, 1.0])
    got = np.asarray(lax.igamma_grad_a(a, x))
    assert np.array_equal(np.isnan(got), np.isnan(ss.gammainc(a, x)))
    h = 1e-6
    np.testing.assert_allclose(got[3], (ss.gammainc(2 + h, 1.0) - ss.gammainc(2 - h, 1.0)) / (2 * h), rtol=1e-6)


def test_hyp1f1_terminating_before_a_pole_of_b():
    a = np.array([-2.0, -2.0, -1.0, 1.0, -3.0, -2.0, 0.0])
    b = np.array([-3.0, -3.0, -4.0, -1.0, -3.0, -2.0, -1.0])
    x = np.array([0.5, -1.5, 2.0, 0.5, 0.5, 0.5, 0.5])
    want = ss.hyp1f1(a, b, x)  # 1.375, ..., inf where the pole comes first
    np.testing.assert_allclose(fs.hyp1f1(a, b, x), want, rtol=1e-12)
    np.testing.assert_allclose(fg.jit(fs.hyp1f1)(a, b, x), want, rtol=1e-12)


def test_lax_gather_rejects_dimension_numbers_of_the_wrong_type():
    from funcgrad import lax
    operand = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match="gather: dimension_numbers must be a lax.GatherDimensionNumbers"):
        lax.gather(operand, np.array([[0]]), ((1,), (0,), (0,)), (1, 3))
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    np.testing.assert_array_equal(lax.gather(operand, np.array([[1]]), dn, (1, 3)), operand[1:])
    np.testing.assert_array_equal(lax.gather(operand, np.array([[1, 2]]), "clip"), operand[1, 2:])


@pytest.mark.parametrize("call, message", [
    (lambda v: __import__("funcgrad").lax.all_to_all(v, "i", 5, 0), r"all_to_all: split_axis=5 is out of range"),
    (lambda v: __import__("funcgrad").lax.all_to_all(v, "i", 0, -3), r"all_to_all: concat_axis=-3 is out of range"),
    (lambda v: __import__("funcgrad").lax.psum_scatter(v, "i", scatter_dimension=2),
     r"psum_scatter: scatter_dimension=2 is out of range"),
    (lambda v: __import__("funcgrad").lax.all_to_all(v, "i", 1, 0, tiled=True),
     r"all_to_all: split_axis=1 has length 6, which does not split into 4"),
    (lambda v: __import__("funcgrad").lax.all_to_all(v, "i", 1, 0), r"all_to_all: split_axis=1 has length 6, not"),
])
def test_collectives_check_their_axes(call, message):
    # (an out-of-range axis used to wrap around silently; length errors named the gathered axis)
    with pytest.raises(ValueError, match=message):
        fg.vmap(call, axis_name="i")(np.ones((4, 4, 6)))


def test_collectives_negative_axes_as_jax():
    from funcgrad import lax
    y = np.arange(96.0).reshape(4, 4, 6)
    got = fg.vmap(lambda v: lax.all_to_all(v, "i", -2, -1), axis_name="i")(y)
    want = fg.vmap(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i")(y)
    np.testing.assert_array_equal(got, want)
    got = fg.vmap(lambda v: lax.psum_scatter(v, "i", scatter_dimension=-2), axis_name="i")(y)
    np.testing.assert_allclose(got, y.sum(0))  # example i keeps row i of the sum
