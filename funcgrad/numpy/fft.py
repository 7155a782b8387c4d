"""``funcgrad.numpy.fft`` (``fnp.fft``): NumPy's FFT functions. The code is in
``funcgrad.numpy_api.fft``; this module is the public name (``import funcgrad.numpy.fft``
works, as ``import jax.numpy.fft`` does)."""
from funcgrad.numpy_api import fft as _impl
from funcgrad.numpy_api.methods import wrap_public as _wrap_public

_wrap_public([_impl], _impl)  # eager results are values (read-only), as every fnp function's

from funcgrad.numpy_api.fft import *  # noqa: E402,F401,F403
from funcgrad.numpy_api.fft import __all__  # noqa: E402,F401
