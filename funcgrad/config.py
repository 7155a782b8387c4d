"""Every environment switch funcgrad reads, in one place.

A switch is on when its variable is set to anything but ``""`` or ``"0"``. Switches are
read when they are consulted, not at import, so a test (or a user) can set one through
``os.environ`` at any time; the exceptions are ``FUNCGRAD_NO_BLAS``, which
``funcgrad.lowering.dot`` reads once into ``USE_BLAS`` (tests flip that attribute), and
``FUNCGRAD_PROMOTION``, read here at import as the first value of the
``funcgrad_promotion`` flag (``update`` changes it afterwards).

Adding a switch: one entry in ``SWITCHES`` (name -> what it does, shown by
``describe()``), read it with ``flag(NAME)`` where it matters, and a row in the table of
docs/guide/debugging.md.

JAX's configuration flags are here too: ``config.update("jax_enable_x64", True)``,
``config.read(name)`` and attribute reads (``config.jax_disable_jit``); ``JAX_FLAGS`` lists
the flags funcgrad knows and what each does here, and ``FUNCGRAD_FLAGS`` funcgrad's own
flags set the same way (``config.update("funcgrad_promotion", "jax")``).

This module imports nothing from funcgrad, so every layer (``core`` included) may use it.
"""
from __future__ import annotations

import contextlib
import math
import os
import sys
import warnings

DEBUG = "FUNCGRAD_DEBUG"
LOG_COMPILES = "FUNCGRAD_LOG_COMPILES"
EXPLAIN_CACHE_MISSES = "FUNCGRAD_EXPLAIN_CACHE_MISSES"
DUMP_JAXPR = "FUNCGRAD_DUMP_JAXPR"
DUMP_IR = "FUNCGRAD_DUMP_IR"
NO_BLAS = "FUNCGRAD_NO_BLAS"
NO_DISK_CACHE = "FUNCGRAD_NO_DISK_CACHE"
NO_TIERED_COMPILE = "FUNCGRAD_NO_TIERED_COMPILE"
CACHE_SHARED = "FUNCGRAD_CACHE_SHARED"
CACHE_DIR = "FUNCGRAD_CACHE_DIR"
CACHE_MAX_MB = "FUNCGRAD_CACHE_MAX_MB"
NUM_THREADS = "FUNCGRAD_NUM_THREADS"
PROMOTION = "FUNCGRAD_PROMOTION"

SWITCHES: dict[str, str] = {
    DEBUG: "type-check every jaxpr a transform produces (the test suite sets it)",
    LOG_COMPILES: "log each jit compilation with its cause, and any interpreter fallback",
    EXPLAIN_CACHE_MISSES: "on each jit retrace, log how the arguments differ from the nearest cached signature",
    DUMP_JAXPR: "print the jaxpr after each stage of jit's pipeline: traced, simplified, fused",
    DUMP_IR: "print the LLVM IR of each compilation before and after optimisation",
    NO_BLAS: "compile matrix products as loop kernels instead of BLAS calls (read at import)",
    NO_DISK_CACHE: "neither read nor write the on-disk compilation cache",
    NO_TIERED_COMPILE: "compile cold programs optimised on the calling thread (no quick code first)",
    CACHE_SHARED: "share the on-disk compilation cache with its directory's group (trusts every member)",
}

# Settings with a value (read with ``setting``), listed by ``describe()`` and the README.
SETTINGS: dict[str, str] = {
    CACHE_DIR: "the on-disk compilation cache's directory (default $XDG_CACHE_HOME/funcgrad or ~/.cache/funcgrad)",
    CACHE_MAX_MB: "the on-disk compilation cache's size bound in MB (default 256)",
    NUM_THREADS: "threads for large compiled loop nests (default: the CPUs this process may use; read at first use)",
    PROMOTION: "'numpy' (default) or 'jax': the dtype promotion rules funcgrad starts with (read at import; "
               "the funcgrad_promotion flag)",
}


def flag(name: str) -> bool:
    """Is switch ``name`` on right now?"""
    if name not in SWITCHES:
        raise KeyError(f"unknown funcgrad switch {name!r}; known: {', '.join(SWITCHES)}")
    return os.environ.get(name, "") not in ("", "0")


