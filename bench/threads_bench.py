"""Issue #17 part B: funcgrad's threaded loop nests and vector math vs NumPy.

    python bench/threads_bench.py          # rows, then the page-fault study of the 1e7 row

Each row times NumPy, funcgrad on one thread and funcgrad on two threads side by side
(``common.interleaved_times``: every round times each in turn, so load that comes and
goes hits all alike); the figures are medians of the rounds in wall time (two threads
cannot be timed with one thread's CPU clock), with the single-thread CPU time beside
them. The machine is shared: the load average (``os.getloadavg``) is printed with the
table; on a machine whose other core is busy the two-thread column cannot beat one
thread.

The second part explains why the n = 1e7 row varies from run to run: per call, user and
system CPU time and minor page faults (``resource.getrusage``) of NumPy (five fresh
80 MB temporaries), funcgrad (one fresh output) and funcgrad writing into a reused
output, with NumPy's transparent-huge-page ``madvise`` on and off.
"""
from __future__ import annotations

import ctypes
import os
import resource
import statistics
import time

# W: this measures compiled code, not compilation (as bench/jit_suite.py)
os.environ.setdefault("FUNCGRAD_NO_DISK_CACHE", "1")

import common  # noqa: E402,I001  (first: sets the BLAS thread count before NumPy loads)
import numpy as np  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad.lowering import compile_jaxpr, threadpool  # noqa: E402

rng = np.random.default_rng(0)


def chain(m, x, y):
    return m.sin(x) * y + m.exp(-x * x) * 0.5 - m.tanh(y)


def logsumexp(m, x):
    mx = m.max(x, axis=1, keepdims=True)
    return m.log(m.sum(m.exp(x - mx), axis=1)) + mx[:, 0]


def on(threads, f):
    def run(*a):
        threadpool.set_num_threads(threads)
        return f(*a)
    return run


