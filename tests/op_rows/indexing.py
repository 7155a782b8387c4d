"""Op-table rows for funcgrad.numpy indexing: getitem (``x[idx]``), ``at[]`` updates,
take, take_along_axis and the nonzero family.

Static indices are closed over; an index passed as a row argument is traced by the
jaxpr column (so it exercises dynamic_slice / gather / scatter). References are plain
NumPy: ``x[idx]``, ``r[idx] = v`` and ``numpy.<ufunc>.at`` on a copy. The rows up to
"out-of-range modes" use in-range indices; the mode rows after them check JAX's
out-of-range modes (fill / clip / wrap / drop / promise_in_bounds) against NumPy
references written below (more in test_indexing_modes.py).
"""
import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax

from harness import rand, randpos, row

getitem = fnp.indexing.getitem
f32, i32, i64 = np.float32, np.int32, np.int64

X0 = np.asarray(1.5)
X1 = rand(6)
X2 = rand(4, 3)
X3 = rand(2, 3, 4)
I2 = rand(4, 3, dtype=i64, low=-9, high=9)
B2 = rand(3, 4, dtype=np.bool_)
F32 = rand(3, 5, dtype=f32)

DUP_SET = {"no_grad": "repeated indices in set: which value wins is unspecified"}


def index(name, x, idx, **kw):
    """A row for ``x[idx]`` with a static (closed-over) index."""
    return row(f"index/{name}", lambda x: getitem(x, idx), lambda x: x[idx], x, **kw)


def index_traced(name, build, x, *idx_args, **kw):
    """``x[build(*idx_args)]`` with the index arrays passed (and so traced) as arguments."""
    return row(f"index/{name}", lambda x, *i: getitem(x, build(*i)), lambda x, *i: x[build(*i)], x, *idx_args, **kw)


_UFUNC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "power": np.power, "min": np.minimum, "max": np.maximum}


def _at_ref(kind, x, idx, v):
    out = np.array(x, copy=True)
    if kind == "set":
        out[idx] = v
    else:
        _UFUNC[kind].at(out, idx, np.asarray(v, out.dtype))
    return out


def at(kind, name, x, idx, v, **kw):
    """``fnp.at(x)[idx].<kind>(v)`` with a static index; ``v`` is a traced argument."""
    return row(
        f"at_{kind}/{name}",
        lambda x, v: getattr(fnp.at(x)[idx], kind)(v),
        lambda x, v: _at_ref(kind, x, idx, v),
        x, v, **kw,
    )


def at_traced(kind, name, build, x, v, *idx_args, **kw):
    """``fnp.at(x)[build(*idx_args)].<kind>(v)`` with traced index arguments."""
    return row(
        f"at_{kind}/{name}",
        lambda x, v, *i: getattr(fnp.at(x)[build(*i)], kind)(v),
        lambda x, v, *i: _at_ref(kind, x, build(*i), v),
        x, v, *idx_args, **kw,
    )


def at_const(kind, name, x, idx, v, **kw):
    """As ``at`` but with ``v`` a Python scalar closed over (weak, cast to x.dtype)."""
    return row(
        f"at_{kind}/{name}",
        lambda x: getattr(fnp.at(x)[idx], kind)(v),
        lambda x: _at_ref(kind, x, idx, v),
        x, **kw,
    )


def _take_ref(indices, axis, mode):
    return lambda a: np.take(a, indices, axis=axis, mode=mode or "raise")


def take(name, a, indices, axis=None, mode=None):
    return row(f"take/{name}", lambda a: fnp.take(a, indices, axis=axis, mode=mode), _take_ref(indices, axis, mode), a)


def take_traced(name, a, indices, axis=None, mode=None):
    return row(
        f"take/{name}",
        lambda a, i: fnp.take(a, i, axis=axis, mode=mode),
        lambda a, i: np.take(a, i, axis=axis, mode=mode or "raise"),
        a, indices,
    )


def take_along(name, a, indices, axis, traced=True):
    if traced:
        return row(f"take_along_axis/{name}", lambda a, i: fnp.take_along_axis(a, i, axis),
                   lambda a, i: np.take_along_axis(a, i, axis), a, indices)
    return row(f"take_along_axis/{name}", lambda a: fnp.take_along_axis(a, indices, axis),
               lambda a: np.take_along_axis(a, indices, axis), a)


