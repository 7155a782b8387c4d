"""jit: stage a function once per input signature, simplify, compile, cache.

``fg.jit(f)`` traces ``f`` to a closed jaxpr on the first call with a new signature
(pytree structure, shapes, dtypes, weak types, static argument values), compiles it
through ``funcgrad.lowering``, and caches the executable; later calls dispatch straight
to it. Under a transform (grad, vmap, an enclosing make_jaxpr/jit) the call is staged as
one ``jit_call`` primitive whose rules rewrite its jaxpr, so jit composes both ways:
``grad(jit(f))``, ``jit(grad(f))``, ``vmap(jit(f))``, nested jits (inlined when lowered).

Temporary (first slice of the jit work): programs containing a primitive that the
backend cannot lower yet are run by the jaxpr evaluator; ``FUNCGRAD_LOG_COMPILES=1``
reports this with the primitive's name.
"""
from __future__ import annotations

import functools
import inspect
import sys

import numpy as np

from funcgrad import config, errors
from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, is_undefined, tangent_aval
from funcgrad.core.array import Array, values_caller
from funcgrad.core.avals import ShapedArray
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.primitive import batch_rules, jvp_rules, transpose_rules
from funcgrad.core.prims.calls import jit_call_p, set_jit_executor
from funcgrad.core.staging import hoist_consts, trace_to_jaxpr
from funcgrad.core.trace import Tracer, get_aval_any, is_eager, is_staging
from funcgrad.tapes import TapeAval
from funcgrad.transforms.jaxpr_ad import closed_jaxpr, linearize_jaxpr, transpose_jaxpr
from funcgrad.transforms.jvp import is_linearizing, jvp_flat


def _log(msg: str) -> None:
    if config.flag(config.LOG_COMPILES):
        print(f"[funcgrad] {msg}", file=sys.stderr)


# --- compilation of a closed jaxpr (with caching by jaxpr identity) ------------------------

class _Interpreted:
    """Fallback executable: the jaxpr evaluator (until every primitive lowers)."""

    def __init__(self, closed: ClosedJaxpr, reason: str):
        self.closed, self.reason = closed, reason
        self.in_avals, self.out_avals = closed.in_avals, closed.out_avals
        self.llvm_ir_unoptimized = self.llvm_ir_optimized = f"; not compiled: {reason}\n"

    def __call__(self, *args):
        return [np.asarray(o) for o in eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)]


_executables: dict[int, object] = {}


