"""How the eager native entry (``numpy_api/eager_native.py``) is called and how it keeps
NumPy's floating-point errors quiet: each ``EagerFunction`` is called through its own
vectorcall pointer (``enable(False)`` really goes back to Python), and a quiet call runs
in a private context holding the "ignore" error state, with the caller's context (its
error state and other variables) untouched, and a safe way back (setting the variable
in the caller's context) when that private context is busy or was changed."""
import contextvars
import ctypes
import threading

import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad.core.array import Array
from funcgrad.lowering import dispatch
from funcgrad.numpy_api import eager_native

pytestmark = pytest.mark.skipif(not (eager_native.POSSIBLE and dispatch.LAYOUT_OK), reason="no native entry here")

_USER = contextvars.ContextVar("test_eager_native_calls_user")


@pytest.fixture
def native():
    assert eager_native.enable(), eager_native._state.get("error")
    yield
    eager_native.enable(True)


def _counting(fn):
    orig, n = fn._cfg[0], [0]

    def counting(*a, **k):
        n[0] += 1
        return orig(*a, **k)

    return orig, n, counting


def test_vectorcall_slot_follows_enable(native):
    a = np.arange(3.0)
    fnp.add(a, a)  # (sets the plan)
    orig, n, counting = _counting(fnp.add)
    fnp.add._cfg[0] = counting
    try:
        for on, want in [(True, 0), (False, 5), (True, 0)]:
            eager_native.enable(on)
            n[0] = 0
            for _ in range(5):
                np.testing.assert_array_equal(fnp.add(a, a), 2 * a)
            assert n[0] == want, on
    finally:
        fnp.add._cfg[0] = orig
    if eager_native._VECTORCALL:
        assert eager_native.EagerFunction.__flags__ & eager_native._HAVE_VECTORCALL


def test_instance_made_after_enable(native):
    seen = []
    f = eager_native.EagerFunction([lambda *a, **k: seen.append((a, k)) or "python", eager_native.flags(True), None])
    assert f(1, 2, key=3) == "python" and seen == [((1, 2), {"key": 3})]
    f._cfg[2] = (np.multiply, np.dtype(np.float64), np.dtype(np.float64))
    x = np.array([1.0, 2.0])
    out = f(x, x)
    assert type(out) is Array and not out.flags.writeable and len(seen) == 1
    np.testing.assert_array_equal(out, [1.0, 4.0])


def test_quiet_call_keeps_the_callers_context(native):
    big = np.array([1e308, -1.0])
    x = np.arange(3.0)
    fnp.add(big, big)
    token = _USER.set("mine")
    try:
        with np.errstate(over="raise", invalid="call", call=lambda *a: pytest.fail("called")):
            for _ in range(3):
                np.testing.assert_array_equal(fnp.add(big, big), [np.inf, -2.0])
                np.testing.assert_array_equal(fnp.sin(x), np.sin(x))
                assert _USER.get() == "mine" and np.geterr()["over"] == "raise"
            with pytest.raises(FloatingPointError):
                np.add(big, big)
    finally:
        _USER.reset(token)
    assert np.geterr()["over"] == "warn"


def _quiet_probe():
    """An EagerFunction whose plan calls a Python function (the entry calls any callable):
    it records the error state and the user variable it runs under."""
    seen = []

    def probe(x):
        seen.append((np.geterr()["over"], _USER.get("unset")))
        return x + 1.0

    f = eager_native.EagerFunction([lambda *a: "python", eager_native.flags(True), None])
    f._cfg[2] = (probe, np.dtype(np.float64))
    return f, seen


def _private():
    return ctypes.cast(eager_native.CONTEXT[0], ctypes.py_object).value


def test_private_context_busy_falls_back_to_the_variable(native):
    """Inside the entry's private context (another call in it, here run by hand), a quiet
    call cannot enter it again: it sets the error state in the current context instead."""
    f, seen = _quiet_probe()
    x = np.ones(2)
    ctx = _private()
    with np.errstate(over="raise"):
        f(x)
        out = ctx.run(f, x)
        f(x)
    np.testing.assert_array_equal(out, [2.0, 2.0])
    assert seen == [("ignore", "unset")] * 3
    assert eager_native.CONTEXT[0] == id(ctx)


def test_changed_private_context_is_dropped_then_renewed(native):
    """A call that changes the private context (code run during the NumPy call setting a
    context variable) makes the entry stop using it; ``enable`` makes a fresh one."""
    x = np.ones(2)
    first = eager_native.CONTEXT[0]

    def spoil(v):
        np.seterr(over="warn")  # (in the private context, where the call runs)
        return v * 3.0

    f = eager_native.EagerFunction([lambda *a: "python", eager_native.flags(True), None])
    f._cfg[2] = (spoil, np.dtype(np.float64))
    with np.errstate(over="raise"):
        np.testing.assert_array_equal(f(x), [3.0, 3.0])
        assert not eager_native.CONTEXT[0] and np.geterr()["over"] == "raise"
        g, seen = _quiet_probe()
        token = _USER.set("mine")
        try:
            g(x)  # (now through the variable, in this context)
        finally:
            _USER.reset(token)
        assert seen == [("ignore", "mine")] and np.geterr()["over"] == "raise"
        assert eager_native.enable()
        assert eager_native.CONTEXT[0] not in (None, first)
        g(x)
        assert seen[-1] == ("ignore", "unset")
        big = np.array([1e308])
        np.testing.assert_array_equal(fnp.add(big, big), [np.inf])


