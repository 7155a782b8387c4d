"""A compiled program with a large workspace keeps it between calls (one per module,
taken and given back atomically): repeated and concurrent calls stay right, and the
block is released with the module."""
import gc
import threading

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lowering import compiler


def _program():
    # sort materialises intermediates: a workspace of a few MB at this size
    return fg.jit(lambda x: fnp.sum(fnp.sort(fnp.sin(x)) * fnp.cos(x)) + fnp.max(fnp.sort(x * 3.0)))


def _expected(x):
    return np.sum(np.sort(np.sin(x)) * np.cos(x)) + np.max(np.sort(x * 3.0))


def test_workspace_is_large_enough_to_be_kept():
    f = _program()
    x = np.linspace(-1.0, 1.0, 200_000)
    f(x)
    (exe,) = [e[0].memo["exe"] for e in f._cache.values()]
    assert exe.stats["workspace_bytes"] >= compiler.CACHED_WORKSPACE_MIN
    assert "release" in exe._module.addrs


def test_repeated_calls_reuse_it_and_stay_right():
    f = _program()
    for k in range(4):
        x = np.linspace(-1.0, 1.0 + k, 200_000)
        np.testing.assert_allclose(f(x), _expected(x), rtol=1e-9)


def test_concurrent_calls_each_get_a_workspace():
    f = _program()
    xs = [np.linspace(-1.0, 1.0 + k, 200_000) for k in range(6)]
    f(xs[0])
    results = [None] * len(xs)

    def work(k):
        for _ in range(3):
            results[k] = f(xs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, r in zip(xs, results):
        np.testing.assert_allclose(r, _expected(x), rtol=1e-9)


def test_released_with_the_module():
    f = _program()
    f(np.linspace(-1.0, 1.0, 200_000))
    (exe,) = [e[0].memo["exe"] for e in f._cache.values()]
    finalizer = exe._module._finalizer
    assert finalizer.alive
    del f, exe
    gc.collect()
    assert not finalizer.alive  # the workspace freed, then the code unloaded
