"""funcgrad.numpy: indexing (``x[idx]``), functional updates (``x.at[idx].set(v)``),
``take`` and ``take_along_axis`` (the ``nonzero`` family is in ``selection.py``).

Indices follow NumPy: ints (negative too), slices with any step, ``None``, ``...``,
integer arrays and lists (advanced indexing, broadcast together; the advanced
dimensions go where the first advanced index was when all advanced indices are
adjacent, else first), and boolean masks when their values are known.

How each index is staged (so the printed IR stays readable):

- static ints and slices: ``slice`` (+ ``rev`` for negative steps) + ``reshape``;
- a traced scalar integer: ``dynamic_slice`` + ``reshape``;
- integer arrays (concrete or traced): ``gather`` on the leading, transposed axes.

Out-of-range indices follow JAX's ``mode`` (``jax.numpy.ndarray.at``, citing its docs):
"By default, JAX assumes that all indices are in-bounds" (``"promise_in_bounds"``):
out-of-range *traced* indices in ``x[idx]`` / ``.at[idx].get()`` are clipped and in
``.set()``, ``.add()``, ... are dropped, which keeps compiled code memory-safe. Indices
whose values are known at trace time (Python ints, NumPy arrays, lists) are checked
like NumPy when no ``mode`` is given: ``IndexError("index 5 is out of bounds for axis
0 with size 3")``. ``.at[idx].get/set/...(mode=...)`` takes ``"promise_in_bounds"``,
``"clip"``, ``"drop"`` and ``"fill"`` (an alias of ``"drop"``; ``get(mode="fill",
fill_value=...)`` returns ``fill_value``, by default NaN / the most negative int /
True, for out-of-range positions); then no index is checked. In every mode a negative
array index is first normalised once (``i + n`` where ``i < 0``, NumPy's meaning).
``take`` and ``take_along_axis`` default to ``mode="fill"``, as in JAX. Derivatives
follow the mode: a filled read or a dropped write sends no cotangent anywhere; a
clipped read sends it to the element it read. A traced scalar index into a zero-size
dimension raises ``IndexError`` (as JAX does: there is no element to clamp to).

A boolean mask gives a result whose shape depends on its values, so a traced mask
raises ``NonConcreteBooleanIndexError``; use ``fnp.where(mask, x, fill)`` instead.

Parsing an index into a plan (which items, checked against the shape) is in
``index_plan.py``; this module stages plans into primitives.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.prims.indexing import default_fill_value, gather_mode, scatter_mode
from funcgrad.core.trace import Tracer
from funcgrad.errors import (
    ConcretizationError,
    DataDependentShapeError,  # noqa: F401  (importable here, where the nonzero family was)
    NonConcreteBooleanIndexError,  # noqa: F401  (raised by index_plan; importable here)
)
from funcgrad.numpy_api import _util
from funcgrad.numpy_api.index_plan import check_array, list_index, parse, result_layout, zero_size_error

__all__ = ["take", "take_along_axis", "at"]

_i64 = dtypes.int64

# --- traced-index helpers ----------------------------------------------------------------------

def _wrap_negative(i, n):
    """``i + n`` where ``i < 0`` (concrete arrays were wrapped when parsed)."""
    if not isinstance(i, Tracer):
        return i
    shape = i.shape
    zero, size = _util.full(shape, 0, _i64), _util.full(shape, n, _i64)
    return lax.select(lax.lt(i, zero), lax.add(i, size), i)


def _stack_indices(arrays, bshape):
    """Broadcast index arrays to ``bshape`` and stack them along a new last axis."""
    if not arrays:  # nothing indexed: each row addresses the whole operand
        return np.zeros(tuple(bshape) + (0,), np.int64)
    if not any(isinstance(a, Tracer) for a in arrays):
        return np.stack([np.broadcast_to(a, bshape) for a in arrays], axis=-1).astype(np.int64)
    cols = [lax.reshape(_util.broadcast_to(a, bshape), bshape + (1,)) for a in arrays]
    return lax.concatenate(cols, len(bshape))


# --- getitem ---------------------------------------------------------------------------------

def _basic_window(x, plan):
    """Apply every slice / int / traced-int entry; advanced dims stay whole.

    Returns ``x`` with int dims of size 1 and slice dims of their final size."""
    ndim = x.ndim
    lo, span, stride, flip = [0] * ndim, list(x.shape), [1] * ndim, []
    dyn = {}
    for e in plan.entries:
        if e[0] == "slice":
            _, d, start, m, step = e
            first = start if step > 0 or not m else start + (m - 1) * step
            lo[d], span[d], stride[d] = first, (m - 1) * abs(step) + 1 if m else 0, abs(step)
            if step < 0 and m > 1:
                flip.append(d)
        elif e[0] == "int":
            lo[e[1]], span[e[1]] = e[2], 1
        elif e[0] == "dyn":
            dyn[e[1]] = e[2]  # dynamic_slice wraps a negative start once, then clamps
            span[e[1]] = 1
    if dyn:
        starts = [dyn[d] if d in dyn else np.int64(lo[d]) for d in range(ndim)]
        x = lax.dynamic_slice(x, starts, span)
        x = lax.slice(x, (0,) * ndim, span, stride)
    else:
        x = lax.slice(x, lo, [a + b for a, b in zip(lo, span)], stride)
    return lax.rev(x, flip)


def _gather_advanced(y, plan, tokens, bshape, out_shape, mode="clip", fill_value=None):
    """Gather the advanced dims of ``y`` (already sliced) and lay out the result."""
    entries = plan.entries
    adv = [e for e in entries if e[0] == "adv" and e[1] is not None]
    slice_dims = [e[1] for e in entries if e[0] == "slice"]
    y = lax.transpose(y, [e[1] for e in adv] + slice_dims)
    rest = _util.shape_of(y)[len(adv):]
    if adv:
        empty = [e for e in adv if plan.shape[e[1]] == 0]
        if mode == "clip" and empty and int(np.prod(bshape)):  # nothing to clip to (JAX raises too)
            e = empty[0]
            raise zero_size_error(e[1], plan.shape, e[2]) if isinstance(e[2], Tracer) else IndexError(
                f"index {np.asarray(e[2]).flat[0]} is out of bounds for axis {e[1]} with size 0")
        idx = _stack_indices([_wrap_negative(e[2], plan.shape[e[1]]) for e in adv], bshape)
        g = lax.gather(y, idx, mode=mode, fill_value=fill_value)
    else:  # only 0-d boolean masks: a new dimension of size 1 or 0
        g = lax.broadcast_in_dim(y, bshape + tuple(rest), range(len(bshape), len(bshape) + len(rest)))
    nb = len(bshape)
    perm = []
    for t in tokens:
        if t == "B":
            perm.extend(range(nb))
        elif t != "N":
            perm.append(nb + t[1])
    return lax.reshape(lax.transpose(g, perm), out_shape)


def getitem(x, idx):
    """``x[idx]`` with NumPy semantics, for ndarrays and traced arrays alike.

    >>> getitem(np.arange(6.).reshape(2, 3), (slice(None, None, -1), [0, 2]))
    array([[3., 5.], [0., 2.]])

    Traced integer indices wrap once if negative and then clamp into range (like JAX);
    see the module docstring.
    """
    return _getitem(x, idx)


def _getitem(x, idx, mode=None, fill_value=None, fname="getitem"):
    """``x[idx]`` with an out-of-range ``mode`` (JAX's names; None: promise_in_bounds with
    concrete indices checked like NumPy's)."""
    x = _util.asarray(x, fname=fname)
    if type(idx) is int and mode is None:  # ``x[i]``, the commonest index: what parse gives, directly
        shape = _util.shape_of(x)
        if shape and -shape[0] <= idx < shape[0]:
            i = idx + shape[0] if idx < 0 else idx
            y = lax.slice(x, (i,) + (0,) * (len(shape) - 1), (i + 1,) + shape[1:])
            out = lax.reshape(y, shape[1:])
            return out[()] if len(shape) == 1 and type(out) is np.ndarray else out
    gmode = "clip" if mode is None else gather_mode(mode, fname)
    plan = parse(_util.shape_of(x), idx, None if mode is None else gmode)
    tokens, bshape, out_shape = result_layout(plan)
    y = _basic_window(x, plan)
    if plan.has_adv:
        fill_value = _fill_value(fill_value, x.dtype, fname) if gmode == "fill" else None
        out = _gather_advanced(y, plan, tokens, bshape, out_shape, gmode, fill_value)
    else:
        out = lax.reshape(y, out_shape)
    if plan.scalar and type(out) is np.ndarray:  # (not a value: 0-d values stay values)
        return out[()]
    return out


def _fill_value(fill_value, dtype, fname):
    """A concrete scalar cast to ``dtype`` as a hashable Python scalar (None: the default)."""
    if fill_value is None:
        return None
    if isinstance(fill_value, Tracer):
        val = fill_value.to_concrete_value()
        if val is None:
            raise ConcretizationError(
                f"{fname}: fill_value must be a concrete scalar, got a traced {fill_value.aval.str_short()}; "
                "use fnp.where(mask, x, fill) for a traced fill"
            )
        fill_value = val
    if np.ndim(fill_value) != 0:
        raise ValueError(f"{fname}: fill_value must be a scalar, got shape {np.shape(fill_value)}")
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.asarray(fill_value).astype(dtype).item()
    default = default_fill_value(dtype)
    return None if v == default or (v != v and default != default) else v


# --- at[]: functional updates ----------------------------------------------------------------

class _IndexUpdateHelper:
    """``fnp.at(x)[idx]`` (or ``x.at[idx]`` on traced arrays) -> an update reference."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """Pure versions of ``x[idx] = v``, ``x[idx] += v``, ...: each returns a new array.

    ``v`` is broadcast to the shape of ``x[idx]`` and cast to ``x.dtype``. Repeated
    indices accumulate for ``add``/``subtract``/``multiply``/``divide``/``power``/
    ``min``/``max`` (like ``numpy.add.at``); for ``set`` one of the values wins.

    ``mode`` is JAX's (``jax.numpy.ndarray.at``): ``None`` / ``"promise_in_bounds"``
    reads clip and writes drop out-of-range traced indices (with ``None`` concrete
    out-of-range indices raise ``IndexError`` like NumPy); ``"clip"`` clamps;
    ``"drop"`` ignores out-of-range writes and ``"fill"`` (its alias) reads
    ``fill_value`` there. ``indices_are_sorted`` and ``unique_indices`` are accepted
    for JAX compatibility; they are hints that change nothing here.
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """``x[idx]``; ``mode="fill"`` reads ``fill_value`` at out-of-range indices.

        >>> fnp.at(np.arange(3.0))[np.array([1, 5])].get(mode="fill", fill_value=-1.0)
        array([ 1., -1.])
        """
        return _getitem(self.array, self.index, mode, fill_value, fname="at[].get")

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = values``, as a new array."""
        return _update(self.array, self.index, values, "set", mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] += values`` (repeated indices accumulate)."""
        return _update(self.array, self.index, values, "add", mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] -= values`` (repeated indices accumulate)."""
        return _update(self.array, self.index, values, "subtract", mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] *= values`` (repeated indices accumulate)."""
        return _update(self.array, self.index, values, "mul", mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] /= values`` for floating-point ``x`` (repeated indices accumulate)."""
        return _update(self.array, self.index, values, "divide", mode)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] **= values`` (repeated indices multiply their exponents)."""
        return _update(self.array, self.index, values, "power", mode)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = minimum(x[idx], values)``."""
        return _update(self.array, self.index, values, "min", mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = maximum(x[idx], values)``."""
        return _update(self.array, self.index, values, "max", mode)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = func(x[idx])`` for an elementwise ``func``, as ``func.at(x, idx)``:
        an element selected k times gets ``func`` applied k times. With a traced index
        the repeat counts are unknown, so ``unique_indices=True`` is required."""
        from funcgrad import numpy_api as fnp

        x = fnp.asarray(self.array)
        if _contains_tracer_index(self.index):
            if not unique_indices:
                raise NotImplementedError(
                    "x.at[idx].apply(func) with a traced index: repeated indices would apply func "
                    "several times, which needs the counts now; pass unique_indices=True if the "
                    "indices are distinct, or use x.at[idx].set(func(x[idx]))"
                )
            hit = fnp.zeros(x.shape, bool).at[self.index].set(True, mode=mode)
            return fnp.where(hit, fnp.asarray(func(x), dtype=x.dtype), x)
        counts = np.zeros(x.shape, np.int64)
        np.add.at(counts, self.index, 1)  # NumPy's indexing rules for a concrete index
        for k in range(int(counts.max(initial=0))):
            x = fnp.where(counts > k, fnp.asarray(func(x), dtype=x.dtype), x)
        return x


def _contains_tracer_index(idx) -> bool:
    items = idx if isinstance(idx, (tuple, list)) else (idx,)
    return any(isinstance(e, Tracer) or (isinstance(e, (tuple, list)) and _contains_tracer_index(e)) for e in items)


def at(x):
    """Functional index updates: ``fnp.at(x)[idx].set(v)`` returns a new array.

    Works on NumPy arrays (eagerly; ``x`` is never modified) and on traced arrays,
    where ``x.at[idx]`` is the same thing. Methods: ``set add subtract multiply divide
    power min max get``.

    >>> fnp.at(np.zeros(3))[[0, 0, 2]].add(1.0)
    Array([2., 0., 1.])
    """
    return _IndexUpdateHelper(_util.asarray(x, fname="at"))


_COMBINE = {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}
_BOOL_KIND = {"add": "max", "mul": "min"}  # logical or / and, as numpy.add.at does on bools


def _update(x, idx, values, kind, mode=None):
    x = _util.asarray(x, fname="at")
    dtype = x.dtype
    smode = "drop" if mode is None else scatter_mode(mode, f"at[].{kind}")
    plan = parse(_util.shape_of(x), idx, None if mode is None else smode)
    _, _, out_shape = result_layout(plan)
    v = _util.asarray(values, fname=f"at[].{kind}")
    if kind == "subtract":
        if dtype == dtypes.bool_:
            raise TypeError("at[].subtract is not supported for boolean arrays; use at[].set with fnp.logical_xor")
        v, kind = lax.neg(_util._convert(v, dtype)), "add"
    if kind == "divide" and dtype.kind != "f":
        raise TypeError(
            f"at[].divide needs a floating-point array, got {dtype.name}; convert x with .astype(float) first"
        )
    v = _broadcast_update(_util._convert(v, dtype), out_shape, kind)
    if kind in ("divide", "power"):
        # x op= v1, then op= v2 ... == x op (v1 * v2 ...): scatter-multiply the operands.
        ones = _util.full(_util.shape_of(x), 1, dtype)
        combine = lax.div if kind == "divide" else lax.pow
        out = combine(x, _scatter_update(ones, plan, v, "mul", smode))
        return np.asarray(out) if isinstance(out, np.generic) else out  # 0-d stays an array
    if dtype == dtypes.bool_:
        kind = _BOOL_KIND.get(kind, kind)
    return _scatter_update(x, plan, v, kind, smode)


def _broadcast_update(v, shape, kind):
    vshape = _util.shape_of(v)
    extra = len(vshape) - len(shape)
    if extra > 0 and all(d == 1 for d in vshape[:extra]):  # NumPy drops leading 1s
        v, vshape = lax.reshape(v, vshape[extra:]), vshape[extra:]
    try:
        np.broadcast_shapes(vshape, shape)
        if len(vshape) > len(shape):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"at[].{kind}: values of shape {vshape} cannot be broadcast to the indexed shape {shape}"
        ) from None
    return _util.broadcast_to(v, shape)


def _scatter_update(x, plan, v, kind, mode="drop"):
    """Write ``v`` (already the shape of ``x[idx]``) into ``x``."""
    entries = plan.entries
    if not plan.has_adv and all(e[0] != "dyn" and (e[0] != "slice" or abs(e[4]) == 1) for e in entries):
        return _box_update(x, plan, v, kind)
    # General case: a scatter whose index rows cover every indexed dim; trailing whole
    # dims (``:``) become the update window.
    ndim = len(plan.shape)
    indexed = [e for e in entries if e[0] != "new"]
    k = ndim
    for e in reversed(entries):
        if e[0] != "slice" or e[2] != 0 or e[3] != plan.shape[e[1]] or e[4] != 1:
            break
        k -= 1
    tokens, bshape, out_shape = result_layout(plan)
    batch_shape = out_shape[:len(out_shape) - (ndim - k)]
    pos, p = {}, 0  # where each token's dims start in batch_shape
    for t in tokens:
        pos[t] = p
        p += len(bshape) if t == "B" else 1
    grids, j = [], 0
    for e in indexed:
        if e[0] == "slice":
            if e[1] < k:
                grids.append(_slice_grid(e, batch_shape, pos[("S", j)]))
            j += 1
        elif e[0] == "adv" and e[1] is not None:
            i = _wrap_negative(e[2], plan.shape[e[1]])
            grids.append(lax.broadcast_to_rank(i, bshape) if isinstance(i, Tracer) else np.broadcast_to(i, bshape))
            grids[-1] = _place(grids[-1], batch_shape, range(pos["B"], pos["B"] + len(bshape)))
        elif e[0] in ("int", "dyn"):
            i = _wrap_negative(e[2], plan.shape[e[1]])
            grids.append(_place(i if isinstance(i, Tracer) else np.int64(i), batch_shape, ()))
    idx = _stack_indices(grids, batch_shape)
    return lax.scatter(x, idx, v, kind=kind, mode=mode)


def _place(a, shape, dims):
    if isinstance(a, Tracer):
        return lax.broadcast_in_dim(a, shape, tuple(dims))
    expanded = [1] * len(shape)
    for src, d in enumerate(dims):
        expanded[d] = np.shape(a)[src]
    return np.broadcast_to(np.reshape(a, expanded), shape)


def _slice_grid(entry, shape, dim):
    _, _, start, m, step = entry
    g = lax.iota(_i64, (m,), 0)
    if step != 1:
        g = lax.mul(g, _util.full((m,), step, _i64))
    if start:
        g = lax.add(g, _util.full((m,), start, _i64))
    return lax.broadcast_in_dim(g, shape, (dim,))


def _box_update(x, plan, v, kind):
    """Static ints and unit-step slices select a box: update it in place with
    ``dynamic_update_slice`` (reading it first with ``slice`` for accumulating kinds)."""
    shape = plan.shape
    lo, size, flip = [0] * len(shape), list(shape), []
    for e in plan.entries:
        if e[0] == "slice":
            _, d, start, m, step = e
            lo[d], size[d] = (start if step > 0 else start - m + 1) if m else 0, m
            if step < 0 and m > 1:
                flip.append(d)
        elif e[0] == "int":
            lo[e[1]], size[e[1]] = e[2], 1
    upd = lax.rev(lax.reshape(v, size), flip)
    if kind != "set":
        cur = lax.slice(x, lo, [a + b for a, b in zip(lo, size)])
        upd = _COMBINE[kind](cur, upd)
    return lax.dynamic_update_slice(x, upd, [np.int64(s) for s in lo])


# --- take / take_along_axis ---------------------------------------------------------------

_TAKE_MODES = (None, "fill", "clip", "wrap", "raise")


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """``jax.numpy.take``: elements of ``a`` at ``indices`` along ``axis`` (flattened if None).

    ``mode`` is JAX's: ``"fill"`` (the default) returns ``fill_value`` for out-of-range
    indices (default NaN for floats, the most negative value for signed ints, True for
    bool), ``"clip"`` clamps into range (a negative index clips to 0, as NumPy's), and
    ``"wrap"`` wraps around. In ``"fill"`` mode a negative index in ``[-n, 0)`` counts
    from the end first. ``"raise"`` (NumPy's default) checks concrete indices and raises
    ``IndexError``; traced indices cannot be checked (JAX does not support it at all).
    Derivatives follow the mode: a filled position gets no gradient.

    >>> take(np.array([4., 5., 6.]), [2, 0, 7])
    Array([ 6.,  4., nan])
    """
    _util.check_arraylike("take", a, indices)
    if out is not None:
        raise NotImplementedError("take: the 'out' argument is not supported (results are new arrays)")
    a = _util.asarray(a, fname="take")
    if mode not in _TAKE_MODES:
        raise ValueError(f"take: mode must be one of 'fill', 'clip', 'wrap', 'raise', got {mode!r}")
    if axis is None:
        a, axis = lax.reshape(a, (_util.aval_of(a).size,)), 0
    shape = _util.shape_of(a)
    axis = _util.canonicalize_axis(axis, len(shape), "take")
    i = _index_array(indices, "take")
    iaval = _util.aval_of(i)
    if iaval.dtype.kind not in "iu":
        raise TypeError(f"take: indices must be integers, got {iaval.dtype.name}")
    n = shape[axis]
    if n == 0 and iaval.size:
        raise IndexError(
            f"take: cannot take a non-empty selection (indices of shape {iaval.shape}) from axis {axis} "
            f"of size 0 (array of shape {shape})"
        )
    traced = isinstance(i, Tracer)
    gmode = "clip"
    if mode == "wrap":
        i = _mod(i, n) if traced else np.mod(i, max(n, 1))
    elif mode == "clip":
        i = _clamp(i, n) if traced else np.clip(i, 0, max(n - 1, 0))
    elif mode == "raise":
        if traced:
            raise ConcretizationError(
                f"take: mode='raise' needs concrete indices to check them, got a traced {iaval.str_short()}; "
                "use mode='fill' (the default, as in JAX), 'clip' or 'wrap'"
            )
        i, gmode = check_array(np.asarray(i, np.int64), axis, n), None
    else:
        gmode = "fill"
    idx = (slice(None),) * axis + ((i,) if iaval.ndim else (_as_dyn(i),))
    res = _getitem(a, idx, gmode, fill_value, fname="take")
    if _util.shape_of(res) == () and type(res) is np.ndarray:  # (not a value: 0-d values stay values)
        return res[()]
    return res


def _index_array(indices, fname):
    if isinstance(indices, (list, tuple)) and not _util._contains_tracer(indices):
        return list_index(indices)
    return _util.asarray(indices, fname=fname)


def _as_dyn(i):
    """A 0-d index as getitem should see it: a traced scalar or a Python int."""
    return i if isinstance(i, Tracer) else int(i)


def _clamp(i, n):
    i = lax.convert_element_type(i, _i64)
    lo, hi = _util.full(i.shape, 0, _i64), _util.full(i.shape, max(n - 1, 0), _i64)
    return lax.min(lax.max(i, lo), hi)


def _mod(i, n):
    i = lax.convert_element_type(i, _i64)
    nn = _util.full(i.shape, max(n, 1), _i64)
    return lax.rem(lax.add(lax.rem(i, nn), nn), nn)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """``jax.numpy.take_along_axis``: ``arr`` picked along ``axis`` by ``indices`` of the
    same rank (other dims broadcast). ``axis=None`` works on the flattened ``arr``.

    Out-of-range indices follow ``mode`` as in JAX: ``"fill"`` (the default) returns
    ``fill_value`` (NaN for floats, the most negative value for signed ints, True for
    bool), ``"clip"`` / ``"promise_in_bounds"`` clamp. Negative indices count from the
    end first (NumPy's meaning). A zero-size ``axis`` gives zeros of the result shape.

    >>> take_along_axis(np.array([[10., 30., 20.]]), np.array([[0, 2, 1, 3]]), axis=1)
    Array([[10., 20., 30., nan]])
    """
    _util.check_arraylike("take_along_axis", arr, indices)
    arr = _util.asarray(arr, fname="take_along_axis")
    gmode = gather_mode(mode, "take_along_axis")
    i = _index_array(indices, "take_along_axis")
    if axis is None:
        if _util.aval_of(i).ndim != 1:
            raise ValueError("take_along_axis: when axis=None, `indices` must have a single dimension.")
        arr, axis = lax.reshape(arr, (_util.aval_of(arr).size,)), 0
    shape = _util.shape_of(arr)
    if _util.aval_of(i).dtype.kind not in "iu":
        raise IndexError("take_along_axis: `indices` must be an integer array")
    if _util.aval_of(i).ndim != len(shape):
        raise ValueError("take_along_axis: `indices` and `arr` must have the same number of dimensions")
    axis = _util.canonicalize_axis(axis, len(shape), "take_along_axis")
    if shape[axis] == 0:  # as JAX: nothing to read, zeros of the broadcast result shape
        rest = tuple(1 if d == axis else n for d, n in enumerate(shape))
        try:
            out_shape = np.broadcast_shapes(_util.shape_of(i), rest)
        except ValueError:
            raise ValueError(
                f"take_along_axis: indices of shape {_util.shape_of(i)} do not broadcast with arr of shape {shape}"
            ) from None
        return _util.full(out_shape, 0, arr.dtype)
    full_index = []
    for d, n in enumerate(shape):
        if d == axis:
            full_index.append(i)
        else:
            full_index.append(np.arange(n, dtype=np.int64).reshape([n if e == d else 1 for e in range(len(shape))]))
    return _getitem(arr, tuple(full_index), gmode, fill_value, fname="take_along_axis")
