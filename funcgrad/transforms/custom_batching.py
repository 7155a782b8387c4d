"""``custom_vmap`` (a function with its own batching rule) and ``sequential_vmap``, as
``jax.custom_batching``; public as ``funcgrad.custom_batching``.

A call stages one ``custom_vmap_call`` equation (``core/prims/calls.py``) holding the
function's jaxpr and the rule. Its batch rule (here) calls the user's rule with the batch
size, which arguments are batched, and the arguments with their batch axis first; its
JVP differentiates the function itself (as JAX's does: the rule is for batching only), so
``grad`` works too; compiled code runs the function's jaxpr (the call is inlined).
"""
from __future__ import annotations

from funcgrad.core import pytree
from funcgrad.core.batch_util import batch_size, moveaxis
from funcgrad.core.interpret import eval_jaxpr, jaxpr_as_fun
from funcgrad.core.primitive import allow_missing, batch_rules, jvp_rules
from funcgrad.core.prims.calls import custom_vmap_call_p
from funcgrad.core.staging import hoist_consts, trace_to_jaxpr
from funcgrad.core.trace import Tracer, get_aval_any, is_eager
from funcgrad.core.wrapping import copy_metadata, fun_name
from funcgrad.transforms.jvp import jvp_flat

__all__ = ["custom_vmap", "sequential_vmap"]

allow_missing("transpose", custom_vmap_call_p, "not linear: its JVP is the function's own")


class custom_vmap:  # noqa: N801 - JAX's name
    """A function with a custom batching rule, as ``jax.custom_batching.custom_vmap``.

    ``rule(axis_size, in_batched, *args) -> (out, out_batched)``: ``in_batched`` has one
    entry per argument (a pytree of bools like it), the batched arguments have their batch
    axis first, and ``out_batched`` (a pytree of bools like ``out``) says which outputs have
    it. Outside ``vmap`` the function runs as it is; ``jvp``/``grad`` differentiate it.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> @fg.custom_batching.custom_vmap
    ... def f(x):
    ...     return fnp.sin(x)
    >>> @f.def_vmap
    ... def f_rule(axis_size, in_batched, x):
    ...     return fnp.cos(x), in_batched[0]
    >>> f(0.0), fg.vmap(f)(np.zeros(2))
    (Array(0.), Array([1., 1.]))
    """

    def __init__(self, fun):
        if not callable(fun):
            raise TypeError(f"custom_vmap: expected a function, got {type(fun).__name__}")
        self.fun = fun
        self.vmap_rule = None
        copy_metadata(self, fun)

    def def_vmap(self, rule):
        """Register ``rule`` (see the class); returns it, so it works as a decorator."""
        self.vmap_rule = rule
        return rule

    def __call__(self, *args, **kwargs):
        name = fun_name(self.fun)
        if kwargs:
            raise TypeError(f"custom_vmap function {name}: pass arguments positionally")
        if self.vmap_rule is None:
            raise AttributeError(f"custom_vmap function {name} has no vmap rule: define one with @{name}.def_vmap")
        leaves, in_tree = pytree.tree_flatten(args)
        if is_eager() and not any(isinstance(x, Tracer) for x in leaves):
            return self.fun(*args)
        out_tree = []

        def fun_flat(*xs):
            out_leaves, tree = pytree.tree_flatten(self.fun(*pytree.tree_unflatten(in_tree, xs)))
            out_tree[:] = [tree]
            return out_leaves

        jaxpr, consts = trace_to_jaxpr(fun_flat, [get_aval_any(x) for x in leaves])
        (closed,), hoisted = hoist_consts([(jaxpr, consts)])  # (a closure over traced values: operands)
        rule = _flat_rule(self.vmap_rule, in_tree, out_tree[0], name)
        outs = custom_vmap_call_p.bind(*hoisted, *leaves, fun=jaxpr_as_fun(closed), call_jaxpr=closed, rule=rule,
                                       num_consts=len(hoisted))
        return pytree.tree_unflatten(out_tree[0], outs)


def _flat_rule(rule, in_tree, out_tree, name):
    def flat(axis_size, in_batched, *xs):
        args = pytree.tree_unflatten(in_tree, xs)
        batched = list(pytree.tree_unflatten(in_tree, in_batched))
        out, out_batched = rule(axis_size, batched, *args)
        out_leaves, tree = pytree.tree_flatten(out)
        if tree != out_tree:
            raise TypeError(f"custom_vmap {name}: the vmap rule returned a {tree}, the function a {out_tree}")
        flags = [bool(b) for b in out_tree.flatten_up_to(out_batched)]
        return out_leaves, flags
    return flat


def _batch(args, bdims, *, fun, call_jaxpr, rule, num_consts):
    if any(d is not None for d in bdims[:num_consts]):
        raise NotImplementedError("custom_vmap: the function closes over a value this vmap batches; pass it as "
                                  "an argument")
    size = batch_size(args, bdims)
    xs = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args[num_consts:], bdims[num_consts:])]
    outs, flags = rule(size, [d is not None for d in bdims[num_consts:]], *xs)
    for i, (o, b, want) in enumerate(zip(outs, flags, call_jaxpr.out_avals)):
        shape = get_aval_any(o).shape
        if shape != ((size,) + want.shape if b else want.shape):
            raise ValueError(f"custom_vmap: output {i} of the vmap rule has shape {shape}; the function's is "
                             f"{want.shape}, and out_batched says {'with' if b else 'without'} a batch axis of {size}")
    return list(outs), [0 if b else None for b in flags]


def _jvp(primals, tangents, *, fun, call_jaxpr, rule, num_consts):
    def body(*xs):
        return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs)

    return jvp_flat(body, list(primals), list(tangents))


batch_rules[custom_vmap_call_p] = _batch
jvp_rules[custom_vmap_call_p] = _jvp


def sequential_vmap(f):
    """``f`` batched by a loop: under ``vmap`` it runs once per example (``lax.map``) instead
    of on the whole batch (for functions that cannot be vectorised, e.g. a callback).

    >>> import funcgrad as fg
    >>> fg.vmap(fg.custom_batching.sequential_vmap(lambda x: x * 2))(np.arange(3.0))
    Array([0., 2., 4.])
    """
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        from funcgrad.lax.scans import map as lax_map

        flat_batched, _ = pytree.tree_flatten(in_batched)
        leaves, tree = pytree.tree_flatten(args)
        batched_leaves = [x for x, b in zip(leaves, flat_batched) if b]

        def one(batched):
            it = iter(batched)
            full = [next(it) if b else x for x, b in zip(leaves, flat_batched)]
            return f.fun(*pytree.tree_unflatten(tree, full))

        out = lax_map(one, batched_leaves)
        return out, pytree.tree_map(lambda _: True, out)

    return f

