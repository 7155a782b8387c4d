"""Primitives and the rule tables every interpreter reads.

A primitive is a name plus entries in these tables. Each family file under
``core/prims/`` declares a primitive and, right below it, a registration block that
fills in its rules::

    sin_p = unop("sin", np.sin)           # declared elementwise by its family
    defjvp(sin_p, lambda g, ans, x: lax.mul(g, lax.cos(x)))
    defvjp_eager(sin_p, lambda ct, ans, p, which: [ct * np.cos(p[0])])   # optional

Rule signatures (fixed; every transform relies on them):

=============  ===================================================================
table          signature
=============  ===================================================================
impl           ``impl(*arrays, **params) -> array | list[array]``   (NumPy)
abstract_eval  ``abstract_eval(*avals, **params) -> aval | list[aval]``
jvp            ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``
transpose      ``transpose(cts, *args, **params) -> list[ct | None]``
batch          ``batch(args, bdims, **params) -> (out, out_bdim)``
eager_vjp      ``rule(ct, ans, primals, which, **params) -> list[ct | None]``  (NumPy)
lower          ``lower(ctx, *args, **params)``   (registered by ``funcgrad.lowering``)
=============  ===================================================================

``eager_vjp`` is the optional eager cotangent rule: NumPy code run only by the
outermost eager ``grad`` (``transforms/eager_vjp.py``), where every value is concrete.
``primals`` are the primitive's inputs (or only their avals, or ``None``: see
``defvjp_eager``), ``ans`` its output (or ``None``), ``which`` the input positions whose
cotangent is wanted; the rule returns one cotangent or ``None`` per input. The entry is
hand-written (``defvjp_eager``, in the registration block), derived when the rule is
registered (by ``defjvp`` for primitives declared elementwise, by ``deflinear`` from the
transpose rule; see ``core/ad_util.py``), or ``NO_EAGER_RECORD`` for primitives whose
output never has a tangent (``defjvp_zero``). A primitive absent from the table (allow-
listed with the reason) runs through the general reverse mode on the eager tape.

``jvp``/``transpose``/``batch`` tables are filled in by the autodiff and vmap work;
``lower`` lives in the mirror files under ``funcgrad/lowering`` so core never imports
llvmlite. ``ALLOWED_MISSING`` records, per rule kind, primitives deliberately without
a rule and why; the rule-coverage test checks every primitive against it.
"""
from __future__ import annotations

from typing import Callable


class Primitive:
    """``elementwise``: declared by the primitive (the ``unop``/``binop`` families pass it):
    all operands and the output share one shape and output[i] depends on inputs[i] only,
    so JVP partials are pointwise scalings and batching is uniform."""

    # No __slots__: families attach metadata (e.g. ``kinds``) that tests and lowering read.
    # Eagerly, Python-scalar operands reach ``impl`` as NumPy values, except for call
    # primitives that run user code, which must see them as weakly typed Python scalars.
    impl_takes_python_scalars = False
    # Higher-order primitives: the params holding closed sub-jaxprs (a ClosedJaxpr, or a
    # tuple of them like cond's ``branches``). Passes that walk nested programs (lowering's
    # checks, inlining) read this instead of knowing each primitive.
    jaxpr_params: tuple[str, ...] = ()
    # Call-like primitives whose body is what runs in compiled code: lowering inlines
    # them (their derivative rules do not matter there) instead of lowering them.
    inline = False

    def __init__(self, name: str, multiple_results: bool = False, *, elementwise: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.elementwise = elementwise
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} declared twice")
        PRIMITIVES[name] = self
        if multiple_results:
            allow_missing("eager_vjp", self, SEVERAL_RESULTS)

    def bind(self, *args, **params):  # replaced by funcgrad.core.trace at import
        raise RuntimeError("funcgrad.core.trace is not imported")

    def def_impl(self, rule: Callable) -> Callable:
        impl_rules[self] = rule
        return rule

    def def_abstract_eval(self, rule: Callable) -> Callable:
        abstract_eval_rules[self] = rule
        return rule

    def __repr__(self):
        return self.name

    # Primitives are compared by identity; the name is only for printing.
    __hash__ = object.__hash__


