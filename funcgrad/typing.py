"""``funcgrad.typing``: annotation types, as ``jax.typing``.

``ArrayLike``: what funcgrad functions accept as an array (funcgrad and NumPy arrays,
NumPy scalars, Python scalars, traced values); ``DTypeLike``: what they accept as a dtype.
For annotations only (``isinstance`` checks against them are not meaningful for tracers of
every kind).
"""
from __future__ import annotations

from typing import Any, Union

import numpy as np

from funcgrad.core.array import Array
from funcgrad.core.trace import Tracer

ArrayLike = Union[Array, Tracer, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type, np.dtype, Any]

__all__ = ["ArrayLike", "DTypeLike"]
