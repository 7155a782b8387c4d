"""``import funcgrad.numpy as fnp``: NumPy-compatible functions that work eagerly on
NumPy arrays and on traced values alike. See ``funcgrad.numpy_api`` for the code."""
import importlib as _importlib

import numpy as _np

from funcgrad.core import dtypes as _dtypes
from funcgrad.numpy import fft  # noqa: F401,E402  (the submodule funcgrad.numpy.fft)
from funcgrad.numpy_api import *  # noqa: F401,F403
from funcgrad.numpy_api import __all__ as _api_all  # noqa: F401
from funcgrad.numpy_api import indexing  # noqa: F401
from funcgrad.numpy_api._util import AxisError  # noqa: F401
from funcgrad.numpy_api.indexing import at  # noqa: F401

# (after the star import, whose ``linalg`` is the implementation module: the public one wins)
linalg = _importlib.import_module("funcgrad.numpy.linalg")

# dtypes and constants, as NumPy spells them
bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
int_, uint = _np.int_, _np.uint  # NumPy 2: int64 and uint64
float32, float64 = _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
complex_, complexfloating = _np.complex128, _np.complexfloating
bool = _np.bool_  # noqa: A001  (as jax.numpy.bool: the scalar type, shadowing the builtin here only)
float_, double, single = _np.float64, _np.float64, _np.float32
cdouble, csingle = _np.complex128, _np.complex64
ndarray = _np.ndarray
generic, character, flexible, object_ = _np.generic, _np.character, _np.flexible, _np.object_
ComplexWarning = _np.exceptions.ComplexWarning
# Floats narrower than float32 are named, not computed in: NumPy's float16 and JAX's
# ml_dtypes types raise UnsupportedDtypeError naming the type wherever a dtype is taken.
float16 = _np.float16
globals().update(_dtypes.NARROW_TYPES)
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None
dtype = _np.dtype
issubdtype = _np.issubdtype
floating, integer, number = _np.floating, _np.integer, _np.number
inexact, signedinteger, unsignedinteger = _np.inexact, _np.signedinteger, _np.unsignedinteger

# Every public name: the functions (``funcgrad.numpy_api``), the submodules, and the dtypes
# and constants above (``from funcgrad.numpy import *`` gives exactly these).
# (The array API's module attributes ``__array_api_version__`` and ``__array_namespace_info__``
# are not star-imported, as in jax.numpy.)
__all__ = sorted({*(n for n in _api_all if not n.startswith("__")), "linalg", "fft", "indexing", "at", "AxisError",
                  *(n for n in dir() if not n.startswith("_") and n not in ("annotations",))})


def __getattr__(name):
    if hasattr(_np, name):
        raise AttributeError(
            f"funcgrad.numpy has no function '{name}': numpy.{name} is not implemented in "
            "funcgrad yet. Write it from funcgrad.numpy functions, or open an issue."
        )
    raise AttributeError(f"module 'funcgrad.numpy' has no attribute '{name}'")
