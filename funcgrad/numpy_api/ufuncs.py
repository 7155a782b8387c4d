"""funcgrad.numpy: ``ufunc`` objects and ``frompyfunc`` (JAX's ``jnp.ufunc``).

A ``ufunc`` wraps a function of ``nin`` scalars (``nout`` results) and gives it NumPy's
ufunc methods, written from funcgrad operations so ``grad``, ``vmap`` and ``jit`` go
through all of them:

- calling it broadcasts its arguments and maps the scalar function over them with one
  ``vmap`` per dimension (``vectorize``);
- ``reduce``, ``accumulate`` and ``reduceat`` of a binary ufunc fold the function left to
  right with ``scan``, as NumPy does, so any function is right (``subtract.reduce`` is
  ``(a0 - a1) - a2``), not only associative ones;
- ``at`` is functional: it returns a new array (``inplace=False`` is required, as in JAX)
  and applies the function once per index, in order, so a repeated index is updated
  repeatedly like NumPy's unbuffered ``ufunc.at``;
- ``outer(A, B)`` is a call on ``A`` reshaped to broadcast against ``B``.

``install`` gives funcgrad.numpy's own elementwise functions (``fnp.add``, ...) these
methods as attributes, with fast forms where a primitive exists (``add.reduce`` is
``sum``, ``add.at`` a scatter-add, ``maximum.accumulate`` an associative scan). The
functions stay plain functions, so their eager call costs nothing more;
``isinstance(fnp.add, fnp.ufunc)`` holds as in JAX.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import elementwise as _ew
from funcgrad.numpy_api import reductions as _red
from funcgrad.numpy_api._util import (
    aval_of,
    broadcast_shapes,
    broadcast_to,
    canonicalize_axes,
    canonicalize_axis,
    full,
    is_tracer,
    shape_of,
)
from funcgrad.numpy_api.functional import vectorize
from funcgrad.numpy_api.indexing import at as _at
from funcgrad.numpy_api.indexing import getitem, take
from funcgrad.numpy_api.methods import values_boundary
from funcgrad.numpy_api.shape import array_arg, cast, check_out, moveaxis, ravel

__all__ = ["ufunc", "frompyfunc"]

_i64 = np.dtype(np.int64)


class _UfuncType(type):
    def __instancecheck__(cls, obj):
        # funcgrad.numpy's own ufuncs are plain functions (no __call__ indirection on the
        # eager hot path) carrying their ufunc object: they count as ufuncs, as in JAX.
        return type.__instancecheck__(cls, obj) or type.__instancecheck__(cls, getattr(obj, "_ufunc", None))


class ufunc(metaclass=_UfuncType):  # noqa: N801 - NumPy's and JAX's name
    """A universal function: ``func`` of ``nin`` scalars (``nout`` results) applied
    elementwise over broadcast arrays, with NumPy's ``reduce``, ``accumulate``,
    ``reduceat``, ``outer`` and ``at`` (JAX's ``jax.numpy.ufunc``). ``call``, ``reduce``,
    ``accumulate``, ``at``, ``reduceat`` may give faster implementations of the methods.

    >>> import operator
    >>> add = fnp.ufunc(operator.add, 2, 1, identity=0)
    >>> add.reduce(fnp.arange(4)), add.accumulate(fnp.arange(4))
    (Array(6), Array([0, 1, 3, 6]))
    """

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        if not callable(func):
            raise TypeError(f"ufunc: func must be callable, got {type(func).__name__}")
        counts = {}
        for what, v in (("nin", nin), ("nout", nout), ("nargs", nin if nargs is None else nargs)):
            try:
                counts[what] = operator.index(v)
            except TypeError:
                raise TypeError(f"ufunc: {what} must be an integer, got {type(v).__name__}") from None
            if counts[what] < 1:
                raise ValueError(f"ufunc: {what} must be at least 1, got {counts[what]}")
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.__doc__ = getattr(func, "__doc__", None)
        # Read-only (properties below): a ufunc is hashable and may be a static jit argument.
        self._props = (func, counts["nin"], counts["nout"], counts["nargs"], identity)
        self._impls = {"call": call, "reduce": reduce, "accumulate": accumulate, "at": at, "reduceat": reduceat}

    _func = property(lambda self: self._props[0])
    nin = property(lambda self: self._props[1])
    nout = property(lambda self: self._props[2])
    nargs = property(lambda self: self._props[3])
    identity = property(lambda self: self._props[4])

    def _key(self):
        return (self._func, self.__name__, self.nin, self.nout, self.nargs, self.identity)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return type(other) is ufunc and self._key() == other._key()

    def __repr__(self):
        return f"<fnp.ufunc '{self.__name__}'>"

    # --- calling ------------------------------------------------------------------------
    @values_boundary
    def __call__(self, *args, out=None, where=None):
        check_out(self.__name__, out)
        if where is not None:
            raise NotImplementedError(f"{self.__name__}: the 'where' argument is not supported (as in JAX)")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}: takes {self.nin} positional argument(s), got {len(args)}")
        call = self._impls["call"]
        if call is not None:
            return call(*args)
        for a in args:
            array_arg(a, self.__name__)
        return vectorize(self._func)(*args)

    def _binary_only(self, method):
        if self.nin != 2:
            raise ValueError(f"{self.__name__}.{method}: only supported for binary ufuncs, this one has nin={self.nin}")
        if self.nout != 1:
            raise ValueError(
                f"{self.__name__}.{method}: only supported for functions returning a single value, this one has "
                f"nout={self.nout}"
            )

    def _result_dtype(self, *dts):
        """The dtype ``self`` gives on scalars of ``dts`` (traced once, nothing computed)."""
        from funcgrad.api import ShapeDtypeStruct, eval_shape

        return eval_shape(self, *[ShapeDtypeStruct((), d) for d in dts]).dtype

    def _combine(self, fname, x, y, dtype):
        """``self(x, y)`` as ``dtype`` (a fold's carry keeps one dtype)."""
        out = array_arg(self(x, y), fname)
        if shape_of(out) != shape_of(x):
            raise ValueError(f"{fname}: the function must be elementwise; it gave shape {shape_of(out)} for "
                             f"operands of shape {shape_of(x)}")
        return cast(out, dtype)

    # --- reduce -------------------------------------------------------------------------
    @values_boundary
    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """Fold the binary function over ``axis`` (an int, a tuple, or None for all),
        from ``initial`` or the identity if given, else from the first element; ``where``
        (a bool mask) leaves elements out. ``fnp.add.reduce`` is ``fnp.sum``.

        >>> fnp.subtract.reduce(fnp.array([10, 2, 3]))
        Array(5)
        """
        fname = f"{self.__name__}.reduce"
        self._binary_only("reduce")
        check_out(fname, out)
        x = array_arg(a, fname)
        if where is not None:
            where = array_arg(where, fname)
            if aval_of(where).dtype != np.bool_:
                raise TypeError(f"{fname}: where must have dtype bool, got {aval_of(where).dtype}")
            if self.identity is None and initial is None:
                raise ValueError(f"{fname}: reduction operation {self.__name__!r} does not have an identity, so "
                                 "to use a where mask one has to specify 'initial'")
            where = broadcast_to(where, broadcast_shapes(fname, shape_of(where), shape_of(x)))
            if shape_of(where) != shape_of(x):
                raise ValueError(f"{fname}: where of shape {shape_of(where)} does not broadcast to the shape "
                                 f"{shape_of(x)} of the array")
        axes = canonicalize_axes(axis, aval_of(x).ndim, fname)
        if initial is not None:
            initial = array_arg(initial, fname)
            if aval_of(initial).ndim:
                raise ValueError(f"{fname}: initial must be a scalar, got shape {shape_of(initial)}")
        empty = any(shape_of(x)[d] == 0 for d in axes)
        if empty and initial is None and self.identity is None:
            raise ValueError(f"{fname}: zero-size array (shape {shape_of(x)}) to reduction operation "
                             f"{self.__name__} which has no identity")
        impl = self._impls["reduce"] or _fold_reduce
        y = impl(self, x, axes, dtype, initial, where)
        if keepdims:
            y = lax.reshape(y, tuple(1 if d in axes else n for d, n in enumerate(shape_of(x))))
        return y

    # --- accumulate ---------------------------------------------------------------------
    @values_boundary
    def accumulate(self, a, axis=0, dtype=None, out=None):
        """All the partial folds along ``axis``: ``out[i] = f(out[i-1], a[i])``.
        ``fnp.add.accumulate`` is ``fnp.cumsum``.

        >>> fnp.subtract.accumulate(fnp.array([10, 2, 3]))
        Array([10,  8,  5])
        """
        fname = f"{self.__name__}.accumulate"
        self._binary_only("accumulate")
        check_out(fname, out)
        x = array_arg(a, fname)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"{fname}: accumulate takes one integer axis, got {axis!r}")
        if aval_of(x).ndim == 0:
            raise ValueError(f"{fname}: cannot accumulate on a scalar (shape ())")
        axis = canonicalize_axis(axis, aval_of(x).ndim, fname)
        impl = self._impls["accumulate"] or _scan_accumulate
        return impl(self, x, axis, dtype)

    # --- at -----------------------------------------------------------------------------
    @values_boundary
    def at(self, a, indices, b=None, /, *, inplace=True):
        """A copy of ``a`` with ``a[indices] = f(a[indices], b)`` (``f(a[indices])`` for a
        unary ufunc), applied once per index in order, so repeated indices repeat the
        update (NumPy's ``ufunc.at``). Functional, as in JAX: pass ``inplace=False``. The
        result keeps ``a``'s dtype, as NumPy's in-place update does.

        >>> fnp.add.at(fnp.zeros(3), fnp.array([0, 0, 2]), 1.0, inplace=False)
        Array([2., 0., 1.])
        """
        fname = f"{self.__name__}.at"
        if inplace:
            raise NotImplementedError(
                f"{fname}: funcgrad arrays are immutable, so {fname} cannot work in place; pass inplace=False "
                f"and use the result, e.g. x = fnp.{self.__name__}.at(x, idx, v, inplace=False) (JAX's convention)"
            )
        if self.nout != 1:
            raise ValueError(f"{fname}: only supported for functions returning a single value, nout={self.nout}")
        if self.nin > 2:
            raise ValueError(f"{fname}: only unary and binary ufuncs support at, this one has nin={self.nin}")
        if (b is None) != (self.nin == 1):
            wanted, got = ("no operand b", "one") if self.nin == 1 else ("an operand b", "none")
            raise TypeError(f"{fname}: a ufunc with nin={self.nin} takes {wanted}, got {got}")
        x = array_arg(a, fname)
        impl = self._impls["at"] or _scan_at
        return impl(self, x, indices, None if b is None else array_arg(b, fname))

    # --- reduceat -----------------------------------------------------------------------
    @values_boundary
    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """``reduce`` over the slices ``a[indices[i]:indices[i+1]]`` along ``axis`` (the
        last up to the end; ``a[indices[i]]`` where ``indices[i] >= indices[i+1]``).
        Concrete indices must lie in ``[0, n)``; traced ones are clipped into range.

        >>> fnp.add.reduceat(fnp.arange(8), fnp.array([0, 4, 1, 5]))
        Array([ 6,  4, 10, 18])
        """
        fname = f"{self.__name__}.reduceat"
        self._binary_only("reduceat")
        check_out(fname, out)
        x = array_arg(a, fname)
        if aval_of(x).ndim == 0:
            raise ValueError(f"{fname}: the array must have at least one dimension, got shape ()")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"{fname}: reduceat takes one integer axis, got {axis!r}")
        axis = canonicalize_axis(axis, aval_of(x).ndim, fname)
        idx = array_arg(indices, fname)
        if aval_of(idx).ndim != 1 or aval_of(idx).dtype.kind not in "iu":
            raise TypeError(f"{fname}: indices must be a 1-d integer array, got {aval_of(idx).str_short()}")
        n = shape_of(x)[axis]
        if not is_tracer(idx):
            bad = np.flatnonzero((np.asarray(idx) < 0) | (np.asarray(idx) >= n))
            if bad.size:
                raise IndexError(f"{fname}: index {int(np.asarray(idx)[bad[0]])} out-of-bounds in "
                                 f"{self.__name__}.reduceat [0, {n}) (array of shape {shape_of(x)}, axis {axis})")
        impl = self._impls["reduceat"] or _scan_reduceat
        return impl(self, x, cast(idx, _i64), axis, dtype)

    # --- outer --------------------------------------------------------------------------
    @values_boundary
    def outer(self, A, B, /):  # noqa: N803 - NumPy's names
        """``f(A[i...], B[j...])`` for every pair: shape ``A.shape + B.shape``.

        >>> fnp.multiply.outer(fnp.arange(1, 4), fnp.arange(1, 3))
        Array([[1, 2],
               [2, 4],
               [3, 6]])
        """
        self._binary_only("outer")
        x, y = array_arg(A, f"{self.__name__}.outer"), array_arg(B, f"{self.__name__}.outer")
        return self(lax.reshape(x, shape_of(x) + (1,) * aval_of(y).ndim), y)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``ufunc`` from a Python function of ``nin`` scalars returning ``nout`` values
    (JAX's ``jax.numpy.frompyfunc``; NumPy's gives object arrays, this one typed arrays).

    >>> hyp = fnp.frompyfunc(lambda a, b: fnp.sqrt(a * a + b * b), 2, 1)
    >>> hyp(fnp.array([3.0, 5.0]), 4.0)
    Array([5.        , 6.40312424])
    """
    return ufunc(func, nin, nout, identity=identity)


# --- the general methods: left folds with scan ------------------------------------------------
def _front(x, axes):
    """``x`` with ``axes`` moved to the front and merged: shape ``(n,) + rest``."""
    shp = shape_of(x)
    rest = [d for d in range(len(shp)) if d not in axes]
    x = lax.transpose(x, tuple(axes) + tuple(rest))
    return lax.reshape(x, (math.prod(shp[d] for d in axes),) + tuple(shp[d] for d in rest))


def _scalar(value, dtype):
    """A 0-d ``value`` (the identity or ``initial``) as ``dtype``; an integer identity
    such as ``bitwise_and``'s -1 wraps into unsigned dtypes (all bits set)."""
    if is_tracer(value):
        return cast(value, dtype)
    v = np.asarray(value)
    if v.dtype.kind in "iu" and dtype.kind in "iu":
        return v.astype(dtype)  # (wraps, as NumPy's identities do)
    return np.asarray(v.astype(dtype) if v.dtype.kind != "O" else v.item(), dtype)


