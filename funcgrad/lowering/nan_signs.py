"""The sign of the NaN a math function returns for a NaN argument: NumPy's.

IEEE 754 leaves the sign of a NaN result unspecified (only the sign operations, negate,
abs and copysign, define it), and NumPy's loops differ from function to function and
from machine to machine: with NumPy 2 on an AVX-512 machine float32 ``exp``, ``log``,
``sin``, ``cos`` and ``tanh`` return +NaN for -NaN, float64 ``exp`` keeps the sign and
float64 ``arccos`` flips it. Eager funcgrad computes these with NumPy, and ``signbit``
or ``copysign`` show the sign, so the compiled transcendentals (``elementwise.math_fn``)
return for a NaN argument the NaN NumPy returns for it, learnt here once per process by
calling NumPy on +NaN and -NaN. ``signature`` is part of the compiled programs' cache key.
"""
from __future__ import annotations

import numpy as np

# the C / ``vecmath`` name -> NumPy's (the others are the same)
_UFUNC = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
          "atanh": "arctanh"}
NAMES = ("exp", "log", "log1p", "expm1", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt")
DTYPES = (np.dtype(np.float64), np.dtype(np.float32))
_rules: dict = {}


def rule(name: str, dtype) -> str | None:
    """How NumPy's ``name`` on ``dtype`` signs the NaN it returns for a NaN: ``"keep"``
    (the argument's sign), ``"flip"``, ``"+"`` or ``"-"`` (always that sign); None for
    another function (of two arguments: ``atan2``) or dtype."""
    key = (name, np.dtype(dtype))
    if key not in _rules:
        _rules[key] = _probe(*key)
    return _rules[key]


def _probe(name: str, dtype: np.dtype) -> str | None:
    fn = getattr(np, _UFUNC.get(name, name), None)
    if name not in NAMES or not isinstance(fn, np.ufunc) or fn.nin != 1 or dtype not in DTYPES:
        return None
    # (17 elements: NumPy's vector loops and their scalar tails agree; element 0 decides)
    plus, minus = (np.full(17, np.copysign(np.nan, s), dtype) for s in (1.0, -1.0))
    with np.errstate(all="ignore"):
        sp, sm = (bool(np.signbit(fn(x)[0])) for x in (plus, minus))
    if sp == sm:
        return "-" if sp else "+"
    return "flip" if sp else "keep"


def signature() -> str:
    """Every rule, as a short string (part of the disk cache's program key)."""
    if not _signature:
        _signature.append(",".join(f"{n}{d.itemsize * 8}{rule(n, d)}" for n in NAMES for d in DTYPES))
    return _signature[0]


_signature: list = []
