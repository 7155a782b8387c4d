"""Op-table rows for funcgrad.numpy elementwise functions.

Inputs stay inside each function's domain and away from its kinks and jumps (later
columns differentiate these rows with finite differences). Rows at special values
(0, -0.0, inf, nan) are tagged ``no_grad``.
"""
import numpy as np

import funcgrad.numpy as fnp

from harness import rand, randpos, row

f32, i32, i64 = np.float32, np.int32, np.int64
SPECIAL = {"no_grad": "special values (0, inf, nan): checks NumPy's exact handling"}
NONDIFF = {"no_grad": "piecewise constant in its float argument"}


def same(name, fn_name, *args, **kw):
    """A row calling ``fnp.<fn_name>`` and ``np.<fn_name>`` with the same arguments."""
    return row(name, getattr(fnp, fn_name), getattr(np, fn_name), *args, **kw)


def lam(name, fn, *args, **kw):
    """A row whose body is written once against a module (fnp or np)."""
    return row(name, lambda *a: fn(fnp, *a), lambda *a: fn(np, *a), *args, **kw)


def unit(*shape, dtype=np.float64):
    """Values in (-0.9, 0.9): inside the domain of arcsin, arccos, arctanh."""
    return rand(*shape, dtype=dtype, low=-0.9, high=0.9)


def above1(*shape, dtype=np.float64):
    return rand(*shape, dtype=dtype, low=1.1, high=3.0)


def away0(*shape, dtype=np.float64):
    """Values with |x| in [0.2, 2]: away from the kink of abs, sign, copysign...; the
    sign pattern is fixed so both signs occur."""
    mag = rand(*shape, dtype=dtype, low=0.2, high=2.0)
    signs = np.where(np.arange(mag.size).reshape(mag.shape) % 2 == 0, 1, -1).astype(dtype)
    return np.asarray(mag * signs)


def nonint(*shape, dtype=np.float64):
    """Values at least 0.1 from integers (and halves): floor, ceil, rint, ... jump there."""
    base = rand(*shape, dtype=np.int64, low=-3, high=3)
    frac = rand(*shape, low=0.1, high=0.4) * np.where(rand(*shape, dtype=bool), 1, -1) if shape else rand(low=0.1, high=0.4)
    return np.asarray(base + frac, dtype=dtype)


# --- unary floating-point functions ------------------------------------------------------
# (name, sampler) -> rows f64 2-d, f32, 0-d, empty, int input, Python scalar.
UNARY_FLOAT = [
    ("exp", rand), ("exp2", rand), ("expm1", rand), ("log", randpos), ("log2", randpos),
    ("log10", randpos), ("log1p", randpos), ("sqrt", randpos), ("cbrt", away0),
    ("sin", rand), ("cos", rand), ("tan", unit), ("arcsin", unit), ("arccos", unit),
    ("arctan", rand), ("sinh", rand), ("cosh", rand), ("tanh", rand), ("arcsinh", rand),
    ("arccosh", above1), ("arctanh", unit), ("deg2rad", rand), ("rad2deg", rand),
    ("degrees", rand), ("radians", rand), ("sinc", away0), ("fabs", away0), ("rint", nonint),
]
INT_OK = {  # an integer sample inside the function's domain, where it has one
    "exp": (-3, 3), "exp2": (-3, 3), "expm1": (-3, 3), "log": (1, 9), "log2": (1, 9),
    "log10": (1, 9), "log1p": (0, 9), "sqrt": (0, 9), "cbrt": (-9, 9), "sin": (-5, 5),
    "cos": (-5, 5), "tan": (-1, 1), "arcsin": (-1, 1), "arccos": (-1, 1), "arctan": (-5, 5),
    "sinh": (-3, 3), "cosh": (-3, 3), "tanh": (-3, 3), "arcsinh": (-5, 5), "arccosh": (1, 9),
    "deg2rad": (-90, 90), "rad2deg": (-3, 3), "degrees": (-3, 3), "radians": (-90, 90),
    "sinc": (-3, 3), "fabs": (-5, 5), "rint": (-5, 5),
}
PY_SCALAR = {"log": 2.5, "log2": 2.5, "log10": 2.5, "log1p": 0.5, "sqrt": 2.0, "arccosh": 1.5,
             "tan": 0.3, "arcsin": 0.3, "arccos": 0.3, "arctanh": 0.3, "rint": 2.3, "sinc": 0.3}

