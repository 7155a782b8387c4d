"""Elementwise primitives: unary and binary families, comparisons, select, casts.

All are strict: binary operands must have identical shapes and dtypes. A new
elementwise op is one line here (plus its jvp rule below it and a scalar emitter in
``funcgrad/lowering``).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import Primitive
from funcgrad.core.prims._checks import check_kind, check_same, kinds_text

FLOAT = "f"
NUM = "if"
INT_BOOL = "ib"
ANY = "bif"


def unop(name: str, impl, kinds: str = FLOAT, out_dtype=None) -> Primitive:
    """Declare a unary elementwise primitive accepting dtypes of the given kinds."""
    prim = Primitive(name)
    prim.def_impl(impl)

    def abstract_eval(x: ShapedArray) -> ShapedArray:
        check_kind(name, x, kinds)
        if out_dtype is not None:
            return ShapedArray(x.shape, out_dtype, False)
        return x

    prim.def_abstract_eval(abstract_eval)
    prim.kinds = kinds  # accepted dtype kinds, read by tests and lowering
    return prim


def binop(name: str, impl, kinds: str = NUM, out_dtype=None) -> Primitive:
    """Declare a binary elementwise primitive on operands of identical type."""
    prim = Primitive(name)
    prim.def_impl(impl)

    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        check_same(name, (x, y))
        check_kind(name, x, kinds)
        weak = x.weak_type and y.weak_type
        return ShapedArray(x.shape, x.dtype if out_dtype is None else out_dtype, weak and out_dtype is None)

    prim.def_abstract_eval(abstract_eval)
    prim.kinds = kinds  # accepted dtype kinds, read by tests and lowering
    return prim


# --- unary, float only ------------------------------------------------------------
exp_p = unop("exp", np.exp)
log_p = unop("log", np.log)
log1p_p = unop("log1p", np.log1p)
expm1_p = unop("expm1", np.expm1)
sin_p = unop("sin", np.sin)
cos_p = unop("cos", np.cos)
tan_p = unop("tan", np.tan)
asin_p = unop("asin", np.arcsin)
acos_p = unop("acos", np.arccos)
atan_p = unop("atan", np.arctan)
sinh_p = unop("sinh", np.sinh)
cosh_p = unop("cosh", np.cosh)
tanh_p = unop("tanh", np.tanh)
asinh_p = unop("asinh", np.arcsinh)
acosh_p = unop("acosh", np.arccosh)
atanh_p = unop("atanh", np.arctanh)
sqrt_p = unop("sqrt", np.sqrt)
cbrt_p = unop("cbrt", np.cbrt)
floor_p = unop("floor", np.floor)
ceil_p = unop("ceil", np.ceil)
round_p = unop("round", np.rint)  # round half to even, like numpy.rint / numpy.round
is_finite_p = unop("is_finite", np.isfinite, out_dtype=dtypes.bool_)

# --- unary, numeric ------------------------------------------------------------------
neg_p = unop("neg", np.negative, NUM)
abs_p = unop("abs", np.abs, NUM)
sign_p = unop("sign", np.sign, NUM)
not_p = unop("not", np.invert, INT_BOOL)  # logical not on bool, bitwise not on ints


# --- binary, numeric -----------------------------------------------------------------
def _int_div(x, y):
    """C-style (truncating) integer division; division by zero gives 0 (no trap)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        safe_y = np.where(y == 0, 1, y)
        q = np.abs(x) // np.abs(safe_y)
        q = np.where((x < 0) != (safe_y < 0), -q, q)
        return np.where(y == 0, 0, q).astype(x.dtype)


def _div(x, y):
    if x.dtype.kind == "f":
        return np.true_divide(x, y)
    return _int_div(np.asarray(x), np.asarray(y))


def _rem(x, y):
    if x.dtype.kind == "f":
        return np.fmod(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, 0, np.fmod(x, np.where(y == 0, 1, y))).astype(x.dtype)


def _pow(x, y):
    return np.power(x, y)


