"""The staging fast path of the commonest elementwise ``funcgrad.numpy`` calls.

Under ``jit``/``make_jaxpr`` most operations of a numerical function are an elementwise
function (or an operator on a tracer) applied to tracers of the staging trace that share
one strong dtype and shape, or to such a tracer and a Python ``int``/``float``. For those
the general path (the values boundary, promotion, the body's dtype dispatch, ``lax``,
``bind``'s search for the interpreting trace) decides nothing: the result is always the
one primitive on the operands as they are (the scalar: promoted and broadcast by the
promotion function's own scalar plan, ``_util.traced_and_scalar``). ``unary``/``binary``
make an *attempt*: the staged result when the call is such a case, else None (the caller
then takes the general path). The equation recorded is the general path's, source line
included.

``ATTEMPTS`` maps a ``funcgrad.numpy`` name to its attempt, for the operators on tracers
(``methods.py``), which thus skip the public function's layers too. An attempt's caller
(the operator method, or the function's body) is funcgrad's, so the search for the
user's line starts at the frame that called that.

The same attempts take the eager tape's operands (an outermost ``grad``, ``on_tape``):
its tracers, with plain arrays or Python scalars, of one strong dtype. There the general
path decides nothing either -- broadcasting aside, which is the general path's own
``broadcast_in_dim`` (trailing alignment) -- so the attempt binds those primitives
directly: the tape records exactly what the general path records.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core.array import Array
from funcgrad.core.staging import JaxprTracer, stage_binary, stage_unary
from funcgrad.core.trace import TRACE_STATE, Tracer, get_aval_any
from funcgrad.numpy_api._util import SCALAR_RULES, traced_and_scalar

_st = TRACE_STATE
_SCALARS = (int, float)  # (not bool: type(True) is bool; bools promote differently)
# Kinds for which the numeric bodies (add, subtract, multiply, negative) are the primitive
# as it is (bools take another primitive or raise) and inexact ones (sin, divide, ...) need
# no promotion.
NUMERIC, INEXACT = "iufc", "fc"

ATTEMPTS: dict = {}


def unary(name: str, prim, kinds: str):
    """The attempt of the one-operand function ``name``: ``prim`` on a strong tracer of
    the staging trace whose dtype kind is in ``kinds``."""
    attempt = ATTEMPTS[name] = _unary(name, prim, kinds)
    return attempt


def binary(name: str, prim, kinds: str, promote):
    """The attempt of the two-operand function ``name`` (whose general path promotes with
    ``promote``): ``prim`` on two tracers of the staging trace of one strong dtype (kind
    in ``kinds``) and shape, or on an inexact strong tracer and a Python int/float
    promoted as ``promote`` does (which keeps the tracer's dtype)."""
    rule = SCALAR_RULES[promote]
    attempt = ATTEMPTS[name] = _binary(name, prim, kinds, rule)
    return attempt


# (frames between the stage_* call and the user's line: the attempt and its caller)
_SKIP = 2


def on_tape(x) -> bool:
    """``x`` is a tracer of a trace of concrete values: the eager tape of an outermost
    ``grad``, which records each primitive with its NumPy cotangent rule."""
    return isinstance(x, Tracer) and x._trace.concrete_values


def _unary(name, prim, kinds):
    def attempt(x):
        if type(x) is JaxprTracer:
            a = x.aval
            if not a.weak_type and a.dtype.kind in kinds and x._trace.main is _st.dynamic:
                return stage_unary(prim, x, _SKIP)
        elif on_tape(x):
            a = x.aval
            if not a.weak_type and a.dtype.kind in kinds and _st.dynamic is None:
                return prim.bind(x)
        return None

    attempt.__name__ = f"staged_{name}"
    return attempt


def _binary(name, prim, kinds, rule):
    def attempt(x1, x2):
        t1, t2 = type(x1), type(x2)
        if t1 is JaxprTracer:
            a1 = x1.aval
            if a1.weak_type or x1._trace.main is not _st.dynamic:
                return None
            if t2 is JaxprTracer:
                a2 = x2.aval
                if (a2 is a1 or (a2.shape == a1.shape and a2.dtype is a1.dtype and not a2.weak_type)) \
                        and a1.dtype.kind in kinds and x2._trace.main is x1._trace.main:
                    return stage_binary(prim, x1, x2, _SKIP)
                return None
            if t2 in _SCALARS and a1.dtype.kind in "fc":
                return _pair(prim, traced_and_scalar(rule, x1, x2))
        elif t2 is JaxprTracer and t1 in _SCALARS:
            a2 = x2.aval
            if not a2.weak_type and a2.dtype.kind in "fc" and x2._trace.main is _st.dynamic:
                return _pair(prim, traced_and_scalar(rule, x1, x2))
        elif (on_tape(x1) or on_tape(x2)) and _st.dynamic is None:
            return _tape_binary(prim, kinds, rule, x1, x2)
        return None

    attempt.__name__ = f"staged_{name}"
    return attempt


def _tape_aval(x):
    """The aval of an eager-tape operand (a tape tracer or a plain array), else None."""
    t = type(x)
    if t is np.ndarray or t is Array:
        if not x.dtype.isnative:
            return None
        try:
            return get_aval_any(x)
        except Exception:  # (an unsupported dtype: the general path names the function)
            return None
    return x.aval if on_tape(x) else None


_broadcast_shapes: dict = {}


def _tape_binary(prim, kinds, rule, x1, x2):
    """``prim`` on eager-tape operands as the general path gives it them, or None."""
    a1, a2 = _tape_aval(x1), _tape_aval(x2)
    if a1 is not None and a2 is not None:
        if a1.weak_type or a2.weak_type or a1.dtype != a2.dtype or a1.dtype.kind not in kinds:
            return None
        if a1.shape != a2.shape:
            key = (a1.shape, a2.shape)
            shape = _broadcast_shapes.get(key)
            if shape is None:
                try:
                    shape = np.broadcast_shapes(*key)
                except ValueError:
                    return None  # (the general path names the function)
                if len(_broadcast_shapes) > 10_000:
                    _broadcast_shapes.clear()
                _broadcast_shapes[key] = shape
            if a1.shape != shape:
                x1 = lax.broadcast_to_rank(x1, shape)
            if a2.shape != shape:
                x2 = lax.broadcast_to_rank(x2, shape)
        return prim.bind(x1, x2)
    a = a1 if a2 is None else a2
    other = x2 if a2 is None else x1
    if a is not None and type(other) in _SCALARS and not a.weak_type and a.dtype.kind in "fc":
        return prim.bind(*traced_and_scalar(rule, x1, x2))
    return None


def _pair(prim, operands):
    """``prim`` on a promoted (tracer, scalar constant) pair: the constant is a staged
    broadcast (a tracer) unless the tracer is 0-d, when ``bind`` stages it as a constant."""
    x1, x2 = operands
    if type(x1) is JaxprTracer and type(x2) is JaxprTracer and x1._trace.main is x2._trace.main:
        return stage_binary(prim, x1, x2, _SKIP + 1)
    return prim.bind(x1, x2)


__all__ = ["ATTEMPTS", "INEXACT", "NUMERIC", "binary", "on_tape", "unary"]
