"""Transposition: a linear program's cotangents, output to input (reverse mode's second half).

Every operation of a linear program (what ``linearize.py`` records) is linear in its
tangent inputs; its other inputs are residuals: constants of the linear map. Walking
the operations in reverse and applying each primitive's ``transpose`` rule (registered
under it in ``core/prims``) to the cotangent of its outputs gives the cotangents of its
linear inputs; cotangents of a value used several times add up. A cotangent may be a
symbolic ``Zero``, and an operation whose outputs got none is skipped.

There is one walker for every form a reverse sweep takes: ``backward_walk`` runs a list
of *records* in reverse, with cotangents kept in a list by integer index. The forms
differ only in how they make the records:

- ``backward_pass`` (a linear jaxpr, from ``linearize_flat`` or a control-flow body):
  numbers the jaxpr's non-constant variables, evaluates the equations that read only
  constants forwards (they are residuals too), and makes a record of each other one;
- the ``LinearTape`` of ``vjp_flat`` (``linearize.py``) records them as it traces;
- the eager tape of an outermost ``grad`` (``eager_vjp.py``) records NumPy cotangent
  rules, and for a primitive without one, the general reverse mode of that primitive.

A record is a tuple ``(kind, rule, out, args, ans, params, linear)``:

- ``kind`` says how ``rule`` is called (``ct`` is the cotangent of the output(s)):
  ``CT_RULE``: ``rule(ct, ans, args, which, **params)``, an eager cotangent rule
  (``which``: the argument positions whose cotangent is wanted);
  ``TRANSPOSE``: ``rule(ct, *args, **params)``, a transpose rule;
  ``PULLBACK``: ``rule(ct)``, a backward function of its own (``args``, ``ans`` and
  ``params`` unused).
- ``out``: the index of the single output, or, for a record with several outputs, a
  tuple of ``(index or None, aval)`` per output: ``ct`` is then a list, ``Zero(aval)``
  for the outputs without a cotangent (``None``: an output the tape does not track).
- ``args``: the residuals the rule reads (for a transpose rule, its arguments with an
  ``UndefinedPrimal`` for each linear input); ``ans``: the primal output, if the rule
  reads it; ``params``: the primitive's params.
- ``linear``: ``(position, index)`` pairs: the cotangent at ``position`` in the rule's
  result belongs to the value numbered ``index``.
"""
from __future__ import annotations

import sys

from funcgrad.core import source_info
from funcgrad.core.ad_util import UndefinedPrimal, Zero, add_tangents
from funcgrad.core.ir import Jaxpr, Literal
from funcgrad.core.primitive import missing_rule, transpose_rules

# Record kinds: how ``backward_walk`` calls a record's rule (see the module docstring).
CT_RULE, TRANSPOSE, PULLBACK = 0, 1, 2


# Context-manager factories entered around every walk; ``funcgrad.viz`` uses one to tell
# which staged equations a grad program's backward pass recorded. Empty otherwise.
walk_observers: list = []


def backward_walk(records, count, out_index, cts_out, add=add_tangents) -> list:
    """The reverse-mode walker (``_backward_walk``), inside the observers if any. Its
    frame anchors the search for the user's line of what the rules stage (``source_info.
    anchored``: the search stops here instead of walking up the whole transform stack)."""
    previous = source_info.anchored(sys._getframe(0))
    try:
        if walk_observers:
            with walk_observers[-1]():
                return _backward_walk(records, count, out_index, cts_out, add)
        return _backward_walk(records, count, out_index, cts_out, add)
    finally:
        source_info.anchor = previous


def _backward_walk(records, count, out_index, cts_out, add=add_tangents) -> list:
    """Run ``records`` in reverse, emptying the list: the cotangents ``cts_out`` of the
    values numbered ``out_index`` (``None``: not tracked) -> the list of the ``count``
    values' cotangents by index, ``None`` where a value got none.

    Each record is freed once its rule has run, and each cotangent once it is used, so
    residuals and cotangents go as early as they can. ``add`` sums two cotangents of one
    value: ``add_tangents`` by default, since cotangents may be tracers of an enclosing
    transform or ``Zero``; the eager tape passes ``+`` for its NumPy arrays.
    """
    cts = [None] * count
    for k, ct in zip(out_index, cts_out):
        if k is not None and ct is not None and type(ct) is not Zero:
            prev = cts[k]
            cts[k] = ct if prev is None else add(prev, ct)
    pop = records.pop
    while records:
        kind, rule, out, args, ans, params, linear = pop()
        if type(out) is int:
            ct = cts[out]
            if ct is None:
                continue
            cts[out] = None
        else:
            ct = _take_cts(cts, out)
            if ct is None:
                continue
        if kind == CT_RULE:
            got = rule(ct, ans, args, tuple([i for i, _ in linear]), **params)
        elif kind == TRANSPOSE:
            got = rule(ct, *args, **params)
        else:
            got = rule(ct)
        for i, k in linear:
            c = got[i]
            if c is not None and type(c) is not Zero:
                prev = cts[k]
                cts[k] = c if prev is None else add(prev, c)
    return cts


