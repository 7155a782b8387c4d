"""``jit(random.normal)(key, (10**7,))`` against NumPy's ``standard_normal(10**7)`` (issue #13).

    python bench/random_bench.py [n]

Both measured side by side in one run (medians of interleaved rounds, thread CPU time,
after a warm-up call that compiles), printed with the ratio; the goal is <= 1x. Also
``jit(random.uniform)`` against ``default_rng().random``, for the cost of the bits alone.
"""
from __future__ import annotations  # noqa: I001  (common before NumPy: it sets one BLAS thread)

import statistics
import sys

import common  # noqa: F401
import numpy as np

import funcgrad as fg
from common import fmt, interleaved_times
from funcgrad import random


def main(n: int = 10**7) -> None:
    key = random.PRNGKey(0)
    rng = np.random.default_rng(0)
    normal = fg.jit(lambda k: random.normal(k, (n,)))
    uniform = fg.jit(lambda k: random.uniform(k, (n,)))
    normal(key), uniform(key)  # compile
    samples = interleaved_times([
        ("funcgrad jit(random.normal)", lambda: normal(key)),
        ("numpy standard_normal", lambda: rng.standard_normal(n)),
        ("funcgrad jit(random.uniform)", lambda: uniform(key)),
        ("numpy random", lambda: rng.random(n)),
    ], rounds=5, min_time=0.2)
    med = {name: statistics.median(s) for name, s in samples.items()}
    print(f"\nrandom numbers, n = {n:,} float64")
    for fg_name, np_name in (("funcgrad jit(random.normal)", "numpy standard_normal"),
                             ("funcgrad jit(random.uniform)", "numpy random")):
        ratio = statistics.median(a / b for a, b in zip(samples[fg_name], samples[np_name]))
        print(f"  {fg_name:30s} {fmt(med[fg_name])}   {np_name:22s} {fmt(med[np_name])}   ratio {ratio:5.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10**7)
