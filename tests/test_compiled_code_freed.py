"""Compiled code dies with its function: fresh jitted functions (each a new program),
called once and dropped, leave the process's memory flat after ``gc.collect()`` — when
they are compiled and when they are linked from the disk cache. Runs in subprocesses
(RSS of a fresh process; bounds generous against noise: before the fix a dropped
function kept ~80 kB compiled, ~10 kB linked from the cache)."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = textwrap.dedent("""
    import gc, os
    import numpy as np
    import funcgrad as fg
    import funcgrad.numpy as fnp

    def rss_kb():
        return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 1024

    x, xs = np.ones(8), np.ones((4, 8))

    def run(i):
        assert np.array_equal(fg.jit(lambda x: x * i + 1.0)(x), x * i + 1.0)
        assert np.array_equal(fg.grad(fg.jit(lambda x: fnp.sum(x * i)))(x), np.full(8, float(i)))
        assert np.array_equal(fg.jit(fg.vmap(lambda x: x * i - 1.0))(xs), xs * i - 1.0)

    for i in range(-30, 0):  # warm-up: libraries, first-use caches
        run(i)
    gc.collect()
    before = rss_kb()
    n = 150
    for i in range(n):
        run(i)
    gc.collect()
    print((rss_kb() - before) / (3 * n))
""")


def _kb_per_function(cache_dir):
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCGRAD_CACHE_DIR=str(cache_dir))
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    res = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=900)
    assert res.returncode == 0, res.stderr
    return float(res.stdout.split()[-1])


def test_dropped_functions_free_their_code(tmp_path):
    compiled = _kb_per_function(tmp_path)  # a fresh cache: every program compiled (and stored)
    linked = _kb_per_function(tmp_path)  # the same programs: each linked from the cache
    assert compiled < 20, f"{compiled:.1f} kB kept per dropped function (compiled)"
    assert linked < 6, f"{linked:.1f} kB kept per dropped function (linked from the disk cache)"
