"""Convolutions with ``jax.lax``'s names and XLA's semantics (cross-correlation: the
kernel is not flipped): ``conv_general_dilated`` and its wrappers ``conv``,
``conv_with_general_padding``, ``conv_transpose``, ``conv_general_dilated_patches``,
plus ``ConvDimensionNumbers``, ``conv_dimension_numbers`` and ``padtype_to_pads``.

They are composites of existing primitives, not a primitive: ``pad`` (interior padding
is the lhs dilation, negative padding crops), one strided ``slice`` per kernel offset
(the rhs dilation is the spacing of the offsets), a ``concatenate`` of those windows
(im2col) and one ``dot_general`` with the kernel, whose batch dimension carries the
feature groups or batch groups. So jvp, transpose (the VJP w.r.t. the input *is* a
transposed convolution), vmap and the native jit lowering (the product goes to BLAS)
all come from the rules those primitives already have.

>>> from funcgrad import lax
>>> lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.trace import get_aval_any
from funcgrad.lax import _util

__all__ = [
    "ConvDimensionNumbers", "conv_dimension_numbers", "padtype_to_pads", "conv_general_dilated",
    "conv", "conv_with_general_padding", "conv_transpose", "conv_general_dilated_patches",
]

_FN = "conv_general_dilated"


class ConvDimensionNumbers(NamedTuple):
    """Where each logical dimension lives, as in JAX: ``lhs_spec = (batch dim, feature
    dim, spatial dims...)``, ``rhs_spec = (out-feature dim, in-feature dim, spatial...)``,
    ``out_spec = (batch dim, feature dim, spatial...)``, each a tuple of axis numbers."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _shapes(lhs_shape, rhs_shape) -> str:
    return f"lhs shape {tuple(lhs_shape)}, rhs shape {tuple(rhs_shape)}"


