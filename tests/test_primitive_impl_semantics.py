"""Direct checks of primitive impls whose semantics go beyond a single NumPy call."""
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax


def test_pad_low_high_interior_and_negative():
    x = np.arange(1.0, 4.0)
    np.testing.assert_array_equal(lax.pad(x, 0.0, [(1, 2, 0)]), [0, 1, 2, 3, 0, 0])
    np.testing.assert_array_equal(lax.pad(x, 0.0, [(0, 0, 1)]), [1, 0, 2, 0, 3])
    np.testing.assert_array_equal(lax.pad(x, 9.0, [(-1, 1, 1)]), [9, 2, 9, 3, 9])
    np.testing.assert_array_equal(lax.pad(x, 0.0, [(-2, -1, 0)]), [])
    y = np.arange(6.0).reshape(2, 3)
    out = lax.pad(y, -1.0, [(1, 0, 0), (0, 1, 1)])
    assert out.shape == (3, 6)
    np.testing.assert_array_equal(out[1], [0, -1, 1, -1, 2, -1])


def test_slice_strides_and_rev():
    x = np.arange(10)
    np.testing.assert_array_equal(lax.slice(x, (1,), (8,), (3,)), x[1:8:3])
    np.testing.assert_array_equal(lax.rev(x.reshape(2, 5), (1,)), x.reshape(2, 5)[:, ::-1])
    with pytest.raises(ValueError, match="slice: invalid"):
        lax.slice(x, (2,), (11,))


def test_dynamic_slice_clamps_like_jax():
    x = np.arange(10)
    np.testing.assert_array_equal(lax.dynamic_slice(x, [np.int64(8)], [4]), [6, 7, 8, 9])
    # issue #12: a negative start wraps once (-3 -> 7), then clamps (it clamped to 0 before)
    np.testing.assert_array_equal(lax.dynamic_slice(x, [np.int64(-3)], [2]), [7, 8])
    np.testing.assert_array_equal(lax.dynamic_slice(x, [np.int64(-30)], [2]), [0, 1])
    out = lax.dynamic_update_slice(x, np.array([-1, -1]), [np.int64(9)])
    np.testing.assert_array_equal(out, [0, 1, 2, 3, 4, 5, 6, 7, -1, -1])
    assert x[8] == 8  # inputs are never mutated


def test_gather_modes():
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([[0], [3], [7], [-1]])
    np.testing.assert_array_equal(lax.gather(x, idx, mode="clip"), x[[0, 3, 3, 0]])
    filled = lax.gather(x, idx, mode="fill")
    np.testing.assert_array_equal(filled[:2], x[[0, 3]])
    assert np.isnan(filled[2:]).all()
    pts = np.array([[1, 2], [3, 0]])
    np.testing.assert_array_equal(lax.gather(x, pts, mode="clip"), [x[1, 2], x[3, 0]])


def test_scatter_kinds_and_drop():
    x = np.zeros(4)
    idx = np.array([[1], [1], [9], [3]])
    upd = np.array([1.0, 2.0, 5.0, 3.0])
    np.testing.assert_array_equal(lax.scatter(x, idx, upd, "add"), [0, 3, 0, 3])
    np.testing.assert_array_equal(lax.scatter(x, idx, upd, "add", mode="clip"), [0, 3, 0, 8])
    np.testing.assert_array_equal(lax.scatter(np.ones(4), idx, upd, "mul"), [1, 2, 1, 3])
    np.testing.assert_array_equal(lax.scatter(x, idx, upd, "max"), [0, 2, 0, 3])
    assert x.sum() == 0


def test_sort_multi_operand_stable_nan_last():
    x = np.array([3.0, np.nan, 1.0, 3.0, -2.0])
    keys, perm = lax.sort([x, np.arange(5)], num_keys=1)
    np.testing.assert_array_equal(perm, [4, 2, 0, 3, 1])
    np.testing.assert_array_equal(keys[:4], [-2, 1, 3, 3])
    m = np.array([[2, 1], [1, 5], [2, 0]])
    (s,) = lax.sort([m], dimension=0)
    np.testing.assert_array_equal(s, np.sort(m, axis=0))


def test_dot_general_batch_and_contract():
    a, b = np.random.default_rng(0).normal(size=(2, 3, 4)), np.random.default_rng(1).normal(size=(2, 4, 5))
    out = lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    np.testing.assert_allclose(out, a @ b, rtol=1e-14)
    out = lax.dot_general(a, b, (((0, 2), (0, 1)), ((), ())))
    np.testing.assert_allclose(out, np.einsum("ijk,ikl->jl", a, b), rtol=1e-13)
    with pytest.raises(ValueError, match="does not match"):
        lax.dot_general(a, b, (((1,), (1,)), ((), ())))


def test_convert_float_to_int_is_defined_for_nan_and_inf():
    out = lax.convert_element_type(np.array([np.nan, np.inf, -np.inf, 2.7, -2.7]), np.int32)
    np.testing.assert_array_equal(out, [0, 2**31 - 1, -(2**31), 2, -2])


def test_integer_div_rem_by_zero_are_zero():
    x, y = np.array([7, -7, 5]), np.array([2, 2, 0])
    np.testing.assert_array_equal(lax.div(x, y), [3, -3, 0])
    np.testing.assert_array_equal(lax.rem(x, y), [1, -1, 0])


def test_iota_and_select_n():
    np.testing.assert_array_equal(lax.iota(np.int32, (2, 3), 1), [[0, 1, 2], [0, 1, 2]])
    which = np.array([0, 2, 1], np.int32)
    np.testing.assert_array_equal(lax.select_n(which, np.zeros(3), np.ones(3), np.full(3, 2.0)), [0, 2, 1])
    np.testing.assert_array_equal(lax.select(np.array([True, False]), np.ones(2), np.zeros(2)), [1, 0])


def test_broadcast_in_dim_checks():
    out = lax.broadcast_in_dim(np.arange(3.0), (2, 3), (1,))
    np.testing.assert_array_equal(out, [[0, 1, 2]] * 2)
    with pytest.raises(ValueError, match="cannot broadcast"):
        lax.broadcast_in_dim(np.arange(3.0), (2, 4), (1,))


def test_every_primitive_jaxpr_typechecks_through_lax():
    closed = fg.make_jaxpr(lambda x: lax.cumsum(lax.reduce_max(x, (1,)), 0, reverse=True))(np.ones((3, 4)))
    fg.check_jaxpr(closed)
    (out,) = fg.eval_closed_jaxpr(closed, np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(out, [3 + 7 + 11, 7 + 11, 11])
