"""Host callbacks from compiled code: ``pure_callback`` and ``io_callback`` (JAX's names
and signatures; ``funcgrad.debug`` has ``print`` and ``callback``).

The user's function gets NumPy arrays (copies it owns) and returns arrays whose shapes
and dtypes must be those declared in ``result_shape_dtypes`` (a pytree of
``funcgrad.ShapeDtypeStruct`` or of arrays): anything else is a ``TypeError`` naming
the function and both types. Eagerly the function is just called; staged (``jit``,
control-flow bodies) it becomes a ``callback`` equation (``core/prims/effects.py``) that
compiled code runs by calling back into Python (``lowering/effects.py``).

>>> import numpy as np, scipy.special, funcgrad as fg
>>> f = fg.jit(lambda x: fg.pure_callback(scipy.special.j0, fg.ShapeDtypeStruct(x.shape, x.dtype), x))
>>> f(np.linspace(0, 1, 3))
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.avals import ShapedArray
from funcgrad.core.dtypes import canonicalize
from funcgrad.core.prims.effects import VMAP_METHODS, UserCallback, callback_p
from funcgrad.core.trace import Tracer
from funcgrad.core.wrapping import fun_name

__all__ = ["pure_callback", "io_callback"]

_ARRAYS = (np.ndarray, np.generic, Tracer, bool, int, float)


def _fn_name(fn) -> str:
    return fun_name(fn)


def split_operands(args, kwargs):
    """(array leaves to pass at run time, rebuild(values) -> (args, kwargs)): leaves that
    are not arrays (strings, None, ...) stay in the Python closure."""
    if not kwargs and all(isinstance(x, _ARRAYS) for x in args):  # the common case, cheap per call
        return list(args), lambda values: (values, {})
    leaves, tree = pytree.tree_flatten((tuple(args), dict(kwargs)))
    dynamic = [i for i, x in enumerate(leaves) if isinstance(x, _ARRAYS)]

    def rebuild(values):
        full = list(leaves)
        for i, v in zip(dynamic, values):
            full[i] = v
        return pytree.tree_unflatten(tree, full)

    return [leaves[i] for i in dynamic], rebuild


def _result_avals(what: str, result_shape_dtypes):
    leaves, tree = pytree.tree_flatten(result_shape_dtypes)
    avals = []
    for k, x in enumerate(leaves):
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(f"{what}: result_shape_dtypes leaf {k} is a {type(x).__name__}; expected a "
                            "funcgrad.ShapeDtypeStruct or an array (anything with .shape and .dtype)")
        avals.append(ShapedArray(tuple(int(d) for d in x.shape), canonicalize(x.dtype, what=what)))
    return avals, tree


def _bind(what, callback, result_shape_dtypes, args, kwargs, effect, ordered, vmap_method):
    if not callable(callback):
        raise TypeError(f"{what}: callback must be callable, got {type(callback).__name__}")
    out_avals, out_tree = _result_avals(f"{what}({_fn_name(callback)})", result_shape_dtypes)
    operands, rebuild = split_operands(args, kwargs)
    name = f"{what}({_fn_name(callback)})"

    def flat(*values):
        a, k = rebuild(values)
        res = callback(*a, **k)
        leaves, tree = pytree.tree_flatten(res)
        if tree != out_tree:
            raise TypeError(f"{name}: the callback returned a value of structure {tree}, but "
                            f"result_shape_dtypes has structure {out_tree}")
        return leaves

    host = UserCallback(flat, out_avals, name)
    outs = callback_p.bind(*operands, callback=host, out_avals=tuple(out_avals), effect=effect,
                           ordered=bool(ordered), vmap_method=vmap_method)
    return pytree.tree_unflatten(out_tree, outs)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Call the host function ``callback(*args, **kwargs)`` from traced or compiled code.

    ``callback`` must be pure: funcgrad may skip it when its result is unused (DCE) or
    call it once per example under ``vmap``. ``vmap_method`` (as in JAX) says how it is
    batched: ``"sequential"`` (or ``"sequential_unrolled"``): one call per example;
    ``"expand_dims"``: one call, unmapped arguments get a leading axis of size 1;
    ``"broadcast_all"``: one call, every argument broadcast to the batch; ``None``:
    ``vmap`` raises. It cannot be differentiated: wrap the function calling it in
    ``custom_jvp``/``custom_vjp``. ``sharding`` is accepted and ignored (one CPU device).
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {VMAP_METHODS[1:]} or None, "
                         f"got {vmap_method!r}")
    return _bind("pure_callback", callback, result_shape_dtypes, args, kwargs, None, False, vmap_method)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Call the host function ``callback(*args, **kwargs)``, which may have side effects:
    it is never removed or merged, runs in program order, once per example under ``vmap``
    (only for the examples a per-example ``cond`` sends its way) and every iteration of a
    loop. ``result_shape_dtypes`` may be ``None`` (the callback returns nothing). It cannot
    be differentiated (wrap it in ``custom_jvp``/``custom_vjp``)."""
    return _bind("io_callback", callback, result_shape_dtypes, args, kwargs, "io", ordered, None)
