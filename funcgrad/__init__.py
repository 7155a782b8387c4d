"""funcgrad: NumPy code in, exact derivatives, vectorisation and native code out.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> fnp.sin(0.5) * 2                      # eager: NumPy values
>>> print(fg.make_jaxpr(fnp.sin)(0.5))    # staged: the typed IR
"""
from funcgrad import errors, lax, tree_util  # noqa: F401
from funcgrad import numpy  # noqa: F401  (installs array methods on tracers)
from funcgrad.core import ClosedJaxpr, Jaxpr, ShapedArray, check_jaxpr, eval_jaxpr  # noqa: F401
from funcgrad.core.array import Array  # noqa: F401  (eager results: read-only ndarrays)
from funcgrad.core.dtypes import float0  # noqa: F401  (the dtype of an integer's tangent)
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
from funcgrad import random  # noqa: F401,E402  (funcgrad.random: the PRNG)
from funcgrad import nn, tree  # noqa: F401,E402
from funcgrad.api import (  # noqa: F401,E402
    ShapeDtypeStruct, block_until_ready, default_backend, device_count, device_get, device_put, devices,
    eval_shape, local_device_count, local_devices, named_call,
)
from funcgrad.transforms.custom_gradient import closure_convert, custom_gradient  # noqa: F401,E402
from funcgrad.transforms.jit import disable_jit  # noqa: F401,E402
from funcgrad.transforms.remat import checkpoint_name, checkpoint_policies  # noqa: F401,E402
from funcgrad import ops  # noqa: F401
from funcgrad import viz  # noqa: F401,E402
from funcgrad.viz import draw  # noqa: F401,E402
from funcgrad import debug  # noqa: F401,E402  (debug.print, debug.callback)
from funcgrad.callbacks import io_callback, pure_callback  # noqa: F401,E402
from funcgrad import export  # noqa: F401,E402  (a callable module: fg.export(jit(f))(*specs))
from funcgrad.export import deserialize  # noqa: F401,E402
from funcgrad import autograph  # noqa: F401,E402  (a callable module: fg.autograph(f))
from funcgrad import config, custom_derivatives, example_libraries, flatten_util, typing  # noqa: F401,E402  (typing: not in __all__, a star import must not shadow the standard library's)

from funcgrad import custom_batching, dlpack, dtypes, experimental, image, stages, version  # noqa: F401,E402
from funcgrad._environment import *  # noqa: F401,F403,E402  (configuration contexts, process queries, typeof, ...)
from funcgrad._environment import __all__ as _environment_all  # noqa: E402
from funcgrad import extend  # noqa: F401,E402  (last: its primitive handles list every primitive declared)

jacobian = jacrev  # as jax.jacobian


from funcgrad.version import __version__  # noqa: E402,F401
__all__ = [
    "Array", "errors", "lax", "tree_util", "numpy", "make_jaxpr", "check_jaxpr", "eval_jaxpr",
    "eval_closed_jaxpr", "jaxpr_as_fun", "ClosedJaxpr", "Jaxpr", "ShapedArray",
    "ShapeDtypeStruct", "grad", "value_and_grad", "jvp", "vjp", "linearize",
    "linear_transpose", "jacfwd", "jacrev", "hessian", "stop_gradient", "test_util", "custom_jvp", "custom_vjp",
    "checkpoint", "remat", "vmap", "jit", "nn", "tree", "jacobian", "eval_shape", "block_until_ready",
    "device_put", "device_get", "devices", "local_devices", "device_count", "local_device_count",
    "default_backend", "disable_jit", "named_call", "checkpoint_name", "checkpoint_policies", "custom_gradient",
    "closure_convert",
    "ops", "random", "scipy", "viz", "draw", "debug", "pure_callback", "io_callback", "export", "deserialize",
    "autograph", "config", "custom_derivatives", "example_libraries", "flatten_util",
    "extend", "float0", "custom_batching", "dlpack", "dtypes", "experimental", "image", "stages", "version",
    *_environment_all,
]