def _take_cts(cts, out) -> list | None:
    """The cotangents of a several-output record (``Zero`` where an output has none),
    taken out of ``cts``; ``None`` if no output has one."""
    got, found = [], False
    for k, aval in out:
        ct = None if k is None else cts[k]
        if ct is None:
            got.append(Zero(aval))
        else:
            cts[k] = None
            got.append(ct)
            found = True
    return got if found else None


def transpose_rule_of(prim):
    """``prim``'s transpose rule. Without one, a rule that raises the missing-rule error:
    only a record that the walk reaches with a cotangent needs a rule."""
    rule = transpose_rules.get(prim)
    if rule is None:
        def rule(ct, *args, **params):
            raise missing_rule("transpose", prim)
    return rule


def backward_pass(jaxpr: Jaxpr, consts, cts_out) -> list:
    """Transpose a linear jaxpr: cotangents of the outputs -> of the inputs.

    Every equation of a linearized jaxpr that reads a non-constant input is linear in
    it; constvars, literals and equations computed from them alone are the residuals.
    """
    const_env = {id(v): c for v, c in zip(jaxpr.constvars, consts)}
    linear_eqns = _eval_residual_eqns(jaxpr.eqns, const_env)
    index: dict[int, int] = {}  # id(var) -> its number, for the non-constant variables

    def number(v) -> int:
        k = index.get(id(v))
        if k is None:
            k = index[id(v)] = len(index)
        return k

    in_index = [number(v) for v in jaxpr.invars]
    records = [_eqn_record(eqn, const_env, number) for eqn in linear_eqns]
    out_index = [None if type(v) is Literal or id(v) in const_env else number(v) for v in jaxpr.outvars]
    cts = backward_walk(records, len(index), out_index, cts_out)
    return [Zero(v.aval) if cts[k] is None else cts[k] for v, k in zip(jaxpr.invars, in_index)]


def _eval_residual_eqns(eqns, const_env) -> list:
    """Evaluate, forwards, the equations with no linear input (instantiated zero tangents,
    or residual work a rule put in its linear body, e.g. a forward loop that records a
    tape): their results are constants of the linear map (added to ``const_env``), not
    things to transpose. Returns the other equations."""
    linear_eqns = []
    for eqn in eqns:
        if all(type(a) is Literal or id(a) in const_env for a in eqn.inputs):
            ins = [a.val if type(a) is Literal else const_env[id(a)] for a in eqn.inputs]
            out = eqn.primitive.bind(*ins, **eqn.params)
            for v, o in zip(eqn.outputs, out if eqn.primitive.multiple_results else [out]):
                const_env[id(v)] = o
        else:
            linear_eqns.append(eqn)
    return linear_eqns


def _eqn_record(eqn, const_env, number) -> tuple:
    """The walker's record of a linear equation: its transpose rule, with the residuals
    read from ``const_env`` and its variables numbered by ``number``."""
    args, linear = [], []
    for i, a in enumerate(eqn.inputs):
        if type(a) is Literal:
            args.append(a.val)
        elif id(a) in const_env:
            args.append(const_env[id(a)])
        else:
            args.append(UndefinedPrimal(a.aval))
            linear.append((i, number(a)))
    if eqn.primitive.multiple_results:
        out = tuple([(number(v), v.aval) for v in eqn.outputs])
    else:
        out = number(eqn.outputs[0])
    return (TRANSPOSE, transpose_rule_of(eqn.primitive), out, args, None, eqn.params, linear)


__all__ = ["backward_walk", "backward_pass", "transpose_rule_of", "CT_RULE", "TRANSPOSE", "PULLBACK"]
