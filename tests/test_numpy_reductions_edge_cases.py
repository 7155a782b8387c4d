"""Reductions and sorting beyond the op table: errors, return types, staged dtypes."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X2 = np.arange(12.0).reshape(3, 4) - 5.5
X0 = np.float64(2.5)


def staged_avals(f, *args):
    return [v.aval for v in fg.make_jaxpr(f)(*args).jaxpr.outvars]


# --- axis errors ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.sum(x, axis=2),
        lambda m, x: m.prod(x, axis=-3),
        lambda m, x: m.mean(x, axis=(0, 5)),
        lambda m, x: m.var(x, axis=2),
        lambda m, x: m.std(x, axis=-3, ddof=1),
        lambda m, x: m.max(x, axis=2),
        lambda m, x: m.min(x, axis=(1, -3)),
        lambda m, x: m.all(x, axis=2),
        lambda m, x: m.any(x, axis=-5),
        lambda m, x: m.argmax(x, axis=2),
        lambda m, x: m.argmin(x, axis=-3),
        lambda m, x: m.cumsum(x, axis=2),
        lambda m, x: m.cumprod(x, axis=-3),
        lambda m, x: m.median(x, axis=2),
        lambda m, x: m.sort(x, axis=2),
        lambda m, x: m.argsort(x, axis=-3),
        lambda m, x: m.count_nonzero(x, axis=2),
        lambda m, x: m.nanmax(x, axis=3),
        lambda m, x: m.nanmean(x, axis=-3),
        lambda m, x: m.ptp(x, axis=2),
        lambda m, x: m.average(x, axis=2),
    ],
)
def test_axis_out_of_range_raises_axis_error(call):
    with pytest.raises(np.exceptions.AxisError):
        call(np, X2)  # the reference raises it too
    with pytest.raises(np.exceptions.AxisError):
        call(fnp, X2)
    with pytest.raises(np.exceptions.AxisError):
        fg.make_jaxpr(lambda x: call(fnp, x))(X2)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.mean(x, axis=0),  # mean/var/median reject axis=0 on 0-d ...
        lambda m, x: m.var(x, axis=-1),
        lambda m, x: m.median(x, axis=0),
        lambda m, x: m.sort(x),  # ... and sort's default axis=-1 does too
        lambda m, x: m.sum(x, axis=1),  # sum accepts 0 / -1 only
        lambda m, x: m.argmax(x, axis=1),
    ],
)
def test_axis_errors_on_0d_like_numpy(call):
    with pytest.raises(np.exceptions.AxisError):
        call(np, X0)
    with pytest.raises(np.exceptions.AxisError):
        call(fnp, X0)


def test_axis_error_is_also_value_and_index_error():
    with pytest.raises(ValueError):
        fnp.sum(X2, axis=7)
    with pytest.raises(IndexError):
        fnp.sum(X2, axis=7)


def test_duplicate_axes_raise_value_error():
    with pytest.raises(ValueError, match="duplicate"):
        fnp.sum(X2, axis=(0, -2))
    with pytest.raises(ValueError, match="duplicate"):
        fnp.average(X2, axis=(1, 1))


def test_non_integer_axis_raises_type_error():
    with pytest.raises(TypeError):
        fnp.sum(X2, axis=1.0)
    with pytest.raises(TypeError):
        fnp.argmax(X2, axis=(0,))


# --- empty inputs --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "ptp", "nanmax", "nanmin"])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((0, 3), 0), ((3, 0), None)])
def test_empty_extremum_raises_value_error(name, shape, axis):
    x = np.zeros(shape)
    with pytest.raises(ValueError):
        getattr(np, name)(x, axis=axis)
    with pytest.raises(ValueError, match="zero-size"):
        getattr(fnp, name)(x, axis=axis)
    with pytest.raises(ValueError):
        fg.make_jaxpr(lambda v: getattr(fnp, name)(v, axis=axis))(x)


def test_empty_extremum_along_nonempty_axis_is_fine():
    x = np.zeros((0, 3))
    got = fnp.max(x, axis=1)
    assert got.shape == (0,) and got.dtype == np.float64


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_empty_argmax_raises_value_error(name):
    with pytest.raises(ValueError):
        getattr(fnp, name)(np.zeros((0,)))
    with pytest.raises(ValueError):
        getattr(fnp, name)(np.zeros((0, 2)), axis=0)
    with pytest.raises(ValueError):
        fg.make_jaxpr(lambda v: getattr(fnp, name)(v))(np.zeros((2, 0)))


def test_empty_sum_prod_mean():
    e = np.zeros((0,), np.int32)
    assert fnp.sum(e) == 0 and fnp.sum(e).dtype == np.int64
    assert fnp.prod(e) == 1 and fnp.prod(e).dtype == np.int64
    with np.errstate(invalid="ignore"):
        assert np.isnan(fnp.mean(np.zeros((0,))))


# --- non-array inputs -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "mean", "max", "argmax", "any", "cumsum", "median", "sort", "argsort", "var"])
@pytest.mark.parametrize("bad", ["abc", None, {"a": 1}, object()])
def test_non_array_input_raises_type_error(name, bad):
    with pytest.raises(TypeError):
        getattr(fnp, name)(bad)


def test_out_is_rejected():
    with pytest.raises(NotImplementedError, match="out="):
        fnp.sum(X2, out=np.zeros(()))


# --- count_nonzero and other return types ----------------------------------------------------
def test_count_nonzero_return_type_matches_numpy():
    x = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
    expected = np.count_nonzero(x)  # NumPy 2: numpy.int64, not a Python int
    got = fnp.count_nonzero(x)  # funcgrad: a 0-d int64 value, as JAX
    assert type(got) is fg.Array and got.dtype == np.int64 and got == expected == 3 and int(got) == 3
    per_row = fnp.count_nonzero(x, axis=1)
    assert per_row.dtype == np.int64 and per_row.tolist() == [2, 1]
    (aval,) = staged_avals(fnp.count_nonzero, x)
    assert aval.shape == () and aval.dtype == np.int64


def test_staged_dtypes_follow_numpy():
    i32 = np.arange(6, dtype=np.int32).reshape(2, 3)
    f32 = np.ones((2, 3), np.float32)
    b = i32 > 2
    assert staged_avals(fnp.sum, i32)[0].dtype == np.int64
    assert staged_avals(fnp.cumsum, b)[0].dtype == np.int64
    assert staged_avals(fnp.mean, i32)[0].dtype == np.float64
    assert staged_avals(fnp.var, f32)[0].dtype == np.float32
    assert staged_avals(fnp.median, i32)[0].dtype == np.float64
    assert staged_avals(fnp.argmax, f32)[0].dtype == np.int64
    assert staged_avals(fnp.argsort, f32)[0].dtype == np.int64
    assert staged_avals(fnp.all, f32)[0].dtype == np.bool_
    assert staged_avals(lambda x: fnp.sum(x, axis=1, keepdims=True), f32)[0].shape == (2, 1)


def test_argsort_is_sort_with_iota():
    text = str(fg.make_jaxpr(fnp.argsort)(np.ones((2, 3))))
    assert "iota" in text and "sort" in text


def test_sort_kind_and_order_arguments():
    x = np.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(fnp.sort(x, kind="quicksort"), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        fnp.sort(x, kind="bogus")
    with pytest.raises(NotImplementedError):
        fnp.sort(x, order="f0")


# --- average and quantile argument checks ------------------------------------------------------
def test_average_weights_shape_errors():
    with pytest.raises(TypeError, match="axis must be specified"):
        fnp.average(X2, weights=np.ones(4))
    with pytest.raises(ValueError, match="consistent"):
        fnp.average(X2, axis=1, weights=np.ones(3))


def test_quantile_q_checks():
    with pytest.raises(ValueError):
        fnp.quantile(X2, 1.5)
    with pytest.raises(ValueError):
        fnp.percentile(X2, -1.0)
    with pytest.raises(NotImplementedError):
        fnp.quantile(X2, 0.5, method="nearest")
    with pytest.raises(TypeError, match="concrete"):
        fg.make_jaxpr(lambda q: fnp.quantile(X2, q))(0.5)


def test_var_correction_alias():
    np.testing.assert_allclose(fnp.var(X2, correction=1), np.var(X2, ddof=1), rtol=1e-14)
