"""User-defined derivatives and rematerialisation: ``custom_jvp``, ``custom_vjp``,
``checkpoint``, and the transform rules of their call primitives (declared in
``funcgrad/core/prims/calls.py``).

Three call primitives carry the user's function (and its staged jaxpr, for printing,
type checking and later lowering):

- ``custom_jvp_call``: its JVP rule calls the user's rule instead of differentiating
  the body.
- ``custom_vjp_call``: its JVP rule runs the user's ``fwd`` and emits a ``custom_lin``
  whose transpose is the user's ``bwd``. When that ``custom_lin`` is evaluated in pure
  forward mode (``jvp``, ``jacfwd``, ``hessian``'s outer pass) it differentiates the
  primal definition instead, so forward mode works (JAX raises here).
- ``checkpoint_call``: its JVP rule emits a ``custom_lin`` whose only residuals are
  the inputs; its transpose re-linearizes the function, recomputing intermediates in
  the backward pass instead of storing them.

``custom_lin(*nonlin, *tangents)`` is linear in ``tangents``; ``jvp_fn`` computes it
forwards, ``bwd_fn`` gives its transpose. The functions may close over constants and
over values traced by an enclosing jit/vmap/make_jaxpr or control-flow body (they are
closure-converted into operands, ``_bind_call``; if those operands turn out to be
differentiated, their share of the derivative comes from the function's definition). A
function closing over a value being differentiated right now is refused with an
``UnexpectedTracerError`` naming it: its rule, a Python closure too, would mix that
value's derivative into the tangents. The rules run when the call is differentiated,
so closures over a jit/loop body's values work for derivatives taken inside that body
(``jit(grad(f))``), not from outside it (``grad(jit(f))``: a clear error).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, add_tangents, instantiate, is_undefined, tangent_aval
from funcgrad.core.array import leaf_values
from funcgrad.core.avals import ShapedArray
from funcgrad.core.interpret import jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.primitive import allow_missing, batch_rules, jvp_rules, transpose_rules
from funcgrad.core.prims.calls import checkpoint_call_p, custom_jvp_call_p, custom_lin_p, custom_vjp_call_p
from funcgrad.core.staging import hoist_consts, trace_to_jaxpr
from funcgrad.core.trace import Tracer, get_aval_any, is_eager, is_staging
from funcgrad.core.wrapping import copy_metadata, fun_name, wraps
from funcgrad.errors import ConcretizationError, UnexpectedTracerError
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.transforms.linearize import linearize_flat
from funcgrad.transforms.transpose import backward_pass


def _avals(xs):
    return tuple(get_aval_any(x) for x in xs)


def _stage(fun_flat, args):
    jaxpr, consts = trace_to_jaxpr(fun_flat, list(_avals(args)))
    return ClosedJaxpr(jaxpr, consts)


for _prim in (custom_jvp_call_p, custom_vjp_call_p, checkpoint_call_p):
    allow_missing("transpose", _prim, "not linear: its JVP produces a custom_lin, which is")


def _bind_call(prim, fun_flat, args, name, **params):
    """Apply a call primitive; eagerly (no transform, no tracers) just call the function.

    Staged, the function may close over values traced by an enclosing transform (jit,
    vmap, make_jaxpr, a control-flow body): those would be stale by the time the staged
    call runs, so the function is *closure-converted* -- staged now, with the traced
    values it reads as leading operands (``num_consts`` of them) that transforms treat
    like any operand. The rules stay Python functions, called by the JVP rule with the
    arguments only (see ``_call_rule``).
    """
    if is_eager() and not any(isinstance(a, Tracer) for a in args):
        return fun_flat(*args)
    try:
        call_jaxpr = _stage(fun_flat, args)
    except ConcretizationError:
        if not _primals_known(args):
            raise
        if not any(isinstance(a, Tracer) for a in args):  # (e.g. called from its own rule)
            return fun_flat(*args)
        # Python control flow on the primal values (``if x > 0:``) under an eager grad or
        # jvp, as JAX allows: the primals are concrete, and only the derivative rules, not
        # the staged function, are used there, so the call carries no jaxpr.
        return prim.bind(*args, fun=fun_flat, call_jaxpr=None, num_consts=0, **params)
    if not _closes_over_tracers(prim, name, call_jaxpr.consts):
        return prim.bind(*args, fun=fun_flat, call_jaxpr=call_jaxpr, num_consts=0, **params)
    (hoisted,), consts = hoist_consts([(call_jaxpr.jaxpr, call_jaxpr.consts)])
    body = jaxpr_as_fun(hoisted)
    body.__name__ = name
    return prim.bind(*consts, *args, fun=body, call_jaxpr=hoisted, num_consts=len(consts), **params)


def _primals_known(args) -> bool:
    """Nothing stages, and every traced argument's primal value is concrete (eager
    differentiation: JVP and eager-tape tracers)."""
    return not is_staging() and all(not isinstance(a, Tracer) or a.to_concrete_value() is not None for a in args)


def _call_rule(prim, fun, rule, *args):
    """Call a user rule. If it closes over a value traced by a transform that has
    finished (the rule runs when the staged call is differentiated, which can be after
    its enclosing jit/scan body was traced), say so plainly."""
    try:
        return rule(*args)
    except UnexpectedTracerError as e:
        kind = "custom_jvp" if prim is custom_jvp_call_p else "custom_vjp"
        raise UnexpectedTracerError(
            f"the rule of {kind} function {fun_name(fun)} closes over a value "
            "traced by a transform that has finished (e.g. the body of a jit or a loop, being "
            "differentiated from outside). Pass that value to the function as an argument."
        ) from e


def _closes_over_tracers(prim, name, consts) -> bool:
    """Whether a staged custom function reads traced values (they are closure-converted).
    A value being differentiated is refused: the custom rule cannot see its derivative."""
    from funcgrad.transforms.eager_vjp import EagerTracer
    from funcgrad.transforms.jvp import JVPTracer

    found = False
    for c in consts:
        if isinstance(c, (JVPTracer, EagerTracer)):
            raise _closure_error(prim, name, c.aval)
        found = found or isinstance(c, Tracer)
    return found


def _closure_error(prim, name, aval):
    kind = "custom_jvp" if prim is custom_jvp_call_p else "custom_vjp"
    return UnexpectedTracerError(
        f"{kind} function {name} closes over a value that is being differentiated "
        f"({aval.str_short()}): its custom rule cannot account for that value's derivative. "
        "Pass it to the function as an argument instead."
    )


def _with_closure_tangents(fun, primals, tangents, num_consts, t_out):
    """Add the tangent the closure-converted operands contribute (through the function's
    own definition: the user's rule only covers the arguments). Usually there is none:
    they are values of an enclosing jit/vmap/loop body that is not being differentiated."""
    if all(type(t) is Zero for t in tangents[:num_consts]):
        return list(t_out)
    zeros = [Zero(tangent_aval(a)) for a in _avals(primals[num_consts:])]
    _, extra = jvp_flat(fun, list(primals), list(tangents[:num_consts]) + zeros)
    return [add_tangents(a, b) for a, b in zip(t_out, extra)]


# --- custom_lin: a linear map given by a forward function and its transpose ---------------

def _custom_lin_jvp(primals, tangents, *, num_nonlin, jvp_fn, bwd_fn, out_avals):
    # Differentiate the forward map itself (second-order forward mode).
    params = dict(num_nonlin=num_nonlin, jvp_fn=jvp_fn, bwd_fn=bwd_fn, out_avals=out_avals)
    if all(type(t) is Zero for t in tangents):
        out = custom_lin_p.bind(*primals, **params)
        return out, [Zero(tangent_aval(a)) for a in out_avals]

    def f(*args):
        return jvp_fn(list(args[:num_nonlin]), list(args[num_nonlin:]))

    return jvp_flat(f, list(primals), list(tangents))


def _custom_lin_transpose(cts, *args, num_nonlin, jvp_fn, bwd_fn, out_avals):
    nonlin = list(args[:num_nonlin])
    cts = [instantiate(c) for c in cts]
    cts_in = bwd_fn(nonlin, cts)
    return [None] * num_nonlin + [c if is_undefined(a) else None for c, a in zip(cts_in, args[num_nonlin:])]


jvp_rules[custom_lin_p] = _custom_lin_jvp
transpose_rules[custom_lin_p] = _custom_lin_transpose


def _emit_lin(nonlin, tangents, jvp_fn, bwd_fn, out_avals):
    if all(type(t) is Zero for t in tangents):
        return [Zero(a) for a in out_avals]
    tangents = [instantiate(t) for t in tangents]
    return custom_lin_p.bind(
        *nonlin, *tangents, num_nonlin=len(nonlin), jvp_fn=jvp_fn, bwd_fn=bwd_fn, out_avals=tuple(out_avals)
    )


def _jvp_of(fun):
    """Forward map of ``fun``: (primals, tangents) -> output tangents (flat lists)."""

    def jvp_fn(primals, tangents):
        return [instantiate(t) for t in jvp_flat(fun, primals, tangents)[1]]

    jvp_fn.__name__ = f"jvp({fun_name(fun)})"
    return jvp_fn


# --- custom_jvp ---------------------------------------------------------------------------

def _custom_jvp_call_jvp(primals, tangents, *, fun, call_jaxpr, jvp, num_consts):
    # Closure-converted operands come first; the rule (which reads them through its own
    # closure) takes the arguments only.
    arg_tangents = [instantiate(t) for t in tangents[num_consts:]]
    out, t_out = _call_rule(custom_jvp_call_p, fun, jvp, list(primals[num_consts:]), arg_tangents)
    return list(out), _with_closure_tangents(fun, primals, tangents, num_consts, t_out)


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


class custom_jvp:
    """A function with a user-defined JVP rule (used in forward and reverse mode).

    >>> @custom_jvp
    ... def f(x):
    ...     return fnp.log1p(fnp.exp(x))
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), t * fg.scipy.special.expit(x)
    """

    def __init__(self, fun, nondiff_argnums=()):
        copy_metadata(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        """``jvp(primals, tangents) -> (primal_out, tangent_out)`` (tuples of arguments)."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument: ``jvps[i](g_i, ans, *primals)`` is argument i's share
        of the output tangent (``None`` for arguments with no derivative)."""

        def jvp(primals, tangents):
            ans = self(*primals)
            out = None
            for fn, t in zip(jvps, tangents):
                if fn is None:
                    continue
                contrib = fn(t, ans, *primals)
                out = contrib if out is None else pytree.tree_map(lambda a, b: a + b, out, contrib)
            if out is None:
                out = pytree.tree_map(lambda a: a * 0.0, ans)
            return ans, out

        self.jvp = jvp
        return jvp

    def __call__(self, *args):
        if self.jvp is None:
            raise AttributeError(f"custom_jvp function {self.__name__} has no rule: call .defjvp(rule) first")
        static, dyn = _split(args, self.nondiff_argnums)
        leaves, in_tree = pytree.tree_flatten(tuple(dyn))
        out_tree = []

        def fun_flat(*xs):
            out = self.fun(*_merge(static, pytree.tree_unflatten(in_tree, xs), self.nondiff_argnums))
            out_leaves, tree = pytree.tree_flatten(out)
            out_tree[:] = [tree]
            return out_leaves

        def jvp_flat_rule(primals, tangents):
            p = pytree.tree_unflatten(in_tree, primals)
            t = pytree.tree_unflatten(in_tree, tangents)
            if self.nondiff_argnums:
                out, t_out = self.jvp(*[args[i] for i in self.nondiff_argnums], p, t)
            else:
                out, t_out = self.jvp(tuple(p), tuple(t))
            out_leaves, tree = pytree.tree_flatten(out)
            t_leaves, t_tree = pytree.tree_flatten(t_out)
            if t_tree != tree:
                raise TypeError(
                    f"custom_jvp rule of {self.__name__}: tangent output structure {t_tree} "
                    f"!= primal output structure {tree}"
                )
            out_tree[:] = [tree]
            return out_leaves, [_match_dtype(t, o) for t, o in zip(t_leaves, out_leaves)]

        outs = _bind_call(custom_jvp_call_p, fun_flat, leaves, self.__name__, jvp=jvp_flat_rule)
        return pytree.tree_unflatten(out_tree[0], leaf_values(outs))


def _match_dtype(t, o):
    from funcgrad.core import lax_api as lax

    ta, oa = get_aval_any(t), get_aval_any(o)
    if ta.shape != oa.shape:
        raise TypeError(f"custom rule: tangent of shape {ta.shape} for an output of shape {oa.shape}")
    return t if ta.dtype == oa.dtype or oa.dtype.kind != "f" else lax.convert_element_type(t, oa.dtype)


def _zeros_like_value(x):
    from funcgrad.core.ad_util import zeros_like_aval

    z = zeros_like_aval(tangent_aval(get_aval_any(x)))
    return z[()] if type(z) is np.ndarray and z.ndim == 0 else z  # a NumPy scalar, as grads are


def _split(args, nondiff):
    static = {i: args[i] for i in nondiff}
    return static, [a for i, a in enumerate(args) if i not in static]


def _merge(static, dyn, nondiff):
    it = iter(dyn)
    n = len(static) + len(dyn)
    return [static[i] if i in static else next(it) for i in range(n)]


# --- custom_vjp ---------------------------------------------------------------------------

def _custom_vjp_call_jvp(primals, tangents, *, fun, call_jaxpr, fwd, bwd, num_consts):
    # Closure-converted operands come first; fwd/bwd (which read them through their own
    # closures) see the arguments only.
    out, res = _call_rule(custom_vjp_call_p, fun, fwd, list(primals[num_consts:]))

    def bwd_fn(nonlin, cts):
        return _call_rule(custom_vjp_call_p, fun, bwd, nonlin[len(primals):], cts)

    lin_tangents = _emit_lin(list(primals) + list(res), list(tangents[num_consts:]),
                             _forward_through_primal(fun, len(primals), num_consts), bwd_fn,
                             [tangent_aval(a) for a in _avals(out)])
    return list(out), _with_closure_tangents(fun, primals, tangents, num_consts, lin_tangents)


def _forward_through_primal(fun, num_primals, num_consts=0):
    """Forward mode through a custom_vjp function: differentiate its primal definition
    (the residuals, and closure-converted operands, are constants to it)."""
    inner = _jvp_of(fun)

    def jvp_fn(nonlin, tangents):
        zeros = [Zero(tangent_aval(a)) for a in _avals(nonlin[:num_consts])]
        return inner(nonlin[:num_primals], zeros + list(tangents))

    jvp_fn.__name__ = inner.__name__
    return jvp_fn


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp


class custom_vjp:
    """A function with a user-defined VJP (``defvjp(fwd, bwd)``).

    ``fwd(*args) -> (out, residuals)``; ``bwd(residuals, ct_out) -> tuple`` with one
    cotangent per argument. Reverse mode uses them; forward mode (``jvp``, ``jacfwd``,
    ``hessian``) differentiates the function's own definition.
    """

    def __init__(self, fun, nondiff_argnums=()):
        copy_metadata(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        if self.fwd is None:
            raise AttributeError(f"custom_vjp function {self.__name__} has no rule: call .defvjp(fwd, bwd) first")
        static, dyn = _split(args, self.nondiff_argnums)
        nd = [args[i] for i in self.nondiff_argnums]
        leaves, in_tree = pytree.tree_flatten(tuple(dyn))
        out_tree, res_tree = [], []

        def fun_flat(*xs):
            out = self.fun(*_merge(static, pytree.tree_unflatten(in_tree, xs), self.nondiff_argnums))
            out_leaves, tree = pytree.tree_flatten(out)
            out_tree[:] = [tree]
            return out_leaves

        def fwd_flat(primals):
            out, res = self.fwd(*_merge(static, pytree.tree_unflatten(in_tree, primals), self.nondiff_argnums))
            out_leaves, tree = pytree.tree_flatten(out)
            res_leaves, rtree = pytree.tree_flatten(res)
            out_tree[:] = [tree]
            res_tree[:] = [rtree]
            return out_leaves, res_leaves

        def bwd_flat(res_leaves, cts):
            res = pytree.tree_unflatten(res_tree[0], res_leaves)
            ct = pytree.tree_unflatten(out_tree[0], cts)
            cts_in = self.bwd(*nd, res, ct)
            if not isinstance(cts_in, tuple):
                raise TypeError(
                    f"custom_vjp bwd of {self.__name__} must return a tuple (one cotangent per argument), "
                    f"got {type(cts_in).__name__}"
                )
            if len(cts_in) == len(dyn) and any(c is None for c in cts_in):
                # JAX: ``None`` for an argument means a zero cotangent for all of it.
                cts_in = tuple(pytree.tree_map(_zeros_like_value, a) if c is None else c for c, a in zip(cts_in, dyn))
            ct_leaves, ct_tree = pytree.tree_flatten(cts_in)
            if ct_tree != in_tree:
                raise TypeError(
                    f"custom_vjp bwd of {self.__name__}: returned structure {ct_tree}, "
                    f"expected {in_tree} (the arguments' structure)"
                )
            return [_match_dtype(c, x) for c, x in zip(ct_leaves, leaves)]

        outs = _bind_call(custom_vjp_call_p, fun_flat, leaves, self.__name__, fwd=fwd_flat, bwd=bwd_flat)
        return pytree.tree_unflatten(out_tree[0], leaf_values(outs))


# --- checkpoint ---------------------------------------------------------------------------

def _checkpoint_call_jvp(primals, tangents, *, fun, call_jaxpr, policy=None, prevent_cse=True):
    if policy is not None:  # save what the policy allows (funcgrad/transforms/remat.py)
        from funcgrad.transforms.remat import policy_checkpoint_jvp

        return policy_checkpoint_jvp(primals, tangents, fun=fun, call_jaxpr=call_jaxpr, policy=policy)
    out = checkpoint_call_p.bind(*primals, fun=fun, call_jaxpr=call_jaxpr)

    def bwd_fn(nonlin, cts):
        # Recompute: linearize the function again at its inputs, then transpose.
        _, lin = linearize_flat(fun, list(nonlin))
        return [instantiate(c) for c in backward_pass(lin.jaxpr, lin.consts, cts)]

    bwd_fn.__name__ = f"recompute({fun_name(fun)})"
    return out, _emit_lin(
        list(primals), list(tangents), _jvp_of(fun), bwd_fn, [tangent_aval(a) for a in call_jaxpr.out_avals]
    )


jvp_rules[checkpoint_call_p] = _checkpoint_call_jvp


def _tree_out(outs, out_tree):
    return pytree.tree_unflatten(out_tree[0], leaf_values(outs))


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """Rematerialise ``fun`` in reverse mode: its intermediates are recomputed in the
    backward pass instead of being stored. Also ``remat``.

    Without ``policy`` only the inputs are saved. ``policy(prim, *avals, **params) ->
    bool`` (see ``checkpoint_policies``) says which intermediates may be saved instead of
    recomputed; ``funcgrad/transforms/remat.py`` has the details. ``prevent_cse`` is
    accepted for JAX compatibility (``jit`` may merge a recomputation with its forward
    twin).
    """
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be a function (prim, *avals, **params) -> bool, got {policy!r}")
    params = {} if policy is None else {"policy": policy, "prevent_cse": bool(prevent_cse)}

    @wraps(fun)
    def wrapped(*args):
        static, dyn = _split(args, static_argnums)
        leaves, in_tree = pytree.tree_flatten(tuple(dyn))
        out_tree = []

        def fun_flat(*xs):
            out = fun(*_merge(static, pytree.tree_unflatten(in_tree, xs), static_argnums))
            out_leaves, tree = pytree.tree_flatten(out)
            out_tree[:] = [tree]
            return out_leaves

        fun_flat.__name__ = fun_name(fun)
        if is_eager() and not any(isinstance(a, Tracer) for a in leaves):
            return _tree_out(fun_flat(*leaves), out_tree)
        # Closure-convert: values the function closes over that are traced (e.g. by an
        # enclosing make_jaxpr) become explicit operands, so the primitive never holds a
        # stale tracer; the carried function evaluates the staged jaxpr.
        closed = _stage(fun_flat, leaves)
        (hoisted,), consts = hoist_consts([(closed.jaxpr, closed.consts)])
        body = jaxpr_as_fun(hoisted)
        body.__name__ = fun_flat.__name__
        outs = checkpoint_call_p.bind(*consts, *leaves, fun=body, call_jaxpr=hoisted, **params)
        return pytree.tree_unflatten(out_tree[0], leaf_values(outs))

    return wrapped


remat = checkpoint

# For the sibling modules (remat policies, custom_gradient) that build on these helpers.
bind_call, emit_lin, jvp_of = _bind_call, _emit_lin, _jvp_of


# --- batching (vmap): batch every carried function, with batch axes in front -----------

def _batched(fn_flat, size):
    """``fn_flat`` (flat list in -> flat list out) vmapped over a leading axis."""
    from funcgrad.transforms.batching import batch_flat

    def f(*args):
        return batch_flat(fn_flat, list(args), [0] * len(args), size, lambda i, n: 0)

    f.__name__ = f"vmap({getattr(fn_flat, '__name__', 'fun')})"
    if hasattr(fn_flat, "checkpoint_name"):  # a checkpoint_name tag stays one when batched
        f.checkpoint_name = fn_flat.checkpoint_name
    return f


def _batched_pair(fn, n_first, size):
    """Batch ``fn(first_list, second_list) -> (outs_a, outs_b)``, splitting at n_first."""
    from funcgrad.transforms.batching import batch_flat

    split = []

    def flat(*args):
        a, b = fn(list(args[:n_first]), list(args[n_first:]))
        split[:] = [len(a)]
        return list(a) + list(b)

    def g(first, second):
        outs = batch_flat(flat, list(first) + list(second), [0] * (len(first) + len(second)), size, lambda i, n: 0)
        return outs[: split[0]], outs[split[0]:]

    return g


def _front(args, bdims):
    from funcgrad.core.batch_util import batch_size, bdim_at

    size = batch_size(args, bdims)
    return [bdim_at(x, d, size, 0) for x, d in zip(args, bdims)], size


def _custom_jvp_call_batch(args, bdims, *, fun, call_jaxpr, jvp, num_consts):
    args, size = _front(args, bdims)
    bfun = _batched(fun, size)
    bjvp = _batched_pair(jvp, len(args) - num_consts, size)  # (the rule takes the arguments only)
    outs = custom_jvp_call_p.bind(*args, fun=bfun, call_jaxpr=_stage(bfun, args), jvp=lambda p, t: bjvp(p, t),
                                  num_consts=num_consts)
    return outs, [0] * len(outs)


def _custom_vjp_call_batch(args, bdims, *, fun, call_jaxpr, fwd, bwd, num_consts):
    args, size = _front(args, bdims)
    bfun = _batched(fun, size)
    split = []

    def fwd_flat(*xs):
        out, res = fwd(list(xs))
        split[:] = [len(out)]
        return list(out) + list(res)

    bfwd_all = _batched(fwd_flat, size)

    def bfwd(primals):
        outs = bfwd_all(*primals)
        return outs[: split[0]], outs[split[0]:]

    def bbwd(res, cts):
        return _batched_pair(lambda r, c: (bwd(r, c), []), len(res), size)(res, cts)[0]

    outs = custom_vjp_call_p.bind(*args, fun=bfun, call_jaxpr=_stage(bfun, args), fwd=bfwd, bwd=bbwd,
                                  num_consts=num_consts)
    return outs, [0] * len(outs)


def _checkpoint_call_batch(args, bdims, *, fun, call_jaxpr, **params):
    args, size = _front(args, bdims)
    bfun = _batched(fun, size)
    outs = checkpoint_call_p.bind(*args, fun=bfun, call_jaxpr=_stage(bfun, args), **params)
    return outs, [0] * len(outs)


def _custom_lin_batch(args, bdims, *, num_nonlin, jvp_fn, bwd_fn, out_avals):
    args, size = _front(args, bdims)
    bjvp = _batched_pair(lambda a, b: (jvp_fn(a, b), []), num_nonlin, size)
    bbwd = _batched_pair(lambda a, b: (bwd_fn(a, b), []), num_nonlin, size)
    b_avals = tuple(ShapedArray((size,) + a.shape, a.dtype, a.weak_type) for a in out_avals)
    outs = custom_lin_p.bind(
        *args,
        num_nonlin=num_nonlin,
        jvp_fn=lambda a, b: bjvp(a, b)[0],
        bwd_fn=lambda a, b: bbwd(a, b)[0],
        out_avals=b_avals,
    )
    return outs, [0] * len(outs)


batch_rules[custom_jvp_call_p] = _custom_jvp_call_batch
batch_rules[custom_vjp_call_p] = _custom_vjp_call_batch
batch_rules[checkpoint_call_p] = _checkpoint_call_batch
batch_rules[custom_lin_p] = _custom_lin_batch
