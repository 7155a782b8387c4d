"""Eager results are values (issue #12, DESIGN §1): read-only ``funcgrad.Array``s (a thin
``numpy.ndarray`` subclass) that never alias memory the user can still write, with
``.at``, ``block_until_ready`` and indexing by a traced value; NumPy operations on them
give plain, writeable ndarrays."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors, lax

# --- no aliasing of user-writeable memory -------------------------------------------------

ALIASING_CALLS = {
    "asarray": fnp.asarray,
    "array_copy_false": lambda b: fnp.array(b, copy=False),
    "ravel": fnp.ravel,
    "squeeze": fnp.squeeze,
    "transpose": fnp.transpose,
    "stack_one": lambda b: fnp.stack([b])[0],
    "concatenate_one": lambda b: fnp.concatenate([b]),
    "reshape_same": lambda b: fnp.reshape(b, b.shape),
    "reshape": lambda b: fnp.reshape(b, (1, -1)),
    "reshape_keyword": lambda b: fnp.reshape(b, shape=b.shape),
    "nan_scalar": lambda b: fnp.where(fnp.isnan(fnp.add(b, float("nan"))), b, 0.0),
    "slice": lambda b: b[1:] if isinstance(b, fg.Array) else fnp.indexing.getitem(b, slice(1, None)),
    "broadcast_to": lambda b: fnp.broadcast_to(b, (2,) + b.shape),
    "expand_dims": lambda b: fnp.expand_dims(b, 0),
    "astype_same": lambda b: fnp.asarray(b, dtype=b.dtype),
    "positive": fnp.positive,
    "lax_reshape": lambda b: lax.reshape(b, (1, 3)),
    "jit_identity": fg.jit(lambda b: b),
    "vmap_sin": fg.vmap(fnp.sin),
}


@pytest.mark.parametrize("name", sorted(ALIASING_CALLS))
def test_results_never_change_when_the_input_buffer_is_mutated(name):
    buf = np.array([1.0, 2.0, 3.0])
    out = ALIASING_CALLS[name](buf)
    before = np.array(out, copy=True)
    buf[...] = -7.0
    np.testing.assert_array_equal(out, before)
    assert not out.flags.writeable
    assert not np.shares_memory(out, buf)


def test_snapshots_of_an_in_place_solver_are_distinct():
    state = np.zeros(3)
    snapshots = []
    for k in range(3):
        state += 1.0  # the user's in-place update of their own buffer
        snapshots.append(fnp.ravel(state))
    np.testing.assert_array_equal(np.stack(snapshots), [[1, 1, 1], [2, 2, 2], [3, 3, 3]])


def test_results_are_read_only():
    out = fnp.sin(np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="read-only"):
        out[0] = 1.0
    with pytest.raises(ValueError):
        out.flags.writeable = True
    with pytest.raises(ValueError, match="read-only"):
        np.add(out, 1.0, out=out)


def test_views_of_funcgrad_results_stay_zero_copy():
    a = fnp.sin(np.arange(6.0))
    for view in (fnp.reshape(a, (2, 3)), fnp.ravel(a), a[1:], fnp.transpose(fnp.reshape(a, (2, 3))),
                 fnp.broadcast_to(a, (4, 6)), fnp.asarray(a)):
        assert np.shares_memory(view, a)
        assert not view.flags.writeable


def test_creation_results_are_values_and_not_copied_again():
    z = fnp.zeros((2, 3))
    assert type(z) is fg.Array and not z.flags.writeable
    assert type(fnp.arange(4)) is fg.Array and type(fnp.eye(2)) is fg.Array


def test_jit_output_does_not_alias_a_closed_over_constant():
    c = np.array([1.0, 2.0])
    out = fg.jit(lambda x: c)(0.0)
    c[0] = 100.0
    np.testing.assert_array_equal(out, [1.0, 2.0])
    assert type(out) is fg.Array and not out.flags.writeable


def test_grad_outputs_are_values_and_aux_does_not_alias_the_input():
    buf = np.array([1.0, 2.0, 3.0])
    (val, aux), g = fg.value_and_grad(lambda w: (fnp.sum(w ** 2), fnp.reshape(w, (3,))), has_aux=True)(buf)
    buf[0] = 50.0
    np.testing.assert_array_equal(aux, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(g, [2.0, 4.0, 6.0])
    assert type(g) is fg.Array and not g.flags.writeable and not aux.flags.writeable
    assert type(val) is fg.Array and val.shape == () and not val.flags.writeable


# --- the Array subclass ---------------------------------------------------------------------

def test_results_are_ndarrays_of_the_array_subclass():
    x = fnp.tanh(np.array([0.5, -0.5]))
    assert isinstance(x, np.ndarray) and type(x) is fg.Array
    assert x.block_until_ready() is x
    s = fnp.sum(x)  # 0-d results are 0-d values
    assert type(s) is fg.Array and s.shape == () and s.block_until_ready() is s
    for v in (x[0], fnp.sin(0.5)):  # scalar indexing and Python scalar arguments too
        assert type(v) is fg.Array and v.shape == () and v.dtype == np.float64 and not v.flags.writeable


def test_operators_on_values_give_values_like_jax_arrays():
    # (a * b).at[i].set(v) is everyday JAX code; found by the fuzzer as an AttributeError.
    x = fnp.cos(np.array([0.0, 1.0, 2.0]))
    for y in (x + 1, 1 + x, x * x, x - x, -x, abs(x), x ** 2, x / 2, x // 1, x % 1, x @ x[:, None], x > 0):
        assert type(y) is fg.Array and not y.flags.writeable, type(y)
    np.testing.assert_array_equal((x * x).at[0].set(5.0), [5.0, np.cos(1.0) ** 2, np.cos(2.0) ** 2])
    y = x
    y += 1  # rebinds y to a new value, as with jax.Array; x is unchanged
    assert type(y) is fg.Array and y is not x
    np.testing.assert_array_equal(x, np.cos([0.0, 1.0, 2.0]))


def test_numpy_functions_give_plain_writeable_arrays():
    x = fnp.cos(np.array([0.0, 1.0, 2.0]))
    for y in (np.sin(x), np.add(x, 1), np.exp(x), x.copy(), np.copy(x), copy.copy(x), copy.deepcopy(x),
              np.where(x > 0, x, 0.0), np.concatenate([x, x]), x.reshape(3, 1).sum(axis=1)):
        assert type(y) is np.ndarray, type(y)
        assert y.flags.writeable
        y[...] = 0.0  # the user's own array
    assert isinstance(x.sum(), np.float64)
    np.testing.assert_array_equal(x, np.cos([0.0, 1.0, 2.0]))


def test_pickle_round_trip_keeps_a_value():
    x = fnp.sin(np.arange(3.0))
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is fg.Array and not y.flags.writeable
    np.testing.assert_array_equal(y, x)


def test_at_methods_on_eager_results():
    x = fnp.asarray(np.array([1.0, 2.0, 3.0, 4.0]))
    idx = np.array([0, 0, 2])
    np.testing.assert_array_equal(x.at[1].set(9.0), [1, 9, 3, 4])
    np.testing.assert_array_equal(x.at[idx].add(1.0), [3, 2, 4, 4])
    np.testing.assert_array_equal(x.at[idx].multiply(2.0), [4, 2, 6, 4])
    np.testing.assert_array_equal(x.at[idx].divide(2.0), [0.25, 2, 1.5, 4])
    np.testing.assert_array_equal(x.at[idx].power(2.0), [1, 2, 9, 4])
    np.testing.assert_array_equal(x.at[1:].min(2.5), [1, 2, 2.5, 2.5])
    np.testing.assert_array_equal(x.at[:2].max(1.5), [1.5, 2, 3, 4])
    np.testing.assert_array_equal(x.at[idx].get(), [1, 1, 3])
    # apply: like numpy.negative.at -- an index selected twice gets func twice
    np.testing.assert_array_equal(x.at[idx].apply(lambda v: v * 10.0), [100, 2, 30, 4])
    np.testing.assert_array_equal(x, [1, 2, 3, 4])  # x itself never changes


def test_at_accepts_jax_keywords():
    x = fnp.asarray(np.array([1.0, 2.0, 3.0]))
    kw = dict(indices_are_sorted=True, unique_indices=True)
    np.testing.assert_array_equal(x.at[1].set(5.0, mode="drop", **kw), [1, 5, 3])
    np.testing.assert_array_equal(x.at[1].add(5.0, mode="promise_in_bounds", **kw), [1, 7, 3])
    assert x.at[2].get(mode="clip", fill_value=0.0, **kw) == 3.0
    np.testing.assert_array_equal(x.at[0].apply(fnp.negative, **kw), [-1, 2, 3])


def test_at_apply_with_a_traced_index():
    x = fnp.asarray(np.array([1.0, 2.0, 3.0]))
    f = fg.jit(lambda i: x.at[i].apply(fnp.exp, unique_indices=True))
    np.testing.assert_allclose(f(1), [1.0, np.exp(2.0), 3.0])
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        fg.jit(lambda i: x.at[i].apply(fnp.exp))(1)


def test_tracer_at_has_apply_and_keywords():
    f = fg.jit(lambda x: x.at[np.array([1, 1])].apply(lambda v: v + 1.0, indices_are_sorted=True))
    np.testing.assert_array_equal(f(np.zeros(3)), [0.0, 2.0, 0.0])


# --- indexing a closed-over Array with a traced value ---------------------------------------

def test_issue_repro_fori_loop_indexes_a_closed_over_result():
    a = np.array([0.3, -1.2, 0.8])
    v = fnp.tanh(a)
    out = lax.fori_loop(0, 2, lambda i, c: c + v[fnp.argmax(v)], 0.0)
    assert out == pytest.approx(2 * np.tanh(0.8))


def test_closed_over_table_indexed_under_transforms():
    table = fnp.exp(np.array([0.0, 1.0, 2.0]))
    assert fg.jit(lambda i: table[i])(2) == pytest.approx(np.exp(2.0))
    np.testing.assert_allclose(fg.vmap(lambda i: table[i])(np.array([2, 0])), np.exp([2.0, 0.0]))
    np.testing.assert_allclose(fg.jit(lambda i: table[i, None])(1), [np.e])
    assert fg.grad(lambda x: x * table[fnp.argmax(x * table)])(1.5) == pytest.approx(np.exp(2.0))
    np.testing.assert_allclose(table[1:], [np.e, np.exp(2.0)])  # concrete indices: NumPy's


def test_plain_numpy_table_indexed_by_a_tracer_says_wrap_with_asarray():
    table = np.arange(5.0)
    with pytest.raises((errors.TracerArrayConversionError, errors.TracerIntegerConversionError),
                       match=r"fnp\.asarray"):
        fg.jit(lambda i: table[i])(2)
    assert fg.jit(lambda i: fnp.asarray(table)[i])(2) == 2.0


# --- interop -------------------------------------------------------------------------------

def test_scipy_accepts_arrays_and_funcgrad_gradients():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    scipy_optimize = pytest.importorskip("scipy.optimize")
    a = fnp.asarray(np.array([[3.0, 1.0], [1.0, 2.0]]))
    b = fnp.ones(2)
    np.testing.assert_allclose(scipy_linalg.solve(a, b), np.linalg.solve(np.asarray(a), np.ones(2)))

    def loss(w):
        return fnp.sum((w - fnp.arange(3.0)) ** 2)

    res = scipy_optimize.minimize(loss, np.zeros(3), jac=fg.grad(loss), method="BFGS")
    assert res.success
    np.testing.assert_allclose(res.x, [0.0, 1.0, 2.0], atol=1e-6)


def test_arrays_feed_back_into_funcgrad_and_jit():
    x = fnp.sin(np.array([0.1, 0.2]))
    f = fg.jit(lambda v: v * 2.0)
    np.testing.assert_allclose(f(x), 2 * np.sin([0.1, 0.2]))
    np.testing.assert_allclose(f(x), f(np.asarray(x)))
    np.testing.assert_allclose(fg.grad(lambda v: fnp.sum(v * v))(x), 2 * np.asarray(x))


def test_numpy_scalar_operator_value_gives_a_value():
    # funcgrad's 0-d results are NumPy scalars; NumPy scalars do not defer to ndarray
    # subclasses, so ``s * x`` reaches Array.__array_ufunc__: it must give a value, as
    # ``x * s`` does (found by the fuzzer: ``(fnp.abs(-0.5) + 0.5) ** c).at[0]``).
    x = fnp.sin(np.arange(3.0))
    s = fnp.abs(-0.5) + 0.5
    for out in (s ** x, s * x, np.float32(2) * x, np.int64(2) - x, s < x):
        assert isinstance(out, fg.Array) and not out.flags.writeable
    np.testing.assert_array_equal((s ** x).at[0].set(5.0), [5.0, 1.0, 1.0])
    y = np.sin(x)  # NumPy functions still give the user plain, writeable arrays
    assert type(y) is np.ndarray
    y[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        np.sin(x, out=x)
