"""Shared by the ``funcgrad.scipy.stats`` distributions: SciPy-style argument handling
(promotion to one float dtype, broadcasting, defaults for loc/scale) and NaN for
invalid parameters."""
from __future__ import annotations

import functools
import inspect
import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.scipy.special._util import float_args, out


def method(dist: str):
    """Wrap ``fn(x, *params)``: arguments (defaults filled in) promoted and broadcast
    together; errors name ``dist.fn``; eager NumPy warnings silenced."""

    def wrap(fn):
        sig = inspect.signature(fn)
        fname = f"{dist}.{fn.__name__}"

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{fname}: {e}") from None
            bound.apply_defaults()
            values = float_args(fname, *bound.arguments.values())
            with np.errstate(all="ignore"):
                return out(fn(*values))

        if not wrapper.__doc__:
            wrapper.__doc__ = _method_doc(dist, fn.__name__, sig)
        return wrapper

    return wrap


_WHAT = {
    "logpdf": "the log of the probability density", "pdf": "the probability density",
    "logpmf": "the log of the probability mass", "pmf": "the probability mass",
    "cdf": "the cumulative distribution function", "logcdf": "the log of the cumulative distribution function",
    "sf": "the survival function, 1 - cdf", "logsf": "the log of the survival function",
    "ppf": "the quantile function (inverse of cdf)", "isf": "the inverse survival function",
}


def _method_doc(dist: str, name: str, sig: inspect.Signature) -> str:
    """The docstring of a distribution method that has none of its own: what it computes,
    under SciPy's name and signature."""
    what = _WHAT.get(name, name)
    return (f"``scipy.stats.{dist}.{name}{sig}``: {what}, with SciPy's parameters, broadcasting and "
            "support (outside it the density is 0 and its log -inf); NaN where a parameter is invalid. "
            "Works under ``grad`` (in its continuous arguments), ``vmap`` and ``jit``.")


def invalid_to_nan(value, ok):
    """NaN where the parameters are invalid (SciPy's convention, e.g. scale <= 0)."""
    return fnp.where(ok, value, math.nan)


def standardize(x, loc, scale):
    return (x - loc) / scale


def log_of(p, complement):
    """``log(p)`` where ``p = 1 - complement``: ``log1p(-complement)`` once ``p > 1/2``, so a
    log-CDF near 0 keeps its relative accuracy."""
    return fnp.where(p > 0.5, fnp.log1p(-complement), fnp.log(p))