def test_threads_share_the_entry(native):
    """Two threads calling at once (NumPy releases the GIL in big loops: one thread may
    find the private context entered by the other) get right, quiet results."""
    big = np.full(20_000, 1e308)
    errors = []

    def work():
        try:
            with np.errstate(all="raise"):
                for _ in range(200):
                    out = fnp.add(big, big)
                    assert type(out) is Array and np.isinf(out).all()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and eager_native.CONTEXT[0]


def _matmul_counting_alt(x, y):
    """(``fnp.matmul(x, y)``, how many times it called the alternative ``cfg[3]``, that
    alternative) on a second call (the first sets the plan and ``cfg[3]``)."""
    fnp.matmul(x, y)
    seen, alt = [], fnp.matmul._cfg[3]
    fnp.matmul._cfg[3] = lambda p, q: seen.append(1) or alt(p, q)
    try:
        return fnp.matmul(x, y), len(seen), alt
    finally:
        fnp.matmul._cfg[3] = alt


def test_big_contiguous_matrices_take_matmul(native):
    """``fnp.matmul`` of big C-contiguous matrices of a BLAS dtype calls ``numpy.matmul``
    (no zero fill; the same gemm call as ``numpy.dot``, so the same bits as the general
    path); other operands stay on ``numpy.dot`` (the plan's function), and so do other
    dtypes (``cfg[3]`` is then ``numpy.dot``)."""
    from funcgrad.numpy_api.eager_fast import GEMM_MIN

    rng = np.random.default_rng(0)
    m = int(np.sqrt(GEMM_MIN)) + 1
    big, small = rng.normal(size=(m, m)), rng.normal(size=(4, 4))
    cases = [(big, big, 1), (big, big.T, 0), (big[:, :5], big[:5], 0), (small, small, 0), (big, big[:, 0], 0),
             (big[:1], big, 0), (big.astype(np.complex128) * (1 + 2j), big.astype(np.complex128), 1),
             (big.astype(np.float32), big.astype(np.float32), 1), (big.astype(np.int64), big.astype(np.int64), 1)]
    for x, y, want in cases:
        out, seen, alt = _matmul_counting_alt(x, y)
        assert seen == want, (x.shape, y.shape, x.dtype)
        assert alt is (np.matmul if x.dtype in (np.float64, np.complex128) else np.dot)
        general = fnp.matmul.general(x, y)
        assert type(out) is Array and out.dtype == general.dtype and not out.flags.writeable
        np.testing.assert_array_equal(out, general)  # (bit for bit)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.complex128])
def test_matmul_and_dot_agree_bitwise(dtype):
    rng = np.random.default_rng(1)
    for m, k, n in [(70, 70, 70), (65, 3, 90), (128, 200, 33)]:
        x, y = rng.normal(size=(m, k)).astype(dtype), rng.normal(size=(k, n)).astype(dtype)
        if np.iscomplexobj(x):
            x, y = x * (1 - 0.5j), y * (0.25 + 1j)
        assert np.array_equal(np.matmul(x, y), np.dot(x, y))
        eager_native.enable(False)
        try:
            py = fnp.matmul(x, y)
        finally:
            eager_native.enable(True)
        assert np.array_equal(py, np.dot(x, y)) and type(py) is Array


def test_vector_like_and_unaligned_matrices_stay_on_dot(native):
    """A dimension 1 (``numpy.matmul`` then takes another loop), or an unaligned operand
    (neither uses BLAS then, and their loops sum in other orders): ``numpy.dot``."""
    rng = np.random.default_rng(2)
    raw = np.zeros(100 * 100 * 8 + 1, np.uint8)[1:].view(np.float64).reshape(100, 100)
    raw[...] = rng.normal(size=(100, 100))
    assert not raw.flags.aligned and raw.flags.c_contiguous
    a = rng.normal(size=(100, 100))
    for x, y in [(a[:, :1].copy(), a[:1].copy()), (a, a[:, :1].copy()), (a[:1].copy(), a), (raw, a), (a, raw)]:
        out, seen, _ = _matmul_counting_alt(x, y)
        assert not seen, (x.shape, y.shape)
        np.testing.assert_array_equal(out, np.dot(x, y))


def test_one_element_operand_leaves_the_entry(native):
    """An operand of one element goes back to Python (``numpy.dot`` would call BLAS
    ``axpy``, which skips the products when that element is 0): ``inf * 0`` is NaN."""
    a = np.array([[np.inf], [2.0]])
    for y in (np.array([0.0]), np.array([[0.0]])):
        fnp.matmul(a, np.ones((1, 2)))  # (the plan: float64 operands)
        orig, n, counting = _counting(fnp.matmul)
        fnp.matmul._cfg[0] = counting
        try:
            with np.errstate(invalid="ignore"):
                out = fnp.matmul(a, y)
        finally:
            fnp.matmul._cfg[0] = orig
        assert n[0] == 1 and np.isnan(out[0]) and out[1] == 0.0
    out, seen, _ = _matmul_counting_alt(a, np.array([1.0]))
    assert out.tolist() == [np.inf, 2.0]
