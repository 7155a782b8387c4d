"""funcgrad.flatten_util.ravel_pytree: flat vector and unravel, dtype promotion as JAX's
(NumPy 2 rules, float64 default), unravel casting back, and use under jit/grad/vmap."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.flatten_util import ravel_pytree

TREE = {"w": np.arange(6.0).reshape(2, 3), "b": (np.array([7.0, 8.0]), 9.0)}


def test_ravel_concatenates_leaves_in_tree_order_and_unravel_inverts():
    flat, unravel = ravel_pytree(TREE)
    leaves = fg.tree_util.tree_leaves(TREE)
    np.testing.assert_array_equal(flat, np.concatenate([np.ravel(x) for x in leaves]))
    back = unravel(flat)
    assert fg.tree_util.tree_structure(back) == fg.tree_util.tree_structure(TREE)
    for a, b in zip(fg.tree_util.tree_leaves(back), leaves):
        np.testing.assert_array_equal(a, b)
        assert np.shape(a) == np.shape(b)


def test_mixed_dtypes_promote_and_unravel_casts_back():
    tree = [np.ones(2, np.float32), np.arange(3, dtype=np.int32), np.array([True])]
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float64  # float32 with int32: float64 (NumPy 2), as JAX's with x64
    back = unravel(flat * 2)
    assert [x.dtype for x in back] == [np.float32, np.int32, np.bool_]
    np.testing.assert_array_equal(back[1], [0, 2, 4])
    with pytest.raises(TypeError, match="dtype float32"):
        unravel(flat.astype(np.float32))
    with pytest.raises(ValueError, match=r"shape \(6,\)"):
        unravel(flat[:4])


def test_one_dtype_keeps_it_and_unravel_keeps_the_given_dtype():
    flat, unravel = ravel_pytree({"a": np.ones(2, np.float32), "b": np.zeros((2, 2), np.float32)})
    assert flat.dtype == np.float32
    assert unravel(flat.astype(np.float64))["a"].dtype == np.float64  # (as JAX: no cast when one dtype)


def test_empty_tree_is_an_empty_float64_vector():
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == np.float64
    assert unravel(flat) == {}


def test_under_jit_grad_and_vmap():
    flat, unravel = ravel_pytree(TREE)
    np.testing.assert_array_equal(fg.jit(lambda t: ravel_pytree(t)[0])(TREE), flat)
    np.testing.assert_array_equal(fg.jit(lambda v: unravel(v)["w"])(flat), TREE["w"])

    def loss(tree):
        v, _ = ravel_pytree(tree)
        return fnp.sum(v ** 2)

    g = fg.grad(loss)(TREE)
    np.testing.assert_allclose(g["w"], 2 * TREE["w"])

    def loss_flat(v):
        t = unravel(v)
        return fnp.sum(t["w"]) * t["b"][1]

    # (leaves in key order: b[0], b[1], w)
    np.testing.assert_allclose(fg.grad(loss_flat)(flat), [0, 0, 15, 9, 9, 9, 9, 9, 9])
    batched = fg.vmap(lambda t: ravel_pytree(t)[0])({"a": np.ones((4, 2)), "b": np.zeros((4, 3))})
    assert batched.shape == (4, 5)
