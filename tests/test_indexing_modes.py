"""JAX's out-of-range indexing modes (issue #12): dynamic_slice wraps negative starts
then clamps; take / take_along_axis default to "fill"; ``.at[]`` takes ``mode=`` and
``fill_value=``; derivatives follow the mode; zero-size dimensions raise typed errors
(or fill) instead of failing inside a primitive. Eager, staged and compiled alike."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.prims.indexing import default_fill_value, gather_mode, scatter_mode
from funcgrad.errors import ConcretizationError


def _three_ways(f, *args):
    """f eagerly, through make_jaxpr + eval, and through jit: all three results."""
    closed = fg.make_jaxpr(f)(*args)
    fg.check_jaxpr(closed)
    return [f(*args), fg.eval_closed_jaxpr(closed, *args)[0], fg.jit(f)(*args)]


def _traced(f, *args):
    """f with every index traced: through make_jaxpr + eval and through jit. (Eagerly the
    indices are concrete, and with no mode they are checked like NumPy's.)"""
    return [fg.eval_closed_jaxpr(fg.make_jaxpr(f)(*args), *args)[0], fg.jit(f)(*args)]


def _all_equal(results, expected):
    for r in results:
        np.testing.assert_array_equal(np.asarray(r), expected)


# --- dynamic_slice / dynamic_update_slice ------------------------------------------------------

@pytest.mark.parametrize("start, expected", [(-3, [7, 8, 9]), (-1, [7, 8, 9]), (-8, [2, 3, 4]),
                                             (-100, [0, 1, 2]), (8, [7, 8, 9]), (4, [4, 5, 6])])
def test_dynamic_slice_negative_start_wraps_then_clamps(start, expected):
    x = np.arange(10.0)
    _all_equal(_three_ways(lambda x, s: lax.dynamic_slice(x, [s], [3]), x, np.int64(start)), expected)


def test_dynamic_update_slice_negative_start_wraps():
    x = np.zeros(6)
    u = np.array([1.0, 2.0])
    _all_equal(_three_ways(lambda x, s: lax.dynamic_update_slice(x, u, [s]), x, np.int64(-2)), [0, 0, 0, 0, 1, 2])
    _all_equal(_three_ways(lambda x, s: lax.dynamic_update_slice(x, u, [s]), x, np.int64(-5)), [0, 1, 2, 0, 0, 0])


def test_dynamic_slice_wraps_under_vmap_and_grad():
    x = np.arange(10.0)
    starts = np.array([-3, -1, -100, 2])
    expected = [[7, 8, 9], [7, 8, 9], [0, 1, 2], [2, 3, 4]]
    f = lambda x, s: lax.dynamic_slice(x, [s], [3])  # noqa: E731
    np.testing.assert_array_equal(fg.vmap(f, (None, 0))(x, starts), expected)
    np.testing.assert_array_equal(fg.jit(fg.vmap(f, (None, 0)))(x, starts), expected)
    g = lambda x, s: fnp.sum(f(x, s) * np.array([1.0, 2.0, 3.0]))  # noqa: E731
    want = np.zeros(10)
    want[7:] = [1, 2, 3]
    for grad in (fg.grad(g), fg.jit(fg.grad(g)), fg.grad(fg.jit(g))):
        np.testing.assert_array_equal(grad(x, np.int64(-2)), want)


# --- mode names and defaults ----------------------------------------------------------------------

def test_mode_names_map_to_the_primitive_modes():
    assert [gather_mode(m) for m in (None, "fill", "drop", "clip", "promise_in_bounds")] == \
        ["fill", "fill", "fill", "clip", "clip"]
    assert [scatter_mode(m) for m in (None, "fill", "drop", "clip", "promise_in_bounds")] == \
        ["drop", "drop", "drop", "clip", "drop"]
    with pytest.raises(ValueError, match="take_along_axis: mode must be one of"):
        fnp.take_along_axis(np.zeros((2, 2)), np.zeros((2, 2), np.int64), 1, mode="wrap")
    with pytest.raises(ValueError, match="at\\[\\].set: mode must be one of"):
        fnp.at(np.zeros(3))[0].set(1.0, mode="bogus")
    with pytest.raises(ValueError, match="take: mode must be one of"):
        fnp.take(np.zeros(3), [0], mode="drop")


def test_lax_gather_and_scatter_accept_jax_mode_names():
    x = np.arange(4.0)
    idx = np.array([[1], [6]])
    np.testing.assert_array_equal(lax.gather(x, idx, mode="promise_in_bounds"), [1.0, 3.0])
    assert np.isnan(lax.gather(x, idx, mode="drop")[1])
    out = lax.scatter(x, idx, np.array([9.0, 9.0]), "set", mode="promise_in_bounds")
    np.testing.assert_array_equal(out, [0.0, 9.0, 2.0, 3.0])
    out = lax.scatter(x, idx, np.array([9.0, 9.0]), "set", mode="fill")
    np.testing.assert_array_equal(out, [0.0, 9.0, 2.0, 3.0])


def test_default_fill_values_are_jaxs():
    assert np.isnan(default_fill_value(np.float32))
    assert default_fill_value(np.int32) == np.iinfo(np.int32).min
    assert default_fill_value(np.int64) == np.iinfo(np.int64).min
    assert default_fill_value(np.uint8) == 255  # the largest value for unsigned (JAX)
    assert default_fill_value(np.bool_) is True


@pytest.mark.parametrize("dtype, fill", [(np.float64, np.nan), (np.float32, np.nan),
                                         (np.int32, np.iinfo(np.int32).min), (np.int64, np.iinfo(np.int64).min),
                                         (np.bool_, True)])
def test_take_fills_out_of_range_by_default(dtype, fill):
    a = np.array([1, 0, 1], dtype)
    i = np.array([0, 3, -1, -4])
    expected = np.array([a[0], fill, a[2], fill], dtype)
    for r in _three_ways(lambda a, i: fnp.take(a, i), a, i):
        assert np.asarray(r).dtype == dtype
        np.testing.assert_array_equal(r, expected)
    np.testing.assert_array_equal(fnp.take(a, [0, 3, -1, -4]), expected)  # concrete indices too


def test_take_fill_value_and_other_modes():
    a = np.arange(5.0)
    i = np.array([9, -2, -9, 1])
    _all_equal(_three_ways(lambda a, i: fnp.take(a, i, fill_value=-1.0), a, i), [-1.0, 3.0, -1.0, 1.0])
    _all_equal(_three_ways(lambda a, i: fnp.take(a, i, mode="clip"), a, i), [4.0, 0.0, 0.0, 1.0])
    _all_equal(_three_ways(lambda a, i: fnp.take(a, i, mode="wrap"), a, i), np.take(a, i, mode="wrap"))
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        fnp.take(a, i, mode="raise")
    with pytest.raises(ConcretizationError, match="take: mode='raise' needs concrete indices"):
        fg.jit(lambda a, i: fnp.take(a, i, mode="raise"))(a, i)


def test_take_along_axis_fills_by_default():
    a = np.arange(6.0).reshape(2, 3)
    i = np.array([[0, 3, -1], [-4, 1, 2]])
    expected = [[0.0, np.nan, 2.0], [np.nan, 4.0, 5.0]]
    _all_equal(_three_ways(lambda a, i: fnp.take_along_axis(a, i, 1), a, i), expected)
    _all_equal(_three_ways(lambda a, i: fnp.take_along_axis(a, i, 1, mode="clip"), a, i), [[0, 2, 2], [3, 4, 5]])
    _all_equal(_three_ways(lambda a, i: fnp.take_along_axis(a, i, 1, fill_value=7.0), a, i), [[0, 7, 2], [7, 4, 5]])


def test_at_get_modes_and_fill_value():
    x = np.arange(5.0)
    i = np.array([1, 7, -1, -6])
    _all_equal(_traced(lambda x, i: fnp.at(x)[i].get(), x, i), [1.0, 4.0, 4.0, 0.0])  # promise_in_bounds
    _all_equal(_three_ways(lambda x, i: fnp.at(x)[i].get(mode="promise_in_bounds"), x, i), [1.0, 4.0, 4.0, 0.0])
    _all_equal(_three_ways(lambda x, i: fnp.at(x)[i].get(mode="clip"), x, i), [1.0, 4.0, 4.0, 0.0])
    _all_equal(_three_ways(lambda x, i: fnp.at(x)[i].get(mode="fill", fill_value=-3.0), x, i), [1.0, -3.0, 4.0, -3.0])
    _all_equal(_three_ways(lambda x, s: fnp.at(x)[s].get(mode="fill"), x, np.int64(5)), np.nan)
    # an explicit mode applies to concrete indices too (no NumPy IndexError)
    np.testing.assert_array_equal(fnp.at(x)[np.array([1, 7])].get(mode="fill", fill_value=0.5), [1.0, 0.5])
    assert np.isnan(fnp.at(x)[7].get(mode="fill"))
    assert fnp.at(x)[7].get(mode="clip") == 4.0
    assert fnp.at(x)[1].get(indices_are_sorted=True, unique_indices=True) == 1.0


def test_at_update_modes():
    x = np.zeros(4)
    i = np.array([1, 6, -1, -7])
    _all_equal(_traced(lambda x, i: fnp.at(x)[i].add(1.0), x, i), [0, 1, 0, 1])
    _all_equal(_three_ways(lambda x, i: fnp.at(x)[i].add(1.0, mode="drop"), x, i), [0, 1, 0, 1])
    _all_equal(_three_ways(lambda x, i: fnp.at(x)[i].add(1.0, mode="clip"), x, i), [1, 1, 0, 2])
    np.testing.assert_array_equal(fnp.at(x)[[1, 9]].set(5.0, mode="drop"), [0, 5, 0, 0])
    np.testing.assert_array_equal(fnp.at(x)[9].set(5.0, mode="clip"), [0, 0, 0, 5])
    np.testing.assert_array_equal(fnp.at(x)[[0, 9]].multiply(2.0, mode="fill", unique_indices=True), x)
    with pytest.raises(IndexError, match="index 9 is out of bounds"):  # no mode: NumPy's check
        fnp.at(x)[9].set(5.0)


# --- derivatives follow the mode ----------------------------------------------------------------

def _grads(f, *args):
    return [fg.grad(f)(*args), fg.jit(fg.grad(f))(*args), fg.grad(fg.jit(f))(*args)]


def test_gradient_of_filled_gather_drops_out_of_range_rows():
    x = np.arange(1.0, 6.0)
    i = np.array([1, 7, -1, -9])
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    f = lambda x, i: fnp.sum(fnp.take(x, i, fill_value=0.0) * w)  # noqa: E731
    _all_equal(_grads(f, x, i), [0, 1, 0, 0, 100])  # 7 and -9 are dropped, not clamped
    g = lambda x, i: fnp.sum(fnp.at(x)[i].get(mode="fill", fill_value=0.0) * w)  # noqa: E731
    _all_equal(_grads(g, x, i), [0, 1, 0, 0, 100])
    h = lambda x, i: fnp.sum(fnp.take_along_axis(x, i, 0, fill_value=0.0) * w)  # noqa: E731
    _all_equal(_grads(h, x, i), [0, 1, 0, 0, 100])


def test_gradient_of_clipped_gather_goes_to_the_clipped_element():
    x = np.arange(1.0, 6.0)
    i = np.array([1, 7, -1, -9])
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    f = lambda x, i: fnp.sum(fnp.take(x, i, mode="clip") * w)  # noqa: E731  NumPy's clip: -1 -> 0
    _all_equal(_grads(f, x, i), [1100, 1, 0, 0, 10])
    g = lambda x, i: fnp.sum(fnp.at(x)[i].get(mode="clip") * w)  # noqa: E731  -1 wraps to 4 first
    _all_equal(_grads(g, x, i), [1000, 1, 0, 0, 110])


def test_gradient_of_dropped_scatter_updates_is_zero():
    x = np.zeros(3)
    i = np.array([0, 5, -8])
    v = np.array([1.0, 2.0, 3.0])
    f = lambda v, i: fnp.sum(fnp.at(x)[i].set(v, mode="drop") * np.array([1.0, 2.0, 3.0]))  # noqa: E731
    _all_equal(_grads(f, v, i), [1.0, 0.0, 0.0])
    g = lambda v, i: fnp.sum(fnp.at(x)[i].add(v, mode="clip") * np.array([1.0, 2.0, 3.0]))  # noqa: E731
    _all_equal(_grads(g, v, i), [1.0, 3.0, 1.0])


def test_fill_mode_under_vmap():
    x = np.arange(12.0).reshape(3, 4)
    i = np.array([[0, 5], [-1, -9], [3, 4]])
    f = lambda x, i: fnp.take(x, i, fill_value=-1.0)  # noqa: E731
    expected = np.stack([f(x[k], i[k]) for k in range(3)])
    np.testing.assert_array_equal(fg.vmap(f)(x, i), expected)
    np.testing.assert_array_equal(fg.jit(fg.vmap(f))(x, i), expected)
    np.testing.assert_array_equal(expected, [[0, -1], [7, -1], [11, -1]])


# --- zero-size dimensions ---------------------------------------------------------------------------

def test_traced_scalar_index_into_zero_size_axis_is_an_index_error():
    x = np.zeros((0, 3))
    for f in (lambda x, i: x[i], lambda x, i: x[i, 1], lambda x, i: fnp.at(x)[i].set(1.0)):
        with pytest.raises(IndexError, match=r"axis 0 with size 0.*shape \(0, 3\)") as info:
            fg.jit(f)(x, np.int64(0))
        assert "dynamic_slice" not in str(info.value)


def test_static_index_into_zero_size_axis_is_numpys_index_error():
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        fnp.at(np.zeros((0, 3)))[0, 1].get()
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        fg.jit(lambda x: x[0, 1])(np.zeros((0, 3)))


def test_take_from_zero_size_axis():
    a = np.zeros((2, 0))
    for mode in (None, "fill", "clip", "wrap"):
        with pytest.raises(IndexError, match=r"take: cannot take a non-empty selection .* axis 1 of size 0"):
            fnp.take(a, np.array([0]), axis=1, mode=mode)
        with pytest.raises(IndexError, match="take: cannot take a non-empty selection"):
            fg.jit(lambda a, i: fnp.take(a, i, axis=1, mode=mode))(a, np.array([0]))
    assert fnp.take(a, np.zeros(0, np.int64), axis=1, mode="clip").shape == (2, 0)


def test_take_along_zero_size_axis_gives_zeros():
    a = np.zeros((2, 0))
    i = np.array([[1, 0, -1]])
    for r in _three_ways(lambda a, i: fnp.take_along_axis(a, i, 1), a, i):
        np.testing.assert_array_equal(r, np.zeros((2, 3)))


def test_traced_array_index_into_zero_size_axis():
    x = np.zeros((0, 2))
    i = np.array([0, 3])
    r = _three_ways(lambda x, i: fnp.at(x)[i].get(mode="fill", fill_value=2.0), x, i)
    _all_equal(r, np.full((2, 2), 2.0))
    with pytest.raises(IndexError, match=r"axis 0 with size 0.*shape \(0, 2\)") as info:
        fg.jit(lambda x, i: x[i])(x, i)
    assert "gather" not in str(info.value)
    _all_equal(_three_ways(lambda x, i: fnp.at(x)[i].add(1.0, mode="clip"), x, i), np.zeros((0, 2)))


def test_fill_value_must_be_a_concrete_scalar():
    x = np.arange(3.0)
    with pytest.raises(ValueError, match="at\\[\\].get: fill_value must be a scalar"):
        fnp.at(x)[np.array([0])].get(mode="fill", fill_value=np.zeros(2))
    with pytest.raises(ConcretizationError, match="take: fill_value must be a concrete scalar"):
        fg.jit(lambda x, v: fnp.take(x, np.array([5]), fill_value=v))(x, 1.0)
