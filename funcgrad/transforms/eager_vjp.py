"""Eager reverse mode: ``grad``/``value_and_grad`` with no outer transform, autograd style.

The general reverse mode (``ad.vjp_flat``) runs every primitive's JVP rule with the
tangents recorded on a linear tape, then transposes the tape. It works under any
enclosing transform, but pays about three Python dispatches per primitive: the JVP
rule, the recorded tangent operation(s), and their transposes.

When ``grad`` is the outermost transform (nothing below it but the eager interpreter,
nothing staging), every primal is a concrete NumPy value and the cotangents will be
too. Then a primitive needs only its value now and a *cotangent rule* later:
``rule(ct, ans, primals, which, **params) -> [cotangent or None per primal]``, where
``which`` lists the positions whose cotangent is wanted. That is what this module does:
``EagerTape`` computes each primitive with its NumPy impl, records (rule, residuals),
and ``backward`` walks the records in reverse.

The cotangent rule is the primitive's ``eager_vjp`` rule, registered in its block
(``core/primitive.py`` documents the table; one lookup, ``eager_vjp_rules.get(prim)``):

- hand-written NumPy (``defvjp_eager``) for the primitives of typical programs
  (arithmetic, tanh/exp/log, matmul, broadcasts, reductions, selects), computing exactly
  what the general path's transpose rules compute, without re-validating;
- derived at registration from the ``defjvp`` partials of elementwise primitives or from
  the transpose rule of linear ones (``core/ad_util.py``);
- ``NO_EAGER_RECORD`` for ``defjvp_zero`` primitives (comparisons, floor, sign, argmax,
  ...): computed, not recorded;
- none (allow-listed, with the reason, in ``ALLOWED_MISSING["eager_vjp"]``: control flow,
  custom rules, linear algebra, jit calls, ...): the general reverse mode applied to that
  one primitive (``ad.vjp_flat``), so every primitive works here exactly as it does under
  ``vjp``.

Correctness is pinned by ``tests/test_eager_vjp.py``, which runs every op-table row
through both paths and compares values and dtypes, and by the reviewer-written
``tests/test_eager_vjp_adversarial.py``.

Outer transforms are not supported *by design*: the rules use NumPy directly, so they are
not differentiable or batchable. ``grad(grad(f))`` still works: the inner ``grad`` sees an
active transform and takes the general path, and its primitives reach this tape as
ordinary primitives on concrete values.
"""
from __future__ import annotations

import contextlib

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, tangent_aval
from funcgrad.core.primitive import AVALS, NO_EAGER_RECORD, VALUES, eager_vjp_rules
from funcgrad.core.trace import (
    Trace,
    Tracer,
    _eager_bind,
    full_raise,
    get_aval_any,
    is_eager,
    pop_main,
    push_main,
)

# Set to False to send every eager grad through the general reverse mode (tests compare
# the two).
ENABLED = True

_PY_SCALARS = (bool, int, float)

# Given a primitive, its eager cotangent rule (``rule.residuals``, ``rule.zero_if``), or
# ``NO_EAGER_RECORD``, or None (the general path): one table lookup per primitive.
_eager_rule = eager_vjp_rules.get


@contextlib.contextmanager
def disabled():
    """Within this block ``grad`` takes the general reverse mode (tests compare the two;
    also a debugging aid)."""
    global ENABLED
    prev, ENABLED = ENABLED, False
    try:
        yield
    finally:
        ENABLED = prev


def usable() -> bool:
    """True when a ``grad`` starting now may use the eager tape."""
    return ENABLED and is_eager()


class EagerTracer(Tracer):
    """A differentiable value on the eager tape: its concrete value and its index."""

    __slots__ = ("primal", "index", "aval")  # a plain ``aval`` slot shadows Tracer.aval

    def __init__(self, trace, primal, index):
        self._trace = trace
        self.primal = primal
        self.index = index
        self.aval = get_aval_any(primal)

    def to_concrete_value(self):
        return self.primal


