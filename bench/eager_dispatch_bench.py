"""Issue #17 rows 1-4: eager funcgrad.numpy calls vs NumPy, and jit dispatch cost.

    python bench/eager_dispatch_bench.py [--rounds N]

Eager rows: ``fnp.add/sin/matmul/concatenate/where`` on 3-element operands (3x3 for
matmul) and on 10^4 elements (100x100 for matmul), timed side by side with the same
NumPy call (``interleaved_times``: each round times every contender, so load on this
shared machine hits both alike). Reported: the median over rounds of the per-round
ratio, the minimum time per call of each, and the fast path's added time per call
(``+ns``: the fast minimum less NumPy's). The general path (``fnp.add.general``, what
every call took before the fast path) is shown for reference.

At 10^4 elements NumPy's own time depends on where ``malloc`` puts the output relative
to the operands (64-byte alignment, 4 KiB aliasing): ``add`` takes 2.0 us in one process
and 3.9 us in another. Both contenders get the same output address (each call frees the
last result first), so the ratio compares like for like, but the same ~0.1 us added
cost is 2.5 % of one layout's time and 5 % of the other's: compare ``+ns`` across runs.

``np+ro``: the NumPy call followed by what the values contract adds to any result (made
read-only, returned as a read-only ``Array`` view, as ``core.array`` freezes outputs), in
plain Python: ``fast/ro`` is funcgrad against NumPy doing the same. At 10^4 elements that
view alone can cost NumPy ~0.3 us for a 160 KB output (``concatenate``) and nothing for an
80 KB one (``add``): a memory-layout effect of the extra object, measured, not explained.

Dispatch rows: a cached ``jit`` call with a 0-d array, a Python float, and a dict of ten
4x4 arrays plus a Python float; minimum and median over rounds of the time per call.
Each row is timed twice: the call as users make it (the native entry of
``lowering/native_entry.py`` when it is available) and the Python path it falls back
to (``JittedFunction._call``, what every call took before).
JAX/autograd/numba columns are not measured here (not installed on this machine).
Times are the calling thread's CPU time (``bench/common.py``).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's funcgrad
import numpy as np  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402

from common import interleaved_times  # noqa: E402


def _eager_cases(n: int):
    from funcgrad.core.array import Array

    def ro(fn):  # the NumPy call plus the values contract's read-only Array view
        def call():
            out = fn()
            out.setflags(write=False)
            return out.view(Array)
        return call

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=n), rng.normal(size=n)
    c = a > 0
    m = 3 if n == 3 else 100
    A = rng.normal(size=(m, m))
    rows = [
        ("add", lambda: fnp.add(a, b), lambda: fnp.add.general(a, b), lambda: np.add(a, b)),
        ("sin", lambda: fnp.sin(a), lambda: fnp.sin.general(a), lambda: np.sin(a)),
        ("matmul", lambda: fnp.matmul(A, A), lambda: fnp.matmul.general(A, A), lambda: np.matmul(A, A)),
        ("concatenate", lambda: fnp.concatenate([a, b]), lambda: fnp.concatenate.general([a, b]),
         lambda: np.concatenate([a, b])),
        ("where", lambda: fnp.where(c, a, b), lambda: fnp.where.general(c, a, b), lambda: np.where(c, a, b)),
    ]
    return [(name, fast, general, ref, ro(ref)) for name, fast, general, ref in rows]


def eager_rows(rounds: int) -> None:
    # The steady state: a process compiles the native entry after its first few hundred
    # eager calls (numpy_api/eager_native.py); here it is made before any timing.
    from funcgrad.numpy_api import eager_native

    eager_native.enable()
    print("eager funcgrad.numpy vs NumPy (ratio: median over rounds of per-round ratios; times: minimum)")
    print(f"  {'op':12s} {'n':>6s} {'fast':>9s} {'general':>9s} {'numpy':>9s} {'np+ro':>9s} {'fast/np':>8s}"
          f" {'general/np':>10s} {'+ns':>6s} {'fast/ro':>8s}")
    for n in (3, 10_000):
        for name, fast, general, ref, ref_ro in _eager_cases(n):
            t = interleaved_times([("fast", fast), ("general", general), ("numpy", ref), ("ro", ref_ro)],
                                  rounds=rounds, min_time=0.02)
            ratio = statistics.median(f / r for f, r in zip(t["fast"], t["numpy"]))
            gratio = statistics.median(f / r for f, r in zip(t["general"], t["numpy"]))
            roratio = statistics.median(f / r for f, r in zip(t["fast"], t["ro"]))
            us = {k: min(v) * 1e6 for k, v in t.items()}
            print(f"  {name:12s} {n:6d} {us['fast']:7.2f}us {us['general']:7.2f}us {us['numpy']:7.2f}us "
                  f"{us['ro']:7.2f}us {ratio:7.2f}x {gratio:9.2f}x {(us['fast'] - us['numpy']) * 1e3:6.0f} "
                  f"{roratio:7.2f}x")


def dispatch_rows(rounds: int) -> None:
    rng = np.random.default_rng(1)
    f = fg.jit(lambda x: x + 1.0)
    x0 = np.asarray(1.0)
    params = {f"w{i}": rng.normal(size=(4, 4)) for i in range(10)}
    step = fg.jit(lambda p, lr: {k: v - lr * v for k, v in p.items()})
    for _ in range(2):  # trace, then register the plan
        f(x0), f(2.0), step(params, 0.1)
    rows = [("0-d array", lambda: f(x0)), ("Python float", lambda: f(2.0)),
            ("dict of 10 4x4 + float", lambda: step(params, 0.1))]
    py = getattr(type(f), "_call", None)  # (None: a checkout from before the native entry)
    if py is not None:
        rows += [("0-d array (Python path)", lambda: py(f, x0)), ("Python float (Python path)", lambda: py(f, 2.0)),
                 ("dict (Python path)", lambda: py(step, params, 0.1))]
    t = interleaved_times(rows, rounds=rounds, min_time=0.02)
    native = type(type(f).__dict__["__call__"]).__name__ == "method_descriptor"
    print(f"\njit dispatch of a cached call (minimum / median over rounds; native entry: {native})")
    for name, v in t.items():
        print(f"  {name:28s} {min(v) * 1e6:7.2f} us  {statistics.median(v) * 1e6:7.2f} us")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--dispatch-only", action="store_true", help="only the jit dispatch rows")
    a = p.parse_args()
    if not a.dispatch_only:
        eager_rows(a.rounds)
    dispatch_rows(a.rounds)


if __name__ == "__main__":
    main()
