"""Differential fuzzing of compiled code: random programs (eager vs jit) and
out-of-range dynamic indices (no crash; JAX's clamp/drop semantics, as the eager impls)."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import lax

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

UNARY = [lax.sin, lax.cos, lax.tanh, lax.exp, lax.neg, lax.abs, lax.floor, lax.atan, lax.sinh, lax.expm1, lax.sign]
BINARY = [lax.add, lax.sub, lax.mul, lax.div, lax.max, lax.min, lax.atan2, lax.pow]
SHAPES = [(), (1,), (7,), (3, 4), (2, 1, 5), (0, 3)]


def _program(ops, n_inputs):
    """Build f(*inputs) from a list of op codes over a growing value stack."""

    def f(*xs):
        vals = list(xs)
        for kind, a, b, c in ops:
            x, y = vals[a % len(vals)], vals[b % len(vals)]
            if kind == 0:
                vals.append(UNARY[c % len(UNARY)](x))
            elif kind == 1:
                vals.append(BINARY[c % len(BINARY)](x, y))
            elif kind == 2:
                vals.append(lax.select(lax.lt(x, y), x, lax.mul(y, y)))
            else:
                vals.append(lax.convert_element_type(lax.convert_element_type(x, np.float32), np.float64))
        out = vals[-1]
        return out, lax.reduce_sum(out, tuple(range(np.ndim(out) if not hasattr(out, "ndim") else out.ndim)))

    return f


op_strategy = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 20), st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=25)


@SETTINGS
@given(ops=op_strategy, shape_i=st.integers(0, len(SHAPES) - 1), seed=st.integers(0, 2**16))
def test_random_elementwise_programs_eager_vs_jit(ops, shape_i, seed):
    shape = SHAPES[shape_i]
    rng = np.random.default_rng(seed)
    xs = [rng.uniform(-2, 2, size=shape) for _ in range(3)]
    f = _program(ops, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        eager = f(*xs)
        compiled = fg.jit(f)(*xs)
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=1e-12, atol=1e-300, equal_nan=True)


index_values = st.lists(st.one_of(st.integers(-(2**62), 2**62), st.integers(-12, 12)), min_size=1, max_size=8)


@SETTINGS
@given(idx=index_values, start=st.one_of(st.integers(-(2**62), 2**62), st.integers(-9, 9)))
def test_out_of_range_indices_never_crash_and_follow_documented_modes(idx, start):
    x = np.arange(30.0).reshape(6, 5)
    rows = np.array(idx, np.int64).reshape(-1, 1)
    s = np.int64(start)
    progs = {
        "gather_clip": lambda x, i: lax.gather(x, i, mode="clip"),
        "gather_fill": lambda x, i: lax.gather(x, i, mode="fill"),
        "scatter_add_drop": lambda x, i: lax.scatter(x, i, lax.broadcast_in_dim(np.float64(1.0), (i.shape[0], 5), ()), "add", "drop"),
        "scatter_set_clip": lambda x, i: lax.scatter(x, i, lax.broadcast_in_dim(np.float64(-1.0), (i.shape[0], 5), ()), "set", "clip"),
    }
    for name, f in progs.items():
        eager = f(x, rows)
        compiled = fg.jit(f)(x, rows)
        np.testing.assert_array_equal(np.asarray(compiled), np.asarray(eager), err_msg=name)
    ds = lambda x, s: lax.dynamic_slice(x, [s, np.int64(1)], [3, 2])  # noqa: E731
    np.testing.assert_array_equal(fg.jit(ds)(x, s), ds(x, s))
    dus = lambda x, s: lax.dynamic_update_slice(x, np.full((2, 2), -7.0), [s, s])  # noqa: E731
    np.testing.assert_array_equal(fg.jit(dus)(x, s), dus(x, s))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_division_edge_cases_compiled(dtype):
    info = np.iinfo(dtype)
    x = np.array([7, -7, info.min, info.min, info.max, 0, 5], dtype)
    y = np.array([0, 2, -1, 2, -1, 0, -3], dtype)
    for f in (lax.div, lax.rem):
        np.testing.assert_array_equal(fg.jit(f)(x, y), f(x, y))
