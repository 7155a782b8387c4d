"""Random program generator: a seed becomes a small straight-line program over
``funcgrad.numpy`` and ``funcgrad.lax``, printable as Python source.

Every statement is rendered twice, against funcgrad (``fnp``/``lax``) and against NumPy
(``np``/``tests.fuzz.ref``), and the NumPy rendering is *run* while the program is built:
a candidate statement that NumPy rejects, warns about, or that yields non-finite or large
values is thrown away. So every generated program is valid and numerically tame on its
inputs by construction, and the NumPy values double as the reference.
"""
from __future__ import annotations

import dataclasses
import os
import random
import re
import warnings
from typing import Callable

import numpy as np

from . import ref

# Program features that can be switched on and off: each adds templates (or an input) to
# the generator. A feature that is off draws nothing from a seed's random streams, so the
# programs of the features that are on are the same whichever others exist. The switch is
# ``FUZZ_FEATURES`` (``python -m tests.fuzz --features``): a comma-separated list of
# names (added to the defaults), ``-name`` (removed), ``all`` or ``none``.
FEATURES = {
    "zero_size": "zero-size array constants closed over (products, sums, concatenations, takes)",
    "nested_jit": "a jitted inner function closing over an array, called inside the program",
    "inner_linalg": "nested_jit's inner function also as det(C + mean(u)) (a body whose trace makes constants)",
    "export_call": "an exported jitted function closing over an array, called as E.call(x) or jit(E.call)(x)",
    "nonfinite": "an input holding NaN, +-inf and +-0.0, and statements whose NumPy value on them is defined",
}
# (all on: the CI slice and the long run cover every feature)
DEFAULT_FEATURES = frozenset({"zero_size", "nested_jit", "export_call", "inner_linalg", "nonfinite"})


def active_features(spec: str | None = None) -> frozenset:
    """The features ``spec`` (default: ``$FUZZ_FEATURES``) turns on."""
    spec = os.environ.get("FUZZ_FEATURES", "") if spec is None else spec
    on = set(DEFAULT_FEATURES)
    for item in filter(None, (x.strip() for x in spec.split(","))):
        name = item.lstrip("+-")
        if name == "all":
            on = set(FEATURES)
        elif name == "none":
            on = set()
        elif name not in FEATURES:
            raise ValueError(f"unknown fuzz feature {name!r}; known: {', '.join(FEATURES)}, all, none")
        elif item.startswith("-"):
            on.discard(name)
        else:
            on.add(name)
    return frozenset(on)


DTYPES = ("float64", "float32", "int32", "int64", "bool", "int8", "int16", "uint8", "uint16")
PY_SCALARS = ("pyfloat", "pyint")
MAX_ABS = {"f": 1e3, "i": 1e6, "u": 1e6, "b": 2}
BATCH = 3  # vmap batch size
# complex128 in the middle, a real float64 result (``t_complex``)
COMPLEX_TEXTS = [
    "{M}.abs({M}.exp(1j * {a}) * (0.5 - 2j) + {b})",
    "(({a} + 1j * {b}) * ({b} - 0.5j)).real",
    # (real part >= 0.5: away from sqrt's branch point, where the JVP is 0 * inf = nan as in
    # JAX, and from its cut along the negative reals, where imag jumps)
    "{M}.imag({M}.sqrt({M}.abs({a}) + 0.5 + 1j * {b}))",
    "{M}.real(({a} + 1j) / ({b} - 2j))",
    "{M}.abs({M}.sin({a} + 0.5j * {b})) + {M}.angle({b} - 1j)",
    "{M}.real({M}.sum({a} * (1 + 2j) * {b} ** 2))",
]


def _cast_render(a: Term, dt: str):
    """``a.astype(np.<dt>)`` (dtypes spelled ``np.float32`` in both renderings, as JAX
    users write them). A float cast to a small int is clipped into its range first:
    outside it the cast is C's undefined behaviour (funcgrad saturates, NumPy wraps), and
    loop bodies see other values than ``a.arr``, so checking the values would not do."""
    if a.kind == "f" and dt in ("int8", "int16", "uint8", "uint16"):
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        return lambda s: f"{s.M}.clip({a.render(s)}, {lo}, {hi}).astype(np.{dt})"
    return lambda s: f"{_paren(a.render(s))}.astype(np.{dt})"


@dataclasses.dataclass(frozen=True)
class Style:
    fg: bool
    M: str  # numpy-like module name
    L: str  # lax-like module name


FG = Style(True, "fnp", "lax")
NP = Style(False, "np", "ref")


@dataclasses.dataclass
class Term:
    """An expression: its text in each style, its NumPy value and what it depends on."""

    render: Callable[[Style], str]
    value: object
    deps: frozenset = frozenset()  # input positions of differentiable inputs it reads
    lowp: bool = False  # computed through float32 somewhere (compare it to float32 accuracy)
    local: bool = False  # reads a loop/branch-local name (so it is traced there)
    exact: bool = False  # an input or a literal: every path sees the same bits (``tie_free``)
    special: bool = False  # may hold NaN/inf/-0.0 (the ``nonfinite`` feature; zero signs are compared)
    nan_sign: bool = True  # its NaNs' signs are defined (``NAN_SIGN_READ``); False only when it holds NaN

    @property
    def arr(self):
        return np.asarray(self.value)

    @property
    def kind(self):
        k = self.arr.dtype.kind
        return "i" if k == "u" else k  # unsigned ints take part wherever ints do

    @property
    def shape(self):
        return self.arr.shape

    @property
    def same_everywhere(self):
        """Bitwise the same value on every path: ints and bools (exact arithmetic, and
        every float decision they came from was kept off its ties), inputs, literals."""
        return self.exact or self.kind in "ib"


def _const(text):
    return lambda s: text


def _paren(text):
    return text if re.fullmatch(r"[\w.]+(\[[^\[\]]*\])?", text) else f"({text})"


