"""Image resampling (``jax.image``): ``resize`` and ``scale_and_translate`` with JAX's
kernels (``nearest``, ``linear``, ``cubic`` (Keys, a = -0.5), ``lanczos3``, ``lanczos5``) and
its conventions: half-pixel centres, antialiasing when downsampling (the kernel widened by
the scale), weights normalised per output sample, samples outside the input giving 0.
Each resized axis is a matrix product with a weight matrix built from the static shapes,
so ``grad``, ``vmap`` and ``jit`` see through it.

>>> import funcgrad as fg
>>> fg.image.resize(np.array([0.0, 1.0]), (4,), "linear")
Array([0.  , 0.25, 0.75, 1.  ])
"""
from __future__ import annotations

import enum

import numpy as np

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The interpolation kernels: ``NEAREST``, ``LINEAR``, ``LANCZOS3``, ``LANCZOS5``, ``CUBIC``.
    ``from_string`` reads JAX's names (``"bilinear"``, ``"bicubic"``, ``"trilinear"``, ...)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method named ``s``."""
        names = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
                 "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
                 "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
                 "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"; one of {sorted(names)}')
        return names[s]


def _lanczos(radius):
    def kernel(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            y = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi ** 2 * x ** 2)
        out = np.where(x > 1e-3, y, 1.0)
        return np.where(x > radius, 0.0, out)
    return kernel


def _keys_cubic(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = np.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return np.where(x >= 2.0, 0.0, out)


def _triangle(x):
    return np.maximum(0.0, 1.0 - np.abs(x))


_KERNELS = {ResizeMethod.LINEAR: _triangle, ResizeMethod.LANCZOS3: _lanczos(3.0),
            ResizeMethod.LANCZOS5: _lanczos(5.0), ResizeMethod.CUBIC: _keys_cubic}


def _weights(in_size, out_size, scale, translation, kernel, antialias):
    """The (in_size, out_size) weight matrix of one axis (JAX's ``compute_weight_mat``),
    from static numbers, in float64."""
    inv_scale = 1.0 / scale
    kernel_scale = max(inv_scale, 1.0) if antialias else 1.0
    sample = (np.arange(out_size) + 0.5) * inv_scale - translation * inv_scale - 0.5
    w = kernel(np.abs(sample[None, :] - np.arange(in_size)[:, None]) / kernel_scale)
    total = w.sum(axis=0, keepdims=True)
    w = np.where(np.abs(total) > 1000.0 * float(np.finfo(np.float32).eps), w / np.where(total != 0, total, 1), 0.0)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return np.where(inside[None, :], w, 0.0)


def _check_shape(fname, image, shape):
    from funcgrad import numpy as fnp

    shape = tuple(int(d) for d in shape)
    if len(shape) != fnp.ndim(image):
        raise ValueError(f"{fname}: shape {shape} must have one entry per axis of the image, shape "
                         f"{fnp.shape(image)}")
    return shape


def _apply(image, shape, axes, scales, translations, kernel, antialias):
    from funcgrad import numpy as fnp

    for ax, s, t in zip(axes, scales, translations):
        w = _weights(image.shape[ax], shape[ax], float(s), float(t), kernel, antialias).astype(image.dtype)
        image = fnp.moveaxis(fnp.tensordot(fnp.moveaxis(image, ax, -1), w, axes=1), -1, ax)
    return image


def _inexact(image):
    from funcgrad import numpy as fnp

    image = fnp.asarray(image)
    return image if image.dtype.kind in "fc" else image.astype(np.float64)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True, precision=None):
    """``image`` resampled into ``shape`` on the axes ``spatial_dims``: output sample ``j``
    of an axis reads the input at ``(j + 0.5 - translation) / scale - 0.5`` (``scale`` and
    ``translation`` per spatial axis, static numbers). ``method`` as ``resize``'s, but not
    ``nearest``."""
    shape = _check_shape("scale_and_translate", image, shape)
    spatial_dims = tuple(int(d) for d in spatial_dims)
    scale, translation = np.asarray(scale, np.float64).reshape(-1), np.asarray(translation, np.float64).reshape(-1)
    if not len(spatial_dims) == len(scale) == len(translation):
        raise ValueError(f"scale_and_translate: spatial_dims {spatial_dims}, scale {scale.tolist()} and "
                         f"translation {translation.tolist()} must have one entry each per spatial axis")
    method = ResizeMethod.from_string(method) if isinstance(method, str) else ResizeMethod(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate: nearest-neighbour resampling is not supported (as in JAX)")
    image = _inexact(image)
    axes = [d % image.ndim for d in spatial_dims]
    return _apply(image, shape, axes, scale, translation, _KERNELS[method], antialias)


def _resize_nearest(image, shape):
    from funcgrad import numpy as fnp

    for ax, (m, n) in enumerate(zip(image.shape, shape)):
        if m != n:  # JAX computes the source index in float32
            src = np.floor((np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n))
            image = fnp.take(image, src.astype(np.int64), axis=ax)
    return image


def resize(image, shape, method, antialias=True, precision=None):
    """``image`` resampled to ``shape`` (one entry per axis; axes whose length does not change
    are left as they are) with ``method``: a ``ResizeMethod`` or its name (``"nearest"``,
    ``"linear"``/``"bilinear"``, ``"cubic"``/``"bicubic"``, ``"lanczos3"``, ``"lanczos5"``).
    ``antialias`` widens the kernel when downsampling. Integer images give floats (nearest
    keeps the dtype).

    >>> fg.image.resize(np.arange(4.0), (2,), "linear", antialias=False)
    Array([0.5, 2.5])
    """
    from funcgrad import numpy as fnp

    shape = _check_shape("resize", image, shape)
    method = ResizeMethod.from_string(method) if isinstance(method, str) else ResizeMethod(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(fnp.asarray(image), shape)
    image = _inexact(image)
    axes = [i for i in range(image.ndim) if image.shape[i] != shape[i]]
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in axes]
    return _apply(image, shape, axes, scales, [0.0] * len(axes), _KERNELS[method], antialias)
