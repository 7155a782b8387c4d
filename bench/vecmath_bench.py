"""Issue #17 part V: funcgrad's vector math per element against NumPy's SIMD loops.

    python bench/vecmath_bench.py [n]        # n defaults to 1e6

For each function and dtype: NumPy's ufunc writing into a reused output
(``np.exp(x, out=o)``) and funcgrad's compiled loop writing into a reused output
through its pointer entry (``Executable._entry_ptrs``: no dispatch, no allocation, no
page faults), timed side by side (``common.interleaved_times``, the calling thread's
CPU clock), one thread each. Prints medians in ns/element and the ratio fg/NumPy
(< 1: funcgrad faster), with the CPU's SIMD flags and the load average.
"""
from __future__ import annotations

import ctypes
import os
import statistics
import sys

# W: this measures compiled code, not compilation (as bench/jit_suite.py)
os.environ.setdefault("FUNCGRAD_NO_DISK_CACHE", "1")

import common  # noqa: E402,I001  (first: sets the BLAS thread count before NumPy loads)
import numpy as np  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad.lowering import compile_jaxpr, threadpool  # noqa: E402

NAMES = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else ("exp", "log", "tanh", "sin", "cos", "expm1", "log1p", "tan", "sinh", "cosh")


def simd_flags() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next(line for line in fh if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return "?"
    return " ".join(f for f in ("avx2", "fma", "avx512f", "avx512dq", "avx512vl") if f in flags)


def numpy_simd() -> str:
    cfg = getattr(np, "show_runtime", None)
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
        on = [k for k in __cpu_dispatch__ if __cpu_features__.get(k)]
        return ",".join(on)
    except ImportError:
        return "?" if cfg is None else "see np.show_runtime()"


def argument(name: str, n: int, dtype) -> np.ndarray:
    rng = np.random.default_rng(0)
    if name in ("log",):
        x = rng.uniform(0.01, 100.0, n)
    elif name == "log1p":
        x = rng.uniform(-0.9, 100.0, n)
    elif name in ("sinh", "cosh", "exp", "expm1"):
        x = rng.uniform(-20.0, 20.0, n)
    else:
        x = rng.uniform(-10.0, 10.0, n)
    return x.astype(dtype)


def measure(name: str, dtype, n: int, rounds: int) -> tuple:
    x = argument(name, n, dtype)
    out_np, out_fg = np.empty_like(x), np.empty_like(x)
    exe = compile_jaxpr(fg.make_jaxpr(getattr(fnp, name))(x))
    ptrs = (ctypes.c_void_p * 2)(x.ctypes.data, out_fg.ctypes.data)
    npf = getattr(np, name)
    fns = [("numpy", lambda: npf(x, out=out_np)), ("fg", lambda: exe._entry_ptrs(ctypes.addressof(ptrs)))]
    t = common.interleaved_times(fns, rounds=rounds, min_time=0.05)
    ratios = [f / p for f, p in zip(t["fg"], t["numpy"])]
    return (statistics.median(t["numpy"]) / n * 1e9, statistics.median(t["fg"]) / n * 1e9, statistics.median(ratios))


def main() -> None:
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000
    threadpool.set_num_threads(1)
    print(f"CPU flags: {simd_flags()}; NumPy dispatch targets: {numpy_simd()}")
    print(f"n = {n:.0e}, one thread, reused outputs, CPU-time medians; load average {os.getloadavg()}")
    print(f"{'function':8s} {'dtype':8s} {'numpy ns/el':>12s} {'fg ns/el':>10s} {'fg/numpy':>9s}")
    for dtype in (np.float64, np.float32):
        for name in NAMES:
            p, f, r = measure(name, dtype, n, rounds=7)
            print(f"{name:8s} {np.dtype(dtype).name:8s} {p:12.3f} {f:10.3f} {r:9.2f}", flush=True)
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
