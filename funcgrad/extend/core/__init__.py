"""funcgrad's IR and primitives under ``jax.extend.core``'s names.

A ``ClosedJaxpr`` (from ``funcgrad.make_jaxpr``) has ``.jaxpr`` and ``.consts`` (also
``.literals``); a ``Jaxpr`` has ``constvars``, ``invars``, ``eqns`` and ``outvars``; an
equation (``JaxprEqn``) has ``primitive``, ``invars``, ``outvars`` and ``params``; a ``Var``
has ``aval``; a ``Literal`` has ``val`` and ``aval``. ``eqn.primitive.bind(*values,
**eqn.params)`` runs an equation; ``eqn.primitive.multiple_results`` says whether it returns
a list. The handles are ``funcgrad.lax.<name>_p`` and ``primitives.<name>_p``.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.extend import core
>>> closed = fg.make_jaxpr(lambda x: x * 2.0)(3.0)
>>> eqn = closed.jaxpr.eqns[0]
>>> eqn.primitive.name, type(eqn.invars[1]) is core.Literal, float(eqn.invars[1].val)
('mul', True, 2.0)
"""
from __future__ import annotations

import itertools

import numpy as np

from funcgrad.core.avals import ShapedArray
from funcgrad.core.dtypes import float0
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from funcgrad.core.primitive import Primitive
from funcgrad.core.typecheck import JaxprTypeError, check_jaxpr
from funcgrad.core.typecheck import subjaxprs as _named_subjaxprs
from funcgrad.extend.core import primitives  # noqa: F401

JaxprEqn = Eqn
"""An equation of a jaxpr: ``primitive``, ``invars``, ``outvars``, ``params`` (JAX's name for
funcgrad's ``Eqn``, whose fields are also reachable as ``inputs``/``outputs``)."""

__all__ = [
    "ClosedJaxpr", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal", "Primitive", "ShapedArray", "Var",
    "array_types", "check_jaxpr", "eval_jaxpr", "gensym", "jaxpr_as_fun", "jaxprs_in_params",
    "mapped_aval", "new_jaxpr_eqn", "primal_dtype_to_tangent_dtype", "primitives", "subjaxprs",
    "unmapped_aval", "valid_jaxtype",
]

array_types = frozenset({np.ndarray, *(type(np.zeros((), t)[()]) for t in np.typecodes["All"] if t not in "OMmSUV")})
"""The concrete value types a primitive takes: ``numpy.ndarray`` (funcgrad's ``Array`` is a
subclass) and NumPy's scalar types."""

_FLOAT0 = float0


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=None, source_info=None, ctx=None):
    """A new equation ``outvars = primitive[params] invars`` (JAX's argument order; ``effects``
    and ``ctx`` are accepted and unused: funcgrad's primitives carry their own effects)."""
    return Eqn(primitive, list(invars), list(outvars), dict(params), source_info)


def gensym(suffix: str = ""):
    """A function ``aval -> Var`` making fresh variables (funcgrad's variables are identity-
    based and named by the printer, so ``suffix`` only keeps JAX's signature)."""
    return Var


def jaxprs_in_params(params) -> list:
    """The open jaxprs held by an equation's ``params`` (sub-programs of ``cond``, ``scan``, ...)."""
    return [jaxpr for _, jaxpr in _named_subjaxprs(params)]


def subjaxprs(jaxpr: Jaxpr):
    """Every sub-jaxpr of ``jaxpr``'s equations, nested ones included (outermost first)."""
    todo = [jaxpr]
    while todo:
        current = todo.pop()
        inner = list(itertools.chain.from_iterable(jaxprs_in_params(e.params) for e in current.eqns))
        yield from inner
        todo += reversed(inner)


def valid_jaxtype(x) -> bool:
    """Whether ``x`` can be an argument of a primitive: an array or scalar of a NumPy numeric
    or boolean dtype (or a tracer of one)."""
    from funcgrad.core.avals import get_aval

    try:
        aval = get_aval(x)
    except TypeError:
        return False
    return isinstance(aval, ShapedArray) and aval.dtype.kind in "biufc"


def primal_dtype_to_tangent_dtype(dtype):
    """The dtype of a tangent of a value of ``dtype``: itself for inexact dtypes, JAX's
    ``float0`` (a zero-size structured dtype) for integers and booleans."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else _FLOAT0


def mapped_aval(size: int, axis, aval: ShapedArray) -> ShapedArray:
    """``aval`` without its axis ``axis`` (of length ``size``): the aval of one slice of a
    batch. ``axis=None`` returns ``aval``."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has length "
                         f"{aval.shape[axis]}, not {size}")
    shape = aval.shape[:axis] + aval.shape[axis + 1:]
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def unmapped_aval(size: int, axis, aval: ShapedArray, *args) -> ShapedArray:
    """``aval`` with a new axis of length ``size`` at ``axis`` (the inverse of ``mapped_aval``)."""
    if axis is None:
        return aval
    shape = aval.shape[:axis] + (size,) + aval.shape[axis:]
    return ShapedArray(shape, aval.dtype, aval.weak_type)
