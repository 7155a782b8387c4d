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

Where the cotangent rule comes from, in order:

1. ``vjp_rules`` below: hand-written NumPy for the primitives of typical programs
   (arithmetic, tanh/exp/log, matmul, broadcasts, reductions, selects). They compute
   exactly what the general path's transpose rules compute, without re-validating.
2. Elementwise primitives declared with ``defjvp``: each partial ``g -> partial(g)`` is a
   pointwise scaling of ``g``, hence its own transpose; the partial is called on the
   cotangent (its ``lax`` calls run eagerly).
3. Primitives declared with ``deflinear`` (plus the other linear ones listed in
   ``_LINEAR``): the transpose rule itself, with ``UndefinedPrimal`` for the inputs
   being differentiated.
4. ``defjvp_zero`` primitives (comparisons, floor, sign, argmax, ...): no record at all.
5. Anything else (control flow, custom rules, linear algebra, jit calls, ...): the
   general reverse mode applied to that one primitive (``linearize.vjp_flat``), so every
   primitive works here exactly as it does under ``vjp``.

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

from funcgrad.core import ad_util, pytree
from funcgrad.core.ad_util import UndefinedPrimal, Zero, tangent_aval
from funcgrad.core.prims import dot as _dot
from funcgrad.core.prims import elementwise as _ew
from funcgrad.core.prims import indexing as _ix
from funcgrad.core.prims import reductions as _red
from funcgrad.core.prims import structural as _st
from funcgrad.core.primitive import transpose_rules
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
from funcgrad.transforms.transpose import CT_RULE, PULLBACK, backward_walk

# Set to False to send every eager grad through the general reverse mode (tests compare
# the two).
ENABLED = True

_PY_SCALARS = (bool, int, float)


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

    Its records are the reverse-mode walker's (``transpose.backward_walk``): a
    ``CT_RULE`` record holds the cotangent rule, the output's index, the residuals the
    rule reads and (argument position, index) for each argument holding a tape value. A
    primitive without a rule (general reverse mode of that one primitive) gets a
    ``PULLBACK`` record holding the backward function of its linear tape.
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
        rule = _rules.get(prim) or _rule_for(prim)
        if rule is _FALLBACK:  # (Python scalars stay weakly typed for its JVP rule)
            return self._fallback(prim, primals, linear, params)
        if scalars:  # the rules read NumPy values
            primals = [np.asarray(x) if type(x) in _PY_SCALARS else x for x in primals]
        ans = _eager_bind(prim, primals, params)
        if rule is _NO_TANGENT or ans.dtype.kind != "f":
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
        self.main.payload.append((CT_RULE, rule, index, primals, ans if keep_ans else None, params, linear))
        return EagerTracer(self, ans, index)

    def _fallback(self, prim, primals, linear, params):
        """One primitive through the general reverse mode (its JVP rule + transposes)."""
        from funcgrad.transforms.linearize import vjp_flat

        positions = [i for i, _ in linear]

        def one_prim(*lin):
            args = list(primals)
            for i, v in zip(positions, lin):
                args[i] = v
            out = prim.bind(*args, **params)
            return out if prim.multiple_results else [out]

        outs, out_avals, backward, nonzero = vjp_flat(one_prim, [primals[i] for i in positions], report_nonzero=True)
        out, results = [], []
        for o, aval, nz in zip(outs, out_avals, nonzero):
            if nz:
                out.append((self.count, aval))
                results.append(EagerTracer(self, o, self.count))
                self.count += 1
            else:
                out.append((None, aval))
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
            if type(p) is not np.ndarray and (type(p) in _PY_SCALARS or isinstance(p, np.ndarray)):
                p = np.asarray(p)  # Python scalars; ndarray subclasses (np.matrix) as plain arrays
            ins.append(EagerTracer(tape, p, k))
        tape.count = len(ins)
        out, aux = fun(*pytree.tree_unflatten(p_tree, ins))
        if aux is not None:
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
    cts = backward_walk(records, count, (out_index,), (ct,), operator.add)
    return [Zero(tangent_aval(aval)) if cts[k] is None else cts[k] for k, aval in enumerate(in_avals)]


# --- where a primitive's cotangent rule comes from -----------------------------------------

vjp_rules: dict = {}  # Primitive -> hand-written NumPy cotangent rule

# What a rule reads of the primitive's inputs (``rule.residuals[0]``): their values,
# only their avals (shape and dtype), or nothing; ``residuals[1]``: whether it reads the
# output. The tape keeps just that.
VALUES, AVALS, NOTHING = "values", "avals", "nothing"
_NO_TANGENT = object()  # marker: a zero-tangent primitive, computed but not recorded
_FALLBACK = object()  # marker: no eager rule, use the general reverse mode
_rules: dict = {}  # Primitive -> the rule in use (or a marker), filled on first use


def _rule_for(prim):
    rule = vjp_rules.get(prim) or _derive(prim) or _FALLBACK
    _rules[prim] = rule
    return rule