def _fold_reduce(uf, x, axes, dtype, initial, where):
    fname = f"{uf.__name__}.reduce"
    dt = np.dtype(dtype) if dtype is not None else uf._result_dtype(aval_of(x).dtype, aval_of(x).dtype)
    xs = _front(cast(x, dt), axes)
    rest = shape_of(xs)[1:]
    mask = None if where is None else _front(where, axes)
    start = initial if initial is not None else uf.identity
    if start is None:  # (n >= 1 was checked) fold from the first element
        carry, xs = lax.reshape(lax.slice(xs, (0,) * len(shape_of(xs)), (1,) + rest), rest), _drop_first(xs)
        mask = None if mask is None else _drop_first(mask)
    else:
        carry = broadcast_to(_scalar(start, dt), rest)
    if shape_of(xs)[0] == 0:
        return carry
    from funcgrad.transforms.control_flow import scan

    def body(c, item):
        v, m = item
        new = uf._combine(fname, c, v, dt)
        return (new if m is None else _ew.where(m, new, c)), None

    return scan(body, carry, (xs, mask))[0]


def _drop_first(xs):
    shp = shape_of(xs)
    return lax.slice(xs, (1,) + (0,) * (len(shp) - 1), shp)


def _scan_accumulate(uf, x, axis, dtype):
    fname = f"{uf.__name__}.accumulate"
    dt = np.dtype(dtype) if dtype is not None else uf._result_dtype(aval_of(x).dtype, aval_of(x).dtype)
    xs = moveaxis(cast(x, dt), axis, 0)
    if shape_of(xs)[0] <= 1:
        return moveaxis(xs, 0, axis)
    from funcgrad.transforms.control_flow import scan

    def body(c, v):
        new = uf._combine(fname, c, v, dt)
        return new, new

    first = lax.reshape(lax.slice(xs, (0,) * aval_of(xs).ndim, (1,) + shape_of(xs)[1:]), shape_of(xs)[1:])
    ys = scan(body, first, _drop_first(xs))[1]
    out = lax.concatenate([lax.reshape(first, (1,) + shape_of(first)), ys], 0)
    return moveaxis(out, 0, axis)


