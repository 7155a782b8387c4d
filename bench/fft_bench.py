"""funcgrad's native FFT kernels against ``numpy.fft`` (pocketfft), issue #16.

    python bench/fft_bench.py

fft and rfft at n = 2**16 and n = 10**5 + 3 (prime: Bluestein), complex128 / float64,
fft of 2**16 complex64, and fft of 64 rows of 1024 (the last axis). Both sides measured in one run (medians of
interleaved rounds, thread CPU time, after a warm-up call that compiles), printed with
the median per-round ratio; the goal is <= 1.2x. The kernels are called through their
Python entries (``funcgrad.lowering.fft``), which allocate the output as NumPy does.

The second table is what users call: ``jit(fnp.fft.fft)`` and ``jit(fnp.fft.rfft)`` (the
``fft`` primitive's native lowering, behind a jitted function's dispatch) at the same
lengths; float64 input to ``fft`` is converted to complex128 inside, as NumPy does.
"""
from __future__ import annotations  # noqa: I001  (common before NumPy: it sets one BLAS thread)

import os

import common  # noqa: F401
import numpy as np

from common import side_by_side
import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lowering import fft


def cases():
    rng = np.random.default_rng(0)
    out = []
    for n in (2**16, 10**5 + 3):
        z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        r = rng.standard_normal(n)
        out.append((f"fft  n={n}", lambda z=z: fft.execute(z), lambda z=z: np.fft.fft(z)))
        out.append((f"rfft n={n}", lambda r=r: fft.rfft(r), lambda r=r: np.fft.rfft(r)))
    z32 = (rng.standard_normal(2**16) + 1j * rng.standard_normal(2**16)).astype(np.complex64)
    out.append(("fft  n=65536 c64", lambda: fft.execute(z32), lambda: np.fft.fft(z32)))
    b = rng.standard_normal((64, 1024)) + 1j * rng.standard_normal((64, 1024))
    out.append(("fft  64 x 1024", lambda: fft.execute(b), lambda: np.fft.fft(b)))
    return out


def jit_cases():
    rng = np.random.default_rng(1)
    jfft, jrfft = fg.jit(fnp.fft.fft), fg.jit(fnp.fft.rfft)
    out = []
    for n in (2**16, 10**5 + 3):
        z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        r = rng.standard_normal(n)
        out.append((f"jit fft  n={n}", lambda z=z: jfft(z), lambda z=z: np.fft.fft(z)))
        out.append((f"jit rfft n={n}", lambda r=r: jrfft(r), lambda r=r: np.fft.rfft(r)))
        out.append((f"jit fft  n={n} f64", lambda r=r: jfft(r), lambda r=r: np.fft.fft(r)))
    return out


def main() -> None:
    print("native FFT vs numpy.fft (pocketfft), complex128 / float64")
    side_by_side(cases(), warm=True)
    print("jit(fnp.fft.*) vs numpy.fft")
    side_by_side(jit_cases(), warm=True)
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
