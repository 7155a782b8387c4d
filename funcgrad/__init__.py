"""funcgrad: NumPy code in, exact derivatives, vectorisation and native code out.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> fnp.sin(0.5) * 2                      # eager: NumPy values
>>> print(fg.make_jaxpr(fnp.sin)(0.5))    # staged: the typed IR
"""
from funcgrad import errors, lax, tree_util  # noqa: F401
from funcgrad import numpy  # noqa: F401  (installs array methods on tracers)
from funcgrad.core import ClosedJaxpr, Jaxpr, ShapedArray, check_jaxpr, eval_jaxpr  # noqa: F401
from funcgrad.core.array import Array  # noqa: F401  (eager results: read-only ndarrays)
from funcgrad.core.interpret import eval_closed_jaxpr, jaxpr_as_fun  # noqa: F401
from funcgrad.core.staging import make_jaxpr  # noqa: F401
from funcgrad.transforms.ad_api import (  # noqa: F401
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    stop_gradient,
    value_and_grad,
    vjp,
)
from funcgrad.transforms.custom import checkpoint, custom_jvp, custom_vjp, remat  # noqa: F401
from funcgrad.transforms.batching import vmap  # noqa: F401
from funcgrad.transforms.jit import jit  # noqa: F401
from funcgrad import test_util  # noqa: F401
from funcgrad import scipy  # noqa: F401
from funcgrad import ops  # noqa: F401


class ShapeDtypeStruct:
    """Shape and dtype of an argument without data, for ``make_jaxpr``/``jit.lower``."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = __import__("numpy").dtype(dtype)

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


__version__ = "0.1.0"
__all__ = [
    "Array", "errors", "lax", "tree_util", "numpy", "make_jaxpr", "check_jaxpr", "eval_jaxpr",
    "eval_closed_jaxpr", "jaxpr_as_fun", "ClosedJaxpr", "Jaxpr", "ShapedArray",
    "ShapeDtypeStruct", "grad", "value_and_grad", "jvp", "vjp", "linearize",
    "linear_transpose", "jacfwd", "jacrev", "hessian", "stop_gradient", "test_util", "custom_jvp", "custom_vjp",
    "checkpoint", "remat", "vmap", "jit", "ops",
]