def _positions(x, indices):
    """The flat positions of ``x[indices]`` (NumPy's order), and their shape."""
    n = aval_of(x).size
    pos = getitem(np.arange(n, dtype=_i64).reshape(shape_of(x)), indices)
    return ravel(pos), shape_of(pos)


def _scan_at(uf, x, indices, b):
    fname = f"{uf.__name__}.at"
    dt = aval_of(x).dtype
    pos, sel_shape = _positions(x, indices)
    operands = ()
    if b is not None:
        if broadcast_shapes(fname, shape_of(b), sel_shape) != sel_shape:
            raise ValueError(f"{fname}: b of shape {shape_of(b)} does not broadcast to the shape {sel_shape} "
                             f"of a[indices] (a of shape {shape_of(x)})")
        operands = (ravel(broadcast_to(b, sel_shape)),)
    k = shape_of(pos)[0]
    if k == 0:
        return x
    flat = ravel(x)
    if not is_tracer(pos) and np.unique(pos).size == k:  # distinct positions: one gather, one scatter
        new = cast(array_arg(uf(take(flat, pos), *operands), fname), dt)
        return lax.reshape(_at(flat)[pos].set(new), shape_of(x))
    from funcgrad.transforms.control_flow import scan

    def body(c, item):
        p, *v = item
        cur = getitem(c, p)
        return _at(c)[p].set(cast(array_arg(uf(cur, *v), fname), dt)), None

    out = scan(body, flat, (pos, *operands))[0]
    return lax.reshape(out, shape_of(x))


