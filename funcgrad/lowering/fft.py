"""A native FFT for any length: compiled once per (kind, n, dtype, direction).

``fft_plan`` decides the passes (mixed-radix Stockham for 2,3,5,7..31-smooth lengths,
Bluestein otherwise) and computes the constant tables; ``fft_ir`` writes the LLVM IR;
this module compiles it through the engine (in-process and disk caches: the IR holds no
addresses, the tables are the named external global ``fg_fft_tables`` bound at link
time) and calls it.

The C ABI of a compiled plan (``fft_ir.entry``)::

    void fft(void *in, void *out,
             int64 no, int64 io, int64 oo,    // outer batch: count, in/out distance
             int64 ni, int64 ii, int64 oi,    // inner batch: count, in/out distance
             int64 is, int64 os,              // element stride of in / out
             void *work)                      // plan.work complex scratch elements

Distances and strides count elements of each side (complex; real for the real side of
r2c/c2r). One axis of a C-contiguous n-d array is (no, ni) = (prod of the dimensions
before it, prod after it), with stride = ni. in and out must not overlap. Transforms are
unnormalised in both directions (the caller scales for norm="backward"/"ortho"/
"forward"); the inverse of c2c and c2r uses exp(+2*pi*i*jk/n).

Python entries for tests and for eager use: ``execute`` (complex to complex),
``rfft`` and ``irfft``, on NumPy arrays along one axis. ``provide`` binds a plan's
entry by name for generated code (an ``engine.provider``, replayed on cache loads).
"""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from funcgrad.lowering import engine, fft_ir, fft_plan

_C = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_REAL = {v: k for k, v in _C.items()}
_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, *[ctypes.c_int64] * 8, ctypes.c_void_p)
_lock = threading.Lock()
_compiled: dict = {}
_bound: dict = {}


def _lanes(cdtype) -> int:
    """Complex numbers per vector: a 256-bit register with AVX, 128 bits without."""
    features = engine.fingerprint().split("\n")[2].split(",")
    bits = 256 if "+avx" in features else 128
    return bits // (8 * np.dtype(cdtype).itemsize)


class Compiled:
    """One compiled plan: its entry ``address``, ``call``able, and scratch size ``work``."""

    def __init__(self, kind: str, n: int, cdtype, inverse: bool):
        self.plan = fft_plan.make_plan(kind, n, inverse)
        self.cdtype = np.dtype(cdtype)
        self.work = self.plan.work
        self.tables = self.plan.tables.array(self.cdtype)
        text = fft_ir.entry(self.plan, _C[self.cdtype], _lanes(self.cdtype))
        self.module = engine.compile_module(text, ["fft"], imports={fft_ir.TABLES: self.tables.ctypes.data})
        self.address = self.module.addrs["fft"]
        self.call = _CFUNC(self.address)
        self._spare = np.empty(self.work, self.cdtype)  # reused: fresh pages cost more than the FFT
        self._spare_lock = threading.Lock()

    def workspace(self):
        if self._spare_lock.acquire(blocking=False):
            return self._spare, self._spare_lock.release
        return np.empty(self.work, self.cdtype), (lambda: None)


def compiled(kind: str, n: int, cdtype, inverse: bool) -> Compiled:
    """The compiled plan (cached for the process; the object code also on disk)."""
    if kind not in fft_plan.KINDS:
        raise ValueError(f"fft plan: kind must be one of {fft_plan.KINDS}, got {kind!r}")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"fft plan: the transform length n must be a positive integer, got {n!r}")
    cdtype = np.dtype(cdtype)
    if cdtype not in _C:
        raise TypeError(f"fft plan: dtype must be complex64 or complex128, got {cdtype}")
    key = (kind, int(n), cdtype.name, bool(inverse))
    with _lock:
        hit = _compiled.get(key)
        if hit is None:
            hit = _compiled[key] = Compiled(kind, int(n), cdtype, bool(inverse))
        return hit


def symbol(kind: str, n: int, dtype: str, inverse: bool) -> str:
    return f"fg_fft_{kind}_{np.dtype(dtype).name}_{'inv' if inverse else 'fwd'}_{int(n)}"


@engine.provider("fft")
def provide(kind: str, n: int, dtype: str, inverse: bool) -> str:
    """Bind the plan's entry (the C ABI above) as ``symbol(kind, n, dtype, inverse)`` for
    code compiled from now on; returns that name. ``dtype``: the complex dtype's name.
    Generated code declares ``void @name(ptr, ptr, i64 x 8, ptr)`` and passes a scratch
    buffer of ``workspace(kind, n, dtype)`` complex elements."""
    name = symbol(kind, n, dtype, inverse)
    with _lock:
        done = name in _bound
    if not done:
        c = compiled(kind, n, dtype, inverse)
        engine.add_symbol(name, c.address)
        with _lock:
            _bound[name] = c  # (kept for the process: code linked later may call it)
    return name


