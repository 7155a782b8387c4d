"""Elementwise primitives: unary and binary families, comparisons, select, casts.

All are strict: binary operands must have identical shapes and dtypes. A new
elementwise op is one line here (plus its jvp rule below it and a scalar emitter in
``funcgrad/lowering``).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core import dtypes
from funcgrad.core.ad_util import Zero, defjvp, defjvp_zero, is_undefined
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import defbatch_elementwise
from funcgrad.core.primitive import AVALS, NOTHING, Primitive, defvjp_eager, jvp_rules
from funcgrad.core.prims._checks import check_kind, check_same, kinds_text
from funcgrad.core.trace import get_aval_any

FLOAT = "f"
INEXACT = "fc"  # float or complex: NumPy's ufunc has a complex loop too
NUM = "iufc"  # "u": unsigned ints do what NumPy does (wrap-around, unsigned compare)
INT = "iu"
INT_BOOL = "iub"
ANY = "biufc"  # complex orders lexicographically (real part, then imaginary), as NumPy 2


def unop(name: str, impl, kinds: str = FLOAT, out_dtype=None) -> Primitive:
    """Declare a unary elementwise primitive accepting dtypes of the given kinds."""
    prim = Primitive(name, elementwise=True)
    prim.def_impl(impl)

    def abstract_eval(x: ShapedArray) -> ShapedArray:
        check_kind(name, x, kinds)
        # Outputs are strongly typed: a NumPy function of Python scalars gives a NumPy
        # scalar. Only Python's own operators on them stay weak (numpy_api/methods.py).
        # ``out_dtype`` is a dtype, or a function of the operand's (abs: complex -> real).
        dt = x.dtype if out_dtype is None else out_dtype(x.dtype) if callable(out_dtype) else out_dtype
        return ShapedArray(x.shape, dt, False)

    prim.def_abstract_eval(abstract_eval)
    prim.kinds = kinds  # accepted dtype kinds, read by tests and lowering
    defbatch_elementwise(prim)
    return prim


def binop(name: str, impl, kinds: str = NUM, out_dtype=None) -> Primitive:
    """Declare a binary elementwise primitive on operands of identical type."""
    prim = Primitive(name, elementwise=True)
    prim.def_impl(impl)

    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        check_same(name, (x, y))
        check_kind(name, x, kinds)
        return ShapedArray(x.shape, x.dtype if out_dtype is None else out_dtype, False)  # (strong: see unop)

    prim.def_abstract_eval(abstract_eval)
    prim.kinds = kinds  # accepted dtype kinds, read by tests and lowering
    defbatch_elementwise(prim)
    return prim


# --- unary, float only ------------------------------------------------------------
# Each jvp partial is (g, ans, x) -> tangent; ``ans`` is the primal output. The eager
# cotangent rules (``defvjp_eager``: NumPy, ``p`` the primals) of the ops of typical
# programs compute exactly what the general path's transposes compute, operation for
# operation, without re-validating; the others are derived from the partials.
exp_p = unop("exp", np.exp, INEXACT)
defjvp(exp_p, lambda g, ans, x: lax.mul(g, ans))
defvjp_eager(exp_p, lambda ct, ans, p, which: [ct * ans], primals=NOTHING, ans=True)
log_p = unop("log", np.log, INEXACT)
defjvp(log_p, lambda g, ans, x: lax.div(g, x))
defvjp_eager(log_p, lambda ct, ans, p, which: [ct / p[0]])
# log2/log10 are primitives, not log(x) / ln b: that quotient is up to 2 ulp off, and
# log10(1000.0) must be 3.0 exactly, as NumPy's (the C library's) is.
log2_p = unop("log2", np.log2, INEXACT)
defjvp(log2_p, lambda g, ans, x: lax.div(g, lax.mul(x, _full_like(x, 0.6931471805599453))))
log10_p = unop("log10", np.log10, INEXACT)
defjvp(log10_p, lambda g, ans, x: lax.div(g, lax.mul(x, _full_like(x, 2.302585092994046))))
log1p_p = unop("log1p", np.log1p, INEXACT)
defjvp(log1p_p, lambda g, ans, x: lax.div(g, lax.add(_one(x), x)))
expm1_p = unop("expm1", np.expm1, INEXACT)
defjvp(expm1_p, lambda g, ans, x: lax.mul(g, lax.add(ans, _one(ans))))
sin_p = unop("sin", np.sin, INEXACT)
defjvp(sin_p, lambda g, ans, x: lax.mul(g, lax.cos(x)))
defvjp_eager(sin_p, lambda ct, ans, p, which: [ct * np.cos(p[0])])
cos_p = unop("cos", np.cos, INEXACT)
defjvp(cos_p, lambda g, ans, x: lax.mul(g, lax.neg(lax.sin(x))))  # linear part: one mul
defvjp_eager(cos_p, lambda ct, ans, p, which: [ct * -np.sin(p[0])])
tan_p = unop("tan", np.tan, INEXACT)
defjvp(tan_p, lambda g, ans, x: lax.mul(g, lax.add(_one(ans), lax.mul(ans, ans))))
asin_p = unop("asin", np.arcsin, INEXACT)
defjvp(asin_p, lambda g, ans, x: lax.div(g, lax.sqrt(_one_minus_sq(x))))
acos_p = unop("acos", np.arccos, INEXACT)
defjvp(acos_p, lambda g, ans, x: lax.div(g, lax.neg(lax.sqrt(_one_minus_sq(x)))))
atan_p = unop("atan", np.arctan, INEXACT)
defjvp(atan_p, lambda g, ans, x: lax.div(g, lax.add(_one(x), lax.mul(x, x))))
sinh_p = unop("sinh", np.sinh, INEXACT)
defjvp(sinh_p, lambda g, ans, x: lax.mul(g, lax.cosh(x)))
cosh_p = unop("cosh", np.cosh, INEXACT)
defjvp(cosh_p, lambda g, ans, x: lax.mul(g, lax.sinh(x)))
tanh_p = unop("tanh", np.tanh, INEXACT)
defjvp(tanh_p, lambda g, ans, x: lax.mul(g, lax.sub(_one(ans), lax.mul(ans, ans))))


def _tanh_vjp(ct, ans, p, which):
    # ct * (1 - ans * ans), in one temporary (this is an MLP's largest elementwise op).
    t = np.multiply(ans, ans)
    if type(t) is not np.ndarray:  # 0-d: NumPy gave a scalar
        return [ct * (1 - t)]
    np.subtract(1, t, out=t)
    np.multiply(ct, t, out=t)
    return [t]


defvjp_eager(tanh_p, _tanh_vjp, primals=NOTHING, ans=True)
asinh_p = unop("asinh", np.arcsinh, INEXACT)
defjvp(asinh_p, lambda g, ans, x: lax.div(g, lax.sqrt(lax.add(lax.mul(x, x), _one(x)))))
acosh_p = unop("acosh", np.arccosh, INEXACT)
# sqrt(x-1)*sqrt(x+1) rather than sqrt(x*x-1): no cancellation near x = 1.
defjvp(acosh_p, lambda g, ans, x: lax.div(g, lax.mul(lax.sqrt(lax.sub(x, _one(x))), lax.sqrt(lax.add(x, _one(x))))))
atanh_p = unop("atanh", np.arctanh, INEXACT)
defjvp(atanh_p, lambda g, ans, x: lax.div(g, _one_minus_sq(x)))
sqrt_p = unop("sqrt", np.sqrt, INEXACT)
defjvp(sqrt_p, lambda g, ans, x: lax.div(g, lax.add(ans, ans)))
defvjp_eager(sqrt_p, lambda ct, ans, p, which: [ct / (ans + ans)], primals=NOTHING, ans=True)
cbrt_p = unop("cbrt", np.cbrt)
defjvp(cbrt_p, lambda g, ans, x: lax.div(g, lax.mul(_full_like(ans, 3.0), lax.mul(ans, ans))))
floor_p = unop("floor", np.floor)
defjvp_zero(floor_p)
ceil_p = unop("ceil", np.ceil)
defjvp_zero(ceil_p)
round_p = unop("round", np.rint)  # round half to even, like numpy.rint / numpy.round
defjvp_zero(round_p)
is_finite_p = unop("is_finite", np.isfinite, INEXACT, out_dtype=dtypes.bool_)
defjvp_zero(is_finite_p)

# --- unary, numeric ------------------------------------------------------------------
neg_p = unop("neg", np.negative, NUM)
ad.deflinear(neg_p, lambda ct, x: [lax.neg(ct)])
defvjp_eager(neg_p, lambda ct, ans, p, which: [-ct], primals=NOTHING)
abs_p = unop("abs", np.abs, NUM, out_dtype=dtypes.real_dtype)  # |x+iy| is real
defjvp(abs_p, lambda g, ans, x: _abs_jvp(g, ans, x))  # subgradient 0 at x == 0
defvjp_eager(abs_p, lambda ct, ans, p, which: [_abs_vjp(ct, ans, p[0])], ans=True)
sign_p = unop("sign", np.sign, NUM)  # complex: z / |z| (NumPy 2), 0 at 0
defjvp(sign_p, lambda g, ans, x: _sign_jvp(g, ans, x))
defvjp_eager(sign_p, lambda ct, ans, p, which: [_sign_vjp(ct, ans, p[0])], ans=True)


def _abs_vjp(ct, ans, x):
    # Real: ct sign(x). Complex: the transpose of g -> Re(conj(u) g) is ct -> ct conj(u),
    # u = z/|z| (not the JVP's own formula: that map is not a complex scaling).
    if x.dtype.kind != "c":
        return ct * np.sign(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ct * np.where(ans == 0, 0, np.conj(x) / np.where(ans == 0, 1, ans))


def _sign_vjp(ct, ans, x):
    if x.dtype.kind != "c":
        return None  # piecewise constant
    # Transpose of g -> i s Im(conj(s) g) / r: Re(ct i s Im(conj(s) g)) / r equals
    # -Im(ct s) Im(conj(s) g) / r = Re(i conj(s) Im(ct s) g) / r, so ct -> i conj(s) Im(ct s) / r.
    r = np.abs(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(r == 0, 0, np.imag(ct * ans) / np.where(r == 0, 1, r))
    return (1j * np.conj(ans) * scale).astype(x.dtype)
not_p = unop("not", np.invert, INT_BOOL)  # logical not on bool, bitwise not on ints
defjvp_zero(not_p)


# --- binary, numeric -----------------------------------------------------------------
def _int_div(x, y):
    """C-style (truncating) integer division; division by zero gives 0 (no trap) and
    INT_MIN / -1 wraps to INT_MIN, as in compiled code."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        safe_y = np.where(y == 0, 1, y)
        q = np.floor_divide(x, safe_y)
        # floor -> truncate: step toward zero where the division was inexact and the
        # signs differ (no abs(), which overflows at INT_MIN).
        inexact = (q * safe_y) != x
        q = np.where(inexact & ((x < 0) != (safe_y < 0)), q + 1, q)
        return np.where(y == 0, 0, q).astype(x.dtype)


