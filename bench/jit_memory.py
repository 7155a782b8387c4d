"""Memory kept by compiled functions that die (issue #12): 300 fresh ``jit`` lambdas, each
closing over an 80 kB array, called once and dropped; RSS growth after ``gc.collect()``.

    python bench/jit_memory.py

Each configuration runs in a process of its own: with the on-disk compilation cache
(the default; a fresh cache directory, so the first program is compiled and the other
299, whose IR text is the same, are loaded) and with ``FUNCGRAD_NO_DISK_CACHE=1`` (every
program optimised by LLVM; llvmlite's pass-manager binding keeps ~80 kB per run). JAX's
figure for the same program, from the issue: +9 MB.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CHILD = """
import gc, os
import numpy as np
import funcgrad as fg, funcgrad.numpy as fnp

def rss_mb():
    return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

x = np.ones(10000)
fg.jit(lambda v: fnp.sum(fnp.tanh(v * 2.0)))(x)
gc.collect()
before = rss_mb()
for i in range(300):
    c = np.random.rand(10000)
    f = fg.jit(lambda v, c=c: fnp.sum(fnp.tanh(v * c) * c))
    f(x)
    del f
gc.collect()
print(rss_mb() - before)
"""


def run(env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main():
    with tempfile.TemporaryDirectory() as d:
        cached = run({"FUNCGRAD_CACHE_DIR": d})
    uncached = run({"FUNCGRAD_NO_DISK_CACHE": "1"})
    print("RSS growth after 300 fresh jitted lambdas (80 kB constant each), gc.collect()")
    print(f"  funcgrad, disk cache on (default)  +{cached:5.1f} MB")
    print(f"  funcgrad, FUNCGRAD_NO_DISK_CACHE=1 +{uncached:5.1f} MB")
    print("  JAX (issue #12's measurement)       +  9.0 MB")


if __name__ == "__main__":
    main()
