"""Lowering of the ``fft`` primitive (``core/prims/fft.py``): calls into the native plans.

One materialised rule. Each transformed axis is one call of a compiled plan
(``lowering/fft.py``, bound by name through ``fft.provide``: the engine records the
provider call, so a program loaded from the disk cache binds the same plans again) over
the whole array, its batch given as (outer, inner) counts and distances, so no data is
transposed. The last axis goes first for fft/ifft/rfft (rfft: the real-to-complex pass)
and last for irfft (its complex-to-real pass); the passes alternate between the output
and one scratch buffer (a plan's input and output must not overlap) so that the last
writes the output. Scratch (the plan's work area and the intermediate) comes from the
compiled function's workspace. ifft and irfft are scaled by 1/N in one pass at the end
(the plans are unnormalised).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.prims.fft import fft_p
from funcgrad.lowering import fft as native
from funcgrad.lowering.builder import const
from funcgrad.lowering.context import lower_materialized

_DECL = "declare void @{0}(ptr, ptr, i64, i64, i64, i64, i64, i64, i64, i64, ptr) nounwind"
_REAL = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _passes(fft_type: str, shape, fft_lengths):
    """[(plan kind, axis, inverse, in shape, out shape)] in the order they run; ``shape``
    is the operand's."""
    nd, k = len(shape), len(fft_lengths)
    inverse = fft_type in ("ifft", "irfft")
    out = []
    cur = tuple(shape)
    axes = range(nd - 1, nd - k - 1, -1) if fft_type != "irfft" else list(range(nd - k, nd))
    for axis in axes:
        kind = "c2c"
        nxt = cur
        if axis == nd - 1 and fft_type == "rfft":
            kind, nxt = "r2c", cur[:-1] + (fft_lengths[-1] // 2 + 1,)
        elif axis == nd - 1 and fft_type == "irfft":
            kind, nxt = "c2r", cur[:-1] + (fft_lengths[-1],)
        out.append((kind, axis, inverse, cur, nxt))
        cur = nxt
    return out


@lower_materialized(fft_p, complex_ok=True)
def _fft_lower(ctx, x, *, fft_type, fft_lengths):
    out = ctx.outs[0]
    cdtype = out.dtype if out.dtype.kind == "c" else x.dtype  # (irfft: the operand is complex)
    if _prod(x.shape) == 0 or _prod(out.shape) == 0:
        return
    if x.is_buffer:
        src = x.ptr
    else:
        tmp = ctx.temp_buffer(x.aval)
        ctx.write(tmp, x)
        src = tmp.ptr
    passes = _passes(fft_type, x.shape, fft_lengths)
    work = max(native.workspace(kind, shape_in[a] if kind != "c2r" else shape_out[a], inv)
               for kind, a, inv, shape_in, shape_out in passes)
    work_ptr = ctx.temp_buffer(ShapedArray((max(work, 1),), cdtype)).ptr
    dsts = _destinations(ctx, out, passes, cdtype, real_out=fft_type == "irfft")
    ctx.work += int(_prod(out.shape) * max(1.0, np.log2(max(_prod(fft_lengths), 2))) * 5)
    b = ctx.b
    for p, (kind, axis, inverse, shape_in, shape_out) in enumerate(passes):
        n = shape_in[axis] if kind != "c2r" else shape_out[axis]
        name = native.provide(kind, n, cdtype.name, inverse)
        b.module.declare(name, _DECL.format(name))
        dst = dsts[p]
        inner = _prod(shape_in[axis + 1:])
        no = _prod(shape_in[:axis])
        args = [no, shape_in[axis] * inner, shape_out[axis] * inner, inner, 1, 1, inner, inner]
        ints = ", ".join(f"i64 {v}" for v in args)
        b.stmt(f"call void @{name}(ptr {src}, ptr {dst}, {ints}, ptr {work_ptr})")
        src = dst
    if fft_type in ("ifft", "irfft"):
        _scale(ctx, out, 1.0 / _prod(fft_lengths))


def _destinations(ctx, out, passes, cdtype, real_out: bool) -> list:
    """Where each pass writes: the last pass writes the output; the others alternate
    with it, back from the end, through one complex scratch buffer -- or, when the output
    is real (irfft: every pass but the last is complex), through two."""
    size = max(_prod(s) for _, _, _, si, so in passes for s in (si, so))
    scratch = [ctx.temp_buffer(ShapedArray((size,), cdtype)).ptr for _ in range(min(len(passes) - 1, 2))]
    if real_out:
        return [scratch[p % 2] for p in range(len(passes) - 1)] + [out.ptr]
    return [out.ptr if (len(passes) - 1 - p) % 2 == 0 else scratch[0] for p in range(len(passes))]


def _scale(ctx, out, factor: float) -> None:
    """out *= factor, over the real numbers of the buffer (a complex is two)."""
    real = _REAL.get(out.dtype, out.dtype)
    count = _prod(out.shape) * (2 if out.dtype.kind == "c" else 1)
    b = ctx.b
    c = const(real, factor)

    def body(i, _):
        ptr = b.gep(out.ptr, real, i)
        b.store(ptr, b.op("fmul", b.load(ptr, real), c))
        return []

    ctx.for_range(count, body)
