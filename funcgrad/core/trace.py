"""The current-trace mechanism: a stack of interpreters, ``bind`` and ``Tracer``.

We use autodidax's level stack. Level 0 is the eager ``EvalTrace`` (runs ``impl`` on
NumPy). Each transform pushes a ``MainTrace`` with a higher level; its tracers remember
their trace. ``bind`` hands a primitive to the highest-level trace among its inputs,
or to the *dynamic* trace (``make_jaxpr``, ``jit``, control-flow bodies) if that is
higher, so code that only touches constants is still staged out.

Levels also keep nested transforms apart (``grad`` of a function that itself calls
``grad`` gets two JVP levels, which avoids perturbation confusion), and detect
tracers that escaped their transform.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from funcgrad import errors
from funcgrad.core import source_info
from funcgrad.core.avals import ShapedArray, get_aval
from funcgrad.core.primitive import Primitive, abstract_eval_rules, impl_rules, missing_rule


class MainTrace:
    """One active transform: its level in the stack, its Trace class and its state."""

    __slots__ = ("level", "trace_type", "payload", "_trace")

    def __init__(self, level: int, trace_type: type, payload=None):
        self.level = level
        self.trace_type = trace_type
        self.payload = payload
        self._trace = None

    def trace(self):
        """The (single, stateless) Trace object interpreting for this level."""
        t = self._trace
        if t is None:
            t = self._trace = self.trace_type(self)
        return t

    def __repr__(self):
        return f"MainTrace({self.level}, {self.trace_type.__name__})"


class _TraceState(threading.local):
    def __init__(self):
        self.stack: list[MainTrace] = [MainTrace(0, EvalTrace)]
        self.dynamic: MainTrace | None = None


class Trace:
    """Interprets primitives applied to its own tracers. Subclasses override the three
    methods; ``pure`` wraps a constant, ``lift`` wraps a tracer of a lower level."""

    __slots__ = ("main",)

    def __init__(self, main: MainTrace):
        self.main = main

    def pure(self, val):
        raise NotImplementedError

    def lift(self, tracer):
        raise NotImplementedError

    def process_primitive(self, primitive: Primitive, tracers, params):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(level={self.main.level})"


class EvalTrace(Trace):
    """No transform active: run the primitive's NumPy implementation."""

    def pure(self, val):
        return val

    lift = pure

    def process_primitive(self, primitive, values, params):
        impl = impl_rules.get(primitive)
        if impl is None:
            raise missing_rule("impl", primitive)
        return impl(*values, **params)


_state = _TraceState()
# Trace classes are instantiated on every bind; cache one per MainTrace instead.
_EVAL_MAIN = _state.stack[0]


def current_level() -> int:
    return len(_state.stack) - 1


def is_eager() -> bool:
    """True when no transform is active, so ops run directly on NumPy."""
    return len(_state.stack) == 1 and _state.dynamic is None


@contextmanager
def new_main(trace_type: type, payload=None, dynamic: bool = False):
    """Push a transform level; with ``dynamic=True`` it also captures ops on constants."""
    st = _state
    main = MainTrace(len(st.stack), trace_type, payload)
    st.stack.append(main)
    prev_dynamic = st.dynamic
    if dynamic:
        st.dynamic = main
    try:
        yield main
    finally:
        st.dynamic = prev_dynamic
        popped = st.stack.pop()
        if popped is not main:  # pragma: no cover - would be a bug in a transform
            raise RuntimeError("trace stack corrupted: transforms exited out of order")


