"""Staging: trace a Python function into a ClosedJaxpr (``make_jaxpr``).

``JaxprTrace`` is a *dynamic* trace: while it is active every primitive is recorded,
even one applied only to constants. Values from outside (NumPy arrays, tracers of
outer transforms) become constvars of the closed jaxpr; scalar constants are written
inline as literals. The same machinery stages the bodies of ``jit`` and control flow.
"""
from __future__ import annotations

import contextlib
import gc

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.avals import ShapedArray, get_aval, is_python_scalar
from funcgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from funcgrad.core.source_info import user_frame
from funcgrad.core.trace import (
    TRACE_STATE,
    Trace,
    Tracer,
    abstract_eval_by_id,
    abstract_eval_tuple,
    bind,
    full_raise,
    get_aval_any,
    new_main,
)
from funcgrad.core.typecheck import check_jaxpr, debug_checks_enabled
from funcgrad.core.wrapping import fun_name


class JaxprTracer(Tracer):
    """A staged value: its type and the ``Var`` that names it in the jaxpr being built.
    The var lives on the tracer (no tracer -> var table): staging makes one of each per
    equation output, so this is the hot path of tracing."""

    __slots__ = ("aval", "_var")  # a plain ``aval`` slot shadows Tracer.aval

    def __init__(self, trace: "JaxprTrace", aval: ShapedArray, var: Var | None = None):
        self._trace = trace
        self.aval = aval
        self._var = Var(aval) if var is None else var


class JaxprBuilder:
    """Collects the equations of one staged function."""

    def __init__(self, record_source: bool = True, linearize: bool = False):
        self.record_source = record_source  # look up the user's line for each eqn
        self.linearize = linearize  # staging the tangents of a linearization
        self.eqns: list[Eqn] = []
        self.const_tracers: dict[int, JaxprTracer] = {}  # id(value) -> tracer
        self.constvals: dict[int, object] = {}  # id(var) -> value
        self._keepalive: list = []  # the ids above are only valid while the values live
        # (id(read-only constant), shape, dims) -> (constant, its staged broadcast): see
        # lax_api.broadcast_in_dim (the constant in the value keeps the id valid)
        self.const_broadcasts: dict = {}
        # Indices in ``eqns`` of the equations with a raised operand (a constant or an outer
        # tracer; ``process_primitive``): the only ones ``build`` may give a literal.
        self.const_eqns: list[int] = []

    def new_tracer(self, trace, aval) -> JaxprTracer:
        return JaxprTracer(trace, aval)

    def getvar(self, t: JaxprTracer) -> Var:
        return t._var

    def new_const(self, trace, val) -> JaxprTracer:
        t = self.const_tracers.get(id(val))
        if t is None:
            aval = val.aval if isinstance(val, Tracer) else get_aval(val)
            t = JaxprTracer(trace, aval)
            self.const_tracers[id(val)] = t
            self.constvals[id(t._var)] = val
            self._keepalive.append(val)
        return t

    def build(self, in_tracers, out_tracers):
        invars = [t._var for t in in_tracers]
        outvars = [t._var for t in out_tracers]
        out_ids = {id(v) for v in outvars}
        literals: dict[int, Literal] = {}
        constvars, consts = [], []
        for t in self.const_tracers.values():
            var = t._var
            val = self.constvals[id(var)]
            if _is_scalar_const(val) and id(var) not in out_ids:
                literals[id(var)] = Literal(val, var.aval)
            else:
                constvars.append(var)
                consts.append(val)
        eqns = self.eqns
        if literals:  # (a new Eqn only where a literal goes in: the others are shared as they are)
            get = literals.get
            eqns = list(eqns)
            for k in self.const_eqns:
                e = eqns[k]
                ins = e.inputs
                for v in ins:
                    if id(v) in literals:
                        eqns[k] = _new_eqn(Eqn, (e.primitive, [get(id(a), a) for a in ins], e.outputs, e.params,
                                                 e.source_info))
                        break
        return Jaxpr(constvars, invars, eqns, outvars), consts


def hoist_consts(jaxprs_and_consts):
    """Make several (jaxpr, consts) share one list of constants passed as leading
    operands: returns (closed jaxprs without tracer consts, joined consts)."""
    all_consts, closed = [], []
    offsets = []
    for jaxpr, consts in jaxprs_and_consts:
        offsets.append(len(all_consts))
        all_consts.extend(consts)
    for k, (jaxpr, consts) in enumerate(jaxprs_and_consts):
        invars = []
        for j, c in enumerate(all_consts):
            own = offsets[k] <= j < offsets[k] + len(consts)
            invars.append(jaxpr.constvars[j - offsets[k]] if own else Var(get_aval_any(c)))
        closed.append(ClosedJaxpr(Jaxpr([], invars + jaxpr.invars, jaxpr.eqns, jaxpr.outvars), []))
    return closed, all_consts


