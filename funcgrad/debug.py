"""``funcgrad.debug``: print and call Python with run-time values, from anywhere.

``debug.print(fmt, *args, **kwargs)`` prints ``fmt.format(*args, **kwargs)`` with the
values the program computes, and ``debug.callback(fn, *args, **kwargs)`` calls ``fn``
with them (NumPy arrays), eagerly, under ``jit`` (compiled code calls back into Python
there), once per example under ``vmap`` (with the example's values; a print whose
arguments do not depend on the example prints once, as in JAX), with primal values
under ``grad``/``jvp``, only in the branch a ``cond``/``switch`` takes (also per example
under ``vmap``) and in every iteration of ``while_loop``/``fori_loop``/``scan``. They are
effects: never removed or merged by the compiler, always run in program order (so
``ordered=True`` holds whether or not it is asked for).

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> @fg.jit
... def f(x):
...     y = fnp.sin(x)
...     fg.debug.print("x={x} y={}", y, x=x)
...     return y * 2
"""
from __future__ import annotations

import builtins

from funcgrad.callbacks import split_operands
from funcgrad.core.prims.effects import UserCallback, callback_p
from funcgrad.core.wrapping import fun_name

__all__ = ["print", "callback", "breakpoint"]


def callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` with the run-time values of ``args``/``kwargs``
    (pytrees; array leaves arrive as NumPy arrays). Returns None. ``partitioned`` is
    accepted for JAX compatibility (one device)."""
    if not callable(callback):
        raise TypeError(f"debug.callback: callback must be callable, got {type(callback).__name__}")
    operands, rebuild = split_operands(args, kwargs)

    def flat(*values):
        a, k = rebuild(values)
        callback(*a, **k)

    host = UserCallback(flat, (), f"debug.callback({fun_name(callback)})")
    callback_p.bind(*operands, callback=host, out_avals=(), effect="debug", ordered=bool(ordered), vmap_method=None)


def print(fmt: str, *args, ordered=False, partitioned=False, **kwargs) -> None:  # noqa: A001  (JAX's name)
    """Print ``fmt.format(*args, **kwargs)`` with run-time values (see the module doc)."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: fmt must be a str, got {type(fmt).__name__}")
    operands, rebuild = split_operands(args, kwargs)

    def flat(*values):
        a, k = rebuild(values)
        builtins.print(fmt.format(*a, **k))

    host = UserCallback(flat, (), "debug.print")
    callback_p.bind(*operands, callback=host, out_avals=(), effect="debug", ordered=bool(ordered), vmap_method=None)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=None, token=None):  # noqa: A001
    """Enter ``pdb`` at run time with the caller's local variables: arrays (traced ones
    included) hold their run-time values (once per example under ``vmap``, per iteration
    in loops). Type ``p x`` to look, ``c`` to go on. A simplified form of JAX's: no
    stepping through frames (``u``/``d``). JAX's keyword arguments are accepted."""
    import pdb
    import sys

    from funcgrad.core.trace import Tracer

    local_vars = dict(sys._getframe(1).f_locals)
    names = [k for k, v in local_vars.items() if isinstance(v, Tracer) or type(v).__module__ == "numpy"]
    operands, rebuild = split_operands([local_vars[k] for k in names], {})
    scope = {k: v for k, v in local_vars.items() if k not in names}
    globals_ = dict(sys._getframe(1).f_globals)

    def flat(*values):
        vals, _ = rebuild(values)
        env = dict(scope, **dict(zip(names, vals)))
        pdb.Pdb().run(compile("pass", "<funcgrad.debug.breakpoint>", "exec"), globals_, env)

    host = UserCallback(flat, (), "debug.breakpoint")
    callback_p.bind(*operands, callback=host, out_avals=(), effect="debug", ordered=True, vmap_method=None)