def _div(x, y):
    if x.dtype.kind in "fc":
        return np.true_divide(x, y)
    return _int_div(np.asarray(x), np.asarray(y))


def _rem(x, y):
    if x.dtype.kind == "f":
        return np.fmod(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, 0, np.fmod(x, np.where(y == 0, 1, y))).astype(x.dtype)


def _pow(x, y):
    return np.power(x, y)


def _undefined_cts(ct, x, y, ct_x, ct_y):
    """Cotangents for whichever of (x, y) is a linear input of a transpose rule."""
    return [ct_x(ct) if is_undefined(x) else None, ct_y(ct) if is_undefined(y) else None]


add_p = binop("add", np.add)
ad.deflinear(add_p, lambda ct, x, y: _undefined_cts(ct, x, y, lambda c: c, lambda c: c))
defvjp_eager(add_p, lambda ct, ans, p, which: [ct, ct], primals=NOTHING)
sub_p = binop("sub", np.subtract)
ad.deflinear(sub_p, lambda ct, x, y: _undefined_cts(ct, x, y, lambda c: c, lax.neg))
defvjp_eager(sub_p, lambda ct, ans, p, which: [ct, -ct if 1 in which else None], primals=NOTHING)
mul_p = binop("mul", np.multiply)
defjvp(mul_p, lambda g, ans, x, y: lax.mul(g, y), lambda g, ans, x, y: lax.mul(x, g))
ad.deftranspose(mul_p, lambda ct, x, y: _undefined_cts(ct, x, y, lambda c: lax.mul(c, y), lambda c: lax.mul(x, c)))


