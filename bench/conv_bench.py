"""2-D convolution and pooling under jit against NumPy (issue #13).

    python bench/conv_bench.py

``jit(lax.conv_general_dilated)`` on N=8, 32x32, C=16 -> 32, a 3x3 kernel, SAME, NHWC /
HWIO, float32 and float64, against a NumPy im2col (sliding_window_view) + matmul reference,
timed side by side; plus jit of the gradient w.r.t. both operands (against the forward
NumPy reference: a rough "how many forward passes" figure), 2x2 max pooling against a
NumPy reshape-max, and the first-call (trace + compile) times.
"""
from __future__ import annotations

import os

# One BLAS thread, set before NumPy loads OpenBLAS (common.py sets it too, but only once
# imported): a multi-threaded BLAS on a loaded 2-core machine spins and skews every ratio.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import funcgrad as fg  # noqa: E402
from funcgrad import lax  # noqa: E402

from common import fmt, interleaved_times  # noqa: E402

DN = ("NHWC", "HWIO", "NHWC")


def numpy_conv(x, w):
    """SAME 3x3 stride-1 NHWC/HWIO convolution: im2col with sliding_window_view, one GEMM."""
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))  # N,H,W,C,3,3
    n, h, wd, c = x.shape
    cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * wd, 9 * c)
    return (cols @ w.reshape(9 * c, -1)).reshape(n, h, wd, -1)


def numpy_max_pool(x):
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)


def loss(x, w):
    return (conv(x, w) ** 2).sum()


def max_pool(x):
    return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def first_call(fn, *args):
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def main():
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal((8, 32, 32, 16)).astype(dtype)
        w = rng.standard_normal((3, 3, 16, 32)).astype(dtype)
        jconv, jgrad, jpool = fg.jit(conv), fg.jit(fg.grad(loss, argnums=(0, 1))), fg.jit(max_pool)
        compile_s = [first_call(jconv, x, w), first_call(jgrad, x, w), first_call(jpool, x)]
        tol = 1e-3 if dtype == np.float32 else 1e-9
        np.testing.assert_allclose(jconv(x, w), numpy_conv(x, w), rtol=tol, atol=tol)
        np.testing.assert_array_equal(jpool(x), numpy_max_pool(x))
        times = interleaved_times([
            ("numpy im2col+matmul", lambda: numpy_conv(x, w)),
            ("jit conv", lambda: jconv(x, w)),
            ("eager conv", lambda: conv(x, w)),
            ("jit grad (x, w)", lambda: jgrad(x, w)),
            ("numpy max pool 2x2", lambda: numpy_max_pool(x)),
            ("jit max pool 2x2", lambda: jpool(x)),
        ], rounds=7)
        med = {k: statistics.median(v) for k, v in times.items()}
        name = np.dtype(dtype).name
        print(f"\nconv2d N=8 32x32 C=16->32 3x3 SAME, {name} (medians; ratio to NumPy)")
        for key, base in (("numpy im2col+matmul", None), ("jit conv", "numpy im2col+matmul"),
                          ("eager conv", "numpy im2col+matmul"), ("jit grad (x, w)", "numpy im2col+matmul"),
                          ("numpy max pool 2x2", None), ("jit max pool 2x2", "numpy max pool 2x2")):
            ratio = f"{med[key] / med[base]:6.2f}x" if base else "       "
            print(f"  {key:24s} {fmt(med[key])}  {ratio}")
        print(f"  first call (trace+compile): conv {compile_s[0]:.2f} s, grad {compile_s[1]:.2f} s, "
              f"max pool {compile_s[2]:.2f} s")


if __name__ == "__main__":
    main()
