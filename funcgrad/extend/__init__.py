"""``funcgrad.extend``: the IR and primitives, under JAX's names for interpreter writers.

``funcgrad.extend.core`` holds ``Primitive``, ``Jaxpr``, ``ClosedJaxpr``, ``JaxprEqn``, ``Var``,
``Literal``, ``jaxpr_as_fun``, ... (what ``jax.extend.core`` holds); the primitive handles
themselves are ``funcgrad.lax.<name>_p`` (and, all of them, ``funcgrad.extend.core.primitives``),
so an interpreter can dispatch on ``eqn.primitive is lax.exp_p``:

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad import lax
>>> closed = fg.make_jaxpr(lambda x: fnp.exp(fnp.tanh(x)))(1.0)
>>> [eqn.primitive is lax.exp_p for eqn in closed.jaxpr.eqns]
[False, True]
"""
from funcgrad.extend import core  # noqa: F401

__all__ = ["core"]