def _mul_vjp(ct, ans, p, which):
    x, y = p
    return [ct * y if 0 in which else None, x * ct if 1 in which else None]


defvjp_eager(mul_p, _mul_vjp)
div_p = binop("div", _div)  # floats: IEEE; ints: truncate toward zero, x/0 == 0
defjvp(div_p, lambda g, ans, x, y: lax.div(g, y), lambda g, ans, x, y: lax.neg(lax.div(lax.mul(g, ans), y)))
ad.deftranspose(div_p, lambda ct, x, y: [lax.div(ct, y), None])  # linear in x only


def _div_vjp(ct, ans, p, which):
    x, y = p
    return [ct / y if 0 in which else None, -ct / y * ans if 1 in which else None]


defvjp_eager(div_p, _div_vjp, ans=True)
rem_p = binop("rem", _rem, "iuf")  # (NumPy has no complex fmod)  # C fmod: result has the sign of x; ints: x%0 == 0
defjvp(rem_p, lambda g, ans, x, y: g, lambda g, ans, x, y: lax.neg(lax.mul(g, _trunc(lax.div(x, y)))))
pow_p = binop("pow", _pow)
defjvp(pow_p, lambda g, ans, x, y: _pow_dx(g, x, y), lambda g, ans, x, y: _pow_dy(g, ans, x))


