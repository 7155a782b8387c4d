"""Primitives and the rule tables every interpreter reads.

A primitive is a name plus entries in these tables. Each family file under
``core/prims/`` declares a primitive and, right below it, a registration block that
fills in its rules::

    sin_p = unop("sin", np.sin, float_only=True)
    defjvp(sin_p, lambda g, x: mul(g, cos(x)))

Rule signatures (fixed; every transform relies on them):

=============  ===================================================================
table          signature
=============  ===================================================================
impl           ``impl(*arrays, **params) -> array | list[array]``   (NumPy)
abstract_eval  ``abstract_eval(*avals, **params) -> aval | list[aval]``
jvp            ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``
transpose      ``transpose(cts, *args, **params) -> list[ct | None]``
batch          ``batch(args, bdims, **params) -> (out, out_bdim)``
lower          ``lower(ctx, *args, **params)``   (registered by ``funcgrad.lowering``)
=============  ===================================================================

``jvp``/``transpose``/``batch`` tables are filled in by the autodiff and vmap work;
``lower`` lives in the mirror files under ``funcgrad/lowering`` so core never imports
llvmlite. ``ALLOWED_MISSING`` records, per rule kind, primitives deliberately without
a rule and why; the rule-coverage test checks every primitive against it.
"""
from __future__ import annotations

from typing import Callable


class Primitive:
    # No __slots__: families attach metadata (e.g. ``kinds``) that tests and lowering read.
    elementwise = False  # set by defbatch_elementwise: output[i] depends on inputs[i] only
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

    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} declared twice")
        PRIMITIVES[name] = self

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
lower_rules: dict[Primitive, Callable] = {}

RULE_TABLES = {
    "impl": impl_rules,
    "abstract_eval": abstract_eval_rules,
    "jvp": jvp_rules,
    "transpose": transpose_rules,
    "batch": batch_rules,
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
