"""Top-level names of JAX's about the running environment and its configuration:
configuration context managers (``debug_nans``, ``numpy_rank_promotion``, ...), process and
device queries for one process on one CPU device, ``typeof``, ``clear_caches``,
``ensure_compile_time_eval``, ``effects_barrier``, ``copy_to_host_async``,
``print_environment_info``, ``fwd_and_bwd``.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> with fg.numpy_rank_promotion("raise"):
...     fnp.add(np.ones((2, 3)), np.ones((2, 3))).shape
(2, 3)
"""
from __future__ import annotations

import contextlib
import platform
import sys

import numpy as np

from funcgrad import config
from funcgrad.api import CpuDevice, devices
from funcgrad.core.trace import ensure_compile_time_eval, get_aval_any

__all__ = [
    "Device", "clear_caches", "copy_to_host_async", "debug_infs", "debug_nans", "default_device",
    "default_matmul_precision", "effects_barrier", "enable_checks", "enable_x64", "ensure_compile_time_eval",
    "explain_cache_misses", "fwd_and_bwd", "named_scope", "no_tracing", "host_count", "host_id", "host_ids",
    "log_compiles",
    "numpy_dtype_promotion", "numpy_rank_promotion", "print_environment_info", "process_count", "process_index",
    "process_indices", "promotion_rules", "typeof",
]

Device = CpuDevice


@contextlib.contextmanager
def _flag(name: str, value):
    previous = config.read(name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, previous)


def debug_nans(new_val: bool = True):
    """Context manager: ``config.update("jax_debug_nans", new_val)`` inside (a jitted
    function returning a NaN, or a primitive producing one eagerly, raises)."""
    return _flag("jax_debug_nans", bool(new_val))


def debug_infs(new_val: bool = True):
    """Context manager: ``jax_debug_infs`` set to ``new_val`` inside (the same for infinities)."""
    return _flag("jax_debug_infs", bool(new_val))


def log_compiles(new_val: bool = True):
    """Context manager: each jit compilation is logged with its cause inside."""
    return _flag("jax_log_compiles", bool(new_val))


def explain_cache_misses(new_val: bool = True):
    """Context manager: each jit retrace says how the arguments differ from the nearest
    cached signature inside."""
    return _flag("jax_explain_cache_misses", bool(new_val))


def enable_checks(new_val: bool = True):
    """Context manager: every jaxpr a transform produces is type-checked inside."""
    return _flag("jax_enable_checks", bool(new_val))


def enable_x64(new_val: bool = True):
    """Context manager for ``jax_enable_x64``: funcgrad computes in float64 by default, so
    ``True`` changes nothing and ``False`` warns (and changes nothing)."""
    return _flag("jax_enable_x64", bool(new_val))


def no_tracing(new_val: bool = True):
    """Context manager: a jitted function that would trace inside (its first call, or a new
    signature of arguments) raises ``RuntimeError`` instead: checks a loop only reuses
    compiled programs."""
    return _flag("jax_no_tracing", bool(new_val))


def default_matmul_precision(new_val=None):
    """Context manager for ``jax_default_matmul_precision`` (accepted; CPU products are
    computed at the full precision of their dtype)."""
    return _flag("jax_default_matmul_precision", new_val)


def numpy_rank_promotion(new_val: str):
    """Context manager: ``"allow"``, ``"warn"`` or ``"raise"`` when ``funcgrad.numpy`` would
    broadcast operands of different ranks (scalars aside). NumPy's own operators on eager
    arrays (``a + b``) are NumPy's and are not checked; ``fnp.add(a, b)`` and everything
    traced is."""
    return _flag("jax_numpy_rank_promotion", new_val)


def numpy_dtype_promotion(new_val: str):
    """Context manager: ``"standard"`` or ``"strict"`` (``funcgrad.numpy`` raises
    ``TypePromotionError`` instead of promoting between two different dtypes; weak Python
    scalars still take the array's dtype)."""
    return _flag("jax_numpy_dtype_promotion", new_val)


def promotion_rules(rules: str):
    """Context manager: whose dtype promotion ``funcgrad`` applies inside, ``"numpy"``
    (NumPy 2's, the default) or ``"jax"`` (JAX's type-promotion lattice, as with
    ``jax_enable_x64``: any integer with float32 is float32, with complex64 complex64).
    Weak Python scalars promote alike under both. The same as
    ``config.update("funcgrad_promotion", rules)`` (``FUNCGRAD_PROMOTION=jax`` sets it for a
    whole process); a jitted function traces again under the other rules, and finds its
    earlier programs when they come back.

    >>> x, y = np.ones(2, np.int32), np.ones(2, np.float32)
    >>> with fg.promotion_rules("jax"):
    ...     fnp.add(x, y).dtype
    dtype('float32')
    >>> fnp.add(x, y).dtype
    dtype('float64')
    """
    return _flag("funcgrad_promotion", rules)