# --- references for JAX's out-of-range modes ---------------------------------------------

def _default_fill(dtype):
    dtype = np.dtype(dtype)
    return np.nan if dtype.kind == "f" else True if dtype.kind == "b" else np.iinfo(dtype).min


def _scalar_if_0d(out):
    return out[()] if np.ndim(out) == 0 else out


def _jnp_take_ref(a, i, axis, mode, fill_value):
    """``jnp.take`` in NumPy: fill (default) normalises negatives once and fills the rest."""
    a, i = np.asarray(a), np.asarray(i)
    if axis is None:
        a, axis = a.ravel(), 0
    if mode in ("clip", "wrap"):
        return np.take(a, i, axis=axis, mode=mode)
    n = a.shape[axis]
    ok = (i >= -n) & (i < n)
    out = np.take(a, np.where(ok, i, 0), axis=axis)
    mask = ok.reshape((1,) * axis + i.shape + (1,) * (a.ndim - axis - 1))
    fill = _default_fill(a.dtype) if fill_value is None else fill_value
    return _scalar_if_0d(np.where(mask, out, np.asarray(fill, a.dtype)))


def take_mode(name, a, indices, axis=None, mode=None, fill_value=None, **kw):
    """``fnp.take`` with an out-of-range mode; the indices are traced (an argument)."""
    return row(
        f"take_mode/{name}",
        lambda a, i: fnp.take(a, i, axis=axis, mode=mode, fill_value=fill_value),
        lambda a, i: _jnp_take_ref(a, i, axis, mode, fill_value),
        a, indices, **kw,
    )


def _take_along_ref(a, i, axis, mode, fill_value):
    n = a.shape[axis]
    i = np.where(i < 0, i + n, i)
    if mode in ("clip", "promise_in_bounds"):
        return np.take_along_axis(a, np.clip(i, 0, n - 1), axis)
    ok = (i >= 0) & (i < n)
    out = np.take_along_axis(a, np.where(ok, i, 0), axis)
    fill = _default_fill(a.dtype) if fill_value is None else fill_value
    return np.where(ok, out, np.asarray(fill, a.dtype))


def take_along_mode(name, a, indices, axis, mode=None, fill_value=None, **kw):
    return row(
        f"take_along_axis_mode/{name}",
        lambda a, i: fnp.take_along_axis(a, i, axis, mode=mode, fill_value=fill_value),
        lambda a, i: _take_along_ref(a, i, axis, mode, fill_value),
        a, indices, **kw,
    )


def at_get_mode(name, x, i, mode, fill_value=None, **kw):
    """``fnp.at(x)[i].get(mode=...)`` along axis 0 with a traced index ``i``."""
    def ref(x, i):
        if mode in ("clip", "promise_in_bounds"):  # a negative index wraps once, then clips
            return _jnp_take_ref(x, np.where(np.asarray(i) < 0, np.asarray(i) + len(x), i), 0, "clip", None)
        return _jnp_take_ref(x, i, 0, None, fill_value)

    return row(f"at_get_mode/{name}", lambda x, i: fnp.at(x)[i].get(mode=mode, fill_value=fill_value), ref, x, i, **kw)


def _update_ref(kind, x, i, v, mode):
    """``x.at[i].<kind>(v, mode=mode)`` along axis 0 in NumPy (clip or drop)."""
    n, i = len(x), np.asarray(i)
    i = np.where(i < 0, i + n, i)
    if mode == "clip":
        i = np.clip(i, 0, n - 1)
    else:
        keep = (i >= 0) & (i < n)
        i, v = i[keep], np.broadcast_to(v, i.shape + x.shape[1:])[keep]
    return _at_ref(kind, x, i, v)


def at_mode(kind, name, x, v, i, mode, **kw):
    """``fnp.at(x)[i].<kind>(v, mode=mode)`` with a traced index ``i`` along axis 0."""
    return row(
        f"at_{kind}_mode/{name}",
        lambda x, v, i: getattr(fnp.at(x)[i], kind)(v, mode=mode),
        lambda x, v, i: _update_ref(kind, x, i, v, mode),
        x, v, i, **kw,
    )


def _ds_ref(x, starts, sizes):
    """``jax.lax.dynamic_slice``: a negative start wraps once, then clamps."""
    st = [min(max(int(s) + n if s < 0 else int(s), 0), n - m) for s, n, m in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + m) for s, m in zip(st, sizes))]