def literal(value) -> str:
    """Exact, copy-pasteable source for a NumPy value (repr round-trips floats; NaN and
    inf are spelled ``np.nan``/``np.inf``, a zero-size array by its shape)."""
    if isinstance(value, (bool, int, float)):  # a Python scalar argument stays one
        return _scalar_src(value)
    a = np.asarray(value)
    if a.ndim == 0:
        return f"np.{a.dtype.name}({_scalar_src(a.item())})"
    if a.size == 0:
        return f"np.zeros({a.shape}, dtype=np.{a.dtype.name})"
    return f"np.array({_list_src(a.tolist())}, dtype=np.{a.dtype.name})"


def _scalar_src(x) -> str:
    if isinstance(x, float) and not np.isfinite(x):
        return "np.nan" if np.isnan(x) else ("np.inf" if x > 0 else "-np.inf")
    return repr(x)


def _list_src(x) -> str:
    return f"[{', '.join(_list_src(e) for e in x)}]" if isinstance(x, list) else _scalar_src(x)


@dataclasses.dataclass
class Stmt:
    targets: list
    term: Term
    const: bool = False  # replaced by its value while shrinking


@dataclasses.dataclass(frozen=True)
class Def:
    """A module-level definition ahead of ``f`` (a closed-over constant, a jitted or
    exported inner function), with its name and text in each style."""

    name: str
    text: str
    np_name: str
    np_text: str

    def render(self, style: Style) -> tuple:
        return (self.name, self.text) if style.fg else (self.np_name, self.np_text)


class Program:
    def __init__(self, seed, inputs, diff, stmts, outputs, batched, defs=(), special=frozenset()):
        self.seed, self.inputs, self.diff = seed, inputs, diff
        self.stmts, self.outputs, self.batched = stmts, outputs, batched
        self.defs, self.special = tuple(defs), frozenset(special)  # (special: input positions)
        self.loss_outputs = [
            k for k, name in enumerate(outputs)
            if self.info(name).arr.dtype == np.float64
            and self.info(name).deps
        ]

    # -- structure -----------------------------------------------------------------
    def info(self, name) -> Term:
        for k, inp in enumerate(self.inputs):
            if name == f"x{k}":
                return Term(_const(name), inp, frozenset([k]) if k in self.diff else frozenset(),
                            np.asarray(inp).dtype == np.float32, special=k in self.special)
        for st in self.stmts:
            if name in st.targets:
                value = st.term.value
                if len(st.targets) > 1:
                    value = value[st.targets.index(name)]
                return Term(st.term.render, value, st.term.deps, st.term.lowp, special=st.term.special)
        raise KeyError(name)

    @property
    def fd_meaningful(self):
        """Central differences need float64 all the way from inputs to the loss."""
        return not any(self.info(self.outputs[k]).lowp for k in self.loss_outputs)

    def lowp_outputs(self):
        return {k for k, name in enumerate(self.outputs) if self.info(name).lowp}

    def signed_outputs(self):
        """The outputs whose zeros' signs must agree (computed elementwise from NaN/inf/-0.0
        inputs, where NumPy's -0.0 is well defined)."""
        return {k for k, name in enumerate(self.outputs) if self.info(name).special}

    def argnames(self):
        return [f"x{k}" for k in range(len(self.inputs))]

    # -- source --------------------------------------------------------------------
    def source(self, style: Style, name="f") -> str:
        body = [f"    {', '.join(st.targets)} = {st.term.render(style)}" for st in self.stmts]
        lines = [f"{n} = {text}" for n, text in self.used_defs(style, "\n".join(body))]
        lines.append(f"def {name}({', '.join(self.argnames())}):")
        lines += body
        lines.append(f"    return ({''.join(o + ', ' for o in self.outputs)})")
        return "\n".join(lines) + "\n"

    def used_defs(self, style: Style, text: str) -> list:
        """The definitions ``text`` reads, directly or through other definitions (the
        generator keeps the ones of rejected candidates too), in order."""
        used, keep = set(re.findall(r"\b\w+\b", text)), []
        for d in reversed(self.defs):
            n, t = d.render(style)
            if n in used:
                keep.append((n, t))
                used |= set(re.findall(r"\b\w+\b", t))
        return keep[::-1]

    def loss_source(self) -> str:
        """``loss(*differentiable inputs)``: a fixed, asymmetric weighting of the float64
        outputs, the other inputs closed over."""
        args = [f"x{k}" for k in self.diff]
        call = ", ".join(f"x{k}" if k in self.diff else f"X{k}" for k in range(len(self.inputs)))
        terms = []
        for k in self.loss_outputs:
            shape = self.info(self.outputs[k]).shape
            size = int(np.prod(shape))
            w = f"np.cos(1.3 * np.arange({size}.0) + {k}).reshape({shape})"
            terms.append(f"fnp.sum(o[{k}] * {w})")
        return (f"def loss({', '.join(args)}):\n    o = f({call})\n"
                f"    return {' + '.join(terms) or '0.0'}\n")

    def inputs_source(self) -> str:
        lines = [f"x{k} = {literal(v)}" for k, v in enumerate(self.inputs)]
        lines += [f"X{k} = x{k}" for k in range(len(self.inputs)) if k not in self.diff]
        return "\n".join(lines) + "\n"

    def batched_source(self) -> str:
        return "\n".join(f"xb{k} = {literal(v)}" for k, v in sorted(self.batched.items())) + "\n"

    # -- shrinking helpers -------------------------------------------------------------
    def with_outputs(self, outputs) -> "Program":
        return Program(self.seed, self.inputs, self.diff, self.stmts, list(outputs), self.batched, self.defs,
                       self.special)

    def with_constant(self, i) -> "Program":
        """Statement ``i`` replaced by its (reference) value as a literal."""
        st = self.stmts[i]
        vals = st.term.value if len(st.targets) > 1 else (st.term.value,)
        new = [Stmt([t], Term(_const(literal(v)), v, special=st.term.special), True)
               for t, v in zip(st.targets, vals)]
        return Program(self.seed, self.inputs, self.diff, self.stmts[:i] + new + self.stmts[i + 1:],
                       self.outputs, self.batched, self.defs, self.special)

    def without_dead(self) -> "Program":
        live, kept = set(self.outputs), []
        for st in reversed(self.stmts):
            if live & set(st.targets):
                kept.append(st)
                live |= set(re.findall(r"\b[vx]\d+\b", st.term.render(FG)))
        return Program(self.seed, self.inputs, self.diff, kept[::-1], self.outputs, self.batched, self.defs,
                       self.special)


