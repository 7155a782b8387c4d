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

import os
import threading
from contextlib import contextmanager

import numpy as np

from funcgrad import config, errors
from funcgrad.core import debug_checks, dtypes, source_info
from funcgrad.core.array import Array, as_value, unwrap
from funcgrad.core.avals import ShapedArray, get_aval
from funcgrad.core.fp_errors import restore, silence
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
        self.compile_time_eval = False  # inside ensure_compile_time_eval(): constant ops run eagerly


class Trace:
    """Interprets primitives applied to its own tracers. Subclasses override the three
    methods; ``pure`` wraps a constant, ``lift`` wraps a tracer of a lower level.

    A trace on the eager autodiff hot path may set ``handles_raw_args``: ``bind`` then
    skips ``full_raise``/``full_lower`` and hands ``process_primitive`` its arguments as
    they are (own tracers, live lower-level tracers, constants); the trace returns
    already-lowered outputs. This saves a wrapper object per constant operand.
    """

    __slots__ = ("main",)
    handles_raw_args = False
    # True for a trace whose tracers stand for concrete values and that runs primitives
    # on them with their NumPy impls (the eager tape of an outermost ``grad``): eager-only
    # primitives may be bound on its tracers (``eager_operands``).
    concrete_values = False

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
        return _eager_bind(primitive, values, params, True)


_state = _TraceState()
# Read by eager fast paths (``numpy_api/eager_fast.py``): with plain (non-tracer) operands
# only a staging trace, ``TRACE_STATE.dynamic``, could claim an operation (see ``bind``).
TRACE_STATE = _state
# How many staging traces are active in all threads: while it is 0 (the int object 0)
# no thread is staging, so a fast path need not read the thread-local state (a native one
# compares the list's item with 0 by identity). Updated under a lock (not a hot path).
STAGING = [0]
_staging_lock = threading.Lock()
# Trace classes are instantiated on every bind; cache one per MainTrace instead.
_EVAL_MAIN = _state.stack[0]


def is_eager() -> bool:
    """True when no transform is active, so ops run directly on NumPy."""
    return len(_state.stack) == 1 and _state.dynamic is None


def push_main(trace_type: type, payload=None) -> MainTrace:
    """Push a (non-dynamic) transform level; pair with ``pop_main`` in a ``finally``.
    The eager autodiff entry points use this instead of ``new_main``, whose generator
    based context manager costs a few microseconds per call."""
    stack = _state.stack
    main = MainTrace(len(stack), trace_type, payload)
    main._trace = trace_type(main)
    stack.append(main)
    return main


def pop_main(main: MainTrace) -> None:
    popped = _state.stack.pop()
    if popped is not main:  # pragma: no cover - would be a bug in a transform
        raise RuntimeError("trace stack corrupted: transforms exited out of order")
    # A finished level keeps nothing: MainTrace and its Trace refer to each other, and the
    # payload (a jaxpr builder, a tape's records) to the level's tracers, which refer to
    # the trace: cycles only a full garbage collection frees, so every traced function's
    # tracers and equations lingered until one (and the heap grew in between). Unhooked,
    # they go by reference counting. (Its tracers' errors need only its level and type.)
    main._trace = main.payload = None


@contextmanager
def new_main(trace_type: type, payload=None, dynamic: bool = False):
    """Push a transform level; with ``dynamic=True`` it also captures ops on constants."""
    st = _state
    main = push_main(trace_type, payload)
    prev_dynamic = st.dynamic
    if dynamic:
        st.dynamic = main
        with _staging_lock:
            STAGING[0] += 1
    try:
        yield main
    finally:
        st.dynamic = prev_dynamic
        if dynamic:
            with _staging_lock:
                STAGING[0] -= 1
        pop_main(main)


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


