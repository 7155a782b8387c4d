"""Compile time against program size: the first ``jit(f)(x)`` / ``jit(grad(f))(x)`` of a
function of ``n`` Python-unrolled steps, each point in a fresh process with an empty disk
cache (a temporary ``FUNCGRAD_CACHE_DIR``), so it pays for tracing, lowering and LLVM.

    python bench/compile_scaling.py [--runs R] [--n 25,100,400,1600] [--fwd-only]
                                    [--jax-python PATH] [--no-jax] [--markdown]

The steps cycle through ``tanh(x @ W)``, ``x*0.9 + sin(x)*0.1``, ``x - mean(x, 0)`` and
``x / (1 + exp(-x))`` on a 16x8 array, then ``sum(x**2)``. Each point is the median over
``R`` processes (default 3; a point whose first run takes over ``ONE_RUN_S`` seconds is
run once). Times: wall and CPU (``time.process_time``: every thread of the process, since
JAX compiles on threads of its own and funcgrad may compile units on a second one); the
machine may be shared, so the CPU column is the steadier one. The growth rows are
time(400) / time(100) and time(1600) / time(400) (linear: 4).

A JAX column is added when JAX is importable here, or with ``--jax-python PATH``: JAX's
points then run in that interpreter (e.g. a virtual environment of its own). numba has
no ``grad`` and no unrolled-program analogue, so it has no column.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ONE_RUN_S = 20.0

CHILD = """
import sys, time
import numpy as np
lib, n, grad = {lib!r}, {n}, {grad}
if lib == "jax":
    import jax, jax.numpy as np_
    jit, grad_ = jax.jit, jax.grad
else:
    import funcgrad as fg, funcgrad.numpy as np_
    jit, grad_ = fg.jit, fg.grad
rng = np.random.default_rng(0)
x = rng.normal(size=(16, 8))
W = rng.normal(size=(8, 8)) / 3


def f(x):
    for i in range(n):
        k = i % 4
        if k == 0:
            x = np_.tanh(x @ W)
        elif k == 1:
            x = x * 0.9 + np_.sin(x) * 0.1
        elif k == 2:
            x = x - np_.mean(x, 0)
        else:
            x = x / (1 + np_.exp(-x))
    return np_.sum(x ** 2)


g = jit(grad_(f)) if grad else jit(f)
w0, c0 = time.perf_counter(), time.process_time()
out = g(x)
if lib == "jax":
    jax.block_until_ready(out)
np.asarray(out)
print(time.perf_counter() - w0, time.process_time() - c0)
"""


def child(python: str, lib: str, n: int, grad: bool, timeout: float) -> tuple[float, float] | None:
    """(wall, cpu) seconds of one cold first call, or None on timeout."""
    d = tempfile.mkdtemp(prefix="fg-compile-scaling-")
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=d, OPENBLAS_NUM_THREADS="1", JAX_PLATFORMS="cpu")
    if lib == "funcgrad":
        env["PYTHONPATH"] = ROOT  # (this checkout's funcgrad)
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (as after an install: modules' .pyc files present)
    try:
        out = subprocess.run([python, "-c", CHILD.format(lib=lib, n=n, grad=grad)], env=env,
                             capture_output=True, text=True, check=True, cwd=d, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def point(python: str, lib: str, n: int, grad: bool, runs: int, timeout: float):
    """Median (wall, cpu) over up to ``runs`` processes, or None on timeout."""
    samples = []
    for _ in range(runs):
        s = child(python, lib, n, grad, timeout)
        if s is None:
            return None
        samples.append(s)
        if s[0] > ONE_RUN_S:
            break
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def jax_python(args) -> str | None:
    """The interpreter JAX's points run in, or None (no JAX column)."""
    if args.no_jax:
        return None
    if args.jax_python:
        return args.jax_python
    try:
        import jax  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def _fmt(p) -> str:
    return "   timeout      " if p is None else f"{p[0]:7.2f} {p[1]:7.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--n", default="25,100,400,1600")
    ap.add_argument("--fwd-only", action="store_true")
    ap.add_argument("--jax-python", help="an interpreter where `import jax` works (JAX's column)")
    ap.add_argument("--no-jax", action="store_true", help="no JAX column")
    ap.add_argument("--markdown", action="store_true", help="also print a table of CPU seconds in Markdown")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    args = ap.parse_args()
    sizes = [int(v) for v in args.n.split(",")]
    jpy = jax_python(args)
    libs = [("funcgrad", sys.executable)] + ([("jax", jpy)] if jpy else [])
    modes = [False] if args.fwd_only else [False, True]
    for lib, py in libs:  # (writes the .pyc files the measured processes then read)
        for g in modes:
            child(py, lib, 2, g, args.timeout)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; seconds, wall cpu "
          f"(process CPU time), median of <= {args.runs} new processes")
    cols = [(lib, py, g) for g in modes for lib, py in libs]
    print("   n  " + "".join(f"{lib + (' grad' if g else ' fwd'):>16s}" for lib, _, g in cols))
    table: dict = {}
    for n in sizes:
        row = []
        for lib, py, g in cols:
            table[lib, g, n] = p = point(py, lib, n, g, args.runs, args.timeout)
            row.append(_fmt(p))
        print(f"{n:5d} " + " ".join(f"{c:>15s}" for c in row), flush=True)
    for lo, hi in ((100, 400), (400, 1600)):
        for lib, _, g in cols:
            a, b = table.get((lib, g, lo)), table.get((lib, g, hi))
            if a and b:
                print(f"growth {lib} {'grad' if g else 'fwd'} t({hi})/t({lo}): wall {b[0] / a[0]:.2f}, "
                      f"cpu {b[1] / a[1]:.2f}")
    if args.markdown:
        print("\n| n | " + " | ".join(f"{lib} {'grad' if g else 'fwd'}" for lib, _, g in cols) + " |")
        print("|---" * (len(cols) + 1) + "|")
        for n in sizes:
            cells = ["—" if table[lib, g, n] is None else f"{table[lib, g, n][1]:.2f}" for lib, _, g in cols]
            print(f"| {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