ROWS = []
for _name, _sample in UNARY_FLOAT:
    _extra = {"tags": NONDIFF} if _name == "rint" else {}
    ROWS += [
        same(f"{_name}/f64", _name, _sample(3, 4), **_extra),
        same(f"{_name}/f32", _name, _sample(5, dtype=f32), **_extra),
        same(f"{_name}/0d", _name, _sample(), **_extra),
        same(f"{_name}/empty", _name, np.zeros((0, 3))),
        lam(f"{_name}/pyscalar", lambda m, _n=_name, _v=PY_SCALAR.get(_name, 0.7): getattr(m, _n)(_v)),
    ]
    if _name in INT_OK:
        _lo, _hi = INT_OK[_name]
        ROWS.append(same(f"{_name}/i64", _name, rand(7, dtype=i64, low=_lo, high=_hi)))
        ROWS.append(same(f"{_name}/i32", _name, rand(2, 3, dtype=i32, low=_lo, high=_hi)))

ROWS += [
    same("sqrt/special", "sqrt", np.array([0.0, -0.0, np.inf, 4.0]), tags=SPECIAL),
    same("log/special", "log", np.array([0.0, np.inf, 1.0, np.nan]), tags=SPECIAL),
    same("exp2/special", "exp2", np.array([-np.inf, np.inf, 3.0, -1.0, 0.0]), tags=SPECIAL),
    same("log2/exact", "log2", np.array([1.0, 2.0, 8.0, 0.5, 1024.0])),
    same("log10/exact", "log10", np.array([1.0, 10.0, 1000.0, 0.01])),
    same("sinc/zero", "sinc", np.array([0.0, 1.0, -2.0, 0.5]), tags=SPECIAL),
    same("sinc/bool", "sinc", rand(4, dtype=bool)),
    same("fabs/special", "fabs", np.array([-0.0, -np.inf, np.nan, -3.0]), tags=SPECIAL),
    same("rint/halves", "rint", np.array([0.5, 1.5, 2.5, -0.5, -2.5]), tags=SPECIAL),
]

# --- binary floating-point functions -------------------------------------------------
BINARY_FLOAT = [
    ("divide", rand, away0), ("true_divide", rand, away0), ("arctan2", rand, away0),
    # logaddexp: positive inputs keep the result away from 0, where cancellation would
    # amplify NumPy's own last-ulp differences (np.exp vs libm exp) beyond 1e-14.
    ("hypot", rand, rand), ("logaddexp", randpos, randpos), ("logaddexp2", randpos, randpos),
    ("copysign", rand, away0), ("float_power", randpos, rand),
]
for _name, _s1, _s2 in BINARY_FLOAT:
    ROWS += [
        same(f"{_name}/f64", _name, _s1(3, 4), _s2(3, 4)),
        same(f"{_name}/broadcast", _name, _s1(3, 1), _s2(4)),
        same(f"{_name}/f32", _name, _s1(5, dtype=f32), _s2(5, dtype=f32)),
        same(f"{_name}/0d", _name, _s1(), _s2()),
        same(f"{_name}/0d_bcast", _name, _s1(), _s2(2, 3)),
        same(f"{_name}/empty", _name, _s1(0, 3), _s2(3)),
        lam(f"{_name}/f32_pyscalar", lambda m, x, _n=_name: getattr(m, _n)(x, 1.5), _s1(4, dtype=f32)),
        lam(f"{_name}/pyscalar_f64", lambda m, y, _n=_name: getattr(m, _n)(1.5, y), _s2(4)),
        same(f"{_name}/i32", _name, rand(5, dtype=i32, low=1, high=5), rand(5, dtype=i32, low=1, high=3)),
        same(f"{_name}/mixed", _name, _s1(4, dtype=f32), _s2(4)),
    ]