def _is_scalar_const(val) -> bool:
    if isinstance(val, Tracer):
        return False
    return is_python_scalar(val) or (isinstance(val, (np.ndarray, np.generic)) and val.shape == ())


class JaxprTrace(Trace):
    @property
    def builder(self) -> JaxprBuilder:
        return self.main.payload

    def pure(self, val):
        return self.builder.new_const(self, val)

    # An outer transform's tracer used inside: it becomes a constant of this jaxpr,
    # which the caller (jit, cond, ...) passes back in as an explicit operand.
    lift = pure

    # bind hands the arguments over as they are (see Trace.handles_raw_args): own tracers
    # are used directly, anything else is raised here; outputs need no lowering.
    handles_raw_args = True

    def process_primitive(self, primitive, args, params):
        # One Var + tracer per output and one Eqn, nothing else: this runs once per
        # staged operation (jit, make_jaxpr, control-flow bodies, linearization).
        main = self.main
        builder = main.payload
        avals, invars = [], []
        for a in args:
            if type(a) is not JaxprTracer or a._trace.main is not main:
                a = full_raise(self, a)
                if not builder.const_eqns or builder.const_eqns[-1] != len(builder.eqns):
                    builder.const_eqns.append(len(builder.eqns))
            avals.append(a.aval)
            invars.append(a._var)
        out_avals = abstract_eval_tuple(primitive, avals, params)
        # (skip=2: this frame and bind's, both funcgrad's)
        src = user_frame(True, 2) if builder.record_source else None
        if primitive.multiple_results:
            outs = [JaxprTracer(self, aval) for aval in out_avals]
            builder.eqns.append(_new_eqn(Eqn, (primitive, invars, [t._var for t in outs], params, src)))
            return outs
        out = JaxprTracer(self, out_avals[0])
        builder.eqns.append(_new_eqn(Eqn, (primitive, invars, [out._var], params, src)))
        return out


_new_eqn = tuple.__new__  # Eqn(...) without NamedTuple's Python-level __new__


# --- direct staging of one primitive on the innermost staging trace's own tracers ----------
# ``bind(prim, x)`` under ``jit``/``make_jaxpr`` looks for the interpreting trace among the
# arguments, raises them, then ``process_primitive`` builds the equation. The commonest
# staged operations (``funcgrad.numpy``'s elementwise functions and the operators on
# tracers, ``numpy_api/staged.py``) already know their operands are tracers of the
# innermost staging trace, the one ``bind`` would pick, and call these instead: the same
# equation (primitive, operand vars, one output var, empty params, the user's line),
# without the search. Params are none (elementwise primitives); ``multiple_results`` and
# sub-jaxprs are not for these.

def own_tracer(x) -> bool:
    """True when ``x`` is a tracer of the innermost staging trace (``bind`` would hand an
    operation on it and on constants to that trace)."""
    return type(x) is JaxprTracer and x._trace.main is TRACE_STATE.dynamic


def stage_unary(prim, x: JaxprTracer, skip: int = 0) -> JaxprTracer:
    """``bind(prim, x)`` for ``x`` a tracer of the innermost staging trace. ``skip``: how
    many frames above the caller's are funcgrad's too: the search for the user's line
    (``user_frame``) starts above them."""
    aval = x.aval
    hit = abstract_eval_by_id.get((prim, id(aval)))
    out_aval = hit[1][0] if hit is not None else abstract_eval_tuple(prim, (aval,), {})[0]
    trace = x._trace
    builder = trace.main.payload
    out = JaxprTracer(trace, out_aval)
    builder.eqns.append(_new_eqn(Eqn, (prim, [x._var], [out._var], {},
                                       user_frame(True, 1 + skip) if builder.record_source else None)))
    return out


def stage_or_bind(prim, args, params, skip: int = 0):
    """``bind(prim, *args, **params)``; staged by ``stage_unary``/``stage_binary`` when that
    is the same (no params, one result, one or two tracers of the innermost staging
    trace). ``skip`` as for those, counted from this function's caller."""
    if not params and not prim.multiple_results:
        n = len(args)
        if n == 1:
            x = args[0]
            if type(x) is JaxprTracer and x._trace.main is TRACE_STATE.dynamic:
                return stage_unary(prim, x, skip + 1)
        elif n == 2:
            x, y = args
            if type(x) is JaxprTracer and type(y) is JaxprTracer and x._trace.main is TRACE_STATE.dynamic \
                    and y._trace.main is x._trace.main:
                return stage_binary(prim, x, y, skip + 1)
    return bind(prim, *args, **params)


