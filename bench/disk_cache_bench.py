"""W10 with the on-disk compilation cache (issue #14): the first call of the 50-op
function of ``jit_suite.py`` (trace + compile or load + run) and of its ``jit(grad)``,
each in a new process, with a cold cache (empty directory) and a warm one.

    python bench/disk_cache_bench.py [--cpu]  # 5 processes per row, medians

``--cpu``: the main thread's CPU time instead of wall time (steadier on a busy machine).

Each child process imports funcgrad and NumPy and jits ``x + 1.0`` first (start-up: not
timed), then times its first call of the 50-op function; the math libraries (sin, tanh,
exp) are compiled or loaded within that call, as a user's first call would (in
``jit_suite.py``'s W10 earlier workloads have compiled them already).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = """
import sys, time
sys.path.insert(0, {here!r})
import common  # noqa: F401  (single-threaded BLAS, as in jit_suite)
import numpy as np
import funcgrad as fg, funcgrad.numpy as fnp
from jit_suite_fifty import fifty_op
x = np.random.default_rng(0).normal(size=1000)
fg.jit(lambda v: v + 1.0)(x)  # process start-up: the compiler's modules and the JIT (not timed)
if {grad}:
    f = fg.jit(fg.grad(lambda x: fnp.sum(fifty_op(fnp, x, 0))))
else:
    f = fg.jit(lambda x: fifty_op(fnp, x, 0))
clock = time.thread_time if {cpu} else time.perf_counter
t0 = clock()
f(x)
print(clock() - t0)
"""


def child_time(cache_dir: str, grad: bool) -> float:
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=cache_dir, PYTHONPATH=ROOT)
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    out = subprocess.run([sys.executable, "-c", CHILD.format(here=HERE, grad=grad, cpu="--cpu" in sys.argv)], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main(runs: int = 5) -> None:
    rows = []
    for grad in (False, True):
        cold, warm = [], []
        for _ in range(runs):
            d = tempfile.mkdtemp(prefix="fg-cache-bench-")
            try:
                cold.append(child_time(d, grad))
                warm.append(child_time(d, grad))
            finally:
                shutil.rmtree(d, ignore_errors=True)
        rows.append(("jit(grad(f))" if grad else "jit(f)", np.median(cold), np.median(warm)))
    clock = "CPU" if "--cpu" in sys.argv else "wall"
    print(f"W10 first call in a new process (50-op function), medians of {runs} ({clock} time)")
    print(f"{'program':<14}{'cold cache':>12}{'warm cache':>12}{'ratio':>8}")
    for name, c, w in rows:
        print(f"{name:<14}{c * 1e3:>10.1f}ms{w * 1e3:>10.1f}ms{w / c:>8.2f}")


if __name__ == "__main__":
    main()