def _derive(prim):
    if prim in ad_util.zero_tangent_prims:
        return _NO_TANGENT
    partials = ad_util.jvp_partials.get(prim)
    if prim.elementwise and partials is not None and not prim.multiple_results:
        return _partials_rule(partials)
    if (prim in ad_util.linear_prims or prim in _LINEAR) and not prim.multiple_results:
        transpose = transpose_rules.get(prim)
        if transpose is not None:
            return _transpose_rule(transpose)
    return None


def _partials_rule(partials):
    # Elementwise: d out[k] / d x_i[k] is a number, so the tangent map g -> partial(g)
    # is a pointwise product and equals its own transpose.
    def rule(ct, ans, primals, which, **params):
        got = [None] * len(primals)
        for i in which:
            fn = partials[i]
            if fn is not None:
                got[i] = fn(ct, ans, *primals, **params)
        return got

    rule.residuals = (VALUES, True)
    if any(fn is None for fn in partials):  # e.g. copysign's sign operand
        rule.zero_if = lambda which, params: all(partials[i] is None for i in which)
    else:
        rule.zero_if = None
    return rule


def _transpose_rule(transpose):
    def rule(ct, ans, primals, which, **params):
        args = list(primals)
        for i in which:
            args[i] = UndefinedPrimal(get_aval_any(primals[i]))
        return transpose(ct, *args, **params)

    rule.residuals = (VALUES, False)
    rule.zero_if = None
    return rule


# Linear in their float inputs jointly, but declared with their own JVP rules.
_LINEAR = {_ix.gather_p, _ix.dynamic_slice_p, _ix.dynamic_update_slice_p}


# --- hand-written NumPy rules ----------------------------------------------------------------
# Each computes what the general path computes (the transpose of the JVP's linear part),
# operation for operation, so results agree to the last bit in most cases.

def _def(prim, primals=VALUES, ans=False, zero_if=None):
    """Register a hand-written rule, with the residuals it reads (see ``VALUES``) and
    ``zero_if(which, params)``: true when the output has no tangent (see ``_rule_for``)."""

    def register(rule):
        rule.residuals = (primals, ans)
        rule.zero_if = zero_if
        vjp_rules[prim] = rule
        return rule

    return register


@_def(_ew.add_p, primals=NOTHING)
def _add(ct, ans, p, which):
    return [ct, ct]


@_def(_ew.sub_p, primals=NOTHING)
def _sub(ct, ans, p, which):
    return [ct, -ct if 1 in which else None]


@_def(_ew.neg_p, primals=NOTHING)
def _neg(ct, ans, p, which):
    return [-ct]


@_def(_ew.mul_p)
def _mul(ct, ans, p, which):
    x, y = p
    return [ct * y if 0 in which else None, x * ct if 1 in which else None]


@_def(_ew.div_p, ans=True)
def _div(ct, ans, p, which):
    x, y = p
    return [ct / y if 0 in which else None, -ct / y * ans if 1 in which else None]


@_def(_ew.max_p)
def _max(ct, ans, p, which):
    return _minmax(ct, p, which, np.greater)


@_def(_ew.min_p)
def _min(ct, ans, p, which):
    return _minmax(ct, p, which, np.less)


def _minmax(ct, p, which, better):
    # All of ct to the winner, half each at ties (the JVP's convention).
    x, y = p
    tie = np.where(x == y, ct * 0.5, np.zeros_like(ct))
    got = [np.where(better(x, y), ct, tie) if 0 in which else None,
           np.where(better(y, x), ct, tie) if 1 in which else None]
    if tie.ndim == 0:  # np.where gives 0-d arrays; the general path NumPy scalars
        got = [None if g is None else g[()] for g in got]
    return got


@_def(_ew.exp_p, primals=NOTHING, ans=True)
def _exp(ct, ans, p, which):
    return [ct * ans]


@_def(_ew.log_p)
def _log(ct, ans, p, which):
    return [ct / p[0]]


@_def(_ew.tanh_p, primals=NOTHING, ans=True)
def _tanh(ct, ans, p, which):
    # ct * (1 - ans * ans), in one temporary (this is an MLP's largest elementwise op).
    t = np.multiply(ans, ans)
    if type(t) is not np.ndarray:  # 0-d: NumPy gave a scalar
        return [ct * (1 - t)]
    np.subtract(1, t, out=t)
    np.multiply(ct, t, out=t)
    return [t]


@_def(_ew.sin_p)
def _sin(ct, ans, p, which):
    return [ct * np.cos(p[0])]


@_def(_ew.cos_p)
def _cos(ct, ans, p, which):
    return [ct * -np.sin(p[0])]


@_def(_ew.sqrt_p, primals=NOTHING, ans=True)
def _sqrt(ct, ans, p, which):
    return [ct / (ans + ans)]


@_def(_ew.integer_pow_p, zero_if=lambda which, params: params["y"] == 0)
def _integer_pow(ct, ans, p, which, *, y):
    x = p[0]
    if y == 0:
        return [None]
    if y == 2:
        return [ct * (2.0 * x)]
    return [ct * (float(y) * _ew._integer_pow_impl(x, y=y - 1))]


