"""Per-element emitters for ``core/prims/elementwise.py`` (same order, same names).

Each emitter maps scalar ``Value``s to a scalar ``Value``; ``elementwise`` turns it
into a fused view rule. Floating-point math is strict IEEE (no fast-math flags), so
results match NumPy: add/sub/mul/div/sqrt/floor/... bitwise; transcendentals call the
C library (glibc's libm), which NumPy also uses for float64 on AVX2 machines — see
tests/test_lowering.py for the measured tolerances.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.prims import elementwise as ew
from funcgrad.errors import LoweringError
from funcgrad.lowering import nan_signs, vecmath
from funcgrad.lowering.builder import BOOL, F64, LLTYPE, Value, const, int_op, int_pred
from funcgrad.lowering.context import lower_view

# primitive -> its emitter for complex operands or results (``complex_math.py`` fills
# it; ``check_supported`` lets complex values reach only these primitives)
COMPLEX_EMITTERS: dict = {}


def elementwise(prim, emit, cheap: bool = False):
    """Register ``emit(b, *scalars, **params) -> scalar`` as ``prim``'s fused rule."""

    def rule(ctx, *xs, **params):
        fn = emit
        if ctx.out_aval.dtype.kind == "c" or any(x.dtype.kind == "c" for x in xs):
            fn = COMPLEX_EMITTERS[prim]
        return ctx.view(ctx.out_aval, lambda idx: fn(ctx.b, *[x.at(idx) for x in xs], **params))

    rule.__name__ = f"_{prim.name}_lower"
    lower_view(prim, flat=True, cheap=cheap)(rule)
    return rule


def _is_float(x: Value) -> bool:
    return x.dtype.kind == "f"


# --- float helpers -----------------------------------------------------------------
def _suffix(x: Value) -> str:
    return "f64" if x.dtype == F64 else "f32"


def intrinsic(name: str, *xs: Value, b):
    x = xs[0]
    full = f"llvm.{name}.{_suffix(x)}"
    args = ", ".join([x.ty] * len(xs))
    return b.call(full, x.dtype, *xs, decl=f"declare {x.ty} @{full}({args})")


def libm(name: str):
    """Emitter calling C ``name`` (float64) / ``namef`` (float32)."""

    def emit(b, *xs):
        x = xs[0]
        fn = name if x.dtype == F64 else name + "f"
        args = ", ".join([x.ty] * len(xs))
        return b.call(fn, x.dtype, *xs, decl=f"declare {x.ty} @{fn}({args}) #1")

    return emit


def math_fn(name: str):
    """Emitter for a transcendental: the vectorisable IR version from ``vecmath`` when
    there is one, else the C library (scalar calls: the loop does not vectorise); for a
    NaN argument, the NaN NumPy returns (``nan_signs``)."""
    fallback = libm(name)

    def emit(b, *xs):
        if vecmath.supports(name, xs[0].dtype):
            return _numpys_nan(b, name, xs[0], vecmath.call(b, name, *xs))
        return _numpys_nan(b, name, xs[0], fallback(b, *xs))

    return emit


def _numpys_nan(b, name: str, x: Value, r: Value) -> Value:
    """``r``, except NumPy's NaN for ``name`` where ``x`` is NaN: the sign is made with
    ``copysign`` and ``select``, operations that keep a NaN's sign (arithmetic need not)."""
    how = nan_signs.rule(name, x.dtype)
    if how is None:
        return r
    nan = const(x.dtype, np.nan)
    if how in ("+", "-"):
        v = const(x.dtype, np.copysign(np.nan, -1.0)) if how == "-" else nan
    else:
        v = intrinsic("copysign", nan, x if how == "keep" else _neg(b, x), b=b)
    return b.select(b.cmp("fcmp", "uno", x, x), v, r)


def _unary_intrinsic(name):
    return lambda b, x: intrinsic(name, x, b=b)


def _is_finite(b, x):
    ax = intrinsic("fabs", x, b=b)
    return b.cmp("fcmp", "olt", ax, const(x.dtype, np.inf))