class Tracer:
    """A stand-in for an array while a transform runs. Array methods and operators are
    installed by ``funcgrad.numpy_api`` (core does not import it)."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    # -- what every tracer type provides -------------------------------------
    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def full_lower(self):
        """Return a lower-level value when this tracer adds nothing (e.g. zero tangent)."""
        return self

    def to_concrete_value(self):
        """The concrete NumPy value, if this trace knows it (eager JVP); else None."""
        return None

    # -- array-like metadata ---------------------------------------------------
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return iter([self[i] for i in range(self.aval.shape[0])])

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"

    # -- conversions to concrete Python/NumPy values ----------------------------
    def _concrete_or_raise(self, error_type, what: str):
        val = self.to_concrete_value()
        if val is not None:
            return val
        raise error_type(_concretization_message(self, what))

    def __bool__(self):
        return bool(self._concrete_or_raise(errors.TracerBoolConversionError, "bool"))

    def __int__(self):
        return int(self._concrete_or_raise(errors.TracerIntegerConversionError, "int"))

    def __index__(self):
        return _index_of(self._concrete_or_raise(errors.TracerIntegerConversionError, "index"))

    def __float__(self):
        return float(self._concrete_or_raise(errors.ConcretizationError, "float"))

    def __complex__(self):
        return complex(self._concrete_or_raise(errors.ConcretizationError, "complex"))

    def __array__(self, dtype=None, copy=None):
        # Never convert silently: that would drop derivatives or batch dimensions.
        raise errors.TracerArrayConversionError(_concretization_message(self, "array"))

    def tolist(self):
        raise errors.TracerArrayConversionError(_concretization_message(self, "array"))

    def item(self, *args):
        return self._concrete_or_raise(errors.ConcretizationError, "item").item(*args)

    def __setitem__(self, idx, value):
        raise TypeError(
            "funcgrad arrays are immutable inside transforms; instead of x[idx] = y use "
            "x = x.at[idx].set(y) (or fnp.at(x)[idx].set(y), which also works on ndarrays)"
        )

    __hash__ = None  # arrays are unhashable, like numpy.ndarray

    def __reduce__(self):
        raise errors.ConcretizationError(_concretization_message(self, "pickle"))


def _index_of(val):
    arr = np.asarray(val)
    if arr.shape != () or arr.dtype.kind not in "iub":
        raise TypeError("only integer scalar arrays can be converted to a scalar index")
    return int(arr)


_CONVERSION_HINTS = {
    "bool": (
        "Python control flow (if/while/and/or/not) on a traced value cannot be recorded. "
        "Use fnp.where(pred, x, y) for an elementwise choice, lax.cond(pred, true_fun, "
        "false_fun, *operands) or lax.switch for branches, lax.while_loop / lax.fori_loop "
        "for loops; or mark the argument static (jit's static_argnums)."
    ),
    "int": "Use the value as an array (e.g. in fnp ops), or mark the argument static.",
    "index": (
        "A traced integer cannot be a Python index or size. Index with the traced value "
        "directly (x[i] and lax.dynamic_slice accept traced indices), or mark it static."
    ),
    "float": "Keep the value as an array; float() needs the number now, at trace time.",
    "complex": "complex numbers are not supported by funcgrad.",
    "item": "Keep the value as an array; .item() needs the number now, at trace time.",
    "array": (
        "numpy.asarray / numpy functions cannot see inside a traced value. Use the "
        "funcgrad.numpy function of the same name instead (import funcgrad.numpy as fnp)."
    ),
    "pickle": "A traced value cannot be pickled.",
}


def _concretization_message(tracer: Tracer, what: str) -> str:
    frame = source_info.user_frame()
    return (
        f"Abstract tracer value encountered where a concrete value is expected: {what}() "
        f"was called on a traced array {tracer.aval.str_short()} (traced by "
        f"{type(tracer._trace).__name__}); its value is only known when the program runs.\n"
        f"At: {source_info.describe(frame)}\n"
        f"{_CONVERSION_HINTS[what]}"
    )


# --- bind ---------------------------------------------------------------------

def _check_alive(main: MainTrace) -> None:
    stack = _state.stack
    if main.level >= len(stack) or stack[main.level] is not main:
        raise errors.UnexpectedTracerError(
            f"A tracer from a transform that has already finished ({main.trace_type.__name__}, "
            "level {}) was used. This usually means a traced value was stored in a global, "
            "an attribute or a closure and used after the transform returned. Return it "
            "from the transformed function instead.".format(main.level)
        )


def find_top_trace(args) -> Trace:
    top = _EVAL_MAIN
    for x in args:
        if isinstance(x, Tracer):
            main = x._trace.main
            if main.level > top.level or main is not top and main.level == top.level:
                _check_alive(main)
                top = main
    dyn = _state.dynamic
    if dyn is not None and dyn.level > top.level:
        top = dyn
    return top.trace()


def full_raise(trace: Trace, val):
    """Make ``val`` a tracer of ``trace`` (wrapping constants and lower-level tracers)."""
    if not isinstance(val, Tracer):
        return trace.pure(val)
    vtrace = val._trace
    if vtrace.main is trace.main:
        return val
    level = vtrace.main.level
    if level < trace.main.level:
        _check_alive(vtrace.main)
        return trace.lift(val)
    _check_alive(vtrace.main)
    raise errors.UnexpectedTracerError(
        f"cannot lift a tracer of level {level} into a trace of level {trace.main.level}; "
        "a traced value escaped its transform"
    )


def full_lower(val):
    return val.full_lower() if isinstance(val, Tracer) else val


_eager_checked: set = set()
_PY_SCALARS = (bool, int, float)
_ARRAY_TYPES = (np.ndarray, np.generic)


def _eager_check(prim: Primitive, args, params) -> None:
    """Primitives are strict eagerly too: validate with abstract_eval, once per
    distinct (primitive, argument types, params) signature so the hot path stays cheap."""
    key = [prim]
    for a in args:
        key.append((a.shape, a.dtype) if isinstance(a, _ARRAY_TYPES) else type(a))
    if params:
        key.append(tuple(params.items()))
    try:
        key = tuple(key)
        if key in _eager_checked:
            return
    except TypeError:  # an unhashable param: check every time
        key = None
    abstract_eval(prim, [get_aval(a) for a in args], params)
    if key is not None:
        if len(_eager_checked) > 50_000:
            _eager_checked.clear()
        _eager_checked.add(key)


def bind(prim: Primitive, *args, **params):
    """Apply a primitive: hand it to the current trace and return its output(s)."""
    for a in args:
        if isinstance(a, Tracer):
            break
    else:
        # No tracers and nothing staging: only the eager interpreter can claim this op,
        # whatever transforms are active (they only see their own tracers). This is the
        # hot path of every primal computation under jvp/grad/vmap.
        if _state.dynamic is None:
            _eager_check(prim, args, params)
            for a in args:
                if type(a) in _PY_SCALARS:  # impls only ever see NumPy values
                    args = tuple(np.asarray(x) if type(x) in _PY_SCALARS else x for x in args)
                    break
            try:
                impl = impl_rules[prim]
            except KeyError:
                raise missing_rule("impl", prim) from None
            return impl(*args, **params)
    trace = find_top_trace(args)
    tracers = [full_raise(trace, a) for a in args]
    out = trace.process_primitive(prim, tracers, params)
    if prim.multiple_results:
        return [full_lower(o) for o in out]
    return full_lower(out)


# Primitive.bind is the public spelling; install it here (primitive.py cannot import us).
Primitive.bind = bind  # a plain function: add_p.bind(x, y) calls bind(add_p, x, y)


_abstract_cache: dict = {}


def abstract_eval(prim: Primitive, avals, params):
    """Output avals of ``prim`` applied to ``avals``, always as a list. Memoised: avals
    and params are immutable and hashable, and tracing asks the same question often."""
    try:
        key = (prim, tuple(avals), tuple(params.items()))
        hit = _abstract_cache.get(key)
    except TypeError:  # an unhashable param
        key = hit = None
    if hit is not None:
        return list(hit)
    rule = abstract_eval_rules.get(prim)
    if rule is None:
        raise missing_rule("abstract_eval", prim)
    out = rule(*avals, **params)
    out = list(out) if prim.multiple_results else [out]
    if key is not None:
        if len(_abstract_cache) > 50_000:
            _abstract_cache.clear()
        _abstract_cache[key] = tuple(out)
    return out


def get_aval_any(x) -> ShapedArray:
    return x.aval if isinstance(x, Tracer) else get_aval(x)
