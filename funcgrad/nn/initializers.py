"""``funcgrad.nn.initializers``: weight initialisers with ``jax.nn.initializers``' names.

Every initialiser is a function ``init(key, shape, dtype=float64) -> array`` taking a
``funcgrad.random`` key (typed or raw); the factories (``normal(stddev)``,
``variance_scaling(...)``, ``glorot_uniform()``, ...) return one, as in JAX:

>>> import funcgrad as fg
>>> w = fg.nn.initializers.glorot_uniform()(fg.random.key(0), (784, 256))

Fans (``variance_scaling``): for a shape with ``in_axis`` and ``out_axis`` (default -2
and -1) and optional ``batch_axis``, the *receptive field* is the product of the other
dimensions; ``fan_in = shape[in_axis] * receptive field`` and likewise ``fan_out``.
``mode`` picks the fan (``fan_in``, ``fan_out``, ``fan_avg`` = their mean, ``fan_geo`` =
their geometric mean), ``variance = scale / fan``, and ``distribution`` draws with that
variance: ``truncated_normal`` (standard normal on (-2, 2), rescaled by the truncated
distribution's standard deviation 0.8796...), ``normal`` or ``uniform`` (on
``±sqrt(3 variance)``). float64 is the default dtype (JAX's is float32).
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.core import dtypes

__all__ = [
    "zeros", "ones", "constant", "normal", "uniform", "truncated_normal", "variance_scaling",
    "glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal", "lecun_uniform", "lecun_normal",
    "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal", "orthogonal",
]

# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNCATED_STD = 0.87962566103423978


def _dtype(fname, dtype):
    dt = dtypes.canonicalize(dtypes.default_float if dtype is None else dtype, what=f"{fname} dtype")
    if dt.kind != "f":
        raise TypeError(f"{fname}: dtype must be a float dtype, got {dt.name}")
    return dt


def _shape(fname, shape):
    try:
        return tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    except TypeError:
        raise TypeError(f"{fname}: shape must be a tuple of ints, got {shape!r}") from None


def zeros(key, shape, dtype=None):
    """An initialiser giving zeros (``key`` is ignored)."""
    return fnp.zeros(_shape("zeros", shape), _dtype("zeros", dtype))


def ones(key, shape, dtype=None):
    """An initialiser giving ones (``key`` is ignored)."""
    return fnp.ones(_shape("ones", shape), _dtype("ones", dtype))


def constant(value, dtype=None):
    """An initialiser filling the array with ``value``."""
    def init(key, shape, dtype=dtype):
        return fnp.full(_shape("constant", shape), value, _dtype("constant", dtype))
    return init


def normal(stddev=1e-2, dtype=None):
    """An initialiser drawing from ``N(0, stddev**2)``."""
    def init(key, shape, dtype=dtype):
        dt = _dtype("normal", dtype)
        return random.normal(key, _shape("normal", shape), dt) * np.asarray(stddev, dt)
    return init


def uniform(scale=1e-2, dtype=None):
    """An initialiser drawing uniformly from ``[0, scale)`` (JAX's convention)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype("uniform", dtype)
        return random.uniform(key, _shape("uniform", shape), dt) * np.asarray(scale, dt)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initialiser drawing ``stddev`` times a standard normal truncated to
    ``(lower, upper)``."""
    def init(key, shape, dtype=dtype):
        dt = _dtype("truncated_normal", dtype)
        shape = _shape("truncated_normal", shape)
        return random.truncated_normal(key, lower, upper, shape, dt) * np.asarray(stddev, dt)
    return init


def _fans(shape, in_axis, out_axis, batch_axis):
    if len(shape) < 2:
        raise ValueError(
            f"variance_scaling: needs a shape of rank >= 2 to tell fan-in from fan-out (in_axis={in_axis}, "
            f"out_axis={out_axis}), got {shape}")
    rank = len(shape)
    axes = [in_axis] if isinstance(in_axis, int) else list(in_axis)
    axes_out = [out_axis] if isinstance(out_axis, int) else list(out_axis)
    batch = [batch_axis] if isinstance(batch_axis, int) else list(batch_axis)
    try:
        norm = lambda xs: [a % rank if -rank <= a < rank else _bad(a, shape) for a in xs]  # noqa: E731
        axes, axes_out, batch = norm(axes), norm(axes_out), norm(batch)
    except IndexError as e:
        raise ValueError(f"variance_scaling: {e}") from None
    in_size = math.prod(shape[a] for a in axes)
    out_size = math.prod(shape[a] for a in axes_out)
    batch_size = math.prod(shape[a] for a in batch)
    receptive = math.prod(shape) / (in_size * out_size * batch_size) if in_size * out_size * batch_size else 0.0
    return in_size * receptive, out_size * receptive


def _bad(axis, shape):
    raise IndexError(f"axis {axis} is out of range for shape {shape}")


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """An initialiser with variance ``scale / fan`` (see the module docstring)."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo"):
        raise ValueError(f"variance_scaling: invalid mode {mode!r}: use fan_in, fan_out, fan_avg or fan_geo")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(
            f"variance_scaling: invalid distribution {distribution!r}: use truncated_normal, normal or uniform")

    def init(key, shape, dtype=dtype):
        shape = _shape("variance_scaling", shape)
        dt = _dtype("variance_scaling", dtype)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
               "fan_geo": math.sqrt(fan_in * fan_out)}[mode]
        variance = scale / fan if fan > 0 else float(scale)  # (a zero-size array: any value)
        if distribution == "truncated_normal":
            std = math.sqrt(variance) / _TRUNCATED_STD
            return random.truncated_normal(key, -2.0, 2.0, shape, dt) * np.asarray(std, dt)
        if distribution == "normal":
            return random.normal(key, shape, dt) * np.asarray(math.sqrt(variance), dt)
        bound = math.sqrt(3.0 * variance)
        return random.uniform(key, shape, dt, -bound, bound)

    return init