def setting(name: str) -> str:
    """The value of setting ``name`` right now ("" when unset)."""
    if name not in SETTINGS:
        raise KeyError(f"unknown funcgrad setting {name!r}; known: {', '.join(SETTINGS)}")
    return os.environ.get(name, "")


_default_dirs: dict = {}
_warned: set = set()


def number_setting(name: str, default: float, minimum: float, what: str) -> float:
    """Setting ``name`` as a finite number >= ``minimum`` (``default`` when unset). Any
    other value warns, naming the variable and the valid range, and gives ``default``:
    a mistyped tuning knob should not stop a program (it may be read on a compiler
    thread)."""
    text = setting(name).strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and value >= minimum:
        return value
    if (name, text) not in _warned:
        _warned.add((name, text))
        warnings.warn(f"{name}={text!r} is not valid: expected {what}; using the default, {default:g}",
                      RuntimeWarning, stacklevel=2)
    return default


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/funcgrad`` or ``~/.cache/funcgrad`` (remembered per value of the two
    variables: the disk cache asks at every load, and ``expanduser`` costs ~10 us)."""
    env = (os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"))
    d = _default_dirs.get(env)
    if d is None:
        d = _default_dirs[env] = os.path.join(env[0] or os.path.join(os.path.expanduser("~"), ".cache"), "funcgrad")
    return d


def dump(header: str, text: str) -> None:
    """Print ``text`` to stderr under a ``--- funcgrad: <header>`` line (for the dump
    switches; callers test the switch first so the text is only built when wanted)."""
    print(f"--- funcgrad: {header}\n{text}", file=sys.stderr)


def describe() -> str:
    """One line per switch (its name, whether it is on, and what it does), then one per
    setting (its value)."""
    lines = [f"{name}={'1' if flag(name) else '0'}  {what}" for name, what in SWITCHES.items()]
    lines += [f"{name}={setting(name)!r}  {what}" for name, what in SETTINGS.items()]
    return "\n".join(lines)


# --- JAX's configuration flags -------------------------------------------------------------
# State read on hot paths is held in one-element lists (shared with the readers, and read by
# the native jit entry): ``JIT_DISABLED[0]`` (jit runs Python; ``disable_jit``),
# ``DEBUG_NANS[0]``/``DEBUG_INFS[0]``, ``DEBUG_CHECKS[0]`` (either check), and
# ``JIT_SLOW_PATH[0]`` (jit disabled or a check on: the native jit entry defers to Python).
JIT_DISABLED = [False]
DEBUG_NANS = [False]
DEBUG_INFS = [False]
DEBUG_CHECKS = [False]
JIT_SLOW_PATH = [False]
# ``funcgrad.numpy``'s broadcasting and promotion read these (JAX's numpy_rank_promotion and
# numpy_dtype_promotion): "allow"/"warn"/"raise" and "standard"/"strict".
NO_TRACING = [False]  # jax_no_tracing: a jitted function tracing raises (funcgrad.no_tracing)
RANK_PROMOTION = ["allow"]
DTYPE_PROMOTION = ["standard"]
_CHOICES = {"jax_numpy_rank_promotion": (RANK_PROMOTION, ("allow", "warn", "raise")),
            "jax_numpy_dtype_promotion": (DTYPE_PROMOTION, ("standard", "strict"))}
# funcgrad_promotion: whose promotion lattice decides a result dtype, NumPy 2's (default) or
# JAX's (core/dtypes.py); ``JAX_PROMOTION[0]`` is True for JAX's (Array operators read it).
JAX_PROMOTION = [False]
PROMOTION_RULES = ("numpy", "jax")
# Called when either flag or funcgrad_promotion changes (funcgrad.numpy's eager fast path
# forgets its plans; jitted functions set aside their traces for the previous rules).
PROMOTION_HOOKS: list = []
_ENV_FLAGS = {"jax_log_compiles": LOG_COMPILES, "jax_explain_cache_misses": EXPLAIN_CACHE_MISSES,
              "jax_enable_checks": DEBUG}

JAX_FLAGS: dict[str, str] = {
    "jax_enable_x64": "always True: funcgrad computes in float64 by default (False warns and changes nothing)",
    "jax_disable_jit": "jit-decorated functions run their Python op by op, as inside disable_jit()",
    "jax_debug_nans": "a FloatingPointError when a jitted function returns a NaN, or a primitive run eagerly "
                      "through bind produces one",
    "jax_debug_infs": "the same for infinities",
    "jax_log_compiles": f"the {LOG_COMPILES} switch",
    "jax_platform_name": "'cpu' (the only platform)",
    "jax_platforms": "'cpu' (the only platform)",
    "jax_default_matmul_precision": "accepted and ignored: CPU products are always computed at full precision",
    "jax_explain_cache_misses": f"the {EXPLAIN_CACHE_MISSES} switch",
    "jax_enable_checks": f"the {DEBUG} switch: type-check every jaxpr a transform produces",
    "jax_no_tracing": "a jitted function that traces (a call with a new signature) raises RuntimeError",
    "jax_numpy_rank_promotion": "'allow' (default), 'warn' or 'raise' when funcgrad.numpy broadcasts operands "
                                "of different ranks (scalars aside)",
    "jax_numpy_dtype_promotion": "'standard' (default) or 'strict': funcgrad.numpy raises TypePromotionError "
                                 "instead of promoting between different dtypes (weak Python scalars aside)",
}
FUNCGRAD_FLAGS: dict[str, str] = {
    "funcgrad_promotion": "'numpy' (default: NumPy 2's dtype promotion) or 'jax' (JAX's promotion lattice, as "
                          "with jax_enable_x64: int32 with float32 is float32); see docs/guide/semantics.md",
}
_X64_DOC = "docs/guide/from-jax.md"
_warned_x64 = [False]
_values: dict[str, object] = {"jax_platform_name": "cpu", "jax_platforms": "cpu",
                              "jax_default_matmul_precision": None}


class UnknownConfigOption(AttributeError):
    """``config.update``/``read`` of a flag funcgrad does not know (an ``AttributeError``,
    as JAX's)."""


def _sync() -> None:
    DEBUG_CHECKS[0] = DEBUG_NANS[0] or DEBUG_INFS[0]
    JIT_SLOW_PATH[0] = JIT_DISABLED[0] or DEBUG_CHECKS[0]


def _platform(name: str, value) -> str:
    names = [v.strip().lower() for v in str(value).split(",")] if value is not None else ["cpu"]
    if "cpu" not in names:
        raise ValueError(f"config.update({name!r}, {value!r}): funcgrad runs on the CPU only; use 'cpu'")
    return "cpu"


def update(name: str, value) -> None:
    """Set JAX configuration flag ``name`` (``JAX_FLAGS`` lists those funcgrad knows) or
    one of funcgrad's own (``FUNCGRAD_FLAGS``).

    >>> funcgrad.config.update("jax_enable_x64", True)   # a no-op: float64 is funcgrad's default
    >>> funcgrad.config.update("jax_debug_nans", True)   # jitted functions' NaN outputs raise
    >>> funcgrad.config.update("jax_debug_nans", False)  # and back to the default
    >>> funcgrad.config.update("funcgrad_promotion", "jax")  # JAX's dtype promotion lattice
    >>> funcgrad.config.update("funcgrad_promotion", "numpy")  # NumPy 2's again (the default)
    """
    if name == "jax_enable_x64":
        if not value and not _warned_x64[0]:
            _warned_x64[0] = True
            warnings.warn("config.update('jax_enable_x64', False) changes nothing: funcgrad always computes in "
                          "float64 by default (pass dtype=float32 where you want float32); see " + _X64_DOC,
                          UserWarning, stacklevel=2)
    elif name == "jax_disable_jit":
        JIT_DISABLED[0] = bool(value)
    elif name in ("jax_debug_nans", "jax_debug_infs"):
        (DEBUG_NANS if name == "jax_debug_nans" else DEBUG_INFS)[0] = bool(value)
    elif name == "jax_no_tracing":
        NO_TRACING[0] = bool(value)
    elif name in _ENV_FLAGS:
        os.environ[_ENV_FLAGS[name]] = "1" if value else "0"
    elif name in _CHOICES:
        state, allowed = _CHOICES[name]
        if value not in allowed:
            raise ValueError(f"config.update({name!r}, {value!r}): the value must be one of {allowed}")
        state[0] = value
        for hook in PROMOTION_HOOKS:
            hook()
    elif name == "funcgrad_promotion":
        _set_promotion(value, f"config.update({name!r}, {value!r})")
    elif name in ("jax_platform_name", "jax_platforms"):
        _values[name] = _platform(name, value)
    elif name == "jax_default_matmul_precision":
        _values[name] = value
    else:
        raise UnknownConfigOption(f"config.update: unrecognized config option {name!r}; funcgrad knows "
                                  f"{', '.join([*JAX_FLAGS, *FUNCGRAD_FLAGS])}")
    _sync()


def read(name: str):
    """The current value of configuration flag ``name`` (JAX's or funcgrad's own)."""
    if name == "jax_enable_x64":
        return True
    if name == "jax_disable_jit":
        return JIT_DISABLED[0]
    if name in ("jax_debug_nans", "jax_debug_infs"):
        return (DEBUG_NANS if name == "jax_debug_nans" else DEBUG_INFS)[0]
    if name == "jax_no_tracing":
        return NO_TRACING[0]
    if name in _ENV_FLAGS:
        return flag(_ENV_FLAGS[name])
    if name in _CHOICES:
        return _CHOICES[name][0][0]
    if name == "funcgrad_promotion":
        return PROMOTION_RULES[JAX_PROMOTION[0]]
    if name in _values:
        return _values[name]
    raise UnknownConfigOption(f"config.read: unrecognized config option {name!r}; funcgrad knows "
                              f"{', '.join([*JAX_FLAGS, *FUNCGRAD_FLAGS])}")


def _set_promotion(value, where: str) -> None:
    if value not in PROMOTION_RULES:
        raise ValueError(f"{where}: the value must be one of {PROMOTION_RULES}")
    jax_rules = value == "jax"
    if JAX_PROMOTION[0] != jax_rules:
        JAX_PROMOTION[0] = jax_rules
        for hook in PROMOTION_HOOKS:
            hook()


def _promotion_from_environment() -> None:
    text = setting(PROMOTION).strip().lower()
    if not text:
        return
    if text in PROMOTION_RULES:
        JAX_PROMOTION[0] = text == "jax"
    else:
        warnings.warn(f"{PROMOTION}={text!r} is not valid: expected one of {PROMOTION_RULES}; using 'numpy'",
                      RuntimeWarning, stacklevel=2)


_promotion_from_environment()


def __getattr__(name: str):  # ``config.jax_enable_x64`` reads the flag, as in JAX
    if name.startswith(("jax_", "funcgrad_")):
        return read(name)
    raise AttributeError(f"module 'funcgrad.config' has no attribute {name!r}")


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Context manager: ``jit``-decorated functions called inside run their Python
    function directly (eagerly, op by op: ``print`` and debuggers see values), as
    ``jax.disable_jit``. Nests; ``disable_jit(False)`` re-enables inside."""
    previous = JIT_DISABLED[0]
    JIT_DISABLED[0] = bool(disable)
    _sync()
    try:
        yield
    finally:
        JIT_DISABLED[0] = previous
        _sync()


__all__ = ["SWITCHES", "SETTINGS", "flag", "setting", "number_setting", "dump", "describe", "default_cache_dir",
           "DEBUG", "LOG_COMPILES", "EXPLAIN_CACHE_MISSES", "DUMP_JAXPR", "DUMP_IR", "NO_BLAS", "NO_DISK_CACHE",
           "CACHE_SHARED", "CACHE_DIR", "CACHE_MAX_MB", "NUM_THREADS", "PROMOTION", "JAX_FLAGS", "FUNCGRAD_FLAGS",
           "update", "read",
           "UnknownConfigOption"]
