"""Structured control flow primitives: ``cond``, ``while``, ``scan``.

Each carries closed sub-jaxprs (``jaxpr_params``). Only the declaration lives here:
name, NumPy ``impl`` (the jaxpr evaluator over the sub-jaxprs) and ``abstract_eval``.
Their transform rules rewrite the sub-jaxprs with the interpreters, so they live beside
them in ``funcgrad/transforms/control_flow/``; their lower rules in
``funcgrad/lowering/control_flow.py``.

Values of non-array types (registered by a module outside core) may flow through a
scan's ``xs``/``ys``: ``stack_rules`` says how the eager ``impl`` stacks them.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from funcgrad.core.interpret import eval_closed_impls
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.primitive import Primitive


def describe_mismatch(what, names, trees, avals_lists):
    """Why two functions' outputs disagree (structure, then leaf types), or None."""
    if trees[0] != trees[1]:
        return f"{what}: {names[0]} returns structure {trees[0]} but {names[1]} returns {trees[1]}"
    for i, (a, b) in enumerate(zip(*avals_lists)):
        if not a.same_type(b):
            return f"{what}: output leaf {i} is {a.str_short()} in {names[0]} but {b.str_short()} in {names[1]}"
    return None


def check_count(op: str, name: str, value, lo: int, hi: int) -> int:
    """A count param (``num_consts``...): an int in ``[lo, hi]`` (a crafted program
    must not make the rules slice their operands wrongly)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise TypeError(f"{op}: {name} must be an int in [{lo}, {hi}], got {value!r}")
    return int(value)


def check_sub_inputs(op: str, what: str, sub, avals) -> None:
    """A sub-jaxpr's declared inputs must be exactly the values it is given (compiled
    code lays its buffers out by the operands' types: a body that declares a larger
    input would read past the end of the buffer it gets)."""
    got = list(sub.in_avals)
    if len(got) != len(avals) or not all(a.same_type(b) for a, b in zip(got, avals)):
        raise TypeError(f"{op}: {what} takes {[a.str_short() for a in got]} "
                        f"but is given {[a.str_short() for a in avals]}")


def check_closed(op: str, name: str, sub) -> None:
    if not isinstance(sub, ClosedJaxpr):
        raise TypeError(f"{op}: param {name} must be a closed jaxpr, got {type(sub).__name__}")


# --- cond ------------------------------------------------------------------------------------

cond_p = Primitive("cond", multiple_results=True)
cond_p.jaxpr_params = ("branches",)


@cond_p.def_impl
def _cond_impl(index, *operands, branches):
    i = int(np.clip(int(index), 0, len(branches) - 1))
    return eval_closed_impls(branches[i], *operands)


@cond_p.def_abstract_eval
def _cond_abstract_eval(index, *operands, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond: index must be an int32 scalar, got {index.str_short()}")
    if not isinstance(branches, tuple) or not branches:
        raise TypeError(f"cond: branches must be a non-empty tuple of closed jaxprs, got {type(branches).__name__}")
    for k, br in enumerate(branches):
        check_closed("cond", f"branches[{k}]", br)
        if len(br.in_avals) != len(operands) or not all(a.same_type(b) for a, b in zip(br.in_avals, operands)):
            raise TypeError(
                f"cond: branch {k} takes {[a.str_short() for a in br.in_avals]} "
                f"but operands are {[a.str_short() for a in operands]}"
            )
        msg = describe_mismatch(
            "cond", ("branch 0", f"branch {k}"), (None, None), (branches[0].out_avals, br.out_avals)
        )
        if msg or len(br.out_avals) != len(branches[0].out_avals):
            raise TypeError(msg or "cond: branches return different numbers of outputs")
    return [a.strip_weak_type() for a in branches[0].out_avals]


# --- while -----------------------------------------------------------------------------------

while_p = Primitive("while", multiple_results=True)
while_p.jaxpr_params = ("cond_jaxpr", "body_jaxpr")


def while_parts(args, cond_nconsts, body_nconsts):
    """(cond consts, body consts, carry) of a while-like equation's operands."""
    return args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts], list(args[cond_nconsts + body_nconsts:])


@while_p.def_impl
def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = while_parts(args, cond_nconsts, body_nconsts)
    while bool(eval_closed_impls(cond_jaxpr, *cc, *carry)[0]):
        carry = eval_closed_impls(body_jaxpr, *bc, *carry)
    return carry


