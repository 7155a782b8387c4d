"""funcgrad.numpy: array creation (zeros, arange, linspace, eye, meshgrid, tril, diag, ...).

With no transform active and only concrete inputs, NumPy builds the result directly (the
eager shortcut); like every eager result it is returned as a read-only value
(``funcgrad.Array``, see ``core/array.py``), without a copy: ``x.copy()`` is writeable.
Under tracing they stage a handful of primitives -- a broadcast of a scalar, ``iota``,
compare + select -- so a compiled program never carries a large constant it could
compute from a few numbers.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.trace import is_eager, is_staging
from funcgrad.errors import ConcretizationError
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import aval_of, is_tracer

__all__ = [
    "array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "full_like", "empty_like", "arange", "linspace", "logspace", "eye", "identity",
    "meshgrid", "tri", "tril", "triu", "diag",
]


def _eager(*args) -> bool:
    """True when NumPy can build the result directly: nothing stages and no input is
    traced (a transform such as the eager tape of ``grad`` may be active: it never sees
    an operation on constants, which would run eagerly through the primitives anyway)."""
    return not is_staging() and not any(is_tracer(a) for a in args)


def _dtype(dtype, fname, default=None):
    if dtype is None:
        return default
    return dtypes.canonicalize(dtype, what=f"{fname} dtype")


def _shape(shape, fname) -> tuple:
    """``shape`` (an int or a sequence of ints) as a tuple; tracers cannot be shapes."""
    try:
        if np.ndim(shape) == 0 and not isinstance(shape, (list, tuple)):
            shape = (operator.index(shape),)
        else:
            shape = tuple(operator.index(d) for d in shape)
    except ConcretizationError:
        raise
    except TypeError as e:
        raise TypeError(f"{fname}: shape must be an int or a sequence of ints, got {shape!r}") from e
    if any(d < 0 for d in shape):
        raise ValueError(f"{fname}: negative dimensions are not allowed, got shape {shape}")
    return shape


# --- array / asarray -----------------------------------------------------------------------
def asarray(a, dtype=None, order=None, copy=None, *, device=None):
    """Convert ``a`` to an array (an ``ndarray`` eagerly, the tracer itself under tracing).

    >>> fnp.asarray([1, 2], dtype=fnp.float32)
    Array([1., 2.], dtype=float32)
    """
    _util.check_device("asarray", device)
    x = _util.asarray(a, dtype, fname="asarray")
    if isinstance(x, np.generic):  # numpy.asarray(np.float64(1)) is a 0-d ndarray
        x = np.asarray(x)
    return x


def array(object, dtype=None, copy=True, order=None, ndmin=0):  # noqa: A002 - NumPy's name
    """Like ``numpy.array``: ``asarray`` plus ``ndmin`` (leading 1s). Eager results are
    fresh copies; traced values are immutable, so copying them is moot."""
    x = asarray(object, dtype)
    if isinstance(x, np.ndarray) and copy:
        x = x.copy()
    ndim = aval_of(x).ndim
    if ndmin > ndim:
        x = lax.reshape(x, (1,) * (ndmin - ndim) + aval_of(x).shape)
    return x


# --- filled arrays ---------------------------------------------------------------------------
def full(shape, fill_value, dtype=None, *, device=None):
    """An array of ``shape`` filled with ``fill_value`` (a scalar or a broadcastable array).

    >>> fnp.full((2, 2), 7)
    Array([[7, 7],
           [7, 7]])
    """
    _util.check_device("full", device)
    shape = _shape(shape, "full")
    _util.check_arraylike("full", fill_value)
    fill = _util.asarray(fill_value, fname="full")
    dtype = _dtype(dtype, "full", default=aval_of(fill).dtype)
    if aval_of(fill).ndim == 0:
        return _util.full(shape, fill, dtype)
    _util.broadcast_shapes("full", aval_of(fill).shape, shape)  # error naming full
    if _eager(fill):
        return np.full(shape, fill, dtype)
    return lax.broadcast_to_rank(lax.convert_element_type(fill, dtype), shape)


def zeros(shape, dtype=None, *, device=None):
    """Zeros of ``shape`` (default dtype float64)."""
    _util.check_device("zeros", device)
    return _util.full(_shape(shape, "zeros"), 0, _dtype(dtype, "zeros", dtypes.float64))


def ones(shape, dtype=None, *, device=None):
    """Ones of ``shape`` (default dtype float64)."""
    _util.check_device("ones", device)
    return _util.full(_shape(shape, "ones"), 1, _dtype(dtype, "ones", dtypes.float64))


def empty(shape, dtype=None, *, device=None):
    """Like ``zeros``: funcgrad never hands out uninitialised memory."""
    _util.check_device("empty", device)
    return _util.full(_shape(shape, "empty"), 0, _dtype(dtype, "empty", dtypes.float64))


def _like(fname, a, fill_value, dtype, shape):
    _util.check_arraylike(fname, a)
    aval = aval_of(a)
    dtype = _dtype(dtype, fname, aval.dtype)
    shape = aval.shape if shape is None else _shape(shape, fname)
    return full(shape, fill_value, dtype)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    """Zeros with the shape and dtype of ``a`` (either may be overridden)."""
    _util.check_device("zeros_like", device)
    return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None, *, device=None):
    """Ones with the shape and dtype of ``a`` (either may be overridden)."""
    _util.check_device("ones_like", device)
    return _like("ones_like", a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None, *, device=None):
    """Like ``zeros_like`` (no uninitialised memory)."""
    _util.check_device("empty_like", device)
    return _like("empty_like", a, 0, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    """``fill_value`` with the shape and dtype of ``a``; ``fill_value`` may be traced."""
    _util.check_device("full_like", device)
    return _like("full_like", a, fill_value, dtype, shape)


# --- ranges -------------------------------------------------------------------------------
def _static_number(x, fname, argname):
    """A concrete Python/NumPy scalar; ranges need static lengths."""
    if is_tracer(x):  # a traced bound is an error unless its trace knows the value
        val = x.to_concrete_value()
        if val is None:
            raise ConcretizationError(
                f"{fname}: {argname} is a traced value {x.aval.str_short()}, but the result's "
                "length must be known while tracing. Pass a Python number (mark it static "
                "with jit's static_argnums), or build the range from fnp.arange of a static "
                "length, e.g. start + step * fnp.arange(n)."
            )
        x = val
    if isinstance(x, (np.ndarray, np.generic)):
        if np.ndim(x) != 0:
            raise ValueError(f"{fname}: {argname} must be a scalar, got shape {np.shape(x)}")
        return x[()] if isinstance(x, np.ndarray) else x
    if isinstance(x, (bool, int, float)):
        return x
    raise TypeError(f"{fname}: {argname} must be a number, got {type(x).__name__}")


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values in ``[start, stop)``, like ``numpy.arange``.

    The length is ``ceil((stop - start) / step)``; values are ``start + i * delta``
    with ``delta = (start + step) - start`` in the result dtype, which is how NumPy
    fills them. Arguments must be concrete: the length is part of the type.

    >>> fnp.arange(5, 0, -2)
    Array([5, 3, 1])
    """
    _util.check_device("arange", device)
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    start = _static_number(start, "arange", "start")
    stop = _static_number(stop, "arange", "stop")
    step = _static_number(step, "arange", "step")
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if not math.isfinite(v):
            raise ValueError(f"arange: {name} must be finite, got {v} (the length would be unbounded)")
    if dtype is None:
        # NumPy uses the default types whatever the scalars' own precision:
        # arange(np.int32(3)) is int64, arange(np.float32(3)) is float64.
        floats = any(isinstance(v, (float, np.floating)) for v in (start, stop, step))
        dtype = dtypes.float64 if floats else dtypes.int64
    dtype = dtypes.canonicalize(dtype, what="arange dtype")
    if _eager():
        return np.arange(start, stop, step, dtype=dtype)
    length = max(0, math.ceil((stop - start) / step))
    if length == 0:
        return _util.full((0,), 0, dtype)
    if dtype == dtypes.bool_ and length > 2:
        raise TypeError("arange: a boolean range can have at most 2 elements (as in NumPy)")
    calc = dtypes.int64 if dtype == dtypes.bool_ else dtype
    first = np.asarray(start).astype(calc)
    delta = (np.asarray(start + step).astype(calc) - first).astype(calc)
    out = lax.add(lax.mul(lax.iota(calc, (length,)), _util.full((length,), delta, calc)),
                  _util.full((length,), first, calc))
    return lax.convert_element_type(out, dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``num`` evenly spaced samples from ``start`` to ``stop``, like ``numpy.linspace``.

    Computed as NumPy does: ``start + arange(num) * step`` with
    ``step = (stop - start) / div``, the last sample set to ``stop`` when ``endpoint``.
    ``start``/``stop`` may be arrays (samples run along ``axis``) and may be traced.
    (NumPy switches to ``arange(num) / div * delta`` when ``step`` underflows to 0;
    funcgrad does the same for concrete inputs only.)

    >>> fnp.linspace(0.0, 1.0, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    _util.check_device("linspace", device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    _util.check_arraylike("linspace", start, stop)
    out_dtype = _dtype(dtype, "linspace")
    if is_eager() and not any(is_tracer(a) for a in (start, stop)):  # (NumPy's rounding only eagerly)
        return np.linspace(_util.asarray(start), _util.asarray(stop), num, endpoint=endpoint,
                           retstep=retstep, dtype=out_dtype, axis=axis)
    div = num - 1 if endpoint else num
    start, stop = _util.promote_dtypes_inexact(start, stop)
    # NumPy's guard for a step that underflows to 0 (denormal spans); static inputs only.
    underflow = div > 0 and not (is_tracer(start) or is_tracer(stop)) and bool(
        np.any((np.asarray(stop) - np.asarray(start)) / div == 0))
    dt = aval_of(start).dtype
    start, stop = (lax.convert_element_type(v, dt) for v in (start, stop))  # drop weakness
    start, stop = _util.promote_shapes("linspace", start, stop)
    bshape = aval_of(start).shape
    shape = (num,) + bshape
    delta = lax.sub(stop, start)
    idx = lax.iota(dt, shape, 0)
    bcast = lambda v: lax.broadcast_in_dim(v, shape, tuple(range(1, len(shape))))  # noqa: E731
    if div > 0:
        step = lax.div(delta, _util.full(bshape, div, dt))
        if underflow:
            y = lax.mul(lax.div(idx, _util.full(shape, div, dt)), bcast(delta))
        else:
            y = lax.mul(idx, bcast(step))
    else:
        step = _util.full(bshape, np.nan, dt)
        y = lax.mul(idx, bcast(delta))
    y = lax.add(y, bcast(start))
    if endpoint and num > 1:
        head = lax.slice(y, (0,) * len(shape), (num - 1,) + bshape)
        y = lax.concatenate([head, lax.reshape(stop, (1,) + bshape)], 0)
    axis = _util.canonicalize_axis(axis, len(shape), "linspace")
    if axis != 0:
        perm = list(range(1, len(shape)))
        perm.insert(axis, 0)
        y = lax.transpose(y, perm)
    if out_dtype is not None:
        if out_dtype.kind in "iu":
            y = lax.floor(y)
        y = lax.convert_element_type(y, out_dtype)
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``, like ``numpy.logspace`` (scalar ``base``)."""
    _util.check_arraylike("logspace", base)
    if aval_of(base).ndim != 0:
        raise NotImplementedError("logspace: only a scalar base is supported")
    y = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    b, y = _util.promote_args_inexact("logspace", base, y)
    out = lax.pow(b, y)
    if dtype is not None:
        out = lax.convert_element_type(out, _dtype(dtype, "logspace"))
    return out


# --- matrices -------------------------------------------------------------------------------
def _diag_mask(n, m, k, fname, cmp=lax.eq):
    """bool[n, m]: ``cmp(row + k, col)`` built from two iotas (no constant matrix)."""
    rows = lax.iota(dtypes.int64, (n, m), 0)
    cols = lax.iota(dtypes.int64, (n, m), 1)
    return cmp(lax.add(rows, _util.full((n, m), k, dtypes.int64)), cols)


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """Ones on the ``k``-th diagonal of an ``N x M`` matrix (default dtype float64)."""
    _util.check_device("eye", device)
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    dtype = _dtype(dtype, "eye", dtypes.float64)
    if N < 0 or M < 0:
        raise ValueError(f"eye: negative dimensions are not allowed, got N={N}, M={M}")
    if _eager():
        return np.eye(N, M, k, dtype=dtype)
    return lax.convert_element_type(_diag_mask(N, M, k, "eye"), dtype)


def identity(n, dtype=None):
    """The ``n x n`` identity matrix (default dtype float64)."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the ``k``-th diagonal (``col <= row + k``); default float64."""
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    dtype = _dtype(dtype, "tri", dtypes.float64)
    if _eager():
        return np.tri(N, M, k, dtype=dtype)
    return lax.convert_element_type(_diag_mask(N, M, k, "tri", lax.ge), dtype)


def _tri_select(fname, m, k, lower):
    _util.check_arraylike(fname, m)
    m = _util.asarray(m, fname=fname)
    k = operator.index(k)
    shape = aval_of(m).shape
    if len(shape) == 0:
        raise ValueError(f"{fname}: input must be at least 1-d, got a 0-d array")
    n, cols = (shape[-1], shape[-1]) if len(shape) == 1 else shape[-2:]
    # lower keeps col <= row + k; upper keeps col >= row + k, i.e. not (col <= row + k - 1)
    mask = _diag_mask(n, cols, k if lower else k - 1, fname, lax.ge)
    if not lower:
        mask = lax.bitwise_not(mask)
    out_shape = _util.broadcast_shapes(fname, shape, (n, cols))
    mask = lax.broadcast_to_rank(mask, out_shape)
    m = _util.broadcast_to(m, out_shape)
    return lax.select(mask, m, _util.full(out_shape, 0, aval_of(m).dtype))


def tril(m, k=0):
    """Zero the entries above the ``k``-th diagonal of the last two axes (batched)."""
    return _tri_select("tril", m, k, lower=True)


def triu(m, k=0):
    """Zero the entries below the ``k``-th diagonal of the last two axes (batched)."""
    return _tri_select("triu", m, k, lower=False)


def diagonal_2d(m, k, fname="diag"):
    """The ``k``-th diagonal of the last two axes of ``m``, moved to the end.

    Flattening the two axes makes the diagonal a strided slice: element ``(i, i + k)``
    sits at ``offset + i * (cols + 1)``. No arithmetic, so values are exact.
    """
    shape = aval_of(m).shape
    lead, (n, cols) = shape[:-2], shape[-2:]
    length = max(0, min(n, cols - k) if k >= 0 else min(n + k, cols))
    flat = lax.reshape(m, lead + (n * cols,))
    nl = len(lead)
    if length == 0:
        return lax.slice(flat, (0,) * (nl + 1), lead + (0,))
    start = k if k >= 0 else -k * cols
    limit = start + (length - 1) * (cols + 1) + 1
    return lax.slice(flat, (0,) * nl + (start,), lead + (limit,), (1,) * nl + (cols + 1,))


def diag(v, k=0):
    """1-d ``v``: a square matrix with ``v`` on the ``k``-th diagonal. 2-d ``v``: its
    ``k``-th diagonal, like ``numpy.diag``."""
    _util.check_arraylike("diag", v)
    v = _util.asarray(v, fname="diag")
    k = operator.index(k)
    aval = aval_of(v)
    if aval.ndim == 2:
        return diagonal_2d(v, k)
    if aval.ndim != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {aval.shape}")
    n = aval.shape[0] + abs(k)
    # Row i holds v[i] at column i + k (k >= 0); for k < 0 column j holds v[j] at row j - k.
    padded = lax.pad(v, np.zeros((), aval.dtype), ((0, abs(k), 0),))
    vals = lax.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    return lax.select(_diag_mask(n, n, k, "diag"), vals, _util.full((n, n), 0, aval.dtype))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-d coordinate vectors, like ``numpy.meshgrid``.

    ``indexing='xy'`` (default) swaps the first two output axes, ``'ij'`` does not.
    Returns a list, as JAX and the array API standard do (NumPy 2 returns a tuple).
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    _util.check_arraylike("meshgrid", *xi)
    xs = [_util.asarray(x, fname="meshgrid") for x in xi]
    if _eager(*xs):
        return list(np.meshgrid(*xs, copy=copy, sparse=sparse, indexing=indexing))
    xs = [lax.reshape(x, (aval_of(x).size,)) for x in xs]
    sizes = [aval_of(x).shape[0] for x in xs]
    ndim = len(xs)
    dims = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        dims[0], dims[1] = 1, 0
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for x, d in zip(xs, dims):
        if sparse:
            out.append(lax.reshape(x, tuple(s if i == d else 1 for i, s in enumerate(sizes))))
        else:
            out.append(lax.broadcast_in_dim(x, tuple(sizes), (d,)))
    return out
