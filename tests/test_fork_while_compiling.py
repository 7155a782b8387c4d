"""``os.fork()`` while another thread compiles: the child can compile and call (its
locks are free, the thread pool makes new workers). Runs in a subprocess; each child
gets a deadline and is killed (a failure) if it hangs."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = textwrap.dedent("""
    import os, sys, threading, time
    import numpy as np
    import funcgrad as fg
    import funcgrad.numpy as fnp

    x = np.ones(8)
    fg.jit(lambda x: x + 1.0)(x)
    stop = []

    def compile_forever():
        i = 0
        while not stop:
            i += 1
            fg.jit(lambda x, i=i: fnp.tanh(x * i) + 2.0)(x)

    t = threading.Thread(target=compile_forever, daemon=True)
    t.start()
    time.sleep(0.3)
    statuses = []
    for k in range(4):
        time.sleep(0.05 * k)
        pid = os.fork()
        if pid == 0:
            try:
                y = fg.jit(lambda x: x * 7.0 - 3.0 + k)(x)
                s = fg.jit(lambda x: fnp.sum(fnp.sin(x)))(np.arange(1000.0))
                ok = np.array_equal(y, np.full(8, 4.0 + k)) and abs(s - np.sin(np.arange(1000.0)).sum()) < 1e-9
                os._exit(0 if ok else 3)
            except BaseException:
                os._exit(4)
        deadline = time.monotonic() + 60
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:  # hung: a deadlocked child
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                status = "hung"
                break
            time.sleep(0.02)
        statuses.append(status)
    stop.append(1)
    t.join()
    print(statuses)
""")


@pytest.mark.parametrize("cache", ["disk cache", "no disk cache"])
def test_child_compiles_after_fork_during_compile(tmp_path, cache):
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCGRAD_CACHE_DIR=str(tmp_path))
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    if cache == "no disk cache":
        env["FUNCGRAD_NO_DISK_CACHE"] = "1"
    res = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[-2] == "[0, 0, 0, 0]", res.stdout + res.stderr
