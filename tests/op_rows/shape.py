"""Op-table rows for funcgrad.numpy shape and structure functions."""
import numpy as np

import funcgrad.numpy as fnp
from harness import rand, row

f32, i32, i64 = np.float32, np.int32, np.int64

A0 = rand()  # 0-d float64
A1 = rand(5)
A2 = rand(3, 4)
A3 = rand(2, 3, 4)
A4 = rand(2, 1, 3, 1)
E0 = np.zeros((0,), np.float64)
E2 = np.zeros((0, 3), np.float64)
F2 = rand(3, 4, dtype=f32)
I2 = rand(3, 4, dtype=i64, low=-5, high=5)
I32 = rand(2, 3, dtype=i32, low=-5, high=5)
B2 = rand(3, 4, dtype=bool)


def same(name, fn_name, *args, **kw):
    """A row calling ``fnp.<fn_name>`` and ``np.<fn_name>`` with the same static kwargs."""
    static = kw.pop("static", {})
    f, g = getattr(fnp, fn_name), getattr(np, fn_name)
    return row(name, lambda *a: f(*a, **static), lambda *a: g(*a, **static), *args, **kw)


def lam(name, fn, *args, **kw):
    """A row whose function body is written once against a module (fnp or np)."""
    return row(name, lambda *a: fn(fnp, *a), lambda *a: fn(np, *a), *args, **kw)