ROWS += [
    same("divide/bool", "divide", rand(4, dtype=bool), np.array([True, True, True, True])),
    same("divide/int_f32", "divide", rand(4, dtype=i32, low=-5, high=5), away0(4, dtype=f32)),
    same("divide/by_zero", "divide", np.array([1.0, -1.0, 0.0]), np.array([0.0, 0.0, 0.0]), tags=SPECIAL),
    same("hypot/special", "hypot", np.array([np.inf, np.nan, 3.0, 1e300, 0.0, 1e-300, -np.inf]),
         np.array([np.nan, np.inf, 4.0, 1e300, 0.0, 1e-300, 1.0]), tags=SPECIAL),
    same("logaddexp/special", "logaddexp", np.array([-np.inf, np.inf, 1e3, np.inf, np.nan, 2.0]),
         np.array([-np.inf, np.inf, 1e3, -np.inf, 1.0, -np.inf]), tags=SPECIAL),
    same("logaddexp2/special", "logaddexp2", np.array([-np.inf, np.inf, 1e3, np.inf, np.nan, 2.0]),
         np.array([-np.inf, np.inf, 1e3, -np.inf, 1.0, -np.inf]), tags=SPECIAL),
    same("copysign/special", "copysign", np.array([1.0, 2.0, 3.0, np.nan, -np.inf, 0.0]),
         np.array([-0.0, 0.0, -np.nan, -1.0, 1.0, -1.0]), tags=SPECIAL),
    same("arctan2/special", "arctan2", np.array([0.0, -0.0, 0.0, 1.0, np.inf]),
         np.array([0.0, 0.0, -0.0, 0.0, np.inf]), tags=SPECIAL),
    same("float_power/i_negative", "float_power", rand(4, dtype=i64, low=1, high=5), np.array([-1, -2, 0, 3])),
    same("heaviside/f64", "heaviside", away0(3, 4), rand(4)),
    same("heaviside/special", "heaviside", np.array([-1.0, 0.0, 2.0, np.nan, -0.0, np.inf]), np.array(0.5),
         tags=SPECIAL),
    same("heaviside/int", "heaviside", rand(5, dtype=i32, low=-2, high=2), rand(5, dtype=i32, low=0, high=1)),
    lam("heaviside/f32_pyscalar", lambda m, x: m.heaviside(x, 0.5), away0(4, dtype=f32)),
]

# --- arithmetic on all numeric dtypes ------------------------------------------------
for _name in ("add", "subtract", "multiply", "maximum", "minimum", "fmax", "fmin"):
    ROWS += [
        same(f"{_name}/f64", _name, rand(3, 4), rand(3, 4)),
        same(f"{_name}/broadcast", _name, rand(2, 1, 3), rand(4, 1)),
        same(f"{_name}/0d", _name, rand(), rand()),
        same(f"{_name}/0d_bcast", _name, rand(), rand(2, 3)),
        same(f"{_name}/empty", _name, rand(0, 4), rand(4)),
        same(f"{_name}/f32", _name, rand(5, dtype=f32), rand(5, dtype=f32)),
        same(f"{_name}/f32_f64", _name, rand(5, dtype=f32), rand(5)),
        same(f"{_name}/i32", _name, rand(6, dtype=i32, low=-9, high=9), rand(6, dtype=i32, low=-9, high=9)),
        same(f"{_name}/i32_i64", _name, rand(6, dtype=i32, low=-9, high=9), rand(6, dtype=i64, low=-9, high=9)),
        same(f"{_name}/int_float", _name, rand(6, dtype=i64, low=-9, high=9), rand(6, dtype=f32)),
        lam(f"{_name}/f32_pyscalar", lambda m, x, _n=_name: getattr(m, _n)(x, 1.0), rand(3, dtype=f32)),
        lam(f"{_name}/pyint_f32", lambda m, x, _n=_name: getattr(m, _n)(2, x), rand(3, dtype=f32)),
        lam(f"{_name}/i32_pyint", lambda m, x, _n=_name: getattr(m, _n)(x, 3), rand(3, dtype=i32, low=-5, high=5)),
        lam(f"{_name}/i32_pyfloat", lambda m, x, _n=_name: getattr(m, _n)(x, 0.5), rand(3, dtype=i32, low=-5, high=5)),
        lam(f"{_name}/pyscalars", lambda m, _n=_name: getattr(m, _n)(3, 2.5)),
        lam(f"{_name}/list", lambda m, x, _n=_name: getattr(m, _n)(x, [1.0, -1.0, 0.5]), rand(2, 3)),
    ]
    if _name != "subtract":
        ROWS.append(same(f"{_name}/bool", _name, rand(6, dtype=bool), rand(6, dtype=bool)))