@contextlib.contextmanager
def default_device(device):
    """Context manager placing new arrays on ``device``: funcgrad has one device, so it
    accepts that device (or None, or ``"cpu"``) and refuses any other."""
    if device is not None and device != "cpu" and device not in devices():
        raise ValueError(f"default_device: {device!r} is not a funcgrad device; the only one is {devices()[0]!r}")
    yield


@contextlib.contextmanager
def named_scope(name: str):
    """Context manager naming the operations staged inside (JAX adds ``name`` to the op
    metadata XLA and profilers show). funcgrad's programs carry each operation's source line
    instead and no scope names: the scope changes neither values nor programs."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a str, got {type(name).__name__}")
    yield


def process_count(backend=None) -> int:
    """The number of processes of this computation: 1."""
    return 1


def process_index(backend=None) -> int:
    """This process's index: 0."""
    return 0


def process_indices(backend=None) -> list:
    """The indices of the processes: ``[0]``."""
    return [0]


host_count, host_id, host_ids = process_count, process_index, process_indices  # JAX's older names


def typeof(x):
    """The abstract value (``ShapedArray``: shape, dtype, weak type) of an array, scalar or
    traced value.

    >>> fg.typeof(np.ones((2, 3), np.float32))
    ShapedArray(f32[2,3])
    """
    return get_aval_any(x)


def clear_caches() -> None:
    """Forget every jitted function's compiled signatures (the next call traces and compiles
    again; the on-disk cache is kept) and ``funcgrad.numpy``'s eager dispatch plans."""
    from funcgrad.numpy_api import eager_fast
    from funcgrad.transforms.jit import LIVE_JITTED

    for jitted in list(LIVE_JITTED):
        jitted.clear_cache()
    eager_fast.reset_plans()


def effects_barrier() -> None:
    """Wait until every side effect issued so far (``debug.print``, callbacks) has run:
    funcgrad runs them synchronously, so they all have when this is called."""


def copy_to_host_async(x):
    """Start copying ``x``'s arrays to host memory: funcgrad's arrays are host memory
    already, so there is nothing to copy."""


def print_environment_info(return_string: bool = False):
    """The versions funcgrad runs with (funcgrad, NumPy, llvmlite, Python, platform): printed,
    or returned with ``return_string=True``."""
    import funcgrad

    try:
        import llvmlite
        llvm = llvmlite.__version__
    except ImportError:  # pragma: no cover - a runtime dependency
        llvm = "not installed"
    text = (f"funcgrad:  {funcgrad.__version__}\nnumpy:     {np.__version__}\nllvmlite:  {llvm}\n"
            f"python:    {sys.version.splitlines()[0]}\ndevices:   {devices()}\nplatform:  {platform.platform()}\n")
    if return_string:
        return text
    print(text, end="")
    return None


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """``(fwd, bwd)``: ``fwd(*args)`` is ``(fun(*args), residuals)`` (with ``has_aux``,
    ``(out, residuals, aux)``), ``bwd(residuals, cotangent)`` the cotangents of the arguments
    ``argnums`` (a tuple when ``argnums`` is a sequence), as from ``vjp``. The residuals are
    the arguments themselves; ``bwd`` recomputes the forward pass inside its (jitted) program,
    so it compiles once and is reused across iterations.

    >>> fwd, bwd = fg.fwd_and_bwd(lambda x, w: x * w, argnums=1)
    >>> y, res = fwd(2.0, 3.0)
    >>> float(bwd(res, 1.0))
    2.0
    """
    from funcgrad.transforms.ad_api import vjp
    from funcgrad.transforms.jit import jit

    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def fwd(*args):
        out = fun(*args)
        if has_aux:
            out, aux = out
            return out, args, aux
        return out, args

    def bwd(residuals, cotangent):
        args = list(residuals)

        def of_wanted(*wanted):
            full = list(args)
            for i, v in zip(nums, wanted):
                full[i] = v
            out = fun(*full)
            return out[0] if has_aux else out

        _, pullback = vjp(of_wanted, *(args[i] for i in nums))
        cts = pullback(cotangent)
        return cts[0] if single else tuple(cts)

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