def row(name, np_fn, fg_fn, args, per=None, rounds=9):
    fg_fn(*args)
    fns = [("numpy", lambda: np_fn(*args)), ("fg 1 thread", lambda: on(1, fg_fn)(*args)),
           ("fg 2 threads", lambda: on(2, fg_fn)(*args))]
    wall = common.interleaved_times(fns, rounds=rounds, min_time=0.2, clock=time.perf_counter)
    cpu = common.interleaved_times(fns[:2], rounds=max(3, rounds // 2), min_time=0.2)
    med = {k: statistics.median(v) for k, v in wall.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    unit = (lambda t: f"{t / per * 1e9:6.2f} ns/el") if per else common.fmt
    base = med["numpy"]
    cells = [f"{k} {unit(t).strip()} ({t / base:4.2f}x)" for k, t in med.items()]
    cells.append(f"[cpu: numpy {unit(cmed['numpy']).strip()}, fg 1 thread {unit(cmed['fg 1 thread']).strip()} "
                 f"({cmed['fg 1 thread'] / cmed['numpy']:4.2f}x)]")
    print(f"{name:34s} " + " | ".join(cells), flush=True)


def rows():
    n = 10_000_000
    x, y = rng.normal(size=n), rng.normal(size=n)
    row("chain n=1e7", lambda a, b: chain(np, a, b), fg.jit(lambda a, b: chain(fnp, a, b)), (x, y), rounds=7)
    a = rng.normal(size=(1000, 1000))
    row("logsumexp axis 1, 1000x1000", lambda v: logsumexp(np, v), fg.jit(lambda v: logsumexp(fnp, v)), (a,))
    row("sum(x*x) 1000x1000", lambda v: np.sum(v * v), fg.jit(lambda v: fnp.sum(v * v)), (a,))
    # Vector math per element: both write into a reused output (no allocation, no page
    # faults); funcgrad through its pointer entry.
    small = rng.uniform(-5, 5, 100_000)
    out, out2 = np.empty_like(small), np.zeros_like(small)
    for name in ("exp", "tanh", "log"):
        arg = np.abs(small) + 0.1 if name == "log" else small
        npf = getattr(np, name)
        exe = compile_jaxpr(fg.make_jaxpr(getattr(fnp, name))(arg))
        ptrs = (ctypes.c_void_p * 2)(arg.ctypes.data, out2.ctypes.data)
        row(f"{name} 1e5 (into a reused output)", lambda v, npf=npf: npf(v, out=out),
            lambda v, exe=exe, ptrs=ptrs: exe._entry_ptrs(ctypes.addressof(ptrs)), (arg,), per=arg.size)


def per_thread():
    """The 1e7 chain on two threads: wall time and the process's CPU time (all threads)
    per call. CPU / wall is how many cores the call really had; elements per CPU-second
    is the per-thread throughput, which a quiet machine turns into wall time."""
    n = 10_000_000
    x, y = rng.normal(size=n), rng.normal(size=n)
    exe = compile_jaxpr(fg.make_jaxpr(lambda a, b: chain(fnp, a, b))(x, y))
    out = np.zeros(n)
    ptrs = (ctypes.c_void_p * 3)(x.ctypes.data, y.ctypes.data, out.ctypes.data)
    print("\nchain n=1e7 into a reused output: cores used and throughput per thread")
    before = threadpool.num_threads()
    for threads in (1, 2):
        threadpool.set_num_threads(threads)
        exe._entry_ptrs(ctypes.addressof(ptrs))
        walls, cpus = [], []
        for _ in range(7):
            w0, c0 = time.perf_counter(), time.process_time()
            exe._entry_ptrs(ctypes.addressof(ptrs))
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
        w, c = statistics.median(walls), statistics.median(cpus)
        print(f"  {threads} thread(s): wall {w * 1e3:6.1f} ms, CPU {c * 1e3:6.1f} ms, cores used {c / w:4.2f}, "
              f"{n / c / 1e6:6.0f} Melem per CPU-second (per thread); load average {os.getloadavg()[0]:.2f}",
              flush=True)
    threadpool.set_num_threads(before)


def usage(fn, k=5):
    fn()
    r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(k):
        fn()
    r1, w = resource.getrusage(resource.RUSAGE_SELF), (time.perf_counter() - w0) / k
    return (w, (r1.ru_utime - r0.ru_utime) / k, (r1.ru_stime - r0.ru_stime) / k, (r1.ru_minflt - r0.ru_minflt) / k)


def page_faults():
    n = 10_000_000
    x, y = rng.normal(size=n), rng.normal(size=n)
    threadpool.set_num_threads(1)
    f = fg.jit(lambda a, b: chain(fnp, a, b))
    exe = compile_jaxpr(fg.make_jaxpr(lambda a, b: chain(fnp, a, b))(x, y))
    out = np.zeros(n)
    ptrs = (ctypes.c_void_p * 3)(x.ctypes.data, y.ctypes.data, out.ctypes.data)
    cases = [("numpy", lambda: chain(np, x, y)), ("funcgrad (fresh output)", lambda: f(x, y)),
             ("funcgrad (reused output)", lambda: exe._entry_ptrs(ctypes.addressof(ptrs)))]
    madvise = getattr(np._core.multiarray, "_set_madvise_hugepage", None)
    print("\nwhy n=1e7 varies: per call, one thread (ms; minor faults)")
    for hp in (True, False):
        if madvise is not None:
            madvise(hp)
        for name, fn in cases:
            w, u, s, mf = usage(fn)
            print(f"  THP madvise {'on ' if hp else 'off'} {name:26s} wall {w * 1e3:7.1f}  user {u * 1e3:6.1f}  "
                  f"sys {s * 1e3:6.1f}  minflt {mf:7.0f}", flush=True)
    if madvise is not None:
        madvise(True)


if __name__ == "__main__":
    print(f"funcgrad threads available: {threadpool.num_threads()}; load average {os.getloadavg()}; "
          "wall-time medians, ratios vs NumPy")
    rows()
    per_thread()
    page_faults()
    print(f"load average at the end {os.getloadavg()}")