ROWS += [
    lam("subtract/bool_int", lambda m, x: m.subtract(x, 1), rand(4, dtype=bool)),
    same("add/bool_int", "add", rand(4, dtype=bool), rand(4, dtype=i32, low=-3, high=3)),
    same("fmax/special", "fmax", np.array([np.nan, 1.0, np.nan, np.inf, -np.inf]),
         np.array([1.0, np.nan, np.nan, np.nan, 2.0]), tags=SPECIAL),
    same("fmin/special", "fmin", np.array([np.nan, 1.0, np.nan, np.inf, -np.inf]),
         np.array([1.0, np.nan, np.nan, np.nan, 2.0]), tags=SPECIAL),
    same("maximum/special", "maximum", np.array([np.nan, 1.0, np.nan, np.inf]),
         np.array([1.0, np.nan, np.nan, 2.0]), tags=SPECIAL),
    same("minimum/special", "minimum", np.array([np.nan, 1.0, np.nan, -np.inf]),
         np.array([1.0, np.nan, np.nan, 2.0]), tags=SPECIAL),
]

# --- unary numeric -------------------------------------------------------------------
for _name, _sample in (("negative", rand), ("positive", rand), ("abs", away0), ("absolute", away0),
                       ("sign", away0), ("square", rand), ("reciprocal", away0),
                       ("conjugate", rand), ("conj", rand)):
    ROWS += [
        same(f"{_name}/f64", _name, _sample(3, 4)),
        same(f"{_name}/f32", _name, _sample(5, dtype=f32)),
        same(f"{_name}/0d", _name, _sample()),
        same(f"{_name}/empty", _name, np.zeros((2, 0))),
        same(f"{_name}/i32", _name, np.array([3, -1, 0, 5, -4, 1], i32) if _name != "reciprocal" else np.array([3, -1, 1, 5, -4, 2], i32)),
        same(f"{_name}/i64", _name, np.array([-7, 2, 1, -1, 0, 4]) if _name != "reciprocal" else np.array([-7, 2, 1, -1, -2, 4])),
        lam(f"{_name}/pyscalar", lambda m, _n=_name: getattr(m, _n)(-2.5)),
        lam(f"{_name}/pyint", lambda m, _n=_name: getattr(m, _n)(-3)),
    ]
ROWS += [
    same("abs/bool", "abs", rand(5, dtype=bool)),
    same("absolute/special", "absolute", np.array([-0.0, -np.inf, np.nan, np.iinfo(i32).min + 0.5]), tags=SPECIAL),
    same("abs/int_min", "abs", np.array([np.iinfo(i32).min, -1], dtype=i32)),
    same("sign/special", "sign", np.array([0.0, -0.0, np.nan, -np.inf, np.inf, 3.0]), tags=SPECIAL),
    same("sign/int_zero", "sign", np.array([0, -3, 5], dtype=i32)),
    same("reciprocal/ints", "reciprocal", np.array([1, -1, 2, -3, 7], dtype=i64)),
    same("reciprocal/special", "reciprocal", np.array([0.0, -0.0, np.inf, -np.inf]), tags=SPECIAL),
]

