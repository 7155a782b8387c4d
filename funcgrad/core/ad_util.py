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

import weakref
from typing import Callable

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import (
    ALLOWED_MISSING,
    GENERAL_PATH,
    PRIMITIVES,
    VALUES,
    Primitive,
    allow_missing,
    def_no_eager_record,
    defvjp_eager,
    eager_vjp_rules,
    impl_rules,
    jvp_rules,
    transpose_rules,
)
from funcgrad.core.staging import JaxprTracer, stage_or_bind
from funcgrad.core.trace import bind, get_aval_any, is_staging


class Zero:
    """A tangent or cotangent known to be zero (no array is built unless needed)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def like(x) -> "Zero":
        """The zero tangent of ``x``. Zeros are immutable, so one per aval is shared:
        the JVP of every operation on a constant asks for one."""
        aval = get_aval_any(x)
        hit = _zero_cache.get(id(aval))
        if hit is not None:
            return hit[1]
        z = Zero(tangent_aval(aval))
        if len(_zero_cache) > 10_000:
            _zero_cache.clear()
        _zero_cache[id(aval)] = (aval, z)  # keeps aval alive, so its id stays unique
        return z

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


_zero_cache: dict = {}  # id(aval) -> (aval, Zero), for Zero.like


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
    return aval.strip_weak_type() if aval.weak_type else aval


# Avals of other value types than arrays (registered by the module that defines the
# type; core knows only arrays): which are differentiable, how to make a zero of one,
# how to add two (co)tangents of one.
differentiable_avals: set[type] = set()
aval_zeros: dict[type, Callable] = {}  # aval type -> zeros(aval)
aval_adders: dict[type, Callable] = {}  # aval type -> add(a, b)


def is_differentiable(aval: ShapedArray) -> bool:
    return aval.dtype.kind in "fc" or type(aval) in differentiable_avals


# --- values the transforms make -------------------------------------------------------
# Compiled code drops arithmetic on the zeros and identity bases the transforms make
# (``x * 0 -> 0``, ``x + 0 -> x``, ``dot(x, I) -> x``: what symbolic zeros would have
# skipped; ``lowering/algebra.py``), never on the user's own constants, because those
# rewrites take ``x`` finite (``inf * 0`` is nan, ``-0.0 + 0.0`` is ``0.0``). The
# transforms' values are known by identity: one shared read-only 0-d zero per dtype
# (it reaches the jaxpr as a literal's value) and a registry of the identity bases
# ``jacfwd``/``jacrev`` push through (they reach it as constants).
_transform_zeros: dict = {}
_transform_bases: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def transform_zero(dtype) -> np.ndarray:
    """The 0-d zero of ``dtype`` that transforms instantiate (see above)."""
    dtype = np.dtype(dtype)
    z = _transform_zeros.get(dtype)
    if z is None:
        z = np.zeros((), dtype)
        z.flags.writeable = False
        _transform_zeros[dtype] = z
    return z


def is_transform_zero(val) -> bool:
    return type(val) is np.ndarray and _transform_zeros.get(val.dtype) is val


def mark_transform_basis(arr: np.ndarray) -> np.ndarray:
    """Record ``arr`` (read-only from now on) as an identity basis a transform made."""
    arr.flags.writeable = False
    _transform_bases[id(arr)] = arr
    return arr


def is_transform_basis(val) -> bool:
    return _transform_bases.get(id(val)) is val


def zeros_like_aval(aval: ShapedArray):
    if type(aval) is not ShapedArray:
        return aval_zeros[type(aval)](aval)
    broadcast_in_dim_p = PRIMITIVES["broadcast_in_dim"]  # (by name: the prims import us)
    zero = transform_zero(aval.dtype)
    if not aval.shape:
        return zero
    if not is_staging():
        # Nothing records operations on constants, so bind would run the impl right
        # away: call it directly. This is on the hot path of every deflinear rule that
        # meets a symbolic-zero tangent (e.g. ``x - c`` under grad).
        return impl_rules[broadcast_in_dim_p](zero, shape=aval.shape, broadcast_dimensions=())
    return bind(broadcast_in_dim_p, zero, shape=aval.shape, broadcast_dimensions=())


def instantiate(t):
    """A real array for a tangent that may be symbolic ``Zero``."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    if type(a) is not np.ndarray:
        adder = aval_adders.get(type(getattr(a, "aval", None)))
        if adder is not None:
            return adder(a, b)
    return bind(PRIMITIVES["add"], a, b)


NONLINEAR = "not linear in any input: a linearized program only holds its (linear) tangent operations"
ZERO_TANGENT = "piecewise constant: its tangent is zero, so it never appears in a linear program"


def nonlinear(prim: Primitive) -> None:
    """Record that ``prim`` has no transpose rule because it is not linear."""
    if prim not in transpose_rules:
        allow_missing("transpose", prim, NONLINEAR)


def deftranspose(prim: Primitive, rule) -> None:
    transpose_rules[prim] = rule
    ALLOWED_MISSING["transpose"].pop(prim.name, None)


