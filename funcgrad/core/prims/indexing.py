"""Indexing primitives with data-dependent indices: dynamic_slice, dynamic_update_slice,
gather and scatter.

Index semantics are memory-safe by construction (the same in eager, traced and
compiled code), following JAX's documented behaviour:
- dynamic_slice / dynamic_update_slice (``jax.lax.dynamic_slice``): a negative start
  index is wrapped once (``s + n`` for ``s < 0``), then clamped so the window fits;
- gather ``mode="clip"`` clamps each index into range, ``mode="fill"`` returns
  ``fill_value`` for out-of-range rows (default: NaN for floats, the most negative
  value for signed ints, the largest for unsigned ints, True for bool -- the defaults
  of ``jax.lax.gather``);
- scatter ``mode="drop"`` ignores out-of-range updates, ``mode="clip"`` clamps.
The primitives carry only these canonical modes; ``gather_mode`` / ``scatter_mode``
map JAX's names onto them (``jax.lax.GatherScatterMode``): ``"drop"`` is ``"fill"``
for a gather and ``"fill"`` is ``"drop"`` for a scatter, and ``"promise_in_bounds"``
is what XLA does in practice, reads clamp and writes drop. (JAX documents its
gradients as wrong for out-of-range indices in that mode; here they are the
derivatives of what is computed, since the mode *is* clip / drop.)
Gather and scatter indices are *not* wrapped here; ``funcgrad.numpy`` normalises
negative array indices first (NumPy's meaning).

gather(operand, indices): ``indices`` has shape ``batch + (k,)``; row ``r`` selects
``operand[r[0], ..., r[k-1], ...]``, so the result has shape
``batch + operand.shape[k:]``. scatter is its mirror.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core.ad_util import Zero, is_undefined
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import batch_size, bdim_at, iota_column, moveaxis
from funcgrad.core.primitive import GENERAL_PATH, Primitive, allow_missing, batch_rules, jvp_rules
from funcgrad.core.prims._checks import check_kind
from funcgrad.core.trace import get_aval_any

SCATTER_KINDS = ("set", "add", "mul", "min", "max")
_GATHER_MODES = {None: "fill", "fill": "fill", "drop": "fill", "clip": "clip", "promise_in_bounds": "clip"}
_SCATTER_MODES = {None: "drop", "fill": "drop", "drop": "drop", "clip": "clip", "promise_in_bounds": "drop"}


def _mode_name(mode):
    return getattr(mode, "name", mode).lower() if mode is not None and not isinstance(mode, str) else mode


def gather_mode(mode, fname="gather"):
    """JAX's gather mode names (``jax.lax.GatherScatterMode``; None -> ``"fill"``, as in
    ``jax.lax.gather``) -> the canonical ``"clip"`` / ``"fill"`` of ``gather_p``."""
    try:
        return _GATHER_MODES[_mode_name(mode)]
    except (KeyError, TypeError):
        raise ValueError(
            f"{fname}: mode must be one of 'fill', 'drop', 'clip', 'promise_in_bounds', got {mode!r}"
        ) from None


def scatter_mode(mode, fname="scatter"):
    """JAX's scatter mode names (None -> ``"drop"``) -> the canonical ``"clip"`` /
    ``"drop"`` of ``scatter_p``."""
    try:
        return _SCATTER_MODES[_mode_name(mode)]
    except (KeyError, TypeError):
        raise ValueError(
            f"{fname}: mode must be one of 'drop', 'fill', 'clip', 'promise_in_bounds', got {mode!r}"
        ) from None


def _check_starts(op, x, starts):
    if len(starts) != x.ndim:
        raise ValueError(f"{op}: need {x.ndim} start indices for {x.str_short()}, got {len(starts)}")
    for i, s in enumerate(starts):
        if s.shape != () or s.dtype.kind not in "iu":  # (unsigned starts never wrap)
            raise TypeError(f"{op}: start index {i} must be a scalar integer, got {s.str_short()}")


def _clamped_starts(starts, shape, sizes):
    """JAX's start positions: a negative start wraps once (``s + n``), then the start is
    clamped into ``[0, n - m]`` so the window fits."""
    return tuple(int(min(max(int(s) + n if int(s) < 0 else int(s), 0), n - m)) for s, n, m in zip(starts, shape, sizes))


def _zeros(x_or_aval):
    aval = x_or_aval if isinstance(x_or_aval, ShapedArray) else get_aval_any(x_or_aval)
    return ad.zeros_like_aval(aval.strip_weak_type())


# --- dynamic_slice ------------------------------------------------------------------------
dynamic_slice_p = Primitive("dynamic_slice")


@dynamic_slice_p.def_impl
def _dynamic_slice_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    st = _clamped_starts(starts, x.shape, slice_sizes)
    return x[tuple(slice(s, s + m) for s, m in zip(st, slice_sizes))]


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(x, *starts, slice_sizes):
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= m <= n for m, n in zip(slice_sizes, x.shape)):
        raise ValueError(f"dynamic_slice: slice_sizes {slice_sizes} do not fit in {x.str_short()}")
    return ShapedArray(slice_sizes, x.dtype, False)  # (strong: see ShapedArray.weak_type)


# dynamic_slice: linear in the operand; the start indices are integers (no tangent).
def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    ans = dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    g = tangents[0]
    return ans, Zero.like(ans) if type(g) is Zero else dynamic_slice_p.bind(g, *starts, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *starts, slice_sizes):
    return [dynamic_update_slice_p.bind(_zeros(x.aval), ct, *starts)] + [None] * len(starts)


jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
ad.deftranspose(dynamic_slice_p, _dynamic_slice_transpose)
ad.defvjp_eager_from_transpose(dynamic_slice_p)


def _window_indices(starts, bdims, size, x_shape, window):
    """Index rows ``(b, s_0[b] + i_0, ...)`` for every position of a per-example window
    (starts wrapped and clamped as dynamic_slice does): shape ``(size, *window, 1 + ndim)``."""
    cols = [iota_column(size, window, np.int64)]
    out_shape = (size,) + tuple(window)

    def full(v):
        return lax.broadcast_in_dim(np.asarray(v, np.int64), (size,), ())

    for j, (s, d) in enumerate(zip(starts, bdims)):
        s = lax.convert_element_type(bdim_at(s, d, size, 0), np.int64)
        s = lax.select(lax.lt(s, full(0)), lax.add(s, full(x_shape[j])), s)
        s = lax.max(lax.min(s, full(x_shape[j] - window[j])), full(0))
        pos = lax.add(lax.broadcast_in_dim(s, out_shape, (0,)), lax.iota(np.int64, out_shape, j + 1))
        cols.append(lax.reshape(pos, out_shape + (1,)))
    return lax.concatenate(cols, len(out_shape))


def _dynamic_slice_batch(args, bdims, *, slice_sizes):
    x, *starts = args
    dx, *ds = bdims
    size = batch_size(args, bdims)
    if all(d is None for d in ds):  # same window for every example: slice the batch too
        dtype = get_aval_any(starts[0]).dtype if starts else np.dtype(np.int64)
        zero = np.zeros((), dtype)
        new_starts = list(starts[:dx]) + [zero] + list(starts[dx:])
        sizes = tuple(slice_sizes[:dx]) + (size,) + tuple(slice_sizes[dx:])
        return dynamic_slice_p.bind(x, *new_starts, slice_sizes=sizes), dx
    x = bdim_at(x, dx, size, 0)
    idx = _window_indices(starts, ds, size, get_aval_any(x).shape[1:], slice_sizes)
    return gather_p.bind(x, idx, mode="clip", fill_value=None), 0


batch_rules[dynamic_slice_p] = _dynamic_slice_batch


# --- dynamic_update_slice ---------------------------------------------------------------------
dynamic_update_slice_p = Primitive("dynamic_update_slice")


@dynamic_update_slice_p.def_impl
def _dynamic_update_slice_impl(x, update, *starts):
    out = np.array(x, copy=True)
    update = np.asarray(update)
    st = _clamped_starts(starts, out.shape, update.shape)
    out[tuple(slice(s, s + m) for s, m in zip(st, update.shape))] = update
    return out


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract_eval(x, update, *starts):
    _check_starts("dynamic_update_slice", x, starts)
    if update.dtype != x.dtype or update.ndim != x.ndim or any(m > n for m, n in zip(update.shape, x.shape)):
        raise TypeError(
            f"dynamic_update_slice: update {update.str_short()} must have the operand's dtype and "
            f"rank and fit inside operand {x.str_short()}"
        )
    return x


# dynamic_update_slice: jointly linear in (operand, update).
def _dynamic_update_slice_jvp(primals, tangents):
    x, update, *starts = primals
    ans = dynamic_update_slice_p.bind(x, update, *starts)
    gx, gu = tangents[:2]
    if type(gx) is Zero and type(gu) is Zero:
        return ans, Zero.like(ans)
    return ans, dynamic_update_slice_p.bind(ad.instantiate(gx), ad.instantiate(gu), *starts)


def _dynamic_update_slice_transpose(ct, x, update, *starts):
    u_aval = update.aval if is_undefined(update) else get_aval_any(update)
    ct_x = dynamic_update_slice_p.bind(ct, _zeros(u_aval), *starts) if is_undefined(x) else None
    ct_u = dynamic_slice_p.bind(ct, *starts, slice_sizes=u_aval.shape) if is_undefined(update) else None
    return [ct_x, ct_u] + [None] * len(starts)


jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.deftranspose(dynamic_update_slice_p, _dynamic_update_slice_transpose)
ad.defvjp_eager_from_transpose(dynamic_update_slice_p)


def _dynamic_update_slice_batch(args, bdims):
    x, update, *starts = args
    dx, du, *ds = bdims
    size = batch_size(args, bdims)
    x, update = bdim_at(x, dx, size, 0), bdim_at(update, du, size, 0)
    if all(d is None for d in ds):
        dtype = get_aval_any(starts[0]).dtype if starts else np.dtype(np.int64)
        return dynamic_update_slice_p.bind(x, update, np.zeros((), dtype), *starts), 0
    window = get_aval_any(update).shape[1:]
    idx = _window_indices(starts, ds, size, get_aval_any(x).shape[1:], window)
    return scatter_p.bind(x, idx, update, kind="set", mode="clip"), 0


batch_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch


# --- gather -----------------------------------------------------------------------------
gather_p = Primitive("gather")


def default_fill_value(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max if dtype.kind == "u" else np.iinfo(dtype).min


def _index_rows(indices, k):
    indices = np.asarray(indices)
    # Not reshape(-1, k): NumPy cannot infer -1 when k == 0 (rows that index nothing).
    return indices.reshape(int(np.prod(indices.shape[:-1], dtype=np.int64)), k)


@gather_p.def_impl
def _gather_impl(operand, indices, *, mode, fill_value=None):
    operand = np.asarray(operand)
    indices = np.asarray(indices)
    k = indices.shape[-1]
    batch = indices.shape[:-1]
    dims = np.array(operand.shape[:k], dtype=np.int64)
    rows = _index_rows(indices, k).astype(np.int64)
    if k == 0:
        out = np.broadcast_to(operand, (rows.shape[0],) + operand.shape).copy()
        return out.reshape(batch + operand.shape)
    if mode == "clip":
        rows = np.clip(rows, 0, np.maximum(dims - 1, 0))
        out = operand[tuple(rows.T)]
    else:
        ok = np.all((rows >= 0) & (rows < dims), axis=1)
        safe = np.where(ok[:, None], rows, 0)
        if operand.size == 0:
            out = np.empty((rows.shape[0],) + operand.shape[k:], operand.dtype)
        else:
            out = operand[tuple(safe.T)]
        fv = default_fill_value(operand.dtype) if fill_value is None else fill_value
        out = np.where(ok.reshape((-1,) + (1,) * (operand.ndim - k)), out, np.asarray(fv, operand.dtype))
    return out.reshape(batch + operand.shape[k:])


def _check_fill_value(operand, fill_value) -> None:
    """``fill_value``: None, or a scalar the operand's dtype holds exactly (a float in an
    integer gather would be truncated; a tuple is not a value at all)."""
    if fill_value is None:
        return
    kind = operand.dtype.kind
    ok = isinstance(fill_value, (bool, int, float, complex, np.bool_, np.number))
    if ok and kind in "biu":
        ok = isinstance(fill_value, (bool, int, np.bool_, np.integer)) and (
            kind != "b" and np.iinfo(operand.dtype).min <= int(fill_value) <= np.iinfo(operand.dtype).max
            or kind == "b" and int(fill_value) in (0, 1))
    elif ok and kind == "f":
        ok = not isinstance(fill_value, (complex, np.complexfloating))
    if not ok:
        raise TypeError(f"gather: fill_value must be None or a scalar of the operand's kind "
                        f"({operand.str_short()}), got {fill_value!r:.60} ({type(fill_value).__name__})")


@gather_p.def_abstract_eval
def _gather_abstract_eval(operand, indices, *, mode, fill_value=None):
    if mode not in ("clip", "fill"):
        raise ValueError(f"gather: mode must be 'clip' or 'fill' (see gather_mode for JAX's names), got {mode!r}")
    _check_fill_value(operand, fill_value)
    check_kind("gather", indices, "i", "indices")
    if indices.ndim < 1 or indices.shape[-1] > operand.ndim:
        raise ValueError(
            f"gather: indices {indices.str_short()} must end in a dimension of size <= rank of "
            f"operand {operand.str_short()}"
        )
    if mode == "clip" and any(operand.shape[d] == 0 for d in range(indices.shape[-1])) and indices.size:
        raise IndexError(
            f"gather: mode 'clip' has no element to clamp to in a zero-size dimension of operand "
            f"{operand.str_short()} (indices {indices.str_short()}); use mode 'fill'"
        )
    k = indices.shape[-1]
    return ShapedArray(indices.shape[:-1] + operand.shape[k:], operand.dtype, False)


# gather: linear in the operand (filled positions have zero tangent).
def _gather_jvp(primals, tangents, *, mode, fill_value=None):
    operand, indices = primals
    ans = gather_p.bind(operand, indices, mode=mode, fill_value=fill_value)
    g = tangents[0]
    if type(g) is Zero:
        return ans, Zero.like(ans)
    return ans, gather_p.bind(g, indices, mode=mode, fill_value=0)


def _gather_transpose(ct, operand, indices, *, mode, fill_value=None):
    # Every gathered row sends its cotangent back: a scatter-add; rows that were filled
    # (out of range) drop theirs.
    ct_op = scatter_p.bind(_zeros(operand.aval), indices, ct, kind="add", mode="clip" if mode == "clip" else "drop")
    return [ct_op, None]


jvp_rules[gather_p] = _gather_jvp
ad.deftranspose(gather_p, _gather_transpose)
ad.defvjp_eager_from_transpose(gather_p)


def _gather_back(x, indices, mode):
    return gather_p.bind(x, indices, mode="clip" if mode == "clip" else "fill", fill_value=0)


def _with_batch_column(indices, d, size):
    """Indices mapped to the batch: prepend the example number as a leading index."""
    indices = bdim_at(indices, d, size, 0)
    shape = get_aval_any(indices).shape
    col = iota_column(size, shape[1:-1], get_aval_any(indices).dtype)
    return lax.concatenate([col, indices], len(shape) - 1)


def _gather_batch(args, bdims, *, mode, fill_value=None):
    (operand, indices), (do, di) = args, bdims
    size = batch_size(args, bdims)
    ishape = get_aval_any(indices).shape
    k = ishape[-1] if di is None else ishape[-1 if di != len(ishape) - 1 else -2]
    if di is None:
        # Only the operand is mapped: put its batch axis among the un-indexed trailing
        # dims, where gather carries it through untouched.
        operand = moveaxis(operand, do, k)
        out_dim = len(get_aval_any(indices).shape) - 1
        return gather_p.bind(operand, indices, mode=mode, fill_value=fill_value), out_dim
    if do is None:
        indices = moveaxis(indices, di, 0)
        return gather_p.bind(operand, indices, mode=mode, fill_value=fill_value), 0
    operand = moveaxis(operand, do, 0)
    return gather_p.bind(operand, _with_batch_column(indices, di, size), mode=mode, fill_value=fill_value), 0


batch_rules[gather_p] = _gather_batch


# --- scatter --------------------------------------------------------------------------------
scatter_p = Primitive("scatter")

_SCATTER_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


@scatter_p.def_impl
def _scatter_impl(operand, indices, updates, *, kind, mode):
    out = np.array(operand, copy=True)
    indices = np.asarray(indices)
    k = indices.shape[-1]
    rows = _index_rows(indices, k).astype(np.int64)
    upd = np.asarray(updates).reshape((rows.shape[0],) + out.shape[k:])
    dims = np.array(out.shape[:k], dtype=np.int64)
    if out.size == 0:  # nowhere to write (clip has nothing to clamp to)
        return out
    if mode == "clip":
        rows = np.clip(rows, 0, np.maximum(dims - 1, 0))
    else:
        ok = np.all((rows >= 0) & (rows < dims), axis=1)
        rows, upd = rows[ok], upd[ok]
    if k == 0:  # every row addresses the whole operand
        for u in upd:
            out[...] = u if kind == "set" else _SCATTER_UFUNCS[kind](out, u)
        return out
    where = tuple(rows.T)
    if kind == "set":
        out[where] = upd
    else:
        _SCATTER_UFUNCS[kind].at(out, where, upd)
    return out


@scatter_p.def_abstract_eval
def _scatter_abstract_eval(operand, indices, updates, *, kind, mode):
    if kind not in SCATTER_KINDS:
        raise ValueError(f"scatter: kind must be one of {SCATTER_KINDS}, got {kind!r}")
    if mode not in ("clip", "drop"):
        raise ValueError(f"scatter: mode must be 'clip' or 'drop' (see scatter_mode for JAX's names), got {mode!r}")
    check_kind("scatter", indices, "i", "indices")
    if indices.ndim < 1 or indices.shape[-1] > operand.ndim:
        raise ValueError(
            f"scatter: indices {indices.str_short()} must end in a dimension of size <= rank of "
            f"operand {operand.str_short()}"
        )
    k = indices.shape[-1]
    expected = indices.shape[:-1] + operand.shape[k:]
    if updates.shape != expected or updates.dtype != operand.dtype:
        raise TypeError(
            f"scatter: updates must be {ShapedArray(expected, operand.dtype).str_short()} for operand "
            f"{operand.str_short()} and indices {indices.str_short()}, got {updates.str_short()}"
        )
    return operand.strip_weak_type()


def _scatter_jvp(primals, tangents, *, kind, mode):
    operand, indices, updates = primals
    ans = scatter_p.bind(operand, indices, updates, kind=kind, mode=mode)
    g_op, _, g_up = tangents
    if type(g_op) is Zero and type(g_up) is Zero:
        return ans, Zero.like(ans)
    g_op, g_up = ad.instantiate(g_op), ad.instantiate(g_up)
    if kind in ("add", "set"):
        # Linear in (operand, updates). For "set" with duplicate indices the winning
        # update is implementation-defined; the tangent follows the same rule.
        return ans, scatter_p.bind(g_op, indices, g_up, kind=kind, mode=mode)
    if kind == "mul":
        return ans, _scatter_mul_tangent(operand, indices, updates, g_op, g_up, mode)
    # min / max: the tangent of whichever candidates attain the result, averaged on ties.
    dtype = get_aval_any(operand).dtype
    from_x = lax.convert_element_type(lax.eq(ans, operand), dtype)
    won = lax.convert_element_type(lax.eq(_gather_back(ans, indices, mode), updates), dtype)
    num = scatter_p.bind(_zeros(operand), indices, lax.mul(g_up, won), kind="add", mode=mode)
    num = lax.add(lax.mul(g_op, from_x), num)
    count = lax.add(from_x, scatter_p.bind(_zeros(operand), indices, won, kind="add", mode=mode))
    return ans, lax.div(num, count)


def _scatter_mul_tangent(operand, indices, updates, g_op, g_up, mode):
    """d ans for ans = x * P, P[p] = prod of the updates u_j hitting position p:
    gx * P + x * sum_j g_u_j * prod_{k != j} u_k. The product of the others is taken
    without dividing by a zero update: with Z zero updates at p and P' the product of the
    non-zero ones, it is P' / u_j for a non-zero u_j (0 if Z > 0) and P' for the one zero
    update (0 if Z > 1) -- exact where u_j == 0, where dividing P by u_j gave 0/0 = NaN."""
    dtype = get_aval_any(operand).dtype
    shape = get_aval_any(operand).shape
    ones = lax.broadcast_in_dim(np.ones((), dtype), shape, ())
    prod_up = scatter_p.bind(ones, indices, updates, kind="mul", mode=mode)
    u_shape = get_aval_any(updates).shape
    u_one = lax.broadcast_in_dim(np.ones((), dtype), u_shape, ())
    u_zero = lax.broadcast_in_dim(np.zeros((), dtype), u_shape, ())
    is_zero = lax.eq(updates, u_zero)
    safe = lax.select(is_zero, u_one, updates)
    nonzero_prod = _gather_back(scatter_p.bind(ones, indices, safe, kind="mul", mode=mode), indices, mode)
    zeros_here = _gather_back(scatter_p.bind(_zeros(operand), indices, lax.convert_element_type(is_zero, dtype),
                                             kind="add", mode=mode), indices, mode)
    others = lax.select(is_zero,
                        lax.select(lax.eq(zeros_here, u_one), nonzero_prod, u_zero),
                        lax.select(lax.eq(zeros_here, u_zero), lax.div(nonzero_prod, safe), u_zero))
    from_u = scatter_p.bind(_zeros(operand), indices, lax.mul(g_up, others), kind="add", mode=mode)
    return lax.add(lax.mul(g_op, prod_up), lax.mul(operand, from_u))


def _scatter_transpose(ct, operand, indices, updates, *, kind, mode):
    if kind not in ("add", "set"):
        raise NotImplementedError(f"scatter kind={kind!r} is not linear and has no transpose")
    u_aval = updates.aval if is_undefined(updates) else get_aval_any(updates)
    ct_op = ct_up = None
    if is_undefined(operand):
        # "set" overwrites: positions written by an update get no cotangent from ct.
        ct_op = ct if kind == "add" else scatter_p.bind(ct, indices, _zeros(u_aval), kind="set", mode=mode)
    if is_undefined(updates):
        ct_up = _gather_back(ct, indices, mode)
        if kind == "set":
            ct_up = lax.select(_set_winners(indices, u_aval, ct, mode), ct_up, _zeros(u_aval))
    return [ct_op, None, ct_up]


def _set_winners(indices, u_aval, ct, mode):
    """Mask (broadcast to the updates' shape) of the updates that a "set" scatter keeps:
    with duplicate indices the last one wins, as in NumPy's fancy assignment."""
    idx_aval = get_aval_any(indices)
    k, batch = idx_aval.shape[-1], idx_aval.shape[:-1]
    space = get_aval_any(ct).shape[:k]
    row_ids = lax.iota(np.int64, batch, 0) if batch else np.zeros((), np.int64)
    if len(batch) > 1:  # number the rows in row-major order
        row_ids = lax.reshape(lax.iota(np.int64, (int(np.prod(batch)),), 0), batch)
    blank = lax.broadcast_in_dim(np.asarray(-1, np.int64), space, ())
    marker = scatter_p.bind(blank, indices, row_ids, kind="set", mode=mode)
    won = lax.eq(gather_p.bind(marker, indices, mode="clip" if mode == "clip" else "fill", fill_value=-2), row_ids)
    return lax.broadcast_in_dim(won, u_aval.shape, tuple(range(len(batch))))


jvp_rules[scatter_p] = _scatter_jvp
ad.deftranspose(scatter_p, _scatter_transpose)
allow_missing("eager_vjp", scatter_p, GENERAL_PATH + "no NumPy rule is written (linear only for kinds add, set)")


def _scatter_batch(args, bdims, *, kind, mode):
    (operand, indices, updates), (do, di, du) = args, bdims
    size = batch_size(args, bdims)
    operand = bdim_at(operand, do, size, 0)
    updates = bdim_at(updates, du, size, 0)
    if di is None:
        di_val = bdim_at(indices, None, size, 0)
        indices = _with_batch_column(di_val, 0, size)
    else:
        indices = _with_batch_column(indices, di, size)
    return scatter_p.bind(operand, indices, updates, kind=kind, mode=mode), 0


batch_rules[scatter_p] = _scatter_batch


from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives above)