def stage_binary(prim, x: JaxprTracer, y: JaxprTracer, skip: int = 0) -> JaxprTracer:
    """``bind(prim, x, y)`` for ``x`` and ``y`` tracers of the innermost staging trace."""
    ax, ay = x.aval, y.aval
    hit = abstract_eval_by_id.get((prim, id(ax), id(ay)))
    out_aval = hit[1][0] if hit is not None else abstract_eval_tuple(prim, (ax, ay), {})[0]
    trace = x._trace
    builder = trace.main.payload
    out = JaxprTracer(trace, out_aval)
    builder.eqns.append(_new_eqn(Eqn, (prim, [x._var, y._var], [out._var], {},
                                       user_frame(True, 1 + skip) if builder.record_source else None)))
    return out


def trace_to_jaxpr(fun_flat, in_avals) -> tuple[Jaxpr, list]:
    """Stage ``fun_flat(*tracers) -> list of outputs`` into ``(jaxpr, consts)``."""
    builder = JaxprBuilder()
    with new_main(JaxprTrace, builder, dynamic=True) as main:
        trace = JaxprTrace(main)
        in_tracers = [JaxprTracer(trace, a) for a in in_avals]
        outs = fun_flat(*in_tracers)
        out_tracers = [_to_tracer(trace, o) for o in outs]
        jaxpr, consts = builder.build(in_tracers, out_tracers)
    if debug_checks_enabled():
        check_jaxpr(jaxpr)
    return jaxpr, consts


def _to_tracer(trace: JaxprTrace, x):
    return full_raise(trace, x)


def flatten_fun(f, in_tree):
    """Wrap ``f`` (pytree in, pytree out) as a flat function; the output structure is
    stored in the returned cell after the first call."""
    out_tree_cell: list = []

    def flat(*leaves):
        args = pytree.tree_unflatten(in_tree, leaves)
        out = f(*args)
        out_leaves, out_tree = pytree.tree_flatten(out)
        out_tree_cell.append(out_tree)
        return out_leaves

    return flat, out_tree_cell


def abstractify(x, what: str = "argument") -> ShapedArray:
    if isinstance(x, ShapedArray):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic, Tracer)):
        from funcgrad.core.dtypes import canonicalize  # ShapeDtypeStruct-like

        return ShapedArray(x.shape, canonicalize(x.dtype, what=what))
    try:
        return get_aval(x)
    except TypeError as e:
        raise TypeError(f"{what}: {e}") from None


# make_jaxpr calls in progress: while one is, every equation traced is kept, including
# dead primal work under ``grad`` (its output shows what the function did; see
# ``transforms/ad_prune.py`` for the staging traces that drop it).
_showing = [0]


def prune_allowed() -> bool:
    """False while ``make_jaxpr`` traces (it shows every equation traced)."""
    return not _showing[0]


def make_jaxpr(fun, static_argnums=()):
    """Return a function that traces ``fun`` and returns its ``ClosedJaxpr``.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> print(fg.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0))
    { lambda ; a:f64[]. let
        b:f64[] = sin a
        c:f64[] = mul b 2.0:f64[]
      in (c,) }
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = tuple(static_argnums)

    def make(*args, **kwargs):
        if kwargs:
            raise TypeError("make_jaxpr: pass arguments positionally (keyword arguments are not traced)")
        static = {i % len(args): args[i] for i in static_argnums} if args else {}
        dyn_args = [a for i, a in enumerate(args) if i not in static]

        def call(*dyn):
            it = iter(dyn)
            full = [static[i] if i in static else next(it) for i in range(len(args))]
            return fun(*full)

        leaves, in_tree = pytree.tree_flatten(tuple(dyn_args))
        in_avals = [abstractify(x, f"make_jaxpr argument leaf {i}") for i, x in enumerate(leaves)]
        flat, out_tree_cell = flatten_fun(call, in_tree)
        _showing[0] += 1
        try:
            jaxpr, consts = trace_to_jaxpr(flat, in_avals)
        finally:
            _showing[0] -= 1
        return ClosedJaxpr(jaxpr, consts, out_tree=out_tree_cell[0], in_tree=in_tree)

    make.__name__ = f"make_jaxpr({fun_name(fun)})"
    return make


@contextlib.contextmanager
def collector_paused():
    """Run the body with Python's cyclic garbage collector off. Tracing and compiling
    allocate many small objects that live as long as the program (equations, avals) and
    form no garbage cycles, but they trigger collections that walk the whole heap: about
    1 ms of the 10 ms first call of the 50-op W10 function. Collection resumes after."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