def workspace(kind: str, n: int, inverse: bool) -> int:
    """Scratch complex elements the plan needs (the same for both dtypes and directions)."""
    if kind not in fft_plan.KINDS:
        raise ValueError(f"fft workspace: kind must be one of {fft_plan.KINDS}, got {kind!r}")
    return fft_plan.work_size(kind, int(n))


# --- Python entries ----------------------------------------------------------------------------
def _axis(fn: str, x: np.ndarray, axis) -> int:
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{fn}: axis {axis!r} is out of range for an array of shape {x.shape}")
    return int(axis) % x.ndim


def _batch(shape, axis):
    pre = int(np.prod(shape[:axis], dtype=np.int64))
    post = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return pre, post


def _run(c: Compiled, x: np.ndarray, out: np.ndarray, axis: int):
    pre, post = _batch(x.shape, axis)
    if pre * post == 0:
        return out
    n_in, n_out = x.shape[axis], out.shape[axis]
    work, done = c.workspace()
    try:
        c.call(x.ctypes.data, out.ctypes.data, pre, n_in * post, n_out * post, post, 1, 1, post, post,
               work.ctypes.data)
    finally:
        done()
    return out


def _complex_input(fn: str, x):
    x = np.asarray(x)
    if x.dtype.kind not in "biufc":
        raise TypeError(f"{fn}: x must be numeric, got dtype {x.dtype} (shape {x.shape})")
    cdtype = np.dtype(np.complex64) if x.dtype in (np.float32, np.complex64) else np.dtype(np.complex128)
    return np.ascontiguousarray(x, dtype=cdtype)


def _real_input(fn: str, x):
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"{fn}: x must be real, got dtype {x.dtype} (shape {x.shape})")
    return np.ascontiguousarray(x, dtype=np.float32 if x.dtype == np.float32 else np.float64)


def _need_length(fn: str, x, axis, n):
    if n < 1:
        raise ValueError(f"{fn}: invalid number of data points ({n}) along axis {axis} of shape {x.shape}")


def execute(x, axis: int = -1, inverse: bool = False) -> np.ndarray:
    """The unnormalised DFT of ``x`` along ``axis`` (complex64 stays complex64, float32
    becomes complex64, anything else complex128); ``inverse`` uses exp(+2*pi*i*jk/n)
    (``numpy.fft.ifft(x) * n``)."""
    x = _complex_input("fft.execute", x)
    axis = _axis("fft.execute", x, axis)
    n = x.shape[axis]
    _need_length("fft.execute", x, axis, n)
    out = np.empty(x.shape, x.dtype)
    return _run(compiled("c2c", n, x.dtype, inverse), x, out, axis)


def rfft(x, axis: int = -1) -> np.ndarray:
    """``numpy.fft.rfft(x, axis=axis)`` (n reals -> n//2+1 complex), natively."""
    x = _real_input("fft.rfft", x)
    axis = _axis("fft.rfft", x, axis)
    n = x.shape[axis]
    _need_length("fft.rfft", x, axis, n)
    cdtype = _REAL[x.dtype]
    shape = list(x.shape)
    shape[axis] = n // 2 + 1
    return _run(compiled("r2c", n, cdtype, False), x, np.empty(shape, cdtype), axis)


def irfft(x, n: int | None = None, axis: int = -1) -> np.ndarray:
    """The unnormalised inverse of ``rfft`` with ``n`` real outputs (default
    2*(m-1) for m inputs along ``axis``): ``numpy.fft.irfft(x, n, axis) * n``. As in
    NumPy, the input is cut or zero-padded to n//2+1 and the imaginary parts of the
    zero-frequency (and, for even n, the Nyquist) term are ignored."""
    x = _complex_input("fft.irfft", x)
    axis = _axis("fft.irfft", x, axis)
    m = x.shape[axis]
    n = 2 * (m - 1) if n is None else int(n)
    _need_length("fft.irfft", x, axis, n)
    need = n // 2 + 1
    if m != need:
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, min(m, need))
        pad = [(0, 0)] * x.ndim
        pad[axis] = (0, max(0, need - m))
        x = np.ascontiguousarray(np.pad(x[tuple(index)], pad))
    shape = list(x.shape)
    shape[axis] = n
    out = np.empty(shape, _C[x.dtype])
    return _run(compiled("c2r", n, x.dtype, True), x, out, axis)


__all__ = ["Compiled", "compiled", "execute", "irfft", "provide", "rfft", "symbol", "workspace"]


# A forked child has only the forking thread: a lock another thread held at the fork
# would never be released there.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_lock._at_fork_reinit)
