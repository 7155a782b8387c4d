"""The cost of a ``debug.print`` in a compiled hot loop (issue #14).

A ``fori_loop`` of 1000 iterations of simple scalar math, compiled with ``jit``, in
three forms: without a print; with a print in a ``cond`` branch that is never taken
(the compiled code only branches around the call); with a print reached every
iteration (1000 calls back into Python, output to a null stream). Times are medians of
repeated calls; the ratios are against the loop without a print.

    python bench/debug_print_bench.py
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's funcgrad
import numpy as np  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad import lax  # noqa: E402

import common  # noqa: E402,F401  (single-threaded BLAS, as the other benches)

N = 1000


def step(i, c):
    return c * 0.999 + fnp.sin(c) * 1e-3 + i * 1e-6


def plain(x):
    return lax.fori_loop(0, N, step, x)


def never(x):
    def body(i, c):
        lax.cond(c > 1e300, lambda v: fg.debug.print("huge {}", v), lambda v: None, c)
        return step(i, c)

    return lax.fori_loop(0, N, body, x)


def every(x):
    def body(i, c):
        fg.debug.print("{} {}", i, c)
        return step(i, c)

    return lax.fori_loop(0, N, body, x)


def median_time(f, x, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(x)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    x = 0.5
    rows = []
    with contextlib.redirect_stdout(io.StringIO()):
        fns = {name: fg.jit(f) for name, f in [("no print", plain), ("print never reached", never),
                                                 ("print every iteration", every)]}
        outs = {name: f(x) for name, f in fns.items()}
        for name, f in fns.items():
            reps = 50 if name == "print every iteration" else 2000
            rows.append((name, median_time(f, x, reps)))
    assert len({float(o) for o in outs.values()}) == 1, outs
    base = rows[0][1]
    print(f"fori_loop of {N} iterations, jit, median per call")
    for name, t in rows:
        print(f"  {name:24s} {t * 1e6:10.1f} us   {t / base:8.2f}x")
    print(f"  per print call: {(rows[2][1] - base) / N * 1e6:.2f} us")


if __name__ == "__main__":
    main()
