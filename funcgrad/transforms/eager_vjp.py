"""Eager reverse mode: ``grad``/``value_and_grad`` with no outer transform, autograd style.

The general reverse mode (``linearize.vjp_flat``) runs every primitive's JVP rule with the
tangents recorded on a linear tape, then transposes the tape. It works under any
enclosing transform, but pays about three Python dispatches per primitive: the JVP
rule, the recorded tangent operation(s), and their transposes.

When ``grad`` is the outermost transform (nothing below it but the eager interpreter,
nothing staging), every primal is a concrete NumPy value and the cotangents will be
too. Then a primitive needs only its value now and a *cotangent rule* later:
``rule(ct, ans, primals, which, **params) -> [cotangent or None per primal]``, where
``which`` lists the positions whose cotangent is wanted. That is what this module does:
``EagerTape`` computes each primitive with its NumPy impl, records (rule, residuals),
and the reverse-mode walker (``transpose.backward_walk``) runs the records in reverse.

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
  one primitive (``linearize.vjp_flat``), so every primitive works here exactly as it does under
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
import operator

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, tangent_aval
from funcgrad.core.fp_errors import restore, silence
from funcgrad.core.primitive import AVALS, NO_EAGER_RECORD, VALUES, eager_vjp_rules
from funcgrad.core.trace import Trace, Tracer, _eager_bind, full_raise, get_aval_any, is_eager, pop_main, push_main
from funcgrad.transforms.transpose import CT_RULE, PULLBACK, backward_walk

# Set to False to send every eager grad through the general reverse mode (tests compare
# the two).
ENABLED = True

_PY_SCALARS = (bool, int, float, complex)

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

    def __init__(self, trace, primal, index, aval=None):
        self._trace = trace
        self.primal = primal
        self.index = index
        self.aval = get_aval_any(primal) if aval is None else aval

    def to_concrete_value(self):
        return self.primal


class EagerTape(Trace):
    """Computes primitives on concrete values and records how to send cotangents back.

    Its records are the reverse-mode walker's (``transpose.backward_walk``): a
    ``CT_RULE`` record holds the cotangent rule, the output's index, the residuals the
    rule reads and (argument position, index) for each argument holding a tape value. A
    primitive without a rule (general reverse mode of that one primitive) gets a
    ``PULLBACK`` record holding the backward function of its linear tape.
    """

    __slots__ = ("count",)
    handles_raw_args = True  # constants stay plain values; outputs need no lowering
    concrete_values = True  # eager-only primitives may be bound on its tracers

    def __init__(self, main):
        super().__init__(main)
        self.count = 0

    def pure(self, val):
        return val

    lift = pure

    def process_primitive(self, prim, args, params):
        primals = list(args)
        linear = []
        scalars = weak = False
        for i, a in enumerate(args):
            if type(a) is EagerTracer:  # bind checked it is alive, so it is ours
                primals[i] = a.primal
                linear.append((i, a.index))
                weak = weak or a.aval.weak_type
            elif type(a) in _PY_SCALARS:
                scalars = True
        rule = _eager_rule(prim)
        if rule is None or weak or params.get("weak_type"):
            # The general path: Python scalars stay weakly typed for its JVP rule, and a
            # weakly typed tape value (a differentiated Python scalar) keeps its weakness
            # through the JVP trace, which tracks it (``jvp.JVPTrace._weak_outputs``).
            weak_at = [type(a) is EagerTracer and a.aval.weak_type for a in args] if weak else None
            return self._fallback(prim, primals, linear, params, weak_at)
        if scalars:  # the rules read NumPy values
            primals = [np.asarray(x) if type(x) in _PY_SCALARS else x for x in primals]
        ans = _eager_bind(prim, primals, params)
        if rule is NO_EAGER_RECORD or (not prim.multiple_results and ans.dtype.kind not in "fc"):
            return ans
        zero_if = rule.zero_if
        if zero_if is not None and zero_if([i for i, _ in linear], params):
            return ans  # no traced operand has a tangent here: a constant, like the general path
        # Keep only the residuals the rule reads, so large intermediates are freed (and
        # their memory reused) during the forward pass, as in hand-written NumPy.
        keep_primals, keep_ans = rule.residuals
        if keep_primals is not VALUES:
            primals = [get_aval_any(x) for x in primals] if keep_primals is AVALS else None
        if prim.multiple_results:
            return self._record_several(rule, ans, primals, params, linear, keep_ans)
        index = self.count
        self.count = index + 1
        self.main.payload.append((CT_RULE, rule, index, primals, ans if keep_ans else None, params, linear))
        return EagerTracer(self, ans, index)

    def _record_several(self, rule, ans, primals, params, linear, keep_ans):
        """The record of a several-output primitive with a cotangent rule: each float
        output gets an index (the rule receives a list of cotangents, ``Zero`` for the
        outputs that got none)."""
        out, results = [], []
        for o in ans:
            aval = get_aval_any(o)
            if aval.dtype.kind in "fc":
                out.append((self.count, aval))
                results.append(EagerTracer(self, o, self.count, aval))
                self.count += 1
            else:
                out.append((None, tangent_aval(aval)))
                results.append(o)
        self.main.payload.append((CT_RULE, rule, tuple(out), primals, ans if keep_ans else None, params, linear))
        return results

    def _fallback(self, prim, primals, linear, params, weak=None):
        """One primitive through the general reverse mode (its JVP rule + transposes).
        ``weak`` says which operands are weakly typed tape values: a 0-d one goes in as
        the Python scalar it stands for, so it stays weak there."""
        from funcgrad.transforms.linearize import vjp_flat

        positions = [i for i, _ in linear]

        def one_prim(*lin):
            args = list(primals)
            for i, v in zip(positions, lin):
                args[i] = v
            out = prim.bind(*args, **params)
            return out if prim.multiple_results else [out]

        ins = [primals[i] for i in positions]
        if weak is not None:
            ins = [x.item() if weak[i] and type(x) is np.ndarray and x.ndim == 0 else x for i, x in zip(positions, ins)]
        outs, out_avals, backward, nonzero = vjp_flat(one_prim, ins, report_nonzero=True)
        out, results = [], []
        for o, aval, nz in zip(outs, out_avals, nonzero):
            if nz:
                out.append((self.count, tangent_aval(aval)))
                results.append(EagerTracer(self, o, self.count, aval if aval.weak_type else None))
                self.count += 1
            else:
                out.append((None, tangent_aval(aval)))
                results.append(o)
        # ``backward`` returns one cotangent per traced argument, in ``linear``'s order.
        to_index = [(j, k) for j, (_, k) in enumerate(linear)]
        self.main.payload.append((PULLBACK, backward, tuple(out), None, None, None, to_index))
        return results if prim.multiple_results else results[0]


def grad_call(fun, p_leaves, p_tree, in_avals):
    """The body of an eager ``value_and_grad`` call: runs ``fun`` (a function of the
    differentiated arguments returning ``(output, aux or None)``, see
    ``ad_api.value_and_grad``) with the leaves ``p_leaves`` on the tape. Returns (output,
    aux, ``backward(ct) -> gradient leaves``); the caller checks the output. Only valid
    when ``usable()``; the caller checked that every leaf is differentiable."""
    records: list = []
    main = push_main(EagerTape, records)
    try:
        tape = main.trace()
        ins = []
        for k, p in enumerate(p_leaves):
            aval = None
            if type(p) in _PY_SCALARS:  # weakly typed, as under jit
                aval = get_aval_any(p)
                p = np.asarray(p)
            elif type(p) is not np.ndarray and isinstance(p, np.ndarray):
                p = np.asarray(p)  # ndarray subclasses (np.matrix) as plain arrays
            ins.append(EagerTracer(tape, p, k, aval))
        tape.count = len(ins)
        out, aux = fun(*pytree.tree_unflatten(p_tree, ins))
        if aux is not None:
            aux = pytree.tree_map(lambda v: _lower_output(tape, v, is_leaf=True)[0], aux)
        out, out_index = _lower_output(tape, out)
    finally:
        pop_main(main)  # (which unhooks the records from the level: they go with ``backward``)
    count = tape.count

    def backward(ct):  # once only: it consumes the tape
        return _backward(records, count, in_avals, out_index, ct)

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


def _backward(records, count, in_avals, out_index, ct) -> list:
    """Walk the tape backwards, emptying it: each record's residuals are freed as soon
    as its rule has run, so the cotangents reuse their memory (one use only). The
    cotangents are NumPy values: they add up with ``+``."""
    token = silence()  # NumPy rules: IEEE results without RuntimeWarnings, like the impls
    try:
        cts = backward_walk(records, count, (out_index,), (ct,), operator.add)
    finally:
        restore(token)
    return [Zero(tangent_aval(aval)) if cts[k] is None else cts[k] for k, aval in enumerate(in_avals)]


__all__ = ["grad_call", "usable", "disabled", "ENABLED"]