def _scan_reduceat(uf, x, idx, axis, dtype):
    fname = f"{uf.__name__}.reduceat"
    if dtype is not None:
        x = cast(x, np.dtype(dtype))
    dt = aval_of(x).dtype
    xs = moveaxis(x, axis, 0)
    n, rest = shape_of(xs)[0], shape_of(xs)[1:]
    m = shape_of(idx)[0]
    if m == 0:
        return moveaxis(full((0,) + rest, 0, dt), 0, axis)
    start = idx
    end = lax.concatenate([lax.slice(idx, (1,), (m,)), np.full((1,), n, _i64)], 0)
    out = take(xs, idx, axis=0, mode="clip")  # each segment starts from its first element
    from funcgrad.transforms.control_flow import scan

    def body(c, item):
        i, v = item
        inside = _ew.logical_and(_ew.greater(i, start), _ew.less(i, end))
        inside = lax.broadcast_in_dim(inside, (m,) + rest, (0,))
        new = uf._combine(fname, c, lax.broadcast_in_dim(v, (m,) + rest, tuple(range(1, 1 + len(rest)))), dt)
        return _ew.where(inside, new, c), None

    out = scan(body, out, (np.arange(n, dtype=_i64), xs))[0]
    return moveaxis(out, 0, axis)


# --- funcgrad.numpy's own ufuncs: faster forms of the methods --------------------------------
def _with_initial(uf, y, initial):
    """``f(y, initial)``: the fold started from ``initial`` (a commutative ``f`` here)."""
    if initial is None:
        return y
    dt = aval_of(y).dtype
    return cast(uf(y, _scalar(initial, dt)), dt)


