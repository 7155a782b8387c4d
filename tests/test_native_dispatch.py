"""The native jit entry (``lowering/native_entry.py``): a cached call checked and run
without Python gives exactly what the Python path gives (values, dtypes, types, flags,
result trees, errors), falls back on anything it does not handle, and holds no
references it should not."""
import gc
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import trace
from funcgrad.core.array import Array
from funcgrad.lowering import native_call, native_entry
from funcgrad.transforms import jit_dispatch
from funcgrad.transforms.jit import JittedFunction

pytestmark = pytest.mark.skipif(not native_entry.available(), reason="NumPy ABI not verified: Python path only")


def _warm(f, *args):
    """Trace, then call again (installs the entry; the plan exists from the first call)."""
    f(*args)
    f(*args)


def _took_python(f, *args, **kwargs):
    """(result, whether the Python ``_call`` ran) of ``f(*args, **kwargs)``."""
    seen = []

    def prof(frame, event, arg):
        if event == "call" and frame.f_code is JittedFunction._call.__code__:
            seen.append(1)

    sys.setprofile(prof)
    try:
        out = f(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return out, bool(seen)


def _python(f, *args, **kwargs):
    return JittedFunction._call(f, *args, **kwargs)


def _flags(x):
    return {k: x.flags[k] for k in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED")}


def _same(a, b):
    """Same tree, leaf types, dtypes, shapes, flags and values."""
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif a is not None:
        assert a.dtype == b.dtype and a.shape == b.shape
        assert _flags(a) == _flags(b)
        assert type(a.base) is type(b.base)
        np.testing.assert_array_equal(a, b)


def _check(f, *args, native=True):
    _warm(f, *args)
    out, py = _took_python(f, *args)
    assert py is not native, "expected the native entry" if native else "expected the Python path"
    _same(out, _python(f, *args))
    return out


def test_installed_as_method_descriptor():
    f = fg.jit(lambda x: x * 2.0)
    _warm(f, np.ones(3))
    assert type(JittedFunction.__dict__["__call__"]).__name__ == "method_descriptor"
    assert f._native_plans


@pytest.mark.parametrize("x", [np.asarray(1.5), np.arange(6.0).reshape(2, 3), np.float64(2.5), np.arange(4, dtype=np.int32),
                               np.asarray(True), np.float32(3.0)], ids=["0d", "2d", "npscalar", "i32", "bool0d", "f32"])
def test_array_and_numpy_scalar_leaves(x):
    f = fg.jit(lambda x: x * 2 + 1)
    out = _check(f, x)
    np.testing.assert_array_equal(out, np.asarray(x) * 2 + 1)
    assert out.dtype == (np.asarray(x) * 2 + 1).dtype


def test_funcgrad_array_input_and_output_kinds():
    a = fnp.asarray(np.arange(3.0))
    assert type(a) is Array
    out = _check(fg.jit(lambda x: (x + 1, x.sum(), [x * 2, None, {"z": (x,), "y": []}])), a)
    assert type(out[0]) is Array and out[1].ndim == 0 and out[2][1] is None
    for g in (lambda x: (x + 1, x.sum()), lambda x: [x, x * 3], lambda x: {"b": x + 1, "a": x.sum()}, lambda x: (),
              lambda x: None, lambda x: (x.sum(), {"g": [x * 2, x * 3]})):
        out = _check(fg.jit(g), a)
    out = _check(fg.jit(lambda x: {1: x}), a, native=False)  # (a non-str key: the Python plan)
    out = _check(fg.jit(lambda x: x.sum()), a)
    assert type(out) is Array and out.ndim == 0 and not out.flags.writeable


@pytest.mark.parametrize("v", [2.0, 3, True, -(2**62)], ids=["float", "int", "bool", "bigint"])
def test_python_scalars_weakly_typed(v):
    f = fg.jit(lambda x, y: x * y)
    y = np.ones(2, np.float32)
    out = _check(f, v, y)
    assert out.dtype == np.float32
    g = fg.jit(lambda x: x + 1)
    out = _check(g, v)
    assert out.dtype == np.asarray(fg.jit(lambda x: x + 1)._call(v)).dtype


def test_weak_float_and_int_are_different_signatures():
    f = fg.jit(lambda x: x / 2)
    _warm(f, 3)
    _warm(f, 3.0)
    assert f(3).dtype == np.float64 and f(3.0) == 1.5
    assert len(f._native_plans) == 2
    x32 = np.float32(4)
    assert f(x32).dtype == np.float32  # a NumPy scalar is not weak


def test_same_object_twice_then_different():
    f = fg.jit(lambda a, b: a - b)
    _warm(f, 1, 1)
    assert f(1, 2) == -1 and f(5, 2) == 3
    _warm(f, 1.0, 1.0)
    assert f(1.0, 3.0) == -2.0


def test_pytrees_of_leaves():
    rng = np.random.default_rng(0)
    p = {f"w{i}": rng.normal(size=(4, 4)) for i in range(10)}
    step = fg.jit(lambda p, lr: {k: v - lr * v for k, v in p.items()})
    out = _check(step, p, 0.1)
    assert list(out) == sorted(p)
    np.testing.assert_allclose(out["w3"], p["w3"] * 0.9)
    # Same keys in another insertion order flatten alike: still native, same result.
    q = dict(reversed(list(p.items())))
    got, py = _took_python(step, q, 0.1)
    assert not py
    _same(got, _python(step, q, 0.1))
    f = fg.jit(lambda t: (t[0] + t[1][0] * t[1][1], t[0] * 2))
    _check(f, (np.ones(2), [2.0, np.arange(2.0)], None))
    _check(fg.jit(lambda d: d["a"]["b"] * 2), {"a": {"b": np.ones(3)}})


@pytest.mark.parametrize("bad", ["shape", "dtype", "keys", "len", "type", "none"])
def test_structure_mismatch_takes_python_path(bad):
    f = fg.jit(lambda d, xs: d["a"] * xs[0] if xs[1] is None else d["a"] * xs[0] + xs[1])
    good = ({"a": np.ones(3)}, [np.ones(3), None])
    _warm(f, *good)
    other = {"shape": ({"a": np.ones(4)}, [np.ones(4), None]), "dtype": ({"a": np.ones(3, np.float32)}, [np.ones(3), None]),
             "keys": ({"a": np.ones(3), "b": 1.0}, [np.ones(3), None]), "len": ({"a": np.ones(3)}, [np.ones(3)] * 3),
             "type": ({"a": np.ones(3)}, (np.ones(3), None)), "none": ({"a": np.ones(3)}, [np.ones(3), np.ones(3)])}[bad]
    out, py = _took_python(f, *other)
    assert py
    _same(out, _python(f, *other))


def test_errors_identical_to_python_path():
    f = fg.jit(lambda x: x + 1)
    _warm(f, 1)
    for arg, exc in (("a", TypeError), (2**70, OverflowError), (object(), TypeError)):
        with pytest.raises(exc) as e1:
            f(arg)
        with pytest.raises(exc) as e2:
            _python(f, arg)
        assert str(e1.value) == str(e2.value)
    with pytest.raises(TypeError) as e1:
        f(np.ones(2), np.ones(2))
    with pytest.raises(TypeError) as e2:
        _python(f, np.ones(2), np.ones(2))
    assert str(e1.value) == str(e2.value)


def test_noncontiguous_byteswapped_misaligned_subclass():
    f = fg.jit(lambda x: x * 2.0)
    _warm(f, np.ones(4))
    base = np.arange(8.0)
    swapped = np.arange(4.0).astype(">f8")
    raw = np.zeros(4 * 8 + 1, np.uint8)
    misaligned = raw[1:].view(np.float64)
    misaligned[:] = [1, 2, 3, 4]

    class Sub(np.ndarray):
        pass

    for x in (base[::2], misaligned, np.arange(4.0).view(Sub), np.asfortranarray(np.ones(4))):
        out, py = _took_python(f, x)
        if x.flags.c_contiguous and x.flags.aligned and type(x) is np.ndarray:
            assert not py
        else:
            assert py
        np.testing.assert_array_equal(out, np.asarray(x) * 2)
        _same(out, _python(f, x))
    # byte-swapped data: the Python path, which converts it to native order (as NumPy does)
    out, py = _took_python(f, swapped)
    assert py and out.dtype.isnative
    np.testing.assert_array_equal(out, np.arange(4.0) * 2)
    _same(out, _python(f, swapped))


def test_keyword_static_and_donated_arguments():
    f = fg.jit(lambda x, n, *, scale=1.0: x * n * scale, static_argnums=1)
    x = np.ones(3)
    _warm(f, x, 3)
    out, py = _took_python(f, x, 3)
    assert py  # (static arguments: the Python path)
    out, py = _took_python(f, x, 3, scale=2.0)
    assert py
    np.testing.assert_array_equal(out, x * 6)
    g = fg.jit(lambda x, y: x + y, donate_argnums=0)
    out = _check(g, np.ones(3), np.ones(3))
    np.testing.assert_array_equal(out, 2 * np.ones(3))


def test_under_transforms_and_disable_jit():
    f = fg.jit(lambda x: fnp.sin(x) * x)
    _warm(f, 1.0)
    np.testing.assert_allclose(fg.grad(f)(1.0), np.cos(1.0) + np.sin(1.0))
    assert "jit_call" in str(fg.make_jaxpr(lambda x: f(x) + 1)(1.0))
    np.testing.assert_allclose(fg.vmap(f)(np.arange(3.0)), np.sin(np.arange(3.0)) * np.arange(3.0))
    with fg.disable_jit():
        out, py = _took_python(f, 1.0)
    assert py and out == np.sin(1.0)


def test_many_signatures_beyond_native_plans():
    f = fg.jit(lambda x: x + 1)
    for n in range(native_entry.MAX_PLANS + 3):
        _warm(f, np.zeros(n))
    assert len(f._native_plans) == native_entry.MAX_PLANS
    for n in range(native_entry.MAX_PLANS + 3):
        np.testing.assert_array_equal(f(np.zeros(n)), np.ones(n))
    f.clear_cache()
    assert not f._native_plans
    np.testing.assert_array_equal(f(np.zeros(2)), np.ones(2))


def test_host_callback_error_path():
    def boom(x):
        raise ValueError("boom from host")

    f = fg.jit(lambda x: fg.pure_callback(boom, fg.ShapeDtypeStruct((), np.float64), x) + x)
    with pytest.raises(ValueError, match="boom from host"):
        f(1.0)
    f2 = fg.jit(lambda x: fg.pure_callback(lambda v: np.asarray(v * 2), fg.ShapeDtypeStruct((), np.float64), x) + x)
    _warm(f2, 1.0)
    flag = [False]

    def maybe(v):
        if flag[0]:
            raise ValueError("boom later")
        return np.asarray(v * 2)

    f3 = fg.jit(lambda x: fg.pure_callback(maybe, fg.ShapeDtypeStruct((), np.float64), x) + x)
    _warm(f3, 1.0)
    x, a = float("1.5"), np.asarray(1.5)
    _warm(f3, a)
    gc.collect()
    before = sys.getrefcount(x), sys.getrefcount(a), sys.getrefcount(f3)
    flag[0] = True
    for _ in range(100):
        with pytest.raises(ValueError, match="boom later"):
            f3(x)
        with pytest.raises(ValueError, match="boom later"):
            f3(a)
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(a), sys.getrefcount(f3)) == before
    flag[0] = False
    assert f3(2.0) == 6.0


def test_gil_released_work_and_threads():
    big = fg.jit(lambda x: fnp.sin(x) + 1.0)
    small = fg.jit(lambda d, s: {"a": d["a"] * s, "b": d["b"] + s})
    xb = np.linspace(0, 1, 200_000)
    _warm(big, xb)
    want_big = np.sin(xb) + 1.0
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for i in range(300):
                a, b = rng.normal(size=3), rng.normal(size=(2, 2))
                out = small({"a": a, "b": b}, float(i))
                np.testing.assert_array_equal(out["a"], a * i)
                np.testing.assert_array_equal(out["b"], b + i)
                if i % 50 == 0:
                    np.testing.assert_allclose(big(xb), want_big)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    _warm(small, {"a": np.ones(3), "b": np.ones((2, 2))}, 1.0)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_refcounts_inputs_outputs_function():
    p = {"a": np.ones(3), "b": np.ones((2, 2))}
    lr = float("0.25")
    f = fg.jit(lambda p, lr: {k: v * lr for k, v in p.items()})
    g = fg.jit(lambda x: x + 1)
    x0 = np.asarray(1.0)
    _warm(f, p, lr)
    _warm(g, x0)
    objs = [p, p["a"], p["b"], lr, f, g, x0]
    gc.collect()
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(2000):
        out = f(p, lr)
        r = g(x0)
        try:
            g(x0, x0)
        except TypeError:
            pass
    gc.collect()
    assert [sys.getrefcount(o) for o in objs] == before
    # (references as of a fresh structure built in Python: the dict holds each output,
    # each output view holds its base, nothing else does)
    ref_out, ref_r = {"a": np.empty(3).view(Array)}, np.asarray(1.0)

    def counts(o, q):
        return sys.getrefcount(o), sys.getrefcount(o["a"]), sys.getrefcount(o["a"].base), sys.getrefcount(q)

    assert counts(out, r) == counts(ref_out, ref_r)


def test_no_leak_over_many_calls():
    p = {f"w{i}": np.ones((4, 4)) for i in range(4)}
    f = fg.jit(lambda p, s: ({k: v * s for k, v in p.items()}))
    g = fg.jit(lambda x: (x + 1, {"a": [x * 2, None]}))
    _warm(f, p, 0.5)
    _warm(g, 2.0)
    for _ in range(1000):
        f(p, 0.5), g(2.0)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(50_000):
            f(p, 0.5)
            g(2.0)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 1_000_000, grown
    nones = sys.getrefcount(None)
    for _ in range(20_000):
        g(2.0)
    assert abs(sys.getrefcount(None) - nones) < 1000  # (each result's None is a new reference)


def test_plan_not_made_without_native_api(monkeypatch):
    monkeypatch.setattr(native_call, "_OK", False)  # (an unverified object layout)
    assert not native_entry.available()
    f = fg.jit(lambda x: x + 1)
    x = np.ones(2)
    exe_plan = native_entry.make_plan((x,), [0], object(), None)
    assert exe_plan is None
    monkeypatch.setitem(jit_dispatch.NATIVE, "state", None)
    monkeypatch.setitem(jit_dispatch.NATIVE, "pending", False)
    _warm(f, x)
    assert not f._native_plans
    np.testing.assert_array_equal(f(x), x + 1)


def test_training_step_value_and_grad():
    rng = np.random.default_rng(3)
    params = {"w": rng.normal(size=(3, 2)), "b": np.zeros(2)}
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))

    def loss(p, x, y):
        return fnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    step = fg.jit(fg.value_and_grad(loss))
    val, grads = _check(step, params, x, y)
    want = fg.value_and_grad(loss)(params, x, y)
    np.testing.assert_allclose(val, want[0])
    np.testing.assert_allclose(grads["w"], want[1]["w"])
    assert step._native_plans[0][1].stats["release_gil"] is False
    big = fg.jit(lambda x: fnp.sin(x) + 1.0)
    _warm(big, np.zeros(200_000))
    assert big._native_plans[0][1].stats["release_gil"] is True  # (the threads test's GIL-free case)


