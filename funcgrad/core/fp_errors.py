"""Floating-point exceptions are silent in eager code, as they are in compiled code.

``jit`` code follows IEEE 754 without traps or warnings (``log(0)`` is ``-inf``,
``0/0`` is NaN), and so does JAX; NumPy would warn (``RuntimeWarning: divide by zero``)
for the same program run eagerly. Eager primitive implementations therefore run with
NumPy's floating-point error handling set to "ignore", and only they: the user's own
NumPy code keeps whatever ``numpy.errstate`` it has.

``silence()`` / ``restore(token)`` bracket a call. With NumPy 2 they set NumPy's error
state context variable directly, which costs ~0.12 µs (``numpy.errstate`` costs ~1 µs,
too much for a per-primitive hot path).
"""
from __future__ import annotations

import functools

import numpy as np

try:  # NumPy >= 2: the error state is a context variable holding an opaque object
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    # C-level callables (no Python frame): these run around every eager primitive.
    silence = functools.partial(_extobj_contextvar.set, _make_extobj(all="ignore"))
    restore = _extobj_contextvar.reset

except ImportError:  # NumPy 1.x: the documented (slower) global switch
    def silence():
        return np.seterr(all="ignore")

    def restore(token) -> None:
        np.seterr(**token)
