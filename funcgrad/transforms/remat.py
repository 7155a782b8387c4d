"""Rematerialisation policies for ``checkpoint(fun, policy=...)`` (JAX's
``jax.checkpoint_policies``) and ``checkpoint_name``.

A policy is ``policy(prim, *avals, **params) -> bool``: may the output of this
equation be saved for the backward pass? ``checkpoint`` without a policy saves only
its inputs (see ``funcgrad/transforms/custom.py``). With one, its JVP rule splits the
checkpointed program like JAX's remat partial evaluation:

1. ``linearize_jaxpr`` gives the forward program F (inputs -> outputs + residuals, the
   values the linear part reads) and the linear program L (residuals + tangents ->
   output tangents).
2. The outputs of F's saveable equations are cut out as inputs of a *recompute* program
   R (inputs + saved values -> residuals); dead-code elimination of R keeps only the
   saved values R really reads.
3. The forward pass evaluates F up to the outputs and those saved values; the backward
   pass (a ``custom_lin`` transpose) evaluates R -- the unsaved residuals, never the
   saved equations -- then transposes L.

So a saved value is computed once; everything else the backward pass needs is
recomputed from the inputs and the saved values. Policies look at the top-level
equations of the checkpointed function (a loop or branch counts as one equation).
``prevent_cse`` is accepted for JAX compatibility: ``jit``'s CSE may still merge a
recomputation with the forward value it repeats (same result, more memory).
"""
from __future__ import annotations

from funcgrad.core.ad_util import instantiate
from funcgrad.core.interpret import jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr, Jaxpr
from funcgrad.core.prims.calls import custom_jvp_call_p
from funcgrad.core.prims.dot import dot_general_p
from funcgrad.core.wrapping import fun_name
from funcgrad.transforms.jaxpr_ad import dce_jaxpr, linearize_jaxpr
from funcgrad.transforms.transpose import backward_pass

__all__ = ["checkpoint_name", "checkpoint_policies"]


# --- policies ----------------------------------------------------------------------------------

def everything_saveable(prim, *avals, **params) -> bool:
    """Save every intermediate (no recomputation: like no checkpoint at all)."""
    return True


def nothing_saveable(prim, *avals, **params) -> bool:
    """Save nothing but the inputs: recompute everything (``checkpoint``'s default)."""
    return False


def dots_saveable(prim, *avals, **params) -> bool:
    """Save the results of matrix products (``dot_general``); recompute the rest."""
    return prim is dot_general_p


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *avals, **params) -> bool:
    """Save the results of matrix products without batch dimensions."""
    if prim is not dot_general_p:
        return False
    (_, (lhs_batch, rhs_batch)) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def _name_of(prim, params):
    return getattr(params.get("fun"), "checkpoint_name", None) if prim is custom_jvp_call_p else None


def save_only_these_names(*names):
    """Save only the values tagged with ``checkpoint_name(x, name)`` for these names."""
    wanted = frozenset(names)

    def policy(prim, *avals, **params):
        return _name_of(prim, params) in wanted

    return policy


def save_anything_except_these_names(*names):
    """Save every value except those tagged with these names."""
    unwanted = frozenset(names)

    def policy(prim, *avals, **params):
        return _name_of(prim, params) not in unwanted

    return policy


def save_any_names_but_these(*names):
    """Save every tagged value except those with these names (untagged: recomputed)."""
    unwanted = frozenset(names)

    def policy(prim, *avals, **params):
        name = _name_of(prim, params)
        return name is not None and name not in unwanted

    return policy


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""
    def policy(prim, *avals, **params):
        return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)

    return policy


class checkpoint_policies:  # noqa: N801 - a namespace, spelled as jax.checkpoint_policies
    """The policies of ``checkpoint(fun, policy=...)``, as ``jax.checkpoint_policies``."""

    everything_saveable = staticmethod(everything_saveable)
    nothing_saveable = staticmethod(nothing_saveable)
    dots_saveable = staticmethod(dots_saveable)
    checkpoint_dots = staticmethod(dots_saveable)
    dots_with_no_batch_dims_saveable = staticmethod(dots_with_no_batch_dims_saveable)
    checkpoint_dots_with_no_batch_dims = staticmethod(dots_with_no_batch_dims_saveable)
    save_only_these_names = staticmethod(save_only_these_names)
    save_anything_except_these_names = staticmethod(save_anything_except_these_names)
    save_any_names_but_these = staticmethod(save_any_names_but_these)
    save_from_both_policies = staticmethod(save_from_both_policies)


# --- checkpoint_name: a tag that survives into the jaxpr -------------------------------------

_tags: dict = {}


