"""Op-table rows with unsigned operands (uint32, and uint64 where NumPy widens to it):
wrap-around arithmetic, unsigned comparisons and division, casts both ways, reductions,
bitwise ops and shifts (NumPy's overshift rule), checked eager == make_jaxpr == jit."""
import numpy as np

from funcgrad import lax

from harness import lam, rand, row, same

u32, u64, i32, f32 = np.uint32, np.uint64, np.int32, np.float32
TOP = np.uint32(0xFFFFFFFF)
# Values across the whole range, including the top bit and the extremes.
U = np.array([0, 1, 7, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, TOP, 123456789], u32)
V = np.array([3, 5, 2, 0x80000001, 0x7FFFFFFF, TOP, 2, 1000], u32)  # no zeros (NumPy warns)
U2 = rand(3, 4, dtype=u32, low=0, high=4_000_000_000, seed=31)
V2 = rand(3, 4, dtype=u32, low=1, high=70_000, seed=32)
S = np.array([0, 1, 4, 31, 32, 33, 40, 0xFFFFFFFF], u32)  # shift amounts, overshifts included
I = np.array([0, -1, 5, -2147483648, 2147483647, -7, 3, -100], i32)
SI = np.array([0, 1, 31, 32, -1, 3, 64, 2], i32)
W = np.array([1, 2, 3, 0xFFFFFFFF_FFFFFFFF, 0x80000000_00000000], u64)
NOGRAD = {"no_grad": "integer operands"}

