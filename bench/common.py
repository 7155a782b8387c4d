"""Shared timing helpers for the benchmarks (never part of the test suite).

Times are medians of repeated calls measured with the calling thread's CPU clock
(``time.thread_time``), which ignores time the process spends descheduled on this
shared machine; ratios are taken against NumPy measured in the same run.
"""
from __future__ import annotations

import os
import statistics
import time

# One BLAS thread for every library, so ratios compare the same amount of hardware.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def _calls_for(fn, min_time, clock) -> int:
    """After a warm-up call: how many calls of ``fn`` (a power of two) take ``min_time``."""
    fn()
    n = 1
    while True:
        t0 = clock()
        for _ in range(n):
            fn()
        if clock() - t0 >= min_time or n >= 1 << 20:
            return n
        n *= 2


def median_time(fn, *, repeat=15, min_time=0.05, clock=None) -> float:
    """Median seconds per call of ``fn()`` over ``repeat`` batches of at least ``min_time``.

    ``clock`` defaults to the calling thread's CPU time; pass ``time.perf_counter`` (wall
    time) when a library computes on other threads (JAX does, even single-threaded).
    """
    clock = clock or time.thread_time
    n = _calls_for(fn, min_time, clock)
    samples = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(n):
            fn()
        samples.append((clock() - t0) / n)
    return statistics.median(samples)


def interleaved_times(fns, *, rounds=11, min_time=0.05, clock=None):
    """Time several contenders side by side: each round times every ``(name, fn)`` in
    turn (``fn`` called enough times for ``min_time``), so load that comes and goes on a
    shared machine hits all of them alike. Returns {name: [seconds per call, one per
    round]}; take medians of the times, or of per-round ratios."""
    clock = clock or time.thread_time
    counts = {name: _calls_for(fn, min_time, clock) for name, fn in fns}
    samples = {name: [] for name, _ in fns}
    for _ in range(rounds):
        for name, fn in fns:
            n = counts[name]
            t0 = clock()
            for _ in range(n):
                fn()
            samples[name].append((clock() - t0) / n)
    return samples


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    return f"{seconds * 1e3:8.2f} ms"


def table(title, rows, baseline):
    """Print ``rows`` = [(name, seconds)] with ratios against the row named ``baseline``."""
    base = dict(rows)[baseline]
    print(f"\n{title}")
    for name, t in rows:
        print(f"  {name:34s} {fmt(t)}   {t / base:6.2f}x {baseline}")


def side_by_side(rows, *, width=22, rounds=7, min_time=0.1, warm=False) -> None:
    """For each ``(name, ours, numpy's)`` print both medians and the median of the per-round
    ratios, timed interleaved (``interleaved_times``); ``warm``: call ``ours`` once first
    (its compile)."""
    for name, ours, theirs in rows:
        if warm:
            ours()
        samples = interleaved_times([("funcgrad", ours), ("numpy", theirs)], rounds=rounds, min_time=min_time)
        ratio = statistics.median(a / b for a, b in zip(samples["funcgrad"], samples["numpy"]))
        med = {k: statistics.median(v) for k, v in samples.items()}
        print(f"  {name:{width}s} funcgrad {fmt(med['funcgrad'])}   numpy {fmt(med['numpy'])}   ratio {ratio:5.2f}x")
