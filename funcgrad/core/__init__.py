"""funcgrad's core: avals, the IR, primitives and their rules, tracing, pytrees.

``core`` imports nothing from ``numpy_api``, ``transforms`` or ``lowering``.
"""
from funcgrad.core import prims  # noqa: F401  (declares every primitive)
from funcgrad.core.avals import ShapedArray, get_aval
from funcgrad.core.interpret import eval_closed_jaxpr, eval_jaxpr, jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from funcgrad.core.primitive import PRIMITIVES, Primitive
from funcgrad.core.staging import make_jaxpr, trace_to_jaxpr
from funcgrad.core.trace import Tracer, bind, is_eager
from funcgrad.core.typecheck import JaxprTypeError, check_jaxpr

__all__ = [
    "ShapedArray", "get_aval", "eval_jaxpr", "eval_closed_jaxpr", "jaxpr_as_fun",
    "ClosedJaxpr", "Eqn", "Jaxpr", "Literal", "Var", "PRIMITIVES", "Primitive",
    "make_jaxpr", "trace_to_jaxpr", "Tracer", "bind", "is_eager", "JaxprTypeError",
    "check_jaxpr",
]
