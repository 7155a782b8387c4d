"""0-d results have one type: a read-only 0-d ``funcgrad.Array`` (as JAX's 0-d ``Array``),
from eager calls (general path, Python fast path, native fast entry), operators and
indexing on values, transforms and ``jit`` (native entry and Python path). They carry
what JAX users call on results (``block_until_ready``, ``item``, ``astype``, ...) and
behave as numbers (``float(x)``, formatting, comparisons)."""
import pickle

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.array import Array
from funcgrad.numpy_api import eager_native
from funcgrad.transforms.jit import JittedFunction


def _is_0d_value(x, dtype=np.float64):
    return type(x) is Array and x.shape == () and x.dtype == dtype and not x.flags.writeable


def test_block_until_ready_on_jit_and_value_and_grad_results():
    # The first line of every JAX user's timing code: it raised AttributeError.
    f = lambda x: (x ** 2).sum()  # noqa: E731
    jf = fg.jit(f)
    for _ in range(4):  # first calls (Python path), then the native entry's plans
        out = jf(np.ones(3))
        assert _is_0d_value(out) and out.block_until_ready() is out and out == 3.0
    assert JittedFunction._call(jf, np.ones(3)).block_until_ready() == 3.0  # the Python path itself
    val, g = fg.value_and_grad(f)(np.ones(3))
    assert _is_0d_value(val) and val.block_until_ready() is val and val == 3.0
    assert type(g) is Array and g.block_until_ready() is g


@pytest.mark.parametrize("native", [False, True])
def test_eager_0d_results(native):
    if native and not eager_native.enable():
        pytest.skip("no native eager entry here")
    v = np.arange(3.0)
    cases = [
        lambda: fnp.sum(v), lambda: fnp.mean(v), lambda: fnp.max(v), lambda: fnp.dot(v, v),
        lambda: fnp.matmul(v, v), lambda: fnp.sin(1.0), lambda: fnp.sin(np.float64(1.0)),
        lambda: fnp.add(np.array(1.0), np.array(2.0)), lambda: fnp.where(True, 1.0, 2.0),
        lambda: fnp.linalg.det(np.eye(2)), lambda: fnp.asarray(2.0), lambda: fnp.zeros(()),
    ]
    for case in cases:
        for _ in range(3):  # (the native entry takes a call once its plan is set)
            out = case()
            assert _is_0d_value(out), (case, type(out))
    assert _is_0d_value(fnp.sum(np.arange(3)), np.int64)
    assert _is_0d_value(fnp.greater(v, 1.0)[0], np.bool_)


def test_operators_and_indexing_on_values_give_0d_values():
    x = fnp.asarray(np.arange(3.0))
    s = fnp.sum(x)
    for out in (s * 2, 2 * s, np.float64(2) * s, -s, abs(s), s ** 2, s / s, x[0], x[-1], x[1, ...]):
        assert _is_0d_value(out), type(out)
    assert _is_0d_value(s > 0, np.bool_) and _is_0d_value(x[0] == 0, np.bool_)
    y = s
    y += 1  # rebinds, as with a jax.Array
    assert _is_0d_value(y) and y == 4.0 and s == 3.0


def test_transform_and_control_flow_0d_results():
    sq = lambda s: s ** 2  # noqa: E731
    for out in (fg.grad(sq)(3.0), fg.grad(sq)(np.float64(3.0)), fg.hessian(lambda s: s ** 3)(2.0),
                fg.vmap(lambda r: r.sum())(np.ones((2, 3)))[0], fg.jvp(sq, (2.0,), (1.0,))[1],
                fg.vjp(sq, 2.0)[0], lax.cond(True, lambda s: s + 1, lambda s: s, 1.0),
                lax.fori_loop(0, 3, lambda i, s: s + 1.0, 0.0), fg.random.normal(fg.random.PRNGKey(0)),
                fg.jit(lambda s: 1.0)(2.0), fg.jit(lambda s: s * 2)(2.0)):
        assert type(out) is Array and out.shape == () and not out.flags.writeable, type(out)
    w = lax.while_loop(lambda s: s < 2, lambda s: s + 1, 0)  # (a Python int carry: int64, as staged)
    assert _is_0d_value(w, np.int64) and w == 2


def test_0d_values_behave_as_numbers():
    s = fnp.sum(np.array([1.25, 2.0]))
    assert float(s) == 3.25 and int(s) == 3 and s.item() == 3.25 and type(s.item()) is float
    assert f"{s:.3f}" == "3.250" and str(s) == "3.25" and repr(s) == "Array(3.25)"
    assert s.tolist() == 3.25 and s == 3.25 and s != 3 and s > 3 and bool(s) and round(float(s), 1) == 3.2
    assert isinstance(s, np.ndarray) and np.isscalar(s) is False and fnp.isscalar(s) is True
    assert _is_0d_value(s.astype(np.float32), np.float32)
    n = fnp.sum(np.arange(4))
    assert list(range(10))[n] == 6 and range(n)[-1] == 5  # __index__ of an integer value
    assert pickle.loads(pickle.dumps(s)) == s and _is_0d_value(pickle.loads(pickle.dumps(s)))
    with pytest.raises(TypeError, match="unhashable"):  # as a jax.Array
        hash(s)
    assert sorted([fnp.sum(np.ones(3)), s, fnp.sum(np.ones(1))]) == [1.0, 3.0, 3.25]


def test_at_on_jit_results():
    out = fg.jit(lambda x: x * 2.0)(np.arange(3.0))
    np.testing.assert_array_equal(out.at[0].set(7.0), [7.0, 2.0, 4.0])
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def test_advanced_index_results_are_read_only_values():
    # (NumPy's fancy index gives a fresh writeable array of the subclass: a value too now)
    x = fnp.asarray(np.arange(6.0))
    for out in (x[[0, 2]], x[x > 2]):
        assert type(out) is Array and not out.flags.writeable


def test_iterating_a_value_is_numpys_protocol():
    # list(x)/set(x)/for v in x on a 1-d value give NumPy scalars, as on a NumPy array
    # (hashable: NumPy-facing code keys dicts and sets with them); rows of n-d values are values.
    x = fg.jit(lambda v: v * 2.0)(np.arange(3.0))
    assert [type(v) for v in x] == [np.float64] * 3 and set(x) == {0.0, 2.0, 4.0}
    assert all(type(r) is Array and not r.flags.writeable for r in fnp.ones((2, 3)))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(fnp.sum(x))