def _named(scale, mode, distribution, doc):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)
    factory.__doc__ = doc
    return factory


glorot_uniform = _named(1.0, "fan_avg", "uniform", "Glorot/Xavier uniform: variance 1/fan_avg.")
glorot_normal = _named(1.0, "fan_avg", "truncated_normal", "Glorot/Xavier (truncated) normal: variance 1/fan_avg.")
lecun_uniform = _named(1.0, "fan_in", "uniform", "LeCun uniform: variance 1/fan_in.")
lecun_normal = _named(1.0, "fan_in", "truncated_normal", "LeCun (truncated) normal: variance 1/fan_in.")
he_uniform = _named(2.0, "fan_in", "uniform", "He/Kaiming uniform: variance 2/fan_in.")
he_normal = _named(2.0, "fan_in", "truncated_normal", "He/Kaiming (truncated) normal: variance 2/fan_in.")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initialiser giving a (scaled) matrix with orthonormal rows or columns: the
    array, viewed as a matrix whose columns are along ``column_axis``, is orthogonal
    (QR of a normal matrix, signs fixed by R's diagonal, as JAX's)."""
    def init(key, shape, dtype=dtype):
        shape = _shape("orthogonal", shape)
        dt = _dtype("orthogonal", dtype)
        if len(shape) < 2:
            raise ValueError(f"orthogonal: needs a shape of rank >= 2, got {shape}")
        axis = column_axis % len(shape)
        n_cols = shape[axis]
        n_rows = math.prod(shape) // n_cols
        tall = (n_rows, n_cols) if n_rows >= n_cols else (n_cols, n_rows)
        q, r = fnp.linalg.qr(random.normal(key, tall, dt))
        q = q * fnp.sign(fnp.diagonal(r))[None, :]
        if n_rows < n_cols:
            q = q.T
        rest = tuple(d for i, d in enumerate(shape) if i != axis)
        q = fnp.reshape(q, rest + (n_cols,))
        return fnp.moveaxis(q, -1, axis) * np.asarray(scale, dt)
    return init