PRIMITIVES: dict[str, Primitive] = {}

impl_rules: dict[Primitive, Callable] = {}
abstract_eval_rules: dict[Primitive, Callable] = {}
jvp_rules: dict[Primitive, Callable] = {}
transpose_rules: dict[Primitive, Callable] = {}
batch_rules: dict[Primitive, Callable] = {}
eager_vjp_rules: dict[Primitive, Callable] = {}
lower_rules: dict[Primitive, Callable] = {}

RULE_TABLES = {
    "impl": impl_rules,
    "abstract_eval": abstract_eval_rules,
    "jvp": jvp_rules,
    "transpose": transpose_rules,
    "batch": batch_rules,
    "eager_vjp": eager_vjp_rules,
    "lower": lower_rules,
}

# rule kind -> {primitive name: reason}. Only for rules that genuinely do not apply;
# an interpreter meeting a missing rule raises NotImplementedError naming both.
ALLOWED_MISSING: dict[str, dict[str, str]] = {kind: {} for kind in RULE_TABLES}


def allow_missing(kind: str, prim: Primitive, reason: str) -> None:
    ALLOWED_MISSING[kind][prim.name] = reason


def missing_rule(kind: str, prim: Primitive) -> NotImplementedError:
    reason = ALLOWED_MISSING.get(kind, {}).get(prim.name)
    msg = f"primitive '{prim.name}' has no {kind} rule"
    if reason:
        msg += f": {reason}"
    return NotImplementedError(msg)


# --- the eager cotangent rule ---------------------------------------------------------------
# What a rule reads of the primitive's inputs (``rule.residuals[0]``): their values, only
# their avals (shape and dtype), or nothing; ``rule.residuals[1]``: whether it reads the
# output. The eager tape keeps just that, so large intermediates are freed early.
VALUES, AVALS, NOTHING = "values", "avals", "nothing"

# The ``eager_vjp`` entry of a primitive whose output never has a tangent: the eager
# tape computes it and records nothing.
NO_EAGER_RECORD = "no eager record: the output has no tangent"

GENERAL_PATH = "uses the general reverse mode for this one primitive: "
SEVERAL_RESULTS = GENERAL_PATH + "no NumPy rule is written for this several-output primitive"


def defvjp_eager(prim: Primitive, rule: Callable, *, primals: str = VALUES, ans: bool = False,
                 zero_if: Callable | None = None) -> Callable:
    """Register ``prim``'s eager cotangent rule (NumPy; signature in the table above).

    ``primals``/``ans``: the residuals it reads (``VALUES``, ``AVALS`` or ``NOTHING`` of
    the inputs; the output or not). ``zero_if(which, params)``: true when, with tangents
    only at the positions ``which``, the output has none (nothing is recorded). A rule of
    a several-output primitive gets a list of cotangents, ``Zero`` where an output got none.
    """
    residuals = (primals, ans)
    if getattr(rule, "residuals", residuals) != residuals or getattr(rule, "zero_if", zero_if) is not zero_if:
        raise ValueError(f"{prim.name}: this eager cotangent rule is already registered with other residuals")
    rule.residuals = residuals  # read per primitive on the tape's hot path: plain attributes
    rule.zero_if = zero_if
    eager_vjp_rules[prim] = rule
    ALLOWED_MISSING["eager_vjp"].pop(prim.name, None)
    return rule


def def_no_eager_record(prim: Primitive) -> None:
    """``prim``'s output never has a tangent: the eager tape records nothing for it."""
    eager_vjp_rules[prim] = NO_EAGER_RECORD
    ALLOWED_MISSING["eager_vjp"].pop(prim.name, None)
