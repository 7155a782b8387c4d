"""Changing a funcgrad value in place raises ``ImmutableArrayError`` (a ``TypeError``, as
JAX raises, and a ``ValueError``, as NumPy raises for read-only arrays) naming the
operation and the fix (``x.at[idx].set(y)``, ``numpy.array(x)``), and leaves the value
as it was; in-place operators rebind to a new value, as on a ``jax.Array``."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core.array import Array
from funcgrad.errors import ImmutableArrayError


def _values():
    return [fnp.zeros((3, 3)), fg.jit(lambda x: x * 2.0)(np.ones((3, 3))), fnp.asarray(np.ones((3, 3)))[0],
            fnp.sum(np.ones(3))]


def test_item_assignment_names_at_set_and_a_writeable_copy():
    w = fnp.zeros((3, 3))
    with pytest.raises(TypeError, match=r"x\[idx\] = y: .*immutable.*x = x\.at\[idx\]\.set\(y\).*numpy\.array\(x\)"):
        w[:, 0] = 1.0  # autograd programs do this on purpose
    np.testing.assert_array_equal(w, np.zeros((3, 3)))
    for v in _values():
        with pytest.raises(ImmutableArrayError):
            v[...] = 1.0
    assert issubclass(ImmutableArrayError, TypeError) and issubclass(ImmutableArrayError, ValueError)
    # the fixes the message names work
    np.testing.assert_array_equal(w.at[:, 0].set(1.0)[:, 0], [1.0, 1.0, 1.0])
    c = np.array(w)
    c[:, 0] = 1.0
    assert c[0, 0] == 1.0 and w[0, 0] == 0.0


@pytest.mark.parametrize("change, fix", [
    (lambda w: w.fill(0.0), r"full_like"),
    (lambda w: w.sort(), r"funcgrad\.numpy\.sort"),
    (lambda w: w.partition(1), r"funcgrad\.numpy\.partition"),
    (lambda w: w.put([0], [5.0]), r"\.at\[idx\]\.set"),
    (lambda w: w.resize((9,)), r"funcgrad\.numpy\.resize"),
    (lambda w: w.setflags(write=True), r"numpy\.array\(x\)"),
    (lambda w: np.add(w, 1.0, out=w), r"funcgrad\.numpy\.add"),
    (lambda w: np.negative(w, out=(w,)), r"funcgrad\.numpy\.negative"),
])
def test_in_place_methods_raise_the_same_error(change, fix):
    for w in _values():
        if w.ndim == 0 and fix in (r"funcgrad\.numpy\.sort", r"funcgrad\.numpy\.partition"):
            continue  # (NumPy rejects these for 0-d arrays before any write)
        before = np.array(w)
        with pytest.raises(ImmutableArrayError, match=fix):
            change(w)
        np.testing.assert_array_equal(w, before)
        assert not w.flags.writeable


def test_in_place_operators_rebind_like_jax():
    for op in ("+=", "-=", "*=", "/=", "//=", "%=", "**=", "<<=", ">>=", "&=", "|=", "^="):
        x = fnp.arange(1, 4) if op in ("<<=", ">>=", "&=", "|=", "^=") else fnp.asarray(np.arange(1.0, 4.0))
        before, y = np.array(x), x
        exec(f"y {op} 1", {}, loc := {"y": y})  # noqa: S102 - a fixed set of operators
        y = loc["y"]
        assert type(y) is Array and y is not x and not y.flags.writeable, op
        np.testing.assert_array_equal(x, before)


def test_arrays_numpy_made_writeable_stay_numpy_arrays():
    # np.zeros_like of a value gives a writeable Array (NumPy's subok): it belongs to the
    # caller, who may write it as NumPy allows.
    z = np.zeros_like(fnp.ones(3))
    z[0] = 2.0
    z.fill(1.0)
    assert z.tolist() == [1.0, 1.0, 1.0]


def test_numpy_functions_writing_into_arrays_they_made_work():
    # np.roll writes into np.empty_like(x), an Array of NumPy's, through views of it
    a = fnp.asarray(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(np.roll(a, 1, axis=1), np.roll(np.arange(6.0).reshape(2, 3), 1, axis=1))
    r = np.empty_like(a)
    r[:, 0] = 5.0
    assert r[0, 0] == 5.0 and not a[[0, 1]].flags.writeable
