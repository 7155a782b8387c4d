"""Reverse mode through a 10,000-step while_loop (issue #5): gradient check against
central finite differences, and the memory used by the tape.

    python bench/while_tape_memory.py

The loop's trip count is decided at run time (a tolerance-free counter loop over a
state vector); the gradient program is staged once with make_jaxpr and evaluated, so
the tape is the run-time growable one (``while_tape``). Peak memory is measured with
tracemalloc around the gradient evaluation, with and without ``checkpoints``.
"""
from __future__ import annotations

import time
import tracemalloc

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

N_STEPS = 10_000
DIM = 64
rng = np.random.default_rng(0)
A = rng.normal(size=(DIM, DIM)) / np.sqrt(DIM) * 0.9


def loss(x, n, checkpoints=None):
    def body(c):
        return c[0] + 1e-3 * fnp.tanh(A @ c[0]), c[1] + 1

    return fnp.sum(lax.while_loop(lambda c: c[1] < n, body, (x, np.int64(0)), checkpoints=checkpoints)[0])


def measure(checkpoints):
    x = rng.normal(size=DIM)
    grad_prog = fg.make_jaxpr(fg.grad(lambda x, n: loss(x, n, checkpoints)))(x, np.int64(N_STEPS))
    tracemalloc.start()
    t0 = time.perf_counter()
    (g,) = fg.eval_closed_jaxpr(grad_prog, x, np.int64(N_STEPS))
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # central finite differences along a random direction
    d = rng.normal(size=DIM)
    eps = 1e-6
    fd = (loss(x + eps * d, N_STEPS) - loss(x - eps * d, N_STEPS)) / (2 * eps)
    return g @ d, fd, peak, elapsed


def main():
    per_step = (DIM + DIM) * 8  # residuals kept per iteration: the carry and tanh' (f64)
    print(f"while_loop with {N_STEPS} iterations, state f64[{DIM}]; residuals per iteration ~{per_step} B")
    for k in (None, 100):
        gd, fd, peak, t = measure(k)
        label = "no checkpoints" if k is None else f"checkpoints={k}"
        print(f"  {label:16s} grad.d = {gd:+.10e}  finite diff = {fd:+.10e}  rel err {abs(gd - fd) / abs(fd):.1e}"
              f"  peak memory {peak / 2**20:7.2f} MiB  time {t:6.2f} s")


if __name__ == "__main__":
    main()