# --- power -------------------------------------------------------------------------------
ROWS += [
    same("power/f64", "power", randpos(3, 4), rand(3, 4)),
    same("power/broadcast", "power", randpos(3, 1), rand(5)),
    same("power/f32", "power", randpos(5, dtype=f32), rand(5, dtype=f32)),
    same("power/0d", "power", randpos(), rand()),
    same("power/empty", "power", randpos(0), rand(1)),
    same("power/i32", "power", rand(6, dtype=i32, low=-4, high=4), rand(6, dtype=i32, low=0, high=5)),
    same("power/i64_i32", "power", rand(6, dtype=i64, low=-4, high=4), rand(6, dtype=i32, low=0, high=5)),
    same("power/int_float", "power", rand(6, dtype=i64, low=1, high=4), rand(6)),
    lam("power/f32_pyint", lambda m, x: m.power(x, 3), rand(4, dtype=f32)),
    lam("power/f64_pyint_neg", lambda m, x: m.power(x, -2), away0(4)),
    lam("power/f64_pyint0", lambda m, x: m.power(x, 0), rand(4)),
    lam("power/i32_pyint", lambda m, x: m.power(x, 3), rand(4, dtype=i32, low=-5, high=5)),
    lam("power/f32_pyfloat", lambda m, x: m.power(x, 0.5), randpos(4, dtype=f32)),
    lam("power/pybase", lambda m, x: m.power(2.0, x), rand(4)),
    lam("power/pyints", lambda m: m.power(3, 4)),
    lam("power/bool_pyint", lambda m, x: m.power(x, 2), rand(4, dtype=bool)),
    lam("power/neg_base_pyint", lambda m, x: m.power(x, 3), -randpos(4)),
    same("power/special", "power", np.array([0.0, 0.0, np.inf, np.nan, -8.0, 1.0]),
         np.array([0.0, -1.0, -1.0, 0.0, 1.0 / 3, np.nan]), tags=SPECIAL),
]

# --- floor division, remainder, divmod ------------------------------------------------
for _name in ("floor_divide", "remainder", "mod", "divmod"):
    ROWS += [
        same(f"{_name}/f64", _name, rand(3, 4, low=-5, high=5), away0(3, 4)),
        same(f"{_name}/broadcast", _name, rand(3, 1, low=-5, high=5), away0(4)),
        same(f"{_name}/f32", _name, rand(5, dtype=f32, low=-5, high=5), away0(5, dtype=f32)),
        same(f"{_name}/0d", _name, rand(low=-5, high=5), away0()),
        same(f"{_name}/empty", _name, rand(0, 2), away0(2)),
        same(f"{_name}/i32", _name, rand(8, dtype=i32, low=-9, high=9), np.array([2, -2, 3, -3, 5, -5, 1, -1], i32)),
        same(f"{_name}/i64_0d", _name, np.array(-7), np.array(2)),
        lam(f"{_name}/f32_pyscalar", lambda m, x, _n=_name: getattr(m, _n)(x, 0.7), rand(4, dtype=f32)),
        lam(f"{_name}/pyscalar_f64", lambda m, y, _n=_name: getattr(m, _n)(2.5, y), away0(4)),
        lam(f"{_name}/i32_pyint", lambda m, x, _n=_name: getattr(m, _n)(x, -3), rand(6, dtype=i32, low=-9, high=9)),
        lam(f"{_name}/pyints", lambda m, _n=_name: getattr(m, _n)(-7, 2)),
        same(f"{_name}/exact", _name, np.array([1.0, 1.0, -1.0, 5.0, 0.3, -0.0, 0.0, 2.0]),
             np.array([0.1, -0.1, 0.1, 0.5, 0.1, 2.0, -2.0, -0.7]), tags=SPECIAL),
        same(f"{_name}/by_zero", _name, np.array([1.0, -1.0, 0.0, np.nan, np.inf]), np.array(0.0), tags=SPECIAL),
        same(f"{_name}/inf", _name, np.array([1.0, -1.0, 0.0, -0.0, np.inf, 3.0]),
             np.array([np.inf, np.inf, -np.inf, np.inf, 2.0, np.nan]), tags=SPECIAL),
        same(f"{_name}/int_by_zero", _name, np.array([5, -5, 0], i64), np.array([0, 0, 0], i64)),
        same(f"{_name}/large", _name, np.array([1e300, -1e17, 123456789.123]), np.array([3e-5, 7.0, -0.001]),
             tags=SPECIAL),
    ]

