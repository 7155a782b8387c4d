"""Compiled complex matrix products against NumPy (issue #16, part M).

    python bench/complex_matmul_bench.py

``jit(a @ b)`` on 512 x 512 complex128 (and complex64) matrices vs ``a @ b`` in NumPy;
both reach the same OpenBLAS ``zgemm``/``cgemm`` (one thread, set by ``common``), so the
ratio measures funcgrad's call overhead and output allocation. One run: medians of
interleaved rounds (thread CPU time), the median per-round ratio and the load average.
The goal is <= 1.1x.
"""
from __future__ import annotations  # noqa: I001  (common before NumPy: it sets one BLAS thread)

import os

import common  # noqa: F401
import numpy as np

import funcgrad as fg
from common import side_by_side


def cases():
    rng = np.random.default_rng(0)
    out = []
    for dtype, n in ((np.complex128, 512), (np.complex64, 512), (np.complex128, 64)):
        a = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(dtype)
        b = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(dtype)
        f = fg.jit(lambda x, y: x @ y)
        np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-4 if dtype == np.complex64 else 1e-12)
        out.append((f"matmul {n}x{n} {np.dtype(dtype).name}", lambda f=f, a=a, b=b: f(a, b), lambda a=a, b=b: a @ b))
    return out


def main() -> None:
    print(f"jit complex matmul vs NumPy (one BLAS thread); load average {os.getloadavg()[0]:.2f}")
    side_by_side(cases(), width=26, min_time=0.2)


if __name__ == "__main__":
    main()