def _simplified(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with nested calls inlined (the lowering pass; jit's interpreter
    fallback runs the same program)."""
    try:
        from funcgrad.lowering.inline import inline_calls
    except ImportError:  # (no llvmlite: nothing is compiled, the program runs as it is)
        return closed
    return inline_calls(closed, log=_log)


def _executable_for(closed: ClosedJaxpr, name: str):
    exe = _executables.get(id(closed.jaxpr))
    if exe is None:
        if config.flag(config.DUMP_JAXPR):
            config.dump(f"jit({name}): jaxpr (traced)", str(closed))
        simplified = _simplified(closed)
        try:
            from funcgrad import lowering

            exe = lowering.compile_jaxpr(simplified, name=f"jit({name})")
        except (errors.LoweringError, ImportError, AttributeError, NotImplementedError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            _log(f"jit({name}): running the interpreter, not compiled code: {first}")
            exe = _Interpreted(simplified, first)
        exe._keepalive = closed  # ids are only unique while the jaxpr lives
        _executables[id(closed.jaxpr)] = exe
    return exe


# --- the jit_call primitive -----------------------------------------------------------------

set_jit_executor(_executable_for)


_split_cache: dict = {}


_remat_cache: dict = {}


def _remat_linear(jaxpr: ClosedJaxpr) -> ClosedJaxpr:
    """(inputs, tangents) -> output tangents: the forward recomputed, then its linear
    map applied (memoised per program). Linear in the tangents; the forward part has no
    tangent input, so ``backward_pass`` evaluates it forwards when transposing."""
    hit = _remat_cache.get(id(jaxpr.jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    from funcgrad.transforms.linearize import linearize_flat

    n = len(jaxpr.in_avals)

    def lin_fn(*xs):
        _, lin = linearize_flat(jaxpr_as_fun(jaxpr), list(xs[:n]))
        return [instantiate(o) for o in lin(*xs[n:])]

    closed = closed_jaxpr(lin_fn, list(jaxpr.in_avals) + [tangent_aval(a) for a in jaxpr.in_avals])
    if len(_remat_cache) > 256:
        _remat_cache.clear()
    _remat_cache[id(jaxpr.jaxpr)] = (jaxpr, closed)
    return closed


def _jit_call_jvp(primals, tangents, *, jaxpr, name):
    tangents = [instantiate(t) if is_differentiable(get_aval_any(p)) else Zero(tangent_aval(get_aval_any(p)))
                for p, t in zip(primals, tangents)]
    if is_linearizing(tangents):
        # Reverse mode: a jitted forward (outputs + residuals) and a jitted linear part.
        hit = _split_cache.get(id(jaxpr.jaxpr))
        if hit is not None and hit[0] is jaxpr:
            fwd, lin, res_avals = hit[1]
        else:  # memoised: eager grad(jit(f)) linearizes the same program on every call
            fwd, lin, res_avals = linearize_jaxpr(jaxpr)
            if len(_split_cache) > 256:
                _split_cache.clear()
            _split_cache[id(jaxpr.jaxpr)] = (jaxpr, (fwd, lin, res_avals))
        if any(isinstance(a, TapeAval) for a in res_avals):
            # A while_loop's run-time tape lives only inside compiled code: it cannot be
            # handed from a compiled forward to a compiled linear part. So the linear
            # part's residuals are the inputs themselves and it recomputes the forward
            # (tape included) in compiled code: the forward runs twice, natively.
            t_in = [instantiate(t) for t in tangents]
            outs = jit_call_p.bind(*primals, jaxpr=jaxpr, name=name)
            return outs, jit_call_p.bind(*primals, *t_in, jaxpr=_remat_linear(jaxpr), name=f"{name}_lin")
        n_out = len(jaxpr.out_avals)
        outs = jit_call_p.bind(*primals, jaxpr=fwd, name=f"{name}_fwd")
        primal_out, res = outs[:n_out], outs[n_out:]
        t_in = [instantiate(t) for t in tangents]
        return primal_out, jit_call_p.bind(*res, *t_in, jaxpr=lin, name=f"{name}_lin")
    # Forward mode: one jitted program computing both.
    n = len(primals)
    body = jaxpr_as_fun(jaxpr)

    def f(*xs):
        out, t_out = jvp_flat(body, list(xs[:n]), list(xs[n:]))
        return list(out) + [instantiate(t) for t in t_out]

    t_avals = [tangent_aval(a) for a in jaxpr.in_avals]
    closed = closed_jaxpr(f, list(jaxpr.in_avals) + t_avals)
    outs = jit_call_p.bind(*primals, *[instantiate(t) for t in tangents], jaxpr=closed, name=f"jvp_{name}")
    k = len(jaxpr.out_avals)
    return outs[:k], outs[k:]


_transpose_cache: dict = {}


def _jit_call_transpose(cts, *args, jaxpr, name):
    mask = [is_undefined(a) for a in args]
    ct_avals = [tangent_aval(a) for a in jaxpr.out_avals]
    cts = [instantiate(c) if type(c) is not Zero else instantiate(Zero(a)) for c, a in zip(cts, ct_avals)]
    key = (id(jaxpr.jaxpr), tuple(mask))
    hit = _transpose_cache.get(key)
    if hit is not None and hit[0] is jaxpr:
        tj = hit[1]
    else:  # memoised: eager grad(jit(f)) transposes the same program on every call
        tj = transpose_jaxpr(jaxpr, mask, ct_avals)
        if len(_transpose_cache) > 256:
            _transpose_cache.clear()
        _transpose_cache[key] = (jaxpr, tj)
    outs = jit_call_p.bind(*[a for a in args if not is_undefined(a)], *cts, jaxpr=tj, name=f"transpose_{name}")
    it = iter(outs)
    return [next(it) if m else None for m in mask]


def _jit_call_batch(args, bdims, *, jaxpr, name):
    from funcgrad.core.batch_util import batch_size, bdim_at
    from funcgrad.transforms.batching import batch_flat

    size = batch_size(args, bdims)
    moved = [bdim_at(x, d, size, 0) for x, d in zip(args, bdims)]
    in_avals = [ShapedArray((size,) + a.shape, a.dtype) for a in jaxpr.in_avals]
    body = closed_jaxpr(
        lambda *xs: batch_flat(jaxpr_as_fun(jaxpr), list(xs), [0] * len(xs), size, lambda i, n: 0), in_avals
    )
    outs = jit_call_p.bind(*moved, jaxpr=body, name=f"vmap_{name}")
    return outs, [0] * len(outs)


jvp_rules[jit_call_p] = _jit_call_jvp
transpose_rules[jit_call_p] = _jit_call_transpose
batch_rules[jit_call_p] = _jit_call_batch


# --- the user-facing jit ------------------------------------------------------------------------

def _leaf_key(x):
    t = type(x)
    if t in _FAST_TYPES or isinstance(x, np.generic):
        return (x.shape, x.dtype)
    if t in (bool, int, float):
        return t
    if isinstance(x, Tracer):
        a = x.aval
        return (a.shape, a.dtype, a.weak_type)
    return (type(x), get_aval_any(x))


class Lowered:
    """What ``fg.jit(f).lower(*args)`` returns: the staged program and its compiled form."""

    def __init__(self, jitted, closed: ClosedJaxpr, exe, in_tree, out_tree, key):
        self._jitted, self.jaxpr, self._exe = jitted, closed, exe
        self.in_tree, self.out_tree, self._key = in_tree, out_tree, key

    def as_text(self) -> str:
        simplified = _simplified(self.jaxpr)
        return (
            "# jaxpr (after simplification)\n" + str(simplified)
            + "\n\n# LLVM IR (before optimisation)\n" + self._exe.llvm_ir_unoptimized
            + "\n# LLVM IR (after optimisation)\n" + self._exe.llvm_ir_optimized
        )

    def compile(self) -> "Compiled":
        return Compiled(self)


class Compiled:
    """An executable for one input signature; other inputs are rejected with TypeError."""

    def __init__(self, lowered: Lowered):
        self._lowered = lowered

    def __call__(self, *args, **kwargs):
        jitted = self._lowered._jitted
        dyn, static, _ = jitted._split(args, kwargs)
        leaves, in_tree = pytree.tree_flatten(dyn)
        key = (in_tree, tuple(_leaf_key(x) for x in leaves), static)
        if key != self._lowered._key:
            want = ", ".join(a.str_short() for a in self._lowered.jaxpr.in_avals)
            got = ", ".join(get_aval_any(x).str_short() for x in leaves)
            raise TypeError(f"compiled {jitted.__name__} takes ({want}) (and its static arguments); got ({got})")
        outs = self._lowered._exe(*[np.asarray(x) for x in leaves])
        return pytree.tree_unflatten(self._lowered.out_tree, outs)


class JittedFunction:
    def __init__(self, fun, static_argnums=(), static_argnames=()):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self._static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        try:
            self._sig = inspect.signature(fun)
        except (TypeError, ValueError):
            self._sig = None
        self._cache: dict = {}
        self._fast: dict = {}  # (shape, dtype) per ndarray argument -> (exe.call, out_tree, single)
        self._last_key = None

    # -- argument handling ----------------------------------------------------------------
    def _split(self, args, kwargs):
        static_nums = {i % len(args) if args else i for i in self._static_argnums if -len(args) <= i < len(args)}
        if kwargs and self._sig is not None:
            bound = self._sig.bind(*args, **kwargs)
            args = tuple(bound.args)
            kwargs = dict(bound.kwargs)
        static_vals = []
        for i in sorted(static_nums):
            v = args[i]
            try:
                hash(v)
            except TypeError:
                raise TypeError(
                    f"jit({self.__name__}): static argument {i} of type {type(v).__name__} is not hashable; "
                    "static arguments must be hashable (use a tuple instead of a list)"
                ) from None
            static_vals.append((i, v))
        static_kw = []
        dyn_kw = {}
        for k, v in kwargs.items():
            if k in self._static_argnames:
                try:
                    hash(v)
                except TypeError:
                    raise TypeError(
                        f"jit({self.__name__}): static argument '{k}' of type {type(v).__name__} is not hashable"
                    ) from None
                static_kw.append((k, v))
            else:
                dyn_kw[k] = v
        dyn = ([a for i, a in enumerate(args) if i not in static_nums], dyn_kw)
        return dyn, (tuple(static_vals), tuple(sorted(static_kw))), len(args)

    def _rebuild(self, dyn, static, nargs):
        (dyn_args, dyn_kw) = dyn
        static_pos, static_kw = static
        sp = dict(static_pos)
        it = iter(dyn_args)
        args = [sp[i] if i in sp else next(it) for i in range(nargs)]
        return args, {**dyn_kw, **dict(static_kw)}

    # -- tracing and caching ----------------------------------------------------------------
    def _trace(self, dyn, static, nargs, leaves, in_tree):
        out_tree = []

        def flat(*xs):
            d = pytree.tree_unflatten(in_tree, xs)
            args, kw = self._rebuild(d, static, nargs)
            out = self._fun(*args, **kw)
            o_leaves, tree = pytree.tree_flatten(out)
            out_tree[:] = [tree]
            return o_leaves

        flat.__name__ = self.__name__
        in_avals = []
        for i, x in enumerate(leaves):
            try:
                in_avals.append(get_aval_any(x))
            except TypeError as e:
                raise TypeError(f"jit({self.__name__}): argument leaf {i}: {e}") from None
        jaxpr, consts = trace_to_jaxpr(flat, in_avals)
        return jaxpr, consts, out_tree[0]

    def _entry(self, args, kwargs):
        dyn, static, nargs = self._split(args, kwargs)
        leaves, in_tree = pytree.tree_flatten(dyn)
        key = (in_tree, tuple(_leaf_key(x) for x in leaves), static, nargs)
        entry = self._cache.get(key)
        if entry is None:
            jaxpr, consts, out_tree = self._trace(dyn, static, nargs, leaves, in_tree)
            (closed,), hoisted = hoist_consts([(jaxpr, consts)])
            traced_consts = [c for c in hoisted if isinstance(c, Tracer)]
            # Constants that are plain arrays are baked in; traced ones (closure over an
            # outer transform's values) are passed as operands and never cached.
            if traced_consts:
                return (closed, hoisted, out_tree), leaves, False
            closed = ClosedJaxpr(jaxpr, consts)
            self._log_compile(key)
            entry = (closed, [], out_tree)
            self._cache[key] = entry
            self._last_key = key
        return entry, leaves, True

    def _log_compile(self, key):
        if not config.flag(config.LOG_COMPILES):
            return
        cause = "first call"
        prev = self._last_key
        if prev is not None:
            if prev[0] != key[0]:
                cause = f"argument structure changed: {prev[0]} -> {key[0]}"
            elif prev[2] != key[2]:
                cause = f"static arguments changed: {prev[2]} -> {key[2]}"
            else:
                for i, (a, b) in enumerate(zip(prev[1], key[1])):
                    if a != b:
                        cause = f"argument leaf {i} changed from {_fmt_key(a)} to {_fmt_key(b)}"
                        break
        _log(f"compiling jit({self.__name__}) [cache size {len(self._cache)}]: {cause}")

    def __call__(self, *args, **kwargs):
        # Fast path (the common cached call): only ndarray positional arguments, nothing
        # staging. The key is just each argument's (shape, dtype).
        if not kwargs and not is_staging():
            try:
                key = tuple([(a.shape, a.dtype) if type(a) in _FAST_TYPES else _NOT_FAST[0] for a in args])
                call, out_tree, single = self._fast[key]
            except (KeyError, IndexError):
                pass
            else:
                outs = call(*args)
                return outs[0] if single else pytree.tree_unflatten(out_tree, outs)
        (closed, hoisted, out_tree), leaves, cached = self._entry(args, kwargs)
        if not hoisted and is_eager() and not any(isinstance(x, Tracer) for x in leaves):
            exe = _executable_for(closed, self.__name__)
            call = values_caller(exe.call if hasattr(exe, "call") else exe, closed.consts)
            outs = call(*leaves)
            if cached and not kwargs and not self._static_argnums and all(type(a) in _FAST_TYPES for a in args):
                single = out_tree.node_type is None
                self._fast[tuple((a.shape, a.dtype) for a in args)] = (call, out_tree, single)
        else:
            outs = jit_call_p.bind(*hoisted, *leaves, jaxpr=closed, name=self.__name__)
        return pytree.tree_unflatten(out_tree, outs)

    def lower(self, *args, **kwargs) -> Lowered:
        (closed, hoisted, out_tree), leaves, _ = self._entry(args, kwargs)
        if hoisted:
            raise TypeError(f"jit({self.__name__}).lower: cannot lower a function closing over traced values")
        dyn, static, nargs = self._split(args, kwargs)
        l2, in_tree = pytree.tree_flatten(dyn)
        key = (in_tree, tuple(_leaf_key(x) for x in l2), static)
        return Lowered(self, closed, _executable_for(closed, self.__name__), in_tree, out_tree, key)

    def cache_size(self) -> int:
        """Number of compiled signatures held for this function."""
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast.clear()

    def __repr__(self):
        return f"<jit({self.__name__}), {len(self._cache)} compiled signature(s)>"


_FAST_TYPES = (np.ndarray, Array)  # eager values are Arrays
_NOT_FAST: list = []  # indexing it raises IndexError -> caught as "not a fast-path call"


def _fmt_key(k):
    if isinstance(k, tuple) and len(k) >= 2:
        return ShapedArray(k[0], k[1]).str_short()
    return getattr(k, "__name__", str(k))


def jit(fun=None, *, static_argnums=(), static_argnames=()):
    """Compile ``fun`` for each new input signature (a decorator, or a function).

    >>> @jit
    ... def f(x, y):
    ...     return fnp.sin(x) * y + fnp.exp(-x * x)
    """
    if fun is None:
        return lambda f: JittedFunction(f, static_argnums, static_argnames)
    return JittedFunction(fun, static_argnums, static_argnames)


__all__ = ["jit", "jit_call_p", "JittedFunction", "Lowered", "Compiled"]