@_def(_ew.select_n_p)
def _select_n(ct, ans, p, which):
    which_arr, *cases = p
    zeros = np.zeros_like(ct)
    got = [None] * len(p)
    for i in which:
        if i == 0:
            raise TypeError("select_n: the predicate cannot be differentiated")
        branches = [zeros] * len(cases)
        branches[i - 1] = ct
        got[i] = _ew._select_n_impl(which_arr, *branches)
    return got


@_def(_ew.convert_element_type_p, primals=AVALS)
def _convert(ct, ans, p, which, *, new_dtype, weak_type=False):
    x = p[0]
    return [np.asarray(ct).astype(x.dtype) if x.dtype.kind == "f" else None]


@_def(_dot.dot_general_p)
def _dot_general(ct, ans, p, which, *, dimension_numbers):
    x, y = p
    (lc, rc), (lb, rb) = dimension_numbers
    xnd, ynd = x.ndim, y.ndim
    if not lb and 0 < xnd <= 2 and 0 < ynd <= 2 and lc == (xnd - 1,) and rc == (0,):
        # x @ y for vectors and matrices (np.dot's cases): straight to BLAS.
        ct = np.asarray(ct)
        ct_x = ct_y = None
        if 0 in which:
            if ynd == 1:
                ct_x = ct * y if xnd == 1 else np.multiply.outer(ct, y)
            else:
                ct_x = np.dot(ct, y.T)
        if 1 in which:
            if xnd == 1:
                ct_y = ct * x if ynd == 1 else np.multiply.outer(x, ct)
            else:
                ct_y = np.dot(x.T, ct)
        return [ct_x, ct_y]
    got = [None, None]
    if 0 in which:
        got[0] = _dot_ct(ct, y, ((lc, rc), (lb, rb)), True, x.ndim)
    if 1 in which:
        got[1] = _dot_ct(ct, x, ((rc, lc), (rb, lb)), False, y.ndim)
    return got


def _dot_ct(ct, other, dimension_numbers, arg_is_lhs, arg_ndim):
    # ``dot._dot_transpose_one`` on concrete values, calling the impls directly.
    dims, perm = _dot._dot_transpose_dims(other.ndim, dimension_numbers, arg_is_lhs, arg_ndim)
    return np.transpose(_dot._dot_general_impl(np.asarray(ct), other, dimension_numbers=dims), perm)


@_def(_st.broadcast_in_dim_p, primals=AVALS)
def _broadcast_in_dim(ct, ans, p, which, *, shape, broadcast_dimensions):
    in_shape = p[0].shape
    kept = set(broadcast_dimensions)
    expanded = [d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1]
    summed = tuple(sorted([d for d in range(len(shape)) if d not in kept] + expanded))
    ct = np.asarray(ct)
    if summed:
        ct = np.add.reduce(ct, axis=summed, dtype=ct.dtype)
    return [ct.reshape(in_shape)]


@_def(_st.reshape_p, primals=AVALS)
def _reshape(ct, ans, p, which, *, new_sizes):
    return [np.reshape(ct, p[0].shape)]


@_def(_st.transpose_p, primals=NOTHING)
def _transpose(ct, ans, p, which, *, permutation):
    return [np.transpose(ct, _st._inverse_perm(permutation))]


@_def(_red.reduce_sum_p, primals=AVALS)
def _reduce_sum(ct, ans, p, which, *, axes):
    shape = p[0].shape
    if not axes:
        return [ct]
    return [_st._broadcast_in_dim_impl(ct, shape=shape, broadcast_dimensions=_red._kept_dims(len(shape), axes))]


def _chooser(ct, ans, p, which, *, axes):
    # The JVP is the mean of the tangents where the extreme is attained, so the
    # cotangent is shared equally among those positions.
    x = p[0]
    shape, kept = x.shape, _red._kept_dims(x.ndim, axes)
    hit = (x == _st._broadcast_in_dim_impl(ans, shape=shape, broadcast_dimensions=kept)).astype(x.dtype)
    count = np.add.reduce(hit, axis=tuple(axes), dtype=x.dtype) if axes else hit
    share = _st._broadcast_in_dim_impl(np.asarray(ct / count), shape=shape, broadcast_dimensions=kept)
    return [share * hit]


_def(_red.reduce_max_p, ans=True)(_chooser)
_def(_red.reduce_min_p, ans=True)(_chooser)


@_def(_st.slice_p, primals=AVALS)
def _slice(ct, ans, p, which, *, start_indices, limit_indices, strides=None):
    x = p[0]
    out = np.zeros(x.shape, np.asarray(ct).dtype)
    strides = strides or (1,) * len(start_indices)
    out[tuple(slice(s, lim, st) for s, lim, st in zip(start_indices, limit_indices, strides))] = ct
    return [out]


@_def(_st.concatenate_p, primals=AVALS)
def _concatenate(ct, ans, p, which, *, dimension):
    got, start = [None] * len(p), 0
    index = [slice(None)] * np.ndim(ct)
    for i, x in enumerate(p):
        size = x.shape[dimension]
        if i in which:
            index[dimension] = slice(start, start + size)
            got[i] = ct[tuple(index)]
        start += size
    return got


__all__ = ["grad_call", "usable", "disabled", "vjp_rules", "ENABLED"]
