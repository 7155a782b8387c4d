"""Threefry-2x32 (20 rounds), the counter-based hash under ``funcgrad.random``.

Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC 2011),
with the Random123 / JAX rotation constants and key schedule. It maps a key (two
uint32) and a counter (two uint32) to two uint32 that look independent for distinct
counters. Written with ``funcgrad.numpy`` uint32 operations (wrap-around add, xor,
shifts), so it runs eagerly on NumPy, vectorises under ``vmap`` and lowers to one
native loop under ``jit`` (no callback).

Counters are laid out as JAX's partitionable scheme does: element ``i`` (flat,
row-major) of a requested shape is hashed at the 64-bit counter ``i``, split into
(high word, low word).
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)  # the Threefry key-schedule constant
_U32 = np.dtype(np.uint32)


def _rotate_left(x, d: int):
    return (x << d) | (x >> (32 - d))


def threefry2x32(k0, k1, x0, x1):
    """The 20-round hash of counters ``(x0, x1)`` under key ``(k0, k1)``, all uint32
    (``k0``, ``k1`` scalars, ``x0``, ``x1`` arrays of one shape). Returns ``(y0, y1)``."""
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):  # 5 x 4 rounds, a key injection after each group of 4
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotate_left(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def counters(size: int) -> tuple:
    """(high, low) uint32 words of the flat indices ``0 .. size-1``."""
    if size > 2 ** 64:
        raise ValueError(f"funcgrad.random: cannot draw more than 2**64 values at once (got {size})")
    if size <= 2 ** 32:
        lo = lax.iota(_U32, (size,), 0)
        hi = fnp.zeros((size,), _U32)
    else:  # pragma: no cover - more than 4 billion values
        i = lax.iota(np.dtype(np.uint64), (size,), 0)
        hi = (i >> 32).astype(_U32)
        lo = (i & 0xFFFFFFFF).astype(_U32)
    return hi, lo


def hash_shape(key, shape):
    """Threefry of the counters of ``shape`` under the raw key ``key`` (uint32[2]): two
    uint32 arrays of ``shape``. (Hashed flat: 1-d arrays wrap silently in NumPy.)"""
    shape = tuple(shape)
    y0, y1 = threefry2x32(key[0], key[1], *counters(math.prod(shape)))
    return fnp.reshape(y0, shape), fnp.reshape(y1, shape)