def _minmax_vjp(better):
    # All of ct to the winner, half each at ties (the JVP's convention).
    def rule(ct, ans, p, which):
        x, y = p
        tie = np.where(x == y, ct * 0.5, np.zeros_like(ct))
        got = [np.where(better(x, y), ct, tie) if 0 in which else None,
               np.where(better(y, x), ct, tie) if 1 in which else None]
        if tie.ndim == 0:  # np.where gives 0-d arrays; the general path NumPy scalars
            got = [None if g is None else g[()] for g in got]
        return got

    return rule


max_p = binop("max", np.maximum, ANY)  # NaN-propagating, like numpy.maximum
defjvp(max_p, lambda g, ans, x, y: _minmax_share(g, lax.gt, x, y), lambda g, ans, x, y: _minmax_share(g, lax.gt, y, x))
defvjp_eager(max_p, _minmax_vjp(np.greater))
min_p = binop("min", np.minimum, ANY)
defjvp(min_p, lambda g, ans, x, y: _minmax_share(g, lax.lt, x, y), lambda g, ans, x, y: _minmax_share(g, lax.lt, y, x))
defvjp_eager(min_p, _minmax_vjp(np.less))
atan2_p = binop("atan2", np.arctan2, FLOAT)
defjvp(
    atan2_p,
    lambda g, ans, x, y: _atan2_partial(g, y, x),
    lambda g, ans, x, y: lax.neg(_atan2_partial(g, x, y)),
)
copysign_p = binop("copysign", np.copysign, FLOAT)
defjvp(copysign_p, lambda g, ans, x, y: lax.mul(g, lax.mul(lax.sign(x), lax.sign(ans))), None)

and_p = binop("and", np.bitwise_and, INT_BOOL)
or_p = binop("or", np.bitwise_or, INT_BOOL)
xor_p = binop("xor", np.bitwise_xor, INT_BOOL)

eq_p = binop("eq", np.equal, ANY, out_dtype=dtypes.bool_)
ne_p = binop("ne", np.not_equal, ANY, out_dtype=dtypes.bool_)
lt_p = binop("lt", np.less, ANY, out_dtype=dtypes.bool_)
le_p = binop("le", np.less_equal, ANY, out_dtype=dtypes.bool_)
gt_p = binop("gt", np.greater, ANY, out_dtype=dtypes.bool_)
ge_p = binop("ge", np.greater_equal, ANY, out_dtype=dtypes.bool_)
for _p in (and_p, or_p, xor_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    defjvp_zero(_p)  # boolean/integer results carry no tangent


# --- stop_gradient: identity whose tangent is always zero ------------------------------------
stop_gradient_p = unop("stop_gradient", lambda x: x, ANY)
defjvp_zero(stop_gradient_p)


# --- integer_pow: x ** n for a static Python int n (exact, cheap derivatives) ------------
integer_pow_p = Primitive("integer_pow", elementwise=True)


@integer_pow_p.def_impl
def _integer_pow_impl(x, *, y: int):
    if y < 0 and np.asarray(x).dtype.kind not in "fc":
        raise ValueError("integer_pow: integers to negative integer powers are not allowed")
    return (
        np.power(x, np.asarray(y, dtype=np.asarray(x).dtype))
        if y >= 0
        else np.power(x, float(y)).astype(np.asarray(x).dtype)
    )


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x, *, y: int):
    check_kind("integer_pow", x, NUM)
    if not isinstance(y, int) or isinstance(y, bool):
        raise TypeError(f"integer_pow: exponent must be a Python int, got {type(y).__name__}")
    return x.strip_weak_type()  # (see ShapedArray.weak_type)


def _integer_pow_jvp_partial(g, ans, x, *, y):
    if y == 0:
        return Zero(ad.tangent_aval(lax_aval(x)))
    dx = _full_like(x, float(y)) if y == 2 else lax.mul(_full_like(x, float(y)), lax.integer_pow(x, y - 1))
    return lax.mul(g, lax.mul(dx, x) if y == 2 else dx)


