"""The native entry of the eager fast path (``numpy_api/eager_native.py``): it takes the
calls it should (primed plans), gives what the Python fast path gives, keeps NumPy's
error state as the user set it, and steps aside for keywords, other dtypes, funcgrad
values that are views and staging (in this thread or another)."""
import copy
import pickle
import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import trace
from funcgrad.core.array import Array
from funcgrad.lowering import dispatch
from funcgrad.numpy_api import eager_native

# (where the entry can be built it must be: a compilation error must fail, not skip)
pytestmark = pytest.mark.skipif(not (eager_native.POSSIBLE and dispatch.LAYOUT_OK), reason="no native entry here")


def test_entry_compiles():
    assert eager_native.enable(), eager_native._state.get("error")


def _fallbacks(fn, *args, times=20, **kwargs):
    """(result, how many of ``times`` calls reached the Python fast path)."""
    fn(*args, **kwargs)  # sets the plan
    orig, n = fn._cfg[0], [0]

    def counting(*a, **k):
        n[0] += 1
        return orig(*a, **k)

    fn._cfg[0] = counting
    try:
        for _ in range(times):
            out = fn(*args, **kwargs)
    finally:
        fn._cfg[0] = orig
    return out, n[0]


def test_primed_calls_stay_native():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    cases = [(fnp.add, (a, b), a + b), (fnp.sin, (a,), np.sin(a)), (fnp.where, (a > 1, a, b), np.where(a > 1, a, b)),
             (fnp.matmul, (np.eye(3), np.ones((3, 2))), np.ones((3, 2))), (fnp.less, (a, b), a < b),
             (fnp.add, (fnp.asarray(a), b), a + b)]
    for fn, args, want in cases:
        out, n = _fallbacks(fn, *args)
        assert n == 0, fn.__name__
        assert type(out) is Array and not out.flags.writeable and out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)


def test_concatenate_of_ndarrays_stays_native():
    a, b = np.arange(3.0), np.ones((2,))
    for seq in ([a, b], (a, b), [a]):
        out, n = _fallbacks(fnp.concatenate, seq)
        assert n == 0 and type(out) is Array and not out.flags.writeable
        np.testing.assert_array_equal(out, np.concatenate(seq))
        assert not np.shares_memory(out, a)
    for seq, kw in [([a, fnp.asarray(b)], {}), ([a, b.astype(np.float32)], {}), ([a, b], {"axis": 0}),
                    ([a.reshape(3, 1), np.ones((3, 2))], {"axis": 1}), ([a, [1.0]], {})]:
        out, n = _fallbacks(fnp.concatenate, seq, times=3, **kw)
        assert n == 3
        np.testing.assert_array_equal(out, fnp.concatenate.general(seq, **kw))
    for bad in ([np.ones((2, 2)), np.ones(3)], [np.array(1.0)], []):
        for _ in range(2):
            with pytest.raises((TypeError, ValueError), match="concatenate"):
                fnp.concatenate(bad)


def test_what_the_entry_leaves_to_python():
    a = np.arange(3.0)
    view = fnp.asarray(a)[1:]  # an Array whose base is an Array: the Python path unwraps it
    for fn, args, kwargs in [(fnp.add, (a, 1.0), {}), (fnp.add, (a, np.float64(1.0)), {}),
                             (fnp.matmul, (np.ones((2, 3, 3)), np.ones((3, 3))), {}),
                             (fnp.matmul, (), {"a": np.eye(2), "b": np.eye(2)}), (fnp.sin, (view,), {})]:
        out, n = _fallbacks(fn, *args, times=3, **kwargs)
        assert n == 3, fn.__name__
        np.testing.assert_array_equal(out, getattr(fn, "general")(*args, **kwargs))


def test_dtype_changes_and_scalars():
    for dt in (np.float64, np.float32, np.int32, np.float64):
        x = np.arange(4, dtype=dt)
        for _ in range(2):
            got, want = fnp.multiply(x, x), fnp.multiply.general(x, x)
            assert type(got) is Array and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    s = fnp.add(np.array(1.5), np.array(2.0))
    s = fnp.add(np.array(1.5), np.array(2.0))  # 0-d: a 0-d value (NumPy gives a scalar)
    assert type(s) is Array and s.shape == () and not s.flags.writeable and s == 3.5
    d = fnp.matmul(np.ones(3), np.ones(3))
    d = fnp.matmul(np.ones(3), np.ones(3))
    assert type(d) is Array and d.shape == () and not d.flags.writeable and d == 3.0
    w = fnp.where(np.array(True), np.array(1.0), np.array(2.0))
    w = fnp.where(np.array(True), np.array(1.0), np.array(2.0))
    assert type(w) is Array and w.shape == () and not w.flags.writeable


def test_errors_come_from_the_general_path():
    for _ in range(2):
        with pytest.raises(ValueError, match=r"add.*\(3,\).*\(4,\)"):
            fnp.add(np.ones(3), np.ones(4))
        with pytest.raises((TypeError, ValueError), match="matmul"):
            fnp.matmul(np.ones((2, 3)), np.ones((2, 3)))


def test_floating_point_errors_silenced_and_user_state_kept():
    zero = np.array([0.0, -1.0, 1e308])
    with np.errstate(all="raise"):
        for _ in range(3):
            np.testing.assert_array_equal(fnp.log(zero[:2]), [-np.inf, np.nan])
            np.testing.assert_array_equal(fnp.add(zero, zero), [0.0, -2.0, np.inf])
        assert np.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.log(zero[:1])
    with np.errstate(all="warn"), pytest.warns(RuntimeWarning):
        fnp.log(zero[:1])
        np.log(zero[:1])


def test_staging_is_counted_and_respected():
    c = np.arange(3.0)
    fnp.add(c, c), fnp.add(c, c)
    assert "add" in str(fg.make_jaxpr(lambda: fnp.add(c, c))())
    with pytest.raises(ZeroDivisionError):
        fg.make_jaxpr(lambda: 1 / 0)()
    assert trace.STAGING[0] == 0


def test_staging_in_another_thread():
    """While another thread stages, this thread's calls still run eagerly (the entry then
    reads the thread-local state), and that thread's calls are recorded."""
    c = np.arange(3.0)
    inside, release, seen = threading.Event(), threading.Event(), []

    def staged():
        inside.set()
        release.wait(10)
        return fnp.add(c, c)

    t = threading.Thread(target=lambda: seen.append(str(fg.make_jaxpr(staged)())))
    t.start()
    try:
        assert inside.wait(10)
        assert trace.STAGING[0] == 1
        for _ in range(3):
            out = fnp.add(c, c)
            assert type(out) is Array
            np.testing.assert_array_equal(out, 2 * c)
    finally:
        release.set()
        t.join(10)
    assert "add" in seen[0] and trace.STAGING[0] == 0


def test_looks_like_the_function():
    assert fnp.add.__name__ == "add" and fnp.add.__doc__ and fnp.add.eager_fast and fnp.add.general
    assert fnp.add.nin == 2 and float(fnp.add.reduce(np.arange(4.0))) == 6.0
    assert "add" in repr(fnp.add)
    assert pickle.loads(pickle.dumps(fnp.add)) is fnp.add and copy.deepcopy(fnp.sin) is fnp.sin
