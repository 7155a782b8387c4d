"""Primitives without a lower rule, each with the reason (read by the rule-coverage
test): the call-like ones (``Primitive.inline``) are inlined before lowering
(``inline.py``). jit runs a program containing any other primitive without a lower rule
with the jaxpr evaluator and says so under FUNCGRAD_LOG_COMPILES=1."""
from funcgrad.core.primitive import PRIMITIVES, allow_missing

_INLINED_BODY = "inlined before lowering (its body is lowered in place)"
_INLINED_FN = "inlined before lowering (its forward function is traced and lowered in place)"

for _prim in PRIMITIVES.values():
    if _prim.inline:
        allow_missing("lower", _prim, _INLINED_BODY if _prim.jaxpr_params else _INLINED_FN)
