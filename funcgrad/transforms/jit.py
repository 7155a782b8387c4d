"""jit: stage a function once per input signature, simplify, compile, cache.

``fg.jit(f)`` traces ``f`` to a closed jaxpr on the first call with a new signature
(pytree structure, shapes, dtypes, weak types, static argument values), compiles it
through ``funcgrad.lowering``, and caches the executable; later calls dispatch straight
to it. Under a transform (grad, vmap, an enclosing make_jaxpr/jit) the call is staged as
one ``jit_call`` primitive whose rules rewrite its jaxpr, so jit composes both ways:
``grad(jit(f))``, ``jit(grad(f))``, ``vmap(jit(f))``, nested jits (inlined when lowered).

Every primitive lowers today; should lowering fail anyway (llvmlite missing, a primitive
added without a lower rule), the program runs with the jaxpr evaluator and
``FUNCGRAD_LOG_COMPILES=1`` says so, naming the cause.
"""
from __future__ import annotations

import inspect
import sys
import weakref

import numpy as np

from funcgrad import config, errors
from funcgrad.core import debug_checks, pytree
from funcgrad.core.ad_util import Zero, instantiate, is_differentiable, is_undefined, tangent_aval
from funcgrad.core.array import Array, fresh_caller, values_caller
from funcgrad.core.avals import ShapedArray
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.primitive import batch_rules, jvp_rules, transpose_rules
from funcgrad.core.prims.calls import jit_call_p, set_jit_executor
from funcgrad.core.staging import collector_paused, hoist_consts, trace_to_jaxpr
from funcgrad.core.trace import TRACE_STATE as _TRACE_STATE
from funcgrad.core.trace import Tracer, get_aval_any, is_eager
from funcgrad.core.wrapping import copy_metadata
from funcgrad.tapes import TapeAval
from funcgrad.transforms import jit_explain
from funcgrad.transforms.batching import axis_env
from funcgrad.transforms.jaxpr_ad import closed_jaxpr, linearize_jaxpr, transpose_jaxpr
from funcgrad.transforms.jit_dispatch import FAST_TYPES as _FAST_TYPES
from funcgrad.transforms.jit_dispatch import (
    LIVE_JITTED,
    NATIVE,
    add_native_plan,
    add_plan,
    install_native,
    leaf_key,
    raise_non_array,
    raise_overflow,
    typed,
    walk_args,
)
from funcgrad.transforms.jvp import is_linearizing, jvp_flat


def _log(msg: str) -> None:
    if config.flag(config.LOG_COMPILES):
        print(f"[funcgrad] {msg}", file=sys.stderr)


# --- compilation of a closed jaxpr (cached in the program's memo) ---------------------------

class _Interpreted:
    """Fallback executable: the jaxpr evaluator (when lowering fails; see the module doc)."""

    def __init__(self, closed: ClosedJaxpr, reason: str):
        self.closed, self.reason = closed, reason
        self.in_avals, self.out_avals = closed.in_avals, closed.out_avals
        self.llvm_ir_unoptimized = self.llvm_ir_optimized = f"; not compiled: {reason}\n"

    def __call__(self, *args):
        return [np.asarray(o) for o in eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)]


_executables = weakref.WeakSet()  # every live executable, for inspection and tests


def _memo(closed: ClosedJaxpr) -> dict:
    """The per-program memo: executables and derived programs live exactly as long as
    the program they came from (never keyed on ``id()`` of something that can die)."""
    memo = closed.memo
    if memo is None:
        memo = closed.memo = {}
    return memo


