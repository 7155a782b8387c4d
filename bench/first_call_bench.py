"""First-call latency (issue #17, #14's W10), each figure from new processes.

    python bench/first_call_bench.py [runs] [--cpu]   # default 5 processes per row, medians

Times are wall time, or with ``--cpu`` the main thread's CPU time (all of funcgrad's
tracing and compiling runs on it), steadier on a shared, busy machine.

Rows:
- ``import funcgrad``: the import itself (numpy already imported);
- ``first jit (x + 1.0)``: a new process's first ``jit`` call, including engine start-up,
  with an empty disk cache and with a warm one;
- ``W10 f`` / ``W10 grad``: the first call of the 50-op function of ``jit_suite.py`` (and of
  ``jit(grad(sum . f))``) after the process has already jitted other code (its math
  libraries compiled, as in ``jit_suite.py``), disk cache off: the compile cost. With the
  disk cache off a cold program runs quick code first while its optimised code is
  compiled on a worker thread (``lowering/tiered.py``; its CPU time is not in the
  ``--cpu`` figures, which are the calling thread's); the ``tiering off`` rows compile
  the optimised code on the calling thread, as before;
- ``W10 f/grad, new process``: as ``disk_cache_bench.py``: only ``x + 1.0`` jitted first, then
  the 50-op function, with an empty (cold) and a warm disk cache.
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
clock = time.thread_time if {cpu} else time.perf_counter
t0 = clock()
import funcgrad as fg, funcgrad.numpy as fnp
t_import = clock() - t0
from jit_suite_fifty import fifty_op
x = np.random.default_rng(0).normal(size=1000)
t0 = clock()
fg.jit(lambda v: v + 1.0)(x)
t_first = clock() - t0
mode = {mode!r}
if mode == "warm-process":  # the math libraries compiled by earlier work (jit_suite's W1-W9)
    fg.jit(lambda v: fnp.sin(v) + fnp.tanh(v) * fnp.exp(v))(x[:7])
if {grad}:
    f = fg.jit(fg.grad(lambda x: fnp.sum(fifty_op(fnp, x, 0))))
else:
    f = fg.jit(lambda x: fifty_op(fnp, x, 0))
t0 = clock()
f(x)
print(t_import, t_first, clock() - t0)
"""


CPU = "--cpu" in sys.argv


def child(mode: str, grad: bool, cache_dir: str | None, tiered: bool = True) -> list[float]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    env.pop("FUNCGRAD_NO_TIERED_COMPILE", None)
    if not tiered:
        env["FUNCGRAD_NO_TIERED_COMPILE"] = "1"
    if cache_dir is None:
        env["FUNCGRAD_NO_DISK_CACHE"] = "1"
    else:
        env["FUNCGRAD_CACHE_DIR"] = cache_dir
    # cwd=ROOT: ``python -c`` puts the working directory first on sys.path
    out = subprocess.run([sys.executable, "-c", CHILD.format(here=HERE, grad=grad, mode=mode, cpu=CPU)], env=env,
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return [float(v) for v in out.stdout.split()[-3:]]


def main(runs: int = 5) -> None:
    rows: dict[str, list[float]] = {}

    def add(name, value):
        rows.setdefault(name, []).append(value)

    for _ in range(runs):
        for grad in (False, True):
            label = "grad" if grad else "f"
            t_import, _, t = child("warm-process", grad, None)
            add("import funcgrad", t_import)
            add(f"W10 {label}, compiled (disk cache off)", t)
            add(f"W10 {label}, compiled (disk cache off), tiering off", child("warm-process", grad, None, False)[2])
            d = tempfile.mkdtemp(prefix="fg-first-call-")
            try:
                _, first_cold, cold = child("new-process", grad, d)
                _, first_warm, warm = child("new-process", grad, d)
            finally:
                shutil.rmtree(d, ignore_errors=True)
            add("first jit (x + 1.0), empty disk cache", first_cold)
            add("first jit (x + 1.0), warm disk cache", first_warm)
            add(f"W10 {label}, new process, empty disk cache", cold)
            add(f"W10 {label}, new process, warm disk cache", warm)
    print(f"first-call latency, medians of {runs} new processes ({'CPU' if CPU else 'wall'} time)")
    for name, samples in rows.items():
        print(f"  {name:46s} {np.median(samples) * 1e3:7.1f} ms")


if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    main(int(numbers[0]) if numbers else 5)
