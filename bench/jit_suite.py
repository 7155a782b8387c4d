"""The jit benchmark suite (issue #6): funcgrad.jit vs NumPy eager, and vs jax.jit and
numba when they are installed (optional; skipped cleanly when absent).

    python bench/jit_suite.py            # all workloads
    python bench/jit_suite.py 2 3        # only workloads 2 and 3

Every library runs single-threaded: OPENBLAS/OMP/MKL threads are set to 1 before any
import (bench/common.py), and XLA is told to use one CPU thread. Times are medians of
wall time per call (JAX works on other threads, so CPU time would undercount it); ratios
are against NumPy measured in the same run.
Workloads (float64):
 1 dispatch of a jitted ``x + 1.0`` on a 0-d array
 2 ``sin(x)*y + exp(-x*x)*0.5 - tanh(y)`` at n = 1e3, 1e5, 1e7
 3 ``sum(x*x)``, logsumexp, mean and var along axis 1 of 1000x1000
 4 matmul 256/512/1024 and 64 batched 64x64
 5 value_and_grad of a 784-256-10 tanh MLP with softmax cross-entropy, batch 128
 6 Newton sqrt with ``while_loop`` on 1e5 values
 7 1000-step ``scan`` RNN, 64 hidden, forward and gradient (NumPy: a hand-written
   forward and backward pass)
 8 per-example gradients ``vmap(grad)`` 1000x100
 9 ``hessian`` of ``sum(log(1+exp(A x)))``, A 200x100
10 first-call latency (trace+compile+run) of a fresh 50-op elementwise function and its grad
11 peak memory of (2) at n = 1e7
12 1000 training steps of (5) with default threading (no BLAS environment variable,
   in a fresh process) while another process burns a core: median and p90 step time
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
# W10 measures compilation: the on-disk cache would turn later runs into loads
# (bench/disk_cache_bench.py measures those).
os.environ.setdefault("FUNCGRAD_NO_DISK_CACHE", "1")

# (W12's child process measures the default BLAS threading: common must not pin it)
if os.environ.get("FUNCGRAD_BENCH_CHILD"):
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = ""
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's funcgrad
import common  # noqa: E402,I001  (first: sets the BLAS thread count before NumPy loads)
import numpy as np  # noqa: E402
from common import fmt  # noqa: E402
from jit_suite_fifty import fifty_op  # noqa: E402


def median_time(fn, **kw):
    # Wall time for every library: JAX computes on its own threads, which the calling
    # thread's CPU clock would not see. Medians over many calls absorb the noise.
    return common.median_time(fn, clock=time.perf_counter, **kw)


import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad import lax  # noqa: E402

try:  # optional comparisons
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None
try:
    import numba
except ImportError:
    numba = None

rng = np.random.default_rng(0)
RESULTS = []


def report(name, times, targets=""):
    """times: {library: seconds}; prints a row with ratios against numpy."""
    base = times.get("numpy")
    cells = []
    for lib in ("numpy", "funcgrad", "jax", "numba"):
        if lib in times:
            t = times[lib]
            ratio = f" ({t / base:5.2f}x)" if base else ""
            cells.append(f"{lib} {fmt(t).strip()}{ratio}")
    line = f"{name:42s} " + " | ".join(cells) + (f"   [{targets}]" if targets else "")
    print(line, flush=True)
    RESULTS.append(line)


def block(x):
    return x.block_until_ready() if hasattr(x, "block_until_ready") else x


def w1_dispatch():
    x = np.asarray(1.0)
    f = fg.jit(lambda x: x + 1.0)
    f(x)
    times = {"numpy": median_time(lambda: np.add(x, 1.0)), "funcgrad": median_time(lambda: f(x))}
    if jax:
        jf = jax.jit(lambda x: x + 1.0)
        xj = jnp.asarray(1.0)
        block(jf(xj))
        times["jax"] = median_time(lambda: block(jf(xj)))
    if numba:
        nf = numba.njit(lambda x: x + 1.0)
        nf(x)
        times["numba"] = median_time(lambda: nf(x))
    report("1 dispatch x+1.0 (0-d)", times, "target funcgrad <= 3 us")


def elementwise(m, x, y):
    return m.sin(x) * y + m.exp(-x * x) * 0.5 - m.tanh(y)


def w2_elementwise():
    for n in (1_000, 100_000, 10_000_000):
        x, y = rng.normal(size=n), rng.normal(size=n)
        f = fg.jit(lambda x, y: elementwise(fnp, x, y))
        f(x, y)
        rep = 21 if n < 1e7 else 5
        times = {"numpy": median_time(lambda: elementwise(np, x, y), repeat=rep),
                 "funcgrad": median_time(lambda: f(x, y), repeat=rep)}
        if jax:
            jf = jax.jit(lambda x, y: elementwise(jnp, x, y))
            xj, yj = jnp.asarray(x), jnp.asarray(y)
            block(jf(xj, yj))
            times["jax"] = median_time(lambda: block(jf(xj, yj)), repeat=rep)
        if numba:
            nf = numba.njit(lambda x, y: np.sin(x) * y + np.exp(-x * x) * 0.5 - np.tanh(y))
            nf(x, y)
            times["numba"] = median_time(lambda: nf(x, y), repeat=rep)
        report(f"2 elementwise chain n={n:.0e}", times, "target <= 0.5x numpy at 1e7" if n == 10_000_000 else "")


def w3_reductions():
    x = rng.normal(size=(1000, 1000))
    cases = {
        "sum(x*x)": (lambda m, x: m.sum(x * x), "target <= 1x numpy"),
        "logsumexp axis 1": (lambda m, x: m.log(m.sum(m.exp(x - m.max(x, axis=1, keepdims=True)), axis=1)) + m.max(x, axis=1), ""),
        "mean axis 1": (lambda m, x: m.mean(x, axis=1), ""),
        "var axis 1": (lambda m, x: m.var(x, axis=1), ""),
    }
    for name, (fn, tgt) in cases.items():
        f = fg.jit(lambda x, fn=fn: fn(fnp, x))
        f(x)
        times = {"numpy": median_time(lambda: fn(np, x)), "funcgrad": median_time(lambda: f(x))}
        if jax:
            jf = jax.jit(lambda x, fn=fn: fn(jnp, x))
            xj = jnp.asarray(x)
            block(jf(xj))
            times["jax"] = median_time(lambda: block(jf(xj)))
        report(f"3 {name} 1000x1000", times, tgt)


def w4_matmul():
    for n in (256, 512, 1024):
        a, b = rng.normal(size=(n, n)), rng.normal(size=(n, n))
        f = fg.jit(lambda a, b: a @ b)
        f(a, b)
        times = {"numpy": median_time(lambda: a @ b, repeat=7), "funcgrad": median_time(lambda: f(a, b), repeat=7)}
        if jax:
            jf = jax.jit(lambda a, b: a @ b)
            aj, bj = jnp.asarray(a), jnp.asarray(b)
            block(jf(aj, bj))
            times["jax"] = median_time(lambda: block(jf(aj, bj)), repeat=7)
        report(f"4 matmul {n}", times, "target <= 1.1x numpy")
    a, b = rng.normal(size=(64, 64, 64)), rng.normal(size=(64, 64, 64))
    f = fg.jit(lambda a, b: a @ b)
    f(a, b)
    report("4 batched matmul 64x(64x64)", {"numpy": median_time(lambda: a @ b), "funcgrad": median_time(lambda: f(a, b))},
           "target <= 1.1x numpy")


def w5_mlp():
    sys.path.insert(0, os.path.dirname(__file__))
    from eager_grad import PARAMS, X, Y, mlp_loss, mlp_numpy_value_and_grad

    f = fg.jit(fg.value_and_grad(lambda p, x, y: mlp_loss(fnp, p, x, y)))
    f(PARAMS, X, Y)
    # The floor of any implementation calling the same BLAS: the two 128x784x256 products
    # (forward x @ w1, weight gradient x.T @ da) alone, against the whole NumPy step.
    w1, da = PARAMS[0], np.tanh(X @ PARAMS[0])
    fns = [("numpy", lambda: mlp_numpy_value_and_grad(PARAMS, X, Y)), ("funcgrad", lambda: f(PARAMS, X, Y)),
           ("gemms", lambda: (X @ w1, X.T @ da))]
    # Interleaved rounds, so load that comes and goes on a shared machine hits all alike;
    # wall time, then the process's CPU time (all its threads: funcgrad's pool included),
    # which a busy machine inflates far less.
    wall = {k: statistics.median(v) for k, v in common.interleaved_times(fns, clock=time.perf_counter).items()}
    cpu = {k: statistics.median(v) for k, v in common.interleaved_times(fns, clock=time.process_time).items()}
    gemms = wall.pop("gemms")
    times = dict(wall)
    if jax:
        jf = jax.jit(jax.value_and_grad(lambda p, x, y: mlp_loss(jnp, p, x, y)))
        pj = tuple(jnp.asarray(p) for p in PARAMS)
        block(jf(pj, X, Y)[0])
        times["jax"] = median_time(lambda: block(jf(pj, X, Y)[0]))
    report("5 MLP value_and_grad batch 128", times, "target <= 0.85x")
    line = (f"5 (floor: its two 784-wide GEMMs alone)    {fmt(gemms).strip()} = {gemms / times['numpy']:.2f}x numpy; "
            f"funcgrad beyond them {fmt(times['funcgrad'] - gemms).strip()}, numpy {fmt(times['numpy'] - gemms).strip()}")
    line += (f"\n5 (CPU time)  numpy {fmt(cpu['numpy']).strip()} | funcgrad {fmt(cpu['funcgrad']).strip()} "
             f"({cpu['funcgrad'] / cpu['numpy']:.2f}x) | GEMMs alone {fmt(cpu['gemms']).strip()} "
             f"({cpu['gemms'] / cpu['numpy']:.2f}x)")
    print(line, flush=True)
    RESULTS.append(line)


def w6_newton():
    a = rng.uniform(0.5, 100.0, size=100_000)

    def newton(m, loop, a):
        return loop(lambda x: m.max(m.abs(x * x - a) - 1e-12 * a) > 0, lambda x: 0.5 * (x + a / x), a)

    f = fg.jit(lambda a: newton(fnp, lax.while_loop, a))
    f(a)

    def np_newton(a):
        x = a.copy()
        while np.max(np.abs(x * x - a) - 1e-12 * a) > 0:
            x = 0.5 * (x + a / x)
        return x

    times = {"numpy": median_time(lambda: np_newton(a), repeat=7), "funcgrad": median_time(lambda: f(a), repeat=7)}
    if jax:
        jf = jax.jit(lambda a: newton(jnp, jax.lax.while_loop, a))
        aj = jnp.asarray(a)
        block(jf(aj))
        times["jax"] = median_time(lambda: block(jf(aj)), repeat=7)
    report("6 Newton sqrt while_loop 1e5", times)


def w7_rnn():
    W = rng.normal(size=(64, 64)) * 0.1
    xs = rng.normal(size=(1000, 64))

    def rnn(m, scan, W, xs):
        h, _ = scan(lambda h, x: (m.tanh(W @ h + x), None), np.zeros(64), xs)
        return m.sum(h)

    def np_rnn(W, xs):
        h = np.zeros(64)
        for x in xs:
            h = np.tanh(W @ h + x)
        return h.sum()

    def np_rnn_grad(W, xs):
        hs = [np.zeros(64)]
        for x in xs:
            hs.append(np.tanh(W @ hs[-1] + x))
        dW, dh = np.zeros_like(W), np.ones(64)
        for t in range(len(xs), 0, -1):
            da = dh * (1 - hs[t] * hs[t])
            dW += np.outer(da, hs[t - 1])
            dh = W.T @ da
        return dW

    f = fg.jit(lambda W, xs: rnn(fnp, lax.scan, W, xs))
    g = fg.jit(fg.grad(lambda W, xs: rnn(fnp, lax.scan, W, xs)))
    f(W, xs)
    g(W, xs)
    times = {"numpy": median_time(lambda: np_rnn(W, xs), repeat=7), "funcgrad": median_time(lambda: f(W, xs), repeat=7)}
    times_g = {"numpy": median_time(lambda: np_rnn_grad(W, xs), repeat=7), "funcgrad": median_time(lambda: g(W, xs), repeat=7)}
    if jax:
        jf = jax.jit(lambda W, xs: rnn(jnp, jax.lax.scan, W, xs))
        jg = jax.jit(jax.grad(lambda W, xs: rnn(jnp, jax.lax.scan, W, xs)))
        block(jf(W, xs))
        block(jg(W, xs))
        times["jax"] = median_time(lambda: block(jf(W, xs)), repeat=7)
        times_g["jax"] = median_time(lambda: block(jg(W, xs)), repeat=7)
    report("7 RNN scan 1000x64 forward", times)
    report("7 RNN scan 1000x64 gradient", times_g, "target <= 0.12x")


def w8_per_example():
    xs, w = rng.normal(size=(1000, 100)), rng.normal(size=100)
    ys = xs @ rng.normal(size=100)
    f = fg.jit(fg.vmap(fg.grad(lambda w, x, y: (fnp.dot(x, w) - y) ** 2), in_axes=(None, 0, 0)))
    f(w, xs, ys)
    times = {"numpy": median_time(lambda: 2.0 * (xs @ w - ys)[:, None] * xs), "funcgrad": median_time(lambda: f(w, xs, ys))}
    if jax:
        jf = jax.jit(jax.vmap(jax.grad(lambda w, x, y: (jnp.dot(x, w) - y) ** 2), in_axes=(None, 0, 0)))
        block(jf(w, xs, ys))
        times["jax"] = median_time(lambda: block(jf(w, xs, ys)))
    report("8 per-example grads 1000x100 (numpy=vectorised)", times)


def w9_hessian():
    A, x = rng.normal(size=(200, 100)), rng.normal(size=100)
    f = fg.jit(fg.hessian(lambda x: fnp.sum(fnp.log(1 + fnp.exp(A @ x)))))
    f(x)

    def np_h(x):
        s = 1 / (1 + np.exp(-(A @ x)))
        return (A.T * (s * (1 - s))) @ A

    times = {"numpy": median_time(lambda: np_h(x)), "funcgrad": median_time(lambda: f(x))}
    if jax:
        jf = jax.jit(jax.hessian(lambda x: jnp.sum(jnp.log(1 + jnp.exp(A @ x)))))
        block(jf(x))
        times["jax"] = median_time(lambda: block(jf(x)))
    report("9 hessian logistic A 200x100 (numpy=by hand)", times, "target <= 2x")


def w10_first_call():
    x = rng.normal(size=1000)
    samples, samples_g = [], []
    for k in range(5):  # fresh functions each time: nothing cached
        f = fg.jit(lambda x, k=k: fifty_op(fnp, x, k))
        t0 = time.perf_counter()
        f(x)
        samples.append(time.perf_counter() - t0)
        g = fg.jit(fg.grad(lambda x, k=k: fnp.sum(fifty_op(fnp, x, k))))
        t0 = time.perf_counter()
        g(x)
        samples_g.append(time.perf_counter() - t0)
    times = {"funcgrad": float(np.median(samples))}
    times_g = {"funcgrad": float(np.median(samples_g))}
    if jax:
        js, jgs = [], []
        for k in range(5):
            jf = jax.jit(lambda x, k=k: fifty_op(jnp, x, k))
            t0 = time.perf_counter()
            block(jf(x))
            js.append(time.perf_counter() - t0)
            jg = jax.jit(jax.grad(lambda x, k=k: jnp.sum(fifty_op(jnp, x, k))))
            t0 = time.perf_counter()
            block(jg(x))
            jgs.append(time.perf_counter() - t0)
        times["jax"], times_g["jax"] = float(np.median(js)), float(np.median(jgs))
    report("10 first call, fresh 50-op function", times, "target <= 50 ms")
    report("10 first call, its grad", times_g, "target <= 100 ms")


def w11_memory():
    n = 10_000_000
    x, y = rng.normal(size=n), rng.normal(size=n)
    f = fg.jit(lambda x, y: elementwise(fnp, x, y))
    f(x, y)
    out_mb = n * 8 / 2**20
    for name, fn in (("numpy", lambda: elementwise(np, x, y)), ("funcgrad", lambda: f(x, y))):
        tracemalloc.start()
        fn()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        line = f"11 peak memory of (2) at 1e7: {name:8s} {peak / 2**20:8.1f} MiB ({peak / 2**20 / out_mb:.1f} output arrays)"
        print(line, flush=True)
        RESULTS.append(line)


def _training_steps_child():
    """(run in a fresh process with no BLAS environment variable) 1000 steps of (5)."""
    from eager_grad import PARAMS, X, Y, mlp_loss

    step = fg.jit(fg.value_and_grad(lambda p, x, y: mlp_loss(fnp, p, x, y)))
    params = PARAMS
    step(params, X, Y)
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        samples = []
        for _ in range(1000):
            t0 = time.perf_counter()
            loss, grads = step(params, X, Y)
            samples.append(time.perf_counter() - t0)
            params = tuple(p - 0.01 * g for p, g in zip(params, grads))
    finally:
        burner.kill()
        burner.wait()
    print(json.dumps({"median": float(np.median(samples)), "p90": float(np.percentile(samples, 90))}))


def w12_training_steps():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["FUNCGRAD_BENCH_CHILD"] = "1"
    out = subprocess.run([sys.executable, __file__, "steps-child"], env=env, capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    line = (f"12 MLP 1000 steps, default threads, a core busy: median {fmt(r['median']).strip()} | "
            f"p90 {fmt(r['p90']).strip()} ({r['p90'] / r['median']:.2f}x median)   [target p90 <= 1.5x median]")
    print(line, flush=True)
    RESULTS.append(line)


WORKLOADS = {1: w1_dispatch, 2: w2_elementwise, 3: w3_reductions, 4: w4_matmul, 5: w5_mlp, 6: w6_newton,
             7: w7_rnn, 8: w8_per_example, 9: w9_hessian, 10: w10_first_call, 11: w11_memory,
             12: w12_training_steps}

if __name__ == "__main__":
    if sys.argv[1:] == ["steps-child"]:
        _training_steps_child()
        sys.exit(0)
    chosen = [int(a) for a in sys.argv[1:]] or sorted(WORKLOADS)
    print(f"funcgrad {fg.__version__}; jax {'%s' % jax.__version__ if jax else 'absent'}; "
          f"numba {'%s' % numba.__version__ if numba else 'absent'}; single-threaded; wall-time medians")
    for k in chosen:
        WORKLOADS[k]()
