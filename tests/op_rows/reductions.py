"""Op-table rows for funcgrad.numpy reductions, statistics and sorting.

Float inputs are random (distinct values, so no ties at max/min/median/sort and finite
differences are well defined); integer inputs for sort/argsort/argmax are permutations.
"""
import numpy as np

from harness import lam, rand, same

f32, i32, i64 = np.float32, np.int32, np.int64

A0 = rand(seed=1)  # 0-d float64
A1 = rand(7, seed=2)
A2 = rand(3, 4, seed=3)
A3 = rand(2, 3, 4, seed=4)
A4 = rand(2, 3, 2, 3, seed=5)
F2 = rand(3, 4, dtype=f32, seed=6)
F3 = rand(2, 3, 5, dtype=f32, seed=7)
I2 = rand(3, 4, dtype=i64, low=-5, high=5, seed=8)
I32 = rand(2, 5, dtype=i32, low=-5, high=5, seed=9)
B2 = rand(3, 4, dtype=bool, seed=10)
B2[0, 0], B2[1, 1] = True, False  # some of both
P2 = np.random.default_rng(11).permutation(12).reshape(3, 4).astype(i64)  # distinct ints
P32 = np.random.default_rng(12).permutation(10).reshape(2, 5).astype(i32)
E0 = np.zeros((0,), np.float64)
E2 = np.zeros((0, 3), np.float64)
EI = np.zeros((2, 0), i32)
EB = np.zeros((0, 2), bool)
Z2 = np.array([[0.0, 1.5, 0.0, -2.0], [3.0, 0.0, 0.0, 0.0]])
N2 = np.array([[1.0, np.nan, 3.0, -0.5], [np.nan, np.nan, np.nan, np.nan], [2.5, -1.0, 0.25, 4.0]])
N1 = np.array([0.5, np.nan, 2.0, np.nan, -1.0])
W3 = rand(4, seed=13, low=0.5, high=2.0)  # weights along the last axis of A2 / A3

NO_GRAD_INT = {"no_grad": "integer output"}
NO_GRAD_BOOL = {"no_grad": "boolean output"}
NO_GRAD_NAN = {"no_grad": "NaN inputs: finite differences are undefined"}
NO_GRAD_SORT = {"no_grad": "piecewise; rows exercise ties or NaNs"}