ROWS = [
    # metadata as arrays (so the row returns NumPy values)
    lam("shape/2d", lambda m, x: np.asarray(m.shape(x)), A3),
    lam("shape/0d", lambda m, x: np.asarray(m.shape(x), dtype=np.int64), A0),
    lam("ndim/0d", lambda m, x: np.asarray(m.ndim(x)), A0),
    lam("size/axis", lambda m, x: np.asarray([m.size(x), m.size(x, 1), m.size(x, -1)]), A3),
    # reshape / ravel
    lam("reshape/minus1", lambda m, x: m.reshape(x, (4, -1)), A3),
    lam("reshape/int", lambda m, x: m.reshape(x, 12), A2),
    lam("reshape/to_0d", lambda m, x: m.reshape(x, ()), rand(1, 1)),
    lam("reshape/from_0d", lambda m, x: m.reshape(x, (1, 1, -1)), A0),
    lam("reshape/empty", lambda m, x: m.reshape(x, (3, 0, 2)), rand(0, 6)),
    lam("reshape/int32", lambda m, x: m.reshape(x, (3, 2)), I32),
    lam("reshape/method", lambda m, x: x.reshape(2, 6).T.reshape((-1,)), A2),  # Tracer methods when staged
    same("ravel/3d", "ravel", A3),
    same("ravel/0d", "ravel", A0),
    same("ravel/bool", "ravel", B2),
    # transpose / swapaxes / moveaxis
    same("transpose/default", "transpose", A3),
    same("transpose/axes_neg", "transpose", A3, static={"axes": (-1, 0, 1)}),
    same("transpose/0d", "transpose", A0),
    same("transpose/f32", "transpose", F2, static={"axes": [1, 0]}),
    lam("swapaxes/neg", lambda m, x: m.swapaxes(x, 0, -1), A3),
    lam("swapaxes/same", lambda m, x: m.swapaxes(x, 1, 1), I2),
    lam("moveaxis/int", lambda m, x: m.moveaxis(x, 0, -1), A3),
    lam("moveaxis/tuple", lambda m, x: m.moveaxis(x, (0, 1), (-1, 0)), A4),
    # squeeze / expand_dims
    same("squeeze/all", "squeeze", A4),
    same("squeeze/int", "squeeze", A4, static={"axis": -1}),
    same("squeeze/tuple", "squeeze", A4, static={"axis": (1, 3)}),
    same("squeeze/0d", "squeeze", A0),
    same("squeeze/to_0d", "squeeze", rand(1, 1, dtype=i64)),
    lam("expand_dims/int", lambda m, x: m.expand_dims(x, 1), A2),
    lam("expand_dims/neg", lambda m, x: m.expand_dims(x, -1), B2),
    lam("expand_dims/tuple", lambda m, x: m.expand_dims(x, (0, 3, -1)), A2),
    lam("expand_dims/0d", lambda m, x: m.expand_dims(x, 0), A0),
    # concatenate and friends
    lam("concatenate/axis0", lambda m, x, y: m.concatenate([x, y]), A2, rand(2, 4)),
    lam("concatenate/neg_axis", lambda m, x, y, z: m.concatenate((x, y, z), axis=-1), A2, rand(3, 1), rand(3, 2)),
    lam("concatenate/none", lambda m, x, y: m.concatenate([x, y], axis=None), A2, A3),
    lam("concatenate/promote", lambda m, x, y, z: m.concatenate([x, y, z]), I32[0], rand(2, dtype=f32), B2[0]),
    lam("concatenate/int32_f32", lambda m, x, y: m.concatenate([x, y]), I32[0], rand(2, dtype=f32)),
    lam("concatenate/empty", lambda m, x, y: m.concatenate([x, y]), E2, rand(2, 3)),
    lam("concatenate/dtype", lambda m, x, y: m.concatenate([x, y], dtype=np.float32), I2, A2),
    lam("concatenate/single", lambda m, x: m.concatenate([x], axis=1), I2),
    lam("stack/axis0", lambda m, x, y: m.stack([x, y]), A2, rand(3, 4)),
    lam("stack/neg_axis", lambda m, x, y, z: m.stack([x, y, z], axis=-1), A1, rand(5), rand(5, dtype=i64)),
    lam("stack/0d", lambda m, x, y: m.stack([x, y]), A0, rand(dtype=f32)),
    lam("stack/bool", lambda m, x, y: m.stack([x, y], axis=1), B2, B2),
    lam("stack/empty", lambda m, x, y: m.stack([x, y], axis=2), E2, E2),
    lam("vstack/1d", lambda m, x, y: m.vstack([x, y]), A1, rand(5)),
    lam("vstack/mixed", lambda m, x, y, z: m.vstack([x, y, z]), A2, rand(4, dtype=f32), rand(2, 4)),
    lam("vstack/0d", lambda m, x, y: m.vstack([x, y]), A0, rand()),
    lam("hstack/1d", lambda m, x, y: m.hstack([x, y]), A1, rand(2, dtype=i64)),
    lam("hstack/2d", lambda m, x, y: m.hstack((x, y)), A2, rand(3, 2)),
    lam("hstack/0d", lambda m, x, y: m.hstack([x, y]), A0, rand(3)),
    lam("dstack/1d", lambda m, x, y: m.dstack([x, y]), A1, rand(5)),
    lam("dstack/2d", lambda m, x, y: m.dstack([x, y]), A2, I2),
    lam("dstack/3d", lambda m, x, y: m.dstack([x, y]), A3, rand(2, 3, 1)),
    lam("column_stack/1d", lambda m, x, y: m.column_stack([x, y]), A1, rand(5, dtype=f32)),
    lam("column_stack/mixed", lambda m, x, y: m.column_stack([x, y]), rand(3), A2),
    lam("column_stack/0d", lambda m, x, y: m.column_stack([x, y]), A0, rand()),
    lam("append/flat", lambda m, x, y: m.append(x, y), A2, rand(3, dtype=i64)),
    lam("append/axis", lambda m, x, y: m.append(x, y, axis=1), A2, rand(3, 2)),
    lam("append/0d", lambda m, x, y: m.append(x, y), A0, rand()),
    # split
    lam("split/sections", lambda m, x: m.split(x, 3, axis=0), rand(6, 2)),
    lam("split/indices", lambda m, x: m.split(x, [1, 3], axis=-1), A2),
    lam("split/empty", lambda m, x: m.split(x, 2), E0),
    lam("split/bool", lambda m, x: m.split(x, 2, axis=1), B2),
    lam("array_split/uneven", lambda m, x: m.array_split(x, 3), rand(7)),
    lam("array_split/more_than_n", lambda m, x: m.array_split(x, 4, axis=1), rand(2, 3, dtype=i64)),
    lam("array_split/odd_indices", lambda m, x: m.array_split(x, [-1, 2, 10]), A1),
    lam("array_split/ndarray_indices", lambda m, x: m.array_split(x, np.array([2]), axis=-1), F2),
    # tile / repeat
    lam("tile/int", lambda m, x: m.tile(x, 3), A1),
    lam("tile/tuple", lambda m, x: m.tile(x, (2, 1, 3)), A2),
    lam("tile/short_reps", lambda m, x: m.tile(x, 2), A3),
    lam("tile/0d", lambda m, x: m.tile(x, (2, 2)), A0),
    lam("tile/zero", lambda m, x: m.tile(x, (0, 2)), I2),
    lam("tile/bool", lambda m, x: m.tile(x, (1, 2)), B2),
    lam("repeat/flat", lambda m, x: m.repeat(x, 2), A2),
    lam("repeat/axis", lambda m, x: m.repeat(x, 3, axis=-1), I2),
    lam("repeat/per_element", lambda m, x: m.repeat(x, [1, 0, 2], axis=0), A2),
    lam("repeat/per_element_flat", lambda m, x: m.repeat(x, np.array([2, 0, 1, 3, 0])), A1),
    lam("repeat/zero", lambda m, x: m.repeat(x, 0, axis=1), F2),
    lam("repeat/0d", lambda m, x: m.repeat(x, 4), A0),
    lam("repeat/empty", lambda m, x: m.repeat(x, 2, axis=1), E2),
    lam("repeat/bool_one_count", lambda m, x: m.repeat(x, [2], axis=0), B2),
    # broadcasting
    lam("broadcast_to/vector", lambda m, x: m.broadcast_to(x, (3, 5)), A1),
    lam("broadcast_to/0d", lambda m, x: m.broadcast_to(x, (2, 3)), A0),
    lam("broadcast_to/int_shape", lambda m, x: m.broadcast_to(x, 4), rand(1, dtype=i64)),
    lam("broadcast_to/ones", lambda m, x: m.broadcast_to(x, (2, 2, 1, 3, 4)), A4),
    lam("broadcast_to/empty", lambda m, x: m.broadcast_to(x, (0, 5)), A1),
    lam("broadcast_arrays/three", lambda m, x, y, z: m.broadcast_arrays(x, y, z), A1, rand(3, 1), A0),
    lam("broadcast_arrays/dtypes", lambda m, x, y: m.broadcast_arrays(x, y), B2, rand(4, dtype=f32)),
    lam("broadcast_arrays/one", lambda m, x: m.broadcast_arrays(x), I2),
    # flips / roll / rot90
    same("flip/all", "flip", A3),
    same("flip/int", "flip", A3, static={"axis": -2}),
    same("flip/tuple", "flip", I2, static={"axis": (0, 1)}),
    same("flip/0d", "flip", A0),
    same("flip/empty", "flip", E2, static={"axis": 0}),
    same("fliplr/2d", "fliplr", A3),
    same("fliplr/bool", "fliplr", B2),
    same("flipud/1d", "flipud", A1),
    same("flipud/f32", "flipud", F2),
    lam("roll/flat", lambda m, x: m.roll(x, 5), A2),
    lam("roll/axis", lambda m, x: m.roll(x, -1, axis=1), A3),
    lam("roll/big_shift", lambda m, x: m.roll(x, 13, axis=-1), I2),
    lam("roll/tuple", lambda m, x: m.roll(x, (1, -2), axis=(0, 2)), A3),
    lam("roll/repeated_axis", lambda m, x: m.roll(x, (1, 2), axis=(1, 1)), A3),
    lam("roll/one_shift_many_axes", lambda m, x: m.roll(x, 2, axis=(0, 1)), B2),
    lam("roll/0d", lambda m, x: m.roll(x, 3), A0),
    lam("roll/empty", lambda m, x: m.roll(x, 1, axis=0), E2),
    lam("roll/traced_shift", lambda m, x, s: m.roll(x, s, axis=1), A2, np.int64(-7)),
    lam("roll/traced_shift_flat", lambda m, x, s: m.roll(x, s), A2, np.int64(5)),
    lam("roll/traced_shift_int32", lambda m, x, s: m.roll(x, s, axis=0), A1, np.int32(2)),
    lam("rot90/k1", lambda m, x: m.rot90(x), A2),
    lam("rot90/k2", lambda m, x: m.rot90(x, 2), A2),
    lam("rot90/k3_axes", lambda m, x: m.rot90(x, 3, axes=(2, 0)), A3),
    lam("rot90/neg_k", lambda m, x: m.rot90(x, -1, axes=(-1, -2)), I2),
    lam("rot90/k0", lambda m, x: m.rot90(x, 4), B2),
    # atleast_*d
    lam("atleast_1d/0d", lambda m, x: m.atleast_1d(x), A0),
    lam("atleast_1d/2d", lambda m, x: m.atleast_1d(x), A2),
    lam("atleast_1d/many", lambda m, x, y, z: m.atleast_1d(x, y, z), A0, A1, B2),
    lam("atleast_2d/0d", lambda m, x: m.atleast_2d(x), A0),
    lam("atleast_2d/1d", lambda m, x: m.atleast_2d(x), I2[0]),
    lam("atleast_2d/many", lambda m, x, y, z: m.atleast_2d(x, y, z), A0, A1, A3),
    lam("atleast_3d/0d", lambda m, x: m.atleast_3d(x), A0),
    lam("atleast_3d/many", lambda m, x, y, z, w: m.atleast_3d(x, y, z, w), A0, A1, F2, A4),
    # diagonal / trace
    lam("diagonal/2d", lambda m, x: m.diagonal(x), A2),
    lam("diagonal/offset", lambda m, x: m.diagonal(x, 1), A2),
    lam("diagonal/neg_offset", lambda m, x: m.diagonal(x, -2), A2),
    lam("diagonal/offset_out", lambda m, x: m.diagonal(x, 5), A2),
    lam("diagonal/neg_offset_out", lambda m, x: m.diagonal(x, -7), I2),
    lam("diagonal/axes", lambda m, x: m.diagonal(x, 1, 2, 0), A3),
    lam("diagonal/neg_axes", lambda m, x: m.diagonal(x, -1, -1, -3), A3),
    lam("diagonal/4d", lambda m, x: m.diagonal(x, 0, 1, 3), rand(2, 3, 4, 3)),
    lam("diagonal/empty", lambda m, x: m.diagonal(x), E2),
    lam("diagonal/bool", lambda m, x: m.diagonal(x, 1), B2),
    lam("trace/2d", lambda m, x: m.trace(x), A2),
    lam("trace/offset", lambda m, x: m.trace(x, -1), A2),
    lam("trace/3d_axes", lambda m, x: m.trace(x, 1, axis1=-1, axis2=1), A3),
    lam("trace/int32", lambda m, x: m.trace(x), I32),
    lam("trace/bool", lambda m, x: m.trace(x), B2),
    lam("trace/f32", lambda m, x: m.trace(x), F2),
    lam("trace/dtype", lambda m, x: m.trace(x, dtype=np.float32), I2),
    lam("trace/dtype_int", lambda m, x: m.trace(x, dtype=np.int64), A2 * 3),
    lam("trace/empty", lambda m, x: m.trace(x), E2),
    # pad
    lam("pad/int", lambda m, x: m.pad(x, 2), A1),
    lam("pad/pair", lambda m, x: m.pad(x, (1, 2)), A2),
    lam("pad/per_axis", lambda m, x: m.pad(x, ((0, 1), (2, 0), (1, 1))), A3),
    lam("pad/single_pair_list", lambda m, x: m.pad(x, [(1, 3)]), I2),
    lam("pad/one_elem", lambda m, x: m.pad(x, (2,)), A2),
    lam("pad/constant", lambda m, x: m.pad(x, 1, constant_values=-3.5), F2),
    lam("pad/constant_cast", lambda m, x: m.pad(x, 1, constant_values=1.7), I2),
    lam("pad/bool", lambda m, x: m.pad(x, ((1, 0), (0, 2)), constant_values=True), B2),
    lam("pad/per_axis_values", lambda m, x: m.pad(x, 1, constant_values=((1, 2), (3, 4))), A2),
    lam("pad/zero_width", lambda m, x: m.pad(x, 0), A2),
    lam("pad/empty", lambda m, x: m.pad(x, 1), E2),
    lam("pad/0d", lambda m, x: m.pad(x, 2), A0),
    lam("pad/dict", lambda m, x: m.pad(x, {-1: (1, 2)}), A2),
    lam("pad/traced_value", lambda m, x, v: m.pad(x, 1, constant_values=v), A2, np.float64(7.0)),
    lam("pad/mode_explicit", lambda m, x: m.pad(x, 1, mode="constant"), A1),
    # copy
    same("copy/2d", "copy", A2),
    same("copy/0d", "copy", A0),
    same("copy/bool", "copy", B2),
]
