"""The NumPy-compatible API (public name: ``funcgrad.numpy``).

Each function checks its arguments, promotes dtypes (NumPy 2 rules, weak Python
scalars) and broadcasts, then applies primitives. With no transform active the
result is a ``numpy.ndarray`` or NumPy scalar with NumPy's values and dtype.

One module per area (``MODULES``); each lists its public names in ``__all__``, which
this package re-exports and ``methods.install`` wraps as value boundaries.
"""
import importlib as _importlib

MODULES = (
    "bits", "creation", "elementwise", "indexing", "joining", "products", "reductions", "shape",
    # issue #15
    "splitting", "functional", "array_api", "dtype_utils", "flat_index", "float_parts", "number_tests",
    "calculus", "index_tricks", "padding", "polynomial", "windows",
    "einsum", "histograms", "nanfunctions", "selection", "sets", "statistics", "bitpack",
    "ufuncs",
    # issue #16
    "complex_funcs",
    "io",
)
__all__ = ["linalg"]
for _name in MODULES:
    _module = _importlib.import_module(f"funcgrad.numpy_api.{_name}")
    # (``fnp.shape``/``fnp.einsum`` are functions named like their modules: the function wins)
    globals().update({n: getattr(_module, n) for n in _module.__all__})
    __all__ += _module.__all__
from funcgrad.numpy_api import linalg  # noqa: E402,F401
from funcgrad.numpy_api._util import AxisError  # noqa: E402,F401
from funcgrad.numpy_api import methods as _methods  # noqa: E402

_methods.install()
from funcgrad.numpy_api import eager_fast as _eager_fast  # noqa: E402  (after install: wraps the values boundary)

_eager_fast.install(_importlib.import_module(__name__),
                    [_importlib.import_module(f"funcgrad.numpy_api.{n}") for n in ("elementwise", "joining",
                                                                                   "products")])
from funcgrad.numpy_api import ufuncs as _ufuncs  # noqa: E402  (last: methods go on the final functions)

_ufuncs.install(_importlib.import_module(__name__))
