"""``autograph(f)``, ``to_source``, ``do_not_convert`` and the conversion itself: parse
``f``'s source, lower ``break``/``continue``/``return`` to flags (``flags.py``), annotate
liveness (``analysis.py``), rewrite control flow (``converter.py``), compile with the
original file name and line numbers, and rebuild the function over ``f``'s globals and
closure cells. Conversion is cached per code object; functions that converted code calls
are converted the same way on first call (user functions only).
"""
from __future__ import annotations

import ast
import builtins
import dis
import functools
import inspect
import linecache
import sys
import textwrap
import types
import weakref

from funcgrad.autograph import analysis, nodes, runtime
from funcgrad.autograph.converter import ControlFlowConverter
from funcgrad.autograph.errors import ConversionError, RecursiveConversionError
from funcgrad.autograph.flags import FlagLowering
from funcgrad.core import trace as _trace

# Modules whose functions are called as they are, never converted: funcgrad itself,
# NumPy/SciPy, the standard library and test runners.
SKIP_MODULE_ROOTS = frozenset({"funcgrad", "numpy", "scipy", "builtins", "llvmlite", "pytest", "_pytest", "pluggy",
                               "typing_extensions"}) | frozenset(getattr(sys, "stdlib_module_names", ()))
_NOT_PLAIN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
# Opcodes of Python control flow (if/while/for/and/or/conditional expressions,
# comprehensions: all jump) and of ``not``; and of calls.
_CONTROL_OPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | {dis.opmap.get("UNARY_NOT", -1)}
_CALL_OPS = frozenset(dis.opmap[n] for n in ("CALL", "CALL_FUNCTION", "CALL_METHOD", "CALL_FUNCTION_KW",
                                              "CALL_FUNCTION_EX", "CALL_KW") if n in dis.opmap)
_IMMEDIATE = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>"})  # nested code that runs on the spot


class _Converted:
    __slots__ = ("code", "fdef", "scope", "_source")

    def __init__(self, code, fdef, scope):
        self.code, self.fdef, self.scope, self._source = code, fdef, scope, None

    @property
    def source(self):
        if self._source is None:
            self._source = ast.unparse(self.fdef)
        return self._source


_by_code: dict = {}  # original code object -> _Converted
_decisions: dict = {}  # code object -> whether calls from converted code convert it
_functions = weakref.WeakKeyDictionary()  # original function -> converted function
_active: dict = {}  # code object -> [len(runtime.TRACED) at each running activation]


def _last_line(code) -> int:
    """The last source line any instruction of ``code`` (or of the functions nested in
    it) spans: the end of the ``def``, found without tokenizing the file."""
    last = max((end for _, end, _, _ in code.co_positions() if end is not None), default=code.co_firstlineno)
    nested = [_last_line(c) for c in code.co_consts if isinstance(c, types.CodeType)]
    return max([last] + nested)


def _parse_at(chunk, first):
    # Blank lines in front give every node its line in the file (cheaper than
    # ``ast.increment_lineno``, a walk over the whole tree).
    return ast.parse("\n" * (first - 1) + textwrap.dedent("".join(chunk)))


def _source(f):
    """The parsed source of ``f``, with the file's line numbers. Cut from the cached file
    text by the code object's line span (fast); ``inspect`` (which tokenizes) when that
    fails."""
    code = f.__code__
    lines = linecache.getlines(code.co_filename, f.__globals__)
    first = code.co_firstlineno
    if lines and hasattr(code, "co_positions"):
        try:
            return _parse_at(lines[first - 1:_last_line(code)], first)
        except SyntaxError:
            pass
    try:
        chunk, first = inspect.getsourcelines(f)
    except (OSError, TypeError) as e:
        raise ConversionError(f"autograph: cannot convert {f.__qualname__}: its source is not available ({e})") from e
    try:
        return _parse_at(chunk, first)
    except SyntaxError as e:
        raise ConversionError(f"autograph: cannot parse the source of {f.__qualname__}: {e}") from e


def _parse(f):
    tree = _source(f)
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != f.__name__:
        raise ConversionError(f"autograph: cannot convert {f.__qualname__}: its source is not a `def` statement "
                              "(lambdas are left as written)")
    fdef.decorator_list = []
    return fdef


