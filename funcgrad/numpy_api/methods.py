"""Array methods and operators for traced values, installed onto ``Tracer``.

``core`` cannot import ``numpy_api``; instead this module gives ``Tracer`` its
operators (``+ - * / // % ** @``, comparisons, indexing, ``.at``), NumPy-style
methods (``.sum() .reshape() .astype() ...``) and NumPy interop
(``numpy.sin(tracer)`` dispatches to ``funcgrad.numpy.sin`` via ``__array_ufunc__``).
Functions are looked up by name at call time, so every method follows its
``funcgrad.numpy`` function.
"""
from __future__ import annotations

from funcgrad.core.trace import Tracer

_FNP = None


def _fnp():
    global _FNP
    fnp = _FNP
    if fnp is None:  # first use: funcgrad.numpy_api imports this module, so not at import time
        import funcgrad.numpy_api as fnp

        _FNP = fnp
    return fnp


def _binary(name, reflected=False):
    if reflected:
        def method(self, other):
            return _as_python_arithmetic(getattr(_fnp(), name)(other, self), self, other)
    else:
        def method(self, other):
            return _as_python_arithmetic(getattr(_fnp(), name)(self, other), self, other)
    return method


_PY_SCALARS = (bool, int, float)


def _as_python_arithmetic(out, *operands):
    """A traced weakly typed value stands for a Python scalar (a jit argument ``1.5``), and
    Python's operators on Python scalars give Python scalars: weakly typed, so that
    ``(x + 0.5) + float32_array`` stays float32 under jit as it does eagerly. funcgrad.numpy
    functions, like NumPy's, give strongly typed results (NumPy scalars)."""
    if type(out) is tuple:  # divmod
        return tuple(_as_python_arithmetic(o, *operands) for o in out)
    if not isinstance(out, Tracer) or out.aval.weak_type:
        return out
    for o in operands:
        if not (type(o) in _PY_SCALARS or (isinstance(o, Tracer) and o.aval.weak_type)):
            return out
    from funcgrad.core import lax_api

    return lax_api.convert_element_type(out, out.aval.dtype, weak_type=True)


def _unsupported_binary(symbol, numpy_name, instead, reflected=False):
    def method(self, other):
        left, right = (other, self) if reflected else (self, other)
        raise TypeError(
            f"the {symbol} operator (numpy.{numpy_name}) is not supported on traced arrays: got "
            f"{_describe(left)} {symbol} {_describe(right)}; funcgrad has no shift primitive, "
            f"{instead} instead"
        )
    return method


def _describe(x) -> str:
    aval = getattr(x, "aval", None)
    if aval is not None:
        return f"a traced {aval.str_short()}"
    dtype = getattr(x, "dtype", None)
    return f"{type(x).__name__} of dtype {dtype}" if dtype is not None else type(x).__name__


def _unary(name):
    def method(self):
        return _as_python_arithmetic(getattr(_fnp(), name)(self), self)
    return method


def _forward(name):
    """``x.name(*args, **kw)`` -> ``fnp.name(x, *args, **kw)``."""
    def method(self, *args, **kwargs):
        return getattr(_fnp(), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "divmod": "divmod",
}
# Operators with no primitive to build on (funcgrad has no shift primitive): a TypeError
# naming the operator and the dtype, with the arithmetic that does the same job.
_UNSUPPORTED_BINARY = {
    "lshift": ("<<", "left_shift", "multiply by a power of two (x * 2**k)"),
    "rshift": (">>", "right_shift", "floor-divide by a power of two (x // 2**k)"),
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "invert"}
_METHODS = [
    "sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "all", "any",
    "cumsum", "cumprod", "ptp", "transpose", "ravel", "squeeze", "swapaxes",
    "clip", "round", "dot", "trace", "diagonal", "nonzero", "repeat", "sort", "argsort",
    "conj", "conjugate", "take",
]


def _reshape(self, *shape, order="C"):
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _fnp().reshape(self, shape)


def _astype(self, dtype, copy=True):
    return _fnp().asarray(self, dtype=dtype)


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return _fnp().transpose(self, axes or None)


def _getitem(self, idx):
    return _fnp().indexing.getitem(self, idx)


def _at(self):
    return _fnp().indexing.at(self)


def _copy(self):
    return self


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    fnp = _fnp()
    fn = getattr(fnp, ufunc.__name__, None)
    if method != "__call__" or fn is None or kwargs.get("out") is not None:
        raise TypeError(
            f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method} cannot be applied "
            f"to a traced array; use funcgrad.numpy.{ufunc.__name__} (import funcgrad.numpy as fnp)"
        )
    kwargs.pop("out", None)
    return fn(*inputs, **kwargs)


def _array_function(self, func, types, args, kwargs):
    fn = getattr(_fnp(), func.__name__, None)
    if fn is None or getattr(func, "__module__", "").startswith("numpy.linalg"):
        raise TypeError(
            f"numpy.{func.__name__} cannot see inside a traced array and funcgrad.numpy has no "
            f"'{func.__name__}'; rewrite with funcgrad.numpy functions"
        )
    return fn(*args, **kwargs)


def install() -> None:
    for short, name in _BINARY.items():
        setattr(Tracer, f"__{short}__", _binary(name))
        setattr(Tracer, f"__r{short}__", _binary(name, reflected=True))
    for short, (symbol, numpy_name, instead) in _UNSUPPORTED_BINARY.items():
        setattr(Tracer, f"__{short}__", _unsupported_binary(symbol, numpy_name, instead))
        setattr(Tracer, f"__r{short}__", _unsupported_binary(symbol, numpy_name, instead, reflected=True))
    for short, name in _COMPARE.items():
        setattr(Tracer, f"__{short}__", _binary(name))
    for short, name in _UNARY.items():
        setattr(Tracer, f"__{short}__", _unary(name))
    for name in _METHODS:
        setattr(Tracer, name, _forward(name))
    Tracer.reshape = _reshape
    Tracer.flatten = _forward("ravel")
    Tracer.astype = _astype
    Tracer.transpose = _transpose
    Tracer.T = property(lambda self: _fnp().transpose(self))
    Tracer.mT = property(lambda self: _fnp().swapaxes(self, -1, -2))
    Tracer.real = property(lambda self: self)
    Tracer.__getitem__ = _getitem
    Tracer.at = property(_at)
    Tracer.copy = _copy
    Tracer.__array_ufunc__ = _array_ufunc
    Tracer.__array_function__ = _array_function
    Tracer.__hash__ = None