def _dus_ref(x, u, starts):
    out = np.array(x, copy=True)
    st = [min(max(int(s) + n if s < 0 else int(s), 0), n - m) for s, n, m in zip(starts, x.shape, u.shape)]
    out[tuple(slice(s, s + m) for s, m in zip(st, u.shape))] = u
    return out


def dyn_slice(name, x, sizes, *starts, **kw):
    return row(f"dynamic_slice/{name}", lambda x, *s: lax.dynamic_slice(x, s, sizes),
               lambda x, *s: _ds_ref(x, s, sizes), x, *starts, **kw)


def dyn_update(name, x, u, *starts, **kw):
    return row(f"dynamic_update_slice/{name}", lambda x, u, *s: lax.dynamic_update_slice(x, u, s),
               lambda x, u, *s: _dus_ref(x, u, s), x, u, *starts, **kw)


NAN_FILL = {"no_grad": "NaN fill values: finite differences are undefined there (fill_value rows check derivatives)"}
I32 = rand(3, 4, dtype=i32, low=-50, high=50)

ROWS = [
    # --- basic indexing: ints, slices, None, Ellipsis ------------------------------------
    index("int_1d", X1, 2),
    index("neg_int_1d", X1, -1),
    index("int_2d", X2, 1),
    index("ints_2d_scalar", X2, (1, -2)),
    index("ints_3d_partial", X3, (0, 2)),
    index("np_int", X2, np.int32(3)),
    index("slice", X1, slice(1, 4)),
    index("slice_step", X1, slice(0, None, 2)),
    index("slice_neg_start", X1, slice(-3, None)),
    index("slice_out_of_range", X1, slice(-10, 10)),
    index("neg_step", X2, (slice(None, None, -2), 1)),
    index("neg_step_bounds", X1, slice(4, 0, -1)),
    index("neg_step_3d", X3, (slice(None, None, -1), slice(None, None, -2), slice(3, None, -3))),
    index("empty_slice", X1, slice(3, 1)),
    index("empty_slice_2d", X2, (slice(None), slice(2, 2))),
    index("empty_neg_step", X1, slice(1, 3, -1)),
    index("newaxis", X1, (None, slice(None), None)),
    index("newaxis_mid", X2, (slice(None), None, 0)),
    index("ellipsis", X3, (Ellipsis, 1)),
    index("ellipsis_newaxis", X3, (0, Ellipsis, None)),
    index("ellipsis_only", X2, Ellipsis),
    index("ellipsis_mid", X3, (1, Ellipsis, slice(None, None, -1))),
    index("empty_tuple_0d", X0, ()),
    index("ellipsis_0d", X0, Ellipsis),
    index("newaxis_0d", X0, None),
    index("slice_on_empty", np.zeros((0, 3)), (slice(None), 1)),
    index("int_dtype", I2, (slice(1, None), -1)),
    index("bool_dtype", B2, (1, slice(None, None, -1))),
    index("float32", F32, (slice(None, None, 2), slice(1, 4))),
    # --- advanced indexing with concrete arrays / lists ----------------------------------
    index("int_array", X1, np.array([2, 0, -1])),
    index("int_array_2d_index", X2, np.array([[0, 1], [3, 2]])),
    index("int32_array", X2, np.array([1, 0], dtype=i32)),
    index("list", X2, [1, 1, 0]),
    index("empty_list", X1, []),
    index("adv_pair", X2, ([0, 2], [1, -1])),
    index("adv_broadcast", X2, (np.array([[0], [2]]), np.array([0, 1, 2]))),
    index("adv_separated", X3, ([0, 1], slice(None), [2, 0])),
    index("adv_adjacent", X3, (slice(None), [0, 2], [1, 3])),
    index("adv_int_separated", X3, (0, slice(None), [0, 1])),
    index("adv_int_adjacent", X3, (slice(None), 1, [0, 3])),
    index("adv_newaxis_separated", X3, ([0], None, [0])),
    index("adv_neg_step", X2, (slice(None, None, -1), [0, 2])),
    index("adv_step_slice_3d", X3, (slice(None), slice(None, None, 2), np.array([[3, 0]]))),
    index("adv_ellipsis", X3, (Ellipsis, [1, 1, 0])),
    index("adv_int_dtype", I2, ([3, 0], slice(None, 2))),
    index("adv_bool_dtype", B2, (slice(None), [3, 0, 3])),
    index("adv_float32", F32, [2, 0]),
    index("adv_0d_array", X2, (np.array(1), np.array(2))),
    # --- concrete boolean masks ----------------------------------------------------------
    index("mask_1d", X1, np.array([True, False, True, True, False, True])),
    index("mask_2d", X2, X2 > 0),
    index("mask_axis1", X3, (slice(None), np.array([True, False, True]))),
    index("mask_list", X2, [False, True, True, False]),
    index("mask_all_false", X1, np.zeros(6, bool)),
    index("mask_scalar_true", X2, True),
    index("mask_scalar_false", X2, False),
    index("mask_scalar_0d", X0, np.array(True)),
    index("mask_with_int_array", X2, (np.array([True, False, True, False]), [0, 2])),
    index("mask_bool_dtype", B2, B2),
    # --- traced indices (arguments of the row) -------------------------------------------
    index_traced("traced_int", lambda i: i, X2, np.int64(-1)),
    index_traced("traced_int_slice", lambda i: (i, slice(1, 3)), X2, np.int64(2)),
    index_traced("traced_int32", lambda i: (slice(None), i), X2, np.int32(1)),
    index_traced("traced_two_ints", lambda i, j: (i, j), X2, np.int64(3), np.int64(-3)),
    index_traced("traced_int_step", lambda i: (slice(None, None, -2), i), X3, np.int64(-1)),
    index_traced("traced_int_newaxis", lambda i: (None, Ellipsis, i), X3, np.int64(2)),
    index_traced("traced_array", lambda i: i, X1, np.array([2, 0, -1])),
    index_traced("traced_array_axis1", lambda i: (slice(None), i), X2, np.array([2, 2, -3, 0])),
    index_traced("traced_array_pair", lambda i, j: (i, j), X2, np.array([0, 3]), np.array([[1], [2]])),
    index_traced("traced_array_separated", lambda i: (i, slice(None), 0), X3, np.array([1, 0, 1])),
    index_traced("traced_int_and_array", lambda i, j: (i, slice(None), j), X3, np.int64(1), np.array([0, 3])),
    index_traced("traced_array_neg_step", lambda i: (slice(None, None, -1), i), X2, np.array([1, -1])),
    index_traced("traced_array_2d", lambda i: i, X2, np.array([[0, 1], [3, 2]])),
    index_traced("traced_in_list", lambda i: [i, 0, i], X1, np.int64(4)),
    index_traced("traced_with_mask", lambda i: (np.array([True, False, True, True]), i), X2, np.array([0, 1, 2])),
    index_traced("traced_int_dtype", lambda i: (i, Ellipsis), I2, np.array([3, 1])),
    index_traced("traced_bool_dtype", lambda i: (slice(None), i), B2, np.int64(-2)),
    # --- at[].set -------------------------------------------------------------------------
    at("set", "int", X1, 2, np.float64(7.5)),
    at("set", "neg_int", X1, -1, np.float64(7.5)),
    at("set", "row_broadcast", X2, 1, rand(3)),
    at("set", "slice", X1, slice(1, 4), rand(3)),
    at("set", "slice_step", X1, slice(0, None, 2), rand(3)),
    at("set", "neg_step", X2, (slice(None, None, -2), 1), rand(2)),
    at("set", "neg_step_unit", X2, (slice(None, None, -1), slice(1, None)), rand(4, 2)),
    at("set", "empty_slice", X2, slice(2, 2), rand(3)),
    at("set", "newaxis_ellipsis", X3, (None, Ellipsis, 1), rand(1, 2, 3)),
    at("set", "leading_ones", X2, 0, rand(1, 1, 3)),
    at("set", "int_array", X1, np.array([4, 0, -2]), rand(3)),
    at("set", "adv_pair", X2, ([0, 2], [1, -1]), rand(2)),
    at("set", "adv_separated", X3, ([0, 1], slice(None), [2, 0]), rand(2, 3)),
    at("set", "adv_slice_step", X3, (slice(None), slice(None, None, 2), [3, 0]), rand(2, 2, 2)),
    at("set", "mask", X2, X2 > 0, np.float64(0.0)),
    at("set", "mask_scalar", X2, True, rand(1, 4, 3)),
    at("set", "duplicates", X1, [1, 1, 3], rand(3), tags=DUP_SET),
    at("set", "0d", X0, (), np.float64(-2.0)),
    at("set", "all", X2, Ellipsis, rand(3)),
    at_const("set", "int_dtype_cast", I2, (slice(None), 1), 2.7),
    at_const("set", "bool_dtype", B2, (0, slice(1, 3)), True),
    at_const("set", "float32_weak", F32, [0, 2], 0.5),
    at_traced("set", "traced_int", lambda i: i, X2, rand(3), np.int64(-2)),
    at_traced("set", "traced_int_col", lambda i: (slice(None), i), X2, rand(4), np.int64(1)),
    at_traced("set", "traced_array", lambda i: i, X1, rand(3), np.array([5, 0, -3])),
    at_traced("set", "traced_array_2d", lambda i, j: (i, slice(None, None, -1), j), X3, rand(2, 3),
              np.array([1, 0]), np.array([3, 1])),
    # --- at[].add / subtract / multiply / divide / power / min / max / get -------------------
    at("add", "int", X1, 3, np.float64(1.25)),
    at("add", "slice", X2, (slice(1, 3), slice(None)), rand(2, 3)),
    at("add", "slice_step", X1, slice(None, None, -2), rand(3)),
    at("add", "duplicates", X1, [0, 0, 2, 0, -1], rand(5)),
    at("add", "duplicates_2d", X2, ([1, 1, 0], [2, 2, 2]), rand(3)),
    at("add", "duplicate_rows", X2, [1, 3, 1], rand(3, 3)),
    at("add", "adv_separated", X3, ([1, 1], slice(None), [0, 0]), rand(2, 3)),
    at("add", "mask", X2, X2 < 0, np.float64(10.0)),
    at("add", "float32", F32, ([0, 0], [4, 4]), rand(2, dtype=f32)),
    at_const("add", "int_dtype", I2, [0, 0, 3], 5),
    at_const("add", "bool_dtype", B2, ([0, 0, 2], [1, 1, 3]), True),
    at_traced("add", "traced_duplicates", lambda i: i, X1, rand(4), np.array([2, 2, -4, 5])),
    at_traced("add", "traced_int", lambda i: (Ellipsis, i), X3, rand(2, 3), np.int64(-1)),
    at("subtract", "duplicates", X1, [1, 1, 4], rand(3)),
    at_const("subtract", "int_dtype", I2, (slice(None), 0), 3),
    at("multiply", "duplicates", X1, [0, 0, 5], rand(3)),
    at("multiply", "slice", X2, (slice(None), slice(None, None, 2)), rand(4, 2)),
    at_traced("multiply", "traced", lambda i: (slice(None), i), X2, rand(4, 2), np.array([0, 0])),
    at("divide", "duplicates", X1, [3, 3, 0], randpos(3)),
    at("divide", "slice", X2, 2, randpos(3)),
    at("power", "int", randpos(5), 1, np.float64(2.5)),
    at("power", "array", randpos(2, 3), (slice(None), [0, 2]), rand(2, 2)),
    at("min", "duplicates", X1, [2, 2, 2, 0], rand(4)),
    at("min", "slice", X2, (slice(None), 0), rand(4)),
    at_const("min", "int_dtype", I2, ([0, 0, 1], [1, 1, 2]), 0),
    at("max", "duplicates", X1, [5, 1, 5], rand(3)),
    at("max", "adv_2d", X3, (slice(None), [0, 0], [1, 1]), rand(2, 2)),
    at_const("max", "bool_dtype", B2, [0, 0], False),
    at_traced("max", "traced", lambda i: i, X2, rand(2, 3), np.array([3, 3])),
    row("at_get/adv", lambda x: fnp.at(x)[[0, 2], ::-1].get(), lambda x: x[[0, 2], ::-1], X2),
    row("at_get/traced", lambda x, i: fnp.at(x)[i].get(), lambda x, i: x[i], X2, np.int64(-1)),
    # --- take ----------------------------------------------------------------------------
    take("flat", X2, [0, 11, -1]),
    take("flat_scalar", X2, 5),
    take("axis0", X2, [3, 0, 3], axis=0),
    take("axis1_2d_indices", X3, np.array([[0, 1], [2, 1]]), axis=1),
    take("axis_neg", X3, [-1, 0], axis=-1),
    take("axis_scalar", X3, 2, axis=2),
    take("empty", X2, [], axis=1),
    take("wrap", X1, [7, -8, 2], mode="wrap"),
    take("clip", X2, [-5, 10], axis=0, mode="clip"),
    take("int_dtype", I2, [2, 2], axis=1),
    take("bool_dtype", B2, [[1, 0]], axis=0),
    take("0d", X0, [0, 0]),
    take_traced("traced_flat", X2, np.array([0, 11, -1])),
    take_traced("traced_axis1", X3, np.array([[2], [0]]), axis=1),
    take_traced("traced_scalar", X2, np.int64(-2), axis=0),
    take_traced("traced_wrap", X1, np.array([7, -8]), mode="wrap"),
    take_traced("traced_clip", X1, np.array([-1, 9]), mode="clip"),
    # --- take_along_axis -------------------------------------------------------------------
    take_along("axis1", X2, np.argsort(X2, axis=1), 1),
    take_along("axis0", X2, np.array([[3, 0, 1]]), 0),
    take_along("neg_axis", X3, np.array([[[3, -1]], [[0, 0]]]), -1),
    take_along("broadcast", X3, np.array([[[1], [0], [3]]]), 2),
    take_along("none", X3, np.array([23, 0, -1]), None),
    take_along("static", X2, np.array([[2, 1], [0, 0], [1, 1], [2, 2]]), 1, traced=False),
    take_along("int_dtype", I2, np.array([[1], [0], [2], [2]]), 1),
    # --- out-of-range modes (JAX's): take ----------------------------------------------------
    take_mode("fill_default", X1, np.array([0, 7, -2, -9, 5]), tags=NAN_FILL),
    take_mode("fill_value", X2, np.array([[7, -1], [2, -8]]), axis=0, fill_value=-7.0),
    take_mode("fill_value_axis1", X3, np.array([4, -5, 1, -4]), axis=1, fill_value=0.25),
    take_mode("fill_scalar_index", X2, np.int64(-6), axis=0, fill_value=1.5),
    take_mode("fill_float32", F32, np.array([3, -4, 0]), axis=0, tags=NAN_FILL),
    take_mode("fill_float32_value", F32, np.array([[9], [-1]]), axis=1, fill_value=2.0),
    take_mode("fill_int64", I2, np.array([3, 4, -5]), axis=0),
    take_mode("fill_int32", I32, np.array([1, 9, -4]), axis=1),
    take_mode("fill_int32_value", I32, np.array([5, -1]), axis=0, fill_value=-3),
    take_mode("fill_bool", B2, np.array([0, 4, -9]), axis=1),
    take_mode("clip", X2, np.array([-5, 10, 1]), axis=1, mode="clip"),
    take_mode("clip_flat", X2, np.array([[-1, 100], [3, 11]]), mode="clip"),
    take_mode("clip_float32", F32, np.array([7, -2]), axis=0, mode="clip"),
    take_mode("wrap", X3, np.array([5, -7, 3]), axis=2, mode="wrap"),
    take_mode("wrap_int32", I32, np.array([[-1, 4]]), axis=0, mode="wrap"),
    take_mode("fill_explicit", X1, np.array([-6, 6, 2]), mode="fill", fill_value=3.0),
    # --- out-of-range modes: take_along_axis -------------------------------------------------
    take_along_mode("fill_default", X2, np.array([[0, 3, -1], [-4, 1, 2], [2, 2, 2], [5, 0, -3]]), 1, tags=NAN_FILL),
    take_along_mode("fill_value", X2, np.array([[4, 0, -5]]), 0, fill_value=0.5),
    take_along_mode("fill_float32", F32, np.array([[0, 9], [-1, -6], [4, 2]]), 1, fill_value=-1.0),
    take_along_mode("fill_int32", I32, np.array([[3], [4], [-5]]), 1),
    take_along_mode("clip", X3, np.array([[[7, -1, -9]]]), 2, mode="clip"),
    take_along_mode("promise_in_bounds", X2, np.array([[-1, 5, 0]]), 0, mode="promise_in_bounds"),
    # --- out-of-range modes: at[].get / x[i] -----------------------------------------------
    at_get_mode("fill", X2, np.array([1, 4, -1, -5]), "fill", fill_value=-2.0),
    at_get_mode("fill_default", X1, np.array([6, -7, 0]), "fill", tags=NAN_FILL),
    at_get_mode("drop_alias", F32, np.array([[2], [3]]), "drop", fill_value=4.0),
    at_get_mode("fill_scalar", X2, np.int64(9), "fill", fill_value=0.5),
    at_get_mode("fill_int32", I32, np.array([2, 3]), "fill"),
    at_get_mode("clip", X2, np.array([-9, 7, 2]), "clip"),
    at_get_mode("promise_in_bounds", X1, np.array([8, -1, -8]), "promise_in_bounds"),
    at_get_mode("promise_scalar", X2, np.int64(-7), "promise_in_bounds"),
    # --- out-of-range modes: at[].set / add / ... ----------------------------------------------
    at_mode("set", "drop", X1, rand(4), np.array([1, 7, -9, -2]), "drop"),
    at_mode("set", "fill_alias", X2, rand(3, 3), np.array([5, 0, -1]), "fill"),
    at_mode("set", "clip", X1, rand(3), np.array([9, -1, -10]), "clip", tags=DUP_SET),
    at_mode("set", "clip_unique", X1, rand(2), np.array([9, 1]), "clip"),
    at_mode("set", "promise_in_bounds", X2, rand(3), np.array([2, 4, -5]), "promise_in_bounds"),
    at_mode("add", "drop", X1, rand(5), np.array([0, 0, 6, -7, -1]), "drop"),
    at_mode("add", "clip", X2, rand(3, 3), np.array([-8, 8, 3]), "clip"),
    at_mode("add", "clip_float32", F32, rand(2, 5, dtype=f32), np.array([3, -4]), "clip"),
    at_mode("multiply", "drop", X1, rand(3), np.array([2, 6, 2]), "drop"),
    at_mode("max", "clip", X1, rand(3), np.array([10, 5, -1]), "clip"),
    at_mode("min", "drop_int32", I32, np.int32(-60), np.array([1, 3, -4]), "drop"),
    at_mode("add", "clip_int32", I32, np.int32(5), np.array([-4, 2]), "clip"),
    row("at_add_mode/concrete_out_of_range", lambda x, v: fnp.at(x)[np.array([1, 8])].add(v, mode="drop"),
        lambda x, v: _update_ref("add", x, np.array([1, 8]), v, "drop"), X1, rand(2)),
    row("at_set_mode/concrete_int_clip", lambda x, v: fnp.at(x)[9].set(v, mode="clip"),
        lambda x, v: _update_ref("set", x, np.array(9), v, "clip"), X2, rand(3)),
    # --- dynamic_slice / dynamic_update_slice: negative starts wrap, then clamp -------------------
    dyn_slice("neg_start_wraps", X1, (2,), np.int64(-3)),
    dyn_slice("neg_start_clamps", X1, (3,), np.int64(-1)),
    dyn_slice("far_negative", X1, (2,), np.int64(-40)),
    dyn_slice("past_end", X2, (2, 2), np.int64(9), np.int64(-2)),
    dyn_slice("int32_starts", F32, (2, 3), np.int32(-2), np.int32(-7)),
    dyn_slice("int_dtype", I2, (3, 1), np.int64(-4), np.int64(-1)),
    dyn_update("neg_start_wraps", X1, rand(2), np.int64(-2)),
    dyn_update("neg_start_clamps", X2, rand(2, 2), np.int64(-1), np.int64(-9)),
    dyn_update("past_end_float32", F32, rand(1, 4, dtype=f32), np.int32(7), np.int32(-3)),
    dyn_update("int_dtype", I2, rand(2, 3, dtype=i64), np.int64(-3), np.int64(0)),
    # --- nonzero family (concrete input only: no traced arguments) ---------------------------
    row("nonzero/2d", lambda: fnp.nonzero(X2 > 0), lambda: np.nonzero(X2 > 0)),
    row("nonzero/1d_float", lambda: fnp.nonzero(np.array([0.0, 1.5, 0.0, -2.0])),
        lambda: np.nonzero(np.array([0.0, 1.5, 0.0, -2.0]))),
    row("argwhere/3d", lambda: fnp.argwhere(X3 > 0.5), lambda: np.argwhere(X3 > 0.5)),
    row("argwhere/0d", lambda: fnp.argwhere(X0), lambda: np.argwhere(X0)),
    row("flatnonzero/2d", lambda: fnp.flatnonzero(I2), lambda: np.flatnonzero(I2)),
]