def _convert_code(f) -> _Converted:
    if f.__code__.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        raise ConversionError(f"autograph: cannot convert the async function {f.__qualname__}")
    fdef = _parse(f)
    functions = [fn for fn in analysis.prepass(fdef) if type(fn) is ast.FunctionDef]
    for fn in functions:
        FlagLowering().function(fn, lower_returns=not fn._ag_generator)
    for fn in functions:
        analysis.annotate(fn, fn._ag_closure_reads)
    ControlFlowConverter().visit(fdef)
    # Renamed inside the factory, so that the function's own name still means the
    # global (a recursive call), not the factory's local; the code's name is restored.
    fdef.name = "ag__converted"
    freevars = f.__code__.co_freevars
    ret = nodes.at(ast.Return(nodes.name(fdef.name, fdef)), fdef)
    factory = nodes.fndef("ag__factory", ("ag__",) + freevars, [fdef, ret], fdef)
    module = ast.Module(body=[factory], type_ignores=[])  # every node is located: no fix_missing_locations
    filename = f.__code__.co_filename
    try:
        code = compile(module, filename, "exec")
    except SyntaxError as e:
        raise ConversionError(f"autograph: the converted {f.__qualname__} does not compile: {e}") from e
    namespace = {"__builtins__": builtins}
    exec(code, namespace)  # defines ag__factory only; the function body runs later, over f's globals
    inner = namespace["ag__factory"](*([None] * (1 + len(freevars))))
    scope = runtime.Scope(filename, f.__qualname__, converted_call)
    code = inner.__code__.replace(co_name=f.__code__.co_name)
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=f.__code__.co_qualname)
    fdef.name = f.__name__
    return _Converted(code, fdef, scope)


def convert(f):
    """The converted version of the Python function ``f`` (cached)."""
    done = _functions.get(f)
    if done is not None:
        return done
    entry = _by_code.get(f.__code__)
    if entry is None:
        entry = _by_code[f.__code__] = _convert_code(f)
    cells = dict(zip(f.__code__.co_freevars, f.__closure__ or ()))
    cells["ag__"] = types.CellType(entry.scope)
    closure = tuple(cells[n] for n in entry.code.co_freevars)
    new = types.FunctionType(entry.code, f.__globals__, f.__name__, f.__defaults__, closure)
    new.__kwdefaults__ = f.__kwdefaults__
    new.__dict__.update(f.__dict__)
    new.__qualname__, new.__module__, new.__doc__ = f.__qualname__, f.__module__, f.__doc__
    new.__annotations__ = dict(getattr(f, "__annotations__", {}))
    _functions[f] = new
    return new


def _should_convert(f) -> bool:
    code = f.__code__
    if f.__name__ == "<lambda>" or code.co_flags & _NOT_PLAIN or code.co_filename.startswith("<"):
        return False
    module = f.__module__ or f.__globals__.get("__name__") or ""
    return module.split(".")[0] not in SKIP_MODULE_ROOTS


def _target(f):
    """(function to call, code object for the recursion guard) for a user function, or
    None when ``f`` is called as it is."""
    if getattr(f, "__ag_do_not_convert__", False):
        return None
    f = getattr(f, "__ag_wrapped__", f)
    code = f.__code__
    decision = _decisions.get(code)
    if decision is None:
        decision = _decisions[code] = _should_convert(f)
    if not decision:
        return None
    try:
        return convert(f), code
    except ConversionError:
        _decisions[code] = False  # no source (e.g. defined in a REPL): called as written
        return None


def converted_call(fn, args, kwargs):
    """``ag__.call``: calls from converted code convert user functions first."""
    kind = type(fn)
    if kind is types.FunctionType:
        found = _target(fn)
        if found is not None:
            return call_guarded(found[0], found[1], args, kwargs)
    elif kind is types.MethodType and type(fn.__func__) is types.FunctionType:
        found = _target(fn.__func__)
        if found is not None:
            return call_guarded(types.MethodType(found[0], fn.__self__), found[1], args, kwargs)
    return fn(*args, **kwargs)


def call_guarded(target, code, args, kwargs):
    """Call a converted function; a call of itself from inside one of its own traced
    constructs would recurse forever (both sides of a traced ``if`` are traced)."""
    running = _active.setdefault(code, [])
    depth = len(runtime.TRACED)
    if running and depth > running[-1]:
        scope, info = runtime.TRACED[-1]
        raise RecursiveConversionError(
            f"autograph: {code.co_qualname if hasattr(code, 'co_qualname') else code.co_name} "
            f"({code.co_filename}:{code.co_firstlineno}) calls itself inside the `{info[0]}` at "
            f"{scope.where(info[1])}, whose condition is a traced value: both sides of traced control flow are "
            "traced, so this recursion never ends. Write it as a loop (a `while` on the traced value), or recurse "
            "on Python values")
    running.append(depth)
    try:
        return target(*args, **kwargs)
    finally:
        running.pop()


def _ops(code) -> set:
    return set(code.co_code[::2])


def _runs_as_written(code) -> bool:
    """With no transform active every value is concrete, and the converted code of
    ``code`` does what ``code`` does, unless it makes functions that may run later under
    a transform (nested ``def``s, generator expressions) or is itself a generator."""
    if code.co_flags & _NOT_PLAIN:
        return False
    return all(c.co_name == "<lambda>" or (c.co_name in _IMMEDIATE and _runs_as_written(c))
               for c in code.co_consts if isinstance(c, types.CodeType))