def _sum_reduce(red):
    """add/multiply: ``fnp.sum``/``fnp.prod`` (NumPy's dtype rules: small ints and bools
    reduce in int64); masked-out entries become the identity."""
    def impl(uf, x, axes, dtype, initial, where):
        if where is not None:
            x = _ew.where(where, x, _scalar(uf.identity, aval_of(x).dtype))
        return _with_initial(uf, red(x, axis=axes, dtype=dtype), initial)
    return impl


def _extremum_reduce(red):
    """maximum/minimum (no identity: ``where`` needs ``initial``, which masked-out
    entries and empty reductions take; max/min are idempotent, so that is exact)."""
    def impl(uf, x, axes, dtype, initial, where):
        if dtype is not None:
            x = cast(x, np.dtype(dtype))
        dt = aval_of(x).dtype
        if where is not None:
            x = _ew.where(where, x, _scalar(initial, dt))
        if any(shape_of(x)[d] == 0 for d in axes):  # (initial is given: checked)
            out_shape = tuple(n for d, n in enumerate(shape_of(x)) if d not in axes)
            return broadcast_to(_scalar(initial, dt), out_shape)
        return _with_initial(uf, red(x, axis=axes), initial)
    return impl


def _logical_reduce(red):
    """logical_and/or: ``fnp.all``/``fnp.any`` (bool results, as NumPy's)."""
    def impl(uf, x, axes, dtype, initial, where):
        if where is not None:
            x = _ew.where(where, x, uf.identity)
        y = _with_initial(uf, red(x, axis=axes), initial)
        return y if dtype is None else cast(y, np.dtype(dtype))
    return impl