# --- rounding --------------------------------------------------------------------------
for _name in ("floor", "ceil", "trunc", "fix", "round", "around"):
    ROWS += [
        same(f"{_name}/f64", _name, nonint(3, 4), tags=NONDIFF),
        same(f"{_name}/f32", _name, nonint(5, dtype=f32), tags=NONDIFF),
        same(f"{_name}/0d", _name, nonint(), tags=NONDIFF),
        same(f"{_name}/empty", _name, np.zeros((0,))),
        same(f"{_name}/i32", _name, rand(5, dtype=i32, low=-9, high=9)),
        same(f"{_name}/i64", _name, rand(5, dtype=i64, low=-9, high=9)),
        lam(f"{_name}/pyscalar", lambda m, _n=_name: getattr(m, _n)(-2.5)),
        lam(f"{_name}/pyint", lambda m, _n=_name: getattr(m, _n)(7)),
        same(f"{_name}/special", _name, np.array([-0.5, 0.5, 1.5, 2.5, -0.0, -0.2, np.inf, np.nan]), tags=SPECIAL),
    ]
    if _name != "round" and _name != "around":
        ROWS.append(same(f"{_name}/bool", _name, rand(4, dtype=bool)))
ROWS += [
    lam("round/decimals2", lambda m, x: m.round(x, 2), rand(3, 4), tags=NONDIFF),
    lam("round/decimals2_f32", lambda m, x: m.round(x, 2), rand(5, dtype=f32), tags=NONDIFF),
    lam("round/decimals_neg", lambda m, x: m.round(x, -1), rand(6, low=-200, high=200), tags=NONDIFF),
    lam("round/halves2", lambda m, x: m.round(x, 2), np.array([1.005, 2.675, -0.125, 0.125]), tags=SPECIAL),
    lam("round/int_neg", lambda m, x: m.round(x, -1), np.array([15, 25, -15, 149, -151], i64)),
    lam("round/i32_neg2", lambda m, x: m.round(x, -2), np.array([150, 250, -1249, 49], i32)),
    lam("round/int_pos", lambda m, x: m.round(x, 3), np.array([15, -25], i32)),
    lam("around/decimals1", lambda m, x: m.around(x, decimals=1), rand(4), tags=NONDIFF),
    lam("round/pyscalar_dec", lambda m: m.round(3.14159, 3)),
]

# --- selection -------------------------------------------------------------------------
ROWS += [
    lam("clip/f64", lambda m, x: m.clip(x, -0.5, 0.7), rand(3, 4)),
    lam("clip/arrays", lambda m, x, lo, hi: m.clip(x, lo, hi), rand(3, 4), rand(4, low=-2, high=-0.5),
        rand(3, 1, low=0.5, high=2)),
    lam("clip/f32_pyscalar", lambda m, x: m.clip(x, -1.0, 1.0), rand(5, dtype=f32)),
    lam("clip/int_float", lambda m, x: m.clip(x, 0.5, 3.5), rand(6, dtype=i32, low=-5, high=5)),
    lam("clip/int", lambda m, x: m.clip(x, -2, 3), rand(6, dtype=i64, low=-5, high=5)),
    lam("clip/min_none", lambda m, x: m.clip(x, None, 0.5), rand(5)),
    lam("clip/max_none", lambda m, x: m.clip(x, -0.5, None), rand(5)),
    lam("clip/both_none", lambda m, x: m.clip(x, None, None), rand(5, dtype=i32, low=-5, high=5)),
    lam("clip/kw", lambda m, x: m.clip(x, min=-0.5, max=0.5), rand(5)),
    lam("clip/0d", lambda m, x: m.clip(x, 0, 1), rand()),
    lam("clip/empty", lambda m, x: m.clip(x, 0, 1), rand(0, 2)),
    lam("clip/special", lambda m, x: m.clip(x, -1.0, 1.0), np.array([np.nan, np.inf, -np.inf, 0.0]), tags=SPECIAL),
    lam("where/f64", lambda m, c, x, y: m.where(c, x, y), rand(3, 4, dtype=bool), rand(3, 4), rand(3, 4)),
    lam("where/broadcast", lambda m, c, x, y: m.where(c, x, y), rand(3, 1, dtype=bool), rand(4), rand(2, 1, 1)),
    lam("where/f32_pyscalar", lambda m, c, x: m.where(c, x, 0.0), rand(4, dtype=bool), rand(4, dtype=f32)),
    lam("where/int_float", lambda m, c, x: m.where(c, x, 0.5), rand(4, dtype=bool), rand(4, dtype=i32)),
    lam("where/cond_int", lambda m, c, x, y: m.where(c, x, y), np.array([0, 1, 2, -1]), rand(4), rand(4)),
    lam("where/cond_float", lambda m, c, x, y: m.where(c, x, y), np.array([0.0, 0.5, np.nan]), rand(3), rand(3),
        diff=(1, 2)),
    lam("where/cond_from_x", lambda m, x: m.where(x > 0, x, -x), away0(5)),
    lam("where/0d", lambda m, x, y: m.where(True, x, y), rand(), rand()),
    lam("where/pyscalars", lambda m: m.where(False, 1, 2.5)),
    lam("where/empty", lambda m, c, x: m.where(c, x, 1.0), rand(0, 3, dtype=bool), rand(3)),
    lam("where/bool", lambda m, c, x, y: m.where(c, x, y), rand(5, dtype=bool), rand(5, dtype=bool), rand(5, dtype=bool)),
]