ROWS = [
    # --- sum / prod ------------------------------------------------------------------
    same("sum/all", "sum", A3),
    same("sum/0d", "sum", A0),
    same("sum/0d_axis0", "sum", A0, static=dict(axis=0)),
    same("sum/axis_neg", "sum", A3, static=dict(axis=-1)),
    same("sum/axis_tuple", "sum", A4, static=dict(axis=(0, 2))),
    same("sum/axis_tuple_neg_keepdims", "sum", A4, static=dict(axis=(-1, 1), keepdims=True)),
    same("sum/axis_empty_tuple", "sum", A2, static=dict(axis=())),
    same("sum/keepdims_none", "sum", A3, static=dict(keepdims=True)),
    same("sum/float32", "sum", F3, static=dict(axis=1)),
    same("sum/int32_to_int64", "sum", I32, static=dict(axis=0)),
    same("sum/int64", "sum", I2),
    same("sum/bool_to_int64", "sum", B2, static=dict(axis=1)),
    same("sum/dtype_f64_from_f32", "sum", F2, static=dict(dtype=np.float64)),
    same("sum/dtype_f32_from_int", "sum", I2, static=dict(axis=0, dtype=f32), tags=NO_GRAD_INT),
    same("sum/empty", "sum", E0),
    same("sum/empty_axis0", "sum", E2, static=dict(axis=0)),
    same("sum/empty_axis1", "sum", E2, static=dict(axis=1)),
    same("sum/empty_int32", "sum", EI, static=dict(axis=1)),
    lam("sum/list", lambda m: m.sum([[1.0, 2.0], [3.0, 4.5]], axis=0)),
    same("prod/all", "prod", A2),
    same("prod/axis_neg_keepdims", "prod", A3, static=dict(axis=-2, keepdims=True)),
    same("prod/axis_tuple", "prod", A4, static=dict(axis=(1, 3))),
    same("prod/0d", "prod", A0),
    same("prod/float32", "prod", F2, static=dict(axis=0)),
    same("prod/int32", "prod", I32, static=dict(axis=1)),
    same("prod/bool", "prod", B2, static=dict(axis=0)),
    same("prod/empty", "prod", E0),
    same("prod/empty_axis0", "prod", E2, static=dict(axis=0)),
    same("nansum/nan", "nansum", N2, static=dict(axis=1), tags=NO_GRAD_NAN),
    same("nansum/all_nan_free", "nansum", A3, static=dict(axis=(0, 2), keepdims=True)),
    same("nansum/float32", "nansum", N1.astype(f32), tags=NO_GRAD_NAN),
    same("nansum/int32", "nansum", I32),
    # --- mean / var / std / average ------------------------------------------------------
    same("mean/all", "mean", A3),
    same("mean/0d", "mean", A0),
    same("mean/axis_neg", "mean", A3, static=dict(axis=-1)),
    same("mean/axis_tuple_keepdims", "mean", A4, static=dict(axis=(0, 3), keepdims=True)),
    same("mean/float32", "mean", F3, static=dict(axis=(0, 2))),
    same("mean/int64_to_f64", "mean", I2, static=dict(axis=1)),
    same("mean/int32_to_f64", "mean", I32),
    same("mean/bool_to_f64", "mean", B2, static=dict(axis=0)),
    same("mean/dtype_f32", "mean", A2, static=dict(axis=0, dtype=f32)),
    same("mean/dtype_f64_from_f32", "mean", F2, static=dict(dtype=np.float64)),
    same("mean/empty_nan", "mean", E2, static=dict(axis=0), tags={"no_grad": "empty input: the value is NaN, so there is no derivative to compare"}),
    same("var/all", "var", A3),
    same("var/axis", "var", A3, static=dict(axis=1)),
    same("var/ddof1", "var", A2, static=dict(axis=-1, ddof=1)),
    same("var/axis_tuple_keepdims", "var", A4, static=dict(axis=(1, 2), keepdims=True)),
    same("var/float32", "var", F3, static=dict(axis=2)),
    same("var/int64", "var", I2, static=dict(axis=0)),
    same("var/int32_ddof", "var", I32, static=dict(ddof=2)),
    same("var/bool", "var", B2),
    same("var/0d", "var", A0),
    same("var/dtype_f32", "var", A2, static=dict(axis=1, dtype=f32)),
    same("var/ddof_too_big", "var", A1, static=dict(ddof=7), tags={"no_grad": "division by zero: inf/nan"}),
    same("std/all", "std", A3),
    same("std/axis_neg_ddof", "std", A3, static=dict(axis=-2, ddof=1)),
    same("std/keepdims", "std", A2, static=dict(axis=0, keepdims=True)),
    same("std/float32", "std", F2, static=dict(axis=1)),
    same("std/int32", "std", I32, static=dict(axis=1)),
    same("average/plain", "average", A3, static=dict(axis=1)),
    same("average/none_returned", "average", A2, static=dict(returned=True)),
    same("average/keepdims_returned", "average", I2, static=dict(axis=-1, keepdims=True, returned=True)),
    lam("average/weights_full", lambda m, x, w: m.average(x, weights=w), A2, rand(3, 4, seed=14, low=0.5, high=2.0)),
    lam("average/weights_axis", lambda m, x, w: m.average(x, axis=1, weights=w, returned=True), A2, W3),
    lam("average/weights_axis_tuple", lambda m, x, w: m.average(x, axis=(2, 0), weights=w), A3, rand(4, 2, seed=15, low=0.5, high=2.0)),
    lam("average/weights_keepdims", lambda m, x, w: m.average(x, axis=-1, weights=w, keepdims=True, returned=True), A3, W3),
    lam("average/int_weights", lambda m, x, w: m.average(x, axis=0, weights=w), I2, P2 + 1, tags=NO_GRAD_INT),
    lam("average/float32", lambda m, x, w: m.average(x, axis=1, weights=w), F2, W3.astype(f32)),
    # --- max / min / ptp / nanmax / nanmin ----------------------------------------------
    same("max/all", "max", A3),
    same("max/0d", "max", A0),
    same("max/axis_neg", "max", A3, static=dict(axis=-1)),
    same("max/axis_tuple_keepdims", "max", A4, static=dict(axis=(0, 2), keepdims=True)),
    same("max/float32", "max", F2, static=dict(axis=0)),
    same("max/int32", "max", P32, static=dict(axis=1)),
    same("max/bool", "max", B2, static=dict(axis=1)),
    same("max/nan_propagates", "max", N2, static=dict(axis=1), tags=NO_GRAD_NAN),
    same("min/all", "min", A3),
    same("min/axis", "min", A3, static=dict(axis=1, keepdims=True)),
    same("min/int64", "min", P2, static=dict(axis=0)),
    same("min/nan_propagates", "min", N1, tags=NO_GRAD_NAN),
    same("amax/axis", "amax", A2, static=dict(axis=0)),
    same("amin/axis", "amin", A2, static=dict(axis=-1)),
    same("ptp/all", "ptp", A3),
    same("ptp/axis_keepdims", "ptp", A3, static=dict(axis=(0, 1), keepdims=True)),
    same("ptp/int32", "ptp", P32, static=dict(axis=0)),
    same("ptp/0d", "ptp", A0),
    same("nanmax/nan", "nanmax", N2, static=dict(axis=1), tags=NO_GRAD_NAN),
    same("nanmax/all", "nanmax", N2, tags=NO_GRAD_NAN),
    same("nanmax/no_nan", "nanmax", A3, static=dict(axis=-1, keepdims=True)),
    same("nanmax/int", "nanmax", P2, static=dict(axis=0)),
    same("nanmin/nan", "nanmin", N2, static=dict(axis=0), tags=NO_GRAD_NAN),
    same("nanmin/float32", "nanmin", N2.astype(f32), static=dict(axis=1, keepdims=True), tags=NO_GRAD_NAN),
    same("nanmin/no_nan", "nanmin", A2),
    # --- argmax / argmin -----------------------------------------------------------------
    same("argmax/flat", "argmax", A3, tags=NO_GRAD_INT),
    same("argmax/axis", "argmax", A3, static=dict(axis=1), tags=NO_GRAD_INT),
    same("argmax/axis_neg_keepdims", "argmax", A3, static=dict(axis=-1, keepdims=True), tags=NO_GRAD_INT),
    same("argmax/flat_keepdims", "argmax", A2, static=dict(keepdims=True), tags=NO_GRAD_INT),
    same("argmax/0d", "argmax", A0, tags=NO_GRAD_INT),
    same("argmax/0d_axis0", "argmax", A0, static=dict(axis=0), tags=NO_GRAD_INT),
    same("argmax/int32", "argmax", P32, static=dict(axis=1), tags=NO_GRAD_INT),
    same("argmax/bool", "argmax", B2, static=dict(axis=0), tags=NO_GRAD_INT),
    same("argmax/float32", "argmax", F3, static=dict(axis=2), tags=NO_GRAD_INT),
    same("argmax/first_nan", "argmax", N1, tags=NO_GRAD_INT),
    same("argmin/flat", "argmin", A3, tags=NO_GRAD_INT),
    same("argmin/axis_neg", "argmin", A2, static=dict(axis=-2), tags=NO_GRAD_INT),
    same("argmin/int64_keepdims", "argmin", P2, static=dict(axis=1, keepdims=True), tags=NO_GRAD_INT),
    same("argmin/first_nan", "argmin", N2, static=dict(axis=1), tags=NO_GRAD_INT),
    # --- all / any / count_nonzero --------------------------------------------------------
    same("all/bool", "all", B2, tags=NO_GRAD_BOOL),
    same("all/axis", "all", B2, static=dict(axis=1), tags=NO_GRAD_BOOL),
    same("all/float_keepdims", "all", Z2, static=dict(axis=0, keepdims=True), tags=NO_GRAD_BOOL),
    same("all/int_axis_tuple", "all", I2.reshape(3, 2, 2), static=dict(axis=(0, -1)), tags=NO_GRAD_BOOL),
    same("all/0d", "all", A0, tags=NO_GRAD_BOOL),
    same("all/empty", "all", E0, tags=NO_GRAD_BOOL),
    same("all/empty_axis0", "all", EB, static=dict(axis=0), tags=NO_GRAD_BOOL),
    same("all/empty_axis1", "all", EB, static=dict(axis=1), tags=NO_GRAD_BOOL),
    same("any/bool", "any", B2, tags=NO_GRAD_BOOL),
    same("any/float_axis_neg", "any", Z2, static=dict(axis=-1), tags=NO_GRAD_BOOL),
    same("any/nan_is_true", "any", np.array([0.0, np.nan, 0.0]), tags=NO_GRAD_BOOL),
    same("any/int32_keepdims", "any", I32, static=dict(axis=0, keepdims=True), tags=NO_GRAD_BOOL),
    same("any/empty", "any", E2, tags=NO_GRAD_BOOL),
    same("any/empty_axis0_int", "any", EI, static=dict(axis=1), tags=NO_GRAD_BOOL),
    same("count_nonzero/all", "count_nonzero", Z2, tags=NO_GRAD_INT),
    same("count_nonzero/axis", "count_nonzero", Z2, static=dict(axis=1), tags=NO_GRAD_INT),
    same("count_nonzero/axis_tuple_keepdims", "count_nonzero", I2.reshape(3, 2, 2), static=dict(axis=(0, 2), keepdims=True), tags=NO_GRAD_INT),
    same("count_nonzero/bool", "count_nonzero", B2, static=dict(axis=0), tags=NO_GRAD_INT),
    same("count_nonzero/empty", "count_nonzero", E2, tags=NO_GRAD_INT),
    # --- cumsum / cumprod -------------------------------------------------------------------
    same("cumsum/flat", "cumsum", A3),
    same("cumsum/axis", "cumsum", A3, static=dict(axis=1)),
    same("cumsum/axis_neg", "cumsum", A3, static=dict(axis=-1)),
    same("cumsum/0d", "cumsum", A0),
    same("cumsum/float32", "cumsum", F2, static=dict(axis=0)),
    same("cumsum/int32_to_int64", "cumsum", I32, static=dict(axis=1)),
    same("cumsum/bool_to_int64", "cumsum", B2, static=dict(axis=0)),
    same("cumsum/dtype_f32", "cumsum", A2, static=dict(axis=1, dtype=f32)),
    same("cumsum/empty", "cumsum", E2, static=dict(axis=0)),
    same("cumsum/empty_flat", "cumsum", E2),
    same("cumprod/flat", "cumprod", A2),
    same("cumprod/axis_neg", "cumprod", A3, static=dict(axis=-2)),
    same("cumprod/int32", "cumprod", I32, static=dict(axis=1)),
    same("cumprod/bool", "cumprod", B2, static=dict(axis=1)),
    same("cumprod/empty", "cumprod", E0),
    # --- nanmean ------------------------------------------------------------------------------
    same("nanmean/nan", "nanmean", N2, static=dict(axis=1), tags=NO_GRAD_NAN),
    same("nanmean/nan_axis0_keepdims", "nanmean", N2, static=dict(axis=0, keepdims=True), tags=NO_GRAD_NAN),
    same("nanmean/all", "nanmean", N1, tags=NO_GRAD_NAN),
    same("nanmean/float32", "nanmean", N2.astype(f32), static=dict(axis=1), tags=NO_GRAD_NAN),
    same("nanmean/no_nan", "nanmean", A3, static=dict(axis=(0, 2))),
    same("nanmean/int", "nanmean", I2, static=dict(axis=0)),
    # --- median / quantile / percentile ----------------------------------------------------
    same("median/all_odd", "median", A1),
    same("median/all_even", "median", A2),
    same("median/axis", "median", A3, static=dict(axis=1)),
    same("median/axis_neg_even", "median", A3, static=dict(axis=-1)),
    same("median/axis_tuple_keepdims", "median", A4, static=dict(axis=(0, 2), keepdims=True)),
    same("median/keepdims_none", "median", A2, static=dict(keepdims=True)),
    same("median/0d", "median", A0),
    same("median/float32", "median", F3, static=dict(axis=2)),
    same("median/int_to_f64", "median", P2, static=dict(axis=1)),
    same("median/int32_even", "median", P32),
    same("median/nan", "median", N2, static=dict(axis=1), tags=NO_GRAD_NAN),
    same("median/empty", "median", E2, static=dict(axis=0), tags={"no_grad": "empty input: the value is NaN, so there is no derivative to compare"}),
    same("quantile/scalar", "quantile", A3, static=dict(q=0.3, axis=1)),
    same("quantile/vector_keepdims", "quantile", A3, static=dict(q=np.array([0.0, 0.25, 0.5, 0.9, 1.0]), axis=(0, 2), keepdims=True)),
    same("quantile/flat", "quantile", A2, static=dict(q=0.75)),
    same("quantile/float32_weak_q", "quantile", F3, static=dict(q=0.4, axis=-1)),
    same("quantile/float32_array_q", "quantile", F3, static=dict(q=np.array([0.4, 0.6]), axis=-1)),
    same("quantile/int", "quantile", P2, static=dict(q=np.array([0.1, 0.5]), axis=0)),
    same("quantile/nan", "quantile", N2, static=dict(q=0.5, axis=1), tags=NO_GRAD_NAN),
    same("percentile/scalar", "percentile", A3, static=dict(q=35.0, axis=0)),
    same("percentile/vector", "percentile", A2, static=dict(q=[10.0, 50.0, 100.0], axis=-1)),
    same("percentile/int32", "percentile", P32, static=dict(q=60.0)),
    # --- sort / argsort -------------------------------------------------------------------
    same("sort/last", "sort", A3),
    same("sort/axis0", "sort", A3, static=dict(axis=0)),
    same("sort/axis_neg2", "sort", A3, static=dict(axis=-2)),
    same("sort/flat", "sort", A2, static=dict(axis=None)),
    same("sort/0d_flat", "sort", A0, static=dict(axis=None)),
    same("sort/float32", "sort", F2, static=dict(axis=1)),
    same("sort/int32", "sort", P32),
    same("sort/int64_ties", "sort", I2, static=dict(axis=0, kind="stable")),
    same("sort/bool", "sort", B2, static=dict(axis=1)),
    same("sort/nan_last", "sort", N2, static=dict(axis=1), tags=NO_GRAD_SORT),
    same("sort/empty", "sort", E2, static=dict(axis=0)),
    same("argsort/last", "argsort", A3, tags=NO_GRAD_INT),
    same("argsort/axis0", "argsort", A3, static=dict(axis=0), tags=NO_GRAD_INT),
    same("argsort/flat", "argsort", A2, static=dict(axis=None), tags=NO_GRAD_INT),
    same("argsort/0d", "argsort", A0, tags=NO_GRAD_INT),
    same("argsort/float32", "argsort", F3, static=dict(axis=1), tags=NO_GRAD_INT),
    same("argsort/int32", "argsort", P32, static=dict(axis=-1), tags=NO_GRAD_INT),
    # ties: stable order is what NumPy's kind="stable" guarantees (funcgrad is always stable)
    same("argsort/int64_ties_stable", "argsort", I2, static=dict(axis=1, kind="stable"), tags=NO_GRAD_INT),
    same("argsort/bool_stable", "argsort", B2, static=dict(axis=None, stable=True), tags=NO_GRAD_INT),
    same("argsort/nan_last", "argsort", N1, tags=NO_GRAD_INT),
    # --- methods on traced values forward to these functions -----------------------------
    lam("sum/methods", lambda m, x: (x.sum(axis=0), x.mean(1), x.max(), x.min(axis=1, keepdims=True), x.var(ddof=1), x.std(), x.prod(0), x.cumsum(1)), A2),
    lam("argmax/methods", lambda m, x: (x.argmax(axis=1), x.argmin(), x.argsort(axis=0)), A2, tags=NO_GRAD_INT),
    lam("all/methods", lambda m, x: (x.all(axis=0), x.any()), B2, tags=NO_GRAD_BOOL),
]
