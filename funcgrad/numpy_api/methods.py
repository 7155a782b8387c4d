"""Array methods and operators for traced values, installed onto ``Tracer``.

``core`` cannot import ``numpy_api``; instead this module gives ``Tracer`` its
operators (``+ - * / // % ** @``, comparisons, indexing, ``.at``), NumPy-style
methods (``.sum() .reshape() .astype() ...``) and NumPy interop
(``numpy.sin(tracer)`` dispatches to ``funcgrad.numpy.sin`` via ``__array_ufunc__``).
Functions are looked up by name at call time, so every method follows its
``funcgrad.numpy`` function.

It also finishes eager values (``funcgrad.core.array.Array``, which core defines
without seeing ``funcgrad.numpy``): their traced-index ``__getitem__`` and ``.at``
(the same helper as on tracers, with JAX's ``apply`` and keywords), and the boundary of
every public ``funcgrad.numpy`` function, which turns a result that did not come from
``bind`` (an argument returned as it is, an array NumPy built directly) into a value.
"""
from __future__ import annotations

import functools
import importlib
import inspect

import numpy as np

from funcgrad.core import array as _array
from funcgrad.core.array import Array, as_value, scalar_value
from funcgrad.core.staging import JaxprTracer
from funcgrad.core.trace import Tracer
from funcgrad.numpy_api import staged

_FNP = None


def _fnp():
    global _FNP
    fnp = _FNP
    if fnp is None:  # first use: funcgrad.numpy_api imports this module, so not at import time
        import funcgrad.numpy_api as fnp

        _FNP = fnp
    return fnp


def _binary(name, reflected=False):
    attempt = staged.ATTEMPTS.get(name)
    if attempt is not None:  # staged operands first: the one primitive, no public layers
        if reflected:
            def method(self, other):
                if type(self) is JaxprTracer or self._trace.concrete_values:  # (a staged or taped self)
                    out = attempt(other, self)
                    if out is not None:
                        return out
                return _as_python_arithmetic(getattr(_fnp(), name)(other, self), self, other)
        else:
            def method(self, other):
                if type(self) is JaxprTracer or self._trace.concrete_values:
                    out = attempt(self, other)
                    if out is not None:
                        return out
                return _as_python_arithmetic(getattr(_fnp(), name)(self, other), self, other)
        return method
    if reflected:
        def method(self, other):
            return _as_python_arithmetic(getattr(_fnp(), name)(other, self), self, other)
    else:
        def method(self, other):
            return _as_python_arithmetic(getattr(_fnp(), name)(self, other), self, other)
    return method


_PY_SCALARS = (bool, int, float, complex)


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


def _unary(name):
    attempt = staged.ATTEMPTS.get(name)
    if attempt is not None:
        def method(self):
            if type(self) is JaxprTracer or self._trace.concrete_values:
                out = attempt(self)
                if out is not None:
                    return out
            return _as_python_arithmetic(getattr(_fnp(), name)(self), self)
        return method

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
    "divmod": "divmod", "lshift": "left_shift", "rshift": "right_shift",
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
    if self._trace.concrete_values and method == "__call__" and not kwargs:  # (``array - taped``)
        attempt = staged.ATTEMPTS.get(ufunc.__name__)
        if attempt is not None and len(inputs) == ufunc.nin:
            out = attempt(*inputs)
            if out is not None:
                return out
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
    module = getattr(func, "__module__", "")
    fn = getattr(_fnp().fft if module.startswith("numpy.fft") else _fnp(), func.__name__, None)
    if not callable(fn) or module.startswith("numpy.linalg"):
        raise TypeError(
            f"numpy.{func.__name__} cannot see inside a traced array and funcgrad.numpy has no "
            f"'{func.__name__}'; rewrite with funcgrad.numpy functions"
        )
    return fn(*args, **kwargs)


def _traced_getitem(self, idx):
    return _fnp().indexing.getitem(self, idx)


# --- the boundary of public funcgrad.numpy functions ----------------------------------------

def _inputs(args, kwargs):
    """The ndarrays among a call's arguments (one level of lists/tuples deep, and so on)."""
    found, stack = [], [args, tuple(kwargs.values())]
    while stack:
        for a in stack.pop():
            if isinstance(a, np.ndarray):
                found.append(a)
            elif type(a) in (list, tuple):
                stack.append(a)
    return found


def _strong(out):
    """A traced result of a ``funcgrad.numpy`` function, strongly typed: NumPy's functions
    give NumPy arrays and scalars whatever they were given (``np.repeat(1.5, 2) + f32`` is
    float64), so ``fnp.repeat(s, 2)`` of a weak ``s`` (a Python scalar passed to ``jit``)
    is strong too, and eager, staged and compiled dtypes agree. This is the one place the
    rule is applied: structural primitives keep a weak type (as JAX's do), and only
    Python's operators on weak values give weak values (``_as_python_arithmetic``)."""
    if getattr(out.aval, "weak_type", False):
        from funcgrad.core import lax_api

        return lax_api.convert_element_type(out, out.aval.dtype, weak_type=False)
    return out


def _value(out, args, kwargs):
    t = type(out)
    if t is Array:  # a value already, unless it is an argument NumPy left writeable
        return as_value(np.array(out)) if out.flags.writeable else out
    if t is np.ndarray:
        return as_value(out, _inputs(args, kwargs))
    if isinstance(out, np.generic):  # (a 0-d result made a NumPy scalar: a 0-d value)
        return scalar_value(out)
    if isinstance(out, tuple) or t is list:  # (named) tuples and lists of results
        items = [_value(o, args, kwargs) for o in out]
        if t is tuple or t is list:
            return t(items)
        return t._make(items) if hasattr(t, "_make") else t(items)
    if isinstance(out, Tracer):
        return _strong(out)
    return out


