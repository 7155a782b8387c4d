"""The stages of ``jit`` (``jax.stages``): ``Wrapped`` (what ``jit(f)`` returns),
``Lowered`` (``jit(f).lower(*args)``: the staged program and its LLVM IR) and ``Compiled``
(``lowered.compile()``: an executable for that one input signature).

>>> import funcgrad as fg
>>> lowered = fg.jit(lambda x: x * 2).lower(1.0)
>>> isinstance(lowered, fg.stages.Lowered), float(lowered.compile()(3.0))
(True, 6.0)
"""
from funcgrad.transforms.jit import Compiled, JittedFunction, Lowered

Wrapped = JittedFunction

__all__ = ["Compiled", "Lowered", "Wrapped"]