# primitive -> the C / ``vecmath`` function computing it
_MATH_FUNCTIONS = {
    ew.exp_p: "exp", ew.log_p: "log", ew.log1p_p: "log1p", ew.expm1_p: "expm1", ew.log2_p: "log2", ew.log10_p: "log10",
    ew.sin_p: "sin", ew.cos_p: "cos", ew.tan_p: "tan", ew.asin_p: "asin", ew.acos_p: "acos", ew.atan_p: "atan",
    ew.sinh_p: "sinh", ew.cosh_p: "cosh", ew.tanh_p: "tanh", ew.asinh_p: "asinh", ew.acosh_p: "acosh",
    ew.atanh_p: "atanh", ew.cbrt_p: "cbrt",
}
for _prim, _fn in _MATH_FUNCTIONS.items():
    elementwise(_prim, math_fn(_fn))
elementwise(ew.sqrt_p, _unary_intrinsic("sqrt"))
elementwise(ew.floor_p, _unary_intrinsic("floor"), cheap=True)
elementwise(ew.ceil_p, _unary_intrinsic("ceil"), cheap=True)
elementwise(ew.round_p, _unary_intrinsic("roundeven"), cheap=True)  # half to even, like rint
elementwise(ew.is_finite_p, _is_finite, cheap=True)


# --- unary, numeric -------------------------------------------------------------------
def _neg(b, x):
    if _is_float(x):
        return Value(b.emit(f"fneg {x.ty} {x.ref}"), x.dtype)
    return b.op("sub", const(x.dtype, 0), x)


def _abs(b, x):
    if _is_float(x):
        return intrinsic("fabs", x, b=b)
    if x.dtype.kind == "u":
        return x
    return b.select(b.cmp("icmp", "slt", x, const(x.dtype, 0)), _neg(b, x), x)  # INT_MIN stays


def _sign(b, x):
    zero, one, m1 = const(x.dtype, 0), const(x.dtype, 1), const(x.dtype, -1)
    if _is_float(x):  # NaN -> NaN, +-0 -> +0, like numpy.sign
        r = b.select(b.cmp("fcmp", "oeq", x, zero), zero, x)
        r = b.select(b.cmp("fcmp", "olt", x, zero), m1, r)
        return b.select(b.cmp("fcmp", "ogt", x, zero), one, r)
    r = zero if x.dtype.kind == "u" else b.select(b.cmp("icmp", "slt", x, zero), m1, zero)
    return b.select(b.cmp("icmp", int_pred(x.dtype, "sgt"), x, zero), one, r)


def _not(b, x):
    return b.op("xor", x, const(x.dtype, True if x.dtype == BOOL else -1))


elementwise(ew.neg_p, _neg, cheap=True)
elementwise(ew.abs_p, _abs, cheap=True)
elementwise(ew.sign_p, _sign, cheap=True)
elementwise(ew.not_p, _not, cheap=True)


# --- binary, numeric --------------------------------------------------------------------
def _arith(fop, iop):
    return lambda b, x, y: b.op(fop if _is_float(x) else iop, x, y)


def _int_div(b, x, y):
    """C (truncating) division; x / 0 == 0 and INT_MIN / -1 == INT_MIN (wraps), never a trap."""
    zero, one, m1 = const(x.dtype, 0), const(x.dtype, 1), const(x.dtype, -1)
    if x.dtype.kind == "u":
        y0 = b.cmp("icmp", "eq", y, zero)
        return b.select(y0, zero, b.op("udiv", x, b.select(y0, one, y)))
    y0 = b.cmp("icmp", "eq", y, zero)
    ym1 = b.cmp("icmp", "eq", y, m1)
    bad = b.op("or", y0, ym1)
    safe = b.select(bad, one, y)
    q = b.op("sdiv", x, safe)
    q = b.select(ym1, _neg(b, x), q)
    return b.select(y0, zero, q)


def _div(b, x, y):
    return b.op("fdiv", x, y) if _is_float(x) else _int_div(b, x, y)


