"""Memory kept by compiled functions that die: N fresh functions, each a new program
(its own constant), called once and dropped; RSS growth after ``gc.collect()``, for
``jit``, ``grad(jit)`` and ``jit(vmap)``.

    python bench/memory_soak.py [N]

Each kind runs in a process of its own with the on-disk compilation cache on (the
default), twice over one fresh cache directory: a cold pass (every program compiled and
stored) and a warm pass (every program linked from the cache).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import gc, os, sys
import numpy as np
import funcgrad as fg, funcgrad.numpy as fnp

def rss_mb():
    return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

kind, n = sys.argv[1], int(sys.argv[2])
x, xs = np.ones(8), np.ones((4, 8))

def make(i):
    if kind == "jit":
        return lambda: fg.jit(lambda x, i=i: x * i + 1.0)(x)
    if kind == "grad_jit":
        return lambda: fg.grad(fg.jit(lambda x, i=i: fnp.sum(x * i + 1.0)))(x)
    return lambda: fg.jit(fg.vmap(lambda x, i=i: x * i + 1.0))(xs)

for i in range(-20, 0):  # warm-up: libraries, first-use caches
    make(i)()
gc.collect()
before = rss_mb()
for i in range(n):
    make(i)()
gc.collect()
print(rss_mb() - before)
"""


def run(kind: str, n: int, cache_dir: str) -> float:
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(n)], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.split()[-1])


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print(f"RSS growth after {n} dropped functions, gc.collect() (MB; KB per function)")
    for kind in ("jit", "grad_jit", "jit_vmap"):
        with tempfile.TemporaryDirectory() as d:
            cold, warm = run(kind, n, d), run(kind, n, d)
        print(f"  {kind:9s} cold cache +{cold:6.1f} MB ({cold * 1024 / n:5.1f} KB)   "
              f"warm cache +{warm:6.1f} MB ({warm * 1024 / n:5.1f} KB)")


if __name__ == "__main__":
    main()