# --- comparisons -----------------------------------------------------------------------
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    _a = np.array([1.0, 2.0, 3.0, np.nan, -0.0, np.inf])
    ROWS += [
        same(f"{_name}/ties", _name, _a, np.array([1.0, 3.0, 2.0, np.nan, 0.0, np.inf]), tags=SPECIAL),
        same(f"{_name}/f64", _name, rand(3, 4), rand(3, 4)),
        same(f"{_name}/broadcast", _name, rand(3, 1), rand(4)),
        # 0.1 in float32 != 0.1 in float64: promotion to float64 decides the result
        same(f"{_name}/f32_f64", _name, np.array([0.1, 0.5], f32), np.array([0.1, 0.5]), tags=SPECIAL),
        same(f"{_name}/int", _name, rand(6, dtype=i32, low=-2, high=2), rand(6, dtype=i64, low=-2, high=2)),
        same(f"{_name}/bool", _name, rand(6, dtype=bool), rand(6, dtype=bool)),
        lam(f"{_name}/int_pyfloat", lambda m, x, _n=_name: getattr(m, _n)(x, 1.5), rand(5, dtype=i32, low=0, high=3)),
        lam(f"{_name}/f32_pyscalar", lambda m, x, _n=_name: getattr(m, _n)(x, 0.0), rand(5, dtype=f32)),
        same(f"{_name}/0d", _name, rand(), rand()),
        same(f"{_name}/empty", _name, rand(0), rand(1)),
    ]

# --- classification ----------------------------------------------------------------------
_SPECIALS = np.array([0.0, -0.0, 1.5, -np.inf, np.inf, np.nan, -np.nan])
for _name in ("isfinite", "isnan", "isinf", "signbit"):
    ROWS += [
        same(f"{_name}/special", _name, _SPECIALS, tags=SPECIAL),
        same(f"{_name}/f32", _name, _SPECIALS.astype(f32), tags=SPECIAL),
        same(f"{_name}/f64", _name, rand(3, 4)),
        same(f"{_name}/0d", _name, np.array(np.inf)),
        same(f"{_name}/int", _name, rand(5, dtype=i32, low=-3, high=3)),
        same(f"{_name}/bool", _name, rand(5, dtype=bool)),
        same(f"{_name}/empty", _name, rand(0, 2)),
        lam(f"{_name}/pyscalar", lambda m, _n=_name: getattr(m, _n)(-1.0)),
        lam(f"{_name}/pyint", lambda m, _n=_name: getattr(m, _n)(3)),
    ]

ROWS += [
    same("nan_to_num/special", "nan_to_num", _SPECIALS, tags=SPECIAL),
    same("nan_to_num/f32", "nan_to_num", _SPECIALS.astype(f32), tags=SPECIAL),
    lam("nan_to_num/values", lambda m, x: m.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0), _SPECIALS, tags=SPECIAL),
    lam("nan_to_num/f32_values", lambda m, x: m.nan_to_num(x, nan=-1, posinf=9), _SPECIALS.astype(f32), tags=SPECIAL),
    same("nan_to_num/f64", "nan_to_num", rand(3, 4)),
    same("nan_to_num/0d", "nan_to_num", np.array(np.nan), tags=SPECIAL),
    same("nan_to_num/int", "nan_to_num", rand(4, dtype=i32, low=-3, high=3)),
    same("nan_to_num/bool", "nan_to_num", rand(4, dtype=bool)),
    same("nan_to_num/empty", "nan_to_num", rand(0)),
    lam("nan_to_num/pyscalar", lambda m: m.nan_to_num(float("inf"))),
    lam("nan_to_num/pyint", lambda m: m.nan_to_num(3)),
]

