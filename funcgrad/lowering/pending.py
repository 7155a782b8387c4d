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
    "custom_lin": _LATER + "; appears only in linearized programs",
    "cond": _LATER + "; will lower to native branches",
    "while": _LATER + "; will lower to a native loop",
    "scan": _LATER + "; will lower to a native loop",
    "while_tape": _LATER + "; will lower to a loop filling a growable buffer",
    "tape_apply": _LATER + "; will lower to a loop over the growable buffer",
    "sort": _LATER,
    "cholesky": _LATER + "; will call the LAPACK already in the process",
    "triangular_solve": _LATER + "; will call the LAPACK/BLAS already in the process",
    "lu": _LATER + "; will call the LAPACK already in the process",
    "eigh": _LATER + "; will call the LAPACK already in the process",
    "qr": _LATER + "; will call the LAPACK already in the process",
    "svd": _LATER + "; will call the LAPACK already in the process",
    "erf": _LATER + "; needs a vector-math emitter",
    "erfc": _LATER + "; needs a vector-math emitter",
    "erf_inv": _LATER + "; needs a vector-math emitter",
    "lgamma": _LATER + "; needs a vector-math emitter",
    "digamma": _LATER + "; needs a vector-math emitter",
    "polygamma": _LATER + "; needs a vector-math emitter",
}

for _name, _reason in REASONS.items():
    if _name in PRIMITIVES:
        allow_missing("lower", PRIMITIVES[_name], _reason)
