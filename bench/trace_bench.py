"""Tracing cost of W10 (issues #14/#17): staging the 50-op function and its ``grad`` the way
``jit`` does (``trace_to_jaxpr``, the cyclic collector paused), main-thread CPU time, medians.

    python bench/trace_bench.py [runs]     # default 25 traces per row

Rows: ``f`` (503 equations, 400 of them dead: five candidates per step), ``grad(sum . f)``
(the JVP and transpose under staging; with ``transforms/ad_prune.py`` the dead primal work
is dropped before linearizing), the grad's phases (the primal staged, its live part
found, the live equations bound again under the JVP, the backward walk: medians of the
same runs, timed by wrapping those functions), and per-operation costs of ``y * y``,
``y * 0.5`` and ``sin(y)`` staged 2000 times (the ``funcgrad.numpy`` layer plus staging;
``numpy_api/staged.py`` is the direct path these take).
"""
from __future__ import annotations

import contextlib
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's funcgrad, not an installed one
import common  # noqa: E402,F401,I001  (single-threaded BLAS, as in jit_suite)
from jit_suite_fifty import fifty_op  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad.core.staging import collector_paused, trace_to_jaxpr  # noqa: E402
from funcgrad.core.trace import get_aval_any  # noqa: E402
from funcgrad.transforms import ad_prune, linearize  # noqa: E402

_PHASES = ((ad_prune, "trace_to_jaxpr", "primal staged"), (ad_prune, "_live_part", "live part"),
           (ad_prune, "walk_jaxpr", "JVP of live eqns"), (linearize, "backward_walk", "backward walk"))


@contextlib.contextmanager
def _phase_timers(times: dict):
    """Time the grad's phases: each function above wrapped (CPU time), restored after."""
    saved = [(m, n, getattr(m, n)) for m, n, _ in _PHASES]

    def timed(fn, label):
        def wrapper(*args, **kwargs):
            t0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                times.setdefault(label, []).append(time.thread_time() - t0)
        return wrapper

    for (m, n, fn), (_, _, label) in zip(saved, _PHASES):
        setattr(m, n, timed(fn, label))
    try:
        yield
    finally:
        for m, n, fn in saved:
            setattr(m, n, fn)


def _median_trace(fn, x, runs):
    av = [get_aval_any(x)]
    trace_to_jaxpr(lambda v: [fn(v)], av)  # caches and imports (not timed)
    ts = []
    for _ in range(runs):
        with collector_paused():  # (as jit traces: see staging.collector_paused)
            t0 = time.thread_time()
            jaxpr, _ = trace_to_jaxpr(lambda v: [fn(v)], av)
            ts.append(time.thread_time() - t0)
    return float(np.median(ts)), len(jaxpr.eqns)


def main(runs: int = 25) -> None:
    x = np.random.default_rng(0).normal(size=1000)
    print(f"tracing W10 (trace_to_jaxpr, CPU time, medians of {runs}); load {os.getloadavg()[0]:.1f}")
    for name, fn in (("f", lambda v: fifty_op(fnp, v, 0)),
                     ("grad(sum . f)", fg.grad(lambda v: fnp.sum(fifty_op(fnp, v, 0))))):
        t, n = _median_trace(fn, x, runs)
        print(f"  {name:16s} {t * 1e3:6.2f} ms  {n:4d} equations  {t / n * 1e6:5.2f} us/equation")
    times: dict = {}
    with _phase_timers(times):
        _median_trace(fg.grad(lambda v: fnp.sum(fifty_op(fnp, v, 0))), x, runs)
    print("  grad phases:   " + ", ".join(f"{label} {np.median(times[label][1:]) * 1e3:.2f} ms"
                                          for _, _, label in _PHASES if label in times))
    n_ops = 2000
    for name, op in (("y * y", lambda y: y * y), ("y * 0.5", lambda y: y * 0.5), ("fnp.sin(y)", fnp.sin)):
        def body(y, op=op):
            for _ in range(n_ops):
                op(y)
            return y

        t, _ = _median_trace(body, x, max(3, runs // 5))
        print(f"  {name:16s} {t / n_ops * 1e6:5.2f} us/operation")


if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    main(int(numbers[0]) if numbers else 25)
