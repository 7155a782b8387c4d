"""Call-like primitives: ``jit_call``, ``custom_jvp_call``, ``custom_vjp_call``,
``checkpoint_call``, ``custom_vmap_call`` and ``custom_lin``.

Each runs a body: a staged closed jaxpr (``jaxpr_params``) or, for the custom-rule
calls and ``custom_lin``, Python functions held in their params. Only the declaration
lives here (name, ``impl``, ``abstract_eval``, which params are sub-jaxprs, ``inline``:
compiled code runs the body in place). Their transform rules are in
``funcgrad/transforms/jit.py`` and ``funcgrad/transforms/custom.py``; lowering inlines
them (``funcgrad/lowering/inline.py``).
"""
from __future__ import annotations

from typing import Callable

from funcgrad.core.interpret import eval_closed_impls, eval_jaxpr
from funcgrad.core.primitive import Primitive

# --- jit_call --------------------------------------------------------------------------------

jit_call_p = Primitive("jit_call", multiple_results=True)
jit_call_p.jaxpr_params = ("jaxpr",)
jit_call_p.inline = True


def _evaluator(closed, name: str) -> Callable:
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


# How an eager ``jit_call`` runs its program: ``executor(closed_jaxpr, name)`` gives a
# callable. ``funcgrad.transforms.jit`` installs compiled code (it owns the compile cache
# and imports lowering, which core must not); the jaxpr evaluator until then.
_executor: list[Callable] = [_evaluator]


def set_jit_executor(executor: Callable) -> None:
    _executor[0] = executor


@jit_call_p.def_impl
def _jit_call_impl(*args, jaxpr, name):
    return _executor[0](jaxpr, name)(*args)


@jit_call_p.def_abstract_eval
def _jit_call_abstract_eval(*avals, jaxpr, name):
    if len(avals) != len(jaxpr.in_avals) or not all(a.same_type(b) for a, b in zip(avals, jaxpr.in_avals)):
        raise TypeError(
            f"jit_call {name}: operands {[a.str_short() for a in avals]} "
            f"do not match {[a.str_short() for a in jaxpr.in_avals]}"
        )
    return list(jaxpr.out_avals)


# --- custom-rule calls: the user's function (``fun``) and its staged jaxpr --------------------

def _call_abstract_eval(*avals, call_jaxpr, **_):
    got = call_jaxpr.in_avals
    if len(got) != len(avals) or not all(a.same_type(b) for a, b in zip(got, avals)):
        raise TypeError(f"custom-rule call: its jaxpr takes {[a.str_short() for a in got]} "
                        f"but is given {[a.str_short() for a in avals]}")
    return call_jaxpr.out_avals


def _call_impl(*args, fun, call_jaxpr, **_):
    # A staged call evaluates its jaxpr: calling ``fun`` would trace its loops again on
    # every evaluation (e.g. an ``odeint`` inside a scan body, once per iteration). No
    # jaxpr (Python control flow on the primals under eager differentiation): ``fun``.
    if call_jaxpr is None:
        return fun(*args)
    return eval_closed_impls(call_jaxpr, *args)


def _call_primitive(name):
    prim = Primitive(name, multiple_results=True)
    prim.impl_takes_python_scalars = True  # the user's function sees weak Python scalars
    prim.jaxpr_params = ("call_jaxpr",)
    prim.inline = True
    prim.def_impl(_call_impl)
    prim.def_abstract_eval(_call_abstract_eval)
    return prim


custom_jvp_call_p = _call_primitive("custom_jvp_call")
custom_vjp_call_p = _call_primitive("custom_vjp_call")
checkpoint_call_p = _call_primitive("checkpoint_call")
# ``custom_batching.custom_vmap``: the function, and its vmap rule in the params (``rule``).
custom_vmap_call_p = _call_primitive("custom_vmap_call")


# --- custom_lin: a linear map given by a forward function and its transpose ---------------
# ``custom_lin(*nonlin, *tangents)`` is linear in ``tangents``; ``jvp_fn`` computes it
# forwards, ``bwd_fn`` gives its transpose. Compiled code inlines a trace of ``jvp_fn``.

custom_lin_p = Primitive("custom_lin", multiple_results=True)
custom_lin_p.inline = True


@custom_lin_p.def_impl
def _custom_lin_impl(*args, num_nonlin, jvp_fn, bwd_fn, out_avals):
    return jvp_fn(list(args[:num_nonlin]), list(args[num_nonlin:]))


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals, num_nonlin, jvp_fn, bwd_fn, out_avals):
    return list(out_avals)
