"""The cost of Ctrl-C polling in compiled loops (``lowering/interrupt.py``) on the jit
suite's W2 (elementwise chain), W6 (``while_loop`` Newton sqrt) and W7 (``scan`` RNN)
rows: the funcgrad calls alone, single-threaded, medians of the calling thread's CPU
time (steadier than wall time on a shared machine).

    python bench/interrupt_cost.py            # this checkout
    python bench/interrupt_cost.py OTHER_DIR  # and another checkout, alternating runs

With a second checkout (e.g. the commit before polling: ``git worktree add``), each
runs in a process of its own, three rounds alternating, and the table shows the medians
over rounds and the relative difference.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, statistics, time
import numpy as np
import funcgrad as fg, funcgrad.numpy as fnp
from funcgrad import lax
rng = np.random.default_rng(0)

def cpu(fn, repeat, number):
    fn()
    ts = []
    for _ in range(repeat):
        t = time.thread_time()
        for _ in range(number):
            fn()
        ts.append((time.thread_time() - t) / number)
    return statistics.median(ts)

out = {}
for n, rep, num in ((1_000, 31, 200), (100_000, 21, 5), (10_000_000, 7, 1)):
    x, y = rng.normal(size=n), rng.normal(size=n)
    f = fg.jit(lambda x, y: fnp.sin(x) * y + fnp.exp(-x * x) * 0.5 - fnp.tanh(y))
    out[f"W2 n={n:.0e}"] = cpu(lambda: f(x, y), rep, num)
a = rng.uniform(0.5, 100.0, size=100_000)
f = fg.jit(lambda a: lax.while_loop(lambda x: fnp.max(fnp.abs(x * x - a) - 1e-12 * a) > 0,
                                    lambda x: 0.5 * (x + a / x), a))
out["W6 newton while_loop"] = cpu(lambda: f(a), 15, 3)
W, xs = rng.normal(size=(64, 64)) * 0.1, rng.normal(size=(1000, 64))
rnn = lambda W, xs: fnp.sum(lax.scan(lambda h, x: (fnp.tanh(W @ h + x), None), np.zeros(64), xs)[0])
f, g = fg.jit(rnn), fg.jit(fg.grad(rnn))
out["W7 rnn scan forward"] = cpu(lambda: f(W, xs), 21, 5)
out["W7 rnn scan gradient"] = cpu(lambda: g(W, xs), 21, 3)
print(json.dumps(out))
"""


def run(checkout: str) -> dict:
    env = dict(os.environ, FUNCGRAD_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONPATH=checkout)
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=checkout, env=env, capture_output=True, text=True,
                         check=True)
    import json

    return json.loads(out.stdout.splitlines()[-1])


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [here] + sys.argv[1:2]
    rounds = 3 if len(dirs) > 1 else 1
    results: dict = {d: [] for d in dirs}
    for _ in range(rounds):
        for d in reversed(dirs):
            results[d].append(run(d))
    med = {d: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for d, rs in results.items()}
    print("funcgrad CPU time per call (medians" + (f" of {rounds} alternating rounds)" if rounds > 1 else ")"))
    for k in med[here]:
        row = f"  {k:22s} this checkout {med[here][k] * 1e3:9.3f} ms"
        if len(dirs) > 1:
            other = med[dirs[1]][k]
            row += f" | other {other * 1e3:9.3f} ms | {100 * (med[here][k] / other - 1):+5.1f} %"
        print(row)


if __name__ == "__main__":
    main()
