"""``jax.lax``'s shape arithmetic for convolutions and windowed reductions
(``conv_general_permutations``, ``conv_shape_tuple``, ``conv_general_shape_tuple``,
``conv_transpose_shape_tuple``, ``reduce_window_shape_tuple``), and the unshared
(locally connected) convolution ``conv_general_dilated_local``.
"""
from __future__ import annotations

import math

import numpy as np

from funcgrad.lax.convolution import conv_dimension_numbers, conv_general_dilated_patches, padtype_to_pads
from funcgrad.lax.dot import dot_general

__all__ = [
    "conv_general_dilated_local", "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
    "conv_transpose_shape_tuple", "reduce_window_shape_tuple",
]


def _stride_dim(d, window, stride):
    return max(0, (d - window) // stride + 1)


def _dilate(d, dilation):
    return 0 if d == 0 else 1 + dilation * (d - 1)


def conv_general_permutations(dimension_numbers):
    """The axis permutations ``(lhs_perm, rhs_perm, out_perm)`` that bring spec strings like
    ``('NHWC', 'HWIO', 'NHWC')`` to the canonical layout (batch/feature first, spatial axes in
    the kernel spec's order).

    >>> lax.conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    ranks = [len(s) for s in dimension_numbers]
    dn = conv_dimension_numbers((1,) * ranks[0], (1,) * ranks[0], tuple(dimension_numbers),
                                _fname="conv_general_permutations")
    return tuple(dn)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution of operands in canonical layout (``(N, C, spatial...)``
    and ``(O, I, spatial...)``); ``pads`` explicit ``(low, high)`` pairs or a padding name.

    >>> lax.conv_shape_tuple((1, 3, 10, 10), (8, 3, 3, 3), (1, 1), "SAME")
    (1, 8, 10, 10)
    """
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"conv_shape_tuple: expected {len(lhs_shape) - 2} explicit pads, got {len(pads)}")
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"conv_shape_tuple: negative padding {pads} is larger than lhs spatial shape {lhs_shape[2:]}")
    space = tuple(_stride_dim(p, k, s) for p, k, s in zip(padded, rhs_shape[2:], strides))
    if lhs_shape[0] % batch_group_count:
        raise ValueError(f"conv_shape_tuple: batch {lhs_shape[0]} is not a multiple of batch_group_count "
                         f"{batch_group_count}")
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of ``conv_general_dilated`` with spec-string ``dimension_numbers``."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm), window_strides, padding)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def _transpose_padding(k, s, padding):
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else int(math.ceil(total / 2))
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError(f"conv_transpose_shape_tuple: padding must be 'SAME' or 'VALID', got {padding!r}")
    return lo, total - lo


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of ``conv_transpose`` with spec-string ``dimension_numbers``."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_transpose_padding(int(k), int(s), padding) for k, s in zip(rhs_t[2:], window_strides)]
    totals = [int(np.sum(p)) for p in padding]
    space = [(i - 1) * s - k + 2 + p for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, totals)]
    out = (int(lhs_t[0]), int(rhs_t[0])) + tuple(int(d) for d in space)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None):
    """The output shape of ``reduce_window`` with explicit ``padding`` pairs.

    >>> lax.reduce_window_shape_tuple((10,), (3,), (2,), ((1, 1),))
    (5,)
    """
    shape = tuple(operand_shape)
    if base_dilation is not None:
        shape = tuple(_dilate(d, b) for d, b in zip(shape, base_dilation))
    window = tuple(window_dimensions)
    if window_dilation is not None:
        window = tuple(_dilate(d, w) for d, w in zip(window, window_dilation))
    padded = tuple(d + lo + hi for d, (lo, hi) in zip(shape, padding))
    return tuple(_stride_dim(p, w, s) for p, w, s in zip(padded, window, window_strides))


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None,
                               rhs_dilation=None, dimension_numbers=None, precision=None):
    """A convolution whose kernel differs at each output position (locally connected, JAX's
    ``conv_general_dilated_local``): ``rhs``'s spatial dims are the output's, its input-feature
    dim has ``C * prod(filter_shape)`` entries (the patch layout of
    ``conv_general_dilated_patches``), its output-feature dim ``O``."""
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers)
    from funcgrad import numpy as fnp

    lhs_shape = fnp.shape(lhs)
    dn = conv_dimension_numbers(lhs_shape, (1, 1) + tuple(filter_shape), dimension_numbers,
                                _fname="conv_general_dilated_local")
    lhs_spec, rhs_spec, out_spec = dn
    lhs_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    contraction = (((out_spec[1],), (rhs_spec[1],)), (tuple(lhs_b), tuple(rhs_b)))
    out = dot_general(patches, rhs, contraction, precision=precision)
    return fnp.moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))