def _tag(name):
    """The identity function for ``name``, carried by a ``custom_jvp_call`` equation (its
    ``fun`` param names it). A call primitive already has every rule (inlined when
    compiled, so the tag costs nothing under ``jit``): no new primitive for a label."""
    tag = _tags.get(name)
    if tag is None:
        def tag(*xs):
            return list(xs)

        def tag_jvp(primals, tangents):  # re-tag the primal, so linearized programs keep the name
            return _bind_tag(tag, list(primals)), list(tangents)

        tag.__name__ = tag.__qualname__ = f"checkpoint_name[{name}]"
        tag.checkpoint_name = name
        tag.jvp = tag_jvp
        tag = _tags[name] = tag
    return tag


def _bind_tag(tag, leaves):
    from funcgrad.transforms.custom import bind_call

    return bind_call(custom_jvp_call_p, tag, leaves, tag.__name__, jvp=tag.jvp)


def checkpoint_name(x, name):
    """``x`` (any pytree), tagged ``name`` for ``save_only_these_names`` and friends.

    >>> def f(w, x):
    ...     h = checkpoint_name(fnp.sin(w @ x), "hidden")
    ...     return fnp.sum(fnp.cos(h))
    >>> w, x = fnp.array([[1.0, 0.0], [0.0, 2.0]]), fnp.array([0.5, 1.0])
    >>> fg.grad(fg.checkpoint(f, policy=checkpoint_policies.save_only_these_names("hidden")))(w, x)
    Array([[-0.20240106, -0.40480212],
           [ 0.16418498,  0.32836996]])
    """
    from funcgrad.core import pytree

    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: argument name must be a str, got {type(name).__name__}")
    leaves, tree = pytree.tree_flatten(x)
    if not leaves:
        return x
    return pytree.tree_unflatten(tree, _bind_tag(_tag(name), leaves))


# --- the JVP rule of checkpoint_call with a policy ---------------------------------------------

def _split_by_policy(fwd: ClosedJaxpr, n_out: int, policy):
    """(F': inputs -> outputs + saved values, R: inputs + saved values -> residuals)."""
    j = fwd.jaxpr
    candidates = []
    for e in j.eqns:
        if e.outputs and policy(e.primitive, *[x.aval for x in e.inputs], **e.params):
            candidates.extend(e.outputs)
    cut = {id(v) for v in candidates}
    kept = [e for e in j.eqns if not any(id(o) in cut for o in e.outputs)]
    n_in = len(j.invars)
    recompute, used = dce_jaxpr(Jaxpr(j.constvars, list(j.invars) + candidates, kept, j.outvars[n_out:]))
    saved = [v for v, u in zip(candidates, used[n_in:]) if u]
    recompute = Jaxpr(j.constvars, list(j.invars) + saved, recompute.eqns, recompute.outvars)
    forward, _ = dce_jaxpr(Jaxpr(j.constvars, j.invars, j.eqns, list(j.outvars[:n_out]) + saved))
    return ClosedJaxpr(forward, fwd.consts), ClosedJaxpr(recompute, fwd.consts), len(saved)


def policy_checkpoint_jvp(primals, tangents, *, fun, call_jaxpr, policy):
    """JVP of ``checkpoint_call`` under ``policy`` (see the module docstring)."""
    from funcgrad.core.ad_util import tangent_aval
    from funcgrad.transforms.custom import emit_lin, jvp_of

    n_out = len(call_jaxpr.out_avals)
    fwd, lin, res_avals = linearize_jaxpr(call_jaxpr)
    forward, recompute, n_saved = _split_by_policy(fwd, n_out, policy)
    outs_saved = jaxpr_as_fun(forward)(*primals)
    outs, saved = list(outs_saved[:n_out]), list(outs_saved[n_out:])
    n_res, n_in = len(res_avals), len(primals)
    lj = lin.jaxpr
    linear = Jaxpr(lj.invars[:n_res], lj.invars[n_res:], lj.eqns, lj.outvars)

    def bwd_fn(nonlin, cts):
        residuals = jaxpr_as_fun(recompute)(*nonlin)  # recomputes only what was not saved
        return [instantiate(c) for c in backward_pass(linear, residuals, cts)]

    forward_jvp = jvp_of(fun)

    def jvp_fn(nonlin, t):
        return forward_jvp(nonlin[:n_in], t)

    bwd_fn.__name__ = f"recompute({fun_name(fun)}, {n_saved} saved)"
    return outs, emit_lin(list(primals) + saved, list(tangents), jvp_fn, bwd_fn,
                          [tangent_aval(a) for a in call_jaxpr.out_avals])