add_p = binop("add", np.add)
sub_p = binop("sub", np.subtract)
mul_p = binop("mul", np.multiply)
div_p = binop("div", _div)  # floats: IEEE; ints: truncate toward zero, x/0 == 0
rem_p = binop("rem", _rem)  # C fmod: result has the sign of x; ints: x%0 == 0
pow_p = binop("pow", _pow)
max_p = binop("max", np.maximum, ANY)  # NaN-propagating, like numpy.maximum
min_p = binop("min", np.minimum, ANY)
atan2_p = binop("atan2", np.arctan2, FLOAT)
copysign_p = binop("copysign", np.copysign, FLOAT)

and_p = binop("and", np.bitwise_and, INT_BOOL)
or_p = binop("or", np.bitwise_or, INT_BOOL)
xor_p = binop("xor", np.bitwise_xor, INT_BOOL)

eq_p = binop("eq", np.equal, ANY, out_dtype=dtypes.bool_)
ne_p = binop("ne", np.not_equal, ANY, out_dtype=dtypes.bool_)
lt_p = binop("lt", np.less, ANY, out_dtype=dtypes.bool_)
le_p = binop("le", np.less_equal, ANY, out_dtype=dtypes.bool_)
gt_p = binop("gt", np.greater, ANY, out_dtype=dtypes.bool_)
ge_p = binop("ge", np.greater_equal, ANY, out_dtype=dtypes.bool_)


# --- integer_pow: x ** n for a static Python int n (exact, cheap derivatives) ------------
integer_pow_p = Primitive("integer_pow")


@integer_pow_p.def_impl
def _integer_pow_impl(x, *, y: int):
    if y < 0 and np.asarray(x).dtype.kind != "f":
        raise ValueError("integer_pow: integers to negative integer powers are not allowed")
    return np.power(x, np.asarray(y, dtype=np.asarray(x).dtype)) if y >= 0 else np.power(x, float(y)).astype(np.asarray(x).dtype)


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x, *, y: int):
    check_kind("integer_pow", x, NUM)
    if not isinstance(y, int):
        raise TypeError(f"integer_pow: exponent must be a Python int, got {type(y).__name__}")
    return x


# --- select_n: which ? cases[1] : cases[0] (bool), or cases[which] (int32) ------------
select_n_p = Primitive("select_n")


@select_n_p.def_impl
def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return cases[0]
    if np.asarray(which).dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(np.clip(which, 0, len(cases) - 1), cases)


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise TypeError("select_n: needs at least one case")
    check_same("select_n", cases, "cases")
    if which.shape != cases[0].shape:
        raise TypeError(
            f"select_n: predicate shape {which.str_short()} must equal the case shape {cases[0].str_short()}"
        )
    if which.dtype == np.bool_:
        if len(cases) > 2:
            raise TypeError("select_n: a boolean predicate selects between at most two cases")
    elif which.dtype != np.int32:
        raise TypeError(f"select_n: predicate must be bool or int32, got {which.str_short()}")
    weak = all(c.weak_type for c in cases)
    return cases[0].update(weak_type=weak)


# --- convert_element_type --------------------------------------------------------------
convert_element_type_p = Primitive("convert_element_type")


@convert_element_type_p.def_impl
def _convert_element_type_impl(x, *, new_dtype, weak_type=False):
    x = np.asarray(x)
    if x.dtype.kind == "f" and new_dtype.kind in "iu":
        # Like NumPy's cast but defined for NaN/inf/out-of-range (no UB): clamp, NaN->0.
        info = np.iinfo(new_dtype)
        with np.errstate(invalid="ignore"):
            y = np.where(np.isnan(x), 0, np.clip(x, info.min, info.max))
            return np.trunc(y).astype(new_dtype)
    return x.astype(new_dtype)


@convert_element_type_p.def_abstract_eval
def _convert_element_type_abstract_eval(x, *, new_dtype, weak_type=False):
    dt = dtypes.canonicalize(new_dtype, what="convert_element_type new_dtype")
    return ShapedArray(x.shape, dt, weak_type)


__all__ = [n for n in dir() if n.endswith("_p")] + ["unop", "binop", "kinds_text"]
