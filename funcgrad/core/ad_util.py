"""Autodiff vocabulary shared by rules (in core) and the AD transforms.

- ``Zero(aval)``: a symbolic zero tangent/cotangent; rules skip work for it.
- ``UndefinedPrimal(aval)``: marks the linear inputs handed to a transpose rule.
- ``defjvp`` / ``deflinear`` / ``defjvp_zero`` / ``deflinear_transpose`` register the
  common rule shapes, so most registration blocks are one or two lines.

JVP rule: ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``; tangents
may be ``Zero``. Transpose rule: ``transpose(ct, *args, **params) -> list`` with one
cotangent (or ``None``) per input; ``args`` holds ``UndefinedPrimal`` for linear inputs
and concrete values (residuals) for the others. ``ct`` may be ``Zero``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.avals import ShapedArray, TapeAval
from funcgrad.core.primitive import ALLOWED_MISSING, Primitive, allow_missing, jvp_rules, transpose_rules
from funcgrad.core.trace import get_aval_any


class Zero:
    """A tangent or cotangent known to be zero (no array is built unless needed)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def like(x) -> "Zero":
        return Zero(tangent_aval(get_aval_any(x)))

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """A linear input of a transpose rule: only its type is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    return aval.strip_weak_type()


def is_differentiable(aval: ShapedArray) -> bool:
    # A run-time tape (reverse mode through a staged while_loop) holds float residuals:
    # its tangent is a tape of their tangents (higher-order derivatives).
    return aval.dtype.kind == "f" or type(aval) is TapeAval


# How to make a zero / add two (co)tangents of a tape: registered by
# ``transforms/tape_scan.py`` (core does not import transforms).
TAPE_OPS: dict = {}


def zeros_like_aval(aval: ShapedArray):
    if type(aval) is TapeAval:
        return TAPE_OPS["zeros"](aval)
    from funcgrad.core import lax_api as lax  # lazy: lax_api needs every primitive declared

    return lax.broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())


def instantiate(t):
    """A real array for a tangent that may be symbolic ``Zero``."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    from funcgrad.core import lax_api as lax  # lazy: see zeros_like_aval

    if type(getattr(a, "aval", None)) is TapeAval:
        return TAPE_OPS["add"](a, b)
    return lax.add(a, b)


NONLINEAR = "not linear in any input: a linearized program only holds its (linear) tangent operations"
ZERO_TANGENT = "piecewise constant: its tangent is zero, so it never appears in a linear program"


def nonlinear(prim: Primitive) -> None:
    """Record that ``prim`` has no transpose rule because it is not linear."""
    if prim not in transpose_rules:
        allow_missing("transpose", prim, NONLINEAR)


def deftranspose(prim: Primitive, rule) -> None:
    transpose_rules[prim] = rule
    ALLOWED_MISSING["transpose"].pop(prim.name, None)


def _bind(prim, args, params):
    return prim.bind(*args, **params)


def defjvp(prim: Primitive, *partials) -> None:
    """JVP as a sum of per-argument contributions: ``partials[i](g, ans, *primals,
    **params)`` is the tangent contributed by argument ``i`` with tangent ``g``
    (``None`` for arguments without one). Zero tangents are skipped."""

    def rule(primals, tangents, **params):
        ans = _bind(prim, primals, params)
        out = Zero(tangent_aval(get_aval_any(ans)))
        for fn, g in zip(partials, tangents):
            if fn is not None and type(g) is not Zero:
                out = add_tangents(out, fn(g, ans, *primals, **params))
        return ans, out

    jvp_rules[prim] = rule
    nonlinear(prim)


def defjvp_zero(prim: Primitive) -> None:
    """Piecewise-constant or integer-valued op: its tangent is zero everywhere."""

    def rule(primals, tangents, **params):
        ans = _bind(prim, primals, params)
        if prim.multiple_results:
            return ans, [Zero.like(a) for a in ans]
        return ans, Zero.like(ans)

    jvp_rules[prim] = rule
    allow_missing("transpose", prim, ZERO_TANGENT)


def deflinear(prim: Primitive, transpose=None) -> None:
    """An op linear in all its array inputs: the tangent is the op applied to the
    tangents (zeros instantiated only if some are non-zero)."""

    def rule(primals, tangents, **params):
        ans = _bind(prim, primals, params)
        if all(type(t) is Zero for t in tangents):
            return ans, Zero.like(ans) if not prim.multiple_results else [Zero.like(a) for a in ans]
        return ans, _bind(prim, [instantiate(t) for t in tangents], params)

    jvp_rules[prim] = rule
    if transpose is not None:
        deftranspose(prim, transpose)