def check_while(op, avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """(carry avals, the body's outputs after the carry) of a while-like equation, once
    its sub-jaxprs are checked against its operands."""
    check_closed(op, "cond_jaxpr", cond_jaxpr)
    check_closed(op, "body_jaxpr", body_jaxpr)
    nc = check_count(op, "cond_nconsts", cond_nconsts, 0, len(avals))
    nb = check_count(op, "body_nconsts", body_nconsts, 0, len(avals) - nc)
    cc, bc, carry = while_parts(avals, nc, nb)
    check_sub_inputs(op, "cond_jaxpr", cond_jaxpr, list(cc) + carry)
    check_sub_inputs(op, "body_jaxpr", body_jaxpr, list(bc) + carry)
    preds = cond_jaxpr.out_avals
    if len(preds) != 1 or preds[0].shape != () or preds[0].dtype != np.bool_:
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, got {[a.str_short() for a in preds]}")
    outs = body_jaxpr.out_avals
    if len(outs) < len(carry):
        raise TypeError(f"{op}: the body returns {len(outs)} values for a carry of {len(carry)}")
    for k, (a, b) in enumerate(zip(carry, outs)):
        if not a.same_type(b):
            raise TypeError(
                f"while_loop: carry leaf {k} enters the body as {a.str_short()} but leaves as {b.str_short()}"
            )
    return carry, outs[len(carry):]


@while_p.def_abstract_eval
def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    carry, extra = check_while("while", avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
    if extra:
        raise TypeError(f"while: the body returns {len(extra)} values more than the carry")
    return [a.strip_weak_type() for a in carry]


# --- scan ------------------------------------------------------------------------------------

scan_p = Primitive("scan", multiple_results=True)
scan_p.jaxpr_params = ("jaxpr",)

# aval type -> ``stack(values, stacked_aval)``: how the eager scan stacks per-iteration
# ``ys`` that are not arrays. The stacked value is indexed with ``[i]`` when scanned over.
stack_rules: dict[type, Callable] = {}


def stacked_aval(aval, n):
    """Aval of ``n`` values of type ``aval`` stacked on a new leading axis."""
    return aval.update(shape=(n,) + aval.shape)


def unstacked_aval(aval):
    return aval.update(shape=aval.shape[1:])


def _stack(values, aval, length):
    rule = stack_rules.get(type(aval))
    if rule is not None:
        return rule(values, stacked_aval(aval, length))
    if length == 0:
        return np.empty((0,) + aval.shape, aval.dtype)
    return np.stack([np.asarray(v, aval.dtype) for v in values])


def _index(x, i):
    # Arrays through NumPy; stacks of other value types by their own indexing.
    return np.asarray(x)[i] if isinstance(x, (np.ndarray, np.generic)) else x[i]


@scan_p.def_impl
def _scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    consts, carry, xs = args[:num_consts], list(args[num_consts:num_consts + num_carry]), args[num_consts + num_carry:]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [[None] * length for _ in y_avals]
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        out = eval_closed_impls(jaxpr, *consts, *carry, *[_index(x, i) for x in xs])
        carry = out[:num_carry]
        for k, y in enumerate(out[num_carry:]):
            ys[k][i] = y
    return list(carry) + [_stack(v, a, length) for v, a in zip(ys, y_avals)]


@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse, linear=None):
    check_closed("scan", "jaxpr", jaxpr)
    num_consts = check_count("scan", "num_consts", num_consts, 0, len(avals))
    num_carry = check_count("scan", "num_carry", num_carry, 0, len(avals) - num_consts)
    length = check_count("scan", "length", length, 0, 2 ** 62)
    if not isinstance(reverse, bool) or not (linear is None or isinstance(linear, tuple)):
        raise TypeError(f"scan: reverse must be a bool and linear None or a tuple, got {reverse!r}, {linear!r}")
    consts, carry, xs = avals[:num_consts], avals[num_consts:num_consts + num_carry], avals[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan: scanned input {x.str_short()} must have leading dimension {length}")
    expect = list(consts) + list(carry) + [unstacked_aval(x) for x in xs]
    if len(expect) != len(jaxpr.in_avals) or not all(a.same_type(b) for a, b in zip(expect, jaxpr.in_avals)):
        raise TypeError(
            "scan: body inputs "
            + str([a.str_short() for a in jaxpr.in_avals])
            + " do not match operands "
            + str([a.str_short() for a in expect])
        )
    outs = jaxpr.out_avals
    if len(outs) < num_carry:
        raise TypeError(f"scan: the body returns {len(outs)} values for a carry of {num_carry}")
    for k, (a, b) in enumerate(zip(carry, outs[:num_carry])):
        if not a.same_type(b):
            raise TypeError(f"scan: carry leaf {k} enters the body as {a.str_short()} but leaves as {b.str_short()}")
    return [a.strip_weak_type() for a in outs[:num_carry]] + [stacked_aval(a, length) for a in outs[num_carry:]]