def _rem(b, x, y):
    if _is_float(x):
        return b.op("frem", x, y)  # C fmod: exact, sign of x
    zero, one, m1 = const(x.dtype, 0), const(x.dtype, 1), const(x.dtype, -1)
    if x.dtype.kind == "u":
        y0 = b.cmp("icmp", "eq", y, zero)
        return b.select(y0, zero, b.op("urem", x, b.select(y0, one, y)))
    bad = b.op("or", b.cmp("icmp", "eq", y, zero), b.cmp("icmp", "eq", y, m1))
    return b.select(bad, zero, b.op("srem", x, b.select(bad, one, y)))  # x%0 == 0, x%-1 == 0


def _ipow_helper(name: str, ty: str, lt: str) -> str:
    """x**y for integers by square-and-multiply (wrapping, like NumPy). Negative y:
    NumPy raises; compiled code returns the truncated value (1 for x == 1, +-1 for
    x == -1, else 0). ``lt`` is ``ult`` for unsigned ints: no exponent is negative."""
    return f"""define internal {ty} @{name}({ty} %x, {ty} %y) #0 {{
entry:
  %neg = icmp {lt} {ty} %y, 0
  br i1 %neg, label %negative, label %loop
loop:
  %acc = phi {ty} [1, %entry], [%acc2, %loop]
  %base = phi {ty} [%x, %entry], [%base2, %loop]
  %e = phi {ty} [%y, %entry], [%e2, %loop]
  %bit = and {ty} %e, 1
  %odd = icmp ne {ty} %bit, 0
  %m = mul {ty} %acc, %base
  %acc2 = select i1 %odd, {ty} %m, {ty} %acc
  %base2 = mul {ty} %base, %base
  %e2 = lshr {ty} %e, 1
  %more = icmp ne {ty} %e2, 0
  br i1 %more, label %loop, label %done
done:
  ret {ty} %acc2
negative:
  %is1 = icmp eq {ty} %x, 1
  %ism1 = icmp eq {ty} %x, -1
  %ybit = and {ty} %y, 1
  %yodd = icmp ne {ty} %ybit, 0
  %pm1 = select i1 %yodd, {ty} -1, {ty} 1
  %r1 = select i1 %ism1, {ty} %pm1, {ty} 0
  %r = select i1 %is1, {ty} 1, {ty} %r1
  ret {ty} %r
}}"""


def int_pow(b, x, y):
    ty, lt = x.ty, int_pred(x.dtype, "slt")
    name = f"fg_ipow_{ty}" + ("u" if lt == "ult" else "")
    fn = b.module.helper(name, lambda: _ipow_helper(name, ty, lt))
    return Value(b.emit(f"call {ty} {fn}({ty} {x.ref}, {ty} {y.ref})"), x.dtype)


def _pow(b, x, y):
    return libm("pow")(b, x, y) if _is_float(x) else int_pow(b, x, y)


def _max_min(gt_pred: str, signed_pred: str, bool_op: str):
    def emit(b, x, y):
        if x.dtype == BOOL:
            return b.op(bool_op, x, y)
        if _is_float(x):  # NaN-propagating, ties pick y: exactly numpy.maximum/minimum
            better = b.op("or", b.cmp("fcmp", gt_pred, x, y), b.cmp("fcmp", "uno", x, x))
        else:
            better = b.cmp("icmp", int_pred(x.dtype, signed_pred), x, y)
        return b.select(better, x, y)

    return emit


elementwise(ew.add_p, _arith("fadd", "add"), cheap=True)
elementwise(ew.sub_p, _arith("fsub", "sub"), cheap=True)
elementwise(ew.mul_p, _arith("fmul", "mul"), cheap=True)
elementwise(ew.div_p, _div)
elementwise(ew.rem_p, _rem)
elementwise(ew.pow_p, _pow)
elementwise(ew.max_p, _max_min("ogt", "sgt", "or"), cheap=True)
elementwise(ew.min_p, _max_min("olt", "slt", "and"), cheap=True)
elementwise(ew.atan2_p, math_fn("atan2"))
elementwise(ew.copysign_p, lambda b, x, y: intrinsic("copysign", x, y, b=b), cheap=True)
elementwise(ew.and_p, lambda b, x, y: b.op("and", x, y), cheap=True)
elementwise(ew.or_p, lambda b, x, y: b.op("or", x, y), cheap=True)
elementwise(ew.xor_p, lambda b, x, y: b.op("xor", x, y), cheap=True)