def _conv_general_permutations(specs, fname, where):
    """Axis permutations for spec strings like ``('NHWC', 'HWIO', 'NHWC')`` (JAX's rule:
    the spatial order is the kernel spec's)."""
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (spec, (a, b)) in enumerate(zip(specs, pairs)):
        if spec.count(a) != 1 or spec.count(b) != 1:
            raise TypeError(f"{fname}: dimension_numbers[{i}] must contain '{a}' and '{b}' exactly once, "
                            f"got {spec!r} ({where})")
        if len(spec) != len(set(spec)):
            raise TypeError(f"{fname}: dimension_numbers[{i}] has a repeated character: {spec!r} ({where})")
    spatial = [set(s) - set(p) for s, p in zip(specs, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(f"{fname}: the dimension_numbers strings {tuple(specs)} must name the same spatial "
                        f"dimensions ({where})")
    rhs_spec = specs[1]

    def perm(spec, pair):
        dims = [i for i, c in enumerate(spec) if c not in pair]
        dims.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(dims)

    return ConvDimensionNumbers(*(perm(s, p) for s, p in zip(specs, pairs)))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers, *, _fname="conv_dimension_numbers"):
    """``dimension_numbers`` (None, a ``ConvDimensionNumbers`` or three spec strings such
    as ``('NCHW', 'OIHW', 'NCHW')``) as a ``ConvDimensionNumbers`` of axis tuples; None
    means the canonical layout (batch, feature, spatial...)."""
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    nd = len(lhs_shape)
    where = _shapes(lhs_shape, rhs_shape)
    if nd != len(rhs_shape):
        raise TypeError(f"{_fname}: lhs and rhs must have the same rank, got {where}")
    if nd < 2:
        raise TypeError(f"{_fname}: lhs and rhs need at least 2 dimensions (batch/feature), got {where}")
    if dimension_numbers is None:
        return ConvDimensionNumbers(*([tuple(range(nd))] * 3))
    try:
        specs = tuple(dimension_numbers)
    except TypeError:
        specs = ()
    if len(specs) != 3:
        raise TypeError(f"{_fname}: dimension_numbers must be None, a ConvDimensionNumbers or three spec "
                        f"strings like ('NCHW', 'OIHW', 'NCHW'), got {dimension_numbers!r} ({where})")
    if all(isinstance(s, str) for s in specs):
        for i, s in enumerate(specs):
            if len(s) != nd:
                raise TypeError(f"{_fname}: dimension_numbers[{i}] {s!r} has {len(s)} characters, but the "
                                f"operands have rank {nd} ({where})")
        return _conv_general_permutations(specs, _fname, where)
    out = []
    for i, s in enumerate(specs):  # a ConvDimensionNumbers (or three axis permutations)
        try:
            perm = tuple(int(d) for d in s)
        except (TypeError, ValueError):
            perm = ()
        if sorted(perm) != list(range(nd)):
            raise TypeError(f"{_fname}: dimension_numbers[{i}] must be a permutation of range({nd}), got "
                            f"{s!r} ({where})")
        out.append(perm)
    return ConvDimensionNumbers(*out)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit ``[(low, high), ...]`` pads for ``'SAME'``, ``'SAME_LOWER'`` or ``'VALID'``
    (JAX's rule: SAME gives ``ceil(in / stride)`` outputs, the odd pad at the end; SAME_LOWER
    puts it at the start)."""
    kind = str(padding).upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"padtype_to_pads: padding must be 'SAME', 'SAME_LOWER' or 'VALID', got {padding!r}")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = max((out - 1) * int(s) + int(k) - int(n), 0)
        lo, hi = total // 2, total - total // 2
        pads.append((lo, hi) if kind == "SAME" else (hi, lo))
    return pads


def _ints(v, n, name, fname, where, default=1, positive=True):
    """A tuple of ``n`` ints (``default`` when None), checked."""
    return _util.int_tuple(fname, v, n, name, where, "spatial dimension", default, positive)


def _explicit_pads(padding, n, fname, where):
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of "
                        f"(low, high) pairs, got {padding!r} ({where})") from None
    if len(pads) != n:
        raise ValueError(f"{fname}: padding needs one (low, high) pair per spatial dimension ({n}), "
                         f"got {pads} ({where})")
    return pads


def _dilate(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


def _operands(lhs, rhs, preferred_element_type, fname):
    import funcgrad.numpy as fnp  # the package's asarray (lists, tracers, dtype checks)

    lhs, rhs = fnp.asarray(lhs), fnp.asarray(rhs)
    la, ra = get_aval_any(lhs), get_aval_any(rhs)
    where = f"lhs {la.str_short()}, rhs {ra.str_short()}"
    if preferred_element_type is not None:
        dt = dtypes.canonicalize(preferred_element_type, what=f"{fname} preferred_element_type")
        lhs, rhs = lax.convert_element_type(lhs, dt), lax.convert_element_type(rhs, dt)
    elif la.dtype != ra.dtype:
        raise TypeError(f"{fname}: lhs and rhs must have the same dtype (or pass preferred_element_type), "
                        f"got {where}")
    if get_aval_any(lhs).dtype.kind not in "iuf":
        raise TypeError(f"{fname}: operands must be integer or floating, got {where}")
    return lhs, rhs, where


def _windows(x, window, strides, dilation, out):
    """The windows of ``x`` (N, spatial..., C) at each of the ``prod(window)`` offsets, as
    strided slices stacked on a new axis before C: (N, out..., K, C), offsets in C order."""
    shape = get_aval_any(x).shape
    n, c = shape[0], shape[-1]
    pieces = []
    for offset in np.ndindex(*window):
        start = [0] + [i * d for i, d in zip(offset, dilation)] + [0]
        limit = [n] + [s + (o - 1) * st + 1 for s, o, st in zip(start[1:], out, strides)] + [c]
        piece = lax.slice(x, start, limit, [1, *strides, 1])
        # a new unit axis by broadcast_in_dim, not reshape: compiled code indexes a
        # broadcast view directly, where a reshape view divides per element
        pieces.append(lax.broadcast_in_dim(piece, (n, *out, 1, c), (*range(len(out) + 1), len(out) + 2)))
    return lax.concatenate(pieces, len(out) + 1)


def _padded_windows(lhs, window, strides, pads, lhs_dilation, rhs_dilation, fname, where):
    """Pad/dilate the lhs (N, spatial..., C) and cut its windows: ((N, out..., K, C), out)."""
    shape = get_aval_any(lhs).shape
    spatial = shape[1:-1]
    padded = [_dilate(n, d) + lo + hi for n, d, (lo, hi) in zip(spatial, lhs_dilation, pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"{fname}: padding {tuple(pads)} crops more than the (dilated) lhs spatial sizes "
                         f"{spatial} ({where})")
    eff = [_dilate(k, d) for k, d in zip(window, rhs_dilation)]
    out = tuple(max(0, (p - e) // s + 1) if p >= e else 0 for p, e, s in zip(padded, eff, strides))
    if any(pads) or any(d != 1 for d in lhs_dilation):
        zero = np.zeros((), get_aval_any(lhs).dtype)
        cfg = [(0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, lhs_dilation)] + [(0, 0, 0)]
        lhs = lax.pad(lhs, zero, cfg)
    if 0 in out or shape[0] == 0 or shape[-1] == 0 or 0 in window:
        return None, out
    return _windows(lhs, window, strides, rhs_dilation, out), out


def _channels_last(spec):
    """The permutation to (batch, spatial..., feature) from a (batch, feature, spatial...)
    spec: the layout in which every product of the convolution and of its derivatives is a
    plain row-major or transposed matrix for BLAS (no packing)."""
    return (spec[0], *spec[2:], spec[1])


def _to_out_spec(result, out_spec):
    """(batch, spatial..., feature) -> the physical layout ``out_spec`` describes."""
    return lax.transpose(result, tuple(int(a) for a in np.argsort(_channels_last(out_spec))))


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None):
    """General n-d convolution (XLA's ConvWithGeneralPadding), as ``jax.lax`` has it.

    ``padding`` is ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or ``[(low, high), ...]``
    (negative entries crop); ``lhs_dilation`` inserts ``d - 1`` zeros between input
    elements (transposed convolution), ``rhs_dilation`` spaces the kernel taps (atrous);
    ``feature_group_count`` splits the input features into groups each with its own
    kernels (depthwise: one group per feature); ``batch_group_count`` splits the batch
    likewise (the kernel gradient of a grouped convolution). ``precision`` is accepted and
    ignored (products are exact float64/float32 BLAS products); ``preferred_element_type``
    casts both operands (and so the result) to that dtype.
    """
    fname = _FN
    lhs, rhs, where = _operands(lhs, rhs, preferred_element_type, fname)
    lshape, rshape = get_aval_any(lhs).shape, get_aval_any(rhs).shape
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers, _fname=fname)
    nsp = len(lshape) - 2
    strides = _ints(window_strides, nsp, "window_strides", fname, where)
    lhs_dil = _ints(lhs_dilation, nsp, "lhs_dilation", fname, where)
    rhs_dil = _ints(rhs_dilation, nsp, "rhs_dilation", fname, where)
    lhs = lax.transpose(lhs, _channels_last(dn.lhs_spec))  # (N, spatial..., C)
    rhs = lax.transpose(rhs, (*dn.rhs_spec[2:], dn.rhs_spec[1], dn.rhs_spec[0]))  # (spatial..., I, O)
    lshape, rshape = get_aval_any(lhs).shape, get_aval_any(rhs).shape
    (n, c), (i, o), window = (lshape[0], lshape[-1]), rshape[-2:], rshape[:-2]
    groups, bgroups = _group_counts(feature_group_count, batch_group_count, n, c, o, i, fname, where)
    if isinstance(padding, str):
        pads = padtype_to_pads(lshape[1:-1], [_dilate(k, d) for k, d in zip(window, rhs_dil)], strides, padding)
    else:
        pads = _explicit_pads(padding, nsp, fname, where)
    patches, out = _padded_windows(lhs, window, strides, pads, lhs_dil, rhs_dil, fname, where)
    nb = n // bgroups
    if patches is None or i == 0:  # an empty window, batch or output: nothing to sum
        dtype = get_aval_any(lhs).dtype
        result = lax.broadcast_in_dim(np.zeros((), dtype), (nb, *out, o), ())
    else:
        result = _grouped_product(patches, rhs, groups, bgroups, out)
    return _to_out_spec(result, dn.out_spec)


def _group_counts(feature_group_count, batch_group_count, n, c, o, i, fname, where):
    g, b = int(feature_group_count), int(batch_group_count)
    if g < 1 or b < 1:
        raise ValueError(f"{fname}: feature_group_count ({g}) and batch_group_count ({b}) must be >= 1 ({where})")
    if g > 1 and b > 1:
        raise ValueError(f"{fname}: at most one of feature_group_count ({g}) and batch_group_count ({b}) "
                         f"may exceed 1 ({where})")
    if c % g or c // g != i:
        raise ValueError(f"{fname}: the lhs feature dimension ({c}) must be feature_group_count ({g}) times "
                         f"the rhs input feature dimension ({i}) ({where})")
    if o % g:
        raise ValueError(f"{fname}: the rhs output feature dimension ({o}) must be a multiple of "
                         f"feature_group_count ({g}) ({where})")
    if n % b:
        raise ValueError(f"{fname}: the lhs batch dimension ({n}) must be a multiple of batch_group_count "
                         f"({b}) ({where})")
    if o % b:
        raise ValueError(f"{fname}: the rhs output feature dimension ({o}) must be a multiple of "
                         f"batch_group_count ({b}) ({where})")
    return g, b


def _grouped_product(patches, rhs, groups, bgroups, out):
    """patches (N, out..., K, C) . kernel (window..., C/groups, O) -> (N/bgroups, out..., O).

    Groups (StableHLO's split/concatenate semantics) become the batch dimension of one
    dot_general: feature groups split C into contiguous chunks, batch groups split N; both
    split O into contiguous chunks, output features group-major.
    """
    shape = get_aval_any(patches).shape
    n, k, c = shape[0], shape[-2], shape[-1]
    i, o = get_aval_any(rhs).shape[-2:]
    nsp = len(out)
    if groups == 1 and bgroups == 1:
        kernel = lax.reshape(rhs, (k, i, o))
        return lax.dot_general(patches, kernel, (((nsp + 1, nsp + 2), (0, 1)), ((), ())))
    g = groups * bgroups
    kernel = lax.reshape(rhs, (k, i, g, o // g))
    if groups > 1:
        patches = lax.reshape(patches, (n, *out, k, g, c // g))
        dims = (((nsp + 1, nsp + 3), (0, 1)), ((nsp + 2,), (2,)))  # -> (G, N, out..., O/G)
        res = lax.dot_general(patches, kernel, dims)
        res = lax.transpose(res, (*range(1, nsp + 2), 0, nsp + 2))  # (N, out..., G, O/G)
        return lax.reshape(res, (n, *out, o))
    patches = lax.reshape(patches, (g, n // g, *out, k, c))
    res = lax.dot_general(patches, kernel, (((nsp + 2, nsp + 3), (0, 1)), ((0,), (2,))))  # (B, N/B, out.., O/B)
    res = lax.transpose(res, (*range(1, nsp + 2), 0, nsp + 2))  # (N/B, out..., B, O/B)
    return lax.reshape(res, (n // g, *out, o))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` in the canonical layout (NCHW, OIHW) without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` in the canonical layout with both dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    """JAX's pads for a transposed convolution with 'SAME' or 'VALID' semantics."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else int(math.ceil(total / 2))
    else:
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    return lo, total - lo


_TRANSPOSE_DEFAULT_DN = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                         5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """Transposed convolution ("deconvolution"), JAX's: the input is dilated by
    ``strides`` and convolved with stride 1. ``padding`` 'SAME'/'VALID' give TensorFlow's
    output sizes (``in * stride`` for SAME); explicit pads are passed through. With
    ``transpose_kernel=True`` the kernel's spatial axes are flipped and its I/O axes
    swapped, which makes this the gradient of ``conv_general_dilated`` w.r.t. its input.
    The default layout is NHWC / HWIO (by rank: NC, NHC, NHWC, NHWDC).
    """
    import funcgrad.numpy as fnp

    fname = "conv_transpose"
    lhs, rhs = fnp.asarray(lhs), fnp.asarray(rhs)
    lshape, rshape = get_aval_any(lhs).shape, get_aval_any(rhs).shape
    if dimension_numbers is None:
        if len(lshape) != len(rshape) or len(lshape) not in _TRANSPOSE_DEFAULT_DN:
            raise ValueError(f"{fname}: no default dimension_numbers for {_shapes(lshape, rshape)} "
                             "(ranks 2 to 5 of equal rank have one); pass dimension_numbers")
        dimension_numbers = _TRANSPOSE_DEFAULT_DN[len(lshape)]
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers, _fname=fname)
    nsp = len(lshape) - 2
    where = _shapes(lshape, rshape)
    strides = _ints(strides, nsp, "strides", fname, where)
    rhs_dil = _ints(rhs_dilation, nsp, "rhs_dilation", fname, where)
    window = [rshape[d] for d in dn.rhs_spec[2:]]
    if isinstance(padding, str) and padding in ("SAME", "VALID"):
        pads = [_conv_transpose_padding(_dilate(k, d), s, padding) for k, d, s in zip(window, rhs_dil, strides)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = lax.rev(rhs, dn.rhs_spec[2:])
        perm = list(range(len(rshape)))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = lax.transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * nsp, pads, strides, rhs_dil, dn,
                                precision=precision, preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches (im2col) ``conv_general_dilated`` would multiply with a kernel of
    spatial shape ``filter_shape``: the output's feature dimension has ``C *
    prod(filter_shape)`` entries, input feature major, then the window offsets in C
    order (JAX's layout). ``dimension_numbers`` as for ``conv_general_dilated``; its rhs
    spec only fixes the spatial order."""
    import funcgrad.numpy as fnp

    fname = "conv_general_dilated_patches"
    lhs = fnp.asarray(lhs)
    if preferred_element_type is not None:
        lhs = lax.convert_element_type(lhs, dtypes.canonicalize(preferred_element_type))
    lshape = get_aval_any(lhs).shape
    filter_shape = tuple(int(k) for k in filter_shape)
    if len(filter_shape) != len(lshape) - 2:
        raise ValueError(f"{fname}: filter_shape {filter_shape} needs one size per spatial dimension of the "
                         f"lhs shape {lshape}")
    dn = conv_dimension_numbers(lshape, lshape, dimension_numbers, _fname=fname)
    where = f"lhs shape {lshape}, filter_shape {filter_shape}"
    nsp = len(filter_shape)
    strides = _ints(window_strides, nsp, "window_strides", fname, where)
    lhs_dil = _ints(lhs_dilation, nsp, "lhs_dilation", fname, where)
    rhs_dil = _ints(rhs_dilation, nsp, "rhs_dilation", fname, where)
    lhs = lax.transpose(lhs, _channels_last(dn.lhs_spec))
    lshape = get_aval_any(lhs).shape
    n, c = lshape[0], lshape[-1]
    if isinstance(padding, str):
        pads = padtype_to_pads(lshape[1:-1], [_dilate(k, d) for k, d in zip(filter_shape, rhs_dil)], strides, padding)
    else:
        pads = _explicit_pads(padding, nsp, fname, where)
    patches, out = _padded_windows(lhs, filter_shape, strides, pads, lhs_dil, rhs_dil, fname, where)
    k = math.prod(filter_shape)
    if patches is None:
        result = lax.broadcast_in_dim(np.zeros((), get_aval_any(lhs).dtype), (n, *out, c * k), ())
    else:  # (N, out..., K, C) -> (N, out..., C * K), input feature major as JAX's
        nsp = len(out)
        result = lax.reshape(lax.transpose(patches, (*range(nsp + 1), nsp + 2, nsp + 1)), (n, *out, c * k))
    return _to_out_spec(result, dn.out_spec)
