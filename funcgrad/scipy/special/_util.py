"""Helpers shared by the ``funcgrad.scipy.special`` modules: argument promotion like
SciPy's ufuncs, NumPy-scalar results, and the float64 working precision of the
series-based functions."""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import _util

F64 = np.dtype(np.float64)


def out(x):
    """0-d results as NumPy scalars, like SciPy's ufuncs."""
    if type(x) is np.ndarray and not x.shape:
        return x[()]
    return x


def const(like, value):
    aval = _util.aval_of(like)
    return _util.full(aval.shape, value, aval.dtype)


def float_args(fname, *args):
    """Arguments checked, promoted to one inexact dtype (ints and bools: float64) and
    broadcast together; bad shapes raise a ValueError naming ``fname`` and the shapes."""
    _util.check_arraylike(fname, *args)
    return _util.promote_args_inexact(fname, *args)


def real_args(fname, *args):
    """``float_args`` for the real-only functions: complex input raises a TypeError naming
    ``fname`` (their real formulas would silently drop the imaginary part, or, as expit,
    logit, entr, kl_div and rel_entr, compute what SciPy refuses: it has no complex loop)."""
    args = float_args(fname, *args)
    if args and _util.aval_of(args[0]).dtype.kind == "c":
        aval = _util.aval_of(args[0])
        raise TypeError(f"{fname}: complex input is not supported (got {aval.dtype.name} of shape {aval.shape}); "
                        f"{fname} takes real input only")
    return args


def unary(fname, prim_fn, doc):
    def fn(x):
        (x,) = real_args(fname, x)
        return out(prim_fn(x))

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = doc
    return fn


def in_float64(fname, fn, *args):
    """``fn(*args)`` computed in float64 and returned in the arguments' promoted dtype.

    The series, continued fractions and polynomial tables of the special functions are
    written for float64 (their coefficients would underflow or round in float32); a
    float32 argument is widened, computed and rounded once, so float32 in gives an
    accurately rounded float32 out. Casts are differentiable, so derivatives follow."""
    args = real_args(fname, *args)
    dtype = _util.aval_of(args[0]).dtype
    if dtype != F64:
        args = [lax.convert_element_type(a, F64) for a in args]
    with np.errstate(all="ignore"):  # eager operators on values run NumPy: keep them silent
        result = fn(*args)
    if dtype != F64:
        result = lax.convert_element_type(result, dtype)
    return out(result)


def horner(coefs, t):
    """``sum_j coefs[j] t**j`` (coefficients lowest first) by Horner's rule."""
    acc = fnp.zeros_like(t) + coefs[-1]
    for c in reversed(coefs[:-1]):
        acc = acc * t + c
    return acc


def safe(bad, x, stand_in):
    """``x`` with ``stand_in`` where ``bad``: the branch not taken must not make NaNs that
    ``where``'s derivative would multiply by zero (0 * NaN is NaN)."""
    return fnp.where(bad, stand_in, x)
