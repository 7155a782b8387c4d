"""lax.full/full_like/broadcast/broadcasted_iota/squeeze/logistic/exp2/reduce_and/or/xor:
dtypes as JAX's (with funcgrad's float64 default) and typed errors (values and derivatives
are in the op table, tests/op_rows/lax_extras.py)."""
import numpy as np
import pytest

from funcgrad import lax


def test_full_dtypes():
    assert lax.full((2,), 1.5).dtype == np.float64
    assert lax.full((2,), 1).dtype == np.int64
    assert lax.full(3, 1, np.float32).dtype == np.float32 and lax.full(3, 1, np.float32).shape == (3,)
    assert lax.full((), True).dtype == np.bool_
    assert lax.full_like(np.ones((2, 2), np.int32), 7).dtype == np.int32
    assert lax.full_like(np.ones(2), 1, np.float32, (3, 1)).shape == (3, 1)
    with pytest.raises(TypeError, match="full: fill_value must be a scalar"):
        lax.full((2,), np.ones(2))


def test_shapes():
    assert lax.broadcast(np.ones((3, 1)), (4, 2)).shape == (4, 2, 3, 1)
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (2, 3), 0), [[0, 0, 0], [1, 1, 1]])
    assert lax.squeeze(np.ones((1, 3, 1)), (-1,)).shape == (1, 3)
    with pytest.raises(ValueError, match=r"squeeze: .*axis 0 has size 2"):
        lax.squeeze(np.ones((2, 3)), (0,))


def test_elementwise_need_floats():
    np.testing.assert_allclose(lax.logistic(np.array([-800.0, 0.0, 800.0])), [0.0, 0.5, 1.0])
    assert lax.exp2(np.float32(3.0)).dtype == np.float32
    with pytest.raises(TypeError, match="logistic: x must be a floating-point array"):
        lax.logistic(np.arange(3))
    with pytest.raises(TypeError, match="exp2: x must be a floating-point array"):
        lax.exp2(np.arange(3))


def test_logical_reductions():
    b = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(lax.reduce_and(b, (1,)), [False, True])
    np.testing.assert_array_equal(lax.reduce_or(b, (1,)), [True, True])
    assert lax.reduce_xor(b, (0, 1)) == np.True_
    i = np.array([1, 2, 4, 6], np.uint8)
    assert (int(lax.reduce_or(i, (0,))), int(lax.reduce_and(i, (0,))), int(lax.reduce_xor(i, (0,)))) == (7, 0, 1)
    assert lax.reduce_and(np.array([255, 15], np.uint8), (0,)) == 15  # (the all-ones init of an unsigned type)
    with pytest.raises(TypeError, match="reduce_or: operand must be a boolean or integer array"):
        lax.reduce_or(np.ones(2), (0,))
