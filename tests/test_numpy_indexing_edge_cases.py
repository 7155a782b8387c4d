"""Indexing behaviour the op table cannot express: errors, clamping/dropping of traced
out-of-range indices (JAX's modes: tests/test_indexing_modes.py), the primitives indexing is staged to, and immutability."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationError
from funcgrad.numpy_api.indexing import DataDependentShapeError, NonConcreteBooleanIndexError, getitem


def _run(f, *args):
    closed = fg.make_jaxpr(f)(*args)
    fg.check_jaxpr(closed)
    return closed


def _eval(f, trace_args, run_args):
    closed = _run(f, *trace_args)
    return fg.eval_closed_jaxpr(closed, *run_args)[0]


def _prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


# --- boolean masks -----------------------------------------------------------------------

def test_traced_bool_mask_raises_with_hint():
    x = np.arange(6.0)
    with pytest.raises(NonConcreteBooleanIndexError) as info:
        fg.make_jaxpr(lambda x: x[x > 2])(x)
    assert isinstance(info.value, ConcretizationError)
    msg = str(info.value)
    assert "bool[6]" in msg and "fnp.where" in msg


def test_traced_bool_mask_in_at_raises():
    x = np.arange(6.0)
    with pytest.raises(NonConcreteBooleanIndexError):
        fg.make_jaxpr(lambda x: x.at[x > 2].set(0.0))(x)


def test_concrete_mask_under_tracing_is_fine():
    x = np.arange(6.0)
    mask = np.array([True, False, True, False, False, True])
    closed = _run(lambda x: x[mask], x)
    assert "gather" in _prims(closed)
    np.testing.assert_array_equal(fg.eval_closed_jaxpr(closed, x)[0], x[mask])


# --- traced out-of-range indices: wrap once, then clamp (reads) / drop (updates) ----------

def test_traced_scalar_index_clamps():
    x = np.arange(5.0) * 10
    f = lambda x, i: x[i]  # noqa: E731
    for i, expected in [(7, 40.0), (-1, 40.0), (-5, 0.0), (-9, 0.0), (2, 20.0)]:
        assert _eval(f, (x, np.int64(0)), (x, np.int64(i))) == expected


def test_traced_array_index_clamps():
    x = np.arange(12.0).reshape(3, 4)
    i = np.array([5, -1, -7, 1])
    got = _eval(lambda x, i: x[:, i], (x, i), (x, i))
    np.testing.assert_array_equal(got, x[:, [3, 3, 0, 1]])


def test_traced_take_modes():
    # issue #12: take's default mode is JAX's "fill" (it clamped before)
    a = np.arange(5.0)
    i = np.array([9, -2, -9])
    np.testing.assert_array_equal(_eval(lambda a, i: fnp.take(a, i), (a, i), (a, i)), [np.nan, 3.0, np.nan])
    np.testing.assert_array_equal(_eval(lambda a, i: fnp.take(a, i, mode="clip"), (a, i), (a, i)), [4.0, 0.0, 0.0])
    np.testing.assert_array_equal(
        _eval(lambda a, i: fnp.take(a, i, mode="wrap"), (a, i), (a, i)), np.take(a, i, mode="wrap")
    )


def test_traced_out_of_range_updates_are_dropped():
    x = np.zeros(4)
    i = np.array([1, 7, -9, -1])
    got = _eval(lambda x, i: x.at[i].set(5.0), (x, i), (x, i))
    np.testing.assert_array_equal(got, [0.0, 5.0, 0.0, 5.0])
    got = _eval(lambda x, i: x.at[i].add(1.0), (x, i), (x, np.array([1, 1, 4, -5])))
    np.testing.assert_array_equal(got, [0.0, 2.0, 0.0, 0.0])
    got = _eval(lambda x, i: x.at[i].set(3.0), (x, np.int64(0)), (x, np.int64(4)))
    np.testing.assert_array_equal(got, np.zeros(4))


# --- eager errors match NumPy -------------------------------------------------------------

@pytest.mark.parametrize(
    "shape, idx",
    [
        ((3,), 5),
        ((3,), -4),
        ((2, 3), (1, 3)),
        ((2, 3), (slice(None), np.array([0, 3]))),
        ((2, 3), [0, 2]),
        ((2, 3), (0, 0, 0)),
        ((3,), (Ellipsis, Ellipsis)),
        ((3,), 1.0),
        ((3,), np.array([0.5])),
        ((3,), np.array(0.5)),
        ((3,), [0.5]),
        ((3,), "a"),
        ((2, 3), np.array([True, False, True])),
        ((2, 3), ([0, 1], [0, 1, 2])),
    ],
)
def test_eager_errors_match_numpy(shape, idx):
    x = np.zeros(shape)
    with pytest.raises(IndexError) as expected:
        x[idx]
    with pytest.raises(IndexError) as got:
        getitem(x, idx)
    assert str(got.value).strip() == str(expected.value).strip()


def test_eager_error_message_text():
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        getitem(np.arange(3.0), 5)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        fnp.at(np.arange(3.0))[5].set(1.0)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        fnp.take(np.arange(3.0), [0, 3], mode="raise")


def test_static_out_of_range_raises_under_tracing_too():
    with pytest.raises(IndexError, match="out of bounds"):
        fg.make_jaxpr(lambda x: x[4])(np.arange(3.0))
    with pytest.raises(IndexError, match="out of bounds"):
        fg.make_jaxpr(lambda x: x.at[[0, 9]].add(1.0))(np.arange(3.0))


def test_slice_step_zero_is_value_error():
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        getitem(np.arange(3.0), slice(None, None, 0))


def test_eager_0d_results_are_0d_values():
    # NumPy tells a scalar (x[1, 2]) from a 0-d array (x[1, 2, ...]); funcgrad, as JAX, does not
    x = np.arange(6.0).reshape(2, 3)
    for out in (getitem(x, (1, 2)), getitem(x, (1, 2, Ellipsis)), getitem(np.asarray(2.0), ()),
                getitem(np.asarray(2.0), Ellipsis), fnp.take(x, 4)):
        assert type(out) is fg.Array and out.shape == () and not out.flags.writeable


# --- what the IR looks like ---------------------------------------------------------------

def test_static_basic_indexing_is_slice_rev_reshape():
    closed = _run(lambda x: x[::-2, 1], np.zeros((5, 3)))
    assert _prims(closed) == ["slice", "rev", "reshape"]
    text = str(closed)
    assert "strides=(2, 1)" in text


def test_traced_int_uses_dynamic_slice():
    closed = _run(lambda x, i: x[i, 1:], np.zeros((4, 3)), np.int64(0))
    prims = _prims(closed)
    assert "dynamic_slice" in prims and "gather" not in prims


def test_arrays_use_gather():
    closed = _run(lambda x, i: x[i], np.zeros((4, 3)), np.array([0, 2]))
    assert "gather" in _prims(closed)
    closed = _run(lambda x: x[[0, 2], 1:], np.zeros((4, 3)))
    assert "gather" in _prims(closed)


def test_tracer_at_in_make_jaxpr():
    x = np.arange(6.0)
    closed = _run(lambda x: x.at[0].set(5.0), x)
    assert _prims(closed)[-1] == "dynamic_update_slice"
    np.testing.assert_array_equal(fg.eval_closed_jaxpr(closed, x)[0], [5.0, 1, 2, 3, 4, 5])

    closed = _run(lambda x: x.at[1:3].add(1.0), x)
    assert set(_prims(closed)) >= {"slice", "add", "dynamic_update_slice"} and "scatter" not in _prims(closed)

    closed = _run(lambda x: x.at[::2].set(0.0), x)
    assert "scatter" in _prims(closed) and "iota" in _prims(closed)
    np.testing.assert_array_equal(fg.eval_closed_jaxpr(closed, x)[0], [0.0, 1, 0, 3, 0, 5])

    closed = _run(lambda x, i: x.at[i].multiply(2.0), x, np.array([1, 1]))
    assert "scatter" in _prims(closed)
    np.testing.assert_array_equal(fg.eval_closed_jaxpr(closed, x, np.array([1, 1]))[0], [0.0, 4, 2, 3, 4, 5])

    closed = _run(lambda x: x.at[[4, 0]].get(), x)
    assert "gather" in _prims(closed)


def test_tracer_methods_take_and_nonzero():
    x = np.arange(6.0).reshape(2, 3)
    closed = _run(lambda x: x.take(np.array([2, 0]), axis=1), x)
    np.testing.assert_array_equal(fg.eval_closed_jaxpr(closed, x)[0], x[:, [2, 0]])
    with pytest.raises(DataDependentShapeError) as info:
        fg.make_jaxpr(lambda x: x.nonzero())(x)
    assert isinstance(info.value, ConcretizationError)
    assert "depends on the values" in str(info.value)
    for fn in (fnp.argwhere, fnp.flatnonzero):
        with pytest.raises(ConcretizationError):
            fg.make_jaxpr(fn)(x)


# --- eager at[] is functional ----------------------------------------------------------------

def test_eager_at_does_not_mutate():
    x = np.arange(3.0)
    y = fnp.at(x)[0].set(5.0)
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])
    assert isinstance(y, np.ndarray) and y is not x
    np.testing.assert_array_equal(y, [5.0, 1.0, 2.0])
    for kind in ("add", "subtract", "multiply", "divide", "power", "min", "max"):
        getattr(fnp.at(x)[[0, 0]], kind)(2.0)
        getattr(fnp.at(x)[::2], kind)(2.0)
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])


def test_at_casts_and_checks():
    x = np.arange(4)
    out = fnp.at(x)[1].set(2.9)
    assert out.dtype == np.int64 and out[1] == 2
    with pytest.raises(TypeError, match="floating-point"):
        fnp.at(x)[1].divide(2)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        fnp.at(np.zeros((2, 3)))[0].set(np.ones(2))
    assert repr(fnp.at(np.zeros(2))[0]).startswith("_IndexUpdateRef(")


def test_at_on_lists_and_scalars():
    np.testing.assert_array_equal(fnp.at([1.0, 2.0])[1].add(1.0), [1.0, 3.0])
    assert fnp.at(2.0)[()].set(3.0) == 3.0