ROWS = [
    same(f"{name}/u32", name, U, V, tags=NOGRAD)
    for name in ("add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum",
                 "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
                 "bitwise_and", "bitwise_or", "bitwise_xor", "true_divide")
] + [
    same(f"{name}/u32", name, U, tags=NOGRAD)
    for name in ("negative", "abs", "sign", "invert", "square", "sqrt", "sin")
] + [
    same("add/u32_2d", "add", U2, V2, tags=NOGRAD),
    same("floor_divide/u32_2d", "floor_divide", U2, V2, tags=NOGRAD),
    lam("add/u32_pyint", lambda m, x: x + 4294967295 if m is np else m.add(x, 4294967295), U, tags=NOGRAD),
    lam("power/u32_pyint", lambda m, x: m.power(x, 3), U, tags=NOGRAD),
    lam("power/u32_u32", lambda m, x: m.power(x, m.asarray([2, 0, 31, 1, 2, 3, 1, 2], np.uint32)), U, tags=NOGRAD),
    same("add/u32_i32_to_i64", "add", U, I, tags=NOGRAD),
    same("multiply/u32_f32_to_f64", "multiply", U, rand(8, dtype=f32), tags=NOGRAD),
    lam("multiply/u32_pyfloat", lambda m, x: m.multiply(x, 0.5), U, tags=NOGRAD),
    same("add/u32_bool", "add", U, np.array([True, False] * 4), tags=NOGRAD),
    same("add/u64", "add", W, W, tags=NOGRAD),
    same("less/u64", "less", W, W[::-1].copy(), tags=NOGRAD),
    same("add/u64_i64_to_f64", "add", W, np.arange(5), tags=NOGRAD),
    # casts: unsigned -> float/signed/wider/narrower and back
    lam("asarray/u32_to_f64", lambda m, x: m.asarray(x, np.float64), U, tags=NOGRAD),
    lam("asarray/u32_to_f32", lambda m, x: m.asarray(x, np.float32), U, tags=NOGRAD),
    lam("asarray/u32_to_i32", lambda m, x: m.asarray(x, np.int32), U, tags=NOGRAD),
    lam("asarray/u32_to_i64", lambda m, x: m.asarray(x, np.int64), U, tags=NOGRAD),
    lam("asarray/u32_to_u64", lambda m, x: m.asarray(x, np.uint64), U, tags=NOGRAD),
    lam("asarray/i32_to_u32", lambda m, x: m.asarray(x, np.uint32), I, tags=NOGRAD),
    lam("asarray/i32_to_u64", lambda m, x: m.asarray(x, np.uint64), I, tags=NOGRAD),
    lam("asarray/u64_to_u32", lambda m, x: m.asarray(x, np.uint32), W, tags=NOGRAD),
    lam("asarray/u64_to_f64", lambda m, x: m.asarray(x, np.float64), W, tags=NOGRAD),
    lam("asarray/f64_to_u32", lambda m, x: m.asarray(x, np.uint32), np.array([0.0, 0.9, 3.7, 4e9, 2147483648.5]),
        tags=NOGRAD),
    lam("asarray/bool_to_u32", lambda m, x: m.asarray(x, np.uint32), np.array([True, False]), tags=NOGRAD),
    lam("where/u32", lambda m, c, x, y: m.where(c, x, y), U > V, U, V, tags=NOGRAD),
    # reductions: sums and products widen to uint64 (NumPy); max/min/sort compare unsigned
    same("sum/u32_to_u64", "sum", U2, tags=NOGRAD),
    same("sum/u32_axis", "sum", U2, static=dict(axis=1), tags=NOGRAD),
    same("prod/u32_to_u64", "prod", V2, static=dict(axis=0), tags=NOGRAD),
    same("cumsum/u32_to_u64", "cumsum", U2, static=dict(axis=1), tags=NOGRAD),
    same("max/u32", "max", U, tags=NOGRAD),
    same("min/u32", "min", U2, static=dict(axis=0), tags=NOGRAD),
    same("argmax/u32", "argmax", U, tags=NOGRAD),
    same("argmin/u32", "argmin", U2, static=dict(axis=1), tags=NOGRAD),
    same("sort/u32", "sort", U, tags=NOGRAD),
    same("argsort/u32", "argsort", U2, static=dict(axis=1), tags=NOGRAD),
    same("mean/u32_to_f64", "mean", U2, tags=NOGRAD),
    same("dot/u32", "dot", U2, V2.T.copy(), tags=NOGRAD),
    # shifts: amounts >= 32 give 0 (left, logical right) or the sign fill (arithmetic)
    same("left_shift/u32", "left_shift", U, S, tags=NOGRAD),
    same("right_shift/u32", "right_shift", U, S, tags=NOGRAD),
    same("left_shift/i32", "left_shift", I, SI, tags=NOGRAD),
    same("right_shift/i32", "right_shift", I, SI, tags=NOGRAD),
    same("right_shift/u32_i32_to_i64", "right_shift", U, SI, tags=NOGRAD),
    lam("left_shift/u32_pyint", lambda m, x: m.left_shift(x, 13), U, tags=NOGRAD),
    lam("right_shift/pyint_u32", lambda m, s: m.right_shift(0xFFFFFFFF, s), S, tags=NOGRAD),
    same("bitwise_left_shift/u64", "bitwise_left_shift", W, np.array([1, 63, 64, 2, 0], u64), tags=NOGRAD),
    # the lax bit primitives directly
    row("lax.shift_right_arithmetic/u32", lax.shift_right_arithmetic,
        lambda x, s: (x.view(i32) >> np.minimum(s, 31).astype(i32)).view(u32), U, S, tags=NOGRAD),
    row("lax.shift_right_logical/i32", lax.shift_right_logical,
        lambda x, s: np.where(s.view(u32) < 32, x.view(u32) >> (s.view(u32) % 32), 0).astype(u32).view(i32), I, SI,
        tags=NOGRAD),
    row("lax.population_count/u32", lax.population_count, lambda x: np.bitwise_count(x).astype(x.dtype), U, tags=NOGRAD),
    row("lax.population_count/i32", lax.population_count, lambda x: np.bitwise_count(x.view(u32)).astype(i32), I,
        tags=NOGRAD),
    row("lax.bitcast_convert_type/u32_f32", lambda x: lax.bitcast_convert_type(x, np.float32),
        lambda x: x.view(np.float32), np.array([0, 0x3F800000, 0x40490FDB, 0x80000000], u32), tags=NOGRAD),
    row("lax.bitcast_convert_type/f64_u64", lambda x: lax.bitcast_convert_type(x, np.uint64),
        lambda x: x.view(u64), rand(2, 3), tags=NOGRAD),
    row("lax.bitcast_convert_type/i64_f64", lambda x: lax.bitcast_convert_type(x, np.float64),
        lambda x: x.view(np.float64), np.array([0, 4607182418800017408, -4616189618054758400]), tags=NOGRAD),
    row("lax.bitcast_convert_type/i32_u32_0d", lambda x: lax.bitcast_convert_type(x, np.uint32),
        lambda x: x.view(u32), np.int32(-5), tags=NOGRAD),
]
