"""Names and wrapper metadata of the callables users hand to transforms.

Transforms accept any callable, as JAX's do: a function, a lambda, a
``functools.partial``, a bound method, an instance of a class with ``__call__``, a
NumPy ufunc. Only some of them have a ``__name__`` (a partial and a callable instance
have none), so messages, pictures and logs name a callable with ``fun_name``, and a
transform's result takes its metadata from ``wraps`` (``functools.wraps`` minus its
assumption that every callable is a function).
"""
from __future__ import annotations

import functools
import types


def fun_name(fun) -> str:
    """The name messages show for ``fun``: its ``__name__``; for a ``functools.partial``
    without one, the name of the function it applies; else its type's name (a callable
    instance is named by its class)."""
    name = getattr(fun, "__name__", None)
    if isinstance(name, str):
        return name
    if isinstance(fun, functools.partial):
        return fun_name(fun.func)
    return type(fun).__name__


def copy_metadata(wrapper, fun) -> None:
    """Give ``wrapper`` ``fun``'s ``__name__``, ``__qualname__``, ``__module__`` and
    ``__doc__`` (for a ``functools.partial``: those of the function it applies, unless set
    on the partial itself), its ``__annotations__`` when it is a plain function, and
    ``__wrapped__ = fun`` (so ``inspect.signature(wrapper)`` is ``fun``'s). A function's
    attribute dict is copied as ``functools.update_wrapper`` does, except names
    ``wrapper``'s class defines (a function attribute named ``lower`` must not hide
    ``jit(f).lower``); a callable instance's state is not copied: it is not metadata."""
    if type(fun) is types.FunctionType:  # (the common case, first: grad(f) wraps on every call)
        if fun.__dict__:
            cls = type(wrapper)
            for k, v in fun.__dict__.items():
                if not hasattr(cls, k):
                    setattr(wrapper, k, v)
        wrapper.__module__, wrapper.__name__, wrapper.__qualname__ = fun.__module__, fun.__name__, fun.__qualname__
        wrapper.__doc__, wrapper.__annotations__, wrapper.__wrapped__ = fun.__doc__, fun.__annotations__, fun
        return
    if isinstance(fun, functools.partial):
        base, own = fun, vars(fun)
        while isinstance(base, functools.partial):
            base = base.func

        def meta(k):
            return own[k] if k in own else getattr(base, k, None)
    else:
        def meta(k):
            return getattr(fun, k, None)

    name = fun_name(fun)
    qualname, module, doc = meta("__qualname__"), meta("__module__"), meta("__doc__")
    wrapper.__name__ = name
    wrapper.__qualname__ = qualname if isinstance(qualname, str) else name
    if isinstance(module, str):
        wrapper.__module__ = module
    wrapper.__doc__ = doc if isinstance(doc, str) else None
    wrapper.__wrapped__ = fun


def wraps(fun):
    """Decorator form of ``copy_metadata`` (``functools.wraps`` for any callable)."""

    def deco(wrapper):
        copy_metadata(wrapper, fun)
        return wrapper

    return deco