def _tree_reduce(uf, x, axes, dtype, initial, where):
    """An associative, commutative ufunc with an identity: ``lax.reduce`` (log-depth)."""
    from funcgrad.lax.reduction import reduce as lax_reduce

    dt = np.dtype(dtype) if dtype is not None else uf._result_dtype(aval_of(x).dtype, aval_of(x).dtype)
    x = cast(x, dt)
    ident = _scalar(uf.identity, dt)
    if where is not None:
        x = _ew.where(where, x, ident)
    return _with_initial(uf, lax_reduce(x, ident, uf._impls["call"], axes), initial)


def _sum_reduceat(uf, x, idx, axis, dtype):
    """add/multiply: NumPy 2 sums and multiplies bools and small integers in 64 bits."""
    dt = aval_of(x).dtype
    if dtype is None and (dt.kind == "b" or dt.kind in "iu" and dt.itemsize < 8):
        dtype = np.dtype(np.uint64 if dt.kind == "u" else np.int64)
    return _scan_reduceat(uf, x, idx, axis, dtype)


def _cumulative(red):
    def impl(uf, x, axis, dtype):
        return red(x, axis, dtype)
    return impl


def _assoc_accumulate(uf, x, axis, dtype):
    """An associative ufunc: ``lax.associative_scan`` (log-depth, vectorised calls)."""
    from funcgrad.lax.scans import associative_scan

    dt = np.dtype(dtype) if dtype is not None else uf._result_dtype(aval_of(x).dtype, aval_of(x).dtype)
    return associative_scan(uf._impls["call"], cast(x, dt), axis=axis)


