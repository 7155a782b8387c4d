"""Per-element emitters for ``core/prims/special.py``: erf, erfc, erf_inv, lgamma,
digamma and polygamma.

The eager impls are the reference, so compiled code runs *their* algorithms, operation
for operation and in the same order, without FMA contraction: Newton on erf (on
log(erfc) in the tails) for erf_inv; the C library's lgamma with the same power series
about the roots 1 and 2; recurrence to >= 10, asymptotic series, Taylor series at the
root and cot-reflection for digamma/polygamma. Special values (poles, +-0, +-inf, NaN)
then come out exactly as the impls give them, because the same operations see them.
float32 runs the float64 function and rounds once, like the impls' ``_in_float64``.

How the results compare with eager (tests/test_lowering_special.py):

- erf/erfc call the C library's ``erf``/``erfc``, as ``math.erf``/``math.erfc`` do:
  bitwise equal.
- The impls' other transcendentals are NumPy ufuncs (exp, log, tan, power), which use
  NumPy's own SIMD code and differ from glibc's libm (called here) by up to about 1
  ulp in some arguments. erf_inv's Newton iterations absorb that (bitwise equal on the
  test grids); digamma and polygamma differ by a few ulp at most.
- ``math.lgamma`` is CPython's own Lanczos code, not libm's; glibc's ``lgamma_r`` is
  called here. Away from lgamma's roots they agree to ~2.5e-15 relative; next to the
  negative roots (-2.457, -2.747, ...) CPython's reflection loses accuracy to
  cancellation (glibc's does not), so there they differ by up to ~1e-15 times
  ``|lgamma(x)| + |lgamma(1 - x)|``, not relatively. Near 1 and 2 both use the same
  series: bitwise.
- Next to the negative roots of digamma/polygamma (reflection: psi(1 - x) - pi cot(pi x),
  a cancellation) the same holds: absolute differences of ~1 ulp of the cancelled terms.
  polygamma(n, x < 0) raises cot(pi x) to the power n + 1, so a 1-ulp difference in tan
  becomes ~n + 1 ulp (1e-14 at n = 60; below 2e-15 for n <= 7).

Each function is a scalar float64 IR function (its loops have data-dependent trip
counts, which do not vectorise), compiled once per process into its own module of the
one JIT engine and bound by name (as ``vecmath`` does); kernels only declare and call
it, so a kernel using digamma pays no extra LLVM time.
"""
from __future__ import annotations

import math
import os
import threading

from funcgrad.core.prims import special as sp  # the impls' own constants: the same numbers, not copies
from funcgrad.lowering import engine
from funcgrad.lowering.builder import F64, ModuleBuilder, Value
from funcgrad.lowering.elementwise import elementwise
from funcgrad.lowering.vecmath import _Fn  # its scalar (1-lane) arithmetic emitters

# Pure function of its argument; libm's errno writes are ignored, as for every libm call
# the lowering emits (elementwise.libm's attribute group #1).
_ATTRS = "nounwind willreturn memory(none)"