def _integer_pow_vjp(ct, ans, p, which, *, y):
    x = p[0]
    if y == 0:
        return [None]
    if y == 2:
        return [ct * (2.0 * x)]
    return [ct * (float(y) * _integer_pow_impl(x, y=y - 1))]


defjvp(integer_pow_p, _integer_pow_jvp_partial)
defvjp_eager(integer_pow_p, _integer_pow_vjp, zero_if=lambda which, params: params["y"] == 0)
defbatch_elementwise(integer_pow_p)


# --- select_n: which ? cases[1] : cases[0] (bool), or cases[which] (int32) ------------
select_n_p = Primitive("select_n", elementwise=True)


@select_n_p.def_impl
def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return cases[0]
    if np.asarray(which).dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(np.clip(which, 0, len(cases) - 1), cases)


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    if all(type(t) is Zero for t in case_tangents):
        return ans, Zero.like(ans)
    return ans, select_n_p.bind(which, *[ad.instantiate(t) for t in case_tangents])


def _select_n_transpose(ct, which, *cases):
    if is_undefined(which):
        raise TypeError("select_n: the predicate cannot be a linear input")
    zeros = ad.zeros_like_aval(lax_aval(ct))
    cts = []
    for i, c in enumerate(cases):
        if not is_undefined(c):
            cts.append(None)
            continue
        branches = [zeros] * len(cases)
        branches[i] = ct
        cts.append(select_n_p.bind(which, *branches))
    return [None] + cts


def _select_n_vjp(ct, ans, p, which):
    which_arr, *cases = p
    zeros = np.zeros_like(ct)
    got = [None] * len(p)
    for i in which:
        if i == 0:
            raise TypeError("select_n: the predicate cannot be differentiated")
        branches = [zeros] * len(cases)
        branches[i - 1] = ct
        got[i] = _select_n_impl(which_arr, *branches)
    return got


jvp_rules[select_n_p] = _select_n_jvp
defbatch_elementwise(select_n_p)  # the predicate has the cases' shape, so it batches alike
ad.deftranspose(select_n_p, _select_n_transpose)
defvjp_eager(select_n_p, _select_n_vjp)


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
    return cases[0].strip_weak_type()  # (see ShapedArray.weak_type)


# --- convert_element_type --------------------------------------------------------------
convert_element_type_p = Primitive("convert_element_type", elementwise=True)


@convert_element_type_p.def_impl
def _convert_element_type_impl(x, *, new_dtype, weak_type=False):
    x = np.asarray(x)
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        x = x.real  # JAX's cast: the imaginary part is discarded (numpy_api warns)
    if x.dtype.kind == "f" and new_dtype.kind in "iu":
        # Like NumPy's cast but defined for NaN/inf/out-of-range (no UB): saturate, NaN->0.
        return dtypes.float_to_int(x, new_dtype)
    return x.astype(new_dtype)