def _simplified(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with nested calls inlined (the lowering pass; jit's interpreter
    fallback runs the same program)."""
    try:
        from funcgrad.lowering.inline import inline_calls
    except ImportError:  # (no llvmlite: nothing is compiled, the program runs as it is)
        return closed
    return inline_calls(closed, log=_log)


def _executable_for(closed: ClosedJaxpr, name: str):
    memo = _memo(closed)
    exe = memo.get("exe")
    if exe is None:
        if config.flag(config.DUMP_JAXPR):
            config.dump(f"jit({name}): jaxpr (traced)", str(closed))
        simplified = _simplified(closed)
        try:
            from funcgrad import lowering

            with collector_paused():
                exe = lowering.compile_jaxpr(simplified, name=f"jit({name})")
        except (errors.LoweringError, ImportError, AttributeError, NotImplementedError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            _log(f"jit({name}): running the interpreter, not compiled code: {first}")
            exe = _Interpreted(simplified, first)
        memo["exe"] = exe
        _executables.add(exe)
    return exe


# --- the jit_call primitive -----------------------------------------------------------------

set_jit_executor(_executable_for)


def _remat_linear(jaxpr: ClosedJaxpr) -> ClosedJaxpr:
    """(inputs, tangents) -> output tangents: the forward recomputed, then its linear
    map applied (memoised per program). Linear in the tangents; the forward part has no
    tangent input, so ``backward_pass`` evaluates it forwards when transposing."""
    memo = _memo(jaxpr)
    hit = memo.get("remat")
    if hit is not None:
        return hit
    from funcgrad.transforms.linearize import linearize_flat

    n = len(jaxpr.in_avals)

    def lin_fn(*xs):
        _, lin = linearize_flat(jaxpr_as_fun(jaxpr), list(xs[:n]))
        return [instantiate(o) for o in lin(*xs[n:])]

    closed = closed_jaxpr(lin_fn, list(jaxpr.in_avals) + [tangent_aval(a) for a in jaxpr.in_avals])
    memo["remat"] = closed
    return closed


def _jit_call_jvp(primals, tangents, *, jaxpr, name):
    tangents = [instantiate(t) if is_differentiable(get_aval_any(p)) else Zero(tangent_aval(get_aval_any(p)))
                for p, t in zip(primals, tangents)]
    if is_linearizing(tangents):
        # Reverse mode: a jitted forward (outputs + residuals) and a jitted linear part.
        memo = _memo(jaxpr)
        hit = memo.get("split")
        if hit is None:  # memoised: eager grad(jit(f)) linearizes the same program on every call
            hit = memo["split"] = linearize_jaxpr(jaxpr)
        fwd, lin, res_avals = hit
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


def _jit_call_transpose(cts, *args, jaxpr, name):
    mask = [is_undefined(a) for a in args]
    ct_avals = [tangent_aval(a) for a in jaxpr.out_avals]
    cts = [instantiate(c) if type(c) is not Zero else instantiate(Zero(a)) for c, a in zip(cts, ct_avals)]
    memo = _memo(jaxpr)
    key = ("transpose", tuple(mask))
    tj = memo.get(key)
    if tj is None:  # memoised: eager grad(jit(f)) transposes the same program on every call
        tj = memo[key] = transpose_jaxpr(jaxpr, mask, ct_avals)
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

    def draw(self, **opts):
        """The picture of the program jit runs: one cluster per fused loop nest (a
        ``funcgrad.viz.Graph``; ``opts`` as ``funcgrad.draw``'s)."""
        from funcgrad.viz import draw_executable

        return draw_executable(self._exe, name=f"jit({self._jitted.__name__})", **opts)


class Compiled:
    """An executable for one input signature; other inputs are rejected with TypeError."""

    def __init__(self, lowered: Lowered):
        self._lowered = lowered

    def __call__(self, *args, **kwargs):
        jitted = self._lowered._jitted
        _, _, _, leaves, key = jitted._key(args, kwargs)
        if key != self._lowered._key:
            want = ", ".join(a.str_short() for a in self._lowered.jaxpr.in_avals)
            got = ", ".join(get_aval_any(x).str_short() for x in leaves)
            raise TypeError(f"compiled {jitted.__name__} takes ({want}) (and its static arguments); got ({got})")
        outs = self._lowered._exe(*[np.asarray(x) for x in leaves])
        return pytree.tree_unflatten(self._lowered.out_tree, outs)


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _index_tuple(v, what: str, fname: str) -> tuple:
    vals = (v,) if isinstance(v, (int, np.integer)) else tuple(v) if isinstance(v, (tuple, list)) else None
    if vals is None or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in vals):
        raise TypeError(f"jit({fname}): {what} must be an int or a tuple of ints, got {v!r}")
    return tuple(int(i) for i in vals)


def _name_tuple(v, what: str, fname: str) -> tuple:
    vals = (v,) if isinstance(v, str) else tuple(v) if isinstance(v, (tuple, list)) else None
    if vals is None or not all(isinstance(n, str) for n in vals):
        raise TypeError(f"jit({fname}): {what} must be a str or a tuple of str, got {v!r}")
    return vals


def _infer_argnums_and_argnames(sig, nums, names, what_nums: str, fname: str):
    """JAX's rule: a positional-or-keyword parameter marked by position is also marked by
    name and vice versa, so it is treated alike however the caller passes it. Positions
    beyond a signature without ``*args`` are an error here (JAX raises too)."""
    if sig is None:
        return nums, names
    params = list(sig.parameters.values())
    pos = [p for p in params if p.kind in _POSITIONAL]
    if not any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        for i in nums:
            if not -len(pos) <= i < len(pos):
                raise ValueError(
                    f"jit({fname}): {what_nums}={nums} but {fname} takes only {len(pos)} positional "
                    f"argument{'' if len(pos) == 1 else 's'}"
                )
        nums = tuple(sorted({i % len(pos) for i in nums}))
    by_pos = {i: p.name for i, p in enumerate(pos) if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
    nums = tuple(sorted(set(nums) | {i for i, n in by_pos.items() if n in names}))
    names = tuple(dict.fromkeys(names + tuple(by_pos[i] for i in nums if i in by_pos)))
    return nums, names


class JittedFunction:
    """``jit(f)``: see ``jit``. Owns its caches: traced programs, their executables (held
    by the programs) and the fast dispatch table all die with it."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(), donate_argnames=(),
                 inline=False, keep_unused=False, abstracted_axes=None):
        if not callable(fun):
            raise TypeError(f"jit: expected a function, got {type(fun).__name__}")
        copy_metadata(self, fun)  # (any callable: a partial or an instance has no __name__)
        self._fun = fun
        name = self.__name__
        if abstracted_axes is not None:
            raise NotImplementedError(
                f"jit({name}): abstracted_axes (dynamic shapes) is not supported; shapes are static")
        try:
            self._sig = inspect.signature(fun)
        except (TypeError, ValueError):
            self._sig = None
        nums = _index_tuple(static_argnums, "static_argnums", name)
        names = _name_tuple(static_argnames, "static_argnames", name)
        self._static_argnums, self._static_argnames = _infer_argnums_and_argnames(
            self._sig, nums, names, "static_argnums", name)
        # Donation is a hint that lets JAX reuse an input's buffer for an output. funcgrad
        # ignores it: inputs are never written, results are always new arrays.
        self._donate_argnums, self._donate_argnames = _infer_argnums_and_argnames(
            self._sig, _index_tuple(donate_argnums, "donate_argnums", name),
            _name_tuple(donate_argnames, "donate_argnames", name), "donate_argnums", name)
        self._inline = bool(inline)
        self._keep_unused = bool(keep_unused)  # (unused inputs are always accepted)
        self._cache: dict = {}
        self._fast: dict = {}  # (shape, dtype) per ndarray argument -> (exe.call, out_tree, single)
        self._plans: dict = {}  # _walk_args key -> (exe.call, out_tree, single, leaf order)
        self._native_plans: list = []  # what the native __call__ tries first (lowering.native_entry)
        self._caches_by_rules: dict = {}  # traces made under other promotion rules (jit_dispatch)
        self._traces = 0  # times traced (each cache miss, and every call closing over tracers)
        LIVE_JITTED.add(self)

    # -- argument handling ----------------------------------------------------------------
    def _split(self, args, kwargs):
        if kwargs and self._sig is not None:
            try:
                bound = self._sig.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"jit({self.__name__}): {e}") from None
            args = tuple(bound.args)
            kwargs = dict(bound.kwargs)
        n = len(args)
        static_nums = set()
        for i in self._static_argnums:
            if -n <= i < n:
                static_nums.add(i % n)
            elif self._sig is None or i < 0 or any(
                    p.kind is inspect.Parameter.VAR_POSITIONAL for p in self._sig.parameters.values()):
                raise ValueError(
                    f"jit({self.__name__}): static_argnums={self._static_argnums} but it was called with only "
                    f"{n} positional argument{'' if n == 1 else 's'}"
                )  # (else a parameter left at its default value: a constant anyway)
        static_vals = []
        for i in sorted(static_nums):
            static_vals.append((i, self._check_hashable(args[i], i)))
        static_kw = []
        dyn_kw = {}
        for k, v in kwargs.items():
            if k in self._static_argnames:
                static_kw.append((k, self._check_hashable(v, k)))
            else:
                dyn_kw[k] = v
        dyn = ([a for i, a in enumerate(args) if i not in static_nums], dyn_kw)
        return dyn, (tuple(static_vals), tuple(sorted(static_kw))), len(args)

    def _check_hashable(self, v, where):
        try:
            hash(v)
        except TypeError:
            label = self._label(where) if isinstance(where, int) else ""
            shown, named = (f"'{where}'", "") if isinstance(where, str) else (where, label[len(str(where)):])
            raise TypeError(
                f"jit({self.__name__}): static argument {shown} of type {type(v).__name__} is not hashable{named}; "
                "static arguments must be hashable (use a tuple instead of a list)"
            ) from None
        return v

    def _label(self, i: int) -> str:
        """Positional argument ``i`` for error messages: ``1 ('n')`` (its name when known)."""
        if self._sig is not None:
            pos = [p.name for p in self._sig.parameters.values() if p.kind in _POSITIONAL]
            if i < len(pos):
                return f"{i} ('{pos[i]}')"
        return str(i)

    def _key(self, args, kwargs):
        """(dynamic arguments, static arguments, number of positional arguments, leaves,
        cache key) of a call."""
        dyn, static, nargs = self._split(args, kwargs)
        leaves, in_tree = pytree.tree_flatten(dyn)
        try:
            leaf_keys = tuple(leaf_key(x) for x in leaves)
        except (OverflowError, TypeError) as e:
            static_pos = {i for i, _ in static[0]}
            labels = [self._label(i) for i in range(nargs) if i not in static_pos]
            if isinstance(e, OverflowError):
                raise_overflow(f"jit({self.__name__})", dyn, leaves, labels)
            raise_non_array(f"jit({self.__name__})", dyn, leaves, labels)
            raise
        static_key = (tuple((i, typed(v)) for i, v in static[0]), tuple((k, typed(v)) for k, v in static[1]))
        return dyn, static, nargs, leaves, (in_tree, leaf_keys, static_key, nargs)

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
            for i, o in enumerate(o_leaves):
                if not isinstance(o, (Tracer, np.ndarray, np.generic, bool, int, float, complex)):
                    where = "output" if tree.node_type is None else f"output leaf {i}"
                    raise TypeError(
                        f"jit({self.__name__}): the function's {where} is a {type(o).__name__}, not an array; "
                        "jitted functions return arrays (or pytrees of arrays, or None)"
                    )
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
        dyn, static, nargs, leaves, key = self._key(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            with collector_paused():
                jaxpr, consts, out_tree = self._trace(dyn, static, nargs, leaves, key[0])
            (closed,), hoisted = hoist_consts([(jaxpr, consts)])
            traced_consts = [c for c in hoisted if isinstance(c, Tracer)]
            # Constants that are plain arrays are baked in; traced ones (closure over an
            # outer transform's values) are passed as operands and never cached.
            self._traces += 1
            if traced_consts:
                jit_explain.log_uncached_trace(self.__name__, self._traces)
                return (closed, hoisted, out_tree), leaves, False
            closed = ClosedJaxpr(jaxpr, consts)
            jit_explain.log_trace(self.__name__, self._cache, key, self._label, self._traces)
            entry = (closed, [], out_tree)
            self._cache[key] = entry
        return entry, leaves, True

    def _call(self, *args, **kwargs):
        if _jit_slow[0]:  # in ``disable_jit()``: the Python function op by op; else the debug checks are on
            return self._fun(*args, **kwargs) if _jit_disabled[0] else self._checked(args, kwargs)
        # Fast path (the common cached call): only ndarray positional arguments, nothing
        # staging. The key is just each argument's (shape, dtype).
        if not kwargs and _TRACE_STATE.dynamic is None:  # (nothing staging) a cached call:
            if NATIVE["pending"] and self._native_plans:  # (a repeat call of a function that has a
                # native plan: compile the entry now, once per process; a function's first call
                # does not pay for the faster repeat calls of others)
                install_native(JittedFunction, _TRACE_STATE, _jit_slow, _log)
            for a in args:  # Python/NumPy scalars and pytrees: the argument plan (jit_dispatch)
                if type(a) is not np.ndarray and type(a) is not Array:
                    walked = walk_args(args)
                    plan = None if walked is None else self._plans.get(walked[0])
                    if plan is not None:
                        call, out_tree, single, perm = plan
                        leaves = walked[1] if perm is None else [walked[1][i] for i in perm]
                        outs = call(*leaves)
                        return outs[0] if single else pytree.tree_unflatten(out_tree, outs)
                    break
            else:  # only arrays: the key is just each argument's (shape, dtype)
                hit = self._fast.get(tuple([(a.shape, a.dtype) for a in args]))
                if hit is not None:
                    outs = hit[0](*args)
                    return outs[0] if hit[2] else pytree.tree_unflatten(hit[1], outs)
        return self._general(args, kwargs)

    def _checked(self, args, kwargs):  # (``jax_debug_nans``/``jax_debug_infs``: core/debug_checks.py)
        out = self._general(args, kwargs)
        debug_checks.check(f"jit({self.__name__})", pytree.tree_leaves(out))
        return out

    def _general(self, args, kwargs):
        if axis_env and not is_eager():
            # Under a vmap with a named axis the body may use collectives over it, which
            # act at that vmap's level: run it there (as inline=True would).
            return self._fun(*args, **kwargs)
        (closed, hoisted, out_tree), leaves, cached = self._entry(args, kwargs)
        if not hoisted and is_eager() and not any(isinstance(x, Tracer) for x in leaves):
            exe = _executable_for(closed, self.__name__)
            native = getattr(exe, "call", None)  # compiled code: fresh outputs, never an input
            call = fresh_caller(native) if native is not None else values_caller(exe, closed.consts)
            outs = call(*leaves)
            if cached and not kwargs and not self._static_argnums:
                entry = (call, out_tree, out_tree.node_type is None)
                if all(type(a) in _FAST_TYPES for a in args):
                    self._fast[tuple((a.shape, a.dtype) for a in args)] = entry
                else:
                    add_plan(self._plans, args, leaves, entry)
                if native is not None and NATIVE["state"] is not False:
                    add_native_plan(self, args, leaves, exe, out_tree)
        elif self._inline and not is_eager():
            # inline=True: the program joins the enclosing trace (no jit_call equation).
            outs = jaxpr_as_fun(closed)(*hoisted, *leaves)
        else:
            outs = jit_call_p.bind(*hoisted, *leaves, jaxpr=closed, name=self.__name__)
        return pytree.tree_unflatten(out_tree, outs)

    def lower(self, *args, **kwargs) -> Lowered:
        (closed, hoisted, out_tree), leaves, _ = self._entry(args, kwargs)
        if hoisted:
            raise TypeError(f"jit({self.__name__}).lower: cannot lower a function closing over traced values")
        _, _, _, _, key = self._key(args, kwargs)
        return Lowered(self, closed, _executable_for(closed, self.__name__), key[0], out_tree, key)

    def cache_size(self) -> int:
        """Number of compiled signatures held for this function."""
        return len(self._cache)

    def retrace_count(self) -> int:
        """How many times this function was traced after its first trace: once per new
        signature (and per call closing over an enclosing transform's tracers, which is
        never cached). ``clear_cache`` does not reset it. ``FUNCGRAD_EXPLAIN_CACHE_MISSES=1``
        says why each retrace happened."""
        return max(0, self._traces - 1)

    def clear_cache(self) -> None:
        for table in (self._cache, self._fast, self._plans, self._native_plans, self._caches_by_rules):
            table.clear()

    __call__ = _call  # (until ``jit_dispatch.install_native`` makes it a native builtin)

    def __repr__(self):
        return f"<jit({self.__name__}), {len(self._cache)} compiled signature(s)>"

    def __reduce__(self):  # pickled by its compiled signatures' export blobs (no source needed)
        from funcgrad.export.pickled_jit import reduce_jitted

        return reduce_jitted(self)


_jit_disabled, _jit_slow = config.JIT_DISABLED, config.JIT_SLOW_PATH  # (``config.update`` sets them too)
disable_jit = config.disable_jit


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), donate_argnames=(),
        inline=False, keep_unused=False, abstracted_axes=None, autograph=False):
    """Compile ``fun`` for each new input signature (a decorator, or a function).

    >>> @jit
    ... def f(x, y):
    ...     return fnp.sin(x) * y + fnp.exp(-x * x)

    ``fun`` is any callable (a partial, a callable instance, a method); the result carries
    its ``__name__``, ``__doc__``, ``__wrapped__``... (``funcgrad/core/wrapping.py``).

    The keywords are JAX's. ``static_argnums`` / ``static_argnames`` mark arguments whose
    *values* are part of the signature (hashable; ``1``, ``1.0`` and ``True`` are
    different signatures); a positional-or-keyword parameter marked either way is static
    however it is passed. ``donate_argnums`` / ``donate_argnames`` are accepted and
    ignored: donation lets JAX reuse an input buffer for an output, but funcgrad never
    writes to its inputs and always returns new arrays. ``inline=True`` puts the
    program's equations straight into an enclosing trace (``make_jaxpr``, an outer
    ``jit``, a transform) instead of one ``jit_call``. ``keep_unused`` is accepted (unused
    inputs are always accepted); ``abstracted_axes`` must be ``None`` (shapes are static).

    The compiled programs, their executables and the constants they captured are owned
    by the returned function and freed with it. ``autograph=True`` converts ``fun``'s
    Python control flow first (``funcgrad.autograph``).
    """
    kw = dict(static_argnums=static_argnums, static_argnames=static_argnames, donate_argnums=donate_argnums,
              donate_argnames=donate_argnames, inline=inline, keep_unused=keep_unused,
              abstracted_axes=abstracted_axes)

    def make(f):
        if not autograph:
            return JittedFunction(f, **kw)
        from funcgrad.autograph import autograph as convert

        jf = JittedFunction(convert(f), **kw)
        copy_metadata(jf, f)  # (named as written: a converted instance is its bound __call__)
        return jf

    return make if fun is None else make(fun)


__all__ = ["jit", "jit_call_p", "JittedFunction", "Lowered", "Compiled"]
