"""The last ``jax.lax`` names: ``broadcast_like``, ``scaled_dot``, ``rng_bit_generator``,
``stage`` and ``dce_sink``."""
from __future__ import annotations

import math

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.trace import get_aval_any
from funcgrad.lax import _util
from funcgrad.lax.dot import dot_general
from funcgrad.lax.types import RandomAlgorithm

__all__ = ["broadcast_like", "dce_sink", "rng_bit_generator", "scaled_dot", "stage"]


def broadcast_like(arr, like_arr):
    """``arr`` broadcast (NumPy's rule: trailing axes aligned) to the shape of ``like_arr``.

    >>> lax.broadcast_like(np.array([1, 2, 3]), np.zeros((2, 3)))
    Array([[1, 2, 3],
           [1, 2, 3]])
    """
    a = _util.aval("broadcast_like", arr, "arr")
    shape = _util.aval("broadcast_like", like_arr, "like_arr").shape
    if a.ndim > len(shape) or any(d not in (1, s) for d, s in zip(a.shape, shape[len(shape) - a.ndim:])):
        raise ValueError(f"broadcast_like: arr of shape {a.shape} does not broadcast to {shape}")
    lead = len(shape) - a.ndim
    keep = tuple(i for i, d in enumerate(a.shape) if d == shape[lead + i])
    squeezed = lax.reshape(arr, tuple(a.shape[i] for i in keep)) if len(keep) != a.ndim else arr
    return lax.broadcast_in_dim(squeezed, shape, tuple(lead + i for i in keep))


def _scaled(x, scale, axis, fname, name):
    if scale is None:
        return x
    xa, sa = get_aval_any(x), _util.aval(fname, scale, f"{name}_scale")
    ok = sa.ndim == xa.ndim and sa.shape[axis] and xa.shape[axis] % sa.shape[axis] == 0 and all(
        s == d for i, (s, d) in enumerate(zip(sa.shape, xa.shape)) if i != axis)
    if not ok:
        raise ValueError(f"{fname}: {name}_scale {sa.shape} must match {name} {xa.shape} except along the "
                         f"contracted axis {axis}, whose length it must divide")
    from funcgrad import numpy as fnp

    scale = fnp.repeat(lax.convert_element_type(scale, xa.dtype), xa.shape[axis] // sa.shape[axis], axis=axis)
    return lax.mul(x, scale)


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None, preferred_element_type=None):
    """``dot_general(lhs * lhs_scale, rhs * rhs_scale)``: each scale is repeated over blocks
    of the contracted axis (its length there divides the operand's). ``dimension_numbers``
    defaults to a batched matrix product (``(..., m, k)`` times ``(..., k, n)``).

    >>> lax.scaled_dot(np.ones((1, 2, 4)), np.ones((1, 4, 3)), lhs_scale=np.full((1, 2, 2), 2.0)).shape
    (1, 2, 3)
    """
    la, ra = _util.aval("scaled_dot", lhs, "lhs"), _util.aval("scaled_dot", rhs, "rhs")
    if dimension_numbers is None:
        if la.ndim < 2 or la.ndim != ra.ndim:
            raise ValueError(f"scaled_dot: give dimension_numbers for operands of shapes {la.shape} and {ra.shape}")
        batch = tuple(range(la.ndim - 2))
        dimension_numbers = (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch))
    (lc, rc), _ = dimension_numbers
    if len(lc) != 1 or len(rc) != 1:
        raise NotImplementedError(f"scaled_dot: one contracted axis per operand, got {dimension_numbers}")
    dtype = dtypes.promote(la.dtype, ra.dtype) if preferred_element_type is None else np.dtype(preferred_element_type)
    lhs, rhs = lax.convert_element_type(lhs, dtype), lax.convert_element_type(rhs, dtype)
    lhs = _scaled(lhs, lhs_scale, int(lc[0]), "scaled_dot", "lhs")
    rhs = _scaled(rhs, rhs_scale, int(rc[0]), "scaled_dot", "rhs")
    return dot_general(lhs, rhs, dimension_numbers)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None):
    """``(new_key, bits)``: random bits of ``shape`` and the unsigned ``dtype`` from the uint32
    ``key`` (two or four words), and a new key of the same shape. A pure function of ``key``
    (Threefry-2x32 here; XLA leaves the stream to each backend, so values differ from JAX's).

    >>> key, bits = lax.rng_bit_generator(np.array([1, 2, 3, 4], np.uint32), (3,))
    >>> bits.shape, bits.dtype, key.shape
    ((3,), dtype('uint32'), (4,))
    """
    from funcgrad.random.threefry import threefry2x32

    if RandomAlgorithm(algorithm) == RandomAlgorithm.RNG_PHILOX:
        raise NotImplementedError("rng_bit_generator: RNG_PHILOX is not available in funcgrad (RNG_DEFAULT or "
                                  "RNG_THREE_FRY run Threefry-2x32)")
    ka = _util.aval("rng_bit_generator", key, "key")
    if ka.dtype != np.uint32 or ka.ndim != 1 or ka.shape[0] not in (2, 4):
        raise TypeError(f"rng_bit_generator: key must be uint32[2] or uint32[4], got {ka.str_short()}")
    dt = np.dtype(dtype)
    if dt.kind != "u":
        raise TypeError(f"rng_bit_generator: dtype must be an unsigned integer type, got {dt.name}")
    shape = tuple(_util.static_int("rng_bit_generator", d, "shape") for d in shape)
    words = [lax.reshape(lax.slice(key, (i,), (i + 1,)), ()) for i in range(ka.shape[0])]
    k0, k1 = (words[0], words[1]) if len(words) == 2 else (lax.bitwise_xor(words[0], words[2]),
                                                          lax.bitwise_xor(words[1], words[3]))
    u32 = np.dtype(np.uint32)
    n = math.prod(shape) * (2 if dt.itemsize == 8 else 1)
    y0, y1 = threefry2x32(k0, k1, lax.broadcast_in_dim(np.zeros((), u32), (n,), ()), lax.iota(u32, (n,)))
    if dt.itemsize == 8:
        hi = lax.convert_element_type(lax.slice(y0, (0,), (n // 2,)), dt)
        lo = lax.convert_element_type(lax.slice(y1, (n // 2,), (n,)), dt)
        flat = lax.bitwise_or(lax.shift_left(hi, lax.broadcast_in_dim(np.asarray(32, dt), (n // 2,), ())), lo)
    else:
        flat = lax.convert_element_type(lax.bitwise_xor(y0, y1), dt)
    bits = lax.reshape(flat, shape)
    # the new key: the same hash at counters (1, i), which the bits never use
    m = ka.shape[0]
    z0, z1 = threefry2x32(k0, k1, lax.broadcast_in_dim(np.ones((), u32), (m,), ()), lax.iota(u32, (m,)))
    return lax.bitwise_xor(z0, z1), bits


def stage(x):
    """``x`` as an array value (JAX lifts it into the current trace; funcgrad's staging
    already records every operation, so the value is unchanged)."""
    from funcgrad import numpy as fnp

    return fnp.asarray(x)


def dce_sink(val, *, prevent_mlir_dce=False):
    """Mark ``val`` (a pytree) as used, so dead-code elimination keeps what computes it
    (JAX's debugging aid). funcgrad's eliminations never change results; this returns
    None, as JAX's does."""
    return None