class _Scalar(_Fn):
    """``vecmath._Fn`` on one lane plus basic blocks: C library calls, if/else, and
    loops with an iteration cap (the NumPy impls loop a fixed number of times, masking
    elements that are done; stopping early per element gives the same values)."""

    def __init__(self, module):
        super().__init__(module, lanes=1)
        self.block = "entry"

    def fresh(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def label(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def start(self, label: str) -> None:
        self.lines.append(f"{label}:")
        self.block = label

    def br(self, label: str) -> None:
        self.lines.append(f"  br label %{label}")

    def libm(self, name: str, *args) -> str:
        self.module.declare(name, f"declare double @{name}({', '.join(['double'] * len(args))}) #1")
        return self._t(f"call double @{name}({', '.join('double ' + self.d(a) for a in args)}) #1")

    def sqrt(self, a) -> str:
        return self._intr("sqrt", a)

    def is_finite(self, a) -> str:
        return self.cmp("olt", self.abs(a), math.inf)

    def if_else(self, c: str, then, other) -> list:
        """Run ``then()`` or ``other()`` (each returning a list of values) by ``c``."""
        t, e, j = self.label("then"), self.label("else"), self.label("join")
        self.lines.append(f"  br i1 {c}, label %{t}, label %{e}")
        self.start(t)
        a = [self.d(v) for v in then()]
        ta = self.block
        self.br(j)
        self.start(e)
        b = [self.d(v) for v in other()]
        eb = self.block
        self.br(j)
        self.start(j)
        return [self._t(f"phi double [{u}, %{ta}], [{v}, %{eb}]") for u, v in zip(a, b)]

    def loop(self, n_max: int, init: list, cond, step) -> list:
        """``vals = init``; up to ``n_max`` times while ``cond(*vals)``: ``vals = step(*vals)``."""
        pre = self.block
        head, body, done = self.label("head"), self.label("body"), self.label("done")
        self.br(head)
        self.start(head)
        k, phis = self.fresh(), [self.fresh() for _ in init]
        slot = len(self.lines)
        self.lines += [""] * (1 + len(init))  # the phis, filled once the latch values exist
        more = self.and1(self._t(f"icmp slt i64 {k}, {n_max}"), cond(*phis))
        self.lines.append(f"  br i1 {more}, label %{body}, label %{done}")
        self.start(body)
        new = [self.d(v) for v in step(*phis)]
        k1 = self._t(f"add i64 {k}, 1")
        latch = self.block
        self.br(head)
        self.lines[slot] = f"  {k} = phi i64 [0, %{pre}], [{k1}, %{latch}]"
        for j, (p, a, v) in enumerate(zip(phis, init, new)):
            self.lines[slot + 1 + j] = f"  {p} = phi double [{self.d(a)}, %{pre}], [{v}, %{latch}]"
        self.start(done)
        return phis


# --- shared pieces, each mirroring the impl helper of the same name ----------------------------
def _power_series(f: _Scalar, coefs, z):
    """sum_j coefs[j-1] z^j, Horner from 0 like the impl."""
    out = 0.0
    for c in reversed(coefs):
        out = f.mul(f.add(out, c), z)
    return out


def _pow_neg(f: _Scalar, y, exponent: float):
    """``y ** exponent`` as NumPy computes it: exponent -1 is its reciprocal fast path."""
    return f.div(1.0, y) if exponent == -1.0 else f.libm("pow", y, exponent)


def _shift_sum(f: _Scalar, x, power: int, target: float):
    """(sum_{k<m} (x+k)^-power, x+m), m the smallest count making x+m >= target, capped
    at the impl's iteration count."""
    n_max = int(math.ceil(target)) + 1

    def step(acc, y):
        term = f.div(1.0, y) if power == 1 else _pow_neg(f, y, float(-power))
        return [f.add(acc, term), f.add(y, 1.0)]

    return f.loop(n_max, [0.0, x], lambda acc, y: f.cmp("olt", y, target), step)


def _digamma_asymptotic(f: _Scalar, y):
    w = f.div(1.0, f.mul(y, y))
    series = 0.0
    for k in range(8, 0, -1):
        series = f.mul(f.add(series, sp._BERNOULLI[k - 1] / (2 * k)), w)
    return f.sub(f.sub(f.libm("log", y), f.div(0.5, y)), series)


def _hurwitz_zeta(f: _Scalar, s: int, q):
    target = sp._SHIFT_TO + s
    head, y = _shift_sum(f, q, s, target)
    tail = f.add(f.div(_pow_neg(f, y, 1.0 - s), float(s - 1)), f.mul(0.5, _pow_neg(f, y, float(-s))))
    rising = float(s)
    term_power = _pow_neg(f, y, -s - 1.0)
    y2 = f.mul(y, y)
    for k in range(1, len(sp._BERNOULLI) + 1):
        tail = f.add(tail, f.mul(sp._BERNOULLI[k - 1] / math.factorial(2 * k) * rising, term_power))
        rising *= (s + 2 * k - 1) * (s + 2 * k)
        term_power = f.div(term_power, y2)
    return f.add(head, tail)


def _reflect(f: _Scalar, x, n: int, value_at_1_minus_x):
    """(psi^(n)(x) for x < 0 from psi^(n)(1-x), is x a pole) as in the impl."""
    r = f.sub(x, f._intr("roundeven", x))  # exact; cot(pi x) has period 1
    c = f.div(1.0, f.libm("tan", f.mul(math.pi, r)))
    poly = 0.0
    for coef in reversed(sp._cot_derivative_poly(n)):
        poly = f.add(f.mul(poly, c), float(coef))
    reflected = f.sub(f.mul((-1.0) ** n, value_at_1_minus_x), f.mul(math.pi ** (n + 1), poly))
    return reflected, f.cmp("oeq", r, 0.0)


# --- the functions (body builders: f, x -> result) -----------------------------------------
def _erf_inv(f: _Scalar, x):
    a = f.abs(x)

    def newton(y, step):
        for _ in range(6):
            e = f.mul(f.libm("exp", f.mul(f.neg(y), y)), sp._TWO_OVER_SQRT_PI)
            y = f.sub(y, step(y, e))
        return [y]

    def central():
        y = f.mul(f.mul(sp._SQRT_PI_OVER_2, a), f.add(1.0, f.mul(f.mul(math.pi / 12.0, a), a)))
        return newton(y, lambda y, e: f.div(f.sub(f.libm("erf", y), a), e))

    def tail():  # solve for q = 1 - a (exact here), so |x| near 1 keeps relative precision
        q = f.sub(1.0, a)
        t = f.sqrt(f.neg(f.libm("log", q)))
        v = f.sub(f.mul(t, t), f.libm("log", f.mul(t, math.sqrt(math.pi))))
        y = f.sqrt(f.sel(f.cmp("uge", v, 0.01), v, 0.01))  # np.maximum: NaN propagates
        y = f.sel(f.is_finite(y), y, 0.0)

        def step(y, e):  # Newton on log(erfc(y)) - log(q)
            erfc_y = f.libm("erfc", y)
            return f.div(f.mul(f.neg(f.libm("log", f.div(erfc_y, q))), erfc_y), e)

        return newton(y, step)

    (y,) = f.if_else(f.cmp("ole", a, 0.5), central, tail)
    y = f.sel(f.cmp("ogt", a, 1.0), math.nan, y)
    y = f.sel(f.cmp("oeq", a, 1.0), math.inf, y)
    return f.copysign(y, x)


def _lgamma(f: _Scalar, x):
    sign = f._t("alloca i32")  # lgamma_r (not lgamma): no global signgam, so threads may share it
    z1, z2 = f.sub(x, 1.0), f.sub(x, 2.0)

    def libm():
        decl = "declare double @lgamma_r(double, ptr) nounwind willreturn memory(argmem: write)"
        f.module.declare("lgamma_r", decl)
        return [f._t(f"call double @lgamma_r(double {x}, ptr {sign})")]

    def away_from_1():
        return f.if_else(f.cmp("olt", f.abs(z2), sp._LGAMMA2_RADIUS),
                         lambda: [_power_series(f, sp._LGAMMA2_COEFS, z2)], libm)

    # C's lgamma is +inf at the poles and on overflow, where math.lgamma raises and the
    # impl returns inf; both give inf for +-inf and NaN for NaN.
    (out,) = f.if_else(f.cmp("olt", f.abs(z1), sp._LGAMMA1_RADIUS),
                       lambda: [_power_series(f, sp._LGAMMA1_COEFS, z1)], away_from_1)
    return out


def _digamma_nonneg(f: _Scalar, x):
    d = f.sub(f.sub(x, sp._ROOT_HI), sp._ROOT_LO)

    def shifted():
        head, y = _shift_sum(f, x, 1, sp._SHIFT_TO)
        return [f.sub(_digamma_asymptotic(f, y), head)]

    near_root = f.cmp("olt", f.abs(d), sp._ROOT_RADIUS)
    return f.if_else(near_root, lambda: [_power_series(f, sp._ROOT_COEFS, d)], shifted)[0]


def _digamma(f: _Scalar, x):
    neg = f.cmp("olt", x, 0.0)
    out = _digamma_nonneg(f, f.sel(neg, f.sub(1.0, x), x))

    def reflected():
        value, pole = _reflect(f, x, 0, out)
        return [f.sel(pole, math.nan, value)]

    return f.if_else(neg, reflected, lambda: [out])[0]


def _polygamma(f: _Scalar, x, n: int):
    sign_fact = (-1.0) ** (n + 1) * math.factorial(n)
    neg = f.cmp("olt", x, 0.0)
    pos_arg = f.sel(neg, f.sub(1.0, x), f.abs(x))  # abs: -0.0 is the pole at +0
    out = f.mul(sign_fact, _hurwitz_zeta(f, n + 1, pos_arg))

    def reflected():
        value, pole = _reflect(f, x, n, out)
        return [f.sel(pole, math.copysign(math.inf, sign_fact), value)]

    out = f.if_else(neg, reflected, lambda: [out])[0]
    return f.sel(f.cmp("oeq", x, -math.inf), math.nan, out)


# --- the process-wide library and the emitters -------------------------------------------
_LIB: set = set()
_LIB_LOCK = threading.Lock()
_BUILDS: dict = {}  # library symbol -> its body builder ``build(f, x)`` (by name: engine.provider)


@engine.provider("special")
def _library(sym: str) -> None:
    """Compile ``double @sym(double)`` (body: ``_build_for(sym)``) once per process and
    bind it by name, so kernels can declare and call it."""
    with _LIB_LOCK:
        if sym in _LIB:
            return
        mb = ModuleBuilder()
        f = _Scalar(mb)
        r = f.d(_build_for(sym)(f, "%x"))
        mb.functions.append(f"define double @fg_main_{sym}(double %x) {_ATTRS} {{\nentry:\n"
                            + "\n".join(f.lines) + f"\n  ret double {r}\n}}")
        addrs = engine.compile_ir(mb.text(), [sym])
        engine.add_symbol(sym, addrs[sym])
        _LIB.add(sym)


def _in_float64(b, x: Value, call) -> Value:
    """``call(b, x64)`` on x widened to float64, rounded back to x's dtype (the impls'
    ``_in_float64``)."""
    if x.dtype == F64:
        return call(b, x)
    return b.cast("fptrunc", call(b, b.cast("fpext", x, F64)), x.dtype)


def _c_library(name: str):
    """Emitter calling the C library's float64 ``name`` (also for float32 inputs)."""
    decl = f"declare double @{name}(double) #1"
    return lambda b, x: _in_float64(b, x, lambda b, x64: b.call(name, F64, x64, decl=decl))


def _scalar_fn(sym: str, build):
    """Emitter calling the library function ``sym`` built by ``build(f, x)``."""
    _BUILDS[sym] = build

    def call(b, x64):
        _library(sym)
        return b.call(sym, F64, x64, decl=f"declare double @{sym}(double) {_ATTRS}")

    return lambda b, x: _in_float64(b, x, call)


def _polygamma_build(n: int):
    return lambda f, v: _polygamma(f, v, n)


def _build_for(sym: str):
    build = _BUILDS.get(sym)
    if build is None and sym.startswith("fg_sp_polygamma"):  # (replayed in a new process)
        build = _BUILDS[sym] = _polygamma_build(int(sym[len("fg_sp_polygamma"):]))
    return build


def _polygamma_emit(b, x, *, n: int):
    return _scalar_fn(f"fg_sp_polygamma{n}", _polygamma_build(n))(b, x)


elementwise(sp.erf_p, _c_library("erf"))
elementwise(sp.erfc_p, _c_library("erfc"))
elementwise(sp.erf_inv_p, _scalar_fn("fg_sp_erf_inv", _erf_inv))
elementwise(sp.lgamma_p, _scalar_fn("fg_sp_lgamma", _lgamma))
elementwise(sp.digamma_p, _scalar_fn("fg_sp_digamma", _digamma))
elementwise(sp.polygamma_p, _polygamma_emit)


# A forked child has only the forking thread: a lock another thread held at the fork
# would never be released there.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_LIB_LOCK._at_fork_reinit)