# ---------------------------------------------------------------------------------------
# Templates. Each takes the generator and returns a Term (or None when its operands are
# not available); the generator validates it by evaluating the NumPy text.
# ---------------------------------------------------------------------------------------

UNARY_F = [  # (text, precondition on the operand's values)
    ("{M}.sin({a})", None), ("{M}.cos({a})", None), ("{M}.tanh({a})", None),
    ("{M}.arctan({a})", None), ("{M}.exp({a})", lambda v: np.all(np.abs(v) < 4)),
    ("{M}.log({M}.abs({a}) + 0.5)", None), ("{M}.sqrt({M}.abs({a}) + 0.5)", None),
    ("{a} * {a}", None), ("{a} ** 2", None), ("{a} ** 3", lambda v: np.all(np.abs(v) < 5)),
    ("-{a}", None), ("{M}.abs({a})", None), ("{M}.floor({a})", None), ("{M}.sign({a})", None),
    ("1.0 / ({a} * {a} + 1.0)", None), ("{M}.expm1({a})", lambda v: np.all(np.abs(v) < 4)),
    ("{M}.log1p({M}.abs({a}))", None), ("{M}.clip({a}, -1.0, 1.0)", None),
    ("{M}.square({a})", None), ("{M}.sinh({a})", lambda v: np.all(np.abs(v) < 4)),
]
UNARY_I = ["-{a}", "{M}.abs({a})", "{a} * {a}", "{a} // 2", "{a} % 3", "{M}.sign({a})"]
UNARY_B = ["~{a}", "{M}.logical_not({a})"]
BINARY_NUM = [
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / ({b} * {b} + 1.0)", "{M}.maximum({a}, {b})",
    "{M}.minimum({a}, {b})", "{M}.where({a} > {b}, {a}, {b})",
]
BINARY_F = [
    "{M}.arctan2({a}, {M}.abs({b}) + 1.0)", "{M}.logaddexp({a}, {b})", "{M}.hypot({a}, {b})",
    "({M}.abs({a}) + 0.5) ** {b}",
]
BINARY_I = ["{M}.floor_divide({a}, {M}.abs({b}) + 1)", "{M}.remainder({a}, {M}.abs({b}) + 1)"]
COMPARE = ["{a} > {b}", "{a} <= {b}", "{a} == {b}", "{a} != {b}", "{M}.greater_equal({a}, {b})"]
LOGICAL = ["{M}.logical_and({a}, {b})", "{a} | {b}", "{M}.logical_xor({a}, {b})", "{a} & {b}"]
FLOAT_LITS = ["1.5", "-0.5", "2.0", "0.25", "-3.0"]
INT_LITS = ["2", "-1", "3"]

# Decisions kept off their ties. Compiled code agrees with NumPy to rounding, not bitwise:
# it reassociates and vectorises float sums (NumPy sums pairwise) and has its own vector
# math. So a decision about a value within rounding of its threshold can go either way
# (as in JAX): seed 42452 branched on ``sum(outer(x1, x0)) > 0`` whose exact value is 0,
# NumPy's sum 0.0, jit's 1.8e-15, and took the other branch. Such a program tests the
# rounding, not funcgrad; so, as inputs are kept off kinks and branch points, a statement
# whose decision (cond's predicate, a data-dependent while test, a float comparison,
# ``where(a > b, ...)``) falls within TIE_REL * (|a| + |b| + scale + 1) of its threshold is
# rejected (``scale``: the sum of |terms| when ``a`` is a sum, whose rounding grows with
# it). Exact ties of values every path computes bitwise alike (ints, bools, inputs,
# literals, a value compared with itself) stay: those must agree. Values computed through
# float32 get float32's margin.
TIE_REL = {False: 1e-9, True: 1e-5}  # by ``lowp``