def _scatter_at(kind):
    """add/subtract/multiply/maximum/minimum: one scatter (repeated indices combine)."""
    def impl(uf, x, indices, b):
        try:
            return getattr(_at(x)[indices], kind)(b)
        except (ValueError, TypeError) as e:  # (the error, named for the method the user called)
            if type(e) not in (ValueError, TypeError):
                raise
            raise type(e)(f"{uf.__name__}.at: {str(e).partition(': ')[2] or e}") from None
    return impl


_ASSOC = dict(reduce=_tree_reduce, accumulate=_assoc_accumulate)
_ORDERED = dict(accumulate=_assoc_accumulate)  # associative, no identity: reduce folds
# name -> (nin, nout, identity, faster methods); NumPy's identities.
_BINARY = {
    "add": (0, dict(reduce=_sum_reduce(_red.sum), accumulate=_cumulative(_red.cumsum), at=_scatter_at("add"),
                    reduceat=_sum_reduceat)),
    "multiply": (1, dict(reduce=_sum_reduce(_red.prod), accumulate=_cumulative(_red.cumprod),
                         at=_scatter_at("multiply"), reduceat=_sum_reduceat)),
    "subtract": (None, dict(at=_scatter_at("subtract"))),
    "maximum": (None, dict(reduce=_extremum_reduce(_red.max), accumulate=_assoc_accumulate, at=_scatter_at("max"))),
    "minimum": (None, dict(reduce=_extremum_reduce(_red.min), accumulate=_assoc_accumulate, at=_scatter_at("min"))),
    "logical_and": (True, dict(reduce=_logical_reduce(_red.all), accumulate=_assoc_accumulate)),
    "logical_or": (False, dict(reduce=_logical_reduce(_red.any), accumulate=_assoc_accumulate)),
    "logical_xor": (False, _ASSOC), "bitwise_and": (-1, _ASSOC), "bitwise_or": (0, _ASSOC),
    "bitwise_xor": (0, _ASSOC), "logaddexp": (-np.inf, _ASSOC), "logaddexp2": (-np.inf, _ASSOC),
    "gcd": (0, _ASSOC), "hypot": (0, _ASSOC), "fmax": (None, _ORDERED), "fmin": (None, _ORDERED),
    "lcm": (None, _ORDERED),
    **dict.fromkeys([
        "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod", "power", "float_power", "arctan2",
        "atan2", "copysign", "heaviside", "nextafter", "ldexp", "left_shift", "right_shift", "equal", "not_equal",
        "less", "less_equal", "greater", "greater_equal", "pow", "bitwise_left_shift", "bitwise_right_shift",
    ], (None, {})),
}
_UNARY = (
    "negative", "positive", "absolute", "abs", "fabs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "degrees", "radians", "floor", "ceil",
    "trunc", "rint", "logical_not", "invert", "bitwise_not", "isfinite", "isinf", "isnan", "signbit", "spacing",
)
_MULTI = {"modf": (1, 2), "frexp": (1, 2), "divmod": (2, 2)}
_ATTRIBUTES = ("nin", "nout", "nargs", "identity", "reduce", "accumulate", "reduceat", "outer", "at")


def install(package) -> None:
    """Give ``package``'s final public elementwise functions (after the values boundary
    and the eager fast path have wrapped them) a ufunc's attributes and methods. The
    functions themselves are untouched: attributes cost their calls nothing."""
    table = {name: (2, 1, ident, impls) for name, (ident, impls) in _BINARY.items()}
    table.update({name: (1, 1, None, {}) for name in _UNARY})
    table.update({name: (nin, nout, None, {}) for name, (nin, nout) in _MULTI.items()})
    for name, (nin, nout, ident, impls) in table.items():
        fn = getattr(package, name, None)
        if fn is None or getattr(fn, "_ufunc", None) is not None:  # (an alias of one done already)
            continue
        uf = ufunc(fn, nin, nout, name=name, identity=ident, call=fn, **impls)
        fn._ufunc = uf
        for attr in _ATTRIBUTES:
            setattr(fn, attr, getattr(uf, attr))
