"""A compiled module's finalizer never waits for the engine's lock: the collector may run
it on a thread inside an llvmlite call (holding llvmlite's lock) while the thread holding
the engine's lock waits for llvmlite's. A busy lock defers the unload to the next compile."""
import gc
import threading

import numpy as np

import funcgrad as fg
from funcgrad.lowering import engine


def test_a_dead_module_is_unloaded_later_when_the_lock_is_busy():
    f = fg.jit(lambda x: x * 3.0 + 1.0)
    f(np.ones(3))
    live = engine.live_modules()
    holding, release = threading.Event(), threading.Event()

    def hold():
        with engine._lock:
            holding.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    holding.wait(30)
    try:
        del f
        gc.collect()  # the finalizer runs here, on this thread: it must not block
        assert engine._dead, "the unload should wait for the lock, not block"
    finally:
        release.set()
        t.join(30)
    g = fg.jit(lambda x: x - 2.0)  # the next compile unloads what was deferred
    np.testing.assert_array_equal(g(np.ones(2)), [-1.0, -1.0])
    assert not engine._dead
    assert engine.live_modules() <= live + 1
