"""funcgrad.numpy shape functions: error cases and messages, static-argument checks,
tracer methods and staged programs (the op table covers the values)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors

AxisError = np.exceptions.AxisError


def staged(fun, *args):
    """Evaluate ``fun`` through make_jaxpr (type-checked), returning (jaxpr, outputs)."""
    closed = fg.make_jaxpr(fun)(*args)
    fg.check_jaxpr(closed)
    return closed, fg.eval_closed_jaxpr(closed, *args)


# --- reshape -----------------------------------------------------------------------------
def test_reshape_size_mismatch_names_function_and_shapes():
    with pytest.raises(ValueError) as info:
        fnp.reshape(np.ones((2, 3)), (4,))
    msg = str(info.value)
    assert "reshape" in msg and "(2, 3)" in msg and "(4,)" in msg


def test_reshape_size_mismatch_when_traced():
    with pytest.raises(ValueError, match=r"reshape.*\(2, 3\).*\(4, -1\)"):
        fg.make_jaxpr(lambda x: fnp.reshape(x, (4, -1)))(np.ones((2, 3)))


def test_reshape_two_unknown_dimensions():
    with pytest.raises(ValueError, match="one unknown dimension"):
        fnp.reshape(np.ones(6), (-1, -1))


def test_reshape_shape_must_be_static():
    with pytest.raises(errors.ConcretizationError):
        fg.make_jaxpr(lambda x, n: fnp.reshape(x, (n, -1)))(np.ones(6), 2)


def test_reshape_order_f_rejected():
    with pytest.raises(NotImplementedError, match="order"):
        fnp.reshape(np.ones(6), (2, 3), order="F")


# --- concatenate / stack -----------------------------------------------------------------
def test_concatenate_mismatch_names_function_axis_and_shapes():
    with pytest.raises(ValueError) as info:
        fnp.concatenate([np.ones((2, 2)), np.ones((3, 3))])
    msg = str(info.value)
    assert "concatenate" in msg and "axis 0" in msg and "(2, 2)" in msg and "(3, 3)" in msg


def test_concatenate_mismatch_when_traced():
    with pytest.raises(ValueError, match=r"concatenate.*axis 1.*\(2, 2\).*\(3, 1\)"):
        fg.make_jaxpr(lambda x, y: fnp.concatenate([x, y], axis=-1))(np.ones((2, 2)), np.ones((3, 1)))


def test_concatenate_rank_mismatch():
    with pytest.raises(ValueError, match=r"concatenate: .*same number of dimensions.*\(2,\).*\(2, 2\)"):
        fnp.concatenate([np.ones(2), np.ones((2, 2))])


def test_concatenate_zero_d_and_empty_list():
    with pytest.raises(ValueError, match="zero-dimensional"):
        fnp.concatenate([np.float64(1), np.float64(2)])
    with pytest.raises(ValueError, match="need at least one array"):
        fnp.concatenate([])


def test_concatenate_bad_axis_is_axis_error():
    with pytest.raises(AxisError):
        fnp.concatenate([np.ones((2, 2)), np.ones((2, 2))], axis=2)


def test_concatenate_dtype_casting_rule():
    with pytest.raises(TypeError, match="same_kind"):
        fnp.concatenate([np.ones(2), np.ones(2)], dtype=np.int64)
    out = fnp.concatenate([np.ones(2), np.ones(2)], dtype=np.int64, casting="unsafe")
    assert out.dtype == np.int64


def test_concatenate_out_rejected():
    with pytest.raises(NotImplementedError, match="out"):
        fnp.concatenate([np.ones(2)], out=np.empty(2))


def test_concatenate_traced_array_argument_iterates_rows():
    x = np.arange(6.0).reshape(2, 3)
    _, (out,) = staged(lambda x: fnp.concatenate(x), x)
    np.testing.assert_array_equal(out, np.concatenate(x))
    _, (out,) = staged(lambda x: fnp.stack(x, axis=1), x)
    np.testing.assert_array_equal(out, np.stack(x, axis=1))


def test_stack_shape_mismatch():
    with pytest.raises(ValueError, match=r"stack: all input arrays must have the same shape.*\(2,\).*\(3,\)"):
        fnp.stack([np.ones(2), np.ones(3)])
    with pytest.raises(ValueError, match="need at least one array"):
        fnp.stack([])
    with pytest.raises(AxisError):
        fnp.stack([np.ones(2), np.ones(2)], axis=3)


def test_vstack_hstack_name_themselves():
    with pytest.raises(ValueError, match="vstack"):
        fnp.vstack([np.ones(2), np.ones(3)])
    with pytest.raises(ValueError, match="hstack"):
        fnp.hstack([np.ones((2, 1)), np.ones((3, 1))])


def test_concatenate_python_scalars_are_not_weak():
    # NumPy converts list elements to arrays first: a Python float gives float64.
    out = fnp.stack([np.float32(1), 2.0])
    assert out.dtype == np.stack([np.float32(1), 2.0]).dtype
    out = fnp.append(np.ones(2, np.int32), 1.5)
    assert out.dtype == np.append(np.ones(2, np.int32), 1.5).dtype


# --- axes --------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda x: fnp.transpose(x, (0, 3)),
    lambda x: fnp.swapaxes(x, 0, 2),
    lambda x: fnp.moveaxis(x, -3, 0),
    lambda x: fnp.squeeze(x, 2),
    lambda x: fnp.expand_dims(x, 4),
    lambda x: fnp.flip(x, -3),
    lambda x: fnp.roll(x, 1, 2),
    lambda x: fnp.diagonal(x, 0, 0, 2),
    lambda x: fnp.repeat(x, 2, axis=2),
    lambda x: fnp.split(x, 2, axis=2),
    lambda x: fnp.array_split(x, 2, axis=-3),
    lambda x: fnp.size(x, 2),
    lambda x: fnp.trace(x, 0, 0, 5),
], ids=lambda c: "")
def test_bad_axis_raises_numpy_axis_error(call):
    with pytest.raises(AxisError):
        call(np.ones((2, 2)))


def test_transpose_bad_permutation():
    with pytest.raises(ValueError, match="don't match"):
        fnp.transpose(np.ones((2, 3)), (0,))
    with pytest.raises(ValueError, match="repeated axis"):
        fnp.transpose(np.ones((2, 3)), (0, 0))


def test_moveaxis_errors():
    with pytest.raises(ValueError, match="same number of elements"):
        fnp.moveaxis(np.ones((2, 3)), 0, (0, 1))
    with pytest.raises(ValueError, match="repeated axis"):
        fnp.moveaxis(np.ones((2, 3)), (0, 0), (0, 1))


def test_squeeze_non_unit_axis():
    with pytest.raises(ValueError, match="squeeze: cannot select an axis to squeeze out which has size not equal to one"):
        fnp.squeeze(np.ones((2, 1)), 0)


def test_expand_dims_repeated_axis():
    with pytest.raises(ValueError, match="repeated axis"):
        fnp.expand_dims(np.ones(2), (0, 0))


# --- split ---------------------------------------------------------------------------------
def test_split_unequal_division():
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        fnp.split(np.ones(5), 2)
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        fg.make_jaxpr(lambda x: fnp.split(x, 3, axis=1))(np.ones((2, 4)))


def test_array_split_needs_positive_sections():
    with pytest.raises(ValueError, match="number sections must be larger than 0"):
        fnp.array_split(np.ones(3), 0)


def test_split_returns_list_and_sections_must_be_static():
    parts = fnp.split(np.arange(6.0), 3)
    assert isinstance(parts, list) and len(parts) == 3
    with pytest.raises(errors.ConcretizationError):
        fg.make_jaxpr(lambda x, n: fnp.split(x, n))(np.ones(4), 2)


def test_split_traced_outputs():
    x = np.arange(12.0).reshape(3, 4)
    _, outs = staged(lambda x: fnp.array_split(x, 3, axis=1), x)
    for got, want in zip(outs, np.array_split(x, 3, axis=1)):
        np.testing.assert_array_equal(got, want)


# --- repeat / tile / broadcast -------------------------------------------------------------
def test_repeat_errors():
    with pytest.raises(ValueError, match="negative"):
        fnp.repeat(np.ones(3), -1)
    with pytest.raises(ValueError, match="broadcast"):
        fnp.repeat(np.ones(3), [1, 2])
    with pytest.raises(TypeError, match="integers"):
        fnp.repeat(np.ones(3), 1.5)
    with pytest.raises(errors.ConcretizationError, match="repeats"):
        fg.make_jaxpr(lambda x, r: fnp.repeat(x, r))(np.ones(3), 2)


def test_tile_negative_reps():
    with pytest.raises(ValueError, match="negative"):
        fnp.tile(np.ones(3), -1)


def test_broadcast_to_errors():
    with pytest.raises(ValueError, match=r"broadcast_to: .*\(3,\).*\(4,\)"):
        fnp.broadcast_to(np.ones(3), (4,))
    with pytest.raises(ValueError, match="broadcast_to"):
        fnp.broadcast_to(np.ones((2, 3)), (3,))
    with pytest.raises(ValueError, match="non-negative"):
        fnp.broadcast_to(np.ones(1), (-1,))


def test_broadcast_arrays_error_and_list():
    with pytest.raises(ValueError, match=r"broadcast_arrays.*\(3,\).*\(4,\)"):
        fnp.broadcast_arrays(np.ones(3), np.ones(4))
    out = fnp.broadcast_arrays(np.ones(3), 1.0)
    assert isinstance(out, list) and out[1].shape == (3,)  # as JAX and the array API (NumPy: tuple)


# --- flips, roll, rot90 --------------------------------------------------------------------
def test_flip_rank_requirements():
    with pytest.raises(ValueError, match=">= 2-d"):
        fnp.fliplr(np.ones(3))
    with pytest.raises(ValueError, match=">= 1-d"):
        fnp.flipud(np.float64(1.0))


def test_roll_errors():
    with pytest.raises(ValueError, match="scalars or 1D"):
        fnp.roll(np.ones((2, 2)), [[1]], axis=0)
    with pytest.raises(ValueError, match="roll"):
        fnp.roll(np.ones((2, 2)), (1, 2, 3), axis=(0, 1))
    with pytest.raises(TypeError, match="integer"):
        fg.make_jaxpr(lambda x, s: fnp.roll(x, s, 0))(np.ones(3), 1.5)


def test_roll_traced_shift_uses_dynamic_slice():
    x = np.arange(10.0).reshape(2, 5)
    for s in (-12, -5, -1, 0, 3, 5, 17):
        closed, (out,) = staged(lambda x, s: fnp.roll(x, s, axis=1), x, np.int64(s))
        np.testing.assert_array_equal(out, np.roll(x, s, axis=1))
    assert "dynamic_slice" in str(closed)
    shifts = np.array([1, -2])
    _, (out,) = staged(lambda x, s: fnp.roll(x, s, axis=(0, 1)), x, shifts)
    np.testing.assert_array_equal(out, np.roll(x, (1, -2), axis=(0, 1)))


def test_rot90_errors():
    with pytest.raises(ValueError, match="len\\(axes\\) must be 2"):
        fnp.rot90(np.ones((2, 2)), axes=(0,))
    with pytest.raises(ValueError, match="Axes must be different"):
        fnp.rot90(np.ones((2, 2)), axes=(1, 1))
    with pytest.raises(ValueError, match="out of range"):
        fnp.rot90(np.ones((2, 2)), axes=(0, 3))


# --- diagonal, trace -----------------------------------------------------------------------
def test_diagonal_errors():
    with pytest.raises(ValueError, match="at least two dimensions"):
        fnp.diagonal(np.ones(3))
    with pytest.raises(ValueError, match="cannot be the same"):
        fnp.diagonal(np.ones((2, 2)), 0, 1, -1)


def test_diagonal_needs_no_gather_and_handles_all_offsets():
    x = np.arange(60.0).reshape(3, 4, 5)
    for off in range(-6, 7):
        for a1, a2 in ((0, 1), (2, 0), (-1, 1)):
            closed, (out,) = staged(lambda x: fnp.diagonal(x, off, a1, a2), x)
            np.testing.assert_array_equal(out, np.diagonal(x, off, a1, a2))
            assert "gather" not in str(closed)


def test_trace_dtype_rules():
    assert fnp.trace(np.ones((2, 2), np.int32)).dtype == np.int64
    assert fnp.trace(np.ones((2, 2), bool)).dtype == np.int64
    out = fnp.trace(np.eye(2, dtype=bool), dtype=bool)
    assert out.dtype == np.bool_ and out == np.trace(np.eye(2, dtype=bool), dtype=bool)
    out = fnp.trace(np.ones((2, 2)))  # a 0-d value (NumPy: a NumPy scalar)
    assert type(out) is fg.Array and out.shape == () and out.dtype == np.float64


# --- pad ------------------------------------------------------------------------------------
# (the other modes are implemented in numpy_api/padding.py; tests/op_rows/padding.py)
def test_pad_errors():
    with pytest.raises(ValueError, match="not supported"):
        fnp.pad(np.ones(3), 1, mode="nonsense")
    with pytest.raises(ValueError, match="negative"):
        fnp.pad(np.ones(3), -1)
    with pytest.raises(TypeError, match="integral"):
        fnp.pad(np.ones(3), 1.5)
    with pytest.raises(ValueError, match="pad_width"):
        fnp.pad(np.ones((2, 2)), ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(ValueError, match="unsupported keyword"):
        fnp.pad(np.ones(3), 1, foo=1)
    with pytest.raises(errors.ConcretizationError):
        fg.make_jaxpr(lambda x, w: fnp.pad(x, w))(np.ones(3), 1)


# --- metadata, methods, misc ----------------------------------------------------------------
def test_metadata_functions_on_tracers():
    seen = []

    def f(x):
        seen.append((fnp.shape(x), fnp.ndim(x), fnp.size(x), fnp.size(x, -1), fnp.size(x, (0, 1))))
        return x

    fg.make_jaxpr(f)(np.ones((2, 3)))
    assert seen == [((2, 3), 2, 6, 3, 6)]
    assert fnp.shape([[1, 2, 3]]) == (1, 3) and fnp.ndim(1.0) == 0 and fnp.size([]) == 0


def test_tracer_methods_use_shape_functions():
    x = np.arange(24.0).reshape(2, 3, 4)

    def f(x):
        return (x.T, x.mT, x.reshape(4, 6), x.reshape((-1,)), x.transpose(1, 0, 2), x.ravel(),
                x.swapaxes(0, 2), x[None].squeeze(0) if False else x.squeeze(), x.diagonal(1, 1, 2),
                x.trace(), x.repeat(2, axis=1))

    _, outs = staged(f, x)
    want = (x.T, np.swapaxes(x, -1, -2), x.reshape(4, 6), x.reshape(-1), x.transpose(1, 0, 2), x.ravel(),
            x.swapaxes(0, 2), x.squeeze(), x.diagonal(1, 1, 2), x.trace(), x.repeat(2, axis=1))
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w)


def test_copy_is_a_fresh_array():
    x = np.arange(3.0)
    y = fnp.copy(x)
    assert y is not x and not np.shares_memory(x, y)
    np.testing.assert_array_equal(x, y)


def test_atleast_with_no_or_many_arguments():
    assert fnp.atleast_1d() == ()
    out = fnp.atleast_2d(1.0, [1, 2])
    assert isinstance(out, tuple) and [o.shape for o in out] == [(1, 1), (1, 2)]


def test_non_array_arguments_rejected():
    with pytest.raises(TypeError, match="reshape"):
        fnp.reshape("abc", (3,))
    with pytest.raises(TypeError, match="concatenate"):
        fnp.concatenate([np.ones(2), None])
