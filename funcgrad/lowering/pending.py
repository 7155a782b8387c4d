"""Primitives without a lower rule yet, each with the reason (read by the rule-coverage
test). jit runs a program containing one of them with the jaxpr evaluator and says so
under FUNCGRAD_LOG_COMPILES=1."""
from funcgrad.core.primitive import PRIMITIVES, allow_missing

_INLINED = "inlined before lowering (its body is lowered in place)"
_LATER = "not lowered yet: jit evaluates programs containing it with the interpreter (jit issue #6)"

REASONS = {
    "jit_call": _INLINED,
    "custom_jvp_call": _INLINED,
    "custom_vjp_call": _INLINED,
    "checkpoint_call": _INLINED,
    "custom_lin": "inlined before lowering (its forward function is traced and lowered in place)",
}

for _name, _reason in REASONS.items():
    if _name in PRIMITIVES:
        allow_missing("lower", PRIMITIVES[_name], _reason)