def _library_object(obj) -> bool:
    """``obj`` is called as it is by converted code (a module's attribute chain root, or
    a callable from funcgrad, NumPy, the standard library: ``_should_convert``'s rule)."""
    if isinstance(obj, types.ModuleType):
        return True
    if obj is builtins.print:
        return False
    module = getattr(obj, "__module__", None) if isinstance(obj, (type, types.BuiltinFunctionType,
                                                                   types.FunctionType)) else type(obj).__module__
    return isinstance(module, str) and module.split(".")[0] in SKIP_MODULE_ROOTS


def _callee(func, scope):
    """The object a call's ``func`` expression names (``mod.attr.f``), or None."""
    attrs = []
    while type(func) is ast.Attribute:
        attrs.append(func.attr)
        func = func.value
    if type(func) is not ast.Name or func.id not in scope:
        return None
    obj = scope[func.id]
    for a in reversed(attrs):
        if not isinstance(obj, types.ModuleType):
            return None  # an attribute of a value (a method): could be user code
        obj = getattr(obj, a, None)
    return obj


def needs_conversion(fun) -> bool:
    """False when converting ``fun`` changes nothing: no control flow (no ``if``,
    ``while``, ``for``, ``and``/``or``/``not``, conditional expression, comprehension,
    ``print``), no nested ``def``, and every call goes to a library function (funcgrad,
    NumPy, builtins...: names resolved now, in ``fun``'s globals and closure)."""
    code = fun.__code__
    if "print" in code.co_names or _ops(code) & _CONTROL_OPS:
        return True
    if any(isinstance(c, types.CodeType) and c.co_name != "<lambda>" for c in code.co_consts):
        return True
    if not _ops(code) & _CALL_OPS:
        return False
    try:
        fdef = _parse(fun)
        closure = {n: c.cell_contents for n, c in zip(code.co_freevars, fun.__closure__ or ())}
    except (ConversionError, ValueError):  # no source; an empty cell
        return True
    scope = {**vars(builtins), **fun.__globals__, **closure}
    for local in code.co_varnames + code.co_cellvars:  # a local shadows a global of its name
        scope.pop(local, None)
    calls = [n for n in analysis.walk_scope(fdef.body) if type(n) is ast.Call]
    callees = [_callee(c.func, scope) for c in calls]
    return not all(c is not None and _library_object(c) for c in callees)


def autograph(fun):
    """Convert ``fun``'s Python control flow so that it works on traced values (see the
    package docstring). A decorator or a function; usable under any transform. A
    function with nothing to convert (``needs_conversion``) is returned as it is."""
    if getattr(fun, "__ag_wrapped__", None) is not None:
        return fun
    if isinstance(fun, types.MethodType):
        return types.MethodType(autograph(fun.__func__), fun.__self__)
    if isinstance(fun, functools.partial):  # its function converted, its arguments kept
        inner = autograph(fun.func)
        return fun if inner is fun.func else functools.partial(inner, *fun.args, **fun.keywords)
    if isinstance(fun, types.FunctionType):
        if fun.__name__ == "<lambda>" or not needs_conversion(fun):
            return fun  # lambdas are left as written; so is code with nothing to convert
        code = fun.__code__
        as_written = _runs_as_written(code)
        state = _trace.TRACE_STATE

        @functools.wraps(fun)
        def converted(*args, **kwargs):
            target = convert(fun)  # converted on the first call, even eagerly: errors surface there
            if as_written and len(state.stack) == 1 and state.dynamic is None:
                # No transform is active (``trace.is_eager``, inlined): every value is
                # concrete, and the converted code would take Python's branches anyway.
                return fun(*args, **kwargs)
            return call_guarded(target, code, args, kwargs)

        converted.__ag_wrapped__ = fun
        return converted
    call = getattr(type(fun), "__call__", None)
    if isinstance(call, types.FunctionType) and type(fun).__module__.split(".")[0] not in SKIP_MODULE_ROOTS:
        return types.MethodType(autograph(call), fun)
    raise TypeError(f"autograph: expected a Python function, method or callable object, got {fun!r}; to convert "
                    "a jitted function, convert it first: jit(autograph(f)) or jit(f, autograph=True)")


def do_not_convert(fun):
    """Mark ``fun`` so that converted code calls it as written (a decorator)."""
    target = fun.__func__ if isinstance(fun, types.MethodType) else fun
    target.__ag_do_not_convert__ = True
    return fun


def to_source(fun) -> str:
    """The converted source of ``fun`` (like ``tf.autograph.to_code``)."""
    if isinstance(fun, types.MethodType):
        fun = fun.__func__
    fun = getattr(fun, "__ag_wrapped__", fun)
    if not isinstance(fun, types.FunctionType):
        raise TypeError(f"autograph.to_source: expected a Python function, got {fun!r}")
    convert(fun)
    return _by_code[fun.__code__].source