def values_boundary(fn):
    """``fn`` whose eager results are values (``core/array.py``): results computed by
    ``bind`` already are; this catches arguments returned as they are and arrays built
    by NumPy directly (creation functions). The wrapper has ``fn``'s own parameters
    (generated, like ``lowering/dispatch.make_caller``): a ``*args, **kwargs`` wrapper
    would cost about 0.2 us more per call."""
    public = _fixed_arity_boundary(fn) or _generic_boundary(fn)
    functools.update_wrapper(public, fn)
    public.values_boundary = True
    return public


def _generic_boundary(fn):
    def public(*args, **kwargs):
        out = fn(*args, **kwargs)
        t = type(out)
        if t is Array:
            for a in args:
                if out is a:
                    return _value(out, args, kwargs)
            return out
        if t is np.ndarray or t is tuple or t is list or isinstance(out, (tuple, np.generic)):
            return _value(out, args, kwargs)
        if isinstance(out, Tracer):
            return _strong(out)
        return out
    return public


_P = inspect.Parameter


def _fixed_arity_boundary(fn):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if not params or any(p.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD) or p.name.startswith("_") for p in params):
        return None
    ns = {"_fn": fn, "_Array": Array, "_nd": np.ndarray, "_value": _value, "_tuple": tuple, "_list": list,
          "_type": type, "_isinstance": isinstance, "_Tracer": Tracer, "_strong": _strong,
          "_tuple_or_scalar": (tuple, np.generic)}
    decl, call, names = [], [], []
    for k, p in enumerate(params):
        name = f"a{k}"
        names.append(name)
        if p.kind is _P.KEYWORD_ONLY and not any(d.startswith("*") for d in decl):
            decl.append("*")
        default = ""
        if p.default is not _P.empty:
            ns[f"_d{k}"] = p.default
            default = f"=_d{k}"
        decl.append(f"{p.name if p.kind is not _P.POSITIONAL_ONLY else name}{default}")
        arg = name if p.kind is _P.POSITIONAL_ONLY else p.name
        call.append(f"{arg}={arg}" if p.kind is _P.KEYWORD_ONLY else arg)
        if p.kind is _P.POSITIONAL_ONLY and (k + 1 == len(params) or params[k + 1].kind is not _P.POSITIONAL_ONLY):
            decl.append("/")
        if p.kind is not _P.POSITIONAL_ONLY:
            names[-1] = p.name
    everything = "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
    lines = [  # (locals start with "_": parameters never do)
        f"def public({', '.join(decl)}):",
        f"    _out = _fn({', '.join(call)})",
        "    _t = _type(_out)",
        "    if _t is _Array:",
        f"        if {' or '.join(f'_out is {n}' for n in names)}:",
        f"            return _value(_out, {everything}, {{}})",
        "        return _out",
        "    if _t is _nd or _t is _tuple or _t is _list or _isinstance(_out, _tuple_or_scalar):",
        f"        return _value(_out, {everything}, {{}})",
        "    if _isinstance(_out, _Tracer):",
        "        return _strong(_out)",
        "    return _out",
    ]
    # Compiled under this file's name: frames of the wrapper are funcgrad's, so the source
    # line staging records for an equation is the user's, not "<string>".
    exec(compile("\n".join(lines), __file__, "exec"), ns)  # noqa: S102 - generated from the signature only
    return ns["public"]


def wrap_public(modules, package) -> None:
    """Put ``values_boundary`` around each public function of ``modules`` (their
    ``__all__``), in the module itself and in ``package``, so ``fnp.sin`` is still
    ``funcgrad.numpy_api.elementwise.sin``."""
    for module in modules:
        for name in module.__all__:
            fn = getattr(module, name, None)
            if not inspect.isfunction(fn) or name == "at":  # at returns a helper, not an array
                continue
            if not getattr(fn, "values_boundary", False):
                fn = values_boundary(fn)
                setattr(module, name, fn)
            if getattr(package, name, None) is getattr(fn, "__wrapped__", None):
                setattr(package, name, fn)


def install() -> None:
    for short, name in _BINARY.items():
        setattr(Tracer, f"__{short}__", _binary(name))
        setattr(Tracer, f"__r{short}__", _binary(name, reflected=True))
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
    Tracer.real = property(lambda self: _fnp().real(self))
    Tracer.imag = property(lambda self: _fnp().imag(self))
    Tracer.__getitem__ = _getitem
    Tracer.at = property(_at)
    Tracer.copy = _copy
    Tracer.__array_ufunc__ = _array_ufunc
    Tracer.__array_function__ = _array_function
    Tracer.__hash__ = None
    from funcgrad.numpy_api.array_api import namespace

    Tracer.__array_namespace__ = lambda self, *, api_version=None: namespace(api_version)
    _array.hooks.update(getitem=_traced_getitem, at=_at, is_tracer=lambda x: isinstance(x, Tracer),
                        namespace=namespace)
    import funcgrad.numpy_api as api  # (being imported: its names are bound by now)

    names = [*api.MODULES, "linalg"]
    wrap_public([importlib.import_module(f"funcgrad.numpy_api.{n}") for n in names], api)