class EagerTape(Trace):
    """Computes primitives on concrete values and records how to send cotangents back.

    A record is ``(rule, index, primals, ans, params, linear)``: ``linear`` pairs each
    argument position holding a tape value with that value's index; the output is the
    value numbered ``index``. Fallback records (general reverse mode of one primitive)
    have ``rule is None`` and keep their output indices in ``index`` and the backward
    function in ``ans``.
    """

    __slots__ = ("count",)
    handles_raw_args = True  # constants stay plain values; outputs need no lowering

    def __init__(self, main):
        super().__init__(main)
        self.count = 0

    def pure(self, val):
        return val

    lift = pure

    def process_primitive(self, prim, args, params):
        primals = list(args)
        linear = []
        scalars = False
        for i, a in enumerate(args):
            if type(a) is EagerTracer:  # bind checked it is alive, so it is ours
                primals[i] = a.primal
                linear.append((i, a.index))
            elif type(a) in _PY_SCALARS:
                scalars = True
        rule = _eager_rule(prim)
        if rule is None:  # the general path (Python scalars stay weakly typed for its JVP rule)
            return self._fallback(prim, primals, linear, params)
        if scalars:  # the rules read NumPy values
            primals = [np.asarray(x) if type(x) in _PY_SCALARS else x for x in primals]
        ans = _eager_bind(prim, primals, params)
        if rule is NO_EAGER_RECORD or ans.dtype.kind != "f":
            return ans
        zero_if = rule.zero_if
        if zero_if is not None and zero_if([i for i, _ in linear], params):
            return ans  # no traced operand has a tangent here: a constant, like the general path
        index = self.count
        self.count = index + 1
        # Keep only the residuals the rule reads, so large intermediates are freed (and
        # their memory reused) during the forward pass, as in hand-written NumPy.
        keep_primals, keep_ans = rule.residuals
        if keep_primals is not VALUES:
            primals = [get_aval_any(x) for x in primals] if keep_primals is AVALS else None
        self.main.payload.append((rule, index, primals, ans if keep_ans else None, params, linear))
        return EagerTracer(self, ans, index)

    def _fallback(self, prim, primals, linear, params):
        """One primitive through the general reverse mode (its JVP rule + transposes)."""
        from funcgrad.transforms.ad import vjp_flat

        positions = [i for i, _ in linear]

        def one_prim(*lin):
            args = list(primals)
            for i, v in zip(positions, lin):
                args[i] = v
            out = prim.bind(*args, **params)
            return out if prim.multiple_results else [out]

        outs, out_avals, backward, nonzero = vjp_flat(one_prim, [primals[i] for i in positions], report_nonzero=True)
        indices, results = [], []
        for o, aval, nz in zip(outs, out_avals, nonzero):
            if nz:
                indices.append(self.count)
                results.append(EagerTracer(self, o, self.count))
                self.count += 1
            else:
                indices.append(None)
                results.append(o)
        self.main.payload.append((None, indices, out_avals, backward, None, linear))
        return results if prim.multiple_results else results[0]


def grad_call(fun, args, kwargs, nums, p_leaves, p_tree, in_avals, has_aux):
    """The body of an eager ``value_and_grad`` call: runs ``fun`` with the leaves of the
    arguments ``nums`` on the tape. Returns (output, aux, ``backward(ct) -> gradient
    leaves``); the caller checks the output. Only valid when ``usable()``; every leaf in
    ``p_leaves`` must be differentiable (the caller checked)."""
    records: list = []
    main = push_main(EagerTape, records)
    try:
        tape = main.trace()
        ins = []
        for k, p in enumerate(p_leaves):
            if type(p) is not np.ndarray and (type(p) in _PY_SCALARS or isinstance(p, np.ndarray)):
                p = np.asarray(p)  # Python scalars; ndarray subclasses (np.matrix) as plain arrays
            ins.append(EagerTracer(tape, p, k))
        tape.count = len(ins)
        full = list(args)
        for a, v in zip(nums, pytree.tree_unflatten(p_tree, ins)):
            full[a] = v
        out = fun(*full, **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("grad with has_aux=True: the function must return a pair (output, aux)")
            out, aux = out
            aux = pytree.tree_map(lambda v: _lower_output(tape, v, is_leaf=True)[0], aux)
        out, out_index = _lower_output(tape, out)
    finally:
        pop_main(main)
        # MainTrace and its Trace refer to each other: a cycle only the garbage collector
        # frees. Unhook the records from it, so the residuals go as soon as ``backward``
        # does (else every call's intermediates linger, and the heap grows and shrinks).
        main.payload = None
    count = tape.count

    def backward(ct):  # once only: it consumes the tape
        return _backward(records, count, range(len(ins)), in_avals, [out_index], [ct])

    return out, aux, backward


def _lower_output(tape, o, is_leaf=False):
    """(concrete value, tape index or None) of an output of the taped function. A pytree
    leaf (``is_leaf``) that is not a value raises the general path's TypeError."""
    if type(o) is EagerTracer and o._trace is tape:
        return o.primal, o.index
    if isinstance(o, Tracer):
        o = full_raise(tape, o)  # raises for an escaped tracer
    elif is_leaf:
        get_aval_any(o)
    return o, None


def _backward(records, count, in_index, in_avals, out_index, cts_out) -> list:
    """Walk the tape backwards, emptying it: each record's residuals are freed as soon
    as its rule has run, so the cotangents reuse their memory (one use only)."""
    cts = [None] * count
    for k, ct in zip(out_index, cts_out):
        if k is not None and ct is not None and type(ct) is not Zero:
            prev = cts[k]
            cts[k] = ct if prev is None else prev + ct
    pop = records.pop
    while records:
        rule, index, primals, ans, params, linear = pop()
        if rule is None:  # a fallback record: index is a list, ans the backward function
            outs_ct = [Zero(a) if k is None or cts[k] is None else cts[k] for k, a in zip(index, primals)]
            if all(type(c) is Zero for c in outs_ct):
                continue
            for k in index:
                if k is not None:
                    cts[k] = None
            got = ans(outs_ct)
            for (_, k), c in zip(linear, got):
                if type(c) is not Zero:
                    prev = cts[k]
                    cts[k] = c if prev is None else prev + c
            continue
        ct = cts[index]
        if ct is None:
            continue
        cts[index] = None  # free it as soon as it is used
        which = tuple([i for i, _ in linear])
        got = rule(ct, ans, primals, which, **params)
        for i, k in linear:
            c = got[i]
            if c is not None and type(c) is not Zero:
                prev = cts[k]
                cts[k] = c if prev is None else prev + c
    out = []
    for k, aval in zip(in_index, in_avals):
        ct = None if k is None else cts[k]
        out.append(Zero(tangent_aval(aval)) if ct is None else ct)
    return out


__all__ = ["grad_call", "usable", "disabled", "ENABLED"]
