"""Every environment switch funcgrad reads, in one place.

A switch is on when its variable is set to anything but ``""`` or ``"0"``. Switches are
read when they are consulted, not at import, so a test (or a user) can set one through
``os.environ`` at any time; the one exception is ``FUNCGRAD_NO_BLAS``, which
``funcgrad.lowering.dot`` reads once into ``USE_BLAS`` (tests flip that attribute).

Adding a switch: one entry in ``SWITCHES`` (name -> what it does, shown by
``describe()``), read it with ``flag(NAME)`` where it matters, and a line in the README
"Debugging" section.

This module imports nothing from funcgrad, so every layer (``core`` included) may use it.
"""
from __future__ import annotations

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
CACHE_DIR = "FUNCGRAD_CACHE_DIR"
CACHE_MAX_MB = "FUNCGRAD_CACHE_MAX_MB"
NUM_THREADS = "FUNCGRAD_NUM_THREADS"

SWITCHES: dict[str, str] = {
    DEBUG: "type-check every jaxpr a transform produces (the test suite sets it)",
    LOG_COMPILES: "log each jit compilation with its cause, and any interpreter fallback",
    EXPLAIN_CACHE_MISSES: "on each jit retrace, log how the arguments differ from the nearest cached signature",
    DUMP_JAXPR: "print the jaxpr after each stage of jit's pipeline: traced, simplified, fused",
    DUMP_IR: "print the LLVM IR of each compilation before and after optimisation",
    NO_BLAS: "compile matrix products as loop kernels instead of BLAS calls (read at import)",
    NO_DISK_CACHE: "neither read nor write the on-disk compilation cache",
    NO_TIERED_COMPILE: "compile cold programs optimised on the calling thread (no quick code first)",
}

# Settings with a value (read with ``setting``), listed by ``describe()`` and the README.
SETTINGS: dict[str, str] = {
    CACHE_DIR: "the on-disk compilation cache's directory (default $XDG_CACHE_HOME/funcgrad or ~/.cache/funcgrad)",
    CACHE_MAX_MB: "the on-disk compilation cache's size bound in MB (default 256)",
    NUM_THREADS: "threads for large compiled loop nests (default: the CPUs this process may use; read at first use)",
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
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "funcgrad")


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


__all__ = ["SWITCHES", "SETTINGS", "flag", "setting", "number_setting", "dump", "describe", "default_cache_dir",
           "DEBUG", "LOG_COMPILES", "EXPLAIN_CACHE_MISSES", "DUMP_JAXPR", "DUMP_IR", "NO_BLAS", "NO_DISK_CACHE",
           "CACHE_DIR", "CACHE_MAX_MB", "NUM_THREADS"]