def near_tie(a, b, lowp=False, scale=0.0) -> bool:
    """Whether ``a`` and ``b`` (broadcast) are within rounding of each other anywhere."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return False  # (NaN/inf inputs: comparisons with them are exact, no rounding to be near)
    margin = TIE_REL[bool(lowp)] * (np.abs(a) + np.abs(b) + scale + 1.0)
    return bool(np.any(np.abs(a - b) <= margin))


# ``t_nonfinite``'s statements: NumPy's value on NaN/inf/-0.0 is IEEE's (x * 0.0 is NaN for
# inf and -0.0 for negative x, x + 0.0 is +0.0 for -0.0, NaN compares unequal to itself).
NONFINITE_UNARY = [
    "{a} * 0.0", "0.0 * {a}", "{a} + 0.0", "{a} - 0.0", "0.0 - {a}", "-{a}", "{a} * -1.5", "{a} / 2.0",
    "{M}.abs({a})", "{a} * {a}", "{M}.isnan({a})", "{M}.isinf({a})", "{M}.isfinite({a})", "{M}.signbit({a})",
    "{M}.copysign(1.0, {a})", "{M}.where({M}.isnan({a}), -0.0, {a})", "{M}.tanh({a})", "{M}.arctan({a})",
    "{M}.exp(-{M}.abs({a}))", "{a} == {a}", "{a} > 0.0", "{M}.maximum({a}, 0.0)", "{M}.minimum({a}, 1.0)",
    "{M}.sqrt({M}.abs({a}))", "{M}.floor({a})", "{a} * 1.0", "{a} - {a}",
]
NONFINITE_BINARY = ["{a} + {b}", "{a} * {b}", "{a} - {b}", "{M}.maximum({a}, {b})", "{a} == {b}", "{a} < {b}"]
# A NaN's sign is defined by the sign operations and copies (IEEE 754) and, in funcgrad, by
# the math functions (compiled code returns NumPy's NaN: ``lowering/nan_signs.py``); that
# of a NaN arithmetic makes is not (LLVM may turn ``-a + 0.0`` into ``0.0 - a``, NumPy's
# differs between machines), so ``signbit``/``copysign`` read only defined ones.
NAN_SIGN_SET = {"{M}.abs({a})", "{M}.exp(-{M}.abs({a}))"}  # defined whatever the operand's
NAN_SIGN_KEPT = {"-{a}", "{M}.tanh({a})", "{M}.arctan({a})"}  # defined if the operand's is
NAN_SIGN_READ = {"{M}.signbit({a})", "{M}.copysign(1.0, {a})"}


class Gen:
    def __init__(self, seed: int, features=None):
        self.seed = seed
        self.rng = random.Random(seed)
        self.vars: dict[str, Term] = {}
        self.stmts: list[Stmt] = []
        self.counter = 0
        self.features = active_features() if features is None else frozenset(features)
        self.defs: list[Def] = []
        self.def_values: dict = {}  # the NumPy style's definitions, by name
        # (t_nonfinite applies only to the special input's values: drawn more often)
        extra = [f"t_{name}" for name in FEATURES if name in self.features and name != "inner_linalg"
                 for _ in range(3 if name == "nonfinite" else 1)]
        self.simple = self.SIMPLE + extra
        self.top = self.TOP + extra

    # -- evaluation and validation ----------------------------------------------------
    def evaluate(self, text, env, special=False):
        """The NumPy value of ``text``; any floating-point warning rejects it, except the
        invalid/overflow/divide ones of ``special`` statements, where NaN and inf are meant."""
        ns = {"np": np, "ref": ref}
        ns.update(self.def_values)
        ns.update({k: t.value for k, t in self.vars.items()})
        ns.update(env)
        with warnings.catch_warnings(), np.errstate(all="ignore" if special else "raise"):
            warnings.simplefilter("error")
            return eval(text, ns)  # noqa: S307 - our own generated NumPy text

    @staticmethod
    def tame(value, special=False) -> bool:
        for v in value if isinstance(value, tuple) else (value,):
            a = np.asarray(v)
            if a.dtype.name not in DTYPES or a.ndim > 3 or a.size > 64:
                return False
            if special:
                continue
            if a.size and a.dtype.kind != "b" and not (np.all(np.isfinite(a)) and np.max(np.abs(a)) <= MAX_ABS[a.dtype.kind]):
                return False
        return True

    def make(self, render, operands, env, flag_lowp=False, special=False) -> Term | None:
        """A validated Term rendered by ``render`` from ``operands``."""
        try:
            value = self.evaluate(render(NP), env, special)
        except Exception:  # noqa: BLE001 - NumPy rejected the candidate: try another
            return None
        if not self.tame(value, special) or _python_scalar(value):
            return None
        deps = frozenset().union(*(o.deps for o in operands)) if operands else frozenset()
        f32 = any(np.asarray(v).dtype == np.float32 for v in (value if isinstance(value, tuple) else (value,)))
        lowp = any(o.lowp for o in operands) or f32 or flag_lowp
        special = special and np.asarray(value).dtype.kind == "f"
        return Term(render, value, deps, lowp, any(o.local for o in operands), special=special)

    def define(self, prefix, text, np_text=None) -> tuple:
        """A module-level definition (``Def``): constants have one text (NumPy only),
        functions one per style. Returns its names (funcgrad's, NumPy's)."""
        name = f"{prefix}{len(self.defs)}"
        np_name = name if np_text is None else f"{name}_np"
        np_text = text if np_text is None else np_text
        self.defs.append(Def(name, text, np_name, np_text))
        self.def_values[np_name] = eval(np_text, {"np": np, "ref": ref, **self.def_values})  # noqa: S307
        return name, np_name

    # -- operand choice ---------------------------------------------------------------
    def pick(self, pool, kinds="fib", pred=None):
        cands = [t for t in pool if t.kind in kinds and (pred is None or pred(t))]
        if not cands:
            return None
        # Prefer recent values so programs are chains rather than fans.
        return cands[min(len(cands) - 1, int(len(cands) * self.rng.random() ** 0.5))]

    def pick_partner(self, a, pool, kinds):
        if self.rng.random() < 0.3:
            lits = FLOAT_LITS if (a.kind == "f" or "i" not in kinds) and "f" in kinds else INT_LITS
            text = self.rng.choice(lits)
            return Term(_const(text), eval(text), exact=True)
        return self.pick(pool, kinds, lambda t: _broadcasts(t.shape, a.shape))

    @staticmethod
    def tie_free(a: Term, b: Term) -> bool:
        """A comparison of ``a`` with ``b`` decided the same way on every path (TIE_REL)."""
        if a is b or (a.same_everywhere and b.same_everywhere):
            return True
        return not near_tie(a.arr, b.arr, a.lowp or b.lowp)

    def fmt(self, text, **ops):
        return lambda s: text.format(M=s.M, L=s.L, **{k: _paren(v.render(s)) for k, v in ops.items()})

    # -- templates over a pool of Terms ---------------------------------------------------
    def t_unary(self, pool, env):
        a = self.pick(pool)
        if a is None:
            return None
        if a.kind == "f" or (a.kind == "i" and self.rng.random() < 0.3):
            text, pre = self.rng.choice(UNARY_F)
            if pre is not None and not pre(a.arr):
                return None
        else:
            text = self.rng.choice(UNARY_I if a.kind == "i" else UNARY_B)
        return self.make(self.fmt(text, a=a), [a], env)

    def t_binary(self, pool, env):
        a = self.pick(pool, "fi")
        if a is None:
            return None
        group = self.rng.choice([BINARY_NUM, BINARY_NUM, BINARY_F if a.kind == "f" else BINARY_I])
        b = self.pick_partner(a, pool, "fi")
        if b is None:
            return None
        if self.rng.random() < 0.5:
            a, b = b, a
        text = self.rng.choice(group)
        if "where" in text and not self.tie_free(a, b):
            return None
        return self.make(self.fmt(text, a=a, b=b), [a, b], env)

    def t_compare(self, pool, env):
        a = self.pick(pool, "fib")
        b = a and self.pick_partner(a, pool, "fi" if a.kind != "b" else "b")
        if b is None:
            return None
        texts = LOGICAL if a.kind == "b" and b.kind == "b" else COMPARE
        if texts is COMPARE and not self.tie_free(a, b):
            return None
        return self.make(self.fmt(self.rng.choice(texts), a=a, b=b), [a, b], env)

    def t_where(self, pool, env):
        p = self.pick(pool, "b")
        a = self.pick(pool, "fi")
        if p is None or a is None:
            return None
        b = self.pick_partner(a, pool, "fi")
        return b and self.make(self.fmt("{M}.where({p}, {a}, {b})", p=p, a=a, b=b), [p, a, b], env)

    def t_cast(self, pool, env):
        a = self.pick(pool)
        if a is None:
            return None
        dt = self.rng.choice(DTYPES)
        return self.make(_cast_render(a, dt), [a], env, flag_lowp=dt == "float32")

    def t_reduce(self, pool, env):
        a = self.pick(pool, "fib", lambda t: t.arr.ndim > 0)
        if a is None:
            return None
        axis = self.rng.choice([None, 0, -1] + list(range(a.arr.ndim)))
        kd = self.rng.random() < 0.2
        extra = f", axis={axis}" + (", keepdims=True" if kd else "")
        if a.kind == "b":
            fn = self.rng.choice(["any", "all", "sum"])
        else:
            fn = self.rng.choice(["sum", "max", "min", "mean", "prod", "argmax", "argmin",
                                  "cumsum", "var", "sum"])
            if fn == "prod" and not np.all(np.abs(a.arr) < 3):
                return None
            if fn in ("argmax", "argmin", "cumsum"):
                extra = f", axis={axis}"
        if fn == "cumsum" and axis is None:
            return None
        if fn == "sum" and self.rng.random() < 0.3:
            return self.make(lambda s: f"{_paren(a.render(s))}.sum()", [a], env)
        return self.make(lambda s: f"{s.M}.{fn}({a.render(s)}{extra})", [a], env)

    def t_shape(self, pool, env):
        a = self.pick(pool, "fib", lambda t: t.arr.ndim > 0)
        if a is None:
            return None
        nd = a.arr.ndim
        ax = self.rng.randrange(nd)
        choices = [
            ("{a}.T", [a]), ("{M}.reshape({a}, (-1,))", [a]), ("{a}.ravel()", [a]),
            (f"{{M}}.flip({{a}}, axis={ax})", [a]), (f"{{M}}.expand_dims({{a}}, {ax})", [a]),
            (f"{{M}}.roll({{a}}, 1, axis={ax})", [a]),
            (f"{{M}}.broadcast_to({{a}}, (2,) + {a.shape})", [a]),
        ]
        b = self.pick(pool, a.kind, lambda t: t.shape == a.shape)
        if b is not None:
            choices += [(f"{{M}}.concatenate([{{a}}, {{b}}], axis={ax})", [a, b]),
                        ("{M}.stack([{a}, {b}])", [a, b])]
        if nd >= 2:
            choices.append(("{M}.swapaxes({a}, 0, -1)", [a]))
        text, ops = self.rng.choice(choices)
        return self.make(self.fmt(text, a=a, b=b or a), ops, env)

    def t_static_index(self, pool, env):
        a = self.pick(pool, "fib", lambda t: t.arr.ndim > 0 and t.shape[0] > 0)
        if a is None:
            return None
        n = a.shape[0]
        k = self.rng.randrange(-n, n)
        options = [f"[{k}]", "[::-1]", f"[{max(k, 0)}:]", f"[..., {self.rng.randrange(a.shape[-1]) if a.shape[-1] else 0}]",
                   f"[[{self.rng.randrange(n)}, {self.rng.randrange(n)}]]", "[None]"]
        if a.arr.ndim >= 2:
            options.append(f"[:, {self.rng.randrange(a.shape[1])}]" if a.shape[1] else "[:, 0]")
        idx = self.rng.choice(options)
        return self.make(lambda s: f"{_paren(a.render(s))}{idx}", [a], env)

    def index_term(self, pool, n, env):
        """A traced integer scalar in ``[0, n)`` (from an int scalar or an argmax)."""
        i = self.pick(pool, "i", lambda t: t.arr.ndim == 0)
        if i is None or self.rng.random() < 0.5:
            b = self.pick(pool, "fi", lambda t: t.arr.ndim > 0)
            if b is None:
                return None
            fn = self.rng.choice(["argmax", "argmin"])
            i = self.make(lambda s: f"{s.M}.{fn}({b.render(s)})", [b], env)
            if i is None:
                return None
        return self.make(self.fmt(f"{{i}} % {n}", i=i), [i], env)

    def t_traced_index(self, pool, env):
        a = self.pick(pool, "fib", lambda t: t.arr.ndim > 0 and t.shape[0] > 0)
        if a is None:
            return None
        i = self.index_term(pool, a.shape[0], env)
        if i is None:
            return None
        form = self.rng.choice(["getitem", "take", "dslice"])
        if form == "getitem":
            return self.make(self.fmt("{a}[{i}]", a=a, i=i), [a, i], env)
        if form == "take":
            return self.make(self.fmt("{M}.take({a}, {i}, axis=0)", a=a, i=i), [a, i], env)
        size = self.rng.randint(1, a.shape[0])
        sizes = (size,) + a.shape[1:]
        starts = "(" + "".join(["{i}, "] + ["0, "] * (a.arr.ndim - 1)) + ")"
        return self.make(self.fmt(f"{{L}}.dynamic_slice({{a}}, {starts}, {sizes})", a=a, i=i), [a, i], env)

    def t_at(self, pool, env):
        a = self.pick(pool, "fib", lambda t: t.arr.ndim > 0 and t.shape[0] > 0)
        if a is None:
            return None
        if self.rng.random() < 0.5:
            i = Term(_const(str(self.rng.randrange(-a.shape[0], a.shape[0]))), 0)
        else:
            i = self.index_term(pool, a.shape[0], env)
            if i is None:
                return None
        meth = self.rng.choice(["set", "add", "mul", "min", "max"] if a.kind != "b" else ["set"])
        lits = {"f": FLOAT_LITS, "i": INT_LITS, "b": ["True", "False"]}[a.kind]
        v = self.pick(pool, a.kind, lambda t: t.arr.ndim == 0 and t.arr.dtype == a.arr.dtype)
        if v is None or self.rng.random() < 0.5:
            text = self.rng.choice(lits)
            v = Term(_const(text), eval(text))
        method_form = a.local  # x.at[...] on traced values; fnp.at(x) on eager ones

        def render(s):
            if not s.fg:
                head = f"ref.at({a.render(s)})"
            else:
                head = f"{_paren(a.render(s))}.at" if method_form else f"fnp.at({a.render(s)})"
            return f"{head}[{i.render(s)}].{meth}({v.render(s)})"

        return self.make(render, [a, i, v], env)

    def t_contract(self, pool, env):
        a = self.pick(pool, "fi", lambda t: t.arr.ndim > 0)
        if a is None:
            return None
        b = self.pick(pool, "fi", lambda t: t.arr.ndim > 0 and t.shape[0] in a.shape + (a.shape[-1],))
        if b is None:
            return None
        specs = {(1, 1): ["i,i->", "i,j->ij"], (2, 1): ["ij,j->i", "ij,i->j"],
                 (1, 2): ["i,ij->j", "j,ij->i"], (2, 2): ["ij,jk->ik", "ij,ij->i", "ij,ij->", "ij,ik->jk"]}
        options = ["{D}.dot({a}, {b})", "{a} @ {b}", "{M}.matmul({a}, {b})", "{M}.outer({a}, {b})",
                   "{a} @ {b}.T"]
        for spec in specs.get((a.arr.ndim, b.arr.ndim), []):
            options.append(f"{{M}}.einsum('{spec}', {{a}}, {{b}})")
        text = self.rng.choice(options)
        render = self.fmt(text.replace("{D}", "{M}"), a=a, b=b)
        if text.startswith("{D}"):  # NumPy's meaning of dot: ``ref.dot`` (see there)
            fg_dot, np_dot = render, self.fmt("ref.dot({a}, {b})", a=a, b=b)
            render = lambda s: fg_dot(s) if s.fg else np_dot(s)  # noqa: E731
        return self.make(render, [a, b], env)

    def t_sort(self, pool, env):
        a = self.pick(pool, "fi", lambda t: t.arr.ndim > 0)
        if a is None:
            return None
        ax = self.rng.choice([-1, 0])
        texts = [f"{{M}}.sort({{a}}, axis={ax})", f"-{{M}}.sort(-{{a}}, axis={ax})"]
        # argsort only of distinct values: the order of ties is not something to compare.
        if np.unique(a.arr, axis=None).size == a.arr.size:
            texts.append(f"{{M}}.argsort({{a}}, axis={ax})")
        return self.make(self.fmt(self.rng.choice(texts), a=a), [a], env)

    def t_complex(self, pool, env):
        """A real value computed through complex128 intermediates (so every check, jit
        and grad included, runs complex code; the outputs stay real)."""
        a = self.pick(pool, "f", lambda t: t.arr.dtype == np.float64)
        b = a and self.pick(pool, "f", lambda t: t.arr.dtype == np.float64 and _broadcasts(t.shape, a.shape))
        if b is None:
            return None
        text = self.rng.choice(COMPLEX_TEXTS)
        return self.make(self.fmt(text, a=a, b=b), [a, b], env)

    # -- feature templates (``FEATURES``) ------------------------------------------------
    def t_zero_size(self, pool, env):
        """A zero-size array constant, closed over, meeting a traced value (the program
        keeps it as a constant: a product, a sum over its empty axis, a concatenation, a
        take). Its value is the same with or without it (or itself empty)."""
        a = self.pick(pool, "fib", lambda t: not t.special)
        if a is None:
            return None
        z_dt = self.rng.choice(["float64", a.arr.dtype.name])
        forms = [("{M}.sum({a} * {Z})", (0,) + a.shape, z_dt), ("{M}.sum({a} * {Z}, axis=0)", (0,) + a.shape, z_dt),
                 ("{M}.take({a}, {Z})", (2, 0), "int64"), ("{M}.tile({a}, (2, 0)) * {Z}", (2, 0), z_dt)]
        if a.arr.ndim >= 1:
            forms.append(("{M}.concatenate([{Z}, {a}], axis=0)", (0,) + a.shape[1:], a.arr.dtype.name))
        text, shape, dt = self.rng.choice(forms)
        z, _ = self.define("Z", f"np.zeros({shape}, dtype=np.{dt})")
        return self.make(lambda s: text.format(M=s.M, a=_paren(a.render(s)), Z=z), [a], env)

    def inner_function(self, a: Term):
        """The body (texts over ``u`` per style) of an inner function of ``a``'s values
        that closes over a new float64 array constant."""
        shape = self.rng.choice([a.shape or (2,), a.shape[-1:] or (3,)])
        forms = ["u * {C}", "{M}.sin(u) + {C}", "(u - {C}) ** 2", "{M}.sum({M}.tanh(u * {C}))"]
        if a.arr.ndim >= 1 and self.rng.random() < 0.3:
            shape, forms = (a.shape[-1], 2), ["u @ {C}"]
        elif "inner_linalg" in self.features and self.rng.random() < 0.5:
            shape, forms = self.rng.choice([(2, 2), (3, 3)]), ["{M}.linalg.det({C} + {M}.mean(u))"]
        c, _ = self.define("C", literal(np.round(np.asarray([self.rng.uniform(-2, 2) for _ in range(int(np.prod(shape)))]), 3)
                                        .reshape(shape)))
        form = self.rng.choice(forms)
        return form.format(M="fnp", C=c), form.format(M="np", C=c)

    def t_nested_jit(self, pool, env):
        """``K(a)`` for a jitted ``K`` defined ahead of ``f``, closing over an array."""
        a = self.pick(pool, "f", lambda t: not t.special)
        if a is None:
            return None
        body, np_body = self.inner_function(a)
        k, k_np = self.define("K", f"fg.jit(lambda u: {body})", f"lambda u: {np_body}")
        return self.make(lambda s: f"{k if s.fg else k_np}({a.render(s)})", [a], env)

    def t_export_call(self, pool, env):
        """``E.call(a)`` or ``jit(E.call)(a)`` for an exported jitted function (closing
        over an array), used as exported or after a serialize/deserialize round trip."""
        a = self.pick(pool, "f", lambda t: t.arr.ndim > 0 and not t.special)
        if a is None:
            return None
        body, np_body = self.inner_function(a)
        text = f"fg.export(fg.jit(lambda u: {body}))(fg.ShapeDtypeStruct({a.shape}, np.{a.arr.dtype.name}))"
        if self.rng.random() < 0.5:
            text = f"fg.deserialize({text}.serialize(vjp_order=1))"
        e, e_np = self.define("E", text, f"lambda u: {np_body}")
        form = self.rng.choice(["{e}.call({a})", "fg.jit({e}.call)({a})"])
        return self.make(lambda s: form.format(e=e, a=a.render(s)) if s.fg else f"{e_np}({a.render(s)})", [a], env)

    def t_nonfinite(self, pool, env):
        """An elementwise statement over values holding NaN/inf/-0.0 (the special input
        and what came of it) and literals, from ``NONFINITE_*``: NumPy's value is defined
        there (NaN propagates, -0.0 keeps its sign), and funcgrad must give it."""
        a = self.pick(pool, "f", lambda t: t.special)
        if a is None:
            return None
        b = self.pick(pool, "f", lambda t: t.special and _broadcasts(t.shape, a.shape))
        if b is not None and self.rng.random() < 0.3:
            text, defined = self.rng.choice(NONFINITE_BINARY), False
            t = self.make(self.fmt(text, a=a, b=b), [a, b], env, special=True)
        else:
            text = self.rng.choice(NONFINITE_UNARY)
            if text in NAN_SIGN_READ and not a.nan_sign:
                return None
            defined = text in NAN_SIGN_SET or (text in NAN_SIGN_KEPT and a.nan_sign)
            t = self.make(self.fmt(text, a=a), [a], env, special=True)
        if t is not None and not defined:
            t.nan_sign = not np.isnan(t.arr).any()
        return t

    SIMPLE = ["t_unary"] * 4 + ["t_binary"] * 4 + ["t_compare", "t_where", "t_cast", "t_reduce",
                                                      "t_shape", "t_static_index", "t_traced_index",
                                                      "t_at", "t_contract", "t_sort", "t_complex"]

    # -- control flow ---------------------------------------------------------------
    def body(self, carry: Term, env: dict, extra_locals=()) -> Term | None:
        """A short random expression with ``carry``'s shape and dtype, over the carry,
        ``extra_locals`` and closed-over outer values that broadcast into it."""
        outer = [t for t in self.vars.values() if _broadcasts(t.shape, carry.shape)
                 and np.broadcast_shapes(t.shape, carry.shape) == carry.shape]
        pool = list(self.rng.sample(outer, min(len(outer), 2))) + list(extra_locals) + [carry]
        last = None
        for _ in range(self.rng.randint(1, 3)):
            for _attempt in range(10):
                t = getattr(self, self.rng.choice(self.simple))(pool, env)
                if t is not None:
                    pool.append(t)
                    last = t
                    break
        cands = [t for t in pool[-4:] if t.local and _broadcasts(t.shape, carry.shape)
                 and np.broadcast_shapes(t.shape, carry.shape) == carry.shape]
        if last is None or not cands:
            return None
        t = cands[-1]
        if t.shape != carry.shape:
            t = self.make(lambda s, t=t: f"{s.M}.broadcast_to({t.render(s)}, {carry.shape})", [t], env)
        if t is not None and t.arr.dtype != carry.arr.dtype:
            t = self.make(_cast_render(t, carry.arr.dtype.name), [t], env)
        return t

    def local(self, text, value, like: Term):
        return Term(_const(text), value, like.deps, like.lowp, True)

    def t_cond(self):
        o = self.pick(list(self.vars.values()))
        p = self.pick(list(self.vars.values()), "fib")
        if o is None or p is None:
            return None
        thr = self.rng.choice(["0.0", "0.5", "-1.0", "1"])
        if p.kind == "f" and near_tie(np.sum(p.arr), float(thr), p.lowp, np.sum(np.abs(p.arr))):
            return None  # a sum within rounding of its threshold (TIE_REL)
        c = self.local("c", o.value, o)
        t, e = self.body(c, {"c": o.value}), self.body(c, {"c": o.value})
        if t is None or e is None:
            return None
        render = lambda s: (f"{s.L}.cond({s.M}.sum({p.render(s)}) > {thr}, lambda c: {t.render(s)}, "  # noqa: E731
                            f"lambda c: {e.render(s)}, {o.render(s)})")
        return self.make(render, [o, p, t, e], {})

    def t_fori(self):
        o = self.pick(list(self.vars.values()), "fi")
        if o is None:
            return None
        n = self.rng.randint(0, 4)
        c = self.local("c", o.value, o)
        i = Term(_const("i"), np.int64(0), local=True)
        b = self.body(c, {"c": o.value, "i": np.int64(0)}, [i])
        if b is None:
            return None
        render = lambda s: f"{s.L}.fori_loop(0, {n}, lambda i, c: {b.render(s)}, {o.render(s)})"  # noqa: E731
        return self.make(render, [o, b], {})

    def t_while(self):
        o = self.pick(list(self.vars.values()), "fi")
        if o is None:
            return None
        n = self.rng.randint(0, 4)
        c = self.local("c[1]", o.value, o)
        b = self.body(c, {"c": (0, o.value)})
        if b is None:
            return None
        if self.rng.random() < 0.5:
            test = lambda s: f"c[0] < {n}"  # noqa: E731
        else:  # a data-dependent trip count
            limit = float(np.sum(o.arr)) + self.rng.choice([0.5, 2.0, 10.0])
            if not self.trip_tie_free(o, b, n + 2, limit):
                return None
            test = lambda s: f"{s.M}.logical_and(c[0] < {n + 2}, {s.M}.sum(c[1]) < {limit!r})"  # noqa: E731
        render = lambda s: (f"{s.L}.while_loop(lambda c: {test(s)}, lambda c: (c[0] + 1, {b.render(s)}), "  # noqa: E731
                            f"(0, {o.render(s)}))[1]")
        return self.make(render, [o, b], {})

    def trip_tie_free(self, o: Term, b: Term, count: int, limit: float) -> bool:
        """``t_while``'s test ``sum(c[1]) < limit`` stays off its tie (TIE_REL) on every
        iteration it decides: the NumPy body is run forward from ``o``, as the loop does."""
        val = o.value
        for k in range(count):
            if o.kind == "f" and near_tie(np.sum(val), limit, o.lowp or b.lowp, np.sum(np.abs(val))):
                return False
            if not np.sum(val) < limit:
                break
            try:
                val = self.evaluate(b.render(NP), {"c": (k, val)})
            except Exception:  # noqa: BLE001 - the whole loop's reference run rejects it
                break
        return True

    def t_scan(self):
        o = self.pick(list(self.vars.values()), "fi")
        xs = self.pick(list(self.vars.values()), "fib", lambda t: t.arr.ndim > 0 and 0 < t.shape[0] <= 4)
        if o is None or xs is None:
            return None
        c = self.local("c", o.value, o)
        x = self.local("x", xs.arr[0], xs)
        env = {"c": o.value, "x": xs.arr[0]}
        new_c = self.body(c, env, [x])
        if new_c is None:
            return None
        pool = [c, x, new_c]
        y = None
        for _ in range(10):
            y = getattr(self, self.rng.choice(self.simple))(pool, env)
            if y is not None and y.local:
                break
        if y is None or not y.local:
            y = x
        render = lambda s: (f"{s.L}.scan(lambda c, x: ({new_c.render(s)}, {y.render(s)}), "  # noqa: E731
                            f"{o.render(s)}, {xs.render(s)})")
        return self.make(render, [o, xs, new_c, y], {})

    TOP = SIMPLE + ["t_cond", "t_fori", "t_while", "t_scan"] * 2

    # -- the program -------------------------------------------------------------------
    def inputs(self):
        m, n = self.rng.choice([(2, 3), (3, 2), (1, 3), (3, 4), (2, 2)])
        shapes = [(), (n,), (m, n), (m, 1), (1, n), (m,)]
        count = self.rng.randint(1, 3)
        nprng = np.random.default_rng(self.seed)
        out, diff = [], []
        for k in range(count):
            dt = "float64" if k == 0 or self.rng.random() < 0.4 else self.rng.choice(DTYPES[1:] + PY_SCALARS)
            shape = self.rng.choice(shapes)
            if dt in PY_SCALARS:  # a weakly typed Python scalar argument
                v = round(float(nprng.uniform(-2, 2)), 3) if dt == "pyfloat" else int(nprng.integers(-3, 4))
                out.append(v)
                if dt == "pyfloat":
                    diff.append(k)
                self.vars[f"x{k}"] = Term(_const(f"x{k}"), v, frozenset([k]) if dt == "pyfloat" else frozenset(),
                                          exact=True)
                continue
            if dt.startswith("float"):
                v = np.round(nprng.uniform(-2, 2, size=shape), 3).astype(dt)
            elif dt == "bool":
                v = nprng.random(size=shape) < 0.5
            else:
                v = nprng.integers(-3, 4, size=shape).astype(dt)
            v = np.asarray(v, dtype=dt)
            out.append(v)
            if dt == "float64":
                diff.append(k)
            self.vars[f"x{k}"] = Term(_const(f"x{k}"), v, frozenset([k]) if dt == "float64" else frozenset(),
                                      dt == "float32", exact=True)
        if "nonfinite" in self.features and self.rng.random() < 0.5:
            k = len(out)  # not differentiated, not batched: closed over by the loss, as is
            dt = "float32" if self.rng.random() < 0.2 else "float64"
            v = np.asarray(nprng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.0], size=self.rng.choice(shapes)),
                           dtype=dt)
            out.append(v)
            self.vars[f"x{k}"] = Term(_const(f"x{k}"), v, frozenset(), dt == "float32", exact=True, special=True)
        batched = {}
        for k, v in enumerate(out):
            if isinstance(v, np.ndarray) and v.dtype.kind == "f" and not self.vars[f"x{k}"].special:
                noise = nprng.uniform(-0.05, 0.05, size=(BATCH,) + v.shape)
                batched[k] = (np.round(v + noise, 4)).astype(v.dtype)
        return out, diff, batched

    def program(self) -> Program:
        inputs, diff, batched = self.inputs()
        n_stmts = self.rng.randint(2, 8)
        for _ in range(200):
            if len(self.stmts) >= n_stmts:
                break
            t = getattr(self, self.rng.choice(self.top))
            term = t(list(self.vars.values()), {}) if t.__name__ in self.simple else t()
            if term is None:
                continue
            names = []
            for _j in range(len(term.value) if isinstance(term.value, tuple) else 1):
                names.append(f"v{len(inputs) + self.counter}")
                self.counter += 1
            self.stmts.append(Stmt(names, term))
            vals = term.value if len(names) > 1 else (term.value,)
            for nm, v in zip(names, vals):
                self.vars[nm] = Term(_const(nm), v, term.deps, term.lowp, special=term.special,
                                     nan_sign=term.nan_sign)
        used = set()
        for st in self.stmts:
            used |= set(re.findall(r"\b[vx]\d+\b", st.term.render(FG)))
        names = [nm for st in self.stmts for nm in st.targets]
        outputs = [nm for nm in names if nm not in used][-4:] or list(self.vars)[-1:]
        special = {k for k in range(len(inputs)) if self.vars[f"x{k}"].special}
        return Program(self.seed, inputs, diff, self.stmts, outputs, batched, self.defs, special)


def _python_scalar(value) -> bool:
    """Arithmetic on Python scalars alone is Python's, not funcgrad's (``~(x > x)`` is
    ``-1`` for a float ``x``, a bool when ``x`` is traced): not a program to test."""
    values = value if isinstance(value, tuple) else (value,)
    return any(isinstance(v, (bool, int, float)) and not isinstance(v, np.generic) for v in values)


def _broadcasts(s1, s2) -> bool:
    try:
        np.broadcast_shapes(s1, s2)
        return True
    except ValueError:
        return False


def generate(seed: int, features=None) -> Program:
    """The program of ``seed`` with ``features`` (default: ``active_features()``) on."""
    with np.errstate(all="ignore"):  # (sums of NaN/inf inputs in tie checks; statements set their own)
        return Gen(seed, features).program()