def _convert_element_type_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (g,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if type(g) is Zero or np.dtype(new_dtype).kind not in "fc" or not dtypes.is_inexact(lax_aval(x).dtype):
        return ans, Zero.like(ans)
    return ans, lax.convert_element_type(g, new_dtype)


def _convert_element_type_transpose(ct, x, *, new_dtype, weak_type=False):
    # Complex -> real keeps the real part, whose transpose is ct + 0j; real -> complex
    # embeds, whose transpose keeps the real part: both are this same cast back.
    return [lax.convert_element_type(ct, x.aval.dtype)]


def _convert_element_type_vjp(ct, ans, p, which, *, new_dtype, weak_type=False):
    x = p[0]
    if x.dtype.kind not in "fc":
        return [None]
    ct = np.asarray(ct)
    return [(ct.real if x.dtype.kind == "f" else ct).astype(x.dtype)]  # (see the transpose)


jvp_rules[convert_element_type_p] = _convert_element_type_jvp
defbatch_elementwise(convert_element_type_p)
ad.deftranspose(convert_element_type_p, _convert_element_type_transpose)
defvjp_eager(convert_element_type_p, _convert_element_type_vjp, primals=AVALS)


@convert_element_type_p.def_abstract_eval
def _convert_element_type_abstract_eval(x, *, new_dtype, weak_type=False):
    dt = dtypes.canonicalize(new_dtype, what="convert_element_type new_dtype")
    return ShapedArray(x.shape, dt, weak_type)


# --- small helpers used by the rules above (all in terms of primitives) -----------------

lax_aval = get_aval_any


def _full_like(x, value):
    aval = lax_aval(x)
    return lax.broadcast_in_dim(np.asarray(value, aval.dtype), aval.shape, ())


def _one(x):
    return _full_like(x, 1)


def _one_minus_sq(x):
    return lax.sub(_one(x), lax.mul(x, x))


def _sumsq(x, y):
    return lax.add(lax.mul(x, x), lax.mul(y, y))


def _atan2_partial(g, num, other):
    """``g * num / (num**2 + other**2)``: with ``num = y`` the partial of ``atan2(x, y)``
    in x, with ``num = x`` minus its partial in y. Where ``num`` is infinite and ``other``
    finite the formula is inf/inf, but atan2 is constant there (±pi/2, 0 or ±pi): the
    partial is 0. ``num`` is made safe (1) there, so no discarded branch holds a NaN that
    a 0 cotangent would turn into NaN in reverse mode or at higher order (``_pow_dx``)."""
    inf = lax.bitwise_and(lax.eq(lax.abs(num), _full_like(num, np.inf)), lax.is_finite(other))
    safe = lax.select(inf, _one(num), num)
    return lax.mul(g, lax.select(inf, _full_like(num, 0), lax.div(safe, _sumsq(safe, other))))


def _trunc(x):
    return lax.select(lax.lt(x, _full_like(x, 0)), lax.ceil(x), lax.floor(x))


def _abs_jvp(g, ans, x):
    if lax_aval(x).dtype.kind != "c":
        return lax.mul(g, lax.sign(x))
    # d|z| = Re(conj(z) dz) / |z| (JAX's rule; 0 at z == 0, where |z| has a kink).
    zero = lax.eq(ans, _full_like(ans, 0))
    unit = lax.conj(lax.div(x, lax.complex(lax.select(zero, _one(ans), ans), _full_like(ans, 0))))
    return lax.real(lax.mul(g, unit))


def _sign_jvp(g, ans, x):
    if lax_aval(x).dtype.kind != "c":
        return Zero(ad.tangent_aval(lax_aval(x)))  # piecewise constant
    # sign(z) = z/|z| moves along the unit circle: d sign = i Im(conj(s) dz) s / |z|.
    # (JAX gives 0; this is the derivative, 0 at z == 0.)
    r = lax.abs(x)
    zero = lax.eq(r, _full_like(r, 0))
    safe_r = lax.select(zero, _one(r), r)
    tang = lax.imag(lax.mul(lax.conj(ans), g))
    scale = lax.select(zero, _full_like(r, 0), lax.div(tang, safe_r))
    return lax.mul(lax.complex(_full_like(r, 0), scale), ans)


def _minmax_share(g, better, x, y):
    """Tangent share of ``x`` in max/min: all of it where x wins, half at ties."""
    zeros = _full_like(g, 0)
    half = lax.mul(g, _full_like(g, 0.5))
    return lax.select(better(x, y), g, lax.select(lax.eq(x, y), half, zeros))


def _pow_dx(g, x, y):
    # y * x**(y-1), but 0 at x == y == 0: x**0 == 1 for every x, so d/dx is 0 there too,
    # where the formula gives 0 * inf = NaN. The exponent is made safe (1) there, so no
    # discarded branch holds inf/NaN that a 0 cotangent would turn into NaN in reverse
    # mode or at higher order. Only x == 0 is masked (JAX masks every y == 0), so at
    # x != 0 the mixed derivative d/dy (y x**(y-1)) = x**(y-1) (1 + y log x) stays exact.
    # Negative bases with integer-valued y are fine: x**(y-1) is real there.
    zero = _full_like(x, 0)
    corner = lax.bitwise_and(lax.eq(y, zero), lax.eq(x, zero))
    y_safe = lax.select(corner, _one(y), y)
    dx = lax.mul(y_safe, lax.pow(x, lax.sub(y_safe, _one(y))))
    return lax.mul(g, lax.select(corner, zero, dx))


def _pow_dy(g, ans, x):
    # d/dy x**y = log(x) x**y; defined as 0 where x == 0 (the limit for y > 0).
    zero = lax.eq(x, _full_like(x, 0))
    safe_x = lax.select(zero, _one(x), x)
    return lax.mul(g, lax.select(zero, _full_like(x, 0), lax.mul(lax.log(safe_x), ans)))


__all__ = [n for n in dir() if n.endswith("_p")] + ["unop", "binop", "kinds_text"]

from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives above)