def _compare(fpred: str, ipred: str, bpred: str):
    """Comparison emitter with its LLVM predicates for floats, ints and bools."""

    def emit(b, x, y):
        if _is_float(x):
            return b.cmp("fcmp", fpred, x, y)
        return b.cmp("icmp", bpred if x.dtype == BOOL else int_pred(x.dtype, ipred), x, y)

    return emit


elementwise(ew.eq_p, _compare("oeq", "eq", "eq"), cheap=True)
elementwise(ew.ne_p, _compare("une", "ne", "ne"), cheap=True)
elementwise(ew.lt_p, _compare("olt", "slt", "ult"), cheap=True)
elementwise(ew.le_p, _compare("ole", "sle", "ule"), cheap=True)
elementwise(ew.gt_p, _compare("ogt", "sgt", "ugt"), cheap=True)
elementwise(ew.ge_p, _compare("oge", "sge", "uge"), cheap=True)

elementwise(ew.stop_gradient_p, lambda b, x: x, cheap=True)


# --- integer_pow ----------------------------------------------------------------------------
def _integer_pow(b, x, *, y: int):
    if not _is_float(x):
        return int_pow(b, x, const(x.dtype, y))
    if y < 0 or y > 8:  # NumPy computes these with pow()
        return libm("pow")(b, x, const(x.dtype, float(y)))
    if y == 0:
        return const(x.dtype, 1.0)
    acc, base, e = None, x, y  # square-and-multiply; exact for y == 2, ~1 ulp otherwise
    while e:
        if e & 1:
            acc = base if acc is None else b.op("fmul", acc, base)
        e >>= 1
        if e:
            base = b.op("fmul", base, base)
    return acc


_integer_pow_fused = elementwise(ew.integer_pow_p, _integer_pow)


@lower_view(ew.integer_pow_p, flat=True)
def _integer_pow_lower(ctx, x, *, y: int):
    if y < 0 and x.dtype.kind not in "fc":  # the evaluator raises ValueError here
        raise LoweringError("integer_pow: integers to negative integer powers are not allowed")
    return _integer_pow_fused(ctx, x, y=y)


# --- select_n ----------------------------------------------------------------------------------
def select_cases(b, which, *cases):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == BOOL:
        return b.select(which, cases[1], cases[0])
    r = cases[0]  # which >= k picks case k: out-of-range indices clamp, like np.clip
    for k in range(1, len(cases)):
        r = b.select(b.cmp("icmp", "sge", which, const(which.dtype, k)), cases[k], r)
    return r


elementwise(ew.select_n_p, select_cases, cheap=True)


# --- convert_element_type ------------------------------------------------------------------------
def convert(b, x: Value, new_dtype) -> Value:
    new = np.dtype(new_dtype)
    old = x.dtype
    if new == old:
        return x
    if new == BOOL:
        if old.kind == "f":
            return b.cmp("fcmp", "une", x, const(old, 0))  # NaN -> True, like astype(bool)
        return b.cmp("icmp", "ne", x, const(old, 0))
    if new.kind == "f":
        if old.kind == "f":
            return b.cast("fpext" if new.itemsize > old.itemsize else "fptrunc", x, new)
        return b.cast(int_op(old, "sitofp", "uitofp"), x, new)
    # integer result
    if old == BOOL:
        return b.cast("zext", x, new)
    if old.kind in "iu":  # extend by the source's signedness (NumPy: int32(-1) -> uint64 max)
        if new.itemsize == old.itemsize:
            return Value(x.ref, new)  # same bits, another reading
        return b.cast(int_op(old, "sext", "zext") if new.itemsize > old.itemsize else "trunc", x, new)
    # float -> int: truncate, saturate at the integer range, NaN -> 0
    name = f"llvm.{int_op(new, 'fptosi', 'fptoui')}.sat.{LLTYPE[new]}.{_suffix(x)}"
    return b.call(name, new, x, decl=f"declare {LLTYPE[new]} @{name}({x.ty})")


elementwise(ew.convert_element_type_p, lambda b, x, *, new_dtype, weak_type=False: convert(b, x, new_dtype), cheap=True)