def test_jit_entry_native_while_another_thread_stages():
    f = fg.jit(lambda x: x * 3.0)
    x = np.arange(3.0)
    f(x), f(x)  # (traced; the second call installs the entry)
    out, py = _took_python(f, x)
    assert not py
    np.testing.assert_array_equal(out, x * 3.0)
    # Another thread stages: the counter is not 0, this thread's state is read (None).
    started, release = threading.Event(), threading.Event()

    def stage(y):
        started.set()
        release.wait(10)
        return y + 1

    t = threading.Thread(target=lambda: fg.make_jaxpr(stage)(1.0))
    t.start()
    try:
        assert started.wait(10) and trace.STAGING[0] >= 1
        out, py = _took_python(f, x)
        assert not py
        np.testing.assert_array_equal(out, x * 3.0)
    finally:
        release.set()
        t.join()
    assert trace.STAGING[0] == 0
    # This thread stages: the entry steps aside (the Python path traces the inner call).
    took = []

    def outer(y):
        out, py = _took_python(f, y)
        took.append(py)
        return out + 1.0

    fg.make_jaxpr(outer)(x)
    assert took == [True]


def test_entry_installed_by_a_repeat_call_not_by_another_functions_first_call():
    # A function's first call does not pay for the native entry (the faster repeat calls of
    # others); the first repeat call of a function that has a native plan installs it.
    import os
    import subprocess
    import textwrap
    child = textwrap.dedent("""
        import numpy as np
        import funcgrad as fg
        from funcgrad.transforms.jit import JittedFunction
        x = np.ones(3)
        f, g = fg.jit(lambda v: v + 1.0), fg.jit(lambda v: v * 2.0)
        f(x); g(x)
        assert type(JittedFunction.__dict__["__call__"]).__name__ == "function"
        assert f._native_plans and g._native_plans
        g(x)
        assert type(JittedFunction.__dict__["__call__"]).__name__ == "method_descriptor"
        assert (f(x) == 2.0).all() and (g(x) == 2.0).all()
        print("ok")
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    res = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr
