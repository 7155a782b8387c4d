"""vmap's arguments follow JAX (issue #12): keyword arguments are mapped over axis 0,
and bad in_axes/out_axes or arguments raise typed errors naming vmap(f)."""
import numpy as np
import pytest

import funcgrad as fg


def add(x, y):
    return x + y


def test_keyword_arguments_are_mapped_over_axis_0():
    x, y = np.arange(3.0), np.arange(6.0).reshape(3, 2)
    out = fg.vmap(lambda x, y: x * y[0])(x, y=y)
    np.testing.assert_array_equal(out, x * y[:, 0])
    out = fg.vmap(add, in_axes=(None,))(np.ones(2), y=y)
    np.testing.assert_array_equal(out, 1.0 + y)


def test_out_axes_out_of_range_raises():
    with pytest.raises(ValueError, match=r"vmap\(<lambda>\): out_axes=3 is out of range for output 0"):
        fg.vmap(lambda x: x, out_axes=3)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="out_axes=-3 is out of range"):
        fg.vmap(lambda x: x * 2.0, out_axes=-3)(np.ones(2))
    np.testing.assert_array_equal(fg.vmap(lambda x: x, out_axes=-1)(np.ones((2, 3))).shape, (3, 2))


def test_in_axes_dict_keys_must_match_the_argument():
    with pytest.raises(ValueError, match=r"vmap\(<lambda>\) in_axes structure .*keys \['b'\] vs \['a'\]"):
        fg.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": np.ones(2)})
    ok = fg.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))({"a": np.ones(2), "b": 1.0})
    np.testing.assert_array_equal(ok, [2.0, 2.0])


def test_in_axes_length_and_type():
    with pytest.raises(ValueError, match=r"vmap\(add\): in_axes has 1 entries but the function got 2"):
        fg.vmap(add, in_axes=(0,))(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match=r"vmap\(add\): in_axes must be an int, None, or a tuple"):
        fg.vmap(add, in_axes="0")
    with pytest.raises(TypeError, match="entries must be int or None, got str"):
        fg.vmap(add, in_axes=(0, "x"))(np.ones(2), np.ones(2))


def test_bad_arguments_name_the_argument():
    with pytest.raises(OverflowError, match=r"vmap\(add\): argument 1 is the Python int"):
        fg.vmap(add, in_axes=(0, None))(np.ones(2), 2**70)
    with pytest.raises(TypeError, match=r"vmap\(add\): argument 1: .*str"):
        fg.vmap(add)(np.ones(2), "a")
    with pytest.raises(ValueError, match=r"argument 0 has size 2 on axis 0; argument 'y' has size 3"):
        fg.vmap(add)(np.ones(2), y=np.ones(3))