_NUMPY_TABLE_HINT = (
    "If a plain NumPy array is being indexed by a traced value (np_table[i]), NumPy cannot "
    "do that indexing: wrap the array with fnp.asarray first (table = fnp.asarray(np_table); "
    "table[i]), so funcgrad stages it; arrays funcgrad returned can be indexed directly."
)

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
        "directly (x[i] and lax.dynamic_slice accept traced indices), or mark it static. "
        + _NUMPY_TABLE_HINT
    ),
    "float": "Keep the value as an array; float() needs the number now, at trace time.",
    "complex": "Keep the value as an array; complex() needs the number now, at trace time.",
    "item": "Keep the value as an array; .item() needs the number now, at trace time.",
    "array": (
        "numpy.asarray / numpy functions cannot see inside a traced value. Use the "
        "funcgrad.numpy function of the same name instead (import funcgrad.numpy as fnp). "
        + _NUMPY_TABLE_HINT
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
        raise _escaped(main)


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


def active_mains() -> tuple:
    """The active transform levels, outermost first (for tools that inspect tracing:
    ``funcgrad.viz`` finds the staging builders in their payloads)."""
    return tuple(_state.stack)


def dynamic_payload():
    """The payload of the innermost staging trace (make_jaxpr, jit: its builder), or None."""
    dyn = _state.dynamic
    return None if dyn is None else dyn.payload


def eager_operands(args) -> bool:
    """True when an eager-only primitive (impl, abstract_eval and an eager cotangent rule
    only: ``core/prims/linalg_eager.py``) may be bound on ``args``: nothing stages, and
    every tracer among them belongs to a trace of concrete values (the eager tape), so
    no other transform will see the primitive."""
    if _state.dynamic is not None:
        return False
    for a in args:
        if isinstance(a, Tracer) and not a._trace.concrete_values:
            return False
    return True


def is_staging() -> bool:
    """True when a dynamic trace (make_jaxpr, jit, a control-flow body) records even
    operations on constants; otherwise those run eagerly, whatever else is active."""
    return _state.dynamic is not None


# Eager signatures checked (abstract_eval ran): signature -> whether an argument has data
# of the other byte order (``>f8``), converted to native order before the impl.
_eager_checked: dict = {}
_debug_checks = config.DEBUG_CHECKS  # ([0]: a jax_debug_nans/infs check is on; core/debug_checks.py)
_ndarray = np.ndarray
_PY_SCALARS = (bool, int, float, complex)


def _eager_bind(prim: Primitive, args, params, values: bool = False):
    """Run ``prim``'s NumPy implementation on concrete arguments.

    Primitives are strict eagerly too: the arguments are validated with abstract_eval
    once per distinct (primitive, argument types, params) signature, so the hot path
    (every primal operation under jvp/grad/vmap, every transpose in a backward pass)
    only builds and looks up that signature. ``Array`` arguments reach the impl as
    their plain base (NumPy is slower on subclasses). With ``values`` (the ``bind``
    path) the outputs are made values (``core/array.py``): read-only ``Array``s that
    never alias memory the user can write.
    """
    key = [prim]
    scalars = arrays = False
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key += (a.shape, a.dtype)
        elif t is Array:
            key += (a.shape, a.dtype)
            arrays = True
        elif isinstance(a, np.generic):
            key += (a.shape, a.dtype)
        else:
            key.append(t)  # Python scalars; anything else fails the check below
            scalars = True
    if params:
        key += params.items()
    try:
        if prim.jaxpr_params:  # (never cache sub-programs: they would outlive their owner)
            raise TypeError
        key = tuple(key)
        foreign = _eager_checked.get(key)
    except TypeError:  # an unhashable param: check every time
        key, foreign = None, None
    if foreign is None:
        abstract_eval_tuple(prim, [get_aval(a) for a in args], params)
        foreign = any(isinstance(a, (np.ndarray, np.generic)) and not a.dtype.isnative for a in args)
        if key is not None:
            if len(_eager_checked) > 50_000:
                _eager_checked.clear()
            _eager_checked[key] = foreign
    if arrays:  # (the plain base of an Array made by bind is its .base: see core/array.py)
        args = _unwrap_all(args)
    if foreign:  # (impls compute on native data, as compiled code: bitcasts see its bits)
        args = [dtypes.native(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args]
    inputs = args  # (arrays made here from Python scalars below are no one else's)
    if scalars and not prim.impl_takes_python_scalars:  # impls only ever see NumPy values
        args = [np.asarray(x) if type(x) in _PY_SCALARS else x for x in args]
    impl = impl_rules.get(prim)
    if impl is None:
        raise missing_rule("impl", prim)
    token = silence()  # IEEE results without RuntimeWarnings, as compiled code
    try:
        out = impl(*args, **params)
    finally:
        restore(token)
    if _debug_checks[0]:  # (``config.update("jax_debug_nans", True)``)
        debug_checks.check(prim.name, out)
    if not values:
        return out
    if type(out) is _ndarray and out.base is None and out.ndim:  # as_value's common case, inline
        for a in inputs:
            if out is a:
                break
        else:
            out.setflags(False)
            return out.view(Array)
    if prim.multiple_results:
        return [as_value(o, inputs) for o in out]
    return as_value(out, inputs)


def _unwrap_all(args):
    """``args`` with each ``Array`` as its plain base (unrolled for one and two
    operands, the common arities: this runs on every eager op on funcgrad results)."""
    if len(args) == 2:
        a, b = args
        if type(a) is Array:
            base = a.base
            a = base if type(base) is _ndarray else unwrap(a)
        if type(b) is Array:
            base = b.base
            b = base if type(base) is _ndarray else unwrap(b)
        return (a, b)
    if len(args) == 1:
        a = args[0]
        base = a.base
        return (base if type(base) is _ndarray else unwrap(a),)
    return [unwrap(x) if type(x) is Array else x for x in args]


def _escaped(main: MainTrace) -> errors.UnexpectedTracerError:
    return errors.UnexpectedTracerError(
        f"A tracer from a transform that has already finished ({main.trace_type.__name__}, "
        f"level {main.level}) was used. This usually means a traced value was stored in a "
        "global, an attribute or a closure and used after the transform returned. Return it "
        "from the transformed function instead."
    )


def bind(prim: Primitive, *args, **params):
    """Apply a primitive: hand it to the current trace and return its output(s)."""
    # The interpreting trace: the highest level among the arguments' tracers (all of
    # which must still be alive), or the dynamic trace if that is higher.
    top = _EVAL_MAIN
    for a in args:
        if isinstance(a, Tracer):
            main = a._trace.main
            if main is not top:
                stack = _state.stack
                level = main.level
                if level >= len(stack) or stack[level] is not main:
                    raise _escaped(main)
                if level > top.level:
                    top = main
    dyn = _state.dynamic
    if dyn is None:
        if top is _EVAL_MAIN:
            # No tracers and nothing staging: only the eager interpreter can claim this
            # op, whatever transforms are active (they only see their own tracers). The
            # hot path of every primal computation under jvp/grad/vmap.
            return _eager_bind(prim, args, params, True)
    elif dyn.level > top.level:
        if top is _EVAL_MAIN and _state.compile_time_eval:  # no tracers: computed now
            return _eager_bind(prim, args, params, True)
        top = dyn
    trace = top._trace or top.trace()
    if trace.handles_raw_args:
        return trace.process_primitive(prim, args, params)
    out = trace.process_primitive(prim, [full_raise(trace, a) for a in args], params)
    if prim.multiple_results:
        return [full_lower(o) for o in out]
    return full_lower(out)


@contextmanager
def ensure_compile_time_eval():
    """Inside, an operation none of whose operands is traced is computed at once, even while
    ``jit``/``make_jaxpr`` stage a program (JAX's ``ensure_compile_time_eval``): its result is
    a concrete value Python code can branch on, and becomes a constant of the program."""
    previous = _state.compile_time_eval
    _state.compile_time_eval = True
    try:
        yield
    finally:
        _state.compile_time_eval = previous


# Primitive.bind is the public spelling; install it here (primitive.py cannot import us).
Primitive.bind = bind  # a plain function: add_p.bind(x, y) calls bind(add_p, x, y)


_abstract_cache: dict = {}
# In front of it, a cache keyed by the *identity* of the input avals (tracing reuses the
# same aval objects over and over, and ShapedArray hashes/compares in Python). Each
# entry keeps its input avals alive, so an id in a key can never belong to another
# object while the entry exists.
_abstract_by_id: dict = {}
abstract_eval_by_id = _abstract_by_id  # (read directly by ``staging.stage_unary``/``stage_binary``)


def abstract_eval(prim: Primitive, avals, params):
    """Output avals of ``prim`` applied to ``avals``, always as a list. Memoised: avals
    and params are immutable and hashable, and tracing asks the same question often."""
    return list(abstract_eval_tuple(prim, avals, params))


def abstract_eval_tuple(prim: Primitive, avals, params) -> tuple:
    """``abstract_eval`` returning the cached tuple itself (no copy), for hot paths."""
    if prim.jaxpr_params:  # (never cache sub-programs: they would outlive their owner)
        id_key = hit = None
    else:
        try:
            id_key = (prim, *map(id, avals), *params.items()) if params else (prim, *map(id, avals))
            hit = _abstract_by_id.get(id_key)
        except TypeError:  # an unhashable param: no caching
            id_key = hit = None
    if hit is not None:
        return hit[1]
    avals = tuple(avals)
    key = (prim, avals, tuple(params.items())) if id_key is not None else None
    out = _abstract_cache.get(key) if key is not None else None
    if out is None:
        rule = abstract_eval_rules.get(prim)
        if rule is None:
            raise missing_rule("abstract_eval", prim)
        out = rule(*avals, **params)
        out = tuple(out) if prim.multiple_results else (out,)
        if key is not None:
            if len(_abstract_cache) > 50_000:
                _abstract_cache.clear()
            _abstract_cache[key] = out
    if id_key is not None:
        if len(_abstract_by_id) > 50_000:
            _abstract_by_id.clear()
        _abstract_by_id[id_key] = (avals, out)
    return out


_array_avals: dict = {}


def get_aval_any(x) -> ShapedArray:
    """Aval of a tracer or a concrete value. NumPy arrays and scalars, by far the most
    common operands on the eager autodiff path, hit a (shape, dtype) cache first."""
    if type(x) is np.ndarray or type(x) is Array or isinstance(x, np.generic):
        key = (x.shape, x.dtype)
        aval = _array_avals.get(key)
        if aval is None:
            aval = get_aval(x)  # validates the dtype
            if len(_array_avals) > 10_000:
                _array_avals.clear()
            _array_avals[key] = aval
        return aval
    if isinstance(x, Tracer):
        return x.aval
    return get_aval(x)


# A forked child has only the forking thread: a lock another thread held at the fork
# would never be released there.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_staging_lock._at_fork_reinit)