# The helpers below also fill in the eager cotangent rule (``eager_vjp`` table, see
# ``core/primitive.py``) when it follows from the rule they register: an elementwise op's
# partials are pointwise scalings of ``g`` (so each is its own transpose), a linear op's
# transpose rule applies as it is, and a zero-tangent op needs no record at all. The
# derivation happens here, at registration, so the eager tape only looks the rule up.

def partials_vjp_rule(partials):
    """Eager cotangent rule of an elementwise primitive from its ``defjvp`` partials:
    d out[k] / d x_i[k] is a number, so the tangent map ``g -> partial(g)`` is a pointwise
    product and equals its own transpose (the partials' ``lax`` calls run eagerly)."""

    def rule(ct, ans, primals, which, **params):
        got = [None] * len(primals)
        for i in which:
            fn = partials[i]
            if fn is not None:
                got[i] = fn(ct, ans, *primals, **params)
        return got

    return rule


def partials_zero_if(partials):
    """``zero_if`` for partials with ``None`` entries (e.g. copysign's sign operand)."""
    if all(fn is not None for fn in partials):
        return None
    return lambda which, params: all(partials[i] is None for i in which)


def transpose_vjp_rule(transpose):
    """Eager cotangent rule of a linear primitive: its transpose rule, with
    ``UndefinedPrimal`` at the positions being differentiated."""

    def rule(ct, ans, primals, which, **params):
        args = list(primals)
        for i in which:
            args[i] = UndefinedPrimal(get_aval_any(primals[i]))
        return transpose(ct, *args, **params)

    return rule


def defvjp_eager_from_transpose(prim: Primitive) -> None:
    """Declare ``prim`` linear in its float inputs jointly (though it has its own JVP
    rule): its eager cotangent rule is its transpose rule (register that first)."""
    defvjp_eager(prim, transpose_vjp_rule(transpose_rules[prim]), primals=VALUES)


NOT_POINTWISE = GENERAL_PATH + "not elementwise, so its JVP partials are not their own transposes"


def defjvp(prim: Primitive, *partials) -> None:
    """JVP as a sum of per-argument contributions: ``partials[i](g, ans, *primals,
    **params)`` is the tangent contributed by argument ``i`` with tangent ``g``
    (``None`` for arguments without one). Zero tangents are skipped.

    For a primitive declared ``elementwise`` this also registers the eager cotangent
    rule derived from the partials (a hand-written ``defvjp_eager`` after it replaces it).
    """

    def rule(primals, tangents, **params):
        # (the primal: staged directly under jit; the type test first keeps eager calls cheap)
        ans = stage_or_bind(prim, primals, params, 1) if primals and type(primals[0]) is JaxprTracer \
            else bind(prim, *primals, **params)
        out = None
        for fn, g in zip(partials, tangents):
            if fn is not None and type(g) is not Zero:
                t = fn(g, ans, *primals, **params)
                out = t if out is None else add_tangents(out, t)
        if out is None:
            out = Zero(tangent_aval(get_aval_any(ans)))
        return ans, out

    jvp_rules[prim] = rule
    nonlinear(prim)
    if prim.elementwise and not prim.multiple_results:
        defvjp_eager(prim, partials_vjp_rule(partials), primals=VALUES, ans=True, zero_if=partials_zero_if(partials))
    elif prim not in eager_vjp_rules:
        allow_missing("eager_vjp", prim, NOT_POINTWISE)


def defjvp_zero(prim: Primitive) -> None:
    """Piecewise-constant or integer-valued op: its tangent is zero everywhere (so the
    eager tape records nothing for it)."""
    def_no_eager_record(prim)

    def rule(primals, tangents, **params):
        # (the primal: staged directly under jit; the type test first keeps eager calls cheap)
        ans = stage_or_bind(prim, primals, params, 1) if primals and type(primals[0]) is JaxprTracer \
            else bind(prim, *primals, **params)
        if prim.multiple_results:
            return ans, [Zero.like(a) for a in ans]
        return ans, Zero.like(ans)

    jvp_rules[prim] = rule
    allow_missing("transpose", prim, ZERO_TANGENT)


def deflinear(prim: Primitive, transpose=None) -> None:
    """An op linear in all its array inputs: the tangent is the op applied to the
    tangents (zeros instantiated only if some are non-zero). With ``transpose``, the
    eager cotangent rule is that transpose rule (``transpose_vjp_rule``)."""

    def rule(primals, tangents, **params):
        # (the primal: staged directly under jit; the type test first keeps eager calls cheap)
        ans = stage_or_bind(prim, primals, params, 1) if primals and type(primals[0]) is JaxprTracer \
            else bind(prim, *primals, **params)
        for t in tangents:
            if type(t) is not Zero:
                break
        else:  # all tangents are zero
            return ans, Zero.like(ans) if not prim.multiple_results else [Zero.like(a) for a in ans]
        tangents = [zeros_like_aval(t.aval) if type(t) is Zero else t for t in tangents]
        return ans, bind(prim, *tangents, **params)

    jvp_rules[prim] = rule
    if transpose is not None:
        deftranspose(prim, transpose)
        if not prim.multiple_results:
            defvjp_eager(prim, transpose_vjp_rule(transpose), primals=VALUES)
