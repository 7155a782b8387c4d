"""Eager reverse-mode overhead (issue #3): funcgrad vs autograd vs hand-written NumPy.

    python bench/eager_grad.py

1. value_and_grad of a 784-256-10 tanh MLP with softmax cross-entropy, batch 128,
   against a hand-written NumPy forward+backward pass (autograd: ~1.7x).
2. Per-example gradients of linear regression (1000 x 100) by a Python loop of
   grad calls, against the same loop with a hand-written gradient (autograd: ~57x).
autograd is optional: it is measured when installed, skipped otherwise.

Contenders are timed interleaved (round after round), so load that comes and goes on a
shared machine hits them alike; funcgrad / autograd is a median of per-round ratios.
The MLP is timed in one process per library (see ``main``): glibc's heap state, which
decides how many page faults each call takes, depends on what else ran in the process.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from common import fmt, interleaved_times, table  # first: it pins BLAS to one thread before NumPy loads

# isort: split
import numpy as np

# Measure this checkout's funcgrad, whatever an installed (e.g. editable) copy points to.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # optional comparison
    autograd = anp = None

rng = np.random.default_rng(0)
W1, b1 = rng.normal(size=(784, 256)) * 0.05, np.zeros(256)
W2, b2 = rng.normal(size=(256, 10)) * 0.05, np.zeros(10)
X = rng.normal(size=(128, 784))
Y = np.eye(10)[rng.integers(0, 10, 128)]
PARAMS = (W1, b1, W2, b2)


def mlp_loss(np_, params, x, y):
    w1, c1, w2, c2 = params
    h = np_.tanh(x @ w1 + c1)
    logits = h @ w2 + c2
    m = np_.max(logits, axis=1, keepdims=True)
    logp = logits - m - np_.log(np_.sum(np_.exp(logits - m), axis=1, keepdims=True))
    return -np_.sum(logp * y) / x.shape[0]


def mlp_numpy_value_and_grad(params, x, y):
    w1, c1, w2, c2 = params
    a = x @ w1 + c1
    h = np.tanh(a)
    logits = h @ w2 + c2
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=1, keepdims=True)
    logp = logits - m - np.log(s)
    n = x.shape[0]
    loss = -np.sum(logp * y) / n
    dlogits = (e / s - y) / n
    dw2, dc2 = h.T @ dlogits, dlogits.sum(0)
    da = (dlogits @ w2.T) * (1 - h * h)
    return loss, (x.T @ da, da.sum(0), dw2, dc2)


def per_example_numpy(w, xs, ys):
    return [2.0 * (x @ w - y) * x for x, y in zip(xs, ys)]


def _report(title, samples, baseline):
    """Print medians of interleaved ``samples`` {name: [seconds per round]}, ratios to the
    baseline, and funcgrad / autograd as the median of per-round ratios."""
    table(title, [(name, statistics.median(ts)) for name, ts in samples.items()], baseline)
    names = list(samples)
    if len(names) == 3:  # baseline, funcgrad, autograd
        ratios = [f / a for f, a in zip(samples[names[1]], samples[names[2]])]
        print(f"  funcgrad / autograd (median of per-round ratios): {statistics.median(ratios):.2f}")


def _mlp_contender(lib):
    if lib == "funcgrad":
        vg = fg.value_and_grad(lambda p: mlp_loss(fnp, p, X, Y))
        (l1, g1), (l2, g2) = vg(PARAMS), mlp_numpy_value_and_grad(PARAMS, X, Y)
        assert np.allclose(l1, l2) and all(np.allclose(a, b) for a, b in zip(g1, g2))
        return "funcgrad value_and_grad (eager)", lambda: vg(PARAMS)
    avg = autograd.value_and_grad(lambda p: mlp_loss(anp, p, X, Y))
    return "autograd value_and_grad", lambda: avg(PARAMS)


def mlp_in_this_process(lib):
    """Time one library's MLP against the NumPy baseline, interleaved; print the samples."""
    samples = interleaved_times([("numpy hand-written", lambda: mlp_numpy_value_and_grad(PARAMS, X, Y)),
                                 _mlp_contender(lib)])
    print(json.dumps(samples))


def main():
    # The MLP allocates ~0.25-1.6 MB arrays on every call. Which of them glibc serves
    # from the heap or from fresh mmap pages, and whether it trims the heap between
    # calls, depends on what earlier allocations set its thresholds to -- so one
    # library's pattern changes the others' page faults (by up to 2x on autograd). Each
    # library is therefore timed in a process of its own, against NumPy in that process;
    # funcgrad / autograd is the ratio of those two ratios.
    libs = ["funcgrad"] + (["autograd"] if autograd is not None else [])
    runs = {}
    for lib in libs:
        out = subprocess.run([sys.executable, __file__, "--mlp", lib], check=True, capture_output=True, text=True)
        runs[lib] = json.loads(out.stdout.strip().splitlines()[-1])
    title = "MLP 784-256-10 tanh, softmax CE, batch 128: value_and_grad (one process per library)"
    print(f"\n{title}")
    rel = {}
    for lib, samples in runs.items():
        (base_name, base), (name, ts) = samples.items()
        rel[lib] = statistics.median([t / b for t, b in zip(ts, base)])
        print(f"  {base_name:34s} {fmt(statistics.median(base))}   (the {lib} process)")
        print(f"  {name:34s} {fmt(statistics.median(ts))}   {rel[lib]:6.2f}x {base_name} (median of per-round ratios)")
    if len(rel) == 2:
        print(f"  funcgrad / autograd (ratio of the ratios): {rel['funcgrad'] / rel['autograd']:.2f}")

    xs, w = rng.normal(size=(1000, 100)), rng.normal(size=100)
    ys = xs @ rng.normal(size=100)
    loss = lambda np_: (lambda w, x, y: (x @ w - y) ** 2)  # noqa: E731
    g = fg.grad(loss(fnp))
    assert np.allclose(g(w, xs[0], ys[0]), per_example_numpy(w, xs[:1], ys[:1])[0])
    contenders = [("numpy loop, hand-written grad", lambda: per_example_numpy(w, xs, ys)),
                  ("funcgrad loop of grad (eager)", lambda: [g(w, x, y) for x, y in zip(xs, ys)])]
    if autograd is not None:
        ag = autograd.grad(loss(anp))
        contenders.append(("autograd loop of grad", lambda: [ag(w, x, y) for x, y in zip(xs, ys)]))
    _report("Per-example gradients, linear regression 1000 x 100 (Python loop, one process)",
            interleaved_times(contenders), "numpy loop, hand-written grad")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--mlp"]:
        mlp_in_this_process(sys.argv[2])
    else:
        main()