# --- logical and bitwise ------------------------------------------------------------------
for _name in ("logical_and", "logical_or", "logical_xor"):
    ROWS += [
        same(f"{_name}/bool", _name, rand(3, 4, dtype=bool), rand(3, 4, dtype=bool)),
        same(f"{_name}/broadcast", _name, rand(3, 1, dtype=bool), rand(4, dtype=bool)),
        same(f"{_name}/float_int", _name, np.array([0.0, 0.5, np.nan, -0.0]), np.array([1, 0, 0, 2], i32)),
        lam(f"{_name}/pyscalar", lambda m, x, _n=_name: getattr(m, _n)(x, True), rand(4, dtype=bool)),
        lam(f"{_name}/pyscalars", lambda m, _n=_name: getattr(m, _n)(1, 0.0)),
        same(f"{_name}/0d", _name, np.array(True), np.array(False)),
        same(f"{_name}/empty", _name, rand(0, dtype=bool), rand(1, dtype=bool)),
    ]
ROWS += [
    same("logical_not/bool", "logical_not", rand(3, 4, dtype=bool)),
    same("logical_not/float", "logical_not", np.array([0.0, 0.5, np.nan, -0.0])),
    same("logical_not/int", "logical_not", rand(5, dtype=i64, low=-1, high=1)),
    same("logical_not/0d", "logical_not", np.array(0.0)),
    same("logical_not/empty", "logical_not", rand(0)),
    lam("logical_not/pyscalar", lambda m: m.logical_not(0)),
]
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    ROWS += [
        same(f"{_name}/i64", _name, rand(3, 4, dtype=i64, low=-50, high=50), rand(3, 4, dtype=i64, low=-50, high=50)),
        same(f"{_name}/i32_i64", _name, rand(4, dtype=i32, low=-50, high=50), rand(3, 1, dtype=i64, low=0, high=50)),
        same(f"{_name}/bool", _name, rand(5, dtype=bool), rand(5, dtype=bool)),
        same(f"{_name}/bool_int", _name, rand(5, dtype=bool), rand(5, dtype=i32, low=0, high=7)),
        lam(f"{_name}/i32_pyint", lambda m, x, _n=_name: getattr(m, _n)(x, 6), rand(5, dtype=i32, low=-9, high=9)),
        lam(f"{_name}/pyints", lambda m, _n=_name: getattr(m, _n)(12, 10)),
        same(f"{_name}/0d", _name, np.array(7, i32), np.array(3, i32)),
        same(f"{_name}/empty", _name, rand(0, dtype=i64), rand(0, dtype=i64)),
    ]
for _name in ("invert", "bitwise_not"):
    ROWS += [
        same(f"{_name}/i64", _name, rand(3, 4, dtype=i64, low=-50, high=50)),
        same(f"{_name}/i32", _name, rand(5, dtype=i32, low=-50, high=50)),
        same(f"{_name}/bool", _name, rand(5, dtype=bool)),
        same(f"{_name}/0d", _name, np.array(True)),
        same(f"{_name}/empty", _name, rand(0, dtype=i32)),
        lam(f"{_name}/pyint", lambda m, _n=_name: getattr(m, _n)(5)),
    ]

# --- composites of several functions (what user code looks like) -------------------------
ROWS += [
    lam("composite/softplus", lambda m, x: m.logaddexp(0.0, x), rand(3, 4)),
    lam("composite/sigmoid", lambda m, x: 1.0 / (1.0 + m.exp(-x)), rand(3, 4)),
    lam("composite/poly", lambda m, x, y: m.sqrt(m.square(x) + m.square(y)) * m.sign(x), away0(4), rand(4)),
    lam("composite/operators_f32", lambda m, x: (x * 2 - 1) / 3 + x ** 2, rand(5, dtype=f32)),
]
